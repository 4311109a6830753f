/* refrun.h: a layer run through the CPU reference interpreter, no GPU. The
 * inputs (random or --in .npy) and initial delayed scales are the ones a GPU
 * run (check_layer) binds, and the outputs are written as the same .npy files
 * in the same layouts, so a CPU run and a GPU run can be diffed file by file. */
#ifndef TG_REFRUN_H
#define TG_REFRUN_H

#include "gen.h"
#include "interp.h"

/* refrun_accumulated: tensor i is a gradient an op adds into (main_grad, accumulate): the caller's
 * buffer, so a run takes its initial values like an input's. */
bool refrun_accumulated(const Graph *g, int i);
/* refrun_inputs fills t[i].comp[COMP_DATA] (malloc'd, owned) for every layer input of g
 * and every accumulated gradient (refrun_accumulated):
 * IN_DIR/NAME.npy when in_dir has that file (dtype and shape checked), else uniform
 * random values (amplitude 0.5 for weights, 3 otherwise) from a generator seeded by
 * seed, in tensor order; an input that already has data and no file keeps it. Returns 0, or -1 with a message in err. */
int refrun_inputs(const Graph *g, const long *dims, long tokens, unsigned seed, const char *in_dir, RefTensor *t,
	char *err, size_t errlen);
/* refrun_delayed_scale is the scale a run starts delayed-scaling state slot s with
 * (non-trivial, so that scaling is exercised): 1.5 * 2^(s % 5 - 2). */
float refrun_delayed_scale(int slot);
/* refrun_writes_component: does a run's --out write component c of an output tensor? */
bool refrun_writes_component(int c);
/* refrun_write_file writes component c of t (host bytes h) as DIR/NAME[.COMP].npy, with the
 * dtype and shape a GPU run uses; prints "wrote PATH". 0, or -1 with the error printed. */
int refrun_write_file(const char *dir, const Tensor *t, Component c, const void *h, size_t bytes);
/* refrun_component: component c of a reference tensor's host copy (a state scalar for
 * per-tensor scale, scale_inv, amax, scale_t, amax_t: written to *scalar); NULL if none. */
const void *refrun_component(const Tensor *t, const RefTensor *r, Component c, float *scalar, size_t *bytes);
#endif
