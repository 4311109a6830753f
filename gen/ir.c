/* ir.c: Spec -> Graph.
 *
 * Resolves names, evaluates shape expressions into linear extents
 * (mul*dim + add, one dynamic dim at most), orders the ops topologically
 * (a spec may list them in any order), infers every produced tensor's shape,
 * dtype, role, recipe and quantized copies, and validates the layer against
 * every target architecture.
 *
 * Guarantees of a returned Graph: ops are in a valid topological order and
 * every operand is a tensor id; each tensor has exactly one producer (or is a
 * layer input of a high-precision dtype); declared intermediates agree with
 * inference; quantized GEMM operands have the copies their pass needs and
 * compatible scaling; every target can run every op (MXFP8/NVFP4 GEMMs below
 * sm_100 are marked emulated); per-tensor scaled tensors (and NVFP4 ones, for
 * S_enc and the global amax) have state slots, delayed ones first. Otherwise NULL and the message in d->msg. */
#include "gen.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct B {
	Arena *a;
	Diag *d;
	const Spec *s;
	Graph *g;
	int cap;                /* tensors allocated */
	const SpecOp **sop;     /* spec op of each graph op */
	const SpecTensor **decl;/* declaration of each tensor (NULL: inferred only) */
	bool *recipe_used;      /* the tensor's recipe came from the layer recipe/overrides */
} B;

/* ---- extents ---- */

static const char *const known_targets[] = {
	"sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", "sm_100", "sm_100a", "sm_103a", "sm_120", "sm_120a",
};
#define NKNOWN ((int)(sizeof known_targets / sizeof *known_targets))

bool arch_known(const char *s)
{
	for (int k = 0; k < NKNOWN; k++)
		if (!strcmp(s, known_targets[k]))
			return true;
	return false;
}

const char *extent_str(Arena *a, const Graph *g, Extent e)
{
	if (e.dim < 0)
		return arena_printf(a, "%ld", e.add);
	const char *name = e.dim < g->ndims ? g->dims[e.dim].name : "?";
	const char *m = e.mul == 1 ? name : arena_printf(a, "%ld*%s", e.mul, name);
	if (e.add == 0)
		return m;
	return arena_printf(a, "%s%c%ld", m, e.add < 0 ? '-' : '+', e.add < 0 ? -e.add : e.add);
}

const char *extent_operand(Arena *a, const Graph *g, Extent e)
{
	const char *s = extent_str(a, g, e);
	return e.dim >= 0 && e.add != 0 ? arena_printf(a, "(%s)", s) : s;
}

static const char *shape_str(B *b, const Extent *e, int rank)
{
	Buf buf = {0};
	buf_puts(&buf, "[");
	for (int i = 0; i < rank; i++)
		buf_printf(&buf, "%s%s", i ? "," : "", extent_str(b->a, b->g, e[i]));
	buf_puts(&buf, "]");
	const char *s = arena_strdup(b->a, buf.p);
	buf_free(&buf);
	return s;
}

static bool extent_eq(Extent x, Extent y)
{
	return x.dim == y.dim && x.mul == y.mul && x.add == y.add;
}

/* A small recursive-descent parser for shape expressions over linear forms. */
typedef struct Ex {
	B *b;
	const char *src, *p;
	Loc loc;        /* of src[0] */
	int depth;
} Ex;

static _Noreturn __attribute__((format(printf, 3, 4))) void ex_error(Ex *x, const char *at, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	Loc l = x->loc;
	l.col += (int)(at - x->src);
	diag_error(x->b->d, l, "%s", msg);
}

static void ex_space(Ex *x)
{
	while (*x->p == ' ' || *x->p == '\t')
		x->p++;
}

static long ex_check(Ex *x, const char *at, long v, bool overflow)
{
	if (overflow || v > (1L << 40) || v < -(1L << 40))
		ex_error(x, at, "shape expression '%s' is out of range", x->src);
	return v;
}

static Extent ex_sum(Ex *x);

static Extent ex_primary(Ex *x)
{
	ex_space(x);
	const char *at = x->p;
	char c = *x->p;
	if (c == '(') {
		if (++x->depth > 64)
			ex_error(x, at, "shape expression '%s' is nested too deeply", x->src);
		x->p++;
		Extent e = ex_sum(x);
		ex_space(x);
		if (*x->p != ')')
			ex_error(x, x->p, "expected ')' in shape expression '%s'", x->src);
		x->p++;
		x->depth--;
		return e;
	}
	if (c == '-') {
		x->p++;
		Extent e = ex_primary(x);
		long m, a;
		bool o = __builtin_mul_overflow(e.mul, -1L, &m) | __builtin_mul_overflow(e.add, -1L, &a);
		e.mul = ex_check(x, at, m, o);
		e.add = ex_check(x, at, a, o);
		return e;
	}
	if (c >= '0' && c <= '9') {
		long v = 0;
		bool o = false;
		while (*x->p >= '0' && *x->p <= '9') {
			o |= __builtin_mul_overflow(v, 10L, &v);
			o |= __builtin_add_overflow(v, (long)(*x->p - '0'), &v);
			x->p++;
		}
		ex_check(x, at, v, o);
		if ((*x->p >= 'a' && *x->p <= 'z') || (*x->p >= 'A' && *x->p <= 'Z') || *x->p == '_')
			ex_error(x, x->p, "expected an operator after a number in shape expression '%s' (write 2*ffn)", x->src);
		return (Extent){-1, 0, v};
	}
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_') {
		const char *s = x->p;
		while ((*x->p >= 'a' && *x->p <= 'z') || (*x->p >= 'A' && *x->p <= 'Z') || (*x->p >= '0' && *x->p <= '9') ||
			*x->p == '_')
			x->p++;
		char *name = arena_strndup(x->b->a, s, (size_t)(x->p - s));
		const Graph *g = x->b->g;
		for (int i = 0; i < g->ndims; i++)
			if (!strcmp(g->dims[i].name, name))
				return g->dims[i].value < 0 ? (Extent){i, 1, 0} : (Extent){-1, 0, g->dims[i].value};
		const char **names = arena_alloc(x->b->a, sizeof *names * (size_t)(g->ndims + 1));
		for (int i = 0; i < g->ndims; i++)
			names[i] = g->dims[i].name;
		const char *sug = spell_suggest(name, names, g->ndims);
		ex_error(x, s, "unknown dim '%s' in shape expression '%s'%s", name, x->src,
			sug ? arena_printf(x->b->a, " (did you mean '%s'?)", sug) : "");
	}
	if (!c)
		ex_error(x, at, "shape expression '%s' ends early; expected a number, a dim name or '('", x->src);
	ex_error(x, at, "unexpected character in shape expression '%s'; expected a number, a dim name or '('", x->src);
}

static Extent ex_product(Ex *x)
{
	Extent l = ex_primary(x);
	for (;;) {
		ex_space(x);
		char op = *x->p;
		if (op != '*' && op != '/')
			return l;
		const char *at = x->p++;
		Extent r = ex_primary(x);
		if (op == '*') {
			if (l.dim >= 0 && r.dim >= 0)
				ex_error(x, at, "shape expression '%s' is not linear: it multiplies two dynamic dims", x->src);
			Extent v = l.dim >= 0 ? l : r, k = l.dim >= 0 ? r : l;
			long m, a;
			bool o = __builtin_mul_overflow(v.mul, k.add, &m) | __builtin_mul_overflow(v.add, k.add, &a);
			l = (Extent){v.dim, ex_check(x, at, m, o), ex_check(x, at, a, o)};
			if (l.dim >= 0 && l.mul == 0)
				l = (Extent){-1, 0, l.add};
		} else {
			if (r.dim >= 0)
				ex_error(x, at, "shape expression '%s' is not linear: it divides by a dynamic dim", x->src);
			if (r.add == 0)
				ex_error(x, at, "shape expression '%s' divides by zero", x->src);
			if (l.mul % r.add || l.add % r.add)
				ex_error(x, at, "shape expression '%s' does not divide exactly", x->src);
			l.mul /= r.add;
			l.add /= r.add;
		}
	}
}

static Extent ex_sum(Ex *x)
{
	Extent l = ex_product(x);
	for (;;) {
		ex_space(x);
		char op = *x->p;
		if (op != '+' && op != '-')
			return l;
		const char *at = x->p++;
		Extent r = ex_product(x);
		if (l.dim >= 0 && r.dim >= 0 && l.dim != r.dim)
			ex_error(x, at, "shape expression '%s' combines two different dynamic dims; an extent may use one", x->src);
		long s = op == '+' ? 1 : -1, m, a, rm, ra;
		bool o = __builtin_mul_overflow(r.mul, s, &rm) | __builtin_mul_overflow(r.add, s, &ra);
		o |= __builtin_add_overflow(l.mul, rm, &m) | __builtin_add_overflow(l.add, ra, &a);
		int dim = l.dim >= 0 ? l.dim : r.dim;
		l = (Extent){dim, ex_check(x, at, m, o), ex_check(x, at, a, o)};
		if (l.mul == 0)
			l = (Extent){-1, 0, l.add};
	}
}

static Extent eval_extent(B *b, const char *src, Loc loc, const char *tensor)
{
	Ex x = {b, src, src, loc, 0};
	Extent e = ex_sum(&x);
	ex_space(&x);
	if (*x.p)
		ex_error(&x, x.p, "unexpected text in shape expression '%s'", src);
	if (e.dim < 0 && e.add <= 0)
		diag_error(b->d, loc, "extent '%s' of '%s' is %ld; extents must be positive", src, tensor, e.add);
	if (e.dim >= 0 && e.mul < 0)
		diag_error(b->d, loc, "extent '%s' of '%s' is negative for large %s; extents must be positive", src, tensor,
			b->g->dims[e.dim].name);
	if (e.add > INT32_MAX || e.mul > INT32_MAX)
		diag_error(b->d, loc, "extent '%s' of '%s' reaches past 2^31-1 (%s); the kernels and cuBLASLt take 32-bit "
			"dimensions", src, tensor, extent_str(b->a, b->g, e));
	if (e.dim < 0)
		e.mul = 0;
	return e;
}

