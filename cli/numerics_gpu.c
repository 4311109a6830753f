/* numerics_gpu.c: `tegen numerics` on the GPU. The layer runs through the
 * runtime (tg_run, the kernels and cuBLASLt GEMMs a user gets); every produced
 * tensor's components and state scalars are read back, and so is the FP32 value each
 * quantized copy came from: the layer is planned with PlanOptions.hp_values, so a
 * norm, GLU or dglu kernel writes its value (component hp) and a cast kernel makes
 * the copies from it; a quantize's value is its input. Only what the GPU does not
 * hold runs the reference op on the GPU's own inputs (a GEMM with a quantized
 * output, a row the cast kernel does not take). The statistics are then the CPU
 * path's (numstats.c).
 * A training layer runs tg_run then tg_backward, so its gradients' copies are measured too. */
#include "numerics_gpu.h"

#include "cudrv.h"
#include "layout.h"
#include "ref.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void numgpu_free(NumGpuRun *run)
{
	if (run->g && run->rt)
		interp_free(run->g, run->rt);
	for (int i = 0; run->dev && run->g && i < run->g->ntensors; i++)
		if (run->dev[i])
			cu.cuMemFree_v2((CUdeviceptr)run->dev[i]);
	free(run->dev);
	free(run->rt);
	free(run->dims);
	if (run->l)
		tg_layer_destroy(run->l);
	memset(run, 0, sizeof *run);
}

/* Upload and bind every input of the layer. */
static int bind_inputs(NumGpuRun *run, char *err, size_t errlen)
{
	const Graph *g = run->g;
	for (int i = 0; i < g->ntensors; i++) {
		const Tensor *t = &g->tensors[i];
		if (t->producer >= 0)
			continue;
		size_t bytes = run->rt[i].bytes[COMP_DATA];
		CUdeviceptr d;
		if (cu.cuMemAlloc_v2(&d, bytes ? bytes : 16) || cu.cuMemcpyHtoD_v2(d, run->rt[i].comp[COMP_DATA], bytes)) {
			snprintf(err, errlen, "cannot allocate or upload input '%s'", t->name);
			return -1;
		}
		run->dev[i] = (unsigned long long)d;
		static const TgDtype map[DT_COUNT] = {[DT_F32] = TG_FP32, [DT_BF16] = TG_BF16, [DT_F16] = TG_FP16,
			[DT_E4M3] = TG_E4M3, [DT_E5M2] = TG_E5M2};
		TgTensorDesc desc = {(void *)(uintptr_t)d, map[t->dtype], t->rank, {0}, {0}};
		for (int k = 0; k < t->rank; k++)
			desc.shape[k] = layout_extent(run->dims, t->shape[k]);
		if (tg_bind(run->l, t->name, &desc)) {
			snprintf(err, errlen, "%s", tg_last_error());
			return -1;
		}
	}
	return 0;
}

/* Run twice: the first run's amax sets every delayed slot's scale (tg_delayed_scale,
 * from scale 1), the second is the one read back; hstate gets the state after it. */
static int run_steady(NumGpuRun *run, float **hstate_out, TgStateLayout *lay, char *err, size_t errlen)
{
	void *state;
	size_t bytes;
	if (tg_state(run->l, &state, &bytes, lay)) {
		snprintf(err, errlen, "%s", tg_last_error());
		return -1;
	}
	float *h = calloc(bytes / 4 + 1, sizeof *h);
	*hstate_out = h;
	for (int pass = 0; pass < 2; pass++) {
		if (lay->tensors) {
			cu.cuMemcpyDtoH_v2(h, (CUdeviceptr)(uintptr_t)state, bytes);
			for (int i = 0; i < run->g->ntensors; i++) {
				const Tensor *t = &run->g->tensors[i];
				int s = t->state_slot;
				if (s < 0 || s >= lay->delayed)
					continue;
				float fmax = tg_fmt_max(t->dtype == DT_E5M2 ? TG_FMT_E5M2 : TG_FMT_E4M3);
				float sc = pass ? tg_delayed_scale(h[lay->amax + (size_t)s], 1.0f, fmax, t->recipe.margin) : 1.0f;
				h[lay->scale + lay->stride * (size_t)s] = sc;
				h[lay->scale_inv + lay->stride * (size_t)s] = tg_scale_inv(sc);
			}
			for (int s = 0; s < lay->tensors; s++)
				h[lay->amax + (size_t)s] = 0.0f;
			cu.cuMemcpyHtoD_v2((CUdeviceptr)(uintptr_t)state, h, bytes);
		}
		bool bwd = plan_has_phase(tg_layer_plan(run->l), PHASE_BACKWARD); /* a training layer: its gradients too */
		if (tg_run(run->l, NULL) || (bwd && tg_backward(run->l, NULL)) || cu.cuCtxSynchronize()) {
			snprintf(err, errlen, "run: %s", tg_last_error());
			return -1;
		}
	}
	if (lay->tensors)
		cu.cuMemcpyDtoH_v2(h, (CUdeviceptr)(uintptr_t)state, bytes);
	return 0;
}

