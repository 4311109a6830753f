/* bench_model.c: the pure half of `tegen bench` (see bench_model.h).
 *
 * Shapes, passes and recipes live here so that they can be unit-tested on a
 * machine without a GPU; cli/bench.c times what this file describes.
 * Conventions follow gemm.h: every GEMM is "TN", row-major, K contiguous in
 * both operands, so dgrad reads W's columnwise (transposed) copy and wgrad the
 * columnwise copies of dY and X. Guarantees: no allocation outside the arena
 * handed in, no printing; every rejected input gets a one-line message. */
#include "bench_model.h"

#include "layout.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

const char *bench_pass_name(int pass)
{
	static const char *const n[] = {"Fprop", "Dgrad", "Wgrad"};
	return pass >= 0 && pass < BENCH_NPASS ? n[pass] : "?";
}

const char *bench_prec_name(int prec)
{
	static const char *const n[] = {"BF16", "FP8 delayed", "FP8 current", "FP8 block", "MXFP8", "NVFP4"};
	return prec >= 0 && prec < BP_COUNT ? n[prec] : "?";
}

const char *bench_prec_key(int prec)
{
	static const char *const n[] = {"bf16", "fp8_delayed", "fp8_current", "fp8_block", "mxfp8", "nvfp4"};
	return prec >= 0 && prec < BP_COUNT ? n[prec] : "?";
}

static void set_linear(BenchLinear *l, const char *name, long m, long k, long n)
{
	snprintf(l->name, sizeof l->name, "%s", name);
	l->m = m;
	l->k = k;
	l->n = n;
}

int bench_model_linears(const BenchModel *c, BenchLinear *out, int max, char *err, size_t errlen)
{
	if (c->hidden <= 0 || c->ffn <= 0 || c->heads <= 0)
		return fail(err, errlen, "a model needs --hidden, --ffn and --heads (each >= 1)");
	long kv = c->kv_heads ? c->kv_heads : c->heads;
	if (kv < 1 || kv > c->heads || c->heads % kv)
		return fail(err, errlen, "--kv-heads %ld must divide --heads %ld", kv, c->heads);
	if (c->hidden % c->heads)
		return fail(err, errlen, "--heads %ld must divide --hidden %ld (head dim = hidden / heads)", c->heads, c->hidden);
	long tokens = c->tokens;
	if (!tokens) {
		if (c->seq <= 0)
			return fail(err, errlen, "a model needs --seq (tokens = micro-batch x seq) or --tokens");
		long mb = c->micro_batch ? c->micro_batch : 1;
		if (mb < 1 || c->seq > INT_MAX / mb)
			return fail(err, errlen, "--micro-batch x --seq must be 1..%d", INT_MAX);
		tokens = mb * c->seq;
	}
	long hd = c->hidden / c->heads, qkv = (c->heads + 2 * kv) * hd, up = c->no_gate ? c->ffn : 2 * c->ffn;
	if (tokens > INT_MAX || c->hidden > INT_MAX || qkv > INT_MAX || up > INT_MAX || c->ffn > INT_MAX)
		return fail(err, errlen, "an extent is larger than %d", INT_MAX);
	if (max < 4)
		return fail(err, errlen, "no room for 4 layers");
	set_linear(&out[0], "qkv", tokens, c->hidden, qkv);
	set_linear(&out[1], "attn_out", tokens, c->hidden, c->hidden);
	set_linear(&out[2], c->no_gate ? "mlp_up" : "mlp_up_gated", tokens, c->hidden, up);
	set_linear(&out[3], "mlp_down", tokens, c->ffn, c->hidden);
	return 4;
}

/* Reads one positive extent; advances *s. */
static int read_extent(const char **s, long *v)
{
	const char *p = *s;
	if (*p < '0' || *p > '9')
		return -1;
	errno = 0;
	char *end;
	long x = strtol(p, &end, 10);
	if (errno || x < 1 || x > INT_MAX)
		return -1;
	*v = x;
	*s = end;
	return 0;
}

int bench_parse_shapes(const char *s, BenchLinear *out, int max, char *err, size_t errlen)
{
	int n = 0;
	const char *p = s;
	if (!s || !*s)
		return fail(err, errlen, "--shapes needs MxKxN[,MxKxN...]");
	for (;;) {
		const char *start = p;
		long v[3];
		for (int i = 0; i < 3; i++) {
			if (read_extent(&p, &v[i]) || (i < 2 && *p != 'x' && *p != 'X')) {
				size_t len = strcspn(start, ",");
				return fail(err, errlen, "--shapes: '%.*s' is not MxKxN (tokens x in x out, each 1..%d)",
					(int)(len > 60 ? 60 : len), start, INT_MAX);
			}
			if (i < 2)
				p++;
		}
		if (*p && *p != ',') {
			size_t len = strcspn(start, ",");
			return fail(err, errlen, "--shapes: '%.*s' is not MxKxN (tokens x in x out, each 1..%d)",
				(int)(len > 60 ? 60 : len), start, INT_MAX);
		}
		if (n == max)
			return fail(err, errlen, "--shapes: at most %d shapes", max);
		char name[40];
		snprintf(name, sizeof name, "shape%d", n + 1);
		set_linear(&out[n++], name, v[0], v[1], v[2]);
		if (!*p)
			break;
		p++;
	}
	return n;
}

