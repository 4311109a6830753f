/* plan_backward.h: the backward's row reductions (dnorm, dbias and their dreduce stage, deterministic:
 * tg_backward.h) and the optimizer (AdamW, fused with the weight's cast where it can be; the step kernel). */
#ifndef TG_PLAN_BACKWARD_H
#define TG_PLAN_BACKWARD_H

#include "plan_kernel.h"

/* plan_adamw plans an AdamW update (fused with the weight's cast where it can be). */
void plan_adamw(Planner *pl, const Op *op);
/* plan_dbias plans a bias gradient: the chunk partials (dbias.cu, or inside a cast) and dreduce.cu. */
void plan_dbias(Planner *pl, const Op *op);
/* plan_dnorm plans a norm's backward: dnorm.cu (d_x and chunk partials), then a dreduce per weight gradient. */
void plan_dnorm(Planner *pl, const Op *op);
/* plan_dreduce sums the chunk partials (component part of src) into dst [cols] in tg_backward.h's order. */
void plan_dreduce(Planner *pl, const Op *op, int src, Component part, int dst, Extent rows, long cols);
/* plan_optim_step plans the optimizer's step kernel (step += 1, beta1^step and beta2^step). */
void plan_optim_step(Planner *pl);

#endif
