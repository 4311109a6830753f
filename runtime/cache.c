/* cache.c: the on-disk kernel cache (layout in cache.h).
 *
 * An entry is a directory named by its key, published in one rename(): it is
 * written under a temp name in the same parent, every file fsync'ed, then
 * renamed into place and the parent fsync'ed. Readers therefore see either no
 * entry or a complete one. When two writers race on one key, the loser's
 * rename fails (ENOTEMPTY/EEXIST); it checks the winner's entry and, if it is
 * valid, throws its own copy away; if it is bad it moves it aside and retries.
 *
 * Nothing on disk is trusted: cache_load parses meta.txt strictly, checks the
 * key, the cubin size and its SHA-256, and reports anything off as CACHE_BAD
 * (a miss that the caller repairs by storing a fresh entry). A malformed file
 * can cost a recompile, never a crash. Functions return errors; none prints. */
#include "cache.h"
#include "hash.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define META_MAX 8192
#define CUBIN_MAX (1u << 30)
#define LOG_MAX (16u << 20)
#define CPATH 4608

void cache_seterr(char *err, size_t n, const char *fmt, ...)
{
	if (!err || !n)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, n, fmt, ap);
	va_end(ap);
}

/* pathf formats a path into a CPATH buffer; -1 (and a truncated, harmless path) if too long. */
static int pathf(char *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int pathf(char *out, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(out, CPATH, fmt, ap);
	va_end(ap);
	return n < 0 || n >= CPATH ? -1 : 0;
}

static int is_key(const char *s)
{
	for (int i = 0; i < 64; i++)
		if (!isxdigit((unsigned char)s[i]) || isupper((unsigned char)s[i]))
			return 0;
	return s[64] == 0;
}

int cache_dir_resolve(const char *dir, char *out, size_t outlen)
{
	const char *e;
	int n;
	if (dir && *dir)
		n = snprintf(out, outlen, "%s", dir);
	else if ((e = getenv("TEGEN_CACHE_DIR")) && *e)
		n = snprintf(out, outlen, "%s", e);
	else if ((e = getenv("XDG_CACHE_HOME")) && *e)
		n = snprintf(out, outlen, "%s/tegen", e);
	else if ((e = getenv("HOME")) && *e)
		n = snprintf(out, outlen, "%s/.cache/tegen", e);
	else
		return -1;
	return n < 0 || (size_t)n >= outlen ? -1 : 0;
}

int cache_tuning_path(const char *dir, char *out, size_t outlen)
{
	int n = snprintf(out, outlen, "%s/tuning/v1.txt", dir);
	return n < 0 || (size_t)n >= outlen ? -1 : 0;
}

int cache_entry_path(const char *dir, const char *key, char *out, size_t outlen)
{
	int n = snprintf(out, outlen, "%s/" CACHE_LAYOUT "/%.2s/%s", dir, key, key);
	return n < 0 || (size_t)n >= outlen ? -1 : 0;
}

/* mkdir -p */
static int mkdirs(const char *path)
{
	char p[CPATH];
	size_t n = strlen(path);
	if (n == 0 || n >= sizeof p)
		return errno = ENAMETOOLONG, -1;
	memcpy(p, path, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (p[i] != '/' && p[i] != 0)
			continue;
		char c = p[i];
		p[i] = 0;
		if (mkdir(p, 0755) != 0 && errno != EEXIST)
			return -1;
		p[i] = c;
	}
	struct stat st;
	if (stat(path, &st) != 0)
		return -1;
	if (!S_ISDIR(st.st_mode))
		return errno = ENOTDIR, -1;
	return 0;
}

int cache_prepare(const char *dir, char *err, size_t errlen)
{
	char p[CPATH];
	if (pathf(p, "%s/" CACHE_LAYOUT, dir) != 0) {
		cache_seterr(err, errlen, "cache dir %s: path too long", dir);
		return 0;
	}
	if (mkdirs(p) != 0) {
		int e = errno;
		struct stat st;
		if (stat(p, &st) == 0 && S_ISDIR(st.st_mode) && access(p, R_OK | X_OK) == 0) {
			cache_seterr(err, errlen, "cache dir %s is read-only (%s); new kernels are cached in memory only", dir, strerror(e));
			return 1;
		}
		cache_seterr(err, errlen, "cache dir %s unusable (%s); kernels are cached in memory only", dir, strerror(e));
		return 0;
	}
	char probe[CPATH];
	pathf(probe, "%s/.probe-XXXXXX", p);
	int fd = mkstemp(probe);
	if (fd < 0) {
		int e = errno;
		if (access(p, R_OK | X_OK) == 0) {
			cache_seterr(err, errlen, "cache dir %s is read-only (%s); new kernels are cached in memory only", dir, strerror(e));
			return 1;
		}
		cache_seterr(err, errlen, "cache dir %s unusable (%s); kernels are cached in memory only", dir, strerror(e));
		return 0;
	}
	close(fd);
	unlink(probe);
	pathf(p, "%s/tmp", dir);
	mkdir(p, 0755); /* only for failed sources; /tmp is the fallback */
	return 2;
}

/* ---- files ---- */

static int write_file(const char *path, const void *data, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	const char *p = data;
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			int e = w < 0 ? errno : EIO;
			close(fd);
			return errno = e, -1;
		}
		p += w;
		n -= (size_t)w;
	}
	if (fsync(fd) != 0) {
		int e = errno;
		close(fd);
		return errno = e, -1;
	}
	return close(fd);
}

