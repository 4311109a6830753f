/* test_bench_report.c: `tegen bench` end to end on a fake GPU.
 *
 * The real command (cli/bench_cmd.c) linked against a fake cli/bench.c:
 * GEMM times from FLOP at a fixed rate per precision (BF16 800, FP8 1400, block
 * 1300, MXFP8 and NVFP4 2500 TFLOP/s), gemm_check's real rules, MXFP8 and NVFP4 ENOTSUP below
 * sm_100 (FAKE_CC, default 90), and quantize layers that really parse and plan
 * (so spec rules show) with times from their bytes at 3 TB/s. This checks the
 * tables, totals, CSV and SVG without a GPU. Run with no arguments it runs
 * itself as `test_bench_report bench ARGS...` and checks the output; prints
 * "ok NAME" / "FAIL NAME: why". */
#include "bench.h"
#include "bench_cmd.h"
#include "bench_model.h"
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

/* ---- the fake GPU ---- */
struct BenchGpu { int cc; };
static __thread char fake_err[512];

int bench_gpu_open(int iters, int warmup, BenchGpu **out, char *why, size_t whylen)
{
	BenchGpu *b = calloc(1, sizeof *b);
	const char *cc = getenv("FAKE_CC");
	b->cc = cc ? atoi(cc) : 90;
	*out = b;
	return 0;
}
void bench_gpu_close(BenchGpu *b) { free(b); }
void bench_gpu_describe(const BenchGpu *b, char *buf, size_t len) { snprintf(buf, len, "Fake GPU (sm_%d)", b->cc); }
int bench_gpu_cc(const BenchGpu *b) { return b->cc; }
void bench_gpu_set_cooldown(BenchGpu *b, int ms) { (void)b; (void)ms; }
CUstream bench_gpu_stream(const BenchGpu *b) { return NULL; }
int bench_copy_bandwidth(BenchGpu *b, double *gbs, char *err, size_t errlen)
{
	*gbs = 3000;
	return 0;
}

int bench_gemm_check(const BenchGpu *b, const GemmDesc *d, char *err, size_t errlen)
{
	int rc = gemm_check(NULL, d, err, errlen);
	if (!rc && d->scale_mode == GEMM_SCALE_MXFP8 && b->cc < 100) {
		snprintf(err, errlen, "gemm: MXFP8 GEMM needs sm_100; runs emulated on sm_%d", b->cc);
		return GEMM_ENOTSUP;
	}
	if (!rc && d->scale_mode == GEMM_SCALE_BLOCK && b->cc / 10 != 9) {
		snprintf(err, errlen, "gemm: FP8 block-scaling GEMM is native on sm_90 only (this GPU is sm_%d); emulate it", b->cc);
		return GEMM_ENOTSUP;
	}
	return rc;
}

int bench_gemm(BenchGpu *b, const GemmDesc *d, BenchTime *t, char *err, size_t errlen)
{
	int rc = bench_gemm_check(b, d, err, errlen);
	if (rc)
		return rc;
	double tf = d->scale_mode == GEMM_SCALE_NONE ? 800 : d->scale_mode == GEMM_SCALE_TENSOR ? 1400
		: d->scale_mode == GEMM_SCALE_BLOCK ? 1300 : 2500;
	double ms = 2.0 * d->m * d->n * d->k / (tf * 1e9);
	*t = (BenchTime){ms, ms * 0.98, ms * 1.05, 20, 2};
	return 0;
}

