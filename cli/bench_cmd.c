/* bench_cmd.c: `tegen bench`, the GEMMs of a model timed per pass and precision.
 *
 * Input: explicit shapes (--shapes MxKxN,...: tokens x in x out), a transformer
 * config (--hidden --ffn --heads ...: QKV, attention out, MLP up, MLP down), or
 * a spec (--spec: its gemm_cast calls at --tokens). bench_model.c turns that
 * into linear layers and each layer into the cuBLASLt GEMMs of its three passes;
 * cli/bench.c times them. Every GEMM runs in BF16, FP8 delayed and current
 * (per-tensor; the same GEMM), FP8 block (1x128 x 128x128) and MXFP8 (native
 * from sm_100; before that emulated: the BF16 GEMM plus a dequantize whose cost
 * is estimated from its bytes at the measured copy bandwidth). Two modes: the
 * GEMM alone (operands pre-quantized), and with the generated quantize kernels
 * a training step runs for that pass's operands (small specs run through the
 * public runtime API: the real kernels). Output: a table per pass, totals per
 * pass, layer and model, optionally CSV and an SVG bar chart; progress on
 * stderr. Exit: 0 ok, 1 no GPU / spec error / nothing measured, 2 bad usage.
 * Every measurement checks a wall-clock budget, so a run ends in bounded time. */
#include "bench_cmd.h"

#include "bench.h"
#include "bench_model.h"
#include "cli.h"
#include "gen.h"
#include "pipeline.h"
#include "tegen.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define USAGE \
	"usage: tegen bench --shapes MxKxN[,...]\n" \
	"       tegen bench --hidden H --ffn F --heads A [--kv-heads G] --seq S [--micro-batch B] [--layers L] [--no-gate]\n" \
	"       tegen bench --spec SPEC [--tokens N]\n" \
	"  options: --tokens N (instead of micro-batch x seq), --layers L (model total = layer x L), --iters N (>= 10,\n" \
	"  default 20), --warmup N (default 5), --precisions bf16,fp8_delayed,fp8_current,fp8_block,mxfp8,nvfp4,\n" \
	"  --kernel-only (GEMMs only, no quantize kernels), --fast-accum auto|on|off (FP8 per-tensor; auto = fprop only),\n" \
	"  --csv FILE, --chart FILE.svg, --budget SECONDS (default 170), --cache-dir DIR, --list (print the GEMMs, no GPU),\n" \
	"  --cooldown MS (idle the GPU MS ms before each GEMM's warm-up: each starts cool; default 0)\n"

typedef struct Cell {
	int have;                 /* kernel-only time known */
	double ms;                /* the GEMM (emulated MXFP8/NVFP4: BF16 GEMM + dequantize estimate) */
	double dq_ms;             /* emulated MXFP8/NVFP4: the dequantize estimate inside ms */
	int emulated;
	char note[240];           /* why not measured */
	int qhave;                /* quantize kernels measured */
	double qms;               /* their time for this pass */
	char qnote[240];
} Cell;

typedef struct Opts {
	const char *shapes, *spec, *csv, *chart, *cache_dir;
	BenchModel model;
	int model_given;
	long tokens, layers;
	int iters, warmup, kernel_only, fast_accum, list, cooldown_ms;
	double budget;
	int want[BP_COUNT];
} Opts;

typedef struct Bench {
	Opts o;
	BenchLinear lin[BENCH_MAX_LINEARS];
	int nlin;
	Cell cell[BENCH_MAX_LINEARS][BENCH_NPASS][BP_COUNT];
	char source[320], device[256];
	int cc, blockfmt_emulated; /* MXFP8 and NVFP4 GEMMs run as dequantize + BF16 (below sm_100) */
	double copy_gbs;
	double t0, deadline;
	int step, steps;
} Bench;

static int usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("tegen bench: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\n" USAGE, stderr);
	return 2;
}

/* Reads an integer option value in [lo, hi]; -1 if it is not one. */
static int read_long(const char *s, long lo, long hi, long *v)
{
	if (!s || !*s)
		return -1;
	errno = 0;
	char *end;
	long x = strtol(s, &end, 10);
	if (errno || *end || x < lo || x > hi)
		return -1;
	*v = x;
	return 0;
}

static int parse_precisions(Opts *o, const char *list)
{
	memset(o->want, 0, sizeof o->want);
	o->want[BP_BF16] = 1; /* the baseline of every speedup */
	const char *p = list;
	while (*p) {
		size_t n = strcspn(p, ",");
		int found = -1;
		for (int i = 0; i < BP_COUNT; i++) {
			const char *k = bench_prec_key(i), *shortk = strncmp(k, "fp8_", 4) ? k : k + 4;
			if ((strlen(k) == n && !strncmp(p, k, n)) || (strlen(shortk) == n && !strncmp(p, shortk, n)))
				found = i;
		}
		if (found < 0)
			return usage("--precisions: unknown precision '%.*s' (bf16, fp8_delayed, fp8_current, fp8_block, mxfp8, nvfp4)",
				(int)(n > 40 ? 40 : n), p);
		o->want[found] = 1;
		p += n;
		if (*p == ',')
			p++;
	}
	return 0;
}

