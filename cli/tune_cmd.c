/* tune_cmd.c: `tegen tune SPEC --tokens N[,N...] [--iters K] [--cache-dir D] [--no-check]`.
 *
 * On a GPU: for every generated kernel of the layer, every legal tile-shape
 * variant (plan_variants) is emitted and NVRTC-compiled in one parallel batch
 * (jit_compile_many, through the context's cache, so later builds hit).
 * Then, per token count, the layer is bound to random inputs (check_layer) and
 * run once, and each variant is launched in place of its kernel with the same
 * bindings (tg_layer_time_kernel: 3 warm-ups, then K timed launches each from a
 * cold L2; the median counts). Variants that fail to compile, load or launch
 * are pruned; variants that spill to local memory are timed and marked (a
 * heuristic may pick one, and a small spill can still be fastest). A table
 * per token count shows each variant's time and effective GB/s, the best one
 * and the heuristic's for that token count (what tg_layer_set_tokens gives
 * without tuning data). Unless --no-check, the plan the
 * runtime would now pick is checked against the CPU reference at each token
 * count first (from a temporary copy of the DB); only then are all timings
 * appended to the tuning DB ($CACHE/tuning/v1.txt, gen/tune.c), in one
 * O_APPEND write. Exit 0 ok, 1 no GPU / failure / check failed (nothing
 * recorded), 2 usage. With --compile-only [--arch A] (no GPU needed) it only
 * NVRTC-compiles every variant and reports failures and spills. */
#include "commands.h"

#include "cache.h"
#include "check.h"
#include "cli.h"
#include "cudrv.h"
#include "jit.h"
#include "pipeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_TOKENS 16

/* One variant of one kernel: its replanned kernel, cubin and function. */
typedef struct Cand {
	int kernel;
	Kernel k;
	PlanVariant v;
	void *fn;             /* NULL: pruned */
	const char *why;      /* why pruned */
	int spill;            /* spill bytes (stores + loads) reported by ptxas */
	float us;             /* median of this token count; < 0 failed */
	double bytes;
} Cand;

static const char tune_usage[] =
	"usage: tegen tune SPEC --tokens N[,N...] [--iters K (>= 20, default 50)] [--cache-dir DIR] [--no-check]\n"
	"       tegen tune SPEC --compile-only [--arch sm_90a] [--cache-dir DIR]   (no GPU: compile every variant)\n";

/* Copy of the DB plus the new lines, for checking the plan they lead to before recording them. */
static int write_trial_db(const char *db, const char *trial, const Buf *lines)
{
	FILE *in = fopen(db, "rb"), *out = fopen(trial, "wb");
	if (!out) {
		if (in)
			fclose(in);
		return -1;
	}
	char chunk[65536];
	size_t n;
	while (in && (n = fread(chunk, 1, sizeof chunk, in)) > 0)
		fwrite(chunk, 1, n, out);
	if (in)
		fclose(in);
	if (lines->p)
		fputs(lines->p, out);
	return fclose(out) ? -1 : 0;
}

/* Index in cand[i..c0) of kernel ki's variant in plan pt (the heuristic's choice for the
 * token count pt was planned for); i (the token-unknown heuristic's, listed first) if absent. */
static int heuristic_of(const Plan *pt, int ki, const Cand *cand, int i, int c0)
{
	const char *v = pt && ki < pt->nkernels ? pt->kernels[ki].variant : NULL;
	for (int j = i; v && j < c0; j++)
		if (!strcmp(cand[j].v.name, v))
			return j;
	return i;
}

