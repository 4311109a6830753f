/* test_ref.c: the CPU reference ops on odd shapes (1 row, 5x160, 217x256,
 * 993x512): norms against a direct double computation and their residual
 * rounding, GLU formulas at known points, every quantize -> dequantize
 * round trip within its format's error bound, all-zero blocks, inf/NaN
 * inputs, layouts of scales and transposes, the GEMM against a double loop,
 * and that the scale swizzle is a permutation. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ref.h"

static int failed;
static void res(const char *name, int ok, const char *det)
{
	if (ok)
		printf("ok %s\n", name);
	else {
		printf("FAIL %s: %s\n", name, det);
		failed = 1;
	}
}

static uint64_t rs = 88172645463325252ull;
static float urand(void) /* uniform in [-1, 1) */
{
	rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17;
	return (float)((double)(rs >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

static const int shapes[][2] = {{1, 64}, {5, 160}, {217, 256}, {993, 512}};

static void test_norms(void)
{
	char det[200] = "";
	int ok = 1;
	for (int s = 0; s < 4; s++) {
		int R = shapes[s][0], C = shapes[s][1];
		size_t n = (size_t)R * C;
		uint16_t *in = malloc(n * 2), *resid = malloc(n * 2), *rout = malloc(n * 2);
		float *g = malloc(C * 4), *b = malloc(C * 4), *y = malloc(n * 4), *rsig = malloc(R * 4);
		for (size_t i = 0; i < n; i++) {
			in[i] = tg_f32_to_bf16(urand() * 3);
			resid[i] = tg_f32_to_bf16(urand());
		}
		for (int c = 0; c < C; c++) {
			g[c] = urand() * 0.1f;
			b[c] = urand();
		}
		ref_rmsnorm(in, resid, rout, REF_BF16, g, 1, 1e-5f, R, C, y, rsig);
		for (int r = 0; r < R && ok; r++) {
			double ss = 0;
			for (int c = 0; c < C; c++) {
				size_t i = (size_t)r * C + c;
				float sum = tg_bf16_to_f32(tg_f32_to_bf16(tg_bf16_to_f32(in[i]) + tg_bf16_to_f32(resid[i])));
				if (tg_bf16_to_f32(rout[i]) != sum) {
					ok = 0;
					snprintf(det, sizeof det, "residual_out mismatch at %zu", i);
				}
				ss += (double)sum * sum;
			}
			double rr = 1 / sqrt(ss / C + 1e-5);
			for (int c = 0; c < C; c++) {
				size_t i = (size_t)r * C + c;
				double want = tg_bf16_to_f32(rout[i]) * rr * (g[c] + 1.0);
				if (fabs(y[i] - want) > 1e-6 * fabs(want) + 1e-30) {
					ok = 0;
					snprintf(det, sizeof det, "rmsnorm %dx%d (%d,%d): %g vs %g", R, C, r, c, y[i], want);
				}
			}
		}
		ref_layernorm(in, NULL, NULL, REF_BF16, g, b, 0, 1e-5f, R, C, y, NULL, rsig, NULL);
		for (int r = 0; r < R && ok; r++) {
			double m = 0, v = 0;

			for (int c = 0; c < C; c++)
				m += tg_bf16_to_f32(in[(size_t)r * C + c]);
			m /= C;
			for (int c = 0; c < C; c++) {
				double d = tg_bf16_to_f32(in[(size_t)r * C + c]) - m;
				v += d * d;
			}
			double rr = 1 / sqrt(v / C + 1e-5);
			for (int c = 0; c < C; c++) {
				double want = (tg_bf16_to_f32(in[(size_t)r * C + c]) - m) * rr * g[c] + b[c];
				if (fabs(y[(size_t)r * C + c] - want) > 1e-6 * fabs(want) + 1e-7) {
					ok = 0;
					snprintf(det, sizeof det, "layernorm %dx%d (%d,%d)", R, C, r, c);
				}
			}
		}
		free(in); free(resid); free(rout); free(g); free(b); free(y); free(rsig);
	}
	res("norms_odd_shapes", ok, det);
}

static void test_glu(void)
{
	float lim = 7.0f, al = 1.702f;
	int ok = fabsf(ref_glu1(REF_SWIGLU, 1.0f, 2.0f, 0, 0) - (float)(2.0 / (1 + exp(-1.0)))) < 1e-7f &&
	         ref_glu1(REF_REGLU, -1.0f, 5.0f, 0, 0) == 0.0f && ref_glu1(REF_REGLU, 2.0f, 3.0f, 0, 0) == 6.0f &&
	         ref_glu1(REF_SREGLU, 3.0f, 2.0f, 0, 0) == 18.0f &&
	         fabsf(ref_glu1(REF_GEGLU, 1.0f, 1.0f, 0, 0) - 0.841192f) < 1e-5f &&
	         fabsf(ref_glu1(REF_QGEGLU, 1.0f, 1.0f, 0, 0) - (float)(1 / (1 + exp(-1.702)))) < 1e-7f &&
	         /* clamped: a = min(10, 7), b = clamp(-9) = -7 -> (b + 1) = -6 */
	         fabsf(ref_glu1(REF_CLAMPED_SWIGLU, 10.0f, -9.0f, lim, al) -
	               (float)(7.0 / (1 + exp(-1.702 * 7)) * -6.0)) < 1e-5f &&
	         ref_glu1(REF_CLAMPED_SWIGLU, 0.0f, 1.0f, lim, al) == 0.0f;
	/* on a [rows][2*cols] buffer: gate half first */
	float in[2 * 2 * 3], out[2 * 3];
	for (int i = 0; i < 12; i++)
		in[i] = (float)i;
	ref_glu(REF_REGLU, in, REF_F32, 2, 3, 0, 0, out);
	ok = ok && out[0] == 0 * 3 && out[1] == 1 * 4 && out[5] == 8 * 11;
	res("glu_formulas_and_layout", ok, "value mismatch");
	float nanin[2] = {NAN, 1.0f};
	res("glu_nan_propagates", isnan(ref_glu1(REF_SWIGLU, nanin[0], nanin[1], 0, 0)), "not NaN");
}

/* max relative error of dequant(quant(x)) vs x over nonzero |x| >= floor */
static void test_quant(void)
{
	char det[200];
	for (int s = 0; s < 4; s++) {
		int R = shapes[s][0], C = shapes[s][1];
		size_t n = (size_t)R * C;
		float *x = malloc(n * 4), *y = malloc(n * 4), *xt = malloc(n * 4);
		uint8_t *q = malloc(n), *qt = malloc(n);
		for (size_t i = 0; i < n; i++)
			x[i] = urand() * ldexpf(1, (int)(i % 7) - 3);
		if (s == 3) /* an all-zero 128x128 block and a zero row-block */
			for (int r = 128; r < 256; r++)
				for (int c = 0; c < 128; c++)
					x[(size_t)r * C + c] = 0;
		ref_transpose(x, R, C, xt);
		float amax = ref_amax(x, n);
		int ok = 1;
		/* per-tensor current scaling */
		float sc = tg_current_scale(amax, 448, 0, 0), si, am;
		ref_quant_tensor(x, R, C, TG_FMT_E4M3, sc, q, qt, &am, &si);
		ref_dequant_tensor(q, n, TG_FMT_E4M3, si, y);
		for (size_t i = 0; i < n && ok; i++)
			if (fabsf(y[i] - x[i]) > fabsf(x[i]) / 16 + ldexpf(1, -10) * si * 1.01f)
				ok = 0, snprintf(det, sizeof det, "tensor i=%zu %g vs %g", i, y[i], x[i]);
		for (int r = 0; r < R && ok; r++)
			for (int c = 0; c < C; c++)
				if (qt[(size_t)c * R + r] != q[(size_t)r * C + c])
					ok = 0, snprintf(det, sizeof det, "transpose layout");
		snprintf(det + 100, 50, "%dx%d", R, C);
		char nm[64];
		snprintf(nm, sizeof nm, "quant_tensor_e4m3_%dx%d", R, C);
		res(nm, ok && am == amax, det);
		/* block 1x128 */
		int nbc = (C + 127) / 128, nbr = (R + 127) / 128;
		float *s1 = malloc(sizeof(float) * (size_t)nbc * R), *s1t = malloc(sizeof(float) * (size_t)nbr * C);
		ref_quant_block1x128(x, R, C, TG_FMT_E4M3, 0, 1, q, s1, qt, s1t);
		ref_dequant_block1x128(q, s1, R, C, TG_FMT_E4M3, y);
		ok = 1;
		for (size_t i = 0; i < n && ok; i++)
			if (fabsf(y[i] - x[i]) > fabsf(x[i]) / 16 + ldexpf(1, -9) * s1[(i % C / 128) * R + i / C])
				ok = 0, snprintf(det, sizeof det, "1x128 i=%zu %g vs %g", i, y[i], x[i]);
		ref_dequant_block1x128(qt, s1t, C, R, TG_FMT_E4M3, y); /* the transpose as its own rowwise */
		for (size_t i = 0; i < n && ok; i++)
			if (fabsf(y[i] - xt[i]) > fabsf(xt[i]) / 16 + ldexpf(1, -9) * s1t[(i % R / 128) * C + i / R])
				ok = 0, snprintf(det, sizeof det, "1x128 T i=%zu", i);
		snprintf(nm, sizeof nm, "quant_block1x128_%dx%d", R, C);
		res(nm, ok, det);
		/* block 128x128 */
		float *s2 = malloc(sizeof(float) * (size_t)nbc * nbr), *s2t = malloc(sizeof(float) * (size_t)nbc * nbr);
		ref_quant_block128x128(x, R, C, TG_FMT_E4M3, 0, 1, q, s2, qt, s2t);
		ref_dequant_block128x128(q, s2, R, C, TG_FMT_E4M3, y);
		ok = 1;
		for (size_t i = 0; i < n && ok; i++)
			if (fabsf(y[i] - x[i]) > fabsf(x[i]) / 16 + ldexpf(1, -9) * s2[(i / C / 128) * nbc + (i % C) / 128])
				ok = 0, snprintf(det, sizeof det, "128x128 i=%zu %g vs %g", i, y[i], x[i]);
		ref_dequant_block128x128(qt, s2t, C, R, TG_FMT_E4M3, y);
		for (size_t i = 0; i < n && ok; i++)
			if (fabsf(y[i] - xt[i]) > fabsf(xt[i]) / 16 + ldexpf(1, -9) * s2t[(i / R / 128) * nbr + (i % R) / 128])
				ok = 0, snprintf(det, sizeof det, "128x128 T i=%zu", i);
		if (s == 3 && s2[1 * nbc + 0] != 1.0f)
			ok = 0, snprintf(det, sizeof det, "zero block scale_inv %g", s2[nbc]);
		snprintf(nm, sizeof nm, "quant_block128x128_%dx%d", R, C);
		res(nm, ok, det);
		/* MXFP8 */
		int mb = (C + 31) / 32, mbt = (R + 31) / 32;
		uint8_t *e = malloc((size_t)R * mb), *et = malloc((size_t)C * mbt);
		ref_quant_mxfp8(x, R, C, TG_FMT_E4M3, q, e, qt, et);
		ref_dequant_mxfp8(q, e, R, C, TG_FMT_E4M3, 0, y);
		ok = 1;
		for (size_t i = 0; i < n && ok; i++)
			if (fabsf(y[i] - x[i]) > fabsf(x[i]) / 16 + tg_e8m0_to_f32(e[(i / C) * mb + (i % C) / 32]) * ldexpf(1, -9))
				ok = 0, snprintf(det, sizeof det, "mxfp8 i=%zu %g vs %g", i, y[i], x[i]);
		ref_dequant_mxfp8(qt, et, C, R, TG_FMT_E4M3, 1, y);
		for (size_t i = 0; i < n && ok; i++)
			if (fabsf(y[i] - xt[i]) > fabsf(xt[i]) / 16 + tg_e8m0_to_f32(et[(i % R) / 32 * C + i / R]) * ldexpf(1, -9))
				ok = 0, snprintf(det, sizeof det, "mxfp8 T i=%zu", i);
		snprintf(nm, sizeof nm, "quant_mxfp8_%dx%d", R, C);
		res(nm, ok, det);
		/* swizzle is a permutation onto the unpadded positions */
		size_t sz = ref_swizzle_size(R, mb);
		uint8_t *cnt = calloc(sz, 1);
		ok = 1;
		for (int r = 0; r < R; r++)
			for (int c = 0; c < mb; c++) {
				size_t k = ref_swizzle_index(r, c, mb);
				if (k >= sz || cnt[k]++)
					ok = 0;
			}
		snprintf(nm, sizeof nm, "swizzle_permutation_%dx%d", R, mb);
		res(nm, ok, "collision or out of range");
		free(cnt);
		/* NVFP4 1D, 2D, SR */
		int nb = (C + 15) / 16;
		uint8_t *q4 = malloc((size_t)R * ((C + 1) / 2)), *s4 = malloc((size_t)R * nb);
		for (int mode = 0; mode < 3; mode++) {
			RefNvfp4 o = {mode == 1, mode == 2, 42, 3, -1.0f};
			float se;
			ref_quant_nvfp4(x, R, C, &o, q4, s4, &se);
			ref_dequant_nvfp4(q4, s4, R, C, se, y);
			ok = 1;
			for (size_t i = 0; i < n && ok; i++) {
				/* block amax maps to <= 6 * (1 + 2^-4); error <= one e2m1 step (2 at top, /6 of amax) */
				float bs = tg_e4m3_to_f32(s4[(i / C) * nb + (i % C) / 16]) / se;
				if (fabsf(y[i] - x[i]) > 2.0f * bs * 1.07f * (mode == 2 ? 1.0f : 0.5f) + 1e-30f)
					ok = 0, snprintf(det, sizeof det, "nvfp4 mode %d i=%zu %g vs %g (bs %g)", mode, i, y[i], x[i], bs);
			}
			snprintf(nm, sizeof nm, "quant_nvfp4_%s_%dx%d", mode == 0 ? "1d" : mode == 1 ? "2d" : "sr", R, C);
			res(nm, ok, det);
		}
		free(q4); free(s4); free(e); free(et); free(s1); free(s1t); free(s2); free(s2t);
		free(x); free(y); free(xt); free(q); free(qt);
	}
}

static void test_specials(void)
{
	float x[64];
	for (int i = 0; i < 64; i++)
		x[i] = (float)i / 8;
	x[3] = NAN;
	x[5] = INFINITY;
	x[6] = -INFINITY;
	uint8_t q[64], e[2];
	res("amax_nan_ignored_inf_counts", isinf(ref_amax(x, 64)) && ref_amax(x, 3) == 0.25f, "amax");
	ref_quant_tensor(x, 1, 64, TG_FMT_E4M3, 1.0f, q, NULL, NULL, NULL);
	res("tensor_nan_inf_codes", q[3] == 0x7F && q[5] == 0x7E && q[6] == 0xFE, "codes");
	ref_quant_mxfp8(x, 1, 64, TG_FMT_E4M3, q, e, NULL, NULL);
	res("mxfp8_inf_block", e[0] == 0xFF && isnan(tg_e4m3_to_f32(q[0])) == 1, "inf amax -> 0xFF, elements NaN");
	float z[32] = {0};
	ref_quant_mxfp8(z, 1, 32, TG_FMT_E4M3, q, e, NULL, NULL);
	res("mxfp8_zero_block", e[0] == 0 && q[0] == 0, "zero block");
	uint8_t q4[16], s4[2];
	RefNvfp4 o = {0, 0, 0, 0, -1.0f};
	float se;
	ref_quant_nvfp4(z, 1, 32, &o, q4, s4, &se);
	res("nvfp4_zero_tensor", se == 1.0f && s4[0] == 0 && q4[0] == 0, "zero tensor");
}

static void test_gemm(void)
{
	int dims[][3] = {{1, 1, 1}, {3, 5, 7}, {17, 9, 33}, {64, 48, 128}};
	for (int d = 0; d < 4; d++) {
		int M = dims[d][0], N = dims[d][1], K = dims[d][2];
		float *A = malloc(sizeof(float) * M * K), *B = malloc(sizeof(float) * N * K), *Y = malloc(sizeof(float) * M * N);
		for (int i = 0; i < M * K; i++) A[i] = urand();
		for (int i = 0; i < N * K; i++) B[i] = urand();
		ref_gemm(A, B, M, N, K, Y);
		int ok = 1;
		for (int m = 0; m < M; m++)
			for (int n = 0; n < N; n++) {
				double s = 0, sa = 0;
				for (int k = 0; k < K; k++) {
					s += (double)A[m * K + k] * B[n * K + k];
					sa += fabs((double)A[m * K + k] * B[n * K + k]);
				}
				if (fabs(Y[m * N + n] - s) > K * 6e-8 * sa + 1e-30)
					ok = 0;
			}
		char nm[64];
		snprintf(nm, sizeof nm, "gemm_%dx%dx%d", M, N, K);
		res(nm, ok, "vs double loop");
		free(A); free(B); free(Y);
	}
}

/* The plain triple loop ref_gemm must match bit for bit (its numerics contract). */
static void gemm_plain(const float *A, const float *B, int M, int N, int K, float *y)
{
	for (int m = 0; m < M; m++)
		for (int n = 0; n < N; n++) {
			float acc = 0.0f;
			for (int k = 0; k < K; k++)
				acc += A[(size_t)m * K + k] * B[(size_t)n * K + k];
			y[(size_t)m * N + n] = acc;
		}
}

/* The blocked, threaded ref_gemm against the plain loop: shapes across every block
 * edge (MR 4, NR 8, KC 256, NC 64, MC 256), with -0, inf and NaN inputs, on 1 and
 * on 3 threads (TEGEN_THREADS): the same bits. */
static void test_gemm_bits(void)
{
	int dims[][3] = {{1, 1, 0}, {1, 3, 1}, {5, 9, 257}, {259, 130, 600}, {4, 64, 256}, {300, 7, 3}};
	for (int d = 0; d < 6; d++) {
		int M = dims[d][0], N = dims[d][1], K = dims[d][2];
		size_t na = (size_t)M * K, nb = (size_t)N * K, ny = (size_t)M * N;
		float *A = malloc(sizeof(float) * (na + 1)), *B = malloc(sizeof(float) * (nb + 1));
		float *want = malloc(sizeof(float) * ny), *got = malloc(sizeof(float) * ny);
		for (size_t i = 0; i < na; i++) A[i] = urand() * (i % 7 == 0 ? 1e30f : 1.0f);
		for (size_t i = 0; i < nb; i++) B[i] = urand() * (i % 5 == 0 ? 1e-30f : 1.0f);
		if (na > 20) { A[3] = -0.0f; A[11] = INFINITY; A[17] = NAN; }
		gemm_plain(A, B, M, N, K, want);
		int ok = 1;
		const char *threads[] = {"1", "3"};
		for (int t = 0; t < 2; t++) {
			setenv("TEGEN_THREADS", threads[t], 1);
			memset(got, 0x55, sizeof(float) * ny);
			ref_gemm(A, B, M, N, K, got);
			ok &= memcmp(got, want, sizeof(float) * ny) == 0;
		}
		unsetenv("TEGEN_THREADS");
		char nm[64];
		snprintf(nm, sizeof nm, "gemm_bits_%dx%dx%d", M, N, K);
		res(nm, ok, "blocked/threaded ref_gemm differs from the plain loop");
		free(A); free(B); free(want); free(got);
	}
}

int main(void)
{
	test_norms();
	test_glu();
	test_quant();
	test_specials();
	test_gemm();
	test_gemm_bits();
	return failed;
}
