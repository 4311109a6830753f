/* util.c: arenas, text buffers, diagnostics and enum spellings for gen/.
 * Guarantees: arena memory is zeroed and lives until arena_free; diag_error
 * never returns and never prints: the message goes to Diag.msg. */
#include "gen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- arena: a list of large chunks, bump allocation ---- */
typedef struct Chunk { struct Chunk *next; size_t used, cap; max_align_t data[]; } Chunk;
struct Arena { Chunk *head; };

Arena *arena_new(void)
{
	Arena *a = calloc(1, sizeof *a);
	if (!a)
		abort();
	return a;
}

void arena_free(Arena *a)
{
	if (!a)
		return;
	for (Chunk *c = a->head, *next; c; c = next) {
		next = c->next;
		free(c);
	}
	free(a);
}

void *arena_alloc(Arena *a, size_t n)
{
	const size_t align = sizeof(max_align_t);
	n = (n + align - 1) / align * align;
	Chunk *c = a->head;
	if (!c || c->cap - c->used < n) {
		size_t cap = n > 65536 ? n : 65536;
		c = malloc(sizeof *c + cap);
		if (!c)
			abort();
		c->used = 0;
		c->cap = cap;
		c->next = a->head;
		a->head = c;
	}
	void *p = (char *)c->data + c->used;
	c->used += n;
	memset(p, 0, n);
	return p;
}

