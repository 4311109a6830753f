/* test_backward.c: the CPU reference of the backward element-wise ops
 * (ref/backward.c, templates/tg_backward.h).
 *
 * - tg_bwd_exp_nonpos (the sigmoid's branch-free form) against tg_bwd_exp, bit for bit, on every 61st
 *   float <= 0 and the edges of its clamp and two-step product;
 * - tg_bwd_exp against double exp on a sweep of every 97th float in
 *   [-104, 89] (bound: 2 ulps; the measured maximum is printed), and its
 *   edges (overflow, gradual underflow, NaN, +-inf, +-0);
 * - the sigmoid pair against double (bound 4 ulps each);
 * - dglu, every activation x input dtype: the double analytic derivative
 *   checked against a central finite difference of the double forward
 *   (ref_glu1's formulas, GEGLU in its tanh form; relative 1e-6, kinks
 *   skipped), then the FP32 reference against the analytic derivative
 *   (|err| <= 16 * 2^-24 * |g*lin| * (|s| + |a*dz*s*(1-s)|) * (1 + |z|/4) for
 *   d_gate, 8 * 2^-24 * |g*act| * (1 + |z|/2) for d_lin, z the sigmoid's
 *   argument, whose rounding moves s by |z| units; plus 2^-126 absolute for
 *   results that underflow); special values (0, +-inf, NaN, the
 *   clamp edges) with exact expected results;
 * - dnorm (RMSNorm, LayerNorm, zero-centered, residual gradient; x and d_out
 *   in bf16/fp16/fp32; shapes 1x64, 5x160, 217x208, 993x512): the double
 *   formula against a finite difference of the double forward loss
 *   sum(d_out * y) (relative 1e-6), the FP32 reference against the double
 *   formula (|err| <= (log2(cols) + 8) * 2^-24 * rs * (|dyg| + mean|dyg|
 *   + |xhat| * mean|dyg*xhat|)), d_gamma and d_beta against double sums
 *   (|err| <= (rows/32 + 32) * 2^-24 * sum|terms|); NaN propagation;
 * - the reduction orders: the tree sum reproduced by the kernels' layouts
 *   (two-pass: vector subtrees, xor butterflies over 32 lanes, a pairwise
 *   tree over the vector groups; one-pass: the same, then a tree over the
 *   warps and one over each thread's vectors, 32..1024 threads) for several
 *   widths and vector sizes, padding invariance; d_gamma = the chunk partials reduced in order; the same bits
 *   for every column tiling and on every call; dbias likewise;
 * - ref_norm_stats against the double statistics of ref_rmsnorm /
 *   ref_layernorm (4 ulps).
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backward.h"
#include "check.h"

#define EPS32 (1.0 / 16777216.0)

static uint64_t rs_state = 0x9E3779B97F4A7C15ull;
static double urand(void) /* uniform in [-1, 1) */
{
	rs_state ^= rs_state << 13;
	rs_state ^= rs_state >> 7;
	rs_state ^= rs_state << 17;
	return (double)(rs_state >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

/* Distance in units in the last place of the FP32 value nearest to want. */
static double ulps(float got, double want)
{
	if (isnan(want) || isnan(got))
		return isnan(want) && isnan(got) ? 0.0 : 1e30;
	if (isinf(want) || isinf(got))
		return (double)got == want ? 0.0 : 1e30;
	double w = fabs(want);
	double u = w < FLT_MIN ? ldexp(1.0, -149) : ldexp(1.0, ilogb(w) - 23);
	return fabs((double)got - want) / u;
}

static int same_bits(float a, float b)
{
	if (isnan(a) || isnan(b))
		return isnan(a) && isnan(b);
	return tg_f2u(a) == tg_f2u(b);
}

/* ---- exp, sigmoid ---- */

static void test_exp(void)
{
	double worst = 0.0;
	float at = 0.0f;
	uint32_t lo = tg_f2u(-104.0f), hi = tg_f2u(89.0f);
	for (uint32_t u = 0; u <= hi; u += 97) { /* [0, 89] */
		float x = tg_u2f(u);
		double e = ulps(tg_bwd_exp(x), exp((double)x));
		if ((double)exp((double)x) > FLT_MAX) /* the true value rounds to inf or FLT_MAX */
			e = tg_isinf(tg_bwd_exp(x)) == isinf((float)exp((double)x)) ? 0.0 : 1e30;
		if (e > worst)
			worst = e, at = x;
	}
	for (uint32_t u = 0x80000000u; u <= lo; u += 97) { /* [-104, -0] */
		float x = tg_u2f(u);
		double e = ulps(tg_bwd_exp(x), exp((double)x));
		if (e > worst)
			worst = e, at = x;
	}
	check_line("backward/", worst <= 2.0, "exp-sweep", "max %.3f ulps at %a", worst, at);
	printf("   (tg_bwd_exp: max %.3f ulps)\n", worst);
	float inf = tg_u2f(0x7F800000u);
	int ok = tg_bwd_exp(0.0f) == 1.0f && tg_bwd_exp(-0.0f) == 1.0f && tg_bwd_exp(inf) == inf &&
	         tg_bwd_exp(-inf) == 0.0f && tg_isnan(tg_bwd_exp(tg_nan())) && tg_bwd_exp(89.5f) == inf &&
	         tg_bwd_exp(88.8f) == inf && tg_isfinite(tg_bwd_exp(88.72f)) && tg_bwd_exp(-110.0f) == 0.0f &&
	         ulps(tg_bwd_exp(-100.0f), exp(-100.0)) <= 1.0 && ulps(tg_bwd_exp(-103.5f), exp(-103.5)) <= 1.0 &&
	         tg_bwd_exp(1e-30f) == 1.0f;
	check_line("backward/", ok, "exp-edges", "an edge value is off");
	/* the sigmoid's branch-free form: the same bits for every x <= 0 (every 61st float here; harness_bwd takes
	 * all of them on the GPU), the clamp and the two-step edges, -inf and NaN */
	long bad = 0;
	uint32_t first = 0;
	for (uint64_t u = 0x80000000u; u <= 0xFF800000u; u += 61) {
		float x = tg_u2f((uint32_t)u), a = tg_bwd_exp_nonpos(x), b = tg_bwd_exp(x);
		if (tg_f2u(a) != tg_f2u(b) && !bad++)
			first = (uint32_t)u;
	}
	static const float edge[] = {-0.0f, -104.0f, -103.99999f, -104.00001f, -86.6f, -86.64f, -86.7f, -87.33654f, -88.0f,
	                             -1e-30f, -1e30f};
	for (size_t i = 0; i < sizeof edge / sizeof edge[0]; i++)
		if (tg_f2u(tg_bwd_exp_nonpos(edge[i])) != tg_f2u(tg_bwd_exp(edge[i])) && !bad++)
			first = tg_f2u(edge[i]);
	for (int k = -152; k <= 0; k++) { /* every n of the range, at the boundaries of its reduction interval */
		float x = (float)(((double)k - 0.5) * 0.6931471805599453);
		for (int d = -2; d <= 2; d++) {
			float y = tg_u2f(tg_f2u(x) + (uint32_t)d);
			if (tg_f2u(tg_bwd_exp_nonpos(y)) != tg_f2u(tg_bwd_exp(y)) && !bad++)
				first = tg_f2u(y);
		}
	}
	ok = tg_bwd_exp_nonpos(-inf) == 0.0f && tg_isnan(tg_bwd_exp_nonpos(tg_nan())) &&
	     tg_isnan(tg_bwd_exp_nonpos(-tg_bwd_abs(tg_nan())));
	check_line("backward/", ok && !bad, "exp-nonpos", "%ld inputs differ from tg_bwd_exp (first 0x%08x), or -inf/NaN", bad,
	           first);
}

static void test_sigmoid(void)
{
	double worst = 0.0;
	float at = 0.0f;
	for (int i = 0; i < 200000; i++) {
		float z = (float)(urand() * 120.0);
		float s, sc;
		tg_bwd_sigmoid2(z, &s, &sc);
		double ds = 1.0 / (1.0 + exp(-(double)z)), dc = 1.0 / (1.0 + exp((double)z));
		double e = fmax(ulps(s, ds), ulps(sc, dc));
		if (e > worst)
			worst = e, at = z;
	}
	float s, sc, inf = tg_u2f(0x7F800000u);
	int ok = worst <= 4.0;
	tg_bwd_sigmoid2(inf, &s, &sc);
	ok = ok && s == 1.0f && sc == 0.0f;
	tg_bwd_sigmoid2(-inf, &s, &sc);
	ok = ok && s == 0.0f && sc == 1.0f;
	tg_bwd_sigmoid2(0.0f, &s, &sc);
	ok = ok && s == 0.5f && sc == 0.5f;
	tg_bwd_sigmoid2(tg_nan(), &s, &sc);
	ok = ok && tg_isnan(s) && tg_isnan(sc);
	check_line("backward/", ok, "sigmoid", "max %.3f ulps at %a (or an edge value)", worst, at);
}

/* ---- dglu ---- */

static const char *act_name[] = {"swiglu", "geglu", "reglu", "qgeglu", "sreglu", "clamped_swiglu"};
#define LIMIT 7.0f
#define ALPHA 1.702f

static double dsig(double z) { return 1.0 / (1.0 + exp(-z)); }

/* The forward in double (ref_glu1's formulas; GEGLU in its tanh form). */
static double fwd_d(int act, double a, double b)
{
	switch (act) {
	case REF_SWIGLU: return a * dsig(a) * b;
	case REF_GEGLU: return 0.5 * a * (1.0 + tanh(0.7978845608028654 * (a + 0.044715 * a * a * a))) * b;
	case REF_REGLU: return (a > 0 ? a : 0) * b;
	case REF_QGEGLU: return a * dsig(1.702 * a) * b;
	case REF_SREGLU: return (a > 0 ? a * a : 0) * b;
	default: {
		double l = LIMIT, al = ALPHA;
		double ac = a > l ? l : a, bc = b > l ? l : b < -l ? -l : b;
		return ac * dsig(al * ac) * (bc + 1.0);
	}
	}
}

/* The analytic derivative in double: *da = g*lin*act'(a), *db = g*act(a)*lin'(b);
 * *scale_a, *scale_b: the error scales of the FP32 computation. */
static void dglu_d(int act, double a, double b, double g, double *da, double *db, double *scale_a, double *scale_b)
{
	double lin = b, linp = 1.0, av, dact, mag, zmag = 0;
	if (act == REF_REGLU) {
		av = a > 0 ? a : 0;
		dact = a > 0 ? 1 : 0;
		mag = fabs(dact);
	} else if (act == REF_SREGLU) {
		av = a > 0 ? a * a : 0;
		dact = a > 0 ? 2 * a : 0;
		mag = fabs(dact);
	} else {
		double ae = a, z, dz;
		if (act == REF_SWIGLU) {
			z = a, dz = 1;
		} else if (act == REF_QGEGLU) {
			z = (double)TG_BWD_QGELU_K * a, dz = TG_BWD_QGELU_K;
		} else if (act == REF_GEGLU) {
			double K = TG_BWD_GELU_K, C = TG_BWD_GELU_C;
			z = K * (a + C * a * a * a), dz = K * (1 + 3 * C * a * a);
		} else {
			double l = LIMIT;
			ae = a > l ? l : a;
			z = (double)ALPHA * ae, dz = ALPHA;
			lin = (b > l ? l : b < -l ? -l : b) + 1.0;
			linp = (b > l || b < -l) ? 0.0 : 1.0;
		}
		double s = dsig(z);
		zmag = fabs(z);
		av = ae * s;
		dact = s + ae * dz * s * (1 - s);
		mag = fabs(s) + fabs(ae * dz * s * (1 - s));
		if (act == REF_CLAMPED_SWIGLU && a > LIMIT)
			dact = 0, mag = 0;
	}
	*da = g * lin * dact;
	*db = g * av * linp;
	/* rounding z perturbs s by the relative amount |z| * (1-s) * 2^-24, at most |z| units */
	*scale_a = fabs(g * lin) * mag * (1 + zmag / 4);
	*scale_b = fabs(g * av) * linp * (1 + zmag / 2);
}

/* Finite-difference check of the analytic double derivative, away from kinks. */
static void test_dglu_fd(int act)
{
	double worst = 0.0;
	for (int i = 0; i < 4000; i++) {
		double a = urand() * 9, b = urand() * 9, g = urand();
		double h = 1e-5 * fmax(1.0, fabs(a));
		if ((act == REF_REGLU || act == REF_SREGLU) && fabs(a) < 4 * h)
			continue;
		if (act == REF_CLAMPED_SWIGLU && (fabs(a - LIMIT) < 4 * h || fabs(fabs(b) - LIMIT) < 4 * h))
			continue;
		double da, db, sa, sb;
		dglu_d(act, a, b, g, &da, &db, &sa, &sb);
		double fa = g * (fwd_d(act, a + h, b) - fwd_d(act, a - h, b)) / (2 * h);
		double hb = 1e-5 * fmax(1.0, fabs(b));
		double fb = g * (fwd_d(act, a, b + hb) - fwd_d(act, a, b - hb)) / (2 * hb);
		double e = fmax(fabs(fa - da) / (1 + fabs(da)), fabs(fb - db) / (1 + fabs(db)));
		if (e > worst)
			worst = e;
	}
	char name[64];
	snprintf(name, sizeof name, "dglu-fd/%s", act_name[act]);
	check_line("backward/", worst <= 1e-6, name, "analytic vs finite difference: %.3g", worst);
}

/* The FP32 reference (through ref_dglu, every input dtype) against the double derivative. */
static void test_dglu_ref(int act, int dt)
{
	enum { R = 7, C = 160 };
	static const char *dtn[] = {"f32", "bf16", "f16"};
	size_t esz = dt == REF_F32 ? 4 : 2;
	void *h = malloc(esz * R * 2 * C), *g = malloc(esz * R * C);
	float *dh = malloc(sizeof *dh * R * 2 * C);
	double range = act == REF_CLAMPED_SWIGLU ? 10 : act == REF_SREGLU ? 4 : 12;
	for (int i = 0; i < R * 2 * C; i++)
		ref_store(h, dt, (size_t)i, (float)(urand() * range));
	for (int i = 0; i < R * C; i++)
		ref_store(g, dt, (size_t)i, (float)urand());
	ref_dglu(act, h, dt, g, dt, R, C, LIMIT, ALPHA, dh);
	double wa = 0, wb = 0;
	int exact = 1;
	for (int r = 0; r < R; r++)
		for (int c = 0; c < C; c++) {
			size_t ia = (size_t)r * 2 * C + c, ib = ia + C;
			float a = ref_load(h, dt, ia), b = ref_load(h, dt, ib), gg = ref_load(g, dt, (size_t)r * C + c);
			float fa, fb;
			tg_dglu1(act, a, b, gg, LIMIT, ALPHA, &fa, &fb);
			exact = exact && same_bits(fa, dh[ia]) && same_bits(fb, dh[ib]);
			double da, db, sa, sb;
			dglu_d(act, a, b, gg, &da, &db, &sa, &sb);
			/* + an absolute 2^-126 per unit of |g*lin|*(1+|a|) (results that underflow FP32) */
			double tiny = ldexp(1.0, -126) * (1 + fabs((double)gg * b) * (1 + fabs(a)));
			double ea = fabs(dh[ia] - da) / (sa * EPS32 + tiny), eb = fabs(dh[ib] - db) / (sb * EPS32 + tiny);
			if (ea > wa)
				wa = ea;
			if (eb > wb)
				wb = eb;
		}
	char name[80];
	snprintf(name, sizeof name, "dglu/%s/%s", act_name[act], dtn[dt]);
	check_line("backward/", exact && wa <= 16 && wb <= 8, name,
	           "layout %s; d_gate err %.2f, d_lin err %.2f (units of 2^-24 * scale; bounds 16, 8)",
	           exact ? "ok" : "WRONG", wa, wb);
	if (dt == REF_F32)
		printf("   (%s: d_gate max %.2f, d_lin max %.2f units)\n", act_name[act], wa, wb);
	free(h);
	free(g);
	free(dh);
}

/* Special values with exact expected results. */
static void test_dglu_special(void)
{
	const float inf = tg_u2f(0x7F800000u), nan = tg_nan();
	struct { int act; float a, b, g, da, db; } t[] = {
		{REF_SWIGLU, 0.0f, 2.0f, 1.0f, 1.0f, 0.0f},           /* silu'(0) = 1/2, silu(0) = 0 */
		{REF_SWIGLU, inf, 3.0f, 2.0f, 6.0f, inf},             /* silu'(+inf) = 1 (the limit) */
		{REF_SWIGLU, -inf, 3.0f, 2.0f, 0.0f, nan},            /* silu'(-inf) = 0; -inf*0: NaN as the forward */
		{REF_SWIGLU, nan, 3.0f, 2.0f, nan, nan},
		{REF_SWIGLU, 1.0f, 3.0f, 0.0f, 0.0f, 0.0f},           /* zero gradient */
		{REF_SWIGLU, 200.0f, 1.0f, 1.0f, 1.0f, 200.0f},       /* sigmoid saturated: act' = s = 1 */
		{REF_GEGLU, 0.0f, 2.0f, 1.0f, 1.0f, 0.0f},
		{REF_GEGLU, 3e19f, 1.0f, 1.0f, 1.0f, 3e19f},          /* a^2 overflows: act' = s, no NaN */
		{REF_GEGLU, -3e19f, 1.0f, 1.0f, 0.0f, -0.0f},
		{REF_REGLU, 0.0f, 2.0f, 1.0f, 0.0f, 0.0f},            /* relu'(0) = 0 as TE */
		{REF_REGLU, 1.5f, 2.0f, 3.0f, 6.0f, 4.5f},
		{REF_REGLU, -1.5f, 2.0f, 3.0f, 0.0f, 0.0f},
		{REF_REGLU, nan, 2.0f, 3.0f, 0.0f, 0.0f},             /* the forward maps NaN to 0 */
		{REF_SREGLU, 3.0f, 2.0f, 0.5f, 6.0f, 4.5f},
		{REF_SREGLU, -3.0f, 2.0f, 0.5f, 0.0f, 0.0f},
		{REF_QGEGLU, 0.0f, 4.0f, 1.0f, 2.0f, 0.0f},
		{REF_CLAMPED_SWIGLU, 7.5f, 1.0f, 1.0f, 0.0f, 0.0f},   /* a > limit: d_gate 0; b inside: d_lin = act(7) */
		{REF_CLAMPED_SWIGLU, 1.0f, 7.5f, 1.0f, 0.0f, 0.0f},   /* b > limit: d_lin 0 (d_gate checked below) */
		{REF_CLAMPED_SWIGLU, 1.0f, -7.5f, 1.0f, 0.0f, 0.0f},
		{REF_CLAMPED_SWIGLU, 0.0f, -1.0f, 1.0f, 0.0f, 0.0f},  /* lin = b + 1 = 0 */
		{REF_CLAMPED_SWIGLU, nan, 1.0f, 1.0f, nan, nan},      /* not masked (TE would give 0) */
	};
	int ok = 1;
	char det[200] = "";
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		float da, db;
		tg_dglu1(t[i].act, t[i].a, t[i].b, t[i].g, LIMIT, ALPHA, &da, &db);
		int skip_db = t[i].act == REF_CLAMPED_SWIGLU && (i == 16);
		int skip_da = t[i].act == REF_CLAMPED_SWIGLU && (i == 17 || i == 18);
		if ((!skip_da && !same_bits(da, t[i].da) && !(da == 0 && t[i].da == 0)) ||
		    (!skip_db && !same_bits(db, t[i].db) && !(db == 0 && t[i].db == 0))) {
			ok = 0;
			snprintf(det, sizeof det, "case %zu (%s a=%g b=%g): da %g db %g, want %g %g", i, act_name[t[i].act],
			         t[i].a, t[i].b, da, db, t[i].da, t[i].db);
		}
	}
	/* clamp edges: a == limit is inside (act' of the unclamped), b == +-limit inside */
	float da, db, da2, db2;
	tg_dglu1(REF_CLAMPED_SWIGLU, LIMIT, LIMIT, 1.0f, LIMIT, ALPHA, &da, &db);
	double s = dsig((double)ALPHA * LIMIT);
	double want_da = 8.0 * (s + (double)ALPHA * LIMIT * s * (1 - s)), want_db = LIMIT * s;
	if (ulps(da, want_da) > 8 || ulps(db, want_db) > 8) {
		ok = 0;
		snprintf(det, sizeof det, "edge a=b=limit: da %g db %g, want %g %g", da, db, want_da, want_db);
	}
	tg_dglu1(REF_CLAMPED_SWIGLU, LIMIT, -LIMIT, 1.0f, LIMIT, ALPHA, &da2, &db2);
	if (ulps(da2, -6.0 / 8.0 * want_da) > 8 || ulps(db2, want_db) > 8) {
		ok = 0;
		snprintf(det, sizeof det, "edge b=-limit: da %g db %g", da2, db2);
	}
	/* just outside: a above the limit by one ulp, b likewise */
	float up = tg_u2f(tg_f2u(LIMIT) + 1);
	tg_dglu1(REF_CLAMPED_SWIGLU, up, -up, 1.0f, LIMIT, ALPHA, &da2, &db2);
	if (da2 != 0.0f || db2 != 0.0f) {
		ok = 0;
		snprintf(det, sizeof det, "one ulp outside: da %g db %g, want 0 0", da2, db2);
	}
	/* b NaN: lin NaN so d_gate NaN; d_lin stays live (act(a) finite) */
	tg_dglu1(REF_CLAMPED_SWIGLU, 1.0f, tg_nan(), 1.0f, LIMIT, ALPHA, &da2, &db2);
	if (!tg_isnan(da2) || !tg_isfinite(db2)) {
		ok = 0;
		snprintf(det, sizeof det, "b NaN: da %g db %g", da2, db2);
	}
	check_line("backward/", ok, "dglu-special", "%s", det);
}

/* ---- dnorm ---- */

/* Double forward loss sum(dy * y) of one row, stats from x (double). */
static double norm_loss(int layer, const double *x, const double *w, const double *dy, int C, double eps)
{
	double m = 0, v = 0, L = 0;
	if (layer) {
		for (int c = 0; c < C; c++)
			m += x[c];
		m /= C;
	}
	for (int c = 0; c < C; c++)
		v += (x[c] - m) * (x[c] - m);
	double r = 1 / sqrt(v / C + eps);
	for (int c = 0; c < C; c++)
		L += dy[c] * (x[c] - m) * r * w[c];
	return L;
}

/* Double analytic d_in of one row given stats m, r. */
static void dnorm_row_d(int layer, const double *x, const double *w, const double *dy, int C, double m, double r,
                        double *dx)
{
	double s1 = 0, s2 = 0;
	for (int c = 0; c < C; c++) {
		double xh = (x[c] - m) * r;
		s1 += dy[c] * w[c];
		s2 += dy[c] * w[c] * xh;
	}
	for (int c = 0; c < C; c++) {
		double xh = (x[c] - m) * r;
		dx[c] = r * (dy[c] * w[c] - (layer ? s1 / C : 0) - xh * s2 / C);
	}
}

static void test_dnorm_fd(int layer)
{
	enum { C = 24 };
	double x[C], w[C], dy[C], dx[C], worst = 0, eps = 1e-5;
	for (int trial = 0; trial < 50; trial++) {
		for (int c = 0; c < C; c++)
			x[c] = urand() * 3 + (layer ? 1.5 : 0), w[c] = 1 + urand() * 0.5, dy[c] = urand();
		double m = 0, v = 0;
		if (layer) {
			for (int c = 0; c < C; c++)
				m += x[c];
			m /= C;
		}
		for (int c = 0; c < C; c++)
			v += (x[c] - m) * (x[c] - m);
		dnorm_row_d(layer, x, w, dy, C, m, 1 / sqrt(v / C + eps), dx);
		double mx = 0;
		for (int c = 0; c < C; c++)
			mx = fmax(mx, fabs(dx[c]));
		for (int c = 0; c < C; c++) {
			double h = 1e-5, keep = x[c];
			x[c] = keep + h;
			double lp = norm_loss(layer, x, w, dy, C, eps);
			x[c] = keep - h;
			double lm = norm_loss(layer, x, w, dy, C, eps);
			x[c] = keep;
			worst = fmax(worst, fabs((lp - lm) / (2 * h) - dx[c]) / mx);
		}
	}
	check_line("backward/", worst <= 1e-6, layer ? "dnorm-fd/layernorm" : "dnorm-fd/rmsnorm",
	           "analytic vs finite difference: %.3g", worst);
}

static void test_dnorm_ref(int layer, int zc, int dres, int dt, int R, int C)
{
	static const char *dtn[] = {"f32", "bf16", "f16"};
	size_t n = (size_t)R * C, esz = dt == REF_F32 ? 4 : 2;
	void *x = malloc(esz * n), *dy = malloc(esz * n), *dr = malloc(esz * n);
	float *gamma = malloc(sizeof(float) * C), *rsig = malloc(sizeof(float) * R), *mu = malloc(sizeof(float) * R);
	float *dx = malloc(sizeof(float) * n), *dg = malloc(sizeof(float) * C), *db = malloc(sizeof(float) * C);
	for (size_t i = 0; i < n; i++) {
		ref_store(x, dt, i, (float)(urand() * 2 + (layer ? 0.7 : 0)));
		ref_store(dy, dt, i, (float)urand());
		ref_store(dr, dt, i, (float)(urand() * 0.1));
	}
	for (int c = 0; c < C; c++)
		gamma[c] = (float)(zc ? urand() * 0.2 : 1 + urand() * 0.3);
	ref_norm_stats(layer, x, dt, R, C, 1e-5f, mu, rsig);
	ref_dnorm(layer, x, dt, rsig, layer ? mu : NULL, gamma, zc, dy, dres ? dr : NULL, dt, dt, R, C, dx, dg,
	          layer ? db : NULL);
	double wx = 0, wg = 0, wb = 0, k = log2((double)C) + 8;
	double *xd = malloc(sizeof(double) * C), *wd = malloc(sizeof(double) * C), *dyd = malloc(sizeof(double) * C);
	double *dxd = malloc(sizeof(double) * C), *sg = calloc((size_t)C, sizeof(double)), *sb = calloc((size_t)C, sizeof(double));
	double *ag = calloc((size_t)C, sizeof(double)), *ab = calloc((size_t)C, sizeof(double));
	for (int r = 0; r < R; r++) {
		double m = layer ? mu[r] : 0, rr = rsig[r], a1 = 0, a2 = 0;
		for (int c = 0; c < C; c++) {
			size_t i = (size_t)r * C + c;
			xd[c] = ref_load(x, dt, i);
			wd[c] = (double)gamma[c] + (zc ? 1.0 : 0.0);
			dyd[c] = ref_load(dy, dt, i);
			double xh = (xd[c] - m) * rr;
			a1 += fabs(dyd[c] * wd[c]);
			a2 += fabs(dyd[c] * wd[c] * xh);
			sg[c] += dyd[c] * (double)tg_dnorm_xhat((float)xd[c], (float)m, (float)rr);
			ag[c] += fabs(dyd[c] * xh);
			sb[c] += dyd[c];
			ab[c] += fabs(dyd[c]);
		}
		dnorm_row_d(layer, xd, wd, dyd, C, m, rr, dxd);
		for (int c = 0; c < C; c++) {
			size_t i = (size_t)r * C + c;
			double xh = (xd[c] - m) * rr;
			double want = dxd[c] + (dres ? ref_load(dr, dt, i) : 0.0);
			double scale = rr * (fabs(dyd[c] * wd[c]) + (layer ? a1 / C : 0) + fabs(xh) * a2 / C) +
			               (dres ? fabs(want) : 0);
			wx = fmax(wx, fabs(dx[i] - want) / (k * EPS32 * scale + 1e-300));
		}
	}
	double kg = (double)R / TG_BWD_CHUNK + TG_BWD_CHUNK;
	for (int c = 0; c < C; c++) {
		wg = fmax(wg, fabs(dg[c] - sg[c]) / (kg * EPS32 * ag[c] + 1e-300));
		if (layer)
			wb = fmax(wb, fabs(db[c] - sb[c]) / (kg * EPS32 * ab[c] + 1e-300));
	}
	/* d_gamma / d_beta are the chunk partials reduced in order */
	int nk = ref_nchunks(R), exact = 1;
	float *pg = malloc(sizeof(float) * (size_t)nk * C), *pb = malloc(sizeof(float) * (size_t)nk * C);
	float *dg2 = malloc(sizeof(float) * C), *db2 = malloc(sizeof(float) * C);
	ref_dnorm_partials(layer, x, dt, rsig, layer ? mu : NULL, dy, dt, R, C, pg, pb);
	ref_chunk_reduce(pg, nk, C, 0, dg2);
	if (layer)
		ref_chunk_reduce(pb, nk, C, 0, db2);
	for (int c = 0; c < C; c++)
		exact = exact && same_bits(dg[c], dg2[c]) && (!layer || same_bits(db[c], db2[c]));
	char name[100];
	snprintf(name, sizeof name, "dnorm/%s%s%s/%s/%dx%d", layer ? "layernorm" : "rmsnorm", zc ? "-zc" : "",
	         dres ? "-dres" : "", dtn[dt], R, C);
	check_line("backward/", wx <= 1 && wg <= 1 && wb <= 1 && exact, name,
	           "d_in %.3f, d_gamma %.3f, d_beta %.3f of the bound; partials %s", wx, wg, wb,
	           exact ? "match" : "DIFFER");
	free(x); free(dy); free(dr); free(gamma); free(rsig); free(mu); free(dx); free(dg); free(db);
	free(xd); free(wd); free(dyd); free(dxd); free(sg); free(sb); free(ag); free(ab);
	free(pg); free(pb); free(dg2); free(db2);
}

/* A NaN in d_out poisons its row's d_in (through the row sums) and its column's d_gamma only. */
static void test_dnorm_nan(void)
{
	enum { R = 40, C = 64 };
	float x[R * C], dy[R * C], g[C], rs[R], mu[R], dx[R * C], dg[C], db[C];
	for (int i = 0; i < R * C; i++)
		x[i] = (float)urand(), dy[i] = (float)urand();
	for (int c = 0; c < C; c++)
		g[c] = 1.0f;
	ref_norm_stats(1, x, REF_F32, R, C, 1e-5f, mu, rs);
	dy[3 * C + 5] = tg_nan();
	ref_dnorm(1, x, REF_F32, rs, mu, g, 0, dy, NULL, REF_F32, REF_F32, R, C, dx, dg, db);
	int ok = 1;
	for (int r = 0; r < R; r++)
		for (int c = 0; c < C; c++)
			ok = ok && (tg_isnan(dx[r * C + c]) == (r == 3));
	for (int c = 0; c < C; c++)
		ok = ok && tg_isnan(dg[c]) == (c == 5) && tg_isnan(db[c]) == (c == 5);
	/* a zero gradient gives zero d_in and d_gamma */
	memset(dy, 0, sizeof dy);
	ref_dnorm(0, x, REF_F32, rs, NULL, g, 0, dy, NULL, REF_F32, REF_F32, R, C, dx, dg, NULL);
	for (int i = 0; i < R * C; i++)
		ok = ok && dx[i] == 0.0f;
	for (int c = 0; c < C; c++)
		ok = ok && dg[c] == 0.0f;
	check_line("backward/", ok, "dnorm-nan-zero", "NaN or zero gradient handled wrongly");
}

/* ---- reduction orders ---- */

/* The tree sum as dnorm.cu's two-pass phase 1 computes it: lane L of a warp holds
 * the vectors v = L + 32*i (VEC elements each); per i, the vector's own pairwise
 * subtree, then an xor butterfly over the lanes (offsets 1..16); then the groups i
 * combined pairwise (here by a stack, in the kernel by DnTree's recursion: the same
 * tree). */
static float tree_like_kernel(const float *v, int n, int vec)
{
	int nvec = (n + vec - 1) / vec, ni = (nvec + 31) / 32;
	float stack[32], lanes[32], res = -0.0f;
	for (int i = 0; i < ni; i++) {
		for (int L = 0; L < 32; L++) {
			int vv = L + 32 * i;
			float e[16];
			for (int k = 0; k < vec; k++) {
				int idx = vv * vec + k;
				e[k] = idx < n ? v[idx] : -0.0f;
			}
			for (int w = 1; w < vec; w *= 2)
				for (int k = 0; k + w < vec; k += 2 * w)
					e[k] = e[k] + e[k + w];
			lanes[L] = vv < nvec ? e[0] : -0.0f;
		}
		for (int o = 1; o < 32; o *= 2) {
			float nl[32];
			for (int L = 0; L < 32; L++)
				nl[L] = lanes[L] + lanes[L ^ o];
			memcpy(lanes, nl, sizeof nl);
		}
		/* push leaf i onto the pairwise stack: merge while bit l of i is set */
		float x = lanes[0];
		int l = 0;
		for (; (i >> l) & 1; l++)
			x = stack[l] + x;
		stack[l] = x;
	}
	/* fold with -0 padding: from the lowest level up, left + carry where bit l of ni is set */
	for (int l = 0; (1 << l) <= ni; l++)
		if ((ni >> l) & 1)
			res = stack[l] + res;
	return res;
}

/* Pairwise tree over a[0..n-1] padded with -0 to size (a power of two). */
static float ptree(const float *a, int n, int lo, int size)
{
	if (size == 1)
		return a[lo];
	if (lo + size / 2 >= n)
		return ptree(a, n, lo, size / 2);
	return ptree(a, n, lo, size / 2) + ptree(a, n, lo + size / 2, size / 2);
}

/* The one-pass order of dnorm.cu: thread t of T holds the vectors v = j*T + t; each
 * vector's subtree, the xor butterfly over the 32 lanes of a warp, a pairwise tree over
 * the T/32 warps, then a pairwise tree over j (padded). */
static float tree_like_one_pass(const float *v, int n, int vec, int T)
{
	int nvec = (n + vec - 1) / vec, nj = (nvec + T - 1) / T, nw = T / 32, njp = 1;
	while (njp < nj)
		njp *= 2;
	float *perj = malloc(sizeof(float) * (size_t)nj), *warps = malloc(sizeof(float) * (size_t)nw);
	for (int j = 0; j < nj; j++) {
		for (int w = 0; w < nw; w++) {
			float lanes[32];
			for (int L = 0; L < 32; L++) {
				int vv = j * T + w * 32 + L;
				float e[16];
				for (int k = 0; k < vec; k++)
					e[k] = vv < nvec ? v[vv * vec + k] : -0.0f;
				for (int s = 1; s < vec; s *= 2)
					for (int k = 0; k + s < vec; k += 2 * s)
						e[k] = e[k] + e[k + s];
				lanes[L] = e[0];
			}
			for (int o = 1; o < 32; o *= 2) {
				float nl[32];
				for (int L = 0; L < 32; L++)
					nl[L] = lanes[L] + lanes[L ^ o];
				memcpy(lanes, nl, sizeof nl);
			}
			warps[w] = lanes[0];
		}
		perj[j] = ptree(warps, nw, 0, nw);
	}
	float r = ptree(perj, nj, 0, njp);
	free(perj);
	free(warps);
	return r;
}

static void test_tree_orders(void)
{
	static const int widths[] = {16, 48, 64, 80, 160, 208, 256, 512, 1040, 4096, 4112, 14336};
	float *v = malloc(sizeof(float) * 16384), *pad = malloc(sizeof(float) * 32768);
	int ok = 1;
	char det[160] = "";
	for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++) {
		int n = widths[w];
		for (int i = 0; i < n; i++) /* wide dynamic range so that the order shows in the bits */
			v[i] = (float)(urand() * pow(2.0, 12 * urand()));
		float want = ref_tree_sum(v, n);
		for (int vec = 2; vec <= 16; vec *= 2) {
			if (n % vec)
				continue;
			float got = tree_like_kernel(v, n, vec);
			if (!same_bits(got, want)) {
				ok = 0;
				snprintf(det, sizeof det, "n=%d vec=%d: kernel order %a, tree %a", n, vec, got, want);
			}
			for (int T = 32; T <= 1024; T *= 2) {
				got = tree_like_one_pass(v, n, vec, T);
				if (!same_bits(got, want)) {
					ok = 0;
					snprintf(det, sizeof det, "n=%d vec=%d T=%d: one-pass order %a, tree %a", n, vec, T, got, want);
				}
			}
		}
		/* padding invariance: n padded with -0 to 2n leaves the value unchanged */
		memcpy(pad, v, sizeof(float) * n);
		for (int i = n; i < 2 * n; i++)
			pad[i] = -0.0f;
		if (!same_bits(ref_tree_sum(pad, 2 * n), want)) {
			ok = 0;
			snprintf(det, sizeof det, "n=%d: padding changes the tree sum", n);
		}
	}
	float z[3] = {-0.0f, -0.0f, -0.0f};
	ok = ok && tg_f2u(ref_tree_sum(z, 3)) == 0x80000000u && tg_f2u(ref_tree_sum(z, 0)) == 0x80000000u;
	check_line("backward/", ok, "tree-order", "%s", det);
	free(v);
	free(pad);
}

