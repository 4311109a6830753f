/* gemm.c: the cuBLASLt wrapper behind gemm.h.
 *
 * Mapping. tegen is row-major; cuBLASLt is column-major. A row-major [R][C]
 * buffer is the same memory as a column-major C x R matrix with ld = C. So the
 * row-major product D[M][N] = A[M][K] * B[N][K]^T is, column-major,
 *     D^T (N x M, ld N) = B^T(as stored: K x N, ld K)^T * A^T(as stored: K x M, ld K)
 * and we call cuBLASLt with
 *     cuBLAS A := our B, layout K x N, ld K, TRANSA = T   (A scale pointer := b_scale_inv)
 *     cuBLAS B := our A, layout K x M, ld K, TRANSB = N   (B scale pointer := a_scale_inv)
 *     cuBLAS C, D := our D, layout N x M, ld N
 *     cuBLAS (m, n, k) = (N, M, K)
 * which is the "TN" form Hopper FP8 (and cuBLASLt's FP4) requires. The bias
 * (length N = cuBLAS rows of D) broadcasts along our rows, as a linear layer wants. Block-scale tensors are
 * handed over unchanged: cuBLASLt's VEC128_32F layout for the K x rows operand is
 * "rows contiguous, one row of scales per 128-wide K block" = tegen's
 * [ceil(K/128)][rows], and its BLK128x128_32F layout is "K blocks contiguous per
 * 128-row block, row stride 16-byte aligned" = tegen's [ceil(rows/128)][ceil(K/128)]
 * when ceil(K/128) % 4 == 0. E2M1 (NVFP4) operands are packed two per byte with
 * the leading dimension in elements (K), like any other type.
 *
 * Scalars. alpha and beta come from the host, or (GemmArgs.alpha_ptr) from
 * device memory in cuBLASLt's pointer mode DEVICE: that is how a native NVFP4
 * GEMM gets alpha = 1/(S_enc_a*S_enc_b) when the S_enc are only on the GPU.
 *
 * Plans. Everything that does not change between calls (matmul descriptor,
 * four layouts, the chosen algorithm) is built once per key (GemmDesc fields,
 * whether amax is wanted, whether alpha/beta are device pointers, and the
 * alignment class of the pointers) and kept on a move-to-front list in the
 * GemmCtx. Pointer-valued attributes (scales, amax, bias) are set on the
 * cached descriptor on every call, under the context's mutex.
 *
 * Algorithms. The heuristic is asked once per plan for up to 32 candidates. On
 * the plan's first run a timed choice recorded on disk is reused; else, with
 * tuning on (the default) and the stream not capturing, every candidate that
 * passes cublasLtMatmulAlgoCheck is launched on the caller's inputs with a
 * scratch D and amax (one launch to load it, 3 warm-up, then the median of 10
 * between CUDA events; one whose warm-up is 1.5x slower than the best so far is
 * dropped early), the fastest is recorded on disk with its median, and the
 * caller's GEMM runs once with it. While capturing, or with tuning off, the
 * first candidate that checks and launches is taken, as tegen did before
 * tuning; a capture's choice is timed at the plan's next call outside capture.
 *
 * Missing: the timing runs see L2-warm operands (the caller's buffers, no
 * rotation), which flatters small GEMMs a little; no MXFP8/NVFP4 emulation
 * (GEMM_ENOTSUP, the caller dequantizes); no E2M1 output; no GELU-aux/backward
 * epilogues. */
#include "gemm.h"

#include "cold_time.h"

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <cublasLt.h>
#pragma GCC diagnostic pop

#define GEMM_CANDIDATES 32   /* heuristic candidates asked for; with tuning on, every usable one is timed */
#define GEMM_TUNE_WARMUP 3   /* warm-up launches per candidate (after one launch that loads its kernel) */
#define GEMM_TUNE_ITERS 10   /* timed launches per candidate; its time is their median */
#define GEMM_TUNE_SKIP 1.5   /* a candidate whose warm-up mean exceeds the best median so far by this factor is not timed further */

typedef struct GemmPlan {
	/* key */
	GemmDesc d;
	int want_amax;
	int dev_scalars;           /* alpha/beta are device pointers (CUBLASLT_POINTER_MODE_DEVICE) */
	int align;                 /* min alignment of the data pointers, bytes (16..256) */
	/* value */
	cublasLtMatmulDesc_t op;
	cublasLtMatrixLayout_t la, lb, lc, ld;
	cublasLtMatmulAlgo_t algo;
	size_t ws;
	int algo_index, algo_count;
	int chosen;                /* algo is fixed (a launch succeeded with it) */
	int timed;                 /* algo was chosen by timing (in this process, or a timed line on disk) */
	int tune_pending;          /* chosen untimed while the stream was capturing: time at the next call outside capture */
	int ntimed;                /* candidates timed */
	double best_us, first_us;  /* median of the winner and of the heuristic's first usable candidate (0: not known) */
	char note[160];            /* why the choice is untimed (for gemm_describe) */
	cublasLtMatmulHeuristicResult_t cand[GEMM_CANDIDATES];
	struct GemmPlan *next;
} GemmPlan;

struct GemmCtx {
	cublasLtHandle_t h;
	CUdeviceptr ws;
	size_t ws_bytes;
	int cc;                    /* major*10 + minor */
	pthread_mutex_t mu;
	GemmPlan *plans;
	int nplans;
	char algo_file[4096];      /* chosen algorithms on disk ("" = memory only) */
	int tune;                  /* time the candidates on first use (TEGEN_GEMM_TUNE=0 or gemm_ctx_set_tuning: off) */
};

int gemm_fail(char *err, size_t errlen, int code, const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return code;
}

static const char *lt_str(cublasStatus_t s)
{
	const char *m = cublasLtGetStatusString(s);
	return m ? m : "unknown cuBLAS status";
}

static int is_fp8(int t) { return t == DT_E4M3 || t == DT_E5M2; }
static int is_fp4(int t) { return t == DT_E2M1; }
/* FP8 or FP4: the inputs of scaled GEMMs, with FP8's bias and alignment rules */
static int is_narrow(int t) { return is_fp8(t) || is_fp4(t); }

static const char *dt_name(int t)
{
	switch (t) {
	case DT_F32: return "fp32";
	case DT_BF16: return "bf16";
	case DT_F16: return "fp16";
	case DT_E4M3: return "e4m3";
	case DT_E5M2: return "e5m2";
	case DT_E2M1: return "e2m1";
	default: return "unsupported";
	}
}

static int dt_size(int t)
{
	switch (t) {
	case DT_F32: return 4;
	case DT_BF16: case DT_F16: return 2;
	case DT_E4M3: case DT_E5M2: return 1;
	default: return 0;
	}
}

/* dt_size for D (bytes); inputs may also be E2M1 (half a byte), which only NVFP4 takes */
static int in_dtype_ok(int t) { return dt_size(t) || is_fp4(t); }

static cudaDataType_t dt_cuda(int t)
{
	switch (t) {
	case DT_F32: return CUDA_R_32F;
	case DT_BF16: return CUDA_R_16BF;
	case DT_F16: return CUDA_R_16F;
	case DT_E4M3: return CUDA_R_8F_E4M3;
	case DT_E2M1: return CUDA_R_4F_E2M1;
	default: return CUDA_R_8F_E5M2;
	}
}

int gemm_desc_bias_dtype(const GemmDesc *d) { return bias_dtype_for((DType)d->a_dtype, (DType)d->d_dtype); }

