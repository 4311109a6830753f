/* jit.c: NVRTC compilation behind a two-level, content-addressed cache.
 *
 * The key is SHA-256 over length-prefixed fields: a jit ABI tag, the tegen
 * version, the NVRTC version, the arch, the fixed and the caller's options,
 * the entry name, the source name and text, and every header's name and text.
 * Nothing machine-specific (no paths, no times) goes in, so caches can be
 * moved or shipped. Lookup order: memory (a mutex-guarded open-addressing
 * table keyed by the digest), then disk (cache.c, verified on load), then
 * NVRTC, whose result is published to disk and memory.
 *
 * Guarantees: a result handed out stays valid and unchanged until
 * jit_cache_close; two threads asking for the same key get the same pointers
 * once it is in memory; a compile error returns the NVRTC log and the path of
 * a file holding the failing source; frozen mode never calls NVRTC; a bad or
 * unwritable disk cache degrades to recompiling, never to an error. Nothing
 * here prints or exits.
 *
 * Memory entries live until jit_cache_close (no eviction).
 *
 * Measured by tests/unit/test_cache.c (2-CPU x86 build host, -O2): a memory
 * hit through jit_find(key) ~35 ns; through jit_compile ~1.8 us for a tiny
 * kernel, since it re-hashes the source (SHA-256 ~230 MB/s: ~4.5 us per KB).
 * So the runtime keeps the JitResult (or its key) per kernel and arch and
 * calls jit_compile only the first time. A disk hit (fresh JitCache, 3.5 KB
 * cubin, page cache warm) ~0.03 ms; a cold NVRTC compile 40-80 ms. */
#include "jit.h"
#include "cache.h"
#include "hash.h"
#include "gen.h" /* TG_VERSION */

#include <nvrtc.h>

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define JIT_ABI "tegen-jit 1"

/* Options every compile gets; part of the key through JIT_ABI and hashed explicitly too. */
static const char *const fixed_opts[] = { "-std=c++17", "-default-device", "--ptxas-options=-v" };
#define NFIXED ((int)(sizeof fixed_opts / sizeof fixed_opts[0]))

typedef struct JitEntry {
	JitResult r;              /* r.cubin, r.log owned */
} JitEntry;

struct JitCache {
	char dir[PATH_MAX];
	int disk;                 /* 0 none, 1 read-only, 2 read-write */
	int frozen;
	char nvrtc_version[32];
	HashCtx prefix;           /* key state after the fields that are fixed per process */
	char extra_buf[512];      /* TEGEN_NVRTC_DEFINES as -D options (a developer's experiments) */
	const char *extra[16];
	int nextra;
	pthread_mutex_t mu;
	JitEntry **tab;           /* open addressing, power-of-two size */
	size_t cap, n;
};

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* ---- memory table ---- */

static uint64_t key_hash(const char *key)
{
	uint64_t h = 0;
	for (int i = 0; i < 16; i++) {
		char c = key[i];
		h = h << 4 | (uint64_t)(c <= '9' ? c - '0' : c - 'a' + 10);
	}
	return h;
}

/* mem_find returns the entry for key or NULL; caller holds mu. */
static JitEntry *mem_find(JitCache *c, const char *key)
{
	if (!c->cap)
		return NULL;
	for (size_t i = key_hash(key) & (c->cap - 1);; i = (i + 1) & (c->cap - 1)) {
		JitEntry *e = c->tab[i];
		if (!e)
			return NULL;
		if (!memcmp(e->r.key, key, 64))
			return e;
	}
}

/* mem_insert adds e (key not present); caller holds mu. -1 if out of memory. */
static int mem_insert(JitCache *c, JitEntry *e)
{
	if ((c->n + 1) * 2 > c->cap) {
		size_t ncap = c->cap ? c->cap * 2 : 64;
		JitEntry **nt = calloc(ncap, sizeof *nt);
		if (!nt)
			return -1;
		for (size_t i = 0; i < c->cap; i++) {
			if (!c->tab[i])
				continue;
			size_t j = key_hash(c->tab[i]->r.key) & (ncap - 1);
			while (nt[j])
				j = (j + 1) & (ncap - 1);
			nt[j] = c->tab[i];
		}
		free(c->tab);
		c->tab = nt;
		c->cap = ncap;
	}
	size_t j = key_hash(e->r.key) & (c->cap - 1);
	while (c->tab[j])
		j = (j + 1) & (c->cap - 1);
	c->tab[j] = e;
	c->n++;
	return 0;
}

