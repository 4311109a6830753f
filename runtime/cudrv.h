/* cudrv.h: the CUDA driver API, loaded with dlopen at first use.
 *
 * tegen must start (and generate, and NVRTC-compile) on machines with the
 * toolkit but no GPU driver, so nothing links libcuda directly. cudrv_load()
 * opens libcuda.so.1 once and fills the table; callers use cu.Name(...).
 * Types are declared here so that no CUDA header is needed. */
#ifndef TG_CUDRV_H
#define TG_CUDRV_H

#include <stddef.h>

typedef int CUresult;            /* 0 = CUDA_SUCCESS */
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef unsigned long long CUdeviceptr;

/* cuMemcpy2DAsync's argument, laid out as cuda.h's CUDA_MEMCPY2D (v2) */
typedef struct TgMemcpy2D {
	size_t srcXInBytes, srcY;
	int srcMemoryType; const void *srcHost; CUdeviceptr srcDevice; void *srcArray; size_t srcPitch;
	size_t dstXInBytes, dstY;
	int dstMemoryType; void *dstHost; CUdeviceptr dstDevice; void *dstArray; size_t dstPitch;
	size_t WidthInBytes, Height;
} TgMemcpy2D;
enum { TG_CU_MEMORYTYPE_DEVICE = 2 };

/* attribute numbers from cuda.h */
enum {
	TG_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
	TG_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
	TG_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
	TG_CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38,
	TG_CU_FUNC_ATTRIBUTE_NUM_REGS = 4,
	TG_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
	TG_CU_STREAM_CAPTURE_STATUS_NONE = 0,
};

#define CUDRV_FUNCS(X) \
	X(cuInit, (unsigned flags)) \
	X(cuDriverGetVersion, (int *v)) \
	X(cuDeviceGetCount, (int *n)) \
	X(cuDeviceGet, (CUdevice *d, int ordinal)) \
	X(cuDeviceGetName, (char *name, int len, CUdevice d)) \
	X(cuDeviceGetAttribute, (int *v, int attr, CUdevice d)) \
	X(cuDevicePrimaryCtxRetain, (CUcontext *c, CUdevice d)) \
	X(cuDevicePrimaryCtxRelease, (CUdevice d)) \
	X(cuCtxGetCurrent, (CUcontext *c)) \
	X(cuCtxSetCurrent, (CUcontext c)) \
	X(cuCtxGetDevice, (CUdevice *d)) \
	X(cuCtxSynchronize, (void)) \
	X(cuModuleLoadData, (CUmodule *m, const void *image)) \
	X(cuModuleUnload, (CUmodule m)) \
	X(cuModuleGetFunction, (CUfunction *f, CUmodule m, const char *name)) \
	X(cuFuncGetAttribute, (int *v, int attr, CUfunction f)) \
	X(cuFuncSetAttribute, (CUfunction f, int attr, int v)) \
	X(cuOccupancyMaxActiveBlocksPerMultiprocessor, (int *n, CUfunction f, int threads, size_t smem)) \
	X(cuLaunchKernel, (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, \
		unsigned bz, unsigned smem, CUstream s, void **params, void **extra)) \
	X(cuMemAlloc_v2, (CUdeviceptr *p, size_t n)) \
	X(cuMemFree_v2, (CUdeviceptr p)) \
	X(cuMemcpyHtoD_v2, (CUdeviceptr dst, const void *src, size_t n)) \
	X(cuMemcpyDtoH_v2, (void *dst, CUdeviceptr src, size_t n)) \
	X(cuMemcpyDtoD_v2, (CUdeviceptr dst, CUdeviceptr src, size_t n)) \
	X(cuMemcpyDtoDAsync_v2, (CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)) \
	X(cuMemsetD8_v2, (CUdeviceptr p, unsigned char v, size_t n)) \
	X(cuMemsetD32Async, (CUdeviceptr p, unsigned v, size_t n, CUstream s)) \
	X(cuMemsetD8Async, (CUdeviceptr p, unsigned char v, size_t n, CUstream s)) \
	X(cuMemsetD2D8Async, (CUdeviceptr p, size_t pitch, unsigned char v, size_t width, size_t height, CUstream s)) \
	X(cuMemcpy2DAsync_v2, (const TgMemcpy2D *copy, CUstream s)) \
	X(cuStreamCreate, (CUstream *s, unsigned flags)) \
	X(cuStreamDestroy_v2, (CUstream s)) \
	X(cuStreamSynchronize, (CUstream s)) \
	X(cuStreamIsCapturing, (CUstream s, int *status)) \
	X(cuStreamBeginCapture_v2, (CUstream s, int mode)) \
	X(cuStreamEndCapture, (CUstream s, void **graph)) \
	X(cuGraphInstantiateWithFlags, (void **exec, void *graph, unsigned long long flags)) \
	X(cuGraphLaunch, (void *exec, CUstream s)) \
	X(cuGraphExecDestroy, (void *exec)) \
	X(cuGraphDestroy, (void *graph)) \
	X(cuEventCreate, (CUevent *e, unsigned flags)) \
	X(cuEventDestroy_v2, (CUevent e)) \
	X(cuEventRecord, (CUevent e, CUstream s)) \
	X(cuEventSynchronize, (CUevent e)) \
	X(cuEventElapsedTime, (float *ms, CUevent a, CUevent b)) \
	X(cuGetErrorString, (CUresult r, const char **s))

