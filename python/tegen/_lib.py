"""_lib.py: find libtegen.so and declare its C functions (runtime/tegen.h) for ctypes.

Where the library is looked for, in order:
  1. $TEGEN_LIB (a path to libtegen.so; when set, the only place looked),
  2. the build tree relative to this package (python/tegen/../../build/libtegen.so),
  3. pkg-config's libdir for `tegen` (an installed tegen: ninja install),
  4. the dynamic loader's search path (ctypes.util.find_library("tegen")).
LibraryNotFound lists every place tried and why it failed.
"""
import ctypes
import ctypes.util
import os
import subprocess

API_VERSION = 1  # TG_API_VERSION of the tegen.h this wrapper follows


class LibraryNotFound(OSError):
    """libtegen.so was not found or did not load; the message lists what was tried."""


class TensorDesc(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int), ("rank", ctypes.c_int),
                ("shape", ctypes.c_longlong * 4), ("strides", ctypes.c_longlong * 4)]


class StateLayout(ctypes.Structure):
    _fields_ = [("tensors", ctypes.c_int), ("delayed", ctypes.c_int), ("history", ctypes.c_int),
                ("scale", ctypes.c_size_t), ("scale_inv", ctypes.c_size_t), ("stride", ctypes.c_size_t),
                ("history_offset", ctypes.c_size_t), ("amax", ctypes.c_size_t)]


class TensorInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("dtype", ctypes.c_int), ("rank", ctypes.c_int),
                ("shape", ctypes.c_longlong * 4), ("flags", ctypes.c_int)]


LOG_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p)


class Options(ctypes.Structure):
    _fields_ = [("cache_dir", ctypes.c_char_p), ("frozen", ctypes.c_int), ("log", LOG_FN),
                ("log_user", ctypes.c_void_p)]


P = ctypes.c_void_p
PP = ctypes.POINTER(ctypes.c_void_p)
I = ctypes.c_int
S = ctypes.c_size_t
# name: (restype, argtypes); None restype = void. Functions marked optional may be absent
# from an older libtegen (the Python side then says which call is missing).
SIGNATURES = {
    "tg_last_error": (ctypes.c_char_p, []),
    "tg_version": (ctypes.c_char_p, []),
    "tg_context_create": (I, [ctypes.POINTER(Options), PP]),
    "tg_context_destroy": (None, [P]),
    "tg_context_arch": (ctypes.c_char_p, [P]),
    "tg_layer_create": (I, [P, ctypes.c_char_p, ctypes.c_char_p, S, PP]),
    "tg_layer_create_file": (I, [P, ctypes.c_char_p, PP]),
    "tg_layer_set_tokens": (I, [P, ctypes.c_longlong]),
    "tg_layer_compile": (I, [P]),
    "tg_layer_load": (I, [P]),
    "tg_layer_destroy": (None, [P]),
    "tg_bind": (I, [P, ctypes.c_char_p, ctypes.POINTER(TensorDesc)]),
    "tg_run": (I, [P, P]),
    "tg_step": (I, [P, P]),
    "tg_state": (I, [P, PP, ctypes.POINTER(S), ctypes.POINTER(StateLayout)]),
    "tg_tensor_ptr": (I, [P, ctypes.c_char_p, ctypes.c_char_p, PP, ctypes.POINTER(S)]),
    "tg_layer_kernel_count": (I, [P]),
    "tg_layer_kernel_info": (I, [P, I, ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(I), ctypes.POINTER(I),
                                 ctypes.POINTER(I)]),
    "tg_run_timed": (I, [P, P, ctypes.POINTER(ctypes.c_float), I]),
    "tg_alloc": (I, [P, S, PP]),
    "tg_free": (None, [P, P]),
    "tg_memcpy": (I, [P, P, P, S, I]),
    # newer than API version 1's first release: optional
    "tg_layer_tensor_count": (I, [P]),
    "tg_layer_tensor_info": (I, [P, I, ctypes.c_longlong, ctypes.POINTER(TensorInfo)]),
    "tg_backward": (I, [P, P]),
    "tg_optimizer_step": (I, [P, P]),
    "tg_set_learning_rate": (I, [P, ctypes.c_float, P]),
}
OPTIONAL = {"tg_layer_tensor_count", "tg_layer_tensor_info", "tg_backward", "tg_optimizer_step",
            "tg_set_learning_rate"}


def candidates():
    """The places to look for libtegen.so, in order, as (where, path-or-None, note) triples."""
    out = []
    env = os.environ.get("TEGEN_LIB")
    out.append(("$TEGEN_LIB", env, None if env else "not set"))
    here = os.path.dirname(os.path.abspath(__file__))
    out.append(("build tree", os.path.normpath(os.path.join(here, "..", "..", "build", "libtegen.so")), None))
    try:
        r = subprocess.run(["pkg-config", "--variable=libdir", "tegen"], capture_output=True, text=True, timeout=10)
        libdir = r.stdout.strip()
        if r.returncode == 0 and libdir:
            out.append(("pkg-config tegen", os.path.join(libdir, "libtegen.so"), None))
        else:
            out.append(("pkg-config tegen", None, (r.stderr.strip().splitlines() or ["no tegen.pc"])[0]))
    except (OSError, subprocess.SubprocessError) as e:
        out.append(("pkg-config tegen", None, f"pkg-config unavailable ({e.__class__.__name__})"))
    found = ctypes.util.find_library("tegen")
    out.append(("loader search path", found, None if found else "find_library('tegen') found nothing"))
    return out


def load():
    """Load libtegen.so from the first place that has it; (CDLL, path). Raises LibraryNotFound."""
    tried = []
    for where, path, note in candidates():
        if not path:
            tried.append(f"  {where}: {note}")
        elif os.sep in path and not os.path.exists(path):
            tried.append(f"  {where}: {path}: no such file")
        else:
            try:
                lib = ctypes.CDLL(path)
            except OSError as e:
                tried.append(f"  {where}: {path}: {e}")
            else:
                declare(lib)
                return lib, path
        if where == "$TEGEN_LIB" and path:  # an explicit choice that fails is not silently replaced
            break
    raise LibraryNotFound("libtegen.so not found; looked in:\n" + "\n".join(tried) +
                          "\nbuild it (./configure && ninja) or set TEGEN_LIB=/path/to/libtegen.so")


def declare(lib):
    """Set restype/argtypes of every function of SIGNATURES that lib has."""
    for name, (res, args) in SIGNATURES.items():
        fn = getattr(lib, name, None)
        if fn is None:
            if name not in OPTIONAL:
                raise LibraryNotFound(f"{lib._name}: lacks {name}: not a libtegen of API version {API_VERSION}")
            continue
        fn.restype = res
        fn.argtypes = args
