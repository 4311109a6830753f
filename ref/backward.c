/* backward.c: the CPU reference of the backward element-wise ops.
 *
 * dglu, dnorm and dbias as defined in templates/tg_backward.h: FP32 math,
 * one formula per element shared with the kernels, and the fixed reduction
 * orders (pairwise tree over a row's columns; chunks of TG_BWD_CHUNK rows
 * summed in row order, the chunk partials in groups of TG_BWD_GROUP in chunk
 * order, then the group sums in group order). So the GPU
 * matches these results bit for bit, per element and for d_gamma, d_beta
 * and dbias. Rows, chunks and columns are split among threads
 * (ref_parallel_chunks), never a sum: each keeps its one order. Guarantees: no
 * global state, deterministic, scratch freed before return.
 */
#include <math.h>
#include <stdlib.h>
#include "backward.h"
#include "parallel.h"

enum { COLCHUNK = 256 }; /* columns a task of a column reduction (parallel.h: rows a task) */

/* Tree sum of the subtree of size (a power of two) from leaf lo; leaves >= n are -0. */
static float tree(const float *v, int n, int lo, int size)
{
	if (lo >= n)
		return -0.0f;
	if (size == 1)
		return v[lo];
	int h = size / 2;
	float left = tree(v, n, lo, h);
	if (lo + h >= n)
		return left; /* left + (-0) */
	return left + tree(v, n, lo + h, h);
}

float ref_tree_sum(const float *v, int n)
{
	int size = 1;
	while (size < n)
		size *= 2;
	return tree(v, n, 0, size);
}

int ref_nchunks(int rows) { return (rows + TG_BWD_CHUNK - 1) / TG_BWD_CHUNK; }

/* A reduction over rows: in [rows][cols] -> out [nchunks][cols] (the partials), or in [nchunks][cols] -> out [cols]. */
typedef struct ChunkJob {
	const float *in;
	int rows, cols, nchunks, accumulate;
	float *out;
} ChunkJob;

/* Chunk partials of chunks [k0, k1): each column's rows added in row order from -0 (rows outer, so the reads run
 * along rows; a column's order is the same). */
static void partials_task(void *ctx, size_t k0, size_t k1)
{
	const ChunkJob *j = ctx;
	for (size_t k = k0; k < k1; k++) {
		float *acc = j->out + k * j->cols;
		for (int c = 0; c < j->cols; c++)
			acc[c] = -0.0f;
		for (int r = (int)k * TG_BWD_CHUNK; r < j->rows && r < ((int)k + 1) * TG_BWD_CHUNK; r++)
			for (int c = 0; c < j->cols; c++)
				acc[c] += j->in[(size_t)r * j->cols + c];
	}
}

void ref_chunk_partials(const float *v, int rows, int cols, float *part)
{
	ChunkJob j = {v, rows, cols, ref_nchunks(rows), 0, part};
	ref_parallel_chunks((size_t)j.nchunks, 1, partials_task, &j);
}

/* The reduction of columns [c0, c1). */
static void reduce_task(void *ctx, size_t c0, size_t c1)
{
	const ChunkJob *j = ctx;
	for (size_t c = c0; c < c1; c++) {
		float acc = -0.0f;
		for (int g = 0; g < j->nchunks; g += TG_BWD_GROUP) { /* groups of TG_BWD_GROUP chunks, then the group sums */
			float gs = -0.0f;
			for (int k = g; k < j->nchunks && k < g + TG_BWD_GROUP; k++)
				gs += j->in[(size_t)k * j->cols + c];
			acc += gs;
		}
		j->out[c] = j->accumulate ? j->out[c] + acc : acc;
	}
}

void ref_chunk_reduce(const float *part, int nchunks, int cols, int accumulate, float *out)
{
	ChunkJob j = {part, 0, cols, nchunks, accumulate, out};
	ref_parallel_chunks(ref_count(cols), COLCHUNK, reduce_task, &j);
}

typedef struct DgluJob {
	int kind, h_dtype, g_dtype, cols;
	const void *h, *d_act;
	float limit, alpha, *d_h;
} DgluJob;

