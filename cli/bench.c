/* bench.c: GPU timing behind bench.h.
 *
 * Pools: 32 MiB per element format, made once on the host (xorshift), uploaded
 * once; buffers are filled from them with device-to-device copies at staggered
 * offsets, so filling a 1 GiB operand costs a millisecond, not a host loop.
 * GEMMs: gemm_run on pre-filled operands, all runs launched back to back with
 * an event before each and one after the last (the GPU never idles between
 * runs, so the gaps measure the GEMMs). Layers: the public runtime API, with
 * the inputs re-bound to another rotating set before each run and
 * tg_run_timed's per-kernel events. Every allocation is freed on every path. */
#include "bench.h"

#include "rt_internal.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define POOL_BYTES ((size_t)32 << 20)
#define MAX_SETS 8

enum { POOL_BF16, POOL_E4M3, POOL_E5M2, POOL_COUNT };

struct BenchGpu {
	CUdevice dev;
	CUcontext ctx;
	CUstream s;
	GemmCtx *g;
	int cc, sms;
	size_t l2;
	char name[128];
	int iters, warmup;
	int cooldown_ms;              /* idle before each GEMM's warm-up (bench_gpu_set_cooldown) */
	CUevent ev[BENCH_MAX_ITERS + 1];
	int nev;
	CUdeviceptr pool[POOL_COUNT];
	CUdeviceptr scalars;          /* per-tensor scale_invs, 16-byte slots */
};

