"""Dump a Llama-style block's real MLP activations and gradients as .npy files
for `tegen numerics SPEC --in DIR` (and `tegen run --in DIR`).

For whoever has a checkpoint on disk: a Hugging Face Llama-family model
directory (config.json + safetensors). Runs a forward and backward pass of the
whole model on a piece of text with the language-model loss, and writes for
block --layer the tensors specs/llama3_8b_mlp*.yaml read:

  x.npy       [tokens, hidden]   the MLP's input before its RMSNorm (the residual
                                 stream after attention), BF16
  gamma.npy   [hidden]           post_attention_layernorm.weight, BF16
  w_up.npy    [2*ffn, hidden]    gate_proj.weight then up_proj.weight (tegen's
                                 GLU convention: gate half first), BF16
  w_down.npy  [hidden, ffn]      down_proj.weight, BF16
  d_y.npy     [tokens, hidden]   the loss gradient reaching the MLP's output (the
                                 derived backward's input), BF16

BF16 travels as uint16 views ('<u2'), tegen's .npy convention. Nothing is
downloaded: the model and tokenizer load with local_files_only, and torch and
transformers are imported inside main(), so importing this file needs neither.

Usage:
  python3 bench/dump_activations.py --model /path/to/Meta-Llama-3-8B --layer 16 \\
      --tokens 256 --out acts/ [--text FILE] [--device cuda]
  build/tegen numerics specs/llama3_8b_mlp_train.yaml --in acts/ --tokens 256 \\
      --recipes all --chart acts.svg
"""
import argparse
import os
import sys

SAMPLE_TEXT = (
    "The committee met on a grey morning to review the quarterly figures. Revenue had risen "
    "by eleven percent, driven mostly by the new storage line, while costs in the logistics "
    "division grew faster than planned. After a long discussion about shipping contracts, "
    "fuel prices and the delayed warehouse in the north, the members agreed to postpone the "
    "hiring plan until the spring and to publish a revised forecast at the end of the month. "
)


def bf16_npy(path, t):
    """Save a tensor as BF16 bits in a '<u2' .npy file."""
    import numpy as np
    import torch
    a = t.detach().to(torch.bfloat16).contiguous().cpu().view(torch.int16).numpy().view(np.uint16)
    np.save(path, a)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", required=True, help="local Hugging Face model directory (Llama family)")
    p.add_argument("--layer", type=int, default=0, help="decoder block index (default 0)")
    p.add_argument("--tokens", type=int, default=256, help="sequence length to dump (default 256)")
    p.add_argument("--text", help="a UTF-8 text file to run on (default: a built-in paragraph, repeated)")
    p.add_argument("--out", required=True, help="directory for the .npy files")
    p.add_argument("--device", default=None, help="torch device (default: cuda when available, else cpu)")
    a = p.parse_args(argv)

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    dev = a.device or ("cuda" if torch.cuda.is_available() else "cpu")
    tok = AutoTokenizer.from_pretrained(a.model, local_files_only=True)
    model = AutoModelForCausalLM.from_pretrained(a.model, local_files_only=True, torch_dtype=torch.bfloat16).to(dev)
    model.train(False)
    text = open(a.text, encoding="utf-8").read() if a.text else SAMPLE_TEXT * 64
    ids = tok(text, return_tensors="pt").input_ids[:, : a.tokens].to(dev)
    if ids.shape[1] < a.tokens:
        sys.exit("dump_activations: the text gives only %d tokens; pass a longer --text" % ids.shape[1])

    block = model.model.layers[a.layer]
    mlp, norm = block.mlp, block.post_attention_layernorm
    saved = {}

    def norm_in(_mod, args):  # the residual stream entering the MLP's RMSNorm
        saved["x"] = args[0].detach()[0]

    def mlp_out(_mod, _args, out):  # the gradient reaching the MLP's output
        out.register_hook(lambda g: saved.__setitem__("d_y", g.detach()[0]))

    h1 = norm.register_forward_pre_hook(norm_in)
    h2 = mlp.register_forward_hook(mlp_out)
    loss = model(input_ids=ids, labels=ids).loss
    loss.backward()
    h1.remove()
    h2.remove()

    os.makedirs(a.out, exist_ok=True)
    bf16_npy(os.path.join(a.out, "x.npy"), saved["x"])
    bf16_npy(os.path.join(a.out, "d_y.npy"), saved["d_y"])
    bf16_npy(os.path.join(a.out, "gamma.npy"), norm.weight)
    bf16_npy(os.path.join(a.out, "w_up.npy"), torch.cat([mlp.gate_proj.weight, mlp.up_proj.weight], 0))
    bf16_npy(os.path.join(a.out, "w_down.npy"), mlp.down_proj.weight)
    hid, ffn = mlp.down_proj.weight.shape
    print("wrote x, gamma, w_up, w_down, d_y of block %d (%d tokens, hidden %d, ffn %d, loss %.3f) to %s"
          % (a.layer, a.tokens, hid, ffn, loss.item(), a.out))
    if (hid, ffn) != (4096, 14336):
        print("note: the specs in specs/ are Llama-3 8B (hidden 4096, ffn 14336); edit dims to match")


if __name__ == "__main__":
    main()
