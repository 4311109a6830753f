/* derive.c: `backward: true`: the backward half of a forward layer, appended to
 * its ops as spec ops (see spec_derive_backward in gen.h).
 *
 * The forward graph (checked first) is walked in reverse topological order;
 * grad[t] names the tensor holding dL/dt:
 *   - every forward output t in high precision gets a layer input d_<t> (the
 *     output gradient the caller binds, role gradient, t's dtype);
 *   - gemm_cast fprop Y = A x B^T: the gradient of Y, quantized rowwise and
 *     columnwise by a cast_transpose (unless dglu already wrote both copies),
 *     feeds the dgrad d_A (A's high-precision dtype; fp32 for an fp16 A whose GEMM runs as BF16: MXFP8, NVFP4
 *     operands) and the wgrad d_W (fp32, or the weight's grad_dtype; W the weight B was
 *     quantized from); the forward's quantize ops of A and B then also write
 *     the columnwise copies the backward GEMMs read; a bias gets a dbias (fused
 *     into dglu when the GEMM's output is a GLU's input);
 *   - glu_amax act = glu(h): dglu writes d_h as a gradient (E5M2 under hybrid),
 *     with both copies for the GEMM that made h (else in h's dtype);
 *   - norm_quantize xq = norm(x): the forward also saves rsigma_<x> (and mu_<x>),
 *     dnorm writes d_x and d_<gamma> (d_<beta>) in FP32;
 *   - norm_quantize with a residual (out = norm(x + r)): dnorm reads the saved sum
 *     (residual_out, saved as sum_<x> if the spec names none) and adds the sum's
 *     own gradient through grad_residual; its d_x is the gradient of both x and r.
 *     A norm whose input already has a gradient (a block input that a later norm
 *     adds back as its residual) adds that one the same way: the residual stream;
 *   - quantize / cast_transpose pass the gradient through (straight-through);
 *   - a tensor read by several GEMMs (a fan-out: Q, K and V from one norm), or by a
 *     GEMM and a norm: each later dgrad adds the gradient so far (gemm_cast add),
 *     the last writes d_<t>; the earlier writer's output is renamed to a part;
 *   - gemm_cast with add (Y = A x B + r): r's gradient is Y's, added by the dgrad
 *     of a later reader of r where there is one (or by dnorm's grad_residual); a
 *     layer input r nothing else reads gets d_<r> as a copy (a high-precision quantize).
 * A name is d_ + the tensor's own name, or its high-precision source's for a
 * quantized copy (d_w_up for w_up_q). What is not derived yet is a spec error
 * at the forward op: gradients to sum that are not high-precision ones of one
 * dtype (or the residual stream's), GELU epilogues, backward ops already in the spec. */
#include "gen.h"

#include <string.h>

typedef struct Dv {
	Arena *a;
	Diag *d;
	const Graph *g;  /* the forward graph */
	Spec *s;         /* the spec being extended */
	int cap_ops, cap_tensors;
	const char **grad; /* per forward tensor: the name of its gradient, NULL none */
	bool *grad_q;      /* that gradient is quantized with rowwise and columnwise copies */
	int *spec_op;      /* per forward op: its index in s->ops */
} Dv;

static const Tensor *ft(Dv *v, int id) { return &v->g->tensors[id]; }

static bool quantized(const Tensor *t) { return t->dtype != t->hp_dtype && t->recipe.scaling != SCALING_NONE; }

/* The high-precision tensor a quantized copy was made from by quantize or cast_transpose (else t). */
static const Tensor *source_of(Dv *v, const Tensor *t)
{
	while (t->producer >= 0) {
		const Op *op = &v->g->ops[t->producer];
		if (op->kind != OP_QUANTIZE && op->kind != OP_CAST_TRANSPOSE)
			break;
		t = ft(v, op->arg[ARG_IN]);
	}
	return t;
}

/* A new tensor name, checked against every name in the spec. */
static const char *fresh(Dv *v, Loc at, const char *prefix, const char *name)
{
	const char *n = arena_printf(v->a, "%s%s", prefix, name);
	for (int i = 0; i < v->g->ntensors; i++)
		if (!strcmp(v->g->tensors[i].name, n))
			diag_error(v->d, at, "backward: the derived gradient '%s' clashes with a tensor of that name; rename it", n);
	return n;
}

/* The array arr of n elements (capacity *cap) with room for one more: doubled into a new
 * arena block when full (the old block stays in the arena). */
static void *room_for_one(Arena *a, void *arr, int n, int *cap, size_t elem)
{
	if (n < *cap)
		return arr;
	*cap *= 2;
	void *grown = arena_alloc(a, elem * (size_t)*cap);
	memcpy(grown, arr, elem * (size_t)n);
	return grown;
}

