/* plan_gemm.c: gemm_cast ops as GEMM calls: cuBLASLt with layouts and scales resolved, or the generated FP8 GEMM
 * (gemm_fp8.cu) with a GLU or dglu fused into its epilogue; the operand copies an emulated or native MXFP8/NVFP4
 * GEMM reads (BF16 dequantized copies, swizzled scales), conversions and the NVFP4 alpha. */
#include "plan_gemm.h"
#include "tg_backward.h"
#include "tg_kernel.h"

/* Kernel w, which writes copy `from` of t, writes it dequantized to BF16 too (TG_DEQ bit 1 rowwise, 2
 * columnwise; pointer slot `slot`): the operand of an emulated GEMM, in place of a dequantize kernel. */
void pl_deq_in_writer(Planner *pl, Kernel *w, const Tensor *t, Component from, int slot)
{
	int bit = from == COMP_DATA ? 1 : 2;
	long deq = pl_slot_long(w, "TG_DEQ", 0);
	if (deq & bit) /* an earlier emulated GEMM reads this copy too: the kernel writes it already */
		return;
	pl_slot_set(w, "TG_DEQ", pl_istr(pl, deq | bit));
	pl_bind(pl, w, slot, t->id, from == COMP_DATA ? COMP_DEQ : COMP_DEQ_T);
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
	Kernel *k = pl_copy_writer(pl, t, from);
	if (!k || !k->tmpl || pl_slot_long(k, "TG_RECIPE", -1) != TG_RECIPE_MXFP8)
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

/* The BF16 operand of t's copy `from` for op's GEMM: written by `writer` (the kernel that quantizes the copy, at its
 * pointer slot deq_slot) where there is one, else already planned in op's phase, else a new tmpl kernel
 * dequantize_<t>[_t] over t's rows and columns, returned for its slots (NULL: nothing more to plan). */
static Kernel *deq_kernel(Planner *pl, const Op *op, const Tensor *t, Component from, Kernel *writer, int deq_slot,
	const char *tmpl)
{
	if (writer) {
		pl_deq_in_writer(pl, writer, t, from, deq_slot);
		return NULL;
	}
	if (deq_planned(pl, op, t, from == COMP_DATA ? COMP_DEQ : COMP_DEQ_T))
		return NULL;
	const char *what = arena_printf(pl->a, "dequantize_%s%s", t->name, from == COMP_DATA_T ? "_t" : "");
	return pl_fixed_kernel(pl, what, op, tmpl, pl_tensor_rows(pl, t, op->loc), pl_tensor_cols(t));
}

/* An MXFP8 operand copy (data or data_t) dequantized to a BF16 copy: by the kernel that quantizes it (TG_DEQ:
 * 2 bytes an element more written there, against a kernel that reads the copy back), else by dequantize.cu.
 * n[0], n[1] are the tensor's rows and cols either way; the columnwise copy's scales are TE's
 * [rows/32][cols] (TG_SCALE_T). */
static void plan_dequantize(Planner *pl, const Op *op, const Tensor *t, Component from)
{
	Kernel *k = deq_kernel(pl, op, t, from, mx_writer_of(pl, t, from), from == COMP_DATA ? TG_P_MX_DEQ : TG_P_MX_DEQ_T,
		"dequantize.cu");
	if (!k)
		return;
	pl_slot(pl, k, "TG_FMT", t->dtype == DT_E5M2 ? "1" : "0");
	pl_slot(pl, k, "TG_SCALE_T", from == COMP_DATA_T ? "1" : "0");
	pl_bind(pl, k, TG_P_IN, t->id, from);
	pl_bind(pl, k, TG_P_SCALE_INV, t->id, from == COMP_DATA ? COMP_SCALE_INV : COMP_SCALE_INV_T);
	pl_bind(pl, k, TG_P_OUT, t->id, from == COMP_DATA ? COMP_DEQ : COMP_DEQ_T);
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
	Kernel *k = pl_copy_writer(pl, t, from);
	if (!k || !k->tmpl || strcmp(k->tmpl, "nvfp4_quantize.cu"))
		return NULL;
	bool strips = pl_slot_long(k, "TG_2D", 0) || pl_slot_long(k, "TG_COLWISE", 0) || pl_slot_long(k, "TG_SRC", 0);
	return k->pass == PASS_CAST && strips ? k : NULL;
}

/* An NVFP4 operand copy dequantized to BF16 (row-aware: a columnwise copy's rows
 * may have an odd length). n[0], n[1] are the tensor's rows and cols either way. */
static void plan_dequantize_nvfp4(Planner *pl, const Op *op, const Tensor *t, Component from)
{
	/* the cast over strips writes the BF16 copy itself: in an instruction-bound kernel, 2 bytes an element
	 * more written, against a kernel that reads the copy back (H100, the 8B NVFP4 training layer: sixteenth
	 * session) */
	Kernel *k = deq_kernel(pl, op, t, from, nvfp4_strip_cast_of(pl, t, from), from == COMP_DATA ? TG_P_DEQ : TG_P_DEQ_T,
		"nvfp4_dequantize.cu");
	if (!k)
		return;
	pl_slot(pl, k, "TG_COPY_T", from == COMP_DATA_T ? "1" : "0");
	pl_bind(pl, k, TG_P_IN, t->id, from);
	pl_bind(pl, k, TG_P_SCALE_INV, t->id, from == COMP_DATA ? COMP_SCALE_INV : COMP_SCALE_INV_T);
	pl_bind(pl, k, TG_P_SCALE, t->id, tensor_s_enc_comp(t, from)); /* an RHT columnwise copy has its own S_enc */
	pl_bind(pl, k, TG_P_OUT, t->id, from == COMP_DATA ? COMP_DEQ : COMP_DEQ_T);
	k->note = tensor_s_enc_comp(t, from) == COMP_SCALE_T
		? "emulated NVFP4 GEMM: operand to BF16 (Hadamard-transformed copy: the product along K is unchanged)"
		: "emulated NVFP4 GEMM: operand to BF16";
}

/* Block scales of one operand copy into cuBLASLt's swizzled layout (native
 * MXFP8 or NVFP4 GEMM, sm_100+): 32 (MXFP8) or 16 (NVFP4) elements per scale. */
static void plan_swizzle(Planner *pl, const Op *op, const Tensor *t, Component from)
{
	long blk = scaling_info(t->recipe.scaling)->block_cols;
	Kernel *k = pl_kernel_new(pl, arena_printf(pl->a, "swizzle_%s%s", t->name, from == COMP_DATA_T ? "_t" : ""), op->id);
	k->kind = KERNEL_GENERATED;
	k->tmpl = "mxfp8_swizzle.cu";
	pl_slot(pl, k, "TG_KERNEL", emit_entry(pl->a, pl->p, k));
	pl_slot(pl, k, "TG_THREADS", "256");
	pl_bind(pl, k, TG_P_IN, t->id, from == COMP_DATA ? COMP_SCALE_INV : COMP_SCALE_INV_T);
	pl_bind(pl, k, TG_P_OUT, t->id, from == COMP_DATA ? COMP_SCALE_SW : COMP_SCALE_SW_T);
	k->threads = 256;
	if (blk == 32 && from == COMP_DATA_T) {
		/* MXFP8 columnwise scales are stored [rows/32][cols] (TG_SRC_T): n[0], n[1] are
		 * the tensor's rows (may be tokens) and cols; 256 units of work per CTA */
		pl_slot(pl, k, "TG_SRC_T", "1");
		k->rows = pl_tensor_rows(pl, t, op->loc);
		k->cols = pl_tensor_cols(t);
		k->grid_rows = 1024;
		k->grid_cols = 128;
	} else {
		/* n[0] = rows of the scale matrix, n[1] = its columns; both fixed here except the
		 * rowwise copy's rows (the planner keeps n[1] constant, so the transposed NVFP4 copy
		 * of an activation, whose scale columns grow with tokens, is not planned natively) */
		pl_slot(pl, k, "TG_SRC_T", "0");
		k->rows = from == COMP_DATA ? pl_tensor_rows(pl, t, op->loc) : (Extent){-1, 0, pl_tensor_cols(t)};
		k->cols = from == COMP_DATA ? (pl_tensor_cols(t) + blk - 1) / blk : (pl_tensor_rows(pl, t, op->loc).add + blk - 1) / blk;
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
	Kernel *k = pl_kernel_new(pl, arena_printf(pl->a, "nvfp4_alpha_%s", d->name), op->id);
	k->kind = KERNEL_GENERATED;
	k->tmpl = "nvfp4_gemm_alpha.cu";
	pl_slot(pl, k, "TG_KERNEL", emit_entry(pl->a, pl->p, k));
	pl_slot(pl, k, "TG_THREADS", "32");
	pl_slot(pl, k, "TG_ACCUMULATE", c->accumulate ? "1" : "0");
	pl_bind(pl, k, TG_P_SCALE, c->a, c->a_senc); /* scale, or scale_t for a Hadamard-transformed copy */
	pl_bind(pl, k, TG_P_SCALE_B, c->b, c->b_senc);
	pl_bind(pl, k, TG_P_OUT, c->d, COMP_ALPHA);
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

/* A convert.cu kernel for op: tensor t's component from (dtype in) into its component to (dtype out), rows x
 * t's columns; grid.x = rows (capped), convert.cu grid-strides over the elements. */
static Kernel *convert_kernel(Planner *pl, const Op *op, const Tensor *t, Component from, DType in, Component to,
	DType out, Extent rows)
{
	Kernel *cv = pl_fixed_kernel(pl, arena_printf(pl->a, "convert_%s", t->name), op, "convert.cu", rows, pl_tensor_cols(t));
	pl_slot(pl, cv, "TG_IN_DTYPE", pl_istr(pl, dtype_code(in)));
	pl_slot(pl, cv, "TG_OUT_DTYPE", pl_istr(pl, dtype_code(out)));
	pl_bind(pl, cv, TG_P_IN, t->id, from);
	pl_bind(pl, cv, TG_P_OUT, t->id, to);
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
	DType want = bias_dtype_for(c->a_dtype, c->d_dtype);
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
	Extent arows = pl_tensor_rows(pl, a, op->loc), brows = pl_tensor_rows(pl, b, op->loc);
	long acols = pl_tensor_cols(a), bcols = pl_tensor_cols(b);
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
	c->scaling = pl_is_quantized(a) ? a->recipe.scaling : SCALING_NONE;
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
	pl_slot(pl, k, "TG_KERNEL", emit_entry(pl->a, pl->p, k));
	pl_slot(pl, k, "TG_BN", pl_istr(pl, bn));
	pl_slot(pl, k, "TG_STAGES", pl_istr(pl, stages));
	pl_slot(pl, k, "TG_PROMOTE", promote ? "1" : "0");
	pl_slot(pl, k, "TG_KIND", arena_printf(pl->a, "\"%s.%s\"", dtype_name(c->a_dtype), dtype_name(c->b_dtype)));
	pl_slot(pl, k, "TG_OUT", c->d_dtype == DT_F16 ? "1" : "0");
	pl_slot(pl, k, "TG_EPI", "0"); /* no epilogue: plan_glu_epilogue may add the GLU */
	pl_slot(pl, k, "TG_ACT", "0");
	pl_slot(pl, k, "TG_ALPHA", "0.0f");
	pl_slot(pl, k, "TG_LIMIT", "0.0f");
	pl_slot(pl, k, "TG_FMT", "0");
	pl_slot(pl, k, "TG_ACT_T", "0");
	pl_slot(pl, k, "TG_SCALE", "0"); /* per-tensor scales */
	pl_slot(pl, k, "TG_H_F16", "0"); /* the dglu epilogue's h and copies: plan_dglu_epilogue sets them */
	pl_slot(pl, k, "TG_DH_ROW", "1");
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
	if (!pl_is_quantized(out) || out->recipe.scaling != SCALING_DELAYED || out->dtype == DT_E2M1)
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
	pl_slot_set(k, "TG_EPI", epi);
	pl_slot_set(k, "TG_ACT", pl_istr(pl, op->p.act));
	pl_slot_set(k, "TG_ALPHA", pl_flit(pl, op->p.alpha));
	pl_slot_set(k, "TG_LIMIT", pl_flit(pl, op->p.limit));
	pl_slot_set(k, "TG_FMT", out->dtype == DT_E5M2 ? "1" : "0");
	pl_slot_set(k, "TG_ACT_T", out->columnwise ? "1" : "0");
	pl_bind_outputs(pl, k, out, COMP_DATA);
}

/* glu_amax op `op` as the epilogue of the generated GEMM before it (gemm_fp8.cu TG_EPI 1: the tile holds
 * 128 columns of the gate half and the same 128 of the linear half), where glu_epilogue_why_not allows.
 * Its own kernel is still planned (the caller's next step) and runs where the GEMM falls back to
 * cuBLASLt; returns the GEMM kernel's index, or -1 with *why (NULL when no generated GEMM writes h). */
int plan_glu_epilogue(Planner *pl, const Op *op, const char **why)
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
	if (!pl_is_quantized(out) || out->recipe.scaling != SCALING_DELAYED || out->dtype == DT_E2M1)
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
int plan_dglu_epilogue(Planner *pl, const Op *op, const char **why)
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
	pl_slot_set(k, "TG_H_F16", h->dtype == DT_F16 ? "1" : "0");
	pl_slot_set(k, "TG_DH_ROW", out->rowwise ? "1" : "0");
	pl_bind(pl, k, TG_PB_IN, h->id, COMP_DATA);
	k->note = arena_printf(pl->a, "%s fused: %s = d%s(%s, %s) as FP8 from the promoted accumulators%s%s", op_name(op->kind),
		out->name, glu_name(op->p.act), h->name, da->name, out->rowwise && out->columnwise ? " (rowwise and columnwise)"
		: out->columnwise ? " (columnwise)" : "", k->gemm.keep_d ? arena_printf(pl->a, ", %s also written", da->name)
		: arena_printf(pl->a, " (%s not written)", da->name));
	return kg;
}

/* A gemm op: first the kernels its call reads (a native block-scaled GEMM: both
 * operands' scales swizzled, NVFP4's alpha; an emulated one: both operands
 * dequantized to BF16; a bias in another dtype: its conversion), then the GEMM. */
void plan_gemm(Planner *pl, const Op *op)
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
	if (c->bias >= 0 && g->tensors[c->bias].dtype != bias_dtype_for(c->a_dtype, c->d_dtype))
		plan_bias_convert(pl, op, c);
	Kernel *k = pl_kernel_new(pl, "gemm", op->id);
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
