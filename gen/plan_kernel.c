/* plan_kernel.c: building one kernel of a plan: the Planner, slots, bindings, names and the shapes of tensors
 * (rows, columns, extents at a token count); the ground floor of the planner (plan.c and the plan_*.c files). */
#include "plan_kernel.h"
#include "tg_kernel.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *pl_istr(Planner *pl, long v) { return arena_printf(pl->a, "%ld", v); }

/* A C++ float literal that round-trips (1e-05f, 0.0f, 7.0f). */
const char *pl_flit(Planner *pl, float v)
{
	char buf[64];
	snprintf(buf, sizeof buf, "%.9g", v);
	if (!strpbrk(buf, ".en"))
		strcat(buf, ".0");
	return arena_printf(pl->a, "%sf", buf);
}

void pl_slot(Planner *pl, Kernel *k, const char *name, const char *value)
{
	if (k->nslots == TG_MAX_SLOTS)
		diag_error(pl->d, (Loc){0}, "internal: too many slots in kernel %s", k->name);
	k->slots[k->nslots++] = (Slot){name, value};
}

void pl_bind(Planner *pl, Kernel *k, int pslot, int tensor, Component c)
{
	if (tensor < 0)
		return;
	k->bind[k->nbind++] = (Binding){pslot, tensor, c};
}

/* Whether kernel k binds component c of tensor t (at pointer slot `slot`, or any slot when slot < 0). */
bool pl_binds(const Kernel *k, int t, Component c, int slot)
{
	for (int b = 0; b < k->nbind; b++)
		if (k->bind[b].tensor == t && k->bind[b].comp == c && (slot < 0 || k->bind[b].slot == slot))
			return true;
	return false;
}

/* The last kernel planned so far that writes copy `from` (data or data_t) of t, or NULL. */
Kernel *pl_copy_writer(Planner *pl, const Tensor *t, Component from)
{
	for (int i = pl->p->nkernels - 1; i >= 0; i--)
		if (pl_binds(&pl->p->kernels[i], t->id, from, from == COMP_DATA ? TG_P_OUT : TG_P_OUT_T))
			return &pl->p->kernels[i];
	return NULL;
}

const char *plan_slot(const Kernel *k, const char *name)
{
	for (int i = 0; i < k->nslots; i++)
		if (!strcmp(k->slots[i].name, name))
			return k->slots[i].value;
	return NULL;
}

Kernel *pl_kernel_new(Planner *pl, const char *what, int op)
{
	Plan *p = pl->p;
	if (p->nkernels == pl->cap) {
		int cap = pl->cap ? pl->cap * 2 : 16;
		Kernel *k = arena_alloc(pl->a, sizeof *k * (size_t)cap);
		if (p->nkernels)
			memcpy(k, p->kernels, sizeof *k * (size_t)p->nkernels);
		p->kernels = k;
		pl->cap = cap;
	}
	Kernel *k = &p->kernels[p->nkernels];
	memset(k, 0, sizeof *k);
	k->name = arena_printf(pl->a, "k%d_%s", p->nkernels, what);
	k->epilogue_of = -1;
	if (op >= 0) {
		k->ops[k->nops++] = op;
		k->phase = pl->g->ops[op].phase;
	}
	p->nkernels++;
	return k;
}

/* rows = product of all but the last extent; at most one may be dynamic. */
Extent pl_tensor_rows(Planner *pl, const Tensor *t, Loc loc)
{
	Extent r = {-1, 0, 1};
	for (int i = 0; i + 1 < t->rank; i++) {
		Extent e = t->shape[i];
		if (e.dim >= 0 && r.dim >= 0)
			diag_error(pl->d, loc, "tensor '%s' has two dynamic leading dimensions; flatten them into one", t->name);
		Extent v = e.dim >= 0 ? e : r, c = e.dim >= 0 ? r : e; /* v may be dynamic, c is constant */
		long m, add;
		if (__builtin_mul_overflow(v.mul, c.add, &m) | __builtin_mul_overflow(v.add, c.add, &add))
			diag_error(pl->d, loc, "tensor '%s' has more rows than the planner can count (the product of its leading "
				"extents overflows 64 bits)", t->name);
		r = (Extent){v.dim, m, add};
	}
	return r;
}

/* The value of extent e when every dynamic dim is `tokens`; LONG_MAX if that overflows. */
long pl_extent_at(Extent e, long tokens)
{
	long v;
	if (e.dim < 0)
		return e.add;
	if (__builtin_mul_overflow(e.mul, tokens, &v) || __builtin_add_overflow(v, e.add, &v))
		return LONG_MAX;
	return v;
}

long pl_tensor_cols(const Tensor *t) { return t->rank ? t->shape[t->rank - 1].add : 1; }

/* The TG_RECIPE slot of a kernel writing out: the recipe table's code; current
 * scaling's amax pass has its own. */
static int recipe_code(const Tensor *out, ScalePass pass)
{
	if (scaling_info(out->recipe.scaling)->amax_pass && pass == PASS_AMAX)
		return TG_RECIPE_CURRENT_AMAX;
	return scaling_info(out->recipe.scaling)->code;
}

