// adamw_cast_block.cu: the AdamW update of one weight fused with its block-scaled FP8 copies, one
// pass over memory. Every block of these recipes lies inside one 128 x 128 tile of the weight, so
// the CTA that updates a tile can cast it: TG_RECIPE 5 (block128x128: one scale a tile), 4
// (block1x128: a scale per 128 elements of a row, and per 128 rows of a column for the columnwise
// copy) or 6 (MXFP8: an E8M0 scale per 32 elements of a row, per 32 rows of a column).
// tegen-slots: TG_KERNEL TG_MODE TG_W_DTYPE TG_G_DTYPE TG_FMT TG_RECIPE TG_ROWWISE TG_COLWISE TG_THREADS TG_BETA1 TG_BETA2 TG_EPS TG_WD TG_EPS_SCALE TG_POW2 TG_DEQ
//
// The weight [n[0]][n[1]] (rows, cols; cols % 4 == 0) in 128 x 128 tiles, grid-stride over tiles,
// 256 threads: a pass is 8 rows of 32 4-element quads (a warp holds one tile row), 16 passes a
// tile, and a thread keeps its 64 new values in registers until its blocks' amaxes are known. Each
// element is updated exactly as adamw.cu does (tg_adamw1, bit-exact with ref_adamw; step 0 takes
// the master from the bound weight): master, m, v and the weight written. Then, as the weight's
// quantize kernel (cast_transpose.cu) would from the weight as stored (rounded to TG_W_DTYPE),
// each block's scale from its amax: tg_block_scale(amax, fmax, TG_EPS_SCALE, TG_POW2) (recipes 4,
// 5; tg_scale_inv of it stored) or tg_e8m0_from_amax (6; the byte stored); FP8 bytes of w * scale
// rowwise into p[TG_P_OUT] [rows][cols] (TG_ROWWISE) and columnwise into p[TG_P_OUT_T] [cols][TG_PITCH(rows)]
// (TG_COLWISE: the tile's bytes, under the columnwise blocks' scales, staged in shared memory and
// written down the columns). Scales: 5: p[TG_P_SCALE_INV] [ceil(rows/128)][ceil(cols/128)] and
// p[TG_P_SCALE_INV_T] [ceil(cols/128)][ceil(rows/128)] (the same blocks); 4: [ceil(cols/128)][rows]
// and [ceil(rows/128)][cols]; 6: bytes [rows][ceil(cols/32)] and [ceil(rows/32)][cols].
// Bytes per element: 16 read (grad, master, m, v), 12 + 2 + 2 written, against 34 for the update
// and the separate cast, and one launch fewer (a BF16 or FP16 gradient, TG_G_DTYPE: 2 fewer read).
// TG_DEQ (MXFP8, 0 or 1): 1 also writes the rowwise copy dequantized to BF16 at p[TG_P_MX_DEQ] [rows][cols], as
// the forward cast it replaces after a step writes it (the emulated GEMM's operand; tg_store_mx_deq).
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
static_assert(TG_DEQ == 0 || (TG_DEQ == 1 && TG_RECIPE == TG_RECIPE_MXFP8 && TG_ROWWISE),
              "adamw_cast_block.cu: TG_DEQ 1 dequantizes the rowwise MXFP8 copy");
static_assert(TG_RECIPE == TG_RECIPE_BLOCK128X128 || TG_RECIPE == TG_RECIPE_BLOCK1X128 || TG_RECIPE == TG_RECIPE_MXFP8,
              "adamw_cast_block.cu: TG_RECIPE 4 (1x128), 5 (128x128) or 6 (MXFP8)");
constexpr bool AB_MX = TG_RECIPE == TG_RECIPE_MXFP8;
constexpr int AB_BLK = AB_MX ? 32 : 128;         // elements per row block, rows per column block
constexpr int AB_CB = AB_T / AB_BLK;             // column blocks a tile (rows of the columnwise copy)
constexpr int AB_PPB = AB_BLK / AB_RPP;          // passes per column block
constexpr float ab_fmax = TG_FMT == TG_FMT_E4M3 ? TG_E4M3_MAX : TG_E5M2_MAX;

// The scale of a block of amax a (1x128 and 128x128: tg_block_scale; MXFP8: the E8M0 byte's
// power of two) and what the scale array stores for it (scale_inv, or the E8M0 byte).
__device__ __forceinline__ float ab_scale(float a, float &stored)
{
	if (AB_MX) {
		const uint8_t eb = tg_e8m0_from_amax(a, ab_fmax);
		stored = (float)eb;
		return tg_e8m0_rcp(eb);
	}
	const float bs = tg_block_scale(a, ab_fmax, TG_EPS_SCALE, TG_POW2);
	stored = tg_scale_inv(bs);
	return bs;
}

__device__ __forceinline__ void ab_store_scale(void *dst, long long i, float stored)
{
	if (AB_MX)
		((uint8_t *)dst)[i] = (uint8_t)stored;
	else
		((float *)dst)[i] = stored;
}

