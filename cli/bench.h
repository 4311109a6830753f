/* bench.h: GPU timing for `tegen bench` (and any tool that times GEMMs or layers).
 *
 * Method (the one tests/gpu/test_gemm.c uses): operands filled from random pools
 * of valid BF16/E4M3/E5M2 values (no NaN, no Inf), rotated among enough buffer
 * sets that one set is evicted from L2 before it comes round again (at least 3x
 * the L2 size in all, at least 2 sets); warm-up runs first (the cuBLASLt plan is
 * built there); then CUDA events around every run, launched back to back; the
 * result is the median, with min and max. Nothing here prints; failures return
 * a code and a message. Not part of libtegen's public API. */
#ifndef TG_BENCH_H
#define TG_BENCH_H

#include <stddef.h>

#include "cudrv.h"
#include "gemm.h"
#include "tegen.h"

enum { BENCH_ENOMEM = -5 };       /* beside GEMM_E*: a device allocation failed */
#define BENCH_MAX_ITERS 1000

typedef struct BenchGpu BenchGpu;

typedef struct BenchTime {
	double median, min, max;      /* ms */
	int runs, sets;               /* timed runs; rotating operand sets */
} BenchTime;

/* One bf16 input of a layer to bind, [rows][cols]. */
typedef struct BenchInput {
	const char *name;
	long rows, cols;
} BenchInput;

/* bench_gpu_open loads the driver, makes device 0's primary context current, and makes a stream,
 * a cuBLASLt context and the random pools. -1 with the reason in why (no driver, no device, ...). */
int bench_gpu_open(int iters, int warmup, BenchGpu **out, char *why, size_t whylen);
/* bench_gpu_close frees everything bench_gpu_open made (NULL is fine). */
void bench_gpu_close(BenchGpu *b);
/* bench_gpu_describe writes "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 50 MiB L2)". */
void bench_gpu_describe(const BenchGpu *b, char *buf, size_t len);
/* bench_gpu_cc is the compute capability as major*10+minor. */
int bench_gpu_cc(const BenchGpu *b);
/* bench_gpu_set_cooldown makes bench_gemm idle the GPU ms milliseconds before a GEMM's warm-up runs,
 * so every GEMM starts from the same thermal state whatever ran before it (0: no idle, the default). */
void bench_gpu_set_cooldown(BenchGpu *b, int ms);
/* bench_gpu_stream is the stream every measurement runs on. */
CUstream bench_gpu_stream(const BenchGpu *b);

/* bench_copy_bandwidth measures device-to-device copy (GB/s, read + write bytes over time). */
int bench_copy_bandwidth(BenchGpu *b, double *gbs, char *err, size_t errlen);
/* bench_gemm_check is gemm_check with this GPU's rules (no GPU work). */
int bench_gemm_check(const BenchGpu *b, const GemmDesc *d, char *err, size_t errlen);
/* bench_gemm times one GEMM (BF16 output; random operands; unit-ish scales). GEMM_OK, a GEMM_E* code
 * or BENCH_ENOMEM, with a message. */
int bench_gemm(BenchGpu *b, const GemmDesc *d, BenchTime *t, char *err, size_t errlen);
/* bench_layer creates a layer from spec text, compiles and loads it, binds rotating random bf16
 * inputs and runs it warm-up + iters times with per-kernel events; out_ms[j] gets the sum over the
 * kernels that produce tensor outs[j] of each kernel's median (0 if none). 0, or -1 with a message. */
int bench_layer(BenchGpu *b, TgContext *ctx, const char *name, const char *text, const BenchInput *in, int nin,
	const char *const *outs, int nout, double *out_ms, char *err, size_t errlen);

#endif
