/* gemm.h: linear-layer GEMMs through cuBLASLt (FP8 per-tensor, FP8 block
 * scaling, MXFP8 and NVFP4 on sm_100, BF16/FP16/FP32), with fused epilogues.
 *
 * Semantics, row-major like the rest of tegen ("TN", K contiguous in both inputs):
 *
 *     D[M][N] = alpha * (A[M][K] * B[N][K]^T) (+ bias[N]) (gelu) (+ beta * D)
 *
 * A and B are row-major with K contiguous (row stride K elements, or lda / ldb); D is row-major
 * [M][N] (row stride N). Dequantization is applied to A and B with their
 * scale_inv before the product. Use:
 *   fprop: A = X rowwise [tokens][in],      B = W rowwise [out][in],          K = in
 *   dgrad: A = dY rowwise [tokens][out],    B = W columnwise [in][out],       K = out
 *   wgrad: A = dY columnwise [out][tokens], B = X columnwise [in][tokens],    K = tokens
 *
 * Scale arguments (see templates/tg_kernel.h for the layouts):
 *   GEMM_SCALE_TENSOR: a_scale_inv / b_scale_inv point at one device float each.
 *   GEMM_SCALE_BLOCK:  an operand flagged block128x128 has float scale_inv
 *       [ceil(rows/128)][ceil(K/128)] row-major (rows = M for A, N for B), and
 *       cuBLASLt needs that row stride 16-byte aligned: ceil(K/128) % 4 == 0.
 *       A 1x128 operand has float scale_inv [ceil(K/128)][rows] (rows contiguous),
 *       and cuBLASLt needs rows % 4 == 0. At most one operand may be 128x128.
 *       Native on sm_90 (Hopper) only; elsewhere GEMM_ENOTSUP.
 *   GEMM_SCALE_MXFP8: E8M0 bytes in cuBLASLt's swizzled (128x4 tile) layout, made
 *       by the swizzle pass. Native on sm_100+; on older GPUs gemm_run returns
 *       GEMM_ENOTSUP so the caller can take the emulated (dequantize + BF16) path.
 *   GEMM_SCALE_NVFP4: A and B are E2M1 (DT_E2M1, cuBLASLt CUDA_R_4F_E2M1), two
 *       per byte, element 2k in the low nibble, row stride K/2 bytes; the scale
 *       pointers hold E4M3 bytes, one per 16 elements along K, in the same
 *       swizzled 128x4 layout (cuBLASLt VEC16_UE4M3). Rules: K % 32 == 0 (a
 *       16-byte row stride), D bf16, fp16 or fp32 (cuBLASLt's E2M1 output needs
 *       an output block scale, not offered here), no fast_accum (FP8 only),
 *       16-byte aligned A, B, D, bias and scales. The per-tensor scales are not
 *       applied: pass them in alpha (tegen: alpha = 1/(S_enc_a*S_enc_b), from
 *       the device, see alpha_ptr). Native on sm_100+; elsewhere GEMM_ENOTSUP
 *       (the caller dequantizes to BF16).
 *   GEMM_SCALE_NONE: BF16/FP16/FP32 inputs; scale pointers must be NULL.
 *   FP8 output (E4M3/E5M2): d_scale (device float, required) multiplies the result
 *       before the cast; d_amax (device float, optional) receives max|result| taken
 *       before d_scale is applied (cuBLASLt overwrites it; it does not max into it).
 *   bias: device vector [N]; BF16 when D is BF16, FP8 or FP32 with FP8 inputs;
 *       FP16 when D is FP16; for high-precision inputs the bias has D's dtype.
 *       E2M1 inputs take FP8's rule (assumed, not yet run on an sm_100).
 *   alpha, beta: host floats (beta used only with accumulate), or, with
 *       alpha_ptr set, device floats read when the GEMM runs (cuBLASLt pointer
 *       mode DEVICE; part of the plan key), so a scale computed on the GPU needs
 *       no host sync. beta_ptr is then required and is always applied, with
 *       C = D: *beta_ptr must be 0 unless accumulate (cuBLASLt skips C when the
 *       beta it reads is 0).
 *
 * Algorithm choice (tuning): the first gemm_run of a configuration (the plan key:
 * GemmDesc, amax wanted, device alpha/beta, pointer alignment) asks cuBLASLt's
 * heuristic for up to 32 candidates. With tuning on (default), it times each
 * one that passes cublasLtMatmulAlgoCheck on the call's own inputs (a few
 * warm-up launches, then the median of 10, CUDA events) writing a scratch D
 * and a scratch amax it allocates and frees, so the caller's D and d_amax are
 * only written by the one real GEMM that follows, with the fastest candidate.
 * That first call therefore allocates, synchronizes the stream and takes
 * roughly 30 x (1 + 3 + 10) GEMM times. A configuration seen first while the
 * stream is capturing a graph is never timed there: the heuristic's first usable
 * candidate is captured, and the timing happens at the configuration's next
 * call outside capture. With an algo file (gemm_ctx_set_algo_file) the winner
 * and its median are recorded and later processes reuse it without timing.
 * Tuning is off by default until it has run on a GPU (TEGEN_GEMM_TUNE=1 or
 * gemm_ctx_set_tuning(g, 1) turns it on). Off: the heuristic's
 * first usable candidate, untimed, as before. A later process with tuning on
 * re-times configurations that only have an untimed record.
 *
 * Threading: a GemmCtx owns one cuBLASLt handle and one workspace; gemm_run locks
 * it, so calls are safe from several threads, but calls on different streams
 * share the workspace: use one GemmCtx per concurrently running stream.
 * The context that is current at gemm_ctx_create must be current at gemm_run.
 * Nothing here prints. */
