/* interp.h: run a whole layer (a Graph) op by op through the CPU reference.
 * Buffers are host copies laid out exactly as the GPU's (templates/tg_kernel.h). */
#ifndef REF_INTERP_H
#define REF_INTERP_H

#include "gen.h"

typedef struct RefTensor {
	void *comp[COMP_COUNT];   /* host buffers per component (malloc'd by the interpreter for produced tensors) */
	size_t bytes[COMP_COUNT];
	float *value;             /* FP32 value before quantization (produced tensors) */
	float *slack;             /* a LayerNorm's: how far the GPU's float value may lie from value beyond a few
	                           * ulps, per element (ref_layernorm's slack) of a 1x128 output; NULL elsewhere */
	float scale, scale_inv, amax; /* per-tensor recipes; NVFP4: scale = S_enc, amax = the global amax */
	float scale_t, amax_t;    /* NVFP4 with nvfp4_rht: S_enc and global amax of the transformed columnwise copy */
	uint64_t sr_offset;       /* NVFP4 stochastic rounding: Philox offset (the layer's tg_step count) */
	int owned;                /* comps allocated by the interpreter */
	/* a weight the optimizer updates (adamw): the layer's optimizer state before the step
	 * (tg_codes.h's TG_OPTIM_* words) when optim_set, else a fresh one (the spec's lr, step 0);
	 * with step > 0 the caller supplies comp[COMP_MASTER], [COMP_MOM1], [COMP_MOM2] (malloc'd:
	 * interp_free frees those three components of every tensor) */
	float optim[4];
	int optim_set;
} RefTensor;

/* adamw updates its weight in place: comp[COMP_DATA] of the weight (the caller's buffer)
 * gets the new value rounded to its dtype, and comp[COMP_MASTER], [COMP_MOM1], [COMP_MOM2]
 * are made (step 0) or updated; optim is not advanced (ref_optim_step does that). */
/* interp_run runs every op of g (flags 0: NVFP4 GEMMs as dequantize, then GEMM). Inputs: t[i].comp[COMP_DATA] for every layer input;
 * t[i].scale for delayed-scaling tensors (the state before the run). Produced tensors
 * get every component their op writes. Returns 0, or -1 with a message. */
int interp_run(const Graph *g, const long *dims, RefTensor *t, char *err, size_t errlen);
/* interp_run_op flags: INTERP_NATIVE_NVFP4 computes an NVFP4 GEMM the way the native
 * (cuBLASLt, sm_100+) one does: sum of (e2m1 * S_dec) products, times alpha =
 * tg_nvfp4_gemm_alpha(S_enc_a, S_enc_b); without it each operand is dequantized
 * with e2m1 * (S_dec / S_enc) first (the emulated GEMM's numerics, before its BF16 rounding). */
enum { INTERP_NATIVE_NVFP4 = 1 };
/* interp_run_op runs op oi alone, reading its inputs from t (so a caller can feed it the GPU's). */
int interp_run_op(const Graph *g, const long *dims, int oi, unsigned flags, RefTensor *t, char *err, size_t errlen);
/* interp_quantize (re)makes every component of produced tensor t from r->value (its FP32 value). */
void interp_quantize(const Graph *g, const long *dims, const Tensor *t, RefTensor *r);
/* interp_dequantize: copy c (COMP_DATA [rows][cols], or COMP_DATA_T [cols][rows]) of t
 * as FP32 values, dequantized with its scales (an unquantized tensor: its stored values);
 * *rows, *k: the copy's shape. The caller frees it. */
float *interp_dequantize(const Graph *g, const long *dims, const Tensor *t, const RefTensor *r, Component c, int *rows,
	int *k);
/* interp_free frees what interp_run allocated. */
void interp_free(const Graph *g, RefTensor *t);
/* The S_enc of NVFP4 copy `copy` (COMP_DATA or COMP_DATA_T) of t: r->scale_t for a
 * Hadamard-transformed columnwise copy, else r->scale. */
float interp_s_enc(const Tensor *t, const RefTensor *r, Component copy);
/* alpha of a native NVFP4 GEMM op (wgrad reads both columnwise copies, dgrad B's). */
float interp_nvfp4_alpha(const Graph *g, const Op *op, const RefTensor *t);

#endif
