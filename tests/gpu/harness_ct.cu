/* harness_ct.cu: correctness and speed of cast_transpose.cu, recipe_update.cu
 * and mxfp8_swizzle.cu, standalone (CUDA runtime API).
 *
 * Each template is #included several times under different slot macro sets
 * (distinct TG_KERNEL names). Every output (data, transposed data, scales,
 * scale_inv, amax) is compared byte for byte with the CPU reference (ref/),
 * after poisoning the device buffers (and a guard zone behind each) with 0xA5,
 * at rows {1, 5, 217, 993, 2048|16384} for cols {160, 256, 512, 4096}, with a
 * full grid and a 3-CTA grid (grid-stride path); in_dt 3 (raw bytes) instances
 * check the byte transpose against the host transpose. recipe_update runs ten steps
 * against ref_delayed_step. Then the benchmark: 1 GiB D2D copy as the ceiling,
 * and the bench variants at 16384x4096 bf16 (median of 50 event timings,
 * inputs rotated, working set > 50 MB), each with a full grid (one CTA per
 * tile) and a grid capped at SMs x resident CTAs ("cap"). Names ending in
 * _old are the shared-tile kernels of 2026-11-21 (CT_LEGACY) for comparison; names with
 * _pf1/_pf2 are CT_PREFETCH 1/2 twins (software-pipelined tile loop; only the "cap" grid
 * rows differ in schedule from their base). Exit 1 on any correctness failure.
 * Usage: harness_ct [--no-bench] [--quick]
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <vector>
#include <algorithm>

extern "C" {
#include "ref.h"
}
#include "tg_kernel.h"

#define CK(x)                                                                                  \
	do {                                                                                       \
		cudaError_t e_ = (x);                                                                  \
		if (e_ != cudaSuccess) {                                                               \
			fprintf(stderr, "CUDA error %s at %s:%d: %s\n", cudaGetErrorString(e_), __FILE__, \
			        __LINE__, #x);                                                             \
			exit(2);                                                                           \
		}                                                                                      \
	} while (0)

typedef void (*KernFn)(const TgParams);
struct Inst {
	const char *name;
	KernFn fn;
	int in_dt, out_dt, fmt, recipe, roww, colw, cols, thr, tr, tc;
	float eps;
	int pow2, bench;
};

#define TG_KERNEL ct_r0_bf16_bf16_c160
#define TG_IN_DTYPE 1
#define TG_OUT_DTYPE 1
#define TG_FMT 0
#define TG_RECIPE 0
#define TG_ROWWISE 1
#define TG_COLWISE 1
#define TG_COLS 160
#define TG_THREADS 256
#define TG_TILE_ROWS 64
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL 
#undef TG_IN_DTYPE 
#undef TG_OUT_DTYPE 
#undef TG_FMT 
#undef TG_RECIPE 
#undef TG_ROWWISE 
#undef TG_COLWISE 
#undef TG_COLS 
#undef TG_THREADS 
#undef TG_TILE_ROWS 
#undef TG_TILE_COLS 
#undef TG_EPS_SCALE 
#undef TG_POW2
#define TG_KERNEL ct_r0_f32_f16_c160
#define TG_IN_DTYPE 0
#define TG_OUT_DTYPE 2
#define TG_FMT 0
#define TG_RECIPE 0
#define TG_ROWWISE 1
#define TG_COLWISE 1
#define TG_COLS 160
#define TG_THREADS 256
#define TG_TILE_ROWS 64
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL 
#undef TG_IN_DTYPE 
#undef TG_OUT_DTYPE 
#undef TG_FMT 
#undef TG_RECIPE 
#undef TG_ROWWISE 
#undef TG_COLWISE 
#undef TG_COLS 
#undef TG_THREADS 
#undef TG_TILE_ROWS 
#undef TG_TILE_COLS 
#undef TG_EPS_SCALE 
#undef TG_POW2
#define TG_KERNEL ct_r1_e4m3_bf16_c160
#define TG_IN_DTYPE 1
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 1
#define TG_ROWWISE 1
#define TG_COLWISE 1
#define TG_COLS 160
#define TG_THREADS 256
#define TG_TILE_ROWS 64
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL 
#undef TG_IN_DTYPE 
#undef TG_OUT_DTYPE 
#undef TG_FMT 
#undef TG_RECIPE 
#undef TG_ROWWISE 
#undef TG_COLWISE 
#undef TG_COLS 
#undef TG_THREADS 
#undef TG_TILE_ROWS 
#undef TG_TILE_COLS 
#undef TG_EPS_SCALE 
#undef TG_POW2
#define TG_KERNEL ct_r1_e5m2_f32_c160
#define TG_IN_DTYPE 0
#define TG_OUT_DTYPE 0
#define TG_FMT 1
#define TG_RECIPE 1
#define TG_ROWWISE 1
#define TG_COLWISE 1
#define TG_COLS 160
#define TG_THREADS 256
#define TG_TILE_ROWS 64
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL 
#undef TG_IN_DTYPE 
#undef TG_OUT_DTYPE 
#undef TG_FMT 
#undef TG_RECIPE 
#undef TG_ROWWISE 
#undef TG_COLWISE 
#undef TG_COLS 
#undef TG_THREADS 
#undef TG_TILE_ROWS 
#undef TG_TILE_COLS 
#undef TG_EPS_SCALE 
#undef TG_POW2
#define TG_KERNEL ct_r2_e4m3_bf16_c160
#define TG_IN_DTYPE 1
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 2
#define TG_ROWWISE 1
#define TG_COLWISE 1
#define TG_COLS 160
#define TG_THREADS 256
#define TG_TILE_ROWS 64
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL 
#undef TG_IN_DTYPE 
#undef TG_OUT_DTYPE 
#undef TG_FMT 
#undef TG_RECIPE 
#undef TG_ROWWISE 
#undef TG_COLWISE 
#undef TG_COLS 
#undef TG_THREADS 
#undef TG_TILE_ROWS 
#undef TG_TILE_COLS 
#undef TG_EPS_SCALE 
#undef TG_POW2
#define TG_KERNEL ct_r2_e5m2_f16_pow2_c160
#define TG_IN_DTYPE 2
#define TG_OUT_DTYPE 0
#define TG_FMT 1
#define TG_RECIPE 2
#define TG_ROWWISE 0
#define TG_COLWISE 1
#define TG_COLS 160
#define TG_THREADS 256
#define TG_TILE_ROWS 64
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 1e-2f
#define TG_POW2 1
#include "cast_transpose.cu"
#undef TG_KERNEL 
#undef TG_IN_DTYPE 
#undef TG_OUT_DTYPE 
#undef TG_FMT 
#undef TG_RECIPE 
#undef TG_ROWWISE 
#undef TG_COLWISE 
#undef TG_COLS 
#undef TG_THREADS 
#undef TG_TILE_ROWS 
#undef TG_TILE_COLS 
#undef TG_EPS_SCALE 
#undef TG_POW2
#define TG_KERNEL ct_r3_amax_bf16_c160
#define TG_IN_DTYPE 1
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 3
#define TG_ROWWISE 1
#define TG_COLWISE 0
#define TG_COLS 160
#define TG_THREADS 256
#define TG_TILE_ROWS 64
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL 
#undef TG_IN_DTYPE 
#undef TG_OUT_DTYPE 
#undef TG_FMT 
#undef TG_RECIPE 
#undef TG_ROWWISE 
#undef TG_COLWISE 
#undef TG_COLS 
#undef TG_THREADS 
#undef TG_TILE_ROWS 
#undef TG_TILE_COLS 
#undef TG_EPS_SCALE 
#undef TG_POW2
#define TG_KERNEL ct_r4_e4m3_bf16_c160
#define TG_IN_DTYPE 1
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 4
#define TG_ROWWISE 1
#define TG_COLWISE 1
#define TG_COLS 160
#define TG_THREADS 256
#define TG_TILE_ROWS 128
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 1
#include "cast_transpose.cu"
#undef TG_KERNEL 
#undef TG_IN_DTYPE 
#undef TG_OUT_DTYPE 
#undef TG_FMT 
#undef TG_RECIPE 
#undef TG_ROWWISE 
#undef TG_COLWISE 
#undef TG_COLS 
#undef TG_THREADS 
#undef TG_TILE_ROWS 
#undef TG_TILE_COLS 
#undef TG_EPS_SCALE 
#undef TG_POW2
#define TG_KERNEL ct_r4_e5m2_f16_col_c160
#define TG_IN_DTYPE 2
#define TG_OUT_DTYPE 0
#define TG_FMT 1
#define TG_RECIPE 4
#define TG_ROWWISE 0
#define TG_COLWISE 1
#define TG_COLS 160
#define TG_THREADS 256
#define TG_TILE_ROWS 128
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 1e-3f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL 
#undef TG_IN_DTYPE 
#undef TG_OUT_DTYPE 
#undef TG_FMT 
#undef TG_RECIPE 
#undef TG_ROWWISE 
#undef TG_COLWISE 
#undef TG_COLS 
#undef TG_THREADS 
#undef TG_TILE_ROWS 
#undef TG_TILE_COLS 
#undef TG_EPS_SCALE 
#undef TG_POW2
#define TG_KERNEL ct_r5_e4m3_bf16_c160
#define TG_IN_DTYPE 1
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 5
#define TG_ROWWISE 1
#define TG_COLWISE 1
#define TG_COLS 160
#define TG_THREADS 256
#define TG_TILE_ROWS 128
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 1
#include "cast_transpose.cu"
#undef TG_KERNEL 
#undef TG_IN_DTYPE 
#undef TG_OUT_DTYPE 
#undef TG_FMT 
#undef TG_RECIPE 
#undef TG_ROWWISE 
#undef TG_COLWISE 
#undef TG_COLS 
#undef TG_THREADS 
#undef TG_TILE_ROWS 
#undef TG_TILE_COLS 
#undef TG_EPS_SCALE 
#undef TG_POW2
#define TG_KERNEL ct_r6_e4m3_bf16_c160
#define TG_IN_DTYPE 1
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 6
#define TG_ROWWISE 1
#define TG_COLWISE 1
#define TG_COLS 160
#define TG_THREADS 256
#define TG_TILE_ROWS 64
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL 
#undef TG_IN_DTYPE 
#undef TG_OUT_DTYPE 
#undef TG_FMT 
#undef TG_RECIPE 
#undef TG_ROWWISE 
#undef TG_COLWISE 
#undef TG_COLS 
#undef TG_THREADS 
#undef TG_TILE_ROWS 
#undef TG_TILE_COLS 
#undef TG_EPS_SCALE 
#undef TG_POW2
#define TG_KERNEL ct_r6_e5m2_f32_row_c160
#define TG_IN_DTYPE 0
#define TG_OUT_DTYPE 0
#define TG_FMT 1
#define TG_RECIPE 6
#define TG_ROWWISE 1
#define TG_COLWISE 0
#define TG_COLS 160
#define TG_THREADS 256
#define TG_TILE_ROWS 64
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL 
#undef TG_IN_DTYPE 
#undef TG_OUT_DTYPE 
#undef TG_FMT 
#undef TG_RECIPE 
#undef TG_ROWWISE 
#undef TG_COLWISE 
#undef TG_COLS 
#undef TG_THREADS 
#undef TG_TILE_ROWS 
#undef TG_TILE_COLS 
#undef TG_EPS_SCALE 
#undef TG_POW2
#define TG_KERNEL ct_r6_e4m3_f16_col_c160
#define TG_IN_DTYPE 2
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 6
#define TG_ROWWISE 0
#define TG_COLWISE 1
#define TG_COLS 160
#define TG_THREADS 256
#define TG_TILE_ROWS 64
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL 
#undef TG_IN_DTYPE 
#undef TG_OUT_DTYPE 
#undef TG_FMT 
#undef TG_RECIPE 
#undef TG_ROWWISE 
#undef TG_COLWISE 
#undef TG_COLS 
#undef TG_THREADS 
#undef TG_TILE_ROWS 
#undef TG_TILE_COLS 
#undef TG_EPS_SCALE 
#undef TG_POW2
#define TG_KERNEL ct_r0_bf16_bf16_c256
#define TG_IN_DTYPE 1
#define TG_OUT_DTYPE 1
#define TG_FMT 0
#define TG_RECIPE 0
#define TG_ROWWISE 1
#define TG_COLWISE 1
#define TG_COLS 256
#define TG_THREADS 256
#define TG_TILE_ROWS 64
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL 
#undef TG_IN_DTYPE 
#undef TG_OUT_DTYPE 
#undef TG_FMT 
#undef TG_RECIPE 
#undef TG_ROWWISE 
#undef TG_COLWISE 
#undef TG_COLS 
#undef TG_THREADS 
#undef TG_TILE_ROWS 
#undef TG_TILE_COLS 
#undef TG_EPS_SCALE 
#undef TG_POW2
#define TG_KERNEL ct_r0_f32_f16_c256
#define TG_IN_DTYPE 0
#define TG_OUT_DTYPE 2
#define TG_FMT 0
#define TG_RECIPE 0
#define TG_ROWWISE 1
#define TG_COLWISE 1
#define TG_COLS 256
#define TG_THREADS 256
#define TG_TILE_ROWS 64
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL 
#undef TG_IN_DTYPE 
#undef TG_OUT_DTYPE 
#undef TG_FMT 
#undef TG_RECIPE 
#undef TG_ROWWISE 
#undef TG_COLWISE 
#undef TG_COLS 
#undef TG_THREADS 
#undef TG_TILE_ROWS 
#undef TG_TILE_COLS 
#undef TG_EPS_SCALE 
#undef TG_POW2
#define TG_KERNEL ct_r1_e4m3_bf16_c256
#define TG_IN_DTYPE 1
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 1
#define TG_ROWWISE 1
#define TG_COLWISE 1
#define TG_COLS 256
#define TG_THREADS 256
#define TG_TILE_ROWS 64
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL 
#undef TG_IN_DTYPE 
#undef TG_OUT_DTYPE 
#undef TG_FMT 
#undef TG_RECIPE 
#undef TG_ROWWISE 
#undef TG_COLWISE 
#undef TG_COLS 
#undef TG_THREADS 
#undef TG_TILE_ROWS 
#undef TG_TILE_COLS 
#undef TG_EPS_SCALE 
#undef TG_POW2
#define TG_KERNEL ct_r1_e5m2_f32_c256
#define TG_IN_DTYPE 0
#define TG_OUT_DTYPE 0
#define TG_FMT 1
#define TG_RECIPE 1
#define TG_ROWWISE 1
#define TG_COLWISE 1
#define TG_COLS 256
#define TG_THREADS 256
#define TG_TILE_ROWS 64
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL 
#undef TG_IN_DTYPE 
#undef TG_OUT_DTYPE 
#undef TG_FMT 
#undef TG_RECIPE 
#undef TG_ROWWISE 
#undef TG_COLWISE 
#undef TG_COLS 
#undef TG_THREADS 
#undef TG_TILE_ROWS 
#undef TG_TILE_COLS 
#undef TG_EPS_SCALE 
#undef TG_POW2
#define TG_KERNEL ct_r2_e4m3_bf16_c256
#define TG_IN_DTYPE 1
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 2
#define TG_ROWWISE 1
#define TG_COLWISE 1
#define TG_COLS 256
#define TG_THREADS 256
#define TG_TILE_ROWS 64
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL 
#undef TG_IN_DTYPE 
#undef TG_OUT_DTYPE 
#undef TG_FMT 
#undef TG_RECIPE 
#undef TG_ROWWISE 
#undef TG_COLWISE 
#undef TG_COLS 
#undef TG_THREADS 
#undef TG_TILE_ROWS 
#undef TG_TILE_COLS 
#undef TG_EPS_SCALE 
#undef TG_POW2
#define TG_KERNEL ct_r2_e5m2_f16_pow2_c256
#define TG_IN_DTYPE 2
#define TG_OUT_DTYPE 0
#define TG_FMT 1
#define TG_RECIPE 2
#define TG_ROWWISE 0
#define TG_COLWISE 1
#define TG_COLS 256
#define TG_THREADS 256
#define TG_TILE_ROWS 64
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 1e-2f
#define TG_POW2 1
#include "cast_transpose.cu"
#undef TG_KERNEL 
#undef TG_IN_DTYPE 
#undef TG_OUT_DTYPE 
#undef TG_FMT 
#undef TG_RECIPE 
#undef TG_ROWWISE 
#undef TG_COLWISE 
#undef TG_COLS 
#undef TG_THREADS 
#undef TG_TILE_ROWS 
#undef TG_TILE_COLS 
#undef TG_EPS_SCALE 
#undef TG_POW2
#define TG_KERNEL ct_r3_amax_bf16_c256
#define TG_IN_DTYPE 1
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 3
#define TG_ROWWISE 1
#define TG_COLWISE 0
#define TG_COLS 256
#define TG_THREADS 256
#define TG_TILE_ROWS 64
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL 
#undef TG_IN_DTYPE 
#undef TG_OUT_DTYPE 
#undef TG_FMT 
#undef TG_RECIPE 
#undef TG_ROWWISE 
#undef TG_COLWISE 
#undef TG_COLS 
#undef TG_THREADS 
#undef TG_TILE_ROWS 
#undef TG_TILE_COLS 
#undef TG_EPS_SCALE 
#undef TG_POW2
#define TG_KERNEL ct_r4_e4m3_bf16_c256
#define TG_IN_DTYPE 1
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 4
#define TG_ROWWISE 1
#define TG_COLWISE 1
#define TG_COLS 256
#define TG_THREADS 256
#define TG_TILE_ROWS 128
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 1
#include "cast_transpose.cu"
#undef TG_KERNEL 
#undef TG_IN_DTYPE 
#undef TG_OUT_DTYPE 
#undef TG_FMT 
#undef TG_RECIPE 
#undef TG_ROWWISE 
#undef TG_COLWISE 
#undef TG_COLS 
#undef TG_THREADS 
#undef TG_TILE_ROWS 
#undef TG_TILE_COLS 
#undef TG_EPS_SCALE 
#undef TG_POW2
#define TG_KERNEL ct_r4_e5m2_f16_col_c256
#define TG_IN_DTYPE 2
#define TG_OUT_DTYPE 0
#define TG_FMT 1
#define TG_RECIPE 4
#define TG_ROWWISE 0
#define TG_COLWISE 1
#define TG_COLS 256
#define TG_THREADS 256
#define TG_TILE_ROWS 128
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 1e-3f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL 
#undef TG_IN_DTYPE 
#undef TG_OUT_DTYPE 
#undef TG_FMT 
#undef TG_RECIPE 
#undef TG_ROWWISE 
#undef TG_COLWISE 
#undef TG_COLS 
#undef TG_THREADS 
#undef TG_TILE_ROWS 
#undef TG_TILE_COLS 
#undef TG_EPS_SCALE 
#undef TG_POW2
#define TG_KERNEL ct_r5_e4m3_bf16_c256
#define TG_IN_DTYPE 1
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 5
#define TG_ROWWISE 1
#define TG_COLWISE 1
#define TG_COLS 256
#define TG_THREADS 256
#define TG_TILE_ROWS 128
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 1
#include "cast_transpose.cu"
#undef TG_KERNEL 
#undef TG_IN_DTYPE 
#undef TG_OUT_DTYPE 
#undef TG_FMT 
#undef TG_RECIPE 
#undef TG_ROWWISE 
#undef TG_COLWISE 
#undef TG_COLS 
#undef TG_THREADS 
#undef TG_TILE_ROWS 
#undef TG_TILE_COLS 
#undef TG_EPS_SCALE 
#undef TG_POW2
#define TG_KERNEL ct_r6_e4m3_bf16_c256
#define TG_IN_DTYPE 1
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 6
#define TG_ROWWISE 1
#define TG_COLWISE 1
#define TG_COLS 256
#define TG_THREADS 256
#define TG_TILE_ROWS 64
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL 
#undef TG_IN_DTYPE 
#undef TG_OUT_DTYPE 
#undef TG_FMT 
#undef TG_RECIPE 
#undef TG_ROWWISE 
#undef TG_COLWISE 
#undef TG_COLS 
#undef TG_THREADS 
#undef TG_TILE_ROWS 
#undef TG_TILE_COLS 
#undef TG_EPS_SCALE 
#undef TG_POW2
#define TG_KERNEL ct_r6_e5m2_f32_row_c256
#define TG_IN_DTYPE 0
#define TG_OUT_DTYPE 0
#define TG_FMT 1
#define TG_RECIPE 6
#define TG_ROWWISE 1
#define TG_COLWISE 0
#define TG_COLS 256
#define TG_THREADS 256
#define TG_TILE_ROWS 64
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL 
#undef TG_IN_DTYPE 
#undef TG_OUT_DTYPE 
#undef TG_FMT 
#undef TG_RECIPE 
#undef TG_ROWWISE 
#undef TG_COLWISE 
#undef TG_COLS 
#undef TG_THREADS 
#undef TG_TILE_ROWS 
#undef TG_TILE_COLS 
#undef TG_EPS_SCALE 
#undef TG_POW2
#define TG_KERNEL ct_r6_e4m3_f16_col_c256
#define TG_IN_DTYPE 2
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 6
#define TG_ROWWISE 0
#define TG_COLWISE 1
#define TG_COLS 256
#define TG_THREADS 256
#define TG_TILE_ROWS 64
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL 
#undef TG_IN_DTYPE 
#undef TG_OUT_DTYPE 
#undef TG_FMT 
#undef TG_RECIPE 
#undef TG_ROWWISE 
#undef TG_COLWISE 
#undef TG_COLS 
#undef TG_THREADS 
#undef TG_TILE_ROWS 
#undef TG_TILE_COLS 
#undef TG_EPS_SCALE 
#undef TG_POW2
#define TG_KERNEL ct_r0_bf16_bf16_c512
#define TG_IN_DTYPE 1
#define TG_OUT_DTYPE 1
#define TG_FMT 0
#define TG_RECIPE 0
#define TG_ROWWISE 1
#define TG_COLWISE 1
#define TG_COLS 512
#define TG_THREADS 256
#define TG_TILE_ROWS 64
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL 
#undef TG_IN_DTYPE 
#undef TG_OUT_DTYPE 
#undef TG_FMT 
#undef TG_RECIPE 
#undef TG_ROWWISE 
#undef TG_COLWISE 
#undef TG_COLS 
#undef TG_THREADS 
#undef TG_TILE_ROWS 
#undef TG_TILE_COLS 
#undef TG_EPS_SCALE 
#undef TG_POW2
#define TG_KERNEL ct_r0_f32_f16_c512
#define TG_IN_DTYPE 0
#define TG_OUT_DTYPE 2
#define TG_FMT 0
#define TG_RECIPE 0
#define TG_ROWWISE 1
#define TG_COLWISE 1
#define TG_COLS 512
#define TG_THREADS 256
#define TG_TILE_ROWS 64
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL 
#undef TG_IN_DTYPE 
#undef TG_OUT_DTYPE 
#undef TG_FMT 
#undef TG_RECIPE 
#undef TG_ROWWISE 
#undef TG_COLWISE 
#undef TG_COLS 
#undef TG_THREADS 
#undef TG_TILE_ROWS 
#undef TG_TILE_COLS 
#undef TG_EPS_SCALE 
#undef TG_POW2
#define TG_KERNEL ct_r1_e4m3_bf16_c512
#define TG_IN_DTYPE 1
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 1
#define TG_ROWWISE 1
#define TG_COLWISE 1
#define TG_COLS 512
#define TG_THREADS 256
#define TG_TILE_ROWS 64
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL 
#undef TG_IN_DTYPE 
#undef TG_OUT_DTYPE 
#undef TG_FMT 
#undef TG_RECIPE 
#undef TG_ROWWISE 
#undef TG_COLWISE 
#undef TG_COLS 
#undef TG_THREADS 
#undef TG_TILE_ROWS 
#undef TG_TILE_COLS 
#undef TG_EPS_SCALE 
#undef TG_POW2
#define TG_KERNEL ct_r1_e5m2_f32_c512
#define TG_IN_DTYPE 0
#define TG_OUT_DTYPE 0
#define TG_FMT 1
#define TG_RECIPE 1
#define TG_ROWWISE 1
#define TG_COLWISE 1
#define TG_COLS 512
#define TG_THREADS 256
#define TG_TILE_ROWS 64
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL 
#undef TG_IN_DTYPE 
#undef TG_OUT_DTYPE 
#undef TG_FMT 
#undef TG_RECIPE 
#undef TG_ROWWISE 
#undef TG_COLWISE 
#undef TG_COLS 
#undef TG_THREADS 
#undef TG_TILE_ROWS 
#undef TG_TILE_COLS 
#undef TG_EPS_SCALE 
#undef TG_POW2
#define TG_KERNEL ct_r2_e4m3_bf16_c512
#define TG_IN_DTYPE 1
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 2
#define TG_ROWWISE 1
#define TG_COLWISE 1
#define TG_COLS 512
#define TG_THREADS 256
#define TG_TILE_ROWS 64
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL 
#undef TG_IN_DTYPE 
#undef TG_OUT_DTYPE 
#undef TG_FMT 
#undef TG_RECIPE 
#undef TG_ROWWISE 
#undef TG_COLWISE 
#undef TG_COLS 
#undef TG_THREADS 
#undef TG_TILE_ROWS 
#undef TG_TILE_COLS 
#undef TG_EPS_SCALE 
#undef TG_POW2
#define TG_KERNEL ct_r2_e5m2_f16_pow2_c512
#define TG_IN_DTYPE 2
#define TG_OUT_DTYPE 0
#define TG_FMT 1
#define TG_RECIPE 2
#define TG_ROWWISE 0
#define TG_COLWISE 1
#define TG_COLS 512
#define TG_THREADS 256
#define TG_TILE_ROWS 64
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 1e-2f
#define TG_POW2 1
#include "cast_transpose.cu"
#undef TG_KERNEL 
#undef TG_IN_DTYPE 
#undef TG_OUT_DTYPE 
#undef TG_FMT 
#undef TG_RECIPE 
#undef TG_ROWWISE 
#undef TG_COLWISE 
#undef TG_COLS 
#undef TG_THREADS 
#undef TG_TILE_ROWS 
#undef TG_TILE_COLS 
#undef TG_EPS_SCALE 
#undef TG_POW2
#define TG_KERNEL ct_r3_amax_bf16_c512
#define TG_IN_DTYPE 1
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 3
#define TG_ROWWISE 1
#define TG_COLWISE 0
#define TG_COLS 512
#define TG_THREADS 256
#define TG_TILE_ROWS 64
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL 
#undef TG_IN_DTYPE 
#undef TG_OUT_DTYPE 
#undef TG_FMT 
#undef TG_RECIPE 
#undef TG_ROWWISE 
#undef TG_COLWISE 
#undef TG_COLS 
#undef TG_THREADS 
#undef TG_TILE_ROWS 
#undef TG_TILE_COLS 
#undef TG_EPS_SCALE 
#undef TG_POW2
#define TG_KERNEL ct_r4_e4m3_bf16_c512
#define TG_IN_DTYPE 1
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 4
#define TG_ROWWISE 1
#define TG_COLWISE 1
#define TG_COLS 512
#define TG_THREADS 256
#define TG_TILE_ROWS 128
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 1
#include "cast_transpose.cu"
#undef TG_KERNEL 
#undef TG_IN_DTYPE 
#undef TG_OUT_DTYPE 
#undef TG_FMT 
#undef TG_RECIPE 
#undef TG_ROWWISE 
#undef TG_COLWISE 
#undef TG_COLS 
#undef TG_THREADS 
#undef TG_TILE_ROWS 
#undef TG_TILE_COLS 
#undef TG_EPS_SCALE 
#undef TG_POW2
#define TG_KERNEL ct_r4_e5m2_f16_col_c512
#define TG_IN_DTYPE 2
#define TG_OUT_DTYPE 0
#define TG_FMT 1
#define TG_RECIPE 4
#define TG_ROWWISE 0
#define TG_COLWISE 1
#define TG_COLS 512
#define TG_THREADS 256
#define TG_TILE_ROWS 128
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 1e-3f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL 
#undef TG_IN_DTYPE 
#undef TG_OUT_DTYPE 
#undef TG_FMT 
#undef TG_RECIPE 
#undef TG_ROWWISE 
#undef TG_COLWISE 
#undef TG_COLS 
#undef TG_THREADS 
#undef TG_TILE_ROWS 
#undef TG_TILE_COLS 
#undef TG_EPS_SCALE 
#undef TG_POW2
#define TG_KERNEL ct_r5_e4m3_bf16_c512
#define TG_IN_DTYPE 1
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 5
#define TG_ROWWISE 1
#define TG_COLWISE 1
#define TG_COLS 512
#define TG_THREADS 256
#define TG_TILE_ROWS 128
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 1
#include "cast_transpose.cu"
#undef TG_KERNEL 
#undef TG_IN_DTYPE 
#undef TG_OUT_DTYPE 
#undef TG_FMT 
#undef TG_RECIPE 
#undef TG_ROWWISE 
#undef TG_COLWISE 
#undef TG_COLS 
#undef TG_THREADS 
#undef TG_TILE_ROWS 
#undef TG_TILE_COLS 
#undef TG_EPS_SCALE 
#undef TG_POW2
#define TG_KERNEL ct_r6_e4m3_bf16_c512
#define TG_IN_DTYPE 1
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 6
#define TG_ROWWISE 1
#define TG_COLWISE 1
#define TG_COLS 512
#define TG_THREADS 256
#define TG_TILE_ROWS 64
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL 
#undef TG_IN_DTYPE 
#undef TG_OUT_DTYPE 
#undef TG_FMT 
#undef TG_RECIPE 
#undef TG_ROWWISE 
#undef TG_COLWISE 
#undef TG_COLS 
#undef TG_THREADS 
#undef TG_TILE_ROWS 
#undef TG_TILE_COLS 
#undef TG_EPS_SCALE 
#undef TG_POW2
#define TG_KERNEL ct_r6_e5m2_f32_row_c512
#define TG_IN_DTYPE 0
#define TG_OUT_DTYPE 0
#define TG_FMT 1
#define TG_RECIPE 6
#define TG_ROWWISE 1
#define TG_COLWISE 0
#define TG_COLS 512
#define TG_THREADS 256
#define TG_TILE_ROWS 64
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL 
#undef TG_IN_DTYPE 
#undef TG_OUT_DTYPE 
#undef TG_FMT 
#undef TG_RECIPE 
#undef TG_ROWWISE 
#undef TG_COLWISE 
#undef TG_COLS 
#undef TG_THREADS 
#undef TG_TILE_ROWS 
#undef TG_TILE_COLS 
#undef TG_EPS_SCALE 
#undef TG_POW2
#define TG_KERNEL ct_r6_e4m3_f16_col_c512
#define TG_IN_DTYPE 2
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 6
#define TG_ROWWISE 0
#define TG_COLWISE 1
#define TG_COLS 512
#define TG_THREADS 256
#define TG_TILE_ROWS 64
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL 
#undef TG_IN_DTYPE 
#undef TG_OUT_DTYPE 
#undef TG_FMT 
#undef TG_RECIPE 
#undef TG_ROWWISE 
#undef TG_COLWISE 
#undef TG_COLS 
#undef TG_THREADS 
#undef TG_TILE_ROWS 
#undef TG_TILE_COLS 
#undef TG_EPS_SCALE 
#undef TG_POW2
#define TG_KERNEL ct_r0_bf16_f32_c256
#define TG_IN_DTYPE 1
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 0
#define TG_ROWWISE 1
#define TG_COLWISE 1
#define TG_COLS 256
#define TG_THREADS 256
#define TG_TILE_ROWS 64
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL 
#undef TG_IN_DTYPE 
#undef TG_OUT_DTYPE 
#undef TG_FMT 
#undef TG_RECIPE 
#undef TG_ROWWISE 
#undef TG_COLWISE 
#undef TG_COLS 
#undef TG_THREADS 
#undef TG_TILE_ROWS 
#undef TG_TILE_COLS 
#undef TG_EPS_SCALE 
#undef TG_POW2
#define TG_KERNEL ct_ct_pt_64x128_t256
#define TG_IN_DTYPE 1
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 1
#define TG_ROWWISE 1
#define TG_COLWISE 1
#define TG_COLS 4096
#define TG_THREADS 256
#define TG_TILE_ROWS 64
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL 
#undef TG_IN_DTYPE 
#undef TG_OUT_DTYPE 
#undef TG_FMT 
#undef TG_RECIPE 
#undef TG_ROWWISE 
#undef TG_COLWISE 
#undef TG_COLS 
#undef TG_THREADS 
#undef TG_TILE_ROWS 
#undef TG_TILE_COLS 
#undef TG_EPS_SCALE 
#undef TG_POW2
#define TG_KERNEL ct_ct_pt_128x128_t256
#define TG_IN_DTYPE 1
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 1
#define TG_ROWWISE 1
#define TG_COLWISE 1
#define TG_COLS 4096
#define TG_THREADS 256
#define TG_TILE_ROWS 128
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL 
#undef TG_IN_DTYPE 
#undef TG_OUT_DTYPE 
#undef TG_FMT 
#undef TG_RECIPE 
#undef TG_ROWWISE 
#undef TG_COLWISE 
#undef TG_COLS 
#undef TG_THREADS 
#undef TG_TILE_ROWS 
#undef TG_TILE_COLS 
#undef TG_EPS_SCALE 
#undef TG_POW2
#define TG_KERNEL ct_ct_pt_32x128_t256
#define TG_IN_DTYPE 1
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 1
#define TG_ROWWISE 1
#define TG_COLWISE 1
#define TG_COLS 4096
#define TG_THREADS 256
#define TG_TILE_ROWS 32
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL 
#undef TG_IN_DTYPE 
#undef TG_OUT_DTYPE 
#undef TG_FMT 
#undef TG_RECIPE 
#undef TG_ROWWISE 
#undef TG_COLWISE 
#undef TG_COLS 
#undef TG_THREADS 
#undef TG_TILE_ROWS 
#undef TG_TILE_COLS 
#undef TG_EPS_SCALE 
#undef TG_POW2
#define TG_KERNEL ct_ct_pt_64x256_t256
#define TG_IN_DTYPE 1
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 1
#define TG_ROWWISE 1
#define TG_COLWISE 1
#define TG_COLS 4096
#define TG_THREADS 256
#define TG_TILE_ROWS 64
#define TG_TILE_COLS 256
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL 
#undef TG_IN_DTYPE 
#undef TG_OUT_DTYPE 
#undef TG_FMT 
#undef TG_RECIPE 
#undef TG_ROWWISE 
#undef TG_COLWISE 
#undef TG_COLS 
#undef TG_THREADS 
#undef TG_TILE_ROWS 
#undef TG_TILE_COLS 
#undef TG_EPS_SCALE 
#undef TG_POW2
#define TG_KERNEL ct_q_row_32x128_t256
#define TG_IN_DTYPE 1
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 1
#define TG_ROWWISE 1
#define TG_COLWISE 0
#define TG_COLS 4096
#define TG_THREADS 256
#define TG_TILE_ROWS 32
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL 
#undef TG_IN_DTYPE 
#undef TG_OUT_DTYPE 
#undef TG_FMT 
#undef TG_RECIPE 
#undef TG_ROWWISE 
#undef TG_COLWISE 
#undef TG_COLS 
#undef TG_THREADS 
#undef TG_TILE_ROWS 
#undef TG_TILE_COLS 
#undef TG_EPS_SCALE 
#undef TG_POW2
#define TG_KERNEL ct_q_row_64x128_t256
#define TG_IN_DTYPE 1
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 1
#define TG_ROWWISE 1
#define TG_COLWISE 0
#define TG_COLS 4096
#define TG_THREADS 256
#define TG_TILE_ROWS 64
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL 
#undef TG_IN_DTYPE 
#undef TG_OUT_DTYPE 
#undef TG_FMT 
#undef TG_RECIPE 
#undef TG_ROWWISE 
#undef TG_COLWISE 
#undef TG_COLS 
#undef TG_THREADS 
#undef TG_TILE_ROWS 
#undef TG_TILE_COLS 
#undef TG_EPS_SCALE 
#undef TG_POW2
#define TG_KERNEL ct_q_row_32x256_t256
#define TG_IN_DTYPE 1
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 1
#define TG_ROWWISE 1
#define TG_COLWISE 0
#define TG_COLS 4096
#define TG_THREADS 256
#define TG_TILE_ROWS 32
#define TG_TILE_COLS 256
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL 
#undef TG_IN_DTYPE 
#undef TG_OUT_DTYPE 
#undef TG_FMT 
#undef TG_RECIPE 
#undef TG_ROWWISE 
#undef TG_COLWISE 
#undef TG_COLS 
#undef TG_THREADS 
#undef TG_TILE_ROWS 
#undef TG_TILE_COLS 
#undef TG_EPS_SCALE 
#undef TG_POW2
#define TG_KERNEL ct_q_row_16x128_t128
#define TG_IN_DTYPE 1
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 1
#define TG_ROWWISE 1
#define TG_COLWISE 0
#define TG_COLS 4096
#define TG_THREADS 128
#define TG_TILE_ROWS 16
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL 
#undef TG_IN_DTYPE 
#undef TG_OUT_DTYPE 
#undef TG_FMT 
#undef TG_RECIPE 
#undef TG_ROWWISE 
#undef TG_COLWISE 
#undef TG_COLS 
#undef TG_THREADS 
#undef TG_TILE_ROWS 
#undef TG_TILE_COLS 
#undef TG_EPS_SCALE 
#undef TG_POW2
#define TG_KERNEL ct_mx_rc_64x128_t256
#define TG_IN_DTYPE 1
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 6
#define TG_ROWWISE 1
#define TG_COLWISE 1
#define TG_COLS 4096
#define TG_THREADS 256
#define TG_TILE_ROWS 64
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL 
#undef TG_IN_DTYPE 
#undef TG_OUT_DTYPE 
#undef TG_FMT 
#undef TG_RECIPE 
#undef TG_ROWWISE 
#undef TG_COLWISE 
#undef TG_COLS 
#undef TG_THREADS 
#undef TG_TILE_ROWS 
#undef TG_TILE_COLS 
#undef TG_EPS_SCALE 
#undef TG_POW2
#define TG_KERNEL ct_mx_rc_128x128_t256
#define TG_IN_DTYPE 1
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 6
#define TG_ROWWISE 1
#define TG_COLWISE 1
#define TG_COLS 4096
#define TG_THREADS 256
#define TG_TILE_ROWS 128
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL 
#undef TG_IN_DTYPE 
#undef TG_OUT_DTYPE 
#undef TG_FMT 
#undef TG_RECIPE 
#undef TG_ROWWISE 
#undef TG_COLWISE 
#undef TG_COLS 
#undef TG_THREADS 
#undef TG_TILE_ROWS 
#undef TG_TILE_COLS 
#undef TG_EPS_SCALE 
#undef TG_POW2
#define TG_KERNEL ct_mx_rc_32x128_t256
#define TG_IN_DTYPE 1
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 6
#define TG_ROWWISE 1
#define TG_COLWISE 1
#define TG_COLS 4096
#define TG_THREADS 256
#define TG_TILE_ROWS 32
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL 
#undef TG_IN_DTYPE 
#undef TG_OUT_DTYPE 
#undef TG_FMT 
#undef TG_RECIPE 
#undef TG_ROWWISE 
#undef TG_COLWISE 
#undef TG_COLS 
#undef TG_THREADS 
#undef TG_TILE_ROWS 
#undef TG_TILE_COLS 
#undef TG_EPS_SCALE 
#undef TG_POW2
#define TG_KERNEL ct_mx_rc_64x256_t256
#define TG_IN_DTYPE 1
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 6
#define TG_ROWWISE 1
#define TG_COLWISE 1
#define TG_COLS 4096
#define TG_THREADS 256
#define TG_TILE_ROWS 64
#define TG_TILE_COLS 256
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL 
#undef TG_IN_DTYPE 
#undef TG_OUT_DTYPE 
#undef TG_FMT 
#undef TG_RECIPE 
#undef TG_ROWWISE 
#undef TG_COLWISE 
#undef TG_COLS 
#undef TG_THREADS 
#undef TG_TILE_ROWS 
#undef TG_TILE_COLS 
#undef TG_EPS_SCALE 
#undef TG_POW2
#define TG_KERNEL ct_b128_rc_128x128_t256
#define TG_IN_DTYPE 1
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 4
#define TG_ROWWISE 1
#define TG_COLWISE 1
#define TG_COLS 4096
#define TG_THREADS 256
#define TG_TILE_ROWS 128
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 1
#include "cast_transpose.cu"
#undef TG_KERNEL 
#undef TG_IN_DTYPE 
#undef TG_OUT_DTYPE 
#undef TG_FMT 
#undef TG_RECIPE 
#undef TG_ROWWISE 
#undef TG_COLWISE 
#undef TG_COLS 
#undef TG_THREADS 
#undef TG_TILE_ROWS 
#undef TG_TILE_COLS 
#undef TG_EPS_SCALE 
#undef TG_POW2
#define TG_KERNEL ct_b128_rc_128x128_t512
#define TG_IN_DTYPE 1
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 4
#define TG_ROWWISE 1
#define TG_COLWISE 1
#define TG_COLS 4096
#define TG_THREADS 512
#define TG_TILE_ROWS 128
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 1
#include "cast_transpose.cu"
#undef TG_KERNEL 
#undef TG_IN_DTYPE 
#undef TG_OUT_DTYPE 
#undef TG_FMT 
#undef TG_RECIPE 
#undef TG_ROWWISE 
#undef TG_COLWISE 
#undef TG_COLS 
#undef TG_THREADS 
#undef TG_TILE_ROWS 
#undef TG_TILE_COLS 
#undef TG_EPS_SCALE 
#undef TG_POW2
#define TG_KERNEL ct_b128_rc_128x256_t256
#define TG_IN_DTYPE 1
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 4
#define TG_ROWWISE 1
#define TG_COLWISE 1
#define TG_COLS 4096
#define TG_THREADS 256
#define TG_TILE_ROWS 128
#define TG_TILE_COLS 256
#define TG_EPS_SCALE 0.0f
#define TG_POW2 1
#include "cast_transpose.cu"
#undef TG_KERNEL 
#undef TG_IN_DTYPE 
#undef TG_OUT_DTYPE 
#undef TG_FMT 
#undef TG_RECIPE 
#undef TG_ROWWISE 
#undef TG_COLWISE 
#undef TG_COLS 
#undef TG_THREADS 
#undef TG_TILE_ROWS 
#undef TG_TILE_COLS 
#undef TG_EPS_SCALE 
#undef TG_POW2
#define TG_KERNEL ct_amax_64x128_t256
#define TG_IN_DTYPE 1
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 3
#define TG_ROWWISE 1
#define TG_COLWISE 0
#define TG_COLS 4096
#define TG_THREADS 256
#define TG_TILE_ROWS 64
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL 
#undef TG_IN_DTYPE 
#undef TG_OUT_DTYPE 
#undef TG_FMT 
#undef TG_RECIPE 
#undef TG_ROWWISE 
#undef TG_COLWISE 
#undef TG_COLS 
#undef TG_THREADS 
#undef TG_TILE_ROWS 
#undef TG_TILE_COLS 
#undef TG_EPS_SCALE 
#undef TG_POW2
#define TG_KERNEL ct_amax_32x256_t256
#define TG_IN_DTYPE 1
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 3
#define TG_ROWWISE 1
#define TG_COLWISE 0
#define TG_COLS 4096
#define TG_THREADS 256
#define TG_TILE_ROWS 32
#define TG_TILE_COLS 256
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL 
#undef TG_IN_DTYPE 
#undef TG_OUT_DTYPE 
#undef TG_FMT 
#undef TG_RECIPE 
#undef TG_ROWWISE 
#undef TG_COLWISE 
#undef TG_COLS 
#undef TG_THREADS 
#undef TG_TILE_ROWS 
#undef TG_TILE_COLS 
#undef TG_EPS_SCALE 
#undef TG_POW2
#define TG_KERNEL ct_bb_rc_128x128_t256
#define TG_IN_DTYPE 1
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 5
#define TG_ROWWISE 1
#define TG_COLWISE 1
#define TG_COLS 4096
#define TG_THREADS 256
#define TG_TILE_ROWS 128
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 1
#include "cast_transpose.cu"
#undef TG_KERNEL 
#undef TG_IN_DTYPE 
#undef TG_OUT_DTYPE 
#undef TG_FMT 
#undef TG_RECIPE 
#undef TG_ROWWISE 
#undef TG_COLWISE 
#undef TG_COLS 
#undef TG_THREADS 
#undef TG_TILE_ROWS 
#undef TG_TILE_COLS 
#undef TG_EPS_SCALE 
#undef TG_POW2
#define TG_KERNEL ct_cur_ct_64x128_t256
#define TG_IN_DTYPE 1
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 2
#define TG_ROWWISE 1
#define TG_COLWISE 1
#define TG_COLS 4096
#define TG_THREADS 256
#define TG_TILE_ROWS 64
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL 
#undef TG_IN_DTYPE 
#undef TG_OUT_DTYPE 
#undef TG_FMT 
#undef TG_RECIPE 
#undef TG_ROWWISE 
#undef TG_COLWISE 
#undef TG_COLS 
#undef TG_THREADS 
#undef TG_TILE_ROWS 
#undef TG_TILE_COLS 
#undef TG_EPS_SCALE 
#undef TG_POW2
#define TG_KERNEL ct_mx_row_32x256_t256
#define TG_IN_DTYPE 1
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 6
#define TG_ROWWISE 1
#define TG_COLWISE 0
#define TG_COLS 4096
#define TG_THREADS 256
#define TG_TILE_ROWS 32
#define TG_TILE_COLS 256
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL 
#undef TG_IN_DTYPE 
#undef TG_OUT_DTYPE 
#undef TG_FMT 
#undef TG_RECIPE 
#undef TG_ROWWISE 
#undef TG_COLWISE 
#undef TG_COLS 
#undef TG_THREADS 
#undef TG_TILE_ROWS 
#undef TG_TILE_COLS 
#undef TG_EPS_SCALE 
#undef TG_POW2
#define TG_KERNEL ct_r6_e4m3_bf16_w64_c160
#define TG_IN_DTYPE 1
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 6
#define TG_ROWWISE 1
#define TG_COLWISE 1
#define TG_COLS 160
#define TG_THREADS 256
#define TG_TILE_ROWS 128
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL
#undef TG_IN_DTYPE
#undef TG_OUT_DTYPE
#undef TG_FMT
#undef TG_RECIPE
#undef TG_ROWWISE
#undef TG_COLWISE
#undef TG_COLS
#undef TG_THREADS
#undef TG_TILE_ROWS
#undef TG_TILE_COLS
#undef TG_EPS_SCALE
#undef TG_POW2
#define TG_KERNEL ct_r6_e5m2_f32_w32_c256
#define TG_IN_DTYPE 0
#define TG_OUT_DTYPE 0
#define TG_FMT 1
#define TG_RECIPE 6
#define TG_ROWWISE 1
#define TG_COLWISE 1
#define TG_COLS 256
#define TG_THREADS 512
#define TG_TILE_ROWS 128
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL
#undef TG_IN_DTYPE
#undef TG_OUT_DTYPE
#undef TG_FMT
#undef TG_RECIPE
#undef TG_ROWWISE
#undef TG_COLWISE
#undef TG_COLS
#undef TG_THREADS
#undef TG_TILE_ROWS
#undef TG_TILE_COLS
#undef TG_EPS_SCALE
#undef TG_POW2
#define TG_KERNEL ct_r6_e4m3_f32_w64_c512
#define TG_IN_DTYPE 0
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 6
#define TG_ROWWISE 1
#define TG_COLWISE 1
#define TG_COLS 512
#define TG_THREADS 256
#define TG_TILE_ROWS 128
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL
#undef TG_IN_DTYPE
#undef TG_OUT_DTYPE
#undef TG_FMT
#undef TG_RECIPE
#undef TG_ROWWISE
#undef TG_COLWISE
#undef TG_COLS
#undef TG_THREADS
#undef TG_TILE_ROWS
#undef TG_TILE_COLS
#undef TG_EPS_SCALE
#undef TG_POW2
#define TG_KERNEL ct_r6_e4m3_bf16_w64x256_c160
#define TG_IN_DTYPE 1
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 6
#define TG_ROWWISE 1
#define TG_COLWISE 1
#define TG_COLS 160
#define TG_THREADS 256
#define TG_TILE_ROWS 64
#define TG_TILE_COLS 256
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL
#undef TG_IN_DTYPE
#undef TG_OUT_DTYPE
#undef TG_FMT
#undef TG_RECIPE
#undef TG_ROWWISE
#undef TG_COLWISE
#undef TG_COLS
#undef TG_THREADS
#undef TG_TILE_ROWS
#undef TG_TILE_COLS
#undef TG_EPS_SCALE
#undef TG_POW2
#define TG_KERNEL ct_r6_e5m2_f16_col_w64_c160
#define TG_IN_DTYPE 2
#define TG_OUT_DTYPE 0
#define TG_FMT 1
#define TG_RECIPE 6
#define TG_ROWWISE 0
#define TG_COLWISE 1
#define TG_COLS 160
#define TG_THREADS 256
#define TG_TILE_ROWS 128
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL
#undef TG_IN_DTYPE
#undef TG_OUT_DTYPE
#undef TG_FMT
#undef TG_RECIPE
#undef TG_ROWWISE
#undef TG_COLWISE
#undef TG_COLS
#undef TG_THREADS
#undef TG_TILE_ROWS
#undef TG_TILE_COLS
#undef TG_EPS_SCALE
#undef TG_POW2
#define TG_KERNEL ct_r1_e4m3_f16_w64_c512
#define TG_IN_DTYPE 2
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 1
#define TG_ROWWISE 1
#define TG_COLWISE 1
#define TG_COLS 512
#define TG_THREADS 256
#define TG_TILE_ROWS 128
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL
#undef TG_IN_DTYPE
#undef TG_OUT_DTYPE
#undef TG_FMT
#undef TG_RECIPE
#undef TG_ROWWISE
#undef TG_COLWISE
#undef TG_COLS
#undef TG_THREADS
#undef TG_TILE_ROWS
#undef TG_TILE_COLS
#undef TG_EPS_SCALE
#undef TG_POW2
#define TG_KERNEL ct_r2_e5m2_bf16_w32_c160
#define TG_IN_DTYPE 1
#define TG_OUT_DTYPE 0
#define TG_FMT 1
#define TG_RECIPE 2
#define TG_ROWWISE 1
#define TG_COLWISE 1
#define TG_COLS 160
#define TG_THREADS 512
#define TG_TILE_ROWS 128
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 1e-2f
#define TG_POW2 1
#include "cast_transpose.cu"
#undef TG_KERNEL
#undef TG_IN_DTYPE
#undef TG_OUT_DTYPE
#undef TG_FMT
#undef TG_RECIPE
#undef TG_ROWWISE
#undef TG_COLWISE
#undef TG_COLS
#undef TG_THREADS
#undef TG_TILE_ROWS
#undef TG_TILE_COLS
#undef TG_EPS_SCALE
#undef TG_POW2
#define TG_KERNEL ct_r1_e4m3_bf16_old_c160
#define TG_IN_DTYPE 1
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 1
#define TG_ROWWISE 1
#define TG_COLWISE 1
#define TG_COLS 160
#define TG_THREADS 256
#define TG_TILE_ROWS 64
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#define CT_LEGACY 1
#include "cast_transpose.cu"
#undef TG_KERNEL
#undef TG_IN_DTYPE
#undef TG_OUT_DTYPE
#undef TG_FMT
#undef TG_RECIPE
#undef TG_ROWWISE
#undef TG_COLWISE
#undef TG_COLS
#undef TG_THREADS
#undef TG_TILE_ROWS
#undef TG_TILE_COLS
#undef TG_EPS_SCALE
#undef TG_POW2
#undef CT_LEGACY
#define TG_KERNEL ct_r6_e4m3_bf16_old_c160
#define TG_IN_DTYPE 1
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 6
#define TG_ROWWISE 1
#define TG_COLWISE 1
#define TG_COLS 160
#define TG_THREADS 256
#define TG_TILE_ROWS 64
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#define CT_LEGACY 1
#include "cast_transpose.cu"
#undef TG_KERNEL
#undef TG_IN_DTYPE
#undef TG_OUT_DTYPE
#undef TG_FMT
#undef TG_RECIPE
#undef TG_ROWWISE
#undef TG_COLWISE
#undef TG_COLS
#undef TG_THREADS
#undef TG_TILE_ROWS
#undef TG_TILE_COLS
#undef TG_EPS_SCALE
#undef TG_POW2
#undef CT_LEGACY
#define TG_KERNEL ct_r3_amax_f32_c160
#define TG_IN_DTYPE 0
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 3
#define TG_ROWWISE 1
#define TG_COLWISE 0
#define TG_COLS 160
#define TG_THREADS 256
#define TG_TILE_ROWS 64
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL
#undef TG_IN_DTYPE
#undef TG_OUT_DTYPE
#undef TG_FMT
#undef TG_RECIPE
#undef TG_ROWWISE
#undef TG_COLWISE
#undef TG_COLS
#undef TG_THREADS
#undef TG_TILE_ROWS
#undef TG_TILE_COLS
#undef TG_EPS_SCALE
#undef TG_POW2
#define TG_KERNEL ct_r3_amax_f16_c512
#define TG_IN_DTYPE 2
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 3
#define TG_ROWWISE 1
#define TG_COLWISE 0
#define TG_COLS 512
#define TG_THREADS 256
#define TG_TILE_ROWS 64
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL
#undef TG_IN_DTYPE
#undef TG_OUT_DTYPE
#undef TG_FMT
#undef TG_RECIPE
#undef TG_ROWWISE
#undef TG_COLWISE
#undef TG_COLS
#undef TG_THREADS
#undef TG_TILE_ROWS
#undef TG_TILE_COLS
#undef TG_EPS_SCALE
#undef TG_POW2
#define TG_KERNEL ct_t8_w64_c160
#define TG_IN_DTYPE 3
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 0
#define TG_ROWWISE 0
#define TG_COLWISE 1
#define TG_COLS 160
#define TG_THREADS 256
#define TG_TILE_ROWS 128
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL
#undef TG_IN_DTYPE
#undef TG_OUT_DTYPE
#undef TG_FMT
#undef TG_RECIPE
#undef TG_ROWWISE
#undef TG_COLWISE
#undef TG_COLS
#undef TG_THREADS
#undef TG_TILE_ROWS
#undef TG_TILE_COLS
#undef TG_EPS_SCALE
#undef TG_POW2
#define TG_KERNEL ct_t8_w128_c256
#define TG_IN_DTYPE 3
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 0
#define TG_ROWWISE 0
#define TG_COLWISE 1
#define TG_COLS 256
#define TG_THREADS 128
#define TG_TILE_ROWS 128
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL
#undef TG_IN_DTYPE
#undef TG_OUT_DTYPE
#undef TG_FMT
#undef TG_RECIPE
#undef TG_ROWWISE
#undef TG_COLWISE
#undef TG_COLS
#undef TG_THREADS
#undef TG_TILE_ROWS
#undef TG_TILE_COLS
#undef TG_EPS_SCALE
#undef TG_POW2
#define TG_KERNEL ct_t8_w32_row_c512
#define TG_IN_DTYPE 3
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 0
#define TG_ROWWISE 1
#define TG_COLWISE 1
#define TG_COLS 512
#define TG_THREADS 256
#define TG_TILE_ROWS 64
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL
#undef TG_IN_DTYPE
#undef TG_OUT_DTYPE
#undef TG_FMT
#undef TG_RECIPE
#undef TG_ROWWISE
#undef TG_COLWISE
#undef TG_COLS
#undef TG_THREADS
#undef TG_TILE_ROWS
#undef TG_TILE_COLS
#undef TG_EPS_SCALE
#undef TG_POW2
#define TG_KERNEL ct_ct_pt_64x128_t256_old
#define TG_IN_DTYPE 1
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 1
#define TG_ROWWISE 1
#define TG_COLWISE 1
#define TG_COLS 4096
#define TG_THREADS 256
#define TG_TILE_ROWS 64
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#define CT_LEGACY 1
#include "cast_transpose.cu"
#undef TG_KERNEL
#undef TG_IN_DTYPE
#undef TG_OUT_DTYPE
#undef TG_FMT
#undef TG_RECIPE
#undef TG_ROWWISE
#undef TG_COLWISE
#undef TG_COLS
#undef TG_THREADS
#undef TG_TILE_ROWS
#undef TG_TILE_COLS
#undef TG_EPS_SCALE
#undef TG_POW2
#undef CT_LEGACY
#define TG_KERNEL ct_ct_pt_128x128_t512
#define TG_IN_DTYPE 1
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 1
#define TG_ROWWISE 1
#define TG_COLWISE 1
#define TG_COLS 4096
#define TG_THREADS 512
#define TG_TILE_ROWS 128
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL
#undef TG_IN_DTYPE
#undef TG_OUT_DTYPE
#undef TG_FMT
#undef TG_RECIPE
#undef TG_ROWWISE
#undef TG_COLWISE
#undef TG_COLS
#undef TG_THREADS
#undef TG_TILE_ROWS
#undef TG_TILE_COLS
#undef TG_EPS_SCALE
#undef TG_POW2
#define TG_KERNEL ct_mx_rc_64x128_t256_old
#define TG_IN_DTYPE 1
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 6
#define TG_ROWWISE 1
#define TG_COLWISE 1
#define TG_COLS 4096
#define TG_THREADS 256
#define TG_TILE_ROWS 64
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#define CT_LEGACY 1
#include "cast_transpose.cu"
#undef TG_KERNEL
#undef TG_IN_DTYPE
#undef TG_OUT_DTYPE
#undef TG_FMT
#undef TG_RECIPE
#undef TG_ROWWISE
#undef TG_COLWISE
#undef TG_COLS
#undef TG_THREADS
#undef TG_TILE_ROWS
#undef TG_TILE_COLS
#undef TG_EPS_SCALE
#undef TG_POW2
#undef CT_LEGACY
#define TG_KERNEL ct_amax_64x128_t256_old
#define TG_IN_DTYPE 1
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 3
#define TG_ROWWISE 1
#define TG_COLWISE 0
#define TG_COLS 4096
#define TG_THREADS 256
#define TG_TILE_ROWS 64
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#define CT_LEGACY 1
#include "cast_transpose.cu"
#undef TG_KERNEL
#undef TG_IN_DTYPE
#undef TG_OUT_DTYPE
#undef TG_FMT
#undef TG_RECIPE
#undef TG_ROWWISE
#undef TG_COLWISE
#undef TG_COLS
#undef TG_THREADS
#undef TG_TILE_ROWS
#undef TG_TILE_COLS
#undef TG_EPS_SCALE
#undef TG_POW2
#undef CT_LEGACY
#define TG_KERNEL ct_cur_ct_64x128_t256_old
#define TG_IN_DTYPE 1
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 2
#define TG_ROWWISE 1
#define TG_COLWISE 1
#define TG_COLS 4096
#define TG_THREADS 256
#define TG_TILE_ROWS 64
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#define CT_LEGACY 1
#include "cast_transpose.cu"
#undef TG_KERNEL
#undef TG_IN_DTYPE
#undef TG_OUT_DTYPE
#undef TG_FMT
#undef TG_RECIPE
#undef TG_ROWWISE
#undef TG_COLWISE
#undef TG_COLS
#undef TG_THREADS
#undef TG_TILE_ROWS
#undef TG_TILE_COLS
#undef TG_EPS_SCALE
#undef TG_POW2
#undef CT_LEGACY
#define TG_KERNEL ct_cur_ct_128x128_t256
#define TG_IN_DTYPE 1
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 2
#define TG_ROWWISE 1
#define TG_COLWISE 1
#define TG_COLS 4096
#define TG_THREADS 256
#define TG_TILE_ROWS 128
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL
#undef TG_IN_DTYPE
#undef TG_OUT_DTYPE
#undef TG_FMT
#undef TG_RECIPE
#undef TG_ROWWISE
#undef TG_COLWISE
#undef TG_COLS
#undef TG_THREADS
#undef TG_TILE_ROWS
#undef TG_TILE_COLS
#undef TG_EPS_SCALE
#undef TG_POW2
#define TG_KERNEL ct_t8_128x128_t256
#define TG_IN_DTYPE 3
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 0
#define TG_ROWWISE 0
#define TG_COLWISE 1
#define TG_COLS 4096
#define TG_THREADS 256
#define TG_TILE_ROWS 128
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL
#undef TG_IN_DTYPE
#undef TG_OUT_DTYPE
#undef TG_FMT
#undef TG_RECIPE
#undef TG_ROWWISE
#undef TG_COLWISE
#undef TG_COLS
#undef TG_THREADS
#undef TG_TILE_ROWS
#undef TG_TILE_COLS
#undef TG_EPS_SCALE
#undef TG_POW2
#define TG_KERNEL ct_t8_128x128_t128
#define TG_IN_DTYPE 3
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 0
#define TG_ROWWISE 0
#define TG_COLWISE 1
#define TG_COLS 4096
#define TG_THREADS 128
#define TG_TILE_ROWS 128
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL
#undef TG_IN_DTYPE
#undef TG_OUT_DTYPE
#undef TG_FMT
#undef TG_RECIPE
#undef TG_ROWWISE
#undef TG_COLWISE
#undef TG_COLS
#undef TG_THREADS
#undef TG_TILE_ROWS
#undef TG_TILE_COLS
#undef TG_EPS_SCALE
#undef TG_POW2
#define TG_KERNEL ct_t8_64x128_t256
#define TG_IN_DTYPE 3
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 0
#define TG_ROWWISE 0
#define TG_COLWISE 1
#define TG_COLS 4096
#define TG_THREADS 256
#define TG_TILE_ROWS 64
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL
#undef TG_IN_DTYPE
#undef TG_OUT_DTYPE
#undef TG_FMT
#undef TG_RECIPE
#undef TG_ROWWISE
#undef TG_COLWISE
#undef TG_COLS
#undef TG_THREADS
#undef TG_TILE_ROWS
#undef TG_TILE_COLS
#undef TG_EPS_SCALE
#undef TG_POW2
#define TG_KERNEL ct_t8_256x128_t256
#define TG_IN_DTYPE 3
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 0
#define TG_ROWWISE 0
#define TG_COLWISE 1
#define TG_COLS 4096
#define TG_THREADS 256
#define TG_TILE_ROWS 256
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#include "cast_transpose.cu"
#undef TG_KERNEL
#undef TG_IN_DTYPE
#undef TG_OUT_DTYPE
#undef TG_FMT
#undef TG_RECIPE
#undef TG_ROWWISE
#undef TG_COLWISE
#undef TG_COLS
#undef TG_THREADS
#undef TG_TILE_ROWS
#undef TG_TILE_COLS
#undef TG_EPS_SCALE
#undef TG_POW2
/* CT_PREFETCH twins (body() PF 1: next tile's loads once raw[] is dead; PF 2: double-buffered) */
#define TG_KERNEL ct_ct_pt_64x128_t256_pf1
#define TG_IN_DTYPE 1
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 1
#define TG_ROWWISE 1
#define TG_COLWISE 1
#define TG_COLS 4096
#define TG_THREADS 256
#define TG_TILE_ROWS 64
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#define CT_PREFETCH 1
#include "cast_transpose.cu"
#undef TG_KERNEL
#undef TG_IN_DTYPE
#undef TG_OUT_DTYPE
#undef TG_FMT
#undef TG_RECIPE
#undef TG_ROWWISE
#undef TG_COLWISE
#undef TG_COLS
#undef TG_THREADS
#undef TG_TILE_ROWS
#undef TG_TILE_COLS
#undef TG_EPS_SCALE
#undef TG_POW2
#undef CT_PREFETCH
#define TG_KERNEL ct_ct_pt_64x128_t256_pf2
#define TG_IN_DTYPE 1
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 1
#define TG_ROWWISE 1
#define TG_COLWISE 1
#define TG_COLS 4096
#define TG_THREADS 256
#define TG_TILE_ROWS 64
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#define CT_PREFETCH 2
#include "cast_transpose.cu"
#undef TG_KERNEL
#undef TG_IN_DTYPE
#undef TG_OUT_DTYPE
#undef TG_FMT
#undef TG_RECIPE
#undef TG_ROWWISE
#undef TG_COLWISE
#undef TG_COLS
#undef TG_THREADS
#undef TG_TILE_ROWS
#undef TG_TILE_COLS
#undef TG_EPS_SCALE
#undef TG_POW2
#undef CT_PREFETCH
#define TG_KERNEL ct_mx_rc_64x128_t256_pf1
#define TG_IN_DTYPE 1
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 6
#define TG_ROWWISE 1
#define TG_COLWISE 1
#define TG_COLS 4096
#define TG_THREADS 256
#define TG_TILE_ROWS 64
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#define CT_PREFETCH 1
#include "cast_transpose.cu"
#undef TG_KERNEL
#undef TG_IN_DTYPE
#undef TG_OUT_DTYPE
#undef TG_FMT
#undef TG_RECIPE
#undef TG_ROWWISE
#undef TG_COLWISE
#undef TG_COLS
#undef TG_THREADS
#undef TG_TILE_ROWS
#undef TG_TILE_COLS
#undef TG_EPS_SCALE
#undef TG_POW2
#undef CT_PREFETCH
#define TG_KERNEL ct_mx_rc_64x128_t256_pf2
#define TG_IN_DTYPE 1
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 6
#define TG_ROWWISE 1
#define TG_COLWISE 1
#define TG_COLS 4096
#define TG_THREADS 256
#define TG_TILE_ROWS 64
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#define CT_PREFETCH 2
#include "cast_transpose.cu"
#undef TG_KERNEL
#undef TG_IN_DTYPE
#undef TG_OUT_DTYPE
#undef TG_FMT
#undef TG_RECIPE
#undef TG_ROWWISE
#undef TG_COLWISE
#undef TG_COLS
#undef TG_THREADS
#undef TG_TILE_ROWS
#undef TG_TILE_COLS
#undef TG_EPS_SCALE
#undef TG_POW2
#undef CT_PREFETCH
#define TG_KERNEL ct_r6_e4m3_bf16_pf1_c160
#define TG_IN_DTYPE 1
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 6
#define TG_ROWWISE 1
#define TG_COLWISE 1
#define TG_COLS 160
#define TG_THREADS 256
#define TG_TILE_ROWS 64
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#define CT_PREFETCH 1
#include "cast_transpose.cu"
#undef TG_KERNEL
#undef TG_IN_DTYPE
#undef TG_OUT_DTYPE
#undef TG_FMT
#undef TG_RECIPE
#undef TG_ROWWISE
#undef TG_COLWISE
#undef TG_COLS
#undef TG_THREADS
#undef TG_TILE_ROWS
#undef TG_TILE_COLS
#undef TG_EPS_SCALE
#undef TG_POW2
#undef CT_PREFETCH
#define TG_KERNEL ct_r6_e4m3_bf16_pf2_c160
#define TG_IN_DTYPE 1
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 6
#define TG_ROWWISE 1
#define TG_COLWISE 1
#define TG_COLS 160
#define TG_THREADS 256
#define TG_TILE_ROWS 64
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#define CT_PREFETCH 2
#include "cast_transpose.cu"
#undef TG_KERNEL
#undef TG_IN_DTYPE
#undef TG_OUT_DTYPE
#undef TG_FMT
#undef TG_RECIPE
#undef TG_ROWWISE
#undef TG_COLWISE
#undef TG_COLS
#undef TG_THREADS
#undef TG_TILE_ROWS
#undef TG_TILE_COLS
#undef TG_EPS_SCALE
#undef TG_POW2
#undef CT_PREFETCH
#define TG_KERNEL ct_r6_e5m2_f32_row_pf2_c160
#define TG_IN_DTYPE 0
#define TG_OUT_DTYPE 0
#define TG_FMT 1
#define TG_RECIPE 6
#define TG_ROWWISE 1
#define TG_COLWISE 0
#define TG_COLS 160
#define TG_THREADS 256
#define TG_TILE_ROWS 64
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#define CT_PREFETCH 2
#include "cast_transpose.cu"
#undef TG_KERNEL
#undef TG_IN_DTYPE
#undef TG_OUT_DTYPE
#undef TG_FMT
#undef TG_RECIPE
#undef TG_ROWWISE
#undef TG_COLWISE
#undef TG_COLS
#undef TG_THREADS
#undef TG_TILE_ROWS
#undef TG_TILE_COLS
#undef TG_EPS_SCALE
#undef TG_POW2
#undef CT_PREFETCH
#define TG_KERNEL ct_r6_e4m3_f16_col_pf1_c160
#define TG_IN_DTYPE 2
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 6
#define TG_ROWWISE 0
#define TG_COLWISE 1
#define TG_COLS 160
#define TG_THREADS 256
#define TG_TILE_ROWS 64
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#define CT_PREFETCH 1
#include "cast_transpose.cu"
#undef TG_KERNEL
#undef TG_IN_DTYPE
#undef TG_OUT_DTYPE
#undef TG_FMT
#undef TG_RECIPE
#undef TG_ROWWISE
#undef TG_COLWISE
#undef TG_COLS
#undef TG_THREADS
#undef TG_TILE_ROWS
#undef TG_TILE_COLS
#undef TG_EPS_SCALE
#undef TG_POW2
#undef CT_PREFETCH
#define TG_KERNEL ct_r6_e4m3_f16_col_pf2_c256
#define TG_IN_DTYPE 2
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 6
#define TG_ROWWISE 0
#define TG_COLWISE 1
#define TG_COLS 256
#define TG_THREADS 256
#define TG_TILE_ROWS 64
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#define CT_PREFETCH 2
#include "cast_transpose.cu"
#undef TG_KERNEL
#undef TG_IN_DTYPE
#undef TG_OUT_DTYPE
#undef TG_FMT
#undef TG_RECIPE
#undef TG_ROWWISE
#undef TG_COLWISE
#undef TG_COLS
#undef TG_THREADS
#undef TG_TILE_ROWS
#undef TG_TILE_COLS
#undef TG_EPS_SCALE
#undef TG_POW2
#undef CT_PREFETCH
#define TG_KERNEL ct_r1_e4m3_bf16_pf1_c160
#define TG_IN_DTYPE 1
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 1
#define TG_ROWWISE 1
#define TG_COLWISE 1
#define TG_COLS 160
#define TG_THREADS 256
#define TG_TILE_ROWS 64
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#define CT_PREFETCH 1
#include "cast_transpose.cu"
#undef TG_KERNEL
#undef TG_IN_DTYPE
#undef TG_OUT_DTYPE
#undef TG_FMT
#undef TG_RECIPE
#undef TG_ROWWISE
#undef TG_COLWISE
#undef TG_COLS
#undef TG_THREADS
#undef TG_TILE_ROWS
#undef TG_TILE_COLS
#undef TG_EPS_SCALE
#undef TG_POW2
#undef CT_PREFETCH
#define TG_KERNEL ct_r1_e5m2_f32_pf2_c160
#define TG_IN_DTYPE 0
#define TG_OUT_DTYPE 0
#define TG_FMT 1
#define TG_RECIPE 1
#define TG_ROWWISE 1
#define TG_COLWISE 1
#define TG_COLS 160
#define TG_THREADS 256
#define TG_TILE_ROWS 64
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#define CT_PREFETCH 2
#include "cast_transpose.cu"
#undef TG_KERNEL
#undef TG_IN_DTYPE
#undef TG_OUT_DTYPE
#undef TG_FMT
#undef TG_RECIPE
#undef TG_ROWWISE
#undef TG_COLWISE
#undef TG_COLS
#undef TG_THREADS
#undef TG_TILE_ROWS
#undef TG_TILE_COLS
#undef TG_EPS_SCALE
#undef TG_POW2
#undef CT_PREFETCH
#define TG_KERNEL ct_r2_e5m2_f16_pow2_pf1_c160
#define TG_IN_DTYPE 2
#define TG_OUT_DTYPE 0
#define TG_FMT 1
#define TG_RECIPE 2
#define TG_ROWWISE 0
#define TG_COLWISE 1
#define TG_COLS 160
#define TG_THREADS 256
#define TG_TILE_ROWS 64
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 1e-2f
#define TG_POW2 1
#define CT_PREFETCH 1
#include "cast_transpose.cu"
#undef TG_KERNEL
#undef TG_IN_DTYPE
#undef TG_OUT_DTYPE
#undef TG_FMT
#undef TG_RECIPE
#undef TG_ROWWISE
#undef TG_COLWISE
#undef TG_COLS
#undef TG_THREADS
#undef TG_TILE_ROWS
#undef TG_TILE_COLS
#undef TG_EPS_SCALE
#undef TG_POW2
#undef CT_PREFETCH
#define TG_KERNEL ct_r4_e4m3_bf16_pf1_c160
#define TG_IN_DTYPE 1
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 4
#define TG_ROWWISE 1
#define TG_COLWISE 1
#define TG_COLS 160
#define TG_THREADS 256
#define TG_TILE_ROWS 128
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 1
#define CT_PREFETCH 1
#include "cast_transpose.cu"
#undef TG_KERNEL
#undef TG_IN_DTYPE
#undef TG_OUT_DTYPE
#undef TG_FMT
#undef TG_RECIPE
#undef TG_ROWWISE
#undef TG_COLWISE
#undef TG_COLS
#undef TG_THREADS
#undef TG_TILE_ROWS
#undef TG_TILE_COLS
#undef TG_EPS_SCALE
#undef TG_POW2
#undef CT_PREFETCH
#define TG_KERNEL ct_r4_e5m2_f16_col_pf2_c256
#define TG_IN_DTYPE 2
#define TG_OUT_DTYPE 0
#define TG_FMT 1
#define TG_RECIPE 4
#define TG_ROWWISE 0
#define TG_COLWISE 1
#define TG_COLS 256
#define TG_THREADS 256
#define TG_TILE_ROWS 128
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 1e-3f
#define TG_POW2 0
#define CT_PREFETCH 2
#include "cast_transpose.cu"
#undef TG_KERNEL
#undef TG_IN_DTYPE
#undef TG_OUT_DTYPE
#undef TG_FMT
#undef TG_RECIPE
#undef TG_ROWWISE
#undef TG_COLWISE
#undef TG_COLS
#undef TG_THREADS
#undef TG_TILE_ROWS
#undef TG_TILE_COLS
#undef TG_EPS_SCALE
#undef TG_POW2
#undef CT_PREFETCH
#define TG_KERNEL ct_r0_f32_f16_pf2_c160
#define TG_IN_DTYPE 0
#define TG_OUT_DTYPE 2
#define TG_FMT 0
#define TG_RECIPE 0
#define TG_ROWWISE 1
#define TG_COLWISE 1
#define TG_COLS 160
#define TG_THREADS 256
#define TG_TILE_ROWS 64
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#define CT_PREFETCH 2
#include "cast_transpose.cu"
#undef TG_KERNEL
#undef TG_IN_DTYPE
#undef TG_OUT_DTYPE
#undef TG_FMT
#undef TG_RECIPE
#undef TG_ROWWISE
#undef TG_COLWISE
#undef TG_COLS
#undef TG_THREADS
#undef TG_TILE_ROWS
#undef TG_TILE_COLS
#undef TG_EPS_SCALE
#undef TG_POW2
#undef CT_PREFETCH
#define TG_KERNEL ct_r6_e4m3_bf16_pf2_c512
#define TG_IN_DTYPE 1
#define TG_OUT_DTYPE 0
#define TG_FMT 0
#define TG_RECIPE 6
#define TG_ROWWISE 1
#define TG_COLWISE 1
#define TG_COLS 512
#define TG_THREADS 256
#define TG_TILE_ROWS 64
#define TG_TILE_COLS 128
#define TG_EPS_SCALE 0.0f
#define TG_POW2 0
#define CT_PREFETCH 2
#include "cast_transpose.cu"
#undef TG_KERNEL
#undef TG_IN_DTYPE
#undef TG_OUT_DTYPE
#undef TG_FMT
#undef TG_RECIPE
#undef TG_ROWWISE
#undef TG_COLWISE
#undef TG_COLS
#undef TG_THREADS
#undef TG_TILE_ROWS
#undef TG_TILE_COLS
#undef TG_EPS_SCALE
#undef TG_POW2
#undef CT_PREFETCH