/* Run the layer as the runtime would plan it now, at each token count, against the reference. */
static int check_tuned(TgContext *ctx, const char *spec, const long *tokens, int ntok)
{
	int bad = 0;
	for (int t = 0; t < ntok; t++) {
		TgLayer *l;
		if (tg_layer_create_file(ctx, spec, &l)) {
			fprintf(stderr, "tegen tune: %s\n", tg_last_error());
			return -1;
		}
		Buf b = {0};
		char err[2048];
		int fails = -1;
		if (tg_layer_set_tokens(l, tokens[t]) || tg_layer_load(l))
			snprintf(err, sizeof err, "%s", tg_last_error());
		else
			/* the variants were chosen for tokens[t]; correctness does not depend on the row
			 * count, and the CPU reference GEMMs would take minutes at full size */
			fails = check_layer(l, tokens[t] > 272 ? 272 : tokens[t], 7, 1, NULL, &b, err, sizeof err);
		const Plan *p = tg_layer_plan(l);
		fprintf(stderr, "tune: tuned plan, tokens=%ld:", tokens[t]);
		for (int i = 0; i < p->nkernels; i++)
			if (p->kernels[i].variant && p->kernels[i].kind == KERNEL_GENERATED && i != p->update_kernel)
				fprintf(stderr, " %s=%s(%s)", p->kernels[i].name, p->kernels[i].variant, p->kernels[i].choice);
		fprintf(stderr, "\n");
		if (fails < 0) {
			fprintf(stderr, "tegen tune: checking the tuned plan at tokens=%ld: %s\n", tokens[t], err);
			bad = -1;
		} else if (fails > 0) {
			for (const char *s = b.p; s && *s;) {
				const char *nl = strchr(s, '\n');
				int len = nl ? (int)(nl - s) : (int)strlen(s);
				if (!strncmp(s, "FAIL", 4))
					fprintf(stderr, "%.*s\n", len, s);
				s = nl ? nl + 1 : s + len;
			}
			fprintf(stderr, "tegen tune: the tuned plan at tokens=%ld fails %d checks against the reference\n",
				tokens[t], fails);
			if (!bad)
				bad = 1;
		} else
			fprintf(stderr, "tune: tuned plan, tokens=%ld: check against the reference passed\n", tokens[t]);
		buf_free(&b);
		tg_layer_destroy(l);
	}
	return bad;
}

/* Every legal variant of every tunable kernel of p, replanned. */
static Cand *collect(Arena *a, const Plan *p, int *ncand)
{
	int n = 0, cap = 0;
	Cand *cand = NULL;
	for (int i = 0; i < p->nkernels; i++) {
		PlanVariant vs[PLAN_MAX_VARIANTS];
		int nv = plan_variants(&p->kernels[i], vs, PLAN_MAX_VARIANTS);
		for (int j = 0; j < nv; j++) {
			if (n == cap) {
				cap = cap ? cap * 2 : 64;
				Cand *nc = arena_alloc(a, sizeof *nc * (size_t)cap);
				if (n)
					memcpy(nc, cand, sizeof *nc * (size_t)n);
				cand = nc;
			}
			Cand *c = &cand[n];
			memset(c, 0, sizeof *c);
			c->kernel = i;
			c->k = p->kernels[i];
			c->v = vs[j];
			if (plan_apply_variant(a, &c->k, &vs[j]))
				n++;
		}
	}
	*ncand = n;
	return cand;
}

/* The CUDA source of each candidate; NULL (message printed) if one does not emit. */
static JitSource *sources(Arena *a, const Plan *p, const Cand *cand, int n)
{
	const char *const *hn, *const *ht;
	int nh = emit_headers(&hn, &ht);
	JitSource *src = arena_alloc(a, sizeof *src * (size_t)(n ? n : 1));
	for (int i = 0; i < n; i++) {
		Diag d = {0};
		char *code = emit_kernel(a, &d, p, &cand[i].k);
		if (!code) {
			fprintf(stderr, "tegen tune: %s", d.msg);
			return NULL;
		}
		src[i] = (JitSource){emit_entry(a, p, &cand[i].k), code,
			arena_printf(a, "%s.%s.%s.cu", p->g->layer, cand[i].k.name, cand[i].v.name), nh, hn, ht};
	}
	return src;
}

/* --compile-only: NVRTC-compile every variant for arch, no GPU needed (checks
 * that the variant tables respect the templates' constraints). */
static int compile_only(const char *spec, const char *cachedir, const char *arch)
{
	Arch ar;
	if (!arch_known(arch) || !arch_parse(arch, &ar)) {
		fprintf(stderr, "tegen tune: --arch: '%s' is not a target tegen knows (like sm_90a)\n", arch);
		return 2;
	}
	Arena *a = arena_new();
	int rc = 1;
	size_t len;
	char *text = cli_read_file(a, spec, &len);
	Diag d = {0};
	const Plan *p = text ? pipeline_plan(a, &d, spec, text, len, ar, false, NULL) : NULL;
	if (!p) {
		fputs(d.msg, stderr);
		arena_free(a);
		return 1;
	}
	int n = 0;
	Cand *cand = collect(a, p, &n);
	JitSource *src = sources(a, p, cand, n);
	char warn[512] = "", err[16384] = "";
	JitCache *jc = src ? jit_cache_open(cachedir, 0, warn, sizeof warn) : NULL;
	if (jc) {
		JitResult *res = arena_alloc(a, sizeof *res * (size_t)(n ? n : 1));
		double t0 = cli_now_s();
		jit_compile_many(jc, src, n, &arch, 1, NULL, 0, res, 0, err, sizeof err);
		int bad = 0, spills = 0;
		for (int i = 0; i < n; i++) {
			const JitResult *r = &res[i];
			bool sp_ = r->cubin && r->spill_stores + r->spill_loads > 0;
			printf("%-30s %-14s %s", cand[i].k.name, cand[i].v.name, r->cubin ? "ok" : "FAILED");
			if (r->cubin)
				printf(" regs=%d smem=%d%s spills=%d", r->regs, r->smem_static,
					cand[i].k.smem_dynamic ? arena_printf(a, "+%d", cand[i].k.smem_dynamic) : "", r->spill_stores + r->spill_loads);
			printf("\n");
			bad += !r->cubin;
			spills += sp_;
		}
		if (bad)
			fprintf(stderr, "%s\n", err);
		printf("%s: %d variants for %s, %d failed, %d spill, %.1f s\n", p->g->layer, n, arch, bad, spills,
			cli_now_s() - t0);
		rc = bad ? 1 : 0;
		jit_cache_close(jc);
	}
	arena_free(a);
	return rc;
}