/* Append an op of kind k at loc (the forward op it comes from), params defaulted as the parser does. */
static SpecOp *add_op(Dv *v, OpKind k, Loc loc)
{
	Spec *s = v->s;
	s->ops = room_for_one(v->a, s->ops, s->nops, &v->cap_ops, sizeof *s->ops);
	SpecOp *o = &s->ops[s->nops++];
	memset(o, 0, sizeof *o);
	o->kind = k;
	o->phase = PHASE_BACKWARD;
	o->loc = o->param_loc = loc;
	o->p = op_params_default(k);
	return o;
}

static void set_arg(SpecOp *o, ArgSlot a, const char *name)
{
	o->arg[a] = name;
	o->arg_loc[a] = o->loc;
}

/* A tensor declared with t's shape (extents spelled as `tegen ir` prints them), role
 * gradient: a layer input, or a main_grad accumulator an op produces. */
static void add_input(Dv *v, const char *name, const Tensor *t, DType dt)
{
	Spec *s = v->s;
	s->tensors = room_for_one(v->a, s->tensors, s->ntensors, &v->cap_tensors, sizeof *s->tensors);
	SpecTensor *st = &s->tensors[s->ntensors++];
	memset(st, 0, sizeof *st);
	st->name = name;
	st->loc = st->dtype_loc = st->role_loc = t->loc;
	st->rank = t->rank;
	for (int i = 0; i < t->rank; i++) {
		st->shape_src[i] = extent_str(v->a, v->g, t->shape[i]);
		st->shape_loc[i] = t->loc;
	}
	st->dtype = dt;
	st->role = ROLE_GRADIENT;
	st->dtype_set = st->role_set = true;
}

/* w's declaration under `tensors`, or NULL (valid until add_input grows the list). */
static const SpecTensor *declared(const Dv *v, const Tensor *w)
{
	for (int i = 0; i < v->s->ntensors; i++)
		if (!strcmp(v->s->tensors[i].name, w->name))
			return &v->s->tensors[i];
	return NULL;
}

/* main_grad: weight w's gradient `name` (fp32) is accumulated into the caller's buffer, so it
 * is declared (ir requires an accumulated output to be); true if w asks for it. */
static bool main_grad(Dv *v, const Tensor *w, const char *name)
{
	const SpecTensor *t = declared(v, w);
	if (!t || !t->main_grad)
		return false;
	add_input(v, name, w, DT_F32);
	return true;
}

/* w's declaration when it has a `grad_dtype` other than fp32, or NULL. */
static const SpecTensor *narrow_grad(const Dv *v, const Tensor *w)
{
	const SpecTensor *t = declared(v, w);
	return t && t->grad_dtype != DT_NONE && t->grad_dtype != DT_F32 ? t : NULL;
}

/* The dtype of weight W's wgrad output (operands a, quantized when q): its `grad_dtype`, fp32 when not given. A
 * GEMM of high-precision operands has no output in another 16-bit type (cuBLASLt; ir.c's gemm rule), which is
 * reported at the grad_dtype; MXFP8/NVFP4 operands write fp16 through an FP32 buffer (plan.c plan_d_convert). */
static DType wgrad_dtype(const Dv *v, const Tensor *W, const Tensor *a, bool q)
{
	const SpecTensor *t = narrow_grad(v, W);
	if (!t)
		return DT_F32;
	DType hin = gemm_hp_dtype(a, q);
	if (hin == DT_F32)
		diag_error(v->d, t->grad_dtype_loc, "grad_dtype %s: the wgrad of '%s' is a GEMM of fp32 operands, whose output is "
			"fp32 (cuBLASLt); drop grad_dtype or use fp32", dtype_name(t->grad_dtype), W->name);
	if (hin != DT_NONE && t->grad_dtype != hin && !q)
		diag_error(v->d, t->grad_dtype_loc, "grad_dtype %s: the wgrad of '%s' is a GEMM of %s operands, whose output is "
			"%s or fp32 (cuBLASLt); use grad_dtype %s or fp32", dtype_name(t->grad_dtype), W->name, dtype_name(hin),
			dtype_name(hin), dtype_name(hin));
	return t->grad_dtype;
}

/* A weight whose gradient is an FP32 sum over tokens (d_gamma, d_beta, dbias) may not ask for another dtype. */
static void fp32_gradient_only(const Dv *v, const Tensor *w, const char *what)
{
	const SpecTensor *t = narrow_grad(v, w);
	if (t)
		diag_error(v->d, t->grad_dtype_loc, "grad_dtype: d_%s (%s) is an fp32 sum over tokens; grad_dtype applies to a "
			"GEMM's weight (its wgrad output)", w->name, what);
}

