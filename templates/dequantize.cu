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
// TG_SCALE_T 1: the columnwise copy [cols][P] (P = TG_PITCH(rows), rows rounded up to 16; codes and the
//   BF16 copy share the element index) with TE's columnwise scale layout [ceil(rows/32)][cols]: element
//   (c, r) has scale (r / 32) * cols + c. Every 8-element group lies in one line and one scale block; the
//   groups of a line's padding (r >= rows) are dequantized too (their scale row r / 32 < ceil(rows/32)).
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

// 8 codes (v, element 0 in the low byte of v.x) times their block's scale s, rounded to BF16 (element 0 low).
__device__ __forceinline__ uint4 dq_group(uint2 v, float s)
{
	const uint32_t w[2] = {v.x, v.y};
	uint32_t o[4];
#pragma unroll
	for (int i = 0; i < 4; i++) {
		float lo, hi;
		tg_fp8x2_to_f32<TG_FMT>(w[i / 2] >> (16 * (i % 2)), lo, hi);
		o[i] = tg_f32x2_to_bf16x2(lo * s, hi * s);
	}
	return make_uint4(o[0], o[1], o[2], o[3]);
}

// The columnwise copy [cols][P] by 4 x 128 tiles (4 lines of the copy, 128 elements of each; P % 128 == 0):
// lane l takes line l / 8 and its groups l % 8 and l % 8 + 8, so a load instruction's scale bytes are 4
// consecutive bytes in each of 2 scale rows (2 sectors, where 32 groups along one line read one sector each 4
// groups: 8), and its loads and stores still cover whole sectors (64 and 128 contiguous bytes a line).
__device__ __forceinline__ void dq_tiles_t(const uint8_t *q, const uint8_t *sc, uint16_t *out, long long P,
                                           long long cols, int lane, long long nw)
{
	const uint32_t tpl = (uint32_t)(P / 128); // tiles along a line
	const long long tiles = cols / 4 * tpl, ln = lane / 8, gi = lane % 8;
	for (long long w = (long long)blockIdx.x * (TG_THREADS / 32) + threadIdx.x / 32; w < tiles; w += nw) {
		const uint32_t lb = (uint32_t)w / tpl, rb = (uint32_t)w - lb * tpl;
		const long long c = 4ll * lb + ln, e0 = c * P + 128ll * rb + 8 * gi; // line, first element of group 0
		uint2 v[2];
		uint8_t e[2];
#pragma unroll
		for (int h = 0; h < 2; h++) {
			v[h] = *(const uint2 *)(q + e0 + 64 * h);
			e[h] = sc[((long long)(128 * rb + 8 * gi + 64 * h) / 32) * cols + c];
		}
#pragma unroll
		for (int h = 0; h < 2; h++)
			*(uint4 *)(out + e0 + 64 * h) = dq_group(v[h], tg_e8m0_deq(e[h]));
	}
}

// Groups of 8 elements; warp w takes groups 64 w .. 64 w + 63, lane l groups 64 w + l and 64 w + 32 + l, so that
// each load instruction reads 256 contiguous bytes and each store writes 512. Each thread taking 16 consecutive
// elements before (one 16-byte load, two 16-byte stores 32 bytes apart) wrote half of a 32-byte sector an
// instruction: twice the L2 store sectors, and the L2 was the limit (91% busy at 66% of DRAM; H100, the MXFP8
// layer's d_h, twenty-second session). A group's scale is one byte (the rowwise copy: cols % 32 == 0; the
// columnwise one: P % 8 == 0). The columnwise index by 32-bit division where the groups fit (64-bit division cost
// ~4 instructions an element).
extern "C" __global__ void __launch_bounds__(TG_THREADS) TG_KERNEL(const TgParams p)
{
	const uint8_t *q = (const uint8_t *)p.p[TG_P_IN];
	const uint8_t *sc = (const uint8_t *)p.p[TG_P_SCALE_INV];
	uint16_t *out = (uint16_t *)p.p[TG_P_OUT];
	const long long rows = p.n[0], cols = p.n[1], P = TG_SCALE_T ? TG_PITCH(rows) : rows; // P: the copy's lines
	const long long groups = P * cols / 8; // P * cols % 16 == 0
	const bool narrow = groups < (1ll << 32);
	const uint32_t rpg = (uint32_t)(P / 8); /* groups a column */
	const int lane = threadIdx.x & 31;
	const long long nw = (long long)gridDim.x * (TG_THREADS / 32);
	if (TG_SCALE_T && P % 128 == 0 && cols % 4 == 0 && cols / 4 * (P / 128) < (1ll << 32)) {
		dq_tiles_t(q, sc, out, P, cols, lane, nw);
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
			} else if (narrow) {
				const uint32_t cc = (uint32_t)g / rpg, rg = (uint32_t)g - cc * rpg;
				e[h] = sc[(long long)(rg / 4) * cols + cc];
			} else {
				const long long cc = g / rpg, rg = g - cc * rpg;
				e[h] = sc[(rg / 4) * cols + cc];
			}
		}
#pragma unroll
		for (int h = 0; h < 2; h++) {
			const long long g = w * 64 + 32 * h + lane;
			if (g >= groups)
				continue;
			*(uint4 *)(out + g * 8) = dq_group(v[h], tg_e8m0_deq(e[h]));
		}
	}
}
