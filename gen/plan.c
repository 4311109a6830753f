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
#include "plan_kernel.h"
#include "plan_launch.h"
#include "plan_gemm.h"
#include "plan_backward.h"
#include "tg_backward.h"
#include "tg_kernel.h"

/* The columnwise copy of a per-tensor FP8 tensor is its rowwise bytes transposed
 * (one scale): a byte transpose after the fused kernel (faster than the fused
 * tile path, which re-reads the input from L2: bench/RESULTS.md, "Planner heuristics"). */
static void plan_byte_transpose(Planner *pl, const Op *op, const Tensor *out, Extent rows, long cols)
{
	Kernel *k = pl_kernel_new(pl, arena_printf(pl->a, "transpose_%s", out->name), op->id);
	k->kind = KERNEL_GENERATED;
	k->tmpl = "cast_transpose.cu";
	pl_slot(pl, k, "TG_KERNEL", emit_entry(pl->a, pl->p, k));
	pl_slot(pl, k, "TG_IN_DTYPE", pl_istr(pl, TG_DTYPE_BYTES)); /* raw bytes */
	pl_slot(pl, k, "TG_OUT_DTYPE", "0");
	pl_slot(pl, k, "TG_FMT", "0");
	pl_slot(pl, k, "TG_RECIPE", "0");
	pl_slot(pl, k, "TG_ROWWISE", "0");
	pl_slot(pl, k, "TG_COLWISE", "1");
	pl_slot(pl, k, "TG_COLS", pl_istr(pl, cols));
	pl_slot(pl, k, "TG_EPS_SCALE", "0.0f");
	pl_slot(pl, k, "TG_POW2", "0");
	pl_slot(pl, k, "TG_DBIAS", "0");
	pl_slot(pl, k, "TG_DEQ", "0");
	pl_slot(pl, k, "TG_CT_STAGE", "0");
	pl_bind(pl, k, TG_P_IN, out->id, COMP_DATA);
	pl_bind(pl, k, TG_P_OUT_T, out->id, COMP_DATA_T);
	pl_heuristic_launch(pl, k, pl_tile_variant("t256r128c128"), FAM_TILE, rows, cols);
	k->note = "columnwise copy: the rowwise FP8 bytes transposed (same per-tensor scale)";
}

