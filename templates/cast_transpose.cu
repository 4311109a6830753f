// tegen-slots: TG_KERNEL TG_IN_DTYPE TG_OUT_DTYPE TG_FMT TG_RECIPE TG_ROWWISE TG_COLWISE TG_COLS TG_THREADS TG_TILE_ROWS TG_TILE_COLS TG_EPS_SCALE TG_POW2 TG_DBIAS TG_DEQ TG_CT_STAGE
/* cast_transpose.cu: one read of x [rows][cols], every requested output.
 *
 * Outputs (pointer slots of tg_kernel.h):
 *   OUT    rowwise copy [rows][cols]            (TG_ROWWISE = 1)
 *   OUT_T  columnwise copy, transposed [cols][rows] (TG_COLWISE = 1)
 *   SCALE / SCALE_INV / SCALE_INV_T / AMAX per recipe, layouts as tg_kernel.h.
 *   MX_DEQ (TG_DEQ 1, MXFP8): the rowwise copy also dequantized to BF16 [rows][cols] (the emulated GEMM's
 *          operand on a GPU without block-scaled MMA; the columnwise copy's stays with dequantize.cu:
 *          gen/plan_gemm.c's mx_writer_of says why).
 *   p[13] (TG_DBIAS = 1): the chunk partials of x's column sums (a bias gradient, stage 1 of 2:
 *          tg_backward.h's order, TG_BWD_CHUNK rows a chunk, FP32 [ceil(rows/32)][cols]; dreduce.cu
 *          sums them). Staged path only (a static_assert says so); the planner gives such a kernel a
 *          variant that takes it.
 *
 * Recipes (TG_RECIPE):
 *   0 none: high-precision cast to TG_OUT_DTYPE (0 fp32, 1 bf16, 2 fp16), and/or
 *     transpose. AMAX updated when the pointer is not NULL.
 *   1 per-tensor delayed: scale = *SCALE; q = fmt(x*scale); CTA 0 writes
 *     SCALE_INV = 1/scale; atomic max into AMAX (required).
 *   2 per-tensor current, cast pass: scale = tg_current_scale(*AMAX, fmt_max,
 *     TG_EPS_SCALE, TG_POW2); CTA 0 writes SCALE and SCALE_INV.
 *   3 per-tensor current, amax pass: atomic max into AMAX only; writes nothing
 *     else (TG_ROWWISE/TG_COLWISE ignored). This is the streaming amax kernel.
 *   4 FP8 block 1x128 (rowwise blocks along cols, columnwise along rows),
 *     tg_block_scale(amax, fmt_max, TG_EPS_SCALE, TG_POW2).
 *   5 FP8 block 128x128, one scale per 128x128 block shared by both copies.
 *   6 MXFP8: E8M0 per 32 in both directions; SCALE_INV [rows][cols/32],
 *     SCALE_INV_T [rows/32][cols] (TE's columnwise layout: stored coalesced).
 *   Recipes 0, 4, 5, 6 also atomic-max AMAX when that pointer is not NULL.
 *   FP8 outputs use TG_FMT (0 e4m3, 1 e5m2); TG_OUT_DTYPE matters only for
 *   recipe 0 (give 0 otherwise).
 *   TG_IN_DTYPE 0 fp32, 1 bf16, 2 fp16, 3 raw bytes: with 3, TG_RECIPE 0 and
 *   TG_COLWISE 1 (TG_ROWWISE 1 adds a plain copy), OUT_T = the byte transpose
 *   of IN (e.g. the columnwise copy of a per-tensor FP8 tensor from its
 *   rowwise bytes); AMAX and TG_OUT_DTYPE/TG_FMT are not used.
 *
 * Launch rule (1D grid over tiles, any grid >= 1 is correct):
 *   block  = (TG_THREADS, 1, 1), no dynamic shared memory
 *   tiles  = ceil(rows / TG_TILE_ROWS) * ceil(TG_COLS / TG_TILE_COLS),  rows = n[0]
 *   grid.x = min(tiles, cap)   (cap e.g. 8 * SM count; grid-stride over tiles)
 *   n[1] is not read (cols is TG_COLS).
 *
 * Tile constraints (static_assert): TG_COLS % 8 == 0 (% 16 on the staged path,
 * which a TG_COLS % 16 != 0 never takes); TG_TILE_COLS % 128 == 0;
 * TG_THREADS % (TG_TILE_COLS/8) == 0; TG_TILE_ROWS % (TG_THREADS/(TG_TILE_COLS/8))
 * == 0; with TG_COLWISE: TG_TILE_ROWS % 32 == 0; recipe 4 columnwise:
 * TG_TILE_ROWS % 128 == 0; recipe 5: TG_TILE_ROWS == TG_TILE_COLS == 128.
 * Paths: recipes 1, 2, 6 with TG_COLWISE from 2-byte inputs, and TG_IN_DTYPE 3,
 * take the staged path (body_stage) when its tiling holds (StageTiling: tile
 * rows % 32 == 0, the tile's 16-byte vectors and its word-column units a
 * multiple of TG_THREADS, two tile stages within 48 KiB of shared memory); the
 * byte transpose needs it. Everything else takes the shared-tile body below.
 * Recipe 3 streams the input as one flat array (body_amax): any tile slots,
 * any grid; grid = min(tiles, SMs x resident CTAs) is best.
 * Good variants (H100/H200, 16384x4096 bf16): per-tensor, current and MXFP8
 * 64x128/256 thr; byte transpose 128x128/256 thr; 1x128 and 128x128
 * 128x128/256 thr; quantize rowwise-only 64x128/512 thr (gen/plan_launch.c: pl_tile_launch).
 *
 * How (shared-tile body): each thread owns one 8-element column chunk and TG_TILE_ROWS/G
 * consecutive rows of the tile (G = threads per chunk column); it loads all
 * its 16-byte vectors first, makes the rowwise copy from registers (group
 * amax by warp shuffles), and writes the columnwise-quantized bytes into a
 * shared tile (XOR-swizzled, conflict-free); the tile then leaves transposed,
 * each thread reading 16 bytes of rows x 4/2/1 words and shuffling them with
 * prmt into 16-byte stores, two lanes per 32-byte sector of OUT_T.
 * TG_CT_STAGE (the shared-tile body from a 2-byte input; gen/plan_launch.c's pl_ct_stage_ok): the next tile's vectors
 * come by cp.async into dynamic shared memory while this tile is written, each thread's own 16-byte slots
 * ([NK][TG_THREADS]: no barrier, no registers held), and the kernel runs persistent (a CTA's next tile is the one
 * it prefetches).
 */
#include "tg_formats.h"
#include "tg_recipe.h"
#include "tg_kernel.h"

#if TG_DEQ && (TG_RECIPE != TG_RECIPE_MXFP8 || TG_DEQ != 1 || !TG_ROWWISE)
#error "cast_transpose.cu: TG_DEQ 1 dequantizes the rowwise MXFP8 copy"
#endif

#ifndef TG_CAST_TRANSPOSE_BODY
#define TG_CAST_TRANSPOSE_BODY

