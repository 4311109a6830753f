/* numerics.c: `tegen numerics SPEC`: for the spec's recipe and each what-if
 * recipe (the same layer re-planned with another scaling), run the layer
 * through the CPU reference interpreter on the same inputs and report, per
 * quantized tensor and copy, how far the dequantized copy is from the FP32
 * value it came from (NumStats), and per layer output its error against the
 * same graph run unquantized (FP32 math, no recipe). Tables on stdout, --csv
 * and an SVG chart (--chart: SQNR per tensor, one bar group per recipe).
 *
 * Delayed scaling is judged at steady state: one warm-up pass on the same
 * inputs records every delayed tensor's amax, and the reported pass uses the
 * scales delayed scaling derives from it (tg_delayed_scale), as a step after
 * a step on similar data would. */
#include "numerics.h"

#include "cli.h"
#include "commands.h"
#include "layout.h"
#include "npy.h"
#include "parallel.h"
#include "pipeline.h"
#include "ref.h"
#include "refrun.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- input generators ---- */

static uint64_t mix64(uint64_t z)
{
	z += 0x9E3779B97F4A7C15ULL;
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

/* Uniform in (0, 1), a function of (seed, i). */
static double unit(uint64_t seed, uint64_t i) { return ((double)(mix64(seed ^ mix64(i)) >> 11) + 0.5) * 0x1p-53; }

/* Standard normal number j of element i (Box-Muller on two uniforms). */
static double gauss(uint64_t seed, uint64_t i, int j)
{
	double u = unit(seed, 8 * i + 2 * (uint64_t)j), v = unit(seed, 8 * i + 2 * (uint64_t)j + 1);
	return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

bool numerics_outlier_channel(long c, long cols)
{
	return c == cols / 3 || mix64((uint64_t)c * 0x2545F4914F6CDD1DULL) % 512 == 0;
}

typedef struct FillJob {
	float *x;
	long cols;
	NumInput kind;
	double std;
	uint64_t seed;
} FillJob;

static void fill_task(void *ctx, size_t i0, size_t i1)
{
	const FillJob *j = ctx;
	for (size_t i = i0; i < i1; i++) {
		double z = gauss(j->seed, i, 0);
		if (j->kind == NUM_STUDENT) { /* t_3 = z / sqrt(chi2_3 / 3), variance 3 */
			double c = 0;
			for (int k = 1; k <= 3; k++) {
				double g = gauss(j->seed, i, k);
				c += g * g;
			}
			z = z / sqrt(c / 3.0) / sqrt(3.0);
		} else if (j->kind == NUM_OUTLIERS && numerics_outlier_channel((long)(i % (size_t)j->cols), j->cols))
			z *= 100.0;
		j->x[i] = (float)(z * j->std);
	}
}

void numerics_fill(float *x, long rows, long cols, NumInput kind, double std, uint64_t seed)
{
	FillJob j = {x, cols > 0 ? cols : 1, kind, std, seed};
	ref_parallel_chunks((size_t)rows * (size_t)(cols > 0 ? cols : 1), 1 << 16, fill_task, &j);
}

/* ---- statistics ---- */

void numerics_error(const float *ref, const float *got, size_t n, double *rel_frob, double *sqnr_db)
{
	double sx = 0, se = 0;
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(ref[i]) || !isfinite(got[i]))
			continue;
		double e = (double)got[i] - ref[i];
		sx += (double)ref[i] * ref[i];
		se += e * e;
	}
	*rel_frob = sx > 0 ? sqrt(se / sx) : se > 0 ? INFINITY : 0;
	*sqnr_db = se == 0 ? (sx > 0 ? INFINITY : NAN) : sx > 0 ? 10.0 * log10(sx / se) : -INFINITY;
}

static int cdiv(int a, int b) { return (a + b - 1) / b; }

/* Elements along K that one scale covers in a copy (0: the whole tensor, per-tensor scaling). */
static int block_k(const Tensor *t)
{
	switch (t->recipe.scaling) {
	case SCALING_BLOCK1X128:
	case SCALING_BLOCK128X128: return 128;
	case SCALING_MXFP8: return 32;
	case SCALING_NVFP4: return 16;
	default: return 0;
	}
}

