/* harness_bwd.cu: correctness (and speed) of the backward templates dglu.cu, dnorm.cu,
 * dbias.cu and dreduce.cu, standalone (CUDA runtime API), against ref/backward.c.
 *
 * The instances are tests/gpu/harness_bwd.list (every GLU activation x input dtype x width
 * 512 / 160 / 208, FP32 and BF16 outputs, the quantized d_h copies rowwise and columnwise, the fused
 * dbias of h; RMSNorm and LayerNorm x
 * input dtype x width, zero-centered, residual gradient, one and two passes, several tile variants; dbias;
 * dreduce), turned into #include blocks by tests/gpu/gen_harness_bwd.sh. For rows 1, 5, 217, 256,
 * 993 (and 4133 for dnorm and dbias: many chunks), each with a full grid and a 3-CTA grid
 * (grid-stride), device outputs are poisoned (0xA5, plus a guard zone behind each) and then
 * compared with the reference: bit for bit (any NaN equals any NaN) for d_h, d_in, the
 * chunk partials, d_gamma, d_beta, dbias (through dreduce.cu), and the FP8 bytes, scales,
 * scale_inv and amax of the quantized copies. Inputs hold special values (0, +-inf, NaN, the
 * clamp edges, large and subnormal values). Then, unless --no-bench, the bench instances are
 * timed (median of 20) at the Llama-3 8B shapes against a 1 GiB device-to-device copy. First, for every FP32
 * input (2^32), the sigmoid's branch-free GPU path against the definition it replaced (run_exhaustive).
 * Prints ok/FAIL lines; "skip harness_bwd: no GPU" without a device. Exit 1 on a failure.
 * Build and run: bench/run_bwd.sh. Usage: harness_bwd [--no-bench] [--only SUBSTR]
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
#include "backward.h"
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
struct DgInst { const char *name; KernFn fn; int act, in_dt, g_dt, out_dt, fmt, recipe, roww, colw, dbias, vec, thr, rpc, cols; float eps; int pow2, bench; };
struct DnInst { const char *name; KernFn fn; int norm, in_dt, g_dt, w_dt, out_dt, vec, thr, cols, zc, dres, passes, bench; };
struct DbInst { const char *name; KernFn fn; int in_dt, vec, thr, cols, bench; };
struct DrInst { const char *name; KernFn fn; int thr, acc; };

#include "harness_bwd_inst.inc"

static int g_fail = 0, g_ok = 0;
static const char *g_only = nullptr;
static const size_t GUARD = 64;
static const unsigned char POISON = 0xA5;
static const float LIMIT = 7.0f, ALPHA = 1.702f;

static int esize(int dt) { return dt == 0 ? 4 : 2; }
static long long cdivl(long long a, long long b) { return (a + b - 1) / b; }

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
	void put(const void *h) { CK(cudaMemcpy(d, h, n, cudaMemcpyHostToDevice)); }
	~DBuf() { if (d) cudaFree(d); }
};

/* Compare device bytes with expected host bytes, elements of elem bytes; float elements
 * (elem 4, is_float) compare NaN-equal; the guard zone must still hold the poison. */
// The planner's grid for a dglu instance: a CTA per row block; the tile path (a columnwise copy
// or dbias) times its column slices of 16 steps (dglu.cu's DG_NS; row_grid_cols in gen/plan_launch.c).
static int dg_grid(const DgInst &k, long long rows)
{
	const bool tile = (k.colw || k.dbias) && k.recipe != 3;
	const int rpc = tile && k.rpc % 32 ? 32 : k.rpc;
	const long long sw = tile ? (long long)k.thr / rpc * k.vec * 16 : 0;
	const long long g = cdivl(rows, rpc) * (tile ? cdivl(k.cols, sw) : 1);
	return (int)std::min<long long>(g, 132 * 32);
}

