// gemm_fp8.cu: the generated FP8 GEMM for Hopper (sm_90a): wgmma + TMA, per-tensor or block scales.
// tegen-slots: TG_KERNEL TG_BN TG_STAGES TG_PROMOTE TG_KIND TG_OUT TG_EPI TG_ACT TG_ALPHA TG_LIMIT TG_FMT TG_ACT_T TG_SCALE TG_H_F16 TG_DH_ROW
//
//     D[M][N] = alpha * A[M][K] * B[N][K]^T,   alpha = a_scale_inv[0] * b_scale_inv[0]
//
// TG_SCALE (gemm.h's block scaling, the layouts cuBLASLt reads): 0 per-tensor (above); 1 A 1x128, B 128x128;
// 2 A 1x128, B 1x128. Block scaling sums each 128 of K on the tensor cores, then adds it times its two scales
// into the FP32 total (TG_PROMOTE 1):
//     D[m][n] = sum over k blocks b of  a_scale_inv[b][m] * sb(n, b) * (A[m][128b..] . B[n][128b..])
// with a_scale_inv [ceil(K/128)][M], sb(n, b) = b_scale_inv[n / 128][b] of [ceil(N/128)][ceil(K/128)] (1) or
// b_scale_inv[b][n] of [ceil(K/128)][N] (2). The producer warp copies each k block's scales of the tile (A's 128
// rows; B's TG_BN columns, or its one or two 128-column blocks) into the stage beside the operands with
// cp.async (4 bytes a copy, zero past M and N: no alignment rule), whose completion the stage's full barrier
// tracks; the consumers read them from shared memory while their MMAs run (Promotion).
//
// A and B FP8 (TG_KIND names their wgmma kinds, "e4m3.e5m2": A E4M3, B E5M2), both K-major ("TN",
// the only FP8 layout Hopper's wgmma reads); FP32 accumulation; D row-major [M][N] in TG_OUT
// (TG_OUT_BF16, TG_OUT_F16, TG_OUT_F32). Any M, N >= 1; K a multiple of 16 (TMA rows are 16-byte
// aligned); the loads' tensor maps zero-fill past M, N and K, the stores clip at the edges.
//
// TG_PROMOTE 0: the tensor cores' accumulator runs the whole K (cuBLASLt's "fast accumulation",
// what TE uses in fprop). 1: each 128 of K is summed by the tensor cores, then added into a
// separate FP32 total (TE's default "split accumulator" for dgrad and wgrad): twice the registers,
// so TG_BN <= 192.
//
// TG_EPI 1 (the GLU epilogue, glu_amax.cu fused): B's rows are a GLU's gate half [0, N/2) and linear
// half [N/2, N); a tile holds 128 columns of each (TG_BN 256: map_b the gate rows, map_b2 the linear
// rows, box 128). The consumers only round their accumulators to TG_OUT into a staging tile in shared
// memory (the values D would hold, as glu_amax.cu reads them) and go on with the next tile; warps 1-3 of
// the producer warpgroup compute act = tg_glu_fast(gate, linear) from it (the sigmoid on the SFU:
// relative error about 2^-20, far below FP8's 2^-4 steps) while the tensor cores run, and write act as
// FP8 (TG_FMT) times the delayed scale ep.p[TG_P_SCALE] to ep.p[TG_P_OUT] [M][N/2] (TMA store through
// map_act when use_tma_store, else from registers), max|act| to ep.p[TG_P_AMAX] (atomic), and 1/scale
// to ep.p[TG_P_SCALE_INV]. D itself is written (by those warps, from the staging tile) only when
// D != NULL. TG_ACT_T 1: act's columnwise copy too (the wgrad operand, per-tensor: the same bytes
// transposed) to ep.p[TG_P_OUT_T] [N/2][TG_PITCH(M)]: the act tile transposed in place in shared memory (the
// rowwise copy then goes out from registers), then TMA-stored through map_act_t (16-byte aligned) or from
// registers.
//
// TG_EPI 2 (the dglu epilogue, dglu.cu fused into the dgrad GEMM that writes its d_act): D is d_act [M][C]
// (C = N), tiles of 128 x 128; the consumers round their promoted totals to TG_OUT into the staging tile and go
// on, and a fourth warpgroup (512 threads a CTA) reads from it, with the saved pre-activation h [M][2C] (gate half first; FP16 with
// TG_H_F16, else BF16) from ep.p[TG_PB_IN], d_a, d_b = tg_dglu_fast(gate, linear, d_act) (the sigmoid on the
// SFU, as the GLU epilogue), written as FP8 (TG_FMT) times the delayed scale ep.p[TG_PB_SCALE]: the rowwise
// copy d_h [M][2C] from registers to ep.p[TG_PB_OUT] (TG_DH_ROW 1), the columnwise copy [2C][TG_PITCH(M)] to
// ep.p[TG_PB_OUT_T] (TG_ACT_T 1) through two byte tiles (the gate and linear halves, 64 tokens at a time)
// TMA-stored by map_act (rows [0, C)) and map_act_t (rows [C, 2C)), or stored from them by the warps; max |d_h|
// to ep.p[TG_PB_AMAX] and 1/scale to ep.p[TG_PB_SCALE_INV]; D only when D != NULL. C % 8 == 0 (the runtime's
// rule).
//
// Not the TgParams ABI of the other templates: the runtime's GEMM backend (runtime/gemm_gen.c)
// launches it with the tensor maps by value:
//     TG_KERNEL(map_a, map_b, map_b2, map_d, map_act, map_act_t, D, M, N, K, a_scale_inv, b_scale_inv,
//               raster, use_tma_store, ep)
// (map_b2 is used by TG_EPI 1 only, map_act, map_act_t and ep by the epilogues; use_tma_store: the TG_TMA_D /
// TG_TMA_ACT_T bits below) grid = min(tiles, SMs) (persistent), block TG_THREADS (384; 512 with TG_EPI 2), dynamic shared memory TG_STAGES x TG_STAGE_BYTES
// (the ring) + TG_TILE_OUT_BYTES (the output tile) + 1024 (alignment) + 256 (barriers).
// map_a: A [M][K] bytes, box 128 x 128, 128-byte swizzle; map_b: B [N][K], box 128 x TG_BN;
// map_d: D [M][N], box (128 bytes) x 64 rows, 128-byte swizzle; used when N * sizeof(out) % 16 == 0
// and D is 16-byte aligned (the runtime passes use_tma_store), else D is stored from registers.
//
// Design: tiles of 128 x TG_BN outputs, K in steps of 128 bytes; a TG_STAGES-deep shared-memory
// ring (A 16 KB + B TG_BN x 128 bytes a stage) guarded by mbarriers (full: the producer's
// expect_tx, completed by TMA; empty: one arrive from each consumer warpgroup); warpgroup 0 the
// producer (setmaxnreg 40, one thread issues the loads), warpgroups 1 and 2 the consumers
// (setmaxnreg 232), each owning 64 rows of the tile: four wgmma m64nBNk32 a stage, one group kept
// in flight (TG_PROMOTE 0) or waited for and added into the total (1; the two consumers then take
// turns issuing, so one's group runs while the other promotes). Persistent CTAs walk the
// tiles in the raster order the host picks (tg_gemm_tile). Epilogue: acc * alpha in the output
// type into 128-byte-swizzled shared-memory slabs (chunk c of row r at c ^ (r % 8): conflict-free
// fragment writes), then TMA stores that run while the next tile's loads and MMAs do. With TG_EPI 1
// the slabs are a staging tile (sfull: 256 consumer arrivals; sempty: 96 epilogue arrivals), the
// producer warpgroup runs at 72 registers and the consumers at 216: the GLU's math, which cost the
// tensor cores 5.9% when the consumers did it, now overlaps the next tile (bench/RESULTS.md, tenth
// session: the up-projection with the epilogue 1291.8 us against 1319.5 for the plain kernel).
#define TG_GEMM_BM 128
#define TG_GEMM_BK 128
#define TG_OUT_BF16 0
#define TG_OUT_F16 1
#define TG_OUT_F32 2
#define TG_EPI_NONE 0
#define TG_EPI_GLU 1
#define TG_EPI_DGLU 2
// Bits of the kernel's use_tma_store: which outputs go out by TMA (else from registers).
#define TG_TMA_D 1     // D (plain epilogue) or act's rowwise copy (GLU epilogue): 16-byte rows, aligned
#define TG_TMA_ACT_T 2 // act's columnwise copy [C][TG_PITCH(M)] (GLU epilogue with TG_ACT_T): 16-byte aligned
#define TG_SCALE_TENSOR 0
#define TG_SCALE_BLOCK_W 1 // A 1x128, B 128x128 (fprop, dgrad: B is a weight)
#define TG_SCALE_BLOCK_V 2 // A 1x128, B 1x128 (wgrad)
static_assert(TG_SCALE == TG_SCALE_TENSOR || (TG_PROMOTE && TG_EPI == TG_EPI_NONE), "block scales promote each 128 of K, no epilogue");

