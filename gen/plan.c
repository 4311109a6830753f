/* plan.c: fuse the graph's ops into kernels and choose their tile shapes.
 *
 * Each quantizing op (norm_quantize, glu_amax, cast_transpose, quantize)
 * already names a fused unit of work: one kernel reads its input once and
 * writes every requested output (rowwise and columnwise copies, scales, amax).
 * Per-tensor current scaling needs the amax before the cast, so it is planned
 * as two kernels from the same template: an amax pass and a cast pass that
 * re-reads the input (no high-precision intermediate is written). Delayed
 * scaling adds one recipe_update kernel for the whole layer, run by the step
 * call. GEMMs become library calls (cuBLASLt) with layouts and scales resolved.
 *
 * Guarantees: deterministic output for a given graph; every kernel's slots
 * are complete for its template (emit checks); numerics are those of running
 * the ops one by one through the CPU reference. */
#include "gen.h"
#include "tg_kernel.h"

#include <stdio.h>
#include <string.h>

/* TG_RECIPE slot values shared by the templates */
enum { R_NONE = 0, R_DELAYED = 1, R_CURRENT_CAST = 2, R_CURRENT_AMAX = 3, R_BLOCK1X128 = 4, R_BLOCK128X128 = 5,
	R_MXFP8 = 6 };

typedef struct Planner { Arena *a; Diag *d; const Graph *g; Plan *p; int cap; } Planner;

/* A tile-shape variant of a template: named slot values. The heuristic picks
 * one by the row length; `tegen tune` times them all. */
typedef struct Variant { const char *name; int threads, vec, rows_per_cta; long min_cols, max_cols; } Variant;

static const Variant row_variants[] = {
	/* name        threads vec rows/cta  cols range      (threads per row = threads / rows)
	 * Measured on an H200 (bench/RESULTS.md): 4096 cols best at 128 threads per
	 * row, one row per CTA (3603 GB/s); 14336 cols at 256 (3969 GB/s). */
	{"t128v8r8", 128, 8, 8, 1, 512},
	{"t128v8r2", 128, 8, 2, 513, 2048},
	{"t128v8r1", 128, 8, 1, 2049, 6144},
	{"t256v8r1", 256, 8, 1, 6145, 1L << 30},
};
/* With a columnwise copy the norm/GLU templates take a tile path: a CTA owns 32
 * rows and re-reads them from L2 in column chunks; one 1024-thread CTA per SM. */
static const Variant colwise_variant = {"t1024v8r32", 1024, 8, 32, 1, 1L << 30};

/* cast_transpose tiles (constraints in the template: TILE_COLS % 128 == 0,
 * columnwise TILE_ROWS % 32 (block1x128: % 128), block128x128 needs 128x128). */
typedef struct TileVariant { const char *name; int threads, tile_rows, tile_cols; } TileVariant;
static const TileVariant tile_variants[] = {
	{"t256r32c128", 256, 32, 128},   /* rowwise only: a streaming cast */
	{"t256r64c128", 256, 64, 128},   /* per-tensor and MXFP8 with a transpose */
	{"t256r128c128", 256, 128, 128}, /* block scaling */
};

static const char *istr(Planner *pl, long v) { return arena_printf(pl->a, "%ld", v); }

/* A C++ float literal that round-trips (1e-05f, 0.0f, 7.0f). */
static const char *flit(Planner *pl, float v)
{
	char buf[64];
	snprintf(buf, sizeof buf, "%.9g", v);
	if (!strpbrk(buf, ".en"))
		strcat(buf, ".0");
	return arena_printf(pl->a, "%sf", buf);
}

static void slot(Planner *pl, Kernel *k, const char *name, const char *value)
{
	if (k->nslots == TG_MAX_SLOTS)
		diag_error(pl->d, (Loc){0}, "internal: too many slots in kernel %s", k->name);
	k->slots[k->nslots++] = (Slot){name, value};
}

static void bind(Planner *pl, Kernel *k, int pslot, int tensor, Component c)
{
	if (tensor < 0)
		return;
	k->bind[k->nbind++] = (Binding){pslot, tensor, c};
}

