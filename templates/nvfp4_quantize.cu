// nvfp4_quantize.cu: NVFP4 quantization (Transformer Engine's recipe), two passes.
// tegen-slots: TG_KERNEL TG_THREADS TG_IN_DTYPE TG_PASS TG_ROWWISE TG_COLWISE TG_2D TG_SR TG_SEED TG_RHT TG_RHT_MASK
//
// NVFP4 needs the tensor's global amax before it can cast (S_enc = 448*6/amax),
// so it runs like FP8 current scaling:
//   TG_PASS 0: max|x| over the input (NaN ignored, inf counts) into
//     p[TG_P_AMAX] with an atomic max (the runtime zeroes it before the run);
//   TG_PASS 1: S_enc = tg_nvfp4_s_enc(amax) (CTA 0 writes it to p[TG_P_SCALE]),
//     then every block of 16 elements along a row of a copy: decode scale
//     S_dec = tg_nvfp4_block_scale(block amax, S_enc) (E4M3 byte), elements
//     E2M1(x * tg_nvfp4_elem_scale(S_dec, S_enc)), two per byte, element 2k in
//     the low nibble. The numerics are tg_recipe.h's, as in ref_quant_nvfp4.
// TG_2D: the block amax is over the 16x16 tile holding the block (cut at the
// tensor's last row). TG_SR: stochastic rounding with
// tg_philox_rand(TG_SEED, n[3], index of the element in its copy).
// TG_RHT (with TG_COLWISE, never TG_2D): the columnwise copy is quantized from
// tg_rht16(x, TG_RHT_MASK) of every 16 consecutive rows of a column (a last
// partial group, rows % 16 elements, is left as is). That copy has its own global
// amax p[TG_P_AMAX_T] (over the transformed values; the amax pass reads the input
// once, column by column, for both amaxes) and S_enc p[TG_P_SCALE_T]; the rowwise
// copy is unchanged.
//
// Copies (templates/tg_kernel.h):
//   rowwise (TG_ROWWISE): p[TG_P_OUT] [rows][cols/2] bytes, p[TG_P_SCALE_INV] [rows][cols/16];
//   columnwise (TG_COLWISE): the transpose [cols][rows] quantized rowwise:
//   p[TG_P_OUT_T] [cols][ceil(rows/2)] bytes (an odd row length ends in a zero
//   high nibble), p[TG_P_SCALE_INV_T] [cols][ceil(rows/16)] (the last block of a
//   row covers rows % 16 elements when rows is not a multiple of 16).
// p[TG_P_IN]: [rows][cols] of TG_IN_DTYPE (0 fp32, 1 bf16, 2 fp16).
// n[0] = rows, n[1] = cols (a multiple of 16), n[3] = SR offset (the layer's step count).
// Launch: block (TG_THREADS,1,1), any grid.x >= 1: both passes grid-stride, the
// amax pass over 16-element chunks (TG_RHT: columns in groups of 16 rows), the cast pass over 16-element blocks of the rowwise
// copy and groups of four blocks of the columnwise copy (each written by exactly one
// thread, so no two threads touch one byte).
#include "tg_formats.h"
#include "tg_recipe.h"
#include "tg_kernel.h"

