/* tg_kernel.h: the launch ABI shared by the generated kernels and the runtime.
 *
 * Every generated kernel has the signature
 *     extern "C" __global__ void NAME(const TgParams p)
 * The plan (gen/plan.c) decides which buffer goes in which pointer slot; the
 * runtime fills the struct and launches. One fixed layout for every template
 * keeps the runtime generic: no per-kernel marshalling code.
 *
 * Layout conventions (the CPU reference in ref/ uses the same):
 *  - tensors are row-major [rows][cols]; rows = product of all but the last dim.
 *  - a "columnwise" quantized copy is the transpose, stored [cols][rows], and
 *    quantized with its blocks running along the original columns; i.e. it is
 *    the rowwise quantization of the transpose. Hopper FP8 GEMMs (TN only) use it.
 *    Its lines (and a dequantized DEQ_T's) are TG_PITCH(rows) elements long: rows
 *    rounded up to 16, so every column starts 16-byte aligned at any row count; the
 *    elements past rows are padding (written or not, never read: a GEMM whose K is
 *    the pitch zeroes them first). E2M1 lines: TG_PITCH_FP4(rows) / 2 bytes.
 *  - per-tensor recipes (delayed, current): SCALE points at one float (read),
 *    SCALE_INV at one float (written by the kernel, = 1/scale rounded to nearest),
 *    AMAX at one float updated with an atomic max of max|x| (>= 0, NaN ignored);
 *    the runtime zeroes it when the recipe needs that.
 *  - block1x128: SCALE_INV is float [ceil(cols/128)][rows] (block-column major,
 *    as cuBLASLt's VEC128_32F wants); SCALE_INV_T likewise for the transpose:
 *    [ceil(rows/128)][cols].
 *  - block128x128: SCALE_INV float [ceil(rows/128)][ceil(cols/128)] row-major;
 *    the transpose's scales are the same blocks transposed: [ceil(cols/128)][ceil(rows/128)].
 *  - mxfp8: SCALE_INV is E8M0 bytes [rows][ceil(cols/32)] row-major (plain layout);
 *    SCALE_INV_T is [ceil(rows/32)][cols] (TE's columnwise layout: scale (b, c)
 *    belongs to OUT_T[c][32b..32b+31]; kernels store a block row coalesced). The
 *    GEMM-swizzled layout is produced by a separate pass when a GEMM consumes it
 *    (tile 128x4; mxfp8_swizzle.cu TG_SRC_T reads the columnwise layout).
 *  - nvfp4: OUT is packed E2M1 [rows][cols/2] (element 2k in the low nibble),
 *    OUT_T [cols][TG_PITCH_FP4(rows)/2] (each line packed, zero nibbles past rows); SCALE_INV E4M3 bytes [rows][cols/16], SCALE_INV_T [cols][ceil(rows/16)];
 *    SCALE is S_enc (written by the cast pass), AMAX the global amax. A native
 *    NVFP4 GEMM (sm_100+) reads the scales swizzled (mxfp8_swizzle.cu) and its
 *    alpha = 1/(S_enc_a*S_enc_b) from the device (nvfp4_gemm_alpha.cu).
 *    With the random Hadamard transform (nvfp4_rht) the columnwise copy is
 *    quantized from tg_rht16 of every 16 consecutive rows of a column (a last
 *    partial group is left as is) with its own global amax AMAX_T (over the
 *    transformed values) and S_enc SCALE_T; the rowwise copy keeps AMAX/SCALE.
 */
#ifndef TG_KERNEL_H
#define TG_KERNEL_H

#include "tg_codes.h" /* the slot codes (TG_RECIPE_*, TG_ACT_*, TG_DTYPE_*) */

#define TG_NPTR 16

/* The line length, in elements, of a columnwise copy [cols][rows] (OUT_T of 1-, 2- or 4-byte elements,
 * DEQ_T; gen/layout.c's layout_pitch): rows rounded up to 16 (16-byte aligned lines for every width, one
 * element index for a copy and its dequantized form). */
#define TG_PITCH(rows) (((rows) + 15) / 16 * 16)
/* The same for an E2M1 (NVFP4) columnwise copy: rows rounded up to 32 elements, 16 bytes. */
#define TG_PITCH_FP4(rows) (((rows) + 31) / 32 * 32)

typedef struct TgParams {
	void *p[TG_NPTR];   /* buffers, by slot below */
	long long n[4];     /* n[0] = rows, n[1] = cols (of the output), n[2], n[3] op-specific */
	float f[4];         /* runtime floats (unused by v1 templates; eps etc. are slots) */
} TgParams;

/* Pointer slots. Inputs 0..4, outputs and recipe state 5..11, same slot for the
 * same meaning in every template. */
