/* gemm_gen.c: the generated FP8 GEMM's host side: variant names, shape rules, TMA
 * descriptors and the launch (see gemm_gen.h and templates/gemm_fp8.cu). */
#include "gemm_gen.h"
#include "tg_backward.h" /* TG_PB_*: the dglu epilogue's pointers */

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define GEN_BM 128 /* output rows a tile (two consumer warpgroups of 64) */
#define GEN_BK 128 /* bytes of K a stage */
#define GEN_THREADS 384      /* gemm_fp8.cu's TG_THREADS: the producer and two consumer warpgroups */
#define GEN_THREADS_DGLU 512 /* ... and with TG_EPI 2 the dglu epilogue's warpgroup */

static int out_bytes(int t) { return t == DT_F32 ? 4 : 2; }

int gemm_gen_tile_parse(const char *v, GemmGenTile *t)
{
	int used = 0;
	if (!v || sscanf(v, "n%ds%d%n", &t->bn, &t->stages, &used) != 2)
		return -1;
	const char *f = v + used;
	t->promote = *f == 'p';
	t->glu = 0;
	t->dglu = 0;
	t->scale = 0;
	if (f[t->promote])
		return -1;
	return (t->bn == 128 || t->bn == 192 || t->bn == 256) && t->stages >= 2 && t->stages <= 8 ? 0 : -1;
}

size_t gemm_gen_smem_bytes(const GemmGenTile *t, int d_dtype)
{
	/* the GLU epilogue: the staging tile (128 x bn of d_dtype) and the FP8 act tile (128 x 128 bytes);
	 * the dglu epilogue: the staging tile and two columnwise tiles (bn x 64 bytes: d_h's gate and linear halves,
	 * 64 tokens at a time) */
	size_t tile = (size_t)GEN_BM * t->bn * out_bytes(d_dtype) + (t->glu ? (size_t)GEN_BM * 128 : 0) +
		(t->dglu ? 2 * (size_t)t->bn * 64 : 0);
	size_t scales = t->scale ? (size_t)t->stages * (GEN_BM + t->bn) * sizeof(float) : 0; /* A's and B's, a stage */
	return (size_t)t->stages * (GEN_BM + t->bn) * GEN_BK + tile + scales + 1024 + 256;
}

int gemm_gen_scale_of(const GemmDesc *d)
{
	if (d->scale_mode == GEMM_SCALE_TENSOR)
		return 0;
	if (d->scale_mode == GEMM_SCALE_BLOCK && !d->a_block128x128)
		return d->b_block128x128 ? 1 : 2;
	return -1;
}

int gemm_gen_check(const GemmDesc *d, const GemmArgs *a, char *why, size_t whylen)
{
	const char *no = NULL;
	if (!cu.cuTensorMapEncodeTiled)
		no = "the CUDA driver has no cuTensorMapEncodeTiled";
	else if (d->m < 1 || d->n < 1 || d->k < 1 || d->k % 16)
		no = "K a multiple of 16 (TMA rows are 16-byte aligned)";
	else if ((d->lda && d->lda != d->k) || (d->ldb && d->ldb != d->k))
		no = "rows K elements apart (no padded row stride)";
	else if ((uintptr_t)a->a % 16 || (uintptr_t)a->b % 16 || !a->a_scale_inv || !a->b_scale_inv)
		no = "16-byte aligned A and B, and their scale_inv";
	if (no && why && whylen)
		snprintf(why, whylen, "%s", no);
	return no ? -1 : 0;
}

int gemm_gen_dglu_check(const GemmDesc *d, const GemmArgs *a, const GemmGenEpi *epi)
{
	const TgParams *p = epi->p;
	return d->n % 8 || !p->p[TG_PB_IN] || (uintptr_t)p->p[TG_PB_IN] % 16 || (uintptr_t)p->p[TG_PB_OUT] % 8 ||
		(uintptr_t)p->p[TG_PB_OUT_T] % 8 || (uintptr_t)a->d % 8 ? -1 : 0;
}

