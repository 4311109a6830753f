/* commands.c: the CLI subcommands past the front end: plan, emit, build
 * (the main job), cache, run. main.c parses the command line and dispatches
 * here. Each command returns the process exit code: 0 ok, 1 failure (spec,
 * compile, check), 2 bad usage. Output is deterministic where the stage is
 * (plan, emit); build prints one row per kernel and arch. */
#include "commands.h"

#include "cache.h"
#include "check.h"
#include "cold_time.h"
#include "cli.h"
#include "cpu_run.h"
#include "cudrv.h"
#include "jit.h"
#include "npy.h"
#include "pipeline.h"
#include "refrun.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <time.h>

int cli_archs(Arena *a, const char *list, const char **out)
{
	int n = 0, count = 1;
	for (const char *p = list; *p; p++)
		count += *p == ',';
	if (count > CLI_MAX_ARCHS) {
		fprintf(stderr, "tegen: --arch: %d architectures; at most %d\n", count, CLI_MAX_ARCHS);
		return -1;
	}
	const char *why = NULL, *bad = "";
	for (const char *p = list;; p++) {
		const char *e = strchr(p, ',');
		char *tok = arena_strndup(a, p, e ? (size_t)(e - p) : strlen(p));
		if (!*tok)
			why = "an empty architecture in the list; write e.g. --arch sm_90a,sm_100a";
		else if (!arch_known(tok))
			why = "is not a target tegen knows (sm_80, sm_86, sm_89, sm_90, sm_90a, sm_100, sm_100a, sm_103a, sm_120, "
				"sm_120a)", bad = tok;
		for (int i = 0; i < n && !why; i++)
			if (!strcmp(out[i], tok))
				why = "is listed twice", bad = tok;
		if (why) {
			fprintf(stderr, "tegen: --arch: %s%.64s%s%s\n", *bad ? "'" : "", bad, *bad ? "' " : "", why);
			return -1;
		}
		out[n++] = tok;
		if (!e)
			return n;
		p = e;
	}
}

int cmd_plan(int argc, char **argv)
{
	const char *spec = NULL, *cachedir = NULL;
	long tokens = 0;
	const CliFlag flags[] = {{"--tokens", FLAG_TOKENS, &tokens, 0}, {"--cache-dir", FLAG_STRING, &cachedir, 0}};
	const CliArgs args = {"usage: tegen plan SPEC [--tokens N] [--cache-dir DIR]\n", flags, 2, &spec, true, true};
	if (cli_parse(&args, argc, argv))
		return 2;
	Arena *a = arena_new();
	const Plan *p = cli_load_plan(a, spec, cli_plan_options(a, cachedir, tokens));
	int rc = 1;
	if (p && !cli_static_tokens(p->g, spec, tokens)) {
		Buf b = {0};
		plan_print(p, &b);
		fputs(b.p, stdout);
		buf_free(&b);
		rc = 0;
	}
	arena_free(a);
	return rc;
}

int cmd_emit(int argc, char **argv)
{
	const char *spec = NULL, *dir = NULL;
	const CliFlag flags[] = {{"-o", FLAG_STRING, &dir, 0}};
	const CliArgs args = {"usage: tegen emit SPEC [-o DIR]\n", flags, 1, &spec, true, false};
	if (cli_parse(&args, argc, argv))
		return 2;
	Arena *a = arena_new();
	const Plan *p = cli_load_plan(a, spec, cli_plan_options(a, NULL, 0));
	int rc = p ? 0 : 1;
	if (dir && p && cli_make_dir(dir) != 0)
		rc = 1;
	KernelSource *src = NULL;
	Diag d = {0};
	int n = p && !rc ? pipeline_emit(a, &d, p, &src) : 0;
	if (n < 0) {
		fputs(d.msg, stderr);
		rc = 1;
	}
	for (int i = 0; i < n; i++) {
		if (!dir) {
			fputs(src[i].code, stdout);
			continue;
		}
		char *path = arena_printf(a, "%s/%s.cu", dir, src[i].entry);
		FILE *f = fopen(path, "w");
		int bad = !f || fputs(src[i].code, f) < 0;
		if (f && fclose(f) != 0)
			bad = 1;
		if (bad) {
			fprintf(stderr, "tegen: cannot write %s: %s\n", path, strerror(errno));
			rc = 1;
			break;
		}
		printf("%s\n", path);
	}
	arena_free(a);
	return rc;
}

/* Totals of a build over its targets. */
typedef struct BuildTotals { int builds, compiled, spills; } BuildTotals;

