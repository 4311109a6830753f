/* ref.c: the CPU reference ops that define every tegen result.
 *
 * Each op reads plain host buffers and writes FP32 values or quantized bytes
 * in exactly the layouts of templates/tg_kernel.h. Element conversions and
 * scales come from tg_formats.h / tg_recipe.h, the same code the kernels
 * compile, so casts match bit for bit. Norms and GLUs do their math in double
 * and round once to FP32 (the most accurate value a kernel can aim at; the
 * contract allows kernels one unit in the last place of the output format on
 * a few elements). Quantization always starts from the FP32 value, with no
 * intermediate BF16 rounding. The ops over many rows or elements run on
 * ref_parallel_chunks (parallel.h), each task writing its own rows or elements
 * with the one-thread arithmetic, so no result depends on the thread count.
 * Guarantees: no allocation except scratch that is freed before return, no
 * global state, deterministic.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ref.h"
#include "parallel.h"

/* Columns a task of a transposing op (parallel.h has the row and element task sizes). */
enum { TILE = 64 };

float *ref_scratch(size_t n)
{
	float *p = malloc(sizeof *p * (n ? n : 1));
	if (!p)
		abort();
	return p;
}

float ref_load(const void *buf, int dtype, size_t i)
{
	if (dtype == REF_BF16)
		return tg_bf16_to_f32(((const uint16_t *)buf)[i]);
	if (dtype == REF_F16)
		return tg_f16_to_f32(((const uint16_t *)buf)[i]);
	return ((const float *)buf)[i];
}

void ref_store(void *buf, int dtype, size_t i, float v)
{
	if (dtype == REF_BF16)
		((uint16_t *)buf)[i] = tg_f32_to_bf16(v);
	else if (dtype == REF_F16)
		((uint16_t *)buf)[i] = tg_f32_to_f16(v);
	else
		((float *)buf)[i] = v;
}

float ref_round(float v, int dtype)
{
	if (dtype == REF_BF16)
		return tg_bf16_to_f32(tg_f32_to_bf16(v));
	if (dtype == REF_F16)
		return tg_f16_to_f32(tg_f32_to_f16(v));
	return v;
}

/* Row r of the norm input after the optional residual add, as FP32. */
static void norm_row(const void *in, const void *residual, void *residual_out, int dtype,
                     int r, int cols, float *x)
{
	for (int c = 0; c < cols; c++) {
		size_t i = (size_t)r * cols + c;
		float v = ref_load(in, dtype, i);
		if (residual) {
			v = ref_round(v + ref_load(residual, dtype, i), dtype);
			if (residual_out)
				ref_store(residual_out, dtype, i, v);
		}
		x[c] = v;
	}
}

/* The arguments of a norm, shared by its row tasks. */
typedef struct NormJob {
	const void *in, *residual;
	void *residual_out;
	int dtype, zero_centered, rows, cols;
	const float *gamma, *beta; /* beta: LayerNorm's */
	float eps;
	float *out, *mu, *rsigma, *slack;
} NormJob;

/* RMSNorm of rows [r0, r1). */
static void rms_task(void *ctx, size_t r0, size_t r1)
{
	const NormJob *j = ctx;
	int cols = j->cols;
	float *x = ref_scratch(ref_count(cols));
	for (int r = (int)r0; r < (int)r1; r++) {
		norm_row(j->in, j->residual, j->residual_out, j->dtype, r, cols, x);
		double ss = 0.0;
		for (int c = 0; c < cols; c++)
			ss += (double)x[c] * x[c];
		double rs = 1.0 / sqrt(ss / cols + (double)j->eps);
		if (j->rsigma)
			j->rsigma[r] = (float)rs;
		for (int c = 0; c < cols; c++) {
			double g = (double)j->gamma[c] + (j->zero_centered ? 1.0 : 0.0);
			j->out[(size_t)r * cols + c] = (float)((double)x[c] * rs * g);
		}
	}
	free(x);
}

void ref_rmsnorm(const void *in, const void *residual, void *residual_out, int dtype,
                 const float *gamma, int zero_centered, float eps, int rows, int cols,
                 float *out, float *rsigma)
{
	NormJob j = {in, residual, residual_out, dtype, zero_centered, rows, cols, gamma, NULL, eps, out, NULL, rsigma, NULL};
	ref_parallel_chunks(ref_count(rows), REF_TASK_ROWS, rms_task, &j);
}

