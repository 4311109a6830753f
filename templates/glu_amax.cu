// glu_amax.cu: gated linear units (SwiGLU family) fused with amax and quantization.
// tegen-slots: TG_KERNEL TG_IN_DTYPE TG_OUT_DTYPE TG_FMT TG_RECIPE TG_ROWWISE TG_COLWISE TG_VEC TG_THREADS TG_ROWS_PER_CTA TG_COLS TG_ACT TG_ALPHA TG_LIMIT TG_EPS_SCALE TG_POW2 TG_MARGIN TG_SR TG_SEED TG_DEQ
//
// in [rows][2*cols] (gate half a = in[:, :cols] first, linear half b second),
// out[rows][cols] = act(a) * b, computed in FP32 and quantized from FP32; TG_ACT 6-10
// (silu, gelu, relu, qgelu, srelu: tg_codes.h) in [rows][cols], out = act(a).
// TG_ACT: 0 swiglu silu(a)*b, 1 geglu (tanh-approximate GELU, as TE),
// 2 reglu, 3 qgeglu a*sigmoid(1.702a)*b, 4 sreglu relu(a)^2*b,
// 5 clamped_swiglu (GPT-OSS: a <= TG_LIMIT, |b| <= TG_LIMIT,
// a*sigmoid(TG_ALPHA*a)*(b+1)). Recipes: 0 high precision (TG_OUT_DTYPE),
// 1 delayed, 2 current cast pass, 3 current amax pass (writes only AMAX),
// 4 block1x128 (rowwise only), 6 mxfp8, 7 NVFP4 cast pass (rowwise only, after a
// recipe-3 amax pass; TG_SR / TG_SEED: stochastic rounding). Columnwise copies:
// recipes 1, 2, 6. TG_DEQ (MXFP8): bit 0 the rowwise copy also dequantized to BF16 at p[TG_P_MX_DEQ]
// [rows][cols], bit 1 the columnwise one at p[TG_P_MX_DEQ_T] [cols][rows] (the emulated GEMM's operands).
//
// Launch: block (TG_THREADS,1,1), grid.x = min(ceil(rows / TG_ROWS_PER_CTA), cap) (tile path: times its
// column slices, GL_NS; block tile path: times ceil(TG_COLS / 128)); any grid.x >= 1 is correct. n[0] = rows;
// TG_COLS = output columns.
//
// Row path: TG_THREADS/TG_ROWS_PER_CTA threads per row, each loading all its
// vectors (a and b, 16 bytes each) before the math, so that many loads are in
// flight. Tile path (TG_COLWISE): TG_ROWS_PER_CTA rows (multiple of 32) by
// TG_THREADS*TG_VEC/TG_ROWS_PER_CTA columns per step, staged in shared memory for
// the transposed copy (a per-tensor copy's codes as bytes, GL_BYTES; else FP32).
// Block tile path (TG_COLWISE with recipe 4): tiles of 128 rows x 128 columns, the
// values kept in registers (below).
#include "tg_formats.h"
#include "tg_recipe.h"
#include "tg_kernel.h"
#include "tg_rowvec.h" // raw vectors, loads/stores, FP8 stores, reductions, per-tensor scale
#include "tg_glu.h"    // act(a) * b

