#!/usr/bin/env python3
"""Export a nanoGPT checkpoint (`ckpt.pt`, as nanoGPT's train.py saves it) for the playground.

    python tools/nanogpt/export.py out-shakespeare-char/ckpt.pt OUT --meta data/shakespeare_char/meta.pkl
    python tools/nanogpt/export.py out-gpt2/ckpt.pt OUT --tokenizer-from GPT2_FOLDER

nanoGPT's model is GPT-2's (pre-LN blocks, a final LayerNorm, learned positions, a head tied
to the token embeddings) with three differences the export handles:

* its layers are `nn.Linear`, which store their weight (out, in): Hugging Face's GPT-2
  (`Conv1D`) stores (in, out), so each weight is written transposed;
* it uses the exact GELU (`nn.GELU()`), not GPT-2's tanh approximation: the folder says
  `activation_function: "gelu"`;
* with `bias=False` its LayerNorms and Linears have no bias: zeros are written, which
  computes the same.

A model trained on GPT-2's tokens becomes a Hugging Face GPT-2 folder (`config.json`,
`model.safetensors`, and the tokenizer files copied from `--tokenizer-from`, a GPT-2 folder
holding `tokenizer.json` or `vocab.json` + `merges.txt`). nanoGPT pads its vocabulary to
50,304 rows for speed; the rows past the tokenizer's 50,257 are never a token, and are left
out (the logits of the real tokens are unchanged; their softmax no longer shares mass with
those 47 rows).

A character-level model (`--meta meta.pkl`, nanoGPT's `stoi` / `itos`) becomes one of the
playground's own checkpoints, `OUT/model.safetensors`, with a character tokenizer: the
model's characters keep their ids, and the four special tokens the format asks for
(`<pad>`, `<bos>`, `<eos>`, `<unk>`) come after them, with zero embeddings and an LM-head
bias of -1e9, so the model never writes one and the distribution over its characters is
exactly nanoGPT's. nanoGPT starts a generation from a character (often a newline), not from
`<bos>`.

Needs `torch` and `safetensors` (a venv outside the repository).
"""

import argparse
import json
import os
import pickle
import shutil
import sys

import torch
from safetensors.torch import save_file

SPECIALS = ["<pad>", "<bos>", "<eos>", "<unk>"]


def state_and_args(path):
    ckpt = torch.load(path, map_location="cpu", weights_only=False)
    sd = ckpt["model"] if "model" in ckpt else ckpt
    # torch.compile saves its wrapped module's keys under `_orig_mod.`.
    sd = {k.removeprefix("_orig_mod."): v.detach().to(torch.float32) for k, v in sd.items()}
    args = ckpt.get("model_args")
    if args is None:
        sys.exit("the checkpoint has no `model_args` (is it nanoGPT's ckpt.pt?)")
    return sd, args


def weight_or_zeros(sd, name, shape):
    t = sd.get(name)
    return t.clone() if t is not None else torch.zeros(shape)


def layers(sd, args):
    """Every block's tensors in Hugging Face GPT-2's names and layout (`Conv1D`: (in, out))."""
    c = args["n_embd"]
    out = {}
    for i in range(args["n_layer"]):
        p = f"transformer.h.{i}."
        for ln in ("ln_1", "ln_2"):
            out[p + ln + ".weight"] = sd[p + ln + ".weight"].clone()
            out[p + ln + ".bias"] = weight_or_zeros(sd, p + ln + ".bias", (c,))
        for lin, n_out in (("attn.c_attn", 3 * c), ("attn.c_proj", c), ("mlp.c_fc", 4 * c), ("mlp.c_proj", c)):
            w = sd[p + lin + ".weight"]  # nn.Linear: (out, in)
            if w.shape[0] != n_out:
                sys.exit(f"{p + lin}.weight has shape {tuple(w.shape)}, expected ({n_out}, ...)")
            out[p + lin + ".weight"] = w.t().contiguous()
            out[p + lin + ".bias"] = weight_or_zeros(sd, p + lin + ".bias", (n_out,))
    out["transformer.ln_f.weight"] = sd["transformer.ln_f.weight"].clone()
    out["transformer.ln_f.bias"] = weight_or_zeros(sd, "transformer.ln_f.bias", (c,))
    return out


