#!/usr/bin/env python3
"""gen.py: tegen's conformance generator (issue 13): the spec space, case by case.

The space: op (norm_quantize rmsnorm/layernorm, with/without residual, zero-centered
gamma, the saved rsigma / mu; glu_amax, every act; cast_transpose; quantize; gemm_cast fprop/dgrad/wgrad with
bias/accumulate/output dtype, the GELU epilogue (fprop) and fast accumulation either way; the chain gemm_cast
fprop -> glu_amax (x [T,K] and w [2C,K]
quantized, h in bf16/fp16/fp32, every act: the generated GEMM's GLU epilogue where the
planner fuses it, and its cuBLASLt fallback); the backward dglu (every act, h and grad dtypes, with and without its fused dbias), the chain
gemm_cast dgrad -> dglu (dy [T,K] rowwise and w [K,C] columnwise quantized, d_act and h in bf16/fp16/fp32: the
generated GEMM's dglu epilogue where the planner fuses it, and its fallback), dnorm
(rms/layernorm, zero-centered, residual gradient, dtypes; recipe none) and dbias; the AdamW layer with its weight's
gradient in grad_dtype or accumulated into main_grad; clamped SwiGLU also with its alpha and limit given; gemm_cast
adding a tensor (add); a fan-out layer: one norm read by two or three GEMMs, the output projection adding the block
input back or not, or x read by a GEMM and a later norm, with a residual or not) x recipe
(none, delayed, current, block1x128, block128x128, mxfp8, nvfp4 plain/2d/sr/rht; current and the block recipes with
pow2 each way; delayed with its default amax history, 16 entries, or 4 entries with most_recent and margin 1)
x format (e4m3/e5m2/hybrid) x operand
dtypes (bf16/fp16/fp32, mixed within an op) x layout (rowwise/columnwise/both) x
row-length class (multiple of 128; of 32 not 128; of 16 not 32; other) x tokens
(1, 5, 217, 993, 8192), each dynamic (`tokens: dynamic`, run with --tokens), fixed (`tokens: N`, no dynamic dim:
`tegen run` takes no --tokens) or offset (rows `tokens - 1`: 0, 4, 216, 992 rows at --tokens 1, 5, 217, 993) x targets (sm_90a+sm_100a; sm_89; sm_80). gemm_cast also varies its per-tensor
overrides (GEMM_OVERRIDES: an E5M2 b against E4M3 a, an FP8 output's format, block128x128 on a instead of b);
a third of the per-tensor FP8 GEMM cases the generated kernel can take (by hash: gemm_cast without an epilogue,
fast accumulation, a 2-byte output; the layer classes) run on the GPU with TEGEN_GEMM_GEN=2 (the generated kernel,
templates/gemm_fp8.cu, at every shape; the CPU half is unchanged).

Each case is one small spec (layer `conf`: every case shares kernel names, so
identical kernels hit one cache entry). Before running, the generator predicts
from the spec language's rules whether `tegen check` accepts the case or rejects
it deliberately (a named class, e.g. `fp8_below_sm89`); a case it expects to be
rejected passes the CPU half when check rejects it with a file:line:col error,
and the GPU half skips it.

  --cpu   per case: tegen check; then tegen plan --tokens T and
          tegen build --arch TARGETS --cache-dir DIR (NVRTC, no GPU needed)
  --gpu   per case: tegen run SPEC --tokens T --check --iters 2 (needs a GPU; a fixed-token case without
          --tokens, a gg2 case with TEGEN_GEMM_GEN=2 in the environment)

Prints `ok CASE`, `FAIL CASE: why` or `skip CASE: why` per case, then the op x
recipe matrix (passed/failed); exits 1 if a case failed. Python 3 standard
library only. From the repo root, after `ninja`:

  python3 tests/conformance/gen.py --all                  # the full matrix's size
  python3 tests/conformance/gen.py --sample 64 --cpu      # what tests/run.sh runs
  python3 tests/conformance/gen.py --sample 200 --out DIR # write specs + cases.tsv only
  python3 tests/conformance/gen.py --gpu --sample 300 --jobs 8 --time-limit 270
  python3 tests/conformance/gen.py --gpu --sample 40 --sanitizer memcheck
  python3 tests/conformance/gen.py --cpu --sample 50 --filter 'w(1000|4098|4100)[.x]'

A sample is stratified over the op x recipe cells; with --gpu it draws only
cases that check accepts and that target sm_90a+sm_100a (the others are the
CPU half's business), so --gpu --sample N runs N cases. --filter narrows a
sample (it draws on until N cases match). Case names spell the case: op,
its variant and dtypes, recipe, format, layout (or unquantized output dtype),
[ov-OVERRIDES,] wWIDTH[xN], tTOKENS[fix], targets[, gg2].
"""
import argparse
import concurrent.futures
import itertools
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_SEED = 13
HP = ["bf16", "fp16", "fp32"]
TOKENS = [1, 5, 217, 993, 8192]
# row-length classes: the values each class draws from (one per case, by hash)
WIDTHS = {
    "m128": [128, 256, 1024, 4096],
    "m32": [160, 544, 1056, 2080],
    "m16": [272, 528, 1040, 4112],
    "other": [27, 1000, 4098, 4100, 4097, 50257],
}
# GEMM extents stay small: the GPU half checks against a CPU reference GEMM
GEMM_WIDTHS = {
    "m128": [128, 256, 512],
    "m32": [160, 288, 544],
    "m16": [272, 144, 528],
    "other": [27, 1000, 100, 257],
}
TARGETS = {"hb": ["sm_90a", "sm_100a"], "sm89": ["sm_89"], "sm80": ["sm_80"]}
RECIPES = ["none", "delayed", "current", "block1x128", "block128x128", "mxfp8",
           "nvfp4", "nvfp4_2d", "nvfp4_sr", "nvfp4_rht"]
FP8_RECIPES = ["delayed", "current", "block1x128", "block128x128", "mxfp8"]
POW2_RECIPES = ["current", "block1x128", "block128x128"]  # `pow2` applies: a case each way
FORMATS = ["e4m3", "e5m2", "hybrid"]
# clamped_swiglu~al: clamped SwiGLU with its alpha and limit given (1.25, 2.5: the limit clamps inputs of
# randn scale), not GPT-OSS's defaults
ACTS = ["swiglu", "geglu", "reglu", "qgeglu", "sreglu", "clamped_swiglu", "clamped_swiglu~al",
        "silu", "gelu", "relu", "qgelu", "srelu"]
UNGATED = ("silu", "gelu", "relu", "qgelu", "srelu")   # no gate partner: h [.., C], not [.., 2C]
LAYOUTS = {"row": ["rowwise"], "col": ["columnwise"], "both": ["rowwise", "columnwise"]}
OPS = ["norm_quantize", "glu_amax", "cast_transpose", "quantize", "gemm_cast", "gemm_glu", "dglu", "gemm_dglu", "dnorm",
       "dbias", "adamw", "mlp", "fanout"]
GEMM_OPS = ("gemm_cast", "gemm_glu", "gemm_dglu", "adamw", "mlp", "fanout")   # cases with two GEMM extents (K = width, N = width2)
BACKWARD_UNQUANTIZED = ("dnorm", "dbias")   # their outputs are never quantized: recipe none only
# gemm_cast's per-tensor overrides (the `ov` of a case, in its name as ov-VALUE): b5 the operand b in e5m2 against
# an e4m3 a (TG_KIND e4m3.e5m2; delayed and current); o5 / o4 an FP8 output (dtype fp8, delayed) in e5m2 / e4m3;
# b5o5, b5o4 both; a2d block128x128 on the operand a (1x128 b) instead of on b
GEMM_OVERRIDES = ["b5", "o5", "o4", "b5o5", "b5o4", "a2d"]
TOKEN_MODES = ["dyn", "fix", "off"]   # tokens: dynamic (run with --tokens T), or tokens: T (no dynamic dim; name tTfix),
                                      # or dynamic with rows `tokens - 1` (run with --tokens T: T - 1 rows, 0 at T = 1; tToff)
GEMM_GEN_FRACTION = 3          # 1 in 3 of the eligible per-tensor FP8 GEMM cases run with TEGEN_GEMM_GEN=2 (name: gg2)

