/* cold_time.c: launches timed from a cold, clean L2 (see cold_time.h). */
#include "cold_time.h"

#include <stdio.h>
#include <stdlib.h>

const char cold_read_entry[] = "tg_cold_read";
const char cold_read_src[] =
	"// tegen's timing flush: read n 16-byte words (the loads stay: their xor is compared)\n"
	"extern \"C\" __global__ void tg_cold_read(const uint4 *p, unsigned long long n)\n"
	"{\n"
	"\tunsigned x = 0;\n"
	"\tfor (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;\n"
	"\t     i += (unsigned long long)gridDim.x * blockDim.x) {\n"
	"\t\tconst uint4 v = __ldcg(p + i);\n"
	"\t\tx ^= v.x ^ v.y ^ v.z ^ v.w;\n"
	"\t}\n"
	"\tif (x == 0x5a5a5a5bu) // never: the buffer is zero\n"
	"\t\t__trap();\n"
	"}\n";

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;
	return x < y ? -1 : x > y;
}

float timing_median(float *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_float);
	return (v[(n - 1) / 2] + v[n / 2]) / 2;
}

#define CHECK(call, what)                                                                         \
	do {                                                                                          \
		CUresult r_ = (call);                                                                     \
		if (r_) {                                                                                 \
			snprintf(err, errlen, "%s: %s", what, cudrv_errstr(r_));                             \
			st = TG_ERR_CUDA;                                                                     \
			goto out;                                                                             \
		}                                                                                         \
	} while (0)

TgStatus cold_flush_alloc(CUdevice dev, CUdeviceptr *buf, size_t *bytes, char *err, size_t errlen)
{
	TgStatus st = TG_OK;
	int l2 = 0;
	*buf = 0;
	*bytes = 0;
	err[0] = 0;
	if (cu.cuDeviceGetAttribute(&l2, TG_CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, dev) || l2 <= 0)
		return TG_OK;
	CHECK(cu.cuMemAlloc_v2(buf, 2 * (size_t)l2), "allocating the L2 flush buffer");
	*bytes = 2 * (size_t)l2;
	CHECK(cu.cuMemsetD8_v2(*buf, 0, *bytes), "clearing the L2 flush buffer");
out:
	if (st && *buf) {
		cu.cuMemFree_v2(*buf);
		*buf = 0;
		*bytes = 0;
	}
	return st;
}

TgStatus cold_time(CUfunction read, CUdeviceptr flush, size_t flush_bytes, ColdLaunch launch, void *arg, int iters,
	float *median_us, char *err, size_t errlen)
{
	TgStatus st = TG_OK;
	CUevent e0 = NULL, e1 = NULL;
	float *t = calloc((size_t)iters, sizeof *t);
	unsigned long long words = flush_bytes / 16;
	void *args[] = {&flush, &words};
	err[0] = 0;
	if (!t) {
		snprintf(err, errlen, "out of host memory");
		st = TG_ERR_NOMEM;
		goto out;
	}
	CHECK(cu.cuEventCreate(&e0, 0), "cuEventCreate");
	CHECK(cu.cuEventCreate(&e1, 0), "cuEventCreate");
	for (int i = 0; i < 3 && !st; i++)
		st = launch(arg, NULL);
	if (st)
		goto out;
	CHECK(cu.cuCtxSynchronize(), "the warm-up launches");
	for (int i = 0; i < iters; i++) {
		if (words) /* grid-stride: any grid reads it all; two 1024-thread CTAs a SM of an H100 keep the loads deep */
			CHECK(cu.cuLaunchKernel(read, 264, 1, 1, 1024, 1, 1, 0, NULL, args, NULL), "the L2 flush");
		CHECK(cu.cuEventRecord(e0, NULL), "cuEventRecord");
		if ((st = launch(arg, NULL)))
			goto out;
		CHECK(cu.cuEventRecord(e1, NULL), "cuEventRecord");
		CHECK(cu.cuEventSynchronize(e1), "a timed launch");
		CHECK(cu.cuEventElapsedTime(&t[i], e0, e1), "cuEventElapsedTime");
	}
	*median_us = timing_median(t, iters) * 1000.0f;
out:
	if (e0)
		cu.cuEventDestroy_v2(e0);
	if (e1)
		cu.cuEventDestroy_v2(e1);
	free(t);
	return st;
}
