/* test_interp.c: the reference interpreter on an NVFP4 layer (no GPU needed).
 *
 * What the GPU kernels are checked against must itself hold together: the
 * layouts of every NVFP4 component on odd row counts (packed rows, a zero
 * padding nibble, short last blocks of the columnwise copy), S_enc from the
 * global amax, both copies decoding back to the input within the format's
 * error, stochastic rounding that depends on its offset and is repeatable,
 * distinct SR seeds per tensor, an emulated NVFP4 GEMM close to the FP32
 * product, and the native GEMM's reference (alpha) close to the emulated one.
 * With nvfp4_rht: the rowwise copy unchanged, the columnwise copy
 * decoding to the transform of the input (a last partial group as is) with its
 * own amax_t and S_enc, and the wgrad product matching the untransformed one
 * within NVFP4 tolerance. Backward ops: a norm's saved rsigma feeding dnorm (d_x
 * and d_gamma against double math, d_gamma in the chunk order), dglu's E5M2
 * gradient copies and value, dbias. The backward a spec derives (backward: true) of a
 * tiny FP32 RMSNorm + SwiGLU MLP against central finite differences; the derived gradients'
 * recipe state (slots, E5M2 under hybrid, covered by the delayed update) and phases. Protocol: ok/FAIL lines, exit 1 on failure. */
#include "backward.h"
#include "check.h"
#include "interp.h"
#include "layout.h"
#include "ref.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define check(ok, ...) check_line("interp/", ok, __VA_ARGS__)

static const char spec_text[] =
	"layer: t\n"
	"dims: {tokens: dynamic, h: 48, f: 32}\n"
	"recipe: {scaling: nvfp4}\n"
	"overrides:\n"
	"  wq: {nvfp4_2d: true}\n"
	"  xs: {nvfp4_sr: true}\n"
	"tensors:\n"
	"  x: {shape: [tokens, h]}\n"
	"  w: {shape: [f, h], role: weight}\n"
	"ops:\n"
	"  - cast_transpose: {in: x, out: xq}\n"
	"  - quantize: {in: w, out: wq, layout: [rowwise, columnwise]}\n"
	"  - cast_transpose: {in: x, out: xs}\n"
	"  - gemm_cast: {a: xq, b: wq, out: y, dtype: fp32}\n";

static int tensor_id(const Graph *g, const char *name)
{
	for (int i = 0; i < g->ntensors; i++)
		if (!strcmp(g->tensors[i].name, name))
			return i;
	return -1;
}

/* max |dequant(copy) - x| / block amax over one copy [R][K] of x (given as [R][K]). */
static double copy_error(const uint8_t *q, const uint8_t *s, int R, int K, float s_enc, const float *x)
{
	float *y = malloc(sizeof *y * (size_t)R * K);
	ref_dequant_nvfp4(q, s, R, K, s_enc, y);
	double worst = 0;
	for (int r = 0; r < R; r++)
		for (int b = 0; b * 16 < K; b++) {
			double am = 0, err = 0;
			for (int c = b * 16; c < K && c < b * 16 + 16; c++) {
				am = fmax(am, fabs(x[(size_t)r * K + c]));
				err = fmax(err, fabs(y[(size_t)r * K + c] - x[(size_t)r * K + c]));
			}
			if (am > 0)
				worst = fmax(worst, err / am);
		}
	free(y);
	return worst;
}

/* Layouts, S_enc and round trips (error / block amax <= bound) of one NVFP4 tensor with both copies. */
static void test_copies(const Graph *g, const long *dims, RefTensor *rt, const char *name, const float *x, int rows, int cols,
	double bound)
{
	const Tensor *t = &g->tensors[tensor_id(g, name)];
	const RefTensor *r = &rt[t->id];
	char nm[64];
	snprintf(nm, sizeof nm, "%s/sizes", name);
	check(r->bytes[COMP_DATA] == (size_t)rows * cols / 2 && r->bytes[COMP_DATA_T] == (size_t)cols * ((rows + 1) / 2) &&
			r->bytes[COMP_SCALE_INV] == (size_t)rows * (cols / 16) &&
			r->bytes[COMP_SCALE_INV_T] == (size_t)cols * ((rows + 15) / 16) &&
			layout_comp_bytes(dims, t, COMP_HP) == (size_t)rows * cols * 4,
		nm, "data %zu data_t %zu scale_inv %zu scale_inv_t %zu", r->bytes[COMP_DATA], r->bytes[COMP_DATA_T],
		r->bytes[COMP_SCALE_INV], r->bytes[COMP_SCALE_INV_T]);
	int pad = 1;
	for (int c = 0; rows % 2 && c < cols; c++)
		pad &= (((const uint8_t *)r->comp[COMP_DATA_T])[(size_t)c * ((rows + 1) / 2) + rows / 2] >> 4) == 0;
	snprintf(nm, sizeof nm, "%s/padding-nibble", name);
	check(pad, nm, "an odd row of the columnwise copy does not end in a zero nibble");
	snprintf(nm, sizeof nm, "%s/s_enc", name);
	check(r->amax == ref_amax(x, (size_t)rows * cols) && r->scale == tg_nvfp4_s_enc(r->amax), nm, "amax %g s_enc %g",
		r->amax, r->scale);
	float *xt = malloc(sizeof *xt * (size_t)rows * cols);
	ref_transpose(x, rows, cols, xt);
	/* an E2M1 step is at most 2 (4 -> 6) of 6, the block amax's code: RN errs by half a
	 * step (1/6), SR by up to a step (1/3), plus S_dec's E4M3 rounding (2^-4) */
	double er = copy_error(r->comp[COMP_DATA], r->comp[COMP_SCALE_INV], rows, cols, r->scale, x);
	double et = copy_error(r->comp[COMP_DATA_T], r->comp[COMP_SCALE_INV_T], cols, rows, r->scale, xt);
	snprintf(nm, sizeof nm, "%s/round-trip", name);
	check(er <= bound && et <= bound, nm, "worst error / block amax: rowwise %g, columnwise %g", er, et);
	free(xt);
}

/* The native NVFP4 GEMM's reference (block-scaled products, then alpha =
 * 1/(S_enc_a*S_enc_b)) rounds differently from the emulated one (each operand
 * scaled by S_dec/S_enc first), so the two agree to FP32 rounding, not bits;
 * a missing alpha would be off by S_enc_a*S_enc_b. op3 is the GEMM. */
static void test_native_gemm(const Graph *g, const long *dims, RefTensor *rt, int n)
{
	RefTensor *ry = &rt[tensor_id(g, "y")];
	float *emu = malloc(sizeof *emu * (size_t)n);
	memcpy(emu, ry->comp[COMP_DATA], sizeof *emu * (size_t)n);
	char err[256] = "";
	check(interp_run_op(g, dims, 3, INTERP_NATIVE_NVFP4, rt, err, sizeof err) == 0, "gemm_native/run", "%s", err);
	const float *y = ry->comp[COMP_DATA];
	double num = 0, den = 0;
	for (int i = 0; i < n; i++)
		num += (y[i] - emu[i]) * (double)(y[i] - emu[i]), den += (double)emu[i] * emu[i];
	check(sqrt(num / den) < 1e-5, "gemm_native/close_to_emulated", "relative difference %g", sqrt(num / den));
	float alpha = tg_nvfp4_gemm_alpha(rt[tensor_id(g, "xq")].scale, rt[tensor_id(g, "wq")].scale);
	check(alpha != 1.0f && alpha > 0, "gemm_native/alpha", "alpha %g: pick inputs whose S_enc are not 1", alpha);
	free(emu);
}

