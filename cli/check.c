/* check.c: run a layer on the GPU with random inputs and compare every output
 * component with the reference interpreter, under the numerics contract:
 *  - casts and per-element ops (quantize, cast_transpose): bit-exact bytes,
 *    scales and amax; NVFP4: data nibbles, E4M3 block scales, global amax and
 *    S_enc (with nvfp4_rht also the columnwise copy's amax_t and S_enc), also after a norm or GLU
 *    run unfused (its FP32 value is judged by the rule below, then the cast of the GPU's value bit
 *    for bit); a fused norm's or GLU's NVFP4 copies by the rule below, under the GPU's S_enc
 *    (adopt_nvfp4); a fused dglu's bit for bit, like every backward op;
 *  - ops with a reduction or a transcendental (norm_quantize, glu_amax): each
 *    element within one unit in the last place of its format, and at most
 *    ceil(1e-4 * n) elements off at all, not counting one whose reference value lies at a
 *    rounding midpoint (near_ties, block_scales.h); amax within 1e-6 relative; the rsigma
 *    and mu a norm saves: relative error under 1e-6 (the kernel's own FP32 order), a
 *    LayerNorm's mu also passes with every row within 1e-6 of its RMS sqrt(mu^2 + 1/rsigma^2)
 *    (a mean that cancels: cmp_mu);
 *  - backward ops (dglu, dnorm, dbias): bit-exact bytes, scales and amax (the
 *    kernels follow ref/backward.c's FP32 formulas and reduction orders, so
 *    d_gamma, d_beta and dbias are the same bits for every tile shape; a dglu run as the
 *    generated GEMM's epilogue, whose sigmoid is on the SFU, by the rule above);
 *  - GEMMs (cuBLASLt, other summation order): relative Frobenius error of the
 *    decoded output under 2^-7 (BF16/FP16 out) or 2^-3 (FP8 out). A native
 *    NVFP4 GEMM (sm_100+) is referenced the way it computes (block-scaled
 *    products, then alpha = 1/(S_enc_a*S_enc_b) from the GPU's S_enc), and the
 *    alpha and beta its alpha kernel wrote are checked bit for bit.
 * A layer with a backward phase runs tg_run, then tg_backward, before the comparison.
 * With an optimizer, tg_optimizer_step follows once the run's ops are judged: each
 * weight, its master, m and v bit for bit (ref/optim.c), then the weights' quantized
 * copies the step remade, against the reference cast of the updated weights.
 * Used by `tegen run --check` and tests/gpu/test_gpu.c. */
#include "block_scales.h"
#include "check.h"
#include "compare.h"

#include "cudrv.h"
#include "interp.h"
#include "layout.h"
#include "npy.h"
#include "ref.h"
#include "refrun.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A host copy of component c of tensor i as the run left it (NULL when the layer has none); *bytes its size. */
static void *download(TgLayer *l, int i, Component c, size_t *bytes)
{
	void *h;
	if (tg_layer_download(l, i, c, &h, bytes) || !*bytes) {
		free(h);
		*bytes = 0;
		return NULL;
	}
	return h;
}

/* An op whose cast runs unfused (norm, GLU, dglu with an NVFP4 output, or a block1x128 one with a columnwise
 * copy: op_writes_hp): its FP32 value (component hp)
 * is judged per element like any FP32 output (the kernels compute FP32 outputs in
 * double, as the reference does), then the
 * reference quantizes the GPU's value, so the cast is checked bit for bit. */
static int check_unfused_hp(TgLayer *l, const Graph *g, const long *dims, int i, RefTensor *r, long tokens, Buf *out)
{
	const Tensor *t = &g->tensors[i];
	size_t bytes = 0, n = (size_t)layout_rows(dims, t) * (size_t)layout_cols(t);
	if (n == 0) /* no rows (rows tokens - 1 at 1 token): no intermediate to judge, nothing to quantize */
		return 0;
	float *h = download(l, i, COMP_HP, &bytes);
	if (!h || bytes != n * sizeof(float)) {
		buf_printf(out, "FAIL %s %s.hp: no FP32 intermediate of %zu bytes on the GPU\n", g->layer, t->name, n * sizeof(float));
		free(h);
		return 1;
	}
	char what[256];
	snprintf(what, sizeof what, "%s %s.hp [tokens=%ld]", g->layer, t->name, tokens);
	int fails = cmp_buffers(out, what, CMP_ULP, DT_F32, h, r->value, bytes, 32, 0);
	memcpy(r->value, h, bytes);
	free(h);
	interp_quantize(g, dims, t, r);
	return fails;
}

/* Block scales of a fused norm or GLU (rowwise or, col, columnwise copy): the GPU's scales are taken
 * into the reference where block_scales.h's rule allows (a few ulps, or one power of two with the
 * block quantized again), so the data comparison that follows judges the codes under one scale (a
 * few-ulp scale moves at most a code here and there, which that comparison allows); more, or scales
 * further apart, are left to fail. */
static void adopt_block_scales_of(TgLayer *l, const Graph *g, const long *dims, int i, RefTensor *r, long tokens,
	bool col, Buf *out)
{
	const Tensor *t = &g->tensors[i];
	Component sc = col ? COMP_SCALE_INV_T : COMP_SCALE_INV, dc = col ? COMP_DATA_T : COMP_DATA;
	size_t bytes = 0;
	if (!(col ? t->columnwise : t->rowwise) || !r->value || !r->comp[sc] || !r->comp[dc])
		return;
	unsigned char *h = download(l, i, sc, &bytes);
	if (!h || bytes != r->bytes[sc]) {
		free(h);
		return;
	}
	size_t close, moved;
	long blocks = block_scales_adopt(t, layout_rows(dims, t), layout_cols(t), col, h, r, &close, &moved);
	free(h);
	if (close || moved)
		buf_printf(out, "ok %s %s.%s [tokens=%ld]: %zu of %ld block scales taken from the GPU (the block amax in float on "
			"the GPU, in double in the reference): %zu close (within %d ulps, a LayerNorm's slack, every code zero, or every "
			"value below FLT_MIN), "
			"%zu one power of two apart\n", g->layer, t->name, col ? "scale_inv_t" : "scale_inv", tokens, close + moved,
			blocks, close, TG_BLOCK_SCALE_ULPS, moved);
}