static void fsync_dir(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

/* read_fd reads exactly n bytes; -1 on short read. */
static int read_fd(int fd, void *buf, size_t n)
{
	char *p = buf;
	while (n) {
		ssize_t r = read(fd, p, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

/* open_regular opens path for reading only if it is a regular file: lstat first, then
 * O_NOFOLLOW | O_NONBLOCK and fstat again, so that a FIFO, device or socket named like a
 * cache file is never opened for good (nor waits for a writer) and no link is followed.
 * The fd, or -1 with errno ENOENT (absent), EFTYPE_CACHE (something else) or another error. */
#define EFTYPE_CACHE EINVAL
static int open_regular(const char *path, struct stat *st)
{
	if (lstat(path, st) != 0)
		return -1;
	if (!S_ISREG(st->st_mode))
		return errno = EFTYPE_CACHE, -1;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return errno == ELOOP ? (errno = EFTYPE_CACHE, -1) : -1; /* replaced by a link since lstat */
	if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode)) {
		close(fd);
		return errno = EFTYPE_CACHE, -1;
	}
	return fd;
}

/* kind_of names what a non-regular file is, for messages. */
static const char *kind_of(const struct stat *st)
{
	return S_ISLNK(st->st_mode) ? "a symbolic link" : S_ISDIR(st->st_mode) ? "a directory"
		: S_ISFIFO(st->st_mode) ? "a FIFO" : S_ISSOCK(st->st_mode) ? "a socket"
		: S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode) ? "a device" : S_ISREG(st->st_mode) ? "a regular file"
		: "not a regular file";
}

/* read_small reads a whole regular file of at most max bytes, NUL-terminated.
 * 1 ok, 0 absent, -1 error, -2 not a regular file. */
static int read_small(const char *path, char **out, size_t *len, size_t max)
{
	struct stat st;
	int fd = open_regular(path, &st);
	if (fd < 0)
		return errno == ENOENT ? 0 : errno == EFTYPE_CACHE ? -2 : -1;
	if ((size_t)st.st_size > max) {
		close(fd);
		return -1;
	}
	size_t n = (size_t)st.st_size;
	char *b = malloc(n + 1);
	if (!b || read_fd(fd, b, n) != 0) {
		free(b);
		close(fd);
		return -1;
	}
	close(fd);
	b[n] = 0;
	*out = b;
	*len = n;
	return 1;
}

static int rm_at(int dfd, const char *name, int depth)
{
	if (unlinkat(dfd, name, 0) == 0 || errno == ENOENT)
		return 0;
	if (errno != EISDIR && errno != EPERM)
		return -1;
	if (depth > 8)
		return errno = ELOOP, -1;
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -1;
	}
	int rc = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (rm_at(fd, de->d_name, depth + 1) != 0)
			rc = -1;
	}
	closedir(d);
	if (unlinkat(dfd, name, AT_REMOVEDIR) != 0 && errno != ENOENT)
		rc = -1;
	return rc;
}

