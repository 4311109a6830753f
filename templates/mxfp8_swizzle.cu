// tegen-slots: TG_KERNEL TG_THREADS TG_SRC_T
/* mxfp8_swizzle.cu: plain E8M0 scales [rows][scols] -> the GEMM-swizzled
 * layout of cuBLASLt/TE (ref_swizzle_scales): the matrix padded to multiples
 * of 128 rows and 4 columns, cut into 128x4 tiles of 512 bytes in row-major
 * tile order; inside a tile scale (r, c) sits at (r%32)*16 + (r/32)*4 + c.
 * Padding bytes are written 0.
 *
 * p.p[TG_P_IN] plain scales (uint8), p.p[TG_P_OUT] swizzled (uint8,
 * ceil(rows/128)*128 * ceil(scols/4)*4 bytes, 16-byte aligned);
 * n[0] = rows of the scale matrix, n[1] = scols (its columns). For a rowwise
 * MXFP8 copy: rows = data rows, scols = ceil(cols/32); for the columnwise
 * copy: rows = data cols, scols = ceil(data rows/32).
 * TG_SRC_T 1 (MXFP8 columnwise copy): the plain scales are stored transposed,
 * [scols][rows] (TE's columnwise layout [data rows/32][data cols]), and n[0] =
 * data rows, n[1] = data cols: the scale matrix has rows = n[1], scols =
 * ceil(n[0]/32), so a token count known only at run time is fine.
 *
 * Launch rule: block = (TG_THREADS, 1, 1); units = ceil(rows/128) *
 * ceil(scols/4) * 32 (one 16-byte output row of a tile each);
 * grid.x = min(ceil(units / TG_THREADS), cap), any grid >= 1 is correct.
 */
#include "tg_formats.h"
#include "tg_recipe.h"
#include "tg_kernel.h"

#ifndef TG_MXFP8_SWIZZLE_BODY
#define TG_MXFP8_SWIZZLE_BODY
namespace tgsw {

template <int SRC_T> __device__ __forceinline__ void body(const TgParams &p)
{
	const uint8_t *in = (const uint8_t *)p.p[TG_P_IN];
	uint8_t *out = (uint8_t *)p.p[TG_P_OUT];
	const long long rows = SRC_T ? p.n[1] : p.n[0], scols = SRC_T ? (p.n[0] + 31) / 32 : p.n[1];
	const long long tpr = (scols + 3) / 4; /* tiles per tile row */
	const long long units = (rows + 127) / 128 * tpr * 32;
	for (long long u = (long long)blockIdx.x * blockDim.x + threadIdx.x; u < units;
	     u += (long long)gridDim.x * blockDim.x) {
		const long long tile = u >> 5;
		const int a = (int)(u & 31);
		const long long r0 = tile / tpr * 128 + a, c0 = tile % tpr * 4;
		uint32_t w[4];
#pragma unroll
		for (int s = 0; s < 4; s++) { /* 32-row slab s: row r0 + 32 s, columns c0..c0+3 */
			const long long r = r0 + 32 * s;
			uint32_t v = 0;
#pragma unroll
			for (int c = 0; c < 4; c++)
				if (r < rows && c0 + c < scols)
					v |= (uint32_t)in[SRC_T ? (c0 + c) * rows + r : r * scols + c0 + c] << (8 * c);
			w[s] = v;
		}
		*(uint4 *)(out + tile * 512 + a * 16) = make_uint4(w[0], w[1], w[2], w[3]);
	}
}

} /* namespace tgsw */
#endif /* TG_MXFP8_SWIZZLE_BODY */

extern "C" __global__ void __launch_bounds__(TG_THREADS) TG_KERNEL(const TgParams p)
{
	tgsw::body<TG_SRC_T>(p);
}
