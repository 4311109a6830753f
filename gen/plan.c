/* plan.c: fuse the graph's ops into kernels and choose their tile shapes.
 *
 * Each quantizing op (norm_quantize, glu_amax, cast_transpose, quantize)
 * already names a fused unit of work: one kernel reads its input once and
 * writes every requested output (rowwise and columnwise copies, scales, amax).
 * Per-tensor current scaling needs the amax before the cast, so it is planned
 * as two kernels from the same template: an amax pass and a cast pass that
 * re-reads the input (no high-precision intermediate is written). NVFP4 is
 * planned the same way with its own template (nvfp4_quantize.cu); a norm or
 * GLU writes its rowwise NVFP4 copy itself (both passes of its own template),
 * while a columnwise or 16x16-block NVFP4 copy of a row op runs unfused: its
 * kernel writes the FP32 value (component hp), which the NVFP4 amax and cast
 * kernels then read. A norm's block 1x128 columnwise copy is a second kernel,
 * norm_colwise.cu, which reads the input again with the row statistics the norm
 * kernel saved (no FP32 intermediate). Delayed
 * scaling adds one recipe_update kernel for the whole layer, run by the step
 * call. GEMMs become library calls (cuBLASLt) with layouts and scales resolved.
 *
 * Tile shapes: each template family has an explicit variant table; a
 * heuristic picks one, or, with PlanOptions naming a tuning DB and this GPU,
 * the fastest variant `tegen tune` measured for the kernel's signature and
 * row bucket (tune.c). Only variants meeting the template's compile-time
 * constraints are ever applied.
 *
 * Guarantees: deterministic output for a given graph (and DB); every kernel's slots
 * are complete for its template (emit checks); numerics are those of running
 * the ops one by one through the CPU reference. */
#include "gen.h"
#include "layout.h"
#include "tg_codes.h"
#include "tg_backward.h"
#include "tg_optim.h"
#include "tg_kernel.h"
#include "tg_recipe.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Planner { Arena *a; Diag *d; const Graph *g; Plan *p; int cap; long tokens; bool hp_values; } Planner;

/* Tile-shape variants, one explicit table per template family. A variant only
 * sets launch slots (TG_THREADS and TG_VEC/TG_ROWS_PER_CTA, or TG_TILE_ROWS/
 * TG_TILE_COLS) and the launch fields; it never changes what is computed.
 * variant_legal() encodes each template's compile-time constraints (the
 * static_asserts at the top of the template), so a variant that would not
 * compile is never offered, tuned or taken from the tuning DB.
 * The heuristic picks one per kernel; `tegen tune` times every legal one. */

/* norm_quantize.cu / glu_amax.cu, row path: TG_THREADS/TG_ROWS_PER_CTA threads
 * per row (a power of two), TG_VEC elements per load. */
static const PlanVariant row_variants[] = {
	/* name        threads vec rows/cta */
	{"t128v8r8", 128, 8, 8, 0, 0},
	{"t256v8r8", 256, 8, 8, 0, 0},
	{"t128v8r4", 128, 8, 4, 0, 0},
	{"t256v8r4", 256, 8, 4, 0, 0},
	{"t128v8r2", 128, 8, 2, 0, 0},
	{"t256v8r2", 256, 8, 2, 0, 0},
	{"t64v8r1", 64, 8, 1, 0, 0},
	{"t128v8r1", 128, 8, 1, 0, 0},
	{"t256v8r1", 256, 8, 1, 0, 0},
	{"t512v8r1", 512, 8, 1, 0, 0},
	{"t1024v8r1", 1024, 8, 1, 0, 0},
	{"t128v4r1", 128, 4, 1, 0, 0},
	{"t256v4r1", 256, 4, 1, 0, 0},
	{"t512v4r1", 512, 4, 1, 0, 0},
	{"t128v16r1", 128, 16, 1, 0, 0},
	{"t256v16r1", 256, 16, 1, 0, 0},
	/* rows whose length is a multiple of 2 but not 4 (or of 4 but not 8 where
	 * v4 rows would spill), e.g. 4098: taken only when no variant above is legal */
	{"t128v2r1", 128, 2, 1, 0, 0},
	{"t256v2r1", 256, 2, 1, 0, 0},
	{"t512v2r1", 512, 2, 1, 0, 0},
	{"t1024v2r1", 1024, 2, 1, 0, 0},
	{"t1024v4r1", 1024, 4, 1, 0, 0},
	/* glu_amax.cu only (threads per row a multiple of 32, not a power of two): four
	 * 8-element vectors a thread at 14336 and 28672 columns */
	{"t448v8r1", 448, 8, 1, 0, 0},
	{"t896v8r1", 896, 8, 1, 0, 0},
};
/* The heuristics for the row path, by row length (output columns): the variant
 * whose worst time over 1..65536 tokens is least, from the `tegen tune` sweep
 * on an H100 (bench/tune_sweep.sh, bench/RESULTS.md): each within 1.10x of the
 * best variant at every token count. GLU wants one or two vectors a thread
 * (more threads per row as rows grow); norm a few rows a CTA on short rows. Rows with the same bound
 * are alternatives: the first variant the row can take (its vector divides the row, no spills). */
typedef struct { const char *variant; long max_cols; } RowHeuristic;
typedef struct { const RowHeuristic *row; int n; } RowHeuristics; /* a table and its length */
/* Norm rows (the rowwise kernel and amax pass of every recipe but delayed): 16-element vectors from 1024 columns
 * on, one or two a thread (H100, `tegen tune` over 1-65536 tokens at 2048, 4096 and 8192 columns, thirty-third
 * session, calls 1 and 3: worst case over the MXFP8, current (amax and cast), NVFP4 (amax and cast) and 1x128 norms
 * 1.06 / 1.09 / 1.05x the best variant, where the v8 table before took up to 1.20 / 1.24 / 1.36x; 1.08x with rows of
 * 4104 and 8200 in call 4: bench/RESULTS.md); rows a 16-element vector does not divide (or FP32 inputs or weights)
 * take the v8 variant listed after it (tests/gen/plan_norm_rows). */
static const RowHeuristic norm_heuristic[] = {
	{"t128v8r8", 512}, {"t256v8r4", 1024}, {"t128v16r1", 2048}, {"t256v8r2", 2048}, {"t128v16r1", 4096},
	{"t128v8r1", 4096}, {"t256v16r1", 1L << 30}, {"t256v8r1", 1L << 30},
};
/* The delayed-scaling norm (the least work an element) keeps the v8 table: at 2048 columns t128v16r1 ran 1.19x the
 * best at 4096 tokens (t256v8r2 1.09x), at 4096 and 8192 columns v8 and v16 within 1.04-1.09x of each other (H100,
 * thirty-third session, call 4). */
static const RowHeuristic norm_delayed_heuristic[] = {
	{"t128v8r8", 512}, {"t256v8r4", 1024}, {"t256v8r2", 2048}, {"t128v8r1", 8192}, {"t256v8r1", 1L << 30},
};
/* A norm writing FP32 (the unfused block-scaled plan's intermediate): the same up to 4096, then
 * four-element vectors (H100, 8192 columns, `tegen tune`, thirteenth session: t512v4r1 22.8 / 139.8 us
 * at 1024 / 8192 rows against t128v8r1's 29.1 / 155.5; at 32768 rows t256v4r1 561.2 against 625.4; the
 * v4 variants within 1% of each other at 8192). */
static const RowHeuristic norm_fp32_heuristic[] = {
	{"t128v8r8", 512}, {"t256v8r4", 1024}, {"t256v8r2", 2048}, {"t128v8r1", 4096}, {"t512v4r1", 1L << 30},
};
static const RowHeuristic glu_heuristic[] = {
	{"t128v8r8", 512}, {"t256v4r1", 1024}, {"t256v8r1", 2048},
};
/* Longer GLU rows: the first of these whose threads x vec divides the row with at least
 * min_vectors vectors a thread, so every thread holds the same number of vectors (measured:
 * bench/RESULTS.md, "Planner heuristics"); the last one when none does. */
typedef struct { const char *variant; long min_vectors; } LongRow;
typedef struct { const LongRow *row; int n; } LongRows; /* a table and its length */
/* 896 x 8 from four vectors a thread, then 512 x 8 from two, before 512 x 4: at 12288 / 20480 / 28672 columns the
 * SwiGLU + FP8 (delayed) and + MXFP8 took t512v4r1 up to 1.15 / 1.21 / 1.29x the best variant over 1-65536 tokens;
 * t512v8r1 1.09, 1.01 / 1.07, 1.07 and t896v8r1 1.07, 1.00 (H100, thirty-fifth session, bench/sweep_wide.yaml). */
static const LongRow glu_long_rows[] = {{"t1024v8r1", 1}, {"t896v8r1", 4}, {"t512v8r1", 2}, {"t512v4r1", 1}, {"t256v8r1", 1}};
/* Block-scaled (1x128) GLU rows: 8-element vectors (a scale block is 16 lanes, not 32), and at
 * least four a thread. H100, 8192 rows (harness_rows, seventh session): 28672 columns t896v8r1
 * 408-411 us (96% of copy) where t512v4r1 took 565-586 (69%); 14336 columns t448v8r1 202-209 us
 * (97%) vs 222-229 (88%). */
static const LongRow glu_block_long_rows[] = {{"t896v8r1", 4}, {"t448v8r1", 4}, {"t512v8r1", 4}, {"t256v8r1", 4}};
/* NVFP4 GLU rows (the cast pass, 16-element blocks over 2 lanes of 8): H100, 8192 x 14336
 * (`tegen tune`, eighth session): t256v8r1 251 us, t448v8r1 253, t512v4r1 273, t896v8r1 296. */
static const LongRow glu_nvfp4_long_rows[] = {{"t256v8r1", 1}, {"t448v8r1", 1}, {"t512v8r1", 1}};
/* dglu.cu rows longer than the row table: the same rule, its own order (dglu's per-element math
 * is heavier; at 2 x 14336 t256v8r1 ran 382 us, t512v4r1 450 us, t512v8r1 470 us on the H100:
 * bench/RESULTS.md, fifth session). */
static const LongRow dglu_long_rows[] = {{"t256v8r1", 1}, {"t512v4r1", 1}, {"t1024v8r1", 1}};
/* dglu's amax pass (current scaling: no stores) wants more threads: at 2 x 14336 t512v4r1 284.5 us against
 * t256v8r1's 351.7 on the H100, 276.3 against 345.6 on the H200 (`tegen tune`, fifteenth session). */
static const LongRow dglu_amax_long_rows[] = {{"t512v4r1", 1}, {"t256v8r1", 1}, {"t1024v8r1", 1}};
/* dglu writing d_h unquantized (the block-scaled plan's BF16 d_h, then a cast): at 2 x 28672 (`tegen tune`,
 * thirteenth session, 1024 / 8192 / 32768 rows) t1024v4r1 (seven vectors a thread) ran 1.09 / 1.10 / 1.15x
 * faster than the t512v8r1 the fallback gave (t256v8r1 holds fourteen). Not for the quantizing recipes:
 * MXFP8's dglu at 1024 threads (64 registers) spills on sm_100a there. */
static const LongRow dglu_hp_long_rows[] = {{"t1024v4r1", 4}, {"t256v8r1", 1}, {"t512v4r1", 1}, {"t1024v8r1", 1}};

/* norm_quantize.cu / glu_amax.cu, tile path (a columnwise copy): a CTA owns
 * TG_ROWS_PER_CTA rows (a multiple of 32) and re-reads them from L2 in column
 * chunks of TG_THREADS*TG_VEC/TG_ROWS_PER_CTA. Heuristic: t1024v8r32 (one
 * 1024-thread CTA per SM keeps the re-read in L2). */
static const PlanVariant colwise_variants[] = {
	{"t1024v8r32", 1024, 8, 32, 0, 0},
	{"t512v8r32", 512, 8, 32, 0, 0},
	{"t256v8r32", 256, 8, 32, 0, 0},
	{"t1024v4r32", 1024, 4, 32, 0, 0},
	{"t512v4r32", 512, 4, 32, 0, 0},
	{"t1024v8r64", 1024, 8, 64, 0, 0},
	{"t512v8r64", 512, 8, 64, 0, 0},
	{"t1024v4r64", 1024, 4, 64, 0, 0},
	/* steps of 32 and 16 columns: dglu.cu's tile path at C % 64 != 0 (its step must divide C) */
	{"t256v4r32", 256, 4, 32, 0, 0},
	{"t128v4r32", 128, 4, 32, 0, 0},
	/* the block tile paths of glu_amax.cu and dglu.cu (1x128 or MXFP8 blocks both ways): 128 x 128 tiles, only these */
	{"t256v8r128", 256, 8, 128, 0, 0},
	{"t512v8r128", 512, 8, 128, 0, 0},
	{"t1024v8r128", 1024, 8, 128, 0, 0},
};

/* cast_transpose.cu (quantize, cast_transpose): TG_TILE_ROWS x TG_TILE_COLS
 * tiles. Heuristic: t128r32c128 an amax pass, t512r64c128 a rowwise-only
 * quantized copy (t128r64c128 unquantized), r64c128 per-tensor and MXFP8 with a
 * transpose (r32c128 up to 256 rows, t256r128c128 from 2^29 elements, when the
 * rows are known), r128c128 block scaling. */
static const PlanVariant tile_variants[] = {
	/* name          threads        rows cols */
	{"t256r32c128", 256, 0, 0, 32, 128},
	{"t256r64c128", 256, 0, 0, 64, 128},
	{"t256r128c128", 256, 0, 0, 128, 128},
	{"t128r16c128", 128, 0, 0, 16, 128},
	{"t128r32c128", 128, 0, 0, 32, 128},
	{"t128r64c128", 128, 0, 0, 64, 128},
	{"t512r64c128", 512, 0, 0, 64, 128},
	{"t512r128c128", 512, 0, 0, 128, 128},
	{"t1024r128c128", 1024, 0, 0, 128, 128},
	{"t256r32c256", 256, 0, 0, 32, 256},
	{"t256r64c256", 256, 0, 0, 64, 256},
	{"t512r64c256", 512, 0, 0, 64, 256},
	{"t512r128c256", 512, 0, 0, 128, 256},
};

#define NELEMS(x) ((int)(sizeof(x) / sizeof *(x)))
#define TABLE(type, t) ((type){(t), NELEMS(t)}) /* a table with its length (RowHeuristics, LongRows) */

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

/* Whether kernel k binds component c of tensor t (at pointer slot `slot`, or any slot when slot < 0). */
static bool binds(const Kernel *k, int t, Component c, int slot)
{
	for (int b = 0; b < k->nbind; b++)
		if (k->bind[b].tensor == t && k->bind[b].comp == c && (slot < 0 || k->bind[b].slot == slot))
			return true;
	return false;
}

/* The last kernel planned so far that writes copy `from` (data or data_t) of t, or NULL. */
static Kernel *copy_writer(Planner *pl, const Tensor *t, Component from)
{
	for (int i = pl->p->nkernels - 1; i >= 0; i--)
		if (binds(&pl->p->kernels[i], t->id, from, from == COMP_DATA ? TG_P_OUT : TG_P_OUT_T))
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
static Extent tensor_rows(Planner *pl, const Tensor *t, Loc loc)
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
static long extent_at(Extent e, long tokens)
{
	long v;
	if (e.dim < 0)
		return e.add;
	if (__builtin_mul_overflow(e.mul, tokens, &v) || __builtin_add_overflow(v, e.add, &v))
		return LONG_MAX;
	return v;
}

static long tensor_cols(const Tensor *t) { return t->rank ? t->shape[t->rank - 1].add : 1; }

/* The TG_RECIPE slot of a kernel writing out: the recipe table's code; current
 * scaling's amax pass has its own. */
static int recipe_code(const Tensor *out, ScalePass pass)
{
	if (scaling_info(out->recipe.scaling)->amax_pass && pass == PASS_AMAX)
		return TG_RECIPE_CURRENT_AMAX;
	return scaling_info(out->recipe.scaling)->code;
}

static bool is_quantized(const Tensor *t) { return layout_quantized(t); }

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
	slot(pl, k, "TG_DEQ", "0"); /* plan_dequantize sets it where an emulated MXFP8 GEMM reads a copy */
	slot(pl, k, "TG_CT_STAGE", "0"); /* tile_launch: cast_transpose.cu's staged tiles (ct_stage_ok) */
}

/* Bind the op's outputs; an unquantized output goes to component data (COMP_DATA,
 * or COMP_HP for the intermediate of an unfused NVFP4 op). */
static void bind_outputs(Planner *pl, Kernel *k, const Tensor *out, Component data)
{
	if (!is_quantized(out)) {
		bind(pl, k, TG_P_OUT, out->id, data);
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
	case SCALING_NVFP4: /* S_enc (written), then the block scales like the other block recipes */
		bind(pl, k, TG_P_SCALE, out->id, COMP_SCALE);
		/* fall through */
	default:
		/* each copy has its scales (128x128: the same blocks, stored for each layout) */
		if (out->rowwise)
			bind(pl, k, TG_P_SCALE_INV, out->id, COMP_SCALE_INV);
		if (out->columnwise)
			bind(pl, k, TG_P_SCALE_INV_T, out->id, COMP_SCALE_INV_T);
		break;
	}
}

static long slot_long(const Kernel *k, const char *name, long dflt)
{
	const char *v = plan_slot(k, name);
	return v ? strtol(v, NULL, 10) : dflt;
}

static bool pow2(long v) { return v > 0 && (v & (v - 1)) == 0; }

typedef enum { FAM_NONE, FAM_ROW, FAM_TILE } Family;

/* Which variant table a kernel's template uses: the op table's family of the op
 * whose template it is (row kernels: the row table; casts: the tile table). */
static Family kernel_family(const Kernel *k)
{
	if (k->kind != KERNEL_GENERATED || !k->tmpl)
		return FAM_NONE;
	for (int o = 0; o < OP_COUNT; o++)
		if (op_template((OpKind)o) && !strcmp(op_template((OpKind)o), k->tmpl))
			return op_family((OpKind)o) == OPF_ROW ? FAM_ROW : op_family((OpKind)o) == OPF_CAST ? FAM_TILE : FAM_NONE;
	return FAM_NONE;
}

