/* tg_rowvec.h: device helpers shared by the row-oriented templates
 * (norm_quantize.cu, glu_amax.cu): raw vectors, half/bf16 conversions, vector
 * loads and stores, FP8 quantize-and-store of a vector, lane and CTA
 * reductions, the per-tensor scale of recipes 1 and 2, the tile path's
 * columnwise FP8 store, the block tile paths' columnwise 1x128 copy.
 *
 * Embedded with the templates but not slot-filled: nothing here reads a TG_
 * slot; whatever depends on one (dtype, format, recipe, thread count) is a
 * template parameter (a float such as TG_EPS_SCALE is a function argument).
 * Device only; global scope and include-guarded, so that several templates
 * (each in its own per-kernel namespace) can share one translation unit.
 */
#ifndef TG_ROWVEC_H
#define TG_ROWVEC_H

#include "tg_formats.h"
#include "tg_recipe.h"
#include "tg_kernel.h"

// Raw vector of NB bytes, naturally aligned so that it moves as one access.
template <int NB> struct alignas(NB) tg_raw { uint32_t w[NB / 4]; };
template <> struct alignas(2) tg_raw<2> { uint16_t h; };

// 16-bit value of dtype dt (1 bf16, else fp16) to FP32, and back (round to nearest).
__device__ __forceinline__ float tg_h2f(uint32_t h, int dt)
{
	if (dt == TG_DTYPE_BF16)
		return tg_bf16_to_f32((uint16_t)h);
	float f;
	asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"((uint16_t)h));
	return f;
}

__device__ __forceinline__ uint32_t tg_f2h(float f, int dt)
{
	if (dt == TG_DTYPE_BF16)
		return tg_f32_to_bf16(f);
	uint16_t h;
	asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
	return h;
}

// Load N elements of dtype DT (0 fp32, 1 bf16, 2 fp16) starting at element i of p, as FP32.
template <int DT, int N>
__device__ __forceinline__ void tg_load_vec(const void *p, long long i, float (&f)[N])
{
	constexpr int NB = N * (DT == TG_DTYPE_F32 ? 4 : 2);
	constexpr int CB = NB > 16 ? 16 : NB;   // one access moves at most 16 bytes
	constexpr int EPC = CB / (DT == TG_DTYPE_F32 ? 4 : 2);
#pragma unroll
	for (int h = 0; h < NB / CB; h++) {
		tg_raw<CB> r = reinterpret_cast<const tg_raw<CB> *>(p)[i / EPC + h];
#pragma unroll
		for (int k = 0; k < CB / 4; k++) {
			if (DT == TG_DTYPE_F32) {
				f[h * EPC + k] = tg_u2f(r.w[k]);
			} else {
				f[h * EPC + 2 * k] = tg_h2f(r.w[k] & 0xFFFFu, DT);
				f[h * EPC + 2 * k + 1] = tg_h2f(r.w[k] >> 16, DT);
			}
		}
	}
}

// N elements of dtype DT held raw (unconverted): loaded early, converted later
// (software pipelining: the next row's loads stay in flight during this row's work).
template <int DT, int N> struct tg_rvec {
	static constexpr int NB = N * (DT == TG_DTYPE_F32 ? 4 : 2);
	static constexpr int CB = NB > 16 ? 16 : NB;   // one access moves at most 16 bytes
	tg_raw<CB> c[NB / CB];
};

// Raw load of N elements of dtype DT starting at element i of p (same accesses as tg_load_vec).
template <int DT, int N>
__device__ __forceinline__ void tg_load_raw(const void *p, long long i, tg_rvec<DT, N> &r)
{
	constexpr int CB = tg_rvec<DT, N>::CB, NB = tg_rvec<DT, N>::NB;
	constexpr int EPC = CB / (DT == TG_DTYPE_F32 ? 4 : 2);
#pragma unroll
	for (int h = 0; h < NB / CB; h++)
		r.c[h] = reinterpret_cast<const tg_raw<CB> *>(p)[i / EPC + h];
}

template <int DT, int N>
__device__ __forceinline__ void tg_zero_raw(tg_rvec<DT, N> &r)
{
	constexpr int CB = tg_rvec<DT, N>::CB, NB = tg_rvec<DT, N>::NB;
#pragma unroll
	for (int h = 0; h < NB / CB; h++)
#pragma unroll
		for (int k = 0; k < CB / 4; k++)
			r.c[h].w[k] = 0u;
}

// Raw vector to FP32 (the conversion of tg_load_vec).
template <int DT, int N>
__device__ __forceinline__ void tg_cvt_raw(const tg_rvec<DT, N> &r, float (&f)[N])
{
	constexpr int CB = tg_rvec<DT, N>::CB, NB = tg_rvec<DT, N>::NB;
	constexpr int EPC = CB / (DT == TG_DTYPE_F32 ? 4 : 2);
#pragma unroll
	for (int h = 0; h < NB / CB; h++) {
#pragma unroll
		for (int k = 0; k < CB / 4; k++) {
			if (DT == TG_DTYPE_F32) {
				f[h * EPC + k] = tg_u2f(r.c[h].w[k]);
			} else {
				f[h * EPC + 2 * k] = tg_h2f(r.c[h].w[k] & 0xFFFFu, DT);
				f[h * EPC + 2 * k + 1] = tg_h2f(r.c[h].w[k] >> 16, DT);
			}
		}
	}
}