static const Inst insts[] = {
	{"r0_bf16_bf16_c160", ct_r0_bf16_bf16_c160, 1, 1, 0, 0, 1, 1, 160, 256, 64, 128, 0.0f, 0, 0},
	{"r0_f32_f16_c160", ct_r0_f32_f16_c160, 0, 2, 0, 0, 1, 1, 160, 256, 64, 128, 0.0f, 0, 0},
	{"r1_e4m3_bf16_c160", ct_r1_e4m3_bf16_c160, 1, 0, 0, 1, 1, 1, 160, 256, 64, 128, 0.0f, 0, 0},
	{"r1_e5m2_f32_c160", ct_r1_e5m2_f32_c160, 0, 0, 1, 1, 1, 1, 160, 256, 64, 128, 0.0f, 0, 0},
	{"r2_e4m3_bf16_c160", ct_r2_e4m3_bf16_c160, 1, 0, 0, 2, 1, 1, 160, 256, 64, 128, 0.0f, 0, 0},
	{"r2_e5m2_f16_pow2_c160", ct_r2_e5m2_f16_pow2_c160, 2, 0, 1, 2, 0, 1, 160, 256, 64, 128, 1e-2f, 1, 0},
	{"r3_amax_bf16_c160", ct_r3_amax_bf16_c160, 1, 0, 0, 3, 1, 0, 160, 256, 64, 128, 0.0f, 0, 0},
	{"r4_e4m3_bf16_c160", ct_r4_e4m3_bf16_c160, 1, 0, 0, 4, 1, 1, 160, 256, 128, 128, 0.0f, 1, 0},
	{"r4_e5m2_f16_col_c160", ct_r4_e5m2_f16_col_c160, 2, 0, 1, 4, 0, 1, 160, 256, 128, 128, 1e-3f, 0, 0},
	{"r5_e4m3_bf16_c160", ct_r5_e4m3_bf16_c160, 1, 0, 0, 5, 1, 1, 160, 256, 128, 128, 0.0f, 1, 0},
	{"r6_e4m3_bf16_c160", ct_r6_e4m3_bf16_c160, 1, 0, 0, 6, 1, 1, 160, 256, 64, 128, 0.0f, 0, 0},
	{"r6_e5m2_f32_row_c160", ct_r6_e5m2_f32_row_c160, 0, 0, 1, 6, 1, 0, 160, 256, 64, 128, 0.0f, 0, 0},
	{"r6_e4m3_f16_col_c160", ct_r6_e4m3_f16_col_c160, 2, 0, 0, 6, 0, 1, 160, 256, 64, 128, 0.0f, 0, 0},
	{"r0_bf16_bf16_c256", ct_r0_bf16_bf16_c256, 1, 1, 0, 0, 1, 1, 256, 256, 64, 128, 0.0f, 0, 0},
	{"r0_f32_f16_c256", ct_r0_f32_f16_c256, 0, 2, 0, 0, 1, 1, 256, 256, 64, 128, 0.0f, 0, 0},
	{"r1_e4m3_bf16_c256", ct_r1_e4m3_bf16_c256, 1, 0, 0, 1, 1, 1, 256, 256, 64, 128, 0.0f, 0, 0},
	{"r1_e5m2_f32_c256", ct_r1_e5m2_f32_c256, 0, 0, 1, 1, 1, 1, 256, 256, 64, 128, 0.0f, 0, 0},
	{"r2_e4m3_bf16_c256", ct_r2_e4m3_bf16_c256, 1, 0, 0, 2, 1, 1, 256, 256, 64, 128, 0.0f, 0, 0},
	{"r2_e5m2_f16_pow2_c256", ct_r2_e5m2_f16_pow2_c256, 2, 0, 1, 2, 0, 1, 256, 256, 64, 128, 1e-2f, 1, 0},
	{"r3_amax_bf16_c256", ct_r3_amax_bf16_c256, 1, 0, 0, 3, 1, 0, 256, 256, 64, 128, 0.0f, 0, 0},
	{"r4_e4m3_bf16_c256", ct_r4_e4m3_bf16_c256, 1, 0, 0, 4, 1, 1, 256, 256, 128, 128, 0.0f, 1, 0},
	{"r4_e5m2_f16_col_c256", ct_r4_e5m2_f16_col_c256, 2, 0, 1, 4, 0, 1, 256, 256, 128, 128, 1e-3f, 0, 0},
	{"r5_e4m3_bf16_c256", ct_r5_e4m3_bf16_c256, 1, 0, 0, 5, 1, 1, 256, 256, 128, 128, 0.0f, 1, 0},
	{"r6_e4m3_bf16_c256", ct_r6_e4m3_bf16_c256, 1, 0, 0, 6, 1, 1, 256, 256, 64, 128, 0.0f, 0, 0},
	{"r6_e5m2_f32_row_c256", ct_r6_e5m2_f32_row_c256, 0, 0, 1, 6, 1, 0, 256, 256, 64, 128, 0.0f, 0, 0},
	{"r6_e4m3_f16_col_c256", ct_r6_e4m3_f16_col_c256, 2, 0, 0, 6, 0, 1, 256, 256, 64, 128, 0.0f, 0, 0},
	{"r0_bf16_bf16_c512", ct_r0_bf16_bf16_c512, 1, 1, 0, 0, 1, 1, 512, 256, 64, 128, 0.0f, 0, 0},
	{"r0_f32_f16_c512", ct_r0_f32_f16_c512, 0, 2, 0, 0, 1, 1, 512, 256, 64, 128, 0.0f, 0, 0},
	{"r1_e4m3_bf16_c512", ct_r1_e4m3_bf16_c512, 1, 0, 0, 1, 1, 1, 512, 256, 64, 128, 0.0f, 0, 0},
	{"r1_e5m2_f32_c512", ct_r1_e5m2_f32_c512, 0, 0, 1, 1, 1, 1, 512, 256, 64, 128, 0.0f, 0, 0},
	{"r2_e4m3_bf16_c512", ct_r2_e4m3_bf16_c512, 1, 0, 0, 2, 1, 1, 512, 256, 64, 128, 0.0f, 0, 0},
	{"r2_e5m2_f16_pow2_c512", ct_r2_e5m2_f16_pow2_c512, 2, 0, 1, 2, 0, 1, 512, 256, 64, 128, 1e-2f, 1, 0},
	{"r3_amax_bf16_c512", ct_r3_amax_bf16_c512, 1, 0, 0, 3, 1, 0, 512, 256, 64, 128, 0.0f, 0, 0},
	{"r4_e4m3_bf16_c512", ct_r4_e4m3_bf16_c512, 1, 0, 0, 4, 1, 1, 512, 256, 128, 128, 0.0f, 1, 0},
	{"r4_e5m2_f16_col_c512", ct_r4_e5m2_f16_col_c512, 2, 0, 1, 4, 0, 1, 512, 256, 128, 128, 1e-3f, 0, 0},
	{"r5_e4m3_bf16_c512", ct_r5_e4m3_bf16_c512, 1, 0, 0, 5, 1, 1, 512, 256, 128, 128, 0.0f, 1, 0},
	{"r6_e4m3_bf16_c512", ct_r6_e4m3_bf16_c512, 1, 0, 0, 6, 1, 1, 512, 256, 64, 128, 0.0f, 0, 0},
	{"r6_e5m2_f32_row_c512", ct_r6_e5m2_f32_row_c512, 0, 0, 1, 6, 1, 0, 512, 256, 64, 128, 0.0f, 0, 0},
	{"r6_e4m3_f16_col_c512", ct_r6_e4m3_f16_col_c512, 2, 0, 0, 6, 0, 1, 512, 256, 64, 128, 0.0f, 0, 0},
	{"r0_bf16_f32_c256", ct_r0_bf16_f32_c256, 1, 0, 0, 0, 1, 1, 256, 256, 64, 128, 0.0f, 0, 0},
	{"ct_pt_64x128_t256", ct_ct_pt_64x128_t256, 1, 0, 0, 1, 1, 1, 4096, 256, 64, 128, 0.0f, 0, 1},
	{"ct_pt_64x128_t256_pf1", ct_ct_pt_64x128_t256_pf1, 1, 0, 0, 1, 1, 1, 4096, 256, 64, 128, 0.0f, 0, 1},
	{"ct_pt_64x128_t256_pf2", ct_ct_pt_64x128_t256_pf2, 1, 0, 0, 1, 1, 1, 4096, 256, 64, 128, 0.0f, 0, 1},
	{"ct_pt_128x128_t256", ct_ct_pt_128x128_t256, 1, 0, 0, 1, 1, 1, 4096, 256, 128, 128, 0.0f, 0, 1},
	{"ct_pt_32x128_t256", ct_ct_pt_32x128_t256, 1, 0, 0, 1, 1, 1, 4096, 256, 32, 128, 0.0f, 0, 1},
	{"ct_pt_64x256_t256", ct_ct_pt_64x256_t256, 1, 0, 0, 1, 1, 1, 4096, 256, 64, 256, 0.0f, 0, 1},
	{"q_row_32x128_t256", ct_q_row_32x128_t256, 1, 0, 0, 1, 1, 0, 4096, 256, 32, 128, 0.0f, 0, 2},
	{"q_row_64x128_t256", ct_q_row_64x128_t256, 1, 0, 0, 1, 1, 0, 4096, 256, 64, 128, 0.0f, 0, 2},
	{"q_row_32x256_t256", ct_q_row_32x256_t256, 1, 0, 0, 1, 1, 0, 4096, 256, 32, 256, 0.0f, 0, 2},
	{"q_row_16x128_t128", ct_q_row_16x128_t128, 1, 0, 0, 1, 1, 0, 4096, 128, 16, 128, 0.0f, 0, 2},
	{"mx_rc_64x128_t256", ct_mx_rc_64x128_t256, 1, 0, 0, 6, 1, 1, 4096, 256, 64, 128, 0.0f, 0, 3},
	{"mx_rc_64x128_t256_pf1", ct_mx_rc_64x128_t256_pf1, 1, 0, 0, 6, 1, 1, 4096, 256, 64, 128, 0.0f, 0, 3},
	{"mx_rc_64x128_t256_pf2", ct_mx_rc_64x128_t256_pf2, 1, 0, 0, 6, 1, 1, 4096, 256, 64, 128, 0.0f, 0, 3},
	{"mx_rc_128x128_t256", ct_mx_rc_128x128_t256, 1, 0, 0, 6, 1, 1, 4096, 256, 128, 128, 0.0f, 0, 3},
	{"mx_rc_32x128_t256", ct_mx_rc_32x128_t256, 1, 0, 0, 6, 1, 1, 4096, 256, 32, 128, 0.0f, 0, 3},
	{"mx_rc_64x256_t256", ct_mx_rc_64x256_t256, 1, 0, 0, 6, 1, 1, 4096, 256, 64, 256, 0.0f, 0, 3},
	{"b128_rc_128x128_t256", ct_b128_rc_128x128_t256, 1, 0, 0, 4, 1, 1, 4096, 256, 128, 128, 0.0f, 1, 4},
	{"b128_rc_128x128_t512", ct_b128_rc_128x128_t512, 1, 0, 0, 4, 1, 1, 4096, 512, 128, 128, 0.0f, 1, 4},
	{"b128_rc_128x256_t256", ct_b128_rc_128x256_t256, 1, 0, 0, 4, 1, 1, 4096, 256, 128, 256, 0.0f, 1, 4},
	{"amax_64x128_t256", ct_amax_64x128_t256, 1, 0, 0, 3, 1, 0, 4096, 256, 64, 128, 0.0f, 0, 5},
	{"amax_32x256_t256", ct_amax_32x256_t256, 1, 0, 0, 3, 1, 0, 4096, 256, 32, 256, 0.0f, 0, 5},
	{"bb_rc_128x128_t256", ct_bb_rc_128x128_t256, 1, 0, 0, 5, 1, 1, 4096, 256, 128, 128, 0.0f, 1, 6},
	{"cur_ct_64x128_t256", ct_cur_ct_64x128_t256, 1, 0, 0, 2, 1, 1, 4096, 256, 64, 128, 0.0f, 0, 7},
	{"mx_row_32x256_t256", ct_mx_row_32x256_t256, 1, 0, 0, 6, 1, 0, 4096, 256, 32, 256, 0.0f, 0, 3},
	{"r6_e4m3_bf16_w64_c160", ct_r6_e4m3_bf16_w64_c160, 1, 0, 0, 6, 1, 1, 160, 256, 128, 128, 0.0f, 0, 0},
	{"r6_e5m2_f32_w32_c256", ct_r6_e5m2_f32_w32_c256, 0, 0, 1, 6, 1, 1, 256, 512, 128, 128, 0.0f, 0, 0},
	{"r6_e4m3_f32_w64_c512", ct_r6_e4m3_f32_w64_c512, 0, 0, 0, 6, 1, 1, 512, 256, 128, 128, 0.0f, 0, 0},
	{"r6_e4m3_bf16_w64x256_c160", ct_r6_e4m3_bf16_w64x256_c160, 1, 0, 0, 6, 1, 1, 160, 256, 64, 256, 0.0f, 0, 0},
	{"r6_e5m2_f16_col_w64_c160", ct_r6_e5m2_f16_col_w64_c160, 2, 0, 1, 6, 0, 1, 160, 256, 128, 128, 0.0f, 0, 0},
	{"r1_e4m3_f16_w64_c512", ct_r1_e4m3_f16_w64_c512, 2, 0, 0, 1, 1, 1, 512, 256, 128, 128, 0.0f, 0, 0},
	{"r2_e5m2_bf16_w32_c160", ct_r2_e5m2_bf16_w32_c160, 1, 0, 1, 2, 1, 1, 160, 512, 128, 128, 1e-2f, 1, 0},
	{"r1_e4m3_bf16_old_c160", ct_r1_e4m3_bf16_old_c160, 1, 0, 0, 1, 1, 1, 160, 256, 64, 128, 0.0f, 0, 0},
	{"r6_e4m3_bf16_old_c160", ct_r6_e4m3_bf16_old_c160, 1, 0, 0, 6, 1, 1, 160, 256, 64, 128, 0.0f, 0, 0},
	{"r3_amax_f32_c160", ct_r3_amax_f32_c160, 0, 0, 0, 3, 1, 0, 160, 256, 64, 128, 0.0f, 0, 0},
	{"r3_amax_f16_c512", ct_r3_amax_f16_c512, 2, 0, 0, 3, 1, 0, 512, 256, 64, 128, 0.0f, 0, 0},
	{"t8_w64_c160", ct_t8_w64_c160, 3, 0, 0, 0, 0, 1, 160, 256, 128, 128, 0.0f, 0, 0},
	{"t8_w128_c256", ct_t8_w128_c256, 3, 0, 0, 0, 0, 1, 256, 128, 128, 128, 0.0f, 0, 0},
	{"t8_w32_row_c512", ct_t8_w32_row_c512, 3, 0, 0, 0, 1, 1, 512, 256, 64, 128, 0.0f, 0, 0},
	{"ct_pt_64x128_t256_old", ct_ct_pt_64x128_t256_old, 1, 0, 0, 1, 1, 1, 4096, 256, 64, 128, 0.0f, 0, 1},
	{"ct_pt_128x128_t512", ct_ct_pt_128x128_t512, 1, 0, 0, 1, 1, 1, 4096, 512, 128, 128, 0.0f, 0, 1},
	{"mx_rc_64x128_t256_old", ct_mx_rc_64x128_t256_old, 1, 0, 0, 6, 1, 1, 4096, 256, 64, 128, 0.0f, 0, 3},
	{"amax_64x128_t256_old", ct_amax_64x128_t256_old, 1, 0, 0, 3, 1, 0, 4096, 256, 64, 128, 0.0f, 0, 5},
	{"cur_ct_64x128_t256_old", ct_cur_ct_64x128_t256_old, 1, 0, 0, 2, 1, 1, 4096, 256, 64, 128, 0.0f, 0, 7},
	{"cur_ct_128x128_t256", ct_cur_ct_128x128_t256, 1, 0, 0, 2, 1, 1, 4096, 256, 128, 128, 0.0f, 0, 7},
	{"t8_128x128_t256", ct_t8_128x128_t256, 3, 0, 0, 0, 0, 1, 4096, 256, 128, 128, 0.0f, 0, 8},
	{"t8_128x128_t128", ct_t8_128x128_t128, 3, 0, 0, 0, 0, 1, 4096, 128, 128, 128, 0.0f, 0, 8},
	{"t8_64x128_t256", ct_t8_64x128_t256, 3, 0, 0, 0, 0, 1, 4096, 256, 64, 128, 0.0f, 0, 8},
	{"t8_256x128_t256", ct_t8_256x128_t256, 3, 0, 0, 0, 0, 1, 4096, 256, 256, 128, 0.0f, 0, 8},
	{"r6_e4m3_bf16_pf1_c160", ct_r6_e4m3_bf16_pf1_c160, 1, 0, 0, 6, 1, 1, 160, 256, 64, 128, 0.0f, 0, 0},
	{"r6_e4m3_bf16_pf2_c160", ct_r6_e4m3_bf16_pf2_c160, 1, 0, 0, 6, 1, 1, 160, 256, 64, 128, 0.0f, 0, 0},
	{"r6_e5m2_f32_row_pf2_c160", ct_r6_e5m2_f32_row_pf2_c160, 0, 0, 1, 6, 1, 0, 160, 256, 64, 128, 0.0f, 0, 0},
	{"r6_e4m3_f16_col_pf1_c160", ct_r6_e4m3_f16_col_pf1_c160, 2, 0, 0, 6, 0, 1, 160, 256, 64, 128, 0.0f, 0, 0},
	{"r6_e4m3_f16_col_pf2_c256", ct_r6_e4m3_f16_col_pf2_c256, 2, 0, 0, 6, 0, 1, 256, 256, 64, 128, 0.0f, 0, 0},
	{"r1_e4m3_bf16_pf1_c160", ct_r1_e4m3_bf16_pf1_c160, 1, 0, 0, 1, 1, 1, 160, 256, 64, 128, 0.0f, 0, 0},
	{"r1_e5m2_f32_pf2_c160", ct_r1_e5m2_f32_pf2_c160, 0, 0, 1, 1, 1, 1, 160, 256, 64, 128, 0.0f, 0, 0},
	{"r2_e5m2_f16_pow2_pf1_c160", ct_r2_e5m2_f16_pow2_pf1_c160, 2, 0, 1, 2, 0, 1, 160, 256, 64, 128, 1e-2f, 1, 0},
	{"r4_e4m3_bf16_pf1_c160", ct_r4_e4m3_bf16_pf1_c160, 1, 0, 0, 4, 1, 1, 160, 256, 128, 128, 0.0f, 1, 0},
	{"r4_e5m2_f16_col_pf2_c256", ct_r4_e5m2_f16_col_pf2_c256, 2, 0, 1, 4, 0, 1, 256, 256, 128, 128, 1e-3f, 0, 0},
	{"r0_f32_f16_pf2_c160", ct_r0_f32_f16_pf2_c160, 0, 2, 0, 0, 1, 1, 160, 256, 64, 128, 0.0f, 0, 0},
	{"r6_e4m3_bf16_pf2_c512", ct_r6_e4m3_bf16_pf2_c512, 1, 0, 0, 6, 1, 1, 512, 256, 64, 128, 0.0f, 0, 0},
};

