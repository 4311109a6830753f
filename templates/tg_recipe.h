/* tg_recipe.h: scale math of the quantization recipes, bit-exact.
 *
 * Same dual host/device rules as tg_formats.h (include that first, or let
 * this header include it). Every formula here is the one the CPU reference
 * uses and the kernels must use; ref/NUMERICS.md (the numerics contract)
 * describes them. Divisions are IEEE round-to-nearest
 * (__fdiv_rn on the device, so -use_fast_math cannot change a scale).
 */
#ifndef TG_RECIPE_H
#define TG_RECIPE_H

#include "tg_formats.h"

/* Delayed scaling: (fmt_max / 2^margin) / amax when amax is finite and > 0,
 * else prev_scale; an infinite result becomes FLT_MAX. */
TG_HD float tg_delayed_scale(float amax, float prev_scale, float fmt_max, int margin)
{
	if (!(amax > 0.0f) || !tg_isfinite(amax))
		return prev_scale;
	/* 2^-margin, exact for |margin| < 127 */
	int e = 127 - margin;
	float p = e >= 1 && e <= 254 ? tg_u2f((uint32_t)e << 23) : 1.0f;
	float s = tg_div_rn(fmt_max * p, amax);
	if (tg_isinf(s))
		s = TG_FLT_MAX;
	return s;
}

/* Shared by current and block scaling (TE compute_scale_from_amax):
 * amax < eps -> eps; amax 0, inf or NaN -> 1; fmt_max / amax; inf -> FLT_MAX;
 * pow2: keep sign and exponent, clear the mantissa (round down). */
TG_HD float tg_current_scale(float amax, float fmt_max, float eps, int pow2)
{
	if (amax < eps)
		amax = eps;
	if (amax == 0.0f || !tg_isfinite(amax))
		return 1.0f;
	float s = tg_div_rn(fmt_max, amax);
	if (tg_isinf(s))
		s = TG_FLT_MAX;
	if (tg_isnan(s))
		s = 1.0f;
	if (pow2)
		s = tg_u2f(tg_f2u(s) & 0xFF800000u);
	return s;
}

/* FP8 block scaling (1x128, 128x128) as TE's blockwise quantizer: the same
 * function as current scaling per block, with TE's defaults eps = 0 and
 * pow2 = 1 supplied by the caller. An all-zero block gets scale 1. */
TG_HD float tg_block_scale(float amax, float fmt_max, float eps, int pow2)
{
	return tg_current_scale(amax, fmt_max, eps, pow2);
}

/* 1/scale, IEEE round to nearest (tg_rcp_rn: the bits of tg_div_rn(1, scale), a shorter check on the GPU). */
TG_HD float tg_scale_inv(float scale) { return tg_rcp_rn(scale); }

/* ---- NVFP4 ---- */

/* Per-tensor encode scale S_enc = 448*6 / global_amax, clamped to FLT_MAX;
 * amax 0 or a zero result -> 1. NaN amax gives FLT_MAX (fminf semantics). */
TG_HD float tg_nvfp4_s_enc(float global_amax)
{
	float s = tg_div_rn(TG_E4M3_MAX * TG_E2M1_MAX, global_amax);
	if (!(s < TG_FLT_MAX))
		s = TG_FLT_MAX;
	if (global_amax == 0.0f || s == 0.0f)
		return 1.0f;
	return s;
}

/* The factor S_enc * fl(1/6) a block amax is multiplied by (a kernel takes it once, not a division a block; fl(1/6) =
 * 0x1.555556p-3 as a constant: NVCC does not fold __fdiv_rn of two constants, and tg_emit_row_nvfp4 takes it a block). */
TG_HD float tg_nvfp4_block_factor(float s_enc) { return s_enc * 0x1.555556p-3f; }

/* Block decode scale byte S_dec = E4M3(block_amax * factor), factor = tg_nvfp4_block_factor(S_enc), the
 * product clamped to FLT_MAX first (TE's order of operations). */