/* LayerNorm of rows [r0, r1). */
static void ln_task(void *ctx, size_t r0, size_t r1)
{
	const NormJob *j = ctx;
	int cols = j->cols;
	const double u = 0x1p-24, k = fmin((double)cols, 4.0 * sqrt((double)cols) + 32.0) + 8.0; /* slack's */
	float *x = ref_scratch(ref_count(cols));
	for (int r = (int)r0; r < (int)r1; r++) {
		norm_row(j->in, j->residual, j->residual_out, j->dtype, r, cols, x);
		double s = 0.0, v = 0.0, a = 0.0;
		for (int c = 0; c < cols; c++) {
			s += x[c];
			a += fabs((double)x[c]);
		}
		double m = s / cols;
		for (int c = 0; c < cols; c++)
			v += ((double)x[c] - m) * ((double)x[c] - m);
		double rs = 1.0 / sqrt(v / cols + (double)j->eps);
		if (j->mu)
			j->mu[r] = (float)m;
		if (j->rsigma)
			j->rsigma[r] = (float)rs;
		for (int c = 0; c < cols; c++) {
			double g = (double)j->gamma[c] + (j->zero_centered ? 1.0 : 0.0);
			j->out[(size_t)r * cols + c] = (float)(((double)x[c] - m) * rs * g + (double)j->beta[c]);
			if (j->slack)
				j->slack[(size_t)r * cols + c] = (float)(k * u * (a / cols) * rs * fabs(g) +
					16.0 * u * (fabs(((double)x[c] - m) * rs * g) + fabs((double)j->beta[c])));
		}
	}
	free(x);
}

void ref_layernorm(const void *in, const void *residual, void *residual_out, int dtype,
                   const float *gamma, const float *beta, int zero_centered, float eps,
                   int rows, int cols, float *out, float *mu, float *rsigma, float *slack)
{
	NormJob j = {in, residual, residual_out, dtype, zero_centered, rows, cols, gamma, beta, eps, out, mu, rsigma, slack};
	ref_parallel_chunks(ref_count(rows), REF_TASK_ROWS, ln_task, &j);
}

static double sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

float ref_glu1(int kind, float af, float bf, float limit, float alpha)
{
	if (!TG_ACT_GATED(kind)) /* silu, gelu, ...: the gated form with b = 1 */
		kind = TG_ACT_BASE(kind), bf = 1.0f;
	double a = af, b = bf, act;
	switch (kind) {
	case REF_SWIGLU:
		act = a * sigmoid(a);
		break;
	case REF_GEGLU: /* tanh-approximate GELU, as TE's gelu: 0.5 a (1 + tanh(k x)) == a sigmoid(2 k x), which keeps
	                 * the tiny values of a large negative a (1 + tanh cancels to 0 there, in double too) */
		act = a * sigmoid(1.5957691216057308 * (a + 0.044715 * a * a * a));
		break;
	case REF_REGLU:
		act = a > 0.0 ? a : 0.0;
		break;
	case REF_QGEGLU:
		act = a * sigmoid(1.702 * a);
		break;
	case REF_SREGLU:
		act = a > 0.0 ? a * a : 0.0;
		break;
	case REF_CLAMPED_SWIGLU: /* GPT-OSS: a <= limit, |b| <= limit, (b + 1) */
		if (a > limit)
			a = limit;
		if (b > limit)
			b = limit;
		if (b < -(double)limit)
			b = -(double)limit;
		act = a * sigmoid((double)alpha * a);
		b = b + 1.0;
		break;
	default:
		act = 0.0;
	}
	return (float)(act * b);
}

void ref_glu_pair(const void *h, int dtype, int halves, size_t r, int c, int cols, float *a, float *b)
{
	size_t base = r * (size_t)halves * (size_t)cols;
	*a = ref_load(h, dtype, base + (size_t)c);
	*b = halves == 2 ? ref_load(h, dtype, base + (size_t)cols + (size_t)c) : 1.0f;
}

typedef struct GluJob {
	int kind, dtype, cols;
	const void *in;
	float limit, alpha, *out;
} GluJob;

/* GLU rows [r0, r1). */
static void glu_task(void *ctx, size_t r0, size_t r1)
{
	const GluJob *j = ctx;
	const int halves = TG_ACT_GATED(j->kind) ? 2 : 1, cols = j->cols;
	for (size_t r = r0; r < r1; r++)
		for (int c = 0; c < cols; c++) {
			float a, b;
			ref_glu_pair(j->in, j->dtype, halves, r, c, cols, &a, &b);
			j->out[r * cols + c] = ref_glu1(j->kind, a, b, j->limit, j->alpha);
		}
}

