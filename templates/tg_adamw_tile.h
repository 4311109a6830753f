// tg_adamw_tile.h: device pieces the fused AdamW + cast kernels share (adamw_cast.cu: per-tensor
// delayed, adamw_cast_block.cu: 128x128 blocks). Pointer slots: tg_optim.h's TG_PA_*, tg_kernel.h's.
#ifndef TG_ADAMW_TILE_H
#define TG_ADAMW_TILE_H

#include "tg_kernel.h"
#include "tg_optim.h"
#include "tg_rowvec.h"

// tg_adamw_quad: the AdamW update of the 4 elements from index i, each exactly as adamw.cu does it
// (tg_adamw1, bit-exact with ref_adamw; step 0 takes the master from the bound weight): master, m, v
// and the weight written; w gets the new weight as stored (rounded to W_DTYPE): what its cast reads.
template <int W_DTYPE, int G_DTYPE>
__device__ __forceinline__ void tg_adamw_quad(const TgParams &p, const TgAdamwStep &s, unsigned step, long long i,
                                              float (&w)[4])
{
	float *master = (float *)p.p[TG_PA_MASTER], *mom1 = (float *)p.p[TG_PA_M], *mom2 = (float *)p.p[TG_PA_V];
	float g[4], m[4], v[4];
	tg_load_vec<G_DTYPE, 4>(p.p[TG_PA_GRAD], i, g); // FP32, BF16 or FP16 (G_DTYPE)
	if (step == 0) {
		tg_load_vec<W_DTYPE, 4>(p.p[TG_PA_W], i, w);
#pragma unroll
		for (int k = 0; k < 4; k++)
			m[k] = v[k] = 0.0f;
	} else {
		tg_load_vec<TG_DTYPE_F32, 4>(master, i, w);
		tg_load_vec<TG_DTYPE_F32, 4>(mom1, i, m);
		tg_load_vec<TG_DTYPE_F32, 4>(mom2, i, v);
	}
#pragma unroll
	for (int k = 0; k < 4; k++)
		w[k] = tg_adamw1(&s, w[k], g[k], &m[k], &v[k]);
	tg_store_hp<TG_DTYPE_F32, 4>(master, i, w);
	tg_store_hp<TG_DTYPE_F32, 4>(mom1, i, m);
	tg_store_hp<TG_DTYPE_F32, 4>(mom2, i, v);
	tg_store_hp<W_DTYPE, 4>(p.p[TG_PA_W], i, w);
	tg_round_vec<W_DTYPE, 4>(w);
}

// tg_store_columns: the columnwise copy of a staged tile of FP8 bytes. tile[r][q] holds the bytes of
// columns 4q..4q+3 of tile row r (TR rows, TC columns, PITCH words a row); the CTA's THREADS threads
// write 16-row segments of each column into out_t [cols][TG_PITCH(rows)] at rows r0.., columns c0..,
// clipped at rows and cols. Call after a __syncthreads that completes the staging.
template <int TR, int TC, int THREADS, int PITCH>
__device__ __forceinline__ void tg_store_columns(const uint32_t (*tile)[PITCH], void *out_t, long long r0, long long c0,
                                                 long long rows, long long cols)
{
	for (int task = threadIdx.x; task < TC * (TR / 16); task += THREADS) { // column cc, rows 16 seg .. + 15
		const int cc = task / (TR / 16), seg = task % (TR / 16);
		const long long col = c0 + cc, rs0 = r0 + 16 * seg;
		if (col >= cols || rs0 >= rows)
			continue;
		uint32_t w4[4];
#pragma unroll
		for (int g4 = 0; g4 < 4; g4++) {
			uint32_t x = 0;
#pragma unroll
			for (int k = 0; k < 4; k++)
				x |= ((tile[16 * seg + 4 * g4 + k][cc / 4] >> (8 * (cc % 4))) & 0xFFu) << (8 * k);
			w4[g4] = x;
		}
		/* one aligned store (a segment past rows fills the line's padding) */
		*reinterpret_cast<uint4 *>((uint8_t *)out_t + col * TG_PITCH(rows) + rs0) = make_uint4(w4[0], w4[1], w4[2], w4[3]);
	}
}

#endif
