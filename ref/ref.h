/* ref.h: the CPU reference ops (the numerics contract, executable).
 * Plain host buffers, row-major [rows][cols]; layouts as templates/tg_kernel.h. */
#ifndef REF_H
#define REF_H

#include <stddef.h>
#include <stdint.h>
#include "tg_codes.h"
#include "tg_formats.h"
#include "tg_recipe.h"

/* High-precision storage dtypes (bf16/fp16 stored as raw uint16_t); the kernels' codes. */
enum { REF_F32 = TG_DTYPE_F32, REF_BF16 = TG_DTYPE_BF16, REF_F16 = TG_DTYPE_F16 };

/* GLU kinds; input [rows][2*cols], gate half (a) first, linear half (b) second. */
enum { REF_SWIGLU = TG_ACT_SWIGLU, REF_GEGLU = TG_ACT_GEGLU, REF_REGLU = TG_ACT_REGLU, REF_QGEGLU = TG_ACT_QGEGLU,
	REF_SREGLU = TG_ACT_SREGLU, REF_CLAMPED_SWIGLU = TG_ACT_CLAMPED_SWIGLU };

/* Scratch of n floats (at least one) for a task, or abort: the reference has no error path for a failed
 * allocation inside a threaded task. */
float *ref_scratch(size_t n);
/* Element i of a buffer of dtype, as FP32 (exact). */
float ref_load(const void *buf, int dtype, size_t i);
/* Store v (RNE) into element i of a buffer of dtype. */
void ref_store(void *buf, int dtype, size_t i, float v);
/* v[i] = element i of buf (dtype), i < n, as ref_load (threaded). */
void ref_load_all(const void *buf, int dtype, size_t n, float *v);
/* Element i of buf (dtype) = v[i], i < n, as ref_store (threaded). */
void ref_store_all(void *buf, int dtype, size_t n, const float *v);
/* v rounded to dtype and back. */
float ref_round(float v, int dtype);

/* RMSNorm: y = x * rsigma * g, rsigma = 1/sqrt(mean(x^2)+eps), g = gamma (+1 if zero_centered);
 * residual (may be NULL): x = round_dtype(in + residual), written to residual_out if not NULL.
 * Math in double, y rounded once to FP32 into out [rows][cols]; rsigma [rows] may be NULL. */
void ref_rmsnorm(const void *in, const void *residual, void *residual_out, int dtype,
                 const float *gamma, int zero_centered, float eps, int rows, int cols,
                 float *out, float *rsigma);
/* LayerNorm: y = (x-mu)*rsigma*g + beta, same conventions as ref_rmsnorm; mu [rows] may be NULL.
 * slack [rows][cols] (may be NULL): the error a LayerNorm computed in float (the GPU's, for BF16 and
 * FP8 outputs) may add to an element beyond a few of its own ulps: the float mean is off by up to
 * K u mean|x| (a float sum's error, u = 2^-24, K = min(cols, 4 sqrt(cols) + 32) + 8), which x - mu
 * carries however small x - mu is, so K u mean|x| rsigma |g| + 16 u (|(x - mu) rsigma g| + |beta|). */
void ref_layernorm(const void *in, const void *residual, void *residual_out, int dtype,
                   const float *gamma, const float *beta, int zero_centered, float eps,
                   int rows, int cols, float *out, float *mu, float *rsigma, float *slack);
/* GLU family on in [rows][2*cols] of dtype -> out [rows][cols] FP32 (double math, one rounding);
 * the activations without a gate partner (kind >= TG_ACT_SILU) on in [rows][cols].
 * limit, alpha: clamped_swiglu only (GPT-OSS: 7.0, 1.702). */
void ref_glu(int kind, const void *in, int dtype, int rows, int cols, float limit, float alpha,
             float *out);
/* Gate *a and linear *b (1 without a gate partner: halves 1) of column c of row r of h [rows][halves*cols]. */
void ref_glu_pair(const void *h, int dtype, int halves, size_t r, int c, int cols, float *a, float *b);
/* One GLU element from gate a and linear b (double math, rounded to FP32). */
float ref_glu1(int kind, float a, float b, float limit, float alpha);

/* max|x| over n values, NaN ignored (inf counts). */
float ref_amax(const float *x, size_t n);
/* out[c][r] = x[r][c]. */
void ref_transpose(const float *x, int rows, int cols, float *out);

/* Per-tensor (delayed or current) cast: out[i] = fmt(x[i]*scale), out_t the transpose
 * (either may be NULL); *amax = max|x|, *scale_inv = 1/scale (either may be NULL). */
void ref_quant_tensor(const float *x, int rows, int cols, int fmt, float scale,
                      uint8_t *out, uint8_t *out_t, float *amax, float *scale_inv);
/* Dequantize n per-tensor codes: y = fmt_to_f32(q) * scale_inv. */
void ref_dequant_tensor(const uint8_t *q, size_t n, int fmt, float scale_inv, float *y);

/* FP8 block 1x128: scale per 128 elements of a row; scale_inv [ceil(cols/128)][rows];
 * out_t/scale_inv_t: same of the transpose, scale_inv_t [ceil(rows/128)][cols]. NULLs skip. */
void ref_quant_block1x128(const float *x, int rows, int cols, int fmt, float eps, int pow2,
                          uint8_t *out, float *scale_inv, uint8_t *out_t, float *scale_inv_t);
