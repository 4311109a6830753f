/* fuzz_spec.c: libFuzzer target for the front end: spec_load (+ spec_derive_backward
 * for `backward: true`, spec_derive_optimizer for `optimizer:`) + ir_build (and ir_print on success) on arbitrary bytes. Any crash, leak, sanitizer report
 * or hang is a bug; an error message is a normal outcome. */
#include "gen.h"

#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > (1u << 20))
		return 0;
	Arena *a = arena_new();
	Diag d;
	memset(&d, 0, sizeof d);
	Spec *s = spec_load(a, &d, "fuzz.yaml", (const char *)data, size);
	if (s && s->backward)
		s = spec_derive_backward(a, &d, s, (Arch){90, true});
	if (s && s->optim.kind != OPTIM_NONE)
		s = spec_derive_optimizer(a, &d, s, (Arch){90, true});
	if (s) {
		Graph *g = ir_build(a, &d, s, (Arch){90, true});
		if (g) {
			Buf b = {0};
			ir_print(g, &b);
			buf_free(&b);
		}
	}
	arena_free(a);
	return 0;
}
