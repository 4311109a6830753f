/* test_optim.c: the optimizer (no GPU needed).
 *  - AdamW's FP32 definition (tg_optim.h, ref/optim.c) against a hand computation
 *    of step 1 and against the textbook formula in double over many steps;
 *  - the state: step count and beta powers after ref_optim_step, init from the weight;
 *  - the spec: `optimizer:` parses (defaults, values), its errors at file:line:col,
 *    the derivation of one adamw per weight and the plan's kernels (adamw per weight,
 *    one optim_step), and the emitted source of each.
 * Protocol: ok/FAIL lines, exit 1 on failure. */
#include "check.h"
#include "gen.h"
#include "optim.h"
#include "pipeline.h"
#include "rt_optim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define check(ok, ...) check_line("optim/", ok, __VA_ARGS__)

static const char spec_text[] =
	"layer: tiny\n"
	"dims: {tokens: dynamic, hidden: 64, ffn: 128}\n"
	"recipe: {scaling: delayed, format: hybrid}\n"
	"tensors:\n"
	"  x: {shape: [tokens, hidden], dtype: bf16}\n"
	"  gamma: {shape: [hidden], dtype: bf16, role: weight}\n"
	"  w_up: {shape: [2*ffn, hidden], dtype: bf16, role: weight}\n"
	"  w_down: {shape: [hidden, ffn], dtype: bf16, role: weight}\n"
	"ops:\n"
	"  - norm_quantize: {in: x, gamma: gamma, out: xn}\n"
	"  - quantize: {in: w_up, out: w_up_q}\n"
	"  - gemm_cast: {a: xn, b: w_up_q, out: h, dtype: bf16}\n"
	"  - glu_amax: {in: h, out: act, act: swiglu}\n"
	"  - quantize: {in: w_down, out: w_down_q}\n"
	"  - gemm_cast: {a: act, b: w_down_q, out: y, dtype: bf16}\n"
	"outputs: [y]\n"
	"backward: true\n"
	"optimizer: {kind: adamw, lr: 3e-4, betas: [0.9, 0.95], eps: 1e-8, weight_decay: 0.1}\n";

static void test_hand(void)
{
	/* step 1: m = (1-b1) g, v = (1-b2) g^2, so m_hat = g, v_hat = g^2 and
	 * p1 = p0 (1 - lr wd) - lr g / (|g| + eps) */
	RefAdamw h = {0.9f, 0.95f, 1e-8f, 0.1f};
	float st[TG_OPTIM_WORDS];
	ref_optim_init(st, 1e-3f);
	float w[4] = {0.5f, -0.25f, 2.0f, 0.0f}, g[4] = {0.1f, -3.0f, 1e-6f, 0.5f}, ms[4], m[4], v[4];
	ref_adamw(&h, st, w, REF_F32, g, ms, m, v, 4);
	int bad = 0;
	double worst = 0;
	float w0[4] = {0.5f, -0.25f, 2.0f, 0.0f};
	for (int i = 0; i < 4; i++) {
		double want = w0[i] * (1 - 1e-3 * 0.1) - 1e-3 * g[i] / (fabs((double)g[i]) + 1e-8);
		double e = fabs(ms[i] - want) / (fabs(want) + 1e-6);
		worst = e > worst ? e : worst;
		bad += e > 1e-5 || w[i] != ms[i];
	}
	check(!bad, "hand_step1", "worst relative error %g", worst);
	ref_optim_step(&h, st);
	check(tg_f2u(st[TG_OPTIM_STEP]) == 1 && st[TG_OPTIM_B1POW] == 0.9f && st[TG_OPTIM_B2POW] == 0.95f, "state_step",
		"step %u b1pow %g b2pow %g", tg_f2u(st[TG_OPTIM_STEP]), (double)st[TG_OPTIM_B1POW], (double)st[TG_OPTIM_B2POW]);
}

