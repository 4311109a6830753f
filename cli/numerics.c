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
#include "numerics_gpu.h"
#include "numstats.h"

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
static uint64_t input_seed; /* --seed: generated inputs of another draw (0: the default draw) */

static uint64_t name_seed(const char *name, uint64_t seed)
{
	uint64_t h = 14695981039346656037ull ^ seed;
	for (const char *c = name; *c; c++)
		h = (h ^ (uint8_t)*c) * 1099511628211ull;
	return h;
}

/* Generated inputs by name and bytes, made once and copied into every recipe's run
 * (the generator's transcendental functions would otherwise dominate a report). */
enum { NUM_MAX_INPUTS = 64 };
typedef struct InputCache {
	int n;
	const char *name[NUM_MAX_INPUTS];
	size_t bytes[NUM_MAX_INPUTS];
	void *data[NUM_MAX_INPUTS];
} InputCache;

static void cache_free(InputCache *c)
{
	for (int i = 0; i < c->n; i++) {
		free((void *)c->name[i]);
		free(c->data[i]);
	}
	c->n = 0;
}

/* Every input of g: a built-in generator (weights Gaussian, std 1/sqrt(cols); rank-1
 * weights 1 + 0.1 N(0,1); the rest `kind`, std 1), replaced by IN_DIR/NAME.npy where that exists. */