int gemm_gen_pays(const GemmDesc *d, const GemmGenTile *t, int sms)
{
	if (t->scale)
		return 0; /* block scales: 0.76-0.94x of cuBLASLt's block-scaled GEMM (H100, twenty-first session) */
	long tiles = (long)((d->m + GEN_BM - 1) / GEN_BM) * ((d->n + t->bn - 1) / t->bn);
	return d->n >= 16384 && tiles >= 4L * (sms > 0 ? sms : 1);
}

/* A 2D descriptor of a row-major [rows][cols] tensor of esize-byte elements whose rows lie pitch elements apart
 * (0: cols), box (box_bytes of columns) x box_rows, swizzled in box_bytes (128 or 64) rows. */
static CUresult map2d_pitch(TgTensorMap *m, int dtype, const void *p, long rows, long cols, long pitch, int esize,
	int box_rows, int box_bytes)
{
	unsigned long long dims[2] = {(unsigned long long)cols, (unsigned long long)rows};
	unsigned long long strides[1] = {(unsigned long long)(pitch ? pitch : cols) * (unsigned long long)esize};
	unsigned box[2] = {(unsigned)box_bytes / (unsigned)esize, (unsigned)box_rows}, es[2] = {1, 1};
	return cu.cuTensorMapEncodeTiled(m, dtype, 2, (void *)p, dims, strides, box, es, 0,
		box_bytes == 64 ? TG_CU_TENSOR_MAP_SWIZZLE_64B : TG_CU_TENSOR_MAP_SWIZZLE_128B, TG_CU_TENSOR_MAP_L2_PROMOTION_L2_256B, 0);
}
/* The same with 128-byte boxes and unpadded rows (the operands, D, act). */
static CUresult map2d(TgTensorMap *m, int dtype, const void *p, long rows, long cols, int esize, int box_rows)
{
	return map2d_pitch(m, dtype, p, rows, cols, 0, esize, box_rows, 128);
}

