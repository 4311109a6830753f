/* pipeline.h: the one way through the compiler, from spec text to a checked
 * graph, a plan and the CUDA source of its kernels:
 *
 *   text --spec_load--> Spec --ir_build--> Graph --plan_build_opts--> Plan --emit_kernel--> sources
 *
 * The CLI commands and the runtime both call these, so they cannot drift.
 * Errors: NULL (or -1) with the message in d->msg, as the stages give it. */
#ifndef TG_PIPELINE_H
#define TG_PIPELINE_H

#include "gen.h"

/* pipeline_graph parses and checks spec text (file names it in messages). arch is the
 * target when the spec names none; with arch_only, the spec's targets are ignored and
 * the graph is checked for arch alone (the runtime compiles for the GPU it runs on). */
Graph *pipeline_graph(Arena *a, Diag *d, const char *file, const char *text, size_t len, Arch arch, bool arch_only);
/* pipeline_plan is pipeline_graph, then plan_build_opts with o (NULL: the heuristic plan). */
Plan *pipeline_plan(Arena *a, Diag *d, const char *file, const char *text, size_t len, Arch arch, bool arch_only,
	const PlanOptions *o);

/* pipeline_plan_targets is pipeline_plan with the spec's targets replaced by archs[0..narch)
 * (narch >= 1; e.g. a command line's --arch), checked as the spec's own would be: a message
 * about one names `origin` instead of a line of the spec. */
Plan *pipeline_plan_targets(Arena *a, Diag *d, const char *file, const char *text, size_t len,
	const char *const *archs, int narch, const char *origin, const PlanOptions *o);

/* One generated kernel's source, ready for NVRTC. */
typedef struct KernelSource {
	int kernel;           /* index in Plan.kernels */
	const char *entry;    /* its extern "C" entry symbol */
	const char *file;     /* "LAYER.KERNEL.cu", the name compiler messages show */
	const char *code;     /* the CUDA source */
} KernelSource;
/* pipeline_emit emits every generated kernel of p, in plan order, into *out (in the arena;
 * GEMM calls have no source). Returns the count, or -1 with the message in d->msg. */
int pipeline_emit(Arena *a, Diag *d, const Plan *p, KernelSource **out);

#endif
