/* test_bench.c: `tegen bench` without a GPU.
 *
 * 1. The pure half (cli/bench_model.c): linear layers derived from a model
 *    config (Llama-3 8B), the GEMM of each pass (dgrad and wgrad swaps),
 *    shape-list parsing, the GEMM descriptors per precision (HYBRID dtypes,
 *    fast accumulation, block layouts) and their cuBLASLt rules, the quantize
 *    specs (each must plan to six kernels, one per GEMM operand), and the
 *    linear layers read from the example specs.
 * 2. The command line (build/tegen, run from the repo root): usage errors exit 2
 *    with a message, --list prints the GEMMs without a GPU, and a real run on a
 *    machine without a GPU exits 1 with "tegen bench: needs a GPU (...)".
 * Prints "ok NAME" or "FAIL NAME: why" per case; exit 1 on any FAIL. */
#include "check.h"
#include "bench_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#define check(ok, ...) check_line("", ok, __VA_ARGS__)

static int dims_are(BenchDims d, long m, long k, long n) { return d.m == m && d.k == k && d.n == n; }

static void test_llama(void)
{
	BenchModel c = {.hidden = 4096, .ffn = 14336, .heads = 32, .kv_heads = 8, .layers = 32, .micro_batch = 2, .seq = 4096};
	BenchLinear l[8];
	char err[256] = "";
	int n = bench_model_linears(&c, l, 8, err, sizeof err);
	check(n == 4, "llama3-8b: four linear layers", "got %d (%s)", n, err);
	if (n != 4)
		return;
	static const struct { const char *name; long m, k, n; } want[4] = {
		{"qkv", 8192, 4096, 6144}, {"attn_out", 8192, 4096, 4096},
		{"mlp_up_gated", 8192, 4096, 28672}, {"mlp_down", 8192, 14336, 4096},
	};
	for (int i = 0; i < 4; i++) {
		char name[96];
		BenchDims f = bench_pass_dims(&l[i], BENCH_FPROP), d = bench_pass_dims(&l[i], BENCH_DGRAD),
			w = bench_pass_dims(&l[i], BENCH_WGRAD);
		snprintf(name, sizeof name, "llama3-8b %s fprop %ldx%ldx%ld", want[i].name, want[i].m, want[i].k, want[i].n);
		check(!strcmp(l[i].name, want[i].name) && dims_are(f, want[i].m, want[i].k, want[i].n), name,
			"%s fprop %ldx%ldx%ld", l[i].name, f.m, f.k, f.n);
		snprintf(name, sizeof name, "llama3-8b %s dgrad %ldx%ldx%ld (K and N swapped)", want[i].name, want[i].m,
			want[i].n, want[i].k);
		check(dims_are(d, want[i].m, want[i].n, want[i].k), name, "dgrad %ldx%ldx%ld", d.m, d.k, d.n);
		snprintf(name, sizeof name, "llama3-8b %s wgrad %ldx%ldx%ld (M out, K tokens, N in)", want[i].name, want[i].n,
			want[i].m, want[i].k);
		check(dims_are(w, want[i].n, want[i].m, want[i].k), name, "wgrad %ldx%ldx%ld", w.m, w.k, w.n);
		snprintf(name, sizeof name, "llama3-8b %s flops = 2MNK", want[i].name);
		check(bench_flops(&l[i]) == 2.0 * want[i].m * want[i].k * want[i].n, name, "%g", bench_flops(&l[i]));
	}
	/* defaults and variants */
	BenchModel m = {.hidden = 4096, .ffn = 11008, .heads = 32, .tokens = 4096, .no_gate = 1};
	n = bench_model_linears(&m, l, 8, err, sizeof err);
	check(n == 4 && l[0].n == 3 * 4096 && l[2].n == 11008 && l[0].m == 4096, "kv-heads default to heads; --no-gate; --tokens",
		"n=%d qkv N=%ld up N=%ld M=%ld", n, l[0].n, l[2].n, l[0].m);
	BenchModel bad = c;
	bad.heads = 30;
	n = bench_model_linears(&bad, l, 8, err, sizeof err);
	check(n < 0 && strstr(err, "--kv-heads 8 must divide --heads 30"), "error: kv-heads must divide heads", "%d %s", n, err);
	bad = c;
	bad.heads = 24;
	bad.kv_heads = 8;
	n = bench_model_linears(&bad, l, 8, err, sizeof err);
	check(n < 0 && strstr(err, "must divide --hidden"), "error: heads must divide hidden", "%d %s", n, err);
	bad = c;
	bad.seq = 0;
	n = bench_model_linears(&bad, l, 8, err, sizeof err);
	check(n < 0 && strstr(err, "--seq"), "error: no seq and no tokens", "%d %s", n, err);
	bad = c;
	bad.ffn = 0;
	n = bench_model_linears(&bad, l, 8, err, sizeof err);
	check(n < 0 && strstr(err, "--ffn"), "error: no ffn", "%d %s", n, err);
}