/* norm/GLU/dGLU: the tile path is taken with TG_COLWISE (dglu: or TG_DBIAS), except in the amax pass. */
static bool row_tile_path(const Kernel *k)
{
	return (slot_long(k, "TG_COLWISE", 0) || slot_long(k, "TG_DBIAS", 0)) &&
		slot_long(k, "TG_RECIPE", 0) != TG_RECIPE_CURRENT_AMAX;
}

/* dglu.cu's staged path takes kernel k (the template's DG_STAGE, the variant aside): a per-tensor or MXFP8
 * columnwise copy without dbias from 2-byte h and d_act, TG_COLS % 8 == 0 (MXFP8 holds it to % 32). */
static bool staged_kernel(const Kernel *k)
{
	long rec = slot_long(k, "TG_RECIPE", 0);
	return !strcmp(k->tmpl, "dglu.cu") && slot_long(k, "TG_COLWISE", 0) && !slot_long(k, "TG_DBIAS", 0) &&
		(rec == TG_RECIPE_DELAYED || rec == TG_RECIPE_CURRENT_CAST || rec == TG_RECIPE_MXFP8) &&
		slot_long(k, "TG_IN_DTYPE", 0) != TG_DTYPE_F32 && slot_long(k, "TG_G_DTYPE", 0) != TG_DTYPE_F32 &&
		slot_long(k, "TG_COLS", 0) % 8 == 0;
}

/* glu_amax.cu or dglu.cu with a columnwise 1x128 copy, or an MXFP8 one (dglu: C % 128 == 0 and no dbias, else
 * its staged or tile path): their block tile path (128 x 128 tiles). dglu's MXFP8 copies from 2-byte inputs took
 * the staged path (570 us against the block tile's 617, seventeenth session) until the block tile path staged its
 * loads by cp.async and ran persistent: H100, 8B MXFP8 training layer, 8192 tokens, us alone / in the layer,
 * staged 745 / 725-728 against block tile 675-676 / 676-678 (thirty-second session). */
static bool block_tile(const Kernel *k)
{
	bool glu = !strcmp(k->tmpl, "glu_amax.cu"), dglu = !strcmp(k->tmpl, "dglu.cu");
	long rec = slot_long(k, "TG_RECIPE", 0);
	if (!(glu || dglu) || !slot_long(k, "TG_COLWISE", 0))
		return false;
	return rec == TG_RECIPE_BLOCK1X128 || (rec == TG_RECIPE_MXFP8 &&
		(glu || dglu_block_tile_fits(slot_long(k, "TG_COLS", 0), slot_long(k, "TG_DBIAS", 0) != 0)));
}

/* The shared memory one CTA may opt in to on target t (bytes; the CUDA programming guide's table by compute
 * capability): 163 KB on sm_80 and sm_87, 99 KB on sm_86, sm_89 and sm_120, 227 KB on sm_90 and sm_100 on. */
static long smem_optin(Arch t)
{
	static const struct { int sm; long bytes; } tab[] = {
		{80, 166912}, {86, 101376}, {87, 166912}, {89, 101376}, {90, 232448}, {100, 232448}, {103, 232448}, {120, 101376},
	};
	for (int i = 0; i < NELEMS(tab); i++)
		if (tab[i].sm == t.sm)
			return tab[i].bytes;
	return 101376; /* an unlisted target: the smallest */
}

/* Static shared memory of a block tile path's TgBlockTileSmem (templates/tg_rowvec.h) a tile of 1x128 blocks at 32 row
 * groups: the 16 KB byte tile and a scale a column. */
#define BLOCK_TILE_SMEM 16896L

/* Bytes of dynamic shared memory dglu.cu's block tile path stages a tile's inputs in (TG_DB_STAGE: from 2-byte h
 * and d_act, a 128 x 128 tile of each h half and of d_act, the next tile's by cp.async during this one's copies,
 * as the one CTA a SM has no other CTA to cover its loads); 0: no staging (FP32 inputs: loads into registers; or a
 * target whose CTAs cannot hold it beside the path's static TgBlockTileSmem, BLOCK_TILE_SMEM a half: sm_86, sm_89,
 * sm_120). Every variant of the block tile path moves the same tile. */
static int dglu_stage_bytes(const Planner *pl, const Kernel *k, GluKind act)
{
	if (strcmp(k->tmpl, "dglu.cu") || !block_tile(k) || slot_long(k, "TG_IN_DTYPE", 0) == TG_DTYPE_F32 ||
		slot_long(k, "TG_G_DTYPE", 0) == TG_DTYPE_F32)
		return 0;
	long dyn = 128 * 128 * 2 * (glu_halves(act) + 1), total = dyn + BLOCK_TILE_SMEM * glu_halves(act);
	for (int i = 0; i < pl->g->ntargets; i++)
		if (total > smem_optin(pl->g->targets[i]))
			return 0;
	return (int)dyn;
}

/* Bytes of dynamic shared memory norm_colwise.cu stages a tile's input in (TG_NC_STAGE: a 1x128 copy from 2-byte
 * input, a 128 x 128 tile of it and of the residual where the kernel adds one, the next tile's by cp.async during
 * this one's copy; the kernel then runs persistent); 0: no staging (FP32 input; MXFP8; or a target where two CTAs a
 * SM cannot hold it beside the static TgBlockTileSmem, BLOCK_TILE_SMEM). H100, 8192 tokens, us alone (in the layer), two
 * rounds: 70B norm_colwise 78.0, 79.2 (81.2, 81.7) -> 74.6, 75.0 (79.2, 79.0), 8B 36.3, 39.4 (41.7, 42.4) -> 36.4,
 * 37.6 (41.6, 41.4); the MXFP8 one (with its BF16 operand) 63.1, 63.6 -> 79.7, 79.1 (thirty-seventh session, call 7). */
static int nc_stage_bytes(const Planner *pl, const Kernel *k)
{
	if (slot_long(k, "TG_IN_DTYPE", 0) == TG_DTYPE_F32 || slot_long(k, "TG_RECIPE", 0) != TG_RECIPE_BLOCK1X128)
		return 0;
	long dyn = 128 * 128 * 2 * (slot_long(k, "TG_HAS_RESIDUAL", 0) ? 2 : 1);
	for (int i = 0; i < pl->g->ntargets; i++)
		if (2 * (dyn + BLOCK_TILE_SMEM) > smem_optin(pl->g->targets[i]))
			return 0;
	return (int)dyn;
}

/* dglu.cu's staged path takes variant v of kernel k: staged_kernel, 8-element vectors, 32 rows a tile, 32-256
 * threads dividing 256. */
static bool staged_variant(const Kernel *k, const PlanVariant *v)
{
	return staged_kernel(k) && v->vec == 8 && v->rows_per_cta == 32 && v->threads <= 256 && 256 % v->threads == 0;
}

/* Whether variant v of kernel k is a gated dglu (SwiGLU, GeGLU, ...) on dglu.cu's staged path. */
static bool staged_gated_dglu(const Kernel *k, const PlanVariant *v)
{
	return !strcmp(k->tmpl, "dglu.cu") && staged_variant(k, v) && TG_ACT_GATED(slot_long(k, "TG_ACT", 0));
}

/* grid_cols of a row-family kernel: 0 (a CTA per row block), except the block tile paths
 * (128-column tiles: of the output, or of dglu's gate half), a gated dglu's staged path (its 32 x 64 tiles,
 * one a CTA) and the tile paths of dglu.cu and glu_amax.cu, whose work items are slices of 16 steps (of the
 * gate half: DG_SW, GL_SW in the templates; rows of 32 or 64 there, so a step is threads / rows vectors). */
static int row_grid_cols(const Kernel *k, const PlanVariant *v)
{
	if (block_tile(k))
		return 128;
	if (staged_gated_dglu(k, v)) /* a tile (64 gate columns) a CTA: row_grid_cap */
		return 64;
	if ((!strcmp(k->tmpl, "dglu.cu") || !strcmp(k->tmpl, "glu_amax.cu")) && row_tile_path(k) && v->rows_per_cta > 0)
		return v->threads / v->rows_per_cta * v->vec * 16;
	return 0;
}

/* grid_cap of a row-family kernel (Kernel.grid_cap): 128 CTAs a SM for a gated dglu's staged path, whose CTAs then
 * take one to four 32 x 64 tiles each (row_grid_cols 64), else 0 (the runtime's 32). H100, 8B current training layer,
 * dglu us in the layer / alone, two rounds: 16 tiles a CTA (the tile path's slices before) 455.0 / 469.9, 462.5 /
 * 469.9; a tile a CTA at caps 32 / 64 / 128: 449.9 / 472.0, 436.4 / 443.3, 435.9 / 428.7 (83 -> 91% of a copy;
 * thirty-fifth session, call 18; thirty-sixth, call 1: 458 / 489 -> 431-434 / 433-434). At small token counts the
 * slices left most SMs idle (5 tokens: 14 CTAs). Not the ungated (GELU) staged dglu: a 32 x 128 tile a CTA measured
 * 1% slower alone (bench/dglu_ungated.yaml, act_kernels.yaml: 308.7-309.0 -> 311.1-312.4 us; thirty-sixth, call 7). */
static int row_grid_cap(const Kernel *k, const PlanVariant *v)
{
	return staged_gated_dglu(k, v) ? 128 : 0;
}

/* The template's static_asserts for variant v on kernel k; `sane` adds the
 * tuning filter (registers per thread bounded, so no variant spills badly). */
static bool variant_legal(const Kernel *k, const PlanVariant *v, bool sane)
{
	long recipe = slot_long(k, "TG_RECIPE", 0), cols = slot_long(k, "TG_COLS", 0);
	long idt = slot_long(k, "TG_IN_DTYPE", 1);
	long isz = idt == TG_DTYPE_F32 ? 4 : idt == TG_DTYPE_BYTES ? 1 : 2;
	long osz = recipe == TG_RECIPE_NONE && idt != TG_DTYPE_BYTES ? (slot_long(k, "TG_OUT_DTYPE", 1) == TG_DTYPE_F32 ? 4 : 2) : 1;
	long t = v->threads;
	if (t <= 0 || t % 32 || t > 1024 || cols <= 0)
		return false;
	switch (kernel_family(k)) {
	case FAM_ROW: {
		bool dglu = !strcmp(k->tmpl, "dglu.cu"), glu = dglu || !strcmp(k->tmpl, "glu_amax.cu");
		long vec = v->vec, r = v->rows_per_cta;
		if (v->tile_rows || v->tile_cols || r <= 0 || t % r || !pow2(vec) || vec < 2 || cols % vec)
			return false;
		if (vec * isz < 4 || vec * isz > 32 || vec * osz < 2 || vec * osz > 32)
			return false;
		long gsz = slot_long(k, "TG_G_DTYPE", 1) == 0 ? 4 : 2; /* dglu: d_act's vectors */
		if (dglu && (vec * gsz < 4 || vec * gsz > 32))
			return false;
		if (dglu && row_tile_path(k) && !block_tile(k) && !staged_variant(k, v) && cols % (t / r * vec))
			return false; /* dglu.cu's tile path: the step width divides the half (the staged path masks) */
		if (!glu) {
			long wsz = slot_long(k, "TG_W_DTYPE", 1) == 0 ? 4 : 2, bsz = slot_long(k, "TG_B_DTYPE", 1) == 0 ? 4 : 2;
			if (vec * wsz < 4 || vec * wsz > 32 || vec * bsz < 4 || vec * bsz > 32)
				return false;
		}
		long group = recipe == TG_RECIPE_BLOCK1X128 ? 128 / vec : recipe == TG_RECIPE_MXFP8 ? 32 / vec
			: recipe == TG_RECIPE_NVFP4 ? 16 / vec : 1;
		if (group < 1 || group > 32)
			return false;
		if (block_tile(k)) /* the block tile paths: 128-row tiles, 16 lanes a row block */
			return r == 128 && vec == 8 && t >= 256;
		if (row_tile_path(k)) {
			if (r == 128)
				return false; /* the 128-row variants are the block tile path's */
			long vpr = t / r; /* vectors per row of a column chunk */
			long smem = r * (vpr * vec + 4) * 4 + (glu ? 0 : 2 * r * 4) + 32 * 4;
			return r % 32 == 0 && vec % 4 == 0 && vpr >= 1 && vpr % group == 0 && smem <= 48 * 1024;
		}
		long tpr = t / r; /* threads per row: glu_amax.cu takes any multiple of 32 (or divisor), the others a power of two */
		bool glu_amax = glu && !dglu;
		if ((glu_amax ? tpr % 32 && 32 % tpr : !pow2(tpr)) || tpr % group)
			return false;
		if (sane) {
			long nj = (cols / vec + tpr - 1) / tpr; /* vectors each thread holds */
			if (nj * vec * isz * (glu && TG_ACT_GATED(slot_long(k, "TG_ACT", 0)) ? 2 : 1) > 224 || r > 32)
				return false;
		}
		return true;
	}
	case FAM_TILE: {
		long tr = v->tile_rows, tc = v->tile_cols;
		if (v->vec || v->rows_per_cta || tr <= 0 || tc <= 0 || tc % 128 || cols % (idt == TG_DTYPE_BYTES ? 16 : 8))
			return false;
		long cpr = tc / 8, g = t / cpr, nk;
		if (t % cpr || g < 1 || tr % g || (nk = tr / g) < 1)
			return false;
		bool col = slot_long(k, "TG_COLWISE", 0) && recipe != TG_RECIPE_CURRENT_AMAX;
		bool colam = col && (recipe == TG_RECIPE_BLOCK1X128 || recipe == TG_RECIPE_MXFP8);
		long cbr = recipe == TG_RECIPE_MXFP8 ? 32 : 128;
		if (col && tr % 32)
			return false;
		if (colam && recipe == TG_RECIPE_BLOCK1X128 && tr % 128)
			return false;
		if (colam && cbr % nk)
			return false;
		if (recipe == TG_RECIPE_BLOCK1X128 && slot_long(k, "TG_ROWWISE", 0) && 16 % nk)
			return false; /* a 16-lane group's lane k computes row k's 1x128 scale */
		if (recipe == TG_RECIPE_BLOCK128X128 && (tr != 128 || tc != 128))
			return false;
		if (idt == TG_DTYPE_BYTES) { /* the byte transpose runs on the staged path only (StageTiling) */
			if (tr % 32 || (tr * tc / 16) % t || (tc / 4 * 2 * (tr / 32)) % t || 2 * tr * tc > 48 * 1024)
				return false;
		}
		if (slot_long(k, "TG_DBIAS", 0)) { /* so does a fused dbias (2-byte elements: StageTiling) */
			if (tr % 32 || (tr * tc / 8) % t || (tc / 2 * 2 * (tr / 32)) % t || 4 * tr * tc > 48 * 1024)
				return false;
		}
		long nb = tr / cbr > 0 ? tr / cbr : 1;
		long smem = (col ? tr * tc * osz : 16) + (colam ? g * tc * 4 + nb * tc * 4 : 8) + 32 * 4;
		if (smem > 48 * 1024)
			return false;
		if (sane && nk * 8 * isz > 256)
			return false;
		return true;
	}
	default:
		return false;
	}
}

int plan_variants(const Kernel *k, PlanVariant *out, int max)
{
	const PlanVariant *tab;
	int n, got = 0;
	switch (kernel_family(k)) {
	case FAM_ROW:
		tab = row_tile_path(k) ? colwise_variants : row_variants;
		n = row_tile_path(k) ? NELEMS(colwise_variants) : NELEMS(row_variants);
		break;
	case FAM_TILE:
		tab = tile_variants;
		n = NELEMS(tile_variants);
		break;
	default:
		return 0;
	}
	/* the kernel's own variant first (the heuristic one unless tuned), then the table */
	for (int i = 0; i < n && got < max; i++)
		if (k->variant && !strcmp(tab[i].name, k->variant) && variant_legal(k, &tab[i], false))
			out[got++] = tab[i];
	for (int i = 0; i < n && got < max; i++)
		if (!(k->variant && !strcmp(tab[i].name, k->variant)) && variant_legal(k, &tab[i], true))
			out[got++] = tab[i];
	/* none passes the tuning filter (a long row at a small vector): every legal one */
	for (int i = 0; got == 0 && i < n; i++)
		if (variant_legal(k, &tab[i], false))
			out[got++] = tab[i];
	return got;
}

/* Set slot name to value in place (it exists: the planner added it). */
static bool slot_set(Kernel *k, const char *name, const char *value)
{
	for (int i = 0; i < k->nslots; i++)
		if (!strcmp(k->slots[i].name, name)) {
			k->slots[i].value = value;
			return true;
		}
	return false;
}

/* The launch shape of variant v (family f) on kernel k: threads, the grid's tiles and cap, and a staged cast's dynamic
 * shared memory (TG_CT_STAGE: a tile of its 2-byte input, ct_stage_ok). */
static void launch_shape(Kernel *k, const PlanVariant *v, Family f)
{
	k->threads = v->threads;
	if (f == FAM_ROW) {
		k->grid_rows = v->rows_per_cta;
		k->grid_cols = row_grid_cols(k, v);
		k->grid_cap = row_grid_cap(k, v);
	} else {
		k->grid_rows = v->tile_rows;
		k->grid_cols = v->tile_cols;
		if (slot_long(k, "TG_CT_STAGE", 0)) {
			k->smem_dynamic = v->tile_rows * v->tile_cols * 2;
			k->persistent = true;
		}
	}
}

bool plan_apply_variant(Arena *a, Kernel *k, const PlanVariant *v)
{
	Family f = kernel_family(k);
	if (f == FAM_NONE || !variant_legal(k, v, false))
		return false;
	bool ok = slot_set(k, "TG_THREADS", arena_printf(a, "%d", v->threads));
	if (f == FAM_ROW) {
		ok = ok && slot_set(k, "TG_VEC", arena_printf(a, "%d", v->vec));
		ok = ok && slot_set(k, "TG_ROWS_PER_CTA", arena_printf(a, "%d", v->rows_per_cta));
	} else {
		ok = ok && slot_set(k, "TG_TILE_ROWS", arena_printf(a, "%d", v->tile_rows));
		ok = ok && slot_set(k, "TG_TILE_COLS", arena_printf(a, "%d", v->tile_cols));
	}
	launch_shape(k, v, f);
	k->variant = arena_strdup(a, v->name);
	return ok;
}

