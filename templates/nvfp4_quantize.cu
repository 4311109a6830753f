// nvfp4_quantize.cu: NVFP4 quantization (Transformer Engine's recipe), two passes.
// tegen-slots: TG_KERNEL TG_THREADS TG_IN_DTYPE TG_PASS TG_ROWWISE TG_COLWISE TG_2D TG_SR TG_SEED TG_RHT TG_RHT_MASK TG_SRC TG_G_DTYPE TG_ACT TG_ALPHA TG_LIMIT TG_NORM TG_W_DTYPE TG_B_DTYPE TG_ZERO_CENTERED TG_HAS_RESIDUAL TG_DEQ
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
//   p[TG_P_OUT_T] [cols][TG_PITCH_FP4(rows)/2] bytes (lines of rows rounded up to 32 codes: zero nibbles
//   past rows), p[TG_P_SCALE_INV_T] [cols][ceil(rows/16)] (the last block of a
//   row covers rows % 16 elements when rows is not a multiple of 16).
// p[TG_P_IN]: [rows][cols] of TG_IN_DTYPE (0 fp32, 1 bf16, 2 fp16).
//
// TG_SRC: where the values come from. 0: the tensor p[TG_P_IN]. Otherwise an op's value, computed
// here from the op's inputs as the op's own kernel computes it (the fused NVFP4 form of a norm, GLU or
// dglu with a columnwise or 16x16-block copy: no FP32 intermediate; the op's own kernel took the
// global amax first, or with TG_RHT this template's amax pass does):
//   1 GLU: h = p[TG_P_IN] [rows][2*cols] (gate half first), tg_glu<TG_ACT, float> as glu_amax.cu;
//   2 dglu: h = p[TG_PB_IN] [rows][cols] (cols = 2C, C % 16 == 0), d_act = p[TG_PB_GRAD] [rows][C]
//     (TG_G_DTYPE): d_h by tg_dglu1, bit-exact with ref_dglu; a strip holds 64 columns of each half;
//   (1 and 2 without a gate partner, TG_ACT silu, gelu, ...: h [rows][cols], d_act and d_h as h, b = 1)
//   3 norm: x = p[TG_P_IN] (the input, or the residual sum the norm saved; TG_HAS_RESIDUAL: plus
//     p[TG_P_RESIDUAL], rounded to TG_IN_DTYPE), rsigma p[TG_P_RSIGMA] and mu p[TG_P_MU] (TG_NORM 1) the
//     norm's amax pass saved, gamma p[TG_P_GAMMA], beta p[TG_P_BETA]: tg_norm_value as norm_quantize.cu.
// TG_DEQ (cast pass over strips): bit 0 also writes the rowwise copy dequantized to BF16 at p[TG_P_DEQ]
// [rows][cols], bit 1 the columnwise one at p[TG_P_DEQ_T] [cols][TG_PITCH(rows)] (an emulated NVFP4 GEMM's
// operands, bit for bit nvfp4_dequantize.cu's: e2m1(code) * (float(S_dec) / S_enc) rounded to BF16).
// TG_ACT, TG_ALPHA, TG_LIMIT, TG_G_DTYPE, TG_NORM, TG_W_DTYPE, TG_B_DTYPE, TG_ZERO_CENTERED,
// TG_HAS_RESIDUAL: those ops' slots (unused by other sources). A source's passes run over strips.
// n[0] = rows, n[1] = cols (a multiple of 16), n[3] = SR offset (the layer's step count).
// Launch: block (TG_THREADS,1,1) (a multiple of 32), any grid.x >= 1: both passes
// grid-stride, the amax pass over 16-element chunks (TG_RHT: columns in groups of 16
// rows; an op's values over strips), the cast pass of a tensor's rowwise-only 1D copy over
// its 16-element blocks, any other cast pass (a columnwise copy, TG_2D, an op's values) over
// 64x128 strips staged in shared memory (every byte of a copy is written by exactly one thread).
#include "tg_formats.h"
#include "tg_recipe.h"
#include "tg_kernel.h"
#include "tg_rowvec.h"
#include "tg_glu.h"
#include "tg_backward.h"

static_assert(TG_SRC >= TG_SRC_TENSOR && TG_SRC <= TG_SRC_NORM, "nvfp4_quantize.cu: unknown TG_SRC");
static_assert(TG_SRC == TG_SRC_TENSOR || TG_PASS == 1 || TG_RHT,
	"nvfp4_quantize.cu: an op's amax pass is its own kernel's (here only the columnwise amax with TG_RHT)");