static uint64_t rng = 0x2545f4914f6cdd1dull;
static uint64_t rnext(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Random valid values: bf16 +-[2^-7, 2), e4m3 +-[2^-3, 8), e5m2 +-[2^-3, 8). */
static void make_pool(unsigned char *h, int fmt)
{
	for (size_t j = 0; j < POOL_BYTES; j += 8) {
		uint64_t r = rnext();
		for (int q = 0; q < 8; q += (fmt == POOL_BF16 ? 2 : 1)) {
			uint64_t x = r >> (q * 8);
			if (fmt == POOL_BF16) {
				uint16_t v = (uint16_t)(((x & 1) << 15) | ((120 + (x >> 1) % 8) << 7) | ((x >> 4) & 0x7f));
				memcpy(h + j + q, &v, 2);
			} else if (fmt == POOL_E4M3) {
				h[j + q] = (uint8_t)((x & 0x80) | ((4 + (x >> 1) % 6) << 3) | ((x >> 4) & 7));
			} else {
				h[j + q] = (uint8_t)((x & 0x80) | ((12 + (x >> 1) % 6) << 2) | ((x >> 4) & 3));
			}
		}
	}
}

int bench_gpu_open(int iters, int warmup, BenchGpu **out, char *why, size_t whylen)
{
	*out = NULL;
	if (cudrv_load(why, whylen))
		return -1;
	int ndev = 0;
	CUresult r = cu.cuDeviceGetCount(&ndev);
	if (r || ndev < 1)
		return gemm_fail(why, whylen, -1, "no CUDA device%s%s", r ? ": " : "", r ? cudrv_errstr(r) : "");
	if (iters < 1 || iters > BENCH_MAX_ITERS || warmup < 0)
		return gemm_fail(why, whylen, -1, "iterations must be 1..%d", BENCH_MAX_ITERS);
	BenchGpu *b = calloc(1, sizeof *b);
	unsigned char *h = malloc(POOL_BYTES);
	if (!b || !h) {
		free(b);
		free(h);
		return gemm_fail(why, whylen, -1, "out of host memory");
	}
	b->iters = iters;
	b->warmup = warmup;
	int maj = 0, min = 0, l2 = 0;
	const char *what = "cuDeviceGet";
	if ((r = cu.cuDeviceGet(&b->dev, 0)))
		goto bad;
	what = "cuDevicePrimaryCtxRetain";
	if ((r = cu.cuDevicePrimaryCtxRetain(&b->ctx, b->dev))) {
		b->ctx = NULL;
		goto bad;
	}
	what = "cuCtxSetCurrent";
	if ((r = cu.cuCtxSetCurrent(b->ctx)))
		goto bad;
	cu.cuDeviceGetName(b->name, sizeof b->name, b->dev);
	cu.cuDeviceGetAttribute(&maj, TG_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, b->dev);
	cu.cuDeviceGetAttribute(&min, TG_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, b->dev);
	cu.cuDeviceGetAttribute(&b->sms, TG_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, b->dev);
	cu.cuDeviceGetAttribute(&l2, TG_CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, b->dev);
	b->cc = maj * 10 + min;
	b->l2 = l2 > 0 ? (size_t)l2 : (size_t)60 << 20;
	what = "cuStreamCreate";
	if ((r = cu.cuStreamCreate(&b->s, 0))) {
		b->s = NULL;
		goto bad;
	}
	what = "cuEventCreate";
	for (b->nev = 0; b->nev <= iters; b->nev++)
		if ((r = cu.cuEventCreate(&b->ev[b->nev], 0)))
			goto bad;
	what = "cuMemAlloc (random pools)";
	for (int f = 0; f < POOL_COUNT; f++) {
		if ((r = cu.cuMemAlloc_v2(&b->pool[f], POOL_BYTES))) {
			b->pool[f] = 0;
			goto bad;
		}
		make_pool(h, f);
		if ((r = cu.cuMemcpyHtoD_v2(b->pool[f], h, POOL_BYTES)))
			goto bad;
	}
	float sc[64];
	for (int i = 0; i < 64; i++)
		sc[i] = 1.0f / 16;
	if ((r = cu.cuMemAlloc_v2(&b->scalars, sizeof sc))) {
		b->scalars = 0;
		goto bad;
	}
	if ((r = cu.cuMemcpyHtoD_v2(b->scalars, sc, sizeof sc)))
		goto bad;
	free(h);
	h = NULL;
	char err[512];
	b->g = gemm_ctx_create(0, err, sizeof err);
	if (!b->g) {
		gemm_fail(why, whylen, -1, "cuBLASLt: %s", err);
		bench_gpu_close(b);
		return -1;
	}
	*out = b;
	return 0;
bad:
	gemm_fail(why, whylen, -1, "%s: %s", what, cudrv_errstr(r));
	free(h);
	bench_gpu_close(b);
	return -1;
}

void bench_gpu_close(BenchGpu *b)
{
	if (!b)
		return;
	if (b->s)
		cu.cuStreamSynchronize(b->s);
	gemm_ctx_destroy(b->g);
	for (int f = 0; f < POOL_COUNT; f++)
		if (b->pool[f])
			cu.cuMemFree_v2(b->pool[f]);
	if (b->scalars)
		cu.cuMemFree_v2(b->scalars);
	for (int i = 0; i < b->nev; i++)
		cu.cuEventDestroy_v2(b->ev[i]);
	if (b->s)
		cu.cuStreamDestroy_v2(b->s);
	if (b->ctx)
		cu.cuDevicePrimaryCtxRelease(b->dev);
	free(b);
}

void bench_gpu_describe(const BenchGpu *b, char *buf, size_t len)
{
	snprintf(buf, len, "%s (sm_%d, %d SMs, %zu MiB L2)", b->name, b->cc, b->sms, b->l2 >> 20);
}

int bench_gpu_cc(const BenchGpu *b) { return b->cc; }

void bench_gpu_set_cooldown(BenchGpu *b, int ms) { b->cooldown_ms = ms > 0 ? ms : 0; }
CUstream bench_gpu_stream(const BenchGpu *b) { return b->s; }

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, c = *(const double *)y;
	return a < c ? -1 : a > c;
}

/* Median (mean of the middle two for even n), min, max; sorts v. */
static void summarize(double *v, int n, BenchTime *t)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	t->median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	t->min = v[0];
	t->max = v[n - 1];
	t->runs = n;
}

