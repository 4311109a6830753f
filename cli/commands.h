/* commands.h: CLI subcommands beyond check/ir (see commands.c); tune_cmd.c adds tune. */
#ifndef TG_COMMANDS_H
#define TG_COMMANDS_H

#include "gen.h"

/* The most --arch targets (more is an error, not a silent cut). */
#define CLI_MAX_ARCHS 16
/* cli_archs splits an --arch list into out[CLI_MAX_ARCHS]: every element a known target, none
 * empty or twice; the count, or -1 after printing why (a usage error). */
int cli_archs(Arena *a, const char *list, const char **out);
/* cmd_tune: `tegen tune SPEC --tokens N[,N...]` on a GPU (tune_cmd.c). */
int cmd_tune(int argc, char **argv);
/* cmd_plan: `tegen plan SPEC`, the kernels and launch shapes. */
int cmd_plan(int argc, char **argv);
/* cmd_emit: `tegen emit SPEC [-o DIR]`, the generated CUDA source. */
int cmd_emit(int argc, char **argv);
/* cmd_build: `tegen build SPEC [--arch LIST]` and `tegen SPEC`, NVRTC-compile every kernel. */
int cmd_build(int argc, char **argv);
/* cmd_cache: `tegen cache ls|clear|verify`. */
int cmd_cache(int argc, char **argv);
/* cmd_run: `tegen run SPEC --tokens N [--check]` on the GPU. */
int cmd_run(int argc, char **argv);

#endif
