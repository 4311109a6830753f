/* nccl.c: NCCL through dlopen (see nccl.h). The types are NCCL's ABI: ncclComm_t a pointer,
 * ncclResult_t/ncclDataType_t/ncclRedOp_t ints (ncclFloat32 = 7, ncclMax = 2), ncclUniqueId
 * 128 bytes passed by value. */
#include "nccl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct { char internal[128]; } NcclId;
enum { NCCL_FLOAT32 = 7, NCCL_MAX = 2 };

static struct {
	int (*allreduce)(const void *, void *, size_t, int, int, void *, CUstream);
	int (*group_start)(void);
	int (*group_end)(void);
	const char *(*error_string)(int);
	int (*get_unique_id)(NcclId *);
	int (*comm_init_rank)(void **, int, NcclId, int);
	int (*comm_destroy)(void *);
	int (*comm_count)(void *, int *);
} nc;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char load_error[512];

static void load(void)
{
	const char *path = getenv("TEGEN_NCCL_LIB");
	const char *name = path && *path ? path : "libnccl.so.2";
	void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(load_error, sizeof load_error, "NCCL is not available: cannot load %s%s (%s); install NCCL or set "
			"TEGEN_NCCL_LIB to its libnccl.so.2", name, path && *path ? " (TEGEN_NCCL_LIB)" : "", dlerror());
		return;
	}
	struct { void **fn; const char *sym; } want[] = {
		{(void **)&nc.allreduce, "ncclAllReduce"}, {(void **)&nc.group_start, "ncclGroupStart"},
		{(void **)&nc.group_end, "ncclGroupEnd"}, {(void **)&nc.error_string, "ncclGetErrorString"},
		{(void **)&nc.get_unique_id, "ncclGetUniqueId"}, {(void **)&nc.comm_init_rank, "ncclCommInitRank"},
		{(void **)&nc.comm_destroy, "ncclCommDestroy"}, {(void **)&nc.comm_count, "ncclCommCount"},
	};
	for (size_t i = 0; i < sizeof want / sizeof *want; i++)
		if (!(*want[i].fn = dlsym(h, want[i].sym))) {
			snprintf(load_error, sizeof load_error, "NCCL (%s) lacks %s", name, want[i].sym);
			return;
		}
}

int nccl_load(char *err, size_t errlen)
{
	pthread_once(&once, load);
	if (!load_error[0])
		return 0;
	snprintf(err, errlen, "%s", load_error);
	return -1;
}

/* 0 for ncclSuccess, else -1 with NCCL's message. */
static int check(int r, const char *what, char *err, size_t errlen)
{
	if (!r)
		return 0;
	snprintf(err, errlen, "%s: %s (NCCL error %d)", what, nc.error_string ? nc.error_string(r) : "?", r);
	return -1;
}

int nccl_group_start(char *err, size_t errlen)
{
	return nccl_load(err, errlen) ? -1 : check(nc.group_start(), "ncclGroupStart", err, errlen);
}

int nccl_group_end(char *err, size_t errlen)
{
	return nccl_load(err, errlen) ? -1 : check(nc.group_end(), "ncclGroupEnd", err, errlen);
}

int nccl_allreduce_max(void *comm, CUdeviceptr buf, size_t count, CUstream s, char *err, size_t errlen)
{
	if (nccl_load(err, errlen))
		return -1;
	void *p = (void *)(uintptr_t)buf;
	return check(nc.allreduce(p, p, count, NCCL_FLOAT32, NCCL_MAX, comm, s), "ncclAllReduce (max of the amaxes)", err,
		errlen);
}

int nccl_unique_id(unsigned char id[128], char *err, size_t errlen)
{
	if (nccl_load(err, errlen))
		return -1;
	NcclId u;
	if (check(nc.get_unique_id(&u), "ncclGetUniqueId", err, errlen))
		return -1;
	memcpy(id, u.internal, sizeof u.internal);
	return 0;
}

int nccl_comm_init(void **comm, int nranks, const unsigned char id[128], int rank, char *err, size_t errlen)
{
	*comm = NULL;
	if (nccl_load(err, errlen))
		return -1;
	NcclId u;
	memcpy(u.internal, id, sizeof u.internal);
	return check(nc.comm_init_rank(comm, nranks, u, rank), "ncclCommInitRank", err, errlen);
}

void nccl_comm_destroy(void *comm)
{
	char err[8];
	if (comm && !nccl_load(err, sizeof err))
		nc.comm_destroy(comm);
}

int nccl_comm_size(void *comm, int *n, char *err, size_t errlen)
{
	return nccl_load(err, errlen) ? -1 : check(nc.comm_count(comm, n), "ncclCommCount", err, errlen);
}