namespace tgnv {

// Element i of the input as FP32 (exact for every input dtype).
__device__ __forceinline__ float load(const void *p, long long i)
{
	if (TG_IN_DTYPE == 0)
		return ((const float *)p)[i];
	const uint16_t h = ((const uint16_t *)p)[i];
	return TG_IN_DTYPE == 1 ? tg_bf16_to_f32(h) : tg_f16_to_f32(h);
}

// 16 input elements from p + 16 i elements (32-byte aligned: cols % 16 == 0) as FP32.
__device__ __forceinline__ void load16(const void *p, long long i, float x[16])
{
	constexpr int NV = TG_IN_DTYPE == 0 ? 4 : 2; // 16-byte vectors
	const uint4 *v = (const uint4 *)((const char *)p + i * 16 * (TG_IN_DTYPE == 0 ? 4 : 2));
#pragma unroll
	for (int q = 0; q < NV; q++) {
		const uint4 a = v[q];
		const uint32_t w[4] = {a.x, a.y, a.z, a.w};
#pragma unroll
		for (int k = 0; k < 4; k++) {
			if (TG_IN_DTYPE == 0) {
				x[4 * q + k] = __uint_as_float(w[k]);
			} else {
				const uint16_t lo = (uint16_t)(w[k] & 0xFFFFu), hi = (uint16_t)(w[k] >> 16);
				x[(8 * q + 2 * k) % 16] = TG_IN_DTYPE == 1 ? tg_bf16_to_f32(lo) : tg_f16_to_f32(lo);
				x[(8 * q + 2 * k + 1) % 16] = TG_IN_DTYPE == 1 ? tg_bf16_to_f32(hi) : tg_f16_to_f32(hi);
			}
		}
	}
}

static_assert(!(TG_RHT && TG_2D), "the Hadamard transform is for 1D blocks (the planner rejects nvfp4_rht with nvfp4_2d)");

// Warp max of m, one atomic per warp into dst (max of non-negative floats = max of
// their bit patterns as signed ints).
__device__ __forceinline__ void amax_flush(float m, void *dst)
{
#pragma unroll
	for (int o = 16; o > 0; o >>= 1)
		m = fmaxf(m, __shfl_xor_sync(0xFFFFFFFFu, m, o));
	if ((threadIdx.x & 31) == 0 && m > 0.0f)
		atomicMax((int *)dst, (int)tg_f2u(m));
}

// Rows r0 .. r0 + len - 1 of column c (len <= 16) as FP32; x[k] = 0 from len on.
__device__ __forceinline__ void col_load(const void *in, long long r0, long long c, int len, long long cols, float x[16])
{
#pragma unroll
	for (int k = 0; k < 16; k++)
		x[k] = k < len ? load(in, (r0 + k) * cols + c) : 0.0f;
}

// The columnwise copy's transform of one group of len rows: the RHT of a full group
// (TG_RHT), a partial group as is.
__device__ __forceinline__ void col_rht(float x[16], int len)
{
	if (TG_RHT && len == 16)
		tg_rht16(x, (uint16_t)TG_RHT_MASK, x);
}

// Pass 0 with the RHT: every column in groups of 16 rows (consecutive threads take
// consecutive columns, so loads coalesce): max|x| into AMAX and max|RHT(x)| into
// AMAX_T, one read of the input.
__device__ __forceinline__ void amax_pass_rht(const TgParams &p)
{
	const void *in = p.p[TG_P_IN];
	const long long rows = p.n[0], cols = p.n[1], units = cols * ((rows + 15) / 16);
	float m = 0.0f, mt = 0.0f;
	for (long long u = (long long)blockIdx.x * TG_THREADS + threadIdx.x; u < units; u += (long long)gridDim.x * TG_THREADS) {
		const long long c = u % cols, r0 = u / cols * 16;
		const int len = rows - r0 < 16 ? (int)(rows - r0) : 16;
		float x[16];
		col_load(in, r0, c, len, cols, x);
#pragma unroll
		for (int k = 0; k < 16; k++)
			m = fmaxf(m, fabsf(x[k])); // fmaxf drops a NaN operand
		col_rht(x, len);
#pragma unroll
		for (int k = 0; k < 16; k++)
			mt = fmaxf(mt, fabsf(x[k]));
	}
	amax_flush(m, p.p[TG_P_AMAX]);
	amax_flush(mt, p.p[TG_P_AMAX_T]);
}

// Pass 0: per-thread max over 16-element chunks (vector loads), warp max, one atomic per
// warp; with the RHT, amax_pass_rht.
__device__ __forceinline__ void amax_pass(const TgParams &p)
{
	if (TG_RHT && TG_COLWISE) {
		amax_pass_rht(p);
		return;
	}
	const void *in = p.p[TG_P_IN];
	const long long n16 = p.n[0] * p.n[1] / 16; // cols % 16 == 0
	float m = 0.0f;
	for (long long i = (long long)blockIdx.x * TG_THREADS + threadIdx.x; i < n16; i += (long long)gridDim.x * TG_THREADS) {
		float x[16];
		load16(in, i, x);
#pragma unroll
		for (int k = 0; k < 16; k++)
			m = fmaxf(m, fabsf(x[k])); // fmaxf drops a NaN operand
	}
	amax_flush(m, p.p[TG_P_AMAX]);
}

// max|x| over rows [r0, min(rows, r0 + 16)) and columns [c0, c0 + 16) (the 2D tile).
__device__ __forceinline__ float tile_amax(const void *in, long long r0, long long c0, long long rows, long long cols)
{
	const long long r1 = r0 + 16 < rows ? r0 + 16 : rows;
	float m = 0.0f;
	for (long long r = r0; r < r1; r++)
#pragma unroll
		for (int k = 0; k < 16; k++)
			m = fmaxf(m, fabsf(load(in, r * cols + c0 + k)));
	return m;
}

// One E2M1 code of x * mult; idx is the element's index in its copy (SR counter).
__device__ __forceinline__ uint32_t code(float v, long long idx, unsigned long long offset)
{
	if (TG_SR)
		return tg_f32_to_e2m1_sr(v, tg_philox_rand(TG_SEED, offset, (uint64_t)idx));
	return tg_f32_to_e2m1(v);
}

// Block b of row r of the rowwise copy: 16 elements, one 8-byte store, one scale byte.
__device__ __forceinline__ void row_block(const TgParams &p, long long r, long long b, float s_enc)
{
	const void *in = p.p[TG_P_IN];
	const long long rows = p.n[0], cols = p.n[1], c0 = b * 16;
	float x[16], am = 0.0f;
	load16(in, (r * cols + c0) / 16, x);
#pragma unroll
	for (int k = 0; k < 16; k++)
		am = fmaxf(am, fabsf(x[k]));
	if (TG_2D)
		am = tile_amax(in, r / 16 * 16, c0, rows, cols);
	const uint8_t sd = tg_nvfp4_block_scale(am, s_enc);
	const float mult = tg_nvfp4_elem_scale(sd, s_enc);
	uint32_t w[2] = {0u, 0u};
#pragma unroll
	for (int k = 0; k < 16; k++)
		w[k / 8] |= code(x[k] * mult, r * cols + c0 + k, (unsigned long long)p.n[3]) << (4 * (k % 8));
	*(uint2 *)((uint8_t *)p.p[TG_P_OUT] + r * (cols / 2) + c0 / 2) = make_uint2(w[0], w[1]);
	((uint8_t *)p.p[TG_P_SCALE_INV])[r * (cols / 16) + b] = sd;
}

// Block b of row c of the columnwise copy (column c of the input, rows 16b ..
// 16b + len - 1, Hadamard-transformed with TG_RHT; s_enc is the copy's own):
// its 16 codes packed into w[0..1] (element 2k in the low nibble; codes past len
// are 0, as a padding nibble is), the scale byte returned. full: the caller knows the
// block has 16 rows (so the compiler drops the partial-block paths).
__device__ __forceinline__ uint8_t col_codes(const TgParams &p, long long c, long long b, float s_enc, uint32_t w[2],
	bool full = false)
{
	const void *in = p.p[TG_P_IN];
	const long long rows = p.n[0], cols = p.n[1], r0 = b * 16;
	const int len = full ? 16 : rows - r0 < 16 ? (int)(rows - r0) : 16;
	float x[16], am = 0.0f;
#pragma unroll
	for (int k = 0; k < 16; k++) {
		x[k] = k < len ? load(in, (r0 + k) * cols + c) : 0.0f;
		am = fmaxf(am, fabsf(x[k]));
	}
	if (TG_RHT && len == 16) { // the block amax of the transformed values
		col_rht(x, len);
		am = 0.0f;
#pragma unroll
		for (int k = 0; k < 16; k++)
			am = fmaxf(am, fabsf(x[k]));
	}
	if (TG_2D)
		am = tile_amax(in, r0, c / 16 * 16, rows, cols);
	const uint8_t sd = tg_nvfp4_block_scale(am, s_enc);
	const float mult = tg_nvfp4_elem_scale(sd, s_enc);
	const unsigned long long off = (unsigned long long)p.n[3];
	w[0] = w[1] = 0u;
#pragma unroll
	for (int k = 0; k < 16; k++)
		if (k < len)
			w[k / 8] |= code(x[k] * mult, c * rows + r0 + k, off) << (4 * (k % 8));
	return sd;
}

// col_group's 64-row group with the RHT: one block at a time (not unrolled, so the 16
// transformed values of only one block are live), an 8-byte store each, one scale word.
__device__ __forceinline__ void col_group_rht64(const TgParams &p, long long c, long long g, float s_enc, uint8_t *out,
	uint8_t *sc)
{
	uint32_t e = 0u;
#pragma unroll 1
	for (int j = 0; j < 4; j++) {
		uint32_t w[2];
		e |= (uint32_t)col_codes(p, c, 4 * g + j, s_enc, w, true) << (8 * j);
		*(uint2 *)(out + 32 * g + 8 * j) = make_uint2(w[0], w[1]);
	}
	*(uint32_t *)(sc + 4 * g) = e;
}

// Blocks 4g .. 4g+3 of row c of the columnwise copy (64 rows of input column c): when
// rows % 64 == 0 the 32 bytes are one sector of OUT_T and the 4 scale bytes one word;
// otherwise byte stores, ceil(len/2) bytes a block, since a copy row has ceil(rows/2).
__device__ __forceinline__ void col_group(const TgParams &p, long long c, long long g, float s_enc)
{
	const long long rows = p.n[0], nbt = (rows + 15) / 16;
	uint8_t *out = (uint8_t *)p.p[TG_P_OUT_T] + c * ((rows + 1) / 2);
	uint8_t *sc = (uint8_t *)p.p[TG_P_SCALE_INV_T] + c * nbt;
	if (rows % 64 == 0 && TG_RHT) {
		col_group_rht64(p, c, g, s_enc, out, sc);
		return;
	}
	if (rows % 64 == 0) {
		uint32_t w[8], e = 0u;
#pragma unroll
		for (int j = 0; j < 4; j++)
			e |= (uint32_t)col_codes(p, c, 4 * g + j, s_enc, &w[2 * j]) << (8 * j);
		uint4 *d = (uint4 *)(out + 32 * g);
		d[0] = make_uint4(w[0], w[1], w[2], w[3]);
		d[1] = make_uint4(w[4], w[5], w[6], w[7]);
		*(uint32_t *)(sc + 4 * g) = e;
		return;
	}
	for (long long b = 4 * g; b < 4 * g + 4 && b < nbt; b++) {
		uint32_t w[2];
		sc[b] = col_codes(p, c, b, s_enc, w);
		const int len = rows - 16 * b < 16 ? (int)(rows - 16 * b) : 16;
		for (int j = 0; 2 * j < len; j++)
			out[8 * b + j] = (uint8_t)(w[j / 4] >> (8 * (j % 4)));
	}
}

// Pass 1: units are the rowwise copy's blocks (row-major), then the columnwise
// copy's groups of 4 blocks (consecutive threads take consecutive columns, so loads coalesce).
__device__ __forceinline__ void cast_pass(const TgParams &p)
{
	const long long rows = p.n[0], cols = p.n[1];
	const float s_enc = tg_nvfp4_s_enc(*(const float *)p.p[TG_P_AMAX]);
	// the columnwise copy's S_enc: its own with the RHT (from the transformed values' amax)
	const float s_enc_t = TG_RHT ? tg_nvfp4_s_enc(*(const float *)p.p[TG_P_AMAX_T]) : s_enc;
	if (blockIdx.x == 0 && threadIdx.x == 0) {
		*(float *)p.p[TG_P_SCALE] = s_enc;
		if (TG_RHT)
			*(float *)p.p[TG_P_SCALE_T] = s_enc_t;
	}
	const long long nb = cols / 16, ngt = ((rows + 15) / 16 + 3) / 4;
	const long long urow = TG_ROWWISE ? rows * nb : 0, units = urow + (TG_COLWISE ? cols * ngt : 0);
	for (long long u = (long long)blockIdx.x * TG_THREADS + threadIdx.x; u < units; u += (long long)gridDim.x * TG_THREADS) {
		if (u < urow)
			row_block(p, u / nb, u % nb, s_enc);
		else
			col_group(p, (u - urow) % cols, (u - urow) / cols, s_enc_t);
	}
}

} // namespace tgnv

extern "C" __global__ void __launch_bounds__(TG_THREADS) TG_KERNEL(const TgParams p)
{
	if (TG_PASS == 0)
		tgnv::amax_pass(p);
	else
		tgnv::cast_pass(p);
}
