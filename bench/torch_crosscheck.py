"""End-to-end cross-check of `tegen run --in/--out` against PyTorch.

Writes the inputs of specs/llama3_8b_mlp_bf16.yaml as .npy files (BF16 as raw
uint16 views, tegen's convention), runs `tegen run --in DIR --out DIR`, loads
y.npy back and compares it with the same MLP computed by PyTorch in FP32 from
the same BF16 inputs: RMSNorm (eps 1e-5) -> x @ w_up^T -> SwiGLU -> @ w_down^T.
Prints one line "ok torch-crosscheck ..." or "FAIL torch-crosscheck ...".
Run from the repository root on the GPU machine: python3 bench/torch_crosscheck.py
"""
import os, subprocess, sys, tempfile
import numpy as np
import torch

T, H, F = 128, 4096, 14336
d = tempfile.mkdtemp()
torch.manual_seed(0)
x = torch.randn(T, H, dtype=torch.bfloat16)
gamma = (1 + 0.1 * torch.randn(H)).to(torch.bfloat16)
w_up = (0.02 * torch.randn(2 * F, H)).to(torch.bfloat16)
w_down = (0.02 * torch.randn(H, F)).to(torch.bfloat16)
for name, t in [("x", x), ("gamma", gamma), ("w_up", w_up), ("w_down", w_down)]:
    np.save(os.path.join(d, name + ".npy"), t.view(torch.int16).numpy().view(np.uint16))
out = os.path.join(d, "out")
r = subprocess.run(["build/tegen", "run", "specs/llama3_8b_mlp_bf16.yaml", "--tokens", str(T),
                    "--in", d, "--out", out, "--iters", "3"], capture_output=True, text=True)
if r.returncode != 0:
    print("FAIL torch-crosscheck: tegen run exited %d: %s" % (r.returncode, (r.stderr or r.stdout)[-500:]))
    sys.exit(1)
y = torch.from_numpy(np.load(os.path.join(out, "y.npy")).view(np.int16)).view(torch.bfloat16).float()

xf = x.float().cuda()
xn = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-5) * gamma.float().cuda()
xn = xn.to(torch.bfloat16).float()                      # the spec keeps xn in BF16
h = (xn @ w_up.float().cuda().t()).to(torch.bfloat16).float()
a, b = h[:, :F], h[:, F:]
act = (torch.nn.functional.silu(a) * b).to(torch.bfloat16).float()
ref = (act @ w_down.float().cuda().t()).cpu()
rel = ((y.reshape(ref.shape) - ref).norm() / ref.norm()).item()
ok = rel < 2e-2
print("%s torch-crosscheck llama3_8b_mlp_bf16 tokens=%d: relative error %.3g vs PyTorch FP32 math on the same BF16 inputs (limit 2e-2)"
      % ("ok" if ok else "FAIL", T, rel))
sys.exit(0 if ok else 1)