char *arena_strndup(Arena *a, const char *s, size_t n)
{
	char *p = arena_alloc(a, n + 1);
	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

char *arena_strdup(Arena *a, const char *s)
{
	return arena_strndup(a, s, strlen(s));
}

uint64_t fnv1a64(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ull;
	return h;
}

char *arena_printf(Arena *a, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	char *p = arena_alloc(a, (size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return p;
}

/* ---- Buf ---- */
static void buf_grow(Buf *b, size_t extra)
{
	if (b->len + extra + 1 <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < b->len + extra + 1)
		cap *= 2;
	char *p = realloc(b->p, cap);
	if (!p)
		abort();
	b->p = p;
	b->cap = cap;
}

void buf_putn(Buf *b, const char *s, size_t n)
{
	buf_grow(b, n);
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = 0;
}

void buf_puts(Buf *b, const char *s)
{
	buf_putn(b, s, strlen(s));
}

void buf_printf(Buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	buf_grow(b, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void buf_free(Buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

/* ---- diagnostics ---- */

/* Copy in to out (size outlen >= 1) with control characters escaped: C0 and DEL as
 * \xNN (\t \n \r by name), C1 (U+0080..U+009F) as \u00NN, so that names and
 * values from a spec never reach the terminal as escape sequences. */
static void escape_controls(const char *in, char *out, size_t outlen)
{
	size_t o = 0;
	for (const unsigned char *u = (const unsigned char *)in; *u && o + 7 < outlen; u++) {
		if (*u == '\t' || *u == '\n' || *u == '\r')
			o += (size_t)snprintf(out + o, outlen - o, "\\%c", *u == '\t' ? 't' : *u == '\n' ? 'n' : 'r');
		else if (*u < 0x20 || *u == 0x7F)
			o += (size_t)snprintf(out + o, outlen - o, "\\x%02x", *u);
		else if (*u == 0xC2 && u[1] >= 0x80 && u[1] <= 0x9F)
			o += (size_t)snprintf(out + o, outlen - o, "\\u%04x", *++u);
		else
			out[o++] = (char)*u;
	}
	out[o] = 0;
}

static void diag_vformat(Diag *d, Loc loc, const char *fmt, va_list ap)
{
	char raw[1024], text[1024];
	vsnprintf(raw, sizeof raw, fmt, ap);
	escape_controls(raw, text, sizeof text);
	const char *file = loc.file ? loc.file : d->file ? d->file : "<spec>";
	size_t n = 0;
	if (loc.line > 0)
		n = (size_t)snprintf(d->msg, sizeof d->msg, "%s:%d:%d: error: %s\n", file, loc.line, loc.col, text);
	else
		n = (size_t)snprintf(d->msg, sizeof d->msg, "%s: error: %s\n", file, text);
	d->failed = 1;
	if (loc.line <= 0 || !d->src || n >= sizeof d->msg)
		return;
	/* the source line and a caret under the column */
	const char *p = d->src;
	for (int line = 1; line < loc.line && *p; p++)
		if (*p == '\n')
			line++;
	const char *end = strchr(p, '\n');
	size_t len = end ? (size_t)(end - p) : strlen(p);
	if (len > 200)
		len = 200;
	/* the line as shown: a CRLF file's \r dropped, other control characters as '?' (one
	 * column each, so the caret stays aligned) */
	while (len > 0 && p[len - 1] == '\r')
		len--;
	char line[256];
	size_t shown = 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)p[i];
		if (c == 0xC2 && i + 1 < len && (unsigned char)p[i + 1] >= 0x80 && (unsigned char)p[i + 1] <= 0x9F)
			i++, c = 0; /* a C1 control: one '?' for its two bytes */
		line[shown++] = c == '\t' || (c >= 0x20 && c != 0x7F) ? (char)c : '?';
	}
	char caret[256];
	int col = loc.col < 1 ? 1 : loc.col > 200 ? 200 : loc.col;
	int k = 0;
	for (int i = 1; i < col; i++)
		caret[k++] = (i - 1 < (int)len && p[i - 1] == '\t') ? '\t' : ' ';
	caret[k++] = '^';
	caret[k] = 0;
	snprintf(d->msg + n, sizeof d->msg - n, "  %.*s\n  %s\n", (int)shown, line, caret);
}

void diag_format(Diag *d, Loc loc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	diag_vformat(d, loc, fmt, ap);
	va_end(ap);
}

void diag_error(Diag *d, Loc loc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	diag_vformat(d, loc, fmt, ap);
	va_end(ap);
	longjmp(d->jmp, 1);
}

/* ---- enum spellings and the op and recipe tables (gen.h) ---- */
static const struct { const char *name; int bits, code; } dtypes[] = {
#define X(e, s, bits, code) {s, bits, code},
	TG_DTYPES(X)
#undef X
};
static const ScalingInfo scalings[] = {
#define X(e, s, code, brows, bcols, scale, amax, state) {s, code, brows, bcols, scale, amax, state},
	TG_SCALINGS(X)
#undef X
};
static const struct { const char *name, *tmpl; OpFamily family; Tolerance tol; int nvsrc; unsigned req, opt; } ops[] = {
#define X(e, s, t, fam, tol, nvsrc, req, opt) {s, t, fam, tol, nvsrc, req, opt},
	TG_OPS(X)
#undef X
};
static const struct { const char *name; int out; } args[] = {
#define X(e, s, isout) {s, isout},
	TG_ARGS(X)
#undef X
};
static const char *const glus[] = {
#define X(e, s, code) s,
	TG_GLUS(X)
#undef X
};
/* The planner writes a GluKind as the TG_ACT slot and the reference takes it as its
 * kind (ref.h's REF_* are the same codes): the enum must equal the kernel codes. */
#define X(e, s, code) _Static_assert(e == code, "GluKind " s " must equal its TG_ACT code (templates/tg_codes.h)");
TG_GLUS(X)
#undef X
_Static_assert(TG_RECIPE_CURRENT_AMAX != TG_RECIPE_CURRENT_CAST, "current scaling's two passes need two codes");

const char *dtype_name(DType t) { return t >= 0 && t < DT_COUNT ? dtypes[t].name : "?"; }
int dtype_bits(DType t) { return t >= 0 && t < DT_COUNT ? dtypes[t].bits : 0; }
int dtype_code(DType t) { return t >= 0 && t < DT_COUNT ? dtypes[t].code : -1; }
DType gemm_hp_dtype(const Tensor *a, bool lowp)
{
	if (!lowp)
		return a->dtype;
	return a->recipe.scaling == SCALING_MXFP8 || a->recipe.scaling == SCALING_NVFP4 ? DT_BF16 : DT_NONE;
}
const char *scaling_name(Scaling s) { return s >= 0 && s < SCALING_COUNT ? scalings[s].name : "?"; }
const ScalingInfo *scaling_info(Scaling s) { return &scalings[s >= 0 && s < SCALING_COUNT ? s : SCALING_NONE]; }
const char *op_name(OpKind k) { return k >= 0 && k < OP_COUNT ? ops[k].name : "?"; }
const char *op_template(OpKind k) { return k >= 0 && k < OP_COUNT ? ops[k].tmpl : NULL; }
OpFamily op_family(OpKind k) { return ops[k].family; }
Tolerance op_tolerance(OpKind k) { return ops[k].tol; }

/* The row kernel of a norm or GLU writes its rowwise 1D NVFP4 copy itself (both passes of its template). */
static bool nvfp4_own_kernel(const Op *op, const Tensor *t)
{
	return (op->kind == OP_NORM_QUANTIZE || op->kind == OP_GLU_AMAX) && !t->columnwise && !t->recipe.nvfp4_2d;
}

bool op_writes_hp(const Graph *g, const Op *op)
{
	if (op_family(op->kind) != OPF_ROW || op->arg[ARG_OUT] < 0)
		return false;
	const Tensor *t = &g->tensors[op->arg[ARG_OUT]];
	if (t->recipe.scaling == SCALING_NONE || t->dtype == t->hp_dtype)
		return false;
	if (t->recipe.scaling == SCALING_NVFP4) /* neither the op's own kernel nor nvfp4_quantize.cu from its inputs */
		return !nvfp4_own_kernel(op, t) && nvfp4_source(g, op) == NVSRC_TENSOR;
	/* both 1x128 copies: a GLU's from glu_amax.cu's block tile path (ir.c holds its row to a multiple
	 * of 8), a norm's from its row kernel and norm_colwise.cu, a dglu's from dglu.cu's block tile path
	 * where no 1x128 block straddles d_h's halves and no dbias is fused */
	return t->recipe.scaling == SCALING_BLOCK1X128 && t->columnwise && op->kind == OP_DGLU &&
		!dglu_block_tile_fits(t->shape[t->rank - 1].add / glu_halves(op->p.act), op->arg[ARG_DBIAS_OUT] >= 0);
}

NvfpSource nvfp4_source(const Graph *g, const Op *op)
{
	if (op_family(op->kind) != OPF_ROW || op->arg[ARG_OUT] < 0)
		return NVSRC_TENSOR;
	const Tensor *t = &g->tensors[op->arg[ARG_OUT]];
	if (t->recipe.scaling != SCALING_NVFP4 || t->dtype == t->hp_dtype)
		return NVSRC_TENSOR;
	if (nvfp4_own_kernel(op, t))
		return NVSRC_TENSOR;
	/* dglu: a strip holds 64 columns of each half, so no 16-element block may straddle them; a fused dbias
	 * needs dglu.cu's tile path */
	if (op->kind == OP_DGLU && (op->arg[ARG_DBIAS_OUT] >= 0 || t->shape[t->rank - 1].add % 32))
		return NVSRC_TENSOR;
	return (NvfpSource)ops[op->kind].nvsrc;
}

bool dglu_block_tile_fits(long c, bool dbias) { return c % 128 == 0 && !dbias; }

bool dglu_staged_kind(const Graph *g, const Op *op)
{
	if (op->kind != OP_DGLU || op->arg[ARG_OUT] < 0 || op->arg[ARG_IN] < 0 || op->arg[ARG_GRAD] < 0 ||
		op->arg[ARG_DBIAS_OUT] >= 0)
		return false;
	const Tensor *t = &g->tensors[op->arg[ARG_OUT]], *h = &g->tensors[op->arg[ARG_IN]], *d = &g->tensors[op->arg[ARG_GRAD]];
	bool two = (h->dtype == DT_BF16 || h->dtype == DT_F16) && (d->dtype == DT_BF16 || d->dtype == DT_F16);
	Scaling sc = t->recipe.scaling;
	return (sc == SCALING_DELAYED || sc == SCALING_CURRENT || sc == SCALING_MXFP8) && t->dtype != t->hp_dtype &&
		t->columnwise && two;
}

bool dglu_staged(const Graph *g, const Op *op)
{
	if (!dglu_staged_kind(g, op))
		return false;
	const Tensor *t = &g->tensors[op->arg[ARG_OUT]];
	long c = t->shape[t->rank - 1].add / glu_halves(op->p.act);
	return c % (t->recipe.scaling == SCALING_MXFP8 ? 32 : 8) == 0;
}
unsigned op_required_args(OpKind k) { return ops[k].req; }
unsigned op_optional_args(OpKind k) { return ops[k].opt; }
const char *arg_name(ArgSlot s) { return s >= 0 && s < ARG_COUNT ? args[s].name : "?"; }
bool arg_is_output(ArgSlot s) { return args[s].out; }
const char *glu_name(GluKind k) { return k >= 0 && k < GLU_COUNT ? glus[k] : "?"; }
int glu_halves(GluKind k) { return TG_ACT_GATED((int)k) ? 2 : 1; }

const char *phase_name(Phase ph)
{
	static const char *const names[PHASE_COUNT] = {"forward", "backward", "optimizer"};
	return ph >= 0 && ph < PHASE_COUNT ? names[ph] : "?";
}

bool arch_parse(const char *s, Arch *out)
{
	if (strncmp(s, "sm_", 3) != 0)
		return false;
	const char *p = s + 3;
	int sm = 0, digits = 0;
	while (*p >= '0' && *p <= '9' && digits < 4) {
		sm = sm * 10 + (*p++ - '0');
		digits++;
	}
	if (digits < 2)
		return false;
	bool accel = false;
	if (*p == 'a') {
		accel = true;
		p++;
	}
	if (*p)
		return false;
	out->sm = sm;
	out->accel = accel;
	return true;
}

const char *arch_str(Arena *a, Arch arch)
{
	return arena_printf(a, "sm_%d%s", arch.sm, arch.accel ? "a" : "");
}
