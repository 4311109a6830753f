/* parallel.c: ref_parallel_for on pthreads. Threads take the next index from a
 * shared atomic counter (dynamic scheduling: tasks of uneven cost balance), and
 * are created and joined per call: the reference's tasks are large, so the
 * thread start-up cost does not matter and no pool state outlives a call. */
#include "parallel.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

typedef struct Loop {
	atomic_int next;
	int n;
	void (*f)(void *ctx, int i);
	void *ctx;
} Loop;

static void *worker(void *arg)
{
	Loop *l = arg;
	for (int i; (i = atomic_fetch_add(&l->next, 1)) < l->n;)
		l->f(l->ctx, i);
	return NULL;
}

int ref_threads(void)
{
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	const char *env = getenv("TEGEN_THREADS");
	long cap = env && *env ? strtol(env, NULL, 10) : 0;
	if (cores < 1)
		cores = 1;
	if (cap >= 1 && cap < cores)
		cores = cap;
	return cores > 256 ? 256 : (int)cores;
}

void ref_parallel_for(int n, void (*f)(void *ctx, int i), void *ctx)
{
	int nt = ref_threads();
	if (nt > n)
		nt = n;
	Loop l = {0, n, f, ctx};
	atomic_init(&l.next, 0);
	pthread_t th[256];
	int started = 0;
	for (int t = 1; t < nt; t++, started++)
		if (pthread_create(&th[started], NULL, worker, &l))
			break; /* fewer threads: the others take the rest */
	worker(&l);
	for (int t = 0; t < started; t++)
		pthread_join(th[t], NULL);
}

typedef struct Chunks {
	size_t n, chunk;
	void (*f)(void *ctx, size_t i0, size_t i1);
	void *ctx;
} Chunks;

static void chunk_task(void *ctx, int i)
{
	const Chunks *c = ctx;
	size_t i0 = (size_t)i * c->chunk, i1 = i0 + c->chunk < c->n ? i0 + c->chunk : c->n;
	c->f(c->ctx, i0, i1);
}

void ref_parallel_chunks(size_t n, size_t chunk, void (*f)(void *ctx, size_t i0, size_t i1), void *ctx)
{
	if (chunk < 1)
		chunk = 1;
	size_t count = (n + chunk - 1) / chunk;
	while (count > (size_t)1 << 30) /* int task indices */
		chunk *= 2, count = (n + chunk - 1) / chunk;
	Chunks c = {n, chunk, f, ctx};
	ref_parallel_for((int)count, chunk_task, &c);
}