static void adopt_block_scales(TgLayer *l, const Graph *g, const long *dims, int i, RefTensor *r, long tokens, Buf *out)
{
	adopt_block_scales_of(l, g, dims, i, r, tokens, false, out);
	adopt_block_scales_of(l, g, dims, i, r, tokens, true, out);
}

/* The GPU's block scales (component sc) of one NVFP4 copy x [rows][cols] taken into the reference's by
 * nvfp4_scales_adopt (block_scales.h) while *budget lasts. Returns the blocks (tiles) taken. */
static size_t adopt_nvfp4_blocks(TgLayer *l, int i, Component sc, const float *x, long rows, long cols, const RefNvfp4 *opt,
	float s_enc, uint8_t *q, uint8_t *sr, size_t *budget)
{
	size_t bytes = 0, moved;
	unsigned char *h = download(l, i, sc, &bytes);
	if (!h || bytes != (size_t)(rows * ((cols + 15) / 16))) {
		free(h);
		return 0;
	}
	moved = nvfp4_scales_adopt(h, x, rows, cols, opt, s_enc, q, sr, budget);
	free(h);
	return moved;
}

/* The NVFP4 copies of a fused norm, GLU or dglu that are not bit-exact (a norm's and a GLU's). The kernels
 * compute the op's value in float, the reference in double (README), so the global amax can differ by an
 * FP32 rounding (judged within 1e-6 afterwards), and with it S_enc: the reference is quantized again with
 * the GPU's global amax (the columnwise copy with nvfp4_rht: with the GPU's amax_t), so that S_enc is then
 * judged bit for bit against the GPU's amax. A block's amax can differ the same way and straddle an E4M3
 * rounding boundary: a scale one code from the reference's is taken into it, and the block's codes are
 * encoded again from the reference value under that scale, on the data comparison's budget (1e-4 of the
 * blocks of both copies, 16x16 tiles with nvfp4_2d, at least 4); more, or scales further apart, fail. */
static void adopt_nvfp4(TgLayer *l, const Graph *g, const long *dims, int i, RefTensor *r, const float *hstate,
	const TgStateLayout *lay, long tokens, Buf *out)
{
	const Tensor *t = &g->tensors[i];
	float gpu_amax = hstate[lay->amax + (size_t)t->state_slot];
	bool rht = t->state_slot_t >= 0 && tensor_rht_t(t);
	float gpu_amax_t = rht ? hstate[lay->amax + (size_t)t->state_slot_t] : gpu_amax;
	if (!r->value || !(fabsf(gpu_amax - r->amax) <= 1e-6f * r->amax) ||
		(rht && !(fabsf(gpu_amax_t - r->amax_t) <= 1e-6f * r->amax_t)))
		return;
	long rows = layout_rows(dims, t), cols = layout_cols(t);
	RefNvfp4 opt = {t->recipe.nvfp4_2d, t->recipe.nvfp4_sr, tensor_sr_seed(g, t), r->sr_offset, gpu_amax};
	size_t blocks = 0, moved = 0, budget;
	long tr = t->recipe.nvfp4_2d ? (rows + 15) / 16 : rows, tc = t->recipe.nvfp4_2d ? (cols + 15) / 16 : cols; /* tiles */
	blocks += t->rowwise ? (size_t)(tr * ((cols + 15) / 16)) : 0;
	blocks += t->columnwise ? (size_t)(tc * ((rows + 15) / 16)) : 0;
	budget = (blocks + 9999) / 10000;
	budget = budget < 4 ? 4 : budget;
	if (t->rowwise && r->comp[COMP_DATA] && r->comp[COMP_SCALE_INV]) {
		uint8_t *q = r->comp[COMP_DATA], *sr = r->comp[COMP_SCALE_INV];
		ref_quant_nvfp4(r->value, (int)rows, (int)cols, &opt, q, sr, &r->scale);
		moved += adopt_nvfp4_blocks(l, i, COMP_SCALE_INV, r->value, rows, cols, &opt, r->scale, q, sr, &budget);
	} else
		r->scale = tg_nvfp4_s_enc(gpu_amax);
	if (t->columnwise && r->comp[COMP_DATA_T] && r->comp[COMP_SCALE_INV_T]) {
		size_t n = (size_t)rows * (size_t)cols;
		float *xt = malloc(sizeof *xt * (n ? n : 1)), s_enc_t;
		ref_transpose(r->value, (int)rows, (int)cols, xt);
		if (rht)
			ref_rht_rows(xt, (int)cols, (int)rows, tg_rht_sign_mask(TG_RHT_SEED), xt);
		opt.global_amax = gpu_amax_t;
		uint8_t *q = r->comp[COMP_DATA_T], *sr = r->comp[COMP_SCALE_INV_T];
		ref_quant_nvfp4(xt, (int)cols, (int)rows, &opt, q, sr, &s_enc_t);
		if (rht)
			r->scale_t = s_enc_t;
		moved += adopt_nvfp4_blocks(l, i, COMP_SCALE_INV_T, xt, cols, rows, &opt, s_enc_t, q, sr, &budget);
		free(xt);
	}
	buf_printf(out, "ok %s %s: the reference quantized again with the GPU's global amax (%.9g, reference %.9g)%s\n",
		g->layer, t->name, gpu_amax, r->amax, moved ? "" : "; every block scale as the reference's");
	if (moved)
		buf_printf(out, "ok %s %s.scale_inv%s [tokens=%ld]: %zu of %zu block scales one E4M3 code from the reference's "
			"(the block amax in float on the GPU, in double in the reference)\n", g->layer, t->name,
			t->rowwise && t->columnwise ? "/_t" : t->rowwise ? "" : "_t", tokens, moved, blocks);
}

