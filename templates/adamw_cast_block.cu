// adamw_cast_block.cu: the AdamW update of one weight fused with its 128x128-block FP8 copies
// (block128x128: each scale is the amax of one 128 x 128 tile of the new weight, so the CTA that
// updates a tile can cast it), one pass over memory.
// tegen-slots: TG_KERNEL TG_MODE TG_W_DTYPE TG_FMT TG_ROWWISE TG_COLWISE TG_THREADS TG_BETA1 TG_BETA2 TG_EPS TG_WD TG_EPS_SCALE TG_POW2
//
// The weight [n[0]][n[1]] (rows, cols; cols % 4 == 0) in 128 x 128 tiles, grid-stride over tiles,
// 256 threads: a pass is 8 rows of 32 4-element quads, 16 passes a tile, and a thread keeps its 64
// new values in registers until the tile's amax is known. Each element is updated exactly as
// adamw.cu does (tg_adamw1, bit-exact with ref_adamw; step 0 takes the master from the bound
// weight): master, m, v and the weight written. Then, as the weight's quantize kernel
// (cast_transpose.cu, block128x128) would from the weight as stored (rounded to TG_W_DTYPE):
// s = tg_block_scale(tile amax, fmax, TG_EPS_SCALE, TG_POW2); tg_scale_inv(s) into
// p[TG_P_SCALE_INV] [ceil(rows/128)][ceil(cols/128)] and p[TG_P_SCALE_INV_T]
// [ceil(cols/128)][ceil(rows/128)] (the same blocks for both layouts); FP8 bytes of w * s rowwise
// into p[TG_P_OUT] [rows][cols] (TG_ROWWISE) and columnwise into p[TG_P_OUT_T] [cols][rows]
// (TG_COLWISE: the tile's bytes staged in shared memory and written down the columns).
// Bytes per element: 16 read (grad, master, m, v), 12 + 2 + 2 written, against 34 for the update
// and the separate cast, and one launch fewer.
// Pointer slots: tg_optim.h's TG_PA_W .. TG_PA_V (0-4), tg_kernel.h's TG_P_OUT, TG_P_OUT_T,
// TG_P_SCALE_INV, TG_P_SCALE_INV_T, the optimizer state at TG_PAB_STATE (11). TG_MODE is
// adamw_slots' (always 0 here). Launch: block (TG_THREADS,1,1), any grid.x >= 1.
#include "tg_formats.h"
#include "tg_recipe.h"
#include "tg_kernel.h"
#include "tg_rowvec.h"
#include "tg_optim.h"
#include "tg_adamw_tile.h"

#define AB_CAT2(a, b) a##b
#define AB_CAT(a, b) AB_CAT2(a, b)
namespace AB_CAT(ab_ns_, TG_KERNEL) {

#define TG_PAB_STATE 11 /* the optimizer state (adamw.cu's TG_PA_STATE is taken by TG_P_OUT here) */
constexpr int AB_T = 128;                        // tile rows and columns (one scale block)
constexpr int AB_QPR = AB_T / 4;                 // 4-element quads per tile row
constexpr int AB_RPP = TG_THREADS / AB_QPR;      // tile rows per pass
constexpr int AB_PASSES = AB_T / AB_RPP;         // passes per tile
static_assert(TG_THREADS == 256, "adamw_cast_block.cu: 256 threads (8 rows of 32 quads a pass)");
static_assert(TG_MODE == 0, "adamw_cast_block.cu: the update (the step count is adamw.cu's TG_MODE 1)");
static_assert(TG_ROWWISE || TG_COLWISE, "adamw_cast_block.cu: no copy to write");

extern "C" __global__ void __launch_bounds__(TG_THREADS) TG_KERNEL(const TgParams p)
{
	__shared__ alignas(16) uint32_t tile[AB_T][AB_QPR + 1]; // FP8 bytes, 4 to a word (+1: banks)
	__shared__ float red[32];
	__shared__ float tile_scale;
	constexpr float fmax = TG_FMT == TG_FMT_E4M3 ? TG_E4M3_MAX : TG_E5M2_MAX;
	const float *st = (const float *)p.p[TG_PAB_STATE];
	const unsigned step = tg_f2u(st[TG_OPTIM_STEP]);
	const TgAdamwStep s = tg_adamw_step(st[TG_OPTIM_LR], st[TG_OPTIM_B1POW], st[TG_OPTIM_B2POW], TG_BETA1, TG_BETA2,
		TG_EPS, TG_WD);
	const long long rows = p.n[0], cols = p.n[1];
	const long long trows = (rows + AB_T - 1) / AB_T, tcols = (cols + AB_T - 1) / AB_T;
	const int q = threadIdx.x % AB_QPR, rr = threadIdx.x / AB_QPR;
	for (long long t = blockIdx.x; t < trows * tcols; t += gridDim.x) {
		const long long tr = t / tcols, tc = t % tcols, r0 = tr * AB_T, c = tc * AB_T + 4 * q;
		float w[AB_PASSES][4];
		float amax = 0.0f;
#pragma unroll
		for (int pass = 0; pass < AB_PASSES; pass++) {
			const long long r = r0 + pass * AB_RPP + rr;
#pragma unroll
			for (int k = 0; k < 4; k++)
				w[pass][k] = 0.0f;
			if (r < rows && c < cols) { // cols % 4 == 0: a quad is all in or all out
				tg_adamw_quad<TG_W_DTYPE>(p, s, step, r * cols + c, w[pass]); // w: the new weight as stored
#pragma unroll
				for (int k = 0; k < 4; k++)
					amax = tg_absmax(amax, w[pass][k]);
			}
		}
		const float tile_amax = tg_cta_max<TG_THREADS>(amax, red); // valid in thread 0
		if (threadIdx.x == 0) {
			const float bs = tg_block_scale(tile_amax, fmax, TG_EPS_SCALE, TG_POW2);
			const float si = tg_scale_inv(bs);
			tile_scale = bs;
			if (TG_ROWWISE)
				((float *)p.p[TG_P_SCALE_INV])[tr * tcols + tc] = si;
			if (TG_COLWISE)
				((float *)p.p[TG_P_SCALE_INV_T])[tc * trows + tr] = si;
		}
		__syncthreads(); // tile_scale is set
		const float bs = tile_scale;
#pragma unroll
		for (int pass = 0; pass < AB_PASSES; pass++) {
			const int lr = pass * AB_RPP + rr;
			const long long r = r0 + lr;
			const uint32_t bytes = tg_fp8x2<TG_FMT>(w[pass][0] * bs, w[pass][1] * bs) |
				(tg_fp8x2<TG_FMT>(w[pass][2] * bs, w[pass][3] * bs) << 16);
			if (TG_ROWWISE && r < rows && c < cols)
				reinterpret_cast<uint32_t *>(p.p[TG_P_OUT])[(r * cols + c) / 4] = bytes;
			if (TG_COLWISE)
				tile[lr][q] = bytes;
		}
		if (TG_COLWISE) {
			__syncthreads(); // the tile's bytes are staged
			tg_store_columns<AB_T, AB_T, TG_THREADS, AB_QPR + 1>(tile, p.p[TG_P_OUT_T], r0, tc * AB_T, rows, cols);
		}
		__syncthreads(); // before the next tile reuses tile[] and tile_scale
	}
}

} // namespace