/* Fills n bytes at dst from a pool, starting at a staggered offset. */
static CUresult fill(BenchGpu *b, CUdeviceptr dst, size_t n, int fmt, size_t offset)
{
	size_t done = 0;
	offset = (offset * 4096 + 256 * (size_t)fmt) % POOL_BYTES; /* keep 2-byte alignment for bf16 */
	while (done < n) {
		size_t off = (offset + done) % POOL_BYTES, chunk = POOL_BYTES - off;
		if (chunk > n - done)
			chunk = n - done;
		CUresult r = cu.cuMemcpyDtoDAsync_v2(dst + done, b->pool[fmt] + off, chunk, b->s);
		if (r)
			return r;
		done += chunk;
	}
	return 0;
}

/* Rotating sets: at least 2, enough to cover 3x L2, at most MAX_SETS. */
static int sets_for(const BenchGpu *b, size_t set_bytes)
{
	size_t want = set_bytes ? (3 * b->l2 + set_bytes - 1) / set_bytes : 2;
	return want < 2 ? 2 : want > MAX_SETS ? MAX_SETS : (int)want;
}

static void free_all(CUdeviceptr *p, int n)
{
	for (int i = 0; i < n; i++)
		if (p[i]) {
			cu.cuMemFree_v2(p[i]);
			p[i] = 0;
		}
}

int bench_copy_bandwidth(BenchGpu *b, double *gbs, char *err, size_t errlen)
{
	size_t n = (size_t)512 << 20;
	CUdeviceptr src = 0, dst = 0;
	while (n >= ((size_t)64 << 20)) {
		if (!cu.cuMemAlloc_v2(&src, n) && !cu.cuMemAlloc_v2(&dst, n))
			break;
		if (src)
			cu.cuMemFree_v2(src);
		src = dst = 0;
		n /= 2;
	}
	if (!src)
		return gemm_fail(err, errlen, BENCH_ENOMEM, "copy bandwidth: cannot allocate 2 x 64 MiB");
	int runs = b->iters < 10 ? 10 : b->iters;
	if (runs > b->nev - 1)
		runs = b->nev - 1;
	CUresult r = 0;
	for (int i = 0; i < 2 && !r; i++)
		r = cu.cuMemcpyDtoDAsync_v2(dst, src, n, b->s);
	for (int i = 0; i < runs && !r; i++) {
		r = cu.cuEventRecord(b->ev[i], b->s);
		if (!r)
			r = cu.cuMemcpyDtoDAsync_v2(dst, src, n, b->s);
	}
	if (!r)
		r = cu.cuEventRecord(b->ev[runs], b->s);
	if (!r)
		r = cu.cuEventSynchronize(b->ev[runs]);
	double v[BENCH_MAX_ITERS];
	for (int i = 0; i < runs && !r; i++) {
		float ms = 0;
		r = cu.cuEventElapsedTime(&ms, b->ev[i], b->ev[i + 1]);
		v[i] = ms;
	}
	cu.cuStreamSynchronize(b->s);
	cu.cuMemFree_v2(src);
	cu.cuMemFree_v2(dst);
	if (r)
		return gemm_fail(err, errlen, GEMM_ECUDA, "copy bandwidth: %s", cudrv_errstr(r));
	BenchTime t;
	summarize(v, runs, &t);
	*gbs = 2.0 * (double)n / (t.median * 1e-3) / 1e9;
	return 0;
}

int bench_gemm_check(const BenchGpu *b, const GemmDesc *d, char *err, size_t errlen)
{
	return gemm_check(b->g, d, err, errlen);
}

static int dt_bytes(int t) { return t == DT_BF16 || t == DT_F16 ? 2 : t == DT_F32 ? 4 : 1; }
static int dt_pool(int t) { return t == DT_E4M3 ? POOL_E4M3 : t == DT_E5M2 ? POOL_E5M2 : POOL_BF16; }