/* The token list "N[,N...]" into tokens[] (at most MAX_TOKENS, each 1..CLI_MAX_TOKENS); false if malformed. */
static bool parse_tokens(const char *toklist, long *tokens, int *ntok)
{
	*ntok = 0;
	for (const char *s = toklist; *s;) {
		char *end;
		long v = strtol(s, &end, 10);
		if (end == s || v < 1 || v > CLI_MAX_TOKENS || *ntok == MAX_TOKENS || (*end && *end != ','))
			return false;
		tokens[(*ntok)++] = v;
		s = *end ? end + 1 : end;
	}
	return true;
}

/* A context on the GPU whose cache directory holds the tuning DB (path into dbpath); 1 (message printed) if none. */
static int open_gpu_context(const char *cachedir, char *dir, size_t dirsz, char *dbpath, size_t dbsz, TgContext **ctx)
{
	char why[512];
	int ndev = 0;
	if (cudrv_load(why, sizeof why)) {
		fprintf(stderr, "tegen tune: needs a GPU (%s)\n", why);
		return 1;
	}
	if (cu.cuDeviceGetCount(&ndev) || ndev < 1) {
		fprintf(stderr, "tegen tune: needs a GPU (no CUDA device)\n");
		return 1;
	}
	if (cache_dir_resolve(cachedir, dir, dirsz) || cache_tuning_path(dir, dbpath, dbsz)) {
		fprintf(stderr, "tegen tune: no cache directory for the tuning DB (set TEGEN_CACHE_DIR or --cache-dir)\n");
		return 1;
	}
	TgOptions opts = {0};
	opts.cache_dir = dir;
	if (tg_context_create(&opts, ctx)) {
		fprintf(stderr, "tegen tune: needs a GPU (%s)\n", tg_last_error());
		return 1;
	}
	tg_context_set_tuning_file(*ctx, NULL); /* time against the heuristic plan */
	return 0;
}

/* Compile every candidate in one parallel batch and load it; the ones that fail are pruned (fn NULL). */
static void compile_candidates(TgContext *ctx, Arena *a, Cand *cand, int ncand, const JitSource *src, const char *arch,
	char *err, size_t errsz)
{
	JitResult *res = arena_alloc(a, sizeof *res * (size_t)ncand);
	double t0 = cli_now_s();
	jit_compile_many(tg_context_jit(ctx), src, ncand, &arch, 1, NULL, 0, res, 0, err, errsz);
	int hits = 0, ok = 0;
	for (int i = 0; i < ncand; i++) {
		Cand *c = &cand[i];
		if (res[i].cubin) /* -1: unknown (a cached entry without ptxas's report) */
			c->spill = (res[i].spill_stores > 0 ? res[i].spill_stores : 0) + (res[i].spill_loads > 0 ? res[i].spill_loads : 0);
		if (!res[i].cubin)
			c->why = "compile failed";
		else if (tg_context_function(ctx, &res[i], src[i].name, &c->fn)) {
			c->fn = NULL;
			c->why = arena_printf(a, "load failed: %s", tg_last_error());
		} else {
			ok++;
			hits += res[i].cache_hit != 0;
		}
		if (!c->fn)
			fprintf(stderr, "tune: %s %s: %s (pruned)\n", c->k.name, c->v.name, c->why);
	}
	fprintf(stderr, "tune: %d of %d variants ready in %.1f s (%d from cache)\n", ok, ncand, cli_now_s() - t0, hits);
}

