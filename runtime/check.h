/* check.h: compare a layer's GPU run with the reference interpreter. */
#ifndef TG_CHECK_H
#define TG_CHECK_H

#include "rt_internal.h"

/* check_layer binds random inputs (every dynamic dim = tokens), runs the layer,
 * and compares every produced component with the reference under the numerics
 * contract, writing "ok ..." / "FAIL ..." lines to out. Returns the number of
 * failures, or -1 with a message in err if it could not run. */
int check_layer(TgLayer *l, long tokens, unsigned seed, Buf *out, char *err, size_t errlen);

#endif
