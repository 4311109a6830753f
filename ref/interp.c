/* interp.c: the reference interpreter. Runs a layer's ops in the graph's
 * order through ref/ref.c, producing every component a GPU run produces, in
 * the same layouts. This is what `tegen run --check` and the GPU tests
 * compare against. Guarantees: the numerics are the reference's (the
 * contract); a fused GPU kernel must give the same bits or stay within it. */
#include "interp.h"

#include "backward.h"
#include "layout.h"
#include "optim.h"
#include "ref.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int ref_dtype(DType t) { return t == DT_F32 ? REF_F32 : t == DT_F16 ? REF_F16 : REF_BF16; }
static int fmt_of(DType t) { return t == DT_E5M2 ? TG_FMT_E5M2 : TG_FMT_E4M3; }

static void *xalloc(RefTensor *r, Component c, size_t bytes)
{
	free(r->comp[c]);
	r->comp[c] = calloc(bytes ? bytes : 1, 1);
	r->bytes[c] = bytes;
	r->owned = 1;
	return r->comp[c];
}

/* Load a high-precision tensor as FP32. */
static float *load_f32(const Tensor *t, const RefTensor *r, size_t n)
{
	float *x = malloc(sizeof *x * (n ? n : 1));
	ref_load_all(r->comp[COMP_DATA], ref_dtype(t->dtype), n, x);
	return x;
}

/* NVFP4: global amax, S_enc (kept as the tensor's scale), then the rowwise copy
 * and the columnwise one (the transpose quantized rowwise, same S_enc; with
 * nvfp4_rht the transpose's rows Hadamard-transformed first, with their own
 * global amax and S_enc: amax_t, scale_t). */
static void quant_nvfp4(const Graph *g, const long *dims, const Tensor *t, RefTensor *r, int rows, int cols, uint8_t *o,
	uint8_t *ot)
{
	size_t n = (size_t)rows * (size_t)cols;
	r->amax = ref_amax(r->value, n);
	RefNvfp4 opt = {t->recipe.nvfp4_2d, t->recipe.nvfp4_sr, tensor_sr_seed(g, t), r->sr_offset, r->amax};
	r->scale = tg_nvfp4_s_enc(r->amax);
	r->scale_inv = tg_scale_inv(r->scale);
	if (o)
		ref_quant_nvfp4(r->value, rows, cols, &opt, o, xalloc(r, COMP_SCALE_INV, layout_comp_bytes(dims, t, COMP_SCALE_INV)),
			NULL);
	if (ot) {
		float *xt = malloc(sizeof *xt * (n ? n : 1));
		ref_transpose(r->value, rows, cols, xt);
		if (tensor_rht_t(t)) {
			ref_rht_rows(xt, cols, rows, tg_rht_sign_mask(TG_RHT_SEED), xt);
			opt.global_amax = r->amax_t = ref_amax(xt, n);
			r->scale_t = tg_nvfp4_s_enc(r->amax_t);
		}
		ref_quant_nvfp4(xt, cols, rows, &opt, ot,
			xalloc(r, COMP_SCALE_INV_T, layout_comp_bytes(dims, t, COMP_SCALE_INV_T)), NULL);
		free(xt);
	}
}

