/* gemm_pad.h: GEMMs of any shape, on zero-padded copies where cuBLASLt needs alignment.
 *
 * cuBLASLt's FP8 GEMMs (per-tensor and block scaling) need 16-byte row strides and
 * scale strides: K % 16 == 0 (the K-major operands), N * sizeof(D) % 16 == 0 (D's
 * rows), and with 1x128 block scales M % 4 == 0 for A and N % 4 == 0 for B (rows of
 * FP32 scales), and 128x128 block scales need ceil(K/128) % 4 == 0 (their rows of
 * ceil(K/128) floats). Its BF16 / FP16 / FP32 GEMMs (GEMM_SCALE_NONE) run without
 * 16-byte row strides, but on slow kernels (an emulated MXFP8 wgrad at 8191 tokens
 * took 5.6x the time of 8192's, bench/RESULTS.md): there each operand's row stride
 * (K, or M / N when stored transposed) and D's (N) are rounded up to 16 bytes.
 * A wgrad's K and an fprop's M are the token count, which can be anything, and N can
 * be a vocabulary of 50257. So a GEMM that breaks one of these runs on copies in a
 * scratch buffer: A [M'][K'] (or [K'][M']), B [N'][K'] (or [K'][N']) (read at their row strides lda / ldb), their 1x128
 * scales [kb][M'] / [kb][N'], the bias [N'] and D [M'][N'], with M', N', K' rounded up and
 * zeros in the new rows and columns (K' a multiple of 512 where a 128x128 operand's
 * block count needs it, with zero scales for the new blocks). That is exact: zero columns along K add nothing
 * to the dot products, zero rows of A or B give rows or columns of D that are never
 * copied back (and zeros do not raise D's amax), and the block-scale counts do not
 * change otherwise (ceil(K'/128) == ceil(K/128), likewise for rows). D is copied back (and,
 * with accumulate, copied in first: D itself, or the caller's C, which the padded D then stands for). A GEMM whose
 * only broken rule is M % 4 with A's 1x128 scales (an fprop or dgrad at an odd token count) is split instead: the
 * first M rounded down to 4 rows in place (A's scales repacked at that stride), the last 1-3 rows as a padded
 * 4-row GEMM, so neither A nor D is copied whole. Every copy is
 * a stream-ordered memset, 2D memcpy or kernel launch, so a padded GEMM stays graph-capturable once the scratch
 * exists. */
#ifndef TG_GEMM_PAD_H
#define TG_GEMM_PAD_H

#include "gemm.h"

/* gemm_pad_bytes: scratch bytes the GEMM d needs (0: it runs as it is). */
size_t gemm_pad_bytes(const GemmDesc *d);

/* gemm_run_padded runs d like gemm_run, through zero-padded copies in scratch
 * (at least gemm_pad_bytes(d) bytes) when d needs them. copy: the operand copy kernel
 * (gemm_pad_copy_src, loaded by the caller), or NULL for the driver's 2D copies and
 * memsets (about 40% of a copy's bandwidth at odd row strides). Same return codes. */
int gemm_run_padded(GemmCtx *g, const GemmDesc *d, const GemmArgs *a, CUdeviceptr scratch, size_t scratch_bytes,
	CUfunction copy, CUstream s, char *err, size_t errlen);

/* The operand copy kernel's CUDA source and entry: dst rows of a 16-byte multiple pitch, each a source row (rows
 * back to back, any width) then zeros, the rows past the source's zero; a thread a 16-byte store. */
extern const char gemm_pad_copy_src[];
extern const char gemm_pad_copy_entry[];

#endif