static int parse(Opts *o, int argc, char **argv)
{
	o->iters = 20;
	o->warmup = 5;
	o->fast_accum = -1;
	o->budget = 170;
	for (int i = 0; i < BP_COUNT; i++)
		o->want[i] = 1;
	int layers_given = 0;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		long x;
		static const struct { const char *name; size_t off; } model_opts[] = {
			{"--hidden", offsetof(BenchModel, hidden)}, {"--ffn", offsetof(BenchModel, ffn)},
			{"--heads", offsetof(BenchModel, heads)}, {"--kv-heads", offsetof(BenchModel, kv_heads)},
			{"--micro-batch", offsetof(BenchModel, micro_batch)}, {"--seq", offsetof(BenchModel, seq)},
		};
		int mo = -1;
		for (int k = 0; k < (int)(sizeof model_opts / sizeof *model_opts); k++)
			if (!strcmp(a, model_opts[k].name))
				mo = k;
		if (mo >= 0) {
			if (read_long(v, 1, INT_MAX, &x))
				return usage("%s needs a positive integer%s%s", a, v ? ", got " : "", v ? v : "");
			*(long *)((char *)&o->model + model_opts[mo].off) = x;
			o->model_given = 1;
			i++;
		} else if (!strcmp(a, "--tokens") || !strcmp(a, "--layers") || !strcmp(a, "--iters") || !strcmp(a, "--warmup")) {
			long lo = !strcmp(a, "--iters") ? 10 : !strcmp(a, "--warmup") ? 0 : 1;
			long hi = !strcmp(a, "--iters") ? BENCH_MAX_ITERS : !strcmp(a, "--warmup") ? 100 : INT_MAX;
			if (read_long(v, lo, hi, &x))
				return usage("%s needs an integer in %ld..%ld%s%s", a, lo, hi, v ? ", got " : "", v ? v : "");
			if (!strcmp(a, "--tokens"))
				o->tokens = x;
			else if (!strcmp(a, "--layers")) {
				o->layers = x;
				layers_given = 1;
			} else if (!strcmp(a, "--iters"))
				o->iters = (int)x;
			else
				o->warmup = (int)x;
			i++;
		} else if (!strcmp(a, "--cooldown")) {
			char *end;
			long ms = v ? strtol(v, &end, 10) : -1;
			if (!v || *end || ms < 0 || ms > 60000)
				return usage("--cooldown needs milliseconds in 0..60000%s%s", v ? ", got " : "", v ? v : "");
			o->cooldown_ms = (int)ms;
			i++;
		} else if (!strcmp(a, "--budget")) {
			char *end;
			double b = v ? strtod(v, &end) : 0;
			if (!v || *end || !(b >= 1 && b <= 86400))
				return usage("--budget needs seconds in 1..86400%s%s", v ? ", got " : "", v ? v : "");
			o->budget = b;
			i++;
		} else if (!strcmp(a, "--shapes") || !strcmp(a, "--spec") || !strcmp(a, "--csv") || !strcmp(a, "--chart") ||
			!strcmp(a, "--cache-dir") || !strcmp(a, "--precisions") || !strcmp(a, "--fast-accum")) {
			if (!v || !*v)
				return usage("%s needs a value", a);
			i++;
			if (!strcmp(a, "--shapes"))
				o->shapes = v;
			else if (!strcmp(a, "--spec"))
				o->spec = v;
			else if (!strcmp(a, "--csv"))
				o->csv = v;
			else if (!strcmp(a, "--chart"))
				o->chart = v;
			else if (!strcmp(a, "--cache-dir"))
				o->cache_dir = v;
			else if (!strcmp(a, "--precisions")) {
				int rc = parse_precisions(o, v);
				if (rc)
					return rc;
			} else if (!strcmp(v, "auto"))
				o->fast_accum = -1;
			else if (!strcmp(v, "on"))
				o->fast_accum = 1;
			else if (!strcmp(v, "off"))
				o->fast_accum = 0;
			else
				return usage("--fast-accum is auto, on or off, not '%s'", v);
		} else if (!strcmp(a, "--no-gate")) {
			o->model.no_gate = 1;
		} else if (!strcmp(a, "--kernel-only")) {
			o->kernel_only = 1;
		} else if (!strcmp(a, "--list")) {
			o->list = 1;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(USAGE, stdout);
			return -1;
		} else {
			return usage("unknown argument '%.64s'", a);
		}
	}
	int inputs = (o->shapes != NULL) + (o->spec != NULL) + o->model_given;
	if (inputs == 0)
		return usage("give --shapes, a model (--hidden --ffn --heads --seq ...) or --spec");
	if (inputs > 1)
		return usage("give only one of --shapes, a model config, --spec");
	if (o->shapes && o->tokens)
		return usage("--tokens does not apply to --shapes (M is the first extent of each shape)");
	if (o->model.no_gate && !o->model_given)
		return usage("--no-gate applies to a model config");
	if (!layers_given)
		o->layers = 1;
	if (o->spec && !o->tokens)
		o->tokens = 8192;
	if (o->model_given)
		o->model.tokens = o->tokens;
	return 0;
}