#ifndef TG_GEMM_H
#define TG_GEMM_H

#include <stddef.h>

#include "cudrv.h"
#include "gen.h"

enum { GEMM_SCALE_NONE, GEMM_SCALE_TENSOR, GEMM_SCALE_BLOCK, GEMM_SCALE_MXFP8, GEMM_SCALE_NVFP4 };
enum { GEMM_EPI_NONE, GEMM_EPI_BIAS, GEMM_EPI_GELU, GEMM_EPI_GELU_BIAS };

/* return codes of gemm_run (and gemm_ctx_create's err) */
enum {
	GEMM_OK = 0,
	GEMM_EINVAL = -1,   /* the call breaks a rule (message names it) */
	GEMM_ENOTSUP = -2,  /* not native on this GPU / library: take the emulated path */
	GEMM_ENOALGO = -3,  /* cuBLASLt found no algorithm for this combination */
	GEMM_ECUDA = -4,    /* cuBLASLt or CUDA call failed (message has the status) */
};

typedef struct GemmDesc {
	int m, n, k;
	int a_dtype, b_dtype, d_dtype;  /* DType from gen.h: DT_F32 DT_BF16 DT_F16 DT_E4M3 DT_E5M2 (DT_E2M1: A, B with NVFP4) */
	int scale_mode;                 /* GEMM_SCALE_* */
	int a_block128x128, b_block128x128; /* GEMM_SCALE_BLOCK: operand uses 128x128 blocks (else 1x128) */
	int epilogue;                   /* GEMM_EPI_* (GELU is cuBLASLt's tanh approximation) */
	int fast_accum;                 /* FP8 only: no periodic promotion of the accumulator */
	int accumulate;                 /* D = result + beta * D, or + beta * C with args.c (not with FP8 output) */
	int a_trans, b_trans;           /* GEMM_SCALE_NONE only: the operand is stored transposed, [K][M] / [K][N]
	                                 * (row stride M / N), e.g. a high-precision dgrad's W or wgrad's dY and X */
	int lda, ldb;                   /* the row stride of A [M][K] / B [N][K] in elements where it is not K (0: K):
	                                 * a columnwise copy's padded lines (gen/layout.h's layout_pitch); >= K, not
	                                 * with a_trans / b_trans */
} GemmDesc;

