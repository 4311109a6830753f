/* plan_launch.c: the tile shape of every generated kernel. Each template family has an explicit variant table;
 * variant_legal() holds each template's compile-time constraints; the heuristics (pl_row_launch, pl_tile_launch) pick
 * a variant from measurements (bench/RESULTS.md), and pl_apply_tuning swaps in the tuning DB's fastest (tune.c). */
#include "plan_launch.h"

#include <string.h>

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
	return (pl_slot_long(k, "TG_COLWISE", 0) || pl_slot_long(k, "TG_DBIAS", 0)) &&
		pl_slot_long(k, "TG_RECIPE", 0) != TG_RECIPE_CURRENT_AMAX;
}

/* dglu.cu's staged path takes kernel k (the template's DG_STAGE, the variant aside): a per-tensor or MXFP8
 * columnwise copy without dbias from 2-byte h and d_act, TG_COLS % 8 == 0 (MXFP8 holds it to % 32). */
static bool staged_kernel(const Kernel *k)
{
	long rec = pl_slot_long(k, "TG_RECIPE", 0);
	return !strcmp(k->tmpl, "dglu.cu") && pl_slot_long(k, "TG_COLWISE", 0) && !pl_slot_long(k, "TG_DBIAS", 0) &&
		(rec == TG_RECIPE_DELAYED || rec == TG_RECIPE_CURRENT_CAST || rec == TG_RECIPE_MXFP8) &&
		pl_slot_long(k, "TG_IN_DTYPE", 0) != TG_DTYPE_F32 && pl_slot_long(k, "TG_G_DTYPE", 0) != TG_DTYPE_F32 &&
		pl_slot_long(k, "TG_COLS", 0) % 8 == 0;
}

/* glu_amax.cu or dglu.cu with a columnwise 1x128 copy, or an MXFP8 one (dglu: C % 128 == 0 and no dbias, else
 * its staged or tile path): their block tile path (128 x 128 tiles). dglu's MXFP8 copies from 2-byte inputs took
 * the staged path (570 us against the block tile's 617, seventeenth session) until the block tile path staged its
 * loads by cp.async and ran persistent: H100, 8B MXFP8 training layer, 8192 tokens, us alone / in the layer,
 * staged 745 / 725-728 against block tile 675-676 / 676-678 (thirty-second session). */
