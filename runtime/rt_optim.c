/* rt_optim.c: the layer's optimizer state on the device (see rt_optim.h). */
#include "rt_optim.h"

#include <string.h>

CUresult optim_state_create(const Optimizer *o, CUdeviceptr *out)
{
	float h[TG_OPTIM_WORDS] = {0};
	uint32_t step = 0;
	h[TG_OPTIM_LR] = o->lr;
	memcpy(&h[TG_OPTIM_STEP], &step, sizeof step);
	h[TG_OPTIM_B1POW] = 1.0f;
	h[TG_OPTIM_B2POW] = 1.0f;
	CUresult r = cu.cuMemAlloc_v2(out, sizeof h);
	if (!r)
		r = cu.cuMemcpyHtoD_v2(*out, h, sizeof h);
	return r;
}

CUresult optim_set_lr(CUdeviceptr state, float lr, CUstream s)
{
	uint32_t bits;
	memcpy(&bits, &lr, sizeof bits);
	return cu.cuMemsetD32Async(state + TG_OPTIM_LR * sizeof(float), bits, 1, s);
}

OptimStage optim_stage(const Plan *p, const Kernel *k)
{
	if (k->kind == KERNEL_GENERATED && k->tmpl &&
	    (!strcmp(k->tmpl, "adamw_cast.cu") || !strcmp(k->tmpl, "adamw_cast_block.cu")))
		return OPTIM_UPDATE;
	if (k->kind == KERNEL_GENERATED && k->tmpl && !strcmp(k->tmpl, "adamw.cu"))
		return k->nops ? OPTIM_UPDATE : OPTIM_COUNT;
	if (p->g->optim.kind != OPTIM_NONE && k->nops && op_casts_trained_weight(p->g, &p->g->ops[k->ops[0]]))
		return OPTIM_WEIGHT_CAST;
	return OPTIM_RUN;
}