/* The dequantization multiplier of block kb of row `row` of copy c ([R][K]); *tiny: its scale is at the floor. */
static double block_mult(const Tensor *t, const RefTensor *r, Component c, int R, int K, int row, int kb, bool *tiny)
{
	const void *s = r->comp[c == COMP_DATA ? COMP_SCALE_INV : COMP_SCALE_INV_T];
	double m;
	switch (t->recipe.scaling) {
	case SCALING_BLOCK1X128: m = ((const float *)s)[(size_t)kb * R + row]; break;
	case SCALING_BLOCK128X128: m = ((const float *)s)[(size_t)(row / 128) * cdiv(K, 128) + kb]; break;
	case SCALING_MXFP8: {
		uint8_t e = c == COMP_DATA ? ((const uint8_t *)s)[(size_t)row * cdiv(K, 32) + kb]
			: ((const uint8_t *)s)[(size_t)kb * R + row];
		*tiny = e == 0;
		return e == 0 ? 1.0 : tg_e8m0_to_f32(e); /* e = 0 blocks are multiplied by 1 (TE) */
	}
	case SCALING_NVFP4: {
		uint8_t sd = ((const uint8_t *)s)[(size_t)row * cdiv(K, 16) + kb];
		*tiny = (sd & 0x78) == 0;
		return (double)tg_e4m3_to_f32(sd) / interp_s_enc(t, r, c);
	}
	default: m = r->scale_inv; break;
	}
	*tiny = !(m >= FLT_MIN);
	return m;
}

/* Per-chunk sums, combined in chunk order (the same totals for any thread count). */
typedef struct Acc {
	double sx, se, sum_rel, max_rel, smin, smax;
	long n, nz, under, sat, qnz, blocks, tiny, vanished;
} Acc;

typedef struct StatsJob {
	const Tensor *t;
	const RefTensor *r;
	Component c;
	const float *x, *q;
	int R, K, bk, fmt;
	Acc *acc;
} StatsJob;

enum { STAT_ROWS = 16 };

/* Is element k of row `row` of the copy stored as the format's largest magnitude? */
static bool code_is_max(const StatsJob *j, int row, int k)
{
	const uint8_t *d = j->r->comp[j->c];
	if (j->t->dtype == DT_E2M1)
		return ((d[(size_t)row * (size_t)cdiv(j->K, 2) + (size_t)k / 2] >> (4 * (k & 1))) & 7) == 7;
	return fabsf(tg_fmt_to_f32(d[(size_t)row * j->K + k], j->fmt)) == tg_fmt_max(j->fmt);
}

static void stats_task(void *ctx, size_t r0, size_t r1)
{
	const StatsJob *j = ctx;
	Acc a = {0, 0, 0, 0, INFINITY, 0, 0, 0, 0, 0, 0, 0, 0, 0};
	for (size_t row = r0; row < r1; row++) {
		int bk = j->bk ? j->bk : j->K;
		for (int k0 = 0; k0 < j->K; k0 += bk) {
			long bnz = 0, bqnz = 0;
			for (int k = k0; k < j->K && k < k0 + bk; k++) {
				size_t i = row * (size_t)j->K + (size_t)k;
				double x = j->x[i], q = j->q[i];
				if (!isfinite(x) || !isfinite(q))
					continue;
				a.n++;
				a.sx += x * x;
				a.se += (x - q) * (x - q);
				bqnz += q != 0;
				if (x != 0) {
					double rel = fabs(x - q) / fabs(x);
					a.nz++;
					bnz++;
					a.sum_rel += rel;
					if (rel > a.max_rel)
						a.max_rel = rel;
					a.under += q == 0;
					a.sat += fabs(x) > fabs(q) && code_is_max(j, (int)row, k);
				}
			}
			a.qnz += bqnz;
			if (j->bk) {
				bool tiny = false;
				double m = block_mult(j->t, j->r, j->c, j->R, j->K, (int)row, k0 / bk, &tiny);
				a.blocks++;
				a.tiny += tiny;
				a.vanished += bnz > 0 && bqnz == 0;
				if (m > 0 && m < a.smin)
					a.smin = m;
				if (m > a.smax)
					a.smax = m;
			}
		}
	}
	j->acc[r0 / STAT_ROWS] = a;
}