#define TG_KERNEL ru_update_t256
#define TG_THREADS 256
#include "recipe_update.cu"
#undef TG_KERNEL
#undef TG_THREADS
#define TG_KERNEL ru_update_t64
#define TG_THREADS 64
#include "recipe_update.cu"
#undef TG_KERNEL
#undef TG_THREADS
#define TG_KERNEL sw_swizzle_t256
#define TG_THREADS 256
#include "mxfp8_swizzle.cu"
#undef TG_KERNEL
#undef TG_THREADS

static int g_fail = 0;
static const size_t GUARD = 64;
static const unsigned char POISON = 0xA5;

static int esize(int dt) { return dt == 0 ? 4 : 2; }
static long long cdivl(long long a, long long b) { return (a + b - 1) / b; }

/* deterministic xorshift */
static unsigned long long g_rng = 0x9E3779B97F4A7C15ull;
static unsigned rnd32(void)
{
	g_rng ^= g_rng << 13;
	g_rng ^= g_rng >> 7;
	g_rng ^= g_rng << 17;
	return (unsigned)(g_rng >> 32);
}
static float urand(void) { return (rnd32() >> 8) * (1.0f / 16777216.0f); }
static float nrand(void)
{
	float u1 = urand() + 1e-7f, u2 = urand();
	return sqrtf(-2.0f * logf(u1)) * cosf(6.2831853f * u2);
}