int cache_rmtree(const char *path)
{
	return rm_at(AT_FDCWD, path, 0);
}

/* ---- meta.txt ---- */

static int meta_format(const CacheMeta *m, char *buf, size_t n)
{
	int k = snprintf(buf, n,
		"tegen-cache 1\n"
		"key %s\nname %s\narch %s\n"
		"regs %d\nsmem %d\nspill_stores %d\nspill_loads %d\nstack %d\n"
		"compile_us %lld\ncubin_size %zu\ncubin_sha256 %s\n"
		"tegen_version %s\nnvrtc_version %s\ncreated %lld\nlog %d\nend\n",
		m->key, m->name, m->arch, m->regs, m->smem_static, m->spill_stores, m->spill_loads,
		m->stack_bytes, (long long)(m->compile_ms * 1000.0 + 0.5), m->cubin_size, m->cubin_sha256,
		m->tegen_version, m->nvrtc_version, m->created, m->has_log);
	return k < 0 || (size_t)k >= n ? -1 : k;
}

static int parse_ll(const char *v, long long lo, long long hi, long long *out)
{
	if (!*v)
		return -1;
	char *end;
	errno = 0;
	long long x = strtoll(v, &end, 10);
	if (errno || *end || x < lo || x > hi)
		return -1;
	*out = x;
	return 0;
}

static int copy_word(char *dst, size_t n, const char *v)
{
	size_t len = strlen(v);
	if (len == 0 || len >= n)
		return -1;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)v[i] <= ' ' || v[i] == 127)
			return -1;
	memcpy(dst, v, len + 1);
	return 0;
}

/* meta_parse parses text in place; returns 0 or -1 with why set. */
static int meta_parse(char *text, CacheMeta *m, const char **why)
{
	enum { F_KEY, F_NAME, F_ARCH, F_REGS, F_SMEM, F_SS, F_SL, F_STACK, F_US, F_SIZE, F_SHA,
		F_TV, F_NV, F_CREATED, F_LOG, F_END, F_N };
	static const char *const names[F_N] = { "key", "name", "arch", "regs", "smem", "spill_stores",
		"spill_loads", "stack", "compile_us", "cubin_size", "cubin_sha256", "tegen_version",
		"nvrtc_version", "created", "log", "end" };
	unsigned seen = 0;
	memset(m, 0, sizeof *m);
	char *line = text, *nl;
	if (strncmp(text, "tegen-cache 1\n", 14) != 0)
		return *why = "meta.txt: bad header", -1;
	line += 14;
	for (; *line; line = nl + 1) {
		nl = strchr(line, '\n');
		if (!nl)
			return *why = "meta.txt: truncated", -1;
		*nl = 0;
		if (seen & (1u << F_END))
			return *why = "meta.txt: text after end", -1;
		char *sp = strchr(line, ' ');
		const char *v = sp ? sp + 1 : "";
		if (sp)
			*sp = 0;
		int f = -1;
		for (int i = 0; i < F_N; i++)
			if (!strcmp(line, names[i]))
				f = i;
		if (f < 0)
			return *why = "meta.txt: unknown field", -1;
		if (seen & (1u << f))
			return *why = "meta.txt: duplicate field", -1;
		seen |= 1u << f;
		long long x = 0;
		int bad = 0;
		switch (f) {
		case F_KEY: bad = !is_key(v); if (!bad) memcpy(m->key, v, 65); break;
		case F_SHA: bad = !is_key(v); if (!bad) memcpy(m->cubin_sha256, v, 65); break;
		case F_NAME: bad = copy_word(m->name, sizeof m->name, v); break;
		case F_ARCH: bad = copy_word(m->arch, sizeof m->arch, v); break;
		case F_TV: bad = copy_word(m->tegen_version, sizeof m->tegen_version, v); break;
		case F_NV: bad = copy_word(m->nvrtc_version, sizeof m->nvrtc_version, v); break;
		case F_REGS: bad = parse_ll(v, -1, 65536, &x); m->regs = (int)x; break; /* -1: unknown */
		case F_SMEM: bad = parse_ll(v, -1, 1 << 30, &x); m->smem_static = (int)x; break;
		case F_SS: bad = parse_ll(v, -1, 1 << 30, &x); m->spill_stores = (int)x; break;
		case F_SL: bad = parse_ll(v, -1, 1 << 30, &x); m->spill_loads = (int)x; break;
		case F_STACK: bad = parse_ll(v, -1, 1 << 30, &x); m->stack_bytes = (int)x; break;
		case F_US: bad = parse_ll(v, 0, 1LL << 40, &x); m->compile_ms = (double)x / 1000.0; break;
		case F_SIZE: bad = parse_ll(v, 1, CUBIN_MAX, &x); m->cubin_size = (size_t)x; break;
		case F_CREATED: bad = parse_ll(v, 0, 1LL << 40, &x); m->created = x; break;
		case F_LOG: bad = parse_ll(v, 0, 1, &x); m->has_log = (int)x; break;
		case F_END: bad = *v != 0; break;
		}
		if (bad)
			return *why = "meta.txt: bad value", -1;
	}
	if (seen != (1u << F_N) - 1)
		return *why = "meta.txt: missing field", -1;
	return 0;
}