void numerics_copy_stats(const Graph *g, const long *dims, const Tensor *t, const RefTensor *r, Component copy,
	NumStats *s)
{
	memset(s, 0, sizeof *s);
	int rows = (int)layout_rows(dims, t), cols = (int)layout_cols(t), R, K;
	size_t n = (size_t)rows * (size_t)cols;
	float *q = interp_dequantize(g, dims, t, r, copy, &R, &K);
	float *x = r->value;
	if (copy == COMP_DATA_T) {
		x = malloc(sizeof *x * (n ? n : 1));
		ref_transpose(r->value, rows, cols, x);
		if (tensor_rht_t(t))
			ref_rht_rows(x, cols, rows, tg_rht_sign_mask(TG_RHT_SEED), x);
	}
	size_t nchunks = ((size_t)R + STAT_ROWS - 1) / STAT_ROWS;
	StatsJob j = {t, r, copy, x, q, R, K, block_k(t), t->dtype == DT_E5M2 ? TG_FMT_E5M2 : TG_FMT_E4M3,
		calloc(nchunks + 1, sizeof(Acc))};
	ref_parallel_chunks((size_t)R, STAT_ROWS, stats_task, &j);
	Acc a = {0, 0, 0, 0, INFINITY, 0, 0, 0, 0, 0, 0, 0, 0, 0};
	for (size_t i = 0; i < nchunks; i++) {
		const Acc *p = &j.acc[i];
		a.sx += p->sx, a.se += p->se, a.sum_rel += p->sum_rel;
		a.max_rel = p->max_rel > a.max_rel ? p->max_rel : a.max_rel;
		a.smin = p->smin < a.smin ? p->smin : a.smin;
		a.smax = p->smax > a.smax ? p->smax : a.smax;
		a.n += p->n, a.nz += p->nz, a.under += p->under, a.sat += p->sat, a.qnz += p->qnz;
		a.blocks += p->blocks, a.tiny += p->tiny, a.vanished += p->vanished;
	}
	if (!j.bk) { /* per-tensor: the whole copy is one block */
		bool tiny = false;
		double m = block_mult(t, r, copy, R, K, 0, 0, &tiny);
		a.blocks = 1, a.tiny = tiny, a.vanished = a.nz > 0 && a.qnz == 0;
		a.smin = a.smax = m;
	}
	s->n = a.n;
	s->sqnr_db = a.se == 0 ? (a.sx > 0 ? INFINITY : NAN) : a.sx > 0 ? 10.0 * log10(a.sx / a.se) : -INFINITY;
	s->max_rel = a.max_rel;
	s->mean_rel = a.nz ? a.sum_rel / (double)a.nz : 0;
	s->underflow = a.nz ? (double)a.under / (double)a.nz : 0;
	s->saturated = a.n ? (double)a.sat / (double)a.n : 0;
	s->blocks = a.blocks;
	s->tiny_blocks = a.blocks ? (double)a.tiny / (double)a.blocks : 0;
	s->vanished_blocks = a.blocks ? (double)a.vanished / (double)a.blocks : 0;
	s->scale_min = isinf(a.smin) ? 0 : a.smin;
	s->scale_max = a.smax;
	free(j.acc);
	free(q);
	if (x != r->value)
		free(x);
}

/* ---- what-if recipes: the spec text with its recipe replaced ---- */

typedef struct WhatIf {
	const char *name;
	const char *recipe;    /* the flow map written as the layer recipe */
	const char *weight_override; /* keys written for every quantized weight (NULL: none) */
} WhatIf;

static const WhatIf whatifs[] = {
	{"delayed", "{scaling: delayed, format: hybrid}", NULL},
	{"current", "{scaling: current, format: hybrid}", NULL},
	{"block", "{scaling: block1x128, format: e4m3}", "{scaling: block128x128, format: e4m3}"},
	{"block1x128", "{scaling: block1x128, format: e4m3}", NULL},
	{"block128x128", "{scaling: block128x128, format: e4m3}", NULL},
	{"mxfp8", "{scaling: mxfp8, format: e4m3}", NULL},
	{"nvfp4", "{scaling: nvfp4}", NULL},
	{"nvfp4_2d", "{scaling: nvfp4}", "{nvfp4_2d: true}"},
	{"nvfp4_rht", "{scaling: nvfp4, nvfp4_rht: true}", NULL},
	{"none", "{scaling: none}", NULL},
};

static const WhatIf *whatif_find(const char *name)
{
	for (size_t i = 0; i < sizeof whatifs / sizeof whatifs[0]; i++)
		if (!strcmp(whatifs[i].name, name))
			return &whatifs[i];
	return NULL;
}

/* Does line p (at a line start) begin top-level key `key:`? */
static bool top_key(const char *p, const char *key)
{
	size_t n = strlen(key);
	return !strncmp(p, key, n) && p[n] == ':';
}

/* The spec text without its top-level `recipe:` and `overrides:` entries (each with the
 * indented, blank and comment lines under it), then the what-if's recipe and overrides. */
