/* cpu_run.c: `tegen run --cpu`: a layer through the CPU reference interpreter,
 * with the inputs, initial scales and output files of a GPU run (refrun.h). */
#include "cpu_run.h"

#include "cli.h"
#include "layout.h"
#include "parallel.h"
#include "ref.h"
#include "refrun.h"

#include <stdio.h>
#include <stdlib.h>

int cmd_run_cpu(const char *spec, long tokens, const char *in_dir, const char *out_dir)
{
	Arena *a = arena_new();
	const Plan *p = cli_load_plan(a, spec, cli_plan_options(a, NULL, tokens ? tokens : 1024));
	if (!p || cli_run_tokens(p->g, spec, &tokens)) {
		arena_free(a);
		return 1;
	}
	const Graph *g = p->g;
	long *dims = calloc((size_t)g->ndims + 1, sizeof *dims);
	RefTensor *rt = calloc((size_t)g->ntensors + 1, sizeof *rt);
	for (int d = 0; d < g->ndims; d++)
		dims[d] = layout_dim_at(g, d, tokens);
	char err[2048];
	int rc = 1;
	if (refrun_inputs(g, dims, tokens, 1, in_dir, rt, err, sizeof err)) {
		fprintf(stderr, "tegen: %s\n", err);
		goto out;
	}
	for (int i = 0; i < g->ntensors; i++) /* the GPU run's initial state (check_layer) */
		if (g->tensors[i].state_slot >= 0 && g->tensors[i].state_slot < p->ndelayed) {
			rt[i].scale = refrun_delayed_scale(g->tensors[i].state_slot);
			rt[i].scale_inv = tg_scale_inv(rt[i].scale);
		}
	double t0 = cli_now_s();
	if (interp_run(g, dims, rt, err, sizeof err)) {
		fprintf(stderr, "tegen: %s\n", err);
		goto out;
	}
	double t1 = cli_now_s();
	if (out_dir) {
		if (cli_make_dir(out_dir) != 0)
			goto out;
		for (int i = 0; i < g->ntensors; i++)
			for (int c = COMP_DATA; c < COMP_COUNT && g->tensors[i].output; c++) {
				float scalar;
				size_t bytes;
				const void *h = refrun_writes_component(c) ? refrun_component(&g->tensors[i], &rt[i], (Component)c,
					&scalar, &bytes) : NULL;
				if (h && refrun_write_file(out_dir, &g->tensors[i], (Component)c, h, bytes))
					goto out;
			}
	}
	char label[64];
	printf("%s: %s, CPU reference %.2f s on %d threads (%d ops)\n", spec, cli_tokens_label(g, tokens, label, sizeof label),
		t1 - t0, ref_threads(), g->nops);
	rc = 0;
out:
	interp_free(g, rt);
	free(rt);
	free(dims);
	arena_free(a);
	return rc;
}