/* Replace tensor i's components with the GPU's, and its state scalars with the GPU state's. */
static int fetch_tensor(NumGpuRun *run, int i, const float *h, const TgStateLayout *lay, char *err, size_t errlen)
{
	const Tensor *t = &run->g->tensors[i];
	RefTensor *r = &run->rt[i];
	for (int c = COMP_DATA; c <= COMP_SCALE_INV_T; c++) {
		void *dp, *buf;
		size_t bytes;
		if (c == COMP_SCALE || tensor_comp_in_state(t, (Component)c) ||
			tg_layer_tensor_component(run->l, i, (Component)c, &dp, &bytes) || !bytes)
			continue;
		if (tg_layer_download(run->l, i, (Component)c, &buf, &bytes)) {
			snprintf(err, errlen, "cannot read %s.%s from the GPU: %s", t->name, comp_name(c), tg_last_error());
			return -1;
		}
		free(r->comp[c]);
		r->comp[c] = buf;
		r->bytes[c] = bytes;
		r->owned = 1;
	}
	if (t->state_slot >= 0) {
		size_t s = (size_t)t->state_slot;
		r->scale = h[lay->scale + lay->stride * s];
		r->scale_inv = h[lay->scale_inv + lay->stride * s];
		r->amax = h[lay->amax + s];
	}
	if (t->state_slot_t >= 0) {
		size_t s = (size_t)t->state_slot_t;
		r->scale_t = h[lay->scale + lay->stride * s];
		r->amax_t = h[lay->amax + s];
	}
	return 0;
}

/* gpu_value gives op's quantized output the FP32 value its copies came from without the reference op:
 * a norm, GLU or dglu's value written by its kernel (component hp), a quantize or cast_transpose's
 * input converted. 1 done, 0 nothing to do (no quantized output: its outputs are the GPU's bytes),
 * -1 the reference op must run (a GEMM with a quantized output, a row the cast kernel does not take). */
static int gpu_value(NumGpuRun *run, const Op *op)
{
	const Graph *g = run->g;
	int o = op->arg[ARG_OUT];
	if (op->kind == OP_GEMM_CAST && o >= 0 && !layout_quantized(&g->tensors[o]))
		return 0;
	if (op->kind == OP_GEMM_CAST || op->kind == OP_ADAMW)
		return -1;
	for (int a = 0; a < ARG_COUNT; a++)
		if (a != ARG_OUT && op->arg[a] >= 0 && arg_is_output((ArgSlot)a) && layout_quantized(&g->tensors[op->arg[a]]))
			return -1;
	if (o < 0 || !layout_quantized(&g->tensors[o]))
		return 0;
	const Tensor *t = &g->tensors[o];
	RefTensor *r = &run->rt[o];
	size_t n = (size_t)layout_rows(run->dims, t) * (size_t)layout_cols(t);
	if (op->kind == OP_QUANTIZE || op->kind == OP_CAST_TRANSPOSE) {
		const Tensor *in = &g->tensors[op->arg[ARG_IN]];
		if (layout_quantized(in))
			return -1;
		int R, K;
		free(r->value);
		r->value = interp_dequantize(g, run->dims, in, &run->rt[in->id], COMP_DATA, &R, &K);
		return r->value ? 1 : -1;
	}
	void *dp;
	size_t bytes;
	if (tg_layer_tensor_component(run->l, o, COMP_HP, &dp, &bytes) || bytes != n * sizeof(float))
		return -1;
	float *v = malloc(bytes ? bytes : 1);
	if (!v || cu.cuMemcpyDtoH_v2(v, (CUdeviceptr)(uintptr_t)dp, bytes)) {
		free(v);
		return -1;
	}
	free(r->value);
	r->value = v;
	return 1;
}

int numgpu_run(TgContext *ctx, const char *file, const char *text, long tokens, NumGpuInputs inputs, void *ud,
	NumGpuRun *run, char *err, size_t errlen)
{
	memset(run, 0, sizeof *run);
	tg_context_set_hp_values(ctx, true); /* the norm/GLU/dglu kernels write the values their copies come from */
	if (tg_layer_create(ctx, file, text, strlen(text), &run->l)) {
		tg_context_set_hp_values(ctx, false);
		snprintf(err, errlen, "%s", tg_last_error());
		return -1;
	}
	TgStatus st = tg_layer_set_tokens(run->l, tokens);
	tg_context_set_hp_values(ctx, false);
	if (st || tg_layer_load(run->l)) {
		snprintf(err, errlen, "%s", tg_last_error());
		numgpu_free(run);
		return -1;
	}
	const Graph *g = run->g = tg_layer_plan(run->l)->g;
	run->dims = calloc((size_t)g->ndims + 1, sizeof *run->dims);
	run->rt = calloc((size_t)g->ntensors + 1, sizeof *run->rt);
	run->dev = calloc((size_t)g->ntensors + 1, sizeof *run->dev);
	for (int d = 0; d < g->ndims; d++)
		run->dims[d] = layout_dim_at(g, d, tokens);
	float *h = NULL;
	TgStateLayout lay;
	int rc = inputs(g, run->dims, run->rt, ud, err, errlen);
	if (!rc)
		rc = bind_inputs(run, err, errlen);
	if (!rc)
		rc = run_steady(run, &h, &lay, err, errlen);
	for (int oi = 0; !rc && oi < g->nops; oi++) {
		const Op *op = &g->ops[oi];
		int got = gpu_value(run, op);
		if (got < 0 && interp_run_op(g, run->dims, oi, 0, run->rt, err, errlen)) {
			rc = -1;
			break;
		}
		for (int a = 0; !rc && a < ARG_COUNT; a++)
			if (op->arg[a] >= 0 && arg_is_output((ArgSlot)a))
				rc = fetch_tensor(run, op->arg[a], h, &lay, err, errlen);
	}
	free(h);
	if (rc)
		numgpu_free(run);
	return rc;
}