static void dglu_task(void *ctx, size_t r0, size_t r1)
{
	const DgluJob *j = ctx;
	const int halves = TG_ACT_GATED(j->kind) ? 2 : 1, cols = j->cols;
	for (size_t r = r0; r < r1; r++)
		for (int c = 0; c < cols; c++) {
			size_t base = r * halves * cols;
			float a, b, g = ref_load(j->d_act, j->g_dtype, r * cols + c), db;
			ref_glu_pair(j->h, j->h_dtype, halves, r, c, cols, &a, &b);
			tg_dglu1(j->kind, a, b, g, j->limit, j->alpha, &j->d_h[base + c], halves == 2 ? &j->d_h[base + cols + c] : &db);
		}
}

void ref_dglu(int kind, const void *h, int h_dtype, const void *d_act, int g_dtype, int rows, int cols,
              float limit, float alpha, float *d_h)
{
	DgluJob j = {kind, h_dtype, g_dtype, cols, h, d_act, limit, alpha, d_h};
	ref_parallel_chunks(ref_count(rows), REF_TASK_ROWS, dglu_task, &j);
}

/* xhat and dy of one row into xh[cols], dy[cols]. */
static void dnorm_row(const void *x, int x_dtype, const float *rsigma, const float *mu, const void *d_out,
                      int g_dtype, int r, int cols, float *xh, float *dy)
{
	float m = mu ? mu[r] : 0.0f;
	for (int c = 0; c < cols; c++) {
		size_t i = (size_t)r * cols + c;
		xh[c] = tg_dnorm_xhat(ref_load(x, x_dtype, i), m, rsigma[r]);
		dy[c] = ref_load(d_out, g_dtype, i);
	}
}

/* The arguments of dnorm, shared by its row tasks. */
typedef struct DnormJob {
	int layer, x_dtype, g_dtype, r_dtype, zero_centered, cols;
	const void *x, *d_out, *d_res;
	const float *rsigma, *mu, *gamma;
	float *d_in, *vg, *vb;
} DnormJob;

/* Rows [r0, r1) of the d_gamma term dy * xhat (into vg) and dy (into vb). */
static void dnorm_terms_task(void *ctx, size_t r0, size_t r1)
{
	const DnormJob *j = ctx;
	for (size_t r = r0; r < r1; r++) {
		float *xh = j->vg + r * j->cols, *dy = j->vb + r * j->cols;
		dnorm_row(j->x, j->x_dtype, j->rsigma, j->layer ? j->mu : NULL, j->d_out, j->g_dtype, (int)r, j->cols, xh, dy);
		for (int c = 0; c < j->cols; c++)
			xh[c] = tg__mul_rn(dy[c], xh[c]); /* the d_gamma term dy * xhat */
	}
}

void ref_dnorm_partials(int layer, const void *x, int x_dtype, const float *rsigma, const float *mu,
                        const void *d_out, int g_dtype, int rows, int cols, float *pg, float *pb)
{
	size_t n = (size_t)rows * cols;
	DnormJob j = {layer, x_dtype, g_dtype, 0, 0, cols, x, d_out, NULL, rsigma, mu, NULL, NULL, ref_scratch(n), ref_scratch(n)};
	ref_parallel_chunks(ref_count(rows), REF_TASK_ROWS, dnorm_terms_task, &j);
	if (pg)
		ref_chunk_partials(j.vg, rows, cols, pg);
	if (pb && layer)
		ref_chunk_partials(j.vb, rows, cols, pb);
	free(j.vg);
	free(j.vb);
}

