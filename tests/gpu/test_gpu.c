/* test_gpu.c: the GPU tests. Every spec in tests/gpu/specs/ (each op x
 * recipe x output layout), at several row lengths (the @H@ placeholder) and
 * odd token counts, runs on the GPU and is compared with the CPU reference
 * under the numerics contract (cli/check.c). Also: ten steps of delayed
 * scaling against the reference state machine, and a CUDA-graph capture whose
 * replay gives identical bytes; for a training layer, the phases: tg_run needs no
 * output gradient, tg_backward does, and tg_run + tg_backward captured into one
 * CUDA graph replay to the bytes of plain calls. Without a GPU every case reports "skip". */
#include "check.h"
#include "cudrv.h"
#include "ref.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *read_text(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *s = malloc((size_t)n + 1);
	if (fread(s, 1, (size_t)n, f) != (size_t)n)
		n = 0;
	s[n] = 0;
	fclose(f);
	return s;
}

/* Replace every @H@ in text with h. */
static char *subst(const char *text, long h)
{
	char num[32];
	snprintf(num, sizeof num, "%ld", h);
	Buf b = {0};
	for (const char *p = text; *p;) {
		if (!strncmp(p, "@H@", 3)) {
			buf_puts(&b, num);
			p += 3;
		} else
			buf_putn(&b, p++, 1);
	}
	return b.p;
}

/* Numbers after a "# KEY:" directive line (e.g. "# test-tokens: 1 5 217"); returns how many. */
static int directive(const char *text, const char *key, long *out, int max)
{
	const char *p = strstr(text, key);
	int n = 0;
	if (!p)
		return 0;
	p += strlen(key);
	while (*p && *p != '\n' && n < max) {
		char *e;
		long v = strtol(p, &e, 10);
		if (e == p) {
			p++;
			continue;
		}
		out[n++] = v;
		p = e;
	}
	return n;
}

