// What the page transfers before it first shows a real forward pass: every response the
// page itself fetched (the document, scripts, styles, the wasm engine, the model list and
// the default model), grouped by kind, raw and as gzip -9 would send it. Fetches a service
// worker makes in the background to keep the page offline are not part of the first load
// and are counted apart. The engine's first load is one inference module: without the
// WebGPU backend (tplay_infer_bg-*.wasm) where the browser offers no WebGPU adapter, with
// it (tplay_infer_gpu_bg-*.wasm) where it does; the whole engine's (tplay_bg-*.wasm, the
// trainer and the side studies) is fetched when first needed, and kept offline by the
// service worker in the background. Shared by the size-budget test and `cargo xtask bench`.

import { gzipSync } from 'node:zlib';
import { readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';

/**
 * The budget for the first load where the browser offers no WebGPU adapter, gzip: 475 kB
 * (measured: 458.5 kB = 447.8 KiB, of which the wasm inference engine without its GPU
 * backend 270.7 KiB, 7 scripts 100.6 KiB, the default model 70.7 KiB). It was 570 kB
 * (measured 561.5 kB) while every browser downloaded the engine with the WebGPU backend
 * and each sort was compiled once per element type and comparator (crate/src/sorting.rs), and 650 kB
 * (measured 648.6 kB) before the views off the first screen, the lessons' text and the
 * lesson panel, and the embed dialog were fetched when first seen or opened
 * (www/src/views/load.ts, www/src/lessons/load.ts; docs/bench/first-load.md). The whole
 * engine (the trainer and the side studies, 600 kB more) is not part of it.
 */
export const BUDGET_BYTES = 475_000;

/**
 * The budget where the browser offers a WebGPU adapter, gzip: 560 kB (measured 547.0 kB =
 * 534.2 KiB, of which the inference engine with its GPU backend 352.9 KiB).
 */
export const BUDGET_GPU_BYTES = 560_000;

export function kindOf(url) {
  const path = new URL(url).pathname;
  const ext = extname(path);
  if (ext === '.safetensors') return 'model';
  if (ext === '.wasm') return 'wasm';
  if (ext === '.js' || ext === '.mjs') return 'js';
  if (ext === '.css') return 'css';
  if (ext === '.html' || path.endsWith('/')) return 'html';
  if (ext === '.json' || ext === '.webmanifest') return 'json';
  return 'other';
}

/**
 * Open `url` in a fresh page of `context` and wait until the playground is ready.
 * Resolves with { kinds: {kind: {n, raw, gzip}}, total: {raw, gzip}, files: [...], background }.
 */
export async function measureFirstLoad(context, url) {
  const page = await context.newPage();
  const seen = [];
  page.on('response', (r) => seen.push(r));
  const background = { n: 0, raw: 0 };
  const onSw = async (r) => {
    if (!r.request().serviceWorker()) return;
    try {
      background.n++;
      background.raw += (await r.body()).length;
    } catch {
      // an opaque or redirected response has no body to count
    }
  };
  context.on('response', onSw);
  await page.goto(url);
  await page.waitForFunction(() => customElements.get('transformer-playground') !== undefined);
  await page.evaluate(() => document.querySelector('transformer-playground').ready);
  const files = [];
  for (const r of seen) {
    if (r.status() !== 200 || r.url().startsWith('data:')) continue;
    let body;
    try {
      body = await r.body();
    } catch {
      continue;
    }
    files.push({ url: r.url(), kind: kindOf(r.url()), raw: body.length, gzip: gzipSync(body, { level: 9 }).length });
  }
  const kinds = {};
  const total = { raw: 0, gzip: 0 };
  for (const f of files) {
    const k = (kinds[f.kind] ??= { n: 0, raw: 0, gzip: 0 });
    k.n++;
    k.raw += f.raw;
    k.gzip += f.gzip;
    total.raw += f.raw;
    total.gzip += f.gzip;
  }
  context.off('response', onSw);
  await page.close();
  return { kinds, total, files, background };
}

/** The measurement as lines of text. */
export function describeFirstLoad(m) {
  const kb = (x) => `${(x / 1024).toFixed(1).padStart(7)} KiB`;
  const lines = ['first load (raw / gzip -9), what the page fetches before its first forward pass is drawn:'];
  for (const [k, v] of Object.entries(m.kinds).sort((a, b) => b[1].gzip - a[1].gzip)) {
    lines.push(`  ${k.padEnd(6)} ${String(v.n).padStart(2)} file${v.n === 1 ? ' ' : 's'} ${kb(v.raw)} / ${kb(v.gzip)}`);
  }
  for (const f of m.files.filter((x) => x.kind === 'wasm')) lines.push(`    ${new URL(f.url).pathname.split('/').pop().padEnd(31)} ${kb(f.raw)} / ${kb(f.gzip)}`);
  const budget = m.files.some((f) => /tplay_infer_gpu_bg/.test(f.url)) ? BUDGET_GPU_BYTES : BUDGET_BYTES;
  lines.push(`  total            ${kb(m.total.raw)} / ${kb(m.total.gzip)}  (budget ${(budget / 1e3).toFixed(0)} kB gzip: ${((100 * m.total.gzip) / budget).toFixed(1)}% used)`);
  return lines.join('\n');
}

/** Every wasm module the build in `dist` ships, raw and gzip -9, largest first. */
export function wasmModules(dist) {
  const dir = join(dist, 'assets');
  return readdirSync(dir)
    .filter((f) => f.endsWith('.wasm'))
    .map((f) => {
      const body = readFileSync(join(dir, f));
      return { file: f, raw: body.length, gzip: gzipSync(body, { level: 9 }).length };
    })
    .sort((a, b) => b.raw - a.raw);
}