const char *plan_slot(const Kernel *k, const char *name)
{
	for (int i = 0; i < k->nslots; i++)
		if (!strcmp(k->slots[i].name, name))
			return k->slots[i].value;
	return NULL;
}

static Kernel *kernel_new(Planner *pl, const char *what, int op)
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
	memset(k, 0, sizeof *k); /* the slot may have held a kernel that was taken back */
	k->name = arena_printf(pl->a, "k%d_%s", p->nkernels, what);
	if (op >= 0)
		k->ops[k->nops++] = op;
	p->nkernels++;
	return k;
}

/* rows = product of all but the last extent; at most one may be dynamic. */
static Extent tensor_rows(Planner *pl, const Tensor *t, Loc loc)
{
	Extent r = {-1, 0, 1};
	for (int i = 0; i + 1 < t->rank; i++) {
		Extent e = t->shape[i];
		if (e.dim >= 0 && r.dim >= 0)
			diag_error(pl->d, loc, "tensor '%s' has two dynamic leading dimensions; flatten them into one", t->name);
		if (e.dim >= 0)
			r = (Extent){e.dim, e.mul * r.add, e.add * r.add};
		else
			r = (Extent){r.dim, r.mul * e.add, r.add * e.add};
	}
	return r;
}

static long tensor_cols(const Tensor *t) { return t->rank ? t->shape[t->rank - 1].add : 1; }

static int dtype_code(DType t) { return t == DT_F32 ? 0 : t == DT_BF16 ? 1 : t == DT_F16 ? 2 : -1; }

static int recipe_code(const Tensor *out, ScalePass pass)
{
	switch (out->recipe.scaling) {
	case SCALING_NONE: return R_NONE;
	case SCALING_DELAYED: return R_DELAYED;
	case SCALING_CURRENT: return pass == PASS_AMAX ? R_CURRENT_AMAX : R_CURRENT_CAST;
	case SCALING_BLOCK1X128: return R_BLOCK1X128;
	case SCALING_BLOCK128X128: return R_BLOCK128X128;
	case SCALING_MXFP8: return R_MXFP8;
	default: return -1;
	}
}

static bool is_quantized(const Tensor *t) { return t->recipe.scaling != SCALING_NONE && t->dtype != t->hp_dtype; }

/* The slots every quantizing template shares: dtypes, recipe, layouts. */
static void common_slots(Planner *pl, Kernel *k, const Tensor *in, const Tensor *out, long cols, ScalePass pass)
{
	k->pass = pass;
	slot(pl, k, "TG_KERNEL", emit_entry(pl->a, pl->p, k));
	slot(pl, k, "TG_IN_DTYPE", istr(pl, dtype_code(in->dtype)));
	slot(pl, k, "TG_OUT_DTYPE", istr(pl, dtype_code(is_quantized(out) ? DT_BF16 : out->dtype)));
	slot(pl, k, "TG_FMT", out->dtype == DT_E5M2 ? "1" : "0");
	slot(pl, k, "TG_RECIPE", istr(pl, recipe_code(out, pass)));
	slot(pl, k, "TG_ROWWISE", out->rowwise || !is_quantized(out) ? "1" : "0");
	slot(pl, k, "TG_COLWISE", is_quantized(out) && out->columnwise ? "1" : "0");
	slot(pl, k, "TG_COLS", istr(pl, cols));
	slot(pl, k, "TG_EPS_SCALE", flit(pl, out->recipe.eps));
	slot(pl, k, "TG_POW2", out->recipe.pow2 ? "1" : "0");
	slot(pl, k, "TG_MARGIN", istr(pl, out->recipe.margin));
}

static void bind_outputs(Planner *pl, Kernel *k, const Tensor *out)
{
	if (!is_quantized(out)) {
		bind(pl, k, TG_P_OUT, out->id, COMP_DATA);
		return;
	}
	if (out->rowwise)
		bind(pl, k, TG_P_OUT, out->id, COMP_DATA);
	if (out->columnwise)
		bind(pl, k, TG_P_OUT_T, out->id, COMP_DATA_T);
	switch (out->recipe.scaling) {
	case SCALING_DELAYED:
	case SCALING_CURRENT:
		bind(pl, k, TG_P_SCALE, out->id, COMP_SCALE);
		bind(pl, k, TG_P_SCALE_INV, out->id, COMP_SCALE_INV);
		bind(pl, k, TG_P_AMAX, out->id, COMP_AMAX);
		break;
	default:
		if (out->rowwise || out->recipe.scaling == SCALING_BLOCK128X128)
			bind(pl, k, TG_P_SCALE_INV, out->id, COMP_SCALE_INV);
		if (out->columnwise && out->recipe.scaling != SCALING_BLOCK128X128)
			bind(pl, k, TG_P_SCALE_INV_T, out->id, COMP_SCALE_INV_T);
		break;
	}
}