// Store N FP32 values rounded to dtype DT at element i of p.
template <int DT, int N>
__device__ __forceinline__ void tg_store_hp(void *p, long long i, const float (&f)[N])
{
	constexpr int NB = N * (DT == TG_DTYPE_F32 ? 4 : 2);
	tg_raw<NB> r;
#pragma unroll
	for (int k = 0; k < NB / 4; k++) {
		if (DT == TG_DTYPE_F32)
			r.w[k] = tg_f2u(f[k]);
		else
			r.w[k] = tg_f2h(f[2 * k], DT) | (tg_f2h(f[2 * k + 1], DT) << 16);
	}
	reinterpret_cast<tg_raw<NB> *>(p)[i / N] = r;
}

// Round N FP32 values to dtype DT and back (the residual sum).
template <int DT, int N>
__device__ __forceinline__ void tg_round_vec(float (&f)[N])
{
	if (DT != TG_DTYPE_F32) {
#pragma unroll
		for (int k = 0; k < N; k++)
			f[k] = tg_h2f(tg_f2h(f[k], DT), DT);
	}
}

// A norm's gamma (+1 when ZC, zero-centered) and beta (LN; 0 for RMSNorm) for N columns from element c:
// gamma of dtype WDT at TG_P_GAMMA, beta of dtype BDT at TG_P_BETA (norm_quantize.cu, norm_colwise.cu).
template <int WDT, int BDT, int N, bool ZC, bool LN>
__device__ __forceinline__ void tg_norm_weights(const TgParams &p, int c, float (&g)[N], float (&b)[N])
{
	tg_load_vec<WDT, N>(p.p[TG_P_GAMMA], c, g);
#pragma unroll
	for (int k = 0; k < N; k++) {
		if (ZC)
			g[k] += 1.0f;
		b[k] = 0.0f;
	}
	if (LN)
		tg_load_vec<BDT, N>(p.p[TG_P_BETA], c, b);
}

// A normalized element in float, ((x - mu) * rsigma) * g + b (LayerNorm) or (x * rsigma) * g: the one
// source expression of the row kernel, its tile path and norm_colwise.cu (the compiler may contract it
// into FMAs; the same expression gives the same DAG in each).
template <bool LN>
__device__ __forceinline__ float tg_norm_value(float x, float mu, float rs, float g, float b)
{
	return LN ? (x - mu) * rs * g + b : x * rs * g;
}

// Two FP32 values to two FP8 bytes of format FMT (TG_FMT_E4M3 or TG_FMT_E5M2), lo first.
template <int FMT>
__device__ __forceinline__ uint32_t tg_fp8x2(float lo, float hi)
{
	return FMT == TG_FMT_E4M3 ? (uint32_t)tg_f32x2_to_e4m3x2(lo, hi) : (uint32_t)tg_f32x2_to_e5m2x2(lo, hi);
}

// Four values times s as four FP8 bytes of format FMT in one word, f0 in the low byte: the one packing of four
// codes (tg_store_fp8, tg_store_fp8_deq, dglu's staged path, the AdamW casts).
template <int FMT>
__device__ __forceinline__ uint32_t tg_fp8x4(float f0, float f1, float f2, float f3, float s)
{
	return tg_fp8x2<FMT>(f0 * s, f1 * s) | (tg_fp8x2<FMT>(f2 * s, f3 * s) << 16);
}

// The FP8 codes (format FMT) of N values times s, N = 2 (one 16-bit code pair in w[0]) or a multiple of 4 (four
// codes a word, in order).
template <int FMT, int N>
__device__ __forceinline__ void tg_fp8_words(const float (&f)[N], float s, uint32_t (&w)[N < 4 ? 1 : N / 4])
{
	static_assert(N == 2 || N % 4 == 0, "tg_fp8_words: N = 2 or a multiple of 4");
	if constexpr (N == 2)
		w[0] = tg_fp8x2<FMT>(f[0] * s, f[1] * s);
	else
#pragma unroll
		for (int k = 0; k < N / 4; k++)
			w[k] = tg_fp8x4<FMT>(f[4 * k], f[4 * k + 1], f[4 * k + 2], f[4 * k + 3], s);
}

// tg_fp8_words' words of N codes stored at element i of p (N bytes, one store).
template <int N>
__device__ __forceinline__ void tg_store_fp8_words(void *p, long long i, const uint32_t (&w)[N < 4 ? 1 : N / 4])
{
	if constexpr (N == 2) {
		tg_raw<2> r;
		r.h = (uint16_t)w[0];
		reinterpret_cast<tg_raw<2> *>(p)[i / 2] = r;
	} else {
		tg_raw<N> r;
#pragma unroll
		for (int k = 0; k < N / 4; k++)
			r.w[k] = w[k];
		reinterpret_cast<tg_raw<N> *>(p)[i / N] = r;
	}
}

