/* check.c: see check.h. */
#include "check.h"

#include <stdarg.h>
#include <stdio.h>

int check_failures;

void check_line(const char *prefix, int ok, const char *name, const char *fmt, ...)
{
	if (ok) {
		printf("ok %s%s\n", prefix, name);
		return;
	}
	va_list ap;
	va_start(ap, fmt);
	printf("FAIL %s%s: ", prefix, name);
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	check_failures++;
}
