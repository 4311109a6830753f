#!/usr/bin/env python3
"""gemm_gen_torch.py: torch._scaled_mm (cuBLASLt FP8, BF16 out) at the shapes the generated GEMM was tuned on
(docs/GEMM_GEN.md), timed the way `test_gemm --gen-bench` times it (E4M3 operands, TN, median of 20 CUDA-event timings after 5 warm-ups, operands rotated over 3
copies), with and without fast accumulation. Prints `torch MxNxK: fast X us Y TFLOP/s, split X us Y TFLOP/s`."""
import statistics
import torch

SHAPES = [(8192, 28672, 4096), (8192, 4096, 14336), (8192, 6144, 4096), (4096, 14336, 8192), (14336, 4096, 8192),
          (993, 6144, 4096)]


def time_one(m, n, k, fast):
    a = [torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn) for _ in range(3)]
    b = [torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn) for _ in range(3)]
    sa = torch.tensor(0.5, device="cuda")
    sb = torch.tensor(0.25, device="cuda")
    run = lambda i: torch._scaled_mm(a[i % 3], b[i % 3].t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16,
                                     use_fast_accum=fast)
    for i in range(5):
        run(i)
    ts = []
    for i in range(20):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        run(i)
        e1.record()
        e1.synchronize()
        ts.append(e0.elapsed_time(e1))
    return statistics.median(ts)


def error(m, n, k, fast):
    """relative Frobenius error of _scaled_mm against float64 on the same E4M3 values (uniform [-4, 4))"""
    a = ((torch.rand(m, k, device="cuda") * 2 - 1) * 4).to(torch.float8_e4m3fn)
    b = ((torch.rand(n, k, device="cuda") * 2 - 1) * 4).to(torch.float8_e4m3fn)
    one = torch.tensor(1.0, device="cuda")
    d = torch._scaled_mm(a, b.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16, use_fast_accum=fast).double()
    ref = a.double() @ b.double().t()
    return ((d - ref).norm() / ref.norm()).item()


for m, n, k in [(993, 6144, 4096), (256, 512, 256)]:
    print(f"torch {m}x{n}x{k}: rel_fro fast {error(m, n, k, True):.2e}, split {error(m, n, k, False):.2e}")
for m, n, k in SHAPES:
    f, s = time_one(m, n, k, True), time_one(m, n, k, False)
    fl = 2.0 * m * n * k
    print(f"torch {m}x{n}x{k}: fast {f * 1e3:.1f} us {fl / f / 1e9:.0f} TFLOP/s, split {s * 1e3:.1f} us "
          f"{fl / s / 1e9:.0f} TFLOP/s")