// Store N values times s as FP8 bytes of format FMT at element i of p (N bytes; N = 2 or a multiple of 4).
template <int FMT, int N>
__device__ __forceinline__ void tg_store_fp8(void *p, long long i, const float (&f)[N], float s)
{
	uint32_t w[N < 4 ? 1 : N / 4];
	tg_fp8_words<FMT, N>(f, s, w);
	tg_store_fp8_words<N>(p, i, w);
}

// tg_store_fp8 that also stores the codes dequantized by dq as N BF16 values at element i of deq
// (tg_store_mx_deq): an MXFP8 rowwise copy with TG_DEQ bit 0.
template <int FMT, int N>
__device__ __forceinline__ void tg_store_fp8_deq(void *p, uint16_t *deq, long long i, const float (&f)[N], float s, float dq)
{
	uint32_t w[N < 4 ? 1 : N / 4];
	tg_fp8_words<FMT, N>(f, s, w);
	tg_store_fp8_words<N>(p, i, w);
	tg_store_mx_deq<FMT, N>(deq + i, w, dq);
}

__device__ __forceinline__ float tg_absmax(float m, float v) { return fmaxf(m, fabsf(v)); } // NaN ignored

// Reduce over groups of G consecutive lanes (G a power of two <= 32); T float, or
// double (norm statistics for FP32/FP16 outputs).
template <int G, typename T>
__device__ __forceinline__ T tg_group_sum(T v)
{
#pragma unroll
	for (int o = G / 2; o > 0; o >>= 1)
		v += __shfl_xor_sync(0xFFFFFFFFu, v, o);
	return v;
}
template <int G>
__device__ __forceinline__ float tg_group_max(float v)
{
#pragma unroll
	for (int o = G / 2; o > 0; o >>= 1)
		v = fmaxf(v, __shfl_xor_sync(0xFFFFFFFFu, v, o));
	return v;
}

// CTA-wide max of v (>= 0) over a CTA of THREADS threads, result valid in thread 0. Uses red[32].
template <int THREADS>
__device__ __forceinline__ float tg_cta_max(float v, float *red)
{
	v = tg_group_max<32>(v);
	__syncthreads();
	if ((threadIdx.x & 31) == 0)
		red[threadIdx.x >> 5] = v;
	__syncthreads();
	float m = 0.0f;
	if (threadIdx.x == 0)
		for (int w = 0; w < THREADS / 32; w++)
			m = fmaxf(m, red[w]);
	return m;
}

__device__ __forceinline__ void tg_red_max(float *addr, float v)
{
	// max of non-negative floats == max of their bit patterns as signed ints
	asm volatile("red.global.max.s32 [%0], %1;" ::"l"(addr), "r"((int)tg_f2u(v)) : "memory");
}

// Per-tensor scale for RECIPE 1 (delayed) and 2 (current cast pass), S_enc for RECIPE 7
// (NVFP4 cast pass, from the global amax), else 1; CTA 0 publishes scale_inv (and scale;
// NVFP4: S_enc as scale only, as nvfp4_quantize.cu does). eps_scale, POW2: current scaling's.
template <int RECIPE, int FMT, int POW2>
__device__ __forceinline__ float tg_tensor_scale(const TgParams &p, float eps_scale)
{
	constexpr float fmax = FMT == TG_FMT_E4M3 ? TG_E4M3_MAX : TG_E5M2_MAX;
	float s = 1.0f;
	if (RECIPE == TG_RECIPE_DELAYED) {
		s = *(const float *)p.p[TG_P_SCALE];
		if (blockIdx.x == 0 && threadIdx.x == 0)
			*(float *)p.p[TG_P_SCALE_INV] = tg_scale_inv(s);
	} else if (RECIPE == TG_RECIPE_CURRENT_CAST) {
		s = tg_current_scale(*(const float *)p.p[TG_P_AMAX], fmax, eps_scale, POW2);
		if (blockIdx.x == 0 && threadIdx.x == 0) {
			*(float *)p.p[TG_P_SCALE] = s;
			*(float *)p.p[TG_P_SCALE_INV] = tg_scale_inv(s);
		}
	} else if (RECIPE == TG_RECIPE_NVFP4) {
		s = tg_nvfp4_s_enc(*(const float *)p.p[TG_P_AMAX]);
		if (blockIdx.x == 0 && threadIdx.x == 0)
			*(float *)p.p[TG_P_SCALE] = s;
	}
	return s;
}