static char *whatif_text(Arena *a, const char *text, const WhatIf *w, const Graph *g0)
{
	Buf b = {0};
	bool skip = false;
	for (const char *p = text; *p;) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) + 1 : strlen(p);
		if (top_key(p, "recipe") || top_key(p, "overrides"))
			skip = true;
		else if (*p != ' ' && *p != '\t' && *p != '#' && *p != '\n' && *p != '\r')
			skip = false;
		if (!skip)
			buf_putn(&b, p, len);
		p += len;
	}
	if (b.len && b.p[b.len - 1] != '\n')
		buf_puts(&b, "\n");
	buf_printf(&b, "recipe: %s\n", w->recipe);
	bool any = false;
	for (int i = 0; w->weight_override && i < g0->ntensors; i++) {
		const Tensor *t = &g0->tensors[i];
		if (t->producer < 0 || g0->ops[t->producer].kind != OP_QUANTIZE)
			continue;
		const Tensor *in = &g0->tensors[g0->ops[t->producer].arg[ARG_IN]];
		if (in->role != ROLE_WEIGHT || !layout_quantized(t))
			continue;
		buf_printf(&b, "%s  %s: %s\n", any ? "" : "overrides:\n", t->name, w->weight_override);
		any = true;
	}
	char *s = arena_strndup(a, b.p ? b.p : "", b.len);
	buf_free(&b);
	return s;
}

/* ---- one recipe: inputs, run, statistics ---- */

typedef struct Row {
	const char *recipe, *tensor, *copy, *dtype;
	NumStats s;
} Row;

typedef struct OutRow {
	const char *recipe, *tensor;
	double rel, sqnr;
} OutRow;

typedef struct Report {
	Row *rows;
	int nrows, caprows;
	OutRow *outs;
	int nouts, capouts;
} Report;

static int ref_dtype(DType t) { return t == DT_F32 ? REF_F32 : t == DT_F16 ? REF_F16 : REF_BF16; }

/* Seed of an input by its name: every recipe's graph gets the same values. */
static uint64_t name_seed(const char *name, uint64_t seed)
{
	uint64_t h = 14695981039346656037ull ^ seed;
	for (const char *c = name; *c; c++)
		h = (h ^ (uint8_t)*c) * 1099511628211ull;
	return h;
}

/* Every input of g: a built-in generator (weights Gaussian, std 1/sqrt(cols); rank-1
 * weights 1 + 0.1 N(0,1); the rest `kind`, std 1), replaced by IN_DIR/NAME.npy where that exists. */
static int make_inputs(const Graph *g, const long *dims, long tokens, NumInput kind, const char *in_dir, RefTensor *rt,
	char *err, size_t errlen)
{
	for (int i = 0; i < g->ntensors; i++) {
		const Tensor *t = &g->tensors[i];
		if (t->producer >= 0)
			continue;
		long rows = layout_rows(dims, t), cols = layout_cols(t);
		size_t n = (size_t)rows * (size_t)cols;
		float *x = malloc(sizeof *x * (n ? n : 1));
		uint64_t seed = name_seed(t->name, 0);
		if (t->role == ROLE_WEIGHT && t->rank == 1) {
			numerics_fill(x, rows, cols, NUM_GAUSSIAN, 0.1, seed);
			for (size_t k = 0; k < n; k++)
				x[k] += 1.0f;
		} else if (t->role == ROLE_WEIGHT)
			numerics_fill(x, rows, cols, NUM_GAUSSIAN, 1.0 / sqrt((double)(cols > 0 ? cols : 1)), seed);
		else
			numerics_fill(x, rows, cols, kind, 1.0, seed);
		void *d = malloc(layout_comp_bytes(dims, t, COMP_DATA) + 1);
		for (size_t k = 0; k < n; k++)
			ref_store(d, ref_dtype(t->dtype), k, x[k]);
		free(x);
		free(rt[i].comp[COMP_DATA]);
		rt[i].comp[COMP_DATA] = d;
		rt[i].bytes[COMP_DATA] = layout_comp_bytes(dims, t, COMP_DATA);
		rt[i].owned = 1;
	}
	return in_dir ? refrun_inputs(g, dims, tokens, 1, in_dir, rt, err, errlen) : 0;
}

/* Run g on its inputs; delayed-scaling tensors get steady-state scales from a warm-up pass. */
static int run_layer(const Graph *g, const long *dims, RefTensor *rt, char *err, size_t errlen)
{
	bool delayed = false;
	for (int i = 0; i < g->ntensors; i++)
		if (layout_quantized(&g->tensors[i]) && g->tensors[i].recipe.scaling == SCALING_DELAYED) {
			rt[i].scale = rt[i].scale_inv = 1.0f;
			delayed = true;
		}
	if (interp_run(g, dims, rt, err, errlen))
		return -1;
	if (!delayed)
		return 0;
	for (int i = 0; i < g->ntensors; i++) {
		const Tensor *t = &g->tensors[i];
		if (!layout_quantized(t) || t->recipe.scaling != SCALING_DELAYED)
			continue;
		float fmax = tg_fmt_max(t->dtype == DT_E5M2 ? TG_FMT_E5M2 : TG_FMT_E4M3);
		rt[i].scale = tg_delayed_scale(rt[i].amax, 1.0f, fmax, t->recipe.margin);
		rt[i].scale_inv = tg_scale_inv(rt[i].scale);
	}
	return interp_run(g, dims, rt, err, errlen);
}