int bench_layer(BenchGpu *b, TgContext *ctx, const char *name, const char *text, const BenchInput *in, int nin,
	const char *const *outs, int nout, double *out_ms, char *err, size_t errlen)
{
	Arena *a = arena_new();
	Diag *d = arena_alloc(a, sizeof *d);
	Spec *s = spec_load(a, d, name, text, strlen(text));
	Graph *g = s ? ir_build(a, d, s, (Arch){b->cc, true}) : NULL;
	Plan *p = g ? plan_build(a, d, g) : NULL;
	if (!p) {
		snprintf(err, errlen, "%.*s", (int)strcspn(d->msg, "\n"), d->msg);
		arena_free(a);
		return -1;
	}
	for (int j = 0; j < nout; j++) {
		out_ms[j] = 0;
		for (int k = 0; k < p->nkernels; k++) {
			const Kernel *kk = &p->kernels[k];
			if (k == p->update_kernel)
				continue;
			int o = g->ops[kk->ops[0]].arg[ARG_OUT], src = g->ops[kk->ops[0]].arg[ARG_IN];
			if (strcmp(g->tensors[o].name, outs[j]))
				continue;
			double rows = 0, cols = 0;
			for (int i = 0; i < nin; i++)
				if (!strcmp(in[i].name, g->tensors[src].name)) {
					rows = (double)in[i].rows;
					cols = (double)in[i].cols;
				}
			double bytes = rows * cols * (kk->pass == PASS_AMAX ? 2 : 3); /* amax pass: read only */
			out_ms[j] += bytes / 3e12 * 1e3;
		}
	}
	arena_free(a);
	return 0;
}

TgStatus tg_context_create(const TgOptions *opts, TgContext **out)
{
	*out = (TgContext *)calloc(1, 16);
	return TG_OK;
}
void tg_context_destroy(TgContext *ctx) { free(ctx); }
const char *tg_last_error(void) { return fake_err; }

char *cli_read_file(Arena *a, const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "%s: error: cannot open\n", path);
		return NULL;
	}
	char *buf = arena_alloc(a, 1 << 20);
	*len = fread(buf, 1, (1 << 20) - 1, f);
	fclose(f);
	return buf;
}
Arch cli_default_arch(void) { return (Arch){90, true}; }

/* ---- the checks ---- */
static int failed;

static void check(int cond, const char *name, const char *detail)
{
	if (cond)
		printf("ok %s\n", name);
	else {
		printf("FAIL %s: %s\n", name, detail);
		failed = 1;
	}
}

static char *run(const char *self, const char *env, const char *args, int *rc)
{
	char cmd[2048];
	snprintf(cmd, sizeof cmd, "%s %s bench %s 2>&1", env, self, args);
	FILE *f = popen(cmd, "r");
	size_t cap = 1 << 20, n = 0;
	char *out = calloc(1, cap);
	if (!f)
		return out;
	size_t r;
	while ((r = fread(out + n, 1, cap - 1 - n, f)) > 0)
		n += r;
	int st = pclose(f);
	*rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	return out;
}

