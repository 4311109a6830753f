/* tg_backward.h: per-element math of the backward element-wise ops (dglu,
 * dnorm, dbias), bit-exact on the host and the GPU.
 *
 * Same dual host/device rules as tg_formats.h. Every formula here is the
 * definition (the numerics contract of the backward ops): FP32 values, each
 * add, multiply and divide rounded to nearest even, in the order written,
 * never contracted into an FMA unless written as one (tg__add_rn /
 * tg__mul_rn / tg_div_rn / tg_bwd_fma, the device intrinsics on the GPU; the
 * host builds with -std=c11, so no contraction there, and C's fmaf is
 * correctly rounded like the GPU's fma.rn). The exponential is computed here
 * from those operations too (tg_bwd_exp), so no libm approximation or
 * libdevice result enters; the
 * kernels (dglu.cu, dnorm.cu, dbias.cu, dreduce.cu) and the CPU reference
 * (ref/backward.c) therefore give the same bits for every element. NaN
 * payloads are not part of the contract (any NaN equals any NaN).
 *
 * The reductions are defined by their order, so that every tile variant can
 * reproduce them:
 *  - a row reduction (dnorm's two sums over the columns of a row) is the
 *    pairwise tree over the element index: leaves 0..n-1 padded with -0 up
 *    to any power of two (adding -0 changes nothing, so the padding length
 *    does not matter), each level adding neighbours (2i, 2i+1). A kernel
 *    reproduces it with aligned power-of-two pieces: a vector's elements,
 *    then lanes by xor butterfly, then vectors by a pairwise tree.
 *  - a reduction over rows (d_gamma, d_beta, dbias) is two-stage: rows are
 *    cut into chunks of TG_BWD_CHUNK rows (the last one shorter); a chunk's
 *    partial is the sequential sum over its rows in row order, from -0;
 *    the chunk partials are summed in groups of TG_BWD_GROUP consecutive
 *    chunks (each group sequentially in chunk order, from -0), and the result
 *    is the sequential sum of the group sums in group order, from -0 (up to
 *    TG_BWD_GROUP chunks, i.e. 2048 rows, the same bits as one sequential sum
 *    over the chunks). A kernel writes one partial row per chunk into a workspace
 *    [ceil(rows/TG_BWD_CHUNK)][cols]; dreduce.cu sums them, its warps taking a
 *    group each.
 */
#ifndef TG_BACKWARD_H
#define TG_BACKWARD_H

#include "tg_codes.h" /* TG_ACT_* (the GLU kinds), shared with glu_amax.cu, ref.h and gen.h */
#include "tg_formats.h"
#include "tg_recipe.h"

/* Rows per chunk of the two-stage reductions over rows. Part of the definition:
 * changing it changes d_gamma, d_beta and dbias bits. */
#define TG_BWD_CHUNK 32
/* Chunk partials per group of the second stage (part of the definition, as TG_BWD_CHUNK). */
#define TG_BWD_GROUP 64

/* Pointer slots of the backward templates (TgParams.p; tg_kernel.h's slots
 * where the meaning is the same, inputs 0..4, outputs 5..10; 11..12 are
 * inputs here, 13..14 the chunk-partial workspaces). */
#define TG_PB_IN         0   /* saved input: dnorm x (or the residual sum), dglu h [rows][2C], dbias the gradient */
#define TG_PB_GAMMA      1   /* dnorm: gamma [cols] */
#define TG_PB_GRAD       2   /* incoming gradient: dnorm d_out, dglu d_act [rows][C] */
#define TG_PB_DRES       3   /* dnorm: gradient added to d_in (the residual stream's), may be absent */
#define TG_PB_OUT        5   /* d_in / d_h rowwise [rows][cols]; dreduce: the result [cols] */
#define TG_PB_OUT_T      6   /* columnwise copy [cols][rows] */
#define TG_PB_SCALE      7   /* per-tensor scale (read) */
#define TG_PB_SCALE_INV  8   /* scale_inv of the rowwise copy (written; layouts as tg_kernel.h) */
#define TG_PB_SCALE_INV_T 9  /* scale_inv of the columnwise copy (MXFP8) */
#define TG_PB_AMAX      10   /* per-tensor amax of the output (atomic max) */
#define TG_PB_RSIGMA    11   /* dnorm: rsigma [rows] (read) */
#define TG_PB_MU        12   /* dnorm (LayerNorm): mu [rows] (read) */
#define TG_PB_DW        13   /* d_gamma / dbias chunk partials [nchunks][cols] (written; dreduce: read) */
#define TG_PB_DB        14   /* d_beta chunk partials [nchunks][cols] (written) */