/* ---- helpers ---- */

static bool is_hp(DType t) { return dtype_code(t) >= 0; }
/* t is stored low precision (its dtype, not its recipe: during inference a tensor may have
 * a recipe and still be high precision; layout_quantized asks both). */
static bool is_low_precision(const Tensor *t) { return !is_hp(t->dtype); }

static Loc op_arg_loc(const SpecOp *o, ArgSlot a)
{
	return o->arg_loc[a].line ? o->arg_loc[a] : o->loc;
}

static Loc or_loc(Loc l, Loc fallback)
{
	return l.line ? l : fallback;
}

static int tensor_find(B *b, const char *name)
{
	for (int i = 0; i < b->g->ntensors; i++)
		if (!strcmp(b->g->tensors[i].name, name))
			return i;
	return -1;
}

static int tensor_add(B *b, const char *name, Loc loc)
{
	Graph *g = b->g;
	if (g->ntensors == b->cap) {
		int cap = b->cap ? 2 * b->cap : 16;
		Tensor *t = arena_alloc(b->a, sizeof *t * (size_t)cap);
		const SpecTensor **dc = arena_alloc(b->a, sizeof *dc * (size_t)cap);
		bool *ru = arena_alloc(b->a, sizeof *ru * (size_t)cap);
		if (g->ntensors) {
			memcpy(t, g->tensors, sizeof *t * (size_t)g->ntensors);
			memcpy(dc, b->decl, sizeof *dc * (size_t)g->ntensors);
			memcpy(ru, b->recipe_used, sizeof *ru * (size_t)g->ntensors);
		}
		g->tensors = t;
		b->decl = dc;
		b->recipe_used = ru;
		b->cap = cap;
	}
	int id = g->ntensors++;
	Tensor *t = &g->tensors[id];
	memset(t, 0, sizeof *t);
	t->name = name;
	t->loc = loc;
	t->id = id;
	t->producer = -1;
	t->state_slot = -1;
	t->state_slot_t = -1;
	t->recipe.scaling = SCALING_NONE;
	b->decl[id] = NULL;
	return id;
}

static const char *tname(B *b, int id)
{
	return b->g->tensors[id].name;
}

static DType quant_dtype(const Recipe *r, Role role)
{
	if (r->scaling == SCALING_NVFP4)
		return DT_E2M1;
	if (r->format == FMT_E4M3)
		return DT_E4M3;
	if (r->format == FMT_E5M2)
		return DT_E5M2;
	return role == ROLE_GRADIENT ? DT_E5M2 : DT_E4M3;
}

static const SpecOverride *override_for(B *b, const char *name)
{
	for (int i = 0; i < b->s->noverrides; i++)
		if (!strcmp(b->s->overrides[i].tensor, name))
			return &b->s->overrides[i];
	return NULL;
}

/* The tensor's recipe from the layer recipe and its override. */
static Recipe recipe_for(B *b, int id)
{
	b->recipe_used[id] = true;
	return recipe_resolve(b->s, override_for(b, tname(b, id)));
}

static const char *role_name(Role r)
{
	return r == ROLE_WEIGHT ? "weight" : r == ROLE_GRADIENT ? "gradient" : "activation";
}

/* ---- targets ---- */

static void build_targets(B *b, Arch def)
{
	const Spec *s = b->s;
	Graph *g = b->g;
	if (!s->ntargets) {
		g->targets = arena_alloc(b->a, sizeof *g->targets);
		g->targets[0] = def;
		g->ntargets = 1;
		return;
	}
	g->targets = arena_alloc(b->a, sizeof *g->targets * (size_t)s->ntargets);
	for (int i = 0; i < s->ntargets; i++) {
		const char *t = s->targets[i];
		bool known = false;
		for (int k = 0; k < NKNOWN; k++)
			known |= !strcmp(t, known_targets[k]);
		if (!known || !arch_parse(t, &g->targets[i])) {
			const char *sug = spell_suggest(t, known_targets, NKNOWN);
			diag_error(b->d, s->target_locs[i], "unknown target '%s'%s; known: sm_80, sm_86, sm_89, sm_90, sm_90a, sm_100, sm_100a, sm_103a, sm_120, sm_120a",
				t, sug ? arena_printf(b->a, " (did you mean '%s'?)", sug) : "");
		}
		for (int j = 0; j < i; j++)
			if (!strcmp(s->targets[j], t))
				diag_error(b->d, s->target_locs[i], "target '%s' is listed twice", t);
	}
	g->ntargets = s->ntargets;
}

/* ---- op order ---- */

static void report_cycle(B *b, const int *producer_of_arg, const bool *done)
{
	const Spec *s = b->s;
	/* walk dependency edges among the remaining ops until one repeats */
	int *seen = arena_alloc(b->a, sizeof *seen * (size_t)s->nops);
	for (int i = 0; i < s->nops; i++)
		seen[i] = -1;
	int cur = 0;
	while (done[cur])
		cur++;
	int step = 0;
	while (seen[cur] < 0) {
		seen[cur] = step++;
		int next = -1;
		for (int a = 0; a < ARG_COUNT && next < 0; a++) {
			int p = producer_of_arg[cur * ARG_COUNT + a];
			if (p >= 0 && !done[p])
				next = p;
		}
		cur = next;
	}
	/* cur starts the cycle; list it in dependency order */
	Buf buf = {0};
	int start = cur;
	do {
		const SpecOp *o = &s->ops[cur];
		buf_printf(&buf, "%s (line %d) -> ", op_name(o->kind), o->loc.line);
		int next = -1;
		for (int a = 0; a < ARG_COUNT && next < 0; a++) {
			int p = producer_of_arg[cur * ARG_COUNT + a];
			if (p >= 0 && !done[p] && seen[p] >= seen[start])
				next = p;
		}
		cur = next < 0 ? start : next;
	} while (cur != start);
	buf_printf(&buf, "%s (line %d)", op_name(s->ops[start].kind), s->ops[start].loc.line);
	const char *msg = arena_strdup(b->a, buf.p);
	buf_free(&buf);
	diag_error(b->d, s->ops[start].loc, "ops form a cycle (each reads what the next produces): %s", msg);
}

/* Resolves producers, then orders ops (Kahn, lowest spec index first). */
static int *order_ops(B *b)
{
	const Spec *s = b->s;
	int n = s->nops;
	int *prod_of_arg = arena_alloc(b->a, sizeof(int) * (size_t)n * ARG_COUNT);
	for (int i = 0; i < n * ARG_COUNT; i++)
		prod_of_arg[i] = -1;
	/* who produces each name */
	for (int i = 0; i < n; i++) {
		const SpecOp *o = &s->ops[i];
		for (int a = 0; a < ARG_COUNT; a++) {
			if (!o->arg[a] || !arg_is_output((ArgSlot)a))
				continue;
			for (int j = 0; j <= i; j++) {
				const SpecOp *q = &s->ops[j];
				for (int c = 0; c < ARG_COUNT; c++) {
					if (!q->arg[c] || !arg_is_output((ArgSlot)c) || (j == i && c >= a))
						continue;
					if (!strcmp(q->arg[c], o->arg[a]))
						diag_error(b->d, o->arg_loc[a], "tensor '%s' is produced by two ops: %s (line %d) and this %s",
							o->arg[a], op_name(q->kind), q->loc.line, op_name(o->kind));
				}
			}
		}
	}
	for (int i = 0; i < n; i++) {
		const SpecOp *o = &s->ops[i];
		for (int a = 0; a < ARG_COUNT; a++) {
			if (!o->arg[a] || arg_is_output((ArgSlot)a))
				continue;
			int prod = -1;
			for (int j = 0; j < n && prod < 0; j++)
				for (int c = 0; c < ARG_COUNT; c++)
					if (s->ops[j].arg[c] && arg_is_output((ArgSlot)c) && !strcmp(s->ops[j].arg[c], o->arg[a]))
						prod = j;
			if (prod == i)
				diag_error(b->d, o->arg_loc[a], "%s reads its own output '%s'", op_name(o->kind), o->arg[a]);
			if (prod < 0) {
				bool declared = false;
				for (int t = 0; t < s->ntensors; t++)
					declared |= !strcmp(s->tensors[t].name, o->arg[a]);
				if (!declared) {
					int cn = s->ntensors + n * 2;
					const char **cands = arena_alloc(b->a, sizeof *cands * (size_t)(cn + 1));
					int k = 0;
					for (int t = 0; t < s->ntensors; t++)
						cands[k++] = s->tensors[t].name;
					for (int j = 0; j < n; j++) {
						cands[k++] = s->ops[j].arg[ARG_OUT];
						cands[k++] = s->ops[j].arg[ARG_RESIDUAL_OUT];
					}
					const char *sug = spell_suggest(o->arg[a], cands, k);
					diag_error(b->d, o->arg_loc[a], "unknown tensor '%s'%s: no op produces it and it is not declared under tensors",
						o->arg[a], sug ? arena_printf(b->a, " (did you mean '%s'?)", sug) : "");
				}
			}
			prod_of_arg[i * ARG_COUNT + a] = prod;
		}
	}
	int *order = arena_alloc(b->a, sizeof *order * (size_t)n);
	bool *done = arena_alloc(b->a, sizeof *done * (size_t)n);
	for (int k = 0; k < n; k++) {
		int pick = -1;
		for (int i = 0; i < n; i++) { /* the first ready op of the earliest phase */
			if (done[i] || (pick >= 0 && s->ops[i].phase >= s->ops[pick].phase))
				continue;
			bool ready = true;
			for (int a = 0; a < ARG_COUNT; a++) {
				int p = prod_of_arg[i * ARG_COUNT + a];
				if (p >= 0 && !done[p])
					ready = false;
			}
			if (ready)
				pick = i;
		}
		if (pick < 0)
			report_cycle(b, prod_of_arg, done);
		done[pick] = true;
		order[k] = pick;
	}
	return order;
}