/* Quantize (or store in high precision) an op's FP32 output value into every component. */
static void emit_output(const Graph *g, const long *dims, const Tensor *t, RefTensor *r, int rows, int cols)
{
	size_t n = (size_t)rows * (size_t)cols;
	if (!layout_quantized(t)) {
		ref_store_all(xalloc(r, COMP_DATA, layout_comp_bytes(dims, t, COMP_DATA)), ref_dtype(t->dtype), n, r->value);
		return;
	}
	int fmt = fmt_of(t->dtype);
	uint8_t *o = t->rowwise ? xalloc(r, COMP_DATA, layout_comp_bytes(dims, t, COMP_DATA)) : NULL;
	uint8_t *ot = t->columnwise ? xalloc(r, COMP_DATA_T, layout_comp_bytes(dims, t, COMP_DATA_T)) : NULL;
	const Recipe *rc = &t->recipe;
	switch (rc->scaling) {
	case SCALING_CURRENT:
		r->amax = ref_amax(r->value, n);
		r->scale = tg_current_scale(r->amax, tg_fmt_max(fmt), rc->eps, rc->pow2);
		/* fall through */
	case SCALING_DELAYED:
		ref_quant_tensor(r->value, rows, cols, fmt, r->scale, o, ot, &r->amax, &r->scale_inv);
		break;
	case SCALING_BLOCK1X128:
		ref_quant_block1x128(r->value, rows, cols, fmt, rc->eps, rc->pow2, o,
			o ? xalloc(r, COMP_SCALE_INV, layout_comp_bytes(dims, t, COMP_SCALE_INV)) : NULL, ot,
			ot ? xalloc(r, COMP_SCALE_INV_T, layout_comp_bytes(dims, t, COMP_SCALE_INV_T)) : NULL);
		break;
	case SCALING_BLOCK128X128:
		ref_quant_block128x128(r->value, rows, cols, fmt, rc->eps, rc->pow2, o,
			o ? xalloc(r, COMP_SCALE_INV, layout_comp_bytes(dims, t, COMP_SCALE_INV)) : NULL, ot,
			ot ? xalloc(r, COMP_SCALE_INV_T, layout_comp_bytes(dims, t, COMP_SCALE_INV_T)) : NULL);
		break;
	case SCALING_MXFP8:
		ref_quant_mxfp8(r->value, rows, cols, fmt, o,
			o ? xalloc(r, COMP_SCALE_INV, layout_comp_bytes(dims, t, COMP_SCALE_INV)) : NULL, ot,
			ot ? xalloc(r, COMP_SCALE_INV_T, layout_comp_bytes(dims, t, COMP_SCALE_INV_T)) : NULL);
		break;
	case SCALING_NVFP4:
		quant_nvfp4(g, dims, t, r, rows, cols, o, ot);
		break;
	default:
		break;
	}
}

void interp_quantize(const Graph *g, const long *dims, const Tensor *t, RefTensor *r)
{
	emit_output(g, dims, t, r, (int)layout_rows(dims, t), (int)layout_cols(t));
}

/* Dequantize a GEMM operand component into a float matrix [rows][k] (K contiguous).
 * native: an NVFP4 operand as the block-scaled MMA sees it, e2m1 * S_dec (exact in
 * FP32), its S_enc left to the GEMM's alpha. */
static float *gemm_operand(const Graph *g, const long *dims, const Tensor *t, const RefTensor *r, Component c, bool native,
	int *rows_out, int *k_out)
{
	int rows = (int)layout_rows(dims, t), cols = (int)layout_cols(t);
	int R = c == COMP_DATA ? rows : cols, K = c == COMP_DATA ? cols : rows;
	*rows_out = R;
	*k_out = K;
	size_t n = (size_t)R * (size_t)K;
	float *y = malloc(sizeof *y * (n ? n : 1));
	if (!layout_quantized(t)) {
		float *x = load_f32(t, r, (size_t)rows * (size_t)cols);
		if (c == COMP_DATA)
			memcpy(y, x, sizeof *y * n);
		else
			ref_transpose(x, rows, cols, y);
		free(x);
		return y;
	}
	int fmt = fmt_of(t->dtype);
	const uint8_t *q = r->comp[c];
	const void *s = r->comp[c == COMP_DATA ? COMP_SCALE_INV : COMP_SCALE_INV_T];
	switch (t->recipe.scaling) {
	case SCALING_DELAYED:
	case SCALING_CURRENT: ref_dequant_tensor(q, n, fmt, r->scale_inv, y); break;
	case SCALING_BLOCK1X128: ref_dequant_block1x128(q, s, R, K, fmt, y); break;
	case SCALING_BLOCK128X128: ref_dequant_block128x128(q, s, R, K, fmt, y); break;
	case SCALING_MXFP8: ref_dequant_mxfp8(q, s, R, K, fmt, c != COMP_DATA, y); break;
	case SCALING_NVFP4: /* native: S_dec only (alpha applies S_enc); a Hadamard-transformed copy has its own S_enc */
		ref_dequant_nvfp4(q, s, R, K, native ? 1.0f : interp_s_enc(t, r, c), y);
		break;
	default: memset(y, 0, sizeof *y * n); break;
	}
	return y;
}