/* The launch slots a variant sets (added here with the heuristic's values). */
static void launch_slots(Planner *pl, Kernel *k, const PlanVariant *v, Family f)
{
	slot(pl, k, "TG_THREADS", istr(pl, v->threads));
	if (f == FAM_ROW) {
		slot(pl, k, "TG_VEC", istr(pl, v->vec));
		slot(pl, k, "TG_ROWS_PER_CTA", istr(pl, v->rows_per_cta));
	} else {
		slot(pl, k, "TG_TILE_ROWS", istr(pl, v->tile_rows));
		slot(pl, k, "TG_TILE_COLS", istr(pl, v->tile_cols));
	}
}

static const PlanVariant *find_variant(const PlanVariant *tab, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(tab[i].name, name))
			return &tab[i];
	return &tab[0];
}

/* Add the launch slots for the heuristic's variant; if the template's
 * constraints reject it for this kernel, take the first legal one. */
static void heuristic_launch(Planner *pl, Kernel *k, const PlanVariant *v, Family f, Extent rows, long cols)
{
	k->rows = rows;
	k->cols = cols;
	k->choice = "heuristic";
	launch_slots(pl, k, v, f);
	k->variant = v->name;
	PlanVariant alt[PLAN_MAX_VARIANTS]; /* v may point here past the if: same scope as v's uses */
	if (!variant_legal(k, v, false)) {
		k->variant = NULL;
		if (plan_variants(k, alt, PLAN_MAX_VARIANTS) > 0)
			v = &alt[0];
	}
	if (!plan_apply_variant(pl->a, k, v)) /* no legal variant: the launch shape of v (its slots) all the same */
		launch_shape(k, v, f);
	k->variant = v->name;
}

/* For rows the heuristic's variant cannot take (its vector does not divide the
 * row) or cannot hold without spilling: the legal variant passing the tuning
 * filter with the widest vector (the first in the table on ties), else the legal
 * one whose threads hold the fewest elements; v if none is legal. */
static const PlanVariant *fallback_row_variant(const Kernel *k, const PlanVariant *v)
{
	const PlanVariant *widest = NULL, *lightest = NULL;
	long cols = slot_long(k, "TG_COLS", 0), least = -1;
	for (int i = 0; i < NELEMS(row_variants); i++) {
		const PlanVariant *c = &row_variants[i];
		if (!variant_legal(k, c, false))
			continue;
		if (variant_legal(k, c, true) && (!widest || c->vec > widest->vec))
			widest = c;
		long tpr = c->threads / c->rows_per_cta, held = (cols / c->vec + tpr - 1) / tpr * c->vec;
		if (least < 0 || held < least) {
			least = held;
			lightest = c;
		}
	}
	return widest ? widest : lightest ? lightest : v;
}

static void row_launch(Planner *pl, Kernel *k, const Tensor *out, Extent rows, long cols)
{
	const PlanVariant *v;
	if (((is_quantized(out) && out->columnwise) || slot_long(k, "TG_DBIAS", 0)) && k->pass != PASS_AMAX) {
		long rec = slot_long(k, "TG_RECIPE", 0);
		bool pertensor = rec == TG_RECIPE_DELAYED || rec == TG_RECIPE_CURRENT_CAST;
		/* dglu: t256v8r32 (t1024, t512v8 spill on sm_100a); per-tensor glu_amax: t512v8r32 (269 us vs
		 * t1024's 275 at 8192 x 14336, H100); a GLU's 1x128 copies: t512v8r128 (the block tile path, two
		 * CTAs a SM: 545 us at 8192 x 2x28672 against t256's 648 and t1024's 696, H100); dglu's: t1024v8r128
		 * (no prefetch: 1140 us against t512's 1212 and t256's 1759, H200; `tegen tune`, fifteenth
		 * session; staged by cp.async since the twenty-ninth, 974-986 us on an H100), but an MXFP8 dglu's:
		 * t512v8r128 (one CTA a SM at 128 registers; H100, `tegen tune` of bench/dglu_block.yaml, forty-first
		 * session, us at 8192 tokens, t512 / t1024 / t256: MXFP8 8B 448.5 / 483.7 / 528.6, 70B 881.5 / 932.6 /
		 * 1008.5, in the 8B MXFP8 layer 622.2 / 667.1 / 640.3; 1x128 8B 441.3 / 434.3 / 439.2, 70B 869.6 / 855.1 /
		 * 890.5; staged tiles only: with FP32 inputs t512 spills); the rest t1024v8r32 */
		bool mx = slot_long(k, "TG_RECIPE", 0) == TG_RECIPE_MXFP8 &&
			dglu_stage_bytes(pl, k, pl->g->ops[k->ops[0]].p.act) > 0;
		v = block_tile(k) ? find_variant(colwise_variants, NELEMS(colwise_variants),
			!strcmp(k->tmpl, "dglu.cu") ? (mx ? "t512v8r128" : "t1024v8r128") : "t512v8r128")
			: &colwise_variants[!strcmp(k->tmpl, "dglu.cu") ? 2 : !strcmp(k->tmpl, "glu_amax.cu") && pertensor ? 1 : 0];
		/* dglu.cu's tile path steps must divide C: 32 or 16 columns where 64 do not */
		if (!strcmp(k->tmpl, "dglu.cu") && !block_tile(k) && !variant_legal(k, v, false))
			v = find_variant(colwise_variants, NELEMS(colwise_variants), cols % 32 == 0 ? "t256v4r32" : "t128v4r32");
	} else if (strcmp(k->tmpl, "norm_quantize.cu") && cols > glu_heuristic[NELEMS(glu_heuristic) - 1].max_cols) {
		bool dglu = !strcmp(k->tmpl, "dglu.cu");
		bool block = !dglu && slot_long(k, "TG_RECIPE", 0) == TG_RECIPE_BLOCK1X128;
		bool nvfp4 = !dglu && slot_long(k, "TG_RECIPE", 0) == TG_RECIPE_NVFP4;
		bool dglu_hp = dglu && slot_long(k, "TG_RECIPE", 0) == TG_RECIPE_NONE;
		LongRows o = dglu_hp ? TABLE(LongRows, dglu_hp_long_rows)
			: dglu && k->pass == PASS_AMAX ? TABLE(LongRows, dglu_amax_long_rows) : dglu ? TABLE(LongRows, dglu_long_rows)
			: block ? TABLE(LongRows, glu_block_long_rows) : nvfp4 ? TABLE(LongRows, glu_nvfp4_long_rows)
			: TABLE(LongRows, glu_long_rows);
		for (int i = 0; i < o.n; i++) {
			v = find_variant(row_variants, NELEMS(row_variants), o.row[i].variant);
			long per = v->threads * v->vec;
			if (cols % per == 0 && cols / per >= o.row[i].min_vectors)
				break; /* else the last one */
		}
	} else {
		bool glu = strcmp(k->tmpl, "norm_quantize.cu") != 0; /* glu_amax.cu, dglu.cu (same halves, untuned) */
		bool fp32 = !glu && slot_long(k, "TG_RECIPE", 0) == TG_RECIPE_NONE && slot_long(k, "TG_OUT_DTYPE", 1) == TG_DTYPE_F32;
		bool delayed = slot_long(k, "TG_RECIPE", 0) == TG_RECIPE_DELAYED;
		RowHeuristics h = glu ? TABLE(RowHeuristics, glu_heuristic) : fp32 ? TABLE(RowHeuristics, norm_fp32_heuristic)
			: delayed ? TABLE(RowHeuristics, norm_delayed_heuristic) : TABLE(RowHeuristics, norm_heuristic);
		int i = 0;
		while (i + 1 < h.n && cols > h.row[i].max_cols)
			i++;
		/* rows of one length bound are alternatives, the first the row can take wins */
		while (i + 1 < h.n && h.row[i + 1].max_cols == h.row[i].max_cols &&
			!variant_legal(k, find_variant(row_variants, NELEMS(row_variants), h.row[i].variant), true))
			i++;
		v = find_variant(row_variants, NELEMS(row_variants), h.row[i].variant);
	}
	if (!row_tile_path(k) && !variant_legal(k, v, true))
		v = fallback_row_variant(k, v);
	heuristic_launch(pl, k, v, FAM_ROW, rows, cols);
}

/* Whether cast op `op` (cast_transpose or quantize; else false) writes its copies on cast_transpose.cu's staged path
 * (its cast pass): a BF16/FP16 input, per-tensor delayed or current scaling or MXFP8 with a columnwise copy, a row
 * length of a multiple of 16. */
static bool cast_staged(const Graph *g, const Op *op)
{
	if (op->kind != OP_CAST_TRANSPOSE && op->kind != OP_QUANTIZE)
		return false;
	const Tensor *in = &g->tensors[op->arg[ARG_IN]], *out = &g->tensors[op->arg[ARG_OUT]];
	Scaling sc = is_quantized(out) ? out->recipe.scaling : SCALING_NONE;
	return (sc == SCALING_DELAYED || sc == SCALING_CURRENT || sc == SCALING_MXFP8) && out->columnwise &&
		(in->dtype == DT_BF16 || in->dtype == DT_F16) && tensor_cols(in) % 16 == 0;
}

/* Whether cast kernel k takes cast_transpose.cu's TG_CT_STAGE: the shared-tile body's 1x128 or 128x128 cast of a 2-byte
 * input, whose next tile then comes by cp.async into dynamic shared memory (a tile of the input: plan_apply_variant
 * sizes it) and which runs persistent; only where every target holds two CTAs of the largest tiling (128 x 256: 64
 * KB staged beside up to 49 KB static), so any variant `tegen tune` tries fits. Not a weight's cast. H100, 8192
 * tokens, us alone (in the layer), two rounds, unstaged / staged: d_y 8B 50.5, 51.5 (53.6, 53.5) / 49.6, 49.6 (50.4,
 * 50.6), 70B 101.5, 99.8 (110.1, 110.9) / 101.8, 100.6 (105.4, 105.6); w_up 8B 173.8, 178.6 (179.7, 179.6) / 177.0,
 * 177.4 (185.2, 184.3), 70B 700.3, 699.2 / 707.8, 705.6; w_down the same either way (thirty-seventh session, call 8). */
static bool ct_stage_ok(const Planner *pl, const Kernel *k, Scaling sc)
{
	long in = slot_long(k, "TG_IN_DTYPE", 0);
	if ((sc != SCALING_BLOCK1X128 && sc != SCALING_BLOCK128X128) || (in != TG_DTYPE_BF16 && in != TG_DTYPE_F16) ||
		k->pass == PASS_AMAX || slot_long(k, "TG_DBIAS", 0) || !k->nops ||
		pl->g->tensors[pl->g->ops[k->ops[0]].arg[ARG_IN]].role == ROLE_WEIGHT)
		return false;
	for (int i = 0; i < pl->g->ntargets; i++)
		if (smem_optin(pl->g->targets[i]) < 2 * (65536L + 50176L))
			return false;
	return true;
}

static void tile_launch(Planner *pl, Kernel *k, const Tensor *out, Extent rows, long cols)
{
	Scaling sc = is_quantized(out) ? out->recipe.scaling : SCALING_NONE;
	const char *name = "t256r64c128";
	/* rows when known (a weight, or tokens given to the planner): from the H100 tune
	 * sweep, short copies want 32-row tiles and copies of 2^29+ elements 128-row
	 * tiles (longer runs per column of the transpose); 64 rows in between. known_log2:
	 * floor(log2(rows x cols)) when the rows are known, else 0 */
	long nrows = rows.dim < 0 || pl->tokens > 0 ? extent_at(rows, pl->tokens) : 0, elems;
	int known_log2 = nrows <= 0 || cols <= 0 ? 0
		: __builtin_mul_overflow(nrows, cols, &elems) ? 63 : 63 - __builtin_clzl((unsigned long)elems);
	if (slot_long(k, "TG_DBIAS", 0))
		name = "t256r64c128"; /* the staged path (its tiling: variant_legal), which the fused dbias needs */
	else if (sc == SCALING_BLOCK1X128 || sc == SCALING_BLOCK128X128)
		/* 512 threads where NVRTC's 64 registers hold them without spilling (a power-of-two row of 1024-16384;
		 * other lengths spill 12 bytes): 2-6% faster in `tegen tune` (H100, twenty-first session) */
		name = cols >= 1024 && cols <= 16384 && (cols & (cols - 1)) == 0 ? "t512r128c128" : "t256r128c128";
	else if (k->pass == PASS_AMAX)
		name = "t128r32c128"; /* current scaling's amax pass streams the input flat: small CTAs, many resident */
	else if (!out->columnwise)
		/* rowwise-only: the variant with the least worst case over 1-65536 tokens at 2048-14336 columns; 256-column
		 * or 128-row tiles from 2^27 elements of rows of 1024+ when the rows are known (3-12% faster there; H100,
		 * thirty-fourth session) */
		name = cols >= 1024 && known_log2 >= 27
			? (is_quantized(out) ? "t512r64c256" : "t256r128c128")
			: (is_quantized(out) ? "t512r64c128" : "t128r64c128");
	else if (!is_quantized(out))
		name = "t256r32c128";
	else if (nrows > 0 && nrows <= 256)
		name = "t256r32c128";
	else if (known_log2 >= 29)
		name = "t256r128c128"; /* delayed within 1.006x of the best at 8192-28672 columns x 65536 tokens, MXFP8 within
		                        * 1.002x where t512r128c128 took 1.14x (H100, thirty-fifth session, sweep_wide.yaml) */
	/* The staged path's casts: a CTA a tile, up to 128 a SM, not the default cap's 32 (two to four tiles a CTA): H100,
	 * 8B training layers, us in the layer, cap 32 / 128 / 1024: MXFP8 w_up 282.6 / 267.4 / 266.8, w_down 141.0 / 137.7 /
	 * 137.7; delayed w_up 174.8 / 169.1 / 169.9; current w_up 171.6 / 165.7 / 166.1; at 4 or 8 a SM (persistent-like)
	 * MXFP8 w_up 311-317 (thirty-fifth session). The op decides, not the tiling: the 2^29 rule's t256r128c128 (two
	 * stages exceed 48 KiB, so the shared-tile body) gains too, 65536 x 8192 / 16384 us alone cap 32 / 128: delayed
	 * 797 / 779, 1618 / 1602, MXFP8 881 / 853, 1843 / 1796 (thirty-sixth session, call 10). No cap at all: past 2^31
	 * elements 128 a SM still gives a CTA about 8 tiles, and a tile a CTA measured better: 65552 x 32768 us alone, cap
	 * 128 / 1024 a SM: delayed 5687 / 4093 (50 -> 69% of a copy), current 5828 / 4263, MXFP8 6094 / 4369 (thirty-ninth
	 * session, bench/big/cliff.sh). */
	if (k->pass != PASS_AMAX && cast_staged(pl->g, &pl->g->ops[k->ops[0]]))
		k->grid_cap = GRID_UNCAPPED;
	if (ct_stage_ok(pl, k, sc))
		slot_set(k, "TG_CT_STAGE", "1");
	heuristic_launch(pl, k, find_variant(tile_variants, NELEMS(tile_variants), name), FAM_TILE, rows, cols);
}

/* ---- tuned choices ---- */

/* A slot that names the tile shape (not part of the computation's signature). */
static bool launch_slot(const char *name)
{
	static const char *const names[] = {"TG_KERNEL", "TG_THREADS", "TG_VEC", "TG_ROWS_PER_CTA", "TG_TILE_ROWS",
		"TG_TILE_COLS", "TG_CT_STAGE"};
	for (int i = 0; i < NELEMS(names); i++)
		if (!strcmp(name, names[i]))
			return true;
	return false;
}

const char *plan_signature(Arena *a, const Kernel *k)
{
	if (kernel_family(k) == FAM_NONE)
		return NULL;
	/* template name and a hash of its text (an edited template makes old timings
	 * stale), then every other slot, sorted by name */
	const char *text = template_text(k->tmpl);
	uint32_t h = 2166136261u;
	for (const char *c = text ? text : ""; *c; c++)
		h = (h ^ (uint8_t)*c) * 16777619u;
	const Slot *s[TG_MAX_SLOTS];
	int n = 0;
	for (int i = 0; i < k->nslots; i++) {
		if (launch_slot(k->slots[i].name))
			continue;
		int j = n++;
		for (; j > 0 && strcmp(s[j - 1]->name, k->slots[i].name) > 0; j--)
			s[j] = s[j - 1];
		s[j] = &k->slots[i];
	}
	Buf b = {0};
	buf_printf(&b, "%s@%08x", k->tmpl, h);
	for (int i = 0; i < n; i++)
		buf_printf(&b, ";%s=%s", s[i]->name + (strncmp(s[i]->name, "TG_", 3) ? 0 : 3), s[i]->value);
	char *r = arena_strdup(a, b.p);
	buf_free(&b);
	return r;
}

long plan_bucket(const Kernel *k, long tokens)
{
	long rows;
	if (k->rows.dim < 0)
		rows = k->rows.add;
	else if (tokens <= 0)
		return 0;
	else
		rows = extent_at(k->rows, tokens);
	long b = 1;
	while (b < rows && b < (1L << 40))
		b <<= 1;
	return b;
}

/* Replace the heuristic's variant by the DB's best for this GPU, when it has one. */
static void apply_tuning(Planner *pl, const PlanOptions *o)
{
	if (!o || !o->tuning_file || !o->gpu)
		return;
	TuneDb *db = NULL;
	for (int i = 0; i < pl->p->nkernels; i++) {
		Kernel *k = &pl->p->kernels[i];
		PlanVariant legal[PLAN_MAX_VARIANTS];
		int n = plan_variants(k, legal, PLAN_MAX_VARIANTS);
		if (n == 0)
			continue;
		if (!db && !(db = tunedb_load(pl->a, o->tuning_file)))
			return; /* no DB file: heuristic everywhere */
		const char *sig = plan_signature(pl->a, k);
		long bucket = plan_bucket(k, o->tokens);
		const PlanVariant *best = tunedb_pick(db, o, sig, bucket, legal, n, &bucket);
		if (best && plan_apply_variant(pl->a, k, best)) {
			k->choice = "tuned";
			k->note = arena_printf(pl->a, "%s%stuned for %ld rows on %s", k->note ? k->note : "", k->note ? "; " : "",
				bucket, o->gpu);
		}
	}
}

