/* plan_launch.h: the tile shape of every generated kernel. Each template family has an explicit variant table;
 * variant_legal() holds each template's compile-time constraints; the heuristics (pl_row_launch, pl_tile_launch) pick
 * a variant from measurements (bench/RESULTS.md), and pl_apply_tuning swaps in the tuning DB's fastest (tune.c). */
#ifndef TG_PLAN_LAUNCH_H
#define TG_PLAN_LAUNCH_H

#include "plan_kernel.h"

/* pl_apply_tuning replaces each tunable kernel's heuristic variant by the tuning DB's fastest for o's GPU. */
void pl_apply_tuning(Planner *pl, const PlanOptions *o);
/* pl_block_tile: k takes the block tile path of glu_amax.cu or dglu.cu (128 x 128 tiles). */
bool pl_block_tile(const Kernel *k);
/* pl_check_variants: an internal error for a kernel whose variant breaks its template's static_asserts. */
void pl_check_variants(Planner *pl);
/* pl_dglu_stage_bytes: the dynamic shared memory dglu.cu's block tile path stages its inputs in (0: none). */
int pl_dglu_stage_bytes(const Planner *pl, const Kernel *k, GluKind act);
/* pl_fused_dbias_op is the dbias op whose stage 1 runs inside cast op op's kernel, or -1. */
int pl_fused_dbias_op(const Graph *g, const Op *op);
/* pl_heuristic_launch gives k variant v of family f (or the first legal fallback) as the heuristic's choice. */
void pl_heuristic_launch(Planner *pl, Kernel *k, const PlanVariant *v, Family f, Extent rows, long cols);
/* pl_nc_stage_bytes: the dynamic shared memory norm_colwise.cu stages its next tile in (0: none). */
int pl_nc_stage_bytes(const Planner *pl, const Kernel *k);
/* pl_row_launch picks a row kernel's variant (norm_quantize.cu, glu_amax.cu, dglu.cu) from the measured tables. */
void pl_row_launch(Planner *pl, Kernel *k, const Tensor *out, Extent rows, long cols);
/* pl_tile_launch picks a cast kernel's tile variant (cast_transpose.cu) by recipe, layout and known size. */
void pl_tile_launch(Planner *pl, Kernel *k, const Tensor *out, Extent rows, long cols);
/* pl_tile_variant is the cast tile variant called name (NULL if none). */
const PlanVariant *pl_tile_variant(const char *name);

#endif