# Deliberate rejections: class -> what `tegen check`'s message must mention.
REJECT = {
    "fp8_below_sm89": r"sm_80.*(FP8|quantized)",
    "block_gemm_below_sm90": r"sm_90",
    "norm_weight_dtype": r"gamma|beta",
    "mxfp8_width": r"multiple of 32",
    "nvfp4_width": r"multiple of 16",
    "fused_block128x128": r"block128x128",
    "gemm_e5m2_both": r"e5m2",
    "gemm_fp8_out_not_delayed": r"delayed|fp8",
    "gemm_accumulate_fp8": r"accumulate|fp8",
    "gemm_accumulate_gelu": r"accumulate is not allowed with epilogue: gelu",
    "gemm_add_fp8": r"add needs a high-precision output",
    "gemm_add_accumulate": r"add and accumulate both add",
    "gemm_add_gelu": r"add is not allowed with epilogue: gelu",
    "adamw_odd_width": r"adamw: .*odd last extent",
    "grad_dtype_hp": r"grad_dtype \w+: the wgrad of",
    "main_grad_dtype": r"grad_dtype \w+ with main_grad",
    "gemm_hp_mixed": r"operands have different dtypes",
    "open": r"error: ",   # a class whose rejections are not predicted (mlp): any file:line:col error
    "gemm_block128_both": r"block128x128",
    "tile_width8": r"multiple of 8",
    "row_width": r"multiple of [24]",
    "row_too_long": r"longer than the row kernel holds",
    "gemm_hp_out_dtype": r"has no fp(16|32)? ?\w* ?output|no \w+ output|has only an? (\w+ or )?fp32 output",
    "dglu_width": r"multiple of (2|4|8|16|32|64|128)\b",
    "gemm_e5m2_out": r"in e5m2 from two e4m3 operands",
}


# ---------------------------------------------------------------- the space

def recipe_formats(recipe):
    return FORMATS if recipe in FP8_RECIPES else [None]


def quantized(recipe):
    return recipe != "none"


def norm_configs():
    for norm, resid, zcg in itertools.product(["rmsnorm", "layernorm"], ["none", "res", "res_out"], [False, True]):
        for din in HP:
            for dg in HP:
                for db in (HP if norm == "layernorm" else [None]):
                    for stats in [False, True]:   # the rsigma (and mu) a training forward saves
                        yield dict(op="norm_quantize", norm=norm, resid=resid, zcg=zcg, din=din, dg=dg, db=db,
                                   stats=stats)


def glu_configs():
    for act in ACTS:
        for din in HP:
            yield dict(op="glu_amax", act=act, din=din)


def dglu_configs():
    for act in ACTS:
        for din in HP:
            for dg in HP:
                for dbias in [False, True]:   # the bias gradient of h (a bias before the activation), fused
                    yield dict(op="dglu", act=act, din=din, dg=dg, dbias=dbias)


def dnorm_configs():
    for norm, zcg, dres in itertools.product(["rmsnorm", "layernorm"], [False, True], [False, True]):
        for din in HP:
            for dg in HP:
                for dw in HP:
                    for drd in (HP if dres else [None]):   # grad_residual's dtype: grad's or another
                        yield dict(op="dnorm", norm=norm, zcg=zcg, dres=dres, din=din, dg=dg, dw=dw, drd=drd)


def dbias_configs():
    for din in HP:
        yield dict(op="dbias", din=din)


def tile_configs(op):
    for role in ["activation", "gradient"]:
        for din in HP:
            # a gradient's cast with the bias gradient of its input after it (fused into the cast's
            # kernel where cast_transpose.cu's staged path takes the copies)
            for dbias in ([False, True] if role == "gradient" else [False]):
                yield dict(op=op, role=role, din=din, dbias=dbias)


def gemm_configs():
    for gpass in ["fprop", "dgrad", "wgrad"]:
        for din in HP:
            for bias in ([None] + HP if gpass != "wgrad" else [None]):
                for acc in [False, True]:
                    for dout in ["bf16", "fp16", "fp32", "fp8"]:
                        # cuBLASLt's GELU epilogue (fprop only); fast accumulation the other way from the pass's
                        # default (fprop fast, dgrad/wgrad split)
                        for gelu in ([False, True] if gpass == "fprop" else [False]):
                            for fa_flip in [False, True]:
                                for add in [False, True]:   # a tensor of the output's shape added (cuBLASLt's C)
                                    yield dict(op="gemm_cast", gpass=gpass, din=din, bias=bias, acc=acc, dout=dout,
                                               gelu=gelu, fa_flip=fa_flip, add=add)


def gemm_glu_configs():
    for act in ACTS:
        for din in HP:
            for dh in HP:
                yield dict(op="gemm_glu", act=act, din=din, dh=dh)


def gemm_dglu_configs():
    """A dgrad GEMM writing d_act, then dglu reading it (the generated GEMM's dglu epilogue where it applies)."""
    for act in ACTS:
        for din in HP:
            for dh in HP:
                for dg in HP:
                    for dbias in [False, True]:
                        yield dict(op="gemm_dglu", act=act, din=din, dh=dh, dg=dg, dbias=dbias)


def adamw_configs():
    """A training layer y = x w^T (backward: true) with AdamW: the derived dgrad and wgrad, the weight's gradient in
    its grad_dtype (fp32 when not given), read by the update (fused with the weight's cast where it is quantized);
    or, with main_grad, accumulated into the weight's FP32 main gradient."""
    for din in HP:
        for dw in HP:   # the weight's dtype: mixed with x's where both are quantized
            for gd in [None] + HP:
                for smix in [False, True]:   # the weight's copy in the other per-tensor scaling (delayed x current)
                    for mg in [False, True]:
                        yield dict(op="adamw", din=din, dw=dw, gd=gd, smix=smix, mg=mg)


def mlp_configs():
    """A whole MLP training layer: norm -> up GEMM (bias or not) -> GLU -> down GEMM, backward: true (every
    derived op: ct, dgrad/wgrad, dglu with its dbias, dnorm with the residual stream's gradient), AdamW or not. Its rejections are not predicted
    (the "open" class): the CPU half passes a file:line:col rejection for any reason, the GPU half skips it."""
    for norm in ["rmsnorm", "layernorm"]:
        for act in ACTS:
            for bias in [False, True]:
                for din in HP:
                    for dh in HP:
                        for optim in [False, True]:
                            for resid in [False, True]:   # the norm adds a residual stream (residual_out an output)
                                for rank3 in [False, True]:  # activations [2, tokens, hidden]: M = 2 x tokens
                                    yield dict(op="mlp", norm=norm, act=act, bias=bias, din=din, dh=dh, optim=optim,
                                               resid=resid, rank3=rank3)


def fanout_configs():
    """A training layer whose normalized input is read by several GEMMs (Q, K, V apart: the dgrads sum through
    gemm_cast add) and whose output projection adds the block input back (add: x), or not; or (readers 1) whose
    input x is read by a GEMM and by a later norm (with a residual or not: dnorm's part and the dgrad summed).
    Rejections: "open"."""
    for norm in ["rmsnorm", "layernorm"]:
        for din in HP:
            for readers in [1, 2, 3]:
                for add in [False, True]:   # readers 1: add is the norm's residual
                    yield dict(op="fanout", norm=norm, din=din, readers=readers, add=add)


def op_configs():
    """Every (op config, recipe, format, layout/precision) combination: the space without widths/tokens/targets."""
    out = []
    bases = list(norm_configs()) + list(glu_configs()) + list(tile_configs("cast_transpose")) + \
        list(tile_configs("quantize")) + list(gemm_configs()) + list(gemm_glu_configs()) + list(dglu_configs()) + \
        list(gemm_dglu_configs()) + \
        list(dnorm_configs()) + list(dbias_configs()) + list(adamw_configs()) + list(mlp_configs()) + \
        list(fanout_configs())
    for base in bases:
        for recipe in (["none"] if base["op"] in BACKWARD_UNQUANTIZED else RECIPES):
            if base.get("smix") and recipe not in ("delayed", "current"):
                continue   # the other per-tensor scaling exists only for those two
            for fmt in recipe_formats(recipe):
                if base["op"] in ("mlp", "fanout") and fmt == "e5m2":
                    continue   # e5m2 activations and weights have no GEMM (gemm_e5m2_both): every such layer is rejected
                if base["op"] in ("gemm_cast", "adamw", "mlp", "fanout"):
                    layouts = [None]          # the pass decides which copies the operands need
                    precs = [None]
                elif quantized(recipe):
                    layouts = list(LAYOUTS)
                    precs = [None]
                else:                         # unquantized output: its dtype instead of a layout
                    layouts = [None]
                    precs = [None] + HP
                # the scale rounding: the recipe's default, or the other one (pow2: false under the block
                # recipes, whose default is true; pow2: true under current scaling)
                sopts = [None, "flip"] if recipe in POW2_RECIPES else [None]
                # delayed scaling's amax history: the default (1024, max, margin 0), a short one (16, max), or
                # 4 with amax_algo most_recent and margin 1
                if recipe == "delayed":
                    sopts = [None, "h16", "mr1"]
                for lay in layouts:
                    for prec in precs:
                        for sopt in sopts:
                            for ov in gemm_overrides(base, recipe, fmt):
                                c = dict(base)
                                c.update(recipe=recipe, fmt=fmt, layout=lay, prec=prec, sopt=sopt)
                                if ov:
                                    c["ov"] = ov
                                out.append(c)
    return out


