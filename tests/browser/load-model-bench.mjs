// "Load a model" at GPT-2 small's scale, in headless Chromium (not part of the test suite):
// a GPT-2-small-shaped folder with random weights (12 layers × 12 heads, d_model 768, 1,024
// positions, 50,257 tokens: 124,439,808 parameters, as GPT-2 small) is written to a
// temporary folder and served beside the page; the page checks it (config.json, then the
// size of model.safetensors), downloads and loads it, keeps it in IndexedDB, and loads it
// again from there after a reload. It prints each step's time, the bytes, and the engine's
// memory. Nothing is downloaded from outside this machine: the weights are drawn here and
// the tokenizer is the fixture's BPE (tests/fixtures/gpt2/tokenizer) with unreachable
// tokens added up to GPT-2's vocabulary size.
//
//   node tests/browser/load-model-bench.mjs          (TPLAY_DIST, TPLAY_CHROMIUM as for the tests)

import { mkdtempSync, openSync, readFileSync, rmSync, writeFileSync, writeSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launch, open, root, serve } from './harness.mjs';

const L = 12;
const D = 768;
const V = 50257;
const P = 1024;

/** The folder: config.json, model.safetensors (bare GPT2Model keys, tied head), vocab.json + merges.txt. */
function writeFolder(dir) {
  const fix = join(root, 'tests/fixtures/gpt2');
  const cfg = JSON.parse(readFileSync(join(fix, 'bare_tied/config.json'), 'utf8'));
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ ...cfg, n_layer: L, n_head: 12, n_embd: D, n_positions: P, vocab_size: V }));
  const vocab = JSON.parse(readFileSync(join(fix, 'tokenizer/vocab.json'), 'utf8'));
  for (let id = Object.keys(vocab).length; id < V; id++) vocab[`unused${id}`] = id;
  writeFileSync(join(dir, 'vocab.json'), JSON.stringify(vocab));
  writeFileSync(join(dir, 'merges.txt'), readFileSync(join(fix, 'tokenizer/merges.txt')));
  const shapes = [
    ['wte.weight', [V, D]],
    ['wpe.weight', [P, D]],
  ];
  for (let i = 0; i < L; i++) {
    shapes.push(
      [`h.${i}.ln_1.weight`, [D]],
      [`h.${i}.ln_1.bias`, [D]],
      [`h.${i}.attn.c_attn.weight`, [D, 3 * D]],
      [`h.${i}.attn.c_attn.bias`, [3 * D]],
      [`h.${i}.attn.c_proj.weight`, [D, D]],
      [`h.${i}.attn.c_proj.bias`, [D]],
      [`h.${i}.ln_2.weight`, [D]],
      [`h.${i}.ln_2.bias`, [D]],
      [`h.${i}.mlp.c_fc.weight`, [D, 4 * D]],
      [`h.${i}.mlp.c_fc.bias`, [4 * D]],
      [`h.${i}.mlp.c_proj.weight`, [4 * D, D]],
      [`h.${i}.mlp.c_proj.bias`, [D]],
    );
  }
  shapes.push(['ln_f.weight', [D]], ['ln_f.bias', [D]]);
  const header = {};
  let at = 0;
  for (const [name, shape] of shapes) {
    const n = shape.reduce((a, b) => a * b, 1);
    header[name] = { dtype: 'F32', shape, data_offsets: [at, at + 4 * n] };
    at += 4 * n;
  }
  let text = JSON.stringify(header);
  text += ' '.repeat((8 - (text.length % 8)) % 8);
  const fd = openSync(join(dir, 'model.safetensors'), 'w');
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(text.length));
  writeSync(fd, len);
  writeSync(fd, Buffer.from(text));
  // Weights N(0, 0.02²)-ish from a small generator (xorshift, sum of uniforms); LayerNorm gains 1.
  let s = 0x9e3779b9 >>> 0;
  const rand = () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 4294967296;
  };
  for (const [name, shape] of shapes) {
    const n = shape.reduce((a, b) => a * b, 1);
    const chunk = new Float32Array(Math.min(n, 1 << 20));
    for (let done = 0; done < n; done += chunk.length) {
      const m = Math.min(chunk.length, n - done);
      for (let k = 0; k < m; k++) chunk[k] = /ln_.*weight/.test(name) ? 1 : /bias/.test(name) ? 0 : (rand() + rand() + rand() - 1.5) * 0.04;
      writeSync(fd, Buffer.from(chunk.buffer, 0, 4 * m));
    }
  }
  closeSync(fd);
  return { params: at / 4, bytes: 8 + text.length + at };
}

