"""_core.py: the objects of tegen.h: Error, Context and Layer, over ctypes.

Every C call that fails raises Error with the status and tg_last_error(). Calls that run work on
the GPU take a stream: a CUDA stream handle (int), an object with .cuda_stream (torch.cuda.Stream),
or None: torch's current stream on the layer's device when torch is imported, else the default stream.
"""
import ctypes
import sys
import weakref

from . import _lib
from ._tensors import (BindError, DTYPE_BITS, DTYPE_NAMES, TORCH_OF, DeviceArray, as_buffer)

STATUS_NAMES = ["TG_OK", "TG_ERR_ARG", "TG_ERR_SPEC", "TG_ERR_UNSUPPORTED", "TG_ERR_COMPILE", "TG_ERR_FROZEN",
                "TG_ERR_CAPTURING", "TG_ERR_BINDING", "TG_ERR_CUDA", "TG_ERR_NOMEM"]
(OK, ERR_ARG, ERR_SPEC, ERR_UNSUPPORTED, ERR_COMPILE, ERR_FROZEN, ERR_CAPTURING, ERR_BINDING, ERR_CUDA,
 ERR_NOMEM) = range(10)
INPUT, OUTPUT, WEIGHT, GRADIENT = 1, 2, 4, 8  # TG_TENSOR_* flags
# component -> (elements are fp32 state floats?) for tensor views; data components take the tensor's type
STATE_COMPONENTS = {"scale", "scale_inv", "amax"}

_loaded = None


class Error(RuntimeError):
    """A tegen call failed: .status (TgStatus int), .status_name, .call and .message (tg_last_error())."""

    def __init__(self, status, call, message):
        self.status, self.call, self.message = status, call, message
        self.status_name = STATUS_NAMES[status] if 0 <= status < len(STATUS_NAMES) else f"status {status}"
        super().__init__(f"{call}: {self.status_name}: {message}")


def lib():
    """The loaded libtegen (ctypes.CDLL), loading it on first use (raises _lib.LibraryNotFound)."""
    global _loaded
    if _loaded is None:
        _loaded = _lib.load()
    return _loaded[0]


def library_path():
    """Where libtegen.so was loaded from."""
    lib()
    return _loaded[1]


def version():
    """The libtegen version string (tg_version)."""
    return lib().tg_version().decode()


def last_error():
    """tg_last_error(): the message of this thread's last failed tegen call."""
    return (lib().tg_last_error() or b"").decode(errors="replace")


def check(status, call):
    """Raise Error for a failed status (with tg_last_error()), else return None."""
    if status != OK:
        raise Error(status, call, last_error())


def need(name):
    """The C function `name`; Error (TG_ERR_UNSUPPORTED) when this libtegen predates it."""
    fn = getattr(lib(), name, None)
    if fn is None:
        raise Error(ERR_UNSUPPORTED, name, f"{library_path()} has no {name} (a libtegen older than this wrapper)")
    return fn


def _torch():
    return sys.modules.get("torch")


def stream_handle(stream, device=None):
    """A CUstream handle (int) for stream: int, .cuda_stream, or None (torch's current stream, else 0)."""
    if stream is None:
        torch = _torch()
        if torch is not None and torch.cuda.is_initialized():
            return torch.cuda.current_stream(device).cuda_stream
        return 0
    if hasattr(stream, "cuda_stream"):
        return stream.cuda_stream
    return int(stream)


class _Driver:
    """The few driver calls that keep the context current on threads tegen did not start (torch's
    autograd runs backward on its own thread, where no CUDA context may be current yet)."""
    cuda = None

    @classmethod
    def load(cls):
        if cls.cuda is None:
            cls.cuda = ctypes.CDLL("libcuda.so.1")
            cls.cuda.cuCtxGetCurrent.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
            cls.cuda.cuCtxSetCurrent.argtypes = [ctypes.c_void_p]
        return cls.cuda

    @classmethod
    def current(cls):
        c = ctypes.c_void_p()
        return c.value if cls.load().cuCtxGetCurrent(ctypes.byref(c)) == 0 else None

    @classmethod
    def make_current(cls, ctx):
        if ctx and cls.current() != ctx:
            cls.load().cuCtxSetCurrent(ctypes.c_void_p(ctx))


def gpu_available():
    """(True, arch) when a tegen context can be made here, else (False, why)."""
    try:
        with Context() as c:
            return True, c.arch
    except (Error, _lib.LibraryNotFound, OSError) as e:
        return False, str(e)


