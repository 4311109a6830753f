/* bench_model.h: what `tegen bench` measures, as pure functions (no CUDA).
 *
 * A benchmark is a list of linear layers Y[M][N] = X[M][K] W[N][K]^T (M tokens,
 * K in features, N out features), each run in three GEMM passes and five
 * precisions. This header turns the three kinds of input (explicit shapes, a
 * transformer config, a spec's gemm_cast ops) into that list, maps a layer and
 * a pass to the cuBLASLt GEMM of gemm.h (dims, dtypes, scale mode), and writes
 * the small specs whose quantize kernels a real training step pays for. */
#ifndef TG_BENCH_MODEL_H
#define TG_BENCH_MODEL_H

#include <stddef.h>

#include "gemm.h"
#include "gen.h"

#define BENCH_MAX_LINEARS 64

/* One linear layer: tokens x in x out (the fprop GEMM's M x K x N). */
typedef struct BenchLinear {
	char name[40];
	long m, k, n;
} BenchLinear;

/* A transformer config (`--hidden ... --seq`); 0 = not given. */
typedef struct BenchModel {
	long hidden, ffn, heads, kv_heads, layers, micro_batch, seq, tokens;
	int no_gate;               /* MLP up is [ffn, hidden] instead of gated [2*ffn, hidden] */
} BenchModel;

enum { BENCH_FPROP, BENCH_DGRAD, BENCH_WGRAD, BENCH_NPASS };

/* Precisions, in table order. BF16 is the baseline of every speedup. */
enum { BP_BF16, BP_DELAYED, BP_CURRENT, BP_BLOCK, BP_MXFP8, BP_NVFP4, BP_COUNT };
/* bench_prec_blockfmt: MXFP8 or NVFP4, native on sm_100+, emulated (dequantize + BF16 GEMM) below. */
int bench_prec_blockfmt(int prec);

/* A GEMM's dims in gemm.h's sense: D[m][n] = A[m][k] B[n][k]^T. */
typedef struct BenchDims { long m, n, k; } BenchDims;

/* bench_pass_name: "Fprop", "Dgrad", "Wgrad". */
const char *bench_pass_name(int pass);
/* bench_prec_name: "BF16", "FP8 delayed", ... (MXFP8 without the emulated/native suffix). */
const char *bench_prec_name(int prec);
/* bench_prec_key: the short CSV spelling: "bf16", "fp8_delayed", "fp8_current", "fp8_block", "mxfp8". */
const char *bench_prec_key(int prec);

/* bench_model_linears derives the four linear layers of one transformer layer:
 * QKV (N = (heads + 2*kv_heads) * hidden/heads), attention out (hidden -> hidden),
 * MLP up (N = 2*ffn gated, else ffn) and MLP down (ffn -> hidden), M = tokens or
 * micro_batch * seq. Returns the count, or -1 with a message in err. */
int bench_model_linears(const BenchModel *cfg, BenchLinear *out, int max, char *err, size_t errlen);
/* bench_parse_shapes reads "MxKxN,MxKxN,..." (each extent 1..2^31-1). Count, or -1 with a message. */
int bench_parse_shapes(const char *s, BenchLinear *out, int max, char *err, size_t errlen);
/* bench_plan_linears turns a planned spec's gemm_cast calls into linear layers with the dynamic
 * dims set to tokens (dgrad and wgrad calls mapped back to their layer); duplicates dropped. */
int bench_plan_linears(const Plan *p, long tokens, BenchLinear *out, int max, char *err, size_t errlen);

/* bench_pass_dims: the GEMM of a pass. fprop m=M k=K n=N; dgrad (dX = dY W) m=M k=N n=K;
 * wgrad (dW = dY^T X) m=N k=M n=K. */
BenchDims bench_pass_dims(const BenchLinear *l, int pass);
/* bench_flops: 2*m*n*k of a pass (the same for all three passes of a layer). */
double bench_flops(const BenchLinear *l);

/* bench_gemm_desc fills the cuBLASLt GEMM a precision runs in a pass (BF16 output):
 *   BF16: no scales. FP8 delayed/current: per-tensor, HYBRID (fprop E4M3 x E4M3, dgrad
 *   dY E5M2 x W E4M3, wgrad dY E5M2 x X E4M3), fast accumulation as fast_accum says
 *   (-1: Transformer Engine's default, on for fprop only). FP8 block: E4M3, 1x128 data
 *   x 128x128 weights (wgrad 1x128 x 1x128), no fast accumulation. MXFP8: E4M3, E8M0
 *   blocks of 32 (native only from sm_100). */
GemmDesc bench_gemm_desc(const BenchLinear *l, int pass, int prec, int fast_accum);

/* Ops of a quantize spec (bench_quant_spec), in order; each one's output tensor and pass. */
enum { BQ_X_FPROP, BQ_W_FPROP, BQ_DY_DGRAD, BQ_W_DGRAD, BQ_DY_WGRAD, BQ_X_WGRAD, BQ_COUNT };
/* bench_quant_out: output tensor name of quantize op i ("xf", "wf", ...). */
const char *bench_quant_out(int i);
/* bench_quant_pass: the pass whose GEMM reads quantize op i's output. */
int bench_quant_pass(int i);
/* bench_quant_input: input tensor of op i ("x", "w", "dy2", ...), its rows (0 = tokens) and columns. */
const char *bench_quant_input(const BenchLinear *l, int i, long *rows, long *cols);
/* bench_quant_spec writes a spec (YAML text, in the arena) with one quantize op per operand the
 * three passes read, in the layout each reads (fprop rowwise X, W; dgrad rowwise dY, columnwise W;
 * wgrad columnwise dY, X), with the recipe of prec (HYBRID for delayed/current, E4M3 block 1x128
 * with 128x128 weights, E4M3 MXFP8). NULL for BF16. Tokens are a dynamic dim. */
char *bench_quant_spec(Arena *a, const BenchLinear *l, int prec);

/* bench_dequant_bytes: bytes an emulated MXFP8 or NVFP4 GEMM's dequantize moves (read E4M3 + E8M0 per 32,
 * or E2M1 + E4M3 per 16; write BF16; both operands). */
double bench_dequant_bytes(const BenchLinear *l, int pass, int prec);

#endif