#define TG_P_IN           0   /* main input, high precision [rows][cols] (glu: [rows][2*cols], gate half first) */
#define TG_P_GAMMA        1   /* norm: gamma [cols] */
#define TG_P_BETA         2   /* layernorm: beta [cols] */
#define TG_P_RESIDUAL     3   /* norm: residual [rows][cols], added to IN before the norm */
#define TG_P_RESIDUAL_OUT 4   /* norm: IN + RESIDUAL rounded to IN's dtype (written) */
#define TG_P_OUT          5   /* rowwise output [rows][cols] (quantized, or high precision) */
#define TG_P_OUT_T        6   /* columnwise output [cols][rows] */
#define TG_P_SCALE        7   /* per-tensor scale (float, read; current scaling: written by the cast pass) */
#define TG_P_SCALE_INV    8   /* rowwise scale_inv (see layouts above) */
#define TG_P_SCALE_INV_T  9   /* columnwise scale_inv */
#define TG_P_AMAX        10   /* per-tensor amax (float, atomic max) */
#define TG_P_RSIGMA      11   /* norm: 1/sigma per row (float [rows]) for the backward pass; may be NULL */
#define TG_P_MU          12   /* layernorm: mean per row (float [rows]); may be NULL */
#define TG_P_SCALE_B     13   /* a second per-tensor scale (nvfp4_gemm_alpha: S_enc of GEMM operand B) */
#define TG_P_SCALE_T     14   /* nvfp4_rht: S_enc of the columnwise (transformed) copy (float, written by the cast pass) */
#define TG_P_AMAX_T      15   /* nvfp4_rht: global amax of the transformed columnwise values (float, atomic max) */
/* nvfp4_quantize.cu's cast pass also writes the copies an emulated NVFP4 GEMM reads, dequantized to BF16
 * (TG_DEQ), in slots that template does not otherwise use: */
#define TG_P_DEQ          4   /* the rowwise copy dequantized, BF16 [rows][cols] */
#define TG_P_DEQ_T       13   /* the columnwise copy dequantized, BF16 [cols][rows] */
/* The MXFP8 quantizing templates (norm_quantize, norm_colwise, glu_amax, dglu, cast_transpose, adamw_cast_block) with
 * TG_DEQ: */
#define TG_P_MX_DEQ      14   /* the rowwise copy dequantized, BF16 [rows][cols] (TG_DEQ bit 0) */
#define TG_P_MX_DEQ_T    15   /* the columnwise copy dequantized, BF16 [cols][rows] (TG_DEQ bit 1) */
/* nvfp4_gemm_alpha.cu: p[TG_P_SCALE] = S_enc of A, p[TG_P_SCALE_B] = S_enc of B,
 * p[TG_P_OUT] = float {alpha, beta} (the GEMM output's alpha component).
 * recipe_update.cu uses its own meaning: p[0] = state buffer, p[1] = per-tensor params
 * (int {fmt, margin, algo, history length (0: not delayed, skip)}), n[0] = tensors, n[1] = history length */

/* In a kernel that writes chunk partials (cast_transpose.cu with dbias, dbias.cu, dnorm.cu, dglu.cu): lets the
 * dreduce.cu launched after it with programmatic stream serialization (Kernel.pdl) start once every CTA of this
 * one has begun (dreduce waits for this kernel's end before it reads); a no-op where no such kernel follows. */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define TG_LAUNCH_DEPENDENTS() asm volatile("griddepcontrol.launch_dependents;")
#else
#define TG_LAUNCH_DEPENDENTS()
#endif

/* Device helpers every template may use (memory movement). */
#ifdef __CUDACC__
/* 16 bytes from global src to shared dst without registers (cp.async, L2 only), zero-filled when !valid (src
   is then not read); commit closes a group of them, wait<N> waits until at most N groups are in flight. */
__device__ __forceinline__ void tg_cp_async16(void *dst, const void *src, bool valid)
{
	asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"((unsigned)__cvta_generic_to_shared(dst)), "l"(src),
	             "r"(valid ? 16 : 0)
	             : "memory");
}
__device__ __forceinline__ void tg_cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N> __device__ __forceinline__ void tg_cp_async_wait() { asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory"); }

/* Store N floats v (N = 1, 2 or a multiple of 4) at p + i (aligned to 4, 8 or 16 bytes) that a kernel soon after
 * reads (chunk partials: dreduce.cu), asking L2 to keep them (evict_last) so that the streaming traffic between
 * does not push them out to memory. */
template <int N> __device__ __forceinline__ void tg_store_keep(float *p, long long i, const float (&v)[N])
{
	static_assert(N == 1 || N == 2 || N % 4 == 0, "tg_store_keep: N = 1, 2 or a multiple of 4");
	p += i;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
	unsigned long long pol;
	asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol));
	if (N == 1)
		asm volatile("st.global.L2::cache_hint.f32 [%0], %1, %2;" ::"l"(p), "f"(v[0]), "l"(pol) : "memory");
	else if (N == 2)
		asm volatile("st.global.L2::cache_hint.v2.f32 [%0], {%1, %2}, %3;" ::"l"(p), "f"(v[0]), "f"(v[1 % N]), "l"(pol)
		             : "memory");
	else
#pragma unroll
		for (int k = 0; k < N; k += 4)
			asm volatile("st.global.L2::cache_hint.v4.f32 [%0], {%1, %2, %3, %4}, %5;" ::"l"(p + k), "f"(v[k % N]),
			             "f"(v[(k + 1) % N]), "f"(v[(k + 2) % N]), "f"(v[(k + 3) % N]), "l"(pol)
			             : "memory");
#else
#pragma unroll
	for (int k = 0; k < N; k++)
		p[k] = v[k];
#endif
}
#endif

/* The recipe state of a layer: one float buffer. Each scale and scale_inv has a
 * 16-byte slot (cuBLASLt reads them as scale pointers and wants them aligned);
 * the history is [L][n], so its row 0 (the current amaxes) is contiguous for
 * one all-reduce. Offsets in floats, for n tensors and history length L. */
#define TG_STATE_SCALE(n, i) (4 * (i))
#define TG_STATE_SCALE_INV(n, i) (4 * (n) + 4 * (i))
#define TG_STATE_HISTORY(n) (8 * (n))
#define TG_STATE_FLOATS(n, L) (8 * (n) + (L) * (n))

#endif
