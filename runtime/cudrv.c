/* cudrv.c: load the CUDA driver API with dlopen (see cudrv.h).
 * Guarantees: never aborts when the driver is missing; cuInit runs once. */
#include "cudrv.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

CuDriver cu;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char load_error[256];

static void load(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(load_error, sizeof load_error, "no CUDA driver (libcuda.so.1 not found)");
		return;
	}
#define X(name, args) \
	if (!(*(void **)&cu.name = dlsym(h, #name))) { \
		snprintf(load_error, sizeof load_error, "CUDA driver lacks %s", #name); \
		return; \
	}
	CUDRV_FUNCS(X)
#undef X
#define X(name, args) *(void **)&cu.name = dlsym(h, #name);
	CUDRV_OPTIONAL(X)
#undef X
	CUresult r = cu.cuInit(0);
	if (r != 0) {
		snprintf(load_error, sizeof load_error, "cuInit failed: %s", cudrv_errstr(r));
		cu.cuInit = NULL;
		return;
	}
	int n = 0;
	if (cu.cuDeviceGetCount(&n) != 0 || n == 0) {
		snprintf(load_error, sizeof load_error, "no CUDA device");
		cu.cuInit = NULL;
	}
}

int cudrv_load(char *why, size_t whylen)
{
	pthread_once(&once, load);
	if (cu.cuInit && !load_error[0])
		return 0;
	if (why && whylen)
		snprintf(why, whylen, "%s", load_error[0] ? load_error : "CUDA driver unavailable");
	return -1;
}

const char *cudrv_errstr(CUresult r)
{
	const char *s = NULL;
	if (cu.cuGetErrorString && cu.cuGetErrorString(r, &s) == 0 && s)
		return s;
	static __thread char buf[32];
	snprintf(buf, sizeof buf, "CUDA error %d", r);
	return buf;
}
