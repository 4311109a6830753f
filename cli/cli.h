/* cli.h: what the tegen commands share: reading a spec file, the GPU present,
 * the planner's options, loading a spec through the pipeline with its error
 * printed, and the one argument parser (a table of flags per command). Nothing
 * here knows a command. */
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

/* One command-line flag of a command: its spelling, what it takes, where it goes. */
typedef enum {
	FLAG_SWITCH, /* no value: *(int *)out = value */
	FLAG_STRING, /* the next argument, whatever it is: *(const char **)out */
	FLAG_INT,    /* the next argument through atoi: *(int *)out */
	FLAG_TOKENS, /* the next argument through cli_tokens (its own message when bad): *(long *)out */
} FlagKind;
typedef struct CliFlag {
	const char *name;
	FlagKind kind;
	void *out;
	int value; /* FLAG_SWITCH: what it stores */
} CliFlag;
/* A command's arguments: its flags, at most one positional argument, its usage string. */
typedef struct CliArgs {
	const char *usage;       /* "usage: tegen VERB ...\n", printed to stderr on bad usage */
	const CliFlag *flags;
	int nflags;
	const char **positional; /* where the one positional argument goes; NULL: none is allowed */
	bool required;           /* the positional argument must be there */
	bool read_all;           /* read past a bad argument (a later flag value is still judged), usage at the end */
} CliArgs;
/* cli_parse reads argv[0..argc) by the table c. Returns 0, or 2 (bad usage) after printing c->usage
 * (an unknown flag, a flag without its value, a second or a missing required positional) or a
 * flag value's own message (FLAG_TOKENS). */
int cli_parse(const CliArgs *c, int argc, char **argv);
/* The largest --tokens value: a dim's range in a spec (1..2^31-1), so every extent stays in 64 bits. */
#define CLI_MAX_TOKENS 2147483647L
/* cli_tokens reads a --tokens value (decimal digits only, 1..CLI_MAX_TOKENS); 0 after printing why if it is not one. */
long cli_tokens(const char *s);
/* cli_static_tokens: 1 (with a message) where --tokens was given (tokens > 0) for a graph with no dynamic dim, else 0. */
int cli_static_tokens(const Graph *g, const char *spec, long tokens);
/* cli_run_tokens settles `tegen run`'s --tokens for graph g (*tokens 0: not given): 1024 by default; a layer whose
 * extents are all fixed takes none (1 after printing why if one was given; else 1024, unused). 0 when settled. */
int cli_run_tokens(const Graph *g, const char *spec, long *tokens);
/* cli_tokens_label: "tokens=N", or "static shapes" for a layer without a dynamic dim (into buf). */
const char *cli_tokens_label(const Graph *g, long tokens, char *buf, size_t n);
/* cli_make_dir makes an output directory and its missing parents (or takes a writable one that exists); -1 after
 * printing why. */
int cli_make_dir(const char *dir);
/* cli_usage prints usage to stderr and returns 2, the exit status of bad usage. */
int cli_usage(const char *usage);

/* cli_now_s is a monotonic clock in seconds, for the timings the commands print. */
static inline double cli_now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

#endif
