// dglu.cu: backward of the gated linear units (SwiGLU family), fused with the amax and the
// rowwise quantized copy of the gradient.
// tegen-slots: TG_KERNEL TG_IN_DTYPE TG_G_DTYPE TG_OUT_DTYPE TG_FMT TG_RECIPE TG_ROWWISE TG_COLWISE TG_DBIAS TG_VEC TG_THREADS TG_ROWS_PER_CTA TG_COLS TG_ACT TG_ALPHA TG_LIMIT TG_EPS_SCALE TG_POW2 TG_DEQ TG_DB_STAGE
//
// in = h [rows][2*TG_COLS] (the forward's saved pre-activation, gate half a first, linear
// half b second, dtype TG_IN_DTYPE), grad = d_act [rows][TG_COLS] (TG_G_DTYPE) ->
// out = d_h [rows][2*TG_COLS]: d_a in the first half, d_b in the second, each element
// tg_dglu1 (tg_backward.h) of (a, b, g): bit-exact with ref_dglu. TG_ACT as glu_amax.cu
// (0 swiglu, 1 geglu, 2 reglu, 3 qgeglu, 4 sreglu, 5 clamped_swiglu with TG_ALPHA, TG_LIMIT;
// 6-10 silu, gelu, relu, qgelu, srelu without a gate partner: h and d_h [rows][TG_COLS], d_h = d_act *
// act'(h), every path below writing d_a alone).
// Recipes (of the d_h copy, through tg_emit_row): 0 high precision (TG_OUT_DTYPE), 1 delayed
// (FP8 with SCALE, AMAX updated), 2 current cast pass, 3 current amax pass (AMAX only),
// 4 block 1x128 (TG_COLS % 128 == 0), 6 MXFP8 (TG_COLS % 32 == 0); scale layouts as
// tg_kernel.h for a [rows][2*TG_COLS] tensor. TG_ROWWISE / TG_COLWISE (0/1) pick the
// copies: the columnwise one (the wgrad operand, d_h transposed, [2*TG_COLS][rows]) for
// recipes 1, 2 (per-tensor FP8, the same bytes as the rowwise copy transposed) and 6 (MXFP8,
// blocks of 32 along the rows, scale_inv_t [ceil(rows/32)][2*TG_COLS]) and 4 (block 1x128: blocks of
// 128 along the rows, scale_inv_t [ceil(rows/128)][2*TG_COLS], on the block tile path below).
// TG_DEQ (MXFP8, 0 or 1): 1 also writes the rowwise copy dequantized to BF16 at p[TG_P_MX_DEQ] [rows][2*TG_COLS]
// (the emulated GEMM's operand; the columnwise copy's stays with dequantize.cu: gen/plan_gemm.c's mx_writer_of).
// TG_DBIAS (tile path): also the chunk partials of the bias gradient of h (a bias added
// before the activation): [ceil(rows/TG_BWD_CHUNK)][2*TG_COLS] FP32 into TG_PB_DW, the
// tg_backward.h order (dreduce.cu finishes it; = ref_dbias of d_h).
// Pointer slots (tg_backward.h): TG_PB_IN h, TG_PB_GRAD d_act, TG_PB_OUT d_h, TG_PB_OUT_T,
// TG_PB_SCALE, TG_PB_SCALE_INV, TG_PB_SCALE_INV_T, TG_PB_AMAX, TG_PB_DW.
//
// Launch: block (TG_THREADS,1,1), grid.x = min(ceil(rows / TG_ROWS_PER_CTA), cap) (tile
// path: times DG_NS column slices; block tile path: times TG_COLS / 128; below); any grid.x >= 1
// is correct (grid-stride). n[0] = rows.
// Row path (no columnwise copy): TG_THREADS/TG_ROWS_PER_CTA threads per row, each loading
// all its a, b and g vectors of the row before the math (many loads in flight).
// Tile path (TG_COLWISE or TG_DBIAS): TG_ROWS_PER_CTA rows (a multiple of 32; else 32) by
// TG_THREADS*TG_VEC/rows columns of the gate half per step (that width must divide
// TG_COLS); d_a, then d_b, staged as FP32 in shared memory for tg_colwise_store. The a, b, g
// of the next DG_PF steps are loaded before this step's math (register prefetch).
// Staged path (a per-tensor FP8 or MXFP8 columnwise copy, recipe 1, 2 or 6, no dbias, 2-byte h and d_act,
// TG_VEC 8, TG_ROWS_PER_CTA 32, TG_THREADS dividing 256, TG_COLS % 8 == 0): 32 x 64 tiles by cp.async, the
// codes transposed through a byte tile (MXFP8, where the block tile path does not fit: the values through an FP32
// tile, each column's 32 rows one E8M0 block). H100, dSwiGLU 8192 x 2x14336 both copies E5M2, t256v8r32 in `tegen run` (NVRTC):
// 451-471 us alone, 501-506 in the training layer, against the tile path's 506-508 and 549-550 (seventeenth
// session; harness_bwd, built by nvcc, 460-483 against 508).
// Block tile path (TG_COLWISE with recipe 4, or 6 at TG_ROWS_PER_CTA 128: the planner's choice at TG_COLS % 128 == 0): 128 x 128 tiles, TG_ROWS_PER_CTA 128, TG_VEC 8. TG_DB_STAGE 1 (2-byte h
// and d_act): the next tile's inputs come by cp.async into dynamic shared memory (launched with
// 128 * 128 * (2 or 1 h halves + 1) * 2 bytes of it: gen/plan_launch.c's pl_dglu_stage_bytes) during this tile's copies.
#include "tg_formats.h"
#include "tg_recipe.h"
#include "tg_kernel.h"
#include "tg_rowvec.h"
#include "tg_backward.h"

