"""_tensors.py: element types, and device buffers (torch tensors, __cuda_array_interface__ or
__dlpack__ objects) described for tg_bind, with the checks tg_bind would make said in Python terms.

No import of torch here: torch types are recognized by name, so this module works without torch.
"""
import ctypes

# TgDtype codes (runtime/tegen.h) and their spec spellings; sizes in bits.
FP32, BF16, FP16, E4M3, E5M2, E2M1, E8M0 = 1, 2, 3, 4, 5, 6, 7
DTYPE_NAMES = {FP32: "fp32", BF16: "bf16", FP16: "fp16", E4M3: "e4m3", E5M2: "e5m2", E2M1: "e2m1", E8M0: "e8m0"}
DTYPE_BITS = {FP32: 32, BF16: 16, FP16: 16, E4M3: 8, E5M2: 8, E2M1: 4, E8M0: 8}
BY_NAME = {v: k for k, v in DTYPE_NAMES.items()}

# torch dtype name -> (TgDtype, logical elements per stored element). float4_e2m1fn_x2 packs two E2M1 values.
TORCH_DTYPES = {
    "float32": (FP32, 1), "bfloat16": (BF16, 1), "float16": (FP16, 1),
    "float8_e4m3fn": (E4M3, 1), "float8_e5m2": (E5M2, 1), "float8_e8m0fnu": (E8M0, 1),
    "float4_e2m1fn_x2": (E2M1, 2),
}
# TgDtype -> torch dtype name for views of tegen buffers (E2M1 as packed pairs).
TORCH_OF = {FP32: "float32", BF16: "bfloat16", FP16: "float16", E4M3: "float8_e4m3fn", E5M2: "float8_e5m2",
            E8M0: "float8_e8m0fnu", E2M1: "float4_e2m1fn_x2"}

# DLPack (code, bits) -> TgDtype (dlpack.h v1.1 codes: 2 float, 4 bfloat, 10 e4m3fn, 12 e5m2, 14 e8m0fnu, 17 e2m1fn)
DLPACK_DTYPES = {(2, 32): FP32, (4, 16): BF16, (2, 16): FP16, (10, 8): E4M3, (12, 8): E5M2, (14, 8): E8M0,
                 (17, 4): E2M1}
DL_CUDA, DL_CUDA_MANAGED = 2, 13
# __cuda_array_interface__ typestr -> TgDtype (the types numpy can spell; others need dtype=)
CAI_DTYPES = {"<f4": FP32, "<f2": FP16}
RAW_TYPESTRS = {"|u1", "|i1", "<u2", "<i2", "<V2", "|V1", "<u1"}  # raw bytes: dtype= says what they hold


class BindError(ValueError):
    """A buffer cannot be bound: wrong dtype, shape, layout, device or alignment."""


def dtype_code(d):
    """TgDtype of a spec name ("bf16"), a TgDtype int or a torch dtype; BindError if none."""
    if isinstance(d, int) and d in DTYPE_NAMES:
        return d
    if isinstance(d, str) and d in BY_NAME:
        return BY_NAME[d]
    name = torch_dtype_name(d)
    if name in TORCH_DTYPES:
        return TORCH_DTYPES[name][0]
    raise BindError(f"no tegen element type for {d!r} (tegen has {', '.join(BY_NAME)})")


def torch_dtype_name(d):
    """'bfloat16' for torch.bfloat16 (None for anything that is not a torch dtype)."""
    s = str(d)
    return s[len("torch."):] if s.startswith("torch.") else None


def is_torch_tensor(obj):
    t = type(obj)
    return t.__module__.startswith("torch") and hasattr(obj, "data_ptr") and hasattr(obj, "is_contiguous")


class Buffer:
    """A device buffer ready for tg_bind: pointer, TgDtype, logical shape, device ordinal, and
    `keep` (the objects that must stay alive while tegen may read or write it)."""

    def __init__(self, ptr, dtype, shape, device, keep):
        self.ptr, self.dtype, self.shape, self.device, self.keep = ptr, dtype, tuple(shape), device, keep

    def check(self, name, want_dtype=None, want_shape=None):
        """Check alignment (16 bytes), dtype and shape against what the layer wants; BindError says what differs."""
        if not self.ptr or self.ptr % 16:
            raise BindError(f"'{name}': device pointer {self.ptr:#x} is not 16-byte aligned (tegen's vector loads "
                            "need it; a fresh allocation is, a slice or view at an odd offset may not be)")
        if want_dtype is not None and self.dtype != want_dtype:
            raise BindError(f"'{name}': the layer wants {DTYPE_NAMES[want_dtype]}, the buffer is "
                            f"{DTYPE_NAMES.get(self.dtype, self.dtype)}")
        if want_shape is not None:
            bad = len(want_shape) != len(self.shape) or any(w >= 0 and w != s for w, s in zip(want_shape, self.shape))
            if bad:
                want = "[" + ", ".join("tokens" if w < 0 else str(w) for w in want_shape) + "]"
                raise BindError(f"'{name}': the layer wants shape {want}, the buffer is {list(self.shape)}")
        return self

    def desc(self, desc_type):
        """The TgTensorDesc of this buffer (strides 0: contiguous row-major)."""
        d = desc_type()
        d.data, d.dtype, d.rank = self.ptr, self.dtype, len(self.shape)
        for i, s in enumerate(self.shape):
            d.shape[i] = s
        return d


