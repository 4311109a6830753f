/* pipeline.c: spec text -> Graph -> Plan -> kernel sources, the chain every
 * user of the compiler runs (see pipeline.h). It adds nothing to the stages:
 * the same input gives the same graph, plan and bytes of source everywhere. */
#include "pipeline.h"

Graph *pipeline_graph(Arena *a, Diag *d, const char *file, const char *text, size_t len, Arch arch, bool arch_only)
{
	Spec *s = spec_load(a, d, file, text, len);
	if (s && arch_only)
		s->ntargets = 0; /* ir_build then checks for arch alone */
	if (s && s->backward)
		s = spec_derive_backward(a, d, s, arch);
	if (s && s->optim.kind != OPTIM_NONE)
		s = spec_derive_optimizer(a, d, s, arch);
	return s ? ir_build(a, d, s, arch) : NULL;
}

Plan *pipeline_plan(Arena *a, Diag *d, const char *file, const char *text, size_t len, Arch arch, bool arch_only,
	const PlanOptions *o)
{
	Graph *g = pipeline_graph(a, d, file, text, len, arch, arch_only);
	return g ? plan_build_opts(a, d, g, o) : NULL;
}

Plan *pipeline_plan_targets(Arena *a, Diag *d, const char *file, const char *text, size_t len,
	const char *const *archs, int narch, const char *origin, const PlanOptions *o)
{
	Spec *s = spec_load(a, d, file, text, len);
	if (!s)
		return NULL;
	s->targets = (const char **)archs;
	s->ntargets = narch;
	s->target_locs = arena_alloc(a, sizeof *s->target_locs * (size_t)narch);
	for (int i = 0; i < narch; i++)
		s->target_locs[i] = (Loc){origin, 0, 0}; /* no line: messages read "ORIGIN: error: ..." */
	/* the default arch is unused: there are targets */
	if (s->backward)
		s = spec_derive_backward(a, d, s, (Arch){90, true});
	if (s && s->optim.kind != OPTIM_NONE)
		s = spec_derive_optimizer(a, d, s, (Arch){90, true});
	Graph *g = s ? ir_build(a, d, s, (Arch){90, true}) : NULL;
	return g ? plan_build_opts(a, d, g, o) : NULL;
}

int pipeline_emit(Arena *a, Diag *d, const Plan *p, KernelSource **out)
{
	KernelSource *src = arena_alloc(a, sizeof *src * (size_t)(p->nkernels ? p->nkernels : 1));
	int n = 0;
	for (int i = 0; i < p->nkernels; i++) {
		const Kernel *k = &p->kernels[i];
		if (k->kind != KERNEL_GENERATED && !(k->kind == KERNEL_GEMM && k->tmpl)) /* cuBLASLt-only GEMMs have no source */
			continue;
		char *code = emit_kernel(a, d, p, k);
		if (!code)
			return -1;
		src[n++] = (KernelSource){i, emit_entry(a, p, k), arena_printf(a, "%s.%s.cu", p->g->layer, k->name), code};
	}
	*out = src;
	return n;
}
