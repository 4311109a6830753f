// dequantize.cu: MXFP8 (FP8 elements + one E8M0 scale per 32 along a row) to BF16.
// tegen-slots: TG_KERNEL TG_THREADS TG_FMT
//
// Used by the emulated MXFP8 GEMM on GPUs without native block-scaled MMA
// (Hopper): both operands are dequantized to BF16 (exactly: an FP8 value times
// a power of two fits BF16) and a BF16 GEMM runs. The data and its scales are
// treated as flat arrays: with cols % 32 == 0 (MXFP8 requires it), element e
// has scale e / 32, whichever copy (rowwise or the transposed columnwise) it is.
//
// Pointers: p[TG_P_IN] FP8 codes, p[TG_P_SCALE_INV] E8M0 bytes, p[TG_P_OUT] BF16.
// n[0] = number of elements (a multiple of 32).
// Launch: block (TG_THREADS,1,1), grid.x = ceil(n / (TG_THREADS*16)) capped;
// grid-stride, so any grid.x >= 1 is correct.
#include "tg_formats.h"
#include "tg_recipe.h"
#include "tg_kernel.h"

extern "C" __global__ void __launch_bounds__(TG_THREADS) TG_KERNEL(const TgParams p)
{
	const uint8_t *q = (const uint8_t *)p.p[TG_P_IN];
	const uint8_t *sc = (const uint8_t *)p.p[TG_P_SCALE_INV];
	uint16_t *out = (uint16_t *)p.p[TG_P_OUT];
	const long long chunks = p.n[0] / 16;
	for (long long c = (long long)blockIdx.x * TG_THREADS + threadIdx.x; c < chunks;
	     c += (long long)gridDim.x * TG_THREADS) {
		const uint4 v = *(const uint4 *)(q + c * 16);
		const uint8_t e = sc[c / 2];
		/* e = 0 blocks were quantized with multiplier 1 (TE), so they dequantize by 1 */
		const float s = e == 0 ? 1.0f : tg_e8m0_to_f32(e);
		const uint32_t w[4] = {v.x, v.y, v.z, v.w};
		uint32_t o[8];
#pragma unroll
		for (int i = 0; i < 8; i++) {
			const uint32_t word = w[i / 2] >> (16 * (i % 2));
			const float lo = tg_fmt_to_f32((uint8_t)(word & 0xFF), TG_FMT) * s;
			const float hi = tg_fmt_to_f32((uint8_t)(word >> 8), TG_FMT) * s;
			o[i] = (uint32_t)tg_f32_to_bf16(lo) | ((uint32_t)tg_f32_to_bf16(hi) << 16);
		}
		uint4 *dst = (uint4 *)(out + c * 16);
		dst[0] = make_uint4(o[0], o[1], o[2], o[3]);
		dst[1] = make_uint4(o[4], o[5], o[6], o[7]);
	}
}
