/* test_numerics.c: the statistics of `tegen numerics` (cli/numstats.c) on
 * hand-made tensors with known answers, and its input generators' statistics.
 * Each case builds a one-op layer (quantize x -> xq, both copies) with the
 * recipe under test, sets xq's FP32 value by hand, quantizes it through the
 * interpreter and checks the numbers. */
#include "block_scales.h"
#include "check.h"
#include "interp.h"
#include "layout.h"
#include "numstats.h"
#include "pipeline.h"
#include "tg_kernel.h"
#include "ref.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char spec_fmt[] =
	"layer: q\n"
	"dims: {rows: %d, cols: %d}\n"
	"recipe: %s\n"
	"tensors:\n"
	"  x: {shape: [rows, cols], dtype: fp32}\n"
	"ops:\n"
	"  - quantize: {in: x, out: xq, layout: [rowwise, columnwise]}\n"
	"outputs: [xq]\n";

typedef struct Case {
	Arena *a;
	const Graph *g;
	long dims[4];
	RefTensor r;
	const Tensor *t;
} Case;

/* Quantize v [rows][cols] under recipe (a YAML flow map); scale: the delayed scale. */
static int make_case(Case *c, const char *recipe, int rows, int cols, const float *v, float scale)
{
	memset(c, 0, sizeof *c);
	c->a = arena_new();
	Diag d = {0};
	d.file = "q.yaml";
	char *text = arena_printf(c->a, spec_fmt, rows, cols, recipe);
	Spec *s = spec_load(c->a, &d, d.file, text, strlen(text));
	c->g = s ? ir_build(c->a, &d, s, (Arch){100, true}) : NULL;
	if (!c->g) {
		printf("FAIL numerics/load %s: %s\n", recipe, d.msg);
		check_failures++;
		arena_free(c->a);
		return -1;
	}
	for (int i = 0; i < c->g->ndims; i++)
		c->dims[i] = layout_dim_at(c->g, i, 1);
	c->t = &c->g->tensors[1];
	size_t n = (size_t)rows * (size_t)cols;
	c->r.value = malloc(sizeof(float) * n);
	memcpy(c->r.value, v, sizeof(float) * n);
	c->r.scale = scale;
	c->r.scale_inv = 1.0f / scale;
	interp_quantize(c->g, c->dims, c->t, &c->r);
	return 0;
}

static void free_case(Case *c)
{
	for (int k = 0; k < COMP_COUNT; k++)
		free(c->r.comp[k]);
	free(c->r.value);
	arena_free(c->a);
}

static int near(double a, double b, double tol) { return fabs(a - b) <= tol; }

/* A tensor exactly representable in E4M3 (per-tensor current scaling with amax 448 gives
 * scale 1): infinite SQNR, no error, no underflow, no saturation; same for the columnwise copy. */
static void test_exact_e4m3(void)
{
	float v[4 * 64];
	for (int i = 0; i < 4 * 64; i++)
		v[i] = tg_e4m3_to_f32((uint8_t)(i % 0x7F)) * (i & 1 ? -1.0f : 1.0f);
	v[5] = 448.0f;
	Case c;
	if (make_case(&c, "{scaling: current, format: e4m3}", 4, 64, v, 1.0f))
		return;
	for (int k = 0; k < 2; k++) {
		NumStats s;
		numerics_copy_stats(c.g, c.dims, c.t, &c.r, k ? COMP_DATA_T : COMP_DATA, &s);
		check_line("numerics/", isinf(s.sqnr_db) && s.sqnr_db > 0 && s.max_rel == 0 && s.underflow == 0 &&
			s.saturated == 0 && s.blocks == 1 && s.scale_min == 1 && s.scale_max == 1 && s.n == 256,
			k ? "exact_e4m3/col" : "exact_e4m3/row", "sqnr %g max_rel %g under %g sat %g blocks %ld scale %g..%g n %ld",
			s.sqnr_db, s.max_rel, s.underflow, s.saturated, s.blocks, s.scale_min, s.scale_max, s.n);
	}
	free_case(&c);
}

/* Values below half the smallest E4M3 subnormal (2^-10) after scaling (delayed, scale 1):
 * 100% underflow, the one block vanished, SQNR 0 dB (the error is the signal), max rel 1. */
static void test_underflow(void)
{
	float v[2 * 32];
	for (int i = 0; i < 64; i++)
		v[i] = (i & 1 ? -1.0f : 1.0f) * ldexpf(1.0f + (float)i / 64, -12);
	Case c;
	if (make_case(&c, "{scaling: delayed, format: e4m3}", 2, 32, v, 1.0f))
		return;
	NumStats s;
	numerics_copy_stats(c.g, c.dims, c.t, &c.r, COMP_DATA, &s);
	check_line("numerics/", s.underflow == 1 && s.vanished_blocks == 1 && near(s.sqnr_db, 0, 1e-12) && s.max_rel == 1 &&
		s.mean_rel == 1 && s.saturated == 0, "underflow_all", "under %g vanished %g sqnr %g max_rel %g", s.underflow,
		s.vanished_blocks, s.sqnr_db, s.max_rel);
	free_case(&c);
}