static void entry_free(JitEntry *e)
{
	if (e) {
		free(e->r.cubin);
		free(e->r.log);
		free(e);
	}
}

/* publish puts e in memory, or returns the entry another thread put there first (freeing e). */
static JitEntry *publish(JitCache *c, JitEntry *e)
{
	pthread_mutex_lock(&c->mu);
	JitEntry *old = mem_find(c, e->r.key);
	if (!old && mem_insert(c, e) != 0)
		old = NULL, e = NULL; /* out of memory: caller reports it */
	pthread_mutex_unlock(&c->mu);
	if (old) {
		entry_free(e);
		return old;
	}
	return e;
}

/* ---- key fields ---- */

static void field(HashCtx *h, const char *s)
{
	hash_field(h, s ? s : "", s ? strlen(s) : 0);
}

static void field_int(HashCtx *h, long v)
{
	char b[32];
	snprintf(b, sizeof b, "%ld", v);
	field(h, b);
}

/* ---- open / close ---- */

/* TEGEN_NVRTC_DEFINES="NAME=VALUE ..." (at most 16, 512 bytes): -DNAME=VALUE on every compile and in
 * every key, so a template's experiment macros can be set without rebuilding tegen. */
static void extra_defines(JitCache *c)
{
	const char *e = getenv("TEGEN_NVRTC_DEFINES");
	size_t used = 0;
	while (e && *e && c->nextra < 16) {
		while (*e == ' ')
			e++;
		size_t n = strcspn(e, " ");
		if (n == 0 || used + n + 3 > sizeof c->extra_buf)
			break;
		char *d = c->extra_buf + used;
		memcpy(d, "-D", 2);
		memcpy(d + 2, e, n);
		d[n + 2] = 0;
		c->extra[c->nextra++] = d;
		used += n + 3;
		e += n;
	}
}

JitCache *jit_cache_open(const char *dir, int frozen, char *warn, size_t warnlen)
{
	if (warn && warnlen)
		warn[0] = 0;
	JitCache *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	int major = 0, minor = 0;
	if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) {
		free(c);
		return NULL;
	}
	snprintf(c->nvrtc_version, sizeof c->nvrtc_version, "%d.%d", major, minor);
	hash_init(&c->prefix);
	field(&c->prefix, JIT_ABI);
	field(&c->prefix, TG_VERSION);
	field(&c->prefix, c->nvrtc_version);
	field_int(&c->prefix, NFIXED);
	for (int i = 0; i < NFIXED; i++)
		field(&c->prefix, fixed_opts[i]);
	extra_defines(c);
	field_int(&c->prefix, c->nextra);
	for (int i = 0; i < c->nextra; i++)
		field(&c->prefix, c->extra[i]);
	pthread_mutex_init(&c->mu, NULL);
	c->frozen = frozen;
	if (cache_dir_resolve(dir, c->dir, sizeof c->dir) != 0) {
		cache_seterr(warn, warnlen, "no cache directory (set TEGEN_CACHE_DIR or HOME); kernels are cached in memory only");
		c->disk = 0;
	} else {
		c->disk = cache_prepare(c->dir, warn, warnlen);
	}
	if (!c->disk)
		c->dir[0] = 0;
	return c;
}

void jit_cache_close(JitCache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->cap; i++)
		entry_free(c->tab[i]);
	free(c->tab);
	pthread_mutex_destroy(&c->mu);
	free(c);
}

const char *jit_cache_dir(const JitCache *c)
{
	return c->disk ? c->dir : NULL;
}

const char *jit_nvrtc_version(const JitCache *c) { return c->nvrtc_version; }

/* ---- key ---- */

void jit_key(const JitCache *c, const JitSource *s, const char *arch, const char *const *opts, int nopts, char key[65])
{
	HashCtx h = c->prefix;
	field(&h, arch);
	field_int(&h, nopts);
	for (int i = 0; i < nopts; i++)
		field(&h, opts[i]);
	field(&h, s->name);
	field(&h, s->src_name);
	field(&h, s->src);
	field_int(&h, s->nheaders);
	for (int i = 0; i < s->nheaders; i++) {
		field(&h, s->header_names[i]);
		field(&h, s->header_srcs[i]);
	}
	hash_final_hex(&h, key);
}

