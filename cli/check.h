/* check.h: compare a layer's GPU run with the reference interpreter. */
#ifndef TG_CHECK_H
#define TG_CHECK_H

#include "rt_internal.h"

/* check_layer binds random inputs (every dynamic dim = tokens) and runs the layer;
 * with compare, it also compares every produced component with the reference
 * under the numerics contract, writing "ok ..." / "FAIL ..." lines to out.
 * Returns the number of failures, or -1 with a message in err if it could not run.
 * keep: NULL frees the input buffers before returning; otherwise they stay bound
 * (for further runs) and check_keep_free releases them. */
typedef struct CheckKeep {
	unsigned long long *dev; int n; /* the bound input buffers */
	const char *in_dir;             /* optional: take input NAME from IN_DIR/NAME.npy when that file exists */
	const char *scales;             /* optional: "NAME=VALUE ..." delayed scales for those tensors instead of the
	                                 * defaults (a test's `# test-scales:`, e.g. a scale near FLT_MAX) */
} CheckKeep;
int check_layer(TgLayer *l, long tokens, unsigned seed, int compare, CheckKeep *keep, Buf *out, char *err,
	size_t errlen);
/* check_keep_free frees the input buffers a check_layer call kept. */
void check_keep_free(CheckKeep *keep);

#endif
