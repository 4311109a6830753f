/* tg_formats.h: bit-exact conversions between FP32 and the narrow formats.
 *
 * One header for host C (gcc -std=c11) and for CUDA kernels (nvcc, NVRTC).
 * The portable path uses integer arithmetic only, so host and device give
 * the same bits, FP32 subnormal inputs included (no FTZ anywhere).
 *
 * Rounding: round to nearest, ties to even. Narrow float formats saturate to
 * their finite max (like PTX cvt.rn.satfinite), infinities included.
 * NaN handling mirrors NVIDIA's own bit-exact emulation in cuda_fp8.hpp /
 * cuda_fp4.hpp (which is written to match the cvt instructions):
 *   BF16, FP16: canonical 0x7FFF (what cvt.rn.bf16.f32 / cvt.rn.f16.f32 give).
 *   E4M3: 0x7F (sign dropped).
 *   E5M2: 0x7F for every NaN (sign and payload dropped). Measured on an
 *         H200 (cvt.rn.satfinite.e5m2x2.f32, 2026-11-21): x86's default NaN
 *         0xFFC00000 also gives 0x7F, not the 0x7E that cuda_fp8.hpp's
 *         software path predicts, so the hardware defines it.
 *   E2M1: has no NaN; NaN converts to +6 (code 0x7), as cuda_fp4.hpp does.
 * E2M1 codes live in the low nibble; packed pairs put element 0 in the low
 * nibble (as cvt.rn.satfinite.e2m1x2.f32 d, hi, lo does).
 */
#ifndef TG_FORMATS_H
#define TG_FORMATS_H

#ifdef __CUDACC_RTC__
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef int int32_t;
typedef unsigned long long uint64_t;
#else
#include <stdint.h>
#include <string.h>
#include <math.h>
#endif

#ifdef __CUDACC__
#define TG_HD __host__ __device__ __forceinline__
#else
#define TG_HD static inline
#endif

#define TG_FMT_E4M3 0
#define TG_FMT_E5M2 1
#define TG_FMT_E2M1 2

#define TG_E4M3_MAX 448.0f
#define TG_E5M2_MAX 57344.0f
#define TG_E2M1_MAX 6.0f
#define TG_FLT_MAX 3.40282346638528859812e+38f

/* Bit casts. */
TG_HD uint32_t tg_f2u(float f)
{
#ifdef __CUDA_ARCH__
	return __float_as_uint(f);
#else
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	return u;
#endif
}

TG_HD float tg_u2f(uint32_t u)
{
#ifdef __CUDA_ARCH__
	return __uint_as_float(u);
#else
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
#endif
}

TG_HD int tg_isnan(float f) { return (tg_f2u(f) & 0x7FFFFFFFu) > 0x7F800000u; }
TG_HD int tg_isinf(float f) { return (tg_f2u(f) & 0x7FFFFFFFu) == 0x7F800000u; }
TG_HD int tg_isfinite(float f) { return (tg_f2u(f) & 0x7F800000u) != 0x7F800000u; }
TG_HD float tg_nan(void) { return tg_u2f(0x7FFFFFFFu); }

/* IEEE division rounded to nearest, also under -use_fast_math. */
TG_HD float tg_div_rn(float a, float b)
{
#ifdef __CUDA_ARCH__
	return __fdiv_rn(a, b);
#else
	return a / b;
#endif
}

/* 1/b rounded to nearest even: the same bits as tg_div_rn(1, b) (both correctly rounded),
 * fewer instructions on the GPU (__frcp_rn). */
TG_HD float tg_rcp_rn(float b)
{
#ifdef __CUDA_ARCH__
	return __frcp_rn(b);
#else
	return 1.0f / b;
#endif
}

/* 1/d rounded to nearest even for d in [1, 4) or NaN (the sigmoids' 1 + e, 0 <= e <= 1 + 2^-22): on the GPU the
 * fast path of __frcp_rn (rcp.approx, then one Newton step by FMA: its correctly rounded result wherever d's
 * exponent is far from the ends of FP32's range) without the range check and branch around it; 1/d on the
 * host. harness_bwd checks it against __frcp_rn for every d in [1, 4). */