/* The forward op that produced t asks for a columnwise copy too (a backward GEMM reads it). */
static void want_columnwise(Dv *v, const Tensor *t)
{
	if (t->producer < 0 || !quantized(t))
		return;
	SpecOp *o = &v->s->ops[v->spec_op[t->producer]];
	if (o->kind == OP_GEMM_CAST)
		diag_error(v->d, o->loc, "backward: '%s' is an FP8 GEMM output read by a GEMM; its columnwise copy is not derived yet",
			t->name);
	o->p.columnwise = true;
}

static void set_grad(Dv *v, const Tensor *t, const char *name, bool q, Loc at)
{
	if (v->grad[t->id])
		diag_error(v->d, at, "backward: '%s' is read by more than one op; summing their gradients is derived where "
			"each comes from a dgrad GEMM (a fan-out into GEMMs) or through a norm's residual, not here yet", t->name);
	v->grad[t->id] = name;
	v->grad_q[t->id] = q;
}

/* The derived op that writes tensor name n, or NULL (a layer input). */
static SpecOp *writer_of(Dv *v, const char *n)
{
	for (int i = v->s->nops - 1; i >= 0; i--)
		if (v->s->ops[i].phase == PHASE_BACKWARD && v->s->ops[i].arg[ARG_OUT] && !strcmp(v->s->ops[i].arg[ARG_OUT], n))
			return &v->s->ops[i];
	return NULL;
}

/* The gradient n of parameter t (a weight, gamma, beta or bias) read by this op: an error where a derived op already
 * writes it (t read by two ops: tied weights, a shared gamma), whose gradients would need summing. */
static const char *param_grad(Dv *v, Loc at, const Tensor *t, const char *n)
{
	for (int i = 0; i < v->s->nops; i++)
		for (int a = 0; a < ARG_COUNT && v->s->ops[i].phase == PHASE_BACKWARD; a++)
			if (arg_is_output((ArgSlot)a) && v->s->ops[i].arg[a] && !strcmp(v->s->ops[i].arg[a], n)) {
				diag_error(v->d, at, "backward: '%s' is also read by an op after this one (line %d), so its gradient "
					"'%s' would be the sum of both ops' gradients; that sum is not derived yet (give each op its own "
					"parameter)", t->name, v->s->ops[i].loc.line, n);
				return n;
			}
	return n;
}

/* The dtype of gradient n: its derived writer's output (dnorm's: its grad's, as ir.c infers it), or the
 * layer input's declaration. */
static DType grad_dtype(Dv *v, const char *n)
{
	const SpecOp *w = writer_of(v, n);
	if (w && w->kind == OP_DNORM)
		return w->p.high_precision ? w->p.out_dtype : grad_dtype(v, w->arg[ARG_GRAD]);
	if (w)
		return w->kind == OP_GEMM_CAST ? w->p.out_dtype : w->kind == OP_DGLU && w->p.high_precision ? w->p.out_dtype : DT_NONE;
	for (int i = 0; i < v->s->ntensors; i++)
		if (!strcmp(v->s->tensors[i].name, n))
			return v->s->tensors[i].dtype;
	return DT_NONE;
}

/* A tensor other than t and its quantized copies whose gradient is n (a residual norm's input and residual
 * share d_<input>: then n is not t's alone), a layer input first; NULL if none. */
static const Tensor *grad_sharer(Dv *v, const Tensor *t, const char *n)
{
	const Tensor *found = NULL;
	for (int i = 0; i < v->g->ntensors; i++)
		if (v->grad[i] && !strcmp(v->grad[i], n) && source_of(v, ft(v, i)) != t && (!found || ft(v, i)->producer < 0))
			found = ft(v, i);
	return found;
}

/* dg, a derived dgrad GEMM, writes t's gradient (named da). Where t already has one (a later op read t
 * too: a fan-out), dg adds it (gemm_cast add, cuBLASLt's C): dg writes t's gradient name, and when that
 * name was the gradient's own d_ name, its writer is renamed to write a partial sum dg reads. */