/* a*b + c with one rounding (fma.rn on the GPU, C99 fmaf on the host: both exact-then-rounded). */
TG_HD float tg_bwd_fma(float a, float b, float c)
{
#ifdef __CUDA_ARCH__
	return __fmaf_rn(a, b, c);
#else
	return fmaf(a, b, c);
#endif
}

/* |x| by clearing the sign bit. */
TG_HD float tg_bwd_abs(float x) { return tg_u2f(tg_f2u(x) & 0x7FFFFFFFu); }

/* 2^k for k in [-126, 127], exact. */
TG_HD float tg_bwd_pow2(int k) { return tg_u2f((uint32_t)(k + 127) << 23); }

/* tg_bwd_exp's reduction and polynomial: e^x = p * 2^n (x in [-104, 89]). */
TG_HD float tg_bwd_exp_poly(float x, int *n)
{
	float big = tg_bwd_fma(x, 1.44269502163f, 12582912.0f);
	*n = (int)(tg_f2u(big) - 0x4B400000u);
	float k = tg__sub_rn(big, 12582912.0f);
	float r = tg_bwd_fma(-k, 1.428606765330187e-06f, tg_bwd_fma(-k, 0.693145751953125f, x));
	float p = 1.98412698e-04f;                         /* 1/5040 */
	p = tg_bwd_fma(p, r, 1.38888889e-03f);             /* 1/720 */
	p = tg_bwd_fma(p, r, 8.33333377e-03f);             /* 1/120 */
	p = tg_bwd_fma(p, r, 4.16666679e-02f);             /* 1/24 */
	p = tg_bwd_fma(p, r, 1.66666672e-01f);             /* 1/6 */
	p = tg_bwd_fma(p, r, 0.5f);
	p = tg_bwd_fma(p, r, 1.0f);
	return tg_bwd_fma(p, r, 1.0f);
}

/* e^x in FP32 (max error about 1 ulp; tests/unit/test_backward.c measures it):
 * n = RNE(x * log2(e)) by the 1.5*2^23 add (integer read from the bits);
 * r = (x - n*ln2_hi) - n*ln2_lo (ln2_hi has 15 significant bits, so n*ln2_hi
 * is exact); e^r by the degree-7 Taylor polynomial in Horner form with one
 * FMA a step (truncation below 0.1 ulp for |r| <= ln2/2); times 2^n where
 * that is normal (exact), else times 2^(n/2) (exact, stays normal), then
 * times 2^(n - n/2) (one rounding: correct gradual underflow and overflow to
 * inf); both give the same bits where both apply. x > 89 gives inf, x < -104 gives
 * +0, NaN gives NaN. The FMAs halve the instruction count of the multiply-
 * then-add form (dglu is issue-bound on this function). The sigmoid computes
 * it as tg_bwd_exp_nonpos (below, the same bits for x <= 0); this form is the
 * definition the tests hold that one to (test_backward, harness_bwd). */
TG_HD float tg_bwd_exp(float x)
{
	if (tg_isnan(x))
		return x;
	if (x > 89.0f)
		return tg_u2f(0x7F800000u);
	if (x < -104.0f)
		return 0.0f;
	int n;
	float p = tg_bwd_exp_poly(x, &n);
	if (n >= -125 && n <= 127) /* p * 2^n normal (p in [0.7, 1.42]): exact, the two-step product's value */
		return tg__mul_rn(p, tg_bwd_pow2(n));
	int n1 = n / 2;
	return tg__mul_rn(tg__mul_rn(p, tg_bwd_pow2(n1)), tg_bwd_pow2(n - n1));
}