bool pl_block_tile(const Kernel *k)
{
	bool glu = !strcmp(k->tmpl, "glu_amax.cu"), dglu = !strcmp(k->tmpl, "dglu.cu");
	long rec = pl_slot_long(k, "TG_RECIPE", 0);
	if (!(glu || dglu) || !pl_slot_long(k, "TG_COLWISE", 0))
		return false;
	return rec == TG_RECIPE_BLOCK1X128 || (rec == TG_RECIPE_MXFP8 &&
		(glu || dglu_block_tile_fits(pl_slot_long(k, "TG_COLS", 0), pl_slot_long(k, "TG_DBIAS", 0) != 0)));
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
int pl_dglu_stage_bytes(const Planner *pl, const Kernel *k, GluKind act)
{
	if (strcmp(k->tmpl, "dglu.cu") || !pl_block_tile(k) || pl_slot_long(k, "TG_IN_DTYPE", 0) == TG_DTYPE_F32 ||
		pl_slot_long(k, "TG_G_DTYPE", 0) == TG_DTYPE_F32)
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
int pl_nc_stage_bytes(const Planner *pl, const Kernel *k)
{
	if (pl_slot_long(k, "TG_IN_DTYPE", 0) == TG_DTYPE_F32 || pl_slot_long(k, "TG_RECIPE", 0) != TG_RECIPE_BLOCK1X128)
		return 0;
	long dyn = 128 * 128 * 2 * (pl_slot_long(k, "TG_HAS_RESIDUAL", 0) ? 2 : 1);
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
	return !strcmp(k->tmpl, "dglu.cu") && staged_variant(k, v) && TG_ACT_GATED(pl_slot_long(k, "TG_ACT", 0));
}

/* grid_cols of a row-family kernel: 0 (a CTA per row block), except the block tile paths
 * (128-column tiles: of the output, or of dglu's gate half), a gated dglu's staged path (its 32 x 64 tiles,
 * one a CTA) and the tile paths of dglu.cu and glu_amax.cu, whose work items are slices of 16 steps (of the
 * gate half: DG_SW, GL_SW in the templates; rows of 32 or 64 there, so a step is threads / rows vectors). */
static int row_grid_cols(const Kernel *k, const PlanVariant *v)
{
	if (pl_block_tile(k))
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
	long recipe = pl_slot_long(k, "TG_RECIPE", 0), cols = pl_slot_long(k, "TG_COLS", 0);
	long idt = pl_slot_long(k, "TG_IN_DTYPE", 1);
	long isz = idt == TG_DTYPE_F32 ? 4 : idt == TG_DTYPE_BYTES ? 1 : 2;
	long osz = recipe == TG_RECIPE_NONE && idt != TG_DTYPE_BYTES ? (pl_slot_long(k, "TG_OUT_DTYPE", 1) == TG_DTYPE_F32 ? 4 : 2) : 1;
	long t = v->threads;
	if (t <= 0 || t % 32 || t > 1024 || cols <= 0)
		return false;
	switch (kernel_family(k)) {
	case FAM_ROW: {
		bool dglu = !strcmp(k->tmpl, "dglu.cu"), glu = dglu || !strcmp(k->tmpl, "glu_amax.cu");
		long vec = v->vec, r = v->rows_per_cta;
		if (v->tile_rows || v->tile_cols || r <= 0 || t % r || !pl_pow2(vec) || vec < 2 || cols % vec)
			return false;
		if (vec * isz < 4 || vec * isz > 32 || vec * osz < 2 || vec * osz > 32)
			return false;
		long gsz = pl_slot_long(k, "TG_G_DTYPE", 1) == 0 ? 4 : 2; /* dglu: d_act's vectors */
		if (dglu && (vec * gsz < 4 || vec * gsz > 32))
			return false;
		if (dglu && row_tile_path(k) && !pl_block_tile(k) && !staged_variant(k, v) && cols % (t / r * vec))
			return false; /* dglu.cu's tile path: the step width divides the half (the staged path masks) */
		if (!glu) {
			long wsz = pl_slot_long(k, "TG_W_DTYPE", 1) == 0 ? 4 : 2, bsz = pl_slot_long(k, "TG_B_DTYPE", 1) == 0 ? 4 : 2;
			if (vec * wsz < 4 || vec * wsz > 32 || vec * bsz < 4 || vec * bsz > 32)
				return false;
		}
		long group = recipe == TG_RECIPE_BLOCK1X128 ? 128 / vec : recipe == TG_RECIPE_MXFP8 ? 32 / vec
			: recipe == TG_RECIPE_NVFP4 ? 16 / vec : 1;
		if (group < 1 || group > 32)
			return false;
		if (pl_block_tile(k)) /* the block tile paths: 128-row tiles, 16 lanes a row block */
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
		if ((glu_amax ? tpr % 32 && 32 % tpr : !pl_pow2(tpr)) || tpr % group)
			return false;
		if (sane) {
			long nj = (cols / vec + tpr - 1) / tpr; /* vectors each thread holds */
			if (nj * vec * isz * (glu && TG_ACT_GATED(pl_slot_long(k, "TG_ACT", 0)) ? 2 : 1) > 224 || r > 32)
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
		bool col = pl_slot_long(k, "TG_COLWISE", 0) && recipe != TG_RECIPE_CURRENT_AMAX;
		bool colam = col && (recipe == TG_RECIPE_BLOCK1X128 || recipe == TG_RECIPE_MXFP8);
		long cbr = recipe == TG_RECIPE_MXFP8 ? 32 : 128;
		if (col && tr % 32)
			return false;
		if (colam && recipe == TG_RECIPE_BLOCK1X128 && tr % 128)
			return false;
		if (colam && cbr % nk)
			return false;
		if (recipe == TG_RECIPE_BLOCK1X128 && pl_slot_long(k, "TG_ROWWISE", 0) && 16 % nk)
			return false; /* a 16-lane group's lane k computes row k's 1x128 scale */
		if (recipe == TG_RECIPE_BLOCK128X128 && (tr != 128 || tc != 128))
			return false;
		if (idt == TG_DTYPE_BYTES) { /* the byte transpose runs on the staged path only (StageTiling) */
			if (tr % 32 || (tr * tc / 16) % t || (tc / 4 * 2 * (tr / 32)) % t || 2 * tr * tc > 48 * 1024)
				return false;
		}
		if (pl_slot_long(k, "TG_DBIAS", 0)) { /* so does a fused dbias (2-byte elements: StageTiling) */
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
		if (pl_slot_long(k, "TG_CT_STAGE", 0)) {
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
	bool ok = pl_slot_set(k, "TG_THREADS", arena_printf(a, "%d", v->threads));
	if (f == FAM_ROW) {
		ok = ok && pl_slot_set(k, "TG_VEC", arena_printf(a, "%d", v->vec));
		ok = ok && pl_slot_set(k, "TG_ROWS_PER_CTA", arena_printf(a, "%d", v->rows_per_cta));
	} else {
		ok = ok && pl_slot_set(k, "TG_TILE_ROWS", arena_printf(a, "%d", v->tile_rows));
		ok = ok && pl_slot_set(k, "TG_TILE_COLS", arena_printf(a, "%d", v->tile_cols));
	}
	launch_shape(k, v, f);
	k->variant = arena_strdup(a, v->name);
	return ok;
}

/* The launch slots a variant sets (added here with the heuristic's values). */
static void launch_slots(Planner *pl, Kernel *k, const PlanVariant *v, Family f)
{
	pl_slot(pl, k, "TG_THREADS", pl_istr(pl, v->threads));
	if (f == FAM_ROW) {
		pl_slot(pl, k, "TG_VEC", pl_istr(pl, v->vec));
		pl_slot(pl, k, "TG_ROWS_PER_CTA", pl_istr(pl, v->rows_per_cta));
	} else {
		pl_slot(pl, k, "TG_TILE_ROWS", pl_istr(pl, v->tile_rows));
		pl_slot(pl, k, "TG_TILE_COLS", pl_istr(pl, v->tile_cols));
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
void pl_heuristic_launch(Planner *pl, Kernel *k, const PlanVariant *v, Family f, Extent rows, long cols)
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
	long cols = pl_slot_long(k, "TG_COLS", 0), least = -1;
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

void pl_row_launch(Planner *pl, Kernel *k, const Tensor *out, Extent rows, long cols)
{
	const PlanVariant *v;
	if (((pl_is_quantized(out) && out->columnwise) || pl_slot_long(k, "TG_DBIAS", 0)) && k->pass != PASS_AMAX) {
		long rec = pl_slot_long(k, "TG_RECIPE", 0);
		bool pertensor = rec == TG_RECIPE_DELAYED || rec == TG_RECIPE_CURRENT_CAST;
		/* dglu: t256v8r32 (t1024, t512v8 spill on sm_100a); per-tensor glu_amax: t512v8r32 (269 us vs
		 * t1024's 275 at 8192 x 14336, H100); a GLU's 1x128 copies: t512v8r128 (the block tile path, two
		 * CTAs a SM: 545 us at 8192 x 2x28672 against t256's 648 and t1024's 696, H100); dglu's: t1024v8r128
		 * (no prefetch: 1140 us against t512's 1212 and t256's 1759, H200; `tegen tune`, fifteenth
		 * session; staged by cp.async since the twenty-ninth, 974-986 us on an H100), but an MXFP8 dglu's:
		 * t512v8r128 (one CTA a SM at 128 registers; H100, `tegen tune` of bench/dglu_block.yaml, forty-first
		 * session, us at 8192 tokens, t512 / t1024 / t256: MXFP8 8B 448.5 / 483.7 / 528.6, 70B 881.5 / 932.6 /
		 * 1008.5, in the 8B MXFP8 layer 622.2 / 667.1 / 640.3; 1x128 8B 441.3 / 434.3 / 439.2, 70B 869.6 / 855.1 /
		 * 890.5; staged tiles only: with FP32 inputs t512 spills); since the forty-third session every staged dglu's
		 * (1x128 too): on the H200 (`tegen tune`, 8192 tokens) the 1x128 one ran t512 / t1024 / t256 371.5 / 404.1 /
		 * 416.7 at 8B and 732.8 / 803.5 / 814.0 at 70B (1.09-1.10x), against t1024's 1.6% lead on the H100 above; the rest
		 * t1024v8r32 */
		bool dglu_unstaged = !strcmp(k->tmpl, "dglu.cu") && !pl_slot_long(k, "TG_DB_STAGE", 0);
		v = pl_block_tile(k) ? find_variant(colwise_variants, NELEMS(colwise_variants), dglu_unstaged ? "t1024v8r128" : "t512v8r128")
			: &colwise_variants[!strcmp(k->tmpl, "dglu.cu") ? 2 : !strcmp(k->tmpl, "glu_amax.cu") && pertensor ? 1 : 0];
		/* dglu.cu's tile path steps must divide C: 32 or 16 columns where 64 do not */
		if (!strcmp(k->tmpl, "dglu.cu") && !pl_block_tile(k) && !variant_legal(k, v, false))
			v = find_variant(colwise_variants, NELEMS(colwise_variants), cols % 32 == 0 ? "t256v4r32" : "t128v4r32");
	} else if (strcmp(k->tmpl, "norm_quantize.cu") && cols > glu_heuristic[NELEMS(glu_heuristic) - 1].max_cols) {
		bool dglu = !strcmp(k->tmpl, "dglu.cu");
		bool block = !dglu && pl_slot_long(k, "TG_RECIPE", 0) == TG_RECIPE_BLOCK1X128;
		bool nvfp4 = !dglu && pl_slot_long(k, "TG_RECIPE", 0) == TG_RECIPE_NVFP4;
		bool dglu_hp = dglu && pl_slot_long(k, "TG_RECIPE", 0) == TG_RECIPE_NONE;
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
		bool fp32 = !glu && pl_slot_long(k, "TG_RECIPE", 0) == TG_RECIPE_NONE && pl_slot_long(k, "TG_OUT_DTYPE", 1) == TG_DTYPE_F32;
		bool delayed = pl_slot_long(k, "TG_RECIPE", 0) == TG_RECIPE_DELAYED;
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
	pl_heuristic_launch(pl, k, v, FAM_ROW, rows, cols);
}

/* Whether cast op `op` (cast_transpose or quantize; else false) writes its copies on cast_transpose.cu's staged path
 * (its cast pass): a BF16/FP16 input, per-tensor delayed or current scaling or MXFP8 with a columnwise copy, a row
 * length of a multiple of 16. */
static bool cast_staged(const Graph *g, const Op *op)
{
	if (op->kind != OP_CAST_TRANSPOSE && op->kind != OP_QUANTIZE)
		return false;
	const Tensor *in = &g->tensors[op->arg[ARG_IN]], *out = &g->tensors[op->arg[ARG_OUT]];
	Scaling sc = pl_is_quantized(out) ? out->recipe.scaling : SCALING_NONE;
	return (sc == SCALING_DELAYED || sc == SCALING_CURRENT || sc == SCALING_MXFP8) && out->columnwise &&
		(in->dtype == DT_BF16 || in->dtype == DT_F16) && pl_tensor_cols(in) % 16 == 0;
}

/* Whether cast kernel k takes cast_transpose.cu's TG_CT_STAGE: the shared-tile body's 1x128 or 128x128 cast of a 2-byte
 * input, whose next tile then comes by cp.async into dynamic shared memory (a tile of the input: plan_apply_variant
 * sizes it) and which runs persistent; only where every target holds two CTAs of the largest tiling (128 x 256: 64
 * KB staged beside up to 49 KB static), so any variant `tegen tune` tries fits. H100, 8192 tokens, us alone (in the
 * layer), two rounds, unstaged / staged: d_y 8B 50.5, 51.5 (53.6, 53.5) / 49.6, 49.6 (50.4, 50.6), 70B 101.5, 99.8
 * (110.1, 110.9) / 101.8, 100.6 (105.4, 105.6); w_up 8B 173.8, 178.6 (179.7, 179.6) / 177.0, 177.4 (185.2, 184.3), 70B
 * 700.3, 699.2 / 707.8, 705.6; w_down the same either way (thirty-seventh session, call 8). A weight's cast too since
 * the forty-third session: on the H200 (ncu: 0.51 warps issued a scheduler a cycle, half the cycles with no eligible
 * warp: latency-bound) `tegen tune` at 8192 tokens, unstaged / staged: 8B w_up 144.7 / 135.3, w_down 75.4 / 67.3, 70B
 * w_up 527.6 / 514.3, w_down 262.6 / 256.2; in the layer 8B w_down 83-84 -> 75, 70B w_up 572-576 -> 533-534. */
static bool ct_stage_ok(const Planner *pl, const Kernel *k, Scaling sc)
{
	long in = pl_slot_long(k, "TG_IN_DTYPE", 0);
	if ((sc != SCALING_BLOCK1X128 && sc != SCALING_BLOCK128X128) || (in != TG_DTYPE_BF16 && in != TG_DTYPE_F16) ||
		k->pass == PASS_AMAX || pl_slot_long(k, "TG_DBIAS", 0) || !k->nops)
		return false;
	for (int i = 0; i < pl->g->ntargets; i++)
		if (smem_optin(pl->g->targets[i]) < 2 * (65536L + 50176L))
			return false;
	return true;
}

void pl_tile_launch(Planner *pl, Kernel *k, const Tensor *out, Extent rows, long cols)
{
	Scaling sc = pl_is_quantized(out) ? out->recipe.scaling : SCALING_NONE;
	const char *name = "t256r64c128";
	/* rows when known (a weight, or tokens given to the planner): from the H100 tune
	 * sweep, short copies want 32-row tiles and copies of 2^29+ elements 128-row
	 * tiles (longer runs per column of the transpose); 64 rows in between. known_log2:
	 * floor(log2(rows x cols)) when the rows are known, else 0 */
	long nrows = rows.dim < 0 || pl->tokens > 0 ? pl_extent_at(rows, pl->tokens) : 0, elems;
	int known_log2 = nrows <= 0 || cols <= 0 ? 0
		: __builtin_mul_overflow(nrows, cols, &elems) ? 63 : 63 - __builtin_clzl((unsigned long)elems);
	if (pl_slot_long(k, "TG_DBIAS", 0))
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
			? (pl_is_quantized(out) ? "t512r64c256" : "t256r128c128")
			: (pl_is_quantized(out) ? "t512r64c128" : "t128r64c128");
	else if (!pl_is_quantized(out))
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
		pl_slot_set(k, "TG_CT_STAGE", "1");
	pl_heuristic_launch(pl, k, find_variant(tile_variants, NELEMS(tile_variants), name), FAM_TILE, rows, cols);
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
		rows = pl_extent_at(k->rows, tokens);
	long b = 1;
	while (b < rows && b < (1L << 40))
		b <<= 1;
	return b;
}

/* Replace the heuristic's variant by the DB's best for this GPU, when it has one. */
void pl_apply_tuning(Planner *pl, const PlanOptions *o)
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
int pl_fused_dbias_op(const Graph *g, const Op *op)
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

/* The last guard between plan and NVRTC: every tunable kernel's variant meets its
 * template's static_asserts. gen/ir.c rejects the shapes no variant handles
 * (check_kernel_shape), so this fires only if the two disagree. */
void pl_check_variants(Planner *pl)
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

/* The cast tile variant called name (NULL if none): for a kernel planned outside the heuristics. */
const PlanVariant *pl_tile_variant(const char *name) { return find_variant(tile_variants, NELEMS(tile_variants), name); }
