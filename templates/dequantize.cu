// dequantize.cu: MXFP8 (FP8 elements + one E8M0 scale per 32 along a row) to BF16.
// tegen-slots: TG_KERNEL TG_THREADS TG_FMT TG_SCALE_T
//
// Used by the emulated MXFP8 GEMM on GPUs without native block-scaled MMA
// (Hopper): both operands are dequantized to BF16 (exactly: an FP8 value times
// a power of two fits BF16) and a BF16 GEMM runs.
//
// n[0] = rows, n[1] = cols of the tensor (the rowwise copy's shape).
// TG_SCALE_T 0: the rowwise copy [rows][cols], scales [rows][cols/32]: element e
//   has scale e / 32 (cols % 32 == 0, which MXFP8 requires).
// TG_SCALE_T 1: the columnwise copy [cols][rows] with TE's columnwise scale layout
//   [ceil(rows/32)][cols]: element (c, r) has scale (r / 32) * cols + c. Any rows: when
//   rows % 8 != 0 an 8-element group spans two columns (at rows >= 8; more below), found by one
//   division a group (a division an element measured 44% of a copy at 8191 rows; H100).
// Pointers: p[TG_P_IN] FP8 codes, p[TG_P_SCALE_INV] E8M0 bytes, p[TG_P_OUT] BF16.
// Launch: block (TG_THREADS,1,1) (a multiple of 32), any grid.x >= 1 (grid-stride over 512-element warp segments).
// Instruction-lean: the codes decoded by cvt.f16x2.e4m3x2/e5m2x2 and rounded by cvt.bf16x2 (the
// software decode and rounding before took about 25 instructions an element); tg_formats.h's tg_fp8x2_to_f32 and
// tg_e8m0_deq, which the quantizing kernels that write a BF16 copy themselves use too: the same bits.
// The planner runs this kernel only for the copies no quantizing kernel writes dequantized (gen/plan_gemm.c's
// plan_dequantize).
#include "tg_formats.h"
#include "tg_recipe.h"
#include "tg_kernel.h"

// The scale byte of element e (of the copy) in TE's columnwise layout [ceil(rows/32)][cols].
__device__ __forceinline__ uint8_t dq_scale_t(const uint8_t *sc, long long e, long long rows, long long cols)
{
	return sc[(e % rows) / 32 * cols + e / rows];
}

// 8 codes (v, element 0 in the low byte of v.x) times their scales s[0..7], rounded to BF16 (element 0 low).
__device__ __forceinline__ uint4 dq_group(uint2 v, const float (&s)[8])
{
	const uint32_t w[2] = {v.x, v.y};
	uint32_t o[4];
#pragma unroll
	for (int i = 0; i < 4; i++) {
		float lo, hi;
		tg_fp8x2_to_f32<TG_FMT>(w[i / 2] >> (16 * (i % 2)), lo, hi);
		o[i] = tg_f32x2_to_bf16x2(lo * s[2 * i], hi * s[2 * i + 1]);
	}
	return make_uint4(o[0], o[1], o[2], o[3]);
}

// The columnwise copy [cols][rows] by 4 x 128 tiles (4 lines of the copy, 128 elements of each; rows % 128 == 0):
// lane l takes line l / 8 and its groups l % 8 and l % 8 + 8, so a load instruction's scale bytes are 4
// consecutive bytes in each of 2 scale rows (2 sectors, where 32 groups along one line read one sector each 4
// groups: 8), and its loads and stores still cover whole sectors (64 and 128 contiguous bytes a line).
__device__ __forceinline__ void dq_tiles_t(const uint8_t *q, const uint8_t *sc, uint16_t *out, long long rows,
                                           long long cols, int lane, long long nw)
{
	const uint32_t tpl = (uint32_t)(rows / 128); // tiles along a line
	const long long tiles = cols / 4 * tpl, ln = lane / 8, gi = lane % 8;
	for (long long w = (long long)blockIdx.x * (TG_THREADS / 32) + threadIdx.x / 32; w < tiles; w += nw) {
		const uint32_t lb = (uint32_t)w / tpl, rb = (uint32_t)w - lb * tpl;
		const long long c = 4ll * lb + ln, e0 = c * rows + 128ll * rb + 8 * gi; // line, first element of group 0
		uint2 v[2];
		uint8_t e[2];
#pragma unroll
		for (int h = 0; h < 2; h++) {
			v[h] = *(const uint2 *)(q + e0 + 64 * h);
			e[h] = sc[((long long)(128 * rb + 8 * gi + 64 * h) / 32) * cols + c];
		}
#pragma unroll
		for (int h = 0; h < 2; h++) {
			float s[8];
#pragma unroll
			for (int k = 0; k < 8; k++)
				s[k] = tg_e8m0_deq(e[h]);
			*(uint4 *)(out + e0 + 64 * h) = dq_group(v[h], s);
		}
	}
}