static const char *mode_name(int m)
{
	switch (m) {
	case GEMM_SCALE_NONE: return "none";
	case GEMM_SCALE_TENSOR: return "tensor";
	case GEMM_SCALE_BLOCK: return "block";
	case GEMM_SCALE_MXFP8: return "mxfp8";
	case GEMM_SCALE_NVFP4: return "nvfp4";
	default: return "?";
	}
}

/* The NVFP4 rules (E2M1 operands, E4M3 block scales VEC16_UE4M3). The arch rule
 * comes last, so a call that breaks a rule fails the same way on every GPU. */
static int check_nvfp4(const GemmCtx *g, const GemmDesc *d, char *err, size_t errlen)
{
	if (!is_fp4(d->a_dtype) || !is_fp4(d->b_dtype))
		return gemm_fail(err, errlen, GEMM_EINVAL, "gemm: NVFP4 needs A and B both e2m1 (A %s, B %s)",
			dt_name(d->a_dtype), dt_name(d->b_dtype));
	if (d->scale_mode != GEMM_SCALE_NVFP4)
		return gemm_fail(err, errlen, GEMM_EINVAL,
			"gemm: e2m1 inputs need scale_mode nvfp4 (E4M3 block scales, cuBLASLt VEC16_UE4M3), not %s",
			mode_name(d->scale_mode));
	if (d->k % 32)
		return gemm_fail(err, errlen, GEMM_EINVAL,
			"gemm: NVFP4 needs K %% 32 == 0 (16-byte row stride of packed e2m1, K/2 bytes; K = %d)", d->k);
	if (d->d_dtype != DT_BF16 && d->d_dtype != DT_F16 && d->d_dtype != DT_F32)
		return gemm_fail(err, errlen, GEMM_EINVAL,
			"gemm: NVFP4 GEMM here needs bf16, fp16 or fp32 output (D is %s; an e2m1 D needs an output block scale)",
			dt_name(d->d_dtype));
	int ds = dt_size(d->d_dtype);
	if ((long)d->n * ds % 16)
		return gemm_fail(err, errlen, GEMM_EINVAL,
			"gemm: NVFP4 needs D's row stride (N * %d bytes) to be a multiple of 16 bytes (N = %d)", ds, d->n);
	if (d->fast_accum)
		return gemm_fail(err, errlen, GEMM_EINVAL, "gemm: fast_accum applies to FP8 inputs only (NVFP4 has none)");
	if (d->a_block128x128 || d->b_block128x128)
		return gemm_fail(err, errlen, GEMM_EINVAL, "gemm: the 128x128 block flags apply to scale_mode block only");
	if (g && g->cc < 100)
		return gemm_fail(err, errlen, GEMM_ENOTSUP,
			"gemm: NVFP4 GEMM needs sm_100 or newer (this GPU is sm_%d); emulate it (dequantize to BF16, BF16 GEMM)", g->cc);
	return GEMM_OK;
}

int gemm_check(const GemmCtx *g, const GemmDesc *d, char *err, size_t errlen)
{
	if (!d) return gemm_fail(err, errlen, GEMM_EINVAL, "gemm: no descriptor");
	if (d->m < 1 || d->n < 1 || d->k < 1)
		return gemm_fail(err, errlen, GEMM_EINVAL, "gemm: M, N, K must be >= 1 (M = %d, N = %d, K = %d)", d->m, d->n, d->k);
	if (!in_dtype_ok(d->a_dtype) || !in_dtype_ok(d->b_dtype) || !dt_size(d->d_dtype))
		return gemm_fail(err, errlen, GEMM_EINVAL,
			"gemm: dtypes must be fp32, bf16, fp16, e4m3 or e5m2 (A and B also e2m1) (A %d, B %d, D %d)",
			d->a_dtype, d->b_dtype, d->d_dtype);
	if (d->scale_mode < GEMM_SCALE_NONE || d->scale_mode > GEMM_SCALE_NVFP4)
		return gemm_fail(err, errlen, GEMM_EINVAL, "gemm: unknown scale_mode %d", d->scale_mode);
	if (d->epilogue < GEMM_EPI_NONE || d->epilogue > GEMM_EPI_GELU_BIAS)
		return gemm_fail(err, errlen, GEMM_EINVAL, "gemm: unknown epilogue %d", d->epilogue);
	if ((d->a_trans || d->b_trans) && d->scale_mode != GEMM_SCALE_NONE)
		return gemm_fail(err, errlen, GEMM_EINVAL, "gemm: transposed operands are for high-precision GEMMs only (TN is "
			"the only FP8/FP4 form)");
	if ((d->lda && (d->a_trans || d->lda < d->k)) || (d->ldb && (d->b_trans || d->ldb < d->k)))
		return gemm_fail(err, errlen, GEMM_EINVAL, "gemm: a row stride (lda %d, ldb %d) must be >= K (%d) and not with a "
			"transposed operand", d->lda, d->ldb, d->k);
	if (is_fp4(d->a_dtype) || is_fp4(d->b_dtype) || d->scale_mode == GEMM_SCALE_NVFP4)
		return check_nvfp4(g, d, err, errlen);
	int fa = is_fp8(d->a_dtype), fb = is_fp8(d->b_dtype);
	if (fa != fb)
		return gemm_fail(err, errlen, GEMM_EINVAL, "gemm: A and B must both be FP8 or both high precision (A %s, B %s)",
			dt_name(d->a_dtype), dt_name(d->b_dtype));
	if (!fa) {
		if (d->a_dtype != d->b_dtype)
			return gemm_fail(err, errlen, GEMM_EINVAL, "gemm: high-precision A and B must have one dtype (A %s, B %s)",
				dt_name(d->a_dtype), dt_name(d->b_dtype));
		if (d->scale_mode != GEMM_SCALE_NONE)
			return gemm_fail(err, errlen, GEMM_EINVAL, "gemm: scale_mode %s needs FP8 inputs (A is %s)",
				mode_name(d->scale_mode), dt_name(d->a_dtype));
		if (is_fp8(d->d_dtype))
			return gemm_fail(err, errlen, GEMM_EINVAL, "gemm: FP8 output needs FP8 inputs (cuBLASLt rule)");
		if (d->fast_accum)
			return gemm_fail(err, errlen, GEMM_EINVAL, "gemm: fast_accum applies to FP8 inputs only");
		return GEMM_OK;
	}
	/* FP8 inputs */
	if (d->scale_mode == GEMM_SCALE_NONE)
		return gemm_fail(err, errlen, GEMM_EINVAL, "gemm: FP8 inputs need a scale_mode (tensor, block or mxfp8)");
	if (d->a_dtype == DT_E5M2 && d->b_dtype == DT_E5M2)
		return gemm_fail(err, errlen, GEMM_EINVAL, "gemm: cuBLASLt has no E5M2 x E5M2 GEMM (one operand must be E4M3)");
	if (g && g->cc < 89)
		return gemm_fail(err, errlen, GEMM_ENOTSUP, "gemm: FP8 GEMM needs sm_89 or newer (this GPU is sm_%d)", g->cc);
	if (d->k % 16)
		return gemm_fail(err, errlen, GEMM_EINVAL, "gemm: FP8 needs K %% 16 == 0 (K = %d)", d->k);
	if (d->lda % 16 || d->ldb % 16)
		return gemm_fail(err, errlen, GEMM_EINVAL, "gemm: FP8 needs 16-byte row strides (lda %d, ldb %d)", d->lda, d->ldb);
	int ds = dt_size(d->d_dtype);
	if ((long)d->n * ds % 16)
		return gemm_fail(err, errlen, GEMM_EINVAL,
			"gemm: FP8 needs D's row stride (N * %d bytes) to be a multiple of 16 bytes (N = %d)", ds, d->n);
	if (is_fp8(d->d_dtype) && d->accumulate)
		return gemm_fail(err, errlen, GEMM_EINVAL, "gemm: accumulate is not supported with FP8 output (cuBLASLt rule)");
	if (d->scale_mode == GEMM_SCALE_BLOCK) {
		if (d->a_block128x128 && d->b_block128x128)
			return gemm_fail(err, errlen, GEMM_EINVAL,
				"gemm: block scaling allows 1x128 x 1x128 or 1x128 x 128x128, not 128x128 on both operands");
		if (d->fast_accum)
			return gemm_fail(err, errlen, GEMM_EINVAL, "gemm: block scaling does not support fast_accum");
		if (is_fp8(d->d_dtype))
			return gemm_fail(err, errlen, GEMM_EINVAL, "gemm: block scaling needs bf16, fp16 or fp32 output (D is %s)",
				dt_name(d->d_dtype));
		int kb = (d->k + 127) / 128;
		if ((d->a_block128x128 || d->b_block128x128) && kb % 4)
			return gemm_fail(err, errlen, GEMM_EINVAL,
				"gemm: 128x128 block scales need ceil(K/128) %% 4 == 0 (16-byte scale row stride; K = %d gives %d)",
				d->k, kb);
		if (!d->a_block128x128 && d->m % 4)
			return gemm_fail(err, errlen, GEMM_EINVAL,
				"gemm: 1x128 block scales of A need M %% 4 == 0 (16-byte scale row stride; M = %d)", d->m);
		if (!d->b_block128x128 && d->n % 4)
			return gemm_fail(err, errlen, GEMM_EINVAL,
				"gemm: 1x128 block scales of B need N %% 4 == 0 (16-byte scale row stride; N = %d)", d->n);
		if (g && g->cc / 10 != 9)
			return gemm_fail(err, errlen, GEMM_ENOTSUP,
				"gemm: FP8 block-scaling GEMM is native on sm_90 only (this GPU is sm_%d); emulate it", g->cc);
	} else if (d->scale_mode == GEMM_SCALE_MXFP8) {
		if (d->k % 32)
			return gemm_fail(err, errlen, GEMM_EINVAL, "gemm: MXFP8 needs K %% 32 == 0 (K = %d)", d->k);
		if (is_fp8(d->d_dtype))
			return gemm_fail(err, errlen, GEMM_EINVAL, "gemm: MXFP8 GEMM here needs bf16, fp16 or fp32 output (D is %s)",
				dt_name(d->d_dtype));
		if (g && g->cc < 100)
			return gemm_fail(err, errlen, GEMM_ENOTSUP, "gemm: MXFP8 GEMM needs sm_100; runs emulated on sm_%d", g->cc);
	}
	return GEMM_OK;
}

