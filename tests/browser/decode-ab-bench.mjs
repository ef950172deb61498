// Two or more builds of the engine, one decoding race in headless Chromium:
//
//   node tests/browser/decode-ab-bench.mjs before=<pkg dir> after=<pkg dir> …
//
// Each <pkg dir> is a wasm-bindgen folder of the bench build (`target/bench-pkg` after
// `cargo xtask bench race`, copied aside before the change). The page is cross-origin
// isolated for its clock (5 µs ticks instead of 0.1 ms). The builds take turns, nine
// rounds each, one fresh page per round: a burst of load elsewhere on the machine hits
// every build alike. In a round, after 1.5 s of warm-up, the decode-bench model generates
// 64 greedy tokens from a 16-token prompt, over and over for 4 s, one `generate_step`
// call per token as the race against onnxruntime-web calls it; the round reports the
// median over its generations of the engine's own time per step (`wall_ms`) and of the
// tokens per second of the calls. Printed per build: the median round, the best round
// (the least disturbed) and every round, and whether every build produced the same tokens.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadavg } from 'node:os';
import { launch, serve } from './harness.mjs';

const pkgs = Object.fromEntries(process.argv.slice(2).map((a) => a.split('=')));
if (Object.keys(pkgs).length === 0) {
  console.error('usage: node tests/browser/decode-ab-bench.mjs name=<bench pkg dir> [name=<dir> …]');
  process.exit(2);
}
const isolated = { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' };
const server = await serve(undefined, { headers: isolated });
const browser = await launch({ webgpu: false, serviceWorkers: 'block' });
const types = { '.js': 'text/javascript', '.wasm': 'application/wasm' };
for (const [prefix, dir] of Object.entries(pkgs))
  await browser.context.route(`**/${prefix}/**`, (route) => {
    const name = new URL(route.request().url()).pathname.split(`/${prefix}/`)[1];
    if (name.includes('..')) return route.fulfill({ status: 403, body: '' });
    return route.fulfill({
      headers: { 'Cross-Origin-Resource-Policy': 'same-origin' },
      body: readFileSync(join(dir, name)),
      contentType: types[name.slice(name.lastIndexOf('.'))] ?? 'application/octet-stream',
    });
  });
await browser.context.route('**/decode-ab.html', (route) =>
  route.fulfill({ headers: isolated, body: '<!doctype html><title>decode A/B</title>', contentType: 'text/html' }),
);
const loadBefore = loadavg().map((x) => x.toFixed(2)).join(' ');
const res = {};
for (let round = 0; round < 9; round++)
  for (const prefix of Object.keys(pkgs)) {
    const page = await browser.context.newPage();
    await page.goto(server.url + 'decode-ab.html');
    const r = await page.evaluate(async (prefix) => {
      const base = new URL(`${prefix}/`, location.href);
      const mod = await import(new URL('tplay.js', base).href);
      await mod.default({ module_or_path: new URL('tplay_bg.wasm', base) });
      const e = new mod.Engine();
      const info = e.load(mod.benchDecodeCheckpoint());
      const req = {
        prompt: [info.bos, ...Array.from({ length: 15 }, (_, i) => 4 + (((i + 1) * 7) % 36))],
        switches: { causal: true, padding_mask: true, scale: true, ablate: [] },
        sampling: { strategy: 'greedy', temperature: 1, top_k: 0, top_p: 1, beam_width: 1, seed: 0 },
        max_new_tokens: 64,
        trace: false,
      };
      const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
      const rates = [];
      const engine = [];
      let tokens = '';
      const start = performance.now();
      while (performance.now() - start < 5500) {
        await e.generate_start(req);
        await e.generate_step(); // the prefill
        const t0 = performance.now();
        let n = 0;
        let inside = 0;
        let done = false;
        const got = [];
        while (!done) {
          const s = await e.generate_step();
          n++;
          inside += s.step.wall_ms;
          got.push(s.step.token);
          done = s.done;
        }
        const ms = performance.now() - t0;
        if (performance.now() - start > 1500) {
          rates.push(n / (ms / 1e3));
          engine.push(inside / n);
        }
        tokens = got.join(',');
      }
      return { tok_s: median(rates), engine_us: median(engine) * 1e3, tokens, isolated: crossOriginIsolated };
    }, prefix);
    await page.close();
    (res[prefix] ??= []).push(r);
  }
const loadAfter = loadavg().map((x) => x.toFixed(2)).join(' ');
console.log(`| build | engine µs/step, median round | best round | tokens/s (one call per token), median round | engine µs/step by round |`);
console.log('|---|---:|---:|---:|---|');
for (const [p, rs] of Object.entries(res)) {
  const m = (k) => rs.map((r) => r[k]).sort((a, b) => a - b)[Math.floor(rs.length / 2)];
  const best = Math.min(...rs.map((r) => r.engine_us));
  console.log(`| ${p} | ${m('engine_us').toFixed(1)} | ${best.toFixed(1)} | ${Math.round(m('tok_s'))} | ${rs.map((r) => r.engine_us.toFixed(1)).join(' ')} |`);
}
const all = Object.values(res).flat();
console.log(`same tokens in every build and round: ${all.every((r) => r.tokens === all[0].tokens)}; cross-origin isolated: ${all.every((r) => r.isolated)}`);
console.log(`load average (1, 5, 15 min): ${loadBefore} before, ${loadAfter} after`);
await browser.close();
await server.close();