int bench_plan_linears(const Plan *p, long tokens, BenchLinear *out, int max, char *err, size_t errlen)
{
	const Graph *g = p->g;
	int n = 0;
	for (int i = 0; i < p->nkernels; i++) {
		const Kernel *k = &p->kernels[i];
		if (k->kind != KERNEL_GEMM)
			continue;
		const GemmCall *c = &k->gemm;
		long m = layout_extent_at(g, c->m, tokens), nn = layout_extent_at(g, c->n, tokens);
		long kk = layout_extent_at(g, c->k, tokens);
		const Op *op = &g->ops[c->op];
		BenchLinear l;
		const char *name;
		switch (op->p.pass) {
		case PASS_DGRAD: /* m = tokens, n = in, k = out */
			set_linear(&l, "", m, nn, kk);
			name = g->tensors[c->b].name;
			break;
		case PASS_WGRAD: /* m = out, n = in, k = tokens */
			set_linear(&l, "", kk, nn, m);
			name = g->tensors[c->d].name;
			break;
		default:
			set_linear(&l, "", m, kk, nn);
			name = g->tensors[c->b].name;
			break;
		}
		snprintf(l.name, sizeof l.name, "%s", name);
		if (l.m < 1 || l.k < 1 || l.n < 1 || l.m > INT_MAX || l.k > INT_MAX || l.n > INT_MAX)
			return fail(err, errlen, "%s: GEMM %s has extents %ldx%ldx%ld, out of range at %ld tokens", g->layer,
				k->name, l.m, l.k, l.n, tokens);
		int dup = 0;
		for (int j = 0; j < n; j++)
			dup |= out[j].m == l.m && out[j].k == l.k && out[j].n == l.n;
		if (dup)
			continue;
		if (n == max)
			return fail(err, errlen, "%s: more than %d distinct GEMMs", g->layer, max);
		out[n++] = l;
	}
	if (!n)
		return fail(err, errlen, "%s: the spec has no gemm_cast op", g->layer);
	return n;
}

BenchDims bench_pass_dims(const BenchLinear *l, int pass)
{
	switch (pass) {
	case BENCH_DGRAD: return (BenchDims){l->m, l->k, l->n};
	case BENCH_WGRAD: return (BenchDims){l->n, l->k, l->m};
	default: return (BenchDims){l->m, l->n, l->k};
	}
}

double bench_flops(const BenchLinear *l) { return 2.0 * (double)l->m * (double)l->k * (double)l->n; }

GemmDesc bench_gemm_desc(const BenchLinear *l, int pass, int prec, int fast_accum)
{
	BenchDims d = bench_pass_dims(l, pass);
	GemmDesc g;
	memset(&g, 0, sizeof g);
	g.m = (int)d.m;
	g.n = (int)d.n;
	g.k = (int)d.k;
	g.d_dtype = DT_BF16;
	switch (prec) {
	case BP_BF16:
		g.a_dtype = g.b_dtype = DT_BF16;
		g.scale_mode = GEMM_SCALE_NONE;
		break;
	case BP_DELAYED:
	case BP_CURRENT: /* HYBRID: the gradient operand (A in dgrad and wgrad) is E5M2 */
		g.a_dtype = pass == BENCH_FPROP ? DT_E4M3 : DT_E5M2;
		g.b_dtype = DT_E4M3;
		g.scale_mode = GEMM_SCALE_TENSOR;
		g.fast_accum = fast_accum < 0 ? pass == BENCH_FPROP : fast_accum;
		break;
	case BP_BLOCK:
		g.a_dtype = g.b_dtype = DT_E4M3;
		g.scale_mode = GEMM_SCALE_BLOCK;
		g.b_block128x128 = pass != BENCH_WGRAD; /* B is W (rowwise or columnwise) in fprop and dgrad */
		break;
	case BP_NVFP4:
		g.a_dtype = g.b_dtype = DT_E2M1;
		g.scale_mode = GEMM_SCALE_NVFP4;
		break;
	default: /* MXFP8 */
		g.a_dtype = g.b_dtype = DT_E4M3;
		g.scale_mode = GEMM_SCALE_MXFP8;
		break;
	}
	return g;
}

