/* test_interp.c: the reference interpreter on an NVFP4 layer (no GPU needed).
 *
 * What the GPU kernels are checked against must itself hold together: the
 * layouts of every NVFP4 component on odd row counts (packed rows, a zero
 * padding nibble, short last blocks of the columnwise copy), S_enc from the
 * global amax, both copies decoding back to the input within the format's
 * error, stochastic rounding that depends on its offset and is repeatable,
 * distinct SR seeds per tensor, an emulated NVFP4 GEMM close to the FP32
 * product, and the native GEMM's reference (alpha) close to the emulated one. Protocol: ok/FAIL lines, exit 1 on failure. */
#include "interp.h"
#include "ref.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

static void check(int ok, const char *name, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void check(int ok, const char *name, const char *fmt, ...)
{
	if (ok) {
		printf("ok interp/%s\n", name);
		return;
	}
	va_list ap;
	va_start(ap, fmt);
	printf("FAIL interp/%s: ", name);
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	failures++;
}

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
			interp_comp_bytes(g, dims, t, COMP_HP) == (size_t)rows * cols * 4,
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
	return failures ? 1 : 0;
}
