// tegen-slots: TG_KERNEL TG_THREADS
/* recipe_update.cu: the delayed-scaling step of every per-tensor scaled
 * tensor of a layer, in one launch (ref: ref_delayed_step, tg_history_amax,
 * tg_delayed_scale, tg_history_roll).
 *
 * p.p[0] float state, n = p.n[0] tensors, L = p.n[1] history rows:
 *   scale, scale_inv and history at the offsets of tg_kernel.h (its state macros)
 *   (row 0 = this step's amaxes of all tensors, contiguous).
 * p.p[1] int params, 4 ints per tensor i at [4i, 4i+4):
 *   {fmt (TG_FMT_E4M3 0 | TG_FMT_E5M2 1), margin, algo (0 max, 1 most_recent),
 *    hist_len (1..L; rows >= hist_len of that tensor are never touched)}.
 * Per tensor: amax = max(history rows < hist_len) (NaN ignored) or row 0;
 * scale = tg_delayed_scale(amax, scale, fmt_max, margin); scale_inv =
 * tg_scale_inv(scale); then the history rolls: new[j] = old[j+1],
 * new[len-1] = old[0], new[0] = 0.
 *
 * Launch rule: block = (TG_THREADS, 1, 1), TG_THREADS a multiple of 32 (256
 * suggested); grid.x = min(ceil(n / 32), cap), any grid >= 1 is correct.
 * A CTA owns 32 consecutive tensors (lane = tensor, coalesced across the
 * [L][n] rows); its warps split the history into segments of 4 rows.
 */
#include "tg_formats.h"
#include "tg_recipe.h"
#include "tg_kernel.h"

#ifndef TG_RECIPE_UPDATE_BODY
#define TG_RECIPE_UPDATE_BODY
namespace tgru {

template <int THREADS> __device__ __forceinline__ void body(const TgParams &p)
{
	constexpr int Y = THREADS / 32, HPT = 4, SEG = Y * HPT;
	static_assert(THREADS % 32 == 0 && THREADS <= 1024, "TG_THREADS must be a multiple of 32");
	__shared__ float s_m[Y][32];
	float *st = (float *)p.p[0];
	const int *par = (const int *)p.p[1];
	const long long n = p.n[0];
	const int L = (int)p.n[1];
	float *hist = st + TG_STATE_HISTORY(n);
	const int x = threadIdx.x & 31, y = threadIdx.x >> 5;
	for (long long tb = blockIdx.x; tb * 32 < n; tb += gridDim.x) {
		const long long i = tb * 32 + x;
		const bool valid = i < n;
		int len = valid ? par[4 * i + 3] : 0;
		len = len < 0 ? 0 : len > L ? L : len;
		const float old0 = len > 0 ? hist[i] : 0.0f;
		float m = 0.0f;
		for (int s0 = 0; s0 < L; s0 += SEG) {
			const int base = s0 + y * HPT;
			float a[HPT + 1];
#pragma unroll
			for (int h = 0; h <= HPT; h++)
				a[h] = base + h < len ? hist[(long long)(base + h) * n + i] : 0.0f;
#pragma unroll
			for (int h = 0; h < HPT; h++)
				if (base + h < len && a[h] > m)
					m = a[h];
			__syncthreads(); /* every read of this segment before its writes */
#pragma unroll
			for (int h = 0; h < HPT; h++)
				if (base + h + 1 < len)
					hist[(long long)(base + h) * n + i] = a[h + 1];
		}
		s_m[y][x] = m;
		__syncthreads(); /* also orders the segment writes before the tail writes */
		if (y == 0 && valid && len > 0) { /* len 0: not a delayed-scaling tensor */
#pragma unroll
			for (int k = 1; k < Y; k++)
				if (s_m[k][x] > m)
					m = s_m[k][x];
			const int fmt = par[4 * i], margin = par[4 * i + 1], algo = par[4 * i + 2];
			const float amax = len <= 0 ? 0.0f : algo == 1 ? old0 : m;
			const float sc = tg_delayed_scale(amax, st[TG_STATE_SCALE(n, i)], tg_fmt_max(fmt), margin);
			st[TG_STATE_SCALE(n, i)] = sc;
			st[TG_STATE_SCALE_INV(n, i)] = tg_scale_inv(sc);
			if (len > 0) {
				hist[(long long)(len - 1) * n + i] = old0;
				hist[i] = 0.0f;
			}
		}
		__syncthreads(); /* s_m reuse */
	}
}

} /* namespace tgru */
#endif /* TG_RECIPE_UPDATE_BODY */

extern "C" __global__ void __launch_bounds__(TG_THREADS) TG_KERNEL(const TgParams p)
{
	tgru::body<TG_THREADS>(p);
}