#if TG_RECIPE != TG_RECIPE_NONE && TG_RECIPE != TG_RECIPE_DELAYED && TG_RECIPE != TG_RECIPE_CURRENT_CAST && TG_RECIPE != TG_RECIPE_CURRENT_AMAX && TG_RECIPE != TG_RECIPE_BLOCK1X128 && TG_RECIPE != TG_RECIPE_MXFP8 && TG_RECIPE != TG_RECIPE_NVFP4
#error "glu_amax.cu: unsupported TG_RECIPE (supported: 0 none, 1 delayed, 2 current cast, 3 current amax, 4 block1x128, 6 mxfp8, 7 nvfp4 cast)"
#endif
#if TG_COLWISE && TG_RECIPE == TG_RECIPE_NVFP4
#error "glu_amax.cu: an NVFP4 columnwise copy is not written here (the planner runs such an op unfused)"
#endif
#if TG_COLWISE && TG_RECIPE == TG_RECIPE_NONE
#error "glu_amax.cu: a columnwise copy needs a quantized recipe (TG_RECIPE != TG_RECIPE_NONE)"
#endif
#if TG_COLWISE && TG_RECIPE == TG_RECIPE_BLOCK1X128 && (TG_ROWS_PER_CTA != 128 || TG_VEC != 8)
#error "glu_amax.cu: a columnwise block1x128 copy takes the block tile path: TG_ROWS_PER_CTA 128, TG_VEC 8"
#endif
#if !TG_ROWWISE && !TG_COLWISE && TG_RECIPE != TG_RECIPE_CURRENT_AMAX
#error "glu_amax.cu: neither TG_ROWWISE nor TG_COLWISE set"
#endif
#if TG_DEQ && (TG_RECIPE != TG_RECIPE_MXFP8 || ((TG_DEQ & 1) && !TG_ROWWISE) || ((TG_DEQ & 2) && !TG_COLWISE) || TG_DEQ > 3)
#error "glu_amax.cu: TG_DEQ dequantizes the MXFP8 copies the kernel writes (bit 0 rowwise, bit 1 columnwise)"
#endif
#if TG_ACT < TG_ACT_SWIGLU || TG_ACT > TG_ACT_SRELU
#error "glu_amax.cu: unknown TG_ACT"
#endif

