/* rt_internal.h: what tools inside this repository (the CLI, the checker,
 * tests) may see of a layer beyond the public tegen.h. Not installed. */
#ifndef TG_RT_INTERNAL_H
#define TG_RT_INTERNAL_H

#include "gen.h"
#include "tegen.h"

/* tg_layer_plan returns the layer's plan (and through it, the graph). */
const Plan *tg_layer_plan(const TgLayer *l);
/* tg_layer_tensor_component gives the device pointer and size of component c of tensor i after a run. */
TgStatus tg_layer_tensor_component(TgLayer *l, int i, Component c, void **dev, size_t *bytes);
/* comp_name spells a component ("data", "scale_inv", ...). */
const char *comp_name(int c);
/* tg_layer_jit returns kernel i's compile result (NULL for GEMMs or before compiling). */
const struct JitResult *tg_layer_jit(const TgLayer *l, int i);

#endif