int jit_find(JitCache *c, const char *key, JitResult *out)
{
	pthread_mutex_lock(&c->mu);
	JitEntry *e = mem_find(c, key);
	if (e) {
		*out = e->r;
		out->cache_hit = 1;
	}
	pthread_mutex_unlock(&c->mu);
	return e != NULL;
}

/* ---- NVRTC log: statistics and warnings ---- */

/* parse_stats reads the ptxas -v block of entry `name` from the log; unknown values stay -1. */
static void parse_stats(const char *log, const char *name, JitResult *r)
{
	r->regs = r->smem_static = r->spill_stores = r->spill_loads = r->stack_bytes = -1;
	char pat[300];
	snprintf(pat, sizeof pat, "Compiling entry function '%s'", name);
	const char *p = strstr(log, pat);
	if (p)
		p += strlen(pat);
	else
		p = log; /* another ptxas wording: one kernel per source, so read the whole report */
	const char *end = strstr(p, "Compiling entry function");
	size_t len = end ? (size_t)(end - p) : strlen(p);
	char *blk = malloc(len + 1);
	if (!blk)
		return;
	memcpy(blk, p, len);
	blk[len] = 0;
	snprintf(pat, sizeof pat, "Function properties for %s\n", name);
	const char *q = strstr(blk, pat);
	if (!q && (q = strstr(blk, "Function properties for ")) != NULL)
		q = strchr(q, '\n') ? strchr(q, '\n') + 1 : NULL;
	else if (q)
		q += strlen(pat);
	if (q) {
		const char *t = strstr(q, "bytes stack frame");
		int a, b, d;
		/* "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads" */
		while (*q == ' ' || *q == '\t' || (*q >= 'a' && *q <= 'z') || *q == '.')
			q++;
		if (t && sscanf(q, "%d bytes stack frame, %d bytes spill stores, %d bytes spill loads", &a, &b, &d) == 3) {
			r->stack_bytes = a;
			r->spill_stores = b;
			r->spill_loads = d;
		}
	}
	q = strstr(blk, "Used ");
	if (q && sscanf(q, "Used %d registers", &r->regs) == 1) {
		const char *eol = strchr(q, '\n');
		const char *sm = strstr(q, " bytes smem");
		r->smem_static = 0;
		if (sm && (!eol || sm < eol)) {
			while (sm > q && sm[-1] >= '0' && sm[-1] <= '9')
				sm--;
			r->smem_static = atoi(sm);
		}
	}
	free(blk);
}

/* warnings_only drops the ptxas -v report from the log; NULL if nothing else is left. */
static char *warnings_only(const char *log)
{
	size_t n = strlen(log);
	char *out = malloc(n + 1), *o = out;
	if (!out)
		return NULL;
	int any = 0;
	for (const char *p = log; *p;) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p + 1) : strlen(p);
		int drop = !strncmp(p, "ptxas info", 10);
		if (!drop && !strncmp(p, "ptxas ", 6)) {
			const char *q = p + 5;
			while (*q == ' ')
				q++;
			drop = *q == '.';
		}
		if (!drop) {
			memcpy(o, p, len);
			o += len;
			for (size_t i = 0; i < len; i++)
				if (p[i] != ' ' && p[i] != '\n' && p[i] != '\t' && p[i] != '\r')
					any = 1;
		}
		p += len;
	}
	*o = 0;
	if (!any) {
		free(out);
		return NULL;
	}
	return out;
}

/* has_entry checks that the cubin defines the kernel (section .text.NAME). */
static int has_entry(const void *cubin, size_t n, const char *name)
{
	char pat[300];
	int len = snprintf(pat, sizeof pat, ".text.%s", name);
	if (len < 0 || (size_t)len >= sizeof pat)
		return 1; /* cannot check; let the loader say */
	const char *p = cubin, *end = p + n;
	while ((p = memmem(p, (size_t)(end - p), pat, (size_t)len + 1)))
		if (p == cubin || p[-1] == 0)
			return 1;
		else
			p++;
	return 0;
}

/* ---- failing sources ---- */

static int write_text(const char *path, const char *s)
{
	FILE *f = fopen(path, "wx");
	if (!f)
		return -1;
	size_t n = strlen(s);
	int ok = fwrite(s, 1, n, f) == n;
	return fclose(f) == 0 && ok ? 0 : -1;
}