// The amax of a scale block held by G consecutive lanes, V values each (0 from a lane whose vector
// lies outside the tensor); every lane of the group gets it.
template <int G, int V>
__device__ __forceinline__ float tg_block_amax(const float (&y)[V], bool valid)
{
	float a = 0.0f;
	if (valid) {
#pragma unroll
		for (int k = 0; k < V; k++)
			a = tg_absmax(a, y[k]);
	}
	return tg_group_max<G>(a);
}

// Rowwise NVFP4 store of one vector y[V] (V a divisor of 16) of tensor row r from column c, the
// numerics of nvfp4_quantize.cu's 1D cast (tg_recipe.h): the G = 16/V lanes of a 16-element block
// call it together; S_dec = tg_nvfp4_block_scale(block amax, s_enc) to scale_inv [rows][COLS/16],
// codes E2M1(y * tg_nvfp4_elem_scale(S_dec, s_enc)) (SR: rounded up with the probability of the
// fraction, random number tg_philox_rand(seed, n[3], index of the element in the copy)), two a byte,
// element 2k in the low nibble, to out [rows][COLS/2]. valid: this lane's vector lies inside the
// tensor (the whole block does or does not: COLS % 16 == 0).
template <int V, int COLS, int SR>
__device__ __forceinline__ void tg_emit_row_nvfp4(const TgParams &p, long long r, int c, const float (&y)[V], bool valid,
                                                  float s_enc, unsigned long long seed)
{
	static_assert(V >= 2 && 16 % V == 0 && COLS % 16 == 0, "NVFP4 rows: V must divide 16, COLS a multiple of 16");
	constexpr int G = 16 / V;
	const float a = tg_block_amax<G, V>(y, valid);
	if (!valid)
		return;
	const uint8_t sd = tg_nvfp4_block_scale(a, s_enc);
	const float mult = tg_nvfp4_elem_scale(sd, s_enc);
	const long long e = r * COLS + c;
	if ((threadIdx.x % G) == 0)
		((uint8_t *)p.p[TG_P_SCALE_INV])[e / 16] = sd;
	uint32_t rnd[V];
	if (SR) { // e % V == 0, so one Philox block serves 4 consecutive elements when V >= 4
		if (V >= 4) {
#pragma unroll
			for (int q = 0; q < V / 4; q++)
				tg_philox_block(seed, (uint64_t)p.n[3], ((uint64_t)e >> 2) + q, &rnd[(4 * q) % V]);
		} else {
#pragma unroll
			for (int k = 0; k < V; k++)
				rnd[k] = tg_philox_rand(seed, (uint64_t)p.n[3], (uint64_t)(e + k));
		}
	}
	unsigned long long w = 0;
	if constexpr (!SR && V % 8 == 0) { // eight codes a word by way of E4M3 (tg_e2m1x8)
#pragma unroll
		for (int h = 0; h < V / 8; h++)
			w |= (unsigned long long)tg_e2m1x8(&y[8 * h], mult) << (32 * h);
	} else {
#pragma unroll
		for (int k = 0; k < V; k++)
			w |= (unsigned long long)(SR ? tg_f32_to_e2m1_sr(y[k] * mult, rnd[k]) : tg_f32_to_e2m1(y[k] * mult)) << (4 * k);
	}
	uint8_t *dst = (uint8_t *)p.p[TG_P_OUT] + e / 2;
	if (V == 16)
		*reinterpret_cast<unsigned long long *>(dst) = w;
	else if (V == 8)
		*reinterpret_cast<uint32_t *>(dst) = (uint32_t)w;
	else if (V == 4)
		*reinterpret_cast<uint16_t *>(dst) = (uint16_t)w;
	else
		*dst = (uint8_t)w;
}