float *interp_dequantize(const Graph *g, const long *dims, const Tensor *t, const RefTensor *r, Component c, int *rows,
	int *k)
{
	return gemm_operand(g, dims, t, r, c, false, rows, k);
}

static int run_gemm(const Graph *g, const long *dims, const Op *op, unsigned flags, RefTensor *t, char *err, size_t errlen)
{
	const Tensor *ta = &g->tensors[op->arg[ARG_A]], *tb = &g->tensors[op->arg[ARG_B]];
	const Tensor *td = &g->tensors[op->arg[ARG_OUT]];
	Component ca = op->p.pass == PASS_WGRAD ? COMP_DATA_T : COMP_DATA;
	Component cb = op->p.pass == PASS_FPROP ? COMP_DATA : COMP_DATA_T;
	bool native = (flags & INTERP_NATIVE_NVFP4) && layout_quantized(ta) && ta->recipe.scaling == SCALING_NVFP4;
	int M, K, N, K2;
	float *A = gemm_operand(g, dims, ta, &t[ta->id], ca, native, &M, &K);
	float *B = gemm_operand(g, dims, tb, &t[tb->id], cb, native, &N, &K2);
	if (K != K2) {
		snprintf(err, errlen, "reference gemm: K mismatch %d vs %d", K, K2);
		free(A);
		free(B);
		return -1;
	}
	RefTensor *rd = &t[td->id];
	free(rd->value);
	rd->value = malloc(sizeof(float) * (size_t)M * (size_t)N + 1);
	ref_gemm(A, B, M, N, K, rd->value);
	if (native) { /* the MMA's FP32 sum times alpha, one FP32 rounding, before the epilogue */
		float alpha = interp_nvfp4_alpha(g, op, t);
		for (size_t i = 0; i < (size_t)M * N; i++)
			rd->value[i] *= alpha;
	}
	if (op->arg[ARG_BIAS] >= 0) {
		const Tensor *tbias = &g->tensors[op->arg[ARG_BIAS]];
		for (int i = 0; i < M; i++)
			for (int j = 0; j < N; j++)
				rd->value[(size_t)i * N + j] += ref_load(t[tbias->id].comp[COMP_DATA], ref_dtype(tbias->dtype), (size_t)j);
	}
	if (op->p.gelu) /* cuBLASLt's GELU epilogue: tanh approximation, after the bias */
		for (size_t i = 0; i < (size_t)M * N; i++)
			rd->value[i] = ref_glu1(TG_ACT_GELU, rd->value[i], 1.0f, 0.0f, 0.0f);
	if (op->p.accumulate && t[td->id].comp[COMP_DATA] && !layout_quantized(td))
		for (size_t i = 0; i < (size_t)M * N; i++)
			rd->value[i] += ref_load(t[td->id].comp[COMP_DATA], ref_dtype(td->dtype), i);
	if (op->arg[ARG_ADD] >= 0) { /* D = A x B (+ bias) + add, one rounding to D's type */
		const Tensor *tc = &g->tensors[op->arg[ARG_ADD]];
		if (!t[tc->id].comp[COMP_DATA]) {
			free(A);
			free(B);
			snprintf(err, errlen, "reference: input '%s' of op %d has no data", tc->name, op->id);
			return -1;
		}
		for (size_t i = 0; i < (size_t)M * N; i++)
			rd->value[i] += ref_load(t[tc->id].comp[COMP_DATA], ref_dtype(tc->dtype), i);
	}
	free(A);
	free(B);
	emit_output(g, dims, td, rd, M, N);
	return 0;
}

/* An FP32 weight gradient's prior value when op accumulates into it (main_grad: the
 * caller's buffer, in r's data), else NULL; the caller frees it. */
static float *prior_of(const Op *op, const RefTensor *r, size_t n)
{
	if (!op->p.accumulate || !r->comp[COMP_DATA])
		return NULL;
	float *p = malloc(sizeof *p * (n ? n : 1));
	memcpy(p, r->comp[COMP_DATA], sizeof *p * n);
	return p;
}

/* dst[i] = prior[i] + dst[i], one FP32 rounding (dreduce.cu's TG_ACCUMULATE); frees prior. */
static void add_prior(float *dst, float *prior, size_t n)
{
	for (size_t i = 0; prior && i < n; i++)
		dst[i] = prior[i] + dst[i];
	free(prior);
}

