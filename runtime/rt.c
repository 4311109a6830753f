/* rt.c: the runtime behind tegen.h: contexts, layers, bindings, launches.
 *
 * A layer is a planned spec plus its device state: kernels (JIT-compiled
 * through jit.c, loaded once per context), buffers for every intermediate the
 * user did not bind, and the recipe state buffer (scales, scale_invs, amax
 * histories) laid out as TgStateLayout says. tg_run launches the plan's
 * forward kernels and cuBLASLt calls in order on one stream, tg_backward its
 * backward ones (Kernel.phase); buffers are sized for every phase at once.
 *
 * Guarantees: never prints or exits; every failure returns a status and a
 * message for tg_last_error(). No host synchronization in tg_run/tg_backward/tg_step and
 * no allocation once buffers for the current size exist, so runs can be
 * captured into CUDA graphs; compiling, loading or allocating while a stream
 * captures is refused with TG_ERR_CAPTURING. */
#include "tegen.h"

#include "cache.h"
#include "cold_time.h"
#include "cudrv.h"
#include "gemm.h"
#include "gemm_gen.h"
#include "gemm_pad.h"
#include "gen.h"
#include "jit.h"
#include "layout.h"
#include "rt_optim.h"
#include "nccl.h"
#include "pipeline.h"
#include "rt_internal.h"
#include "tg_kernel.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static __thread char last_error[4096];

const char *tg_last_error(void) { return last_error; }
const char *tg_version(void) { return TG_VERSION; }