/* The FP32 values of output t (its rowwise copy dequantized, or its stored values). */
static float *output_values(const Graph *g, const long *dims, const Tensor *t, const RefTensor *r, size_t *n)
{
	int R, K;
	*n = (size_t)layout_rows(dims, t) * (size_t)layout_cols(t);
	if (layout_quantized(t) && !t->rowwise) {
		float *v = malloc(sizeof *v * (*n ? *n : 1));
		memcpy(v, r->value, sizeof *v * *n);
		return v;
	}
	return interp_dequantize(g, dims, t, r, COMP_DATA, &R, &K);
}

typedef struct Baseline {
	const Graph *g;
	float **out; /* per tensor of g: its output values, or NULL */
	size_t *n;
} Baseline;

static void push_row(Report *rep, Row r)
{
	if (rep->nrows == rep->caprows) {
		rep->caprows = rep->caprows ? 2 * rep->caprows : 64;
		rep->rows = realloc(rep->rows, sizeof *rep->rows * (size_t)rep->caprows);
	}
	rep->rows[rep->nrows++] = r;
}

static void push_out(Report *rep, OutRow r)
{
	if (rep->nouts == rep->capouts) {
		rep->capouts = rep->capouts ? 2 * rep->capouts : 64;
		rep->outs = realloc(rep->outs, sizeof *rep->outs * (size_t)rep->capouts);
	}
	rep->outs[rep->nouts++] = r;
}

/* Run one recipe's graph and add its rows (base NULL: the unquantized baseline, kept in *keep). */
static int run_recipe(Arena *a, const char *recipe, const Graph *g, long tokens, NumInput kind, const char *in_dir,
	const Baseline *base, Baseline *keep, Report *rep, char *err, size_t errlen)
{
	long *dims = calloc((size_t)g->ndims + 1, sizeof *dims);
	RefTensor *rt = calloc((size_t)g->ntensors + 1, sizeof *rt);
	for (int d = 0; d < g->ndims; d++)
		dims[d] = layout_dim_at(g, d, tokens);
	int rc = make_inputs(g, dims, tokens, kind, in_dir, rt, err, errlen);
	if (!rc)
		rc = run_layer(g, dims, rt, err, errlen);
	for (int i = 0; !rc && base && i < g->ntensors; i++) {
		const Tensor *t = &g->tensors[i];
		if (t->producer < 0 || !layout_quantized(t) || !rt[i].value)
			continue;
		for (int c = 0; c < 2; c++) {
			if (!(c ? t->columnwise : t->rowwise))
				continue;
			Row r = {recipe, t->name, c ? "col" : "row", dtype_name(t->dtype), {0}};
			numerics_copy_stats(g, dims, t, &rt[i], c ? COMP_DATA_T : COMP_DATA, &r.s);
			push_row(rep, r);
		}
	}
	for (int i = 0; !rc && i < g->ntensors; i++) {
		const Tensor *t = &g->tensors[i];
		if (!t->output || t->producer < 0)
			continue;
		size_t n;
		float *v = output_values(g, dims, t, &rt[i], &n);
		if (!base) {
			keep->out[i] = v;
			keep->n[i] = n;
			continue;
		}
		for (int j = 0; j < base->g->ntensors; j++)
			if (base->out[j] && !strcmp(base->g->tensors[j].name, t->name) && base->n[j] == n) {
				OutRow o = {recipe, t->name, 0, 0};
				numerics_error(base->out[j], v, n, &o.rel, &o.sqnr);
				push_out(rep, o);
			}
		free(v);
	}
	(void)a;
	interp_free(g, rt);
	free(rt);
	free(dims);
	return rc;
}

/* ---- output: tables, CSV, SVG ---- */

static void fmt_db(char *b, size_t n, double v)
{
	if (isnan(v))
		snprintf(b, n, "-");
	else if (isinf(v))
		snprintf(b, n, v > 0 ? "inf" : "-inf");
	else
		snprintf(b, n, "%.1f", v);
}