/* d_gamma / dbias: the same bits for every column tiling and call; the chunk partials
 * are what the definition says (checked against a direct loop). */
static void test_chunk_orders(void)
{
	enum { R = 993, C = 208 };
	uint16_t *g = malloc(2 * R * C);
	float *f = malloc(sizeof(float) * R * C), *db = malloc(sizeof(float) * C), *db2 = malloc(sizeof(float) * C);
	for (int i = 0; i < R * C; i++) {
		g[i] = tg_f32_to_bf16((float)(urand() * pow(2.0, 10 * urand())));
		f[i] = tg_bf16_to_f32(g[i]);
	}
	ref_dbias(g, REF_BF16, R, C, db);
	int ok = 1;
	/* column tiles of 16, 48 and 208 columns, rows walked per chunk as a kernel would */
	static const int tiles[] = {16, 48, 208};
	for (int t = 0; t < 3; t++) {
		for (int c0 = 0; c0 < C; c0 += tiles[t]) {
			float part[(R + 31) / 32][208];
			for (int k = 0; k * 32 < R; k++)
				for (int c = c0; c < c0 + tiles[t] && c < C; c++) {
					float acc = -0.0f;
					for (int r = k * 32; r < R && r < k * 32 + 32; r++)
						acc += f[r * C + c];
					part[k][c] = acc;
				}
			for (int c = c0; c < c0 + tiles[t] && c < C; c++) {
				float acc = -0.0f;
				for (int k = 0; k * 32 < R; k++)
					acc += part[k][c];
				ok = ok && same_bits(acc, db[c]);
			}
		}
	}
	ref_dbias(g, REF_BF16, R, C, db2);
	ok = ok && memcmp(db, db2, sizeof(float) * C) == 0;
	/* accumulate into an FP32 main_grad */
	int nk = ref_nchunks(R);
	float *part = malloc(sizeof(float) * (size_t)nk * C), *acc = malloc(sizeof(float) * C);
	ref_chunk_partials(f, R, C, part);
	for (int c = 0; c < C; c++)
		acc[c] = 0.25f;
	ref_chunk_reduce(part, nk, C, 1, acc);
	for (int c = 0; c < C; c++)
		ok = ok && same_bits(acc[c], 0.25f + db[c]);
	/* against a double column sum */
	double worst = 0;
	for (int c = 0; c < C; c++) {
		double s = 0, a = 0;
		for (int r = 0; r < R; r++)
			s += f[r * C + c], a += fabs(f[r * C + c]);
		worst = fmax(worst, fabs(db[c] - s) / ((nk + TG_BWD_CHUNK) * EPS32 * a));
	}
	check_line("backward/", ok && worst <= 1, "dbias-order", "tilings or calls differ, or error %.3f of the bound",
	           worst);
	free(g); free(f); free(db); free(db2); free(part); free(acc);
}

