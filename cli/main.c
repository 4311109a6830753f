/* main.c: the tegen command line.
 *
 * A table of subcommands: each is one function taking its own arguments and
 * one row in `commands` (name, usage, summary). `tegen SPEC` is the main job.
 * Exit status: 0 success, 1 a spec or tool error (the message on stderr),
 * 2 bad usage (a one-line hint on stderr). Nothing here leaks: each spec is
 * loaded into an arena that is freed before the next. */
#include "bench_cmd.h"
#include "cli.h"
#include "commands.h"
#include "compare.h"
#include "numerics.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int usage_error(const char *msg)
{
	fprintf(stderr, "tegen: %s (try: tegen --help)\n", msg);
	return 2;
}

/* ---- subcommands ---- */

static int cmd_check(int argc, char **argv)
{
	if (argc < 1)
		return usage_error("check needs at least one spec file");
	int failed = 0;
	for (int i = 0; i < argc; i++) {
		Arena *a = arena_new();
		if (cli_load_graph(a, argv[i]))
			printf("%s: ok\n", argv[i]);
		else
			failed = 1;
		arena_free(a);
	}
	return failed;
}

static int cmd_ir(int argc, char **argv)
{
	if (argc != 1)
		return usage_error("ir needs exactly one spec file");
	Arena *a = arena_new();
	Graph *g = cli_load_graph(a, argv[0]);
	if (g) {
		Buf b = {0};
		ir_print(g, &b);
		fputs(b.p, stdout);
		buf_free(&b);
	}
	arena_free(a);
	return g ? 0 : 1;
}

/* tegen SPEC [build options]: the main job: check, plan, emit and NVRTC-compile
 * every kernel for every target (no GPU needed); notes on emulated ops. */
static int cmd_main(int argc, char **argv)
{
	Arena *a = arena_new();
	Graph *g = cli_load_graph(a, argv[0]);
	if (g)
		for (int k = 0; k < g->nops; k++)
			if (g->ops[k].emulated)
				printf("%s: note: op%d: %s\n", argv[0], k, g->ops[k].emulated);
	arena_free(a);
	return g ? cmd_build(argc, argv) : 1;
}

typedef struct Command {
	const char *name;
	const char *args;
	const char *help;
	int (*run)(int argc, char **argv);
} Command;

static const Command commands[] = {
	{"check", "SPEC...", "validate specs; prints 'SPEC: ok' per file", cmd_check},
	{"ir", "SPEC", "print the validated op graph (tensors, shapes, recipes, ops in order)", cmd_ir},
	{"plan", "SPEC", "print the kernels the ops fuse into, tile shapes (tuned or heuristic) and GEMM calls; --tokens N, --cache-dir D", cmd_plan},
	{"emit", "SPEC [-o DIR]", "print (or write) the generated CUDA source", cmd_emit},
	{"build", "SPEC [--arch L]", "generate and NVRTC-compile every kernel (cached); --tokens N, --cache-dir D, -q", cmd_build},
	{"run", "SPEC [--check]", "on a GPU: run on random inputs (--tokens N), compare with the CPU reference, time", cmd_run},
	{"compare", "SPEC DIR_A DIR_B", "diff two runs' --out files (a GPU run, `run --cpu`) by the --check rules", cmd_compare},
	{"numerics", "SPEC", "per quantized tensor and recipe: SQNR, errors, underflow, saturation (CPU reference); --recipes L, --inputs K, --csv F, --chart F.svg", cmd_numerics},
	{"tune", "SPEC --tokens L", "on a GPU: time every tile-shape variant at L = N[,N...] tokens, record in the tuning DB; --iters K, --cache-dir D, --no-check", cmd_tune},
	{"bench", "--shapes|--hidden|--spec", "on a GPU: GEMMs per pass in BF16/FP8/MXFP8, kernel-only and with quantization; --csv F, --chart F.svg", cmd_bench},
	{"cache", "ls|clear|verify", "inspect, clear or verify the kernel cache (--cache-dir D)", cmd_cache},
};
#define NCOMMANDS ((int)(sizeof commands / sizeof *commands))

static void usage(FILE *f)
{
	fprintf(f, "usage: tegen SPEC              check SPEC and NVRTC-compile its kernels for its targets (= build)\n");
	for (int i = 0; i < NCOMMANDS; i++)
		fprintf(f, "       tegen %-6s %-16s %s\n", commands[i].name, commands[i].args, commands[i].help);
	fprintf(f, "       tegen --help | --version\n");
	fprintf(f, "exit status: 0 ok, 1 error in a spec or a tool, 2 bad usage\n");
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return usage_error("no spec or command given");
	const char *first = argv[1];
	if (!strcmp(first, "--help") || !strcmp(first, "-h") || !strcmp(first, "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(first, "--version")) {
		printf("tegen %s\n", TG_VERSION);
		return 0;
	}
	for (int i = 0; i < NCOMMANDS; i++) {
		if (strcmp(first, commands[i].name))
			continue;
		return commands[i].run(argc - 2, argv + 2);
	}
	char msg[256];
	if (first[0] == '-') {
		snprintf(msg, sizeof msg, "unknown option '%.64s'", first);
		return usage_error(msg);
	}
	struct stat st;
	if (!strchr(first, '.') && !strchr(first, '/') && stat(first, &st) != 0) {
		const char *names[NCOMMANDS];
		for (int i = 0; i < NCOMMANDS; i++)
			names[i] = commands[i].name;
		const char *sug = spell_suggest(first, names, NCOMMANDS);
		snprintf(msg, sizeof msg, "unknown command '%.64s'%s%s%s", first, sug ? " (did you mean '" : "", sug ? sug : "",
			sug ? "'?)" : "");
		return usage_error(msg);
	}
	return cmd_main(argc - 1, argv + 1);
}