/* Scale 1, half the values 1000 (past E4M3's 448): 50% saturated, each at relative error
 * 1 - 448/1000; the other half (1.0) exact. */
static void test_saturation(void)
{
	float v[2 * 32];
	for (int i = 0; i < 64; i++)
		v[i] = i % 2 ? 1000.0f : 1.0f;
	Case c;
	if (make_case(&c, "{scaling: delayed, format: e4m3}", 2, 32, v, 1.0f))
		return;
	NumStats s;
	numerics_copy_stats(c.g, c.dims, c.t, &c.r, COMP_DATA, &s);
	double sqnr = 10 * log10((32 * 1e6 + 32) / (32 * 552.0 * 552.0));
	check_line("numerics/", s.saturated == 0.5 && near(s.max_rel, 0.552, 1e-9) && near(s.mean_rel, 0.276, 1e-9) &&
		s.underflow == 0 && near(s.sqnr_db, sqnr, 1e-9), "saturation_half", "sat %g max_rel %g mean_rel %g sqnr %g (want %g)",
		s.saturated, s.max_rel, s.mean_rel, s.sqnr_db, sqnr);
	free_case(&c);
}

/* MXFP8, 2 rows x 64: four blocks of 32; one all-zero block has E8M0 exponent 0 (tiny, not
 * vanished: nothing nonzero in it); the powers of two in the others are exact. */
static void test_mxfp8_blocks(void)
{
	float v[2 * 64];
	for (int i = 0; i < 128; i++)
		v[i] = i >= 64 && i < 96 ? 0.0f : ldexpf(1.0f, i % 7 - 3);
	Case c;
	if (make_case(&c, "{scaling: mxfp8, format: e4m3}", 2, 64, v, 1.0f))
		return;
	NumStats s;
	numerics_copy_stats(c.g, c.dims, c.t, &c.r, COMP_DATA, &s);
	check_line("numerics/", s.blocks == 4 && s.tiny_blocks == 0.25 && s.vanished_blocks == 0 && isinf(s.sqnr_db) &&
		s.underflow == 0, "mxfp8_blocks", "blocks %ld tiny %g vanished %g sqnr %g", s.blocks, s.tiny_blocks,
		s.vanished_blocks, s.sqnr_db);
	/* columnwise: blocks of 32 along the 2 rows, one per column: 64 blocks, none all-zero in x^T
	 * except the 32 columns 0..31 of row 1 paired with row 0's nonzero values: none tiny */
	numerics_copy_stats(c.g, c.dims, c.t, &c.r, COMP_DATA_T, &s);
	check_line("numerics/", s.blocks == 64 && s.tiny_blocks == 0 && isinf(s.sqnr_db), "mxfp8_blocks/col",
		"blocks %ld tiny %g sqnr %g", s.blocks, s.tiny_blocks, s.sqnr_db);
	free_case(&c);
}

/* NVFP4 with every 16-block's amax 6 and E2M1 values: S_enc = 448*6/6 = 448, S_dec = 448
 * (exact in E4M3), so the copy is exact: infinite SQNR; 4 blocks per row of 64. */
static void test_nvfp4_exact(void)
{
	static const float e2m1[8] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
	float v[2 * 64];
	for (int i = 0; i < 128; i++)
		v[i] = (i % 16 == 0 ? 6.0f : e2m1[i % 8]) * (i % 3 ? 1.0f : -1.0f);
	Case c;
	if (make_case(&c, "{scaling: nvfp4}", 2, 64, v, 1.0f))
		return;
	NumStats s;
	numerics_copy_stats(c.g, c.dims, c.t, &c.r, COMP_DATA, &s);
	check_line("numerics/", isinf(s.sqnr_db) && s.blocks == 8 && s.tiny_blocks == 0 && s.saturated == 0 &&
		s.scale_min == 1 && s.scale_max == 1, "nvfp4_exact", "sqnr %g blocks %ld tiny %g sat %g scale %g..%g", s.sqnr_db,
		s.blocks, s.tiny_blocks, s.saturated, s.scale_min, s.scale_max);
	free_case(&c);
}

/* Block 1x128: a row of 128 with a known SQNR: x = 1 + i/128 quantized with scale
 * 448/amax, compared with the same computed here from the E4M3 rounding. */
static void test_block_sqnr(void)
{
	float v[128];
	for (int i = 0; i < 128; i++)
		v[i] = 1.0f + (float)i / 128;
	Case c;
	if (make_case(&c, "{scaling: block1x128, format: e4m3, pow2: false}", 1, 128, v, 1.0f))
		return;
	float sc = 448.0f / v[127];
	double sx = 0, se = 0;
	for (int i = 0; i < 128; i++) {
		double q = tg_e4m3_to_f32(tg_f32_to_fmt(v[i] * sc, TG_FMT_E4M3)) * (double)tg_scale_inv(sc);
		sx += (double)v[i] * v[i];
		se += (v[i] - q) * (v[i] - q);
	}
	NumStats s;
	numerics_copy_stats(c.g, c.dims, c.t, &c.r, COMP_DATA, &s);
	check_line("numerics/", near(s.sqnr_db, 10 * log10(sx / se), 1e-6) && s.blocks == 1, "block1x128_sqnr",
		"sqnr %g want %g", s.sqnr_db, 10 * log10(sx / se));
	free_case(&c);
}

