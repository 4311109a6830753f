"""test_torch_cpu.py: tegen.torch.Layer's autograd plumbing on the CPU, with a fake tegen layer that
computes the MLP block exactly (FP32) from whatever is bound: which tensors forward and backward bind,
the gradients returned (input, weights, in their dtypes), leading dims, accumulation into .grad,
the forward/backward pairing rule, recipe steps, and the rerun fallback of a libtegen without
tg_backward. Needs torch (any version, CPU); no GPU, no libtegen call. Prints ok/FAIL/skip lines.

    python3 python/tests/test_torch_cpu.py
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)
fails = 0


def ok(name, cond, why=""):
    global fails
    print(f"ok python-torch/{name}" if cond else f"FAIL python-torch/{name}: {why}")
    fails += 0 if cond else 1


class Info:
    def __init__(self, name, dtype, shape, input=False, output=False, weight=False, gradient=False):
        self.name, self.dtype, self.shape = name, dtype, tuple(shape)
        self.input, self.output, self.weight, self.gradient = input, output, weight, gradient


class FakeTg:
    """The tensors of llama3_8b_mlp_train.yaml (H, F small) and an exact FP32 forward/backward."""

    def __init__(self, torch, H, F, backward=True):
        self.torch, self.H, self.F, self.has_bwd = torch, H, F, backward
        self.bound, self.calls = {}, []

    def tensors(self, tokens=0):
        T = tokens if tokens > 0 else -1
        BF, F32 = 2, 1
        out = [Info("x", BF, (T, self.H), input=True), Info("gamma", BF, (self.H,), input=True, weight=True),
               Info("w_up", BF, (2 * self.F, self.H), input=True, weight=True),
               Info("w_down", BF, (self.H, self.F), input=True, weight=True), Info("y", BF, (T, self.H), output=True)]
        if self.has_bwd:
            out += [Info("d_y", BF, (T, self.H), input=True, gradient=True),
                    Info("d_w_down", F32, (self.H, self.F), output=True, gradient=True),
                    Info("d_w_up", F32, (2 * self.F, self.H), output=True, gradient=True),
                    Info("d_x", BF, (T, self.H), output=True, gradient=True),
                    Info("d_gamma", F32, (self.H,), output=True, gradient=True)]
        return [Info(i.name, i.dtype, tuple(None if s < 0 else s for s in i.shape), i.input, i.output, i.weight,
                     i.gradient) for i in out]

    def set_tokens(self, n):
        pass

    def load(self):
        pass

    def bind(self, name, t):
        self.bound[name] = t

    def _compute(self, grad):
        from mlp_ref import mlp
        torch = self.torch
        b = self.bound
        with torch.enable_grad():
            ins = {n: b[n].detach().float().requires_grad_() for n in ("x", "gamma", "w_up", "w_down")}
            y = mlp(ins["x"], ins["gamma"], ins["w_up"], ins["w_down"])
            b["y"].copy_(y.detach())
            if grad:
                y.backward(b["d_y"].float())
                for n, v in ins.items():
                    b["d_" + n].copy_(v.grad)

    def run(self):
        self.calls.append("run")
        self._compute(self.has_bwd and not self.phased)

    def backward(self):
        self.calls.append("backward")
        self._compute(True)

    def step(self):
        self.calls.append("step")


class FakeContext:
    device, arch = None, "cpu"

    def __init__(self, tg):
        self.tg = tg

    def layer(self, spec, text=None, name=None):
        return self.tg


def main():
    try:
        import torch
    except ImportError:
        print("skip python-torch: no torch")
        return 0
    import tegen.torch as tt
    from mlp_ref import mlp, rel_err
    tt._device_of = lambda ctx: torch.device("cpu")
    H, F, T = 32, 48, 12
    torch.manual_seed(0)
    for phased in (True, False):
        tag = "phased" if phased else "rerun"
        fake = FakeTg(torch, H, F)
        fake.phased = phased
        layer = tt.Layer(text="(fake)", context=FakeContext(fake))
        layer.phased = phased
        layer = layer.cpu()  # nn.Module's own machinery (_apply) still works on the module
        ok(f"{tag}/params", [n for n, _ in layer.named_parameters()] == ["gamma", "w_up", "w_down"] and
           layer.gamma.dtype == torch.bfloat16 and torch.equal(layer.gamma.float(), torch.ones(H)),
           str([(n, p.shape, p.dtype) for n, p in layer.named_parameters()]))
        with torch.no_grad():
            layer.gamma.add_(0.1 * torch.randn(H).to(torch.bfloat16))
        x = torch.randn(3, T // 3, H, dtype=torch.bfloat16, requires_grad=True)
        dy = torch.randn(3, T // 3, H, dtype=torch.bfloat16)
        fake.calls.clear()
        y = layer(x)
        ok(f"{tag}/forward", y.shape == x.shape and y.requires_grad and fake.calls == ["run"], str(fake.calls))
        user_y = fake.bound["y"]
        y.backward(dy)
        want = ["run", "backward", "step"] if phased else ["run", "run", "step"]
        ok(f"{tag}/calls", fake.calls == want, f"{fake.calls} != {want}")
        if not phased:
            ok("rerun/outputs-to-scratch", fake.bound["y"] is not user_y and fake.bound["d_y"].data_ptr() != 0,
               "the backward rerun wrote the user's y")
        ws = {n: p.detach().float().requires_grad_() for n, p in layer.named_parameters()}
        xr = x.detach().float().requires_grad_()
        yr = mlp(xr, ws["gamma"], ws["w_up"], ws["w_down"])
        yr.backward(dy.float())
        e = rel_err(y, yr)
        ok(f"{tag}/y", e < 1e-2, f"rel err {e}")
        for n, g, r in [("x", x.grad, xr.grad)] + [(n, p.grad, ws[n].grad) for n, p in layer.named_parameters()]:
            ok(f"{tag}/grad-{n}", g is not None and g.shape == r.shape and g.dtype == torch.bfloat16 and
               rel_err(g, r) < 1e-2, f"{None if g is None else (g.shape, g.dtype, rel_err(g, r))}")
        one = layer.w_up.grad.clone()
        layer(x).backward(dy)
        ok(f"{tag}/accumulate", rel_err(layer.w_up.grad, 2 * one) < 1e-2, "w_up.grad not accumulated")
        ya = layer(x)
        layer(x)
        try:
            ya.backward(dy)
            ok(f"{tag}/pairing", False, "no error")
        except RuntimeError as err:
            ok(f"{tag}/pairing", "another forward ran" in str(err), str(err))
        fake.calls.clear()
        with torch.no_grad():
            yn = layer(x)
        ok(f"{tag}/no-grad-steps", fake.calls == ["run", "step"] and not yn.requires_grad, str(fake.calls))
        layer.auto_step = False
        fake.calls.clear()
        layer(x).backward(dy)
        ok(f"{tag}/auto-step-off", "step" not in fake.calls, str(fake.calls))
        try:
            layer(x, x)
            ok(f"{tag}/arity", False, "two inputs accepted")
        except TypeError as err:
            ok(f"{tag}/arity", "takes 1 inputs (x)" in str(err), str(err))
    # real torch objects through the binding checks (CPU tensors: refused with the reason)
    import tegen
    from tegen import _tensors
    ok("torch-dtypes", [tegen.dtype_code(d) for d in (torch.float32, torch.bfloat16, torch.float16)] == [1, 2, 3], "")
    try:
        tegen.as_buffer("x", torch.zeros(4, 4))
        ok("torch-cpu-refused", False, "a CPU tensor was accepted")
    except tegen.BindError as err:
        ok("torch-cpu-refused", "tegen needs a CUDA tensor" in str(err), str(err))
    try:
        tegen.as_buffer("x", torch.zeros(4, 4, dtype=torch.int32))
        ok("torch-int-refused", False, "int32 accepted")
    except tegen.BindError as err:
        ok("torch-int-refused", "needs a CUDA tensor" in str(err) or "no tegen element type" in str(err), str(err))
    t = torch.zeros(6, 8, dtype=torch.bfloat16)
    capsule = t.__dlpack__()  # held: the DLTensor lives as long as the capsule
    dl = _tensors._capsule_tensor(capsule)
    ok("torch-dlpack-parse", (dl.ndim, dl.shape[0], dl.shape[1], dl.dtype.code, dl.dtype.bits, dl.device.device_type)
       == (2, 6, 8, 4, 16, 1) and dl.data == t.data_ptr(), f"{dl.ndim} {dl.dtype.code} {dl.dtype.bits}")
    # DeviceArray.__dlpack__ (what torch_state / torch_component use), on host memory here: shared, freed once
    import ctypes
    mem = (ctypes.c_float * 4)(1, 2, 3, 4)
    arr = tegen.DeviceArray(ctypes.addressof(mem), (4,), "<f4", mem, device=(1, 0))
    v = torch.from_dlpack(arr)
    mem[2] = 30
    ok("dlpack-export-shared", v.tolist() == [1, 2, 30, 4] and len(_tensors._exported) == 1, str(v.tolist()))
    del v
    ok("dlpack-export-released", len(_tensors._exported) == 0, f"{len(_tensors._exported)} left")
    fake = FakeTg(torch, H, F, backward=False)
    fake.phased = True
    fwd = tt.Layer(text="(fake)", context=FakeContext(fake))
    y = fwd(torch.randn(T, H, dtype=torch.bfloat16, requires_grad=True))
    ok("fwd-only", not fwd.has_backward and not y.requires_grad and fake.calls == ["run", "step"], str(fake.calls))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
