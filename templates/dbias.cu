// dbias.cu: the chunk partials of a column sum (the bias gradient), stage 1 of 2.
// tegen-slots: TG_KERNEL TG_IN_DTYPE TG_VEC TG_THREADS TG_COLS
//
// in = the gradient [rows][TG_COLS] (TG_IN_DTYPE) -> partials [ceil(rows/TG_BWD_CHUNK)][TG_COLS]
// FP32: partial (k, c) = the sum over the rows of chunk k in row order, from -0
// (tg_backward.h); dreduce.cu sums them (tg_backward.h's order). Bit-exact with
// ref_chunk_partials / ref_dbias for every TG_VEC / TG_THREADS / grid.
// Pointer slots (tg_backward.h): TG_PB_IN the gradient, TG_PB_DW the partials.
// (The fused form, dbias inside the gradient's cast+transpose, keeps this order: a tile of
// a multiple of TG_BWD_CHUNK rows writes one partial per chunk it covers.)
//
// Launch: block (TG_THREADS,1,1), any grid.x >= 1 (grid-stride over (chunk, column
// vector) tasks; ceil(rows/32) * TG_COLS/TG_VEC / TG_THREADS CTAs cover it once). n[0] = rows.
#include "tg_formats.h"
#include "tg_recipe.h"
#include "tg_kernel.h"
#include "tg_rowvec.h"
#include "tg_backward.h"

#define DB_CAT2(a, b) a##b
#define DB_CAT(a, b) DB_CAT2(a, b)
namespace DB_CAT(db_ns_, TG_KERNEL) {

constexpr int DB_VEC = TG_VEC;
constexpr int DB_COLS = TG_COLS;
constexpr int DB_NVEC = DB_COLS / DB_VEC;
static_assert(DB_COLS % DB_VEC == 0, "TG_VEC must divide TG_COLS");
static_assert(DB_VEC * 4 <= 32 && DB_VEC >= 1, "TG_VEC: at most 8 (the FP32 partial vector is <= 32 bytes)");
static_assert(TG_THREADS % 32 == 0 && TG_THREADS <= 1024, "TG_THREADS must be a multiple of 32, <= 1024");

extern "C" __global__ void __launch_bounds__(TG_THREADS) TG_KERNEL(const TgParams p)
{
	TG_LAUNCH_DEPENDENTS(); // a dreduce after it may launch (Kernel.pdl)
	const long long rows = p.n[0];
	const long long nchunks = (rows + TG_BWD_CHUNK - 1) / TG_BWD_CHUNK;
	// tasks (chunk, column vector), 32-bit: rows < 2^31 / DB_NVEC * TG_BWD_CHUNK
	for (int task = blockIdx.x * TG_THREADS + threadIdx.x; task < (int)nchunks * DB_NVEC; task += gridDim.x * TG_THREADS) {
		const long long ch = task / DB_NVEC;
		const int c = task % DB_NVEC * DB_VEC;
		const long long r0 = ch * TG_BWD_CHUNK;
		const int nr = rows - r0 < TG_BWD_CHUNK ? (int)(rows - r0) : TG_BWD_CHUNK;
		float acc[DB_VEC];
#pragma unroll
		for (int k = 0; k < DB_VEC; k++)
			acc[k] = -0.0f;
#pragma unroll 8
		for (int rr = 0; rr < nr; rr++) {
			float g[DB_VEC];
			tg_load_vec<TG_IN_DTYPE, DB_VEC>(p.p[TG_PB_IN], (r0 + rr) * DB_COLS + c, g);
#pragma unroll
			for (int k = 0; k < DB_VEC; k++)
				acc[k] = tg__add_rn(acc[k], g[k]);
		}
		tg_store_keep<DB_VEC>((float *)p.p[TG_PB_DW], ch * DB_COLS + c, acc);
	}
}

} // namespace