TG_HD uint8_t tg_nvfp4_block_scale_f(float block_amax, float factor)
{
	float v = block_amax * factor;
	if (!(v < TG_FLT_MAX) && !tg_isnan(v))
		v = TG_FLT_MAX;
	return tg_f32_to_e4m3(v);
}

/* Block decode scale byte S_dec = E4M3(block_amax * (S_enc * fl(1/6))). */
TG_HD uint8_t tg_nvfp4_block_scale(float block_amax, float s_enc)
{
	return tg_nvfp4_block_scale_f(block_amax, tg_nvfp4_block_factor(s_enc));
}

/* Element multiplier min(1 / (float(S_dec) / S_enc), FLT_MAX). */
TG_HD float tg_nvfp4_elem_scale(uint8_t s_dec, float s_enc)
{
	float r = tg_div_rn(1.0f, tg_div_rn(tg_e4m3_to_f32(s_dec), s_enc));
	return r < TG_FLT_MAX ? r : TG_FLT_MAX;
}

/* alpha of a native NVFP4 GEMM (cuBLASLt VEC16_UE4M3): the MMA applies the
 * E4M3 block scales S_dec, so the product is multiplied by
 *     alpha = 1 / (S_enc_a * S_enc_b)
 * with the product rounded once to FP32 (RN, never fused) and the quotient an
 * IEEE division (RN). A product above FLT_MAX (both global amaxes tiny: their
 * product below 2688^2 / FLT_MAX, about 2.1e-32) gives alpha 0. Used by
 * nvfp4_gemm_alpha.cu and by the reference of the native GEMM. */
TG_HD float tg_nvfp4_gemm_alpha(float s_enc_a, float s_enc_b)
{
#ifdef __CUDA_ARCH__
	return tg_div_rn(1.0f, __fmul_rn(s_enc_a, s_enc_b));
#else
	return tg_div_rn(1.0f, s_enc_a * s_enc_b);
#endif
}

/* ---- Philox4x32-10 (Salmon et al., SC'11; Random123 constants) ---- */

TG_HD uint32_t tg__mulhilo(uint32_t a, uint32_t b, uint32_t *hi)
{
#ifdef __CUDA_ARCH__
	*hi = __umulhi(a, b);
	return a * b;
#else
	uint64_t p = (uint64_t)a * b;
	*hi = (uint32_t)(p >> 32);
	return (uint32_t)p;
#endif
}

/* One Philox4x32-10 block: counter ctr[4], key key[2] -> out[4]. */
TG_HD void tg_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
	uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3];
	uint32_t k0 = key[0], k1 = key[1];
	for (int r = 0; r < 10; r++) {
		uint32_t hi0, hi1;
		uint32_t lo0 = tg__mulhilo(0xD2511F53u, c0, &hi0);
		uint32_t lo1 = tg__mulhilo(0xCD9E8D57u, c2, &hi1);
		uint32_t n0 = hi1 ^ c1 ^ k0, n2 = hi0 ^ c3 ^ k1;
		c0 = n0; c1 = lo1; c2 = n2; c3 = lo0;
		k0 += 0x9E3779B9u;
		k1 += 0xBB67AE85u;
	}
	out[0] = c0; out[1] = c1; out[2] = c2; out[3] = c3;
}

/* The 4 stochastic-rounding words of counters 4 blk .. 4 blk + 3: Philox with key =
 * seed (lo, hi) and counter = (blk lo, blk hi, offset lo, offset hi). */
TG_HD void tg_philox_block(uint64_t seed, uint64_t offset, uint64_t blk, uint32_t out[4])
{
	uint32_t ctr[4] = {(uint32_t)blk, (uint32_t)(blk >> 32), (uint32_t)offset, (uint32_t)(offset >> 32)};
	uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
	tg_philox4x32_10(ctr, key, out);
}

/* Counter-based random word for stochastic rounding: word counter%4 of
 * tg_philox_block(seed, offset, counter/4). Element i of a tensor uses
 * counter = i; a new step bumps offset. */