def gemm_overrides(base, recipe, fmt):
    """The GEMM_OVERRIDES a gemm_cast config takes under recipe/fmt (None: the recipe's own formats and scaling):
    a2d under block128x128; b5 under delayed/current (format e4m3 or hybrid: all-e5m2 has no GEMM anyway); the
    output's format only for an fp8 output under delayed (elsewhere the override has no effect)."""
    if base["op"] != "gemm_cast":
        return [None]
    if recipe == "block128x128":
        return [None, "a2d"]
    if recipe not in ("delayed", "current") or fmt == "e5m2":
        return [None]
    if base["dout"] == "fp8" and recipe == "delayed":
        return [None] + [ov for ov in GEMM_OVERRIDES if ov != "a2d"]
    return [None, "b5"]


class Space:
    """The full matrix: op configs x width classes x tokens x token modes x targets, indexable."""

    def __init__(self):
        self.configs = op_configs()
        self.classes = list(WIDTHS)
        self.targets = list(TARGETS)
        self.size = len(self.configs) * len(self.classes) * len(TOKENS) * len(TOKEN_MODES) * len(self.targets)

    def case(self, ci, wclass, tokens, target, fix=False, off=False):
        c = dict(self.configs[ci])
        c.update(wclass=wclass, tokens=tokens, target=target, ci=ci)
        if fix:
            c["fix"] = True
        if off:
            c["off"] = True
        pick_widths(c)
        pick_gemm_gen(c)
        return c

    def all_cases(self):
        for ci in range(len(self.configs)):
            for wc in self.classes:
                for t in TOKENS:
                    for tm in TOKEN_MODES:
                        for tg in self.targets:
                            yield self.case(ci, wc, t, tg, tm == "fix", tm == "off")

    def sample(self, n, seed, keep=None, drop_barren=False):
        r"""n cases, stratified: the op x recipe cells in turn (shuffled), a random config in each;
        tokens 8192 in about 1 case of 40, fixed tokens in 1 of 8, rows `tokens - 1` in 1 of 8, targets other than
        sm_90a+sm_100a in 1 of 8.
        keep(case): only cases it accepts count (drawn on until n, or give up).
        drop_barren: a cell that has kept nothing in BARREN_DRAWS draws leaves the rotation (for --filter); a
        cell that kept a case stays (an unlucky round must not end the sample early). (After its first 200 draws
        alone, rare matches were lost: `^gemm\..*\.gg2$` with --gpu drew 0 of 24 cases at seed 2513.)"""
        rng = random.Random(seed)
        cells = {}
        for i, c in enumerate(self.configs):
            cells.setdefault((c["op"], c["recipe"]), []).append(i)
        keys = sorted(cells)
        rng.shuffle(keys)
        seen, out, fertile, misses = set(), [], set(), {}
        tries, cell = 0, 0
        limit = 200 * n + BARREN_DRAWS * len(keys) + 1000  # every cell's barren allowance, then 200 draws a case
        while len(out) < n and tries < limit and keys:
            key = keys[cell % len(keys)]
            cell += 1
            kept = len(out)
            for _ in range(200):   # draw in this cell until a case is kept
                tries += 1
                ci = rng.choice(cells[key])
                wc = rng.choice(self.classes)
                tokens = 8192 if rng.random() < 0.025 else rng.choice(TOKENS[:-1])
                target = "hb" if rng.random() < 0.875 else rng.choice(["sm89", "sm80"])
                u = rng.random()
                fix, off = u < 0.125, 0.125 <= u < 0.25
                ident = (ci, wc, tokens, target, fix, off)
                if ident in seen:
                    continue
                seen.add(ident)
                c = self.case(ci, wc, tokens, target, fix, off)
                if keep is None or keep(c):
                    out.append(c)
                    break
            if len(out) > kept:
                fertile.add(key)
            elif drop_barren and key not in fertile:
                misses[key] = misses.get(key, 0) + 200
                if misses[key] >= BARREN_DRAWS:
                    keys.remove(key)
                    cell -= 1
        return out


BARREN_DRAWS = 1000  # draws a cell gets to keep its first case under --filter


def stable_hash(s):
    h = 2166136261
    for ch in s.encode():
        h = ((h ^ ch) * 16777619) & 0xFFFFFFFF
    return h


