# torch_mix.py: the same read:write mixes through PyTorch's own kernels (copy 1:1, FP8 -> BF16 1:2, BF16 -> FP8 2:1).
import torch
def t(f, it=20):
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(3): f()
    ts = []
    for _ in range(it):
        s.record(); f(); e.record(); e.synchronize(); ts.append(s.elapsed_time(e))
    return sorted(ts)[len(ts) // 2] * 1e-3
n = 1 << 30
a = torch.empty(n, dtype=torch.uint8, device="cuda"); b = torch.empty_like(a)
print("torch copy 1:1 %.0f GB/s" % (2 * n / t(lambda: b.copy_(a)) / 1e9))
x8 = torch.randn(n // 2, device="cuda").to(torch.float8_e4m3fn); y16 = torch.empty(n // 2, dtype=torch.bfloat16, device="cuda")
print("torch fp8->bf16 1:2 %.0f GB/s" % (3 * (n // 2) / t(lambda: y16.copy_(x8)) / 1e9))
print("torch bf16->fp8 2:1 %.0f GB/s" % (3 * (n // 2) / t(lambda: x8.copy_(y16)) / 1e9))