#define GL_CAT2(a, b) a##b
#define GL_CAT(a, b) GL_CAT2(a, b)
namespace GL_CAT(gl_ns_, TG_KERNEL) {

constexpr int gl_isz = TG_IN_DTYPE == TG_DTYPE_F32 ? 4 : 2;
constexpr int gl_osz = TG_RECIPE == TG_RECIPE_NONE ? (TG_OUT_DTYPE == TG_DTYPE_F32 ? 4 : 2) : 1;
constexpr int GL_VEC = TG_VEC;
constexpr int GL_COLS = TG_COLS;
constexpr int GL_NVEC = GL_COLS / GL_VEC;
constexpr bool GL_GATED = TG_ACT_GATED(TG_ACT);           // silu, gelu, ...: no linear half (b = 1)
constexpr int GL_IN_NVEC = GL_GATED ? 2 * GL_NVEC : GL_NVEC; // input vectors a row

static_assert(GL_COLS % GL_VEC == 0, "TG_VEC must divide TG_COLS");
static_assert(GL_VEC * gl_isz <= 32 && GL_VEC * gl_isz >= 4, "input vector must be 4..32 bytes");
static_assert(GL_VEC * gl_osz >= 2 && GL_VEC * gl_osz <= 32, "output vector must be 2..32 bytes");
static_assert((GL_VEC & (GL_VEC - 1)) == 0 && GL_VEC >= 2, "TG_VEC must be a power of two >= 2");
static_assert(TG_THREADS % 32 == 0 && TG_THREADS <= 1024, "TG_THREADS must be a multiple of 32, <= 1024");
static_assert(TG_THREADS % TG_ROWS_PER_CTA == 0, "TG_ROWS_PER_CTA must divide TG_THREADS");

// The rowwise store (tg_rowvec.h) with this kernel's slots.
template <int G>
__device__ __forceinline__ void gl_emit_row(const TgParams &p, long long rows, long long r, int c,
                                            const float (&y)[GL_VEC], bool valid, float s)
{
	tg_emit_row<TG_FMT, TG_RECIPE, TG_OUT_DTYPE, G, GL_VEC, GL_COLS, TG_SR, TG_DEQ>(p, rows, r, c, y, valid, s, TG_EPS_SCALE, TG_POW2,
		TG_SEED);
}

// Lanes per scale block for the rowwise output.
constexpr int gl_group = TG_RECIPE == TG_RECIPE_BLOCK1X128 ? 128 / GL_VEC : TG_RECIPE == TG_RECIPE_MXFP8 ? 32 / GL_VEC : TG_RECIPE == TG_RECIPE_NVFP4 ? 16 / GL_VEC : 1;
static_assert(gl_group >= 1 && gl_group <= 32, "block scaling: TG_VEC too small for one block per <= 32 lanes");

__device__ __forceinline__ void gl_compute(const float (&a)[GL_VEC], const float (&b)[GL_VEC], float (&y)[GL_VEC])
{
	constexpr bool dbl = TG_RECIPE == TG_RECIPE_NONE && TG_OUT_DTYPE != TG_DTYPE_BF16; // FP32 and FP16 outputs
#pragma unroll
	for (int k = 0; k < GL_VEC; k++)
		y[k] = dbl ? tg_glu<TG_ACT, double>(a[k], b[k], (float)(TG_ALPHA), (float)(TG_LIMIT))
		           : tg_glu<TG_ACT, float>(a[k], b[k], (float)(TG_ALPHA), (float)(TG_LIMIT));
}

template <int DT, int N>
__device__ __forceinline__ void gl_unpack(const tg_raw<N * (DT == TG_DTYPE_F32 ? 4 : 2)> &r, float (&f)[N])
{
#pragma unroll
	for (int k = 0; k < N * (DT == TG_DTYPE_F32 ? 4 : 2) / 4; k++) {
		if (DT == TG_DTYPE_F32) {
			f[k] = tg_u2f(r.w[k]);
		} else {
			f[2 * k] = tg_h2f(r.w[k] & 0xFFFFu, DT);
			f[2 * k + 1] = tg_h2f(r.w[k] >> 16, DT);
		}
	}
}

constexpr int GL_IVB = GL_VEC * gl_isz; // bytes per input vector

// the block tile path: a columnwise 1x128 copy, or an MXFP8 one at 128 rows a CTA (the planner's choice)
#define GL_BLOCK_TILE (TG_COLWISE && (TG_RECIPE == TG_RECIPE_BLOCK1X128 || (TG_RECIPE == TG_RECIPE_MXFP8 && TG_ROWS_PER_CTA == 128)))
#define GL_TILE (TG_COLWISE && TG_RECIPE != TG_RECIPE_CURRENT_AMAX && !GL_BLOCK_TILE)

#if !GL_TILE && !GL_BLOCK_TILE
/* ---------------- row path ---------------- */
constexpr int GL_TPR = TG_THREADS / TG_ROWS_PER_CTA;
constexpr int GL_NJ = (GL_NVEC + GL_TPR - 1) / GL_TPR;
static_assert(GL_TPR % gl_group == 0, "threads per row must be a multiple of the lanes per scale block");
static_assert(GL_TPR % 32 == 0 || (32 % GL_TPR == 0), "threads per row: a multiple of 32 or a divisor of 32");

__device__ __forceinline__ void gl_row_path(const TgParams &p)
{
	__shared__ float ared[32];
	const long long rows = p.n[0];
	const int slot = threadIdx.x / GL_TPR, t = threadIdx.x % GL_TPR;
	float s = 1.0f;
	if (TG_RECIPE == TG_RECIPE_DELAYED || TG_RECIPE == TG_RECIPE_CURRENT_CAST || TG_RECIPE == TG_RECIPE_NVFP4)
		s = tg_tensor_scale<TG_RECIPE, TG_FMT, TG_POW2>(p, TG_EPS_SCALE);
	float amax = 0.0f;
	const tg_raw<GL_IVB> *in = reinterpret_cast<const tg_raw<GL_IVB> *>(p.p[TG_P_IN]);
	for (long long rb = (long long)blockIdx.x * TG_ROWS_PER_CTA; rb < rows; rb += (long long)gridDim.x * TG_ROWS_PER_CTA) {
		const long long r = rb + slot;
		const bool rv = r < rows;
		tg_raw<GL_IVB> ra[GL_NJ], rb_[GL_NJ];
#pragma unroll
		for (int j = 0; j < GL_NJ; j++) {
			int v = j * GL_TPR + t;
			if (rv && (GL_NVEC % GL_TPR == 0 || v < GL_NVEC)) {
				ra[j] = in[r * GL_IN_NVEC + v];
				rb_[j] = GL_GATED ? in[r * (2 * GL_NVEC) + GL_NVEC + v] : ra[j]; // (b unused ungated)
			} else {
#pragma unroll
				for (int k = 0; k < GL_IVB / 4; k++)
					ra[j].w[k] = rb_[j].w[k] = 0u;
			}
		}
#pragma unroll
		for (int j = 0; j < GL_NJ; j++) {
			int v = j * GL_TPR + t;
			bool ok = rv && (GL_NVEC % GL_TPR == 0 || v < GL_NVEC);
			float a[GL_VEC], b[GL_VEC], y[GL_VEC];
			gl_unpack<TG_IN_DTYPE, GL_VEC>(ra[j], a);
			gl_unpack<TG_IN_DTYPE, GL_VEC>(rb_[j], b);
			gl_compute(a, b, y);
			if (ok) {
#pragma unroll
				for (int k = 0; k < GL_VEC; k++)
					amax = tg_absmax(amax, y[k]);
			}
			if (TG_RECIPE != TG_RECIPE_CURRENT_AMAX && TG_ROWWISE)
				gl_emit_row<gl_group>(p, rows, r, v * GL_VEC, y, ok, s);
		}
	}
	if (TG_RECIPE == TG_RECIPE_DELAYED || TG_RECIPE == TG_RECIPE_CURRENT_AMAX) {
		float m = tg_cta_max<TG_THREADS>(amax, ared);
		if (threadIdx.x == 0)
			tg_red_max((float *)p.p[TG_P_AMAX], m);
	}
}
#elif GL_TILE
/* ---------------- tile path (columnwise) ---------------- */
// A per-tensor FP8 copy's columnwise bytes are its rowwise ones transposed: with 8-element vectors and 32-row tiles
// (GL_BYTES) a step's codes go into a byte tile (1 byte an element in shared memory, each value quantized once) and
// its columns leave by 4 x 4 byte transposes, as dglu.cu's staged path does, instead of an FP32 tile quantized
// again a column at a time (tg_colwise_store). Unit u of a step: rows 4 (u % 8) .. + 3, columns 4 (u / 8) .. + 3, so
// the 8 lanes of a word column cover its 32 rows (32 bytes of each of 4 column lines a store). H200, 8192 tokens, us
// alone, FP32 tile -> byte tile (t512v8r32, two rounds each; forty-fourth session, bench/glu_pertensor.yaml): SwiGLU
// 8B current 211.1-211.6 -> 185.7-185.8 (80 -> 91% of a copy), delayed 212.7-213.8 -> 187.2-187.4, 70B current
// 411.9-412.3 -> 368.3 (90%); the GELU at 16384 columns 312.2-312.5 -> 277.5-277.7 (its math bounds it: 46%).
#define GL_BYTES ((TG_RECIPE == TG_RECIPE_DELAYED || TG_RECIPE == TG_RECIPE_CURRENT_CAST) && TG_VEC == 8 && \
	(TG_ROWS_PER_CTA == 32 || TG_ROWS_PER_CTA % 32 != 0) /* GL_R 32 */ && TG_THREADS >= 64 && (TG_THREADS & (TG_THREADS - 1)) == 0)
