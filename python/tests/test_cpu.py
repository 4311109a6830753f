"""test_cpu.py: the tegen Python package without a GPU or torch (CI): it imports, finds libtegen.so,
maps element types, reads DLPack and __cuda_array_interface__ descriptions, checks bindings, and
reports "no GPU" as a tegen.Error. Prints "ok NAME" / "FAIL NAME: why" / "skip NAME: why" lines.

    python3 python/tests/test_cpu.py        (from the repo root, after ninja)
"""
import ctypes
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))
fails = 0


def ok(name, cond, why=""):
    global fails
    if cond:
        print(f"ok python/{name}")
    else:
        fails += 1
        print(f"FAIL python/{name}: {why}")


def expect_raise(name, exc, fn, contains):
    try:
        fn()
    except exc as e:
        ok(name, contains in str(e), f"message {str(e)!r} lacks {contains!r}")
        return e
    except Exception as e:  # noqa: BLE001 (a test reports every failure)
        ok(name, False, f"raised {type(e).__name__}: {e}, wanted {exc.__name__}")
        return None
    ok(name, False, f"no {exc.__name__} raised")
    return None


class CAI:
    """A fake device array: only __cuda_array_interface__."""

    def __init__(self, ptr, shape, typestr, strides=None):
        self.__cuda_array_interface__ = {"data": (ptr, False), "shape": shape, "typestr": typestr,
                                         "strides": strides, "version": 3}


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32),
                ("ndim", ctypes.c_int32), ("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                ("lanes", ctypes.c_uint16), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManaged(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


class DLPackObj:
    """A fake __dlpack__ producer: a DLManagedTensor in a "dltensor" capsule (no deleter)."""

    def __init__(self, ptr, shape, code, bits, device_type=2, strides=None):
        self.shape = (ctypes.c_int64 * len(shape))(*shape)
        self.strides = (ctypes.c_int64 * len(shape))(*strides) if strides else None
        self.m = DLManaged()
        t = self.m.dl_tensor
        t.data, t.device_type, t.device_id, t.ndim = ptr, device_type, 0, len(shape)
        t.code, t.bits, t.lanes = code, bits, 1
        t.shape = ctypes.cast(self.shape, ctypes.POINTER(ctypes.c_int64))
        if self.strides:
            t.strides = ctypes.cast(self.strides, ctypes.POINTER(ctypes.c_int64))
        self.device_type = device_type

    def __dlpack_device__(self):
        return (self.device_type, 0)

    def __dlpack__(self, stream=None):
        new = ctypes.pythonapi.PyCapsule_New
        new.restype, new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        return new(ctypes.addressof(self.m), b"dltensor", None)


def main():
    try:
        import tegen
    except Exception as e:  # noqa: BLE001
        ok("import", False, f"{type(e).__name__}: {e}")
        return 1
    ok("import", True)

    try:
        path = tegen.find_library()
        ok("find-library", os.path.exists(path), path)
    except tegen.LibraryNotFound as e:
        ok("find-library", False, str(e).replace("\n", " | "))
        return 1
    want = re.search(r'#define TG_VERSION "(.*)"', open(os.path.join(ROOT, "gen", "gen.h")).read()).group(1)
    ok("version", tegen.version() == want, f"tg_version {tegen.version()!r}, gen/gen.h {want!r}")
    lib = tegen.lib()
    from tegen import _lib
    missing = [n for n in _lib.SIGNATURES if getattr(lib, n, None) is None]
    ok("symbols", not [n for n in missing if n not in _lib.OPTIONAL], f"missing {missing}")
    if missing:
        print(f"skip python/optional-symbols: this libtegen lacks {', '.join(missing)} (newer API)")

    # an explicit TEGEN_LIB that does not exist is an error that names it, not a silent fallback
    env = dict(os.environ, TEGEN_LIB="/nonexistent/libtegen.so")
    r = subprocess.run([sys.executable, "-c", "import tegen; tegen.find_library()"], env=env,
                       cwd=os.path.join(ROOT, "python"), capture_output=True, text=True)
    ok("tegen-lib-env", r.returncode != 0 and "$TEGEN_LIB: /nonexistent/libtegen.so: no such file" in r.stderr,
       r.stderr[-300:])
    cands = [w for w, _, _ in tegen.library_candidates()]
    ok("search-order", cands == ["$TEGEN_LIB", "build tree", "pkg-config tegen", "loader search path"], cands)

    # element types: spec names, TgDtype codes, torch names (by name: no torch needed), DLPack codes
    ok("dtype-names", [tegen.dtype_code(n) for n in ("fp32", "bf16", "fp16", "e4m3", "e5m2", "e2m1", "e8m0")]
       == [1, 2, 3, 4, 5, 6, 7], "spec names")
    ok("dtype-torch", {k: v[0] for k, v in tegen.TORCH_DTYPES.items()} ==
       {"float32": 1, "bfloat16": 2, "float16": 3, "float8_e4m3fn": 4, "float8_e5m2": 5, "float8_e8m0fnu": 7,
        "float4_e2m1fn_x2": 6}, tegen.TORCH_DTYPES)
    ok("dtype-dlpack", tegen.DLPACK_DTYPES[(10, 8)] == tegen.E4M3 and tegen.DLPACK_DTYPES[(12, 8)] == tegen.E5M2
       and tegen.DLPACK_DTYPES[(4, 16)] == tegen.BF16, tegen.DLPACK_DTYPES)
    expect_raise("dtype-unknown", tegen.BindError, lambda: tegen.dtype_code("int8"), "no tegen element type")

    # __cuda_array_interface__ buffers
    b = tegen.as_buffer("x", CAI(0x10000, (256, 4096), "<f4"))
    ok("cai-fp32", (b.ptr, b.dtype, b.shape) == (0x10000, tegen.FP32, (256, 4096)), vars(b))
    b = tegen.as_buffer("x", CAI(0x10000, (256, 4096), "<i2"), dtype="bf16")
    ok("cai-bf16-raw", b.dtype == tegen.BF16, vars(b))
    b = tegen.as_buffer("q", CAI(0x10000, (128, 64), "|u1"), dtype="e2m1")
    ok("cai-e2m1-packed", b.shape == (128, 128), vars(b))
    expect_raise("cai-needs-dtype", tegen.BindError, lambda: tegen.as_buffer("x", CAI(16, (4, 4), "<i2")),
                 "pass dtype=")
    expect_raise("cai-strided", tegen.BindError,
                 lambda: tegen.as_buffer("x", CAI(16, (4, 4), "<f4", strides=(4, 16))), "not contiguous")
    ok("cai-contiguous-strides", tegen.as_buffer("x", CAI(16, (4, 4), "<f4", strides=(16, 4))).shape == (4, 4), "")
    expect_raise("cai-width", tegen.BindError, lambda: tegen.as_buffer("x", CAI(16, (4,), "<f4"), dtype="bf16"),
                 "has 32-bit elements, bf16 has 16")
    expect_raise("align", tegen.BindError, lambda: tegen.as_buffer("x", CAI(0x10008, (4,), "<f4")).check("x"),
                 "16-byte aligned")
    expect_raise("shape", tegen.BindError,
                 lambda: tegen.as_buffer("x", CAI(16, (4, 8), "<f4")).check("x", tegen.FP32, (-1, 16)),
                 "wants shape [tokens, 16]")
    expect_raise("dtype-mismatch", tegen.BindError,
                 lambda: tegen.as_buffer("x", CAI(16, (4, 8), "<f4")).check("x", tegen.BF16, None), "wants bf16")
    expect_raise("rank", tegen.BindError, lambda: tegen.as_buffer("x", CAI(16, (1, 1, 1, 1, 1), "<f4")), "rank 5")
    expect_raise("not-a-buffer", tegen.BindError, lambda: tegen.as_buffer("x", [1, 2, 3]), "cannot bind a list")

    # DLPack buffers (fake producers: a DLManagedTensor in a capsule)
    b = tegen.as_buffer("w", DLPackObj(0x20000, (64, 128), 10, 8))
    ok("dlpack-e4m3", (b.ptr, b.dtype, b.shape) == (0x20000, tegen.E4M3, (64, 128)), vars(b))
    b = tegen.as_buffer("x", DLPackObj(0x20000, (8, 16), 4, 16, strides=(16, 1)))
    ok("dlpack-bf16-strides", b.dtype == tegen.BF16 and b.shape == (8, 16), vars(b))
    expect_raise("dlpack-cpu", tegen.BindError, lambda: tegen.as_buffer("x", DLPackObj(16, (4,), 2, 32, 1)),
                 "needs CUDA")
    expect_raise("dlpack-strided", tegen.BindError,
                 lambda: tegen.as_buffer("x", DLPackObj(16, (8, 16), 2, 32, strides=(1, 8))), "not contiguous")
    expect_raise("dlpack-int", tegen.BindError, lambda: tegen.as_buffer("x", DLPackObj(16, (4,), 0, 32)),
                 "not a tegen type")

    # a DeviceArray's own __dlpack__ capsule reads back (what torch.from_dlpack gets from tegen views)
    from tegen import _tensors
    arr = tegen.DeviceArray(0x30000, (3, 16), "<i2", None)
    b = _tensors.from_dlpack("v", arr, dtype="bf16")
    ok("dlpack-export", (b.ptr, b.dtype, b.shape) == (0x30000, tegen.BF16, (3, 16)) and len(_tensors._exported) == 1,
       vars(b))
    del b
    ok("dlpack-export-capsule", len(_tensors._exported) == 0, "an unconsumed capsule did not release its tensor")

    # errors carry tg_last_error(); no GPU is a tegen.Error, said plainly
    st = lib.tg_bind(None, b"x", None)
    ok("last-error", st == tegen.ERR_ARG and tegen.last_error() == "tg_bind: NULL argument",
       f"status {st}, {tegen.last_error()!r}")
    e = tegen.Error(st, "tg_bind", tegen.last_error())
    ok("error-text", str(e) == "tg_bind: TG_ERR_ARG: tg_bind: NULL argument" and e.status_name == "TG_ERR_ARG", str(e))
    have_gpu, why = tegen.gpu_available()
    if have_gpu:
        print(f"skip python/no-gpu-error: a GPU is here ({why})")
    else:
        err = expect_raise("no-gpu-error", tegen.Error, tegen.Context, "tg_context_create: TG_ERR_CUDA: ")
        ok("no-gpu-status", err is not None and err.status == tegen.ERR_CUDA and
           ("no CUDA" in err.message or "cuInit" in err.message), err and err.message)
        ok("gpu-available", why.startswith("tg_context_create: TG_ERR_CUDA"), why)

    try:
        import torch  # noqa: F401
    except ImportError:
        print("skip python/torch-module: no torch")
    else:
        try:
            import tegen.torch as tt
            ok("torch-module", hasattr(tt, "Layer"), "no Layer")
        except Exception as e:  # noqa: BLE001
            ok("torch-module", False, f"{type(e).__name__}: {e}")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
