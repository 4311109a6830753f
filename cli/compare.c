/* compare.c: the one comparison of a tegen output with another: `tegen run
 * --check` (GPU vs the reference, op by op, cli/check.c) and `tegen compare`
 * (two --out directories, e.g. a GPU run against `tegen run --cpu`) judge
 * buffers with these functions and print the same ok/FAIL lines. */
#include "compare.h"

#include "cli.h"
#include "layout.h"
#include "npy.h"
#include "ref.h"
#include "refrun.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int ref_dtype(DType t) { return t == DT_F32 ? REF_F32 : t == DT_F16 ? REF_F16 : REF_BF16; }

/* Signed ordinal of a code so that adjacent representable values differ by 1. */
static long ordinal(const void *p, size_t i, int bits)
{
	long v, sign;
	if (bits == 4) { /* E2M1: nibble i, low first */
		v = (((const uint8_t *)p)[i / 2] >> (4 * (i & 1))) & 0xF;
		sign = v & 0x8;
		v &= 0x7;
	} else if (bits == 8) {
		v = ((const uint8_t *)p)[i];
		sign = v & 0x80;
		v &= 0x7f;
	} else if (bits == 16) {
		v = ((const uint16_t *)p)[i];
		sign = v & 0x8000;
		v &= 0x7fff;
	} else {
		uint32_t u;
		memcpy(&u, (const char *)p + 4 * i, 4);
		sign = u >> 31;
		v = u & 0x7fffffff;
	}
	return sign ? -v : v;
}

float cmp_decode(DType t, const void *p, size_t i)
{
	switch (t) {
	case DT_E4M3: return tg_e4m3_to_f32(((const uint8_t *)p)[i]);
	case DT_E5M2: return tg_e5m2_to_f32(((const uint8_t *)p)[i]);
	case DT_E8M0: return tg_e8m0_to_f32(((const uint8_t *)p)[i]);
	case DT_E2M1: return tg_e2m1_to_f32((uint8_t)(((const uint8_t *)p)[i / 2] >> (4 * (i & 1))));
	default: return ref_load(p, ref_dtype(t), i);
	}
}


int cmp_ulp_ties(Buf *out, const char *what, DType t, const void *gpu, const void *ref, size_t bytes, int elem_bits,
	bool any, const uint8_t *tie)
{
	size_t n = bytes * 8 / (size_t)elem_bits;
	/* An element more than 1 ulp off still passes when its absolute error is
	 * tiny against the tensor's largest value (cancellation near zero, e.g.
	 * LayerNorm's final add of beta); it then counts against the budget. */
	double big = 0;
	for (size_t i = 0; i < n; i++) {
		double v = fabs(cmp_decode(t, ref, i));
		if (v > big && !isinf(v))
			big = v;
	}
	size_t off = 0, far = 0, ties = 0, first = 0;
	for (size_t i = 0; i < n; i++) {
		long d = labs(ordinal(gpu, i, elem_bits) - ordinal(ref, i, elem_bits));
		if (d == 1 && tie && tie[i]) {
			ties++;
			continue;
		}
		if (d && !off++)
			first = i;
		far += d > 1 && !(fabs((double)cmp_decode(t, gpu, i) - cmp_decode(t, ref, i)) <= big * 0x1p-19);
	}
	size_t allowed = (n + 9999) / 10000;
	if (allowed < 4)
		allowed = 4; /* small tensors: a handful of boundary crossings is not a trend */
	if (any)
		allowed = n; /* an FP32 intermediate: every element may be 1 ulp off (float vs double math) */
	if (far || off > allowed) {
		buf_printf(out, "FAIL %s: %zu of %zu elements differ, %zu by more than 1 ulp (allowed %zu; first at %zu)", what,
			off, n, far, allowed, first);
		if (ties)
			buf_printf(out, "; and %zu one ulp off at a rounding tie", ties);
		buf_puts(out, "\n");
		return 1;
	}
	buf_printf(out, "ok %s (%zu elements, %zu off by 1 ulp", what, n, off);
	if (ties)
		buf_printf(out, ", %zu more at a rounding tie", ties);
	buf_puts(out, ")\n");
	return 0;
}

