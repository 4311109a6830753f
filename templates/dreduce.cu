// dreduce.cu: stage 2 of the reductions over rows (d_gamma, d_beta, dbias): the chunk
// partials summed in chunk order.
// tegen-slots: TG_KERNEL TG_THREADS TG_ACCUMULATE
//
// partials [n[0]][n[1]] FP32 (TG_PB_DW; n[0] = chunks, n[1] = columns) -> out [n[1]] FP32
// (TG_PB_OUT): out[c] = the sequential sum over k of partials[k][c], from -0
// (tg_backward.h); with TG_ACCUMULATE, out[c] = out[c] + that sum (an FP32 main_grad).
// Bit-exact with ref_chunk_reduce.
//
// Launch: block (TG_THREADS,1,1), any grid.x >= 1 (grid-stride over groups of 32 columns;
// ceil(n[1] / 32) CTAs cover it once). A CTA owns 32 columns: per round its warps load
// DR_ROUND chunk rows of them (each warp DR_B rows, a coalesced 128-byte row segment per
// load, all in flight together) into shared memory, then warp 0 adds them in chunk order while every
// warp's loads of the next round are in flight.
#include "tg_formats.h"
#include "tg_recipe.h"
#include "tg_kernel.h"
#include "tg_backward.h"

static_assert(TG_THREADS % 32 == 0 && TG_THREADS <= 1024, "TG_THREADS must be a multiple of 32, <= 1024");

#define DR_CAT2(a, b) a##b
#define DR_CAT(a, b) DR_CAT2(a, b)
namespace DR_CAT(dr_ns_, TG_KERNEL) {

constexpr int DR_W = TG_THREADS / 32;                   // warps
constexpr int DR_B = 256 / DR_W < 32 ? 256 / DR_W : 32; // chunk rows a warp loads per round
constexpr int DR_ROUND = DR_W * DR_B;                   // chunk rows per round

// This warp's DR_B chunk rows of the round at k0, column c (-0 past the end: x + -0 == x, padding changes nothing).
__device__ __forceinline__ void load_round(const float *part, float (&v)[DR_B], long long k0, long long nk, long long cols,
	long long c, bool cv, int warp)
{
#pragma unroll
	for (int i = 0; i < DR_B; i++) {
		const long long k = k0 + warp * DR_B + i;
		v[i] = cv && k < nk ? part[k * cols + c] : -0.0f;
	}
}

extern "C" __global__ void __launch_bounds__(TG_THREADS) TG_KERNEL(const TgParams p)
{
	__shared__ float stage[DR_ROUND][33];
	const long long nk = p.n[0], cols = p.n[1];
	const float *part = (const float *)p.p[TG_PB_DW];
	float *out = (float *)p.p[TG_PB_OUT];
	const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
	for (long long c0 = (long long)blockIdx.x * 32; c0 < cols; c0 += (long long)gridDim.x * 32) {
		const long long c = c0 + lane;
		const bool cv = c < cols;
		float acc = -0.0f, v[DR_B];
		load_round(part, v, 0, nk, cols, c, cv, warp);
		for (long long k0 = 0; k0 < nk; k0 += DR_ROUND) {
#pragma unroll
			for (int i = 0; i < DR_B; i++)
				stage[warp * DR_B + i][lane] = v[i];
			__syncthreads();
			if (k0 + DR_ROUND < nk) // the next round's loads fly while warp 0 adds this one (ncu: the warps
				load_round(part, v, k0 + DR_ROUND, nk, cols, c, cv, warp); // waited at the barrier 35% of the time)
			if (warp == 0) // the whole round (-0 past nk: no change), so the trip count is fixed and unrolled
#pragma unroll 16
				for (int j = 0; j < DR_ROUND; j++)
					acc = tg__add_rn(acc, stage[j][lane]);
			__syncthreads();
		}
		if (warp == 0 && cv)
			out[c] = TG_ACCUMULATE ? tg__add_rn(out[c], acc) : acc;
	}
}

} // namespace