static void print_tables(const Report *rep, const char *const *recipes, int nrec)
{
	for (int k = 0; k < nrec; k++) {
		printf("\nrecipe %s: quantized copies against the FP32 values they came from\n", recipes[k]);
		printf("%-16s %-4s %-5s %8s %9s %9s %8s %8s %8s %8s  %s\n", "tensor", "copy", "dtype", "SQNR dB", "max rel",
			"mean rel", "under%", "satur%", "tiny%", "vanish%", "scale range (dequant multiplier)");
		for (int i = 0; i < rep->nrows; i++) {
			const Row *r = &rep->rows[i];
			if (strcmp(r->recipe, recipes[k]))
				continue;
			char db[32];
			fmt_db(db, sizeof db, r->s.sqnr_db);
			printf("%-16s %-4s %-5s %8s %9.3g %9.3g %8.3f %8.3f %8.3f %8.3f  %.3g .. %.3g (%ld blocks)\n", r->tensor,
				r->copy, r->dtype, db, r->s.max_rel, r->s.mean_rel, 100 * r->s.underflow, 100 * r->s.saturated,
				100 * r->s.tiny_blocks, 100 * r->s.vanished_blocks, r->s.scale_min, r->s.scale_max, r->s.blocks);
		}
	}
	printf("\nlayer outputs against the same graph unquantized (relative Frobenius error / SQNR dB)\n%-14s", "recipe");
	const char *names[64];
	int nn = 0;
	for (int i = 0; i < rep->nouts && nn < 64; i++) {
		bool seen = false;
		for (int j = 0; j < nn; j++)
			seen = seen || !strcmp(names[j], rep->outs[i].tensor);
		if (!seen) {
			names[nn++] = rep->outs[i].tensor;
			printf(" %22s", rep->outs[i].tensor);
		}
	}
	printf("\n");
	for (int k = 0; k < nrec; k++) {
		printf("%-14s", recipes[k]);
		for (int j = 0; j < nn; j++)
			for (int i = 0; i < rep->nouts; i++)
				if (!strcmp(rep->outs[i].recipe, recipes[k]) && !strcmp(rep->outs[i].tensor, names[j])) {
					char db[32], cell[64];
					fmt_db(db, sizeof db, rep->outs[i].sqnr);
					snprintf(cell, sizeof cell, "%.3g / %s", rep->outs[i].rel, db);
					printf(" %22s", cell);
				}
		printf("\n");
	}
}

static int write_csv(const char *path, const Report *rep)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f, "recipe,kind,tensor,copy,dtype,sqnr_db,max_rel,mean_rel,underflow,saturated,blocks,tiny_blocks,"
		"vanished_blocks,scale_min,scale_max,rel_frobenius\n");
	for (int i = 0; i < rep->nrows; i++) {
		const Row *r = &rep->rows[i];
		fprintf(f, "%s,copy,%s,%s,%s,%.6g,%.6g,%.6g,%.6g,%.6g,%ld,%.6g,%.6g,%.6g,%.6g,\n", r->recipe, r->tensor, r->copy,
			r->dtype, r->s.sqnr_db, r->s.max_rel, r->s.mean_rel, r->s.underflow, r->s.saturated, r->s.blocks,
			r->s.tiny_blocks, r->s.vanished_blocks, r->s.scale_min, r->s.scale_max);
	}
	for (int i = 0; i < rep->nouts; i++)
		fprintf(f, "%s,output,%s,,,%.6g,,,,,,,,,,%.6g\n", rep->outs[i].recipe, rep->outs[i].tensor, rep->outs[i].sqnr,
			rep->outs[i].rel);
	return fclose(f) == 0 ? 0 : -1;
}

