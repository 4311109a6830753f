/* rt_optim.h: the layer's optimizer state on the device (see tg_optimizer_step in
 * tegen.h): TG_OPTIM_WORDS words laid out as templates/tg_codes.h says
 * (lr, step as uint32, beta1^step, beta2^step), read by adamw.cu. */
#ifndef TG_RT_OPTIM_H
#define TG_RT_OPTIM_H

#include "cudrv.h"
#include "gen.h"

/* optim_state_create allocates the state and writes a fresh one (o->lr, step 0, powers 1). */
CUresult optim_state_create(const Optimizer *o, CUdeviceptr *out);
/* optim_set_lr writes lr into the state, ordered on stream s (a memset: capture-safe). */
CUresult optim_set_lr(CUdeviceptr state, float lr, CUstream s);
/* Where a kernel runs: OPTIM_RUN every tg_run; the optimizer step's three stages in order,
 * OPTIM_UPDATE (adamw.cu updates), OPTIM_WEIGHT_CAST (the quantized copies of the updated
 * weights, also run by tg_run while they are stale), OPTIM_COUNT (optim_step). */
typedef enum { OPTIM_RUN, OPTIM_UPDATE, OPTIM_WEIGHT_CAST, OPTIM_COUNT } OptimStage;
/* optim_stage classifies kernel k of plan p. */
OptimStage optim_stage(const Plan *p, const Kernel *k);

#endif