// Rowwise store of one vector y[V] of tensor row r from column c, on the row paths of
// norm_quantize.cu and glu_amax.cu: RECIPE 0 in OUT_DTYPE; 1/2 FP8 (format FMT) with the
// per-tensor scale s; 4 FP8 with a 1x128 block scale (tg_block_scale(amax, eps, pow2);
// scale_inv [COLS/128][rows]); 6 MXFP8 with an E8M0 scale per 32 elements (scale_inv
// [rows][ceil(COLS/32)]); 7 NVFP4 (tg_emit_row_nvfp4: s is S_enc, SR / seed the stochastic
// rounding). The G lanes of one scale block call it together
// (tg_group_max); valid: this lane's vector lies inside the tensor. MXFP8 with DEQ bit 0 (TG_DEQ): the
// codes also dequantized to BF16 at p[TG_P_MX_DEQ] [rows][COLS] (the emulated GEMM's operand).
template <int FMT, int RECIPE, int OUT_DTYPE, int G, int V, int COLS, int SR = 0, int DEQ = 0>
__device__ __forceinline__ void tg_emit_row(const TgParams &p, long long rows, long long r, int c, const float (&y)[V],
                                            bool valid, float s, float eps, int pow2, unsigned long long seed = 0)
{
	static_assert(DEQ == 0 || RECIPE == TG_RECIPE_MXFP8, "TG_DEQ dequantizes MXFP8 copies");
	if constexpr (RECIPE == TG_RECIPE_NVFP4) {
		tg_emit_row_nvfp4<V, COLS, SR>(p, r, c, y, valid, s, seed);
		return;
	}
	long long e = r * COLS + c;
	if (RECIPE == TG_RECIPE_NONE) {
		if (valid)
			tg_store_hp<OUT_DTYPE, V>(p.p[TG_P_OUT], e, y);
	} else if (RECIPE == TG_RECIPE_DELAYED || RECIPE == TG_RECIPE_CURRENT_CAST) {
		if (valid)
			tg_store_fp8<FMT, V>(p.p[TG_P_OUT], e, y, s);
	} else if (RECIPE == TG_RECIPE_BLOCK1X128 || RECIPE == TG_RECIPE_MXFP8) {
		constexpr float fmax = FMT == TG_FMT_E4M3 ? TG_E4M3_MAX : TG_E5M2_MAX;
		const float a = tg_block_amax<G, V>(y, valid);
		float bs, dq = 1.0f;
		if (RECIPE == TG_RECIPE_BLOCK1X128) {
			bs = tg_block_scale(a, fmax, eps, pow2);
			if (valid && (threadIdx.x % G) == 0)
				((float *)p.p[TG_P_SCALE_INV])[(long long)(c / 128) * rows + r] = tg_scale_inv(bs);
		} else {
			uint8_t eb = tg_e8m0_from_amax(a, fmax);
			bs = tg_e8m0_rcp(eb);
			dq = tg_e8m0_deq(eb);
			if (valid && (threadIdx.x % G) == 0)
				((uint8_t *)p.p[TG_P_SCALE_INV])[r * ((COLS + 31) / 32) + c / 32] = eb;
		}
		if (valid) {
			if constexpr (RECIPE == TG_RECIPE_MXFP8 && (DEQ & 1))
				tg_store_fp8_deq<FMT, V>(p.p[TG_P_OUT], (uint16_t *)p.p[TG_P_MX_DEQ], e, y, bs, dq);
			else
				tg_store_fp8<FMT, V>(p.p[TG_P_OUT], e, y, bs);
		}
	}
}

// The rowwise 1x128 copies of NB blocks that a group of 16 lanes holds together (NB divides 16, NS divides NB):
// block b is tensor row r + b % NS, this lane's 8 columns c + (b / NS) * cstep.. (lane threadIdx.x % 16 holding
// columns 128k + (lane % 16) * 8..), values y[b]; rows past `rows` are not written, nor this lane's columns where
// !col_ok (lane 0 of a group always inside). The bits of NB calls of tg_emit_row (recipe 4, G 16, V 8), but each
// block's scale (the division, saturation and reciprocal) is computed once a group, by lane b of it (lane l takes
// block l % NB), and shuffled to the others, and lane b writes block b's scale_inv: the block tile paths of dglu.cu
// and glu_amax.cu, whose lanes computed every scale redundantly (9.4 of dglu's 47.7 instructions an element were its
// rowwise copy). Every lane of the warp calls it.
template <int FMT, int NB, int NS, int COLS>
__device__ __forceinline__ void tg_emit_rows_block(const TgParams &p, long long rows, long long r, int c, int cstep,
	const float (&y)[NB][8], bool col_ok, float eps, int pow2)
{
	static_assert(NB >= 1 && 16 % NB == 0 && NB % NS == 0, "tg_emit_rows_block: NB must divide 16, NS divide NB");
	constexpr float fmax = FMT == TG_FMT_E4M3 ? TG_E4M3_MAX : TG_E5M2_MAX;
	const int lane = threadIdx.x & 31, lb = lane % NB; // lb: the block whose scale this lane computes
	float am = 0.0f;
#pragma unroll
	for (int b = 0; b < NB; b++) {
		const float a = tg_block_amax<16, 8>(y[b], r + b % NS < rows && col_ok);
		am = lb == b ? a : am;
	}
	const float bs_mine = tg_block_scale(am, fmax, eps, pow2);
	const long long rm = r + lb % NS;
	if ((lane & 15) < NB && rm < rows)
		((float *)p.p[TG_P_SCALE_INV])[(long long)((c + lb / NS * cstep) / 128) * rows + rm] = tg_scale_inv(bs_mine);
#pragma unroll
	for (int b = 0; b < NB; b++) {
		const float bs = __shfl_sync(0xFFFFFFFFu, bs_mine, (lane & 16) | b);
		if (r + b % NS < rows && col_ok)
			tg_store_fp8<FMT, 8>(p.p[TG_P_OUT], (r + b % NS) * COLS + c + b / NS * cstep, y[b], bs);
	}
}

