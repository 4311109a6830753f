/* test_cache.c: SHA-256, the disk cache and the NVRTC JIT (no GPU needed).
 *
 * Checks the FIPS 180-4 vectors; compiles small kernels for sm_90a and
 * sm_100a into a fresh temp cache; memory and disk hits; damaged entries
 * (truncated, flipped, garbage meta) detected and repaired; racing writers
 * (threads in-process via cache_store, and two forked processes); an
 * unwritable cache dir; frozen mode; NVRTC errors; cache_verify/list/clear;
 * parallel compiles; hostile caches (FIFOs and links for entry files, a
 * dangling entry link, a file as a shard or as the cache dir, a failed store's
 * one warning). Prints timings. Protocol: ok/FAIL/skip lines, exit 1 on
 * any failure. */
#include "cache.h"
#include "hash.h"
#include "jit.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int failures;
static char tmpdir[256];

static void fail(const char *name, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(const char *name, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("FAIL %s: ", name);
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	failures++;
}

#define CHECK(name, cond, ...) do { if (!(cond)) { fail(name, __VA_ARGS__); return; } } while (0)

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return v[n / 2];
}

static const char *const ARCH90 = "sm_90a";

static JitSource src_of(const char *name, const char *text)
{
	JitSource s = { name, text, "test.cu", 0, NULL, NULL };
	return s;
}

static const char KSRC[] = "extern \"C\" __global__ void k(float *p) { p[threadIdx.x] *= 2.f; }\n";

/* entry_file returns DIR/v1/KK/KEY/file */
static void entry_file(const char *dir, const char *key, const char *file, char *out, size_t n)
{
	char e[1024];
	cache_entry_path(dir, key, e, sizeof e);
	snprintf(out, n, "%s/%s", e, file);
}

static long file_size(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 ? (long)st.st_size : -1;
}

/* count_shard counts entries and temp dirs in the shard of key */
static void count_shard(const char *dir, const char *key, int *entries, int *temps)
{
	char p[1024];
	snprintf(p, sizeof p, "%s/v1/%.2s", dir, key);
	*entries = *temps = 0;
	DIR *d = opendir(p);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, key))
			(*entries)++;
		else if (de->d_name[0] == '.' && strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			(*temps)++;
	}
	closedir(d);
}

/* ---- sha256 ---- */