int cmp_buffers(Buf *out, const char *what, CmpKind kind, DType t, const void *gpu, const void *ref, size_t bytes,
	int elem_bits, double rel_tol)
{
	if (kind == CMP_EXACT) {
		size_t bad = 0, first = 0;
		if (bytes && !memcmp(gpu, ref, bytes)) { /* the common case at memcmp's speed (a 2^31-element copy) */
			buf_printf(out, "ok %s (%zu bytes exact)\n", what, bytes);
			return 0;
		}
		for (size_t i = 0; i < bytes; i++)
			if (((const uint8_t *)gpu)[i] != ((const uint8_t *)ref)[i] && !bad++)
				first = i;
		if (bad) {
			buf_printf(out, "FAIL %s: %zu of %zu bytes differ (first at byte %zu: gpu %02x ref %02x)\n", what, bad, bytes,
				first, ((const uint8_t *)gpu)[first], ((const uint8_t *)ref)[first]);
			return 1;
		}
		buf_printf(out, "ok %s (%zu bytes exact)\n", what, bytes);
		return 0;
	}
	if (kind == CMP_ULP)
		return cmp_ulp_ties(out, what, t, gpu, ref, bytes, elem_bits, rel_tol > 0, NULL);
	size_t n = bytes * 8 / (size_t)elem_bits;
	double num = 0, den = 0;
	size_t nan = 0;
	for (size_t i = 0; i < n; i++) {
		double a = cmp_decode(t, gpu, i), b = cmp_decode(t, ref, i);
		if (isnan(a) != isnan(b))
			nan++;
		else if (!isnan(a)) {
			num += (a - b) * (a - b);
			den += b * b;
		}
	}
	double rel = den > 0 ? sqrt(num / den) : sqrt(num);
	if (nan || !(rel <= rel_tol)) {
		buf_printf(out, "FAIL %s: relative error %.3g (limit %.3g), %zu NaN mismatches\n", what, rel, rel_tol, nan);
		return 1;
	}
	buf_printf(out, "ok %s (relative error %.3g)\n", what, rel);
	return 0;
}

int cmp_float(Buf *out, const char *what, float gpu, float ref, double rel)
{
	bool ok = gpu == ref || (isnan(gpu) && isnan(ref)) || fabs((double)gpu - ref) <= rel * fabs((double)ref);
	buf_printf(out, "%s %s (gpu %.9g ref %.9g)\n", ok ? "ok" : "FAIL", what, gpu, ref);
	return !ok;
}


/* Tensors whose value went through a GEMM (cuBLASLt's summation order differs from the
 * reference's) on the way from the inputs: a whole-run comparison judges them by the
 * GEMM bound, the others by their op's own class. */
static bool *gemm_downstream(const Graph *g)
{
	bool *down = calloc((size_t)g->ntensors + 1, sizeof *down);
	for (int oi = 0; oi < g->nops; oi++) {
		const Op *op = &g->ops[oi];
		bool d = op_tolerance(op->kind) == TOL_GEMM;
		for (int a = 0; a < ARG_COUNT; a++)
			d = d || (op->arg[a] >= 0 && !arg_is_output((ArgSlot)a) && down[op->arg[a]]);
		for (int a = 0; a < ARG_COUNT; a++)
			if (op->arg[a] >= 0 && arg_is_output((ArgSlot)a))
				down[op->arg[a]] = d;
	}
	return down;
}