static const Variant *pick_row_variant(long cols)
{
	for (size_t i = 0; i < sizeof row_variants / sizeof *row_variants; i++)
		if (cols >= row_variants[i].min_cols && cols <= row_variants[i].max_cols)
			return &row_variants[i];
	return &row_variants[0];
}

static void row_launch(Planner *pl, Kernel *k, const Tensor *out, Extent rows, long cols)
{
	const Variant *v = is_quantized(out) && out->columnwise && k->pass != PASS_AMAX ? &colwise_variant : pick_row_variant(cols);
	k->rows = rows;
	k->cols = cols;
	k->threads = v->threads;
	k->grid_rows = v->rows_per_cta;
	k->grid_cols = 0;
	k->variant = v->name;
	k->choice = "heuristic";
	slot(pl, k, "TG_THREADS", istr(pl, v->threads));
	slot(pl, k, "TG_VEC", istr(pl, v->vec));
	slot(pl, k, "TG_ROWS_PER_CTA", istr(pl, v->rows_per_cta));
}

static void tile_launch(Planner *pl, Kernel *k, const Tensor *out, Extent rows, long cols)
{
	Scaling sc = is_quantized(out) ? out->recipe.scaling : SCALING_NONE;
	const TileVariant *v = &tile_variants[1];
	if (sc == SCALING_BLOCK1X128 || sc == SCALING_BLOCK128X128)
		v = &tile_variants[2];
	else if (!out->columnwise || !is_quantized(out))
		v = &tile_variants[0];
	k->rows = rows;
	k->cols = cols;
	k->threads = v->threads;
	k->grid_rows = v->tile_rows;
	k->grid_cols = v->tile_cols;
	k->variant = v->name;
	k->choice = "heuristic";
	slot(pl, k, "TG_THREADS", istr(pl, v->threads));
	slot(pl, k, "TG_TILE_ROWS", istr(pl, v->tile_rows));
	slot(pl, k, "TG_TILE_COLS", istr(pl, v->tile_cols));
}

static void check_supported(Planner *pl, const Op *op, const Tensor *out)
{
	if (out->recipe.scaling == SCALING_NVFP4)
		diag_error(pl->d, op->loc, "%s: the nvfp4 recipe is not supported by the planner yet (tensor '%s'); "
			"use mxfp8 or fp8 block scaling", op_name(op->kind), out->name);
	bool fused = op->kind != OP_QUANTIZE && op->kind != OP_CAST_TRANSPOSE;
	if (fused && out->recipe.scaling == SCALING_BLOCK1X128 && out->columnwise)
		diag_error(pl->d, op->loc, "%s: a columnwise block1x128 copy of '%s' is not supported in the fused kernel yet; "
			"write '%s' in bf16 (precision: bf16) and add a cast_transpose", op_name(op->kind), out->name, out->name);
	if (fused && out->recipe.scaling == SCALING_BLOCK128X128)
		diag_error(pl->d, op->loc, "%s: block128x128 scaling is for weights; fused %s supports block1x128 for '%s'",
			op_name(op->kind), op_name(op->kind), out->name);
}

