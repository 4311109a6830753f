#!/usr/bin/env python3
"""derive_check.py: the derived backward (gen/derive.c) against finite differences, on the CPU.

`tegen run --check` compares the GPU with the CPU reference, which run the same derived graph: a wrong
derivation (a gradient summed twice, or not at all) would pass it. Here small FP32 layers (no quantization)
whose tensors are read by several ops (fan-outs into GEMMs, a GEMM's `add`, a norm's residual next to a
GEMM) and MLPs with each activation that has no gate partner (gelu, silu, ...) run through `tegen run --cpu` with given inputs and output gradients, and every derived gradient
d_<t> is compared with the central difference of L = sum over outputs of (output * its gradient),
computed here in float64 from the layer's own forward (a few lines of Python per case).
Python 3 standard library only. Usage (repo root, after ninja): python3 tests/derive_check.py [TEGEN]
Prints `ok derive/NAME/d_T (max rel err E)` or `FAIL ...` per gradient; exits 1 on a failure."""
import math
import os
import random
import struct
import subprocess
import sys
import tempfile

T, H, N, EPS = 3, 8, 16, 1e-5
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def mm_t(a, b):
    """a [m][k] x b [n][k]^T -> [m][n]"""
    return [[sum(x * y for x, y in zip(ra, rb)) for rb in b] for ra in a]


def add(a, b):
    return [[x + y for x, y in zip(ra, rb)] for ra, rb in zip(a, b)]


def rmsnorm(x, g):
    out = []
    for r in x:
        rs = 1.0 / math.sqrt(sum(v * v for v in r) / len(r) + EPS)
        out.append([v * rs * gg for v, gg in zip(r, g)])
    return out


HEAD = "dims: {tokens: dynamic, hidden: %d, n: %d}\n" % (H, N)
# name -> (spec body after dims, inputs {name: shape}, outputs, forward(inputs) -> {output: matrix})
CASES = {
    # one norm output read by three GEMMs (Q, K, V apart) and an output projection adding the block input
    "fanout3_add": ("""tensors:
  x: {shape: [tokens, hidden], dtype: fp32}
  gamma: {shape: [hidden], dtype: fp32, role: weight}
  w_q: {shape: [n, hidden], dtype: fp32, role: weight}
  w_k: {shape: [n, hidden], dtype: fp32, role: weight}
  w_v: {shape: [n, hidden], dtype: fp32, role: weight}
  w_o: {shape: [hidden, n], dtype: fp32, role: weight}
ops:
  - norm_quantize: {in: x, gamma: gamma, out: xn, eps: 1e-5, precision: fp32}
  - gemm_cast: {a: xn, b: w_q, out: q, dtype: fp32}
  - gemm_cast: {a: xn, b: w_k, out: k, dtype: fp32}
  - gemm_cast: {a: xn, b: w_v, out: v, dtype: fp32}
  - gemm_cast: {a: v, b: w_o, add: x, out: o, dtype: fp32}
outputs: [q, k, o]
""", {"x": (T, H), "gamma": (H,), "w_q": (N, H), "w_k": (N, H), "w_v": (N, H), "w_o": (H, N)}, ["q", "k", "o"],
        lambda i: (lambda xn: {"q": mm_t(xn, i["w_q"]), "k": mm_t(xn, i["w_k"]),
                               "o": add(mm_t(mm_t(xn, i["w_v"]), i["w_o"]), i["x"])})(rmsnorm(i["x"], i["gamma"]))),
    # x read by a GEMM and, later, by a norm (dnorm's d_x renamed to a part the dgrad adds)
    "gemm_then_norm": ("""tensors:
  x: {shape: [tokens, hidden], dtype: fp32}
  gamma: {shape: [hidden], dtype: fp32, role: weight}
  w1: {shape: [n, hidden], dtype: fp32, role: weight}
  w2: {shape: [n, hidden], dtype: fp32, role: weight}
ops:
  - gemm_cast: {a: x, b: w1, out: y1, dtype: fp32}
  - norm_quantize: {in: x, gamma: gamma, out: xn, eps: 1e-5, precision: fp32}
  - gemm_cast: {a: xn, b: w2, out: y2, dtype: fp32}
outputs: [y1, y2]
""", {"x": (T, H), "gamma": (H,), "w1": (N, H), "w2": (N, H)}, ["y1", "y2"],
        lambda i: {"y1": mm_t(i["x"], i["w1"]), "y2": mm_t(rmsnorm(i["x"], i["gamma"]), i["w2"])}),
    # o = a w_o^T + x, x also read by a later GEMM (whose dgrad adds d_o); a layer input only added (d_s a copy)
    "add_then_gemm": ("""tensors:
  x: {shape: [tokens, hidden], dtype: fp32}
  a: {shape: [tokens, n], dtype: fp32}
  s: {shape: [tokens, n], dtype: fp32}
  w_o: {shape: [hidden, n], dtype: fp32, role: weight}
  w3: {shape: [n, hidden], dtype: fp32, role: weight}
ops:
  - gemm_cast: {a: a, b: w_o, add: x, out: o, dtype: fp32}
  - gemm_cast: {a: x, b: w3, add: s, out: z, dtype: fp32}
outputs: [o, z]
""", {"x": (T, H), "a": (T, N), "s": (T, N), "w_o": (H, N), "w3": (N, H)}, ["o", "z"],
        lambda i: {"o": add(mm_t(i["a"], i["w_o"]), i["x"]), "z": add(mm_t(i["x"], i["w3"]), i["s"])}),
}


