/* jit.h: compile generated CUDA C++ to SASS cubins with NVRTC, behind a
 * content-addressed cache (memory, then disk; see cache.h for the disk layout).
 *
 * Ownership: everything a JitResult points to (cubin, log) belongs to the
 * JitCache and stays valid, unchanged, until jit_cache_close. Callers never
 * free it. A JitCache is safe to use from many threads at once. */
#ifndef TG_JIT_H
#define TG_JIT_H

#include <stddef.h>

typedef struct JitSource {
	const char *name;         /* kernel entry, extern "C" */
	const char *src;
	const char *src_name;     /* e.g. "llama_mlp.k0_norm_quantize.cu" */
	int nheaders;
	const char *const *header_names;
	const char *const *header_srcs;
} JitSource;

typedef struct JitResult {
	void *cubin;              /* owned by the JitCache */
	size_t cubin_size;
	int regs, smem_static, spill_stores, spill_loads, stack_bytes; /* -1: unknown */
	double compile_ms;        /* of the original compile, also on a hit */
	int cache_hit;            /* 0 miss (compiled now), 1 memory, 2 disk */
	char key[65];
	char *log;                /* NVRTC warnings (ptxas -v lines removed) or NULL; owned by the JitCache */
} JitResult;

typedef struct JitCache JitCache;

/* jit_cache_open opens the cache at dir (NULL: $TEGEN_CACHE_DIR, $XDG_CACHE_HOME/tegen,
 * ~/.cache/tegen); an unusable dir gives a memory-only (or read-only) cache and one message in
 * warn (warn[0] = 0 otherwise). frozen: a miss is an error. NULL only if out of memory/NVRTC absent. */
JitCache *jit_cache_open(const char *dir, int frozen, char *warn, size_t warnlen);
/* jit_cache_close frees the cache and every result it handed out. */
void jit_cache_close(JitCache *c);
/* jit_cache_dir returns the disk directory in use, or NULL in memory-only mode. */
const char *jit_cache_dir(const JitCache *c);
/* jit_nvrtc_version is the NVRTC version in use ("13.0"), part of every key. */
const char *jit_nvrtc_version(const JitCache *c);
/* jit_key computes the cache key of (source, arch, options) without compiling. */
void jit_key(const JitCache *c, const JitSource *s, const char *arch, const char *const *opts, int nopts, char key[65]);
/* jit_find looks a key up in memory only (no hashing of the source: the fast path for a
 * caller that kept out->key); returns 1 and fills out, or 0. */
int jit_find(JitCache *c, const char *key, JitResult *out);
/* jit_compile returns the cubin for s on arch ("sm_90a"): from memory, disk, or NVRTC.
 * 0 on success; -1 with a message in err (the NVRTC log and "source: PATH" on a compile error). */
int jit_compile(JitCache *c, const JitSource *s, const char *arch, const char *const *opts, int nopts,
	JitResult *out, char *err, size_t errlen);
/* jit_compile_many compiles n sources for narch archs on nthreads threads (<= 0: online CPUs);
 * out[i*narch + a] is source i on archs[a]. Returns -1 with the first error if any failed
 * (failed results have cubin NULL), else 0. */
int jit_compile_many(JitCache *c, const JitSource *srcs, int n, const char *const *archs, int narch,
	const char *const *opts, int nopts, JitResult *out, int nthreads, char *err, size_t errlen);

#endif
