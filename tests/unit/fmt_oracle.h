/* fmt_oracle.h: an independent brute-force oracle for FP32 -> narrow format
 * conversions, shared by test_formats.c and exhaustive_f32.c.
 *
 * It shares no code with tg_formats.h: it enumerates every finite
 * non-negative code of the target format with its value computed by ldexp
 * from the fields, then rounds an input by searching the table for its two
 * neighbours and comparing exact double distances (ties to the even code).
 * Saturating formats clamp to the largest finite code; IEEE formats (BF16,
 * FP16) carry inf as the next table value 2^(emax+1), so overflow rounds to
 * inf exactly as IEEE specifies. NaN results are the documented codes. */
#ifndef FMT_ORACLE_H
#define FMT_ORACLE_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { OF_BF16, OF_F16, OF_E4M3, OF_E5M2, OF_E2M1, OF_N };

typedef struct Oracle {
	const char *name;
	int m, emin, sbit, sat;
	uint32_t top;       /* largest table code: max finite (sat) or inf (IEEE) */
	int n;
	double *v;          /* v[c] = value of code c, c = 0..top */
} Oracle;

static inline double oracle_value(int m, int emin, uint32_t c)
{
	uint32_t ef = c >> m, mant = c & ((1u << m) - 1u);
	if (ef == 0)
		return ldexp((double)mant, emin - m);
	return ldexp((double)((1u << m) + mant), (int)ef - 1 + emin - m);
}

static inline void oracle_init(Oracle *o, int which)
{
	static const struct { const char *name; int m, emin, sbit, sat; uint32_t top; } t[OF_N] = {
		{"bf16", 7, -126, 15, 0, 0x7F80},
		{"f16", 10, -14, 15, 0, 0x7C00},
		{"e4m3", 3, -6, 7, 1, 0x7E},
		{"e5m2", 2, -14, 7, 1, 0x7B},
		{"e2m1", 1, 0, 3, 1, 0x7},
	};
	o->name = t[which].name;
	o->m = t[which].m;
	o->emin = t[which].emin;
	o->sbit = t[which].sbit;
	o->sat = t[which].sat;
	o->top = t[which].top;
	o->n = (int)o->top + 1;
	o->v = malloc(sizeof(double) * (size_t)o->n);
	for (uint32_t c = 0; c <= o->top; c++)
		o->v[c] = oracle_value(o->m, o->emin, c);
}

static inline uint32_t oracle_nan(const Oracle *o, uint32_t bits)
{
	if (o->sbit == 15)
		return 0x7FFF;
	if (o->sbit == 3)
		return 0x7;
	(void)bits;
	return 0x7F; /* E4M3 and E5M2: one NaN code (hardware cvt behaviour) */
}

/* Expected code for the FP32 value with these bits. */
static inline uint32_t oracle_round(const Oracle *o, uint32_t bits)
{
	float f;
	memcpy(&f, &bits, 4);
	if (isnan(f))
		return oracle_nan(o, bits);
	uint32_t s = (bits >> 31) << o->sbit;
	double a = fabs((double)f);
	if (a >= o->v[o->top])
		return s | o->top;
	int lo = 0, hi = (int)o->top; /* v[lo] <= a < v[hi] */
	while (hi - lo > 1) {
		int mid = (lo + hi) / 2;
		if (o->v[mid] <= a)
			lo = mid;
		else
			hi = mid;
	}
	double d1 = a - o->v[lo], d2 = o->v[hi] - a;
	uint32_t c;
	if (d1 < d2)
		c = (uint32_t)lo;
	else if (d2 < d1)
		c = (uint32_t)hi;
	else
		c = (lo & 1) ? (uint32_t)hi : (uint32_t)lo;
	return s | c;
}

/* Value of a code by the oracle's own decoding (NaN for NaN codes). */
static inline double oracle_decode(const Oracle *o, uint32_t code)
{
	uint32_t s = (code >> o->sbit) & 1, mag = code & ((1u << o->sbit) - 1u);
	double v;
	if (o->sat) {
		if (o->top == 0x7E && mag == 0x7F)
			return NAN;
		if (o->top == 0x7B && mag > 0x7B)
			return mag == 0x7C ? (s ? -INFINITY : INFINITY) : NAN;
		v = oracle_value(o->m, o->emin, mag);
	} else {
		if (mag > o->top)
			return NAN;
		v = mag == o->top ? INFINITY : oracle_value(o->m, o->emin, mag);
	}
	return s ? -v : v;
}

#endif
