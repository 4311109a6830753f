/* test_gemm.c: correctness and speed of runtime/gemm.c (cuBLASLt) on a real GPU.
 *
 * First, on any machine, gemm_check's NVFP4 rules with no context (no GPU
 * needed): each rule's message, and a valid descriptor passing. Then, without
 * a GPU (cudrv_load fails) it prints "skip gemm: no GPU (reason)" and
 * exits 0. On a GPU it:
 *  1. checks small GEMMs against a CPU reference computed in double precision
 *     over the exactly dequantized inputs (the host quantizes with its own
 *     E4M3/E5M2/BF16 helpers below, so the reference sees the very values the
 *     GPU sees): BF16, FP8 per-tensor with scales != 1, E4M3 x E5M2, FP8 output
 *     with D scale and amax, bias, GELU+bias, accumulate (into D, or D = A x B + C from
 *     a separate C: gemm_cast add, padded shapes too), fast accumulation, FP8
 *     block scaling (1x128 x 128x128 and 1x128 x 1x128, pow2 scales), an odd
 *     shape, plan reuse with new scale values, and the validation errors;
 *     NVFP4 (E2M1 x E2M1, swizzled E4M3 block scales, alpha and beta from
 *     device pointers) natively on sm_100+; below sm_100 it checks that
 *     gemm_run returns GEMM_ENOTSUP and reports "skip", never "ok";
 *     The correctness cases run with algorithm timing on (gemm_ctx_set_tuning),
 *     and the accumulate cases would fail had the timing runs written the
 *     caller's D. Then the tuning itself: first use timed; first use inside a
 *     stream capture untimed (graph result checked) and timed at the next call
 *     outside; tuning off; the algo file (an untimed record re-timed, a timed
 *     one reused with tuning on and off, line counts checked);
 *  2. times Llama-3 8B shapes at 8192 tokens in BF16, FP8 (BF16 out), FP8 with
 *     E4M3 out + amax, and FP8 block scaling; median of 20 runs with CUDA events,
 *     operands rotated among several buffers so they do not sit in L2. Each
 *     GEMM is timed twice in the same run on the same buffers: with the
 *     heuristic's first candidate (a context with tuning off) and with the
 *     timed winner (tuning on); a second table puts them side by side.
 * Each check prints "ok NAME ..." or "FAIL NAME: detail"; exit status 1 on any
 * FAIL. A combination cuBLASLt does not offer on this GPU prints "skip NAME: ..."
 * where the wrapper's contract allows that (GELU epilogue, odd shapes).
 *
 * Error thresholds (relative Frobenius norm of GPU - reference over reference):
 *  - FP32 out, BF16 in: 1e-5 (FP32 accumulation, K <= 1024: ~sqrt(K) * 2^-24).
 *  - FP32 out, FP8 in: 5e-4. Hopper's FP8 tensor cores keep fewer accumulator
 *    bits than FP32 between cuBLASLt's promotions (~2^-13 relative), so a
 *    bit-level FP32 bound would be wrong; 5e-4 still catches any layout, scale
 *    or transpose mistake (those give errors of order 1).
 *  - fast accumulation: 5e-3 (no promotion at all).
 *  - BF16 out: add 4e-3 (rounding to BF16 is 2^-9 relative per element; RMS below).
 *  - E4M3 out: 0.08 (E4M3 rounding is 2^-4 relative per element, RMS ~0.036).
 *  - amax: relative 1e-3 against max|reference| (accumulation-order noise only). */
#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cudrv.h"
#include "gemm.h"
#include "gemm_gen.h"
#include "gemm_pad.h"
#include "gen.h"
#include "jit.h"
#include "tg_formats.h"

static int g_failed;
static int g_cc;

#define CK(call) do { \
	CUresult r_ = (call); \
	if (r_) { \
		printf("FAIL cuda: %s at %s:%d: %s\n", #call, __FILE__, __LINE__, cudrv_errstr(r_)); \
		exit(1); \
	} \
} while (0)

/* ---------- host numerics (self-contained) ---------- */

static float bits_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static uint32_t f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }

static float bf16_to_f32(uint16_t h) { return bits_f32((uint32_t)h << 16); }
static uint16_t f32_to_bf16(float f)
{
	uint32_t u = f32_bits(f);
	if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fc0;
	u += 0x7fffu + ((u >> 16) & 1u);
	return (uint16_t)(u >> 16);
}

static float e4m3_to_f32(uint8_t b)
{
	int s = b >> 7, e = (b >> 3) & 15, m = b & 7;
	float v;
	if (e == 15 && m == 7) return NAN;
	if (e == 0) v = ldexpf((float)m, -9);
	else v = ldexpf(1.0f + m / 8.0f, e - 7);
	return s ? -v : v;
}

static float e5m2_to_f32(uint8_t b)
{
	int s = b >> 7, e = (b >> 2) & 31, m = b & 3;
	float v;
	if (e == 31) return m ? NAN : (s ? -INFINITY : INFINITY);
	if (e == 0) v = ldexpf((float)m, -16);
	else v = ldexpf(1.0f + m / 4.0f, e - 15);
	return s ? -v : v;
}

/* round to nearest, ties to even code, saturating to the largest finite value */
static uint8_t f32_to_fp8(float x, int e5m2)
{
	int maxcode = e5m2 ? 0x7b : 0x7e;
	uint8_t sign = (x < 0 || (x == 0 && signbit(x))) ? 0x80 : 0;
	float a = fabsf(x);
	if (isnan(x)) return e5m2 ? 0x7f : 0x7f;
	int lo = 0, hi = maxcode;
	float (*dec)(uint8_t) = e5m2 ? e5m2_to_f32 : e4m3_to_f32;
	if (a >= dec((uint8_t)maxcode)) return sign | (uint8_t)maxcode;
	while (hi - lo > 1) {  /* positive codes are increasing in value */
		int mid = (lo + hi) / 2;
		if (dec((uint8_t)mid) <= a) lo = mid; else hi = mid;
	}
	float dl = a - dec((uint8_t)lo), dh = dec((uint8_t)hi) - a;
	int c = dl < dh ? lo : dh < dl ? hi : ((lo & 1) ? hi : lo);
	return sign | (uint8_t)c;
}

static float fp8_to_f32(uint8_t b, int dt) { return dt == DT_E5M2 ? e5m2_to_f32(b) : e4m3_to_f32(b); }

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rng_next(void)
{
	uint64_t x = rng_state;
	x ^= x << 13; x ^= x >> 7; x ^= x << 17;
	return rng_state = x;
}
static float rng_uniform(void) { return (float)((rng_next() >> 11) * (1.0 / 9007199254740992.0)) * 2.0f - 1.0f; }

