/* block_scales.c: block_scales_adopt, nvfp4_scales_adopt, near_ties, mx_deq_mismatches and nvfp4_deq_mismatches
 * (block_scales.h), host arrays only. */
#include "block_scales.h"

#include "layout.h"
#include "tg_formats.h"
#include "tg_recipe.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ulps between two positive finite floats */
static long ulps_apart(float a, float b)
{
	int32_t x, y;
	memcpy(&x, &a, 4);
	memcpy(&y, &b, 4);
	return labs((long)x - (long)y);
}

/* Index in the [rows][cols] value of element e of line ln (a row, or with col a column). */
static size_t value_at(bool col, long cols, long ln, long e)
{
	return col ? (size_t)(e * cols + ln) : (size_t)(ln * cols + e);
}

/* Index of block b of line ln (a row of the copy) in its scale array: rowwise MXFP8 [rows][ceil(cols/32)], rowwise
 * 1x128 [nb][rows], columnwise [nb][cols] for both (block_scales.h). */
static size_t scale_at(bool mx, bool col, long rows, long cols, long ln, long b)
{
	return col ? (size_t)(b * cols + ln) : mx ? (size_t)(ln * ((cols + 31) / 32) + b) : (size_t)(b * rows + ln);
}

/* The relative error r->slack allows a block's amax: elements [e0, e1) of line ln (a row, or with
 * col a column of the [..][cols] value), their largest slack over their largest |value| (0 without
 * slack or where the reference's amax is 0). */
static float block_slack(const RefTensor *r, bool col, long cols, long ln, long e0, long e1)
{
	if (!r->slack)
		return 0.0f;
	float amax = 0.0f, s = 0.0f;
	for (long e = e0; e < e1; e++) {
		size_t k = value_at(col, cols, ln, e);
		amax = fmaxf(amax, fabsf(r->value[k]));
		s = fmaxf(s, r->slack[k]);
	}
	return amax > 0.0f ? s / amax : 0.0f;
}

/* True when elements [e0, e1) of line ln quantize to zero codes (+-0) under multiplier m: a block of
 * values too small for any scale to lift, whose scale then says nothing (the float value of a
 * GEGLU far in its tail is 0 where the double one is a denormal: amax 0 and scale 1 on the GPU,
 * the largest scale in the reference, every code 0 under both). */
static bool zero_codes(const RefTensor *r, bool col, long cols, long ln, long e0, long e1, float m, int fmt)
{
	for (long e = e0; e < e1; e++)
		if (tg_f32_to_fmt(r->value[value_at(col, cols, ln, e)] * m, fmt) & 0x7f)
			return false;
	return true;
}

/* True when every element [e0, e1) of line ln is below FLT_MIN in magnitude: a float computation of the
 * values (the GPU's) may give 0 for all of them (a GEGLU far in its tail), i.e. a block amax of 0 and scale 1,
 * where the reference's denormal amax takes the largest scale and lifts them to nonzero codes. */
static bool tiny_block(const RefTensor *r, bool col, long cols, long ln, long e0, long e1)
{
	for (long e = e0; e < e1; e++)
		if (!(fabsf(r->value[value_at(col, cols, ln, e)]) < 1.17549435e-38f))
			return false;
	return true;
}

/* The codes q of elements [e0, e1) of line ln (lines of len elements) quantized again under multiplier m. */
static void requantize(const RefTensor *r, uint8_t *q, bool col, long cols, long len, long ln, long e0, long e1, float m,
	int fmt)
{
	for (long e = e0; e < e1; e++)
		q[ln * len + e] = tg_f32_to_fmt(r->value[value_at(col, cols, ln, e)] * m, fmt);
}