static void test_sha256(void)
{
	static const struct { const char *in, *hex; } v[] = {
		{ "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
		{ "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
		{ "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
			"248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
		{ "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
			"cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1" },
	};
	char hex[65];
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		hash_hex(v[i].in, strlen(v[i].in), hex);
		CHECK("sha256", !strcmp(hex, v[i].hex), "vector %zu: got %s", i, hex);
	}
	/* one million 'a', fed in uneven pieces */
	static char a[1000];
	memset(a, 'a', sizeof a);
	HashCtx c;
	hash_init(&c);
	size_t left = 1000000, step = 1;
	while (left) {
		size_t n = step < left ? step : left;
		if (n > sizeof a)
			n = sizeof a;
		hash_update(&c, a, n);
		left -= n;
		step = step * 7 % 997 + 1;
	}
	hash_final_hex(&c, hex);
	CHECK("sha256", !strcmp(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"), "million a: %s", hex);
	/* every boundary length near a block: split vs whole agree */
	char buf[200];
	for (int i = 0; i < 200; i++)
		buf[i] = (char)(i * 31 + 7);
	for (int n = 0; n <= 200; n++) {
		char h1[65], h2[65];
		hash_hex(buf, (size_t)n, h1);
		hash_init(&c);
		hash_update(&c, buf, (size_t)n / 3);
		hash_update(&c, buf + n / 3, (size_t)n - (size_t)n / 3);
		hash_final_hex(&c, h2);
		CHECK("sha256", !strcmp(h1, h2), "split mismatch at length %d", n);
	}
	/* fields are length-prefixed */
	char f1[65], f2[65];
	hash_init(&c); hash_field(&c, "ab", 2); hash_field(&c, "c", 1); hash_final_hex(&c, f1);
	hash_init(&c); hash_field(&c, "a", 1); hash_field(&c, "bc", 2); hash_final_hex(&c, f2);
	CHECK("sha256", strcmp(f1, f2) != 0, "hash_field does not separate fields");
	printf("ok sha256\n");
}

/* ---- two processes racing on one key ---- */

static void test_fork_race(void)
{
	char dir[300], err[4096], warn[512];
	snprintf(dir, sizeof dir, "%s/race", tmpdir);
	static const char src[] = "extern \"C\" __global__ void race(int *p) { p[threadIdx.x] += 3; }\n";
	int pfd[2];
	CHECK("fork_race", pipe(pfd) == 0, "pipe");
	pid_t pid[2];
	for (int i = 0; i < 2; i++) {
		pid[i] = fork();
		CHECK("fork_race", pid[i] >= 0, "fork: %s", strerror(errno));
		if (pid[i] == 0) {
			close(pfd[1]);
			char ch;
			if (read(pfd[0], &ch, 1) < 0) /* wait until both exist */
				_exit(3);
			JitCache *c = jit_cache_open(dir, 0, warn, sizeof warn);
			JitSource s = src_of("race", src);
			JitResult r;
			int rc = c && !warn[0] && jit_compile(c, &s, ARCH90, NULL, 0, &r, err, sizeof err) == 0 && r.cubin_size > 0;
			jit_cache_close(c);
			_exit(rc ? 0 : 1);
		}
	}
	close(pfd[0]);
	close(pfd[1]); /* releases both children at once */
	int ok = 1;
	for (int i = 0; i < 2; i++) {
		int st;
		waitpid(pid[i], &st, 0);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			ok = 0;
	}
	CHECK("fork_race", ok, "a child failed");
	JitCache *c = jit_cache_open(dir, 0, warn, sizeof warn);
	JitSource s = src_of("race", src);
	char key[65];
	jit_key(c, &s, ARCH90, NULL, 0, key);
	int entries, temps;
	count_shard(dir, key, &entries, &temps);
	CHECK("fork_race", entries == 1 && temps == 0, "%d entries, %d temp dirs", entries, temps);
	CHECK("fork_race", cache_verify(dir, 0, NULL, NULL, NULL) == 0, "cache_verify finds bad entries");
	JitResult r;
	CHECK("fork_race", jit_compile(c, &s, ARCH90, NULL, 0, &r, err, sizeof err) == 0 && r.cache_hit == 2,
		"expected a disk hit, got %d", r.cache_hit);
	jit_cache_close(c);
	printf("ok fork_race\n");
}

/* ---- compile, memory and disk hits, timings ---- */

static char cachedir[300];

static void test_compile(void)
{
	char err[8192], warn[512];
	snprintf(cachedir, sizeof cachedir, "%s/main", tmpdir);
	JitCache *c = jit_cache_open(cachedir, 0, warn, sizeof warn);
	CHECK("compile_sm90a", c && !warn[0], "open: %s", warn);
	JitSource s = src_of("k", KSRC);
	JitResult r;
	int rc = jit_compile(c, &s, ARCH90, NULL, 0, &r, err, sizeof err);
	CHECK("compile_sm90a", rc == 0, "%s", err);
	CHECK("compile_sm90a", r.cubin && r.cubin_size > 64 && !memcmp(r.cubin, "\177ELF", 4), "no ELF cubin");
	CHECK("compile_sm90a", r.regs > 0 && r.spill_stores == 0 && r.spill_loads == 0 && r.stack_bytes == 0,
		"regs %d spills %d/%d stack %d", r.regs, r.spill_stores, r.spill_loads, r.stack_bytes);
	CHECK("compile_sm90a", r.cache_hit == 0 && r.log == NULL, "hit %d log %s", r.cache_hit, r.log ? r.log : "-");
	printf("ok compile_sm90a (%.1f ms cold, %d regs, %zu bytes)\n", r.compile_ms, r.regs, r.cubin_size);

	JitResult r100;
	rc = jit_compile(c, &s, "sm_100a", NULL, 0, &r100, err, sizeof err);
	if (rc == 0 && r100.cubin_size > 0 && r100.regs > 0 && r100.spill_stores == 0 && strcmp(r100.key, r.key))
		printf("ok compile_sm100a (%.1f ms cold, %d regs)\n", r100.compile_ms, r100.regs);
	else
		fail("compile_sm100a", "rc %d regs %d: %s", rc, r100.regs, err);

	JitResult r2;
	rc = jit_compile(c, &s, ARCH90, NULL, 0, &r2, err, sizeof err);
	CHECK("memory_hit", rc == 0 && r2.cache_hit == 1 && r2.cubin == r.cubin && !strcmp(r2.key, r.key),
		"rc %d hit %d", rc, r2.cache_hit);
	printf("ok memory_hit\n");

	/* memory lookup timings: batches of 1000, median over batches */
	enum { B = 1000, NB = 51 };
	double t_full[NB], t_find[NB];
	for (int b = 0; b < NB; b++) {
		double t0 = now_ms();
		for (int i = 0; i < B; i++)
			jit_compile(c, &s, ARCH90, NULL, 0, &r2, err, sizeof err);
		double t1 = now_ms();
		for (int i = 0; i < B; i++)
			jit_find(c, r.key, &r2);
		double t2 = now_ms();
		t_full[b] = (t1 - t0) * 1e6 / B;
		t_find[b] = (t2 - t1) * 1e6 / B;
	}
	double ns_full = median(t_full, NB), ns_find = median(t_find, NB);
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	const double bound = 1e9; /* instrumented builds: report only */
#else
	const double bound = 1000;
#endif
	CHECK("memory_lookup_time", ns_find < bound, "jit_find %.0f ns", ns_find);
	printf("ok memory_lookup_time (jit_find by key %.0f ns; jit_compile incl. key hash of %zu-byte source %.0f ns)\n",
		ns_find, sizeof KSRC - 1, ns_full);
	jit_cache_close(c);

	/* a fresh cache on the same dir: disk hit, same bytes */
	c = jit_cache_open(cachedir, 0, warn, sizeof warn);
	JitResult d;
	rc = jit_compile(c, &s, ARCH90, NULL, 0, &d, err, sizeof err);
	JitCache *c0 = jit_cache_open(cachedir, 0, warn, sizeof warn);
	JitResult ref;
	jit_compile(c0, &s, ARCH90, NULL, 0, &ref, err, sizeof err);
	CHECK("disk_hit", rc == 0 && d.cache_hit == 2, "rc %d hit %d", rc, d.cache_hit);
	CHECK("disk_hit", d.cubin_size == ref.cubin_size && !memcmp(d.cubin, ref.cubin, d.cubin_size) &&
		d.regs == ref.regs && d.spill_stores == 0, "contents differ");
	jit_cache_close(c);
	jit_cache_close(c0);
	enum { ND = 31 };
	double t_disk[ND];
	for (int i = 0; i < ND; i++) {
		c = jit_cache_open(cachedir, 0, warn, sizeof warn);
		double t0 = now_ms();
		jit_compile(c, &s, ARCH90, NULL, 0, &d, err, sizeof err);
		t_disk[i] = now_ms() - t0;
		jit_cache_close(c);
		CHECK("disk_hit", d.cache_hit == 2, "hit %d", d.cache_hit);
	}
	double ms_disk = median(t_disk, ND);
	CHECK("disk_hit", ms_disk < 5.0 * bound / 1000, "disk load %.3f ms", ms_disk);
	printf("ok disk_hit (warm disk load %.3f ms median)\n", ms_disk);

	/* no absolute paths in the key: another dir, same key */
	char other[300], k2[65];
	snprintf(other, sizeof other, "%s/other", tmpdir);
	c = jit_cache_open(other, 0, warn, sizeof warn);
	jit_key(c, &s, ARCH90, NULL, 0, k2);
	CHECK("key_portable", !strcmp(k2, r.key), "key depends on the cache dir");
	const char *opt[] = { "-DX=1" };
	jit_key(c, &s, ARCH90, opt, 1, k2);
	CHECK("key_portable", strcmp(k2, r.key) != 0, "options not in the key");
	jit_cache_close(c);
	printf("ok key_portable\n");

	/* TEGEN_NVRTC_DEFINES: -D options on every compile, and in every key */
	setenv("TEGEN_NVRTC_DEFINES", "TG_EXPERIMENT=2  TG_OTHER=1", 1);
	c = jit_cache_open(other, 0, warn, sizeof warn);
	unsetenv("TEGEN_NVRTC_DEFINES");
	jit_key(c, &s, ARCH90, NULL, 0, k2);
	JitSource sx = src_of("kx", "#if TG_EXPERIMENT != 2 || TG_OTHER != 1\n#error not defined\n#endif\n"
		"extern \"C\" __global__ void kx(float *p) { p[threadIdx.x] *= 3.f; }\n");
	JitResult rx;
	rc = jit_compile(c, &sx, ARCH90, NULL, 0, &rx, err, sizeof err);
	CHECK("nvrtc_defines", strcmp(k2, r.key) != 0 && rc == 0, "key same or compile failed: %s", err);
	jit_cache_close(c);
	printf("ok nvrtc_defines\n");
}

/* damage mutates the entry of KSRC/sm_90a; a fresh cache must recompile and repair it */
static void check_repair(const char *name, void (*damage)(const char *key))
{
	char err[8192], warn[512];
	JitSource s = src_of("k", KSRC);
	JitResult r;
	JitCache *c = jit_cache_open(cachedir, 0, warn, sizeof warn);
	jit_key(c, &s, ARCH90, NULL, 0, r.key);
	damage(r.key);
	CacheEntry e;
	CHECK(name, cache_load(cachedir, r.key, &e, err, sizeof err) == CACHE_BAD, "damage not detected");
	int rc = jit_compile(c, &s, ARCH90, NULL, 0, &r, err, sizeof err);
	jit_cache_close(c);
	CHECK(name, rc == 0 && r.cache_hit == 0, "rc %d hit %d (%s)", rc, r.cache_hit, err);
	c = jit_cache_open(cachedir, 0, warn, sizeof warn);
	rc = jit_compile(c, &s, ARCH90, NULL, 0, &r, err, sizeof err);
	jit_cache_close(c);
	CHECK(name, rc == 0 && r.cache_hit == 2, "not repaired: rc %d hit %d", rc, r.cache_hit);
	int entries, temps;
	count_shard(cachedir, r.key, &entries, &temps);
	CHECK(name, entries == 1 && temps == 0, "%d entries %d temps", entries, temps);
	printf("ok %s\n", name);
}

static void damage_truncate(const char *key)
{
	char p[1200];
	entry_file(cachedir, key, "kernel.cubin", p, sizeof p);
	if (truncate(p, file_size(p) / 2) != 0)
		perror("truncate");
}

static void damage_flip(const char *key)
{
	char p[1200];
	entry_file(cachedir, key, "kernel.cubin", p, sizeof p);
	int fd = open(p, O_RDWR);
	unsigned char b;
	if (fd >= 0 && pread(fd, &b, 1, 100) == 1) {
		b ^= 0x40;
		if (pwrite(fd, &b, 1, 100) != 1)
			perror("pwrite");
	}
	if (fd >= 0)
		close(fd);
}

static void damage_meta(const char *key)
{
	char p[1200];
	entry_file(cachedir, key, "meta.txt", p, sizeof p);
	FILE *f = fopen(p, "w");
	if (f) {
		fputs("tegen-cache 1\nkey zz\x01\xff garbage\nregs -99999999999999999999\n", f);
		fclose(f);
	}
}

static void damage_nometa(const char *key)
{
	char p[1200];
	entry_file(cachedir, key, "meta.txt", p, sizeof p);
	unlink(p);
}

static void test_repair(void)
{
	check_repair("repair_truncated_cubin", damage_truncate);
	check_repair("repair_flipped_byte", damage_flip);
	check_repair("repair_garbage_meta", damage_meta);
	check_repair("repair_missing_meta", damage_nometa);
}

/* cache_store twice for one key: the loser keeps the winner's entry */
static void test_store_race(void)
{
	char err[1024];
	static unsigned char cub[100];
	for (int i = 0; i < 100; i++)
		cub[i] = (unsigned char)i;
	CacheMeta m;
	memset(&m, 0, sizeof m);
	hash_hex("store race", 10, m.key);
	strcpy(m.name, "x");
	strcpy(m.arch, "sm_90a");
	strcpy(m.tegen_version, "t");
	strcpy(m.nvrtc_version, "n");
	m.cubin_size = sizeof cub;
	m.regs = 1;
	CHECK("store_race", cache_store(cachedir, &m, cub, "src", NULL, err, sizeof err) == 0, "%s", err);
	CHECK("store_race", cache_store(cachedir, &m, cub, "src", "warn", err, sizeof err) == 0, "%s", err);
	int entries, temps;
	count_shard(cachedir, m.key, &entries, &temps);
	CHECK("store_race", entries == 1 && temps == 0, "%d entries %d temps", entries, temps);
	CacheEntry e;
	CHECK("store_race", cache_load(cachedir, m.key, &e, err, sizeof err) == CACHE_HIT && e.log == NULL &&
		!memcmp(e.cubin, cub, sizeof cub), "first writer's entry lost");
	cache_entry_free(&e);
	printf("ok store_race\n");
}

static void test_warnings(void)
{
	char err[8192], warn[512];
	static const char src[] = "extern \"C\" __global__ void w(float *p) { int unused; p[0] = 1.f; }\n";
	JitCache *c = jit_cache_open(cachedir, 0, warn, sizeof warn);
	JitSource s = src_of("w", src);
	JitResult r;
	int rc = jit_compile(c, &s, ARCH90, NULL, 0, &r, err, sizeof err);
	int ok = rc == 0 && r.log && strstr(r.log, "warning") && !strstr(r.log, "ptxas info");
	if (!ok)
		fail("warnings_kept", "log: %s", r.log ? r.log : "(null)");
	jit_cache_close(c); /* frees r.log */
	if (!ok)
		return;
	c = jit_cache_open(cachedir, 0, warn, sizeof warn);
	rc = jit_compile(c, &s, ARCH90, NULL, 0, &r, err, sizeof err);
	ok = rc == 0 && r.cache_hit == 2 && r.log && strstr(r.log, "warning");
	jit_cache_close(c);
	CHECK("warnings_kept", ok, "log lost on disk hit");
	printf("ok warnings_kept\n");
}

static void test_headers(void)
{
	char err[8192], warn[512];
	static const char src[] = "#include \"tg/h.h\"\nextern \"C\" __global__ void hk(float *p) { p[0] = SCALE; }\n";
	const char *names[] = { "tg/h.h" };
	const char *h1[] = { "#define SCALE 2.f\n" }, *h2[] = { "#define SCALE 3.f\n" };
	JitSource s = { "hk", src, "hk.cu", 1, names, h1 };
	JitCache *c = jit_cache_open(cachedir, 0, warn, sizeof warn);
	JitResult r1, r2;
	int rc = jit_compile(c, &s, ARCH90, NULL, 0, &r1, err, sizeof err);
	CHECK("headers", rc == 0, "%s", err);
	s.header_srcs = h2;
	rc = jit_compile(c, &s, ARCH90, NULL, 0, &r2, err, sizeof err);
	jit_cache_close(c);
	CHECK("headers", rc == 0 && r2.cache_hit == 0 && strcmp(r1.key, r2.key), "header content not in the key");
	printf("ok headers\n");
}

static void test_unwritable(void)
{
	char err[8192], warn[512], dir[300];
	snprintf(dir, sizeof dir, "%s/ro", tmpdir);
	mkdir(dir, 0755);
	chmod(dir, 0500);
	char probe[400];
	snprintf(probe, sizeof probe, "%s/probe", dir);
	int fd = open(probe, O_WRONLY | O_CREAT, 0644);
	if (fd >= 0) { /* root: chmod does not stop writes; use a path under a regular file */
		close(fd);
		unlink(probe);
		snprintf(dir, sizeof dir, "/dev/null/x");
	}
	JitCache *c = jit_cache_open(dir, 0, warn, sizeof warn);
	CHECK("unwritable_dir", c && warn[0] && !jit_cache_dir(c), "warn '%s'", warn);
	JitSource s = src_of("k", KSRC);
	JitResult r;
	int rc = jit_compile(c, &s, ARCH90, NULL, 0, &r, err, sizeof err);
	CHECK("unwritable_dir", rc == 0 && r.cache_hit == 0 && r.cubin_size, "%s", err);
	rc = jit_compile(c, &s, ARCH90, NULL, 0, &r, err, sizeof err);
	CHECK("unwritable_dir", rc == 0 && r.cache_hit == 1, "no memory hit");
	jit_cache_close(c);
	snprintf(probe, sizeof probe, "%s/ro", tmpdir);
	chmod(probe, 0755);
	printf("ok unwritable_dir (%s; warning: %s)\n", fd >= 0 ? "root, used /dev/null/x" : "chmod 0500", warn);
}

/* a populated cache that became read-only still serves hits (needs a non-root user) */
static void test_readonly(void)
{
	char err[8192], warn[512], dir[300], p[1200];
	if (geteuid() == 0) {
		printf("skip readonly_cache: running as root, permissions do not apply\n");
		return;
	}
	snprintf(dir, sizeof dir, "%s/rocache", tmpdir);
	JitCache *c = jit_cache_open(dir, 0, warn, sizeof warn);
	JitSource s = src_of("k", KSRC);
	JitResult r;
	int rc = jit_compile(c, &s, ARCH90, NULL, 0, &r, err, sizeof err);
	jit_cache_close(c);
	CHECK("readonly_cache", rc == 0, "%s", err);
	char key[65];
	memcpy(key, r.key, 65);
	cache_entry_path(dir, key, p, sizeof p);
	for (int i = 0; i < 4; i++) { /* entry, shard, v1, dir */
		chmod(p, 0500);
		*strrchr(p, '/') = 0;
	}
	c = jit_cache_open(dir, 0, warn, sizeof warn);
	rc = jit_compile(c, &s, ARCH90, NULL, 0, &r, err, sizeof err);
	int hit = r.cache_hit;
	JitSource n = src_of("fresh2", "extern \"C\" __global__ void fresh2(int *p) { *p = 7; }\n");
	int rc2 = jit_compile(c, &n, ARCH90, NULL, 0, &r, err, sizeof err);
	jit_cache_close(c);
	cache_entry_path(dir, key, p, sizeof p);
	for (int i = 0; i < 4; i++) {
		chmod(p, 0755);
		*strrchr(p, '/') = 0;
	}
	CHECK("readonly_cache", strstr(warn, "read-only") && rc == 0 && hit == 2 && rc2 == 0,
		"warn '%s' rc %d hit %d rc2 %d", warn, rc, hit, rc2);
	printf("ok readonly_cache\n");
}

static void test_frozen(void)
{
	char err[8192], warn[512];
	JitCache *c = jit_cache_open(cachedir, 1, warn, sizeof warn);
	JitSource s = src_of("k", KSRC);
	JitResult r;
	int rc = jit_compile(c, &s, ARCH90, NULL, 0, &r, err, sizeof err);
	CHECK("frozen", rc == 0 && r.cache_hit == 2, "cached kernel not served: %s", err);
	JitSource n = src_of("fresh", "extern \"C\" __global__ void fresh(int *p) { *p = 42; }\n");
	rc = jit_compile(c, &n, ARCH90, NULL, 0, &r, err, sizeof err);
	jit_cache_close(c);
	CHECK("frozen", rc == -1 && strstr(err, "kernel fresh not in cache (frozen mode"), "rc %d err %s", rc, err);
	printf("ok frozen\n");
}

static void test_nvrtc_error(void)
{
	char err[16384], warn[512];
	static const char src[] = "extern \"C\" __global__ void bad(float *p) { p[0] = undefined_thing + ; }\n";
	JitCache *c = jit_cache_open(cachedir, 0, warn, sizeof warn);
	JitSource s = src_of("bad", src);
	JitResult r;
	int rc = jit_compile(c, &s, ARCH90, NULL, 0, &r, err, sizeof err);
	jit_cache_close(c);
	CHECK("nvrtc_error", rc == -1 && strstr(err, "error") && !r.cubin, "rc %d", rc);
	const char *p = strstr(err, "source: ");
	CHECK("nvrtc_error", p, "no source path in: %s", err);
	char path[1024];
	snprintf(path, sizeof path, "%s", p + 8);
	path[strcspn(path, "\n")] = 0;
	FILE *f = fopen(path, "r");
	CHECK("nvrtc_error", f, "%s does not exist", path);
	char buf[512] = {0};
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	CHECK("nvrtc_error", n == strlen(src) && !strcmp(buf, src), "%s does not hold the source", path);
	printf("ok nvrtc_error (source: %s)\n", path);

	c = jit_cache_open(cachedir, 0, warn, sizeof warn);
	JitSource m = src_of("missing", KSRC); /* compiles, but defines k, not missing */
	rc = jit_compile(c, &m, ARCH90, NULL, 0, &r, err, sizeof err);
	jit_cache_close(c);
	CHECK("missing_entry", rc == -1 && strstr(err, "no kernel named missing"), "rc %d: %s", rc, err);
	printf("ok missing_entry\n");
}

static int nbad_seen;
static char bad_key[65];
static void on_bad(void *ud, const char *key, const char *why)
{
	nbad_seen++;
	snprintf(bad_key, sizeof bad_key, "%s", key);
}

static void test_verify(void)
{
	char key[65], warn[512];
	JitCache *c = jit_cache_open(cachedir, 0, warn, sizeof warn);
	JitSource s = src_of("k", KSRC);
	jit_key(c, &s, ARCH90, NULL, 0, key);
	jit_cache_close(c);
	CHECK("cache_verify", cache_verify(cachedir, 0, NULL, NULL, NULL) == 0, "clean cache reported bad");
	damage_flip(key);
	int n = cache_verify(cachedir, 0, NULL, on_bad, NULL);
	CHECK("cache_verify", n == 1 && nbad_seen == 1 && !strcmp(bad_key, key), "found %d", n);
	n = cache_verify(cachedir, 1, NULL, NULL, NULL);
	CHECK("cache_verify", n == 1 && cache_verify(cachedir, 0, NULL, NULL, NULL) == 0, "not removed");
	printf("ok cache_verify\n");
}

/* ---- hostile caches: non-regular files, links, files where directories belong ---- */

/* fake_entry stores an entry of fake cubin bytes under dir (no NVRTC); its key is key_hex
 * (its two-digit shard, then the second digit repeated), so tests know where it lands. */
static int fake_entry(const char *dir, const char *key_hex, int with_log, char *key)
{
	memset(key, key_hex[1], 64);
	memcpy(key, key_hex, 2);
	key[64] = 0;
	CacheMeta m;
	memset(&m, 0, sizeof m);
	memcpy(m.key, key, 65);
	snprintf(m.name, sizeof m.name, "fake");
	snprintf(m.arch, sizeof m.arch, "sm_90a");
	snprintf(m.tegen_version, sizeof m.tegen_version, "0");
	snprintf(m.nvrtc_version, sizeof m.nvrtc_version, "0");
	static const char cubin[] = "\177ELF not really a cubin";
	m.cubin_size = sizeof cubin;
	char err[5200];
	cache_prepare(dir, err, sizeof err);
	int rc = cache_store(dir, &m, cubin, "// source", with_log ? "a warning" : NULL, err, sizeof err);
	if (rc)
		printf("# fake_entry: %s\n", err);
	return rc;
}

/* A test that would hang forever on a FIFO fails after 20 s instead. */
static const char *hang_test = "?";
static void on_alarm(int sig)
{
	(void)sig;
	printf("FAIL %s: hung (a FIFO was opened for reading)\n", hang_test);
	_exit(1);
}

static void test_nonregular(void)
{
	static const char *const files[] = {"meta.txt", "kernel.cubin", "log.txt"};
	char dir[400], key[65], p[1200], err[5200];
	snprintf(dir, sizeof dir, "%s/hostile", tmpdir);
	signal(SIGALRM, on_alarm);
	for (int i = 0; i < 3; i++) {
		hang_test = "cache_fifo";
		alarm(20);
		CHECK("cache_fifo", fake_entry(dir, "a0", 1, key) == 0, "store failed");
		CacheEntry e;
		CHECK("cache_fifo", cache_load(dir, key, &e, err, sizeof err) == CACHE_HIT, "fake entry not loaded: %s", err);
		cache_entry_free(&e);
		entry_file(dir, key, files[i], p, sizeof p);
		unlink(p);
		CHECK("cache_fifo", mkfifo(p, 0644) == 0, "mkfifo %s: %s", p, strerror(errno));
		int r = cache_load(dir, key, &e, err, sizeof err);
		CHECK("cache_fifo", r == CACHE_BAD && strstr(err, "not a regular file"), "%s as a FIFO: %d %s", files[i], r,
			err);
		int n = cache_list(dir, NULL, NULL); /* lists what meta.txt describes, without opening the FIFO */
		CHECK("cache_fifo", n == (i == 0 ? 0 : 1), "cache_list with a FIFO %s: %d", files[i], n);
		int removed = 0;
		n = cache_verify(dir, 1, &removed, NULL, NULL);
		CHECK("cache_fifo", n == 1 && removed == 1 && cache_verify(dir, 0, NULL, NULL, NULL) == 0,
			"cache_verify with a FIFO %s: %d bad, %d removed", files[i], n, removed);
		alarm(0);
	}
	/* a symbolic link where meta.txt belongs is not followed */
	CHECK("cache_links", fake_entry(dir, "a1", 0, key) == 0, "store failed");
	entry_file(dir, key, "meta.txt", p, sizeof p);
	char moved[1300];
	snprintf(moved, sizeof moved, "%s.real", p);
	CHECK("cache_links", rename(p, moved) == 0 && symlink(moved, p) == 0, "symlink: %s", strerror(errno));
	CacheEntry e;
	int r = cache_load(dir, key, &e, err, sizeof err);
	CHECK("cache_links", r == CACHE_BAD && strstr(err, "meta.txt is not a regular file"), "%d %s", r, err);
	cache_verify(dir, 1, NULL, NULL, NULL);
	printf("ok cache_fifo (meta.txt, kernel.cubin, log.txt as FIFOs: bad, listed without a hang, removed)\n");
	printf("ok cache_links (a linked meta.txt is bad)\n");
}

static int nreports;
static char reports[4][600];
static void on_report(void *ud, const char *key, const char *why)
{
	(void)ud;
	if (nreports < 4)
		snprintf(reports[nreports], sizeof reports[0], "%.2s %s", key, why);
	nreports++;
}

/* verify reports dangling entry links and shards that are not directories, and says
 * "(removed)" only for what it removed; a cache path that is a file is an error */
static void test_verify_report(void)
{
	char dir[400], key[65], p[1200], q[1300];
	snprintf(dir, sizeof dir, "%s/report", tmpdir);
	CHECK("verify_report", fake_entry(dir, "b0", 0, key) == 0, "store failed");
	CHECK("verify_report", cache_verify(dir, 0, NULL, NULL, NULL) == 0, "a good entry reported bad");
	/* a dangling link named like an entry, in its own shard */
	char lkey[65];
	memset(lkey, 'c', 64);
	lkey[64] = 0;
	snprintf(p, sizeof p, "%s/v1/cc", dir);
	mkdir(p, 0755);
	cache_entry_path(dir, lkey, p, sizeof p);
	CHECK("verify_report", symlink("/nonexistent/tegen-entry", p) == 0, "symlink: %s", strerror(errno));
	/* a regular file where shard dd belongs */
	snprintf(q, sizeof q, "%s/v1/dd", dir);
	FILE *f = fopen(q, "w");
	CHECK("verify_report", f && fclose(f) == 0, "cannot create %s", q);
	/* a directory named like an entry in another entry's shard: no lookup finds it */
	char mkey[65];
	memset(mkey, 'f', 64);
	mkey[64] = 0;
	snprintf(q, sizeof q, "%s/v1/b0/%s", dir, mkey);
	CHECK("verify_report", mkdir(q, 0755) == 0, "mkdir %s: %s", q, strerror(errno));
	nreports = 0;
	int removed = -1;
	int n = cache_verify(dir, 0, &removed, on_report, NULL);
	int dangling = 0, shard = 0, misplaced = 0;
	for (int i = 0; i < nreports && i < 4; i++) {
		dangling += !strncmp(reports[i], "cc", 2) && strstr(reports[i], "dangling symbolic link") != NULL;
		shard += !strncmp(reports[i], "dd", 2) && strstr(reports[i], "a regular file, not a directory") != NULL;
		misplaced += !strncmp(reports[i], "ff", 2) && strstr(reports[i], "in the wrong shard") != NULL;
		CHECK("verify_report", !strstr(reports[i], "removed"), "not asked to remove, says: %s", reports[i]);
	}
	CHECK("verify_report", n == 3 && nreports == 3 && dangling == 1 && shard == 1 && misplaced == 1 && removed == 0,
		"%d bad, %d reports (%s | %s | %s), %d removed", n, nreports, reports[0], reports[1], reports[2], removed);
	nreports = 0;
	n = cache_verify(dir, 1, &removed, on_report, NULL);
	CHECK("verify_report", n == 3 && removed == 3 && strstr(reports[0], "(removed)") && strstr(reports[1], "(removed)") &&
		strstr(reports[2], "(removed)"), "remove: %d bad, %d removed (%s | %s | %s)", n, removed, reports[0], reports[1],
		reports[2]);
	CHECK("verify_report", cache_verify(dir, 0, NULL, NULL, NULL) == 0 && cache_list(dir, NULL, NULL) == 1,
		"after removal");
	/* a cache path that is a regular file: an error, not an empty cache */
	snprintf(q, sizeof q, "%s/plainfile", tmpdir);
	f = fopen(q, "w");
	CHECK("verify_report", f && fclose(f) == 0, "cannot create %s", q);
	errno = 0;
	n = cache_list(q, NULL, NULL);
	int e1 = errno;
	errno = 0;
	int m = cache_verify(q, 1, NULL, NULL, NULL);
	CHECK("verify_report", n == -1 && e1 == ENOTDIR && m == -1 && errno == ENOTDIR, "list %d (%s), verify %d (%s)", n,
		strerror(e1), m, strerror(errno));
	/* a missing cache dir is an empty one */
	snprintf(q, sizeof q, "%s/never-made", tmpdir);
	CHECK("verify_report", cache_list(q, NULL, NULL) == 0 && cache_verify(q, 1, NULL, NULL, NULL) == 0, "missing dir");
	printf("ok verify_report (dangling entry link, file as a shard, misplaced entry, '(removed)' only when removed, file as the "
		"cache dir an error)\n");
}

/* a read-only cache: verify finds the bad entry and says it could not remove it (needs a non-root user) */
static void test_verify_readonly(void)
{
	char dir[400], key[65], p[1200];
	if (geteuid() == 0) {
		printf("skip verify_readonly: running as root, permissions do not apply\n");
		return;
	}
	snprintf(dir, sizeof dir, "%s/verify-ro", tmpdir);
	CHECK("verify_readonly", fake_entry(dir, "e0", 0, key) == 0, "store failed");
	entry_file(dir, key, "kernel.cubin", p, sizeof p);
	CHECK("verify_readonly", truncate(p, 3) == 0, "truncate: %s", strerror(errno));
	snprintf(p, sizeof p, "%s/v1/e0", dir);
	chmod(p, 0500);
	nreports = 0;
	int removed = -1, n = cache_verify(dir, 1, &removed, on_report, NULL);
	chmod(p, 0755);
	CHECK("verify_readonly", n == 1 && removed == 0 && nreports == 1 && strstr(reports[0], "could not remove") &&
		!strstr(reports[0], "(removed)"), "%d bad, %d removed: %s", n, removed, reports[0]);
	printf("ok verify_readonly\n");
}

/* a store that fails (a file where the shard belongs) warns once per process, with the reason */
static void test_store_warning(void)
{
	char err[8192], warn[512], dir[400], p[1200], log[400];
	snprintf(dir, sizeof dir, "%s/storefail", tmpdir);
	JitCache *c = jit_cache_open(dir, 0, warn, sizeof warn);
	JitSource s[2] = {src_of("w1", "extern \"C\" __global__ void w1(int *p) { *p = 1; }\n"),
		src_of("w2", "extern \"C\" __global__ void w2(int *p) { *p = 2; }\n")};
	for (int i = 0; i < 2; i++) { /* a regular file where each kernel's shard belongs */
		char key[65];
		jit_key(c, &s[i], ARCH90, NULL, 0, key);
		snprintf(p, sizeof p, "%s/v1/%.2s", dir, key);
		FILE *f = fopen(p, "w");
		CHECK("store_warning", f && fclose(f) == 0, "cannot create %s", p);
	}
	snprintf(log, sizeof log, "%s/stderr.txt", tmpdir);
	fflush(stderr);
	int saved = dup(2), fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	dup2(fd, 2);
	close(fd);
	JitResult r[2];
	int rc0 = jit_compile(c, &s[0], ARCH90, NULL, 0, &r[0], err, sizeof err);
	int rc1 = jit_compile(c, &s[1], ARCH90, NULL, 0, &r[1], err, sizeof err);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	jit_cache_close(c);
	char text[4096] = "";
	FILE *f = fopen(log, "r");
	size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
	if (f)
		fclose(f);
	text[n] = 0;
	int warnings = 0;
	for (const char *q = text; (q = strstr(q, "warning: cannot store")); q++)
		warnings++;
	CHECK("store_warning", rc0 == 0 && rc1 == 0 && warnings == 1 && strstr(text, "Not a directory"),
		"rc %d %d, %d warnings: %s", rc0, rc1, warnings, text);
	printf("ok store_warning (once: %.*s)\n", (int)strcspn(text, "\n"), text);
}

static void test_many(void)
{
	char err[8192], warn[512];
	enum { N = 8 };
	static char texts[N][200], names[N][16];
	JitSource s[N];
	for (int i = 0; i < N; i++) {
		snprintf(names[i], sizeof names[i], "m%d", i);
		snprintf(texts[i], sizeof texts[i],
			"extern \"C\" __global__ void m%d(float *p, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; "
			"if (i < n) p[i] = p[i] * %d.f + %d.f; }\n", i, i + 2, i);
		s[i] = src_of(names[i], texts[i]);
	}
	JitCache *c = jit_cache_open(cachedir, 0, warn, sizeof warn);
	JitResult r[N];
	const char *archs[] = { ARCH90 };
	double t0 = now_ms();
	int rc = jit_compile_many(c, s, N, archs, 1, NULL, 0, r, 0, err, sizeof err);
	double ms = now_ms() - t0;
	CHECK("compile_many", rc == 0, "%s", err);
	double sum = 0;
	for (int i = 0; i < N; i++) {
		CHECK("compile_many", r[i].cubin && r[i].cache_hit == 0 && r[i].regs > 0, "kernel %d", i);
		sum += r[i].compile_ms;
	}
	/* a batch with one failure reports it and still compiles the rest */
	JitSource mix[2] = { s[0], src_of("oops", "this is not C++") };
	JitResult rm[2];
	rc = jit_compile_many(c, mix, 2, archs, 1, NULL, 0, rm, 2, err, sizeof err);
	jit_cache_close(c);
	CHECK("compile_many", rc == -1 && rm[0].cubin && rm[0].cache_hit == 1 && !rm[1].cubin && strstr(err, "oops"),
		"mixed batch: rc %d", rc);
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	printf("ok compile_many (8 kernels: %.0f ms wall on %ld CPUs, %.0f ms summed)\n", ms, cpus, sum);
}

static int nlisted;
static void on_list(void *ud, const CacheMeta *m, long long bytes, time_t mtime)
{
	if (m->name[0] && bytes > 0 && mtime > 0)
		nlisted++;
}

static void test_list_clear(void)
{
	char err[1024];
	int n = cache_list(cachedir, on_list, NULL);
	CHECK("cache_list_clear", n >= 10 && n == nlisted, "listed %d (%d)", n, nlisted);
	int removed = -1;
	CHECK("cache_list_clear", cache_clear(cachedir, &removed, err, sizeof err) == 0 && removed == n,
		"removed %d of %d: %s", removed, n, err);
	CHECK("cache_list_clear", cache_list(cachedir, NULL, NULL) == 0, "entries left");
	printf("ok cache_list_clear (%d entries)\n", n);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	snprintf(tmpdir, sizeof tmpdir, "%s/tegen-test-cache-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmpdir)) {
		printf("FAIL setup: mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	test_sha256();
	test_fork_race();
	test_compile();
	if (!failures) { /* the rest builds on a working compile */
		test_repair();
		test_store_race();
		test_warnings();
		test_headers();
		test_unwritable();
		test_readonly();
		test_frozen();
		test_nvrtc_error();
		test_verify();
		test_nonregular();
		test_verify_report();
		test_verify_readonly();
		test_store_warning();
		test_many();
		test_list_clear();
	}
	cache_rmtree(tmpdir);
	return failures ? 1 : 0;
}