/* Bytes of one operand's scales ([rows][k] operand) and the fill: 32-bit words (w32) or bytes. */
static size_t scale_bytes(const GemmDesc *d, int rows, int blk128)
{
	size_t kb = ((size_t)d->k + 127) / 128, rb = ((size_t)rows + 127) / 128;
	if (d->scale_mode == GEMM_SCALE_BLOCK)
		return 4 * (blk128 ? rb * kb : kb * (size_t)rows);
	if (d->scale_mode == GEMM_SCALE_MXFP8) { /* swizzled: rows padded to 128, K/32 scale columns padded to 4 */
		size_t sc = ((size_t)d->k + 31) / 32;
		return rb * 128 * ((sc + 3) / 4 * 4);
	}
	return 0;
}

int bench_gemm(BenchGpu *b, const GemmDesc *d, BenchTime *t, char *err, size_t errlen)
{
	memset(t, 0, sizeof *t);
	int rc = gemm_check(b->g, d, err, errlen);
	if (rc)
		return rc;
	size_t ba = (size_t)d->m * (size_t)d->k * (size_t)dt_bytes(d->a_dtype);
	size_t bb = (size_t)d->n * (size_t)d->k * (size_t)dt_bytes(d->b_dtype);
	size_t bd = (size_t)d->m * (size_t)d->n * (size_t)dt_bytes(d->d_dtype);
	size_t sa = scale_bytes(d, d->m, d->a_block128x128), sb = scale_bytes(d, d->n, d->b_block128x128);
	int want = sets_for(b, ba + bb);
	CUdeviceptr A[MAX_SETS] = {0}, B[MAX_SETS] = {0}, SA = 0, SB = 0, D = 0;
	int nset = 0;
	CUresult r = 0;
	if (cu.cuMemAlloc_v2(&D, bd ? bd : 16)) {
		D = 0;
		return gemm_fail(err, errlen, BENCH_ENOMEM, "cannot allocate D (%zu MiB)", bd >> 20);
	}
	if (sa && cu.cuMemAlloc_v2(&SA, sa))
		SA = 0;
	if (sb && cu.cuMemAlloc_v2(&SB, sb))
		SB = 0;
	if ((sa && !SA) || (sb && !SB)) {
		rc = gemm_fail(err, errlen, BENCH_ENOMEM, "cannot allocate the scales");
		goto out;
	}
	for (; nset < want; nset++) {
		if (cu.cuMemAlloc_v2(&A[nset], ba)) {
			A[nset] = 0;
			break;
		}
		if (cu.cuMemAlloc_v2(&B[nset], bb)) {
			cu.cuMemFree_v2(A[nset]);
			A[nset] = 0;
			break;
		}
		if ((r = fill(b, A[nset], ba, dt_pool(d->a_dtype), (size_t)nset * 7919)) ||
			(r = fill(b, B[nset], bb, dt_pool(d->b_dtype), (size_t)nset * 104729 + 4099))) {
			nset++;
			rc = gemm_fail(err, errlen, GEMM_ECUDA, "filling operands: %s", cudrv_errstr(r));
			goto out;
		}
	}
	if (!nset) {
		rc = gemm_fail(err, errlen, BENCH_ENOMEM, "cannot allocate the operands (%zu + %zu MiB)", ba >> 20, bb >> 20);
		goto out;
	}
	if (d->scale_mode == GEMM_SCALE_BLOCK) { /* scale_inv 1/16 everywhere */
		float v = 1.0f / 16;
		unsigned bits;
		memcpy(&bits, &v, 4);
		if ((r = cu.cuMemsetD32Async(SA, bits, sa / 4, b->s)) || (r = cu.cuMemsetD32Async(SB, bits, sb / 4, b->s))) {
			rc = gemm_fail(err, errlen, GEMM_ECUDA, "setting scales: %s", cudrv_errstr(r));
			goto out;
		}
	} else if (d->scale_mode == GEMM_SCALE_MXFP8) { /* E8M0 127 = 1.0 (padding included) */
		if ((r = cu.cuMemsetD8Async(SA, 127, sa, b->s)) || (r = cu.cuMemsetD8Async(SB, 127, sb, b->s))) {
			rc = gemm_fail(err, errlen, GEMM_ECUDA, "setting scales: %s", cudrv_errstr(r));
			goto out;
		}
	}
	GemmArgs a;
	memset(&a, 0, sizeof a);
	a.d = (void *)(uintptr_t)D;
	a.alpha = 1.0f;
	if (d->scale_mode == GEMM_SCALE_TENSOR) {
		a.a_scale_inv = (const float *)(uintptr_t)b->scalars;
		a.b_scale_inv = (const float *)(uintptr_t)(b->scalars + 16);
	} else if (d->scale_mode != GEMM_SCALE_NONE) {
		a.a_scale_inv = (const float *)(uintptr_t)SA;
		a.b_scale_inv = (const float *)(uintptr_t)SB;
	}
	if (b->cooldown_ms > 0) { /* the fills done, the GPU idle: a cool start, as every other GEMM gets */
		cu.cuStreamSynchronize(b->s);
		struct timespec ts = {b->cooldown_ms / 1000, (long)(b->cooldown_ms % 1000) * 1000000L};
		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
	}
	int total = b->warmup + b->iters;
	for (int i = 0; i < total && !rc; i++) {
		a.a = (const void *)(uintptr_t)A[i % nset];
		a.b = (const void *)(uintptr_t)B[i % nset];
		if (i >= b->warmup && (r = cu.cuEventRecord(b->ev[i - b->warmup], b->s)))
			break;
		rc = gemm_run(b->g, d, &a, b->s, err, errlen);
	}
	if (!rc && !r)
		r = cu.cuEventRecord(b->ev[b->iters], b->s);
	if (!rc && !r)
		r = cu.cuEventSynchronize(b->ev[b->iters]);
	if (!rc && r)
		rc = gemm_fail(err, errlen, GEMM_ECUDA, "timing: %s", cudrv_errstr(r));
	if (!rc) {
		double v[BENCH_MAX_ITERS];
		for (int i = 0; i < b->iters && !rc; i++) {
			float ms = 0;
			if ((r = cu.cuEventElapsedTime(&ms, b->ev[i], b->ev[i + 1])))
				rc = gemm_fail(err, errlen, GEMM_ECUDA, "cuEventElapsedTime: %s", cudrv_errstr(r));
			v[i] = ms;
		}
		if (!rc) {
			summarize(v, b->iters, t);
			t->sets = nset;
		}
	}
out:
	cu.cuStreamSynchronize(b->s);
	free_all(A, nset);
	free_all(B, nset);
	if (SA)
		cu.cuMemFree_v2(SA);
	if (SB)
		cu.cuMemFree_v2(SB);
	cu.cuMemFree_v2(D);
	return rc;
}

