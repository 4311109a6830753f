/* test_tune.c: tile-shape variants and the tuning DB (no GPU needed).
 *
 * Variants: every listed variant is legal (its kernel emits; the template's
 * constraints from plan_launch.c's tables hold), the heuristic's comes first,
 * illegal ones are refused, re-planning keeps the signature. DB: lines of
 * other GPUs, SM counts, driver or NVRTC versions are never matched;
 * malformed, torn (bad check) and truncated lines are skipped; a DB naming an
 * unknown or illegal variant cannot change the plan; plan_build_opts picks the
 * fastest measured variant for the bucket (latest line wins) and says
 * "tuned", otherwise "heuristic". Protocol: ok/FAIL lines, exit 1 on failure. */
#include "check.h"
#include "gen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define check(ok, ...) check_line("tune/", ok, __VA_ARGS__)

static const char *spec_text =
	"layer: tunetest\n"
	"dims: {tokens: dynamic, h: 4096}\n"
	"recipe: {scaling: delayed, format: e4m3}\n"
	"overrides:\n"
	"  wb: {scaling: block128x128}\n"
	"  xb: {scaling: block1x128}\n"
	"tensors:\n"
	"  x:     {shape: [tokens, h], dtype: bf16}\n"
	"  gamma: {shape: [h], dtype: bf16, role: weight}\n"
	"  w:     {shape: [h, h], dtype: bf16, role: weight}\n"
	"  g2:    {shape: [tokens, 2*h], dtype: bf16}\n"
	"ops:\n"
	"  - norm_quantize: {in: x, gamma: gamma, out: xn, eps: 1e-5}\n"
	"  - norm_quantize: {in: x, gamma: gamma, out: xm, eps: 1e-5, layout: [columnwise]}\n"
	"  - glu_amax: {in: g2, out: a, act: swiglu}\n"
	"  - cast_transpose: {in: x, out: xt}\n"
	"  - quantize: {in: w, out: wb, layout: [rowwise, columnwise]}\n"
	"  - quantize: {in: x, out: xb, layout: [rowwise, columnwise]}\n"
	"outputs: [xn, xm, a, xt, wb, xb]\n";

static const Graph *load(Arena *a)
{
	Diag d = {0};
	d.file = "tunetest.yaml";
	d.src = spec_text;
	Spec *s = spec_load(a, &d, d.file, spec_text, strlen(spec_text));
	const Graph *g = s ? ir_build(a, &d, s, (Arch){90, true}) : NULL;
	if (!g)
		printf("FAIL tune/spec: %s\n", d.msg);
	return g;
}

static const Kernel *by_tmpl(const Plan *p, const char *tmpl, int nth)
{
	for (int i = 0; i < p->nkernels; i++)
		if (p->kernels[i].tmpl && !strcmp(p->kernels[i].tmpl, tmpl) && nth-- == 0)
			return &p->kernels[i];
	return NULL;
}

static long slotl(const Kernel *k, const char *name)
{
	const char *v = plan_slot(k, name);
	return v ? atol(v) : -1;
}