TG_HD float tg_rcp_rn_unit(float d)
{
#if defined(__CUDA_ARCH__) && defined(__CUDACC__) /* (tests/unit/rht_device.c defines only the first: 1/d) */
	float r;
	asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(d));
	return __fmaf_rn(r, __fmaf_rn(-d, r, 1.0f), r);
#else
	return 1.0f / d;
#endif
}

/* Round |x| (finite, bits a = |x| bits) to a float format with m mantissa
 * bits and minimum normal exponent emin; returns the unsigned code
 * (exponent field << m | mantissa) without any saturation. Exact RNE for all
 * FP32 inputs including subnormals. The code may exceed the format's range;
 * the caller saturates or maps to inf. */
TG_HD uint32_t tg__round_code(uint32_t a, int m, int emin)
{
	int ef = (int)(a >> 23);
	uint32_t sig = a & 0x7FFFFFu;
	int e;
	if (ef == 0) {
		e = -126;           /* FP32 subnormal: no implicit bit */
	} else {
		e = ef - 127;
		sig |= 0x800000u;
	}
	if (sig == 0)
		return 0;
	int et = e > emin ? e : emin;
	/* value = sig * 2^(e-23); unit = 2^(et-m); q = value / unit */
	int shift = 23 - m + (et - e);
	uint32_t q;
	if (shift > 25) {
		q = 0;              /* below half of the smallest subnormal */
	} else {
		uint32_t rem = sig & ((1u << shift) - 1u);
		uint32_t half = 1u << (shift - 1);
		q = sig >> shift;
		if (rem > half || (rem == half && (q & 1u)))
			q++;
	}
	if (et > 200)
		et = 200;           /* unreachable for FP32, keeps the shift defined */
	return ((uint32_t)(et - emin) << m) + q;
}

/* Saturating narrow conversion: m mantissa bits, emin, largest finite code
 * maxc, sign bit position sbit, NaN code nanc. */
TG_HD uint8_t tg__to_narrow_sat(float x, int m, int emin, uint32_t maxc, int sbit, uint32_t nanc)
{
	uint32_t u = tg_f2u(x);
	uint32_t a = u & 0x7FFFFFFFu;
	uint32_t s = (u >> 31) << sbit;
	if (a > 0x7F800000u)
		return (uint8_t)nanc;
	if (a == 0x7F800000u)
		return (uint8_t)(s | maxc);
	uint32_t c = tg__round_code(a, m, emin);
	if (c > maxc)
		c = maxc;
	return (uint8_t)(s | c);
}

/* Decode a narrow code (no NaN/inf check): m mantissa bits, emin. */
TG_HD float tg__from_narrow(uint32_t c, int m, int emin, int sbit)
{
	uint32_t s = (c >> sbit) & 1u;
	uint32_t mag = c & ((1u << sbit) - 1u);
	uint32_t ef = mag >> m, mant = mag & ((1u << m) - 1u);
	float v;
	if (ef == 0) /* subnormal: mant * 2^(emin-m), exact */
		v = (float)mant * tg_u2f((uint32_t)(127 + emin - m) << 23);
	else
		v = tg_u2f(((uint32_t)((int)ef - 1 + emin + 127) << 23) | (mant << (23 - m)));
	return s ? -v : v;
}

/* ---- BF16 ---- */
TG_HD float tg_bf16_to_f32(uint16_t h) { return tg_u2f((uint32_t)h << 16); }

TG_HD uint16_t tg_f32_to_bf16(float f)
{
	uint32_t u = tg_f2u(f);
	if ((u & 0x7FFFFFFFu) > 0x7F800000u)
		return 0x7FFF;
	u += 0x7FFFu + ((u >> 16) & 1u);
	return (uint16_t)(u >> 16);
}

/* ---- FP16 ---- */
TG_HD float tg_f16_to_f32(uint16_t h)
{
	uint32_t e = (h >> 10) & 0x1Fu;
	if (e == 0x1F) {
		uint32_t s = (uint32_t)(h >> 15) << 31;
		return tg_u2f(s | 0x7F800000u | ((uint32_t)(h & 0x3FF) << 13));
	}
	return tg__from_narrow(h, 10, -14, 15);
}