// Columnwise (transposed) FP8 store of one staged chunk on the tile path of norm_quantize.cu and
// glu_amax.cu. Contract: every thread of the CTA calls it (it holds a __syncthreads on entry, so the
// staging is complete, and one on exit, so ys may be restaged), after writing its FP32 outputs for
// tensor rows r0..r0+R-1, columns c0..c0+CW-1 into ys (row-major, PITCH floats a row; entries of
// rows >= rows or columns >= COLS are never read). SEG, the rows one thread stores, is the MXFP8
// block (32) for RECIPE 6, else a multiple of 16; R is a multiple of SEG. One thread per (column
// col, segment from row rs0) quantizes its segment with the per-tensor scale s, or for RECIPE 6
// with its own E8M0 scale, written to scale_inv_t [ceil(rows/32)][COLS] at (rs0/32, col), and
// writes the FP8 bytes (format FMT) to out_t [COLS][TG_PITCH(rows)] from (col, rs0): 16 bytes at a time
// where the segment is whole (lines padded to 16 bytes: aligned at any row count), else byte by byte up to rows.
// MXFP8 with DEQ bit 1 (TG_DEQ): the codes also dequantized to BF16 at p[TG_P_MX_DEQ_T] [COLS][TG_PITCH(rows)].
template <int FMT, int RECIPE, int THREADS, int COLS, int R, int CW, int PITCH, int SEG, int DEQ = 0>
__device__ __forceinline__ void tg_colwise_store(const TgParams &p, const float (*ys)[PITCH], long long r0, int c0,
	long long rows, float s)
{
	static_assert(RECIPE == TG_RECIPE_MXFP8 ? SEG == 32 : SEG % 16 == 0, "columnwise: SEG must be 32 (MXFP8) or a multiple of 16");
	static_assert(R % SEG == 0, "columnwise: rows per tile must be a multiple of the segment");
	static_assert(DEQ == 0 || RECIPE == TG_RECIPE_MXFP8, "TG_DEQ dequantizes MXFP8 copies");
	__syncthreads();
	const long long pt = TG_PITCH(rows); /* out_t's and deq_t's line length */
	for (int task = threadIdx.x; task < CW * (R / SEG); task += THREADS) {
		const int cc = task % CW, seg = task / CW;
		const int col = c0 + cc;
		const long long rs0 = r0 + seg * SEG;
		if ((COLS % CW != 0 && col >= COLS) || rs0 >= rows)
			continue;
		float v[SEG];
		float bs = s, dq = 1.0f;
		const bool whole = rs0 + SEG <= rows;
#pragma unroll
		for (int k = 0; k < SEG; k++) /* (MXFP8: the rows past the end stay out of the block amax) */
			v[k] = RECIPE != TG_RECIPE_MXFP8 || whole || rs0 + k < rows ? ys[seg * SEG + k][cc] : 0.0f;
		if (RECIPE == TG_RECIPE_MXFP8) {
			constexpr float fmax = FMT == TG_FMT_E4M3 ? TG_E4M3_MAX : TG_E5M2_MAX;
			float a = 0.0f;
#pragma unroll
			for (int k = 0; k < SEG; k++)
				a = tg_absmax(a, v[k]);
			uint8_t eb = tg_e8m0_from_amax(a, fmax);
			bs = tg_e8m0_rcp(eb);
			dq = tg_e8m0_deq(eb);
			((uint8_t *)p.p[TG_P_SCALE_INV_T])[rs0 / 32 * COLS + col] = eb;
		}
		constexpr bool deq = RECIPE == TG_RECIPE_MXFP8 && (DEQ & 2);
		uint8_t *dst = (uint8_t *)p.p[TG_P_OUT_T] + col * pt + rs0;
		uint16_t *ddst = deq ? (uint16_t *)p.p[TG_P_MX_DEQ_T] + col * pt + rs0 : nullptr;
		if (whole) {
#pragma unroll
			for (int h = 0; h < SEG / 16; h++) {
				float w16[16];
#pragma unroll
				for (int k = 0; k < 16; k++)
					w16[k] = v[h * 16 + k];
				if constexpr (deq)
					tg_store_fp8_deq<FMT, 16>(dst + h * 16, ddst + h * 16, 0, w16, bs, dq);
				else
					tg_store_fp8<FMT, 16>(dst + h * 16, 0, w16, bs);
			}
		} else {
#pragma unroll
			for (int k = 0; k < SEG; k++)
				if (rs0 + k < rows) {
					const uint32_t code = tg_fp8x2<FMT>(v[k] * bs, 0.0f) & 0xFFu;
					dst[k] = (uint8_t)code;
					if (deq)
						ddst[k] = tg_mx_deq1<FMT>(code, dq);
				}
		}
	}
	__syncthreads();
}

// Shared memory of tg_block_colwise_tile for G row groups, NT tiles and blocks of BR rows (the caller
// declares it __shared__; 33 KB for NT 2 at G 32 or 64, 16.5 KB for NT 1 at G 32).
template <int G, int NT, int BR = 128> struct TgBlockTileSmem {
	alignas(16) float scale[128 / BR][NT * 128]; // the columns' block multipliers (each block of BR rows)
	union {                               // the partials are dead before the codes are written
		alignas(16) float cam[G / 2][NT * 128]; // column amax partials of the warps (two row groups each)
		alignas(16) uint8_t qt[NT][128][128];   // codes, [tile][column][row], chunk (row / 16) ^ (column / 8 % 8)
	};
};