static void test_variants(Arena *a, const Plan *p)
{
	int tunable = 0;
	for (int i = 0; i < p->nkernels; i++) {
		const Kernel *k = &p->kernels[i];
		PlanVariant v[PLAN_MAX_VARIANTS];
		int n = plan_variants(k, v, PLAN_MAX_VARIANTS);
		if (!n)
			continue;
		tunable++;
		char name[128];
		snprintf(name, sizeof name, "variants/%s", k->name);
		check(!strcmp(v[0].name, k->variant), name, "first variant %s, the heuristic's is %s", v[0].name, k->variant);
		const char *sig = plan_signature(a, k);
		int bad = 0;
		for (int j = 0; j < n; j++) {
			Kernel c = *k;
			Diag d = {0};
			if (!plan_apply_variant(a, &c, &v[j]) || !emit_kernel(a, &d, p, &c) || strcmp(plan_signature(a, &c), sig) ||
				c.threads != v[j].threads || slotl(&c, "TG_THREADS") != v[j].threads || strcmp(c.variant, v[j].name)) {
				printf("  %s: variant %s does not apply cleanly %s\n", k->name, v[j].name, d.msg);
				bad++;
				continue;
			}
			long recipe = slotl(&c, "TG_RECIPE");
			if (!strcmp(k->tmpl, "cast_transpose.cu")) {
				long tr = slotl(&c, "TG_TILE_ROWS"), tc = slotl(&c, "TG_TILE_COLS");
				bool col = slotl(&c, "TG_COLWISE") == 1;
				bad += tc % 128 != 0 || (col && tr % 32) || (recipe == 5 && (tr != 128 || tc != 128)) ||
					(col && recipe == 4 && tr % 128) || c.grid_rows != tr || c.grid_cols != tc;
			} else {
				long t = slotl(&c, "TG_THREADS"), r = slotl(&c, "TG_ROWS_PER_CTA"), vec = slotl(&c, "TG_VEC");
				bool tile = slotl(&c, "TG_COLWISE") == 1;
				long tpr = t / r;
				/* row path: threads per row a power of two; glu_amax.cu: a multiple of 32 (or a divisor) */
				bool glu = !strcmp(k->tmpl, "glu_amax.cu");
				bad += t % r || (tile && r % 32) || (!tile && (glu ? tpr % 32 && 32 % tpr : tpr & (tpr - 1))) || 4096 % vec ||
					c.grid_rows != r;
			}
		}
		snprintf(name, sizeof name, "variants-legal/%s", k->name);
		check(!bad && n >= 2, name, "%d of %d variants break a constraint (n must be >= 2)", bad, n);
	}
	check(tunable == 6, "variants/tunable-count", "%d tunable kernels, want 6", tunable);
	/* block128x128: only 128x128 tiles */
	const Kernel *wb = by_tmpl(p, "cast_transpose.cu", 1);
	PlanVariant v[PLAN_MAX_VARIANTS];
	int n = wb ? plan_variants(wb, v, PLAN_MAX_VARIANTS) : 0, other = 0;
	for (int j = 0; j < n; j++)
		other += v[j].tile_rows != 128 || v[j].tile_cols != 128;
	check(wb && slotl(wb, "TG_RECIPE") == 5 && n >= 1 && !other, "variants/block128x128-only-128x128", "n=%d other=%d", n,
		other);
	/* illegal variants are refused */
	const Kernel *nq = by_tmpl(p, "norm_quantize.cu", 0);
	Kernel c = *nq;
	PlanVariant odd = {"t96v8r1", 96, 8, 1, 0, 0}, tile = {"t256r32c128", 256, 0, 0, 32, 128},
		vec3 = {"t128v3r1", 128, 3, 1, 0, 0}, big = {"t2048v8r1", 2048, 8, 1, 0, 0};
	check(!plan_apply_variant(a, &c, &odd) && !plan_apply_variant(a, &c, &tile) && !plan_apply_variant(a, &c, &vec3) &&
		!plan_apply_variant(a, &c, &big), "variants/illegal-refused", "an illegal variant was applied");
	const Kernel *colw = by_tmpl(p, "norm_quantize.cu", 1);
	PlanVariant r1 = {"t128v8r1", 128, 8, 1, 0, 0};
	c = *colw;
	check(!plan_apply_variant(a, &c, &r1), "variants/colwise-needs-32-rows", "rows/CTA 1 accepted on the tile path");
	check(plan_bucket(nq, 5000) == 8192 && plan_bucket(nq, 8192) == 8192 && plan_bucket(nq, 0) == 0 &&
		plan_bucket(by_tmpl(p, "cast_transpose.cu", 1), 0) == 4096, "bucket", "buckets %ld %ld %ld", plan_bucket(nq, 5000),
		plan_bucket(nq, 8192), plan_bucket(nq, 0));
}