static const struct {
	const char *out, *in;
	int pass, columnwise;
} quant_ops[BQ_COUNT] = {
	{"xf", "x", BENCH_FPROP, 0},    /* fprop A: X rowwise */
	{"wf", "w", BENCH_FPROP, 0},    /* fprop B: W rowwise */
	{"dyd", "dy", BENCH_DGRAD, 0},  /* dgrad A: dY rowwise */
	{"wd", "w2", BENCH_DGRAD, 1},   /* dgrad B: W columnwise (W^T) */
	{"dyw", "dy2", BENCH_WGRAD, 1}, /* wgrad A: dY columnwise (dY^T) */
	{"xw", "x2", BENCH_WGRAD, 1},   /* wgrad B: X columnwise (X^T) */
};

const char *bench_quant_out(int i) { return i >= 0 && i < BQ_COUNT ? quant_ops[i].out : "?"; }
int bench_quant_pass(int i) { return i >= 0 && i < BQ_COUNT ? quant_ops[i].pass : -1; }

const char *bench_quant_input(const BenchLinear *l, int i, long *rows, long *cols)
{
	const char *in = quant_ops[i].in;
	int is_w = in[0] == 'w', is_dy = in[0] == 'd';
	*rows = is_w ? l->n : 0;
	*cols = is_w ? l->k : is_dy ? l->n : l->k;
	return in;
}

char *bench_quant_spec(Arena *a, const BenchLinear *l, int prec)
{
	const char *recipe;
	switch (prec) {
	case BP_DELAYED: recipe = "{scaling: delayed, format: hybrid, history: 1024}"; break;
	case BP_CURRENT: recipe = "{scaling: current, format: hybrid}"; break;
	case BP_BLOCK: recipe = "{scaling: block1x128, format: e4m3}"; break;
	case BP_MXFP8: recipe = "{scaling: mxfp8, format: e4m3}"; break;
	case BP_NVFP4: recipe = "{scaling: nvfp4}"; break;
	default: return NULL;
	}
	Buf b = {0};
	buf_printf(&b, "# tegen bench: the quantize kernels of %s (%ldx%ldx%ld) in %s, one op per GEMM operand\n", l->name,
		l->m, l->k, l->n, bench_prec_name(prec));
	buf_printf(&b, "layer: bench_%s\n", bench_prec_key(prec));
	buf_printf(&b, "dims: {tokens: dynamic, k: %ld, n: %ld}\n", l->k, l->n);
	buf_printf(&b, "recipe: %s\n", recipe);
	if (prec == BP_BLOCK)
		buf_printf(&b, "overrides:\n  wf: {scaling: block128x128}\n  wd: {scaling: block128x128}\n");
	buf_printf(&b, "tensors:\n");
	buf_printf(&b, "  x:   {shape: [tokens, k], dtype: bf16}\n  x2:  {shape: [tokens, k], dtype: bf16}\n");
	buf_printf(&b, "  w:   {shape: [n, k], dtype: bf16, role: weight}\n  w2:  {shape: [n, k], dtype: bf16, role: weight}\n");
	buf_printf(&b, "  dy:  {shape: [tokens, n], dtype: bf16, role: gradient}\n"
		"  dy2: {shape: [tokens, n], dtype: bf16, role: gradient}\n");
	buf_printf(&b, "ops:\n");
	for (int i = 0; i < BQ_COUNT; i++)
		buf_printf(&b, "  - quantize: {in: %s, out: %s, layout: [%s]}\n", quant_ops[i].in, quant_ops[i].out,
			quant_ops[i].columnwise ? "columnwise" : "rowwise");
	buf_printf(&b, "outputs: [");
	for (int i = 0; i < BQ_COUNT; i++)
		buf_printf(&b, "%s%s", i ? ", " : "", quant_ops[i].out);
	buf_printf(&b, "]\n");
	char *s = arena_strdup(a, b.p);
	buf_free(&b);
	return s;
}

int bench_prec_blockfmt(int prec) { return prec == BP_MXFP8 || prec == BP_NVFP4; }

double bench_dequant_bytes(const BenchLinear *l, int pass, int prec)
{
	BenchDims d = bench_pass_dims(l, pass);
	double elems = (double)d.k * (double)(d.m + d.n);
	if (prec == BP_NVFP4)
		return elems * (0.5 + 2.0 + 1.0 / 16); /* E2M1 in, BF16 out, one E4M3 byte per 16 */
	return elems * (1.0 + 2.0 + 1.0 / 32); /* E4M3 in, BF16 out, one E8M0 byte per 32 */
}