/* Whether cast op `op` (cast_transpose or quantize), where a dbias of its input can run inside it: on the staged
 * path (cast_staged), not a weight's cast (the optimizer step or a cached cast, tg_layer_cache_weights, may not run
 * it when the dbias does). */
static bool cast_takes_dbias(const Graph *g, const Op *op)
{
	return cast_staged(g, op) && g->tensors[op->arg[ARG_IN]].role != ROLE_WEIGHT;
}

/* The dbias op whose stage 1 (the chunk partials of the column sums, dbias.cu's work) runs inside cast
 * op `op`'s kernel (cast_transpose.cu TG_DBIAS: one read of the gradient for its copies and its bias
 * gradient), or -1: the first later dbias op of the same phase that reads op's input, where op is the
 * first cast of that input that can take it. */
static int fused_dbias_op(const Graph *g, const Op *op)
{
	if (!cast_takes_dbias(g, op))
		return -1;
	for (int j = 0; j < op->id; j++)
		if (g->ops[j].arg[ARG_IN] == op->arg[ARG_IN] && g->ops[j].phase == op->phase && cast_takes_dbias(g, &g->ops[j]))
			return -1; /* an earlier cast of the same input takes it */
	for (int i = op->id + 1; i < g->nops; i++)
		if (g->ops[i].kind == OP_DBIAS && g->ops[i].arg[ARG_IN] == op->arg[ARG_IN] && g->ops[i].phase == op->phase)
			return i;
	return -1;
}

/* The columnwise copy of a per-tensor FP8 tensor is its rowwise bytes transposed
 * (one scale): a byte transpose after the fused kernel (faster than the fused
 * tile path, which re-reads the input from L2: bench/RESULTS.md, "Planner heuristics"). */
static void plan_byte_transpose(Planner *pl, const Op *op, const Tensor *out, Extent rows, long cols)
{
	Kernel *k = kernel_new(pl, arena_printf(pl->a, "transpose_%s", out->name), op->id);
	k->kind = KERNEL_GENERATED;
	k->tmpl = "cast_transpose.cu";
	slot(pl, k, "TG_KERNEL", emit_entry(pl->a, pl->p, k));
	slot(pl, k, "TG_IN_DTYPE", istr(pl, TG_DTYPE_BYTES)); /* raw bytes */
	slot(pl, k, "TG_OUT_DTYPE", "0");
	slot(pl, k, "TG_FMT", "0");
	slot(pl, k, "TG_RECIPE", "0");
	slot(pl, k, "TG_ROWWISE", "0");
	slot(pl, k, "TG_COLWISE", "1");
	slot(pl, k, "TG_COLS", istr(pl, cols));
	slot(pl, k, "TG_EPS_SCALE", "0.0f");
	slot(pl, k, "TG_POW2", "0");
	slot(pl, k, "TG_DBIAS", "0");
	slot(pl, k, "TG_DEQ", "0");
	slot(pl, k, "TG_CT_STAGE", "0");
	bind(pl, k, TG_P_IN, out->id, COMP_DATA);
	bind(pl, k, TG_P_OUT_T, out->id, COMP_DATA_T);
	heuristic_launch(pl, k, find_variant(tile_variants, NELEMS(tile_variants), "t256r128c128"), FAM_TILE, rows, cols);
	k->note = "columnwise copy: the rowwise FP8 bytes transposed (same per-tensor scale)";
}

static void plan_op_kernels(Planner *pl, const Op *op, const Tensor *in, const Tensor *out, Component data, Extent rows,
	long cols, bool amax_only);
static void plan_dreduce(Planner *pl, const Op *op, int src, Component part, int dst, Extent rows, long cols);
static void plan_nvfp4(Planner *pl, const Op *op, const Tensor *in, const Tensor *out);
static void plan_norm_block(Planner *pl, const Op *op, const Tensor *in, const Tensor *out);
static Tensor hp_view(const Tensor *out);

/* A dglu whose block1x128 columnwise copy no fused kernel writes (op_writes_hp: one its block tile
 * path does not take), or any quantized row op
 * under PlanOptions.hp_values: the op's kernel
 * writes its FP32 value (component hp), then the tile kernel (cast_transpose.cu, both passes
 * under current scaling) reads it and writes the copies. */
static void plan_unfused_cast(Planner *pl, const Op *op, const Tensor *in, const Tensor *out)
{
	Extent rows = tensor_rows(pl, out, op->loc);
	long cols = tensor_cols(out);
	Tensor hp = hp_view(out);
	int opk = pl->p->nkernels; /* the op's kernel (a dglu's fused dbias adds its dreduce after it) */
	plan_op_kernels(pl, op, in, &hp, COMP_HP, rows, cols, false);
	const char *why = op_writes_hp(pl->g, op) ? "unfused block1x128" : "unfused (hp_values)";
	pl->p->kernels[opk].note = arena_printf(pl->a, "%s: the op's FP32 value to an intermediate (hp)", why);
	Op cast = *op;
	cast.kind = OP_QUANTIZE;
	int first = pl->p->nkernels;
	plan_op_kernels(pl, &cast, &hp, out, COMP_DATA, rows, cols, false);
	for (int i = first; i < pl->p->nkernels; i++) {
		Kernel *k = &pl->p->kernels[i];
		for (int b = 0; b < k->nbind; b++)
			if (k->bind[b].slot == TG_P_IN)
				k->bind[b].comp = COMP_HP;
		k->note = arena_printf(pl->a, "%s: the copies from the FP32 intermediate%s", why,
			k->pass == PASS_AMAX ? " (current scaling: its amax)" : "");
	}
}

/* The kernels of a quantizing op: its own (one, or two under current scaling), or the unfused and
 * NVFP4 forms, or the fused kernel and a byte transpose for the columnwise copy. */
static void plan_quantizing_op(Planner *pl, const Op *op)
{
	const Graph *g = pl->g;
	const Tensor *in = &g->tensors[op->arg[ARG_IN]];
	const Tensor *out = &g->tensors[op->arg[ARG_OUT]];
	if (is_quantized(out) && out->recipe.scaling == SCALING_NVFP4) {
		plan_nvfp4(pl, op, in, out);
		return;
	}
	bool fused = op_family(op->kind) == OPF_ROW;
	if (op_writes_hp(g, op) || (pl->hp_values && fused && is_quantized(out) && tensor_cols(out) % 8 == 0)) {
		plan_unfused_cast(pl, op, in, out);
		return;
	}
	if (op->kind == OP_NORM_QUANTIZE && is_quantized(out) && out->columnwise &&
		(out->recipe.scaling == SCALING_BLOCK1X128 || out->recipe.scaling == SCALING_MXFP8)) {
		plan_norm_block(pl, op, in, out);
		return;
	}
	Scaling sc = is_quantized(out) ? out->recipe.scaling : SCALING_NONE;
	/* the byte transpose moves 16-byte vectors: other rows take the fused tile path. dglu
	 * takes its tile path whenever its heuristic tile (t256v8r32: 64 columns of each half
	 * per step) fits: 520 us against 387 + 178 for the row kernel + byte transpose at
	 * 8192 x 2 x 14336 on the H100 (bench/RESULTS.md, sixth session), and always where
	 * the staged path (dglu_staged: 451-471 us there, seventeenth session) masks its last tile */
	bool dglu_tile = op->kind == OP_DGLU && ((tensor_cols(out) / glu_halves(op->p.act)) % 64 == 0 || dglu_staged(g, op));
	/* glu_amax likewise (t512v8r32, 128 columns a step): 269 us against 286-295 for the row kernel
	 * + byte transpose at 8192 x 14336 on the H100 (sixth session, after the register prefetch) */
	bool glu_tile = op->kind == OP_GLU_AMAX && tensor_cols(out) % 128 == 0;
	bool split = fused && (sc == SCALING_DELAYED || sc == SCALING_CURRENT) && out->rowwise && out->columnwise &&
		tensor_cols(out) % 16 == 0 && !dglu_tile && !glu_tile;
	Tensor rowonly;
	if (split) { /* the fused kernel sees a rowwise-only tensor; the transpose follows */
		rowonly = *out;
		rowonly.columnwise = false;
		out = &rowonly;
	}
	Extent rows = tensor_rows(pl, out, op->loc);
	long cols = tensor_cols(out);
	plan_op_kernels(pl, op, in, out, COMP_DATA, rows, cols, false);
	if (split)
		plan_byte_transpose(pl, op, &g->tensors[op->arg[ARG_OUT]], rows, cols);
}

/* A norm's slots and weight inputs (norm_quantize.cu, norm_colwise.cu): the norm, gamma's and
 * beta's dtypes, eps, zero-centered gamma, the residual (unless with_residual is false: the kernel
 * reads the residual sum as its input); gamma, beta and the residual bound. */
static void norm_inputs(Planner *pl, Kernel *k, const Op *op, bool with_residual)
{
	const Graph *g = pl->g;
	slot(pl, k, "TG_NORM", op->p.norm == NORM_LAYER ? "1" : "0");
	DType gdt = g->tensors[op->arg[ARG_GAMMA]].dtype;
	slot(pl, k, "TG_W_DTYPE", istr(pl, dtype_code(gdt)));
	slot(pl, k, "TG_B_DTYPE", istr(pl, dtype_code(op->arg[ARG_BETA] >= 0 ? g->tensors[op->arg[ARG_BETA]].dtype : gdt)));
	slot(pl, k, "TG_EPS", flit(pl, op->p.eps));
	slot(pl, k, "TG_ZERO_CENTERED", op->p.zero_centered_gamma ? "1" : "0");
	with_residual = with_residual && op->arg[ARG_RESIDUAL] >= 0;
	slot(pl, k, "TG_HAS_RESIDUAL", with_residual ? "1" : "0");
	bind(pl, k, TG_P_GAMMA, op->arg[ARG_GAMMA], COMP_DATA);
	bind(pl, k, TG_P_BETA, op->arg[ARG_BETA], COMP_DATA);
	if (with_residual)
		bind(pl, k, TG_P_RESIDUAL, op->arg[ARG_RESIDUAL], COMP_DATA);
}

/* Where a norm's row statistics go: the op's rsigma / mu outputs where the spec saves them, else the
 * output's workspace components rsigma / mu (a kernel after the row kernel reads them). */
typedef struct NormStats { int rs, mu; Component rsc, muc; bool own_rs, own_mu; } NormStats;
static NormStats norm_stats(const Op *op, const Tensor *out)
{
	NormStats s;
	s.own_rs = op->arg[ARG_RSIGMA_OUT] < 0;
	s.own_mu = op->p.norm == NORM_LAYER && op->arg[ARG_MU_OUT] < 0;
	s.rs = s.own_rs ? out->id : op->arg[ARG_RSIGMA_OUT];
	s.mu = s.own_mu ? out->id : op->arg[ARG_MU_OUT];
	s.rsc = s.own_rs ? COMP_RSIGMA : COMP_DATA;
	s.muc = s.own_mu ? COMP_MU : COMP_DATA;
	return s;
}

/* A norm with a columnwise 1x128 or MXFP8 copy: its row kernel writes the rowwise copy (if any) and
 * the row statistics (the op's rsigma / mu outputs, else the output's workspace components rsigma /
 * mu), then norm_colwise.cu reads the input again and writes the columnwise copy from them: 6 bytes
 * an element of BF16 input against 12 through an FP32 intermediate. */
static void plan_norm_block(Planner *pl, const Op *op, const Tensor *in, const Tensor *out)
{
	Extent rows = tensor_rows(pl, out, op->loc);
	long cols = tensor_cols(out);
	Tensor rowonly = *out;
	rowonly.columnwise = false;
	plan_op_kernels(pl, op, in, &rowonly, COMP_DATA, rows, cols, false);
	Kernel *nk = &pl->p->kernels[pl->p->nkernels - 1];
	bool ln = op->p.norm == NORM_LAYER;
	NormStats st = norm_stats(op, out); /* the row kernel binds saved ones; unsaved ones go to the workspace */
	if (st.own_rs)
		bind(pl, nk, TG_P_RSIGMA, st.rs, st.rsc);
	if (st.own_mu)
		bind(pl, nk, TG_P_MU, st.mu, st.muc);
	nk->note = out->rowwise ? "the rowwise copy and the row statistics (norm_colwise.cu writes the columnwise copy)"
		: "the row statistics alone (norm_colwise.cu writes the columnwise copy)";
	Kernel *k = kernel_new(pl, "norm_colwise", op->id);
	k->kind = KERNEL_GENERATED;
	k->tmpl = "norm_colwise.cu";
	common_slots(pl, k, in, out, cols, PASS_SINGLE);
	slot(pl, k, "TG_THREADS", "512");
	/* the residual sum, where the row kernel saved it, is the normalized input: one read, not two */
	int sum = op->arg[ARG_RESIDUAL_OUT];
	bind(pl, k, TG_P_IN, sum >= 0 ? sum : in->id, COMP_DATA);
	norm_inputs(pl, k, op, sum < 0);
	bind(pl, k, TG_P_RSIGMA, st.rs, st.rsc);
	if (ln)
		bind(pl, k, TG_P_MU, st.mu, st.muc);
	bind(pl, k, TG_P_OUT_T, out->id, COMP_DATA_T);
	bind(pl, k, TG_P_SCALE_INV_T, out->id, COMP_SCALE_INV_T);
	k->rows = rows;
	k->cols = cols;
	k->threads = 512;
	k->grid_rows = 128; /* 128 x 128 tiles */
	k->grid_cols = 128;
	k->variant = "t512";
	k->choice = "fixed";
	k->note = "the columnwise copy: the input read again, normalized with the row kernel's statistics";
	k->smem_dynamic = nc_stage_bytes(pl, k);
	slot(pl, k, "TG_NC_STAGE", k->smem_dynamic ? "1" : "0");
	k->persistent = k->smem_dynamic > 0; /* a CTA's next tile is the one it stages */
}

/* The kernel(s) of a quantizing op's own template: one, or an amax and a cast
 * pass (current scaling; amax_only: the amax pass alone); an unquantized output goes to component data. */
static void plan_op_kernels(Planner *pl, const Op *op, const Tensor *in, const Tensor *out, Component data, Extent rows,
	long cols, bool amax_only)
{
	const Graph *g = pl->g;
	if (op->kind == OP_DGLU)
		cols /= glu_halves(op->p.act); /* dglu.cu's TG_COLS is C, d_h is [rows][2C] (ungated: [rows][C]) */
	/* current scaling and a fused NVFP4 norm or GLU: an amax pass, then the cast pass re-reads the input */
	bool two = is_quantized(out) && scaling_info(out->recipe.scaling)->amax_pass;
	bool nv = is_quantized(out) && out->recipe.scaling == SCALING_NVFP4;
	const char *tmpl = op_template(op->kind);
	bool tiled = op->kind == OP_QUANTIZE || op->kind == OP_CAST_TRANSPOSE;
	for (int pass = two ? PASS_AMAX : PASS_SINGLE; pass <= (two ? amax_only ? PASS_AMAX : PASS_CAST : PASS_SINGLE); pass++) {
		const char *what = pass == PASS_AMAX ? arena_printf(pl->a, "%s_amax", op_name(op->kind)) : op_name(op->kind);
		Kernel *k = kernel_new(pl, what, op->id);
		k->kind = KERNEL_GENERATED;
		k->tmpl = tmpl;
		common_slots(pl, k, in, out, cols, pass);
		bind(pl, k, TG_P_IN, in->id, COMP_DATA);
		if (op->kind == OP_NORM_QUANTIZE) {
			norm_inputs(pl, k, op, true);
			if (pass != PASS_AMAX) {
				bind(pl, k, TG_P_RESIDUAL_OUT, op->arg[ARG_RESIDUAL_OUT], COMP_DATA);
				bind(pl, k, TG_P_RSIGMA, op->arg[ARG_RSIGMA_OUT], COMP_DATA);
				bind(pl, k, TG_P_MU, op->arg[ARG_MU_OUT], COMP_DATA);
			}
		}
		if (op->kind == OP_DGLU) {
			bool dbias = op->arg[ARG_DBIAS_OUT] >= 0 && pass != PASS_AMAX;
			slot(pl, k, "TG_G_DTYPE", istr(pl, dtype_code(g->tensors[op->arg[ARG_GRAD]].dtype)));
			slot(pl, k, "TG_DBIAS", dbias ? "1" : "0");
			if (pass == PASS_AMAX) /* dglu.cu: the amax pass writes no copy (its #error) */
				slot_set(k, "TG_COLWISE", "0");
			bind(pl, k, TG_PB_GRAD, op->arg[ARG_GRAD], COMP_DATA);
			if (dbias) /* the chunk partials of the bias gradient, in d_h's workspace */
				bind(pl, k, TG_PB_DW, op->arg[ARG_OUT], COMP_PART);
			k->smem_dynamic = dglu_stage_bytes(pl, k, op->p.act);
			slot(pl, k, "TG_DB_STAGE", k->smem_dynamic ? "1" : "0");
			/* the staged tile prefetches a CTA's next tile, so a CTA wants many: one CTA a SM (t1024) over the
			 * whole grid-stride, not 32 a SM of one or two tiles each. H100, 8192 tokens, us alone: 8B block dglu
			 * 487-491 -> 440-462, 70B 922-948 -> 858-859 (thirty-first session, call 2). Not MXFP8's, whose extra
			 * BF16 operand keeps more stores in flight: 8B MXFP8 dglu persistent / not, three rounds, us in the layer
			 * / alone 678 / 677, 669 / 680, 677 / 676 against 666 / 663, 668 / 664, 668 / 659 (thirty-fifth, call 7) */
			k->persistent = k->smem_dynamic > 0 && slot_long(k, "TG_RECIPE", 0) != TG_RECIPE_MXFP8;
		}
		if (op->kind == OP_NORM_QUANTIZE || op->kind == OP_GLU_AMAX) { /* NVFP4's stochastic rounding */
			slot(pl, k, "TG_SR", nv && out->recipe.nvfp4_sr ? "1" : "0");
			slot(pl, k, "TG_SEED", arena_printf(pl->a, "0x%016llxull",
				nv ? (unsigned long long)tensor_sr_seed(pl->g, out) : 0ull));
		}
		if (op->kind == OP_GLU_AMAX || op->kind == OP_DGLU) {
			slot(pl, k, "TG_ACT", istr(pl, op->p.act));
			slot(pl, k, "TG_ALPHA", flit(pl, op->p.alpha));
			slot(pl, k, "TG_LIMIT", flit(pl, op->p.limit));
		}
		int dbias = tiled && pass != PASS_AMAX && in == &g->tensors[op->arg[ARG_IN]] ? fused_dbias_op(g, op) : -1;
		if (tiled) {
			slot(pl, k, "TG_DBIAS", dbias >= 0 ? "1" : "0");
			if (dbias >= 0) /* the dbias op's chunk partials, in its input's workspace (as dbias.cu writes them) */
				bind(pl, k, TG_PB_DW, in->id, COMP_PART);
		}
		if (pass == PASS_AMAX || nv) /* NVFP4's cast pass reads the global amax (S_enc) */
			bind(pl, k, TG_P_AMAX, out->id, COMP_AMAX);
		if (pass != PASS_AMAX)
			bind_outputs(pl, k, out, data);
		if (tiled)
			tile_launch(pl, k, out, rows, cols);
		else
			row_launch(pl, k, out, rows, cols);
		k->note = pass == PASS_AMAX ? (nv ? "NVFP4, pass 1 of 2: global amax of the output, nothing written"
				: "current scaling, pass 1 of 2: amax of the output, nothing written")
			: pass == PASS_CAST ? (nv ? "NVFP4, pass 2 of 2: S_enc from the global amax, re-read the input, E4M3 block scales, E2M1 data"
				: "current scaling, pass 2 of 2: scale from the amax, re-read the input, cast")
			: block_tile(k) ? "both block-scaled copies from one kernel (block tile path: 128 x 128 tiles)" : NULL;
		if (dbias >= 0)
			k->note = arena_printf(pl->a, "%s%s%s fused: the chunk partials of %s's column sums (stage 1 of 2)",
				k->note ? k->note : "", k->note ? "; " : "", op_name(OP_DBIAS), in->name);
	}
	if (op->kind == OP_DGLU && op->arg[ARG_DBIAS_OUT] >= 0) /* the fused dbias's stage 2 */
		plan_dreduce(pl, op, op->arg[ARG_OUT], COMP_PART, op->arg[ARG_DBIAS_OUT], rows, glu_halves(op->p.act) * cols);
}