#define TG_WGMMA_N TG_BN
#define TG_WGMMA_KIND TG_KIND
#include "tg_wgmma.h"
#include "tg_kernel.h" // TgParams: the GLU epilogue's pointers
#include "tg_formats.h" // tg_f32x2_to_bf16x2
#if TG_EPI == TG_EPI_GLU
#include "tg_glu.h"
static_assert(TG_BN == 256 && !TG_PROMOTE && TG_OUT != TG_OUT_F32, "the GLU epilogue: 128 x (128 + 128) tiles, fast accumulation, a 2-byte D");
#elif TG_EPI == TG_EPI_DGLU
#include "tg_glu.h"
#include "tg_backward.h" // the backward pointer slots (TG_PB_IN ...)
static_assert(TG_BN == 128 && TG_PROMOTE && TG_SCALE == TG_SCALE_TENSOR && TG_OUT != TG_OUT_F32,
	"the dglu epilogue: 128 x 128 promoting tiles, per-tensor scales, a 2-byte d_act");
// One epilogue warpgroup at 168 registers (DG_EPI_REGS), loading a unit's h a unit ahead. Two at 88 registers (640 threads, the
// consumers at 136, no prefetch) measured slower on the H100: 1375-1390 us against 1240-1244 for the 8B dgrad
// (session 18, call 15), so the epilogue is not bound by its warps' number alone.
#define TG_THREADS 512 // the producer warpgroup, two consumer warpgroups, the epilogue's
#define DG_NE 128      // epilogue threads
// Registers of a consumer and of an epilogue thread (40 x 128 + consumers x 256 + epilogue x 128 = 64K): clamped_swiglu's
// epilogue spilled at 168, so it keeps 184 (and the consumers 144)
#if TG_ACT == TG_ACT_CLAMPED_SWIGLU
#define DG_CONSUMER_REGS "144"
#define DG_EPI_REGS "184"
#else
#define DG_CONSUMER_REGS "152"
#define DG_EPI_REGS "168"
#endif
#else
static_assert(!TG_ACT_T, "TG_ACT_T goes with the GLU or the dglu epilogue");
#endif
#ifndef TG_THREADS
#define TG_THREADS 384 // the producer warpgroup (with the GLU epilogue's warps 1-3), two consumer warpgroups
#endif

typedef unsigned char u8;
typedef unsigned int u32;
typedef unsigned long long u64;

// A CUtensorMap (cuda.h's opaque 128-byte, 64-byte-aligned struct), passed by value.
struct __align__(64) TgTensorMap { u64 opaque[16]; };

#if TG_OUT == TG_OUT_F32
#define TG_OUT_BYTES 4
#else
#define TG_OUT_BYTES 2
#endif
#define TG_A_BYTES (TG_GEMM_BM * TG_GEMM_BK)
#define TG_STAGE_BYTES (TG_A_BYTES + TG_BN * TG_GEMM_BK)
#if TG_EPI == TG_EPI_GLU
#define TG_STAGING_BYTES (TG_GEMM_BM * TG_BN * 2)            // the tile's pre-activation, 2-byte values
#define TG_TILE_OUT_BYTES (TG_STAGING_BYTES + TG_GEMM_BM * 128) // + the FP8 act tile: two 64 x 128-byte slabs
#elif TG_EPI == TG_EPI_DGLU
#define TG_STAGING_BYTES (TG_GEMM_BM * TG_BN * 2)             // the tile's d_act, 2-byte values
#define TG_TH_BYTES (TG_BN * 64)                              // a half's columnwise tile: TG_BN rows of 64 tokens
#define TG_TILE_OUT_BYTES (TG_STAGING_BYTES + 2 * TG_TH_BYTES)  // + the gate and linear columnwise tiles
#else
#define TG_TILE_OUT_BYTES (TG_GEMM_BM * TG_BN * TG_OUT_BYTES)
#endif
#define TG_SLAB_COLS (128 / TG_OUT_BYTES)                    // output columns in a 128-byte slab row
#define TG_NSLABS (TG_BN * TG_OUT_BYTES / 128)               // slabs of 64 rows x 128 bytes a consumer
#define TG_ACC (TG_BN / 2)                                   // accumulator registers a thread
#define TG_SC_STAGE (TG_SCALE ? 128 + TG_BN : 0)             // a stage's scales (floats, after the ring): A's, then B's

__device__ __forceinline__ u32 smem_u32(const void *p) { return (u32)__cvta_generic_to_shared(p); }
__device__ __forceinline__ void mbar_init(u64 *b, int count)
{
	asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_u32(b)), "r"(count));
}
__device__ __forceinline__ void mbar_expect_tx(u64 *b, u32 bytes)
{
	asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_u32(b)), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_arrive(u64 *b)
{
	asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_u32(b)) : "memory");
}
__device__ __forceinline__ void mbar_wait(u64 *b, u32 parity)
{
	asm volatile("{\n.reg .pred ok;\nWAIT_%=:\n"
	             "mbarrier.try_wait.parity.shared::cta.b64 ok, [%0], %1;\n"
	             "@!ok bra WAIT_%=;\n}\n" ::"r"(smem_u32(b)), "r"(parity) : "memory");
}
// TMA: load box (c0 = K byte offset, c1 = row) into shared memory, completing on bar
__device__ __forceinline__ void tma_load(const TgTensorMap *map, void *dst, u64 *bar, int c0, int c1)
{
	asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];"
	             ::"r"(smem_u32(dst)), "l"((u64)map), "r"(smem_u32(bar)), "r"(c0), "r"(c1) : "memory");
}
// TMA: store a shared-memory box to (c0 = column, c1 = row), clipped at the tensor's edges
// (src: a shared-memory address; the pointer form below converts one)
__device__ __forceinline__ void tma_store(const TgTensorMap *map, u32 src, int c0, int c1)
{
	asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];"
	             ::"l"((u64)map), "r"(src), "r"(c0), "r"(c1) : "memory");
}
__device__ __forceinline__ void tma_store(const TgTensorMap *map, const void *src, int c0, int c1)
{
	tma_store(map, smem_u32(src), c0, c1);
}
__device__ __forceinline__ void bar_sync(int id, int n) { asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(n) : "memory"); }
__device__ __forceinline__ void bar_arrive(int id, int n) { asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(n) : "memory"); }
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N> __device__ __forceinline__ void wgmma_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory"); }

// cp.async of one float, src[i] if ok else 0 (no read), into shared memory; tracked by cp_async_arrive
__device__ __forceinline__ void cp_async_f32(float *dst, const float *src, bool ok)
{
	asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(smem_u32(dst)), "l"((u64)src), "r"(ok ? 4 : 0) : "memory");
}
// shared-memory loads by address (the ring's pointers are generic: a plain load would be a generic LD)
__device__ __forceinline__ float lds_f32(const float *p)
{
	float v;
	asm volatile("ld.shared.f32 %0, [%1];" : "=f"(v) : "r"(smem_u32(p)));
	return v;
}
__device__ __forceinline__ float2 lds_f32x2(const float *p)
{
	float2 v;
	asm volatile("ld.shared.v2.f32 {%0, %1}, [%2];" : "=f"(v.x), "=f"(v.y) : "r"(smem_u32(p)));
	return v;
}
// one arrival on bar once this thread's earlier cp.async copies have landed (counted in bar's arrivals)
__device__ __forceinline__ void cp_async_arrive(u64 *bar)
{
	asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(smem_u32(bar)) : "memory");
}

// Shared-memory matrix descriptor: K-major, 128-byte swizzle (8-row atoms of 128 bytes: stride 1024). Its low word
// (sw128_lo: the start address / 16 in bits 0-13, the leading offset 1 at bit 16) grows by n for an operand n x 16
// bytes further on (shared addresses are below 2^18, so the sum stays in bits 0-13); the high word is a constant.
__device__ __forceinline__ u32 sw128_lo(const void *p) { return ((smem_u32(p) & 0x3FFFF) >> 4) | (1u << 16); }
__device__ __forceinline__ u64 sw128_desc_of(u32 lo) { return (u64)lo | ((u64)(1024 >> 4) << 32) | (1ull << 62); }