// Groups of 8 elements; warp w takes groups 64 w .. 64 w + 63, lane l groups 64 w + l and 64 w + 32 + l, so that
// each load instruction reads 256 contiguous bytes and each store writes 512. Each thread taking 16 consecutive
// elements before (one 16-byte load, two 16-byte stores 32 bytes apart) wrote half of a 32-byte sector an
// instruction: twice the L2 store sectors, and the L2 was the limit (91% busy at 66% of DRAM; H100, the MXFP8
// layer's d_h, twenty-second session). A group's scale is one byte where every group lies in one scale block (the
// rowwise copy, or the columnwise one with rows % 8 == 0: a column's groups start at multiples of 8); else each
// element finds its own. The columnwise index by 32-bit division where the groups fit (64-bit division cost ~4
// instructions an element).
extern "C" __global__ void __launch_bounds__(TG_THREADS) TG_KERNEL(const TgParams p)
{
	const uint8_t *q = (const uint8_t *)p.p[TG_P_IN];
	const uint8_t *sc = (const uint8_t *)p.p[TG_P_SCALE_INV];
	uint16_t *out = (uint16_t *)p.p[TG_P_OUT];
	const long long rows = p.n[0], cols = p.n[1];
	const long long groups = rows * cols / 8; // rows * cols % 16 == 0
	const bool one_scale = !TG_SCALE_T || rows % 8 == 0; /* every group lies in one scale block */
	const bool narrow = groups < (1ll << 32);
	const uint32_t rpg = (uint32_t)(rows / 8); /* groups a column (one_scale) */
	const int lane = threadIdx.x & 31;
	const long long nw = (long long)gridDim.x * (TG_THREADS / 32);
	if (TG_SCALE_T && rows % 128 == 0 && cols % 4 == 0 && cols / 4 * (rows / 128) < (1ll << 32)) {
		dq_tiles_t(q, sc, out, rows, cols, lane, nw);
		return;
	}
	for (long long w = (long long)blockIdx.x * (TG_THREADS / 32) + threadIdx.x / 32; w * 64 < groups; w += nw) {
		uint2 v[2] = {};
		uint8_t e[2] = {};
#pragma unroll
		for (int h = 0; h < 2; h++) { // both loads in flight before either group's math
			const long long g = w * 64 + 32 * h + lane;
			if (g >= groups)
				continue;
			v[h] = *(const uint2 *)(q + g * 8);
			if (!TG_SCALE_T) {
				e[h] = sc[g / 4];
			} else if (one_scale && narrow) {
				const uint32_t cc = (uint32_t)g / rpg, rg = (uint32_t)g - cc * rpg;
				e[h] = sc[(long long)(rg / 4) * cols + cc];
			} else if (one_scale) {
				e[h] = dq_scale_t(sc, g * 8, rows, cols);
			}
		}
#pragma unroll
		for (int h = 0; h < 2; h++) {
			const long long g = w * 64 + 32 * h + lane;
			if (g >= groups)
				continue;
			float s[8];
			if (one_scale || rows < 8) {
#pragma unroll
				for (int k = 0; k < 8; k++)
					s[k] = one_scale ? tg_e8m0_deq(e[h]) : tg_e8m0_deq(dq_scale_t(sc, g * 8 + k, rows, cols));
			} else { // rows >= 8: the group's elements lie in columns c and c + 1; one division a group
				long long c, r;
				if (rows * cols < (1ll << 32)) {
					const uint32_t c32 = (uint32_t)(g * 8) / (uint32_t)rows;
					c = c32, r = (long long)((uint32_t)(g * 8) - c32 * (uint32_t)rows);
				} else {
					c = g * 8 / rows, r = g * 8 - c * rows;
				}
				// three scales at most: rows r.. of column c in blocks r / 32 and (r + 7) / 32, the next column's
				// first rows (block 0); eight loads a group measured 64% of a copy (H100, 8191 x 14336)
				const long long rl = r + 7 < rows ? r + 7 : rows - 1; // the group's last row in column c
				const float s0 = tg_e8m0_deq(sc[r / 32 * cols + c]), s1 = tg_e8m0_deq(sc[rl / 32 * cols + c]);
				const float s2 = r + 7 >= rows ? tg_e8m0_deq(sc[c + 1]) : 0.0f;
#pragma unroll
				for (int k = 0; k < 8; k++)
					s[k] = r + k >= rows ? s2 : (r + k) / 32 != r / 32 ? s1 : s0;
			}
			*(uint4 *)(out + g * 8) = dq_group(v[h], s);
		}
	}
}
