"""data_power.py: does an FP8 GEMM's speed depend on its operands' values? torch._scaled_mm on the same shapes with
(a) torch.randn cast to FP8 (bench_torch.py's data) and (b) tegen bench's value distribution (sign, exponent and
mantissa bits uniform: E4M3 +-[2^-3, 8), E5M2 likewise), independent per element, and (c) the same, as tegen bench
lays it out: one 32 MiB pool repeated from a byte offset, interleaved rounds, median of --iters back-to-back runs, operands rotated.
Usage: python3 bench/data_power.py [--iters 20] [--rounds 3]"""
import argparse
import torch


def tegen_pool(n, fmt):
    """tegen bench's make_pool (cli/bench.c) as torch ops: random sign, exponent from a range, random mantissa."""
    x = torch.randint(0, 256, (n,), dtype=torch.int32, device="cuda")
    r = torch.randint(0, 1 << 30, (n,), dtype=torch.int32, device="cuda")
    if fmt == torch.float8_e4m3fn:
        b = (x & 0x80) | ((4 + (r % 6)) << 3) | ((r >> 8) & 7)
    else:
        b = (x & 0x80) | ((12 + (r % 6)) << 2) | ((r >> 8) & 3)
    return b.to(torch.uint8).view(fmt)


def tiled(n, fmt, offset):
    """tegen bench's buffers: one 32 MiB pool (tegen_pool) repeated, starting at a byte offset (cli/bench.c fill)."""
    pool = tegen_pool(32 << 20, fmt).view(torch.uint8)
    reps = (n + offset) // pool.numel() + 1
    return pool.repeat(reps)[offset:offset + n].clone().view(fmt)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    one = torch.ones((), device="cuda")
    shapes = [("qkv fprop", 8192, 4096, 6144, torch.float8_e4m3fn, True),
              ("up fprop", 8192, 4096, 28672, torch.float8_e4m3fn, True),
              ("down fprop", 8192, 14336, 4096, torch.float8_e4m3fn, True),
              ("up wgrad", 28672, 8192, 4096, torch.float8_e5m2, False)]
    kinds = ("randn", "tegen", "tiled")
    for name, m, k, n, adt, fast in shapes:
        data = {}
        for kind in kinds:
            sets = []
            for si in range(3):
                if kind == "randn":
                    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16).to(adt)
                    b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16).to(torch.float8_e4m3fn)
                elif kind == "tiled":
                    a = tiled(m * k, adt, si * 7919).view(m, k)
                    b = tiled(n * k, torch.float8_e4m3fn, si * 104729 + 4099).view(n, k)
                else:
                    a = tegen_pool(m * k, adt).view(m, k)
                    b = tegen_pool(n * k, torch.float8_e4m3fn).view(n, k)
                sets.append((a, b.t()))
            data[kind] = sets
        res = {kk: [] for kk in kinds}
        for _ in range(args.rounds):
            for kind in kinds:
                sets = data[kind]
                ev = [torch.cuda.Event(enable_timing=True) for _ in range(args.iters + 1)]
                for i in range(5 + args.iters):
                    if i >= 5:
                        ev[i - 5].record()
                    a, bt = sets[i % 3]
                    torch._scaled_mm(a, bt, scale_a=one, scale_b=one, out_dtype=torch.bfloat16, use_fast_accum=fast)
                ev[-1].record()
                ev[-1].synchronize()
                t = sorted(ev[j].elapsed_time(ev[j + 1]) for j in range(args.iters))
                res[kind].append(t[len(t) // 2])
        med = {kk: sorted(v)[len(v) // 2] for kk, v in res.items()}
        print(f"{name:12s} " + "  ".join(f"{kk} " + " ".join(f"{v:.3f}" for v in res[kk]) for kk in kinds) +
              "  medians / randn: " + " ".join(f"{kk} {med[kk] / med['randn']:.3f}" for kk in kinds))


main()