#if TG_RECIPE != TG_RECIPE_NONE && TG_RECIPE != TG_RECIPE_DELAYED && TG_RECIPE != TG_RECIPE_CURRENT_CAST && TG_RECIPE != TG_RECIPE_CURRENT_AMAX && TG_RECIPE != TG_RECIPE_BLOCK1X128 && TG_RECIPE != TG_RECIPE_MXFP8
#error "dglu.cu: unsupported TG_RECIPE (supported: 0 none, 1 delayed, 2 current cast, 3 current amax, 4 block1x128, 6 mxfp8)"
#endif
#if TG_COLWISE && TG_RECIPE != TG_RECIPE_DELAYED && TG_RECIPE != TG_RECIPE_CURRENT_CAST && TG_RECIPE != TG_RECIPE_MXFP8 && TG_RECIPE != TG_RECIPE_BLOCK1X128
#error "dglu.cu: a columnwise copy needs recipe 1, 2, 4 or 6"
#endif
#if TG_COLWISE && TG_RECIPE == TG_RECIPE_BLOCK1X128 && (TG_DBIAS || TG_ROWS_PER_CTA != 128 || TG_VEC != 8)
#error "dglu.cu: a columnwise block1x128 copy takes the block tile path: TG_ROWS_PER_CTA 128, TG_VEC 8, no TG_DBIAS"
#endif
#if TG_DEQ && (TG_RECIPE != TG_RECIPE_MXFP8 || TG_DEQ != 1 || !TG_ROWWISE)
#error "dglu.cu: TG_DEQ 1 dequantizes the rowwise MXFP8 copy"
#endif
#if TG_DBIAS && TG_RECIPE == TG_RECIPE_CURRENT_AMAX
#error "dglu.cu: dbias goes with the cast pass (recipe 2), not the amax pass"
#endif
// the block tile path: a columnwise 1x128 copy, or an MXFP8 one at 128 rows a CTA (the planner's choice)
#define DG_BLOCK_TILE (TG_COLWISE && (TG_RECIPE == TG_RECIPE_BLOCK1X128 || (TG_RECIPE == TG_RECIPE_MXFP8 && TG_ROWS_PER_CTA == 128)))
#if TG_DB_STAGE && !(DG_BLOCK_TILE && TG_IN_DTYPE != TG_DTYPE_F32 && TG_G_DTYPE != TG_DTYPE_F32)
#error "dglu.cu: TG_DB_STAGE stages 2-byte h and d_act on the block tile path"
#endif
// MXFP8 on the staged path (32-row tiles are its columnwise blocks); off: the block tile path or the tile path
#ifndef TG_DG_STAGE_MX
#define TG_DG_STAGE_MX 1
#endif
// the staged path: a per-tensor FP8 (or MXFP8) columnwise copy (no dbias) from 2-byte h and d_act, 8-element vectors, tiles of
// 32 rows (TG_ROWS_PER_CTA) with every thread holding whole vectors of a tile, TG_COLS % 8 == 0
#define DG_STAGE (TG_COLWISE && !TG_DBIAS && (TG_RECIPE == TG_RECIPE_DELAYED || TG_RECIPE == TG_RECIPE_CURRENT_CAST || \
	(TG_RECIPE == TG_RECIPE_MXFP8 && TG_DG_STAGE_MX)) && \
	TG_VEC == 8 && TG_IN_DTYPE != TG_DTYPE_F32 && TG_G_DTYPE != TG_DTYPE_F32 && TG_COLS % 8 == 0 && \
	TG_ROWS_PER_CTA == 32 && 256 % TG_THREADS == 0) /* = gen/plan_launch.c's staged_variant */
#define DG_TILE ((TG_COLWISE || TG_DBIAS) && TG_RECIPE != TG_RECIPE_CURRENT_AMAX && !DG_BLOCK_TILE && !DG_STAGE)
#if !TG_ROWWISE && !TG_COLWISE && TG_RECIPE != TG_RECIPE_CURRENT_AMAX
#error "dglu.cu: neither TG_ROWWISE nor TG_COLWISE set"
#endif
#if TG_ACT < TG_ACT_SWIGLU || TG_ACT > TG_ACT_SRELU
#error "dglu.cu: unknown TG_ACT"
#endif