static void test_shapes(void)
{
	BenchLinear l[4];
	char err[256] = "";
	int n = bench_parse_shapes("8192x4096x6144,16X32x4100", l, 4, err, sizeof err);
	check(n == 2 && l[0].m == 8192 && l[0].k == 4096 && l[0].n == 6144 && l[1].n == 4100 && !strcmp(l[1].name, "shape2"),
		"shapes: two parsed", "n=%d %s", n, err);
	static const char *const bad[] = {"12x34", "0x1x2", "1x2x3x", "axbxc", "1x2x3,,", "", "1x2x99999999999", "-1x2x3",
		"1x2x3,4x5"};
	for (int i = 0; i < (int)(sizeof bad / sizeof *bad); i++) {
		char name[64];
		snprintf(name, sizeof name, "shapes: '%s' rejected", bad[i]);
		err[0] = 0;
		n = bench_parse_shapes(bad[i], l, 4, err, sizeof err);
		check(n < 0 && strstr(err, "--shapes"), name, "n=%d err='%s'", n, err);
	}
	n = bench_parse_shapes("1x1x1,1x1x1,1x1x1,1x1x1,1x1x1", l, 4, err, sizeof err);
	check(n < 0 && strstr(err, "at most 4"), "shapes: too many", "n=%d %s", n, err);
}

static void test_descs(void)
{
	BenchLinear l = {"t", 8192, 4096, 6144};
	GemmDesc f = bench_gemm_desc(&l, BENCH_FPROP, BP_DELAYED, -1), d = bench_gemm_desc(&l, BENCH_DGRAD, BP_CURRENT, -1),
		w = bench_gemm_desc(&l, BENCH_WGRAD, BP_DELAYED, -1);
	check(f.a_dtype == DT_E4M3 && f.b_dtype == DT_E4M3 && f.fast_accum && f.scale_mode == GEMM_SCALE_TENSOR &&
		f.m == 8192 && f.n == 6144 && f.k == 4096 && f.d_dtype == DT_BF16, "desc: fprop e4m3 x e4m3, fast accum", "bad");
	check(d.a_dtype == DT_E5M2 && d.b_dtype == DT_E4M3 && !d.fast_accum && d.m == 8192 && d.n == 4096 && d.k == 6144,
		"desc: dgrad dY e5m2 x W e4m3, split accumulator", "bad");
	check(w.a_dtype == DT_E5M2 && w.b_dtype == DT_E4M3 && !w.fast_accum && w.m == 6144 && w.n == 4096 && w.k == 8192,
		"desc: wgrad dY^T e5m2 x X^T e4m3", "bad");
	GemmDesc on = bench_gemm_desc(&l, BENCH_WGRAD, BP_DELAYED, 1), off = bench_gemm_desc(&l, BENCH_FPROP, BP_DELAYED, 0);
	check(on.fast_accum && !off.fast_accum, "desc: --fast-accum on/off", "on %d off %d", on.fast_accum, off.fast_accum);
	GemmDesc bf = bench_gemm_desc(&l, BENCH_FPROP, BP_BLOCK, -1), bd = bench_gemm_desc(&l, BENCH_DGRAD, BP_BLOCK, -1),
		bw = bench_gemm_desc(&l, BENCH_WGRAD, BP_BLOCK, -1);
	check(bf.b_block128x128 && !bf.a_block128x128 && bd.b_block128x128 && !bw.b_block128x128 && !bw.a_block128x128 &&
		!bf.fast_accum && bf.scale_mode == GEMM_SCALE_BLOCK, "desc: block 1x128 x 128x128, wgrad 1x128 x 1x128", "bad");
	GemmDesc b16 = bench_gemm_desc(&l, BENCH_FPROP, BP_BF16, -1), mx = bench_gemm_desc(&l, BENCH_FPROP, BP_MXFP8, -1);
	check(b16.a_dtype == DT_BF16 && b16.scale_mode == GEMM_SCALE_NONE && mx.scale_mode == GEMM_SCALE_MXFP8,
		"desc: bf16 and mxfp8", "bad");
	char err[256] = "";
	for (int p = 0; p < BENCH_NPASS; p++)
		for (int q = 0; q < BP_COUNT; q++) {
			GemmDesc g = bench_gemm_desc(&l, p, q, -1);
			int rc = gemm_check(NULL, &g, err, sizeof err);
			char name[96];
			snprintf(name, sizeof name, "desc: llama qkv %s %s passes gemm_check", bench_pass_name(p), bench_prec_key(q));
			check(rc == GEMM_OK, name, "%d %s", rc, err);
		}
	BenchLinear odd = {"odd", 64, 4100, 256};
	GemmDesc o = bench_gemm_desc(&odd, BENCH_FPROP, BP_DELAYED, -1);
	int rc = gemm_check(NULL, &o, err, sizeof err);
	check(rc == GEMM_EINVAL && strstr(err, "K % 16 == 0 (K = 4100)"), "desc: K % 16 rule is reported", "%d %s", rc, err);
	check(bench_dequant_bytes(&l, BENCH_FPROP, BP_MXFP8) == (8192.0 + 6144.0) * 4096 * (3 + 1.0 / 32), "dequant bytes",
		"%g", bench_dequant_bytes(&l, BENCH_FPROP, BP_MXFP8));
	check(bench_dequant_bytes(&l, BENCH_FPROP, BP_NVFP4) == (8192.0 + 6144.0) * 4096 * (2.5 + 1.0 / 16),
		"dequant bytes nvfp4", "%g", bench_dequant_bytes(&l, BENCH_FPROP, BP_NVFP4));
	GemmDesc nv = bench_gemm_desc(&l, BENCH_WGRAD, BP_NVFP4, -1);
	check(nv.a_dtype == DT_E2M1 && nv.b_dtype == DT_E2M1 && nv.scale_mode == GEMM_SCALE_NVFP4 && bench_prec_blockfmt(BP_NVFP4) &&
		bench_prec_blockfmt(BP_MXFP8) && !bench_prec_blockfmt(BP_BLOCK), "desc: nvfp4 e2m1 x e2m1", "bad");
}