def contiguous_strides(shape, elem_bytes=None):
    """Row-major strides of shape, in elements (or bytes when elem_bytes is given)."""
    out, acc = [], 1
    for s in reversed(shape):
        out.append(acc * (elem_bytes or 1))
        acc *= s
    return tuple(reversed(out))


def _check_rank(name, shape):
    if not 1 <= len(shape) <= 4:
        raise BindError(f"'{name}': rank {len(shape)}; tegen tensors have rank 1 to 4")


def from_torch(name, t, dtype=None):
    """A Buffer of a torch tensor: on a CUDA device, contiguous, of a tegen element type."""
    if t.device.type != "cuda":
        raise BindError(f"'{name}': the tensor is on {t.device}, tegen needs a CUDA tensor (.cuda())")
    if not t.is_contiguous():
        raise BindError(f"'{name}': the tensor is not contiguous (strides {tuple(t.stride())}); "
                        "tegen v1 takes row-major tensors only (.contiguous())")
    tname = torch_dtype_name(t.dtype)
    if dtype is not None:
        code, per = dtype_code(dtype), 1
        if code == E2M1 and t.element_size() == 1:
            per = 2
    elif tname in TORCH_DTYPES:
        code, per = TORCH_DTYPES[tname]
    else:
        raise BindError(f"'{name}': torch.{tname} has no tegen element type "
                        f"(tegen takes {', '.join('torch.' + k for k in TORCH_DTYPES)}; or pass dtype=)")
    shape = list(t.shape)
    if per != 1 and shape:
        shape[-1] *= per
    _check_rank(name, shape)
    return Buffer(t.data_ptr(), code, shape, t.device.index or 0, t)


def from_cuda_array_interface(name, obj, dtype=None):
    """A Buffer of an object with __cuda_array_interface__ (version 2 or 3)."""
    cai = obj.__cuda_array_interface__
    ptr = cai["data"][0] or 0
    shape = list(cai["shape"])
    typestr = cai["typestr"]
    size = int(typestr[2:]) if typestr[2:].isdigit() else 0
    if dtype is not None:
        code = dtype_code(dtype)
        if typestr not in CAI_DTYPES and typestr not in RAW_TYPESTRS:
            raise BindError(f"'{name}': typestr {typestr!r} cannot hold {DTYPE_NAMES[code]}")
        bits = size * 8
        if code == E2M1 and bits == 8 and shape:
            shape[-1] *= 2
        elif bits and bits != DTYPE_BITS[code]:
            raise BindError(f"'{name}': typestr {typestr!r} has {bits}-bit elements, {DTYPE_NAMES[code]} has "
                            f"{DTYPE_BITS[code]}")
    elif typestr in CAI_DTYPES:
        code = CAI_DTYPES[typestr]
    else:
        raise BindError(f"'{name}': __cuda_array_interface__ typestr {typestr!r} is not a tegen type by itself "
                        "(pass dtype='bf16', 'e4m3', ...)")
    strides = cai.get("strides")
    if strides is not None and tuple(strides) != contiguous_strides(cai["shape"], size or 1):
        raise BindError(f"'{name}': strides {tuple(strides)} are not contiguous row-major; tegen v1 takes those only")
    _check_rank(name, shape)
    return Buffer(ptr, code, shape, None, obj)


# CPython's capsule calls, as prototypes of their own (setting argtypes on ctypes.pythonapi's shared
# attributes would change them for every other user in the process)
_api = ctypes.pythonapi
_capsule_new = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p)(
    ("PyCapsule_New", _api))
_capsule_valid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_char_p)(("PyCapsule_IsValid", _api))
_capsule_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", _api))
# in a capsule's destructor the capsule is a bare pointer (it is being freed: no new references to it)
_capsule_valid_raw = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)(("PyCapsule_IsValid", _api))
_capsule_pointer_raw = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", _api))


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


def _capsule_tensor(capsule):
    """The DLTensor of an unversioned "dltensor" capsule (DLManagedTensor starts with it)."""
    if not _capsule_valid(capsule, b"dltensor"):
        raise BindError("__dlpack__ gave no 'dltensor' capsule (already consumed, or a versioned one)")
    return _DLTensor.from_address(_capsule_pointer(capsule, b"dltensor"))


