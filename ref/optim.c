/* optim.c: the CPU reference of AdamW (see optim.h). The formula is tg_adamw1 of
 * templates/tg_optim.h, compiled here as C11 (no FMA contraction), so the bits are
 * those of adamw.cu. Guarantees: no global state, deterministic. */
#include "optim.h"
#include "parallel.h"

#include <math.h>
#include <string.h>

void ref_optim_init(float state[TG_OPTIM_WORDS], float lr)
{
	uint32_t zero = 0;
	state[TG_OPTIM_LR] = lr;
	memcpy(&state[TG_OPTIM_STEP], &zero, 4);
	state[TG_OPTIM_B1POW] = 1.0f;
	state[TG_OPTIM_B2POW] = 1.0f;
}

typedef struct AdamwJob {
	TgAdamwStep s;
	uint32_t step;
	void *w;
	int w_dtype;
	const float *grad;
	float *master, *m, *v;
} AdamwJob;

/* Elements [i0, i1). */
static void adamw_task(void *ctx, size_t i0, size_t i1)
{
	const AdamwJob *j = ctx;
	for (size_t i = i0; i < i1; i++) {
		if (j->step == 0) {
			j->master[i] = ref_load(j->w, j->w_dtype, i);
			j->m[i] = j->v[i] = 0.0f;
		}
		j->master[i] = tg_adamw1(&j->s, j->master[i], j->grad[i], &j->m[i], &j->v[i]);
		ref_store(j->w, j->w_dtype, i, j->master[i]);
	}
}

void ref_adamw(const RefAdamw *h, const float state[TG_OPTIM_WORDS], void *w, int w_dtype, const float *grad,
	float *master, float *m, float *v, size_t n)
{
	AdamwJob j = {tg_adamw_step(state[TG_OPTIM_LR], state[TG_OPTIM_B1POW], state[TG_OPTIM_B2POW], h->beta1, h->beta2,
		h->eps, h->weight_decay), tg_f2u(state[TG_OPTIM_STEP]), w, w_dtype, grad, master, m, v};
	ref_parallel_chunks(n, REF_TASK_ELEMS, adamw_task, &j);
}

void ref_optim_step(const RefAdamw *h, float state[TG_OPTIM_WORDS])
{
	state[TG_OPTIM_STEP] = tg_u2f(tg_f2u(state[TG_OPTIM_STEP]) + 1u);
	state[TG_OPTIM_B1POW] = tg__mul_rn(state[TG_OPTIM_B1POW], h->beta1);
	state[TG_OPTIM_B2POW] = tg__mul_rn(state[TG_OPTIM_B2POW], h->beta2);
}

double ref_adamw_double(double lr, double beta1, double beta2, double eps, double wd, int t, double p, double g,
	double *m, double *v)
{
	p *= 1 - lr * wd;
	*m = beta1 * *m + (1 - beta1) * g;
	*v = beta2 * *v + (1 - beta2) * g * g;
	double mhat = *m / (1 - pow(beta1, t)), vhat = *v / (1 - pow(beta2, t));
	return p - lr * mhat / (sqrt(vhat) + eps);
}