static TgStatus fail(TgStatus st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static TgStatus fail(TgStatus st, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(last_error, sizeof last_error, fmt, ap);
	va_end(ap);
	return st;
}

#define CU(call, what) \
	do { \
		CUresult r_ = (call); \
		if (r_ != 0) \
			return fail(TG_ERR_CUDA, "%s: %s", what, cudrv_errstr(r_)); \
	} while (0)

/* ---- context ---- */
typedef struct LoadedModule { char key[65]; CUmodule mod; } LoadedModule;

struct TgContext {
	CUcontext cuctx;
	CUdevice dev;
	int cc, sms;
	char arch[16], name[128];
	int driver;          /* cuDriverGetVersion */
	char tuning[4096];   /* the tuning DB file; "" = none (heuristic variants only) */
	bool hp_values;      /* plan layers with PlanOptions.hp_values (tegen numerics) */
	JitCache *jit;
	GemmCtx *gemm;
	bool gemm_gen;       /* per-tensor FP8 GEMMs run the generated kernel (sm_90a; TEGEN_GEMM_GEN=0: cuBLASLt) */
	bool gemm_gen_all;   /* TEGEN_GEMM_GEN=2 (tests): also where gemm_gen_pays says cuBLASLt is as fast */
	bool pdl;            /* Kernel.pdl kernels launch with programmatic stream serialization (sm_90+, a driver
	                        with cuLaunchKernelEx; TEGEN_NO_PDL=1: plainly) */
	int grid_cap;        /* TEGEN_GRID_CAP=N (1-1024; 0 when not given): every generated kernel's grid.x is at most N
	                        CTAs a SM, for grid studies; else the kernel's own Kernel.grid_cap, or 32. The templates
	                        grid-stride, so any cap is correct */
	TgOptions opts;
	pthread_mutex_t lock;
	LoadedModule *mods;
	int nmods, capmods;
	CUfunction cold_read; /* cold_time.h's flush kernel and its buffer (2 x L2), made at the first timing */
	CUdeviceptr cold_buf;
	size_t cold_bytes;
};

static void ctx_log(TgContext *c, const char *msg)
{
	if (c->opts.log)
		c->opts.log(c->opts.log_user, msg);
}

TgStatus tg_context_create(const TgOptions *opts, TgContext **out)
{
	char why[256];
	*out = NULL;
	if (cudrv_load(why, sizeof why))
		return fail(TG_ERR_CUDA, "%s", why);
	TgContext *c = calloc(1, sizeof *c);
	if (!c)
		return fail(TG_ERR_NOMEM, "out of host memory");
	if (opts)
		c->opts = *opts;
	pthread_mutex_init(&c->lock, NULL);
	TgStatus st = TG_ERR_CUDA;
	if (cu.cuCtxGetCurrent(&c->cuctx) != 0 || !c->cuctx) {
		if (cu.cuDeviceGet(&c->dev, 0) || cu.cuDevicePrimaryCtxRetain(&c->cuctx, c->dev) ||
			cu.cuCtxSetCurrent(c->cuctx)) {
			fail(st, "cannot make a CUDA context on device 0");
			goto bad;
		}
	}
	if (cu.cuCtxGetDevice(&c->dev)) {
		fail(st, "cuCtxGetDevice failed");
		goto bad;
	}
	int maj = 0, min = 0;
	cu.cuDeviceGetAttribute(&maj, TG_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, c->dev);
	cu.cuDeviceGetAttribute(&min, TG_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, c->dev);
	cu.cuDeviceGetAttribute(&c->sms, TG_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, c->dev);
	cu.cuDeviceGetName(c->name, sizeof c->name, c->dev);
	c->cc = maj * 10 + min;
	snprintf(c->arch, sizeof c->arch, "sm_%d%s", c->cc, c->cc >= 90 ? "a" : "");
	const char *gen = getenv("TEGEN_GEMM_GEN");
	c->gemm_gen = c->cc == 90 && !(gen && !strcmp(gen, "0"));
	c->gemm_gen_all = c->gemm_gen && gen && !strcmp(gen, "2");
	c->pdl = c->cc >= 90 && cu.cuLaunchKernelEx && !getenv("TEGEN_NO_PDL");
	char warn[512] = "";
	c->jit = jit_cache_open(c->opts.cache_dir, c->opts.frozen, warn, sizeof warn);
	if (!c->jit) {
		st = fail(TG_ERR_NOMEM, "cannot open the kernel cache");
		goto bad;
	}
	if (warn[0])
		ctx_log(c, warn);
	const char *cap = getenv("TEGEN_GRID_CAP");
	char *end = NULL;
	const long capv = cap ? strtol(cap, &end, 10) : 0;
	const bool cap_ok = cap && end != cap && !*end && capv >= 1 && capv <= 1024;
	c->grid_cap = cap_ok ? (int)capv : 0;
	if (cap && !cap_ok) { /* a grid study with a typo must not run the default silently */
		snprintf(warn, sizeof warn, "TEGEN_GRID_CAP=%.64s ignored (an integer 1-1024 expected): each kernel's own cap (32 CTAs a SM by default)", cap);
		ctx_log(c, warn);
	}
	cu.cuDriverGetVersion(&c->driver);
	char dir[4096];
	if (cache_dir_resolve(c->opts.cache_dir, dir, sizeof dir) || cache_tuning_path(dir, c->tuning, sizeof c->tuning))
		c->tuning[0] = 0;
	char err[512];
	c->gemm = gemm_ctx_create(0, err, sizeof err);
	if (!c->gemm) {
		fail(TG_ERR_CUDA, "cuBLASLt: %s", err);
		goto bad;
	}
	if (!c->opts.frozen && c->tuning[0]) { /* GEMM algorithm choices live beside the tuning DB */
		char gpath[4200];
		snprintf(gpath, sizeof gpath, "%s", c->tuning);
		char *slash = strrchr(gpath, '/');
		if (slash) {
			*slash = 0;
			mkdir(gpath, 0777);
			strcat(gpath, "/gemm-v1.txt");
			gemm_ctx_set_algo_file(c->gemm, gpath);
		}
	}
	*out = c;
	return TG_OK;
bad:
	tg_context_destroy(c);
	return st;
}

void tg_context_destroy(TgContext *c)
{
	if (!c)
		return;
	for (int i = 0; i < c->nmods; i++)
		cu.cuModuleUnload(c->mods[i].mod);
	free(c->mods);
	gemm_ctx_destroy(c->gemm);
	if (c->cold_buf)
		cu.cuMemFree_v2(c->cold_buf);
	if (c->jit)
		jit_cache_close(c->jit);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

const char *tg_context_arch(const TgContext *c) { return c->arch; }

static int stream_capturing(CUstream s)
{
	int status = TG_CU_STREAM_CAPTURE_STATUS_NONE;
	if (cu.cuStreamIsCapturing(s, &status) != 0)
		return 0;
	return status != TG_CU_STREAM_CAPTURE_STATUS_NONE;
}

/* ---- layers ---- */
typedef struct TensorRt {
	CUdeviceptr ptr[COMP_COUNT];   /* resolved device pointers for this run */
	CUdeviceptr owned[COMP_COUNT]; /* runtime-owned buffers */
	size_t cap[COMP_COUNT];        /* their sizes */
	size_t need[COMP_COUNT];       /* bytes this run needs */
	CUdeviceptr user;              /* user-bound data, 0 = none */
	unsigned bind_phases;          /* PHASE_BIT of each phase that needs the caller's buffer: a layer input it
	                                * reads, or a weight gradient it accumulates into (main_grad) */
	int rank;
	long long shape[TG_MAX_RANK];
} TensorRt;

struct TgLayer {
	TgContext *ctx;
	Arena *arena;
	Diag diag;
	const Graph *g;
	Plan *plan;
	char *text;
	JitResult *jit;      /* per kernel (generated ones) */
	CUfunction *fn;
	int *resident;            /* per kernel: a persistent kernel's CTAs a SM (the driver's occupancy), else 0 */
	GemmGenTile *gen_tile;    /* per kernel: a generated GEMM's tile, parsed from its variant at load */
	bool *epilogue_ran;       /* per kernel: this run's launch of a GEMM kernel did its GLU epilogue */
	signed char *gen_ran;     /* per GEMM kernel: its last launch ran the generated kernel (1) or cuBLASLt (0); -1 none yet */
	bool keep_intermediates;  /* GEMMs with an epilogue also write D (tg_layer_keep_intermediates) */
	int compiled, loaded;
	TensorRt *t;
	long *dim;           /* resolved dims for this run */
	CUdeviceptr state, state_params;
	size_t state_floats;
	/* current-scaling and NVFP4 amaxes each phase clears before its kernels: runs of state slots */
	struct AmaxRun { int phase; size_t first, count; } *zero_amax; int nzero_amax;
	long tokens;         /* the token count the tile variants are planned for (0: unknown) */
	unsigned long long steps; /* tg_step calls so far: every launch's n[3], the NVFP4 SR offset */
	CUdeviceptr pad; size_t pad_cap; /* scratch for GEMMs on zero-padded copies (gemm_pad.h) */
	CUfunction pad_copy;              /* their operand copy kernel (gemm_pad_copy_src), loaded with pad (NULL: the driver's copies) */
	CUdeviceptr optim;   /* the optimizer state (optim.h), 0: the layer has no optimizer */
	int ran;             /* a tg_run has launched (the optimizer step reads its gradients) */
	int weights_stale;   /* the trained weights' quantized copies do not match the bound weights */
	bool cache_weights;  /* tg_layer_cache_weights: tg_run casts the weights only while stale */
	void *comm;          /* NCCL communicator the amaxes are reduced over (tg_layer_set_comm), NULL: none */
	unsigned reduce;     /* TG_REDUCE_* bits: which amaxes */
	CUdeviceptr *pending; int npending, cap_pending; /* amaxes the last amax passes wrote, not yet reduced */
};

void tg_context_plan_options(const TgContext *c, long tokens, PlanOptions *o)
{
	*o = (PlanOptions){c->tuning[0] ? c->tuning : NULL, c->name, c->sms, c->driver, jit_nvrtc_version(c->jit), tokens,
		c->hp_values};
}

void tg_context_set_hp_values(TgContext *c, bool on) { c->hp_values = on; }

void tg_context_set_tuning_file(TgContext *c, const char *path)
{
	snprintf(c->tuning, sizeof c->tuning, "%s", path ? path : "");
}

struct JitCache *tg_context_jit(TgContext *c) { return c->jit; }

TgStatus tg_layer_create(TgContext *c, const char *name, const char *text, size_t len, TgLayer **out)
{
	*out = NULL;
	if (!c || !text)
		return fail(TG_ERR_ARG, "tg_layer_create: NULL argument");
	TgLayer *l = calloc(1, sizeof *l);
	if (!l)
		return fail(TG_ERR_NOMEM, "out of host memory");
	l->ctx = c;
	l->arena = arena_new();
	l->text = arena_strndup(l->arena, text, len);
	const char *file = arena_strdup(l->arena, name ? name : "<spec>");
	l->diag.file = file;
	l->diag.src = l->text;
	PlanOptions po;
	tg_context_plan_options(c, 0, &po); /* tokens not known yet: tg_layer_set_tokens re-plans */
	/* the runtime compiles for the GPU it runs on, whatever the spec targets */
	Plan *p = pipeline_plan(l->arena, &l->diag, file, l->text, len, (Arch){c->cc, c->cc >= 90}, true, &po);
	if (!p) {
		fail(TG_ERR_SPEC, "%s", l->diag.msg);
		tg_layer_destroy(l);
		return TG_ERR_SPEC;
	}
	const Graph *g = l->g = p->g;
	l->plan = p;
	l->t = arena_alloc(l->arena, sizeof *l->t * (size_t)(g->ntensors ? g->ntensors : 1));
	l->dim = arena_alloc(l->arena, sizeof *l->dim * (size_t)(g->ndims ? g->ndims : 1));
	l->jit = arena_alloc(l->arena, sizeof *l->jit * (size_t)(p->nkernels ? p->nkernels : 1));
	l->fn = arena_alloc(l->arena, sizeof *l->fn * (size_t)(p->nkernels ? p->nkernels : 1));
	l->resident = arena_alloc(l->arena, sizeof *l->resident * (size_t)(p->nkernels ? p->nkernels : 1));
	l->gen_tile = arena_alloc(l->arena, sizeof *l->gen_tile * (size_t)(p->nkernels ? p->nkernels : 1));
	l->epilogue_ran = arena_alloc(l->arena, sizeof *l->epilogue_ran * (size_t)(p->nkernels ? p->nkernels : 1));
	l->gen_ran = arena_alloc(l->arena, (size_t)(p->nkernels ? p->nkernels : 1));
	memset(l->gen_ran, -1, (size_t)(p->nkernels ? p->nkernels : 1));
	*out = l;
	return TG_OK;
}

TgStatus tg_layer_set_tokens(TgLayer *l, long long tokens)
{
	if (!l || tokens < 0)
		return fail(TG_ERR_ARG, "tg_layer_set_tokens: NULL layer or negative tokens");
	if (l->compiled)
		return fail(TG_ERR_ARG, "tg_layer_set_tokens: layer %s is already compiled; call it before tg_layer_compile/load",
			l->g->layer);
	PlanOptions po;
	tg_context_plan_options(l->ctx, (long)tokens, &po);
	Plan *p = plan_build_opts(l->arena, &l->diag, l->g, &po);
	if (!p)
		return fail(TG_ERR_SPEC, "%s", l->diag.msg);
	l->plan = p;
	l->tokens = (long)tokens;
	return TG_OK;
}

TgStatus tg_layer_create_file(TgContext *c, const char *path, TgLayer **out)
{
	*out = NULL;
	FILE *f = fopen(path, "rb");
	if (!f)
		return fail(TG_ERR_ARG, "cannot open %s", path);
	char *buf = NULL;
	size_t len = 0, cap = 0, n;
	char chunk[65536];
	while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
		if (len + n > cap) {
			cap = (len + n) * 2;
			char *p = realloc(buf, cap);
			if (!p) {
				free(buf);
				fclose(f);
				return fail(TG_ERR_NOMEM, "out of host memory");
			}
			buf = p;
		}
		memcpy(buf + len, chunk, n);
		len += n;
	}
	fclose(f);
	TgStatus st = tg_layer_create(c, path, buf ? buf : "", len, out);
	free(buf);
	return st;
}

void tg_layer_destroy(TgLayer *l)
{
	if (!l)
		return;
	if (l->g)
		for (int i = 0; i < l->g->ntensors; i++)
			for (int cpt = 0; cpt < COMP_COUNT; cpt++)
				if (l->t[i].owned[cpt])
					cu.cuMemFree_v2(l->t[i].owned[cpt]);
	if (l->state)
		cu.cuMemFree_v2(l->state);
	if (l->state_params)
		cu.cuMemFree_v2(l->state_params);
	if (l->pad)
		cu.cuMemFree_v2(l->pad);
	if (l->optim)
		cu.cuMemFree_v2(l->optim);
	free(l->pending);
	arena_free(l->arena);
	free(l);
}

TgStatus tg_layer_compile(TgLayer *l)
{
	if (l->compiled)
		return TG_OK;
	const Plan *p = l->plan;
	KernelSource *ks;
	int n = pipeline_emit(l->arena, &l->diag, p, &ks);
	if (n < 0)
		return fail(TG_ERR_COMPILE, "%s", l->diag.msg);
	if (!l->ctx->gemm_gen) { /* the GEMMs' wgmma kernels only run on sm_90a: cuBLASLt elsewhere */
		int m = 0;
		for (int i = 0; i < n; i++)
			if (p->kernels[ks[i].kernel].kind != KERNEL_GEMM)
				ks[m++] = ks[i];
		n = m;
	}
	const char *const *hn, *const *ht;
	int nh = emit_headers(&hn, &ht);
	JitSource *src = arena_alloc(l->arena, sizeof *src * (size_t)(n ? n : 1));
	for (int i = 0; i < n; i++)
		src[i] = (JitSource){ks[i].entry, ks[i].code, ks[i].file, nh, hn, ht};
	JitResult *res = arena_alloc(l->arena, sizeof *res * (size_t)(n ? n : 1));
	const char *arch = l->ctx->arch;
	char err[8192];
	if (n && jit_compile_many(l->ctx->jit, src, n, &arch, 1, NULL, 0, res, 0, err, sizeof err))
		return fail(strstr(err, "frozen") ? TG_ERR_FROZEN : TG_ERR_COMPILE, "%s", err);
	for (int i = 0; i < n; i++)
		l->jit[ks[i].kernel] = res[i];
	l->compiled = 1;
	return TG_OK;
}

/* Load one cubin into the context once (modules are shared across layers by key). */
static TgStatus module_get(TgContext *c, const JitResult *r, CUmodule *out)
{
	pthread_mutex_lock(&c->lock);
	for (int i = 0; i < c->nmods; i++)
		if (!strcmp(c->mods[i].key, r->key)) {
			*out = c->mods[i].mod;
			pthread_mutex_unlock(&c->lock);
			return TG_OK;
		}
	CUmodule m;
	CUresult cr = cu.cuModuleLoadData(&m, r->cubin);
	if (cr) {
		pthread_mutex_unlock(&c->lock);
		return fail(TG_ERR_CUDA, "cuModuleLoadData: %s", cudrv_errstr(cr));
	}
	if (c->nmods == c->capmods) {
		c->capmods = c->capmods ? c->capmods * 2 : 16;
		LoadedModule *nm = realloc(c->mods, sizeof *nm * (size_t)c->capmods);
		if (!nm) {
			pthread_mutex_unlock(&c->lock);
			cu.cuModuleUnload(m);
			return fail(TG_ERR_NOMEM, "out of host memory");
		}
		c->mods = nm;
	}
	memcpy(c->mods[c->nmods].key, r->key, 65);
	c->mods[c->nmods++].mod = m;
	pthread_mutex_unlock(&c->lock);
	*out = m;
	return TG_OK;
}

static void plan_needs(TgLayer *l);

/* The per-run amaxes (current scaling, NVFP4: slots ndelayed..nstate) grouped into runs of
 * consecutive slots written in one phase, which that phase clears before its kernels. */
static void amax_runs(TgLayer *l)
{
	const Graph *g = l->g;
	int n = g->nstate, first = l->plan->ndelayed;
	int *phase = arena_alloc(l->arena, sizeof *phase * (size_t)(n ? n : 1));
	for (int i = 0; i < g->ntensors; i++) {
		const Tensor *t = &g->tensors[i];
		int ph = t->producer >= 0 ? (int)g->ops[t->producer].phase : PHASE_FORWARD;
		if (t->state_slot >= 0)
			phase[t->state_slot] = ph;
		if (t->state_slot_t >= 0)
			phase[t->state_slot_t] = ph;
	}
	l->zero_amax = arena_alloc(l->arena, sizeof *l->zero_amax * (size_t)(n ? n : 1));
	l->nzero_amax = 0;
	for (int s = first; s < n; s++) {
		struct AmaxRun *r = l->nzero_amax ? &l->zero_amax[l->nzero_amax - 1] : NULL;
		if (r && r->phase == phase[s] && r->first + r->count == (size_t)s)
			r->count++;
		else
			l->zero_amax[l->nzero_amax++] = (struct AmaxRun){phase[s], (size_t)s, 1};
	}
}

/* A generated kernel launched with more dynamic shared memory than the 48 KB default (Kernel.smem_dynamic) is
 * allowed it on function fn. */
static TgStatus allow_dynamic_smem(const Kernel *k, CUfunction fn)
{
	if (k->kind == KERNEL_GENERATED && k->smem_dynamic > 0)
		CU(cu.cuFuncSetAttribute(fn, TG_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, k->smem_dynamic), k->name);
	return TG_OK;
}

/* A persistent kernel's (Kernel.persistent) resident CTAs a SM as function fn, from the driver's occupancy; 0 for
 * any other kernel or where the driver does not answer (the launch then keeps the context's grid cap). */
static int resident_ctas(const Kernel *k, CUfunction fn)
{
	int n = 0;
	if (!k->persistent || cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, fn, k->threads, (size_t)k->smem_dynamic))
		return 0;
	return n > 0 ? n : 0;
}

