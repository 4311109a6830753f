/* gemm.c: the reference GEMM, y[M][N] = A[M][K] * B[N][K]^T with FP32
 * accumulation in k order, blocked for the cache and spread over threads.
 *
 * Every output element is the same sequence of FP32 operations as the plain
 * triple loop (acc = 0; for k: acc = acc + a*b, each product rounded before the
 * add), so results are bit-identical to it for any thread count: a thread owns
 * whole output elements; blocking over k only parks the running FP32 sum in y
 * between blocks (a float store and load are exact); vectorizing runs
 * neighbouring columns in separate lanes, never splitting one sum. The build
 * uses -std=c11, under which GCC does not contract a*b+acc into an FMA.
 *
 * Tasks: blocks of NC columns x MC rows. A task packs its block of B, KC
 * values of k at a time, as [NR columns][KC][NR] panels (zero past N) and
 * runs an MR x NR register micro-kernel over its rows (rows past M read
 * row 0 and are not stored). */
#include "ref.h"
#include "parallel.h"

#include <stdlib.h>
#include <string.h>

enum { MR = 8, NR = 8, KC = 256, NC = 64, MC = 256 };
typedef float v8f __attribute__((vector_size(32)));

typedef struct GemmJob {
	const float *A, *B;
	int M, N, K, nblocks_m;
	float *y;
} GemmJob;

static int imin(int a, int b) { return a < b ? a : b; }
static int cdiv(int a, int b) { return (a + b - 1) / b; }

/* bp[p][k][NR] = B[n0 + p*NR + j][k0 + k] for the nc columns from n0; zero past them. */
static void pack_b(const GemmJob *j, int n0, int nc, int k0, int kc, float *bp)
{
	for (int p = 0; p < cdiv(nc, NR); p++)
		for (int c = 0; c < NR; c++) {
			int n = p * NR + c;
			float *dst = bp + (size_t)p * kc * NR + c;
			const float *src = j->B + (size_t)(n0 + n) * j->K + k0;
			for (int k = 0; k < kc; k++)
				dst[(size_t)k * NR] = n < nc ? src[k] : 0.0f;
		}
}

/* The MR x NR block of y at (m0, n0) (mr x nr of it valid): continue its sums
 * over kc values of k from k0 (first: start them from 0). On x86-64 GCC also
 * builds an AVX2 clone (8 lanes a register) and picks it at load time. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx2", "default")))
#endif
static void micro(const GemmJob *j, int m0, int mr, int n0, int nr, int k0, int kc, const float *bp, int first)
{
	const float *a[MR];
	float acc_mem[MR][NR] = {{0}};
	v8f acc[MR];
	for (int i = 0; i < MR; i++) {
		a[i] = j->A + (size_t)(i < mr ? m0 + i : m0) * j->K + k0;
		if (!first && i < mr)
			memcpy(acc_mem[i], j->y + (size_t)(m0 + i) * j->N + n0, sizeof(float) * (size_t)nr);
		memcpy(&acc[i], acc_mem[i], sizeof(v8f));
	}
	for (int k = 0; k < kc; k++) {
		v8f b;
		memcpy(&b, bp + (size_t)k * NR, sizeof b);
		for (int i = 0; i < MR; i++) {
			float s = a[i][k];
			v8f av = {s, s, s, s, s, s, s, s};
			acc[i] = acc[i] + av * b;
		}
	}
	for (int i = 0; i < mr; i++) {
		memcpy(acc_mem[i], &acc[i], sizeof(v8f));
		memcpy(j->y + (size_t)(m0 + i) * j->N + n0, acc_mem[i], sizeof(float) * (size_t)nr);
	}
}

/* Task t: columns block t / nblocks_m, rows block t % nblocks_m. */
static void gemm_task(void *ctx, int t)
{
	const GemmJob *j = ctx;
	int n0 = t / j->nblocks_m * NC, nc = imin(NC, j->N - n0);
	int mb0 = t % j->nblocks_m * MC, mb1 = imin(j->M, mb0 + MC);
	float *bp = ref_scratch((size_t)cdiv(NC, NR) * NR * KC);
	for (int k0 = 0; k0 < j->K; k0 += KC) {
		int kc = imin(KC, j->K - k0);
		pack_b(j, n0, nc, k0, kc, bp);
		for (int m0 = mb0; m0 < mb1; m0 += MR)
			for (int p = 0; p * NR < nc; p++)
				micro(j, m0, imin(MR, mb1 - m0), n0 + p * NR, imin(NR, nc - p * NR), k0, kc,
					bp + (size_t)p * kc * NR, k0 == 0);
	}
	free(bp);
}

void ref_gemm(const float *A, const float *B, int M, int N, int K, float *y)
{
	if (M <= 0 || N <= 0)
		return;
	if (K <= 0) {
		memset(y, 0, sizeof *y * (size_t)M * (size_t)N);
		return;
	}
	GemmJob j = {A, B, M, N, K, cdiv(M, MC), y};
	ref_parallel_for(cdiv(N, NC) * j.nblocks_m, gemm_task, &j);
}
