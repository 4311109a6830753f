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

/* cli_now_s is a monotonic clock in seconds, for the timings the commands print. */
static inline double cli_now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* One command-line flag: its spelling, what it takes, where it goes. */
typedef enum {
	FLAG_SWITCH,   /* no value: *(int *)out = 1 */
	FLAG_STRING,   /* the next argument, whatever it is: *(const char **)out */
	FLAG_INT,      /* the next argument through atoi: *(int *)out */
	FLAG_LONG,     /* the next argument through atol: *(long *)out */
	FLAG_POSITIVE, /* atol of the next argument, which must be > 0: *(long *)out */
} FlagKind;
typedef struct CliFlag { const char *name; FlagKind kind; void *out; } CliFlag;
/* cli_parse reads argv: the flags of the table, each with its value, and one
 * positional argument (the spec) into *positional (left as is if none). Returns
 * 0, or -1 for bad usage: an unknown flag, a flag without its value (or with a
 * value <= 0 for FLAG_POSITIVE), a second positional. Prints nothing. */
int cli_parse(int argc, char **argv, const CliFlag *flags, int nflags, const char **positional);

#endif
