#!/usr/bin/env python3
"""python_bench.py: the Llama-style MLP block (RMSNorm, gate|up GEMM, SwiGLU, down GEMM) at 8192
tokens, one training step (forward + backward) and the forward alone, in three implementations
timed in the same process on the same data:
  tegen        tegen.torch.Layer (FP8 delayed scaling, HYBRID: E4M3 forward, E5M2 gradients; kernels
               fused by tegen, GEMMs in cuBLASLt; the recipe step included)
  torch BF16   the block in plain PyTorch under torch.compile (default mode), BF16
  torch FP8    the two GEMMs through torch._scaled_mm, per-tensor current scaling (E4M3 x E4M3
               forward, E5M2 dY x E4M3 backward), norm and SwiGLU in BF16 under torch.compile; the
               quantizations and transposes as torch ops (what one writes without Transformer Engine)
Method: --warmup steps, then CUDA events around each of --iters steps; the median is printed.

    python3 bench/python_bench.py [--tokens 8192 --hidden 4096 --ffn 14336 --iters 20] [--no-compile]
Exit: 0 ok, 1 no GPU / torch, 2 bad usage.
"""
import argparse
import os
import statistics
import sys
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "python", "tests"))
E4M3_MAX, E5M2_MAX = 448.0, 57344.0


def fp8_linear_class(torch):
    """y = x @ w.T with both operands quantized per tensor (current scaling) and torch._scaled_mm."""

    def quant(t, dtype, fmax):
        amax = t.abs().amax().float().clamp_min(1e-12)
        scale = fmax / amax
        return (t.float() * scale).clamp(-fmax, fmax).to(dtype), scale.reciprocal()

    def mm(a, b_t, sa, sb):  # a [M, K] row-major, b_t [K, N] column-major
        r = torch._scaled_mm(a, b_t, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)
        return r[0] if isinstance(r, tuple) else r

    class FP8Linear(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, w):
            xq, sx = quant(x, torch.float8_e4m3fn, E4M3_MAX)
            wq, sw = quant(w, torch.float8_e4m3fn, E4M3_MAX)
            ctx.save_for_backward(xq, sx, wq, sw)
            return mm(xq, wq.t(), sx, sw)

        @staticmethod
        def backward(ctx, dy):
            xq, sx, wq, sw = ctx.saved_tensors
            gq, sg = quant(dy, torch.float8_e5m2, E5M2_MAX)
            dx = mm(gq, wq.t().contiguous().t(), sg, sw)                       # dY [M,N] x W [N,K]
            dw = mm(gq.t().contiguous(), xq.t().contiguous().t(), sg, sx)       # dY^T [N,M] x X [M,K]
            return dx, dw

    return FP8Linear


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tokens", type=int, default=8192)
    ap.add_argument("--hidden", type=int, default=4096)
    ap.add_argument("--ffn", type=int, default=14336)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--no-compile", action="store_true", help="plain eager PyTorch for the baselines")
    args = ap.parse_args()
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        print("python_bench: no torch", file=sys.stderr)
        return 1
    if not torch.cuda.is_available():
        print("python_bench: no GPU", file=sys.stderr)
        return 1
    import tegen
    import tegen.torch as tt
    from mlp_ref import spec_text

    T, H, FF = args.tokens, args.hidden, args.ffn
    dev = torch.device("cuda")
    torch.manual_seed(0)
    t0 = time.time()
    layer = tt.Layer(text=spec_text(H, FF, "delayed"), name="bench_mlp", tokens=T)
    print(f"tegen {tegen.version()} ({tegen.library_path()}) on {layer.context.arch}, {torch.cuda.get_device_name()}, "
          f"torch {torch.__version__}; layer load {time.time() - t0:.1f} s; "
          f"{'tg_backward' if layer.phased else 'NO tg_backward (backward reruns the layer)'}")
    params = {n: p for n, p in layer.named_parameters()}
    x = torch.randn(T, H, device=dev, dtype=torch.bfloat16, requires_grad=True)
    dy = torch.randn(T, H, device=dev, dtype=torch.bfloat16) * 0.01
    compile_ = (lambda f: f) if args.no_compile else torch.compile

    def rms(t, g):
        return t * torch.rsqrt(t.float().pow(2).mean(-1, keepdim=True) + 1e-5).to(t.dtype) * g

    def glu(h):
        f = h.shape[-1] // 2
        return F.silu(h[..., :f]) * h[..., f:]

    bf16_block = compile_(lambda t, g, wu, wd: glu(rms(t, g) @ wu.t()) @ wd.t())
    fp8 = fp8_linear_class(torch)
    rms_c, glu_c = compile_(rms), compile_(glu)

    def fp8_block(t, g, wu, wd):
        return fp8.apply(glu_c(fp8.apply(rms_c(t, g), wu)), wd)

    impls = {
        "tegen FP8 (delayed, fused)": lambda: layer(x),
        f"torch BF16 ({'eager' if args.no_compile else 'torch.compile'})":
            lambda: bf16_block(x, params["gamma"], params["w_up"], params["w_down"]),
        "torch FP8 (_scaled_mm, per-tensor)":
            lambda: fp8_block(x, params["gamma"], params["w_up"], params["w_down"]),
    }

    def timed(fn):
        ev = [torch.cuda.Event(enable_timing=True) for _ in range(2 * args.iters)]
        for i in range(args.warmup + args.iters):
            if i >= args.warmup:
                ev[2 * (i - args.warmup)].record()
            fn()
            if i >= args.warmup:
                ev[2 * (i - args.warmup) + 1].record()
        torch.cuda.synchronize()
        return statistics.median(ev[2 * i].elapsed_time(ev[2 * i + 1]) for i in range(args.iters))

    def train_step(f):
        def step():
            x.grad = None
            for p in params.values():
                p.grad = None
            f().backward(dy)
        return step

    def fwd_only(f):
        def run():
            with torch.no_grad():
                f()
        return run

    gemm_flops = 2 * T * H * (2 * FF) + 2 * T * FF * H  # the forward's two GEMMs
    print(f"Llama MLP block: tokens {T}, hidden {H}, ffn {FF}; median of {args.iters} after {args.warmup} warm-up; "
          "TFLOP/s counts the GEMMs only (forward 1x, step 3x)")
    print(f"{'implementation':<38} | {'fwd ms':>8} {'TFLOP/s':>7} | {'fwd+bwd ms':>10} {'TFLOP/s':>7} | {'vs BF16':>7}")
    results = {}
    for name, f in impls.items():
        try:
            results[name] = (timed(fwd_only(f)), timed(train_step(f)))
        except Exception as e:  # noqa: BLE001 (one failing baseline should not hide the others)
            results[name] = f"n/a: {type(e).__name__}: {str(e)[:120]}"
    base = next((r[1] for n, r in results.items() if "BF16" in n and isinstance(r, tuple)), None)
    for name, r in results.items():
        if not isinstance(r, tuple):
            print(f"{name:<38} | {r}")
            continue
        tf, ts = r
        sp = f"{base / ts:6.2f}x" if base else "      -"
        print(f"{name:<38} | {tf:8.3f} {gemm_flops / tf / 1e9:7.0f} | {ts:10.3f} {3 * gemm_flops / ts / 1e9:7.0f} | {sp:>7}")
    print("vs BF16: the torch BF16 step time over this one (higher is faster)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