static bool cmp(const char *what, const char *kname, long long rows, int grid, const DBuf &b, const void *want,
                int elem, bool is_float, long long line = 0, long long pitch = 0)
{
	std::vector<unsigned char> got(b.n + GUARD);
	CK(cudaMemcpy(got.data(), b.d, b.n + GUARD, cudaMemcpyDeviceToHost));
	const unsigned char *w = (const unsigned char *)want;
	/* elements compared per line, a line's elements on the device (line > 0: a columnwise copy [cols][pitch],
	 * pitch = TG_PITCH(rows), against the packed reference [cols][line]; the padding is never compared), lines */
	const size_t le = line > 0 ? (size_t)line : b.n / elem, pe = line > 0 ? (size_t)pitch : b.n / elem;
	const size_t nl = pe ? b.n / elem / pe : 0;
	size_t bad = 0, first = (size_t)-1, first_g = 0;
	for (size_t l = 0; l < nl; l++)
		for (size_t i = 0; i < le; i++) {
			const size_t e = l * le + i, g = l * pe + i; /* the element in want, in got */
			if (memcmp(&got[g * elem], w + e * elem, elem) == 0)
				continue;
			if (is_float) {
				float x, y;
				memcpy(&x, &got[g * elem], 4);
				memcpy(&y, w + e * elem, 4);
				if (isnan(x) && isnan(y))
					continue;
			}
			if (first == (size_t)-1)
				first = e, first_g = g;
			bad++;
		}
	size_t gbad = 0;
	for (size_t i = b.n; i < b.n + GUARD; i++)
		gbad += got[i] != POISON;
	if (bad || gbad) {
		g_fail++;
		printf("FAIL bwd/%s rows=%lld grid=%d %s: %zu/%zu elements differ, %zu guard bytes written", kname, rows, grid,
		       what, bad, nl * le, gbad);
		if (bad) {
			printf("; first at element %zu: got 0x", first);
			for (int k = elem - 1; k >= 0; k--)
				printf("%02x", got[first_g * elem + k]);
			printf(" want 0x");
			for (int k = elem - 1; k >= 0; k--)
				printf("%02x", w[first * elem + k]);
		}
		printf("\n");
		return false;
	}
	return true;
}

static bool cmp_f32(const char *what, const char *kname, long long rows, int grid, float got_v, float want)
{
	if (memcmp(&got_v, &want, 4) == 0 || (isnan(got_v) && isnan(want)))
		return true;
	g_fail++;
	printf("FAIL bwd/%s rows=%lld grid=%d %s: got %a want %a\n", kname, rows, grid, what, got_v, want);
	return false;
}

static float dget(const DBuf &b, size_t off = 0)
{
	float v;
	CK(cudaMemcpy(&v, b.d + off, 4, cudaMemcpyDeviceToHost));
	return v;
}

static bool selected(const char *name) { return !g_only || strstr(name, g_only); }

/* Values of dtype dt into raw (and their FP32 values into x), n of them, mostly N(0, sd). */
static void fill(int dt, size_t n, float sd, std::vector<unsigned char> &raw, std::vector<float> &x)
{
	raw.resize(n * esize(dt));
	x.resize(n);
	for (size_t i = 0; i < n; i++)
		ref_store(raw.data(), dt, i, nrand() * sd);
	for (size_t i = 0; i < n; i++)
		x[i] = ref_load(raw.data(), dt, i);
}
static void poke(std::vector<unsigned char> &raw, std::vector<float> &x, int dt, size_t i, float v)
{
	if (i < x.size()) {
		ref_store(raw.data(), dt, i, v);
		x[i] = ref_load(raw.data(), dt, i);
	}
}

/* ---- dreduce (used by dglu, dnorm and dbias) ---- */

/* Runs dreduce instance k on device partials [nk][cols] into out (poisoned first, or
 * preset to init[] when accumulating). */
static void reduce_on_device(const DrInst &k, const DBuf &part, long long nk, int cols, DBuf &out, const float *init,
                             int grid)
{
	out.poison();
	if (k.acc)
		CK(cudaMemcpy(out.d, init, (size_t)cols * 4, cudaMemcpyHostToDevice));
	TgParams p;
	memset(&p, 0, sizeof p);
	p.p[TG_PB_DW] = part.d;
	p.p[TG_PB_OUT] = out.d;
	p.n[0] = nk;
	p.n[1] = cols;
	k.fn<<<grid, k.thr>>>(p);
	CK(cudaGetLastError());
	CK(cudaDeviceSynchronize());
}

/* Checks both dreduce instances on the partials part (host copy hpart) against ref_chunk_reduce. */
static bool check_reduce(const char *what, const char *kname, long long rows, int grid, const DBuf &part,
                         const std::vector<float> &hpart, long long nk, int cols)
{
	bool ok = true;
	std::vector<float> init(cols), want(cols);
	for (int c = 0; c < cols; c++)
		init[c] = nrand();
	DBuf out;
	out.alloc((size_t)cols * 4);
	for (const DrInst &r : dr_insts) {
		want = init;
		ref_chunk_reduce(hpart.data(), (int)nk, cols, r.acc, want.data());
		reduce_on_device(r, part, nk, cols, out, init.data(), grid);
		char w[96];
		snprintf(w, sizeof w, "%s via %s", what, r.name);
		ok = cmp(w, kname, rows, grid, out, want.data(), 4, true) && ok;
	}
	return ok;
}

/* ---- dglu ---- */

/* ties (recipe 3, the amax pass): d_act chosen so that every |d_h| element (d_a in even columns, d_b in odd ones)
 * lies within an ulp or two of d_act's dtype of one magnitude a row (1, 1e-30, 1e25, 3e-38 in turn): the amax is
 * then decided among many near-equal candidates in every warp. */