/* Turns the input into linear layers; 0, 1 (spec error) or 2 (bad config). */
static int make_linears(Bench *B)
{
	Opts *o = &B->o;
	char err[512];
	if (o->shapes) {
		B->nlin = bench_parse_shapes(o->shapes, B->lin, BENCH_MAX_LINEARS, err, sizeof err);
		if (B->nlin < 0)
			return usage("%s", err);
		snprintf(B->source, sizeof B->source, "shapes %.280s", o->shapes);
		return 0;
	}
	if (o->model_given) {
		B->nlin = bench_model_linears(&o->model, B->lin, BENCH_MAX_LINEARS, err, sizeof err);
		if (B->nlin < 0)
			return usage("%s", err);
		const BenchModel *m = &o->model;
		long kv = m->kv_heads ? m->kv_heads : m->heads;
		char tok[96];
		if (m->tokens)
			snprintf(tok, sizeof tok, "tokens %ld", m->tokens);
		else
			snprintf(tok, sizeof tok, "tokens %ld (micro-batch %ld x seq %ld)", B->lin[0].m,
				m->micro_batch ? m->micro_batch : 1, m->seq);
		snprintf(B->source, sizeof B->source, "model: hidden %ld, ffn %ld%s, heads %ld, kv-heads %ld, %s, %ld layers",
			m->hidden, m->ffn, m->no_gate ? " (no gate)" : " (gated)", m->heads, kv, tok, o->layers);
		return 0;
	}
	Arena *a = arena_new();
	size_t len;
	char *text = cli_read_file(a, o->spec, &len);
	if (!text) {
		arena_free(a);
		return 1;
	}
	Diag *d = arena_alloc(a, sizeof *d);
	Plan *p = pipeline_plan(a, d, o->spec, text, len, cli_default_arch(), false, NULL);
	if (!p) {
		fputs(d->msg, stderr);
		arena_free(a);
		return 1;
	}
	B->nlin = bench_plan_linears(p, o->tokens, B->lin, BENCH_MAX_LINEARS, err, sizeof err);
	if (B->nlin < 0) {
		fprintf(stderr, "%s: error: %s\n", o->spec, err);
		arena_free(a);
		return 1;
	}
	snprintf(B->source, sizeof B->source, "spec %.200s (layer %.60s), tokens %ld, %ld layers", o->spec, p->g->layer,
		o->tokens, o->layers);
	arena_free(a);
	return 0;
}

static void shape_str(char *buf, size_t len, BenchDims d)
{
	snprintf(buf, len, "%ldx%ldx%ld", d.m, d.k, d.n);
}

static void print_list(const Bench *B)
{
	printf("%s\n", B->source);
	printf("%-14s %-6s %-20s %s\n", "layer", "pass", "GEMM MxKxN", "GFLOP");
	for (int p = 0; p < BENCH_NPASS; p++)
		for (int i = 0; i < B->nlin; i++) {
			char s[64];
			shape_str(s, sizeof s, bench_pass_dims(&B->lin[i], p));
			printf("%-14s %-6s %-20s %.1f\n", B->lin[i].name, bench_pass_name(p), s, bench_flops(&B->lin[i]) / 1e9);
		}
}

/* ---- measuring ---- */

static int over_budget(const Bench *B) { return cli_now_s() > B->deadline; }

