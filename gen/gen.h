/* gen.h: the compiler's data model, shared by every stage of gen/.
 *
 *   spec.c      YAML text -> Spec   (typed, every node with file:line:col)
 *   ir.c        Spec -> Graph       (names resolved, shapes/dtypes inferred, validated)
 *   plan.c      Graph -> Plan       (ops fused into kernels, tile shapes, GEMM calls)
 *   emit.c      Plan -> CUDA source (templates with slots, deterministic)
 *   pipeline.c  text -> Graph -> Plan -> sources, the chain every user runs (pipeline.h)
 *   layout.c    extents, component sizes, component names (layout.h)
 *   tune.c      the tuning DB; util.c arenas, buffers, diagnostics, the tables below
 *
 * The op table (TG_OPS) and the recipe table (TG_SCALINGS) below hold what the
 * stages need per op and per recipe; templates/tg_codes.h the codes kernels test.
 * gen/ includes no CUDA header and nothing of ref/, runtime/ or cli/.
 *
 * Memory: everything lives in an Arena and is freed at once.
 * Errors: a stage reports through a Diag; diag_error() formats the message
 * (file:line:col, source line, caret) and longjmps back to the stage entry,
 * which returns NULL. Nothing here prints or exits. */
#ifndef TG_GEN_H
#define TG_GEN_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tg_codes.h" /* the integer codes kernels test (templates/) */

#define TG_VERSION "0.1.0"