/* The backward ops through ref/backward.c (the kernels' own FP32 formulas and
 * reduction orders): dglu's d_h quantized like any op output; dnorm's d_x in its
 * dtype and d_gamma/d_beta FP32; dbias FP32; weight gradients added into their prior
 * value where the op accumulates (main_grad). */
static int run_backward(const Graph *g, const long *dims, const Op *op, RefTensor *t, char *err, size_t errlen)
{
	const Tensor *in = &g->tensors[op->arg[ARG_IN]], *out = &g->tensors[op->arg[ARG_OUT]];
	RefTensor *ri = &t[in->id], *ro = &t[out->id];
	for (int a = 0; a < ARG_COUNT; a++)
		if (!arg_is_output((ArgSlot)a) && op->arg[a] >= 0 && !t[op->arg[a]].comp[COMP_DATA]) {
			snprintf(err, errlen, "reference: input '%s' of op %d has no data", g->tensors[op->arg[a]].name, op->id);
			return -1;
		}
	int rows = (int)layout_rows(dims, in), cols = (int)layout_cols(in);
	size_t n = (size_t)rows * (size_t)cols;
	free(ro->value);
	ro->value = malloc(sizeof(float) * (n > (size_t)cols ? n : (size_t)cols)); /* dbias writes cols sums, also at 0 rows */
	if (op->kind == OP_DBIAS) {
		ref_dbias(ri->comp[COMP_DATA], ref_dtype(in->dtype), rows, cols, ro->value);
		add_prior(ro->value, prior_of(op, ro, (size_t)cols), (size_t)cols);
		emit_output(g, dims, out, ro, 1, cols);
		return 0;
	}
	const Tensor *tgr = &g->tensors[op->arg[ARG_GRAD]];
	const void *grad = t[tgr->id].comp[COMP_DATA];
	if (op->kind == OP_DGLU) {
		ref_dglu((int)op->p.act, ri->comp[COMP_DATA], ref_dtype(in->dtype), grad, ref_dtype(tgr->dtype), rows,
			TG_ACT_GATED(op->p.act) ? cols / 2 : cols,
			op->p.limit, op->p.alpha, ro->value);
		if (op->arg[ARG_DBIAS_OUT] >= 0) { /* the fused bias gradient: column sums of d_h's FP32 values */
			const Tensor *tdb = &g->tensors[op->arg[ARG_DBIAS_OUT]];
			float *prior = prior_of(op, &t[tdb->id], (size_t)cols);
			float *db = xalloc(&t[tdb->id], COMP_DATA, layout_comp_bytes(dims, tdb, COMP_DATA));
			ref_dbias(ro->value, REF_F32, rows, cols, db);
			add_prior(db, prior, (size_t)cols);
		}
		emit_output(g, dims, out, ro, rows, cols);
		return 0;
	}
	const Tensor *tgam = &g->tensors[op->arg[ARG_GAMMA]];
	float *gamma = load_f32(tgam, &t[tgam->id], (size_t)cols);
	const float *rsigma = t[op->arg[ARG_RSIGMA]].comp[COMP_DATA];
	const float *mu = op->arg[ARG_MU] >= 0 ? t[op->arg[ARG_MU]].comp[COMP_DATA] : NULL;
	const void *dres = op->arg[ARG_GRAD_RESIDUAL] >= 0 ? t[op->arg[ARG_GRAD_RESIDUAL]].comp[COMP_DATA] : NULL;
	float *dw[2] = {NULL, NULL}, *prior[2] = {NULL, NULL};
	for (int i = 0; i < 2; i++) {
		int id = op->arg[i ? ARG_D_BETA : ARG_D_GAMMA];
		if (id >= 0) {
			prior[i] = prior_of(op, &t[id], (size_t)cols);
			dw[i] = xalloc(&t[id], COMP_DATA, layout_comp_bytes(dims, &g->tensors[id], COMP_DATA));
		}
	}
	ref_dnorm(op->p.norm == NORM_LAYER, ri->comp[COMP_DATA], ref_dtype(in->dtype), rsigma, mu, gamma,
		op->p.zero_centered_gamma, grad, dres, ref_dtype(tgr->dtype),
		ref_dtype(op->arg[ARG_GRAD_RESIDUAL] >= 0 ? g->tensors[op->arg[ARG_GRAD_RESIDUAL]].dtype : tgr->dtype), rows, cols,
		ro->value, dw[0], dw[1]);
	for (int i = 0; i < 2; i++)
		add_prior(dw[i], prior[i], (size_t)cols);
	free(gamma);
	emit_output(g, dims, out, ro, rows, cols);
	return 0;
}