static int ptr_align(const void *p)
{
	uintptr_t a = (uintptr_t)p;
	int al = 256;
	while (al > 1 && a % (uintptr_t)al) al /= 2;
	return al;
}

static int same_desc(const GemmDesc *x, const GemmDesc *y)
{
	return x->m == y->m && x->n == y->n && x->k == y->k && x->a_dtype == y->a_dtype && x->b_dtype == y->b_dtype &&
		x->d_dtype == y->d_dtype && x->scale_mode == y->scale_mode && x->a_block128x128 == y->a_block128x128 &&
		x->b_block128x128 == y->b_block128x128 && x->epilogue == y->epilogue &&
		!x->fast_accum == !y->fast_accum && !x->accumulate == !y->accumulate && !x->a_trans == !y->a_trans &&
		!x->b_trans == !y->b_trans;
}

static void gemm_plan_free(GemmPlan *p)
{
	if (!p) return;
	if (p->op) cublasLtMatmulDescDestroy(p->op);
	if (p->la) cublasLtMatrixLayoutDestroy(p->la);
	if (p->lb) cublasLtMatrixLayoutDestroy(p->lb);
	if (p->lc) cublasLtMatrixLayoutDestroy(p->lc);
	if (p->ld) cublasLtMatrixLayoutDestroy(p->ld);
	free(p);
}

#define LT(call, what) do { \
	cublasStatus_t st_ = (call); \
	if (st_ != CUBLAS_STATUS_SUCCESS) { \
		rc = gemm_fail(err, errlen, GEMM_ECUDA, "gemm: %s failed: %s", what, lt_str(st_)); \
		goto out; \
	} \
} while (0)

static int set_attr(cublasLtMatmulDesc_t op, cublasLtMatmulDescAttributes_t at, const void *v, size_t n,
	const char *what, char *err, size_t errlen)
{
	cublasStatus_t st = cublasLtMatmulDescSetAttribute(op, at, v, n);
	if (st != CUBLAS_STATUS_SUCCESS)
		return gemm_fail(err, errlen, GEMM_ECUDA, "gemm: setting %s failed: %s", what, lt_str(st));
	return GEMM_OK;
}

/* pointer-valued attributes, set on every call (the plan is shared) */
static int set_pointers(GemmPlan *p, const GemmArgs *a, char *err, size_t errlen)
{
	const GemmDesc *d = &p->d;
	int rc;
	if (d->scale_mode != GEMM_SCALE_NONE) {
		const void *as = a->b_scale_inv, *bs = a->a_scale_inv; /* cuBLAS A = our B */
		if ((rc = set_attr(p->op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &as, sizeof as, "A scale", err, errlen))) return rc;
		if ((rc = set_attr(p->op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &bs, sizeof bs, "B scale", err, errlen))) return rc;
	}
	if (is_fp8(d->d_dtype)) {
		const void *ds = a->d_scale;
		if ((rc = set_attr(p->op, CUBLASLT_MATMUL_DESC_D_SCALE_POINTER, &ds, sizeof ds, "D scale", err, errlen))) return rc;
	}
	if (p->want_amax) {
		void *am = a->d_amax;
		if ((rc = set_attr(p->op, CUBLASLT_MATMUL_DESC_AMAX_D_POINTER, &am, sizeof am, "amax D", err, errlen))) return rc;
	}
	if (d->epilogue == GEMM_EPI_BIAS || d->epilogue == GEMM_EPI_GELU_BIAS) {
		const void *b = a->bias;
		if ((rc = set_attr(p->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &b, sizeof b, "bias", err, errlen))) return rc;
	}
	return GEMM_OK;
}

