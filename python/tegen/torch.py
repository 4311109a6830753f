"""tegen.torch: a tegen layer as a torch.nn.Module, forward and backward through autograd.

    import tegen.torch
    mlp = tegen.torch.Layer("specs/llama3_8b_mlp_train.yaml").cuda()   # parameters: gamma, w_up, w_down
    y = mlp(x)              # tg_run on torch.cuda.current_stream(); x: [..., hidden] bf16
    y.sum().backward()      # tg_backward: x.grad, mlp.w_up.grad, ... (accumulated by autograd)

The spec's weights (tensors with role: weight) are the module's nn.Parameters, in the spec's dtype;
its activation inputs are forward's arguments (in spec order), its outputs what forward returns.
A spec with `backward: true` gives gradients: d_<input> for the inputs, d_<weight> (FP32 in tegen, or the
weight's grad_dtype; cast to the parameter's dtype) for the weights. The recipe state (amax histories, scales) lives in
tegen and is stepped (tg_step) after each backward, or after each forward run without autograd,
unless auto_step=False (then call .step()).

Rules that follow from tegen keeping the saved activations inside the layer: one forward with
autograd in flight at a time (forward, backward, forward, backward; a second forward before the
backward makes that backward raise), and no activation checkpointing of this module.
CUDA graphs: after one eager call at a token count, the forward or a forward + backward step can be
captured (torch.cuda.graph): tegen allocates nothing and syncs nothing then. torch.compile: the module is a
graph break (torch.compiler.disable); the code around it still compiles.
With a libtegen that predates tg_backward, backward reruns the whole layer (forward + backward in
one tg_run, twice the forward cost) and the forward computes a throwaway backward: correct, slower.
"""
import threading

import torch
from torch import nn

from . import _core

_contexts = {}
_contexts_lock = threading.Lock()


def shared_context(device=None):
    """One tegen Context per CUDA device, shared by the modules of this process."""
    dev = torch.device("cuda", torch.cuda.current_device() if device is None else torch.device(device).index or 0)
    with _contexts_lock:
        ctx = _contexts.get(dev.index)
        if ctx is None:
            with torch.cuda.device(dev):
                ctx = _contexts[dev.index] = _core.Context()
        return ctx


def _torch_dtype(code):
    return getattr(torch, _core.TORCH_OF[code])


def _disable(fn):
    """fn, which torch.compile leaves out of its graphs (a graph break), on torch versions that compile."""
    dis = getattr(getattr(torch, "compiler", None), "disable", None)
    if dis is None:
        dynamo = getattr(torch, "_dynamo", None)
        dis = getattr(dynamo, "disable", None)
    return dis(fn) if dis else fn


def _device_of(context):
    """The torch device of a tegen Context's CUDA context."""
    return torch.device("cuda", context.device or 0)


class Layer(nn.Module):
    """A tegen layer as an nn.Module: spec is a file path, or text= the YAML itself.
    tokens= plans tile shapes for that token count (tg_layer_set_tokens); device= the CUDA device
    (default: the current one); auto_step=False leaves tg_step to the caller (.step())."""

    def __init__(self, spec=None, *, text=None, name=None, tokens=None, device=None, auto_step=True, context=None):
        super().__init__()
        self.context = context or shared_context(device)
        self.device = _device_of(self.context)
        self.tg = self.context.layer(spec, text=text, name=name)
        if tokens:
            self.tg.set_tokens(tokens)
        self.tg.load()
        self.auto_step = auto_step
        infos = self.tg.tensors()
        self.input_infos = [t for t in infos if t.input and not t.weight and not t.gradient]
        self.weight_infos = [t for t in infos if t.input and t.weight]
        self.output_infos = [t for t in infos if t.output and not t.gradient]
        self.output_grad_names = {t.name for t in infos if t.input and t.gradient}
        self.grad_infos = {t.name: t for t in infos if t.output and t.gradient}
        self.has_backward = bool(self.output_grad_names)
        self.phased = getattr(_core.lib(), "tg_backward", None) is not None
        for w in self.weight_infos:
            if None in w.shape:
                raise _core.Error(_core.ERR_ARG, "tegen.torch.Layer", f"weight '{w.name}' has a dynamic extent")
            self.register_parameter(w.name, nn.Parameter(torch.empty(w.shape, dtype=_torch_dtype(w.dtype),
                                                                     device=self.device)))
        self.reset_parameters()
        self._generation = 0
        self._infos = {}    # tokens -> {name: TensorInfo at that many tokens}
        self._scratch = {}  # (name, tokens) -> tensor: throwaway buffers of the pre-phase fallback

    def reset_parameters(self):
        """Rank-1 weights (norm gammas) to 1, the others normal(0, 0.02)."""
        with torch.no_grad():
            for w in self.weight_infos:
                p = getattr(self, w.name)
                if p.dim() == 1:
                    p.fill_(1.0)
                else:
                    p.normal_(0.0, 0.02)

    def extra_repr(self):
        return (f"inputs={[t.name for t in self.input_infos]}, outputs={[t.name for t in self.output_infos]}, "
                f"backward={self.has_backward}, arch={self.context.arch}")

    def step(self, stream=None):
        """tg_step: roll the amax histories and compute the next scales (what auto_step does)."""
        self.tg.step(stream)

    def state(self):
        """The recipe state as a float32 torch tensor sharing tegen's memory (see tegen.h TgStateLayout)."""
        return self.tg.torch_state()

    def forward(self, *inputs):
        if len(inputs) != len(self.input_infos):
            raise TypeError(f"{self.tg_name()}: forward takes {len(self.input_infos)} inputs "
                            f"({', '.join(t.name for t in self.input_infos)}), got {len(inputs)}")
        lead, flat = None, []
        for info, x in zip(self.input_infos, inputs):  # [..., hidden] -> [tokens, hidden]
            rank = len(info.shape)
            if x.dim() > rank and rank >= 1 and info.shape[0] is None:
                lead = lead or tuple(x.shape[:x.dim() - rank + 1])
                x = x.reshape(-1, *x.shape[x.dim() - rank + 1:])
            flat.append(x if x.is_contiguous() else x.contiguous())
        outs = self._run_layer(flat)
        if lead is not None:
            outs = tuple(o.reshape(*lead, *o.shape[1:]) if i.shape and i.shape[0] is None else o
                         for o, i in zip(outs, self.output_infos))
        return outs[0] if len(outs) == 1 else outs

    @_disable
    def _run_layer(self, flat):
        weights = [getattr(self, w.name) for w in self.weight_infos]
        return _LayerFunction.apply(self, len(flat), torch.is_grad_enabled(), *flat, *weights)

    def tg_name(self):
        return f"tegen.torch.Layer({[t.name for t in self.output_infos]})"

    # ---- used by _LayerFunction ----
    def _tokens(self, xs):
        for info, x in zip(self.input_infos, xs):
            for want, got in zip(info.shape, x.shape):
                if want is None:
                    return int(got)
        return 0

    def _shapes(self, tokens):
        infos = self._infos.get(tokens)
        if infos is None:
            infos = self._infos[tokens] = {t.name: t for t in self.tg.tensors(tokens)}
        return infos

    def _scratch_buffer(self, info):
        key = (info.name, info.shape)
        t = self._scratch.get(key)
        if t is None:
            t = self._scratch[key] = torch.zeros(info.shape, dtype=_torch_dtype(info.dtype), device=self.device)
        return t


