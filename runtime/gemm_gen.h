/* gemm_gen.h: launching the generated FP8 GEMM (templates/gemm_fp8.cu) on Hopper.
 *
 * The planner gives a per-tensor FP8 GEMM a tile variant ("n256s3": 128 x 256 tiles,
 * 3 stages; "n192s4p": 128 x 192, 4 stages, the accumulator promoted every 128 of K)
 * and its template slots; the layer compiles it for sm_90a with the other kernels. At
 * run time gemm_gen_check says whether this call's shapes and pointers suit it (else
 * the caller takes cuBLASLt), and gemm_gen_launch encodes the TMA descriptors for the
 * call's pointers and launches one persistent CTA per SM (at most one per tile). The
 * semantics are gemm.h's (D = a_scale_inv * b_scale_inv * A * B^T, both K-major), for
 * GEMM_SCALE_TENSOR with FP8 A and B, BF16/FP16/FP32 D, no epilogue or accumulate; or, with a
 * GLU epilogue (TG_EPI 1, GemmGenEpi), act = glu(D's halves) as FP8 with a delayed scale; or, with
 * a dglu epilogue (TG_EPI 2, 512 threads), d_h = dglu(h, D) as FP8 with a delayed scale; or
 * GEMM_SCALE_BLOCK with A's scales 1x128 and B's 128x128 or 1x128 (a promoting tile, TG_SCALE). */
#ifndef TG_GEMM_GEN_H
#define TG_GEMM_GEN_H

#include <stddef.h>

#include "gemm.h"
#include "tg_kernel.h"

typedef struct GemmGenTile {
	int bn, stages, promote;  /* from the variant name n<bn>s<stages>[p] */
	int glu;                  /* compiled with the GLU epilogue (TG_EPI 1; the plan's gemm.glu) */
	int dglu;                 /* compiled with the dglu epilogue (TG_EPI 2; the plan's gemm.dglu) */
	int scale;                /* gemm_fp8.cu's TG_SCALE: 0 per-tensor, 1 block (A 1x128, B 128x128),
	                             2 block (A 1x128, B 1x128); gemm_gen_scale_of gives a call's */
} GemmGenTile;

/* gemm_gen_scale_of: the TG_SCALE a call needs (0, 1, 2), or -1 for scalings the kernel lacks
 * (128x128 scales on A, MXFP8, NVFP4, no scales). */
int gemm_gen_scale_of(const GemmDesc *d);

/* An epilogue's arguments. GLU: B's rows [0, N/2) are the gate half, [N/2, N) the linear half.
 * dglu: D is d_act [M][N]; TG_PB_IN the saved h [M][2N] (BF16 or FP16 as compiled), 16-byte aligned. */
typedef struct GemmGenEpi {
	const TgParams *p;        /* GLU: TG_P_OUT: act [M][N/2] FP8; TG_P_OUT_T: its columnwise copy [N/2][M]
	                             (kernels compiled with TG_ACT_T 1 only, else NULL); TG_P_SCALE (read),
	                             TG_P_SCALE_INV (written), TG_P_AMAX (atomic max): act's delayed scaling.
	                             dglu: TG_PB_IN h; TG_PB_OUT d_h [M][2N] and TG_PB_OUT_T [2N][M] (each may be
	                             NULL); TG_PB_SCALE, TG_PB_SCALE_INV, TG_PB_AMAX as the GLU's */
	int write_d;              /* also write D, the op's input (else D is not touched) */
} GemmGenEpi;

/* gemm_gen_tile_parse reads a variant name ("n192s4p"); 0, or -1 if it is not one (glu, dglu and scale set to 0). */
int gemm_gen_tile_parse(const char *variant, GemmGenTile *t);
/* gemm_gen_smem_bytes is the dynamic shared memory a CTA of tile t with output dtype d_dtype needs
 * (the ring, then the output tile: 128 x bn of d_dtype, with t->glu also the 128 x 128-byte act tile, with
 * t->dglu the two bn x 64-byte columnwise tiles;
 * with block scales (t->scale) also A's and B's scales, 128 + bn floats a stage). */
size_t gemm_gen_smem_bytes(const GemmGenTile *t, int d_dtype);
/* gemm_gen_dglu_check: 0 if the dglu epilogue can run with these arguments (N % 8 == 0, h 16-byte aligned,
 * d_h's copies and D 8-byte aligned), else -1 (the caller then runs cuBLASLt and the dglu kernel). */
int gemm_gen_dglu_check(const GemmDesc *d, const GemmArgs *a, const GemmGenEpi *epi);
/* gemm_gen_check: 0 if the generated kernel can run this call (K % 16 == 0, M, N, K >= 1, A and B
 * 16-byte aligned, scale_inv given, the driver has cuTensorMapEncodeTiled), else -1 with why. The
 * descriptor's form (FP8 operands, their scale mode: gemm_gen_scale_of, BF16/FP16/FP32 D, no epilogue,
 * accumulate or transposed operand) is fixed when the kernel is planned (gen/plan_gemm.c
 * gemm_generated_why_not) and not re-checked. */
int gemm_gen_check(const GemmDesc *d, const GemmArgs *a, char *why, size_t whylen);
/* gemm_gen_pays: whether the generated kernel without an epilogue (tile t) is worth taking over cuBLASLt
 * for d on `sms` SMs, by the measured rule (H100, test_gemm --gen-sweep, bench/RESULTS.md eleventh
 * session): at N = 4096 and 6144 it ran 0.96-0.99x of cuBLASLt from 993-2048 tokens and 0.31-0.84x
 * below; at N = 28672 1.02-1.10x from 993 tokens, 0.87-0.99x below. So: N >= 16384 and at least four
 * waves of tiles. A GLU epilogue is taken regardless (it removes a kernel and the BF16 round trip); block
 * scales never (0.91-0.94x of cuBLASLt's block-scaled GEMM with 128x128 weights, 0.76-0.88x with 1x128 weights,
 * at the Llama-3 8B shapes, twenty-first session). */
int gemm_gen_pays(const GemmDesc *d, const GemmGenTile *t, int sms);
/* gemm_gen_launch enqueues f (compiled from gemm_fp8.cu with tile t) for d on stream s over min(tiles, sms)
 * CTAs; GEMM_OK or GEMM_ECUDA with a message. epi: the GLU epilogue's arguments (t->glu; N even) or the
 * dglu epilogue's (t->dglu; gemm_gen_dglu_check), else NULL. Call gemm_gen_check first. No allocation, no sync: graph-capturable (the descriptors are kernel
 * parameters). */
int gemm_gen_launch(CUfunction f, const GemmGenTile *t, int sms, const GemmDesc *d, const GemmArgs *a,
	const GemmGenEpi *epi, CUstream s, char *err, size_t errlen);

#endif
