"""gelu_mlp_torch.py: the anchor of specs/gpt_mlp_gelu_train.yaml: a GPT-style MLP block (LayerNorm, up-projection
with a bias, tanh-approximate GELU, down-projection; hidden 4096, ffn 16384), forward and backward, 8192 tokens,
in BF16 (torch.compile) and FP8 (torch.compile quantize + torch._scaled_mm, HYBRID, torch_block.py's FP8Linear; the
bias added in the compiled GELU). Rounds interleaved with tegen commands (torch_block.py's method: each side under
the same clocks). Usage on the GPU machine: python3 bench/gelu_mlp_torch.py [--rounds N] [--tegen "CMD"]..."""
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "anchors"))
from torch_block import FP8Linear, rounds_main  # noqa: E402

T, H, FF = 8192, 4096, 16384
dev = "cuda"
torch.manual_seed(0)
x = torch.randn(T, H, device=dev, dtype=torch.bfloat16, requires_grad=True)
g = torch.ones(H, device=dev, dtype=torch.bfloat16, requires_grad=True)
b = torch.zeros(H, device=dev, dtype=torch.bfloat16, requires_grad=True)
w1 = (torch.randn(FF, H, device=dev, dtype=torch.bfloat16) * 0.02).requires_grad_()
b1 = torch.zeros(FF, device=dev, dtype=torch.bfloat16, requires_grad=True)
w2 = (torch.randn(H, FF, device=dev, dtype=torch.bfloat16) * 0.02).requires_grad_()
gy = torch.randn(T, H, device=dev, dtype=torch.bfloat16)


def mlp(x):
    hh = F.layer_norm(x, (H,), g, b, 1e-5) @ w1.t() + b1
    return F.gelu(hh, approximate="tanh") @ w2.t()


@torch.compile
def norm(x):
    return F.layer_norm(x, (H,), g, b, 1e-5)


@torch.compile
def bias_gelu(hh):
    return F.gelu(hh + b1, approximate="tanh")


def mlp8(x):
    return FP8Linear.apply(bias_gelu(FP8Linear.apply(norm(x), w1)), w2)


def step(f):
    def run():
        f(x).backward(gy)
    return run


if __name__ == "__main__":
    rounds_main("gelu_mlp_torch.py",
                {"fp8 torch.compile+_scaled_mm": step(mlp8), "bf16 torch.compile": step(torch.compile(mlp))},
                "build/tegen run specs/gpt_mlp_gelu_train.yaml --tokens 8192 --iters 20")
