/* plan_backward.c: the backward's row reductions (dnorm, dbias and their dreduce stage, deterministic:
 * tg_backward.h) and the optimizer (AdamW, fused with the weight's cast where it can be; the step kernel). */
#include "plan_backward.h"
#include "plan_launch.h"
#include "plan_gemm.h"
#include "tg_backward.h"
#include "tg_optim.h"
#include "tg_kernel.h"

/* ---- backward reductions (dnorm, dbias) ---- */

/* The widest vector of at most 8 elements that divides cols and keeps every
 * vector of dtype sizes sz[] within 32 bytes (and >= 4 bytes where min4). */
static int backward_vec(long cols, const int *sz, int n, bool min4)
{
	for (int vec = 8; vec >= 2; vec /= 2) {
		bool ok = cols % vec == 0;
		for (int i = 0; ok && i < n; i++)
			ok = vec * sz[i] <= 32 && (!min4 || vec * sz[i] >= 4);
		if (ok)
			return vec;
	}
	return 1;
}

static int dtype_bytes(DType t) { return t == DT_F32 ? 4 : 2; }

/* dreduce.cu: the chunk partials (component part of tensor src) summed into dst [cols] in tg_backward.h's
 * order (groups of TG_BWD_GROUP chunks in chunk order, then the group sums). */
void plan_dreduce(Planner *pl, const Op *op, int src, Component part, int dst, Extent rows, long cols)
{
	Kernel *k = pl_kernel_new(pl, arena_printf(pl->a, "dreduce_%s", pl->g->tensors[dst].name), op->id);
	k->kind = KERNEL_GENERATED;
	k->tmpl = "dreduce.cu";
	pl_slot(pl, k, "TG_KERNEL", emit_entry(pl->a, pl->p, k));
	pl_slot(pl, k, "TG_THREADS", "256");
	pl_slot(pl, k, "TG_ACCUMULATE", op->p.accumulate ? "1" : "0"); /* main_grad: added into dst */
	pl_bind(pl, k, TG_PB_DW, src, part);
	pl_bind(pl, k, TG_PB_OUT, dst, COMP_DATA);
	k->rows = rows;
	k->rows_chunk = TG_BWD_CHUNK;
	k->cols = cols;
	k->threads = 256; /* 8 warps sum a group of 64 chunk rows of 32 columns each; warp 0 adds the group sums */
	k->grid_rows = 0; /* grid.x = ceil(cols / 32): a CTA per 32 columns (4096 columns: 128 CTAs) */
	k->grid_cols = 32;
	k->variant = "t256";
	k->choice = "fixed";
	k->pdl = true; /* a short, latency-bound kernel: its launch overlaps the end of the kernel that wrote the partials */
	k->note = arena_printf(pl->a, "stage 2 of 2: the chunk partials (%s.%s, one per %d rows) summed in a fixed order (deterministic)%s",
		pl->g->tensors[src].name, part == COMP_PART ? "part" : "part_b", TG_BWD_CHUNK,
		op->p.accumulate ? ", added into the caller's buffer (main_grad)" : "");
}

/* dnorm: one dnorm.cu kernel (d_x and the chunk partials of d_gamma, d_beta,
 * kept in d_x's part / part_b), then a dreduce per weight gradient. One pass
 * (rows in registers) while a thread of 512 holds at most 4 vectors of a row. */
