// norm_quantize.cu: RMSNorm / LayerNorm fused with quantization, one pass over memory.
// tegen-slots: TG_KERNEL TG_IN_DTYPE TG_W_DTYPE TG_B_DTYPE TG_OUT_DTYPE TG_FMT TG_RECIPE TG_ROWWISE TG_COLWISE TG_VEC TG_THREADS TG_ROWS_PER_CTA TG_COLS TG_NORM TG_EPS TG_ZERO_CENTERED TG_HAS_RESIDUAL TG_EPS_SCALE TG_POW2 TG_MARGIN TG_SR TG_SEED TG_DEQ
//
// Slots: TG_IN_DTYPE (0 fp32, 1 bf16, 2 fp16; also residual / residual_out),
// TG_W_DTYPE (gamma), TG_B_DTYPE (beta; gamma's when there is none: the two may
// differ), TG_OUT_DTYPE (recipe 0 output), TG_FMT (0 e4m3,
// 1 e5m2), TG_RECIPE (0 none, 1 delayed, 2 current cast pass, 3 current amax
// pass, 4 block1x128, 6 mxfp8, 7 NVFP4 cast pass: rowwise only, S_enc from the amax
// pass's global amax, tg_emit_row_nvfp4), TG_ROWWISE / TG_COLWISE (0/1), TG_VEC
// (elements per 16/8/4-byte input load; must divide TG_COLS), TG_THREADS,
// TG_ROWS_PER_CTA, TG_COLS, TG_NORM (0 rms, 1 layer), TG_EPS (float literal),
// TG_ZERO_CENTERED (gamma + 1), TG_HAS_RESIDUAL, TG_EPS_SCALE / TG_POW2
// (current and block scaling), TG_MARGIN (declared for the planner; unused: the
// delayed scale arrives computed), TG_SR / TG_SEED (NVFP4 stochastic rounding), TG_DEQ (MXFP8: bit 0 the
// rowwise copy also dequantized to BF16 at p[TG_P_MX_DEQ], bit 1 the columnwise one at p[TG_P_MX_DEQ_T]).
//
// Launch: block (TG_THREADS,1,1), grid.x = min(ceil(rows / TG_ROWS_PER_CTA), cap),
// any grid.x >= 1 is correct (grid-stride over row blocks). n[0] = rows.
//
// Two code paths:
//  - row path (TG_COLWISE 0, or recipe 3): TG_THREADS/TG_ROWS_PER_CTA threads
//    per row; a row lives in registers (strided 16-byte vectors), is reduced
//    by shuffles (+ shared memory across warps), normalized, quantized and
//    written. Block scales (1x128, mxfp8) reduce within groups of lanes.
//  - tile path (TG_COLWISE 1): a CTA owns TG_ROWS_PER_CTA rows (a multiple of
//    32): warp-per-row statistics first (writing residual_out, rsigma, mu),
//    then column chunks of TG_THREADS*TG_VEC/TG_ROWS_PER_CTA columns: the
//    values are re-read (L2), normalized, written rowwise from registers and
//    staged as FP32 in shared memory for the transposed (columnwise) copy.
//    The columnwise per-tensor copy is the same bytes as the rowwise transposed.
//    Use TG_THREADS 1024 (one CTA per SM) so the re-read stays in L2.
#include "tg_formats.h"
#include "tg_recipe.h"
#include "tg_kernel.h"
#include "tg_rowvec.h" // raw vectors, loads/stores, FP8 stores, reductions, per-tensor scale

// The row path is software-pipelined: the next row's input loads are issued
// before this row's reduction, and gamma/beta are loaded once per CTA and kept
// in registers. Measured on an H200, 16384x4096 bf16, 128 threads/row, capped
// grid: 83.5% -> 85.9% of copy against the plain loop it replaced.

