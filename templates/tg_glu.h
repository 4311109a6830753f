// tg_glu.h: the gated activations act(a) * b: tg_glu as glu_amax.cu computes them (float or double),
// tg_glu_fast with the sigmoid on the SFU for the generated GEMM's GLU epilogue (gemm_fp8.cu TG_EPI 1), and
// tg_dglu_fast, the gradient in the same way, for its dglu epilogue (TG_EPI 2).
//
// ACT (tg_codes.h): 0 swiglu silu(a)*b, 1 geglu (tanh-approximate GELU, as TE), 2 reglu,
// 3 qgeglu a*sigmoid(1.702a)*b, 4 sreglu relu(a)^2*b, 5 clamped_swiglu (GPT-OSS: a <= limit,
// |b| <= limit, a*sigmoid(alpha*a)*(b+1)); 6-10 silu, gelu, relu, qgelu, srelu: act(a) alone (tg_glu
// only: the GEMM epilogues' fast forms are for the gated ones).
#ifndef TG_GLU_H
#define TG_GLU_H

#include "tg_codes.h"
#include "tg_formats.h"

// p * sigmoid(z) in float, z = zf + dz (a float and its correction), p the product it scales (a * b).
// e = e^-|z| = e^-|zf| (1 -+ dz): rounding z to float alone would err by |z| x 2^-24 in
// e, 20 FP32 ulps at z = -6.5. With q = e / (1 + e) = sigmoid(-|z|) (no overflow), p sigmoid(z) is
// p - p q (one FMA) for z >= 0, p q below. Rounding sigmoid(z) to 1 near saturation first, as
// p / (1 + e) would, put an exact product p of two 16-bit inputs on a BF16 rounding midpoint where the
// true value lies just below it: GEGLU's BF16 output was off by one unit on 1.4e-4 of the elements of
// a GEMM's output (conformance), 1e-5 or fewer this way (an emulation over Gaussian inputs).
__device__ __forceinline__ float tg_sigmoid_scale(float p, float zf, float dz, bool corr = true)
{
	float e = expf(-fabsf(zf));
	if (corr) // (swiglu: z = a exactly, no correction)
		e = fmaf(e, zf >= 0.0f ? -dz : dz, e);
	const float q = e * tg_rcp_rn_unit(1.0f + e); // 1 + e in [1, 2 + 2^-22]; q's extra rounding is scaled by q in p - p q
	const bool neg = zf < 0.0f;
	const float r = fmaf(neg ? p : -p, q, neg ? 0.0f : p); // z >= 0 and q = 0: p
	// z >= 0: |r| = |p| (1 - q) >= |p| / 2 > |p| / 4, except an infinite p, where r = inf - inf is NaN while the
	// reference's double math has the infinity (which an amax must count): the max with |p| / 4 takes it, and p's
	// sign goes back on (a zero p's too). (Of the forms tried, this one left every layer's GLU kernel at its
	// registers, without spills, on sm_90a and sm_100a; thirty-fourth session.)
	return neg ? r : copysignf(fmaxf(fabsf(r), 0.25f * fabsf(p)), p);
}

// z (computed in double) as a float and its correction (0 where z's float is infinite: not inf - inf = NaN,
// which made GEGLU's result NaN for a below about -1.7e13, where it is 0).
__device__ __forceinline__ float tg_sigmoid_arg(double z, float &dz)
{
	const float zf = (float)z;
	dz = fabsf(zf) <= 0x1.fffffep127f ? (float)(z - (double)zf) : 0.0f;
	return zf;
}