// Tile t's coordinates. raster 0: M fastest (A stays in L2 while B streams once); 2: groups of 16 M
// tiles, N fastest within a group (the CTAs in flight share about 16 A panels and 8 B panels).
__device__ __forceinline__ void tg_gemm_tile(int t, int tiles_m, int tiles_n, int raster, int &tm, int &tn)
{
	if (raster == 0) {
		tm = t % tiles_m, tn = t / tiles_m;
	} else {
		const int gm = 16, per = gm * tiles_n, g = t / per, in = t % per, rows = min(gm, tiles_m - g * gm);
		tm = g * gm + in % rows, tn = in / rows;
	}
}
// The output pair (a, b) in TG_OUT's type: 4 bytes (two BF16/FP16, a in the low half) or 8 (two floats).
// Rounded to nearest even by cvt (NaN: the canonical 0x7FFF of tg_formats.h).
#if TG_OUT == TG_OUT_F32
typedef float2 TgOutPair;
__device__ __forceinline__ TgOutPair out_pair(float a, float b) { return make_float2(a, b); }
__device__ __forceinline__ void store_one(void *D, size_t i, float x) { ((float *)D)[i] = x; }
#else
typedef u32 TgOutPair;
__device__ __forceinline__ TgOutPair out_pair(float a, float b)
{
	u32 r;
#if TG_OUT == TG_OUT_F16
	asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(b), "f"(a));
#else
	r = tg_f32x2_to_bf16x2(a, b);
#endif
	return r;
}
__device__ __forceinline__ void store_one(void *D, size_t i, float x) { ((unsigned short *)D)[i] = (unsigned short)out_pair(x, 0.0f); }
#endif

#if TG_EPI != TG_EPI_NONE
// A consumer's half of an epilogue's staging: its 64 rows of the tile, acc * alpha rounded to D's type, laid out as
// the plain epilogue's slabs: consumer cw's TG_NSLABS x 8 KB, slab j (128 bytes of columns; GLU: j = 0, 1 gate,
// 2, 3 linear) of 64 rows x 128 bytes, 16-byte chunk k of row r at k ^ (r % 8) (conflict-free), then an arrive on
// sfull. The producer warpgroup's warps 1-3 do the rest (glu_finish, dglu_finish) while the consumers go on with
// the next tile's MMAs.
__device__ __forceinline__ void epi_stage(const float (&acc)[TG_ACC], float alpha, int cw, int warp, int lane, u8 *stg,
	u64 *sfull, u64 *sempty, u32 parity)
{
	if (warp == 0 && lane == 0)
		mbar_wait(sempty, parity ^ 1); // the epilogue warps have read the last tile's staging
	bar_sync(1 + cw, 128);
	const u32 base = smem_u32(stg) + cw * (TG_NSLABS * 8192); // shared-space stores (generic ones cost more)
#pragma unroll
	for (int i = 0; i < TG_ACC; i += 2) {
		const int r = warp * 16 + lane / 4 + ((i % 4) >= 2 ? 8 : 0), c = 8 * (i / 4) + 2 * (lane % 4);
		const int byte = c * 2, slab = byte / 128, chunk = (byte % 128) / 16;
		const u32 v = out_pair(acc[i] * alpha, acc[i + 1] * alpha);
		asm volatile("st.shared.u32 [%0], %1;" ::"r"(base + slab * 8192 + r * 128 + ((chunk ^ (r % 8)) * 16) + byte % 16), "r"(v)
			: "memory");
	}
	mbar_arrive(sfull); // release: the staging writes are visible to the waiting epilogue warps
}

// Two 2-byte values (BF16, or FP16 when f16) packed in a word, to floats.
__device__ __forceinline__ void unpack2(u32 w, bool f16, float &lo, float &hi)
{
	if (f16) {
		asm("{.reg .b16 l, h;\nmov.b32 {l, h}, %2;\ncvt.f32.f16 %0, l;\ncvt.f32.f16 %1, h;}" : "=f"(lo), "=f"(hi) : "r"(w));
	} else {
		lo = __uint_as_float(w << 16);
		hi = __uint_as_float(w & 0xFFFF0000u);
	}
}
// 8 values of D's type (16 bytes) to floats.
__device__ __forceinline__ void unpack8(const uint4 &v, float (&f)[8])
{
	const u32 w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
	for (int k = 0; k < 4; k++)
		unpack2(w[k], TG_OUT == TG_OUT_F16, f[2 * k], f[2 * k + 1]);
}
#endif

#if TG_EPI == TG_EPI_GLU
// Transposes the 128 x 128-byte act tile in place (the slabs' swizzled layout: byte c of row r in slab r / 64,
// row r % 64, chunk (c / 16) ^ (r % 8)): thread e of 96 swaps 4 x 4-byte blocks (I, J) and (J, I), I <= J, each
// block's four rows of one 32-bit word transposed by tg_transpose_4x4_bytes. Every block pair is one thread's, so no
// barrier is needed between the reads and the writes.
__device__ __forceinline__ u32 *act_word(u8 *sact, int r, int q)
{
	return reinterpret_cast<u32 *>(sact + (r / 64) * 8192 + (r % 64) * 128 + (((q / 4) ^ (r % 8)) * 16) + (q % 4) * 4);
}
__device__ __forceinline__ void transpose_act_tile(int e, u8 *sact)
{
	for (int w = e; w < 32 * 32; w += 96) {
		const int I = w / 32, J = w % 32;
		if (I > J)
			continue;
		u32 a[4], b[4], ta[4], tb[4];
#pragma unroll
		for (int k = 0; k < 4; k++)
			a[k] = *act_word(sact, 4 * I + k, J), b[k] = *act_word(sact, 4 * J + k, I);
		tg_transpose_4x4_bytes(a[0], a[1], a[2], a[3], ta);
		tg_transpose_4x4_bytes(b[0], b[1], b[2], b[3], tb);
#pragma unroll
		for (int k = 0; k < 4; k++) {
			*act_word(sact, 4 * J + k, I) = ta[k];
			if (I != J)
				*act_word(sact, 4 * I + k, J) = tb[k];
		}
	}
}

