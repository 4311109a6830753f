/* nccl_amax.c: one amax across ranks through NCCL (tg_layer_set_comm), checked bit for bit.
 *
 *   nccl_amax SPEC [--tokens T]
 *       one process, one GPU: the layer runs twice on the same inputs, without a communicator
 *       and with a one-rank one (TG_REDUCE_ALL): every output and the recipe state must be the
 *       same bits (the reduction path runs, and a max over one rank changes nothing).
 *   nccl_amax SPEC --rank R --nranks N --id FILE [--tokens T]
 *       one process per GPU (the script gives each its own CUDA_VISIBLE_DEVICES): rank 0 writes the NCCL id to FILE,
 *       the others wait for it. Every rank draws the same whole batch of T tokens, runs its
 *       T/N rows with the communicator, and the whole batch alone without one: its rowwise
 *       outputs must equal its rows of the whole-batch run, and its state (scales, scale_inv,
 *       amaxes) the whole-batch state, bit for bit. So the ranks agree with each other and with
 *       one GPU that saw every token (bench/nccl_2gpu.sh runs two).
 * Inputs: every layer input (role input or weight) gets deterministic values from its name and
 * element index; per-token tensors (first extent = tokens) are sliced by rank. Output lines:
 * `ok NAME`, `FAIL NAME: why`, `skip NAME: why` (no GPU, no NCCL). Exit 0 unless a FAIL. */
#include "tegen.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { MAXT = 256 };

typedef struct Run {
	TgLayer *layer;
	void *dev[MAXT];
	size_t bytes[MAXT];
} Run;

static int fails;

static size_t dtype_bytes(TgDtype d) { return d == TG_FP32 ? 4 : d == TG_BF16 || d == TG_FP16 ? 2 : 1; }

/* value: a deterministic pseudo-random number of tensor `name`, element i, in [-2, 2) (x8 on every 64th element,
 * so the amax comes from a few elements anywhere in the batch). */
static float value(const char *name, long long i)
{
	uint64_t h = 1469598103934665603ull;
	for (const char *c = name; *c; c++)
		h = (h ^ (unsigned char)*c) * 1099511628211ull;
	h ^= (uint64_t)i * 0x9E3779B97F4A7C15ull;
	h ^= h >> 31, h *= 0xBF58476D1CE4E5B9ull, h ^= h >> 29;
	float v = (float)((h >> 40) / (double)(1u << 24)) * 4.0f - 2.0f;
	return (h & 63) == 0 ? 8.0f * v : v;
}

static uint16_t bf16(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	return (uint16_t)((u + 0x7FFFu + ((u >> 16) & 1)) >> 16);
}

/* setup binds every tensor of a layer made from `text` for `tokens` rows starting at row `first` of
 * a `total`-row batch: inputs filled, outputs allocated. Returns 0 on failure (message printed). */
static int setup(TgContext *ctx, const char *file, long long total, long long first, long long tokens, Run *r)
{
	memset(r, 0, sizeof *r);
	if (tg_layer_create_file(ctx, file, &r->layer) || tg_layer_set_tokens(r->layer, tokens)) {
		printf("FAIL nccl/layer: %s\n", tg_last_error());
		return 0;
	}
	int n = tg_layer_tensor_count(r->layer);
	for (int i = 0; i < n && i < MAXT; i++) {
		TgTensorInfo ti;
		if (tg_layer_tensor_info(r->layer, i, tokens, &ti))
			return printf("FAIL nccl/info: %s\n", tg_last_error()), 0;
		if (!(ti.flags & (TG_TENSOR_INPUT | TG_TENSOR_OUTPUT)))
			continue;
		long long elems = 1, row = 1;
		for (int k = 0; k < ti.rank; k++)
			elems *= ti.shape[k];
		for (int k = 1; k < ti.rank; k++)
			row *= ti.shape[k];
		size_t bytes = (size_t)elems * dtype_bytes(ti.dtype);
		if (tg_alloc(ctx, bytes, &r->dev[i]))
			return printf("FAIL nccl/alloc: %s\n", tg_last_error()), 0;
		r->bytes[i] = bytes;
		unsigned char *h = calloc(1, bytes);
		if (!h)
			return printf("FAIL nccl/alloc: out of host memory\n"), 0;
		if ((ti.flags & TG_TENSOR_INPUT) && (ti.dtype == TG_FP32 || ti.dtype == TG_BF16)) {
			bool per_token = ti.rank >= 2 && ti.shape[0] == tokens && !(ti.flags & TG_TENSOR_WEIGHT);
			long long off = per_token ? first * row : 0;
			for (long long e = 0; e < elems; e++) {
				float v = value(ti.name, off + e);
				if (ti.dtype == TG_FP32)
					memcpy(h + 4 * e, &v, 4);
				else {
					uint16_t b = bf16(v);
					memcpy(h + 2 * e, &b, 2);
				}
			}
		}
		TgTensorDesc d = {r->dev[i], ti.dtype, ti.rank, {0}, {0}};
		memcpy(d.shape, ti.shape, sizeof d.shape);
		if (tg_memcpy(ctx, r->dev[i], h, bytes, TG_HOST_TO_DEVICE) || tg_bind(r->layer, ti.name, &d)) {
			free(h);
			return printf("FAIL nccl/bind %s: %s\n", ti.name, tg_last_error()), 0;
		}
		free(h);
	}
	(void)total;
	return 1;
}

