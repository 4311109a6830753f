/* tune.c: the tuning DB, the measurements `tegen tune` records and the
 * planner reads back (plan_build_opts).
 *
 * File: $CACHE/tuning/v1.txt (cache dir as for kernels). Text, one
 * measurement per line, nine tab-separated fields:
 *
 *   SIGNATURE  VARIANT  BUCKET  GPU  SMS  CUDA  NVRTC  US  CHECK
 *
 * SIGNATURE is plan_signature (template, hash of its text, every slot but the
 * launch ones: what the kernel computes), VARIANT a name from plan_launch.c's tables,
 * BUCKET the kernel's rows rounded up to a power of two, GPU the device name,
 * SMS its SM count, CUDA the driver version (cuDriverGetVersion), NVRTC the
 * NVRTC version, US the median microseconds (%.3f), CHECK the FNV-1a hash of
 * the line up to and including the tab before it (8 hex digits). Lines
 * starting with '#' and blank lines are comments.
 *
 * Guarantees: a line that does not parse, fails its check (a torn or edited
 * line), or lacks its newline (a truncated file) is skipped, never used. An
 * entry for another GPU name, SM count, driver or NVRTC version is never
 * matched, and an edited template changes the signature, so stale timings are
 * ignored. The planner validates the chosen name against the kernel's legal
 * variants, so no DB content can produce a kernel that breaks a template's
 * constraints. Writers append with O_APPEND, all lines of one tune run in a
 * single write(): concurrent tuners interleave whole batches, nothing is lost
 * or rewritten; a reader sees a prefix of a batch at worst, and an incomplete
 * last line fails its check. The latest line for a (signature, variant,
 * bucket, GPU) wins. */
#include "gen.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NFIELDS 9

static uint32_t fnv1a(const char *s, size_t n)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 16777619u;
	return h;
}

/* A field of printable characters (GPU names have spaces; nothing has tabs). */
static bool field_ok(const char *s, bool spaces)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f || (*s == ' ' && !spaces))
			return false;
	return true;
}