/* ---- nvfp4_rht ---- */

static const char rht_spec[] =
	"layer: r\n"
	"dims: {tokens: dynamic, h: 48, f: 32}\n"
	"recipe: {scaling: nvfp4, nvfp4_rht: %s}\n"
	"overrides:\n"
	"  dyq: {nvfp4_sr: true}\n"
	"tensors:\n"
	"  x: {shape: [tokens, h]}\n"
	"  dy: {shape: [tokens, f], role: gradient}\n"
	"ops:\n"
	"  - cast_transpose: {in: x, out: xq}\n"
	"  - cast_transpose: {in: dy, out: dyq}\n"
	"  - gemm_cast: {a: dyq, b: xq, out: dw, dtype: fp32, pass: wgrad}\n";

/* The graph of rht_spec with nvfp4_rht on or off (NULL and a FAIL line on error). */
static const Graph *rht_graph(Arena *a, int rht)
{
	Diag d = {0};
	d.file = rht ? "rht_on.yaml" : "rht_off.yaml";
	char *text = arena_printf(a, rht_spec, rht ? "true" : "false");
	Spec *s = spec_load(a, &d, d.file, text, strlen(text));
	const Graph *g = s ? ir_build(a, &d, s, (Arch){90, true}) : NULL;
	if (!g)
		printf("FAIL interp/rht/load: %s\n", d.msg);
	return g;
}

/* x^T [cols][rows] with every 16 consecutive rows of a column through tg_rht16 (a
 * last partial group as is): the columnwise copy's value, computed here without
 * ref_rht_rows. */
static float *rht_cols(const float *x, int rows, int cols)
{
	float *y = malloc(sizeof *y * (size_t)rows * cols + 1);
	uint16_t mask = tg_rht_sign_mask(TG_RHT_SEED);
	for (int c = 0; c < cols; c++)
		for (int r0 = 0; r0 < rows; r0 += 16) {
			float g[16];
			int len = rows - r0 < 16 ? rows - r0 : 16;
			for (int k = 0; k < len; k++)
				g[k] = x[(size_t)(r0 + k) * cols + c];
			if (len == 16)
				tg_rht16(g, mask, g);
			memcpy(y + (size_t)c * rows + r0, g, sizeof *g * (size_t)len);
		}
	return y;
}