static void run_dglu(const DgInst &k, long long rows, bool ties = false)
{
	char kn[160]; /* the instance's name in ok and FAIL lines */
	snprintf(kn, sizeof kn, "%s%s", k.name, ties ? "/ties" : "");
	const int C = k.cols;
	const size_t nh = (size_t)rows * 2 * C, ng = (size_t)rows * C;
	std::vector<unsigned char> hraw, graw;
	std::vector<float> hx, gx;
	fill(k.in_dt, nh, 3.0f, hraw, hx);
	fill(k.g_dt, ng, 1.0f, graw, gx);
	if (ties) {
		for (long long r = 0; r < rows; r++)
			for (int c = 0; c < C; c++) {
				static const float mag[] = {1.0f, 1e-30f, 1e25f, 3e-38f};
				const int halves = TG_ACT_GATED(k.act) ? 2 : 1;
				float a, b, da, db;
				ref_glu_pair(hraw.data(), k.in_dt, halves, (size_t)r, c, C, &a, &b);
				tg_dglu1(k.act, a, b, 1.0f, LIMIT, ALPHA, &da, &db);
				const float d = halves == 2 && (c & 1) ? db : da;
				if (isfinite(d) && d != 0.0f)
					poke(graw, gx, k.g_dt, (size_t)r * C + c, mag[r % 4] / d);
			}
	} else { /* special values, gate and linear halves: 0, +-inf, NaN, the clamp edges, big, subnormal */
		const float sp[] = {0.0f, -0.0f, INFINITY, -INFINITY, nanf(""), LIMIT, -LIMIT, nextafterf(LIMIT, 100.0f),
		                    -nextafterf(LIMIT, 100.0f), 200.0f, -200.0f, 1e-40f, 3e19f, -3e19f, 60000.0f};
		const int nsp = sizeof sp / sizeof sp[0];
		for (long long r = 0; r < rows; r += 3)
			for (int j = 0; j < 4; j++) {
				size_t c = (size_t)((r * 7 + j * 37) % C);
				poke(hraw, hx, k.in_dt, (size_t)r * 2 * C + c, sp[(r + j) % nsp]);
				poke(hraw, hx, k.in_dt, (size_t)r * 2 * C + C + (c + 5) % C, sp[(r + 2 * j + 1) % nsp]);
			}
	}
	if (ng > 9)
		poke(graw, gx, k.g_dt, 9, 0.0f);
	std::vector<float> dh(nh);
	ref_dglu(k.act, hraw.data(), k.in_dt, graw.data(), k.g_dt, (int)rows, C, LIMIT, ALPHA, dh.data());

	const int R = (int)rows, C2 = 2 * C;
	const float fmax = k.fmt == 0 ? TG_E4M3_MAX : TG_E5M2_MAX;
	float amax = ref_amax(dh.data(), nh);
	float scale = k.recipe == 2 ? tg_current_scale(amax, fmax, k.eps, k.pow2) : 0.5f;
	/* expected outputs (the columnwise copy: the transpose [2C][rows]) */
	std::vector<unsigned char> want_out, want_si, want_t, want_sit;
	size_t out_b = 0, si_b = 0, t_b = 0, sit_b = 0;
	if (k.recipe == 0) {
		out_b = nh * esize(k.out_dt);
		want_out.resize(out_b);
		for (size_t i = 0; i < nh; i++)
			ref_store(want_out.data(), k.out_dt, i, dh[i]);
	} else if (k.recipe == 1 || k.recipe == 2) {
		out_b = nh;
		want_out.resize(out_b);
		want_t.resize(nh);
		ref_quant_tensor(dh.data(), R, C2, k.fmt, scale, want_out.data(), want_t.data(), nullptr, nullptr);
		if (k.colw)
			t_b = nh;
	} else if (k.recipe == 4) {
		out_b = nh;
		si_b = (size_t)cdivl(C2, 128) * R * 4;
		want_out.resize(out_b);
		want_si.resize(si_b);
		want_t.resize(nh);
		want_sit.resize((size_t)cdivl(R, 128) * C2 * 4);
		ref_quant_block1x128(dh.data(), R, C2, k.fmt, k.eps, k.pow2, want_out.data(), (float *)want_si.data(),
		                     want_t.data(), (float *)want_sit.data());
		if (k.colw) /* the block tile path: both copies' 1x128 blocks */
			t_b = nh, sit_b = want_sit.size();
	} else if (k.recipe == 6) {
		out_b = nh;
		si_b = (size_t)R * cdivl(C2, 32);
		want_out.resize(out_b);
		want_si.resize(si_b);
		want_t.resize(nh);
		want_sit.resize((size_t)cdivl(R, 32) * C2);
		ref_quant_mxfp8(dh.data(), R, C2, k.fmt, want_out.data(), want_si.data(), want_t.data(), want_sit.data());
		if (k.colw)
			t_b = nh, sit_b = want_sit.size();
	}
	if (!k.roww)
		out_b = si_b = 0;
	const long long nk = ref_nchunks(R);
	std::vector<float> dbp;
	DBuf dpart;
	if (k.dbias) {
		dbp.resize((size_t)nk * C2);
		ref_chunk_partials(dh.data(), R, C2, dbp.data());
		dpart.alloc(dbp.size() * 4);
	}
	DBuf din, dg, dout, dsi, dscale, dsinv, damax, dout_t, dsi_t;
	const long long pt = TG_PITCH(rows); /* the columnwise copy's line: [2C][pt] FP8 bytes on the device */
	if (t_b)
		dout_t.alloc((size_t)C2 * pt);
	if (sit_b)
		dsi_t.alloc(sit_b);
	din.alloc(hraw.size());
	din.put(hraw.data());
	dg.alloc(graw.size());
	dg.put(graw.data());
	if (out_b)
		dout.alloc(out_b);
	if (si_b)
		dsi.alloc(si_b);
	dscale.alloc(4);
	dsinv.alloc(4);
	damax.alloc(4);
	const int grids[2] = {dg_grid(k, rows), 3};
	bool ok = true;
	for (int gi = 0; gi < 2; gi++) {
		int grid = std::max(1, std::min(grids[gi], grids[0]));
		if (out_b)
			dout.poison();
		if (si_b)
			dsi.poison();
		if (t_b)
			dout_t.poison();
		if (k.dbias)
			dpart.poison();
		if (sit_b)
			dsi_t.poison();
		dscale.poison();
		dsinv.poison();
		float zero = 0.0f;
		if (k.recipe == 1)
			CK(cudaMemcpy(dscale.d, &scale, 4, cudaMemcpyHostToDevice));
		if (k.recipe == 2)
			CK(cudaMemcpy(damax.d, &amax, 4, cudaMemcpyHostToDevice));
		else
			CK(cudaMemcpy(damax.d, &zero, 4, cudaMemcpyHostToDevice));
		TgParams p;
		memset(&p, 0, sizeof p);
		p.p[TG_PB_IN] = din.d;
		p.p[TG_PB_GRAD] = dg.d;
		p.p[TG_PB_OUT] = dout.d;
		p.p[TG_PB_OUT_T] = dout_t.d;
		p.p[TG_PB_DW] = dpart.d;
		p.p[TG_PB_SCALE_INV_T] = dsi_t.d;
		p.p[TG_PB_SCALE] = dscale.d;
		p.p[TG_PB_SCALE_INV] = k.recipe == 4 || k.recipe == 6 ? (void *)dsi.d : (void *)dsinv.d;
		p.p[TG_PB_AMAX] = damax.d;
		p.n[0] = rows;
		p.n[1] = C2;
		k.fn<<<grid, k.thr>>>(p);
		CK(cudaGetLastError());
		CK(cudaDeviceSynchronize());
		if (out_b)
			ok = cmp("d_h", kn, rows, grid, dout, want_out.data(), k.recipe == 0 ? esize(k.out_dt) : 1,
			         k.recipe == 0 && k.out_dt == 0) && ok;
		if (si_b)
			ok = cmp("scale_inv", kn, rows, grid, dsi, want_si.data(), k.recipe == 4 ? 4 : 1, k.recipe == 4) && ok;
		if (t_b)
			ok = cmp("d_h columnwise", kn, rows, grid, dout_t, want_t.data(), 1, false, rows, pt) && ok;
		if (sit_b)
			ok = cmp("scale_inv_t", kn, rows, grid, dsi_t, want_sit.data(), k.recipe == 4 ? 4 : 1, k.recipe == 4) && ok;
		if (k.dbias) {
			ok = cmp("dbias partials", kn, rows, grid, dpart, dbp.data(), 4, true) && ok;
			ok = check_reduce("dbias", kn, rows, grid, dpart, dbp, nk, C2) && ok;
		}
		if (k.recipe == 1 || k.recipe == 3)
			ok = cmp_f32("amax", kn, rows, grid, dget(damax), amax) && ok;
		if (k.recipe == 1 || k.recipe == 2)
			ok = cmp_f32("scale_inv", kn, rows, grid, dget(dsinv), tg_scale_inv(scale)) && ok;
		if (k.recipe == 2)
			ok = cmp_f32("scale", kn, rows, grid, dget(dscale), scale) && ok;
	}
	if (ok) {
		g_ok++;
		printf("ok bwd/%s/rows%lld\n", kn, rows);
	}
}

/* ---- dnorm ---- */

static void run_dnorm(const DnInst &k, long long rows)
{
	const int C = k.cols, R = (int)rows;
	const size_t n = (size_t)rows * C;
	const long long nk = ref_nchunks(R);
	std::vector<unsigned char> xraw, graw, rraw, wraw;
	std::vector<float> xx, gx, rx, w;
	fill(k.in_dt, n, 2.0f, xraw, xx);
	if (k.norm)
		for (size_t i = 0; i < n; i++)
			poke(xraw, xx, k.in_dt, i, xx[i] + 0.75f);
	fill(k.g_dt, n, 1.0f, graw, gx);
	fill(k.g_dt, n, 0.1f, rraw, rx);
	fill(k.w_dt, (size_t)C, k.zc ? 0.2f : 1.0f, wraw, w);
	/* special values: a NaN gradient (poisons its row and column), an infinite one,
	 * zero gradients, subnormal x */
	if (rows >= 5) {
		poke(graw, gx, k.g_dt, (size_t)3 * C + 5, nanf(""));
		poke(graw, gx, k.g_dt, (size_t)4 * C + 1, INFINITY);
	}
	for (int c = 0; c < C && rows > 2; c++)
		poke(graw, gx, k.g_dt, (size_t)2 * C + c, 0.0f);
	poke(xraw, xx, k.in_dt, n / 2, 1e-40f);
	std::vector<float> rs(R), mu(R), din(n), pg((size_t)nk * C), pb((size_t)nk * C);
	ref_norm_stats(k.norm, xraw.data(), k.in_dt, R, C, 1e-5f, mu.data(), rs.data());
	ref_dnorm(k.norm, xraw.data(), k.in_dt, rs.data(), k.norm ? mu.data() : nullptr, w.data(), k.zc, graw.data(),
	          k.dres ? rraw.data() : nullptr, k.g_dt, k.g_dt, R, C, din.data(), nullptr, nullptr);
	ref_dnorm_partials(k.norm, xraw.data(), k.in_dt, rs.data(), k.norm ? mu.data() : nullptr, graw.data(), k.g_dt, R,
	                   C, pg.data(), pb.data());
	std::vector<unsigned char> want_in(n * esize(k.out_dt));
	for (size_t i = 0; i < n; i++)
		ref_store(want_in.data(), k.out_dt, i, din[i]);

	DBuf dx, dgr, dres, dw, drs, dmu, dout, dpg, dpb;
	dx.alloc(xraw.size());
	dx.put(xraw.data());
	dgr.alloc(graw.size());
	dgr.put(graw.data());
	dres.alloc(rraw.size());
	dres.put(rraw.data());
	dw.alloc(wraw.size());
	dw.put(wraw.data());
	drs.alloc((size_t)R * 4);
	drs.put(rs.data());
	dmu.alloc((size_t)R * 4);
	dmu.put(mu.data());
	dout.alloc(want_in.size());
	dpg.alloc((size_t)nk * C * 4);
	dpb.alloc((size_t)nk * C * 4);
	const int grids[2] = {(int)nk, 3};
	bool ok = true;
	for (int gi = 0; gi < 2; gi++) {
		int grid = std::max(1, std::min(grids[gi], grids[0]));
		dout.poison();
		dpg.poison();
		dpb.poison();
		TgParams p;
		memset(&p, 0, sizeof p);
		p.p[TG_PB_IN] = dx.d;
		p.p[TG_PB_GAMMA] = dw.d;
		p.p[TG_PB_GRAD] = dgr.d;
		p.p[TG_PB_DRES] = k.dres ? dres.d : nullptr;
		p.p[TG_PB_RSIGMA] = drs.d;
		p.p[TG_PB_MU] = k.norm ? dmu.d : nullptr;
		p.p[TG_PB_OUT] = dout.d;
		p.p[TG_PB_DW] = dpg.d;
		p.p[TG_PB_DB] = k.norm ? dpb.d : nullptr;
		p.n[0] = rows;
		p.n[1] = C;
		k.fn<<<grid, k.thr>>>(p);
		CK(cudaGetLastError());
		CK(cudaDeviceSynchronize());
		ok = cmp("d_in", k.name, rows, grid, dout, want_in.data(), esize(k.out_dt), k.out_dt == 0) && ok;
		ok = cmp("d_gamma partials", k.name, rows, grid, dpg, pg.data(), 4, true) && ok;
		ok = check_reduce("d_gamma", k.name, rows, grid, dpg, pg, nk, C) && ok;
		if (k.norm) {
			ok = cmp("d_beta partials", k.name, rows, grid, dpb, pb.data(), 4, true) && ok;
			ok = check_reduce("d_beta", k.name, rows, grid, dpb, pb, nk, C) && ok;
		}
	}
	if (ok) {
		g_ok++;
		printf("ok bwd/%s/rows%lld\n", k.name, rows);
	}
}