# the same with a residual norm: d_r is dnorm's part only, d_x also has the GEMM's
CASES["gemm_then_residual_norm"] = (
    CASES["gemm_then_norm"][0].replace("  gamma:", "  r: {shape: [tokens, hidden], dtype: fp32}\n  gamma:", 1)
    .replace("{in: x, gamma", "{in: x, residual: r, gamma"),
    dict(CASES["gemm_then_norm"][1], r=(T, H)), ["y1", "y2"],
    lambda i: {"y1": mm_t(i["x"], i["w1"]), "y2": mm_t(rmsnorm(add(i["x"], i["r"]), i["gamma"]), i["w2"])})


def sigmoid(z):
    return 1.0 / (1.0 + math.exp(-z))


# the activations without a gate partner (glu_amax act: ...), as tg_glu computes them
ACTS = {
    "gelu": lambda v: v * sigmoid(1.5957691216057308 * (v + 0.044715 * v ** 3)),
    "silu": lambda v: v * sigmoid(v),
    "qgelu": lambda v: v * sigmoid(1.702 * v),
    "relu": lambda v: max(v, 0.0),
    "srelu": lambda v: max(v, 0.0) ** 2,
}
# an MLP with each: h = xn w_up^T + b_up, act(h), y = act w_down^T (dglu without a gate partner, its fused dbias)
for _act, _f in ACTS.items():
    CASES["mlp_" + _act] = ("""tensors:
  x: {shape: [tokens, hidden], dtype: fp32}
  gamma: {shape: [hidden], dtype: fp32, role: weight}
  w_up: {shape: [n, hidden], dtype: fp32, role: weight}
  b_up: {shape: [n], dtype: fp32, role: weight}
  w_down: {shape: [hidden, n], dtype: fp32, role: weight}
ops:
  - norm_quantize: {in: x, gamma: gamma, out: xn, eps: 1e-5, precision: fp32}
  - gemm_cast: {a: xn, b: w_up, bias: b_up, out: h, dtype: fp32}
  - glu_amax: {in: h, out: a, act: %s, precision: fp32}
  - gemm_cast: {a: a, b: w_down, out: y, dtype: fp32}
outputs: [y]
""" % _act, {"x": (T, H), "gamma": (H,), "w_up": (N, H), "b_up": (N,), "w_down": (H, N)}, ["y"],
        (lambda f: lambda i: {"y": mm_t([[f(v + b) for v, b in zip(r, i["b_up"])]
                                         for r in mm_t(rmsnorm(i["x"], i["gamma"]), i["w_up"])], i["w_down"])})(_f))