TgStatus tg_layer_load(TgLayer *l)
{
	if (l->loaded)
		return TG_OK;
	TgStatus st = tg_layer_compile(l);
	if (st)
		return st;
	const Plan *p = l->plan;
	for (int i = 0; i < p->nkernels; i++) {
		const Kernel *k = &p->kernels[i];
		if (k->kind != KERNEL_GENERATED && !(k->kind == KERNEL_GEMM && k->tmpl && l->ctx->gemm_gen))
			continue;
		CUmodule m = NULL;
		if ((st = module_get(l->ctx, &l->jit[i], &m)))
			return st;
		const char *entry = emit_entry(l->arena, p, k);
		CU(cu.cuModuleGetFunction(&l->fn[i], m, entry), entry);
		if (l->jit[i].regs < 0) /* the compile log had no ptxas report: ask the driver */
			cu.cuFuncGetAttribute(&l->jit[i].regs, TG_CU_FUNC_ATTRIBUTE_NUM_REGS, l->fn[i]);
		if ((st = allow_dynamic_smem(k, l->fn[i])))
			return st;
		l->resident[i] = resident_ctas(k, l->fn[i]);
		if (k->kind == KERNEL_GEMM) { /* the generated GEMM's shared-memory ring is over the 48 KB default */
			if (gemm_gen_tile_parse(k->variant, &l->gen_tile[i]))
				return fail(TG_ERR_COMPILE, "%s: bad generated GEMM variant '%s'", k->name, k->variant);
			l->gen_tile[i].glu = k->gemm.glu >= 0;
			l->gen_tile[i].dglu = k->gemm.dglu >= 0;
			const char *sc = plan_slot(k, "TG_SCALE");
			l->gen_tile[i].scale = sc ? atoi(sc) : 0;
			CU(cu.cuFuncSetAttribute(l->fn[i], TG_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
				(int)gemm_gen_smem_bytes(&l->gen_tile[i], k->gemm.d_dtype)), k->name);
		}
	}
	/* recipe state: scale = 1, scale_inv = 1, histories 0 */
	const Graph *g = l->g;
	int n = g->nstate, L = g->history > 0 ? g->history : 1;
	if (n) {
		l->state_floats = TG_STATE_FLOATS((size_t)n, (size_t)L);
		float *h = calloc(l->state_floats, sizeof *h);
		int *prm = calloc((size_t)n * 4, sizeof *prm);
		if (!h || !prm) {
			free(h);
			free(prm);
			return fail(TG_ERR_NOMEM, "out of host memory");
		}
		for (int i = 0; i < n; i++)
			h[TG_STATE_SCALE(n, i)] = h[TG_STATE_SCALE_INV(n, i)] = 1.0f;
		for (int i = 0; i < g->ntensors; i++) {
			const Tensor *t = &g->tensors[i];
			if (t->state_slot < 0)
				continue;
			int *q = prm + 4 * t->state_slot; /* {fmt, margin, algo, history length} */
			q[0] = t->dtype == DT_E5M2 ? 1 : 0;
			q[1] = t->recipe.margin;
			q[2] = t->recipe.amax_algo == AMAX_MOST_RECENT;
			q[3] = t->recipe.scaling == SCALING_DELAYED ? t->recipe.history : 0; /* 0: the update skips it */
		}
		CUresult r1 = cu.cuMemAlloc_v2(&l->state, l->state_floats * sizeof(float));
		CUresult r2 = r1 ? r1 : cu.cuMemAlloc_v2(&l->state_params, (size_t)n * 4 * sizeof(int));
		CUresult r3 = r2 ? r2 : cu.cuMemcpyHtoD_v2(l->state, h, l->state_floats * sizeof(float));
		CUresult r4 = r3 ? r3 : cu.cuMemcpyHtoD_v2(l->state_params, prm, (size_t)n * 4 * sizeof(int));
		free(h);
		free(prm);
		if (r4)
			return fail(TG_ERR_CUDA, "recipe state: %s", cudrv_errstr(r4));
		amax_runs(l);
	}
	if (g->optim.kind != OPTIM_NONE && !l->optim) {
		CUresult r = optim_state_create(&g->optim, &l->optim);
		if (r)
			return fail(TG_ERR_CUDA, "optimizer state: %s", cudrv_errstr(r));
	}
	plan_needs(l);
	l->weights_stale = 1;
	l->loaded = 1;
	return TG_OK;
}

/* ---- bindings ---- */
static int find_tensor(const Graph *g, const char *name)
{
	for (int i = 0; i < g->ntensors; i++)
		if (!strcmp(g->tensors[i].name, name))
			return i;
	return -1;
}

static DType tg_to_dtype(TgDtype t)
{
	switch (t) {
	case TG_FP32: return DT_F32;
	case TG_BF16: return DT_BF16;
	case TG_FP16: return DT_F16;
	case TG_E4M3: return DT_E4M3;
	case TG_E5M2: return DT_E5M2;
	case TG_E2M1: return DT_E2M1;
	case TG_E8M0: return DT_E8M0;
	}
	return DT_NONE;
}

TgStatus tg_bind(TgLayer *l, const char *name, const TgTensorDesc *d)
{
	if (!l || !name || !d)
		return fail(TG_ERR_ARG, "tg_bind: NULL argument");
	const Graph *g = l->g;
	int i = find_tensor(g, name);
	if (i < 0)
		return fail(TG_ERR_ARG, "tg_bind: layer %s has no tensor '%s'", g->layer, name);
	const Tensor *t = &g->tensors[i];
	if (tg_to_dtype(d->dtype) != t->dtype)
		return fail(TG_ERR_BINDING, "tg_bind: tensor '%s' is %s, the binding is dtype %d", name, dtype_name(t->dtype),
			(int)d->dtype);
	if (d->rank != t->rank)
		return fail(TG_ERR_BINDING, "tg_bind: tensor '%s' has rank %d, the binding %d", name, t->rank, d->rank);
	for (int k = 0; k < d->rank; k++) {
		Extent e = t->shape[k];
		if (e.dim < 0 && d->shape[k] != e.add)
			return fail(TG_ERR_BINDING, "tg_bind: tensor '%s' dimension %d is %ld, the binding %lld", name, k, e.add,
				d->shape[k]);
		if (e.dim >= 0 && (d->shape[k] < e.add || (d->shape[k] - e.add) % e.mul))
			return fail(TG_ERR_BINDING, "tg_bind: tensor '%s' dimension %d (%s) cannot be %lld", name, k,
				g->dims[e.dim].name, d->shape[k]);
		if (d->strides[k])
			return fail(TG_ERR_BINDING, "tg_bind: tensor '%s': v1 takes contiguous row-major tensors only (strides 0)",
				name);
	}
	if (!d->data || ((uintptr_t)d->data & 15))
		return fail(TG_ERR_BINDING, "tg_bind: tensor '%s': data must be a non-NULL 16-byte aligned device pointer", name);
	TensorRt *r = &l->t[i];
	r->user = (CUdeviceptr)(uintptr_t)d->data;
	if (l->g->tensors[i].role == ROLE_WEIGHT)
		l->weights_stale = 1; /* a (re)bound weight: the next tg_run casts it */
	r->rank = d->rank;
	memcpy(r->shape, d->shape, sizeof r->shape);
	return TG_OK;
}

/* ---- sizes (gen/layout.c defines the layouts) ---- */
static long extent_val(const TgLayer *l, Extent e) { return layout_extent(l->dim, e); }

static size_t comp_bytes(const TgLayer *l, const Tensor *t, Component c) { return layout_comp_bytes_dev(l->dim, t, c); }

/* Which components of which tensors the plan touches: fixed once the plan is
 * (tg_layer_load), so tg_run only sizes and allocates. */
static void plan_needs(TgLayer *l)
{
	const Graph *g = l->g;
	for (int i = 0; i < g->ntensors; i++) {
		memset(l->t[i].need, 0, sizeof l->t[i].need);
		l->t[i].bind_phases = 0;
	}
	for (int ki = 0; ki < l->plan->nkernels; ki++) {
		const Kernel *k = &l->plan->kernels[ki];
		for (int j = 0; j < k->nops; j++) { /* what this kernel's phase needs bound */
			const Op *op = &g->ops[k->ops[j]];
			for (int x = 0; x < ARG_COUNT; x++) {
				int id = op->arg[x];
				bool accumulated = op->p.accumulate && (x == ARG_OUT ? op->kind == OP_GEMM_CAST || op->kind == OP_DBIAS
					: x == ARG_D_GAMMA || x == ARG_D_BETA || x == ARG_DBIAS_OUT);
				if (id >= 0 && (accumulated || (!arg_is_output((ArgSlot)x) && g->tensors[id].producer < 0)))
					l->t[id].bind_phases |= PHASE_BIT(k->phase);
			}
		}
		if (k->kind == KERNEL_GEMM) {
			const GemmCall *c = &k->gemm;
			l->t[c->a].need[c->a_comp] = 1;
			l->t[c->b].need[c->b_comp] = 1;
			l->t[c->d].need[c->d_comp] = 1;
			if (c->bias >= 0)
				l->t[c->bias].need[c->bias_comp] = 1;
			if (c->add >= 0)
				l->t[c->add].need[COMP_DATA] = 1;
			if (c->scaling == SCALING_DELAYED || c->scaling == SCALING_CURRENT) {
				l->t[c->a].need[COMP_SCALE_INV] = l->t[c->b].need[COMP_SCALE_INV] = 1;
			}
			if (l->g->tensors[c->d].state_slot >= 0) /* FP8 output: scale read, amax written */
				l->t[c->d].need[COMP_SCALE] = l->t[c->d].need[COMP_SCALE_INV] = l->t[c->d].need[COMP_AMAX] = 1;
			if (c->scaling == SCALING_BLOCK1X128 || c->scaling == SCALING_BLOCK128X128) {
				l->t[c->a].need[c->a_comp == COMP_DATA ? COMP_SCALE_INV : COMP_SCALE_INV_T] = 1;
				l->t[c->b].need[c->b_comp == COMP_DATA ? COMP_SCALE_INV : COMP_SCALE_INV_T] = 1;
			}
			continue;
		}
		for (int b = 0; b < k->nbind; b++)
			if (k->bind[b].tensor >= 0)
				l->t[k->bind[b].tensor].need[k->bind[b].comp] = 1;
	}
}