/* A line whose check is valid but whose fields are not. */
static char *raw_line(Arena *a, const char *fields)
{
	/* FNV-1a over the line up to its last tab, as tune.c checks it */
	uint32_t h = 2166136261u;
	for (const char *c = fields; *c; c++)
		h = (h ^ (uint8_t)*c) * 16777619u;
	return arena_printf(a, "%s%08x\n", fields, h);
}

static void test_db(Arena *a, const Graph *g)
{
	char dir[] = "/tmp/tegen-tune-XXXXXX";
	if (!mkdtemp(dir)) {
		check(false, "db/mkdtemp", "cannot make a temp dir");
		return;
	}
	char *path = arena_printf(a, "%s/tuning/v1.txt", dir);
	const Plan *p0 = plan_build(a, &(Diag){0}, g);
	const Kernel *nq = by_tmpl(p0, "norm_quantize.cu", 0), *ct = by_tmpl(p0, "cast_transpose.cu", 0);
	const char *sig = plan_signature(a, nq), *ctsig = plan_signature(a, ct);
	PlanOptions me = {path, "NVIDIA H200", 132, 13000, "13.0", 8192, false};
	/* other GPUs/versions are faster for t64v8r1: must be ignored */
	TuneEntry es[] = {
		{sig, "t256v8r1", "NVIDIA H200", "13.0", 8192, 132, 13000, 40.0},
		{sig, "t512v8r1", "NVIDIA H200", "13.0", 8192, 132, 13000, 30.0},
		{sig, "t512v8r1", "NVIDIA H200", "13.0", 8192, 132, 13000, 45.0}, /* re-tuned: latest wins -> t256v8r1 */
		{sig, "t64v8r1", "NVIDIA H100 80GB HBM3", "13.0", 8192, 132, 13000, 1.0},
		{sig, "t64v8r1", "NVIDIA H200", "13.0", 8192, 114, 13000, 1.0},
		{sig, "t64v8r1", "NVIDIA H200", "13.0", 8192, 132, 12080, 1.0},
		{sig, "t64v8r1", "NVIDIA H200", "12.8", 8192, 132, 13000, 1.0},
		{sig, "t64v8r1", "NVIDIA H200", "13.0", 4096, 132, 13000, 1.0},     /* other bucket */
		{sig, "t2048v8r1", "NVIDIA H200", "13.0", 8192, 132, 13000, 0.5},   /* illegal variant */
		{sig, "nosuch", "NVIDIA H200", "13.0", 8192, 132, 13000, 0.5},      /* unknown variant */
		{"norm_quantize.cu@00000000;COLS=4096", "t64v8r1", "NVIDIA H200", "13.0", 8192, 132, 13000, 0.5}, /* stale template */
		{sig, "t128v8r2", "NVIDIA H200", "13.0", 65536, 132, 13000, 20.0},  /* largest bucket */
		{ctsig, "t256r64c256", "NVIDIA H200", "13.0", 8192, 132, 13000, 9.0},
		{ctsig, "t256r32c128", "NVIDIA H200", "13.0", 8192, 132, 13000, 10.0},
	};
	Buf text = {0};
	buf_puts(&text, "# tegen tuning DB v1\n\n");
	for (size_t i = 0; i < sizeof es / sizeof *es; i++)
		buf_puts(&text, tunedb_line(a, &es[i]));
	/* malformed: a torn line (check fails), an edited time, too few fields, a bad bucket with a valid
	 * check, a negative time with a valid check, binary junk, and a truncated last line */
	char *torn = tunedb_line(a, &es[0]);
	torn[strlen(torn) / 2] = 0;
	buf_printf(&text, "%s\n", torn);
	char *edited = tunedb_line(a, &(TuneEntry){sig, "t64v8r1", "NVIDIA H200", "13.0", 8192, 132, 13000, 5.0});
	char *five = strstr(edited, "\t5.000\t");
	five[1] = '0'; /* 0.000 -> check no longer matches */
	buf_puts(&text, edited);
	buf_puts(&text, raw_line(a, "a\tb\tc\t"));
	buf_puts(&text, raw_line(a, arena_printf(a, "%s\tt64v8r1\t1000\tNVIDIA H200\t132\t13000\t13.0\t0.100\t", sig)));
	buf_puts(&text, raw_line(a, arena_printf(a, "%s\tt64v8r1\t8192\tNVIDIA H200\t132\t13000\t13.0\t-1.0\t", sig)));
	buf_puts(&text, "\x01\x02garbage\tline\n");
	char *trunc = tunedb_line(a, &(TuneEntry){sig, "t64v8r1", "NVIDIA H200", "13.0", 8192, 132, 13000, 0.25});
	trunc[strlen(trunc) - 4] = 0; /* a write cut short, inside the check */
	buf_puts(&text, trunc);
	char err[512];
	int rc = tunedb_append(path, text.p, err, sizeof err);
	check(rc == 0, "db/append-creates-dir", "%s", err);
	TuneDb *db = tunedb_load(a, path);
	int nvalid = (int)(sizeof es / sizeof *es);
	check(db && db->n == nvalid && db->malformed == 7, "db/parse-skips-malformed", "n=%d (want %d), malformed=%d (want 7)",
		db ? db->n : -1, nvalid, db ? db->malformed : -1);

	Diag d = {0};
	const Plan *p = plan_build_opts(a, &d, g, &me);
	const Kernel *k = p ? by_tmpl(p, "norm_quantize.cu", 0) : NULL;
	check(k && !strcmp(k->variant, "t256v8r1") && !strcmp(k->choice, "tuned") && slotl(k, "TG_THREADS") == 256 &&
		k->threads == 256, "db/picks-tuned", "variant %s (%s)", k ? k->variant : "?", k ? k->choice : "?");
	const Kernel *c2 = p ? by_tmpl(p, "cast_transpose.cu", 0) : NULL;
	check(c2 && !strcmp(c2->variant, "t256r64c256") && c2->grid_rows == 64 && c2->grid_cols == 256 &&
		!strcmp(c2->choice, "tuned"), "db/picks-tuned-tile", "variant %s (%s)", c2 ? c2->variant : "?", c2 ? c2->choice : "?");
	const Kernel *glu = p ? by_tmpl(p, "glu_amax.cu", 0) : NULL;
	check(glu && !strcmp(glu->choice, "heuristic"), "db/untuned-kernel-heuristic", "%s", glu ? glu->choice : "?");
	Buf out = {0};
	if (p)
		plan_print(p, &out);
	check(out.p && strstr(out.p, "variant=t256v8r1 (tuned)") && strstr(out.p, "(heuristic)"), "db/plan-print-shows-choice",
		"%s", out.p ? out.p : "");
	buf_free(&out);

	/* tokens unknown: the largest bucket measured (65536: t128v8r2) */
	PlanOptions unknown = me;
	unknown.tokens = 0;
	p = plan_build_opts(a, &d, g, &unknown);
	k = p ? by_tmpl(p, "norm_quantize.cu", 0) : NULL;
	check(k && !strcmp(k->variant, "t128v8r2") && !strcmp(k->choice, "tuned"), "db/unknown-tokens-largest-bucket",
		"variant %s (%s)", k ? k->variant : "?", k ? k->choice : "?");

	/* foreign GPU, other versions, unmeasured bucket, no GPU, no DB file: heuristic */
	PlanOptions other[] = {
		{path, "NVIDIA A100-SXM4-80GB", 132, 13000, "13.0", 8192, false},
		{path, "NVIDIA H200", 108, 13000, "13.0", 8192, false},
		{path, "NVIDIA H200", 132, 12020, "13.0", 8192, false},
		{path, "NVIDIA H200", 132, 13000, "12.2", 8192, false},
		{path, "NVIDIA H200", 132, 13000, "13.0", 1024, false},
		{path, NULL, 0, 0, NULL, 8192, false},
		{arena_printf(a, "%s/none.txt", dir), "NVIDIA H200", 132, 13000, "13.0", 8192, false},
	};
	int wrong = 0;
	for (size_t i = 0; i < sizeof other / sizeof *other; i++) {
		p = plan_build_opts(a, &d, g, &other[i]);
		k = p ? by_tmpl(p, "norm_quantize.cu", 0) : NULL;
		if (!k || strcmp(k->choice, "heuristic") || strcmp(k->variant, nq->variant)) {
			printf("  options %zu: %s (%s)\n", i, k ? k->variant : "?", k ? k->choice : "?");
			wrong++;
		}
	}
	check(!wrong, "db/foreign-stale-ignored", "%d option sets took a foreign or stale entry", wrong);
	/* the H100's own line is its own choice (identity is the whole key) */
	PlanOptions h100 = {path, "NVIDIA H100 80GB HBM3", 132, 13000, "13.0", 8192, false};
	p = plan_build_opts(a, &d, g, &h100);
	k = p ? by_tmpl(p, "norm_quantize.cu", 0) : NULL;
	check(k && !strcmp(k->variant, "t64v8r1") && !strcmp(k->choice, "tuned"), "db/own-gpu-line", "variant %s",
		k ? k->variant : "?");

	/* appending more lines: the new fastest wins */
	TuneEntry faster = {sig, "t1024v8r1", "NVIDIA H200", "13.0", 8192, 132, 13000, 12.0};
	rc = tunedb_append(path, tunedb_line(a, &faster), err, sizeof err);
	p = plan_build_opts(a, &d, g, &me);
	k = p ? by_tmpl(p, "norm_quantize.cu", 0) : NULL;
	check(!rc && k && !strcmp(k->variant, "t1024v8r1"), "db/append-then-pick", "variant %s", k ? k->variant : "?");
	buf_free(&text);
	unlink(path);
	rmdir(arena_printf(a, "%s/tuning", dir));
	rmdir(dir);
}