/* One target of `tegen build`: the plan the runtime makes on a GPU of that arch (pipeline_plan, arch_only: a spec
 * that also targets sm_90a plans its MXFP8/NVFP4 GEMMs emulated, but on an sm_100a GPU the runtime plans them native,
 * with other kernels), emitted and compiled for it into the cache, a row per kernel. 0, or 1 (message printed). */
static int build_arch(Arena *a, const char *spec, const char *text, size_t len, Arch arch, const PlanOptions *o,
	JitCache *jc, int quiet, BuildTotals *t)
{
	Diag d = {0};
	const Plan *p = pipeline_plan(a, &d, spec, text, len, arch, true, o);
	KernelSource *ks = NULL;
	int n = p ? pipeline_emit(a, &d, p, &ks) : -1;
	if (n < 0) {
		fputs(d.msg, stderr);
		return 1;
	}
	const char *as = arch_str(a, arch), *archs[1] = {as};
	const char *const *hn, *const *ht;
	int nh = emit_headers(&hn, &ht);
	JitSource *src = arena_alloc(a, sizeof *src * (size_t)(n + 1));
	for (int i = 0; i < n; i++)
		src[i] = (JitSource){ks[i].entry, ks[i].code, ks[i].file, nh, hn, ht};
	char err[16384] = "";
	JitResult *res = arena_alloc(a, sizeof *res * (size_t)(n + 1));
	int rc = n ? jit_compile_many(jc, src, n, archs, 1, NULL, 0, res, 0, err, sizeof err) : 0;
	for (int i = 0; i < n; i++) {
		const JitResult *r = &res[i];
		if (!r->cubin)
			continue;
		t->builds++;
		t->spills += r->spill_stores + r->spill_loads > 0;
		t->compiled += r->cache_hit == 0;
		const Kernel *k = &p->kernels[ks[i].kernel];
		if (!quiet) {
			char regs[16] = "-", smem[32] = "-", sp[16] = "-";
			if (r->regs >= 0)
				snprintf(regs, sizeof regs, "%d", r->regs);
			if (r->smem_static >= 0 && k->smem_dynamic > 0) /* static + the launch's dynamic bytes */
				snprintf(smem, sizeof smem, "%d+%d", r->smem_static, k->smem_dynamic);
			else if (r->smem_static >= 0)
				snprintf(smem, sizeof smem, "%d", r->smem_static);
			if (r->spill_stores >= 0 && r->spill_loads >= 0)
				snprintf(sp, sizeof sp, "%d", r->spill_stores + r->spill_loads);
			printf("%-34s %-8s %5s %11s %6s %7.1fms  %-12s  %s (%s)\n", k->name, as, regs, smem, sp, r->compile_ms,
				r->cache_hit == 0 ? "miss" : r->cache_hit == 1 ? "hit (memory)" : "hit (disk)",
				k->variant ? k->variant : "-", k->choice ? k->choice : "-");
		}
		if (r->log)
			fprintf(stderr, "tegen: NVRTC warnings for %s on %s:\n%s\n", k->name, as, r->log);
	}
	for (int i = 0; i < p->nkernels && !quiet; i++)
		if (p->kernels[i].kind == KERNEL_GEMM && !p->kernels[i].tmpl)
			printf("%-34s %-8s %s\n", p->kernels[i].name, as, "cuBLASLt call (no code generated)");
	if (rc)
		fprintf(stderr, "%s\n", err);
	return rc ? 1 : 0;
}

/* The main job: check the spec for every target, then per target plan, emit and NVRTC-compile what the runtime
 * runs on a GPU of it. */