/* ---- load and store ---- */

void cache_entry_free(CacheEntry *e)
{
	free(e->cubin);
	free(e->log);
	e->cubin = NULL;
	e->log = NULL;
}

/* load_meta reads path/meta.txt: CACHE_HIT, CACHE_MISS (no entry) or CACHE_BAD.
 * An entry that is not a directory (a file, a link, dangling or not) is bad. */
static int load_meta(const char *path, CacheMeta *m, const char **why)
{
	char p[CPATH], *text = NULL;
	size_t n;
	struct stat st;
	if (lstat(path, &st) != 0)
		return CACHE_MISS;
	if (!S_ISDIR(st.st_mode)) {
		struct stat to;
		*why = !S_ISLNK(st.st_mode) ? "the entry is not a directory"
			: stat(path, &to) != 0 ? "the entry is a dangling symbolic link" : "the entry is a symbolic link";
		return CACHE_BAD;
	}
	pathf(p, "%s/meta.txt", path);
	int r = read_small(p, &text, &n, META_MAX);
	if (r == 0)
		return *why = "meta.txt missing", CACHE_BAD;
	if (r == -2)
		return *why = "meta.txt is not a regular file", CACHE_BAD;
	if (r < 0)
		return *why = "meta.txt unreadable", CACHE_BAD;
	r = meta_parse(text, m, why) == 0 ? CACHE_HIT : CACHE_BAD;
	free(text);
	return r;
}