/* The heuristic without a DB: row kernels by row length and kind; cast+transpose by
 * the row count when the planner knows it (bench/RESULTS.md, the H100 sweep). */
static void test_heuristics(Arena *a, const Graph *g)
{
	static const struct { long tokens; const char *ct; } cases[] = {
		{0, "t256r64c128"}, {256, "t256r32c128"}, {8192, "t256r64c128"}, {131072, "t256r128c128"},
	};
	for (int i = 0; i < (int)(sizeof cases / sizeof *cases); i++) {
		PlanOptions o = {NULL, NULL, 0, 0, NULL, cases[i].tokens, false};
		Diag d = {0};
		const Plan *p = plan_build_opts(a, &d, g, &o);
		const Kernel *ct = NULL; /* the first with a columnwise copy: the per-tensor cast+transpose of x */
		for (int n = 0; p && (ct = by_tmpl(p, "cast_transpose.cu", n)) && slotl(ct, "TG_COLWISE") != 1; n++)
			;
		check(ct && !strcmp(ct->variant, cases[i].ct), arena_printf(a, "heuristic-ct-%ld", cases[i].tokens),
			"cast_transpose at %ld tokens: %s, want %s", cases[i].tokens, ct ? ct->variant : "(none)", cases[i].ct);
		if (i == 0) { /* row kernels do not depend on the token count */
			const Kernel *glu = p ? by_tmpl(p, "glu_amax.cu", 0) : NULL, *nq = p ? by_tmpl(p, "norm_quantize.cu", 0) : NULL;
			check(glu && !strcmp(glu->variant, "t512v4r1"), "heuristic-glu-4096", "GLU 4096 cols: %s", glu ? glu->variant : "-");
			check(nq && !strcmp(nq->variant, "t128v8r1"), "heuristic-norm-4096", "norm 4096 cols: %s", nq ? nq->variant : "-");
		}
	}
}