/* tg_bwd_exp(x) for x <= 0 or NaN (the sigmoid's e^-|z|): the same bits without branches (dglu is
 * issue-bound, and each branch cost a reconvergence pair on the GPU). x below -104 is computed at -104
 * and replaced by +0 (a NaN passes both selects: a NaN result); 2^n is applied as 2^max(n, -125) (p times
 * it is normal: exact) times 2^(n - max(n, -125)): one rounding of the exact product p * 2^n, as in
 * either of tg_bwd_exp's forms (n <= 0 here). */
TG_HD float tg_bwd_exp_nonpos(float x)
{
	const int under = x < -104.0f;
	int n;
	const float p = tg_bwd_exp_poly(under ? -104.0f : x, &n);
	const int n1 = n > -125 ? n : -125;
	const float y = tg__mul_rn(tg__mul_rn(p, tg_bwd_pow2(n1)), tg_bwd_pow2(n - n1));
	return under ? 0.0f : y;
}

/* The logistic sigmoid s = 1/(1+e^-z) and its complement 1-s, each accurate
 * (no cancellation, no overflow): e = exp(-|z|) <= 1, d = 1 + e; for z >= 0
 * s = 1/d and 1-s = e * (1/d) (one division, a multiply: within 1.5 ulps),
 * for z < 0 the two swap. NaN z gives NaN for both; z = +inf gives (1, 0),
 * -inf (0, 1). */
TG_HD void tg_bwd_sigmoid2(float z, float *s, float *sc)
{
	float e = tg_bwd_exp_nonpos(-tg_bwd_abs(z));
	float d = tg__add_rn(1.0f, e); /* in [1, 2], or NaN */
	float p = tg_rcp_rn_unit(d), q = tg__mul_rn(e, p);
	*s = z >= 0.0f ? p : q;
	*sc = z >= 0.0f ? q : p;
}

/* GEGLU's tanh-approximate GELU, written as a*sigmoid(z): z = K*(a + C*a^3),
 * K = 2*sqrt(2/pi), C = 0.044715; dz/da = K*(1 + 3C*a^2). */
#define TG_BWD_GELU_K 1.5957691216057308f
#define TG_BWD_GELU_C 0.044715f
#define TG_BWD_GELU_C3 0.134145f
#define TG_BWD_QGELU_K 1.702f

/* Gradient of one GLU element y = act(a) * lin(b) (the forward of ref_glu1 /
 * glu_amax.cu) from gate a, linear b and the incoming gradient g:
 *     *da = (g * lin) * act'(a),   *db = g * act(a)   (0 where lin' = 0)
 * lin = b, except clamped_swiglu: lin = clamp(b, -limit, limit) + 1.
 * The sigmoid-type activations (swiglu z = a; qgeglu z = 1.702a; geglu
 * z = K(a + C a^3); clamped_swiglu a' = min(a, limit), z = alpha*a') are
 * act = a' * s and act' = s + (a'*dz) * (s*(1-s)), s = sigmoid(z); where
 * s*(1-s) is 0 (|z| large or infinite) act' is s, the limit of the formula
 * (so a = +inf gives 1, not inf*0). reglu: act = a > 0 ? a : 0, act' = a > 0
 * ? 1 : 0; sreglu: act = a > 0 ? a*a : 0, act' = a > 0 ? 2a : 0 (the forward
 * maps a NaN gate to 0 for these two, so its derivative is 0 too).
 * clamped_swiglu boundaries as Transformer Engine: act' = 0 where a > limit
 * (a == limit counts as inside), *db = 0 where b > limit or b < -limit
 * (b == +-limit inside); unlike TE a NaN gate or linear value is not masked
 * (the forward passes NaN through, so does the gradient). The activations
 * without a gate partner (act >= TG_ACT_SILU) are their gated form at b = 1:
 * *da = g * act'(a). */