def export_bpe(sd, args, out_dir, tokenizer_from):
    files = {}
    if tokenizer_from:
        for name in ("tokenizer.json", "vocab.json", "merges.txt"):
            src = os.path.join(tokenizer_from, name)
            if os.path.exists(src):
                files[name] = src
        if "tokenizer.json" not in files and not ("vocab.json" in files and "merges.txt" in files):
            sys.exit(f"{tokenizer_from} has neither tokenizer.json nor vocab.json + merges.txt")
    vocab = args["vocab_size"]
    if "tokenizer.json" in files:
        with open(files["tokenizer.json"], encoding="utf-8") as f:
            tj = json.load(f)
        ids = list(tj["model"]["vocab"].values()) + [t["id"] for t in tj.get("added_tokens", [])]
        vocab = max(ids) + 1
    elif "vocab.json" in files:
        with open(files["vocab.json"], encoding="utf-8") as f:
            vocab = max(json.load(f).values()) + 1
    if vocab > args["vocab_size"]:
        sys.exit(f"the tokenizer has {vocab} tokens, the model only {args['vocab_size']} rows")
    t = layers(sd, args)
    t["transformer.wte.weight"] = sd["transformer.wte.weight"][:vocab].clone()
    t["transformer.wpe.weight"] = sd["transformer.wpe.weight"].clone()
    config = {
        "model_type": "gpt2",
        "architectures": ["GPT2LMHeadModel"],
        "n_layer": args["n_layer"],
        "n_head": args["n_head"],
        "n_embd": args["n_embd"],
        "n_inner": None,
        "n_positions": args["block_size"],
        "vocab_size": vocab,
        "activation_function": "gelu",
        "layer_norm_epsilon": 1e-5,
        "tie_word_embeddings": True,
    }
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "config.json"), "w", encoding="utf-8") as f:
        json.dump(config, f, indent=2)
    save_file(t, os.path.join(out_dir, "model.safetensors"))
    for name, src in files.items():
        shutil.copyfile(src, os.path.join(out_dir, name))
    if not files:
        print(f"{out_dir}: copy GPT-2's tokenizer.json (or vocab.json and merges.txt) here", file=sys.stderr)


def export_char(sd, args, out_dir, meta_path):
    with open(meta_path, "rb") as f:
        meta = pickle.load(f)
    itos = meta["itos"]
    chars = [itos[i] for i in range(len(itos))]
    if len(chars) > args["vocab_size"]:
        sys.exit(f"meta.pkl has {len(chars)} characters, the model only {args['vocab_size']} rows")
    clash = [s for s in SPECIALS if s in chars]
    if clash:
        sys.exit(f"meta.pkl already has {clash}")
    v, c, n = len(chars), args["n_embd"], len(SPECIALS)
    wte = sd["transformer.wte.weight"][:v]
    embed = torch.cat([wte, torch.zeros(n, c)])
    bias = torch.cat([torch.zeros(v), torch.full((n,), -1e9)])
    names = {
        "ln_1.weight": "norm1.weight", "ln_1.bias": "norm1.bias",
        "ln_2.weight": "norm2.weight", "ln_2.bias": "norm2.bias",
        "attn.c_attn.weight": "self_attn.in_proj_weight", "attn.c_attn.bias": "self_attn.in_proj_bias",
        "attn.c_proj.weight": "self_attn.out_proj.weight", "attn.c_proj.bias": "self_attn.out_proj.bias",
        "mlp.c_fc.weight": "linear1.weight", "mlp.c_fc.bias": "linear1.bias",
        "mlp.c_proj.weight": "linear2.weight", "mlp.c_proj.bias": "linear2.bias",
    }
    hf = layers(sd, args)
    t = {
        "embed.weight": embed,
        "pos_embed.weight": sd["transformer.wpe.weight"].clone(),
        "decoder.norm.weight": hf["transformer.ln_f.weight"],
        "decoder.norm.bias": hf["transformer.ln_f.bias"],
        "lm_head.weight": embed.clone(),
        "lm_head.bias": bias,
    }
    for i in range(args["n_layer"]):
        for theirs, ours in names.items():
            x = hf[f"transformer.h.{i}.{theirs}"]
            # The core stores (out, in), as nn.Linear does: undo the Conv1D transpose.
            t[f"decoder.layers.{i}.{ours}"] = x.t().contiguous() if x.dim() == 2 else x
    config = {
        "arch": "decoder_only", "vocab_size": v + n, "d_model": c, "n_heads": args["n_head"],
        "d_ff": 4 * c, "n_layers": args["n_layer"], "max_len": args["block_size"],
        "pos_encoding": "learned", "norm": "pre_ln", "final_norm": True, "activation": "gelu",
        "score": "scaled_dot", "share_qk": False, "scale_embeddings": False, "residual": True,
        "dropout": 0.0, "tie_embeddings": False, "num_classes": 0,
    }
    tokenizer = {"kind": "char", "tokens": chars + SPECIALS, "pad": v, "bos": v + 1, "eos": v + 2, "unk": v + 3}
    os.makedirs(out_dir, exist_ok=True)
    save_file(
        {k: x.contiguous() for k, x in t.items()},
        os.path.join(out_dir, "model.safetensors"),
        metadata={"config": json.dumps(config), "tokenizer": json.dumps(tokenizer, ensure_ascii=False)},
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("ckpt", help="nanoGPT's ckpt.pt")
    ap.add_argument("out", help="folder to write")
    ap.add_argument("--meta", help="meta.pkl of a character-level model")
    ap.add_argument("--tokenizer-from", help="a GPT-2 folder to copy the tokenizer files from")
    a = ap.parse_args()
    sd, args = state_and_args(a.ckpt)
    if a.meta:
        export_char(sd, args, a.out, a.meta)
    else:
        export_bpe(sd, args, a.out, a.tokenizer_from)


if __name__ == "__main__":
    main()