/* The first line of a message, without a trailing newline. */
static void first_line(char *dst, size_t len, const char *src)
{
	size_t n = strcspn(src, "\n");
	snprintf(dst, len, "%.*s", (int)(n < len ? n : len - 1), src);
}

int bench_layer(BenchGpu *b, TgContext *ctx, const char *name, const char *text, const BenchInput *in, int nin,
	const char *const *outs, int nout, double *out_ms, char *err, size_t errlen)
{
	for (int j = 0; j < nout; j++)
		out_ms[j] = 0;
	if (nin > 16)
		return gemm_fail(err, errlen, -1, "at most 16 inputs");
	TgLayer *l = NULL;
	if (tg_layer_create(ctx, name, text, strlen(text), &l)) {
		first_line(err, errlen, tg_last_error());
		return -1;
	}
	int rc = 0;
	CUdeviceptr buf[16][MAX_SETS];
	memset(buf, 0, sizeof buf);
	int nset = 0, nk = 0;
	float *one = NULL;
	double *ms = NULL;
	if (tg_layer_load(l)) {
		rc = gemm_fail(err, errlen, -1, "compiling the quantize kernels: %s", tg_last_error());
		goto out;
	}
	size_t set_bytes = 0;
	for (int i = 0; i < nin; i++)
		set_bytes += (size_t)in[i].rows * (size_t)in[i].cols * 2;
	int want = sets_for(b, set_bytes);
	for (; nset < want; nset++) {
		int got = 1;
		for (int i = 0; i < nin && got; i++) {
			size_t n = (size_t)in[i].rows * (size_t)in[i].cols * 2;
			if (cu.cuMemAlloc_v2(&buf[i][nset], n ? n : 16)) {
				buf[i][nset] = 0;
				got = 0;
			} else if (fill(b, buf[i][nset], n, POOL_BF16, (size_t)nset * 7919 + (size_t)i * 131)) {
				got = 0;
			}
		}
		if (!got) {
			for (int i = 0; i < nin; i++)
				if (buf[i][nset]) {
					cu.cuMemFree_v2(buf[i][nset]);
					buf[i][nset] = 0;
				}
			break;
		}
	}
	cu.cuStreamSynchronize(b->s);
	if (!nset) {
		rc = gemm_fail(err, errlen, BENCH_ENOMEM, "cannot allocate the inputs (%zu MiB)", set_bytes >> 20);
		goto out;
	}
	nk = tg_layer_kernel_count(l);
	one = calloc((size_t)(nk ? nk : 1), sizeof *one);
	ms = calloc((size_t)(nk ? nk : 1) * (size_t)b->iters, sizeof *ms);
	if (!one || !ms) {
		rc = gemm_fail(err, errlen, -1, "out of host memory");
		goto out;
	}
	for (int it = 0; it < b->warmup + b->iters && !rc; it++) {
		for (int i = 0; i < nin && !rc; i++) {
			TgTensorDesc t;
			memset(&t, 0, sizeof t);
			t.data = (void *)(uintptr_t)buf[i][(it + i) % nset];
			t.dtype = TG_BF16;
			t.rank = 2;
			t.shape[0] = in[i].rows;
			t.shape[1] = in[i].cols;
			if (tg_bind(l, in[i].name, &t))
				rc = gemm_fail(err, errlen, -1, "%s", tg_last_error());
		}
		if (!rc && tg_run_timed(l, b->s, one, nk))
			rc = gemm_fail(err, errlen, -1, "%s", tg_last_error());
		if (!rc && it >= b->warmup)
			for (int k = 0; k < nk; k++)
				ms[(size_t)k * (size_t)b->iters + (size_t)(it - b->warmup)] = one[k];
	}
	if (!rc) {
		const Plan *p = tg_layer_plan(l);
		const Graph *g = p->g;
		for (int k = 0; k < nk; k++) {
			const Kernel *kk = &p->kernels[k];
			if (k == p->update_kernel || kk->kind != KERNEL_GENERATED || kk->nops < 1)
				continue;
			int o = g->ops[kk->ops[0]].arg[ARG_OUT];
			if (o < 0)
				continue;
			BenchTime t;
			summarize(ms + (size_t)k * (size_t)b->iters, b->iters, &t);
			for (int j = 0; j < nout; j++)
				if (!strcmp(g->tensors[o].name, outs[j]))
					out_ms[j] += t.median;
		}
	}
out:
	cu.cuStreamSynchronize(b->s);
	tg_layer_destroy(l);
	for (int s = 0; s < nset; s++)
		for (int i = 0; i < nin; i++)
			if (buf[i][s])
				cu.cuMemFree_v2(buf[i][s]);
	free(one);
	free(ms);
	return rc;
}
