/* optim.h: the CPU reference of the optimizer (AdamW), bit-exact with adamw.cu:
 * the per-element formula is templates/tg_optim.h's, the optimizer state is the
 * TG_OPTIM_* words of tg_codes.h (lr, step as uint32 bits, beta1^step, beta2^step). */
#ifndef REF_OPTIM_H
#define REF_OPTIM_H

#include <stddef.h>

#include "ref.h"
#include "tg_optim.h"

/* AdamW's compiled-in hyperparameters (the spec's optimizer, lr aside). */
typedef struct RefAdamw { float beta1, beta2, eps, weight_decay; } RefAdamw;

/* ref_optim_init writes a fresh optimizer state: lr, step 0, beta powers 1. */
void ref_optim_init(float state[TG_OPTIM_WORDS], float lr);
/* ref_adamw updates n elements of one weight as adamw.cu does: w (dtype REF_*) is read
 * at step 0 (master = w, m = v = 0) and written with the new value rounded to its dtype;
 * master, m, v are FP32 [n]; grad FP32 [n]. state is read, not advanced. */
void ref_adamw(const RefAdamw *h, const float state[TG_OPTIM_WORDS], void *w, int w_dtype, const float *grad,
	float *master, float *m, float *v, size_t n);
/* ref_optim_step advances the state after every update of a step (adamw.cu TG_MODE 1). */
void ref_optim_step(const RefAdamw *h, float state[TG_OPTIM_WORDS]);
/* ref_adamw_double is the textbook AdamW of one element in double (torch.optim.AdamW,
 * bias corrections with pow), step t >= 1; for tests of the FP32 definition. */
double ref_adamw_double(double lr, double beta1, double beta2, double eps, double wd, int t, double p, double g,
	double *m, double *v);

#endif