/* ---- NVFP4 ---- */

/* A fixed-shape generated kernel over [rows][cols] (not tunable): threads, grid-stride launch. */
static Kernel *fixed_kernel(Planner *pl, const char *what, const Op *op, const char *tmpl, Extent rows, long cols)
{
	Kernel *k = kernel_new(pl, what, op->id);
	k->kind = KERNEL_GENERATED;
	k->tmpl = tmpl;
	slot(pl, k, "TG_KERNEL", emit_entry(pl->a, pl->p, k));
	slot(pl, k, "TG_THREADS", "256");
	k->rows = rows;
	k->cols = cols;
	k->threads = 256;
	k->grid_rows = 1; /* grid.x = rows, capped: the templates grid-stride */
	k->variant = "t256";
	k->choice = "fixed";
	return k;
}

/* The random Hadamard transform of an NVFP4 kernel's columnwise copy: TG_RHT and
 * the sign mask (one for every tensor: tg_rht_sign_mask(TG_RHT_SEED)), and the
 * copy's own amax (both passes) and S_enc (cast pass) in its state slot. */
static void nvfp4_rht_slots(Planner *pl, Kernel *k, const Tensor *out, int pass)
{
	bool rht = tensor_rht_t(out);
	slot(pl, k, "TG_RHT", rht ? "1" : "0");
	slot(pl, k, "TG_RHT_MASK", arena_printf(pl->a, "0x%04xu", rht ? tg_rht_sign_mask(TG_RHT_SEED) : 0u));
	if (!rht)
		return;
	bind(pl, k, TG_P_AMAX_T, out->id, COMP_AMAX_T);
	if (pass)
		bind(pl, k, TG_P_SCALE_T, out->id, COMP_SCALE_T);
	k->note = arena_printf(pl->a, "%s; RHT: the columnwise copy 16-point Hadamard-transformed along its rows, %s", k->note,
		pass ? "with its own S_enc (scale_t) from amax_t" : "its own global amax (amax_t)");
}

/* hp_view: out as the kernel of an unfused op sees it, an FP32 unquantized tensor (component hp). */
static Tensor hp_view(const Tensor *out)
{
	Tensor hp = *out;
	hp.recipe.scaling = SCALING_NONE;
	hp.dtype = hp.hp_dtype = DT_F32;
	hp.rowwise = true;
	hp.columnwise = false;
	return hp;
}

/* nvfp4_quantize.cu's value source (TG_SRC) and the slots of the op it computes (0 for a tensor). */
static void nvfp4_source_slots(Planner *pl, Kernel *k, const Op *op, NvfpSource src)
{
	const Graph *g = pl->g;
	slot(pl, k, "TG_SRC", istr(pl, src));
	slot(pl, k, "TG_DEQ", "0"); /* plan_dequantize_nvfp4 sets it where an emulated GEMM reads the copy */
	bool glu = src == NVSRC_GLU || src == NVSRC_DGLU;
	slot(pl, k, "TG_ACT", glu ? istr(pl, op->p.act) : "0");
	slot(pl, k, "TG_ALPHA", glu ? flit(pl, op->p.alpha) : "0.0f");
	slot(pl, k, "TG_LIMIT", glu ? flit(pl, op->p.limit) : "0.0f");
	slot(pl, k, "TG_G_DTYPE", src == NVSRC_DGLU ? istr(pl, dtype_code(g->tensors[op->arg[ARG_GRAD]].dtype)) : "0");
	if (src != NVSRC_NORM) {
		slot(pl, k, "TG_NORM", "0");
		slot(pl, k, "TG_W_DTYPE", "0");
		slot(pl, k, "TG_B_DTYPE", "0");
		slot(pl, k, "TG_ZERO_CENTERED", "0");
		slot(pl, k, "TG_HAS_RESIDUAL", "0");
	}
}

/* A kernel of nvfp4_quantize.cu for out: pass 0 (the global amax) or 1 (the cast, writing out's copies),
 * its copy and option slots, value source src reading component comp of tensor in (of dtype dt); the
 * caller binds a source op's other inputs. */
static Kernel *nvfp4_kernel(Planner *pl, const char *what, const Op *op, const Tensor *out, int pass, NvfpSource src,
	int in, Component comp, DType dt)
{
	Kernel *k = fixed_kernel(pl, what, op, "nvfp4_quantize.cu", tensor_rows(pl, out, op->loc), tensor_cols(out));
	k->pass = pass ? PASS_CAST : PASS_AMAX;
	slot(pl, k, "TG_IN_DTYPE", istr(pl, dtype_code(dt)));
	bind(pl, k, TG_P_IN, in, comp);
	slot(pl, k, "TG_PASS", pass ? "1" : "0");
	slot(pl, k, "TG_ROWWISE", out->rowwise ? "1" : "0");
	slot(pl, k, "TG_COLWISE", out->columnwise ? "1" : "0");
	slot(pl, k, "TG_2D", out->recipe.nvfp4_2d ? "1" : "0");
	slot(pl, k, "TG_SR", out->recipe.nvfp4_sr ? "1" : "0");
	slot(pl, k, "TG_SEED", arena_printf(pl->a, "0x%016llxull", (unsigned long long)tensor_sr_seed(pl->g, out)));
	nvfp4_source_slots(pl, k, op, src);
	bind(pl, k, TG_P_AMAX, out->id, COMP_AMAX);
	if (pass)
		bind_outputs(pl, k, out, COMP_DATA);
	/* Not persistent: the strip cast's per-CTA prologue (its scale tables, the wait for the global amax) was 8% of
	 * the 8B xn cast's instructions and 19% of its stall samples at about one strip a CTA, but resident CTAs
	 * grid-striding over the strips ran every NVFP4 cast 4-15% slower (H100, 8B training layer, us alone: xn
	 * 124.7 -> 130.5, w_up 380 -> 438, d_h 938 -> 1051; thirty-third session, call 2). */
	return k;
}

/* A norm's, GLU's or dglu's NVFP4 copies from nvfp4_quantize.cu computing the op's values again from its
 * inputs (nvfp4_source): the op's own amax pass first (a norm's also saves the row statistics and the
 * residual sum), then the cast pass writes every copy; no FP32 intermediate (4 bytes an element written
 * and read twice). With the RHT, nvfp4_quantize.cu's amax pass over the op's values takes the
 * transformed columnwise copy's amax (and the rowwise one, but a norm's: its own pass took that). */
static void plan_nvfp4_fused(Planner *pl, const Op *op, const Tensor *in, const Tensor *out, NvfpSource src)
{
	const Graph *g = pl->g;
	Extent rows = tensor_rows(pl, out, op->loc);
	long cols = tensor_cols(out);
	bool rht = tensor_rht_t(out), norm = src == NVSRC_NORM, ln = norm && op->p.norm == NORM_LAYER;
	NormStats st = norm_stats(op, out); /* a norm's */
	int sum = norm ? op->arg[ARG_RESIDUAL_OUT] : -1;
	if (!rht || norm) {
		Tensor rowonly = *out; /* the amax pass writes no copy */
		rowonly.columnwise = false;
		rowonly.recipe.nvfp4_2d = false;
		plan_op_kernels(pl, op, in, &rowonly, COMP_DATA, rows, cols, true);
		Kernel *ak = &pl->p->kernels[pl->p->nkernels - 1];
		if (norm) {
			bind(pl, ak, TG_P_RSIGMA, st.rs, st.rsc);
			if (ln)
				bind(pl, ak, TG_P_MU, st.mu, st.muc);
			if (sum >= 0)
				bind(pl, ak, TG_P_RESIDUAL_OUT, sum, COMP_DATA);
		}
		ak->note = norm ? "NVFP4, pass 1 of 2: global amax of the output and the row statistics (the cast pass reads them)"
			: "NVFP4, pass 1 of 2: global amax of the output, nothing written";
	}
	for (int pass = rht ? 0 : 1; pass < 2; pass++) {
		int x = norm && sum >= 0 ? sum : in->id; /* a norm reads the residual sum where it was saved */
		Kernel *k = nvfp4_kernel(pl, arena_printf(pl->a, "nvfp4_%s_%s", pass ? "cast" : "amax_t", out->name), op, out, pass,
			src, x, COMP_DATA, g->tensors[x].dtype);
		if (norm) {
			norm_inputs(pl, k, op, sum < 0);
			bind(pl, k, TG_P_RSIGMA, st.rs, st.rsc);
			if (ln)
				bind(pl, k, TG_P_MU, st.mu, st.muc);
		}
		if (src == NVSRC_DGLU)
			bind(pl, k, TG_PB_GRAD, op->arg[ARG_GRAD], COMP_DATA);
		k->note = pass ? "NVFP4, pass 2 of 2: the op's values computed again from its inputs, S_enc from the global amax, "
				"E4M3 block scales, E2M1 data (every copy)"
			: "NVFP4, pass 1 of 2: global amaxes over the op's values, computed from its inputs";
		nvfp4_rht_slots(pl, k, out, pass);
	}
}

/* NVFP4 output of op. A norm's or GLU's rowwise 1D copy: the op's own template in two passes
 * (global amax, then S_enc and the cast; plan_op_kernels). Otherwise an amax pass and a cast
 * pass of nvfp4_quantize.cu over the op's input (quantize, cast_transpose) or over the FP32 value
 * the op's own kernel writes first (op_writes_hp: a columnwise copy, 16x16 blocks, dglu; and
 * every row op under PlanOptions.hp_values, which reads that value back). */
static void plan_nvfp4(Planner *pl, const Op *op, const Tensor *in, const Tensor *out)
{
	Extent rows = tensor_rows(pl, out, op->loc);
	long cols = tensor_cols(out);
	int src = in->id;
	Component src_comp = COMP_DATA;
	DType src_dtype = in->dtype;
	if (op_family(op->kind) == OPF_ROW && !op_writes_hp(pl->g, op) && !pl->hp_values) {
		NvfpSource vs = nvfp4_source(pl->g, op);
		if (vs != NVSRC_TENSOR)
			plan_nvfp4_fused(pl, op, in, out, vs);
		else
			plan_op_kernels(pl, op, in, out, COMP_DATA, rows, cols, false);
		return;
	}
	if (op_family(op->kind) == OPF_ROW) {
		Tensor hp = hp_view(out);
		int opk = pl->p->nkernels; /* the op's kernel (a dglu's fused dbias adds its dreduce after it) */
		plan_op_kernels(pl, op, in, &hp, COMP_HP, rows, cols, false);
		pl->p->kernels[opk].note = "unfused NVFP4, 1 of 3: the op's FP32 value to an intermediate (hp)";
		src = out->id;
		src_comp = COMP_HP;
		src_dtype = DT_F32;
	}
	bool unfused = src_comp == COMP_HP;
	for (int pass = 0; pass < 2; pass++) {
		Kernel *k = nvfp4_kernel(pl, arena_printf(pl->a, "nvfp4_%s_%s", pass ? "cast" : "amax", out->name), op, out, pass,
			NVSRC_TENSOR, src, src_comp, src_dtype);
		k->note = arena_printf(pl->a, "%sNVFP4, %d of %d: %s", unfused ? "unfused " : "", pass + 1 + unfused, 2 + unfused,
			pass ? "S_enc from the global amax, E4M3 block scales, E2M1 data" : "global amax, nothing written");
		nvfp4_rht_slots(pl, k, out, pass);
	}
}

/* Kernel w, which writes copy `from` of t, writes it dequantized to BF16 too (TG_DEQ bit 1 rowwise, 2
 * columnwise; pointer slot `slot`): the operand of an emulated GEMM, in place of a dequantize kernel. */
static void deq_in_writer(Planner *pl, Kernel *w, const Tensor *t, Component from, int slot)
{
	int bit = from == COMP_DATA ? 1 : 2;
	long deq = slot_long(w, "TG_DEQ", 0);
	if (deq & bit) /* an earlier emulated GEMM reads this copy too: the kernel writes it already */
		return;
	slot_set(w, "TG_DEQ", istr(pl, deq | bit));
	bind(pl, w, slot, t->id, from == COMP_DATA ? COMP_DEQ : COMP_DEQ_T);
	w->note = arena_printf(pl->a, "%s%salso the %s copy dequantized to BF16 (an emulated GEMM's operand)", w->note ? w->note : "",
		w->note ? "; " : "", from == COMP_DATA ? "rowwise" : "columnwise");
}

/* The kernel that writes MXFP8 copy `from` of t in a template that can write it dequantized too (TG_DEQ), or
 * NULL. Which copies each template takes, by measurement (H100, the 8B MXFP8 training layer at 8192 tokens, us in
 * the layer, against the quantizing kernel + dequantize.cu's; bench/RESULTS.md, twenty-sixth session): the norm's
 * rowwise copy 62 vs 42 + 39, norm_colwise 67 vs 45 + 39, the GLU's both (block tile) 443 vs 266 + 128 + 130, the
 * casts' rowwise ones 282 vs 185 + 128 (w_up), 140 vs 94 + 66, 79 vs 56 + 39; dglu's rowwise 737-744 vs 740-755.
 * The columnwise copies of the staged paths (cast_transpose.cu, dglu.cu) stay with dequantize.cu: written there
 * they cost more than its kernel (w_up 373 vs 316, d_h 993-1003 vs 760). dglu's both on its block tile path (staged
 * by cp.async, persistent, tg_block_colwise_tile's DEQ) measured no better: 982 us alone, 994-995 in the layer,
 * against the staged path's 737-742 + dequantize.cu's 259 (723 + 257 in the layer; thirty-second session). */
static Kernel *mx_writer_of(Planner *pl, const Tensor *t, Component from)
{
	static const struct { const char *tmpl; int copies; } deq[] = { /* TG_DEQ bits: 1 rowwise, 2 columnwise */
		{"norm_quantize.cu", 3}, {"norm_colwise.cu", 2}, {"glu_amax.cu", 3}, {"dglu.cu", 1}, {"cast_transpose.cu", 1},
	};
	Kernel *k = copy_writer(pl, t, from);
	if (!k || !k->tmpl || slot_long(k, "TG_RECIPE", -1) != TG_RECIPE_MXFP8)
		return NULL;
	for (int j = 0; j < NELEMS(deq); j++)
		if (!strcmp(k->tmpl, deq[j].tmpl))
			return deq[j].copies & (from == COMP_DATA ? 1 : 2) ? k : NULL;
	return NULL;
}

/* A kernel of op's phase that already writes t's BF16 operand deq (COMP_DEQ or COMP_DEQ_T): an earlier GEMM of the
 * phase read the same copy (or one GEMM reads it as both operands), so it is dequantized once. */
static bool deq_planned(Planner *pl, const Op *op, const Tensor *t, Component deq)
{
	for (int i = 0; i < pl->p->nkernels; i++) {
		const Kernel *k = &pl->p->kernels[i];
		for (int b = 0; k->phase == op->phase && b < k->nbind; b++)
			if (k->bind[b].tensor == t->id && k->bind[b].comp == deq)
				return true;
	}
	return false;
}

/* An MXFP8 operand copy (data or data_t) dequantized to a BF16 copy: by the kernel that quantizes it (TG_DEQ:
 * 2 bytes an element more written there, against a kernel that reads the copy back), else by dequantize.cu.
 * n[0], n[1] are the tensor's rows and cols either way; the columnwise copy's scales are TE's
 * [rows/32][cols] (TG_SCALE_T). */