/* safe_rel: a relative path without "..", made of ordinary characters. */
static int safe_rel(const char *s)
{
	if (!*s || *s == '/' || strstr(s, "..") || strlen(s) > 200)
		return 0;
	for (const char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
				*p == '.' || *p == '_' || *p == '-' || *p == '/'))
			return 0;
	return 1;
}

/* write_in writes name (relative, parents created) under dir; path gets the full name. */
static int write_in(const char *dir, const char *name, const char *text, char *path, size_t pathlen)
{
	char nm[256];
	if (safe_rel(name)) {
		snprintf(nm, sizeof nm, "%s", name);
	} else { /* flatten anything unusual */
		size_t i = 0;
		for (const char *p = name; *p && i < 200; p++)
			nm[i++] = ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
				*p == '.' || *p == '-') ? *p : '_';
		nm[i] = 0;
		if (!i || nm[0] == '.')
			snprintf(nm, sizeof nm, "source.cu");
	}
	if (snprintf(path, pathlen, "%s/%s", dir, nm) >= (int)pathlen)
		return -1;
	for (char *p = path + strlen(dir) + 1; (p = strchr(p, '/')); p++) {
		*p = 0;
		mkdir(path, 0755);
		*p = '/';
	}
	return write_text(path, text);
}

/* save_failure writes the source, headers and log; path gets the source's path ("" if it failed). */
static void save_failure(JitCache *c, const JitSource *s, const char *key, const char *log, char *path, size_t pathlen)
{
	char dir[PATH_MAX + 64], tmp[PATH_MAX + 300];
	path[0] = 0;
	int made = 0;
	if (c->disk == 2) {
		snprintf(dir, sizeof dir, "%s/tmp/fail-%.16s-XXXXXX", c->dir, key);
		made = mkdtemp(dir) != NULL;
	}
	if (!made) {
		const char *t = getenv("TMPDIR");
		snprintf(dir, sizeof dir, "%s/tegen-fail-%.16s-XXXXXX", t && *t ? t : "/tmp", key);
		if (!mkdtemp(dir)) {
			snprintf(dir, sizeof dir, "/tmp/tegen-fail-%.16s-XXXXXX", key);
			if (!mkdtemp(dir))
				return;
		}
	}
	chmod(dir, 0755);
	for (int i = 0; i < s->nheaders; i++)
		write_in(dir, s->header_names[i] ? s->header_names[i] : "header.h", s->header_srcs[i] ? s->header_srcs[i] : "", tmp, sizeof tmp);
	write_in(dir, "nvrtc.log", log, tmp, sizeof tmp);
	const char *sn = s->src_name && *s->src_name ? s->src_name : "kernel.cu";
	const char *base = strrchr(sn, '/');
	if (write_in(dir, base ? base + 1 : sn, s->src, path, pathlen) != 0)
		path[0] = 0;
}

/* ---- compile ---- */

static char *nvrtc_log(nvrtcProgram p)
{
	size_t n = 0;
	if (nvrtcGetProgramLogSize(p, &n) != NVRTC_SUCCESS || n == 0)
		return NULL;
	char *l = malloc(n + 1);
	if (!l)
		return NULL;
	if (nvrtcGetProgramLog(p, l) != NVRTC_SUCCESS) {
		free(l);
		return NULL;
	}
	l[n] = 0;
	return l;
}