/* The block tile dglu's threads (gen/plan_launch.c pl_row_launch, bench/RESULTS.md forty-first and forty-third
 * sessions): staged tiles (2-byte h and d_act; MXFP8 or 1x128) at 512, FP32 inputs (not staged: 512 spills) at 1024. */
static void test_dglu_block_tile(Arena *a)
{
	static const struct { const char *scaling, *h, *want; } cases[] = {
		{"mxfp8", "bf16", "t512v8r128"}, {"mxfp8", "fp32", "t1024v8r128"}, {"block1x128", "bf16", "t512v8r128"}, {"block1x128", "fp32", "t1024v8r128"},
	};
	for (int i = 0; i < (int)(sizeof cases / sizeof *cases); i++) {
		const char *text = arena_printf(a,
			"layer: dgt\ndims: {tokens: dynamic, f: 4096}\nrecipe: {scaling: %s, format: e5m2}\n"
			"tensors:\n  h: {shape: [tokens, 2*f], dtype: %s}\n  g: {shape: [tokens, f], dtype: bf16, role: gradient}\n"
			"ops:\n  - dglu: {in: h, grad: g, out: y, act: swiglu, layout: [rowwise, columnwise]}\noutputs: [y]\n",
			cases[i].scaling, cases[i].h);
		Diag d = {0};
		d.file = "dgt.yaml";
		d.src = text;
		Spec *sp = spec_load(a, &d, d.file, text, strlen(text));
		const Graph *g = sp ? ir_build(a, &d, sp, (Arch){90, true}) : NULL;
		const Plan *p = g ? plan_build(a, &d, g) : NULL;
		const Kernel *k = p ? by_tmpl(p, "dglu.cu", 0) : NULL;
		check(k && k->variant && !strcmp(k->variant, cases[i].want), arena_printf(a, "dglu-block-tile-%s-%s", cases[i].scaling,
			cases[i].h), "%s", k ? k->variant : d.msg);
	}
}