TG_HD uint16_t tg_f32_to_f16(float f)
{
	uint32_t u = tg_f2u(f);
	uint32_t a = u & 0x7FFFFFFFu;
	uint32_t s = (u >> 16) & 0x8000u;
	if (a > 0x7F800000u)
		return 0x7FFF;
	if (a == 0x7F800000u)
		return (uint16_t)(s | 0x7C00u);
	uint32_t c = tg__round_code(a, 10, -14);
	if (c > 0x7C00u)
		c = 0x7C00u;    /* overflow: RNE to inf, as IEEE does */
	return (uint16_t)(s | c);
}

/* ---- FP8 E4M3 (OCP "FN": no inf, NaN = S.1111.111, max 448) ---- */
TG_HD uint8_t tg__f32_to_e4m3_sw(float x) { return tg__to_narrow_sat(x, 3, -6, 0x7Eu, 7, 0x7Fu); }

TG_HD float tg_e4m3_to_f32(uint8_t c)
{
	if ((c & 0x7F) == 0x7F)
		return tg_nan();
	return tg__from_narrow(c, 3, -6, 7);
}

/* ---- FP8 E5M2 (IEEE-like, max 57344) ---- */
TG_HD uint8_t tg__f32_to_e5m2_sw(float x)
{
	uint32_t u = tg_f2u(x);
	if ((u & 0x7FFFFFFFu) > 0x7F800000u)
		return 0x7Fu;
	return tg__to_narrow_sat(x, 2, -14, 0x7Bu, 7, 0x7Fu);
}

TG_HD float tg_e5m2_to_f32(uint8_t c)
{
	if ((c & 0x7C) == 0x7C) {
		if (c & 3)
			return tg_nan();
		return tg_u2f(((uint32_t)(c >> 7) << 31) | 0x7F800000u);
	}
	return tg__from_narrow(c, 2, -14, 7);
}

#ifdef __CUDACC__
/* lo and hi rounded to BF16 (RNE; a NaN to 0x7FFF, as tg_f32_to_bf16), lo in the low half: one cvt.rn.bf16x2
 * (sm_80+; the dequantize kernels and the casts' BF16 GEMM operands). */
__device__ __forceinline__ uint32_t tg_f32x2_to_bf16x2(float lo, float hi)
{
	uint32_t d;
	asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(d) : "f"(hi), "f"(lo));
	return d;
}
#endif

/* Device fast paths: the hardware instruction gives the same bits. */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
__device__ __forceinline__ uint16_t tg_f32x2_to_e4m3x2(float lo, float hi)
{
	uint16_t r;
	asm("cvt.rn.satfinite.e4m3x2.f32 %0, %2, %1;" : "=h"(r) : "f"(lo), "f"(hi));
	return r;
}
__device__ __forceinline__ uint16_t tg_f32x2_to_e5m2x2(float lo, float hi)
{
	uint16_t r;
	asm("cvt.rn.satfinite.e5m2x2.f32 %0, %2, %1;" : "=h"(r) : "f"(lo), "f"(hi));
	return r;
}
__device__ __forceinline__ uint8_t tg_f32_to_e4m3(float x) { return (uint8_t)(tg_f32x2_to_e4m3x2(x, 0.0f) & 0xFF); }
__device__ __forceinline__ uint8_t tg_f32_to_e5m2(float x) { return (uint8_t)(tg_f32x2_to_e5m2x2(x, 0.0f) & 0xFF); }
#else
TG_HD uint8_t tg_f32_to_e4m3(float x) { return tg__f32_to_e4m3_sw(x); }
TG_HD uint8_t tg_f32_to_e5m2(float x) { return tg__f32_to_e5m2_sw(x); }
/* Packed pair: lo in bits 0..7, hi in bits 8..15. */
TG_HD uint16_t tg_f32x2_to_e4m3x2(float lo, float hi)
{
	return (uint16_t)(tg__f32_to_e4m3_sw(lo) | (tg__f32_to_e4m3_sw(hi) << 8));
}
TG_HD uint16_t tg_f32x2_to_e5m2x2(float lo, float hi)
{
	return (uint16_t)(tg__f32_to_e5m2_sw(lo) | (tg__f32_to_e5m2_sw(hi) << 8));
}
#endif

