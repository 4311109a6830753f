/* hash.h: SHA-256 (FIPS 180-4), used for cache keys and cubin checksums. */
#ifndef TG_HASH_H
#define TG_HASH_H

#include <stddef.h>
#include <stdint.h>

typedef struct HashCtx {
	uint32_t h[8];
	uint64_t len;           /* bytes hashed so far */
	unsigned char buf[64];
	size_t nbuf;
} HashCtx;

/* hash_init starts a new SHA-256 computation. */
void hash_init(HashCtx *c);
/* hash_update feeds n bytes. */
void hash_update(HashCtx *c, const void *p, size_t n);
/* hash_field feeds a length-prefixed field, so that ("ab","c") and ("a","bc") differ. */
void hash_field(HashCtx *c, const void *p, size_t n);
/* hash_final writes the 32-byte digest; the context must be re-initialised to reuse. */
void hash_final(HashCtx *c, unsigned char digest[32]);
/* hash_final_hex writes the digest as 64 lowercase hex characters and a NUL. */
void hash_final_hex(HashCtx *c, char hex[65]);
/* hash_hex hashes one buffer and writes 64 lowercase hex characters and a NUL. */
void hash_hex(const void *p, size_t n, char hex[65]);

#endif