static void progress(Bench *B, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void progress(Bench *B, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "tegen bench: [%d/%d %4.0fs] ", ++B->step, B->steps, cli_now_s() - B->t0);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* "gemm: FP8 needs K % 16 == 0 (K = 4100)" -> "FP8 needs K % 16 == 0 (K = 4100)" */
static const char *strip_prefix(const char *m)
{
	if (!strncmp(m, "gemm: ", 6))
		return m + 6;
	const char *e = strstr(m, "error: ");
	return e ? e + 7 : m;
}

/* Copies the first line of a message into a note (table rows are one line each). */
static void set_note(char *dst, size_t len, const char *prefix, const char *msg)
{
	snprintf(dst, len, "%s%.*s", prefix, (int)strcspn(msg, "\n"), msg);
}

static void measure_gemms(Bench *B, BenchGpu *g)
{
	char err[512];
	for (int li = 0; li < B->nlin; li++)
		for (int pass = 0; pass < BENCH_NPASS; pass++) {
			const BenchLinear *l = &B->lin[li];
			Cell *row = B->cell[li][pass];
			char shp[64];
			shape_str(shp, sizeof shp, bench_pass_dims(l, pass));
			for (int prec = 0; prec < BP_COUNT; prec++) {
				Cell *c = &row[prec];
				if (!B->o.want[prec])
					continue;
				if (prec == BP_CURRENT && B->o.want[BP_DELAYED]) { /* the same GEMM: per-tensor scale_inv pointers */
					c->have = row[BP_DELAYED].have;
					c->ms = row[BP_DELAYED].ms;
					snprintf(c->note, sizeof c->note, "%s", row[BP_DELAYED].note);
					continue;
				}
				if (prec != BP_BF16 && B->cc < 89) {
					snprintf(c->note, sizeof c->note, "FP8 needs sm_89 or newer (this GPU is sm_%d)", B->cc);
					continue;
				}
				if (over_budget(B)) {
					snprintf(c->note, sizeof c->note, "skipped: past the --budget of %.0f s", B->o.budget);
					continue;
				}
				GemmDesc d = bench_gemm_desc(l, pass, prec, B->o.fast_accum);
				int rc = bench_gemm_check(g, &d, err, sizeof err);
				if (bench_prec_blockfmt(prec) && rc == GEMM_ENOTSUP) { /* emulated: dequantize to BF16 + the BF16 GEMM */
					if (!row[BP_BF16].have) {
						snprintf(c->note, sizeof c->note, "emulated %s needs the BF16 GEMM: %s", bench_prec_name(prec),
							row[BP_BF16].note);
						continue;
					}
					c->emulated = 1;
					c->dq_ms = B->copy_gbs > 0 ? bench_dequant_bytes(l, pass, prec) / (B->copy_gbs * 1e9) * 1e3 : 0;
					c->ms = row[BP_BF16].ms + c->dq_ms;
					c->have = B->copy_gbs > 0;
					if (!c->have)
						snprintf(c->note, sizeof c->note, "emulated %s: no copy bandwidth measured", bench_prec_name(prec));
					continue;
				}
				if (rc == GEMM_OK) {
					BenchTime t;
					rc = bench_gemm(g, &d, &t, err, sizeof err);
					if (rc == GEMM_OK) {
						c->have = 1;
						c->ms = t.median;
						progress(B, "%s %-12s %-18s %-12s %8.3f ms (min %.3f, max %.3f, %d sets) %6.0f TFLOP/s",
							bench_pass_name(pass), l->name, shp, bench_prec_name(prec), t.median, t.min, t.max, t.sets,
							bench_flops(l) / t.median / 1e9);
						continue;
					}
				}
				set_note(c->note, sizeof c->note, "", strip_prefix(err));
				progress(B, "%s %-12s %-18s %-12s n/a: %s", bench_pass_name(pass), l->name, shp, bench_prec_name(prec),
					c->note);
			}
		}
}

static void measure_quant(Bench *B, BenchGpu *g, TgContext *ctx)
{
	char err[1024];
	for (int li = 0; li < B->nlin; li++)
		for (int prec = BP_DELAYED; prec < BP_COUNT; prec++) {
			const BenchLinear *l = &B->lin[li];
			if (!B->o.want[prec])
				continue;
			int any = 0;
			for (int p = 0; p < BENCH_NPASS; p++)
				any |= B->cell[li][p][prec].have;
			if (!any)
				continue;
			const char *why = NULL;
			double ms[BQ_COUNT] = {0};
			if (over_budget(B)) {
				snprintf(err, sizeof err, "skipped: past the --budget of %.0f s", B->o.budget);
				why = err;
			} else {
				Arena *a = arena_new();
				char *text = bench_quant_spec(a, l, prec);
				char *name = arena_printf(a, "bench-%s-%s.yaml", bench_prec_key(prec), l->name);
				BenchInput in[BQ_COUNT];
				const char *outs[BQ_COUNT];
				for (int i = 0; i < BQ_COUNT; i++) {
					in[i].name = bench_quant_input(l, i, &in[i].rows, &in[i].cols);
					if (!in[i].rows)
						in[i].rows = l->m;
					outs[i] = bench_quant_out(i);
				}
				if (bench_layer(g, ctx, name, text, in, BQ_COUNT, outs, BQ_COUNT, ms, err, sizeof err))
					why = strip_prefix(err);
				arena_free(a);
			}
			double per[BENCH_NPASS] = {0};
			for (int i = 0; i < BQ_COUNT; i++)
				per[bench_quant_pass(i)] += ms[i];
			for (int p = 0; p < BENCH_NPASS; p++) {
				Cell *c = &B->cell[li][p][prec];
				if (why)
					set_note(c->qnote, sizeof c->qnote, "quantize: ", why);
				else {
					c->qhave = 1;
					c->qms = per[p];
				}
			}
			if (why)
				progress(B, "quantize %-12s %-12s n/a: %s", l->name, bench_prec_name(prec), why);
			else
				progress(B, "quantize %-12s %-12s Fprop %.3f ms, Dgrad %.3f ms, Wgrad %.3f ms", l->name,
					bench_prec_name(prec), per[0], per[1], per[2]);
		}
}

/* ---- reporting ---- */

/* A time for one row of a table: one cell or a sum. */
typedef struct Agg {
	int ok;
	double ms, qms, flops;
	int emulated;
	char note[240];
} Agg;

static Agg cell_agg(const Bench *B, int li, int pass, int prec, int withq)
{
	const Cell *c = &B->cell[li][pass][prec];
	Agg a = {0};
	a.flops = bench_flops(&B->lin[li]);
	a.emulated = c->emulated;
	if (!c->have) {
		snprintf(a.note, sizeof a.note, "%s", c->note[0] ? c->note : "not measured");
		return a;
	}
	if (withq && prec != BP_BF16 && !c->qhave) {
		snprintf(a.note, sizeof a.note, "%s", c->qnote[0] ? c->qnote : "quantize not measured");
		return a;
	}
	a.ok = 1;
	a.qms = withq && prec != BP_BF16 ? c->qms : 0;
	a.ms = c->ms + a.qms;
	return a;
}

/* Sum over the layers, for one pass or (pass < 0) all three; times `times` (the model's layers). */
static Agg total_agg(const Bench *B, int pass, int prec, int withq, long times)
{
	Agg t = {0};
	int missing = 0, n = 0;
	t.ok = 1;
	for (int p = 0; p < BENCH_NPASS; p++) {
		if (pass >= 0 && p != pass)
			continue;
		for (int li = 0; li < B->nlin; li++) {
			Agg a = cell_agg(B, li, p, prec, withq);
			n++;
			t.flops += a.flops * (double)times;
			t.emulated |= a.emulated;
			if (!a.ok) {
				if (!missing)
					snprintf(t.note, sizeof t.note, "%s", a.note);
				missing++;
				continue;
			}
			t.ms += a.ms * (double)times;
			t.qms += a.qms * (double)times;
		}
	}
	if (missing) {
		char first[240];
		snprintf(first, sizeof first, "%s", t.note);
		snprintf(t.note, sizeof t.note, "%d of %d GEMMs missing (%.180s)", missing, n, first);
		t.ok = 0;
	}
	return t;
}

static const char *prec_label(const Bench *B, int prec)
{
	if (prec == BP_MXFP8)
		return B->blockfmt_emulated ? "MXFP8 emulated" : "MXFP8 native";
	if (prec == BP_NVFP4)
		return B->blockfmt_emulated ? "NVFP4 emulated" : "NVFP4 native";
	return bench_prec_name(prec);
}

static void print_header(const Bench *B, const char *c1, const char *c2)
{
	if (B->o.kernel_only)
		printf("%-12s %-18s %-15s | %8s %7s %7s\n", c1, c2, "precision", "ms", "TFLOP/s", "vs BF16");
	else {
		printf("%-12s %-18s %-15s | %-24s | %s\n", "", "", "", "       kernel-only", "      with quantization");
		printf("%-12s %-18s %-15s | %8s %7s %7s | %8s %7s %7s %8s\n", c1, c2, "precision", "ms", "TFLOP/s", "vs BF16",
			"ms", "TFLOP/s", "vs BF16", "quant ms");
	}
}

static void print_row(const Bench *B, const char *c1, const char *c2, int prec, Agg ko, Agg wq, Agg bf)
{
	printf("%-12.12s %-18.18s %-15s | ", c1, c2, prec_label(B, prec));
	if (!ko.ok) {
		printf("n/a: %s\n", ko.note);
		return;
	}
	char sp[16] = "      -";
	if (bf.ok)
		snprintf(sp, sizeof sp, "%6.2fx", bf.ms / ko.ms);
	printf("%8.3f %7.0f %7s", ko.ms, ko.flops / ko.ms / 1e9, sp);
	if (B->o.kernel_only) {
		putchar('\n');
		return;
	}
	if (!wq.ok) {
		printf(" | n/a: %s\n", wq.note);
		return;
	}
	snprintf(sp, sizeof sp, "      -");
	if (bf.ok)
		snprintf(sp, sizeof sp, "%6.2fx", bf.ms / wq.ms);
	if (prec == BP_BF16)
		printf(" | %8.3f %7.0f %7s %8s\n", wq.ms, wq.flops / wq.ms / 1e9, sp, "-");
	else
		printf(" | %8.3f %7.0f %7s %8.3f\n", wq.ms, wq.flops / wq.ms / 1e9, sp, wq.qms);
}

static void print_tables(const Bench *B)
{
	static const char *const what[] = {
		"Y[M,N] = X[M,K] W[N,K]^T: A = X rowwise, B = W rowwise",
		"dX[M,N] = dY[M,K] W[K,N]: A = dY rowwise, B = W columnwise (W^T); M tokens, K out, N in",
		"dW[M,N] = dY^T[M,K] X[K,N]: A = dY columnwise, B = X columnwise; M out, K tokens, N in",
	};
	for (int pass = 0; pass < BENCH_NPASS; pass++) {
		printf("\n%s  (%s)\n", bench_pass_name(pass), what[pass]);
		print_header(B, "layer", "GEMM MxKxN");
		for (int li = 0; li < B->nlin; li++) {
			char shp[64];
			shape_str(shp, sizeof shp, bench_pass_dims(&B->lin[li], pass));
			Agg bf = cell_agg(B, li, pass, BP_BF16, 0);
			int first = 1;
			for (int prec = 0; prec < BP_COUNT; prec++) {
				if (!B->o.want[prec])
					continue;
				print_row(B, first ? B->lin[li].name : "", first ? shp : "", prec, cell_agg(B, li, pass, prec, 0),
					cell_agg(B, li, pass, prec, 1), bf);
				first = 0;
			}
		}
	}
	printf("\nTotals (sums of the GEMMs above; TFLOP/s = their FLOP / their time)\n");
	print_header(B, "scope", "TFLOP");
	for (int scope = 0; scope <= BENCH_NPASS + 1; scope++) {
		int pass = scope < BENCH_NPASS ? scope : -1;
		long times = scope == BENCH_NPASS + 1 ? B->o.layers : 1;
		char name[32], fl[32];
		if (scope < BENCH_NPASS)
			snprintf(name, sizeof name, "%s", bench_pass_name(scope));
		else if (scope == BENCH_NPASS)
			snprintf(name, sizeof name, "layer");
		else
			snprintf(name, sizeof name, "model x%ld", B->o.layers);
		Agg bf = total_agg(B, pass, BP_BF16, 0, times);
		snprintf(fl, sizeof fl, "%.3f", bf.flops / 1e12);
		int first = 1;
		for (int prec = 0; prec < BP_COUNT; prec++) {
			if (!B->o.want[prec])
				continue;
			print_row(B, first ? name : "", first ? fl : "", prec, total_agg(B, pass, prec, 0, times),
				total_agg(B, pass, prec, 1, times), bf);
			first = 0;
		}
	}
}

static void csv_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static void csv_row(FILE *f, const Bench *B, const char *scope, const char *pass, const char *name, const BenchDims *d,
	int prec, int withq, Agg a, Agg bf)
{
	fprintf(f, "%s,%s,", scope, pass);
	csv_str(f, name);
	if (d)
		fprintf(f, ",%ld,%ld,%ld", d->m, d->k, d->n);
	else
		fprintf(f, ",,,");
	fprintf(f, ",%s,%s,", bench_prec_key(prec), withq ? "with_quant" : "kernel_only");
	if (a.ok)
		fprintf(f, "%.6f,%.3f,", a.ms, a.flops / a.ms / 1e9);
	else
		fprintf(f, ",,");
	if (a.ok && bf.ok)
		fprintf(f, "%.4f", bf.ms / a.ms);
	fprintf(f, ",");
	if (a.ok)
		fprintf(f, "%.6f", a.qms);
	fprintf(f, ",%d,", bench_prec_blockfmt(prec) && (a.emulated || B->blockfmt_emulated));
	csv_str(f, a.ok ? "" : a.note);
	fputc('\n', f);
}

static int write_csv(const Bench *B, const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "tegen bench: cannot write %s: %s\n", path, strerror(errno));
		return 1;
	}
	fprintf(f, "scope,pass,name,m,k,n,precision,mode,ms,tflops,speedup_vs_bf16,quant_ms,emulated,note\n");
	int modes = B->o.kernel_only ? 1 : 2;
	for (int pass = 0; pass < BENCH_NPASS; pass++)
		for (int li = 0; li < B->nlin; li++) {
			BenchDims d = bench_pass_dims(&B->lin[li], pass);
			for (int w = 0; w < modes; w++) {
				Agg bf = cell_agg(B, li, pass, BP_BF16, w);
				for (int prec = 0; prec < BP_COUNT; prec++)
					if (B->o.want[prec])
						csv_row(f, B, "gemm", bench_pass_name(pass), B->lin[li].name, &d, prec, w,
							cell_agg(B, li, pass, prec, w), bf);
			}
		}
	for (int scope = 0; scope <= BENCH_NPASS + 1; scope++) {
		int pass = scope < BENCH_NPASS ? scope : -1;
		long times = scope == BENCH_NPASS + 1 ? B->o.layers : 1;
		const char *sc = scope < BENCH_NPASS ? "pass_total" : scope == BENCH_NPASS ? "layer_total" : "model_total";
		char name[32];
		snprintf(name, sizeof name, "x%ld", times);
		for (int w = 0; w < modes; w++) {
			Agg bf = total_agg(B, pass, BP_BF16, w, times);
			for (int prec = 0; prec < BP_COUNT; prec++)
				if (B->o.want[prec])
					csv_row(f, B, sc, pass >= 0 ? bench_pass_name(pass) : "all", name, NULL, prec, w,
						total_agg(B, pass, prec, w, times), bf);
		}
	}
	if (fclose(f)) {
		fprintf(stderr, "tegen bench: cannot write %s: %s\n", path, strerror(errno));
		return 1;
	}
	fprintf(stderr, "tegen bench: wrote %s\n", path);
	return 0;
}