const dir = mkdtempSync(join(tmpdir(), 'tplay-gpt2-small-'));
const t0 = Date.now();
const made = writeFolder(dir);
console.log(`wrote a GPT-2-small-shaped folder: ${made.params} parameters, model.safetensors ${made.bytes} bytes (${Date.now() - t0} ms)`);
const server = await serve(undefined, { mounts: { '/big/': dir } });
const browser = await launch({ serviceWorkers: 'block' });
try {
  const { page } = await open(browser.context, server.url, 'play=0&views=controls,attention,output');
  const r = await page.evaluate(async (url) => {
    const el = document.querySelector('transformer-playground');
    for (const m of await el.keptModels()) await el.deleteKeptModel(m.id);
    const loader = await el.modelLoader();
    const stages = [];
    const t = performance.now();
    const probe = await loader.probe(url);
    const probeMs = performance.now() - t;
    let last = performance.now();
    const loaded = await loader.fromProbe(probe, {
      stage: (s) => {
        const now = performance.now();
        if (stages.at(-1)?.stage !== s.stage) {
          if (stages.length) stages.at(-1).ms = now - last;
          stages.push({ stage: s.stage, ms: 0 });
          last = now;
        }
      },
    });
    stages.at(-1).ms = performance.now() - last;
    await el.updateComplete;
    const mem = await el.memoryUse();
    return { probeMs, size: probe.modelBytes, params: probe.check.params, stages, engineMs: loaded.ms, kept: !!loaded.kept, keptNote: loaded.keptNote, heads: el.info.n_heads, layers: el.info.decoder_layers, vocab: el.info.vocab.length, wasm: mem.wasm_bytes };
  }, `${server.url}big/`);
  console.log(`check (config.json, HEAD, tokenizer): ${r.probeMs.toFixed(0)} ms; model.safetensors ${r.size} bytes, ${r.params} parameters`);
  for (const s of r.stages) console.log(`  ${s.stage}: ${s.ms.toFixed(0)} ms`);
  console.log(`loaded: ${r.layers} layers × ${r.heads} heads, ${r.vocab} tokens; kept: ${r.kept} ${r.keptNote}; engine memory ${(r.wasm / 2 ** 20).toFixed(0)} MiB`);
  await page.reload();
  const k = await page.evaluate(async () => {
    const el = document.querySelector('transformer-playground');
    await el.ready;
    const [m] = await el.keptModels();
    const t = performance.now();
    await el.loadKeptModel(m.id);
    await el.updateComplete;
    return { ms: performance.now() - t, label: el.customModel, bytes: m.bytes };
  });
  console.log(`after a reload, from IndexedDB: ${k.ms.toFixed(0)} ms (${k.label}, ${k.bytes} bytes)`);
  // Decoding in wasm on this page's CPU engine: the page's own generation (KV cache, greedy,
  // its attention traced as the views draw it), timed by the engine per step.
  const g = await page.evaluate(async () => {
    const el = document.querySelector('transformer-playground');
    const s = el.store;
    await s.gen.start(true);
    const t = performance.now();
    while (!el.done && performance.now() - t < 120_000) await new Promise((r) => setTimeout(r, 200));
    return { tokens: el.generated.length, stats: el.stats, backend: el.backendInfo?.backend ?? 'cpu' };
  });
  const ms = g.stats.engineMsPerToken;
  console.log(
    `decoding in wasm (${g.backend}): ${g.tokens} tokens; prefill ${g.stats.prefillMs?.toFixed(0)} ms; ` +
      `${ms?.toFixed(1)} ms a token in the engine (${ms ? (1000 / ms).toFixed(1) : '?'} tokens/s; target ≥ 20), ` +
      `${g.stats.wallMsPerToken?.toFixed(1)} ms a token as the page sees it`,
  );
} finally {
  await browser.close();
  await server.close();
  rmSync(dir, { recursive: true, force: true });
}
