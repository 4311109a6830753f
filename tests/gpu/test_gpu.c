/* test_gpu.c: the GPU tests. Every spec in tests/gpu/specs/ (each op x
 * recipe x output layout), at several row lengths (the @H@ placeholder) and
 * odd token counts, runs on the GPU and is compared with the CPU reference
 * under the numerics contract (cli/check.c). Also: ten steps of delayed
 * scaling against the reference state machine, and a CUDA-graph capture whose
 * replay gives identical bytes. Without a GPU every case reports "skip". */
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
			if (!strncmp(p, "FAIL", 4))
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
static void test_delayed_steps(TgContext *ctx, const char *spec_text)
{
	TgLayer *l;
	char err[2048];
	Buf log = {0};
	if (tg_layer_create(ctx, "delayed_steps", spec_text, strlen(spec_text), &l) || tg_layer_load(l)) {
		printf("FAIL gpu/delayed-10-steps: %s\n", tg_last_error());
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
			printf("FAIL gpu/delayed-10-steps: %s\n", err);
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
				printf("FAIL gpu/delayed-10-steps: step %d, state float %zu: gpu %.9g ref %.9g\n", step, i, h[i], ref[i]);
				bad = 1;
				break;
			}
	}
	if (!bad)
		printf("ok gpu/delayed-10-steps (%d tensors, history %d)\n", lay.delayed, lay.history);
	failed |= bad;
	free(h);
	free(ref);
	buf_free(&log);
	tg_layer_destroy(l);
}

/* Capture one run into a CUDA graph; replays must give the bytes of a plain run. */
static void test_graph_capture(TgContext *ctx, const char *spec_text)
{
	TgLayer *l;
	char err[2048];
	Buf log = {0};
	const char *name = "gpu/cuda-graph-replay";
	if (tg_layer_create(ctx, "graph", spec_text, strlen(spec_text), &l) || tg_layer_load(l)) {
		printf("FAIL %s: %s\n", name, tg_last_error());
		failed = 1;
		return;
	}
	CheckKeep keep = {0};
	if (check_layer(l, 336, 7, 1, &keep, &log, err, sizeof err) < 0) { /* binds inputs and runs once */
		printf("FAIL %s: %s\n", name, err);
		failed = 1;
		goto out;
	}
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
	void *graph = NULL, *exec = NULL;
	int ok = !cu.cuStreamBeginCapture_v2(s, 0);
	TgStatus st = tg_run(l, (TgStream)s);
	ok &= !cu.cuStreamEndCapture(s, &graph) && st == TG_OK;
	ok &= !cu.cuGraphInstantiateWithFlags(&exec, graph, 0);
	for (int i = 0; ok && i < 3; i++)
		ok &= !cu.cuGraphLaunch(exec, s);
	cu.cuStreamSynchronize(s);
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
	buf_free(&log);
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
	char *delayed_text = NULL, *optim_text = NULL;
	for (int i = 0; i < nn; i++) {
		char path[512];
		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		char *text = read_text(path);
		if (!text)
			continue;
		long hs[8] = {160, 256, 512, 4096}, tokens[8] = {1, 5, 217, 993};
		int nh = directive(text, "# test-hidden:", hs, 8), ntok = directive(text, "# test-tokens:", tokens, 8);
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
				int f = check_layer(l, tk, (unsigned)(ti + 11 * hi), 1, NULL, &log, err, sizeof err);
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
			free(spec);
		}
		free(text);
		free(names[i]);
	}
	if (delayed_text) {
		test_delayed_steps(ctx, delayed_text);
		test_graph_capture(ctx, delayed_text);
		free(delayed_text);
	} else
		printf("skip gpu/delayed-10-steps: no *delayed* spec in %s\n", dir);
	if (optim_text) {
		test_optimizer_schedule(ctx, optim_text);
		free(optim_text);
	} else
		printf("skip gpu/optimizer-schedule: no optim_adamw.yaml in %s\n", dir);
	tg_context_destroy(ctx);
	return failed;
}