class Context:
    """A tegen context (tg_context_create): the kernel cache, loaded modules and cuBLASLt handle,
    bound to the calling thread's current CUDA context. With torch imported, that is torch's context
    on its current device (made current first); without, the primary context of device 0.
    Without a GPU it raises Error (TG_ERR_CUDA, "no CUDA driver ..." / "no CUDA device")."""

    def __init__(self, cache_dir=None, frozen=False, log=None):
        self._lib = lib()
        self._ptr = None
        torch = _torch()
        self.device = None
        if torch is not None and torch.cuda.is_available():
            self.device = torch.cuda.current_device()
            torch.cuda.synchronize(self.device)  # makes torch's (primary) context current on this thread
        opts = _lib.Options()
        opts.cache_dir = cache_dir.encode() if cache_dir else None
        opts.frozen = 1 if frozen else 0
        self._log = _lib.LOG_FN(lambda user, msg: log(msg.decode(errors="replace"))) if log else _lib.LOG_FN()
        opts.log = self._log
        out = ctypes.c_void_p()
        check(self._lib.tg_context_create(ctypes.byref(opts), ctypes.byref(out)), "tg_context_create")
        self._ptr = out.value
        self._layers = weakref.WeakSet()
        self.cuda_context = _Driver.current()
        self.arch = self._lib.tg_context_arch(self._ptr).decode()

    def make_current(self):
        """Make this context's CUDA context current on the calling thread (a no-op when it is)."""
        _Driver.make_current(self.cuda_context)

    def layer(self, spec=None, text=None, name=None):
        """A Layer from a spec file (spec=path) or YAML text (text=..., name used in messages)."""
        return Layer(self, spec, text=text, name=name)

    def close(self):
        """tg_context_destroy, after closing the layers made from it that are still open."""
        for layer in list(getattr(self, "_layers", ())):
            layer.close()
        if self._ptr:
            self._lib.tg_context_destroy(self._ptr)
            self._ptr = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


class TensorInfo:
    """One tensor of a layer: name, dtype (TgDtype int; .dtype_name), shape (None for a dynamic
    extent), and the flags input, output, weight, gradient."""

    def __init__(self, raw, shape):
        self.name = raw.name.decode()
        self.dtype = raw.dtype
        self.dtype_name = DTYPE_NAMES.get(raw.dtype, str(raw.dtype))
        self.shape = shape
        self.input = bool(raw.flags & INPUT)
        self.output = bool(raw.flags & OUTPUT)
        self.weight = bool(raw.flags & WEIGHT)
        self.gradient = bool(raw.flags & GRADIENT)

    def __repr__(self):
        kind = [k for k in ("input", "output", "weight", "gradient") if getattr(self, k)]
        return f"TensorInfo({self.name!r}, {self.dtype_name}, {list(self.shape)}, {'+'.join(kind) or 'internal'})"


