// dglu.cu: backward of the gated linear units (SwiGLU family), fused with the amax and the
// rowwise quantized copy of the gradient.
// tegen-slots: TG_KERNEL TG_IN_DTYPE TG_G_DTYPE TG_OUT_DTYPE TG_FMT TG_RECIPE TG_VEC TG_THREADS TG_ROWS_PER_CTA TG_COLS TG_ACT TG_ALPHA TG_LIMIT TG_EPS_SCALE TG_POW2
//
// in = h [rows][2*TG_COLS] (the forward's saved pre-activation, gate half a first, linear
// half b second, dtype TG_IN_DTYPE), grad = d_act [rows][TG_COLS] (TG_G_DTYPE) ->
// out = d_h [rows][2*TG_COLS]: d_a in the first half, d_b in the second, each element
// tg_dglu1 (tg_backward.h) of (a, b, g): bit-exact with ref_dglu. TG_ACT as glu_amax.cu
// (0 swiglu, 1 geglu, 2 reglu, 3 qgeglu, 4 sreglu, 5 clamped_swiglu with TG_ALPHA, TG_LIMIT).
// Recipes (of the d_h copy, through tg_emit_row): 0 high precision (TG_OUT_DTYPE), 1 delayed
// (FP8 with SCALE, AMAX updated), 2 current cast pass, 3 current amax pass (AMAX only),
// 4 block 1x128 (TG_COLS % 128 == 0), 6 MXFP8 (TG_COLS % 32 == 0); scale layouts as
// tg_kernel.h for a [rows][2*TG_COLS] tensor. The columnwise copy (wgrad) is not fused yet:
// run cast_transpose on the rowwise output.
// Pointer slots (tg_backward.h): TG_PB_IN h, TG_PB_GRAD d_act, TG_PB_OUT d_h, TG_PB_SCALE,
// TG_PB_SCALE_INV, TG_PB_AMAX.
//
// Launch: block (TG_THREADS,1,1), grid.x = min(ceil(rows / TG_ROWS_PER_CTA), cap); any
// grid.x >= 1 is correct (grid-stride over row blocks). n[0] = rows.
// Layout: TG_THREADS/TG_ROWS_PER_CTA threads per row, each loading all its a, b and g
// vectors of the row before the math (many loads in flight).
#include "tg_formats.h"
#include "tg_recipe.h"
#include "tg_kernel.h"
#include "tg_rowvec.h"
#include "tg_backward.h"

#if TG_RECIPE != 0 && TG_RECIPE != 1 && TG_RECIPE != 2 && TG_RECIPE != 3 && TG_RECIPE != 4 && TG_RECIPE != 6
#error "dglu.cu: unsupported TG_RECIPE (supported: 0 none, 1 delayed, 2 current cast, 3 current amax, 4 block1x128, 6 mxfp8)"
#endif
#if TG_ACT < 0 || TG_ACT > 5
#error "dglu.cu: unknown TG_ACT"
#endif