static void teardown(TgContext *ctx, Run *r)
{
	for (int i = 0; i < MAXT; i++)
		tg_free(ctx, r->dev[i]);
	tg_layer_destroy(r->layer);
}

/* run: tg_run (and tg_backward where the spec has one, with its d_<output> inputs already bound), then tg_step,
 * twice, so delayed scaling reduces in tg_step and the second run uses the reduced scales. */
static int run(Run *r)
{
	for (int it = 0; it < 2; it++) {
		if (tg_run(r->layer, NULL) || tg_step(r->layer, NULL)) {
			printf("FAIL nccl/run: %s\n", tg_last_error());
			return 0;
		}
	}
	return 1;
}

/* per_run_us: wall time of one tg_run + tg_step, mean of 20 after a warm-up, synchronized by a
 * 4-byte copy of the state (tg_memcpy waits for the work before it). */
static double per_run_us(TgContext *ctx, Run *r)
{
	void *st;
	float w;
	if (tg_state(r->layer, &st, NULL, NULL) || !run(r) || tg_memcpy(ctx, &w, st, 4, TG_DEVICE_TO_HOST))
		return -1;
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int i = 0; i < 10; i++)
		if (!run(r))
			return -1;
	if (tg_memcpy(ctx, &w, st, 4, TG_DEVICE_TO_HOST))
		return -1;
	clock_gettime(CLOCK_MONOTONIC, &b);
	return ((b.tv_sec - a.tv_sec) * 1e6 + (b.tv_nsec - a.tv_nsec) / 1e3) / 20;
}

static unsigned char *fetch(TgContext *ctx, const void *dev, size_t bytes)
{
	unsigned char *h = malloc(bytes ? bytes : 1);
	if (h && tg_memcpy(ctx, h, dev, bytes, TG_DEVICE_TO_HOST)) {
		free(h);
		return NULL;
	}
	return h;
}

/* slice_differs: component `comp` of tensor `name` in the rank run a (its `mine` rows from row `first`) against the
 * whole-batch run b (`total` rows), bit for bit. Rowwise components ([rows][...]) compare the rank's rows; columnwise
 * ones ([cols][rows...], `cols` columns) the rank's part of every column; one the size of the whole batch's (a
 * per-tensor scale) compares whole. 0 same or absent in both, 1 differs, with why. */