/* The amax of a per-tensor FP8 output must be exact on the kernel's own values:
 * |x| -> fmt(|x| * scale) is monotonic (RN and saturation both are), so the largest
 * code the kernel wrote must be the code of amax * scale, bit for bit. This catches
 * an amax taken over other values than those written (a recomputation, padding,
 * another rounding) that the 1e-6 comparison with the reference would let pass. */
static int check_amax_own(Buf *out, const Graph *g, const Tensor *t, const RefTensor *r, float amax, float scale)
{
	Component c = r->comp[COMP_DATA] ? COMP_DATA : COMP_DATA_T;
	const uint8_t *q = r->comp[c];
	int fmt = t->dtype == DT_E4M3 ? TG_FMT_E4M3 : TG_FMT_E5M2;
	if (!q || !r->bytes[c] || isnan(amax))
		return 0;
	float big = 0.0f;
	for (size_t i = 0; i < r->bytes[c]; i++) {
		float v = fabsf(tg_fmt_to_f32(q[i], fmt));
		if (v > big && !isnan(v))
			big = v;
	}
	float want = fabsf(tg_fmt_to_f32(tg_f32_to_fmt(amax * scale, fmt), fmt));
	bool ok = big == want;
	buf_printf(out, "%s %s %s.amax on its own values (largest code %.9g, fmt(amax*scale) %.9g)\n", ok ? "ok" : "FAIL",
		g->layer, t->name, big, want);
	return !ok;
}

/* nvfp4_rht: the columnwise copy's own global amax (over the transformed values)
 * and S_enc in its state slot, judged like the tensor's; downstream ops (the
 * dequantized wgrad operand) then read the GPU's S_enc. */
static int check_rht_state(const Graph *g, const Tensor *t, RefTensor *r, const float *hstate, const TgStateLayout *lay,
	bool exact, bool gemm, Buf *out)
{
	size_t s = (size_t)t->state_slot_t;
	char what[256];
	snprintf(what, sizeof what, "%s %s.amax_t", g->layer, t->name);
	int fails = cmp_float(out, what, hstate[lay->amax + s], r->amax_t, exact ? 0 : gemm ? 1e-3 : 1e-6);
	snprintf(what, sizeof what, "%s %s.s_enc_t", g->layer, t->name);
	fails += cmp_float(out, what, hstate[lay->scale + lay->stride * s], r->scale_t, 0);
	r->scale_t = hstate[lay->scale + lay->stride * s];
	return fails;
}

void check_keep_free(CheckKeep *keep)
{
	for (int i = 0; keep && i < keep->n; i++)
		if (keep->dev[i])
			cu.cuMemFree_v2(keep->dev[i]);
	if (keep) {
		free(keep->dev);
		keep->dev = NULL;
		keep->n = 0;
	}
}

/* Does the plan run op oi's GEMM natively in NVFP4 (alpha on the device)? */
static bool gemm_native_nvfp4(const Plan *p, int oi)
{
	for (int i = 0; i < p->nkernels; i++) {
		const Kernel *k = &p->kernels[i];
		if (k->kind == KERNEL_GEMM && k->gemm.op == oi)
			return !k->gemm.emulated && k->gemm.scaling == SCALING_NVFP4;
	}
	return false;
}

/* The {alpha, beta} a native NVFP4 GEMM read, bit for bit: alpha =
 * tg_nvfp4_gemm_alpha of the GPU's S_enc of the copies it read (already in rt;
 * scale_t for a Hadamard-transformed copy), beta = accumulate. */
static int check_gemm_alpha(TgLayer *l, const Graph *g, const Op *op, const RefTensor *rt, Buf *out)
{
	const Tensor *td = &g->tensors[op->arg[ARG_OUT]];
	float want[2] = {interp_nvfp4_alpha(g, op, rt), op->p.accumulate ? 1.0f : 0.0f};
	float got[2];
	void *dp;
	size_t bytes;
	if (tg_layer_tensor_component(l, td->id, COMP_ALPHA, &dp, &bytes) || bytes != sizeof got) {
		buf_printf(out, "FAIL %s %s.alpha: the native NVFP4 GEMM has no alpha buffer\n", g->layer, td->name);
		return 1;
	}
	cu.cuMemcpyDtoH_v2(got, (CUdeviceptr)(uintptr_t)dp, sizeof got);
	if (memcmp(got, want, sizeof got)) {
		buf_printf(out, "FAIL %s %s.alpha: gpu {%a, %a}, reference {%a, %a} (1/(S_enc_a*S_enc_b), beta)\n", g->layer,
			td->name, got[0], got[1], want[0], want[1]);
		return 1;
	}
	buf_printf(out, "ok %s %s.alpha: {%a, %a} bit-exact\n", g->layer, td->name, got[0], got[1]);
	return 0;
}

/* The optimizer state before this step, for the reference: the layer's state words and,
 * past the first step, each updated weight's master, m and v (the bound weight is only
 * read at the first step). */
