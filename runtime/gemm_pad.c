/* gemm_pad.c: FP8 GEMMs of any shape on zero-padded copies (see gemm_pad.h). */
#include "gemm_pad.h"

#include <stdbool.h>
#include <stdint.h>

static bool fp8(int t) { return t == DT_E4M3 || t == DT_E5M2; }
static long up(long v, long m) { return (v + m - 1) / m * m; }
static size_t al(size_t n) { return (n + 255) & ~(size_t)255; }
static size_t d_size(int t) { return t == DT_F32 ? 4 : fp8(t) ? 1 : 2; }
/* Bytes of a bias element. */
static size_t bias_size(const GemmDesc *d) { return d_size(gemm_desc_bias_dtype(d)); }

/* The padded shape of d and where each copy lives in the scratch buffer. */
typedef struct Pad {
	long m, n, k, kb;              /* padded M', N', K' and K' blocks of 128 */
	bool a, b, sa, sb, bias, d;    /* which operands are copied */
	size_t off_a, off_b, off_sa, off_sb, off_bias, off_d, bytes;
	size_t off_small;              /* where the operand copies end: the scales, bias and D from there on */
	long m4;                       /* > 0: split at M4 = M rounded down to 4 (split_plan): of the fields above only
	                                * off_a, off_sa, off_d (the tail's A, scales, D) and bytes are used */
	size_t off_s1;                 /* split: A's scales of the first M4 rows, [kb][M4] */
} Pad;

/* Floats of an operand's block scales: 128x128 [ceil(rows/128)][kb], 1x128 [kb][rows]. */
static size_t scale_floats(int blk128, long rows, long kb) { return (size_t)(blk128 ? (rows + 127) / 128 * kb : kb * rows); }

/* An operand as stored: rows x cols elements of es bytes ([M][K], or [K][M] when transposed), rows ld elements
 * apart (ld >= cols). */
typedef struct Operand {
	long rows, cols, ld;
	size_t es;
} Operand;
static Operand operand(long mn, long k, int trans, int dtype, int ld)
{
	return trans ? (Operand){k, mn, mn, d_size(dtype)} : (Operand){mn, k, ld ? ld : k, d_size(dtype)};
}

/* High-precision inputs (GEMM_SCALE_NONE): a row-major operand's row stride (K, or M / N when transposed)
 * and D's (N) must be 16 bytes; the short ones are rounded up. FP8 (per-tensor and block): K to 16 bytes
 * (512 with 128x128 scales whose ceil(K/128) is not a multiple of 4), and rows of 1x128 scales to 4. */
static void pad_shape(const GemmDesc *d, Pad *p)
{
	size_t ea = d_size(d->a_dtype), eb = d_size(d->b_dtype);
	if (d->scale_mode == GEMM_SCALE_NONE) {
		long kq = 1, sa = d->lda ? d->lda : d->k, sb = d->ldb ? d->ldb : d->k; /* row strides (not transposed) */
		if (!d->a_trans)
			kq = sa * (long)ea % 16 ? (long)(16 / ea) : 1;
		else
			p->m = up(d->m, (long)(16 / ea));
		if (!d->b_trans && sb * (long)eb % 16)
			kq = kq > (long)(16 / eb) ? kq : (long)(16 / eb);
		else if (d->b_trans)
			p->n = up(d->n, (long)(16 / eb));
		p->k = up(d->k, kq);
	} else {
		bool block = d->scale_mode == GEMM_SCALE_BLOCK, b128 = block && (d->a_block128x128 || d->b_block128x128);
		long kb = (d->k + 127) / 128;
		p->k = b128 && kb % 4 ? up(d->k, 512) : up(d->k, 16);
		if (block && !d->a_block128x128)
			p->m = up(d->m, 4);
		if (block && !d->b_block128x128)
			p->n = up(d->n, 4);
	}
	p->n = up(p->n, (long)(16 / d_size(d->d_dtype)));
	p->kb = (p->k + 127) / 128;
}

/* A GEMM whose one broken rule is M % 4 with A's 1x128 scales (an fprop or dgrad at an odd token count) runs split:
 * rows [0, M4) in place (A and D as they are, A's scales repacked [kb][M4] at off_s1: cuBLASLt reads them at stride
 * M4), the last M - M4 rows as a padded 4-row GEMM (A's rows, their scales and D's rows copied: the small Pad fields,
 * m = 4). Padding M instead copies all of A and D: the 8B block layer's w_up fprop at 8191 tokens 2714 us against
 * 2072 at 8192 (H100, forty-second session). */