static void plan_op_kernels(Planner *pl, const Op *op, const Tensor *in, const Tensor *out, Component data, Extent rows,
	long cols, bool amax_only);
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
	Extent rows = pl_tensor_rows(pl, out, op->loc);
	long cols = pl_tensor_cols(out);
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
	if (pl_is_quantized(out) && out->recipe.scaling == SCALING_NVFP4) {
		plan_nvfp4(pl, op, in, out);
		return;
	}
	bool fused = op_family(op->kind) == OPF_ROW;
	if (op_writes_hp(g, op) || (pl->hp_values && fused && pl_is_quantized(out) && pl_tensor_cols(out) % 8 == 0)) {
		plan_unfused_cast(pl, op, in, out);
		return;
	}
	if (op->kind == OP_NORM_QUANTIZE && pl_is_quantized(out) && out->columnwise &&
		(out->recipe.scaling == SCALING_BLOCK1X128 || out->recipe.scaling == SCALING_MXFP8)) {
		plan_norm_block(pl, op, in, out);
		return;
	}
	Scaling sc = pl_is_quantized(out) ? out->recipe.scaling : SCALING_NONE;
	/* the byte transpose moves 16-byte vectors: other rows take the fused tile path. dglu
	 * takes its tile path whenever its heuristic tile (t256v8r32: 64 columns of each half
	 * per step) fits: 520 us against 387 + 178 for the row kernel + byte transpose at
	 * 8192 x 2 x 14336 on the H100 (bench/RESULTS.md, sixth session), and always where
	 * the staged path (dglu_staged: 451-471 us there, seventeenth session) masks its last tile */
	bool dglu_tile = op->kind == OP_DGLU && ((pl_tensor_cols(out) / glu_halves(op->p.act)) % 64 == 0 || dglu_staged(g, op));
	/* glu_amax likewise (t512v8r32, 128 columns a step): 269 us against 286-295 for the row kernel
	 * + byte transpose at 8192 x 14336 on the H100 (sixth session, after the register prefetch) */
	bool glu_tile = op->kind == OP_GLU_AMAX && pl_tensor_cols(out) % 128 == 0;
	bool split = fused && (sc == SCALING_DELAYED || sc == SCALING_CURRENT) && out->rowwise && out->columnwise &&
		pl_tensor_cols(out) % 16 == 0 && !dglu_tile && !glu_tile;
	Tensor rowonly;
	if (split) { /* the fused kernel sees a rowwise-only tensor; the transpose follows */
		rowonly = *out;
		rowonly.columnwise = false;
		out = &rowonly;
	}
	Extent rows = pl_tensor_rows(pl, out, op->loc);
	long cols = pl_tensor_cols(out);
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
	pl_slot(pl, k, "TG_NORM", op->p.norm == NORM_LAYER ? "1" : "0");
	DType gdt = g->tensors[op->arg[ARG_GAMMA]].dtype;
	pl_slot(pl, k, "TG_W_DTYPE", pl_istr(pl, dtype_code(gdt)));
	pl_slot(pl, k, "TG_B_DTYPE", pl_istr(pl, dtype_code(op->arg[ARG_BETA] >= 0 ? g->tensors[op->arg[ARG_BETA]].dtype : gdt)));
	pl_slot(pl, k, "TG_EPS", pl_flit(pl, op->p.eps));
	pl_slot(pl, k, "TG_ZERO_CENTERED", op->p.zero_centered_gamma ? "1" : "0");
	with_residual = with_residual && op->arg[ARG_RESIDUAL] >= 0;
	pl_slot(pl, k, "TG_HAS_RESIDUAL", with_residual ? "1" : "0");
	pl_bind(pl, k, TG_P_GAMMA, op->arg[ARG_GAMMA], COMP_DATA);
	pl_bind(pl, k, TG_P_BETA, op->arg[ARG_BETA], COMP_DATA);
	if (with_residual)
		pl_bind(pl, k, TG_P_RESIDUAL, op->arg[ARG_RESIDUAL], COMP_DATA);
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
	Extent rows = pl_tensor_rows(pl, out, op->loc);
	long cols = pl_tensor_cols(out);
	Tensor rowonly = *out;
	rowonly.columnwise = false;
	plan_op_kernels(pl, op, in, &rowonly, COMP_DATA, rows, cols, false);
	Kernel *nk = &pl->p->kernels[pl->p->nkernels - 1];
	bool ln = op->p.norm == NORM_LAYER;
	NormStats st = norm_stats(op, out); /* the row kernel binds saved ones; unsaved ones go to the workspace */
	if (st.own_rs)
		pl_bind(pl, nk, TG_P_RSIGMA, st.rs, st.rsc);
	if (st.own_mu)
		pl_bind(pl, nk, TG_P_MU, st.mu, st.muc);
	nk->note = out->rowwise ? "the rowwise copy and the row statistics (norm_colwise.cu writes the columnwise copy)"
		: "the row statistics alone (norm_colwise.cu writes the columnwise copy)";
	Kernel *k = pl_kernel_new(pl, "norm_colwise", op->id);
	k->kind = KERNEL_GENERATED;
	k->tmpl = "norm_colwise.cu";
	pl_common_slots(pl, k, in, out, cols, PASS_SINGLE);
	pl_slot(pl, k, "TG_THREADS", "512");
	/* the residual sum, where the row kernel saved it, is the normalized input: one read, not two */
	int sum = op->arg[ARG_RESIDUAL_OUT];
	pl_bind(pl, k, TG_P_IN, sum >= 0 ? sum : in->id, COMP_DATA);
	norm_inputs(pl, k, op, sum < 0);
	pl_bind(pl, k, TG_P_RSIGMA, st.rs, st.rsc);
	if (ln)
		pl_bind(pl, k, TG_P_MU, st.mu, st.muc);
	pl_bind(pl, k, TG_P_OUT_T, out->id, COMP_DATA_T);
	pl_bind(pl, k, TG_P_SCALE_INV_T, out->id, COMP_SCALE_INV_T);
	k->rows = rows;
	k->cols = cols;
	k->threads = 512;
	k->grid_rows = 128; /* 128 x 128 tiles */
	k->grid_cols = 128;
	k->variant = "t512";
	k->choice = "fixed";
	k->note = "the columnwise copy: the input read again, normalized with the row kernel's statistics";
	k->smem_dynamic = pl_nc_stage_bytes(pl, k);
	pl_slot(pl, k, "TG_NC_STAGE", k->smem_dynamic ? "1" : "0");
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
	bool two = pl_is_quantized(out) && scaling_info(out->recipe.scaling)->amax_pass;
	bool nv = pl_is_quantized(out) && out->recipe.scaling == SCALING_NVFP4;
	const char *tmpl = op_template(op->kind);
	bool tiled = op->kind == OP_QUANTIZE || op->kind == OP_CAST_TRANSPOSE;
	for (int pass = two ? PASS_AMAX : PASS_SINGLE; pass <= (two ? amax_only ? PASS_AMAX : PASS_CAST : PASS_SINGLE); pass++) {
		const char *what = pass == PASS_AMAX ? arena_printf(pl->a, "%s_amax", op_name(op->kind)) : op_name(op->kind);
		Kernel *k = pl_kernel_new(pl, what, op->id);
		k->kind = KERNEL_GENERATED;
		k->tmpl = tmpl;
		pl_common_slots(pl, k, in, out, cols, pass);
		pl_bind(pl, k, TG_P_IN, in->id, COMP_DATA);
		if (op->kind == OP_NORM_QUANTIZE) {
			norm_inputs(pl, k, op, true);
			if (pass != PASS_AMAX) {
				pl_bind(pl, k, TG_P_RESIDUAL_OUT, op->arg[ARG_RESIDUAL_OUT], COMP_DATA);
				pl_bind(pl, k, TG_P_RSIGMA, op->arg[ARG_RSIGMA_OUT], COMP_DATA);
				pl_bind(pl, k, TG_P_MU, op->arg[ARG_MU_OUT], COMP_DATA);
			}
		}
		if (op->kind == OP_DGLU) {
			bool dbias = op->arg[ARG_DBIAS_OUT] >= 0 && pass != PASS_AMAX;
			pl_slot(pl, k, "TG_G_DTYPE", pl_istr(pl, dtype_code(g->tensors[op->arg[ARG_GRAD]].dtype)));
			pl_slot(pl, k, "TG_DBIAS", dbias ? "1" : "0");
			if (pass == PASS_AMAX) /* dglu.cu: the amax pass writes no copy (its #error) */
				pl_slot_set(k, "TG_COLWISE", "0");
			pl_bind(pl, k, TG_PB_GRAD, op->arg[ARG_GRAD], COMP_DATA);
			if (dbias) /* the chunk partials of the bias gradient, in d_h's workspace */
				pl_bind(pl, k, TG_PB_DW, op->arg[ARG_OUT], COMP_PART);
			k->smem_dynamic = pl_dglu_stage_bytes(pl, k, op->p.act);
			pl_slot(pl, k, "TG_DB_STAGE", k->smem_dynamic ? "1" : "0");
			/* the staged tile prefetches a CTA's next tile, so a CTA wants many: one CTA a SM (t1024) over the
			 * whole grid-stride, not 32 a SM of one or two tiles each. H100, 8192 tokens, us alone: 8B block dglu
			 * 487-491 -> 440-462, 70B 922-948 -> 858-859 (thirty-first session, call 2). Not MXFP8's, whose extra
			 * BF16 operand keeps more stores in flight: 8B MXFP8 dglu persistent / not, three rounds, us in the layer
			 * / alone 678 / 677, 669 / 680, 677 / 676 against 666 / 663, 668 / 664, 668 / 659 (thirty-fifth, call 7) */
			k->persistent = k->smem_dynamic > 0 && pl_slot_long(k, "TG_RECIPE", 0) != TG_RECIPE_MXFP8;
		}
		if (op->kind == OP_NORM_QUANTIZE || op->kind == OP_GLU_AMAX) { /* NVFP4's stochastic rounding */
			pl_slot(pl, k, "TG_SR", nv && out->recipe.nvfp4_sr ? "1" : "0");
			pl_slot(pl, k, "TG_SEED", arena_printf(pl->a, "0x%016llxull",
				nv ? (unsigned long long)tensor_sr_seed(pl->g, out) : 0ull));
		}
		if (op->kind == OP_GLU_AMAX || op->kind == OP_DGLU) {
			pl_slot(pl, k, "TG_ACT", pl_istr(pl, op->p.act));
			pl_slot(pl, k, "TG_ALPHA", pl_flit(pl, op->p.alpha));
			pl_slot(pl, k, "TG_LIMIT", pl_flit(pl, op->p.limit));
		}
		int dbias = tiled && pass != PASS_AMAX && in == &g->tensors[op->arg[ARG_IN]] ? pl_fused_dbias_op(g, op) : -1;
		if (tiled) {
			pl_slot(pl, k, "TG_DBIAS", dbias >= 0 ? "1" : "0");
			if (dbias >= 0) /* the dbias op's chunk partials, in its input's workspace (as dbias.cu writes them) */
				pl_bind(pl, k, TG_PB_DW, in->id, COMP_PART);
		}
		if (pass == PASS_AMAX || nv) /* NVFP4's cast pass reads the global amax (S_enc) */
			pl_bind(pl, k, TG_P_AMAX, out->id, COMP_AMAX);
		if (pass != PASS_AMAX)
			pl_bind_outputs(pl, k, out, data);
		if (tiled)
			pl_tile_launch(pl, k, out, rows, cols);
		else
			pl_row_launch(pl, k, out, rows, cols);
		k->note = pass == PASS_AMAX ? (nv ? "NVFP4, pass 1 of 2: global amax of the output, nothing written"
				: "current scaling, pass 1 of 2: amax of the output, nothing written")
			: pass == PASS_CAST ? (nv ? "NVFP4, pass 2 of 2: S_enc from the global amax, re-read the input, E4M3 block scales, E2M1 data"
				: "current scaling, pass 2 of 2: scale from the amax, re-read the input, cast")
			: pl_block_tile(k) ? "both block-scaled copies from one kernel (block tile path: 128 x 128 tiles)" : NULL;
		if (dbias >= 0)
			k->note = arena_printf(pl->a, "%s%s%s fused: the chunk partials of %s's column sums (stage 1 of 2)",
				k->note ? k->note : "", k->note ? "; " : "", op_name(OP_DBIAS), in->name);
	}
	if (op->kind == OP_DGLU && op->arg[ARG_DBIAS_OUT] >= 0) /* the fused dbias's stage 2 */
		plan_dreduce(pl, op, op->arg[ARG_OUT], COMP_PART, op->arg[ARG_DBIAS_OUT], rows, glu_halves(op->p.act) * cols);
}