static TgStatus gemm_setup(TgLayer *l, const Kernel *k, GemmDesc *out_gd, GemmArgs *out_ga, bool *zero_pads);

/* One of the runtime's own kernels (CUDA source src, entry point entry; file names it in NVRTC's messages),
 * compiled for the context's arch through its kernel cache and loaded once per context (tg_context_function):
 * TG_OK with the function in *fn; TG_ERR_COMPILE with NVRTC's message in err (nothing recorded as the thread's
 * error: the caller decides); or a load failure, recorded (err empty). */
static TgStatus builtin_function(TgContext *c, const char *entry, const char *src, const char *file, void **fn, char *err,
	size_t errlen)
{
	JitSource js = {entry, src, file, 0, NULL, NULL};
	JitResult res;
	err[0] = 0;
	if (jit_compile(c->jit, &js, c->arch, NULL, 0, &res, err, errlen))
		return TG_ERR_COMPILE;
	return tg_context_function(c, &res, entry, fn);
}

/* Resolve the dynamic dims from the bindings, check that the inputs the phases in
 * `phases` read are bound, size every buffer of every phase and allocate what is missing
 * (so a later phase allocates nothing). */
static TgStatus prepare(TgLayer *l, CUstream s, unsigned phases)
{
	const Graph *g = l->g;
	for (int d = 0; d < g->ndims; d++)
		l->dim[d] = g->dims[d].value;
	for (int i = 0; i < g->ntensors; i++) {
		const Tensor *t = &g->tensors[i];
		const TensorRt *r = &l->t[i];
		if (!r->user) {
			if (r->bind_phases & phases)
				return fail(TG_ERR_BINDING, t->producer < 0 ? "tensor '%s' is a layer input and is not bound"
					: "tensor '%s' is accumulated into (main_grad, accumulate) and is not bound", t->name);
			continue;
		}
		for (int k = 0; k < t->rank; k++) {
			Extent e = t->shape[k];
			if (e.dim < 0)
				continue;
			long v = (long)((r->shape[k] - e.add) / e.mul);
			if (l->dim[e.dim] < 0)
				l->dim[e.dim] = v;
			else if (l->dim[e.dim] != v)
				return fail(TG_ERR_BINDING, "tensor '%s' gives %s = %ld, but another binding gave %ld", t->name,
					g->dims[e.dim].name, v, l->dim[e.dim]);
		}
	}
	for (int d = 0; d < g->ndims; d++)
		if (l->dim[d] < 0)
			return fail(TG_ERR_BINDING, "dimension '%s' is not fixed by any bound tensor", g->dims[d].name);
	int capturing = -1;
	for (int i = 0; i < g->ntensors; i++) {
		const Tensor *t = &g->tensors[i];
		TensorRt *r = &l->t[i];
		for (int c = 0; c < COMP_COUNT; c++) {
			r->ptr[c] = 0;
			if (!r->need[c])
				continue;
			if (tensor_comp_in_state(t, (Component)c)) {
				size_t n = (size_t)g->nstate;
				bool tcopy = c == COMP_SCALE_T || c == COMP_AMAX_T; /* nvfp4_rht: the columnwise copy's own slot */
				size_t si = (size_t)(tcopy ? t->state_slot_t : t->state_slot);
				size_t off = c == COMP_SCALE || c == COMP_SCALE_T ? TG_STATE_SCALE(n, si)
					: c == COMP_SCALE_INV ? TG_STATE_SCALE_INV(n, si) : TG_STATE_HISTORY(n) + si;
				r->ptr[c] = l->state + off * sizeof(float);
				continue;
			}
			if (c == COMP_DATA && (r->user || r->bind_phases || t->producer < 0)) { /* unbound: a phase not run now */
				r->ptr[c] = r->user;
				continue;
			}
			size_t bytes = comp_bytes(l, t, c);
			if (!bytes)
				continue;
			if (r->cap[c] < bytes) {
				if (capturing < 0)
					capturing = stream_capturing(s);
				if (capturing)
					return fail(TG_ERR_CAPTURING, "tensor '%s' needs a larger buffer while the stream is capturing; "
						"run once before capturing", t->name);
				if (r->owned[c])
					cu.cuMemFree_v2(r->owned[c]);
				r->owned[c] = 0;
				r->cap[c] = 0;
				CUresult cr = cu.cuMemAlloc_v2(&r->owned[c], bytes);
				if (cr)
					return fail(TG_ERR_NOMEM, "allocating %zu bytes for tensor '%s': %s", bytes, t->name,
						cudrv_errstr(cr));
				r->cap[c] = bytes;
			}
			r->ptr[c] = r->owned[c];
		}
	}
	size_t pad = 0; /* scratch for GEMMs that run on zero-padded copies (gemm_pad.h) */
	for (int ki = 0; ki < l->plan->nkernels; ki++) {
		GemmDesc gd;
		GemmArgs ga;
		if (l->plan->kernels[ki].kind != KERNEL_GEMM || gemm_setup(l, &l->plan->kernels[ki], &gd, &ga, NULL))
			continue;
		size_t b = gemm_pad_bytes(&gd);
		pad = b > pad ? b : pad;
	}
	if (pad > l->pad_cap) {
		if (capturing < 0 ? stream_capturing(s) : capturing)
			return fail(TG_ERR_CAPTURING, "layer %s needs a larger GEMM padding buffer while the stream is capturing; "
				"run once before capturing", g->layer);
		if (l->pad)
			cu.cuMemFree_v2(l->pad);
		l->pad = 0;
		l->pad_cap = 0;
		CUresult cr = cu.cuMemAlloc_v2(&l->pad, pad);
		if (cr)
			return fail(TG_ERR_NOMEM, "allocating %zu bytes of GEMM padding: %s", pad, cudrv_errstr(cr));
		l->pad_cap = pad;
		if (!l->pad_copy) { /* (a compile error leaves the driver's slower copies: the same bytes) */
			char err[512];
			void *fn = NULL;
			if (!builtin_function(l->ctx, gemm_pad_copy_entry, gemm_pad_copy_src, "tegen_gemm_pad_copy.cu", &fn, err,
				sizeof err))
				l->pad_copy = (CUfunction)fn;
		}
	}
	return TG_OK;
}

/* k's pointer slots (its bindings) at this run's buffers; the rest NULL. */
static void bind_params(const TgLayer *l, const Kernel *k, TgParams *prm)
{
	memset(prm, 0, sizeof *prm);
	for (int b = 0; b < k->nbind; b++) {
		const Binding *bd = &k->bind[b];
		CUdeviceptr ptr = bd->comp == COMP_STATE ? l->state
			: bd->comp == COMP_STATE_PARAMS ? l->state_params : bd->comp == COMP_OPTIM ? l->optim
			: l->t[bd->tensor].ptr[bd->comp];
		prm->p[bd->slot] = (void *)(uintptr_t)ptr;
	}
}

/* Launch generated kernel k (the plan's, or a variant of it) as function fn; resident: resident_ctas(k, fn). */
static TgStatus launch_kernel(TgLayer *l, const Kernel *k, CUfunction fn, int resident, CUstream s)
{
	TgParams prm;
	bind_params(l, k, &prm);
	long rows = extent_val(l, k->rows);
	prm.n[0] = k->rows_chunk > 0 ? (rows + k->rows_chunk - 1) / k->rows_chunk : rows;
	prm.n[1] = k->cols;
	prm.n[3] = (long long)l->steps;
	if (rows <= 0 && !k->rows_chunk) /* no rows: nothing to write; but a sum over rows (dreduce) writes its empty sums */
		return TG_OK;
	/* grid.x = row blocks x column tiles (1D; templates grid-stride, so a cap is safe), at most TEGEN_GRID_CAP's,
	 * the kernel's own (Kernel.grid_cap; none for GRID_UNCAPPED) or 32 CTAs a SM, or a persistent kernel's resident CTAs */
	unsigned long long gx = k->grid_rows ? ((unsigned long long)rows + (unsigned)k->grid_rows - 1) / (unsigned)k->grid_rows : 1;
	if (k->grid_cols)
		gx *= ((unsigned long long)k->cols + (unsigned long long)k->grid_cols - 1) / (unsigned long long)k->grid_cols;
	int per_sm = l->ctx->grid_cap ? l->ctx->grid_cap : k->grid_cap ? k->grid_cap : 32;
	if (resident > 0 && (per_sm == GRID_UNCAPPED || resident < per_sm))
		per_sm = resident;
	if (per_sm != GRID_UNCAPPED) {
		unsigned long long cap = (unsigned long long)(l->ctx->sms > 0 ? l->ctx->sms : 132) * (unsigned)per_sm;
		gx = gx < cap ? gx : cap;
	}
	void *args[] = {&prm};
	CUresult r;
	if (k->pdl && l->ctx->pdl) {
		TgLaunchAttr a = {TG_CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION, {0}, {1}};
		TgLaunchConfig c = {{(unsigned)gx, 1, 1}, {(unsigned)k->threads, 1, 1}, (unsigned)k->smem_dynamic, s, &a, 1};
		r = cu.cuLaunchKernelEx(&c, fn, args, NULL);
	} else {
		r = cu.cuLaunchKernel(fn, (unsigned)gx, 1, 1, (unsigned)k->threads, 1, 1, (unsigned)k->smem_dynamic, s, args, NULL);
	}
	if (r)
		return fail(TG_ERR_CUDA, "launching %s: %s", k->name, cudrv_errstr(r));
	return TG_OK;
}