static int slice_differs(TgContext *ctx, Run *a, Run *b, const char *name, const char *comp, long long cols, long long mine,
	long long first, long long total, char *why, size_t whylen)
{
	void *pa, *pb;
	size_t na, nb;
	int ha_ok = !tg_tensor_ptr(a->layer, name, comp, &pa, &na), hb_ok = !tg_tensor_ptr(b->layer, name, comp, &pb, &nb);
	if (!ha_ok && !hb_ok)
		return 0;
	if (ha_ok != hb_ok || !na)
		return snprintf(why, whylen, "%s.%s exists in one run only", name, comp), 1;
	int columnwise = !strcmp(comp, "data_t") || !strcmp(comp, "scale_inv_t");
	long long lines = columnwise ? cols : 1; /* contiguous runs of the rank's part */
	if (na != nb && (na % (size_t)lines || (na / (size_t)lines) * (size_t)total != (nb / (size_t)lines) * (size_t)mine))
		return snprintf(why, whylen, "%s.%s: %zu bytes do not slice %lld of %lld rows from %zu", name, comp, na, mine,
		                total, nb), 1;
	unsigned char *ha = fetch(ctx, pa, na), *hb = fetch(ctx, pb, nb);
	int bad = !ha || !hb;
	size_t la = na / (size_t)lines, lb = nb / (size_t)lines, off = na == nb ? 0 : la * (size_t)first / (size_t)mine;
	if (!strcmp(comp, "data_t") && na != nb) { /* lines of rows rounded up to 16 elements (tegen.h): the rank's rows */
		size_t es = la / (size_t)((mine + 15) / 16 * 16);
		la = es * (size_t)mine;
		off = es * (size_t)first;
	}
	if (na == nb)
		la = lb = na, lines = 1;
	for (long long c = 0; !bad && c < lines; c++)
		bad = memcmp(ha + c * la, hb + c * lb + off, la) != 0;
	if (bad)
		snprintf(why, whylen, "output %s.%s differs", name, comp);
	free(ha);
	free(hb);
	return bad;
}

/* compare: rank run a (rows first.. of the batch) against the whole-batch run b, bit for bit: every output's
 * quantized copies and their scales (per-token outputs: the rank's rows) and the state. */
static void compare(TgContext *ctx, const char *what, Run *a, Run *b, long long tokens, long long first, long long total)
{
	static const char *comps[] = {"data", "scale_inv", "data_t", "scale_inv_t"};
	int n = tg_layer_tensor_count(a->layer), bad = 0;
	char why[256] = "", w[256];
	for (int i = 0; i < n && i < MAXT; i++) {
		TgTensorInfo ta, tb;
		if (tg_layer_tensor_info(a->layer, i, tokens, &ta) || tg_layer_tensor_info(b->layer, i, total, &tb) ||
		    !(ta.flags & TG_TENSOR_OUTPUT))
			continue;
		int per_token = ta.rank >= 2 && tb.shape[0] == total && total != tokens;
		long long cols = 1;
		for (int k = 1; k < ta.rank; k++)
			cols *= ta.shape[k];
		for (size_t c = 0; c < sizeof comps / sizeof *comps; c++)
			if (slice_differs(ctx, a, b, ta.name, comps[c], cols, per_token ? tokens : total, per_token ? first : 0,
			                  total, w, sizeof w) && !bad++)
				snprintf(why, sizeof why, "%s", w);
	}
	void *sa, *sb;
	size_t na, nb;
	if (tg_state(a->layer, &sa, &na, NULL) || tg_state(b->layer, &sb, &nb, NULL)) {
		printf("FAIL nccl/%s: %s\n", what, tg_last_error());
		fails++;
		return;
	}
	unsigned char *ha = fetch(ctx, sa, na), *hb = fetch(ctx, sb, nb);
	if (!ha || !hb || na != nb || memcmp(ha, hb, na)) {
		if (!bad++)
			snprintf(why, sizeof why, "the recipe state (scales, scale_inv, amaxes) differs");
	}
	free(ha);
	free(hb);
	if (bad) {
		printf("FAIL nccl/%s: %s (%d differences)\n", what, why, bad);
		fails++;
	} else
		printf("ok nccl/%s\n", what);
}

