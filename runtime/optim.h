/* optim.h: the layer's optimizer state on the device (see tg_optimizer_step in
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
/* optim_kernel: kernel k belongs to the optimizer step (adamw.cu: an update or the step count). */
bool optim_kernel(const Kernel *k);

#endif