/* The bias dtype cuBLASLt's epilogue reads (gen.h bias_dtype_for, the planner's and the runtime's one rule). */
static void test_bias_dtype(void)
{
	static const struct { DType a, d, want; } cases[] = {
		{DT_E4M3, DT_BF16, DT_BF16}, {DT_E4M3, DT_F16, DT_F16}, {DT_E5M2, DT_F32, DT_BF16}, {DT_E2M1, DT_F32, DT_BF16},
		{DT_BF16, DT_F32, DT_F32}, {DT_F16, DT_F16, DT_F16}, {DT_F32, DT_F32, DT_F32},
	};
	int bad = -1;
	for (int i = 0; i < (int)(sizeof cases / sizeof *cases); i++)
		if (bias_dtype_for(cases[i].a, cases[i].d) != cases[i].want && bad < 0)
			bad = i;
	check(bad < 0, "bias-dtype", "case %d: A %s, D %s", bad, bad < 0 ? "" : dtype_name(cases[bad].a),
		bad < 0 ? "" : dtype_name(cases[bad].d));
}

int main(void)
{
	Arena *a = arena_new();
	const Graph *g = load(a);
	if (!g)
		return 1;
	Diag d = {0};
	const Plan *p = plan_build(a, &d, g);
	if (!p) {
		printf("FAIL tune/plan: %s\n", d.msg);
		return 1;
	}
	int heur = 1;
	for (int i = 0; i < p->nkernels; i++)
		if (p->kernels[i].kind == KERNEL_GENERATED && plan_variants(&p->kernels[i], (PlanVariant[PLAN_MAX_VARIANTS]){0}, PLAN_MAX_VARIANTS))
			heur &= !strcmp(p->kernels[i].choice, "heuristic");
	check(heur, "no-db-heuristic", "a kernel is not 'heuristic' without a DB");
	test_variants(a, p);
	test_heuristics(a, g);
	test_db(a, g);
	test_dglu_block_tile(a);
	test_bias_dtype();
	arena_free(a);
	return check_failures ? 1 : 0;
}