/* ---- inference ---- */

/* A produced tensor that was also declared must agree with what its op makes. */
static void check_declared(B *b, int id, const SpecOp *o)
{
	const SpecTensor *st = b->decl[id];
	if (!st)
		return;
	Tensor *t = &b->g->tensors[id];
	Extent decl[TG_MAX_RANK];
	for (int i = 0; i < st->rank; i++)
		decl[i] = eval_extent(b, st->shape_src[i], st->shape_loc[i], st->name);
	bool same = st->rank == t->rank;
	for (int i = 0; same && i < t->rank; i++)
		same = extent_eq(decl[i], t->shape[i]);
	if (!same)
		diag_error(b->d, st->loc, "'%s' is declared with shape %s but %s (line %d) produces %s", st->name,
			shape_str(b, decl, st->rank), op_name(o->kind), o->loc.line, shape_str(b, t->shape, t->rank));
	if ((st->dtype_set || (o->kind == OP_GEMM_CAST && o->p.accumulate)) && st->dtype != t->dtype)
		diag_error(b->d, or_loc(st->dtype_loc, st->loc), "'%s' is declared as %s but %s (line %d) produces %s", st->name,
			dtype_name(st->dtype), op_name(o->kind), o->loc.line, dtype_name(t->dtype));
	if (st->role_set && st->role != t->role)
		diag_error(b->d, st->role_loc, "'%s' is declared with role %s but %s (line %d) gives it role %s", st->name,
			role_name(st->role), op_name(o->kind), o->loc.line, role_name(t->role));
}

/* nvfp4_rht: TE transforms the wgrad operands (activations and gradients),
 * never weights. The layer recipe's nvfp4_rht skips weights; an override that
 * sets it on a weight is an error, and so is nvfp4_rht with nvfp4_2d (16x16
 * blocks are for weights). Errors point at the tensor's override key when it
 * has one (nvfp4_rht, else nvfp4_2d), else at the layer recipe's nvfp4_rht. */
static void check_rht(B *b, Tensor *t)
{
	Recipe *r = &t->recipe;
	if (r->scaling != SCALING_NVFP4 || !r->nvfp4_rht)
		return;
	const int key = __builtin_ctz(RECIPE_SET_NVFP4_RHT);
	const SpecOverride *ov = override_for(b, t->name);
	bool own = ov && (ov->set & RECIPE_SET_NVFP4_RHT);
	Loc at = own ? ov->keys[key] : b->s->recipe_keys[key];
	if (t->role == ROLE_WEIGHT && !own) {
		r->nvfp4_rht = false; /* the layer's option is for activations and gradients */
		return;
	}
	if (t->role == ROLE_WEIGHT)
		diag_error(b->d, at, "nvfp4_rht on weight '%s': the random Hadamard transform is for the wgrad operands "
			"(activations and gradients), never weights; remove nvfp4_rht from the override of '%s'", t->name, t->name);
	if (r->nvfp4_2d && !own && ov && (ov->set & RECIPE_SET_NVFP4_2D))
		at = ov->keys[__builtin_ctz(RECIPE_SET_NVFP4_2D)]; /* the override added 2d to the layer's rht */
	if (r->nvfp4_2d)
		diag_error(b->d, at, "nvfp4_rht and nvfp4_2d both apply to '%s': the Hadamard transform is for the 1D-block "
			"columnwise copies of activations and gradients, 16x16 blocks are for weights; set one of them to false for '%s'",
			t->name, t->name);
}

/* The output of a quantizing op: quantized with its recipe, or kept in high precision. */
static void quantize_out(B *b, const SpecOp *o, int out, const Tensor *in, Role role)
{
	Tensor *t = &b->g->tensors[out];
	t->role = role;
	t->hp_dtype = in->dtype;
	if (o->p.high_precision) {
		t->dtype = t->hp_dtype = o->p.out_dtype;
		return;
	}
	t->recipe = recipe_for(b, out);
	if (t->recipe.scaling == SCALING_NONE) {
		t->dtype = in->dtype;
		return;
	}
	t->dtype = quant_dtype(&t->recipe, role);
	t->rowwise = o->p.rowwise;
	t->columnwise = o->p.columnwise;
	if (t->columnwise && t->rank < 2)
		diag_error(b->d, or_loc(o->layout_loc, o->loc), "the columnwise copy of '%s' needs a tensor of rank 2 or more; '%s' is %s",
			t->name, t->name, shape_str(b, t->shape, t->rank));
	check_rht(b, t);
	const ScalingInfo *si = scaling_info(t->recipe.scaling);
	long block = si->scale == SCALE_E8M0 || si->scale == SCALE_E4M3 ? si->block_cols : 0; /* byte scales: whole blocks */
	Extent last = t->shape[t->rank - 1];
	if (block && (last.dim >= 0 || last.add % block))
		diag_error(b->d, o->loc, "%s needs the last extent of '%s' to be a multiple of %ld, found %s",
			scaling_name(t->recipe.scaling), t->name, block, extent_str(b->a, b->g, last));
}

static const Tensor *arg_t(B *b, const Op *op, ArgSlot a)
{
	return op->arg[a] >= 0 ? &b->g->tensors[op->arg[a]] : NULL;
}

static void check_hp_input(B *b, const SpecOp *o, const Tensor *t, ArgSlot a)
{
	if (!is_hp(t->dtype))
		diag_error(b->d, op_arg_loc(o, a), "%s reads '%s' as %s, but '%s' is already quantized (%s); %s needs bf16, fp16 or fp32",
			op_name(o->kind), t->name, arg_name(a), t->name, dtype_name(t->dtype), op_name(o->kind));
}

/* A norm's per-row statistic (rsigma, mu): FP32, x's shape with the last extent 1. */
static void stat_shape(Tensor *t, const Tensor *x)
{
	t->rank = x->rank;
	memcpy(t->shape, x->shape, sizeof t->shape);
	t->shape[x->rank - 1] = (Extent){-1, 0, 1};
	t->dtype = t->hp_dtype = DT_F32;
	t->role = ROLE_ACTIVATION;
}

static void infer_norm(B *b, const SpecOp *o, Op *op)
{
	const Tensor *in = arg_t(b, op, ARG_IN), *gamma = arg_t(b, op, ARG_GAMMA);
	check_hp_input(b, o, in, ARG_IN);
	Extent last = in->shape[in->rank - 1];
	const Tensor *aff[2] = {gamma, arg_t(b, op, ARG_BETA)};
	ArgSlot slots[2] = {ARG_GAMMA, ARG_BETA};
	for (int i = 0; i < 2; i++) {
		const Tensor *t = aff[i];
		if (!t)
			continue;
		if (t->rank != 1 || !extent_eq(t->shape[0], last))
			diag_error(b->d, op_arg_loc(o, slots[i]), "%s '%s' has shape %s; a norm over %s needs [%s]", arg_name(slots[i]),
				t->name, shape_str(b, t->shape, t->rank), shape_str(b, in->shape, in->rank), extent_str(b->a, b->g, last));
		if (t->dtype != in->dtype && t->dtype != DT_F32)
			diag_error(b->d, op_arg_loc(o, slots[i]), "%s '%s' is %s; it must be the input's dtype (%s) or fp32",
				arg_name(slots[i]), t->name, dtype_name(t->dtype), dtype_name(in->dtype));
	}
	const Tensor *res = arg_t(b, op, ARG_RESIDUAL);
	if (res) {
		bool same = res->rank == in->rank;
		for (int i = 0; same && i < in->rank; i++)
			same = extent_eq(res->shape[i], in->shape[i]);
		if (!same)
			diag_error(b->d, op_arg_loc(o, ARG_RESIDUAL), "residual '%s' has shape %s; it must match the input %s", res->name,
				shape_str(b, res->shape, res->rank), shape_str(b, in->shape, in->rank));
		if (res->dtype != in->dtype)
			diag_error(b->d, op_arg_loc(o, ARG_RESIDUAL), "residual '%s' is %s; it must match the input's dtype (%s)",
				res->name, dtype_name(res->dtype), dtype_name(in->dtype));
	}
	Tensor *out = &b->g->tensors[op->arg[ARG_OUT]];
	out->rank = in->rank;
	memcpy(out->shape, in->shape, sizeof out->shape);
	quantize_out(b, o, op->arg[ARG_OUT], in, in->role);
	if (op->arg[ARG_RESIDUAL_OUT] >= 0) {
		Tensor *r = &b->g->tensors[op->arg[ARG_RESIDUAL_OUT]];
		r->rank = in->rank;
		memcpy(r->shape, in->shape, sizeof r->shape);
		r->dtype = r->hp_dtype = in->dtype;
		r->role = in->role;
	}
	for (ArgSlot a = ARG_RSIGMA_OUT; a <= ARG_MU_OUT; a++)
		if (op->arg[a] >= 0)
			stat_shape(&b->g->tensors[op->arg[a]], in);
}

static void infer_glu(B *b, const SpecOp *o, Op *op)
{
	const Tensor *in = arg_t(b, op, ARG_IN);
	check_hp_input(b, o, in, ARG_IN);
	Extent last = in->shape[in->rank - 1];
	const int hv = glu_halves(op->p.act); /* a gated act's input is [.., 2*C], silu's ... [.., C] */
	if (hv == 2 && (last.mul % 2 || last.add % 2))
		diag_error(b->d, op_arg_loc(o, ARG_IN), "glu_amax input '%s' has last extent %s, which is not even; the input is [.., 2*C] (gate and linear halves)",
			in->name, extent_str(b->a, b->g, last));
	Tensor *out = &b->g->tensors[op->arg[ARG_OUT]];
	out->rank = in->rank;
	memcpy(out->shape, in->shape, sizeof out->shape);
	out->shape[in->rank - 1] = (Extent){last.dim, last.mul / hv, last.add / hv};
	quantize_out(b, o, op->arg[ARG_OUT], in, in->role);
}

