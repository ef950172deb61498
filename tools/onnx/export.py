#!/usr/bin/env python3
"""Export a decoder-only checkpoint of the playground as an ONNX decode step with a KV cache.

    python tools/onnx/export.py MODEL.safetensors OUT.onnx [--tokens OUT.json]
        [--prompt 1,11,18,...] [--new-tokens 64]

The graph is one step of decoding that takes any number of new tokens, so the same graph
serves the prefill (the whole prompt at once, with an empty cache) and every later step
(one token):

    inputs   input_ids      int64 [1, T]          the new tokens
             positions      int64 [T]             their positions (P, P+1, ..., P+T-1)
             past_key_i     float [1, H, P, D]    per layer i: the cached keys ...
             past_value_i   float [1, H, P, D]    ... and values (P = 0 at the prefill)
    outputs  logits         float [1, T, V]
             present_key_i  float [1, H, P+T, D]  the cache after the step
             present_value_i

T and P are dynamic axes. The model is the reference implementation of the project's
PyTorch fixtures (tests/fixtures/make_fixtures.py: `Model`, `RefLayer`, `RefAttention`,
`sinusoid_table`), which equals the engine to about 1e-6: the step reuses its layers' norm
placement, residuals, feed-forward network and head, and only the self-attention is written
again here, to read and extend the cache. Query i sees the keys at positions ≤ its own.
Covered: decoder-only models with the scaled dot-product score and no, sinusoidal or learned
positions (pre-LN, post-LN or no norm, ReLU or GELU, tied or not); anything else is refused.

The check (printed, and a non-zero exit when it fails): a greedy generation of
`--new-tokens` tokens from `--prompt` (default: the engine benchmark's prompt, `<bos>` then
15 fixed characters) run twice, by onnxruntime (Python) through the exported graph with
its cache, and by the reference model's full forward pass over the whole sequence at every
step (float64, no cache); the logits of every step must agree within 1e-4 and the tokens
must be the same. Generation stops at `<eos>` as the engine's does. `--tokens` writes the
prompt, the generated tokens and the check's figures as JSON.

Needs torch, safetensors, onnx, onnxscript and onnxruntime (a venv outside the repository:
`pip install torch safetensors onnx onnxscript onnxruntime`).
"""

import argparse
import copy
import json
import logging
import math
import os
import sys
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "fixtures"))

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from safetensors import safe_open  # noqa: E402

import make_fixtures as ref  # noqa: E402  (sets float64 as torch's default dtype)

TOLERANCE = 1e-4


def bench_prompt(bos):
    """crate/src/bench/mod.rs `prompt`: `<bos>` then 4 + (i·7 mod 36) for i = 1..15."""
    return [bos] + [4 + (i * 7) % 36 for i in range(1, 16)]


def load(path):
    """The reference model (float64) holding the checkpoint's weights, and its tokenizer."""
    with safe_open(path, framework="pt") as f:
        meta = f.metadata() or {}
        if "config" not in meta or "tokenizer" not in meta:
            sys.exit(f"{path}: no `config` / `tokenizer` metadata (not a playground checkpoint)")
        c = json.loads(meta["config"])
        tok = json.loads(meta["tokenizer"])
        sd = {k: f.get_tensor(k).to(torch.float64) for k in f.keys()}
    problems = []
    if c.get("arch") != "decoder_only":
        problems.append(f"arch {c.get('arch')!r} (only decoder_only)")
    if c.get("score") != "scaled_dot":
        problems.append(f"score {c.get('score')!r} (only scaled_dot)")
    if c.get("pos_encoding") not in ("none", "sinusoidal", "learned"):
        problems.append(f"pos_encoding {c.get('pos_encoding')!r} (only none, sinusoidal, learned)")
    if c.get("norm") not in ("pre_ln", "post_ln", "none"):
        problems.append(f"norm {c.get('norm')!r} (only pre_ln, post_ln, none)")
    if problems:
        sys.exit(f"{path}: cannot export: " + "; ".join(problems))
    model = ref.Model(c, "ref", head_bias="lm_head.bias" in sd)
    missing, unexpected = model.load_state_dict(sd, strict=False)
    if missing or unexpected:
        sys.exit(f"{path}: tensors missing {missing}, unexpected {unexpected}")
    return model.eval(), tok