TG_HD uint32_t tg_philox_rand(uint64_t seed, uint64_t offset, uint64_t counter)
{
	uint32_t out[4];
	tg_philox_block(seed, offset, counter >> 2, out);
	uint32_t i = (uint32_t)(counter & 3); /* selects, not out[i]: a dynamic index puts out[] in local memory */
	return i == 0 ? out[0] : i == 1 ? out[1] : i == 2 ? out[2] : out[3];
}

/* Stochastic rounding to E2M1: |x| (saturated to 6) lies between neighbours
 * lo <= |x| <= hi one E2M1 step apart; round away from lo when
 * rand < frac * 2^32, frac = (|x| - lo) / step (exact). So P(hi) = frac.
 * NaN -> 0x7 like the RN path; sign kept (zero results keep it too).
 * Computed without float<->int conversions (a quarter-rate pipe on the GPU):
 * t = |x| / step is exact; floor(t) from the 2^23 add; rand < frac * 2^32 as
 * rand < ceil(frac * 2^32), taken from frac's bits (tests/unit/test_recipe.c
 * checks it against the conversion-based definition). */
TG_HD uint8_t tg_f32_to_e2m1_sr(float x, uint32_t rand)
{
	uint32_t u = tg_f2u(x);
	uint32_t a = u & 0x7FFFFFFFu;
	uint8_t s = (uint8_t)((u >> 31) << 3);
	if (a > 0x7F800000u)
		return 0x7;
	if (a >= 0x40C00000u) /* >= 6 or inf */
		return (uint8_t)(s | 0x7);
	float ax = tg_u2f(a);
	/* t = ax / step (step 0.5 below 2, 1 in [2,4), 2 in [4,6)): exact, in [0, 4);
	 * the code of lo is floor(t) + base */
	float t = ax * (ax < 2.0f ? 2.0f : ax < 4.0f ? 1.0f : 0.5f);
	uint32_t base = ax < 2.0f ? 0u : ax < 4.0f ? 2u : 4u;
	float rn = (t + 8388608.0f) - 8388608.0f; /* RNE(t), exact */
	float fl = rn > t ? rn - 1.0f : rn;
	uint32_t fb = tg_f2u(t - fl);             /* frac, exact, in [0, 1) */
	/* c = ceil(frac * 2^32) from frac = m * 2^(e - 23) (e <= -1) */
	int e = (int)(fb >> 23) - 127;
	uint32_t m = fb & 0x7FFFFFu;
	if (e > -127)
		m |= 0x800000u;
	else
		e = -126; /* subnormal frac */
	int sh = e + 9;                           /* frac * 2^32 = m * 2^sh */
	uint32_t c;
	if (sh >= 0)
		c = m << sh;                          /* < 2^32: m < 2^24, sh <= 8 */
	else if (sh > -25)
		c = (m >> -sh) + ((m & ((1u << -sh) - 1u)) != 0u);
	else
		c = m != 0u;
	uint32_t up = rand < c;
	uint32_t code = base + (tg_f2u(fl + 8388608.0f) - 0x4B000000u) + up;
	return (uint8_t)(s | code);
}

/* ---- Random Hadamard transform (16x16), host and device ---- */

/* The seed of the RHT sign mask: one fixed value ("tegenRHT" in ASCII) for
 * every tensor of every layer, so both operands of a wgrad GEMM, and layers
 * built from different specs, use the same signs (TE also uses one fixed
 * sign vector for all wgrad operands). */
#define TG_RHT_SEED 0x746567656E524854ull

/* Fully unroll a loop with constant bounds on the device (registers, no local memory). */
#ifdef __CUDACC__
#define TG_UNROLL _Pragma("unroll")
#else
#define TG_UNROLL
#endif

/* Sign vector of the RHT from a seed: bit i of the first Philox word of
 * (key = seed, counter = 0, offset = 0x52485400 "RHT") gives sign i
 * (1 = negative). Returns the 16-bit mask. */