void ref_glu(int kind, const void *in, int dtype, int rows, int cols, float limit, float alpha,
             float *out)
{
	GluJob j = {kind, dtype, cols, in, limit, alpha, out};
	ref_parallel_chunks(ref_count(rows), REF_TASK_ROWS, glu_task, &j);
}

typedef struct ConvJob {
	void *buf;
	int dtype;
	float *v;
} ConvJob;

static void load_task(void *ctx, size_t i0, size_t i1)
{
	const ConvJob *j = ctx;
	for (size_t i = i0; i < i1; i++)
		j->v[i] = ref_load(j->buf, j->dtype, i);
}

static void store_task(void *ctx, size_t i0, size_t i1)
{
	const ConvJob *j = ctx;
	for (size_t i = i0; i < i1; i++)
		ref_store(j->buf, j->dtype, i, j->v[i]);
}

void ref_load_all(const void *buf, int dtype, size_t n, float *v)
{
	ConvJob j = {(void *)buf, dtype, v};
	ref_parallel_chunks(n, REF_TASK_ELEMS, load_task, &j);
}

void ref_store_all(void *buf, int dtype, size_t n, const float *v)
{
	ConvJob j = {buf, dtype, (float *)v};
	ref_parallel_chunks(n, REF_TASK_ELEMS, store_task, &j);
}

typedef struct AmaxJob {
	const float *x;
	size_t n;
	float *part;
} AmaxJob;

static float amax_seq(const float *x, size_t n)
{
	float m = 0.0f;
	for (size_t i = 0; i < n; i++) {
		float a = fabsf(x[i]);
		if (a > m)
			m = a;
	}
	return m;
}

static void amax_task(void *ctx, size_t i0, size_t i1)
{
	AmaxJob *j = ctx;
	j->part[i0 / (REF_TASK_ELEMS * 16)] = amax_seq(j->x + i0, i1 - i0);
}

/* A maximum is exact and order-free (NaN never wins a > compare), so chunk maxima combine
 * to the sequential answer. */
float ref_amax(const float *x, size_t n)
{
	if (n <= (size_t)REF_TASK_ELEMS * 16)
		return amax_seq(x, n);
	size_t parts = (n + REF_TASK_ELEMS * 16 - 1) / (REF_TASK_ELEMS * 16);
	AmaxJob j = {x, n, malloc(sizeof(float) * parts)};
	if (!j.part)
		return amax_seq(x, n);
	ref_parallel_chunks(n, (size_t)REF_TASK_ELEMS * 16, amax_task, &j);
	float m = amax_seq(j.part, parts);
	free(j.part);
	return m;
}

typedef struct TransposeJob {
	const float *x;
	int rows, cols;
	float *out;
} TransposeJob;

/* Rows [r0, r1) of a transpose, in TILE-column strips (the writes stay in cache). */
static void transpose_task(void *ctx, size_t r0, size_t r1)
{
	const TransposeJob *j = ctx;
	for (int c0 = 0; c0 < j->cols; c0 += TILE)
		for (size_t r = r0; r < r1; r++)
			for (int c = c0; c < j->cols && c < c0 + TILE; c++)
				j->out[(size_t)c * j->rows + r] = j->x[r * j->cols + c];
}

void ref_transpose(const float *x, int rows, int cols, float *out)
{
	TransposeJob j = {x, rows, cols, out};
	ref_parallel_chunks(ref_count(rows), REF_TASK_ROWS, transpose_task, &j);
}

typedef struct QuantJob {
	const float *x;
	int rows, cols, fmt;
	float scale;
	uint8_t *out, *out_t;
} QuantJob;

static void quant_task(void *ctx, size_t r0, size_t r1)
{
	const QuantJob *j = ctx;
	for (int c0 = 0; c0 < j->cols; c0 += TILE)
		for (size_t r = r0; r < r1; r++)
			for (int c = c0; c < j->cols && c < c0 + TILE; c++) {
				uint8_t q = tg_f32_to_fmt(j->x[r * j->cols + c] * j->scale, j->fmt);
				if (j->out)
					j->out[r * j->cols + c] = q;
				if (j->out_t)
					j->out_t[(size_t)c * j->rows + r] = q;
			}
}