static void xml_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '&')
			fputs("&amp;", f);
		else if (*s == '<')
			fputs("&lt;", f);
		else if (*s == '>')
			fputs("&gt;", f);
		else
			fputc(*s, f);
	}
}

/* A grouped bar chart: one panel per mode, groups Fprop/Dgrad/Wgrad/layer, one bar per
 * FP8 precision, height = speedup of the totals over BF16; a dashed line marks BF16 = 1. */
static int write_chart(const Bench *B, const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "tegen bench: cannot write %s: %s\n", path, strerror(errno));
		return 1;
	}
	static const char *const color[BP_COUNT] = {"#888888", "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd"};
	static const char *const group[] = {"Fprop", "Dgrad", "Wgrad", "Layer (all passes)"};
	int precs[BP_COUNT], np = 0;
	for (int p = 1; p < BP_COUNT; p++)
		if (B->o.want[p])
			precs[np++] = p;
	int modes = B->o.kernel_only ? 1 : 2;
	double sp[2][4][BP_COUNT];
	int ok[2][4][BP_COUNT];
	double ymax = 1.0;
	for (int w = 0; w < modes; w++)
		for (int gi = 0; gi < 4; gi++) {
			Agg bf = total_agg(B, gi < 3 ? gi : -1, BP_BF16, w, 1);
			for (int k = 0; k < np; k++) {
				Agg a = total_agg(B, gi < 3 ? gi : -1, precs[k], w, 1);
				ok[w][gi][k] = a.ok && bf.ok;
				sp[w][gi][k] = ok[w][gi][k] ? bf.ms / a.ms : 0;
				if (sp[w][gi][k] > ymax)
					ymax = sp[w][gi][k];
			}
		}
	ymax = ceil(ymax * 1.15 * 2) / 2; /* headroom, to a multiple of 0.5 */
	const int W = 960, PH = 360, top = 96, left = 70, right = 20, pb = 50;
	int H = top + modes * (PH + pb) + 10;
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		"font-family=\"Helvetica, Arial, sans-serif\" font-size=\"12\">\n", W, H, W, H);
	fprintf(f, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", W, H);
	fprintf(f, "<text x=\"%d\" y=\"22\" font-size=\"16\" font-weight=\"bold\">GEMM speedup over BF16 (tegen bench)</text>\n",
		left);
	fprintf(f, "<text x=\"%d\" y=\"40\" fill=\"#444\">", left);
	xml_text(f, B->device);
	fprintf(f, "</text>\n<text x=\"%d\" y=\"56\" fill=\"#444\">", left);
	xml_text(f, B->source);
	fprintf(f, "</text>\n");
	for (int k = 0; k < np; k++) { /* legend: one row under the titles */
		int lx = left + 170 * k, ly = 68;
		fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>", lx, ly, color[precs[k]]);
		fprintf(f, "<text x=\"%d\" y=\"%d\">%s</text>\n", lx + 18, ly + 11, prec_label(B, precs[k]));
	}
	double pw = W - left - right;
	for (int w = 0; w < modes; w++) {
		int y0 = top + w * (PH + pb) + 20, y1 = y0 + PH - 40; /* plot area: y0 (ymax) .. y1 (0) */
		fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"14\" font-weight=\"bold\">%s</text>\n", left, y0 - 6,
			w ? "with quantization (GEMM + the quantize kernels of its operands)" : "kernel-only (GEMM alone)");
		for (double v = 0; v <= ymax + 1e-9; v += 0.5) {
			double y = y1 - (y1 - y0) * v / ymax;
			fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>", left, W - right, y, y);
			fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.1fx</text>\n", left - 6, y + 4, v);
		}
		double y1x = y1 - (y1 - y0) * 1.0 / ymax;
		fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#333\" stroke-dasharray=\"6 4\"/>", left,
			W - right, y1x, y1x);
		fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" fill=\"#333\">BF16 = 1.0x</text>\n", W - right - 4,
			y1x - 4);
		double gw = pw / 4, bw = np ? (gw * 0.7) / np : 0;
		for (int gi = 0; gi < 4; gi++) {
			double gx = left + gi * gw + gw * 0.15;
			for (int k = 0; k < np; k++) {
				double x = gx + k * bw;
				if (!ok[w][gi][k]) {
					fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" fill=\"#999\">n/a</text>\n",
						x + bw / 2, y1 - 4);
					continue;
				}
				double h = (y1 - y0) * sp[w][gi][k] / ymax;
				fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>", x + 1, y1 - h,
					bw - 2, h, color[precs[k]]);
				fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"11\">%.2fx</text>\n",
					x + bw / 2, y1 - h - 4, sp[w][gi][k]);
			}
			fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" font-size=\"13\">%s</text>\n", gx + np * bw / 2,
				y1 + 18, group[gi]);
		}
		fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"#333\"/>\n", left, W - right, y1, y1);
	}
	fprintf(f, "</svg>\n");
	if (fclose(f)) {
		fprintf(stderr, "tegen bench: cannot write %s: %s\n", path, strerror(errno));
		return 1;
	}
	fprintf(stderr, "tegen bench: wrote %s\n", path);
	return 0;
}