// The epilogue warps' part (96 threads, e = 0..95) of tile (tm, tn): from the staging tile, act = glu(gate,
// linear) as FP8 (scale s) into the act slabs, TMA-stored (or stored from registers), D written when asked,
// amax kept; the staging goes back to the consumers as soon as it is read. With TG_ACT_T the act tile is then
// transposed in place and stored to act_t [C][M] (rows tn * 128.., columns tm * 128..).
__device__ __forceinline__ void glu_finish(int e, u8 *stg, u8 *sact, u64 *sfull, u64 *sempty, u32 parity, float s,
	float &amax, void *D, int M, int C, int tm, int tn, int use_tma_store, const TgTensorMap &tact,
	const TgTensorMap &tact_t, u8 *act, u8 *act_t)
{
	// with TG_ACT_T the rowwise copy goes from registers: a TMA store of it would have to finish reading the
	// act tile before the in-place transpose (a wait mid-tile that measured 1345 us against 1264 without act_t)
	const bool tma_rows = !TG_ACT_T && (use_tma_store & TG_TMA_D);
	const bool vec_d = C % 8 == 0 && ((size_t)D % 16) == 0; // 16-byte stores of D's 8-column chunks
	mbar_wait(sfull, parity);
	if (e == 0)
		asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory"); // the last tile's stores have read sact
	bar_sync(5, 96); // ... and every thread is done with the last tile's sact
	for (int w = e; w < TG_GEMM_BM * 16; w += 96) { // 128 rows x 16 chunks of 8 columns
		const int r = w / 16, ch = w % 16, R = tm * TG_GEMM_BM + r, c = tn * 128 + 8 * ch;
		const u8 *row = stg + (r / 64) * 32768 + (r % 64) * 128 + (((ch % 8) ^ (r % 8)) * 16);
		const uint4 gv = *reinterpret_cast<const uint4 *>(row + (ch / 8) * 8192);
		const uint4 uv = *reinterpret_cast<const uint4 *>(row + (2 + ch / 8) * 8192);
		float g[8], u[8];
		unpack8(gv, g);
		unpack8(uv, u);
		u32 q[2];
#pragma unroll
		for (int k = 0; k < 8; k += 2) {
			const float y0 = tg_glu_fast<TG_ACT>(g[k], u[k], (float)(TG_ALPHA), (float)(TG_LIMIT));
			const float y1 = tg_glu_fast<TG_ACT>(g[k + 1], u[k + 1], (float)(TG_ALPHA), (float)(TG_LIMIT));
			if (R < M && c + k < C)
				amax = fmaxf(amax, fabsf(y0)); // NaN ignored, as tg_absmax
			if (R < M && c + k + 1 < C)
				amax = fmaxf(amax, fabsf(y1));
			const u32 pr = TG_FMT == TG_FMT_E4M3 ? tg_f32x2_to_e4m3x2(y0 * s, y1 * s) : tg_f32x2_to_e5m2x2(y0 * s, y1 * s);
			if (k % 4 == 0)
				q[k / 4] = pr;
			else
				q[k / 4] |= pr << 16;
		}
		if (tma_rows || TG_ACT_T) // slab r / 64, row r % 64: chunk ch / 2 at (ch / 2) ^ (r % 8), half ch % 2
			*reinterpret_cast<uint2 *>(sact + (r / 64) * 8192 + (r % 64) * 128 + (((ch / 2) ^ (r % 8)) * 16) + (ch % 2) * 8) =
				make_uint2(q[0], q[1]);
		if (!tma_rows && R < M) {
			if (C % 8 == 0 && ((size_t)act % 8) == 0 && c + 8 <= C)
				*reinterpret_cast<uint2 *>(act + (size_t)R * C + c) = make_uint2(q[0], q[1]);
			else
#pragma unroll
				for (int k = 0; k < 8; k++)
					if (c + k < C)
						act[(size_t)R * C + c + k] = (u8)(q[k / 4] >> (8 * (k % 4)));
		}
		if (D && R < M) { // the pre-activation, [M][2C]: gate at c, linear at C + c
			unsigned short *h = (unsigned short *)D + (size_t)R * 2 * C;
			if (vec_d && c + 8 <= C) {
				*reinterpret_cast<uint4 *>(h + c) = gv;
				*reinterpret_cast<uint4 *>(h + C + c) = uv;
			} else {
				const u32 gw[4] = {gv.x, gv.y, gv.z, gv.w}, uw[4] = {uv.x, uv.y, uv.z, uv.w};
#pragma unroll
				for (int k = 0; k < 8; k++)
					if (c + k < C) {
						h[c + k] = (unsigned short)(gw[k / 2] >> (16 * (k % 2)));
						h[C + c + k] = (unsigned short)(uw[k / 2] >> (16 * (k % 2)));
					}
			}
		}
	}
	mbar_arrive(sempty); // the staging is read: the consumers may write the next tile's
	if (!tma_rows && !TG_ACT_T)
		return;
	if (tma_rows)
		asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
	bar_sync(5, 96); // the act tile is written
	if (tma_rows && e == 0) {
		tma_store(&tact, sact, tn * 128, tm * TG_GEMM_BM);
		if (tm * TG_GEMM_BM + 64 < M)
			tma_store(&tact, sact + 8192, tn * 128, tm * TG_GEMM_BM + 64);
		asm volatile("cp.async.bulk.commit_group;" ::: "memory");
	}
#if TG_ACT_T
	transpose_act_tile(e, sact); // now row c (act_t's row tn * 128 + c) holds the tile's 128 tokens
	if (use_tma_store & TG_TMA_ACT_T) {
		asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
		bar_sync(5, 96);
		if (e == 0) {
			tma_store(&tact_t, sact, tm * TG_GEMM_BM, tn * 128);
			if (tn * 128 + 64 < C)
				tma_store(&tact_t, sact + 8192, tm * TG_GEMM_BM, tn * 128 + 64);
			asm volatile("cp.async.bulk.commit_group;" ::: "memory");
		}
	} else {
		bar_sync(5, 96);
		// (a byte a store: an aligned word a thread, two tile words funnel-shifted, measured slower at M % 16 != 0,
		// the epilogue warps being instruction-bound there: H100, 8191 tokens, this GEMM 1763 -> 2071 us, the dglu
		// epilogue's 1224 -> 1673; fortieth session)
		for (int w = e; w < 128 * 32; w += 96) { // act_t row c, tokens 4q..4q+3 of the tile
			const int cl = w / 32, q = w % 32, cc = tn * 128 + cl;
			const u32 v = *act_word(sact, cl, q);
#pragma unroll
			for (int k = 0; k < 4; k++) {
				const int R = tm * TG_GEMM_BM + 4 * q + k;
				if (cc < C && R < M)
					act_t[(size_t)cc * TG_PITCH(M) + R] = (u8)(v >> (8 * k));
			}
		}
	}
#else
	(void)tact_t;
	(void)act_t;
#endif
}
#endif

#if TG_EPI == TG_EPI_DGLU
// The epilogue warps' unit of work: 4 rows x 8 columns of d_act. A tile has 32 x (TG_BN / 8) units; thread e takes
// units e, e + DG_NE, ... (DG_UNITS of them), so its first half are rows 0-63 and the second rows 64-127 (the two
// halves of the columnwise tiles). Unit w: row group rg (rows 4 rg..), column group cg, d_act's column c. A warp
// holds 4 row groups x 8 column groups: each row's h loads are 128 contiguous bytes, its stores 64, its staging
// reads hit 32 banks once. With three epilogue warps (the producer warpgroup's, as the GLU epilogue) ncu (session
// 18) found them latency-bound at 0.2 instructions a cycle each, 1095 instructions a unit, twice the mainloop's
// time: hence a warpgroup of their own (DG_NE threads) and 128-column tiles, whose promoting accumulators leave
// the registers for them.
#define DG_UNITS (32 * (TG_BN / 8) / DG_NE) // a thread's units a tile (4)
__device__ __forceinline__ void dglu_unit(int w, int tn, int &rg, int &cg, int &c)
{
	rg = ((w >> 2) / (TG_BN / 8)) * 4 + (w & 3);
	cg = (w >> 2) % (TG_BN / 8);
	c = tn * TG_BN + 8 * cg;
}
// Shared-memory byte offset of word q (tokens 4q..4q+3 of a 64-token half) of row j of a half's columnwise tile:
// rows of 64 bytes in TMA's 64-byte swizzle (16-byte chunk k of row j at k ^ ((j / 2) % 4)).
__device__ __forceinline__ u32 t_word(int j, int q) { return j * 64 + (((q >> 2) ^ ((j >> 1) & 3)) << 4) + (q & 3) * 4; }
__device__ __forceinline__ uint4 lds128(u32 a)
{
	uint4 v;
	asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(a));
	return v;
}
__device__ __forceinline__ u32 lds32(u32 a)
{
	u32 v;
	asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(a));
	return v;
}
__device__ __forceinline__ void sts32(u32 a, u32 v) { asm volatile("st.shared.u32 [%0], %1;" ::"r"(a), "r"(v) : "memory"); }

// The staging tile's shared address of row r's d_act chunk cg (8 columns): slab cg / 8 of the row's half (r / 64),
// 16-byte chunk (cg % 8) ^ (r % 8).
__device__ __forceinline__ u32 dact_addr(u32 stg, int r, int cg)
{
	return stg + (r / 64) * (TG_NSLABS * 8192) + (cg / 8) * 8192 + (r % 64) * 128 + (((cg % 8) ^ (r % 8)) * 16);
}

// Unit w of tile (tm, tn)'s h: the address of its first row's gate columns c..c+7 (the linear ones C / 8 uint4 on,
// the next row C / 4 on) and how many of its 4 rows exist (0 past C; C % 8 == 0: a unit's columns are all in or out).
__device__ __forceinline__ const uint4 *dglu_h_row0(const unsigned short *h, int w, int M, int C, int tm, int tn, int &rows)
{
	int rg, cg, c;
	dglu_unit(w, tn, rg, cg, c);
	const int R0 = tm * TG_GEMM_BM + 4 * rg;
	rows = c < C ? min(4, M - R0) : 0;
	return reinterpret_cast<const uint4 *>(h + (size_t)R0 * (2 * (size_t)C) + c);
}
// Row k of a unit's h (from dglu_h_row0): the gate (a) and linear (b) columns, 0 past M and C, through the read-only
// path. (Reading row M - 1 and column 0 there instead, unpredicated, measured slower: 1228-1242 us against
// 1118-1174, session 18 call 14.)
__device__ __forceinline__ void dglu_load_row(const uint4 *p, int rows, int C, int k, uint4 &a, uint4 &b)
{
	const bool ok = k < rows;
	a = ok ? __ldg(p + k * (C / 4)) : make_uint4(0, 0, 0, 0);
	b = ok ? __ldg(p + k * (C / 4) + C / 8) : make_uint4(0, 0, 0, 0);
}
// Unit w of tile (tm, tn)'s h, all 4 rows (gate av, linear bv), all 8 loads in flight.
__device__ __forceinline__ void dglu_load_h(const unsigned short *h, int w, int M, int C, int tm, int tn, uint4 (&av)[4],
	uint4 (&bv)[4])
{
	int rows;
	const uint4 *p = dglu_h_row0(h, w, M, C, tm, tn, rows);
#pragma unroll
	for (int k = 0; k < 4; k++)
		dglu_load_row(p, rows, C, k, av[k], bv[k]);
}
// An 8-byte global store where p holds, predicated rather than branched around.
__device__ __forceinline__ void stg64_if(bool p, void *a, uint2 v)
{
	asm volatile("{\n.reg .pred q;\nsetp.ne.b32 q, %0, 0;\n@q st.global.v2.u32 [%1], {%2, %3};\n}" ::"r"((int)p), "l"(a), "r"(v.x),
		"r"(v.y));
}