def write_npy(path, shape, flat):
    hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % "".join("%d," % d for d in shape)
    hdr += " " * (63 - (10 + len(hdr)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode())
        f.write(struct.pack("<%df" % len(flat), *flat))


def read_npy(path):
    with open(path, "rb") as f:
        data = f.read()
    hl = struct.unpack("<H", data[8:10])[0]
    hdr = data[10:10 + hl].decode()
    assert "'<f4'" in hdr, hdr
    body = data[10 + hl:]
    return list(struct.unpack("<%df" % (len(body) // 4), body))


def shaped(flat, shape):
    return flat[:] if len(shape) == 1 else [flat[r * shape[1]:(r + 1) * shape[1]] for r in range(shape[0])]


def flat(m):
    return [v for r in m for v in r] if m and isinstance(m[0], list) else list(m)


def f32(v):
    return struct.unpack("<f", struct.pack("<f", v))[0]


def run_case(tegen, name, body, ins, outs, fwd, rng, tmp):
    spec = os.path.join(tmp, name + ".yaml")
    with open(spec, "w") as f:
        f.write("layer: %s\n%s%sbackward: true\n" % (name, HEAD, body))
    vals = {}
    for t, shp in ins.items():
        n = shp[0] * (shp[1] if len(shp) > 1 else 1)
        vals[t] = [f32(rng.uniform(-1, 1) * (0.5 if t.startswith("w") else 1.0) + (1.0 if t == "gamma" else 0.0))
                   for _ in range(n)]
    ref_out = fwd({t: shaped(v, ins[t]) for t, v in vals.items()})
    dys = {o: [f32(rng.uniform(-1, 1)) for _ in flat(ref_out[o])] for o in outs}
    indir, outdir = os.path.join(tmp, name + "_in"), os.path.join(tmp, name + "_out")
    os.makedirs(indir)
    for t, v in vals.items():
        write_npy(os.path.join(indir, t + ".npy"), ins[t], v)
    for o in outs:
        m = ref_out[o]
        write_npy(os.path.join(indir, "d_" + o + ".npy"), (len(m), len(m[0])), dys[o])
    r = subprocess.run([tegen, "run", spec, "--cpu", "--tokens", str(T), "--in", indir, "--out", outdir],
                       capture_output=True, text=True)
    if r.returncode:
        print("FAIL derive/%s: tegen run --cpu exited %d: %s" % (name, r.returncode, (r.stderr or r.stdout)[-400:]))
        return 1

    def loss(v):
        o = fwd({t: shaped(x, ins[t]) for t, x in v.items()})
        return sum(a * b for k in outs for a, b in zip(flat(o[k]), dys[k]))

    fails = 0
    for t in ins:
        path = os.path.join(outdir, "d_" + t + ".npy")
        if not os.path.exists(path):
            print("FAIL derive/%s/d_%s: not written (outputs: %s)" % (name, t, sorted(os.listdir(outdir))))
            fails += 1
            continue
        got = read_npy(path)
        want = []
        for j in range(len(vals[t])):
            h = 1e-3 * max(1.0, abs(vals[t][j]))
            vp = dict(vals)
            vp[t] = vals[t][:]
            vp[t][j] = vals[t][j] + h
            lp = loss(vp)
            vp[t][j] = vals[t][j] - h
            want.append((lp - loss(vp)) / (2 * h))
        scale = max(1e-6, max(abs(w) for w in want))
        err = max(abs(g - w) for g, w in zip(got, want)) / scale
        if err <= 2e-3:
            print("ok derive/%s/d_%s (max error %.1e of the largest gradient)" % (name, t, err))
        else:
            print("FAIL derive/%s/d_%s: max error %.2e of the largest gradient %.3g (got %s, want %s)" %
                  (name, t, err, scale, [round(g, 4) for g in got[:6]], [round(w, 4) for w in want[:6]]))
            fails += 1
    return fails


def main():
    tegen = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "tegen")
    rng = random.Random(23)
    fails = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, (body, ins, outs, fwd) in CASES.items():
            fails += run_case(tegen, name, body, ins, outs, fwd, rng, tmp)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
