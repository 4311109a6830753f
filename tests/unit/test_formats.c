/* test_formats.c: every FP32 -> narrow conversion of tg_formats.h against
 * the independent oracle of fmt_oracle.h: exhaustively over all BF16 and all
 * FP16 inputs, every rounding boundary of each format (midpoints and their
 * float neighbours, max, just above max, subnormal edges, zeros, inf, NaN),
 * a dense strided + random FP32 sample; every code's round trip and decode;
 * and the checked-in vectors in tests/vectors/formats.txt. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tg_formats.h"
#include "fmt_oracle.h"
#include "vectors.h"

static int failed;
static Oracle O[OF_N];

static void report(const char *name, long bad, const char *detail)
{
	if (bad) {
		printf("FAIL %s: %ld mismatches; first: %s\n", name, bad, detail);
		failed = 1;
	} else {
		printf("ok %s\n", name);
	}
}

static uint32_t impl(int f, float x)
{
	switch (f) {
	case OF_BF16: return tg_f32_to_bf16(x);
	case OF_F16: return tg_f32_to_f16(x);
	case OF_E4M3: return tg_f32_to_e4m3(x);
	case OF_E5M2: return tg_f32_to_e5m2(x);
	default: return tg_f32_to_e2m1(x);
	}
}

static float bits2f(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static uint32_t f2bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }

/* Check one input against every format; count into bad[], keep first detail. */
static void check(uint32_t bits, long *bad, char det[][160])
{
	float x = bits2f(bits);
	for (int f = 0; f < OF_N; f++) {
		uint32_t want = oracle_round(&O[f], bits), got = impl(f, x);
		if (want != got && bad[f]++ == 0)
			snprintf(det[f], 160, "%s(0x%08x = %.9g) = 0x%x, oracle 0x%x", O[f].name, bits,
			         (double)x, got, want);
	}
}