static int count(const char *s, const char *sub)
{
	int n = 0;
	for (const char *p = s; (p = strstr(p, sub)); p += strlen(sub))
		n++;
	return n;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf = calloc(1, 1 << 20);
	if (f) {
		size_t n = fread(buf, 1, (1 << 20) - 1, f);
		buf[n] = 0;
		fclose(f);
	}
	return buf;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "bench"))
		return cmd_bench(argc - 2, argv + 2);
	setvbuf(stdout, NULL, _IOLBF, 0);
	char dir[] = "/tmp/tegen-bench-XXXXXX", args[1024];
	if (!mkdtemp(dir)) {
		printf("FAIL bench report: mkdtemp\n");
		return 1;
	}
	int rc = -1;
	snprintf(args, sizeof args, "--hidden 4096 --ffn 14336 --heads 32 --kv-heads 8 --layers 32 --micro-batch 2 --seq 4096 "
		"--csv %s/b.csv --chart %s/b.svg", dir, dir);
	char *out = run(argv[0], "", args, &rc);
	char detail[4096];
	snprintf(detail, sizeof detail, "rc=%d output:\n%.400s", rc, out);
	check(rc == 0, "report llama3-8b: exit 0", detail);
	check(strstr(out, "\nFprop  (") && strstr(out, "\nDgrad  (") && strstr(out, "\nWgrad  (") && strstr(out, "\nTotals"),
		"report: a table per pass and totals", detail);
	/* fprop qkv: BF16 800 TF, FP8 1400 TF -> 1.75x kernel-only */
	check(strstr(out, "qkv          8192x4096x6144     BF16") != NULL, "report: qkv fprop row", detail);
	check(strstr(out, "1.75x") != NULL && strstr(out, "1.62x") != NULL, "report: FP8 1.75x, block 1.62x kernel-only",
		detail);
	check(strstr(out, "MXFP8 emulated") && strstr(out, "model x32") && strstr(out, "layer"),
		"report: emulated MXFP8 labelled; layer and model totals", detail);
	/* layer: 3 passes x 3573.4 GFLOP at 800 TFLOP/s = 13.400 ms; model x32 = 428.810 ms */
	char *line = strstr(out, "model x32    343.048            BF16            |  428.810     800   1.00x");
	check(line != NULL && strstr(out, "layer        10.720             BF16            |   13.400"),
		"report: layer and model totals add up", detail);
	free(out);
	char path[600];
	snprintf(path, sizeof path, "%s/b.csv", dir);
	char *csv = slurp(path);
	int lines = count(csv, "\n");
	snprintf(detail, sizeof detail, "%d lines; first: %.200s", lines, csv);
	/* 3 passes x 4 layers x 2 modes x 6 precisions + 5 scopes x 2 modes x 6 precisions + header */
	check(lines == 144 + 60 + 1, "csv: 205 lines", detail);
	check(!strncmp(csv, "scope,pass,name,m,k,n,precision,mode,ms,tflops,speedup_vs_bf16,quant_ms,emulated,note\n", 86) &&
		strstr(csv, "gemm,Fprop,\"qkv\",8192,4096,6144,fp8_delayed,kernel_only,") &&
		strstr(csv, "model_total,all,\"x32\",,,,bf16,kernel_only,"), "csv: header and rows", detail);
	free(csv);
	snprintf(path, sizeof path, "%s/b.svg", dir);
	char *svg = slurp(path);
	snprintf(detail, sizeof detail, "%.300s", svg);
	check(!strncmp(svg, "<svg ", 5) && strstr(svg, "</svg>\n") && count(svg, "<rect ") == 1 + 5 + 2 * 4 * 5 &&
		strstr(svg, "Layer (all passes)") && strstr(svg, "with quantization") && !strstr(svg, "nan"),
		"svg: two panels, 4 groups x 5 bars, legend", detail);
	free(svg);

	/* K = 4100: no FP8 GEMM (K % 16); K = 4112: MXFP8 fprop fails K % 32, its dgrad runs (emulated) but its
	 * quantize spec is refused (the in-features extent is not a multiple of 32) */
	snprintf(args, sizeof args, "--shapes 8192x4100x4096,8192x4112x4096,8192x4096x4096 --csv %s/k.csv", dir);
	out = run(argv[0], "", args, &rc);
	snprintf(detail, sizeof detail, "rc=%d %.3000s", rc, out);
	check(rc == 0 && strstr(out, "n/a: FP8 needs K % 16 == 0 (K = 4100)") && strstr(out, "n/a: MXFP8 needs K % 32 == 0"),
		"report: the cuBLASLt rule is shown in the row", detail);
	check(strstr(out, "n/a: quantize: mxfp8 needs the last extent of 'xf' to be a multiple of 32") != NULL,
		"report: a quantize spec rule is shown in the row", detail);
	check(strstr(out, "n/a: 1 of 3 GEMMs missing (FP8 needs K % 16") && strstr(out, "n/a: 2 of 3 GEMMs missing"),
		"report: totals say what is missing", detail);
	free(out);
	/* native MXFP8 on a (fake) sm_100: block is not native there */
	out = run(argv[0], "FAKE_CC=100", "--shapes 8192x4096x4096 --kernel-only --precisions bf16,mxfp8,block", &rc);
	snprintf(detail, sizeof detail, "rc=%d %.1500s", rc, out);
	check(rc == 0 && strstr(out, "MXFP8 native") && strstr(out, "3.12x") && strstr(out, "not native on sm_90 only") == NULL &&
		strstr(out, "FP8 block-scaling GEMM is native on sm_90 only") && !strstr(out, "with quantization"),
		"report: native MXFP8, --kernel-only, --precisions", detail);
	free(out);
	snprintf(args, sizeof args, "rm -rf %s", dir);
	if (system(args))
		printf("FAIL cleanup: %s\n", args);
	return failed;
}
