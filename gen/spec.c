/* spec.c: YAML text -> Spec.
 *
 * libyaml loads the text into a node tree; this file walks it against the
 * spec schema (docs/SPEC.md) and fills a typed Spec. Every value keeps the
 * file:line:col of its node so later stages can point at it.
 *
 * Guarantees: on success every key was known and written once, every scalar
 * had the right form (identifier, integer, float, bool, enum spelling), every
 * recipe key applies to its scaling (overrides included), op operands and
 * params are the ones the op allows, and op params have their defaults.
 * Names are not resolved and shape expressions are kept as text: ir.c does
 * both. On error: NULL, the message in d->msg, the libyaml state released. */
#include "gen.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

/* Bounds every map and list, so that no spec makes the quadratic checks slow. */
#define TG_MAX_ENTRIES 4096

typedef struct P {
	Arena *a;
	Diag *d;
	Spec *s;
	yaml_parser_t parser;
	yaml_document_t doc;
	bool parser_live, doc_live;
} P;

/* ---- small helpers ---- */

static Loc loc_mark(P *p, yaml_mark_t m)
{
	return (Loc){p->s->file, (int)m.line + 1, (int)m.column + 1};
}

static Loc loc_of(P *p, yaml_node_t *n)
{
	return loc_mark(p, n->start_mark);
}

/* The byte a libyaml mark points at (its index counts characters, not bytes; so do
 * its columns): found from its line and column, line breaks as libyaml reads them. */
static const char *mark_ptr(P *p, yaml_mark_t m)
{
	const unsigned char *u = (const unsigned char *)p->s->src;
	for (size_t line = 0; line < m.line && *u; u++) {
		if (*u == '\n' || (*u == '\r' && u[1] != '\n'))
			line++;
		else if (u[0] == 0xC2 && u[1] == 0x85)
			line++, u++; /* NEL */
		else if (u[0] == 0xE2 && u[1] == 0x80 && (u[2] == 0xA8 || u[2] == 0xA9))
			line++, u += 2; /* LS, PS */
	}
	for (size_t col = 0; col < m.column && *u; col++)
		for (u++; (*u & 0xC0) == 0x80; u++)
			;
	return (const char *)u;
}

static const char *kind_name(yaml_node_t *n)
{
	switch (n->type) {
	case YAML_SCALAR_NODE: return "a scalar";
	case YAML_SEQUENCE_NODE: return "a list";
	case YAML_MAPPING_NODE: return "a map";
	default: return "nothing";
	}
}

static yaml_node_t *node(P *p, int i)
{
	return yaml_document_get_node(&p->doc, i);
}

static void expect(P *p, yaml_node_t *n, yaml_node_type_t t, const char *what)
{
	if (n->type == t)
		return;
	const char *want = t == YAML_MAPPING_NODE ? "a map" : t == YAML_SEQUENCE_NODE ? "a list" : "a scalar";
	diag_error(p->d, loc_of(p, n), "expected %s for %s, found %s", want, what, kind_name(n));
}

/* The text of a scalar node (NUL-free), copied into the arena. */
static const char *scalar(P *p, yaml_node_t *n, const char *what)
{
	expect(p, n, YAML_SCALAR_NODE, what);
	const char *v = (const char *)n->data.scalar.value;
	size_t len = n->data.scalar.length;
	if (memchr(v, 0, len))
		diag_error(p->d, loc_of(p, n), "%s contains a NUL character", what);
	return arena_strndup(p->a, v, len);
}

static int edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 40 || lb > 40)
		return 99;
	int row[41];
	for (size_t j = 0; j <= lb; j++)
		row[j] = (int)j;
	for (size_t i = 1; i <= la; i++) {
		int prev = row[0];
		row[0] = (int)i;
		for (size_t j = 1; j <= lb; j++) {
			int cur = row[j];
			int best = prev + (a[i - 1] != b[j - 1]);
			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			prev = cur;
		}
	}
	return row[lb];
}

const char *spell_suggest(const char *word, const char *const *cands, int n)
{
	const char *best = NULL;
	int bestd = 3;
	for (int i = 0; i < n; i++) {
		if (!cands[i])
			continue;
		int dist = edit_distance(word, cands[i]);
		int limit = strlen(cands[i]) <= 3 ? 1 : 2;
		if (dist <= limit && dist < bestd) {
			bestd = dist;
			best = cands[i];
		}
	}
	return best;
}

/* " (did you mean 'x'?)" or "" */
static const char *hint(P *p, const char *word, const char *const *cands, int n)
{
	const char *s = spell_suggest(word, cands, n);
	return s ? arena_printf(p->a, " (did you mean '%s'?)", s) : "";
}

static const char *join(P *p, const char *const *cands, int n)
{
	Buf b = {0};
	for (int i = 0; i < n; i++)
		if (cands[i])
			buf_printf(&b, "%s%s", b.len ? ", " : "", cands[i]);
	const char *s = arena_strdup(p->a, b.p ? b.p : "");
	buf_free(&b);
	return s;
}