static int make_inputs(const Graph *g, const long *dims, long tokens, NumInput kind, const char *in_dir,
	InputCache *cache, RefTensor *rt, char *err, size_t errlen)
{
	for (int i = 0; i < g->ntensors; i++) {
		const Tensor *t = &g->tensors[i];
		if (t->producer >= 0)
			continue;
		long rows = layout_rows(dims, t), cols = layout_cols(t);
		size_t n = (size_t)rows * (size_t)cols, bytes = layout_comp_bytes(dims, t, COMP_DATA);
		void *d = malloc(bytes + 1);
		int hit = -1;
		for (int k = 0; k < cache->n && hit < 0; k++)
			if (!strcmp(cache->name[k], t->name) && cache->bytes[k] == bytes)
				hit = k;
		if (hit >= 0) {
			memcpy(d, cache->data[hit], bytes);
		} else {
			float *x = malloc(sizeof *x * (n ? n : 1));
			uint64_t seed = name_seed(t->name, input_seed);
			if (t->role == ROLE_WEIGHT && t->rank == 1) {
				numerics_fill(x, rows, cols, NUM_GAUSSIAN, 0.1, seed);
				for (size_t k = 0; k < n; k++)
					x[k] += 1.0f;
			} else if (t->role == ROLE_WEIGHT)
				numerics_fill(x, rows, cols, NUM_GAUSSIAN, 1.0 / sqrt((double)(cols > 0 ? cols : 1)), seed);
			else
				numerics_fill(x, rows, cols, kind, 1.0, seed);
			for (size_t k = 0; k < n; k++)
				ref_store(d, ref_dtype(t->dtype), k, x[k]);
			free(x);
			if (cache->n < NUM_MAX_INPUTS) {
				cache->name[cache->n] = strdup(t->name);
				cache->bytes[cache->n] = bytes;
				cache->data[cache->n] = malloc(bytes + 1);
				memcpy(cache->data[cache->n++], d, bytes);
			}
		}
		free(rt[i].comp[COMP_DATA]);
		rt[i].comp[COMP_DATA] = d;
		rt[i].bytes[COMP_DATA] = bytes;
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

enum { NUM_MAX_OUTPUTS = 64 };
/* The unquantized run's outputs, by name. */
typedef struct Baseline {
	int count;
	const char *name[NUM_MAX_OUTPUTS];
	float *out[NUM_MAX_OUTPUTS];
	size_t n[NUM_MAX_OUTPUTS];
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
typedef struct InputsArgs {
	long tokens;
	NumInput kind;
	const char *in_dir;
	InputCache *cache;
} InputsArgs;

static int gpu_inputs(const Graph *g, const long *dims, RefTensor *rt, void *ud, char *err, size_t errlen)
{
	const InputsArgs *ia = ud;
	return make_inputs(g, dims, ia->tokens, ia->kind, ia->in_dir, ia->cache, rt, err, errlen);
}

/* Where a recipe runs: the CPU interpreter on g, or (ctx) the GPU on the layer made from text. */
typedef struct Where {
	TgContext *ctx;
	const char *file, *text;
} Where;

static int run_recipe(Arena *a, const char *recipe, const Graph *g, const Where *where, long tokens, NumInput kind,
	const char *in_dir, InputCache *cache, const Baseline *base, Baseline *keep, Report *rep, char *err, size_t errlen)
{
	NumGpuRun gr = {0};
	long *dims = NULL;
	RefTensor *rt = NULL;
	int rc;
	if (where->ctx) {
		InputsArgs ia = {tokens, kind, in_dir, cache};
		rc = numgpu_run(where->ctx, where->file, where->text, tokens, gpu_inputs, &ia, &gr, err, errlen);
		if (rc)
			return rc;
		g = gr.g, dims = gr.dims, rt = gr.rt;
	} else {
		dims = calloc((size_t)g->ndims + 1, sizeof *dims);
		rt = calloc((size_t)g->ntensors + 1, sizeof *rt);
		for (int d = 0; d < g->ndims; d++)
			dims[d] = layout_dim_at(g, d, tokens);
		rc = make_inputs(g, dims, tokens, kind, in_dir, cache, rt, err, errlen);
		if (!rc)
			rc = run_layer(g, dims, rt, err, errlen);
	}
	for (int i = 0; !rc && base && i < g->ntensors; i++) {
		const Tensor *t = &g->tensors[i];
		if (t->producer < 0 || !layout_quantized(t) || !rt[i].value)
			continue;
		for (int c = 0; c < 2; c++) {
			if (!(c ? t->columnwise : t->rowwise))
				continue;
			Row r = {recipe, arena_strndup(a, t->name, strlen(t->name)), c ? "col" : "row", dtype_name(t->dtype), {0}};
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
			if (keep->count < NUM_MAX_OUTPUTS) {
				keep->name[keep->count] = arena_strndup(a, t->name, strlen(t->name));
				keep->n[keep->count] = n;
				keep->out[keep->count++] = v;
			} else
				free(v);
			continue;
		}
		for (int j = 0; j < base->count; j++)
			if (!strcmp(base->name[j], t->name) && base->n[j] == n) {
				OutRow o = {recipe, base->name[j], 0, 0};
				numerics_error(base->out[j], v, n, &o.rel, &o.sqnr);
				push_out(rep, o);
			}
		free(v);
	}
	if (where->ctx) {
		numgpu_free(&gr);
		return rc;
	}
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
	"                      [--csv F] [--chart F.svg] [--cpu|--gpu] [--seed S]\n"
	"  per quantized tensor and recipe: SQNR of the rowwise/columnwise copies, max/mean relative error,\n"
	"  underflow and saturation shares, tiny/vanished scale blocks, scale range; per layer output: its\n"
	"  error against the same graph unquantized. The spec's recipe first, then each of --recipes:\n"
	"  delayed current block (1x128, weights 128x128) block1x128 mxfp8 nvfp4 nvfp4_2d (weights 16x16)\n"
	"  nvfp4_rht, or all. On the GPU when one is present (tg_run; the FP32 values the copies came\n"
	"  from read back: the norm/GLU kernels write them), else (or --cpu) on the CPU reference (slow:\n"
	"  about 17 s of CPU time per recipe for the 8B MLP forward at 256 tokens). --tokens defaults to\n"
	"  256. --in: NAME.npy inputs (the others generated). --seed: another draw of the generated inputs.\n";

int cmd_numerics(int argc, char **argv)
{
	const char *spec = NULL, *in_dir = NULL, *list = NULL, *csv = NULL, *chart = NULL;
	long tokens = 256;
	NumInput kind = NUM_GAUSSIAN;
	int device = 0; /* 0: the GPU when present, 1: --cpu, 2: --gpu */
	for (int i = 0; i < argc; i++) {
		bool more = i + 1 < argc;
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(numerics_usage, stdout);
			return 0;
		} else if (!strcmp(argv[i], "--tokens") && more) {
			if (!(tokens = cli_tokens(argv[++i])))
				return 2;
		} else if (!strcmp(argv[i], "--seed") && more) {
			char *end;
			unsigned long long v = strtoull(argv[++i], &end, 10);
			if (!*argv[i] || *end) {
				fprintf(stderr, "tegen numerics: --seed: '%.64s' is not a number\n", argv[i]);
				return 2;
			}
			input_seed = v;
		} else if (!strcmp(argv[i], "--cpu") || !strcmp(argv[i], "--gpu")) {
			if (device && device != (argv[i][2] == 'c' ? 1 : 2)) {
				fprintf(stderr, "tegen numerics: --cpu and --gpu exclude each other\n");
				return 2;
			}
			device = argv[i][2] == 'c' ? 1 : 2;
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
				"mxfp8, nvfp4, nvfp4_2d, nvfp4_rht, all%s\n", tok, nrec == 32 ? " (or too many)" : "");
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
	InputCache cache = {0};
	TgContext *ctx = NULL;
	char err[2048];
	if (!g0) {
		if (text)
			fputs(d->msg, stderr);
		goto out;
	}
	double t0 = cli_now_s();
	/* the unquantized baseline: the same graph, scaling none */
	const Graph *gb = NULL;
	if (device != 1 && tg_context_create(NULL, &ctx)) {
		ctx = NULL;
		if (device == 2) {
			fprintf(stderr, "tegen numerics: --gpu: no GPU (%s)\n", tg_last_error());
			goto out;
		}
	}
	fprintf(stderr, "tegen numerics: on the %s\n", ctx ? "GPU (tg_run; the values the copies came from read back)" : "CPU reference");
	{
		const char *tb = whatif_text(a, text, whatif_find("none"), g0);
		gb = pipeline_graph(a, d, spec, tb, strlen(tb), arch, true);
		if (!gb) {
			fprintf(stderr, "tegen numerics: the unquantized graph does not build:\n%s", d->msg);
			goto out;
		}
		Where where = {ctx, spec, tb};
		if (run_recipe(a, "none", gb, &where, tokens, kind, in_dir, &cache, NULL, &base, &rep, err, sizeof err)) {
			fprintf(stderr, "tegen numerics: %s\n", err);
			goto out;
		}
	}
	for (int k = 0; k < nrec; k++) {
		const Graph *g = g0;
		const char *tw = text;
		if (w[k]) {
			tw = whatif_text(a, text, w[k], g0);
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
		Where where = {ctx, spec, tw};
		if (run_recipe(a, recipes[k], g, &where, tokens, kind, in_dir, &cache, &base, NULL, &rep, err, sizeof err)) {
			fprintf(stderr, "tegen numerics: %s: %s\n", recipes[k], err);
			if (!ctx)
				goto out;
			printf("recipe %s: skipped (the GPU run failed; see stderr)\n", recipes[k]); /* e.g. not on this GPU */
			memmove(recipes + k, recipes + k + 1, sizeof *recipes * (size_t)(nrec - k - 1));
			memmove(w + k, w + k + 1, sizeof *w * (size_t)(nrec - k - 1));
			nrec--, k--;
			continue;
		}
		fprintf(stderr, "tegen numerics: %s: %.1f s\n", recipes[k], cli_now_s() - r0);
	}
	fprintf(stderr, "tegen numerics: %d recipes, CPU reference on %d threads, %.1f s\n", nrec, ref_threads(),
		cli_now_s() - t0);
	printf("%s: tokens=%ld, inputs %s%s%s\n", g0->layer, tokens,
		kind == NUM_GAUSSIAN ? "gaussian" : kind == NUM_STUDENT ? "student-t(3)" : "outliers (1 channel in ~512 x100)",
		in_dir ? ", .npy from " : "", in_dir ? in_dir : "");
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
	for (int i = 0; i < base.count; i++)
		free(base.out[i]);
	cache_free(&cache);
	if (ctx)
		tg_context_destroy(ctx);
	free(rep.rows);
	free(rep.outs);
	free(copy);
	arena_free(a);
	return rc;
}