/* ---- arena ---- */
typedef struct Arena Arena;
/* arena_new makes an empty arena; arena_free releases it and everything in it. */
Arena *arena_new(void);
void arena_free(Arena *a);
/* arena_alloc returns n zeroed bytes, aligned for any type; never NULL (aborts on OOM). */
void *arena_alloc(Arena *a, size_t n);
/* arena_strdup / arena_strndup copy a string into the arena. */
char *arena_strdup(Arena *a, const char *s);
char *arena_strndup(Arena *a, const char *s, size_t n);
/* arena_printf formats into a new arena string. */
char *arena_printf(Arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* fnv1a64 continues the 64-bit FNV-1a hash h (FNV1A64_OFFSET to start) over the bytes of s. */
#define FNV1A64_OFFSET 14695981039346656037ull
uint64_t fnv1a64(uint64_t h, const char *s);

/* ---- growable text buffer (emit, ir print) ---- */
typedef struct Buf { char *p; size_t len, cap; } Buf;
/* buf_puts / buf_printf append; buf_free releases; p is always NUL-terminated once used. */
void buf_puts(Buf *b, const char *s);
void buf_putn(Buf *b, const char *s, size_t n);
void buf_printf(Buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void buf_free(Buf *b);

/* ---- locations and diagnostics ---- */
typedef struct Loc { const char *file; int line, col; } Loc; /* line, col from 1; line 0 = no location */

typedef struct Diag {
	jmp_buf jmp;          /* where diag_error returns to */
	const char *file;     /* name used in messages */
	const char *src;      /* whole source text, for the caret line */
	char msg[2048];       /* formatted message once an error happened */
	int failed;
} Diag;
/* diag_error formats "file:line:col: error: MSG\n  source line\n  ^" into d->msg and longjmps. */
_Noreturn void diag_error(Diag *d, Loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* diag_format is diag_error without the jump (used where unwinding is manual). */
void diag_format(Diag *d, Loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ---- enums with their spelling in the spec ---- */
/*  enum       spelling bits  code in kernels (TG_*_DTYPE slots; -1: not a high-precision type) */
#define TG_DTYPES(X) \
	X(DT_NONE, "none", 0, -1) X(DT_F32, "fp32", 32, TG_DTYPE_F32) X(DT_BF16, "bf16", 16, TG_DTYPE_BF16) \
	X(DT_F16, "fp16", 16, TG_DTYPE_F16) X(DT_E4M3, "e4m3", 8, -1) X(DT_E5M2, "e5m2", 8, -1) X(DT_E2M1, "e2m1", 4, -1) \
	X(DT_E8M0, "e8m0", 8, -1)
typedef enum {
#define X(e, s, bits, code) e,
	TG_DTYPES(X)
#undef X
	DT_COUNT
} DType;

/* How a block recipe stores its scales. */
typedef enum { SCALE_NONE, SCALE_F32, SCALE_E8M0, SCALE_E4M3 } ScaleType;

/* The recipe table: one row per scaling, with what the stages need.
 *   code        TG_RECIPE slot value of its (cast) kernel in the row templates (NVFP4's
 *               casts of a tensor run in its own template, nvfp4_quantize.cu). An amax
 *               pass (current scaling, NVFP4) is TG_RECIPE_CURRENT_AMAX.
 *   brows,bcols the block one scale covers (0, 0: one scale per tensor)
 *   scale       the scale type: per-tensor FP32, FP32 blocks, E8M0 bytes, E4M3 bytes
 *   amax        needs this tensor's amax before it can cast (a separate amax pass)
 *   state       keeps per-tensor state (scale, scale_inv, amax) in the layer's recipe state
 *  enum                  spelling        code                    brows bcols scale       amax   state */
#define TG_SCALINGS(X) \
	X(SCALING_NONE,         "none",         TG_RECIPE_NONE,         0,   0,   SCALE_NONE, false, false) \
	X(SCALING_DELAYED,      "delayed",      TG_RECIPE_DELAYED,      0,   0,   SCALE_F32,  false, true) \
	X(SCALING_CURRENT,      "current",      TG_RECIPE_CURRENT_CAST, 0,   0,   SCALE_F32,  true,  true) \
	X(SCALING_BLOCK1X128,   "block1x128",   TG_RECIPE_BLOCK1X128,   1,   128, SCALE_F32,  false, false) \
	X(SCALING_BLOCK128X128, "block128x128", TG_RECIPE_BLOCK128X128, 128, 128, SCALE_F32,  false, false) \
	X(SCALING_MXFP8,        "mxfp8",        TG_RECIPE_MXFP8,        1,   32,  SCALE_E8M0, false, false) \
	X(SCALING_NVFP4,        "nvfp4",        TG_RECIPE_NVFP4,        1,   16,  SCALE_E4M3, true,  true)
typedef enum {
#define X(e, s, code, brows, bcols, scale, amax, state) e,
	TG_SCALINGS(X)
#undef X
	SCALING_COUNT
} Scaling;

/* One row of the recipe table (scaling_info). */
typedef struct ScalingInfo {
	const char *name;
	int code;             /* TG_RECIPE_* of the cast kernel (row templates) */
	int block_rows, block_cols; /* 0, 0: per tensor */
	ScaleType scale;
	bool amax_pass;       /* an amax pass runs before the cast */
	bool state;           /* per-tensor recipe state (a state slot) */
} ScalingInfo;
/* scaling_info is s's row of the recipe table (the NONE row if s is out of range). */
const ScalingInfo *scaling_info(Scaling s);

typedef enum { FMT_E4M3, FMT_E5M2, FMT_HYBRID } Fp8Format;      /* "e4m3" "e5m2" "hybrid" */
typedef enum { AMAX_MAX, AMAX_MOST_RECENT } AmaxAlgo;            /* "max" "most_recent" */
typedef enum { ROLE_ACTIVATION, ROLE_WEIGHT, ROLE_GRADIENT } Role; /* "activation" "weight" "gradient" */

/* A low-precision recipe; every field resolved (defaults filled) after ir_build. */
typedef struct Recipe {
	Scaling scaling;
	Fp8Format format;
	int history;          /* delayed: amax history length, default 1024 */
	AmaxAlgo amax_algo;   /* delayed: default max */
	int margin;           /* delayed: default 0 */
	float eps;            /* current: amax floor, default 0 */
	bool pow2;            /* current/block: power-of-two scales (block default true) */
	bool nvfp4_2d;        /* nvfp4: 16x16 blocks (weights) */
	bool nvfp4_sr;        /* nvfp4: stochastic rounding */
	bool nvfp4_rht;       /* nvfp4: random Hadamard transform on the columnwise copy */
	Loc loc;
} Recipe;

/* ---- shapes: each extent is mul*dim + add, dim a dynamic dimension or none ---- */
#define TG_MAX_RANK 4
typedef struct Extent { int dim; long mul, add; } Extent; /* dim = -1: constant `add` */

typedef struct Dim {
	const char *name;
	long value;           /* -1: dynamic, bound at run time */
	Loc loc;
} Dim;

/* ---- ops: one X-macro table (TG_OPS below); docs/ADDING_AN_OP.md lists what else an op needs ----
 * Operand slots: each op names which it requires and allows. */
#define TG_ARGS(X) \
	X(ARG_IN, "in", 0) X(ARG_GAMMA, "gamma", 0) X(ARG_BETA, "beta", 0) X(ARG_RESIDUAL, "residual", 0) \
	X(ARG_A, "a", 0) X(ARG_B, "b", 0) X(ARG_BIAS, "bias", 0) \
	X(ARG_OUT, "out", 1) X(ARG_RESIDUAL_OUT, "residual_out", 1) \
	/* backward: the incoming gradient; the norm statistics (read by dnorm, written by norm_quantize) */ \
	X(ARG_GRAD, "grad", 0) X(ARG_RSIGMA, "rsigma", 0) X(ARG_MU, "mu", 0) X(ARG_GRAD_RESIDUAL, "grad_residual", 0) \
	X(ARG_RSIGMA_OUT, "rsigma", 1) X(ARG_MU_OUT, "mu", 1) X(ARG_D_GAMMA, "d_gamma", 1) X(ARG_D_BETA, "d_beta", 1) \
	X(ARG_DBIAS_OUT, "dbias", 1) /* dglu: the bias gradient of h (a bias before the activation), fused */ \
	X(ARG_ADD, "add", 0) /* gemm_cast: a tensor of the output's shape and dtype added to the product (cuBLASLt's C) */
typedef enum {
#define X(e, s, isout) e,
	TG_ARGS(X)
#undef X
	ARG_COUNT
} ArgSlot;
#define ARGBIT(a) (1u << (a))

/* The op table: one row per op kind.
 *   template    its kernel template (NULL: a library call)
 *   family      OPF_ROW: a row kernel that computes the op and casts its output in one pass
 *               (the op and its quantize fused); OPF_CAST: a cast of its input (tile or row
 *               kernel); OPF_GEMM: a GEMM (cuBLASLt) whose output is cast in its epilogue;
 *               OPF_REDUCE: a backward op with a fixed-shape kernel and a reduction over rows (no variants)
 *   tol         how the checker judges its output against the reference: TOL_EXACT bit for bit,
 *               TOL_ULP within one unit of the output format on at most 1e-4 of the elements
 *               (a reduction or a transcendental), TOL_GEMM the GEMM bound (accumulation order)
 *   nvsrc       the value source (tg_codes.h TG_SRC_*) through which nvfp4_quantize.cu computes a row
 *               op's NVFP4 copies from its inputs (nvfp4_source); TG_SRC_TENSOR: none (its input is cast)
 *   required / optional operand slots
 *  enum              spelling          template             family    tol        nvsrc   required args / optional args */
#define TG_OPS(X) \
	X(OP_NORM_QUANTIZE, "norm_quantize", "norm_quantize.cu", OPF_ROW, TOL_ULP, TG_SRC_NORM, \
		ARGBIT(ARG_IN) | ARGBIT(ARG_GAMMA) | ARGBIT(ARG_OUT), \
		ARGBIT(ARG_BETA) | ARGBIT(ARG_RESIDUAL) | ARGBIT(ARG_RESIDUAL_OUT) | ARGBIT(ARG_RSIGMA_OUT) | ARGBIT(ARG_MU_OUT)) \
	X(OP_GLU_AMAX, "glu_amax", "glu_amax.cu", OPF_ROW, TOL_ULP, TG_SRC_GLU, ARGBIT(ARG_IN) | ARGBIT(ARG_OUT), 0) \
	X(OP_GEMM_CAST, "gemm_cast", NULL, OPF_GEMM, TOL_GEMM, TG_SRC_TENSOR, ARGBIT(ARG_A) | ARGBIT(ARG_B) | ARGBIT(ARG_OUT), \
		ARGBIT(ARG_BIAS) | ARGBIT(ARG_ADD)) \
	X(OP_CAST_TRANSPOSE, "cast_transpose", "cast_transpose.cu", OPF_CAST, TOL_EXACT, TG_SRC_TENSOR, \
		ARGBIT(ARG_IN) | ARGBIT(ARG_OUT), 0) \
	X(OP_QUANTIZE, "quantize", "cast_transpose.cu", OPF_CAST, TOL_EXACT, TG_SRC_TENSOR, ARGBIT(ARG_IN) | ARGBIT(ARG_OUT), 0) \
	X(OP_DGLU, "dglu", "dglu.cu", OPF_ROW, TOL_EXACT, TG_SRC_DGLU, ARGBIT(ARG_IN) | ARGBIT(ARG_GRAD) | ARGBIT(ARG_OUT), \
		ARGBIT(ARG_DBIAS_OUT)) \
	X(OP_DNORM, "dnorm", "dnorm.cu", OPF_REDUCE, TOL_EXACT, TG_SRC_TENSOR, \
		ARGBIT(ARG_IN) | ARGBIT(ARG_GRAD) | ARGBIT(ARG_GAMMA) | ARGBIT(ARG_RSIGMA) | ARGBIT(ARG_OUT), \
		ARGBIT(ARG_MU) | ARGBIT(ARG_GRAD_RESIDUAL) | ARGBIT(ARG_D_GAMMA) | ARGBIT(ARG_D_BETA)) \
	X(OP_DBIAS, "dbias", "dbias.cu", OPF_REDUCE, TOL_EXACT, TG_SRC_TENSOR, ARGBIT(ARG_IN) | ARGBIT(ARG_OUT), 0) \
	/* optimizer (derived from `optimizer:`, never written by hand): in = the weight, updated in place, \
	 * grad = its FP32 gradient; writes the weight's master, m and v components (adamw.cu) */ \
	X(OP_ADAMW, "adamw", "adamw.cu", OPF_REDUCE, TOL_EXACT, TG_SRC_TENSOR, ARGBIT(ARG_IN) | ARGBIT(ARG_GRAD), 0)
typedef enum { OPF_ROW, OPF_CAST, OPF_GEMM, OPF_REDUCE } OpFamily;
typedef enum { TOL_EXACT, TOL_ULP, TOL_GEMM } Tolerance;
typedef enum {
#define X(e, s, t, fam, tol, nvsrc, req, opt) e,
	TG_OPS(X)
#undef X
	OP_COUNT
} OpKind;

typedef enum { NORM_RMS, NORM_LAYER } NormKind;                        /* "rmsnorm" "layernorm" */
/*  enum (its value is the kernel code, pinned in util.c)   spelling   TG_ACT code */
#define TG_GLUS(X) \
	X(GLU_SWIGLU, "swiglu", TG_ACT_SWIGLU) X(GLU_GEGLU, "geglu", TG_ACT_GEGLU) X(GLU_REGLU, "reglu", TG_ACT_REGLU) \
	X(GLU_QGEGLU, "qgeglu", TG_ACT_QGEGLU) X(GLU_SREGLU, "sreglu", TG_ACT_SREGLU) \
	X(GLU_CLAMPED_SWIGLU, "clamped_swiglu", TG_ACT_CLAMPED_SWIGLU) \
	X(GLU_SILU, "silu", TG_ACT_SILU) X(GLU_GELU, "gelu", TG_ACT_GELU) X(GLU_RELU, "relu", TG_ACT_RELU) \
	X(GLU_QGELU, "qgelu", TG_ACT_QGELU) X(GLU_SRELU, "srelu", TG_ACT_SRELU)
typedef enum {
#define X(e, s, code) e,
	TG_GLUS(X)
#undef X
	GLU_COUNT
} GluKind;
typedef enum { PASS_FPROP, PASS_DGRAD, PASS_WGRAD } GemmPass;           /* "fprop" "dgrad" "wgrad" */

/* Which entry point runs an op and its kernels: tg_run the forward, tg_backward the
 * backward (the ops `backward: true` derives), tg_optimizer_step the optimizer's.
 * Hand-written spec ops are all forward. The planner never fuses across phases and
 * plans the kernels grouped by phase, in this order. */
typedef enum { PHASE_FORWARD, PHASE_BACKWARD, PHASE_OPTIMIZER, PHASE_COUNT } Phase;
#define PHASE_BIT(ph) (1u << (ph))
/* phase_name spells a phase as `tegen plan` prints it ("forward", "backward", "optimizer"). */
const char *phase_name(Phase ph);

/* Parameters of every op kind in one flat struct; each kind reads its own. */
typedef struct OpParams {
	NormKind norm; float eps; bool zero_centered_gamma;  /* norm_quantize */
	GluKind act; float alpha, limit;                     /* glu_amax (alpha, limit: clamped_swiglu) */
	GemmPass pass; bool accumulate; int fast_accum;      /* gemm_cast; fast_accum -1 = pass default;
	                                                      * accumulate also on dnorm (d_gamma, d_beta), dbias and
	                                                      * dglu (its dbias): derived for main_grad weights */
	DType out_dtype;                                     /* gemm_cast: bf16/fp16/fp32, or DT_NONE = quantized;
	                                                      * quantizing ops: the `precision` dtype, DT_NONE if quantized */
	bool rowwise, columnwise;                            /* quantized output copies */
	bool high_precision;                                 /* `precision: bf16`: op keeps its output unquantized */
	bool gelu;                                           /* gemm_cast: `epilogue: gelu` (fprop only) */
} OpParams;

/* The optimizer of a training layer (`optimizer:`, needs `backward: true`): AdamW with
 * decoupled weight decay, as torch.optim.AdamW. lr is the initial learning rate (the
 * kernels read the current one from the layer's optimizer state, see TG_OPTIM_* in
 * templates/tg_codes.h); the others are compiled into the kernels. */
typedef enum { OPTIM_NONE, OPTIM_ADAMW } OptimKind;
typedef struct Optimizer {
	OptimKind kind;
	float lr, beta1, beta2, eps, weight_decay;
	Loc loc;
} Optimizer;

/* ---- Spec: the YAML, typed, names not yet resolved ---- */
typedef struct SpecTensor {
	const char *name; Loc loc;
	int rank; const char *shape_src[TG_MAX_RANK]; Loc shape_loc[TG_MAX_RANK]; /* expressions, text */
	DType dtype; Loc dtype_loc;
	Role role; Loc role_loc;
	bool dtype_set, role_set;                           /* written explicitly (checked for intermediates) */
	bool main_grad; Loc main_grad_loc;                  /* `main_grad: true` (a weight, backward: true): its
	                                                     * derived gradient d_<name> (fp32) is accumulated into
	                                                     * the caller's buffer, not overwritten */
	DType grad_dtype; Loc grad_dtype_loc;               /* `grad_dtype: bf16|fp16|fp32` (a GEMM weight, backward:
	                                                     * true): its wgrad's output dtype; DT_NONE = fp32 */
} SpecTensor;

typedef struct SpecOp {
	OpKind kind; Loc loc;
	Phase phase;                                        /* PHASE_FORWARD unless derived */
	const char *arg[ARG_COUNT]; Loc arg_loc[ARG_COUNT]; /* tensor names, NULL if absent */
	OpParams p;
	Loc param_loc;                                      /* where a semantic param error points */
	Loc layout_loc, dtype_loc, precision_loc, accumulate_loc, epilogue_loc; /* line 0: not written */
} SpecOp;

#define RECIPE_NKEYS 10
typedef struct SpecOverride {
	const char *tensor; Loc loc; Recipe recipe; unsigned set;
	Loc keys[RECIPE_NKEYS];      /* where each key set explicitly was written (bit i of set) */
} SpecOverride;

typedef struct Spec {
	const char *file, *src;      /* name and whole text */
	const char *layer; Loc layer_loc;
	Dim *dims; int ndims;
	Recipe recipe; unsigned recipe_set; /* bit per Recipe field set explicitly (RECIPE_SET_*) */
	SpecOverride *overrides; int noverrides;
	SpecTensor *tensors; int ntensors;
	SpecOp *ops; int nops;
	const char **outputs; Loc *output_locs; int noutputs;
	const char **targets; Loc *target_locs; int ntargets;
	Loc recipe_keys[RECIPE_NKEYS]; Loc outputs_loc, targets_loc;
	bool backward; Loc backward_loc;  /* `backward: true`: derive the backward half (derive.c) */
	Optimizer optim;                  /* `optimizer:` (kind OPTIM_NONE: none) */
} Spec;
enum { RECIPE_SET_SCALING = 1, RECIPE_SET_FORMAT = 2, RECIPE_SET_HISTORY = 4, RECIPE_SET_ALGO = 8,
	RECIPE_SET_MARGIN = 16, RECIPE_SET_EPS = 32, RECIPE_SET_POW2 = 64, RECIPE_SET_NVFP4_2D = 128,
	RECIPE_SET_NVFP4_SR = 256, RECIPE_SET_NVFP4_RHT = 512 };

/* spell_suggest returns the candidate closest to word (edit distance <= 2), or NULL. */
const char *spell_suggest(const char *word, const char *const *cands, int n);
/* recipe_resolve returns the layer recipe with an override applied, every field defaulted. */
Recipe recipe_resolve(const Spec *s, const SpecOverride *o);

/* op_params_default: an op's parameters before its spec sets any (the parser's defaults,
 * also used for the ops `backward: true` derives). */
OpParams op_params_default(OpKind k);
/* spec_load parses YAML text (file names the text in messages). NULL on error, message in d->msg. */
Spec *spec_load(Arena *a, Diag *d, const char *file, const char *text, size_t len);

/* ---- Graph: the IR ---- */
typedef struct Arch { int sm; bool accel; } Arch;    /* sm_90a: {90, true} */

typedef struct Tensor {
	const char *name; Loc loc; int id;
	int rank; Extent shape[TG_MAX_RANK];
	DType dtype;          /* element type as stored (quantized: e4m3/e5m2/e2m1) */
	DType hp_dtype;       /* high-precision type it was quantized from (== dtype if not quantized) */
	Role role;
	Recipe recipe;        /* resolved; scaling NONE = high precision */
	bool rowwise, columnwise;  /* quantized copies that exist */
	int producer;         /* op id; -1 = layer input */
	bool output;
	int state_slot;       /* per-tensor recipes: index into the recipe state; -1 none */
	int state_slot_t;     /* nvfp4_rht with a columnwise copy: that copy's own slot (S_enc, amax); -1 none */
} Tensor;

typedef struct Op {
	OpKind kind; Loc loc; int id;
	Phase phase;          /* the spec op's; ops are ordered by phase, then topologically */
	int arg[ARG_COUNT];   /* tensor ids, -1 absent */
	OpParams p;
	const char *emulated; /* non-NULL: why this op runs emulated on a target (e.g. MXFP8 GEMM on sm_90) */
} Op;

typedef struct Graph {
	const char *file, *layer;
	Dim *dims; int ndims;
	Tensor *tensors; int ntensors;
	Op *ops; int nops;    /* in a valid topological order */
	Arch *targets; int ntargets;
	int nstate;           /* per-tensor scaled tensors (state slots) */
	int history;          /* longest delayed-scaling history among them (0: none) */
	Optimizer optim;      /* the spec's optimizer (kind OPTIM_NONE: none) */
} Graph;

/* ir_build resolves and validates a Spec. NULL on error, message in d->msg.
 * default_arch is used when the spec names no targets (the GPU present, else sm_90a). */
Graph *ir_build(Arena *a, Diag *d, const Spec *s, Arch default_arch);
/* spec_derive_optimizer returns s (already derived by spec_derive_backward) with one
 * adamw op appended per weight whose FP32 gradient the backward writes (derive_optim.c).
 * NULL on error, message in d->msg. */
Spec *spec_derive_optimizer(Arena *a, Diag *d, Spec *s, Arch default_arch);
/* spec_derive_backward checks the forward layer of s (backward: true) and returns s
 * with its backward ops appended (derive.c: the adjoint of each op, output gradients
 * d_<out> as inputs, the forward's extra saved tensors and columnwise copies).
 * NULL on error (the forward's, or what is not derived yet), message in d->msg. */
Spec *spec_derive_backward(Arena *a, Diag *d, const Spec *s, Arch default_arch);
/* op_casts_trained_weight: op is the quantize (or cast_transpose) of a weight an adamw op
 * updates; its copies are remade by the optimizer step after the update, not by every
 * forward (the runtime runs it in tg_run only while the copies are stale). */
bool op_casts_trained_weight(const Graph *g, const Op *op);
/* ir_print writes the graph as deterministic text, one op per line. */
void ir_print(const Graph *g, Buf *out);
/* extent_str formats an extent ("tokens", "2*ffn" folded to a number, "tokens+1"). */
const char *extent_str(Arena *a, const Graph *g, Extent e);
/* extent_operand is extent_str in parentheses where it is a sum (tokens-1 -> (tokens-1)), for use inside an expression. */
const char *extent_operand(Arena *a, const Graph *g, Extent e);
/* arch_parse reads "sm_90a" / "sm_100a"; false if malformed. arch_str prints one. */
bool arch_parse(const char *s, Arch *out);
const char *arch_str(Arena *a, Arch arch);
/* arch_known: s is a target tegen knows (sm_80 ... sm_120a, the list in `targets` errors). */
bool arch_known(const char *s);

/* Names of enum values as spelled in specs. */
const char *dtype_name(DType t);
int dtype_bits(DType t);
/* dtype_code is t's code in kernels (TG_DTYPE_*: fp32, bf16, fp16), -1 for other types. */
int dtype_code(DType t);
/* gemm_hp_dtype: what a GEMM with operand a computes in when cuBLASLt runs it in high precision (its output is
 * that dtype or fp32): a's dtype when a is not low precision (lowp false), bf16 for an MXFP8 or NVFP4 operand
 * (emulated as a BF16 GEMM), DT_NONE for a native FP8 one. */
DType gemm_hp_dtype(const Tensor *a, bool lowp);
const char *scaling_name(Scaling s);
const char *op_name(OpKind k);
/* op_template names the template file of an op kind (NULL: a library call). */
const char *op_template(OpKind k);
/* op_family: OPF_ROW (op and cast in one row kernel), OPF_CAST or OPF_GEMM. */
OpFamily op_family(OpKind k);
/* op_writes_hp: the row kernel of op (norm, GLU, dglu) writes its FP32 value to component hp and
 * separate kernels quantize it (unfused): an NVFP4 output that neither the op's own kernel (a norm's
 * or GLU's rowwise 1D copy) nor nvfp4_quantize.cu from the op's inputs (nvfp4_source) writes, or a block1x128
 * output with a columnwise copy from dglu with a fused dbias or a half (C) not a multiple of 128 (a
 * norm: the row kernel, then norm_colwise.cu; a GLU and the other dglus write both copies, through
 * the block tile paths of glu_amax.cu and dglu.cu). */
bool op_writes_hp(const Graph *g, const Op *op);
/* nvfp4_source: the values nvfp4_quantize.cu's passes read for op's NVFP4 output (its TG_SRC):
 * NVSRC_TENSOR, a tensor (the op's input, or the FP32 value an unfused op wrote), or the op's
 * own values computed again from its inputs (its nvsrc column of TG_OPS): a norm's, GLU's or dglu's copies other than the
 * rowwise 1D copy of a norm or GLU (its own kernel writes that), except a dglu with a fused dbias
 * or with C % 16 != 0 (those write FP32 first: op_writes_hp). */
typedef enum { NVSRC_TENSOR = TG_SRC_TENSOR, NVSRC_GLU = TG_SRC_GLU, NVSRC_DGLU = TG_SRC_DGLU, NVSRC_NORM = TG_SRC_NORM }
	NvfpSource;
NvfpSource nvfp4_source(const Graph *g, const Op *op);
/* dglu_block_tile_fits: dglu.cu's block tile path writes both 1x128 copies of a d_h [.., 2C] (or
 * [.., C] without a gate partner) for activation width c = C: 128-column tiles (C % 128 == 0, so no
 * block straddles the halves), and no dbias is fused. */
bool dglu_block_tile_fits(long c, bool dbias);
/* dglu_staged: dglu.cu's staged path writes op's d_h (its heuristic variant t256v8r32): dglu_staged_kind, and
 * C % 8 == 0 (MXFP8: C % 32; any such C: partial tiles are masked). The other tile-path dglus step 64 columns of
 * a half, or 32 or 16 where 64 do not divide C (plan_launch.c's pl_row_launch). dglu_staged_kind: a per-tensor FP8 (delayed or current) or MXFP8 d_h with a columnwise copy, no fused
 * dbias, h and d_act bf16 or fp16 (the width rule aside: ir.c's check of C). */
bool dglu_staged(const Graph *g, const Op *op);
bool dglu_staged_kind(const Graph *g, const Op *op);
/* op_tolerance is how the checker judges k's outputs against the reference. */
Tolerance op_tolerance(OpKind k);
const char *arg_name(ArgSlot s);
const char *glu_name(GluKind k);
/* glu_halves: 2 for a gated activation (its input [.., 2C]: gate half, then linear), 1 for silu, gelu,
 * relu, qgelu, srelu (input and output [.., C]). */
int glu_halves(GluKind k);
bool arg_is_output(ArgSlot s);
unsigned op_required_args(OpKind k);
unsigned op_optional_args(OpKind k);

/* ---- Plan: kernels and library calls ---- */
typedef enum { KERNEL_GENERATED, KERNEL_GEMM } KernelKind;

/* What a kernel pointer slot is bound to: a component of a tensor, or the
 * layer's recipe state. The runtime resolves these to device pointers. */
#define TG_COMPONENTS(X) \
	X(COMP_DATA, "data") X(COMP_DATA_T, "data_t") X(COMP_SCALE, "scale") X(COMP_SCALE_INV, "scale_inv") \
	X(COMP_SCALE_INV_T, "scale_inv_t") X(COMP_AMAX, "amax") X(COMP_STATE, "state") X(COMP_STATE_PARAMS, "state_params") \
	X(COMP_DEQ, "deq") X(COMP_DEQ_T, "deq_t") /* BF16 copies of data / data_t for emulated GEMMs */ \
	X(COMP_SCALE_SW, "scale_sw") X(COMP_SCALE_SW_T, "scale_sw_t") /* MXFP8/NVFP4 scales in the GEMM-swizzled layout */ \
	X(COMP_HP, "hp") /* FP32 value of an op whose NVFP4 cast runs in separate kernels (unfused) */ \
	X(COMP_ALPHA, "alpha") /* native NVFP4 GEMM output: float {alpha, beta} on the device, read by cuBLASLt */ \
	X(COMP_SCALE_T, "scale_t") X(COMP_AMAX_T, "amax_t") /* nvfp4_rht: S_enc and global amax of the transformed columnwise copy */ \
	X(COMP_BIAS, "bias") /* a GEMM bias converted to the dtype cuBLASLt's epilogue reads (convert.cu) */ \
	X(COMP_PART, "part") X(COMP_PART_B, "part_b") /* FP32 [ceil(rows/32)][cols] chunk partials of t's column sums (dreduce.cu) */ \
	/* a weight the optimizer updates: its FP32 master copy and AdamW moments (layer-owned, t's shape) */ \
	X(COMP_MASTER, "master") X(COMP_MOM1, "m") X(COMP_MOM2, "v") \
	X(COMP_OPTIM, "optim") /* the layer's optimizer state (tensor -1): float {lr, step (uint32), beta1^step, beta2^step} */ \
	/* a norm's row statistics for norm_colwise.cu when the spec saves none: FP32 [rows] */ \
	X(COMP_RSIGMA, "rsigma") X(COMP_MU, "mu")
typedef enum {
#define X(e, s) e,
	TG_COMPONENTS(X)
#undef X
	COMP_COUNT
} Component;

/* tensor_comp_in_state: component c of t lives in the layer's recipe state (per-tensor
 * scale, scale_inv, amax; NVFP4: S_enc as the scale and the global amax). */
bool tensor_comp_in_state(const Tensor *t, Component c);
/* tensor_rht_t: t's columnwise copy is quantized after the random Hadamard
 * transform along its rows (NVFP4 with nvfp4_rht and a columnwise copy). */
bool tensor_rht_t(const Tensor *t);
/* tensor_s_enc_comp names the component holding the S_enc of an NVFP4 copy
 * (COMP_DATA or COMP_DATA_T, or their BF16 copies COMP_DEQ/COMP_DEQ_T):
 * COMP_SCALE_T for a transformed columnwise copy, else COMP_SCALE. */
Component tensor_s_enc_comp(const Tensor *t, Component copy);
/* tensor_sr_seed is the Philox key of t's stochastic rounding (NVFP4 sr): a hash of
 * the layer and tensor names, so kernels and the reference agree. */
uint64_t tensor_sr_seed(const Graph *g, const Tensor *t);

typedef struct Binding { int slot; int tensor; Component comp; } Binding; /* TgParams.p[slot] = tensor.comp */
typedef struct Slot { const char *name, *value; } Slot;

#define TG_MAX_SLOTS 48
#define TG_MAX_BINDINGS 16

/* Which scaling pass a generated kernel is (current scaling runs two). */
typedef enum { PASS_SINGLE, PASS_AMAX, PASS_CAST } ScalePass;

typedef struct GemmCall {
	int op;               /* the gemm_cast op */
	Extent m, n, k;
	int a, b, d, bias;    /* tensor ids (bias -1) */
	int add;              /* the tensor added to the product (cuBLASLt's C, D = A x B + add), -1 none */
	Component a_comp, b_comp; /* COMP_DATA or COMP_DATA_T */
	Scaling scaling;      /* operands' scaling (NONE: high precision) */
	DType a_dtype, b_dtype, d_dtype;
	bool fast_accum, accumulate, gelu;
	bool emulated;        /* block-scaled operands dequantized to BF16 by earlier kernels (a_comp/b_comp = COMP_DEQ*) */
	Component a_senc, b_senc; /* NVFP4: the component holding each operand copy's S_enc (scale, or scale_t) */
	Component bias_comp;  /* COMP_DATA, or COMP_BIAS when the bias is converted first (bias_dtype_for) */
	Component d_comp;     /* COMP_DATA, or COMP_HP: an fp16 output of MXFP8/NVFP4 operands (cuBLASLt writes those
	                       * as bf16 or fp32) goes to an FP32 buffer (d_dtype fp32), then convert.cu rounds it */
	bool a_trans, b_trans; /* high-precision dgrad/wgrad: the operand's data read transposed (no columnwise copy) */
	int glu;              /* the glu_amax op fused as the generated kernel's epilogue (gemm_fp8.cu TG_EPI 1); -1 none */
	int dglu;             /* the dglu op fused as the generated kernel's epilogue (TG_EPI 2: D is its d_act); -1 none */
	bool keep_d;          /* with glu or dglu: D (the op's input) is also written, as another op or the caller reads it */
} GemmCall;

#define GRID_UNCAPPED (-1) /* Kernel.grid_cap: no cap on grid.x */

typedef struct Kernel {
	const char *name;     /* unique in the layer, e.g. "k0_norm_quantize"; entry = layer + "_" + name */
	KernelKind kind;
	Phase phase;          /* its ops' phase (the recipe_update kernel: PHASE_FORWARD, run by tg_step) */
	const char *tmpl;     /* template file (generated kernels) */
	int ops[4]; int nops; /* ops fused into it */
	ScalePass pass;
	Slot slots[TG_MAX_SLOTS]; int nslots;
	Binding bind[TG_MAX_BINDINGS]; int nbind;
	Extent rows;          /* n[0] at launch */
	long cols;            /* n[1] at launch */
	int threads;          /* block size */
	int grid_rows;        /* grid.x = ceil(rows / grid_rows) * ceil(cols / grid_cols), 1D, capped */
	int grid_cap;         /* > 0: grid.x capped at grid_cap CTAs a SM instead of the runtime's default 32;
	                         GRID_UNCAPPED: a CTA a work item however many (TEGEN_GRID_CAP overrides all):
	                         kernels whose CTAs each take one short work item */
	long grid_cols;       /* 0: no column tiles */
	int rows_chunk;       /* > 0: n[0] = ceil(rows / rows_chunk) (dreduce: the number of chunk partials) */
	const char *variant;  /* tile-shape variant name */
	const char *choice;   /* "tuned" or "heuristic" */
	const char *note;     /* why it is planned this way (shown by `tegen plan`) */
	const char *gen_why_not; /* KERNEL_GEMM: why it has no generated kernel (tmpl NULL), for `tegen plan` */
	int epilogue_of;      /* >= 0: this kernel's op also runs as the epilogue of GEMM kernel epilogue_of (gemm.glu);
	                         the runtime runs it only where that GEMM ran on cuBLASLt; -1 otherwise */
	int smem_dynamic;     /* bytes of dynamic shared memory at launch (dglu.cu's TG_DB_STAGE buffer); 0 none */
	bool persistent;      /* grid.x at most the CTAs the GPU holds at once (the driver's occupancy of the function at
	                         threads and smem_dynamic, times the SMs): each CTA grid-strides over many work items */
	bool pdl;             /* launched with programmatic stream serialization (sm_90+): its template waits for the
	                         previous kernel (griddepcontrol.wait) before reading, so its launch overlaps that one's end */
	bool cast_in_update;  /* a trained weight's cast that its fused update (adamw_cast.cu) also does: the
	                         optimizer step skips it; tg_run still runs it while the copies are stale */
	GemmCall gemm;        /* KERNEL_GEMM */
} Kernel;

typedef struct Plan {
	const Graph *g;
	Kernel *kernels; int nkernels;
	int ndelayed;         /* state slots [0, ndelayed) are delayed scaling, the rest current */
	bool needs_update;    /* a recipe_update kernel exists (delayed scaling) */
	int update_kernel;    /* its index, -1 none (run by the step call, not the layer run) */
} Plan;

/* plan_build fuses the graph's ops into kernels and chooses tile shapes. NULL on error. */
Plan *plan_build(Arena *a, Diag *d, const Graph *g);
/* plan_print writes the kernels, the ops each fuses and the launch shape; a plan with more
 * than the forward phase gets a "# PHASE" line before each phase's kernels. */
void plan_print(const Plan *p, Buf *out);
/* plan_has_phase: some kernel of p (the recipe_update kernel aside) runs in phase ph. */
bool plan_has_phase(const Plan *p, Phase ph);
/* plan_slot looks up a slot value of a kernel (NULL if absent). */
const char *plan_slot(const Kernel *k, const char *name);
/* bias_dtype_for: the bias dtype cuBLASLt's epilogue reads for a GEMM of A dtype a and output dtype d (BF16 for FP8
 * or FP4 inputs, FP16 with an FP16 output; the output's dtype for high-precision inputs): the one copy of the rule,
 * used by the planner and by the runtime's GEMM (gemm_desc_bias_dtype). */
DType bias_dtype_for(DType a, DType d);

/* ---- tile-shape variants and tuned choices (plan.c, tune.c) ---- */
/* A tile-shape variant: the launch slots of a template. Row templates
 * (norm_quantize, glu_amax) use threads, vec, rows_per_cta; cast_transpose
 * uses threads, tile_rows, tile_cols; the other fields are 0. */
typedef struct PlanVariant { const char *name; int threads, vec, rows_per_cta, tile_rows, tile_cols; } PlanVariant;
#define PLAN_MAX_VARIANTS 32

/* What plan_build_opts needs to use the tuning DB; gen/ stays free of CUDA, so
 * the caller (runtime, CLI) says which GPU this is. Any field NULL/0: heuristic. */
typedef struct PlanOptions {
	const char *tuning_file;  /* the DB (cache dir/tuning/v1.txt); NULL: heuristic only */
	const char *gpu;          /* this GPU's name (cuDeviceGetName); NULL: no GPU, heuristic only */
	int sms;                  /* its SM count */
	int cuda;                 /* CUDA driver version (cuDriverGetVersion, e.g. 13000) */
	const char *nvrtc;        /* NVRTC version, "13.0" */
	long tokens;              /* every dynamic dim's value, for the row bucket; <= 0: unknown,
	                           * use the largest bucket measured for the kernel on this GPU */
	bool hp_values;           /* every quantizing norm, GLU and dglu writes its FP32 value (component
	                           * hp) and casts it unfused, where the cast kernel takes the row
	                           * (tegen numerics reads the values the copies came from) */
} PlanOptions;

/* plan_build_opts is plan_build taking tuned variants from o's DB where it has
 * one for (kernel signature, row bucket, this GPU), else the heuristic's;
 * Kernel.choice says "tuned" or "heuristic". o NULL = plan_build. */
Plan *plan_build_opts(Arena *a, Diag *d, const Graph *g, const PlanOptions *o);
/* plan_variants lists the legal tile-shape variants of a kernel (the template's
 * compile-time constraints hold), its current one first; 0: not tunable. */
int plan_variants(const Kernel *k, PlanVariant *out, int max);
/* plan_apply_variant re-plans kernel k (a copy is fine) with variant v: launch
 * slots, threads, grid; false (k unchanged or partly changed) if v is illegal for k. */
bool plan_apply_variant(Arena *a, Kernel *k, const PlanVariant *v);
/* plan_signature names what a kernel computes: template (+ hash of its text)
 * and every slot but TG_KERNEL and the launch slots; NULL if not tunable. */
const char *plan_signature(Arena *a, const Kernel *k);
/* plan_bucket is the kernel's row count at `tokens`, rounded up to a power of
 * two (constant rows: from the shape); 0 if it depends on tokens and tokens <= 0. */
long plan_bucket(const Kernel *k, long tokens);

/* The tuning DB: one text file of measurements, one line each (see tune.c). */
typedef struct TuneEntry {
	const char *sig, *variant, *gpu, *nvrtc;
	long bucket;
	int sms, cuda;
	double us;                /* median microseconds */
} TuneEntry;
typedef struct TuneDb { TuneEntry *e; int n, cap; int malformed; } TuneDb;
/* tunedb_parse adds the well-formed lines of text to db (malformed ones are counted, skipped). */
void tunedb_parse(Arena *a, TuneDb *db, const char *text, size_t len);
/* tunedb_load reads a DB file; NULL if it cannot be read (no DB yet). */
TuneDb *tunedb_load(Arena *a, const char *path);
/* tunedb_line formats one entry as a DB line (with its checksum and newline). */
char *tunedb_line(Arena *a, const TuneEntry *e);
/* tunedb_append adds text (whole lines) to the DB file with one O_APPEND write,
 * creating the file and its directory; 0, or -1 with a message in err. */
int tunedb_append(const char *path, const char *text, char *err, size_t errlen);
/* tunedb_pick returns the fastest of the legal variants measured for (sig,
 * bucket) on o's GPU (name, SM count, driver and NVRTC version all equal);
 * bucket 0: the largest bucket measured. NULL: none. *bucket_used gets the bucket. */
const PlanVariant *tunedb_pick(const TuneDb *db, const PlanOptions *o, const char *sig, long bucket,
	const PlanVariant *legal, int nlegal, long *bucket_used);

/* ---- emit ---- */
/* emit_kernel returns the CUDA source of one generated kernel (deterministic). NULL on error. */
char *emit_kernel(Arena *a, Diag *d, const Plan *p, const Kernel *k);
/* emit_template fills template tmpl's slots from slots[nslots]; origin and what go in its header
 * comment ("Generated by tegen from ORIGIN", "// WHAT"). NULL (d has the error) on a missing value. */
char *emit_template(Arena *a, Diag *d, const char *tmpl, const Slot *slots, int nslots, const char *origin,
	const char *what);
/* The longest kernel entry name the runtime compiles (runtime/jit.c; its disk cache keeps names of 128 bytes). */
#define TG_ENTRY_MAX 120
/* emit_entry names the kernel's extern "C" entry symbol (at most TG_ENTRY_MAX characters). */
const char *emit_entry(Arena *a, const Plan *p, const Kernel *k);
/* emit_headers lists the headers templates include (name, text), for NVRTC. */
int emit_headers(const char *const **names, const char *const **texts);
/* template_text finds an embedded template or header by file name (NULL if none). */
const char *template_text(const char *name);

#endif
