// The decoding race for `cargo xtask bench race` (xtask/src/bench_race.rs): greedy decoding
// of the same weights by the engine and by onnxruntime-web, in one headless Chromium page,
// one after the other run by run. A program that prints numbers and writes a report (JSON);
// it asserts nothing about time.
//
//   node tests/browser/ort-race-bench.mjs --checkpoint <bench pkg dir> <out.safetensors>
//   node tests/browser/ort-race-bench.mjs <bench pkg dir> <onnxruntime-web dist dir> <graph dir> <out.json>
//
// The first form writes the decode-bench model (crate/src/bench/mod.rs `decode_model(128)`, the
// bench build's `benchDecodeCheckpoint()`) as a checkpoint, for tools/onnx/export.py to
// turn into an ONNX decode step with a KV cache: <graph dir> holds what it wrote,
// decode.onnx, decode-null.onnx (the same inputs and outputs, no arithmetic) and
// decode-check.json (its check: PyTorch's tokens). The second races the two on it:
//
// - the engine: the bench build of the core (`--features bench`, simd128), on the page's
//   main thread, `generate_start` then one `generate_step` call per token, nothing traced
//   (as tests/browser/engine-bench.mjs times "main thread, 1 step per call");
// - onnxruntime-web: its wasm backend (`ort.wasm.min.mjs`), one thread
//   (`ort.env.wasm.numThreads = 1`), SIMD, all graph optimisations; the prompt through the
//   graph at once (the prefill), then one `session.run` per token with the cache carried
//   from each run's `present_*` outputs to the next run's `past_*` inputs, the greedy token
//   picked in JavaScript (the first of equal maxima, as the engine).
//
// Same prompt (`<bos>` then 15 fixed characters), up to 64 greedy tokens, stopping at
// `<eos>` as the engine does. The clock runs over the steps after the first generated token
// (the prefill is not timed, on either side); RUNS timed generations after a warm-up
// (WARMUP_MS on each side: V8's wasm tiers), the median tokens/s of each, and both sides'
// tokens compared (with PyTorch's too).
// What the figures are made of: the engine's own time per step (`wall_ms`) beside the
// call's; onnxruntime-web's `session.run` beside the loop's, and the same loop on the null
// graph (feeding the same tokens): what a run costs it apart from the model's arithmetic.

import { readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { launch, serve } from './harness.mjs';

const args = process.argv.slice(2);
if (args[0] === '--checkpoint') {
  const [pkg, out] = args.slice(1);
  if (!pkg || !out) {
    console.error('usage: node ort-race-bench.mjs --checkpoint <bench pkg dir> <out.safetensors>');
    process.exit(2);
  }
  const mod = await import(pathToFileURL(resolve(pkg, 'tplay.js')).href);
  mod.initSync({ module: readFileSync(join(pkg, 'tplay_bg.wasm')) });
  const bytes = mod.benchDecodeCheckpoint();
  writeFileSync(out, bytes);
  console.log(`wrote ${out} (${bytes.length} bytes): the decode-bench model`);
  process.exit(0);
}

const [pkg, ortDist, graphs, out] = args;
if (!pkg || !ortDist || !graphs || !out) {
  console.error('usage: node ort-race-bench.mjs <bench pkg dir> <onnxruntime-web dist dir> <graph dir> <out.json>');
  process.exit(2);
}
const check = JSON.parse(readFileSync(join(graphs, 'decode-check.json'), 'utf8'));
const RUNS = Number(process.env.TPLAY_BENCH_RUNS ?? 31);
const WARMUP_MS = 2000;
const NEW_TOKENS = 64;
const TARGET_RATIO = 10;
const ortVersion = JSON.parse(readFileSync(join(dirname(ortDist), 'package.json'), 'utf8')).version;

const types = { '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm', '.html': 'text/html' };
// Served by prefix (as engine-bench.mjs serves its packages): the bench build, onnxruntime-web's
// dist folder, the graph.
const dirs = { 'bench-pkg': pkg, ort: ortDist, 'race-model': graphs };

const load = () => loadavg().map((x) => x.toFixed(2)).join(' ');
const loadBefore = load();
const server = await serve(pkg);
const browser = await launch({ serviceWorkers: 'block' });
let report;
try {
  // Cross-origin isolated, for the clock: a generation takes a few milliseconds, and
  // without isolation Chromium coarsens performance.now() to 0.1 ms (5 µs with it). Neither
  // side uses threads or shared memory because of it (one thread each).
  await browser.context.route('**/race.html', (route) =>
    route.fulfill({
      body: '<!doctype html><meta charset="utf-8"><title>race</title>',
      contentType: 'text/html',
      headers: { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' },
    }),
  );
  for (const [prefix, dir] of Object.entries(dirs)) {
    await browser.context.route(`**/${prefix}/**`, (route) => {
      const name = new URL(route.request().url()).pathname.split(`/${prefix}/`)[1];
      if (name.includes('..')) return route.fulfill({ status: 403, body: '' });
      const ext = name.slice(name.lastIndexOf('.'));
      try {
        return route.fulfill({ body: readFileSync(join(dir, name)), contentType: types[ext] ?? 'application/octet-stream' });
      } catch {
        return route.fulfill({ status: 404, body: 'not found' });
      }
    });
  }
  const page = await browser.context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`${server.url}race.html`);
  report = await page.evaluate(
    async ({ RUNS, NEW_TOKENS, WARMUP_MS }) => {
      const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
      const base = new URL('bench-pkg/', location.href);
      const mod = await import(new URL('tplay.js', base).href);
      await mod.default({ module_or_path: new URL('tplay_bg.wasm', base) });
      const bytes = mod.benchDecodeCheckpoint();
      const e = new mod.Engine();
      const info = e.load(bytes);
      const prompt = [info.bos, ...Array.from({ length: 15 }, (_, i) => 4 + (((i + 1) * 7) % 36))];
      const req = {
        prompt,
        switches: { causal: true, padding_mask: true, scale: true, ablate: [] },
        sampling: { strategy: 'greedy', temperature: 1, top_k: 0, top_p: 1, beam_width: 1, seed: 0 },
        max_new_tokens: NEW_TOKENS,
        trace: false,
      };

      /** One generation by the engine: tokens, timed steps, their ms, the engine's own ms. */
      async function ours() {
        await e.generate_start(req);
        const first = await e.generate_step(); // the prefill
        const tokens = [first.step.token];
        let done = first.done;
        let inside = 0;
        const t0 = performance.now();
        while (!done) {
          const s = await e.generate_step();
          tokens.push(s.step.token);
          inside += s.step.wall_ms;
          done = s.done;
        }
        const ms = performance.now() - t0;
        return { tokens, steps: tokens.length - 1, ms, inside };
      }

      const ort = await import(new URL('ort/ort.wasm.min.mjs', location.href).href);
      ort.env.wasm.numThreads = 1;
      ort.env.wasm.simd = true;
      ort.env.wasm.proxy = false;
      const create = (file) =>
        ort.InferenceSession.create(new URL(`race-model/${file}`, location.href).href, {
          executionProviders: ['wasm'],
          graphOptimizationLevel: 'all',
        });
      const session = await create('decode.onnx');
      const nullSession = await create('decode-null.onnx');
      const pastNames = session.inputNames.filter((n) => n.startsWith('past_'));
      const shape = (() => {
        const m = session.inputMetadata?.find?.((x) => x.name === pastNames[0]);
        return m?.shape;
      })();
      // [1, H, P, D] with P dynamic: H and D from the graph's metadata when it has them,
      // else from the engine's model info.
      const H = typeof shape?.[1] === 'number' ? shape[1] : info.n_heads;
      const D = typeof shape?.[3] === 'number' ? shape[3] : info.d_head;
      const eos = info.eos;
      const argmax = (a, off, n) => {
        let best = 0;
        for (let i = 1; i < n; i++) if (a[off + i] > a[off + best]) best = i;
        return best;
      };

      /**
       * One generation by onnxruntime-web, the same shape as `ours` (`inside`: the time in
       * `session.run`). `forced`: feed these tokens instead of the greedy ones (the null graph).
       */
      async function theirs(session, forced) {
        let past = Object.fromEntries(pastNames.map((n) => [n, new ort.Tensor('float32', new Float32Array(0), [1, H, 0, D])]));
        let start = 0;
        let inside = 0;
        const run = async (ids) => {
          const feeds = {
            input_ids: new ort.Tensor('int64', BigInt64Array.from(ids, BigInt), [1, ids.length]),
            positions: new ort.Tensor('int64', BigInt64Array.from(ids, (_, i) => BigInt(start + i)), [ids.length]),
            ...past,
          };
          const r0 = performance.now();
          const r = await session.run(feeds);
          inside += performance.now() - r0;
          start += ids.length;
          const logits = r.logits;
          const V = logits.dims[2];
          const tok = argmax(logits.data, (ids.length - 1) * V, V);
          for (const t of Object.values(past)) t.dispose?.();
          past = Object.fromEntries(pastNames.map((n) => [n, r[n.replace('past_', 'present_')]]));
          logits.dispose?.();
          return forced ? forced[tokens.length] : tok;
        };
        const tokens = [];
        tokens.push(await run(prompt)); // the prefill
        inside = 0;
        const t0 = performance.now();
        while (tokens.length < (forced?.length ?? NEW_TOKENS) && tokens[tokens.length - 1] !== eos) tokens.push(await run([tokens[tokens.length - 1]]));
        const ms = performance.now() - t0;
        for (const t of Object.values(past)) t.dispose?.();
        return { tokens, steps: tokens.length - 1, ms, inside };
      }

      // Warm-up: V8 compiles wasm in its baseline tier first and moves hot functions to the
      // optimising one as they run, so each side decodes for WARMUP_MS (and at least 5
      // generations) before the clock starts. Then RUNS timed generations, the sides
      // taking turns, so that a burst of load from elsewhere on the machine hits both.
      for (const side of [() => ours(), () => theirs(session), () => theirs(nullSession, null)]) {
        const t0 = performance.now();
        for (let i = 0; i < 5 || performance.now() - t0 < WARMUP_MS; i++) await side();
      }
      const a = [];
      const b = [];
      const z = [];
      for (let run = 0; run < RUNS; run++) {
        const x = await ours();
        const y = await theirs(session);
        const w = await theirs(nullSession, y.tokens);
        a.push(x);
        b.push(y);
        z.push(w);
      }
      const rate = (r) => r.steps / (r.ms / 1e3);
      return {
        user_agent: navigator.userAgent,
        ort_versions: ort.env.versions ?? null,
        cross_origin_isolated: self.crossOriginIsolated,
        prompt,
        ours: {
          tokens_per_s: median(a.map(rate)),
          ms_per_token: median(a.map((r) => r.ms / r.steps)),
          engine_ms_per_token: median(a.map((r) => r.inside / r.steps)),
          tokens: a[0].tokens,
          steps: a[0].steps,
          all_same: a.every((r) => JSON.stringify(r.tokens) === JSON.stringify(a[0].tokens)),
        },
        ort: {
          tokens_per_s: median(b.map(rate)),
          ms_per_token: median(b.map((r) => r.ms / r.steps)),
          run_ms_per_token: median(b.map((r) => r.inside / r.steps)),
          null_ms_per_token: median(z.map((r) => r.ms / r.steps)),
          null_run_ms_per_token: median(z.map((r) => r.inside / r.steps)),
          tokens: b[0].tokens,
          steps: b[0].steps,
          all_same: b.every((r) => JSON.stringify(r.tokens) === JSON.stringify(b[0].tokens)),
        },
      };
    },
    { RUNS, NEW_TOKENS, WARMUP_MS },
  );
  if (errors.length) throw new Error(`errors in the page: ${errors.join('; ')}`);
  if (!report.cross_origin_isolated) console.warn('the race page is not cross-origin isolated: its clock ticks in 0.1 ms');
  await page.close();
} finally {
  await browser.close();
  await server.close();
}

report.runs = RUNS;
report.load = { before: loadBefore, after: load() };
report.onnxruntime_web = ortVersion;
report.ratio = report.ours.tokens_per_s / report.ort.tokens_per_s;
report.same_tokens = report.ours.all_same && report.ort.all_same && JSON.stringify(report.ours.tokens) === JSON.stringify(report.ort.tokens);
report.pytorch = check;
report.same_as_pytorch = JSON.stringify(report.ours.tokens) === JSON.stringify(check.reference_tokens);
writeFileSync(out, JSON.stringify(report, null, 1));

const f = (x, d = 0) => (Number.isFinite(x) ? x.toFixed(d) : 'n/a');
const rows = [
  ['greedy decode, our engine (one call per token), tokens/s', f(report.ours.tokens_per_s), `${f(report.ours.ms_per_token, 4)} ms/token (engine step ${f(report.ours.engine_ms_per_token, 4)} ms)`],
  [`onnxruntime-web ${ortVersion} wasm 1 thread KV cache, tokens/s`, f(report.ort.tokens_per_s), `${f(report.ort.ms_per_token, 4)} ms/token`],
  [`ratio (target ≥ ${TARGET_RATIO}×)`, `${f(report.ratio, 2)}×`, report.ratio >= TARGET_RATIO ? 'met' : 'missed'],
  ['same tokens', report.same_tokens ? 'yes' : 'no', `${report.ours.tokens.length} tokens each; PyTorch's too: ${report.same_as_pytorch ? 'yes' : 'no'}`],
];
const made = [
  ['  engine: the engine\'s own step (wall_ms)', f(report.ours.engine_ms_per_token, 4)],
  ['  engine: the call around it (JS ↔ wasm, the compact result)', f(report.ours.ms_per_token - report.ours.engine_ms_per_token, 4)],
  ['  onnxruntime-web: session.run, null graph (no arithmetic)', f(report.ort.null_run_ms_per_token, 4)],
  ['  onnxruntime-web: session.run, the rest (the model)', f(report.ort.run_ms_per_token - report.ort.null_run_ms_per_token, 4)],
  ['  onnxruntime-web: the loop around it (tensors, argmax)', f(report.ort.ms_per_token - report.ort.run_ms_per_token, 4)],
];
console.log(
  `\nThe decoding race: the decode-bench model (C 64, H 4, L 2, F 256, V 40), ${report.prompt.length}-token prompt, ` +
    `up to ${NEW_TOKENS} greedy tokens, the page's main thread; median of ${RUNS} runs after ${WARMUP_MS / 1000} s of warm-up on each side, ` +
    `the steps after the first token timed. ${report.user_agent}`,
);
console.log(`load average (1, 5, 15 min): ${report.load.before} before, ${report.load.after} after\n`);
console.log(`| ${'figure'.padEnd(58)} | ${'value'.padStart(9)} | ${''.padEnd(44)} |`);
console.log(`|${'-'.repeat(60)}|${'-'.repeat(11)}|${'-'.repeat(46)}|`);
for (const [a, b, c] of rows) console.log(`| ${a.padEnd(58)} | ${b.padStart(9)} | ${c.padEnd(44)} |`);
console.log(`\nWhat a token costs, ms (medians; the parts of each side add up to its ms/token):\n`);
for (const [a, b] of made) console.log(`  ${a.padEnd(64)} ${b.padStart(8)}`);
if (!report.same_tokens || !report.same_as_pytorch) {
  console.log(`  PyTorch:         ${check.reference_tokens.join(' ')}`);
  console.log(`  engine:          ${report.ours.tokens.join(' ')}`);
  console.log(`  onnxruntime-web: ${report.ort.tokens.join(' ')}`);
}
