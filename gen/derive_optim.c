/* derive_optim.c: `optimizer:`: one adamw op per weight, appended after the backward
 * (see spec_derive_optimizer in gen.h).
 *
 * A weight is a layer input of role weight; the backward names its gradient d_<name>
 * (the wgrad GEMM's output, FP32 or the weight's grad_dtype; dnorm's d_gamma, dbias). Each such weight gets
 *     adamw: {in: w, grad: d_w}
 * which updates w in place (the user's bound buffer keeps the current value, rounded
 * to w's dtype) from its FP32 master copy and moments (the layer-owned components
 * master, m, v of w). The forward's quantize of w then reads the updated weight. A
 * weight without a derived gradient is an error: the spec would silently not train it. */
#include "gen.h"

#include <string.h>

static int find(const Graph *g, const char *name)
{
	for (int i = 0; i < g->ntensors; i++)
		if (!strcmp(g->tensors[i].name, name))
			return i;
	return -1;
}

Spec *spec_derive_optimizer(Arena *a, Diag *d, Spec *s, Arch default_arch)
{
	if (s->optim.kind == OPTIM_NONE)
		return s;
	Spec probe = *s;
	probe.optim.kind = OPTIM_NONE;
	const Graph *g = ir_build(a, d, &probe, default_arch);
	if (!g)
		return NULL;
	if (setjmp(d->jmp))
		return NULL;
	SpecOp *ops = arena_alloc(a, sizeof *ops * (size_t)(s->nops + g->ntensors + 1));
	memcpy(ops, s->ops, sizeof *ops * (size_t)s->nops);
	int n = s->nops;
	for (int i = 0; i < g->ntensors; i++) {
		const Tensor *w = &g->tensors[i];
		if (w->role != ROLE_WEIGHT || w->producer >= 0)
			continue;
		int gi = find(g, arena_printf(a, "d_%s", w->name));
		if (gi < 0 || g->tensors[gi].producer < 0)
			diag_error(d, w->loc, "optimizer: weight '%s' has no derived gradient (d_%s); a weight the layer does not "
				"train should not have role weight", w->name, w->name);
		const Tensor *gw = &g->tensors[gi];
		if (gw->dtype != DT_F32 && gw->dtype != DT_BF16 && gw->dtype != DT_F16)
			diag_error(d, w->loc, "optimizer: the gradient d_%s of weight '%s' is %s; adamw reads an fp32, bf16 or fp16 "
				"gradient", w->name, w->name, dtype_name(gw->dtype));
		SpecOp *o = &ops[n++];
		memset(o, 0, sizeof *o);
		o->kind = OP_ADAMW;
		o->phase = PHASE_OPTIMIZER;
		o->loc = o->param_loc = s->optim.loc;
		o->p = op_params_default(OP_ADAMW);
		o->arg[ARG_IN] = w->name;
		o->arg[ARG_GRAD] = gw->name;
		o->arg_loc[ARG_IN] = o->arg_loc[ARG_GRAD] = s->optim.loc;
	}
	s->ops = ops;
	s->nops = n;
	return s;
}