/* Time the variants cand[i..c0) of one kernel in layer l (planned for `tokens`, pt its plan); a DB
 * line per timed variant into lines (count into *nlines), then the table rows of this kernel. */
static void time_kernel(TgLayer *l, const Plan *pt, Arena *a, const PlanOptions *gpu, Cand *cand, int i, int c0,
	long tokens, int iters, Buf *lines, int *nlines)
{
	int ki = cand[i].kernel, nv = c0 - i;
	long bucket = plan_bucket(&cand[i].k, tokens);
	const char *sig = plan_signature(a, &cand[i].k);
	int best = -1;
	for (int j = i; j < c0; j++) {
		Cand *c = &cand[j];
		c->us = -1;
		if (!c->fn)
			continue;
		if (tg_layer_time_kernel(l, ki, &c->k, c->fn, iters, &c->us, &c->bytes)) {
			c->us = -1;
			fprintf(stderr, "tune: %s %d/%d variants (tokens=%ld): %s failed: %s (pruned)\n", c->k.name,
				j - i + 1, nv, tokens, c->v.name, tg_last_error());
			continue;
		}
		fprintf(stderr, "tune: %s %d/%d variants (tokens=%ld): %s %.1f us\n", c->k.name, j - i + 1, nv,
			tokens, c->v.name, c->us);
		if (best < 0 || c->us < cand[best].us)
			best = j;
		TuneEntry e = {sig, c->v.name, gpu->gpu, gpu->nvrtc, bucket, gpu->sms, gpu->cuda, c->us};
		buf_puts(lines, tunedb_line(a, &e));
		(*nlines)++;
	}
	int h = heuristic_of(pt, ki, cand, i, c0);
	for (int j = i; j < c0; j++) {
		Cand *c = &cand[j];
		bool heur = j == h;
		char us[32] = "-", gbs[32] = "-";
		if (c->us > 0) {
			snprintf(us, sizeof us, "%.1f", c->us);
			if (c->bytes > 0)
				snprintf(gbs, sizeof gbs, "%.0f", c->bytes / c->us / 1e3);
		}
		char sp[32] = "";
		if (c->spill)
			snprintf(sp, sizeof sp, "%s(spills %d B)", j == best || heur ? " " : "", c->spill);
		printf("%-30s %-14s %7ld %10s %8s  %s%s%s%s\n", c->k.name, c->v.name, bucket, us, gbs,
			j == best ? "* best" : "", j == best && heur ? ", " : "", heur ? "heuristic" : "", sp);
	}
	if (best >= 0 && cand[h].us > 0)
		printf("%-30s best %s: %.2fx the heuristic's speed\n", cand[i].k.name, cand[best].v.name,
			cand[h].us / cand[best].us);
}

/* One token count: a layer planned for it (no DB) bound to random inputs and run once
 * (check_layer), then every kernel's variants timed in place (time_kernel); -1 if the layer fails. */
static int time_at_tokens(TgContext *ctx, const char *spec, const char *layer, Arena *a, const PlanOptions *gpu,
	Cand *cand, int ncand, long tokens, bool first, int iters, Buf *lines, int *nlines, char *err, size_t errsz)
{
	TgLayer *l;
	if (tg_layer_create_file(ctx, spec, &l)) {
		fputs(tg_last_error(), stderr);
		return -1;
	}
	Buf b = {0};
	CheckKeep keep = {0};
	/* planned for this token count (no DB): its variants are the heuristic's for tokens */
	int fails = tg_layer_set_tokens(l, tokens) || tg_layer_load(l) ? -1
		: check_layer(l, tokens, 1, 0, &keep, &b, err, errsz);
	const Plan *pt = tg_layer_plan(l);
	buf_free(&b);
	if (fails < 0) {
		fprintf(stderr, "tegen tune: tokens=%ld: %s\n", tokens, err[0] ? err : tg_last_error());
		check_keep_free(&keep);
		tg_layer_destroy(l);
		return -1;
	}
	printf("%s tokens=%ld on %s, median of %d launches from a cold L2\n", layer, tokens, gpu->gpu, iters);
	printf("%-30s %-14s %7s %10s %8s\n", "kernel", "variant", "bucket", "us", "GB/s");
	for (int i = 0, c0 = 0; i < ncand; i = c0) {
		for (c0 = i; c0 < ncand && cand[c0].kernel == cand[i].kernel; c0++)
			;
		if (!first && cand[i].k.rows.dim < 0)
			continue; /* rows do not depend on tokens (a weight): timed at the first count */
		time_kernel(l, pt, a, gpu, cand, i, c0, tokens, iters, lines, nlines);
	}
	printf("\n");
	check_keep_free(&keep);
	tg_layer_destroy(l);
	return 0;
}