class Step(torch.nn.Module):
    """One decode step over the reference model's layers (see the module's docstring)."""

    def __init__(self, model):
        super().__init__()
        self.m = model
        c = model.c
        self.C, self.H = c["d_model"], c["n_heads"]
        self.D = self.C // self.H
        self.n_layers = len(model.decoder.layers)
        if c["pos_encoding"] == "sinusoidal":
            self.register_buffer("pos_table", ref.sinusoid_table(c["max_len"], self.C).float())
        else:
            self.pos_table = None

    def attend(self, attn, x, positions, past_k, past_v, present):
        B, T, C = x.shape
        H, D = self.H, self.D
        W, b = attn.in_proj_weight, attn.in_proj_bias
        Wq, Wk, Wv = W[:C], W[C:2 * C], W[2 * C:]
        bq, bk, bv = b[:C], b[C:2 * C], b[2 * C:]
        if self.m.c["share_qk"]:
            Wk, bk = Wq, bq
        q = F.linear(x, Wq, bq).view(B, T, H, D).transpose(1, 2)
        k = torch.cat([past_k, F.linear(x, Wk, bk).view(B, T, H, D).transpose(1, 2)], dim=2)
        v = torch.cat([past_v, F.linear(x, Wv, bv).view(B, T, H, D).transpose(1, 2)], dim=2)
        present += [k, v]
        s = (q @ k.transpose(-1, -2)) / math.sqrt(D)  # [B, H, T, P+T]
        keys = torch.arange(k.shape[2], device=x.device)
        s = s.masked_fill((keys[None, :] > positions[:, None])[None, None], float("-inf"))
        z = F.softmax(s, dim=-1) @ v
        return attn.out_proj(z.transpose(1, 2).reshape(B, T, C))

    def forward(self, input_ids, positions, *past):
        m, c = self.m, self.m.c
        x = m.embed(input_ids) * (math.sqrt(self.C) if c["scale_embeddings"] else 1.0)
        if self.pos_table is not None:
            x = x + F.embedding(positions, self.pos_table)[None]
        elif c["pos_encoding"] == "learned":
            x = x + m.pos_embed(positions)[None]
        present = []
        for i, layer in enumerate(m.decoder.layers):
            pk, pv = past[2 * i], past[2 * i + 1]
            x = layer.sub(x, "norm1", lambda h: self.attend(layer.self_attn, h, positions, pk, pv, present))
            x = layer.sub(x, "norm2", layer.ffn)
        if hasattr(m.decoder, "norm"):
            x = m.decoder.norm(x)
        return (m.head(x), *present)


def names(n_layers):
    past = [f"past_{kv}_{i}" for i in range(n_layers) for kv in ("key", "value")]
    present = [f"present_{kv}_{i}" for i in range(n_layers) for kv in ("key", "value")]
    return ["input_ids", "positions"] + past, ["logits"] + present


def export(model, out):
    # A float32 copy: the float64 model stays the reference of the check.
    step = Step(copy.deepcopy(model)).float().eval()
    L, H, D = step.n_layers, step.H, step.D
    T, P = 2, 3  # example sizes; both axes are dynamic
    ids = torch.zeros(1, T, dtype=torch.int64)
    pos = torch.arange(P, P + T, dtype=torch.int64)
    past = tuple(torch.zeros(1, H, P, D, dtype=torch.float32) for _ in range(2 * L))
    inputs, outputs = names(L)
    t_dim = torch.export.Dim("new_tokens", min=1, max=model.c["max_len"])
    p_dim = torch.export.Dim("past", min=0, max=model.c["max_len"])
    # `*past` is one argument to torch.export: its shapes are one tuple.
    dynamic = ({1: t_dim}, {0: t_dim}, tuple({2: p_dim} for _ in range(2 * L)))
    logging.getLogger("torch.onnx").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", module="torch.onnx")
    with torch.no_grad():
        torch.onnx.export(
            step,
            (ids, pos, *past),
            out,
            input_names=inputs,
            output_names=outputs,
            dynamic_shapes=dynamic,
            external_data=False,
            optimize=True,
            dynamo=True,
            verbose=False,
        )
    return step


