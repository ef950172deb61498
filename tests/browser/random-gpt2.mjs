// A random GPT-2-shaped Hugging Face folder of any size, in memory, for the tests and benches
// of the views at real scale: config.json, model.safetensors (keys without the
// `transformer.` prefix, a tied head) and the byte-level BPE of tests/fixtures/gpt2 as
// vocab.json + merges.txt, its vocabulary padded with tokens no merge reaches up to
// `vocab` entries (the loader asks the tokenizer's size to be config.json's vocab_size).
// Weights are drawn from a seeded generator (normal-ish, std 0.02 as GPT-2 initialises;
// LayerNorm weights 1, biases 0), so two runs make the same bytes.

import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { root, serve } from './harness.mjs';

const BASE = join(root, 'tests/fixtures/gpt2/bare_tied');

/** A small deterministic generator (mulberry32) of values with mean 0 and standard deviation ~`std`. */
function normalish(seed, std) {
  let a = seed >>> 0;
  const u = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  // The sum of four uniforms, centred and scaled (variance 4/12).
  const k = std / Math.sqrt(4 / 12);
  return () => (u() + u() + u() + u() - 2) * k;
}

/**
 * The folder's files as bytes: `{ config, model, vocabJson, merges }`.
 * layers, heads, d (d_model), positions (n_positions), vocab (≥ the fixture's 512).
 */
export function randomGpt2({ layers = 12, heads = 12, d = 96, positions = 1024, vocab = 50257, seed = 1 } = {}) {
  const baseVocab = JSON.parse(readFileSync(join(BASE, 'vocab.json'), 'utf8'));
  const n0 = Object.keys(baseVocab).length;
  if (vocab < n0) throw new Error(`vocab must be at least ${n0}`);
  const v = { ...baseVocab };
  // Unreachable padding tokens, spelled in the byte-level alphabet (Ġ is a leading space).
  for (let i = n0; i < vocab; i++) v[`Ġt${i}`] = i;
  const config = {
    activation_function: 'gelu_new',
    model_type: 'gpt2',
    n_embd: d,
    n_head: heads,
    n_inner: null,
    n_layer: layers,
    n_positions: positions,
    layer_norm_epsilon: 1e-5,
    bos_token_id: 0,
    eos_token_id: 0,
    tie_word_embeddings: true,
    vocab_size: vocab,
  };
  const shapes = [
    ['wte.weight', [vocab, d], 'w'],
    ['wpe.weight', [positions, d], 'w'],
  ];
  for (let l = 0; l < layers; l++) {
    const p = `h.${l}.`;
    shapes.push(
      [`${p}ln_1.weight`, [d], 'one'],
      [`${p}ln_1.bias`, [d], 'zero'],
      [`${p}attn.c_attn.weight`, [d, 3 * d], 'w'],
      [`${p}attn.c_attn.bias`, [3 * d], 'zero'],
      [`${p}attn.c_proj.weight`, [d, d], 'w'],
      [`${p}attn.c_proj.bias`, [d], 'zero'],
      [`${p}ln_2.weight`, [d], 'one'],
      [`${p}ln_2.bias`, [d], 'zero'],
      [`${p}mlp.c_fc.weight`, [d, 4 * d], 'w'],
      [`${p}mlp.c_fc.bias`, [4 * d], 'zero'],
      [`${p}mlp.c_proj.weight`, [4 * d, d], 'w'],
      [`${p}mlp.c_proj.bias`, [d], 'zero'],
    );
  }
  shapes.push(['ln_f.weight', [d], 'one'], ['ln_f.bias', [d], 'zero']);
  const header = { __metadata__: { format: 'pt' } };
  let off = 0;
  for (const [name, shape] of shapes) {
    const n = shape.reduce((a, b) => a * b, 1) * 4;
    header[name] = { dtype: 'F32', shape, data_offsets: [off, off + n] };
    off += n;
  }
  let head = Buffer.from(JSON.stringify(header));
  const pad = (8 - (head.length % 8)) % 8;
  head = Buffer.concat([head, Buffer.alloc(pad, 0x20)]);
  const model = new Uint8Array(8 + head.length + off);
  new DataView(model.buffer).setBigUint64(0, BigInt(head.length), true);
  model.set(head, 8);
  const data = new Float32Array(model.buffer, 8 + head.length, off / 4);
  const rnd = normalish(seed, 0.02);
  let at = 0;
  for (const [, shape, kind] of shapes) {
    const n = shape.reduce((a, b) => a * b, 1);
    if (kind === 'w') for (let i = 0; i < n; i++) data[at + i] = rnd();
    else if (kind === 'one') data.fill(1, at, at + n);
    at += n;
  }
  return {
    config: new Uint8Array(Buffer.from(JSON.stringify(config))),
    model,
    vocabJson: new Uint8Array(Buffer.from(JSON.stringify(v))),
    merges: new Uint8Array(readFileSync(join(BASE, 'merges.txt'))),
  };
}