static int cmpstr(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int failed;

static void report(const char *name, int fails, const Buf *log, const char *err)
{
	if (fails < 0) {
		printf("FAIL %s: %s\n", name, err);
		failed = 1;
	} else if (fails) {
		printf("FAIL %s: %d comparisons failed\n", name, fails);
		for (const char *p = log->p; p && *p;) {
			const char *e = strchr(p, '\n');
			const char *f = p;
			while (*f == ' ')
				f++;
			if (!strncmp(f, "FAIL", 4)) /* check.c's lines, and its indented ones (the epilogues without D) */
				printf("    %.*s\n", (int)(e ? e - p : (long)strlen(p)), p);
			p = e ? e + 1 : p + strlen(p);
		}
		failed = 1;
	} else {
		int n = 0;
		for (const char *p = log->p; p && (p = strstr(p, "ok ")); p += 3)
			n++;
		printf("ok %s (%d comparisons)\n", name, n);
	}
}

/* Ten runs and steps of delayed scaling; the state after each step must equal the reference state machine. */
/* Ten runs, each followed by tg_step, against the reference state machine; a training
 * layer runs tg_run + tg_backward, so its gradients' slots (E5M2) step too. */
static void test_delayed_steps(TgContext *ctx, const char *spec_text, const char *name)
{
	TgLayer *l;
	char err[2048];
	Buf log = {0};
	if (tg_layer_create(ctx, "delayed_steps", spec_text, strlen(spec_text), &l) || tg_layer_load(l)) {
		printf("FAIL %s: %s\n", name, tg_last_error());
		failed = 1;
		return;
	}
	void *state;
	size_t bytes;
	TgStateLayout lay;
	tg_state(l, &state, &bytes, &lay);
	size_t nf = bytes / 4;
	float *h = malloc(bytes), *ref = malloc(bytes);
	cu.cuMemcpyDtoH_v2(ref, (CUdeviceptr)(uintptr_t)state, bytes);
	int bad = 0;
	for (int step = 0; step < 10 && !bad; step++) {
		if (check_layer(l, 64 + 16 * step, (unsigned)step, 1, NULL, &log, err, sizeof err) < 0) {
			printf("FAIL %s: %s\n", name, err);
			bad = 1;
			break;
		}
		/* check_layer set new scales; take the state as the run left it, step on both sides */
		cu.cuCtxSynchronize();
		cu.cuMemcpyDtoH_v2(ref, (CUdeviceptr)(uintptr_t)state, bytes);
		tg_step(l, NULL);
		cu.cuCtxSynchronize();
		cu.cuMemcpyDtoH_v2(h, (CUdeviceptr)(uintptr_t)state, bytes);
		int n = lay.tensors, L = lay.history;
		const Graph *g = tg_layer_plan(l)->g;
		for (int s = 0; s < lay.delayed; s++) {
			const Tensor *t = NULL;
			for (int k = 0; k < g->ntensors; k++)
				if (g->tensors[k].state_slot == s)
					t = &g->tensors[k];
			float *hist = malloc(sizeof(float) * (size_t)L);
			for (int j = 0; j < L; j++)
				hist[j] = ref[lay.history_offset + (size_t)j * n + s];
			RefDelayed st = {hist, t->recipe.history, t->recipe.margin, t->recipe.amax_algo == AMAX_MOST_RECENT,
				tg_fmt_max(t->dtype == DT_E5M2 ? TG_FMT_E5M2 : TG_FMT_E4M3), ref[lay.scale + lay.stride * s],
				ref[lay.scale_inv + lay.stride * s]};
			ref_delayed_step(&st, 0.0f);
			ref[lay.scale + lay.stride * s] = st.scale;
			ref[lay.scale_inv + lay.stride * s] = st.scale_inv;
			for (int j = 0; j < L; j++)
				ref[lay.history_offset + (size_t)j * n + s] = hist[j];
			free(hist);
		}
		for (size_t i = 0; i < nf; i++)
			if (memcmp(&h[i], &ref[i], 4)) {
				printf("FAIL %s: step %d, state float %zu: gpu %.9g ref %.9g\n", name, step, i, h[i], ref[i]);
				bad = 1;
				break;
			}
	}
	if (!bad)
		printf("ok %s (%d tensors, history %d)\n", name, lay.delayed, lay.history);
	failed |= bad;
	free(h);
	free(ref);
	buf_free(&log);
	tg_layer_destroy(l);
}

/* A layer of spec_text for a graph test, with its inputs bound and one checked run done (check_layer);
 * NULL (and FAIL name printed) when that fails. The caller frees keep and destroys the layer. */
static TgLayer *graph_test_layer(TgContext *ctx, const char *name, const char *spec_text, CheckKeep *keep)
{
	TgLayer *l;
	char err[2048];
	Buf log = {0};
	if (tg_layer_create(ctx, name, spec_text, strlen(spec_text), &l) || tg_layer_load(l)) {
		printf("FAIL gpu/%s: %s\n", name, tg_last_error());
		failed = 1;
		return NULL;
	}
	int r = check_layer(l, 336, 7, 1, keep, &log, err, sizeof err); /* binds inputs and runs once */
	buf_free(&log);
	if (r < 0) {
		printf("FAIL gpu/%s: %s\n", name, err);
		failed = 1;
		check_keep_free(keep);
		tg_layer_destroy(l);
		return NULL;
	}
	return l;
}

/* Captures tg_run (and with bwd tg_backward) of l on stream s into a CUDA graph and replays it three times, then
 * synchronizes; *graph and *exec are for the caller to destroy, *st the layer's status. 1 when every step succeeded. */
static int capture_and_replay(TgLayer *l, CUstream s, int bwd, void **graph, void **exec, TgStatus *st)
{
	*graph = *exec = NULL;
	int ok = !cu.cuStreamBeginCapture_v2(s, 0);
	*st = tg_run(l, (TgStream)s);
	if (bwd && *st == TG_OK)
		*st = tg_backward(l, (TgStream)s);
	ok &= !cu.cuStreamEndCapture(s, graph) && *st == TG_OK;
	ok &= !cu.cuGraphInstantiateWithFlags(exec, *graph, 0);
	for (int i = 0; ok && i < 3; i++)
		ok &= !cu.cuGraphLaunch(*exec, s);
	cu.cuStreamSynchronize(s);
	return ok;
}

/* A training step (tg_run + tg_backward, which holds the dreduce kernels launched with programmatic stream
 * serialization) captured into a CUDA graph: after three replays every produced tensor's data must hold the
 * bytes of a plain step. */
static void test_graph_capture_step(TgContext *ctx, const char *spec_text)
{
	const char *name = "gpu/cuda-graph-replay/training-step";
	CheckKeep keep = {0};
	TgLayer *l = graph_test_layer(ctx, "graph_step", spec_text, &keep);
	if (!l)
		return;
	const Graph *g = tg_layer_plan(l)->g;
	CUstream s;
	cu.cuStreamCreate(&s, 1);
	tg_run(l, (TgStream)s);
	tg_backward(l, (TgStream)s);
	cu.cuStreamSynchronize(s);
	void **plain = calloc((size_t)g->ntensors, sizeof *plain);
	size_t total = 0;
	for (int i = 0; i < g->ntensors; i++) {
		void *dp;
		size_t bytes;
		if (g->tensors[i].producer < 0 || tg_layer_tensor_component(l, i, COMP_DATA, &dp, &bytes) || !bytes)
			continue;
		plain[i] = malloc(bytes);
		cu.cuMemcpyDtoH_v2(plain[i], (CUdeviceptr)(uintptr_t)dp, bytes);
		cu.cuMemsetD8_v2((CUdeviceptr)(uintptr_t)dp, 0xAB, bytes);
		total += bytes;
	}
	void *graph, *exec;
	TgStatus st;
	int ok = capture_and_replay(l, s, 1, &graph, &exec, &st);
	int differ = -1;
	for (int i = 0; ok && i < g->ntensors && differ < 0; i++) {
		void *dp;
		size_t bytes;
		if (!plain[i] || tg_layer_tensor_component(l, i, COMP_DATA, &dp, &bytes))
			continue;
		void *h = malloc(bytes);
		cu.cuMemcpyDtoH_v2(h, (CUdeviceptr)(uintptr_t)dp, bytes);
		if (memcmp(h, plain[i], bytes))
			differ = i;
		free(h);
	}
	if (!ok)
		printf("FAIL %s: capture failed (%s)\n", name, st ? tg_last_error() : "graph API");
	else if (differ >= 0)
		printf("FAIL %s: %s after replays differs from a plain step\n", name, g->tensors[differ].name);
	else
		printf("ok %s (%zu bytes of produced tensors identical after 3 replays)\n", name, total);
	failed |= !ok || differ >= 0;
	for (int i = 0; i < g->ntensors; i++)
		free(plain[i]);
	free(plain);
	if (exec)
		cu.cuGraphExecDestroy(exec);
	if (graph)
		cu.cuGraphDestroy(graph);
	cu.cuStreamDestroy_v2(s);
	check_keep_free(&keep);
	tg_layer_destroy(l);
}

/* Capture one run into a CUDA graph; replays must give the bytes of a plain run. */
static void test_graph_capture(TgContext *ctx, const char *spec_text)
{
	const char *name = "gpu/cuda-graph-replay";
	CheckKeep keep = {0};
	TgLayer *l = graph_test_layer(ctx, "graph", spec_text, &keep);
	if (!l)
		return;
	const Plan *p = tg_layer_plan(l);
	const Graph *g = p->g;
	/* outputs of the plain run */
	int out_t = -1;
	for (int i = g->ntensors - 1; i >= 0 && out_t < 0; i--)
		if (g->tensors[i].producer >= 0)
			out_t = i;
	void *dp;
	size_t bytes;
	if (out_t < 0 || tg_layer_tensor_component(l, out_t, COMP_DATA, &dp, &bytes)) {
		printf("skip %s: spec has no produced rowwise tensor\n", name);
		goto out;
	}
	CUstream s;
	cu.cuStreamCreate(&s, 1);
	void *a = malloc(bytes), *b = malloc(bytes);
	tg_run(l, (TgStream)s);
	cu.cuStreamSynchronize(s);
	cu.cuMemcpyDtoH_v2(a, (CUdeviceptr)(uintptr_t)dp, bytes);
	cu.cuMemsetD8_v2((CUdeviceptr)(uintptr_t)dp, 0xAB, bytes);
	void *graph, *exec;
	TgStatus st;
	int ok = capture_and_replay(l, s, 0, &graph, &exec, &st);
	cu.cuMemcpyDtoH_v2(b, (CUdeviceptr)(uintptr_t)dp, bytes);
	if (!ok)
		printf("FAIL %s: capture failed (%s)\n", name, st ? tg_last_error() : "graph API");
	else if (memcmp(a, b, bytes))
		printf("FAIL %s: replay bytes differ from a plain run\n", name);
	else
		printf("ok %s (%zu bytes identical after 3 replays)\n", name, bytes);
	failed |= !ok || memcmp(a, b, bytes);
	/* compiling while capturing is refused */
	TgLayer *l2;
	if (!tg_layer_create(ctx, "graph2", spec_text, strlen(spec_text), &l2)) {
		cu.cuStreamBeginCapture_v2(s, 0);
		TgStatus st2 = tg_run(l2, (TgStream)s);
		void *g2 = NULL;
		cu.cuStreamEndCapture(s, &g2);
		if (g2)
			cu.cuGraphDestroy(g2);
		printf("%s gpu/no-compile-while-capturing (status %d: %.80s)\n", st2 == TG_ERR_CAPTURING ? "ok" : "FAIL", st2,
			tg_last_error());
		failed |= st2 != TG_ERR_CAPTURING;
		tg_layer_destroy(l2);
	}
	if (exec)
		cu.cuGraphExecDestroy(exec);
	if (graph)
		cu.cuGraphDestroy(graph);
	cu.cuStreamDestroy_v2(s);
	free(a);
	free(b);
out:
	check_keep_free(&keep);
	tg_layer_destroy(l);
}

/* A learning-rate schedule without recompiling: tg_set_learning_rate before each step;
 * the state must hold that lr and the step count after it, and every update checks
 * bit for bit against the reference at that lr (check_layer reads the state). */
static void test_optimizer_schedule(TgContext *ctx, const char *spec_text)
{
	TgLayer *l;
	if (tg_layer_create(ctx, "optim_schedule", spec_text, strlen(spec_text), &l) || tg_layer_load(l)) {
		printf("FAIL gpu/optimizer-schedule: %s\n", tg_last_error());
		failed = 1;
		return;
	}
	int bad = tg_optimizer_step(l, NULL) != TG_ERR_ARG; /* before the first run */
	for (int step = 0; step < 4 && !bad; step++) {
		float lr = 1e-2f / (float)(1 + step), st[TG_OPTIM_WORDS];
		Buf log = {0};
		char err[2048] = "";
		bad |= tg_set_learning_rate(l, lr, NULL) != TG_OK;
		int f = check_layer(l, 48 + 32 * step, (unsigned)(100 + step), 1, NULL, &log, err, sizeof err);
		char name[64];
		snprintf(name, sizeof name, "gpu/optimizer-schedule/step%d", step + 1);
		report(name, f, &log, err);
		buf_free(&log);
		cu.cuCtxSynchronize();
		cu.cuMemcpyDtoH_v2(st, (CUdeviceptr)(uintptr_t)tg_layer_optim_state(l), sizeof st);
		uint32_t n;
		memcpy(&n, &st[TG_OPTIM_STEP], 4);
		if (st[TG_OPTIM_LR] != lr || n != (uint32_t)step + 1) {
			printf("FAIL gpu/optimizer-schedule: after step %d the state holds lr %g step %u (want %g, %d)\n", step + 1,
				(double)st[TG_OPTIM_LR], n, (double)lr, step + 1);
			bad = 1;
		}
	}
	bad |= tg_set_learning_rate(l, -1.0f, NULL) != TG_ERR_ARG;
	printf("%s gpu/optimizer-schedule/state\n", bad ? "FAIL" : "ok");
	failed |= bad;
	tg_layer_destroy(l);
}

/* Bind every layer input of l at `tokens` (bytes 0x3E: small finite values) but the
 * output gradients (role gradient); their buffers go to bufs[tensor id]. */
static int bind_inputs(TgLayer *l, long tokens, CUdeviceptr *bufs, bool gradients)
{
	const Graph *g = tg_layer_plan(l)->g;
	long dims[16];
	for (int d = 0; d < g->ndims && d < 16; d++)
		dims[d] = g->dims[d].value < 0 ? tokens : g->dims[d].value;
	for (int i = 0; i < g->ntensors; i++) {
		const Tensor *t = &g->tensors[i];
		if (t->producer >= 0 || (t->role == ROLE_GRADIENT) != gradients)
			continue;
		TgTensorDesc desc = {0, (TgDtype)0, t->rank, {0}, {0}};
		desc.dtype = t->dtype == DT_F32 ? TG_FP32 : t->dtype == DT_F16 ? TG_FP16 : TG_BF16;
		size_t n = 1;
		for (int k = 0; k < t->rank; k++)
			n *= (size_t)(desc.shape[k] = layout_extent(dims, t->shape[k]));
		size_t bytes = n * (size_t)dtype_bits(t->dtype) / 8;
		if (!bufs[i] && cu.cuMemAlloc_v2(&bufs[i], bytes ? bytes : 16))
			return -1;
		cu.cuMemsetD8_v2(bufs[i], 0x3E, bytes);
		desc.data = (void *)(uintptr_t)bufs[i];
		if (tg_bind(l, t->name, &desc))
			return -1;
	}
	return 0;
}

/* tg_layer_cache_weights under recipe (a YAML flow map): a weight changed in place is not cast again until it
 * is bound again (or the cache is off); the output follows the weight's copy (under MXFP8 and NVFP4 on Hopper,
 * through the BF16 operand its cast or a dequantize kernel writes for the emulated GEMM). */
static void test_cache_weights(TgContext *ctx, const char *recipe, const char *name)
{
	char spec[512];
	snprintf(spec, sizeof spec, "layer: cache_w\ndims: {tokens: dynamic, h: 256, f: 384}\n"
		"recipe: %s\ntensors:\n  x: {shape: [tokens, h], dtype: bf16}\n"
		"  w: {shape: [f, h], dtype: bf16, role: weight}\nops:\n  - quantize: {in: x, out: xq}\n"
		"  - quantize: {in: w, out: wq}\n  - gemm_cast: {a: xq, b: wq, out: y, dtype: bf16}\noutputs: [y]\n", recipe);
	const long tokens = 64;
	TgLayer *l = NULL;
	if (tg_layer_create(ctx, "cache_w", spec, strlen(spec), &l) || tg_layer_set_tokens(l, tokens) || tg_layer_load(l) ||
		tg_layer_cache_weights(l, 1)) {
		printf("FAIL %s: %s\n", name, tg_last_error());
		failed = 1;
		tg_layer_destroy(l);
		return;
	}
	const Graph *g = tg_layer_plan(l)->g;
	CUdeviceptr *bufs = calloc((size_t)g->ntensors, sizeof *bufs);
	int w = -1;
	for (int i = 0; i < g->ntensors; i++)
		if (!strcmp(g->tensors[i].name, "w"))
			w = i;
	size_t wbytes = 384 * 256 * 2, ybytes = (size_t)tokens * 384 * 2;
	unsigned short *y[4] = {NULL, NULL, NULL, NULL};
	const char *why = NULL;
	for (int r = 0; r < 4 && !why; r++) {
		y[r] = malloc(ybytes);
		if (r == 0 && bind_inputs(l, tokens, bufs, false))
			why = tg_last_error();
		if (r == 1 || r == 3) /* the weight's contents change in place: 3.0 (0x4040) in run 1, 0.185 (0x3E3E) in run 3 */
			cu.cuMemsetD8_v2(bufs[w], r == 1 ? 0x40 : 0x3E, wbytes);
		if (r == 2) { /* bound again: the next run casts it */
			TgTensorDesc desc = {(void *)(uintptr_t)bufs[w], TG_BF16, 2, {384, 256}, {0}};
			if (tg_bind(l, "w", &desc))
				why = tg_last_error();
		}
		if (r == 3)
			tg_layer_cache_weights(l, 0);
		void *dp;
		size_t n;
		if (!why && (tg_run(l, NULL) || cu.cuCtxSynchronize() || tg_tensor_ptr(l, "y", "data", &dp, &n) || n != ybytes))
			why = tg_last_error();
		if (!why)
			cu.cuMemcpyDtoH_v2(y[r], (CUdeviceptr)(uintptr_t)dp, ybytes);
	}
	/* run 1 (weight changed, not bound again) = run 0; run 2 (bound again: 3.0) != run 0; run 3 (cache off,
	 * weight back to 0.185) = run 0 */
	if (!why && memcmp(y[1], y[0], ybytes))
		why = "a weight changed in place was cast again while cached";
	if (!why && !memcmp(y[2], y[0], ybytes))
		why = "a weight bound again was not cast again";
	if (!why && memcmp(y[3], y[0], ybytes))
		why = "with the cache off the weight was not cast";
	printf(why ? "FAIL %s: %s\n" : "ok   %s\n", name, why ? why : "");
	failed |= why != NULL;
	for (int r = 0; r < 4; r++)
		free(y[r]);
	for (int i = 0; i < g->ntensors; i++)
		if (bufs[i])
			cu.cuMemFree_v2(bufs[i]);
	free(bufs);
	tg_layer_destroy(l);
}

/* The phase entry points of a training layer (derived_text) and a forward layer (fwd_text). */
static void test_phases(TgContext *ctx, const char *derived_text, const char *fwd_text)
{
	TgLayer *l = NULL, *f = NULL;
	if (tg_layer_create(ctx, "phases", derived_text, strlen(derived_text), &l) || tg_layer_load(l)) {
		printf("FAIL gpu/phases: %s\n", tg_last_error());
		failed = 1;
		tg_layer_destroy(l);
		return;
	}
	const Graph *g = tg_layer_plan(l)->g;
	CUdeviceptr *bufs = calloc((size_t)g->ntensors, sizeof *bufs);
	int y = -1, dw = -1; /* a forward output and a weight gradient (FP32, written by a wgrad GEMM) */
	for (int i = 0; i < g->ntensors; i++) {
		if (g->tensors[i].output && g->tensors[i].producer >= 0 && g->ops[g->tensors[i].producer].phase == PHASE_FORWARD)
			y = y < 0 ? i : y;
		if (g->tensors[i].producer >= 0 && g->ops[g->tensors[i].producer].kind == OP_GEMM_CAST &&
			g->ops[g->tensors[i].producer].p.pass == PASS_WGRAD)
			dw = i;
	}
	TgStatus st = bind_inputs(l, 80, bufs, false) ? TG_ERR_BINDING : tg_run(l, NULL);
	printf("%s gpu/phases/run-without-output-gradients (status %d%s%.80s)\n", st == TG_OK ? "ok" : "FAIL", st,
		st ? ": " : "", st ? tg_last_error() : "");
	failed |= st != TG_OK;
	TgStatus sb = tg_backward(l, NULL);
	printf("%s gpu/phases/backward-needs-output-gradients (status %d: %.80s)\n", sb == TG_ERR_BINDING ? "ok" : "FAIL",
		sb, tg_last_error());
	failed |= sb != TG_ERR_BINDING;
	void *py, *pw;
	size_t ny = 0, nw = 0;
	if (st || y < 0 || dw < 0 || bind_inputs(l, 80, bufs, true) || tg_layer_tensor_component(l, y, COMP_DATA, &py, &ny)) {
		printf("FAIL gpu/phases/backward: no forward output or weight gradient, or binding failed (%.80s)\n",
			tg_last_error());
		failed = 1;
		goto out;
	}
	unsigned char *y0 = malloc(ny), *y1 = malloc(ny), *w0 = NULL, *w1 = NULL;
	cu.cuMemcpyDtoH_v2(y0, (CUdeviceptr)(uintptr_t)py, ny);
	sb = tg_backward(l, NULL);
	cu.cuCtxSynchronize();
	cu.cuMemcpyDtoH_v2(y1, (CUdeviceptr)(uintptr_t)py, ny);
	int ok = sb == TG_OK && !memcmp(y0, y1, ny) && !tg_layer_tensor_component(l, dw, COMP_DATA, &pw, &nw);
	printf("%s gpu/phases/backward (status %d, forward output '%s' %s)\n", ok ? "ok" : "FAIL", sb,
		g->tensors[y].name, memcmp(y0, y1, ny) ? "changed" : "untouched");
	failed |= !ok;
	if (ok) { /* tg_run + tg_backward in one captured graph: the replay writes the plain calls' bytes */
		CUstream s;
		cu.cuStreamCreate(&s, 1);
		w0 = malloc(nw);
		w1 = malloc(nw);
		cu.cuMemcpyDtoH_v2(w0, (CUdeviceptr)(uintptr_t)pw, nw);
		cu.cuMemsetD8_v2((CUdeviceptr)(uintptr_t)pw, 0xAB, nw);
		void *graph = NULL, *exec = NULL;
		ok = !cu.cuStreamBeginCapture_v2(s, 0);
		st = tg_run(l, (TgStream)s);
		sb = st ? st : tg_backward(l, (TgStream)s);
		ok &= !cu.cuStreamEndCapture(s, &graph) && st == TG_OK && sb == TG_OK;
		ok &= !cu.cuGraphInstantiateWithFlags(&exec, graph, 0);
		for (int i = 0; ok && i < 2; i++)
			ok &= !cu.cuGraphLaunch(exec, s);
		cu.cuStreamSynchronize(s);
		cu.cuMemcpyDtoH_v2(w1, (CUdeviceptr)(uintptr_t)pw, nw);
		ok &= !memcmp(w0, w1, nw);
		printf("%s gpu/phases/cuda-graph-forward-backward ('%s', %zu bytes %s)\n", ok ? "ok" : "FAIL",
			g->tensors[dw].name, nw, ok ? "identical after 2 replays" : "differ, or the capture failed");
		failed |= !ok;
		if (exec)
			cu.cuGraphExecDestroy(exec);
		if (graph)
			cu.cuGraphDestroy(graph);
		cu.cuStreamDestroy_v2(s);
	}
	free(y0);
	free(y1);
	free(w0);
	free(w1);
	if (!tg_layer_create(ctx, "forward_only", fwd_text, strlen(fwd_text), &f)) {
		sb = tg_backward(f, NULL);
		printf("%s gpu/phases/no-backward-phase (status %d: %.80s)\n", sb == TG_ERR_ARG ? "ok" : "FAIL", sb,
			tg_last_error());
		failed |= sb != TG_ERR_ARG;
		tg_layer_destroy(f);
	}
out:
	for (int i = 0; i < g->ntensors; i++)
		if (bufs[i])
			cu.cuMemFree_v2(bufs[i]);
	free(bufs);
	tg_layer_destroy(l);
}

int main(int argc, char **argv)
{
	char why[256];
	const char *dir = argc > 1 ? argv[1] : "tests/gpu/specs";
	if (cudrv_load(why, sizeof why)) {
		printf("skip gpu: no GPU (%s)\n", why);
		return 0;
	}
	TgContext *ctx;
	if (tg_context_create(NULL, &ctx)) {
		printf("FAIL gpu/context: %s\n", tg_last_error());
		return 1;
	}
	DIR *d = opendir(dir);
	char *names[256];
	int nn = 0;
	for (struct dirent *e; d && (e = readdir(d)) && nn < 256;)
		if (strstr(e->d_name, ".yaml"))
			names[nn++] = strdup(e->d_name);
	if (d)
		closedir(d);
	qsort(names, (size_t)nn, sizeof *names, cmpstr);
	char *delayed_text = NULL, *optim_text = NULL, *derived_text = NULL;
	for (int i = 0; i < nn; i++) {
		char path[512];
		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		char *text = read_text(path);
		if (!text)
			continue;
		long hs[8] = {160, 256, 512, 4096}, tokens[8] = {1, 5, 217, 993};
		int nh = directive(text, "# test-hidden:", hs, 8), ntok = directive(text, "# test-tokens:", tokens, 8);
		char scales[256] = ""; /* "# test-scales: NAME=VALUE ...": delayed scales other than check_layer's */
		const char *sd = strstr(text, "# test-scales:");
		if (sd)
			sscanf(sd + strlen("# test-scales:"), " %255[^\n]", scales);
		CheckKeep keep = {0};
		keep.scales = scales;
		nh = nh ? nh : 4;
		ntok = ntok ? ntok : 4;
		for (int hi = 0; hi < nh; hi++) {
			char *spec = subst(text, hs[hi]);
			TgLayer *l;
			char name[256];
			snprintf(name, sizeof name, "gpu/%s/H=%ld", names[i], hs[hi]);
			if (tg_layer_create(ctx, path, spec, strlen(spec), &l) || tg_layer_load(l)) {
				printf("FAIL %s: %s\n", name, tg_last_error());
				failed = 1;
				free(spec);
				continue;
			}
			for (int ti = 0; ti < ntok; ti++) {
				long tk = tokens[ti];
				if (tk > 4096 && hs[hi] != 4096)
					continue; /* the largest token count only at the largest row length */
				Buf log = {0};
				char err[2048] = "";
				int f = check_layer(l, tk, (unsigned)(ti + 11 * hi), 1, scales[0] ? &keep : NULL, &log, err, sizeof err);
				check_keep_free(&keep);
				char cname[300];
				snprintf(cname, sizeof cname, "%s/tokens=%ld", name, tk);
				report(cname, f, &log, err);
				buf_free(&log);
			}
			tg_layer_destroy(l);
			if (strstr(names[i], "delayed") && hs[hi] == 256 && !delayed_text)
				delayed_text = strdup(spec);
			if (!strcmp(names[i], "optim_adamw.yaml") && !optim_text)
				optim_text = strdup(spec);
			if (!strcmp(names[i], "bwd_derived.yaml") && hs[hi] == 256 && !derived_text)
				derived_text = strdup(spec);
			free(spec);
		}
		free(text);
		free(names[i]);
	}
	if (delayed_text && derived_text) {
		test_phases(ctx, derived_text, delayed_text);
		test_delayed_steps(ctx, derived_text, "gpu/delayed-10-steps/training");
		test_graph_capture_step(ctx, derived_text);
	} else
		printf("skip gpu/phases: no bwd_derived.yaml or *delayed* spec in %s\n", dir);
	free(derived_text);
	if (delayed_text) {
		test_delayed_steps(ctx, delayed_text, "gpu/delayed-10-steps");
		test_graph_capture(ctx, delayed_text);
		free(delayed_text);
	} else
		printf("skip gpu/delayed-10-steps: no *delayed* spec in %s\n", dir);
	test_cache_weights(ctx, "{scaling: delayed, format: hybrid}", "gpu/cache-weights");
	test_cache_weights(ctx, "{scaling: mxfp8}", "gpu/cache-weights-mxfp8");
	test_cache_weights(ctx, "{scaling: nvfp4}", "gpu/cache-weights-nvfp4");
	if (optim_text) {
		test_optimizer_schedule(ctx, optim_text);
		free(optim_text);
	} else
		printf("skip gpu/optimizer-schedule: no optim_adamw.yaml in %s\n", dir);
	tg_context_destroy(ctx);
	return failed;
}
