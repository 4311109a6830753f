/* parallel.h: a tiny fork-join loop for the CPU reference's heavy ops. */
#ifndef REF_PARALLEL_H
#define REF_PARALLEL_H

#include <stddef.h>

/* ref_threads: the number of threads ref_parallel_for uses: the online cores,
 * capped by TEGEN_THREADS when set (TEGEN_THREADS=1: no threads at all). */
int ref_threads(void);
/* ref_parallel_for runs f(ctx, i) once for every i in [0, n), spread over
 * min(ref_threads(), n) threads (the caller is one of them), and returns when
 * all are done. Which thread runs which i varies; f must write disjoint outputs
 * for different i, so results do not depend on the thread count. */
void ref_parallel_for(int n, void (*f)(void *ctx, int i), void *ctx);

/* ref_parallel_chunks runs f(ctx, i0, i1) over [0, n) cut into chunks of `chunk`
 * indices (the last shorter), spread as ref_parallel_for does; n <= 0 runs nothing. */
void ref_parallel_chunks(size_t n, size_t chunk, void (*f)(void *ctx, size_t i0, size_t i1), void *ctx);

/* Task sizes for ref_parallel_chunks (large: a task must outweigh a thread start): rows of a row op, elements of an
 * element-wise loop. */
enum { REF_TASK_ROWS = 64, REF_TASK_ELEMS = 1 << 16 };
/* A row or column count as ref_parallel_chunks' n (negative: none). */
static inline size_t ref_count(int n) { return n > 0 ? (size_t)n : 0; }

#endif
