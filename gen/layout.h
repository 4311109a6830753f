/* layout.h: how a tensor lies in memory once its dims are bound: extents,
 * rows and columns, the bytes of every component, what a quantized tensor
 * holds, and the spelling of components. One copy, used by the runtime (buffer
 * sizes), the reference interpreter (host buffers) and the CLI (checks, .npy).
 * Pure C over the Graph of gen.h; no CUDA. */
#ifndef TG_LAYOUT_H
#define TG_LAYOUT_H

#include "gen.h"

/* layout_extent is the value of extent e with every dynamic dim bound (dims[d] = value of dim d). */
long layout_extent(const long *dims, Extent e);
/* layout_dim_at is dim d's value in a run at `tokens`: tokens if it is dynamic, else its fixed value. */
long layout_dim_at(const Graph *g, int d, long tokens);
/* layout_extent_at is extent e in a run at `tokens` (every dynamic dim = tokens). */
long layout_extent_at(const Graph *g, Extent e, long tokens);
/* layout_rows is the product of all but the last extent of t (1 for rank 0 or 1). */
long layout_rows(const long *dims, const Tensor *t);
/* layout_cols is t's last extent (always constant), 1 for rank 0. */
long layout_cols(const Tensor *t);
/* layout_pitch is the line length, in elements, of a columnwise copy [cols][rows] of dtype dt (data_t,
 * deq_t): rows rounded up to 16 (16-byte aligned lines for 1-, 2- and 4-byte elements, one element index for
 * a copy and its dequantized BF16 form), so every column of every transposing kernel starts 16-byte aligned at
 * any token count; E2M1 lines of rows rounded up to 32 (16 bytes).
 * The elements past rows are padding: no reader takes them (a GEMM zeroes them first where its K is the
 * pitch); copies leaving the GPU (--out, --check) drop them. */
long layout_pitch(long rows, DType dt);
/* layout_comp_bytes sizes component c of t with the dims bound (0: t has no such component), as host copies
 * hold it (the reference, files, checks): columnwise copies packed, [cols][rows].
 * E2M1 data packs two per byte, each row padded to whole bytes; block scales are one per
 * block (FP32 for 1x128/128x128, a byte for MXFP8/NVFP4); swizzled scales pad to 128x4 tiles. */
size_t layout_comp_bytes(const long *dims, const Tensor *t, Component c);
/* layout_comp_bytes_dev: the bytes of component c on the GPU: layout_comp_bytes, but data_t and deq_t
 * [cols][layout_pitch(rows)]. The runtime allocates this many. */
size_t layout_comp_bytes_dev(const long *dims, const Tensor *t, Component c);
/* layout_unpitch packs a downloaded component in place: buf holds bytes (layout_comp_bytes_dev) of component c
 * of t; a padded columnwise copy's lines move together, the padding dropped. Returns the bytes now held
 * (layout_comp_bytes; buf's bytes unchanged for any other component or size). */
size_t layout_unpitch(const long *dims, const Tensor *t, Component c, void *buf, size_t bytes);
/* layout_quantized: t is stored low-precision with scales (a recipe and a narrower dtype
 * than the one it is computed in), so it holds data/data_t, scales and an amax. */
bool layout_quantized(const Tensor *t);
/* comp_name spells a component ("data", "scale_inv", ...), "?" if out of range. */
const char *comp_name(int c);
/* comp_lookup finds a component by its spelling; -1 if none. */
int comp_lookup(const char *name);

#endif