long block_scales_adopt(const Tensor *t, long rows, long cols, bool col, const unsigned char *gpu, RefTensor *r,
	size_t *close, size_t *moved)
{
	bool mx = t->recipe.scaling == SCALING_MXFP8;
	Component sc = col ? COMP_SCALE_INV_T : COMP_SCALE_INV, dc = col ? COMP_DATA_T : COMP_DATA;
	long bw = mx ? 32 : 128, lines = col ? cols : rows, len = col ? rows : cols, nb = (len + bw - 1) / bw;
	int fmt = t->dtype == DT_E5M2 ? TG_FMT_E5M2 : TG_FMT_E4M3;
	size_t budget = (size_t)(lines * nb + 9999) / 10000;
	budget = budget < 4 ? 4 : budget;
	uint8_t *q = r->comp[dc], *rs = r->comp[sc];
	*close = *moved = 0;
	for (long ln = 0; ln < lines; ln++) /* a line: a row of the rowwise copy, a column of the columnwise one */
		for (long b = 0; b < nb; b++) {
			size_t k = scale_at(mx, col, rows, cols, ln, b);
			long e0 = b * bw, e1 = len < (b + 1) * bw ? len : (b + 1) * bw;
			float m; /* the GPU's multiplier, when the block is quantized again */
			if (mx) {
				uint8_t eg = gpu[k], er = rs[k];
				if (eg != er && eg != 0xff && zero_codes(r, col, cols, ln, e0, e1, tg_e8m0_rcp(er), fmt) &&
					zero_codes(r, col, cols, ln, e0, e1, tg_e8m0_rcp(eg), fmt)) {
					rs[k] = eg; /* zero codes under either scale */
					(*close)++;
					continue;
				}
				if (eg != er && tiny_block(r, col, cols, ln, e0, e1)) {
					rs[k] = eg; /* every value 0 in float: quantized again under the GPU's scale */
					(*close)++;
					requantize(r, q, col, cols, len, ln, e0, e1, tg_e8m0_rcp(eg), fmt);
					continue;
				}
				if (eg == er || abs(eg - er) != 1 || *moved >= budget)
					continue;
				rs[k] = eg;
				m = tg_e8m0_rcp(eg);
			} else {
				float sg, sr;
				memcpy(&sg, gpu + 4 * k, 4);
				memcpy(&sr, rs + 4 * k, 4);
				if (sg == sr || !(sg > 0) || !(sr > 0) || isinf(sg) || isinf(sr))
					continue;
				if (zero_codes(r, col, cols, ln, e0, e1, 1.0f / sr, fmt) && zero_codes(r, col, cols, ln, e0, e1, 1.0f / sg, fmt)) {
					memcpy(rs + 4 * k, &sg, 4); /* zero codes under either scale */
					(*close)++;
					continue;
				}
				if (tiny_block(r, col, cols, ln, e0, e1)) {
					memcpy(rs + 4 * k, &sg, 4); /* every value 0 in float: quantized again under the GPU's scale */
					(*close)++;
					requantize(r, q, col, cols, len, ln, e0, e1, 1.0f / sg, fmt);
					continue;
				}
				if (!t->recipe.pow2) {
					if (ulps_apart(sg, sr) <= TG_BLOCK_SCALE_ULPS || fabsf(sg - sr) <= sr * block_slack(r, col, cols, ln, e0, e1)) {
						memcpy(rs + 4 * k, &sg, 4);
						(*close)++;
					}
					continue;
				}
				if ((sg != 2 * sr && sr != 2 * sg) || *moved >= budget)
					continue;
				memcpy(rs + 4 * k, &sg, 4);
				m = 1.0f / sg; /* a power of two: exact */
			}
			(*moved)++;
			requantize(r, q, col, cols, len, ln, e0, e1, m, fmt);
		}
	return lines * nb;
}

/* The multiplier the reference quantized element k of line ln of t's copy (col: the columnwise one) with (per
 * tensor, 1x128, MXFP8; 1 for an unquantized BF16/FP16 output); 0 where the rule does not apply (128x128, NVFP4:
 * their own rules). */
static double tie_mult(const Tensor *t, const RefTensor *r, bool col, long rows, long cols, long ln, long k)
{
	if (!layout_quantized(t))
		return 1.0;
	const void *sc = r->comp[col ? COMP_SCALE_INV_T : COMP_SCALE_INV];
	switch (t->recipe.scaling) {
	case SCALING_DELAYED:
	case SCALING_CURRENT:
		return r->scale;
	case SCALING_BLOCK1X128: {
		float si = ((const float *)sc)[scale_at(false, col, rows, cols, ln, k / 128)];
		return si > 0 ? 1.0 / si : 0.0;
	}
	case SCALING_MXFP8:
		return tg_e8m0_rcp(((const uint8_t *)sc)[scale_at(true, col, rows, cols, ln, k / 32)]);
	default:
		return 0.0;
	}
}

/* The value v rounded to t's format (FP8 codes, BF16/FP16 bits). */
static unsigned round_to(const Tensor *t, double v)
{
	float f = (float)v;
	return t->dtype == DT_BF16 ? tg_f32_to_bf16(f) : t->dtype == DT_F16 ? tg_f32_to_f16(f)
		: tg_f32_to_fmt(f, t->dtype == DT_E5M2 ? TG_FMT_E5M2 : TG_FMT_E4M3);
}