/* One or two kernels (current scaling) for a quantizing op. */
static void plan_quantizing_op(Planner *pl, const Op *op)
{
	const Graph *g = pl->g;
	const Tensor *in = &g->tensors[op->arg[ARG_IN]];
	const Tensor *out = &g->tensors[op->arg[ARG_OUT]];
	check_supported(pl, op, out);
	Extent rows = tensor_rows(pl, out, op->loc);
	long cols = tensor_cols(out);
	bool current = is_quantized(out) && out->recipe.scaling == SCALING_CURRENT;
	const char *tmpl = op_template(op->kind);
	bool tiled = op->kind == OP_QUANTIZE || op->kind == OP_CAST_TRANSPOSE;
	for (int pass = current ? PASS_AMAX : PASS_SINGLE; pass <= (current ? PASS_CAST : PASS_SINGLE); pass++) {
		const char *what = pass == PASS_AMAX ? arena_printf(pl->a, "%s_amax", op_name(op->kind)) : op_name(op->kind);
		Kernel *k = kernel_new(pl, what, op->id);
		k->kind = KERNEL_GENERATED;
		k->tmpl = tmpl;
		common_slots(pl, k, in, out, cols, pass);
		bind(pl, k, TG_P_IN, in->id, COMP_DATA);
		if (op->kind == OP_NORM_QUANTIZE) {
			slot(pl, k, "TG_NORM", op->p.norm == NORM_LAYER ? "1" : "0");
			slot(pl, k, "TG_W_DTYPE", istr(pl, dtype_code(g->tensors[op->arg[ARG_GAMMA]].dtype)));
			slot(pl, k, "TG_EPS", flit(pl, op->p.eps));
			slot(pl, k, "TG_ZERO_CENTERED", op->p.zero_centered_gamma ? "1" : "0");
			slot(pl, k, "TG_HAS_RESIDUAL", op->arg[ARG_RESIDUAL] >= 0 ? "1" : "0");
			bind(pl, k, TG_P_GAMMA, op->arg[ARG_GAMMA], COMP_DATA);
			bind(pl, k, TG_P_BETA, op->arg[ARG_BETA], COMP_DATA);
			bind(pl, k, TG_P_RESIDUAL, op->arg[ARG_RESIDUAL], COMP_DATA);
			if (pass != PASS_AMAX)
				bind(pl, k, TG_P_RESIDUAL_OUT, op->arg[ARG_RESIDUAL_OUT], COMP_DATA);
		}
		if (op->kind == OP_GLU_AMAX) {
			slot(pl, k, "TG_ACT", istr(pl, op->p.act));
			slot(pl, k, "TG_ALPHA", flit(pl, op->p.alpha));
			slot(pl, k, "TG_LIMIT", flit(pl, op->p.limit));
		}
		if (pass == PASS_AMAX)
			bind(pl, k, TG_P_AMAX, out->id, COMP_AMAX);
		else
			bind_outputs(pl, k, out);
		if (tiled)
			tile_launch(pl, k, out, rows, cols);
		else
			row_launch(pl, k, out, rows, cols);
		k->note = pass == PASS_AMAX ? "current scaling, pass 1 of 2: amax of the output, nothing written"
			: pass == PASS_CAST ? "current scaling, pass 2 of 2: scale from the amax, re-read the input, cast"
			: NULL;
	}
}

/* An MXFP8 operand copy (data or data_t) dequantized to a BF16 copy, flat: element e has scale e/32. */
static void plan_dequantize(Planner *pl, const Op *op, const Tensor *t, Component from)
{
	Kernel *k = kernel_new(pl, arena_printf(pl->a, "dequantize_%s%s", t->name, from == COMP_DATA_T ? "_t" : ""), op->id);
	k->kind = KERNEL_GENERATED;
	k->tmpl = "dequantize.cu";
	slot(pl, k, "TG_KERNEL", emit_entry(pl->a, pl->p, k));
	slot(pl, k, "TG_THREADS", "256");
	slot(pl, k, "TG_FMT", t->dtype == DT_E5M2 ? "1" : "0");
	bind(pl, k, TG_P_IN, t->id, from);
	bind(pl, k, TG_P_SCALE_INV, t->id, from == COMP_DATA ? COMP_SCALE_INV : COMP_SCALE_INV_T);
	bind(pl, k, TG_P_OUT, t->id, from == COMP_DATA ? COMP_DEQ : COMP_DEQ_T);
	Extent r = tensor_rows(pl, t, op->loc);
	long cols = tensor_cols(t);
	k->rows = (Extent){r.dim, r.mul * cols, r.add * cols}; /* n[0] = all elements */
	k->cols = 1;
	k->threads = 256;
	k->grid_rows = 256 * 16;
	k->variant = "t256x16";
	k->choice = "fixed";
	k->note = "emulated MXFP8 GEMM: operand to BF16";
}