namespace tgnv {

// The two 16-bit input elements of word w (TG_IN_DTYPE 1 bf16, 2 fp16) as FP32, low half first.
__device__ __forceinline__ void unpack2(uint32_t w, float &lo, float &hi)
{
	const uint16_t l = (uint16_t)(w & 0xFFFFu), h = (uint16_t)(w >> 16);
	lo = TG_IN_DTYPE == TG_DTYPE_BF16 ? tg_bf16_to_f32(l) : tg_f16_to_f32(l);
	hi = TG_IN_DTYPE == TG_DTYPE_BF16 ? tg_bf16_to_f32(h) : tg_f16_to_f32(h);
}

// max|x[k]| over a block of 16 (fmaxf drops a NaN operand).
__device__ __forceinline__ float amax16(const float x[16])
{
	float m = 0.0f;
#pragma unroll
	for (int k = 0; k < 16; k++)
		m = fmaxf(m, fabsf(x[k]));
	return m;
}

// 16 input elements from p + 16 i elements (32-byte aligned: cols % 16 == 0) as FP32.
__device__ __forceinline__ void load16(const void *p, long long i, float x[16])
{
	constexpr int NV = TG_IN_DTYPE == TG_DTYPE_F32 ? 4 : 2; // 16-byte vectors
	const uint4 *v = (const uint4 *)((const char *)p + i * 16 * (TG_IN_DTYPE == TG_DTYPE_F32 ? 4 : 2));
#pragma unroll
	for (int q = 0; q < NV; q++) {
		const uint4 a = v[q];
		const uint32_t w[4] = {a.x, a.y, a.z, a.w};
#pragma unroll
		for (int k = 0; k < 4; k++) {
			if (TG_IN_DTYPE == TG_DTYPE_F32) {
				x[4 * q + k] = __uint_as_float(w[k]);
			} else {
				unpack2(w[k], x[(8 * q + 2 * k) % 16], x[(8 * q + 2 * k + 1) % 16]);
			}
		}
	}
}

static_assert(!(TG_RHT && TG_2D), "the Hadamard transform is for 1D blocks (the planner rejects nvfp4_rht with nvfp4_2d)");
static_assert(!TG_RHT || TG_COLWISE, "the Hadamard transform applies to the columnwise copy");
static_assert(TG_DEQ == 0 || (TG_PASS == 1 && (TG_2D || TG_COLWISE || TG_SRC != TG_SRC_TENSOR)),
	"nvfp4_quantize.cu: TG_DEQ is written by the cast pass over strips");

// Max of m over the CTA, one atomic into dst (max of non-negative floats = max of their bit patterns as signed
// ints); every thread calls it. One atomic a warp before: H100, 8B NVFP4 training layer, amax passes d_y 45 -> 29 us,
// w_down 62 -> 51, w_up 97 -> 90 in the layer (thirtieth session, call 7: with a CTA a row, w_up's pass put 229 K
// atomics on one address).
__device__ __forceinline__ void amax_flush(float m, void *dst)
{
	__shared__ float red[32];
	m = tg_cta_max<TG_THREADS>(m, red);
	if (threadIdx.x == 0 && m > 0.0f)
		tg_red_max((float *)dst, m);
}

// Rows r0 .. r0 + len - 1 (len <= 16) of columns c (into x) and c + 1 (into y) as FP32,
// one 4- or 8-byte load a row (c is even, and so is cols); 0 from len on.
__device__ __forceinline__ void col_load2(const void *in, long long r0, long long c, int len, long long cols, float x[16],
                                          float y[16])
{
#pragma unroll
	for (int k = 0; k < 16; k++) {
		x[k] = y[k] = 0.0f;
		if (k >= len)
			continue;
		const long long e = (r0 + k) * cols + c;
		if (TG_IN_DTYPE == TG_DTYPE_F32) {
			const float2 v = *(const float2 *)((const float *)in + e);
			x[k] = v.x, y[k] = v.y;
		} else {
			unpack2(*(const uint32_t *)((const uint16_t *)in + e), x[k], y[k]);
		}
	}
}

// The columnwise copy's transform of one group of len rows: the RHT of a full group
// (TG_RHT), a partial group as is.
__device__ __forceinline__ void col_rht(float x[16], int len)
{
	if (TG_RHT && len == 16)
		tg_rht16(x, (uint16_t)TG_RHT_MASK, x);
}

// Pass 0 with the RHT: every pair of columns in groups of 16 rows (consecutive threads
// take consecutive pairs, so loads coalesce): max|x| into AMAX and max|RHT(x)| into
// AMAX_T, one read of the input.
__device__ __forceinline__ void amax_pass_rht(const TgParams &p)
{
	const void *in = p.p[TG_P_IN];
	const long long rows = p.n[0], cols = p.n[1], pairs = cols / 2, units = pairs * ((rows + 15) / 16);
	float m = 0.0f, mt = 0.0f;
	for (long long u = (long long)blockIdx.x * TG_THREADS + threadIdx.x; u < units; u += (long long)gridDim.x * TG_THREADS) {
		const long long c = 2 * (u % pairs), r0 = u / pairs * 16;
		const int len = rows - r0 < 16 ? (int)(rows - r0) : 16;
		float x[16], y[16];
		col_load2(in, r0, c, len, cols, x, y);
		m = fmaxf(m, fmaxf(amax16(x), amax16(y)));
		col_rht(x, len);
		col_rht(y, len);
		mt = fmaxf(mt, fmaxf(amax16(x), amax16(y)));
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
		m = fmaxf(m, amax16(x));
	}
	amax_flush(m, p.p[TG_P_AMAX]);
}

// The SR random numbers of elements idx0 .. idx0+15 of a copy, each
// tg_philox_rand(TG_SEED, off, idx) bit for bit: one Philox block yields the 4
// consecutive counters 4i .. 4i+3, so an aligned run (idx0 % 4 == 0: every rowwise
// block, and a columnwise one when rows % 4 == 0) takes 4 blocks instead of 16.
__device__ __forceinline__ void sr_rand16(long long idx0, unsigned long long off, uint32_t rnd[16])
{
	if ((idx0 & 3) == 0) {
#pragma unroll
		for (int q = 0; q < 4; q++)
			tg_philox_block(TG_SEED, off, ((uint64_t)idx0 >> 2) + q, &rnd[4 * q]);
		return;
	}
#pragma unroll
	for (int k = 0; k < 16; k++)
		rnd[k] = tg_philox_rand(TG_SEED, off, (uint64_t)(idx0 + k));
}

// 16 codes of x[0..len) * mult packed into w[0..1] (element 2k in the low nibble; codes
// past len are 0); idx0 is the SR index of x[0] (the others follow it).
__device__ __forceinline__ void encode16(const float x[16], int len, float mult, long long idx0, unsigned long long off,
                                         uint32_t w[2])
{
	if (!TG_SR && len == 16) { // a whole block: eight codes a word by way of E4M3 (tg_e2m1x8)
		w[0] = tg_e2m1x8(x, mult);
		w[1] = tg_e2m1x8(x + 8, mult);
		return;
	}
	uint32_t rnd[16];
	if (TG_SR)
		sr_rand16(idx0, off, rnd);
	w[0] = w[1] = 0u;
#pragma unroll
	for (int k = 0; k < 16; k++)
		if (k < len)
			w[k / 8] |= (uint32_t)(TG_SR ? tg_f32_to_e2m1_sr(x[k] * mult, rnd[k]) : tg_f32_to_e2m1(x[k] * mult))
				<< (4 * (k % 8));
}

// A copy's encode scale, its block factor tg_nvfp4_block_factor(s_enc), its per-block element multipliers
// mult[S_dec] = tg_nvfp4_elem_scale(S_dec, s_enc) and (TG_DEQ) dequantizing multipliers dmul[S_dec] =
// deq_scale(S_dec, s_enc) for all 256 scale bytes, filled once a CTA in shared memory (fill_mult), so a block
// costs loads instead of IEEE divisions (the factor's and the dequantizing multiplier's division a block before:
// about 22 instructions a block a copy).
struct Scales {
	float s_enc, factor;
	const float *mult, *dmul;
	const float2 *dtab; // TG_DEQ: fill_deq_tab's table
};

// The dequantizing multiplier of scale byte sd under s_enc (nvfp4_dequantize.cu's).
__device__ __forceinline__ float deq_scale(uint8_t sd, float s_enc) { return tg_div_rn(tg_e4m3_to_f32(sd), s_enc); }

// mult[i] = tg_nvfp4_elem_scale(i, s_enc) and, where dmul, dmul[i] = deq_scale(i, s_enc), i < 256; the caller syncs
// before use.
__device__ __forceinline__ void fill_mult(float *mult, float *dmul, float s_enc)
{
	for (int i = threadIdx.x; i < 256; i += TG_THREADS) {
		mult[i] = tg_nvfp4_elem_scale((uint8_t)i, s_enc);
		if (dmul)
			dmul[i] = deq_scale((uint8_t)i, s_enc);
	}
}

// The first ceil(len/2) bytes of a block's packed codes w[0..1] to dst (a column's last block; a 64-bit shift,
// not a dynamic register index).
__device__ __forceinline__ void store_partial(uint8_t *dst, const uint32_t w[2], int len)
{
	const unsigned long long bytes = w[0] | (unsigned long long)w[1] << 32;
	for (int q = 0; 2 * q < len; q++)
		dst[q] = (uint8_t)(bytes >> (8 * q));
}

// The 16 codes of a block (packed in w[0..1], element 2k in the low nibble) dequantized: e2m1(code) * s rounded
// to BF16, two a word (element 2k low), as nvfp4_dequantize.cu computes them: tab[byte] holds the byte's two
// tg_e2m1_to_f32 values (fill_deq_tab), and tg_f32x2_to_bf16x2 rounds as tg_f32_to_bf16 (the product of a finite
// scale is never NaN).
__device__ __forceinline__ void deq16(const uint32_t w[2], float s, const float2 *tab, uint32_t h[8])
{
#pragma unroll
	for (int k = 0; k < 8; k++) {
		const float2 v = tab[(w[k / 4] >> (8 * (k % 4))) & 0xFFu];
		h[k] = tg_f32x2_to_bf16x2(v.x * s, v.y * s);
	}
}

// tab[b] = the E2M1 values of byte b's low and high nibbles; the caller syncs before use.
__device__ __forceinline__ void fill_deq_tab(float2 *tab)
{
	for (int b = threadIdx.x; b < 256; b += TG_THREADS)
		tab[b] = make_float2(tg_e2m1_to_f32((uint8_t)(b & 0xF)), tg_e2m1_to_f32((uint8_t)(b >> 4)));
}

// tg_e2m1x8's codes of y[0..7] * mult and, in h[0..3], the codes dequantized by dq as BF16 pairs (element 2k low):
// e2m1(code) * dq rounded to BF16, deq16's value, from the rounded values themselves (tg_e2m1_round_scaled's r is
// the code's value times 2^-6, so r * 64 is exact and (r * 64) * dq rounds once) instead of a table lookup a pair.
// A NaN element's code is 7 (+6): min.bf16x2 with c6x2 (BF16 of 6 * dq, twice) takes it there; every other value is
// at most c6. H100, 8B NVFP4 training layer, us in the layer: casts -2 to -4% (xn 128-130 -> 123-125, w_up 404-409 ->
// 387-391, d_h 1009-1017 -> 983-999; thirty-first session, call 11).
template <int FOLD>
__device__ __forceinline__ uint32_t e2m1x8_deq_by(const float *y, float m, float dq, uint32_t c6x2, uint32_t h[4])
{
	uint32_t t[2];
#pragma unroll
	for (int hh = 0; hh < 2; hh++) {
		uint32_t w = 0;
#pragma unroll
		for (int q = 0; q < 2; q++) {
			float r[2];
			w |= (uint32_t)tg__e2m1_pair(y + 4 * hh + 2 * q, m, FOLD, r) << (16 * q);
			uint32_t d = tg_f32x2_to_bf16x2(__fmul_rn(__fmul_rn(r[0], 64.0f), dq), __fmul_rn(__fmul_rn(r[1], 64.0f), dq));
			asm("min.bf16x2 %0, %0, %1;" : "+r"(d) : "r"(c6x2));
			h[2 * hh + q] = d;
		}
		t[hh] = tg_e2m1_pairs(w);
	}
	return tg_e2m1_pack8(t[0], t[1]);
}
// With the product folded (tg__scaled6) and the abs a min operand, one instruction an element less in each encoding:
// H100, 8B NVFP4 training layer, us in the layer: xn 123.2 -> 120.6, act 481 -> 475, d_y 114.6 -> 111.5, d_h 983 ->
// 968, the 2D weight casts -0.5 to -1.2% (alone w_up +1.6%: 56 -> 64 registers); thirty-third session, call 6.
__device__ __forceinline__ uint32_t e2m1x8_deq(const float *y, float mult, float dq, uint32_t c6x2, uint32_t h[4])
{
	const float m6 = tg__mul6(mult); // one product an element where it folds (tg__scaled6)
	return tg_e2m1_fold6(m6) ? e2m1x8_deq_by<1>(y, m6, dq, c6x2, h) : e2m1x8_deq_by<0>(y, mult, dq, c6x2, h);
}

// Block b of row r of the rowwise copy: 16 elements, one 8-byte store, one scale byte.
__device__ __forceinline__ void row_block(const TgParams &p, long long r, long long b, const Scales &sc)
{
	const void *in = p.p[TG_P_IN];
	const long long cols = p.n[1], c0 = b * 16;
	float x[16];
	load16(in, (r * cols + c0) / 16, x);
	const uint8_t sd = tg_nvfp4_block_scale_f(amax16(x), sc.factor);
	uint32_t w[2];
	encode16(x, 16, sc.mult[sd], r * cols + c0, (unsigned long long)p.n[3], w);
	*(uint2 *)((uint8_t *)p.p[TG_P_OUT] + r * (cols / 2) + c0 / 2) = make_uint2(w[0], w[1]);
	((uint8_t *)p.p[TG_P_SCALE_INV])[r * (cols / 16) + b] = sd;
}

// ---- TG_2D: 16x16 blocks, one strip of 64 rows x 128 columns at a time in shared memory ----
// Each input element is read from global memory once: the strip is staged as FP32, the 32
// tile amaxes are taken from shared memory, then the rowwise blocks (row-major units, one
// 8-byte store each) and the columnwise blocks (a thread per column and 32 rows: two
// blocks, one 16-byte store when rows % 32 == 0) are encoded from the same strip.
constexpr int S2R = 64, S2C = 128, S2P = S2C + 4; // strip rows, columns, padded row stride (floats)

// Offset in the staged strip of its element (r, c): float4 q of 16-column block b of a row
// is stored at q ^ ((b >> 1) & 3) of the block, so the 8 lanes that read (or write) the
// 8 blocks of a row in one phase hit distinct banks; the padded stride does the same for
// 8 rows of one block. Indexing registers with a rotated q instead would put them in
// local memory.
__device__ __forceinline__ int sidx(int r, int c)
{
	const int b = c >> 4, q = (c >> 2) & 3;
	return r * S2P + 16 * b + 4 * (q ^ ((b >> 1) & 3)) + (c & 3);
}

// Strip (r0, c0) of the input into t as FP32 (zeros past the last row or column).
__device__ __forceinline__ void stage_strip(const void *in, long long r0, long long c0, long long rows, long long cols,
                                            float *t)
{
	constexpr int EV = TG_IN_DTYPE == TG_DTYPE_F32 ? 4 : 8, VPR = S2C / EV; // elements per 16-byte vector, vectors per row
	for (int i = threadIdx.x; i < S2R * VPR; i += TG_THREADS) {
		const int r = i / VPR, c = i % VPR * EV;
		float v[8] = {0, 0, 0, 0, 0, 0, 0, 0};
		if (r0 + r < rows && c0 + c < cols) { // cols % 16 == 0: a vector is all in or all out
			const long long e = (r0 + r) * cols + c0 + c;
			const uint4 a = *(const uint4 *)((const char *)in + e * (TG_IN_DTYPE == TG_DTYPE_F32 ? 4 : 2));
			const uint32_t u[4] = {a.x, a.y, a.z, a.w};
#pragma unroll
			for (int k = 0; k < 4; k++) {
				if (TG_IN_DTYPE == TG_DTYPE_F32) {
					v[k] = __uint_as_float(u[k]);
				} else {
					unpack2(u[k], v[2 * k], v[2 * k + 1]);
				}
			}
		}
		*(float4 *)(t + sidx(r, c)) = make_float4(v[0], v[1], v[2], v[3]);
		if (EV == 8)
			*(float4 *)(t + sidx(r, c + 4)) = make_float4(v[4], v[5], v[6], v[7]);
	}
}

// ---- the strip's columns, and the op values of TG_SRC ----
// Strip column j holds output column strip_col(c0, j, cols), -1 past the tensor: c0 + j, or for dglu
// 64 columns of each half (d_gate, then d_linear), c0 stepping by 64 over C = cols / 2.
constexpr bool kGated = TG_ACT_GATED(TG_ACT); // silu, gelu, ...: h [rows][cols], no linear half (b = 1)
constexpr bool kDglu = TG_SRC == TG_SRC_DGLU && kGated; // the strips' pairs of halves
constexpr int SCW = kDglu ? S2C / 2 : S2C; // source columns a strip covers
__device__ __forceinline__ long long strip_col(long long c0, int j, long long cols)
{
	if (kDglu) {
		const long long half = cols / 2, c = c0 + (j % SCW);
		return c < half ? (j / SCW) * half + c : -1;
	}
	return c0 + j < cols ? c0 + j : -1;
}

// The 8 values of the op (TG_SRC 1..3) at source columns c .. c + 7 of row r (dglu: v = d_gate, w = d_linear
// of pair columns c .. c + 7), computed as the op's own kernel computes them: GLU glu_amax.cu's float
// tg_glu, dglu tg_dglu1 (bit-exact with ref_dglu), norm norm_quantize.cu's tg_norm_value.
__device__ __forceinline__ void src_values(const TgParams &p, long long r, long long c, long long cols, float (&v)[8],
                                           float (&w)[8])
{
	if (TG_SRC == TG_SRC_GLU) {
		float a[8], b[8] = {1, 1, 1, 1, 1, 1, 1, 1};
		tg_load_vec<TG_IN_DTYPE, 8>(p.p[TG_P_IN], r * (kGated ? 2 : 1) * cols + c, a);
		if (kGated)
			tg_load_vec<TG_IN_DTYPE, 8>(p.p[TG_P_IN], r * 2 * cols + cols + c, b);
#pragma unroll
		for (int k = 0; k < 8; k++)
			v[k] = tg_glu<TG_ACT, float>(a[k], b[k], (float)(TG_ALPHA), (float)(TG_LIMIT));
	} else if (TG_SRC == TG_SRC_DGLU) {
		const long long half = kGated ? cols / 2 : cols;
		float a[8], b[8] = {1, 1, 1, 1, 1, 1, 1, 1}, g[8];
		tg_load_vec<TG_IN_DTYPE, 8>(p.p[TG_PB_IN], r * cols + c, a);
		if (kGated)
			tg_load_vec<TG_IN_DTYPE, 8>(p.p[TG_PB_IN], r * cols + half + c, b);
		tg_load_vec<TG_G_DTYPE, 8>(p.p[TG_PB_GRAD], r * half + c, g);
#pragma unroll
		for (int k = 0; k < 8; k++)
			tg_dglu1(TG_ACT, a[k], b[k], g[k], (float)(TG_LIMIT), (float)(TG_ALPHA), &v[k], &w[k]);
	} else if (TG_SRC == TG_SRC_NORM) {
		float x[8], g[8], b[8];
		tg_load_vec<TG_IN_DTYPE, 8>(p.p[TG_P_IN], r * cols + c, x);
		if (TG_HAS_RESIDUAL) {
			float q[8];
			tg_load_vec<TG_IN_DTYPE, 8>(p.p[TG_P_RESIDUAL], r * cols + c, q);
#pragma unroll
			for (int k = 0; k < 8; k++)
				x[k] += q[k];
			tg_round_vec<TG_IN_DTYPE, 8>(x);
		}
		const float rs = ((const float *)p.p[TG_P_RSIGMA])[r];
		const float mu = TG_NORM == 1 ? ((const float *)p.p[TG_P_MU])[r] : 0.0f;
		tg_norm_weights<TG_W_DTYPE, TG_B_DTYPE, 8, TG_ZERO_CENTERED, TG_NORM == 1>(p, (int)c, g, b);
#pragma unroll
		for (int k = 0; k < 8; k++)
			v[k] = tg_norm_value<TG_NORM == 1>(x[k], mu, rs, g[k], b[k]);
	}
}

// Strip (r0, c0) of the op's values into t (zeros past the tensor), a unit of 8 source columns at a time
// (dglu: 8 of each half). One unit's loads, then its math, a unit a loop step: 46-74 registers, six CTAs
// a SM (the shared strip's limit). Issuing all of a thread's units' loads first, or the next strip's
// during this one's encoding, took 91-116 registers (two CTAs a SM) and ran 1.05-1.2x slower (H100, the
// 8B NVFP4 training layer's casts, sixteenth session).
__device__ __forceinline__ void stage_strip_op(const TgParams &p, long long r0, long long c0, long long rows,
                                               long long cols, float *t)
{
	constexpr int UPR = SCW / 8; // units a strip row
	const long long scols = kDglu ? cols / 2 : cols;
	for (int i = threadIdx.x; i < S2R * UPR; i += TG_THREADS) {
		const int r = i / UPR, j = i % UPR * 8;
		float v[8] = {0, 0, 0, 0, 0, 0, 0, 0}, w[8] = {0, 0, 0, 0, 0, 0, 0, 0};
		if (r0 + r < rows && c0 + j < scols) // scols % 8 == 0: a unit is all in or all out
			src_values(p, r0 + r, c0 + j, cols, v, w);
		*(float4 *)(t + sidx(r, j)) = make_float4(v[0], v[1], v[2], v[3]);
		*(float4 *)(t + sidx(r, j + 4)) = make_float4(v[4], v[5], v[6], v[7]);
		if (kDglu) {
			*(float4 *)(t + sidx(r, SCW + j)) = make_float4(w[0], w[1], w[2], w[3]);
			*(float4 *)(t + sidx(r, SCW + j + 4)) = make_float4(w[4], w[5], w[6], w[7]);
		}
	}
}

// Strip (r0, c0) of the values into t: the tensor's (TG_SRC 0) or the op's.
__device__ __forceinline__ void stage(const TgParams &p, long long r0, long long c0, float *t)
{
	if (TG_SRC == TG_SRC_TENSOR)
		stage_strip(p.p[TG_P_IN], r0, c0, p.n[0], p.n[1], t);
	else
		stage_strip_op(p, r0, c0, p.n[0], p.n[1], t);
}

// Strips of the tensor: ceil(rows / S2R) x ceil(source columns / SCW).
__device__ __forceinline__ long long strip_cols_count(long long cols)
{
	return ((kDglu ? cols / 2 : cols) + SCW - 1) / SCW;
}

// The 4 x 8 tile amaxes of the staged strip into tam[tile row * 8 + tile column]: 8 lanes
// a tile, lane p reads rows p and p + 8 (the order of a row's float4s does not matter).
__device__ __forceinline__ void strip_tile_amax(const float *t, float *tam)
{
	for (int i = threadIdx.x; i < 32 * 8; i += TG_THREADS) {
		const int tile = i / 8, p = i % 8, tr = tile / 8, tc = tile % 8;
		float m = 0.0f;
#pragma unroll
		for (int h = 0; h < 2; h++) {
			const float4 *row = (const float4 *)(t + (16 * tr + p + 8 * h) * S2P + 16 * tc);
#pragma unroll
			for (int q = 0; q < 4; q++) {
				const float4 v = row[q];
				m = fmaxf(fmaxf(m, fabsf(v.x)), fmaxf(fabsf(v.y), fmaxf(fabsf(v.z), fabsf(v.w))));
			}
		}
		m = fmaxf(m, __shfl_xor_sync(0xFFFFFFFFu, m, 1));
		m = fmaxf(m, __shfl_xor_sync(0xFFFFFFFFu, m, 2));
		m = fmaxf(m, __shfl_xor_sync(0xFFFFFFFFu, m, 4));
		if (p == 0)
			tam[tile] = m;
	}
}

// Rowwise blocks of the strip: unit (row r, block b), 8 units a row (sidx's swizzle keeps
// the 8 lanes of a row conflict-free).
// 16x16 blocks without SR or RHT: a columnwise block has the rowwise blocks' tile scale and the same
// x * mult, so its codes are theirs transposed; strip_rows leaves its codes in a [S2R][S2C / 2] byte tile for
// strip_cols to gather (a nibble moved, not an element encoded again).
constexpr bool kShareCodes = TG_2D && !TG_SR && !TG_RHT && TG_ROWWISE && TG_COLWISE;
// deq16's table: the columnwise BF16 operand, or the rowwise one under stochastic rounding (else e2m1x8_deq)
constexpr bool kDeqTab = (TG_DEQ & 2) || ((TG_DEQ & 1) && TG_SR);

__device__ __forceinline__ void strip_rows(const TgParams &p, const float *t, const float *tam, long long r0, long long c0,
                                           const Scales &sc, uint8_t *ct)
{
	const long long rows = p.n[0], cols = p.n[1];
	for (int i = threadIdx.x; i < S2R * 8; i += TG_THREADS) {
		const int r = i / 8, b = i % 8;
		const long long c = strip_col(c0, 16 * b, cols);
		if (r0 + r >= rows || c < 0)
			continue;
		float x[16];
#pragma unroll
		for (int q = 0; q < 4; q++) {
			const float4 v = *(const float4 *)(t + sidx(r, 16 * b + 4 * q));
			x[4 * q] = v.x, x[4 * q + 1] = v.y, x[4 * q + 2] = v.z, x[4 * q + 3] = v.w;
		}
		const uint8_t sd = tg_nvfp4_block_scale_f(TG_2D ? tam[(r / 16) * 8 + b] : amax16(x), sc.factor);
		const long long row = r0 + r;
		uint32_t w[2], h[8];
		if constexpr ((TG_DEQ & 1) && !TG_SR) { // the BF16 operand from the rounded values (e2m1x8_deq)
			const float dq = sc.dmul[sd];
			const uint32_t c6 = tg_f32x2_to_bf16x2(6.0f * dq, 6.0f * dq);
			w[0] = e2m1x8_deq(x, sc.mult[sd], dq, c6, h);
			w[1] = e2m1x8_deq(x + 8, sc.mult[sd], dq, c6, h + 4);
		} else {
			encode16(x, 16, sc.mult[sd], row * cols + c, (unsigned long long)p.n[3], w);
			if (TG_DEQ & 1)
				deq16(w, sc.dmul[sd], sc.dtab, h);
		}
		*(uint2 *)((uint8_t *)p.p[TG_P_OUT] + row * (cols / 2) + c / 2) = make_uint2(w[0], w[1]);
		((uint8_t *)p.p[TG_P_SCALE_INV])[row * (cols / 16) + c / 16] = sd;
		if (kShareCodes)
			*(uint2 *)(ct + r * (S2C / 2) + 8 * b) = make_uint2(w[0], w[1]);
		if (TG_DEQ & 1) { // cols % 16 == 0: two 16-byte stores
			uint4 *d = (uint4 *)((uint16_t *)p.p[TG_P_DEQ] + row * cols + c);
			d[0] = make_uint4(h[0], h[1], h[2], h[3]);
			d[1] = make_uint4(h[4], h[5], h[6], h[7]);
		}
	}
}

// Columnwise blocks of the strip: unit (column c, half h) encodes rows 32h .. 32h+31 of
// the strip's column c as two blocks of the transposed copy (Hadamard-transformed with
// TG_RHT; s_enc is the copy's own); with TG_DEQ bit 1 their codes to wq and scale bytes to sq (one unit a
// thread then). Units 2c and 2c + 1 are a column's two halves, so a lane pair's 16-byte code stores fill one
// 32-byte sector in one instruction (with the halves in different warps, each sector took two half writes apart:
// H100, 8B NVFP4 training layer, us alone: d_h 1039-1044 -> 945-948, w_up 441 -> 391-399, act 502 -> 469-488,
// w_down 211 -> 191-194, xn 136 -> 128-130, d_y 122-123 -> 113-115; thirty-first session, call 5). Its 2-way
// bank conflict (the halves' rows are 32 rows apart, one bank) is cheaper than a swizzle of sidx, which took
// back most of the gain.
__device__ __forceinline__ void strip_cols(const TgParams &p, const float *t, const float *tam, long long r0, long long c0,
                                           const Scales &sc, const uint8_t *ct, uint32_t (&wq)[4], uint32_t &sq)
{
	const long long rows = p.n[0], cols = p.n[1], nbt = (rows + 15) / 16;
	for (int i = threadIdx.x; i < S2C * (S2R / 32); i += TG_THREADS) {
		const int c = i >> 1, h = i & 1;
		const long long col = strip_col(c0, c, cols), bt0 = (r0 + 32 * h) / 16;
		if (col < 0 || 16 * bt0 >= rows)
			continue;
		uint8_t *out = (uint8_t *)p.p[TG_P_OUT_T] + col * (TG_PITCH_FP4(rows) / 2);
		uint8_t *sct = (uint8_t *)p.p[TG_P_SCALE_INV_T] + col * nbt;
		uint32_t w[4];
		uint8_t sd[2];
		int len[2];
#pragma unroll
		for (int j = 0; j < 2; j++) {
			const long long rb = 16 * (bt0 + j);
			len[j] = rb >= rows ? 0 : rows - rb < 16 ? (int)(rows - rb) : 16;
			if (kShareCodes) { // the rowwise codes of the column, rows past the tensor 0
				sd[j] = tg_nvfp4_block_scale_f(tam[(2 * h + j) * 8 + c / 16], sc.factor);
				w[2 * j] = w[2 * j + 1] = 0u;
#pragma unroll
				for (int k = 0; k < 16; k++) {
					const uint32_t cd = (ct[(32 * h + 16 * j + k) * (S2C / 2) + c / 2] >> (4 * (c & 1))) & 0xFu;
					w[2 * j + k / 8] |= (k < len[j] ? cd : 0u) << (4 * (k % 8));
				}
			} else {
				float x[16];
#pragma unroll
				for (int k = 0; k < 16; k++)
					x[k] = t[sidx(32 * h + 16 * j + k, c)]; // 0 past the last row
				col_rht(x, len[j]);
				sd[j] = tg_nvfp4_block_scale_f(TG_2D ? tam[(2 * h + j) * 8 + c / 16] : amax16(x), sc.factor);
				if (len[j] == 16) // a constant length: no test an element
					encode16(x, 16, sc.mult[sd[j]], col * rows + rb, (unsigned long long)p.n[3], &w[2 * j]);
				else
					encode16(x, len[j], sc.mult[sd[j]], col * rows + rb, (unsigned long long)p.n[3], &w[2 * j]);
			}
		}
		if (TG_DEQ & 2) { // the unit's codes and scales, for strip_deq_t
#pragma unroll
			for (int k = 0; k < 4; k++)
				wq[k] = w[k];
			sq = sd[0] | sd[1] << 8;
		}
		if (len[1] == 16) // both blocks inside: one 16-byte store (aligned at any row count: the lines are padded)
			*(uint4 *)(out + 8 * bt0) = make_uint4(w[0], w[1], w[2], w[3]);
#pragma unroll
		for (int j = 0; j < 2; j++) { // the scales; a column's last unit's codes a byte at a time
			if (len[j] == 0)
				break;
			sct[bt0 + j] = sd[j];
			if (len[1] != 16)
				store_partial(out + 8 * (bt0 + j), &w[2 * j], len[j]);
		}
	}
}

constexpr int DQP = S2R + 8; // dq's row pitch (BF16 elements): a 16-byte shift a row keeps 8 lanes off one bank
static_assert(!(TG_DEQ & 2) || TG_THREADS == S2C * (S2R / 32),
	"nvfp4_quantize.cu: TG_DEQ's columnwise copy: one unit a thread");
static_assert(S2C * DQP * 2 <= S2R * S2P * 4, "dq fits in the strip's buffer");

// The strip's columnwise BF16 copy, staged in dq [S2C][DQP] (the strip's buffer, once read), to
// p[TG_P_DEQ_T] [cols][TG_PITCH(rows)]: a column's 64 rows are 128 contiguous bytes, 16-byte stores in a whole
// strip (16-byte aligned at any row count: the lines are padded to 16 elements), element by element in a column's
// last, partial strip (one store loop for both took ptxas from 110-122 registers to 73-80 and spilled 8 bytes on
// sm_100a; the scattered 32-byte stores of each block from strip_cols itself took the act cast from 476 to 897 us:
// H100, sixteenth session).
__device__ __forceinline__ void strip_deq_t(const TgParams &p, const uint16_t *dq, long long r0, long long c0)
{
	const long long rows = p.n[0], cols = p.n[1], pt = TG_PITCH(rows);
	const int n = rows - r0 < S2R ? (int)(rows - r0) : S2R;
	uint16_t *out = (uint16_t *)p.p[TG_P_DEQ_T];
	if (n == S2R) { // a whole strip (every 16-byte piece inside the tensor's rows)
		for (int i = threadIdx.x; i < S2C * (S2R / 8); i += TG_THREADS) {
			const int c = i / (S2R / 8), q = i % (S2R / 8);
			const long long col = strip_col(c0, c, cols);
			if (col >= 0)
				*(uint4 *)(out + col * pt + r0 + 8 * q) = *(const uint4 *)(dq + c * DQP + 8 * q);
		}
		return;
	}
	for (int i = threadIdx.x; i < S2C * S2R; i += TG_THREADS) { // the last strip of a column: its rows only
		const int c = i / S2R, k = i % S2R;
		const long long col = strip_col(c0, c, cols);
		if (col >= 0 && k < n)
			out[col * pt + r0 + k] = dq[c * DQP + k];
	}
}

// The cast pass's S_enc of the copy whose global amax is at amax (CTA 0 also writes it to
// *scale) and, in mult (and dmul, or nullptr), its multipliers (the caller syncs before use).
__device__ __forceinline__ Scales cast_scales(const void *amax, void *scale, float *mult, float *dmul)
{
	const float s_enc = tg_nvfp4_s_enc(*(const float *)amax);
	if (blockIdx.x == 0 && threadIdx.x == 0)
		*(float *)scale = s_enc;
	fill_mult(mult, dmul, s_enc);
	return {s_enc, tg_nvfp4_block_factor(s_enc), mult, dmul, nullptr};
}

// Strip s's origin (r0, c0) in the cast pass's order: groups of kStripGroup strip columns, each group's strips row-major,
// the groups left to right. The CTAs in flight at a time (about 500 on an H100) then cover 8 strip columns by about
// 60 strip rows, so both the rowwise copies (2 KB a row with a BF16 operand) and the columnwise ones (about 8 KB a
// column) are written in long runs; in plain row-major order each strip's 64 x 2 bytes of a column of the columnwise
// BF16 operand (and 32 bytes of its codes) landed beside nothing else in flight. H100, 8B NVFP4 training layer, us
// alone: d_h 1428 -> 1043, act 611 -> 504, w_down 228 -> 211; xn and d_y within 3%, w_up (2D) the same; groups of 16
// and 32 columns within 5% of 8, of 1 (column-major) d_h 1365 and w_up 521 (thirtieth session, call 4).
constexpr long long kStripGroup = 8;
__device__ __forceinline__ void strip_origin(long long s, long long nsc, long long rows, long long &r0, long long &c0)
{
	const long long bands = (rows + S2R - 1) / S2R, g = s / (kStripGroup * bands);
	const long long width = nsc - g * kStripGroup < kStripGroup ? nsc - g * kStripGroup : kStripGroup; // the last group's
	const long long i = s - g * kStripGroup * bands;
	r0 = i / width * S2R;
	c0 = (g * kStripGroup + i % width) * SCW;
}

// Pass 1 over strips (TG_2D, or a columnwise copy): grid-stride over strips (strip_origin's order), two
// barriers a strip (three with TG_2D). A 1D columnwise copy read its columns from global memory
// before (2 or 4 bytes a load): 1.09-1.13x slower (H200, the 8B NVFP4 training layer's casts,
// fifteenth session).
__device__ __forceinline__ void cast_pass_strip(const TgParams &p)
{
	__shared__ __align__(16) float t[S2R * S2P];
	__shared__ float tam[32], mult[TG_RHT ? 2 : 1][256], dmul[TG_DEQ ? (TG_RHT ? 2 : 1) : 1][TG_DEQ ? 256 : 1];
	__shared__ float2 dtab[kDeqTab ? 256 : 1];
	__shared__ __align__(16) uint8_t ct[kShareCodes ? S2R * (S2C / 2) : 16]; // strip_rows' codes for strip_cols
	const long long rows = p.n[0], cols = p.n[1];
	// ready after the loop's first barrier; the columnwise copy has its own S_enc with the
	// RHT (from the transformed values' amax)
	Scales sc = cast_scales(p.p[TG_P_AMAX], p.p[TG_P_SCALE], mult[0], TG_DEQ ? dmul[0] : nullptr);
	Scales sct = TG_RHT ? cast_scales(p.p[TG_P_AMAX_T], p.p[TG_P_SCALE_T], mult[TG_RHT], TG_DEQ ? dmul[TG_RHT] : nullptr)
	                    : sc;
	if (kDeqTab) {
		fill_deq_tab(dtab);
		sc.dtab = sct.dtab = dtab;
	}
	const long long nsc = strip_cols_count(cols), nstrip = (rows + S2R - 1) / S2R * nsc;
	for (long long s = blockIdx.x; s < nstrip; s += gridDim.x) {
		long long r0, c0;
		strip_origin(s, nsc, rows, r0, c0);
		__syncthreads(); // the previous strip's readers are done
		stage(p, r0, c0, t);
		__syncthreads();
		if (TG_2D) {
			strip_tile_amax(t, tam);
			__syncthreads();
		}
		if (TG_ROWWISE)
			strip_rows(p, t, tam, r0, c0, sc, ct);
		if (kShareCodes)
			__syncthreads(); // the codes are in ct
		uint32_t wq[4] = {}, sq = 0; // TG_DEQ bit 1: this thread's unit of the columnwise copy (codes, scales)
		if (TG_COLWISE)
			strip_cols(p, t, tam, r0, c0, sct, ct, wq, sq);
		if (TG_DEQ & 2) { // dequantized into t (every reader done), then written along the copy's rows
			uint16_t *dq = (uint16_t *)t;
			__syncthreads();
			uint4 *d = (uint4 *)(dq + (threadIdx.x >> 1) * DQP + 32 * (threadIdx.x & 1)); // strip_cols' unit
#pragma unroll
			for (int j = 0; j < 2; j++) {
				uint32_t h[8];
				deq16(&wq[2 * j], sct.dmul[(uint8_t)(sq >> (8 * j))], sct.dtab, h);
				d[2 * j] = make_uint4(h[0], h[1], h[2], h[3]);
				d[2 * j + 1] = make_uint4(h[4], h[5], h[6], h[7]);
			}
			__syncthreads();
			strip_deq_t(p, dq, r0, c0);
		}
	}
}

// Pass 1 of a rowwise-only copy with 1D blocks: units are its blocks (row-major).
__device__ __forceinline__ void cast_pass(const TgParams &p)
{
	const long long rows = p.n[0], cols = p.n[1];
	__shared__ float mult[256];
	const Scales sc = cast_scales(p.p[TG_P_AMAX], p.p[TG_P_SCALE], mult, nullptr);
	__syncthreads();
	const long long nb = cols / 16, units = rows * nb;
	for (long long u = (long long)blockIdx.x * TG_THREADS + threadIdx.x; u < units; u += (long long)gridDim.x * TG_THREADS)
		row_block(p, u / nb, u % nb, sc);
}

// Pass 0 of an op's values with the RHT (TG_SRC 1..3) over strips: max|x| into AMAX (not for a norm,
// whose own amax pass took it) and max|RHT(x)| over every 16 rows of a column into AMAX_T.
__device__ __forceinline__ void amax_pass_strip(const TgParams &p)
{
	__shared__ __align__(16) float t[S2R * S2P];
	const long long rows = p.n[0], cols = p.n[1];
	const long long nsc = strip_cols_count(cols), nstrip = (rows + S2R - 1) / S2R * nsc;
	float m = 0.0f, mt = 0.0f;
	for (long long s = blockIdx.x; s < nstrip; s += gridDim.x) {
		const long long r0 = s / nsc * S2R, c0 = s % nsc * SCW;
		__syncthreads(); // the previous strip's readers are done
		stage(p, r0, c0, t);
		__syncthreads();
		for (int i = threadIdx.x; i < S2C * (S2R / 16); i += TG_THREADS) {
			const int j = i % S2C, q = i / S2C;
			const long long rb = r0 + 16 * q;
			if (strip_col(c0, j, cols) < 0 || rb >= rows)
				continue;
			float x[16];
#pragma unroll
			for (int k = 0; k < 16; k++)
				x[k] = t[sidx(16 * q + k, j)]; // 0 past the last row
			m = fmaxf(m, amax16(x));
			col_rht(x, rows - rb < 16 ? (int)(rows - rb) : 16);
			mt = fmaxf(mt, amax16(x));
		}
	}
	if (TG_SRC != TG_SRC_NORM)
		amax_flush(m, p.p[TG_P_AMAX]);
	amax_flush(mt, p.p[TG_P_AMAX_T]);
}

} // namespace tgnv

