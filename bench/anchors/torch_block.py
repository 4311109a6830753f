"""The Llama-3 8B MLP block's training step (forward + backward, no optimizer), 8192 tokens, through PyTorch:
BF16 (eager, torch.compile) and FP8 (torch.compile quantize + torch._scaled_mm, HYBRID: E4M3 forward, E5M2
gradients). torch_anchors3.py times these with its other anchors. Run alone, this file times the FP8 and BF16
steps in rounds interleaved with a tegen command (its whole-layer medians), so that both sides run under the
same clocks: the H100's GEMM clocks drift by 6-8% between runs of a few seconds.
Usage on a GPU machine: python3 torch_block.py [--rounds N] [--tegen "build/tegen run SPEC --tokens 8192"]...
(each --tegen command runs once a round, in order; tegen0, tegen1, ... in the output)"""
import json
import subprocess
import sys
import torch
import torch.nn.functional as F

from anchor_timing import bench

E4M3, E5M2 = torch.float8_e4m3fn, torch.float8_e5m2
M4, M5 = 448.0, 57344.0
dev = "cuda"


def q(y, scale, fmt, fmax):
    return (y * scale).clamp(-fmax, fmax).to(fmt)


T, H, FF = 8192, 4096, 14336
x = torch.randn(T, H, device=dev, dtype=torch.bfloat16, requires_grad=True)
g = torch.randn(H, device=dev, dtype=torch.bfloat16, requires_grad=True)
w1 = (torch.randn(2 * FF, H, device=dev, dtype=torch.bfloat16) * 0.02).requires_grad_()
w2 = (torch.randn(H, FF, device=dev, dtype=torch.bfloat16) * 0.02).requires_grad_()
gy = torch.randn(T, H, device=dev, dtype=torch.bfloat16)


def mlp(x):
    hh = F.rms_norm(x, (H,), g, 1e-5) @ w1.t()
    a, b = hh.chunk(2, dim=-1)
    return (F.silu(a) * b) @ w2.t()


def step(f):
    def run():
        y = f(x)
        y.backward(gy)
    return run


fl = 3 * (2 * T * H * 2 * FF + 2 * T * FF * H)

# FP8 (delayed-style fixed scales, HYBRID: E4M3 forward, E5M2 gradients) with torch._scaled_mm in
# every pass (TN layouts: the transposed copies are made by the compiled quantize functions).
one = torch.ones((), device=dev)
s = torch.tensor(8.0, device=dev)
inv = 1 / s


@torch.compile
def q4(t):
    f = t.float()
    return q(f, s, E4M3, M4), q(f.t(), s, E4M3, M4).contiguous()


@torch.compile
def q5(t):
    f = t.float()
    return q(f, s, E5M2, M5), q(f.t(), s, E5M2, M5).contiguous()


class FP8Linear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, w):
        aq, aqt = q4(a)
        wq, wqt = q4(w)
        ctx.save_for_backward(aqt, wqt)
        return torch._scaled_mm(aq, wq.t(), scale_a=inv, scale_b=inv, out_dtype=torch.bfloat16, use_fast_accum=True)

    @staticmethod
    def backward(ctx, gout):
        aqt, wqt = ctx.saved_tensors
        gq, gqt = q5(gout)
        da = torch._scaled_mm(gq, wqt.t(), scale_a=inv, scale_b=inv, out_dtype=torch.bfloat16)
        dw = torch._scaled_mm(gqt, aqt.t(), scale_a=inv, scale_b=inv, out_dtype=torch.bfloat16)
        return da, dw


@torch.compile
def norm(x):
    return F.rms_norm(x, (H,), g, 1e-5)


@torch.compile
def swiglu(hh):
    a, b = hh.chunk(2, dim=-1)
    return F.silu(a) * b


def mlp8(x):
    hh = FP8Linear.apply(norm(x), w1)
    return FP8Linear.apply(swiglu(hh), w2)


def block_steps():
    """The block's steps by name, and its FLOPs (the six GEMMs)."""
    return {"bf16 eager": step(mlp), "bf16 torch.compile": step(torch.compile(mlp)),
            "fp8 torch.compile+_scaled_mm": step(mlp8)}, fl


def tegen_layer(cmd):
    """The whole-layer median and its CUDA-graph replay (us) that `tegen run` prints."""
    out = subprocess.run(cmd, shell=True, capture_output=True, text=True).stdout
    layer = graph = None
    for line in out.splitlines():
        if line.startswith("whole layer (graph)"):
            graph = float(line.split()[3])
        elif line.startswith("whole layer"):
            layer = float(line.split()[2])
    return layer, graph


def rounds_main(prog, steps, default_cmd):
    """The rounds CLI of this file and its kin: [--rounds N] [--tegen CMD]...; each round times every step of
    steps (name -> function) and runs each tegen command once, printing one JSON row a round."""
    rounds, cmds = 3, []
    args = sys.argv[1:]
    while args:
        a = args.pop(0)
        if a == "--rounds" and args:
            rounds = int(args.pop(0))
        elif a == "--tegen" and args:
            cmds.append(args.pop(0))
        else:
            sys.exit(f"{prog}: unknown or incomplete argument {a} (usage: see the docstring)")
    cmds = cmds or [default_cmd]
    for r in range(rounds):
        row = {"round": r + 1}
        for name, f in steps.items():
            row[name] = round(bench(f, reps=10), 1)
        for i, cmd in enumerate(cmds):  # each tegen command: its events median and its graph replay
            row[f"tegen{i}"], row[f"tegen{i} graph"] = tegen_layer(cmd)
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    steps, flops = block_steps()
    rounds_main("torch_block.py", {k: steps[k] for k in ("fp8 torch.compile+_scaled_mm", "bf16 torch.compile")},
                "build/tegen run bench/llama3_8b_mlp_adamw_bf16grad.yaml --tokens 8192 --iters 20")
