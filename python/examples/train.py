#!/usr/bin/env python3
"""train.py: the teacher-student training of examples/train.c, run from Python through the tegen
binding, step for step the same as the C run it replays.

    build/examples/train --recipe delayed --steps 100 --dump /tmp/run --csv /tmp/run/c.csv
    python3 python/examples/train.py /tmp/run [--csv /tmp/run/py.csv] [--compare /tmp/run/c.csv]

examples/train.c --dump DIR writes the student spec (ONE layer: every block, backward: true, the AdamW
optimizer), the options, the BF16 input pool, the FP32 targets (the FP32 teacher's outputs, plus noise
if asked) and the student's initial weights. This script builds the layer from that spec, binds torch
tensors (inputs, output, d_out, weights), and runs the C program's loop: the learning rate (warmup, then
cosine to lr/10), tg_run, the MSE loss and its gradient d_out = 2 (y - target) / n rounded to BF16 on the
GPU, tg_backward, tg_step, tg_optimizer_step. The kernels, inputs and d_out bits are the C run's, so the
weights follow the same trajectory: --compare checks every step's loss against the C CSV (the losses
differ only by the order the MSE is summed in, about 1e-12 relative; the check allows 1e-6).

Needs a GPU, torch and libtegen.so (build/ of this checkout, or TEGEN_LIB).
"""
import argparse
import csv
import json
import math
import os
import sys
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))
import tegen  # noqa: E402


def learning_rate(run, s):
    """examples/train.c's schedule: linear warmup, then cosine from lr to lr/10 (the same doubles)."""
    warm = int(run["warmup"] * run["steps"])
    if s < warm:
        return run["lr"] * (s + 1) / warm
    p = (s - warm) / (run["steps"] - warm - 1) if run["steps"] - warm > 1 else 1.0
    return run["lr"] * (0.1 + 0.45 * (1.0 + math.cos(3.141592653589793 * p)))


def load_bf16(torch, path, shape, device):
    raw = torch.frombuffer(bytearray(open(path, "rb").read()), dtype=torch.int16)
    return raw.view(torch.bfloat16).reshape(shape).to(device)


def main(argv):
    ap = argparse.ArgumentParser(prog="train.py", description="replay an examples/train.c run from Python")
    ap.add_argument("dir", help="the folder train --dump wrote")
    ap.add_argument("--csv", help="write step,loss,step_ms,lr")
    ap.add_argument("--compare", help="the C run's CSV: every step's loss must agree (relative 1e-6)")
    args = ap.parse_args(argv[1:])
    try:
        import torch
    except ImportError:
        print("skip train.py: no torch")
        return 0
    ok, why = tegen.gpu_available()
    if not ok or not torch.cuda.is_available():
        print(f"skip train.py: no GPU ({why})")
        return 0
    run = json.load(open(os.path.join(args.dir, "run.json")))
    T, H, F, P = run["tokens"], run["hidden"], run["ffn"], run["pool"]
    dev = torch.device("cuda", 0)
    pool = load_bf16(torch, os.path.join(args.dir, "pool.bin"), (P, T, H), dev)
    targets = torch.frombuffer(bytearray(open(os.path.join(args.dir, "targets.bin"), "rb").read()),
                               dtype=torch.float32).reshape(P, T, H).to(dev)
    ctx = tegen.Context()
    layer = ctx.layer(text=open(os.path.join(args.dir, "spec.yaml")).read(), name="student")
    layer.set_tokens(T)
    x = torch.empty(T, H, dtype=torch.bfloat16, device=dev)
    out = torch.empty(T, H, dtype=torch.bfloat16, device=dev)
    d_out = torch.zeros(T, H, dtype=torch.bfloat16, device=dev)
    keep = [x, out, d_out]  # the bound buffers stay alive
    layer.bind("x", x)
    layer.bind("out", out)
    layer.bind("d_out", d_out)
    for b in range(run["blocks"] + 1):
        up = run.get("up", 2 * F)  # the up GEMM's rows: 2*ffn for SwiGLU, ffn for GELU (train --act gelu)
        names = [(f"g{b}", (H,)), (f"wu{b}", (up, H)), (f"wd{b}", (H, F))] if b < run["blocks"] else [("gf", (H,))]
        for name, shape in names:
            w = load_bf16(torch, os.path.join(args.dir, name + ".bin"), shape, dev)
            keep.append(w)
            layer.bind(name, w)
    n = T * H
    rows = []
    print(f"train.py: recipe {run['recipe']}, {run['blocks']} blocks, hidden {H}, ffn {F}, {T} tokens/step, "
          f"{run['steps']} steps (replaying {args.dir})")
    for s in range(run["steps"]):
        t0 = time.perf_counter()
        lr = learning_rate(run, s)
        x.copy_(pool[s % P])
        layer.set_learning_rate(lr)
        layer.run()
        e = out.double() - targets[s % P].double()
        loss = (e * e).sum().item() / n  # .item() waits for the forward
        d_out.copy_((2.0 * e / n).float().to(torch.bfloat16))  # as train.c: double -> float -> BF16, each RNE
        layer.backward()
        layer.step()
        layer.optimizer_step()
        torch.cuda.synchronize()
        ms = (time.perf_counter() - t0) * 1e3
        rows.append((s + 1, loss, ms, lr))
        if (s + 1) % run["print_every"] == 0 or s == 0 or s + 1 == run["steps"]:
            print(f"step {s + 1:6d}  loss {loss:.6g}  lr {lr:.3g}  step {ms:.3f} ms")
        if not math.isfinite(loss):
            print(f"FAIL train.py: the loss is {loss} at step {s + 1}")
            return 1
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["step", "loss", "step_ms", "lr"])
            w.writerows(rows)
    if args.compare:
        with open(args.compare, newline="") as f:
            c_loss = {int(r["step"]): float(r["loss"]) for r in csv.DictReader(f)}
        worst = max(abs(loss - c_loss[s]) / max(abs(c_loss[s]), 1e-30) for s, loss, _, _ in rows if s in c_loss)
        agree = worst <= 1e-6 and len(c_loss) >= len(rows)
        print(f"{'ok' if agree else 'FAIL'} train.py/matches-c: {len(rows)} steps, worst relative loss difference "
              f"{worst:.3g} (C {c_loss[len(rows)]:.6g}, Python {rows[-1][1]:.6g} at the last step)")
        return 0 if agree else 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