int cache_load(const char *dir, const char *key, CacheEntry *e, char *err, size_t errlen)
{
	char path[CPATH], p[CPATH];
	const char *why = NULL;
	memset(e, 0, sizeof *e);
	if (!is_key(key) || cache_entry_path(dir, key, path, sizeof path) != 0)
		return cache_seterr(err, errlen, "bad key"), CACHE_MISS;
	int r = load_meta(path, &e->meta, &why);
	if (r != CACHE_HIT)
		goto out;
	r = CACHE_BAD;
	if (strcmp(e->meta.key, key) != 0) {
		why = "meta.txt: key does not match the entry";
		goto out;
	}
	pathf(p, "%s/kernel.cubin", path);
	struct stat st;
	int fd = open_regular(p, &st);
	if (fd < 0) {
		why = errno == EFTYPE_CACHE ? "kernel.cubin is not a regular file" : "kernel.cubin missing";
		goto out;
	}
	if ((size_t)st.st_size != e->meta.cubin_size) {
		close(fd);
		why = "kernel.cubin size does not match meta.txt";
		goto out;
	}
	e->cubin = malloc(e->meta.cubin_size);
	if (!e->cubin || read_fd(fd, e->cubin, e->meta.cubin_size) != 0) {
		close(fd);
		why = "kernel.cubin unreadable";
		goto out;
	}
	close(fd);
	char hex[65];
	hash_hex(e->cubin, e->meta.cubin_size, hex);
	if (strcmp(hex, e->meta.cubin_sha256) != 0) {
		why = "kernel.cubin checksum does not match meta.txt";
		goto out;
	}
	if (e->meta.has_log) {
		size_t n;
		pathf(p, "%s/log.txt", path);
		int lr = read_small(p, &e->log, &n, LOG_MAX);
		if (lr != 1) {
			why = lr == -2 ? "log.txt is not a regular file" : "log.txt missing or unreadable";
			goto out;
		}
	}
	r = CACHE_HIT;
out:
	if (r != CACHE_HIT) {
		cache_entry_free(e);
		if (r == CACHE_BAD)
			cache_seterr(err, errlen, "cache entry %s: %s", path, why);
	}
	return r;
}

int cache_store(const char *dir, const CacheMeta *m, const void *cubin, const char *source,
	const char *log, char *err, size_t errlen)
{
	char final[CPATH], shard[CPATH], tmp[CPATH], p[CPATH], meta[META_MAX];
	CacheMeta mm = *m;
	if (!is_key(m->key) || cache_entry_path(dir, m->key, final, sizeof final) != 0)
		return cache_seterr(err, errlen, "cache_store: bad key or path"), -1;
	if (!mm.created)
		mm.created = (long long)time(NULL);
	mm.has_log = log && *log;
	hash_hex(cubin, mm.cubin_size, mm.cubin_sha256);
	if (meta_format(&mm, meta, sizeof meta) < 0)
		return cache_seterr(err, errlen, "cache_store: meta too long"), -1;
	pathf(shard, "%s/" CACHE_LAYOUT "/%.2s", dir, m->key);
	if (mkdir(shard, 0755) != 0 && errno != EEXIST)
		return cache_seterr(err, errlen, "mkdir %s: %s", shard, strerror(errno)), -1;
	pathf(tmp, "%s/.tmp-%.16s-XXXXXX", shard, m->key);
	if (!mkdtemp(tmp))
		return cache_seterr(err, errlen, "mkdtemp %s: %s", tmp, strerror(errno)), -1;
	chmod(tmp, 0755);
	const char *what = "kernel.cubin";
	pathf(p, "%s/kernel.cubin", tmp);
	if (write_file(p, cubin, mm.cubin_size) != 0)
		goto fail;
	what = "source.cu";
	pathf(p, "%s/source.cu", tmp);
	if (write_file(p, source ? source : "", source ? strlen(source) : 0) != 0)
		goto fail;
	if (mm.has_log) {
		what = "log.txt";
		pathf(p, "%s/log.txt", tmp);
		if (write_file(p, log, strlen(log)) != 0)
			goto fail;
	}
	what = "meta.txt"; /* last: an entry without meta.txt is never valid */
	pathf(p, "%s/meta.txt", tmp);
	if (write_file(p, meta, strlen(meta)) != 0)
		goto fail;
	fsync_dir(tmp);
	for (int attempt = 0; attempt < 8; attempt++) {
		if (rename(tmp, final) == 0) {
			fsync_dir(shard);
			return 0;
		}
		if (errno == ENOTDIR && unlink(final) == 0) /* a stray file where the entry goes */
			continue;
		if (errno != ENOTEMPTY && errno != EEXIST) {
			what = "rename";
			goto fail;
		}
		CacheEntry old;
		int r = cache_load(dir, m->key, &old, NULL, 0);
		if (r == CACHE_HIT) { /* another writer won with a good entry: use it */
			cache_entry_free(&old);
			cache_rmtree(tmp);
			return 0;
		}
		if (r == CACHE_BAD) { /* move the bad entry aside (rename onto an empty dir), then retry */
			char bad[CPATH];
			pathf(bad, "%s/.bad-%.16s-XXXXXX", shard, m->key);
			if (mkdtemp(bad)) {
				if (rename(final, bad) != 0)
					rmdir(bad);
				else
					cache_rmtree(bad);
			}
		}
	}
	what = "rename (retries exhausted)";
fail:
	cache_seterr(err, errlen, "cache_store %s: %s: %s", final, what, strerror(errno));
	cache_rmtree(tmp);
	return -1;
}