/* ---- NVFP4 ---- */

/* The random Hadamard transform of an NVFP4 kernel's columnwise copy: TG_RHT and
 * the sign mask (one for every tensor: tg_rht_sign_mask(TG_RHT_SEED)), and the
 * copy's own amax (both passes) and S_enc (cast pass) in its state slot. */
static void nvfp4_rht_slots(Planner *pl, Kernel *k, const Tensor *out, int pass)
{
	bool rht = tensor_rht_t(out);
	pl_slot(pl, k, "TG_RHT", rht ? "1" : "0");
	pl_slot(pl, k, "TG_RHT_MASK", arena_printf(pl->a, "0x%04xu", rht ? tg_rht_sign_mask(TG_RHT_SEED) : 0u));
	if (!rht)
		return;
	pl_bind(pl, k, TG_P_AMAX_T, out->id, COMP_AMAX_T);
	if (pass)
		pl_bind(pl, k, TG_P_SCALE_T, out->id, COMP_SCALE_T);
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
	pl_slot(pl, k, "TG_SRC", pl_istr(pl, src));
	pl_slot(pl, k, "TG_DEQ", "0"); /* plan_dequantize_nvfp4 sets it where an emulated GEMM reads the copy */
	bool glu = src == NVSRC_GLU || src == NVSRC_DGLU;
	pl_slot(pl, k, "TG_ACT", glu ? pl_istr(pl, op->p.act) : "0");
	pl_slot(pl, k, "TG_ALPHA", glu ? pl_flit(pl, op->p.alpha) : "0.0f");
	pl_slot(pl, k, "TG_LIMIT", glu ? pl_flit(pl, op->p.limit) : "0.0f");
	pl_slot(pl, k, "TG_G_DTYPE", src == NVSRC_DGLU ? pl_istr(pl, dtype_code(g->tensors[op->arg[ARG_GRAD]].dtype)) : "0");
	if (src != NVSRC_NORM) {
		pl_slot(pl, k, "TG_NORM", "0");
		pl_slot(pl, k, "TG_W_DTYPE", "0");
		pl_slot(pl, k, "TG_B_DTYPE", "0");
		pl_slot(pl, k, "TG_ZERO_CENTERED", "0");
		pl_slot(pl, k, "TG_HAS_RESIDUAL", "0");
	}
}