static void grad_from_dgrad(Dv *v, const Tensor *t, SpecOp *dg, const char *da, Loc at)
{
	const char *prev = v->grad[t->id];
	if (!prev) {
		set_grad(v, t, da, false, at);
		return;
	}
	dg->arg[ARG_OUT] = NULL; /* not the writer of prev below: it writes da last */
	if (v->grad_q[t->id] || grad_dtype(v, prev) != dg->p.out_dtype)
		diag_error(v->d, at, "backward: '%s' is read by more than one op; its other gradient '%s' is %s, this one %s: "
			"summing them is derived for gradients of one high-precision dtype only", t->name, prev,
			v->grad_q[t->id] ? "quantized" : dtype_name(grad_dtype(v, prev)), dtype_name(dg->p.out_dtype));
	SpecOp *w = writer_of(v, prev);
	const char *addend = prev;
	if (w && !strcmp(prev, da)) { /* the gradient's own name moves to the sum */
		const Tensor *partner = grad_sharer(v, t, prev); /* a residual norm's residual: the part is its gradient */
		int n = 1;
		const char *part = partner && partner->producer < 0 ? arena_printf(v->a, "d_%s", partner->name) : NULL;
		while (!part || writer_of(v, part))
			part = arena_printf(v->a, "%s_part%d", da, n++);
		set_arg(w, ARG_OUT, fresh(v, at, "", part));
		addend = w->arg[ARG_OUT];
		for (int i = 0; i < v->g->ntensors; i++) /* a tensor that shared the name (a residual) keeps the part */
			if (v->grad[i] && !strcmp(v->grad[i], prev) && source_of(v, ft(v, i)) != t)
				v->grad[i] = addend;
	}
	set_arg(dg, ARG_ADD, addend);
	set_arg(dg, ARG_OUT, da);
	v->grad[t->id] = da;
}

/* The gradient of a tensor r a forward GEMM added (gemm_cast add) is the output's gradient gy itself: r's
 * gradient is gy, or, where a later op read r too, that gradient's writer adds gy (a derived dgrad through
 * add, a dnorm through grad_residual), where the gradient is r's alone. */
static void grad_of_addend(Dv *v, const Tensor *r, const char *gy, bool gy_q, Loc at)
{
	const char *prev = v->grad[r->id];
	if (!prev) {
		set_grad(v, r, gy, gy_q, at);
		return;
	}
	SpecOp *w = writer_of(v, prev);
	ArgSlot slot = w && w->kind == OP_GEMM_CAST ? ARG_ADD : ARG_GRAD_RESIDUAL;
	if (gy_q || v->grad_q[r->id] || !w || (w->kind != OP_GEMM_CAST && w->kind != OP_DNORM) || w->arg[slot] ||
		grad_dtype(v, gy) != grad_dtype(v, prev) || grad_sharer(v, r, prev))
		diag_error(v->d, at, "backward: '%s' is added here and also read by a later op, so its gradient is the sum of "
			"this output's gradient%s and the later op's%s; that sum is derived only where the later op's gradient "
			"belongs to '%s' alone and a high-precision dgrad or dnorm writes it in the same dtype",
			r->name, arena_printf(v->a, " '%s'", gy), strcmp(prev, gy) ? arena_printf(v->a, " '%s'", prev)
			: " (the same tensor: one gradient would be added to itself)", r->name);
	set_arg(w, slot, gy);
}