#ifdef __CUDACC__
/* A 4 x 4 byte transpose: byte j of t[k] = byte k of a[j] (four rows of 4 bytes in, four columns out),
 * six byte permutes; the FP8 column copies (cast_transpose.cu, the GEMM's GLU epilogue) use it. */
__device__ __forceinline__ void tg_transpose_4x4_bytes(uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3, uint32_t (&t)[4])
{
	const uint32_t lo0 = __byte_perm(a0, a1, 0x5140), lo1 = __byte_perm(a2, a3, 0x5140);
	const uint32_t hi0 = __byte_perm(a0, a1, 0x7362), hi1 = __byte_perm(a2, a3, 0x7362);
	t[0] = __byte_perm(lo0, lo1, 0x5410);
	t[1] = __byte_perm(lo0, lo1, 0x7632);
	t[2] = __byte_perm(hi0, hi1, 0x5410);
	t[3] = __byte_perm(hi0, hi1, 0x7632);
}

/* Store 16 bytes w[0..3] of column c, rows r..r+15 (r a multiple of 16), of a columnwise copy out_t
 * [cols][pitch], pitch = rows rounded up to 16 (tg_kernel.h's TG_PITCH), where ok and r < rows: one aligned
 * 16-byte store a lane at any row count (a piece past rows fills the line's padding). cast_transpose.cu's staged
 * column pass and dglu.cu's MXFP8 one. */
__device__ __forceinline__ void tg_put_col16(unsigned char *out_t, long long rows, int c, long long r, const uint32_t w[4],
                                          bool ok)
{
	if (ok && r < rows)
		*(uint4 *)(out_t + (size_t)c * (size_t)((rows + 15) & ~15LL) + r) = make_uint4(w[0], w[1], w[2], w[3]);
}
#endif

/* ---- FP4 E2M1 (values 0, .5, 1, 1.5, 2, 3, 4, 6; no inf/NaN) ---- */
/* RNE to the 8 magnitudes, saturating. |x| >= 1: the FP32 bits rounded to one mantissa bit, nearest
 * even (add 2^21 - 1 plus the kept bit, drop 22 bits), whose exponent and bit are the code from 2 up
 * (1.0 = 0x3F800000 -> 254 - 252); the bits past 6 (and inf) give codes above 7, clamped. |x| < 1:
 * RNE(2|x|) (exact product; adding 2^23 puts the integer in the low mantissa bits). Ties go to the
 * even code, as the generic tg__to_narrow_sat would round. NaN -> 0x7 (no sign), inf -> +-6, -0 -> 0x8.
 * About 13 instructions: the NVFP4 casts are instruction-bound and run this twice an element (the
 * range-select form before took 16; sixteenth session). */
TG_HD uint8_t tg_f32_to_e2m1(float x)
{
	const uint32_t u = tg_f2u(x), ua = u & 0x7FFFFFFFu;
	const uint32_t hi = (ua + 0x1FFFFFu + ((ua >> 22) & 1u) - (252u << 22)) >> 22; /* wraps below 1.0: unused */
	const uint32_t lo = tg_f2u(tg_u2f(ua) * 2.0f + 8388608.0f) - 0x4B000000u;
	uint32_t c = ua < 0x3F800000u ? lo : hi;
	c = c < 7u ? c : 7u;
	return (uint8_t)(ua > 0x7F800000u ? 0x7u : c | (u >> 31) << 3);
}

TG_HD float tg_e2m1_to_f32(uint8_t c) { return tg__from_narrow(c & 0xFu, 1, 0, 3); }