static void test_vs_double(void)
{
	enum { N = 256, STEPS = 200 };
	RefAdamw h = {0.9f, 0.95f, 1e-8f, 0.1f};
	float st[TG_OPTIM_WORDS];
	ref_optim_init(st, 1e-2f);
	float *w = malloc(N * sizeof *w), *g = malloc(N * sizeof *g), *ms = malloc(N * 4), *m = malloc(N * 4), *v = malloc(N * 4);
	double *dp = malloc(N * sizeof *dp), *dm = calloc(N, sizeof *dm), *dv = calloc(N, sizeof *dv);
	unsigned s = 12345;
	for (int i = 0; i < N; i++) {
		s = s * 1664525u + 1013904223u;
		w[i] = (float)((int)(s >> 8) % 2000 - 1000) / 1000.0f;
		dp[i] = w[i];
	}
	double worst = 0;
	for (int t = 1; t <= STEPS; t++) {
		for (int i = 0; i < N; i++) { /* a gradient toward 0.3 with noise */
			s = s * 1664525u + 1013904223u;
			g[i] = (float)(ms[i] * 0 + (t == 1 ? w[i] : ms[i]) - 0.3f) + (float)((int)(s >> 8) % 200 - 100) / 1000.0f;
		}
		ref_adamw(&h, st, w, REF_F32, g, ms, m, v, N);
		ref_optim_step(&h, st);
		for (int i = 0; i < N; i++) {
			dp[i] = ref_adamw_double(1e-2, 0.9, 0.95, 1e-8, 0.1, t, dp[i], g[i], &dm[i], &dv[i]);
			double e = fabs(ms[i] - dp[i]);
			worst = e > worst ? e : worst;
		}
	}
	/* FP32 rounding through 200 steps of lr 1e-2 on weights ~1 */
	check(worst < 1e-5, "fp32_vs_double_200_steps", "worst absolute difference %g", worst);
	check(tg_f2u(st[TG_OPTIM_STEP]) == STEPS, "state_200_steps", "step %u", tg_f2u(st[TG_OPTIM_STEP]));
	free(w), free(g), free(ms), free(m), free(v), free(dp), free(dm), free(dv);
}

/* BF16 weight: the bound weight is the master rounded to BF16 after each step. */
static void test_bf16(void)
{
	RefAdamw h = {0.9f, 0.999f, 1e-8f, 0.0f};
	float st[TG_OPTIM_WORDS];
	ref_optim_init(st, 1e-3f);
	uint16_t w[2];
	ref_store(w, REF_BF16, 0, 1.0f);
	ref_store(w, REF_BF16, 1, -1.0f);
	float g[2] = {1.0f, 1.0f}, ms[2], m[2], v[2];
	for (int t = 0; t < 3; t++) {
		ref_adamw(&h, st, w, REF_BF16, g, ms, m, v, 2);
		ref_optim_step(&h, st);
	}
	/* constant gradient: each step moves by lr exactly (m_hat = v_hat^0.5 = 1) */
	int ok = fabsf(ms[0] - (1.0f - 3e-3f)) < 1e-6f && fabsf(ms[1] - (-1.0f - 3e-3f)) < 1e-6f &&
		ref_load(w, REF_BF16, 0) == ref_round(ms[0], REF_BF16) && ref_load(w, REF_BF16, 1) == ref_round(ms[1], REF_BF16);
	check(ok, "bf16_weight_rounded_master", "master %g %g weight %g %g", (double)ms[0], (double)ms[1],
		(double)ref_load(w, REF_BF16, 0), (double)ref_load(w, REF_BF16, 1));
}

/* text with `optimizer:` line replaced; returns the message of the error ("" if none). */
static const char *spec_error(Arena *a, const char *text)
{
	Diag d = {0};
	d.file = "t.yaml";
	Graph *g = pipeline_graph(a, &d, "t.yaml", text, strlen(text), (Arch){90, true}, true);
	return g ? "" : arena_strdup(a, d.msg);
}

static char *with_optimizer(Arena *a, const char *line, bool backward)
{
	const char *cut = strstr(spec_text, "backward: true\n");
	return arena_printf(a, "%.*s%s%s\n", (int)(cut - spec_text), spec_text, backward ? "backward: true\n" : "", line);
}