void plan_dnorm(Planner *pl, const Op *op)
{
	const Graph *g = pl->g;
	const Tensor *x = &g->tensors[op->arg[ARG_IN]], *dy = &g->tensors[op->arg[ARG_GRAD]];
	const Tensor *gamma = &g->tensors[op->arg[ARG_GAMMA]], *dx = &g->tensors[op->arg[ARG_OUT]];
	Extent rows = pl_tensor_rows(pl, x, op->loc);
	long cols = pl_tensor_cols(x);
	const Tensor *dres = op->arg[ARG_GRAD_RESIDUAL] >= 0 ? &g->tensors[op->arg[ARG_GRAD_RESIDUAL]] : dy;
	int sz[] = {dtype_bytes(x->dtype), dtype_bytes(dy->dtype), dtype_bytes(gamma->dtype), dtype_bytes(dx->dtype),
		dtype_bytes(dres->dtype)};
	int vec = backward_vec(cols, sz, 5, false);
	long nvec = cols / vec;
	int threads = 64, passes = 1; /* a vector a thread where it fits in 512 threads (the H100 bench's best) */
	while (threads < 512 && threads < nvec)
		threads *= 2;
	if (nvec > 4L * threads) { /* a long row: statistics first, then a column walk */
		passes = 2;
		threads = 256;
	}
	Kernel *k = pl_kernel_new(pl, "dnorm", op->id);
	k->kind = KERNEL_GENERATED;
	k->tmpl = "dnorm.cu";
	pl_slot(pl, k, "TG_KERNEL", emit_entry(pl->a, pl->p, k));
	pl_slot(pl, k, "TG_IN_DTYPE", pl_istr(pl, dtype_code(x->dtype)));
	pl_slot(pl, k, "TG_G_DTYPE", pl_istr(pl, dtype_code(dy->dtype)));
	pl_slot(pl, k, "TG_W_DTYPE", pl_istr(pl, dtype_code(gamma->dtype)));
	pl_slot(pl, k, "TG_OUT_DTYPE", pl_istr(pl, dtype_code(dx->dtype)));
	pl_slot(pl, k, "TG_R_DTYPE", pl_istr(pl, dtype_code(dres->dtype))); /* grad_residual's own dtype (grad's when none) */
	pl_slot(pl, k, "TG_VEC", pl_istr(pl, vec));
	pl_slot(pl, k, "TG_THREADS", pl_istr(pl, threads));
	pl_slot(pl, k, "TG_COLS", pl_istr(pl, cols));
	pl_slot(pl, k, "TG_NORM", op->p.norm == NORM_LAYER ? "1" : "0");
	pl_slot(pl, k, "TG_ZERO_CENTERED", op->p.zero_centered_gamma ? "1" : "0");
	pl_slot(pl, k, "TG_HAS_DRES", op->arg[ARG_GRAD_RESIDUAL] >= 0 ? "1" : "0");
	pl_slot(pl, k, "TG_PASSES", pl_istr(pl, passes));
	pl_bind(pl, k, TG_PB_IN, x->id, COMP_DATA);
	pl_bind(pl, k, TG_PB_GAMMA, gamma->id, COMP_DATA);
	pl_bind(pl, k, TG_PB_GRAD, dy->id, COMP_DATA);
	pl_bind(pl, k, TG_PB_DRES, op->arg[ARG_GRAD_RESIDUAL], COMP_DATA);
	pl_bind(pl, k, TG_PB_RSIGMA, op->arg[ARG_RSIGMA], COMP_DATA);
	pl_bind(pl, k, TG_PB_MU, op->arg[ARG_MU], COMP_DATA);
	pl_bind(pl, k, TG_PB_OUT, dx->id, COMP_DATA);
	if (op->arg[ARG_D_GAMMA] >= 0)
		pl_bind(pl, k, TG_PB_DW, dx->id, COMP_PART);
	if (op->arg[ARG_D_BETA] >= 0)
		pl_bind(pl, k, TG_PB_DB, dx->id, COMP_PART_B);
	k->rows = rows;
	k->cols = cols;
	k->threads = threads;
	k->grid_rows = TG_BWD_CHUNK; /* a CTA per chunk of rows */
	k->variant = arena_printf(pl->a, "t%dv%dp%d", threads, vec, passes);
	k->choice = "heuristic";
	k->note = op->arg[ARG_D_GAMMA] >= 0 || op->arg[ARG_D_BETA] >= 0
		? "d_x, and stage 1 of 2 of d_gamma/d_beta: a partial per chunk of rows, rows summed in order" : NULL;
	if (op->arg[ARG_D_GAMMA] >= 0)
		plan_dreduce(pl, op, dx->id, COMP_PART, op->arg[ARG_D_GAMMA], rows, cols);
	if (op->arg[ARG_D_BETA] >= 0)
		plan_dreduce(pl, op, dx->id, COMP_PART_B, op->arg[ARG_D_BETA], rows, cols);
}

