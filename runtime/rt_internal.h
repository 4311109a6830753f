/* rt_internal.h: what tools inside this repository (the CLI, the checker,
 * tests) may see of a layer beyond the public tegen.h. Not installed. */
#ifndef TG_RT_INTERNAL_H
#define TG_RT_INTERNAL_H

#include "gen.h"
#include "layout.h"
#include "tegen.h"

/* tg_layer_plan returns the layer's plan (and through it, the graph). */
const Plan *tg_layer_plan(const TgLayer *l);
/* tg_layer_tensor_component gives the device pointer and size of component c of tensor i after a run. */
TgStatus tg_layer_tensor_component(TgLayer *l, int i, Component c, void **dev, size_t *bytes);
/* tg_layer_download copies component c of tensor i into a new host buffer (*host, malloc'd; free it) as host
 * copies hold it: a padded columnwise copy packed [cols][rows] (layout_unpitch); *bytes its size. Synchronous. */
TgStatus tg_layer_download(TgLayer *l, int i, Component c, void **host, size_t *bytes);
/* tg_layer_optim_state gives the device pointer of the optimizer state (TG_OPTIM_WORDS
 * words, tg_codes.h); NULL for a layer without an optimizer or not loaded yet. */
void *tg_layer_optim_state(const TgLayer *l);
/* tg_layer_steps counts tg_step calls: the offset of NVFP4 stochastic rounding (launch n[3]). */
unsigned long long tg_layer_steps(const TgLayer *l);
/* tg_layer_jit returns kernel i's compile result (NULL for GEMMs or before compiling). */
const struct JitResult *tg_layer_jit(const TgLayer *l, int i);

/* tg_context_plan_options fills the planner's view of this GPU and its tuning DB, for `tokens`. */
void tg_context_plan_options(const TgContext *c, long tokens, PlanOptions *o);
/* tg_context_set_hp_values makes layers created (and re-planned by tg_layer_set_tokens) afterwards
 * write the FP32 value of every quantized norm, GLU and dglu output (PlanOptions.hp_values). */
void tg_context_set_hp_values(TgContext *c, bool on);
/* tg_context_set_tuning_file makes layers created afterwards plan from path (NULL or "": heuristic only). */
void tg_context_set_tuning_file(TgContext *c, const char *path);
/* tg_layer_gemm_backend names what ran GEMM kernel ki at its last launch (before any: what the plan
 * holds): "wgmma n256s3" (the generated kernel: an sm_90, TEGEN_GEMM_GEN not 0, the call suits it and,
 * without an epilogue, gemm_gen_pays) or "cuBLASLt". */
const char *tg_layer_gemm_backend(const TgLayer *l, int ki);
/* tg_layer_gemm_choice describes the cuBLASLt algorithm GEMM kernel ki ran with (gemm_describe: timed or
 * not, candidate, times) into buf; -1 when it has no cuBLASLt plan yet (not run, generated, or padded). */
int tg_layer_gemm_choice(TgLayer *l, int ki, char *buf, size_t len);
/* tg_layer_keep_intermediates: on, a GEMM whose generated kernel fuses a GLU (gemm.glu) also writes its
 * own output D, which the plan skips when nothing else reads it; the checker judges each op from it. */
void tg_layer_keep_intermediates(TgLayer *l, bool on);
/* tg_layer_kernel_skipped: kernel ki does not run in a tg_run now: the generated GEMM it is the epilogue
 * of (Kernel.epilogue_of) did its work, or it casts a weight whose copies are cached (tg_layer_cache_weights). */
bool tg_layer_kernel_skipped(const TgLayer *l, int ki);
/* tg_context_jit is the context's kernel cache (for tools that compile variants). */
struct JitCache *tg_context_jit(TgContext *c);
/* tg_context_function loads a compiled cubin into the context (once per key) and returns entry (a CUfunction). */
TgStatus tg_context_function(TgContext *c, const struct JitResult *r, const char *entry, void **fn);
/* tg_layer_time_kernel times generated kernel ki of a layer that has run once (inputs bound, buffers
 * sized): variant (NULL: the plan's kernel) with function fn (NULL: the layer's), launched with the
 * same bindings as tg_run, by cold_time (cold_time.h: each launch from a cold, clean L2, events around
 * the launch alone). median_us gets the median; bytes (optional) the bytes the kernel must move (one
 * read of each input, one write of each output). */
TgStatus tg_layer_time_kernel(TgLayer *l, int ki, const Kernel *variant, void *fn, int iters, float *median_us,
	double *bytes);
/* tg_context_time_copy times a device-to-device copy of bytes (read bytes, write bytes) as
 * tg_layer_time_kernel times a kernel: the copy ceiling at a kernel's size. */
TgStatus tg_context_time_copy(TgContext *c, size_t bytes, int iters, float *median_us);

#endif
