/* vectors.c: see vectors.h. */
#include <stdio.h>
#include <string.h>
#include "vectors.h"

long vec_read(const char *name, const char *path, VecCheck check, long *bad, char *det, size_t detn)
{
	*bad = 0;
	FILE *fp = fopen(path, "r");
	if (!fp) {
		printf("FAIL %s: cannot open %s (run from repo root)\n", name, path);
		return -1;
	}
	char line[512], d[256];
	long n = 0;
	while (fgets(line, sizeof line, fp)) {
		if (line[0] == '#')
			continue;
		d[0] = '\0';
		int r = check(line, d, sizeof d);
		if (r == VEC_SKIP)
			continue;
		n++;
		if (r == VEC_MISMATCH && (*bad)++ == 0 && detn)
			snprintf(det, detn, "%s", d);
	}
	fclose(fp);
	return n;
}