/* Whether kernel k casts a weight (a quantize or cast_transpose of a role: weight layer input). */
static bool casts_weight(const Graph *g, const Kernel *k)
{
	if (!k->nops)
		return false;
	const Op *op = &g->ops[k->ops[0]];
	if (op->kind != OP_QUANTIZE && op->kind != OP_CAST_TRANSPOSE)
		return false;
	const Tensor *w = &g->tensors[op->arg[ARG_IN]];
	return w->role == ROLE_WEIGHT && w->producer < 0;
}

/* Whether tg_run skips kernel k now: a weight's cast whose copies tg_layer_cache_weights keeps. */
static bool weight_cast_cached(const TgLayer *l, const Kernel *k)
{
	return l->cache_weights && !l->weights_stale && optim_stage(l->plan, k) == OPTIM_RUN && casts_weight(l->g, k);
}

void tg_layer_keep_intermediates(TgLayer *l, bool on) { l->keep_intermediates = on; }

const char *tg_layer_gemm_backend(const TgLayer *l, int ki)
{
	const Kernel *k = &l->plan->kernels[ki];
	return k->kind == KERNEL_GEMM && l->fn[ki] && l->gen_ran[ki] != 0
		? arena_printf(l->arena, "wgmma %s%s", k->variant, k->gemm.glu >= 0 ? "+glu" : k->gemm.dglu >= 0 ? "+dglu" : "")
		: "cuBLASLt";
}

bool tg_layer_kernel_skipped(const TgLayer *l, int ki)
{
	const Kernel *k = &l->plan->kernels[ki];
	return (k->epilogue_of >= 0 && l->epilogue_ran[k->epilogue_of]) ||
		weight_cast_cached(l, k);
}

static TgStatus launch_generated(TgLayer *l, int ki, CUstream s) { return launch_kernel(l, &l->plan->kernels[ki], l->fn[ki], l->resident[ki], s); }

/* The block scales of the operand copy `copy` (data or data_t) of tensor t: component
 * row for the rowwise copy, col for the columnwise one. */
static const float *copy_scales(const TgLayer *l, int t, Component copy, Component row, Component col)
{
	return (const float *)(uintptr_t)l->t[t].ptr[copy == COMP_DATA ? row : col];
}

/* The line length of an operand read from component comp of tensor t: a padded columnwise copy's pitch, else 0. */
static long operand_pitch(const TgLayer *l, int t, Component comp)
{
	const Tensor *x = &l->g->tensors[t];
	if (comp != COMP_DEQ_T && comp != COMP_DATA_T)
		return 0;
	long rows = layout_rows(l->dim, x), pitch = layout_pitch(rows, comp == COMP_DEQ_T ? DT_BF16 : x->dtype);
	return pitch != rows ? pitch : 0;
}

/* The cuBLASLt call of GEMM kernel k at the current dims and pointers. A columnwise operand ([cols][pitch],
 * gen/layout.h) has its pitch as row stride (lda / ldb); a wgrad, whose operands are both columnwise copies over
 * the GEMM's K, runs with K = the pitch instead (*zero_pads = true, where zero_pads is not NULL: the caller that
 * launches it zeroes both copies' padding first;
 * zeros add nothing to the dot products, the block scales' counts along K do not change, and FP8's K % 16 holds
 * at any token count with no padded copies). */
static TgStatus gemm_setup(TgLayer *l, const Kernel *k, GemmDesc *out_gd, GemmArgs *out_ga, bool *zero_pads)
{
	const GemmCall *c = &k->gemm;
	const Graph *g = l->g;
	const Tensor *a = &g->tensors[c->a], *b = &g->tensors[c->b], *d = &g->tensors[c->d];
	if (g->ops[c->op].emulated && !c->emulated)
		return fail(TG_ERR_UNSUPPORTED, "%s: %s; only MXFP8 and NVFP4 have an emulated path", k->name, g->ops[c->op].emulated);
	GemmDesc gd = {0};
	gd.m = (int)extent_val(l, c->m);
	gd.n = (int)extent_val(l, c->n);
	gd.k = (int)extent_val(l, c->k);
	gd.a_dtype = c->a_dtype;
	gd.b_dtype = c->b_dtype;
	gd.d_dtype = c->d_dtype;
	gd.fast_accum = c->fast_accum;
	gd.accumulate = c->accumulate;
	gd.a_trans = c->a_trans;
	gd.b_trans = c->b_trans;
	gd.epilogue = c->bias >= 0 ? (c->gelu ? GEMM_EPI_GELU_BIAS : GEMM_EPI_BIAS) : (c->gelu ? GEMM_EPI_GELU : GEMM_EPI_NONE);
	gd.lda = (int)operand_pitch(l, c->a, c->a_comp);
	gd.ldb = (int)operand_pitch(l, c->b, c->b_comp);
	bool wgrad = gd.lda && gd.lda == gd.ldb && gd.k == layout_rows(l->dim, a) && gd.k == layout_rows(l->dim, b) &&
		gd.a_dtype != DT_E2M1; /* (a native NVFP4 wgrad keeps its K: the scales' block count along K would grow) */
	if (wgrad) {
		gd.k = gd.lda;
		gd.lda = gd.ldb = 0;
	}
	if (zero_pads)
		*zero_pads = wgrad;
	GemmArgs ga = {0};
	ga.a = (void *)(uintptr_t)l->t[c->a].ptr[c->a_comp];
	ga.b = (void *)(uintptr_t)l->t[c->b].ptr[c->b_comp];
	ga.d = (void *)(uintptr_t)l->t[c->d].ptr[c->d_comp]; /* COMP_HP: FP32, then the plan's convert kernel */
	ga.bias = c->bias >= 0 ? (void *)(uintptr_t)l->t[c->bias].ptr[c->bias_comp] : NULL;
	ga.c = c->add >= 0 ? (void *)(uintptr_t)l->t[c->add].ptr[COMP_DATA] : NULL; /* D = A x B + add */
	ga.alpha = 1.0f;
	ga.beta = c->accumulate ? 1.0f : 0.0f;
	switch (c->scaling) {
	case SCALING_NONE:
		gd.scale_mode = GEMM_SCALE_NONE;
		break;
	case SCALING_DELAYED:
	case SCALING_CURRENT:
		gd.scale_mode = GEMM_SCALE_TENSOR;
		ga.a_scale_inv = (const float *)(uintptr_t)l->t[c->a].ptr[COMP_SCALE_INV];
		ga.b_scale_inv = (const float *)(uintptr_t)l->t[c->b].ptr[COMP_SCALE_INV];
		break;
	case SCALING_BLOCK1X128:
	case SCALING_BLOCK128X128:
		gd.scale_mode = GEMM_SCALE_BLOCK;
		gd.a_block128x128 = a->recipe.scaling == SCALING_BLOCK128X128;
		gd.b_block128x128 = b->recipe.scaling == SCALING_BLOCK128X128;
		ga.a_scale_inv = copy_scales(l, c->a, c->a_comp, COMP_SCALE_INV, COMP_SCALE_INV_T);
		ga.b_scale_inv = copy_scales(l, c->b, c->b_comp, COMP_SCALE_INV, COMP_SCALE_INV_T);
		break;
	case SCALING_MXFP8: /* native: swizzled E8M0 (MXFP8) or E4M3 (NVFP4) scales (plan_swizzle) */
	case SCALING_NVFP4:
		gd.scale_mode = c->scaling == SCALING_MXFP8 ? GEMM_SCALE_MXFP8 : GEMM_SCALE_NVFP4;
		ga.a_scale_inv = copy_scales(l, c->a, c->a_comp, COMP_SCALE_SW, COMP_SCALE_SW_T);
		ga.b_scale_inv = copy_scales(l, c->b, c->b_comp, COMP_SCALE_SW, COMP_SCALE_SW_T);
		if (c->scaling == SCALING_NVFP4) { /* alpha/beta on the device (plan_nvfp4_alpha) */
			const float *ab = (const float *)(uintptr_t)l->t[c->d].ptr[COMP_ALPHA];
			if (!ab)
				return fail(TG_ERR_UNSUPPORTED, "%s: the native NVFP4 GEMM has no alpha on the device (no alpha kernel planned)",
					k->name);
			ga.alpha_ptr = ab;     /* 1/(S_enc_a*S_enc_b), written by the alpha kernel just before */
			ga.beta_ptr = ab + 1;  /* 1 with accumulate, else 0 */
		}
		break;
	default:
		return fail(TG_ERR_UNSUPPORTED, "%s: %s GEMM operands are not supported by the runtime yet", k->name,
			scaling_name(c->scaling));
	}
	if (d->dtype == DT_E4M3 || d->dtype == DT_E5M2) {
		ga.d_scale = (const float *)(uintptr_t)l->t[c->d].ptr[COMP_SCALE];
		ga.d_amax = (float *)(uintptr_t)l->t[c->d].ptr[COMP_AMAX];
	}
	*out_gd = gd;
	*out_ga = ga;
	return TG_OK;
}