static int gemm_plan_build(GemmCtx *g, GemmPlan *p, const GemmArgs *a, char *err, size_t errlen)
{
	const GemmDesc *d = &p->d;
	int rc = GEMM_OK;
	cublasLtMatmulPreference_t pref = NULL;
	cudaDataType_t ta = dt_cuda(d->b_dtype), tb = dt_cuda(d->a_dtype), td = dt_cuda(d->d_dtype);
	cudaDataType_t tc = is_fp8(d->d_dtype) ? dt_cuda(gemm_desc_bias_dtype(d)) : td;
	uint64_t M = (uint64_t)d->m, N = (uint64_t)d->n, K = (uint64_t)d->k;

	LT(cublasLtMatmulDescCreate(&p->op, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
	/* a transposed operand is already the column-major matrix cuBLAS wants: flip its op */
	int32_t opa = d->b_trans ? CUBLAS_OP_N : CUBLAS_OP_T, opb = d->a_trans ? CUBLAS_OP_T : CUBLAS_OP_N;
	if ((rc = set_attr(p->op, CUBLASLT_MATMUL_DESC_TRANSA, &opa, sizeof opa, "TRANSA", err, errlen))) goto out;
	if ((rc = set_attr(p->op, CUBLASLT_MATMUL_DESC_TRANSB, &opb, sizeof opb, "TRANSB", err, errlen))) goto out;
	if (p->dev_scalars) {
		int32_t pm = CUBLASLT_POINTER_MODE_DEVICE;
		if ((rc = set_attr(p->op, CUBLASLT_MATMUL_DESC_POINTER_MODE, &pm, sizeof pm, "POINTER_MODE", err, errlen))) goto out;
	}
	if (is_narrow(d->a_dtype)) {
		int8_t fast = d->fast_accum ? 1 : 0;
		if (is_fp8(d->a_dtype) &&
			(rc = set_attr(p->op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast, "FAST_ACCUM", err, errlen))) goto out;
		int32_t ma = CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F, mb = CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F;
		if (d->scale_mode == GEMM_SCALE_BLOCK) {
			ma = d->b_block128x128 ? CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F : CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
			mb = d->a_block128x128 ? CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F : CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
		} else if (d->scale_mode == GEMM_SCALE_MXFP8) {
			ma = mb = CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0;
		} else if (d->scale_mode == GEMM_SCALE_NVFP4) {
			ma = mb = CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3;
		}
		if (d->scale_mode != GEMM_SCALE_TENSOR) {
			if ((rc = set_attr(p->op, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &ma, sizeof ma, "A scale mode", err, errlen))) goto out;
			if ((rc = set_attr(p->op, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &mb, sizeof mb, "B scale mode", err, errlen))) goto out;
		}
	}
	uint32_t epi = CUBLASLT_EPILOGUE_DEFAULT;
	switch (d->epilogue) {
	case GEMM_EPI_BIAS: epi = CUBLASLT_EPILOGUE_BIAS; break;
	case GEMM_EPI_GELU: epi = CUBLASLT_EPILOGUE_GELU; break;
	case GEMM_EPI_GELU_BIAS: epi = CUBLASLT_EPILOGUE_GELU_BIAS; break;
	default: break;
	}
	if ((rc = set_attr(p->op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi, "EPILOGUE", err, errlen))) goto out;
	if (d->epilogue == GEMM_EPI_BIAS || d->epilogue == GEMM_EPI_GELU_BIAS) {
		int32_t bt = dt_cuda(gemm_desc_bias_dtype(d));
		if ((rc = set_attr(p->op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bt, sizeof bt, "BIAS_DATA_TYPE", err, errlen))) goto out;
	}
	if ((rc = set_pointers(p, a, err, errlen))) goto out;

	if (d->b_trans) /* our B stored [K][N]: column-major N x K, ld N */
		LT(cublasLtMatrixLayoutCreate(&p->la, ta, N, K, (int64_t)N), "layout A (our B, transposed)");
	else
		LT(cublasLtMatrixLayoutCreate(&p->la, ta, K, N, (d->ldb ? (int64_t)d->ldb : (int64_t)K)), "layout A (our B)");
	if (d->a_trans) /* our A stored [K][M]: column-major M x K, ld M */
		LT(cublasLtMatrixLayoutCreate(&p->lb, tb, M, K, (int64_t)M), "layout B (our A, transposed)");
	else
		LT(cublasLtMatrixLayoutCreate(&p->lb, tb, K, M, (d->lda ? (int64_t)d->lda : (int64_t)K)), "layout B (our A)");
	LT(cublasLtMatrixLayoutCreate(&p->lc, tc, N, M, (int64_t)N), "layout C");
	LT(cublasLtMatrixLayoutCreate(&p->ld, td, N, M, (int64_t)N), "layout D");

	LT(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
	LT(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &g->ws_bytes,
		sizeof g->ws_bytes), "workspace preference");
	uint32_t al = (uint32_t)p->align;
	LT(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &al, sizeof al), "alignment A");
	LT(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &al, sizeof al), "alignment B");
	LT(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &al, sizeof al), "alignment C");
	LT(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &al, sizeof al), "alignment D");

	int got = 0;
	cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(g->h, p->op, p->la, p->lb, p->lc, p->ld, pref,
		GEMM_CANDIDATES, p->cand, &got);
	if (st == CUBLAS_STATUS_NOT_SUPPORTED || (st == CUBLAS_STATUS_SUCCESS && got == 0)) {
		rc = GEMM_ENOALGO;
		if (d->scale_mode == GEMM_SCALE_BLOCK && g->cc / 10 != 9) rc = GEMM_ENOTSUP;
		gemm_fail(err, errlen, rc,
			"gemm: cuBLASLt has no algorithm for M=%d N=%d K=%d A=%s B=%s D=%s scale=%s%s%s epilogue=%d%s%s%s on sm_%d",
			d->m, d->n, d->k, dt_name(d->a_dtype), dt_name(d->b_dtype), dt_name(d->d_dtype), mode_name(d->scale_mode),
			d->scale_mode == GEMM_SCALE_BLOCK ? (d->a_block128x128 ? " (A 128x128" : " (A 1x128") : "",
			d->scale_mode == GEMM_SCALE_BLOCK ? (d->b_block128x128 ? ", B 128x128)" : ", B 1x128)") : "",
			d->epilogue, d->accumulate ? " accumulate" : "", p->want_amax ? " amax" : "",
			p->dev_scalars ? " device-alpha" : "", g->cc);
		goto out;
	}
	if (st != CUBLAS_STATUS_SUCCESS) {
		rc = gemm_fail(err, errlen, GEMM_ECUDA, "gemm: cublasLtMatmulAlgoGetHeuristic failed: %s", lt_str(st));
		goto out;
	}
	p->algo_count = got;
	p->algo_index = -1;
out:
	if (pref) cublasLtMatmulPreferenceDestroy(pref);
	return rc;
}

