"""tegen: Python bindings of libtegen (runtime/tegen.h) through ctypes: no compiled extension.

    import tegen
    ctx = tegen.Context()                       # the current CUDA context (torch's, when torch is imported)
    layer = ctx.layer("specs/llama3_8b_mlp.yaml")
    layer.bind("x", x); layer.bind("gamma", g); ...; layer.bind("y", y)
    layer.run()                                 # on torch.cuda.current_stream()
    layer.step()                                # recipe state (delayed scaling) for the next step

tegen.torch.Layer is the torch.nn.Module over this (forward and backward through autograd).
Standard library only; torch (and anything with __dlpack__ / __cuda_array_interface__) when present.
libtegen.so is found through $TEGEN_LIB, the build tree, pkg-config or the loader (tegen.find_library()).
"""
from ._core import (Context, Error, Layer, TensorInfo, gpu_available, last_error, lib, library_path, version,
                    ERR_ARG, ERR_SPEC, ERR_UNSUPPORTED, ERR_COMPILE, ERR_FROZEN, ERR_CAPTURING, ERR_BINDING,
                    ERR_CUDA, ERR_NOMEM, STATUS_NAMES)
from ._lib import LibraryNotFound, candidates as library_candidates
from ._tensors import (BindError, Buffer, DeviceArray, as_buffer, dtype_code, DTYPE_NAMES, TORCH_DTYPES,
                       DLPACK_DTYPES, FP32, BF16, FP16, E4M3, E5M2, E2M1, E8M0)

__all__ = ["Context", "Layer", "Error", "LibraryNotFound", "BindError", "TensorInfo", "Buffer", "DeviceArray",
           "gpu_available", "last_error", "lib", "library_path", "library_candidates", "version", "find_library",
           "as_buffer", "dtype_code", "DTYPE_NAMES", "TORCH_DTYPES", "DLPACK_DTYPES", "STATUS_NAMES",
           "FP32", "BF16", "FP16", "E4M3", "E5M2", "E2M1", "E8M0",
           "ERR_ARG", "ERR_SPEC", "ERR_UNSUPPORTED", "ERR_COMPILE", "ERR_FROZEN", "ERR_CAPTURING", "ERR_BINDING",
           "ERR_CUDA", "ERR_NOMEM"]


def find_library():
    """The path libtegen.so is (or would be) loaded from; raises LibraryNotFound listing what was tried."""
    return library_path()
