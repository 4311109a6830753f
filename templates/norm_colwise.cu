// norm_colwise.cu: the columnwise 1x128 or MXFP8 copy of a norm's output, from the statistics the norm's row
// kernel saved (norm_quantize.cu writes the rowwise copy, rsigma and mu; this kernel reads the input
// again, normalizes it the same way and writes the copy): no FP32 intermediate.
// tegen-slots: TG_KERNEL TG_IN_DTYPE TG_W_DTYPE TG_B_DTYPE TG_FMT TG_RECIPE TG_THREADS TG_COLS TG_NORM TG_ZERO_CENTERED TG_HAS_RESIDUAL TG_EPS_SCALE TG_POW2 TG_DEQ TG_NC_STAGE
//
// Slots as norm_quantize.cu's. Pointer slots (tg_kernel.h): TG_P_IN, TG_P_RESIDUAL (when
// TG_HAS_RESIDUAL: in + residual rounded to the input dtype, as the norm kernel forms it), TG_P_GAMMA,
// TG_P_BETA (LayerNorm), TG_P_RSIGMA and TG_P_MU (LayerNorm) [rows] FP32 (read), TG_P_OUT_T
// [TG_COLS][rows] E4M3/E5M2 and TG_P_SCALE_INV_T (written): TG_RECIPE 1x128 [ceil(rows/128)][TG_COLS]
// FP32, MXFP8 [ceil(rows/32)][TG_COLS] E8M0.
// The value of an element is norm_quantize.cu's float one, ((x - mu) * rsigma) * gamma (+ beta),
// from the same x, mu and rsigma, so the copy holds the rowwise copy's values. TG_DEQ (MXFP8, bit 1): the
// copy also dequantized to BF16 at p[TG_P_MX_DEQ_T] [TG_COLS][rows] (the emulated GEMM's operand).
//
// Launch: block (TG_THREADS,1,1), grid.x = ceil(rows / 128) * ceil(TG_COLS / 128), capped; any
// grid.x >= 1 is correct (grid-stride over the 128 x 128 tiles). n[0] = rows. TG_COLS % 8 == 0.
// A tile: 16 lanes a row of 8-element vectors, NS consecutive rows a thread; its input loads at the
// top of its iteration (another CTA on the SM covers them), then tg_block_colwise_tile. TG_NC_STAGE (1x128, 2-byte
// input): the next tile's input comes by cp.async into dynamic shared memory during this tile's copy, each thread's
// own 16-byte slots ([NC_NIN * NS][TG_THREADS]: gen/plan_launch.c's pl_nc_stage_bytes; no barrier, no registers held), and
// the kernel runs persistent (a CTA's next tile is the one it prefetches).
#include "tg_formats.h"
#include "tg_recipe.h"
#include "tg_kernel.h"
#include "tg_rowvec.h"

#if TG_DEQ && (TG_RECIPE != TG_RECIPE_MXFP8 || TG_DEQ != 2)
#error "norm_colwise.cu: TG_DEQ 2 dequantizes its MXFP8 (columnwise) copy"
#endif