static void infer_cast(B *b, const SpecOp *o, Op *op)
{
	const Tensor *in = arg_t(b, op, ARG_IN);
	check_hp_input(b, o, in, ARG_IN);
	Tensor *out = &b->g->tensors[op->arg[ARG_OUT]];
	out->rank = in->rank;
	memcpy(out->shape, in->shape, sizeof out->shape);
	quantize_out(b, o, op->arg[ARG_OUT], in, in->role);
}

/* What the kernels of a quantizing op can do, checked here so that `tegen check`
 * rejects what plan or build would (the planner and templates have the same
 * rules: variant_legal in plan.c, the static_asserts of the templates):
 * - fused norm/GLU kernels: no block128x128 copy; a norm's block1x128 (or MXFP8) copy with
 *   a columnwise one: the row kernel (the rowwise copy, if any, and the statistics), then
 *   norm_colwise.cu (8-element vectors); a GLU's takes glu_amax.cu's block tile path
 *   (8-element vectors), a dglu's dglu.cu's where C % 128 == 0 and no dbias is fused (else
 *   unfused: the op writes FP32, the tile kernel casts: op_writes_hp);
 * - row lengths: the row kernels (norm_quantize.cu, glu_amax.cu) load vectors of
 *   at least 2 elements, 4 for block1x128 and for the columnwise tile path (the
 *   planner makes a per-tensor columnwise copy of a fused op there, unless the
 *   byte transpose's 16-byte vectors fit); the tile kernel (cast_transpose.cu:
 *   quantize, cast_transpose) moves 8-element column chunks. NVFP4 copies need
 *   16 (quantize_out). */
static void check_kernel_shape(B *b, const SpecOp *o, const Op *op)
{
	const Tensor *out = &b->g->tensors[op->arg[ARG_OUT]];
	const char *name = op_name(op->kind);
	bool fused = op_family(op->kind) == OPF_ROW;
	Scaling sc = is_low_precision(out) ? out->recipe.scaling : SCALING_NONE;
	if (fused && sc == SCALING_BLOCK128X128)
		diag_error(b->d, o->loc, "%s: block128x128 scaling is for weights; fused %s supports block1x128 for '%s'", name,
			name, out->name);
	Extent last = out->shape[out->rank - 1];
	if (last.dim >= 0)
		diag_error(b->d, o->loc, "%s: the kernels are compiled for a fixed row length, but the last extent of '%s' is %s (dynamic)",
			name, out->name, extent_str(b->a, b->g, last));
	if (sc == SCALING_NVFP4 && !fused)
		return; /* nvfp4_quantize.cu: 16-element blocks, checked by quantize_out */
	long cols = last.add, need;
	const char *why;
	if (!fused || (sc == SCALING_BLOCK1X128 && out->columnwise)) {
		need = 8;
		why = !fused ? "the tile kernel moves 8-element column chunks"
			: op->kind == OP_GLU_AMAX ? "the kernel that writes both block copies loads 8-element vectors"
			: "norm_colwise.cu, which writes its columnwise copy, loads 8-element vectors";
	} else if (sc == SCALING_BLOCK1X128 || (sc != SCALING_NONE && sc != SCALING_NVFP4 && out->columnwise)) {
		need = 4;
		why = sc == SCALING_BLOCK1X128 ? "the row kernel's 1x128 blocks need vectors of 4 elements"
			: "the columnwise tile path loads vectors of 4 elements";
	} else {
		need = 2;
		why = "the row kernel loads vectors of at least 2 elements";
	}
	if (cols % need)
		diag_error(b->d, o->loc, "%s: the last extent of '%s' must be a multiple of %ld, found %ld: %s", name, out->name, need,
			cols, why);
	/* a row kernel keeps its row in registers: at most 448 bytes of input a thread, 1024 threads */
	const Tensor *in = &b->g->tensors[op->arg[ARG_IN]];
	bool gated = op->kind == OP_GLU_AMAX && glu_halves(op->p.act) == 2;
	long isz = (in->dtype == DT_F32 ? 4 : 2) * (gated ? 2 : 1), most = 1024L * 448 / isz;
	if (fused && cols > most)
		diag_error(b->d, o->loc, "%s: a row of %ld elements of '%s' is longer than the row kernel holds (it keeps a row in "
			"registers: at most %ld %s elements%s)", name, cols, in->name, most, dtype_name(in->dtype),
			gated ? " per half" : "");
}

/* ---- backward ops (dglu, dnorm, dbias) ---- */

static bool same_shape(const Tensor *x, const Tensor *y)
{
	bool same = x->rank == y->rank;
	for (int i = 0; same && i < x->rank; i++)
		same = extent_eq(x->shape[i], y->shape[i]);
	return same;
}

/* An input of a backward op must have shape `want` (a tensor or x's shape with the last extent replaced). */
static void check_operand_shape(B *b, const SpecOp *o, ArgSlot a, const Tensor *t, const Tensor *like, Extent last,
	const char *why)
{
	Tensor want = *like;
	want.shape[want.rank - 1] = last;
	if (!same_shape(t, &want))
		diag_error(b->d, op_arg_loc(o, a), "%s %s '%s' has shape %s; it must be %s (%s)", op_name(o->kind), arg_name(a),
			t->name, shape_str(b, t->shape, t->rank), shape_str(b, want.shape, want.rank), why);
}

/* dglu: h [.., 2C] and d_act [.., C] -> d_h [.., 2C], quantized as a gradient (silu ...: h, d_act, d_h [.., C]). */
static void infer_dglu(B *b, const SpecOp *o, Op *op)
{
	const Tensor *h = arg_t(b, op, ARG_IN), *g = arg_t(b, op, ARG_GRAD);
	check_hp_input(b, o, h, ARG_IN);
	check_hp_input(b, o, g, ARG_GRAD);
	Extent last = h->shape[h->rank - 1];
	const int hv = glu_halves(op->p.act);
	if (hv == 2 && (last.mul % 2 || last.add % 2))
		diag_error(b->d, op_arg_loc(o, ARG_IN), "dglu input '%s' has last extent %s, which is not even; h is the saved "
			"pre-activation [.., 2*C] (gate and linear halves)", h->name, extent_str(b->a, b->g, last));
	check_operand_shape(b, o, ARG_GRAD, g, h, (Extent){last.dim, last.mul / hv, last.add / hv},
		hv == 2 ? "the gradient of the GLU output, half of h's last extent" : "the gradient of the activation's output, h's shape");
	Tensor *out = &b->g->tensors[op->arg[ARG_OUT]];
	out->rank = h->rank;
	memcpy(out->shape, h->shape, sizeof out->shape);
	quantize_out(b, o, op->arg[ARG_OUT], h, ROLE_GRADIENT);
	if (op->arg[ARG_DBIAS_OUT] >= 0) { /* the column sums of d_h, FP32 [2C] */
		Tensor *db = &b->g->tensors[op->arg[ARG_DBIAS_OUT]];
		db->rank = 1;
		db->shape[0] = last;
		db->dtype = db->hp_dtype = DT_F32;
		db->role = ROLE_GRADIENT;
	}
}

/* dnorm: x, d_y, gamma, rsigma (mu) -> d_x (unquantized), d_gamma and d_beta FP32 [cols]. */
static void infer_dnorm(B *b, const SpecOp *o, Op *op)
{
	const Tensor *x = arg_t(b, op, ARG_IN), *dy = arg_t(b, op, ARG_GRAD), *gamma = arg_t(b, op, ARG_GAMMA);
	check_hp_input(b, o, x, ARG_IN);
	check_hp_input(b, o, dy, ARG_GRAD);
	Extent last = x->shape[x->rank - 1];
	check_operand_shape(b, o, ARG_GRAD, dy, x, last, "the gradient of the norm's output");
	const Tensor *dres = arg_t(b, op, ARG_GRAD_RESIDUAL);
	if (dres) {
		check_operand_shape(b, o, ARG_GRAD_RESIDUAL, dres, x, last, "the residual stream's gradient, added to d_x");
	} /* (in any high-precision dtype: dnorm.cu loads it as TG_R_DTYPE) */
	check_hp_input(b, o, gamma, ARG_GAMMA);
	if (gamma->rank != 1 || !extent_eq(gamma->shape[0], last))
		diag_error(b->d, op_arg_loc(o, ARG_GAMMA), "gamma '%s' has shape %s; a norm over %s needs [%s]", gamma->name,
			shape_str(b, gamma->shape, gamma->rank), shape_str(b, x->shape, x->rank), extent_str(b->a, b->g, last));
	for (ArgSlot a = ARG_RSIGMA; a <= ARG_MU; a++) {
		const Tensor *t = arg_t(b, op, a);
		if (!t)
			continue;
		check_operand_shape(b, o, a, t, x, (Extent){-1, 0, 1}, "one FP32 value per row, as norm_quantize saves it");
		if (t->dtype != DT_F32)
			diag_error(b->d, op_arg_loc(o, a), "%s '%s' is %s; the saved statistics are fp32", arg_name(a), t->name,
				dtype_name(t->dtype));
	}
	Tensor *dx = &b->g->tensors[op->arg[ARG_OUT]];
	dx->rank = x->rank;
	memcpy(dx->shape, x->shape, sizeof dx->shape);
	dx->dtype = dx->hp_dtype = o->p.high_precision ? o->p.out_dtype : dy->dtype;
	dx->role = ROLE_GRADIENT;
	for (ArgSlot a = ARG_D_GAMMA; a <= ARG_D_BETA; a++) {
		if (op->arg[a] < 0)
			continue;
		Tensor *t = &b->g->tensors[op->arg[a]];
		t->rank = 1;
		t->shape[0] = last;
		t->dtype = t->hp_dtype = DT_F32;
		t->role = ROLE_GRADIENT;
	}
}

