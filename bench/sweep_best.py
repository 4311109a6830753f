#!/usr/bin/env python3
"""sweep_best.py: from a bench/tune_sweep.sh log, each kernel's best variant per hidden size by its worst case.

    bench/sweep_best.py tune_sweep.log [--top 3]

For every kernel and hidden size of the sweep, each variant timed at every token count is scored by its worst ratio
to the fastest variant of each token count (the rule gen/plan_launch.c's row tables follow: the least worst case over
1-65536 tokens). Prints the heuristic's variant and worst case, then the best --top variants with their ratios per
token count."""
import argparse
import re
import sys


def load(path):
    """{kernel: {(hidden, tokens): {variant: us}}} and {kernel: {(hidden, tokens): heuristic variant}}."""
    us, heur, case = {}, {}, None
    with open(path) as f:
        for line in f:
            m = re.match(r"\S*_h(\d+) tokens=(\d+) ", line)
            if m:
                case = (int(m[1]), int(m[2]))
                continue
            w = line.split()
            if case and len(w) >= 5 and w[0].startswith("k") and w[2].isdigit():
                try:
                    t = float(w[3])
                except ValueError:
                    continue
                us.setdefault(w[0], {}).setdefault(case, {})[w[1]] = t
                if "heuristic" in " ".join(w[5:]):
                    heur.setdefault(w[0], {})[case] = w[1]
    return us, heur


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("log")
    ap.add_argument("--top", type=int, default=3)
    a = ap.parse_args()
    us, heur = load(a.log)
    if not us:
        print(f"{a.log}: no timings", file=sys.stderr)
        return 1
    for k in sorted(us, key=lambda s: int(re.match(r"k(\d+)", s)[1]) if re.match(r"k(\d+)", s) else 0):
        for h in sorted({c[0] for c in us[k]}):
            cases = sorted(c for c in us[k] if c[0] == h)
            scored = []
            for v in sorted({v for c in cases for v in us[k][c]}):
                if all(v in us[k][c] for c in cases):
                    r = [us[k][c][v] / min(us[k][c].values()) for c in cases]
                    scored.append((max(r), v, r))
            scored.sort()
            # the heuristic's own variant at each token count (it may change with the rows: tile_launch's row rules)
            hvs = [heur.get(k, {}).get(c) for c in cases]
            hr = [us[k][c][v] / min(us[k][c].values()) for c, v in zip(cases, hvs) if v in us[k][c]]
            names = "/".join(dict.fromkeys(v or "?" for v in hvs))
            toks = "/".join(str(c[1]) for c in cases)
            print(f"{k} H={h} (tokens {toks}): heuristic {names}" + (f" worst {max(hr):.2f}" if hr else ""))
            for w, v, r in scored[:a.top]:
                print(f"    {v:<12} worst {w:.2f}  " + " ".join(f"{x:.2f}" for x in r))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # (piped into head)
        sys.exit(0)
