/* check.h: the ok/FAIL line of the unit tests that report with printf-style details
 * (test_interp.c, test_tune.c, test_bench.c). */
#ifndef TG_TEST_CHECK_H
#define TG_TEST_CHECK_H

/* Failed checks so far; main returns nonzero when it is. */
extern int check_failures;

/* Prints "ok PREFIXname" when ok, else "FAIL PREFIXname: " and the formatted detail,
 * and counts the failure. prefix may be "" (e.g. "interp/"). */
void check_line(const char *prefix, int ok, const char *name, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif
