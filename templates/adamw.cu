// adamw.cu: the AdamW update of one weight (TG_MODE 0), or the optimizer's step count (TG_MODE 1).
// tegen-slots: TG_KERNEL TG_MODE TG_W_DTYPE TG_G_DTYPE TG_VEC TG_THREADS TG_BETA1 TG_BETA2 TG_EPS TG_WD TG_AMAX
//
// TG_MODE 0: every element of the weight [n[0]][n[1]] (flat, grid-stride, TG_VEC at a time):
//   step 0 (the state's TG_OPTIM_STEP == 0): master = the bound weight (FP32), m = v = 0;
//   then tg_adamw1 (tg_optim.h) with lr and the beta powers read from the state;
//   writes master, m, v and the weight rounded to TG_W_DTYPE (the caller's buffer keeps
//   the current value). Bit-exact with ref_adamw (ref/optim.c). The gradient is TG_G_DTYPE (FP32, BF16
//   or FP16: a wgrad in the weight's grad_dtype), read as floats.
// TG_AMAX 1 (a weight cast with current scaling): also the amax of the new weight as stored
//   (rounded to TG_W_DTYPE), atomically into p[TG_P_AMAX], so the cast's amax pass need not
//   read the weight again (the cast pass reads this amax).
// TG_MODE 1: one thread: step += 1, beta1^step *= beta1, beta2^step *= beta2. Runs after
//   every update of the phase, so all of them read the same step.
// Pointer slots: tg_optim.h (p[0] weight ... p[5] optimizer state). Launch: block (TG_THREADS,1,1), any grid.x >= 1.
#include "tg_formats.h"
#include "tg_recipe.h"
#include "tg_kernel.h"
#include "tg_rowvec.h"
#include "tg_optim.h"

#define AW_CAT2(a, b) a##b
#define AW_CAT(a, b) AW_CAT2(a, b)
namespace AW_CAT(aw_ns_, TG_KERNEL) {

constexpr int AW_VEC = TG_VEC;
static_assert(AW_VEC == 1 || AW_VEC == 2 || AW_VEC == 4, "TG_VEC: 1, 2 or 4");
static_assert(TG_W_DTYPE == 0 || AW_VEC >= 2, "a 16-bit weight moves at least 2 elements (4 bytes)");
static_assert(TG_THREADS % 32 == 0 && TG_THREADS <= 1024, "TG_THREADS must be a multiple of 32, <= 1024");

extern "C" __global__ void __launch_bounds__(TG_THREADS) TG_KERNEL(const TgParams p)
{
	float *st = (float *)p.p[TG_PA_STATE];
	const unsigned step = tg_f2u(st[TG_OPTIM_STEP]);
	if (TG_MODE == 1) {
		if (blockIdx.x == 0 && threadIdx.x == 0) {
			st[TG_OPTIM_STEP] = tg_u2f(step + 1u);
			st[TG_OPTIM_B1POW] = tg__mul_rn(st[TG_OPTIM_B1POW], TG_BETA1);
			st[TG_OPTIM_B2POW] = tg__mul_rn(st[TG_OPTIM_B2POW], TG_BETA2);
		}
		return;
	}
	const TgAdamwStep s = tg_adamw_step(st[TG_OPTIM_LR], st[TG_OPTIM_B1POW], st[TG_OPTIM_B2POW], TG_BETA1, TG_BETA2,
		TG_EPS, TG_WD);
	const long long n = p.n[0] * p.n[1];
	float amax = 0.0f;
	float *master = (float *)p.p[TG_PA_MASTER], *mom1 = (float *)p.p[TG_PA_M], *mom2 = (float *)p.p[TG_PA_V];
	for (long long i = ((long long)blockIdx.x * TG_THREADS + threadIdx.x) * AW_VEC; i < n;
		i += (long long)gridDim.x * TG_THREADS * AW_VEC) {
		float w[AW_VEC], g[AW_VEC], m[AW_VEC], v[AW_VEC];
		tg_load_vec<TG_G_DTYPE, AW_VEC>(p.p[TG_PA_GRAD], i, g);
		if (step == 0) {
			tg_load_vec<TG_W_DTYPE, AW_VEC>(p.p[TG_PA_W], i, w);
#pragma unroll
			for (int k = 0; k < AW_VEC; k++)
				m[k] = v[k] = 0.0f;
		} else {
			tg_load_vec<0, AW_VEC>(master, i, w);
			tg_load_vec<0, AW_VEC>(mom1, i, m);
			tg_load_vec<0, AW_VEC>(mom2, i, v);
		}
#pragma unroll
		for (int k = 0; k < AW_VEC; k++)
			w[k] = tg_adamw1(&s, w[k], g[k], &m[k], &v[k]);
		tg_store_hp<0, AW_VEC>(master, i, w);
		tg_store_hp<0, AW_VEC>(mom1, i, m);
		tg_store_hp<0, AW_VEC>(mom2, i, v);
		tg_store_hp<TG_W_DTYPE, AW_VEC>(p.p[TG_PA_W], i, w);
		if (TG_AMAX) {
			tg_round_vec<TG_W_DTYPE, AW_VEC>(w); // the weight as stored: what the amax pass would read
#pragma unroll
			for (int k = 0; k < AW_VEC; k++)
				amax = tg_absmax(amax, w[k]);
		}
	}
	if (TG_AMAX) {
		__shared__ float red[32];
		const float m = tg_cta_max<TG_THREADS>(amax, red);
		if (threadIdx.x == 0)
			tg_red_max((float *)p.p[TG_P_AMAX], m);
	}
}

} // namespace