static const Plan *plan_text(Arena *a, const char *name, const char *text, char *msg, size_t len)
{
	Diag *d = arena_alloc(a, sizeof *d);
	d->file = name;
	d->src = text;
	Spec *s = spec_load(a, d, name, text, strlen(text));
	Graph *g = s ? ir_build(a, d, s, (Arch){90, true}) : NULL;
	const Plan *p = g ? plan_build(a, d, g) : NULL;
	if (!p)
		snprintf(msg, len, "%s", d->msg);
	return p;
}

static void test_quant_specs(void)
{
	BenchLinear l = {"qkv", 8192, 4096, 6144};
	for (int prec = BP_DELAYED; prec < BP_COUNT; prec++) {
		Arena *a = arena_new();
		char *text = bench_quant_spec(a, &l, prec), msg[2048] = "";
		const Plan *p = text ? plan_text(a, "q.yaml", text, msg, sizeof msg) : NULL;
		char name[96];
		snprintf(name, sizeof name, "quantize spec %s plans", bench_prec_key(prec));
		check(p != NULL, name, "%s\n%s", msg, text ? text : "(null)");
		if (p) {
			int seen[BQ_COUNT] = {0}, gen = 0;
			for (int k = 0; k < p->nkernels; k++) {
				const Kernel *kk = &p->kernels[k];
				if (k == p->update_kernel)
					continue;
				gen++;
				int o = p->g->ops[kk->ops[0]].arg[ARG_OUT];
				for (int i = 0; i < BQ_COUNT; i++)
					if (!strcmp(p->g->tensors[o].name, bench_quant_out(i)))
						seen[i]++;
			}
			int all = 1;
			for (int i = 0; i < BQ_COUNT; i++)
				all &= seen[i] == (prec == BP_CURRENT || prec == BP_NVFP4 ? 2 : 1); /* an amax pass, then the cast */
			snprintf(name, sizeof name, "quantize spec %s: every operand's kernels found", bench_prec_key(prec));
			check(all && gen == (prec == BP_CURRENT || prec == BP_NVFP4 ? 12 : 6), name, "%d kernels", gen);
			/* dtypes: HYBRID for per-tensor, e4m3 for the block recipes; 128x128 weights for block */
			const Graph *g = p->g;
			int ok = 1;
			for (int t = 0; t < g->ntensors; t++) {
				const Tensor *tt = &g->tensors[t];
				if (tt->producer < 0)
					continue;
				int grad = tt->role == ROLE_GRADIENT;
				DType want = prec == BP_NVFP4 ? DT_E2M1 : (prec == BP_DELAYED || prec == BP_CURRENT) && grad ? DT_E5M2 : DT_E4M3;
				ok &= tt->dtype == want;
				if (prec == BP_BLOCK)
					ok &= tt->recipe.scaling == (tt->role == ROLE_WEIGHT ? SCALING_BLOCK128X128 : SCALING_BLOCK1X128);
			}
			snprintf(name, sizeof name, "quantize spec %s: dtypes and block shapes", bench_prec_key(prec));
			check(ok, name, "see %s", text);
		}
		arena_free(a);
	}
	check(bench_quant_spec(NULL, &l, BP_BF16) == NULL, "quantize spec: none for bf16", "not NULL");
	BenchLinear odd = {"odd", 64, 4100, 256};
	Arena *a = arena_new();
	char msg[2048] = "";
	const Plan *p = plan_text(a, "odd.yaml", bench_quant_spec(a, &odd, BP_MXFP8), msg, sizeof msg);
	check(!p && strstr(msg, "multiple of 32"), "quantize spec mxfp8 K=4100: the rule is reported", "%s", msg);
	arena_free(a);
	long rows, cols;
	const char *in = bench_quant_input(&l, BQ_W_DGRAD, &rows, &cols);
	check(!strcmp(in, "w2") && rows == 6144 && cols == 4096, "quantize input w2 [N][K]", "%s %ld %ld", in, rows, cols);
	in = bench_quant_input(&l, BQ_DY_WGRAD, &rows, &cols);
	check(!strcmp(in, "dy2") && rows == 0 && cols == 6144, "quantize input dy2 [tokens][N]", "%s %ld %ld", in, rows, cols);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	static char buf[1 << 16];
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	return buf;
}