/* A kernel of nvfp4_quantize.cu for out: pass 0 (the global amax) or 1 (the cast, writing out's copies),
 * its copy and option slots, value source src reading component comp of tensor in (of dtype dt); the
 * caller binds a source op's other inputs. */
static Kernel *nvfp4_kernel(Planner *pl, const char *what, const Op *op, const Tensor *out, int pass, NvfpSource src,
	int in, Component comp, DType dt)
{
	Kernel *k = pl_fixed_kernel(pl, what, op, "nvfp4_quantize.cu", pl_tensor_rows(pl, out, op->loc), pl_tensor_cols(out));
	k->pass = pass ? PASS_CAST : PASS_AMAX;
	pl_slot(pl, k, "TG_IN_DTYPE", pl_istr(pl, dtype_code(dt)));
	pl_bind(pl, k, TG_P_IN, in, comp);
	pl_slot(pl, k, "TG_PASS", pass ? "1" : "0");
	pl_slot(pl, k, "TG_ROWWISE", out->rowwise ? "1" : "0");
	pl_slot(pl, k, "TG_COLWISE", out->columnwise ? "1" : "0");
	pl_slot(pl, k, "TG_2D", out->recipe.nvfp4_2d ? "1" : "0");
	pl_slot(pl, k, "TG_SR", out->recipe.nvfp4_sr ? "1" : "0");
	pl_slot(pl, k, "TG_SEED", arena_printf(pl->a, "0x%016llxull", (unsigned long long)tensor_sr_seed(pl->g, out)));
	nvfp4_source_slots(pl, k, op, src);
	pl_bind(pl, k, TG_P_AMAX, out->id, COMP_AMAX);
	if (pass)
		pl_bind_outputs(pl, k, out, COMP_DATA);
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
	Extent rows = pl_tensor_rows(pl, out, op->loc);
	long cols = pl_tensor_cols(out);
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
			pl_bind(pl, ak, TG_P_RSIGMA, st.rs, st.rsc);
			if (ln)
				pl_bind(pl, ak, TG_P_MU, st.mu, st.muc);
			if (sum >= 0)
				pl_bind(pl, ak, TG_P_RESIDUAL_OUT, sum, COMP_DATA);
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
			pl_bind(pl, k, TG_P_RSIGMA, st.rs, st.rsc);
			if (ln)
				pl_bind(pl, k, TG_P_MU, st.mu, st.muc);
		}
		if (src == NVSRC_DGLU)
			pl_bind(pl, k, TG_PB_GRAD, op->arg[ARG_GRAD], COMP_DATA);
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
	Extent rows = pl_tensor_rows(pl, out, op->loc);
	long cols = pl_tensor_cols(out);
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

static void plan_recipe_update(Planner *pl)
{
	Kernel *k = pl_kernel_new(pl, "recipe_update", -1);
	k->kind = KERNEL_GENERATED;
	k->tmpl = "recipe_update.cu";
	pl_slot(pl, k, "TG_KERNEL", emit_entry(pl->a, pl->p, k));
	pl_slot(pl, k, "TG_THREADS", "256");
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
			if (!pl_binds(k, bd->tensor, q, out))
				continue; /* a dequantize kernel */
			for (int j = 0; j < p->nkernels; j++) {
				const Kernel *w = &p->kernels[j];
				if (j != i && w->kind != KERNEL_GEMM && pl_binds(w, bd->tensor, q, out) && !pl_binds(w, bd->tensor, bd->comp, -1))
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
	pl_apply_tuning(&pl, o);
	pl_check_variants(&pl);
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