#if TG_RECIPE != TG_RECIPE_NONE && TG_RECIPE != TG_RECIPE_DELAYED && TG_RECIPE != TG_RECIPE_CURRENT_CAST && TG_RECIPE != TG_RECIPE_CURRENT_AMAX && TG_RECIPE != TG_RECIPE_BLOCK1X128 && TG_RECIPE != TG_RECIPE_MXFP8 && TG_RECIPE != TG_RECIPE_NVFP4
#error "norm_quantize.cu: unsupported TG_RECIPE (supported: 0 none, 1 delayed, 2 current cast, 3 current amax, 4 block1x128, 6 mxfp8, 7 nvfp4 cast)"
#endif
#if TG_COLWISE && TG_RECIPE == TG_RECIPE_NVFP4
#error "norm_quantize.cu: an NVFP4 columnwise copy is not written here (the planner runs such an op unfused)"
#endif
#if TG_COLWISE && TG_RECIPE == TG_RECIPE_NONE
#error "norm_quantize.cu: a columnwise copy needs a quantized recipe (TG_RECIPE != TG_RECIPE_NONE)"
#endif
#if TG_COLWISE && TG_RECIPE == TG_RECIPE_BLOCK1X128
#error "norm_quantize.cu: columnwise block1x128 output is not implemented (use cast_transpose on the rowwise result)"
#endif
#if TG_DEQ && (TG_RECIPE != TG_RECIPE_MXFP8 || ((TG_DEQ & 1) && !TG_ROWWISE) || ((TG_DEQ & 2) && !TG_COLWISE) || TG_DEQ > 3)
#error "norm_quantize.cu: TG_DEQ dequantizes the MXFP8 copies the kernel writes (bit 0 rowwise, bit 1 columnwise)"
#endif
// Neither copy: the statistics alone (rsigma, mu, residual_out) for norm_colwise.cu's columnwise-only
// 1x128 or MXFP8 copy.
#if !TG_ROWWISE && !TG_COLWISE && TG_RECIPE != TG_RECIPE_CURRENT_AMAX && TG_RECIPE != TG_RECIPE_BLOCK1X128 && TG_RECIPE != TG_RECIPE_MXFP8
#error "norm_quantize.cu: neither TG_ROWWISE nor TG_COLWISE set"
#endif