def from_dlpack(name, obj, dtype=None, stream=None):
    """A Buffer of an object with __dlpack__. The capsule is kept (not consumed), so its deleter
    runs when the Buffer goes; stream is the consumer's stream handle for the producer to order against."""
    if hasattr(obj, "__dlpack_device__"):
        dev_type, dev_id = obj.__dlpack_device__()
        if dev_type not in (DL_CUDA, DL_CUDA_MANAGED):
            raise BindError(f"'{name}': the buffer is on DLPack device type {dev_type}, tegen needs CUDA (2)")
    try:
        capsule = obj.__dlpack__(stream=stream) if stream is not None else obj.__dlpack__()
    except TypeError:
        capsule = obj.__dlpack__()
    dl = _capsule_tensor(capsule)
    if dl.device.device_type not in (DL_CUDA, DL_CUDA_MANAGED):
        raise BindError(f"'{name}': the buffer is on DLPack device type {dl.device.device_type}, tegen needs CUDA")
    shape = [dl.shape[i] for i in range(dl.ndim)]
    key = (dl.dtype.code, dl.dtype.bits)
    if dl.dtype.lanes != 1:
        raise BindError(f"'{name}': vector element types (lanes {dl.dtype.lanes}) are not tegen types")
    if dtype is not None:
        code = dtype_code(dtype)
        if dl.dtype.bits * dl.dtype.lanes != DTYPE_BITS[code] and not (code == E2M1 and dl.dtype.bits == 8):
            raise BindError(f"'{name}': {dl.dtype.bits}-bit elements cannot hold {DTYPE_NAMES[code]}")
        if code == E2M1 and dl.dtype.bits == 8 and shape:
            shape[-1] *= 2
    elif key in DLPACK_DTYPES:
        code = DLPACK_DTYPES[key]
    else:
        raise BindError(f"'{name}': DLPack type (code {key[0]}, {key[1]} bits) is not a tegen type (or pass dtype=)")
    if dl.strides:
        strides = tuple(dl.strides[i] for i in range(dl.ndim))
        want = contiguous_strides(shape if code != E2M1 else [dl.shape[i] for i in range(dl.ndim)])
        if any(s != w for s, w, n in zip(strides, want, [dl.shape[i] for i in range(dl.ndim)]) if n > 1):
            raise BindError(f"'{name}': strides {strides} are not contiguous row-major; tegen v1 takes those only")
    _check_rank(name, shape)
    return Buffer((dl.data or 0) + dl.byte_offset, code, shape, dl.device.device_id, (obj, capsule))


def as_buffer(name, obj, dtype=None, stream=None):
    """A Buffer of any supported object: a torch tensor, then __cuda_array_interface__, then __dlpack__."""
    if isinstance(obj, Buffer):
        return obj
    if is_torch_tensor(obj):
        return from_torch(name, obj, dtype)
    if hasattr(obj, "__cuda_array_interface__"):
        return from_cuda_array_interface(name, obj, dtype)
    if hasattr(obj, "__dlpack__"):
        return from_dlpack(name, obj, dtype, stream)
    raise BindError(f"'{name}': cannot bind a {type(obj).__name__}: tegen takes torch tensors and objects with "
                    "__cuda_array_interface__ or __dlpack__ on a CUDA device")


_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", _DELETER)]


_exported = {}  # address of a DLManagedTensor handed out -> what keeps it and its memory alive


@_DELETER
def _release(addr):
    _exported.pop(addr, None)


_CAPSULE_DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


@_CAPSULE_DESTRUCTOR
def _capsule_gone(capsule):
    """A capsule nobody consumed (still named "dltensor") releases its tensor itself, as DLPack asks."""
    if _capsule_valid_raw(capsule, b"dltensor"):
        _exported.pop(_capsule_pointer_raw(capsule, b"dltensor"), None)


# typestr -> DLPack (code, bits) of the views handed out
_TYPESTR_DL = {"<f4": (2, 32), "<i2": (0, 16), "|u1": (1, 8)}


class DeviceArray:
    """A view of tegen-owned device memory, with __cuda_array_interface__ (v3: CuPy, Numba) and
    __dlpack__ (torch.from_dlpack, no numpy needed), no copies. `owner` (the Layer) stays alive as
    long as a view of it does. Ordering against tegen's streams is the caller's (stream None)."""

    def __init__(self, ptr, shape, typestr, owner, device=(DL_CUDA, 0)):
        self.ptr, self.shape, self.typestr, self.owner, self.device = ptr, tuple(shape), typestr, owner, device

    @property
    def __cuda_array_interface__(self):
        return {"shape": self.shape, "typestr": self.typestr, "data": (self.ptr, False), "version": 3,
                "strides": None, "stream": None}

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, stream=None):
        m = _DLManagedTensor()
        shape = (ctypes.c_int64 * len(self.shape))(*self.shape)
        t = m.dl_tensor
        t.data, t.device.device_type, t.device.device_id = self.ptr, self.device[0], self.device[1]
        t.ndim = len(self.shape)
        t.dtype.code, t.dtype.bits = _TYPESTR_DL[self.typestr]
        t.dtype.lanes = 1
        t.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
        m.deleter = _release
        addr = ctypes.addressof(m)
        _exported[addr] = (m, shape, self)
        return _capsule_new(addr, b"dltensor", ctypes.cast(_capsule_gone, ctypes.c_void_p))
