/* block_scales.h: the checker's rules for a fused norm's or GLU's copies: their block scales, and the elements
 * that may round either way.
 * The kernel computes the op's value in float, the reference in double (README, Numerics),
 * so a block's amax, and with it its scale, can differ: by a few ulps (1x128 without pow2),
 * or by one power of two where the amax straddles one (1x128 with pow2, MXFP8's E8M0). */
#ifndef TG_BLOCK_SCALES_H
#define TG_BLOCK_SCALES_H

#include <stdbool.h>
#include <stddef.h>

#include "gen.h"
#include "interp.h"
#include "ref.h"

/* How far (FP32 ulps) a 1x128 scale without pow2 may lie from the reference's: the float value's
 * few roundings (a LayerNorm with beta and zero-centered gamma: x - mu, * rsigma, * (gamma + 1),
 * + beta, and mu, rsigma in float) moved one block's amax 5 ulps on the H100 (fourteenth session). */
#define TG_BLOCK_SCALE_ULPS 8

/* block_scales_adopt takes the GPU's block scales gpu (host copy of t's scale_inv, or of scale_inv_t
 * when col) into the reference r where the rule allows: a 1x128 scale (no pow2) within
 * TG_BLOCK_SCALE_ULPS, or within the relative error r->slack allows the block's amax (a LayerNorm's
 * float mean: a block of few elements near the row's mean, e.g. a columnwise block of one token), is
 * copied, as is one whose values are all below FLT_MIN (0 in float: the block quantized again under the GPU's
 * scale); a power-of-two move (1x128 with pow2, MXFP8 one E8M0 step) is copied and that block's
 * codes are quantized again from r->value with the GPU's scale, at most max(4, 1e-4 of the blocks)
 * such blocks. Layouts: rowwise MXFP8 scale_inv [rows][nb], 1x128 [nb][rows]; columnwise
 * scale_inv_t [nb][cols] for both, data_t [cols][rows]. *close and *moved count the two kinds;
 * further differences are left for the comparison to fail. Returns the number of blocks. */
long block_scales_adopt(const Tensor *t, long rows, long cols, bool col, const unsigned char *gpu, RefTensor *r,
	size_t *close, size_t *moved);

/* mx_deq_mismatches counts the elements of an MXFP8 copy's BF16 operand deq (an emulated GEMM's, written by the
 * quantizing kernel or dequantize.cu) that are not BF16(code * 2^(e-127), 1 for e = 0) of that copy's codes and
 * E8M0 scales (format fmt, TG_FMT_*): rowwise codes [rows][cols], scales [rows][ceil(cols/32)]; col: codes
 * [cols][rows], scales [ceil(rows/32)][cols]; deq in the codes' layout. A NaN matches any NaN. *first: the first
 * mismatching element's index (untouched when none). Bit-exact: the kernels decode by the same steps. */
size_t mx_deq_mismatches(const unsigned char *codes, const unsigned char *scales, const uint16_t *deq, long rows,
	long cols, bool col, int fmt, long *first);

/* nvfp4_deq_mismatches: the same for an NVFP4 copy: BF16(e2m1(code) * (E4M3 scale / s_enc), the division rounded
 * once, as nvfp4_dequantize.cu); rowwise codes [rows][ceil(cols/2)] (element 2k in the low nibble), scales
 * [rows][ceil(cols/16)]; col: codes [cols][ceil(rows/2)], scales [cols][ceil(rows/16)]; deq in the codes' layout. */
size_t nvfp4_deq_mismatches(const unsigned char *codes, const unsigned char *scales, float s_enc, const uint16_t *deq,
	long rows, long cols, bool col, long *first);

/* nvfp4_scales_adopt takes the GPU's E4M3 block scales gpu ([rows][ceil(cols/16)], host copy) of one NVFP4 copy
 * whose reference codes q ([rows][ceil(cols/2)]) and scales sr were quantized from x [rows][cols] under s_enc: a
 * scale one code from the reference's is copied into sr and its block encoded again from x under it, while *budget
 * lasts (decremented a block). With 16x16 blocks (opt->two_d) a tile's scale is stored on each of its (up to) 16
 * rows: the tile is taken whole and charged once, at its first row, or not at all (charged one entry at a time, one
 * moved tile spent 16 of the budget: conformance seed 2242, a LayerNorm's 2D copies at 993 tokens). Scales further
 * apart stay, for the comparison to fail. Returns the blocks (tiles) taken. */
size_t nvfp4_scales_adopt(const unsigned char *gpu, const float *x, long rows, long cols, const RefNvfp4 *opt,
	float s_enc, uint8_t *q, uint8_t *sr, size_t *budget);

/* The relative distance from a rounding midpoint within which an element may round either way: the float
 * computation of a norm's or GLU's value (a few FP32 roundings, each 2^-24) against the reference's double.
 * Exact ties are not rare: a 1x128 block's scaled values are 448 x_i gamma_i / max(x gamma), ratios of BF16
 * products, which land on E4M3 midpoints where the block's largest product has a short mantissa (13 of 111104
 * elements of a norm's copy, conformance seed 2221). */
#define TG_TIE_REL 0x1p-19

/* near_ties marks the elements of component c (DATA or DATA_T) of a norm's or GLU's output t whose reference
 * value times its multiplier lies within TG_TIE_REL of a rounding boundary of the format (the value moved by that
 * much either way rounds to two codes): there the GPU's float value may round to either neighbour (README,
 * Numerics); only where the GPU's codes gpu and the reference's ref differ. NULL where the rule does not apply
 * (FP32 outputs, 128x128, NVFP4), without the reference value, or where no element is marked. */
uint8_t *near_ties(const Tensor *t, const RefTensor *r, Component c, long rows, long cols, const void *gpu,
	const void *ref);

#endif