/* The second stage's order (tg_backward.h): up to TG_BWD_GROUP chunks one sequential sum; past it, groups of
 * TG_BWD_GROUP summed in chunk order, then the group sums in order (130 chunks: groups of 64, 64, 2). */
static void test_group_order(void)
{
	enum { NK = 130, C = 3 };
	float part[NK][C], out[C];
	for (int k = 0; k < NK; k++)
		for (int c = 0; c < C; c++)
			part[k][c] = (float)(urand() * pow(2.0, 24 * urand() - 12)) * (k % 3 ? 1.0f : -1.0f);
	int ok = 1;
	ref_chunk_reduce(&part[0][0], NK, C, 0, out);
	for (int c = 0; c < C; c++) {
		float g[3] = {-0.0f, -0.0f, -0.0f}, want = -0.0f;
		for (int k = 0; k < NK; k++)
			g[k / TG_BWD_GROUP] += part[k][c];
		for (int j = 0; j < 3; j++)
			want += g[j];
		ok = ok && same_bits(out[c], want);
	}
	ref_chunk_reduce(&part[0][0], TG_BWD_GROUP, C, 0, out); /* one group: the plain sequential sum */
	for (int c = 0; c < C; c++) {
		float want = -0.0f;
		for (int k = 0; k < TG_BWD_GROUP; k++)
			want += part[k][c];
		ok = ok && same_bits(out[c], want);
	}
	check_line("backward/", ok, "chunk-group-order", "the second stage's sum is not groups of %d, then the groups",
	           TG_BWD_GROUP);
}