// A tensor's 16x16-block cast pass (the 2D weight copies) at four CTAs a SM (64 registers; it took 72): H100, 8B NVFP4
// training layer, w_up / w_down casts 492 / 251 -> 462 / 236 us. Not the 1D casts (d_y: 143 against 147 us, but 8 bytes
// spilled; with RHT 164; FP32 input 2D 16), nor an op's value source (dglu at 64 registers spilled and ran 2% slower).
#if !defined(TG_NV_MIN_CTAS) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 1000 && TG_PASS == 1 && (TG_SR || TG_RHT)
/* sm_100's ptxas, given no minimum, held some stochastic-rounding / Hadamard strip casts to 64 registers and spilled
 * 12-44 bytes (forty-second session); a budget of three CTAs a SM (85 registers) gives them 72-80, no spill */
#define TG_NV_MIN_CTAS 3
#endif
#ifndef TG_NV_MIN_CTAS
#define TG_NV_MIN_CTAS (TG_PASS == 1 && TG_SRC == TG_SRC_TENSOR && TG_2D && !TG_SR && !TG_RHT && TG_IN_DTYPE != TG_DTYPE_F32 ? 4 : 0)
#endif
#if TG_NV_MIN_CTAS
extern "C" __global__ void __launch_bounds__(TG_THREADS, TG_NV_MIN_CTAS) TG_KERNEL(const TgParams p)
#else
extern "C" __global__ void __launch_bounds__(TG_THREADS) TG_KERNEL(const TgParams p)
#endif
{
	if constexpr (TG_PASS == 0 && TG_SRC != TG_SRC_TENSOR)
		tgnv::amax_pass_strip(p);
	else if constexpr (TG_PASS == 0)
		tgnv::amax_pass(p);
	else if constexpr (TG_2D != 0 || TG_COLWISE != 0 || TG_SRC != TG_SRC_TENSOR)
		tgnv::cast_pass_strip(p);
	else
		tgnv::cast_pass(p);
}