static void run_set(const char *set, const uint32_t *in, size_t n)
{
	long bad[OF_N] = {0};
	char det[OF_N][160];
	for (size_t i = 0; i < n; i++)
		check(in[i], bad, det);
	for (int f = 0; f < OF_N; f++) {
		char name[64];
		snprintf(name, sizeof name, "%s_%s", set, O[f].name);
		report(name, bad[f], det[f]);
	}
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint32_t next32(void)
{
	rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
	return (uint32_t)(rng >> 16);
}

static void test_exhaustive16(void)
{
	uint32_t *in = malloc(sizeof *in * 65536);
	for (uint32_t h = 0; h < 65536; h++)
		in[h] = h << 16; /* every BF16 as FP32 */
	run_set("all_bf16_inputs", in, 65536);
	for (uint32_t h = 0; h < 65536; h++) {
		/* every FP16 as FP32, decoded by the oracle (exact in float) */
		double v = oracle_decode(&O[OF_F16], h);
		in[h] = isnan(v) ? (((uint32_t)(h >> 15) << 31) | 0x7FC00000u | ((uint32_t)(h & 0x3FF) << 13))
		                 : f2bits((float)v);
	}
	run_set("all_f16_inputs", in, 65536);
	free(in);
}

static void test_boundaries(void)
{
	size_t cap = 1 << 20, n = 0;
	uint32_t *in = malloc(sizeof *in * cap);
	for (int f = 0; f < OF_N; f++) {
		const Oracle *o = &O[f];
		for (uint32_t c = 0; c <= o->top && n + 64 < cap; c++) {
			double v = o->v[c];
			double nx = c < o->top ? o->v[c + 1] : 2 * v + 1;
			float pts[8];
			int k = 0;
			pts[k++] = (float)v;
			pts[k++] = (float)((v + nx) / 2); /* the midpoint (exact for these formats) */
			pts[k++] = nextafterf(pts[1], 0);
			pts[k++] = nextafterf(pts[1], INFINITY);
			pts[k++] = nextafterf((float)v, 0);
			pts[k++] = nextafterf((float)v, INFINITY);
			for (int j = 0; j < k; j++) {
				in[n++] = f2bits(pts[j]);
				in[n++] = f2bits(-pts[j]);
			}
		}
	}
	/* specials and FP32 subnormal edges */
	uint32_t sp[] = {0, 0x80000000u, 0x7F800000u, 0xFF800000u, 0x7FC00000u, 0xFFC00000u,
	                 0x7FFFFFFFu, 0xFFFFFFFFu, 0x7F800001u, 0x7FA00000u, 0x7FE00000u, 0xFF800001u,
	                 1, 0x80000001u, 0x007FFFFFu, 0x00800000u, 0x7F7FFFFFu, 0xFF7FFFFFu,
	                 0x47800000u, 0x477FF000u, 0x477FEFFFu, 0x477FF001u, 0x43E00000u, 0x43E80000u,
	                 0x43F00000u, 0x40C00000u, 0x40A00000u, 0x40E00000u, 0x47600000u, 0x47700000u};
	for (size_t i = 0; i < sizeof sp / sizeof sp[0]; i++)
		in[n++] = sp[i];
	run_set("boundaries", in, n);
	free(in);
}

static void test_dense(void)
{
	size_t n = (1u << 24) + (1u << 21);
	uint32_t *in = malloc(sizeof *in * n);
	for (uint32_t i = 0; i < (1u << 24); i++)
		in[i] = (i << 8) | (next32() & 0xFF); /* every 256th pattern, jittered */
	for (size_t i = 1u << 24; i < n; i++)
		in[i] = next32();
	run_set("dense_f32", in, n);
	free(in);
}

static void test_codes(void)
{
	long bad = 0;
	char det[160] = "";
	for (int f = OF_E4M3; f < OF_N; f++) {
		const Oracle *o = &O[f];
		uint32_t ncodes = f == OF_E2M1 ? 16 : 256;
		for (uint32_t c = 0; c < ncodes; c++) {
			double want = oracle_decode(o, c);
			float got = f == OF_E4M3 ? tg_e4m3_to_f32((uint8_t)c)
			          : f == OF_E5M2 ? tg_e5m2_to_f32((uint8_t)c) : tg_e2m1_to_f32((uint8_t)c);
			int ok = isnan(want) ? isnan(got) : (double)got == want && !!signbit(got) == !!signbit(want);
			/* round trip: every non-NaN code maps back to itself */
			if (ok && !isnan(want) && !isinf(want))
				ok = impl(f, got) == c;
			if (ok && isinf(want)) /* E5M2 inf saturates */
				ok = impl(f, got) == (c & 0x80u) + 0x7Bu;
			if (!ok && bad++ == 0)
				snprintf(det, sizeof det, "%s code 0x%x -> %.9g (oracle %.9g) -> 0x%x", o->name, c,
				         (double)got, want, impl(f, got));
		}
	}
	report("decode_and_roundtrip_fp8_fp4", bad, det);
	bad = 0;
	for (uint32_t h = 0; h < 65536; h++) {
		double want = oracle_decode(&O[OF_F16], h);
		float got = tg_f16_to_f32((uint16_t)h);
		int ok = isnan(want) ? isnan(got) : (double)got == want && !!signbit(got) == !!signbit(want);
		if (ok && !isnan(want))
			ok = tg_f32_to_f16(got) == h;
		double wb = oracle_decode(&O[OF_BF16], h);
		float gb = tg_bf16_to_f32((uint16_t)h);
		int okb = isnan(wb) ? isnan(gb) : (double)gb == wb && !!signbit(gb) == !!signbit(wb);
		if (okb && !isnan(wb))
			okb = tg_f32_to_bf16(gb) == h;
		if ((!ok || !okb) && bad++ == 0)
			snprintf(det, sizeof det, "code 0x%04x f16 %.9g bf16 %.9g", h, (double)got, (double)gb);
	}
	report("decode_and_roundtrip_f16_bf16", bad, det);
	/* packed helpers */
	bad = 0;
	for (int i = 0; i < 100000; i++) {
		float a = bits2f(next32()), b = bits2f(next32() >> (next32() & 7));
		if (tg_f32x2_to_e4m3x2(a, b) != (tg_f32_to_e4m3(a) | tg_f32_to_e4m3(b) << 8) ||
		    tg_f32x2_to_e5m2x2(a, b) != (tg_f32_to_e5m2(a) | tg_f32_to_e5m2(b) << 8) ||
		    tg_f32x2_to_e2m1x2(a, b) != (tg_f32_to_e2m1(a) | tg_f32_to_e2m1(b) << 4))
			bad++;
	}
	report("packed_pairs", bad, "lo/hi order");
}

static void test_e8m0(void)
{
	long bad = 0;
	char det[160] = "";
	for (uint32_t e = 0; e < 256; e++) {
		float v = tg_e8m0_to_f32((uint8_t)e);
		int ok = e == 255 ? isnan(v) : (double)v == ldexp(1.0, (int)e - 127);
		if (!ok && bad++ == 0)
			snprintf(det, sizeof det, "e8m0 0x%02x -> %g", e, (double)v);
	}
	/* from_amax: smallest e with 2^(e-127) >= amax * fl(1/fmt_max), oracle by search */
	float fm[3] = {448.0f, 57344.0f, 6.0f};
	for (int k = 0; k < 3; k++)
		for (int i = 0; i < 300000; i++) {
			uint32_t b = i < 256 ? (uint32_t)i << 23 : next32() & 0x7FFFFFFFu;
			if (i >= 256 && i < 512)
				b = ((uint32_t)(i - 256) << 23) | 1u;
			float amax = bits2f(b);
			uint8_t got = tg_e8m0_from_amax(amax, fm[k]);
			uint8_t want;
			if (!isfinite(amax))
				want = 0xFF;
			else {
				double q = (double)(amax * (1.0f / fm[k]));
				int e = 0;
				while (e < 254 && ldexp(1.0, e - 127) < q)
					e++;
				want = (uint8_t)e;
			}
			if (got != want && bad++ == 0)
				snprintf(det, sizeof det, "e8m0_from_amax(%g, %g) = 0x%02x, want 0x%02x",
				         (double)amax, (double)fm[k], got, want);
		}
	/* the dequantizing multiplier, from e and from the quantizing one (tg_e8m0_rcp), the same bits: 2^(e-127),
	 * 1 for e = 0, NaN for 0xFF */
	for (uint32_t e = 0; e < 256; e++) {
		float d = tg_e8m0_deq((uint8_t)e), dr = tg_e8m0_deq_of_rcp(tg_e8m0_rcp((uint8_t)e));
		int ok = e == 255 ? isnan(d) && isnan(dr)
			: f2bits(d) == f2bits(dr) && (double)d == (e == 0 ? 1.0 : ldexp(1.0, (int)e - 127));
		if (!ok && bad++ == 0)
			snprintf(det, sizeof det, "e8m0 0x%02x: deq %g, from rcp %g", e, (double)d, (double)dr);
	}
	report("e8m0", bad, det);
}

/* tests/vectors/formats.txt: "fmt input_bits expected_code" per line. */
static int check_format_vector(const char *line, char *det, size_t detn)
{
	char fmt[16];
	unsigned in, want;
	if (sscanf(line, "%15s %x %x", fmt, &in, &want) != 3)
		return VEC_SKIP;
	float x = bits2f(in);
	unsigned got;
	if (!strcmp(fmt, "bf16")) got = tg_f32_to_bf16(x);
	else if (!strcmp(fmt, "f16")) got = tg_f32_to_f16(x);
	else if (!strcmp(fmt, "e4m3")) got = tg_f32_to_e4m3(x);
	else if (!strcmp(fmt, "e5m2")) got = tg_f32_to_e5m2(x);
	else if (!strcmp(fmt, "e2m1")) got = tg_f32_to_e2m1(x);
	else if (!strcmp(fmt, "e8m0_e4m3")) got = tg_e8m0_from_amax(x, 448.0f);
	else got = 0x10000; /* unknown format: fail */
	if (got == want)
		return VEC_MATCH;
	snprintf(det, detn, "%s 0x%08x -> 0x%x, file says 0x%x", fmt, in, got, want);
	return VEC_MISMATCH;
}

static void test_vectors(void)
{
	char det[200] = "";
	long bad, n = vec_read("vectors_formats", "tests/vectors/formats.txt", check_format_vector, &bad, det, sizeof det);
	if (n >= 0 && n < 20)
		printf("FAIL vectors_formats: only %ld vectors read\n", n);
	if (n < 20)
		failed = 1;
	else
		report("vectors_formats", bad, det);
}

/* E2M1 by way of E4M3 (tg_e2m1_round_scaled, the NVFP4 casts' GPU path) against tg_f32_to_e2m1: every FP32 input
 * with --full (2^32, about 40 s), else every 255th pattern and the 2^16 patterns around each E2M1 midpoint and
 * boundary (0.25 .. 6 and their neighbours, both signs, NaN, inf, subnormals). */
static void test_e2m1_via_e4m3(int full)
{
	long bad = 0, bad_value = 0;
	char det[160] = "", det_value[160] = "";
	const uint64_t step = full ? 1 : 255;
	static const float around[] = {0.0f, 0.25f, 0.5f, 0.75f, 1.0f, 1.25f, 1.5f, 1.75f, 2.0f, 2.5f, 3.0f, 3.5f, 4.0f, 5.0f,
		6.0f, 8.0f, 1e-38f, 1e38f};
	for (int pass = 0; pass < 2; pass++) {
		uint64_t n = pass ? (uint64_t)(sizeof around / sizeof *around) * 2 * 65536 : (1ull << 32) / step;
		for (uint64_t i = 0; i < n; i++) {
			uint32_t bits;
			if (pass) {
				const uint64_t k = i / 65536, j = i % 65536;
				bits = (tg_f2u(around[k / 2]) + (uint32_t)j - 32768u) ^ (k % 2 ? 0x80000000u : 0u);
			} else
				bits = (uint32_t)(i * step);
			const float x = tg_u2f(bits);
			const float r = tg_e2m1_round_scaled(x * 0x1p-6f);
			const uint8_t want = tg_f32_to_e2m1(x), got = tg_e2m1_of_e4m3(tg_f32_to_e4m3(r));
			if (want != got && bad++ == 0)
				snprintf(det, sizeof det, "x 0x%08x (%.9g): e2m1 0x%x, via e4m3 0x%x", bits, (double)x, want, got);
			/* nvfp4_quantize.cu's e2m1x8_deq: r * 64 is the code's value, bit for bit (a NaN r: code 7) */
			const int same = tg_isnan(r) ? want == 0x7 : tg_f2u(r * 64.0f) == tg_f2u(tg_e2m1_to_f32(want));
			if (!same && bad_value++ == 0)
				snprintf(det_value, sizeof det_value, "x 0x%08x: r * 64 = %.9g, code 0x%x", bits, (double)(r * 64.0f), want);
		}
	}
	report(full ? "e2m1_via_e4m3_every_fp32" : "e2m1_via_e4m3", bad, det);
	report(full ? "e2m1_value_of_rounded_every_fp32" : "e2m1_value_of_rounded", bad_value, det_value);
	/* and its NaN fix: every code's BF16 value e2m1 * dq is at most BF16(6 dq) (min.bf16x2 leaves it), so only a NaN
	 * element (code 7) is taken to it; dq over finite powers of two and random finite bit patterns, zero and
	 * subnormals included (dq = S_dec / S_enc is finite: S_enc >= 2688 / FLT_MAX) */
	long bad_min = 0;
	char det_min[160] = "";
	for (int i = 0; i < 20000 && !full; i++) {
		const float dq = i < 255 ? tg_u2f((uint32_t)i << 23) * (i % 2 ? 1.5f : 1.0f) : tg_u2f(next32() & 0x7F7FFFFFu);
		const uint16_t c6 = tg_f32_to_bf16(6.0f * dq);
		for (uint8_t code = 0; code < 16; code++) {
			const uint16_t v = tg_f32_to_bf16(tg_e2m1_to_f32(code) * dq);
			const float vf = tg_bf16_to_f32(v), cf = tg_bf16_to_f32(c6);
			const uint16_t m = vf < cf || (vf == cf && (v & 0x8000u)) ? v : c6; /* min.bf16x2's pick */
			if (m != v && bad_min++ == 0)
				snprintf(det_min, sizeof det_min, "dq %.9g code 0x%x: 0x%04x above BF16(6 dq) 0x%04x", (double)dq, code, v, c6);
		}
	}
	if (!full)
		report("e2m1_deq_below_six", bad_min, det_min);
	/* the packed eight (tg_e2m1x8, the host form of its byte permute; one product an element where its multiplier
	 * folds, tg__scaled6) against eight scalar codes of the rounded product y * mult */
	bad = 0;
	for (int i = 0; i < 400000 && !full; i++) {
		/* i % 4 == 1, 3: any bits; 0: |y| in [2^-4, 2^4) (every code, ties included) times mult in [0.5, 2); 2: mult
		 * anywhere in (0, FLT_MAX] (subnormal, near the fold's bound 2^-120, huge) and y * mult in [2^-5, 2^4) as far as
		 * y = t / mult is finite (else y is +-inf or FLT_MAX) */
		const int kind = i % 4;
		const uint32_t mb = next32();
		float y[8], mult = kind % 2 ? tg_u2f((mb & 0x3FFFFFFFu) | 0x30000000u)
			: kind == 0 ? tg_u2f(0x3F000000u + (mb & 0xFFFFFFu))
			: mb % 3 == 0 ? tg_u2f(((2u + (mb >> 8) % 5u) << 23) + (next32() & 0x7FFFFFu)) /* 2^-125 .. 2^-119 */
			: tg_u2f((1u + next32() % 0x7F7FFFFFu)); /* any positive finite */
		uint32_t want = 0;
		for (int k = 0; k < 8; k++) {
			const uint32_t b = next32();
			if (kind == 2) { /* t: random, or within 8 ulps of a rounding midpoint (where a product's error shows) */
				static const float mid[] = {0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f};
				const float t = b & 8u ? tg_u2f(tg_f2u(mid[(b >> 4) % 7]) + (b >> 8) % 17u - 8u) * (b & 0x80000000u ? -1.0f : 1.0f)
					: tg_u2f((b & 0x80000000u) | ((122u + (b >> 23 & 7u)) << 23) | (b & 0x7FFFFFu));
				y[k] = k == 7 && b % 5 == 0 ? (b & 1 ? 3.4028234664e38f : -3.4028234664e38f) : t / mult;
			} else
				y[k] = kind % 2 ? tg_u2f(b) : tg_u2f((b & 0x80000000u) | ((123u + (b >> 23 & 7u)) << 23) | (b & (next32() % 3 ? 0x7FFFFFu : 0x600000u)));
			want |= (uint32_t)tg_f32_to_e2m1(y[k] * mult) << (4 * k);
		}
		const uint32_t got = tg_e2m1x8(y, mult);
		if (got != want && bad++ == 0)
			snprintf(det, sizeof det, "mult %.9g: codes 0x%08x, packed 0x%08x", (double)mult, want, got);
	}
	if (!full)
		report("e2m1x8_packed", bad, det);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--full")) {
		test_e2m1_via_e4m3(1);
		return failed;
	}
	for (int f = 0; f < OF_N; f++)
		oracle_init(&O[f], f);
	test_codes();
	test_e8m0();
	test_exhaustive16();
	test_boundaries();
	test_dense();
	test_vectors();
	test_e2m1_via_e4m3(0);
	for (int f = 0; f < OF_N; f++)
		free(O[f].v);
	return failed;
}