/* dbias: dbias.cu (chunk partials in the gradient's part) and dreduce.cu. */
void plan_dbias(Planner *pl, const Op *op)
{
	const Graph *g = pl->g;
	const Tensor *in = &g->tensors[op->arg[ARG_IN]];
	Extent rows = pl_tensor_rows(pl, in, op->loc);
	long cols = pl_tensor_cols(in);
	for (int j = 0; j < op->id; j++)
		if (pl_fused_dbias_op(g, &g->ops[j]) == op->id) { /* stage 1 in that cast's kernel */
			plan_dreduce(pl, op, in->id, COMP_PART, op->arg[ARG_OUT], rows, cols);
			return;
		}
	int sz[] = {4, dtype_bytes(in->dtype)}; /* the FP32 partial vector and the input's: 4..32 bytes */
	int vec = backward_vec(cols, sz, 2, true);
	Kernel *k = pl_kernel_new(pl, "dbias", op->id);
	k->kind = KERNEL_GENERATED;
	k->tmpl = "dbias.cu";
	pl_slot(pl, k, "TG_KERNEL", emit_entry(pl->a, pl->p, k));
	pl_slot(pl, k, "TG_IN_DTYPE", pl_istr(pl, dtype_code(in->dtype)));
	pl_slot(pl, k, "TG_VEC", pl_istr(pl, vec));
	pl_slot(pl, k, "TG_THREADS", "256");
	pl_slot(pl, k, "TG_COLS", pl_istr(pl, cols));
	pl_bind(pl, k, TG_PB_IN, in->id, COMP_DATA);
	pl_bind(pl, k, TG_PB_DW, in->id, COMP_PART);
	k->rows = rows;
	k->cols = cols;
	k->threads = 256;
	k->grid_rows = TG_BWD_CHUNK; /* tasks: (chunk, column vector) */
	k->grid_cols = 256L * vec;
	k->variant = arena_printf(pl->a, "t256v%d", vec);
	k->choice = "heuristic";
	k->note = "stage 1 of 2: a partial column sum per chunk of rows, rows summed in order";
	plan_dreduce(pl, op, in->id, COMP_PART, op->arg[ARG_OUT], rows, cols);
}

/* ---- optimizer (adamw) ---- */

/* The hyperparameter slots of adamw.cu, from the spec's optimizer. */
static void adamw_slots(Planner *pl, Kernel *k, int mode)
{
	const Optimizer *o = &pl->g->optim;
	pl_slot(pl, k, "TG_KERNEL", emit_entry(pl->a, pl->p, k));
	pl_slot(pl, k, "TG_MODE", pl_istr(pl, mode));
	pl_slot(pl, k, "TG_BETA1", pl_flit(pl, o->beta1));
	pl_slot(pl, k, "TG_BETA2", pl_flit(pl, o->beta2));
	pl_slot(pl, k, "TG_EPS", pl_flit(pl, o->eps));
	pl_slot(pl, k, "TG_WD", pl_flit(pl, o->weight_decay));
}

/* The update's own buffers: weight w, its gradient, the FP32 master and moments (tg_optim.h slots). */
static void adamw_binds(Planner *pl, Kernel *k, const Op *op, const Tensor *w)
{
	pl_bind(pl, k, TG_PA_W, w->id, COMP_DATA);
	pl_bind(pl, k, TG_PA_GRAD, op->arg[ARG_GRAD], COMP_DATA);
	pl_slot(pl, k, "TG_G_DTYPE", pl_istr(pl, dtype_code(pl->g->tensors[op->arg[ARG_GRAD]].dtype))); /* FP32, BF16 or FP16 */
	pl_bind(pl, k, TG_PA_MASTER, w->id, COMP_MASTER);
	pl_bind(pl, k, TG_PA_M, w->id, COMP_MOM1);
	pl_bind(pl, k, TG_PA_V, w->id, COMP_MOM2);
}

/* The one forward cast of trained weight w (quantize/cast_transpose in the forward, nothing else
 * reads w there), NULL otherwise. */
static const Op *weight_cast(const Planner *pl, const Tensor *w)
{
	const Graph *g = pl->g;
	const Op *cast = NULL;
	for (int i = 0; i < g->nops; i++) {
		const Op *o = &g->ops[i];
		if (o->arg[ARG_IN] != w->id || o->phase != PHASE_FORWARD || o->kind == OP_ADAMW)
			continue;
		if ((o->kind != OP_QUANTIZE && o->kind != OP_CAST_TRANSPOSE) || cast)
			return NULL; /* read by something else too, or cast twice */
		cast = o;
	}
	return cast;
}

/* The forward cast of trained weight w that its update can do in the same pass: the one
 * quantize/cast_transpose of w, to per-tensor FP8 with delayed scaling (the scale is known before
 * the step) or to blocks that lie inside one 128 x 128 tile (128x128, 1x128, MXFP8: each scale is
 * the amax of values one CTA updates: adamw_cast_block.cu), rows of a multiple of 4; NULL
 * otherwise (current scaling and NVFP4 need the new global amax first, the update writes it). */
