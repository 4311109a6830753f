"""test_gpu.py: tegen.torch.Layer on a GPU (skips without one, or without torch):
  fwd/bwd   the Llama-style MLP block's output and gradients (x, gamma, w_up, w_down) against plain
            PyTorch in FP32 on the same BF16 weights, relative error (||a-b||/||b||) within the
            recipe's bound (FP8 hybrid: E4M3 forward, E5M2 gradients), after 3 steps of scale history
  accumulate  two backward passes add into .grad
  pairing   a second forward before the backward makes that backward raise (one saved set per layer)
  stream    a non-default torch stream gives the same result
  graph     the forward captured in a CUDA graph and replayed on new input equals the eager forward
  graph-train  a whole training step (forward + backward) captured and replayed equals it eager
  compile   a torch.compile'd function around the module runs (a graph break at the layer)
  fwd-only  a spec without backward: forward under no_grad, outputs not differentiable

    python3 python/tests/test_gpu.py [--hidden 1024 --ffn 2048 --tokens 256]
Prints ok/FAIL/skip lines with the measured errors; exit 1 on any FAIL.
"""
import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)
fails = 0
# The recipe's bound on the normwise relative error against an FP32 computation of the block:
# E4M3 (3 mantissa bits) operands in the forward GEMMs, E5M2 (2 bits) gradients in the backward ones.
# y: 0.15, the bound ref/NUMERICS.md states for the derived layer per recipe (measured on the H100:
# 0.066; the first guess, 0.05, was below what FP8 operands give).
BOUND = {"delayed": {"y": 0.15, "x": 0.10, "gamma": 0.10, "w_up": 0.10, "w_down": 0.10},
         "current": {"y": 0.15, "x": 0.10, "gamma": 0.10, "w_up": 0.10, "w_down": 0.10}}