class Layer:
    """A planned layer (tg_layer_create / tg_layer_create_file). bind() buffers by tensor name, then
    run() (forward), backward(), optimizer_step(), step() on a stream. Bound buffers are kept alive
    by the layer until rebound or closed."""

    def __init__(self, context, spec=None, text=None, name=None):
        if (spec is None) == (text is None):
            raise ValueError("Layer: give a spec file path or text=, not both")
        self.context = context
        self._lib = context._lib
        self._ptr = None
        self._bound = {}
        out = ctypes.c_void_p()
        context.make_current()
        if text is not None:
            data = text.encode() if isinstance(text, str) else bytes(text)
            label = (name or "<text>").encode()
            check(self._lib.tg_layer_create(context._ptr, label, data, len(data), ctypes.byref(out)),
                  "tg_layer_create")
        else:
            check(self._lib.tg_layer_create_file(context._ptr, str(spec).encode(), ctypes.byref(out)),
                  "tg_layer_create_file")
        self._ptr = out.value
        context._layers.add(self)

    # ---- planning and compiling ----
    def set_tokens(self, tokens):
        """Re-plan the tile-shape variants for this many tokens (before load)."""
        check(self._lib.tg_layer_set_tokens(self._ptr, int(tokens)), "tg_layer_set_tokens")

    def compile(self):
        """JIT-compile every kernel (disk cache first)."""
        check(self._lib.tg_layer_compile(self._ptr), "tg_layer_compile")

    def load(self):
        """Load the kernels into the context (compiles first if needed)."""
        self.context.make_current()
        check(self._lib.tg_layer_load(self._ptr), "tg_layer_load")

    def kernels(self):
        """[(name, cache_hit, registers, spills)] per planned kernel."""
        out = []
        for i in range(self._lib.tg_layer_kernel_count(self._ptr)):
            n, h, r, s = ctypes.c_char_p(), ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
            check(self._lib.tg_layer_kernel_info(self._ptr, i, ctypes.byref(n), ctypes.byref(h), ctypes.byref(r),
                                                 ctypes.byref(s)), "tg_layer_kernel_info")
            out.append((n.value.decode(), bool(h.value), r.value, s.value))
        return out

    def tensors(self, tokens=0):
        """[TensorInfo] of every tensor of the layer, shapes at `tokens` (0: None for dynamic extents)."""
        count = need("tg_layer_tensor_count")(self._ptr)
        info = need("tg_layer_tensor_info")
        out = []
        for i in range(count):
            raw = _lib.TensorInfo()
            check(info(self._ptr, i, int(tokens), ctypes.byref(raw)), "tg_layer_tensor_info")
            out.append(TensorInfo(raw, tuple(None if s < 0 else s for s in raw.shape[:raw.rank])))
        return out

    def tensor(self, name, tokens=0):
        """The TensorInfo of one tensor by name (KeyError if the layer has none)."""
        for t in self.tensors(tokens):
            if t.name == name:
                return t
        raise KeyError(f"layer has no tensor '{name}'")

    # ---- binding ----
    def bind(self, name, buffer, dtype=None, stream=None):
        """Bind a device buffer to tensor `name`: a torch tensor, or an object with __cuda_array_interface__
        or __dlpack__ (dtype= names the element type where the object's own type cannot: raw bytes, bf16).
        Checks device, contiguity and 16-byte alignment here (BindError), dtype and shape in tg_bind (Error)."""
        try:
            buf = as_buffer(name, buffer, dtype, stream_handle(stream, self.context.device) or None)
            buf.check(name)
        except BindError as e:
            raise Error(ERR_BINDING, "tg_bind", str(e)) from None
        if buf.device is not None and self.context.device is not None and buf.device != self.context.device:
            raise Error(ERR_BINDING, "tg_bind", f"'{name}': the buffer is on cuda:{buf.device}, the layer's "
                        f"context on cuda:{self.context.device}")
        desc = buf.desc(_lib.TensorDesc)
        check(self._lib.tg_bind(self._ptr, name.encode(), ctypes.byref(desc)), "tg_bind")
        self._bound[name] = buf
        return buf

    def unbind_all(self):
        """Forget the Python references to bound buffers (tegen keeps the pointers: rebind before the next run)."""
        self._bound.clear()

    # ---- running ----
    def _stream(self, stream):
        self.context.make_current()
        return ctypes.c_void_p(stream_handle(stream, self.context.device) or None)

    def run(self, stream=None):
        """tg_run: the forward phase on stream (no host sync; capturable after the first call at a size)."""
        check(self._lib.tg_run(self._ptr, self._stream(stream)), "tg_run")

    def backward(self, stream=None):
        """tg_backward: the backward phase, after run() on the same stream with d_<output> bound."""
        check(need("tg_backward")(self._ptr, self._stream(stream)), "tg_backward")

    def optimizer_step(self, stream=None):
        """tg_optimizer_step: the optimizer phase (AdamW update and the weights' quantized copies)."""
        check(need("tg_optimizer_step")(self._ptr, self._stream(stream)), "tg_optimizer_step")

    def set_learning_rate(self, lr, stream=None):
        """tg_set_learning_rate: a stream-ordered write of the learning rate the optimizer reads."""
        check(need("tg_set_learning_rate")(self._ptr, ctypes.c_float(lr), self._stream(stream)),
              "tg_set_learning_rate")

    def cache_weights(self, on=True):
        """tg_layer_cache_weights: cast the weights only while stale (first run, after a bind of a weight
        or a step); for inference with frozen weights (bind a weight again after changing it in place)."""
        check(need("tg_layer_cache_weights")(self._ptr, ctypes.c_int(1 if on else 0)), "tg_layer_cache_weights")

    def step(self, stream=None):
        """tg_step: roll the amax histories and compute the next scales on the device."""
        check(self._lib.tg_step(self._ptr, self._stream(stream)), "tg_step")

    def run_timed(self):
        """tg_run_timed on the default stream: each kernel's share of the run in milliseconds (its
        start to the next kernel's start, no sync between kernels; 0 for a kernel that did not run;
        synchronizes once at the end)."""
        n = self._lib.tg_layer_kernel_count(self._ptr)
        ms = (ctypes.c_float * max(n, 1))()
        check(self._lib.tg_run_timed(self._ptr, self._stream(None), ms, n), "tg_run_timed")
        return list(ms[:n])

    @property
    def has_backward(self):
        """Whether the layer has a backward half (an input gradient d_<output>)."""
        return any(t.gradient and t.input for t in self.tensors())

    # ---- state and components ----
    def state(self):
        """(device pointer, bytes, layout dict) of the recipe state (tg_state)."""
        dev, size, lay = ctypes.c_void_p(), ctypes.c_size_t(), _lib.StateLayout()
        check(self._lib.tg_state(self._ptr, ctypes.byref(dev), ctypes.byref(size), ctypes.byref(lay)), "tg_state")
        layout = {k: getattr(lay, k) for k, _ in _lib.StateLayout._fields_}
        return dev.value or 0, size.value, layout

    def tensor_ptr(self, name, component="data"):
        """(device pointer, bytes) of a tensor component after a run: data, data_t, scale, scale_inv,
        scale_inv_t, amax."""
        dev, size = ctypes.c_void_p(), ctypes.c_size_t()
        check(self._lib.tg_tensor_ptr(self._ptr, name.encode(), component.encode(), ctypes.byref(dev),
                                      ctypes.byref(size)), "tg_tensor_ptr")
        return dev.value or 0, size.value

    def state_array(self):
        """The recipe state as a DeviceArray of float32 (no copy): torch.from_dlpack, CuPy, Numba wrap it."""
        ptr, size, _ = self.state()
        return DeviceArray(ptr, (size // 4,), "<f4", self, self._dl_device())

    def _dl_device(self):
        return (2, self.context.device or 0)

    def component_array(self, name, component="data"):
        """A component as a flat DeviceArray (no copy): float32 for the per-tensor scale, scale_inv and
        amax; raw bytes (uint8) for block scales (FP8 block: view as float32; MXFP8: E8M0; NVFP4: E4M3);
        the tensor's elements for data/data_t (16-bit types as int16, 8- and 4-bit as uint8). data_t (and an
        emulated GEMM's deq_t) is [cols][pitch]: each line the token count rounded up to 16 elements (E2M1: 32),
        the elements past the last token padding (tegen.h, tg_tensor_ptr)."""
        ptr, size = self.tensor_ptr(name, component)
        if component in ("scale", "amax") or (component == "scale_inv" and size == 4):
            return DeviceArray(ptr, (size // 4,), "<f4", self, self._dl_device())
        if component.startswith("scale_inv"):
            return DeviceArray(ptr, (size,), "|u1", self, self._dl_device())
        bits = DTYPE_BITS.get(self.tensor(name).dtype, 8)
        typestr, width = {32: ("<f4", 4), 16: ("<i2", 2)}.get(bits, ("|u1", 1))
        return DeviceArray(ptr, (size // width,), typestr, self, self._dl_device())

    def torch_state(self):
        """The recipe state as a torch float32 tensor sharing tegen's memory."""
        torch = _import_torch()
        return torch.from_dlpack(self.state_array())

    def torch_component(self, name, component="data"):
        """A tensor component as a torch tensor sharing tegen's memory: data/data_t as the tensor's type
        (torch.float8_e4m3fn, ...; flat), scale/amax as float32, block scales as bytes (uint8)."""
        torch = _import_torch()
        arr = self.component_array(name, component)
        t = torch.from_dlpack(arr)
        if component in ("data", "data_t"):
            want = getattr(torch, TORCH_OF.get(self.tensor(name).dtype, "uint8"), None)
            if want is not None and want.itemsize == t.element_size() and want != t.dtype:
                t = t.view(want)
        return t

    def close(self):
        """tg_layer_destroy."""
        if self._ptr:
            self._lib.tg_layer_destroy(self._ptr)
            self._ptr = None
        self._bound.clear()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


def _import_torch():
    try:
        import torch
    except ImportError:
        raise ImportError("this returns a torch tensor: install torch, or use the DeviceArray methods "
                          "(state_array, component_array) with another CUDA array library") from None
    return torch