GemmCtx *gemm_ctx_create(size_t workspace_bytes, char *err, size_t errlen)
{
	char why[256];
	if (cudrv_load(why, sizeof why)) {
		gemm_fail(err, errlen, GEMM_ENOTSUP, "gemm: %s", why);
		return NULL;
	}
	CUcontext cur = NULL;
	CUdevice dev = 0;
	CUresult r = cu.cuCtxGetCurrent(&cur);
	if (r || !cur) {
		gemm_fail(err, errlen, GEMM_EINVAL, "gemm: no current CUDA context (make one current before gemm_ctx_create)");
		return NULL;
	}
	if ((r = cu.cuCtxGetDevice(&dev))) {
		gemm_fail(err, errlen, GEMM_ECUDA, "gemm: cuCtxGetDevice: %s", cudrv_errstr(r));
		return NULL;
	}
	GemmCtx *g = calloc(1, sizeof *g);
	if (!g) {
		gemm_fail(err, errlen, GEMM_ECUDA, "gemm: out of host memory");
		return NULL;
	}
	int maj = 0, min = 0;
	cu.cuDeviceGetAttribute(&maj, TG_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
	cu.cuDeviceGetAttribute(&min, TG_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
	g->cc = maj * 10 + min;
	g->ws_bytes = workspace_bytes ? workspace_bytes : (size_t)32 << 20;
	const char *tune = getenv("TEGEN_GEMM_TUNE");
	/* off by default until it has run on a GPU (see gemm.h); TEGEN_GEMM_TUNE=1 turns it on */
	g->tune = tune && (!strcmp(tune, "1") || !strcmp(tune, "on"));
	pthread_mutex_init(&g->mu, NULL);
	cublasStatus_t st = cublasLtCreate(&g->h);
	if (st != CUBLAS_STATUS_SUCCESS) {
		gemm_fail(err, errlen, GEMM_ECUDA, "gemm: cublasLtCreate failed: %s", lt_str(st));
		g->h = NULL;
		gemm_ctx_destroy(g);
		return NULL;
	}
	if ((r = cu.cuMemAlloc_v2(&g->ws, g->ws_bytes))) {
		gemm_fail(err, errlen, GEMM_ECUDA, "gemm: workspace of %zu bytes: %s", g->ws_bytes, cudrv_errstr(r));
		g->ws = 0;
		gemm_ctx_destroy(g);
		return NULL;
	}
	return g;
}

void gemm_ctx_destroy(GemmCtx *g)
{
	if (!g) return;
	for (GemmPlan *p = g->plans, *nx; p; p = nx) {
		nx = p->next;
		gemm_plan_free(p);
	}
	if (g->ws) cu.cuMemFree_v2(g->ws);
	if (g->h) cublasLtDestroy(g->h);
	pthread_mutex_destroy(&g->mu);
	free(g);
}

int gemm_ctx_cached(const GemmCtx *g)
{
	return g ? g->nplans : 0;
}

int gemm_ctx_arch(const GemmCtx *g)
{
	return g ? g->cc : 0;
}

int gemm_describe(GemmCtx *g, const GemmDesc *d, char *buf, size_t len)
{
	if (!g || !d) return -1;
	int rc = -1;
	pthread_mutex_lock(&g->mu);
	for (GemmPlan *p = g->plans; p; p = p->next) {
		if (!same_desc(&p->d, d) || !p->chosen) continue;
		int id = -1, tile = -1, stages = -1;
		size_t w = 0;
		cublasLtMatmulAlgoConfigGetAttribute(&p->algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, &w);
		cublasLtMatmulAlgoConfigGetAttribute(&p->algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile, &w);
		cublasLtMatmulAlgoConfigGetAttribute(&p->algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages, sizeof stages, &w);
		char which[256];
		if (p->algo_index == -2 && p->timed)
			snprintf(which, sizeof which, "recorded choice (disk, timed %.1f us)", p->best_us);
		else if (p->algo_index == -2)
			snprintf(which, sizeof which, "recorded choice (disk, untimed)");
		else if (p->timed)
			snprintf(which, sizeof which, "timed: candidate %d of %d, fastest of %d timed, %.1f us (heuristic first %.1f us)",
				p->algo_index, p->algo_count, p->ntimed, p->best_us, p->first_us);
		else
			snprintf(which, sizeof which, "candidate %d of %d, untimed (%s)", p->algo_index, p->algo_count, p->note);
		snprintf(buf, len, "%s (algo id %d, tile %d, stages %d), workspace %zu, align %d", which, id, tile, stages, p->ws,
			p->align);
		rc = 0;
		break;
	}
	pthread_mutex_unlock(&g->mu);
	return rc;
}

/* alpha_ptr and beta_ptr: both or neither, each an aligned device float */
static int check_scalars(const GemmArgs *a, char *err, size_t errlen)
{
	if (!a->alpha_ptr != !a->beta_ptr)
		return gemm_fail(err, errlen, GEMM_EINVAL, "gemm: alpha_ptr and beta_ptr go together (device pointer mode reads both)");
	if (a->alpha_ptr && (ptr_align(a->alpha_ptr) < 4 || ptr_align(a->beta_ptr) < 4))
		return gemm_fail(err, errlen, GEMM_EINVAL, "gemm: alpha_ptr and beta_ptr must be 4-byte aligned device floats");
	return GEMM_OK;
}

/* the per-call arguments against the descriptor: pointers present, aligned, consistent */
static int check_args(const GemmDesc *d, const GemmArgs *a, char *err, size_t errlen)
{
	if (!a) return gemm_fail(err, errlen, GEMM_EINVAL, "gemm: no arguments");
	if (!a->a || !a->b || !a->d) return gemm_fail(err, errlen, GEMM_EINVAL, "gemm: A, B and D pointers are required");
	int bias = d->epilogue == GEMM_EPI_BIAS || d->epilogue == GEMM_EPI_GELU_BIAS;
	if (bias && !a->bias) return gemm_fail(err, errlen, GEMM_EINVAL, "gemm: the bias epilogue needs a bias pointer");
	if (!bias && a->bias) return gemm_fail(err, errlen, GEMM_EINVAL, "gemm: bias given but the epilogue has no bias");
	if (a->c && !d->accumulate) return gemm_fail(err, errlen, GEMM_EINVAL, "gemm: C given without accumulate");
	if (d->scale_mode == GEMM_SCALE_NONE) {
		if (a->a_scale_inv || a->b_scale_inv)
			return gemm_fail(err, errlen, GEMM_EINVAL, "gemm: scale_inv pointers given for a GEMM without scaling");
	} else if (!a->a_scale_inv || !a->b_scale_inv) {
		return gemm_fail(err, errlen, GEMM_EINVAL, "gemm: scale_mode %s needs a_scale_inv and b_scale_inv",
			mode_name(d->scale_mode));
	}
	if (is_fp8(d->d_dtype) && !a->d_scale)
		return gemm_fail(err, errlen, GEMM_EINVAL, "gemm: FP8 output needs d_scale");
	if (a->d_scale && !is_fp8(d->d_dtype))
		return gemm_fail(err, errlen, GEMM_EINVAL, "gemm: d_scale given but D is %s (not FP8)", dt_name(d->d_dtype));
	if (a->d_amax && !is_fp8(d->a_dtype))
		return gemm_fail(err, errlen, GEMM_EINVAL, "gemm: d_amax needs an FP8 GEMM");
	if (is_narrow(d->a_dtype)) {
		const void *ps[] = {a->a, a->b, a->d, a->bias, a->c};
		const char *nm[] = {"A", "B", "D", "bias", "C"};
		for (int i = 0; i < 5; i++)
			if (ps[i] && ptr_align(ps[i]) < 16)
				return gemm_fail(err, errlen, GEMM_EINVAL, "gemm: %s needs 16-byte aligned pointers (%s = %p)",
					is_fp4(d->a_dtype) ? "NVFP4" : "FP8", nm[i], ps[i]);
	}
	if ((d->scale_mode == GEMM_SCALE_BLOCK || d->scale_mode == GEMM_SCALE_NVFP4) &&
		(ptr_align(a->a_scale_inv) < 16 || ptr_align(a->b_scale_inv) < 16))
		return gemm_fail(err, errlen, GEMM_EINVAL, "gemm: %s scale arrays must be 16-byte aligned", mode_name(d->scale_mode));
	return check_scalars(a, err, errlen);
}

/* ---- the chosen algorithm on disk, one line per configuration ----
 *   KEY<TAB>HEX                          untimed: the heuristic's first usable candidate
 *   KEY<TAB>HEX<TAB>timed US us, ...     timed: the fastest candidate, its median in microseconds
 * (older tegen wrote only the first form and skips the second). */
void gemm_ctx_set_algo_file(GemmCtx *g, const char *path)
{
	snprintf(g->algo_file, sizeof g->algo_file, "%s", path ? path : "");
}

void gemm_ctx_set_tuning(GemmCtx *g, int on)
{
	pthread_mutex_lock(&g->mu);
	g->tune = !!on;
	pthread_mutex_unlock(&g->mu);
}

static void algo_key(const GemmCtx *g, const GemmPlan *p, char *key, size_t n)
{
	const GemmDesc *d = &p->d;
	/* s%d is the scale mode (NVFP4: 4); " dptr" only with device alpha/beta and " trAB" only with a
	 * transposed operand, so older lines keep matching */
	char ld[48] = ""; /* " ld" only with a row stride other than K, so older lines keep matching */
	if (d->lda || d->ldb)
		snprintf(ld, sizeof ld, " ld%d,%d", d->lda, d->ldb);
	snprintf(key, n, "sm%d lt%zu m%d n%d k%d a%d b%d d%d s%d blk%d%d e%d f%d acc%d amax%d al%d%s%s%s", g->cc,
		(size_t)cublasLtGetVersion(), d->m, d->n, d->k, d->a_dtype, d->b_dtype, d->d_dtype, d->scale_mode,
		d->a_block128x128, d->b_block128x128, d->epilogue, d->fast_accum, d->accumulate, p->want_amax, p->align,
		p->dev_scalars ? " dptr" : "", d->a_trans || d->b_trans ? (d->a_trans ? (d->b_trans ? " tr11" : " tr10") : " tr01") : "",
		ld);
}

enum { ALGO_NONE, ALGO_UNTIMED, ALGO_TIMED };

/* The recorded algorithm for key: the last timed line, else the last untimed one
 * (ALGO_*; *us = the timed median). A malformed or foreign line is skipped;
 * cublasLtMatmulAlgoCheck still vets what is found. */
static int algo_load(const GemmCtx *g, const char *key, cublasLtMatmulAlgo_t *algo, double *us)
{
	FILE *f = g->algo_file[0] ? fopen(g->algo_file, "r") : NULL;
	if (!f)
		return ALGO_NONE;
	char line[1024];
	size_t kl = strlen(key);
	int found = ALGO_NONE;
	while (fgets(line, sizeof line, f)) {
		if (strncmp(line, key, kl) || line[kl] != '\t')
			continue;
		const char *h = line + kl + 1;
		unsigned char b[sizeof *algo];
		size_t i = 0;
		for (; i < sizeof b && sscanf(h + 2 * i, "%2hhx", &b[i]) == 1; i++)
			;
		if (i != sizeof b)
			continue;
		const char *rest = h + 2 * i;
		double t = 0;
		int kind;
		if (*rest == '\n' || *rest == 0)
			kind = ALGO_UNTIMED;
		else if (!strncmp(rest, "\ttimed ", 7) && sscanf(rest + 7, "%lf", &t) == 1 && t > 0)
			kind = ALGO_TIMED;
		else
			continue;
		if (kind >= found) {
			memcpy(algo, b, sizeof b);
			*us = t;
			found = kind;
		}
	}
	fclose(f);
	return found;
}

/* Appends p's choice for key (with its timing when p->timed). */
static void algo_store(const GemmCtx *g, const char *key, const GemmPlan *p)
{
	if (!g->algo_file[0])
		return;
	char line[1024];
	int n = snprintf(line, sizeof line, "%s\t", key);
	const unsigned char *b = (const unsigned char *)&p->algo;
	for (size_t i = 0; i < sizeof p->algo && n < (int)sizeof line - 3; i++)
		n += snprintf(line + n, sizeof line - (size_t)n, "%02x", b[i]);
	if (p->timed && n < (int)sizeof line - 1)
		n += snprintf(line + n, sizeof line - (size_t)n, "\ttimed %.3f us, candidate %d of %d (%d timed), heuristic first %.3f us",
			p->best_us, p->algo_index, p->algo_count, p->ntimed, p->first_us);
	if (n > (int)sizeof line - 2)
		return; /* cannot happen with today's key and algo sizes; never write a cut line */
	line[n++] = '\n';
	int fd = open(g->algo_file, O_WRONLY | O_APPEND | O_CREAT, 0644); /* one write: lines never interleave */
	if (fd >= 0) {
		if (write(fd, line, (size_t)n) != n) { /* a lost line only costs a heuristic query (or a tuning) next time */
		}
		close(fd);
	}
}

/* The scalars and C of one call. Host mode: alpha, and beta only with accumulate
 * (C = D then, or the caller's C, else no C). Device mode: the pointers, and C = D (or the caller's C) always, because
 * beta is only known on the GPU (BLAS semantics: C is not read where beta is 0;
 * TE's NVFP4 GEMM passes C = D with a device beta of 0 the same way). */
typedef struct Scalars { float alpha, beta; const void *pa, *pb, *c; } Scalars;

static void scalars_init(Scalars *sc, const GemmDesc *d, const GemmArgs *a)
{
	sc->alpha = a->alpha;
	sc->beta = d->accumulate ? a->beta : 0.0f;
	sc->pa = a->alpha_ptr ? (const void *)a->alpha_ptr : (const void *)&sc->alpha;
	sc->pb = a->beta_ptr ? (const void *)a->beta_ptr : (const void *)&sc->beta;
	sc->c = d->accumulate || a->alpha_ptr ? (a->c ? a->c : a->d) : NULL;
}

/* One cublasLtMatmul of plan p with algorithm algo (cuBLAS A := our B, see the top). */
static cublasStatus_t matmul(GemmCtx *g, const GemmPlan *p, const cublasLtMatmulAlgo_t *algo, const GemmArgs *a,
	const Scalars *sc, cudaStream_t s)
{
	return cublasLtMatmul(g->h, p->op, sc->pa, a->b, p->la, a->a, p->lb, sc->pb, sc->c, p->lc, a->d, p->ld, algo,
		(void *)(uintptr_t)g->ws, g->ws_bytes, s);
}

/* Candidate i's cublasLtMatmulAlgoCheck and workspace need (*ws); CUBLAS_STATUS_SUCCESS when it may be launched. */
static cublasStatus_t cand_check(GemmCtx *g, const GemmPlan *p, int i, size_t *ws)
{
	if (p->cand[i].state != CUBLAS_STATUS_SUCCESS)
		return CUBLAS_STATUS_NOT_SUPPORTED;
	cublasLtMatmulHeuristicResult_t chk;
	memset(&chk, 0, sizeof chk);
	cublasStatus_t st = cublasLtMatmulAlgoCheck(g->h, p->op, p->la, p->lb, p->lc, p->ld, &p->cand[i].algo, &chk);
	if (st != CUBLAS_STATUS_SUCCESS)
		return st;
	*ws = chk.workspaceSize > p->cand[i].workspaceSize ? chk.workspaceSize : p->cand[i].workspaceSize;
	return *ws > g->ws_bytes ? CUBLAS_STATUS_NOT_SUPPORTED : CUBLAS_STATUS_SUCCESS;
}

/* 1 when s is capturing into a graph, or when that cannot be asked (then never time) */
static int stream_capturing(CUstream s)
{
	int status = TG_CU_STREAM_CAPTURE_STATUS_NONE;
	return cu.cuStreamIsCapturing(s, &status) != 0 || status != TG_CU_STREAM_CAPTURE_STATUS_NONE;
}

enum { TIME_NOLAUNCH = -1, TIME_CUDA = -2 };
enum { TUNE_UNTIMED = 1 }; /* tune_plan: nothing could be timed (p unchanged) */

/* Times algorithm algo of p on the (scratch) arguments t: one launch that loads
 * its kernel, GEMM_TUNE_WARMUP warm-up launches (their mean is returned at once
 * when above skip_us > 0), then the median of GEMM_TUNE_ITERS back-to-back
 * launches between events ev[0..GEMM_TUNE_ITERS], in microseconds. TIME_NOLAUNCH
 * when cuBLASLt refuses it (it returns before launching), TIME_CUDA (why set)
 * when a CUDA call fails. */
static double time_algo(GemmCtx *g, const GemmPlan *p, const cublasLtMatmulAlgo_t *algo, const GemmArgs *t,
	const Scalars *sc, CUstream s, CUevent *ev, double skip_us, char *why, size_t whylen)
{
	cudaStream_t cs = (cudaStream_t)s;
	float ms[GEMM_TUNE_ITERS];
	CUresult r;
	if (matmul(g, p, algo, t, sc, cs) != CUBLAS_STATUS_SUCCESS)
		return TIME_NOLAUNCH;
	if ((r = cu.cuEventRecord(ev[0], s)))
		goto cuda;
	for (int i = 0; i < GEMM_TUNE_WARMUP; i++)
		if (matmul(g, p, algo, t, sc, cs) != CUBLAS_STATUS_SUCCESS)
			return TIME_NOLAUNCH;
	if ((r = cu.cuEventRecord(ev[1], s)) || (r = cu.cuEventSynchronize(ev[1])) ||
		(r = cu.cuEventElapsedTime(&ms[0], ev[0], ev[1])))
		goto cuda;
	double warm_us = 1e3 * ms[0] / GEMM_TUNE_WARMUP;
	if (skip_us > 0 && warm_us > skip_us)
		return warm_us;
	if ((r = cu.cuEventRecord(ev[0], s)))
		goto cuda;
	for (int i = 0; i < GEMM_TUNE_ITERS; i++) {
		if (matmul(g, p, algo, t, sc, cs) != CUBLAS_STATUS_SUCCESS)
			return TIME_NOLAUNCH;
		if ((r = cu.cuEventRecord(ev[i + 1], s)))
			goto cuda;
	}
	if ((r = cu.cuEventSynchronize(ev[GEMM_TUNE_ITERS])))
		goto cuda;
	for (int i = 0; i < GEMM_TUNE_ITERS; i++)
		if ((r = cu.cuEventElapsedTime(&ms[i], ev[i], ev[i + 1])))
			goto cuda;
	return 1e3 * timing_median(ms, GEMM_TUNE_ITERS);
cuda:
	gemm_fail(why, whylen, GEMM_ECUDA, "timing: %s", cudrv_errstr(r));
	return TIME_CUDA;
}

/* Times every usable candidate of p on s (not capturing) with the caller's
 * inputs but a scratch D and amax, so the caller's output is never written
 * (a C the GEMM reads starts as a copy of the caller's D); the fastest becomes
 * p's algorithm (p->chosen, p->timed). 0, or TUNE_UNTIMED with why when nothing
 * could be timed (p unchanged). p's pointer attributes are set back to a before it
 * returns; GEMM_ECUDA (err) if that fails, since the caller must not launch then. */
static int tune_plan(GemmCtx *g, GemmPlan *p, const GemmArgs *a, const Scalars *sc, CUstream s, char *why,
	size_t whylen, char *err, size_t errlen)
{
	const GemmDesc *d = &p->d;
	size_t dbytes = (size_t)d->m * (size_t)d->n * (size_t)dt_size(d->d_dtype), dpad = (dbytes + 255) & ~(size_t)255;
	CUdeviceptr scratch = 0;
	CUevent ev[GEMM_TUNE_ITERS + 1];
	int nev = 0, rc = TUNE_UNTIMED, best = -1, ntimed = 0;
	double best_us = 0, first_us = 0;
	size_t best_ws = 0;
	CUresult r;
	if ((r = cu.cuMemAlloc_v2(&scratch, dpad + 256))) {
		scratch = 0;
		gemm_fail(why, whylen, TUNE_UNTIMED, "no scratch D of %zu bytes: %s", dpad + 256, cudrv_errstr(r));
		goto out;
	}
	for (; nev <= GEMM_TUNE_ITERS; nev++)
		if ((r = cu.cuEventCreate(&ev[nev], 0))) {
			gemm_fail(why, whylen, TUNE_UNTIMED, "cuEventCreate: %s", cudrv_errstr(r));
			goto out;
		}
	GemmArgs t = *a;
	t.d = (void *)(uintptr_t)scratch;
	if (p->want_amax)
		t.d_amax = (float *)(uintptr_t)(scratch + dpad);
	Scalars ts = *sc;
	if (sc->c && !a->c) { /* C is D: a copy of it in the scratch D, which each timed candidate overwrites */
		ts.c = t.d;
		if ((r = cu.cuMemcpyDtoDAsync_v2(scratch, (CUdeviceptr)(uintptr_t)a->d, dbytes, s))) {
			gemm_fail(why, whylen, TUNE_UNTIMED, "copying D to the scratch C: %s", cudrv_errstr(r));
			goto out;
		}
	}
	if (set_pointers(p, &t, why, whylen))
		goto out;
	for (int i = 0; i < p->algo_count; i++) {
		size_t ws = 0;
		if (cand_check(g, p, i, &ws) != CUBLAS_STATUS_SUCCESS)
			continue;
		double us = time_algo(g, p, &p->cand[i].algo, &t, &ts, s, ev, best >= 0 ? GEMM_TUNE_SKIP * best_us : 0, why,
			whylen);
		if (us == TIME_CUDA)
			goto out;
		if (us < 0)
			continue;
		if (best < 0)
			first_us = us; /* the first usable candidate: what an untimed choice takes */
		ntimed++;
		if (best < 0 || us < best_us) {
			best = i;
			best_us = us;
			best_ws = ws;
		}
	}
	if (best < 0) {
		gemm_fail(why, whylen, TUNE_UNTIMED, "none of %d candidates launched", p->algo_count);
		goto out;
	}
	p->algo = p->cand[best].algo;
	p->ws = best_ws;
	p->algo_index = best;
	p->chosen = p->timed = 1;
	p->ntimed = ntimed;
	p->best_us = best_us;
	p->first_us = first_us;
	rc = 0;
out:
	if (scratch) {
		cu.cuStreamSynchronize(s); /* the timing launches are done with the scratch */
		cu.cuMemFree_v2(scratch);
	}
	for (int i = 0; i < nev; i++)
		cu.cuEventDestroy_v2(ev[i]);
	if (set_pointers(p, a, err, errlen))
		return GEMM_ECUDA;
	return rc;
}

/* The first candidate that checks and launches (the untimed choice): the
 * caller's GEMM runs with it. CUBLAS_STATUS_SUCCESS, or the last refusal. */
static cublasStatus_t first_usable(GemmCtx *g, GemmPlan *p, const GemmArgs *a, const Scalars *sc, CUstream s)
{
	cublasStatus_t last = CUBLAS_STATUS_NOT_SUPPORTED;
	for (int i = 0; i < p->algo_count; i++) {
		size_t ws = 0;
		if ((last = cand_check(g, p, i, &ws)) != CUBLAS_STATUS_SUCCESS)
			continue;
		/* a failing cublasLtMatmul returns before launching, so trying the next one is safe */
		last = matmul(g, p, &p->cand[i].algo, a, sc, (cudaStream_t)s);
		if (last == CUBLAS_STATUS_SUCCESS) {
			p->algo = p->cand[i].algo;
			p->ws = ws;
			p->algo_index = i;
			p->chosen = 1;
			return last;
		}
	}
	return last;
}

/* One cublasLtMatmul of the caller's GEMM with p's chosen algorithm. */
static int run_chosen(GemmCtx *g, const GemmPlan *p, const GemmArgs *a, const Scalars *sc, CUstream s, char *err,
	size_t errlen)
{
	cublasStatus_t st = matmul(g, p, &p->algo, a, sc, (cudaStream_t)s);
	if (st != CUBLAS_STATUS_SUCCESS)
		return gemm_fail(err, errlen, GEMM_ECUDA, "gemm: cublasLtMatmul failed: %s (M=%d N=%d K=%d)", lt_str(st),
			p->d.m, p->d.n, p->d.k);
	return GEMM_OK;
}

/* The first run of plan p, or the first outside capture after an untimed
 * choice made while capturing: a recorded choice from the disk (a timed one;
 * an untimed one only with tuning off), else the timed winner (tuning on, not
 * capturing; recorded), else the first usable candidate (recorded only with
 * tuning off). Runs the caller's GEMM once with the result. */
static int first_run(GemmCtx *g, GemmPlan *p, const GemmArgs *a, const Scalars *sc, CUstream s, char *err,
	size_t errlen)
{
	const GemmDesc *d = &p->d;
	char key[512];
	algo_key(g, p, key, sizeof key);
	if (!p->chosen) {
		cublasLtMatmulAlgo_t saved;
		double us = 0;
		int kind = algo_load(g, key, &saved, &us);
		if (kind == ALGO_TIMED || (kind == ALGO_UNTIMED && !g->tune)) {
			cublasLtMatmulHeuristicResult_t chk;
			memset(&chk, 0, sizeof chk);
			if (cublasLtMatmulAlgoCheck(g->h, p->op, p->la, p->lb, p->lc, p->ld, &saved, &chk) == CUBLAS_STATUS_SUCCESS &&
				chk.workspaceSize <= g->ws_bytes && matmul(g, p, &saved, a, sc, (cudaStream_t)s) == CUBLAS_STATUS_SUCCESS) {
				p->algo = saved;
				p->ws = chk.workspaceSize;
				p->algo_index = -2; /* from the disk */
				p->chosen = 1;
				p->timed = kind == ALGO_TIMED;
				p->best_us = us;
				return GEMM_OK;
			}
		}
	}
	p->tune_pending = 0;
	if (!g->tune) {
		snprintf(p->note, sizeof p->note, "tuning off");
	} else if (stream_capturing(s)) {
		snprintf(p->note, sizeof p->note, "stream capturing; timed at the next call outside capture");
		p->tune_pending = 1;
	} else {
		char why[128] = "";
		int rc = tune_plan(g, p, a, sc, s, why, sizeof why, err, errlen);
		if (rc == 0) {
			algo_store(g, key, p);
			return run_chosen(g, p, a, sc, s, err, errlen);
		}
		if (rc != TUNE_UNTIMED)
			return rc;
		snprintf(p->note, sizeof p->note, "not timed: %s", why); /* not recorded: a later process tries again */
	}
	if (p->chosen)
		return run_chosen(g, p, a, sc, s, err, errlen);
	cublasStatus_t last = first_usable(g, p, a, sc, s);
	if (!p->chosen)
		return gemm_fail(err, errlen, GEMM_ENOALGO,
			"gemm: none of %d cuBLASLt candidates ran for M=%d N=%d K=%d A=%s B=%s D=%s scale=%s (last: %s)",
			p->algo_count, d->m, d->n, d->k, dt_name(d->a_dtype), dt_name(d->b_dtype), dt_name(d->d_dtype),
			mode_name(d->scale_mode), lt_str(last));
	if (!g->tune)
		algo_store(g, key, p);
	return GEMM_OK;
}

int gemm_run_empty_k(const GemmDesc *d, const GemmArgs *a, CUstream stream, char *err, size_t errlen)
{
	if (d->k != 0 || d->m < 1 || d->n < 1)
		return gemm_fail(err, errlen, GEMM_EINVAL, "gemm: an empty sum needs K = 0 and M, N >= 1 (M = %d, N = %d, K = %d)",
			d->m, d->n, d->k);
	if (d->epilogue != GEMM_EPI_NONE || !dt_size(d->d_dtype))
		return gemm_fail(err, errlen, GEMM_ENOTSUP, "gemm: K = 0 (an empty sum) with a bias or GELU epilogue");
	size_t bytes = (size_t)d->m * (size_t)d->n * (size_t)dt_size(d->d_dtype);
	CUresult r = a->c && a->c != a->d ? cu.cuMemcpyDtoDAsync_v2((CUdeviceptr)(uintptr_t)a->d, (CUdeviceptr)(uintptr_t)a->c, bytes, stream)
		: d->accumulate ? (CUresult)0 : cu.cuMemsetD8Async((CUdeviceptr)(uintptr_t)a->d, 0, bytes, stream); /* 0 in every dtype */
	if (!r && a->d_amax) /* an FP8 D of zeros: amax 0 */
		r = cu.cuMemsetD32Async((CUdeviceptr)(uintptr_t)a->d_amax, 0, 1, stream);
	return r ? gemm_fail(err, errlen, GEMM_ECUDA, "gemm: K = 0: CUDA error %d writing D", (int)r) : GEMM_OK;
}

int gemm_run(GemmCtx *g, const GemmDesc *d, const GemmArgs *a, CUstream stream, char *err, size_t errlen)
{
	if (!g) return gemm_fail(err, errlen, GEMM_EINVAL, "gemm: no context");
	int rc = gemm_check(g, d, err, errlen);
	if (rc) return rc;
	if ((rc = check_args(d, a, err, errlen))) return rc;

	int align = 256;
	const void *ps[] = {a->a, a->b, a->d, a->bias, a->c};
	for (int i = 0; i < 5; i++)
		if (ps[i] && ptr_align(ps[i]) < align) align = ptr_align(ps[i]);
	int want_amax = a->d_amax != NULL, dev_scalars = a->alpha_ptr != NULL;
	Scalars sc;
	scalars_init(&sc, d, a);

	pthread_mutex_lock(&g->mu);
	GemmPlan *p = NULL, **pp = &g->plans;
	for (; *pp; pp = &(*pp)->next)
		if (same_desc(&(*pp)->d, d) && (*pp)->want_amax == want_amax && (*pp)->dev_scalars == dev_scalars &&
			(*pp)->align == align) {
			p = *pp;
			*pp = p->next;        /* unlink; re-inserted at the front below */
			break;
		}
	if (p) {
		if ((rc = set_pointers(p, a, err, errlen))) goto relink;
	} else {
		p = calloc(1, sizeof *p);
		if (!p) {
			rc = gemm_fail(err, errlen, GEMM_ECUDA, "gemm: out of host memory");
			goto unlock;
		}
		p->d = *d;
		p->d.fast_accum = !!d->fast_accum;
		p->d.accumulate = !!d->accumulate;
		p->want_amax = want_amax;
		p->dev_scalars = dev_scalars;
		p->align = align;
		if ((rc = gemm_plan_build(g, p, a, err, errlen))) {
			gemm_plan_free(p);
			goto unlock;
		}
		g->nplans++;
	}

	if (p->chosen && !(p->tune_pending && g->tune && !stream_capturing(stream)))
		rc = run_chosen(g, p, a, &sc, stream, err, errlen);
	else
		rc = first_run(g, p, a, &sc, stream, err, errlen);
relink:
	p->next = g->plans;
	g->plans = p;
unlock:
	pthread_mutex_unlock(&g->mu);
	return rc;
}
