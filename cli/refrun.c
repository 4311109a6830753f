/* refrun.c: `tegen run --cpu` and what it shares with the GPU run (inputs,
 * initial scales, the .npy output files). See refrun.h. */
#include "refrun.h"

#include "layout.h"
#include "npy.h"
#include "parallel.h"
#include "ref.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static float rng_uniform(uint64_t *s) { return (float)((rng_next(s) >> 40) * (1.0 / 16777216.0)) * 2.0f - 1.0f; }

/* rng_next is linear over GF(2): M^k held as its 64 columns (col[i] = M^k applied to bit i), so the state k steps on
 * is one matrix-vector product, and a tensor's values fill in parallel chunks with the one stream's values. */
typedef struct Gf2 {
	uint64_t col[64];
} Gf2;

static uint64_t gf2_apply(const Gf2 *m, uint64_t v)
{
	uint64_t r = 0;
	for (int i = 0; v; i++, v >>= 1)
		if (v & 1)
			r ^= m->col[i];
	return r;
}

/* The state k rng_next steps after s. */
static uint64_t rng_jump(uint64_t s, uint64_t k)
{
	Gf2 p, q;
	for (int i = 0; i < 64; i++) {
		uint64_t e = 1ull << i;
		p.col[i] = rng_next(&e);
	}
	for (; k; k >>= 1) {
		if (k & 1)
			s = gf2_apply(&p, s);
		for (int i = 0; i < 64; i++) /* p = p * p */
			q.col[i] = gf2_apply(&p, p.col[i]);
		p = q;
	}
	return s;
}

typedef struct FillJob {
	void *h;
	int dtype;
	float amp;
	uint64_t s0; /* the stream's state before value 0 */
} FillJob;

/* Values [k0, k1) of a tensor: the stream from its state k0 steps on. */
static void fill_task(void *ctx, size_t k0, size_t k1)
{
	const FillJob *j = ctx;
	uint64_t s = rng_jump(j->s0, k0);
	for (size_t k = k0; k < k1; k++)
		ref_store(j->h, j->dtype, k, j->amp * rng_uniform(&s));
}

static int ref_dtype(DType t) { return t == DT_F32 ? REF_F32 : t == DT_F16 ? REF_F16 : REF_BF16; }

bool refrun_accumulated(const Graph *g, int i)
{
	const Tensor *t = &g->tensors[i];
	if (t->producer < 0)
		return false;
	const Op *op = &g->ops[t->producer];
	return op->p.accumulate && (op->kind == OP_GEMM_CAST || op->kind == OP_DBIAS || op->kind == OP_DNORM ||
		(op->kind == OP_DGLU && op->arg[ARG_DBIAS_OUT] == i));
}

int refrun_inputs(const Graph *g, const long *dims, long tokens, unsigned seed, const char *in_dir, RefTensor *rt,
	char *err, size_t errlen)
{
	uint64_t rng = 0x9E3779B97F4A7C15ULL ^ seed;
	for (int i = 0; i < g->ntensors; i++) {
		const Tensor *t = &g->tensors[i];
		if (t->producer >= 0 && !refrun_accumulated(g, i))
			continue;
		size_t n = (size_t)layout_rows(dims, t) * (size_t)layout_cols(t);
		size_t bytes = layout_comp_bytes(dims, t, COMP_DATA);
		void *h = NULL;
		char path[4096];
		if (in_dir && snprintf(path, sizeof path, "%s/%s.npy", in_dir, t->name) > 0 && access(path, R_OK) == 0) {
			Npy a;
			if (npy_read(path, &a, err, errlen))
				return -1;
			int same = !strcmp(a.descr, npy_descr(t->dtype)) && a.rank == t->rank && a.bytes == bytes;
			for (int k = 0; same && k < t->rank; k++)
				same = a.shape[k] == layout_extent(dims, t->shape[k]);
			if (!same) {
				snprintf(err, errlen, "%s: expected dtype %s and the shape of '%s' with %s = %ld", path, npy_descr(t->dtype),
					t->name, "the dynamic dims", tokens);
				free(a.data);
				return -1;
			}
			h = a.data;
		} else if (rt[i].comp[COMP_DATA]) {
			continue; /* the caller's own values */
		} else {
			h = malloc(bytes ? bytes : 1);
			if (!h) {
				snprintf(err, errlen, "inputs: out of memory for '%s' (%zu bytes)", t->name, bytes);
				return -1;
			}
			FillJob j = {h, ref_dtype(t->dtype), t->role == ROLE_WEIGHT ? 0.5f : 3.0f, rng};
			ref_parallel_chunks(n, (size_t)1 << 18, fill_task, &j);
			rng = rng_jump(rng, n);
		}
		free(rt[i].comp[COMP_DATA]);
		rt[i].comp[COMP_DATA] = h;
		rt[i].bytes[COMP_DATA] = bytes;
		rt[i].owned = 1;
	}
	return 0;
}