/* E2M1 by way of E4M3 (the GPU converts two FP32 values to E4M3 in one instruction, E2M1 only from sm_100a):
 * ys = x * 2^-6 rounded to the E2M1 grid scaled by 2^-6, with x's sign, as a float. |ys| clamped to 6 * 2^-6
 * (NaN stays NaN: min.NaN on the GPU) is rounded to nearest even at its binade's E2M1 step by adding and
 * subtracting M = 2^(max(E, -6) + 22), whose ulp is that step (2^-7 below 2^-5: 0, 0.5, 1, 1.5 at scale 2^-6;
 * 2^-6 in [2^-5, 2^-4); 2^-5 in [2^-4, 2^-3)), the sum's parity the E2M1 mantissa's. The result is an E4M3
 * value whose code s<<7 | e2m1 << 2 (0.5 * 2^-6 = 2^-7 the subnormal 0x04) gives the E2M1 code: tg_e2m1_of_e4m3.
 * x * 2^-6 is exact down to 2^-120, and below it rounds to 0 both ways. NaN: E4M3 0x7F, code 0x7 (sign dropped),
 * -0: 0x80, code 0x8. tests/unit/test_formats.c checks tg_e2m1_of_e4m3(E4M3(tg_e2m1_round_scaled(x * 2^-6))) ==
 * tg_f32_to_e2m1(x) (every FP32 x with --full: 0 differences). */
TG_HD float tg_e2m1_round_scaled(float ys)
{
	const uint32_t u = tg_f2u(ys);
#if defined(__CUDA_ARCH__) && defined(__CUDACC__) /* (tests/unit/rht_device.c defines only the first) */
	float a; /* (fabsf: an operand modifier of the min, where u & 0x7FFFFFFF took an instruction) */
	asm("min.NaN.f32 %0, %1, 0f3DC00000;" : "=f"(a) : "f"(fabsf(ys))); /* 0.09375 = 6 * 2^-6 */
#else
	float a = tg_u2f(u & 0x7FFFFFFFu);
	if (!tg_isnan(a) && a > 0.09375f)
		a = 0.09375f;
#endif
	uint32_t e = tg_f2u(a) & 0x7F800000u;
	e = e > 0x3C800000u ? e : 0x3C800000u;   /* 2^-6: below it the step of E2M1's [0, 2) */
	const float m = tg_u2f(e + 0x0B000000u); /* 2^(E + 22) */
#if defined(__CUDA_ARCH__) && defined(__CUDACC__)
	const float r = __fsub_rn(__fadd_rn(a, m), m); /* (never reassociated, also under -use_fast_math) */
#else
	const float r = (a + m) - m;
#endif
	return tg_u2f(tg_f2u(r) | (u & 0x80000000u));
}

/* The E2M1 code (sign bit 3) of an E4M3 code c8 of a tg_e2m1_round_scaled value. */
TG_HD uint8_t tg_e2m1_of_e4m3(uint8_t c8) { return (uint8_t)(((c8 >> 2) & 7) | ((c8 >> 4) & 8)); }

/* x * 2^-6 rounded once (never folded into an earlier product). */
TG_HD float tg__mul6(float x)
{
#if defined(__CUDA_ARCH__) && defined(__CUDACC__)
	return __fmul_rn(x, 0x1p-6f);
#else
	return x * 0x1p-6f;
#endif
}

/* The scaled value tg_e2m1_round_scaled takes for element y of a block with multiplier mult, tg__mul6(y * mult), given
 * m = tg__mul6(mult) and fold = (m >= 2^-126) (tg_e2m1_fold6), or m = mult and fold = 0. Folded, it is the one product
 * y * m: m is then exact, so y * m = (y * mult) * 2^-6 as real numbers, and rounding commutes with the power of two
 * wherever the result is a normal float; below 2^-126 both forms are values under 2^-8 (code 0) of y's sign, and an
 * overflow of y * mult is above 6 * 2^-6 (code 6) either way. Unfolded (mult under 2^-120: a global amax near FLT_MAX)
 * it is the two products. tests/unit/test_formats.c checks tg_e2m1x8 against scalar codes over every mult. */
TG_HD float tg__scaled6(float y, float m, int fold)
{
#if defined(__CUDA_ARCH__) && defined(__CUDACC__)
	return fold ? __fmul_rn(y, m) : tg__mul6(__fmul_rn(y, m));
#else
	return fold ? y * m : tg__mul6(y * m);
#endif
}