static int valid_arch(const char *arch)
{
	if (!arch || strncmp(arch, "sm_", 3) != 0 || !(arch[3] >= '0' && arch[3] <= '9') || strlen(arch) > 16)
		return 0;
	for (const char *p = arch + 3; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z')))
			return 0;
	return 1;
}

/* compile runs NVRTC; on success *ep is a new entry (not yet published). */
static int compile(JitCache *c, const JitSource *s, const char *arch, const char *const *opts, int nopts,
	const char *key, JitEntry **ep, char *err, size_t errlen)
{
	char archopt[64];
	snprintf(archopt, sizeof archopt, "--gpu-architecture=%s", arch);
	const char **all = malloc(sizeof *all * (size_t)(1 + NFIXED + c->nextra + nopts));
	if (!all)
		return cache_seterr(err, errlen, "%s: out of memory", s->name), -1;
	int na = 0;
	all[na++] = archopt;
	for (int i = 0; i < NFIXED; i++)
		all[na++] = fixed_opts[i];
	for (int i = 0; i < c->nextra; i++)
		all[na++] = c->extra[i];
	for (int i = 0; i < nopts; i++)
		all[na++] = opts[i];
	const char *sn = s->src_name && *s->src_name ? s->src_name : "kernel.cu";

	double t0 = now_ms();
	nvrtcProgram prog;
	nvrtcResult rc = nvrtcCreateProgram(&prog, s->src, sn, s->nheaders,
		(const char **)s->header_srcs, (const char **)s->header_names);
	if (rc != NVRTC_SUCCESS) {
		free(all);
		return cache_seterr(err, errlen, "%s: nvrtcCreateProgram: %s", s->name, nvrtcGetErrorString(rc)), -1;
	}
	rc = nvrtcCompileProgram(prog, na, all);
	free(all);
	char *log = nvrtc_log(prog);
	if (rc != NVRTC_SUCCESS) {
		char path[PATH_MAX + 300];
		save_failure(c, s, key, log ? log : "", path, sizeof path);
		cache_seterr(err, errlen, "%s: NVRTC compile failed for %s (%s):\n%s\nsource: %s", s->name, arch,
			nvrtcGetErrorString(rc), log ? log : "(no log)", path[0] ? path : "(could not be written)");
		free(log);
		nvrtcDestroyProgram(&prog);
		return -1;
	}
	size_t size = 0;
	void *cubin = NULL;
	if (nvrtcGetCUBINSize(prog, &size) != NVRTC_SUCCESS || size == 0 || !(cubin = malloc(size)) ||
		nvrtcGetCUBIN(prog, cubin) != NVRTC_SUCCESS) {
		free(cubin);
		free(log);
		nvrtcDestroyProgram(&prog);
		return cache_seterr(err, errlen, "%s: NVRTC produced no cubin for %s", s->name, arch), -1;
	}
	nvrtcDestroyProgram(&prog);
	double ms = now_ms() - t0;
	if (!has_entry(cubin, size, s->name)) {
		free(cubin);
		free(log);
		return cache_seterr(err, errlen, "%s: the compiled source defines no kernel named %s (extern \"C\" __global__?)",
			s->name, s->name), -1;
	}
	JitEntry *e = calloc(1, sizeof *e);
	if (!e) {
		free(cubin);
		free(log);
		return cache_seterr(err, errlen, "%s: out of memory", s->name), -1;
	}
	e->r.cubin = cubin;
	e->r.cubin_size = size;
	e->r.compile_ms = ms;
	memcpy(e->r.key, key, 65);
	parse_stats(log ? log : "", s->name, &e->r);
	e->r.log = log ? warnings_only(log) : NULL;
	free(log);
	*ep = e;
	return 0;
}

/* A failed disk store costs a recompile in every later process, so say why, once per
 * process (later failures usually share the reason): on stderr, the library's only print. */
#define CACHE_STORE_ERRLEN 5200
static void warn_store_failed(const char *why)
{
	static int warned;
	if (__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED) == 0)
		fprintf(stderr, "tegen: warning: cannot store a kernel in the disk cache (%s); it will be compiled "
			"again next time\n", why);
}