// rows per tile: TG_ROWS_PER_CTA when a multiple of 32, else 32 (still correct for any grid)
constexpr int GL_R = TG_ROWS_PER_CTA % 32 == 0 ? TG_ROWS_PER_CTA : 32;
constexpr int GL_VPR = TG_THREADS / GL_R;
constexpr int GL_CW = GL_VPR * GL_VEC;
#if !GL_BYTES // (below: the FP32 tile's segment, pitch and 16-byte stores)
constexpr int GL_SEG = TG_RECIPE == TG_RECIPE_MXFP8 ? 32 : 16;
constexpr int GL_PITCH = GL_CW + 4;
struct alignas(16) gl_f4 { float a[4]; };
#endif
// Work items: a tile of GL_R rows by a slice of GL_SLICE_STEPS steps (GL_SW columns; the last slice of a row may
// be shorter), item i = (row tile i / GL_NS, slice i % GL_NS); the planner launches ceil(rows / GL_R) * GL_NS
// CTAs (grid_cols GL_SW), so a short tensor still fills the GPU (at 993 x 16384 a CTA a row tile took 690 us,
// 32 CTAs). Any grid.x >= 1 is correct (grid-stride over items).
constexpr int GL_SLICE_STEPS = 16;
constexpr int GL_SW = GL_CW * GL_SLICE_STEPS;
constexpr int GL_NS = (GL_COLS + GL_SW - 1) / GL_SW;
static_assert(GL_VEC % 4 == 0, "columnwise: TG_VEC must be a multiple of 4");
static_assert(GL_VPR % gl_group == 0, "columnwise: chunk row must hold whole scale blocks");