/* Whether a block's multiplier folds into one product (tg__scaled6): its tg__mul6 image m6 is a normal float. */
TG_HD int tg_e2m1_fold6(float m6) { return m6 >= 0x1p-126f; }

/* Four E4M3 bytes of tg_e2m1_round_scaled values (a code's value times 2^-6: E4M3 bits 2..0 and 7 are the E2M1
 * code and sign) as two bytes of E2M1 pairs, bytes 0 and 2 of the result (the lower element in the low nibble). */
TG_HD uint32_t tg_e2m1_pairs(uint32_t w)
{
	const uint32_t c = ((w >> 2) & 0x07070707u) | ((w >> 4) & 0x08080808u); /* a code (and sign) a byte */
	return c | (c >> 4);
}

/* Eight E2M1 codes from two tg_e2m1_pairs words (bytes 0 and 2 of each), element 0 in the low nibble. */
TG_HD uint32_t tg_e2m1_pack8(uint32_t t0, uint32_t t1)
{
#if defined(__CUDA_ARCH__) && defined(__CUDACC__)
	return __byte_perm(t0, t1, 0x6420);
#else
	return (t0 & 0xFFu) | (t0 >> 8 & 0xFF00u) | (t1 & 0xFFu) << 16 | (t1 >> 8 & 0xFF00u) << 16;
#endif
}

/* The E4M3 pair (element v[0] low) of v[0..1]'s tg_e2m1_round_scaled values under m (tg__scaled6), those values
 * in r[0..1]: one step of tg__e2m1x8_by, and of nvfp4_quantize.cu's e2m1x8_deq_by, which dequantizes r too. */
TG_HD uint16_t tg__e2m1_pair(const float *v, float m, int fold, float r[2])
{
	r[0] = tg_e2m1_round_scaled(tg__scaled6(v[0], m, fold));
	r[1] = tg_e2m1_round_scaled(tg__scaled6(v[1], m, fold));
	return tg_f32x2_to_e4m3x2(r[0], r[1]);
}

/* The E2M1 codes of y[0..7] * mult packed in a word (element k in nibble k): eight tg_f32_to_e2m1(y[k] * mult)
 * by tg_e2m1_round_scaled, four E4M3 pair conversions and the codes taken out of the E4M3 bytes four at a time
 * (tg_e2m1_of_e4m3 on each byte, then two bytes' nibbles a byte, bytes 0 and 2 of each word: one byte permute).
 * The NVFP4 casts' encoding, about 10 instructions an element where the multiplier folds (tg__scaled6; the scalar
 * tg_f32_to_e2m1 took about 13 and its packing 1-2). tg__e2m1x8_by is its body for a multiplier m already
 * folded or not (fold, a constant at each call). */
TG_HD uint32_t tg__e2m1x8_by(const float *y, float m, int fold)
{
	uint32_t t[2];
	for (int h = 0; h < 2; h++) { /* a pair at a time (few registers live: the RHT casts hold 80) */
		uint32_t w = 0;
		for (int q = 0; q < 2; q++) {
			float r[2];
			w |= (uint32_t)tg__e2m1_pair(y + 4 * h + 2 * q, m, fold, r) << (16 * q);
		}
		t[h] = tg_e2m1_pairs(w);
	}
	return tg_e2m1_pack8(t[0], t[1]);
}
TG_HD uint32_t tg_e2m1x8(const float *y, float mult)
{
	const float m6 = tg__mul6(mult); /* one product an element where it folds (a constant argument each way) */
	return tg_e2m1_fold6(m6) ? tg__e2m1x8_by(y, m6, 1) : tg__e2m1x8_by(y, mult, 0);
}

/* Packed pair: lo in the low nibble. */
TG_HD uint8_t tg_f32x2_to_e2m1x2(float lo, float hi)
{
	return (uint8_t)(tg_f32_to_e2m1(lo) | (tg_f32_to_e2m1(hi) << 4));
}

