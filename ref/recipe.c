/* recipe.c: the reference recipe state machines.
 *
 * Delayed scaling keeps an amax history per tensor: the step's amax lands in
 * hist[0], the scale comes from the history (max or most recent) by
 * tg_delayed_scale, then the history rolls (tg_history_roll). Current scaling
 * derives the scale from this tensor's own amax. The formulas live in
 * templates/tg_recipe.h so that kernels and reference share one definition;
 * this file only sequences them.
 */
#include "ref.h"

float ref_delayed_step(RefDelayed *st, float amax_now)
{
	if (amax_now > st->hist[0])
		st->hist[0] = amax_now;
	float amax = tg_history_amax(st->hist, st->L, st->most_recent);
	st->scale = tg_delayed_scale(amax, st->scale, st->fmt_max, st->margin);
	st->scale_inv = tg_scale_inv(st->scale);
	tg_history_roll(st->hist, st->L);
	return amax;
}

float ref_current_scale(const float *x, size_t n, float fmt_max, float eps, int pow2,
                        float *scale_inv)
{
	float s = tg_current_scale(ref_amax(x, n), fmt_max, eps, pow2);
	if (scale_inv)
		*scale_inv = tg_scale_inv(s);
	return s;
}