static void test_spec_linears(void)
{
	static const struct { const char *path; int n; long dims[2][3]; } cases[] = {
		{"specs/llama3_8b_mlp.yaml", 2, {{8192, 4096, 28672}, {8192, 14336, 4096}}},
		{"tests/specs/llama3_8b_mlp_backward.yaml", 1, {{8192, 14336, 4096}, {0, 0, 0}}},
	};
	for (int c = 0; c < 2; c++) {
		Arena *a = arena_new();
		char *text = slurp(cases[c].path), msg[2048] = "", name[96];
		text = text ? arena_strdup(a, text) : NULL;
		const Plan *p = text ? plan_text(a, cases[c].path, text, msg, sizeof msg) : NULL;
		BenchLinear l[8];
		char err[256] = "";
		int n = p ? bench_plan_linears(p, 8192, l, 8, err, sizeof err) : -1;
		int ok = n == cases[c].n;
		for (int i = 0; ok && i < n; i++)
			ok = l[i].m == cases[c].dims[i][0] && l[i].k == cases[c].dims[i][1] && l[i].n == cases[c].dims[i][2];
		snprintf(name, sizeof name, "spec linears: %s at 8192 tokens", cases[c].path);
		check(ok, name, "n=%d %s %s first %ldx%ldx%ld", n, err, msg, n > 0 ? l[0].m : 0, n > 0 ? l[0].k : 0,
			n > 0 ? l[0].n : 0);
		arena_free(a);
	}
}