typedef struct GemmArgs {
	const void *a, *b;              /* device; see the layouts above */
	void *d;
	const void *bias;               /* device [N], with GEMM_EPI_*BIAS */
	const void *c;                  /* device [M][N] in D's type and layout, with accumulate: D = result + beta * C
	                                 * (NULL: C is D itself) */
	const float *a_scale_inv, *b_scale_inv; /* device; per-tensor: one float; block: arrays */
	const float *d_scale;           /* device float, FP8 output only */
	float *d_amax;                  /* device float or NULL, FP8 output only */
	float alpha, beta;              /* host values; beta used only with accumulate */
	const float *alpha_ptr, *beta_ptr; /* device floats instead of alpha, beta (both or neither) */
} GemmArgs;

typedef struct GemmCtx GemmCtx;

/* gemm_ctx_create makes a cuBLASLt handle and a workspace (0 bytes: 32 MiB) in the current CUDA context; NULL + err on failure. */
GemmCtx *gemm_ctx_create(size_t workspace_bytes, char *err, size_t errlen);
/* gemm_ctx_set_algo_file records each configuration's chosen algorithm (timed: with its median) in path and reuses it in later processes ("" or NULL: memory only). */
void gemm_ctx_set_algo_file(GemmCtx *g, const char *path);
/* gemm_ctx_set_tuning turns the timing of candidates on a configuration's first use on or off (default off
 * until it has run on a GPU; TEGEN_GEMM_TUNE=1 at gemm_ctx_create: on). */
void gemm_ctx_set_tuning(GemmCtx *g, int on);
/* gemm_ctx_destroy frees the cached plans, the workspace and the handle (NULL is fine). */
void gemm_ctx_destroy(GemmCtx *g);
/* gemm_run validates, finds (once per configuration, then cached) an algorithm and enqueues the GEMM on stream; GEMM_OK or a GEMM_E* code with a message in err. */
int gemm_run(GemmCtx *g, const GemmDesc *d, const GemmArgs *a, CUstream stream, char *err, size_t errlen);
/* gemm_desc_bias_dtype: the bias's DType for d (with GEMM_EPI_*BIAS): gen.h's bias_dtype_for d's A and D dtypes. */
int gemm_desc_bias_dtype(const GemmDesc *d);
/* gemm_run_empty_k is the GEMM with K = 0 (a wgrad over zero tokens): D = C where args.c is another buffer, D
 * unchanged with accumulate, else zeros (an FP8 D's amax 0); GEMM_ENOTSUP with a bias or GELU epilogue. */
int gemm_run_empty_k(const GemmDesc *d, const GemmArgs *a, CUstream stream, char *err, size_t errlen);
/* gemm_check validates a descriptor against the rules (no GPU work); GEMM_OK or GEMM_EINVAL/GEMM_ENOTSUP with a message. g may be NULL (device rules skipped). */
int gemm_check(const GemmCtx *g, const GemmDesc *d, char *err, size_t errlen);
/* gemm_ctx_cached returns how many configurations have a cached plan (for tests and stats). */
int gemm_ctx_cached(const GemmCtx *g);
/* gemm_ctx_arch returns the GPU's compute capability as major*10+minor (e.g. 90). */
int gemm_ctx_arch(const GemmCtx *g);
/* gemm_describe writes a short human description of the cached plan for d (how its algorithm was chosen: "timed: candidate 3 of 16, ...", "recorded choice (disk, ...)" or "candidate 0 of 16, untimed (why)"; algo id, tile, workspace); returns 0, or -1 if none cached. */
int gemm_describe(GemmCtx *g, const GemmDesc *d, char *buf, size_t len);
/* gemm_fail formats a message into err[errlen] (skipped when err is NULL or errlen 0) and returns code; bench.c uses it too. */
int gemm_fail(char *err, size_t errlen, int code, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif
