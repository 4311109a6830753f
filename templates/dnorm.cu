// dnorm.cu: RMSNorm / LayerNorm backward: d_in and the chunk partials of d_gamma (d_beta).
// tegen-slots: TG_KERNEL TG_IN_DTYPE TG_G_DTYPE TG_W_DTYPE TG_OUT_DTYPE TG_R_DTYPE TG_VEC TG_THREADS TG_COLS TG_NORM TG_ZERO_CENTERED TG_HAS_DRES TG_PASSES
//
// From the forward's saved x [rows][TG_COLS] (TG_IN_DTYPE; the residual sum when the forward
// added one), rsigma [rows] and mu [rows] (FP32, LayerNorm only), gamma [TG_COLS]
// (TG_W_DTYPE; weight gamma + 1 when TG_ZERO_CENTERED) and d_out [rows][TG_COLS]
// (TG_G_DTYPE), plus with TG_HAS_DRES the residual stream's gradient d_res (TG_R_DTYPE):
//     d_in = rs * ((dyg - m1) - xhat * m2) (+ d_res)        (TG_OUT_DTYPE)
// with tg_backward.h's per-element formulas and row sums in its tree order, and the chunk
// partials of d_gamma (sum of dy * xhat) and, for LayerNorm, d_beta (sum of dy): one row of
// TG_COLS floats per chunk of TG_BWD_CHUNK rows, rows summed in order. dreduce.cu then
// sums the partials (tg_backward.h's order). Bit-exact with ref_dnorm / ref_dnorm_partials for
// every TG_THREADS / TG_VEC / grid.
// TG_NORM: 0 RMSNorm, 1 LayerNorm. Pointer slots (tg_backward.h): TG_PB_IN x, TG_PB_GAMMA,
// TG_PB_GRAD d_out, TG_PB_DRES, TG_PB_RSIGMA, TG_PB_MU, TG_PB_OUT d_in, TG_PB_DW d_gamma
// partials and TG_PB_DB d_beta partials ([ceil(rows/TG_BWD_CHUNK)][TG_COLS]; NULL skips).
//
// Launch: block (TG_THREADS,1,1), grid.x = min(ceil(rows / TG_BWD_CHUNK), cap); any
// grid.x >= 1 is correct (grid-stride over chunks). n[0] = rows.
// A CTA takes one chunk at a time, in one of two ways (the same bits):
// TG_PASSES 1 (dn_one_pass below): the CTA on one row at a time, rows in registers.
// TG_PASSES 2: phase 1, warp per row: the two row sums. Lane L holds
// the vectors v = L + 32 i; each vector's pairwise subtree, an xor butterfly over the 32
// lanes (a subtree of 32 vectors), and a pairwise tree over i: exactly the tree over the
// row's elements. Phase 2, thread per column vector: the chunk's rows in order (re-read,
// from L2), d_in written, the partials accumulated in registers and written once.
#include "tg_formats.h"
#include "tg_recipe.h"
#include "tg_kernel.h"
#include "tg_rowvec.h"
#include "tg_backward.h"

#if TG_NORM != 0 && TG_NORM != 1
#error "dnorm.cu: TG_NORM must be 0 (rms) or 1 (layer)"
#endif
#if TG_PASSES != 1 && TG_PASSES != 2
#error "dnorm.cu: TG_PASSES must be 1 (rows in registers) or 2 (statistics, then a column walk)"
#endif

#define DN_CAT2(a, b) a##b
#define DN_CAT(a, b) DN_CAT2(a, b)
namespace DN_CAT(dn_ns_, TG_KERNEL) {

constexpr int DN_VEC = TG_VEC;
constexpr int DN_COLS = TG_COLS;
constexpr int DN_NVEC = DN_COLS / DN_VEC;
constexpr int DN_R = TG_BWD_CHUNK;
constexpr int DN_NW = TG_THREADS / 32;
constexpr int DN_NI = (DN_NVEC + 31) / 32; // vector groups per lane in phase 1
constexpr int dn_pow2(int n) { return n <= 1 ? 1 : 2 * dn_pow2((n + 1) / 2); }
constexpr int DN_NIP = dn_pow2(DN_NI); // leaves padded to a power of two
constexpr float DN_INV_COLS = 1.0f / DN_COLS; // RN(1/cols), evaluated by the compiler (IEEE)
// rows of phase 2 in flight per thread: 4 under 256 threads, else 2 (more registers than
// that spilled at 256 and 512 threads; at 1024 threads, 64 registers, keep vectors at 16 bytes)
constexpr int DN_UNROLL = TG_THREADS >= 256 ? 2 : 4;

static_assert(DN_COLS % DN_VEC == 0, "TG_VEC must divide TG_COLS");
static_assert((DN_VEC & (DN_VEC - 1)) == 0 && DN_VEC >= 2, "TG_VEC must be a power of two >= 2");
static_assert(DN_VEC * (TG_IN_DTYPE == TG_DTYPE_F32 ? 4 : 2) <= 32 && DN_VEC * (TG_G_DTYPE == TG_DTYPE_F32 ? 4 : 2) <= 32 &&
              DN_VEC * (TG_W_DTYPE == TG_DTYPE_F32 ? 4 : 2) <= 32 && DN_VEC * (TG_OUT_DTYPE == TG_DTYPE_F32 ? 4 : 2) <= 32 &&
              DN_VEC * (TG_R_DTYPE == TG_DTYPE_F32 ? 4 : 2) <= 32,
              "vectors must be <= 32 bytes");
static_assert(TG_THREADS % 32 == 0 && TG_THREADS <= 1024, "TG_THREADS must be a multiple of 32, <= 1024");

// The pairwise subtree of a vector's N elements (N a power of two).
template <int N> __device__ __forceinline__ float dn_vec_tree(float (&e)[N])
{
#pragma unroll
	for (int w = 1; w < N; w *= 2)
#pragma unroll
		for (int k = 0; k + w < N; k += 2 * w)
			e[k] = tg__add_rn(e[k], e[k + w]);
	return e[0];
}

// Sum over the 32 lanes by xor butterfly (every lane gets the subtree of the 32 leaves).
__device__ __forceinline__ float dn_lane_tree(float v)
{
#pragma unroll
	for (int o = 1; o < 32; o *= 2)
		v = tg__add_rn(v, __shfl_xor_sync(0xFFFFFFFFu, v, o));
	return v;
}

// Leaf i of phase 1 for row r: the subtree of the 32 vectors lane + 32 i (each vector's
// pairwise subtree, then the xor butterfly over the lanes) of dyg (*l1, LayerNorm) and
// dyg * xhat (*l2). Warp-wide; vectors past the row are -0.
__device__ __forceinline__ void dn_leaf(const TgParams &p, long long r, float mu, float rs, int lane, int i, float &l1,
                                        float &l2)
{
	const int v = lane + 32 * i;
	l1 = -0.0f;
	l2 = -0.0f;
	if (DN_NVEC % 32 == 0 || v < DN_NVEC) {
		float x[DN_VEC], dy[DN_VEC], w[DN_VEC], e1[DN_VEC], e2[DN_VEC];
		tg_load_vec<TG_IN_DTYPE, DN_VEC>(p.p[TG_PB_IN], r * DN_COLS + (long long)v * DN_VEC, x);
		tg_load_vec<TG_G_DTYPE, DN_VEC>(p.p[TG_PB_GRAD], r * DN_COLS + (long long)v * DN_VEC, dy);
		tg_load_vec<TG_W_DTYPE, DN_VEC>(p.p[TG_PB_GAMMA], (long long)v * DN_VEC, w);
#pragma unroll
		for (int k = 0; k < DN_VEC; k++) {
			e1[k] = tg__mul_rn(dy[k], tg_dnorm_weight(w[k], TG_ZERO_CENTERED));
			e2[k] = tg__mul_rn(e1[k], tg_dnorm_xhat(x[k], mu, rs));
		}
		if (TG_NORM == 1)
			l1 = dn_vec_tree<DN_VEC>(e1);
		l2 = dn_vec_tree<DN_VEC>(e2);
	}
	if (TG_NORM == 1)
		l1 = dn_lane_tree(l1);
	l2 = dn_lane_tree(l2);
}

// The pairwise tree over the leaves [I, I + N) (N a power of two; leaves >= DN_NI are -0,
// so a subtree past them is its left half), depth first: registers for log2(N) partials.
template <int I, int N> struct DnTree {
	static __device__ __forceinline__ void sum(const TgParams &p, long long r, float mu, float rs, int lane, float &s1,
	                                           float &s2)
	{
		if constexpr (N == 1) {
			dn_leaf(p, r, mu, rs, lane, I, s1, s2);
		} else if constexpr (I + N / 2 >= DN_NI) {
			DnTree<I, N / 2>::sum(p, r, mu, rs, lane, s1, s2);
		} else {
			float a1, a2, b1, b2;
			DnTree<I, N / 2>::sum(p, r, mu, rs, lane, a1, a2);
			DnTree<I + N / 2, N / 2>::sum(p, r, mu, rs, lane, b1, b2);
			s1 = tg__add_rn(a1, b1);
			s2 = tg__add_rn(a2, b2);
		}
	}
};

// Phase 1 for row r: *m1 = tree(dyg) * (1/cols) (LayerNorm), *m2 = tree(dyg*xhat) * (1/cols). Warp-wide.
__device__ __forceinline__ void dn_row_sums(const TgParams &p, long long r, float mu, float rs, int lane, float *m1,
                                            float *m2)
{
	float s1, s2;
	DnTree<0, DN_NIP>::sum(p, r, mu, rs, lane, s1, s2);
	*m1 = TG_NORM == 1 ? tg_dnorm_mean(s1, DN_INV_COLS) : 0.0f;
	*m2 = tg_dnorm_mean(s2, DN_INV_COLS);
}

__device__ __forceinline__ void dn_chunks(const TgParams &p)
{
	__shared__ float s_rs[DN_R], s_mu[DN_R], s_m1[DN_R], s_m2[DN_R];
	const long long rows = p.n[0];
	const long long nchunks = (rows + DN_R - 1) / DN_R;
	const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
	float *pg = (float *)p.p[TG_PB_DW];
	float *pb = TG_NORM == 1 ? (float *)p.p[TG_PB_DB] : (float *)0;
	for (long long ch = blockIdx.x; ch < nchunks; ch += gridDim.x) {
		const long long r0 = ch * DN_R;
		// phase 1: row statistics, warp per row
		for (int rr = warp; rr < DN_R; rr += DN_NW) {
			const long long r = r0 + rr;
			if (r >= rows)
				break;
			const float rs = ((const float *)p.p[TG_PB_RSIGMA])[r];
			const float mu = TG_NORM == 1 ? ((const float *)p.p[TG_PB_MU])[r] : 0.0f;
			float m1, m2;
			dn_row_sums(p, r, mu, rs, lane, &m1, &m2);
			if (lane == 0) {
				s_rs[rr] = rs;
				s_mu[rr] = mu;
				s_m1[rr] = m1;
				s_m2[rr] = m2;
			}
		}
		__syncthreads();
		// phase 2: thread per column vector, the chunk's rows in order
		const int nr = rows - r0 < DN_R ? (int)(rows - r0) : DN_R;
		for (int v = threadIdx.x; v < DN_NVEC; v += TG_THREADS) {
			const int c = v * DN_VEC;
			float w[DN_VEC], ag[DN_VEC], ab[DN_VEC];
			tg_load_vec<TG_W_DTYPE, DN_VEC>(p.p[TG_PB_GAMMA], c, w);
#pragma unroll
			for (int k = 0; k < DN_VEC; k++) {
				w[k] = tg_dnorm_weight(w[k], TG_ZERO_CENTERED);
				ag[k] = ab[k] = -0.0f;
			}
#pragma unroll DN_UNROLL
			for (int rr = 0; rr < nr; rr++) {
				const long long e = (r0 + rr) * DN_COLS + c;
				const float rs = s_rs[rr], mu = s_mu[rr], m1 = s_m1[rr], m2 = s_m2[rr];
				float x[DN_VEC], dy[DN_VEC], dx[DN_VEC], dr[DN_VEC];
				tg_load_vec<TG_IN_DTYPE, DN_VEC>(p.p[TG_PB_IN], e, x);
				tg_load_vec<TG_G_DTYPE, DN_VEC>(p.p[TG_PB_GRAD], e, dy);
				if (TG_HAS_DRES)
					tg_load_vec<TG_R_DTYPE, DN_VEC>(p.p[TG_PB_DRES], e, dr);
#pragma unroll
				for (int k = 0; k < DN_VEC; k++) {
					const float xh = tg_dnorm_xhat(x[k], mu, rs);
					dx[k] = tg_dnorm_dx(tg__mul_rn(dy[k], w[k]), xh, rs, m1, m2);
					if (TG_HAS_DRES)
						dx[k] = tg__add_rn(dx[k], dr[k]);
					ag[k] = tg__add_rn(ag[k], tg__mul_rn(dy[k], xh));
					if (TG_NORM == 1)
						ab[k] = tg__add_rn(ab[k], dy[k]);
				}
				tg_store_hp<TG_OUT_DTYPE, DN_VEC>(p.p[TG_PB_OUT], e, dx);
			}
			if (pg)
				tg_store_keep<DN_VEC>(pg, ch * DN_COLS + c, ag);
			if (TG_NORM == 1 && pb)
				tg_store_keep<DN_VEC>(pb, ch * DN_COLS + c, ab);
		}
		__syncthreads(); // the next chunk rewrites the statistics
	}
}

/* ---------------- one pass (TG_PASSES 1) ---------------- */
// The CTA walks a chunk's rows in order, all its threads on one row: thread t holds the
// vectors v = j * TG_THREADS + t (j < DN_NJ) of x and dy in registers (the next row's
// loads in flight meanwhile), so x and dy are read once. Row sums in the tree order: each
// vector's subtree, the xor butterfly over the lanes, the warps' partials through shared
// memory (a pairwise tree over the warp index: TG_THREADS a power of two), then a pairwise
// tree over j. d_gamma / d_beta accumulate per thread in row order: the same partials.
constexpr int DN_NJ = (DN_NVEC + TG_THREADS - 1) / TG_THREADS; // vectors per thread
constexpr int DN_NJP = dn_pow2(DN_NJ);
static_assert(TG_PASSES != 1 || (TG_THREADS & (TG_THREADS - 1)) == 0, "one pass: TG_THREADS must be a power of two");

// Pairwise tree over leaf(LO..LO+SIZE-1) (SIZE a power of two), leaves >= N are -0.
template <int LO, int SIZE, int N, typename F> __device__ __forceinline__ float dn_ptree(const F &leaf)
{
	if constexpr (SIZE == 1)
		return leaf(LO);
	else if constexpr (LO + SIZE / 2 >= N)
		return dn_ptree<LO, SIZE / 2, N>(leaf);
	else
		return tg__add_rn(dn_ptree<LO, SIZE / 2, N>(leaf), dn_ptree<LO + SIZE / 2, SIZE / 2, N>(leaf));
}

__device__ __forceinline__ void dn_load_row(const TgParams &p, long long r, bool rv, tg_rvec<TG_IN_DTYPE, DN_VEC> (&xr)[DN_NJ],
                                            tg_rvec<TG_G_DTYPE, DN_VEC> (&gr)[DN_NJ])
{
#pragma unroll
	for (int j = 0; j < DN_NJ; j++) {
		const int v = j * TG_THREADS + threadIdx.x;
		if (rv && (DN_NVEC % TG_THREADS == 0 || v < DN_NVEC)) {
			tg_load_raw<TG_IN_DTYPE, DN_VEC>(p.p[TG_PB_IN], r * DN_COLS + (long long)v * DN_VEC, xr[j]);
			tg_load_raw<TG_G_DTYPE, DN_VEC>(p.p[TG_PB_GRAD], r * DN_COLS + (long long)v * DN_VEC, gr[j]);
		} else {
			tg_zero_raw<TG_IN_DTYPE, DN_VEC>(xr[j]);
			tg_zero_raw<TG_G_DTYPE, DN_VEC>(gr[j]);
		}
	}
}

__device__ __forceinline__ void dn_one_pass(const TgParams &p)
{
	__shared__ float red[2][2][DN_NJ][DN_NW]; // [row parity][sum][j][warp]
	const long long rows = p.n[0];
	const long long nchunks = (rows + DN_R - 1) / DN_R;
	const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
	float *pg = (float *)p.p[TG_PB_DW];
	float *pb = TG_NORM == 1 ? (float *)p.p[TG_PB_DB] : (float *)0;
	float w[DN_NJ][DN_VEC];
#pragma unroll
	for (int j = 0; j < DN_NJ; j++) {
		const int v = j * TG_THREADS + threadIdx.x;
		tg_load_vec<TG_W_DTYPE, DN_VEC>(p.p[TG_PB_GAMMA], (DN_NVEC % TG_THREADS == 0 || v < DN_NVEC) ? v * DN_VEC : 0, w[j]);
#pragma unroll
		for (int k = 0; k < DN_VEC; k++)
			w[j][k] = tg_dnorm_weight(w[j][k], TG_ZERO_CENTERED);
	}
	tg_rvec<TG_IN_DTYPE, DN_VEC> xr[DN_NJ];
	tg_rvec<TG_G_DTYPE, DN_VEC> gr[DN_NJ];
	int par = 0;
	for (long long ch = blockIdx.x; ch < nchunks; ch += gridDim.x) {
		const long long r0 = ch * DN_R;
		const int nr = rows - r0 < DN_R ? (int)(rows - r0) : DN_R;
		float ag[DN_NJ][DN_VEC], ab[DN_NJ][DN_VEC];
#pragma unroll
		for (int j = 0; j < DN_NJ; j++)
#pragma unroll
			for (int k = 0; k < DN_VEC; k++)
				ag[j][k] = ab[j][k] = -0.0f;
		dn_load_row(p, r0, true, xr, gr);
		for (int rr = 0; rr < nr; rr++, par ^= 1) {
			const long long r = r0 + rr;
			float x[DN_NJ][DN_VEC], dy[DN_NJ][DN_VEC];
#pragma unroll
			for (int j = 0; j < DN_NJ; j++) {
				tg_cvt_raw<TG_IN_DTYPE, DN_VEC>(xr[j], x[j]);
				tg_cvt_raw<TG_G_DTYPE, DN_VEC>(gr[j], dy[j]);
			}
			dn_load_row(p, r + 1, rr + 1 < nr, xr, gr); // in flight during this row
			const float rs = ((const float *)p.p[TG_PB_RSIGMA])[r];
			const float mu = TG_NORM == 1 ? ((const float *)p.p[TG_PB_MU])[r] : 0.0f;
#pragma unroll
			for (int j = 0; j < DN_NJ; j++) {
				const int v = j * TG_THREADS + threadIdx.x;
				float l1 = -0.0f, l2 = -0.0f;
				if (DN_NVEC % TG_THREADS == 0 || v < DN_NVEC) {
					float e1[DN_VEC], e2[DN_VEC];
#pragma unroll
					for (int k = 0; k < DN_VEC; k++) {
						e1[k] = tg__mul_rn(dy[j][k], w[j][k]);
						e2[k] = tg__mul_rn(e1[k], tg_dnorm_xhat(x[j][k], mu, rs));
					}
					if (TG_NORM == 1)
						l1 = dn_vec_tree<DN_VEC>(e1);
					l2 = dn_vec_tree<DN_VEC>(e2);
				}
				if (TG_NORM == 1)
					l1 = dn_lane_tree(l1);
				l2 = dn_lane_tree(l2);
				if (lane == 0) {
					red[par][0][j][warp] = l1;
					red[par][1][j][warp] = l2;
				}
			}
			__syncthreads(); // one per row: the partials of row rr + 2 go to this buffer again
			float s1 = -0.0f;
			if (TG_NORM == 1)
				s1 = dn_ptree<0, DN_NJP, DN_NJ>([&](int j) {
					return dn_ptree<0, DN_NW, DN_NW>([&](int wi) { return red[par][0][j][wi]; });
				});
			const float s2 = dn_ptree<0, DN_NJP, DN_NJ>([&](int j) {
				return dn_ptree<0, DN_NW, DN_NW>([&](int wi) { return red[par][1][j][wi]; });
			});
			const float m1 = TG_NORM == 1 ? tg_dnorm_mean(s1, DN_INV_COLS) : 0.0f;
			const float m2 = tg_dnorm_mean(s2, DN_INV_COLS);
#pragma unroll
			for (int j = 0; j < DN_NJ; j++) {
				const int v = j * TG_THREADS + threadIdx.x;
				if (!(DN_NVEC % TG_THREADS == 0 || v < DN_NVEC))
					continue;
				const long long e = r * DN_COLS + (long long)v * DN_VEC;
				float dx[DN_VEC], dr[DN_VEC];
				if (TG_HAS_DRES)
					tg_load_vec<TG_R_DTYPE, DN_VEC>(p.p[TG_PB_DRES], e, dr);
#pragma unroll
				for (int k = 0; k < DN_VEC; k++) {
					const float xh = tg_dnorm_xhat(x[j][k], mu, rs);
					dx[k] = tg_dnorm_dx(tg__mul_rn(dy[j][k], w[j][k]), xh, rs, m1, m2);
					if (TG_HAS_DRES)
						dx[k] = tg__add_rn(dx[k], dr[k]);
					ag[j][k] = tg__add_rn(ag[j][k], tg__mul_rn(dy[j][k], xh));
					if (TG_NORM == 1)
						ab[j][k] = tg__add_rn(ab[j][k], dy[j][k]);
				}
				tg_store_hp<TG_OUT_DTYPE, DN_VEC>(p.p[TG_PB_OUT], e, dx);
			}
		}
#pragma unroll
		for (int j = 0; j < DN_NJ; j++) {
			const int v = j * TG_THREADS + threadIdx.x;
			if (!(DN_NVEC % TG_THREADS == 0 || v < DN_NVEC))
				continue;
			if (pg)
				tg_store_keep<DN_VEC>(pg, ch * DN_COLS + (long long)v * DN_VEC, ag[j]);
			if (TG_NORM == 1 && pb)
				tg_store_keep<DN_VEC>(pb, ch * DN_COLS + (long long)v * DN_VEC, ab[j]);
		}
	}
}

extern "C" __global__ void __launch_bounds__(TG_THREADS) TG_KERNEL(const TgParams p)
{
	TG_LAUNCH_DEPENDENTS(); // a dreduce after it may launch (Kernel.pdl)
#if TG_PASSES == 1
	dn_one_pass(p);
#else
	dn_chunks(p);
#endif
}

} // namespace