static void log_to_stderr(void *user, const char *msg)
{
	(void)user;
	fprintf(stderr, "tegen bench: %s\n", msg);
}

int cmd_bench(int argc, char **argv)
{
	Bench *B = calloc(1, sizeof *B);
	if (!B) {
		fprintf(stderr, "tegen bench: out of memory\n");
		return 1;
	}
	int rc = parse(&B->o, argc, argv);
	if (rc) {
		free(B);
		return rc < 0 ? 0 : rc;
	}
	if ((rc = make_linears(B))) {
		free(B);
		return rc;
	}
	if (B->o.list) {
		print_list(B);
		free(B);
		return 0;
	}
	B->t0 = cli_now_s();
	B->deadline = B->t0 + B->o.budget;
	BenchGpu *g = NULL;
	char why[512];
	if (bench_gpu_open(B->o.iters, B->o.warmup, &g, why, sizeof why)) {
		fprintf(stderr, "tegen bench: needs a GPU (%s)\n", why);
		free(B);
		return 1;
	}
	bench_gpu_describe(g, B->device, sizeof B->device);
	bench_gpu_set_cooldown(g, B->o.cooldown_ms);
	B->cc = bench_gpu_cc(g);
	B->blockfmt_emulated = B->cc < 100;
	TgContext *ctx = NULL;
	if (!B->o.kernel_only) {
		TgOptions opt = {.cache_dir = B->o.cache_dir, .log = log_to_stderr};
		if (tg_context_create(&opt, &ctx)) {
			fprintf(stderr, "tegen bench: %s\n", tg_last_error());
			bench_gpu_close(g);
			free(B);
			return 1;
		}
	}
	int ngemm = 0, nq = 0;
	for (int p = 1; p < BP_COUNT; p++)
		nq += B->o.want[p];
	for (int p = 0; p < BP_COUNT; p++)
		ngemm += B->o.want[p] && !(p == BP_CURRENT && B->o.want[BP_DELAYED]) && !(bench_prec_blockfmt(p) && B->blockfmt_emulated);
	B->steps = B->nlin * BENCH_NPASS * ngemm + (B->o.kernel_only ? 0 : B->nlin * nq);
	fprintf(stderr, "tegen bench: %s; %s; %d GEMMs and %d quantize layers to time (budget %.0f s)\n", B->device,
		B->source, B->nlin * BENCH_NPASS * ngemm, B->o.kernel_only ? 0 : B->nlin * nq, B->o.budget);
	char err[512];
	if ((B->o.want[BP_MXFP8] || B->o.want[BP_NVFP4]) && B->blockfmt_emulated && B->cc >= 89) {
		if (bench_copy_bandwidth(g, &B->copy_gbs, err, sizeof err))
			fprintf(stderr, "tegen bench: copy bandwidth: %s\n", err);
		else
			fprintf(stderr, "tegen bench: copy bandwidth %.0f GB/s (for the emulated MXFP8/NVFP4 dequantize estimate)\n",
				B->copy_gbs);
	}
	measure_gemms(B, g);
	if (!B->o.kernel_only)
		measure_quant(B, g, ctx);
	double took = cli_now_s() - B->t0;

	printf("tegen bench on %s\n%s\n", B->device, B->source);
	printf("method: median of %d runs after %d warm-up runs, CUDA events, operands rotated over >= 3x L2, random data, "
		"BF16 output%s; took %.1f s\n", B->o.iters, B->o.warmup,
		B->o.cooldown_ms ? ", the GPU idle before each GEMM (--cooldown)" : "", took);
	printf("FP8 delayed/current: per-tensor, HYBRID (E4M3 X and W, E5M2 dY), fast accumulation %s; kernel-only they are "
		"the same GEMM\n", B->o.fast_accum < 0 ? "in fprop only (TE default)" : B->o.fast_accum ? "on" : "off");
	printf("FP8 block: E4M3, 1x128 activations/gradients x 128x128 weights (wgrad 1x128 x 1x128), no fast accumulation\n");
	if (B->blockfmt_emulated)
		printf("MXFP8, NVFP4: emulated on sm_%d = BF16 GEMM + dequantize estimated from its bytes (FP8 + E8M0 per 32, "
			"or E2M1 + E4M3 per 16, in; BF16 out; both operands) at the copy bandwidth %.0f GB/s\n", B->cc, B->copy_gbs);
	else
		printf("MXFP8: native (E4M3, E8M0 scales per 32, swizzled); NVFP4: native (E2M1, E4M3 scales per 16, "
			"per-tensor S_enc in alpha)\n");
	if (!B->o.kernel_only)
		printf("with quantization: + tegen's generated kernels quantizing what each pass reads (fprop: X, W rowwise; "
			"dgrad: dY rowwise, W columnwise; wgrad: dY, X columnwise); delayed fuses the amax, current adds an amax "
			"pass; medians per kernel, summed\n");
	print_tables(B);
	int measured = 0;
	for (int li = 0; li < B->nlin; li++)
		for (int p = 0; p < BENCH_NPASS; p++)
			measured += B->cell[li][p][BP_BF16].have;
	rc = measured ? 0 : 1;
	if (over_budget(B))
		fprintf(stderr, "tegen bench: the --budget of %.0f s ran out; later measurements were skipped\n", B->o.budget);
	if (B->o.csv && write_csv(B, B->o.csv))
		rc = 1;
	if (B->o.chart && write_chart(B, B->o.chart))
		rc = 1;
	if (ctx)
		tg_context_destroy(ctx);
	bench_gpu_close(g);
	free(B);
	return rc;
}