static TgStatus launch_gemm(TgLayer *l, int ki, CUstream s)
{
	const Kernel *k = &l->plan->kernels[ki];
	GemmDesc gd;
	GemmArgs ga;
	bool zero_pads;
	TgStatus st = gemm_setup(l, k, &gd, &ga, &zero_pads);
	if (st)
		return st;
	char err[1024];
	int r;
	for (int i = 0; zero_pads && i < 2; i++) { /* the wgrad's K is the pitch: both copies' padding to zero */
		int t = i ? k->gemm.b : k->gemm.a;
		Component comp = i ? k->gemm.b_comp : k->gemm.a_comp;
		const Tensor *x = &l->g->tensors[t];
		size_t es = comp == COMP_DEQ_T ? 2 : (size_t)dtype_bits(x->dtype) / 8;
		long rows = layout_rows(l->dim, x);
		CUresult cr = cu.cuMemsetD2D8Async(l->t[t].ptr[comp] + (size_t)rows * es, (size_t)gd.k * es, 0,
			(size_t)(gd.k - rows) * es, (size_t)layout_cols(x), s);
		if (cr)
			return fail(TG_ERR_CUDA, "%s: zeroing the padding of %s.%s: %s", k->name, x->name, comp_name(comp),
				cudrv_errstr(cr));
	}
	l->epilogue_ran[ki] = false; /* both set below where the generated kernel runs */
	l->gen_ran[ki] = false;
	if (gd.m < 1 || gd.n < 1) /* no output elements (rows tokens - 1 at tokens 1), as launch_kernel skips 0 rows */
		return TG_OK;
	if (gd.k < 1) { /* a wgrad over zero tokens: an empty sum */
		r = gemm_run_empty_k(&gd, &ga, s, err, sizeof err);
		return r ? fail(r == GEMM_ENOTSUP ? TG_ERR_UNSUPPORTED : TG_ERR_CUDA, "%s: %s", k->name, err) : TG_OK;
	}
	/* the generated kernel, where this call suits it; with a GLU or dglu epilogue it also does that op's kernel's
	 * work (which then does not run), writing D only when kept (or every intermediate is, for the checker) */
	const GemmGenTile *t = &l->gen_tile[ki];
	const bool fused = t->glu || t->dglu; /* compiled with an epilogue op */
	TgParams ep;
	GemmGenEpi epi = {&ep, k->gemm.keep_d || l->keep_intermediates};
	if (l->fn[ki] && fused) /* the epilogue's pointers, for the kernel and gemm_gen_dglu_check */
		bind_params(l, k, &ep);
	bool gen = l->fn[ki] && !gemm_gen_check(&gd, &ga, NULL, 0) && (!t->dglu || !gemm_gen_dglu_check(&gd, &ga, &epi)) &&
		(fused || l->ctx->gemm_gen_all || gemm_gen_pays(&gd, t, l->ctx->sms));
	if (gen) {
		l->gen_ran[ki] = true;
		l->epilogue_ran[ki] = fused;
		r = gemm_gen_launch(l->fn[ki], t, l->ctx->sms, &gd, &ga, fused ? &epi : NULL, s, err, sizeof err);
	} else
		r = gemm_run_padded(l->ctx->gemm, &gd, &ga, l->pad, l->pad_cap, l->pad_copy, s, err, sizeof err);
	if (r)
		return fail(r == GEMM_ENOTSUP ? TG_ERR_UNSUPPORTED : r == GEMM_EINVAL ? TG_ERR_BINDING : TG_ERR_CUDA, "%s: %s",
			k->name, err);
	return TG_OK;
}

int tg_layer_gemm_choice(TgLayer *l, int ki, char *buf, size_t len)
{
	GemmDesc gd;
	GemmArgs ga;
	if (!l || ki < 0 || ki >= l->plan->nkernels || l->plan->kernels[ki].kind != KERNEL_GEMM || !l->loaded ||
		gemm_setup(l, &l->plan->kernels[ki], &gd, &ga, NULL))
		return -1;
	return gemm_describe(l->ctx->gemm, &gd, buf, len);
}

/* After an amax pass k (current scaling or NVFP4): the state floats it wrote join the pending
 * ones, when a communicator reduces that kind of amax (tg_layer_set_comm). */
static TgStatus note_amaxes(TgLayer *l, const Kernel *k)
{
	if (!l->comm)
		return TG_OK;
	for (int b = 0; b < k->nbind; b++) {
		const Binding *bd = &k->bind[b];
		if (bd->tensor < 0 || (bd->comp != COMP_AMAX && bd->comp != COMP_AMAX_T))
			continue;
		Scaling sc = l->g->tensors[bd->tensor].recipe.scaling;
		unsigned bit = sc == SCALING_NVFP4 ? TG_REDUCE_NVFP4 : sc == SCALING_CURRENT ? TG_REDUCE_CURRENT : 0;
		CUdeviceptr a = l->t[bd->tensor].ptr[bd->comp];
		if (!(l->reduce & bit) || a < l->state || a >= l->state + l->state_floats * sizeof(float))
			continue;
		if (l->npending == l->cap_pending) { /* grows to the largest group once */
			CUdeviceptr *p = realloc(l->pending, sizeof *p * (size_t)(2 * l->cap_pending + 4));
			if (!p)
				return fail(TG_ERR_NOMEM, "out of host memory");
			l->pending = p;
			l->cap_pending = 2 * l->cap_pending + 4;
		}
		l->pending[l->npending++] = a;
	}
	return TG_OK;
}

/* The pending amaxes all-reduced (max) over the communicator: contiguous floats in one call,
 * the calls of one group in one NCCL group (one launch), on s. */
static TgStatus reduce_pending(TgLayer *l, CUstream s)
{
	if (!l->npending)
		return TG_OK;
	int n = l->npending;
	l->npending = 0;
	for (int i = 1; i < n; i++) /* sort the addresses (a few), then coalesce runs */
		for (int j = i; j > 0 && l->pending[j] < l->pending[j - 1]; j--) {
			CUdeviceptr t = l->pending[j];
			l->pending[j] = l->pending[j - 1];
			l->pending[j - 1] = t;
		}
	char err[512];
	if (nccl_group_start(err, sizeof err))
		return fail(TG_ERR_CUDA, "%s", err);
	int bad = 0;
	for (int i = 0; i < n && !bad;) {
		int j = i + 1;
		while (j < n && l->pending[j] <= l->pending[j - 1] + sizeof(float))
			j++;
		size_t count = (size_t)((l->pending[j - 1] - l->pending[i]) / sizeof(float)) + 1;
		bad = nccl_allreduce_max(l->comm, l->pending[i], count, s, err, sizeof err);
		i = j;
	}
	char err2[512];
	if (nccl_group_end(err2, sizeof err2) && !bad)
		return fail(TG_ERR_CUDA, "%s", err2);
	return bad ? fail(TG_ERR_CUDA, "%s", err) : TG_OK;
}

TgStatus tg_layer_cache_weights(TgLayer *l, int on)
{
	if (!l)
		return fail(TG_ERR_ARG, "tg_layer_cache_weights: NULL layer");
	if (on && !l->cache_weights)
		l->weights_stale = 1; /* copies made before (without the promise) are not trusted */
	l->cache_weights = on != 0;
	return TG_OK;
}

/* Launch the kernels of the phases in `phases` (PHASE_BIT mask), in plan order, on s;
 * ms non-NULL: kernel i's share of the run in ms[i] (i < nms; see tg_run_timed; synchronizes once). The optimizer phase runs
 * in stages (rt_optim.h): the updates, the trained weights' casts (forward kernels, which
 * the forward runs only while the copies are stale), the step count. */
static TgStatus run_kernels(TgLayer *l, CUstream s, unsigned phases, float *ms, int nms)
{
	if (!l->loaded) {
		if (stream_capturing(s))
			return fail(TG_ERR_CAPTURING, "layer %s is not loaded and the stream is capturing; call tg_layer_load first",
				l->g->layer);
		TgStatus st = tg_layer_load(l);
		if (st)
			return st;
	}
	TgStatus st = prepare(l, s, phases);
	if (st)
		return st;
	size_t n = (size_t)l->g->nstate;
	for (int i = 0; i < l->nzero_amax; i++)
		if (phases & PHASE_BIT(l->zero_amax[i].phase))
			CU(cu.cuMemsetD32Async(l->state + (TG_STATE_HISTORY(n) + l->zero_amax[i].first) * sizeof(float), 0,
				l->zero_amax[i].count, s), "clearing amaxes");
	/* ms: an event before each launched kernel and one after the last, no sync between them, so
	 * kernel i's time is its share of the run as it runs: from its start to the next kernel's start */
	int nk = l->plan->nkernels, *started = NULL, nstarted = 0;
	CUevent *ev = NULL;
	if (ms) {
		for (int i = 0; i < nms; i++)
			ms[i] = 0;
		ev = calloc((size_t)nk + 1, sizeof *ev);
		started = calloc((size_t)nk + 1, sizeof *started);
		if (!ev || !started) {
			free(ev);
			free(started);
			return fail(TG_ERR_NOMEM, "out of host memory");
		}
	}
	bool optimizer = phases & PHASE_BIT(PHASE_OPTIMIZER);
	if (optimizer) /* the trained weights' current/NVFP4 amaxes restart from 0 for their casts after the update */
		for (int k = 0; k < l->g->nops && !st; k++) {
			const Tensor *t = &l->g->tensors[l->g->ops[k].arg[ARG_OUT] >= 0 ? l->g->ops[k].arg[ARG_OUT] : 0];
			if (!op_casts_trained_weight(l->g, &l->g->ops[k]) || t->state_slot < 0 || t->recipe.scaling == SCALING_DELAYED)
				continue;
			for (int slot = t->state_slot; slot <= t->state_slot + (t->state_slot_t >= 0); slot++)
				if (cu.cuMemsetD32Async(l->state + (TG_STATE_HISTORY(n) + (size_t)slot) * sizeof(float), 0, 1, s))
					st = fail(TG_ERR_CUDA, "clearing the amax of '%s'", t->name);
		}
	for (int stage = OPTIM_RUN; stage <= OPTIM_COUNT && !st; stage++)
		for (int i = 0; i < l->plan->nkernels && !st; i++) {
			const Kernel *k = &l->plan->kernels[i];
			OptimStage ks = optim_stage(l->plan, k);
			bool cached = weight_cast_cached(l, k);
			bool go = stage == OPTIM_RUN ? (phases & PHASE_BIT(k->phase)) && k->phase != PHASE_OPTIMIZER &&
					((ks == OPTIM_RUN && !cached) || (ks == OPTIM_WEIGHT_CAST && l->weights_stale))
				: optimizer && (int)ks == stage && !(ks == OPTIM_WEIGHT_CAST && k->cast_in_update);
			if (i == l->plan->update_kernel || !go || (k->epilogue_of >= 0 && l->epilogue_ran[k->epilogue_of]))
				continue;
			if (k->pass != PASS_AMAX && (st = reduce_pending(l, s)))
				break; /* the casts after a group of amax passes read the reduced amaxes */
			if (ms && nstarted < nk) {
				if (cu.cuEventCreate(&ev[nstarted], 0) || cu.cuEventRecord(ev[nstarted], s))
					st = fail(TG_ERR_CUDA, "timing %s: cuEventCreate/cuEventRecord failed", k->name);
				started[nstarted++] = i;
			}
			if (!st)
				st = k->kind == KERNEL_GEMM ? launch_gemm(l, i, s) : launch_generated(l, i, s);
			if (!st && k->pass == PASS_AMAX)
				st = note_amaxes(l, k);
		}
	if (!st)
		st = reduce_pending(l, s);
	l->npending = 0;
	if (ms) {
		if (!st && (cu.cuEventCreate(&ev[nstarted], 0) || cu.cuEventRecord(ev[nstarted], s) ||
			cu.cuEventSynchronize(ev[nstarted])))
			st = fail(TG_ERR_CUDA, "timing the kernels: the closing event failed");
		for (int j = 0; j < nstarted && !st; j++)
			if (started[j] < nms)
				cu.cuEventElapsedTime(&ms[started[j]], ev[j], ev[j + 1]);
		for (int j = 0; j <= nstarted; j++)
			if (ev[j])
				cu.cuEventDestroy_v2(ev[j]);
		free(ev);
		free(started);
	}
	if (!st && !optimizer)
		l->ran = 1;
	if (!st && (phases & (PHASE_BIT(PHASE_FORWARD) | PHASE_BIT(PHASE_OPTIMIZER))))
		l->weights_stale = 0; /* the forward cast them, or the step remade them */
	return st;
}

