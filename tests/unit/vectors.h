/* vectors.h: the reading loop of the unit tests' test-vector files
 * (tests/vectors/formats.txt in test_formats.c, recipes.txt in test_recipe.c).
 * Each test supplies only the check of one line and its own report.
 */
#ifndef TG_TEST_VECTORS_H
#define TG_TEST_VECTORS_H

#include <stddef.h>

enum { VEC_SKIP = -1, VEC_MATCH = 0, VEC_MISMATCH = 1 };

/* Checks one line of a vector file (never a '#' comment line): VEC_SKIP when the
 * line holds no vector it knows, else VEC_MATCH or VEC_MISMATCH, having written a
 * description of the mismatch to det (detn bytes). */
typedef int (*VecCheck)(const char *line, char *det, size_t detn);

/* Runs check on every line of path (relative to the repo root; lines up to 511
 * characters) that does not start with '#'. Returns how many vectors (lines not
 * skipped) it read, or -1 after printing "FAIL name: cannot open path (run from
 * repo root)" when path cannot be opened. *bad counts the mismatches; det
 * receives the first one's description (left as it is when there is none). */
long vec_read(const char *name, const char *path, VecCheck check, long *bad, char *det, size_t detn);

#endif
