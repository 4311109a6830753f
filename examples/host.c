/* host.c: a minimal host program for libtegen, using only tegen.h (no CUDA header).
 *
 * Loads the Llama-3 8B MLP spec, allocates and binds its own buffers for
 * tokens = 256 (random BF16 data), runs three training-style steps
 * (tg_run + tg_step: delayed scaling updates the scales on the GPU), then
 * prints the recipe state layout, the first scales after each step and a few
 * outputs.
 *
 *   build/examples/host [SPEC]      run (default specs/llama3_8b_mlp.yaml)
 *   build/examples/host --check-gpu exit 0 if a GPU context can be made, else 1 and why
 *
 * Without a GPU it prints the reason (tg_last_error) and exits 1. */
#include "tegen.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOKENS 256
#define STEPS 3
#define SHOW 4 /* scales and outputs printed */

/* The layer's inputs and its output, as the spec names them: [rows, cols] BF16. */
typedef struct Buffer { const char *name; long long rows, cols; float amplitude; void *dev; } Buffer;

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static float uniform(void) /* [-1, 1) */
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return (float)((rng >> 40) * (1.0 / (1 << 23))) - 1.0f;
}

static uint16_t to_bf16(float f) /* round to nearest even */
{
	uint32_t u;
	memcpy(&u, &f, 4);
	return (uint16_t)((u + 0x7FFFu + ((u >> 16) & 1)) >> 16);
}

static float from_bf16(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;
	memcpy(&f, &u, 4);
	return f;
}

#define CHECK(call) \
	do { \
		if ((call) != TG_OK) { \
			fprintf(stderr, "host: %s: %s\n", #call, tg_last_error()); \
			goto out; \
		} \
	} while (0)

int main(int argc, char **argv)
{
	const char *spec = "specs/llama3_8b_mlp.yaml";
	int check_gpu = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--check-gpu"))
			check_gpu = 1;
		else if (argv[i][0] == '-') {
			fprintf(stderr, "usage: host [--check-gpu] [SPEC]\n");
			return 2;
		} else
			spec = argv[i];
	}

	TgContext *ctx = NULL;
	if (tg_context_create(NULL, &ctx) != TG_OK) {
		fprintf(stderr, "host: no GPU: %s\n", tg_last_error());
		return 1;
	}
	printf("tegen %s on %s\n", tg_version(), tg_context_arch(ctx));
	if (check_gpu) {
		tg_context_destroy(ctx);
		return 0;
	}

	int rc = 1;
	TgLayer *layer = NULL;
	uint16_t *host = NULL;
	float *state = NULL;
	Buffer buf[] = {
		{"x", TOKENS, 4096, 1.0f, NULL},
		{"gamma", 1, 4096, 1.0f, NULL},
		{"w_up", 2 * 14336, 4096, 0.02f, NULL},
		{"w_down", 4096, 14336, 0.02f, NULL},
		{"y", TOKENS, 4096, 0.0f, NULL}, /* the output: bound too, so tegen allocates no copy of it */
	};
	const int nbuf = (int)(sizeof buf / sizeof *buf);

	CHECK(tg_layer_create_file(ctx, spec, &layer));
	CHECK(tg_layer_load(layer)); /* NVRTC, or the disk cache */
	printf("%s: %d kernels loaded\n", spec, tg_layer_kernel_count(layer));

	for (int b = 0; b < nbuf; b++) {
		size_t n = (size_t)(buf[b].rows * buf[b].cols);
		uint16_t *h = realloc(host, n * sizeof *h);
		if (!h) {
			fprintf(stderr, "host: out of host memory\n");
			goto out;
		}
		host = h;
		for (size_t i = 0; i < n; i++) /* gamma: around 1; the rest: around 0 */
			host[i] = to_bf16((b == 1 ? 1.0f : 0.0f) + buf[b].amplitude * uniform());
		CHECK(tg_alloc(ctx, n * sizeof *host, &buf[b].dev));
		CHECK(tg_memcpy(ctx, buf[b].dev, host, n * sizeof *host, TG_HOST_TO_DEVICE));
		/* gamma is rank 1 in the spec ([hidden]); the others are [rows, cols] */
		TgTensorDesc d = {buf[b].dev, TG_BF16, b == 1 ? 1 : 2, {0}, {0}};
		if (b == 1)
			d.shape[0] = buf[b].cols;
		else
			d.shape[0] = buf[b].rows, d.shape[1] = buf[b].cols;
		CHECK(tg_bind(layer, buf[b].name, &d));
	}

	void *state_dev;
	size_t state_bytes;
	TgStateLayout lay;
	for (int step = 0; step < STEPS; step++) {
		CHECK(tg_run(layer, NULL)); /* NULL: the default stream */
		CHECK(tg_step(layer, NULL));
		CHECK(tg_state(layer, &state_dev, &state_bytes, &lay));
		if (step == 0) {
			printf("state: %zu bytes: %d scaled tensors (%d delayed), history %d; float offsets: scale %zu, "
			       "scale_inv %zu, stride %zu, history %zu, amax %zu\n",
				state_bytes, lay.tensors, lay.delayed, lay.history, lay.scale, lay.scale_inv, lay.stride,
				lay.history_offset, lay.amax);
			state = malloc(state_bytes);
			if (!state) {
				fprintf(stderr, "host: out of host memory\n");
				goto out;
			}
		}
		CHECK(tg_memcpy(ctx, state, state_dev, state_bytes, TG_DEVICE_TO_HOST)); /* waits for the step */
		printf("step %d: scale", step + 1);
		for (int i = 0; i < lay.tensors && i < SHOW; i++)
			printf(" %g", state[lay.scale + lay.stride * (size_t)i]);
		printf("  scale_inv");
		for (int i = 0; i < lay.tensors && i < SHOW; i++)
			printf(" %g", state[lay.scale_inv + lay.stride * (size_t)i]);
		printf("\n");
	}

	uint16_t y[SHOW];
	CHECK(tg_memcpy(ctx, y, buf[nbuf - 1].dev, sizeof y, TG_DEVICE_TO_HOST));
	printf("y[0][0:%d]:", SHOW);
	int finite = 1;
	for (int i = 0; i < SHOW; i++) {
		printf(" %g", from_bf16(y[i]));
		finite &= isfinite(from_bf16(y[i])) != 0;
	}
	printf("\n");
	if (!finite) {
		fprintf(stderr, "host: the output is not finite\n");
		goto out;
	}
	rc = 0;
out:
	tg_layer_destroy(layer);
	for (int b = 0; b < nbuf; b++)
		tg_free(ctx, buf[b].dev);
	tg_context_destroy(ctx);
	free(host);
	free(state);
	return rc;
}
