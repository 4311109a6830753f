/* exhaustive_f32.c: every one of the 2^32 FP32 inputs through every FP32 ->
 * narrow conversion (BF16, FP16, E4M3, E5M2, E2M1) against the oracle of
 * fmt_oracle.h. Not part of CI (`ninja exhaustive`); two pthreads, prints
 * the elapsed time. */
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include "tg_formats.h"
#include "fmt_oracle.h"

static Oracle O[OF_N];

typedef struct Job {
	uint64_t lo, hi;
	uint64_t bad[OF_N];
	uint32_t first[OF_N];
} Job;

static void *work(void *arg)
{
	Job *j = arg;
	for (uint64_t b = j->lo; b < j->hi; b++) {
		uint32_t u = (uint32_t)b;
		float x;
		memcpy(&x, &u, 4);
		uint32_t got[OF_N] = {tg_f32_to_bf16(x), tg_f32_to_f16(x), tg_f32_to_e4m3(x),
		                      tg_f32_to_e5m2(x), tg_f32_to_e2m1(x)};
		for (int f = 0; f < OF_N; f++)
			if (got[f] != oracle_round(&O[f], u) && j->bad[f]++ == 0)
				j->first[f] = u;
	}
	return NULL;
}

int main(void)
{
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int f = 0; f < OF_N; f++)
		oracle_init(&O[f], f);
	Job j[2] = {{0, 1ull << 31, {0}, {0}}, {1ull << 31, 1ull << 32, {0}, {0}}};
	pthread_t th[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, work, &j[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	int failed = 0;
	for (int f = 0; f < OF_N; f++) {
		uint64_t bad = j[0].bad[f] + j[1].bad[f];
		if (bad) {
			printf("FAIL all_f32_%s: %llu mismatches, first input 0x%08x\n", O[f].name,
			       (unsigned long long)bad, j[0].bad[f] ? j[0].first[f] : j[1].first[f]);
			failed = 1;
		} else {
			printf("ok all_f32_%s\n", O[f].name);
		}
		free(O[f].v);
	}
	printf("# elapsed %.1f s (2 threads)\n",
	       (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
	return failed;
}
