// nvfp4_dequantize.cu: one NVFP4 copy (E2M1 pairs, E4M3 block scales, S_enc) to BF16.
// tegen-slots: TG_KERNEL TG_THREADS TG_COPY_T
//
// Used by the emulated NVFP4 GEMM on GPUs without native block-scaled FP4 MMA
// (Hopper): both operands are dequantized to BF16 and a BF16 GEMM runs.
// Element (r, c) of a copy [R][K] is y = e2m1(code) * (float(S_dec) / S_enc),
// IEEE division (ref_dequant_nvfp4), rounded once to BF16 (RNE).
//
// n[0] = rows, n[1] = cols of the tensor (as quantized). TG_COPY_T 0: the
// rowwise copy, R = rows, K = cols; 1: the columnwise copy, R = cols, K = rows
// (so a token count in the rows needs no separate launch slot).
// Pointers: p[TG_P_IN] codes [R][ceil(K/2)] bytes (TG_COPY_T: [R][TG_PITCH_FP4(K)/2]), p[TG_P_SCALE_INV] E4M3
// [R][ceil(K/16)], p[TG_P_SCALE] S_enc (one float), p[TG_P_OUT] BF16 [R][K] (TG_COPY_T: [R][TG_PITCH(K)],
// a columnwise copy's padded lines).
// Launch: block (TG_THREADS,1,1), any grid.x >= 1 (grid-stride over 16-element blocks,
// a thread per block: 8-byte loads, 32-byte stores when K % 16 == 0 or TG_COPY_T).
#include "tg_formats.h"
#include "tg_recipe.h"
#include "tg_kernel.h"

// One element: e2m1 code cd times s, rounded once to BF16.
__device__ __forceinline__ uint32_t deq1(uint32_t cd, float s) { return tg_f32_to_bf16(tg_e2m1_to_f32((uint8_t)cd) * s); }

// The 16 elements of block u (row r, columns c0 .., out's rows ld elements apart): one 8-byte load of codes and two
// 16-byte stores when K % 16 == 0 or a columnwise copy's padded lines (every row and block aligned), else element by
// element.
__device__ __forceinline__ void dequant_block(const uint8_t *q, uint16_t *out, long long K, long long ld, long long r, long long c0,
	float s)
{
	const uint8_t *row = q + r * (TG_COPY_T ? TG_PITCH_FP4(K) / 2 : (K + 1) / 2);
	if (TG_COPY_T || K % 16 == 0) { // (a columnwise copy's lines are whole 16-byte pieces)
		const uint2 cw = *(const uint2 *)(row + c0 / 2);
		const uint32_t w[2] = {cw.x, cw.y};
		uint32_t h[8];
#pragma unroll
		for (int k = 0; k < 8; k++) {
			const uint32_t lo = (w[k / 4] >> (8 * (k % 4))) & 0xFu, hi = (w[k / 4] >> (8 * (k % 4) + 4)) & 0xFu;
			h[k] = deq1(lo, s) | deq1(hi, s) << 16;
		}
		uint4 *d = (uint4 *)(out + r * ld + c0);
		d[0] = make_uint4(h[0], h[1], h[2], h[3]);
		d[1] = make_uint4(h[4], h[5], h[6], h[7]);
		return;
	}
	for (int k = 0; k < 16 && c0 + k < K; k++) {
		const long long c = c0 + k;
		const uint32_t cd = (row[c / 2] >> (4 * (c & 1))) & 0xFu;
		out[r * ld + c] = (uint16_t)deq1(cd, s);
	}
}

extern "C" __global__ void __launch_bounds__(TG_THREADS) TG_KERNEL(const TgParams p)
{
	const uint8_t *q = (const uint8_t *)p.p[TG_P_IN];
	const uint8_t *sc = (const uint8_t *)p.p[TG_P_SCALE_INV];
	uint16_t *out = (uint16_t *)p.p[TG_P_OUT];
	const float s_enc = *(const float *)p.p[TG_P_SCALE];
	const long long R = TG_COPY_T ? p.n[1] : p.n[0], K = TG_COPY_T ? p.n[0] : p.n[1];
	const long long nbk = (K + 15) / 16, units = R * nbk;
	for (long long u = (long long)blockIdx.x * TG_THREADS + threadIdx.x; u < units; u += (long long)gridDim.x * TG_THREADS)
		dequant_block(q, out, K, TG_COPY_T ? TG_PITCH(K) : K, u / nbk, u % nbk * 16, tg_div_rn(tg_e4m3_to_f32(sc[u]), s_enc));
}