/* Unless !check, the plan the new lines lead to checked against the reference (from a trial
 * copy of the DB); then the lines appended to the DB. 0 when recorded. */
static int record(TgContext *ctx, const char *spec, const char *dbpath, const Buf *lines, int nlines,
	const long *tokens, int ntok, int check, char *err, size_t errsz)
{
	if (check) {
		char trial[4200];
		snprintf(trial, sizeof trial, "%s.trial-%ld", dbpath, (long)getpid());
		if (tunedb_append(trial, "", err, errsz) || write_trial_db(dbpath, trial, lines)) {
			fprintf(stderr, "tegen tune: cannot write %s\n", trial);
			unlink(trial);
			return 1;
		}
		tg_context_set_tuning_file(ctx, trial);
		int bad = check_tuned(ctx, spec, tokens, ntok);
		unlink(trial);
		if (bad) {
			fprintf(stderr, "tegen tune: nothing recorded in %s\n", dbpath);
			return 1;
		}
	}
	if (tunedb_append(dbpath, lines->p, err, errsz)) {
		fprintf(stderr, "tegen tune: %s\n", err);
		return 1;
	}
	printf("recorded %d measurements in %s\n", nlines, dbpath);
	return 0;
}

int cmd_tune(int argc, char **argv)
{
	const char *spec = NULL, *cachedir = NULL, *toklist = NULL, *arch = NULL;
	int iters = 50, check = 1, only = 0;
	const CliFlag flags[] = {{"--compile-only", FLAG_SWITCH, &only, 1}, {"--arch", FLAG_STRING, &arch, 0},
		{"--tokens", FLAG_STRING, &toklist, 0}, {"--iters", FLAG_INT, &iters, 0}, {"--cache-dir", FLAG_STRING, &cachedir, 0},
		{"--no-check", FLAG_SWITCH, &check, 0}};
	const CliArgs args = {tune_usage, flags, 6, &spec, false, false};
	if (cli_parse(&args, argc, argv))
		return 2;
	long tokens[MAX_TOKENS];
	int ntok = 0;
	if (spec && only)
		return compile_only(spec, cachedir, arch ? arch : "sm_90a");
	if (!spec || !toklist || iters < 20 || arch || !parse_tokens(toklist, tokens, &ntok))
		return cli_usage(tune_usage);
	char dir[4096], dbpath[4096];
	TgContext *ctx;
	if (open_gpu_context(cachedir, dir, sizeof dir, dbpath, sizeof dbpath, &ctx))
		return 1;
	Arena *a = arena_new();
	int rc = 1;
	TgLayer *l0 = NULL;
	Buf lines = {0};
	if (tg_layer_create_file(ctx, spec, &l0)) {
		fputs(tg_last_error(), stderr);
		goto out;
	}
	const Plan *p = tg_layer_plan(l0);
	PlanOptions gpu;
	tg_context_plan_options(ctx, 0, &gpu);

	/* every legal variant of every tunable kernel, compiled in one parallel batch */
	int ncand = 0;
	Cand *cand = collect(a, p, &ncand);
	if (!ncand) {
		fprintf(stderr, "tegen tune: %s has no generated kernel with tile-shape variants\n", spec);
		goto out;
	}
	JitSource *src = sources(a, p, cand, ncand);
	if (!src)
		goto out;
	arch = tg_context_arch(ctx);
	fprintf(stderr, "tune: %s on %s (%d SMs, %s): compiling %d variants for %s...\n", p->g->layer, gpu.gpu, gpu.sms,
		arch, ncand, dbpath);
	char err[16384] = "";
	compile_candidates(ctx, a, cand, ncand, src, arch, err, sizeof err);

	int nlines = 0;
	for (int t = 0; t < ntok; t++)
		if (time_at_tokens(ctx, spec, p->g->layer, a, &gpu, cand, ncand, tokens[t], t == 0, iters, &lines, &nlines,
			err, sizeof err))
			goto out;
	if (!nlines) {
		fprintf(stderr, "tegen tune: no variant could be timed; nothing recorded\n");
		goto out;
	}
	rc = record(ctx, spec, dbpath, &lines, nlines, tokens, ntok, check, err, sizeof err);
out:
	buf_free(&lines);
	tg_layer_destroy(l0);
	arena_free(a);
	tg_context_destroy(ctx);
	return rc;
}
