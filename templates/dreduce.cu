// dreduce.cu: stage 2 of the reductions over rows (d_gamma, d_beta, dbias): the chunk
// partials summed in tg_backward.h's order (groups of TG_BWD_GROUP chunks, then the groups).
// tegen-slots: TG_KERNEL TG_THREADS TG_ACCUMULATE
//
// partials [n[0]][n[1]] FP32 (TG_PB_DW; n[0] = chunks, n[1] = columns) -> out [n[1]] FP32
// (TG_PB_OUT): out[c] = the sum over k of partials[k][c]: each group of TG_BWD_GROUP
// consecutive chunks summed in chunk order from -0, then the group sums in group order from -0
// (tg_backward.h); with TG_ACCUMULATE, out[c] = out[c] + that sum (an FP32 main_grad).
// Bit-exact with ref_chunk_reduce.
//
// Launch: block (TG_THREADS,1,1), with programmatic stream serialization on sm_90+ (it waits for the previous
// kernel first), any grid.x >= 1 (grid-stride over groups of 32 columns;
// ceil(n[1] / 32) CTAs cover it once). A CTA owns 32 columns (a lane each): per round its warps
// take one group each (all of the group's TG_BWD_GROUP loads in flight, a coalesced 128-byte row
// segment each, then added in order), write the group sums to shared memory, and warp 0 adds
// them in group order into the total. (The previous form, warp 0 adding every chunk while the
// others loaded, took 9.8 us for 512 x 4096 partials: the chain of 512 dependent adds a column.)
#include "tg_formats.h"
#include "tg_recipe.h"
#include "tg_kernel.h"
#include "tg_backward.h"

static_assert(TG_THREADS % 32 == 0 && TG_THREADS <= 1024, "TG_THREADS must be a multiple of 32, <= 1024");

#define DR_CAT2(a, b) a##b
#define DR_CAT(a, b) DR_CAT2(a, b)
namespace DR_CAT(dr_ns_, TG_KERNEL) {

constexpr int DR_W = TG_THREADS / 32; // warps: groups a round

extern "C" __global__ void __launch_bounds__(TG_THREADS) TG_KERNEL(const TgParams p)
{
#if __CUDA_ARCH__ >= 900
	// launched with programmatic stream serialization (Kernel.pdl): the kernel that wrote the partials may still
	// run; wait for it (and its memory) before the first read
	asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
	__shared__ float gsum[DR_W][32];
	const long long nk = p.n[0], cols = p.n[1];
	const long long ngroups = (nk + TG_BWD_GROUP - 1) / TG_BWD_GROUP;
	const float *part = (const float *)p.p[TG_PB_DW];
	float *out = (float *)p.p[TG_PB_OUT];
	const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
	for (long long c0 = (long long)blockIdx.x * 32; c0 < cols; c0 += (long long)gridDim.x * 32) {
		const long long c = c0 + lane;
		const bool cv = c < cols;
		float acc = -0.0f;
		for (long long g0 = 0; g0 < ngroups; g0 += DR_W) {
			const long long g = g0 + warp, k0 = g * TG_BWD_GROUP; // this warp's group (none past ngroups)
			if (g < ngroups) { // warp-uniform: a warp past the last group loads nothing (warp 0 does not read its sum)
				// the group's chunks in this column: a pointer stepped by a row, the bound an int (a few instructions
				// a load; the 64-bit index and bound a load cost about 30: 7.1 us for 256 x 4096 partials)
				const int n = nk - k0 < TG_BWD_GROUP ? (int)(nk - k0) : TG_BWD_GROUP;
				const float *q = part + (cv ? k0 * cols + c : 0);
				float v[TG_BWD_GROUP];
#pragma unroll
				for (int i = 0; i < TG_BWD_GROUP; i++, q += cols) // -0 past the end: x + -0 == x
					v[i] = cv && i < n ? *q : -0.0f;
				float s = -0.0f;
#pragma unroll
				for (int i = 0; i < TG_BWD_GROUP; i++)
					s = tg__add_rn(s, v[i]);
				gsum[warp][lane] = s;
			}
			__syncthreads();
			if (warp == 0)
				for (int w = 0; w < DR_W && g0 + w < ngroups; w++)
					acc = tg__add_rn(acc, gsum[w][lane]);
			__syncthreads();
		}
		if (warp == 0 && cv)
			out[c] = TG_ACCUMULATE ? tg__add_rn(out[c], acc) : acc;
	}
}

} // namespace