/* adamw through ref/optim.c (tg_optim.h's formula): the weight's data updated in place,
 * its master, m, v made at step 0 (from the weight) or read and updated. */
static int run_adamw(const Graph *g, const long *dims, const Op *op, RefTensor *t, char *err, size_t errlen)
{
	const Tensor *w = &g->tensors[op->arg[ARG_IN]], *gr = &g->tensors[op->arg[ARG_GRAD]];
	RefTensor *rw = &t[w->id];
	if (!rw->comp[COMP_DATA] || !t[gr->id].comp[COMP_DATA]) {
		snprintf(err, errlen, "reference: adamw of '%s' has no weight or gradient data", w->name);
		return -1;
	}
	float fresh[TG_OPTIM_WORDS];
	ref_optim_init(fresh, g->optim.lr);
	const float *st = rw->optim_set ? rw->optim : fresh;
	size_t n = (size_t)layout_rows(dims, w) * (size_t)layout_cols(w);
	for (Component c = COMP_MASTER; c <= COMP_MOM2; c++) {
		if (rw->comp[c])
			continue;
		if (tg_f2u(st[TG_OPTIM_STEP]) != 0) {
			snprintf(err, errlen, "reference: adamw of '%s' at step %u needs its %s", w->name, tg_f2u(st[TG_OPTIM_STEP]),
				comp_name(c));
			return -1;
		}
		rw->comp[c] = calloc(n ? n : 1, sizeof(float));
		rw->bytes[c] = n * sizeof(float);
	}
	RefAdamw h = {g->optim.beta1, g->optim.beta2, g->optim.eps, g->optim.weight_decay};
	float *g32 = NULL; /* a BF16 or FP16 gradient (the weight's grad_dtype) as floats, as the kernel loads it */
	if (gr->dtype != DT_F32) {
		g32 = malloc(sizeof *g32 * (n ? n : 1));
		if (!g32) {
			snprintf(err, errlen, "reference: adamw of '%s': out of memory", w->name);
			return -1;
		}
		ref_load_all(t[gr->id].comp[COMP_DATA], ref_dtype(gr->dtype), n, g32);
	}
	ref_adamw(&h, st, rw->comp[COMP_DATA], ref_dtype(w->dtype), g32 ? g32 : t[gr->id].comp[COMP_DATA],
		rw->comp[COMP_MASTER], rw->comp[COMP_MOM1], rw->comp[COMP_MOM2], n);
	free(g32);
	return 0;
}