/* Dequantize a 1x128 rowwise tensor (q [rows][cols], scale_inv [ceil(cols/128)][rows]). */
void ref_dequant_block1x128(const uint8_t *q, const float *scale_inv, int rows, int cols, int fmt,
                            float *y);
/* FP8 block 128x128: scale_inv [ceil(rows/128)][ceil(cols/128)], transposed copy
 * out_t [cols][rows] with scale_inv_t [ceil(cols/128)][ceil(rows/128)] (same blocks). */
void ref_quant_block128x128(const float *x, int rows, int cols, int fmt, float eps, int pow2,
                            uint8_t *out, float *scale_inv, uint8_t *out_t, float *scale_inv_t);
/* Dequantize a 128x128 rowwise tensor. */
void ref_dequant_block128x128(const uint8_t *q, const float *scale_inv, int rows, int cols,
                              int fmt, float *y);

/* MXFP8: blocks of 32 along rows; scale E8M0 [rows][ceil(cols/32)]; element fmt(x*2^(127-e))
 * (TE's exp2f_rcp: e = 0 multiplies by 1). Columnwise: out_t [cols][rows] (blocks of 32
 * along the original columns), scale_t [ceil(rows/32)][cols] (TE's columnwise scale
 * layout: a block row's scales are contiguous, so kernels store them coalesced). NULLs skip. */
void ref_quant_mxfp8(const float *x, int rows, int cols, int fmt, uint8_t *out, uint8_t *scale,
                     uint8_t *out_t, uint8_t *scale_t);
/* Dequantize MXFP8 q [rows][cols]: y = fmt_to_f32(q) * 2^(e-127); scale [rows][ceil(cols/32)],
 * or with scale_t (a columnwise copy, q = out_t) [ceil(cols/32)][rows]. */
void ref_dequant_mxfp8(const uint8_t *q, const uint8_t *scale, int rows, int cols, int fmt,
                       int scale_t, float *y);
/* Bytes of the GEMM-swizzled scale layout for a [rows][scols] scale matrix. */
size_t ref_swizzle_size(int rows, int scols);
/* cuBLASLt 128x4 tile swizzle of scales s [rows][scols] -> out (padding bytes 0). */
void ref_swizzle_scales(const uint8_t *s, int rows, int scols, uint8_t *out);
/* Offset of scale (r, c) in the swizzled layout of a [rows][scols] matrix. */
size_t ref_swizzle_index(int r, int c, int scols);

/* NVFP4 options. */
typedef struct RefNvfp4 {
	int two_d;          /* 16x16 blocks (weights); scale still stored per row, replicated */
	int sr;             /* stochastic rounding with Philox(seed, offset, element index) */
	uint64_t seed, offset;
	float global_amax;  /* < 0: compute max|x| here */
} RefNvfp4;
/* NVFP4 rowwise: out packed [rows][ceil(cols/2)] (element 2k in the low nibble),
 * scale E4M3 [rows][ceil(cols/16)]; *s_enc_out = S_enc (may be NULL). Columnwise copy:
 * call on ref_transpose'd input (with nvfp4_rht: then ref_rht_rows'd). */
void ref_quant_nvfp4(const float *x, int rows, int cols, const RefNvfp4 *o, uint8_t *out,
                     uint8_t *scale, float *s_enc_out);
/* The codes of one NVFP4 block of a row under scale byte sd: x[row0 + c] for columns c0..c1-1,
 * E2M1(x * tg_nvfp4_elem_scale(sd, s_enc)) (o->sr: stochastic, element index row0 + c), written
 * into the packed row (column c's nibble replaced). */
void ref_nvfp4_encode(const float *x, size_t row0, int c0, int c1, uint8_t sd, float s_enc, const RefNvfp4 *o,
                      uint8_t *row);
/* Dequantize NVFP4: y = e2m1(q) * float(S_dec) / S_enc. */
void ref_dequant_nvfp4(const uint8_t *q, const uint8_t *scale, int rows, int cols, float s_enc,
                       float *y);
/* Random Hadamard transform of every 16-element group of each row of x [rows][cols]
 * with tg_rht16(sign_mask); a last partial group (cols % 16 elements) is copied as is,
 * so the transform stays orthonormal and a product along the rows unchanged when both
 * factors get it. In place allowed. (The NVFP4 columnwise copy with nvfp4_rht is
 * ref_quant_nvfp4 of the transpose after this, with its own global amax.) */
void ref_rht_rows(const float *x, int rows, int cols, uint16_t sign_mask, float *y);

/* y[M][N] = A[M][K] * B[N][K]^T, FP32 accumulation in k order. */
void ref_gemm(const float *A, const float *B, int M, int N, int K, float *y);

/* Delayed-scaling state for one tensor. */
typedef struct RefDelayed {
	float *hist;        /* [L], hist[0] collects the current step's amax */
	int L, margin, most_recent;
	float fmt_max, scale, scale_inv;
} RefDelayed;
/* One delayed-scaling step: hist[0] = max(hist[0], amax_now); amax from history;
 * scale = tg_delayed_scale(...); scale_inv = 1/scale; roll. Returns the amax used. */
float ref_delayed_step(RefDelayed *st, float amax_now);
/* Current scaling of x[n]: scale from max|x| (tg_current_scale); *scale_inv if not NULL. */
float ref_current_scale(const float *x, size_t n, float fmt_max, float eps, int pow2,
                        float *scale_inv);

#endif