/* ---- walking the cache (CLI) ---- */

/* What walk found: an entry, a temp dir, or a shard that is not a directory. */
enum { W_TEMP, W_ENTRY, W_BAD_SHARD };
typedef int (*EntryFn)(void *ud, const char *shard, const char *name, int kind);

/* walk calls fn for every entry, temp dir and non-directory shard under DIR/v1
 * (W_BAD_SHARD: shard is DIR/v1, name the shard's). A missing DIR or DIR/v1 is an
 * empty cache; a DIR or DIR/v1 that is not a directory is an error (-1, errno ENOTDIR). */
static int walk(const char *dir, EntryFn fn, void *ud)
{
	char p[CPATH];
	struct stat st;
	if (stat(dir, &st) != 0)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISDIR(st.st_mode))
		return errno = ENOTDIR, -1;
	pathf(p, "%s/" CACHE_LAYOUT, dir);
	DIR *top = opendir(p);
	if (!top)
		return errno == ENOENT ? 0 : -1;
	struct dirent *de;
	while ((de = readdir(top))) {
		if (strlen(de->d_name) != 2 || !isxdigit((unsigned char)de->d_name[0]) ||
			!isxdigit((unsigned char)de->d_name[1]))
			continue;
		char sp[CPATH];
		pathf(sp, "%s/%.2s", p, de->d_name);
		if (lstat(sp, &st) != 0)
			continue;
		if (!S_ISDIR(st.st_mode)) { /* a file or link where a shard belongs: never followed */
			if (fn(ud, p, de->d_name, W_BAD_SHARD) != 0)
				break;
			continue;
		}
		DIR *sd = opendir(sp);
		if (!sd)
			continue;
		struct dirent *e;
		while ((e = readdir(sd))) {
			int entry = is_key(e->d_name);
			int temp = !strncmp(e->d_name, ".tmp-", 5) || !strncmp(e->d_name, ".bad-", 5);
			if ((entry || temp) && fn(ud, sp, e->d_name, entry ? W_ENTRY : W_TEMP) != 0)
				break;
		}
		closedir(sd);
	}
	closedir(top);
	return 0;
}

typedef struct ListCtx {
	void (*fn)(void *, const CacheMeta *, long long, time_t);
	void *ud;
	int n;
} ListCtx;

static int list_one(void *ud, const char *shard, const char *name, int kind)
{
	ListCtx *c = ud;
	if (kind != W_ENTRY)
		return 0;
	char path[CPATH], p[CPATH];
	CacheMeta m;
	const char *why;
	pathf(path, "%s/%s", shard, name);
	if (load_meta(path, &m, &why) != CACHE_HIT)
		return 0;
	long long bytes = 0;
	time_t mtime = 0;
	static const char *const files[] = { "meta.txt", "kernel.cubin", "source.cu", "log.txt" };
	for (int i = 0; i < 4; i++) {
		struct stat st;
		pathf(p, "%s/%s", path, files[i]);
		if (lstat(p, &st) == 0 && S_ISREG(st.st_mode)) {
			bytes += st.st_size;
			if (i == 0)
				mtime = st.st_mtime;
		}
	}
	c->n++;
	if (c->fn)
		c->fn(c->ud, &m, bytes, mtime);
	return 0;
}