static void plan_gemm(Planner *pl, const Op *op)
{
	const Graph *g = pl->g;
	const Tensor *a = &g->tensors[op->arg[ARG_A]], *b = &g->tensors[op->arg[ARG_B]];
	const Tensor *d = &g->tensors[op->arg[ARG_OUT]];
	Kernel *k = kernel_new(pl, "gemm", op->id);
	k->kind = KERNEL_GEMM;
	GemmCall *c = &k->gemm;
	c->op = op->id;
	c->a = a->id;
	c->b = b->id;
	c->d = d->id;
	c->bias = op->arg[ARG_BIAS];
	Extent arows = tensor_rows(pl, a, op->loc), brows = tensor_rows(pl, b, op->loc);
	long acols = tensor_cols(a), bcols = tensor_cols(b);
	/* TN: both operands K-contiguous. fprop: A[M][K], B[N][K]; dgrad: dY[M][N] rowwise,
	 * W^T = columnwise copy [K][N]; wgrad: dY^T [N][M] and X^T [K][M] (columnwise). */
	switch (op->p.pass) {
	case PASS_FPROP:
		c->m = arows; c->k = (Extent){-1, 0, acols}; c->n = brows;
		c->a_comp = COMP_DATA; c->b_comp = COMP_DATA;
		break;
	case PASS_DGRAD:
		c->m = arows; c->n = (Extent){-1, 0, bcols}; c->k = (Extent){-1, 0, acols};
		c->a_comp = COMP_DATA; c->b_comp = COMP_DATA_T;
		break;
	case PASS_WGRAD:
		c->m = (Extent){-1, 0, acols}; c->n = (Extent){-1, 0, bcols}; c->k = arows;
		c->a_comp = COMP_DATA_T; c->b_comp = COMP_DATA_T;
		break;
	}
	c->scaling = is_quantized(a) ? a->recipe.scaling : SCALING_NONE;
	c->a_dtype = a->dtype;
	c->b_dtype = b->dtype;
	c->d_dtype = d->dtype;
	c->accumulate = op->p.accumulate;
	c->fast_accum = op->p.fast_accum < 0 ? op->p.pass == PASS_FPROP : op->p.fast_accum;
	if (c->scaling == SCALING_NONE || c->scaling == SCALING_BLOCK1X128 || c->scaling == SCALING_BLOCK128X128)
		c->fast_accum = false; /* cuBLASLt's block-scaled FP8 GEMM has no fast-accumulation mode */
	if (c->scaling == SCALING_MXFP8 && op->emulated) {
		/* No native MXFP8 MMA on every target: dequantize both operands to BF16
		 * (exact) and run a BF16 GEMM. Planned before the GEMM in the kernel list. */
		Kernel saved = *k;
		pl->p->nkernels--;
		c = NULL;
		plan_dequantize(pl, op, a, saved.gemm.a_comp);
		plan_dequantize(pl, op, b, saved.gemm.b_comp);
		k = kernel_new(pl, "gemm", op->id);
		*k = saved;
		k->name = arena_printf(pl->a, "k%d_gemm", pl->p->nkernels - 1);
		c = &k->gemm;
		c->emulated = true;
		c->a_comp = c->a_comp == COMP_DATA ? COMP_DEQ : COMP_DEQ_T;
		c->b_comp = c->b_comp == COMP_DATA ? COMP_DEQ : COMP_DEQ_T;
		c->scaling = SCALING_NONE;
		c->a_dtype = c->b_dtype = DT_BF16;
		c->fast_accum = false;
	}
	k->rows = c->m;
	k->cols = c->n.add;
	k->choice = "cuBLASLt heuristic, cached per shape";
	if (op->emulated)
		k->note = op->emulated;
	else if (c->scaling == SCALING_NONE)
		k->note = "cuBLASLt BF16";
}