static bool is_ident(const char *s)
{
	if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_'))
		return false;
	size_t n = 0;
	for (; *s; s++, n++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return n <= 64;
}

static const char *ident(P *p, yaml_node_t *n, const char *what)
{
	const char *v = scalar(p, n, what);
	if (!is_ident(v))
		diag_error(p->d, loc_of(p, n), "bad %s '%s': expected an identifier (letters, digits, _; not starting with a digit; at most 64 characters)", what, v);
	return v;
}

/* The text of a scalar that must be a plain number or bool (kind: "number", "bool"):
 * a quoted one is a string in YAML and a tagged one (!!float 4096) says its own
 * type, so both are errors rather than a guess. */
static const char *plain_scalar(P *p, yaml_node_t *n, const char *what, const char *kind)
{
	const char *v = scalar(p, n, what);
	yaml_scalar_style_t st = n->data.scalar.style;
	if (st == YAML_SINGLE_QUOTED_SCALAR_STYLE || st == YAML_DOUBLE_QUOTED_SCALAR_STYLE)
		diag_error(p->d, loc_of(p, n), "%s is a quoted string here; write the %s without quotes", what, kind);
	if (st == YAML_LITERAL_SCALAR_STYLE || st == YAML_FOLDED_SCALAR_STYLE)
		diag_error(p->d, loc_of(p, n), "%s is a block scalar (| or >) here; write the %s on the key's line", what, kind);
	/* a tag is written before the value (after an anchor, if any): !!float, !<...>, !local */
	const char *src = mark_ptr(p, n->start_mark), *end = mark_ptr(p, n->end_mark);
	if (*src == '&')
		while (src < end && *src != ' ' && *src != '\t' && *src != '\n' && *src != '\r')
			src++;
	while (src < end && (*src == ' ' || *src == '\t' || *src == '\n' || *src == '\r'))
		src++;
	if (src < end && *src == '!') {
		size_t k = 0;
		while (src + k < end && src[k] != ' ' && src[k] != '\t' && src[k] != '\n' && src[k] != '\r' && k < 40)
			k++;
		diag_error(p->d, loc_of(p, n), "%s has the YAML tag '%s'; write the %s without a tag", what,
			arena_strndup(p->a, src, k), kind);
	}
	return v;
}

static long integer(P *p, yaml_node_t *n, const char *what, long lo, long hi)
{
	const char *v = plain_scalar(p, n, what, "number");
	const char *q = v;
	if (*q == '-' || *q == '+')
		q++;
	bool ok = *q != 0;
	for (; *q; q++)
		if (*q < '0' || *q > '9')
			ok = false;
	if (!ok)
		diag_error(p->d, loc_of(p, n), "bad integer '%s' for %s", v, what);
	errno = 0;
	long x = strtol(v, NULL, 10);
	if (errno || x < lo || x > hi)
		diag_error(p->d, loc_of(p, n), "%s must be between %ld and %ld, found %s", what, lo, hi, v);
	return x;
}

static float number(P *p, yaml_node_t *n, const char *what, double lo)
{
	const char *v = plain_scalar(p, n, what, "number");
	char *end;
	errno = 0;
	double x = strtod(v, &end);
	bool bad = !*v || *end || end == v || v[0] == ' ';
	for (const char *q = v; *q; q++)
		if (!strchr("0123456789+-.eE", *q))
			bad = true;
	if (bad)
		diag_error(p->d, loc_of(p, n), "bad number '%s' for %s", v, what);
	if (!isfinite(x) || fabs(x) > 3.0e38 || x < lo)
		diag_error(p->d, loc_of(p, n), "%s must be a finite number >= %g, found %s", what, lo, v);
	return (float)x;
}

static bool boolean(P *p, yaml_node_t *n, const char *what)
{
	const char *v = plain_scalar(p, n, what, "bool");
	if (!strcmp(v, "true"))
		return true;
	if (!strcmp(v, "false"))
		return false;
	diag_error(p->d, loc_of(p, n), "bad bool '%s' for %s: expected true or false", v, what);
}

/* One of the spellings in names[0..n) (NULL entries skipped); returns its index. */
static int choice(P *p, yaml_node_t *n, const char *what, const char *const *names, int count)
{
	const char *v = scalar(p, n, what);
	for (int i = 0; i < count; i++)
		if (names[i] && !strcmp(v, names[i]))
			return i;
	diag_error(p->d, loc_of(p, n), "unknown %s '%s'%s; expected one of: %s", what, v, hint(p, v, names, count),
		join(p, names, count));
}

/* Map iteration with duplicate-key detection. keys must be scalars. */
typedef struct Pair { yaml_node_t *k, *v; const char *key; } Pair;

static Pair *pairs(P *p, yaml_node_t *m, const char *what, int *count)
{
	expect(p, m, YAML_MAPPING_NODE, what);
	yaml_node_pair_t *b = m->data.mapping.pairs.start, *e = m->data.mapping.pairs.top;
	int n = (int)(e - b);
	if (n > TG_MAX_ENTRIES)
		diag_error(p->d, loc_of(p, m), "%s has %d entries; at most %d are allowed", what, n, TG_MAX_ENTRIES);
	Pair *out = arena_alloc(p->a, sizeof *out * (size_t)(n + 1));
	for (int i = 0; i < n; i++) {
		out[i].k = node(p, b[i].key);
		out[i].v = node(p, b[i].value);
		out[i].key = scalar(p, out[i].k, arena_printf(p->a, "a key in %s", what));
		for (int j = 0; j < i; j++)
			if (!strcmp(out[j].key, out[i].key))
				diag_error(p->d, loc_of(p, out[i].k), "duplicate key '%s' in %s (first at line %d)", out[i].key, what,
					(int)out[j].k->start_mark.line + 1);
	}
	*count = n;
	return out;
}

static void unknown_key(P *p, Pair *pr, const char *what, const char *const *known, int n)
{
	diag_error(p->d, loc_of(p, pr->k), "unknown key '%s' in %s%s; expected one of: %s", pr->key, what,
		hint(p, pr->key, known, n), join(p, known, n));
}

static int key_index(const char *key, const char *const *known, int n)
{
	for (int i = 0; i < n; i++)
		if (known[i] && !strcmp(key, known[i]))
			return i;
	return -1;
}

static yaml_node_t **items(P *p, yaml_node_t *s, const char *what, int *count)
{
	expect(p, s, YAML_SEQUENCE_NODE, what);
	yaml_node_item_t *b = s->data.sequence.items.start, *e = s->data.sequence.items.top;
	int n = (int)(e - b);
	if (n > TG_MAX_ENTRIES)
		diag_error(p->d, loc_of(p, s), "%s has %d entries; at most %d are allowed", what, n, TG_MAX_ENTRIES);
	yaml_node_t **out = arena_alloc(p->a, sizeof *out * (size_t)(n + 1));
	for (int i = 0; i < n; i++)
		out[i] = node(p, b[i]);
	*count = n;
	return out;
}

/* ---- recipes ---- */

static const char *const recipe_keys[RECIPE_NKEYS] = {
	"scaling", "format", "history", "amax_algo", "margin", "eps", "pow2", "nvfp4_2d", "nvfp4_sr", "nvfp4_rht",
};
static const char *const scaling_names[] = {
#define X(e, s, code, brows, bcols, scale, amax, state) s,
	TG_SCALINGS(X)
#undef X
};
static const char *const format_names[] = {"e4m3", "e5m2", "hybrid"};
static const char *const algo_names[] = {"max", "most_recent"};

/* Which scalings each recipe key applies to (bit per Scaling). */
#define SB(s) (1u << (s))
static const unsigned key_scalings[RECIPE_NKEYS] = {
	~0u,
	SB(SCALING_DELAYED) | SB(SCALING_CURRENT) | SB(SCALING_BLOCK1X128) | SB(SCALING_BLOCK128X128) | SB(SCALING_MXFP8),
	SB(SCALING_DELAYED), SB(SCALING_DELAYED), SB(SCALING_DELAYED),
	SB(SCALING_CURRENT) | SB(SCALING_BLOCK1X128) | SB(SCALING_BLOCK128X128),
	SB(SCALING_CURRENT) | SB(SCALING_BLOCK1X128) | SB(SCALING_BLOCK128X128),
	SB(SCALING_NVFP4), SB(SCALING_NVFP4), SB(SCALING_NVFP4),
};

static const char *scalings_of(P *p, unsigned mask)
{
	const char *names[SCALING_COUNT];
	for (int i = 0; i < SCALING_COUNT; i++)
		names[i] = (mask & SB(i)) ? scaling_names[i] : NULL;
	return join(p, names, SCALING_COUNT);
}

static Recipe recipe_default(Scaling sc)
{
	Recipe r = {0};
	r.scaling = sc;
	r.format = FMT_HYBRID;
	r.history = 1024;
	r.amax_algo = AMAX_MAX;
	r.pow2 = sc == SCALING_BLOCK1X128 || sc == SCALING_BLOCK128X128;
	return r;
}

/* Copy the fields whose bits are in set from src to dst. */
static void recipe_apply(Recipe *dst, const Recipe *src, unsigned set)
{
	if (set & RECIPE_SET_FORMAT) dst->format = src->format;
	if (set & RECIPE_SET_HISTORY) dst->history = src->history;
	if (set & RECIPE_SET_ALGO) dst->amax_algo = src->amax_algo;
	if (set & RECIPE_SET_MARGIN) dst->margin = src->margin;
	if (set & RECIPE_SET_EPS) dst->eps = src->eps;
	if (set & RECIPE_SET_POW2) dst->pow2 = src->pow2;
	if (set & RECIPE_SET_NVFP4_2D) dst->nvfp4_2d = src->nvfp4_2d;
	if (set & RECIPE_SET_NVFP4_SR) dst->nvfp4_sr = src->nvfp4_sr;
	if (set & RECIPE_SET_NVFP4_RHT) dst->nvfp4_rht = src->nvfp4_rht;
}

static unsigned valid_keys(Scaling sc)
{
	unsigned m = 0;
	for (int i = 0; i < RECIPE_NKEYS; i++)
		if (key_scalings[i] & SB(sc))
			m |= 1u << i;
	return m;
}

Recipe recipe_resolve(const Spec *s, const SpecOverride *o)
{
	Scaling sc = o && (o->set & RECIPE_SET_SCALING) ? o->recipe.scaling : s->recipe.scaling;
	Recipe r = recipe_default(sc);
	/* layer keys carry over where they apply to the final scaling */
	recipe_apply(&r, &s->recipe, s->recipe_set & valid_keys(sc));
	r.loc = s->recipe.loc;
	if (o) {
		recipe_apply(&r, &o->recipe, o->set);
		r.loc = o->loc;
	}
	return r;
}

/* Reads a recipe map into r, recording set bits and key locations. */
static void parse_recipe(P *p, yaml_node_t *m, const char *what, Recipe *r, unsigned *set, Loc *keys)
{
	int n;
	Pair *pr = pairs(p, m, what, &n);
	r->loc = loc_of(p, m);
	for (int i = 0; i < n; i++) {
		int k = key_index(pr[i].key, recipe_keys, RECIPE_NKEYS);
		if (k < 0)
			unknown_key(p, &pr[i], what, recipe_keys, RECIPE_NKEYS);
		yaml_node_t *v = pr[i].v;
		switch (k) {
		case 0: r->scaling = (Scaling)choice(p, v, "scaling", scaling_names, SCALING_COUNT); break;
		case 1: r->format = (Fp8Format)choice(p, v, "format", format_names, 3); break;
		case 2: r->history = (int)integer(p, v, "history", 1, 65536); break;
		case 3: r->amax_algo = (AmaxAlgo)choice(p, v, "amax_algo", algo_names, 2); break;
		case 4: r->margin = (int)integer(p, v, "margin", 0, 64); break;
		case 5: r->eps = number(p, v, "eps", 0); break;
		case 6: r->pow2 = boolean(p, v, "pow2"); break;
		case 7: r->nvfp4_2d = boolean(p, v, "nvfp4_2d"); break;
		case 8: r->nvfp4_sr = boolean(p, v, "nvfp4_sr"); break;
		case 9: r->nvfp4_rht = boolean(p, v, "nvfp4_rht"); break;
		}
		*set |= 1u << k;
		keys[k] = loc_of(p, pr[i].k);
	}
}

/* Every key written must apply to the scaling it ends up with. */
static void check_recipe_keys(P *p, unsigned set, const Loc *keys, Scaling sc, const char *whose)
{
	for (int k = 1; k < RECIPE_NKEYS; k++)
		if ((set & (1u << k)) && !(key_scalings[k] & SB(sc)))
			diag_error(p->d, keys[k], "'%s' does not apply to scaling %s%s; it applies to: %s", recipe_keys[k],
				scaling_names[sc], whose, scalings_of(p, key_scalings[k]));
}

/* ---- tensors ---- */

static const char *const dtype_names[] = {
#define X(e, s, bits, code) s,
	TG_DTYPES(X)
#undef X
};
static const char *const role_names[] = {"activation", "weight", "gradient"};

static void parse_tensor(P *p, SpecTensor *t, Pair *pr)
{
	static const char *const keys[] = {"shape", "dtype", "role", "main_grad", "grad_dtype"};
	t->name = ident(p, pr->k, "tensor name");
	t->loc = loc_of(p, pr->k);
	t->dtype = DT_BF16;
	t->role = ROLE_ACTIVATION;
	const char *what = arena_printf(p->a, "tensor '%s'", t->name);
	int n;
	Pair *f = pairs(p, pr->v, what, &n);
	bool have_shape = false;
	for (int i = 0; i < n; i++) {
		switch (key_index(f[i].key, keys, 5)) {
		case 0: {
			int m;
			yaml_node_t **e = items(p, f[i].v, arena_printf(p->a, "the shape of '%s'", t->name), &m);
			if (m < 1 || m > TG_MAX_RANK)
				diag_error(p->d, loc_of(p, f[i].v), "shape of '%s' has %d extents; expected 1 to %d", t->name, m, TG_MAX_RANK);
			t->rank = m;
			for (int j = 0; j < m; j++) {
				t->shape_src[j] = scalar(p, e[j], arena_printf(p->a, "an extent of '%s'", t->name));
				t->shape_loc[j] = loc_of(p, e[j]);
				if (e[j]->data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
					e[j]->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE)
					t->shape_loc[j].col++;
			}
			have_shape = true;
			break;
		}
		case 1: {
			const char *names[DT_COUNT];
			memcpy(names, dtype_names, sizeof names);
			names[DT_NONE] = names[DT_E8M0] = NULL;
			t->dtype = (DType)choice(p, f[i].v, "tensor dtype", names, DT_COUNT);
			t->dtype_loc = loc_of(p, f[i].v);
			t->dtype_set = true;
			break;
		}
		case 2:
			t->role = (Role)choice(p, f[i].v, "role", role_names, 3);
			t->role_loc = loc_of(p, f[i].v);
			t->role_set = true;
			break;
		case 3:
			t->main_grad = boolean(p, f[i].v, "main_grad");
			t->main_grad_loc = loc_of(p, f[i].k);
			break;
		case 4: { /* a weight gradient in high precision: bf16, fp16 or fp32 */
			const char *names[DT_COUNT] = {0};
			names[DT_BF16] = dtype_names[DT_BF16], names[DT_F16] = dtype_names[DT_F16], names[DT_F32] = dtype_names[DT_F32];
			t->grad_dtype = (DType)choice(p, f[i].v, "grad_dtype", names, DT_COUNT);
			t->grad_dtype_loc = loc_of(p, f[i].v);
			break;
		}
		default: unknown_key(p, &f[i], what, keys, 5);
		}
	}
	if (!have_shape)
		diag_error(p->d, loc_of(p, pr->v), "tensor '%s' needs a shape", t->name);
}

/* ---- ops ---- */

enum { PR_NORM, PR_EPS, PR_ZCG, PR_ACT, PR_ALPHA, PR_LIMIT, PR_PASS, PR_DTYPE, PR_ACCUMULATE, PR_FAST_ACCUM,
	PR_EPILOGUE, PR_LAYOUT, PR_PRECISION, PR_COUNT };
static const char *const param_names[PR_COUNT] = {
	"norm", "eps", "zero_centered_gamma", "act", "alpha", "limit", "pass", "dtype", "accumulate", "fast_accum",
	"epilogue", "layout", "precision",
};
#define PB(x) (1u << (x))
static const unsigned op_params[OP_COUNT] = {
	[OP_NORM_QUANTIZE] = PB(PR_NORM) | PB(PR_EPS) | PB(PR_ZCG) | PB(PR_LAYOUT) | PB(PR_PRECISION),
	[OP_GLU_AMAX] = PB(PR_ACT) | PB(PR_ALPHA) | PB(PR_LIMIT) | PB(PR_LAYOUT) | PB(PR_PRECISION),
	[OP_GEMM_CAST] = PB(PR_PASS) | PB(PR_DTYPE) | PB(PR_ACCUMULATE) | PB(PR_FAST_ACCUM) | PB(PR_EPILOGUE),
	[OP_CAST_TRANSPOSE] = PB(PR_LAYOUT) | PB(PR_PRECISION),
	[OP_QUANTIZE] = PB(PR_LAYOUT) | PB(PR_PRECISION),
	[OP_DGLU] = PB(PR_ACT) | PB(PR_ALPHA) | PB(PR_LIMIT) | PB(PR_LAYOUT) | PB(PR_PRECISION),
	[OP_DNORM] = PB(PR_NORM) | PB(PR_ZCG) | PB(PR_PRECISION),
	[OP_DBIAS] = 0,
	[OP_ADAMW] = 0,
};
static const char *const op_names[OP_COUNT] = {
#define X(e, s, t, fam, tol, nvsrc, req, opt) s,
	TG_OPS(X)
#undef X
};
static const char *const arg_names[ARG_COUNT] = {
#define X(e, s, isout) s,
	TG_ARGS(X)
#undef X
};

static void parse_layout(P *p, SpecOp *o, yaml_node_t *v)
{
	static const char *const names[] = {"rowwise", "columnwise"};
	int n;
	yaml_node_t **e = items(p, v, "layout", &n);
	if (n == 0)
		diag_error(p->d, loc_of(p, v), "layout is empty; expected rowwise, columnwise or both");
	o->p.rowwise = o->p.columnwise = false;
	for (int i = 0; i < n; i++) {
		int c = choice(p, e[i], "layout", names, 2);
		bool *f = c ? &o->p.columnwise : &o->p.rowwise;
		if (*f)
			diag_error(p->d, loc_of(p, e[i]), "layout lists %s twice", names[c]);
		*f = true;
	}
}

/* Where an op's params were given, for the checks that depend on other params. */
typedef struct { Loc alpha, limit; } ParamLocs;

/* The op item's one key, the op name: o's kind and locations; returns its fields node. */
static yaml_node_t *parse_op_name(P *p, SpecOp *o, yaml_node_t *item)
{
	if (item->type != YAML_MAPPING_NODE)
		diag_error(p->d, loc_of(p, item), "expected an op (a map with one key, the op name), found %s", kind_name(item));
	int n;
	Pair *top = pairs(p, item, "an op", &n);
	if (n != 1)
		diag_error(p->d, loc_of(p, item), "an op item must have exactly one key (the op name), found %d", n);
	int k = key_index(top[0].key, op_names, OP_COUNT);
	if (k < 0)
		diag_error(p->d, loc_of(p, top[0].k), "unknown op '%s'%s; expected one of: %s", top[0].key,
			hint(p, top[0].key, op_names, OP_COUNT), join(p, op_names, OP_COUNT));
	o->kind = (OpKind)k;
	o->loc = loc_of(p, top[0].k);
	o->param_loc = loc_of(p, top[0].v);
	return top[0].v;
}

/* Param q (allowed for o's kind) from field f into o->p. */
static void parse_op_param(P *p, SpecOp *o, int q, const Pair *f, ParamLocs *pl)
{
	yaml_node_t *v = f->v;
	Loc vl = loc_of(p, v);
	switch (q) {
	case PR_NORM: {
		static const char *const names[] = {"rmsnorm", "layernorm"};
		o->p.norm = (NormKind)choice(p, v, "norm", names, 2);
		break;
	}
	case PR_EPS: o->p.eps = number(p, v, "eps", 0); break;
	case PR_ZCG: o->p.zero_centered_gamma = boolean(p, v, "zero_centered_gamma"); break;
	case PR_ACT: {
		static const char *const names[] = {
#define X(e, s, code) s,
			TG_GLUS(X)
#undef X
		};
		o->p.act = (GluKind)choice(p, v, "act", names, GLU_COUNT);
		break;
	}
	case PR_ALPHA: o->p.alpha = number(p, v, "alpha", -3.0e38); pl->alpha = loc_of(p, f->k); break;
	case PR_LIMIT:
		o->p.limit = number(p, v, "limit", 0);
		if (o->p.limit <= 0)
			diag_error(p->d, vl, "limit must be > 0");
		pl->limit = loc_of(p, f->k);
		break;
	case PR_PASS: {
		static const char *const names[] = {"fprop", "dgrad", "wgrad"};
		o->p.pass = (GemmPass)choice(p, v, "pass", names, 3);
		break;
	}
	case PR_DTYPE: {
		static const char *const names[] = {"bf16", "fp16", "fp32", "fp8"};
		static const DType dts[] = {DT_BF16, DT_F16, DT_F32, DT_NONE};
		o->p.out_dtype = dts[choice(p, v, "gemm output dtype", names, 4)];
		o->dtype_loc = vl;
		break;
	}
	case PR_ACCUMULATE: o->p.accumulate = boolean(p, v, "accumulate"); o->accumulate_loc = loc_of(p, f->k); break;
	case PR_FAST_ACCUM: o->p.fast_accum = boolean(p, v, "fast_accum"); break;
	case PR_EPILOGUE: {
		static const char *const names[] = {"none", "gelu"};
		o->p.gelu = choice(p, v, "epilogue", names, 2) == 1;
		o->epilogue_loc = vl;
		break;
	}
	case PR_LAYOUT: parse_layout(p, o, v); o->layout_loc = vl; break;
	case PR_PRECISION: {
		static const char *const names[] = {"bf16", "fp16", "fp32"};
		static const DType dts[] = {DT_BF16, DT_F16, DT_F32};
		o->p.out_dtype = dts[choice(p, v, "precision", names, 3)];
		o->p.high_precision = true;
		o->precision_loc = vl;
		break;
	}
	}
}

/* The op's fields: each an operand its row allows (a tensor name) or a param op_params allows. */
static void parse_op_fields(P *p, SpecOp *o, yaml_node_t *fields, ParamLocs *pl)
{
	int k = o->kind;
	const char *opn = op_names[k];
	unsigned allowed_args = op_required_args(o->kind) | op_optional_args(o->kind);
	const char *known[ARG_COUNT + PR_COUNT];
	for (int i = 0; i < ARG_COUNT; i++)
		known[i] = (allowed_args & ARGBIT(i)) ? arg_names[i] : NULL;
	for (int i = 0; i < PR_COUNT; i++)
		known[ARG_COUNT + i] = (op_params[k] & PB(i)) ? param_names[i] : NULL;
	int m;
	Pair *f = pairs(p, fields, opn, &m);
	for (int i = 0; i < m; i++) {
		const char *key = f[i].key;
		int a = key_index(key, arg_names, ARG_COUNT);
		for (int b = a + 1; a >= 0 && !(allowed_args & ARGBIT(a)) && b < ARG_COUNT; b++)
			if (!strcmp(arg_names[b], key) && (allowed_args & ARGBIT(b)))
				a = b; /* a spelling with two slots (rsigma, mu: read by dnorm, written by norm_quantize) */
		if (a >= 0) {
			if (!(allowed_args & ARGBIT(a)))
				diag_error(p->d, loc_of(p, f[i].k), "operand '%s' is not allowed for %s; its operands are: %s", key, opn,
					join(p, known, ARG_COUNT));
			o->arg[a] = ident(p, f[i].v, "tensor name");
			o->arg_loc[a] = loc_of(p, f[i].v);
			continue;
		}
		int q = key_index(key, param_names, PR_COUNT);
		if (q < 0)
			unknown_key(p, &f[i], opn, known, ARG_COUNT + PR_COUNT);
		if (!(op_params[k] & PB(q)) && !op_params[k])
			diag_error(p->d, loc_of(p, f[i].k), "param '%s' is not allowed for %s; it takes no params", key, opn);
		if (!(op_params[k] & PB(q)))
			diag_error(p->d, loc_of(p, f[i].k), "param '%s' is not allowed for %s; its params are: %s", key, opn,
				join(p, known + ARG_COUNT, PR_COUNT));
		parse_op_param(p, o, q, &f[i], pl);
	}
}

/* The rules between an op's operands and params: required operands, then what one
 * param allows of another (norm and beta/mu, act and alpha/limit, pass and epilogue/bias). */
static void check_op_fields(P *p, const SpecOp *o, const ParamLocs *pl)
{
	OpKind k = o->kind;
	const char *opn = op_names[k];
	unsigned req = op_required_args(o->kind);
	for (int a = 0; a < ARG_COUNT; a++)
		if ((req & ARGBIT(a)) && !o->arg[a])
			diag_error(p->d, o->loc, "%s needs operand '%s'", opn, arg_names[a]);
	if (k == OP_NORM_QUANTIZE) {
		if (o->p.norm == NORM_RMS && o->arg[ARG_BETA])
			diag_error(p->d, o->arg_loc[ARG_BETA], "beta is only allowed with norm: layernorm (rmsnorm has no bias)");
		if (o->p.norm == NORM_LAYER && !o->arg[ARG_BETA])
			diag_error(p->d, o->loc, "norm_quantize with norm: layernorm needs operand 'beta'");
		if (o->arg[ARG_RESIDUAL_OUT] && !o->arg[ARG_RESIDUAL])
			diag_error(p->d, o->arg_loc[ARG_RESIDUAL_OUT], "residual_out needs operand 'residual' (it is in + residual)");
		if (o->p.norm == NORM_RMS && o->arg[ARG_MU_OUT])
			diag_error(p->d, o->arg_loc[ARG_MU_OUT], "mu is only written with norm: layernorm (rmsnorm has no mean)");
	}
	if (k == OP_DNORM) {
		if (o->p.norm == NORM_RMS && o->arg[ARG_MU])
			diag_error(p->d, o->arg_loc[ARG_MU], "mu is only allowed with norm: layernorm (rmsnorm has no mean)");
		if (o->p.norm == NORM_RMS && o->arg[ARG_D_BETA])
			diag_error(p->d, o->arg_loc[ARG_D_BETA], "d_beta is only allowed with norm: layernorm (rmsnorm has no bias)");
		if (o->p.norm == NORM_LAYER && !o->arg[ARG_MU])
			diag_error(p->d, o->loc, "dnorm with norm: layernorm needs operand 'mu' (the forward's saved row means)");
	}
	if ((k == OP_GLU_AMAX || k == OP_DGLU) && o->p.act != GLU_CLAMPED_SWIGLU) {
		if (pl->alpha.line)
			diag_error(p->d, pl->alpha, "alpha is only allowed with act: clamped_swiglu");
		if (pl->limit.line)
			diag_error(p->d, pl->limit, "limit is only allowed with act: clamped_swiglu");
	}
	if (k == OP_GEMM_CAST) {
		if (o->p.gelu && o->p.pass != PASS_FPROP)
			diag_error(p->d, o->epilogue_loc, "epilogue: gelu is only allowed with pass: fprop");
		if (o->arg[ARG_BIAS] && o->p.pass == PASS_WGRAD)
			diag_error(p->d, o->arg_loc[ARG_BIAS], "bias is not allowed with pass: wgrad");
		if (o->p.accumulate && o->p.out_dtype == DT_NONE)
			diag_error(p->d, o->accumulate_loc, "accumulate needs a high-precision output (dtype bf16, fp16 or fp32), not fp8");
		if (o->arg[ARG_ADD] && o->p.out_dtype == DT_NONE)
			diag_error(p->d, o->arg_loc[ARG_ADD], "add needs a high-precision output (dtype bf16, fp16 or fp32), not fp8");
		if (o->arg[ARG_ADD] && o->p.accumulate)
			diag_error(p->d, o->arg_loc[ARG_ADD], "add and accumulate both add into the product; give one (accumulate "
				"adds the output's prior value, add another tensor)");
		if (o->arg[ARG_ADD] && o->p.gelu)
			diag_error(p->d, o->arg_loc[ARG_ADD], "add is not allowed with epilogue: gelu (cuBLASLt's GELU epilogue would "
				"apply to the sum); write the GEMM to its own tensor");
		if (o->p.accumulate && o->p.gelu) /* cuBLASLt adds the prior value before its epilogue's GELU */
			diag_error(p->d, o->accumulate_loc,
				"accumulate is not allowed with epilogue: gelu (cuBLASLt's GELU epilogue would apply to the sum, "
				"gelu(a x b + bias + out), not out + gelu(a x b + bias)); write the GEMM to its own tensor");
	}
}

/* One item of `ops:`: its name, operands and params (defaults first), then their rules. */
static void parse_op(P *p, SpecOp *o, yaml_node_t *item)
{
	yaml_node_t *fields = parse_op_name(p, o, item);
	o->p = op_params_default(o->kind);
	ParamLocs pl = {{0}, {0}};
	parse_op_fields(p, o, fields, &pl);
	check_op_fields(p, o, &pl);
}

/* ---- top level ---- */

static const char *const top_keys[] = {"layer", "dims", "recipe", "overrides", "tensors", "ops", "outputs", "targets",
	"backward", "optimizer"};
#define NTOP 10

/* `optimizer: {kind: adamw, lr, betas: [b1, b2], eps, weight_decay}`; torch.optim.AdamW's defaults. */
static void parse_optimizer(P *p, yaml_node_t *m)
{
	static const char *const keys[] = {"kind", "lr", "betas", "eps", "weight_decay"};
	static const char *const kinds[] = {NULL, "adamw"};
	Optimizer *o = &p->s->optim;
	*o = (Optimizer){OPTIM_ADAMW, 1e-3f, 0.9f, 0.999f, 1e-8f, 1e-2f, loc_of(p, m)};
	int n;
	Pair *pr = pairs(p, m, "optimizer", &n);
	bool kind = false;
	for (int i = 0; i < n; i++) {
		yaml_node_t *v = pr[i].v;
		switch (key_index(pr[i].key, keys, 5)) {
		case 0: o->kind = (OptimKind)choice(p, v, "optimizer kind", kinds, 2); kind = true; break;
		case 1: o->lr = number(p, v, "lr", 0); break;
		case 2: {
			int nb;
			yaml_node_t **b = items(p, v, "betas", &nb);
			if (nb != 2)
				diag_error(p->d, loc_of(p, v), "betas needs two numbers [beta1, beta2], found %d", nb);
			o->beta1 = number(p, b[0], "beta1", 0);
			o->beta2 = number(p, b[1], "beta2", 0);
			if (o->beta1 >= 1)
				diag_error(p->d, loc_of(p, b[0]), "beta1 must be in [0, 1), found %g", (double)o->beta1);
			if (o->beta2 >= 1)
				diag_error(p->d, loc_of(p, b[1]), "beta2 must be in [0, 1), found %g", (double)o->beta2);
			break;
		}
		case 3:
			o->eps = number(p, v, "eps", 0);
			if (!(o->eps > 0))
				diag_error(p->d, loc_of(p, v), "eps must be > 0 (the update divides by sqrt(v) + eps: a zero gradient "
					"would give 0/0), found %g", (double)o->eps);
			break;
		case 4: o->weight_decay = number(p, v, "weight_decay", 0); break;
		default: unknown_key(p, &pr[i], "optimizer", keys, 5);
		}
	}
	if (!kind)
		diag_error(p->d, o->loc, "optimizer needs a 'kind' key (adamw)");
}

static void parse_dims(P *p, yaml_node_t *m)
{
	int n;
	Pair *pr = pairs(p, m, "dims", &n);
	Spec *s = p->s;
	s->dims = arena_alloc(p->a, sizeof *s->dims * (size_t)(n + 1));
	s->ndims = n;
	for (int i = 0; i < n; i++) {
		Dim *d = &s->dims[i];
		d->name = ident(p, pr[i].k, "dim name");
		d->loc = loc_of(p, pr[i].k);
		const char *what = arena_printf(p->a, "dim '%s'", d->name);
		const char *v = scalar(p, pr[i].v, what);
		if (!strcmp(v, "dynamic"))
			d->value = -1;
		else if (*v && strchr("0123456789+-", *v))
			d->value = integer(p, pr[i].v, what, 1, 2147483647);
		else
			diag_error(p->d, loc_of(p, pr[i].v), "bad value '%s' for %s: expected a positive integer or dynamic", v, what);
	}
}

static void parse_overrides(P *p, yaml_node_t *m)
{
	int n;
	Pair *pr = pairs(p, m, "overrides", &n);
	Spec *s = p->s;
	s->overrides = arena_alloc(p->a, sizeof *s->overrides * (size_t)(n + 1));
	s->noverrides = n;
	for (int i = 0; i < n; i++) {
		SpecOverride *o = &s->overrides[i];
		o->tensor = ident(p, pr[i].k, "tensor name");
		o->loc = loc_of(p, pr[i].k);
		o->recipe = s->recipe;
		parse_recipe(p, pr[i].v, arena_printf(p->a, "the override of '%s'", o->tensor), &o->recipe, &o->set, o->keys);
	}
}

static void parse_list(P *p, yaml_node_t *v, const char *what, const char ***names, Loc **locs, int *count, bool idents)
{
	int n;
	yaml_node_t **e = items(p, v, what, &n);
	*names = arena_alloc(p->a, sizeof **names * (size_t)(n + 1));
	*locs = arena_alloc(p->a, sizeof **locs * (size_t)(n + 1));
	*count = n;
	for (int i = 0; i < n; i++) {
		(*names)[i] = idents ? ident(p, e[i], "tensor name") : scalar(p, e[i], what);
		(*locs)[i] = loc_of(p, e[i]);
	}
}

static void parse_top(P *p, yaml_node_t *root)
{
	Spec *s = p->s;
	if (root->type != YAML_MAPPING_NODE)
		diag_error(p->d, loc_of(p, root), "a spec must be a map with the keys layer, ops (and dims, recipe, overrides, tensors, outputs, targets), found %s",
			kind_name(root));
	int n;
	Pair *pr = pairs(p, root, "the spec", &n);
	yaml_node_t *by[NTOP] = {0};
	for (int i = 0; i < n; i++) {
		int k = key_index(pr[i].key, top_keys, NTOP);
		if (k < 0)
			unknown_key(p, &pr[i], "the spec", top_keys, NTOP);
		by[k] = pr[i].v;
		if (k == 6)
			s->outputs_loc = loc_of(p, pr[i].k);
		if (k == 7)
			s->targets_loc = loc_of(p, pr[i].k);
	}
	if (!by[0])
		diag_error(p->d, loc_of(p, root), "the spec needs a 'layer' key (the layer's name)");
	if (!by[5])
		diag_error(p->d, loc_of(p, root), "the spec needs an 'ops' key (the list of ops)");
	s->layer = ident(p, by[0], "layer name");
	s->layer_loc = loc_of(p, by[0]);
	if (by[1])
		parse_dims(p, by[1]);
	s->recipe = recipe_default(SCALING_NONE);
	if (by[2]) {
		Recipe r = recipe_default(SCALING_NONE);
		parse_recipe(p, by[2], "recipe", &r, &s->recipe_set, s->recipe_keys);
		if (!(s->recipe_set & RECIPE_SET_SCALING))
			diag_error(p->d, loc_of(p, by[2]), "recipe needs a 'scaling' key (%s)", join(p, scaling_names, SCALING_COUNT));
		check_recipe_keys(p, s->recipe_set, s->recipe_keys, r.scaling, "");
		Recipe def = recipe_default(r.scaling);
		recipe_apply(&def, &r, s->recipe_set);
		def.loc = r.loc;
		s->recipe = def;
	}
	if (by[3]) {
		parse_overrides(p, by[3]);
		for (int i = 0; i < s->noverrides; i++) {
			SpecOverride *o = &s->overrides[i];
			Scaling sc = (o->set & RECIPE_SET_SCALING) ? o->recipe.scaling : s->recipe.scaling;
			check_recipe_keys(p, o->set, o->keys, sc,
				(o->set & RECIPE_SET_SCALING) ? "" : " (inherited from the layer recipe)");
		}
	}
	if (by[4]) {
		int m;
		Pair *t = pairs(p, by[4], "tensors", &m);
		s->tensors = arena_alloc(p->a, sizeof *s->tensors * (size_t)(m + 1));
		s->ntensors = m;
		for (int i = 0; i < m; i++)
			parse_tensor(p, &s->tensors[i], &t[i]);
	}
	int m;
	yaml_node_t **ops = items(p, by[5], "ops", &m);
	if (m == 0)
		diag_error(p->d, loc_of(p, by[5]), "ops is empty; a layer needs at least one op");
	s->ops = arena_alloc(p->a, sizeof *s->ops * (size_t)m);
	s->nops = m;
	for (int i = 0; i < m; i++)
		parse_op(p, &s->ops[i], ops[i]);
	if (by[6]) {
		parse_list(p, by[6], "outputs", &s->outputs, &s->output_locs, &s->noutputs, true);
		if (s->noutputs == 0)
			diag_error(p->d, loc_of(p, by[6]), "outputs is empty; list the tensors the layer returns or leave outputs out");
	}
	if (by[8]) {
		s->backward = boolean(p, by[8], "backward");
		s->backward_loc = loc_of(p, by[8]);
	}
	if (by[9]) {
		parse_optimizer(p, by[9]);
		if (!s->backward)
			diag_error(p->d, s->optim.loc, "optimizer needs backward: true (it updates the weights from their derived gradients)");
	}
	for (int i = 0; i < s->nops; i++)
		if (s->ops[i].kind == OP_ADAMW)
			diag_error(p->d, s->ops[i].loc, "adamw ops are derived, not written: give the spec an 'optimizer' (with backward: true)");
	for (int i = 0; i < s->ntensors; i++) { /* main_grad: a weight's derived gradient */
		const SpecTensor *t = &s->tensors[i];
		if (t->main_grad && t->role != ROLE_WEIGHT)
			diag_error(p->d, t->main_grad_loc, "main_grad is for weights: '%s' has role %s; add role: weight or drop main_grad",
				t->name, role_names[t->role]);
		if (t->main_grad && !s->backward)
			diag_error(p->d, t->main_grad_loc, "main_grad accumulates the derived gradient of '%s'; it needs backward: true",
				t->name);
		if (t->grad_dtype != DT_NONE && t->role != ROLE_WEIGHT)
			diag_error(p->d, t->grad_dtype_loc, "grad_dtype is for weights: '%s' has role %s; add role: weight or drop grad_dtype",
				t->name, role_names[t->role]);
		else if (t->grad_dtype != DT_NONE && !s->backward)
			diag_error(p->d, t->grad_dtype_loc, "grad_dtype is the dtype of the derived gradient of '%s'; it needs backward: true",
				t->name);
		else if (t->grad_dtype != DT_NONE && t->grad_dtype != DT_F32 && t->main_grad)
			diag_error(p->d, t->grad_dtype_loc, "grad_dtype %s with main_grad: main_grad accumulates the gradient of '%s' in "
				"fp32; drop one", dtype_names[t->grad_dtype], t->name);
	}
	if (by[7]) {
		parse_list(p, by[7], "targets", &s->targets, &s->target_locs, &s->ntargets, false);
		if (s->ntargets == 0)
			diag_error(p->d, loc_of(p, by[7]), "targets is empty; list GPU architectures (e.g. sm_90a) or leave targets out");
	}
}

/* libyaml's own complaint, at its mark. */
static _Noreturn void yaml_fail(P *p)
{
	yaml_parser_t *y = &p->parser;
	Loc loc = loc_mark(p, y->problem_mark);
	if (y->error == YAML_READER_ERROR) {
		/* the mark is not maintained by the reader: find the line of the offset */
		loc = (Loc){p->s->file, 1, 1};
		for (size_t i = 0; i < y->problem_offset && p->s->src[i]; i++) {
			if (p->s->src[i] == '\n') {
				loc.line++;
				loc.col = 1;
			} else {
				loc.col++;
			}
		}
		diag_error(p->d, loc, "yaml: %s", y->problem ? y->problem : "cannot read the input");
	}
	if (y->error == YAML_MEMORY_ERROR)
		diag_error(p->d, (Loc){0}, "yaml: out of memory");
	/* libyaml's "found character that cannot start any token" at a tab: say it is one */
	if (y->error == YAML_SCANNER_ERROR && *mark_ptr(p, y->problem_mark) == '\t')
		diag_error(p->d, loc, "yaml: a tab character here; YAML indents with spaces only (tabs are not allowed in "
			"indentation)");
	if (y->context)
		diag_error(p->d, loc, "yaml: %s %s", y->problem ? y->problem : "syntax error", y->context);
	diag_error(p->d, loc, "yaml: %s", y->problem ? y->problem : "syntax error");
}

/* ---- nesting depth, checked on the text before libyaml reads it ----
 * libyaml's time grows with the square of the flow depth ([[[[... 80,000 deep:
 * 17 s) and its memory with the block depth ("- - - ..."), so the text is
 * scanned first, mirroring libyaml's tokens closely enough to count: quoted
 * scalars, comments, plain scalars, block scalars (| >), tags and anchors, flow
 * indicators, indentation and "- " / "? " entries. Where the two could
 * disagree the scan counts more, never less (a quoted scalar in block context
 * ends at its line for the scan; a plain scalar's continuation line is read as
 * tokens), so no text nests deeper in libyaml than the scan says. */
#define TG_MAX_DEPTH 64

/* 1-based character column of byte i on the line starting at byte bol. */
static int text_col(const char *t, size_t bol, size_t i)
{
	int c = 1;
	for (size_t k = bol; k < i; k++)
		c += ((unsigned char)t[k] & 0xC0) != 0x80;
	return c;
}

static bool blank_or_end(const char *t, size_t i, size_t eol)
{
	return i >= eol || t[i] == ' ' || t[i] == '\t';
}

typedef struct Nesting {
	P *p;
	const char *t;
	int line;              /* 1-based */
	size_t bol;            /* byte offset where the line begins */
	int cols[TG_MAX_DEPTH], ncols; /* open block levels: their columns (0-based bytes) */
	bool seq[TG_MAX_DEPTH];        /* ... and whether each is a "- " list (a list may share its map's column) */
	int flow;              /* open [ and { */
} Nesting;

/* One more level opens at byte `at`: an error past TG_MAX_DEPTH. */
static void nest_level(Nesting *n, size_t at)
{
	if (n->ncols + n->flow >= TG_MAX_DEPTH)
		diag_error(n->p->d, (Loc){n->p->s->file, n->line, text_col(n->t, n->bol, at)},
			"the spec nests lists and maps deeper than %d levels; a spec needs about 5", TG_MAX_DEPTH);
}

/* A block node at byte `at` (column col): close the deeper levels, open one if it is new
 * (a "- " entry at its parent map's column opens a list: YAML's indentless sequence). */
static void nest_block(Nesting *n, size_t at, int col, bool seq)
{
	while (n->ncols && n->cols[n->ncols - 1] > col)
		n->ncols--;
	if (n->ncols && n->cols[n->ncols - 1] == col && n->seq[n->ncols - 1] != seq && !seq)
		n->ncols--; /* a key after an indentless list: back in the map */
	if (n->ncols && n->cols[n->ncols - 1] == col && n->seq[n->ncols - 1] == seq)
		return;
	nest_level(n, at);
	n->cols[n->ncols] = col;
	n->seq[n->ncols++] = seq;
}

static void check_depth(P *p, const char *t, size_t len)
{
	Nesting n = {.p = p, .t = t};
	bool plain = false;     /* inside a plain scalar (else at a token start) */
	char quote = 0;         /* inside a quoted scalar: its quote character */
	int scalar_parent = -1; /* after a | or > header: the column content must be indented past */
	int scalar_indent = -1; /* inside a block scalar: its content's indentation */
	for (size_t bol = 0; bol < len;) {
		size_t eol = bol;
		while (eol < len && t[eol] != '\n' && t[eol] != '\r')
			eol++;
		size_t next = eol + (eol + 1 < len && t[eol] == '\r' && t[eol + 1] == '\n' ? 2 : 1);
		n.line++;
		n.bol = bol;
		size_t i = bol;
		while (i < eol && t[i] == ' ')
			i++;
		int ind = (int)(i - bol);
		bool empty = i == eol;
		if (scalar_parent >= 0 || scalar_indent >= 0) { /* block scalar content: skip it */
			if (empty)
				goto next_line;
			if (scalar_indent < 0 && ind > scalar_parent)
				scalar_indent = ind;
			scalar_parent = -1;
			if (scalar_indent >= 0 && ind >= scalar_indent)
				goto next_line;
			scalar_indent = -1;
		}
		if (n.flow == 0) {
			quote = 0; /* a block-context quoted scalar ends at its line, for the count */
			plain = false;
		}
		int key_col = -1, dash_col = -1;
		bool colon = false;
		if (n.flow == 0 && !empty && t[i] != '#') {
			/* block levels: the line's indentation, then one per leading "- " or "? " */
			for (bool first = true;; first = false) {
				bool entry = (t[i] == '-' || t[i] == '?') && blank_or_end(t, i + 1, eol);
				if (first || entry)
					nest_block(&n, i, (int)(i - bol), entry);
				if (!entry)
					break;
				dash_col = (int)(i - bol);
				i++;
				while (i < eol && (t[i] == ' ' || t[i] == '\t'))
					i++;
				if (i == eol)
					break;
			}
			key_col = (int)(i - bol);
		}
		for (; i < eol; i++) {
			char c = t[i];
			if (quote) {
				if (quote == '"' && c == '\\')
					i++;
				else if (c == quote && quote == '\'' && i + 1 < eol && t[i + 1] == '\'')
					i++;
				else if (c == quote)
					quote = 0;
				continue;
			}
			if (c == ' ' || c == '\t')
				continue;
			bool after_blank = i == bol || t[i - 1] == ' ' || t[i - 1] == '\t';
			if (c == '#' && (!plain || after_blank))
				break; /* a comment */
			if (c == ':' && (blank_or_end(t, i + 1, eol) || (n.flow && (!plain || strchr(",?[]{}", t[i + 1]))))) {
				plain = false;
				if (n.flow == 0 && !colon && dash_col >= 0 && key_col > dash_col)
					nest_block(&n, bol + (size_t)key_col, key_col, false); /* "- key:": a map in the list */
				colon |= n.flow == 0;
				continue;
			}
			if (plain && !(n.flow && strchr(",[]{}", c)))
				continue;
			plain = false;
			if (c == '[' || c == '{') {
				nest_level(&n, i);
				n.flow++;
			} else if (c == ']' || c == '}') {
				n.flow -= n.flow > 0;
			} else if (c == '"' || c == '\'') {
				quote = c;
			} else if (c == '!' || c == '&' || c == '*') {
				while (i + 1 < eol && !blank_or_end(t, i + 1, eol))
					i++; /* a tag, anchor or alias: one token up to a blank */
			} else if ((c == '|' || c == '>') && n.flow == 0) {
				scalar_parent = colon ? key_col : dash_col >= 0 ? dash_col : ind;
				break; /* the header's indicators and comment */
			} else if (!((c == '-' || c == '?') && blank_or_end(t, i + 1, eol)) && !(c == ',' && n.flow)) {
				plain = true;
			}
		}
	next_line:
		bol = next;
	}
}

/* UTF-8 well-formedness, so that libyaml never sees surprises and messages stay printable. */
static void check_text(P *p, const char *text, size_t len)
{
	int line = 1, col = 1;
	const unsigned char *u = (const unsigned char *)text;
	for (size_t i = 0; i < len;) {
		unsigned c = u[i];
		size_t n = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
		bool ok = n > 0 && i + n <= len && !(n == 2 && c < 0xC2) && !(n == 4 && c > 0xF4);
		for (size_t j = 1; ok && j < n; j++)
			ok = (u[i + j] & 0xC0) == 0x80;
		if (c == 0)
			diag_error(p->d, (Loc){p->s->file, line, col}, "the spec contains a NUL byte; expected YAML text");
		if (!ok)
			diag_error(p->d, (Loc){p->s->file, line, col}, "the spec is not valid UTF-8 text (byte 0x%02x)", c);
		if (c == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
		i += n;
	}
}

static Spec *load_text(Arena *a, Diag *d, const char *file, const char *text, size_t len);

Spec *spec_load(Arena *a, Diag *d, const char *file, const char *text, size_t len)
{
	/* a UTF-8 byte order mark (editors on Windows write one) is not part of the text;
	 * columns on line 1 count from after it */
	bool bom = len >= 3 && !memcmp(text, "\xEF\xBB\xBF", 3);
	return load_text(a, d, file, bom ? text + 3 : text, bom ? len - 3 : len);
}

/* spec_load past the byte order mark. */
static Spec *load_text(Arena *a, Diag *d, const char *file, const char *text, size_t len)
{
	P *p = arena_alloc(a, sizeof *p);
	p->a = a;
	p->d = d;
	p->s = arena_alloc(a, sizeof *p->s);
	p->s->file = arena_strdup(a, file);
	p->s->src = arena_strndup(a, text, len);
	d->file = p->s->file;
	d->src = p->s->src;
	d->failed = 0;
	d->msg[0] = 0;
	if (setjmp(d->jmp)) {
		if (p->doc_live)
			yaml_document_delete(&p->doc);
		if (p->parser_live)
			yaml_parser_delete(&p->parser);
		return NULL;
	}
	check_text(p, text, len);
	check_depth(p, text, len);
	size_t i = 0;
	while (i < len && strchr(" \t\r\n", text[i]))
		i++;
	if (i == len)
		diag_error(d, (Loc){0}, "the spec is empty; expected a map with at least the keys layer and ops");
	if (!yaml_parser_initialize(&p->parser))
		diag_error(d, (Loc){0}, "yaml: cannot initialize the parser");
	p->parser_live = true;
	yaml_parser_set_input_string(&p->parser, (const unsigned char *)p->s->src, len);
	yaml_parser_set_encoding(&p->parser, YAML_UTF8_ENCODING);
	if (!yaml_parser_load(&p->parser, &p->doc))
		yaml_fail(p);
	p->doc_live = true;
	yaml_node_t *root = yaml_document_get_root_node(&p->doc);
	if (!root)
		diag_error(d, (Loc){0}, "the spec is empty; expected a map with at least the keys layer and ops");
	parse_top(p, root);
	/* a second document is a mistake, not something to ignore */
	yaml_document_t extra;
	if (!yaml_parser_load(&p->parser, &extra))
		yaml_fail(p);
	yaml_node_t *r2 = yaml_document_get_root_node(&extra);
	Loc l2 = r2 ? loc_of(p, r2) : (Loc){0};
	yaml_document_delete(&extra);
	if (r2)
		diag_error(d, l2, "a spec is one YAML document; found a second one");
	yaml_document_delete(&p->doc);
	p->doc_live = false;
	yaml_parser_delete(&p->parser);
	p->parser_live = false;
	return p->s;
}

OpParams op_params_default(OpKind k)
{
	OpParams p = {0};
	p.norm = NORM_RMS;
	p.eps = 1e-5f;
	p.act = GLU_SWIGLU;
	p.alpha = 1.702f;
	p.limit = 7.0f;
	p.pass = PASS_FPROP;
	p.fast_accum = -1;
	p.out_dtype = k == OP_GEMM_CAST ? DT_BF16 : DT_NONE;
	p.rowwise = true;
	p.columnwise = k == OP_CAST_TRANSPOSE;
	return p;
}