/* dbias: g [.., C] -> db [C] FP32 (the column sums). */
static void infer_dbias(B *b, const SpecOp *o, Op *op)
{
	const Tensor *g = arg_t(b, op, ARG_IN);
	check_hp_input(b, o, g, ARG_IN);
	Tensor *db = &b->g->tensors[op->arg[ARG_OUT]];
	db->rank = 1;
	db->shape[0] = g->shape[g->rank - 1];
	db->dtype = db->hp_dtype = DT_F32;
	db->role = ROLE_GRADIENT;
}

/* adamw: the weight w (a layer input of role weight, high precision) is updated in place
 * from its gradient grad (w's shape; FP32, or BF16 / FP16 by the weight's grad_dtype); one update per weight. */
static void infer_adamw(B *b, const SpecOp *o, Op *op)
{
	const Tensor *w = arg_t(b, op, ARG_IN), *g = arg_t(b, op, ARG_GRAD);
	check_hp_input(b, o, w, ARG_IN);
	if (w->producer >= 0 || w->role != ROLE_WEIGHT)
		diag_error(b->d, op_arg_loc(o, ARG_IN), "adamw updates '%s', which is not a layer input of role weight", w->name);
	if ((g->dtype != DT_F32 && g->dtype != DT_BF16 && g->dtype != DT_F16) || !same_shape(g, w))
		diag_error(b->d, op_arg_loc(o, ARG_GRAD), "adamw's gradient '%s' must be fp32, bf16 or fp16 with the shape of '%s'",
			g->name, w->name);
	/* adamw.cu moves 4 bytes of a 16-bit weight or gradient at a time (2 elements): the flat update needs the last
	 * extent even (plan_adamw's vector width), unless both are fp32 */
	Extent last = w->rank ? w->shape[w->rank - 1] : (Extent){-1, 0, 1};
	if (last.dim < 0 && last.add % 2 && (w->dtype != DT_F32 || g->dtype != DT_F32))
		diag_error(b->d, op_arg_loc(o, ARG_IN), "adamw: weight '%s' (%s) with gradient '%s' (%s) has an odd last extent "
			"(%ld); the update moves 16-bit values two at a time: make it even, or both fp32", w->name,
			dtype_name(w->dtype), g->name, dtype_name(g->dtype), last.add);
	for (int k = 0; k < op->id; k++)
		if (b->g->ops[k].kind == OP_ADAMW && b->g->ops[k].arg[ARG_IN] == w->id)
			diag_error(b->d, o->loc, "adamw: weight '%s' is updated twice", w->name);
}

/* The backward kernels' row rules (dglu.cu, dnorm.cu, dbias.cu static_asserts; plan.c's
 * variant_legal): fixed row lengths; dglu's rows are its halves (C): vectors of 2, whole
 * 1x128 blocks (C % 128) and MXFP8 blocks (C % 32) in a half, and its tile path (a fused
 * dbias; a columnwise MXFP8 copy, or a per-tensor one without the rowwise copy or whose 2C
 * is not a multiple of 16: else the rowwise bytes are transposed) steps 64 columns (C % 64),
 * except the staged path (dglu_staged: a per-tensor or MXFP8 copy from bf16/fp16 h and d_act, C % 8, MXFP8's C % 32);
 * dnorm loads vectors of 2 elements, dbias of 4 bytes (2 bf16/fp16 elements). */
static void check_backward_shape(B *b, const SpecOp *o, const Op *op)
{
	const Tensor *in = arg_t(b, op, ARG_IN), *out = arg_t(b, op, ARG_OUT);
	const char *name = op_name(op->kind);
	const Tensor *row = op->kind == OP_DBIAS ? in : out;
	Extent last = row->shape[row->rank - 1];
	if (last.dim >= 0)
		diag_error(b->d, o->loc, "%s: the kernels are compiled for a fixed row length, but the last extent of '%s' is %s (dynamic)",
			name, row->name, extent_str(b->a, b->g, last));
	long cols = last.add;
	if (op->kind == OP_DNORM && cols % 2)
		diag_error(b->d, o->loc, "dnorm: the last extent of '%s' must be a multiple of 2, found %ld: the kernel loads vectors "
			"of at least 2 elements", in->name, cols);
	if (op->kind == OP_DBIAS && in->dtype != DT_F32 && cols % 2)
		diag_error(b->d, o->loc, "dbias: the last extent of %s '%s' must be a multiple of 2, found %ld: the kernel loads "
			"at least 4 bytes", dtype_name(in->dtype), in->name, cols);
	if (op->kind != OP_DGLU)
		return;
	const int hv = glu_halves(op->p.act);
	const bool gated = hv == 2;
	long c = cols / hv, need = 2;
	const char *why = "the kernel loads vectors of at least 2 elements";
	Scaling sc = is_low_precision(out) ? out->recipe.scaling : SCALING_NONE;
	if (sc == SCALING_BLOCK128X128)
		diag_error(b->d, o->loc, "dglu: block128x128 scaling is for weights; dglu supports block1x128 for '%s'", out->name);
	bool tile = (out->columnwise && (sc == SCALING_MXFP8 ||
		((sc == SCALING_DELAYED || sc == SCALING_CURRENT) && (cols % 16 || !out->rowwise)))) || op->arg[ARG_DBIAS_OUT] >= 0;
	bool unfused = op_writes_hp(b->g, op); /* FP32 d_h, then the tile kernel casts */
	if (unfused && !tile) {
		need = gated ? 4 : 8; /* d_h's row: 2C, or C */
		why = "the tile kernel that writes the block copies of d_h moves 8-element column chunks";
	} else if (sc == SCALING_BLOCK1X128 && !unfused) {
		need = 128;
		why = gated ? "a 1x128 block must lie within one half (d_gate, d_linear)" : "dglu.cu writes whole 1x128 blocks";
	} else if (tile && dglu_staged_kind(b->g, op)) {
		need = sc == SCALING_MXFP8 ? 32 : 8;
		why = sc == SCALING_MXFP8 ? (gated ? "an MXFP8 block must lie within one half (d_gate, d_linear)"
		                                   : "dglu.cu writes whole MXFP8 blocks")
		                          : "the staged path (a per-tensor columnwise copy) moves 8-element vectors of a half";
	} else if (tile) {
		need = sc == SCALING_MXFP8 ? 32 : 16;
		why = sc == SCALING_MXFP8 ? "the tile path (a columnwise copy from fp32 h or d_act, or a fused dbias) steps 32 "
			"columns of a half under MXFP8" : "the tile path (a columnwise copy from fp32 h or d_act, or a fused dbias) steps "
			"16 columns of a half at the narrowest";
	} else if (sc == SCALING_MXFP8) {
		need = 32;
		why = gated ? "an MXFP8 block must lie within one half (d_gate, d_linear)" : "dglu.cu writes whole MXFP8 blocks";
	}
	if (c % need)
		diag_error(b->d, o->loc, "dglu: %s of '%s' (C = %ld) must be a multiple of %ld: %s", gated ? "half the last extent"
			: "the last extent", out->name, c, need, why);
}

/* Scaling classes that cuBLASLt can pair. */
static int scaling_class(Scaling s)
{
	switch (s) {
	case SCALING_DELAYED:
	case SCALING_CURRENT: return 1;
	case SCALING_BLOCK1X128:
	case SCALING_BLOCK128X128: return 2;
	case SCALING_MXFP8: return 3;
	case SCALING_NVFP4: return 4;
	default: return 0;
	}
}

static const char *pass_name(GemmPass p)
{
	return p == PASS_FPROP ? "fprop" : p == PASS_DGRAD ? "dgrad" : "wgrad";
}

static void need_copy(B *b, const SpecOp *o, ArgSlot a, const Tensor *t, bool columnwise)
{
	if (columnwise ? t->columnwise : t->rowwise)
		return;
	const char *copy = columnwise ? "columnwise" : "rowwise";
	const SpecOp *prod = b->sop[t->producer];
	diag_error(b->d, op_arg_loc(o, a), "gemm_cast (%s) needs the %s copy of '%s'; add %s to the layout of the op that produces it (line %d)",
		pass_name(o->p.pass), copy, t->name, copy, prod->loc.line);
}

/* The Hadamard transform runs along K (the columnwise copy's rows) with one sign
 * mask, so the product is unchanged only when both operand copies have it. */
static void check_rht_pair(B *b, const SpecOp *o, const Tensor *A, bool a_col, const Tensor *Bt, bool b_col)
{
	bool ra = a_col && tensor_rht_t(A), rb = b_col && tensor_rht_t(Bt);
	if (ra == rb)
		return;
	const Tensor *h = ra ? A : Bt, *p = ra ? Bt : A;
	bool p_col = ra ? b_col : a_col;
	diag_error(b->d, op_arg_loc(o, ra ? ARG_B : ARG_A), "gemm_cast (%s) pairs the Hadamard-transformed columnwise copy of '%s' "
		"(nvfp4_rht) with the untransformed %s copy of '%s'; the transform runs along K, so both operands need it or neither: %s",
		pass_name(o->p.pass), h->name, p_col ? "columnwise" : "rowwise", p->name,
		p_col ? "set nvfp4_rht on both (or neither)"
		      : arena_printf(b->a, "a rowwise copy is never transformed, so remove nvfp4_rht from '%s'", h->name));
}

