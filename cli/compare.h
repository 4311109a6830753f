/* compare.h: judging one output buffer against another (see compare.c). */
#ifndef TG_COMPARE_H
#define TG_COMPARE_H

#include "gen.h"

/* CMP_EXACT: bytes; CMP_ULP: at most 1 ulp per element on a 1e-4 budget, or with
 * rel_tol > 0 (an FP32 intermediate) 1 ulp on any number; CMP_REL: relative
 * Frobenius error of the decoded values <= rel_tol. */
typedef enum { CMP_EXACT, CMP_ULP, CMP_REL } CmpKind;

/* cmp_decode: element i of a buffer of dtype t as FP32 (E2M1: nibble i, low first). */
float cmp_decode(DType t, const void *p, size_t i);
/* cmp_buffers judges got against want (bytes each, elements of elem_bits of dtype t) by
 * kind and appends "ok WHAT (...)" or "FAIL WHAT: ..." to out; returns 1 on FAIL. */
int cmp_buffers(Buf *out, const char *what, CmpKind kind, DType t, const void *got, const void *want, size_t bytes,
	int elem_bits, double rel_tol);
/* cmp_ulp_ties is cmp_buffers' CMP_ULP (any: every element may be 1 ulp off, an FP32 intermediate), except that
 * an element one ulp off where tie[i] is set (the reference's value lies at a rounding midpoint of the format,
 * within the float computation's error: near_ties, block_scales.h) is counted apart, off the budget; tie may be NULL. */
int cmp_ulp_ties(Buf *out, const char *what, DType t, const void *got, const void *want, size_t bytes, int elem_bits,
	bool any, const uint8_t *tie);
/* cmp_float: one scalar within rel (0: equal, NaN equals NaN); appends the line; 1 on FAIL. */
int cmp_float(Buf *out, const char *what, float got, float want, double rel);
/* cmd_compare is `tegen compare SPEC DIR_A DIR_B`: every output file the two runs wrote,
 * judged file by file (see compare.c). Returns the exit code (0 same within the rules,
 * 1 a difference or an unreadable file, 2 usage). */
int cmd_compare(int argc, char **argv);

#endif
