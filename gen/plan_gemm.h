/* plan_gemm.h: gemm_cast ops as GEMM calls: cuBLASLt with layouts and scales resolved, or the generated FP8 GEMM
 * (gemm_fp8.cu) with a GLU or dglu fused into its epilogue; the operand copies an emulated or native MXFP8/NVFP4
 * GEMM reads (BF16 dequantized copies, swizzled scales), conversions and the NVFP4 alpha. */
#ifndef TG_PLAN_GEMM_H
#define TG_PLAN_GEMM_H

#include "plan_kernel.h"

/* pl_deq_in_writer makes kernel w also write t's BF16 operand of copy `from` at pointer slot `slot` (TG_DEQ). */
void pl_deq_in_writer(Planner *pl, Kernel *w, const Tensor *t, Component from, int slot);
/* plan_dglu_epilogue fuses dglu op op into its dgrad GEMM's generated epilogue: that kernel, or -1 with *why. */
int plan_dglu_epilogue(Planner *pl, const Op *op, const char **why);
/* plan_gemm plans gemm_cast op op: a cuBLASLt call or the generated GEMM, with the operand copies it needs. */
void plan_gemm(Planner *pl, const Op *op);
/* plan_glu_epilogue fuses glu_amax op op into its GEMM's generated epilogue: that kernel, or -1 with *why. */
int plan_glu_epilogue(Planner *pl, const Op *op, const char **why);

#endif
