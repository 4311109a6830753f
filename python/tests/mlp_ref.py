"""mlp_ref.py: the Llama-style MLP block (RMSNorm, up-projection to gate|up, SwiGLU, down-projection)
as a tegen spec and as plain PyTorch, for test_gpu.py and bench/python_bench.py.

    y = (silu(h[:, :F]) * h[:, F:]) @ w_down.T,   h = (x * rsqrt(mean(x^2) + eps) * gamma) @ w_up.T
"""
import torch
import torch.nn.functional as F

RECIPES = {
    "delayed": "{scaling: delayed, format: hybrid, history: 16, amax_algo: max, margin: 0}",
    "current": "{scaling: current, format: hybrid}",
}


def spec_text(hidden, ffn, recipe="delayed", backward=True, name="py_mlp"):
    """The block as tegen YAML: x [tokens, hidden] bf16 in, y out; weights gamma, w_up [2*ffn, hidden], w_down."""
    return f"""layer: {name}
dims: {{tokens: dynamic, hidden: {hidden}, ffn: {ffn}}}
recipe: {RECIPES[recipe]}
tensors:
  x:      {{shape: [tokens, hidden], dtype: bf16}}
  gamma:  {{shape: [hidden], dtype: bf16, role: weight}}
  w_up:   {{shape: [2*ffn, hidden], dtype: bf16, role: weight}}
  w_down: {{shape: [hidden, ffn], dtype: bf16, role: weight}}
ops:
  - norm_quantize: {{in: x, gamma: gamma, out: xn, norm: rmsnorm, eps: 1e-5}}
  - quantize: {{in: w_up, out: w_up_q}}
  - gemm_cast: {{a: xn, b: w_up_q, out: h, dtype: bf16, pass: fprop}}
  - glu_amax: {{in: h, out: act, act: swiglu}}
  - quantize: {{in: w_down, out: w_down_q}}
  - gemm_cast: {{a: act, b: w_down_q, out: y, dtype: bf16, pass: fprop}}
outputs: [y]
{"backward: true" if backward else ""}
"""


def mlp(x, gamma, w_up, w_down, eps=1e-5):
    """The block in plain PyTorch (autograd-differentiable), computed in x's dtype."""
    xn = x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + eps).to(x.dtype) * gamma
    h = xn @ w_up.t()
    f = h.shape[-1] // 2
    return (F.silu(h[..., :f]) * h[..., f:]) @ w_down.t()


class TorchMLP(torch.nn.Module):
    """The same block as an nn.Module with the same parameter names as tegen.torch.Layer."""

    def __init__(self, hidden, ffn, dtype=torch.bfloat16, device="cuda"):
        super().__init__()
        self.gamma = torch.nn.Parameter(torch.ones(hidden, dtype=dtype, device=device))
        self.w_up = torch.nn.Parameter(torch.randn(2 * ffn, hidden, dtype=dtype, device=device) * 0.02)
        self.w_down = torch.nn.Parameter(torch.randn(hidden, ffn, dtype=dtype, device=device) * 0.02)

    def forward(self, x):
        return mlp(x, self.gamma, self.w_up, self.w_down)


def rel_err(a, b):
    """||a - b|| / ||b|| in float64."""
    a, b = a.double(), b.double()
    return ((a - b).norm() / b.norm().clamp_min(1e-30)).item()