def ok(name, cond, why=""):
    global fails
    if cond:
        print(f"ok python-gpu/{name}{(' (' + why + ')') if why else ''}")
    else:
        fails += 1
        print(f"FAIL python-gpu/{name}: {why}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hidden", type=int, default=1024)
    ap.add_argument("--ffn", type=int, default=2048)
    ap.add_argument("--tokens", type=int, default=256)
    ap.add_argument("--recipe", default="delayed", choices=["delayed", "current"])
    args = ap.parse_args()
    try:
        import torch
    except ImportError:
        print("skip python-gpu: no torch")
        return 0
    if not torch.cuda.is_available():
        print("skip python-gpu: no GPU (torch.cuda.is_available() is False)")
        return 0
    import tegen
    ok_gpu, why = tegen.gpu_available()
    if not ok_gpu:
        print(f"skip python-gpu: no GPU ({why})")
        return 0
    import tegen.torch as tt
    from mlp_ref import mlp, rel_err, spec_text

    H, FF, T = args.hidden, args.ffn, args.tokens
    torch.manual_seed(0)
    dev = torch.device("cuda")
    t0 = time.time()
    layer = tt.Layer(text=spec_text(H, FF, args.recipe), name=f"py_mlp_{args.recipe}", tokens=T)
    mode = "tg_backward" if layer.phased else "no tg_backward in this libtegen: backward reruns the layer"
    print(f"# tegen {tegen.version()} from {tegen.library_path()} on {layer.context.arch}; {mode}; "
          f"load {time.time() - t0:.1f} s")
    ok("params", [n for n, _ in layer.named_parameters()] == ["gamma", "w_up", "w_down"],
       str([(n, tuple(p.shape), str(p.dtype)) for n, p in layer.named_parameters()]))
    with torch.no_grad():
        layer.gamma.copy_(1 + 0.1 * torch.randn(H, device=dev))

    def fresh_grads():
        for p in layer.parameters():
            p.grad = None

    # fwd/bwd against FP32 PyTorch, after two warm-up steps (delayed scaling: scales from the amax history)
    for step in range(3):
        fresh_grads()
        x = torch.randn(2, T // 2, H, device=dev, dtype=torch.bfloat16, requires_grad=True)  # [batch, seq, hidden]
        dy = torch.randn(2, T // 2, H, device=dev, dtype=torch.bfloat16) * 0.01
        y = layer(x)
        y.backward(dy)
    torch.cuda.synchronize()
    ws = {n: p.detach().float().requires_grad_() for n, p in layer.named_parameters()}
    xr = x.detach().float().requires_grad_()
    yr = mlp(xr, ws["gamma"], ws["w_up"], ws["w_down"])
    yr.backward(dy.float())
    bound = BOUND[args.recipe]
    e = rel_err(y, yr)
    ok("fwd", y.shape == x.shape and y.dtype == torch.bfloat16 and e < bound["y"], f"y rel err {e:.4f} < {bound['y']}")
    grads = {"x": (x.grad, xr.grad)}
    grads.update({n: (p.grad, ws[n].grad) for n, p in layer.named_parameters()})
    for n, (g, r) in grads.items():
        if g is None:
            ok(f"bwd/{n}", False, "no gradient")
            continue
        e = rel_err(g, r)
        ok(f"bwd/{n}", g.shape == r.shape and torch.isfinite(g.float()).all().item() and e < bound[n],
           f"d_{n} rel err {e:.4f} < {bound[n]}")

    # .grad accumulates: the same step twice, the scales held (auto_step off) -> exactly twice
    layer.auto_step = False
    fresh_grads()
    layer(x.detach()).backward(dy)
    one = layer.w_down.grad.clone()
    layer(x.detach()).backward(dy)
    e = rel_err(layer.w_down.grad, 2 * one)
    ok("accumulate", e < 1e-2, f"w_down.grad after two steps vs twice one: rel err {e:.2e}")
    layer.auto_step = True

    # pairing: forward, forward, backward of the first -> RuntimeError
    xa = x.detach().requires_grad_()
    ya = layer(xa)
    layer(x.detach().requires_grad_())
    try:
        ya.backward(dy)
        ok("pairing", False, "no error for a backward after a second forward")
    except RuntimeError as err:
        ok("pairing", "another forward ran" in str(err), str(err)[:80])

    # a non-default stream: same output as the default one (scales held)
    layer.auto_step = False
    with torch.no_grad():
        y0 = layer(x.detach())
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            y1 = layer(x.detach())
        torch.cuda.current_stream().wait_stream(s)
        torch.cuda.synchronize()
        ok("stream", torch.equal(y0, y1), f"max diff {(y0.float() - y1.float()).abs().max().item():.3g}")

        # CUDA graph: capture the forward, replay on new input, compare with eager
        xs = x.detach().clone()
        for _ in range(2):  # warm-up at this size on a side stream, as torch.cuda.graph wants
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                layer(xs)
            torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        try:
            with torch.cuda.graph(g):
                ys = layer(xs)
            xs.copy_(torch.randn_like(xs))
            g.replay()
            torch.cuda.synchronize()
            ye = layer(xs)
            torch.cuda.synchronize()
            ok("graph", torch.equal(ys, ye), f"replay vs eager max diff {(ys.float() - ye.float()).abs().max().item():.3g}")
        except Exception as err:  # noqa: BLE001
            ok("graph", False, f"{type(err).__name__}: {err}")
    layer.auto_step = True


    # torch.compile around the module: a graph break at the layer, the rest compiled
    try:
        f = torch.compile(lambda t: layer(t * 1.0) * 2.0)
        with torch.no_grad():
            yc = f(x.detach())
        torch.cuda.synchronize()
        ok("compile", yc.shape == x.shape and torch.isfinite(yc.float()).all().item(), "torch.compile ran")
    except Exception as err:  # noqa: BLE001
        ok("compile", False, f"{type(err).__name__}: {str(err)[:200]}")

    # a forward-only spec: no backward half
    fwd = tt.Layer(text=spec_text(H, FF, args.recipe, backward=False, name="py_mlp_fwd"))
    with torch.no_grad():
        for n, p in layer.named_parameters():
            getattr(fwd, n).copy_(p)
    with torch.no_grad():
        for _ in range(2):  # two steps of amax history first (delayed scaling starts from scale 1)
            fwd(x.detach())
    yf = fwd(x.detach())
    torch.cuda.synchronize()
    e = rel_err(yf, yr)
    ok("fwd-only", not fwd.has_backward and not yf.requires_grad and e < bound["y"], f"y rel err {e:.4f}")

    # raw API: state and a component as torch tensors without copies
    st = layer.state()
    _, nbytes, lay = layer.tg.state()
    sc = layer.tg.torch_component("xn", "scale")
    ok("state-view", st.numel() * 4 == nbytes and st.dtype == torch.float32 and sc.numel() == 1 and
       st.data_ptr() == layer.tg.state()[0], f"{lay['tensors']} scaled tensors, xn scale {sc.item():.4g}")
    q = layer.tg.torch_component("xn", "data")
    ok("component-view", q.dtype == torch.float8_e4m3fn and q.numel() == T * H, f"{q.dtype} {q.numel()}")
    try:
        layer.tg.bind("x", torch.zeros(T, H, device=dev, dtype=torch.float32))
        ok("bind-dtype-error", False, "fp32 for a bf16 tensor bound")
    except tegen.Error as err:
        ok("bind-dtype-error", err.status == tegen.ERR_BINDING and "bf16" in err.message, err.message)
    try:
        layer.tg.bind("x", torch.zeros(T, 2 * H, device=dev, dtype=torch.bfloat16)[:, :H])
        ok("bind-contiguous-error", False, "a strided view bound")
    except tegen.Error as err:
        ok("bind-contiguous-error", "not contiguous" in err.message, err.message)
    try:
        layer.tg.bind("x", torch.zeros(T * H + 1, device=dev, dtype=torch.bfloat16)[1:].view(T, H))
        ok("bind-align-error", False, "a 2-byte-offset view bound")
    except tegen.Error as err:
        ok("bind-align-error", "16-byte aligned" in err.message, err.message)

    # CUDA graph of a whole training step (forward + backward), replayed, vs the same step eager.
    # Whole-network capture as PyTorch documents it: parameters, inputs and every warm-up on a side
    # stream. A fresh module: the parameters of `layer` got their AccumulateGrad nodes on the default
    # stream in the tests above, and a gradient accumulated on the default stream during capture
    # invalidates it (H100, torch 2.11: cudaErrorStreamCaptureInvalidated after PyTorch's
    # "AccumulateGrad node's stream does not match" warning). Last: a failed capture would leave the
    # context unusable for the tests after it.
    try:
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            gl = tt.Layer(text=spec_text(H, FF, args.recipe), name=f"py_mlp_graph_{args.recipe}", tokens=T,
                          auto_step=False)
            with torch.no_grad():
                for name, p in gl.named_parameters():
                    p.copy_(getattr(layer, name))
            xg = x.detach().clone().requires_grad_()
            dyg = dy.clone()

            def clear():
                for p in gl.parameters():
                    p.grad = None
                xg.grad = None

            for _ in range(3):
                clear()
                gl(xg).backward(dyg)
            clear()
        torch.cuda.current_stream().wait_stream(s)
        g2 = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g2, stream=s):
            gl(xg).backward(dyg)
        g2.replay()
        torch.cuda.synchronize()
        gw, gx = gl.w_up.grad.clone(), xg.grad.clone()
        with torch.cuda.stream(s):
            clear()
            gl(xg).backward(dyg)
        torch.cuda.synchronize()
        ok("graph-train", torch.equal(gw, gl.w_up.grad) and torch.equal(gx, xg.grad),
           f"replay vs eager: d_w_up max diff {(gw.float() - gl.w_up.grad.float()).abs().max().item():.3g}, "
           f"d_x {(gx.float() - xg.grad.float()).abs().max().item():.3g}")
    except Exception as err:  # noqa: BLE001
        ok("graph-train", False, f"{type(err).__name__}: {str(err)[:300]}")
    layer.auto_step = True
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