void ref_quant_tensor(const float *x, int rows, int cols, int fmt, float scale,
                      uint8_t *out, uint8_t *out_t, float *amax, float *scale_inv)
{
	QuantJob j = {x, rows, cols, fmt, scale, out, out_t};
	ref_parallel_chunks(ref_count(rows), REF_TASK_ROWS, quant_task, &j);
	if (amax)
		*amax = ref_amax(x, (size_t)rows * cols);
	if (scale_inv)
		*scale_inv = tg_scale_inv(scale);
}

typedef struct DequantJob {
	const uint8_t *q;
	float lut[256], scale_inv;
	float *y;
} DequantJob;

static void dequant_task(void *ctx, size_t i0, size_t i1)
{
	const DequantJob *j = ctx;
	for (size_t i = i0; i < i1; i++)
		j->y[i] = j->lut[j->q[i]] * j->scale_inv;
}

void ref_dequant_tensor(const uint8_t *q, size_t n, int fmt, float scale_inv, float *y)
{
	DequantJob j = {q, {0}, scale_inv, y};
	for (int c = 0; c < 256; c++) /* the decode is a function of the code: a table gives the same bits */
		j.lut[c] = tg_fmt_to_f32((uint8_t)c, fmt);
	ref_parallel_chunks(n, REF_TASK_ELEMS, dequant_task, &j);
}

/* max|x| over the block rows [r0,r1) x cols [c0,c1) of x [.][ld]. */
static float block_amax(const float *x, int ld, int r0, int r1, int c0, int c1)
{
	float m = 0.0f;
	for (int r = r0; r < r1; r++)
		for (int c = c0; c < c1; c++) {
			float a = fabsf(x[(size_t)r * ld + c]);
			if (a > m)
				m = a;
		}
	return m;
}

static int imin(int a, int b) { return a < b ? a : b; }
static int cdiv(int a, int b) { return (a + b - 1) / b; }

typedef struct BlockJob {
	const float *x;
	int rows, cols, fmt, pow2;
	float eps;
	uint8_t *out, *out_t;
	float *scale_inv, *scale_inv_t;
} BlockJob;

/* The rowwise 1x128 blocks of rows [r0, r1). */
static void b1_rows_task(void *ctx, size_t r0, size_t r1)
{
	const BlockJob *j = ctx;
	int cols = j->cols, rows = j->rows;
	float fmax = tg_fmt_max(j->fmt);
	for (int r = (int)r0; r < (int)r1; r++)
		for (int b = 0; b < cdiv(cols, 128); b++) {
			int c0 = b * 128, c1 = imin(cols, c0 + 128);
			float s = tg_block_scale(block_amax(j->x, cols, r, r + 1, c0, c1), fmax, j->eps, j->pow2);
			j->scale_inv[(size_t)b * rows + r] = tg_scale_inv(s);
			for (int c = c0; c < c1; c++)
				j->out[(size_t)r * cols + c] = tg_f32_to_fmt(j->x[(size_t)r * cols + c] * s, j->fmt);
		}
}

/* The columnwise 1x128 blocks (128 rows of a column) of columns [c0, c1), TILE at most: each block row's column
 * amaxes row by row (contiguous reads), then its codes. */
static void b1_cols_task(void *ctx, size_t cb, size_t ce)
{
	const BlockJob *j = ctx;
	int cols = j->cols, rows = j->rows, w = (int)(ce - cb);
	float fmax = tg_fmt_max(j->fmt), m[TILE], s[TILE];
	for (int b = 0; b < cdiv(rows, 128); b++) {
		int r0 = b * 128, r1 = imin(rows, r0 + 128);
		for (int k = 0; k < w; k++)
			m[k] = 0.0f;
		for (int r = r0; r < r1; r++)
			for (int k = 0; k < w; k++) {
				float a = fabsf(j->x[(size_t)r * cols + cb + k]);
				if (a > m[k]) /* block_amax's compare: NaN never wins */
					m[k] = a;
			}
		for (int k = 0; k < w; k++) {
			s[k] = tg_block_scale(m[k], fmax, j->eps, j->pow2);
			j->scale_inv_t[(size_t)b * cols + cb + k] = tg_scale_inv(s[k]);
		}
		for (int k = 0; k < w; k++)
			for (int r = r0; r < r1; r++)
				j->out_t[(cb + k) * rows + r] = tg_f32_to_fmt(j->x[(size_t)r * cols + cb + k] * s[k], j->fmt);
	}
}