/* d_in of rows [r0, r1). */
static void dnorm_task(void *ctx, size_t r0, size_t r1)
{
	const DnormJob *j = ctx;
	int cols = j->cols;
	size_t cc = ref_count(cols); /* (ref_scratch: at least one) */
	float *xh = ref_scratch(cc), *dy = ref_scratch(cc), *dyg = ref_scratch(cc), *prod = ref_scratch(cc);
	for (int r = (int)r0; r < (int)r1; r++) {
		dnorm_row(j->x, j->x_dtype, j->rsigma, j->layer ? j->mu : NULL, j->d_out, j->g_dtype, r, cols, xh, dy);
		for (int c = 0; c < cols; c++) {
			dyg[c] = tg__mul_rn(dy[c], tg_dnorm_weight(j->gamma[c], j->zero_centered));
			prod[c] = tg__mul_rn(dyg[c], xh[c]);
		}
		float inv = tg_div_rn(1.0f, (float)cols);
		float m1 = j->layer ? tg_dnorm_mean(ref_tree_sum(dyg, cols), inv) : 0.0f;
		float m2 = tg_dnorm_mean(ref_tree_sum(prod, cols), inv);
		for (int c = 0; c < cols; c++) {
			size_t i = (size_t)r * cols + c;
			float v = tg_dnorm_dx(dyg[c], xh[c], j->rsigma[r], m1, m2);
			j->d_in[i] = j->d_res ? tg__add_rn(v, ref_load(j->d_res, j->r_dtype, i)) : v;
		}
	}
	free(xh);
	free(dy);
	free(dyg);
	free(prod);
}

void ref_dnorm(int layer, const void *x, int x_dtype, const float *rsigma, const float *mu,
               const float *gamma, int zero_centered, const void *d_out, const void *d_res, int g_dtype,
               int r_dtype, int rows, int cols, float *d_in, float *d_gamma, float *d_beta)
{
	DnormJob j = {layer, x_dtype, g_dtype, r_dtype, zero_centered, cols, x, d_out, d_res, rsigma, mu, gamma, d_in, NULL, NULL};
	if (d_in)
		ref_parallel_chunks(ref_count(rows), REF_TASK_ROWS, dnorm_task, &j);
	if (!d_gamma && !(layer && d_beta))
		return;
	size_t cc = ref_count(cols); /* (ref_scratch: at least one) */
	int nk = ref_nchunks(rows);
	float *pg = ref_scratch(ref_count(nk) * cc), *pb = ref_scratch(ref_count(nk) * cc);
	ref_dnorm_partials(layer, x, x_dtype, rsigma, mu, d_out, g_dtype, rows, cols, pg, pb);
	if (d_gamma)
		ref_chunk_reduce(pg, nk, cols, 0, d_gamma);
	if (layer && d_beta)
		ref_chunk_reduce(pb, nk, cols, 0, d_beta);
	free(pg);
	free(pb);
}

void ref_dbias(const void *g, int dtype, int rows, int cols, float *dbias)
{
	size_t n = (size_t)rows * cols;
	int nk = ref_nchunks(rows);
	float *v = ref_scratch(n), *part = ref_scratch(ref_count(nk) * ref_count(cols));
	ref_load_all(g, dtype, n, v);
	ref_chunk_partials(v, rows, cols, part);
	ref_chunk_reduce(part, nk, cols, 0, dbias);
	free(v);
	free(part);
}

typedef struct StatsJob {
	int layer, x_dtype, cols;
	const void *x;
	float eps, *mu, *rsigma;
} StatsJob;

static void stats_task(void *ctx, size_t r0, size_t r1)
{
	const StatsJob *j = ctx;
	int cols = j->cols;
	float *v = ref_scratch(ref_count(cols));
	for (size_t r = r0; r < r1; r++) {
		float m = 0.0f;
		if (j->layer) {
			for (int c = 0; c < cols; c++)
				v[c] = ref_load(j->x, j->x_dtype, r * cols + c);
			m = tg_div_rn(ref_tree_sum(v, cols), (float)cols);
		}
		for (int c = 0; c < cols; c++) {
			float d = tg__sub_rn(ref_load(j->x, j->x_dtype, r * cols + c), m);
			v[c] = tg__mul_rn(d, d);
		}
		float var = tg_div_rn(ref_tree_sum(v, cols), (float)cols);
		if (j->mu)
			j->mu[r] = m;
		j->rsigma[r] = tg_div_rn(1.0f, sqrtf(tg__add_rn(var, j->eps)));
	}
	free(v);
}

void ref_norm_stats(int layer, const void *x, int x_dtype, int rows, int cols, float eps, float *mu,
                    float *rsigma)
{
	StatsJob j = {layer, x_dtype, cols, x, eps, mu, rsigma};
	ref_parallel_chunks(ref_count(rows), REF_TASK_ROWS, stats_task, &j);
}