static int optim_before(TgLayer *l, const Graph *g, const long *dims, RefTensor *rt, char *err, size_t errlen)
{
	if (g->optim.kind == OPTIM_NONE)
		return 0;
	float st[TG_OPTIM_WORDS];
	void *dev = tg_layer_load(l) ? NULL : tg_layer_optim_state(l);
	if (!dev || cu.cuMemcpyDtoH_v2(st, (CUdeviceptr)(uintptr_t)dev, sizeof st)) {
		snprintf(err, errlen, "cannot read the optimizer state");
		return -1;
	}
	uint32_t step;
	memcpy(&step, &st[TG_OPTIM_STEP], sizeof step);
	for (int k = 0; k < g->nops; k++) {
		if (g->ops[k].kind != OP_ADAMW)
			continue;
		int i = g->ops[k].arg[ARG_IN];
		memcpy(rt[i].optim, st, sizeof st);
		rt[i].optim_set = 1;
		for (Component c = COMP_MASTER; step && c <= COMP_MOM2; c++) {
			size_t bytes = 0;
			void *h = download(l, i, c, &bytes);
			if (!h || bytes != layout_comp_bytes(dims, &g->tensors[i], c)) {
				free(h);
				snprintf(err, errlen, "cannot read %s.%s", g->tensors[i].name, comp_name(c));
				return -1;
			}
			rt[i].comp[c] = h;
			rt[i].bytes[c] = bytes;
		}
	}
	return 0;
}

/* adamw (bit-exact with ref/optim.c): the weight updated in place, its master, m and v. */
static int check_adamw(TgLayer *l, const Graph *g, const Op *op, RefTensor *rt, long tokens, Buf *out)
{
	int i = op->arg[ARG_IN], fails = 0;
	const Tensor *w = &g->tensors[i];
	static const Component comps[] = {COMP_DATA, COMP_MASTER, COMP_MOM1, COMP_MOM2};
	for (int k = 0; k < 4; k++) {
		Component c = comps[k];
		size_t bytes = 0;
		char what[256];
		snprintf(what, sizeof what, "%s %s.%s [tokens=%ld]", g->layer, w->name, comp_name(c), tokens);
		void *h = download(l, i, c, &bytes);
		if (!h || bytes != rt[i].bytes[c]) {
			buf_printf(out, "FAIL %s: gpu has %zu bytes, reference %zu\n", what, bytes, rt[i].bytes[c]);
			free(h);
			fails++;
			continue;
		}
		fails += cmp_buffers(out, what, CMP_EXACT, c == COMP_DATA ? w->dtype : DT_F32, h, rt[i].comp[c], bytes, 8, 0);
		free(h);
	}
	return fails;
}

/* Upload the reference's inputs (and the initial values of what ops accumulate into) to new device
 * buffers dev[i] and bind them to l; -1 with err on failure. */
static int bind_inputs(TgLayer *l, const Graph *g, const long *dims, const RefTensor *rt, CUdeviceptr *dev, char *err,
	size_t errlen)
{
	static const TgDtype map[DT_COUNT] = {[DT_F32] = TG_FP32, [DT_BF16] = TG_BF16, [DT_F16] = TG_FP16,
		[DT_E4M3] = TG_E4M3, [DT_E5M2] = TG_E5M2};
	for (int i = 0; i < g->ntensors; i++) {
		const Tensor *t = &g->tensors[i];
		if (t->producer >= 0 && !refrun_accumulated(g, i))
			continue;
		size_t bytes = rt[i].bytes[COMP_DATA];
		if (cu.cuMemAlloc_v2(&dev[i], bytes ? bytes : 16) || cu.cuMemcpyHtoD_v2(dev[i], rt[i].comp[COMP_DATA], bytes)) {
			snprintf(err, errlen, "cannot allocate or upload input '%s'", t->name);
			return -1;
		}
		TgTensorDesc desc = {(void *)(uintptr_t)dev[i], map[t->dtype], t->rank, {0}, {0}};
		for (int k = 0; k < t->rank; k++)
			desc.shape[k] = layout_extent(dims, t->shape[k]);
		if (tg_bind(l, t->name, &desc)) {
			snprintf(err, errlen, "%s", tg_last_error());
			return -1;
		}
	}
	return 0;
}

/* The op fused as GEMM kernel k's epilogue (its glu or dglu), -1 none. */
static int epilogue_op(const Kernel *k)
{
	return k->kind != KERNEL_GEMM ? -1 : k->gemm.glu >= 0 ? k->gemm.glu : k->gemm.dglu;
}

/* Did op run as a GEMM's epilogue in the last run (its own kernel skipped)? */
static bool ran_as_epilogue(const TgLayer *l, const Op *op)
{
	const Plan *p = tg_layer_plan(l);
	for (int i = 0; i < p->nkernels; i++)
		if (p->kernels[i].epilogue_of >= 0 && p->kernels[i].nops && p->kernels[i].ops[0] == op->id &&
			tg_layer_kernel_skipped(l, i))
			return true;
	return false;
}

/* The BF16 operands of emulated MXFP8 and NVFP4 GEMMs (deq, deq_t: written by the quantizing kernel or
 * dequantize.cu / nvfp4_dequantize.cu) against their copies' codes and scales (NVFP4: and S_enc) as the run left
 * them, bit for bit (mx_deq_mismatches, nvfp4_deq_mismatches); `when` ("" or a note in the message) tells the
 * run they follow. Returns the failures. */