static void plan_recipe_update(Planner *pl)
{
	Kernel *k = kernel_new(pl, "recipe_update", -1);
	k->kind = KERNEL_GENERATED;
	k->tmpl = "recipe_update.cu";
	slot(pl, k, "TG_KERNEL", emit_entry(pl->a, pl->p, k));
	slot(pl, k, "TG_THREADS", "256");
	k->bind[k->nbind++] = (Binding){0, -1, COMP_STATE};
	k->bind[k->nbind++] = (Binding){1, -1, COMP_STATE_PARAMS};
	k->rows = (Extent){-1, 0, pl->g->nstate}; /* the state layout is over all per-tensor slots */
	k->cols = pl->g->history;
	k->threads = 256;
	k->grid_rows = 32; /* grid.x = ceil(tensors / 32) */
	k->variant = "t256";
	k->choice = "fixed";
	k->note = "delayed scaling: roll every amax history and compute the next scales, one launch (step call)";
	pl->p->needs_update = true;
	pl->p->update_kernel = pl->p->nkernels - 1;
}

Plan *plan_build(Arena *a, Diag *d, const Graph *g)
{
	Plan *p = arena_alloc(a, sizeof *p);
	Planner pl = {a, d, g, p, 0};
	p->g = g;
	p->update_kernel = -1;
	if (setjmp(d->jmp))
		return NULL;
	for (int i = 0; i < g->ntensors; i++)
		if (g->tensors[i].state_slot >= 0 && g->tensors[i].recipe.scaling == SCALING_DELAYED)
			p->ndelayed++;
	for (int i = 0; i < g->nops; i++) {
		const Op *op = &g->ops[i];
		if (op->kind == OP_GEMM_CAST)
			plan_gemm(&pl, op);
		else
			plan_quantizing_op(&pl, op);
	}
	if (p->ndelayed)
		plan_recipe_update(&pl);
	return p;
}

static const char *comp_names[] = {
#define X(e, s) s,
	TG_COMPONENTS(X)
#undef X
};

void plan_print(const Plan *p, Buf *out)
{
	const Graph *g = p->g;
	Arena *a = arena_new();
	buf_printf(out, "plan %s: %d kernels", g->layer, p->nkernels);
	if (p->ndelayed)
		buf_printf(out, ", %d delayed-scaling tensors", p->ndelayed);
	buf_puts(out, "\n");
	for (int i = 0; i < p->nkernels; i++) {
		const Kernel *k = &p->kernels[i];
		buf_printf(out, "%s", k->name);
		if (k->nops) {
			buf_puts(out, " ops=");
			for (int j = 0; j < k->nops; j++)
				buf_printf(out, "%sop%d", j ? "," : "", k->ops[j]);
		}
		if (k->kind == KERNEL_GEMM) {
			const GemmCall *c = &k->gemm;
			buf_printf(out, " cublaslt m=%s n=%s k=%s a=%s.%s b=%s.%s d=%s %s->%s%s%s%s", extent_str(a, g, c->m),
				extent_str(a, g, c->n), extent_str(a, g, c->k), g->tensors[c->a].name, comp_names[c->a_comp],
				g->tensors[c->b].name, comp_names[c->b_comp], g->tensors[c->d].name,
				c->scaling == SCALING_NONE ? dtype_name(c->a_dtype) : scaling_name(c->scaling), dtype_name(c->d_dtype),
				c->fast_accum ? " fast_accum" : "", c->accumulate ? " accumulate" : "",
				c->bias >= 0 ? arena_printf(a, " bias=%s", g->tensors[c->bias].name) : "");
		} else {
			buf_printf(out, " template=%s variant=%s (%s) block=%d grid=ceil(%s/%d)", k->tmpl, k->variant, k->choice,
				k->threads, extent_str(a, g, k->rows), k->grid_rows);
			if (k->grid_cols)
				buf_printf(out, "*ceil(%ld/%ld)", k->cols, k->grid_cols);
			buf_puts(out, " bind=");
			for (int j = 0; j < k->nbind; j++) {
				const Binding *b = &k->bind[j];
				buf_printf(out, "%sp%d:%s%s%s", j ? "," : "", b->slot, b->tensor >= 0 ? g->tensors[b->tensor].name : "",
					b->tensor >= 0 ? "." : "", comp_names[b->comp]);
			}
		}
		if (k->note)
			buf_printf(out, "  # %s", k->note);
		buf_puts(out, "\n");
	}
	arena_free(a);
}