/* near_ties: block_scales.h. */
uint8_t *near_ties(const Tensor *t, const RefTensor *r, Component c, long rows, long cols, const void *gpu,
	const void *ref)
{
	bool fp8 = t->dtype == DT_E4M3 || t->dtype == DT_E5M2;
	if (!r->value || !(fp8 || t->dtype == DT_BF16 || t->dtype == DT_F16) || (c != COMP_DATA && c != COMP_DATA_T) ||
		(fp8 && !r->comp[c == COMP_DATA_T ? COMP_SCALE_INV_T : COMP_SCALE_INV] &&
		 t->recipe.scaling != SCALING_DELAYED && t->recipe.scaling != SCALING_CURRENT))
		return NULL;
	size_t n = (size_t)rows * (size_t)cols;
	uint8_t *tie = calloc(n ? n : 1, 1);
	if (!tie)
		return NULL;
	bool any = false, col = c == COMP_DATA_T;
	long len = col ? rows : cols; /* the copy's row length */
	for (size_t e = 0; e < n; e++) {
		bool same = fp8 ? ((const uint8_t *)gpu)[e] == ((const uint8_t *)ref)[e]
		                : ((const uint16_t *)gpu)[e] == ((const uint16_t *)ref)[e];
		if (same)
			continue; /* only the elements that differ are judged */
		long ln = (long)(e / (size_t)len), k = (long)(e % (size_t)len); /* line (a row of the copy), element in it */
		double m = tie_mult(t, r, col, rows, cols, ln, k);
		if (m == 0.0) {
			free(tie);
			return NULL;
		}
		double x = (double)r->value[value_at(col, cols, ln, k)] * m;
		tie[e] = isfinite(x) && round_to(t, x * (1 + TG_TIE_REL)) != round_to(t, x * (1 - TG_TIE_REL));
		any |= tie[e];
	}
	if (!any) {
		free(tie);
		return NULL;
	}
	return tie;
}

/* nvfp4_scales_adopt: block_scales.h. */
size_t nvfp4_scales_adopt(const unsigned char *gpu, const float *x, long rows, long cols, const RefNvfp4 *opt,
	float s_enc, uint8_t *q, uint8_t *sr, size_t *budget)
{
	long nb = (cols + 15) / 16, qb = (cols + 1) / 2;
	unsigned char *taken = calloc((size_t)nb + 1, 1); /* taken[b]: the current tile row's tile b was taken */
	size_t moved = 0;
	if (!taken)
		return 0;
	for (long k = 0; k < rows * nb; k++) {
		long row = k / nb, b = k % nb;
		bool first = !opt->two_d || row % 16 == 0; /* a block of its own, or the first row of a tile */
		if (first)
			taken[b] = 0;
		if (gpu[k] == sr[k] || abs((int)gpu[k] - (int)sr[k]) != 1 || ((gpu[k] | sr[k]) & 0x80))
			continue;
		if (first) {
			if (!*budget)
				continue;
			(*budget)--;
			moved++;
			taken[b] = 1;
		} else if (!taken[b]) {
			continue; /* the tile was not taken: its rows stay the reference's, and fail */
		}
		sr[k] = gpu[k];
		long c0 = b * 16, c1 = c0 + 16 < cols ? c0 + 16 : cols;
		ref_nvfp4_encode(x, (size_t)(row * cols), (int)c0, (int)c1, gpu[k], s_enc, opt, q + row * qb);
	}
	free(taken);
	return moved;
}

size_t mx_deq_mismatches(const unsigned char *codes, const unsigned char *scales, const uint16_t *deq, long rows,
	long cols, bool col, int fmt, long *first)
{
	size_t bad = 0;
	long nb = (cols + 31) / 32;
	for (long r = 0; r < rows; r++)
		for (long c = 0; c < cols; c++) {
			long e = col ? c * rows + r : r * cols + c;
			uint8_t s = col ? scales[r / 32 * cols + c] : scales[r * nb + c / 32];
			uint16_t want = tg_f32_to_bf16(tg_fmt_to_f32(codes[e], fmt) * tg_e8m0_deq(s));
			bool nan = (want & 0x7FFFu) > 0x7F80u && (deq[e] & 0x7FFFu) > 0x7F80u;
			if (deq[e] != want && !nan && bad++ == 0)
				*first = e;
		}
	return bad;
}

size_t nvfp4_deq_mismatches(const unsigned char *codes, const unsigned char *scales, float s_enc, const uint16_t *deq,
	long rows, long cols, bool col, long *first)
{
	size_t bad = 0;
	long lines = col ? cols : rows, len = col ? rows : cols; /* the copy's rows and row length */
	long qb = (len + 1) / 2, nb = (len + 15) / 16;
	for (long ln = 0; ln < lines; ln++)
		for (long k = 0; k < len; k++) {
			long e = ln * len + k;
			uint8_t code = (uint8_t)((codes[ln * qb + k / 2] >> (4 * (k & 1))) & 0xFu);
			float s = tg_div_rn(tg_e4m3_to_f32(scales[ln * nb + k / 16]), s_enc); /* as nvfp4_dequantize.cu */
			uint16_t want = tg_f32_to_bf16(tg_e2m1_to_f32(code) * s);
			bool nan = (want & 0x7FFFu) > 0x7F80u && (deq[e] & 0x7FFFu) > 0x7F80u;
			if (deq[e] != want && !nan && bad++ == 0)
				*first = e;
		}
	return bad;
}
