"""The six GEMMs of the Llama-3 8B MLP training step through torch._scaled_mm, at the
shapes and dtypes llama3_8b_mlp_train.yaml runs them (HYBRID: E4M3 forward, E5M2
gradients; TN layouts from the columnwise copies). The anchor for the GEMM rows of
`tegen run specs/llama3_8b_mlp_train.yaml --tokens T` in the same device call.
Usage: python3 bench/gemm_train_torch.py [TOKENS]   (default 8192)"""
import sys

import torch

T = int(sys.argv[1]) if len(sys.argv) > 1 else 8192
H, FF = 4096, 14336
dev = "cuda"
E4, E5 = torch.float8_e4m3fn, torch.float8_e5m2
one = torch.ones((), device=dev)


def fp8(r, c, dt):
    return (torch.randn(r, c, device=dev) * 0.5).to(dt)


def bench(f, iters=20, warm=3):
    for _ in range(warm):
        f()
    ts = []
    for _ in range(iters):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        f()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b) * 1000)
    ts.sort()
    return ts[len(ts) // 2]


# name, M, N, K, A dtype, B dtype, fast_accum (tegen's plan: fprop fast_accum, dgrad/wgrad not)
rows = [
    ("fprop up", T, 2 * FF, H, E4, E4, True),
    ("fprop down", T, H, FF, E4, E4, True),
    ("dgrad down", T, FF, H, E5, E4, False),
    ("wgrad down", H, FF, T, E5, E4, False),
    ("dgrad up", T, H, 2 * FF, E5, E4, False),
    ("wgrad up", 2 * FF, H, T, E5, E4, False),
]
print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}, {T} tokens")
print("| GEMM | M x N x K | out | us | TFLOP/s |")
print("|---|---|---|---|---|")
for name, M, N, K, da, db, fa in rows:
    sets = [(fp8(M, K, da), fp8(N, K, db)) for _ in range(2)]
    outs = [torch.bfloat16] + ([torch.float32] if name.startswith("wgrad") else [])
    for od in outs:
        i = [0]

        def run():
            a, b = sets[i[0] % 2]
            i[0] += 1
            torch._scaled_mm(a, b.t(), scale_a=one, scale_b=one, out_dtype=od, use_fast_accum=fa)

        us = bench(run)
        print(f"| {name} | {M}x{N}x{K} | {str(od).split('.')[-1]} | {us:.1f} | {2 * M * N * K / us / 1e6:.0f} |")
    del sets
    torch.cuda.empty_cache()
