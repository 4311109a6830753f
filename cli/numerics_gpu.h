/* numerics_gpu.h: the GPU path of `tegen numerics` (see numerics_gpu.c). */
#ifndef TG_NUMERICS_GPU_H
#define TG_NUMERICS_GPU_H

#include "interp.h"
#include "rt_internal.h"

/* One layer run on the GPU, its tensors read back into host RefTensors. */
typedef struct NumGpuRun {
	TgLayer *l;
	const Graph *g;          /* the layer's graph (valid until numgpu_free) */
	long *dims;              /* bound dims */
	RefTensor *rt;           /* per tensor: the GPU's components and state scalars; value: the
	                          * reference op's FP32 value on the GPU's inputs (not for GEMMs
	                          * with high-precision outputs: those are the GPU's bytes only) */
	unsigned long long *dev; /* the bound input buffers */
} NumGpuRun;

/* The inputs of a run: fill rt[i].comp[COMP_DATA] of every input of g (0, or -1 with err). */
typedef int (*NumGpuInputs)(const Graph *g, const long *dims, RefTensor *rt, void *ud, char *err, size_t errlen);

/* numgpu_run creates the layer from spec text (file names it in messages) at tokens, binds
 * the inputs `inputs` makes, runs it twice (the first run's amax gives every delayed-scaling
 * tensor its steady-state scale, as in the CPU path), and reads every produced tensor back
 * op by op, with each op's reference FP32 value computed from the GPU's inputs. Returns 0,
 * or -1 with a message in err (run is then freed). */
int numgpu_run(TgContext *ctx, const char *file, const char *text, long tokens, NumGpuInputs inputs, void *ud,
	NumGpuRun *run, char *err, size_t errlen);
/* numgpu_free releases a run's layer, device buffers and host copies. */
void numgpu_free(NumGpuRun *run);

#endif