static const Op *fusable_weight_cast(const Planner *pl, const Tensor *w)
{
	const Op *cast = weight_cast(pl, w);
	if (!cast)
		return NULL;
	const Tensor *q = &pl->g->tensors[cast->arg[ARG_OUT]];
	bool delayed = pl_is_quantized(q) && q->recipe.scaling == SCALING_DELAYED && q->state_slot >= 0;
	bool block = pl_is_quantized(q) && (q->recipe.scaling == SCALING_BLOCK128X128 ||
		q->recipe.scaling == SCALING_BLOCK1X128 || q->recipe.scaling == SCALING_MXFP8);
	if (!(delayed || block) || pl_tensor_cols(w) % 4 || (q->dtype != DT_E4M3 && q->dtype != DT_E5M2) ||
	    cast->arg[ARG_DBIAS_OUT] >= 0)
		return NULL;
	return cast;
}

/* adamw_cast.cu (delayed: 64 x 256 tiles) or adamw_cast_block.cu (128x128, 1x128 and MXFP8
 * blocks: 128 x 128 tiles): the update of w and its cast `cast` in one pass; the cast's own kernel
 * stays for tg_run while the copies are stale. */
static void plan_adamw_cast(Planner *pl, const Op *op, const Op *cast)
{
	const Tensor *w = &pl->g->tensors[op->arg[ARG_IN]], *q = &pl->g->tensors[cast->arg[ARG_OUT]];
	bool block = q->recipe.scaling != SCALING_DELAYED;
	Kernel *k = pl_kernel_new(pl, arena_printf(pl->a, "adamw_cast_%s", w->name), op->id);
	k->kind = KERNEL_GENERATED;
	k->tmpl = block ? "adamw_cast_block.cu" : "adamw_cast.cu";
	adamw_slots(pl, k, 0);
	pl_slot(pl, k, "TG_W_DTYPE", pl_istr(pl, dtype_code(w->dtype)));
	pl_slot(pl, k, "TG_FMT", q->dtype == DT_E5M2 ? "1" : "0");
	pl_slot(pl, k, "TG_ROWWISE", q->rowwise ? "1" : "0");
	pl_slot(pl, k, "TG_COLWISE", q->columnwise ? "1" : "0");
	pl_slot(pl, k, "TG_THREADS", "256");
	adamw_binds(pl, k, op, w);
	if (q->rowwise)
		pl_bind(pl, k, TG_P_OUT, q->id, COMP_DATA);
	if (q->columnwise)
		pl_bind(pl, k, TG_P_OUT_T, q->id, COMP_DATA_T);
	if (block) {
		pl_slot(pl, k, "TG_RECIPE", pl_istr(pl, scaling_info(q->recipe.scaling)->code));
		pl_slot(pl, k, "TG_EPS_SCALE", pl_flit(pl, q->recipe.eps));
		pl_slot(pl, k, "TG_POW2", q->recipe.pow2 ? "1" : "0");
		if (q->rowwise)
			pl_bind(pl, k, TG_P_SCALE_INV, q->id, COMP_SCALE_INV);
		if (q->columnwise)
			pl_bind(pl, k, TG_P_SCALE_INV_T, q->id, COMP_SCALE_INV_T);
	} else {
		pl_bind(pl, k, TG_P_SCALE, q->id, COMP_SCALE);
		pl_bind(pl, k, TG_P_SCALE_INV, q->id, COMP_SCALE_INV);
		pl_bind(pl, k, TG_P_AMAX, q->id, COMP_AMAX);
	}
	k->bind[k->nbind++] = (Binding){11 /* TG_PAC_STATE, TG_PAB_STATE */, -1, COMP_OPTIM};
	k->rows = pl_tensor_rows(pl, w, op->loc);
	k->cols = pl_tensor_cols(w);
	k->threads = 256;
	k->grid_rows = block ? 128 : 64; /* grid.x = tiles, capped: grid-stride */
	k->grid_cols = block ? 128 : 256;
	k->variant = block ? "t256r128c128" : "t256r64c256";
	k->choice = "fixed";
	k->note = arena_printf(pl->a, "AdamW of %s fused with its cast to %s (%s): master, m, v, %s and the FP8 copies "
		"in one pass", w->name, q->name, !block ? "delayed: the scale known before the step"
		: q->recipe.scaling == SCALING_BLOCK128X128 ? "128x128 blocks: a tile's scale from its own amax"
		: q->recipe.scaling == SCALING_MXFP8 ? "MXFP8: each 1x32 block's scale from its amax, within a 128 x 128 tile"
		: "1x128 blocks: each block's scale from its amax, within a 128 x 128 tile", w->name);
	if (block)
		pl_slot(pl, k, "TG_DEQ", "0");
	for (int i = 0; i < pl->p->nkernels; i++) {
		Kernel *c = &pl->p->kernels[i];
		if (!c->nops || c->ops[0] != cast->id || c->phase != PHASE_FORWARD)
			continue;
		c->cast_in_update = true;
		/* after a step the update writes the copies in place of the cast: the BF16 operand the cast writes too
		 * (TG_DEQ, mx_writer_of) */
		if (pl_slot_long(c, "TG_DEQ", 0) & 1)
			pl_deq_in_writer(pl, k, q, COMP_DATA, TG_P_MX_DEQ);
	}
}

