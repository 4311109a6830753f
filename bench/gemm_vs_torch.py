"""Per GEMM of `tegen bench` (--csv) against bench_torch.py (--csv), kernel-only FP8 per-tensor rows:
tegen ms / torch ms for each pass and layer, one column per tegen CSV given.
Usage: python3 bench/gemm_vs_torch.py TORCH.csv TEGEN.csv [TEGEN2.csv ...]"""
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


torch = rows(sys.argv[1])
tegens = [rows(p) for p in sys.argv[2:]]
print("| pass | layer | torch ms | " + " | ".join(f"{p} ms (ratio)" for p in sys.argv[2:]) + " |")
print("|---|---|---|" + "---|" * len(tegens))
for key, t in sorted(torch.items()):
    cells = []
    for tg in tegens:
        v = tg.get(key)
        cells.append(f"{v:.3f} ({v / t:.3f})" if v else "-")
    print(f"| {key[0]} | {key[1]} | {t:.3f} | " + " | ".join(cells) + " |")