/* ---- dbias ---- */

static void run_dbias(const DbInst &k, long long rows)
{
	const int C = k.cols, R = (int)rows;
	const size_t n = (size_t)rows * C;
	const long long nk = ref_nchunks(R);
	std::vector<unsigned char> graw;
	std::vector<float> gx;
	fill(k.in_dt, n, 1.0f, graw, gx);
	for (size_t i = 0; i < n; i += 97)
		poke(graw, gx, k.in_dt, i, gx[i] * 1024.0f); /* a wide range, so that the order shows */
	if (rows > 3)
		poke(graw, gx, k.in_dt, (size_t)3 * C + 2, nanf(""));
	std::vector<float> part((size_t)nk * C);
	ref_chunk_partials(gx.data(), R, C, part.data());
	DBuf dg, dpart;
	dg.alloc(graw.size());
	dg.put(graw.data());
	dpart.alloc(part.size() * 4);
	const int full = (int)std::max(1LL, cdivl(nk * (C / k.vec), k.thr));
	const int grids[2] = {full, 3};
	bool ok = true;
	for (int gi = 0; gi < 2; gi++) {
		int grid = std::max(1, std::min(grids[gi], full));
		dpart.poison();
		TgParams p;
		memset(&p, 0, sizeof p);
		p.p[TG_PB_IN] = dg.d;
		p.p[TG_PB_DW] = dpart.d;
		p.n[0] = rows;
		p.n[1] = C;
		k.fn<<<grid, k.thr>>>(p);
		CK(cudaGetLastError());
		CK(cudaDeviceSynchronize());
		ok = cmp("dbias partials", k.name, rows, grid, dpart, part.data(), 4, true) && ok;
		ok = check_reduce("dbias", k.name, rows, grid, dpart, part, nk, C) && ok;
	}
	if (ok) {
		g_ok++;
		printf("ok bwd/%s/rows%lld\n", k.name, rows);
	}
}