/* ---- E8M0 scale bytes (MXFP8) ---- */

/* 2^(e-127); e = 0 is 2^-127 (an FP32 subnormal); 0xFF is NaN. */
TG_HD float tg_e8m0_to_f32(uint8_t e)
{
	if (e == 0xFF)
		return tg_nan();
	if (e == 0)
		return tg_u2f(0x00400000u);
	return tg_u2f((uint32_t)e << 23);
}

/* The multiplier applied to elements before the E4M3/E5M2 cast, 2^(127-e),
 * as TE's exp2f_rcp: e = 0 gives 1 (not 2^127), e = 0xFF gives NaN. */
TG_HD float tg_e8m0_rcp(uint8_t e)
{
	if (e == 0xFF)
		return tg_nan();
	if (e == 0)
		return 1.0f;
	return tg_u2f((uint32_t)(254 - e) << 23);
}

/* Scale byte for a block with this amax: v = amax * (1/fmt_max) (the float
 * reciprocal, as TE does), e = biased exponent of v rounded up, i.e. the
 * smallest e with 2^(e-127) >= v. amax 0 (or v <= 2^-127) gives 0x00;
 * NaN or inf amax gives 0xFF. Largest finite result is 0xFE. */
TG_HD uint8_t tg_e8m0_from_amax(float amax, float fmt_max)
{
	/* 1/fmt_max: for FP8's two maxima the constant RN(1/448) = RN(1/7) 2^-6, RN(1/57344) = RN(1/7) 2^-13 (the GPU's
	 * __fdiv_rn of two constants is not folded: it cost a division a scale block in every MXFP8 kernel; without it
	 * the 8B MXFP8 layer's quantizing kernels ran 1-9% faster, H100, session 25) */
	const float rcp = fmt_max == TG_E4M3_MAX ? 0x1.24924ap-9f : fmt_max == TG_E5M2_MAX ? 0x1.24924ap-16f
		: tg_div_rn(1.0f, fmt_max);
	const uint32_t u = tg_f2u(amax * rcp) & 0x7FFFFFFFu, e = u >> 23, mant = u & 0x7FFFFFu;
	const uint32_t up = e == 0 ? (mant > 0x400000u ? 1u : 0u) : e + (mant && e < 0xFEu ? 1u : 0u); /* selects, no branches */
	return (uint8_t)(!tg_isfinite(amax) ? 0xFFu : u > 0x7F7FFFFFu ? 0xFEu : up);
}

/* The dequantizing multiplier of scale byte e, 2^(e-127): e = 0 gives 1 (TE quantizes those blocks with the
 * multiplier 1, tg_e8m0_rcp), 0xFF NaN. MXFP8 code times it is the element's value (dequantize.cu). */
TG_HD float tg_e8m0_deq(uint8_t e) { return e == 0 ? 1.0f : tg_e8m0_to_f32(e); }

/* The same from the block's quantizing multiplier m = tg_e8m0_rcp(e), whose bits are (254 - e) << 23 for e in
 * 1..254 and 1.0 (127 << 23) for e = 0: (254 << 23) - bits(m) is e << 23, and 127 << 23 = 1.0 for e = 0; NaN stays
 * NaN (test_formats checks every e). Kernels that hold m and not e (the shared-memory scale tiles) use it. */
TG_HD float tg_e8m0_deq_of_rcp(float m) { return m != m ? m : tg_u2f((254u << 23) - tg_f2u(m)); }

#ifdef __CUDACC__
extern "C++" { /* templates: C++ linkage even where a C header (ref.h) includes this file in an extern "C" block */

/* The two FP8 codes in the low 16 bits of w (element 0 low) as FP32, by the hardware's FP8 -> FP16 conversion
 * (exact: every E4M3 and E5M2 value, NaN and inf included, is an FP16 value; sm_89+), as tg_fmt_to_f32 decodes. */
template <int FMT> __device__ __forceinline__ void tg_fp8x2_to_f32(uint32_t w, float &lo, float &hi)
{
	uint32_t h;
	const uint16_t b = (uint16_t)w;
	if (FMT == TG_FMT_E4M3)
		asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(h) : "h"(b));
	else
		asm("cvt.rn.f16x2.e5m2x2 %0, %1;" : "=r"(h) : "h"(b));
	asm("cvt.f32.f16 %0, %1;" : "=f"(lo) : "h"((uint16_t)(h & 0xFFFFu)));
	asm("cvt.f32.f16 %0, %1;" : "=f"(hi) : "h"((uint16_t)(h >> 16)));
}