extern "C" __global__ void __launch_bounds__(TG_THREADS) TG_KERNEL(const TgParams p)
{
	__shared__ alignas(16) uint32_t tile[AB_T][AB_QPR + 1]; // FP8 bytes, 4 to a word (+1: banks)
	__shared__ float red[32];
	__shared__ float tile_scale;
	// per-block column scales (1x128, MXFP8 columnwise): the warps' partial amaxes, then the scales
	__shared__ float cpart[TG_RECIPE == TG_RECIPE_BLOCK128X128 || !TG_COLWISE ? 1 : AB_RPP * AB_CB][AB_T]; // [block][warp]
	__shared__ float cscale[TG_RECIPE == TG_RECIPE_BLOCK128X128 || !TG_COLWISE ? 1 : AB_CB][AB_T];
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
				tg_adamw_quad<TG_W_DTYPE, TG_G_DTYPE>(p, s, step, r * cols + c, w[pass]); // w: the new weight as stored
#pragma unroll
				for (int k = 0; k < 4; k++)
					amax = tg_absmax(amax, w[pass][k]);
			}
		}
		if (TG_RECIPE == TG_RECIPE_BLOCK128X128) {
			const float tile_amax = tg_cta_max<TG_THREADS>(amax, red); // valid in thread 0
			if (threadIdx.x == 0) {
				float si;
				tile_scale = ab_scale(tile_amax, si);
				if (TG_ROWWISE)
					((float *)p.p[TG_P_SCALE_INV])[tr * tcols + tc] = si;
				if (TG_COLWISE)
					((float *)p.p[TG_P_SCALE_INV_T])[tc * trows + tr] = si;
			}
			__syncthreads(); // tile_scale is set
		} else if (TG_COLWISE) {
			// a column block's amax: this thread's passes of it, then the 8 warps' partials
#pragma unroll
			for (int cb = 0; cb < AB_CB; cb++) {
#pragma unroll
				for (int k = 0; k < 4; k++) {
					float m = 0.0f;
#pragma unroll
					for (int pass = cb * AB_PPB; pass < (cb + 1) * AB_PPB; pass++)
						m = tg_absmax(m, w[pass][k]);
					cpart[cb * AB_RPP + rr][4 * q + k] = m;
				}
			}
			__syncthreads();
			for (int i = threadIdx.x; i < AB_CB * AB_T; i += TG_THREADS) {
				const int cb = i / AB_T, cc = i % AB_T;
				float m = 0.0f;
#pragma unroll
				for (int wv = 0; wv < AB_RPP; wv++) // the warps (a warp holds one row of each pass)
					m = fmaxf(m, cpart[cb * AB_RPP + wv][cc]);
				float stored;
				cscale[cb][cc] = ab_scale(m, stored);
				const long long rb = r0 / AB_BLK + cb, col = tc * AB_T + cc;
				if (rb * AB_BLK < rows && col < cols) // [ceil(rows/blk)][cols]
					ab_store_scale(p.p[TG_P_SCALE_INV_T], rb * cols + col, stored);
			}
			__syncthreads(); // cscale is set
		}
#pragma unroll
		for (int pass = 0; pass < AB_PASSES; pass++) {
			const int lr = pass * AB_RPP + rr;
			const long long r = r0 + lr;
			const float ts = TG_RECIPE == TG_RECIPE_BLOCK128X128 ? tile_scale : 1.0f;
			float rs = ts, cs[4] = {ts, ts, ts, ts}, rdq = 1.0f; // rdq: the row block's dequantizing multiplier (TG_DEQ)
			if (TG_RECIPE != TG_RECIPE_BLOCK128X128 && TG_ROWWISE) { // the row block: 8 (MXFP8) or 32 lanes
				float a = 0.0f;
#pragma unroll
				for (int k = 0; k < 4; k++)
					a = tg_absmax(a, w[pass][k]);
				a = tg_group_max<AB_BLK / 4>(a);
				float stored;
				rs = ab_scale(a, stored);
				if (TG_DEQ)
					rdq = tg_e8m0_deq((uint8_t)stored);
				if (q % (AB_BLK / 4) == 0 && r < rows && c < cols)
					ab_store_scale(p.p[TG_P_SCALE_INV], AB_MX ? r * ((cols + 31) / 32) + c / 32 : (c / 128) * rows + r,
						stored);
			}
			if (TG_RECIPE != TG_RECIPE_BLOCK128X128 && TG_COLWISE) {
#pragma unroll
				for (int k = 0; k < 4; k++)
					cs[k] = cscale[pass / AB_PPB][4 * q + k];
			}
			if (TG_ROWWISE && r < rows && c < cols) {
				const uint32_t codes = tg_fp8x4<TG_FMT>(w[pass][0], w[pass][1], w[pass][2], w[pass][3], rs);
				reinterpret_cast<uint32_t *>(p.p[TG_P_OUT])[(r * cols + c) / 4] = codes;
				if (TG_DEQ)
					tg_store_mx_deq<TG_FMT, 4>((uint16_t *)p.p[TG_P_MX_DEQ] + r * cols + c, &codes, rdq);
			}
			if (TG_COLWISE)
				tile[lr][q] = tg_fp8x2<TG_FMT>(w[pass][0] * cs[0], w[pass][1] * cs[1]) |
					(tg_fp8x2<TG_FMT>(w[pass][2] * cs[2], w[pass][3] * cs[3]) << 16);
		}
		if (TG_COLWISE) {
			__syncthreads(); // the tile's bytes are staged
			tg_store_columns<AB_T, AB_T, TG_THREADS, AB_QPR + 1>(tile, p.p[TG_P_OUT_T], r0, tc * AB_T, rows, cols);
		}
		__syncthreads(); // before the next tile reuses tile[], tile_scale and cpart
	}
}

} // namespace
