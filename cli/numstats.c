/* numstats.c: the statistics `tegen numerics` reports and its input
 * generators (see numstats.h). Sums are taken per chunk of rows and combined
 * in chunk order, so the numbers do not depend on the thread count. */
#include "numstats.h"

#include "layout.h"
#include "parallel.h"
#include "ref.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- input generators ---- */

static uint64_t mix64(uint64_t z)
{
	z += 0x9E3779B97F4A7C15ULL;
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

/* Uniform in (0, 1), a function of (seed, i). */
static double unit(uint64_t seed, uint64_t i) { return ((double)(mix64(seed ^ mix64(i)) >> 11) + 0.5) * 0x1p-53; }

/* Standard normal number j of element i (Box-Muller on two uniforms). */
static double gauss(uint64_t seed, uint64_t i, int j)
{
	double u = unit(seed, 8 * i + 2 * (uint64_t)j), v = unit(seed, 8 * i + 2 * (uint64_t)j + 1);
	return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

bool numerics_outlier_channel(long c, long cols)
{
	return c == cols / 3 || mix64((uint64_t)c * 0x2545F4914F6CDD1DULL) % 512 == 0;
}

typedef struct FillJob {
	float *x;
	long cols;
	NumInput kind;
	double std;
	uint64_t seed;
} FillJob;

static void fill_task(void *ctx, size_t i0, size_t i1)
{
	const FillJob *j = ctx;
	for (size_t i = i0; i < i1; i++) {
		double z = gauss(j->seed, i, 0);
		if (j->kind == NUM_STUDENT) { /* t_3 = z / sqrt(chi2_3 / 3), variance 3 */
			double c = 0;
			for (int k = 1; k <= 3; k++) {
				double g = gauss(j->seed, i, k);
				c += g * g;
			}
			z = z / sqrt(c / 3.0) / sqrt(3.0);
		} else if (j->kind == NUM_OUTLIERS && numerics_outlier_channel((long)(i % (size_t)j->cols), j->cols))
			z *= 100.0;
		j->x[i] = (float)(z * j->std);
	}
}

void numerics_fill(float *x, long rows, long cols, NumInput kind, double std, uint64_t seed)
{
	FillJob j = {x, cols > 0 ? cols : 1, kind, std, seed};
	ref_parallel_chunks((size_t)rows * (size_t)(cols > 0 ? cols : 1), 1 << 16, fill_task, &j);
}

/* ---- statistics ---- */

void numerics_error(const float *ref, const float *got, size_t n, double *rel_frob, double *sqnr_db)
{
	double sx = 0, se = 0;
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(ref[i]) || !isfinite(got[i]))
			continue;
		double e = (double)got[i] - ref[i];
		sx += (double)ref[i] * ref[i];
		se += e * e;
	}
	*rel_frob = sx > 0 ? sqrt(se / sx) : se > 0 ? INFINITY : 0;
	*sqnr_db = se == 0 ? (sx > 0 ? INFINITY : NAN) : sx > 0 ? 10.0 * log10(sx / se) : -INFINITY;
}

static int cdiv(int a, int b) { return (a + b - 1) / b; }

/* Elements along K that one scale covers in a copy (0: the whole tensor, per-tensor scaling). */
static int block_k(const Tensor *t)
{
	switch (t->recipe.scaling) {
	case SCALING_BLOCK1X128:
	case SCALING_BLOCK128X128: return 128;
	case SCALING_MXFP8: return 32;
	case SCALING_NVFP4: return 16;
	default: return 0;
	}
}

/* The dequantization multiplier of block kb of row `row` of copy c ([R][K]); *tiny: its scale is at the floor. */
static double block_mult(const Tensor *t, const RefTensor *r, Component c, int R, int K, int row, int kb, bool *tiny)
{
	const void *s = r->comp[c == COMP_DATA ? COMP_SCALE_INV : COMP_SCALE_INV_T];
	double m;
	switch (t->recipe.scaling) {
	case SCALING_BLOCK1X128: m = ((const float *)s)[(size_t)kb * R + row]; break;
	case SCALING_BLOCK128X128: m = ((const float *)s)[(size_t)(row / 128) * cdiv(K, 128) + kb]; break;
	case SCALING_MXFP8: {
		uint8_t e = c == COMP_DATA ? ((const uint8_t *)s)[(size_t)row * cdiv(K, 32) + kb]
			: ((const uint8_t *)s)[(size_t)kb * R + row];
		*tiny = e == 0;
		return e == 0 ? 1.0 : tg_e8m0_to_f32(e); /* e = 0 blocks are multiplied by 1 (TE) */
	}
	case SCALING_NVFP4: {
		uint8_t sd = ((const uint8_t *)s)[(size_t)row * cdiv(K, 16) + kb];
		*tiny = (sd & 0x78) == 0;
		return (double)tg_e4m3_to_f32(sd) / interp_s_enc(t, r, c);
	}
	default: m = r->scale_inv; break;
	}
	*tiny = !(m >= FLT_MIN);
	return m;
}

/* Per-chunk sums, combined in chunk order (the same totals for any thread count). */
typedef struct Acc {
	double sx, se, sum_rel, max_rel, smin, smax;
	long n, nz, under, sat, qnz, blocks, tiny, vanished;
} Acc;

typedef struct StatsJob {
	const Tensor *t;
	const RefTensor *r;
	Component c;
	const float *x, *q;
	int R, K, bk, fmt;
	Acc *acc;
} StatsJob;

enum { STAT_ROWS = 16 };