int cache_list(const char *dir, void (*fn)(void *ud, const CacheMeta *m, long long bytes, time_t mtime), void *ud)
{
	ListCtx c = { fn, ud, 0 };
	return walk(dir, list_one, &c) != 0 ? -1 : c.n;
}

typedef struct ClearCtx { int removed, failed; } ClearCtx;

static int clear_one(void *ud, const char *shard, const char *name, int kind)
{
	ClearCtx *c = ud;
	char p[CPATH];
	pathf(p, "%s/%s", shard, name);
	if (cache_rmtree(p) != 0)
		c->failed++;
	else if (kind == W_ENTRY)
		c->removed++;
	return 0;
}

int cache_clear(const char *dir, int *removed, char *err, size_t errlen)
{
	ClearCtx c = { 0, 0 };
	int rc = walk(dir, clear_one, &c);
	if (removed)
		*removed = c.removed;
	/* failed-compile sources: only our own fail-* dirs, never anything else under DIR/tmp */
	char p[CPATH];
	pathf(p, "%s/tmp", dir);
	DIR *d = opendir(p);
	if (d) {
		struct dirent *de;
		while ((de = readdir(d))) {
			if (strncmp(de->d_name, "fail-", 5) != 0)
				continue;
			char q[CPATH];
			pathf(q, "%s/%s", p, de->d_name);
			if (cache_rmtree(q) != 0)
				c.failed++;
		}
		closedir(d);
	}
	if (rc != 0 || c.failed) {
		cache_seterr(err, errlen, "cache_clear %s: %d item(s) could not be removed", dir, c.failed);
		return -1;
	}
	return 0;
}

typedef struct VerifyCtx {
	const char *dir;
	int remove_bad, nbad, nremoved;
	void (*bad)(void *, const char *, const char *);
	void *ud;
	time_t now;
} VerifyCtx;

static int verify_one(void *ud, const char *shard, const char *name, int kind)
{
	VerifyCtx *c = ud;
	char p[CPATH];
	pathf(p, "%s/%s", shard, name);
	if (kind == W_TEMP) { /* temp dirs older than an hour are leftovers of a crashed writer */
		struct stat st;
		if (c->remove_bad && lstat(p, &st) == 0 && c->now - st.st_mtime > 3600)
			cache_rmtree(p);
		return 0;
	}
	char why[4700];
	if (kind == W_BAD_SHARD) {
		struct stat st, to;
		if (lstat(p, &st) != 0) /* vanished while we looked */
			return 0;
		snprintf(why, sizeof why, "shard %s is %s%s, not a directory", p, kind_of(&st),
			S_ISLNK(st.st_mode) && stat(p, &to) != 0 ? " (dangling)" : "");
	} else if (strncmp(shard + strlen(shard) - 2, name, 2) != 0) { /* never found by a lookup */
		snprintf(why, sizeof why, "%s is in the wrong shard (a lookup never finds it)", p);
	} else {
		CacheEntry e;
		int r = cache_load(c->dir, name, &e, why, sizeof why);
		if (r == CACHE_HIT) {
			cache_entry_free(&e);
			return 0;
		}
		if (r == CACHE_MISS) /* vanished while we looked */
			return 0;
	}
	c->nbad++;
	if (c->remove_bad) {
		size_t n = strlen(why);
		if (cache_rmtree(p) == 0) {
			c->nremoved++;
			snprintf(why + n, sizeof why - n, " (removed)");
		} else {
			snprintf(why + n, sizeof why - n, " (could not remove it: %s)", strerror(errno));
		}
	}
	if (c->bad)
		c->bad(c->ud, name, why);
	return 0;
}

int cache_verify(const char *dir, int remove_bad, int *removed,
	void (*bad)(void *ud, const char *key, const char *why), void *ud)
{
	VerifyCtx c = { dir, remove_bad, 0, 0, bad, ud, time(NULL) };
	int rc = walk(dir, verify_one, &c);
	if (removed)
		*removed = c.nremoved;
	return rc != 0 ? -1 : c.nbad;
}