/* ---- speed ---- */

static float time_median(void (*launch)(void *), void *ctx)
{
	cudaEvent_t a, b;
	CK(cudaEventCreate(&a));
	CK(cudaEventCreate(&b));
	std::vector<float> t;
	launch(ctx); /* warm-up */
	for (int i = 0; i < 20; i++) {
		CK(cudaEventRecord(a));
		launch(ctx);
		CK(cudaEventRecord(b));
		CK(cudaEventSynchronize(b));
		float ms;
		CK(cudaEventElapsedTime(&ms, a, b));
		t.push_back(ms * 1000.0f);
	}
	CK(cudaGetLastError());
	std::sort(t.begin(), t.end());
	cudaEventDestroy(a);
	cudaEventDestroy(b);
	return t[t.size() / 2];
}

struct Launch { KernFn fn; int grid, thr; TgParams p; KernFn fn2; int grid2, thr2; TgParams p2; void *src, *dst; size_t bytes; };
static void launch_one(void *c)
{
	Launch *l = (Launch *)c;
	if (l->fn)
		l->fn<<<l->grid, l->thr>>>(l->p);
	if (l->fn2)
		l->fn2<<<l->grid2, l->thr2>>>(l->p2);
	if (l->src)
		CK(cudaMemcpyAsync(l->dst, l->src, l->bytes, cudaMemcpyDeviceToDevice));
}