static void test_error(void)
{
	float ref[2] = {3, 4}, got[2] = {3, 4.5f};
	double rel, db;
	numerics_error(ref, got, 2, &rel, &db);
	check_line("numerics/", near(rel, 0.1, 1e-12) && near(db, 20, 1e-9), "error_known", "rel %g sqnr %g", rel, db);
	numerics_error(ref, ref, 2, &rel, &db);
	check_line("numerics/", rel == 0 && isinf(db), "error_equal", "rel %g sqnr %g", rel, db);
}

/* The generators: mean 0 and the asked std; Student-t heavier tails than the Gaussian; outlier
 * channels 100x the rest, about 1 in 512 of them. */
static void test_generators(void)
{
	long rows = 256, cols = 4096;
	size_t n = (size_t)rows * cols;
	float *x = malloc(sizeof *x * n);
	const char *names[3] = {"gaussian", "student", "outliers"};
	double tail[3] = {0, 0, 0};
	for (int k = 0; k < 3; k++) {
		numerics_fill(x, rows, cols, (NumInput)k, 2.0, 7);
		double s = 0, s2 = 0, so = 0, so2 = 0;
		long no = 0, nt = 0, big = 0;
		for (size_t i = 0; i < n; i++) {
			bool out = k == NUM_OUTLIERS && numerics_outlier_channel((long)(i % (size_t)cols), cols);
			if (out) {
				so += x[i], so2 += (double)x[i] * x[i], no++;
				continue;
			}
			s += x[i], s2 += (double)x[i] * x[i], nt++;
			big += fabs(x[i]) > 8.0; /* beyond 4 std */
		}
		double mean = s / nt, sd = sqrt(s2 / nt - mean * mean);
		tail[k] = (double)big / nt;
		check_line("numerics/gen/", near(mean, 0, 0.01) && near(sd, 2.0, k == NUM_STUDENT ? 0.1 : 0.01), names[k],
			"mean %g std %g (want 0, 2)", mean, sd);
		if (k == NUM_OUTLIERS) {
			long chans = no / rows;
			double osd = sqrt(so2 / no);
			check_line("numerics/gen/", chans >= 2 && chans <= 24 && near(osd, 200, 10), "outlier_channels",
				"%ld channels of %ld, std %g (want 200)", chans, cols, osd);
		}
	}
	check_line("numerics/gen/", tail[NUM_STUDENT] > 20 * tail[NUM_GAUSSIAN] + 1e-4, "student_tails",
		"beyond 4 std: student %g, gaussian %g", tail[NUM_STUDENT], tail[NUM_GAUSSIAN]);
	free(x);
}

/* PlanOptions.hp_values (the GPU path of tegen numerics): every quantizing norm, GLU and dglu writes
 * its FP32 value (hp) and a cast kernel reads it, under each recipe kind; without it, none does
 * (but the block1x128 GLU with a columnwise copy, unfused either way); the kernels emit. */
static void test_hp_values_plan(void)
{
	static const char text[] =
		"layer: hp\n"
		"dims: {tokens: dynamic, h: 256}\n"
		"recipe: {scaling: delayed}\n"
		"overrides:\n"
		"  a: {scaling: current}\n"
		"  dh: {scaling: mxfp8}\n"
		"  b: {scaling: block1x128}\n"
		"tensors:\n"
		"  x: {shape: [tokens, h], dtype: bf16}\n"
		"  gamma: {shape: [h], dtype: bf16, role: weight}\n"
		"  g2: {shape: [tokens, 2*h], dtype: bf16}\n"
		"  d_a: {shape: [tokens, h], dtype: bf16, role: gradient}\n"
		"ops:\n"
		"  - norm_quantize: {in: x, gamma: gamma, out: xn, layout: [rowwise, columnwise]}\n"
		"  - glu_amax: {in: g2, out: a, act: swiglu}\n"
		"  - glu_amax: {in: g2, out: b, act: geglu, layout: [rowwise, columnwise]}\n"
		"  - dglu: {in: g2, grad: d_a, out: dh, act: swiglu, layout: [rowwise, columnwise]}\n"
		"outputs: [xn, a, b, dh]\n";
	for (int on = 0; on < 2; on++) {
		Arena *a = arena_new();
		Diag d = {0};
		PlanOptions o = {NULL, NULL, 0, 0, NULL, 256, on};
		Plan *p = pipeline_plan(a, &d, "hp.yaml", text, strlen(text), (Arch){90, true}, true, &o);
		KernelSource *src;
		if (!p || pipeline_emit(a, &d, p, &src) < 0) {
			printf("FAIL numerics/hp_values%d: %s\n", on, d.msg);
			check_failures++;
			arena_free(a);
			continue;
		}
		int writes = 0, reads = 0;
		for (int k = 0; k < p->nkernels; k++)
			for (int b = 0; b < p->kernels[k].nbind; b++)
				if (p->kernels[k].bind[b].comp == COMP_HP)
					p->kernels[k].bind[b].slot == TG_P_IN ? reads++ : writes++;
		/* off: none (the block GLU writes both 1x128 copies itself); on: all four ops, current
		 * scaling's two passes */
		int want_w = on ? 4 : 0, want_r = on ? 5 : 0;
		char name[64];
		snprintf(name, sizeof name, "numerics/hp_values %s", on ? "on" : "off");
		if (writes != want_w || reads != want_r) {
			printf("FAIL %s: %d kernels write hp (want %d), %d read it (want %d)\n", name, writes, want_w, reads, want_r);
			check_failures++;
		} else
			printf("ok %s\n", name);
		arena_free(a);
	}
}