static double gelu_tanh(double x)
{
	return 0.5 * x * (1.0 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

/* ---------- device helpers ---------- */

static CUdeviceptr dalloc(size_t n)
{
	CUdeviceptr p = 0;
	CK(cu.cuMemAlloc_v2(&p, n ? n : 16));
	return p;
}
static void h2d(CUdeviceptr d, const void *h, size_t n) { CK(cu.cuMemcpyHtoD_v2(d, h, n)); }
static void d2h(void *h, CUdeviceptr d, size_t n) { CK(cu.cuMemcpyDtoH_v2(h, d, n)); }
static void *P(CUdeviceptr d) { return (void *)(uintptr_t)d; }

static const char *dtn(int t)
{
	switch (t) {
	case DT_F32: return "fp32";
	case DT_BF16: return "bf16";
	case DT_F16: return "fp16";
	case DT_E4M3: return "e4m3";
	case DT_E5M2: return "e5m2";
	default: return "?";
	}
}
static int dts(int t) { return t == DT_F32 ? 4 : t == DT_BF16 || t == DT_F16 ? 2 : 1; }

/* ---------- operand quantization on the host ---------- */

/* One operand [rows][K]: device bytes, dequantized host copy, scale_inv (device). */
typedef struct Operand {
	CUdeviceptr data, sinv;
	float *deq;
	float *sinv_host;   /* per-tensor: [1]; block: the array as uploaded */
	size_t sinv_n;
} Operand;

/* mode: GEMM_SCALE_NONE (dt = bf16/fp32 only), TENSOR (scale s), BLOCK (blk128: 128x128 else 1x128) */
static Operand make_operand(int rows, int K, int dt, int mode, int blk128, float s, int magnitude_pattern)
{
	Operand o;
	memset(&o, 0, sizeof o);
	size_t n = (size_t)rows * K;
	float *x = malloc(n * sizeof *x);
	o.deq = malloc(n * sizeof *o.deq);
	for (int i = 0; i < rows; i++)
		for (int k = 0; k < K; k++) {
			float mag = 1.0f;
			if (magnitude_pattern) /* blocks of very different size, so wrong block scales show */
				mag = ldexpf(1.0f, ((i / 128) * 3 + (k / 128) * 5 + (i % 7)) % 9 - 4);
			x[(size_t)i * K + k] = rng_uniform() * mag;
		}
	int es = dts(dt);
	unsigned char *h = malloc(n * es);
	if (mode == GEMM_SCALE_NONE) {
		if (dt != DT_BF16 && dt != DT_F32) {
			fprintf(stderr, "make_operand: GEMM_SCALE_NONE operands are bf16 or fp32 here\n");
			exit(2);
		}
		for (size_t j = 0; j < n; j++) {
			if (dt == DT_BF16) {
				uint16_t b = f32_to_bf16(x[j]);
				memcpy(h + 2 * j, &b, 2);
				o.deq[j] = bf16_to_f32(b);
			} else {
				memcpy(h + 4 * j, &x[j], 4);
				o.deq[j] = x[j];
			}
		}
	} else if (mode == GEMM_SCALE_TENSOR) {
		float sinv = 1.0f / s;
		for (size_t j = 0; j < n; j++) {
			h[j] = f32_to_fp8(x[j] * s, dt == DT_E5M2);
			o.deq[j] = fp8_to_f32(h[j], dt) * sinv;
		}
		o.sinv_n = 1;
		o.sinv_host = malloc(sizeof(float));
		o.sinv_host[0] = sinv;
	} else { /* block, power-of-two scales, E4M3 max 448 */
		int kb = (K + 127) / 128, rb = (rows + 127) / 128;
		float fmax = dt == DT_E5M2 ? 57344.0f : 448.0f;
		if (blk128) {
			o.sinv_n = (size_t)rb * kb; /* [rb][kb] */
		} else {
			o.sinv_n = (size_t)kb * rows; /* [kb][rows] */
		}
		o.sinv_host = calloc(o.sinv_n, sizeof(float));
		for (int bi = 0; bi < (blk128 ? rb : rows); bi++)
			for (int bk = 0; bk < kb; bk++) {
				int r0 = blk128 ? bi * 128 : bi, r1 = blk128 ? (bi * 128 + 128 < rows ? bi * 128 + 128 : rows) : bi + 1;
				int k0 = bk * 128, k1 = k0 + 128 < K ? k0 + 128 : K;
				float amax = 0;
				for (int i = r0; i < r1; i++)
					for (int k = k0; k < k1; k++) {
						float a = fabsf(x[(size_t)i * K + k]);
						if (a > amax) amax = a;
					}
				float sc = amax > 0 ? ldexpf(1.0f, (int)floorf(log2f(fmax / amax))) : 1.0f;
				float si = 1.0f / sc; /* exact: power of two */
				if (blk128) o.sinv_host[(size_t)bi * kb + bk] = si;
				else o.sinv_host[(size_t)bk * rows + bi] = si;
				for (int i = r0; i < r1; i++)
					for (int k = k0; k < k1; k++) {
						size_t j = (size_t)i * K + k;
						h[j] = f32_to_fp8(x[j] * sc, dt == DT_E5M2);
						o.deq[j] = fp8_to_f32(h[j], dt) * si;
					}
			}
	}
	o.data = dalloc(n * es);
	h2d(o.data, h, n * es);
	if (o.sinv_n) {
		o.sinv = dalloc(o.sinv_n * sizeof(float));
		h2d(o.sinv, o.sinv_host, o.sinv_n * sizeof(float));
	}
	free(h);
	free(x);
	return o;
}

static void free_operand(Operand *o)
{
	if (o->data) cu.cuMemFree_v2(o->data);
	if (o->sinv) cu.cuMemFree_v2(o->sinv);
	free(o->deq);
	free(o->sinv_host);
	memset(o, 0, sizeof *o);
}

/* ---------- correctness cases ---------- */

typedef struct Case {
	const char *name;
	int m, n, k;
	int at, bt, dt;
	int mode, a128, b128;
	int epi, fast, acc, amax; /* acc: 1 D += A x B (C = D), 2 D = A x B + C from a separate C */
	float sa, sb, dscale, alpha, beta;
	double tol;
	int may_skip;    /* cuBLASLt may lack this combination: ENOALGO/ENOTSUP -> skip, not FAIL */
	const char *gen; /* a generated-GEMM variant ("n256s3", templates/gemm_fp8.cu) instead of cuBLASLt; sm_90 only */
} Case;

static void ok(const char *name, const char *detail) { printf("ok %s%s%s\n", name, detail ? "  " : "", detail ? detail : ""); }
static void bad(const char *name, const char *detail)
{
	printf("FAIL %s: %s\n", name, detail);
	g_failed = 1;
}

typedef struct Row { char name[96]; double err, tol; const char *status; } Row;
static Row g_rows[64];
static int g_nrows;
static void row(const char *name, double err, double tol, const char *st)
{
	if (g_nrows < 64) {
		snprintf(g_rows[g_nrows].name, sizeof g_rows[0].name, "%s", name);
		g_rows[g_nrows].err = err;
		g_rows[g_nrows].tol = tol;
		g_rows[g_nrows].status = st;
		g_nrows++;
	}
}

/* Source js compiled for sm_90a through NVRTC and the kernel cache (as a layer compiles), its module loaded and
 * function entry into *f; 0, or -1 with err (a compile error, or the driver's on loading). */
static JitCache *g_jit;
static int load_function(const JitSource *js, const char *entry, CUfunction *f, char *err, size_t errlen)
{
	char warn[256] = "";
	JitResult r;
	CUmodule m;
	*f = NULL;
	if (!g_jit && !(g_jit = jit_cache_open(NULL, 0, warn, sizeof warn))) {
		snprintf(err, errlen, "no NVRTC");
		return -1;
	}
	if (jit_compile(g_jit, js, "sm_90a", NULL, 0, &r, err, errlen))
		return -1;
	CUresult lr = cu.cuModuleLoadData(&m, r.cubin);
	if (!lr)
		lr = cu.cuModuleGetFunction(f, m, entry);
	if (lr) {
		snprintf(err, errlen, "loading %s failed: %s", entry, cudrv_errstr(lr));
		*f = NULL;
		return -1;
	}
	return 0;
}

/* The generated GEMM of variant v for operand dtypes at, bt and output dt, compiled through NVRTC
 * (emit_template + the kernel cache, as a layer does); NULL with err on failure. */
static CUfunction gen_function(const char *v, int at, int bt, int dt, int scale, GemmGenTile *t, char *err, size_t errlen)
{
	/* a suffix from 'g': the GLU epilogue (swiglu, E4M3 act); its letters: 'd' D written too, 't' D and act's
	 * columnwise copy (the 'gt' kernel is compiled with TG_ACT_T) */
	char tile[32];
	snprintf(tile, sizeof tile, "%s", v);
	char *suffix = strchr(tile, 'g');
	int glu = suffix != NULL, act_t = suffix && strchr(suffix, 't');
	if (suffix)
		*suffix = 0;
	if (gemm_gen_tile_parse(tile, t)) {
		snprintf(err, errlen, "bad variant %s", v);
		return NULL;
	}
	t->glu = glu;
	t->scale = scale;
	char bn[8], st[8], kind[32];
	snprintf(bn, sizeof bn, "%d", t->bn);
	snprintf(st, sizeof st, "%d", t->stages);
	snprintf(kind, sizeof kind, "\"%s.%s\"", dtn(at), dtn(bt));
	Slot slots[] = {{"TG_KERNEL", "tg_gemm_test"}, {"TG_BN", bn}, {"TG_STAGES", st}, {"TG_PROMOTE", t->promote ? "1" : "0"},
		{"TG_KIND", kind}, {"TG_OUT", dt == DT_F32 ? "2" : dt == DT_F16 ? "1" : "0"}, {"TG_EPI", glu ? "1" : "0"}, {"TG_ACT", "0"},
		{"TG_ALPHA", "0.0f"}, {"TG_LIMIT", "0.0f"}, {"TG_FMT", "0"}, {"TG_ACT_T", act_t ? "1" : "0"},
		{"TG_SCALE", scale == 2 ? "2" : scale == 1 ? "1" : "0"}, {"TG_H_F16", "0"}, {"TG_DH_ROW", "1"}};
	Arena *a = arena_new();
	Diag d;
	memset(&d, 0, sizeof d);
	char *src = emit_template(a, &d, "gemm_fp8.cu", slots, (int)(sizeof slots / sizeof slots[0]), "test_gemm", "generated GEMM test");
	CUfunction f = NULL;
	if (!src) {
		snprintf(err, errlen, "emit: %.400s", d.msg);
	} else {
		const char *const *hn, *const *ht;
		int nh = emit_headers(&hn, &ht);
		JitSource js = {"tg_gemm_test", src, "test_gemm_gen.cu", nh, hn, ht};
		if (!load_function(&js, "tg_gemm_test", &f, err, errlen)) {
			/* a variant whose ring does not fit (e.g. n128s6p with block scales) fails here */
			CUresult lr = cu.cuFuncSetAttribute(f, TG_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
				(int)gemm_gen_smem_bytes(t, dt));
			if (lr) {
				snprintf(err, errlen, "loading the generated GEMM failed: %s (%zu bytes of shared memory)", cudrv_errstr(lr),
					gemm_gen_smem_bytes(t, dt));
				f = NULL;
			}
		}
	}
	arena_free(a);
	return f;
}

/* gemm_pad.h's operand copy kernel, compiled once (NULL, the driver's copies, if it fails: the case says so). */
static CUfunction pad_copy_function(void)
{
	static CUfunction f;
	static int tried;
	if (tried)
		return f;
	tried = 1;
	char err[512] = "";
	JitSource js = {gemm_pad_copy_entry, gemm_pad_copy_src, "tegen_gemm_pad_copy.cu", 0, NULL, NULL};
	if (load_function(&js, gemm_pad_copy_entry, &f, err, sizeof err))
		printf("FAIL gemm_pad copy kernel: %s\n", err);
	return f;
}

static void run_case(GemmCtx *g, CUstream s, const Case *c)
{
	char msg[800], err[512];
	int M = c->m, N = c->n, K = c->k;
	int pattern = c->mode == GEMM_SCALE_BLOCK;
	Operand A = make_operand(M, K, c->at, c->mode, c->a128, c->sa, pattern);
	Operand B = make_operand(N, K, c->bt, c->mode, c->b128, c->sb, pattern);
	size_t nd = (size_t)M * N;
	int ds = dts(c->dt);
	CUdeviceptr D = dalloc(nd * ds), bias = 0, dsc = 0, amax = 0, C = 0;
	float *bias_h = NULL, *cinit = calloc(nd, sizeof(float));
	int has_bias = c->epi == GEMM_EPI_BIAS || c->epi == GEMM_EPI_GELU_BIAS;
	if (has_bias) {
		/* bias dtype per gemm.h: bf16 here (D is bf16/fp32/fp8 with FP8 inputs; D's dtype otherwise) */
		int bdt = (c->at == DT_E4M3 || c->at == DT_E5M2) ? DT_BF16 : c->dt;
		bias_h = malloc(N * sizeof(float));
		unsigned char *bb = malloc((size_t)N * 4);
		for (int j = 0; j < N; j++) {
			float v = rng_uniform() * 2.0f;
			if (bdt == DT_BF16) {
				uint16_t h = f32_to_bf16(v);
				memcpy(bb + 2 * j, &h, 2);
				v = bf16_to_f32(h);
			} else {
				memcpy(bb + 4 * j, &v, 4);
			}
			bias_h[j] = v;
		}
		bias = dalloc((size_t)N * dts(bdt));
		h2d(bias, bb, (size_t)N * dts(bdt));
		free(bb);
	}
	if (c->acc) { /* D starts as C */
		unsigned char *hc = malloc(nd * ds);
		for (size_t j = 0; j < nd; j++) {
			float v = rng_uniform() * 4.0f;
			if (c->dt == DT_BF16) {
				uint16_t h = f32_to_bf16(v);
				memcpy(hc + 2 * j, &h, 2);
				v = bf16_to_f32(h);
			} else {
				memcpy(hc + 4 * j, &v, 4);
			}
			cinit[j] = v;
		}
		if (c->acc == 2) { /* C apart, D garbage: every element of D is written from C */
			C = dalloc(nd * ds);
			h2d(C, hc, nd * ds);
			CK(cu.cuMemsetD8_v2(D, 0xff, nd * ds));
		} else {
			h2d(D, hc, nd * ds);
		}
		free(hc);
	} else {
		CK(cu.cuMemsetD8_v2(D, 0xff, nd * ds)); /* garbage, so unwritten elements show */
	}
	int fp8out = c->dt == DT_E4M3 || c->dt == DT_E5M2;
	if (fp8out) {
		dsc = dalloc(4);
		h2d(dsc, &c->dscale, 4);
	}
	if (c->amax) {
		amax = dalloc(4);
		float big = 1e30f; /* cuBLASLt overwrites; a max-into would keep this */
		h2d(amax, &big, 4);
	}
	GemmDesc d = {.m = M, .n = N, .k = K, .a_dtype = c->at, .b_dtype = c->bt, .d_dtype = c->dt,
		.scale_mode = c->mode, .a_block128x128 = c->a128, .b_block128x128 = c->b128, .epilogue = c->epi,
		.fast_accum = c->fast, .accumulate = c->acc};
	GemmArgs a = {.a = P(A.data), .b = P(B.data), .d = P(D), .bias = has_bias ? P(bias) : NULL,
		.a_scale_inv = A.sinv ? P(A.sinv) : NULL, .b_scale_inv = B.sinv ? P(B.sinv) : NULL,
		.d_scale = fp8out ? P(dsc) : NULL, .d_amax = c->amax ? P(amax) : NULL, .alpha = c->alpha, .beta = c->beta,
		.c = C ? P(C) : NULL};
	size_t padb = c->gen ? 0 : gemm_pad_bytes(&d); /* shapes cuBLASLt cannot take run on zero-padded copies */
	CUdeviceptr scratch = padb ? dalloc(padb) : 0;
	int rc;
	if (c->gen) {
		GemmGenTile t;
		CUfunction f = NULL;
		if (g_cc != 90) {
			printf("skip %s: the generated GEMM runs on sm_90 only (this GPU is sm_%d)\n", c->name, g_cc);
			row(c->name, NAN, c->tol, "skip");
			goto done;
		}
		rc = gemm_gen_check(&d, &a, err, sizeof err) ? GEMM_EINVAL : GEMM_OK;
		if (!rc && !(f = gen_function(c->gen, c->at, c->bt, c->dt, gemm_gen_scale_of(&d), &t, err, sizeof err)))
			rc = GEMM_ECUDA;
		if (!rc) {
			int sms = 0;
			CUdevice dev;
			cu.cuCtxGetDevice(&dev);
			cu.cuDeviceGetAttribute(&sms, TG_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
			rc = gemm_gen_launch(f, &t, c->m > 2000 ? sms : 8, &d, &a, NULL, s, err, sizeof err); /* few CTAs: many tiles each */
		}
	} else
		rc = gemm_run_padded(g, &d, &a, scratch, padb, strstr(c->name, "(driver copies)") ? NULL : pad_copy_function(), s,
			err, sizeof err);
	if (rc == GEMM_OK) {
		CUresult r = cu.cuStreamSynchronize(s);
		if (r) {
			snprintf(msg, sizeof msg, "stream sync after gemm: %s", cudrv_errstr(r));
			bad(c->name, msg);
			row(c->name, NAN, c->tol, "FAIL");
			goto done;
		}
	}
	if (rc != GEMM_OK) {
		int arch_skip = rc == GEMM_ENOTSUP && c->mode == GEMM_SCALE_BLOCK && g_cc / 10 != 9;
		if (arch_skip || (c->may_skip && (rc == GEMM_ENOALGO || rc == GEMM_ENOTSUP))) {
			printf("skip %s: %s\n", c->name, err);
			row(c->name, NAN, c->tol, "skip");
		} else {
			snprintf(msg, sizeof msg, "gemm_run returned %d: %s", rc, err);
			bad(c->name, msg);
			row(c->name, NAN, c->tol, "FAIL");
		}
		goto done;
	}
	/* reference */
	double *ref = malloc(nd * sizeof(double));
	double ramax = 0;
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++) {
			const float *ar = A.deq + (size_t)i * K, *br = B.deq + (size_t)j * K;
			double acc = 0;
			for (int k = 0; k < K; k++) acc += (double)ar[k] * br[k];
			double v = c->alpha * acc;
			if (has_bias) v += bias_h[j];
			if (c->epi == GEMM_EPI_GELU || c->epi == GEMM_EPI_GELU_BIAS) v = gelu_tanh(v);
			if (c->acc) v += (double)c->beta * cinit[(size_t)i * N + j];
			ref[(size_t)i * N + j] = v;
			if (fabs(v) > ramax) ramax = fabs(v);
		}
	unsigned char *hd = malloc(nd * ds);
	d2h(hd, D, nd * ds);
	double num = 0, den = 0, maxe = 0;
	for (size_t j = 0; j < nd; j++) {
		double gv;
		if (c->dt == DT_F32) { float f; memcpy(&f, hd + 4 * j, 4); gv = f; }
		else if (c->dt == DT_BF16) { uint16_t h; memcpy(&h, hd + 2 * j, 2); gv = bf16_to_f32(h); }
		else if (c->dt == DT_F16) { uint16_t h; memcpy(&h, hd + 2 * j, 2); gv = tg_f16_to_f32(h); }
		else gv = fp8_to_f32(hd[j], c->dt) / c->dscale;
		double e = gv - ref[j];
		if (!(fabs(e) <= maxe)) maxe = isnan(e) ? INFINITY : fabs(e);
		num += e * e;
		den += ref[j] * ref[j];
	}
	double rel = den > 0 ? sqrt(num / den) : sqrt(num);
	if (isnan(rel)) rel = INFINITY;
	char plan[160] = "";
	if (c->gen)
		snprintf(plan, sizeof plan, "generated %s", c->gen);
	else
		gemm_describe(g, &d, plan, sizeof plan);
	snprintf(msg, sizeof msg, "M=%d N=%d K=%d %sx%s->%s rel_fro=%.3e (tol %.1e) max_abs_err=%.3e max|ref|=%.3e [%s]",
		M, N, K, dtn(c->at), dtn(c->bt), dtn(c->dt), rel, c->tol, maxe, ramax, plan);
	if (rel <= c->tol) ok(c->name, msg); else bad(c->name, msg);
	row(c->name, rel, c->tol, rel <= c->tol ? "ok" : "FAIL");
	if (c->amax) {
		float ga;
		d2h(&ga, amax, 4);
		double re = fabs(ga - ramax) / (ramax > 0 ? ramax : 1);
		char an[96];
		snprintf(an, sizeof an, "%s amax", c->name);
		snprintf(msg, sizeof msg, "amax=%.6g reference max|D before d_scale|=%.6g rel=%.2e (tol 1e-3)%s", ga, ramax, re,
			ga >= 1e29f ? " -- looks like max-into, not overwrite" : "");
		if (re <= 1e-3) ok(an, msg); else bad(an, msg);
		row(an, re, 1e-3, re <= 1e-3 ? "ok" : "FAIL");
	}
	free(hd);
	free(ref);
done:
	free_operand(&A);
	free_operand(&B);
	cu.cuMemFree_v2(D);
	if (scratch) cu.cuMemFree_v2(scratch);
	if (bias) cu.cuMemFree_v2(bias);
	if (dsc) cu.cuMemFree_v2(dsc);
	if (amax) cu.cuMemFree_v2(amax);
	if (C) cu.cuMemFree_v2(C);
	free(bias_h);
	free(cinit);
}

/* The plan cache must re-set pointer attributes: same descriptor, new buffers and scales. */
static void plan_reuse(GemmCtx *g, CUstream s)
{
	const char *name = "plan reuse with new scales";
	int n0 = gemm_ctx_cached(g);
	Case c = {.name = "fp8 reuse first", .m = 64, .n = 128, .k = 256, .at = DT_E4M3, .bt = DT_E4M3, .dt = DT_F32,
		.mode = GEMM_SCALE_TENSOR, .sa = 3.0f, .sb = 100.0f, .alpha = 1, .tol = 5e-4};
	run_case(g, s, &c);
	int n1 = gemm_ctx_cached(g);
	c.name = "fp8 reuse second";
	c.sa = 0.37f;
	c.sb = 911.0f;
	run_case(g, s, &c);
	int n2 = gemm_ctx_cached(g);
	char msg[160];
	snprintf(msg, sizeof msg, "cached plans %d -> %d -> %d", n0, n1, n2);
	if (n2 == n1 && n1 >= n0) ok(name, msg); else bad(name, msg);
}

static void expect_err(GemmCtx *g, CUstream s, const char *name, GemmDesc d, int want, const char *substr)
{
	char err[512], msg[700];
	size_t big = (size_t)d.m * d.k + (size_t)d.n * d.k + (size_t)d.m * d.n * 4 + 4096;
	if (big > ((size_t)64 << 20)) big = (size_t)64 << 20;
	CUdeviceptr buf = dalloc(big);
	GemmArgs a = {.a = P(buf), .b = P(buf), .d = P(buf), .alpha = 1};
	if (d.scale_mode != GEMM_SCALE_NONE) {
		a.a_scale_inv = P(buf);
		a.b_scale_inv = P(buf);
	}
	if (d.d_dtype == DT_E4M3 || d.d_dtype == DT_E5M2) a.d_scale = P(buf);
	err[0] = 0;
	int rc = gemm_run(g, &d, &a, s, err, sizeof err);
	cu.cuStreamSynchronize(s);
	cu.cuMemFree_v2(buf);
	snprintf(msg, sizeof msg, "rc=%d (want %d) \"%s\"", rc, want, err);
	if (rc == want && strstr(err, substr)) ok(name, msg); else bad(name, msg);
}

/* ---------- NVFP4 ---------- */

/* gemm_check's NVFP4 rules with no context: each broken rule is GEMM_EINVAL with
 * a message naming it; runs without a GPU. */
static void nvfp4_rule(const char *name, GemmDesc d, int want, const char *substr)
{
	char err[512] = "", msg[700];
	int rc = gemm_check(NULL, &d, err, sizeof err);
	snprintf(msg, sizeof msg, "rc=%d (want %d) \"%s\"", rc, want, err);
	if (rc == want && strstr(err, substr)) ok(name, msg); else bad(name, msg);
}

static void nvfp4_rules(void)
{
	const GemmDesc v = {.m = 72, .n = 256, .k = 512, .a_dtype = DT_E2M1, .b_dtype = DT_E2M1, .d_dtype = DT_BF16,
		.scale_mode = GEMM_SCALE_NVFP4};
	GemmDesc d = v;
	nvfp4_rule("gemm_check nvfp4 valid bf16 out", d, GEMM_OK, "");
	d.d_dtype = DT_F32, d.accumulate = 1, d.epilogue = GEMM_EPI_BIAS;
	nvfp4_rule("gemm_check nvfp4 valid fp32 out, accumulate, bias", d, GEMM_OK, "");
	d = v, d.k = 48;
	nvfp4_rule("gemm_check nvfp4 K%32", d, GEMM_EINVAL, "K % 32 == 0 (16-byte row stride of packed e2m1, K/2 bytes; K = 48)");
	d = v, d.d_dtype = DT_E4M3;
	nvfp4_rule("gemm_check nvfp4 fp8 out", d, GEMM_EINVAL, "needs bf16, fp16 or fp32 output (D is e4m3");
	d = v, d.n = 4;
	nvfp4_rule("gemm_check nvfp4 D row stride", d, GEMM_EINVAL, "multiple of 16 bytes (N = 4)");
	d = v, d.b_dtype = DT_E4M3;
	nvfp4_rule("gemm_check nvfp4 e2m1 x e4m3", d, GEMM_EINVAL, "A and B both e2m1 (A e2m1, B e4m3)");
	d = v, d.a_dtype = d.b_dtype = DT_E4M3;
	nvfp4_rule("gemm_check nvfp4 mode with fp8 inputs", d, GEMM_EINVAL, "A and B both e2m1");
	d = v, d.scale_mode = GEMM_SCALE_MXFP8;
	nvfp4_rule("gemm_check e2m1 with mxfp8 scales", d, GEMM_EINVAL, "e2m1 inputs need scale_mode nvfp4");
	d = v, d.fast_accum = 1;
	nvfp4_rule("gemm_check nvfp4 fast_accum", d, GEMM_EINVAL, "fast_accum applies to FP8 inputs only");
	d = v, d.b_block128x128 = 1;
	nvfp4_rule("gemm_check nvfp4 block flag", d, GEMM_EINVAL, "128x128 block flags apply to scale_mode block only");
	d = v, d.scale_mode = GEMM_SCALE_NVFP4 + 1;
	nvfp4_rule("gemm_check unknown scale_mode", d, GEMM_EINVAL, "unknown scale_mode");
	/* row strides (a columnwise copy's padded lines): >= K, not with a transposed operand, 16 bytes for FP8 */
	d = v, d.lda = 544;
	nvfp4_rule("gemm_check nvfp4 lda 544 (K 512)", d, GEMM_OK, "");
	const GemmDesc f8 = {.m = 64, .n = 128, .k = 224, .a_dtype = DT_E4M3, .b_dtype = DT_E4M3, .d_dtype = DT_BF16,
		.scale_mode = GEMM_SCALE_TENSOR};
	d = f8, d.lda = d.ldb = 240;
	nvfp4_rule("gemm_check fp8 lda ldb 240 (K 224)", d, GEMM_OK, "");
	d = f8, d.ldb = 200;
	nvfp4_rule("gemm_check ldb < K", d, GEMM_EINVAL, "must be >= K");
	d = f8, d.lda = 232;
	nvfp4_rule("gemm_check fp8 lda 232 (not 16 bytes)", d, GEMM_EINVAL, "16-byte row strides");
	d = f8, d.a_dtype = d.b_dtype = DT_BF16, d.scale_mode = GEMM_SCALE_NONE, d.a_trans = 1, d.lda = 240;
	nvfp4_rule("gemm_check lda with A transposed", d, GEMM_EINVAL, "not with a transposed operand");
}

/* gemm_pad_bytes (CPU, no GPU needed): which GEMMs run on zero-padded copies and how much scratch they take
 * (each copy 256-byte aligned: A, B, the scales, the bias, D in that order). */
static size_t al256(size_t n) { return (n + 255) & ~(size_t)255; }
static void pad_rule(const char *name, GemmDesc d, size_t want)
{
	size_t got = gemm_pad_bytes(&d);
	char msg[160];
	snprintf(msg, sizeof msg, "scratch %zu bytes, expected %zu", got, want);
	if (got == want)
		ok(name, msg);
	else
		bad(name, msg);
}
static void pad_rules(void)
{
	const GemmDesc bf = {.m = 64, .n = 96, .k = 8192, .a_dtype = DT_BF16, .b_dtype = DT_BF16, .d_dtype = DT_F32,
		.scale_mode = GEMM_SCALE_NONE};
	GemmDesc d = bf;
	pad_rule("gemm_pad bf16 aligned: none", d, 0);
	d.k = 8191; /* a wgrad at an odd token count: A [64][8192], B [96][8192] */
	pad_rule("gemm_pad bf16 K=8191 -> 8192", d, al256(64 * 8192 * 2) + al256(96 * 8192 * 2));
	d = bf, d.n = 27, d.k = 100, d.m = 216, d.b_trans = 1, d.epilogue = GEMM_EPI_BIAS;
	/* a dgrad: B stored [K][N] -> [104][32], A [216][104], the FP32 bias [32], D [216][32] */
	pad_rule("gemm_pad bf16 dgrad N=27 K=100 +fp32 bias", d,
		al256(216 * 104 * 2) + al256(104 * 32 * 2) + al256(32 * 4) + al256(216 * 32 * 4));
	d = bf, d.m = 5, d.a_trans = 1; /* A stored [K][M] -> [8192][8], D [8][96] */
	pad_rule("gemm_pad bf16 A transposed M=5", d, al256(8192 * 8 * 2) + al256(8 * 96 * 4));
	d = bf, d.a_dtype = d.b_dtype = DT_F32, d.k = 5, d.n = 21; /* K -> 8 (16 / 4 bytes), N -> 24 */
	pad_rule("gemm_pad fp32 K=5 N=21", d, al256(64 * 8 * 4) + al256(24 * 8 * 4) + al256(64 * 24 * 4));
	d = bf, d.a_dtype = d.b_dtype = DT_E4M3, d.scale_mode = GEMM_SCALE_TENSOR, d.k = 217, d.d_dtype = DT_BF16;
	d.epilogue = GEMM_EPI_BIAS, d.n = 50; /* K -> 224, N -> 56 (D bf16), the bf16 bias [56] */
	pad_rule("gemm_pad fp8 K=217 N=50 +bf16 bias", d,
		al256(64 * 224) + al256(56 * 224) + al256(56 * 2) + al256(64 * 56 * 2));
	d = bf, d.a_dtype = d.b_dtype = DT_E2M1, d.scale_mode = GEMM_SCALE_NVFP4, d.k = 512;
	pad_rule("gemm_pad nvfp4: never padded", d, 0);
	d = bf, d.a_dtype = d.b_dtype = DT_E4M3, d.scale_mode = GEMM_SCALE_BLOCK, d.b_block128x128 = 1, d.m = 8191;
	d.k = 4096, d.n = 28672, d.d_dtype = DT_BF16; /* split at 8188: scales [32][8188], A's tail [4][4096], its
	                                                 scales [32][4], D's tail [4][28672] */
	pad_rule("gemm_pad fp8 1x128 M=8191: split", d,
		al256(32 * 8188 * 4) + al256(4 * 4096) + al256(32 * 4 * 4) + al256(4 * 28672 * 2));
	d.k = 4100; /* K breaks a rule too: the whole GEMM padded (M 8192, K 4112 (16), kb 33 -> 512-multiple for 128x128) */
	pad_rule("gemm_pad fp8 1x128 M=8191 K=4100: padded, not split", d,
		gemm_pad_bytes(&d) > (size_t)8192 * 4100 ? gemm_pad_bytes(&d) : 1);
	d.k = 4096, d.lda = 4112, d.b_block128x128 = 0, d.n = 4096; /* a padded row stride keeps the split */
	pad_rule("gemm_pad fp8 1x128 M=8191 lda 4112: split", d,
		al256(32 * 8188 * 4) + al256(4 * 4096) + al256(32 * 4 * 4) + al256(4 * 4096 * 2));
}

static float e2m1_to_f32(unsigned c)
{
	static const float mag[8] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
	return c & 8 ? -mag[c & 7] : mag[c & 7];
}

/* plain scales [rows][scols] -> cuBLASLt's 128x4-tile layout (padding 0), as the swizzle kernel writes it */
static uint8_t *swizzle(const uint8_t *in, int rows, int scols, size_t *bytes)
{
	int rp = (rows + 127) / 128 * 128, tpr = (scols + 3) / 4;
	*bytes = (size_t)rp * tpr * 4;
	uint8_t *out = calloc(*bytes, 1);
	for (int r = 0; r < rows; r++)
		for (int c = 0; c < scols; c++)
			out[((size_t)(r / 128) * tpr + c / 4) * 512 + (r % 32) * 16 + (r % 128 / 32) * 4 + c % 4] =
				in[(size_t)r * scols + c];
	return out;
}

/* One NVFP4 operand [rows][K]: random E2M1 codes (two per byte, element 2k low),
 * random E4M3 block scales in [2^-3, 2^3], swizzled; deq = e2m1 * S_dec (exact). */
static Operand make_nvfp4(int rows, int K)
{
	Operand o;
	memset(&o, 0, sizeof o);
	int nb = K / 16;
	uint8_t *q = malloc((size_t)rows * K / 2), *sc = malloc((size_t)rows * nb);
	o.deq = malloc(sizeof *o.deq * (size_t)rows * K);
	for (size_t i = 0; i < (size_t)rows * nb; i++)
		sc[i] = (uint8_t)(((4 + rng_next() % 7) << 3) | (rng_next() & 7)); /* exponent field 4..10: 2^-3..2^3 */
	for (int r = 0; r < rows; r++)
		for (int k = 0; k < K; k += 2) {
			unsigned c0 = rng_next() & 15, c1 = rng_next() & 15;
			q[((size_t)r * K + k) / 2] = (uint8_t)(c0 | c1 << 4);
			float s = e4m3_to_f32(sc[(size_t)r * nb + k / 16]);
			o.deq[(size_t)r * K + k] = e2m1_to_f32(c0) * s;
			o.deq[(size_t)r * K + k + 1] = e2m1_to_f32(c1) * s;
		}
	size_t sb;
	uint8_t *sw = swizzle(sc, rows, nb, &sb);
	o.data = dalloc((size_t)rows * K / 2);
	h2d(o.data, q, (size_t)rows * K / 2);
	o.sinv = dalloc(sb);
	h2d(o.sinv, sw, sb);
	free(q), free(sc), free(sw);
	return o;
}

typedef struct Nv4Case { const char *name; int m, n, k, dt, acc, dev; float s_enc_a, s_enc_b; double tol; } Nv4Case;

/* |D - reference| over |reference|, D = alpha * A B^T (+ beta C); alpha = 1/(S_enc_a*S_enc_b) as tegen computes it */
static double nvfp4_error(const Nv4Case *c, const Operand *A, const Operand *B, const float *cinit, const void *hd,
	float alpha)
{
	double num = 0, den = 0;
	for (int i = 0; i < c->m; i++)
		for (int j = 0; j < c->n; j++) {
			double acc = 0;
			for (int k = 0; k < c->k; k++) acc += (double)A->deq[(size_t)i * c->k + k] * B->deq[(size_t)j * c->k + k];
			double ref = alpha * acc + (c->acc ? cinit[(size_t)i * c->n + j] : 0.0);
			size_t x = (size_t)i * c->n + j;
			double gv;
			if (c->dt == DT_F32) { float f; memcpy(&f, (const char *)hd + 4 * x, 4); gv = f; }
			else { uint16_t h; memcpy(&h, (const char *)hd + 2 * x, 2); gv = bf16_to_f32(h); }
			num += (gv - ref) * (gv - ref);
			den += ref * ref;
		}
	double rel = den > 0 ? sqrt(num / den) : sqrt(num);
	return isnan(rel) ? INFINITY : rel;
}

/* D's initial contents: C for accumulate (returned on the host), else 0xff garbage */
static float *nvfp4_init_d(const Nv4Case *c, CUdeviceptr D)
{
	size_t nd = (size_t)c->m * c->n, ds = (size_t)dts(c->dt);
	float *cinit = calloc(nd, sizeof *cinit);
	unsigned char *hc = malloc(nd * ds);
	memset(hc, 0xff, nd * ds);
	for (size_t j = 0; c->acc && j < nd; j++) {
		float v = rng_uniform() * 4.0f;
		if (c->dt == DT_BF16) { uint16_t h = f32_to_bf16(v); memcpy(hc + 2 * j, &h, 2); v = bf16_to_f32(h); }
		else memcpy(hc + 4 * j, &v, 4);
		cinit[j] = v;
	}
	h2d(D, hc, nd * ds);
	free(hc);
	return cinit;
}

/* One native NVFP4 GEMM (sm_100+) against the double-precision reference. */
static void nvfp4_case(GemmCtx *g, CUstream s, const Nv4Case *c)
{
	char err[512], msg[800];
	Operand A = make_nvfp4(c->m, c->k), B = make_nvfp4(c->n, c->k);
	size_t nd = (size_t)c->m * c->n;
	CUdeviceptr D = dalloc(nd * dts(c->dt)), ab = dalloc(2 * sizeof(float));
	float *cinit = nvfp4_init_d(c, D);
	float alpha = 1.0f / (c->s_enc_a * c->s_enc_b), hab[2] = {alpha, c->acc ? 1.0f : 0.0f};
	h2d(ab, hab, sizeof hab);
	GemmDesc d = {.m = c->m, .n = c->n, .k = c->k, .a_dtype = DT_E2M1, .b_dtype = DT_E2M1, .d_dtype = c->dt,
		.scale_mode = GEMM_SCALE_NVFP4, .accumulate = c->acc};
	GemmArgs a = {.a = P(A.data), .b = P(B.data), .d = P(D), .a_scale_inv = P(A.sinv), .b_scale_inv = P(B.sinv),
		.alpha = c->dev ? 0.0f : alpha, .beta = hab[1]};
	if (c->dev) {
		a.alpha_ptr = (const float *)P(ab);
		a.beta_ptr = (const float *)P(ab + sizeof(float));
	}
	int rc = gemm_run(g, &d, &a, s, err, sizeof err);
	CUresult r = rc ? 0 : cu.cuStreamSynchronize(s);
	if (rc || r) {
		snprintf(msg, sizeof msg, "gemm_run returned %d: %s%s", rc, rc ? err : "stream sync: ", rc ? "" : cudrv_errstr(r));
		bad(c->name, msg);
		row(c->name, NAN, c->tol, "FAIL");
	} else {
		unsigned char *hd = malloc(nd * dts(c->dt));
		d2h(hd, D, nd * dts(c->dt));
		double rel = nvfp4_error(c, &A, &B, cinit, hd, alpha);
		char plan[160] = "";
		gemm_describe(g, &d, plan, sizeof plan);
		snprintf(msg, sizeof msg, "M=%d N=%d K=%d e2m1->%s alpha=%g (%s) rel_fro=%.3e (tol %.1e) [%s]", c->m, c->n, c->k,
			dtn(c->dt), alpha, c->dev ? "device" : "host", rel, c->tol, plan);
		if (rel <= c->tol) ok(c->name, msg); else bad(c->name, msg);
		row(c->name, rel, c->tol, rel <= c->tol ? "ok" : "FAIL");
		free(hd);
	}
	free_operand(&A);
	free_operand(&B);
	cu.cuMemFree_v2(D);
	cu.cuMemFree_v2(ab);
	free(cinit);
}

/* Below sm_100, a valid NVFP4 GEMM must be GEMM_ENOTSUP (the caller emulates):
 * reported as skip, never ok; anything else fails. */
static void nvfp4_not_native(GemmCtx *g, CUstream s)
{
	char err[512] = "", msg[800];
	CUdeviceptr buf = dalloc(1 << 20);
	GemmDesc d = {.m = 128, .n = 256, .k = 512, .a_dtype = DT_E2M1, .b_dtype = DT_E2M1, .d_dtype = DT_BF16,
		.scale_mode = GEMM_SCALE_NVFP4};
	GemmArgs a = {.a = P(buf), .b = P(buf), .d = P(buf), .a_scale_inv = P(buf), .b_scale_inv = P(buf), .alpha = 1};
	int rc = gemm_run(g, &d, &a, s, err, sizeof err);
	cu.cuStreamSynchronize(s);
	cu.cuMemFree_v2(buf);
	snprintf(msg, sizeof msg, "gemm_run returned %d (want GEMM_ENOTSUP = %d): \"%s\"", rc, GEMM_ENOTSUP, err);
	if (rc == GEMM_ENOTSUP && strstr(err, "NVFP4 GEMM needs sm_100"))
		printf("skip nvfp4 native GEMM: not native on sm_%d; %s\n", g_cc, msg);
	else
		bad("nvfp4 native GEMM below sm_100", msg);
}

static void nvfp4_gpu(GemmCtx *g, CUstream s)
{
	if (g_cc < 100) {
		nvfp4_not_native(g, s);
		return;
	}
	const int BF = DT_BF16, F32 = DT_F32;
	const Nv4Case cases[] = {
		{"nvfp4 ->bf16 (device alpha)", 128, 256, 512, BF, 0, 1, 2.5f, 0.375f, 4.5e-3},
		{"nvfp4 ->bf16 M=72 (host alpha)", 72, 256, 512, BF, 0, 0, 2.5f, 0.375f, 4.5e-3},
		{"nvfp4 ->fp32 accumulate (device beta 1)", 128, 256, 1024, F32, 1, 1, 1000.0f, 3.0f, 5e-4},
	};
	for (int i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++)
		nvfp4_case(g, s, &cases[i]);
}

/* ---------- algorithm tuning ---------- */

/* One BF16 x BF16 -> FP32 GEMM with accumulate (beta 1, C random), M=64 N=128
 * K=256 unless shape_salt changes N, run directly or captured into a graph
 * (then launched once). Accumulate makes the check strict: had the timing runs
 * written the caller's D, D would hold C + many products, not C + one. Returns
 * the relative error (INFINITY on failure, with err) and the plan description. */
static double tune_gemm(GemmCtx *g, CUstream s, int shape_salt, int capture, char *plan, size_t planlen, char *err,
	size_t errlen)
{
	int M = 64, N = 128 + 16 * shape_salt, K = 256;
	Operand A = make_operand(M, K, DT_BF16, GEMM_SCALE_NONE, 0, 1, 0);
	Operand B = make_operand(N, K, DT_BF16, GEMM_SCALE_NONE, 0, 1, 0);
	size_t nd = (size_t)M * N;
	float *c = malloc(nd * sizeof *c), *hd = malloc(nd * sizeof *hd);
	for (size_t j = 0; j < nd; j++) c[j] = rng_uniform() * 4.0f;
	CUdeviceptr D = dalloc(nd * 4);
	h2d(D, c, nd * 4);
	GemmDesc d = {.m = M, .n = N, .k = K, .a_dtype = DT_BF16, .b_dtype = DT_BF16, .d_dtype = DT_F32, .accumulate = 1};
	GemmArgs a = {.a = P(A.data), .b = P(B.data), .d = P(D), .alpha = 1, .beta = 1};
	double rel = INFINITY;
	int rc;
	plan[0] = 0;
	if (capture) {
		void *graph = NULL, *exec = NULL;
		CK(cu.cuStreamBeginCapture_v2(s, 0 /* CU_STREAM_CAPTURE_MODE_GLOBAL: unsafe calls fail */));
		rc = gemm_run(g, &d, &a, s, err, errlen);
		CUresult r = cu.cuStreamEndCapture(s, &graph);
		if (!rc && r) {
			snprintf(err, errlen, "cuStreamEndCapture: %s (an unsafe call during capture?)", cudrv_errstr(r));
			rc = -100;
		}
		if (!rc && (r = cu.cuGraphInstantiateWithFlags(&exec, graph, 0))) {
			snprintf(err, errlen, "cuGraphInstantiateWithFlags: %s", cudrv_errstr(r));
			rc = -100;
		}
		if (!rc && (r = cu.cuGraphLaunch(exec, s))) {
			snprintf(err, errlen, "cuGraphLaunch: %s", cudrv_errstr(r));
			rc = -100;
		}
		if (!rc && (r = cu.cuStreamSynchronize(s))) {
			snprintf(err, errlen, "graph run: %s", cudrv_errstr(r));
			rc = -100;
		}
		if (exec) cu.cuGraphExecDestroy(exec);
		if (graph) cu.cuGraphDestroy(graph);
	} else {
		rc = gemm_run(g, &d, &a, s, err, errlen);
		CUresult r = rc ? 0 : cu.cuStreamSynchronize(s);
		if (r) {
			snprintf(err, errlen, "stream sync: %s", cudrv_errstr(r));
			rc = -100;
		}
	}
	if (!rc) {
		d2h(hd, D, nd * 4);
		double num = 0, den = 0;
		for (int i = 0; i < M; i++)
			for (int j = 0; j < N; j++) {
				double acc = c[(size_t)i * N + j];
				for (int k = 0; k < K; k++) acc += (double)A.deq[(size_t)i * K + k] * B.deq[(size_t)j * K + k];
				double e = hd[(size_t)i * N + j] - acc;
				num += e * e;
				den += acc * acc;
			}
		rel = sqrt(num / den);
		if (isnan(rel)) rel = INFINITY;
		gemm_describe(g, &d, plan, planlen);
	}
	free_operand(&A);
	free_operand(&B);
	cu.cuMemFree_v2(D);
	free(c);
	free(hd);
	return rel;
}

/* ok when the GEMM was right and its plan description contains want */
static void tune_expect(const char *name, double rel, const char *plan, const char *want, const char *err)
{
	char msg[900];
	snprintf(msg, sizeof msg, "rel_fro=%.3e (tol 1e-5) [%s]%s%s", rel, plan, isinf(rel) ? " error: " : "",
		isinf(rel) ? err : "");
	if (rel <= 1e-5 && strstr(plan, want)) ok(name, msg);
	else {
		char m2[1000];
		snprintf(m2, sizeof m2, "%s; wanted the plan to say \"%s\"", msg, want);
		bad(name, m2);
	}
}

/* lines of path, and how many carry a timing ("\ttimed ") */
static int file_lines(const char *path, int *timed)
{
	FILE *f = fopen(path, "r");
	char line[2048];
	int n = 0;
	*timed = 0;
	while (f && fgets(line, sizeof line, f)) {
		n++;
		if (strstr(line, "\ttimed ")) (*timed)++;
	}
	if (f) fclose(f);
	return n;
}

/* Timing on first use: never while capturing (the graph gets the heuristic's
 * first candidate; the next call outside capture times), never into the
 * caller's D, recorded with its median, reused from the disk, off on request. */
static void tuning_checks(void)
{
	char err[512] = "", plan[400], msg[600];
	CUstream s;
	CK(cu.cuStreamCreate(&s, 1 /* non-blocking: capturable */));
	GemmCtx *g = gemm_ctx_create(0, err, sizeof err);
	if (!g) {
		bad("tuning: gemm_ctx_create", err);
		return;
	}
	gemm_ctx_set_tuning(g, 1);
	double rel = tune_gemm(g, s, 0, 0, plan, sizeof plan, err, sizeof err);
	tune_expect("tuning: first use is timed, caller's D (accumulate) untouched by the timing", rel, plan, "timed: candidate", err);
	rel = tune_gemm(g, s, 1, 1, plan, sizeof plan, err, sizeof err);
	tune_expect("tuning: first use while capturing is untimed, graph result right", rel, plan,
		"untimed (stream capturing; timed at the next call outside capture)", err);
	rel = tune_gemm(g, s, 1, 0, plan, sizeof plan, err, sizeof err);
	tune_expect("tuning: same configuration outside capture is timed then", rel, plan, "timed: candidate", err);
	gemm_ctx_set_tuning(g, 0);
	rel = tune_gemm(g, s, 2, 0, plan, sizeof plan, err, sizeof err);
	tune_expect("tuning: gemm_ctx_set_tuning(g, 0) takes the first candidate", rel, plan, "untimed (tuning off)", err);
	gemm_ctx_destroy(g);

	/* the algo file: untimed line (tuning off), then timed (on), reused by both */
	char path[] = "/tmp/tegen-gemm-tune-XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0) {
		bad("tuning: algo file", "mkstemp failed");
		cu.cuStreamDestroy_v2(s);
		return;
	}
	close(fd);
	struct { int tune; const char *name, *want; int lines, timed; } steps[] = {
		{0, "tuning: algo file, tuning off records an untimed line", "untimed (tuning off)", 1, 0},
		{1, "tuning: algo file, tuning on re-times an untimed record and records the winner", "timed: candidate", 2, 1},
		{1, "tuning: algo file, a timed record is reused without timing", "recorded choice (disk, timed", 2, 1},
		{0, "tuning: algo file, tuning off also reuses the timed record", "recorded choice (disk, timed", 2, 1},
	};
	for (int i = 0; i < (int)(sizeof steps / sizeof steps[0]); i++) {
		GemmCtx *h = gemm_ctx_create(0, err, sizeof err);
		if (!h) {
			bad(steps[i].name, err);
			break;
		}
		gemm_ctx_set_algo_file(h, path);
		gemm_ctx_set_tuning(h, steps[i].tune);
		rel = tune_gemm(h, s, 3, 0, plan, sizeof plan, err, sizeof err);
		gemm_ctx_destroy(h);
		int timed, lines = file_lines(path, &timed);
		char pl[500];
		snprintf(pl, sizeof pl, "%s; file %d lines, %d timed", plan, lines, timed);
		if (lines != steps[i].lines || timed != steps[i].timed) {
			snprintf(msg, sizeof msg, "file has %d lines (%d timed), want %d (%d timed) [%s]", lines, timed,
				steps[i].lines, steps[i].timed, plan);
			bad(steps[i].name, msg);
		} else {
			tune_expect(steps[i].name, rel, pl, steps[i].want, err);
		}
	}
	unlink(path);
	cu.cuStreamDestroy_v2(s);
}

/* ---------- benchmark ---------- */

typedef struct Shape { int m, k, n; const char *what; double ref_fp8; } Shape;

static void fill_pool(CUdeviceptr dst, size_t n, const unsigned char *pool, size_t pool_n, size_t offset)
{
	size_t done = 0;
	while (done < n) {
		size_t off = (offset + done) % pool_n;
		size_t chunk = pool_n - off;
		if (chunk > n - done) chunk = n - done;
		h2d(dst + done, pool + off, chunk);
		done += chunk;
	}
}

static int cmp_float(const void *x, const void *y)
{
	float a = *(const float *)x, b = *(const float *)y;
	return a < b ? -1 : a > b;
}

enum { BM_BF16, BM_FP8, BM_FP8OUT, BM_BLOCK, BM_N };
static const char *bm_name[BM_N] = {"bf16", "fp8 tensor->bf16", "fp8 tensor->e4m3+amax", "fp8 block->bf16"};

enum { BENCH_WARM = 5, BENCH_ITERS = 20 };

/* Median ms of BENCH_ITERS back-to-back gemm_runs after BENCH_WARM warm-up runs
 * (a tuning context times its candidates in the first), operands rotated over
 * nrot sets; GEMM_OK or gemm_run's code with err. */
static int bench_time(GemmCtx *g, const GemmDesc *d, GemmArgs a, const CUdeviceptr *A, const CUdeviceptr *B, int nrot,
	CUstream s, CUevent *ev, float *ms, double *med, char *err, size_t errlen)
{
	int rc = 0;
	for (int i = 0; i < BENCH_WARM + BENCH_ITERS && !rc; i++) {
		int r = i % nrot;
		a.a = P(A[r]);
		a.b = P(B[r]);
		if (i >= BENCH_WARM) CK(cu.cuEventRecord(ev[i - BENCH_WARM], s));
		rc = gemm_run(g, d, &a, s, err, errlen);
		if (!rc && i == BENCH_WARM + BENCH_ITERS - 1) CK(cu.cuEventRecord(ev[BENCH_ITERS], s));
	}
	if (rc) {
		cu.cuStreamSynchronize(s);
		return rc;
	}
	CUresult r = cu.cuEventSynchronize(ev[BENCH_ITERS]);
	if (r) {
		printf("FAIL bench: %s\n", cudrv_errstr(r));
		exit(1);
	}
	for (int i = 0; i < BENCH_ITERS; i++) CK(cu.cuEventElapsedTime(&ms[i], ev[i], ev[i + 1]));
	qsort(ms, BENCH_ITERS, sizeof ms[0], cmp_float);
	*med = (ms[BENCH_ITERS / 2 - 1] + ms[BENCH_ITERS / 2]) / 2;
	return GEMM_OK;
}

/* The shapes of a --gen-bench table: M x N x K, fast accumulation or promotion, D's dtype, up to four
 * generated variants (a 'g' suffix: the GLU epilogue, see gen_function). */
typedef struct GenShape { int m, n, k, fast, dt; const char *what; const char *variants[4]; int block; } GenShape;

/* --gen-bench: the generated GEMM's tile variants beside cuBLASLt at the Llama-3 8B MLP's training
 * shapes (8192 tokens), fast accumulation in fprop and promotion in dgrad/wgrad as TE runs them. */
static const GenShape gen_shapes[] = {
	{8192, 28672, 4096, 1, DT_BF16, "up fprop", {"n256s3", "n256s3g", "n256s3gd", "n256s3gt"}, 0},
	{8192, 28672, 4096, 1, DT_BF16, "up fprop", {"n192s4", "n128s6", NULL, NULL}, 0},
	{8192, 4096, 14336, 1, DT_BF16, "down fprop", {"n256s3", "n192s4", NULL, NULL}, 0},
	{8192, 6144, 4096, 1, DT_BF16, "QKV fprop", {"n256s3", NULL, NULL, NULL}, 0},
	{993, 6144, 4096, 1, DT_BF16, "QKV 993 tok", {"n256s3", NULL, NULL, NULL}, 0},
	{8192, 14336, 4096, 0, DT_BF16, "down dgrad", {"n192s4p", "n128s6p", "n128s4p", NULL}, 0},
	{4096, 14336, 8192, 0, DT_F32, "down wgrad", {"n192s3p", "n128s4p", NULL, NULL}, 0},
	{4096, 14336, 8192, 0, DT_BF16, "down wgrad", {"n192s4p", "n128s4p", NULL, NULL}, 0},
	{8192, 4096, 28672, 0, DT_BF16, "up dgrad", {"n192s4p", "n128s4p", NULL, NULL}, 0},
	{28672, 4096, 8192, 0, DT_BF16, "up wgrad", {"n192s4p", "n128s4p", NULL, NULL}, 0},
	/* block scaling (1: A 1x128, B 128x128; 2: both 1x128), cuBLASLt's block-scaled GEMM first */
	{8192, 28672, 4096, 0, DT_BF16, "up fprop blk", {"n192s4p", "n128s5p", NULL, NULL}, 1},
	{8192, 4096, 14336, 0, DT_BF16, "dn fprop blk", {"n192s4p", "n128s5p", NULL, NULL}, 1},
	{8192, 14336, 4096, 0, DT_BF16, "dn dgrad blk", {"n192s4p", NULL, NULL, NULL}, 1},
	{4096, 14336, 8192, 0, DT_F32, "dn wgrad blk", {"n192s3p", "n128s4p", NULL, NULL}, 2},
	{14336, 4096, 8192, 0, DT_F32, "up wgrad blk", {"n192s3p", NULL, NULL, NULL}, 2},
	/* both operands 1x128 in every pass (llama3_8b_mlp_train_block.yaml: 1x128 weights too) */
	{8192, 28672, 4096, 0, DT_BF16, "up fprop b11", {"n192s4p", "n128s5p", NULL, NULL}, 2},
	{8192, 4096, 14336, 0, DT_BF16, "dn fprop b11", {"n192s4p", "n128s5p", NULL, NULL}, 2},
	{8192, 14336, 4096, 0, DT_BF16, "dn dgrad b11", {"n192s4p", "n128s5p", NULL, NULL}, 2},
	{8192, 4096, 28672, 0, DT_BF16, "up dgrad b11", {"n192s4p", "n128s5p", NULL, NULL}, 2},
	{28672, 4096, 8192, 0, DT_F32, "up wgrad b11", {"n192s3p", "n128s4p", NULL, NULL}, 2},
};
/* --gen-sweep: the planned tile (n256s3) beside cuBLASLt over token counts at the Llama-3 8B fprop shapes
 * (QKV, attention out, MLP up and down): where the generated kernel loses (few tiles a SM). */
static const int sweep_tokens[] = {128, 256, 512, 993, 2048, 4096};
static const GenShape sweep_shapes[] = {{0, 6144, 4096, 1, DT_BF16, "QKV", {"n256s3"}, 0},
	{0, 4096, 4096, 1, DT_BF16, "attn out", {"n256s3"}, 0}, {0, 28672, 4096, 1, DT_BF16, "up", {"n256s3"}, 0},
	{0, 4096, 14336, 1, DT_BF16, "down", {"n256s3"}, 0}};
#define NSWEEP (sizeof sweep_shapes / sizeof sweep_shapes[0] * (sizeof sweep_tokens / sizeof sweep_tokens[0]))

/* Times table sh (its first `rows` shapes; all when rows <= 0): E4M3 operands rotated over 3 copies,
 * median of BENCH_ITERS, CUDA events around each launch, cuBLASLt first. */
static void gen_bench(GemmCtx *g, CUstream s, int sms, const GenShape *sh, int nsh, int rows, const char *only)
{
	size_t pool_n = (size_t)64 << 20;
	unsigned char *p8 = malloc(pool_n);
	for (size_t j = 0; j < pool_n; j++) {
		uint64_t r = rng_next();
		p8[j] = (uint8_t)(((r >> 20) & 0x80) | ((4 + (r >> 24) % 6) << 3) | ((r >> 32) & 7));
	}
	CUevent ev[BENCH_ITERS + 1];
	for (int i = 0; i <= BENCH_ITERS; i++) CK(cu.cuEventCreate(&ev[i], 0));
	float one16 = 1.0f / 16;
	CUdeviceptr sa = dalloc(4);
	h2d(sa, &one16, 4);
	printf("\ngenerated GEMM vs cuBLASLt (median of %d, us; TFLOP/s)\n", BENCH_ITERS);
	for (int si = 0; si < nsh && (rows <= 0 || si < rows); si++) {
		if (only && !strstr(sh[si].what, only))
			continue;
		int M = sh[si].m, N = sh[si].n, K = sh[si].k;
		CUdeviceptr A[3], B[3], D = dalloc((size_t)M * N * dts(sh[si].dt));
		for (int r = 0; r < 3; r++) {
			A[r] = dalloc((size_t)M * K);
			B[r] = dalloc((size_t)N * K);
			fill_pool(A[r], (size_t)M * K, p8, pool_n, (size_t)r * 7919 * 64);
			fill_pool(B[r], (size_t)N * K, p8, pool_n, (size_t)r * 104729 * 64 + 12345 * 16);
		}
		GemmDesc d = {.m = M, .n = N, .k = K, .a_dtype = DT_E4M3, .b_dtype = DT_E4M3, .d_dtype = sh[si].dt,
			.scale_mode = sh[si].block ? GEMM_SCALE_BLOCK : GEMM_SCALE_TENSOR, .fast_accum = sh[si].fast,
			.b_block128x128 = sh[si].block == 1};
		/* block scales: one array of 1/16 long enough for either operand's layout */
		size_t nsc = (size_t)((K + 127) / 128) * (size_t)(M > N ? M : N);
		CUdeviceptr sblk = 0;
		if (sh[si].block) {
			float *h = malloc(nsc * sizeof *h);
			for (size_t j = 0; j < nsc; j++)
				h[j] = one16;
			sblk = dalloc(nsc * sizeof *h);
			h2d(sblk, h, nsc * sizeof *h);
			free(h);
		}
		GemmArgs a = {.d = P(D), .a_scale_inv = P(sblk ? sblk : sa), .b_scale_inv = P(sblk ? sblk : sa), .alpha = 1};
		/* the GLU variants ('g'): act [M][N/2] E4M3 with scale 1, its scale_inv and amax in sa's neighbours */
		CUdeviceptr act = dalloc((size_t)M * N / 2), act_t = dalloc((size_t)M * N / 2), st = dalloc(16);
		float st_init[4] = {1, 1, 0, 0};
		h2d(st, st_init, 16);
		TgParams ep;
		memset(&ep, 0, sizeof ep);
		ep.p[TG_P_OUT] = P(act);
		ep.p[TG_P_SCALE] = P(st);
		ep.p[TG_P_SCALE_INV] = P(st + 4);
		ep.p[TG_P_AMAX] = P(st + 8);
		GemmGenEpi epi = {&ep, 0};
		char err[512], line[1024];
		float ms[BENCH_ITERS];
		double med = 0, flop = 2.0 * M * N * K;
		int n = snprintf(line, sizeof line, "%-12s %5dx%5dx%5d %s", sh[si].what, M, N, K, sh[si].fast ? "fast " : "promo");
		if (bench_time(g, &d, a, A, B, 3, s, ev, ms, &med, err, sizeof err))
			n += snprintf(line + n, sizeof line - (size_t)n, " | cuBLASLt FAIL %s", err);
		else
			n += snprintf(line + n, sizeof line - (size_t)n, " | cuBLASLt %7.1f %5.0f", med * 1e3, flop / med / 1e9);
		double cub = med;
		for (int v = 0; v < 4 && sh[si].variants[v]; v++) {
			GemmGenTile t;
			CUfunction f = gen_function(sh[si].variants[v], DT_E4M3, DT_E4M3, sh[si].dt, gemm_gen_scale_of(&d), &t, err, sizeof err);
			int rc = f ? 0 : -1;
			/* 'gt' as a training layer runs it: act's columnwise copy too, and D (h, saved for dglu) written */
			const char *sfx = strchr(sh[si].variants[v], 'g');
			int gt = sfx && strchr(sfx, 't'), gd = sfx && strchr(sfx, 'd');
			ep.p[TG_P_OUT_T] = gt ? P(act_t) : 0;
			epi.write_d = gt || gd;
			for (int i = 0; i < BENCH_WARM + BENCH_ITERS && !rc; i++) {
				a.a = P(A[i % 3]);
				a.b = P(B[i % 3]);
				if (i >= BENCH_WARM) CK(cu.cuEventRecord(ev[i - BENCH_WARM], s));
				rc = gemm_gen_launch(f, &t, sms, &d, &a, t.glu ? &epi : NULL, s, err, sizeof err);
				if (!rc && i == BENCH_WARM + BENCH_ITERS - 1) CK(cu.cuEventRecord(ev[BENCH_ITERS], s));
			}
			if (!rc && cu.cuEventSynchronize(ev[BENCH_ITERS]))
				rc = -1;
			if (rc) {
				n += snprintf(line + n, sizeof line - (size_t)n, " | %s FAIL %.80s", sh[si].variants[v], err);
				bad("gen bench", err);
				continue;
			}
			for (int i = 0; i < BENCH_ITERS; i++) CK(cu.cuEventElapsedTime(&ms[i], ev[i], ev[i + 1]));
			qsort(ms, BENCH_ITERS, sizeof ms[0], cmp_float);
			med = (ms[BENCH_ITERS / 2 - 1] + ms[BENCH_ITERS / 2]) / 2;
			n += snprintf(line + n, sizeof line - (size_t)n, " | %s %7.1f %5.0f %.2fx", sh[si].variants[v], med * 1e3,
				flop / med / 1e9, cub / med);
		}
		printf("%s\n", line);
		for (int r = 0; r < 3; r++) {
			cu.cuMemFree_v2(A[r]);
			cu.cuMemFree_v2(B[r]);
		}
		cu.cuMemFree_v2(D);
		cu.cuMemFree_v2(act);
		cu.cuMemFree_v2(act_t);
		cu.cuMemFree_v2(st);
		if (sblk)
			cu.cuMemFree_v2(sblk);
	}
	cu.cuMemFree_v2(sa);
	for (int i = 0; i <= BENCH_ITERS; i++) cu.cuEventDestroy_v2(ev[i]);
	free(p8);
}

/* Each shape and mode is timed twice in the same run on the same buffers:
 * with gfirst (tuning off: the heuristic's first candidate, tegen's old choice)
 * and with g (tuning on: the timed winner, the runtime's default). */
static void bench(GemmCtx *g, GemmCtx *gfirst, CUstream s)
{
	static const Shape shapes[] = {
		{8192, 4096, 6144, "QKV fprop", 1096},
		{8192, 4096, 4096, "attn-out fprop", 0},
		{8192, 4096, 28672, "MLP up fprop", 1173},
		{8192, 14336, 4096, "MLP down fprop", 1265},
		{8192, 4096, 14336, "MLP down dgrad", 0},
		{4096, 8192, 14336, "MLP down wgrad", 0},
		{8192, 8192, 8192, "square", 1286},
	};
	const int nshape = (int)(sizeof shapes / sizeof shapes[0]);
	/* random pools: valid bf16 in +-[2^-7, 2), valid e4m3 in +-[2^-3, 8) (no NaN codes) */
	size_t pool_n = (size_t)64 << 20;
	unsigned char *p16 = malloc(pool_n), *p8 = malloc(pool_n);
	for (size_t j = 0; j < pool_n; j += 2) {
		uint64_t r = rng_next();
		uint16_t h = (uint16_t)(((r & 1) << 15) | ((120 + (r >> 1) % 8) << 7) | ((r >> 8) & 0x7f));
		memcpy(p16 + j, &h, 2);
		p8[j] = (uint8_t)(((r >> 20) & 0x80) | ((4 + (r >> 24) % 6) << 3) | ((r >> 32) & 7));
		p8[j + 1] = (uint8_t)(((r >> 40) & 0x80) | ((4 + (r >> 44) % 6) << 3) | ((r >> 52) & 7));
	}
	double tab[16][BM_N], first[16][BM_N];
	char tabmsg[16][BM_N][16], tuned[16][BM_N][160];
	CUevent ev[BENCH_ITERS + 1];
	for (int i = 0; i <= BENCH_ITERS; i++) CK(cu.cuEventCreate(&ev[i], 0));
	double t0 = now_s();
	for (int si = 0; si < nshape; si++) {
		const Shape *sh = &shapes[si];
		for (int mode = 0; mode < BM_N; mode++) {
			tab[si][mode] = first[si][mode] = NAN;
			tuned[si][mode][0] = 0;
			snprintf(tabmsg[si][mode], sizeof tabmsg[0][0], "-");
			int M = sh->m, N = sh->n, K = sh->k;
			int es = mode == BM_BF16 ? 2 : 1;
			int dt = mode == BM_FP8OUT ? DT_E4M3 : DT_BF16;
			size_t ba = (size_t)M * K * es, bb = (size_t)N * K * es, bd = (size_t)M * N * dts(dt);
			int nrot = (int)(((size_t)400 << 20) / (ba + bb)) + 1;
			if (nrot > 4) nrot = 4;
			CUdeviceptr A[4] = {0}, B[4] = {0}, D = 0, sa = 0, sb = 0, dsc = 0, am = 0;
			for (int r = 0; r < nrot; r++) {
				A[r] = dalloc(ba);
				B[r] = dalloc(bb);
				fill_pool(A[r], ba, es == 2 ? p16 : p8, pool_n, (size_t)r * 7919 * 64);
				fill_pool(B[r], bb, es == 2 ? p16 : p8, pool_n, (size_t)r * 104729 * 64 + 12345 * 16);
			}
			D = dalloc(bd);
			GemmDesc d = {.m = M, .n = N, .k = K, .a_dtype = mode == BM_BF16 ? DT_BF16 : DT_E4M3,
				.b_dtype = mode == BM_BF16 ? DT_BF16 : DT_E4M3, .d_dtype = dt,
				.scale_mode = mode == BM_BF16 ? GEMM_SCALE_NONE : mode == BM_BLOCK ? GEMM_SCALE_BLOCK : GEMM_SCALE_TENSOR,
				.b_block128x128 = mode == BM_BLOCK};
			GemmArgs a = {.d = P(D), .alpha = 1};
			float one16 = 1.0f / 16;
			if (mode == BM_FP8 || mode == BM_FP8OUT) {
				sa = dalloc(4);
				sb = dalloc(4);
				h2d(sa, &one16, 4);
				h2d(sb, &one16, 4);
			} else if (mode == BM_BLOCK) {
				size_t na = (size_t)((K + 127) / 128) * M, nb = (size_t)((N + 127) / 128) * ((K + 127) / 128);
				sa = dalloc(na * 4);
				sb = dalloc(nb * 4);
				CK(cu.cuMemsetD32Async(sa, f32_bits(one16), na, s));
				CK(cu.cuMemsetD32Async(sb, f32_bits(one16), nb, s));
			}
			if (sa) {
				a.a_scale_inv = P(sa);
				a.b_scale_inv = P(sb);
			}
			if (mode == BM_FP8OUT) {
				float dscale = 1.0f / 64;
				dsc = dalloc(4);
				am = dalloc(4);
				h2d(dsc, &dscale, 4);
				a.d_scale = P(dsc);
				a.d_amax = P(am);
			}
			char err[512], name[128];
			float ms[BENCH_ITERS], ms0[BENCH_ITERS];
			double med = 0, med0 = 0;
			snprintf(name, sizeof name, "bench %dx%dx%d %s", M, K, N, bm_name[mode]);
			int rc = bench_time(gfirst, &d, a, A, B, nrot, s, ev, ms0, &med0, err, sizeof err);
			if (!rc) rc = bench_time(g, &d, a, A, B, nrot, s, ev, ms, &med, err, sizeof err);
			if (rc) {
				if (rc == GEMM_ENOTSUP || rc == GEMM_ENOALGO) {
					printf("skip %s: %s\n", name, err);
					snprintf(tabmsg[si][mode], sizeof tabmsg[0][0], "n/a");
				} else {
					bad(name, err);
					snprintf(tabmsg[si][mode], sizeof tabmsg[0][0], "FAIL");
				}
			} else {
				double tf = 2.0 * M * N * K / (med * 1e-3) / 1e12, tf0 = 2.0 * M * N * K / (med0 * 1e-3) / 1e12;
				tab[si][mode] = med;
				first[si][mode] = med0;
				snprintf(tabmsg[si][mode], sizeof tabmsg[0][0], "%.0f", tf);
				char plan[400] = "", plan0[400] = "";
				gemm_describe(g, &d, plan, sizeof plan);
				gemm_describe(gfirst, &d, plan0, sizeof plan0);
				int wi = 0, wn = 0, wt = 0;
				double wus = 0, fus = 0;
				if (sscanf(plan, "timed: candidate %d of %d, fastest of %d timed, %lf us (heuristic first %lf us)", &wi, &wn,
					&wt, &wus, &fus) == 5)
					snprintf(tuned[si][mode], sizeof tuned[0][0], "candidate %d of %d (%d timed); tuning saw %.1f vs %.1f us",
						wi, wn, wt, wus, fus);
				else
					snprintf(tuned[si][mode], sizeof tuned[0][0], "%.60s", plan);
				printf("ok %s  timed winner: median %.3f ms (min %.3f, max %.3f) %.0f TFLOP/s [%s]; heuristic first: "
					"median %.3f ms (min %.3f, max %.3f) %.0f TFLOP/s [%s]; %d rotating buffer sets\n",
					name, med, ms[0], ms[BENCH_ITERS - 1], tf, plan, med0, ms0[0], ms0[BENCH_ITERS - 1], tf0, plan0, nrot);
			}
			for (int r = 0; r < nrot; r++) {
				cu.cuMemFree_v2(A[r]);
				cu.cuMemFree_v2(B[r]);
			}
			cu.cuMemFree_v2(D);
			if (sa) cu.cuMemFree_v2(sa);
			if (sb) cu.cuMemFree_v2(sb);
			if (dsc) cu.cuMemFree_v2(dsc);
			if (am) cu.cuMemFree_v2(am);
		}
	}
	for (int i = 0; i <= BENCH_ITERS; i++) cu.cuEventDestroy_v2(ev[i]);
	printf("\nbenchmark, timed winner (MxKxN = tokens x in x out; TFLOP/s = 2MNK / median; ms = median of %d; took %.1f s)\n",
		BENCH_ITERS, now_s() - t0);
	printf("%-17s %-16s", "shape MxKxN", "what");
	for (int mo = 0; mo < BM_N; mo++) printf(" | %-22s", bm_name[mo]);
	printf(" | torch fp8 ref\n");
	for (int si = 0; si < nshape; si++) {
		char shp[40];
		snprintf(shp, sizeof shp, "%dx%dx%d", shapes[si].m, shapes[si].k, shapes[si].n);
		printf("%-17s %-16s", shp, shapes[si].what);
		for (int mo = 0; mo < BM_N; mo++) {
			if (isnan(tab[si][mo])) printf(" | %-22.15s", tabmsg[si][mo]);
			else printf(" | %8.3f ms %6.6s TF ", tab[si][mo], tabmsg[si][mo]);
		}
		if (shapes[si].ref_fp8 > 0) printf(" | %.0f TF\n", shapes[si].ref_fp8); else printf(" | -\n");
	}
	printf("\nheuristic first vs timed winner (same run, same buffers; TFLOP/s; gain = first ms / winner ms - 1)\n");
	printf("%-17s %-16s %-22s %9s %9s %7s  %s\n", "shape MxKxN", "what", "mode", "first TF", "timed TF", "gain",
		"winner");
	double worst = 0, sum = 0;
	int nrow = 0;
	for (int si = 0; si < nshape; si++)
		for (int mo = 0; mo < BM_N; mo++) {
			if (isnan(tab[si][mo])) continue;
			char shp[40];
			snprintf(shp, sizeof shp, "%dx%dx%d", shapes[si].m, shapes[si].k, shapes[si].n);
			double f = 2.0 * shapes[si].m * shapes[si].n * shapes[si].k / 1e9;
			double gain = first[si][mo] / tab[si][mo] - 1;
			printf("%-17s %-16s %-22s %9.0f %9.0f %+6.1f%%  %s\n", shp, shapes[si].what, bm_name[mo], f / first[si][mo],
				f / tab[si][mo], 100 * gain, tuned[si][mo]);
			if (gain < worst) worst = gain;
			sum += gain;
			nrow++;
		}
	if (nrow)
		printf("mean gain %+.1f%% over %d GEMMs; worst %+.1f%% (negative: the timed winner measured slower here than "
			"the heuristic's first, i.e. timing noise between the tuning and this measurement)\n",
			100 * sum / nrow, nrow, 100 * worst);
	free(p16);
	free(p8);
}

int main(int argc, char **argv)
{
	char why[256];
	setvbuf(stdout, NULL, _IOLBF, 0);
	nvfp4_rules();
	pad_rules();
	if (cudrv_load(why, sizeof why)) {
		printf("skip gemm: no GPU (%s)\n", why);
		return g_failed;
	}
	int ndev = 0;
	if (cu.cuDeviceGetCount(&ndev) || ndev < 1) {
		printf("skip gemm: no GPU (no CUDA device)\n");
		return g_failed;
	}
	int no_bench = argc > 1 && !strcmp(argv[1], "--no-bench");
	int only_gen_bench = argc > 1 && !strcmp(argv[1], "--gen-bench"), gen_sweep_only = argc > 1 && !strcmp(argv[1], "--gen-sweep");
	only_gen_bench |= gen_sweep_only;
	CUdevice dev;
	CUcontext ctx;
	CK(cu.cuDeviceGet(&dev, 0));
	CK(cu.cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(cu.cuCtxSetCurrent(ctx));
	char devname[128] = "";
	cu.cuDeviceGetName(devname, sizeof devname, dev);
	int maj = 0, min = 0, sms = 0;
	cu.cuDeviceGetAttribute(&maj, TG_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
	cu.cuDeviceGetAttribute(&min, TG_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
	cu.cuDeviceGetAttribute(&sms, TG_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
	g_cc = maj * 10 + min;
	printf("gemm test on %s (sm_%d, %d SMs)\n", devname, g_cc, sms);
	CUstream s;
	CK(cu.cuStreamCreate(&s, 0));
	char err[512];
	GemmCtx *g = gemm_ctx_create(0, err, sizeof err);
	if (!g) {
		printf("FAIL gemm_ctx_create: %s\n", err);
		return 1;
	}
	/* timing of the candidates is off by default (not yet run on a GPU); TEGEN_GEMM_TUNE=1 runs the
	 * correctness cases with it and the tuning checks below */
	const char *tune_env = getenv("TEGEN_GEMM_TUNE");
	int tune_on = tune_env && (!strcmp(tune_env, "1") || !strcmp(tune_env, "on"));
	gemm_ctx_set_tuning(g, tune_on);
	if (only_gen_bench) { /* the generated GEMM's variants beside cuBLASLt, nothing else */
		const size_t ntok = sizeof sweep_tokens / sizeof sweep_tokens[0];
		GenShape sweep[NSWEEP]; /* every sweep shape at every token count */
		for (size_t i = 0; i < NSWEEP; i++) {
			sweep[i] = sweep_shapes[i / ntok];
			sweep[i].m = sweep_tokens[i % ntok];
		}
		if (g_cc == 90)
			gen_bench(g, s, sms, gen_sweep_only ? sweep : gen_shapes,
				gen_sweep_only ? (int)NSWEEP : (int)(sizeof gen_shapes / sizeof gen_shapes[0]), argc > 2 ? atoi(argv[2]) : 0,
				argc > 2 && !isdigit((unsigned char)argv[2][0]) ? argv[2] : NULL); /* a number: the first N rows; else rows whose name holds it */
		else
			printf("skip gen bench: the generated GEMM runs on sm_90 only\n");
		gemm_ctx_destroy(g);
		return g_failed;
	}
	double t0 = now_s();
	const int E4 = DT_E4M3, E5 = DT_E5M2, BF = DT_BF16, F32 = DT_F32;
	const int T = GEMM_SCALE_TENSOR, NS = GEMM_SCALE_NONE, BL = GEMM_SCALE_BLOCK;
	Case cases[] = {
		{"bf16->fp32", 128, 256, 512, BF, BF, F32, NS, 0, 0, GEMM_EPI_NONE, 0, 0, 0, 1, 1, 1, 1, 0, 1e-5, 0, NULL},
		{"bf16->bf16", 128, 256, 512, BF, BF, BF, NS, 0, 0, GEMM_EPI_NONE, 0, 0, 0, 1, 1, 1, 1, 0, 4e-3, 0, NULL},
		{"bf16->bf16 odd 37x17x33", 37, 17, 33, BF, BF, BF, NS, 0, 0, GEMM_EPI_NONE, 0, 0, 0, 1, 1, 1, 1, 0, 4e-3, 1, NULL},
		{"bf16->bf16 alpha=0.5 +bias", 128, 256, 512, BF, BF, BF, NS, 0, 0, GEMM_EPI_BIAS, 0, 0, 0, 1, 1, 1, 0.5f, 0, 4e-3, 0, NULL},
		{"bf16->fp32 accumulate beta=0.75", 128, 256, 512, BF, BF, F32, NS, 0, 0, GEMM_EPI_NONE, 0, 1, 0, 1, 1, 1, 1, 0.75f, 1e-5, 0, NULL},
		{"bf16->bf16 gelu+bias", 128, 256, 512, BF, BF, BF, NS, 0, 0, GEMM_EPI_GELU_BIAS, 0, 0, 0, 1, 1, 1, 1, 0, 4e-3, 1, NULL},
		{"fp8 e4m3 tensor->fp32", 128, 256, 512, E4, E4, F32, T, 0, 0, GEMM_EPI_NONE, 0, 0, 0, 200.0f, 37.5f, 1, 1, 0, 5e-4, 0, NULL},
		{"fp8 e4m3 tensor->bf16", 128, 256, 512, E4, E4, BF, T, 0, 0, GEMM_EPI_NONE, 0, 0, 0, 200.0f, 37.5f, 1, 1, 0, 4.5e-3, 0, NULL},
		{"fp8 e5m2(A) x e4m3(B) ->bf16 (dgrad)", 128, 256, 512, E5, E4, BF, T, 0, 0, GEMM_EPI_NONE, 0, 0, 0, 3000.0f, 50.0f, 1, 1, 0, 4.5e-3, 0, NULL},
		{"fp8 e4m3(A) x e5m2(B) ->fp32", 128, 256, 512, E4, E5, F32, T, 0, 0, GEMM_EPI_NONE, 0, 0, 0, 100.0f, 3000.0f, 1, 1, 0, 5e-4, 0, NULL},
		{"fp8 tensor->e4m3 dscale+amax", 128, 256, 512, E4, E4, E4, T, 0, 0, GEMM_EPI_NONE, 0, 0, 1, 200.0f, 37.5f, 8.0f, 1, 0, 0.08, 0, NULL},
		{"fp8 tensor->e4m3 +bias amax", 128, 256, 512, E4, E4, E4, T, 0, 0, GEMM_EPI_BIAS, 0, 0, 1, 200.0f, 37.5f, 8.0f, 1, 0, 0.08, 0, NULL},
		{"fp8 tensor->bf16 +bias", 128, 256, 512, E4, E4, BF, T, 0, 0, GEMM_EPI_BIAS, 0, 0, 0, 200.0f, 37.5f, 1, 1, 0, 4.5e-3, 0, NULL},
		{"fp8 tensor->bf16 gelu+bias", 128, 256, 512, E4, E4, BF, T, 0, 0, GEMM_EPI_GELU_BIAS, 0, 0, 0, 200.0f, 37.5f, 1, 1, 0, 4.5e-3, 1, NULL},
		{"fp8 tensor->bf16 accumulate", 128, 256, 512, E4, E4, BF, T, 0, 0, GEMM_EPI_NONE, 0, 1, 0, 200.0f, 37.5f, 1, 1, 1.0f, 4.5e-3, 0, NULL},
		{"fp8 tensor->fp32 fast_accum", 128, 256, 1024, E4, E4, F32, T, 0, 0, GEMM_EPI_NONE, 1, 0, 0, 200.0f, 37.5f, 1, 1, 0, 5e-3, 0, NULL},
		{"fp8 tensor->bf16 odd M 5x160x64", 5, 160, 64, E4, E4, BF, T, 0, 0, GEMM_EPI_NONE, 0, 0, 0, 200.0f, 37.5f, 1, 1, 0, 4.5e-3, 1, NULL},
		{"fp8 block 1x128 x 128x128 ->bf16 (fprop)", 256, 384, 512, E4, E4, BF, BL, 0, 1, GEMM_EPI_NONE, 0, 0, 0, 1, 1, 1, 1, 0, 4.5e-3, 0, NULL},
		{"fp8 block 1x128 x 128x128 ->fp32", 256, 384, 512, E4, E4, F32, BL, 0, 1, GEMM_EPI_NONE, 0, 0, 0, 1, 1, 1, 1, 0, 5e-4, 0, NULL},
		{"fp8 block 1x128 x 1x128 ->bf16 (wgrad)", 256, 384, 512, E4, E4, BF, BL, 0, 0, GEMM_EPI_NONE, 0, 0, 0, 1, 1, 1, 1, 0, 4.5e-3, 0, NULL},
		{"fp8 block 128x128 x 1x128 ->bf16", 256, 384, 512, E4, E4, BF, BL, 1, 0, GEMM_EPI_NONE, 0, 0, 0, 1, 1, 1, 1, 0, 4.5e-3, 1, NULL},
		{"fp8 block ragged K=640 1x128 x 1x128", 128, 256, 640, E4, E4, BF, BL, 0, 0, GEMM_EPI_NONE, 0, 0, 0, 1, 1, 1, 1, 0, 4.5e-3, 1, NULL},
		{"fp8 block +bias ->bf16", 256, 384, 512, E4, E4, BF, BL, 0, 1, GEMM_EPI_BIAS, 0, 0, 0, 1, 1, 1, 1, 0, 4.5e-3, 1, NULL},
		/* shapes cuBLASLt's FP8 GEMMs cannot take, through gemm_run_padded (zero-padded copies) */
		{"padded fp8 tensor->fp32 K=217 (wgrad, odd tokens)", 64, 96, 217, E4, E4, F32, T, 0, 0, GEMM_EPI_NONE, 0, 0, 0, 200.0f, 37.5f, 1, 1, 0, 5e-4, 0, NULL},
		{"padded fp8 tensor->fp32 K=217 (driver copies)", 64, 96, 217, E4, E4, F32, T, 0, 0, GEMM_EPI_NONE, 0, 0, 0, 200.0f, 37.5f, 1, 1, 0, 5e-4, 0, NULL},
		{"padded fp8 e5m2 x e4m3 ->bf16 K=5 +bias", 48, 160, 5, E5, E4, BF, T, 0, 0, GEMM_EPI_BIAS, 0, 0, 0, 3000.0f, 50.0f, 1, 1, 0, 4.5e-3, 0, NULL},
		{"padded fp8 tensor->bf16 N=50 (D row stride)", 64, 50, 128, E4, E4, BF, T, 0, 0, GEMM_EPI_BIAS, 0, 0, 0, 200.0f, 37.5f, 1, 1, 0, 4.5e-3, 0, NULL},
		{"padded fp8 tensor->e4m3 N=37 K=33 amax", 16, 37, 33, E4, E4, E4, T, 0, 0, GEMM_EPI_NONE, 0, 0, 1, 200.0f, 37.5f, 8.0f, 1, 0, 0.08, 0, NULL},
		{"padded fp8 tensor->fp32 accumulate N=21 K=40", 24, 21, 40, E4, E4, F32, T, 0, 0, GEMM_EPI_NONE, 0, 1, 0, 200.0f, 37.5f, 1, 1, 0.75f, 5e-4, 0, NULL},
		{"padded fp8 block 1x128 x 1x128 ->bf16 M=5 N=6 K=200", 5, 6, 200, E4, E4, BF, BL, 0, 0, GEMM_EPI_NONE, 0, 0, 0, 1, 1, 1, 1, 0, 4.5e-3, 0, NULL},
		{"padded fp8 block 1x128 x 128x128 ->fp32 M=217 K=500", 217, 384, 500, E4, E4, F32, BL, 0, 1, GEMM_EPI_NONE, 0, 0, 0, 1, 1, 1, 1, 0, 5e-4, 0, NULL},
		{"padded fp8 block 1x128 x 128x128 ->bf16 K=544 (kb 5 -> 8)", 64, 256, 544, E4, E4, BF, BL, 0, 1, GEMM_EPI_NONE, 0, 0, 0, 1, 1, 1, 1, 0, 4.5e-3, 0, NULL},
		/* high-precision GEMMs whose row strides are not 16 bytes (an emulated MXFP8 / NVFP4 wgrad at odd tokens) */
		{"padded bf16->fp32 K=8191 (wgrad, odd tokens)", 64, 96, 8191, BF, BF, F32, NS, 0, 0, GEMM_EPI_NONE, 0, 0, 0, 1, 1, 1, 1, 0, 5e-4, 0, NULL},
		{"padded bf16->bf16 K=217 N=50 +bias", 48, 50, 217, BF, BF, BF, NS, 0, 0, GEMM_EPI_BIAS, 0, 0, 0, 1, 1, 1, 1, 0, 4.5e-3, 0, NULL},
		{"padded bf16->fp32 K=100 N=27 +bias (fp32 bias)", 216, 27, 100, BF, BF, F32, NS, 0, 0, GEMM_EPI_BIAS, 0, 0, 0, 1, 1, 1, 1, 0, 5e-4, 0, NULL},
		{"padded fp32->fp32 accumulate K=5 N=21", 24, 21, 5, F32, F32, F32, NS, 0, 0, GEMM_EPI_NONE, 0, 1, 0, 1, 1, 1, 1, 0.75f, 5e-4, 0, NULL},
		{"padded bf16->bf16 add C M=993 K=993", 993, 136, 993, BF, BF, BF, NS, 0, 0, GEMM_EPI_NONE, 0, 2, 0, 1, 1, 1, 1, 1.0f, 4.5e-3, 0, NULL},
		/* acc 2: D = A x B + C from a separate C (gemm_cast add; D itself starts as garbage) */
		{"bf16->bf16 add C", 128, 256, 512, BF, BF, BF, NS, 0, 0, GEMM_EPI_NONE, 0, 2, 0, 1, 1, 1, 1, 1.0f, 4.5e-3, 0, NULL},
		{"fp8 tensor->bf16 +bias add C", 128, 256, 512, E4, E4, BF, T, 0, 0, GEMM_EPI_BIAS, 0, 2, 0, 200.0f, 37.5f, 1, 1, 1.0f, 4.5e-3, 0, NULL},
		{"padded fp8 tensor->fp32 add C N=50 K=40", 24, 50, 40, E4, E4, F32, T, 0, 0, GEMM_EPI_NONE, 0, 2, 0, 200.0f, 37.5f, 1, 1, 1.0f, 5e-4, 0, NULL},
		{"padded fp8 block 1x128 x 128x128 ->fp32 add C M=993 N=528", 993, 528, 144, E4, E4, F32, BL, 0, 1, GEMM_EPI_NONE, 0, 2, 0, 1, 1, 1, 1, 1.0f, 5e-4, 0, NULL},
		/* M % 4 != 0 alone: split at M rounded down to 4 (in place) and a padded 4-row tail */
		{"split fp8 block 1x128 x 128x128 ->bf16 +bias M=1021", 1021, 384, 512, E4, E4, BF, BL, 0, 1, GEMM_EPI_BIAS, 0, 0, 0, 1, 1, 1, 1, 0, 4.5e-3, 0, NULL},
		{"split fp8 block 1x128 x 1x128 ->bf16 M=217", 217, 256, 256, E4, E4, BF, BL, 0, 0, GEMM_EPI_NONE, 0, 0, 0, 1, 1, 1, 1, 0, 4.5e-3, 0, NULL},
		{"split fp8 block 1x128 x 1x128 ->fp32 accumulate M=6", 6, 128, 384, E4, E4, F32, BL, 0, 0, GEMM_EPI_NONE, 0, 1, 0, 1, 1, 1, 1, 1.0f, 5e-4, 0, NULL},
		{"padded fp8 block 1x128 x 1x128 ->bf16 add C M=77 N=100", 77, 100, 256, E4, E4, BF, BL, 0, 0, GEMM_EPI_NONE, 0, 2, 0, 1, 1, 1, 1, 1.0f, 4.5e-3, 0, NULL},
		{"padded fp8 block 128x128 x 1x128 ->fp32 M=130 N=7 K=300", 130, 7, 300, E4, E4, F32, BL, 1, 0, GEMM_EPI_NONE, 0, 0, 0, 1, 1, 1, 1, 0, 5e-4, 0, NULL},
		/* the generated GEMM (templates/gemm_fp8.cu): odd M and N, K a multiple of 16, mixed kinds, every output
		 * type, both accumulator modes, each tile; 8 CTAs (a persistent CTA walks many tiles) below M 2000 */
		{"gen n256s3 fast ->bf16 1x16x16", 1, 16, 16, E4, E4, BF, T, 0, 0, GEMM_EPI_NONE, 1, 0, 0, 200.0f, 37.5f, 1, 1, 0, 4.5e-3, 0, "n256s3"},
		{"gen n256s3 fast ->bf16 129x200x144", 129, 200, 144, E4, E4, BF, T, 0, 0, GEMM_EPI_NONE, 1, 0, 0, 200.0f, 37.5f, 1, 1, 0, 4.5e-3, 0, "n256s3"},
		{"gen n256s3 fast e5m2 x e4m3 ->bf16 217x1000x48", 217, 1000, 48, E5, E4, BF, T, 0, 0, GEMM_EPI_NONE, 1, 0, 0, 3000.0f, 50.0f, 1, 1, 0, 4.5e-3, 0, "n256s3"},
		{"gen n256s3 fast ->bf16 N=300 (register stores) 300x300x1040", 300, 300, 1040, E4, E4, BF, T, 0, 0, GEMM_EPI_NONE, 1, 0, 0, 200.0f, 37.5f, 1, 1, 0, 5e-3, 0, "n256s3"},
		{"gen n256s3 fast ->bf16 2100x520x512 (tile groups)", 2100, 520, 512, E4, E4, BF, T, 0, 0, GEMM_EPI_NONE, 1, 0, 0, 200.0f, 37.5f, 1, 1, 0, 5e-3, 0, "n256s3"},
		{"gen n128s4 fast ->fp16 64x136x272", 64, 136, 272, E4, E4, DT_F16, T, 0, 0, GEMM_EPI_NONE, 1, 0, 0, 200.0f, 37.5f, 1, 1, 0, 5e-3, 0, "n128s4"},
		{"gen n192s4p promote e5m2 x e4m3 ->bf16 257x392x1040 (dgrad)", 257, 392, 1040, E5, E4, BF, T, 0, 0, GEMM_EPI_NONE, 0, 0, 0, 3000.0f, 50.0f, 1, 1, 0, 4.5e-3, 0, "n192s4p"},
		{"gen n192s3p promote e4m3 x e5m2 ->fp32 993x264x208 (wgrad)", 993, 264, 208, E4, E5, F32, T, 0, 0, GEMM_EPI_NONE, 0, 0, 0, 100.0f, 3000.0f, 1, 1, 0, 5e-4, 0, "n192s3p"},
		{"gen n192s3p promote ->fp32 N=21 (register stores) 100x21x2048", 100, 21, 2048, E4, E4, F32, T, 0, 0, GEMM_EPI_NONE, 0, 0, 0, 200.0f, 37.5f, 1, 1, 0, 5e-4, 0, "n192s3p"},
		{"gen n128s4p promote ->fp32 5x4096x4096", 5, 4096, 4096, E4, E4, F32, T, 0, 0, GEMM_EPI_NONE, 0, 0, 0, 200.0f, 37.5f, 1, 1, 0, 5e-4, 0, "n128s4p"},
		{"gen n256s2 fast ->fp32 130x512x256", 130, 512, 256, E4, E4, F32, T, 0, 0, GEMM_EPI_NONE, 1, 0, 0, 200.0f, 37.5f, 1, 1, 0, 5e-3, 0, "n256s2"},
		/* the generated GEMM with block scales (TG_SCALE 1: B 128x128, 2: B 1x128): tiles straddling B's 128-column
		 * blocks (n192), a partial last block of K, odd M, mixed kinds, every output type */
		{"gen n192s4p block 1x128 x 128x128 ->bf16 257x392x1040 (fprop)", 257, 392, 1040, E4, E4, BF, BL, 0, 1, GEMM_EPI_NONE, 0, 0, 0, 1, 1, 1, 1, 0, 4.5e-3, 0, "n192s4p"},
		{"gen n192s4p block e5m2 x e4m3 128x128 ->fp16 993x768x4096 (dgrad)", 993, 768, 4096, E5, E4, DT_F16, BL, 0, 1, GEMM_EPI_NONE, 0, 0, 0, 1, 1, 1, 1, 0, 4.5e-3, 0, "n192s4p"},
		{"gen n128s4p block 1x128 x 128x128 ->fp32 5x200x144", 5, 200, 144, E4, E4, F32, BL, 0, 1, GEMM_EPI_NONE, 0, 0, 0, 1, 1, 1, 1, 0, 5e-4, 0, "n128s4p"},
		{"gen n192s3p block 1x128 x 1x128 ->fp32 993x264x208 (wgrad)", 993, 264, 208, E4, E5, F32, BL, 0, 0, GEMM_EPI_NONE, 0, 0, 0, 1, 1, 1, 1, 0, 5e-4, 0, "n192s3p"},
		{"gen n192s3p block 1x128 x 1x128 ->fp32 4200x392x256 (tile groups)", 4200, 392, 256, E4, E4, F32, BL, 0, 0, GEMM_EPI_NONE, 0, 0, 0, 1, 1, 1, 1, 0, 5e-4, 0, "n192s3p"},
		{"gen n192s4p block 1x128 x 1x128 ->bf16 N=20 (register stores) 217x20x1000", 217, 20, 1008, E4, E4, BF, BL, 0, 0, GEMM_EPI_NONE, 0, 0, 0, 1, 1, 1, 1, 0, 4.5e-3, 0, "n192s4p"},
	};
	int ncase = (int)(sizeof cases / sizeof cases[0]);
	for (int i = 0; i < ncase; i++) run_case(g, s, &cases[i]);
	plan_reuse(g, s);

	/* validation errors */
	GemmDesc e = {.m = 128, .n = 256, .k = 4100, .a_dtype = E4, .b_dtype = E4, .d_dtype = BF, .scale_mode = T};
	expect_err(g, s, "error FP8 K%16", e, GEMM_EINVAL, "K % 16 == 0 (K = 4100)");
	e.k = 512;
	e.n = 100;
	expect_err(g, s, "error FP8 D row stride", e, GEMM_EINVAL, "multiple of 16 bytes (N = 100)");
	e.n = 256;
	e.a_dtype = e.b_dtype = E5;
	expect_err(g, s, "error e5m2 x e5m2", e, GEMM_EINVAL, "E5M2 x E5M2");
	e.a_dtype = e.b_dtype = E4;
	e.d_dtype = E4;
	e.accumulate = 1;
	expect_err(g, s, "error accumulate into FP8", e, GEMM_EINVAL, "accumulate");
	e.accumulate = 0;
	e.d_dtype = BF;
	e.scale_mode = BL;
	e.b_block128x128 = 1;
	e.k = 640;
	expect_err(g, s, "error block 128x128 ceil(K/128)%4", e, GEMM_EINVAL, "ceil(K/128) % 4 == 0");
	e.k = 512;
	e.a_block128x128 = 1;
	expect_err(g, s, "error block 128x128 both", e, GEMM_EINVAL, "not 128x128 on both");
	e.a_block128x128 = 0;
	e.fast_accum = 1;
	expect_err(g, s, "error block fast_accum", e, GEMM_EINVAL, "fast_accum");
	e.fast_accum = 0;
	e.b_block128x128 = 0;
	e.scale_mode = GEMM_SCALE_MXFP8;
	if (g_cc < 100) expect_err(g, s, "error MXFP8 on sm_90 -> ENOTSUP", e, GEMM_ENOTSUP, "MXFP8 GEMM needs sm_100");
	else printf("skip MXFP8 native GEMM: needs swizzled E8M0 scales from the swizzle pass; not tested here\n");
	nvfp4_gpu(g, s);
	GemmDesc f4 = {.m = 128, .n = 256, .k = 48, .a_dtype = DT_E2M1, .b_dtype = DT_E2M1, .d_dtype = BF,
		.scale_mode = GEMM_SCALE_NVFP4};
	expect_err(g, s, "error NVFP4 K%32 (rules before the arch)", f4, GEMM_EINVAL, "K % 32 == 0");
	GemmDesc h = {.m = 64, .n = 64, .k = 64, .a_dtype = BF, .b_dtype = DT_F16, .d_dtype = BF};
	expect_err(g, s, "error mixed bf16 x fp16", h, GEMM_EINVAL, "one dtype");
	if (tune_on)
		tuning_checks();
	else
		printf("skip tuning: GEMM algorithm timing is off by default until it has run on a GPU (TEGEN_GEMM_TUNE=1)\n");
	printf("correctness took %.1f s\n", now_s() - t0);

	printf("\ncorrectness summary\n%-44s %-10s %-9s %s\n", "case", "rel_err", "tol", "status");
	for (int i = 0; i < g_nrows; i++)
		printf("%-44s %-10.3e %-9.1e %s\n", g_rows[i].name, g_rows[i].err, g_rows[i].tol, g_rows[i].status);
	printf("\n");

	if (!no_bench) {
		GemmCtx *gfirst = gemm_ctx_create(0, err, sizeof err);
		if (!gfirst) {
			printf("FAIL gemm_ctx_create (bench, tuning off): %s\n", err);
			return 1;
		}
		gemm_ctx_set_tuning(gfirst, 0);
		bench(g, gfirst, s);
		gemm_ctx_destroy(gfirst);
	}
	gemm_ctx_destroy(g);
	cu.cuStreamDestroy_v2(s);
	cu.cuDevicePrimaryCtxRelease(dev);
	printf("%s gemm\n", g_failed ? "FAIL" : "ok");
	return g_failed ? 1 : 0;
}
