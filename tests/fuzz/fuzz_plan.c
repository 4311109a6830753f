/* fuzz_plan.c: libFuzzer target for the whole generator: spec_load, ir_build,
 * plan_build_opts (heuristic variants, at a token count taken from the input),
 * plan_print, emit_kernel for every generated kernel, and every legal
 * tile-shape variant of each kernel applied to a copy (as `tegen tune` does),
 * the last of them emitted too. Any crash, leak, sanitizer report or hang is a
 * bug; an error message from any stage is a normal outcome. */
#include "gen.h"

#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Emit kernel k of p; an error is fine, a crash is not. */
static void emit_one(Arena *a, const Plan *p, const Kernel *k)
{
	if (k->kind != KERNEL_GENERATED)
		return;
	Diag d;
	memset(&d, 0, sizeof d);
	emit_kernel(a, &d, p, k);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > (1u << 20))
		return 0;
	/* the planner's token count and the default target come from the input's length
	 * (the text itself stays a plain spec, so seeds and crashes replay with `tegen plan`) */
	static const long tokens[] = {0, 1, 256, 4097, 2147483647};
	static const Arch archs[] = {{90, true}, {100, true}, {89, false}};
	PlanOptions o;
	memset(&o, 0, sizeof o);
	o.tokens = tokens[size % 5];
	Arena *a = arena_new();
	Diag d;
	memset(&d, 0, sizeof d);
	Spec *s = spec_load(a, &d, "fuzz.yaml", (const char *)data, size);
	Graph *g = s ? ir_build(a, &d, s, archs[size / 5 % 3]) : NULL;
	Plan *p = g ? plan_build_opts(a, &d, g, &o) : NULL;
	if (p) {
		Buf b = {0};
		plan_print(p, &b);
		buf_free(&b);
		for (int i = 0; i < p->nkernels; i++) {
			const Kernel *k = &p->kernels[i];
			emit_one(a, p, k);
			plan_signature(a, k);
			plan_bucket(k, o.tokens);
			PlanVariant v[PLAN_MAX_VARIANTS];
			int n = plan_variants(k, v, PLAN_MAX_VARIANTS);
			Kernel copy = *k;
			for (int j = 0; j < n; j++) {
				copy = *k;
				plan_apply_variant(a, &copy, &v[j]);
			}
			if (n > 1)
				emit_one(a, p, &copy);
		}
	}
	arena_free(a);
	return 0;
}