int cmd_build(int argc, char **argv)
{
	const char *spec = NULL, *archlist = NULL, *cachedir = NULL;
	int quiet = 0;
	long tokens = 0; /* the row bucket for tuned variants (this GPU's DB) */
	const CliFlag flags[] = {{"--arch", FLAG_STRING, &archlist, 0}, {"--tokens", FLAG_TOKENS, &tokens, 0},
		{"--cache-dir", FLAG_STRING, &cachedir, 0}, {"-q", FLAG_SWITCH, &quiet, 1}};
	const CliArgs args = {"usage: tegen build SPEC [--arch sm_90a,sm_100a] [--tokens N] [--cache-dir DIR] [-q]\n", flags, 4,
		&spec, true, false};
	if (cli_parse(&args, argc, argv))
		return 2;
	Arena *a = arena_new();
	double t0 = 1e3 * cli_now_s();
	/* targets: --arch replaces the spec's (and is checked like them) */
	const char *archs[CLI_MAX_ARCHS];
	int narch = archlist ? cli_archs(a, archlist, archs) : 0;
	if (narch < 0) {
		arena_free(a);
		return 2;
	}
	const PlanOptions *o = cli_plan_options(a, cachedir, tokens);
	const Plan *p = narch ? cli_load_plan_targets(a, spec, archs, narch, o) : cli_load_plan(a, spec, o);
	if (!p || cli_static_tokens(p->g, spec, tokens)) {
		arena_free(a);
		return 1;
	}
	const Graph *g = p->g;
	size_t len = 0;
	const char *text = cli_read_file(a, spec, &len);
	char warn[512] = "";
	JitCache *jc = text ? jit_cache_open(cachedir, 0, warn, sizeof warn) : NULL;
	if (!jc) {
		if (text)
			fprintf(stderr, "tegen: cannot open the kernel cache\n");
		arena_free(a);
		return 1;
	}
	if (warn[0])
		fprintf(stderr, "tegen: warning: %s\n", warn);
	if (!quiet)
		printf("%-34s %-8s %5s %11s %6s %9s  %-12s  %s\n", "kernel", "arch", "regs", "smem", "spills", "compile", "cache",
			"variant");
	BuildTotals t = {0, 0, 0};
	int rc = 0;
	for (int i = 0; i < g->ntargets && !rc; i++)
		rc = build_arch(a, spec, text, len, g->targets[i], o, jc, quiet, &t);
	double t1 = 1e3 * cli_now_s();
	if (!rc)
		printf("%s: %d kernel builds over %d archs, %d compiled, %d from cache, %.0f ms%s\n", g->layer, t.builds,
			g->ntargets, t.compiled, t.builds - t.compiled, t1 - t0, t.spills ? ", SPILLS" : "");
	jit_cache_close(jc);
	arena_free(a);
	return rc ? 1 : 0;
}

static void list_entry(void *ud, const CacheMeta *m, long long bytes, time_t mtime)
{
	char when[32];
	strftime(when, sizeof when, "%Y-%m-%d %H:%M", localtime(&mtime));
	printf("%.16s  %-40s %-8s %8lld  %s\n", m->key, m->name, m->arch, bytes, when);
	(*(int *)ud)++;
}

static void bad_entry(void *ud, const char *key, const char *why)
{
	printf("bad %.16s: %s\n", key, why);
}

int cmd_cache(int argc, char **argv)
{
	static const char usage[] = "usage: tegen cache ls|clear|verify [--cache-dir DIR]\n";
	const char *verb = argc > 0 ? argv[0] : NULL, *dir = NULL;
	const CliFlag flags[] = {{"--cache-dir", FLAG_STRING, &dir, 0}};
	const CliArgs args = {usage, flags, 1, NULL, false, true};
	if (!verb || (strcmp(verb, "ls") && strcmp(verb, "clear") && strcmp(verb, "verify")))
		return cli_usage(usage);
	if (cli_parse(&args, argc - 1, argv + 1))
		return 2;
	char path[4096];
	if (cache_dir_resolve(dir, path, sizeof path)) {
		fprintf(stderr, "tegen: no cache directory (set TEGEN_CACHE_DIR)\n");
		return 1;
	}
	char err[512];
	if (!strcmp(verb, "ls")) {
		int n = 0;
		if (cache_list(path, list_entry, &n) < 0) {
			fprintf(stderr, "tegen: cache dir %s: %s\n", path, strerror(errno));
			return 1;
		}
		printf("%s: %d entries\n", path, n);
		return 0;
	}
	if (!strcmp(verb, "clear")) {
		int removed = 0;
		if (cache_clear(path, &removed, err, sizeof err)) {
			fprintf(stderr, "tegen: %s\n", err);
			return 1;
		}
		printf("%s: removed %d entries\n", path, removed);
		return 0;
	}
	int removed = 0, bad = cache_verify(path, 1, &removed, bad_entry, NULL);
	if (bad < 0) {
		fprintf(stderr, "tegen: cache dir %s: %s\n", path, strerror(errno));
		return 1;
	}
	printf("%s: %d bad entries%s\n", path, bad,
		bad == 0 ? "" : removed == bad ? " (removed)" : removed ? " (some could not be removed)" : " (none removed)");
	return bad > 0 ? 1 : 0;
}