static int check_deq_copies(TgLayer *l, const Graph *g, const long *dims, long tokens, const char *when, Buf *out)
{
	int fails = 0;
	for (int i = 0; i < g->ntensors; i++) {
		const Tensor *t = &g->tensors[i];
		bool nv = t->recipe.scaling == SCALING_NVFP4;
		if (!layout_quantized(t) || (t->recipe.scaling != SCALING_MXFP8 && !nv))
			continue;
		for (int col = 0; col < 2; col++) {
			size_t nd, nq, ns, nse = 0;
			uint16_t *deq = download(l, i, col ? COMP_DEQ_T : COMP_DEQ, &nd);
			if (!deq)
				continue; /* no emulated GEMM reads this copy */
			unsigned char *q = download(l, i, col ? COMP_DATA_T : COMP_DATA, &nq);
			unsigned char *sc = download(l, i, col ? COMP_SCALE_INV_T : COMP_SCALE_INV, &ns);
			float *s_enc = nv ? download(l, i, tensor_s_enc_comp(t, col ? COMP_DATA_T : COMP_DATA), &nse) : NULL;
			long rows = layout_rows(dims, t), cols = layout_cols(t), first = -1;
			if (!q || !sc || (nv && (!s_enc || nse < sizeof *s_enc)) ||
				nd != layout_comp_bytes(dims, t, col ? COMP_DEQ_T : COMP_DEQ) ||
				nq != layout_comp_bytes(dims, t, col ? COMP_DATA_T : COMP_DATA) ||
				ns < layout_comp_bytes(dims, t, col ? COMP_SCALE_INV_T : COMP_SCALE_INV)) {
				buf_printf(out, "FAIL %s %s.%s [tokens=%ld%s]: cannot read it with its copy and scales\n", g->layer,
					t->name, comp_name(col ? COMP_DEQ_T : COMP_DEQ), tokens, when);
				fails++;
			} else {
				size_t bad = nv ? nvfp4_deq_mismatches(q, sc, *s_enc, deq, rows, cols, col, &first)
					: mx_deq_mismatches(q, sc, deq, rows, cols, col, t->dtype == DT_E5M2 ? TG_FMT_E5M2 : TG_FMT_E4M3,
						&first);
				if (bad) {
					buf_printf(out, "FAIL %s %s.%s [tokens=%ld%s]: %zu of %ld BF16 values are not the copy's codes times "
						"their scales (first at element %ld: 0x%04x)\n", g->layer, t->name,
						comp_name(col ? COMP_DEQ_T : COMP_DEQ), tokens, when, bad, rows * cols, first, deq[first]);
					fails++;
				} else {
					buf_printf(out, "ok %s %s.%s [tokens=%ld%s]: %ld BF16 values = codes x scales\n", g->layer, t->name,
						comp_name(col ? COMP_DEQ_T : COMP_DEQ), tokens, when, rows * cols);
				}
			}
			free(deq);
			free(q);
			free(sc);
			free(s_enc);
		}
	}
	return fails;
}

/* A GEMM kernel with a GLU or dglu epilogue writes D (the op's input) only when asked: the checked run
 * kept it (tg_layer_keep_intermediates) to judge each op; here the layer runs again without it (the
 * forward, and the backward where a dglu is fused), and the op's output must be the same bytes. Skipped
 * (0) where a second run would change them: an optimizer's updated weights, or a forward GEMM that
 * accumulates. Returns the failures. */
static int check_epilogues_without_d(TgLayer *l, const Graph *g, Buf *out)
{
	const Plan *p = tg_layer_plan(l);
	static const Component comps[2] = {COMP_DATA, COMP_DATA_T}; /* the output's rowwise and columnwise copies */
	bool fused = false, accumulates = false, bwd = plan_has_phase(p, PHASE_BACKWARD);
	int fails = 0;
	for (int i = 0; i < p->nkernels; i++)
		fused |= epilogue_op(&p->kernels[i]) >= 0;
	for (int i = 0; i < g->nops; i++)
		accumulates |= g->ops[i].kind == OP_GEMM_CAST && g->ops[i].p.accumulate && g->ops[i].phase == PHASE_FORWARD;
	if (!fused || accumulates || g->optim.kind != OPTIM_NONE)
		return 0;
	unsigned char **before = calloc((size_t)p->nkernels * 2, sizeof *before);
	size_t *nb = calloc((size_t)p->nkernels * 2, sizeof *nb);
	for (int i = 0; i < 2 * p->nkernels; i++) {
		const Kernel *k = &p->kernels[i / 2];
		if (epilogue_op(k) >= 0)
			before[i] = download(l, g->ops[epilogue_op(k)].arg[ARG_OUT], comps[i % 2], &nb[i]);
	}
	tg_layer_keep_intermediates(l, false);
	if (tg_run(l, NULL) || (bwd && tg_backward(l, NULL)) || cu.cuCtxSynchronize()) {
		buf_printf(out, "  FAIL the layer again without the epilogues' D: %s\n", tg_last_error());
		fails++;
	}
	for (int i = 0; i < 2 * p->nkernels && !fails; i++) {
		const Kernel *k = &p->kernels[i / 2];
		size_t n;
		unsigned char *after = before[i] ? download(l, g->ops[epilogue_op(k)].arg[ARG_OUT], comps[i % 2], &n) : NULL;
		if (!after)
			continue;
		size_t diff = 0;
		for (size_t j = 0; j < n && n == nb[i]; j++)
			diff += before[i][j] != after[j];
		const char *name = g->tensors[g->ops[epilogue_op(k)].arg[ARG_OUT]].name, *copy = i % 2 ? " (columnwise)" : "";
		if (diff || n != nb[i]) {
			buf_printf(out, "  FAIL %s: %s%s from the epilogue without D differs in %zu of %zu bytes\n", k->name, name, copy,
				diff, n);
			fails++;
		} else
			buf_printf(out, "  ok   %s: %s%s from the epilogue without D: the same %zu bytes\n", k->name, name, copy, n);
		free(after);
	}
	for (int i = 0; i < 2 * p->nkernels; i++)
		free(before[i]);
	free(before);
	free(nb);
	return fails;
}

