/* cache.h: the on-disk kernel cache, content-addressed by a 64-hex-digit key.
 *
 * Layout under the cache directory DIR:
 *   DIR/v1/KK/KEY/            one entry (KK = first two hex digits of KEY)
 *       meta.txt              "field value" lines, ending with "end"
 *       kernel.cubin          the SASS cubin
 *       source.cu             the generated source (for people and tools)
 *       log.txt               NVRTC warnings, only when meta says log 1
 *   DIR/v1/KK/.tmp-*          an entry being written (renamed into place)
 *   DIR/tmp/                  sources of failed compiles
 *   DIR/tuning/v1.txt         the tuning DB (`tegen tune`; format in gen/tune.c)
 * Many processes may share one directory; nothing here takes a lock. */
#ifndef TG_CACHE_H
#define TG_CACHE_H

#include <stddef.h>
#include <time.h>

#define CACHE_LAYOUT "v1"

/* Everything meta.txt records about an entry. */
typedef struct CacheMeta {
	char key[65];
	char name[128];           /* kernel entry point */
	char arch[32];            /* e.g. sm_90a */
	int regs, smem_static, spill_stores, spill_loads, stack_bytes;
	double compile_ms;
	size_t cubin_size;
	char cubin_sha256[65];
	char tegen_version[32];
	char nvrtc_version[32];
	long long created;        /* unix seconds */
	int has_log;
} CacheMeta;

/* A loaded entry: cubin and log are malloc'd and owned by the caller. */
typedef struct CacheEntry {
	CacheMeta meta;
	void *cubin;
	char *log;                /* NULL when the compile had nothing to say */
} CacheEntry;

enum { CACHE_BAD = -1, CACHE_MISS = 0, CACHE_HIT = 1 };

/* cache_dir_resolve picks the directory: dir if non-NULL, else $TEGEN_CACHE_DIR,
 * $XDG_CACHE_HOME/tegen, ~/.cache/tegen; returns -1 if none fits in out. */
int cache_dir_resolve(const char *dir, char *out, size_t outlen);
/* cache_prepare creates DIR/v1 and DIR/tmp; returns 2 writable, 1 read-only, 0 unusable (why in err). */
int cache_prepare(const char *dir, char *err, size_t errlen);
/* cache_load reads and verifies entry KEY: CACHE_HIT (e filled), CACHE_MISS, or CACHE_BAD (why in err). */
int cache_load(const char *dir, const char *key, CacheEntry *e, char *err, size_t errlen);
/* cache_entry_free releases what cache_load allocated. */
void cache_entry_free(CacheEntry *e);
/* cache_store publishes an entry atomically; a valid existing entry wins, a bad one is replaced; 0 or -1. */
int cache_store(const char *dir, const CacheMeta *m, const void *cubin, const char *source,
	const char *log, char *err, size_t errlen);
/* cache_tuning_path writes DIR/tuning/v1.txt (the tuning DB, gen/tune.c) into out; -1 if it does not fit. */
int cache_tuning_path(const char *dir, char *out, size_t outlen);
/* cache_entry_path writes DIR/v1/KK/KEY into out; -1 if it does not fit. */
int cache_entry_path(const char *dir, const char *key, char *out, size_t outlen);
/* Every file of an entry is opened only if it is a regular file (lstat, then O_NOFOLLOW |
 * O_NONBLOCK): a FIFO, device, socket or link in its place makes the entry bad, never a hang. */
/* cache_list calls fn for every entry whose meta parses; returns the number of entries, or -1
 * with errno set (ENOTDIR: DIR or DIR/v1 is not a directory). A missing DIR is empty: 0. */
int cache_list(const char *dir, void (*fn)(void *ud, const CacheMeta *m, long long bytes, time_t mtime), void *ud);
/* cache_clear removes every entry and leftover temp dir; *removed counts entries; 0 or -1. */
int cache_clear(const char *dir, int *removed, char *err, size_t errlen);
/* cache_verify checks every entry (and that every shard is a directory), calls bad(ud,key,why)
 * for each bad one (key: the entry's or shard's name; why ends with " (removed)" or " (could not
 * remove it: ...)" when remove_bad), removes them if asked and counts the removed in *removed
 * (may be NULL); returns the number of bad entries, or -1 with errno set as cache_list. */
int cache_verify(const char *dir, int remove_bad, int *removed,
	void (*bad)(void *ud, const char *key, const char *why), void *ud);
/* cache_rmtree removes a directory tree (no symlinks followed); 0 or -1. */
int cache_rmtree(const char *path);
/* cache_seterr formats a message into err[n] (skipped when err is NULL or n 0); jit.c uses it too. */
void cache_seterr(char *err, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