/* Relative Frobenius distance |y - ref| / |ref| over n values. */
static double rel_err(const float *y, const float *ref, size_t n)
{
	double num = 0, den = 0;
	for (size_t i = 0; i < n; i++)
		num += (y[i] - (double)ref[i]) * (y[i] - (double)ref[i]), den += (double)ref[i] * ref[i];
	return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* Deterministic BF16 inputs [n]: uniform in [-4, 4] with every 61st value an outlier x 40. */
static void rht_inputs(uint16_t *b, float *x, size_t n, uint64_t st)
{
	for (size_t i = 0; i < n; i++) {
		st = st * 6364136223846793005ull + 1442695040888963407ull;
		float v = (float)((int)(st >> 40) % 2001 - 1000) / 250.0f;
		ref_store(b, REF_BF16, i, i % 61 == 7 ? 40.0f * v : v);
		x[i] = ref_load(b, REF_BF16, i);
	}
}

/* One token count: the RHT layer against the same layer without the transform. */
static void test_rht_tokens(const Graph *on, const Graph *off, int rows)
{
	const int h = 48, f = 32;
	long dims[3] = {rows, h, f};
	RefTensor *ro = calloc((size_t)on->ntensors, sizeof *ro), *rf = calloc((size_t)off->ntensors, sizeof *rf);
	float *x = malloc(sizeof *x * (size_t)rows * h), *dy = malloc(sizeof *dy * (size_t)rows * f);
	uint16_t *xb = malloc(2 * (size_t)rows * h), *dyb = malloc(2 * (size_t)rows * f);
	rht_inputs(xb, x, (size_t)rows * h, 777);
	rht_inputs(dyb, dy, (size_t)rows * f, 4242);
	int ix = tensor_id(on, "x"), idy = tensor_id(on, "dy"), ixq = tensor_id(on, "xq"), idw = tensor_id(on, "dw");
	ro[ix].comp[COMP_DATA] = rf[ix].comp[COMP_DATA] = xb;
	ro[idy].comp[COMP_DATA] = rf[idy].comp[COMP_DATA] = dyb;
	char err[256], nm[64];
	snprintf(nm, sizeof nm, "rht/run/%d", rows);
	check(!interp_run(on, dims, ro, err, sizeof err) && !interp_run(off, dims, rf, err, sizeof err), nm, "%s", err);
	const RefTensor *q = &ro[ixq], *p = &rf[ixq];
	const Tensor *tq = &on->tensors[ixq];

	/* the rowwise copy, its amax and S_enc are those of the untransformed layer */
	snprintf(nm, sizeof nm, "rht/rowwise-unchanged/%d", rows);
	check(!memcmp(q->comp[COMP_DATA], p->comp[COMP_DATA], q->bytes[COMP_DATA]) &&
			!memcmp(q->comp[COMP_SCALE_INV], p->comp[COMP_SCALE_INV], q->bytes[COMP_SCALE_INV]) && q->amax == p->amax &&
			q->scale == p->scale,
		nm, "amax %g vs %g", q->amax, p->amax);
	/* the columnwise copy: its own slot, amax over the transformed values, S_enc from it */
	float *xr = rht_cols(x, rows, h);
	snprintf(nm, sizeof nm, "rht/amax_t/%d", rows);
	check(tq->state_slot_t >= 0 && tensor_s_enc_comp(tq, COMP_DATA_T) == COMP_SCALE_T &&
			q->amax_t == ref_amax(xr, (size_t)rows * h) && q->scale_t == tg_nvfp4_s_enc(q->amax_t),
		nm, "slot_t %d amax_t %g (want %g) scale_t %g", tq->state_slot_t, q->amax_t, ref_amax(xr, (size_t)rows * h), q->scale_t);
	double et = copy_error(q->comp[COMP_DATA_T], q->comp[COMP_SCALE_INV_T], h, rows, q->scale_t, xr);
	snprintf(nm, sizeof nm, "rht/columnwise-round-trip/%d", rows);
	check(et <= 0.25, nm, "worst error / block amax %g", et);
	if (rows < 16) { /* no full group: the copy is the untransformed one */
		snprintf(nm, sizeof nm, "rht/partial-group-identity/%d", rows);
		check(!memcmp(q->comp[COMP_DATA_T], p->comp[COMP_DATA_T], q->bytes[COMP_DATA_T]) && q->scale_t == p->scale, nm,
			"the copy of a tensor shorter than one group differs from the untransformed one");
	}

	/* wgrad: the transform is orthonormal along K on both operands, so the product is
	 * unchanged exactly in real arithmetic (checked on the unquantized values) and
	 * within NVFP4 tolerance after quantization */
	float *dyr = rht_cols(dy, rows, f), *xt = malloc(sizeof *xt * (size_t)rows * h), *dyt = malloc(sizeof *dyt * (size_t)rows * f);
	float *exact = malloc(sizeof *exact * (size_t)f * h), *rotated = malloc(sizeof *rotated * (size_t)f * h);
	ref_transpose(x, rows, h, xt);
	ref_transpose(dy, rows, f, dyt);
	ref_gemm(dyt, xt, f, h, rows, exact);
	ref_gemm(dyr, xr, f, h, rows, rotated);
	double e_rot = rel_err(rotated, exact, (size_t)f * h);
	const float *dw_on = ro[idw].comp[COMP_DATA], *dw_off = rf[idw].comp[COMP_DATA];
	double e_on = rel_err(dw_on, exact, (size_t)f * h), e_off = rel_err(dw_off, exact, (size_t)f * h);
	double e_diff = rel_err(dw_on, dw_off, (size_t)f * h);
	snprintf(nm, sizeof nm, "rht/wgrad-invariant/%d", rows);
	check(e_rot < 1e-5, nm, "unquantized product moved by %g", e_rot);
	/* NVFP4 tolerance of a wgrad GEMM here (RN on x, SR on dy, outliers): 0.3 relative
	 * (Frobenius) from the exact product, with or without the transform; below one
	 * group of 16 the two are the same computation */
	snprintf(nm, sizeof nm, "rht/wgrad/%d", rows);
	check(e_on < 0.3 && e_off < 0.3 && (rows >= 16 || e_diff == 0), nm, "relative error: rht %g, plain %g, rht vs plain %g",
		e_on, e_off, e_diff);

	free(xr), free(dyr), free(xt), free(dyt), free(exact), free(rotated);
	ro[ix].comp[COMP_DATA] = rf[ix].comp[COMP_DATA] = ro[idy].comp[COMP_DATA] = rf[idy].comp[COMP_DATA] = NULL;
	interp_free(on, ro);
	interp_free(off, rf);
	free(ro), free(rf), free(x), free(dy), free(xb), free(dyb);
}

/* nvfp4_rht at token counts with and without a partial last group of 16. */
static void test_rht(void)
{
	Arena *a = arena_new();
	const Graph *on = rht_graph(a, 1), *off = rht_graph(a, 0);
	if (on && off) {
		static const int tokens[] = {5, 16, 217, 1024};
		for (int i = 0; i < 4; i++)
			test_rht_tokens(on, off, tokens[i]);
	} else {
		check_failures++;
	}
	arena_free(a);
}

/* ---- backward ops: a forward norm saving rsigma, dnorm, dglu, dbias ---- */

static const char bwd_spec[] =
	"layer: tb\n"
	"dims: {tokens: dynamic, h: 64, c: 64}\n"
	"recipe: {scaling: delayed, format: hybrid}\n"
	"tensors:\n"
	"  x: {shape: [tokens, h]}\n"
	"  g: {shape: [h], role: weight}\n"
	"  dy: {shape: [tokens, h], role: gradient}\n"
	"  hh: {shape: [tokens, 2*c]}\n"
	"  da: {shape: [tokens, c], role: gradient}\n"
	"ops:\n"
	"  - norm_quantize: {in: x, gamma: g, out: xq, rsigma: rs, zero_centered_gamma: true}\n"
	"  - dnorm: {in: x, grad: dy, gamma: g, rsigma: rs, out: dx, d_gamma: dg, zero_centered_gamma: true}\n"
	"  - dglu: {in: hh, grad: da, out: dh, dbias: dbh, layout: [rowwise, columnwise]}\n"
	"  - dbias: {in: dy, out: db}\n";

/* Worst |a - b| / (|b| + floor) over n values. */
static double worst_rel(const float *a, const double *b, size_t n, double floor)
{
	double w = 0;
	for (size_t i = 0; i < n; i++) {
		double e = fabs(a[i] - b[i]) / (fabs(b[i]) + floor);
		w = e > w ? e : w;
	}
	return w;
}

static void test_backward(void)
{
	Arena *a = arena_new();
	Diag d = {0};
	d.file = "bwd.yaml";
	Spec *s = spec_load(a, &d, d.file, bwd_spec, strlen(bwd_spec));
	const Graph *g = s ? ir_build(a, &d, s, (Arch){90, true}) : NULL;
	if (!g) {
		printf("FAIL interp/bwd/load: %s\n", d.msg);
		check_failures++;
		arena_free(a);
		return;
	}
	enum { R = 70, H = 64, C = 64 }; /* 70 rows: three chunks of partials, the last short */
	long dims[3] = {R, H, C};
	RefTensor *rt = calloc((size_t)g->ntensors, sizeof *rt);
	const char *names[] = {"x", "g", "dy", "hh", "da"};
	size_t sizes[] = {R * H, H, R * H, R * 2 * C, R * C};
	uint16_t *buf[5];
	uint64_t st = 777;
	for (int k = 0; k < 5; k++) {
		buf[k] = malloc(2 * sizes[k]);
		for (size_t i = 0; i < sizes[k]; i++) {
			st = st * 6364136223846793005ull + 1442695040888963407ull;
			ref_store(buf[k], REF_BF16, i, (float)((int)(st >> 40) % 2001 - 1000) / 400.0f);
		}
		rt[tensor_id(g, names[k])].comp[COMP_DATA] = buf[k];
	}
	for (int i = 0; i < g->ntensors; i++)
		rt[i].scale = 2.0f, rt[i].scale_inv = 0.5f; /* delayed scales of xq, dh */
	char err[256];
	check(interp_run(g, dims, rt, err, sizeof err) == 0, "bwd/run", "%s", err);
	const float *rs = rt[tensor_id(g, "rs")].comp[COMP_DATA];
	check(rs && rt[tensor_id(g, "rs")].bytes[COMP_DATA] == R * sizeof(float), "bwd/rsigma_saved", "no rsigma [%d][1]", R);
	float *xf = malloc(sizeof *xf * R * H), *dyf = malloc(sizeof *dyf * R * H), *gf = malloc(sizeof *gf * H);
	for (int i = 0; i < R * H; i++)
		xf[i] = ref_load(buf[0], REF_BF16, (size_t)i), dyf[i] = ref_load(buf[2], REF_BF16, (size_t)i);
	for (int i = 0; i < H; i++)
		gf[i] = ref_load(buf[1], REF_BF16, (size_t)i) + 1.0f; /* zero-centered */
	/* dRMSNorm in double from the saved rsigma: d_x = rs (g dy - xhat mean(g dy xhat)), d_gamma = sum dy xhat */
	double *dx = malloc(sizeof *dx * R * H), *dg = calloc(H, sizeof *dg), *db = calloc(H, sizeof *db);
	for (int r = 0; r < R; r++) {
		double m2 = 0;
		for (int c = 0; c < H; c++)
			m2 += (double)gf[c] * dyf[r * H + c] * xf[r * H + c] * rs[r];
		m2 /= H;
		for (int c = 0; c < H; c++) {
			double xh = (double)xf[r * H + c] * rs[r];
			dx[r * H + c] = rs[r] * ((double)gf[c] * dyf[r * H + c] - xh * m2);
			dg[c] += dyf[r * H + c] * xh;
			db[c] += dyf[r * H + c];
		}
	}
	float *dxg = malloc(sizeof *dxg * R * H);
	for (int i = 0; i < R * H; i++)
		dxg[i] = ref_load(rt[tensor_id(g, "dx")].comp[COMP_DATA], REF_BF16, (size_t)i);
	double e = worst_rel(dxg, dx, (size_t)R * H, 0.05);
	check(e < 1.0 / 128, "bwd/dnorm_dx", "d_x (bf16) vs double: worst relative error %g", e);
	e = worst_rel(rt[tensor_id(g, "dg")].comp[COMP_DATA], dg, H, 1.0);
	check(e < 1e-5, "bwd/dnorm_dgamma", "d_gamma (fp32, chunked order) vs double: worst relative error %g", e);
	e = worst_rel(rt[tensor_id(g, "db")].comp[COMP_DATA], db, H, 1.0);
	check(e < 1e-5, "bwd/dbias", "dbias vs double: worst relative error %g", e);
	/* d_gamma is the chunked sum: partials of 32 rows, then the partials in order */
	float *prod = malloc(sizeof *prod * R * H), *part = malloc(sizeof *part * 3 * H), *red = malloc(sizeof *red * H);
	for (int r = 0; r < R; r++)
		for (int c = 0; c < H; c++) {
			float xh = tg__mul_rn(xf[r * H + c], rs[r]);
			prod[r * H + c] = tg__mul_rn(dyf[r * H + c], xh);
		}
	ref_chunk_partials(prod, R, H, part);
	ref_chunk_reduce(part, ref_nchunks(R), H, 0, red);
	check(ref_nchunks(R) == 3 && !memcmp(red, rt[tensor_id(g, "dg")].comp[COMP_DATA], sizeof *red * H), "bwd/dgamma_order",
		"d_gamma is not the chunk-ordered sum of dy * xhat");
	/* dglu: d_h is a gradient (E5M2 under hybrid), its columnwise copy the rowwise bytes transposed */
	const Tensor *th = &g->tensors[tensor_id(g, "dh")];
	const RefTensor *rh = &rt[th->id];
	bool transposed = rh->comp[COMP_DATA] && rh->comp[COMP_DATA_T];
	for (int r = 0; transposed && r < R; r++)
		for (int c = 0; c < 2 * C; c++)
			transposed = ((const uint8_t *)rh->comp[COMP_DATA])[r * 2 * C + c] ==
				((const uint8_t *)rh->comp[COMP_DATA_T])[c * R + r];
	check(th->dtype == DT_E5M2 && th->role == ROLE_GRADIENT && transposed, "bwd/dglu_copies",
		"d_h %s, columnwise copy %s", dtype_name(th->dtype), transposed ? "ok" : "not the transpose");
	float *dhv = malloc(sizeof *dhv * R * 2 * C);
	ref_dglu(REF_SWIGLU, buf[3], REF_BF16, buf[4], REF_BF16, R, C, 7.0f, 1.702f, dhv);
	check(!memcmp(dhv, rh->value, sizeof *dhv * R * 2 * C) && rh->amax == ref_amax(dhv, (size_t)R * 2 * C), "bwd/dglu_value",
		"d_h value or amax differs from ref_dglu");
	float dbh[2 * C];
	ref_dbias(dhv, REF_F32, R, 2 * C, dbh);
	const float *gdbh = rt[tensor_id(g, "dbh")].comp[COMP_DATA];
	check(gdbh && !memcmp(dbh, gdbh, sizeof dbh), "bwd/dglu_dbias", "dglu's fused dbias is not ref_dbias of d_h");
	free(dhv), free(prod), free(part), free(red), free(dxg), free(dx), free(dg), free(db), free(xf), free(dyf), free(gf);
	for (int k = 0; k < 5; k++)
		rt[tensor_id(g, names[k])].comp[COMP_DATA] = NULL, free(buf[k]);
	interp_free(g, rt);
	free(rt);
	arena_free(a);
}

/* ---- the derived backward (backward: true) against central finite differences ---- */

static const char fd_spec[] =
	"layer: fd\n"
	"dims: {tokens: dynamic, hidden: 32, ffn: 16}\n"
	"recipe: {scaling: none}\n"
	"tensors:\n"
	"  x: {shape: [tokens, hidden], dtype: fp32}\n"
	"  gamma: {shape: [hidden], dtype: fp32, role: weight}\n"
	"  w_up: {shape: [2*ffn, hidden], dtype: fp32, role: weight}\n"
	"  w_down: {shape: [hidden, ffn], dtype: fp32, role: weight}\n"
	"ops:\n"
	"  - norm_quantize: {in: x, gamma: gamma, out: xn}\n"
	"  - gemm_cast: {a: xn, b: w_up, out: h, dtype: fp32}\n"
	"  - glu_amax: {in: h, out: act}\n"
	"  - gemm_cast: {a: act, b: w_down, out: y, dtype: fp32}\n"
	"backward: true\n";

/* A tiny FP32 stack of two pre-norm residual blocks and a final norm (the structure of
 * specs/tiny_residual_train.yaml): the residual stream's gradient through grad_residual. */
static const char fd_res_spec[] =
	"layer: fd_res\n"
	"dims: {tokens: dynamic, hidden: 32, ffn: 16}\n"
	"recipe: {scaling: none}\n"
	"tensors:\n"
	"  x: {shape: [tokens, hidden], dtype: fp32}\n"
	"  g1: {shape: [hidden], dtype: fp32, role: weight}\n"
	"  w_up1: {shape: [2*ffn, hidden], dtype: fp32, role: weight}\n"
	"  w_down1: {shape: [hidden, ffn], dtype: fp32, role: weight}\n"
	"  g2: {shape: [hidden], dtype: fp32, role: weight}\n"
	"  w_up2: {shape: [2*ffn, hidden], dtype: fp32, role: weight}\n"
	"  w_down2: {shape: [hidden, ffn], dtype: fp32, role: weight}\n"
	"  gf: {shape: [hidden], dtype: fp32, role: weight}\n"
	"ops:\n"
	"  - norm_quantize: {in: x, gamma: g1, out: xn1}\n"
	"  - gemm_cast: {a: xn1, b: w_up1, out: h1, dtype: fp32}\n"
	"  - glu_amax: {in: h1, out: act1}\n"
	"  - gemm_cast: {a: act1, b: w_down1, out: y1, dtype: fp32}\n"
	"  - norm_quantize: {in: y1, residual: x, residual_out: r1, gamma: g2, out: xn2}\n"
	"  - gemm_cast: {a: xn2, b: w_up2, out: h2, dtype: fp32}\n"
	"  - glu_amax: {in: h2, out: act2}\n"
	"  - gemm_cast: {a: act2, b: w_down2, out: y2, dtype: fp32}\n"
	"  - norm_quantize: {in: y2, residual: r1, gamma: gf, out: y}\n"
	"outputs: [y]\n"
	"backward: true\n";

/* L = sum(y * d_y) of one run of the layer (its forward part decides y). */
static double fd_loss(const Graph *g, const long *dims, RefTensor *rt, const float *dy, size_t ny)
{
	char err[256];
	if (interp_run(g, dims, rt, err, sizeof err))
		return NAN;
	const float *y = rt[tensor_id(g, "y")].comp[COMP_DATA];
	double l = 0;
	for (size_t i = 0; i < ny; i++)
		l += (double)y[i] * dy[i];
	return l;
}

/* The derived backward of an FP32 layer (output y, its gradient input d_y) against central
 * finite differences of L = sum(y * d_y): d_<t> of every layer input t, up to 64 elements
 * each; limit 2e-3 of the largest gradient. */
static void test_derived_fd(const char *name, const char *text)
{
	Arena *a = arena_new();
	Diag d = {0};
	d.file = arena_printf(a, "%s.yaml", name);
	Spec *s = spec_load(a, &d, d.file, text, strlen(text));
	if (s)
		s = spec_derive_backward(a, &d, s, (Arch){90, true});
	const Graph *g = s ? ir_build(a, &d, s, (Arch){90, true}) : NULL;
	if (!g) {
		printf("FAIL interp/%s/load: %s\n", name, d.msg);
		check_failures++;
		arena_free(a);
		return;
	}
	enum { T = 3, MAXIN = 16 };
	long dims[3] = {T, 32, 16};
	int in[MAXIN], nin = 0, dy = -1;
	size_t n[MAXIN];
	float *buf[MAXIN];
	uint64_t st = 99;
	RefTensor *rt = calloc((size_t)g->ntensors, sizeof *rt);
	for (int i = 0; i < g->ntensors && nin < MAXIN; i++) {
		const Tensor *t = &g->tensors[i];
		if (t->producer >= 0)
			continue;
		n[nin] = 1;
		for (int k = 0; k < t->rank; k++)
			n[nin] *= (size_t)layout_extent(dims, t->shape[k]);
		buf[nin] = malloc(sizeof(float) * n[nin]);
		bool gamma = t->rank == 1, act = t->role != ROLE_WEIGHT;
		for (size_t e = 0; e < n[nin]; e++) {
			st = st * 6364136223846793005ull + 1442695040888963407ull;
			float u = (float)((int)(st >> 40) % 2001 - 1000);
			buf[nin][e] = u / (gamma ? 1000.0f : act ? 500.0f : 4000.0f);
		}
		rt[i].comp[COMP_DATA] = buf[nin];
		rt[i].bytes[COMP_DATA] = sizeof(float) * n[nin];
		if (!strcmp(t->name, "d_y"))
			dy = nin;
		in[nin++] = i;
	}
	check(dy >= 0, arena_printf(a, "%s/inputs", name), "the derived layer has no input 'd_y'");
	if (dy < 0)
		goto out;
	fd_loss(g, dims, rt, buf[dy], n[dy]);
	for (int k = 0; k < nin; k++) {
		if (k == dy)
			continue;
		const char *gn = arena_printf(a, "d_%s", g->tensors[in[k]].name);
		int id = tensor_id(g, gn);
		check(id >= 0 && rt[id].comp[COMP_DATA], arena_printf(a, "%s/has/%s", name, gn), "no gradient '%s'", gn);
		if (id < 0 || !rt[id].comp[COMP_DATA])
			continue;
		float *gv = malloc(sizeof(float) * n[k]);
		memcpy(gv, rt[id].comp[COMP_DATA], sizeof(float) * n[k]);
		double worst = 0, big = 0;
		for (size_t i = 0; i < n[k]; i++)
			big = fabs(gv[i]) > big ? fabs(gv[i]) : big;
		for (size_t i = 0; i < n[k]; i += 1 + n[k] / 64) { /* up to 64 elements each */
			float keep = buf[k][i], e = 1e-2f * (fabsf(keep) > 0.1f ? fabsf(keep) : 0.1f);
			buf[k][i] = keep + e;
			double lp = fd_loss(g, dims, rt, buf[dy], n[dy]);
			buf[k][i] = keep - e;
			double lm = fd_loss(g, dims, rt, buf[dy], n[dy]);
			buf[k][i] = keep;
			double fd = (lp - lm) / ((double)(keep + e) - (double)(keep - e));
			double err = fabs(fd - gv[i]) / (big > 0 ? big : 1);
			worst = err > worst ? err : worst;
		}
		check(worst < 2e-3, arena_printf(a, "%s/%s", name, gn),
			"worst |finite difference - gradient| / max|gradient| = %g", worst);
		free(gv);
	}
out:
	for (int k = 0; k < nin; k++) {
		rt[in[k]].comp[COMP_DATA] = NULL;
		free(buf[k]);
	}
	interp_free(g, rt);
	free(rt);
	arena_free(a);
}

/* ---- main_grad: weight gradients accumulated into the caller's FP32 buffer ---- */

/* Fill n floats from a seed made of name (the same values in every graph). */
static void fill_named(float *v, size_t n, const char *name, float scale)
{
	uint64_t st = 7;
	for (const char *c = name; *c; c++)
		st = st * 131 + (unsigned char)*c;
	for (size_t i = 0; i < n; i++) {
		st = st * 6364136223846793005ull + 1442695040888963407ull;
		v[i] = (float)((int)(st >> 40) % 2001 - 1000) / scale;
	}
}

/* Run g (FP32, T tokens) on named inputs; with priors, d_<weight> starts from prior values.
 * Returns rt (the caller frees with interp_free). */
static RefTensor *run_named(const Graph *g, const long *dims, bool priors)
{
	RefTensor *rt = calloc((size_t)g->ntensors, sizeof *rt);
	for (int i = 0; i < g->ntensors; i++) {
		const Tensor *t = &g->tensors[i];
		bool acc = t->producer >= 0 && g->ops[t->producer].p.accumulate;
		if (t->producer >= 0 && !(acc && priors))
			continue;
		size_t n = 1;
		for (int k = 0; k < t->rank; k++)
			n *= (size_t)layout_extent(dims, t->shape[k]);
		float *v = malloc(sizeof *v * n);
		fill_named(v, n, t->name, t->role == ROLE_WEIGHT ? 4000.0f : 500.0f);
		rt[i].comp[COMP_DATA] = v;
		rt[i].bytes[COMP_DATA] = sizeof *v * n;
		rt[i].owned = 1;
	}
	char err[256];
	if (interp_run(g, dims, rt, err, sizeof err))
		printf("  reference: %s\n", err);
	return rt;
}

/* The derived MLP with main_grad on gamma, w_up, w_down: each d_<w> = prior + the
 * gradient of the same layer without main_grad, to the bit (one FP32 addition). */
static void test_main_grad(void)
{
	Arena *a = arena_new();
	Diag d = {0};
	d.file = "main_grad.yaml";
	const char *plain = fd_spec, *key = "role: weight}";
	Buf mg = {0};
	for (const char *p = plain, *q; *p; p = q + strlen(key)) {
		if (!(q = strstr(p, key))) {
			buf_puts(&mg, p);
			break;
		}
		buf_putn(&mg, p, (size_t)(q - p));
		buf_puts(&mg, "role: weight, main_grad: true}");
	}
	const Graph *g[2] = {NULL, NULL};
	for (int k = 0; k < 2; k++) {
		const char *text = k ? mg.p : plain;
		Spec *s = spec_load(a, &d, d.file, text, strlen(text));
		if (s)
			s = spec_derive_backward(a, &d, s, (Arch){90, true});
		g[k] = s ? ir_build(a, &d, s, (Arch){90, true}) : NULL;
	}
	if (!g[0] || !g[1]) {
		check(0, "main-grad/load", "%s", d.msg);
		buf_free(&mg);
		arena_free(a);
		return;
	}
	long dims[3] = {3, 32, 16};
	RefTensor *fresh = run_named(g[0], dims, false), *acc = run_named(g[1], dims, true);
	static const char *const names[] = {"d_gamma", "d_w_up", "d_w_down"};
	for (int w = 0; w < 3; w++) {
		int i0 = tensor_id(g[0], names[w]), i1 = tensor_id(g[1], names[w]);
		bool ok = i0 >= 0 && i1 >= 0 && g[1]->ops[g[1]->tensors[i1].producer].p.accumulate &&
			fresh[i0].comp[COMP_DATA] && acc[i1].comp[COMP_DATA];
		size_t n = ok ? fresh[i0].bytes[COMP_DATA] / 4 : 0, bad = 0;
		float *prior = malloc(sizeof *prior * (n ? n : 1));
		fill_named(prior, n, names[w], 500.0f);
		for (size_t e = 0; e < n; e++) {
			float want = prior[e] + ((const float *)fresh[i0].comp[COMP_DATA])[e];
			bad += memcmp(&want, (const float *)acc[i1].comp[COMP_DATA] + e, 4) != 0;
		}
		check(ok && !bad, arena_printf(a, "main-grad/%s", names[w]),
			"accumulated into the prior: %s, %zu of %zu elements differ from prior + gradient", ok ? "yes" : "no", bad, n);
		free(prior);
	}
	interp_free(g[0], fresh);
	interp_free(g[1], acc);
	free(fresh);
	free(acc);
	buf_free(&mg);
	arena_free(a);
}

/* ---- the derived backward per recipe against the same layer with quantization off ---- */

static int ref_dtype(DType t) { return t == DT_F32 ? REF_F32 : t == DT_F16 ? REF_F16 : REF_BF16; }

/* The training MLP (RMSNorm, up GEMM, SwiGLU, down GEMM; backward: true) with recipe r and
 * tensors of dtype dt, at hidden 128 and ffn 128. */
static const char *recipe_mlp(Arena *a, const char *r, const char *dt)
{
	return arena_printf(a,
		"layer: rq\ndims: {tokens: dynamic, hidden: 128, ffn: 128}\nrecipe: %s\ntensors:\n"
		"  x: {shape: [tokens, hidden], dtype: %s}\n  gamma: {shape: [hidden], dtype: %s, role: weight}\n"
		"  w_up: {shape: [2*ffn, hidden], dtype: %s, role: weight}\n"
		"  w_down: {shape: [hidden, ffn], dtype: %s, role: weight}\nops:\n"
		"  - norm_quantize: {in: x, gamma: gamma, out: xn}\n  - quantize: {in: w_up, out: w_up_q}\n"
		"  - gemm_cast: {a: xn, b: w_up_q, out: h, dtype: %s}\n  - glu_amax: {in: h, out: act}\n"
		"  - quantize: {in: w_down, out: w_down_q}\n  - gemm_cast: {a: act, b: w_down_q, out: y, dtype: %s}\n"
		"outputs: [y]\nbackward: true\n", r, dt, dt, dt, dt, dt, dt);
}

/* Run a derived layer on the named inputs (bf16-representable values, so both dtypes see the
 * same numbers). Delayed scaling: a first run finds each amax, the state is stepped as
 * tg_step would (scale = the format's max / amax, margin 0), then the measured run. */
static RefTensor *run_recipe(const Graph *g, const long *dims)
{
	RefTensor *rt = calloc((size_t)g->ntensors, sizeof *rt);
	for (int i = 0; i < g->ntensors; i++) {
		const Tensor *t = &g->tensors[i];
		rt[i].scale = rt[i].scale_inv = 1.0f;
		if (t->producer >= 0)
			continue;
		size_t n = 1;
		for (int k = 0; k < t->rank; k++)
			n *= (size_t)layout_extent(dims, t->shape[k]);
		float *v = malloc(sizeof *v * n);
		fill_named(v, n, t->name, t->rank == 1 ? 1000.0f : t->role == ROLE_WEIGHT ? 8000.0f : 300.0f);
		if (t->rank == 1)
			for (size_t e = 0; e < n; e++)
				v[e] += 1.0f;
		void *q = malloc(n * (size_t)dtype_bits(t->dtype) / 8);
		for (size_t e = 0; e < n; e++) { /* round to bf16 first: the same values in every dtype */
			uint16_t b;
			ref_store(&b, REF_BF16, 0, v[e]);
			ref_store(q, ref_dtype(t->dtype), e, ref_load(&b, REF_BF16, 0));
		}
		free(v);
		rt[i].comp[COMP_DATA] = q;
		rt[i].bytes[COMP_DATA] = n * (size_t)dtype_bits(t->dtype) / 8;
		rt[i].owned = 1;
	}
	char err[256];
	for (int pass = 0; pass < 2; pass++) {
		if (interp_run(g, dims, rt, err, sizeof err))
			printf("  reference: %s\n", err);
		bool delayed = false;
		for (int i = 0; i < g->ntensors; i++) {
			const Tensor *t = &g->tensors[i];
			if (t->state_slot < 0 || t->recipe.scaling != SCALING_DELAYED || rt[i].amax <= 0)
				continue;
			rt[i].scale = (t->dtype == DT_E5M2 ? 57344.0f : 448.0f) / rt[i].amax;
			rt[i].scale_inv = 1.0f / rt[i].scale;
			delayed = true;
		}
		if (!delayed)
			break;
	}
	return rt;
}

/* Relative Frobenius distance of tensor `name` of (g, r) from (g0, r0) (FP32 data). */
static double grad_dist(const Graph *g, const RefTensor *r, const Graph *g0, const RefTensor *r0, const char *name)
{
	int i = tensor_id(g, name), i0 = tensor_id(g0, name);
	if (i < 0 || i0 < 0 || !r[i].comp[COMP_DATA] || !r0[i0].comp[COMP_DATA])
		return INFINITY;
	const Tensor *t = &g->tensors[i], *t0 = &g0->tensors[i0];
	size_t n = r0[i0].bytes[COMP_DATA] / 4;
	double num = 0, den = 0;
	for (size_t e = 0; e < n; e++) {
		double x = ref_load(r[i].comp[COMP_DATA], ref_dtype(t->dtype), e);
		double y = ref_load(r0[i0].comp[COMP_DATA], ref_dtype(t0->dtype), e);
		num += (x - y) * (x - y);
		den += y * y;
	}
	return den > 0 ? sqrt(num / den) : INFINITY;
}

/* The whole derived backward (d_x, d_gamma, d_w_up, d_w_down) of the training MLP in each
 * recipe, BF16 tensors, against the same layer with quantization off (recipe none, FP32
 * tensors: the reference interpreter's FP32 autodiff, checked against finite differences
 * above), 64 tokens: relative Frobenius error within the recipe's bound (README, NUMERICS.md). */
static void test_recipe_vs_none(void)
{
	static const struct { const char *name, *recipe; double bound; } rs[] = {
		{"delayed", "{scaling: delayed, format: hybrid, history: 4}", 0.15},
		{"current", "{scaling: current, format: hybrid}", 0.15},
		{"mxfp8", "{scaling: mxfp8, format: hybrid}", 0.15},
		{"nvfp4", "{scaling: nvfp4}", 0.5},
	};
	static const char *const grads[] = {"d_x", "d_gamma", "d_w_up", "d_w_down"};
	Arena *a = arena_new();
	long dims[3] = {64, 128, 128};
	Diag d = {0};
	d.file = "recipe_mlp.yaml";
	const char *t0 = recipe_mlp(a, "{scaling: none}", "fp32");
	Spec *s0 = spec_load(a, &d, d.file, t0, strlen(t0));
	s0 = s0 ? spec_derive_backward(a, &d, s0, (Arch){100, true}) : NULL;
	const Graph *g0 = s0 ? ir_build(a, &d, s0, (Arch){100, true}) : NULL;
	if (!g0) {
		check(0, "recipe-vs-none/load", "%s", d.msg);
		arena_free(a);
		return;
	}
	RefTensor *r0 = run_recipe(g0, dims);
	for (size_t k = 0; k < sizeof rs / sizeof rs[0]; k++) {
		const char *text = recipe_mlp(a, rs[k].recipe, "bf16");
		Spec *s = spec_load(a, &d, d.file, text, strlen(text));
		s = s ? spec_derive_backward(a, &d, s, (Arch){100, true}) : NULL;
		const Graph *g = s ? ir_build(a, &d, s, (Arch){100, true}) : NULL;
		if (!g) {
			check(0, arena_printf(a, "recipe-vs-none/%s", rs[k].name), "%s", d.msg);
			continue;
		}
		RefTensor *r = run_recipe(g, dims);
		double worst = 0;
		Buf msg = {0};
		for (int w = 0; w < 4; w++) {
			double e = grad_dist(g, r, g0, r0, grads[w]);
			buf_printf(&msg, "%s%s %.4f", w ? ", " : "", grads[w], e);
			worst = e > worst || e != e ? e : worst;
		}
		printf("  recipe-vs-none %s: %s (bound %g)\n", rs[k].name, msg.p, rs[k].bound);
		check(worst <= rs[k].bound, arena_printf(a, "recipe-vs-none/%s", rs[k].name),
			"relative Frobenius error of the gradients: %s; bound %g", msg.p, rs[k].bound);
		buf_free(&msg);
		interp_free(g, r);
		free(r);
	}
	interp_free(g0, r0);
	free(r0);
	arena_free(a);
}

/* ---- the gradients' recipe state (backward: true, per-tensor recipes) ---- */

/* Every quantized gradient of a derived bf16 MLP has a state slot (so tg_step's
 * recipe_update covers it: it runs over all slots), in the gradient format: E5M2 under
 * hybrid, E4M3 under e4m3; the derived ops are the backward phase, planned after the
 * forward's kernels. */
static void test_gradient_state(void)
{
	static const char *const recipes[] = {"{scaling: delayed, format: hybrid, history: 8}",
		"{scaling: delayed, format: e4m3, history: 4}", "{scaling: current, format: hybrid}", "{scaling: nvfp4}"};
	for (int r = 0; r < 4; r++) {
		Arena *a = arena_new();
		Diag d = {0};
		d.file = "grad_state.yaml";
		const char *text = arena_printf(a,
			"layer: gs\ndims: {tokens: dynamic, hidden: 128, ffn: 128}\nrecipe: %s\ntensors:\n"
			"  x: {shape: [tokens, hidden], dtype: bf16}\n  gamma: {shape: [hidden], dtype: bf16, role: weight}\n"
			"  w_up: {shape: [2*ffn, hidden], dtype: bf16, role: weight}\n"
			"  w_down: {shape: [hidden, ffn], dtype: bf16, role: weight}\nops:\n"
			"  - norm_quantize: {in: x, gamma: gamma, out: xn}\n  - quantize: {in: w_up, out: w_up_q}\n"
			"  - gemm_cast: {a: xn, b: w_up_q, out: h, dtype: bf16}\n  - glu_amax: {in: h, out: act}\n"
			"  - quantize: {in: w_down, out: w_down_q}\n  - gemm_cast: {a: act, b: w_down_q, out: y, dtype: bf16}\n"
			"backward: true\n", recipes[r]);
		Spec *s = spec_load(a, &d, d.file, text, strlen(text));
		if (s)
			s = spec_derive_backward(a, &d, s, (Arch){100, true});
		const Graph *g = s ? ir_build(a, &d, s, (Arch){100, true}) : NULL;
		const Plan *p = g ? plan_build(a, &d, g) : NULL;
		const char *name = arena_printf(a, "grad-state/%s", recipes[r]);
		if (!p) {
			check(0, name, "%s", d.msg);
			arena_free(a);
			continue;
		}
		int grads = 0, bad = 0, slots = 0;
		bool nvfp4 = r == 3, hybrid = strstr(recipes[r], "hybrid") != NULL;
		for (int i = 0; i < g->ntensors; i++) {
			const Tensor *t = &g->tensors[i];
			slots += (t->state_slot >= 0) + (t->state_slot_t >= 0);
			if (t->role != ROLE_GRADIENT || t->dtype == t->hp_dtype)
				continue;
			grads++;
			DType want = nvfp4 ? DT_E2M1 : hybrid ? DT_E5M2 : DT_E4M3;
			if (t->state_slot < 0 || t->dtype != want || g->ops[t->producer].phase != PHASE_BACKWARD) {
				printf("  %s: slot %d, %s, phase %s\n", t->name, t->state_slot, dtype_name(t->dtype),
					phase_name(g->ops[t->producer].phase));
				bad++;
			}
		}
		bool delayed = strstr(recipes[r], "delayed") != NULL;
		const Kernel *up = p->update_kernel >= 0 ? &p->kernels[p->update_kernel] : NULL;
		bool covered = delayed ? up && up->rows.add == g->nstate && p->ndelayed == g->nstate : !up;
		int last_fwd = -1, first_bwd = p->nkernels;
		for (int k = 0; k < p->nkernels; k++) {
			if (k == p->update_kernel)
				continue;
			if (p->kernels[k].phase == PHASE_FORWARD)
				last_fwd = k;
			else if (first_bwd == p->nkernels)
				first_bwd = k;
		}
		check(grads >= 2 && !bad && slots == g->nstate && covered && last_fwd < first_bwd && first_bwd < p->nkernels,
			name, "%d quantized gradients, %d without a slot or in the wrong format/phase; %d slots of %d; "
			"recipe_update over all slots: %d; last forward kernel %d, first backward %d", grads, bad, slots, g->nstate,
			covered, last_fwd, first_bwd);
		arena_free(a);
	}
}

/* Columnwise copies on the GPU: lines of rows rounded up to 16 (data_t of 1-4 byte elements, deq_t) or 32 (E2M1);
 * layout_unpitch packs a download back to the host layout. */
static void test_pitch(void)
{
	const long dims[1] = {0};
	Tensor t = {0};
	t.rank = 2;
	t.shape[0] = (Extent){-1, 0, 217};
	t.shape[1] = (Extent){-1, 0, 100};
	t.dtype = DT_E4M3;
	t.hp_dtype = DT_BF16;
	t.recipe.scaling = SCALING_MXFP8;
	bool sizes = layout_pitch(217, DT_E4M3) == 224 && layout_pitch(224, DT_BF16) == 224 && layout_pitch(5, DT_E2M1) == 32 &&
		layout_comp_bytes(dims, &t, COMP_DATA_T) == 21700 && layout_comp_bytes_dev(dims, &t, COMP_DATA_T) == 22400 &&
		layout_comp_bytes(dims, &t, COMP_DEQ_T) == 43400 && layout_comp_bytes_dev(dims, &t, COMP_DEQ_T) == 44800 &&
		layout_comp_bytes_dev(dims, &t, COMP_DATA) == 21700;
	uint16_t *buf = malloc(44800);
	for (int c = 0; c < 100; c++)
		for (int r = 0; r < 224; r++)
			buf[c * 224 + r] = (uint16_t)(r < 217 ? c * 1000 + r : 0xFFFF);
	size_t n = layout_unpitch(dims, &t, COMP_DEQ_T, buf, 44800);
	bool packed = n == 43400;
	for (int i = 0; i < 21700 && packed; i++)
		packed = buf[i] == (uint16_t)(i / 217 * 1000 + i % 217);
	t.dtype = DT_E2M1;
	t.recipe.scaling = SCALING_NVFP4;
	sizes = sizes && layout_comp_bytes_dev(dims, &t, COMP_DATA_T) == 100 * 112 && layout_comp_bytes_dev(dims, &t, COMP_DEQ_T) == 44800;
	uint8_t *q = malloc(11200);
	for (int c = 0; c < 100; c++)
		for (int b = 0; b < 112; b++)
			q[c * 112 + b] = (uint8_t)(b < 109 ? c + b : 0xEE);
	bool fp4 = layout_unpitch(dims, &t, COMP_DATA_T, q, 11200) == 10900;
	for (int i = 0; i < 10900 && fp4; i++)
		fp4 = q[i] == (uint8_t)(i / 109 + i % 109);
	free(q);
	check(sizes, "layout/pitch-sizes", "a columnwise copy's bytes on the GPU or the host");
	check(fp4, "layout/unpitch-e2m1", "a padded E2M1 data_t download does not pack to [cols][ceil(rows/2)]");
	check(packed, "layout/unpitch", "a padded deq_t download does not pack to [cols][rows]");
	free(buf);
}

int main(void)
{
	Arena *a = arena_new();
	Diag d = {0};
	d.file = "test_interp.yaml";
	Spec *s = spec_load(a, &d, d.file, spec_text, strlen(spec_text));
	const Graph *g = s ? ir_build(a, &d, s, (Arch){90, true}) : NULL;
	if (!g) {
		printf("FAIL interp/load: %s\n", d.msg);
		return 1;
	}
	test_pitch();
	const int rows = 5, h = 48, f = 32;
	long dims[3] = {rows, h, f};
	RefTensor *rt = calloc((size_t)g->ntensors, sizeof *rt);
	float *x = malloc(sizeof *x * rows * h), *w = malloc(sizeof *w * f * h);
	uint16_t *xb = malloc(2 * rows * h), *wb = malloc(2 * f * h);
	uint64_t st = 12345;
	for (int i = 0; i < rows * h + f * h; i++) {
		st = st * 6364136223846793005ull + 1442695040888963407ull;
		float v = (float)((int)(st >> 40) % 2001 - 1000) / 250.0f;
		if (i < rows * h)
			ref_store(xb, REF_BF16, (size_t)i, v), x[i] = ref_load(xb, REF_BF16, (size_t)i);
		else
			ref_store(wb, REF_BF16, (size_t)(i - rows * h), v), w[i - rows * h] = ref_load(wb, REF_BF16, (size_t)(i - rows * h));
	}
	rt[tensor_id(g, "x")].comp[COMP_DATA] = xb;
	rt[tensor_id(g, "w")].comp[COMP_DATA] = wb;
	char err[256];
	check(interp_run(g, dims, rt, err, sizeof err) == 0, "run", "%s", err);
	test_copies(g, dims, rt, "xq", x, rows, h, 0.25);
	test_copies(g, dims, rt, "wq", w, f, h, 0.25);
	test_copies(g, dims, rt, "xs", x, rows, h, 0.4);

	/* stochastic rounding: a function of (seed, offset, index) */
	RefTensor *rs = &rt[tensor_id(g, "xs")];
	size_t nb = rs->bytes[COMP_DATA];
	uint8_t *first = malloc(nb);
	memcpy(first, rs->comp[COMP_DATA], nb);
	interp_quantize(g, dims, &g->tensors[tensor_id(g, "xs")], rs);
	check(!memcmp(first, rs->comp[COMP_DATA], nb), "sr/repeatable", "the same offset gave other codes");
	rs->sr_offset = 1;
	interp_quantize(g, dims, &g->tensors[tensor_id(g, "xs")], rs);
	check(memcmp(first, rs->comp[COMP_DATA], nb) != 0, "sr/offset", "a new offset gave the same codes");
	check(tensor_sr_seed(g, &g->tensors[tensor_id(g, "xs")]) != tensor_sr_seed(g, &g->tensors[tensor_id(g, "xq")]),
		"sr/seeds", "two tensors share an SR seed");

	/* the emulated GEMM: y = deq(xq) * deq(wq)^T, close to x * w^T */
	float *ref = malloc(sizeof *ref * rows * f);
	ref_gemm(x, w, rows, f, h, ref);
	const float *y = rt[tensor_id(g, "y")].comp[COMP_DATA];
	double num = 0, den = 0;
	for (int i = 0; i < rows * f; i++)
		num += (y[i] - ref[i]) * (double)(y[i] - ref[i]), den += (double)ref[i] * ref[i];
	check(y && sqrt(num / den) < 0.2, "gemm", "relative error %g", sqrt(num / den));
	test_native_gemm(g, dims, rt, rows * f);

	free(first);
	free(ref);
	rt[tensor_id(g, "x")].comp[COMP_DATA] = rt[tensor_id(g, "w")].comp[COMP_DATA] = NULL;
	interp_free(g, rt);
	free(rt);
	free(x), free(w), free(xb), free(wb);
	arena_free(a);
	test_rht();
	test_backward();
	test_derived_fd("fd", fd_spec);
	test_derived_fd("fd-residual", fd_res_spec);
	test_gradient_state();
	test_main_grad();
	test_recipe_vs_none();
	return check_failures ? 1 : 0;
}