static int read_id(const char *path, unsigned char id[128], int wait_s)
{
	for (int t = 0; t <= wait_s * 10; t++) {
		FILE *f = fopen(path, "rb");
		if (f) {
			size_t got = fread(id, 1, 128, f);
			fclose(f);
			if (got == 128)
				return 1;
		}
		struct timespec ts = {0, 100000000};
		nanosleep(&ts, NULL);
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *spec = NULL, *id_path = NULL;
	long long tokens = 256;
	int rank = 0, nranks = 1, multi = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--tokens") && i + 1 < argc)
			tokens = atoll(argv[++i]);
		else if (!strcmp(argv[i], "--rank") && i + 1 < argc)
			rank = atoi(argv[++i]), multi = 1;
		else if (!strcmp(argv[i], "--nranks") && i + 1 < argc)
			nranks = atoi(argv[++i]), multi = 1;
		else if (!strcmp(argv[i], "--id") && i + 1 < argc)
			id_path = argv[++i];
		else if (argv[i][0] != '-' && !spec)
			spec = argv[i];
		else {
			fprintf(stderr, "usage: nccl_amax SPEC [--tokens T] [--rank R --nranks N --id FILE]\n");
			return 2;
		}
	}
	if (!spec || tokens < 1 || nranks < 1 || rank < 0 || rank >= nranks || tokens % nranks || (multi && !id_path)) {
		fprintf(stderr, "usage: nccl_amax SPEC [--tokens T] [--rank R --nranks N --id FILE] (T a multiple of N)\n");
		return 2;
	}
	TgContext *ctx;
	if (tg_context_create(NULL, &ctx)) {
		printf("skip nccl: no GPU (%s)\n", tg_last_error());
		return 0;
	}
	unsigned char id[128];
	if (rank == 0) {
		if (tg_nccl_unique_id(id)) {
			printf("skip nccl: %s\n", tg_last_error());
			tg_context_destroy(ctx);
			return 0;
		}
		if (multi) {
			char tmp[4096];
			snprintf(tmp, sizeof tmp, "%s.tmp", id_path);
			FILE *f = fopen(tmp, "wb");
			if (!f || fwrite(id, 1, 128, f) != 128 || fclose(f) || rename(tmp, id_path)) {
				printf("FAIL nccl/id: cannot write %s\n", id_path);
				return 1;
			}
		}
	} else if (!read_id(id_path, id, 60)) {
		printf("FAIL nccl/id: no id in %s after 60 s\n", id_path);
		return 1;
	}
	void *comm = NULL;
	if (tg_nccl_comm_create(nranks, id, rank, &comm)) {
		printf("FAIL nccl/comm: %s\n", tg_last_error());
		return 1;
	}
	long long mine = tokens / nranks, first = rank * mine;
	Run ranked, whole, alone; /* alone: this rank's rows without a communicator, for the reduction's cost */
	if (!setup(ctx, spec, tokens, first, mine, &ranked) || !setup(ctx, spec, tokens, 0, tokens, &whole) ||
	    !setup(ctx, spec, tokens, first, mine, &alone))
		return 1;
	if (tg_layer_set_comm(ranked.layer, comm, TG_REDUCE_ALL)) {
		printf("FAIL nccl/set_comm: %s\n", tg_last_error());
		return 1;
	}
	if (run(&ranked) && run(&whole) && run(&alone)) {
		char what[64];
		snprintf(what, sizeof what, "%s/rank%d-of-%d", multi ? "ranks" : "one-rank", rank, nranks);
		compare(ctx, what, &ranked, &whole, mine, first, tokens);
		/* run() is two tg_run + tg_step: per_run_us divides 10 calls of it by 20 */
		/* the best of 5 rounds, with and without the communicator alternating (shared machines drift) */
		double with = 1e30, without = 1e30, whole_us = 1e30;
		for (int k = 0; k < 5; k++) {
			double a = per_run_us(ctx, &ranked), b = per_run_us(ctx, &alone), c = per_run_us(ctx, &whole);
			with = a < with ? a : with, without = b < without ? b : without, whole_us = c < whole_us ? c : whole_us;
		}
		printf("time: tg_run + tg_step of %lld tokens: with the communicator %.1f us, without %.1f us (reduction "
		       "%.1f us a step); all %lld tokens on one GPU %.1f us\n",
		       mine, with, without, with - without, tokens, whole_us);
	} else
		fails++;
	teardown(ctx, &ranked);
	teardown(ctx, &whole);
	teardown(ctx, &alone);
	tg_nccl_comm_destroy(comm);
	tg_context_destroy(ctx);
	return fails ? 1 : 0;
}