static void derive_gemm(Dv *v, const Op *op, Loc at)
{
	const Tensor *Y = ft(v, op->arg[ARG_OUT]), *A = ft(v, op->arg[ARG_A]), *B = ft(v, op->arg[ARG_B]);
	const char *gy = v->grad[Y->id];
	if (!gy)
		return;
	if (op->p.pass != PASS_FPROP)
		diag_error(v->d, at, "backward: true derives the backward of a forward layer; this spec already has a %s GEMM",
			op->p.pass == PASS_DGRAD ? "dgrad" : "wgrad");
	if (op->p.gelu)
		diag_error(v->d, at, "backward: the GELU epilogue's backward is not derived (it needs the pre-activation): write "
			"the GEMM's output in bf16 and a `glu_amax: {act: gelu}` after it, whose backward is derived");
	bool q = quantized(A);
	const char *gyq = gy;
	if (q && !v->grad_q[Y->id]) { /* the gradient's rowwise (dgrad) and columnwise (wgrad) copies */
		const char *made = NULL; /* by a later GEMM whose output's gradient is this one (Y its `add`) */
		for (int i = 0; i < v->s->nops && !made; i++)
			if (v->s->ops[i].kind == OP_CAST_TRANSPOSE && v->s->ops[i].arg[ARG_IN] && !strcmp(v->s->ops[i].arg[ARG_IN], gy))
				made = v->s->ops[i].arg[ARG_OUT];
		if (made) {
			gyq = made;
		} else {
			SpecOp *ct = add_op(v, OP_CAST_TRANSPOSE, at);
			gyq = fresh(v, at, "", arena_printf(v->a, "%s_q", gy));
			set_arg(ct, ARG_IN, gy);
			set_arg(ct, ARG_OUT, gyq);
		}
	}
	if (q) {
		want_columnwise(v, A);
		want_columnwise(v, B);
	}
	const Tensor *As = source_of(v, A), *W = source_of(v, B);
	const char *da = fresh(v, at, "d_", As->name);
	SpecOp *dg = add_op(v, OP_GEMM_CAST, at);
	set_arg(dg, ARG_A, gyq);
	set_arg(dg, ARG_B, B->name);
	set_arg(dg, ARG_OUT, da);
	dg->p.pass = PASS_DGRAD;
	/* A's own dtype; an fp16 A whose GEMM runs emulated as BF16 (MXFP8, NVFP4 operands: bf16 or fp32 out) gets fp32 */
	dg->p.out_dtype = As->hp_dtype == DT_F16 && gemm_hp_dtype(A, q) == DT_BF16 ? DT_F32
		: As->hp_dtype == DT_F32 || As->hp_dtype == DT_F16 ? As->hp_dtype : DT_BF16;
	grad_from_dgrad(v, As, dg, da, at);
	if (As != A) { /* the quantized copy's gradient is its source's (a fan-out sums into that name) */
		v->grad[A->id] = v->grad[As->id];
		v->grad_q[A->id] = false;
	}
	SpecOp *wg = add_op(v, OP_GEMM_CAST, at);
	const char *dw = param_grad(v, at, W, fresh(v, at, "d_", W->name));
	set_arg(wg, ARG_A, gyq);
	set_arg(wg, ARG_B, A->name);
	set_arg(wg, ARG_OUT, dw);
	wg->p.pass = PASS_WGRAD;
	wg->p.out_dtype = wgrad_dtype(v, W, A, q);
	wg->p.accumulate = main_grad(v, W, dw);
	if (op->arg[ARG_BIAS] >= 0) {
		const Tensor *bias = ft(v, op->arg[ARG_BIAS]);
		const char *dbias = param_grad(v, at, bias, fresh(v, at, "d_", bias->name));
		fp32_gradient_only(v, bias, "dbias's");
		bool acc = main_grad(v, bias, dbias);
		SpecOp *dglu = NULL; /* a bias before the activation: dglu's fused dbias */
		for (int i = 0; v->grad_q[Y->id] && i < v->s->nops; i++)
			if (v->s->ops[i].kind == OP_DGLU && !strcmp(v->s->ops[i].arg[ARG_OUT], gy))
				dglu = &v->s->ops[i];
		if (dglu) {
			set_arg(dglu, ARG_DBIAS_OUT, dbias);
			dglu->p.accumulate = acc;
		} else {
			SpecOp *db = add_op(v, OP_DBIAS, at);
			set_arg(db, ARG_IN, gy);
			set_arg(db, ARG_OUT, dbias);
			db->p.accumulate = acc;
		}
	}
	if (op->arg[ARG_ADD] >= 0)
		grad_of_addend(v, ft(v, op->arg[ARG_ADD]), gy, v->grad_q[Y->id], at);
}

static void derive_glu(Dv *v, const Op *op, Loc at)
{
	const Tensor *act = ft(v, op->arg[ARG_OUT]), *h = ft(v, op->arg[ARG_IN]);
	const char *ga = v->grad[act->id];
	if (!ga)
		return;
	SpecOp *o = add_op(v, OP_DGLU, at);
	const char *dh = fresh(v, at, "d_", h->name);
	set_arg(o, ARG_IN, h->name);
	set_arg(o, ARG_GRAD, ga);
	set_arg(o, ARG_OUT, dh);
	o->p.act = op->p.act;
	o->p.alpha = op->p.alpha;
	o->p.limit = op->p.limit;
	/* d_h has the layer recipe (or its override): quantized with both copies when a GEMM with
	 * quantized operands made h (its dgrad and wgrad read d_h); else (no GEMM, or a GEMM kept in
	 * high precision, e.g. a block left in BF16) kept in h's dtype */
	Recipe r = v->s->recipe;
	for (int i = 0; i < v->s->noverrides; i++)
		if (!strcmp(v->s->overrides[i].tensor, dh))
			r = recipe_resolve(v->s, &v->s->overrides[i]);
	const Op *mk = h->producer >= 0 ? &v->g->ops[h->producer] : NULL;
	bool q = r.scaling != SCALING_NONE && mk && mk->kind == OP_GEMM_CAST && quantized(ft(v, mk->arg[ARG_A]));
	/* block scaling: dglu writes both 1x128 copies where its block tile path can (C a multiple of 128,
	 * no bias before the activation, whose dbias it would fuse); else d_h stays in h's dtype and a
	 * cast_transpose writes the copies (an unfused dglu would write FP32, twice the bytes) */
	if (q && r.scaling == SCALING_BLOCK1X128)
		q = dglu_block_tile_fits(h->shape[h->rank - 1].add / glu_halves(op->p.act), mk->arg[ARG_BIAS] >= 0);
	else if (q && r.scaling == SCALING_BLOCK128X128)
		q = false;
	if (!q) {
		o->p.high_precision = true;
		o->p.out_dtype = h->dtype;
	}
	o->p.columnwise = q;
	set_grad(v, h, dh, q, at);
}