int gemm_gen_launch(CUfunction f, const GemmGenTile *t, int sms, const GemmDesc *d, const GemmArgs *a,
	const GemmGenEpi *epi, CUstream s, char *err, size_t errlen)
{
	const int ob = out_bytes(d->d_dtype);
	TgTensorMap ta, tb, tb2 = {{0}}, td = {{0}}, tact = {{0}}, tact_t = {{0}};
	const long cols = t->glu ? d->n / 2 : d->n; /* the output columns: act's with the GLU epilogue */
	const unsigned char *act = t->glu ? (const unsigned char *)epi->p->p[TG_P_OUT] : NULL;
	/* [cols][M]; dglu: d_h's columnwise copy [2N][M], its gate half rows [0, N), the linear half [N, 2N) */
	const unsigned char *act_t = t->glu || t->dglu ? (const unsigned char *)epi->p->p[TG_P_OUT_T] : NULL;
	CUresult r = map2d(&ta, TG_CU_TENSOR_MAP_DATA_TYPE_UINT8, a->a, d->m, d->k, 1, GEN_BM);
	if (!r && t->glu) { /* the gate rows [0, N/2) and the linear rows [N/2, N) of B, 128 each a tile */
		r = map2d(&tb, TG_CU_TENSOR_MAP_DATA_TYPE_UINT8, a->b, cols, d->k, 1, 128);
		if (!r)
			r = map2d(&tb2, TG_CU_TENSOR_MAP_DATA_TYPE_UINT8, (const unsigned char *)a->b + (size_t)cols * (size_t)d->k,
				cols, d->k, 1, 128);
	} else if (!r)
		r = map2d(&tb, TG_CU_TENSOR_MAP_DATA_TYPE_UINT8, a->b, d->n, d->k, 1, t->bn);
	/* a TMA store needs 16-byte rows and a 16-byte aligned output; else the kernel stores from registers
	 * (bit 1: D, or act's rowwise copy; bit 2: act's columnwise copy; gemm_fp8.cu TG_TMA_D, TG_TMA_ACT_T) */
	int use_tma_store = t->glu ? cols % 16 == 0 && (uintptr_t)act % 16 == 0
		: (long)d->n * ob % 16 == 0 && (uintptr_t)a->d % 16 == 0;
	if (t->dglu)
		use_tma_store = 0; /* d_h's rowwise copy and D from registers */
	const long pm = TG_PITCH((long)d->m); /* act_t's line length: the tokens rounded up to 16 (tg_kernel.h) */
	if (act_t && (uintptr_t)act_t % 16 == 0) {
		use_tma_store |= 2;
		if (!r && t->dglu) { /* each half its own map, so that a tile's stores clip at the half's last row; boxes of
			                    64 tokens x 64 rows (the epilogue writes a tile's columnwise copy 64 tokens at a time) */
			r = map2d_pitch(&tact, TG_CU_TENSOR_MAP_DATA_TYPE_UINT8, act_t, cols, d->m, pm, 1, 64, 64);
			if (!r)
				r = map2d_pitch(&tact_t, TG_CU_TENSOR_MAP_DATA_TYPE_UINT8, act_t + (size_t)cols * (size_t)pm, cols, d->m, pm,
					1, 64, 64);
		} else if (!r)
			r = map2d_pitch(&tact_t, TG_CU_TENSOR_MAP_DATA_TYPE_UINT8, act_t, cols, d->m, pm, 1, 64, 128);
	}
	if (!r && (use_tma_store & 1) && t->glu)
		r = map2d(&tact, TG_CU_TENSOR_MAP_DATA_TYPE_UINT8, act, d->m, cols, 1, 64);
	else if (!r && (use_tma_store & 1))
		r = map2d(&td, d->d_dtype == DT_F32 ? TG_CU_TENSOR_MAP_DATA_TYPE_FLOAT32
			: d->d_dtype == DT_F16 ? TG_CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : TG_CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
			a->d, d->m, d->n, ob, 64);
	if (r)
		return gemm_fail(err, errlen, GEMM_ECUDA, "gemm (generated): cuTensorMapEncodeTiled: %s (M=%d N=%d K=%d)",
			cudrv_errstr(r), d->m, d->n, d->k);
	long tiles_m = (d->m + GEN_BM - 1) / GEN_BM, tiles = tiles_m * ((d->n + t->bn - 1) / t->bn); /* GLU: ceil(cols / 128) */
	/* tile order, measured on the H100 (bench/RESULTS.md, issue 22): groups of 16 M tiles, N fastest
	 * in a group; M fastest when there are at most two groups (B then streams once) */
	int raster = tiles_m <= 32 ? 0 : 2;
	unsigned grid = (unsigned)(tiles < sms ? tiles : sms);
	void *dp = (t->glu || t->dglu) && !epi->write_d ? NULL : a->d;
	int m = d->m, n = d->n, k = d->k;
	const float *sa = a->a_scale_inv, *sb = a->b_scale_inv;
	TgParams ep;
	if (t->glu || t->dglu)
		ep = *epi->p;
	else
		memset(&ep, 0, sizeof ep);
	void *args[] = {&ta, &tb, &tb2, &td, &tact, &tact_t, &dp, &m, &n, &k, &sa, &sb, &raster, &use_tma_store, &ep};
	r = cu.cuLaunchKernel(f, grid, 1, 1, t->dglu ? GEN_THREADS_DGLU : GEN_THREADS, 1, 1,
		(unsigned)gemm_gen_smem_bytes(t, d->d_dtype), s, args, NULL);
	if (r)
		return gemm_fail(err, errlen, GEMM_ECUDA, "gemm (generated): launch: %s", cudrv_errstr(r));
	return GEMM_OK;
}