bool pl_is_quantized(const Tensor *t) { return layout_quantized(t); }

/* The slots every quantizing template shares: dtypes, recipe, layouts. */
void pl_common_slots(Planner *pl, Kernel *k, const Tensor *in, const Tensor *out, long cols, ScalePass pass)
{
	k->pass = pass;
	pl_slot(pl, k, "TG_KERNEL", emit_entry(pl->a, pl->p, k));
	pl_slot(pl, k, "TG_IN_DTYPE", pl_istr(pl, dtype_code(in->dtype)));
	pl_slot(pl, k, "TG_OUT_DTYPE", pl_istr(pl, dtype_code(pl_is_quantized(out) ? DT_BF16 : out->dtype)));
	pl_slot(pl, k, "TG_FMT", out->dtype == DT_E5M2 ? "1" : "0");
	pl_slot(pl, k, "TG_RECIPE", pl_istr(pl, recipe_code(out, pass)));
	pl_slot(pl, k, "TG_ROWWISE", out->rowwise || !pl_is_quantized(out) ? "1" : "0");
	pl_slot(pl, k, "TG_COLWISE", pl_is_quantized(out) && out->columnwise ? "1" : "0");
	pl_slot(pl, k, "TG_COLS", pl_istr(pl, cols));
	pl_slot(pl, k, "TG_EPS_SCALE", pl_flit(pl, out->recipe.eps));
	pl_slot(pl, k, "TG_POW2", out->recipe.pow2 ? "1" : "0");
	pl_slot(pl, k, "TG_MARGIN", pl_istr(pl, out->recipe.margin));
	pl_slot(pl, k, "TG_DEQ", "0"); /* plan_dequantize sets it where an emulated MXFP8 GEMM reads a copy */
	pl_slot(pl, k, "TG_CT_STAGE", "0"); /* tile_launch: cast_transpose.cu's staged tiles (ct_stage_ok) */
}

/* Bind the op's outputs; an unquantized output goes to component data (COMP_DATA,
 * or COMP_HP for the intermediate of an unfused NVFP4 op). */
void pl_bind_outputs(Planner *pl, Kernel *k, const Tensor *out, Component data)
{
	if (!pl_is_quantized(out)) {
		pl_bind(pl, k, TG_P_OUT, out->id, data);
		return;
	}
	if (out->rowwise)
		pl_bind(pl, k, TG_P_OUT, out->id, COMP_DATA);
	if (out->columnwise)
		pl_bind(pl, k, TG_P_OUT_T, out->id, COMP_DATA_T);
	switch (out->recipe.scaling) {
	case SCALING_DELAYED:
	case SCALING_CURRENT:
		pl_bind(pl, k, TG_P_SCALE, out->id, COMP_SCALE);
		pl_bind(pl, k, TG_P_SCALE_INV, out->id, COMP_SCALE_INV);
		pl_bind(pl, k, TG_P_AMAX, out->id, COMP_AMAX);
		break;
	case SCALING_NVFP4: /* S_enc (written), then the block scales like the other block recipes */
		pl_bind(pl, k, TG_P_SCALE, out->id, COMP_SCALE);
		/* fall through */
	default:
		/* each copy has its scales (128x128: the same blocks, stored for each layout) */
		if (out->rowwise)
			pl_bind(pl, k, TG_P_SCALE_INV, out->id, COMP_SCALE_INV);
		if (out->columnwise)
			pl_bind(pl, k, TG_P_SCALE_INV_T, out->id, COMP_SCALE_INV_T);
		break;
	}
}

long pl_slot_long(const Kernel *k, const char *name, long dflt)
{
	const char *v = plan_slot(k, name);
	return v ? strtol(v, NULL, 10) : dflt;
}

bool pl_pow2(long v) { return v > 0 && (v & (v - 1)) == 0; }

/* Set slot name to value in place (it exists: the planner added it). */
bool pl_slot_set(Kernel *k, const char *name, const char *value)
{
	for (int i = 0; i < k->nslots; i++)
		if (!strcmp(k->slots[i].name, name)) {
			k->slots[i].value = value;
			return true;
		}
	return false;
}

/* A fixed-shape generated kernel over [rows][cols] (not tunable): threads, grid-stride launch. */
Kernel *pl_fixed_kernel(Planner *pl, const char *what, const Op *op, const char *tmpl, Extent rows, long cols)
{
	Kernel *k = pl_kernel_new(pl, what, op->id);
	k->kind = KERNEL_GENERATED;
	k->tmpl = tmpl;
	pl_slot(pl, k, "TG_KERNEL", emit_entry(pl->a, pl->p, k));
	pl_slot(pl, k, "TG_THREADS", "256");
	k->rows = rows;
	k->cols = cols;
	k->threads = 256;
	k->grid_rows = 1; /* grid.x = rows, capped: the templates grid-stride */
	k->variant = "t256";
	k->choice = "fixed";
	return k;
}