/* the TMA descriptor (cuda.h's CUtensorMap: 128 opaque bytes, 64-byte aligned) and its enum values */
typedef struct TgTensorMap { _Alignas(64) unsigned long long opaque[16]; } TgTensorMap;
enum {
	TG_CU_TENSOR_MAP_DATA_TYPE_UINT8 = 0, TG_CU_TENSOR_MAP_DATA_TYPE_FLOAT16 = 6,
	TG_CU_TENSOR_MAP_DATA_TYPE_FLOAT32 = 7, TG_CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 = 9,
	TG_CU_TENSOR_MAP_SWIZZLE_64B = 2, TG_CU_TENSOR_MAP_SWIZZLE_128B = 3, TG_CU_TENSOR_MAP_L2_PROMOTION_L2_256B = 3,
};

/* cuLaunchKernelEx's configuration, laid out as cuda.h's CUlaunchConfig / CUlaunchAttribute (a 64-byte value
 * union); only the programmatic stream serialization attribute is used (PDL: the kernel may launch while the
 * previous one finishes, and waits for it with griddepcontrol.wait before reading what it wrote). */
typedef struct TgLaunchAttr { int id; char pad[4]; union { int i; char bytes[64]; } value; } TgLaunchAttr;
typedef struct TgLaunchConfig {
	unsigned grid[3], block[3], smem;
	CUstream stream;
	TgLaunchAttr *attrs;
	unsigned nattrs;
} TgLaunchConfig;
enum { TG_CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION = 6 };

/* functions newer drivers have; NULL in the table when this driver lacks them (nothing fails to load) */
#define CUDRV_OPTIONAL(X) \
	X(cuLaunchKernelEx, (const TgLaunchConfig *config, CUfunction f, void **params, void **extra)) \
	X(cuTensorMapEncodeTiled, (TgTensorMap *map, int dtype, unsigned rank, void *addr, const unsigned long long *dims, \
		const unsigned long long *strides, const unsigned *box, const unsigned *elem_strides, int interleave, \
		int swizzle, int l2promotion, int oobfill))

typedef struct CuDriver {
#define X(name, args) CUresult (*name) args;
	CUDRV_FUNCS(X)
	CUDRV_OPTIONAL(X)
#undef X
} CuDriver;

extern CuDriver cu;

/* cudrv_load opens the driver and cuInit()s once; returns 0 or -1 with a
 * reason in why (e.g. "no CUDA driver (libcuda.so.1 not found)"). Thread-safe. */
int cudrv_load(char *why, size_t whylen);
/* cudrv_errstr names a CUresult ("CUDA_ERROR_OUT_OF_MEMORY: out of memory"). */
const char *cudrv_errstr(CUresult r);

#endif