/* The gradient t already has (a later op read it), which dnorm adds to its d_in through
 * grad_residual: it must be high precision (NULL: none yet). */
static const char *addable_grad(Dv *v, const Tensor *t, Loc at, const char *why)
{
	const char *g = v->grad[t->id];
	if (!g)
		return NULL;
	if (v->grad_q[t->id])
		diag_error(v->d, at, "backward: '%s' %s, and its other gradient '%s' is quantized; summing them is not derived yet",
			t->name, why, g);
	return g;
}

/* norm_quantize out = norm(in [+ residual]) [, residual_out = in + residual]: dnorm reads the
 * normalized sum (the input, or the saved residual_out) and adds to d_in, through grad_residual,
 * the gradient of residual_out (the residual stream's) or one the input already has (a
 * tensor a later op also read, e.g. a block input that a later norm adds as its residual);
 * d_in is then the gradient of both in and residual. */
static void derive_norm(Dv *v, const Op *op, SpecOp *fwd, Loc at)
{
	const Tensor *xq = ft(v, op->arg[ARG_OUT]), *x = ft(v, op->arg[ARG_IN]);
	const Tensor *res = op->arg[ARG_RESIDUAL] >= 0 ? ft(v, op->arg[ARG_RESIDUAL]) : NULL;
	const Tensor *rout = op->arg[ARG_RESIDUAL_OUT] >= 0 ? ft(v, op->arg[ARG_RESIDUAL_OUT]) : NULL;
	const char *gx = v->grad[xq->id];
	const char *gsum = rout ? v->grad[rout->id] : NULL; /* the residual stream's gradient */
	if (!gx && !gsum)
		return;
	if (!gx)
		diag_error(v->d, at, "backward: only the residual sum '%s' of this norm has a gradient; a norm whose output "
			"is unused is not derived yet", rout->name);
	const char *gin = addable_grad(v, x, at, "is read by a later op");
	if (res && (gin || v->grad[res->id]))
		diag_error(v->d, at, "backward: '%s' is read by more than one op besides this residual norm; summing "
			"three gradients is not derived yet", gin ? x->name : res->name);
	const char *gres = gsum ? gsum : gin; /* one of them: gsum needs a residual, and then gin is NULL */
	bool layer = op->p.norm == NORM_LAYER;
	if (!fwd->arg[ARG_RSIGMA_OUT])
		set_arg(fwd, ARG_RSIGMA_OUT, fresh(v, at, "rsigma_", x->name));
	if (layer && !fwd->arg[ARG_MU_OUT])
		set_arg(fwd, ARG_MU_OUT, fresh(v, at, "mu_", x->name));
	if (res && !fwd->arg[ARG_RESIDUAL_OUT]) /* save the sum the norm normalized */
		set_arg(fwd, ARG_RESIDUAL_OUT, fresh(v, at, "sum_", x->name));
	SpecOp *o = add_op(v, OP_DNORM, at);
	set_arg(o, ARG_IN, res ? fwd->arg[ARG_RESIDUAL_OUT] : x->name);
	set_arg(o, ARG_GRAD, gx);
	if (gres)
		set_arg(o, ARG_GRAD_RESIDUAL, gres);
	set_arg(o, ARG_GAMMA, ft(v, op->arg[ARG_GAMMA])->name);
	set_arg(o, ARG_RSIGMA, fwd->arg[ARG_RSIGMA_OUT]);
	if (layer)
		set_arg(o, ARG_MU, fwd->arg[ARG_MU_OUT]);
	const char *dx = fresh(v, at, "d_", x->name);
	set_arg(o, ARG_OUT, dx);
	const Tensor *gamma = ft(v, op->arg[ARG_GAMMA]), *beta = layer ? ft(v, op->arg[ARG_BETA]) : NULL;
	set_arg(o, ARG_D_GAMMA, param_grad(v, at, gamma, fresh(v, at, "d_", gamma->name)));
	fp32_gradient_only(v, gamma, "dnorm's");
	if (beta)
		fp32_gradient_only(v, beta, "dnorm's");
	o->p.accumulate = main_grad(v, gamma, o->arg[ARG_D_GAMMA]);
	if (layer) {
		set_arg(o, ARG_D_BETA, param_grad(v, at, beta, fresh(v, at, "d_", beta->name)));
		if (main_grad(v, beta, o->arg[ARG_D_BETA]) != o->p.accumulate)
			diag_error(v->d, at, "backward: one dnorm writes d_%s and d_%s; give main_grad to both '%s' and '%s' or to neither",
				gamma->name, beta->name, gamma->name, beta->name);
	}
	o->p.norm = op->p.norm;
	o->p.zero_centered_gamma = op->p.zero_centered_gamma;
	v->grad[x->id] = NULL; /* folded in through grad_residual */
	set_grad(v, x, dx, false, at);
	if (res)
		set_grad(v, res, dx, false, at);
}

