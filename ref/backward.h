/* backward.h: the CPU reference of the backward element-wise ops (dglu, dnorm,
 * dbias). Same conventions as ref.h: plain host buffers, row-major
 * [rows][cols], dtypes REF_F32 / REF_BF16 / REF_F16. Per-element math and the
 * reduction orders are those of templates/tg_backward.h (FP32, bit-exact with
 * the kernels dglu.cu, dnorm.cu, dbias.cu, dreduce.cu). */
#ifndef REF_BACKWARD_H
#define REF_BACKWARD_H

#include "ref.h"
#include "tg_backward.h"

/* Pairwise tree sum of v[0..n-1] (padded with -0 to a power of two, levels
 * adding neighbours), the order of every row reduction. n = 0 gives -0. */
float ref_tree_sum(const float *v, int n);

/* Chunk partials of a column sum: part[k][c] = sequential sum, from -0, of
 * v[r][c] over the rows r of chunk k (TG_BWD_CHUNK rows, the last shorter);
 * part is [ceil(rows/TG_BWD_CHUNK)][cols]. */
void ref_chunk_partials(const float *v, int rows, int cols, float *part);
/* out[c] = the sum over k = 0..nchunks-1 of part[k][c] in tg_backward.h's order: groups of
 * TG_BWD_GROUP consecutive chunks summed sequentially from -0, then the group sums sequentially
 * from -0; with accumulate, out[c] = out[c] + that sum (an FP32 main_grad). */
void ref_chunk_reduce(const float *part, int nchunks, int cols, int accumulate, float *out);
/* Number of chunk partials for rows rows. */
int ref_nchunks(int rows);

/* dglu: h [rows][2*cols] of h_dtype (gate half first), d_act [rows][cols] of
 * g_dtype -> d_h [rows][2*cols] FP32 (d_gate first), by tg_dglu1 per element;
 * without a gate partner (kind >= TG_ACT_SILU) h and d_h are [rows][cols].
 * kind: a TG_ACT code; limit, alpha: clamped_swiglu only. */
void ref_dglu(int kind, const void *h, int h_dtype, const void *d_act, int g_dtype, int rows, int cols,
              float limit, float alpha, float *d_h);

/* dnorm (layer 0: RMSNorm, 1: LayerNorm) from the saved x [rows][cols] of
 * x_dtype (the residual sum when the forward added one), rsigma [rows], mu
 * [rows] (LayerNorm; NULL for RMSNorm), gamma [cols] (FP32 values; weight
 * gamma + 1 when zero_centered), d_out [rows][cols] of g_dtype and d_res
 * (NULL, or [rows][cols] of r_dtype: the gradient reaching the residual sum
 * from elsewhere, added to d_in):
 *     xhat = (x - mu) * rs, dyg = dy * w, m1 = tree(dyg) * RN(1/cols) (LayerNorm),
 *     m2 = tree(dyg * xhat) * RN(1/cols), d_in = rs*((dyg - m1) - xhat*m2) (+ d_res)
 * d_in [rows][cols] FP32 (it is also the residual branch's gradient);
 * d_gamma [cols] = sum over rows of dy*xhat, d_beta [cols] = sum of dy
 * (LayerNorm; may be NULL), both in the chunked order; either may be NULL. */
void ref_dnorm(int layer, const void *x, int x_dtype, const float *rsigma, const float *mu,
               const float *gamma, int zero_centered, const void *d_out, const void *d_res, int g_dtype,
               int r_dtype, int rows, int cols, float *d_in, float *d_gamma, float *d_beta);

/* The same reductions stopped at the chunk partials (what dnorm.cu writes to
 * its workspaces): pg, pb [ref_nchunks(rows)][cols] (pb LayerNorm only). */
void ref_dnorm_partials(int layer, const void *x, int x_dtype, const float *rsigma, const float *mu,
                        const void *d_out, int g_dtype, int rows, int cols, float *pg, float *pb);

/* dbias [cols] = column sum of g [rows][cols] (dtype), chunked order. */
void ref_dbias(const void *g, int dtype, int rows, int cols, float *dbias);

/* The statistics a forward norm saves, by the forward kernel's formula in
 * FP32 (norm_quantize.cu): mu = tree(x)/cols (LayerNorm; 0 for RMSNorm),
 * rs = 1/sqrtf(tree((x - mu)^2)/cols + eps). The kernel's own summation order
 * depends on its tiling, so its values may differ from these by a few FP32
 * ulps (ref_rmsnorm / ref_layernorm give the double values rounded once);
 * the backward takes whichever was saved. mu may be NULL. */
void ref_norm_stats(int layer, const void *x, int x_dtype, int rows, int cols, float eps, float *mu,
                    float *rsigma);

#endif