/* Runs build/tegen with args; exit status and the first 4 KiB of stdout+stderr. */
static int run_tegen(const char *args, char *out, size_t len)
{
	char cmd[1024];
	const char *tegen = getenv("TEGEN");
	snprintf(cmd, sizeof cmd, "%s %s 2>&1", tegen && *tegen ? tegen : "build/tegen", args);
	FILE *f = popen(cmd, "r");
	if (!f)
		return -1;
	size_t n = fread(out, 1, len - 1, f);
	out[n] = 0;
	char sink[4096];
	while (fread(sink, 1, sizeof sink, f) > 0)
		;
	int st = pclose(f);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_cli(void)
{
	static const struct { const char *args, *msg; } bad[] = {
		{"bench", "give --shapes"},
		{"bench --shapes 12x34", "is not MxKxN"},
		{"bench --shapes 1x2x3 --hidden 4096", "only one of"},
		{"bench --hidden 4096 --ffn 14336", "--heads"},
		{"bench --hidden 4096 --ffn 14336 --heads 32", "--seq"},
		{"bench --hidden 4096 --ffn 14336 --heads 30 --seq 8", "must divide"},
		{"bench --hidden abc", "--hidden needs a positive integer"},
		{"bench --shapes 1x2x3 --iters 5", "--iters needs an integer in 10..1000"},
		{"bench --shapes 1x2x3 --tokens 8", "--tokens does not apply"},
		{"bench --shapes 1x2x3 --precisions fp8,bf16", "unknown precision 'fp8'"},
		{"bench --shapes 1x2x3 --fast-accum maybe", "--fast-accum is auto, on or off"},
		{"bench --shapes 1x2x3 --frobnicate", "unknown argument '--frobnicate'"},
		{"bench --shapes 1x2x3 --csv", "--csv needs a value"},
		{"bench --shapes 1x2x3 --budget 0", "--budget needs seconds"},
		{"bench --shapes 1x2x3 --cooldown -1", "--cooldown needs milliseconds"},
		{"bench --shapes 1x2x3 --cooldown 5s", "--cooldown needs milliseconds"},
	};
	char out[4096], name[160];
	for (int i = 0; i < (int)(sizeof bad / sizeof *bad); i++) {
		int rc = run_tegen(bad[i].args, out, sizeof out);
		snprintf(name, sizeof name, "cli: '%s' exits 2", bad[i].args);
		check(rc == 2 && strstr(out, bad[i].msg) && strstr(out, "usage: tegen bench"), name, "rc=%d out=%.300s", rc, out);
	}
	int rc = run_tegen("bench --hidden 4096 --ffn 14336 --heads 32 --kv-heads 8 --layers 32 --micro-batch 2 --seq 4096 --list",
		out, sizeof out);
	check(rc == 0 && strstr(out, "8192x4096x6144") && strstr(out, "8192x4096x28672") && strstr(out, "8192x14336x4096") &&
		strstr(out, "6144x8192x4096") && strstr(out, "32 layers"), "cli: --list prints the llama3-8b GEMMs", "rc=%d %.400s",
		rc, out);
	rc = run_tegen("bench --spec specs/llama3_8b_mlp.yaml --tokens 8192 --list", out, sizeof out);
	check(rc == 0 && strstr(out, "8192x14336x4096") && strstr(out, "w_up_q"), "cli: --spec --list", "rc=%d %.400s", rc, out);
	rc = run_tegen("bench --spec tests/gen/err_cycle.yaml --list", out, sizeof out);
	check(rc == 1 && strstr(out, "error"), "cli: a bad spec exits 1", "rc=%d %.300s", rc, out);
	rc = run_tegen("bench --help", out, sizeof out);
	check(rc == 0 && strstr(out, "usage: tegen bench"), "cli: --help", "rc=%d", rc);
	/* bench/bench_torch.py derives the same GEMMs (its --list needs neither torch nor a GPU) */
	static const char *const lists[] = {
		"--hidden 4096 --ffn 14336 --heads 32 --kv-heads 8 --layers 32 --micro-batch 2 --seq 4096 --list",
		"--hidden 8192 --ffn 28672 --heads 64 --kv-heads 8 --tokens 4096 --no-gate --list",
		"--shapes 8192x4096x6144,16X32x48 --list",
	};
	for (int i = 0; i < 3; i++) {
		char py[4096], cmd[512];
		snprintf(cmd, sizeof cmd, "bench %s", lists[i]);
		int r1 = run_tegen(cmd, out, sizeof out);
		snprintf(cmd, sizeof cmd, "python3 bench/bench_torch.py %s 2>&1", lists[i]);
		FILE *f = popen(cmd, "r");
		size_t n = f ? fread(py, 1, sizeof py - 1, f) : 0;
		py[n] = 0;
		int st = f ? pclose(f) : -1;
		snprintf(name, sizeof name, "bench_torch.py --list = tegen bench --list (%.40s...)", lists[i]);
		if (!WIFEXITED(st) || WEXITSTATUS(st) == 127)
			printf("skip %s: no python3\n", name);
		else
			check(r1 == 0 && WEXITSTATUS(st) == 0 && !strcmp(out, py), name, "tegen:\n%.600s\npython:\n%.600s", out, py);
	}
	/* a real run: without a GPU, exit 1 and say so; with one, a tiny GEMM-only run succeeds */
	rc = run_tegen("bench --shapes 256x256x256 --kernel-only --iters 10 --warmup 1 --budget 60 --cooldown 5", out, sizeof out);
	if (strstr(out, "needs a GPU"))
		check(rc == 1 && strstr(out, "tegen bench: needs a GPU ("), "cli: no GPU -> exit 1 with the reason", "rc=%d %.300s",
			rc, out);
	else
		check(rc == 0 && strstr(out, "Fprop"), "cli: tiny GEMM-only run on the GPU", "rc=%d %.600s", rc, out);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_llama();
	test_shapes();
	test_descs();
	test_quant_specs();
	test_spec_linears();
	test_cli();
	return check_failures ? 1 : 0;
}