static void infer_gemm(B *b, const SpecOp *o, Op *op)
{
	const Tensor *A = arg_t(b, op, ARG_A), *Bt = arg_t(b, op, ARG_B);
	const char *pn = pass_name(o->p.pass);
	bool qa = is_low_precision(A), qb = is_low_precision(Bt);
	if (qa != qb) {
		const Tensor *q = qa ? A : Bt, *h = qa ? Bt : A;
		diag_error(b->d, o->loc, "gemm_cast mixes quantized '%s' (%s) with high-precision '%s' (%s); quantize both operands or neither",
			q->name, dtype_name(q->dtype), h->name, dtype_name(h->dtype));
	}
	if (qa) {
		Scaling sa = A->recipe.scaling, sb = Bt->recipe.scaling;
		int ca = scaling_class(sa), cb = scaling_class(sb);
		if (ca != cb)
			diag_error(b->d, o->loc, "gemm_cast operands have incompatible scaling: '%s' is %s, '%s' is %s", A->name,
				scaling_name(sa), Bt->name, scaling_name(sb));
		if (sa == SCALING_BLOCK128X128 && sb == SCALING_BLOCK128X128)
			diag_error(b->d, o->loc, "gemm_cast cannot multiply two block128x128 operands ('%s', '%s'); one must be block1x128 (activations and gradients)",
				A->name, Bt->name);
		if (A->dtype == DT_E5M2 && Bt->dtype == DT_E5M2)
			diag_error(b->d, o->loc, "gemm_cast has no e5m2 x e5m2 form ('%s', '%s'); use format e4m3 or hybrid for one of them",
				A->name, Bt->name);
		bool a_col = o->p.pass == PASS_WGRAD, b_col = o->p.pass != PASS_FPROP;
		need_copy(b, o, ARG_A, A, a_col);
		need_copy(b, o, ARG_B, Bt, b_col);
		check_rht_pair(b, o, A, a_col, Bt, b_col);
	} else if (A->dtype != Bt->dtype) {
		diag_error(b->d, o->loc, "gemm_cast operands have different dtypes: '%s' is %s, '%s' is %s", A->name,
			dtype_name(A->dtype), Bt->name, dtype_name(Bt->dtype));
	}

	/* shapes */
	Tensor *out = &b->g->tensors[op->arg[ARG_OUT]];
	if (A->rank < 2)
		diag_error(b->d, op_arg_loc(o, ARG_A), "gemm_cast operand a '%s' has shape %s; it needs rank 2 or 3", A->name,
			shape_str(b, A->shape, A->rank));
	if (A->rank > 3)
		diag_error(b->d, op_arg_loc(o, ARG_A), "gemm_cast operand a '%s' has shape %s; it needs rank 2 or 3", A->name,
			shape_str(b, A->shape, A->rank));
	Extent ka = A->shape[A->rank - 1];
	if (o->p.pass == PASS_WGRAD) {
		bool same = A->rank == Bt->rank;
		for (int i = 0; same && i < A->rank - 1; i++)
			same = extent_eq(A->shape[i], Bt->shape[i]);
		if (!same)
			diag_error(b->d, op_arg_loc(o, ARG_B), "gemm_cast (wgrad) M mismatch: a '%s' is %s and b '%s' is %s; their leading extents must agree (a = dY [M,N], b = X [M,K])",
				A->name, shape_str(b, A->shape, A->rank), Bt->name, shape_str(b, Bt->shape, Bt->rank));
		out->rank = 2;
		out->shape[0] = ka;
		out->shape[1] = Bt->shape[Bt->rank - 1];
	} else {
		if (Bt->rank != 2)
			diag_error(b->d, op_arg_loc(o, ARG_B), "gemm_cast operand b '%s' has shape %s; it needs rank 2 (a weight)", Bt->name,
				shape_str(b, Bt->shape, Bt->rank));
		int kb = o->p.pass == PASS_FPROP ? 1 : 0;
		if (!extent_eq(ka, Bt->shape[kb]))
			diag_error(b->d, op_arg_loc(o, ARG_B), "gemm_cast (%s) inner extents differ: a '%s' is %s and b '%s' is %s (%s)", pn,
				A->name, shape_str(b, A->shape, A->rank), Bt->name, shape_str(b, Bt->shape, Bt->rank),
				o->p.pass == PASS_FPROP ? "a [M,K] x b [N,K] -> [M,N]" : "a = dY [M,N], b = W [N,K] -> [M,K]");
		out->rank = A->rank;
		memcpy(out->shape, A->shape, sizeof out->shape);
		out->shape[A->rank - 1] = Bt->shape[1 - kb];
	}
	/* cuBLASLt's descriptors and the GEMM's kernels are planned for fixed K and N: only M (a's rows, or the
	 * shared rows of a wgrad) may be dynamic */
	const Tensor *fixed[2] = {A, Bt};
	for (int x = 0; x < 2; x++) {
		const Tensor *t = fixed[x];
		int from = x == 1 && o->p.pass != PASS_WGRAD ? 0 : t->rank - 1; /* fprop, dgrad: both of b's extents */
		for (int k = from; k < t->rank; k++)
			if (t->shape[k].dim >= 0)
				diag_error(b->d, op_arg_loc(o, x == 0 ? ARG_A : ARG_B), "gemm_cast (%s): %s '%s' has shape %s, whose "
					"extent %s is dynamic; a GEMM is planned for fixed K and N (only M, the rows%s, may be dynamic)",
					pn, x == 0 ? "a" : "b", t->name, shape_str(b, t->shape, t->rank),
					extent_str(b->a, b->g, t->shape[k]), o->p.pass == PASS_WGRAD ? " both operands share" : " of a");
	}
	out->role = o->p.pass == PASS_FPROP ? ROLE_ACTIVATION : ROLE_GRADIENT;
	const Tensor *bias = arg_t(b, op, ARG_BIAS);
	if (bias) {
		Extent n = out->shape[out->rank - 1];
		if (bias->rank != 1 || !extent_eq(bias->shape[0], n))
			diag_error(b->d, op_arg_loc(o, ARG_BIAS), "bias '%s' has shape %s; it must be [%s], the output's last extent", bias->name,
				shape_str(b, bias->shape, bias->rank), extent_str(b->a, b->g, n));
		if (!is_hp(bias->dtype))
			diag_error(b->d, op_arg_loc(o, ARG_BIAS), "bias '%s' is %s; it must be bf16, fp16 or fp32", bias->name,
				dtype_name(bias->dtype));
	}
	if (o->p.out_dtype != DT_NONE) {
		out->dtype = out->hp_dtype = o->p.out_dtype;
	} else {
		out->recipe = recipe_for(b, op->arg[ARG_OUT]);
		if (out->recipe.scaling != SCALING_DELAYED)
			diag_error(b->d, or_loc(o->dtype_loc, o->loc), "gemm_cast dtype fp8 needs delayed scaling for '%s', which has scaling %s (cuBLASLt needs the scale before the GEMM); output bf16 and add a quantize op",
				out->name, scaling_name(out->recipe.scaling));
		out->dtype = quant_dtype(&out->recipe, out->role);
		out->hp_dtype = DT_F32;
		out->rowwise = true;
		if (out->dtype == DT_E5M2 && A->dtype != DT_E5M2 && Bt->dtype != DT_E5M2) /* measured: no algorithm, H100 */
			diag_error(b->d, or_loc(o->dtype_loc, o->loc), "gemm_cast writes '%s' in e5m2 from two e4m3 operands ('%s', "
				"'%s'), which cuBLASLt does not (e4m3 x e4m3 -> e4m3 only); give '%s' format e4m3, or output bf16 and "
				"quantize it", out->name, A->name, Bt->name, out->name);
	}
	const Tensor *add = arg_t(b, op, ARG_ADD);
	if (add && (!same_shape(add, out) || add->dtype != out->dtype)) /* cuBLASLt's C: D's layout and type */
		diag_error(b->d, op_arg_loc(o, ARG_ADD), "add '%s' is %s %s; it must be %s %s, the output's shape and dtype",
			add->name, dtype_name(add->dtype), shape_str(b, add->shape, add->rank), dtype_name(out->dtype),
			shape_str(b, out->shape, out->rank));
	/* cuBLASLt's high-precision GEMMs: BF16 x BF16 -> BF16/FP32, FP16 x FP16 -> FP16/FP32,
	 * FP32 x FP32 -> FP32; MXFP8/NVFP4 run as a BF16 GEMM wherever they are emulated */
	DType hin = gemm_hp_dtype(A, qa);
	/* an fp16 output of MXFP8/NVFP4 operands: FP32 from cuBLASLt, then a conversion (plan_d_convert), which
	 * neither accumulate nor add (cuBLASLt's C, read in D's type) can go through */
	bool via_fp32 = qa && out->dtype == DT_F16 && !o->p.accumulate && !add;
	if (hin != DT_NONE && out->dtype != DT_F32 && out->dtype != hin && !via_fp32) {
		char outs[32]; /* what cuBLASLt can write from these operands */
		snprintf(outs, sizeof outs, hin == DT_F32 ? "fp32" : "%s or fp32", dtype_name(hin));
		if (o->phase == PHASE_BACKWARD) /* a derived dgrad (its output in the forward input's dtype) */
			diag_error(b->d, o->loc, "backward: the derived %s of this gemm_cast writes '%s' in %s (the dtype of its forward "
				"input), but a GEMM of %s operands%s has only a%s %s output (cuBLASLt); make the input %s",
				o->p.pass == PASS_WGRAD ? "wgrad" : "dgrad", out->name, dtype_name(out->dtype),
				qa ? scaling_name(A->recipe.scaling) : dtype_name(hin), qa ? " (emulated as BF16)" : "",
				hin == DT_F32 ? "n" : "", outs, outs);
		if (qa)
			diag_error(b->d, or_loc(o->dtype_loc, o->loc), "gemm_cast of %s operands writes %s through an FP32 buffer "
				"(cuBLASLt has no %s output for them), which %s cannot read; use dtype bf16 or fp32",
				scaling_name(A->recipe.scaling), dtype_name(out->dtype), dtype_name(out->dtype),
				o->p.accumulate ? "accumulate" : "add");
		diag_error(b->d, or_loc(o->dtype_loc, o->loc), "gemm_cast has no %s output from %s operands (cuBLASLt computes %s x %s -> %s); use dtype %s",
			dtype_name(out->dtype), dtype_name(hin), dtype_name(hin), dtype_name(hin), outs, outs);
	}
	if (o->p.accumulate) {
		const SpecTensor *st = b->decl[op->arg[ARG_OUT]];
		if (!st)
			diag_error(b->d, o->accumulate_loc, "accumulate adds into '%s', so '%s' must be declared under tensors (the caller supplies its initial value)",
				out->name, out->name);
	}
	op->p.fast_accum = o->p.fast_accum < 0 ? o->p.pass == PASS_FPROP : o->p.fast_accum;
}

