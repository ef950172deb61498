// The engine benchmark (crate/src/bench/mod.rs) in headless Chromium, for `cargo xtask bench`:
// a program that prints numbers and writes a report (JSON); it asserts nothing about time.
//
//   node tests/browser/engine-bench.mjs <bench pkg dir> <out.json>
//
// It serves the built page (TPLAY_DIST) and the bench build of the core (`--features
// bench`, simd128, not through wasm-opt) under /bench-pkg/, and measures on the same
// weights (the decode-bench model, whose checkpoint the bench build hands out):
//
// - the whole engine report (`benchReport`) on the page's main thread: decode, the
//   64-token forward pass, the matrix-product peak and training as a fraction of it;
// - engine-only decoding (`Engine.generate_start` + steps, nothing traced) on the main
//   thread, one step per call (an untraced `generate_step` answers a compact
//   `GenerateStepCompact` of typed arrays) and all steps in one `generate_steps` call;
// - the same through a worker running the same bench build (one message per step, and
//   `generateSteps` of 16 and 64 steps per message), so the two differ only by the worker;
// - the same through the page's own worker (EngineClient, the shipped build: wasm-opt -Oz);
// - the bench build passed through wasm-opt at each level in TPLAY_BENCH_OPT
//   ("Oz=<pkg dir>,O3=<pkg dir>", from `cargo xtask bench engine`): the worker's decoding
//   at 64 steps per message on each, beside the wasm's size (raw and gzip -9);
// - WebGPU: dispatches, submissions and readbacks per decode step for every shipped model
//   that generates. Headless Chromium's adapter is SwiftShader, a software fallback: its
//   times mean nothing; the counts are what the GPU path submits on any adapter.
//
// The native bench (crate/benches/engine.rs) reads the report and prints it beside its
// own figures from the same run, with the ratio.

import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { launch, open, serve } from './harness.mjs';

const [pkg, out] = process.argv.slice(2);
if (!pkg || !out) {
  console.error('usage: node engine-bench.mjs <bench pkg dir> <out.json>');
  process.exit(2);
}
const quick = process.env.TPLAY_BENCH_QUICK === '1';
const RUNS = Number(process.env.TPLAY_BENCH_RUNS ?? 7);

// A worker on the bench build: a plain RPC onto its `Engine` (the page's own worker adds
// only its request queue and backend bookkeeping to this).
const WORKER = `
import init, { Engine } from './tplay.js';
let e = null;
function transfer(v, out = []) {
  if (ArrayBuffer.isView(v)) out.push(v.buffer);
  else if (v && typeof v === 'object') for (const x of Object.values(v)) transfer(x, out);
  return out;
}
onmessage = async ({ data: { id, method, args } }) => {
  try {
    if (method === 'init') {
      await init({ module_or_path: new URL('./tplay_bg.wasm', import.meta.url) });
      e = new Engine();
      postMessage({ id, r: e.load(args[0]) });
      return;
    }
    const r = await e[method](...args);
    postMessage({ id, r }, transfer(r));
  } catch (err) {
    postMessage({ id, error: String(err) });
  }
};
`;

const types = { '.js': 'text/javascript', '.wasm': 'application/wasm' };

// The wasm-opt variants: name → package folder, served under /bench-opt-<name>/.
const variants = (process.env.TPLAY_BENCH_OPT ?? '')
  .split(',')
  .filter(Boolean)
  .map((kv) => {
    const [name, dir] = kv.split('=');
    return { name, dir };
  });
const pkgs = { 'bench-pkg': pkg, ...Object.fromEntries(variants.map((v) => [`bench-opt-${v.name}`, v.dir])) };
const sizes = (dir) => {
  const wasm = readFileSync(join(dir, 'tplay_bg.wasm'));
  return { bytes: statSync(join(dir, 'tplay_bg.wasm')).size, gzip_bytes: gzipSync(wasm, { level: 9 }).length };
};