// One row of a unit: 8 (d_act, gate, linear) triples to 8 gate and 8 linear FP8 codes, the scale s folded into
// d_act (d_h * s = dglu(gate, linear, d_act * s): one multiply an element, not two) and the amax kept of the scaled
// values (the caller divides it by s once: within an ulp or two of max |d_h|, inside the check's 1e-6; where a
// scaled value overflows, the caller takes the unit's amax unscaled instead: dglu_unit_amax).
__device__ __forceinline__ void dglu_row(const uint4 &dv, const uint4 &av, const uint4 &bv, float s, float &amax, uint2 &gq,
	uint2 &lq)
{
	const u32 dw[4] = {dv.x, dv.y, dv.z, dv.w}, aw[4] = {av.x, av.y, av.z, av.w}, bw[4] = {bv.x, bv.y, bv.z, bv.w};
	u32 g16[4], l16[4];
#pragma unroll
	for (int p = 0; p < 4; p++) {
		float d0, d1, a0, a1, b0, b1, x0, x1, y0, y1;
		unpack2(dw[p], TG_OUT == TG_OUT_F16, d0, d1);
		d0 *= s, d1 *= s;
		unpack2(aw[p], TG_H_F16, a0, a1);
		unpack2(bw[p], TG_H_F16, b0, b1);
		tg_dglu_fast<TG_ACT>(a0, b0, d0, (float)(TG_ALPHA), (float)(TG_LIMIT), x0, y0);
		tg_dglu_fast<TG_ACT>(a1, b1, d1, (float)(TG_ALPHA), (float)(TG_LIMIT), x1, y1);
		amax = fmaxf(amax, fmaxf(fmaxf(fabsf(x0), fabsf(x1)), fmaxf(fabsf(y0), fabsf(y1)))); // NaN ignored, as tg_absmax
		g16[p] = TG_FMT == TG_FMT_E4M3 ? tg_f32x2_to_e4m3x2(x0, x1) : tg_f32x2_to_e5m2x2(x0, x1);
		l16[p] = TG_FMT == TG_FMT_E4M3 ? tg_f32x2_to_e4m3x2(y0, y1) : tg_f32x2_to_e5m2x2(y0, y1);
	}
	gq = make_uint2(g16[0] | g16[1] << 16, g16[2] | g16[3] << 16);
	lq = make_uint2(l16[0] | l16[1] << 16, l16[2] | l16[3] << 16);
}

// max |d_h| of unit w's 4 rows without the scale (the rare path: a scaled value of the unit overflowed FP32, as with
// a delayed scale near FLT_MAX, where amax / s would be inf): the same math with s = 1, codes dropped, h loaded
// again (passing the caller's h registers by reference put them on the stack: 8 local stores a unit).
__device__ __noinline__ float dglu_unit_amax(u32 stg, const unsigned short *h, int w, int M, int C, int tm, int tn)
{
	int rg, cg, c;
	dglu_unit(w, tn, rg, cg, c);
	uint4 av[4], bv[4];
	dglu_load_h(h, w, M, C, tm, tn, av, bv);
	float a = 0.0f;
	uint2 gq, lq;
	for (int k = 0; k < 4; k++) {
		const int r = 4 * rg + k;
		const uint4 dv = lds128(dact_addr(stg, r, cg));
		dglu_row(dv, av[k], bv[k], 1.0f, a, gq, lq);
	}
	return a;
}

// Writes a unit's column words into a half's columnwise tile at shared address t: the 4 x 4 codes r[0..3] (4 rows,
// columns 4 h4..4 h4 + 3) transposed, column jj = (i + cg) & 3 by the i-th store (word q of row 8 cg + 4 h4 + jj), so
// that a warp's 8 column groups spread over the banks. The rows' bytes are rotated by cg first, so the i-th
// transposed word is column jj's without a select (a select chain a store cost ~8 instructions).
__device__ __forceinline__ void dglu_put_t(u32 t, u32 r0, u32 r1, u32 r2, u32 r3, int cg, int h4, int q)
{
	const u32 rot = 8 * (cg & 3); // byte j of a rotated row is byte (j + cg) & 3 of the row
	u32 w[4];
	tg_transpose_4x4_bytes(__funnelshift_r(r0, r0, rot), __funnelshift_r(r1, r1, rot), __funnelshift_r(r2, r2, rot),
		__funnelshift_r(r3, r3, rot), w);
#pragma unroll
	for (int i = 0; i < 4; i++)
		sts32(t + t_word(8 * cg + 4 * h4 + ((i + cg) & 3), q), w[i]);
}

// The epilogue warps' part (DG_NE threads, e = 0..DG_NE-1) of tile (tm, tn) with the dglu epilogue: from the staging
// tile (d_act, shared address stg) and h, d_h = dglu(gate, linear, d_act) as FP8 (scale s): the rowwise copy
// (TG_DH_ROW) from registers, the columnwise one (TG_ACT_T) through the two half-height columnwise tiles (st: gate
// half, then linear half; 64 tokens at a time), amax kept (D, when asked, is the consumers' to write).
__device__ __forceinline__ void dglu_finish(int e, u32 stg, u32 st, u64 *sfull, u64 *sempty, u32 parity, float s,
	float &amax, float &amax_u, int M, int C, int tm, int tn, int tm2, int tn2, uint4 (&av)[4], uint4 (&bv)[4],
	int use_tma_store, const TgTensorMap &tg, const TgTensorMap &tl, const unsigned short *h, u8 *out, u8 *out_t)
{
	const size_t C2 = 2 * (size_t)C;
	mbar_wait(sfull, parity);
#pragma unroll 1 // (unrolled by 2: 1232-1266 us against 1251-1266, session 18 call 18: no gain)
	for (int n = 0; n < DG_UNITS; n++) {
		const int w = e + DG_NE * n, hf = n / (DG_UNITS / 2); // hf: the tile's rows 0-63 or 64-127
		int rg, cg, c;
		dglu_unit(w, tn, rg, cg, c);
		// the next unit's h (the next tile's first after the last) loads, row by row into the registers this unit's
		// row has just left, while the rest of this unit's math runs: its latency, exposed, was the epilogue's
		// largest stall (ncu, session 18); loading into the freed registers saves a unit's 32 register copies
		int nrows = 0;
		const uint4 *hn = nullptr;
		if (n + 1 < DG_UNITS)
			hn = dglu_h_row0(h, w + DG_NE, M, C, tm, tn, nrows);
		else if (tm2 >= 0)
			hn = dglu_h_row0(h, e, M, C, tm2, tn2, nrows);
		if (TG_ACT_T && n % (DG_UNITS / 2) == 0) { // the columnwise tiles' last stores have read them
			if (e == 0)
				asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
			bar_sync(5, DG_NE);
		}
		const int R0 = tm * TG_GEMM_BM + 4 * rg;
		const bool cok = c < C;
		u8 *orow = out + (size_t)R0 * C2 + c;
		[[maybe_unused]] u32 gw[4][2], lw[4][2]; // the codes of the 4 rows, for the columnwise tiles
		float ua = 0.0f; // the unit's amax of scaled values
#pragma unroll
		for (int k = 0; k < 4; k++) {
			const int r = 4 * rg + k;
			const uint4 dv = lds128(dact_addr(stg, r, cg));
			uint2 gq, lq;
			dglu_row(dv, av[k], bv[k], s, ua, gq, lq);
			dglu_load_row(hn, nrows, C, k, av[k], bv[k]);
			gw[k][0] = gq.x, gw[k][1] = gq.y, lw[k][0] = lq.x, lw[k][1] = lq.y;
			if (TG_DH_ROW) {
				const bool ok = cok && R0 + k < M;
				stg64_if(ok, orow + k * C2, gq);
				stg64_if(ok, orow + k * C2 + C, lq);
			}
		}
		if (ua <= 3.402823466e38f) // finite (NaN is ignored by the max): folded
			amax = fmaxf(amax, ua);
		else // a scaled value overflowed: this unit's amax without the scale, from the staging it still holds
			amax_u = fmaxf(amax_u, dglu_unit_amax(stg, h, w, M, C, tm, tn));
		if (n == DG_UNITS - 1)
			mbar_arrive(sempty); // the staging is read: the consumers may write the next tile's
#if TG_ACT_T
		{ // columns 8 cg + 4 h4 + jj: the 4 tokens of rows 4 rg.. as one word, in each half's tile
			const int q = rg - 16 * hf;
#pragma unroll
			for (int h4 = 0; h4 < 2; h4++) {
				dglu_put_t(st, gw[0][h4], gw[1][h4], gw[2][h4], gw[3][h4], cg, h4, q);
				dglu_put_t(st + TG_TH_BYTES, lw[0][h4], lw[1][h4], lw[2][h4], lw[3][h4], cg, h4, q);
			}
		}
		if (n % (DG_UNITS / 2) != DG_UNITS / 2 - 1)
			continue;
		// a half of the tile's tokens is in the columnwise tiles: out by TMA (64-row boxes), or by the warps
		const int H0 = tm * TG_GEMM_BM + 64 * hf;
		if (use_tma_store & TG_TMA_ACT_T) {
			asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
			bar_sync(5, DG_NE);
			if (e == 0 && H0 < M) {
#pragma unroll
				for (int p = 0; p < TG_BN / 64; p++)
					if (tn * TG_BN + 64 * p < C) {
						tma_store(&tg, st + p * 4096, H0, tn * TG_BN + 64 * p);
						tma_store(&tl, st + TG_TH_BYTES + p * 4096, H0, tn * TG_BN + 64 * p);
					}
				asm volatile("cp.async.bulk.commit_group;" ::: "memory");
			}
			continue;
		}
		bar_sync(5, DG_NE);
		for (int v = e; v < TG_BN * 16; v += DG_NE) { // row j of each half's tile, tokens 4q..4q+3 of this half
			const int j = v / 16, qq = v % 16, cc = tn * TG_BN + j;
			if (cc >= C)
				continue;
			const u32 vg = lds32(st + t_word(j, qq)), vl = lds32(st + TG_TH_BYTES + t_word(j, qq));
#pragma unroll
			for (int k = 0; k < 4; k++) {
				const int R = H0 + 4 * qq + k;
				if (R < M) {
					out_t[(size_t)cc * TG_PITCH(M) + R] = (u8)(vg >> (8 * k));
					out_t[((size_t)C + cc) * TG_PITCH(M) + R] = (u8)(vl >> (8 * k));
				}
			}
		}
#else
		(void)hf, (void)use_tma_store, (void)tg, (void)tl, (void)out_t, (void)st;
#endif
	}
}
#endif