/* Device buffer with a poisoned guard zone. */
struct DBuf {
	unsigned char *d = nullptr;
	size_t n = 0;
	void alloc(size_t bytes)
	{
		n = bytes;
		CK(cudaMalloc(&d, bytes + GUARD));
	}
	void poison() { CK(cudaMemset(d, POISON, n + GUARD)); }
	void free_() { if (d) CK(cudaFree(d)); d = nullptr; }
};

/* Compare device bytes (plus guard) with expected host bytes. */
static bool cmp(const char *what, const char *kname, long long rows, int grid, const DBuf &b,
                const void *want, int elem)
{
	std::vector<unsigned char> got(b.n + GUARD);
	CK(cudaMemcpy(got.data(), b.d, b.n + GUARD, cudaMemcpyDeviceToHost));
	const unsigned char *w = (const unsigned char *)want;
	size_t bad = 0, first = (size_t)-1;
	for (size_t i = 0; i < b.n; i++)
		if (got[i] != w[i]) {
			if (first == (size_t)-1)
				first = i;
			bad++;
		}
	size_t gbad = 0;
	for (size_t i = b.n; i < b.n + GUARD; i++)
		gbad += got[i] != POISON;
	if (bad || gbad) {
		g_fail++;
		printf("FAIL %-28s rows=%-6lld grid=%-5d %-12s %zu/%zu bytes differ, %zu guard bytes written",
		       kname, rows, grid, what, bad, b.n, gbad);
		if (bad) {
			size_t e = first / elem;
			printf("; first at element %zu: got 0x", e);
			for (int k = elem - 1; k >= 0; k--)
				printf("%02x", got[e * elem + k]);
			printf(" want 0x");
			for (int k = elem - 1; k >= 0; k--)
				printf("%02x", w[e * elem + k]);
		}
		printf("\n");
		return false;
	}
	return true;
}