/* block_scales_adopt (the checker's rule for a fused kernel's block scales; the arrays hold scale_inv,
 * codes are value * (1 / scale_inv)): a columnwise 1x128 copy
 * without pow2 (a scale 2 ulps off is adopted, one 10 ulps off is not, no code moves), with pow2 (a
 * scale twice the reference's is adopted and that column block re-quantized from the value), and a
 * rowwise MXFP8 copy (one E8M0 step: adopted, the row block re-quantized). */
static float ulps_up(float x, int n)
{
	uint32_t u;
	memcpy(&u, &x, 4);
	u += (uint32_t)n;
	memcpy(&x, &u, 4);
	return x;
}

static void test_block_scales_adopt(void)
{
	enum { R = 200, C = 3 }; /* two row blocks of 1x128 (the second partial), three columns */
	static float val[R * C];
	for (int i = 0; i < R * C; i++)
		val[i] = (float)((i * 37) % 101 - 50) / 7.0f;
	for (int pow2 = 0; pow2 < 2; pow2++) {
		Tensor t;
		memset(&t, 0, sizeof t);
		t.dtype = DT_E4M3;
		t.recipe.scaling = SCALING_BLOCK1X128;
		t.recipe.pow2 = pow2;
		t.columnwise = true;
		RefTensor r;
		memset(&r, 0, sizeof r);
		static uint8_t data_t[C * R];
		static float ref_s[2 * C], gpu_s[2 * C];
		for (int k = 0; k < 2 * C; k++)
			ref_s[k] = gpu_s[k] = pow2 ? 4.0f : 3.3f;
		for (int c = 0; c < C; c++)
			for (int row = 0; row < R; row++)
				data_t[c * R + row] = tg_f32_to_fmt(val[row * C + c] * (1.0f / ref_s[row / 128 * C + c]), TG_FMT_E4M3);
		r.value = val;
		r.comp[COMP_DATA_T] = data_t;
		r.comp[COMP_SCALE_INV_T] = ref_s;
		/* column 1, row block 1 (rows 128..199) moves; column 2, row block 0 moves too far */
		gpu_s[1 * C + 1] = pow2 ? 8.0f : ulps_up(3.3f, 2);
		gpu_s[0 * C + 2] = pow2 ? 32.0f : ulps_up(3.3f, 10);
		size_t close, moved;
		block_scales_adopt(&t, R, C, true, (const unsigned char *)gpu_s, &r, &close, &moved);
		bool ok = ref_s[1 * C + 1] == gpu_s[1 * C + 1] && ref_s[0 * C + 2] != gpu_s[0 * C + 2] &&
			close == (size_t)!pow2 && moved == (size_t)pow2;
		for (int row = 0; row < R && ok; row++) /* column 1's codes: block 1 under the GPU's scale when moved */
			ok = data_t[1 * R + row] == tg_f32_to_fmt(val[row * C + 1] * (1.0f / (row >= 128 && pow2 ? 8.0f : ref_s[0])),
				TG_FMT_E4M3);
		check_line("numerics/", ok, pow2 ? "block-scales columnwise 1x128 pow2" : "block-scales columnwise 1x128",
			"close %zu moved %zu, scales %g / %g", close, moved, ref_s[1 * C + 1], ref_s[0 * C + 2]);
	}
	/* a LayerNorm's slack: one token, columnwise blocks of one element each; a scale 40 ulps off is
	 * adopted where the element's slack allows 40 ulps of its amax (column 0), not where it allows 20 */
	{
		Tensor t1;
		memset(&t1, 0, sizeof t1);
		t1.dtype = DT_E4M3;
		t1.recipe.scaling = SCALING_BLOCK1X128;
		t1.columnwise = true;
		static float v1[2] = {0.5f, 0.5f}, sl[2], rs1[2], gs1[2];
		static uint8_t d1[2];
		sl[0] = 0.5f * 0x1p-23f * 41.0f; /* about 41 ulps of 0.5's scale, relative */
		sl[1] = 0.5f * 0x1p-23f * 20.0f;
		for (int c = 0; c < 2; c++) {
			rs1[c] = 0.5f / 448.0f;
			gs1[c] = ulps_up(rs1[c], 40);
			d1[c] = tg_f32_to_fmt(v1[c] * (1.0f / rs1[c]), TG_FMT_E4M3);
		}
		RefTensor r1;
		memset(&r1, 0, sizeof r1);
		r1.value = v1;
		r1.slack = sl;
		r1.comp[COMP_DATA_T] = d1;
		r1.comp[COMP_SCALE_INV_T] = rs1;
		size_t close, moved;
		block_scales_adopt(&t1, 1, 2, true, (const unsigned char *)gs1, &r1, &close, &moved);
		check_line("numerics/", rs1[0] == gs1[0] && rs1[1] != gs1[1] && close == 1 && moved == 0,
			"block-scales layernorm slack", "close %zu moved %zu", close, moved);
	}
	/* a block of values no scale lifts off zero (a GEGLU's far tail: 0 in float on the GPU, a denormal in
	 * double): the GPU's scale 1 (amax 0) is adopted over the reference's largest one; a block with a
	 * code that is not zero is not */
	{
		Tensor t2;
		memset(&t2, 0, sizeof t2);
		t2.dtype = DT_E4M3;
		t2.recipe.scaling = SCALING_BLOCK1X128;
		t2.recipe.pow2 = 1;
		t2.columnwise = true;
		static float v2[2] = {1e-44f, 1e-37f}, rs2[2], gs2[2] = {1.0f, 1.0f};
		static uint8_t d2[2];
		for (int c = 0; c < 2; c++) {
			rs2[c] = 0x1p-127f;
			d2[c] = tg_f32_to_fmt(v2[c] * 0x1p127f, TG_FMT_E4M3);
		}
		RefTensor r2;
		memset(&r2, 0, sizeof r2);
		r2.value = v2;
		r2.comp[COMP_DATA_T] = d2;
		r2.comp[COMP_SCALE_INV_T] = rs2;
		size_t close, moved;
		block_scales_adopt(&t2, 1, 2, true, (const unsigned char *)gs2, &r2, &close, &moved);
		check_line("numerics/", d2[1] != 0 && rs2[0] == 1.0f && rs2[1] == 0x1p-127f && close == 1 && moved == 0,
			"block-scales zero codes", "close %zu moved %zu, scales %g %g", close, moved, rs2[0], rs2[1]);
		/* a block whose values are all denormal (0 in a float computation) that the reference's largest scale
		 * lifts to a nonzero code (a columnwise block of one token: conformance seed 1701, a GEGLU from fp16 h):
		 * the GPU's scale 1 is adopted and the codes quantized again under it (zero) */
		static float v3[1] = {1e-39f}, rs3[1] = {0x1p-127f}, gs3[1] = {1.0f};
		static uint8_t d3[1];
		d3[0] = tg_f32_to_fmt(v3[0] * 0x1p127f, TG_FMT_E4M3);
		RefTensor r3;
		memset(&r3, 0, sizeof r3);
		r3.value = v3;
		r3.comp[COMP_DATA_T] = d3;
		r3.comp[COMP_SCALE_INV_T] = rs3;
		bool lifted = d3[0] != 0;
		block_scales_adopt(&t2, 1, 1, true, (const unsigned char *)gs3, &r3, &close, &moved);
		check_line("numerics/", lifted && d3[0] == 0 && rs3[0] == 1.0f && close == 1 && moved == 0,
			"block-scales denormal block", "close %zu moved %zu, scale %g code %u", close, moved, rs3[0], d3[0]);
	}
	/* rowwise MXFP8: [rows][nb] E8M0, blocks of 32 along a row of 64 */
	enum { MR = 3, MC = 64 };
	static float mval[MR * MC];
	for (int i = 0; i < MR * MC; i++)
		mval[i] = (float)(i % 13) - 6.0f;
	Tensor t;
	memset(&t, 0, sizeof t);
	t.dtype = DT_E4M3;
	t.recipe.scaling = SCALING_MXFP8;
	t.rowwise = true;
	RefTensor r;
	memset(&r, 0, sizeof r);
	static uint8_t data[MR * MC], ref_e[MR * 2], gpu_e[MR * 2];
	memset(ref_e, 127, sizeof ref_e);
	memset(gpu_e, 127, sizeof gpu_e);
	for (int i = 0; i < MR * MC; i++)
		data[i] = tg_f32_to_fmt(mval[i], TG_FMT_E4M3);
	r.value = mval;
	r.comp[COMP_DATA] = data;
	r.comp[COMP_SCALE_INV] = ref_e;
	gpu_e[2 * 2 + 1] = 126; /* row 2, block 1: one step */
	size_t close, moved;
	block_scales_adopt(&t, MR, MC, false, gpu_e, &r, &close, &moved);
	bool ok = ref_e[5] == 126 && moved == 1 && close == 0;
	for (int c = 0; c < MC && ok; c++)
		ok = data[2 * MC + c] == tg_f32_to_fmt(mval[2 * MC + c] * (c >= 32 ? tg_e8m0_rcp(126) : 1.0f), TG_FMT_E4M3);
	check_line("numerics/", ok, "block-scales rowwise mxfp8", "close %zu moved %zu, scale %u", close, moved, ref_e[5]);
}