/** The medium shape of the real-scale test and bench: GPT-2's layers, heads, context and vocabulary, a narrow d_model. */
export const MEDIUM = { layers: 12, heads: 12, d: 96, positions: 1024, vocab: 50257 };

/** The folder's files as base64, to hand to the page. */
export function filesB64(shape) {
  return Object.fromEntries(Object.entries(randomGpt2(shape)).map(([k, v]) => [k, Buffer.from(v).toString('base64')]));
}

/** Load the files as the page's model; resolves with the load's milliseconds. */
export function loadFolder(page, files, text = 'The cat chases the dog.') {
  return page.evaluate(
    async ([files, text]) => {
      const bytes = (b64) => {
        const s = atob(b64);
        const out = new Uint8Array(s.length);
        for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
        return out;
      };
      const el = document.querySelector('transformer-playground');
      const decoded = Object.fromEntries(Object.entries(files).map(([k, v]) => [k, bytes(v)]));
      const t = performance.now();
      await el.store.testOnlyLoadHf(decoded, 'random GPT-2', text);
      return performance.now() - t;
    },
    [files, text],
  );
}

/** Elements in the document, shadow roots included; per view too. */
export function elementCounts(page) {
  return page.evaluate(() => {
    const count = (root) => {
      let n = 0;
      for (const e of root.querySelectorAll('*')) {
        n++;
        if (e.shadowRoot) n += count(e.shadowRoot);
      }
      return n;
    };
    const el = document.querySelector('transformer-playground');
    const per = {};
    for (const v of el.shadowRoot.querySelectorAll('.view[data-view]')) per[v.dataset.view] = count(v);
    return { total: count(document), per };
  });
}


/**
 * Serve the folder's files from a temporary directory at `${url}random-gpt2/<key>` (for a
 * folder too large to hand to the page as one argument: GPT-2 small's 500 MB); resolves
 * with `{ url, keys, close }`.
 */
export async function serveFolder(files) {
  const dir = mkdtempSync(join(tmpdir(), 'tplay-random-gpt2-'));
  mkdirSync(join(dir, 'random-gpt2'));
  for (const [k, v] of Object.entries(files)) writeFileSync(join(dir, 'random-gpt2', k), v);
  const server = await serve(dir, { headers: { 'Access-Control-Allow-Origin': '*' } });
  return {
    url: server.url,
    keys: Object.keys(files),
    close: async () => {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Fetch the served files in the page and load them as its model; resolves with the load's milliseconds (the fetch not counted). */
export function loadRouted(page, base, keys, text = 'The cat chases the dog.') {
  return page.evaluate(
    async ([base, keys, text]) => {
      const files = {};
      for (const k of keys) files[k] = new Uint8Array(await (await fetch(`${base}random-gpt2/${k}`)).arrayBuffer());
      const el = document.querySelector('transformer-playground');
      const t = performance.now();
      await el.store.testOnlyLoadHf(files, 'random GPT-2', text);
      return performance.now() - t;
    },
    [base, keys, text],
  );
}