#if GL_BYTES
constexpr int GL_BW = GL_CW / 4;                           // words of a byte tile row (a power of two, >= 4)
constexpr int GL_BSW = GL_BW / 4 - 1 < 7 ? GL_BW / 4 - 1 : 7; // the row bits a word column is XORed with
// Word (r, w) of the byte tile, w's bits 2-4 XORed with r's bits 2-4 (as many as a row has): the column pass's 8 row
// groups of a word column read different banks (at 32 words a row; 2-way at 16), and the 8-byte row writes stay whole
// (bit 0 is kept).
__device__ __forceinline__ int gl_word(int r, int w) { return r * GL_BW + (w ^ (((r >> 2) & GL_BSW) << 2)); }

// The step's byte tile bt (codes of rows r0 .., gate-half columns c0 ..) to the columnwise copy [GL_COLS][pitch]
// (a word past rows fills the line's padding); the caller synchronizes before and after.
__device__ __forceinline__ void gl_colwise_bytes(const TgParams &p, const uint32_t *bt, long long r0, int c0, long long rows)
{
	static_assert(GL_BW % 4 == 0 && GL_BW >= 4, "GL_BYTES: whole 4-column units");
	const long long pt = TG_PITCH(rows);
	for (int u = threadIdx.x; u < 8 * GL_BW; u += TG_THREADS) {
		const int rg = 4 * (u % 8), w = u / 8, col = c0 + 4 * w;
		if (r0 + rg >= rows || (GL_COLS % GL_CW != 0 && col >= GL_COLS))
			continue;
		uint32_t t[4];
		tg_transpose_4x4_bytes(bt[gl_word(rg, w)], bt[gl_word(rg + 1, w)], bt[gl_word(rg + 2, w)], bt[gl_word(rg + 3, w)], t);
		unsigned char *dst = (unsigned char *)p.p[TG_P_OUT_T] + col * pt + r0 + rg;
#pragma unroll
		for (int j = 0; j < 4; j++, dst += pt)
			*(uint32_t *)dst = t[j];
	}
}
#endif