static void test_norm_stats(void)
{
	enum { R = 37, C = 4096 };
	uint16_t *x = malloc(2 * R * C);
	float *y = malloc(sizeof(float) * R * C), g[C], b[C], rs1[R], rs2[R], mu1[R], mu2[R];
	for (int i = 0; i < R * C; i++)
		x[i] = tg_f32_to_bf16((float)(urand() * 3 + 0.5));
	for (int c = 0; c < C; c++)
		g[c] = 1.0f, b[c] = 0.0f;
	double worst = 0;
	ref_rmsnorm(x, NULL, NULL, REF_BF16, g, 0, 1e-5f, R, C, y, rs1);
	ref_norm_stats(0, x, REF_BF16, R, C, 1e-5f, NULL, rs2);
	for (int r = 0; r < R; r++)
		worst = fmax(worst, ulps(rs2[r], rs1[r]));
	ref_layernorm(x, NULL, NULL, REF_BF16, g, b, 0, 1e-5f, R, C, y, mu1, rs1, NULL);
	ref_norm_stats(1, x, REF_BF16, R, C, 1e-5f, mu2, rs2);
	for (int r = 0; r < R; r++)
		worst = fmax(worst, fmax(ulps(rs2[r], rs1[r]), ulps(mu2[r], mu1[r])));
	check_line("backward/", worst <= 4, "norm-stats", "FP32 stats %.2f ulps from the double ones", worst);
	free(x);
	free(y);
}

int main(void)
{
	test_exp();
	test_sigmoid();
	for (int act = 0; act < 6; act++) {
		test_dglu_fd(act);
		for (int dt = 0; dt < 3; dt++)
			test_dglu_ref(act, dt);
	}
	test_dglu_special();
	test_dnorm_fd(0);
	test_dnorm_fd(1);
	static const int shapes[][2] = {{1, 64}, {5, 160}, {217, 208}, {993, 512}};
	for (int s = 0; s < 4; s++)
		for (int layer = 0; layer < 2; layer++)
			for (int dt = 0; dt < 3; dt++)
				test_dnorm_ref(layer, s == 1, s == 2, dt, shapes[s][0], shapes[s][1]);
	test_dnorm_nan();
	test_tree_orders();
	test_chunk_orders();
	test_group_order();
	test_norm_stats();
	return check_failures ? 1 : 0;
}
