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
// Instruction-lean: the codes decoded by cvt.f16x2.e4m3x2/e5m2x2 and rounded by cvt.bf16x2 (the
// software decode and rounding before took about 25 instructions an element).
#include "tg_formats.h"
#include "tg_recipe.h"
#include "tg_kernel.h"

/* e = 0 blocks were quantized with multiplier 1 (TE), so they dequantize by 1 */
__device__ __forceinline__ float dq_scale(uint8_t e) { return e == 0 ? 1.0f : tg_e8m0_to_f32(e); }

// The two FP8 codes in the low 16 bits of w (element 0 low) as FP32, by the hardware's FP8 -> FP16 conversion
// (exact: every E4M3 and E5M2 value, NaN and inf included, is an FP16 value), as tg_fmt_to_f32 decodes them.
__device__ __forceinline__ void dq_fp8x2(uint32_t w, float &lo, float &hi)
{
	uint32_t h;
	const uint16_t b = (uint16_t)w;
	if (TG_FMT == TG_FMT_E4M3)
		asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(h) : "h"(b));
	else
		asm("cvt.rn.f16x2.e5m2x2 %0, %1;" : "=r"(h) : "h"(b));
	asm("cvt.f32.f16 %0, %1;" : "=f"(lo) : "h"((uint16_t)(h & 0xFFFFu)));
	asm("cvt.f32.f16 %0, %1;" : "=f"(hi) : "h"((uint16_t)(h >> 16)));
}

// The scale byte of element e (of the copy) in TE's columnwise layout [ceil(rows/32)][cols].
__device__ __forceinline__ uint8_t dq_scale_t(const uint8_t *sc, long long e, long long rows, long long cols)
{
	return sc[(e % rows) / 32 * cols + e / rows];
}

// A chunk's scale, or each element's (a columnwise chunk that spans columns: rows % 16 != 0). The columnwise
// index of a whole chunk by 32-bit division where the chunks fit (64-bit division cost ~4 instructions an element).
extern "C" __global__ void __launch_bounds__(TG_THREADS) TG_KERNEL(const TgParams p)
{
	const uint8_t *q = (const uint8_t *)p.p[TG_P_IN];
	const uint8_t *sc = (const uint8_t *)p.p[TG_P_SCALE_INV];
	uint16_t *out = (uint16_t *)p.p[TG_P_OUT];
	const long long rows = p.n[0], cols = p.n[1];
	const long long chunks = rows * cols / 16;
	const bool one_scale = !TG_SCALE_T || rows % 16 == 0; /* every chunk lies in one scale block */
	const bool narrow = chunks < (1ll << 32);
	const uint32_t rpc = (uint32_t)(rows / 16); /* chunks a column (one_scale) */
	for (long long c = (long long)blockIdx.x * TG_THREADS + threadIdx.x; c < chunks;
	     c += (long long)gridDim.x * TG_THREADS) {
		const uint4 v = *(const uint4 *)(q + c * 16);
		const long long e0 = c * 16; /* first element */
		uint8_t e;
		if (!TG_SCALE_T) {
			e = sc[c / 2];
		} else if (one_scale && narrow) {
			const uint32_t cc = (uint32_t)c / rpc, rc = (uint32_t)c - cc * rpc;
			e = sc[(long long)(rc / 2) * cols + cc];
		} else {
			e = dq_scale_t(sc, e0, rows, cols);
		}
		const float s = dq_scale(e);
		const uint32_t w[4] = {v.x, v.y, v.z, v.w};
		uint32_t o[8];
#pragma unroll
		for (int i = 0; i < 8; i++) {
			float slo = s, shi = s, lo, hi;
			if (!one_scale) {
				slo = dq_scale(dq_scale_t(sc, e0 + 2 * i, rows, cols));
				shi = dq_scale(dq_scale_t(sc, e0 + 2 * i + 1, rows, cols));
			}
			dq_fp8x2(w[i / 2] >> (16 * (i % 2)), lo, hi);
			o[i] = tg_f32x2_to_bf16x2(lo * slo, hi * shi);
		}
		uint4 *dst = (uint4 *)(out + c * 16);
		dst[0] = make_uint4(o[0], o[1], o[2], o[3]);
		dst[1] = make_uint4(o[4], o[5], o[6], o[7]);
	}
}
