// adamw_cast.cu: the AdamW update of one weight fused with its per-tensor FP8 copies (delayed
// scaling: the scale is known before the step), one pass over memory.
// tegen-slots: TG_KERNEL TG_MODE TG_W_DTYPE TG_G_DTYPE TG_FMT TG_ROWWISE TG_COLWISE TG_THREADS TG_BETA1 TG_BETA2 TG_EPS TG_WD
//
// The weight [n[0]][n[1]] (rows, cols; cols % 4 == 0) in tiles of 64 rows x 256 columns
// (grid-stride over tiles, 256 threads; a tile row is 1 KB of each FP32 array, long enough
// for the DRAM streams: 64 x 64 tiles ran 1434 us for w_up on the H100, the flat update 1251): each element updated exactly as adamw.cu does (tg_adamw1, bit-exact with
// ref_adamw; step 0 takes the master from the bound weight), master / m / v / the weight written,
// then the new weight value as stored (rounded to TG_W_DTYPE) quantized like the weight's
// quantize kernel (cast_transpose.cu, delayed): FP8 bytes of w * scale, rowwise into
// p[TG_P_OUT] [rows][cols] (TG_ROWWISE) and columnwise into p[TG_P_OUT_T] [cols][TG_PITCH(rows)]
// (TG_COLWISE: the tile's bytes staged in shared memory and written down the columns), the
// amax of |w| atomically into p[TG_P_AMAX], scale_inv = 1/scale into p[TG_P_SCALE_INV].
// Bytes per element: 16 read (grad, master, m, v), 12 + 2 + 2 written: 32, against 34 for the
// update (30) and the separate cast (4), and one launch fewer (a BF16 or FP16 gradient, TG_G_DTYPE: 2 fewer).
// Pointer slots: tg_optim.h's TG_PA_W .. TG_PA_V (0-4), tg_kernel.h's TG_P_OUT, TG_P_OUT_T,
// TG_P_SCALE, TG_P_SCALE_INV, TG_P_AMAX (5-10), the optimizer state at TG_PAC_STATE (11).
// TG_MODE is adamw_slots' (always 0 here). Launch: block (TG_THREADS,1,1), any grid.x >= 1.
#include "tg_formats.h"
#include "tg_recipe.h"
#include "tg_kernel.h"
#include "tg_rowvec.h"
#include "tg_optim.h"
#include "tg_adamw_tile.h"

#define AC_CAT2(a, b) a##b
#define AC_CAT(a, b) AC_CAT2(a, b)
namespace AC_CAT(ac_ns_, TG_KERNEL) {

#define TG_PAC_STATE 11 /* the optimizer state (adamw.cu's TG_PA_STATE is taken by TG_P_OUT here) */
constexpr int AC_TR = 64;                   // tile rows
constexpr int AC_TC = 256;                  // tile columns
constexpr int AC_QPR = AC_TC / 4;           // 4-element quads per tile row
constexpr int AC_RPP = TG_THREADS / AC_QPR; // tile rows per pass
static_assert(TG_THREADS == 256, "adamw_cast.cu: 256 threads (4 rows of 64 quads a pass; a column's 4 segments)");
static_assert(TG_MODE == 0, "adamw_cast.cu: the update (the step count is adamw.cu's TG_MODE 1)");
static_assert(TG_ROWWISE || TG_COLWISE, "adamw_cast.cu: no copy to write");

extern "C" __global__ void __launch_bounds__(TG_THREADS) TG_KERNEL(const TgParams p)
{
	__shared__ alignas(16) uint32_t tile[AC_TR][AC_QPR + 1]; // FP8 bytes, 4 to a word (+1: banks)
	__shared__ float red[32];
	const float *st = (const float *)p.p[TG_PAC_STATE];
	const unsigned step = tg_f2u(st[TG_OPTIM_STEP]);
	const TgAdamwStep s = tg_adamw_step(st[TG_OPTIM_LR], st[TG_OPTIM_B1POW], st[TG_OPTIM_B2POW], TG_BETA1, TG_BETA2,
		TG_EPS, TG_WD);
	const float scale = tg_tensor_scale<TG_RECIPE_DELAYED, TG_FMT, 0>(p, 0.0f); // writes scale_inv (block 0)
	const long long rows = p.n[0], cols = p.n[1];
	const long long trows = (rows + AC_TR - 1) / AC_TR, tcols = (cols + AC_TC - 1) / AC_TC;
	float amax = 0.0f;
	const int q = threadIdx.x % AC_QPR, rr = threadIdx.x / AC_QPR;
	for (long long t = blockIdx.x; t < trows * tcols; t += gridDim.x) {
		const long long r0 = t / tcols * AC_TR, c0 = t % tcols * AC_TC;
		const long long c = c0 + 4 * q;
#pragma unroll 4
		for (int pass = 0; pass < AC_TR / AC_RPP; pass++) {
			const int lr = pass * AC_RPP + rr;
			const long long r = r0 + lr;
			uint32_t bytes = 0;
			if (r < rows && c < cols) { // cols % 4 == 0: a quad is all in or all out
				const long long i = r * cols + c;
				float w[4];
				tg_adamw_quad<TG_W_DTYPE, TG_G_DTYPE>(p, s, step, i, w); // w: the new weight as stored
#pragma unroll
				for (int k = 0; k < 4; k++)
					amax = tg_absmax(amax, w[k]);
				bytes = tg_fp8x4<TG_FMT>(w[0], w[1], w[2], w[3], scale);
				if (TG_ROWWISE)
					reinterpret_cast<uint32_t *>(p.p[TG_P_OUT])[i / 4] = bytes;
			}
			if (TG_COLWISE)
				tile[lr][q] = bytes;
		}
		if (TG_COLWISE) {
			__syncthreads(); // the tile's bytes are staged
			tg_store_columns<AC_TR, AC_TC, TG_THREADS, AC_QPR + 1>(tile, p.p[TG_P_OUT_T], r0, c0, rows, cols);
			__syncthreads(); // before the next tile is staged
		}
	}
	const float mx = tg_cta_max<TG_THREADS>(amax, red);
	if (threadIdx.x == 0)
		tg_red_max((float *)p.p[TG_P_AMAX], mx);
}

} // namespace
