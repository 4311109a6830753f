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
