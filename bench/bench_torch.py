#!/usr/bin/env python3
"""bench_torch.py: the cross-check of `tegen bench`, through PyTorch.

Times the same GEMMs as `tegen bench` (same shape derivation, same passes, same
median method) with torch.matmul (BF16) and torch._scaled_mm (FP8 per-tensor,
HYBRID: E4M3 x E4M3 in fprop, E5M2 dY x E4M3 in dgrad and wgrad, BF16 output,
fast accumulation in fprop only unless --fast-accum says otherwise), and prints
the same table layout (kernel-only: torch has no fused quantize to compare).

    python3 bench/bench_torch.py --hidden 4096 --ffn 14336 --heads 32 --kv-heads 8 \\
        --layers 32 --micro-batch 2 --seq 4096 [--csv FILE]
    python3 bench/bench_torch.py --shapes 8192x4096x6144,...
    python3 bench/bench_torch.py ... --list      # the GEMMs, no GPU or torch needed

Method: operands with the value distribution of tegen bench's pools (--data tegen, the default:
sign, exponent and mantissa bits uniform, BF16 +-[2^-7, 2), E4M3 and E5M2 +-[2^-3, 8), as
cli/bench.c's make_pool; an FP8 GEMM's time moves with its operands' bits, +2.7% on the QKV
fprop against randn data on the H100), or torch.randn (--data randn; FP8: the BF16 values cast), rotated over
enough sets to cover >= 3x the L2 cache (2..8 sets), --warmup runs, then CUDA
events around each of --iters back-to-back runs; median (mean of the middle two
for an even count), as cli/bench.c does. Exit: 0 ok, 1 no GPU, 2 bad usage.
"""
import argparse
import math
import sys
import time

PASSES = ("Fprop", "Dgrad", "Wgrad")


def linears(args):
    """The linear layers (name, M tokens, K in, N out), as cli/bench_model.c derives them."""
    if args.shapes:
        out = []
        for i, s in enumerate(args.shapes.split(",")):
            parts = s.lower().split("x")
            if len(parts) != 3 or not all(p.isdigit() and 0 < int(p) <= 2**31 - 1 for p in parts):
                raise ValueError(f"--shapes: '{s}' is not MxKxN (tokens x in x out)")
            out.append((f"shape{i + 1}", *map(int, parts)))
        return out
    h, f, a = args.hidden, args.ffn, args.heads
    if not (h and f and a):
        raise ValueError("give --shapes or a model (--hidden --ffn --heads --seq ...)")
    g = args.kv_heads or a
    if a % g:
        raise ValueError(f"--kv-heads {g} must divide --heads {a}")
    if h % a:
        raise ValueError(f"--heads {a} must divide --hidden {h} (head dim = hidden / heads)")
    if args.tokens:
        m = args.tokens
    elif args.seq:
        m = (args.micro_batch or 1) * args.seq
    else:
        raise ValueError("a model needs --seq (tokens = micro-batch x seq) or --tokens")
    hd = h // a
    up = f if args.no_gate else 2 * f
    return [("qkv", m, h, (a + 2 * g) * hd), ("attn_out", m, h, h),
            ("mlp_up" if args.no_gate else "mlp_up_gated", m, h, up), ("mlp_down", m, f, h)]


def pass_dims(lin, p):
    """(m, k, n) of a pass: fprop M K N; dgrad (dX = dY W) M N K; wgrad (dW = dY^T X) N M K."""
    _, m, k, n = lin
    return ((m, k, n), (m, n, k), (n, m, k))[p]