/* A LayerNorm's saved mu (FP32 [rows]) against the reference: the relative error of the whole buffer under
 * 1e-6, or, where a row's mean cancels (x + residual summing to near zero, so the float sum's few-ulp error is
 * large against mu itself), every row within 1e-6 of the row's RMS, sqrt(mu^2 + sigma^2), sigma = 1/rsigma
 * from the reference (rs_ref; NULL: the first rule alone). Appends the line; 1 on FAIL. */
static int cmp_mu(Buf *out, const char *what, const float *gpu, const float *ref, const float *rs_ref, size_t rows)
{
	Buf quiet = {0};
	int fails = cmp_buffers(&quiet, what, CMP_REL, DT_F32, gpu, ref, rows * 4, 32, 1e-6);
	if (fails && rs_ref) {
		size_t bad = 0, first = 0;
		for (size_t r = 0; r < rows; r++) {
			double m = ref[r], sigma = 1.0 / (double)rs_ref[r], rms = sqrt(m * m + sigma * sigma);
			if (!(fabs((double)gpu[r] - m) <= 1e-6 * rms) && !(isnan(gpu[r]) && isnan(ref[r])) && !bad++)
				first = r;
		}
		if (!bad) {
			buf_printf(out, "ok %s (every row within 1e-6 of its RMS: a mean that cancels, relative error over 1e-6)\n",
				what);
			buf_free(&quiet);
			return 0;
		}
		buf_printf(out, "FAIL %s: %zu of %zu rows off by more than 1e-6 of the row's RMS (first: row %zu, gpu %.9g ref %.9g)\n",
			what, bad, rows, first, gpu[first], ref[first]);
		buf_free(&quiet);
		return 1;
	}
	buf_printf(out, "%s", quiet.len ? quiet.p : "");
	buf_free(&quiet);
	return fails;
}

/* The GPU's outputs of op's output slot a (tensor i), every component the reference has, against the
 * reference; then its amax, scale_inv / S_enc and RHT state. pass, trained_cast and amax0: see
 * check_layer (a delayed trained weight's amax holds both casts' maxima). Returns the failures. */
static int check_output(TgLayer *l, const Graph *g, const long *dims, const Op *op, int a, RefTensor *rt,
	const float *hstate, const TgStateLayout *lay, int pass, bool trained_cast, float *amax0, long tokens, Buf *out)
{
	int i = op->arg[a], fails = 0;
	const Tensor *t = &g->tensors[i];
	/* the op table's tolerance class: the backward kernels are bit-exact with ref/backward.c
	 * (the same FP32 formulas and reduction orders, d_gamma/d_beta/dbias in the fixed chunk
	 * order), so their rows say TOL_EXACT; a dglu run as the generated GEMM's epilogue (its sigmoid
	 * on the SFU, as the GLU epilogue's) is judged by the transcendental ops' rule */
	bool elementwise = op_tolerance(op->kind) == TOL_EXACT && !(op->kind == OP_DGLU && ran_as_epilogue(l, op));
	bool gemm = op_tolerance(op->kind) == TOL_GEMM;
	bool q = layout_quantized(t);
	bool nv = q && t->recipe.scaling == SCALING_NVFP4, exact = elementwise;
	if (a == ARG_OUT && op_writes_hp(g, op) && !gemm) {
		fails += check_unfused_hp(l, g, dims, i, &rt[i], tokens, out);
		exact = true;
	} else if (a == ARG_OUT && q && !exact && op_family(op->kind) == OPF_ROW &&
		(t->recipe.scaling == SCALING_BLOCK1X128 || t->recipe.scaling == SCALING_MXFP8))
		adopt_block_scales(l, g, dims, i, &rt[i], tokens, out);
	else if (a == ARG_OUT && nv && !exact && op_family(op->kind) == OPF_ROW && t->state_slot >= 0)
		adopt_nvfp4(l, g, dims, i, &rt[i], hstate, lay, tokens, out);
	for (int c = COMP_DATA; c <= COMP_SCALE_INV_T; c++) {
		if (!rt[i].comp[c] || c == COMP_SCALE)
			continue;
		void *h;
		size_t bytes;
		if (tg_layer_download(l, i, (Component)c, &h, &bytes))
			continue;
		if (bytes != rt[i].bytes[c]) {
			buf_printf(out, "FAIL %s.%s: gpu has %zu bytes, reference %zu\n", t->name, comp_name(c), bytes,
				rt[i].bytes[c]);
			free(h);
			fails++;
			continue;
		}
		char what[256];
		snprintf(what, sizeof what, "%s %s.%s [tokens=%ld]", g->layer, t->name, comp_name(c), tokens);
		bool data = c == COMP_DATA || c == COMP_DATA_T;
		bool stat = a == ARG_RSIGMA_OUT || a == ARG_MU_OUT; /* the forward's own FP32 order: a few ulps */
		int rs = op->arg[ARG_RSIGMA_OUT];
		if (a == ARG_MU_OUT && t->dtype == DT_F32 && c == COMP_DATA)
			fails += cmp_mu(out, what, h, rt[i].comp[c], rs >= 0 ? rt[rs].comp[COMP_DATA] : NULL, bytes / 4);
		else if (stat)
			fails += cmp_buffers(out, what, CMP_REL, t->dtype, h, rt[i].comp[c], bytes, 32, 1e-6);
		else if (gemm)
			fails += cmp_buffers(out, what, CMP_REL, t->dtype, h, rt[i].comp[c], bytes, dtype_bits(t->dtype),
				q ? 0.125 : 1.0 / 128);
		else if (exact || !data)
			fails += cmp_buffers(out, what, CMP_EXACT, t->dtype, h, rt[i].comp[c], bytes, 8, 0);
		else {
			uint8_t *tie = nv ? NULL : near_ties(t, &rt[i], (Component)c, layout_rows(dims, t), layout_cols(t), h,
				rt[i].comp[c]);
			fails += cmp_ulp_ties(out, what, t->dtype, h, rt[i].comp[c], bytes, dtype_bits(t->dtype), false, tie);
			free(tie);
		}
		memcpy(rt[i].comp[c], h, bytes); /* downstream ops see the GPU's bytes */
		free(h);
	}
	if (t->state_slot >= 0) {
		size_t s = (size_t)t->state_slot;
		char what[256];
		snprintf(what, sizeof what, "%s %s.amax", g->layer, t->name);
		if (trained_cast && pass == 0)
			amax0[i] = rt[i].amax;
		if (trained_cast && pass == 2 && t->recipe.scaling == SCALING_DELAYED)
			rt[i].amax = fmaxf(rt[i].amax, amax0[i]);
		fails += cmp_float(out, what, hstate[lay->amax + s], rt[i].amax, exact ? 0 : gemm ? 1e-3 : 1e-6);
		if (!gemm && (t->recipe.scaling == SCALING_DELAYED || t->recipe.scaling == SCALING_CURRENT))
			fails += check_amax_own(out, g, t, &rt[i], hstate[lay->amax + s], hstate[lay->scale + lay->stride * s]);
		if (nv) {
			snprintf(what, sizeof what, "%s %s.s_enc", g->layer, t->name);
			fails += cmp_float(out, what, hstate[lay->scale + lay->stride * s], rt[i].scale, 0);
		} else if (!gemm) {
			snprintf(what, sizeof what, "%s %s.scale_inv", g->layer, t->name);
			fails += cmp_float(out, what, hstate[lay->scale_inv + lay->stride * s], rt[i].scale_inv,
				elementwise ? 0 : 1e-6);
		}
		rt[i].scale = hstate[lay->scale + lay->stride * s];
		rt[i].scale_inv = hstate[lay->scale_inv + lay->stride * s];
	}
	if (t->state_slot_t >= 0)
		fails += check_rht_state(g, t, &rt[i], hstate, lay, exact, gemm, out);
	return fails;
}