/* SQNR per tensor copy, one bar group per recipe (infinite SQNR drawn at the top, marked). */
static int write_svg(const char *path, const Report *rep, const char *const *recipes, int nrec, const char *title)
{
	const char *keys[128];
	int nk = 0;
	double top = 10;
	for (int i = 0; i < rep->nrows; i++) {
		char key[160];
		snprintf(key, sizeof key, "%s.%s", rep->rows[i].tensor, rep->rows[i].copy);
		bool seen = false;
		for (int j = 0; j < nk; j++)
			seen = seen || !strcmp(keys[j], key);
		if (!seen && nk < 128)
			keys[nk++] = strdup(key);
		if (isfinite(rep->rows[i].s.sqnr_db) && rep->rows[i].s.sqnr_db > top)
			top = rep->rows[i].s.sqnr_db;
	}
	top = ceil(top / 10) * 10;
	int bw = 10, gap = 24, left = 60, plot_h = 300, topm = 40;
	int gw = nk * bw + gap, width = left + nrec * gw + 40 + 220, height = topm + plot_h + 60;
	FILE *f = fopen(path, "w");
	if (!f) {
		for (int j = 0; j < nk; j++)
			free((void *)keys[j]);
		return -1;
	}
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" "
		"font-size=\"11\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n", width, height);
	fprintf(f, "<text x=\"%d\" y=\"20\" font-size=\"14\">%s: SQNR (dB) of each quantized copy, per recipe</text>\n", left,
		title);
	for (int v = 0; v <= (int)top; v += 10) {
		double y = topm + plot_h - plot_h * v / top;
		fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/><text x=\"%d\" y=\"%.1f\" "
			"text-anchor=\"end\">%d</text>\n", left, y, left + nrec * gw, y, left - 4, y + 4, v);
	}
	for (int k = 0; k < nrec; k++) {
		int x0 = left + k * gw + gap / 2;
		for (int j = 0; j < nk; j++)
			for (int i = 0; i < rep->nrows; i++) {
				const Row *r = &rep->rows[i];
				char key[160];
				snprintf(key, sizeof key, "%s.%s", r->tensor, r->copy);
				if (strcmp(r->recipe, recipes[k]) || strcmp(key, keys[j]) || isnan(r->s.sqnr_db))
					continue;
				double v = isinf(r->s.sqnr_db) ? (r->s.sqnr_db > 0 ? top : 0) : r->s.sqnr_db < 0 ? 0 : r->s.sqnr_db;
				double h = plot_h * v / top;
				fprintf(f, "<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" fill=\"hsl(%d,60%%,50%%)\"><title>%s "
					"%s: %.1f dB</title></rect>\n", x0 + j * bw, topm + plot_h - h, bw - 1, h, j * 360 / (nk ? nk : 1),
					recipes[k], key, r->s.sqnr_db);
			}
		fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", x0 + nk * bw / 2, topm + plot_h + 16,
			recipes[k]);
	}
	for (int j = 0; j < nk; j++) {
		int y = topm + 12 + j * 14;
		fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"hsl(%d,60%%,50%%)\"/><text x=\"%d\" "
			"y=\"%d\">%s</text>\n", left + nrec * gw + 20, y - 9, j * 360 / (nk ? nk : 1), left + nrec * gw + 34, y, keys[j]);
		free((void *)keys[j]);
	}
	fprintf(f, "</svg>\n");
	return fclose(f) == 0 ? 0 : -1;
}

/* ---- the command ---- */

static const char numerics_usage[] =
	"usage: tegen numerics SPEC [--in DIR] [--tokens N] [--recipes LIST] [--inputs gaussian|student|outliers]\n"
	"                      [--csv F] [--chart F.svg]\n"
	"  per quantized tensor and recipe: SQNR of the rowwise/columnwise copies, max/mean relative error,\n"
	"  underflow and saturation shares, tiny/vanished scale blocks, scale range; per layer output: its\n"
	"  error against the same graph unquantized. The spec's recipe first, then each of --recipes:\n"
	"  delayed current block (1x128, weights 128x128) block1x128 block128x128 mxfp8 nvfp4 nvfp4_2d\n"
	"  nvfp4_rht, or all. CPU reference (about 1 min per recipe for an 8B MLP layer with backward at\n"
	"  256 tokens on 2 cores); --tokens defaults to 256. --in: NAME.npy inputs (others generated).\n";