TG_HD uint16_t tg_rht_sign_mask(uint64_t seed)
{
	return (uint16_t)(tg_philox_rand(seed, 0x52485400u, 0) & 0xFFFFu);
}

/* FP32 add/sub/mul rounded to nearest even on host and device (the device
 * intrinsics are never contracted into an FMA nor affected by -use_fast_math). */
TG_HD float tg__add_rn(float a, float b)
{
#ifdef __CUDA_ARCH__
	return __fadd_rn(a, b);
#else
	return a + b;
#endif
}

/* a - b rounded to nearest even (see tg__add_rn). */
TG_HD float tg__sub_rn(float a, float b)
{
#ifdef __CUDA_ARCH__
	return __fsub_rn(a, b);
#else
	return a - b;
#endif
}

/* a * b rounded to nearest even (see tg__add_rn). */
TG_HD float tg__mul_rn(float a, float b)
{
#ifdef __CUDA_ARCH__
	return __fmul_rn(a, b);
#else
	return a * b;
#endif
}

/* y = x * diag(s) * H16 / 4, H16 the Sylvester Hadamard matrix (H[i][j] =
 * (-1)^popcount(i&j)), s_i = -1 where bit i of sign_mask is set. In place
 * (y == x) is allowed.
 *
 * The arithmetic is the definition (the numerics contract), identical on the
 * host and the GPU: (1) flip the signs (exact); (2) a fast Walsh-Hadamard
 * transform in FP32, four butterfly stages h = 1, 2, 4, 8 in that order, each
 * pair (i, i+h) with (i & h) == 0 becoming (v_i + v_{i+h}, v_i - v_{i+h}),
 * every add and subtract rounded to nearest even; (3) multiply by 0.25 (a
 * power of two: exact unless the result is subnormal, and then RN on both
 * sides). Each output is a fixed tree of 4 FP32 roundings, so host and device
 * agree bit for bit, where a double sum rounded once (the previous definition)
 * would cost the GPU 16 FP64 adds per element and a float sum in another
 * order would not match. NaN: every output of a group holding a NaN is NaN
 * (the payload may differ between host and device; E2M1 and the amax treat all
 * NaNs alike). Partial sums overflow to inf only for |x| > FLT_MAX/16. */
TG_HD void tg_rht16(const float x[16], uint16_t sign_mask, float y[16])
{
	float v[16];
	TG_UNROLL
	for (int i = 0; i < 16; i++)
		v[i] = ((sign_mask >> i) & 1) ? -x[i] : x[i];
	TG_UNROLL
	for (int h = 1; h < 16; h <<= 1)
		TG_UNROLL
		for (int i = 0; i < 16; i++)
			if (!(i & h)) {
				float a = v[i], b = v[i + h];
				v[i] = tg__add_rn(a, b);
				v[i + h] = tg__sub_rn(a, b);
			}
	TG_UNROLL
	for (int i = 0; i < 16; i++)
		y[i] = tg__mul_rn(v[i], 0.25f);
}

#ifndef __CUDACC__
/* Delayed-scaling history roll: new[i] = old[i+1], new[L-1] = old[0],
 * new[0] = 0. */
static inline void tg_history_roll(float *hist, int L)
{
	if (L <= 0)
		return;
	float first = hist[0];
	for (int i = 0; i + 1 < L; i++)
		hist[i] = hist[i + 1];
	hist[L - 1] = first;
	hist[0] = 0.0f;
}

/* amax of a history: hist[0] when most_recent, else max over all entries
 * (NaN entries ignored). */
static inline float tg_history_amax(const float *hist, int L, int most_recent)
{
	if (L <= 0)
		return 0.0f;
	if (most_recent)
		return hist[0];
	float m = 0.0f;
	for (int i = 0; i < L; i++)
		if (hist[i] > m)
			m = hist[i];
	return m;
}
#endif

#endif