#define NC_CAT2(a, b) a##b
#define NC_CAT(a, b) NC_CAT2(a, b)
namespace NC_CAT(nc_ns_, TG_KERNEL) {

// Two CTAs a SM (64 registers at 512 threads) with each tile's loads at the top of its iteration, not
// one CTA with the next tile's loads in flight: H100, 8192 x 8192 BF16 RMSNorm, 104 -> 81 us (85% of
// copy; fifteenth session). TEGEN_NVRTC_DEFINES can set either for an experiment. But FP32 input with a
// residual at one CTA a SM: at two, ptxas holds the tile in 64 registers and spills 32 bytes; at one (95-106
// registers, no spill) H200, us alone, 1000 / 4096 columns: 8192 tokens 24.8 -> 24.5, 78.5 -> 76.8, 32769 tokens 78.2
// -> 75.2, 303.7 -> 290.0 (94-95% -> 97-98% of a copy); without a residual (no spill) one CTA a SM lost (8192 columns:
// 82.8 -> 101.8 us, 100% -> 81%), so it keeps two (forty-third session, bench/spill/).
#ifndef TG_NC_PREFETCH
#define TG_NC_PREFETCH 0 // 1: the next tile's loads before this tile's columnwise copy
#endif
#ifndef TG_NC_MIN_CTAS
#define TG_NC_MIN_CTAS (TG_THREADS <= 512 && !(TG_IN_DTYPE == TG_DTYPE_F32 && TG_HAS_RESIDUAL) ? 2 : 1) // resident CTAs a SM
#endif

constexpr int NC_G = TG_THREADS / 16;  // row groups
constexpr int NC_NS = 128 / NC_G;      // rows a thread
constexpr int NC_COLS = TG_COLS;
constexpr int NC_NCT = (NC_COLS + 127) / 128;
constexpr int NC_BR = TG_RECIPE == TG_RECIPE_MXFP8 ? 32 : 128; // rows a columnwise scale block (1x128 or MXFP8)
static_assert(TG_RECIPE == TG_RECIPE_MXFP8 || TG_RECIPE == TG_RECIPE_BLOCK1X128, "norm_colwise.cu: 1x128 or MXFP8");
static_assert(NC_COLS % 8 == 0, "norm_colwise.cu: TG_COLS must be a multiple of 8");
static_assert(TG_THREADS % 32 == 0 && 128 % NC_G == 0 && TG_THREADS >= 256 && TG_THREADS <= 1024,
	"norm_colwise.cu: 256, 512 or 1024 threads");

__device__ __forceinline__ void nc_tile_path(const TgParams &p)
{
	__shared__ TgBlockTileSmem<NC_G, 1, NC_BR> sm;
	const long long rows = p.n[0];
	const int lr = threadIdx.x / 16, lc = threadIdx.x % 16;
	const long long items = (rows + 127) / 128 * NC_NCT;
	tg_rvec<TG_IN_DTYPE, 8> xr[NC_NS], rr[TG_HAS_RESIDUAL ? NC_NS : 1];
	// the input (and residual) vectors of this thread's rows of item it (zeros outside the tensor)
	auto load = [&](long long it) {
		const long long r0 = it / NC_NCT * 128;
		const int c = (int)(it % NC_NCT) * 128 + lc * 8;
#pragma unroll
		for (int st = 0; st < NC_NS; st++) {
			const long long r = r0 + lr * NC_NS + st;
			if (it < items && r < rows && c < NC_COLS) {
				tg_load_raw<TG_IN_DTYPE, 8>(p.p[TG_P_IN], r * NC_COLS + c, xr[st]);
				if (TG_HAS_RESIDUAL)
					tg_load_raw<TG_IN_DTYPE, 8>(p.p[TG_P_RESIDUAL], r * NC_COLS + c, rr[TG_HAS_RESIDUAL ? st : 0]);
			} else {
				tg_zero_raw<TG_IN_DTYPE, 8>(xr[st]);
				if (TG_HAS_RESIDUAL)
					tg_zero_raw<TG_IN_DTYPE, 8>(rr[TG_HAS_RESIDUAL ? st : 0]);
			}
		}
	};
#if TG_NC_STAGE
	static_assert(sizeof(xr[0]) == 16 && !TG_NC_PREFETCH, "TG_NC_STAGE: 2-byte input, no register prefetch");
	constexpr int NC_NIN = TG_HAS_RESIDUAL ? 2 : 1; // inputs a row: x (and the residual)
	extern __shared__ uint4 nc_raw[]; // [NC_NIN * NC_NS][TG_THREADS]
	// item it's pieces into this thread's slots (zero-filled outside the tensor; nothing past the last item), committed
	auto issue = [&](long long it) {
		if (it < items) {
			const long long r0 = it / NC_NCT * 128;
			const int c = (int)(it % NC_NCT) * 128 + lc * 8;
#pragma unroll
			for (int st = 0; st < NC_NS; st++) {
				const long long r = r0 + lr * NC_NS + st;
				const bool ok = r < rows && c < NC_COLS;
				const long long e = ok ? r * NC_COLS + c : 0;
				uint4 *slot = &nc_raw[(st * NC_NIN) * TG_THREADS + threadIdx.x];
				tg_cp_async16(slot, (const unsigned char *)p.p[TG_P_IN] + 2 * e, ok);
				if (TG_HAS_RESIDUAL)
					tg_cp_async16(slot + TG_THREADS, (const unsigned char *)p.p[TG_P_RESIDUAL] + 2 * e, ok);
			}
		}
		tg_cp_async_commit();
	};
	issue(blockIdx.x);
#endif
	if (TG_NC_PREFETCH)
		load(blockIdx.x);
	for (long long it = blockIdx.x; it < items; it += gridDim.x) {
#if TG_NC_STAGE
		tg_cp_async_wait<0>(); // this thread's own pieces: no barrier
#pragma unroll
		for (int st = 0; st < NC_NS; st++) {
			const uint4 *slot = &nc_raw[(st * NC_NIN) * TG_THREADS + threadIdx.x];
			*reinterpret_cast<uint4 *>(&xr[st]) = slot[0];
			if (TG_HAS_RESIDUAL)
				*reinterpret_cast<uint4 *>(&rr[TG_HAS_RESIDUAL ? st : 0]) = slot[TG_THREADS];
		}
#else
		if (!TG_NC_PREFETCH)
			load(it);
#endif
		const long long r0 = it / NC_NCT * 128;
		const int c0 = (int)(it % NC_NCT) * 128, c = c0 + lc * 8;
		const bool cv = c < NC_COLS; // a vector is wholly in or out
		float g[8], b[8];
		tg_norm_weights<TG_W_DTYPE, TG_B_DTYPE, 8, TG_ZERO_CENTERED, TG_NORM == 1>(p, cv ? c : 0, g, b);
		float yt[1][NC_NS][8];
		auto &y = yt[0];
#pragma unroll
		for (int st = 0; st < NC_NS; st++) {
			const long long r = r0 + lr * NC_NS + st;
			const bool ok = cv && r < rows;
			const float rsf = ok ? ((const float *)p.p[TG_P_RSIGMA])[r] : 0.0f;
			const float muf = ok && TG_NORM == 1 ? ((const float *)p.p[TG_P_MU])[r] : 0.0f;
			float x[8];
			tg_cvt_raw<TG_IN_DTYPE, 8>(xr[st], x);
			if (TG_HAS_RESIDUAL) {
				float q[8];
				tg_cvt_raw<TG_IN_DTYPE, 8>(rr[TG_HAS_RESIDUAL ? st : 0], q);
#pragma unroll
				for (int k = 0; k < 8; k++)
					x[k] += q[k];
				tg_round_vec<TG_IN_DTYPE, 8>(x);
			}
#pragma unroll
			for (int k = 0; k < 8; k++) {
				y[st][k] = tg_norm_value<TG_NORM == 1>(x[k], muf, rsf, g[k], b[k]); // norm_quantize.cu's expression
				if (!ok)
					y[st][k] = 0.0f;
			}
		}
		if (TG_NC_PREFETCH)
			load(it + gridDim.x);
#if TG_NC_STAGE
		issue(it + gridDim.x); // the slots were read into xr (and rr), consumed above
#endif
		tg_block_colwise_tile<TG_FMT, TG_THREADS, NC_NS, NC_COLS, 1, NC_BR, TG_DEQ>(p, sm, yt, r0, c0, 0, NC_COLS, rows, TG_EPS_SCALE,
			TG_POW2);
	}
}

extern "C" __global__ void __launch_bounds__(TG_THREADS, TG_NC_MIN_CTAS) TG_KERNEL(const TgParams p) { nc_tile_path(p); }

} // namespace
