/* tg_codes.h: the integer codes generated kernels test, in one place. The
 * planner (gen/plan.c) writes them into template slots, the templates compare
 * against them, and the CPU reference (ref/ref.h) uses the same numbers, so
 * host and device cannot drift. gen/codes.c pins the spec-side enums of
 * gen/gen.h to these with _Static_assert. Plain macros: C and CUDA alike. */
#ifndef TG_CODES_H
#define TG_CODES_H

/* High-precision element types: slots TG_IN_DTYPE, TG_OUT_DTYPE, TG_W_DTYPE,
 * TG_B_DTYPE; ref_load/ref_store's dtype (REF_F32 ...). */
#define TG_DTYPE_F32 0
#define TG_DTYPE_BF16 1
#define TG_DTYPE_F16 2
#define TG_DTYPE_BYTES 3 /* cast_transpose.cu: raw bytes moved as they are (the FP8 byte transpose) */

/* The scaling a quantizing kernel applies: slot TG_RECIPE. Current scaling runs
 * as two kernels of one template, an amax pass and a cast pass. NVFP4 has its
 * own template (nvfp4_quantize.cu, no TG_RECIPE slot); TG_RECIPE_NVFP4 is the
 * cast pass of a norm or GLU that writes a rowwise NVFP4 copy itself (its amax
 * pass is TG_RECIPE_CURRENT_AMAX, as for current scaling). */
#define TG_RECIPE_NONE 0
#define TG_RECIPE_DELAYED 1
#define TG_RECIPE_CURRENT_CAST 2
#define TG_RECIPE_CURRENT_AMAX 3
#define TG_RECIPE_BLOCK1X128 4
#define TG_RECIPE_BLOCK128X128 5
#define TG_RECIPE_MXFP8 6
#define TG_RECIPE_NVFP4 7

/* Activations: slot TG_ACT; ref_glu's kind (REF_SWIGLU ...); the order of
 * TG_GLUS in gen/gen.h. 0-5 gated (act(a) * b over an input [.., 2C]); 6-10 the
 * same activations without the gate's partner (act(a) over [.., C], as the gated
 * code TG_ACT - TG_ACT_SILU with b = 1: TG_ACT_BASE). */
#define TG_ACT_SWIGLU 0
#define TG_ACT_GEGLU 1
#define TG_ACT_REGLU 2
#define TG_ACT_QGEGLU 3
#define TG_ACT_SREGLU 4
#define TG_ACT_CLAMPED_SWIGLU 5
#define TG_ACT_SILU 6
#define TG_ACT_GELU 7
#define TG_ACT_RELU 8
#define TG_ACT_QGELU 9
#define TG_ACT_SRELU 10
#define TG_ACT_GATED(act) ((act) <= TG_ACT_CLAMPED_SWIGLU)
#define TG_ACT_BASE(act) (TG_ACT_GATED(act) ? (act) : (act) - TG_ACT_SILU)

/* The values nvfp4_quantize.cu quantizes: slot TG_SRC; gen/gen.h's NvfpSource. A tensor, or an op's values
 * computed again from its inputs (a norm's, GLU's or dglu's NVFP4 copies without an FP32 intermediate). */
#define TG_SRC_TENSOR 0
#define TG_SRC_GLU 1
#define TG_SRC_DGLU 2
#define TG_SRC_NORM 3

/* The layer's optimizer state (adamw.cu; runtime/optim.c; ref/optim.c): one 16-byte
 * device buffer, offsets in 4-byte words. lr is read by every update, so a schedule
 * needs no recompile; step counts the finished optimizer steps (uint32) and the powers
 * beta1^step, beta2^step (float, 1 at step 0) give the bias corrections on the device. */
#define TG_OPTIM_LR 0
#define TG_OPTIM_STEP 1
#define TG_OPTIM_B1POW 2
#define TG_OPTIM_B2POW 3
#define TG_OPTIM_WORDS 4

#endif
