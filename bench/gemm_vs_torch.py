"""Per GEMM of `tegen bench` (--csv) against bench_torch.py (--csv), kernel-only FP8 per-tensor rows.

Usage: python3 bench/gemm_vs_torch.py TORCH.csv[,TORCH2.csv...] TEGEN.csv[,TEGEN2.csv...] [TEGEN_B.csv[,...] ...]

Each argument is one side: a CSV, or a comma-separated list of CSVs from interleaved rounds (one tegen bench,
one bench_torch.py, and so on, in one device call). A side's time for a GEMM is the median of its rounds'
times; the table gives it with the rounds' min and max, and the ratio tegen / torch. The last line counts
the GEMMs within 3% of torch or faster (issue 18's bar)."""
import csv
import sys


def rows(path):
    out = {}
    for r in csv.DictReader(open(path)):
        if r["scope"] != "gemm" or "fp8" not in r["precision"] or r["mode"] != "kernel_only":
            continue
        try:
            out[(r["pass"], r["name"])] = float(r["ms"])
        except ValueError:
            pass
    return out


def median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def side(arg):
    """GEMM -> list of times, one per round (CSV) of this side."""
    out = {}
    for path in arg.split(","):
        for key, ms in rows(path).items():
            out.setdefault(key, []).append(ms)
    return out


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    torch = side(sys.argv[1])
    tegens = [side(a) for a in sys.argv[2:]]
    nt = len(sys.argv[1].split(","))
    print(f"| pass | layer | torch ms, median of {nt} (min-max) | "
          + " | ".join(f"tegen {i + 1} ms, median of {len(a.split(','))} (min-max), ratio"
                       for i, a in enumerate(sys.argv[2:])) + " |")
    print("|---|---|---|" + "---|" * len(tegens))
    within = [0] * len(tegens)
    for key, tv in sorted(torch.items()):
        t = median(tv)
        cells = []
        for i, tg in enumerate(tegens):
            v = tg.get(key)
            if not v:
                cells.append("-")
                continue
            r = median(v) / t
            within[i] += r <= 1.03
            cells.append(f"{median(v):.3f} ({min(v):.3f}-{max(v):.3f}), {r:.3f}")
        print(f"| {key[0]} | {key[1]} | {t:.3f} ({min(tv):.3f}-{max(tv):.3f}) | " + " | ".join(cells) + " |")
    print("within 3% of torch or faster: " + ", ".join(f"tegen {i + 1}: {w} of {len(torch)}"
                                                        for i, w in enumerate(within)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