/* Write every component of the layer's outputs as .npy files into dir. */
static int write_outputs(TgLayer *l, const char *dir)
{
	const Graph *g = tg_layer_plan(l)->g;
	if (cli_make_dir(dir) != 0)
		return -1;
	for (int i = 0; i < g->ntensors; i++) {
		const Tensor *t = &g->tensors[i];
		if (!t->output)
			continue;
		for (int c = COMP_DATA; c < COMP_COUNT; c++) {
			if (!refrun_writes_component(c))
				continue;
			void *dp, *h;
			size_t bytes;
			if (tg_layer_tensor_component(l, i, (Component)c, &dp, &bytes) || !bytes)
				continue;
			if (tg_layer_download(l, i, (Component)c, &h, &bytes)) {
				fprintf(stderr, "tegen: cannot read %s.%s from the GPU: %s\n", t->name, comp_name(c), tg_last_error());
				return -1;
			}
			int rc = refrun_write_file(dir, t, (Component)c, h, bytes);
			free(h);
			if (rc)
				return -1;
		}
	}
	return 0;
}

/* The same whole layer captured once in a CUDA graph (tg_run and tg_backward are capture-safe)
 * and replayed: no host launch gaps. Events around each replay, median of iters. */
static void print_graph_time(TgLayer *l, bool bwd, int iters)
{
	CUstream s = NULL;
	void *graph = NULL, *exec = NULL;
	CUevent e[2] = {NULL, NULL};
	float *t = calloc((size_t)iters, sizeof *t);
	bool ok = t && !cu.cuStreamCreate(&s, 1 /* non-blocking */) && !cu.cuEventCreate(&e[0], 0) &&
		!cu.cuEventCreate(&e[1], 0) && !cu.cuStreamBeginCapture_v2(s, 2 /* relaxed */);
	if (ok) {
		bool run = !tg_run(l, s) && (!bwd || !tg_backward(l, s));
		ok = !cu.cuStreamEndCapture(s, &graph) && run && !cu.cuGraphInstantiateWithFlags(&exec, graph, 0);
	}
	for (int it = -2; it < iters && ok; it++) {
		ok = !cu.cuEventRecord(e[0], s) && !cu.cuGraphLaunch(exec, s) && !cu.cuEventRecord(e[1], s) &&
		     !cu.cuEventSynchronize(e[1]);
		if (ok && it >= 0)
			cu.cuEventElapsedTime(&t[it], e[0], e[1]);
	}
	if (ok)
		printf("%-30s %-16s %10.1f  (the same, captured in a CUDA graph and replayed, median of %d)\n", "whole layer (graph)",
			"", timing_median(t, iters) * 1000, iters);
	else
		fprintf(stderr, "tegen: whole-layer graph timing failed (%s)\n", tg_last_error());
	if (exec)
		cu.cuGraphExecDestroy(exec);
	if (graph)
		cu.cuGraphDestroy(graph);
	for (int i = 0; i < 2; i++)
		if (e[i])
			cu.cuEventDestroy_v2(e[i]);
	if (s)
		cu.cuStreamDestroy_v2(s);
	free(t);
}

/* One run of the whole layer as a program runs it: CUDA events around tg_run (and tg_backward
 * where the layer has a backward phase) back to back on the NULL stream, L2 warm; fwd and bwd in ms.
 * This is the number to compare with a framework's step. */
static bool whole_once(TgLayer *l, bool bwd, CUevent *e, float *fwd, float *back)
{
	bool ok = !cu.cuEventRecord(e[0], NULL) && !tg_run(l, NULL) && !cu.cuEventRecord(e[1], NULL) &&
		(!bwd || !tg_backward(l, NULL)) && !cu.cuEventRecord(e[2], NULL) && !cu.cuEventSynchronize(e[2]);
	if (ok) {
		cu.cuEventElapsedTime(fwd, e[0], e[1]);
		cu.cuEventElapsedTime(back, e[1], e[2]);
	}
	return ok;
}

/* Timing for `tegen run`: iters rounds (after two warm-up rounds), each one whole-layer run
 * (whole_once) and one tg_run_timed run, interleaved so that both see the GPU in the same state
 * (clocks and power drift over seconds); then the kernel table (each kernel's median share of the
 * run; for generated kernels the median alone from a cold L2, after cooldown_ms of an idle GPU, and a
 * device copy of as many bytes timed the same way), the whole layer, its graph. */
