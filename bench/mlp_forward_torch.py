"""The Llama-3 8B MLP block forward at 8192 tokens in PyTorch, the anchors for issue 22 stage 2:
torch.compile BF16, and FP8 (torch.compile RMSNorm/SwiGLU + quantize, torch._scaled_mm, weights
cast once beforehand, as tegen's 'weights pre-cast' number). Median of 20, CUDA events."""
import json
import os
import sys
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "anchors"))
from anchor_timing import bench  # noqa: E402 (the anchors' timer)

T, H, FF = 8192, 4096, 14336
E4M3, FMAX = torch.float8_e4m3fn, 448.0


x = torch.randn(T, H, device="cuda", dtype=torch.bfloat16)
g = torch.randn(H, device="cuda", dtype=torch.bfloat16)
w1 = torch.randn(2 * FF, H, device="cuda", dtype=torch.bfloat16) * 0.02
w2 = torch.randn(H, FF, device="cuda", dtype=torch.bfloat16) * 0.02
w1q, w2q, one = w1.to(E4M3), w2.to(E4M3), torch.ones((), device="cuda")
s1, s2 = torch.tensor(8.0, device="cuda"), torch.tensor(8.0, device="cuda")


@torch.compile
def bf16_block(x):
    a, b = (F.rms_norm(x, (H,), g, 1e-5) @ w1.t()).chunk(2, dim=-1)
    return (F.silu(a) * b) @ w2.t()


@torch.compile
def norm_q(x):
    y = F.rms_norm(x.float(), (H,), g.float(), 1e-5)
    return (y * s1).clamp(-FMAX, FMAX).to(E4M3), y.abs().amax()


@torch.compile
def glu_q(h):
    a, b = h.float().chunk(2, dim=-1)
    y = F.silu(a) * b
    return (y * s2).clamp(-FMAX, FMAX).to(E4M3), y.abs().amax()


def fp8_block(x):
    xq, _ = norm_q(x)
    h = torch._scaled_mm(xq, w1q.t(), scale_a=1 / s1, scale_b=one, out_dtype=torch.bfloat16, use_fast_accum=True)
    hq, _ = glu_q(h)
    return torch._scaled_mm(hq, w2q.t(), scale_a=1 / s2, scale_b=one, out_dtype=torch.bfloat16, use_fast_accum=True)


print(json.dumps({"mlp_forward_T8192": {"bf16_torch_compile_us": round(bench(lambda: bf16_block(x), reps=20), 1),
                                        "fp8_torch_scaled_mm_us": round(bench(lambda: fp8_block(x), reps=20), 1)}}))
