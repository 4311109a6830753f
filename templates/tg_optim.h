/* tg_optim.h: the AdamW update of one weight element, bit-exact on the host and
 * the GPU (adamw.cu and ref/optim.c both call it).
 *
 * Same dual host/device rules as tg_backward.h: FP32 values, every add, multiply,
 * divide and square root rounded to nearest even in the order written, never
 * contracted into an FMA (tg__add_rn ... on the GPU; the host builds with
 * -std=c11). The formula is torch.optim.AdamW's (decoupled weight decay,
 * amsgrad off), step t counted from 1:
 *     p  = p * (1 - lr*wd)
 *     m  = beta1*m + (1-beta1)*g
 *     v  = beta2*v + (1-beta2)*(g*g)
 *     p  = p - (lr / (1 - beta1^t)) * (m / (sqrt(v) / sqrt(1 - beta2^t) + eps))
 * beta1^t and beta2^t are running products kept in the optimizer state
 * (TG_OPTIM_B1POW/B2POW, each step multiplies once), so no pow() enters.
 */
#ifndef TG_OPTIM_H
#define TG_OPTIM_H

#include "tg_codes.h"
#include "tg_formats.h"
#include "tg_recipe.h"

/* Pointer slots of adamw.cu (TgParams.p). */
#define TG_PA_W      0   /* the weight, high precision: read at the first step, written with the new value */
#define TG_PA_GRAD   1   /* its gradient: FP32, BF16 or FP16 (the kernel's TG_G_DTYPE) */
#define TG_PA_MASTER 2   /* FP32 master copy (read, written) */
#define TG_PA_M      3   /* first moment, FP32 */
#define TG_PA_V      4   /* second moment, FP32 */
#define TG_PA_STATE  5   /* the layer's optimizer state, TG_OPTIM_WORDS words (tg_codes.h) */

TG_HD float tg_sqrt_rn(float x)
{
#ifdef __CUDA_ARCH__
	return __fsqrt_rn(x);
#else
	return sqrtf(x);
#endif
}

/* The per-step constants of one update, from the optimizer state (lr, beta powers of
 * the finished steps) and the hyperparameters. */
typedef struct TgAdamwStep {
	float decay;       /* 1 - lr*wd */
	float step_size;   /* lr / (1 - beta1^t) */
	float bc2_sqrt;    /* sqrt(1 - beta2^t) */
	float beta1, beta2, omb1, omb2, eps;
} TgAdamwStep;

TG_HD TgAdamwStep tg_adamw_step(float lr, float b1pow, float b2pow, float beta1, float beta2, float eps, float wd)
{
	TgAdamwStep s;
	s.decay = tg__sub_rn(1.0f, tg__mul_rn(lr, wd));
	s.step_size = tg_div_rn(lr, tg__sub_rn(1.0f, tg__mul_rn(b1pow, beta1)));
	s.bc2_sqrt = tg_sqrt_rn(tg__sub_rn(1.0f, tg__mul_rn(b2pow, beta2)));
	s.beta1 = beta1;
	s.beta2 = beta2;
	s.omb1 = tg__sub_rn(1.0f, beta1);
	s.omb2 = tg__sub_rn(1.0f, beta2);
	s.eps = eps;
	return s;
}

/* One element: master p, moments *m, *v, gradient g; returns the new p. */
TG_HD float tg_adamw1(const TgAdamwStep *s, float p, float g, float *m, float *v)
{
	p = tg__mul_rn(p, s->decay);
	float mm = tg__add_rn(tg__mul_rn(s->beta1, *m), tg__mul_rn(s->omb1, g));
	float vv = tg__add_rn(tg__mul_rn(s->beta2, *v), tg__mul_rn(s->omb2, tg__mul_rn(g, g)));
	float denom = tg__add_rn(tg_div_rn(tg_sqrt_rn(vv), s->bc2_sqrt), s->eps);
	*m = mm;
	*v = vv;
	return tg__sub_rn(p, tg__mul_rn(s->step_size, tg_div_rn(mm, denom)));
}

#endif