static void bench(void)
{
	int sms;
	CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
	Launch cp;
	memset(&cp, 0, sizeof cp);
	cp.bytes = 1ull << 30;
	CK(cudaMalloc(&cp.src, cp.bytes));
	CK(cudaMalloc(&cp.dst, cp.bytes));
	CK(cudaMemset(cp.src, 0, cp.bytes));
	float tc = time_median(launch_one, &cp);
	double copy_gbs = 2.0 * cp.bytes / (tc * 1e3);
	printf("bench: 1 GiB D2D copy %.1f us, %.0f GB/s (read + write)\n", tc, copy_gbs);
	cudaFree(cp.src);
	cudaFree(cp.dst);
	std::vector<void *> bufs;
	auto dalloc = [&](size_t bytes) { void *d; CK(cudaMalloc(&d, bytes)); CK(cudaMemset(d, 0, bytes)); bufs.push_back(d); return d; };
	for (const DgInst &k : dg_insts) {
		if (!k.bench || !selected(k.name))
			continue;
		long long rows = 8192;
		size_t nh = (size_t)rows * 2 * k.cols;
		Launch l;
		memset(&l, 0, sizeof l);
		l.fn = k.fn;
		l.thr = k.thr;
		l.grid = dg_grid(k, rows);
		l.p.p[TG_PB_IN] = dalloc(nh * esize(k.in_dt));
		l.p.p[TG_PB_GRAD] = dalloc(nh / 2 * esize(k.g_dt));
		l.p.p[TG_PB_OUT] = dalloc(nh * (k.recipe == 0 ? esize(k.out_dt) : 1));
		if (k.colw) /* [2C][TG_PITCH(rows)] FP8 bytes */
			l.p.p[TG_PB_OUT_T] = dalloc((size_t)2 * k.cols * TG_PITCH(rows));
		if (k.dbias)
			l.p.p[TG_PB_DW] = dalloc((size_t)cdivl(rows, TG_BWD_CHUNK) * 2 * k.cols * 4);
		float one = 1.0f;
		l.p.p[TG_PB_SCALE] = dalloc(16);
		CK(cudaMemcpy(l.p.p[TG_PB_SCALE], &one, 4, cudaMemcpyHostToDevice));
		l.p.p[TG_PB_SCALE_INV] = dalloc(k.recipe == 6 ? (size_t)rows * cdivl(2 * k.cols, 32) : 16); /* MXFP8: E8M0 bytes */
		if (k.recipe == 6 && k.colw)
			l.p.p[TG_PB_SCALE_INV_T] = dalloc((size_t)cdivl(rows, 32) * 2 * k.cols);
		l.p.p[TG_PB_AMAX] = dalloc(16);
		l.p.n[0] = rows;
		float t = time_median(launch_one, &l);
		double bytes = nh * esize(k.in_dt) + nh / 2 * esize(k.g_dt) + nh * (k.recipe == 0 ? esize(k.out_dt) : 1) +
		               (k.colw ? nh : 0);
		printf("bench bwd/%s 8192x2x%d: %.1f us, %.0f GB/s, %.1f%% of copy\n", k.name, k.cols, t, bytes / (t * 1e3),
		       100.0 * bytes / (t * 1e3) / copy_gbs);
	}
	for (const DnInst &k : dn_insts) {
		if (!k.bench || !selected(k.name))
			continue;
		long long rows = 16384, nk = cdivl(rows, TG_BWD_CHUNK);
		size_t n = (size_t)rows * k.cols;
		Launch l;
		memset(&l, 0, sizeof l);
		l.fn = k.fn;
		l.thr = k.thr;
		l.grid = (int)nk;
		l.p.p[TG_PB_IN] = dalloc(n * esize(k.in_dt));
		l.p.p[TG_PB_GRAD] = dalloc(n * esize(k.g_dt));
		l.p.p[TG_PB_GAMMA] = dalloc((size_t)k.cols * 4);
		l.p.p[TG_PB_RSIGMA] = dalloc((size_t)rows * 4);
		l.p.p[TG_PB_MU] = dalloc((size_t)rows * 4);
		l.p.p[TG_PB_OUT] = dalloc(n * esize(k.out_dt));
		l.p.p[TG_PB_DW] = dalloc((size_t)nk * k.cols * 4);
		l.p.p[TG_PB_DB] = dalloc((size_t)nk * k.cols * 4);
		l.p.n[0] = rows;
		l.fn2 = dr_insts[0].fn;
		l.thr2 = dr_insts[0].thr;
		l.grid2 = (int)cdivl(k.cols, 32); /* the planner's grid: a CTA per 32 columns */
		l.p2.p[TG_PB_DW] = l.p.p[TG_PB_DW];
		l.p2.p[TG_PB_OUT] = dalloc((size_t)k.cols * 4);
		l.p2.n[0] = nk;
		l.p2.n[1] = k.cols;
		float t = time_median(launch_one, &l);
		double bytes = (double)n * (esize(k.in_dt) + esize(k.g_dt) + esize(k.out_dt));
		printf("bench bwd/%s %lldx%d (+ dreduce): %.1f us, %.0f GB/s, %.1f%% of copy\n", k.name, rows, k.cols, t,
		       bytes / (t * 1e3), 100.0 * bytes / (t * 1e3) / copy_gbs);
	}
	for (const DbInst &k : db_insts) {
		if (!k.bench || !selected(k.name))
			continue;
		long long rows = 16384, nk = cdivl(rows, TG_BWD_CHUNK);
		size_t n = (size_t)rows * k.cols;
		Launch l;
		memset(&l, 0, sizeof l);
		l.fn = k.fn;
		l.thr = k.thr;
		l.grid = (int)cdivl(nk * (k.cols / k.vec), k.thr);
		l.p.p[TG_PB_IN] = dalloc(n * esize(k.in_dt));
		l.p.p[TG_PB_DW] = dalloc((size_t)nk * k.cols * 4);
		l.p.n[0] = rows;
		l.fn2 = dr_insts[0].fn;
		l.thr2 = dr_insts[0].thr;
		l.grid2 = (int)cdivl(k.cols, 32); /* the planner's grid: a CTA per 32 columns */
		l.p2.p[TG_PB_DW] = l.p.p[TG_PB_DW];
		l.p2.p[TG_PB_OUT] = dalloc((size_t)k.cols * 4);
		l.p2.n[0] = nk;
		l.p2.n[1] = k.cols;
		float t = time_median(launch_one, &l);
		double bytes = (double)n * esize(k.in_dt);
		printf("bench bwd/%s %lldx%d (+ dreduce; read only): %.1f us, %.0f GB/s\n", k.name, rows, k.cols, t,
		       bytes / (t * 1e3));
	}
	(void)sms;
	for (void *d : bufs)
		cudaFree(d);
}