static bool parse_long(const char *s, long lo, long hi, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (!*s || *end || errno || v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

static void add_entry(Arena *a, TuneDb *db, const TuneEntry *e)
{
	if (db->n == db->cap) {
		int cap = db->cap ? db->cap * 2 : 64;
		TuneEntry *ne = arena_alloc(a, sizeof *ne * (size_t)cap);
		if (db->n)
			memcpy(ne, db->e, sizeof *ne * (size_t)db->n);
		db->e = ne;
		db->cap = cap;
	}
	db->e[db->n++] = *e;
}

/* One line without its newline; false if malformed. */
static bool parse_line(Arena *a, const char *line, size_t len, TuneEntry *e)
{
	char *copy = arena_strndup(a, line, len);
	char *f[NFIELDS];
	int n = 0;
	for (char *p = copy;;) {
		if (n == NFIELDS)
			return false;
		f[n++] = p;
		char *tab = strchr(p, '\t');
		if (!tab)
			break;
		*tab = 0;
		p = tab + 1;
	}
	if (n != NFIELDS)
		return false;
	/* the check covers everything before the last field */
	size_t covered = (size_t)(f[NFIELDS - 1] - copy);
	long b, sms, cuda;
	char hex[16];
	snprintf(hex, sizeof hex, "%08x", fnv1a(line, covered));
	if (strcmp(hex, f[NFIELDS - 1]))
		return false;
	if (!field_ok(f[0], false) || !field_ok(f[1], false) || !field_ok(f[3], true) || !field_ok(f[6], false))
		return false;
	for (const char *c = f[1]; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9')))
			return false;
	if (!parse_long(f[2], 1, 1L << 40, &b) || (b & (b - 1)) || !parse_long(f[4], 1, 1 << 20, &sms) ||
		!parse_long(f[5], 1, 1 << 30, &cuda))
		return false;
	char *end;
	errno = 0;
	double us = strtod(f[7], &end);
	if (!*f[7] || *end || errno || !isfinite(us) || !(us > 0) || us > 1e9)
		return false;
	*e = (TuneEntry){f[0], f[1], f[3], f[6], b, (int)sms, (int)cuda, us};
	return true;
}

void tunedb_parse(Arena *a, TuneDb *db, const char *text, size_t len)
{
	size_t i = 0;
	while (i < len) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t end = nl ? (size_t)(nl - text) : len;
		const char *line = text + i;
		size_t n = end - i;
		i = nl ? end + 1 : len;
		if (n == 0 || line[0] == '#')
			continue;
		TuneEntry e;
		if (!nl || !parse_line(a, line, n, &e)) /* no newline: a truncated last line */
			db->malformed++;
		else
			add_entry(a, db, &e);
	}
}

TuneDb *tunedb_load(Arena *a, const char *path)
{
	/* a regular file only: a FIFO in its place must not hang the planner (O_NONBLOCK, then fstat) */
	int fd = path ? open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC) : -1;
	struct stat st;
	FILE *f = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? fdopen(fd, "rb") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	Buf b = {0};
	char chunk[65536];
	size_t n;
	while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
		buf_putn(&b, chunk, n);
	fclose(f);
	TuneDb *db = arena_alloc(a, sizeof *db);
	tunedb_parse(a, db, b.p ? b.p : "", b.len);
	buf_free(&b);
	return db;
}

/* Tabs and control characters in a GPU name would break the line: spaces instead. */
static char *clean(Arena *a, const char *s)
{
	char *c = arena_strdup(a, s ? s : "?");
	for (char *p = c; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = ' ';
	return c;
}

char *tunedb_line(Arena *a, const TuneEntry *e)
{
	char *body = arena_printf(a, "%s\t%s\t%ld\t%s\t%d\t%d\t%s\t%.3f\t", e->sig, e->variant, e->bucket,
		clean(a, e->gpu), e->sms, e->cuda, clean(a, e->nvrtc), e->us);
	return arena_printf(a, "%s%08x\n", body, fnv1a(body, strlen(body)));
}

/* mkdir -p of the directory part of path. */
static int mkdir_parent(const char *path)
{
	char dir[4096];
	if (snprintf(dir, sizeof dir, "%s", path) >= (int)sizeof dir)
		return -1;
	char *slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = 0;
	for (char *p = dir + 1; *p; p++)
		if (*p == '/') {
			*p = 0;
			if (mkdir(dir, 0777) && errno != EEXIST)
				return -1;
			*p = '/';
		}
	return mkdir(dir, 0777) && errno != EEXIST ? -1 : 0;
}

int tunedb_append(const char *path, const char *text, char *err, size_t errlen)
{
	if (mkdir_parent(path)) {
		snprintf(err, errlen, "cannot create the directory of %s: %s", path, strerror(errno));
		return -1;
	}
	int fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
	if (fd < 0) {
		snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	/* after a write cut short, start on a new line so that only the torn line is lost */
	struct stat st;
	char last = '\n';
	if (!fstat(fd, &st) && st.st_size > 0 && pread(fd, &last, 1, st.st_size - 1) != 1)
		last = '\n';
	Buf b = {0};
	if (last != '\n')
		buf_puts(&b, "\n");
	buf_puts(&b, text);
	text = b.p ? b.p : "";
	size_t len = strlen(text), done = 0;
	while (done < len) {
		ssize_t w = write(fd, text + done, len - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
			close(fd);
			buf_free(&b);
			return -1;
		}
		done += (size_t)w;
	}
	buf_free(&b);
	if (close(fd)) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

static bool same_gpu(const TuneEntry *e, const PlanOptions *o)
{
	return o->gpu && o->nvrtc && !strcmp(e->gpu, o->gpu) && e->sms == o->sms && e->cuda == o->cuda &&
		!strcmp(e->nvrtc, o->nvrtc);
}

const PlanVariant *tunedb_pick(const TuneDb *db, const PlanOptions *o, const char *sig, long bucket,
	const PlanVariant *legal, int nlegal, long *bucket_used)
{
	if (!db || !o || !sig)
		return NULL;
	if (bucket <= 0) { /* tokens unknown: the largest bucket measured */
		for (int i = 0; i < db->n; i++)
			if (db->e[i].bucket > bucket && !strcmp(db->e[i].sig, sig) && same_gpu(&db->e[i], o))
				bucket = db->e[i].bucket;
		if (bucket <= 0)
			return NULL;
	}
	const PlanVariant *best = NULL;
	double best_us = 0;
	for (int v = 0; v < nlegal; v++) {
		double us = -1;
		for (int i = 0; i < db->n; i++) { /* the latest line wins */
			const TuneEntry *e = &db->e[i];
			if (e->bucket == bucket && !strcmp(e->variant, legal[v].name) && !strcmp(e->sig, sig) && same_gpu(e, o))
				us = e->us;
		}
		if (us > 0 && (!best || us < best_us)) {
			best = &legal[v];
			best_us = us;
		}
	}
	if (best && bucket_used)
		*bucket_used = bucket;
	return best;
}