TgStatus tg_run(TgLayer *l, TgStream s)
{
	if (!l)
		return fail(TG_ERR_ARG, "tg_run: NULL layer");
	return run_kernels(l, (CUstream)s, PHASE_BIT(PHASE_FORWARD), NULL, 0);
}

TgStatus tg_backward(TgLayer *l, TgStream s)
{
	if (!l)
		return fail(TG_ERR_ARG, "tg_backward: NULL layer");
	if (!plan_has_phase(l->plan, PHASE_BACKWARD))
		return fail(TG_ERR_ARG, "tg_backward: layer %s has no backward phase (its spec has no `backward: true`)",
			l->g->layer);
	return run_kernels(l, (CUstream)s, PHASE_BIT(PHASE_BACKWARD), NULL, 0);
}

TgStatus tg_optimizer_step(TgLayer *l, TgStream s)
{
	if (!l)
		return fail(TG_ERR_ARG, "tg_optimizer_step: NULL layer");
	if (l->g->optim.kind == OPTIM_NONE)
		return fail(TG_ERR_ARG, "tg_optimizer_step: layer %s has no optimizer (the spec's optimizer: key)", l->g->layer);
	if (!l->ran)
		return fail(TG_ERR_ARG, "tg_optimizer_step: layer %s has not run yet (tg_run, tg_backward, then the step)",
			l->g->layer);
	return run_kernels(l, (CUstream)s, PHASE_BIT(PHASE_OPTIMIZER), NULL, 0);
}

TgStatus tg_set_learning_rate(TgLayer *l, float lr, TgStream s)
{
	if (!l)
		return fail(TG_ERR_ARG, "tg_set_learning_rate: NULL layer");
	if (l->g->optim.kind == OPTIM_NONE)
		return fail(TG_ERR_ARG, "tg_set_learning_rate: layer %s has no optimizer (the spec's optimizer: key)", l->g->layer);
	if (!(lr >= 0) || lr > 3.0e38f)
		return fail(TG_ERR_ARG, "tg_set_learning_rate: lr must be a finite number >= 0, got %g", (double)lr);
	if (!l->loaded) {
		if (stream_capturing((CUstream)s))
			return fail(TG_ERR_CAPTURING, "layer %s is not loaded and the stream is capturing; call tg_layer_load first",
				l->g->layer);
		TgStatus st = tg_layer_load(l);
		if (st)
			return st;
	}
	CU(optim_set_lr(l->optim, lr, (CUstream)s), "tg_set_learning_rate");
	return TG_OK;
}

TgStatus tg_run_timed(TgLayer *l, TgStream s, float *ms, int n)
{
	if (!l || !ms)
		return fail(TG_ERR_ARG, "tg_run_timed: NULL argument");
	for (int i = 0; i < n; i++)
		ms[i] = 0;
	/* the forward and backward phases (those the layer has), as tg_run then tg_backward */
	return run_kernels(l, (CUstream)s, PHASE_BIT(PHASE_FORWARD) | PHASE_BIT(PHASE_BACKWARD), ms, n);
}

TgStatus tg_step(TgLayer *l, TgStream s)
{
	if (!l)
		return fail(TG_ERR_ARG, "tg_step: NULL layer");
	if (!l->loaded)
		return fail(TG_ERR_ARG, "tg_step: layer %s has not run yet", l->g->layer);
	l->steps++;
	if (l->cache_weights)
		l->weights_stale = 1; /* new delayed scales: the cached weight copies are cast again */
	if (l->plan->update_kernel < 0)
		return TG_OK;
	if (l->comm && (l->reduce & TG_REDUCE_DELAYED) && l->plan->ndelayed > 0) { /* the delayed amaxes: slots 0.. */
		char err[512];
		if (nccl_allreduce_max(l->comm, l->state + TG_STATE_HISTORY((size_t)l->g->nstate) * sizeof(float),
			    (size_t)l->plan->ndelayed, (CUstream)s, err, sizeof err))
			return fail(TG_ERR_CUDA, "tg_step: %s", err);
	}
	return launch_generated(l, l->plan->update_kernel, (CUstream)s);
}

TgStatus tg_layer_set_comm(TgLayer *l, void *comm, unsigned reduce)
{
	if (!l)
		return fail(TG_ERR_ARG, "tg_layer_set_comm: NULL layer");
	if (reduce & ~TG_REDUCE_ALL)
		return fail(TG_ERR_ARG, "tg_layer_set_comm: unknown reduce bits 0x%x (TG_REDUCE_DELAYED, _CURRENT, _NVFP4)",
			reduce & ~TG_REDUCE_ALL);
	char err[512];
	if (comm && nccl_load(err, sizeof err))
		return fail(TG_ERR_UNSUPPORTED, "tg_layer_set_comm: %s", err);
	l->comm = comm;
	l->reduce = comm ? reduce : 0;
	return TG_OK;
}

TgStatus tg_nccl_unique_id(unsigned char id[128])
{
	char err[512];
	if (!id)
		return fail(TG_ERR_ARG, "tg_nccl_unique_id: NULL id");
	if (nccl_load(err, sizeof err))
		return fail(TG_ERR_UNSUPPORTED, "%s", err);
	return nccl_unique_id(id, err, sizeof err) ? fail(TG_ERR_CUDA, "%s", err) : TG_OK;
}

TgStatus tg_nccl_comm_create(int nranks, const unsigned char id[128], int rank, void **comm)
{
	char err[512];
	if (!id || !comm || nranks < 1 || rank < 0 || rank >= nranks)
		return fail(TG_ERR_ARG, "tg_nccl_comm_create: bad argument (nranks %d, rank %d)", nranks, rank);
	*comm = NULL;
	if (nccl_load(err, sizeof err))
		return fail(TG_ERR_UNSUPPORTED, "%s", err);
	return nccl_comm_init(comm, nranks, id, rank, err, sizeof err) ? fail(TG_ERR_CUDA, "%s", err) : TG_OK;
}

void tg_nccl_comm_destroy(void *comm) { nccl_comm_destroy(comm); }

unsigned long long tg_layer_steps(const TgLayer *l) { return l->steps; }

void *tg_layer_optim_state(const TgLayer *l) { return (void *)(uintptr_t)l->optim; }

TgStatus tg_state(TgLayer *l, void **dev, size_t *bytes, TgStateLayout *lay)
{
	if (!l)
		return fail(TG_ERR_ARG, "tg_state: NULL layer");
	if (!l->loaded) {
		TgStatus st = tg_layer_load(l);
		if (st)
			return st;
	}
	size_t n = (size_t)l->g->nstate;
	if (dev)
		*dev = (void *)(uintptr_t)l->state;
	if (bytes)
		*bytes = l->state_floats * sizeof(float);
	if (lay) {
		lay->tensors = (int)n;
		lay->delayed = l->plan->ndelayed;
		lay->history = l->g->history > 0 ? l->g->history : 1;
		lay->scale = TG_STATE_SCALE(n, 0);
		lay->scale_inv = TG_STATE_SCALE_INV(n, 0);
		lay->stride = 4;
		lay->history_offset = TG_STATE_HISTORY(n);
		lay->amax = TG_STATE_HISTORY(n);
	}
	return TG_OK;
}

TgStatus tg_layer_tensor_component(TgLayer *l, int i, Component c, void **dev, size_t *bytes)
{
	if (i < 0 || i >= l->g->ntensors || !l->t[i].ptr[c])
		return fail(TG_ERR_ARG, "tensor %d has no %s (or the layer has not run)", i, comp_name(c));
	const Tensor *t = &l->g->tensors[i];
	bool state = tensor_comp_in_state(t, c);
	*dev = (void *)(uintptr_t)l->t[i].ptr[c];
	if (bytes)
		*bytes = state ? sizeof(float) : comp_bytes(l, t, c);
	return TG_OK;
}

TgStatus tg_layer_download(TgLayer *l, int i, Component c, void **host, size_t *bytes)
{
	void *dp;
	size_t n;
	*host = NULL;
	TgStatus st = tg_layer_tensor_component(l, i, c, &dp, &n);
	if (st)
		return st;
	void *h = malloc(n ? n : 1);
	if (!h)
		return fail(TG_ERR_NOMEM, "out of host memory reading %s.%s", l->g->tensors[i].name, comp_name(c));
	CUresult r = n ? cu.cuMemcpyDtoH_v2(h, (CUdeviceptr)(uintptr_t)dp, n) : 0;
	if (r) {
		free(h);
		return fail(TG_ERR_CUDA, "reading %s.%s from the GPU: %s", l->g->tensors[i].name, comp_name(c), cudrv_errstr(r));
	}
	*bytes = tensor_comp_in_state(&l->g->tensors[i], c) ? n : layout_unpitch(l->dim, &l->g->tensors[i], c, h, n);
	*host = h;
	return TG_OK;
}

TgStatus tg_tensor_ptr(TgLayer *l, const char *name, const char *component, void **dev, size_t *bytes)
{
	int i = find_tensor(l->g, name);
	if (i < 0)
		return fail(TG_ERR_ARG, "tg_tensor_ptr: no tensor '%s'", name);
	int c = comp_lookup(component);
	if (c >= 0)
		return tg_layer_tensor_component(l, i, (Component)c, dev, bytes);
	return fail(TG_ERR_ARG, "tg_tensor_ptr: unknown component '%s'", component);
}