void ref_quant_block1x128(const float *x, int rows, int cols, int fmt, float eps, int pow2,
                          uint8_t *out, float *scale_inv, uint8_t *out_t, float *scale_inv_t)
{
	BlockJob j = {x, rows, cols, fmt, pow2, eps, out, out_t, scale_inv, scale_inv_t};
	if (out)
		ref_parallel_chunks(ref_count(rows), REF_TASK_ROWS, b1_rows_task, &j);
	if (out_t)
		ref_parallel_chunks(ref_count(cols), TILE, b1_cols_task, &j);
}

typedef struct DqBlockJob {
	const uint8_t *q;
	const float *scale_inv;
	int rows, cols, fmt, square; /* square: 128x128 blocks, else 1x128 */
	float *y;
} DqBlockJob;

static void dq_block_task(void *ctx, size_t r0, size_t r1)
{
	const DqBlockJob *j = ctx;
	int cols = j->cols, bc = cdiv(cols, 128);
	for (size_t r = r0; r < r1; r++)
		for (int c = 0; c < cols; c++)
			j->y[r * cols + c] = tg_fmt_to_f32(j->q[r * cols + c], j->fmt) *
				(j->square ? j->scale_inv[(r / 128) * bc + c / 128] : j->scale_inv[(size_t)(c / 128) * j->rows + r]);
}

void ref_dequant_block1x128(const uint8_t *q, const float *scale_inv, int rows, int cols, int fmt,
                            float *y)
{
	DqBlockJob j = {q, scale_inv, rows, cols, fmt, 0, y};
	ref_parallel_chunks(ref_count(rows), REF_TASK_ROWS, dq_block_task, &j);
}

/* The 128x128 blocks of block rows [i0, i1). */
static void b2_task(void *ctx, size_t i0, size_t i1)
{
	const BlockJob *j = ctx;
	int rows = j->rows, cols = j->cols, br = cdiv(rows, 128), bc = cdiv(cols, 128);
	float fmax = tg_fmt_max(j->fmt);
	for (int i = (int)i0; i < (int)i1; i++)
		for (int b = 0; b < bc; b++) {
			int r0 = i * 128, r1 = imin(rows, r0 + 128), c0 = b * 128, c1 = imin(cols, c0 + 128);
			float s = tg_block_scale(block_amax(j->x, cols, r0, r1, c0, c1), fmax, j->eps, j->pow2);
			float si = tg_scale_inv(s);
			if (j->scale_inv)
				j->scale_inv[(size_t)i * bc + b] = si;
			if (j->scale_inv_t)
				j->scale_inv_t[(size_t)b * br + i] = si;
			for (int r = r0; r < r1; r++)
				for (int c = c0; c < c1; c++) {
					uint8_t q = tg_f32_to_fmt(j->x[(size_t)r * cols + c] * s, j->fmt);
					if (j->out)
						j->out[(size_t)r * cols + c] = q;
					if (j->out_t)
						j->out_t[(size_t)c * rows + r] = q;
				}
		}
}

void ref_quant_block128x128(const float *x, int rows, int cols, int fmt, float eps, int pow2,
                            uint8_t *out, float *scale_inv, uint8_t *out_t, float *scale_inv_t)
{
	BlockJob j = {x, rows, cols, fmt, pow2, eps, out, out_t, scale_inv, scale_inv_t};
	ref_parallel_chunks((size_t)cdiv(rows > 0 ? rows : 0, 128), 1, b2_task, &j);
}

void ref_dequant_block128x128(const uint8_t *q, const float *scale_inv, int rows, int cols,
                              int fmt, float *y)
{
	DqBlockJob j = {q, scale_inv, rows, cols, fmt, 1, y};
	ref_parallel_chunks(ref_count(rows), REF_TASK_ROWS, dq_block_task, &j);
}

typedef struct MxJob {
	const float *x;
	int rows, cols, fmt;
	uint8_t *out, *scale, *out_t, *scale_t;
} MxJob;