int cmd_numerics(int argc, char **argv)
{
	const char *spec = NULL, *in_dir = NULL, *list = NULL, *csv = NULL, *chart = NULL;
	long tokens = 256;
	NumInput kind = NUM_GAUSSIAN;
	for (int i = 0; i < argc; i++) {
		bool more = i + 1 < argc;
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(numerics_usage, stdout);
			return 0;
		} else if (!strcmp(argv[i], "--tokens") && more) {
			if (!(tokens = cli_tokens(argv[++i])))
				return 2;
		} else if (!strcmp(argv[i], "--in") && more)
			in_dir = argv[++i];
		else if (!strcmp(argv[i], "--recipes") && more)
			list = argv[++i];
		else if (!strcmp(argv[i], "--csv") && more)
			csv = argv[++i];
		else if (!strcmp(argv[i], "--chart") && more)
			chart = argv[++i];
		else if (!strcmp(argv[i], "--inputs") && more) {
			const char *k = argv[++i];
			if (!strcmp(k, "gaussian"))
				kind = NUM_GAUSSIAN;
			else if (!strcmp(k, "student"))
				kind = NUM_STUDENT;
			else if (!strcmp(k, "outliers"))
				kind = NUM_OUTLIERS;
			else {
				fprintf(stderr, "tegen numerics: --inputs: '%.64s' is not gaussian, student or outliers\n", k);
				return 2;
			}
		} else if (argv[i][0] == '-' || spec) {
			fputs(numerics_usage, stderr);
			return 2;
		} else
			spec = argv[i];
	}
	if (!spec) {
		fputs(numerics_usage, stderr);
		return 2;
	}
	/* the recipe list: the spec's own ("spec"), then --recipes */
	const char *recipes[32];
	const WhatIf *w[32];
	int nrec = 1;
	recipes[0] = "spec";
	w[0] = NULL;
	char *copy = list ? strdup(!strcmp(list, "all") ? "delayed,current,block,mxfp8,nvfp4,nvfp4_2d,nvfp4_rht" : list) : NULL;
	for (char *tok = copy ? strtok(copy, ",") : NULL; tok; tok = strtok(NULL, ",")) {
		const WhatIf *f = whatif_find(tok);
		if (!f || !strcmp(tok, "none") || nrec == 32) {
			fprintf(stderr, "tegen numerics: --recipes: '%.64s' is not one of delayed, current, block, block1x128, "
				"block128x128, mxfp8, nvfp4, nvfp4_2d, nvfp4_rht, all%s\n", tok, nrec == 32 ? " (or too many)" : "");
			free(copy);
			return 2;
		}
		w[nrec] = f;
		recipes[nrec++] = f->name;
	}
	Arena *a = arena_new();
	size_t len;
	char *text = cli_read_file(a, spec, &len);
	Diag *d = arena_alloc(a, sizeof *d);
	Arch arch = {100, true}; /* every recipe's graph is checked for sm_100a (NVFP4 needs it); the plan is not used */
	const Graph *g0 = text ? pipeline_graph(a, d, spec, text, len, arch, true) : NULL;
	int rc = 1;
	Report rep = {0};
	Baseline base = {0};
	char err[2048];
	if (!g0) {
		if (text)
			fputs(d->msg, stderr);
		goto out;
	}
	double t0 = cli_now_s();
	/* the unquantized baseline: the same graph, scaling none */
	const Graph *gb = NULL;
	{
		const char *tb = whatif_text(a, text, whatif_find("none"), g0);
		gb = pipeline_graph(a, d, spec, tb, strlen(tb), arch, true);
		if (!gb) {
			fprintf(stderr, "tegen numerics: the unquantized graph does not build:\n%s", d->msg);
			goto out;
		}
		base.g = gb;
		base.out = calloc((size_t)gb->ntensors + 1, sizeof *base.out);
		base.n = calloc((size_t)gb->ntensors + 1, sizeof *base.n);
		if (run_recipe(a, "none", gb, tokens, kind, in_dir, NULL, &base, &rep, err, sizeof err)) {
			fprintf(stderr, "tegen numerics: %s\n", err);
			goto out;
		}
	}
	for (int k = 0; k < nrec; k++) {
		const Graph *g = g0;
		if (w[k]) {
			const char *tw = whatif_text(a, text, w[k], g0);
			g = pipeline_graph(a, d, spec, tw, strlen(tw), arch, true);
			if (!g) { /* e.g. a recipe whose backward tegen does not derive yet: say so, go on */
				fprintf(stderr, "tegen numerics: recipe %s skipped, the layer does not build with it:\n%s", recipes[k],
					d->msg);
				printf("recipe %s: skipped (the layer does not build with it; see stderr)\n", recipes[k]);
				memmove(recipes + k, recipes + k + 1, sizeof *recipes * (size_t)(nrec - k - 1));
				memmove(w + k, w + k + 1, sizeof *w * (size_t)(nrec - k - 1));
				nrec--, k--;
				continue;
			}
		}
		double r0 = cli_now_s();
		if (run_recipe(a, recipes[k], g, tokens, kind, in_dir, &base, NULL, &rep, err, sizeof err)) {
			fprintf(stderr, "tegen numerics: %s: %s\n", recipes[k], err);
			goto out;
		}
		fprintf(stderr, "tegen numerics: %s: %.1f s\n", recipes[k], cli_now_s() - r0);
	}
	printf("%s: tokens=%ld, inputs %s, CPU reference on %d threads, %.1f s\n", g0->layer, tokens,
		kind == NUM_GAUSSIAN ? "gaussian" : kind == NUM_STUDENT ? "student-t(3)" : "outliers", ref_threads(),
		cli_now_s() - t0);
	print_tables(&rep, recipes, nrec);
	rc = 0;
	if (csv && write_csv(csv, &rep)) {
		fprintf(stderr, "tegen numerics: cannot write %s\n", csv);
		rc = 1;
	}
	if (chart && write_svg(chart, &rep, recipes, nrec, g0->layer)) {
		fprintf(stderr, "tegen numerics: cannot write %s\n", chart);
		rc = 1;
	}
out:
	for (int i = 0; base.out && i < base.g->ntensors; i++)
		free(base.out[i]);
	free(base.out);
	free(base.n);
	free(rep.rows);
	free(rep.outs);
	free(copy);
	arena_free(a);
	return rc;
}