/* One output file pair: 0 same within the rules, 1 not (the line says why). */
static int compare_file(Buf *out, const Graph *g, const Tensor *t, Component c, bool downstream, const char *da,
	const char *db)
{
	char pa[4096], pb[4096], what[512], err[512];
	const char *sep = c == COMP_DATA ? "" : ".", *cn = c == COMP_DATA ? "" : comp_name(c);
	snprintf(pa, sizeof pa, "%s/%s%s%s.npy", da, t->name, sep, cn);
	snprintf(pb, sizeof pb, "%s/%s%s%s.npy", db, t->name, sep, cn);
	bool ha = access(pa, R_OK) == 0, hb = access(pb, R_OK) == 0;
	if (!ha && !hb)
		return 0;
	snprintf(what, sizeof what, "%s %s%s%s", g->layer, t->name, sep, cn);
	if (ha != hb) {
		buf_printf(out, "FAIL %s: only in %s\n", what, ha ? da : db);
		return 1;
	}
	Npy a, b;
	if (npy_read(pa, &a, err, sizeof err) || (npy_read(pb, &b, err, sizeof err) && (free(a.data), 1))) {
		buf_printf(out, "FAIL %s: %s\n", what, err);
		return 1;
	}
	int fails = 0;
	bool q = layout_quantized(t), data = c == COMP_DATA || c == COMP_DATA_T;
	bool scalar = a.bytes == 4 && (tensor_comp_in_state(t, c) || c == COMP_SCALE_T || c == COMP_AMAX_T);
	if (strcmp(a.descr, b.descr) || a.bytes != b.bytes || a.rank != b.rank || memcmp(a.shape, b.shape, sizeof a.shape)) {
		buf_printf(out, "FAIL %s: dtype or shape differ (%s vs %s, %zu vs %zu bytes)\n", what, a.descr, b.descr, a.bytes,
			b.bytes);
		fails = 1;
	} else if (scalar) {
		float x, y;
		memcpy(&x, a.data, 4);
		memcpy(&y, b.data, 4);
		fails = cmp_float(out, what, x, y, downstream ? 1e-3 : op_tolerance(g->ops[t->producer].kind) == TOL_EXACT ? 0 : 1e-6);
	} else {
		/* the dtype the bytes decode as: data in the tensor's, FP32 block scales, E8M0/E4M3 byte scales */
		DType dt = data ? t->dtype : a.descr[1] == 'f' ? DT_F32 : t->recipe.scaling == SCALING_MXFP8 ? DT_E8M0 : DT_E4M3;
		int bits = data ? dtype_bits(t->dtype) : a.descr[1] == 'f' ? 32 : 8;
		if (downstream)
			fails = cmp_buffers(out, what, CMP_REL, dt, a.data, b.data, a.bytes, bits, q ? 0.125 : 1.0 / 128);
		else if (op_tolerance(g->ops[t->producer].kind) == TOL_EXACT || !data)
			fails = cmp_buffers(out, what, CMP_EXACT, dt, a.data, b.data, a.bytes, 8, 0);
		else
			fails = cmp_buffers(out, what, CMP_ULP, dt, a.data, b.data, a.bytes, bits, 0);
	}
	free(a.data);
	free(b.data);
	return fails;
}

static const char compare_usage[] = "usage: tegen compare SPEC DIR_A DIR_B\n"
	"  every output file two runs of SPEC wrote with --out (e.g. a GPU run and `tegen run --cpu`),\n"
	"  judged by the --check rules: bit-exact or 1 ulp by the producing op, the GEMM bound\n"
	"  (relative Frobenius 2^-7, 2^-3 quantized) for anything computed from a GEMM output\n";

int cmd_compare(int argc, char **argv)
{
	const char *arg[3] = {NULL, NULL, NULL};
	int n = 0;
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(compare_usage, stdout);
			return 0;
		}
		if (argv[i][0] == '-' || n == 3) {
			fputs(compare_usage, stderr);
			return 2;
		}
		arg[n++] = argv[i];
	}
	if (n != 3) {
		fputs(compare_usage, stderr);
		return 2;
	}
	Arena *ar = arena_new();
	const Graph *g = cli_load_graph(ar, arg[0]);
	if (!g) {
		arena_free(ar);
		return 1;
	}
	for (int k = 1; k < 3; k++)
		if (access(arg[k], R_OK | X_OK) != 0) {
			fprintf(stderr, "tegen compare: cannot read directory %s\n", arg[k]);
			arena_free(ar);
			return 1;
		}
	bool *down = gemm_downstream(g);
	Buf b = {0};
	int fails = 0, files = 0;
	for (int i = 0; i < g->ntensors; i++)
		for (int c = COMP_DATA; c < COMP_COUNT && g->tensors[i].output && g->tensors[i].producer >= 0; c++)
			if (refrun_writes_component(c)) {
				size_t before = b.len;
				fails += compare_file(&b, g, &g->tensors[i], (Component)c, down[i], arg[1], arg[2]);
				files += b.len != before;
			}
	fputs(b.p ? b.p : "", stdout);
	printf("%s: %d files compared, %d differ\n", g->layer, files, fails);
	buf_free(&b);
	free(down);
	arena_free(ar);
	return fails ? 1 : 0;
}