/* near_ties (an element one ulp off may round either way at a rounding midpoint): a rowwise 1x128 E4M3 copy with
 * scale_inv 1, values 17 (the midpoint of 16 and 18), 17 (1 + 2^-16) (above it, past the window), 17 (1 + 2^-21)
 * (inside it) and 0.5; the GPU's codes differ at the first three: only the first and third are ties. A BF16
 * output (multiplier 1) at the midpoint of 1 and 1 + 2^-7; an NVFP4 tensor: no rule (NULL). */
/* A tensor of dtype dt and scaling sc with one copy c (DATA: rowwise, DATA_T: columnwise) and its reference: value,
 * codes and the copy's scale array (NULL: none). */
static void tie_tensor(Tensor *t, RefTensor *r, DType dt, Scaling sc, Component c, float *value, void *codes, void *scales)
{
	memset(t, 0, sizeof *t);
	t->dtype = dt;
	t->rowwise = c == COMP_DATA;
	t->columnwise = c == COMP_DATA_T;
	t->recipe.scaling = sc;
	memset(r, 0, sizeof *r);
	r->value = value;
	r->comp[c] = codes;
	r->comp[c == COMP_DATA ? COMP_SCALE_INV : COMP_SCALE_INV_T] = scales;
}

static void test_near_ties(void)
{
	enum { C = 4 };
	float val[C] = {17.0f, 17.0f * (1.0f + 0x1p-16f), 17.0f * (1.0f + 0x1p-21f), 0.5f}, si[1] = {1.0f};
	uint8_t ref[C], gpu[C];
	for (int i = 0; i < C; i++)
		ref[i] = gpu[i] = tg_f32_to_fmt(val[i], TG_FMT_E4M3);
	gpu[0] = (uint8_t)(ref[0] + 1), gpu[1] = (uint8_t)(ref[1] - 1), gpu[2] = (uint8_t)(ref[2] + 1);
	Tensor t;
	RefTensor r;
	tie_tensor(&t, &r, DT_E4M3, SCALING_BLOCK1X128, COMP_DATA, val, ref, si);
	uint8_t *tie = near_ties(&t, &r, COMP_DATA, 1, C, gpu, ref);
	bool ok = tie && tie[0] && !tie[1] && tie[2] && !tie[3];
	check_line("numerics/", ok, "near-ties e4m3 1x128", "%d %d %d %d", tie ? tie[0] : -1, tie ? tie[1] : -1,
		tie ? tie[2] : -1, tie ? tie[3] : -1);
	free(tie);
	float bv[1] = {1.0f + 0x1p-8f};
	uint16_t bref[1] = {tg_f32_to_bf16(bv[0])}, bgpu[1] = {(uint16_t)(bref[0] + 1)};
	Tensor tb;
	RefTensor rb;
	tie_tensor(&tb, &rb, DT_BF16, SCALING_NONE, COMP_DATA, bv, bref, NULL);
	tie = near_ties(&tb, &rb, COMP_DATA, 1, 1, bgpu, bref);
	check_line("numerics/", tie && tie[0], "near-ties bf16", "%d", tie ? tie[0] : -1);
	free(tie);
	/* the columnwise MXFP8 copy of a 32 x 2 tensor (scale_inv_t [1][2], E8M0 127: multiplier 1): element (3, 1) = 17
	 * (a midpoint) and (5, 0) = 17.5 differ; the copy's elements 1 * 32 + 3 and 0 * 32 + 5 */
	enum { MR = 32, MC = 2 };
	float mv[MR * MC];
	uint8_t mref[MR * MC], mgpu[MR * MC], me[MC] = {127, 127};
	for (int i = 0; i < MR * MC; i++)
		mv[i] = 1.0f;
	mv[3 * MC + 1] = 17.0f, mv[5 * MC + 0] = 17.5f;
	for (int c = 0; c < MC; c++)
		for (int rr = 0; rr < MR; rr++)
			mref[c * MR + rr] = mgpu[c * MR + rr] = tg_f32_to_fmt(mv[rr * MC + c], TG_FMT_E4M3);
	mgpu[1 * MR + 3]++, mgpu[0 * MR + 5]--;
	Tensor tm;
	RefTensor rm;
	tie_tensor(&tm, &rm, DT_E4M3, SCALING_MXFP8, COMP_DATA_T, mv, mref, me);
	tie = near_ties(&tm, &rm, COMP_DATA_T, MR, MC, mgpu, mref);
	check_line("numerics/", tie && tie[1 * MR + 3] && !tie[0 * MR + 5], "near-ties mxfp8 columnwise", "%d %d",
		tie ? tie[1 * MR + 3] : -1, tie ? tie[0 * MR + 5] : -1);
	free(tie);
	t.recipe.scaling = SCALING_NVFP4;
	tie = near_ties(&t, &r, COMP_DATA, 1, C, gpu, ref);
	check_line("numerics/", !tie, "near-ties nvfp4: no rule", "%p", (void *)tie);
	free(tie);
}

