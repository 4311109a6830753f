/* npy.c: read and write NumPy .npy files (format version 1.0), for
 * `tegen run --in DIR --out DIR`. BF16 and the 8-bit formats have no NumPy
 * dtype, so they travel as their raw unsigned-integer views: BF16 as '<u2',
 * E4M3/E5M2/E8M0 as '|u1' (see README). Guarantees: a malformed file is an
 * error with a reason, never a crash; only little-endian C-order arrays. */
#include "npy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *npy_descr(DType t)
{
	switch (t) {
	case DT_F32: return "<f4";
	case DT_F16: return "<f2";
	case DT_BF16: return "<u2";
	case DT_E4M3:
	case DT_E5M2:
	case DT_E8M0:
	case DT_E2M1: return "|u1";
	default: return NULL;
	}
}

int npy_write(const char *path, const char *descr, int rank, const long *shape, const void *data, size_t bytes)
{
	char dict[256];
	int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
	for (int i = 0; i < rank; i++)
		n += snprintf(dict + n, sizeof dict - (size_t)n, "%ld,%s", shape[i], i + 1 < rank ? " " : "");
	n += snprintf(dict + n, sizeof dict - (size_t)n, "), }");
	/* magic(6) + version(2) + header length(2) + dict + padding + '\n' = multiple of 64 */
	size_t total = 10 + (size_t)n + 1;
	size_t pad = (64 - total % 64) % 64;
	unsigned hlen = (unsigned)((size_t)n + pad + 1);
	FILE *f = fopen(path, "wb");
	if (!f)
		return -1;
	unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hlen & 0xFF), (unsigned char)(hlen >> 8)};
	int ok = fwrite(pre, 1, 10, f) == 10 && fwrite(dict, 1, (size_t)n, f) == (size_t)n;
	for (size_t i = 0; ok && i < pad; i++)
		ok = fputc(' ', f) != EOF;
	ok = ok && fputc('\n', f) != EOF && fwrite(data, 1, bytes, f) == bytes;
	return fclose(f) == 0 && ok ? 0 : -1;
}

int npy_read(const char *path, Npy *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof *out);
	FILE *f = fopen(path, "rb");
	if (!f) {
		snprintf(err, errlen, "%s: cannot open", path);
		return -1;
	}
	unsigned char pre[10];
	char hdr[4096];
	int rc = -1;
	if (fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY", 6) || pre[6] != 1) {
		snprintf(err, errlen, "%s: not a version 1 .npy file", path);
		goto out;
	}
	size_t hlen = pre[8] | (size_t)pre[9] << 8;
	if (hlen >= sizeof hdr || fread(hdr, 1, hlen, f) != hlen) {
		snprintf(err, errlen, "%s: bad header", path);
		goto out;
	}
	hdr[hlen] = 0;
	const char *d = strstr(hdr, "'descr':"), *fo = strstr(hdr, "'fortran_order':"), *sh = strstr(hdr, "'shape':");
	if (!d || !fo || !sh || sscanf(d, "'descr': '%7[^']'", out->descr) != 1) {
		snprintf(err, errlen, "%s: header lacks descr, fortran_order or shape", path);
		goto out;
	}
	if (strstr(fo, "True")) {
		snprintf(err, errlen, "%s: Fortran-order arrays are not supported", path);
		goto out;
	}
	const char *p = strchr(sh, '(');
	size_t elems = 1;
	for (p = p ? p + 1 : NULL; p && *p && *p != ')';) {
		char *e;
		long v = strtol(p, &e, 10);
		if (e == p) {
			p++;
			continue;
		}
		if (out->rank == 4 || v < 0) {
			snprintf(err, errlen, "%s: shape has more than 4 dims or a negative extent", path);
			goto out;
		}
		out->shape[out->rank++] = v;
		elems *= (size_t)v;
		p = e;
	}
	size_t esize = (size_t)atoi(out->descr + 2);
	if (!esize || (out->descr[0] != '<' && out->descr[0] != '|')) {
		snprintf(err, errlen, "%s: unsupported dtype '%s' (little-endian only)", path, out->descr);
		goto out;
	}
	out->bytes = elems * esize;
	out->data = malloc(out->bytes ? out->bytes : 1);
	if (!out->data || fread(out->data, 1, out->bytes, f) != out->bytes) {
		snprintf(err, errlen, "%s: file shorter than its shape says", path);
		free(out->data);
		out->data = NULL;
		goto out;
	}
	rc = 0;
out:
	fclose(f);
	return rc;
}
