/* tegen.h: the public C API of libtegen.
 *
 * A host program hands tegen a layer spec (YAML text or a file), binds its own
 * device buffers by tensor name, and runs the layer on a stream. tegen plans
 * and JIT-compiles the kernels (NVRTC, disk-cached), keeps the recipe state
 * (amax histories, scales) on the GPU, and calls cuBLASLt for GEMMs.
 *
 * Rules: every call returns a TgStatus; tg_last_error() gives the message of
 * the last failure on this thread. The library never prints and never exits.
 * Create/destroy come in pairs. No CUDA header is needed to include this file:
 * TgStream is the same type as CUstream / cudaStream_t. */
#ifndef TEGEN_H
#define TEGEN_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TG_API_VERSION 1

typedef struct TgContext TgContext;
typedef struct TgLayer TgLayer;
typedef struct CUstream_st *TgStream;

typedef enum TgStatus {
	TG_OK = 0,
	TG_ERR_ARG,          /* a bad argument (NULL, unknown name, bad option) */
	TG_ERR_SPEC,         /* the spec does not parse or validate; message has file:line:col */
	TG_ERR_UNSUPPORTED,  /* valid, but not supported by this build or GPU */
	TG_ERR_COMPILE,      /* NVRTC failed; message has the log and the source path */
	TG_ERR_FROZEN,       /* frozen mode and a kernel is not in the cache */
	TG_ERR_CAPTURING,    /* would compile, load or allocate while the stream is being captured */
	TG_ERR_BINDING,      /* a tensor binding is missing or wrong (dtype, shape, alignment) */
	TG_ERR_CUDA,         /* a CUDA driver or cuBLASLt call failed */
	TG_ERR_NOMEM,        /* host or device allocation failed */
} TgStatus;

/* Element types, in the spelling of specs. */
typedef enum TgDtype { TG_FP32 = 1, TG_BF16, TG_FP16, TG_E4M3, TG_E5M2, TG_E2M1, TG_E8M0 } TgDtype;

typedef struct TgOptions {
	const char *cache_dir;   /* NULL: $TEGEN_CACHE_DIR, $XDG_CACHE_HOME/tegen, ~/.cache/tegen */
	int frozen;              /* nonzero: a kernel cache miss is an error (TG_ERR_FROZEN) */
	void (*log)(void *user, const char *msg); /* optional: warnings and compile progress */
	void *log_user;
} TgOptions;

typedef struct TgTensorDesc {
	void *data;              /* device pointer, 16-byte aligned */
	TgDtype dtype;
	int rank;
	long long shape[4];
	long long strides[4];    /* in elements; all 0 = contiguous row-major (the only layout v1 takes) */
} TgTensorDesc;

/* Where the recipe state lives: one device buffer of floats per layer. */
typedef struct TgStateLayout {
	int tensors;             /* per-tensor scaled tensors (n) */
	int delayed;             /* the first `delayed` of them use delayed scaling */
	int history;             /* history length L (rows of the history block) */
	size_t scale, scale_inv; /* float offsets; tensor i's are at scale + stride*i, scale_inv + stride*i */
	size_t stride;           /* 4: each scale has its own 16-byte slot (cuBLASLt reads them) */
	size_t history_offset;   /* history[L][n] (row-major) starts here */
	size_t amax;             /* float offset of the n current amaxes (= history row 0), for one all-reduce */
} TgStateLayout;

/* tg_last_error returns the message of this thread's last failed call ("" if none). */
const char *tg_last_error(void);
/* tg_version returns the library version string. */
const char *tg_version(void);

/* tg_context_create binds to the calling thread's current CUDA context (or the
 * primary context of device 0 when none is current). opts may be NULL. */
TgStatus tg_context_create(const TgOptions *opts, TgContext **out);
/* tg_context_destroy frees the kernel cache, modules and cuBLASLt handle. */
void tg_context_destroy(TgContext *ctx);
/* tg_context_arch names the target architecture of the context's GPU ("sm_90a"). */
const char *tg_context_arch(const TgContext *ctx);

/* tg_layer_create parses, validates and plans a layer from spec text (name is
 * used in messages). Nothing is compiled yet. */
TgStatus tg_layer_create(TgContext *ctx, const char *name, const char *text, size_t len, TgLayer **out);
/* tg_layer_create_file is tg_layer_create on a file's contents. */
TgStatus tg_layer_create_file(TgContext *ctx, const char *path, TgLayer **out);
/* tg_layer_set_tokens re-plans the layer's tile-shape variants for this many
 * tokens (the value of every dynamic dim), taking the `tegen tune` measurements
 * for this GPU from the tuning DB ($CACHE/tuning/v1.txt) where they exist.
 * Optional; call it before tg_layer_compile/load (TG_ERR_ARG after). Without it
 * a layer uses, per kernel, the largest row bucket tuned on this GPU, else the
 * heuristic. Numerics stay within the contract for any variant. */
TgStatus tg_layer_set_tokens(TgLayer *layer, long long tokens);
/* tg_layer_compile JIT-compiles every kernel (disk cache first), in parallel. */
TgStatus tg_layer_compile(TgLayer *layer);
/* tg_layer_load loads the compiled kernels into the context (compiles first if needed). */
TgStatus tg_layer_load(TgLayer *layer);
/* tg_layer_destroy frees the layer's device buffers and state. */
void tg_layer_destroy(TgLayer *layer);

/* tg_bind attaches a device buffer to a tensor by name; dynamic dims (tokens)
 * are taken from the shapes. Checks dtype, shape and alignment. */
TgStatus tg_bind(TgLayer *layer, const char *tensor, const TgTensorDesc *desc);
/* tg_run runs the layer (its forward phase) on a stream: no host synchronization, and no
 * allocation once buffers for this size exist, so it can be captured into a CUDA graph.
 * It checks the bindings the forward reads (not the output gradients of tg_backward). */
TgStatus tg_run(TgLayer *layer, TgStream stream);
/* tg_backward runs the layer's backward phase (the ops `backward: true` derives) on a
 * stream, after tg_run on the same stream with the output gradients d_<output> bound: it
 * reads what that tg_run saved and writes the gradients d_<input> and d_<weight>. Same
 * rules as tg_run (no host sync, no allocation once tg_run has sized the buffers,
 * graph-capturable). The gradients of `main_grad` weights are added into buffers the
 * caller binds (TG_ERR_BINDING while one is unbound). TG_ERR_ARG on a layer without a
 * backward phase. */
TgStatus tg_backward(TgLayer *layer, TgStream stream);
/* tg_step rolls the delayed-scaling amax histories and computes the next scales, on the device, and advances the NVFP4 stochastic-rounding offset. */
TgStatus tg_step(TgLayer *layer, TgStream stream);

/* Training with an optimizer (the spec's `optimizer: {kind: adamw, ...}` with backward: true).
 * tg_optimizer_step updates every weight of role weight from its gradient d_<weight> (the
 * one tg_backward wrote): AdamW with decoupled weight decay in FP32 (torch.optim.AdamW's
 * formula), and remakes the weights' quantized copies (rowwise/columnwise, scales, amax)
 * from the new values (per-tensor FP8 delayed, 128x128 and 1x128 blocks, MXFP8: in the same
 * pass as the update; current scaling and NVFP4: the update writes the global amax, the cast
 * pass follows), then increments the step
 * count on the device. Each weight's FP32
 * master copy and moments are layer-owned device buffers, its components "master", "m"
 * and "v" (tg_tensor_ptr reads them back; FP32, the weight's shape); at the first step the
 * master is taken from the bound weight and the moments start at 0. The bound weight
 * buffer is written with the new value rounded to its dtype, so it always holds the
 * current weight. Same rules as tg_run: no host sync, no allocation after the first run,
 * graph-capturable. TG_ERR_ARG on a layer without an optimizer or before its first tg_run.
 * (tg_run_timed does not run it.)
 * The weights are cast once per optimizer step, not per run: tg_run casts them only while
 * the copies are stale (the first run, and the run after a weight is (re)bound); later runs
 * use the copies the last step made, so several tg_run + tg_backward calls between two
 * steps (micro-batches, weights with main_grad accumulating their gradients) share one
 * cast; the step reads the accumulated gradient and does not clear it (the caller zeroes
 * a main_grad buffer before the next step's first micro-batch). A CUDA graph
 * captured from a tg_run after the first contains no weight cast.
 * Order per training step: tg_run and tg_backward (each micro-batch), tg_step (the
 * recipe state: new delayed scales from this step's amaxes), then tg_optimizer_step, which
 * casts the new weights with those scales; tg_step between tg_optimizer_step and the next
 * tg_run would change a delayed weight's scale under the copy already cast. */
