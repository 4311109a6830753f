/* npy.h: NumPy .npy files for `tegen run --in/--out` (see npy.c). */
#ifndef TG_NPY_H
#define TG_NPY_H

#include "gen.h"

typedef struct Npy { char descr[8]; int rank; long shape[4]; void *data; size_t bytes; } Npy;

/* npy_descr is the NumPy dtype string a tegen dtype travels as ("<u2" for bf16); NULL if none. */
const char *npy_descr(DType t);
/* npy_write writes one C-order array; 0 or -1. */
int npy_write(const char *path, const char *descr, int rank, const long *shape, const void *data, size_t bytes);
/* npy_read reads a whole file (data malloc'd, caller frees); 0, or -1 with a reason in err. */
int npy_read(const char *path, Npy *out, char *err, size_t errlen);

#endif