/* The delayed scales "NAME=VALUE ..." (spaces or commas between) into the host state copy h: each NAME a tensor
 * with delayed scaling. 0, or -1 with why. */
static int set_scales(const Graph *g, const TgStateLayout *lay, float *h, const char *spec, char *err, size_t errlen)
{
	char name[128];
	float v;
	int used;
	const char *p = spec;
	for (; sscanf(p, " %127[^=, ]=%g%n", name, &v, &used) == 2;) {
		const Tensor *t = NULL;
		for (int i = 0; i < g->ntensors && !t; i++)
			if (!strcmp(g->tensors[i].name, name))
				t = &g->tensors[i];
		if (!t || t->state_slot < 0 || t->state_slot >= lay->delayed || !(v > 0.0f) || !isfinite(v)) {
			snprintf(err, errlen, "scales: '%s' is not a tensor with delayed scaling, or %g is not a finite positive scale",
				name, v);
			return -1;
		}
		h[lay->scale + lay->stride * (size_t)t->state_slot] = v;
		h[lay->scale_inv + lay->stride * (size_t)t->state_slot] = tg_scale_inv(v);
		for (p += used; *p == ',' || *p == ' ' || *p == '\t';)
			p++;
	}
	while (*p == ' ' || *p == '\t' || *p == '\r')
		p++;
	if (*p) {
		snprintf(err, errlen, "scales: cannot read '%.60s' (NAME=VALUE, space or comma separated)", p);
		return -1;
	}
	return 0;
}

