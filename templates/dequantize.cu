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
//   rows % 16 != 0 a 16-element chunk spans columns, so each element finds its own scale.
// Pointers: p[TG_P_IN] FP8 codes, p[TG_P_SCALE_INV] E8M0 bytes, p[TG_P_OUT] BF16.
// Launch: block (TG_THREADS,1,1), any grid.x >= 1 (grid-stride over 16-element chunks).
#include "tg_formats.h"
#include "tg_recipe.h"
#include "tg_kernel.h"

/* e = 0 blocks were quantized with multiplier 1 (TE), so they dequantize by 1 */
__device__ __forceinline__ float dq_scale(uint8_t e) { return e == 0 ? 1.0f : tg_e8m0_to_f32(e); }

extern "C" __global__ void __launch_bounds__(TG_THREADS) TG_KERNEL(const TgParams p)
{
	const uint8_t *q = (const uint8_t *)p.p[TG_P_IN];
	const uint8_t *sc = (const uint8_t *)p.p[TG_P_SCALE_INV];
	uint16_t *out = (uint16_t *)p.p[TG_P_OUT];
	const long long rows = p.n[0], cols = p.n[1];
	const long long chunks = rows * cols / 16;
	for (long long c = (long long)blockIdx.x * TG_THREADS + threadIdx.x; c < chunks;
	     c += (long long)gridDim.x * TG_THREADS) {
		const uint4 v = *(const uint4 *)(q + c * 16);
		const long long e0 = c * 16; /* first element */
		const bool one_scale = !TG_SCALE_T || rows % 16 == 0; /* the chunk lies in one scale block */
		const uint8_t e = TG_SCALE_T ? sc[(e0 % rows) / 32 * cols + e0 / rows] : sc[c / 2];
		const float s = dq_scale(e);
		const uint32_t w[4] = {v.x, v.y, v.z, v.w};
		uint32_t o[8];
#pragma unroll
		for (int i = 0; i < 8; i++) {
			const uint32_t word = w[i / 2] >> (16 * (i % 2));
			float slo = s, shi = s;
			if (!one_scale) {
				const long long el = e0 + 2 * i, eh = el + 1;
				slo = dq_scale(sc[(el % rows) / 32 * cols + el / rows]);
				shi = dq_scale(sc[(eh % rows) / 32 * cols + eh / rows]);
			}
			const float lo = tg_fmt_to_f32((uint8_t)(word & 0xFF), TG_FMT) * slo;
			const float hi = tg_fmt_to_f32((uint8_t)(word >> 8), TG_FMT) * shi;
			o[i] = (uint32_t)tg_f32_to_bf16(lo) | ((uint32_t)tg_f32_to_bf16(hi) << 16);
		}
		uint4 *dst = (uint4 *)(out + c * 16);
		dst[0] = make_uint4(o[0], o[1], o[2], o[3]);
		dst[1] = make_uint4(o[4], o[5], o[6], o[7]);
	}
}