const struct JitResult *tg_layer_jit(const TgLayer *l, int i)
{
	return i >= 0 && i < l->plan->nkernels && l->jit[i].cubin ? &l->jit[i] : NULL;
}

static TgDtype dtype_to_tg(DType t)
{
	switch (t) {
	case DT_F32: return TG_FP32;
	case DT_BF16: return TG_BF16;
	case DT_F16: return TG_FP16;
	case DT_E4M3: return TG_E4M3;
	case DT_E5M2: return TG_E5M2;
	case DT_E2M1: return TG_E2M1;
	case DT_E8M0: return TG_E8M0;
	default: return (TgDtype)0;
	}
}

int tg_layer_tensor_count(const TgLayer *l) { return l ? l->g->ntensors : 0; }

TgStatus tg_layer_tensor_info(const TgLayer *l, int i, long long tokens, TgTensorInfo *out)
{
	if (!l || !out)
		return fail(TG_ERR_ARG, "tg_layer_tensor_info: NULL argument");
	if (i < 0 || i >= l->g->ntensors)
		return fail(TG_ERR_ARG, "tg_layer_tensor_info: layer %s has no tensor %d", l->g->layer, i);
	const Graph *g = l->g;
	const Tensor *t = &g->tensors[i];
	memset(out, 0, sizeof *out);
	out->name = t->name;
	out->dtype = dtype_to_tg(t->dtype);
	out->rank = t->rank;
	for (int k = 0; k < t->rank && k < 4; k++) {
		Extent e = t->shape[k];
		long dim = e.dim < 0 ? 0 : g->dims[e.dim].value;
		if (e.dim >= 0 && dim < 0)
			dim = tokens > 0 ? (long)tokens : -1;
		out->shape[k] = e.dim < 0 ? e.add : dim < 0 ? -1 : e.mul * dim + e.add;
	}
	out->flags = (t->producer < 0 ? TG_TENSOR_INPUT : 0) | (t->output ? TG_TENSOR_OUTPUT : 0) |
		(t->role == ROLE_WEIGHT ? TG_TENSOR_WEIGHT : 0) | (t->role == ROLE_GRADIENT ? TG_TENSOR_GRADIENT : 0);
	return TG_OK;
}

int tg_layer_kernel_count(const TgLayer *l) { return l->plan->nkernels; }

TgStatus tg_layer_kernel_info(const TgLayer *l, int i, const char **name, int *hit, int *regs, int *spills)
{
	if (i < 0 || i >= l->plan->nkernels)
		return fail(TG_ERR_ARG, "kernel index %d out of range", i);
	const Kernel *k = &l->plan->kernels[i];
	*name = k->name;
	*hit = k->kind == KERNEL_GENERATED ? l->jit[i].cache_hit : -1;
	*regs = k->kind == KERNEL_GENERATED ? l->jit[i].regs : -1;
	*spills = k->kind == KERNEL_GENERATED ? l->jit[i].spill_stores + l->jit[i].spill_loads : 0;
	return TG_OK;
}

const Plan *tg_layer_plan(const TgLayer *l) { return l->plan; }

/* ---- device memory helpers for host programs without CUDA headers (examples/host.c) ---- */
TgStatus tg_alloc(TgContext *c, size_t bytes, void **dev)
{
	if (!c || !dev || !bytes)
		return fail(TG_ERR_ARG, "tg_alloc: NULL context or pointer, or 0 bytes");
	*dev = NULL;
	CUdeviceptr p = 0;
	CUresult r = cu.cuMemAlloc_v2(&p, bytes);
	if (r)
		return fail(TG_ERR_NOMEM, "tg_alloc: %zu bytes: %s", bytes, cudrv_errstr(r));
	*dev = (void *)(uintptr_t)p;
	return TG_OK;
}

void tg_free(TgContext *c, void *dev)
{
	if (c && dev)
		cu.cuMemFree_v2((CUdeviceptr)(uintptr_t)dev);
}

TgStatus tg_memcpy(TgContext *c, void *dst, const void *src, size_t bytes, TgCopy kind)
{
	if (!c || ((!dst || !src) && bytes))
		return fail(TG_ERR_ARG, "tg_memcpy: NULL argument");
	if (!bytes)
		return TG_OK;
	CUresult r;
	switch (kind) {
	case TG_HOST_TO_DEVICE: r = cu.cuMemcpyHtoD_v2((CUdeviceptr)(uintptr_t)dst, src, bytes); break;
	case TG_DEVICE_TO_HOST: r = cu.cuMemcpyDtoH_v2(dst, (CUdeviceptr)(uintptr_t)src, bytes); break;
	case TG_DEVICE_TO_DEVICE:
		r = cu.cuMemcpyDtoD_v2((CUdeviceptr)(uintptr_t)dst, (CUdeviceptr)(uintptr_t)src, bytes);
		break;
	default: return fail(TG_ERR_ARG, "tg_memcpy: bad direction %d", (int)kind);
	}
	if (r)
		return fail(TG_ERR_CUDA, "tg_memcpy: %zu bytes: %s", bytes, cudrv_errstr(r));
	return TG_OK;
}

TgStatus tg_context_function(TgContext *c, const struct JitResult *r, const char *entry, void **fn)
{
	if (!c || !r || !r->cubin || !entry || !fn)
		return fail(TG_ERR_ARG, "tg_context_function: NULL argument or no cubin");
	CUmodule m = NULL;
	TgStatus st = module_get(c, r, &m);
	if (st)
		return st;
	CUfunction f;
	CU(cu.cuModuleGetFunction(&f, m, entry), entry);
	*fn = (void *)f;
	return TG_OK;
}

/* A generated kernel's launch for cold_time. */
typedef struct ColdKernel { TgLayer *l; const Kernel *k; CUfunction f; int resident; } ColdKernel;
static TgStatus launch_cold_kernel(void *arg, CUstream s)
{
	const ColdKernel *a = arg;
	return launch_kernel(a->l, a->k, a->f, a->resident, s);
}

/* A device-to-device copy of n bytes for cold_time (tg_context_time_copy). */
typedef struct ColdCopy { CUdeviceptr src, dst; size_t n; } ColdCopy;
static TgStatus launch_cold_copy(void *arg, CUstream s)
{
	const ColdCopy *a = arg;
	CUresult r = cu.cuMemcpyDtoDAsync_v2(a->dst, a->src, a->n, s);
	return r ? fail(TG_ERR_CUDA, "copying %zu bytes: %s", a->n, cudrv_errstr(r)) : TG_OK;
}

/* cold_time (cold_time.h) with the context's flush kernel and buffer, made at the first call. */
static TgStatus time_cold(TgContext *c, ColdLaunch launch, void *arg, int iters, float *median_us)
{
	char err[512];
	if (!c->cold_read) {
		void *fn = NULL;
		TgStatus st = builtin_function(c, cold_read_entry, cold_read_src, "tegen_cold_read.cu", &fn, err, sizeof err);
		if (st)
			return err[0] ? fail(st, "the timing's L2 flush kernel: %s", err) : st;
		if ((st = cold_flush_alloc(c->dev, &c->cold_buf, &c->cold_bytes, err, sizeof err)))
			return fail(st, "%s", err);
		c->cold_read = (CUfunction)fn;
	}
	TgStatus st = cold_time(c->cold_read, c->cold_buf, c->cold_bytes, launch, arg, iters, median_us, err, sizeof err);
	return st && err[0] ? fail(st, "%s", err) : st;
}

TgStatus tg_layer_time_kernel(TgLayer *l, int ki, const Kernel *variant, void *fn, int iters, float *median_us,
	double *bytes)
{
	if (!l || ki < 0 || ki >= l->plan->nkernels || iters < 1 || !median_us)
		return fail(TG_ERR_ARG, "tg_layer_time_kernel: bad argument");
	const Kernel *k = variant ? variant : &l->plan->kernels[ki];
	if (k->kind != KERNEL_GENERATED)
		return fail(TG_ERR_ARG, "tg_layer_time_kernel: %s is not a generated kernel", k->name);
	if (!l->loaded)
		return fail(TG_ERR_ARG, "tg_layer_time_kernel: run layer %s once first (binds and sizes its buffers)", l->g->layer);
	TgStatus st = prepare(l, NULL, PHASE_BIT(k->phase));
	if (st)
		return st;
	CUfunction f = fn ? (CUfunction)fn : l->fn[ki];
	if ((st = allow_dynamic_smem(k, f)))
		return st;
	const int resident = resident_ctas(k, f); /* once a timing, not a launch */
	if (bytes) { /* one read of each input, one write of each output */
		double b = 0;
		for (int i = 0; i < k->nbind; i++) {
			const Binding *bd = &k->bind[i];
			if (bd->tensor < 0)
				continue;
			const Tensor *t = &l->g->tensors[bd->tensor];
			bool state = tensor_comp_in_state(t, bd->comp);
			b += state ? sizeof(float) : (double)layout_comp_bytes(l->dim, t, bd->comp); /* (without padding) */
		}
		*bytes = b;
	}
	ColdKernel ck = {l, k, f, resident};
	return time_cold(l->ctx, launch_cold_kernel, &ck, iters, median_us);
}

TgStatus tg_context_time_copy(TgContext *c, size_t bytes, int iters, float *median_us)
{
	if (!c || !bytes || iters < 1 || !median_us)
		return fail(TG_ERR_ARG, "tg_context_time_copy: bad argument");
	ColdCopy cc = {0, 0, bytes};
	CUresult r = cu.cuMemAlloc_v2(&cc.src, bytes);
	if (!r && (r = cu.cuMemAlloc_v2(&cc.dst, bytes)) == 0)
		r = cu.cuMemsetD8Async(cc.src, 1, bytes, NULL);
	TgStatus st = r ? fail(TG_ERR_CUDA, "tg_context_time_copy: %zu bytes: %s", bytes, cudrv_errstr(r))
	                : time_cold(c, launch_cold_copy, &cc, iters, median_us);
	if (cc.src)
		cu.cuMemFree_v2(cc.src);
	if (cc.dst)
		cu.cuMemFree_v2(cc.dst);
	return st;
}
