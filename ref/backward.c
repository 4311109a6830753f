/* backward.c: the CPU reference of the backward element-wise ops.
 *
 * dglu, dnorm and dbias as defined in templates/tg_backward.h: FP32 math,
 * one formula per element shared with the kernels, and the fixed reduction
 * orders (pairwise tree over a row's columns; chunks of TG_BWD_CHUNK rows
 * summed in row order, the chunk partials in groups of TG_BWD_GROUP in chunk
 * order, then the group sums in group order). So the GPU
 * matches these results bit for bit, per element and for d_gamma, d_beta
 * and dbias. Guarantees: no global state, deterministic, scratch freed
 * before return.
 */
#include <math.h>
#include <stdlib.h>
#include "backward.h"

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

void ref_chunk_partials(const float *v, int rows, int cols, float *part)
{
	for (int k = 0; k < ref_nchunks(rows); k++)
		for (int c = 0; c < cols; c++) {
			float acc = -0.0f;
			for (int r = k * TG_BWD_CHUNK; r < rows && r < (k + 1) * TG_BWD_CHUNK; r++)
				acc += v[(size_t)r * cols + c];
			part[(size_t)k * cols + c] = acc;
		}
}

void ref_chunk_reduce(const float *part, int nchunks, int cols, int accumulate, float *out)
{
	for (int c = 0; c < cols; c++) {
		float acc = -0.0f;
		for (int g = 0; g < nchunks; g += TG_BWD_GROUP) { /* groups of TG_BWD_GROUP chunks, then the group sums */
			float gs = -0.0f;
			for (int k = g; k < nchunks && k < g + TG_BWD_GROUP; k++)
				gs += part[(size_t)k * cols + c];
			acc += gs;
		}
		out[c] = accumulate ? out[c] + acc : acc;
	}
}

void ref_dglu(int kind, const void *h, int h_dtype, const void *d_act, int g_dtype, int rows, int cols,
              float limit, float alpha, float *d_h)
{
	const int halves = TG_ACT_GATED(kind) ? 2 : 1;
	for (int r = 0; r < rows; r++)
		for (int c = 0; c < cols; c++) {
			size_t base = (size_t)r * halves * cols;
			float a = ref_load(h, h_dtype, base + c), b = halves == 2 ? ref_load(h, h_dtype, base + cols + c) : 1.0f;
			float g = ref_load(d_act, g_dtype, (size_t)r * cols + c), db;
			tg_dglu1(kind, a, b, g, limit, alpha, &d_h[base + c], halves == 2 ? &d_h[base + cols + c] : &db);
		}
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

void ref_dnorm_partials(int layer, const void *x, int x_dtype, const float *rsigma, const float *mu,
                        const void *d_out, int g_dtype, int rows, int cols, float *pg, float *pb)
{
	size_t n = (size_t)rows * cols;
	float *vg = malloc(sizeof *vg * (n ? n : 1)), *vb = malloc(sizeof *vb * (n ? n : 1));
	for (int r = 0; r < rows; r++) {
		float *xh = vg + (size_t)r * cols, *dy = vb + (size_t)r * cols;
		dnorm_row(x, x_dtype, rsigma, layer ? mu : NULL, d_out, g_dtype, r, cols, xh, dy);
		for (int c = 0; c < cols; c++)
			xh[c] = tg__mul_rn(dy[c], xh[c]); /* the d_gamma term dy * xhat */
	}
	if (pg)
		ref_chunk_partials(vg, rows, cols, pg);
	if (pb && layer)
		ref_chunk_partials(vb, rows, cols, pb);
	free(vg);
	free(vb);
}

void ref_dnorm(int layer, const void *x, int x_dtype, const float *rsigma, const float *mu,
               const float *gamma, int zero_centered, const void *d_out, const void *d_res, int g_dtype,
               int r_dtype, int rows, int cols, float *d_in, float *d_gamma, float *d_beta)
{
	size_t cc = (size_t)(cols > 0 ? cols : 1);
	float *xh = malloc(sizeof *xh * cc), *dy = malloc(sizeof *dy * cc);
	float *dyg = malloc(sizeof *dyg * cc), *prod = malloc(sizeof *prod * cc);
	for (int r = 0; r < rows && d_in; r++) {
		dnorm_row(x, x_dtype, rsigma, layer ? mu : NULL, d_out, g_dtype, r, cols, xh, dy);
		for (int c = 0; c < cols; c++) {
			dyg[c] = tg__mul_rn(dy[c], tg_dnorm_weight(gamma[c], zero_centered));
			prod[c] = tg__mul_rn(dyg[c], xh[c]);
		}
		float inv = tg_div_rn(1.0f, (float)cols);
		float m1 = layer ? tg_dnorm_mean(ref_tree_sum(dyg, cols), inv) : 0.0f;
		float m2 = tg_dnorm_mean(ref_tree_sum(prod, cols), inv);
		for (int c = 0; c < cols; c++) {
			size_t i = (size_t)r * cols + c;
			float v = tg_dnorm_dx(dyg[c], xh[c], rsigma[r], m1, m2);
			d_in[i] = d_res ? tg__add_rn(v, ref_load(d_res, r_dtype, i)) : v;
		}
	}
	free(xh);
	free(dy);
	free(dyg);
	free(prod);
	if (!d_gamma && !(layer && d_beta))
		return;
	int nk = ref_nchunks(rows);
	float *pg = malloc(sizeof *pg * (size_t)(nk ? nk : 1) * cc), *pb = malloc(sizeof *pb * (size_t)(nk ? nk : 1) * cc);
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
	float *v = malloc(sizeof *v * (n ? n : 1));
	float *part = malloc(sizeof *part * (size_t)(nk ? nk : 1) * (size_t)(cols > 0 ? cols : 1));
	for (size_t i = 0; i < n; i++)
		v[i] = ref_load(g, dtype, i);
	ref_chunk_partials(v, rows, cols, part);
	ref_chunk_reduce(part, nk, cols, 0, dbias);
	free(v);
	free(part);
}

void ref_norm_stats(int layer, const void *x, int x_dtype, int rows, int cols, float eps, float *mu,
                    float *rsigma)
{
	float *v = malloc(sizeof *v * (size_t)(cols > 0 ? cols : 1));
	for (int r = 0; r < rows; r++) {
		float m = 0.0f;
		if (layer) {
			for (int c = 0; c < cols; c++)
				v[c] = ref_load(x, x_dtype, (size_t)r * cols + c);
			m = tg_div_rn(ref_tree_sum(v, cols), (float)cols);
		}
		for (int c = 0; c < cols; c++) {
			float d = tg__sub_rn(ref_load(x, x_dtype, (size_t)r * cols + c), m);
			v[c] = tg__mul_rn(d, d);
		}
		float var = tg_div_rn(ref_tree_sum(v, cols), (float)cols);
		if (mu)
			mu[r] = m;
		rsigma[r] = tg_div_rn(1.0f, sqrtf(tg__add_rn(var, eps)));
	}
	free(v);
}