TgStatus tg_optimizer_step(TgLayer *layer, TgStream stream);
/* tg_layer_cache_weights (on != 0): inference and frozen weights. tg_run then casts a weight (a
 * role: weight input) only while its quantized copies are stale: the first run, the run after a
 * tg_bind of a weight (bind it again after changing its contents in place), the run after a tg_step
 * (which may change the scales); later runs read the copies made then (a current-scaling or NVFP4
 * weight's amax in tg_state reads 0 after such a run: its amax pass did not run), and a CUDA graph
 * captured from such a run contains no weight cast. Off (the default), every tg_run casts every weight. Layers with
 * an optimizer already cast their trained weights once per tg_optimizer_step. TG_ERR_ARG for NULL. */
TgStatus tg_layer_cache_weights(TgLayer *layer, int on);
/* tg_set_learning_rate writes the learning rate the next tg_optimizer_step reads (the spec's
 * lr is the initial value), ordered on stream (a 4-byte device memset: no host sync,
 * graph-capturable, so a schedule needs no recompile). TG_ERR_ARG without an optimizer or
 * for a negative or non-finite lr. */
TgStatus tg_set_learning_rate(TgLayer *layer, float lr, TgStream stream);

/* Many GPUs: one amax across a group of ranks, through NCCL (loaded at run time: dlopen of
 * libnccl.so.2, or $TEGEN_NCCL_LIB; tegen builds and runs without it). With per-tensor and
 * NVFP4 scaling every rank must quantize with the same scale, so the amaxes are reduced (max)
 * over the group: TE's amax_reduction_group.
 *   TG_REDUCE_DELAYED: in tg_step, one all-reduce of the current amaxes (history row 0, every
 *     delayed tensor, gradients included) before the new scales (data parallel);
 *   TG_REDUCE_CURRENT: in tg_run / tg_backward, the current-scaling amaxes, between each amax
 *     pass and its cast pass (tensor or sequence parallel: the ranks hold parts of a tensor);
 *   TG_REDUCE_NVFP4: likewise the NVFP4 global amaxes (the S_enc every rank must share).
 * Consecutive amax passes share one grouped collective. Everything stays stream-ordered and
 * graph-capturable (NCCL collectives are); no host sync. */
#define TG_REDUCE_DELAYED 1u
#define TG_REDUCE_CURRENT 2u
#define TG_REDUCE_NVFP4 4u
#define TG_REDUCE_ALL 7u
/* tg_layer_set_comm attaches an NCCL communicator (ncclComm_t as void *; the caller owns it and
 * keeps it alive while the layer runs) and which amaxes it reduces (TG_REDUCE_* bits); NULL
 * detaches. TG_ERR_UNSUPPORTED, with what was looked for, when NCCL cannot be loaded. */
TgStatus tg_layer_set_comm(TgLayer *layer, void *nccl_comm, unsigned reduce);
/* For host programs without NCCL headers: tg_nccl_unique_id makes the 128-byte id rank 0
 * shares with the others (a file, a socket, MPI); tg_nccl_comm_create joins rank `rank` of
 * `nranks` on the calling thread's current device; tg_nccl_comm_destroy frees it. */
TgStatus tg_nccl_unique_id(unsigned char id[128]);
TgStatus tg_nccl_comm_create(int nranks, const unsigned char id[128], int rank, void **comm);
void tg_nccl_comm_destroy(void *comm);