#if TG_SCALE != TG_SCALE_TENSOR
// The producer warp's part of a stage with block scales (lane 0..31): k block kt's scales of tile (tm, tn) into the
// stage's sc with 4-byte cp.async, 0 past M and N (A's 128 rows, then B's TG_BN columns or its one or two 128-column
// blocks; B's 128x128 scales are [ceil(N/128)][kblocks]), each lane's copies counted on full when they land.
__device__ __forceinline__ void stage_scales(float *sc, const float *sa, const float *sb, int M, int N, int tm, int tn,
	int kt, int kblocks, int lane, u64 *full)
{
	const float *sak = sa + (size_t)kt * M;
#pragma unroll
	for (int j = 0; j < 4; j++) {
		const int r = tm * TG_GEMM_BM + lane + 32 * j;
		cp_async_f32(sc + lane + 32 * j, sak + (r < M ? r : 0), r < M);
	}
#if TG_SCALE == TG_SCALE_BLOCK_V
	const float *sbk = sb + (size_t)kt * N;
#pragma unroll
	for (int j = 0; j < TG_BN / 32; j++) {
		const int c = tn * TG_BN + lane + 32 * j;
		cp_async_f32(sc + 128 + lane + 32 * j, sbk + (c < N ? c : 0), c < N);
	}
#else
	const int nb = tn * TG_BN / 128 + lane; // lanes 0, 1: the first and the second block
	if (lane < 2)
		cp_async_f32(sc + 128 + lane, sb + (nb * 128 < N ? (size_t)nb * kblocks + kt : 0), nb * 128 < N);
#endif
	cp_async_arrive(full);
}
#endif

#if TG_PROMOTE
// A consumer's promotion of one k block into its FP32 total (TG_PROMOTE 1). load() reads the block's scales from
// the stage while the MMAs run (read after them, their latency sat between this warpgroup's MMAs and its next ones:
// ncu, thirteenth session); apply(), once the MMAs are done, adds acc (times the scales) into total and gives the
// stage back to the producer: thread 0 of the warpgroup per-tensor, one lane a warp once its scales are read.
// Fragment i of a thread: row 16 warp + lane/4 (+8 for i%4 >= 2), column 8 (i/4) + 2 (lane%4) + (i%2).
struct Promotion {
#if TG_SCALE == TG_SCALE_BLOCK_W
	float l0, l1, m0, m1, h0, h1; // (row 0 or 8) x (B's low block, the block of columns 64-127, the high block)
#elif TG_SCALE == TG_SCALE_BLOCK_V
	float a0, a1;                 // A's scales of the thread's two rows
	const float *bs;              // B's scales of its columns: 8 (i/4) + 2 (lane%4) + (0, 1)
#endif
	__device__ __forceinline__ void load(const float *sc, int row, int tn, int lane)
	{
#if TG_SCALE != TG_SCALE_TENSOR
		const float ra = lds_f32(sc + row), rb = lds_f32(sc + row + 8); // A's scales: the first 128 floats
#endif
#if TG_SCALE == TG_SCALE_BLOCK_W
		// columns below 64 are in B's low block, from 128 in the high one, 64-127 in the low one when bnd is 128
		// (tn * TG_BN % 128 is 0 or 64): one select a k block, not one an element
		const int bnd = 128 - (tn * TG_BN) % 128;
		const float b_lo = lds_f32(sc + 128), b_hi = lds_f32(sc + 129);
		l0 = ra * b_lo, l1 = rb * b_lo, h0 = ra * b_hi, h1 = rb * b_hi;
		m0 = bnd == 128 ? l0 : h0, m1 = bnd == 128 ? l1 : h1;
#elif TG_SCALE == TG_SCALE_BLOCK_V
		a0 = ra, a1 = rb;
		bs = sc + 128 + 2 * (lane % 4);
#endif
		(void)sc, (void)row, (void)tn, (void)lane;
	}
	__device__ __forceinline__ void apply(float (&total)[TG_ACC], const float (&acc)[TG_ACC], u64 *empty, int tid, int lane)
	{
#if TG_SCALE == TG_SCALE_TENSOR
		if (tid == 0)
			mbar_arrive(empty);
#pragma unroll
		for (int i = 0; i < TG_ACC; i++)
			total[i] += acc[i];
#elif TG_SCALE == TG_SCALE_BLOCK_W
		__syncwarp(); // the warp's scales are read: one arrival a warp
		if (lane == 0)
			mbar_arrive(empty);
#pragma unroll
		for (int i = 0; i < TG_ACC; i++) {
			const int j = i / 4;
			const bool r1 = (i % 4) >= 2;
			total[i] = fmaf(acc[i], j < 8 ? (r1 ? l1 : l0) : j < 16 ? (r1 ? m1 : m0) : (r1 ? h1 : h0), total[i]);
		}
#else
#pragma unroll
		for (int j = 0; j < TG_ACC / 4; j++) {
			const float2 b = lds_f32x2(bs + 8 * j);
			const int i = 4 * j;
			total[i] = fmaf(acc[i], a0 * b.x, total[i]);
			total[i + 1] = fmaf(acc[i + 1], a0 * b.y, total[i + 1]);
			total[i + 2] = fmaf(acc[i + 2], a1 * b.x, total[i + 2]);
			total[i + 3] = fmaf(acc[i + 3], a1 * b.y, total[i + 3]);
		}
		__syncwarp(); // the warp's scales are read: one arrival a warp
		if (lane == 0)
			mbar_arrive(empty);
#endif
		(void)tid;
	}
};
#endif