int check_layer(TgLayer *l, long tokens, unsigned seed, int do_compare, CheckKeep *keep, Buf *out, char *err,
	size_t errlen)
{
	const Graph *g = tg_layer_plan(l)->g;
	long *dims = calloc((size_t)g->ndims + 1, sizeof *dims);
	RefTensor *rt = calloc((size_t)g->ntensors + 1, sizeof *rt);
	CUdeviceptr *dev = calloc((size_t)g->ntensors + 1, sizeof *dev);
	int fails = -1;
	for (int d = 0; d < g->ndims; d++)
		dims[d] = layout_dim_at(g, d, tokens);
	/* the inputs a CPU run (tegen run --cpu) also takes, uploaded and bound; so are the initial
	 * values of what ops accumulate into (main_grad: the reference adds the product to them) */
	if (refrun_inputs(g, dims, tokens, seed, keep ? keep->in_dir : NULL, rt, err, errlen))
		goto done;
	if (bind_inputs(l, g, dims, rt, dev, err, errlen))
		goto done;
	/* non-trivial delayed scales, so that scaling is exercised */
	void *state;
	size_t state_bytes;
	TgStateLayout lay;
	if (tg_state(l, &state, &state_bytes, &lay)) {
		snprintf(err, errlen, "%s", tg_last_error());
		goto done;
	}
	float *hstate = calloc(state_bytes / 4 + 1, sizeof(float));
	if (lay.tensors) {
		cu.cuMemcpyDtoH_v2(hstate, (CUdeviceptr)(uintptr_t)state, state_bytes);
		for (int s = 0; s < lay.tensors; s++)
			hstate[lay.amax + (size_t)s] = 0.0f; /* delayed amaxes accumulate until tg_step: start this run clean */
		for (int s = 0; s < lay.delayed; s++) {
			hstate[lay.scale + lay.stride * (size_t)s] = refrun_delayed_scale(s);
			hstate[lay.scale_inv + lay.stride * (size_t)s] = tg_scale_inv(hstate[lay.scale + lay.stride * (size_t)s]);
		}
		if (keep && keep->scales && set_scales(g, &lay, hstate, keep->scales, err, errlen)) {
			free(hstate);
			goto done;
		}
		cu.cuMemcpyHtoD_v2((CUdeviceptr)(uintptr_t)state, hstate, state_bytes);
	}
	if (optim_before(l, g, dims, rt, err, errlen)) {
		free(hstate);
		goto done;
	}
	for (int i = 0; i < g->ntensors; i++) {
		rt[i].sr_offset = tg_layer_steps(l);
		if (g->tensors[i].state_slot >= 0) {
			rt[i].scale = hstate[lay.scale + lay.stride * (size_t)g->tensors[i].state_slot];
			rt[i].scale_inv = tg_scale_inv(rt[i].scale);
		}
	}
	bool bwd = plan_has_phase(tg_layer_plan(l), PHASE_BACKWARD); /* then tg_backward, as a training step does */
	tg_layer_keep_intermediates(l, do_compare); /* every op's output, to judge each op from its inputs */
	if (tg_run(l, NULL) || (bwd && tg_backward(l, NULL)) || cu.cuCtxSynchronize()) {
		snprintf(err, errlen, "run: %s", tg_last_error());
		free(hstate);
		goto done;
	}
	if (!do_compare) {
		if (g->optim.kind != OPTIM_NONE && (tg_optimizer_step(l, NULL) || cu.cuCtxSynchronize())) {
			snprintf(err, errlen, "optimizer step: %s", tg_last_error());
			free(hstate);
			goto done;
		}
		free(hstate);
		fails = 0;
		goto done;
	}
	if (lay.tensors)
		cu.cuMemcpyDtoH_v2(hstate, (CUdeviceptr)(uintptr_t)state, state_bytes);
	/* Op by op: the reference runs on the GPU's own inputs (earlier GPU outputs),
	 * so each op is judged alone and GEMM rounding does not leak downstream. */
	fails = 0;
	/* pass 0: the run's ops; with an optimizer then tg_optimizer_step and pass 1: the
	 * updates (adamw), pass 2: the trained weights' casts again, from the updated weights
	 * (a delayed amax holds both casts' maxima: it accumulates until tg_step) */
	fails += check_deq_copies(l, g, dims, tokens, "", out); /* before the optimizer step rewrites weights' copies */
	float *amax0 = calloc((size_t)g->ntensors + 1, sizeof *amax0);
	int optim_ran = 0;
	for (int pass = 0; pass < (g->optim.kind != OPTIM_NONE ? 3 : 1) && fails >= 0; pass++)
	for (int oi = 0; oi < g->nops && fails >= 0; oi++) {
		bool trained_cast = op_casts_trained_weight(g, &g->ops[oi]);
		if (pass == 0 ? g->ops[oi].kind == OP_ADAMW : pass == 1 ? g->ops[oi].kind != OP_ADAMW : !trained_cast)
			continue;
		if (pass == 1 && !optim_ran) {
			if (tg_optimizer_step(l, NULL) || cu.cuCtxSynchronize()) {
				snprintf(err, errlen, "optimizer step: %s", tg_last_error());
				fails = -1;
				break;
			}
			if (lay.tensors)
				cu.cuMemcpyDtoH_v2(hstate, (CUdeviceptr)(uintptr_t)state, state_bytes);
			optim_ran = 1;
		}
		bool native = gemm_native_nvfp4(tg_layer_plan(l), oi);
		if (interp_run_op(g, dims, oi, native ? INTERP_NATIVE_NVFP4 : 0, rt, err, errlen)) {
			fails = -1;
			break;
		}
		const Op *op = &g->ops[oi];
		if (native)
			fails += check_gemm_alpha(l, g, op, rt, out);
		if (op->kind == OP_ADAMW)
			fails += check_adamw(l, g, op, rt, tokens, out);
		for (int a = 0; a < ARG_COUNT; a++)
			if (op->arg[a] >= 0 && arg_is_output((ArgSlot)a))
				fails += check_output(l, g, dims, op, a, rt, hstate, &lay, pass, trained_cast, amax0, tokens, out);
	}
	if (fails >= 0)
		fails += check_epilogues_without_d(l, g, out);
	/* training goes on: the next step's run (and backward), its weights not bound again, skips the casts the
	 * optimizer step made (or fused into its update); every emulated GEMM's BF16 operand must still be its copy's
	 * codes times scales (one the step's casts did not rewrite would hand a GEMM the weights of before the step) */
	if (fails >= 0 && optim_ran) {
		if (tg_run(l, NULL) || (bwd && tg_backward(l, NULL)) || cu.cuCtxSynchronize()) {
			snprintf(err, errlen, "run after the optimizer step: %s", tg_last_error());
			fails = -1;
		} else {
			fails += check_deq_copies(l, g, dims, tokens, ", the step after the optimizer step", out);
		}
	}
	tg_layer_keep_intermediates(l, false);
	free(hstate);
	free(amax0);
done:
	if (keep) {
		check_keep_free(keep); /* (in_dir and scales stay) */
		keep->dev = dev;
		keep->n = g->ntensors;
	} else {
		CheckKeep k = {dev, g->ntensors, NULL, NULL};
		check_keep_free(&k);
	}
	interp_free(g, rt);
	free(rt);
	free(dims);
	return fails;
}