const load = () => loadavg().map((x) => x.toFixed(2)).join(' ');
const loadBefore = load();
const server = await serve();
// No service worker: page.route must see the /bench-pkg/ requests.
const browser = await launch({ webgpu: true, serviceWorkers: 'block' });
let report;
try {
  for (const [prefix, dir] of Object.entries(pkgs)) {
    await browser.context.route(`**/${prefix}/**`, (route) => {
      const name = new URL(route.request().url()).pathname.split(`/${prefix}/`)[1];
      if (name === 'worker.js') return route.fulfill({ body: WORKER, contentType: 'text/javascript' });
      const ext = name.slice(name.lastIndexOf('.'));
      return route.fulfill({ body: readFileSync(join(dir, name)), contentType: types[ext] ?? 'application/octet-stream' });
    });
  }
  const { page } = await open(browser.context, server.url, 'play=0');
  report = await page.evaluate(
    async ({ quick, RUNS, optNames }) => {
      const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
      const base = new URL('bench-pkg/', location.href);
      const mod = await import(new URL('tplay.js', base).href);
      await mod.default({ module_or_path: new URL('tplay_bg.wasm', base) });
      const report = JSON.parse(mod.benchReport(quick));
      const bytes = mod.benchDecodeCheckpoint();

      const sampling = { strategy: 'greedy', temperature: 1, top_k: 0, top_p: 1, beam_width: 1, seed: 0 };
      const switches = { causal: true, padding_mask: true, scale: true, ablate: [] };
      // The bench's prompt: <bos> then 15 fixed characters (crate/src/bench/mod.rs `prompt`).
      const startReq = (bos) => ({
        prompt: [bos, ...Array.from({ length: 15 }, (_, i) => 4 + (((i + 1) * 7) % 36))],
        switches,
        sampling,
        max_new_tokens: 64,
        trace: false,
      });

      /**
       * Tokens/s of the 63 steps after the first generated token (the first step is the
       * prefill), median of RUNS generations; `start(req)`, `step()` and `steps(n)` run
       * one engine's calls however they reach it. Also the engine's own time per token.
       */
      async function decode(bos, start, step, steps, per) {
        const rates = [];
        const engineMs = [];
        let tokens = null;
        for (let run = 0; run <= RUNS; run++) {
          await start(startReq(bos));
          await step(); // the prefill
          const t0 = performance.now();
          let n = 0;
          let inside = 0;
          let done = false;
          let got = [];
          while (!done) {
            if (per === 1) {
              const s = await step();
              n += 1;
              inside += s.step.wall_ms;
              got.push(s.step.token);
              done = s.done;
            } else {
              const s = await steps(per);
              n += s.steps;
              for (const w of s.wall_ms) inside += w;
              got.push(...s.tokens);
              done = s.done;
            }
          }
          const ms = performance.now() - t0;
          if (run > 0) {
            rates.push(n / (ms / 1e3));
            engineMs.push(inside / n);
          }
          tokens = got;
        }
        return { tokens_per_s: median(rates), engine_ms_per_token: median(engineMs), tokens };
      }

      // Main thread, the bench build.
      const e = new mod.Engine();
      const info = e.load(bytes);
      const main = {};
      for (const per of [1, 64]) {
        main[per] = await decode(
          info.bos,
          async (r) => e.generate_start(r),
          () => e.generate_step(),
          (n) => e.generate_steps({ n }),
          per,
        );
      }

      // A worker on a bench build (`dir`: its folder under the page), decoding at each
      // of `pers` steps per message.
      async function inWorker(dir, pers) {
        const w = new Worker(new URL(`../${dir}/worker.js`, base), { type: 'module' });
        let next = 1;
        const waiting = new Map();
        w.onmessage = ({ data }) => {
          const p = waiting.get(data.id);
          waiting.delete(data.id);
          if (data.error) p.reject(new Error(data.error));
          else p.resolve(data.r);
        };
        const rpc = (method, ...args) =>
          new Promise((resolve, reject) => {
            const id = next++;
            waiting.set(id, { resolve, reject });
            w.postMessage({ id, method, args });
          });
        await rpc('init', bytes);
        const out = {};
        for (const per of pers) {
          out[per] = await decode(
            info.bos,
            (r) => rpc('generate_start', r),
            () => rpc('generate_step'),
            (n) => rpc('generate_steps', { n }),
            per,
          );
        }
        w.terminate();
        return out;
      }
      // The same build, then each wasm-opt level of it: a fresh module starts in V8's
      // baseline tier, so each level first decodes at 1 and 16 steps per message (as the
      // build above does) and the 64-step figure is taken once the optimising tier runs.
      const worker = await inWorker('bench-pkg', [1, 16, 64]);
      const opt = {};
      for (const name of optNames) opt[name] = (await inWorker(`bench-opt-${name}`, [1, 16, 64]))[64];

      // The page's own worker (the shipped build), CPU backend.
      const { EngineClient } = await import('./playground.js');
      const c = new EngineClient();
      await c.call('loadBytes', { bytes: bytes.slice() });
      await c.call('setBackend', { backend: 'cpu' });
      const shipped = {};
      for (const per of [1, 16, 64]) {
        shipped[per] = await decode(
          info.bos,
          (r) => c.call('generateStart', r),
          () => c.call('generateStep', {}),
          (n) => c.call('generateSteps', { n }),
          per,
        );
      }

      // WebGPU: the GPU work of a decode step, per shipped model that generates.
      const el = document.querySelector('transformer-playground');
      const gpu = [];
      const b = await c.call('setBackend', { backend: 'webgpu' });
      if (b.backend === 'webgpu') {
        for (const m of el.manifest.filter((m) => m.arch !== 'encoder_only')) {
          try {
            const mi = await c.call('load', { url: new URL(`models/${m.file}`, location.href).href });
            const t = await c.call('tokenize', { text: m.default_prompt });
            const dec = m.arch === 'encoder_decoder';
            const req = {
              prompt: dec ? [mi.bos] : [mi.bos, ...t.ids],
              src: dec ? t.ids : undefined,
              switches,
              sampling,
              max_new_tokens: 9,
              trace: false,
            };
            await c.call('generateStart', req);
            const first = await c.call('generateSteps', { n: 1 });
            const t0 = performance.now();
            const rest = await c.call('generateSteps', { n: 8 });
            const ms = performance.now() - t0;
            const n = rest.steps;
            gpu.push({
              model: m.file,
              backend: rest.backend,
              prefill: first.gpu,
              steps: n,
              dispatches: rest.gpu ? rest.gpu.dispatches / n : null,
              submissions: rest.gpu ? rest.gpu.submissions / n : null,
              readbacks: rest.gpu ? rest.gpu.readbacks / n : null,
              ms_per_token: ms / n,
            });
          } catch (err) {
            gpu.push({ model: m.file, error: String(err) });
          }
        }
      }
      c.terminate();
      return {
        ...report,
        browser: {
          user_agent: navigator.userAgent,
          main,
          worker,
          shipped,
          adapter: b.adapter ?? null,
          adapter_note:
            b.backend !== 'webgpu'
              ? b.reason
              : /swiftshader|llvmpipe|lavapipe|software|fallback|cpu/i.test(JSON.stringify(b.adapter ?? ''))
                ? 'software adapter: a correctness target, its times mean nothing; the counts hold on any adapter'
                : 'hardware adapter',
          gpu,
          opt,
        },
      };
    },
    { quick, RUNS, optNames: variants.map((v) => v.name) },
  );
  report.browser.load = `${loadBefore} before, ${load()} after`;
  report.browser.opt = [{ name: 'none', ...sizes(pkg), ...report.browser.worker[64] }].concat(
    variants.map((v) => ({ name: v.name, ...sizes(v.dir), ...report.browser.opt[v.name] })),
  );
  await page.close();
} finally {
  await browser.close();
  await server.close();
}