def write_null_graph(path, n_layers, heads, d_head, vocab):
    """A graph with the decode step's inputs and outputs (names, types, shapes) and no
    arithmetic: zero logits and present_* = past_* followed by T zero rows. What a run costs
    onnxruntime apart from the model's arithmetic (the call, the copies in and out)."""
    import onnx
    from onnx import TensorProto, helper

    inputs, outputs = names(n_layers)
    f32, i64 = TensorProto.FLOAT, TensorProto.INT64
    graph_inputs = [helper.make_tensor_value_info("input_ids", i64, [1, "new_tokens"]),
                    helper.make_tensor_value_info("positions", i64, ["new_tokens"])]
    graph_inputs += [helper.make_tensor_value_info(n, f32, [1, heads, "past", d_head]) for n in inputs[2:]]
    graph_outputs = [helper.make_tensor_value_info("logits", f32, [1, "new_tokens", vocab])]
    graph_outputs += [helper.make_tensor_value_info(n, f32, [1, heads, "total", d_head]) for n in outputs[1:]]
    const = lambda name, vals, dims, t=i64: helper.make_node(  # noqa: E731
        "Constant", [], [name], value=helper.make_tensor(name, t, dims, vals))
    nodes = [
        helper.make_node("Shape", ["positions"], ["t"]),  # [T]
        const("one", [1], [1]),
        const("v", [vocab], [1]),
        const("hd", [heads], [1]),
        const("dd", [d_head], [1]),
        helper.make_node("Concat", ["one", "t", "v"], ["logits_shape"], axis=0),
        helper.make_node("Concat", ["one", "hd", "t", "dd"], ["kv_shape"], axis=0),
        helper.make_node("ConstantOfShape", ["logits_shape"], ["logits"],
                         value=helper.make_tensor("z", f32, [1], [0.0])),
        helper.make_node("ConstantOfShape", ["kv_shape"], ["new_rows"],
                         value=helper.make_tensor("z", f32, [1], [0.0])),
    ]
    for past, present in zip(inputs[2:], outputs[1:]):
        nodes.append(helper.make_node("Concat", [past, "new_rows"], [present], axis=2))
    graph = helper.make_graph(nodes, "null_step", graph_inputs, graph_outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    model.ir_version = 10
    onnx.checker.check_model(model)
    onnx.save(model, path)


def reference_generation(model, prompt, new_tokens, eos):
    """Greedy decoding by the reference model's full forward pass at every step (float64)."""
    seq, logits = list(prompt), []
    with torch.no_grad():
        for _ in range(new_tokens):
            out, _ = model(torch.tensor([seq]))
            row = out[0, -1].to(torch.float32).to(torch.float64)
            logits.append(row.numpy())
            tok = int(torch.argmax(row))  # the first of equal maxima, as the engine
            seq.append(tok)
            if tok == eos:
                break
    return seq[len(prompt):], logits


def onnx_generation(path, prompt, new_tokens, eos, n_layers, heads, d_head):
    """Greedy decoding by onnxruntime through the graph: the prompt at once, then one token
    per step, the cache carried from each step's outputs to the next step's inputs."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
    inputs, outputs = names(n_layers)
    past = [np.zeros((1, heads, 0, d_head), np.float32) for _ in range(2 * n_layers)]
    ids, start, toks, logits = list(prompt), 0, [], []
    t0 = time.perf_counter()
    for _ in range(new_tokens):
        feed = {"input_ids": np.array([ids], np.int64),
                "positions": np.arange(start, start + len(ids), dtype=np.int64)}
        feed.update(zip(inputs[2:], past))
        res = sess.run(outputs, feed)
        row = res[0][0, -1]
        logits.append(row.astype(np.float64))
        start += len(ids)
        past = res[1:]
        tok = int(np.argmax(row))
        toks.append(tok)
        ids = [tok]
        if tok == eos:
            break
    return toks, logits, time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("checkpoint")
    ap.add_argument("out")
    ap.add_argument("--prompt", help="comma-separated token ids (default: the bench's prompt)")
    ap.add_argument("--new-tokens", type=int, default=64)
    ap.add_argument("--tokens", help="write the check's prompt, tokens and figures here (JSON)")
    ap.add_argument("--null-graph", help="also write a graph with the same inputs and outputs and "
                    "no arithmetic here (what a run costs onnxruntime apart from the model)")
    a = ap.parse_args()

    model, tok = load(a.checkpoint)
    c = model.c
    prompt = [int(x) for x in a.prompt.split(",")] if a.prompt else bench_prompt(tok["bos"])
    if len(prompt) + a.new_tokens > c["max_len"]:
        sys.exit(f"prompt ({len(prompt)}) + new tokens ({a.new_tokens}) > max_len ({c['max_len']})")
    if any(not 0 <= t < c["vocab_size"] for t in prompt):
        sys.exit(f"a prompt token is outside the vocabulary (0..{c['vocab_size'] - 1})")

    step = export(model, a.out)
    H, D, L = step.H, step.D, step.n_layers
    ref_toks, ref_logits = reference_generation(model, prompt, a.new_tokens, tok["eos"])
    onnx_toks, onnx_logits, secs = onnx_generation(a.out, prompt, a.new_tokens, tok["eos"], L, H, D)
    n = min(len(ref_logits), len(onnx_logits))
    err = max(float(np.abs(ref_logits[i] - onnx_logits[i]).max()) for i in range(n))
    same = ref_toks == onnx_toks
    size = os.path.getsize(a.out)
    print(f"wrote {a.out} ({size} bytes): decoder-only, C {c['d_model']}, H {H}, L {L}, "
          f"F {c['d_ff']}, V {c['vocab_size']}, {c['norm']}, {c['activation']}, {c['pos_encoding']}; "
          f"inputs input_ids [1, T], positions [T], past_key/value_i [1, {H}, P, {D}]")
    print(f"check: greedy, {len(prompt)}-token prompt, {len(onnx_toks)} tokens; onnxruntime "
          f"{__import__('onnxruntime').__version__} (1 thread, KV cache) against the PyTorch full "
          f"forward (float64, no cache): max |logit difference| {err:.2e} over {n} steps "
          f"(tolerance {TOLERANCE:g}); same tokens: {'yes' if same else 'no'}; "
          f"onnxruntime {1e3 * secs / max(1, len(onnx_toks)):.3f} ms a token in Python")
    print(f"tokens: {' '.join(map(str, onnx_toks))}")
    if a.null_graph:
        write_null_graph(a.null_graph, L, H, D, c["vocab_size"])
        print(f"wrote {a.null_graph}: the same inputs and outputs, no arithmetic")
    if a.tokens:
        with open(a.tokens, "w") as f:
            json.dump({"prompt": prompt, "tokens": onnx_toks, "reference_tokens": ref_toks,
                       "max_abs_logit_diff": err, "tolerance": TOLERANCE, "same_tokens": same,
                       "eos": tok["eos"], "n_layers": L, "n_heads": H, "d_head": D}, f)
    if not same or not err <= TOLERANCE:
        sys.exit("the ONNX graph does not reproduce the PyTorch model")


if __name__ == "__main__":
    main()