static void test_spec(void)
{
	Arena *a = arena_new();
	Diag d = {0};
	Spec *s = spec_load(a, &d, "t.yaml", spec_text, strlen(spec_text));
	check(s && s->optim.kind == OPTIM_ADAMW && s->optim.lr == 3e-4f && s->optim.beta1 == 0.9f && s->optim.beta2 == 0.95f &&
		s->optim.eps == 1e-8f && s->optim.weight_decay == 0.1f, "spec_values", "%s", s ? "wrong values" : d.msg);
	s = spec_load(a, &d, "t.yaml", with_optimizer(a, "optimizer: {kind: adamw}", true), strlen(with_optimizer(a, "optimizer: {kind: adamw}", true)));
	check(s && s->optim.lr == 1e-3f && s->optim.beta2 == 0.999f && s->optim.weight_decay == 0.01f, "spec_defaults", "%s",
		s ? "wrong defaults" : d.msg);
	static const struct { const char *line; bool backward; const char *want; } errs[] = {
		{"optimizer: {kind: adamw}", false, "t.yaml:17:12: error: optimizer needs backward: true"},
		{"optimizer: {kind: sgd}", true, "t.yaml:18:19: error: unknown optimizer kind 'sgd'"},
		{"optimizer: {lr: 1}", true, "t.yaml:18:12: error: optimizer needs a 'kind' key"},
		{"optimizer: {kind: adamw, betas: [0.9]}", true, "t.yaml:18:33: error: betas needs two numbers"},
		{"optimizer: {kind: adamw, betas: [0.9, 1.0]}", true, "t.yaml:18:39: error: beta2 must be in [0, 1)"},
		{"optimizer: {kind: adamw, lr: -1}", true, "t.yaml:18:30: error: lr must be a finite number >= 0"},
		{"optimizer: {kind: adamw, momentum: 0.9}", true, "t.yaml:18:26: error: unknown key 'momentum' in optimizer"},
	};
	for (size_t i = 0; i < sizeof errs / sizeof errs[0]; i++) {
		const char *msg = spec_error(a, with_optimizer(a, errs[i].line, errs[i].backward));
		check(!strncmp(msg, errs[i].want, strlen(errs[i].want)), arena_printf(a, "spec_error_%zu", i), "got: %s", msg);
	}
	/* a hand-written adamw op */
	const char *hand = arena_printf(a, "%s", spec_text);
	hand = arena_printf(a, "%.*s  - adamw: {in: w_up, grad: x}\n%s", (int)(strstr(hand, "outputs:") - hand), hand,
		strstr(hand, "outputs:"));
	const char *msg = spec_error(a, hand);
	check(strstr(msg, "adamw ops are derived, not written") != NULL, "spec_error_hand_adamw", "got: %s", msg);
	/* a weight without a gradient */
	const char *unused = arena_printf(a, "%.*s  b: {shape: [hidden], dtype: bf16, role: weight}\n%s",
		(int)(strstr(spec_text, "ops:") - spec_text), spec_text, strstr(spec_text, "ops:"));
	msg = spec_error(a, unused);
	check(strstr(msg, "weight 'b' has no derived gradient") != NULL, "spec_error_untrained_weight", "got: %s", msg);
	arena_free(a);
}

static void test_plan(void)
{
	Arena *a = arena_new();
	Diag d = {0};
	Plan *p = pipeline_plan(a, &d, "t.yaml", spec_text, strlen(spec_text), (Arch){90, true}, true, NULL);
	if (!p) {
		check(0, "plan", "%s", d.msg);
		arena_free(a);
		return;
	}
	const Graph *g = p->g;
	int nadamw = 0, step = -1, last_adamw = -1, first_adamw = -1;
	bool in_place = true;
	for (int i = 0; i < g->nops; i++)
		if (g->ops[i].kind == OP_ADAMW) {
			nadamw++;
			in_place &= g->tensors[g->ops[i].arg[ARG_IN]].role == ROLE_WEIGHT && g->ops[i].arg[ARG_OUT] < 0;
			first_adamw = first_adamw < 0 ? i : first_adamw;
		}
	check(nadamw == 3 && in_place && first_adamw == g->nops - 3, "derive_one_per_weight",
		"%d adamw ops (want 3: gamma, w_up, w_down), the first at op %d of %d", nadamw, first_adamw, g->nops);
	for (int i = 0; i < p->nkernels; i++) {
		if (p->kernels[i].tmpl && !strcmp(p->kernels[i].tmpl, "adamw.cu"))
			!strcmp(plan_slot(&p->kernels[i], "TG_MODE"), "1") ? (void)(step = i) : (void)(last_adamw = i);
	}
	check(step >= 0 && step > last_adamw && last_adamw >= 0, "plan_step_after_updates", "optim_step at %d, last adamw at %d",
		step, last_adamw);
	/* the optimizer step's stages: 3 updates, the 2 weight casts (quantize of w_up, w_down), the count */
	int stages[4] = {0};
	for (int i = 0; i < p->nkernels; i++)
		stages[optim_stage(p, &p->kernels[i])]++;
	check(stages[OPTIM_UPDATE] == 3 && stages[OPTIM_WEIGHT_CAST] == 2 && stages[OPTIM_COUNT] == 1, "optim_stages",
		"run %d update %d weight cast %d count %d", stages[0], stages[1], stages[2], stages[3]);
	KernelSource *src;
	int n = pipeline_emit(a, &d, p, &src);
	int found = 0;
	for (int i = 0; i < n; i++)
		if (strstr(src[i].code, "tg_adamw1") && strstr(src[i].code, "TG_BETA2=0.949999988f"))
			found++;
	check(found == 4, "emit_adamw_sources", "%d adamw sources with the slots (want 4)", found);
	arena_free(a);
}

int main(void)
{
	test_hand();
	test_vs_double();
	test_bf16();
	test_spec();
	test_plan();
	return check_failures != 0;
}