writeFileSync(out, JSON.stringify(report));
const f = (x, d = 0) => (Number.isFinite(x) ? x.toFixed(d) : 'n/a');
const br = report.browser;
console.log(`Chromium (${report.build}), ${br.user_agent}; load average (1, 5, 15 min) ${br.load}`);
console.log(`  decode, main thread, 1 step per call:       ${f(br.main[1].tokens_per_s)} tokens/s`);
console.log(`  decode, main thread, 64 steps per call:     ${f(br.main[64].tokens_per_s)} tokens/s`);
for (const per of [1, 16, 64]) console.log(`  decode, bench worker, ${String(per).padStart(2)} steps per message: ${f(br.worker[per].tokens_per_s)} tokens/s (engine ${f(br.worker[per].engine_ms_per_token, 4)} ms/token)`);
for (const per of [1, 16, 64]) console.log(`  decode, page worker,  ${String(per).padStart(2)} steps per message: ${f(br.shipped[per].tokens_per_s)} tokens/s (engine ${f(br.shipped[per].engine_ms_per_token, 4)} ms/token)`);
for (const o of br.opt) console.log(`  wasm-opt ${o.name.padEnd(4)} ${o.bytes} bytes (${o.gzip_bytes} gzip): bench worker, 64 steps per message ${f(o.tokens_per_s)} tokens/s`);
const same = [...br.opt, br.worker[1], br.worker[16], br.worker[64], br.shipped[1], br.shipped[16], br.shipped[64], br.main[64]].every(
  (x) => JSON.stringify(x.tokens) === JSON.stringify(br.main[1].tokens),
);
console.log(`  the same tokens on every path: ${same}`);