/* nvfp4_scales_adopt with 16x16 tiles: a 40 x 32 copy (3 tile rows, the last of 8 rows; 2 tile columns) whose GPU
 * scales differ by one code on every row of tile (1, 1) and of tile (2, 0): with a budget of 1 the first tile is taken
 * whole (16 entries, charged once, its codes encoded again) and the second not at all; with 1D blocks the same budget
 * takes one entry. */
static void test_nvfp4_tiles_adopt(void)
{
	enum { R = 40, C = 32, NB = C / 16 };
	static float x[R * C];
	for (int i = 0; i < R * C; i++)
		x[i] = (float)((i * 29) % 97 - 48) / 5.0f;
	RefNvfp4 opt = {1, 0, 0, 0, -1.0f};
	uint8_t q[R * C / 2], sr[R * NB], gpu[R * NB];
	float s_enc = 0;
	ref_quant_nvfp4(x, R, C, &opt, q, sr, &s_enc);
	memcpy(gpu, sr, sizeof gpu);
	for (int r = 16; r < 32; r++)
		gpu[r * NB + 1] = (uint8_t)(sr[r * NB + 1] + 1);
	for (int r = 32; r < R; r++)
		gpu[r * NB + 0] = (uint8_t)(sr[r * NB + 0] - 1);
	size_t budget = 1;
	size_t moved = nvfp4_scales_adopt(gpu, x, R, C, &opt, s_enc, q, sr, &budget);
	bool ok = moved == 1 && budget == 0;
	for (int r = 0; r < R && ok; r++)
		for (int b = 0; b < NB && ok; b++)
			ok = (r >= 16 && r < 32 && b == 1) ? sr[r * NB + b] == gpu[r * NB + b]
			     : (r >= 32 && b == 0)          ? sr[r * NB + b] != gpu[r * NB + b]
			                                    : sr[r * NB + b] == gpu[r * NB + b];
	uint8_t q2[C / 2]; /* a row of codes: the block's bytes at c0 / 2 */
	memset(q2, 0, sizeof q2);
	ref_nvfp4_encode(x, (size_t)(20 * C), 16, 32, gpu[20 * NB + 1], s_enc, &opt, q2);
	ok = ok && !memcmp(q + 20 * (C / 2) + 8, q2 + 8, 8); /* row 20's second block encoded again under the GPU's scale */
	check_line("numerics/", ok, "nvfp4-scales-adopt 16x16 tiles", "moved %zu budget %zu", moved, budget);
	RefNvfp4 one = {0, 0, 0, 0, -1.0f};
	ref_quant_nvfp4(x, R, C, &one, q, sr, &s_enc);
	memcpy(gpu, sr, sizeof gpu);
	gpu[17 * NB + 1] = (uint8_t)(sr[17 * NB + 1] + 1);
	gpu[18 * NB + 1] = (uint8_t)(sr[18 * NB + 1] + 1);
	budget = 1;
	moved = nvfp4_scales_adopt(gpu, x, R, C, &one, s_enc, q, sr, &budget);
	check_line("numerics/", moved == 1 && sr[17 * NB + 1] == gpu[17 * NB + 1] && sr[18 * NB + 1] != gpu[18 * NB + 1],
		"nvfp4-scales-adopt 1D blocks", "moved %zu", moved);
}