namespace tgct {

__device__ __forceinline__ uint4 ldg16(const void *p)
{
	uint4 v;
	asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
	             : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
	return v;
}

__device__ __forceinline__ uint2 ldg8(const void *p)
{
	uint2 v;
	asm volatile("ld.global.nc.L1::no_allocate.v2.u32 {%0,%1}, [%2];" : "=r"(v.x), "=r"(v.y) : "l"(p));
	return v;
}

/* 8 elements of input dtype DT held raw: 2-byte types in w[0..3], fp32 in w[0..7],
 * raw bytes (DT 3) in w[0..1]. */
template <int DT> struct Raw { uint32_t w[DT == TG_DTYPE_F32 ? 8 : DT == TG_DTYPE_BYTES ? 2 : 4]; };

template <int DT> __device__ __forceinline__ void load8(Raw<DT> &r, const void *p)
{
	if (DT == TG_DTYPE_BYTES) {
		uint2 a = ldg8(p);
		r.w[0] = a.x; r.w[1 % (DT == TG_DTYPE_BYTES ? 2 : 4)] = a.y;
		return;
	}
	constexpr int M = DT == TG_DTYPE_F32 ? 8 : DT == TG_DTYPE_BYTES ? 2 : 4;
	uint4 a = ldg16(p);
	r.w[0] = a.x; r.w[1 % M] = a.y; r.w[2 % M] = a.z; r.w[3 % M] = a.w;
	if (DT == TG_DTYPE_F32) {
		uint4 b = ldg16((const char *)p + 16);
		r.w[4 % (DT == TG_DTYPE_F32 ? 8 : 4)] = b.x; r.w[5 % (DT == TG_DTYPE_F32 ? 8 : 4)] = b.y;
		r.w[6 % (DT == TG_DTYPE_F32 ? 8 : 4)] = b.z; r.w[7 % (DT == TG_DTYPE_F32 ? 8 : 4)] = b.w;
	}
}

template <int DT> __device__ __forceinline__ void zero8(Raw<DT> &r)
{
#pragma unroll
	for (int i = 0; i < (DT == TG_DTYPE_F32 ? 8 : DT == TG_DTYPE_BYTES ? 2 : 4); i++)
		r.w[i] = 0;
}

template <int DT> __device__ __forceinline__ void cvt8(const Raw<DT> &r, float v[8])
{
#pragma unroll
	for (int i = 0; i < 8; i++) {
		if (DT == TG_DTYPE_F32)
			v[i] = __uint_as_float(r.w[i % (DT == TG_DTYPE_F32 ? 8 : 4)]);
		else {
			uint16_t h = (uint16_t)(i & 1 ? r.w[i / 2] >> 16 : r.w[i / 2] & 0xFFFF);
			v[i] = DT == TG_DTYPE_BF16 ? tg_bf16_to_f32(h) : tg_f16_to_f32(h);
		}
	}
}

/* cvt8 for FP8-only consumers (staged path): fp16 through the hardware cvt (exact;
 * only NaN payloads may differ, and every NaN becomes the FP8 NaN anyway). */
template <int DT> __device__ __forceinline__ void cvt8q(const Raw<DT> &r, float v[8])
{
	if (DT == TG_DTYPE_F16) {
#pragma unroll
		for (int i = 0; i < 8; i++) {
			const uint16_t h = (uint16_t)(i & 1 ? r.w[i / 2] >> 16 : r.w[i / 2] & 0xFFFF);
			asm("cvt.f32.f16 %0, %1;" : "=f"(v[i]) : "h"(h));
		}
	} else {
		cvt8<DT>(r, v);
	}
}

__device__ __forceinline__ float absmax8(const float v[8], float m)
{
#pragma unroll
	for (int i = 0; i < 8; i++)
		m = fmaxf(m, fabsf(v[i])); /* fmaxf drops NaN */
	return m;
}

/* 8 elements to FP8 (x*s), packed little-endian into 2 words. */
template <int FMT> __device__ __forceinline__ void q8(const float v[8], float s, uint32_t o[2])
{
#pragma unroll
	for (int i = 0; i < 2; i++) {
		uint32_t lo, hi;
		if (FMT == TG_FMT_E4M3) {
			lo = tg_f32x2_to_e4m3x2(v[4 * i] * s, v[4 * i + 1] * s);
			hi = tg_f32x2_to_e4m3x2(v[4 * i + 2] * s, v[4 * i + 3] * s);
		} else {
			lo = tg_f32x2_to_e5m2x2(v[4 * i] * s, v[4 * i + 1] * s);
			hi = tg_f32x2_to_e5m2x2(v[4 * i + 2] * s, v[4 * i + 3] * s);
		}
		o[i] = lo | (hi << 16);
	}
}

/* 8 elements to a high-precision dtype: 2 words per 2-byte type... up to 8 words. */
template <int OD> __device__ __forceinline__ void hp8(const float v[8], uint32_t o[8])
{
#pragma unroll
	for (int i = 0; i < 8; i++) {
		if (OD == TG_DTYPE_F32)
			o[i] = __float_as_uint(v[i]);
		else if (i < 4) {
			uint32_t a = OD == TG_DTYPE_BF16 ? tg_f32_to_bf16(v[2 * i]) : tg_f32_to_f16(v[2 * i]);
			uint32_t b = OD == TG_DTYPE_BF16 ? tg_f32_to_bf16(v[2 * i + 1]) : tg_f32_to_f16(v[2 * i + 1]);
			o[i] = a | (b << 16);
		}
	}
}

/* Store NW words (2, 4 or 8) to global or shared (generic pointer, aligned). */
template <int NW> __device__ __forceinline__ void stw(void *p, const uint32_t *o)
{
	if (NW == 2)
		*(uint2 *)p = make_uint2(o[0], o[1]);
	else {
		*(uint4 *)p = make_uint4(o[0], o[1], o[2], o[3]);
		if (NW == 8)
			*((uint4 *)p + 1) = make_uint4(o[4 % NW], o[5 % NW], o[6 % NW], o[7 % NW]);
	}
}

__device__ __forceinline__ float warp_max(float m)
{
#pragma unroll
	for (int o = 16; o > 0; o >>= 1)
		m = fmaxf(m, __shfl_xor_sync(0xFFFFFFFFu, m, o));
	return m;
}

/* Recipes 1 (delayed: *SCALE) and 2 (current: from *AMAX): the per-tensor scale; CTA 0's
 * thread 0 writes SCALE_INV (and, for current, SCALE). Other recipes: 1. */
template <int RECIPE, int POW2> __device__ __forceinline__ float tensor_scale(const TgParams &p, float fmax, float eps)
{
	const bool first = blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0 && threadIdx.x == 0;
	float scale = 1.0f;
	if (RECIPE == TG_RECIPE_DELAYED) {
		scale = *(const float *)p.p[TG_P_SCALE];
		if (first)
			*(float *)p.p[TG_P_SCALE_INV] = tg_scale_inv(scale);
	} else if (RECIPE == TG_RECIPE_CURRENT_CAST) {
		scale = tg_current_scale(*(const float *)p.p[TG_P_AMAX], fmax, eps, POW2);
		if (first) {
			*(float *)p.p[TG_P_SCALE] = scale;
			*(float *)p.p[TG_P_SCALE_INV] = tg_scale_inv(scale);
		}
	}
	return scale;
}

/* The CTA's max of every thread's m into AMAX with one atomic max (max of non-negative
 * floats = max of their bits as ints). Every thread calls it; red has >= THREADS/32 floats. */
template <int THREADS> __device__ __forceinline__ void amax_flush(const TgParams &p, float m, float *red)
{
	m = warp_max(m);
	if ((threadIdx.x & 31) == 0)
		red[threadIdx.x >> 5] = m;
	__syncthreads();
	if (threadIdx.x == 0) {
		float r = 0.0f;
#pragma unroll
		for (int i = 0; i < THREADS / 32; i++)
			r = fmaxf(r, red[i]);
		atomicMax((int *)p.p[TG_P_AMAX], __float_as_int(r));
	}
}

/* Block-wide max; every thread gets it. red has >= 32 floats. Contains two barriers. */
template <int THREADS> __device__ __forceinline__ float block_max(float m, float *red)
{
	m = warp_max(m);
	if ((threadIdx.x & 31) == 0)
		red[threadIdx.x >> 5] = m;
	__syncthreads();
	float r = 0.0f;
#pragma unroll
	for (int i = 0; i < THREADS / 32; i++)
		r = fmaxf(r, red[i]);
	__syncthreads();
	return r;
}

template <int IN_DT, int OUT_DT, int FMT, int RECIPE, int ROWW, int COLW, int COLS, int THREADS, int TR,
          int TC, int POW2, int DEQ, int STAGE>
__device__ __forceinline__ void body(const TgParams &p, const float eps)
{
	constexpr int CPR = TC / 8;            /* chunks per tile row */
	constexpr int G = THREADS / CPR;       /* thread groups along rows */
	constexpr int NK = TR / G;             /* consecutive rows per thread */
	constexpr bool AMAXONLY = RECIPE == TG_RECIPE_CURRENT_AMAX;
	constexpr bool ROW = ROWW && !AMAXONLY;
	constexpr bool COL = COLW && !AMAXONLY;
	constexpr bool PERT = RECIPE == TG_RECIPE_DELAYED || RECIPE == TG_RECIPE_CURRENT_CAST;
	constexpr int OES = RECIPE == TG_RECIPE_NONE ? (OUT_DT == TG_DTYPE_F32 ? 4 : 2) : 1; /* output element bytes */
	constexpr int OW = 2 * OES;                                   /* words per 8-element chunk */
	constexpr int P = TC * OES / 4;                               /* shared tile words per row */
	constexpr int R = 16 / OES;                                   /* rows per 16-byte column piece */
	constexpr int CBR = RECIPE == TG_RECIPE_MXFP8 ? 32 : 128;                   /* columnwise block rows (4, 6) */
	constexpr bool COLAM = COL && (RECIPE == TG_RECIPE_BLOCK1X128 || RECIPE == TG_RECIPE_MXFP8);   /* per-column block amax needed */
	constexpr int NB = TR / CBR > 0 ? TR / CBR : 1;               /* column blocks per tile */
	static_assert(COLS % 8 == 0, "TG_COLS must be a multiple of 8"); /* whole 8-element chunks */
	static_assert(TC % 128 == 0, "TG_TILE_COLS must be a multiple of 128");
	static_assert(THREADS % 32 == 0 && THREADS % CPR == 0, "TG_THREADS must be a multiple of 32 and of TG_TILE_COLS/8");
	static_assert(NK >= 1 && TR % G == 0, "TG_TILE_ROWS must be a multiple of TG_THREADS/(TG_TILE_COLS/8)");
	static_assert(!COL || TR % 32 == 0, "columnwise output needs TG_TILE_ROWS % 32 == 0");
	static_assert(!(COLAM && RECIPE == TG_RECIPE_BLOCK1X128) || TR % 128 == 0, "block1x128 columnwise needs TG_TILE_ROWS % 128 == 0");
	static_assert(!COLAM || CBR % NK == 0, "a thread's rows must stay inside one column block");
	static_assert(RECIPE != TG_RECIPE_BLOCK128X128 || (TR == 128 && TC == 128), "block128x128 needs a 128x128 tile");
	static_assert(RECIPE >= TG_RECIPE_NONE && RECIPE <= TG_RECIPE_MXFP8, "TG_RECIPE out of range");
	static_assert(DEQ == 0 || (RECIPE == TG_RECIPE_MXFP8 && DEQ == 1), "TG_DEQ 1 dequantizes the rowwise MXFP8 copy");

	__shared__ uint4 s_tile4[COL ? TR * P / 4 : 1];
	__shared__ __align__(16) float s_pam[COLAM ? G * TC : 1];   /* per-thread-group column partial amax */
	__shared__ __align__(16) float s_csc[COLAM ? NB * TC : 1];  /* column block scale multipliers */
	__shared__ float s_red[32];
	uint32_t *s_tile = (uint32_t *)s_tile4;

	const long long rows = p.n[0];
	const int tid = threadIdx.x;
	const int g = tid / CPR, cc = tid % CPR;
	constexpr int TILES_C = (COLS + TC - 1) / TC;
	const long long tiles = (rows + TR - 1) / TR * TILES_C;
	const float fmax = tg_fmt_max(FMT);
	const char *in = (const char *)p.p[TG_P_IN];
	unsigned char *out = (unsigned char *)p.p[TG_P_OUT];
	unsigned char *out_t = (unsigned char *)p.p[TG_P_OUT_T];
	constexpr int IES = IN_DT == TG_DTYPE_F32 ? 4 : 2;

	const float scale = tensor_scale<RECIPE, POW2>(p, fmax, eps);
	const bool want_amax = RECIPE == TG_RECIPE_DELAYED || RECIPE == TG_RECIPE_CURRENT_AMAX || (RECIPE != TG_RECIPE_CURRENT_CAST && p.p[TG_P_AMAX] != 0);
	float tamax = 0.0f; /* this thread's per-tensor amax */


	static_assert(!STAGE || (IES == 2 && !AMAXONLY), "TG_CT_STAGE: a 2-byte input's cast pass");
	extern __shared__ uint4 ct_raw[]; /* STAGE: [NK][THREADS], this thread's slots ct_raw[k * THREADS + tid] */
	/* STAGE: tile t's vectors into this thread's slots (zero-filled outside the tensor; none past the last tile) */
	auto issue = [&](long long t) {
		if (t < tiles) {
			const long long r0 = t / TILES_C * TR;
			const int c = (int)(t % TILES_C) * TC + cc * 8;
#pragma unroll
			for (int k = 0; k < NK; k++) {
				const long long r = r0 + g * NK + k;
				const bool ok = c < COLS && r < rows;
				tg_cp_async16(&ct_raw[k * THREADS + tid], in + (ok ? ((size_t)r * COLS + c) * IES : 0), ok);
			}
		}
		tg_cp_async_commit();
	};
	if (STAGE)
		issue(blockIdx.x);

	for (long long tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
		const long long row0 = tile / TILES_C * TR;
		const int col0 = (int)(tile % TILES_C) * TC;
		const int col = col0 + cc * 8;
		const bool colok = col < COLS;

		Raw<IN_DT> raw[NK];
		if (STAGE) {
			tg_cp_async_wait<0>(); /* this thread's own slots: no barrier */
#pragma unroll
			for (int k = 0; k < NK; k++)
				raw[k] = *reinterpret_cast<const Raw<IN_DT> *>(&ct_raw[k * THREADS + tid]);
		} else {
#pragma unroll
			for (int k = 0; k < NK; k++) {
				const long long r = row0 + g * NK + k;
				if (colok && r < rows)
					load8<IN_DT>(raw[k], in + ((size_t)r * COLS + col) * IES);
				else
					zero8<IN_DT>(raw[k]);
			}
		}

		float camax[8]; /* this thread's column amax over its NK rows (COLAM) */
#pragma unroll
		for (int j = 0; j < 8; j++)
			camax[j] = 0.0f;
		float tile_scale = 1.0f;
		if (RECIPE == TG_RECIPE_BLOCK128X128) {
			float m = 0.0f;
#pragma unroll
			for (int k = 0; k < NK; k++) {
				float v[8];
				cvt8<IN_DT>(raw[k], v);
				m = absmax8(v, m);
			}
			const float bm = block_max<THREADS>(m, s_red);
			tile_scale = tg_block_scale(bm, fmax, eps, POW2);
			if (tid == 0) {
				const long long br = row0 / 128, nbr = (rows + 127) / 128;
				const int bc = col0 / 128;
				constexpr int NBC = (COLS + 127) / 128;
				const float si = tg_scale_inv(tile_scale);
				if (ROW)
					((float *)p.p[TG_P_SCALE_INV])[br * NBC + bc] = si;
				if (COL)
					((float *)p.p[TG_P_SCALE_INV_T])[(long long)bc * nbr + br] = si;
			}
		}

		/* 1x128 rows (ROWBLK): each row block's amax over its 16 lanes, then its scale computed once, by the
		 * group's lane k for its row k (not by every lane: the division, saturation and reciprocal were 16-fold
		 * redundant), shuffled to the others in the pass below; lane k writes row k's scale_inv */
		constexpr bool ROWBLK = RECIPE == TG_RECIPE_BLOCK1X128 && ROW;
		static_assert(!ROWBLK || 16 % NK == 0, "1x128 rows: a thread's rows must divide 16 (gen/plan_launch.c's variant_legal)");
		float bs_mine = 1.0f;
		if constexpr (ROWBLK) {
			float bm_mine = 0.0f;
#pragma unroll
			for (int k = 0; k < NK; k++) {
				float v[8];
				cvt8<IN_DT>(raw[k], v);
				float bm = absmax8(v, 0.0f);
				bm = fmaxf(bm, __shfl_xor_sync(0xFFFFFFFFu, bm, 1));
				bm = fmaxf(bm, __shfl_xor_sync(0xFFFFFFFFu, bm, 2));
				bm = fmaxf(bm, __shfl_xor_sync(0xFFFFFFFFu, bm, 4));
				bm = fmaxf(bm, __shfl_xor_sync(0xFFFFFFFFu, bm, 8));
				bm_mine = (cc & 15) % NK == k ? bm : bm_mine;
			}
			bs_mine = tg_block_scale(bm_mine, fmax, eps, POW2);
			const long long r = row0 + g * NK + (cc & 15);
			if ((cc & 15) < NK && col - (cc & 15) * 8 < COLS && r < rows) /* the block's first lane inside */
				((float *)p.p[TG_P_SCALE_INV])[(long long)(col / 128) * rows + r] = tg_scale_inv(bs_mine);
		}
		/* STAGE: the next tile's vectors into the slots once a loop has consumed every raw[k] (in-order issue: the
		 * slots' loads have returned before these copies start): here after the 1x128 row scales' or the 128x128
		 * tile amax's loop, else after the rowwise pass; in flight during the rest of the tile */
		constexpr bool EARLY = ROWBLK || RECIPE == TG_RECIPE_BLOCK128X128;
		if (STAGE && EARLY)
			issue(tile + gridDim.x);

		/* rowwise pass (and per-tensor / 128x128 / none: the bytes of the shared tile) */
#pragma unroll
		for (int k = 0; k < NK; k++) {
			const int lr = g * NK + k;
			const long long r = row0 + lr;
			const bool ok = colok && r < rows;
			float v[8];
			cvt8<IN_DT>(raw[k], v);
			const float am = absmax8(v, 0.0f);
			if (want_amax)
				tamax = fmaxf(tamax, am);
			if (COLAM) {
#pragma unroll
				for (int j = 0; j < 8; j++)
					camax[j] = fmaxf(camax[j], fabsf(v[j]));
			}
			if (AMAXONLY || (!ROW && COLAM))
				continue;
			uint32_t o[8];
			float dq = 1.0f; /* MXFP8: the row block's dequantizing multiplier (DEQ bit 0) */
			if (RECIPE == TG_RECIPE_NONE) {
				hp8<OUT_DT>(v, o);
			} else {
				float s = PERT ? scale : tile_scale;
				if (ROWBLK) {
					s = __shfl_sync(0xFFFFFFFFu, bs_mine, (threadIdx.x & 16) | k);
				} else if (RECIPE == TG_RECIPE_MXFP8 && ROW) {
					float bm = am; /* 4 lanes = 32 columns */
					bm = fmaxf(bm, __shfl_xor_sync(0xFFFFFFFFu, bm, 1));
					bm = fmaxf(bm, __shfl_xor_sync(0xFFFFFFFFu, bm, 2));
					const uint8_t e = tg_e8m0_from_amax(bm, fmax);
					s = tg_e8m0_rcp(e);
					dq = tg_e8m0_deq(e);
					constexpr int NBX = (COLS + 31) / 32;
					if ((cc & 3) == 0 && ok)
						((uint8_t *)p.p[TG_P_SCALE_INV])[r * NBX + col / 32] = e;
				}
				q8<FMT>(v, s, o);
			}
			if (ROW && ok)
				stw<OW>(out + ((size_t)r * COLS + col) * OES, o);
			if constexpr (RECIPE == TG_RECIPE_MXFP8 && (DEQ & 1))
				tg_store_mx_deq<FMT, 8>((uint16_t *)p.p[TG_P_MX_DEQ] + (size_t)r * COLS + col, o, dq, ROW && ok);
			if (COL && !COLAM) {
				const int sw = ((lr / R) & 1) << 4;
				stw<OW>(&s_tile[lr * P + ((cc * OW) ^ sw)], o);
			}
		}
		if (STAGE && !EARLY)
			issue(tile + gridDim.x);
		if (AMAXONLY || !COL)
			continue;

		if (COLAM) {
			/* column block amax: partials per thread group, reduced per (block, column) */
			*(float4 *)&s_pam[g * TC + cc * 8] = make_float4(camax[0], camax[1], camax[2], camax[3]);
			*(float4 *)&s_pam[g * TC + cc * 8 + 4] = make_float4(camax[4], camax[5], camax[6], camax[7]);
			__syncthreads();
			constexpr int GB = CBR / NK; /* groups per column block */
#pragma unroll
			for (int u0 = 0; u0 < NB * TC; u0 += THREADS) {
				const int u = u0 + tid;
				if (u < NB * TC) {
					const int c = u % TC, b = u / TC;
					float m = 0.0f;
#pragma unroll
					for (int i = 0; i < (GB < G ? GB : G); i++)
						m = fmaxf(m, s_pam[(b * GB + i) * TC + c]);
					const long long rb = row0 + (long long)b * CBR; /* first row of the block */
					const int gc = col0 + c;
					float s;
					if (RECIPE == TG_RECIPE_MXFP8) {
						const uint8_t e = tg_e8m0_from_amax(m, fmax);
						s = tg_e8m0_rcp(e);
						if (gc < COLS && rb < rows)
							((uint8_t *)p.p[TG_P_SCALE_INV_T])[rb / 32 * COLS + gc] = e;
					} else {
						s = tg_block_scale(m, fmax, eps, POW2);
						if (gc < COLS && rb < rows)
							((float *)p.p[TG_P_SCALE_INV_T])[(rb / 128) * COLS + gc] = tg_scale_inv(s);
					}
					s_csc[b * TC + c] = s;
				}
			}
			__syncthreads();
			const int b = (g * NK) / CBR;
			const float4 s0 = *(const float4 *)&s_csc[b * TC + cc * 8];
			const float4 s1 = *(const float4 *)&s_csc[b * TC + cc * 8 + 4];
			const float cs[8] = {s0.x, s0.y, s0.z, s0.w, s1.x, s1.y, s1.z, s1.w};
#pragma unroll
			for (int k = 0; k < NK; k++) {
				const int lr = g * NK + k;
				float v[8];
				cvt8<IN_DT>(raw[k], v);
#pragma unroll
				for (int j = 0; j < 8; j++)
					v[j] *= cs[j];
				uint32_t o[2];
				q8<FMT>(v, 1.0f, o);
				const int sw = ((lr / R) & 1) << 4;
				stw<2>(&s_tile[lr * P + ((cc * 2) ^ sw)], o);
			}
		}
		__syncthreads();

		/* transposed store: unit = (word column w, R-row piece rg); a warp covers
		 * 16 words x 2 pieces so each column gets 32 contiguous bytes */
		{
			constexpr int PAIRS = TR / (2 * R) > 0 ? TR / (2 * R) : 1; /* row-piece pairs per tile */
			constexpr int NU = P * TR / R;              /* units per tile */
			constexpr int CPW = 4 / OES;                /* columns per word */
			const long long pt = TG_PITCH(rows); /* out_t's line length: 16-byte pieces at any row count */
#pragma unroll
			for (int u0 = 0; u0 < NU; u0 += THREADS) {
				const int u = u0 + tid;
				if (NU % THREADS != 0 && u >= NU)
					break;
				const int lane = u & 31, W = u >> 5;
				const int rp = W % PAIRS, wb = W / PAIRS;
				const int w = wb * 16 + (lane & 15);
				const int rg = rp * 2 + (lane >> 4);
				const int sw = (rg & 1) << 4;
				uint32_t x[R];
#pragma unroll
				for (int i = 0; i < R; i++)
					x[i] = s_tile[(rg * R + i) * P + (w ^ sw)];
				uint32_t y[CPW][4];
				if (OES == 1) {
#pragma unroll
					for (int q = 0; q < 4; q++) {
						uint32_t t[4];
						tg_transpose_4x4_bytes(x[(4 * q) % R], x[(4 * q + 1) % R], x[(4 * q + 2) % R], x[(4 * q + 3) % R], t);
#pragma unroll
						for (int j = 0; j < 4; j++)
							y[j % CPW][q] = t[j];
					}
				} else if (OES == 2) {
#pragma unroll
					for (int q = 0; q < 4; q++) {
						y[0][q] = __byte_perm(x[(2 * q) % R], x[(2 * q + 1) % R], 0x5410);
						y[1 % CPW][q] = __byte_perm(x[(2 * q) % R], x[(2 * q + 1) % R], 0x7632);
					}
				} else {
#pragma unroll
					for (int q = 0; q < 4; q++)
						y[0][q] = x[q % R];
				}
				const long long r = row0 + rg * R;
#pragma unroll
				for (int j = 0; j < CPW; j++) {
					const int c = col0 + w * CPW + j;
					if (c < COLS && r < rows) /* a piece past rows fills the line's padding */
						*(uint4 *)(out_t + ((size_t)c * pt + r) * OES) = make_uint4(y[j][0], y[j][1], y[j][2], y[j][3]);
				}
			}
		}
		__syncthreads(); /* the shared tile is rewritten by the next tile */
	}

	if (want_amax)
		amax_flush<THREADS>(p, tamax, s_red);
}


/* ---------------- staged path ----------------
 * Per-tensor FP8 (recipes 1, 2) and MXFP8 (6) from 2-byte inputs with a
 * columnwise copy, and the raw byte transpose (TG_IN_DTYPE 3). A persistent CTA
 * walks tiles grid-stride; each tile (TR x TC input elements) arrives in shared
 * memory by cp.async (16 bytes a thread, zero-filled past the edges) NS-1 tiles
 * ahead of its use, so loads are always in flight and cost no registers. Then,
 * from the same shared tile and with no barrier between them:
 *   row pass:    thread = 16-byte vectors of a row (VPT of them); MXFP8 block
 *                amax over 4 lanes (shuffles), rowwise bytes stored 8 (or 16)
 *                at a time, a row's 4 scale bytes gathered into one word;
 *   column pass: thread = one shared word column (CW = 2 columns of a 2-byte
 *                input, 4 of bytes) x 16 rows; the lane pair (h = 0, 1) covers
 *                a 32-row block, so the MXFP8 column amax is one shuffle and each
 *                column leaves as two 16-byte stores that fill one 32-byte sector.
 * Shared words of row r are XOR-swizzled by ((r >> 4) & 1) << 4: the row pass's
 * 16-byte vectors stay whole and the column pass's two half-warps (rows r and
 * r + 16) hit different banks. Two barriers per tile (data landed; stage free). */
template <int IN_DT, int TR, int TC, int THREADS> struct StageTiling {
	static constexpr int IES = IN_DT == TG_DTYPE_BYTES ? 1 : 2;
	static constexpr int PW = TC * IES / 4;   /* shared words per tile row */
	static constexpr int VPR = TC * IES / 16; /* 16-byte vectors per tile row */
	static constexpr int NS = 3 * TR * PW * 4 <= 48 * 1024 ? 3 : 2; /* pipeline stages (static shared limit) */
	static constexpr bool ok = (IN_DT == TG_DTYPE_BF16 || IN_DT == TG_DTYPE_F16 || IN_DT == TG_DTYPE_BYTES) && TC % 128 == 0 && TR % 32 == 0 &&
	                           THREADS % 32 == 0 && (TR * VPR) % THREADS == 0 && (PW * 2 * (TR / 32)) % THREADS == 0 &&
	                           2 * TR * PW * 4 <= 48 * 1024;
};

/* Where 16-byte vector v of thread tid sits in a tile at (r0, c0) of the staged
 * path: tile row r, vector column vc, global (gr, gc), ok = inside the tensor,
 * word = its first shared word in the XOR-swizzled tile (row pitch PW words). */
struct StageVec {
	int r, vc, gc, word;
	long long gr;
	bool ok;
};
template <int THREADS, int VPR, int PW, int IES, int COLS>
__device__ __forceinline__ StageVec stage_vec(int v, int tid, long long r0, int c0, long long rows)
{
	StageVec q;
	const int i = v * THREADS + tid;
	q.r = i / VPR;
	q.vc = i % VPR;
	q.gr = r0 + q.r;
	q.gc = c0 + q.vc * (16 / IES);
	q.ok = q.gr < rows && q.gc < COLS;
	q.word = q.r * PW + ((q.vc * 4) ^ (((q.r >> 4) & 1) << 4));
	return q;
}

/* The two 2-byte elements of word w (low half first) as floats, as cvt8q does. */
template <int DT> __device__ __forceinline__ void cvt2q(uint32_t w, float &lo, float &hi)
{
	if (DT == TG_DTYPE_F16) {
		asm("cvt.f32.f16 %0, %1;" : "=f"(lo) : "h"((uint16_t)(w & 0xFFFF)));
		asm("cvt.f32.f16 %0, %1;" : "=f"(hi) : "h"((uint16_t)(w >> 16)));
	} else {
		lo = tg_bf16_to_f32((uint16_t)(w & 0xFFFF));
		hi = tg_bf16_to_f32((uint16_t)(w >> 16));
	}
}

/* 4 FP8 bytes of column-consecutive values v[0..3] * s, little-endian. */
template <int FMT> __device__ __forceinline__ uint32_t q4(const float *v, float s)
{
	uint32_t lo, hi;
	if (FMT == TG_FMT_E4M3) {
		lo = tg_f32x2_to_e4m3x2(v[0] * s, v[1] * s);
		hi = tg_f32x2_to_e4m3x2(v[2] * s, v[3] * s);
	} else {
		lo = tg_f32x2_to_e5m2x2(v[0] * s, v[1] * s);
		hi = tg_f32x2_to_e5m2x2(v[2] * s, v[3] * s);
	}
	return lo | (hi << 16);
}

#define CT_P_DBIAS_PART 13 /* = tg_backward.h's TG_PB_DW: the dbias chunk partials */
template <int IN_DT, int FMT, int RECIPE, int ROWW, int COLS, int THREADS, int TR, int TC, int POW2, int DBIAS, int DEQ>
__device__ __forceinline__ void body_stage(const TgParams &p, const float eps)
{
	typedef StageTiling<IN_DT, TR, TC, THREADS> ST;
	constexpr int IES = ST::IES, PW = ST::PW, VPR = ST::VPR, NS = ST::NS;
	constexpr int VPT = TR * VPR / THREADS;       /* row-pass vectors per thread */
	constexpr int NU = PW * 2 * (TR / 32);        /* column-pass units per tile */
	constexpr int UPT = NU / THREADS;             /* column-pass units per thread */
	constexpr bool RAW = IN_DT == TG_DTYPE_BYTES;
	constexpr bool MX = RECIPE == TG_RECIPE_MXFP8;
	constexpr bool ROW = ROWW != 0;
	constexpr int NBX = (COLS + 31) / 32;
	constexpr int TILES_C = (COLS + TC - 1) / TC;
	static_assert(COLS % 16 == 0, "TG_COLS must be a multiple of 16");
	static_assert(ST::ok, "staged path: TG_TILE_COLS % 128 == 0, TG_TILE_ROWS % 32 == 0, the tile's 16-byte vectors "
	                      "and word-column units a multiple of TG_THREADS, two stages within 48 KiB");
	static_assert(RAW ? RECIPE == TG_RECIPE_NONE : (RECIPE == TG_RECIPE_DELAYED || RECIPE == TG_RECIPE_CURRENT_CAST || RECIPE == TG_RECIPE_MXFP8), "staged path: recipes 1, 2, 6 or raw bytes");
	static_assert(DEQ == 0 || (MX && DEQ == 1), "TG_DEQ 1 dequantizes the rowwise MXFP8 copy");

	__shared__ __align__(16) uint32_t s_in[NS][TR * PW];
	float *s_red = (float *)&s_in[0][0]; /* used after the tile loop only */

	const long long rows = p.n[0];
	const int tid = threadIdx.x, lane = tid & 31;
	const long long tiles = (rows + TR - 1) / TR * TILES_C;
	const float fmax = tg_fmt_max(FMT);
	const char *in = (const char *)p.p[TG_P_IN];
	unsigned char *out = (unsigned char *)p.p[TG_P_OUT];
	unsigned char *out_t = (unsigned char *)p.p[TG_P_OUT_T];
	const long long nrb = (rows + 31) / 32;

	const float scale = tensor_scale<RECIPE, POW2>(p, fmax, eps);
	const bool want_amax = !RAW && (RECIPE == TG_RECIPE_DELAYED || (RECIPE == TG_RECIPE_MXFP8 && p.p[TG_P_AMAX] != 0));
	float tamax = 0.0f;

	/* issue tile t's cp.async into stage st (nothing past the last tile) and commit */
	auto issue = [&](long long t, int st) {
		if (t < tiles) {
			const long long r0 = t / TILES_C * TR;
			const int c0 = (int)(t % TILES_C) * TC;
#pragma unroll
			for (int v = 0; v < VPT; v++) {
				const StageVec q = stage_vec<THREADS, VPR, PW, IES, COLS>(v, tid, r0, c0, rows);
				if (r0 + (q.r & ~31) >= rows)
					continue; /* a 32-row block wholly past the end: nobody reads it */
				const char *src = q.ok ? in + ((size_t)q.gr * COLS + q.gc) * IES : in;
				tg_cp_async16(&s_in[st][q.word], src, q.ok);
			}
		}
		tg_cp_async_commit();
	};
#pragma unroll
	for (int s = 0; s < NS - 1; s++)
		issue(blockIdx.x + (long long)s * gridDim.x, s);

	int st = 0;
	for (long long tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
		issue(tile + (long long)(NS - 1) * gridDim.x, (st + NS - 1) % NS);
		tg_cp_async_wait<NS - 1>();
		__syncthreads();
		const uint32_t *s = s_in[st];
		const long long row0 = tile / TILES_C * TR;
		const int col0 = (int)(tile % TILES_C) * TC;

		/* row pass */
		if (ROW) {
#pragma unroll
			for (int v = 0; v < VPT; v++) {
				const StageVec q = stage_vec<THREADS, VPR, PW, IES, COLS>(v, tid, row0, col0, rows);
				const int vc = q.vc, gc = q.gc;
				const long long gr = q.gr;
				const bool ok = q.ok;
				if (row0 + (v * THREADS + (tid & ~31)) / VPR >= rows)
					continue; /* the warp's rows are all past the end (warp-uniform: shuffles stay whole) */
				const uint4 x = *(const uint4 *)&s[q.word];
				if constexpr (RAW) {
					if (ROW && ok)
						*(uint4 *)(out + (size_t)gr * COLS + gc) = x;
					continue;
				} else {
					Raw<IN_DT> rw;
					rw.w[0] = x.x; rw.w[1 % 4] = x.y; rw.w[2 % 4] = x.z; rw.w[3 % 4] = x.w;
					float f[8];
					cvt8q<IN_DT>(rw, f);
					const float am = absmax8(f, 0.0f);
					if (want_amax)
						tamax = fmaxf(tamax, am);
					float sc = scale, dq = 1.0f;
					if (MX) {
						float bm = fmaxf(am, __shfl_xor_sync(0xFFFFFFFFu, am, 1));
						bm = fmaxf(bm, __shfl_xor_sync(0xFFFFFFFFu, bm, 2));
						const uint32_t e = tg_e8m0_from_amax(bm, fmax);
						sc = tg_e8m0_rcp((uint8_t)e);
						dq = tg_e8m0_deq((uint8_t)e);
						/* lanes vc % 16 == 0 gather the row's next 4 block scales into one word */
						const uint32_t e1 = __shfl_down_sync(0xFFFFFFFFu, e, 4);
						const uint32_t e2 = __shfl_down_sync(0xFFFFFFFFu, e, 8);
						const uint32_t e3 = __shfl_down_sync(0xFFFFFFFFu, e, 12);
						uint8_t *sd = (uint8_t *)p.p[TG_P_SCALE_INV] + gr * NBX + gc / 32;
						if (NBX % 4 == 0 && col0 + (vc / 16) * 128 + 128 <= COLS) {
							if (vc % 16 == 0 && gr < rows)
								*(uint32_t *)sd = e | (e1 << 8) | (e2 << 16) | (e3 << 24);
						} else if (vc % 4 == 0 && ok) {
							*sd = (uint8_t)e;
						}
					}
					uint32_t o[2];
					q8<FMT>(f, sc, o);
					if (ok)
						*(uint2 *)(out + (size_t)gr * COLS + gc) = make_uint2(o[0], o[1]);
					if constexpr (MX && (DEQ & 1))
						tg_store_mx_deq<FMT, 8>((uint16_t *)p.p[TG_P_MX_DEQ] + (size_t)gr * COLS + gc, o, dq, ok);
				}
			}
		}

		/* column pass: unit u -> word column wc, half h, 32-row block rb; each unit's 16-byte pieces stored whole
		 * (out_t's lines are padded to 16 bytes: aligned at any row count) */
#pragma unroll
		for (int k = 0; k < UPT; k++) {
			const int u = k * THREADS + tid, wid = u >> 5;
			const int h = lane & 1, wc = (wid % (PW / 16)) * 16 + (lane >> 1), rb = wid / (PW / 16);
			const int lr0 = rb * 32 + h * 16;
			if (row0 + rb * 32 >= rows)
				continue; /* a block wholly past the end (warp-uniform) */
			uint32_t x[16];
#pragma unroll
			for (int i = 0; i < 16; i++)
				x[i] = s[(lr0 + i) * PW + (wc ^ (h << 4))];
			const long long r = row0 + lr0;
			if constexpr (RAW) {
				uint32_t y[4][4];
#pragma unroll
				for (int q = 0; q < 4; q++) {
					uint32_t t[4];
					tg_transpose_4x4_bytes(x[4 * q], x[4 * q + 1], x[4 * q + 2], x[4 * q + 3], t);
#pragma unroll
					for (int j = 0; j < 4; j++)
						y[j][q] = t[j];
				}
#pragma unroll
				for (int j = 0; j < 4; j++) {
					const int c = col0 + wc * 4 + j;
					tg_put_col16(out_t, rows, c, r, y[j], c < COLS);
				}
			} else {
				float a[16], b[16];
#pragma unroll
				for (int i = 0; i < 16; i++)
					cvt2q<IN_DT>(x[i], a[i], b[i]);
				float sa = scale, sb = scale;
				const int c = col0 + wc * 2;
				if constexpr (DBIAS) { /* chunk rb's partials of columns c, c + 1: lane h = 0 sums rows 0-15, h = 1 goes on */
					const long long left = rows - r;     /* rows of this half inside the tensor (may be <= 0) */
					float pa = -0.0f, pb = -0.0f;
#pragma unroll
					for (int i = 0; i < 16; i++)
						if (h == 0 && i < left) {
							pa = __fadd_rn(pa, a[i]);
							pb = __fadd_rn(pb, b[i]);
						}
					pa = __shfl_xor_sync(0xFFFFFFFFu, pa, 1); /* lane h = 1 takes its neighbour's rows 0-15 */
					pb = __shfl_xor_sync(0xFFFFFFFFu, pb, 1);
#pragma unroll
					for (int i = 0; i < 16; i++)
						if (h == 1 && i < left) {
							pa = __fadd_rn(pa, a[i]);
							pb = __fadd_rn(pb, b[i]);
						}
					float *part = (float *)p.p[CT_P_DBIAS_PART] + (row0 / 32 + rb) * (long long)COLS;
					if (h == 1 && c < COLS) { /* COLS % 16 == 0: c + 1 < COLS */
						const float pv[2] = {pa, pb};
						tg_store_keep<2>(part, c, pv);
					}
				}
				if (MX || (want_amax && !ROW)) {
					float ma = 0.0f, mb = 0.0f;
#pragma unroll
					for (int i = 0; i < 16; i++) {
						ma = fmaxf(ma, fabsf(a[i]));
						mb = fmaxf(mb, fabsf(b[i]));
					}
					if (want_amax && !ROW)
						tamax = fmaxf(tamax, fmaxf(ma, mb));
					if (MX) {
						ma = fmaxf(ma, __shfl_xor_sync(0xFFFFFFFFu, ma, 1));
						mb = fmaxf(mb, __shfl_xor_sync(0xFFFFFFFFu, mb, 1));
						const uint8_t ea = tg_e8m0_from_amax(ma, fmax), eb = tg_e8m0_from_amax(mb, fmax);
						sa = tg_e8m0_rcp(ea);
						sb = tg_e8m0_rcp(eb);
						/* [rows/32][cols]: a warp's 32 lanes store 32 consecutive bytes */
						const long long sr = row0 / 32 + rb;
						if (c + h < COLS && sr < nrb)
							((uint8_t *)p.p[TG_P_SCALE_INV_T])[sr * COLS + c + h] = h ? eb : ea;
					}
				}
				uint32_t wa[4], wb[4];
#pragma unroll
				for (int q = 0; q < 4; q++) {
					wa[q] = q4<FMT>(&a[4 * q], sa);
					wb[q] = q4<FMT>(&b[4 * q], sb);
				}
				tg_put_col16(out_t, rows, c, r, wa, c < COLS);
				tg_put_col16(out_t, rows, c + 1, r, wb, c < COLS);
			}
		}
		__syncthreads(); /* stage st is refilled NS-1 tiles from now */
		st = (st + 1) % NS;
	}
	tg_cp_async_wait<0>();

	if (want_amax)
		amax_flush<THREADS>(p, tamax, s_red);
}

/* ---------------- streaming amax (recipe 3) ----------------
 * The input is one contiguous array of rows*COLS elements: each thread keeps
 * U 16-byte loads in flight per step, grid-stride over steps of
 * THREADS*U*16 bytes; no shared memory except the final block max. Any grid is
 * correct; a grid of a few CTAs per SM streams best (no CTA turnover, one
 * atomic per CTA). */
template <int IN_DT, int THREADS> __device__ __forceinline__ void body_amax(const TgParams &p, long long n)
{
	constexpr int U = 8;
	constexpr int IES = IN_DT == TG_DTYPE_F32 ? 4 : 2;
	__shared__ float s_red[32];
	const char *in = (const char *)p.p[TG_P_IN];
	const long long nv = n * IES / 16; /* COLS % 8 == 0: whole vectors */
	float m = 0.0f;
	for (long long base = (long long)blockIdx.x * THREADS * U; base < nv; base += (long long)gridDim.x * THREADS * U) {
		uint4 a[U];
#pragma unroll
		for (int u = 0; u < U; u++) {
			const long long i = base + u * THREADS + threadIdx.x;
			a[u] = i < nv ? ldg16(in + i * 16) : make_uint4(0, 0, 0, 0);
		}
#pragma unroll
		for (int u = 0; u < U; u++) {
			const uint32_t w4[4] = {a[u].x, a[u].y, a[u].z, a[u].w};
#pragma unroll
			for (int i = 0; i < 4; i++) {
				if (IN_DT == TG_DTYPE_F32) {
					m = fmaxf(m, fabsf(__uint_as_float(w4[i])));
				} else {
					const float lo = IN_DT == TG_DTYPE_BF16 ? tg_bf16_to_f32((uint16_t)(w4[i] & 0xFFFF)) : tg_f16_to_f32((uint16_t)(w4[i] & 0xFFFF));
					const float hi = IN_DT == TG_DTYPE_BF16 ? tg_bf16_to_f32((uint16_t)(w4[i] >> 16)) : tg_f16_to_f32((uint16_t)(w4[i] >> 16));
					m = fmaxf(m, fmaxf(fabsf(lo), fabsf(hi)));
				}
			}
		}
	}
	amax_flush<THREADS>(p, m, s_red);
}

/* Path choice. LEGACY (harness only, not a slot): 1 = the shared-tile body for
 * every 1- and 2-byte-element recipe (the staged path's predecessor), for side-by-side timing. */
template <int IN_DT, int OUT_DT, int FMT, int RECIPE, int ROWW, int COLW, int COLS, int THREADS, int TR, int TC,
          int POW2, int LEGACY, int DBIAS, int DEQ, int STAGE>
__device__ __forceinline__ void dispatch(const TgParams &p, const float eps)
{
	constexpr bool staged = !LEGACY && COLW && (IN_DT == TG_DTYPE_BF16 || IN_DT == TG_DTYPE_F16) &&
		(RECIPE == TG_RECIPE_DELAYED || RECIPE == TG_RECIPE_CURRENT_CAST || RECIPE == TG_RECIPE_MXFP8) && COLS % 16 == 0 &&
		StageTiling<IN_DT, TR, TC, THREADS>::ok;
	static_assert(!DBIAS || staged, "TG_DBIAS: the staged path only (2-byte input, recipe 1, 2 or 6 with a columnwise "
	                                "copy, TG_COLS % 16 == 0, a staged tiling)");
	static_assert(!STAGE || (!staged && IN_DT != TG_DTYPE_BYTES && RECIPE != TG_RECIPE_CURRENT_AMAX),
	              "TG_CT_STAGE: the shared-tile body's cast");
	if constexpr (IN_DT == TG_DTYPE_BYTES) {
		static_assert(RECIPE == TG_RECIPE_NONE && COLW, "TG_IN_DTYPE 3 (raw bytes): byte transpose, TG_RECIPE 0 and TG_COLWISE 1");
		body_stage<IN_DT, FMT, TG_RECIPE_NONE, ROWW, COLS, THREADS, TR, TC, POW2, 0, 0>(p, eps);
	} else if constexpr (!LEGACY && RECIPE == TG_RECIPE_CURRENT_AMAX) {
		static_assert(COLS % 8 == 0, "TG_COLS must be a multiple of 8");
		body_amax<IN_DT, THREADS>(p, p.n[0] * COLS);
	} else if constexpr (staged) {
		body_stage<IN_DT, FMT, RECIPE, ROWW, COLS, THREADS, TR, TC, POW2, DBIAS, DEQ>(p, eps);
	} else {
		body<IN_DT, OUT_DT, FMT, RECIPE, ROWW, COLW, COLS, THREADS, TR, TC, POW2, DEQ, STAGE>(p, eps);
	}
}

} /* namespace tgct */