/* adamw: one element-wise pass over the weight (flat, grid-stride): master, m, v and the
 * weight itself updated in place; fused with the weight's cast where fusable_weight_cast says. */
void plan_adamw(Planner *pl, const Op *op)
{
	const Tensor *w = &pl->g->tensors[op->arg[ARG_IN]];
	const Op *cast = fusable_weight_cast(pl, w);
	if (cast) {
		plan_adamw_cast(pl, op, cast);
		return;
	}
	long cols = pl_tensor_cols(w);
	int vec = cols % 4 == 0 ? 4 : cols % 2 == 0 ? 2 : 1;
	/* vec == 1 only for an fp32 weight and gradient (ir.c's infer_adamw rejects the rest) */
	Kernel *k = pl_kernel_new(pl, arena_printf(pl->a, "adamw_%s", w->name), op->id);
	k->kind = KERNEL_GENERATED;
	k->tmpl = "adamw.cu";
	adamw_slots(pl, k, 0);
	pl_slot(pl, k, "TG_W_DTYPE", pl_istr(pl, dtype_code(w->dtype)));
	pl_slot(pl, k, "TG_VEC", pl_istr(pl, vec));
	pl_slot(pl, k, "TG_THREADS", "256");
	adamw_binds(pl, k, op, w);
	/* a weight cast with current scaling or NVFP4 (a global amax first): its amax comes from the
	 * update (the cast's amax pass, kept for tg_run while stale, skipped by the optimizer step) */
	cast = weight_cast(pl, w);
	const Tensor *q = cast ? &pl->g->tensors[cast->arg[ARG_OUT]] : NULL;
	bool amax = q && pl_is_quantized(q) && q->state_slot >= 0 && (q->recipe.scaling == SCALING_CURRENT ||
		(q->recipe.scaling == SCALING_NVFP4 && !q->recipe.nvfp4_rht));
	pl_slot(pl, k, "TG_AMAX", amax ? "1" : "0");
	if (amax) {
		pl_bind(pl, k, TG_P_AMAX, q->id, COMP_AMAX);
		for (int i = 0; i < pl->p->nkernels; i++) {
			Kernel *c = &pl->p->kernels[i];
			if (c->nops && c->ops[0] == cast->id && c->phase == PHASE_FORWARD && c->pass == PASS_AMAX)
				c->cast_in_update = true;
		}
	}
	k->bind[k->nbind++] = (Binding){TG_PA_STATE, -1, COMP_OPTIM};
	k->rows = pl_tensor_rows(pl, w, op->loc);
	k->cols = cols;
	k->threads = 256;
	k->grid_rows = 1;              /* grid.x = rows * ceil(cols / (256 * vec)), capped: grid-stride */
	k->grid_cols = 256L * vec;
	k->variant = arena_printf(pl->a, "t256v%d", vec);
	k->choice = "fixed";
	k->note = arena_printf(pl->a, "AdamW: %s.master, .m, .v and %s (%s) updated in place from %s%s%s", w->name, w->name,
		dtype_name(w->dtype), pl->g->tensors[op->arg[ARG_GRAD]].name, amax ? "; and the amax of " : "", amax ? q->name : "");
}

/* After every update: the optimizer's step count and beta powers (one thread). */
void plan_optim_step(Planner *pl)
{
	Kernel *k = pl_kernel_new(pl, "optim_step", -1);
	k->kind = KERNEL_GENERATED;
	k->tmpl = "adamw.cu";
	adamw_slots(pl, k, 1);
	pl_slot(pl, k, "TG_W_DTYPE", "0");
	pl_slot(pl, k, "TG_G_DTYPE", "0");
	pl_slot(pl, k, "TG_VEC", "1");
	pl_slot(pl, k, "TG_THREADS", "32");
	pl_slot(pl, k, "TG_AMAX", "0");
	k->bind[k->nbind++] = (Binding){TG_PA_STATE, -1, COMP_OPTIM};
	k->phase = PHASE_OPTIMIZER;
	k->rows = (Extent){-1, 0, 1};
	k->cols = 1;
	k->threads = 32;
	k->grid_rows = 1;
	k->variant = "t32";
	k->choice = "fixed";
	k->note = "the optimizer state: step += 1, beta1^step and beta2^step (read by the next step's updates)";
}