/* MXFP8 copies dequantized to BF16 by the quantizing kernel itself (TG_DEQ: the emulated GEMM's operands on a GPU
 * without block-scaled MMA): code value times dq (tg_e8m0_deq), rounded to BF16, dequantize.cu's arithmetic.
 * N codes w[] (4 a word, element 0 low) of one block as N BF16 values (2 a word, element 0 low) into o[N / 2]. */
template <int FMT, int N> __device__ __forceinline__ void tg_mx_deq(const uint32_t *w, float dq, uint32_t *o)
{
#pragma unroll
	for (int k = 0; k < N / 2; k++) {
		float lo, hi;
		tg_fp8x2_to_f32<FMT>(w[k / 2] >> (16 * (k % 2)), lo, hi);
		o[k] = tg_f32x2_to_bf16x2(lo * dq, hi * dq);
	}
}

/* One code (the low byte of c) dequantized, as one BF16 value. */
template <int FMT> __device__ __forceinline__ uint16_t tg_mx_deq1(uint32_t c, float dq)
{
	float lo, hi;
	tg_fp8x2_to_f32<FMT>(c & 0xFFu, lo, hi);
	return (uint16_t)tg_f32x2_to_bf16x2(lo * dq, 0.0f);
}

/* The N MXFP8 codes w[] (4 a word, element 0 low; N = 2: the low half word) of one block dequantized by dq
 * (tg_mx_deq) to N BF16 values at dst (aligned to them), in 4-, 8- or 16-byte stores where store: an MXFP8 copy's
 * BF16 operand (TG_DEQ), written beside the codes. (The values are computed whether stored or not: the casts'
 * tile loops spilled with the conversion under their bounds test.) */
template <int FMT, int N>
__device__ __forceinline__ void tg_store_mx_deq(uint16_t *dst, const uint32_t *w, float dq, bool store = true)
{
	static_assert(N == 2 || N % 4 == 0, "tg_store_mx_deq: N = 2 or a multiple of 4");
	uint32_t o[N / 2];
	tg_mx_deq<FMT, N>(w, dq, o);
	if (!store)
		return;
	if constexpr (N == 2) {
		*reinterpret_cast<uint32_t *>(dst) = o[0];
	} else if constexpr (N == 4) {
		*reinterpret_cast<uint2 *>(dst) = make_uint2(o[0], o[1]);
	} else {
#pragma unroll
		for (int k = 0; k < N / 8; k++)
			reinterpret_cast<uint4 *>(dst)[k] = make_uint4(o[4 * k], o[4 * k + 1], o[4 * k + 2], o[4 * k + 3]);
	}
}

} /* extern "C++" */
#endif

/* Largest finite value of a TG_FMT_* format. */
TG_HD float tg_fmt_max(int fmt)
{
	return fmt == TG_FMT_E4M3 ? TG_E4M3_MAX : fmt == TG_FMT_E5M2 ? TG_E5M2_MAX : TG_E2M1_MAX;
}

/* Convert to a TG_FMT_* format by runtime tag. */
TG_HD uint8_t tg_f32_to_fmt(float x, int fmt)
{
	return fmt == TG_FMT_E4M3 ? tg_f32_to_e4m3(x) : fmt == TG_FMT_E5M2 ? tg_f32_to_e5m2(x) : tg_f32_to_e2m1(x);
}

TG_HD float tg_fmt_to_f32(uint8_t c, int fmt)
{
	return fmt == TG_FMT_E4M3 ? tg_e4m3_to_f32(c) : fmt == TG_FMT_E5M2 ? tg_e5m2_to_f32(c) : tg_e2m1_to_f32(c);
}

#endif