/* Whether op o reads tensor `name` (an input argument). */
static bool op_reads(const SpecOp *o, const char *name)
{
	for (int x = 0; x < ARG_COUNT; x++)
		if (!arg_is_output((ArgSlot)x) && o->arg[x] && !strcmp(o->arg[x], name))
			return true;
	return false;
}

/* The schedule: each wgrad GEMM (derived right after its dgrad) moves past the first later op that reads the dgrad's
 * output (dglu, dnorm, or the next dgrad of a fan-out adding into it), so that op runs right after the GEMM whose
 * output it reads, while the L2 still holds part of it (H100, 8B training layers: dnorm 2-3% faster, the current
 * dglu's amax pass 2.5%; thirty-fifth session). The wgrad reads the gradient's columnwise copy and a forward tensor,
 * both written before it, and no derived op reads or writes its d_W (param_grad: one writer; the optimizer's ops
 * come after), so any later place is legal. */
static void schedule_wgrads(Spec *s, int first)
{
	for (int i = s->nops - 1; i > first; i--) {
		const SpecOp *w = &s->ops[i], *dg = &s->ops[i - 1];
		if (w->kind != OP_GEMM_CAST || w->p.pass != PASS_WGRAD || dg->kind != OP_GEMM_CAST || dg->p.pass != PASS_DGRAD)
			continue;
		int j = i + 1;
		while (j < s->nops && !op_reads(&s->ops[j], dg->arg[ARG_OUT]))
			j++;
		if (j == s->nops)
			continue; /* nothing reads the dgrad's output */
		SpecOp moved = *w;
		memmove(&s->ops[i], &s->ops[i + 1], sizeof *s->ops * (size_t)(j - i));
		s->ops[j] = moved;
	}
}