/* ---- the sigmoid's branch-free GPU path, every FP32 input ---- */

/* NaN-aware equality of two results' bits (any NaN equals any NaN, as the contract says). */
__device__ bool same_bits(float a, float b)
{
	return __float_as_uint(a) == __float_as_uint(b) || (a != a && b != b);
}

/* For every 32-bit pattern u: tg_bwd_sigmoid2 (tg_bwd_exp_nonpos, tg_rcp_rn_unit) against the branchy
 * definition it replaced on the device (tg_bwd_exp, __frcp_rn); tg_rcp_rn_unit against __frcp_rn on [1, 4);
 * bad[0..2]: mismatches of s, sc, the reciprocal; first[0]: the first input whose s or sc differed. */
__global__ void exhaustive_sigmoid(unsigned long long *bad, unsigned *first)
{
	for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < (1ull << 32);
	     i += (unsigned long long)gridDim.x * blockDim.x) {
		const float z = __uint_as_float((unsigned)i);
		float s, sc;
		tg_bwd_sigmoid2(z, &s, &sc);
		const float e = tg_bwd_exp(-tg_bwd_abs(z));
		const float d = __fadd_rn(1.0f, e), p = __frcp_rn(d), q = __fmul_rn(e, p);
		const bool ok_s = same_bits(s, z >= 0.0f ? p : q), ok_sc = same_bits(sc, z >= 0.0f ? q : p);
		if (!ok_s)
			atomicAdd(&bad[0], 1ull);
		if (!ok_sc)
			atomicAdd(&bad[1], 1ull);
		if (!(ok_s && ok_sc))
			atomicMin(first, (unsigned)i);
		const unsigned du = 0x3F800000u + (unsigned)i; // [1, 4)
		if (i < (2ull << 23) && !same_bits(tg_rcp_rn_unit(__uint_as_float(du)), __frcp_rn(__uint_as_float(du))))
			atomicAdd(&bad[2], 1ull);

	}
}

static void run_exhaustive(void)
{
	if (!selected("exhaustive"))
		return;
	unsigned long long *bad;
	unsigned *first;
	CK(cudaMalloc(&bad, 3 * sizeof(unsigned long long)));
	CK(cudaMalloc(&first, sizeof(unsigned)));
	CK(cudaMemset(bad, 0, 3 * sizeof(unsigned long long)));
	CK(cudaMemset(first, 0xFF, sizeof(unsigned)));
	exhaustive_sigmoid<<<132 * 16, 256>>>(bad, first);
	CK(cudaGetLastError());
	unsigned long long h[3];
	unsigned f;
	CK(cudaMemcpy(h, bad, sizeof h, cudaMemcpyDeviceToHost));
	CK(cudaMemcpy(&f, first, sizeof f, cudaMemcpyDeviceToHost));
	CK(cudaFree(bad));
	CK(cudaFree(first));
	if (h[0] || h[1] || h[2]) {
		g_fail++;
		printf("FAIL exhaustive sigmoid: %llu s, %llu 1-s, %llu 1/d mismatches (first input 0x%08x)\n", h[0], h[1], h[2], f);
	} else {
		g_ok++;
		printf("ok exhaustive sigmoid: every FP32 z, s and 1-s as tg_bwd_exp + __frcp_rn; 1/d as __frcp_rn on [1, 4)\n");
	}
}

int main(int argc, char **argv)
{
	bool no_bench = false;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--no-bench"))
			no_bench = true;
		else if (!strcmp(argv[i], "--only") && i + 1 < argc)
			g_only = argv[++i];
	}
	int ndev = 0;
	if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
		printf("skip harness_bwd: no GPU\n");
		return 0;
	}
	run_exhaustive();
	static const long long rows_list[] = {1, 5, 217, 256, 993};
	for (const DgInst &k : dg_insts)
		if (!k.bench && selected(k.name))
			for (long long r : rows_list) {
				run_dglu(k, r);
				if (k.recipe == 3)
					run_dglu(k, r, true);
			}
	for (const DnInst &k : dn_insts)
		if (!k.bench && selected(k.name)) {
			for (long long r : rows_list)
				run_dnorm(k, r);
			run_dnorm(k, 4133);
		}
	for (const DbInst &k : db_insts)
		if (!k.bench && selected(k.name)) {
			for (long long r : rows_list)
				run_dbias(k, r);
			run_dbias(k, 4133);  /* 130 chunks: three groups of the second stage, the last partial */
			run_dbias(k, 20011); /* 626 chunks: ten groups, two rounds of dreduce's eight warps */
		}
	printf("harness_bwd: %d ok, %d FAIL\n", g_ok, g_fail);
	if (!no_bench)
		bench();
	return g_fail ? 1 : 0;
}