static void plan_dequantize(Planner *pl, const Op *op, const Tensor *t, Component from)
{
	Kernel *w = mx_writer_of(pl, t, from);
	if (w) {
		deq_in_writer(pl, w, t, from, from == COMP_DATA ? TG_P_MX_DEQ : TG_P_MX_DEQ_T);
		return;
	}
	if (deq_planned(pl, op, t, from == COMP_DATA ? COMP_DEQ : COMP_DEQ_T))
		return;
	const char *what = arena_printf(pl->a, "dequantize_%s%s", t->name, from == COMP_DATA_T ? "_t" : "");
	Kernel *k = fixed_kernel(pl, what, op, "dequantize.cu", tensor_rows(pl, t, op->loc), tensor_cols(t));
	slot(pl, k, "TG_FMT", t->dtype == DT_E5M2 ? "1" : "0");
	slot(pl, k, "TG_SCALE_T", from == COMP_DATA_T ? "1" : "0");
	bind(pl, k, TG_P_IN, t->id, from);
	bind(pl, k, TG_P_SCALE_INV, t->id, from == COMP_DATA ? COMP_SCALE_INV : COMP_SCALE_INV_T);
	bind(pl, k, TG_P_OUT, t->id, from == COMP_DATA ? COMP_DEQ : COMP_DEQ_T);
	k->grid_rows = 16; /* 16 rows x 256 columns = 4096 elements (16 a thread) per CTA */
	k->grid_cols = 256;
	/* a CTA a work item up to 128 a SM: H100, 8B MXFP8 training layer, us in the layer, cap 32 / 128: d_h_t 257.1 /
	 * 247.8, w_up_q_t 129.7 / 125.3, the two small ones within 0.3% (thirty-fifth session, call 10) */
	k->grid_cap = 128;
	k->note = "emulated MXFP8 GEMM: operand to BF16";
}

/* The cast pass of nvfp4_quantize.cu over strips (a columnwise copy, 16x16 blocks or an op's values) that
 * wrote copy `from` of t, or NULL. */
static Kernel *nvfp4_strip_cast_of(Planner *pl, const Tensor *t, Component from)
{
	Kernel *k = copy_writer(pl, t, from);
	if (!k || !k->tmpl || strcmp(k->tmpl, "nvfp4_quantize.cu"))
		return NULL;
	bool strips = slot_long(k, "TG_2D", 0) || slot_long(k, "TG_COLWISE", 0) || slot_long(k, "TG_SRC", 0);
	return k->pass == PASS_CAST && strips ? k : NULL;
}

/* An NVFP4 operand copy dequantized to BF16 (row-aware: a columnwise copy's rows
 * may have an odd length). n[0], n[1] are the tensor's rows and cols either way. */
static void plan_dequantize_nvfp4(Planner *pl, const Op *op, const Tensor *t, Component from)
{
	/* the cast over strips writes the BF16 copy itself: in an instruction-bound kernel, 2 bytes an element
	 * more written, against a kernel that reads the copy back (H100, the 8B NVFP4 training layer: sixteenth
	 * session) */
	Kernel *cast = nvfp4_strip_cast_of(pl, t, from);
	if (cast) {
		deq_in_writer(pl, cast, t, from, from == COMP_DATA ? TG_P_DEQ : TG_P_DEQ_T);
		return;
	}
	if (deq_planned(pl, op, t, from == COMP_DATA ? COMP_DEQ : COMP_DEQ_T))
		return;
	const char *what = arena_printf(pl->a, "dequantize_%s%s", t->name, from == COMP_DATA_T ? "_t" : "");
	Kernel *k = fixed_kernel(pl, what, op, "nvfp4_dequantize.cu", tensor_rows(pl, t, op->loc), tensor_cols(t));
	slot(pl, k, "TG_COPY_T", from == COMP_DATA_T ? "1" : "0");
	bind(pl, k, TG_P_IN, t->id, from);
	bind(pl, k, TG_P_SCALE_INV, t->id, from == COMP_DATA ? COMP_SCALE_INV : COMP_SCALE_INV_T);
	bind(pl, k, TG_P_SCALE, t->id, tensor_s_enc_comp(t, from)); /* an RHT columnwise copy has its own S_enc */
	bind(pl, k, TG_P_OUT, t->id, from == COMP_DATA ? COMP_DEQ : COMP_DEQ_T);
	k->note = tensor_s_enc_comp(t, from) == COMP_SCALE_T
		? "emulated NVFP4 GEMM: operand to BF16 (Hadamard-transformed copy: the product along K is unchanged)"
		: "emulated NVFP4 GEMM: operand to BF16";
}

/* Block scales of one operand copy into cuBLASLt's swizzled layout (native
 * MXFP8 or NVFP4 GEMM, sm_100+): 32 (MXFP8) or 16 (NVFP4) elements per scale. */
static void plan_swizzle(Planner *pl, const Op *op, const Tensor *t, Component from)
{
	long blk = scaling_info(t->recipe.scaling)->block_cols;
	Kernel *k = kernel_new(pl, arena_printf(pl->a, "swizzle_%s%s", t->name, from == COMP_DATA_T ? "_t" : ""), op->id);
	k->kind = KERNEL_GENERATED;
	k->tmpl = "mxfp8_swizzle.cu";
	slot(pl, k, "TG_KERNEL", emit_entry(pl->a, pl->p, k));
	slot(pl, k, "TG_THREADS", "256");
	bind(pl, k, TG_P_IN, t->id, from == COMP_DATA ? COMP_SCALE_INV : COMP_SCALE_INV_T);
	bind(pl, k, TG_P_OUT, t->id, from == COMP_DATA ? COMP_SCALE_SW : COMP_SCALE_SW_T);
	k->threads = 256;
	if (blk == 32 && from == COMP_DATA_T) {
		/* MXFP8 columnwise scales are stored [rows/32][cols] (TG_SRC_T): n[0], n[1] are
		 * the tensor's rows (may be tokens) and cols; 256 units of work per CTA */
		slot(pl, k, "TG_SRC_T", "1");
		k->rows = tensor_rows(pl, t, op->loc);
		k->cols = tensor_cols(t);
		k->grid_rows = 1024;
		k->grid_cols = 128;
	} else {
		/* n[0] = rows of the scale matrix, n[1] = its columns; both fixed here except the
		 * rowwise copy's rows (the planner keeps n[1] constant, so the transposed NVFP4 copy
		 * of an activation, whose scale columns grow with tokens, is not planned natively) */
		slot(pl, k, "TG_SRC_T", "0");
		k->rows = from == COMP_DATA ? tensor_rows(pl, t, op->loc) : (Extent){-1, 0, tensor_cols(t)};
		k->cols = from == COMP_DATA ? (tensor_cols(t) + blk - 1) / blk : (tensor_rows(pl, t, op->loc).add + blk - 1) / blk;
		k->grid_rows = 1024; /* 8 row tiles of 128 per CTA: units/256 CTAs, grid-stride */
		k->grid_cols = 4;
	}
	k->variant = "t256";
	k->choice = "fixed";
	k->note = blk == 16 ? "native NVFP4 GEMM: scales to the 128x4 swizzled layout"
		: "native MXFP8 GEMM: scales to the 128x4 swizzled layout";
}

/* The alpha of a native NVFP4 GEMM: one thread writes {1/(S_enc_a*S_enc_b), beta}
 * from the operands' recipe state into the output's alpha component, which
 * cuBLASLt then reads in device pointer mode (nvfp4_gemm_alpha.cu). */
static void plan_nvfp4_alpha(Planner *pl, const Op *op, const GemmCall *c)
{
	const Tensor *d = &pl->g->tensors[c->d];
	Kernel *k = kernel_new(pl, arena_printf(pl->a, "nvfp4_alpha_%s", d->name), op->id);
	k->kind = KERNEL_GENERATED;
	k->tmpl = "nvfp4_gemm_alpha.cu";
	slot(pl, k, "TG_KERNEL", emit_entry(pl->a, pl->p, k));
	slot(pl, k, "TG_THREADS", "32");
	slot(pl, k, "TG_ACCUMULATE", c->accumulate ? "1" : "0");
	bind(pl, k, TG_P_SCALE, c->a, c->a_senc); /* scale, or scale_t for a Hadamard-transformed copy */
	bind(pl, k, TG_P_SCALE_B, c->b, c->b_senc);
	bind(pl, k, TG_P_OUT, c->d, COMP_ALPHA);
	k->rows = (Extent){-1, 0, 1};
	k->cols = 1;
	k->threads = 32;
	k->grid_rows = 1; /* one CTA */
	k->variant = "t32";
	k->choice = "fixed";
	k->note = "native NVFP4 GEMM: alpha = 1/(S_enc_a*S_enc_b) and beta to the device (cuBLASLt pointer mode DEVICE)";
}

DType bias_dtype_for(DType a, DType d)
{
	bool lowp = a == DT_E4M3 || a == DT_E5M2 || a == DT_E2M1;
	return lowp ? (d == DT_F16 ? DT_F16 : DT_BF16) : d;
}

DType gemm_bias_dtype(const GemmCall *c) { return bias_dtype_for(c->a_dtype, c->d_dtype); }

/* A convert.cu kernel for op: tensor t's component from (dtype in) into its component to (dtype out), rows x
 * t's columns; grid.x = rows (capped), convert.cu grid-strides over the elements. */
static Kernel *convert_kernel(Planner *pl, const Op *op, const Tensor *t, Component from, DType in, Component to,
	DType out, Extent rows)
{
	Kernel *cv = fixed_kernel(pl, arena_printf(pl->a, "convert_%s", t->name), op, "convert.cu", rows, tensor_cols(t));
	slot(pl, cv, "TG_IN_DTYPE", istr(pl, dtype_code(in)));
	slot(pl, cv, "TG_OUT_DTYPE", istr(pl, dtype_code(out)));
	bind(pl, cv, TG_P_IN, t->id, from);
	bind(pl, cv, TG_P_OUT, t->id, to);
	cv->grid_rows = 1;
	return cv;
}

/* The fp16 output of GEMM kernel k written as FP32 into its `hp` component (GemmCall.d_comp): convert.cu rounds
 * it to fp16 into the output's data (RNE, one rounding of the FP32 sum as a direct fp16 output would be). */
static void plan_d_convert(Planner *pl, const Op *op, const GemmCall *c)
{
	const Tensor *d = &pl->g->tensors[c->d];
	Kernel *cv = convert_kernel(pl, op, d, COMP_HP, DT_F32, COMP_DATA, d->dtype, c->m);
	cv->note = arena_printf(pl->a, "GEMM output: fp32 -> %s (cuBLASLt writes no %s from %s operands)", dtype_name(d->dtype),
		dtype_name(d->dtype), scaling_name(pl->g->tensors[c->a].recipe.scaling));
}

/* The bias conversion (convert.cu, into the bias's `bias` component) for a GEMM
 * whose bias dtype is not the one its epilogue reads; the GEMM then reads that. */
static void plan_bias_convert(Planner *pl, const Op *op, GemmCall *c)
{
	const Tensor *bias = &pl->g->tensors[c->bias];
	DType want = gemm_bias_dtype(c);
	Kernel *cv = convert_kernel(pl, op, bias, COMP_DATA, bias->dtype, COMP_BIAS, want, (Extent){-1, 0, 1});
	cv->grid_cols = 256; /* one row: grid.x = ceil(cols / 256) */
	cv->note = arena_printf(pl->a, "GEMM bias: %s -> %s, the dtype cuBLASLt's epilogue reads", dtype_name(bias->dtype),
		dtype_name(want));
	c->bias_comp = COMP_BIAS;
}

/* The cuBLASLt call of a gemm op as the spec states it: operands and the copies it
 * reads, M/N/K, dtypes, scaling, epilogue and accumulation mode. */
static GemmCall gemm_call(Planner *pl, const Op *op)
{
	const Graph *g = pl->g;
	const Tensor *a = &g->tensors[op->arg[ARG_A]], *b = &g->tensors[op->arg[ARG_B]];
	const Tensor *d = &g->tensors[op->arg[ARG_OUT]];
	GemmCall call = {0}, *c = &call;
	c->op = op->id;
	c->a = a->id;
	c->b = b->id;
	c->d = d->id;
	c->bias = op->arg[ARG_BIAS];
	c->add = op->arg[ARG_ADD];
	c->bias_comp = COMP_DATA;
	c->glu = -1;
	c->dglu = -1;
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
	if (c->scaling == SCALING_NONE) { /* high precision: no columnwise copies, cuBLASLt reads the data transposed */
		c->a_trans = c->a_comp == COMP_DATA_T;
		c->b_trans = c->b_comp == COMP_DATA_T;
		c->a_comp = c->b_comp = COMP_DATA;
	}
	c->a_dtype = a->dtype;
	c->b_dtype = b->dtype;
	c->d_dtype = d->dtype;
	c->d_comp = COMP_DATA;
	if (d->dtype == DT_F16 && (c->scaling == SCALING_MXFP8 || c->scaling == SCALING_NVFP4)) {
		c->d_dtype = DT_F32; /* no fp16 D from these operands (emulated: a BF16 GEMM): FP32, then plan_d_convert */
		c->d_comp = COMP_HP;
	}
	c->accumulate = op->p.accumulate || c->add >= 0; /* beta 1: C is D (accumulate) or the add tensor */
	c->gelu = op->p.gelu;
	c->fast_accum = op->p.fast_accum < 0 ? op->p.pass == PASS_FPROP : op->p.fast_accum;
	if (c->scaling == SCALING_NONE || c->scaling == SCALING_BLOCK1X128 || c->scaling == SCALING_BLOCK128X128)
		c->fast_accum = false; /* cuBLASLt's block-scaled FP8 GEMM has no fast-accumulation mode */
	if (c->scaling == SCALING_NVFP4) {
		c->a_senc = tensor_s_enc_comp(a, c->a_comp);
		c->b_senc = tensor_s_enc_comp(b, c->b_comp);
	}
	return call;
}

/* Why the generated FP8 GEMM (templates/gemm_fp8.cu) cannot run call c, or NULL if it can. */
static const char *gemm_generated_why_not(const GemmCall *c, bool dglu)
{
	bool block = c->scaling == SCALING_BLOCK1X128 || c->scaling == SCALING_BLOCK128X128;
	if (c->scaling != SCALING_DELAYED && c->scaling != SCALING_CURRENT && !block)
		return "per-tensor FP8 scaling only";
	if (c->emulated || c->a_trans || c->b_trans)
		return "per-tensor FP8 operands only";
	if ((c->a_dtype != DT_E4M3 && c->a_dtype != DT_E5M2) || (c->b_dtype != DT_E4M3 && c->b_dtype != DT_E5M2))
		return "FP8 operands only";
	if (c->bias >= 0 || c->gelu)
		return "no epilogue yet";
	if (c->accumulate) /* also set by add (beta 1) */
		return "no accumulate or add yet";
	/* measured on the H100 beside cuBLASLt (test_gemm --gen-bench, bench/RESULTS.md thirteenth session): the
	 * promoting 128 x 192 tile at the Llama-3 8B shapes ran 0.90-0.95x cuBLASLt's split accumulator and, with
	 * block scales (TG_SCALE 1 and 2), 0.83-0.92x cuBLASLt's block-scaled GEMM (twenty-first session, after the twentieth's
	 * consumer changes: 0.91-0.94x with 128x128 weights, 0.76-0.88x with both operands 1x128); a 128 x 192 tile with FP32 output
	 * and fast accumulation 0.90-0.97x (ninth session). The kernel is tested (test_gemm) but not planned there. */
	if (block)
		return "block scales: generated 0.76-0.94x of cuBLASLt, H100";
	if (dglu) /* the dglu epilogue promotes: split accumulator or not, a 2-byte d_act */
		return c->d_dtype != DT_BF16 && c->d_dtype != DT_F16 ? "a BF16 or FP16 d_act only" : NULL;
	if (!c->fast_accum)
		return "split accumulator: generated 0.90-0.95x of cuBLASLt, H100";
	if (c->d_dtype == DT_F32)
		return "FP32 output: generated 0.90-0.97x of cuBLASLt, H100";
	if (c->d_dtype != DT_BF16 && c->d_dtype != DT_F16)
		return "BF16 or FP16 output only";
	return NULL;
}

/* Where the GPU is an sm_90 (Hopper), a per-tensor FP8 GEMM runs the generated wgmma + TMA kernel
 * (templates/gemm_fp8.cu) instead of cuBLASLt; the runtime falls back to cuBLASLt on other GPUs and
 * for a call the kernel cannot take (K % 16, alignment: runtime/gemm_gen.h). */
/* The generated kernel's slots for tile 128 x bn, `stages` deep, promoting each 128 of K or not. */
static void gemm_generated_tile(Planner *pl, Kernel *k, const GemmCall *c, int bn, int stages, bool promote)
{
	k->tmpl = "gemm_fp8.cu";
	k->gen_why_not = NULL;
	k->variant = arena_printf(pl->a, "n%ds%d%s", bn, stages, promote ? "p" : "");
	slot(pl, k, "TG_KERNEL", emit_entry(pl->a, pl->p, k));
	slot(pl, k, "TG_BN", istr(pl, bn));
	slot(pl, k, "TG_STAGES", istr(pl, stages));
	slot(pl, k, "TG_PROMOTE", promote ? "1" : "0");
	slot(pl, k, "TG_KIND", arena_printf(pl->a, "\"%s.%s\"", dtype_name(c->a_dtype), dtype_name(c->b_dtype)));
	slot(pl, k, "TG_OUT", c->d_dtype == DT_F16 ? "1" : "0");
	slot(pl, k, "TG_EPI", "0"); /* no epilogue: plan_glu_epilogue may add the GLU */
	slot(pl, k, "TG_ACT", "0");
	slot(pl, k, "TG_ALPHA", "0.0f");
	slot(pl, k, "TG_LIMIT", "0.0f");
	slot(pl, k, "TG_FMT", "0");
	slot(pl, k, "TG_ACT_T", "0");
	slot(pl, k, "TG_SCALE", "0"); /* per-tensor scales */
	slot(pl, k, "TG_H_F16", "0"); /* the dglu epilogue's h and copies: plan_dglu_epilogue sets them */
	slot(pl, k, "TG_DH_ROW", "1");
	k->threads = 384;
}

static void plan_gemm_generated(Planner *pl, Kernel *k, const GemmCall *c)
{
	const char *why = gemm_generated_why_not(c, false);
	if (why) {
		k->gen_why_not = why;
		return;
	}
	/* the one tile planned without an epilogue of a backward op (fast accumulation, 2-byte output): 128 x 256,
	 * 3 stages of 48 KB plus the 64 KB output tile, measured best on the H100 (docs/GEMM_GEN.md); the template's
	 * promoting, block-scaled and smaller tiles are tested (test_gemm) but slower than cuBLASLt, so not planned
	 * (the promoting tile only with the dglu epilogue: plan_dglu_epilogue) */
	gemm_generated_tile(pl, k, c, 256, 3, false);
	k->choice = "sm_90a: generated wgmma kernel (without an epilogue where it pays: gemm_gen_pays); cuBLASLt elsewhere";
}