Spec *spec_derive_backward(Arena *a, Diag *d, const Spec *fs, Arch default_arch)
{
	Spec fwd = *fs;
	fwd.backward = false;
	const Graph *g = ir_build(a, d, &fwd, default_arch);
	if (!g)
		return NULL;
	Dv *v = arena_alloc(a, sizeof *v);
	v->a = a;
	v->d = d;
	v->g = g;
	if (setjmp(d->jmp))
		return NULL;
	Spec *s = v->s = arena_alloc(a, sizeof *s);
	*s = *fs;
	v->cap_ops = 4 * fs->nops + 8;
	s->ops = arena_alloc(a, sizeof *s->ops * (size_t)v->cap_ops);
	memcpy(s->ops, fs->ops, sizeof *s->ops * (size_t)fs->nops);
	v->cap_tensors = fs->ntensors + g->ntensors + 8;
	s->tensors = arena_alloc(a, sizeof *s->tensors * (size_t)v->cap_tensors);
	if (fs->ntensors)
		memcpy(s->tensors, fs->tensors, sizeof *s->tensors * (size_t)fs->ntensors);
	v->grad = arena_alloc(a, sizeof *v->grad * (size_t)g->ntensors);
	v->grad_q = arena_alloc(a, sizeof *v->grad_q * (size_t)g->ntensors);
	v->spec_op = arena_alloc(a, sizeof *v->spec_op * (size_t)g->nops);
	for (int k = 0; k < g->nops; k++)
		for (int i = 0; i < fs->nops; i++)
			if (fs->ops[i].loc.line == g->ops[k].loc.line && fs->ops[i].loc.col == g->ops[k].loc.col)
				v->spec_op[k] = i;
	/* the output gradients the caller binds */
	for (int i = 0; i < g->ntensors; i++) {
		const Tensor *t = &g->tensors[i];
		if (!t->output || t->producer < 0)
			continue;
		const Op *pr = &g->ops[t->producer];
		if (pr->kind == OP_NORM_QUANTIZE && (pr->arg[ARG_RSIGMA_OUT] == i || pr->arg[ARG_MU_OUT] == i))
			continue; /* a norm's saved statistics: returned, not differentiated (no d_<rsigma> input) */
		if (quantized(t)) { /* a quantized copy some op reads gets its gradient there; a quantized sink has none */
			bool read = false;
			for (int k = 0; k < g->nops && !read; k++)
				for (int x = 0; x < ARG_COUNT && !read; x++)
					read = !arg_is_output((ArgSlot)x) && g->ops[k].arg[x] == i;
			if (!read)
				diag_error(d, g->ops[t->producer].loc, "backward: the layer's output '%s' is %s (quantized), whose "
					"gradient is not derived; write it in bf16 or fp32 (and quantize it where the next layer reads it)",
					t->name, dtype_name(t->dtype));
			continue;
		}
		const char *n = fresh(v, t->loc, "d_", t->name);
		add_input(v, n, t, t->dtype);
		v->grad[i] = n;
	}
	for (int k = g->nops - 1; k >= 0; k--) {
		const Op *op = &g->ops[k];
		SpecOp *fwd_op = &s->ops[v->spec_op[k]];
		Loc at = op->loc;
		switch (op->kind) {
		case OP_GEMM_CAST: derive_gemm(v, op, at); break;
		case OP_GLU_AMAX: derive_glu(v, op, at); break;
		case OP_NORM_QUANTIZE: derive_norm(v, op, fwd_op, at); break;
		case OP_QUANTIZE:
		case OP_CAST_TRANSPOSE: { /* straight-through: the copy's gradient is its source's */
			const Tensor *out = ft(v, op->arg[ARG_OUT]), *in = ft(v, op->arg[ARG_IN]);
			if (v->grad[out->id] && !v->grad[in->id])
				set_grad(v, in, v->grad[out->id], v->grad_q[out->id], at);
			break;
		}
		default:
			diag_error(d, at, "backward: true derives the backward of a forward layer; this spec already has a %s op",
				op_name(op->kind));
		}
	}
	/* a layer input a GEMM adds and nothing else reads: its gradient is the output's, which the caller
	 * binds; d_<input> is a copy of it (a high-precision quantize op), so every input's gradient is its own */
	for (int i = 0; i < g->ntensors; i++) {
		const Tensor *t = &g->tensors[i];
		if (t->producer >= 0 || !v->grad[i] || writer_of(v, v->grad[i]))
			continue;
		Loc at = t->loc;
		for (int k = 0; k < g->nops; k++)
			if (g->ops[k].kind == OP_GEMM_CAST && g->ops[k].arg[ARG_ADD] == i)
				at = g->ops[k].loc;
		if (v->grad_q[i])
			diag_error(d, at, "backward: the gradient of '%s' (added by this gemm_cast) is the quantized '%s'; a "
				"high-precision copy of it is not derived yet", t->name, v->grad[i]);
		SpecOp *cp = add_op(v, OP_QUANTIZE, at);
		set_arg(cp, ARG_IN, v->grad[i]);
		set_arg(cp, ARG_OUT, fresh(v, at, "d_", t->name));
		cp->p.out_dtype = grad_dtype(v, v->grad[i]);
		cp->p.high_precision = true;
		v->grad[i] = cp->arg[ARG_OUT];
	}
	/* an explicit outputs list gains the weight gradients and those of the layer's inputs */
	if (fs->noutputs) {
		int cap = fs->noutputs + 3 * s->nops + g->ntensors;
		s->outputs = arena_alloc(a, sizeof *s->outputs * (size_t)cap);
		s->output_locs = arena_alloc(a, sizeof *s->output_locs * (size_t)cap);
		memcpy(s->outputs, fs->outputs, sizeof *s->outputs * (size_t)fs->noutputs);
		memcpy(s->output_locs, fs->output_locs, sizeof *s->output_locs * (size_t)fs->noutputs);
		const char **add = arena_alloc(a, sizeof *add * (size_t)cap);
		int n = 0;
		for (int k = fs->nops; k < s->nops; k++) {
			const SpecOp *o = &s->ops[k];
			if ((o->kind == OP_GEMM_CAST && o->p.pass == PASS_WGRAD) || o->kind == OP_DBIAS)
				add[n++] = o->arg[ARG_OUT];
			if (o->kind == OP_DGLU && o->arg[ARG_DBIAS_OUT])
				add[n++] = o->arg[ARG_DBIAS_OUT];
			if (o->kind == OP_DNORM && o->arg[ARG_D_GAMMA])
				add[n++] = o->arg[ARG_D_GAMMA];
			if (o->kind == OP_DNORM && o->arg[ARG_D_BETA])
				add[n++] = o->arg[ARG_D_BETA];
		}
		for (int i = 0; i < g->ntensors; i++)
			if (g->tensors[i].producer < 0 && v->grad[i])
				add[n++] = v->grad[i];
		for (int i = 0; i < n; i++) {
			bool listed = false; /* a residual norm's input and residual share one gradient (d_<input>) */
			for (int j = 0; j < s->noutputs && !listed; j++)
				listed = !strcmp(s->outputs[j], add[i]);
			if (listed)
				continue;
			s->outputs[s->noutputs] = add[i];
			s->output_locs[s->noutputs++] = fs->outputs_loc;
		}
	}
	schedule_wgrads(s, fs->nops);
	return s;
}