// z = k a (k a double constant, or a float's exact product) as a float zf and its correction dz, without double:
// zh = RN(kh a) and its rounding error by FMA, plus kl a (k = kh + kl, two floats), carry z to about 2^-46 relative,
// far below the float sigmoid's own roundings, and zf is RN(z) as tg_sigmoid_arg's. Where zh is not finite or
// |zh| >= 2^100 (e^-|z| is 0 or the sigmoid 1 already; a NaN) dz is 0. Every step an intrinsic (no contraction into
// an FMA). QGEGLU, QGELU and clamped SwiGLU (H100, 8192 tokens, 2 x 14336 / 16384 wide, session 25): 287 -> 274,
// 234 -> 192 and 293 -> 275 us against z in double (the double form's FP64 conversions issue at a quarter of the
// FP64 rate). GEGLU's cubic stays in double: its pair (TwoProd for a^2, a^3, C a^3, TwoSum, times K; 23 FP32
// operations) measured 293 -> 312 us, GELU 282 -> 317, the BF16-output GEGLU 254 -> 293.
__device__ __forceinline__ float tg_ff_scale(float a, float kh, float kl, float &dz)
{
	const float zh = __fmul_rn(kh, a), zl = fmaf(kl, a, fmaf(kh, a, -zh));
	const float zf = __fadd_rn(zh, zl);
	const bool big = !(fabsf(zh) < 0x1p100f);
	dz = big ? 0.0f : __fsub_rn(zl, __fsub_rn(zf, zh));
	return big ? zh : zf;
}

// act(a) * b, rounded to float: in double (T double, one rounding: FP32 and FP16 outputs, where expf's
// 2-ulp error showed), or in float (BF16 and FP8 outputs: tg_sigmoid_scale, a few FP32 roundings).
template <int ACT, typename T> __device__ __forceinline__ float tg_glu(float af, float bf, float alpha, float limit)
{
	if constexpr (!TG_ACT_GATED(ACT)) // silu, gelu, ...: the gated form with b = 1 (bf unused)
		return tg_glu<TG_ACT_BASE(ACT), T>(af, 1.0f, alpha, limit);
	const double ad = af;
	if (ACT == TG_ACT_REGLU || ACT == TG_ACT_SREGLU) {
		const T a = af, act = a > (T)0 ? (ACT == TG_ACT_REGLU ? a : a * a) : (T)0;
		return (float)(act * (T)bf);
	}
	if (ACT == TG_ACT_CLAMPED_SWIGLU) { // GPT-OSS: a <= limit, |b| <= limit, a sigmoid(alpha a) (b + 1)
		const float a = af > limit ? limit : af, b = (bf > limit ? limit : bf < -limit ? -limit : bf);
		if constexpr (sizeof(T) == 8)
			return (float)((double)a / (1.0 + exp(-(double)alpha * (double)a)) * ((double)b + 1.0));
		float dz, zf = tg_ff_scale(a, alpha, 0.0f, dz); // alpha a exactly: zf + dz is the double product
		return tg_sigmoid_scale(a * (b + 1.0f), zf, dz);
	}
	// swiglu: z = a; geglu: 0.5 a (1 + tanh(k(a + 0.044715 a^3))) == a sigmoid(2k(a + 0.044715 a^3)), no
	// cancellation; qgeglu: z = 1.702 a
	const double z = ACT == TG_ACT_SWIGLU ? ad : ACT == TG_ACT_GEGLU ? 1.5957691216057308 * (ad + 0.044715 * ad * ad * ad)
		: 1.702 * ad;
	if constexpr (sizeof(T) == 8)
		return (float)(ad / (1.0 + exp(-z)) * (double)bf);
	if (ACT == TG_ACT_SWIGLU) // z = a exactly. (The form a / (1 + e^-a) times b rounded 1 + e^-a to 1 where e^-a <
		// 2^-24, so it returned the exact product a b where the reference rounds a b (1 - e^-a) one unit below: on
		// an NVFP4 GEMM's output those products sit on E4M3 block-scale midpoints, conf13/nvfp4_swiglu_gemm.yaml.)
		return tg_sigmoid_scale(af * bf, af, 0.0f, false);
	float dz, zf;
	if (ACT == TG_ACT_GEGLU) {
		zf = tg_sigmoid_arg(z, dz);
	} else { // qgeglu: 1.702 as two floats
		constexpr float kh = (float)1.702, kl = (float)(1.702 - (double)(float)1.702);
		zf = tg_ff_scale(af, kh, kl, dz);
	}
	return tg_sigmoid_scale(af * bf, zf, dz);
}