#endif /* TG_CAST_TRANSPOSE_BODY */

#ifdef CT_LEGACY
#define CT_LEGACY_SEL_ 1
#else
#define CT_LEGACY_SEL_ 0
#endif
/* Resident CTAs a SM for __launch_bounds__ (0: none, ptxas's own register choice; -DTG_CT_MIN_CTAS=N, an
 * experiment's, overrides). MXFP8's rowwise-only copy (the shared-tile body) asks for 32 warps a SM, so at
 * most 64 registers: left alone ptxas keeps the w_up cast of the 8B MXFP8 forward layer at 32 registers, loading
 * one row of a thread's two after the other's block scale; at 46 both loads are in flight (219.5 against 244 us
 * alone, 88% of a copy against 79%; H100, thirty-fourth session; that cast also writes the BF16 copy, TG_DEQ:
 * without it the bound measured neutral). The other paths gained nothing from a bound (delayed, current, the
 * staged MXFP8 copies within noise). */
#ifndef TG_CT_MIN_CTAS /* an expression of the slots: evaluated afresh for each instance (tests/gpu/harness_ct.cu) */
#define TG_CT_MIN_CTAS (TG_RECIPE == TG_RECIPE_MXFP8 && !TG_COLWISE ? (TG_THREADS < 1024 ? 1024 / TG_THREADS : 1) : 0)
#endif
#if TG_CT_MIN_CTAS
#define TG_CT_BOUNDS_ __launch_bounds__(TG_THREADS, TG_CT_MIN_CTAS)
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 1000
/* sm_100's ptxas, given no minimum, held the 1x128 cast with a columnwise copy at odd row counts
 * (its lane-pair stores of the time) to 64 registers and spilled 40 bytes; a minimum of one CTA gives it 92, no spill */
#define TG_CT_BOUNDS_ __launch_bounds__(TG_THREADS, 1)
#else
#define TG_CT_BOUNDS_ __launch_bounds__(TG_THREADS)
#endif
extern "C" __global__ void TG_CT_BOUNDS_ TG_KERNEL(const TgParams p)
{
	TG_LAUNCH_DEPENDENTS(); // a dreduce after it may launch (Kernel.pdl)
	tgct::dispatch<TG_IN_DTYPE, TG_OUT_DTYPE, TG_FMT, TG_RECIPE, TG_ROWWISE, TG_COLWISE, TG_COLS, TG_THREADS,
	               TG_TILE_ROWS, TG_TILE_COLS, TG_POW2, CT_LEGACY_SEL_, TG_DBIAS, TG_DEQ, TG_CT_STAGE>(p, TG_EPS_SCALE);
}
#undef CT_LEGACY_SEL_
#undef TG_CT_BOUNDS_