__device__ __forceinline__ void gl_tile_path(const TgParams &p)
{
#if GL_BYTES
	__shared__ alignas(16) uint32_t bt[GL_R * GL_BW];
#else
	__shared__ alignas(16) float ys[GL_R][GL_PITCH];
#endif
	__shared__ float ared[32];
	const long long rows = p.n[0];
	float s = 1.0f;
	if (TG_RECIPE == TG_RECIPE_DELAYED || TG_RECIPE == TG_RECIPE_CURRENT_CAST)
		s = tg_tensor_scale<TG_RECIPE, TG_FMT, TG_POW2>(p, TG_EPS_SCALE);
	float amax = 0.0f;
	const tg_raw<GL_IVB> *in = reinterpret_cast<const tg_raw<GL_IVB> *>(p.p[TG_P_IN]);
	const int tr = threadIdx.x / GL_VPR, tv = threadIdx.x % GL_VPR;
	// the raw a and b vectors at column c of row r (zeros when !ok)
	auto load = [&](long long r, int c, bool ok, tg_raw<GL_IVB> &ra, tg_raw<GL_IVB> &rb) {
#pragma unroll
		for (int k = 0; k < GL_IVB / 4; k++)
			ra.w[k] = rb.w[k] = 0u;
		if (ok) {
			ra = in[r * GL_IN_NVEC + c / GL_VEC];
			if (GL_GATED)
				rb = in[r * (2 * GL_NVEC) + GL_NVEC + c / GL_VEC];
		}
	};
	const long long items = (rows + GL_R - 1) / GL_R * GL_NS;
	for (long long it = blockIdx.x; it < items; it += gridDim.x) {
		const long long r0 = it / GL_NS * GL_R;
		const int cs = (int)(it % GL_NS) * GL_SW, ce = cs + GL_SW < GL_COLS ? cs + GL_SW : GL_COLS;
		const long long r = r0 + tr;
		const bool rv = r < rows;
		tg_raw<GL_IVB> ra, rb;
		load(r, cs + tv * GL_VEC, rv && (GL_COLS % GL_CW == 0 || cs + tv * GL_VEC < GL_COLS), ra, rb);
		for (int c0 = cs; c0 < ce; c0 += GL_CW) {
			const int c = c0 + tv * GL_VEC;
			const bool ok = rv && (GL_COLS % GL_CW == 0 || c < GL_COLS);
			// the next step's loads go out before this step's math and its (synchronizing) store
			const int cn = c + GL_CW;
			tg_raw<GL_IVB> na, nb;
			load(r, cn, rv && c0 + GL_CW < ce && (GL_COLS % GL_CW == 0 || cn < GL_COLS), na, nb);
			float a[GL_VEC], b[GL_VEC], y[GL_VEC];
			gl_unpack<TG_IN_DTYPE, GL_VEC>(ra, a);
			gl_unpack<TG_IN_DTYPE, GL_VEC>(rb, b);
			gl_compute(a, b, y);
#pragma unroll
			for (int k = 0; k < GL_VEC; k++) {
				if (!ok)
					y[k] = 0.0f;
				amax = tg_absmax(amax, y[k]);
			}
#if GL_BYTES
			const uint2 q = make_uint2(tg_fp8x4<TG_FMT>(y[0], y[1], y[2], y[3], s), tg_fp8x4<TG_FMT>(y[4], y[5], y[6], y[7], s));
			if (TG_ROWWISE && ok)
				*reinterpret_cast<uint2 *>((unsigned char *)p.p[TG_P_OUT] + r * GL_COLS + c) = q;
			*reinterpret_cast<uint2 *>(&bt[gl_word(tr, 2 * tv)]) = q;
			__syncthreads();
			gl_colwise_bytes(p, bt, r0, c0, rows);
			__syncthreads();
#else
#pragma unroll
			for (int k = 0; k < GL_VEC; k += 4) {
				gl_f4 q;
#pragma unroll
				for (int i = 0; i < 4; i++)
					q.a[i] = y[k + i];
				*reinterpret_cast<gl_f4 *>(&ys[tr][tv * GL_VEC + k]) = q;
			}
			if (TG_ROWWISE)
				gl_emit_row<gl_group>(p, rows, r, c, y, ok, s);
			tg_colwise_store<TG_FMT, TG_RECIPE, TG_THREADS, GL_COLS, GL_R, GL_CW, GL_PITCH, GL_SEG, TG_DEQ>(p, ys, r0, c0, rows,
				s);
#endif
			ra = na;
			rb = nb;
		}
	}
	if (TG_RECIPE == TG_RECIPE_DELAYED) {
		float m = tg_cta_max<TG_THREADS>(amax, ared);
		if (threadIdx.x == 0)
			tg_red_max((float *)p.p[TG_P_AMAX], m);
	}
}
#else
/* ---------------- block tile path (1x128 blocks, rowwise and columnwise) ---------------- */
// Work items: tiles of 128 rows x 128 output columns (the last ones shorter). 16 lanes a row
// (TG_VEC 8), so a row of the tile is one rowwise 1x128 block (tg_emit_row's lane group); each
// lane group holds GB_NS consecutive rows, one a step. Every thread loads all its steps' a and b
// vectors first and keeps its GB_NS vectors of y in registers; then the rowwise copy (per step,
// as the row path writes it) and the columnwise one (tg_block_colwise_tile: scales as
// cast_transpose.cu's 1x128 columnwise copy).
constexpr int GB_G = TG_THREADS / 16;
constexpr int GB_NS = 128 / GB_G;
constexpr int GB_NCT = (GL_COLS + 127) / 128;
constexpr int GB_BR = TG_RECIPE == TG_RECIPE_MXFP8 ? 32 : 128; // rows a columnwise scale block
static_assert(GL_VEC == 8 && TG_THREADS % 32 == 0 && 128 % GB_G == 0, "block columnwise: 8-element vectors, row groups dividing 128");
// Two CTAs a SM (512 threads: 64 registers, so y alone, no prefetch ring) and the tile's loads at the
// top of its iteration, where the other CTA's loads cover this one's barriers: H100, 8192 rows, 1x128
// both copies, 8192 x 2x28672 712 -> 545 us (88% of copy), 8192 x 2x14336 384 -> 276 us (87%);
// the prefetch at one CTA a SM 701 / 377 (as before), at two CTAs it spills (743 / 376) (fifteenth
// session). TEGEN_NVRTC_DEFINES can set either for an experiment.
#ifndef TG_GB_PREFETCH
#define TG_GB_PREFETCH 0
#endif
#ifndef TG_GB_MIN_CTAS
#define TG_GB_MIN_CTAS (TG_THREADS <= 512 ? 2 : 1)
#endif

