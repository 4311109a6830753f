#!/usr/bin/env python3
"""train_chart.py: the loss curves and table of a bench/train_sweep.sh run (stdlib only).

    python3 bench/train_chart.py DIR [--svg FILE]

Reads DIR/train_<recipe>_s<seed>.csv (step,loss,step_ms,gpu_ms,fwd_ms,bwd_ms,opt_ms,lr) and the
logs beside them; writes the SVG (default DIR/train_loss.svg): per recipe the mean loss of its
seeds at every step, smoothed by a moving average for display, on a log scale. Prints a Markdown
table: final loss (mean over seeds of the mean over the last 10% of steps), its spread over seeds,
% vs BF16, step time (median per run, mean over seeds) and the GPU phases, the GEMMs' share of the
kernel time (from the log's tg_run_timed line)."""
import argparse
import csv
import glob
import math
import os
import re
import statistics
import sys

ORDER = ["bf16", "delayed", "current", "block", "mxfp8", "nvfp4", "nvfp4_bf16last"]
COLORS = ["#000000", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#d62728", "#e377c2", "#8c564b", "#17becf"]


NOTES = set()  # what the logs say about the model ("no residual stream")
FLOOR = {}  # the irreducible loss of a noisy-target task (train --target-noise), from the logs


def load(directory):
    """{recipe: {seed: {column: [values]}}} from the CSVs, and {recipe: [gemm share %]} from the logs."""
    runs, gemm = {}, {}
    for path in sorted(glob.glob(os.path.join(directory, "train_*_s*.csv"))):
        m = re.match(r"train_(.+)_s(\d+)\.csv$", os.path.basename(path))
        if not m:
            continue
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
        if not rows:
            continue
        cols = {k: [float(r[k]) for r in rows] for k in rows[0]}
        runs.setdefault(m.group(1), {})[int(m.group(2))] = cols
        log = path[:-4] + ".log"
        if os.path.exists(log):
            with open(log) as f:
                text = f.read()
            g = re.search(r"GEMMs ([\d.]+) ms \((\d+)%\), other ([\d.]+) ms", text)
            fl = re.search(r"the loss cannot fall below ([\d.e+-]+)", text)
            if fl:
                FLOOR[m.group(1)] = float(fl.group(1))
            if "no residual stream" in text:
                NOTES.add("no residual stream")
            if g:
                gemm.setdefault(m.group(1), []).append(float(g.group(2)))
    return runs, gemm


def order(names):
    return sorted(names, key=lambda n: (ORDER.index(n) if n in ORDER else len(ORDER), n))


def mean_curve(seeds):
    n = min(len(c["loss"]) for c in seeds.values())
    steps = next(iter(seeds.values()))["step"][:n]
    return steps, [statistics.fmean(c["loss"][i] for c in seeds.values()) for i in range(n)]


def smooth(values, w):
    out, acc = [], 0.0
    for i, v in enumerate(values):
        acc += v
        if i >= w:
            acc -= values[i - w]
        out.append(acc / min(i + 1, w))
    return out


def final_loss(cols):
    n = len(cols["loss"])
    tail = cols["loss"][n - max(1, n // 10):]
    return statistics.fmean(tail)


def svg(runs, path):
    W, H, L, R, T, B = 960, 560, 80, 190, 50, 60
    curves = {}
    for name in order(runs):
        steps, loss = mean_curve(runs[name])
        w = max(1, len(loss) // 40)
        curves[name] = (steps, smooth(loss, w), w)
    lo = min(min(v for v in c[1] if v > 0) for c in curves.values())
    hi = max(max(c[1]) for c in curves.values())
    y0, y1 = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    if y1 == y0:
        y1 += 1
    xmax = max(c[0][-1] for c in curves.values())

    def px(step):
        return L + (W - L - R) * step / xmax

    def py(v):
        return T + (H - T - B) * (y1 - math.log10(max(v, 10.0 ** y0))) / (y1 - y0)

    seeds = sorted({s for r in runs.values() for s in r})
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{L}" y="22" font-size="15">tegen examples/train.c: MSE vs an FP32 teacher, mean of seeds '
           f'{", ".join(map(str, seeds))} (moving average of {curves[order(runs)[0]][2]} steps)'
           f'{"; " + ", ".join(sorted(NOTES)) if NOTES else ""}</text>']
    for e in range(y0, y1 + 1):
        for k in range(1, 10) if e < y1 else [1]:
            y = py(k * 10.0 ** e)
            out.append(f'<line x1="{L}" y1="{y:.1f}" x2="{W - R}" y2="{y:.1f}" stroke="{"#ccc" if k == 1 else "#eee"}"/>')
        out.append(f'<text x="{L - 8}" y="{py(10.0 ** e) + 4:.1f}" text-anchor="end">1e{e}</text>')
    ticks = 5
    for i in range(ticks + 1):
        s = xmax * i / ticks
        out.append(f'<line x1="{px(s):.1f}" y1="{T}" x2="{px(s):.1f}" y2="{H - B}" stroke="#eee"/>')
        out.append(f'<text x="{px(s):.1f}" y="{H - B + 18}" text-anchor="middle">{s:.0f}</text>')
    out.append(f'<rect x="{L}" y="{T}" width="{W - L - R}" height="{H - T - B}" fill="none" stroke="#333"/>')
    out.append(f'<text x="{(L + W - R) / 2}" y="{H - 20}" text-anchor="middle">step</text>')
    out.append(f'<text x="20" y="{(T + H - B) / 2}" transform="rotate(-90 20 {(T + H - B) / 2})" '
               f'text-anchor="middle">loss (log scale)</text>')
    for i, (name, (steps, loss, _)) in enumerate(curves.items()):
        color = COLORS[i % len(COLORS)]
        pts = " ".join(f"{px(s):.1f},{py(v):.1f}" for s, v in zip(steps, loss))
        out.append(f'<polyline fill="none" stroke="{color}" stroke-width="1.6" points="{pts}"/>')
        y = T + 10 + 20 * i
        out.append(f'<line x1="{W - R + 12}" y1="{y}" x2="{W - R + 40}" y2="{y}" stroke="{color}" stroke-width="2.5"/>')
        out.append(f'<text x="{W - R + 46}" y="{y + 4}">{name}</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def table(runs, gemm):
    base = None
    if "bf16" in runs:
        base = statistics.fmean(final_loss(c) for c in runs["bf16"].values())
    floor = FLOOR.get("bf16")
    lines = ["| recipe | seeds | final loss (mean, last 10%) | seed range | vs BF16 | above the noise floor, vs BF16 "
             "| step ms | GPU ms (fwd / bwd / opt) | GEMM share |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name in order(runs):
        seeds = runs[name]
        finals = [final_loss(c) for c in seeds.values()]
        f = statistics.fmean(finals)
        vs = f"{100 * (f / base - 1):+.2f}%" if base else "n/a"

        def med(col):
            return statistics.fmean(statistics.median(c[col][1:] or c[col]) for c in seeds.values())

        share = f"{statistics.fmean(gemm[name]):.0f}%" if name in gemm else "n/a"
        # the loss above the targets' noise (loss - S^2): what the model has still to learn
        above = f"{f - floor:.4g} ({100 * ((f - floor) / (base - floor) - 1):+.1f}%)" if floor and base else "n/a"
        lines.append(f"| {name} | {len(seeds)} | {f:.5g} | {min(finals):.4g} .. {max(finals):.4g} | {vs} | {above} | "
                     f"{med('step_ms'):.3f} | {med('gpu_ms'):.3f} ({med('fwd_ms'):.3f} / {med('bwd_ms'):.3f} / "
                     f"{med('opt_ms'):.3f}) | {share} |")
    return "\n".join(lines)


def main(argv):
    ap = argparse.ArgumentParser(prog="train_chart.py", description="loss curves and table of a train sweep")
    ap.add_argument("dir", help="the sweep's output folder (train_<recipe>_s<seed>.csv)")
    ap.add_argument("--svg", help="where to write the chart (default DIR/train_loss.svg)")
    args = ap.parse_args(argv[1:])
    runs, gemm = load(args.dir)
    if not runs:
        print(f"train_chart: no train_<recipe>_s<seed>.csv in {args.dir}", file=sys.stderr)
        return 1
    path = args.svg or os.path.join(args.dir, "train_loss.svg")
    svg(runs, path)
    print(table(runs, gemm))
    print(f"\nchart: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