int jit_compile(JitCache *c, const JitSource *s, const char *arch, const char *const *opts, int nopts,
	JitResult *out, char *err, size_t errlen)
{
	char key[65];
	memset(out, 0, sizeof *out);
	if (!s || !s->name || !s->src)
		return cache_seterr(err, errlen, "jit_compile: source without name or text"), -1;
	if (!valid_arch(arch))
		return cache_seterr(err, errlen, "%s: arch %s is not a SASS target like sm_90a", s->name, arch ? arch : "(null)"), -1;
	if (strlen(s->name) > TG_ENTRY_MAX)
		return cache_seterr(err, errlen, "%s: kernel name too long", s->name), -1;
	jit_key(c, s, arch, opts, nopts, key);
	memcpy(out->key, key, 65);
	if (jit_find(c, key, out))
		return 0;

	JitEntry *e = NULL;
	int hit = 0;
	if (c->disk) {
		CacheEntry ce;
		if (cache_load(c->dir, key, &ce, NULL, 0) == CACHE_HIT && !strcmp(ce.meta.name, s->name) &&
			!strcmp(ce.meta.arch, arch) && (e = calloc(1, sizeof *e))) {
			e->r.cubin = ce.cubin;
			e->r.cubin_size = ce.meta.cubin_size;
			e->r.regs = ce.meta.regs;
			e->r.smem_static = ce.meta.smem_static;
			e->r.spill_stores = ce.meta.spill_stores;
			e->r.spill_loads = ce.meta.spill_loads;
			e->r.stack_bytes = ce.meta.stack_bytes;
			e->r.compile_ms = ce.meta.compile_ms;
			e->r.log = ce.log;
			memcpy(e->r.key, key, 65);
			hit = 2;
		} else {
			cache_entry_free(&ce);
		}
	}
	if (!e) {
		if (c->frozen)
			return cache_seterr(err, errlen, "kernel %s not in cache (frozen mode; arch %s, key %.16s)", s->name, arch, key), -1;
		if (compile(c, s, arch, opts, nopts, key, &e, err, errlen) != 0)
			return -1;
		if (c->disk == 2) { /* a failed store only costs a recompile next time */
			CacheMeta m;
			memset(&m, 0, sizeof m);
			memcpy(m.key, key, 65);
			snprintf(m.name, sizeof m.name, "%s", s->name);
			snprintf(m.arch, sizeof m.arch, "%s", arch);
			m.regs = e->r.regs;
			m.smem_static = e->r.smem_static;
			m.spill_stores = e->r.spill_stores;
			m.spill_loads = e->r.spill_loads;
			m.stack_bytes = e->r.stack_bytes;
			m.compile_ms = e->r.compile_ms;
			m.cubin_size = e->r.cubin_size;
			snprintf(m.tegen_version, sizeof m.tegen_version, "%s", TG_VERSION);
			snprintf(m.nvrtc_version, sizeof m.nvrtc_version, "%s", c->nvrtc_version);
			char why[CACHE_STORE_ERRLEN];
			if (cache_store(c->dir, &m, e->r.cubin, s->src, e->r.log, why, sizeof why) != 0)
				warn_store_failed(why);
		}
	}
	JitEntry *p = publish(c, e);
	if (!p)
		return cache_seterr(err, errlen, "%s: out of memory", s->name), -1;
	*out = p->r;
	out->cache_hit = p == e ? hit : 1;
	return 0;
}

/* ---- parallel ---- */

typedef struct Batch {
	JitCache *c;
	const JitSource *srcs;
	const char *const *archs;
	int narch;
	const char *const *opts;
	int nopts;
	JitResult *out;
	int total, next, failed;
	char *err;
	size_t errlen;
	pthread_mutex_t mu;
} Batch;

static void *batch_worker(void *arg)
{
	Batch *b = arg;
	char err[8192];
	for (;;) {
		pthread_mutex_lock(&b->mu);
		int i = b->next++;
		pthread_mutex_unlock(&b->mu);
		if (i >= b->total)
			return NULL;
		if (jit_compile(b->c, &b->srcs[i / b->narch], b->archs[i % b->narch], b->opts, b->nopts, &b->out[i],
				err, sizeof err) != 0) {
			pthread_mutex_lock(&b->mu);
			if (!b->failed++)
				cache_seterr(b->err, b->errlen, "%s", err);
			pthread_mutex_unlock(&b->mu);
		}
	}
}

int jit_compile_many(JitCache *c, const JitSource *srcs, int n, const char *const *archs, int narch,
	const char *const *opts, int nopts, JitResult *out, int nthreads, char *err, size_t errlen)
{
	if (n <= 0 || narch <= 0)
		return 0;
	Batch b = { c, srcs, archs, narch, opts, nopts, out, n * narch, 0, 0, err, errlen, PTHREAD_MUTEX_INITIALIZER };
	if (nthreads <= 0) {
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);
		nthreads = cpus > 0 ? (int)cpus : 1;
	}
	if (nthreads > b.total)
		nthreads = b.total;
	if (nthreads > 256)
		nthreads = 256;
	pthread_t th[256];
	int started = 0;
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 32u << 20); /* the C++ front end recurses deeply */
	for (int i = 1; i < nthreads; i++) {
		if (pthread_create(&th[started], &attr, batch_worker, &b) != 0)
			break;
		started++;
	}
	pthread_attr_destroy(&attr);
	batch_worker(&b); /* the calling thread works too */
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	pthread_mutex_destroy(&b.mu);
	return b.failed ? -1 : 0;
}