static long long tiles_of(const Inst &k, long long rows)
{
	return cdivl(rows, k.tr) * cdivl(k.cols, k.tc);
}

/* Input: magnitudes vary per row and 32-column block; an all-zero 128x128
 * block at rows [128,256) x cols [0,128); huge and subnormal values; with
 * specials: NaN, +inf, -inf. */
static void make_input(int dt, long long rows, int cols, bool specials, std::vector<unsigned char> &raw,
                       std::vector<float> &x)
{
	size_t n = (size_t)rows * cols;
	raw.resize(n * esize(dt));
	x.resize(n);
	for (long long r = 0; r < rows; r++)
		for (int c = 0; c < cols; c++) {
			int e = (int)((r * 7 + (c / 32) * 3) % 23) - 11;
			float v = nrand() * ldexpf(1.0f, e);
			if (r >= 128 && r < 256 && c < 128)
				v = 0.0f;
			ref_store(raw.data(), dt, (size_t)r * cols + c, v);
		}
	auto put = [&](long long r, int c, float v) {
		if (r >= 0 && r < rows && c >= 0 && c < cols)
			ref_store(raw.data(), dt, (size_t)r * cols + c, v);
	};
	put(rows > 2 ? 2 : 0, 5 % cols, 3.0e38f);
	put(rows - 1, cols - 3, -1.5e30f);
	put(rows / 3, 9, 1.0e-40f);
	put(rows / 3, 10, -3.0e-39f);
	if (specials) {
		put(rows > 3 ? 3 : 0, 7, nanf(""));
		put(rows / 2, cols - 1, INFINITY);
		put(rows - 1, cols / 2, -INFINITY);
	}
	for (size_t i = 0; i < n; i++)
		x[i] = ref_load(raw.data(), dt, i);
}