// One k block (kt, on ring stage st of phase ph) of consumer warpgroup cw: wait for the stage, issue its four wgmma
// (descriptors: stage st's, as offsets from da0 and db0), then promote the group into total (TG_PROMOTE: the two
// consumers take turns issuing, named barriers 3 and 4, so the tensor cores run one warpgroup's group while the
// other waits for its own and promotes it; consumer 1 arrives on barrier 3 once before its first k block and
// consumer 0 waits on it once after its last, so every k block passes both barriers unconditionally) or hand
// the previous stage back to the producer (prev).
__device__ __forceinline__ void consumer_kblock(float (&acc)[TG_ACC], float (&total)[TG_ACC], u64 *full, u64 *empty,
	const float *ssc, u32 da0, u32 db0, int kt, int st, u32 ph, int cw, int warp, int lane, int tid, int tn, int &prev)
{
	mbar_wait(&full[st], ph);
#if TG_PROMOTE
	bar_sync(3 + cw, 256);
#endif
	const u32 so = st * (TG_STAGE_BYTES / 16);
	wgmma_fence();
	tg_wgmma_k128(acc, sw128_desc_of(da0 + so), sw128_desc_of(db0 + so), !TG_PROMOTE && kt > 0); // 4 k steps of 32 bytes
	wgmma_commit();
#if TG_PROMOTE
	bar_arrive(3 + (cw ^ 1), 256); // the other consumer's turn
	Promotion pr;
	pr.load(ssc + st * TG_SC_STAGE, cw * 64 + warp * 16 + lane / 4, tn, lane);
	wgmma_wait<0>(); // this 128 of K is summed: promote it into the FP32 total
	pr.apply(total, acc, &empty[st], tid, lane);
	(void)prev;
#else
	wgmma_wait<1>(); // the previous k-tile's group is done: its stage goes back to the producer
	if (prev >= 0 && tid == 0)
		mbar_arrive(&empty[prev]);
	prev = st;
	(void)ssc, (void)cw, (void)warp, (void)lane, (void)tn;
#endif
}

extern "C" __global__ void __launch_bounds__(TG_THREADS, 1) TG_KERNEL(const __grid_constant__ TgTensorMap ta,
	const __grid_constant__ TgTensorMap tb, const __grid_constant__ TgTensorMap tb2, const __grid_constant__ TgTensorMap td,
	const __grid_constant__ TgTensorMap tact, const __grid_constant__ TgTensorMap tact_t, void *D, int M, int N, int K, const float *sa, const float *sb, int raster,
	int use_tma_store, const __grid_constant__ TgParams ep)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL) // wgmma and setmaxnreg are sm_90a's; the runtime launches this on sm_90 only
	extern __shared__ u8 smem_raw[];
	u8 *smem = (u8 *)(((size_t)smem_raw + 1023) & ~(size_t)1023);
	u8 *sout = smem + TG_STAGES * TG_STAGE_BYTES;
	float *ssc = (float *)(sout + TG_TILE_OUT_BYTES); // block scales: TG_SC_STAGE floats a stage
	u64 *full = (u64 *)(ssc + TG_STAGES * TG_SC_STAGE), *empty = full + TG_STAGES;
#if TG_EPI != TG_EPI_NONE
	u64 *sfull = empty + TG_STAGES, *sempty = sfull + 1; // the epilogue's staging tile