/* Is element k of row `row` of the copy stored as the format's largest magnitude? */
static bool code_is_max(const StatsJob *j, int row, int k)
{
	const uint8_t *d = j->r->comp[j->c];
	if (j->t->dtype == DT_E2M1)
		return ((d[(size_t)row * (size_t)cdiv(j->K, 2) + (size_t)k / 2] >> (4 * (k & 1))) & 7) == 7;
	return fabsf(tg_fmt_to_f32(d[(size_t)row * j->K + k], j->fmt)) == tg_fmt_max(j->fmt);
}

static void stats_task(void *ctx, size_t r0, size_t r1)
{
	const StatsJob *j = ctx;
	Acc a = {0, 0, 0, 0, INFINITY, 0, 0, 0, 0, 0, 0, 0, 0, 0};
	for (size_t row = r0; row < r1; row++) {
		int bk = j->bk ? j->bk : j->K;
		for (int k0 = 0; k0 < j->K; k0 += bk) {
			long bnz = 0, bqnz = 0;
			for (int k = k0; k < j->K && k < k0 + bk; k++) {
				size_t i = row * (size_t)j->K + (size_t)k;
				double x = j->x[i], q = j->q[i];
				if (!isfinite(x) || !isfinite(q))
					continue;
				a.n++;
				a.sx += x * x;
				a.se += (x - q) * (x - q);
				bqnz += q != 0;
				if (x != 0) {
					double rel = fabs(x - q) / fabs(x);
					a.nz++;
					bnz++;
					a.sum_rel += rel;
					if (rel > a.max_rel)
						a.max_rel = rel;
					a.under += q == 0;
					a.sat += fabs(x) > fabs(q) && code_is_max(j, (int)row, k);
				}
			}
			a.qnz += bqnz;
			if (j->bk) {
				bool tiny = false;
				double m = block_mult(j->t, j->r, j->c, j->R, j->K, (int)row, k0 / bk, &tiny);
				a.blocks++;
				a.tiny += tiny;
				a.vanished += bnz > 0 && bqnz == 0;
				if (m > 0 && m < a.smin)
					a.smin = m;
				if (m > a.smax)
					a.smax = m;
			}
		}
	}
	j->acc[r0 / STAT_ROWS] = a;
}

void numerics_copy_stats(const Graph *g, const long *dims, const Tensor *t, const RefTensor *r, Component copy,
	NumStats *s)
{
	memset(s, 0, sizeof *s);
	int rows = (int)layout_rows(dims, t), cols = (int)layout_cols(t), R, K;
	size_t n = (size_t)rows * (size_t)cols;
	float *q = interp_dequantize(g, dims, t, r, copy, &R, &K);
	float *x = r->value;
	if (copy == COMP_DATA_T) {
		x = malloc(sizeof *x * (n ? n : 1));
		ref_transpose(r->value, rows, cols, x);
		if (tensor_rht_t(t))
			ref_rht_rows(x, cols, rows, tg_rht_sign_mask(TG_RHT_SEED), x);
	}
	size_t nchunks = ((size_t)R + STAT_ROWS - 1) / STAT_ROWS;
	StatsJob j = {t, r, copy, x, q, R, K, block_k(t), t->dtype == DT_E5M2 ? TG_FMT_E5M2 : TG_FMT_E4M3,
		calloc(nchunks + 1, sizeof(Acc))};
	ref_parallel_chunks((size_t)R, STAT_ROWS, stats_task, &j);
	Acc a = {0, 0, 0, 0, INFINITY, 0, 0, 0, 0, 0, 0, 0, 0, 0};
	for (size_t i = 0; i < nchunks; i++) {
		const Acc *p = &j.acc[i];
		a.sx += p->sx, a.se += p->se, a.sum_rel += p->sum_rel;
		a.max_rel = p->max_rel > a.max_rel ? p->max_rel : a.max_rel;
		a.smin = p->smin < a.smin ? p->smin : a.smin;
		a.smax = p->smax > a.smax ? p->smax : a.smax;
		a.n += p->n, a.nz += p->nz, a.under += p->under, a.sat += p->sat, a.qnz += p->qnz;
		a.blocks += p->blocks, a.tiny += p->tiny, a.vanished += p->vanished;
	}
	if (!j.bk) { /* per-tensor: the whole copy is one block */
		bool tiny = false;
		double m = block_mult(t, r, copy, R, K, 0, 0, &tiny);
		a.blocks = 1, a.tiny = tiny, a.vanished = a.nz > 0 && a.qnz == 0;
		a.smin = a.smax = m;
	}
	s->n = a.n;
	s->sqnr_db = a.se == 0 ? (a.sx > 0 ? INFINITY : NAN) : a.sx > 0 ? 10.0 * log10(a.sx / a.se) : -INFINITY;
	s->max_rel = a.max_rel;
	s->mean_rel = a.nz ? a.sum_rel / (double)a.nz : 0;
	s->underflow = a.nz ? (double)a.under / (double)a.nz : 0;
	s->saturated = a.n ? (double)a.sat / (double)a.n : 0;
	s->blocks = a.blocks;
	s->tiny_blocks = a.blocks ? (double)a.tiny / (double)a.blocks : 0;
	s->vanished_blocks = a.blocks ? (double)a.vanished / (double)a.blocks : 0;
	s->scale_min = isinf(a.smin) ? 0 : a.smin;
	s->scale_max = a.smax;
	free(j.acc);
	free(q);
	if (x != r->value)
		free(x);
}