#define DG_CAT2(a, b) a##b
#define DG_CAT(a, b) DG_CAT2(a, b)
namespace DG_CAT(dg_ns_, TG_KERNEL) {

constexpr int DG_VEC = TG_VEC;
constexpr int DG_COLS = TG_COLS;
constexpr bool DG_GATED = TG_ACT_GATED(TG_ACT);       // silu, gelu, ...: h, d_act and d_h [rows][TG_COLS], no d_b
constexpr int DG_OCOLS = (DG_GATED ? 2 : 1) * DG_COLS; // h's and d_h's row length
constexpr int dg_isz = TG_IN_DTYPE == TG_DTYPE_F32 ? 4 : 2;
constexpr int dg_gsz = TG_G_DTYPE == TG_DTYPE_F32 ? 4 : 2;
constexpr int dg_osz = TG_RECIPE == TG_RECIPE_NONE ? (TG_OUT_DTYPE == TG_DTYPE_F32 ? 4 : 2) : 1;
// lanes per scale block of the rowwise copy
constexpr int dg_group = TG_RECIPE == TG_RECIPE_BLOCK1X128 ? 128 / DG_VEC : TG_RECIPE == TG_RECIPE_MXFP8 ? 32 / DG_VEC : 1;

static_assert(DG_COLS % DG_VEC == 0, "TG_VEC must divide TG_COLS");
static_assert((DG_VEC & (DG_VEC - 1)) == 0 && DG_VEC >= 2, "TG_VEC must be a power of two >= 2");
static_assert(DG_VEC * dg_isz >= 4 && DG_VEC * dg_isz <= 32, "h vector must be 4..32 bytes");
static_assert(DG_VEC * dg_gsz >= 4 && DG_VEC * dg_gsz <= 32, "d_act vector must be 4..32 bytes");
static_assert(DG_VEC * dg_osz >= 2 && DG_VEC * dg_osz <= 32, "output vector must be 2..32 bytes");
static_assert(TG_THREADS % 32 == 0 && TG_THREADS <= 1024, "TG_THREADS must be a multiple of 32, <= 1024");
static_assert(dg_group >= 1 && dg_group <= 32, "block scaling: TG_VEC too small for one block per <= 32 lanes");
static_assert(TG_RECIPE != TG_RECIPE_BLOCK1X128 || DG_COLS % 128 == 0, "block1x128: TG_COLS must be a multiple of 128");
static_assert(TG_RECIPE != TG_RECIPE_MXFP8 || DG_COLS % 32 == 0, "mxfp8: TG_COLS must be a multiple of 32");

// d_a and d_b of one vector from its raw a, b, g; amax updated where ok.
__device__ __forceinline__ void dg_compute(const tg_rvec<TG_IN_DTYPE, DG_VEC> &ra, const tg_rvec<TG_IN_DTYPE, DG_VEC> &rb,
                                           const tg_rvec<TG_G_DTYPE, DG_VEC> &rg, bool ok, float (&da)[DG_VEC],
                                           float (&db)[DG_VEC], float &amax)
{
	float a[DG_VEC], b[DG_VEC], g[DG_VEC];
	tg_cvt_raw<TG_IN_DTYPE, DG_VEC>(ra, a);
	tg_cvt_raw<TG_IN_DTYPE, DG_VEC>(rb, b);
	tg_cvt_raw<TG_G_DTYPE, DG_VEC>(rg, g);
#pragma unroll
	for (int k = 0; k < DG_VEC; k++) {
		float d_b;
		tg_dglu1(TG_ACT, a[k], b[k], g[k], (float)(TG_LIMIT), (float)(TG_ALPHA), &da[k], &d_b);
		if (DG_GATED) // (ungated, db may be da itself: left alone)
			db[k] = d_b;
		if (ok)
			amax = DG_GATED ? tg_absmax(tg_absmax(amax, da[k]), d_b) : tg_absmax(amax, da[k]);
	}
}

// Loads the raw a, b, g vectors of vector v of row r (zeros when !ok).
__device__ __forceinline__ void dg_load(const TgParams &p, long long r, int v, bool ok, tg_rvec<TG_IN_DTYPE, DG_VEC> &ra,
                                        tg_rvec<TG_IN_DTYPE, DG_VEC> &rb, tg_rvec<TG_G_DTYPE, DG_VEC> &rg)
{
	if (ok) {
		tg_load_raw<TG_IN_DTYPE, DG_VEC>(p.p[TG_PB_IN], r * DG_OCOLS + (long long)v * DG_VEC, ra);
		if (DG_GATED)
			tg_load_raw<TG_IN_DTYPE, DG_VEC>(p.p[TG_PB_IN], r * DG_OCOLS + DG_COLS + (long long)v * DG_VEC, rb);
		else
			tg_zero_raw<TG_IN_DTYPE, DG_VEC>(rb); // (b unused ungated)
		tg_load_raw<TG_G_DTYPE, DG_VEC>(p.p[TG_PB_GRAD], r * DG_COLS + (long long)v * DG_VEC, rg);
	} else {
		tg_zero_raw<TG_IN_DTYPE, DG_VEC>(ra);
		tg_zero_raw<TG_IN_DTYPE, DG_VEC>(rb);
		tg_zero_raw<TG_G_DTYPE, DG_VEC>(rg);
	}
}

#if DG_BLOCK_TILE
/* ---------------- block tile path (1x128 blocks, rowwise and columnwise) ---------------- */
// Work items: tiles of 128 rows x 128 gate-half columns; a tile writes d_a's 128 columns and d_b's.
// 16 lanes a row (TG_VEC 8), so a row of d_a's (or d_b's) tile is one rowwise 1x128 block
// (TG_COLS % 128 == 0: no block straddles the halves); each lane group holds DB_NS consecutive rows.
// Every thread loads all its steps' a, b and g vectors first and keeps its d_a and d_b in registers;
// then the rowwise copy (tg_emit_row, per step), the next tile's loads, and the columnwise copies of
// d_a and d_b together (tg_block_colwise_tile with two tiles: scales as cast_transpose.cu's). The
// planner launches ceil(rows / 128) * TG_COLS / 128 CTAs (grid_cols 128).
constexpr int DB_G = TG_THREADS / 16;
constexpr int DB_NS = 128 / DB_G;
constexpr int DB_NCT = DG_COLS / 128;
constexpr int DB_BR = TG_RECIPE == TG_RECIPE_MXFP8 ? 32 : 128; // rows a columnwise scale block
static_assert(DG_COLS % 128 == 0 && !TG_DBIAS, "the block tile path: TG_COLS a multiple of 128, no dbias");
static_assert(DG_VEC == 8 && TG_THREADS % 32 == 0 && 128 % DB_G == 0, "block columnwise: 8-element vectors, row groups dividing 128");
// The next tile's loads before this tile's columnwise copies at 512 threads (one CTA a SM), at the
// top of its own iteration at 1024 (64 registers): H200, 8192 x 2x28672, t1024 1140 us without and
// 1243 with (spilling), t512 1212 with and 1231 without (fifteenth session).
#ifndef TG_DB_PREFETCH
#define TG_DB_PREFETCH (TG_THREADS < 1024 && !TG_DB_STAGE)
#endif
// TG_DB_STAGE: 16-byte pieces a thread a tile (its steps' a, b and g vectors), each thread's own slots of the
// dynamic buffer [DB_NIN * DB_NS][TG_THREADS] (consecutive threads' pieces consecutive: no bank conflicts)
constexpr int DB_NIN = DG_GATED ? 3 : 2;

// Item it's first row r0 and column tile ct (tiles row-major; gate-half columns 128 ct on).
__device__ __forceinline__ void db_item(long long it, long long &r0, int &ct)
{
	r0 = it / DB_NCT * 128;
	ct = (int)(it % DB_NCT);
}

__device__ __forceinline__ void dg_block_tile_path(const TgParams &p)
{
	__shared__ TgBlockTileSmem<DB_G, DG_GATED ? 2 : 1, DB_BR> sm;
	const long long rows = p.n[0];
	const int lr = threadIdx.x / 16, lc = threadIdx.x % 16;
	const long long items = (rows + 127) / 128 * DB_NCT;
	tg_rvec<TG_IN_DTYPE, DG_VEC> qa[DB_NS], qb[DB_NS];
	tg_rvec<TG_G_DTYPE, DG_VEC> qg[DB_NS];
	// the a, b and g vectors of this thread's steps of item it (zeros outside the tensor)
	auto load = [&](long long it) {
		long long r0;
		int ct;
		db_item(it, r0, ct);
		const int v = ct * (128 / DG_VEC) + lc;
#pragma unroll
		for (int st = 0; st < DB_NS; st++) {
			const long long r = r0 + lr * DB_NS + st;
			dg_load(p, r, v, it < items && r < rows, qa[st], qb[st], qg[st]);
		}
	};
#if TG_DB_STAGE
	static_assert(sizeof(qa[0]) == 16 && sizeof(qg[0]) == 16, "TG_DB_STAGE: 16-byte vectors (2-byte h and d_act)");
	extern __shared__ uint4 db_raw[]; // [DB_NIN * DB_NS][TG_THREADS]
	// item it's pieces into this thread's slots (zero-filled outside the tensor; nothing past the last item), committed
	auto issue = [&](long long it) {
		if (it < items) {
			long long r0;
			int ct;
			db_item(it, r0, ct);
			const int v = ct * (128 / DG_VEC) + lc;
			const unsigned char *h = (const unsigned char *)p.p[TG_PB_IN], *g = (const unsigned char *)p.p[TG_PB_GRAD];
#pragma unroll
			for (int st = 0; st < DB_NS; st++) {
				const long long r = r0 + lr * DB_NS + st;
				const bool ok = r < rows;
				const long long hi = ok ? r * DG_OCOLS + (long long)v * DG_VEC : 0, gi = ok ? r * DG_COLS + (long long)v * DG_VEC : 0;
				uint4 *slot = &db_raw[(st * DB_NIN) * TG_THREADS + threadIdx.x];
				tg_cp_async16(slot, h + 2 * hi, ok);
				if (DG_GATED)
					tg_cp_async16(slot + TG_THREADS, h + 2 * (hi + (ok ? DG_COLS : 0)), ok);
				tg_cp_async16(slot + (DB_NIN - 1) * TG_THREADS, g + 2 * gi, ok);
			}
		}
		tg_cp_async_commit();
	};
	issue(blockIdx.x);
#else
	if (TG_DB_PREFETCH)
		load(blockIdx.x);
#endif
	for (long long it = blockIdx.x; it < items; it += gridDim.x) {
#if TG_DB_STAGE
		tg_cp_async_wait<0>(); // this thread's own pieces: no barrier
#pragma unroll
		for (int st = 0; st < DB_NS; st++) {
			const uint4 *slot = &db_raw[(st * DB_NIN) * TG_THREADS + threadIdx.x];
			*reinterpret_cast<uint4 *>(&qa[st]) = slot[0];
			if (DG_GATED)
				*reinterpret_cast<uint4 *>(&qb[st]) = slot[TG_THREADS];
			else
				tg_zero_raw<TG_IN_DTYPE, DG_VEC>(qb[st]);
			*reinterpret_cast<uint4 *>(&qg[st]) = slot[(DB_NIN - 1) * TG_THREADS];
		}
#else
		if (!TG_DB_PREFETCH)
			load(it);
#endif
		long long r0;
		int ct;
		db_item(it, r0, ct);
		const int c0 = ct * 128, c = c0 + lc * DG_VEC;
		float d[DG_GATED ? 2 : 1][DB_NS][DG_VEC], amax = 0.0f; // d_a, d_b (ungated: d_a alone, db is da)
		auto &da = d[0], &db = d[DG_GATED ? 1 : 0];
#pragma unroll
		for (int st = 0; st < DB_NS; st++) // rows past the tensor: a = b = g = 0 give d_a = d_b = +0 (every act)
			dg_compute(qa[st], qb[st], qg[st], true, da[st], db[st], amax);
#if TG_DB_STAGE
		issue(it + gridDim.x); // after the math: the pieces were read (their registers consumed) before being refilled
#endif
		if constexpr (TG_ROWWISE && TG_RECIPE == TG_RECIPE_BLOCK1X128) // d_a's and d_b's blocks of the thread's rows: one call
			tg_emit_rows_block<TG_FMT, (DG_GATED ? 2 : 1) * DB_NS, DB_NS, DG_OCOLS>(p, rows, r0 + lr * DB_NS, c, DG_COLS,
				reinterpret_cast<const float(&)[(DG_GATED ? 2 : 1) * DB_NS][8]>(d), true, TG_EPS_SCALE, TG_POW2);
		else if (TG_ROWWISE) {
#pragma unroll
			for (int st = 0; st < DB_NS; st++) {
				const long long r = r0 + lr * DB_NS + st;
				tg_emit_row<TG_FMT, TG_RECIPE, TG_OUT_DTYPE, dg_group, DG_VEC, DG_OCOLS, 0, TG_DEQ>(
					p, rows, r, c, da[st], r < rows, 1.0f, TG_EPS_SCALE, TG_POW2);
				if (DG_GATED)
					tg_emit_row<TG_FMT, TG_RECIPE, TG_OUT_DTYPE, dg_group, DG_VEC, DG_OCOLS, 0, TG_DEQ>(
						p, rows, r, DG_COLS + c, db[st], r < rows, 1.0f, TG_EPS_SCALE, TG_POW2);
			}
		}
		if (TG_DB_PREFETCH)
			load(it + gridDim.x); // here, not before the rowwise copy (at 512 threads 128 registers, 20 bytes spilled on sm_90a)
		tg_block_colwise_tile<TG_FMT, TG_THREADS, DB_NS, DG_OCOLS, DG_GATED ? 2 : 1, DB_BR>(p, sm, d, r0, c0, DG_COLS, DG_OCOLS,
			rows, TG_EPS_SCALE, TG_POW2);
	}
}

#elif DG_STAGE
/* ---------------- staged path (per-tensor FP8 or MXFP8 with a columnwise copy) ---------------- */
// Tiles of DS_TR rows x 64 gate-half columns: the tile's a, b and g come into shared memory by cp.async, DS_NS
// tiles deep (the next tiles' loads are in flight during this one's math). Row pass: each thread takes DS_VPT
// 8-element vectors, computes d_a and d_b once (amax), stores the rowwise codes and puts them into a byte tile
// (a per-tensor copy's columnwise codes are the same bytes). Column pass: each thread takes DS_VPT units of
// 4 rows x 4 columns of the byte tile, transposes them by byte permutes and stores 4 bytes a column; the 8
// lanes of a warp with the same columns cover 32 consecutive rows (one 32-byte sector a column). MXFP8: the
// row pass writes the rowwise copy by tg_emit_row (4 lanes a 32-column block) and the FP32 values into a tile;
// the column pass takes two lanes a column (rows 0-15 and 16-31: the block amax by one shuffle, its E8M0 scale,
// 16 codes a lane); two stages of inputs, and launch bounds with one CTA a SM as the minimum (NVRTC held the
// plain bound to 64 registers and spilled; 78 without spills, three CTAs a SM). Two barriers a tile. Items:
// tiles in the order of ds_tile; any grid.x >= 1 (grid-stride).
constexpr int DS_TR = TG_ROWS_PER_CTA;
// A tile's two halves (hf 0, 1): gated, d_a and d_b of the same 64 gate columns (d_h columns c and C + c); ungated
// (no linear half), d_h's columns c0.. and c0 + 64.. (a tile covers 128 columns: the per-tile work of the loads, the
// barriers and the column pass is spread over twice the elements, and no warp idles in the column pass). H100, GELU
// 8192 x 16384 both copies (session 25): per-tensor 341-352 -> 310-316 us (87.5% of copy), MXFP8 426 -> 416.
constexpr int DS_TC = 64;                         // columns of a half
constexpr int DS_GOFF = DG_GATED ? 0 : DS_TC;     // half hf's first gate column: c0 + hf * DS_GOFF
constexpr int DS_OOFF = DG_GATED ? DG_COLS : 0;   // its d_h column: the gate column + hf * DS_OOFF
constexpr int DS_HOFF = DS_GOFF + DS_OOFF;        // half 1's d_h columns past half 0's (C gated, 64 ungated)
constexpr int DS_NIN = DG_GATED ? 3 : 4;          // input tiles a stage: a, b, g; ungated h and g of each half
constexpr int DS_VPT = DS_TR * DS_TC / 8 / TG_THREADS; // vectors (and column units) a thread
constexpr int DS_NCT = (DG_COLS + DS_TC + DS_GOFF - 1) / (DS_TC + DS_GOFF);
constexpr int DS_TILE_B = DS_TR * DS_TC * 2;      // bytes of one input tile (2-byte elements)
constexpr bool DS_MX = TG_RECIPE == TG_RECIPE_MXFP8;
// stages: 3 x 3 x 12 KB and the 4 KB byte tile; ungated 2 x 16 KB; MXFP8: 2 and 16 KB of values
constexpr int DS_NS = DS_MX || !DG_GATED ? 2 : 3;
constexpr int DS_XW = DS_MX ? 2 * DS_TR * DS_TC : 2 * DS_TR * 16; // words of the byte tile, or of MXFP8's FP32 tile
static_assert(DS_NS * DS_NIN * DS_TILE_B + 4 * DS_XW + (TG_RECIPE == TG_RECIPE_DELAYED ? 128 : 0) <= 48 * 1024,
	"staged path: static shared memory");
static_assert(dg_isz == 2 && dg_gsz == 2 && DS_TR == 32 && DS_VPT >= 1 && DS_VPT * TG_THREADS == 256,
              "staged path: 2-byte inputs, 32-row tiles, whole vectors a thread");

// Word index of the byte tile's word (half hf, row r, word column w: columns 4w..4w+3), 16 words a half row,
// XOR-swizzled: bit 4 (the row's parity) by row bit 2, bits 2-3 (the word column's) by row bits 3-4. So the
// column pass's lanes (8 row groups of 4 rows x 4 word columns) read 32 different banks, and the row pass's
// 8-byte writes stay whole and aligned.
__device__ __forceinline__ int ds_word(int hf, int r, int w)
{
	return ((hf * DS_TR + r) * 16 + w) ^ ((((r >> 2) & 1) << 4) | (((r >> 3) & 3) << 2));
}

// MXFP8: index of d_a's (hf 0) or d_b's FP32 value at tile row r, column c (64 a row), the column XORed with 16
// in rows 16-31, so the column pass's two lanes of a column (rows 0-15 and 16-31) read different banks.
__device__ __forceinline__ int ds_fidx(int hf, int r, int c) { return (hf * DS_TR + r) * DS_TC + (c ^ ((r >> 4) << 4)); }

// Tile t's first row and column: groups of 4 row tiles (128 rows) a column tile, the row tile fastest, so the
// tiles in flight together fill whole 128-byte lines of the columnwise copy (the last group may hold fewer).
// 32-bit: a tensor of 2^32 tiles (2^43 gate elements) is past any GPU's memory.
__device__ __forceinline__ void ds_tile(unsigned t, unsigned nrt, long long &r0, int &c0)
{
	const unsigned g = t / (4 * DS_NCT), left = nrt - 4 * g, gs = left < 4 ? left : 4, l = t - g * (4 * DS_NCT);
	r0 = (long long)(4 * g + l % gs) * DS_TR;
	c0 = (int)(l / gs) * (DS_TC + DS_GOFF);
}

__device__ __forceinline__ void dg_stage_path(const TgParams &p)
{
	// a, b, g tiles [DS_TR][DS_TC]; ungated: h of half 0, of half 1, g of half 0, of half 1
	__shared__ alignas(16) unsigned char s_in[DS_NS][DS_NIN][DS_TILE_B];
	__shared__ alignas(16) uint32_t s_q[DS_XW]; // byte tile: the two halves' codes (MXFP8: their FP32 values)
	const long long rows = p.n[0];
	const unsigned nrt = (unsigned)((rows + DS_TR - 1) / DS_TR), tiles = nrt * DS_NCT;
	const int tid = threadIdx.x;
	const float s = tg_tensor_scale<TG_RECIPE, TG_FMT, TG_POW2>(p, TG_EPS_SCALE);
	float amax = 0.0f;
	const unsigned char *h = (const unsigned char *)p.p[TG_PB_IN], *g = (const unsigned char *)p.p[TG_PB_GRAD];
	unsigned char *out = (unsigned char *)p.p[TG_PB_OUT], *out_t = (unsigned char *)p.p[TG_PB_OUT_T];
	// this thread's places in a tile: vector v at row vr[v], column vc[v]; column unit v at row ur[v] (of 4
	// rows), d_h column ucol[v] - c0 (of 4), whose first columnwise byte sits uoff[v] past out_t + c0 * pt + r0
	// (out_t [2C][pt], its lines padded to 16 bytes: TG_PITCH)
	const long long pt = TG_PITCH(rows);
	int vr[DS_VPT], vc[DS_VPT], ur[DS_VPT], ucol[DS_VPT];
	long long uoff[DS_VPT];
#pragma unroll
	for (int v = 0; v < DS_VPT; v++) {
		const int i = v * TG_THREADS + tid, wi = i >> 5;
		vr[v] = i / 8;
		vc[v] = i % 8 * 8;
		ur[v] = 4 * (i & 7);
		ucol[v] = 4 * (((wi & 3) << 2) | ((i >> 3) & 3));
		uoff[v] = (long long)((wi >> 2) * DS_HOFF + ucol[v]) * pt + ur[v];
	}

	// tile t's cp.async into stage st (zero-filled outside the tensor; nothing past the last tile), committed
	auto issue = [&](unsigned t, int st) {
		if (t < tiles) {
			long long r0;
			int c0;
			ds_tile(t, nrt, r0, c0);
			const unsigned char *ht = h + 2 * (r0 * DG_OCOLS + c0), *gt = g + 2 * (r0 * DG_COLS + c0);
#pragma unroll
			for (int v = 0; v < DS_VPT; v++) {
				const int i = v * TG_THREADS + tid;
				const bool ok = r0 + vr[v] < rows && c0 + vc[v] < DG_COLS;
				const unsigned char *hv = ok ? ht + 2 * (vr[v] * DG_OCOLS + vc[v]) : h;
				const unsigned char *gv = ok ? gt + 2 * (vr[v] * DG_COLS + vc[v]) : g;
				tg_cp_async16(&s_in[st][0][i * 16], hv, ok);
				if (DG_GATED) {
					tg_cp_async16(&s_in[st][1][i * 16], hv + (ok ? 2 * DG_COLS : 0), ok);
					tg_cp_async16(&s_in[st][2][i * 16], gv, ok);
				} else { // half 1: 64 columns on
					const bool ok1 = ok && c0 + DS_TC + vc[v] < DG_COLS;
					tg_cp_async16(&s_in[st][1][i * 16], ok1 ? hv + 2 * DS_TC : h, ok1);
					tg_cp_async16(&s_in[st][2][i * 16], gv, ok);
					tg_cp_async16(&s_in[st][3][i * 16], ok1 ? gv + 2 * DS_TC : g, ok1);
				}
			}
		}
		tg_cp_async_commit();
	};
#pragma unroll
	for (int k = 0; k < DS_NS - 1; k++)
		issue(blockIdx.x + k * gridDim.x, k);

	int st = 0;
	for (unsigned t = blockIdx.x; t < tiles; t += gridDim.x) {
		issue(t + (DS_NS - 1) * gridDim.x, (st + DS_NS - 1) % DS_NS); // into the stage read a tile ago
		tg_cp_async_wait<DS_NS - 1>();
		__syncthreads(); // tile t has landed; the byte tile's column pass of the last tile is done
		long long r0;
		int c0;
		ds_tile(t, nrt, r0, c0);
		/* row pass */
		unsigned char *ot = out + r0 * DG_OCOLS + c0;
#pragma unroll
		for (int v = 0; v < DS_VPT; v++) {
			const int i = v * TG_THREADS + tid;
			const bool ok = r0 + vr[v] < rows && c0 + vc[v] < DG_COLS;
			const bool ok1 = DG_GATED ? ok : ok && c0 + DS_TC + vc[v] < DG_COLS; // half 1's
			tg_rvec<TG_IN_DTYPE, 8> ra, rb;
			tg_rvec<TG_G_DTYPE, 8> rg;
			tg_load_raw<TG_IN_DTYPE, 8>(&s_in[st][0][0], (long long)i * 8, ra);
			tg_load_raw<TG_G_DTYPE, 8>(&s_in[st][2][0], (long long)i * 8, rg);
			float da[8], db[8]; // half 0's values and half 1's: d_a and d_b, or two d_a vectors 64 columns apart
			if (DG_GATED) {
				tg_load_raw<TG_IN_DTYPE, 8>(&s_in[st][1][0], (long long)i * 8, rb);
				dg_compute(ra, rb, rg, ok, da, db, amax);
			} else {
				tg_zero_raw<TG_IN_DTYPE, 8>(rb);
				dg_compute(ra, rb, rg, ok, da, da, amax);
				tg_load_raw<TG_IN_DTYPE, 8>(&s_in[st][1][0], (long long)i * 8, ra);
				tg_load_raw<TG_G_DTYPE, 8>(&s_in[st][3][0], (long long)i * 8, rg);
				dg_compute(ra, rb, rg, ok1, db, db, amax);
			}
			if constexpr (DS_MX) { /* rowwise: 4 lanes a 32-column block; the values for the column pass */
				const long long r = r0 + vr[v];
				const int c = c0 + vc[v];
#pragma unroll
				for (int k = 0; k < 8; k++) {
					if (!ok)
						da[k] = 0.0f;
					if (!ok1)
						db[k] = 0.0f;
				}
				if (TG_ROWWISE) {
					tg_emit_row<TG_FMT, TG_RECIPE, TG_OUT_DTYPE, dg_group, 8, DG_OCOLS, 0, TG_DEQ>(p, rows, r, c, da, ok, 1.0f,
						TG_EPS_SCALE, TG_POW2);
					tg_emit_row<TG_FMT, TG_RECIPE, TG_OUT_DTYPE, dg_group, 8, DG_OCOLS, 0, TG_DEQ>(p, rows, r, DS_HOFF + c,
						db, ok1, 1.0f, TG_EPS_SCALE, TG_POW2);
				}
				float *sf = reinterpret_cast<float *>(s_q);
#pragma unroll
				for (int k = 0; k < 8; k += 4) {
					*reinterpret_cast<float4 *>(&sf[ds_fidx(0, vr[v], vc[v] + k)]) = make_float4(da[k], da[k + 1], da[k + 2], da[k + 3]);
					*reinterpret_cast<float4 *>(&sf[ds_fidx(1, vr[v], vc[v] + k)]) = make_float4(db[k], db[k + 1], db[k + 2], db[k + 3]);
				}
			} else {
				uint2 qa, qb;
				qa.x = tg_fp8x4<TG_FMT>(da[0], da[1], da[2], da[3], s);
				qa.y = tg_fp8x4<TG_FMT>(da[4], da[5], da[6], da[7], s);
				qb.x = tg_fp8x4<TG_FMT>(db[0], db[1], db[2], db[3], s);
				qb.y = tg_fp8x4<TG_FMT>(db[4], db[5], db[6], db[7], s);
				if (TG_ROWWISE) {
					unsigned char *o = ot + vr[v] * DG_OCOLS + vc[v];
					if (ok)
						*(uint2 *)o = qa;
					if (ok1)
						*(uint2 *)(o + DS_HOFF) = qb;
				}
				*(uint2 *)&s_q[ds_word(0, vr[v], vc[v] / 4)] = qa;
				*(uint2 *)&s_q[ds_word(1, vr[v], vc[v] / 4)] = qb;
			}
		}
		__syncthreads(); // the byte tile is complete; stage st may be refilled
		/* column pass */
		if constexpr (DS_MX) {
			/* two lanes a column (rows 0-15, 16-31): the 32-row block's amax by one shuffle, its E8M0 scale to
			 * scale_inv_t [ceil(rows/32)][2C], 16 codes a lane */
			const float *sf = reinterpret_cast<const float *>(s_q);
			constexpr float fmax = TG_FMT == TG_FMT_E4M3 ? TG_E4M3_MAX : TG_E5M2_MAX;
#pragma unroll
			for (int v = 0; v < DS_VPT; v++) {
				const int u = v * TG_THREADS + tid, cc = u >> 1, h = u & 1, hf = cc >> 6, ci = cc & 63;
				float a = 0.0f; // the values are read twice (amax, then codes): fewer registers than holding 16
#pragma unroll
				for (int i = 0; i < 16; i++)
					a = tg_absmax(a, sf[ds_fidx(hf, 16 * h + i, ci)]);
				a = fmaxf(a, __shfl_xor_sync(0xFFFFFFFFu, a, 1));
				const int c = c0 + hf * DS_GOFF + ci; // the gate column
				const long long r = r0 + 16 * h; // (r0 < rows: the tile exists)
				const uint8_t e = tg_e8m0_from_amax(a, fmax);
				const float bs = tg_e8m0_rcp(e);
				if (h == 0 && c < DG_COLS)
					((uint8_t *)p.p[TG_PB_SCALE_INV_T])[r0 / 32 * DG_OCOLS + hf * DS_OOFF + c] = e;
				uint32_t w[4];
#pragma unroll
				for (int k = 0; k < 4; k++) {
					const int i = 16 * h + 4 * k;
					w[k] = tg_fp8x4<TG_FMT>(sf[ds_fidx(hf, i, ci)], sf[ds_fidx(hf, i + 1, ci)], sf[ds_fidx(hf, i + 2, ci)],
					                        sf[ds_fidx(hf, i + 3, ci)], bs);
				}
				// lanes 2i, 2i+1: one column's rows 0-15, 16-31
				tg_put_col16(out_t, rows, hf * DS_OOFF + c, r, w, c < DG_COLS);
			}
		} else {
			/* unit = 8 row groups of 4 rows (lanes 0-7) x 4 word columns (lanes 8-31) a warp; the warps over the 4
			 * word-column groups and the two halves */
			unsigned char *otc = out_t + c0 * pt + r0;
#pragma unroll
			for (int v = 0; v < DS_VPT; v++) {
				const int i = v * TG_THREADS + tid, hf = (i >> 5) >> 2;
				const long long r = r0 + ur[v];
				uint32_t x[4], y[4];
#pragma unroll
				for (int k = 0; k < 4; k++)
					x[k] = s_q[ds_word(hf, ur[v] + k, ucol[v] / 4)];
				tg_transpose_4x4_bytes(x[0], x[1], x[2], x[3], y);
				if (r >= rows || c0 + hf * DS_GOFF + ucol[v] >= DG_COLS)
					continue;
				unsigned char *dst = otc + uoff[v]; // (a word past rows fills the line's padding)
#pragma unroll
				for (int j = 0; j < 4; j++, dst += pt)
					*(uint32_t *)dst = y[j];
			}
		}
		st = (st + 1) % DS_NS;
	}
	tg_cp_async_wait<0>();
	if constexpr (TG_RECIPE == TG_RECIPE_DELAYED) {
		__shared__ float ared[32];
		float m = tg_cta_max<TG_THREADS>(amax, ared);
		if (threadIdx.x == 0)
			tg_red_max((float *)p.p[TG_PB_AMAX], m);
	}
}

#elif !DG_TILE
/* ---------------- row path ---------------- */
constexpr int DG_NVEC = DG_COLS / DG_VEC;              // vectors per half row
constexpr int DG_TPR = TG_THREADS / TG_ROWS_PER_CTA; // threads per row
constexpr int DG_NJ = (DG_NVEC + DG_TPR - 1) / DG_TPR;
static_assert(TG_THREADS % TG_ROWS_PER_CTA == 0, "TG_ROWS_PER_CTA must divide TG_THREADS");
static_assert(DG_TPR % 32 == 0 || 32 % DG_TPR == 0, "threads per row: a multiple of 32 or a divisor of 32");
static_assert(DG_TPR % dg_group == 0, "block scaling: threads per row must hold whole scale blocks");

__device__ __forceinline__ void dg_row_path(const TgParams &p)
{
	__shared__ float ared[32];
	const long long rows = p.n[0];
	const int slot = threadIdx.x / DG_TPR, t = threadIdx.x % DG_TPR;
	float s = 1.0f;
	if (TG_RECIPE == TG_RECIPE_DELAYED || TG_RECIPE == TG_RECIPE_CURRENT_CAST)
		s = tg_tensor_scale<TG_RECIPE, TG_FMT, TG_POW2>(p, TG_EPS_SCALE);
	float amax = 0.0f;
	for (long long rb = (long long)blockIdx.x * TG_ROWS_PER_CTA; rb < rows; rb += (long long)gridDim.x * TG_ROWS_PER_CTA) {
		const long long r = rb + slot;
		const bool rv = r < rows;
		tg_rvec<TG_IN_DTYPE, DG_VEC> ra[DG_NJ], rb_[DG_NJ];
		tg_rvec<TG_G_DTYPE, DG_VEC> rg[DG_NJ];
#pragma unroll
		for (int j = 0; j < DG_NJ; j++) {
			const int v = j * DG_TPR + t;
			dg_load(p, r, v, rv && (DG_NVEC % DG_TPR == 0 || v < DG_NVEC), ra[j], rb_[j], rg[j]);
		}
#pragma unroll
		for (int j = 0; j < DG_NJ; j++) {
			const int v = j * DG_TPR + t;
			const bool ok = rv && (DG_NVEC % DG_TPR == 0 || v < DG_NVEC);
			float da[DG_VEC], db[DG_VEC];
			dg_compute(ra[j], rb_[j], rg[j], ok, da, db, amax);
			if (TG_RECIPE != TG_RECIPE_CURRENT_AMAX && TG_ROWWISE) {
				tg_emit_row<TG_FMT, TG_RECIPE, TG_OUT_DTYPE, dg_group, DG_VEC, DG_OCOLS, 0, TG_DEQ>(
					p, rows, r, v * DG_VEC, da, ok, s, TG_EPS_SCALE, TG_POW2);
				if (DG_GATED)
					tg_emit_row<TG_FMT, TG_RECIPE, TG_OUT_DTYPE, dg_group, DG_VEC, DG_OCOLS, 0, TG_DEQ>(
						p, rows, r, DG_COLS + v * DG_VEC, db, ok, s, TG_EPS_SCALE, TG_POW2);
			}
		}
	}
	if (TG_RECIPE == TG_RECIPE_DELAYED || TG_RECIPE == TG_RECIPE_CURRENT_AMAX) {
		float m = tg_cta_max<TG_THREADS>(amax, ared);
		if (threadIdx.x == 0)
			tg_red_max((float *)p.p[TG_PB_AMAX], m);
	}
}

#else
/* ---------------- tile path (columnwise copy, dbias) ---------------- */
constexpr int DG_R = TG_ROWS_PER_CTA % 32 == 0 ? TG_ROWS_PER_CTA : 32; // rows per tile
constexpr int DG_VPR = TG_THREADS / DG_R;                              // vectors per tile row
constexpr int DG_CW = DG_VPR * DG_VEC;                                 // gate-half columns per step
constexpr int DG_SEG = TG_RECIPE == TG_RECIPE_MXFP8 ? 32 : 16;
// Work items: a tile of DG_R rows by a slice of DG_SLICE_STEPS steps (DG_SW gate-half
// columns; the last slice of a row may be shorter). Item i = (row tile i / DG_NS, slice
// i % DG_NS); the planner launches ceil(rows / DG_R) * DG_NS CTAs (grid_cols = DG_SW), so
// a short tensor still fills the GPU. Any grid.x >= 1 is correct (grid-stride over items).
constexpr int DG_SLICE_STEPS = 16;
constexpr int DG_SW = DG_CW * DG_SLICE_STEPS;
constexpr int DG_NS = (DG_COLS + DG_SW - 1) / DG_SW;
constexpr int DG_PITCH = DG_CW + 4;
// Steps of loads in flight ahead of the math (register prefetch), about 512 threads' worth a CTA.
// H100, dSwiGLU 8192 x 2x14336 both copies (us, prefetch 1 / 2 / 3): t128r32 724 / 677 / 603,
// t256r32 534 / 506 / 525, t512r32 544 / 556 / 573, t512r64 531 / 555 / 571.
constexpr int DG_PF = TG_THREADS >= 512 ? 1 : TG_THREADS >= 256 ? 2 : 3;
struct alignas(16) dg_f4 { float a[4]; };
static_assert(TG_THREADS % DG_R == 0 && DG_VPR >= 1, "columnwise: TG_THREADS must be a multiple of the tile rows");
static_assert(DG_VEC % 4 == 0, "columnwise: TG_VEC must be a multiple of 4");
static_assert(DG_COLS % DG_CW == 0, "columnwise: the step width TG_THREADS*TG_VEC/rows must divide TG_COLS");
static_assert(DG_VPR % dg_group == 0, "columnwise: a step row must hold whole scale blocks");

// Stage y (one vector per thread) into ys at (tr, tv) for dg_flush.
__device__ __forceinline__ void dg_stage(float (*ys)[DG_PITCH], int tr, int tv, const float (&y)[DG_VEC])
{
#pragma unroll
	for (int k = 0; k < DG_VEC; k += 4) {
		dg_f4 q;
#pragma unroll
		for (int i = 0; i < 4; i++)
			q.a[i] = y[k + i];
		*reinterpret_cast<dg_f4 *>(&ys[tr][tv * DG_VEC + k]) = q;
	}
}

// After a stage of d_a or d_b (gate-half step columns c0.., d_h column offset c0): the
// bias-gradient chunk partials from the staged values (column by column, the chunk's rows in
// order; rows past the tensor skipped), then the columnwise store. Every thread calls it;
// the stage may be rewritten after it returns.
__device__ __forceinline__ void dg_flush(const TgParams &p, float (*ys)[DG_PITCH], long long r0, int c0, long long rows,
                                         float s)
{
	if constexpr (TG_DBIAS) {
		__syncthreads(); // the stage is complete
		for (int task = threadIdx.x; task < DG_CW * (DG_R / TG_BWD_CHUNK); task += TG_THREADS) {
			const int cc = task % DG_CW, seg = task / DG_CW;
			const long long rs0 = r0 + seg * TG_BWD_CHUNK;
			if (rs0 >= rows)
				continue;
			const int nr = rows - rs0 < TG_BWD_CHUNK ? (int)(rows - rs0) : TG_BWD_CHUNK;
			float acc = -0.0f;
			for (int k = 0; k < nr; k++)
				acc = tg__add_rn(acc, ys[seg * TG_BWD_CHUNK + k][cc]);
			const float av[1] = {acc};
			tg_store_keep<1>((float *)p.p[TG_PB_DW], rs0 / TG_BWD_CHUNK * DG_OCOLS + c0 + cc, av);
		}
	}
	if constexpr (TG_COLWISE)
		tg_colwise_store<TG_FMT, TG_RECIPE, TG_THREADS, DG_OCOLS, DG_R, DG_CW, DG_PITCH, DG_SEG>(p, ys, r0, c0, rows,
			s); // __syncthreads on entry and exit
	else
		__syncthreads(); // before the stage is rewritten
}

__device__ __forceinline__ void dg_tile_path(const TgParams &p)
{
	__shared__ alignas(16) float ys[DG_R][DG_PITCH];
	__shared__ float ared[32];
	const long long rows = p.n[0];
	float s = 1.0f;
	if (TG_RECIPE == TG_RECIPE_DELAYED || TG_RECIPE == TG_RECIPE_CURRENT_CAST)
		s = tg_tensor_scale<TG_RECIPE, TG_FMT, TG_POW2>(p, TG_EPS_SCALE);
	float amax = 0.0f;
	const int tr = threadIdx.x / DG_VPR, tv = threadIdx.x % DG_VPR;
	const long long items = (rows + DG_R - 1) / DG_R * DG_NS;
	for (long long it = blockIdx.x; it < items; it += gridDim.x) {
		const long long r0 = it / DG_NS * DG_R;
		const int cs = (int)(it % DG_NS) * DG_SW, ce = cs + DG_SW < DG_COLS ? cs + DG_SW : DG_COLS;
		const long long r = r0 + tr;
		const bool rv = r < rows;
		// DG_PF steps of loads in flight ahead of the math: q[0] is this step's, q[DG_PF] the
		// one issued now, before this step's math and (synchronizing) stores
		tg_rvec<TG_IN_DTYPE, DG_VEC> qa[DG_PF + 1], qb[DG_PF + 1];
		tg_rvec<TG_G_DTYPE, DG_VEC> qg[DG_PF + 1];
#pragma unroll
		for (int i = 0; i < DG_PF; i++)
			dg_load(p, r, cs / DG_VEC + tv + i * DG_VPR, rv && cs + i * DG_CW < ce, qa[i], qb[i], qg[i]);
		for (int c0 = cs; c0 < ce; c0 += DG_CW) {
			const int v = c0 / DG_VEC + tv;
			dg_load(p, r, v + DG_PF * DG_VPR, rv && c0 + DG_PF * DG_CW < ce, qa[DG_PF], qb[DG_PF], qg[DG_PF]);
			float da[DG_VEC], db[DG_VEC];
			dg_compute(qa[0], qb[0], qg[0], rv, da, db, amax);
			if (TG_ROWWISE) {
				tg_emit_row<TG_FMT, TG_RECIPE, TG_OUT_DTYPE, dg_group, DG_VEC, DG_OCOLS, 0, TG_DEQ>(
					p, rows, r, v * DG_VEC, da, rv, s, TG_EPS_SCALE, TG_POW2);
				if (DG_GATED)
					tg_emit_row<TG_FMT, TG_RECIPE, TG_OUT_DTYPE, dg_group, DG_VEC, DG_OCOLS, 0, TG_DEQ>(
						p, rows, r, DG_COLS + v * DG_VEC, db, rv, s, TG_EPS_SCALE, TG_POW2);
			}
			dg_stage(ys, tr, tv, da);
			dg_flush(p, ys, r0, c0, rows, s);
			if (DG_GATED) {
				dg_stage(ys, tr, tv, db);
				dg_flush(p, ys, r0, DG_COLS + c0, rows, s);
			}
#pragma unroll
			for (int i = 0; i < DG_PF; i++) {
				qa[i] = qa[i + 1];
				qb[i] = qb[i + 1];
				qg[i] = qg[i + 1];
			}
		}
	}
	if (TG_RECIPE == TG_RECIPE_DELAYED) {
		float m = tg_cta_max<TG_THREADS>(amax, ared);
		if (threadIdx.x == 0)
			tg_red_max((float *)p.p[TG_PB_AMAX], m);
	}
}
#endif

#if DG_STAGE && TG_RECIPE == TG_RECIPE_MXFP8
#define DG_LAUNCH_BOUNDS __launch_bounds__(TG_THREADS, 1)
#else
#define DG_LAUNCH_BOUNDS __launch_bounds__(TG_THREADS)
#endif
extern "C" __global__ void DG_LAUNCH_BOUNDS TG_KERNEL(const TgParams p)
{
	TG_LAUNCH_DEPENDENTS(); // a dreduce after it may launch (Kernel.pdl)
#if DG_BLOCK_TILE
	dg_block_tile_path(p);
#elif DG_STAGE
	dg_stage_path(p);
#elif DG_TILE
	dg_tile_path(p);
#else
	dg_row_path(p);
#endif
}

} // namespace