static bool split_plan(const GemmDesc *d, Pad *p)
{
	if (d->scale_mode != GEMM_SCALE_BLOCK || d->a_block128x128 || d->m < 4 || d->m % 4 == 0 || p->n != d->n ||
		p->k != d->k)
		return false;
	size_t o = 0;
	p->m4 = d->m / 4 * 4;
	p->off_s1 = o; o += al((size_t)p->kb * (size_t)p->m4 * 4);
	p->off_a = o; o += al((size_t)4 * (size_t)d->k * d_size(d->a_dtype));
	p->off_sa = o; o += al((size_t)p->kb * 4 * 4);
	p->off_d = o; o += al((size_t)4 * (size_t)d->n * d_size(d->d_dtype));
	p->bytes = o;
	return true;
}

static void pad_plan(const GemmDesc *d, Pad *p)
{
	long kb = (d->k + 127) / 128;
	*p = (Pad){d->m, d->n, d->k, kb, false, false, false, false, false, false, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
	bool block = d->scale_mode == GEMM_SCALE_BLOCK;
	bool hi = d->scale_mode == GEMM_SCALE_NONE && !fp8(d->a_dtype) && !fp8(d->b_dtype) && d->a_dtype != DT_E2M1 &&
		d->b_dtype != DT_E2M1;
	bool lo = fp8(d->a_dtype) && (d->scale_mode == GEMM_SCALE_TENSOR || block);
	if (!(hi || lo) || d->m <= 0 || d->n <= 0 || d->k <= 0)
		return;
	pad_shape(d, p);
	if ((p->m == d->m && p->n == d->n && p->k == d->k) || split_plan(d, p))
		return;
	bool kbp = p->kb != kb; /* the scales gain zero K blocks (zero data: they add nothing) */
	Operand a = operand(p->m, p->k, d->a_trans, d->a_dtype, 0), b = operand(p->n, p->k, d->b_trans, d->b_dtype, 0);
	p->a = p->m != d->m || p->k != d->k;
	p->b = p->n != d->n || p->k != d->k;
	p->sa = block && (kbp || (!d->a_block128x128 && p->m != d->m));
	p->sb = block && (kbp || (!d->b_block128x128 && p->n != d->n));
	p->d = p->m != d->m || p->n != d->n;
	p->bias = p->n != d->n && (d->epilogue == GEMM_EPI_BIAS || d->epilogue == GEMM_EPI_GELU_BIAS);
	size_t o = 0;
	if (p->a) { p->off_a = o; o += al((size_t)(a.rows * a.cols) * a.es); }
	if (p->b) { p->off_b = o; o += al((size_t)(b.rows * b.cols) * b.es); }
	p->off_small = o;
	if (p->sa) { p->off_sa = o; o += al(scale_floats(d->a_block128x128, p->m, p->kb) * 4); }
	if (p->sb) { p->off_sb = o; o += al(scale_floats(d->b_block128x128, p->n, p->kb) * 4); }
	if (p->bias) { p->off_bias = o; o += al((size_t)p->n * bias_size(d)); }
	if (p->d) { p->off_d = o; o += al((size_t)(p->m * p->n) * d_size(d->d_dtype)); }
	p->bytes = o;
}

size_t gemm_pad_bytes(const GemmDesc *d)
{
	Pad p;
	pad_plan(d, &p);
	return p.bytes;
}

/* Copy rows x width bytes from src (row stride sp) to dst (row stride dp). */
static CUresult copy2d(CUdeviceptr dst, size_t dp, CUdeviceptr src, size_t sp, size_t width, size_t rows, CUstream s)
{
	TgMemcpy2D c = {0};
	c.srcMemoryType = c.dstMemoryType = TG_CU_MEMORYTYPE_DEVICE;
	c.srcDevice = src;
	c.srcPitch = sp;
	c.dstDevice = dst;
	c.dstPitch = dp;
	c.WidthInBytes = width;
	c.Height = rows;
	return cu.cuMemcpy2DAsync_v2(&c, s);
}

static CUdeviceptr dptr(const void *p) { return (CUdeviceptr)(uintptr_t)p; }

const char gemm_pad_copy_entry[] = "tg_gemm_pad_copy";
const char gemm_pad_copy_src[] =
	"// tegen's padded GEMM operand (runtime/gemm_pad.c): dst rows [0, rows_to) of dpitch bytes (a multiple of 16):\n"
	"// row r < rows_from is src's row r (width bytes, src's rows spitch bytes apart at any alignment) then zeros; the\n"
	"// rest zeros. Thread j of a row takes the row's 16-byte chunk j: the source words holding its bytes (never a\n"
	"// word without one), funnel-shifted to the chunk, bytes past the row zeroed, one 16-byte store.\n"
	"extern \"C\" __global__ void tg_gemm_pad_copy(unsigned char *dst, const unsigned char *src,\n"
	"\tunsigned long long rows_from, unsigned long long rows_to, unsigned long long width, unsigned long long dpitch,\n"
	"\tunsigned long long spitch)\n"
	"{\n"
	"\tconst unsigned long long cpr = dpitch / 16;\n"
	"\tfor (unsigned long long r = blockIdx.y; r < rows_to; r += gridDim.y)\n"
	"\t\tfor (unsigned long long j = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; j < cpr;\n"
	"\t\t     j += (unsigned long long)gridDim.x * blockDim.x) {\n"
	"\t\t\tlong long v = r < rows_from ? (long long)width - (long long)(16 * j) : 0; // the chunk's source bytes\n"
	"\t\t\tv = v < 0 ? 0 : v > 16 ? 16 : v;\n"
	"\t\t\tunsigned w[4] = {0u, 0u, 0u, 0u};\n"
	"\t\t\tif (v > 0) {\n"
	"\t\t\t\tconst unsigned char *sp = src + r * spitch + 16 * j;\n"
	"\t\t\t\tconst int sa = (int)((unsigned long long)sp & 3), nw = (sa + (int)v + 3) / 4;\n"
	"\t\t\t\tconst unsigned *sw = (const unsigned *)(sp - sa);\n"
	"\t\t\t\tunsigned x[5];\n"
	"#pragma unroll\n"
	"\t\t\t\tfor (int q = 0; q < 5; q++)\n"
	"\t\t\t\t\tx[q] = q < nw ? __ldg(sw + q) : 0u;\n"
	"#pragma unroll\n"
	"\t\t\t\tfor (int q = 0; q < 4; q++) {\n"
	"\t\t\t\t\tconst int keep = (int)v - 4 * q; // bytes of word q inside the row\n"
	"\t\t\t\t\tconst unsigned m = keep >= 4 ? ~0u : keep <= 0 ? 0u : (1u << (8 * keep)) - 1u;\n"
	"\t\t\t\t\tw[q] = __funnelshift_r(x[q], x[q + 1], 8 * sa) & m;\n"
	"\t\t\t\t}\n"
	"\t\t\t}\n"
	"\t\t\t*(uint4 *)(dst + r * dpitch + 16 * j) = make_uint4(w[0], w[1], w[2], w[3]);\n"
	"\t\t}\n"
	"}\n";

/* Copy an operand (shape from) into its padded shape (to), the new columns and rows zero: by the copy kernel in one
 * pass, else the driver's 2D copy and memsets of the new bytes only (zeroing the whole copy first wrote every byte
 * twice; H100, the 8B MLP's wgrads at 8191 tokens). */
static CUresult copy_operand(CUdeviceptr dst, CUdeviceptr src, Operand from, Operand to, CUfunction copy, CUstream s)
{
	size_t pitch = (size_t)to.cols * to.es, width = (size_t)from.cols * from.es, spitch = (size_t)from.ld * from.es;
	if (copy) {
		unsigned long long rf = (unsigned long long)from.rows, rt = (unsigned long long)to.rows, w = width, dp = pitch;
		unsigned long long sp = spitch, cpr = dp / 16, gx = (cpr + 255) / 256, gy = rt < 2048 ? rt : 2048;
		void *args[] = {&dst, &src, &rf, &rt, &w, &dp, &sp};
		return cu.cuLaunchKernel(copy, (unsigned)(gx < 64 ? gx : 64), (unsigned)(gy ? gy : 1), 1, 256, 1, 1, 0, s, args,
			NULL);
	}
	CUresult r = copy2d(dst, pitch, src, spitch, width, (size_t)from.rows, s);
	if (!r && pitch > width)
		r = cu.cuMemsetD2D8Async(dst + width, pitch, 0, pitch - width, (size_t)from.rows, s);
	if (!r && to.rows > from.rows)
		r = cu.cuMemsetD8Async(dst + (size_t)from.rows * pitch, 0, (size_t)(to.rows - from.rows) * pitch, s);
	return r;
}

/* Copy an operand's block scales (rows, kb) into their padded layout (rows2, kb2). */
static CUresult copy_scales(CUdeviceptr dst, const float *src, int blk128, long rows, long kb, long rows2, long kb2, CUstream s)
{
	if (blk128) /* [ceil(rows/128)][kb] -> [ceil(rows2/128)][kb2]: the same row blocks, longer rows */
		return copy2d(dst, (size_t)kb2 * 4, dptr(src), (size_t)kb * 4, (size_t)kb * 4, (size_t)((rows + 127) / 128), s);
	(void)kb2; /* [kb][rows] -> [kb2][rows2]: longer rows, the extra K blocks stay zero */
	return copy2d(dst, (size_t)rows2 * 4, dptr(src), (size_t)rows * 4, (size_t)rows * 4, (size_t)kb, s);
}

/* split_plan's two GEMMs (p->m4 > 0). */
static int run_split(GemmCtx *g, const GemmDesc *d, const GemmArgs *a, const Pad *p, CUdeviceptr scratch, CUstream s,
	char *err, size_t errlen)
{
	const long m4 = p->m4, r = d->m - m4, kb = p->kb;
	const size_t ea = d_size(d->a_dtype), ds = d_size(d->d_dtype), lda = (size_t)(d->lda ? d->lda : d->k) * ea;
	const CUdeviceptr sa = dptr(a->a_scale_inv), dd = dptr(a->d) + (size_t)m4 * (size_t)d->n * ds;
	/* the tail's copies: A's last r rows then zeros, their scales [kb][4] (zeros past r), D's rows (with accumulate
	 * C's, or D's own) */
	CUresult cr = cu.cuMemsetD8Async(scratch + p->off_a, 0, p->off_d - p->off_a, s);
	if (!cr)
		cr = copy2d(scratch + p->off_s1, (size_t)m4 * 4, sa, (size_t)d->m * 4, (size_t)m4 * 4, (size_t)kb, s);
	if (!cr)
		cr = copy2d(scratch + p->off_a, (size_t)d->k * ea, dptr(a->a) + (size_t)m4 * lda, lda, (size_t)d->k * ea,
			(size_t)r, s);
	if (!cr)
		cr = copy2d(scratch + p->off_sa, 16, sa + (size_t)m4 * 4, (size_t)d->m * 4, (size_t)r * 4, (size_t)kb, s);
	if (!cr && d->accumulate)
		cr = copy2d(scratch + p->off_d, (size_t)d->n * ds, (a->c ? dptr(a->c) + (size_t)m4 * (size_t)d->n * ds : dd),
			(size_t)d->n * ds, (size_t)d->n * ds, (size_t)r, s);
	if (cr)
		return gemm_fail(err, errlen, GEMM_ECUDA, "gemm: the split GEMM's copies: %s", cudrv_errstr(cr));
	GemmDesc d1 = *d, d2 = *d;
	GemmArgs a1 = *a, a2 = *a;
	d1.m = (int)m4;
	a1.a_scale_inv = (const float *)(uintptr_t)(scratch + p->off_s1);
	d2.m = 4;
	d2.lda = 0;
	a2.a = (const void *)(uintptr_t)(scratch + p->off_a);
	a2.a_scale_inv = (const float *)(uintptr_t)(scratch + p->off_sa);
	a2.d = (void *)(uintptr_t)(scratch + p->off_d);
	a2.c = NULL;
	int rc = gemm_run(g, &d1, &a1, s, err, errlen);
	if (!rc)
		rc = gemm_run(g, &d2, &a2, s, err, errlen);
	if (rc)
		return rc;
	cr = copy2d(dd, (size_t)d->n * ds, scratch + p->off_d, (size_t)d->n * ds, (size_t)d->n * ds, (size_t)r, s);
	return cr ? gemm_fail(err, errlen, GEMM_ECUDA, "gemm: copying the split GEMM's last rows out: %s", cudrv_errstr(cr))
		: GEMM_OK;
}

int gemm_run_padded(GemmCtx *g, const GemmDesc *d, const GemmArgs *a, CUdeviceptr scratch, size_t scratch_bytes,
	CUfunction copy, CUstream s, char *err, size_t errlen)
{
	Pad p;
	pad_plan(d, &p);
	if (!p.bytes)
		return gemm_run(g, d, a, s, err, errlen);
	if (scratch_bytes < p.bytes || !scratch)
		return gemm_fail(err, errlen, GEMM_EINVAL, "gemm: padding M %d N %d K %d to %ld %ld %ld needs %zu bytes of scratch, "
			"%zu given", d->m, d->n, d->k, p.m, p.n, p.k, p.bytes, scratch_bytes);
	if (p.m4)
		return run_split(g, d, a, &p, scratch, s, err, errlen);
	GemmDesc pd = *d;
	GemmArgs pa = *a;
	pd.m = (int)p.m;
	pd.n = (int)p.n;
	pd.k = (int)p.k;
	if (p.a) pd.lda = 0; /* the copies' rows are K' apart */
	if (p.b) pd.ldb = 0;
	size_t ds = d_size(d->d_dtype);
	long kb = (d->k + 127) / 128;
	/* the scales, bias and D zeroed whole (small, or written whole by the GEMM); the operands by copy_operand */
	CUresult r = p.bytes > p.off_small ? cu.cuMemsetD8Async(scratch + p.off_small, 0, p.bytes - p.off_small, s) : 0;
	if (!r && p.a)
		r = copy_operand(scratch + p.off_a, dptr(a->a), operand(d->m, d->k, d->a_trans, d->a_dtype, d->lda),
			operand(p.m, p.k, d->a_trans, d->a_dtype, 0), copy, s);
	if (!r && p.b)
		r = copy_operand(scratch + p.off_b, dptr(a->b), operand(d->n, d->k, d->b_trans, d->b_dtype, d->ldb),
			operand(p.n, p.k, d->b_trans, d->b_dtype, 0), copy, s);
	if (!r && p.sa)
		r = copy_scales(scratch + p.off_sa, a->a_scale_inv, d->a_block128x128, d->m, kb, p.m, p.kb, s);
	if (!r && p.sb)
		r = copy_scales(scratch + p.off_sb, a->b_scale_inv, d->b_block128x128, d->n, kb, p.n, p.kb, s);
	if (!r && p.bias)
		r = cu.cuMemcpyDtoDAsync_v2(scratch + p.off_bias, dptr(a->bias), (size_t)d->n * bias_size(d), s);
	if (!r && p.d && d->accumulate) /* the padded D starts as C (the caller's C, or D itself) and is C then */
		r = copy2d(scratch + p.off_d, (size_t)p.n * ds, dptr(a->c ? a->c : a->d), (size_t)d->n * ds, (size_t)d->n * ds,
			(size_t)d->m, s);
	if (r)
		return gemm_fail(err, errlen, GEMM_ECUDA, "gemm: copying operands into the padded scratch: %s", cudrv_errstr(r));
	if (p.a) pa.a = (const void *)(uintptr_t)(scratch + p.off_a);
	if (p.b) pa.b = (const void *)(uintptr_t)(scratch + p.off_b);
	if (p.sa) pa.a_scale_inv = (const float *)(uintptr_t)(scratch + p.off_sa);
	if (p.sb) pa.b_scale_inv = (const float *)(uintptr_t)(scratch + p.off_sb);
	if (p.bias) pa.bias = (const void *)(uintptr_t)(scratch + p.off_bias);
	if (p.d) {
		pa.d = (void *)(uintptr_t)(scratch + p.off_d);
		pa.c = NULL;
	}
	int rc = gemm_run(g, &pd, &pa, s, err, errlen);
	if (rc || !p.d)
		return rc;
	r = copy2d(dptr(a->d), (size_t)d->n * ds, scratch + p.off_d, (size_t)p.n * ds, (size_t)d->n * ds, (size_t)d->m, s);
	if (r)
		return gemm_fail(err, errlen, GEMM_ECUDA, "gemm: copying D out of the padded scratch: %s", cudrv_errstr(r));
	return GEMM_OK;
}