float refrun_delayed_scale(int slot) { return ldexpf(1.5f, (slot % 5) - 2); }

bool refrun_writes_component(int c)
{
	/* state buffers, GEMM-side copies and intermediates are not outputs */
	return c >= COMP_DATA && c < COMP_COUNT && (c <= COMP_AMAX || c == COMP_SCALE_T || c == COMP_AMAX_T);
}

int refrun_write_file(const char *dir, const Tensor *t, Component c, const void *h, size_t bytes)
{
	bool scalar = c == COMP_SCALE || c == COMP_AMAX || c == COMP_SCALE_T || c == COMP_AMAX_T || tensor_comp_in_state(t, c);
	bool byte_scales = (c == COMP_SCALE_INV || c == COMP_SCALE_INV_T) && !scalar &&
		(t->recipe.scaling == SCALING_MXFP8 || t->recipe.scaling == SCALING_NVFP4);
	const char *descr = scalar || ((c == COMP_SCALE_INV || c == COMP_SCALE_INV_T) && !byte_scales) ? "<f4"
		: byte_scales ? "|u1" : npy_descr(t->dtype);
	size_t esize = descr[2] == '4' ? 4 : descr[2] == '2' ? 2 : 1;
	/* data: [rows][cols] (all but the last dim flattened); data_t: [cols][rows]; scales flat */
	long n = (long)(bytes / esize), cols = layout_cols(t);
	long shape[2] = {n, 1};
	int rank = 1;
	if ((c == COMP_DATA || c == COMP_DATA_T) && cols > 0 && t->dtype != DT_E2M1) {
		rank = 2;
		shape[0] = c == COMP_DATA ? n / cols : cols;
		shape[1] = c == COMP_DATA ? cols : n / cols;
	}
	char *path = malloc(strlen(dir) + strlen(t->name) + 32);
	sprintf(path, "%s/%s%s%s.npy", dir, t->name, c == COMP_DATA ? "" : ".", c == COMP_DATA ? "" : comp_name(c));
	int rc = npy_write(path, descr, rank, shape, h, bytes);
	if (rc)
		fprintf(stderr, "tegen: cannot write %s\n", path);
	else
		printf("wrote %s\n", path);
	free(path);
	return rc;
}

const void *refrun_component(const Tensor *t, const RefTensor *r, Component c, float *scalar, size_t *bytes)
{
	if (tensor_comp_in_state(t, c)) {
		*scalar = c == COMP_SCALE ? r->scale : c == COMP_SCALE_INV ? r->scale_inv : c == COMP_AMAX ? r->amax
			: c == COMP_SCALE_T ? r->scale_t : r->amax_t;
		*bytes = sizeof(float);
		return scalar;
	}
	*bytes = r->bytes[c];
	return r->comp[c] && r->bytes[c] ? r->comp[c] : NULL;
}
