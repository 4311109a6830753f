/* layout.c: extents, component sizes and component names (see layout.h).
 * Guarantees: the sizes here are the ones kernels index (templates/tg_kernel.h);
 * the runtime allocates and the reference fills exactly these many bytes. */
#include "layout.h"
#include "tg_backward.h"

#include <string.h>

/* mul*dim + add with the dim's value v (constant extents ignore v) */
static long extent_eval(Extent e, long v) { return e.dim < 0 ? e.add : e.mul * v + e.add; }

long layout_extent(const long *dims, Extent e) { return extent_eval(e, e.dim < 0 ? 0 : dims[e.dim]); }

long layout_dim_at(const Graph *g, int d, long tokens) { return g->dims[d].value < 0 ? tokens : g->dims[d].value; }

long layout_extent_at(const Graph *g, Extent e, long tokens)
{
	return extent_eval(e, e.dim < 0 ? 0 : layout_dim_at(g, e.dim, tokens));
}

long layout_rows(const long *dims, const Tensor *t)
{
	long r = 1;
	for (int i = 0; i + 1 < t->rank; i++)
		r *= layout_extent(dims, t->shape[i]);
	return r;
}

long layout_cols(const Tensor *t) { return t->rank ? t->shape[t->rank - 1].add : 1; }

bool layout_quantized(const Tensor *t) { return t->recipe.scaling != SCALING_NONE && t->dtype != t->hp_dtype; }

long layout_pitch(long rows, DType dt)
{
	long q = dt == DT_E2M1 ? 32 : 16; /* (tg_kernel.h's TG_PITCH, TG_PITCH_FP4) */
	return (rows + q - 1) / q * q;
}

size_t layout_comp_bytes(const long *dims, const Tensor *t, Component c)
{
	size_t rows = (size_t)layout_rows(dims, t), cols = (size_t)layout_cols(t), n = rows * cols;
	const ScalingInfo *si = scaling_info(t->recipe.scaling);
	bool byte_scales = si->scale == SCALE_E8M0 || si->scale == SCALE_E4M3; /* MXFP8, NVFP4: swizzled for GEMMs */
	size_t blk = byte_scales ? (size_t)si->block_cols : 32;          /* elements per scale byte */
	switch (c) {
	case COMP_DATA: /* E2M1: each row packed, two per byte, an odd row length padded */
		return t->dtype == DT_E2M1 ? rows * ((cols + 1) / 2) : n * (size_t)(dtype_bits(t->dtype) / 8);
	case COMP_DATA_T:
		return t->dtype == DT_E2M1 ? cols * ((rows + 1) / 2) : n * (size_t)(dtype_bits(t->dtype) / 8);
	case COMP_DEQ:
	case COMP_DEQ_T:
		return n * 2;
	case COMP_HP:
	case COMP_BIAS: /* the bias converted for a GEMM epilogue: at most 4 bytes an element */
		return n * 4;
	case COMP_PART: /* FP32 chunk partials of the column sums, one row per TG_BWD_CHUNK rows */
	case COMP_PART_B:
		return (rows + TG_BWD_CHUNK - 1) / TG_BWD_CHUNK * cols * 4;
	case COMP_MASTER: /* a weight the optimizer updates: FP32 master copy and moments, t's shape */
	case COMP_MOM1:
	case COMP_MOM2:
		return n * 4;
	case COMP_RSIGMA: /* a norm's 1/sigma and mean per row (norm_colwise.cu reads them) */
	case COMP_MU:
		return rows * 4;
	case COMP_OPTIM: /* the layer's optimizer state (not a tensor's; sized here for the runtime) */
		return TG_OPTIM_WORDS * 4;
	case COMP_ALPHA: /* {alpha, beta} of the native NVFP4 GEMM that writes t */
		return 2 * sizeof(float);
	case COMP_SCALE_SW: /* [rows][cols/blk] padded to 128 x 4 */
		return (rows + 127) / 128 * 128 * ((cols + blk - 1) / blk + 3) / 4 * 4;
	case COMP_SCALE_SW_T:
		return (cols + 127) / 128 * 128 * ((rows + blk - 1) / blk + 3) / 4 * 4;
	case COMP_SCALE_INV:
		switch (t->recipe.scaling) {
		case SCALING_BLOCK1X128: return (cols + 127) / 128 * rows * 4;
		case SCALING_BLOCK128X128: return (rows + 127) / 128 * ((cols + 127) / 128) * 4;
		case SCALING_MXFP8:
		case SCALING_NVFP4: return rows * ((cols + blk - 1) / blk);
		default: return 0;
		}
	case COMP_SCALE_INV_T:
		switch (t->recipe.scaling) {
		case SCALING_BLOCK1X128: return (rows + 127) / 128 * cols * 4;
		case SCALING_BLOCK128X128: return (cols + 127) / 128 * ((rows + 127) / 128) * 4;
		case SCALING_MXFP8:
		case SCALING_NVFP4: return cols * ((rows + blk - 1) / blk);
		default: return 0;
		}
	default:
		return 0;
	}
}

/* The bits of an element of columnwise component c of t (0: c is not a columnwise copy). */
static int pitched_bits(const Tensor *t, Component c)
{
	return c == COMP_DEQ_T ? 16 : c == COMP_DATA_T ? dtype_bits(t->dtype) : 0;
}

size_t layout_comp_bytes_dev(const long *dims, const Tensor *t, Component c)
{
	int bits = pitched_bits(t, c);
	size_t bytes = layout_comp_bytes(dims, t, c);
	if (!bits || !bytes)
		return bytes;
	DType dt = c == COMP_DEQ_T ? DT_BF16 : t->dtype;
	return (size_t)layout_cols(t) * (size_t)layout_pitch(layout_rows(dims, t), dt) * (size_t)bits / 8;
}

size_t layout_unpitch(const long *dims, const Tensor *t, Component c, void *buf, size_t bytes)
{
	int bits = pitched_bits(t, c);
	if (!bits || bytes != layout_comp_bytes_dev(dims, t, c))
		return bytes;
	long rows = layout_rows(dims, t), cols = layout_cols(t);
	size_t line = ((size_t)rows * (size_t)bits + 7) / 8; /* a host line (E2M1: an odd row ends in a zero nibble) */
	size_t pline = (size_t)layout_pitch(rows, c == COMP_DEQ_T ? DT_BF16 : t->dtype) * (size_t)bits / 8;
	/* line i moves down to i * line (forward: never over a line not yet moved) */
	for (long i = 1; i < cols && pline != line; i++)
		memmove((char *)buf + (size_t)i * line, (char *)buf + (size_t)i * pline, line);
	return layout_comp_bytes(dims, t, c);
}

static const char *const comp_names[] = {
#define X(e, s) s,
	TG_COMPONENTS(X)
#undef X
};

const char *comp_name(int c) { return c >= 0 && c < COMP_COUNT ? comp_names[c] : "?"; }

int comp_lookup(const char *name)
{
	for (int c = 0; c < COMP_COUNT; c++)
		if (!strcmp(comp_names[c], name))
			return c;
	return -1;
}