def median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def tegen_pool(torch, rows, cols, dt):
    """rows x cols values drawn as cli/bench.c's make_pool draws them: a random sign, an exponent uniform over
    8 (BF16: 2^-7..2^0) or 6 (FP8: 2^-3..2^2) values, random mantissa bits."""
    r = torch.randint(0, 1 << 30, (rows, cols), dtype=torch.int32, device="cuda")
    sign, ex, man = (r >> 20) & 1, (r % 8) if dt == torch.bfloat16 else (r % 6), r >> 3
    if dt == torch.bfloat16:
        bits = (sign << 15) | ((120 + ex) << 7) | (man & 0x7F)
        return bits.to(torch.int16).view(torch.bfloat16)
    if dt == torch.float8_e4m3fn:
        bits = (sign << 7) | ((4 + ex) << 3) | (man & 7)
    else:
        bits = (sign << 7) | ((12 + ex) << 2) | (man & 3)
    return bits.to(torch.uint8).view(dt)


def time_gemm(torch, m, k, n, prec, p, args, l2):
    """Median ms of one GEMM D[m,n] = A[m,k] B[n,k]^T; raises on an unsupported combination."""
    dev = "cuda"
    fp8 = prec == "fp8"
    es = 1 if fp8 else 2
    set_bytes = (m * k + n * k) * es
    nsets = max(2, min(8, math.ceil(3 * l2 / set_bytes)))
    a_dt = torch.float8_e4m3fn if p == 0 else torch.float8_e5m2
    sets = []
    for _ in range(nsets):
        if args.data == "tegen":
            a = tegen_pool(torch, m, k, a_dt if fp8 else torch.bfloat16)
            b = tegen_pool(torch, n, k, torch.float8_e4m3fn if fp8 else torch.bfloat16)
        else:
            a = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
            b = torch.randn(n, k, device=dev, dtype=torch.bfloat16)
            if fp8:
                a = a.to(a_dt)
                b = b.to(torch.float8_e4m3fn)
        sets.append((a, b.t()))  # b.t(): [k, n] column-major, the TN form _scaled_mm needs
    one = torch.ones((), device=dev, dtype=torch.float32)
    fast = (p == 0) if args.fast_accum == "auto" else args.fast_accum == "on"

    def run(i):
        a, bt = sets[i % nsets]
        if fp8:
            r = torch._scaled_mm(a, bt, scale_a=one, scale_b=one, out_dtype=torch.bfloat16, use_fast_accum=fast)
            return r[0] if isinstance(r, tuple) else r
        return torch.matmul(a, bt)

    ev = [torch.cuda.Event(enable_timing=True) for _ in range(args.iters + 1)]
    if args.cooldown > 0:  # the operands made, the GPU idle: a cool start, as every other GEMM gets
        torch.cuda.synchronize()
        time.sleep(args.cooldown / 1000)
    for i in range(args.warmup + args.iters):
        if i >= args.warmup:
            ev[i - args.warmup].record()
        run(i)
    ev[args.iters].record()
    ev[args.iters].synchronize()
    t = median([ev[j].elapsed_time(ev[j + 1]) for j in range(args.iters)])
    del sets
    return max(t, 1e-6)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shapes")
    for o in ("hidden", "ffn", "heads", "kv-heads", "micro-batch", "seq", "tokens"):
        ap.add_argument("--" + o, type=int, default=0)
    ap.add_argument("--layers", type=int, default=1)
    ap.add_argument("--no-gate", action="store_true")
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--fast-accum", choices=("auto", "on", "off"), default="auto")
    ap.add_argument("--budget", type=float, default=170)
    ap.add_argument("--cooldown", type=int, default=0,
                    help="idle the GPU MS ms before each GEMM's warm-up (as tegen bench --cooldown)")
    ap.add_argument("--data", choices=("tegen", "randn"), default="tegen",
                    help="operand values: tegen bench's distribution (default) or torch.randn")
    ap.add_argument("--precisions", default="bf16,fp8", help="bf16,fp8 (default both)")
    ap.add_argument("--csv")
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args()
    if args.iters < 10:
        ap.error("--iters must be >= 10")
    if args.shapes and (args.hidden or args.ffn or args.heads or args.tokens):
        ap.error("give only one of --shapes, a model config")
    try:
        lins = linears(args)
    except ValueError as e:
        ap.error(str(e))
    if args.shapes:
        source = f"shapes {args.shapes}"
    else:
        kv = args.kv_heads or args.heads
        tok = (f"tokens {args.tokens}" if args.tokens else
               f"tokens {lins[0][1]} (micro-batch {args.micro_batch or 1} x seq {args.seq})")
        source = (f"model: hidden {args.hidden}, ffn {args.ffn} ({'no gate' if args.no_gate else 'gated'}), "
                  f"heads {args.heads}, kv-heads {kv}, {tok}, {args.layers} layers")
    if args.list:
        print(source)
        print(f"{'layer':<14} {'pass':<6} {'GEMM MxKxN':<20} GFLOP")
        for p in range(3):
            for lin in lins:
                m, k, n = pass_dims(lin, p)
                print(f"{lin[0]:<14} {PASSES[p]:<6} {f'{m}x{k}x{n}':<20} {2 * m * k * n / 1e9:.1f}")
        return 0
    try:
        import torch
    except ImportError as e:
        print(f"bench_torch: needs PyTorch ({e})", file=sys.stderr)
        return 1
    if not torch.cuda.is_available():
        print("bench_torch: needs a GPU (torch.cuda.is_available() is False)", file=sys.stderr)
        return 1
    props = torch.cuda.get_device_properties(0)
    l2 = getattr(props, "L2_cache_size", 0) or 50 << 20
    cc = props.major * 10 + props.minor
    device = f"{props.name} (sm_{cc}, {props.multi_processor_count} SMs, {l2 >> 20} MiB L2), torch {torch.__version__}"
    want = set(args.precisions.split(","))
    if not want or want - {"bf16", "fp8"}:
        print(f"bench_torch: --precisions takes bf16,fp8, not '{args.precisions}'", file=sys.stderr)
        return 2
    precs = [("bf16", "torch BF16")] if "bf16" in want else []
    if cc >= 89 and "fp8" in want:
        precs.append(("fp8", "torch FP8"))
    t0 = time.time()
    res = {}  # (pass, layer index, prec) -> ms or an error string
    total = 3 * len(lins) * len(precs)
    step = 0
    for li, lin in enumerate(lins):
        for p in range(3):
            m, k, n = pass_dims(lin, p)
            for key, label in precs:
                step += 1
                if time.time() - t0 > args.budget:
                    res[(p, li, key)] = f"skipped: past the --budget of {args.budget:.0f} s"
                    continue
                try:
                    ms = time_gemm(torch, m, k, n, key, p, args, l2)
                    res[(p, li, key)] = ms
                    msg = f"{ms:8.3f} ms {2 * m * n * k / ms / 1e9:6.0f} TFLOP/s"
                except Exception as e:  # an unsupported shape or dtype: say why in the row
                    res[(p, li, key)] = str(e).split("\n")[0][:200]
                    msg = "n/a: " + res[(p, li, key)]
                torch.cuda.empty_cache()
                print(f"bench_torch: [{step}/{total} {time.time() - t0:4.0f}s] {PASSES[p]} {lin[0]:<12} "
                      f"{f'{m}x{k}x{n}':<18} {label:<16} {msg}", file=sys.stderr, flush=True)

    print(f"bench_torch on {device}\n{source}")
    print(f"method: median of {args.iters} runs after {args.warmup} warm-up runs, CUDA events, operands rotated over "
          f">= 3x L2, {'tegen bench pool' if args.data == 'tegen' else 'torch.randn'} data, BF16 output"
          f"{', the GPU idle before each GEMM (--cooldown)' if args.cooldown else ''}; took {time.time() - t0:.1f} s")
    fa = {"auto": "in fprop only (TE default)", "on": "on", "off": "off"}[args.fast_accum]
    print(f"FP8 tensor: torch._scaled_mm, per-tensor scales, HYBRID (E4M3 X and W, E5M2 dY), fast accumulation {fa}")
    rows = []  # for the CSV

    def row(c1, c2, label, ms, flops, bf):
        head = f"{c1:<12.12} {c2:<18.18} {label:<15} | "
        if not isinstance(ms, float):
            print(head + f"n/a: {ms}")
            return
        sp = f"{bf / ms:6.2f}x" if isinstance(bf, float) else "      -"
        print(head + f"{ms:8.3f} {flops / ms / 1e9:7.0f} {sp:>7}")

    def header(c1, c2):
        print(f"{c1:<12} {c2:<18} {'precision':<15} | {'ms':>8} {'TFLOP/s':>7} {'vs BF16':>7}")

    what = ("Y[M,N] = X[M,K] W[N,K]^T: A = X rowwise, B = W rowwise",
            "dX[M,N] = dY[M,K] W[K,N]: A = dY rowwise, B = W columnwise (W^T); M tokens, K out, N in",
            "dW[M,N] = dY^T[M,K] X[K,N]: A = dY columnwise, B = X columnwise; M out, K tokens, N in")
    for p in range(3):
        print(f"\n{PASSES[p]}  ({what[p]})")
        header("layer", "GEMM MxKxN")
        for li, lin in enumerate(lins):
            m, k, n = pass_dims(lin, p)
            flops = 2.0 * m * n * k
            bf = res.get((p, li, "bf16"), "BF16 not timed")
            for j, (key, label) in enumerate(precs):
                ms = res[(p, li, key)]
                row(lin[0] if j == 0 else "", f"{m}x{k}x{n}" if j == 0 else "", label, ms, flops, bf)
                rows.append(("gemm", PASSES[p], lin[0], m, k, n, key, ms, flops, bf))

    def tot(passes, key, times):
        ms, flops, missing, first = 0.0, 0.0, 0, None
        for p in passes:
            for li, lin in enumerate(lins):
                m, k, n = pass_dims(lin, p)
                flops += 2.0 * m * n * k * times
                v = res.get((p, li, key), f"{key} not timed")
                if isinstance(v, float):
                    ms += v * times
                else:
                    missing += 1
                    first = first or v
        n = len(passes) * len(lins)
        return (ms if not missing else f"{missing} of {n} GEMMs missing ({first})"), flops

    print("\nTotals (sums of the GEMMs above; TFLOP/s = their FLOP / their time)")
    header("scope", "TFLOP")
    scopes = [(PASSES[p], [p], 1) for p in range(3)] + [("layer", [0, 1, 2], 1),
                                                          (f"model x{args.layers}", [0, 1, 2], args.layers)]
    for name, passes, times in scopes:
        bf, flops = tot(passes, "bf16", times)
        for j, (key, label) in enumerate(precs):
            ms, _ = tot(passes, key, times)
            row(name if j == 0 else "", f"{flops / 1e12:.3f}" if j == 0 else "", label, ms, flops, bf)
            rows.append(("pass_total" if len(passes) == 1 else "layer_total" if times == 1 else "model_total",
                         name if len(passes) == 1 else "all", f"x{times}", "", "", "", key, ms, flops, bf))
    if args.csv:
        with open(args.csv, "w") as f:
            f.write("scope,pass,name,m,k,n,precision,mode,ms,tflops,speedup_vs_bf16,quant_ms,emulated,note\n")
            for scope, ps, name, m, k, n, key, ms, flops, bf in rows:
                ok = isinstance(ms, float)
                f.write(f"{scope},{ps},\"{name}\",{m},{k},{n},torch_{key},kernel_only,"
                        f"{f'{ms:.6f}' if ok else ''},{f'{flops / ms / 1e9:.3f}' if ok else ''},"
                        f"{f'{bf / ms:.4f}' if ok and isinstance(bf, float) else ''},,0,"
                        f"\"{'' if ok else str(ms).replace(chr(34), chr(39))}\"\n")
        print(f"bench_torch: wrote {args.csv}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