// Everything lives in a namespace named after the kernel, so that several
// instances of this template (or other templates) can share one source file.
#define NQ_CAT2(a, b) a##b
#define NQ_CAT(a, b) NQ_CAT2(a, b)
namespace NQ_CAT(nq_ns_, TG_KERNEL) {

constexpr int nq_isz = TG_IN_DTYPE == TG_DTYPE_F32 ? 4 : 2;
constexpr int nq_wsz = TG_W_DTYPE == TG_DTYPE_F32 ? 4 : 2;
constexpr int nq_bsz = TG_B_DTYPE == TG_DTYPE_F32 ? 4 : 2;
// FP32 and FP16 outputs: statistics and the per-element math in double, rounded once
// at the end, as the reference computes them (float math showed through as 1-ulp
// differences on about half the elements of an FP32 output). BF16/FP8 outputs: float.
constexpr bool nq_dbl = TG_RECIPE == TG_RECIPE_NONE && TG_OUT_DTYPE != TG_DTYPE_BF16;
template <bool D> struct nq_acc_type { typedef float T; };
template <> struct nq_acc_type<true> { typedef double T; };
typedef nq_acc_type<nq_dbl>::T nq_acc;
constexpr int nq_osz = TG_RECIPE == TG_RECIPE_NONE ? (TG_OUT_DTYPE == TG_DTYPE_F32 ? 4 : 2) : 1;
constexpr int NQ_VEC = TG_VEC;
constexpr int NQ_COLS = TG_COLS;
constexpr int NQ_NVEC = NQ_COLS / NQ_VEC;
constexpr bool nq_tile = TG_COLWISE && TG_RECIPE != TG_RECIPE_CURRENT_AMAX;

static_assert(NQ_COLS % NQ_VEC == 0, "TG_VEC must divide TG_COLS");
static_assert(NQ_VEC * nq_isz <= 32 && NQ_VEC * nq_isz >= 4, "input vector must be 4..32 bytes");
static_assert(NQ_VEC * nq_wsz <= 32 && NQ_VEC * nq_wsz >= 4, "gamma vector must be 4..32 bytes");
static_assert(NQ_VEC * nq_bsz <= 32 && NQ_VEC * nq_bsz >= 4, "beta vector must be 4..32 bytes");
static_assert(NQ_VEC * nq_osz >= 2 && NQ_VEC * nq_osz <= 32, "output vector must be 2..32 bytes");
static_assert((NQ_VEC & (NQ_VEC - 1)) == 0 && NQ_VEC >= 2, "TG_VEC must be a power of two >= 2");
static_assert(TG_THREADS % 32 == 0 && TG_THREADS <= 1024, "TG_THREADS must be a multiple of 32, <= 1024");
static_assert(TG_THREADS % TG_ROWS_PER_CTA == 0, "TG_ROWS_PER_CTA must divide TG_THREADS");


// x = in (+ residual, rounded to the input dtype) for one vector at element e.
__device__ __forceinline__ void nq_input(const TgParams &p, long long e, float (&x)[NQ_VEC], bool write_res)
{
	tg_load_vec<TG_IN_DTYPE, NQ_VEC>(p.p[TG_P_IN], e, x);
	if (TG_HAS_RESIDUAL) {
		float r[NQ_VEC];
		tg_load_vec<TG_IN_DTYPE, NQ_VEC>(p.p[TG_P_RESIDUAL], e, r);
#pragma unroll
		for (int k = 0; k < NQ_VEC; k++)
			x[k] += r[k];
		tg_round_vec<TG_IN_DTYPE, NQ_VEC>(x);
		if (write_res && p.p[TG_P_RESIDUAL_OUT]) // residual_out is optional
			tg_store_hp<TG_IN_DTYPE, NQ_VEC>(p.p[TG_P_RESIDUAL_OUT], e, x);
	}
}

// The rowwise store (tg_rowvec.h) with this kernel's slots.
template <int G>
__device__ __forceinline__ void nq_emit_row(const TgParams &p, long long rows, long long r, int c,
                                            const float (&y)[NQ_VEC], bool valid, float s)
{
	tg_emit_row<TG_FMT, TG_RECIPE, TG_OUT_DTYPE, G, NQ_VEC, NQ_COLS, TG_SR, TG_DEQ>(p, rows, r, c, y, valid, s, TG_EPS_SCALE, TG_POW2,
		TG_SEED);
}

// Lanes per scale block for the rowwise output.
constexpr int nq_group = TG_RECIPE == TG_RECIPE_BLOCK1X128 ? 128 / NQ_VEC : TG_RECIPE == TG_RECIPE_MXFP8 ? 32 / NQ_VEC : TG_RECIPE == TG_RECIPE_NVFP4 ? 16 / NQ_VEC : 1;
static_assert(nq_group >= 1 && nq_group <= 32, "block scaling: TG_VEC too small for one block per <= 32 lanes");

#if !(TG_COLWISE && TG_RECIPE != TG_RECIPE_CURRENT_AMAX)
/* ---------------- row path ---------------- */
constexpr int NQ_TPR = TG_THREADS / TG_ROWS_PER_CTA;     // threads per row
constexpr int NQ_NJ = (NQ_NVEC + NQ_TPR - 1) / NQ_TPR;   // vectors per thread
constexpr int NQ_WPR = NQ_TPR >= 32 ? NQ_TPR / 32 : 1;   // warps per row
// Registers a thread has (the launch bound's share of the 64K file, at most 255) against what the
// row path holds: the row as float, the next row's input (and residual) raw, gamma (and beta) raw,
// and the rest (nq_reg_spare). Gamma and beta stay in registers across rows where all of it fits, else
// they are loaded again for each row (L1 hits); the next row's loads go out early where the row and
// they fit, else at the top of its iteration. This keeps long LayerNorm, FP32 and residual rows out of
// local memory (a 16384-column LayerNorm with a residual spilled 200-580 bytes a thread).
constexpr int nq_reg_cap = TG_THREADS > 512 ? 64 : TG_THREADS > 256 ? 128 : 255;
// sm_100a's code needs more besides the arrays than sm_90a's: a 16384-column BF16 LayerNorm with a
// residual at t256 (240 estimated with 48) spilled 232 bytes there and none on sm_90a, where reloading
// gamma/beta cost 3% (H100, fifteenth session)
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 1000
constexpr int nq_reg_spare = 64;
#else
constexpr int nq_reg_spare = 48;
#endif
constexpr int nq_held = NQ_NJ * NQ_VEC;                 // elements a thread holds
constexpr int nq_row_regs = nq_held + nq_held * nq_isz * (TG_HAS_RESIDUAL ? 2 : 1) / 4;
constexpr int nq_w_regs = nq_held * (nq_wsz + (TG_NORM == 1 ? nq_bsz : 0)) / 4;
constexpr bool nq_keep_w = nq_row_regs + nq_w_regs + nq_reg_spare <= nq_reg_cap;
constexpr bool nq_prefetch = nq_row_regs + nq_reg_spare <= nq_reg_cap;
static_assert(nq_tile || (NQ_TPR & (NQ_TPR - 1)) == 0, "threads per row must be a power of two");
static_assert(nq_tile || NQ_TPR % nq_group == 0, "threads per row must be a multiple of the lanes per scale block");

// Sum over the NQ_TPR threads of a row; every thread of the row gets the same value.
__device__ __forceinline__ nq_acc nq_row_sum(nq_acc v, nq_acc (*red)[NQ_WPR])
{
	if (NQ_TPR <= 32)
		return tg_group_sum<(NQ_TPR <= 32 ? NQ_TPR : 32)>(v);
	v = tg_group_sum<32>(v);
	int slot = threadIdx.x / NQ_TPR, w = (threadIdx.x % NQ_TPR) >> 5;
	if ((threadIdx.x & 31) == 0)
		red[slot][w] = v;
	__syncthreads();
	nq_acc s = 0.0f;
#pragma unroll
	for (int i = 0; i < NQ_WPR; i++)
		s += red[slot][i];
	__syncthreads();
	return s;
}

// The row path, software-pipelined (a persistent CTA walks rows). Each thread holds its
// row's next input vectors raw (unconverted) in registers: they are issued right
// after the current row is converted, so they are in flight during the current
// row's reductions (shuffles, barriers), normalization and stores. Gamma/beta
// for the thread's columns never change across rows: loaded once, kept raw.
__device__ __forceinline__ void nq_row_load(const TgParams &p, long long r, bool rv, int t,
                                            tg_rvec<TG_IN_DTYPE, NQ_VEC> (&xr)[NQ_NJ],
                                            tg_rvec<TG_IN_DTYPE, NQ_VEC> (&rr)[TG_HAS_RESIDUAL ? NQ_NJ : 1])
{
#pragma unroll
	for (int j = 0; j < NQ_NJ; j++) {
		int v = j * NQ_TPR + t;
		if (rv && (NQ_NVEC % NQ_TPR == 0 || v < NQ_NVEC)) {
			tg_load_raw<TG_IN_DTYPE, NQ_VEC>(p.p[TG_P_IN], r * NQ_COLS + (long long)v * NQ_VEC, xr[j]);
			if (TG_HAS_RESIDUAL)
				tg_load_raw<TG_IN_DTYPE, NQ_VEC>(p.p[TG_P_RESIDUAL], r * NQ_COLS + (long long)v * NQ_VEC,
				                                 rr[TG_HAS_RESIDUAL ? j : 0]);
		} else {
			tg_zero_raw<TG_IN_DTYPE, NQ_VEC>(xr[j]);
			if (TG_HAS_RESIDUAL)
				tg_zero_raw<TG_IN_DTYPE, NQ_VEC>(rr[TG_HAS_RESIDUAL ? j : 0]);
		}
	}
}

__device__ __forceinline__ void nq_row_path_pf(const TgParams &p)
{
	__shared__ nq_acc red[TG_ROWS_PER_CTA][NQ_WPR];
	__shared__ float ared[32];
	const long long rows = p.n[0];
	const int slot = threadIdx.x / NQ_TPR, t = threadIdx.x % NQ_TPR;
	float s = 1.0f;
	if (TG_RECIPE == TG_RECIPE_DELAYED || TG_RECIPE == TG_RECIPE_CURRENT_CAST || TG_RECIPE == TG_RECIPE_NVFP4)
		s = tg_tensor_scale<TG_RECIPE, TG_FMT, TG_POW2>(p, TG_EPS_SCALE);
	float amax = 0.0f;
	const long long stride = (long long)gridDim.x * TG_ROWS_PER_CTA;
	long long rb = (long long)blockIdx.x * TG_ROWS_PER_CTA;
	tg_rvec<TG_IN_DTYPE, NQ_VEC> xr[NQ_NJ], rr[TG_HAS_RESIDUAL ? NQ_NJ : 1];
	if (nq_prefetch)
		nq_row_load(p, rb + slot, rb + slot < rows, t, xr, rr);
	tg_rvec<TG_W_DTYPE, NQ_VEC> gr[nq_keep_w ? NQ_NJ : 1];
	tg_rvec<TG_B_DTYPE, NQ_VEC> br[nq_keep_w && TG_NORM == 1 ? NQ_NJ : 1];
#pragma unroll
	for (int j = 0; j < NQ_NJ && nq_keep_w; j++) {
		int v = j * NQ_TPR + t;
		int c = (NQ_NVEC % NQ_TPR == 0 || v < NQ_NVEC) ? v * NQ_VEC : 0;
		tg_load_raw<TG_W_DTYPE, NQ_VEC>(p.p[TG_P_GAMMA], c, gr[nq_keep_w ? j : 0]);
		if (TG_NORM == 1)
			tg_load_raw<TG_B_DTYPE, NQ_VEC>(p.p[TG_P_BETA], c, br[nq_keep_w && TG_NORM == 1 ? j : 0]);
	}
	for (; rb < rows; rb += stride) {
		const long long r = rb + slot;
		const bool rv = r < rows;
		if (!nq_prefetch)
			nq_row_load(p, r, rv, t, xr, rr);
		float x[NQ_NJ][NQ_VEC];
#pragma unroll
		for (int j = 0; j < NQ_NJ; j++) {
			tg_cvt_raw<TG_IN_DTYPE, NQ_VEC>(xr[j], x[j]);
			if (TG_HAS_RESIDUAL) {
				int v = j * NQ_TPR + t;
				float q[NQ_VEC];
				tg_cvt_raw<TG_IN_DTYPE, NQ_VEC>(rr[TG_HAS_RESIDUAL ? j : 0], q);
#pragma unroll
				for (int k = 0; k < NQ_VEC; k++)
					x[j][k] += q[k];
				tg_round_vec<TG_IN_DTYPE, NQ_VEC>(x[j]);
				if (rv && (NQ_NVEC % NQ_TPR == 0 || v < NQ_NVEC) && p.p[TG_P_RESIDUAL_OUT])
					tg_store_hp<TG_IN_DTYPE, NQ_VEC>(p.p[TG_P_RESIDUAL_OUT], r * NQ_COLS + (long long)v * NQ_VEC, x[j]);
			}
		}
		// next row's loads: in flight during this row's reductions and stores
		if (nq_prefetch)
			nq_row_load(p, r + stride, r + stride < rows, t, xr, rr);
		nq_acc mu = 0.0f;
		if (TG_NORM == 1) {
			nq_acc sum = 0.0f;
#pragma unroll
			for (int j = 0; j < NQ_NJ; j++)
#pragma unroll
				for (int k = 0; k < NQ_VEC; k++)
					sum += (nq_acc)x[j][k];
			if (nq_dbl)
				mu = nq_row_sum(sum, red) / (double)NQ_COLS;
			else
				mu = tg_div_rn((float)nq_row_sum(sum, red), (float)NQ_COLS);
		}
		nq_acc sq = 0.0f;
#pragma unroll
		for (int j = 0; j < NQ_NJ; j++) {
			int v = j * NQ_TPR + t;
			bool ok = NQ_NVEC % NQ_TPR == 0 || v < NQ_NVEC;
#pragma unroll
			for (int k = 0; k < NQ_VEC; k++) {
				nq_acc d = ok ? (nq_acc)x[j][k] - mu : (nq_acc)0.0f;
				sq += d * d;
			}
		}
		nq_acc rs;
		if (nq_dbl) {
			rs = 1.0 / sqrt(nq_row_sum(sq, red) / (double)NQ_COLS + (double)TG_EPS);
		} else {
			float var = tg_div_rn((float)nq_row_sum(sq, red), (float)NQ_COLS);
			rs = tg_div_rn(1.0f, sqrtf(var + TG_EPS));
		}
		if (rv && t == 0) { // the amax pass too, where bound: NVFP4's cast pass (nvfp4_quantize.cu) reads them
			if (p.p[TG_P_RSIGMA])
				((float *)p.p[TG_P_RSIGMA])[r] = (float)rs;
			if (TG_NORM == 1 && p.p[TG_P_MU])
				((float *)p.p[TG_P_MU])[r] = (float)mu;
		}
#pragma unroll
		for (int j = 0; j < NQ_NJ; j++) {
			int v = j * NQ_TPR + t;
			bool ok = NQ_NVEC % NQ_TPR == 0 || v < NQ_NVEC;
			float g[NQ_VEC], b[NQ_VEC], y[NQ_VEC];
			if (nq_keep_w) {
				tg_cvt_raw<TG_W_DTYPE, NQ_VEC>(gr[nq_keep_w ? j : 0], g);
				if (TG_NORM == 1)
					tg_cvt_raw<TG_B_DTYPE, NQ_VEC>(br[nq_keep_w && TG_NORM == 1 ? j : 0], b);
			} else {
				const int c = ok ? v * NQ_VEC : 0;
				tg_load_vec<TG_W_DTYPE, NQ_VEC>(p.p[TG_P_GAMMA], c, g);
				if (TG_NORM == 1)
					tg_load_vec<TG_B_DTYPE, NQ_VEC>(p.p[TG_P_BETA], c, b);
			}
#pragma unroll
			for (int k = 0; k < NQ_VEC; k++) {
				if (nq_dbl) { // ((x - mu) * rs) * g (+ b) in double, never fused, one rounding
					double gd = (double)g[k] + (TG_ZERO_CENTERED ? 1.0 : 0.0);
					double xd = TG_NORM == 1 ? __dsub_rn((double)x[j][k], (double)mu) : (double)x[j][k];
					double yd = __dmul_rn(__dmul_rn(xd, (double)rs), gd);
					y[k] = (float)(TG_NORM == 1 ? __dadd_rn(yd, (double)b[k]) : yd);
				} else {
					if (TG_ZERO_CENTERED)
						g[k] += 1.0f;
					const float muf = (float)mu, rsf = (float)rs;
					y[k] = tg_norm_value<TG_NORM == 1>(x[j][k], muf, rsf, g[k], b[k]);
				}
				if (rv && ok)
					amax = tg_absmax(amax, y[k]);
			}
			if (TG_RECIPE != TG_RECIPE_CURRENT_AMAX && TG_ROWWISE)
				nq_emit_row<nq_group>(p, rows, r, v * NQ_VEC, y, rv && ok, s);
		}
	}
	if (TG_RECIPE == TG_RECIPE_DELAYED || TG_RECIPE == TG_RECIPE_CURRENT_AMAX) {
		float m = tg_cta_max<TG_THREADS>(amax, ared);
		if (threadIdx.x == 0)
			tg_red_max((float *)p.p[TG_P_AMAX], m);
	}
}

#else
/* ---------------- tile path (columnwise) ---------------- */
// rows per tile: TG_ROWS_PER_CTA when a multiple of 32, else 32 (still correct for any grid)
constexpr int NQ_R = TG_ROWS_PER_CTA % 32 == 0 ? TG_ROWS_PER_CTA : 32;
constexpr int NQ_VPR = TG_THREADS / NQ_R;          // vectors per row of a column chunk
constexpr int NQ_CW = NQ_VPR * NQ_VEC;             // columns per chunk
constexpr int NQ_SEG = TG_RECIPE == TG_RECIPE_MXFP8 ? 32 : 16;   // rows per columnwise store / scale block
constexpr int NQ_NW = TG_THREADS / 32;
static_assert(!nq_tile || NQ_VEC % 4 == 0, "columnwise: TG_VEC must be a multiple of 4");
static_assert(!nq_tile || NQ_VPR % nq_group == 0, "columnwise: chunk row must hold whole scale blocks");
constexpr int NQ_PITCH = NQ_CW + 4;                 // floats per staged row (16-byte aligned, few conflicts)
struct alignas(16) nq_f4 { float a[4]; };

__device__ __forceinline__ void nq_tile_path(const TgParams &p)
{
	__shared__ alignas(16) float ys[NQ_R][NQ_PITCH];
	__shared__ float smu[NQ_R], srs[NQ_R];
	__shared__ float ared[32];
	const long long rows = p.n[0];
	const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
	float s = 1.0f;
	if (TG_RECIPE == TG_RECIPE_DELAYED || TG_RECIPE == TG_RECIPE_CURRENT_CAST)
		s = tg_tensor_scale<TG_RECIPE, TG_FMT, TG_POW2>(p, TG_EPS_SCALE);
	float amax = 0.0f;
	for (long long r0 = (long long)blockIdx.x * NQ_R; r0 < rows; r0 += (long long)gridDim.x * NQ_R) {
		// Phase 1: statistics, warp per row; residual_out, rsigma, mu written here.
		for (int rr = warp; rr < NQ_R; rr += NQ_NW) {
			long long r = r0 + rr;
			if (r >= rows) {
				if (lane == 0) {
					smu[rr] = 0.0f;
					srs[rr] = 0.0f;
				}
				continue;
			}
			float sum = 0.0f;
			if (TG_NORM == 1) {
#pragma unroll 4
				for (int v = lane; v < NQ_NVEC; v += 32) {
					float x[NQ_VEC];
					nq_input(p, r * NQ_COLS + (long long)v * NQ_VEC, x, false);
#pragma unroll
					for (int k = 0; k < NQ_VEC; k++)
						sum += x[k];
				}
				sum = tg_group_sum<32>(sum);
			}
			float mu = tg_div_rn(sum, (float)NQ_COLS);
			float sq = 0.0f;
#pragma unroll 4
			for (int v = lane; v < NQ_NVEC; v += 32) {
				float x[NQ_VEC];
				nq_input(p, r * NQ_COLS + (long long)v * NQ_VEC, x, true);
#pragma unroll
				for (int k = 0; k < NQ_VEC; k++) {
					float d = x[k] - mu;
					sq += d * d;
				}
			}
			sq = tg_group_sum<32>(sq);
			float rs = tg_div_rn(1.0f, sqrtf(tg_div_rn(sq, (float)NQ_COLS) + TG_EPS));
			if (lane == 0) {
				smu[rr] = mu;
				srs[rr] = rs;
				if (p.p[TG_P_RSIGMA])
					((float *)p.p[TG_P_RSIGMA])[r] = rs;
				if (TG_NORM == 1 && p.p[TG_P_MU])
					((float *)p.p[TG_P_MU])[r] = mu;
			}
		}
		__syncthreads(); // stats and residual_out visible to the CTA
		const int tr = threadIdx.x / NQ_VPR, tv = threadIdx.x % NQ_VPR;
		const long long r = r0 + tr;
		const bool rv = r < rows;
		const float mu = smu[tr], rs = srs[tr];
		for (int c0 = 0; c0 < NQ_COLS; c0 += NQ_CW) {
			const int c = c0 + tv * NQ_VEC;
			const bool ok = rv && (NQ_COLS % NQ_CW == 0 || c < NQ_COLS);
			float x[NQ_VEC], g[NQ_VEC], b[NQ_VEC], y[NQ_VEC];
			if (ok) { // the residual sum: re-read from residual_out, or recomputed when there is none
				if (TG_HAS_RESIDUAL && p.p[TG_P_RESIDUAL_OUT])
					tg_load_vec<TG_IN_DTYPE, NQ_VEC>(p.p[TG_P_RESIDUAL_OUT], r * NQ_COLS + c, x);
				else
					nq_input(p, r * NQ_COLS + c, x, false);
			}
			tg_norm_weights<TG_W_DTYPE, TG_B_DTYPE, NQ_VEC, TG_ZERO_CENTERED, TG_NORM == 1>(
				p, (NQ_COLS % NQ_CW == 0 || c < NQ_COLS) ? c : 0, g, b);
#pragma unroll
			for (int k = 0; k < NQ_VEC; k++) {
				y[k] = tg_norm_value<TG_NORM == 1>(x[k], mu, rs, g[k], b[k]);
				if (!ok)
					y[k] = 0.0f;
				amax = tg_absmax(amax, y[k]);
			}
#pragma unroll
			for (int k = 0; k < NQ_VEC; k += 4) {
				nq_f4 q;
#pragma unroll
				for (int i = 0; i < 4; i++)
					q.a[i] = y[k + i];
				*reinterpret_cast<nq_f4 *>(&ys[tr][tv * NQ_VEC + k]) = q;
			}
			if (TG_ROWWISE)
				nq_emit_row<nq_group>(p, rows, r, c, y, ok, s);
			tg_colwise_store<TG_FMT, TG_RECIPE, TG_THREADS, NQ_COLS, NQ_R, NQ_CW, NQ_PITCH, NQ_SEG, TG_DEQ>(p, ys, r0, c0, rows,
				s);
		}
	}
	if (TG_RECIPE == TG_RECIPE_DELAYED) {
		float m = tg_cta_max<TG_THREADS>(amax, ared);
		if (threadIdx.x == 0)
			tg_red_max((float *)p.p[TG_P_AMAX], m);
	}
}

#endif

extern "C" __global__ void __launch_bounds__(TG_THREADS) TG_KERNEL(const TgParams p)
{
#if TG_COLWISE && TG_RECIPE != TG_RECIPE_CURRENT_AMAX
	nq_tile_path(p);
#else
	nq_row_path_pf(p);
#endif
}

} // namespace