/* Where a dynamic dim may stand: a tensor's rows (the product of its leading extents) hold one at most (the
 * planner counts rows as mul * dim + add: tensor_rows), and a layer input's weight has none (its optimizer state
 * and cached casts are allocated once). Located at the declaration, or at the op that makes the tensor. */
static void check_dynamic_extents(B *b)
{
	const Graph *g = b->g;
	for (int i = 0; i < g->ntensors; i++) {
		const Tensor *t = &g->tensors[i];
		int dyn = 0;
		for (int k = 0; k + 1 < t->rank; k++)
			dyn += t->shape[k].dim >= 0;
		Loc at = b->decl[i] ? t->loc : t->producer >= 0 ? g->ops[t->producer].loc : t->loc;
		if (t->role == ROLE_WEIGHT && t->producer < 0)
			for (int k = 0; k < t->rank; k++)
				if (t->shape[k].dim >= 0)
					diag_error(b->d, at, "weight '%s' has shape %s, whose extent %s is dynamic; a weight's extents must be "
						"fixed", t->name, shape_str(b, t->shape, t->rank), extent_str(b->a, g, t->shape[k]));
		if (dyn < 2)
			continue;
		diag_error(b->d, at, "tensor '%s' has shape %s: two dynamic leading extents; the rows of a tensor may hold one "
			"dynamic dim (flatten them into one, e.g. tokens = batch * seq)", t->name, shape_str(b, t->shape, t->rank));
	}
}

/* ---- outputs, overrides, capabilities, state ---- */

static void build_outputs(B *b)
{
	const Spec *s = b->s;
	Graph *g = b->g;
	if (!s->noutputs) {
		/* default: produced tensors no op reads */
		for (int i = 0; i < g->ntensors; i++) {
			if (g->tensors[i].producer < 0)
				continue;
			bool read = false;
			for (int k = 0; k < g->nops && !read; k++)
				for (int a = 0; a < ARG_COUNT; a++)
					if (!arg_is_output((ArgSlot)a) && g->ops[k].arg[a] == i && g->ops[k].kind != OP_ADAMW)
						read = true; /* a weight gradient the optimizer reads stays an output */
			g->tensors[i].output = !read;
		}
		return;
	}
	for (int i = 0; i < s->noutputs; i++) {
		int id = tensor_find(b, s->outputs[i]);
		if (id < 0) {
			const char **cands = arena_alloc(b->a, sizeof *cands * (size_t)(g->ntensors + 1));
			for (int k = 0; k < g->ntensors; k++)
				cands[k] = g->tensors[k].name;
			const char *sug = spell_suggest(s->outputs[i], cands, g->ntensors);
			diag_error(b->d, s->output_locs[i], "unknown output '%s'%s", s->outputs[i],
				sug ? arena_printf(b->a, " (did you mean '%s'?)", sug) : "");
		}
		Tensor *t = &g->tensors[id];
		if (t->producer < 0)
			diag_error(b->d, s->output_locs[i], "output '%s' is a layer input; outputs must be produced by an op", t->name);
		if (t->output)
			diag_error(b->d, s->output_locs[i], "output '%s' is listed twice", t->name);
		t->output = true;
	}
}

static void check_overrides(B *b)
{
	const Spec *s = b->s;
	for (int i = 0; i < s->noverrides; i++) {
		const SpecOverride *o = &s->overrides[i];
		int id = tensor_find(b, o->tensor);
		if (id < 0) {
			const char **cands = arena_alloc(b->a, sizeof *cands * (size_t)(b->g->ntensors + 1));
			for (int k = 0; k < b->g->ntensors; k++)
				cands[k] = b->g->tensors[k].name;
			const char *sug = spell_suggest(o->tensor, cands, b->g->ntensors);
			diag_error(b->d, o->loc, "override for unknown tensor '%s'%s", o->tensor,
				sug ? arena_printf(b->a, " (did you mean '%s'?)", sug) : "");
		}
		if (!b->recipe_used[id])
			diag_error(b->d, o->loc, "override for '%s' has no effect: no op quantizes it (it is a layer input, a gemm output of a high-precision dtype, or made with precision)",
				o->tensor);
	}
}

static void check_targets(B *b)
{
	Graph *g = b->g;
	const Spec *s = b->s;
	for (int ti = 0; ti < g->ntargets; ti++) {
		Arch ar = g->targets[ti];
		const char *an = arch_str(b->a, ar);
		Loc tl = s->ntargets ? s->target_locs[ti] : s->layer_loc;
		if (ar.sm < 89) {
			for (int i = 0; i < g->ntensors; i++) {
				const Tensor *t = &g->tensors[i];
				if (is_low_precision(t))
					diag_error(b->d, tl, "target %s has no FP8/FP4 support, but '%s' is quantized (%s, %s); on %s keep the layer in BF16 (scaling: none) or drop the target",
						an, t->name, scaling_name(t->recipe.scaling), dtype_name(t->dtype), an);
			}
		}
		for (int k = 0; k < g->nops; k++) {
			Op *op = &g->ops[k];
			if (op->kind != OP_GEMM_CAST)
				continue;
			const Tensor *A = &g->tensors[op->arg[ARG_A]];
			if (!is_low_precision(A))
				continue;
			Scaling sc = A->recipe.scaling;
			if ((sc == SCALING_BLOCK1X128 || sc == SCALING_BLOCK128X128) && ar.sm < 90)
				diag_error(b->d, tl, "target %s cannot run the FP8 block-scaled GEMM of op%d (%s, line %d); it needs sm_90 or newer",
					an, k, scaling_name(sc), op->loc.line);
		}
	}
	/* MXFP8/NVFP4 GEMMs are native from sm_100; below, dequantize + BF16 GEMM */
	for (int k = 0; k < g->nops; k++) {
		Op *op = &g->ops[k];
		if (op->kind != OP_GEMM_CAST)
			continue;
		Scaling sc = g->tensors[op->arg[ARG_A]].recipe.scaling;
		if (!is_low_precision(&g->tensors[op->arg[ARG_A]]) || (sc != SCALING_MXFP8 && sc != SCALING_NVFP4))
			continue;
		Buf list = {0};
		for (int ti = 0; ti < g->ntargets; ti++)
			if (g->targets[ti].sm < 100)
				buf_printf(&list, "%s%s", list.len ? ", " : "", arch_str(b->a, g->targets[ti]));
		if (list.len)
			op->emulated = arena_printf(b->a, "%s GEMM runs emulated on %s (dequantize to BF16, BF16 GEMM)",
				sc == SCALING_MXFP8 ? "MXFP8" : "NVFP4", list.p);
		buf_free(&list);
	}
}

static void assign_slots(B *b)
{
	Graph *g = b->g;
	int n = 0;
	/* delayed first, then the tensors whose amax each run clears (current, nvfp4) */
	static const Scaling order[] = {SCALING_DELAYED, SCALING_CURRENT, SCALING_NVFP4};
	for (int pass = 0; pass < 3; pass++) {
		Scaling want = order[pass];
		for (int k = 0; k < g->nops; k++)
			for (int a = 0; a < ARG_COUNT; a++) {
				if (!arg_is_output((ArgSlot)a) || g->ops[k].arg[a] < 0)
					continue;
				Tensor *t = &g->tensors[g->ops[k].arg[a]];
				if (is_low_precision(t) && t->recipe.scaling == want) {
					t->state_slot = n++;
					if (tensor_rht_t(t))
						t->state_slot_t = n++; /* the transformed copy's S_enc and amax */
					if (want == SCALING_DELAYED && t->recipe.history > g->history)
						g->history = t->recipe.history;
				}
			}
	}
	g->nstate = n;
}

bool tensor_comp_in_state(const Tensor *t, Component c)
{
	if (t->state_slot < 0)
		return false;
	if (t->recipe.scaling == SCALING_NVFP4) /* its scale_inv components are the E4M3 block scales */
		return c == COMP_SCALE || c == COMP_AMAX || (t->state_slot_t >= 0 && (c == COMP_SCALE_T || c == COMP_AMAX_T));
	return c == COMP_SCALE || c == COMP_SCALE_INV || c == COMP_AMAX;
}

bool tensor_rht_t(const Tensor *t)
{
	return is_low_precision(t) && t->recipe.scaling == SCALING_NVFP4 && t->recipe.nvfp4_rht && t->columnwise;
}

Component tensor_s_enc_comp(const Tensor *t, Component copy)
{
	bool col = copy == COMP_DATA_T || copy == COMP_DEQ_T;
	return col && tensor_rht_t(t) ? COMP_SCALE_T : COMP_SCALE;
}

uint64_t tensor_sr_seed(const Graph *g, const Tensor *t)
{
	return fnv1a64(fnv1a64(fnv1a64(FNV1A64_OFFSET, g->layer), "/"), t->name); /* FNV-1a 64 of "layer/tensor" */
}