// The columnwise block-scaled copies of NT tiles of 128 rows x 128 columns whose FP32 values the CTA
// holds in registers (the block tile paths of glu_amax.cu, NT 1, and dglu.cu, NT 2: d_a's and d_b's;
// norm_colwise.cu): blocks of BR rows, 128 (1x128: FP32 scales) or 32 (MXFP8: E8M0 scales).
// THREADS threads, 16 lanes a row of 8-element vectors, NS = 128 / (THREADS / 16) consecutive rows a
// thread: thread t holds tile rows (t / 16) * NS + st (st < NS; y[tile][st]) at tile columns
// (t % 16) * 8.., values outside the tensor zero. Tile i covers tensor rows r0.., columns
// c0 + i * cstep.. of a [rows][COLS] tensor; only columns < c_end are written. Each column's block
// amax (over the thread's rows, the warp's two row groups, then the warps through shared memory)
// gives its block scale: 1x128, tg_block_scale of format FMT's max, eps and pow2, and scale_inv_t
// [ceil(rows/128)][COLS] FP32 at (r0 / 128, column); MXFP8, tg_e8m0_from_amax and scale_inv_t
// [ceil(rows/32)][COLS] E8M0 at (r0 / 32 + block, column) for the blocks inside the tensor. A
// thread's NS codes of a column go into a byte tile [column][row] in shared memory as one word
// (16-byte chunks XOR-swizzled by column group), and the tiles out to out_t [COLS][TG_PITCH(rows)] as aligned
// 16-byte pieces. Four barriers for all NT tiles. Every
// thread calls it; sm may be rewritten after it returns. MXFP8 with DEQ bit 1 (TG_DEQ): the byte tiles
// also dequantized to BF16 at p[TG_P_MX_DEQ_T] [COLS][TG_PITCH(rows)] (each block's multiplier from its sm.scale).
template <int FMT, int THREADS, int NS, int COLS, int NT, int BR = 128, int DEQ = 0>
__device__ __forceinline__ void tg_block_colwise_tile(const TgParams &p, TgBlockTileSmem<THREADS / 16, NT, BR> &sm,
	const float (&y)[NT][NS][8], long long r0, int c0, int cstep, int c_end, long long rows, float eps, int pow2)
{
	constexpr int G = THREADS / 16, NB = 128 / BR, PPB = BR / (2 * NS); // blocks a tile column, partials a block
	static_assert(THREADS % 32 == 0 && G * NS == 128 && (NS == 2 || NS == 4 || NS == 8) && 1024 % THREADS == 0,
		"block columnwise: 16 lanes a row, 2, 4 or 8 rows a thread");
	static_assert((BR == 128 || BR == 32) && PPB >= 1 && BR % (2 * NS) == 0, "block columnwise: blocks of 128 or 32 rows");
	static_assert(DEQ == 0 || BR == 32, "TG_DEQ dequantizes MXFP8 copies");
	constexpr float fmax = FMT == TG_FMT_E4M3 ? TG_E4M3_MAX : TG_E5M2_MAX;
	const int lr = threadIdx.x / 16, lc = threadIdx.x % 16;
#pragma unroll
	for (int i = 0; i < NT; i++) {
		float cm[8];
#pragma unroll
		for (int k = 0; k < 8; k++)
			cm[k] = 0.0f;
#pragma unroll
		for (int st = 0; st < NS; st++)
#pragma unroll
			for (int k = 0; k < 8; k++)
				cm[k] = tg_absmax(cm[k], y[i][st][k]);
#pragma unroll
		for (int k = 0; k < 8; k++)
			cm[k] = tg_absmax(cm[k], __shfl_xor_sync(0xffffffffu, cm[k], 16)); // the warp's other row group
		if (lr % 2 == 0) { // two 16-byte stores (eight 4-byte ones, 16 lanes 32 bytes apart, were 4-way bank conflicts)
			float4 *dst = reinterpret_cast<float4 *>(&sm.cam[lr / 2][i * 128 + lc * 8]);
			dst[0] = make_float4(cm[0], cm[1], cm[2], cm[3]);
			dst[1] = make_float4(cm[4], cm[5], cm[6], cm[7]);
		}
	}
	__syncthreads();
#pragma unroll 1 // (unrolled, norm_colwise's MXFP8 t512 spilled 8 bytes at its 64 registers)
	for (int u = threadIdx.x; u < NB * NT * 128; u += THREADS) { // a column's block: its partials, then its scale
		const int cx = u % (NT * 128), b = u / (NT * 128);
		float a = 0.0f;
#pragma unroll
		for (int j = 0; j < PPB; j++)
			a = tg_absmax(a, sm.cam[b * PPB + j][cx]);
		const int col = c0 + cx / 128 * cstep + cx % 128;
		if constexpr (BR == 128) {
			const float bs = tg_block_scale(a, fmax, eps, pow2);
			sm.scale[0][cx] = bs;
			if (col < c_end)
				((float *)p.p[TG_P_SCALE_INV_T])[r0 / 128 * COLS + col] = tg_scale_inv(bs);
		} else {
			const uint8_t eb = tg_e8m0_from_amax(a, fmax);
			sm.scale[b][cx] = tg_e8m0_rcp(eb);
			if (col < c_end && r0 + b * BR < rows)
				((uint8_t *)p.p[TG_P_SCALE_INV_T])[(r0 / BR + b) * COLS + col] = eb;
		}
	}
	__syncthreads();
	const int row0 = lr * NS; // NS | 16: the thread's codes of a column lie in one 16-byte chunk
#pragma unroll
	for (int i = 0; i < NT; i++) {
		float sc8[8]; // the thread's 8 columns' scales: two 16-byte reads (eight 4-byte ones were 4-way conflicts)
		const float *srow = &sm.scale[row0 / BR][i * 128 + lc * 8];
		*reinterpret_cast<float4 *>(&sc8[0]) = *reinterpret_cast<const float4 *>(srow);
		*reinterpret_cast<float4 *>(&sc8[4]) = *reinterpret_cast<const float4 *>(srow + 4);
#pragma unroll
		for (int k = 0; k < 8; k++) {
			const int cc = lc * 8 + k;
			const float sc = sc8[k];
			uint32_t w[NS / 2]; // two codes each, row order
#pragma unroll
			for (int h = 0; h < NS / 2; h++)
				w[h] = tg_fp8x2<FMT>(y[i][2 * h][k] * sc, y[i][2 * h + 1][k] * sc);
			uint8_t *dst = &sm.qt[i][cc][(((row0 >> 4) ^ ((cc >> 3) & 7)) << 4) | (row0 & 15)];
			if constexpr (NS == 2)
				*reinterpret_cast<uint16_t *>(dst) = (uint16_t)w[0];
			else if constexpr (NS == 4)
				*reinterpret_cast<uint32_t *>(dst) = w[0] | w[1] << 16;
			else
				*reinterpret_cast<uint2 *>(dst) = make_uint2(w[0] | w[1] << 16, w[2] | w[3] << 16);
		}
	}
	__syncthreads();
	// the tiles out: NT * 1024 pieces of 16 bytes, a thread's at compile-time steps (THREADS divides 1024), the
	// rows left in the tile as a 32-bit bound; out_t's lines are padded to 16 bytes (TG_PITCH), so every piece is
	// one aligned store (a piece past the tensor's last row holds zero codes and fills the line's padding)
	const int left = rows - r0 < 128 ? (int)(rows - r0) : 128, part = threadIdx.x % 8;
	const long long pt = TG_PITCH(rows);
#pragma unroll
	for (int j = 0; j < NT * 1024 / THREADS; j++) {
		const int q = threadIdx.x + j * THREADS, i = q / 1024, cc = q / 8 % 128;
		const int col = c0 + i * cstep + cc, rs = part * 16;
		if (col >= c_end || rs >= left)
			continue;
		const uint8_t *src = &sm.qt[i][cc][(part ^ ((cc >> 3) & 7)) << 4];
		*reinterpret_cast<uint4 *>((uint8_t *)p.p[TG_P_OUT_T] + col * pt + r0 + rs) = *reinterpret_cast<const uint4 *>(src);
	}
	if constexpr (BR == 32 && (DEQ & 2)) {
		// the copy dequantized, from the byte tiles: 8 rows (16 bytes) a thread, 16 consecutive threads a column's 128
		// rows (256 contiguous bytes: whole sectors an instruction; a thread's 16 rows as 32 bytes wrote half-sectors)
		uint16_t *deq_t = (uint16_t *)p.p[TG_P_MX_DEQ_T];
#pragma unroll 1 // (unrolled, norm_colwise and glu_amax spilled at their 64 registers)
		for (int j = 0; j < NT * 2048 / THREADS; j++) {
			const int q = threadIdx.x + j * THREADS, i = q / 2048, cc = q / 16 % 128, g = q % 16;
			const int col = c0 + i * cstep + cc, rs = g * 8;
			if (col >= c_end || rs >= left)
				continue;
			const uint2 v = *reinterpret_cast<const uint2 *>(&sm.qt[i][cc][(((g >> 1) ^ ((cc >> 3) & 7)) << 4) | ((g & 1) << 3)]);
			const uint32_t w[2] = {v.x, v.y};
			uint32_t o[4];
			tg_mx_deq<FMT, 8>(w, tg_e8m0_deq_of_rcp(sm.scale[rs / 32][i * 128 + cc]), o);
			*reinterpret_cast<uint4 *>(deq_t + col * pt + r0 + rs) = make_uint4(o[0], o[1], o[2], o[3]);
		}
	}
	__syncthreads(); // sm is rewritten by the next call
}
#endif