struct Expect {
	std::vector<unsigned char> out, out_t, si, si_t, scale;
	float amax;
};

static void reference(const Inst &k, long long rows, const std::vector<float> &x, float scale_in,
                      float amax_in, Expect &E, size_t out_b, size_t out_t_b, size_t si_b, size_t si_t_b)
{
	int R = (int)rows, C = k.cols;
	E.out.assign(out_b, 0);
	E.out_t.assign(out_t_b, 0);
	E.si.assign(si_b, 0);
	E.si_t.assign(si_t_b, 0);
	E.amax = ref_amax(x.data(), x.size());
	uint8_t *o = k.roww ? E.out.data() : nullptr, *ot = k.colw ? E.out_t.data() : nullptr;
	switch (k.recipe) {
	case 0:
		if (out_b)
			for (size_t i = 0; i < x.size(); i++)
				ref_store(E.out.data(), k.out_dt, i, x[i]);
		if (out_t_b)
			for (int c = 0; c < C; c++)
			for (int r = 0; r < R; r++)
				ref_store(E.out_t.data(), k.out_dt, (size_t)c * R + r, x[(size_t)r * C + c]);
		break;
	case 1:
		ref_quant_tensor(x.data(), R, C, k.fmt, scale_in, o, ot, nullptr, (float *)E.si.data());
		break;
	case 2: {
		float s = tg_current_scale(amax_in, tg_fmt_max(k.fmt), k.eps, k.pow2);
		E.scale.resize(4);
		memcpy(E.scale.data(), &s, 4);
		ref_quant_tensor(x.data(), R, C, k.fmt, s, o, ot, nullptr, (float *)E.si.data());
		break;
	}
	case 3:
		break;
	case 4:
		ref_quant_block1x128(x.data(), R, C, k.fmt, k.eps, k.pow2, o, (float *)E.si.data(), ot,
		                     (float *)E.si_t.data());
		break;
	case 5: {
		std::vector<unsigned char> a(si_b ? si_b : 4), b(si_t_b ? si_t_b : 4);
		ref_quant_block128x128(x.data(), R, C, k.fmt, k.eps, k.pow2, o, (float *)a.data(), ot,
		                       (float *)b.data());
		if (si_b)
			memcpy(E.si.data(), a.data(), si_b);
		if (si_t_b)
			memcpy(E.si_t.data(), b.data(), si_t_b);
		break;
	}
	case 6:
		ref_quant_mxfp8(x.data(), R, C, k.fmt, o, k.roww ? E.si.data() : nullptr, ot,
		                k.colw ? E.si_t.data() : nullptr);
		break;
	}
}