Graph *ir_build(Arena *a, Diag *d, const Spec *s, Arch default_arch)
{
	B *b = arena_alloc(a, sizeof *b);
	b->a = a;
	b->d = d;
	b->s = s;
	d->file = s->file;
	d->src = s->src;
	if (setjmp(d->jmp))
		return NULL;
	Graph *g = b->g = arena_alloc(a, sizeof *g);
	g->file = s->file;
	g->layer = s->layer;
	g->dims = s->dims;
	g->ndims = s->ndims;
	g->optim = s->optim;
	build_targets(b, default_arch);

	/* declared tensors first, in spec order */
	for (int i = 0; i < s->ntensors; i++) {
		const SpecTensor *st = &s->tensors[i];
		int id = tensor_add(b, st->name, st->loc);
		b->decl[id] = st;
		Tensor *t = &g->tensors[id];
		t->rank = st->rank;
		for (int k = 0; k < st->rank; k++)
			t->shape[k] = eval_extent(b, st->shape_src[k], st->shape_loc[k], st->name);
		t->dtype = t->hp_dtype = st->dtype;
		t->role = st->role;
	}

	int *order = order_ops(b);
	g->nops = s->nops;
	g->ops = arena_alloc(a, sizeof *g->ops * (size_t)s->nops);
	b->sop = arena_alloc(a, sizeof *b->sop * (size_t)s->nops);
	for (int k = 0; k < s->nops; k++) {
		const SpecOp *o = &s->ops[order[k]];
		Op *op = &g->ops[k];
		op->kind = o->kind;
		op->phase = o->phase;
		op->loc = o->loc;
		op->id = k;
		op->p = o->p;
		b->sop[k] = o;
		for (int x = 0; x < ARG_COUNT; x++) {
			op->arg[x] = -1;
			if (!o->arg[x])
				continue;
			int id = tensor_find(b, o->arg[x]);
			if (arg_is_output((ArgSlot)x)) {
				if (id < 0)
					id = tensor_add(b, o->arg[x], o->arg_loc[x]);
				g->tensors[id].producer = k;
			}
			op->arg[x] = id;
		}
	}
	/* layer inputs must be high precision */
	for (int i = 0; i < g->ntensors; i++) {
		const Tensor *t = &g->tensors[i];
		if (t->producer < 0 && !is_hp(t->dtype))
			diag_error(d, or_loc(b->decl[i]->dtype_loc, t->loc), "layer input '%s' is %s; inputs must be bf16, fp16 or fp32 (a quantize op makes quantized copies)",
				t->name, dtype_name(t->dtype));
	}
	for (int k = 0; k < g->nops; k++) {
		Op *op = &g->ops[k];
		const SpecOp *o = b->sop[k];
		switch (op->kind) {
		case OP_NORM_QUANTIZE: infer_norm(b, o, op); break;
		case OP_GLU_AMAX: infer_glu(b, o, op); break;
		case OP_GEMM_CAST: infer_gemm(b, o, op); break;
		case OP_DGLU: infer_dglu(b, o, op); break;
		case OP_DNORM: infer_dnorm(b, o, op); break;
		case OP_DBIAS: infer_dbias(b, o, op); break;
		case OP_ADAMW: infer_adamw(b, o, op); break;
		default: infer_cast(b, o, op); break;
		}
		for (int x = 0; x < ARG_COUNT; x++)
			if (arg_is_output((ArgSlot)x) && op->arg[x] >= 0)
				check_declared(b, op->arg[x], o);
	}
	check_dynamic_extents(b);
	for (int k = 0; k < g->nops; k++) /* after every op's own checks: those name the spec's defect first */
		if (g->ops[k].kind == OP_DGLU || g->ops[k].kind == OP_DNORM || g->ops[k].kind == OP_DBIAS)
			check_backward_shape(b, b->sop[k], &g->ops[k]);
		else if (g->ops[k].kind != OP_GEMM_CAST && g->ops[k].kind != OP_ADAMW)
			check_kernel_shape(b, b->sop[k], &g->ops[k]);
	build_outputs(b);
	check_overrides(b);
	check_targets(b);
	assign_slots(b);
	return g;
}

bool op_casts_trained_weight(const Graph *g, const Op *op)
{
	if (op->kind != OP_QUANTIZE && op->kind != OP_CAST_TRANSPOSE)
		return false;
	for (int k = 0; k < g->nops; k++)
		if (g->ops[k].kind == OP_ADAMW && g->ops[k].arg[ARG_IN] == op->arg[ARG_IN])
			return true;
	return false;
}

/* ---- printing ---- */

static const char *fmt_name(Fp8Format f)
{
	return f == FMT_E4M3 ? "e4m3" : f == FMT_E5M2 ? "e5m2" : "hybrid";
}

static void print_recipe(Buf *out, const Recipe *r)
{
	buf_printf(out, " %s(", scaling_name(r->scaling));
	switch (r->scaling) {
	case SCALING_DELAYED:
		buf_printf(out, "%s,history=%d,%s,margin=%d", fmt_name(r->format), r->history,
			r->amax_algo == AMAX_MAX ? "max" : "most_recent", r->margin);
		break;
	case SCALING_CURRENT:
	case SCALING_BLOCK1X128:
	case SCALING_BLOCK128X128:
		buf_printf(out, "%s,eps=%g%s", fmt_name(r->format), (double)r->eps, r->pow2 ? ",pow2" : "");
		break;
	case SCALING_MXFP8: buf_puts(out, fmt_name(r->format)); break;
	case SCALING_NVFP4:
		buf_printf(out, "e2m1%s%s%s", r->nvfp4_2d ? ",2d" : "", r->nvfp4_sr ? ",sr" : "", r->nvfp4_rht ? ",rht" : "");
		break;
	default: break;
	}
	buf_puts(out, ")");
}

void ir_print(const Graph *g, Buf *out)
{
	Arena *a = arena_new();
	buf_printf(out, "layer %s\ntargets", g->layer);
	for (int i = 0; i < g->ntargets; i++)
		buf_printf(out, " %s", arch_str(a, g->targets[i]));
	buf_puts(out, "\ndims");
	for (int i = 0; i < g->ndims; i++) {
		if (g->dims[i].value < 0)
			buf_printf(out, " %s=dynamic", g->dims[i].name);
		else
			buf_printf(out, " %s=%ld", g->dims[i].name, g->dims[i].value);
	}
	buf_printf(out, "\nstate slots=%d history=%d\n", g->nstate, g->history);
	for (int i = 0; i < g->ntensors; i++) {
		const Tensor *t = &g->tensors[i];
		buf_printf(out, "t%d %s [", i, t->name);
		for (int k = 0; k < t->rank; k++)
			buf_printf(out, "%s%s", k ? "," : "", extent_str(a, g, t->shape[k]));
		buf_printf(out, "] %s", dtype_name(t->dtype));
		if (!is_hp(t->dtype))
			buf_printf(out, "<-%s", dtype_name(t->hp_dtype));
		buf_printf(out, " %s", role_name(t->role));
		if (!is_hp(t->dtype)) {
			print_recipe(out, &t->recipe);
			buf_printf(out, " %s", t->rowwise && t->columnwise ? "rowwise+columnwise" : t->columnwise ? "columnwise" : "rowwise");
		}
		if (t->state_slot >= 0)
			buf_printf(out, " slot=%d", t->state_slot);
		if (t->state_slot_t >= 0)
			buf_printf(out, " slot_t=%d", t->state_slot_t);
		if (t->producer < 0)
			buf_puts(out, " input");
		else
			buf_printf(out, " op%d", t->producer);
		if (t->output)
			buf_puts(out, " output");
		buf_puts(out, "\n");
	}
	for (int k = 0; k < g->nops; k++) {
		const Op *op = &g->ops[k];
		const OpParams *p = &op->p;
		buf_printf(out, "op%d %s", k, op_name(op->kind));
		switch (op->kind) {
		case OP_NORM_QUANTIZE:
			buf_printf(out, " %s eps=%g%s", p->norm == NORM_RMS ? "rmsnorm" : "layernorm", (double)p->eps,
				p->zero_centered_gamma ? " zero_centered_gamma" : "");
			break;
		case OP_DNORM:
			buf_printf(out, " %s%s", p->norm == NORM_RMS ? "rmsnorm" : "layernorm",
				p->zero_centered_gamma ? " zero_centered_gamma" : "");
			break;
		case OP_GLU_AMAX:
		case OP_DGLU:
			buf_printf(out, " %s", glu_name(p->act));
			if (p->act == GLU_CLAMPED_SWIGLU)
				buf_printf(out, " alpha=%g limit=%g", (double)p->alpha, (double)p->limit);
			break;
		case OP_GEMM_CAST:
			buf_printf(out, " %s %s%s%s%s", pass_name(p->pass), p->out_dtype == DT_NONE ? "fp8" : dtype_name(p->out_dtype),
				p->fast_accum > 0 ? " fast_accum" : "", p->accumulate ? " accumulate" : "", p->gelu ? " gelu" : "");
			break;
		default: break;
		}
		if (op->kind != OP_GEMM_CAST && p->high_precision)
			buf_printf(out, " precision=%s", dtype_name(p->out_dtype));
		if (op->kind != OP_GEMM_CAST && p->accumulate) /* main_grad: d_gamma/d_beta, dbias added into */
			buf_puts(out, " accumulate");
		for (int x = 0; x < ARG_COUNT; x++)
			if (!arg_is_output((ArgSlot)x) && op->arg[x] >= 0)
				buf_printf(out, " %s=%s", arg_name((ArgSlot)x), g->tensors[op->arg[x]].name);
		buf_puts(out, " ->");
		for (int x = 0; x < ARG_COUNT; x++)
			if (arg_is_output((ArgSlot)x) && op->arg[x] >= 0)
				buf_printf(out, " %s=%s", arg_name((ArgSlot)x), g->tensors[op->arg[x]].name);
		if (op->emulated)
			buf_printf(out, " ! %s", op->emulated);
		if (op->kind == OP_ADAMW)
			buf_printf(out, " %s (in place: %s.master, .m, .v)", g->tensors[op->arg[ARG_IN]].name,
				g->tensors[op->arg[ARG_IN]].name);
		const Tensor *o = op->arg[ARG_OUT] >= 0 ? &g->tensors[op->arg[ARG_OUT]] : NULL;
		if (o && op_writes_hp(g, op))
			buf_printf(out, " ! unfused: %s output '%s' (the op writes FP32, %s)",
				o->recipe.scaling == SCALING_NVFP4 ? "NVFP4" : "block1x128 with a columnwise copy", o->name,
				o->recipe.scaling == SCALING_NVFP4 ? "separate amax and cast kernels" : "a cast kernel writes both copies");
		buf_puts(out, "\n");
	}
	arena_free(a);
}