def pick_widths(c):
    """The concrete row length(s) of a case from its class (deterministic per case)."""
    table = GEMM_WIDTHS if c["op"] in GEMM_OPS else WIDTHS
    vals = table[c["wclass"]]
    if c["tokens"] == 8192:          # keep the largest runs affordable on the GPU half
        vals = [v for v in vals if v <= 4112] or vals[:1]
    h = stable_hash(repr(sorted((k, str(v)) for k, v in c.items())))
    c["width"] = vals[h % len(vals)]
    c["width2"] = vals[(h // 7 + 1) % len(vals)]   # a GEMM's second extent (N), same class


def gemm_gen_eligible(c):
    """A gemm_cast the generated kernel takes without an epilogue (gen/plan_gemm.c gemm_generated_why_not): fast
    accumulation (fprop's default, or flipped on in dgrad/wgrad), no bias, GELU, accumulate or add, a BF16/FP16
    output. The layer classes (adamw, mlp, fanout) hold such GEMMs among others; gemm_glu/gemm_dglu's epilogue
    kernels are generated anyway."""
    if c["op"] in ("adamw", "mlp", "fanout"):
        return True
    if c["op"] != "gemm_cast":
        return False
    fast = (c["gpass"] == "fprop") != bool(c.get("fa_flip"))
    return fast and not c["bias"] and not c["acc"] and not c.get("gelu") and not c.get("add") and \
        c["dout"] in ("bf16", "fp16")


def pick_gemm_gen(c):
    """gg2 (deterministic per case): 1 in GEMM_GEN_FRACTION per-tensor FP8 GEMM cases the generated kernel can take
    (gemm_gen_eligible) run with TEGEN_GEMM_GEN=2."""
    if c["recipe"] in ("delayed", "current") and gemm_gen_eligible(c):
        h = stable_hash(repr(sorted((k, str(v)) for k, v in c.items())))
        if (h // 49) % GEMM_GEN_FRACTION == 0:
            c["gg2"] = True


def case_name(c):
    parts = [{"cast_transpose": "ct", "gemm_glu": "gglu", "gemm_dglu": "gdglu"}.get(c["op"], c["op"].split("_")[0])]
    if c["op"] == "norm_quantize":
        parts += [c["norm"][:2], c["resid"], "zcg" if c["zcg"] else "g", c["din"], c["dg"], c["db"] or "-"] + \
            (["st"] if c.get("stats") else [])
    elif c["op"] == "glu_amax":
        parts += [c["act"], c["din"]]
    elif c["op"] == "gemm_cast":
        parts += [c["gpass"], c["din"], "b" + (c["bias"] or "-"), "acc" if c["acc"] else "set", c["dout"]] + \
            (["gelu"] if c.get("gelu") else []) + (["fa~"] if c.get("fa_flip") else []) + (["add"] if c.get("add") else [])
    elif c["op"] == "dglu":
        parts += [c["act"], c["din"], c["dg"]] + (["db"] if c.get("dbias") else [])
    elif c["op"] == "gemm_glu":
        parts += [c["act"], c["din"], c["dh"]]
    elif c["op"] == "gemm_dglu":
        parts += [c["act"], c["din"], c["dh"], c["dg"]] + (["db"] if c.get("dbias") else [])
    elif c["op"] == "dnorm":
        parts += [c["norm"][:2], "zcg" if c["zcg"] else "g", ("dres" + (c.get("drd") or "")) if c["dres"] else "-", c["din"],
                  c["dg"], c["dw"]]
    elif c["op"] == "dbias":
        parts += [c["din"]]
    elif c["op"] == "adamw":
        parts += [c["din"], "w" + c.get("dw", c["din"]), "g" + (c["gd"] or "-")] + (["smix"] if c.get("smix") else []) + \
            (["mg"] if c.get("mg") else [])
    elif c["op"] == "fanout":
        parts += [c["norm"][:2], "r%d" % c["readers"] if c["readers"] > 1 else "xg", c["din"]] + \
            (["add" if c["readers"] > 1 else "res"] if c["add"] else [])
    elif c["op"] == "mlp":
        parts += [c["norm"][:2] + ("+res" if c.get("resid") else "") + ("+r3" if c.get("rank3") else ""), c["act"],
                  "bias" if c["bias"] else "-", c["din"], c["dh"], "adamw" if c["optim"] else "-"]
    else:
        parts += [c["role"][:4], c["din"]] + (["db"] if c.get("dbias") else [])
    sopt = {"flip": "~pow2", "h16": "~h16", "mr1": "~mr1"}.get(c.get("sopt"), "")
    parts += [c["recipe"] + sopt, c["fmt"] or "-", c["layout"] or (c["prec"] or "-")]
    parts += ["ov-" + c["ov"]] if c.get("ov") else []
    parts += ["w%d" % c["width"] + ("x%d" % c["width2"] if c["op"] in GEMM_OPS else ""),
              "t%d" % c["tokens"] + ("fix" if c.get("fix") else "off" if c.get("off") else ""),
              c["target"]]
    parts += ["gg2"] if c.get("gg2") else []
    return ".".join(parts)


# ---------------------------------------------------------------- the rules

def quant_dtype(c, role):
    """The FP8 format a tensor of this role gets (None: not FP8)."""
    if c["recipe"] not in FP8_RECIPES:
        return None
    if c["fmt"] == "hybrid":
        return "e5m2" if role == "gradient" else "e4m3"
    return c["fmt"]


def expected_rejections(c):
    """The deliberate rejection classes `tegen check` should report (any one of them), or []."""
    if c["op"] == "gemm_glu":   # the GEMM's rules (K = width) and the GLU's (C = width2, reading h)
        g = dict(c, op="gemm_cast", gpass="fprop", bias=None, acc=False, dout=c["dh"], layout=None)
        u = dict(c, op="glu_amax", din=c["dh"], width=c["width2"],
                 recipe="block1x128" if c["recipe"] == "block128x128" else c["recipe"])
        return expected_rejections(g) + expected_rejections(u)
    if c["op"] == "gemm_dglu":  # the dgrad's rules (out [T, C]: its K = C = width2, N = width) and the dglu's
        g = dict(c, op="gemm_cast", gpass="dgrad", bias=None, acc=False, dout=c["dg"], layout=None,
                 width=c["width2"], width2=c["width"])
        u = dict(c, op="dglu", din=c["dh"], dg=c["dg"], width=c["width2"],
                 recipe="block1x128" if c["recipe"] == "block128x128" else c["recipe"])
        return expected_rejections(g) + expected_rejections(u)
    if c["op"] in ("mlp", "fanout"):
        return ["open"]
    if c["op"] == "adamw":     # the forward GEMM's rules, then the derived dgrad's and wgrad's (K = width, N = width2)
        g = dict(c, op="gemm_cast", bias=None, acc=False, gelu=False, fa_flip=False, layout=None)
        out = expected_rejections(dict(g, gpass="fprop", dout=c["din"] if not quantized(c["recipe"]) else "bf16"))
        # the dgrad writes x's gradient in x's dtype; an fp16 x under MXFP8/NVFP4 (emulated as BF16) in fp32
        out += expected_rejections(dict(g, gpass="dgrad", dout="fp32" if bf16_gemm(c["recipe"]) and c["din"] == "fp16"
                                        else c["din"]))
        # the wgrad's output dtype rule is reported at the weight's grad_dtype (gen/derive.c wgrad_dtype)
        out += [e if e != "gemm_hp_out_dtype" else "grad_dtype_hp"
                for e in expected_rejections(dict(g, gpass="wgrad", dout=c["gd"] or "fp32"))]
        dw = c.get("dw", c["din"])
        if c["width"] % 2 and (dw != "fp32" or (c["gd"] or "fp32") != "fp32"):
            out.append("adamw_odd_width")   # adamw.cu moves 16-bit values two at a time (gen/ir.c infer_adamw)
        if not quantized(c["recipe"]) and dw != c["din"]:
            out.append("gemm_hp_mixed")     # high-precision operands share one dtype
        if c.get("mg") and c["gd"] not in (None, "fp32"):
            out.append("main_grad_dtype")   # main_grad accumulates in FP32
        return sorted(set(out))
    q = quantized(c["recipe"])
    op, w = c["op"], c["width"]
    out = []
    if op == "norm_quantize":
        for d in (c["dg"], c["db"]):
            if d is not None and d not in (c["din"], "fp32"):
                out.append("norm_weight_dtype")
    fused = op in ("norm_quantize", "glu_amax")
    cols = LAYOUTS[c["layout"]] if c["layout"] else []
    if fused and q:
        if c["recipe"] == "block128x128":
            out.append("fused_block128x128")
    # a block1x128 copy with a columnwise one: a multiple of 8 (norm_colwise.cu's or the GLU block tile's
    # vectors, or unfused: the row kernel writes FP32, the tile kernel's 8-element column chunks)
    unfused = fused and q and c["recipe"] == "block1x128" and "columnwise" in cols
    if op == "gemm_cast":
        if c["acc"] and c["dout"] == "fp8":
            out.append("gemm_accumulate_fp8")
        if c["acc"] and c.get("gelu"):
            out.append("gemm_accumulate_gelu")
        if c.get("add") and c["dout"] == "fp8":
            out.append("gemm_add_fp8")
        if c.get("add") and c["acc"]:
            out.append("gemm_add_accumulate")
        if c.get("add") and c.get("gelu"):
            out.append("gemm_add_gelu")
        if c["dout"] == "fp8" and c["recipe"] != "delayed":
            out.append("gemm_fp8_out_not_delayed")
        # cuBLASLt's high-precision GEMMs (MXFP8/NVFP4 run as BF16 where emulated):
        # bf16 -> bf16/fp32, fp16 -> fp16/fp32, fp32 -> fp32
        hin = c["din"] if not q else "bf16" if bf16_gemm(c["recipe"]) else None
        # ... and an fp16 output of MXFP8/NVFP4 operands through an FP32 buffer, unless accumulate or add reads it
        via_fp32 = q and hin == "bf16" and c["dout"] == "fp16" and not c.get("acc") and not c.get("add")
        if hin and c["dout"] not in ("fp32", "fp8", hin) and not via_fp32:
            out.append("gemm_hp_out_dtype")
        da, db = gemm_operand_dtypes(c)
        if q and da == "e5m2" and db == "e5m2":
            out.append("gemm_e5m2_both")
        # cuBLASLt has no e4m3 x e4m3 -> e5m2 (gen/ir.c infer_gemm)
        if c["dout"] == "fp8" and gemm_fp8_out_dtype(c) == "e5m2" and "e5m2" not in (da, db):
            out.append("gemm_e5m2_out")
    # quantized copies: MXFP8 needs the last extent % 32, NVFP4 % 16
    lasts = [w] if op not in ("gemm_cast", "dglu") else (gemm_quantized_lasts(c) if q and op == "gemm_cast" else [])
    if q and c["recipe"] == "mxfp8" and any(x % 32 for x in lasts):
        out.append("mxfp8_width")
    if q and c["recipe"].startswith("nvfp4") and any(x % 16 for x in lasts):
        out.append("nvfp4_width")
    # kernel row-length rules (gen/ir.c): the tile kernel (quantize, cast_transpose, a GEMM
    # operand's quantize) reads 8-element column chunks; the row kernels (norm_quantize,
    # glu_amax) vectors of 2, or 4 for block1x128 and a columnwise copy (the fused tile path)
    if not c["recipe"].startswith("nvfp4") and op in ("quantize", "cast_transpose", "gemm_cast"):
        if any(x % 8 for x in lasts):
            out.append("tile_width8")
    if fused and w * (4 if c["din"] == "fp32" else 2) * (halves(c) if op == "glu_amax" else 1) > 1024 * 448:
        out.append("row_too_long")   # the row kernel keeps a row in registers
    if unfused:
        if w % 8:
            out.append("tile_width8")
    elif fused:
        if w % 2:
            out.append("row_width")
        elif w % 4 and q and (c["recipe"] == "block1x128" or
                              (c["recipe"] in ("delayed", "current", "mxfp8") and "columnwise" in cols)):
            out.append("row_width")
    if op == "dglu":
        out += dglu_rejections(c, w, cols)
    if (op == "dnorm" or ((op == "dbias" or c.get("dbias")) and c["din"] != "fp32")) and w % 2:
        out.append("row_width")
    if c["target"] != "hb" and (q or (op == "gemm_cast" and c["dout"] == "fp8")):
        if c["target"] == "sm80":
            out.append("fp8_below_sm89")
        if op == "gemm_cast" and c["recipe"] in ("block1x128", "block128x128"):
            out.append("block_gemm_below_sm90")
    return out


def dglu_rejections(c, w, cols):
    """gen/ir.c's dglu rules (C = w, d_h [.., 2C], or [.., C] without a gate partner: halves): quantize_out's block
    widths on 2C, then
    check_backward_shape's on C: 2; 128 with block1x128 (with a columnwise copy: 128 takes the block tile path
    where 2C % 256 == 0 and no dbias is fused, other widths run unfused: 4); 8 on the staged path (a per-tensor or
    MXFP8 columnwise copy from 2-byte h and d_act, no dbias; 32 with MXFP8), else 16 on the tile path (a fused
    dbias, a columnwise MXFP8 copy, or a per-tensor one without the rowwise copy or of a row 2C not a multiple
    of 16); 32 with MXFP8."""
    r, out = c["recipe"], []
    q = quantized(r)
    dbias = bool(c.get("dbias"))
    hv = halves(c)   # d_h [.., hv * C]
    if q and r == "mxfp8" and (hv * w) % 32:
        out.append("mxfp8_width")
    if q and r.startswith("nvfp4") and (hv * w) % 16:
        out.append("nvfp4_width")
    if q and r == "block128x128":
        out.append("fused_block128x128")
    # FP32 d_h, then the tile kernel casts (op_writes_hp): both 1x128 copies off the block tile path
    unfused = q and r == "block1x128" and "columnwise" in cols and not (w % 128 == 0 and not dbias)
    tile = dbias or (q and "columnwise" in cols and (r == "mxfp8" or (r in ("delayed", "current") and
                                                                     ((hv * w) % 16 or "rowwise" not in cols))))
    staged = tile and not dbias and "columnwise" in cols and r in ("delayed", "current", "mxfp8") and \
        c["din"] != "fp32" and c["dg"] != "fp32"  # dglu_staged_kind
    if unfused and not tile:
        need = 8 // hv   # the tile kernel's 8-element chunks of d_h [.., hv * C]
    elif q and r == "block1x128" and not unfused:
        need = 128
    elif staged:
        need = 32 if r == "mxfp8" else 8
    elif tile:
        need = 32 if r == "mxfp8" else 16   # its narrowest step (t128v4r32: 16 columns; MXFP8's blocks 32)
    else:
        need = 32 if q and r == "mxfp8" else 2
    if w % need:
        out.append("dglu_width")
    return out


def gemm_b_role(c):
    return "weight" if c["gpass"] != "wgrad" else "activation"


def gemm_operand_dtypes(c):
    """The FP8 formats of a gemm_cast case's operands a and b (None: not FP8), with its overrides (b5)."""
    da = quant_dtype(c, "gradient" if c["gpass"] != "fprop" else "activation")
    db = "e5m2" if "b5" in (c.get("ov") or "") else quant_dtype(c, gemm_b_role(c))
    return da, db


def ov_out_format(c):
    """The FP8 output format a gemm_cast case's override sets (o5: e5m2, o4: e4m3), else None."""
    ov = c.get("ov") or ""
    return "e5m2" if "o5" in ov else "e4m3" if "o4" in ov else None


def gemm_fp8_out_dtype(c):
    """The format of a gemm_cast case's FP8 output (role activation in fprop, else gradient; o5/o4 override it)."""
    return ov_out_format(c) or quant_dtype(c, "activation" if c["gpass"] == "fprop" else "gradient")


def token_args(c):
    """The --tokens a run or plan of case c takes: none for a fixed-token layer (cli_run_tokens refuses it)."""
    return [] if c.get("fix") else ["--tokens", str(c["tokens"])]


def gemm_quantized_lasts(c):
    """Last extents of the tensors a quantized GEMM case quantizes: fprop x [T,K], w [N,K];
    dgrad dy [T,N], w [N,K]; wgrad dy [T,N], x [T,K] (K = width, N = width2)."""
    k, n = c["width"], c["width2"]
    return {"fprop": [k, k], "dgrad": [n, k], "wgrad": [n, k]}[c["gpass"]]


# ---------------------------------------------------------------- spec text

def flow(d):
    items = []
    for k, v in d.items():
        if v is None:
            continue
        if isinstance(v, bool):
            v = "true" if v else "false"
        elif isinstance(v, list):
            v = "[" + ", ".join(v) + "]"
        items.append("%s: %s" % (k, v))
    return "{" + ", ".join(items) + "}"


def recipe_map(c):
    r = c["recipe"]
    if r == "none":
        return None
    if r.startswith("nvfp4"):
        m = {"scaling": "nvfp4"}
        opt = r[len("nvfp4_"):] if r != "nvfp4" else None
        if opt:
            m["nvfp4_" + opt] = True
        return m
    # a GEMM's block128x128 row: 1x128 activations, the weight (b) overridden to 128x128
    m = {"scaling": "block1x128" if r == "block128x128" and c["op"] in GEMM_OPS else r}
    m["format"] = c["fmt"]
    if c.get("sopt") == "flip":
        m["pow2"] = r == "current"
    elif c.get("sopt") == "h16":
        m.update(history=16, amax_algo="max")
    elif c.get("sopt") == "mr1":
        m.update(history=4, amax_algo="most_recent", margin=1)
    return m


def bf16_gemm(recipe):
    """MXFP8 and NVFP4 operands: a BF16 GEMM where emulated, bf16 or fp32 out (fp16 through an FP32 buffer)."""
    return recipe == "mxfp8" or recipe.startswith("nvfp4")


def halves(c):
    """2 for a gated activation (h [.., 2C]), 1 for silu, gelu, ... (h [.., C])."""
    return 1 if c.get("act") in UNGATED else 2


def h_ext(c, dim):
    """h's (or the up-projection weight's) extent for activation width dim."""
    return dim if halves(c) == 1 else "2*" + dim


def act_args(c):
    """The GLU's act (and for clamped_swiglu~al its alpha and limit) as op arguments."""
    if c["act"] == "clamped_swiglu~al":
        return {"act": "clamped_swiglu", "alpha": 1.25, "limit": 2.5}
    return {"act": c["act"]}


def gemm_operands(c, ops, overrides, a, b, b_layout):
    """A chain's GEMM operands: a (rowwise) and b (b_layout) quantized to a_q and b_q when the recipe quantizes
    (b, the weight, 128x128 under block128x128), else a and b themselves."""
    if not quantized(c["recipe"]):
        return a, b
    ops.append(("quantize", {"in": a, "out": a + "_q", "layout": ["rowwise"]}))
    ops.append(("quantize", {"in": b, "out": b + "_q", "layout": [b_layout]}))
    if c["recipe"] == "block128x128":
        overrides.append((b + "_q", {"scaling": "block128x128"}))
    return a + "_q", b + "_q"


def spec_text(c):
    """One small layer for case c."""
    L = ["# tegen conformance case %s (tests/conformance/gen.py)" % case_name(c), "layer: conf"]
    w, w2, op = c["width"], c["width2"], c["op"]
    tensors, ops, overrides = [], [], []
    lay = LAYOUTS[c["layout"]] if c["layout"] else None
    common = dict(layout=lay, precision=c["prec"])
    tok = c["tokens"] if c.get("fix") else "dynamic"   # a fixed token count: no dynamic dim in the layer
    if op == "norm_quantize":
        dims = {"tokens": tok, "hidden": w}
        tensors.append(("x", {"shape": ["tokens", "hidden"], "dtype": c["din"]}))
        tensors.append(("gamma", {"shape": ["hidden"], "dtype": c["dg"], "role": "weight"}))
        args = {"in": "x", "gamma": "gamma"}
        if c["db"]:
            tensors.append(("beta", {"shape": ["hidden"], "dtype": c["db"], "role": "weight"}))
            args["beta"] = "beta"
        if c["resid"] != "none":
            tensors.append(("res", {"shape": ["tokens", "hidden"], "dtype": c["din"]}))
            args["residual"] = "res"
            if c["resid"] == "res_out":
                args["residual_out"] = "xr"
        if c.get("stats"):
            args["rsigma"] = "rs"
            if c["norm"] == "layernorm":
                args["mu"] = "mu"
        args.update(out="y", norm=c["norm"] if c["norm"] != "rmsnorm" else None,
                    zero_centered_gamma=True if c["zcg"] else None, **common)
        ops.append(("norm_quantize", args))
    elif op == "glu_amax":
        dims = {"tokens": tok, "ffn": w}
        tensors.append(("h", {"shape": ["tokens", h_ext(c, "ffn")], "dtype": c["din"]}))
        ops.append(("glu_amax", dict({"in": "h", "out": "y"}, **act_args(c), **common)))
    elif op in ("cast_transpose", "quantize"):
        dims = {"tokens": tok, "hidden": w}
        tensors.append(("x", {"shape": ["tokens", "hidden"], "dtype": c["din"], "role": c["role"]}))
        ops.append((op, dict({"in": "x", "out": "y"}, **common)))
        if c.get("dbias"):
            ops.append(("dbias", {"in": "x", "out": "db"}))
    elif op == "gemm_glu":
        dims = {"tokens": tok, "k": w, "ffn": w2}
        tensors.append(("x", {"shape": ["tokens", "k"], "dtype": c["din"]}))
        tensors.append(("w", {"shape": [h_ext(c, "ffn"), "k"], "dtype": c["din"], "role": "weight"}))
        a_op, b_op = gemm_operands(c, ops, overrides, "x", "w", "rowwise")
        ops.append(("gemm_cast", {"a": a_op, "b": b_op, "out": "h", "dtype": c["dh"]}))
        ops.append(("glu_amax", dict({"in": "h", "out": "y"}, **act_args(c), **common)))
    elif op == "gemm_dglu":
        dims = {"tokens": tok, "k": w, "ffn": w2}
        tensors.append(("dy", {"shape": ["tokens", "k"], "dtype": c["din"], "role": "gradient"}))
        tensors.append(("w", {"shape": ["k", "ffn"], "dtype": c["din"], "role": "weight"}))
        tensors.append(("h", {"shape": ["tokens", h_ext(c, "ffn")], "dtype": c["dh"]}))
        a_op, b_op = gemm_operands(c, ops, overrides, "dy", "w", "columnwise")
        ops.append(("gemm_cast", {"a": a_op, "b": b_op, "out": "da", "dtype": c["dg"], "pass": "dgrad"}))
        ops.append(("dglu", dict({"in": "h", "grad": "da", "out": "y", **act_args(c),
                                  "dbias": "dbh" if c.get("dbias") else None}, **common)))
    elif op == "dglu":
        dims = {"tokens": tok, "ffn": w}
        tensors.append(("h", {"shape": ["tokens", h_ext(c, "ffn")], "dtype": c["din"]}))
        tensors.append(("da", {"shape": ["tokens", "ffn"], "dtype": c["dg"], "role": "gradient"}))
        ops.append(("dglu", dict({"in": "h", "grad": "da", "out": "y", **act_args(c),
                                  "dbias": "dbh" if c.get("dbias") else None}, **common)))
    elif op == "dnorm":
        dims = {"tokens": tok, "hidden": w}
        tensors.append(("x", {"shape": ["tokens", "hidden"], "dtype": c["din"]}))
        tensors.append(("dy", {"shape": ["tokens", "hidden"], "dtype": c["dg"], "role": "gradient"}))
        tensors.append(("gamma", {"shape": ["hidden"], "dtype": c["dw"], "role": "weight"}))
        tensors.append(("rs", {"shape": ["tokens", "1"], "dtype": "fp32"}))
        args = {"in": "x", "grad": "dy", "gamma": "gamma", "rsigma": "rs"}
        if c["norm"] == "layernorm":
            tensors.append(("mu", {"shape": ["tokens", "1"], "dtype": "fp32"}))
            args.update(mu="mu", norm="layernorm", d_beta="dbeta")
        if c["dres"]:
            tensors.append(("dr", {"shape": ["tokens", "hidden"], "dtype": c.get("drd") or c["dg"], "role": "gradient"}))
            args["grad_residual"] = "dr"
        args.update(out="y", d_gamma="dgamma", zero_centered_gamma=True if c["zcg"] else None, precision=c["prec"])
        ops.append(("dnorm", args))
    elif op == "dbias":
        dims = {"tokens": tok, "hidden": w}
        tensors.append(("dy", {"shape": ["tokens", "hidden"], "dtype": c["din"], "role": "gradient"}))
        ops.append(("dbias", {"in": "dy", "out": "y"}))
    elif op == "mlp":
        q = quantized(c["recipe"])
        dims = {"tokens": tok, "hidden": w, "ffn": w2}
        xs = ["2", "tokens", "hidden"] if c.get("rank3") else ["tokens", "hidden"]
        tensors.append(("x", {"shape": xs, "dtype": c["din"]}))
        if c.get("resid"):
            tensors.append(("r", {"shape": xs, "dtype": c["din"]}))
        tensors.append(("gamma", {"shape": ["hidden"], "dtype": c["din"], "role": "weight"}))
        if c["norm"] == "layernorm":
            tensors.append(("beta", {"shape": ["hidden"], "dtype": c["din"], "role": "weight"}))
        tensors.append(("w_up", {"shape": [h_ext(c, "ffn"), "hidden"], "dtype": c["din"], "role": "weight"}))
        if c["bias"]:
            tensors.append(("b_up", {"shape": [h_ext(c, "ffn")], "dtype": c["dh"], "role": "weight"}))
        tensors.append(("w_down", {"shape": ["hidden", "ffn"], "dtype": c["din"], "role": "weight"}))
        hp = None if q else c["din"]   # unquantized: the norm's and the GLU's outputs in the GEMMs' dtype
        ops.append(("norm_quantize", {"in": "x", "residual": "r" if c.get("resid") else None,
                                      "residual_out": "s" if c.get("resid") else None,
                                      "gamma": "gamma", "beta": "beta" if c["norm"] == "layernorm" else None,
                                      "out": "xn", "norm": c["norm"] if c["norm"] != "rmsnorm" else None,
                                      "precision": hp}))
        up, down = "w_up", "w_down"
        if q:
            up, down = "w_up_q", "w_down_q"
            ops.append(("quantize", {"in": "w_up", "out": up}))
            ops.append(("quantize", {"in": "w_down", "out": down}))
            if c["recipe"] == "block128x128":
                overrides += [(up, {"scaling": "block128x128"}), (down, {"scaling": "block128x128"})]
        ops.append(("gemm_cast", {"a": "xn", "b": up, "bias": "b_up" if c["bias"] else None, "out": "h", "dtype": c["dh"]}))
        ops.append(("glu_amax", {"in": "h", "out": "act", **act_args(c), "precision": hp}))
        ops.append(("gemm_cast", {"a": "act", "b": down, "out": "y", "dtype": c["din"] if not q else "bf16"}))
    elif op == "fanout":
        q = quantized(c["recipe"])
        xg = c["readers"] == 1   # x read by a GEMM and a later norm (add: the norm's residual r)
        dims = {"tokens": tok, "hidden": w, ("n" if xg else "kv"): w2}
        hp = None if q else c["din"]
        tensors.append(("x", {"shape": ["tokens", "hidden"], "dtype": c["din"]}))
        if xg and c["add"]:
            tensors.append(("r", {"shape": ["tokens", "hidden"], "dtype": c["din"]}))
        tensors.append(("gamma", {"shape": ["hidden"], "dtype": c["din"], "role": "weight"}))
        if c["norm"] == "layernorm":
            tensors.append(("beta", {"shape": ["hidden"], "dtype": c["din"], "role": "weight"}))
        projs = [] if xg else ["q", "k", "v"] if c["readers"] == 3 else ["q", "v"]
        shapes = {"w1": ["n", "hidden"], "w2": ["n", "hidden"]} if xg else \
            dict({"w_" + pn: ["hidden" if pn == "q" else "kv", "hidden"] for pn in projs}, w_o=["hidden", "kv"])
        for wname, shape in shapes.items():
            tensors.append((wname, {"shape": shape, "dtype": c["din"], "role": "weight"}))
        norm = ("norm_quantize", {"in": "x", "residual": "r" if xg and c["add"] else None, "gamma": "gamma",
                                  "beta": "beta" if c["norm"] == "layernorm" else None, "out": "xn",
                                  "norm": c["norm"] if c["norm"] != "rmsnorm" else None, "precision": hp})
        wn = {n: n + "_q" if q else n for n in shapes}
        if q and xg:
            ops.append(("quantize", {"in": "x", "out": "x_q"}))
        if not xg:
            ops.append(norm)
        for n in (shapes if q else []):
            ops.append(("quantize", {"in": n, "out": wn[n]}))
            if c["recipe"] == "block128x128":
                overrides.append((wn[n], {"scaling": "block128x128"}))
        out_dt = c["din"] if not q else "bf16"
        if xg:
            ops.append(("gemm_cast", {"a": "x_q" if q else "x", "b": wn["w1"], "out": "y1", "dtype": out_dt}))
            ops.append(norm)
            ops.append(("gemm_cast", {"a": "xn", "b": wn["w2"], "out": "y2", "dtype": out_dt}))
        else:
            for pn in projs:
                ops.append(("gemm_cast", {"a": "xn", "b": wn["w_" + pn], "out": pn, "dtype": out_dt}))
            if q:
                ops.append(("quantize", {"in": "v", "out": "v_q"}))
            ops.append(("gemm_cast", {"a": "v_q" if q else "v", "b": wn["w_o"], "add": "x" if c["add"] else None, "out": "o",
                                      "dtype": c["din"] if c["add"] else out_dt}))   # an added x sets its dtype
    elif op == "adamw":
        dims = {"tokens": tok, "k": w, "n": w2}
        tensors.append(("x", {"shape": ["tokens", "k"], "dtype": c["din"]}))
        tensors.append(("w", {"shape": ["n", "k"], "dtype": c.get("dw", c["din"]), "role": "weight", "grad_dtype": c["gd"],
                              "main_grad": True if c.get("mg") else None}))
        a_op, b_op = "x", "w"
        if quantized(c["recipe"]):   # the copies the backward reads are the derivation's to add
            a_op, b_op = "x_q", "w_q"
            ops.append(("quantize", {"in": "x", "out": a_op}))
            ops.append(("quantize", {"in": "w", "out": b_op}))
            if c["recipe"] == "block128x128":
                overrides.append((b_op, {"scaling": "block128x128"}))
            if c.get("smix") and c["recipe"] in ("delayed", "current"):
                overrides.append((b_op, {"scaling": "current" if c["recipe"] == "delayed" else "delayed"}))
        ops.append(("gemm_cast", {"a": a_op, "b": b_op, "out": "y",
                                  "dtype": c["din"] if not quantized(c["recipe"]) else "bf16"}))
    else:
        dims = {"tokens": tok, "k": w, "n": w2}
        g = c["gpass"]
        a_name, a_shape, a_role = ("x", ["tokens", "k"], "activation") if g == "fprop" else ("dy", ["tokens", "n"], "gradient")
        b_name, b_shape, b_role = ("w", ["n", "k"], "weight") if g != "wgrad" else ("x", ["tokens", "k"], "activation")
        out_shape = {"fprop": ["tokens", "n"], "dgrad": ["tokens", "k"], "wgrad": ["n", "k"]}[g]
        tensors.append((a_name, {"shape": a_shape, "dtype": c["din"], "role": a_role}))
        tensors.append((b_name, {"shape": b_shape, "dtype": c["din"], "role": b_role}))
        a_op, b_op = a_name, b_name
        if quantized(c["recipe"]):
            a_copy = ["columnwise"] if g == "wgrad" else ["rowwise"]
            b_copy = ["rowwise"] if g == "fprop" else ["columnwise"]
            a_op, b_op = a_name + "_q", b_name + "_q"
            ops.append(("quantize", {"in": a_name, "out": a_op, "layout": a_copy}))
            ops.append(("quantize", {"in": b_name, "out": b_op, "layout": b_copy}))
            ov = c.get("ov") or ""
            if c["recipe"] == "block128x128":   # 128x128 blocks on b (the weight, X in wgrad), or on a (a2d)
                overrides.append((a_op if ov == "a2d" else b_op, {"scaling": "block128x128"}))
            if "b5" in ov:
                overrides.append((b_op, {"format": "e5m2"}))
            if ov_out_format(c):   # the FP8 output's format
                overrides.append(("y", {"format": ov_out_format(c)}))
        if c["bias"]:
            tensors.append(("bias", {"shape": [out_shape[-1]], "dtype": c["bias"], "role": "weight"}))
        if c["acc"]:   # the accumulator is declared (an FP8 one is rejected: accumulate needs a high-precision out)
            tensors.append(("y", {"shape": out_shape, "dtype": c["dout"] if c["dout"] != "fp8" else "e4m3"}))
        if c.get("add"):   # the added tensor in the output's dtype (bf16 where the output is FP8: rejected anyway)
            tensors.append(("r", {"shape": out_shape, "dtype": c["dout"] if c["dout"] != "fp8" else "bf16"}))
        ops.append(("gemm_cast", {"a": a_op, "b": b_op, "bias": "bias" if c["bias"] else None, "add": "r" if c.get("add") else None,
                                  "out": "y",
                                  "dtype": c["dout"], "pass": g if g != "fprop" else None,
                                  "accumulate": True if c["acc"] else None,
                                  "epilogue": "gelu" if c.get("gelu") else None,
                                  "fast_accum": (g != "fprop") if c.get("fa_flip") else None}))
    L.append("dims: " + flow(dims))
    rm = recipe_map(c)
    if rm:
        L.append("recipe: " + flow(rm))
    if overrides:
        L.append("overrides:")
        L += ["  %s: %s" % (n, flow(m)) for n, m in overrides]
    if c.get("off"):  # rows tokens - 1: T - 1 rows at --tokens T (none at 1)
        tensors = [(n, dict(m, shape=[e if e != "tokens" else "tokens - 1" for e in m["shape"]])) for n, m in tensors]
    L.append("tensors:")
    L += ["  %s: %s" % (n, flow(m)) for n, m in tensors]
    L.append("ops:")
    L += ["  - %s: %s" % (k, flow(m)) for k, m in ops]
    if op == "fanout":
        L.append("outputs: [%s]" % ("y1, y2" if c["readers"] == 1 else "q, k, o" if c["readers"] == 3 else "q, o"))
        L.append("backward: true")
    if op in ("adamw", "mlp"):
        L.append("outputs: [y, s]" if c.get("resid") else "outputs: [y]")
        L.append("backward: true")
        if op == "adamw" or c.get("optim"):
            L.append("optimizer: {kind: adamw, lr: 1e-2, betas: [0.9, 0.95], eps: 1e-8, weight_decay: 0.1}")
    L.append("targets: [%s]" % ", ".join(TARGETS[c["target"]]))
    return "\n".join(L) + "\n"


# ---------------------------------------------------------------- running

LOC_ERROR = re.compile(r":\d+:\d+: error: ")


def sh(cmd, timeout, env=None):
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return 124, "", "timed out after %ds" % timeout
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def first_line(text, pat=None, more=0):
    """The first line of text matching pat (any line without pat), with the `more` lines after it joined by ' | '."""
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    if pat:
        for i, l in enumerate(lines):
            if re.search(pat, l):
                return " | ".join(lines[i:i + 1 + more])[:600]
    return lines[0][:300] if lines else "(no output)"


def load_spill_rules(path):
    """The known spills a --spills-expected file allows: (kernel-name regex after its kN_ index, arch, max bytes)."""
    rules = []
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].split()
            if line:
                rules.append((re.compile(line[0] + "$"), line[1], int(line[2])))
    return rules


def spills_of(tegen, path, arch, cache):
    """The (kernel, arch, bytes) that spill in a build (from the cache: the -q build made them)."""
    rc, out, err = sh([tegen, "build", path, "--arch", arch, "--cache-dir", cache], 300)
    found = []
    for l in out.splitlines():
        f = l.split()
        if len(f) >= 5 and re.match(r"k\d+_", f[0]) and f[4].isdigit() and int(f[4]) > 0:
            found.append((f[0], f[1], int(f[4])))
    return found


def run_cpu(tegen, c, path, cache, spill_rules=None):
    """The CPU half of one case: (status, why). With spill_rules, a kernel that spills registers to local memory
    must match a rule (its name after the kN_ index, its arch, at most the rule's bytes)."""
    name, expect = c["name"], c["expect"]
    rc, out, err = sh([tegen, "check", path], 60)
    if expect == "open":   # not predicted: a located rejection for any reason passes; an accepted case must build
        if rc == 1 and LOC_ERROR.search(err):
            return "ok", "rejected: %s" % first_line(err, "error:")
        expect = ""
    if expect:
        if rc == 0:
            return "FAIL", "tegen check accepted it; expected rejection %s" % expect
        if rc != 1 or not LOC_ERROR.search(err):
            return "FAIL", "check exited %d without a file:line:col error (expected %s): %s" % (rc, expect, first_line(err))
        if not any(re.search(REJECT[e], err) for e in c["expects"]):
            return "FAIL", "rejected, but not for %s: %s" % (expect, first_line(err, "error:"))
        return "ok", "rejected: %s" % expect
    if rc != 0:
        return "FAIL", "check rejected it (exit %d): %s" % (rc, first_line(err, "error:"))
    rc, out, err = sh([tegen, "plan", path] + token_args(c) + ["--cache-dir", cache], 60)
    if rc != 0:
        return "FAIL", "plan failed (exit %d): %s" % (rc, first_line(err, "error"))
    arch = ",".join(TARGETS[c["target"]])
    rc, out, err = sh([tegen, "build", path, "--arch", arch, "--cache-dir", cache, "-q"], 300)
    if rc != 0:
        return "FAIL", "build --arch %s failed (exit %d): %s" % (arch, rc, first_line(err, "error"))
    if "SPILLS" not in out + err:
        return "ok", ""
    spills = spills_of(tegen, path, arch, cache)
    text = ", ".join("%s %s %d bytes" % x for x in spills)
    if spill_rules is not None:
        new = [x for x in spills if not any(r.match(re.sub(r"^k\d+_", "", x[0])) and a == x[1] and x[2] <= b
                                            for r, a, b in spill_rules)]
        if new:
            return "FAIL", "register spills not in the expected list: " + ", ".join("%s %s %d bytes" % x for x in new)
    return "ok", "spills: " + text


def runnable(c):
    """A case the GPU half runs: check accepts it, and it targets sm_90a+sm_100a."""
    return expected_rejections(c) in ([], ["open"]) and c["target"] == "hb"


def races_only_in_cublaslt(text):
    """Whether every hazard racecheck reports lies in cuBLASLt's kernels (nvjet_*): their TMA / mbarrier-synchronized
    shared memory reads to racecheck as hazards that are not races (H100, thirty-fifth session: 3 of 32 cases, every
    report in nvjet_sm90_*). Filtering them out by --kernel-name instead made the sanitizer fail ("failed to handle a
    hardware exception") on cases that pass without it."""
    kernels = re.findall(r"(?:Race reported between|and) \w+ access at (\S+?)\+0x", text)
    return bool(kernels) and all(k.startswith("nvjet_") for k in kernels) and "Internal Sanitizer Error" not in text


def run_gpu(tegen, c, path, cache, sanitizer=None):
    """The GPU half of one case: tegen run --check (under compute-sanitizer --tool SANITIZER)."""
    if c["expect"] == "open":   # not predicted: check decides
        rc, out, err = sh([tegen, "check", path], 60)
        if rc != 0:
            return "skip", "rejected by check: %s" % first_line(err, "error:")
    elif c["expect"]:
        return "skip", "rejected by check (%s)" % c["expect"]
    if c["target"] != "hb":
        return "skip", "targets %s (the GPU half runs sm_90a+sm_100a cases)" % c["target"]
    env = dict(os.environ, TEGEN_CACHE_DIR=cache)
    if c.get("gg2"):   # the generated FP8 GEMM (templates/gemm_fp8.cu) wherever it can take the call
        env["TEGEN_GEMM_GEN"] = "2"
    cmd = [tegen, "run", path] + token_args(c) + ["--check", "--iters", "2"]
    if sanitizer:
        cmd = ["compute-sanitizer", "--tool", sanitizer, "--error-exitcode", "99"] + cmd
    rc, out, err = sh(cmd, 300, env)
    if rc == 0:
        return "ok", ""
    if rc == 1 and "needs a GPU" in err:
        return "skip", "no GPU (%s)" % first_line(err)
    if rc == 99 and sanitizer == "racecheck" and races_only_in_cublaslt(out + err):
        return "ok", ""
    if rc == 99:
        return "FAIL", "compute-sanitizer %s: %s" % (sanitizer, first_line(out + err, r"=+ (Invalid|Race|Error|Program hit|Uninitialized|Unused|Barrier|Divergent|Host API)", 3))
    if "CHECK FAILED" in out:
        why = first_line(out, r"FAIL|fail|mismatch|wrong|error")
    elif err.strip():   # the run stopped before its verdict: say what stderr said
        why = first_line(err, "error|tegen") + " (stdout ends: %s)" % (out.strip().splitlines() or ["-"])[-1][:200]
    else:
        why = "no verdict; stdout ends: %s" % (out.strip().splitlines() or ["(no output)"])[-1][:300]
    return "FAIL", "run --check exit %d: %s" % (rc, why)


def summary(cases):
    cells = {}
    for c in cases:
        r = cells.setdefault((c["op"], c["recipe"]), [0, 0, 0])
        r[{"ok": 0, "FAIL": 1, "skip": 2}[c["status"]]] += 1
    w = 13
    print("matrix (passed/failed; skipped not shown)")
    print("%-15s" % "op" + "".join("%*s" % (w, r) for r in RECIPES))
    for op in OPS:
        row = "%-15s" % op
        for r in RECIPES:
            p, f, _ = cells.get((op, r), [0, 0, 0])
            row += "%*s" % (w, "%d/%d" % (p, f) if p or f else "-")
        print(row)
    n = [sum(1 for c in cases if c["status"] == s) for s in ("ok", "FAIL", "skip")]
    print("conformance: %d cases: %d passed, %d failed, %d skipped" % (len(cases), n[0], n[1], n[2]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED, help="sampling seed (default %d)" % DEFAULT_SEED)
    ap.add_argument("--sample", type=int, metavar="N", help="a fixed-seed, op x recipe stratified sample of N cases")
    ap.add_argument("--all", action="store_true", help="the full matrix (prints its size)")
    ap.add_argument("--out", metavar="DIR", help="write the specs and cases.tsv to DIR (kept)")
    ap.add_argument("--cpu", action="store_true", help="run the CPU half: check, plan, NVRTC build")
    ap.add_argument("--gpu", action="store_true", help="run the GPU half: tegen run --check")
    ap.add_argument("--jobs", type=int, default=0, help="parallel cases (default: CPU cores, 4 with --gpu)")
    ap.add_argument("--filter", metavar="REGEX", help="only cases whose name matches (a sample draws on until N match)")
    ap.add_argument("--time-limit", type=float, metavar="S", help="start no case after S seconds (the rest: skip)")
    ap.add_argument("--sanitizer", choices=["memcheck", "racecheck", "initcheck", "synccheck"],
                    help="--gpu: run each case under compute-sanitizer --tool X")
    ap.add_argument("--tegen", default=os.path.join(ROOT, "build", "tegen"))
    ap.add_argument("--cache-dir", help="kernel cache for build/run (default: a fresh one under the output dir)")
    ap.add_argument("--spills-expected", metavar="FILE",
                    help="--cpu: a kernel that spills must match a line 'NAME-REGEX ARCH MAX-BYTES' of FILE")
    a = ap.parse_args()
    if a.cpu and a.gpu:
        ap.error("--cpu and --gpu are separate runs")

    space = Space()
    if a.all:
        print("full matrix: %d cases (%d op configs x %d row-length classes x %d token counts x %d token modes x "
              "%d target sets)" % (space.size, len(space.configs), len(space.classes), len(TOKENS), len(TOKEN_MODES),
                                   len(space.targets)))
        if not (a.out or a.cpu or a.gpu):
            return 0
        cases = list(space.all_cases())
    elif a.sample:
        # the GPU half draws only the cases it runs (check accepts them, sm_90a+sm_100a targets)
        def keep(c):
            return (not a.gpu or runnable(c)) and (not a.filter or re.search(a.filter, case_name(c)))
        cases = space.sample(a.sample, a.seed, keep, drop_barren=bool(a.filter))
    else:
        ap.error("give --sample N or --all")
    if a.filter and a.all:
        cases = [c for c in cases if re.search(a.filter, case_name(c))]
    for c in cases:
        c["name"] = case_name(c)
        c["expects"] = expected_rejections(c)
        c["expect"] = "|".join(c["expects"])

    out = a.out or tempfile.mkdtemp(prefix="tegen-conf-")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "cases.tsv"), "w") as f:
        cols = ["name", "op", "recipe", "fmt", "layout", "prec", "ov", "wclass", "width", "width2", "tokens", "fix",
                "off", "target", "gg2", "expect"]
        f.write("\t".join(cols + ["spec"]) + "\n")
        for i, c in enumerate(cases):
            c["path"] = os.path.join(out, "case%05d.yaml" % i)
            with open(c["path"], "w") as s:
                s.write(spec_text(c))
            f.write("\t".join(str(c.get(k) if c.get(k) is not None else "-") for k in cols) +
                    "\t" + os.path.basename(c["path"]) + "\n")
    if not (a.cpu or a.gpu):
        print("wrote %d specs and cases.tsv to %s" % (len(cases), out))
        return 0
    if not os.access(a.tegen, os.X_OK):
        print("FAIL conformance: %s is missing (run ninja)" % a.tegen)
        return 1
    cache = a.cache_dir or os.path.join(out, "cache")
    spill_rules = load_spill_rules(a.spills_expected) if a.spills_expected else None
    jobs = a.jobs or (4 if a.gpu else (os.cpu_count() or 2))
    t0 = time.time()

    def run(c):
        if a.time_limit and time.time() - t0 > a.time_limit:
            return "skip", "time limit (%g s) reached" % a.time_limit
        if a.gpu:
            return run_gpu(a.tegen, c, c["path"], cache, a.sanitizer)
        return run_cpu(a.tegen, c, c["path"], cache, spill_rules)
    # cases run in parallel (the GPU half: several processes share the GPU; NVRTC dominates)
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as ex:
        futs = [ex.submit(run, c) for c in cases]
        for c, fu in zip(cases, futs):
            c["status"], why = fu.result()
            print("%s %s%s" % (c["status"], c["name"], (": " + why) if why and c["status"] != "ok" else
                               (" (%s)" % why if why else "")), flush=True)
    summary(cases)
    print("conformance: %s half, %.0f s, %d jobs, specs %s" % ("GPU" if a.gpu else "CPU", time.time() - t0, jobs,
                                                                 "in " + out if a.out else "removed (give --out DIR)"))
    if not a.out:
        shutil.rmtree(out, ignore_errors=True)
    return 1 if any(c["status"] == "FAIL" for c in cases) else 0


if __name__ == "__main__":
    sys.exit(main())