int interp_run_op(const Graph *g, const long *dims, int oi, unsigned flags, RefTensor *t, char *err, size_t errlen)
{
	const Op *op = &g->ops[oi];
	if (op->kind == OP_ADAMW)
		return run_adamw(g, dims, op, t, err, errlen);
	if (op->kind == OP_GEMM_CAST)
		return run_gemm(g, dims, op, flags, t, err, errlen);
	if (op->kind == OP_DGLU || op->kind == OP_DNORM || op->kind == OP_DBIAS)
		return run_backward(g, dims, op, t, err, errlen);
	const Tensor *in = &g->tensors[op->arg[ARG_IN]], *out = &g->tensors[op->arg[ARG_OUT]];
	RefTensor *ri = &t[in->id], *ro = &t[out->id];
	if (!ri->comp[COMP_DATA]) {
		snprintf(err, errlen, "reference: input '%s' of op %d has no data", in->name, oi);
		return -1;
	}
	int rows = (int)layout_rows(dims, out), cols = (int)layout_cols(out);
	size_t n = (size_t)rows * (size_t)cols;
	free(ro->value);
	free(ro->slack);
	ro->slack = NULL;
	ro->value = malloc(sizeof(float) * (n ? n : 1));
	switch (op->kind) {
	case OP_NORM_QUANTIZE: {
		const Tensor *tg = &g->tensors[op->arg[ARG_GAMMA]];
		float *gamma = load_f32(tg, &t[tg->id], (size_t)cols);
		float *beta = NULL;
		if (op->arg[ARG_BETA] >= 0) {
			const Tensor *tbeta = &g->tensors[op->arg[ARG_BETA]];
			beta = load_f32(tbeta, &t[tbeta->id], (size_t)cols);
		}
		const void *res = op->arg[ARG_RESIDUAL] >= 0 ? t[op->arg[ARG_RESIDUAL]].comp[COMP_DATA] : NULL;
		void *res_out = NULL;
		if (op->arg[ARG_RESIDUAL_OUT] >= 0) {
			const Tensor *tr = &g->tensors[op->arg[ARG_RESIDUAL_OUT]];
			res_out = xalloc(&t[tr->id], COMP_DATA, layout_comp_bytes(dims, tr, COMP_DATA));
		}
		float *stat[2] = {NULL, NULL}; /* the saved rsigma and mu, FP32 [rows][1] */
		for (int i = 0; i < 2; i++) {
			int id = op->arg[i ? ARG_MU_OUT : ARG_RSIGMA_OUT];
			if (id >= 0)
				stat[i] = xalloc(&t[id], COMP_DATA, layout_comp_bytes(dims, &g->tensors[id], COMP_DATA));
		}
		if (op->p.norm == NORM_LAYER) {
			/* the checker's bound on a block scale (cli/block_scales.c) */
			if (layout_quantized(out) && out->recipe.scaling == SCALING_BLOCK1X128)
				ro->slack = malloc(sizeof(float) * (n ? n : 1));
			ref_layernorm(ri->comp[COMP_DATA], res, res_out, ref_dtype(in->dtype), gamma, beta, op->p.zero_centered_gamma,
				op->p.eps, rows, cols, ro->value, stat[1], stat[0], ro->slack);
		} else
			ref_rmsnorm(ri->comp[COMP_DATA], res, res_out, ref_dtype(in->dtype), gamma, op->p.zero_centered_gamma,
				op->p.eps, rows, cols, ro->value, stat[0]);
		free(gamma);
		free(beta);
		break;
	}
	case OP_GLU_AMAX:
		ref_glu((int)op->p.act, ri->comp[COMP_DATA], ref_dtype(in->dtype), rows, cols, op->p.limit, op->p.alpha, ro->value);
		break;
	default: {
		float *x = load_f32(in, ri, n);
		memcpy(ro->value, x, sizeof(float) * n);
		free(x);
		break;
	}
	}
	emit_output(g, dims, out, ro, rows, cols);
	return 0;
}

int interp_run(const Graph *g, const long *dims, RefTensor *t, char *err, size_t errlen)
{
	for (int oi = 0; oi < g->nops; oi++)
		if (interp_run_op(g, dims, oi, 0, t, err, errlen))
			return -1;
	return 0;
}

void interp_free(const Graph *g, RefTensor *t)
{
	for (int i = 0; i < g->ntensors; i++) {
		for (int c = 0; c < COMP_COUNT; c++)
			if (t[i].owned || c == COMP_MASTER || c == COMP_MOM1 || c == COMP_MOM2)
				free(t[i].comp[c]);
		free(t[i].value);
		free(t[i].slack);
		memset(&t[i], 0, sizeof t[i]);
	}
}

float interp_s_enc(const Tensor *t, const RefTensor *r, Component copy)
{
	return tensor_s_enc_comp(t, copy) == COMP_SCALE_T ? r->scale_t : r->scale;
}

float interp_nvfp4_alpha(const Graph *g, const Op *op, const RefTensor *t)
{
	const Tensor *ta = &g->tensors[op->arg[ARG_A]], *tb = &g->tensors[op->arg[ARG_B]];
	Component ca = op->p.pass == PASS_WGRAD ? COMP_DATA_T : COMP_DATA;
	Component cb = op->p.pass == PASS_FPROP ? COMP_DATA : COMP_DATA_T;
	return tg_nvfp4_gemm_alpha(interp_s_enc(ta, &t[ta->id], ca), interp_s_enc(tb, &t[tb->id], cb));
}