__device__ __forceinline__ void gl_block_tile_path(const TgParams &p)
{
	__shared__ TgBlockTileSmem<GB_G, 1, GB_BR> sm;
	const long long rows = p.n[0];
	const tg_raw<GL_IVB> *in = reinterpret_cast<const tg_raw<GL_IVB> *>(p.p[TG_P_IN]);
	const int lr = threadIdx.x / 16, lc = threadIdx.x % 16;
	const long long items = (rows + 127) / 128 * GB_NCT;
	tg_raw<GL_IVB> ra[GB_NS], rb[GB_NS];
	// the a and b vectors of this thread's steps of item it (zeros outside the tensor)
	auto load = [&](long long it) {
		const long long r0 = it / GB_NCT * 128;
		const int c = (int)(it % GB_NCT) * 128 + lc * GL_VEC;
#pragma unroll
		for (int st = 0; st < GB_NS; st++) {
			const long long r = r0 + lr * GB_NS + st;
#pragma unroll
			for (int k = 0; k < GL_IVB / 4; k++)
				ra[st].w[k] = rb[st].w[k] = 0u;
			if (it < items && r < rows && c < GL_COLS) {
				ra[st] = in[r * GL_IN_NVEC + c / GL_VEC];
				if (GL_GATED)
					rb[st] = in[r * (2 * GL_NVEC) + GL_NVEC + c / GL_VEC];
			}
		}
	};
	if (TG_GB_PREFETCH)
		load(blockIdx.x);
	for (long long it = blockIdx.x; it < items; it += gridDim.x) {
		if (!TG_GB_PREFETCH)
			load(it);
		const long long r0 = it / GB_NCT * 128;
		const int c0 = (int)(it % GB_NCT) * 128, c = c0 + lc * GL_VEC;
		const bool cv = c < GL_COLS; // GL_COLS % GL_VEC == 0: a vector is wholly in or out
		float yt[1][GB_NS][GL_VEC];
		auto &y = yt[0];
#pragma unroll
		for (int st = 0; st < GB_NS; st++) {
			float a[GL_VEC], b[GL_VEC];
			gl_unpack<TG_IN_DTYPE, GL_VEC>(ra[st], a);
			gl_unpack<TG_IN_DTYPE, GL_VEC>(rb[st], b);
			// Rows and columns past the tensor: their zero loads give y = +0 (every act; limit > 0), so no selects
			// (H200, `tegen tune` at 8192 tokens, t512, with / without: 8B 1x128 215.4 / 207.1 us, 70B 425.0 / 411.7,
			// 8B MXFP8 343.5 / 333.2; forty-third session), but for FP32 inputs, where without them ptxas spills.
			gl_compute(a, b, y[st]);
#if TG_IN_DTYPE == TG_DTYPE_F32
			const bool ok = cv && r0 + lr * GB_NS + st < rows;
#pragma unroll
			for (int k = 0; k < GL_VEC; k++)
				if (!ok)
					y[st][k] = 0.0f;
#endif
		}
		if (TG_GB_PREFETCH)
			load(it + gridDim.x);
		if constexpr (TG_ROWWISE && TG_RECIPE == TG_RECIPE_BLOCK1X128) // the thread's rows' blocks: one call
			tg_emit_rows_block<TG_FMT, GB_NS, GB_NS, GL_COLS>(p, rows, r0 + lr * GB_NS, c, 0, y, cv, TG_EPS_SCALE, TG_POW2);
		else {
#pragma unroll
			for (int st = 0; st < GB_NS; st++) {
				const long long r = r0 + lr * GB_NS + st;
				if (TG_ROWWISE)
					gl_emit_row<gl_group>(p, rows, r, c, y[st], cv && r < rows, 1.0f);
			}
		}
		tg_block_colwise_tile<TG_FMT, TG_THREADS, GB_NS, GL_COLS, 1, GB_BR, TG_DEQ>(p, sm, yt, r0, c0, 0, GL_COLS,
			rows, TG_EPS_SCALE, TG_POW2);
	}
}
#endif

#if GL_BLOCK_TILE
extern "C" __global__ void __launch_bounds__(TG_THREADS, TG_GB_MIN_CTAS) TG_KERNEL(const TgParams p)
#else
extern "C" __global__ void __launch_bounds__(TG_THREADS) TG_KERNEL(const TgParams p)
#endif
{
#if GL_BLOCK_TILE
	gl_block_tile_path(p);
#elif GL_TILE
	gl_tile_path(p);
#else
	gl_row_path(p);
#endif
}

} // namespace
