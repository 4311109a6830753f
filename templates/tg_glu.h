// tg_glu.h: the gated activations act(a) * b: tg_glu as glu_amax.cu computes them (float or double),
// tg_glu_fast with the sigmoid on the SFU for the generated GEMM's GLU epilogue (gemm_fp8.cu TG_EPI 1).
//
// ACT (tg_codes.h): 0 swiglu silu(a)*b, 1 geglu (tanh-approximate GELU, as TE), 2 reglu,
// 3 qgeglu a*sigmoid(1.702a)*b, 4 sreglu relu(a)^2*b, 5 clamped_swiglu (GPT-OSS: a <= limit,
// |b| <= limit, a*sigmoid(alpha*a)*(b+1)).
#ifndef TG_GLU_H
#define TG_GLU_H

#include "tg_codes.h"
#include "tg_formats.h"

// a * sigmoid(z) in T, z given in double: T double (exp, then one rounding by the caller) or float
// (expf, tg_div_rn). In float the argument is split, z = zf + dz, and e^-z = e^-zf (1 - dz): rounding z to
// float alone would err by |z| x 2^-24 in e^-z, 20 FP32 ulps at z = -6.5, which flipped BF16 roundings of
// GEGLU on more than 1e-4 of the elements (conformance, GEMM-sized inputs). Below z = -80 the float
// e^-z nears overflow (a / inf would be 0 where a e^z is a normal float down to z = -87 and beyond):
// there 1 + e^z == 1 in float, so a e^z it is.
template <typename T> __device__ __forceinline__ T tg_sigmoid_mul(T a, double z)
{
	if constexpr (sizeof(T) == 8) {
		return a / (1.0 + exp(-z));
	} else {
		const float zf = (float)z, dz = (float)(z - (double)zf);
		const bool tiny = zf < -80.0f;
		float e = expf(tiny ? zf : -zf); // one exponential either way
		e = fmaf(e, tiny ? dz : -dz, e);
		return tiny ? a * e : tg_div_rn(a, 1.0f + e);
	}
}

// act(a) * b computed in T, rounded to float. T float suits BF16 and FP8 outputs (1 ulp of the
// double reference after rounding); FP32 and FP16 outputs need T double (expf's 2-ulp error shows).
template <int ACT, typename T> __device__ __forceinline__ float tg_glu(float af, float bf, float alpha, float limit)
{
	T a = af, b = bf, act;
	const double ad = af;
	if (ACT == TG_ACT_SWIGLU) {
		act = tg_sigmoid_mul<T>(a, ad);
	} else if (ACT == TG_ACT_GEGLU) {
		// 0.5 a (1 + tanh(k(a + 0.044715 a^3))) == a * sigmoid(2k(a + 0.044715 a^3)), no cancellation
		act = tg_sigmoid_mul<T>(a, 1.5957691216057308 * (ad + 0.044715 * ad * ad * ad));
	} else if (ACT == TG_ACT_REGLU) {
		act = a > (T)0 ? a : (T)0;
	} else if (ACT == TG_ACT_QGEGLU) {
		act = tg_sigmoid_mul<T>(a, 1.702 * ad);
	} else if (ACT == TG_ACT_SREGLU) {
		act = a > (T)0 ? a * a : (T)0;
	} else {
		const T lim = limit;
		a = a > lim ? lim : a;
		b = b > lim ? lim : b;
		b = b < -lim ? -lim : b;
		act = tg_sigmoid_mul<T>(a, (double)alpha * (double)a);
		b = b + (T)1;
	}
	return (float)(act * b);
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

#endif