/* One shape, one input variant, two grids. */
static void test_case(const Inst &k, long long rows, bool specials)
{
	std::vector<unsigned char> raw;
	std::vector<float> x;
	const bool bytes_in = k.in_dt == 3; /* raw byte transpose: random bytes, out_t = their transpose */
	if (bytes_in) {
		raw.resize((size_t)rows * k.cols);
		for (auto &b : raw) b = (unsigned char)rnd32();
		x.assign(raw.size(), 0.0f);
	} else
		make_input(k.in_dt, rows, k.cols, specials, raw, x);
	const int C = k.cols;
	const bool q = k.recipe != 3;
	const int oes = bytes_in ? 1 : k.recipe == 0 ? esize(k.out_dt) : 1;
	size_t n = (size_t)rows * C;
	size_t out_b = q && k.roww ? n * oes : 0, out_t_b = q && k.colw ? n * oes : 0;
	size_t si_b = 0, si_t_b = 0;
	switch (k.recipe) {
	case 1: case 2: si_b = 4; break;
	case 4: si_b = k.roww ? cdivl(C, 128) * rows * 4 : 0; si_t_b = k.colw ? cdivl(rows, 128) * C * 4 : 0; break;
	case 5: si_b = k.roww ? cdivl(rows, 128) * cdivl(C, 128) * 4 : 0; si_t_b = k.colw ? cdivl(rows, 128) * cdivl(C, 128) * 4 : 0; break;
	case 6: si_b = k.roww ? rows * cdivl(C, 32) : 0; si_t_b = k.colw ? C * cdivl(rows, 32) : 0; break;
	}
	const float scale_in = 0.37109375f * (k.fmt ? 64.0f : 1.0f);
	const float amax_in = ref_amax(x.data(), n);
	Expect E;
	if (bytes_in) {
		E.amax = 0.0f; /* AMAX untouched (zeroed before the launch) */
		E.out.assign(out_b, 0);
		E.out_t.assign(out_t_b, 0);
		if (out_b) memcpy(E.out.data(), raw.data(), out_b);
		if (out_t_b)
			for (long long r = 0; r < rows; r++)
				for (int c = 0; c < C; c++)
					E.out_t[(size_t)c * rows + r] = raw[(size_t)r * C + c];
	} else
		reference(k, rows, x, scale_in, amax_in, E, out_b, out_t_b, si_b, si_t_b);

	DBuf din, dout, dout_t, dsi, dsi_t, dscale, damax;
	din.alloc(raw.size());
	CK(cudaMemcpy(din.d, raw.data(), raw.size(), cudaMemcpyHostToDevice));
	dout.alloc(out_b);
	dout_t.alloc(out_t_b);
	dsi.alloc(si_b);
	dsi_t.alloc(si_t_b);
	dscale.alloc(4);
	damax.alloc(4);
	long long tiles = tiles_of(k, rows);
	int grids[2] = {(int)std::min<long long>(tiles, 1 << 20), 3};
	for (int gi = 0; gi < 2; gi++) {
		int grid = grids[gi];
		dout.poison(); dout_t.poison(); dsi.poison(); dsi_t.poison(); dscale.poison(); damax.poison();
		float zero = 0.0f;
		if (k.recipe == 1)
			CK(cudaMemcpy(dscale.d, &scale_in, 4, cudaMemcpyHostToDevice));
		if (k.recipe == 2)
			CK(cudaMemcpy(damax.d, &amax_in, 4, cudaMemcpyHostToDevice));
		else
			CK(cudaMemcpy(damax.d, &zero, 4, cudaMemcpyHostToDevice));
		TgParams p;
		memset(&p, 0, sizeof p);
		p.p[TG_P_IN] = din.d;
		p.p[TG_P_OUT] = out_b ? dout.d : nullptr;
		p.p[TG_P_OUT_T] = out_t_b ? dout_t.d : nullptr;
		p.p[TG_P_SCALE] = dscale.d;
		p.p[TG_P_SCALE_INV] = si_b ? dsi.d : nullptr;
		p.p[TG_P_SCALE_INV_T] = si_t_b ? dsi_t.d : nullptr;
		p.p[TG_P_AMAX] = damax.d;
		p.n[0] = rows;
		p.n[1] = C;
		k.fn<<<grid, k.thr>>>(p);
		CK(cudaGetLastError());
		CK(cudaDeviceSynchronize());
		bool ok = true;
		if (out_b) ok &= cmp("out", k.name, rows, grid, dout, E.out.data(), oes);
		if (out_t_b) ok &= cmp("out_t", k.name, rows, grid, dout_t, E.out_t.data(), oes);
		if (si_b) ok &= cmp("scale_inv", k.name, rows, grid, dsi, E.si.data(), k.recipe == 6 ? 1 : 4);
		if (si_t_b) ok &= cmp("scale_inv_t", k.name, rows, grid, dsi_t, E.si_t.data(), k.recipe == 6 ? 1 : 4);
		if (k.recipe == 2) ok &= cmp("scale", k.name, rows, grid, dscale, E.scale.data(), 4);
		if (k.recipe != 2) ok &= cmp("amax", k.name, rows, grid, damax, &E.amax, 4);
		else ok &= cmp("amax(kept)", k.name, rows, grid, damax, &amax_in, 4);
		(void)ok;
	}
	din.free_(); dout.free_(); dout_t.free_(); dsi.free_(); dsi_t.free_(); dscale.free_(); damax.free_();
}