/* mx_deq_mismatches (the checker's test of an MXFP8 copy's BF16 operand): a copy built with ldexp passes in both
 * layouts at 37 rows (a partial block of 32), scale bytes 0 (multiplier 1), 120, 127, 133; one changed element is
 * found at its index; the rowwise layout read as columnwise fails. */
static void test_mx_deq(void)
{
	enum { R = 37, C = 64 };
	static unsigned char codes[R * C], srow[R * 2], scol[2 * C];
	static uint16_t deq[R * C];
	static const unsigned char sb[4] = {0, 120, 127, 133};
	for (int i = 0; i < R * C; i++)
		codes[i] = (unsigned char)((i * 73 + 11) % 0x7F); /* finite E4M3 codes, both signs via bit 7 below */
	for (int i = 0; i < R * C; i += 3)
		codes[i] |= 0x80u;
	for (int i = 0; i < R * 2; i++)
		srow[i] = sb[i % 4];
	for (int i = 0; i < 2 * C; i++)
		scol[i] = sb[(i / 3) % 4];
	for (int col = 0; col < 2; col++) {
		for (int r = 0; r < R; r++)
			for (int c = 0; c < C; c++) {
				int e = col ? c * R + r : r * C + c;
				unsigned char s = col ? scol[r / 32 * C + c] : srow[r * 2 + c / 32];
				double v = ldexp((double)tg_fmt_to_f32(codes[e], TG_FMT_E4M3), s ? s - 127 : 0);
				deq[e] = tg_f32_to_bf16((float)v);
			}
		long first = -1;
		size_t bad = mx_deq_mismatches(codes, col ? scol : srow, deq, R, C, col, TG_FMT_E4M3, &first);
		deq[5 * C + 9] ^= 1u;
		long first2 = -1;
		size_t bad2 = mx_deq_mismatches(codes, col ? scol : srow, deq, R, C, col, TG_FMT_E4M3, &first2);
		long first3 = -1;
		size_t bad3 = mx_deq_mismatches(codes, col ? srow : scol, deq, R, C, !col, TG_FMT_E4M3, &first3);
		check_line("numerics/", bad == 0 && bad2 == 1 && first2 == 5 * C + 9 && bad3 > 0,
			col ? "mx-deq columnwise" : "mx-deq rowwise", "mismatches %zu, one changed %zu (at %ld), other layout %zu",
			bad, bad2, first2, bad3);
	}
}