#endif
	const int wg = threadIdx.x / 128, tid = threadIdx.x % 128;
	if (threadIdx.x == 0) {
		for (int s = 0; s < TG_STAGES; s++) {
			mbar_init(&full[s], TG_SCALE ? 33 : 1);   // the producer's expect_tx (block scales: + each lane's cp.async)
			mbar_init(&empty[s], TG_SCALE ? 8 : 2); // each consumer warpgroup (block scales: each consumer warp, done with them)
		}
#if TG_EPI != TG_EPI_NONE
		mbar_init(sfull, 256); // every consumer thread, its staging written
		mbar_init(sempty, TG_THREADS - 384 > 0 ? TG_THREADS - 384 : 96); // every epilogue thread (DG_NE with the dglu epilogue), the staging read
#endif
		asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
	}
	__syncthreads();
	// with TG_EPI 1 (TG_BN 256, N = 2C) these are ceil(C / 128) tiles of 128 gate and 128 linear columns
	const int tiles_m = (M + TG_GEMM_BM - 1) / TG_GEMM_BM, tiles_n = (N + TG_BN - 1) / TG_BN;
	const int ktiles = (K + TG_GEMM_BK - 1) / TG_GEMM_BK, ntiles = tiles_m * tiles_n;
	if (wg == 0) { // the producer (thread 0) and, with an epilogue, the epilogue warps (1-3)
#if TG_EPI == TG_EPI_GLU
		asm volatile("setmaxnreg.dec.sync.aligned.u32 72;");
		if (tid >= 32) {
			const int e = tid - 32, C = N / 2; // act's columns
			const float s = *(const float *)ep.p[TG_P_SCALE];
			if (blockIdx.x == 0 && e == 0)
				*(float *)ep.p[TG_P_SCALE_INV] = tg_div_rn(1.0f, s);
			float amax = 0.0f;
			u32 parity = 0;
			for (int t = blockIdx.x; t < ntiles; t += gridDim.x, parity ^= 1) {
				int tm, tn;
				tg_gemm_tile(t, tiles_m, tiles_n, raster, tm, tn);
				glu_finish(e, sout, sout + TG_STAGING_BYTES, sfull, sempty, parity, s, amax, D, M, C, tm, tn, use_tma_store,
					tact, tact_t, (u8 *)ep.p[TG_P_OUT], (u8 *)ep.p[TG_P_OUT_T]);
			}
			if (e == 0)
				asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
			for (int o = 16; o > 0; o >>= 1)
				amax = fmaxf(amax, __shfl_xor_sync(0xFFFFFFFFu, amax, o));
			if (tid % 32 == 0) // max of non-negative floats == max of their bit patterns as signed ints
				asm volatile("red.global.max.s32 [%0], %1;" ::"l"(ep.p[TG_P_AMAX]), "r"(__float_as_int(amax)) : "memory");
		}
#else
		asm volatile("setmaxnreg.dec.sync.aligned.u32 40;"); // (with the dglu epilogue: the producer alone)
#endif
		if (TG_SCALE ? tid < 32 : tid == 0) { // the producer: thread 0 (block scales: warp 0, lane 0 issuing the TMA)
			int stage = 0;
			u32 phase = 0;
			for (int t = blockIdx.x; t < ntiles; t += gridDim.x) {
				int tm, tn;
				tg_gemm_tile(t, tiles_m, tiles_n, raster, tm, tn);
				for (int kt = 0; kt < ktiles; kt++) {
					mbar_wait(&empty[stage], phase ^ 1);
					u8 *sA = smem + stage * TG_STAGE_BYTES, *sB = sA + TG_A_BYTES;
#if TG_SCALE != TG_SCALE_TENSOR
					stage_scales(ssc + stage * TG_SC_STAGE, sa, sb, M, N, tm, tn, kt, ktiles, tid, &full[stage]);
					if (tid == 0) {
#endif
					mbar_expect_tx(&full[stage], TG_STAGE_BYTES);
					tma_load(&ta, sA, &full[stage], kt * TG_GEMM_BK, tm * TG_GEMM_BM);
#if TG_EPI == TG_EPI_GLU
					tma_load(&tb, sB, &full[stage], kt * TG_GEMM_BK, tn * 128);
					tma_load(&tb2, sB + 128 * TG_GEMM_BK, &full[stage], kt * TG_GEMM_BK, tn * 128);
#else
					tma_load(&tb, sB, &full[stage], kt * TG_GEMM_BK, tn * TG_BN);
#endif
#if TG_SCALE != TG_SCALE_TENSOR
					}
#endif
					if (++stage == TG_STAGES)
						stage = 0, phase ^= 1;
				}
			}
		}
#if TG_EPI == TG_EPI_DGLU
	} else if (wg == 3) { // the dglu epilogue's warpgroup
		// setmaxnreg.inc waits for registers given back in the CTA (asking for more hangs: 640 threads start at 96,
		// and consumers at 144 with the producer at 40 and two such warpgroups at 88 asked for more than was
		// given). 512 threads start at 128: the producer gives back 88 x 128, the consumers take 24 x 256 and this
		// warpgroup 40 x 128 (its h no longer copied unit to unit: 168 fit, and the consumers at 152 ran 1039-1054 us
		// against 1057-1059 at 144 / 184, H100, session 20).
		asm volatile("setmaxnreg.inc.sync.aligned.u32 " DG_EPI_REGS ";");
		const int e = threadIdx.x - 384;
		const float s = *(const float *)ep.p[TG_PB_SCALE];
		const unsigned short *h = (const unsigned short *)ep.p[TG_PB_IN];
		const u32 stg = smem_u32(sout), st = stg + TG_STAGING_BYTES;
		if (blockIdx.x == 0 && e == 0)
			*(float *)ep.p[TG_PB_SCALE_INV] = tg_div_rn(1.0f, s);
		float amax = 0.0f, amax_u = 0.0f; // scaled (folded) and, from units that overflowed, unscaled
		u32 parity = 0;
		int tm = -1, tn = -1;
		uint4 av[4], bv[4]; // the h of the thread's next unit
		if ((int)blockIdx.x < ntiles) {
			tg_gemm_tile(blockIdx.x, tiles_m, tiles_n, raster, tm, tn);
			dglu_load_h(h, e, M, N, tm, tn, av, bv);
		}
		for (int t = blockIdx.x; t < ntiles; t += gridDim.x, parity ^= 1) {
			int tm2 = -1, tn2 = -1;
			if (t + (int)gridDim.x < ntiles)
				tg_gemm_tile(t + gridDim.x, tiles_m, tiles_n, raster, tm2, tn2);
			dglu_finish(e, stg, st, sfull, sempty, parity, s, amax, amax_u, M, N, tm, tn, tm2, tn2, av, bv, use_tma_store, tact,
				tact_t, h, (u8 *)ep.p[TG_PB_OUT], (u8 *)ep.p[TG_PB_OUT_T]);
			tm = tm2, tn = tn2;
		}
		if (e == 0)
			asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
		for (int o = 16; o > 0; o >>= 1) {
			amax = fmaxf(amax, __shfl_xor_sync(0xFFFFFFFFu, amax, o));
			amax_u = fmaxf(amax_u, __shfl_xor_sync(0xFFFFFFFFu, amax_u, o));
		}
		amax = fmaxf(tg_div_rn(amax, s), amax_u); // the amax of the scaled values (dglu_row), unscaled
		if (tid % 32 == 0) // max of non-negative floats == max of their bit patterns as signed ints
			asm volatile("red.global.max.s32 [%0], %1;" ::"l"(ep.p[TG_PB_AMAX]), "r"(__float_as_int(amax)) : "memory");
#endif
	} else { // the consumers: rows 64 * (wg - 1) of each tile
#if TG_EPI == TG_EPI_GLU
		asm volatile("setmaxnreg.inc.sync.aligned.u32 216;"); // 72 x 128 + 216 x 256 <= 64K registers
		u32 sparity = 0;
#elif TG_EPI == TG_EPI_DGLU
		asm volatile("setmaxnreg.inc.sync.aligned.u32 " DG_CONSUMER_REGS ";"); // (at 136 the promotion spilled)
		u32 sparity = 0;
#else
		asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
#endif
		const int cw = wg - 1, warp = tid / 32, lane = tid % 32;
#if TG_SCALE == TG_SCALE_TENSOR
		const float alpha = sa[0] * sb[0];
#else
		const float alpha = 1.0f; // the scales are applied as each 128 of K is promoted
#endif
		int stage = 0;
		u32 phase = 0;
		float acc[TG_ACC];
#if TG_PROMOTE
		float total[TG_ACC];
#else
		float (&total)[TG_ACC] = acc;
#endif
		// the stage's operand descriptors, as low words: A's rows of this consumer and B, stage 0, then per stage
		// TG_STAGE_BYTES further on (computed once: building them from addresses took ~40 instructions a k block)
		const u32 da0 = sw128_lo(smem + cw * 64 * TG_GEMM_BK), db0 = sw128_lo(smem + TG_A_BYTES);
		if (TG_PROMOTE && cw == 1)
			bar_arrive(3, 256); // consumer 0's first k block goes first
		for (int t = blockIdx.x; t < ntiles; t += gridDim.x) {
			int tm, tn;
			tg_gemm_tile(t, tiles_m, tiles_n, raster, tm, tn);
			int prev = -1; // the stage whose wgmma group may still be in flight
#if TG_PROMOTE
#pragma unroll
			for (int i = 0; i < TG_ACC; i++)
				total[i] = 0.0f; // once a tile: a select per element in every k block cost more than the adds
#endif
			// the ring's stage at a tile's start is 0 when ktiles is a multiple of TG_STAGES (every tile takes the
			// same number): then the k loop is unrolled over the ring, each stage a constant (its barrier and
			// descriptor offsets folded: fewer instructions a k block, whose issue slots the promoting consumers
			// share with the epilogue warps). Per-tensor scales only: with block scales it spilled at TG_SCALE 2,
			// TG_BN 192 (488 bytes, 5x slower), and TG_SCALE 1 gained at most 2-3% inside the kernel's 8% spread
			// between runs (H100, twenty-first session).
			if (TG_SCALE == TG_SCALE_TENSOR && ktiles % TG_STAGES == 0) {
				for (int kt = 0; kt < ktiles; kt += TG_STAGES, phase ^= 1)
#pragma unroll
					for (int st = 0; st < TG_STAGES; st++)
						consumer_kblock(acc, total, full, empty, ssc, da0, db0, kt + st, st, phase, cw, warp, lane, tid, tn,
							prev);
			} else {
				for (int kt = 0; kt < ktiles; kt++) {
					consumer_kblock(acc, total, full, empty, ssc, da0, db0, kt, stage, phase, cw, warp, lane, tid, tn, prev);
					if (++stage == TG_STAGES)
						stage = 0, phase ^= 1;
				}
			}
			wgmma_wait<0>();
			if (prev >= 0 && tid == 0)
				mbar_arrive(&empty[prev]);
			// fragment i: row 16 warp + lane/4 (+8 for i%4 >= 2), column 8 (i/4) + 2 (lane%4) + (i%2)
#if TG_EPI != TG_EPI_NONE
			epi_stage(total, alpha, cw, warp, lane, sout, sfull, sempty, sparity);
			sparity ^= 1;
			if (TG_EPI != TG_EPI_DGLU || !D)
				continue;
			// the dglu epilogue's D (d_act, kept for the checker or another op): from the registers, below (the
			// runtime passes no TG_TMA_D with it), so the epilogue warps' loop has no D branch
#endif
			if (use_tma_store & TG_TMA_D) { // this consumer's 64 x TG_BN as TG_NSLABS slabs of 64 rows x 128 bytes
				u8 *so = sout + cw * (TG_TILE_OUT_BYTES / 2);
				if (tid == 0)
					asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory"); // the last tile's stores have read so
				bar_sync(1 + cw, 128);
#pragma unroll
				for (int i = 0; i < TG_ACC; i += 2) {
					const int r = warp * 16 + lane / 4 + ((i % 4) >= 2 ? 8 : 0), c = 8 * (i / 4) + 2 * (lane % 4);
					const int byte = c * TG_OUT_BYTES, slab = byte / 128, chunk = (byte % 128) / 16;
					*reinterpret_cast<TgOutPair *>(so + slab * 8192 + r * 128 + ((chunk ^ (r % 8)) * 16) + byte % 16) =
						out_pair(total[i] * alpha, total[i + 1] * alpha);
				}
				asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
				bar_sync(1 + cw, 128);
				if (tid == 0) {
#pragma unroll
					for (int slab = 0; slab < TG_NSLABS; slab++)
						tma_store(&td, so + slab * 8192, tn * TG_BN + TG_SLAB_COLS * slab, tm * TG_GEMM_BM + cw * 64);
					asm volatile("cp.async.bulk.commit_group;" ::: "memory");
				}
				continue;
			}
			const int r0 = tm * TG_GEMM_BM + cw * 64 + warp * 16 + lane / 4;
#pragma unroll
			for (int i = 0; i < TG_ACC; i += 2) {
				const int r = r0 + ((i % 4) >= 2 ? 8 : 0), c = tn * TG_BN + 8 * (i / 4) + 2 * (lane % 4);
				if (r >= M)
					continue;
				if (c + 1 < N && N % 2 == 0 && ((size_t)D % 8) == 0)
					*reinterpret_cast<TgOutPair *>((u8 *)D + ((size_t)r * N + c) * TG_OUT_BYTES) =
						out_pair(total[i] * alpha, total[i + 1] * alpha);
				else {
					if (c < N)
						store_one(D, (size_t)r * N + c, total[i] * alpha);
					if (c + 1 < N)
						store_one(D, (size_t)r * N + c + 1, total[i + 1] * alpha);
				}
			}
		}
		if (TG_PROMOTE && cw == 0)
			bar_sync(3, 256); // consumer 1's arrival after its last k block
		if (tid == 0)
			asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
	}
#else
	__trap();
#endif
}