/* The GEMM kernel whose op writes tensor t, -1 none. */
static int gemm_kernel_writing(const Planner *pl, const Tensor *t)
{
	for (int i = 0; i < pl->p->nkernels; i++)
		if (pl->p->kernels[i].kind == KERNEL_GEMM && pl->p->kernels[i].gemm.op == t->producer)
			return i;
	return -1;
}

/* Why glu_amax op `op` cannot be the epilogue of the generated GEMM (kernel *kg) that writes its input
 * (NULL: it can; *kg = -1 and NULL when no generated GEMM writes it). The epilogue writes a rowwise
 * per-tensor FP8 copy with a delayed scale (known before the GEMM runs; current scaling needs the amax
 * first) and, where asked, its columnwise copy (the same bytes transposed). */
static const char *glu_epilogue_why_not(Planner *pl, const Op *op, int *kg)
{
	const Graph *g = pl->g;
	const Tensor *h = &g->tensors[op->arg[ARG_IN]], *out = &g->tensors[op->arg[ARG_OUT]];
	*kg = gemm_kernel_writing(pl, h);
	if (*kg >= 0 && !pl->p->kernels[*kg].tmpl)
		*kg = -1; /* a cuBLASLt GEMM */
	if (*kg < 0)
		return NULL;
	const Kernel *k = &pl->p->kernels[*kg];
	if (glu_halves(op->p.act) != 2)
		return "a gated activation only (the tile pairs gate and linear columns)";
	if (k->gemm.glu >= 0 || k->phase != g->ops[op->id].phase)
		return "the GEMM has an epilogue already";
	if (!is_quantized(out) || out->recipe.scaling != SCALING_DELAYED || out->dtype == DT_E2M1)
		return "an FP8 delayed-scaling output only";
	if (!out->rowwise)
		return "a rowwise copy (with or without the columnwise one)";
	if (pl->hp_values)
		return "hp_values: the op writes its FP32 value";
	return NULL;
}

/* Op `op` (a GLU or dglu) fused into GEMM kernel k as its epilogue `epi` (gemm_fp8.cu's TG_EPI), reading the
 * GEMM's output d: D is still written when d is a layer output or another op reads it (keep_d); the op's
 * activation and the FP8 format and copies of its output out go into the slots, out's pointers into the
 * bindings. */
static void fuse_epilogue(Planner *pl, Kernel *k, const Op *op, const Tensor *d, const Tensor *out, const char *epi)
{
	const Graph *g = pl->g;
	k->gemm.keep_d = d->output;
	for (int i = 0; i < g->nops; i++)
		for (int s = 0; s < ARG_COUNT; s++)
			if (i != op->id && !arg_is_output((ArgSlot)s) && g->ops[i].arg[s] == d->id)
				k->gemm.keep_d = true;
	k->ops[k->nops++] = op->id;
	slot_set(k, "TG_EPI", epi);
	slot_set(k, "TG_ACT", istr(pl, op->p.act));
	slot_set(k, "TG_ALPHA", flit(pl, op->p.alpha));
	slot_set(k, "TG_LIMIT", flit(pl, op->p.limit));
	slot_set(k, "TG_FMT", out->dtype == DT_E5M2 ? "1" : "0");
	slot_set(k, "TG_ACT_T", out->columnwise ? "1" : "0");
	bind_outputs(pl, k, out, COMP_DATA);
}

/* glu_amax op `op` as the epilogue of the generated GEMM before it (gemm_fp8.cu TG_EPI 1: the tile holds
 * 128 columns of the gate half and the same 128 of the linear half), where glu_epilogue_why_not allows.
 * Its own kernel is still planned (the caller's next step) and runs where the GEMM falls back to
 * cuBLASLt; returns the GEMM kernel's index, or -1 with *why (NULL when no generated GEMM writes h). */
static int plan_glu_epilogue(Planner *pl, const Op *op, const char **why)
{
	const Graph *g = pl->g;
	int kg;
	if ((*why = glu_epilogue_why_not(pl, op, &kg)) || kg < 0)
		return -1;
	Kernel *k = &pl->p->kernels[kg];
	const Tensor *h = &g->tensors[op->arg[ARG_IN]], *out = &g->tensors[op->arg[ARG_OUT]];
	k->gemm.glu = op->id;
	/* the tile stays n256s3: a fourth stage (which the 16 KB act tile leaves room for) measured 1% slower on
	 * the H100 (up-projection 8192 x 28672 x 4096: 1370.9 us with 3 stages, 1383.7 with 4; plain n256s3
	 * 1294.5 and the GLU kernel after it 213-220 us; bench/RESULTS.md, tenth session) */
	fuse_epilogue(pl, k, op, h, out, "1");
	k->note = arena_printf(pl->a, "%s fused: act = %s(%s) as FP8 from the accumulators%s%s", op_name(op->kind),
		glu_name(op->p.act), h->name, out->columnwise ? " (rowwise and columnwise)" : "",
		k->gemm.keep_d ? arena_printf(pl->a, ", %s also written", h->name) : arena_printf(pl->a, " (%s not written)", h->name));
	return kg;
}

/* Why dglu op `op` cannot be the epilogue of the GEMM (kernel *kg) that writes its d_act (NULL: it can; *kg = -1
 * and NULL when no GEMM kernel writes it). The epilogue (gemm_fp8.cu TG_EPI 2, a promoting 128 x 128 tile) writes
 * d_h's per-tensor FP8 copies with a delayed scale, from 2-byte h and d_act, without a fused dbias. */
static const char *dglu_epilogue_why_not(Planner *pl, const Op *op, int *kg)
{
	const Graph *g = pl->g;
	const Tensor *h = &g->tensors[op->arg[ARG_IN]], *da = &g->tensors[op->arg[ARG_GRAD]], *out = &g->tensors[op->arg[ARG_OUT]];
	*kg = gemm_kernel_writing(pl, da);
	if (*kg < 0)
		return NULL;
	const Kernel *k = &pl->p->kernels[*kg];
	if (glu_halves(op->p.act) != 2)
		return "a gated activation only (the epilogue writes d_a and d_b)";
	const char *why = gemm_generated_why_not(&k->gemm, true);
	if (why)
		return arena_printf(pl->a, "the GEMM: %s", why);
	if (k->gemm.glu >= 0 || k->gemm.dglu >= 0 || k->phase != g->ops[op->id].phase)
		return "the GEMM has an epilogue already";
	if (!is_quantized(out) || out->recipe.scaling != SCALING_DELAYED || out->dtype == DT_E2M1)
		return "an FP8 delayed-scaling d_h only";
	if (op->arg[ARG_DBIAS_OUT] >= 0)
		return "no fused dbias";
	if (dtype_bits(h->dtype) != 16 || dtype_bits(da->dtype) != 16)
		return "2-byte h and d_act only";
	if (layout_cols(da) % 8)
		return "d_act's width a multiple of 8";
	if (pl->hp_values)
		return "hp_values: the op writes its FP32 value";
	return NULL;
}

/* dglu op `op` as the epilogue of the GEMM before it (gemm_fp8.cu TG_EPI 2), where dglu_epilogue_why_not allows:
 * the GEMM becomes the generated promoting kernel (n128s4p: 128 x 128 tiles, 4 stages, 177 KB of shared memory
 * with the staging and the two columnwise tiles; 512 threads, a warpgroup of them the epilogue's), also on a
 * split accumulator, which alone runs on cuBLASLt (gemm_generated_why_not). Its own kernel is still planned and
 * runs where the GEMM falls back to cuBLASLt; returns the GEMM kernel's index, or -1 with *why (NULL when no GEMM
 * writes d_act). */
static int plan_dglu_epilogue(Planner *pl, const Op *op, const char **why)
{
	const Graph *g = pl->g;
	int kg;
	if ((*why = dglu_epilogue_why_not(pl, op, &kg)) || kg < 0)
		return -1;
	Kernel *k = &pl->p->kernels[kg];
	const Tensor *h = &g->tensors[op->arg[ARG_IN]], *da = &g->tensors[op->arg[ARG_GRAD]], *out = &g->tensors[op->arg[ARG_OUT]];
	k->nslots = 0; /* a fast-accumulation dgrad may have been planned generated (n256s3) already */
	gemm_generated_tile(pl, k, &k->gemm, 128, 4, true);
	k->threads = 512;
	k->choice = "sm_90a: generated wgmma kernel with the dglu epilogue; cuBLASLt and the dglu kernel elsewhere";
	k->gemm.dglu = op->id;
	fuse_epilogue(pl, k, op, da, out, "2");
	slot_set(k, "TG_H_F16", h->dtype == DT_F16 ? "1" : "0");
	slot_set(k, "TG_DH_ROW", out->rowwise ? "1" : "0");
	bind(pl, k, TG_PB_IN, h->id, COMP_DATA);
	k->note = arena_printf(pl->a, "%s fused: %s = d%s(%s, %s) as FP8 from the promoted accumulators%s%s", op_name(op->kind),
		out->name, glu_name(op->p.act), h->name, da->name, out->rowwise && out->columnwise ? " (rowwise and columnwise)"
		: out->columnwise ? " (columnwise)" : "", k->gemm.keep_d ? arena_printf(pl->a, ", %s also written", da->name)
		: arena_printf(pl->a, " (%s not written)", da->name));
	return kg;
}

/* A gemm op: first the kernels its call reads (a native block-scaled GEMM: both
 * operands' scales swizzled, NVFP4's alpha; an emulated one: both operands
 * dequantized to BF16; a bias in another dtype: its conversion), then the GEMM. */