TG_HD void tg_dglu1(int act, float a, float b, float g, float limit, float alpha, float *da, float *db)
{
	if (!TG_ACT_GATED(act)) { /* silu, gelu, ...: the gated form with b = 1 (*db unused) */
		act = TG_ACT_BASE(act);
		b = 1.0f;
	}
	float av, dact, lin = b;
	int lin_live = 1;
	if (act == TG_ACT_REGLU) {
		av = a > 0.0f ? a : 0.0f;
		dact = a > 0.0f ? 1.0f : 0.0f;
	} else if (act == TG_ACT_SREGLU) {
		av = a > 0.0f ? tg__mul_rn(a, a) : 0.0f;
		dact = a > 0.0f ? tg__add_rn(a, a) : 0.0f;
	} else {
		float ae = a, z, dz;
		if (act == TG_ACT_SWIGLU) {
			z = a;
			dz = 1.0f;
		} else if (act == TG_ACT_QGEGLU) {
			z = tg__mul_rn(TG_BWD_QGELU_K, a);
			dz = TG_BWD_QGELU_K;
		} else if (act == TG_ACT_GEGLU) {
			float a2 = tg__mul_rn(a, a);
			z = tg__mul_rn(TG_BWD_GELU_K, tg__add_rn(a, tg__mul_rn(tg__mul_rn(TG_BWD_GELU_C, a2), a)));
			dz = tg__mul_rn(TG_BWD_GELU_K, tg__add_rn(1.0f, tg__mul_rn(TG_BWD_GELU_C3, a2)));
		} else { /* clamped_swiglu */
			ae = a > limit ? limit : a;
			z = tg__mul_rn(alpha, ae);
			dz = alpha;
			float bc = b > limit ? limit : b;
			bc = bc < -limit ? -limit : bc;
			lin = tg__add_rn(bc, 1.0f);
			lin_live = !(b > limit || b < -limit);
		}
		float s, sc;
		tg_bwd_sigmoid2(z, &s, &sc);
		float t = tg__mul_rn(s, sc);
		av = tg__mul_rn(ae, s);
		/* swiglu's dz is 1: ae * 1 is ae (no multiply to issue) */
		float aedz = act == TG_ACT_SWIGLU ? ae : tg__mul_rn(ae, dz);
		dact = t == 0.0f ? s : tg__add_rn(s, tg__mul_rn(aedz, t));
		if (act == TG_ACT_CLAMPED_SWIGLU && a > limit)
			dact = 0.0f;
	}
	*da = tg__mul_rn(tg__mul_rn(g, lin), dact);
	*db = lin_live ? tg__mul_rn(g, av) : 0.0f;
}

/* dnorm, per element. xhat = (x - mu) * rs (mu = 0 for RMSNorm: x - 0 is x). */
TG_HD float tg_dnorm_xhat(float x, float mu, float rs) { return tg__mul_rn(tg__sub_rn(x, mu), rs); }

/* The weight the forward multiplied by: gamma, or gamma + 1 when zero-centered. */
TG_HD float tg_dnorm_weight(float gamma, int zero_centered)
{
	return zero_centered ? tg__add_rn(gamma, 1.0f) : gamma;
}

/* A row mean of dnorm: sum * inv_cols, inv_cols = RN(1/cols) (the kernels' compile-time
 * 1.0f / TG_COLS; a multiply, not a division: no slow-path call, no spill). */
TG_HD float tg_dnorm_mean(float sum, float inv_cols) { return tg__mul_rn(sum, inv_cols); }

/* d_in of one element: rs * ((dyg - m1) - xhat * m2), dyg = dy * weight,
 * m1 = tg_dnorm_mean(tree_sum(dyg)) (0 for RMSNorm), m2 = tg_dnorm_mean(
 * tree_sum(dyg*xhat)) over the row (the derivative of y = xhat*w (+ beta)
 * through mu and rs). */
TG_HD float tg_dnorm_dx(float dyg, float xhat, float rs, float m1, float m2)
{
	return tg__mul_rn(rs, tg__sub_rn(tg__sub_rn(dyg, m1), tg__mul_rn(xhat, m2)));
}

#endif