/* Rowwise MXFP8 of rows [r0, r1). */
static void mx_rows_task(void *ctx, size_t r0, size_t r1)
{
	const MxJob *j = ctx;
	int cols = j->cols, nb = cdiv(cols, 32);
	float fmax = tg_fmt_max(j->fmt);
	for (int r = (int)r0; r < (int)r1; r++)
		for (int b = 0; b < nb; b++) {
			int c0 = b * 32, c1 = imin(cols, c0 + 32);
			uint8_t e = tg_e8m0_from_amax(block_amax(j->x, cols, r, r + 1, c0, c1), fmax);
			float m = tg_e8m0_rcp(e);
			j->scale[(size_t)r * nb + b] = e;
			for (int c = c0; c < c1; c++)
				j->out[(size_t)r * cols + c] = tg_f32_to_fmt(j->x[(size_t)r * cols + c] * m, j->fmt);
		}
}

/* Columnwise MXFP8 of columns [c0, c1) (blocks of 32 along the rows). */
static void mx_cols_task(void *ctx, size_t cb, size_t ce)
{
	const MxJob *j = ctx;
	int rows = j->rows, cols = j->cols, nbt = cdiv(rows, 32);
	float fmax = tg_fmt_max(j->fmt);
	for (int c = (int)cb; c < (int)ce; c++)
		for (int b = 0; b < nbt; b++) {
			int r0 = b * 32, r1 = imin(rows, r0 + 32);
			uint8_t e = tg_e8m0_from_amax(block_amax(j->x, cols, r0, r1, c, c + 1), fmax);
			float m = tg_e8m0_rcp(e);
			j->scale_t[(size_t)b * cols + c] = e;
			for (int r = r0; r < r1; r++)
				j->out_t[(size_t)c * rows + r] = tg_f32_to_fmt(j->x[(size_t)r * cols + c] * m, j->fmt);
		}
}

void ref_quant_mxfp8(const float *x, int rows, int cols, int fmt, uint8_t *out, uint8_t *scale,
                     uint8_t *out_t, uint8_t *scale_t)
{
	MxJob j = {x, rows, cols, fmt, out, scale, out_t, scale_t};
	if (out)
		ref_parallel_chunks(ref_count(rows), REF_TASK_ROWS, mx_rows_task, &j);
	if (out_t)
		ref_parallel_chunks(ref_count(cols), TILE, mx_cols_task, &j);
}

typedef struct DqJob {
	const uint8_t *q, *scale;
	int rows, cols, fmt, scale_t;
	float s_enc;
	float *y;
} DqJob;

static void dq_mx_task(void *ctx, size_t r0, size_t r1)
{
	const DqJob *j = ctx;
	int cols = j->cols, nb = cdiv(cols, 32);
	for (size_t r = r0; r < r1; r++)
		for (int c = 0; c < cols; c++) {
			uint8_t e = j->scale_t ? j->scale[(size_t)(c / 32) * j->rows + r] : j->scale[r * nb + c / 32];
			/* e = 0 blocks were multiplied by 1 (TE), so they dequantize by 1 */
			float s = e == 0 ? 1.0f : tg_e8m0_to_f32(e);
			j->y[r * cols + c] = tg_fmt_to_f32(j->q[r * cols + c], j->fmt) * s;
		}
}

void ref_dequant_mxfp8(const uint8_t *q, const uint8_t *scale, int rows, int cols, int fmt,
                       int scale_t, float *y)
{
	DqJob j = {q, scale, rows, cols, fmt, scale_t, 0, y};
	ref_parallel_chunks(ref_count(rows), REF_TASK_ROWS, dq_mx_task, &j);
}

/* cuBLASLt block-scaling-factor layout: the [rows][scols] scale matrix is
 * padded to multiples of 128 rows and 4 columns and cut into 128x4 tiles of
 * 512 bytes, tiles in row-major order; inside a tile, scale (r, c) sits at
 * (r % 32) * 16 + (r / 32) * 4 + c, i.e. four 32-row slabs interleaved. */
size_t ref_swizzle_index(int r, int c, int scols)
{
	size_t tiles_per_row = (size_t)cdiv(scols, 4);
	size_t tile = (size_t)(r / 128) * tiles_per_row + (size_t)(c / 4);
	int rr = r % 128, cc = c % 4;
	return tile * 512 + (size_t)(rr % 32) * 16 + (size_t)(rr / 32) * 4 + (size_t)cc;
}

size_t ref_swizzle_size(int rows, int scols)
{
	return (size_t)cdiv(rows, 128) * 128 * (size_t)cdiv(scols, 4) * 4;
}

