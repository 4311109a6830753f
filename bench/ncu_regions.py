#!/usr/bin/env python3
"""ncu_regions.py: where a kernel's instructions and stall samples go, from Nsight Compute's source page.

On the device (one kernel of a tegen layer, e.g. the 8B NVFP4 layer's xn cast):
    ncu --set full --import-source yes --kernel-name regex:nvfp4_cast_xn --launch-count 1 -o /tmp/r -f \\
        build/tegen run specs/llama3_8b_mlp_train_nvfp4.yaml --tokens 8192 --iters 1
    ncu -i /tmp/r.ncu-rep --page source --csv --print-source sass > $OUT/src.csv
Here:
    bench/ncu_regions.py src.csv [--elements N] [--top K] [--region COUNT]

SASS instructions executed the same number of times belong to one loop level (once a CTA, once a work item, once
a unit of a work item, ...), so grouping them by that count splits the kernel into its regions without source line
information: each region's instructions (and, with --elements, per element of the tensor) and its share of the warp
stall samples. --top lists the most-sampled instructions; --region COUNT the opcode mix of one region."""
import argparse
import collections
import csv
import sys


def load(path):
    """The rows of an ncu source-page CSV: (address, source, executed warp instructions, stall samples)."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    head = next(i for i, r in enumerate(rows) if "Instructions Executed" in r)
    cols = rows[head]
    ia, isrc = cols.index("Address"), cols.index("Source")
    ie, iss = cols.index("Instructions Executed"), cols.index("Warp Stall Sampling (All Samples)")
    out = []
    for r in rows[head + 1:]:
        if len(r) <= max(ie, iss):
            continue
        num = lambda s: int(s.replace(",", "") or 0)
        out.append((r[ia], r[isrc].strip(), num(r[ie]), num(r[iss])))
    return out


def opcode(src):
    """The opcode of a SASS line without its predicate and modifiers."""
    words = src.split()
    if words and words[0].startswith("@"):
        words = words[1:]
    return words[0].split(".")[0] if words else "?"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv")
    ap.add_argument("--elements", type=float, default=0, help="elements of the tensor: thread instructions an element")
    ap.add_argument("--top", type=int, default=15, help="the most-sampled instructions to list")
    ap.add_argument("--region", type=int, default=0, help="a region's execution count: its opcode mix")
    a = ap.parse_args()
    rows = load(a.csv)
    total = sum(r[2] for r in rows) or 1
    samples = sum(r[3] for r in rows) or 1
    print(f"{total / 1e6:.1f} M warp instructions, {samples} stall samples"
          + (f", {total * 32 / a.elements:.1f} thread instructions an element" if a.elements else ""))
    by = collections.defaultdict(lambda: [0, 0, 0])
    for _, _, n, s in rows:
        if n:
            g = by[n]
            g[0] += 1
            g[1] += n
            g[2] += s
    print(f"{'executions':>11} {'SASS':>5} {'M instr':>8} {'%instr':>6} {'%samples':>8}" + ("  per element" if a.elements else ""))
    for n, (lines, instr, s) in sorted(by.items()):
        if instr < total * 0.005 and s < samples * 0.005:
            continue
        extra = f"  {instr * 32 / a.elements:11.2f}" if a.elements else ""
        print(f"{n:>11} {lines:>5} {instr / 1e6:8.2f} {100 * instr / total:6.1f} {100 * s / samples:8.1f}{extra}")
    print(f"\nmost sampled (address, executions, samples, SASS):")
    for addr, src, n, s in sorted(rows, key=lambda r: -r[3])[:a.top]:
        print(f"  {addr[-6:]:>6} {n:>9} {s:>6}  {src[:90]}")
    if a.region:
        mix = collections.Counter(opcode(src) for _, src, n, _ in rows if n == a.region)
        print(f"\nregion executed {a.region} times: " + ", ".join(f"{o} {c}" for o, c in mix.most_common(20)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
