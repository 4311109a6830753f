"""attn_proj_torch.py: the anchor of specs/llama3_8b_attn_proj_train.yaml: RMSNorm -> QKV projection, output
projection + residual, forward and backward (the attention core given: attn in, d_qkv and d_o in), 8192 tokens,
Llama-3 8B shapes, torch.compile in BF16. Median of 30 (CUDA events around forward + backward).
Usage on the GPU machine: python3 bench/attn_proj_torch.py"""
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "anchors"))
from anchor_timing import bench  # noqa: E402

T, H, QKV = 8192, 4096, 6144
dev = "cuda"
torch.manual_seed(0)
x = torch.randn(T, H, device=dev, dtype=torch.bfloat16, requires_grad=True)
attn = torch.randn(T, H, device=dev, dtype=torch.bfloat16, requires_grad=True)
gamma = torch.ones(H, device=dev, dtype=torch.bfloat16, requires_grad=True)
w_qkv = (torch.randn(QKV, H, device=dev, dtype=torch.bfloat16) * 0.02).requires_grad_()
w_o = (torch.randn(H, H, device=dev, dtype=torch.bfloat16) * 0.02).requires_grad_()
d_qkv = torch.randn(T, QKV, device=dev, dtype=torch.bfloat16)
d_o = torch.randn(T, H, device=dev, dtype=torch.bfloat16)


def layer(x, attn, gamma, w_qkv, w_o):
    xn = F.rms_norm(x, (H,), gamma, 1e-5)
    return xn @ w_qkv.t(), attn @ w_o.t() + x


f = torch.compile(layer)


def step():
    qkv, o = f(x, attn, gamma, w_qkv, w_o)
    torch.autograd.backward([qkv, o], [d_qkv, d_o])


us = bench(step, reps=30)
print(f"torch.compile BF16 attention projections fwd+bwd, {T} tokens: {us:.1f} us (median of 30)")