void ref_swizzle_scales(const uint8_t *s, int rows, int scols, uint8_t *out)
{
	memset(out, 0, ref_swizzle_size(rows, scols));
	for (int r = 0; r < rows; r++)
		for (int c = 0; c < scols; c++)
			out[ref_swizzle_index(r, c, scols)] = s[(size_t)r * scols + c];
}

typedef struct NvJob {
	const float *x;
	int rows, cols;
	const RefNvfp4 *o;
	float s_enc;
	uint8_t *out, *scale;
} NvJob;

static void nv_rows_task(void *ctx, size_t r0, size_t r1)
{
	const NvJob *j = ctx;
	const RefNvfp4 *o = j->o;
	int rows = j->rows, cols = j->cols, nb = cdiv(cols, 16), ob = cdiv(cols, 2);
	for (int r = (int)r0; r < (int)r1; r++)
		for (int b = 0; b < nb; b++) {
			int c0 = b * 16, c1 = imin(cols, c0 + 16);
			float am;
			if (o->two_d) {
				int rb = r / 16 * 16;
				am = block_amax(j->x, cols, rb, imin(rows, rb + 16), c0, c1);
			} else {
				am = block_amax(j->x, cols, r, r + 1, c0, c1);
			}
			uint8_t sd = tg_nvfp4_block_scale(am, j->s_enc);
			j->scale[(size_t)r * nb + b] = sd;
			ref_nvfp4_encode(j->x, (size_t)r * cols, c0, c1, sd, j->s_enc, o, j->out + (size_t)r * ob);
		}
}

void ref_nvfp4_encode(const float *x, size_t row0, int c0, int c1, uint8_t sd, float s_enc, const RefNvfp4 *o,
                      uint8_t *row)
{
	float m = tg_nvfp4_elem_scale(sd, s_enc);
	for (int c = c0; c < c1; c++) {
		size_t i = row0 + (size_t)c;
		float v = x[i] * m;
		uint8_t q = o->sr ? tg_f32_to_e2m1_sr(v, tg_philox_rand(o->seed, o->offset, i)) : tg_f32_to_e2m1(v);
		row[c / 2] = (uint8_t)((row[c / 2] & (c & 1 ? 0x0F : 0xF0)) | (q << (4 * (c & 1))));
	}
}

void ref_quant_nvfp4(const float *x, int rows, int cols, const RefNvfp4 *o, uint8_t *out,
                     uint8_t *scale, float *s_enc_out)
{
	int ob = cdiv(cols, 2);
	float gamax = o->global_amax >= 0.0f ? o->global_amax : ref_amax(x, (size_t)rows * cols);
	float s_enc = tg_nvfp4_s_enc(gamax);
	if (s_enc_out)
		*s_enc_out = s_enc;
	memset(out, 0, (size_t)rows * ob);
	NvJob j = {x, rows, cols, o, s_enc, out, scale};
	ref_parallel_chunks(ref_count(rows), REF_TASK_ROWS, nv_rows_task, &j);
}

static void dq_nv_task(void *ctx, size_t r0, size_t r1)
{
	const DqJob *j = ctx;
	int cols = j->cols, nb = cdiv(cols, 16), ob = cdiv(cols, 2);
	for (size_t r = r0; r < r1; r++)
		for (int c = 0; c < cols; c++) {
			uint8_t code = (j->q[r * ob + c / 2] >> (4 * (c & 1))) & 0xF;
			float sd = tg_e4m3_to_f32(j->scale[r * nb + c / 16]);
			j->y[r * cols + c] = tg_e2m1_to_f32(code) * tg_div_rn(sd, j->s_enc);
		}
}

void ref_dequant_nvfp4(const uint8_t *q, const uint8_t *scale, int rows, int cols, float s_enc,
                       float *y)
{
	DqJob j = {q, scale, rows, cols, 0, 0, s_enc, y};
	ref_parallel_chunks(ref_count(rows), REF_TASK_ROWS, dq_nv_task, &j);
}

void ref_rht_rows(const float *x, int rows, int cols, uint16_t sign_mask, float *y)
{
	for (int r = 0; r < rows; r++) {
		const float *xr = x + (size_t)r * cols;
		float *yr = y + (size_t)r * cols;
		int c = 0;
		for (; c + 16 <= cols; c += 16) {
			float t[16];
			tg_rht16(xr + c, sign_mask, t);
			memcpy(yr + c, t, sizeof t);
		}
		if (yr != xr) /* the last partial group is left as is */
			memcpy(yr + c, xr + c, sizeof *yr * (size_t)(cols - c));
	}
}