/* recipe_update: ten steps vs ref_delayed_step. */
static void test_recipe_update(KernFn fn, int thr, const char *name, int n, int L, int grid)
{
	std::vector<float> st(TG_STATE_FLOATS(n, (size_t)L), 0.0f);
	std::vector<int> par(4 * n);
	std::vector<std::vector<float>> hh(n);
	std::vector<RefDelayed> rs(n);
	for (int i = 0; i < n; i++) {
		int fmt = i % 2, margin = i % 3, algo = (i / 2) % 2;
		int len = i == 0 ? L : i == 1 ? 1 : 1 + (int)(rnd32() % L);
		par[4 * i] = fmt; par[4 * i + 1] = margin; par[4 * i + 2] = algo; par[4 * i + 3] = len;
		hh[i].assign(len, 0.0f);
		rs[i].hist = hh[i].data();
		rs[i].L = len; rs[i].margin = margin; rs[i].most_recent = algo;
		rs[i].fmt_max = tg_fmt_max(fmt);
		rs[i].scale = 1.0f + 0.25f * (i % 5);
		rs[i].scale_inv = 1.0f / rs[i].scale;
		st[TG_STATE_SCALE(n, i)] = rs[i].scale;
		st[TG_STATE_SCALE_INV(n, i)] = rs[i].scale_inv;
	}
	float *dst; int *dpar;
	CK(cudaMalloc(&dst, st.size() * 4));
	CK(cudaMalloc(&dpar, par.size() * 4));
	CK(cudaMemcpy(dst, st.data(), st.size() * 4, cudaMemcpyHostToDevice));
	CK(cudaMemcpy(dpar, par.data(), par.size() * 4, cudaMemcpyHostToDevice));
	int bad_total = 0;
	for (int step = 0; step < 10; step++) {
		/* this step's amaxes land in history row 0 (as the kernels' atomic max does) */
		std::vector<float> row0(n);
		for (int i = 0; i < n; i++) {
			float a = fabsf(nrand()) * ldexpf(1.0f, (int)(rnd32() % 20) - 10);
			if ((i + step) % 7 == 0) a = 0.0f;
			if (step == 4 && i == 3) a = INFINITY;
			if (step == 6 && i % 5 == 1) a = 3.0e-39f;
			row0[i] = a;
			ref_delayed_step(&rs[i], a);
		}
		CK(cudaMemcpy(dst + TG_STATE_HISTORY(n), row0.data(), n * 4, cudaMemcpyHostToDevice));
		TgParams p;
		memset(&p, 0, sizeof p);
		p.p[0] = dst; p.p[1] = dpar; p.n[0] = n; p.n[1] = L;
		fn<<<grid, thr>>>(p);
		CK(cudaGetLastError());
		CK(cudaDeviceSynchronize());
		std::vector<float> got(st.size());
		CK(cudaMemcpy(got.data(), dst, got.size() * 4, cudaMemcpyDeviceToHost));
		std::vector<float> want(st.size(), 0.0f);
		for (int i = 0; i < n; i++) {
			want[TG_STATE_SCALE(n, i)] = rs[i].scale;
			want[TG_STATE_SCALE_INV(n, i)] = rs[i].scale_inv;
			for (int j = 0; j < rs[i].L; j++)
				want[TG_STATE_HISTORY(n) + (size_t)j * n + i] = hh[i][j];
		}
		int bad = 0;
		for (size_t e = 0; e < want.size(); e++)
			if (memcmp(&got[e], &want[e], 4)) {
				if (bad < 3)
					printf("FAIL %s n=%d L=%d step %d: state[%zu] got %a want %a\n", name, n, L, step, e,
					       got[e], want[e]);
				bad++;
			}
		bad_total += bad;
	}
	if (bad_total) g_fail++;
	printf("%s %-16s n=%-4d L=%-5d grid=%d: 10 steps, %d mismatching words\n", bad_total ? "FAIL" : "ok  ",
	       name, n, L, grid, bad_total);
	CK(cudaFree(dst));
	CK(cudaFree(dpar));
}

static void test_swizzle(int rows, int scols, int grid)
{
	std::vector<unsigned char> s((size_t)rows * scols);
	for (auto &v : s) v = (unsigned char)rnd32();
	size_t zb = ref_swizzle_size(rows, scols);
	std::vector<unsigned char> want(zb);
	ref_swizzle_scales(s.data(), rows, scols, want.data());
	DBuf din, dout;
	din.alloc(s.size());
	dout.alloc(zb);
	dout.poison();
	CK(cudaMemcpy(din.d, s.data(), s.size(), cudaMemcpyHostToDevice));
	TgParams p;
	memset(&p, 0, sizeof p);
	p.p[TG_P_IN] = din.d; p.p[TG_P_OUT] = dout.d; p.n[0] = rows; p.n[1] = scols;
	sw_swizzle_t256<<<grid, 256>>>(p);
	CK(cudaGetLastError());
	CK(cudaDeviceSynchronize());
	char nm[64];
	snprintf(nm, sizeof nm, "swizzle %dx%d", rows, scols);
	if (cmp("swizzled", nm, rows, grid, dout, want.data(), 1))
		printf("ok   %-28s grid=%d\n", nm, grid);
	din.free_(); dout.free_();
}

/* ---- benchmark ---- */
static float median(std::vector<float> v)
{
	std::sort(v.begin(), v.end());
	return v[v.size() / 2];
}

static void bench(int nsm)
{
	const long long ROWS = 16384;
	const int COLS = 4096;
	const size_t nel = (size_t)ROWS * COLS;
	/* copy ceiling */
	size_t cb = (size_t)1 << 30;
	void *ca, *cbuf;
	CK(cudaMalloc(&ca, cb));
	CK(cudaMalloc(&cbuf, cb));
	CK(cudaMemset(ca, 1, cb));
	cudaEvent_t e0, e1;
	CK(cudaEventCreate(&e0));
	CK(cudaEventCreate(&e1));
	std::vector<float> ts;
	for (int i = 0; i < 13; i++) {
		CK(cudaEventRecord(e0));
		CK(cudaMemcpyAsync(cbuf, ca, cb, cudaMemcpyDeviceToDevice));
		CK(cudaEventRecord(e1));
		CK(cudaEventSynchronize(e1));
		float ms;
		CK(cudaEventElapsedTime(&ms, e0, e1));
		if (i >= 3) ts.push_back(ms);
	}
	float copy_gbs = 2.0 * cb / (median(ts) * 1e-3) / 1e9;
	CK(cudaFree(ca));
	CK(cudaFree(cbuf));
	printf("\nbenchmark (%d SMs): cudaMemcpy D2D 1 GiB: %.1f us, %.1f GB/s (read+write) = copy ceiling\n", nsm,
	       median(ts) * 1e3, copy_gbs);

	const int NIN = 3; /* 3 x 128 MiB inputs rotated */
	void *din[NIN];
	for (int i = 0; i < NIN; i++) {
		CK(cudaMalloc(&din[i], nel * 2));
		std::vector<uint16_t> h(1 << 20);
		for (auto &v : h) v = tg_f32_to_bf16(nrand() * 3.0f);
		for (size_t off = 0; off < nel; off += h.size())
			CK(cudaMemcpy((uint16_t *)din[i] + off, h.data(), h.size() * 2, cudaMemcpyHostToDevice));
	}
	void *dout, *dout_t, *dsi, *dsi_t, *dsc;
	CK(cudaMalloc(&dout, nel));
	CK(cudaMalloc(&dout_t, nel));
	CK(cudaMalloc(&dsi, nel / 8));
	CK(cudaMalloc(&dsi_t, nel / 8));
	CK(cudaMalloc(&dsc, 256));
	float one = 1.0f, am = 5.0f;
	CK(cudaMemcpy(dsc, &one, 4, cudaMemcpyHostToDevice));
	CK(cudaMemcpy((char *)dsc + 128, &am, 4, cudaMemcpyHostToDevice));
	static const char *group_names[] = {"", "cast+transpose per-tensor FP8 + amax", "quantize rowwise per-tensor FP8 + amax",
	                                    "MXFP8 rowwise+columnwise", "block1x128 rowwise+columnwise", "amax pass (current scaling)",
	                                    "block128x128 rowwise+columnwise", "current-scaling cast+transpose",
	                                    "FP8 byte transpose (in_dt 3)"};
	printf("%-40s %-22s %-12s %9s %9s %8s\n", "kernel", "variant", "shape", "us", "GB/s", "% copy");
	for (int grp = 1; grp <= 8; grp++) {
		for (const Inst &k : insts) {
			if (k.bench != grp)
				continue;
			const bool q = k.recipe != 3;
			size_t bytes = nel * (k.in_dt == 3 ? 1 : 2); /* input read once */
			if (q && k.roww) bytes += nel;
			if (q && k.colw) bytes += nel;
			if (k.recipe == 6) bytes += (k.roww ? nel / 32 : 0) + (k.colw ? nel / 32 : 0);
			if (k.recipe == 4) bytes += (k.roww ? nel / 128 * 4 : 0) + (k.colw ? nel / 128 * 4 : 0);
			TgParams p;
			memset(&p, 0, sizeof p);
			p.p[TG_P_OUT] = dout;
			p.p[TG_P_OUT_T] = dout_t;
			p.p[TG_P_SCALE] = k.recipe == 2 ? (char *)dsc + 64 : dsc;
			p.p[TG_P_SCALE_INV] = dsi;
			p.p[TG_P_SCALE_INV_T] = dsi_t;
			p.p[TG_P_AMAX] = (k.recipe == 1 || k.recipe == 3) ? (char *)dsc + 192 : k.recipe == 2 ? (char *)dsc + 128 : nullptr;
			p.n[0] = ROWS;
			p.n[1] = COLS;
			long long tiles = tiles_of(k, ROWS);
			/* two grids: full (one CTA per tile) and capped at the resident CTAs (persistent) */
			int occ = 0;
			CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, (const void *)k.fn, k.thr, 0));
			for (int gsel = 0; gsel < 2; gsel++) {
			const long long cap = (long long)nsm * (occ > 0 ? occ : 1);
			int grid = (int)std::min<long long>(gsel ? std::min(tiles, cap) : tiles, 1 << 30);
			if (gsel && grid == (int)std::min<long long>(tiles, 1 << 30)) continue;
			std::vector<float> t;
			for (int it = 0; it < 55; it++) {
				p.p[TG_P_IN] = din[it % NIN];
				CK(cudaEventRecord(e0));
				k.fn<<<grid, k.thr>>>(p);
				CK(cudaEventRecord(e1));
				CK(cudaEventSynchronize(e1));
				float ms;
				CK(cudaEventElapsedTime(&ms, e0, e1));
				if (it >= 5) t.push_back(ms);
			}
			CK(cudaGetLastError());
			float us = median(t) * 1e3f;
			double gbs = bytes / (us * 1e-6) / 1e9;
			char var[64];
			snprintf(var, sizeof var, "%dx%d t%d %s", k.tr, k.tc, k.thr, gsel ? "cap" : "full");
			printf("%-40s %-22s %-12s %9.1f %9.1f %7.1f%%   (%s, grid %d, %d CTA/SM)\n", group_names[grp], var,
			       "16384x4096", us, gbs, 100.0 * gbs / copy_gbs, k.name, grid, occ);
			}
		}
	}
	for (int i = 0; i < NIN; i++) CK(cudaFree(din[i]));
	CK(cudaFree(dout)); CK(cudaFree(dout_t)); CK(cudaFree(dsi)); CK(cudaFree(dsi_t)); CK(cudaFree(dsc));
}

int main(int argc, char **argv)
{
	bool do_bench = true, quick = false;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--no-bench")) do_bench = false;
		if (!strcmp(argv[i], "--quick")) quick = true;
	}
	int dev = 0;
	cudaDeviceProp prop;
	CK(cudaGetDeviceProperties(&prop, dev));
	printf("device: %s (sm_%d%d, %d SMs, L2 %d MB)\n", prop.name, prop.major, prop.minor,
	       prop.multiProcessorCount, prop.l2CacheSize >> 20);

	/* correctness */
	for (const Inst &k : insts) {
		int before = g_fail;
		std::vector<long long> rs = {1, 5, 217, 993};
		if (k.cols <= 256 && !quick) rs.push_back(16384);
		else rs.push_back(2048);
		int ncase = 0;
		for (long long r : rs)
			for (int sp = 0; sp < 2; sp++) {
				if (r >= 2048 && sp == 0 && k.cols > 256) continue;
				test_case(k, r, sp == 1);
				ncase++;
			}
		printf("%s %-28s cols=%-5d recipe=%d row=%d col=%d in=%d tile %dx%d t%d: %d shapes x 2 grids\n",
		       g_fail == before ? "ok  " : "FAIL", k.name, k.cols, k.recipe, k.roww, k.colw, k.in_dt, k.tr, k.tc,
		       k.thr, ncase);
		fflush(stdout);
	}
	test_recipe_update(ru_update_t256, 256, "recipe_update t256", 37, 16, 2);
	test_recipe_update(ru_update_t256, 256, "recipe_update t256", 37, 16, 1);
	test_recipe_update(ru_update_t64, 64, "recipe_update t64", 5, 1024, 1);
	test_recipe_update(ru_update_t256, 256, "recipe_update t256", 70, 1024, 3);
	test_swizzle(1, 1, 1);
	test_swizzle(217, 5, 2);
	test_swizzle(993, 128, 3);
	test_swizzle(16384, 128, 1000);
	printf("\ncorrectness: %s (%d failing checks)\n", g_fail ? "FAILED" : "all passed", g_fail);
	fflush(stdout);
	if (do_bench)
		bench(prop.multiProcessorCount);
	return g_fail ? 1 : 0;
}