#define DG_CAT2(a, b) a##b
#define DG_CAT(a, b) DG_CAT2(a, b)
namespace DG_CAT(dg_ns_, TG_KERNEL) {

constexpr int DG_VEC = TG_VEC;
constexpr int DG_COLS = TG_COLS;
constexpr int DG_NVEC = DG_COLS / DG_VEC;
constexpr int dg_isz = TG_IN_DTYPE == 0 ? 4 : 2;
constexpr int dg_gsz = TG_G_DTYPE == 0 ? 4 : 2;
constexpr int dg_osz = TG_RECIPE == 0 ? (TG_OUT_DTYPE == 0 ? 4 : 2) : 1;
constexpr int DG_TPR = TG_THREADS / TG_ROWS_PER_CTA;
constexpr int DG_NJ = (DG_NVEC + DG_TPR - 1) / DG_TPR;
// lanes per scale block of the rowwise copy
constexpr int dg_group = TG_RECIPE == 4 ? 128 / DG_VEC : TG_RECIPE == 6 ? 32 / DG_VEC : 1;

static_assert(DG_COLS % DG_VEC == 0, "TG_VEC must divide TG_COLS");
static_assert((DG_VEC & (DG_VEC - 1)) == 0 && DG_VEC >= 2, "TG_VEC must be a power of two >= 2");
static_assert(DG_VEC * dg_isz >= 4 && DG_VEC * dg_isz <= 32, "h vector must be 4..32 bytes");
static_assert(DG_VEC * dg_gsz >= 4 && DG_VEC * dg_gsz <= 32, "d_act vector must be 4..32 bytes");
static_assert(DG_VEC * dg_osz >= 2 && DG_VEC * dg_osz <= 32, "output vector must be 2..32 bytes");
static_assert(TG_THREADS % 32 == 0 && TG_THREADS <= 1024, "TG_THREADS must be a multiple of 32, <= 1024");
static_assert(TG_THREADS % TG_ROWS_PER_CTA == 0, "TG_ROWS_PER_CTA must divide TG_THREADS");
static_assert(DG_TPR % 32 == 0 || 32 % DG_TPR == 0, "threads per row: a multiple of 32 or a divisor of 32");
static_assert(dg_group >= 1 && dg_group <= 32 && DG_TPR % dg_group == 0,
              "block scaling: threads per row must hold whole scale blocks of <= 32 lanes");
static_assert(TG_RECIPE != 4 || DG_COLS % 128 == 0, "block1x128: TG_COLS must be a multiple of 128");
static_assert(TG_RECIPE != 6 || DG_COLS % 32 == 0, "mxfp8: TG_COLS must be a multiple of 32");

__device__ __forceinline__ void dg_row_path(const TgParams &p)
{
	__shared__ float ared[32];
	const long long rows = p.n[0];
	const int slot = threadIdx.x / DG_TPR, t = threadIdx.x % DG_TPR;
	float s = 1.0f;
	if (TG_RECIPE == 1 || TG_RECIPE == 2)
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
			if (rv && (DG_NVEC % DG_TPR == 0 || v < DG_NVEC)) {
				tg_load_raw<TG_IN_DTYPE, DG_VEC>(p.p[TG_PB_IN], r * (2 * DG_COLS) + (long long)v * DG_VEC, ra[j]);
				tg_load_raw<TG_IN_DTYPE, DG_VEC>(p.p[TG_PB_IN], r * (2 * DG_COLS) + DG_COLS + (long long)v * DG_VEC, rb_[j]);
				tg_load_raw<TG_G_DTYPE, DG_VEC>(p.p[TG_PB_GRAD], r * DG_COLS + (long long)v * DG_VEC, rg[j]);
			} else {
				tg_zero_raw<TG_IN_DTYPE, DG_VEC>(ra[j]);
				tg_zero_raw<TG_IN_DTYPE, DG_VEC>(rb_[j]);
				tg_zero_raw<TG_G_DTYPE, DG_VEC>(rg[j]);
			}
		}
#pragma unroll
		for (int j = 0; j < DG_NJ; j++) {
			const int v = j * DG_TPR + t;
			const bool ok = rv && (DG_NVEC % DG_TPR == 0 || v < DG_NVEC);
			float a[DG_VEC], b[DG_VEC], g[DG_VEC], da[DG_VEC], db[DG_VEC];
			tg_cvt_raw<TG_IN_DTYPE, DG_VEC>(ra[j], a);
			tg_cvt_raw<TG_IN_DTYPE, DG_VEC>(rb_[j], b);
			tg_cvt_raw<TG_G_DTYPE, DG_VEC>(rg[j], g);
#pragma unroll
			for (int k = 0; k < DG_VEC; k++) {
				tg_dglu1(TG_ACT, a[k], b[k], g[k], (float)(TG_LIMIT), (float)(TG_ALPHA), &da[k], &db[k]);
				if (ok)
					amax = tg_absmax(tg_absmax(amax, da[k]), db[k]);
			}
			if (TG_RECIPE != 3) {
				tg_emit_row<TG_FMT, TG_RECIPE, TG_OUT_DTYPE, dg_group, DG_VEC, 2 * DG_COLS>(
					p, rows, r, v * DG_VEC, da, ok, s, TG_EPS_SCALE, TG_POW2);
				tg_emit_row<TG_FMT, TG_RECIPE, TG_OUT_DTYPE, dg_group, DG_VEC, 2 * DG_COLS>(
					p, rows, r, DG_COLS + v * DG_VEC, db, ok, s, TG_EPS_SCALE, TG_POW2);
			}
		}
	}
	if (TG_RECIPE == 1 || TG_RECIPE == 3) {
		float m = tg_cta_max<TG_THREADS>(amax, ared);
		if (threadIdx.x == 0)
			tg_red_max((float *)p.p[TG_PB_AMAX], m);
	}
}

extern "C" __global__ void __launch_bounds__(TG_THREADS) TG_KERNEL(const TgParams p)
{
	dg_row_path(p);
}

} // namespace
