/* cli.h: what the tegen commands share: reading a spec file, the GPU present,
 * the planner's options, and loading a spec through the pipeline with its
 * error printed. Nothing here parses arguments or knows a command. */
#ifndef TG_CLI_H
#define TG_CLI_H

#include "gen.h"

#include <time.h>

/* cli_read_file reads a whole spec file into the arena (NUL-terminated); prints the error and returns NULL on failure. */
char *cli_read_file(Arena *a, const char *path, size_t *len);
/* cli_default_arch is the GPU present (sm_90a style), else sm_90a. */
Arch cli_default_arch(void);
/* cli_plan_options: the planner's options for the GPU present (none: heuristic
 * only) and the tuning DB under cachedir (NULL: the default cache dir). */
PlanOptions *cli_plan_options(Arena *a, const char *cachedir, long tokens);
/* cli_load_graph reads and checks a spec for the GPU present (else sm_90a); prints the error and returns NULL on failure. */
Graph *cli_load_graph(Arena *a, const char *path);
/* cli_load_plan is cli_load_graph, then the plan with o (NULL: heuristic). */
const Plan *cli_load_plan(Arena *a, const char *path, const PlanOptions *o);
/* cli_load_plan_targets is cli_load_plan with the spec's targets replaced by archs[0..narch)
 * (--arch; checked like the spec's, a message about one names --arch). */
const Plan *cli_load_plan_targets(Arena *a, const char *path, const char *const *archs, int narch,
	const PlanOptions *o);

/* cli_now_s is a monotonic clock in seconds, for the timings the commands print. */
static inline double cli_now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

#endif