class _LayerFunction(torch.autograd.Function):
    """forward: bind inputs, weights and fresh outputs, tg_run. backward: bind d_<outputs> and fresh
    gradient buffers, tg_backward; returns d_<inputs> and the weight gradients in the weights' dtype."""

    @staticmethod
    def forward(ctx, mod, ninputs, grad_enabled, *args):
        xs, ws = args[:ninputs], args[ninputs:]
        tokens = mod._tokens(xs)
        infos = mod._shapes(tokens)
        tg = mod.tg
        for info, x in zip(mod.input_infos, xs):
            tg.bind(info.name, x)
        for info, w in zip(mod.weight_infos, ws):  # bound every forward: a torch optimizer updates them in
            tg.bind(info.name, w.detach())          # place, and a (re)bound weight is quantized again by tg_run
        outs = []
        for o in mod.output_infos:
            t = torch.empty(infos[o.name].shape, dtype=_torch_dtype(o.dtype), device=mod.device)
            tg.bind(o.name, t)
            outs.append(t)
        if mod.has_backward and not mod.phased:  # one tg_run does both halves: give the backward scratch
            for name in mod.output_grad_names:
                tg.bind(name, mod._scratch_buffer(infos[name]))
            for name in mod.grad_infos:
                tg.bind(name, mod._scratch_buffer(infos[name]))
        tg.run()
        # grad mode is off inside forward, and needs_input_grad ignores no_grad: the caller's mode comes along
        train = mod.has_backward and grad_enabled and any(ctx.needs_input_grad[3:])
        if train:
            mod._generation += 1
            ctx.generation = mod._generation
            ctx.mod, ctx.ninputs, ctx.tokens = mod, ninputs, tokens
            ctx.save_for_backward(*xs)
        elif mod.auto_step:
            tg.step()
        ctx.train = train
        if not train:
            ctx.mark_non_differentiable(*outs)
        return tuple(outs)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, *grads):
        mod = ctx.mod
        if not ctx.train:
            raise RuntimeError("tegen.torch.Layer: this forward ran without a backward half")
        if ctx.generation != mod._generation:
            raise RuntimeError(f"{mod.tg_name()}: another forward ran after this one and before its backward; "
                               "tegen keeps one set of saved activations per layer (run forward and backward "
                               "in pairs, without activation checkpointing)")
        xs = ctx.saved_tensors
        infos = mod._shapes(ctx.tokens)
        tg = mod.tg
        for info, x in zip(mod.input_infos, xs):  # the backward reads them (dnorm reads x): same buffers
            tg.bind(info.name, x)
        weights = [getattr(mod, w.name) for w in mod.weight_infos]
        for info, w in zip(mod.weight_infos, weights):
            tg.bind(info.name, w.detach())
        for o, g in zip(mod.output_infos, grads):
            name = "d_" + o.name
            if name not in mod.output_grad_names:
                continue
            want = _torch_dtype(o.dtype)
            g = torch.zeros(infos[name].shape, dtype=want, device=mod.device) if g is None else g
            tg.bind(name, g.to(want).contiguous())
        fresh = {}
        for name, info in mod.grad_infos.items():
            fresh[name] = torch.empty(infos[name].shape, dtype=_torch_dtype(info.dtype), device=mod.device)
            tg.bind(name, fresh[name])
        if mod.phased:
            tg.backward()
        else:
            for o in mod.output_infos:  # the rerun writes the outputs again: into scratch, not the user's
                tg.bind(o.name, mod._scratch_buffer(infos[o.name]))
            tg.run()
        if mod.auto_step:
            tg.step()
        dx = [fresh.get("d_" + i.name) for i in mod.input_infos]
        dx = [d.to(x.dtype) if d is not None else None for d, x in zip(dx, xs)]
        dw = [fresh.get("d_" + w.name) for w in mod.weight_infos]
        dw = [d.to(p.dtype) if d is not None else None for d, p in zip(dw, weights)]
        return (None, None, None, *dx, *dw)