// tg_glu with the sigmoid on the SFU: 1 / (1 + 2^(-z log2 e)) by ex2.approx and rcp.approx (relative
// error about 2^-20; 0 where e^-z overflows or the quotient is below FP32's normals, z < -87). For the
// generated GEMM's GLU epilogue, whose FP8 output (steps of 2^-4 or coarser) absorbs that error.
__device__ __forceinline__ float tg_sigmoid_mul_fast(float a, float z)
{
	float e, r;
	asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(e) : "f"(z * -1.4426950408889634f));
	asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(1.0f + e));
	return a * r;
}
template <int ACT> __device__ __forceinline__ float tg_glu_fast(float a, float b, float alpha, float limit)
{
	float act;
	if (ACT == TG_ACT_SWIGLU) {
		act = tg_sigmoid_mul_fast(a, a);
	} else if (ACT == TG_ACT_GEGLU) {
		act = tg_sigmoid_mul_fast(a, 1.5957691216057308f * (a + 0.044715f * a * a * a));
	} else if (ACT == TG_ACT_REGLU) {
		act = a > 0.0f ? a : 0.0f;
	} else if (ACT == TG_ACT_QGEGLU) {
		act = tg_sigmoid_mul_fast(a, 1.702f * a);
	} else if (ACT == TG_ACT_SREGLU) {
		act = a > 0.0f ? a * a : 0.0f;
	} else {
		a = a > limit ? limit : a;
		b = b > limit ? limit : b;
		b = b < -limit ? -limit : b;
		act = tg_sigmoid_mul_fast(a, alpha * a);
		b = b + 1.0f;
	}
	return act * b;
}

// The gradient of one GLU element (tg_backward.h's tg_dglu1, same formulas and special cases) with the sigmoid
// on the SFU: e = 2^(-|z| log2 e) <= 1 by ex2.approx, p = 1 / (1 + e) by rcp.approx, sigmoid(z) and 1 - sigmoid(z)
// are p and e p (swapped for z < 0): relative error a few 2^-23, no cancellation. For the generated GEMM's dglu
// epilogue, whose FP8 output absorbs that error (the checker judges it as it does the GLU epilogue's act).
//     *da = (g * lin) * act'(a),   *db = g * act(a)
template <int ACT> __device__ __forceinline__ void tg_dglu_fast(float a, float b, float g, float alpha, float limit, float &da,
	float &db)
{
	float av, dact, lin = b;
	bool lin_live = true;
	if (ACT == TG_ACT_REGLU) {
		av = a > 0.0f ? a : 0.0f;
		dact = a > 0.0f ? 1.0f : 0.0f;
	} else if (ACT == TG_ACT_SREGLU) {
		av = a > 0.0f ? a * a : 0.0f;
		dact = a > 0.0f ? a + a : 0.0f;
	} else {
		float ae = a, z, dz;
		if (ACT == TG_ACT_SWIGLU) {
			z = a, dz = 1.0f;
		} else if (ACT == TG_ACT_QGEGLU) {
			z = 1.702f * a, dz = 1.702f;
		} else if (ACT == TG_ACT_GEGLU) {
			const float a2 = a * a;
			z = 1.5957691216057308f * (a + 0.044715f * a2 * a);
			dz = 1.5957691216057308f * (1.0f + 0.134145f * a2);
		} else { // clamped_swiglu
			ae = a > limit ? limit : a;
			z = alpha * ae, dz = alpha;
			float bc = b > limit ? limit : b;
			bc = bc < -limit ? -limit : bc;
			lin = bc + 1.0f;
			lin_live = !(b > limit || b < -limit);
		}
		float e, p;
		asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(e) : "f"(fabsf(z) * -1.4426950408889634f));
		asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(p) : "f"(1.0f + e));
		const float q = e * p, s = z >= 0.0f ? p : q, t = p * q; // t = s (1 - s) either way
		av = ae * s;
		dact = t == 0.0f ? s : s + (ae * dz) * t;
		if (ACT == TG_ACT_CLAMPED_SWIGLU && a > limit)
			dact = 0.0f;
	}
	da = (g * lin) * dact;
	db = lin_live ? g * av : 0.0f;
}

#endif