static void print_times(TgContext *ctx, TgLayer *l, const Plan *p, int iters, int cooldown_ms)
{
	bool bwd = plan_has_phase(p, PHASE_BACKWARD);
	int nk = tg_layer_kernel_count(l);
	float *ms = calloc((size_t)nk * (size_t)iters, sizeof *ms), *one = calloc((size_t)nk, sizeof *one);
	float *t = calloc((size_t)iters * 4, sizeof *t), *sum = t + 2 * iters, *whole = t + 3 * iters;
	CUevent e[3] = {NULL, NULL, NULL};
	bool ok = ms && one && t && !cu.cuEventCreate(&e[0], 0) && !cu.cuEventCreate(&e[1], 0) && !cu.cuEventCreate(&e[2], 0);
	for (int it = -2; it < iters && ok; it++) {
		float f = 0, b = 0;
		ok = whole_once(l, bwd, e, &f, &b) && !tg_run_timed(l, NULL, one, nk);
		if (!ok || it < 0)
			continue;
		t[it] = f;
		t[iters + it] = b;
		whole[it] = f + b;
		sum[it] = 0;
		for (int k = 0; k < nk; k++) {
			ms[(size_t)k * iters + it] = one[k];
			sum[it] += one[k];
		}
	}
	if (!ok)
		fprintf(stderr, "tegen: timing: %s\n", tg_last_error());
	else {
		if (cooldown_ms > 0) { /* the layer's GEMMs leave the SM clock low for a while; the kernels alone start cool */
			struct timespec ts = {cooldown_ms / 1000, (long)(cooldown_ms % 1000) * 1000000L};
			nanosleep(&ts, NULL);
		}
		printf("%-30s %-16s %10s %10s %8s %8s %6s\n", "kernel", "variant", "in layer", "alone", "GB/s", "copy",
			"%copy");
		for (int k = 0; k < nk; k++) {
			if (k == p->update_kernel)
				continue;
			const Kernel *kk = &p->kernels[k];
			if (tg_layer_kernel_skipped(l, k)) {
				if (kk->epilogue_of >= 0)
					printf("%-30s %-16s %10s  (in %s's epilogue)\n", kk->name, kk->variant, "-",
						p->kernels[kk->epilogue_of].name);
				else
					printf("%-30s %-16s %10s  (weight cast cached: --cache-weights)\n", kk->name, kk->variant, "-");
				continue;
			}
			float in_layer = timing_median(ms + (size_t)k * iters, iters) * 1000, us = 0;
			double bytes = 0;
			char alone[32] = "-", gbs[32] = "", copy[32] = "", pct[32] = "";
			float copy_us = 0; /* a copy moving the kernel's bytes: read half, write half */
			if (kk->kind == KERNEL_GENERATED && !tg_layer_time_kernel(l, k, NULL, NULL, iters, &us, &bytes) && us > 0) {
				snprintf(alone, sizeof alone, "%.1f", us);
				snprintf(gbs, sizeof gbs, "%.0f", bytes / us / 1e3);
				if (bytes >= 2 && !tg_context_time_copy(ctx, (size_t)(bytes / 2), iters, &copy_us) && copy_us > 0) {
					snprintf(copy, sizeof copy, "%.0f", bytes / copy_us / 1e3);
					snprintf(pct, sizeof pct, "%.0f", 100.0 * copy_us / us);
				}
			}
			printf("%-30s %-16s %10.1f %10s %8s %8s %6s\n", kk->name,
				kk->kind == KERNEL_GEMM ? tg_layer_gemm_backend(l, k) : kk->variant, in_layer, alone, gbs, copy, pct);
		}
		float sm = timing_median(sum, iters) * 1000;
		printf("%-30s %-16s %10.1f  (in layer: each kernel's start to the next one's, summed per run; "
			"min %.1f, max %.1f)\n", "kernels, per run", "", sm, sum[0] * 1000, sum[iters - 1] * 1000);
		for (int k = 0; k < nk; k++) {
			char what[400];
			if (p->kernels[k].kind == KERNEL_GEMM && !tg_layer_gemm_choice(l, k, what, sizeof what))
				printf("%s cuBLASLt: %s\n", p->kernels[k].name, what);
		}
		float w = timing_median(whole, iters) * 1000, f = timing_median(t, iters) * 1000;
		float b = bwd ? timing_median(t + iters, iters) * 1000 : 0;
		if (bwd)
			printf("%-30s %-16s %10.1f  (tg_run %.1f + tg_backward %.1f, events, median of %d; min %.1f, max %.1f)\n",
				"whole layer", "", w, f, b, iters, whole[0] * 1000, whole[iters - 1] * 1000);
		else
			printf("%-30s %-16s %10.1f  (tg_run, events, median of %d; min %.1f, max %.1f)\n", "whole layer", "", w,
				iters, whole[0] * 1000, whole[iters - 1] * 1000);
		print_graph_time(l, bwd, iters);
	}
	for (int i = 0; i < 3; i++)
		if (e[i])
			cu.cuEventDestroy_v2(e[i]);
	free(ms);
	free(one);
	free(t);
}