/* tg_state exposes the recipe state buffer (device) and its layout. */
TgStatus tg_state(TgLayer *layer, void **dev, size_t *bytes, TgStateLayout *layout);
/* tg_tensor_ptr returns a device pointer to a tensor component after a run
 * ("data", "data_t", "scale", "scale_inv", "scale_inv_t", "amax"; a weight the optimizer
 * updates: "master", "m", "v") and its size in bytes. A columnwise copy ("data_t" of FP8, BF16, FP16 or FP32
 * elements, and an emulated GEMM's "deq_t") is [cols][pitch] with pitch = rows rounded up to 16 (every line
 * 16-byte aligned at any token count; the elements past rows are padding, not data); E2M1 lines stay
 * packed, ceil(rows/2) bytes. For reading: a quantized copy written
 * through it does not redo what the layer derived from it (an emulated GEMM's BF16 operand, which
 * the quantizing kernel writes beside it); bind the high-precision tensor instead. */
TgStatus tg_tensor_ptr(TgLayer *layer, const char *tensor, const char *component, void **dev, size_t *bytes);

/* What tg_layer_tensor_info tells about one tensor of a layer. */
enum { TG_TENSOR_INPUT = 1, TG_TENSOR_OUTPUT = 2, TG_TENSOR_WEIGHT = 4, TG_TENSOR_GRADIENT = 8 };
typedef struct TgTensorInfo {
	const char *name;        /* the spec's name (derived tensors: d_<name>, ...); lives as long as the layer */
	TgDtype dtype;           /* as stored; a bindable tensor (input or output) is bound with this type */
	int rank;
	long long shape[4];      /* at the `tokens` asked for; -1 for a dynamic dimension when tokens <= 0 */
	int flags;               /* TG_TENSOR_*: input (no producer: tg_run needs it bound), output, role weight or gradient */
} TgTensorInfo;
/* tg_layer_tensor_count is the number of tensors of the layer, the derived ones included. */
int tg_layer_tensor_count(const TgLayer *layer);
/* tg_layer_tensor_info describes tensor i (0 <= i < count), its shape at `tokens` tokens. */
TgStatus tg_layer_tensor_info(const TgLayer *layer, int i, long long tokens, TgTensorInfo *out);

/* Introspection for tools: kernels of the layer, and per-kernel timing. */
int tg_layer_kernel_count(const TgLayer *layer);
/* tg_layer_kernel_info describes kernel i: name, whether it was a cache hit, registers, spills. */
TgStatus tg_layer_kernel_info(const TgLayer *layer, int i, const char **name, int *cache_hit, int *regs, int *spills);
/* tg_run_timed is tg_run, then tg_backward where the layer has one, with a CUDA event before
 * each kernel and one after the last, nothing synchronized between them: ms[i] gets kernel i's
 * share of the run as it runs (its start to the next kernel's start: the kernel, the amax
 * clearing or reduction before the next, and any launch gap), 0 for a kernel that did not run;
 * the shares sum to the run's time. Synchronizes once at the end. */
TgStatus tg_run_timed(TgLayer *layer, TgStream stream, float *ms, int n);

/* Device memory for host programs that include no CUDA header. They act in the
 * calling thread's current CUDA context (the one tg_context_create found or made current). */
typedef enum TgCopy { TG_HOST_TO_DEVICE = 1, TG_DEVICE_TO_HOST, TG_DEVICE_TO_DEVICE } TgCopy;
/* tg_alloc allocates bytes (> 0) of device memory, 256-byte aligned; free it with tg_free. */
TgStatus tg_alloc(TgContext *ctx, size_t bytes, void **dev);
/* tg_free frees memory from tg_alloc; NULL is a no-op. */
void tg_free(TgContext *ctx, void *dev);
/* tg_memcpy copies bytes in the direction kind names; synchronous (ordered after work on the NULL stream). */
TgStatus tg_memcpy(TgContext *ctx, void *dst, const void *src, size_t bytes, TgCopy kind);

#ifdef __cplusplus
}
#endif
#endif
