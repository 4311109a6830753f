// dreduce.cu: stage 2 of the reductions over rows (d_gamma, d_beta, dbias): the chunk
// partials summed in chunk order.
// tegen-slots: TG_KERNEL TG_THREADS TG_ACCUMULATE
//
// partials [n[0]][n[1]] FP32 (TG_PB_DW; n[0] = chunks, n[1] = columns) -> out [n[1]] FP32
// (TG_PB_OUT): out[c] = the sequential sum over k of partials[k][c], from -0
// (tg_backward.h); with TG_ACCUMULATE, out[c] = out[c] + that sum (an FP32 main_grad).
// Bit-exact with ref_chunk_reduce.
//
// Launch: block (TG_THREADS,1,1), any grid.x >= 1 (grid-stride over columns;
// ceil(n[1] / TG_THREADS) CTAs cover it once). Coalesced: a warp reads 32 consecutive
// columns of one chunk row per step.
#include "tg_formats.h"
#include "tg_recipe.h"
#include "tg_kernel.h"
#include "tg_backward.h"

#define DR_BATCH 32

static_assert(TG_THREADS % 32 == 0 && TG_THREADS <= 1024, "TG_THREADS must be a multiple of 32, <= 1024");

extern "C" __global__ void __launch_bounds__(TG_THREADS) TG_KERNEL(const TgParams p)
{
	const long long nk = p.n[0], cols = p.n[1];
	const float *part = (const float *)p.p[TG_PB_DW];
	float *out = (float *)p.p[TG_PB_OUT];
	for (long long c = (long long)blockIdx.x * TG_THREADS + threadIdx.x; c < cols; c += (long long)gridDim.x * TG_THREADS) {
		float acc = -0.0f;
		// DR_BATCH loads in flight, then their adds in chunk order (x + -0 == x, so the
		// padding past nk changes nothing): the sum is latency-bound with one thread a column
		for (long long k0 = 0; k0 < nk; k0 += DR_BATCH) {
			float v[DR_BATCH];
#pragma unroll
			for (int i = 0; i < DR_BATCH; i++)
				v[i] = k0 + i < nk ? part[(k0 + i) * cols + c] : -0.0f;
#pragma unroll
			for (int i = 0; i < DR_BATCH; i++)
				acc = tg__add_rn(acc, v[i]);
		}
		out[c] = TG_ACCUMULATE ? tg__add_rn(out[c], acc) : acc;
	}
}