static void plan_gemm(Planner *pl, const Op *op)
{
	const Graph *g = pl->g;
	const Tensor *a = &g->tensors[op->arg[ARG_A]], *b = &g->tensors[op->arg[ARG_B]];
	GemmCall call = gemm_call(pl, op), *c = &call;
	const char *note = NULL;
	bool nv = c->scaling == SCALING_NVFP4, mx = c->scaling == SCALING_MXFP8 || nv;
	const char *fmt = nv ? "NVFP4" : "MXFP8";
	/* the transposed NVFP4 copy of an activation has scale columns that grow with tokens,
	 * which the swizzle kernel's fixed n[1] cannot express: that GEMM stays emulated
	 * (MXFP8's columnwise scales are stored [rows/32][cols], which it reads at any rows) */
	bool dyn_t = nv && ((c->a_comp == COMP_DATA_T && a->shape[0].dim >= 0) || (c->b_comp == COMP_DATA_T && b->shape[0].dim >= 0));
	/* cuBLASLt's FP4 operands need a 16-byte row stride (K/2 bytes): K % 32 == 0 */
	bool k_odd = nv && (c->k.dim >= 0 || c->k.add % 32);
	if (mx && !op->emulated && !dyn_t && !k_odd) {
		/* every target has block-scaled MMA: swizzle both operands' scales, then cuBLASLt
		 * (NVFP4: after the kernel that puts alpha = 1/(S_enc_a*S_enc_b) on the device) */
		plan_swizzle(pl, op, a, c->a_comp);
		plan_swizzle(pl, op, b, c->b_comp);
		if (nv)
			plan_nvfp4_alpha(pl, op, c);
		c->fast_accum = false;
		note = !nv ? "native MXFP8 (cuBLASLt VEC32_UE8M0)"
			: c->a_senc == COMP_SCALE && c->b_senc == COMP_SCALE ? "native NVFP4 (cuBLASLt VEC16_UE4M3, alpha = 1/(S_enc_a*S_enc_b) from the device)"
			: arena_printf(pl->a, "native NVFP4 (cuBLASLt VEC16_UE4M3, alpha = 1/(%s.%s*%s.%s): Hadamard-transformed copies, from the device)",
				a->name, c->a_senc == COMP_SCALE_T ? "scale_t" : "scale", b->name, c->b_senc == COMP_SCALE_T ? "scale_t" : "scale");
	} else if (mx) {
		/* no native block-scaled MMA on some target: dequantize both operands to BF16
		 * (exact for MXFP8; NVFP4 rounds e2m1 * S_dec/S_enc once) and run a BF16 GEMM */
		void (*dequantize)(Planner *, const Op *, const Tensor *, Component) = nv ? plan_dequantize_nvfp4 : plan_dequantize;
		dequantize(pl, op, a, c->a_comp);
		dequantize(pl, op, b, c->b_comp);
		c->emulated = true;
		c->a_comp = c->a_comp == COMP_DATA ? COMP_DEQ : COMP_DEQ_T;
		c->b_comp = c->b_comp == COMP_DATA ? COMP_DEQ : COMP_DEQ_T;
		c->scaling = SCALING_NONE;
		c->a_dtype = c->b_dtype = DT_BF16;
		c->fast_accum = false;
		note = op->emulated ? op->emulated
			: dyn_t ? arena_printf(pl->a, "%s GEMM emulated: an activation's transposed NVFP4 scales are not swizzled natively yet", fmt)
			: arena_printf(pl->a, "%s GEMM emulated: cuBLASLt's FP4 GEMM needs a fixed K with K %% 32 == 0 (K = %s)", fmt,
				extent_str(pl->a, g, c->k));
	}
	if (c->bias >= 0 && g->tensors[c->bias].dtype != gemm_bias_dtype(c))
		plan_bias_convert(pl, op, c);
	Kernel *k = kernel_new(pl, "gemm", op->id);
	k->kind = KERNEL_GEMM;
	k->gemm = call;
	k->rows = c->m;
	k->cols = c->n.add;
	k->choice = "cuBLASLt heuristic, cached per shape";
	plan_gemm_generated(pl, k, c);
	k->note = note ? note : c->scaling == SCALING_NONE ? arena_printf(pl->a, "cuBLASLt %s", dtype_name(c->a_dtype)) : NULL;
	if (c->d_comp == COMP_HP)
		plan_d_convert(pl, op, c); /* c is the local call k was copied from */
}

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
static void plan_dreduce(Planner *pl, const Op *op, int src, Component part, int dst, Extent rows, long cols)
{
	Kernel *k = kernel_new(pl, arena_printf(pl->a, "dreduce_%s", pl->g->tensors[dst].name), op->id);
	k->kind = KERNEL_GENERATED;
	k->tmpl = "dreduce.cu";
	slot(pl, k, "TG_KERNEL", emit_entry(pl->a, pl->p, k));
	slot(pl, k, "TG_THREADS", "256");
	slot(pl, k, "TG_ACCUMULATE", op->p.accumulate ? "1" : "0"); /* main_grad: added into dst */
	bind(pl, k, TG_PB_DW, src, part);
	bind(pl, k, TG_PB_OUT, dst, COMP_DATA);
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
static void plan_dnorm(Planner *pl, const Op *op)
{
	const Graph *g = pl->g;
	const Tensor *x = &g->tensors[op->arg[ARG_IN]], *dy = &g->tensors[op->arg[ARG_GRAD]];
	const Tensor *gamma = &g->tensors[op->arg[ARG_GAMMA]], *dx = &g->tensors[op->arg[ARG_OUT]];
	Extent rows = tensor_rows(pl, x, op->loc);
	long cols = tensor_cols(x);
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
	Kernel *k = kernel_new(pl, "dnorm", op->id);
	k->kind = KERNEL_GENERATED;
	k->tmpl = "dnorm.cu";
	slot(pl, k, "TG_KERNEL", emit_entry(pl->a, pl->p, k));
	slot(pl, k, "TG_IN_DTYPE", istr(pl, dtype_code(x->dtype)));
	slot(pl, k, "TG_G_DTYPE", istr(pl, dtype_code(dy->dtype)));
	slot(pl, k, "TG_W_DTYPE", istr(pl, dtype_code(gamma->dtype)));
	slot(pl, k, "TG_OUT_DTYPE", istr(pl, dtype_code(dx->dtype)));
	slot(pl, k, "TG_R_DTYPE", istr(pl, dtype_code(dres->dtype))); /* grad_residual's own dtype (grad's when none) */
	slot(pl, k, "TG_VEC", istr(pl, vec));
	slot(pl, k, "TG_THREADS", istr(pl, threads));
	slot(pl, k, "TG_COLS", istr(pl, cols));
	slot(pl, k, "TG_NORM", op->p.norm == NORM_LAYER ? "1" : "0");
	slot(pl, k, "TG_ZERO_CENTERED", op->p.zero_centered_gamma ? "1" : "0");
	slot(pl, k, "TG_HAS_DRES", op->arg[ARG_GRAD_RESIDUAL] >= 0 ? "1" : "0");
	slot(pl, k, "TG_PASSES", istr(pl, passes));
	bind(pl, k, TG_PB_IN, x->id, COMP_DATA);
	bind(pl, k, TG_PB_GAMMA, gamma->id, COMP_DATA);
	bind(pl, k, TG_PB_GRAD, dy->id, COMP_DATA);
	bind(pl, k, TG_PB_DRES, op->arg[ARG_GRAD_RESIDUAL], COMP_DATA);
	bind(pl, k, TG_PB_RSIGMA, op->arg[ARG_RSIGMA], COMP_DATA);
	bind(pl, k, TG_PB_MU, op->arg[ARG_MU], COMP_DATA);
	bind(pl, k, TG_PB_OUT, dx->id, COMP_DATA);
	if (op->arg[ARG_D_GAMMA] >= 0)
		bind(pl, k, TG_PB_DW, dx->id, COMP_PART);
	if (op->arg[ARG_D_BETA] >= 0)
		bind(pl, k, TG_PB_DB, dx->id, COMP_PART_B);
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
static void plan_dbias(Planner *pl, const Op *op)
{
	const Graph *g = pl->g;
	const Tensor *in = &g->tensors[op->arg[ARG_IN]];
	Extent rows = tensor_rows(pl, in, op->loc);
	long cols = tensor_cols(in);
	for (int j = 0; j < op->id; j++)
		if (fused_dbias_op(g, &g->ops[j]) == op->id) { /* stage 1 in that cast's kernel */
			plan_dreduce(pl, op, in->id, COMP_PART, op->arg[ARG_OUT], rows, cols);
			return;
		}
	int sz[] = {4, dtype_bytes(in->dtype)}; /* the FP32 partial vector and the input's: 4..32 bytes */
	int vec = backward_vec(cols, sz, 2, true);
	Kernel *k = kernel_new(pl, "dbias", op->id);
	k->kind = KERNEL_GENERATED;
	k->tmpl = "dbias.cu";
	slot(pl, k, "TG_KERNEL", emit_entry(pl->a, pl->p, k));
	slot(pl, k, "TG_IN_DTYPE", istr(pl, dtype_code(in->dtype)));
	slot(pl, k, "TG_VEC", istr(pl, vec));
	slot(pl, k, "TG_THREADS", "256");
	slot(pl, k, "TG_COLS", istr(pl, cols));
	bind(pl, k, TG_PB_IN, in->id, COMP_DATA);
	bind(pl, k, TG_PB_DW, in->id, COMP_PART);
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
	slot(pl, k, "TG_KERNEL", emit_entry(pl->a, pl->p, k));
	slot(pl, k, "TG_MODE", istr(pl, mode));
	slot(pl, k, "TG_BETA1", flit(pl, o->beta1));
	slot(pl, k, "TG_BETA2", flit(pl, o->beta2));
	slot(pl, k, "TG_EPS", flit(pl, o->eps));
	slot(pl, k, "TG_WD", flit(pl, o->weight_decay));
}

/* The update's own buffers: weight w, its gradient, the FP32 master and moments (tg_optim.h slots). */
static void adamw_binds(Planner *pl, Kernel *k, const Op *op, const Tensor *w)
{
	bind(pl, k, TG_PA_W, w->id, COMP_DATA);
	bind(pl, k, TG_PA_GRAD, op->arg[ARG_GRAD], COMP_DATA);
	slot(pl, k, "TG_G_DTYPE", istr(pl, dtype_code(pl->g->tensors[op->arg[ARG_GRAD]].dtype))); /* FP32, BF16 or FP16 */
	bind(pl, k, TG_PA_MASTER, w->id, COMP_MASTER);
	bind(pl, k, TG_PA_M, w->id, COMP_MOM1);
	bind(pl, k, TG_PA_V, w->id, COMP_MOM2);
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
	bool delayed = is_quantized(q) && q->recipe.scaling == SCALING_DELAYED && q->state_slot >= 0;
	bool block = is_quantized(q) && (q->recipe.scaling == SCALING_BLOCK128X128 ||
		q->recipe.scaling == SCALING_BLOCK1X128 || q->recipe.scaling == SCALING_MXFP8);
	if (!(delayed || block) || tensor_cols(w) % 4 || (q->dtype != DT_E4M3 && q->dtype != DT_E5M2) ||
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
	Kernel *k = kernel_new(pl, arena_printf(pl->a, "adamw_cast_%s", w->name), op->id);
	k->kind = KERNEL_GENERATED;
	k->tmpl = block ? "adamw_cast_block.cu" : "adamw_cast.cu";
	adamw_slots(pl, k, 0);
	slot(pl, k, "TG_W_DTYPE", istr(pl, dtype_code(w->dtype)));
	slot(pl, k, "TG_FMT", q->dtype == DT_E5M2 ? "1" : "0");
	slot(pl, k, "TG_ROWWISE", q->rowwise ? "1" : "0");
	slot(pl, k, "TG_COLWISE", q->columnwise ? "1" : "0");
	slot(pl, k, "TG_THREADS", "256");
	adamw_binds(pl, k, op, w);
	if (q->rowwise)
		bind(pl, k, TG_P_OUT, q->id, COMP_DATA);
	if (q->columnwise)
		bind(pl, k, TG_P_OUT_T, q->id, COMP_DATA_T);
	if (block) {
		slot(pl, k, "TG_RECIPE", istr(pl, scaling_info(q->recipe.scaling)->code));
		slot(pl, k, "TG_EPS_SCALE", flit(pl, q->recipe.eps));
		slot(pl, k, "TG_POW2", q->recipe.pow2 ? "1" : "0");
		if (q->rowwise)
			bind(pl, k, TG_P_SCALE_INV, q->id, COMP_SCALE_INV);
		if (q->columnwise)
			bind(pl, k, TG_P_SCALE_INV_T, q->id, COMP_SCALE_INV_T);
	} else {
		bind(pl, k, TG_P_SCALE, q->id, COMP_SCALE);
		bind(pl, k, TG_P_SCALE_INV, q->id, COMP_SCALE_INV);
		bind(pl, k, TG_P_AMAX, q->id, COMP_AMAX);
	}
	k->bind[k->nbind++] = (Binding){11 /* TG_PAC_STATE, TG_PAB_STATE */, -1, COMP_OPTIM};
	k->rows = tensor_rows(pl, w, op->loc);
	k->cols = tensor_cols(w);
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
		slot(pl, k, "TG_DEQ", "0");
	for (int i = 0; i < pl->p->nkernels; i++) {
		Kernel *c = &pl->p->kernels[i];
		if (!c->nops || c->ops[0] != cast->id || c->phase != PHASE_FORWARD)
			continue;
		c->cast_in_update = true;
		/* after a step the update writes the copies in place of the cast: the BF16 operand the cast writes too
		 * (TG_DEQ, mx_writer_of) */
		if (slot_long(c, "TG_DEQ", 0) & 1)
			deq_in_writer(pl, k, q, COMP_DATA, TG_P_MX_DEQ);
	}
}

/* adamw: one element-wise pass over the weight (flat, grid-stride): master, m, v and the
 * weight itself updated in place; fused with the weight's cast where fusable_weight_cast says. */
static void plan_adamw(Planner *pl, const Op *op)
{
	const Tensor *w = &pl->g->tensors[op->arg[ARG_IN]];
	const Op *cast = fusable_weight_cast(pl, w);
	if (cast) {
		plan_adamw_cast(pl, op, cast);
		return;
	}
	long cols = tensor_cols(w);
	int vec = cols % 4 == 0 ? 4 : cols % 2 == 0 ? 2 : 1;
	/* vec == 1 only for an fp32 weight and gradient (ir.c's infer_adamw rejects the rest) */
	Kernel *k = kernel_new(pl, arena_printf(pl->a, "adamw_%s", w->name), op->id);
	k->kind = KERNEL_GENERATED;
	k->tmpl = "adamw.cu";
	adamw_slots(pl, k, 0);
	slot(pl, k, "TG_W_DTYPE", istr(pl, dtype_code(w->dtype)));
	slot(pl, k, "TG_VEC", istr(pl, vec));
	slot(pl, k, "TG_THREADS", "256");
	adamw_binds(pl, k, op, w);
	/* a weight cast with current scaling or NVFP4 (a global amax first): its amax comes from the
	 * update (the cast's amax pass, kept for tg_run while stale, skipped by the optimizer step) */
	cast = weight_cast(pl, w);
	const Tensor *q = cast ? &pl->g->tensors[cast->arg[ARG_OUT]] : NULL;
	bool amax = q && is_quantized(q) && q->state_slot >= 0 && (q->recipe.scaling == SCALING_CURRENT ||
		(q->recipe.scaling == SCALING_NVFP4 && !q->recipe.nvfp4_rht));
	slot(pl, k, "TG_AMAX", amax ? "1" : "0");
	if (amax) {
		bind(pl, k, TG_P_AMAX, q->id, COMP_AMAX);
		for (int i = 0; i < pl->p->nkernels; i++) {
			Kernel *c = &pl->p->kernels[i];
			if (c->nops && c->ops[0] == cast->id && c->phase == PHASE_FORWARD && c->pass == PASS_AMAX)
				c->cast_in_update = true;
		}
	}
	k->bind[k->nbind++] = (Binding){TG_PA_STATE, -1, COMP_OPTIM};
	k->rows = tensor_rows(pl, w, op->loc);
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
static void plan_optim_step(Planner *pl)
{
	Kernel *k = kernel_new(pl, "optim_step", -1);
	k->kind = KERNEL_GENERATED;
	k->tmpl = "adamw.cu";
	adamw_slots(pl, k, 1);
	slot(pl, k, "TG_W_DTYPE", "0");
	slot(pl, k, "TG_G_DTYPE", "0");
	slot(pl, k, "TG_VEC", "1");
	slot(pl, k, "TG_THREADS", "32");
	slot(pl, k, "TG_AMAX", "0");
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

Plan *plan_build(Arena *a, Diag *d, const Graph *g) { return plan_build_opts(a, d, g, NULL); }

/* The last guard between plan and NVRTC: every tunable kernel's variant meets its
 * template's static_asserts. gen/ir.c rejects the shapes no variant handles
 * (check_kernel_shape), so this fires only if the two disagree. */
static void check_variants(Planner *pl)
{
	for (int i = 0; i < pl->p->nkernels; i++) {
		const Kernel *k = &pl->p->kernels[i];
		Family f = kernel_family(k);
		if (f == FAM_NONE || !k->variant || !k->nops)
			continue;
		const PlanVariant *tab = f == FAM_TILE ? tile_variants : row_tile_path(k) ? colwise_variants : row_variants;
		int n = f == FAM_TILE ? NELEMS(tile_variants) : row_tile_path(k) ? NELEMS(colwise_variants) : NELEMS(row_variants);
		const PlanVariant *v = NULL;
		for (int j = 0; j < n && !v; j++)
			if (!strcmp(tab[j].name, k->variant))
				v = &tab[j];
		if (!v || !variant_legal(k, v, false))
			diag_error(pl->d, pl->g->ops[k->ops[0]].loc, "%s: no %s variant handles this kernel (%s, row length %ld); "
				"tegen check should have rejected the shape: please report it", k->name, k->tmpl, k->variant, k->cols);
	}
}

/* A BF16 operand copy (deq, deq_t) written by the kernel that writes its quantized copy (TG_DEQ: NVFP4's strip
 * casts, MXFP8's mx_writer_of) is only as fresh as that kernel's last run: every other kernel that rewrites the quantized copy (a
 * weight's cast fused into its AdamW update, say, which replaces the forward cast after a step) must write the
 * BF16 copy too, or an emulated GEMM reads values of before. An internal error otherwise. (A dequantize kernel
 * reads the quantized copy right before its GEMM: nothing to check.) */
static void check_copy_writers(Planner *pl)
{
	const Plan *p = pl->p;
	for (int i = 0; i < p->nkernels; i++) {
		const Kernel *k = &p->kernels[i];
		for (int b = 0; b < k->nbind; b++) {
			const Binding *bd = &k->bind[b];
			if (k->kind == KERNEL_GEMM || (bd->comp != COMP_DEQ && bd->comp != COMP_DEQ_T))
				continue;
			Component q = bd->comp == COMP_DEQ ? COMP_DATA : COMP_DATA_T;
			int out = q == COMP_DATA ? TG_P_OUT : TG_P_OUT_T;
			if (!binds(k, bd->tensor, q, out))
				continue; /* a dequantize kernel */
			for (int j = 0; j < p->nkernels; j++) {
				const Kernel *w = &p->kernels[j];
				if (j != i && w->kind != KERNEL_GEMM && binds(w, bd->tensor, q, out) && !binds(w, bd->tensor, bd->comp, -1))
					diag_error(pl->d, (Loc){0}, "internal: %s rewrites %s.%s but not its BF16 copy %s.%s, which only %s "
						"writes", w->name, pl->g->tensors[bd->tensor].name, comp_name(q), pl->g->tensors[bd->tensor].name,
						comp_name(bd->comp), k->name);
			}
		}
	}
}

Plan *plan_build_opts(Arena *a, Diag *d, const Graph *g, const PlanOptions *o)
{
	Plan *p = arena_alloc(a, sizeof *p);
	Planner pl = {a, d, g, p, 0, o ? o->tokens : 0, o && o->hp_values};
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
		else if (op->kind == OP_DNORM)
			plan_dnorm(&pl, op);
		else if (op->kind == OP_DBIAS)
			plan_dbias(&pl, op);
		else if (op->kind == OP_ADAMW)
			plan_adamw(&pl, op);
		else {
			const char *why = NULL;
			int kg = op->kind == OP_GLU_AMAX ? plan_glu_epilogue(&pl, op, &why)
				: op->kind == OP_DGLU ? plan_dglu_epilogue(&pl, op, &why) : -1;
			int first = p->nkernels;
			plan_quantizing_op(&pl, op);
			for (int k = first; k < p->nkernels && (kg >= 0 || why); k++) {
				Kernel *kk = &p->kernels[k];
				kk->epilogue_of = kg;
				kk->note = kg >= 0 ? arena_printf(a, "runs only where %s runs on cuBLASLt (else its epilogue)", p->kernels[kg].name)
					: arena_printf(a, "%s%snot the generated GEMM's epilogue: %s", kk->note ? kk->note : "", kk->note ? "; " : "", why);
			}
		}
	}
	if (g->optim.kind != OPTIM_NONE)
		plan_optim_step(&pl);
	for (int i = 0; i < p->nkernels; i++) { /* forward kernels that the optimizer step runs after its updates */
		Kernel *k = &p->kernels[i];
		if (k->nops && op_casts_trained_weight(g, &g->ops[k->ops[0]]))
			k->note = arena_printf(a, "trained weight: %s (tg_run only while stale)%s%s", !k->cast_in_update ?
				"run by tg_optimizer_step after the update" : k->pass == PASS_AMAX ? "its amax comes from the update in "
				"tg_optimizer_step" : "cast by its fused update in tg_optimizer_step", k->note ? "; " : "", k->note ? k->note : "");
	}
	for (int i = 1; i < p->nkernels; i++) /* ir orders the ops by phase; each kernel is one op's */
		if (p->kernels[i].phase < p->kernels[i - 1].phase)
			diag_error(d, g->ops[p->kernels[i].ops[0]].loc, "%s (%s) is planned after a %s kernel; please report it",
				p->kernels[i].name, phase_name(p->kernels[i].phase), phase_name(p->kernels[i - 1].phase));
	if (p->ndelayed)
		plan_recipe_update(&pl);
	check_copy_writers(&pl);
	apply_tuning(&pl, o);
	check_variants(&pl);
	return p;
}

bool plan_has_phase(const Plan *p, Phase ph)
{
	for (int i = 0; i < p->nkernels; i++)
		if (i != p->update_kernel && p->kernels[i].phase == ph)
			return true;
	return false;
}

void plan_print(const Plan *p, Buf *out)
{
	const Graph *g = p->g;
	Arena *a = arena_new();
	buf_printf(out, "plan %s: %d kernels", g->layer, p->nkernels);
	if (p->ndelayed)
		buf_printf(out, ", %d delayed-scaling tensors", p->ndelayed);
	buf_puts(out, "\n");
	bool phases = false; /* a forward-only plan prints as it always did */
	for (int ph = PHASE_BACKWARD; ph < PHASE_COUNT; ph++)
		phases |= plan_has_phase(p, (Phase)ph);
	for (int i = 0; i < p->nkernels; i++) {
		const Kernel *k = &p->kernels[i];
		if (phases && i == p->update_kernel)
			buf_puts(out, "# step (tg_step)\n");
		else if (phases && (i == 0 || k->phase != p->kernels[i - 1].phase))
			buf_printf(out, "# %s (%s)\n", phase_name(k->phase),
				k->phase == PHASE_FORWARD ? "tg_run" : k->phase == PHASE_BACKWARD ? "tg_backward" : "tg_optimizer_step");
		buf_printf(out, "%s", k->name);
		if (k->nops) {
			buf_puts(out, " ops=");
			for (int j = 0; j < k->nops; j++)
				buf_printf(out, "%sop%d", j ? "," : "", k->ops[j]);
		}
		if (k->kind == KERNEL_GEMM) {
			const GemmCall *c = &k->gemm;
			if (k->tmpl)
				buf_printf(out, " wgmma=%s (sm_90a%s; cuBLASLt elsewhere)", k->variant,
					k->gemm.glu >= 0 || k->gemm.dglu >= 0 ? "" : " where it pays: N >= 16384, 4 waves of tiles");
			else
				buf_printf(out, " cublaslt (not generated: %s)", k->gen_why_not);
			buf_printf(out, " m=%s n=%s k=%s a=%s.%s%s b=%s.%s%s d=%s %s->%s%s%s%s%s", extent_str(a, g, c->m),
				extent_str(a, g, c->n), extent_str(a, g, c->k), g->tensors[c->a].name, comp_name(c->a_comp),
				c->a_trans ? "^T" : "", g->tensors[c->b].name, comp_name(c->b_comp), c->b_trans ? "^T" : "",
				c->d_comp == COMP_HP ? arena_printf(a, "%s.hp", g->tensors[c->d].name) : g->tensors[c->d].name,
				c->scaling == SCALING_NONE ? dtype_name(c->a_dtype) : scaling_name(c->scaling), dtype_name(c->d_dtype),
				c->fast_accum ? " fast_accum" : "", c->accumulate && c->add < 0 ? " accumulate" : "",
				c->bias >= 0 ? arena_printf(a, " bias=%s", g->tensors[c->bias].name) : "",
				c->add >= 0 ? arena_printf(a, " add=%s", g->tensors[c->add].name) : "");
		} else {
			buf_printf(out, " template=%s variant=%s (%s) block=%d grid=", k->tmpl, k->variant, k->choice, k->threads);
			if (k->grid_rows)
				buf_printf(out, "ceil(%s/%d)%s", extent_operand(a, g, k->rows), k->grid_rows, k->grid_cols ? "*" : "");
			if (k->grid_cols)
				buf_printf(out, "ceil(%ld/%ld)", k->cols, k->grid_cols);
			if (k->rows_chunk)
				buf_printf(out, " n0=ceil(%s/%d)", extent_operand(a, g, k->rows), k->rows_chunk);
			if (k->pdl)
				buf_puts(out, " launch=pdl");
			if (k->smem_dynamic)
				buf_printf(out, " smem=%d", k->smem_dynamic);
			if (k->persistent)
				buf_puts(out, " persistent");
			if (k->grid_cap == GRID_UNCAPPED)
				buf_puts(out, " cap=none");
			else if (k->grid_cap)
				buf_printf(out, " cap=%d/SM", k->grid_cap);
			buf_puts(out, " bind=");
			for (int j = 0; j < k->nbind; j++) {
				const Binding *b = &k->bind[j];
				buf_printf(out, "%sp%d:%s%s%s", j ? "," : "", b->slot, b->tensor >= 0 ? g->tensors[b->tensor].name : "",
					b->tensor >= 0 ? "." : "", comp_name(b->comp));
			}
		}
		if (k->note)
			buf_printf(out, "  # %s", k->note);
		buf_puts(out, "\n");
	}
	arena_free(a);
}