/* nvfp4_deq_mismatches (the checker's test of an NVFP4 copy's BF16 operand): random E2M1 codes and E4M3 scale
 * bytes (no NaN: 0x7F, 0xFF), S_enc 3.7; 37 rows: the columnwise copy's rows end in a half-filled byte (zero high
 * nibble) and a partial block of 16; the expected BF16 built by the formula passes in both layouts, one changed
 * element is found at its index, and a changed S_enc fails. */
static void test_nvfp4_deq(void)
{
	enum { R = 37, C = 32, QR = C / 2, SR = C / 16, QC = (R + 1) / 2, SC = (R + 15) / 16 };
	static unsigned char qrow[R * QR], srow[R * SR], qcol[C * QC], scol[C * SC];
	static uint16_t deq[R * C];
	const float s_enc = 3.7f;
	uint32_t st = 12345u;
	for (int i = 0; i < R * QR; i++)
		qrow[i] = (unsigned char)((st = st * 1664525u + 1013904223u) >> 24);
	for (int i = 0; i < C * QC; i++)
		qcol[i] = (unsigned char)((st = st * 1664525u + 1013904223u) >> 24);
	for (int c = 0; c < C; c++)
		qcol[c * QC + QC - 1] &= 0x0Fu; /* element R - 1 (even) in the low nibble, the high one zero */
	for (int i = 0; i < R * SR + C * SC; i++) {
		unsigned char b;
		do
			b = (unsigned char)((st = st * 1664525u + 1013904223u) >> 24);
		while ((b & 0x7Fu) == 0x7Fu);
		(i < R * SR ? srow + i : scol + i - R * SR)[0] = b;
	}
	for (int col = 0; col < 2; col++) {
		const unsigned char *q = col ? qcol : qrow, *sc = col ? scol : srow;
		long lines = col ? C : R, len = col ? R : C, qb = col ? QC : QR, nb = col ? SC : SR;
		for (long ln = 0; ln < lines; ln++)
			for (long k = 0; k < len; k++) {
				uint8_t code = (uint8_t)((q[ln * qb + k / 2] >> (4 * (k & 1))) & 0xFu);
				float m = tg_div_rn(tg_e4m3_to_f32(sc[ln * nb + k / 16]), s_enc);
				deq[ln * len + k] = tg_f32_to_bf16(tg_e2m1_to_f32(code) * m);
			}
		long first = -1;
		size_t bad = nvfp4_deq_mismatches(q, sc, s_enc, deq, R, C, col, &first);
		long first3 = -1;
		size_t bad3 = nvfp4_deq_mismatches(q, sc, 3.5f, deq, R, C, col, &first3);
		long at = col ? 7 * R + 36 : 5 * C + 9; /* columnwise: the last row's element, in a half-filled byte */
		deq[at] ^= 1u;
		long first2 = -1;
		size_t bad2 = nvfp4_deq_mismatches(q, sc, s_enc, deq, R, C, col, &first2);
		check_line("numerics/", bad == 0 && bad2 == 1 && first2 == at && bad3 > 0,
			col ? "nvfp4-deq columnwise" : "nvfp4-deq rowwise",
			"mismatches %zu, one changed %zu (at %ld), other S_enc %zu", bad, bad2, first2, bad3);
	}
}

int main(void)
{
	test_hp_values_plan();
	test_exact_e4m3();
	test_underflow();
	test_saturation();
	test_mxfp8_blocks();
	test_nvfp4_exact();
	test_block_sqnr();
	test_error();
	test_generators();
	test_block_scales_adopt();
	test_near_ties();
	test_nvfp4_tiles_adopt();
	test_mx_deq();
	test_nvfp4_deq();
	return check_failures ? 1 : 0;
}
