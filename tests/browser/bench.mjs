// Browser figures for `cargo xtask bench` (a program that prints numbers; it asserts
// nothing about time): page-ready time, time to first token, decode tokens/s per backend
// with and without the page's tracing, the first load by kind (what a visit downloads
// before the page is live) and everything the build ships (raw and gzip).
// Headless Chromium with --enable-unsafe-webgpu: WebGPU runs on SwiftShader here, which
// is a correctness target, not a speed target.

import { gzipSync } from 'node:zlib';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';
import { dist, launch, open, serve } from './harness.mjs';
import { describeFirstLoad, measureFirstLoad } from './firstload.mjs';

const RUNS = Number(process.env.TPLAY_BENCH_RUNS ?? 3);
const TOKENS = Number(process.env.TPLAY_BENCH_TOKENS ?? 24);

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)] : NaN;
};
const f = (x, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : 'n/a');

function files(dir) {
  const out = [];
  for (const e of readdirSync(dir)) {
    const p = join(dir, e);
    if (statSync(p).isDirectory()) out.push(...files(p));
    else out.push(p);
  }
  return out;
}

function sizes() {
  const groups = { wasm: [0, 0], js: [0, 0], css: [0, 0], models: [0, 0], html: [0, 0], other: [0, 0] };
  for (const p of files(dist)) {
    const body = readFileSync(p);
    const ext = extname(p);
    const key = p.includes('/models/') ? 'models' : ext === '.wasm' ? 'wasm' : ext === '.js' ? 'js' : ext === '.css' ? 'css' : ext === '.html' ? 'html' : 'other';
    groups[key][0] += body.length;
    groups[key][1] += gzipSync(body, { level: 9 }).length;
  }
  return groups;
}

/** Engine-only decoding (no traced forward per token), driven through the worker API. */
async function engineDecode(page, backend, n) {
  return page.evaluate(
    async ({ backend, n }) => {
      const { EngineClient } = await import('./playground.js');
      const el = document.querySelector('transformer-playground');
      const c = new EngineClient();
      const entry = el.manifest.find((m) => m.file === el.st.model);
      const info = await c.call('load', { url: new URL(`models/${entry.file}`, location.href).href });
      const b = await c.call('setBackend', { backend });
      const prompt = await c.call('tokenize', { text: entry.default_prompt });
      const sampling = { strategy: 'greedy', temperature: 1, top_k: 0, top_p: 1, beam_width: 1, seed: 0 };
      const switches = { causal: true, padding_mask: true, scale: true, ablate: [] };
      const t0 = performance.now();
      await c.call('generateStart', { prompt: [info.bos, ...prompt.ids], switches, sampling, max_new_tokens: n, trace: false });
      let first = null;
      let steps = 0;
      for (let i = 0; i < n; i++) {
        const s = await c.call('generateStep', {});
        steps++;
        if (first === null) first = performance.now();
        if (s.done) break;
      }
      const end = performance.now();
      c.terminate();
      return { backend: b.backend, ttft: first - t0, tps: steps > 1 ? (steps - 1) / ((end - first) / 1000) : NaN, steps };
    },
    { backend, n },
  );
}

/** The page's own loop: each token is followed by a traced forward pass and a redraw. */
async function pageDecode(context, url, backend, n) {
  const { page } = await open(context, url, `backend=${backend}&speed=0&max=${n}`);
  await page.waitForFunction(() => {
    const el = document.querySelector('transformer-playground');
    return el.done || el.error;
  }, undefined, { timeout: 300000 });
  const r = await page.evaluate(() => {
    const el = document.querySelector('transformer-playground');
    return { backend: el.backendInfo.backend, ttft: el.stats.ttftMs, wall: el.stats.wallMsPerToken, engine: el.stats.engineMsPerToken, n: el.generated.length };
  });
  await page.close();
  return r;
}

/** Page-ready times over RUNS fresh loads in one browser. */
async function pageReady(context, url) {
  const ready = [];
  const nav = [];
  for (let i = 0; i < RUNS; i++) {
    const { page } = await open(context, url, 'play=0');
    const r = await page.evaluate(() => {
      const el = document.querySelector('transformer-playground');
      return { el: el.readyMs, nav: el.readyAt };
    });
    ready.push(r.el);
    nav.push(r.nav);
    await page.close();
  }
  return { ready: median(ready), nav: median(nav) };
}

const server = await serve();
const plain = await launch({ webgpu: false });
try {
  console.log(describeFirstLoad(await measureFirstLoad(plain.context, server.url)));
  const r = await pageReady(plain.context, server.url);
  console.log(`page ready without WebGPU (CPU): ${f(r.nav)} ms from navigation, ${f(r.ready)} ms from the element's start (median of ${RUNS})`);
} finally {
  await plain.close();
}
const browser = await launch({ webgpu: true });
try {
  const r = await pageReady(browser.context, server.url);
  console.log(`page ready with WebGPU (adapter + a GPU-vs-CPU check pass): ${f(r.nav)} ms from navigation, ${f(r.ready)} ms from the element's start`);

  for (const backend of ['cpu', 'webgpu']) {
    const p = [];
    const e = [];
    for (let i = 0; i < RUNS; i++) {
      p.push(await pageDecode(browser.context, server.url, backend, TOKENS));
      const { page } = await open(browser.context, server.url, 'play=0');
      e.push(await engineDecode(page, backend, TOKENS));
      await page.close();
    }
    const ran = p[0].backend;
    console.log(`${backend} (ran on ${ran}):`);
    console.log(`  time to first token, page:            median ${f(median(p.map((x) => x.ttft)))} ms`);
    console.log(`  decode with tracing (page loop):      median ${f(median(p.map((x) => 1000 / x.wall)))} tokens/s (${f(median(p.map((x) => x.wall)), 2)} ms/token, engine step ${f(median(p.map((x) => x.engine)), 2)} ms)`);
    console.log(`  time to first token, engine only:     median ${f(median(e.map((x) => x.ttft)))} ms`);
    console.log(`  decode without tracing (engine only): median ${f(median(e.map((x) => x.tps)))} tokens/s over ${e[0].steps} steps`);
  }

  const s = sizes();
  console.log('everything the build ships (raw / gzip -9):');
  for (const [k, [raw, gz]] of Object.entries(s)) console.log(`  ${k.padEnd(7)} ${(raw / 1024).toFixed(1).padStart(8)} KiB / ${(gz / 1024).toFixed(1).padStart(8)} KiB`);
} finally {
  await browser.close();
  await server.close();
}
