/* plan_kernel.h: building one kernel of a plan: the Planner, slots, bindings, names and the shapes of tensors
 * (rows, columns, extents at a token count); the ground floor of the planner (plan.c and the plan_*.c files). */
#ifndef TG_PLAN_KERNEL_H
#define TG_PLAN_KERNEL_H

#include "gen.h"
#include "layout.h"

/* One planning's state: the arena, diagnostics, the graph, the plan being built (kernels' capacity cap), the
 * token count when known (> 0), whether unfused row ops write FP32 values. */
typedef struct Planner { Arena *a; Diag *d; const Graph *g; Plan *p; int cap; long tokens; bool hp_values; } Planner;

/* Which variant table a kernel's template uses: none, the row table, or the cast tile table. */
typedef enum { FAM_NONE, FAM_ROW, FAM_TILE } Family;

#define NELEMS(x) ((int)(sizeof(x) / sizeof *(x)))
#define TABLE(type, t) ((type){(t), NELEMS(t)}) /* a table with its length (RowHeuristics, LongRows) */

/* pl_bind points k's pointer slot pslot at component c of tensor `tensor` (nothing for tensor < 0). */
void pl_bind(Planner *pl, Kernel *k, int pslot, int tensor, Component c);
/* pl_bind_outputs binds op output out: its copies, scales and amax (component data when unquantized). */
void pl_bind_outputs(Planner *pl, Kernel *k, const Tensor *out, Component data);
/* pl_binds: k binds component c of tensor t (at pointer slot `slot`, or any slot when slot < 0). */
bool pl_binds(const Kernel *k, int t, Component c, int slot);
/* pl_common_slots sets the slots every quantizing template shares (dtypes, recipe, layouts) for pass `pass`. */
void pl_common_slots(Planner *pl, Kernel *k, const Tensor *in, const Tensor *out, long cols, ScalePass pass);
/* pl_copy_writer is the last kernel planned so far that writes copy `from` (data or data_t) of t, or NULL. */
Kernel *pl_copy_writer(Planner *pl, const Tensor *t, Component from);
/* pl_extent_at is extent e with every dynamic dim = tokens (LONG_MAX where that overflows). */
long pl_extent_at(Extent e, long tokens);
/* pl_fixed_kernel is a new generated kernel of template tmpl with one fixed launch shape (no variants). */
Kernel *pl_fixed_kernel(Planner *pl, const char *what, const Op *op, const char *tmpl, Extent rows, long cols);
/* pl_flit is v as a C++ float literal that round-trips (1e-05f, 0.0f, 7.0f). */
const char *pl_flit(Planner *pl, float v);
/* pl_is_quantized: t is stored low precision with scales (layout_quantized). */
bool pl_is_quantized(const Tensor *t);
/* pl_istr is v in decimal, in the plan's arena (a slot value). */
const char *pl_istr(Planner *pl, long v);
/* pl_kernel_new appends an empty kernel named k<N>_<what> for op (-1: none; its phase is the op's). */
Kernel *pl_kernel_new(Planner *pl, const char *what, int op);
/* pl_pow2: v is a power of two (> 0). */
bool pl_pow2(long v);
/* pl_slot adds template slot name = value to kernel k (an internal error past TG_MAX_SLOTS). */
void pl_slot(Planner *pl, Kernel *k, const char *name, const char *value);
/* pl_slot_long is k's slot name as a number (dflt when k has no such slot). */
long pl_slot_long(const Kernel *k, const char *name, long dflt);
/* pl_slot_set changes k's existing slot name to value (false: k has no such slot). */
bool pl_slot_set(Kernel *k, const char *name, const char *value);
/* pl_tensor_cols is t's last extent (always constant), 1 for rank 0. */
long pl_tensor_cols(const Tensor *t);
/* pl_tensor_rows is t's rows, the product of all but its last extent (two dynamic ones: an error at loc). */
Extent pl_tensor_rows(Planner *pl, const Tensor *t, Loc loc);

#endif
