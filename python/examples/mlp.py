#!/usr/bin/env python3
"""mlp.py: a Llama MLP block (RMSNorm + SwiGLU MLP) in PyTorch, replaced by tegen.torch.Layer:
the same weights, forward and backward, then a few AdamW steps on the tegen module.

    python3 python/examples/mlp.py            # hidden 1024, ffn 2816, 512 tokens (seconds)
    python3 python/examples/mlp.py --full     # Llama 3 8B: specs/llama3_8b_mlp_train.yaml, 2048 tokens

Needs a GPU, torch and libtegen.so (build/ of this checkout, or TEGEN_LIB).
"""
import argparse
import os
import sys

import torch
import torch.nn.functional as F
from torch import nn

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))
import tegen.torch  # noqa: E402


class LlamaMLP(nn.Module):
    """The PyTorch block being replaced: y = down(silu(gate(n(x))) * up(n(x))), n = RMSNorm."""

    def __init__(self, hidden, ffn):
        super().__init__()
        self.norm = nn.RMSNorm(hidden, eps=1e-5)
        self.gate_proj = nn.Linear(hidden, ffn, bias=False)
        self.up_proj = nn.Linear(hidden, ffn, bias=False)
        self.down_proj = nn.Linear(ffn, hidden, bias=False)

    def forward(self, x):
        n = self.norm(x)
        return self.down_proj(F.silu(self.gate_proj(n)) * self.up_proj(n))


SPEC = """layer: example_mlp
dims: {{tokens: dynamic, hidden: {hidden}, ffn: {ffn}}}
recipe: {{scaling: delayed, format: hybrid, history: 16}}
tensors:
  x:      {{shape: [tokens, hidden], dtype: bf16}}
  gamma:  {{shape: [hidden], dtype: bf16, role: weight}}
  w_up:   {{shape: [2*ffn, hidden], dtype: bf16, role: weight}}
  w_down: {{shape: [hidden, ffn], dtype: bf16, role: weight}}
ops:
  - norm_quantize: {{in: x, gamma: gamma, out: xn, norm: rmsnorm, eps: 1e-5}}
  - quantize: {{in: w_up, out: w_up_q}}
  - gemm_cast: {{a: xn, b: w_up_q, out: h, dtype: bf16}}
  - glu_amax: {{in: h, out: act, act: swiglu}}
  - quantize: {{in: w_down, out: w_down_q}}
  - gemm_cast: {{a: act, b: w_down_q, out: y, dtype: bf16}}
outputs: [y]
backward: true
"""


def from_torch(mlp, **kw):
    """A tegen.torch.Layer holding mlp's weights: w_up is gate and up stacked ([gate; up], gate first)."""
    hidden, ffn = mlp.down_proj.out_features, mlp.down_proj.in_features
    if kw.pop("full", False):
        layer = tegen.torch.Layer(os.path.join(ROOT, "specs", "llama3_8b_mlp_train.yaml"), **kw)
    else:
        layer = tegen.torch.Layer(text=SPEC.format(hidden=hidden, ffn=ffn), name="example_mlp", **kw)
    with torch.no_grad():
        layer.gamma.copy_(mlp.norm.weight)
        layer.w_up.copy_(torch.cat([mlp.gate_proj.weight, mlp.up_proj.weight]))
        layer.w_down.copy_(mlp.down_proj.weight)
    return layer


def rel(a, b):
    return ((a.double() - b.double()).norm() / b.double().norm()).item()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--full", action="store_true", help="Llama 3 8B sizes (hidden 4096, ffn 14336)")
    ap.add_argument("--tokens", type=int, default=None)
    args = ap.parse_args()
    hidden, ffn = (4096, 14336) if args.full else (1024, 2816)
    tokens = args.tokens or (2048 if args.full else 512)
    torch.manual_seed(0)
    ref = LlamaMLP(hidden, ffn).cuda().to(torch.bfloat16)
    fast = from_torch(ref, full=args.full, tokens=tokens)
    print(fast)

    x = torch.randn(4, tokens // 4, hidden, device="cuda", dtype=torch.bfloat16)  # [batch, seq, hidden]
    dy = torch.randn_like(x) * 1e-2
    for step in range(3):  # delayed scaling: the scales come from the amax history of earlier steps
        xa, xb = x.clone().requires_grad_(), x.clone().requires_grad_()
        ref.zero_grad(set_to_none=True)
        fast.zero_grad(set_to_none=True)
        ya, yb = ref(xa), fast(xb)
        ya.backward(dy)
        yb.backward(dy)
    w_up_grad = torch.cat([ref.gate_proj.weight.grad, ref.up_proj.weight.grad])
    print(f"vs PyTorch BF16: y {rel(yb, ya):.4f}, dx {rel(xb.grad, xa.grad):.4f}, "
          f"d_w_up {rel(fast.w_up.grad, w_up_grad):.4f}, d_w_down {rel(fast.w_down.grad, ref.down_proj.weight.grad):.4f}, "
          f"d_gamma {rel(fast.gamma.grad, ref.norm.weight.grad):.4f} (normwise relative error)")

    opt = torch.optim.AdamW(fast.parameters(), lr=1e-3)
    target = ref(x).detach()
    for step in range(5):  # fit the tegen block to the reference block's output
        opt.zero_grad(set_to_none=True)
        loss = F.mse_loss(fast(x + 0.1 * torch.randn_like(x)).float(), target.float())
        loss.backward()
        opt.step()
        print(f"step {step + 1}: loss {loss.item():.3e}")


if __name__ == "__main__":
    main()