static const char run_usage[] = "usage: tegen run SPEC [--tokens N] [--check] [--iters K] [--in DIR] [--out DIR] [--cpu]\n"
	"       [--cache-weights] [--cooldown MS]\n"
	"  --cache-weights: cast the weights on the first run only (tg_layer_cache_weights: inference, frozen\n"
	"         weights); the timed runs after it have no weight casts\n"
	"  --cpu: no GPU; the CPU reference interpreter writes --out (slow: the Llama-3 8B MLP training layer\n"
	"         takes about 10 s of CPU time plus 0.1 s per token, over all cores; TEGEN_THREADS caps them)\n"
	"  --cooldown MS: the GPU idle MS ms (0-60000, default 1000) between the whole-layer timing and the\n"
	"         kernels timed alone, whose clocks the layer's GEMMs would otherwise hold down\n";

int cmd_run(int argc, char **argv)
{
	const char *spec = NULL, *in_dir = NULL, *out_dir = NULL;
	long tokens = 0; /* not given: cli_run_tokens */
	int check = 0, iters = 20, cpu = 0, cache = 0, cooldown = 1000;
	const CliFlag flags[] = {{"--tokens", FLAG_TOKENS, &tokens, 0}, {"--iters", FLAG_INT, &iters, 0},
		{"--in", FLAG_STRING, &in_dir, 0}, {"--out", FLAG_STRING, &out_dir, 0}, {"--check", FLAG_SWITCH, &check, 1},
		{"--cpu", FLAG_SWITCH, &cpu, 1}, {"--cache-weights", FLAG_SWITCH, &cache, 1}, {"--cooldown", FLAG_INT, &cooldown, 0}};
	const CliArgs args = {run_usage, flags, 8, &spec, true, false};
	if (cli_parse(&args, argc, argv))
		return 2;
	if (tokens < 0 || iters < 1 || cooldown < 0 || cooldown > 60000)
		return cli_usage(args.usage);
	if (cpu && check) {
		fprintf(stderr, "tegen run: --cpu runs the reference itself; compare a GPU run's --out with it: tegen compare\n");
		return 2;
	}
	if (cpu)
		return cmd_run_cpu(spec, tokens, in_dir, out_dir);
	TgContext *ctx;
	if (tg_context_create(NULL, &ctx)) {
		fprintf(stderr, "tegen run: needs a GPU (%s)\n", tg_last_error());
		return 1;
	}
	TgLayer *l;
	int rc = 1;
	if (tg_layer_create_file(ctx, spec, &l)) {
		fputs(tg_last_error(), stderr);
		tg_context_destroy(ctx);
		return 1;
	}
	if (cli_run_tokens(tg_layer_plan(l)->g, spec, &tokens))
		goto out;
	if (tg_layer_set_tokens(l, tokens) || tg_layer_load(l) || (cache && tg_layer_cache_weights(l, 1))) {
		fprintf(stderr, "tegen: %s\n", tg_last_error());
		goto out;
	}
	Buf b = {0};
	char err[2048];
	CheckKeep keep = {0};
	keep.in_dir = in_dir;
	int fails = check_layer(l, tokens, 1, check, &keep, &b, err, sizeof err);
	if (fails < 0) {
		fprintf(stderr, "tegen: %s\n", err);
		buf_free(&b);
		check_keep_free(&keep);
		goto out;
	}
	if (check)
		fputs(b.p ? b.p : "", stdout);
	buf_free(&b);
	if (out_dir && write_outputs(l, out_dir)) {
		check_keep_free(&keep);
		goto out;
	}
	print_times(ctx, l, tg_layer_plan(l), iters, cooldown);
	check_keep_free(&keep);
	rc = check && fails ? 1 : 0;
	char label[64];
	printf("%s: %s, %s\n", spec, cli_tokens_label(tg_layer_plan(l)->g, tokens, label, sizeof label),
		check ? (fails ? "CHECK FAILED" : "check passed") : "ran");
out:
	tg_layer_destroy(l);
	tg_context_destroy(ctx);
	return rc;
}
