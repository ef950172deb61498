// Browser figures for `cargo xtask bench` (a program that prints numbers; it asserts
// nothing about time): page-ready time, time to first token, decode tokens/s per backend
// with and without the page's tracing, the first load by kind (what a visit downloads
// before the page is live) and everything the build ships (raw and gzip).
// Headless Chromium with --enable-unsafe-webgpu: WebGPU runs on SwiftShader here, which
// is a correctness target, not a speed target.

import { gzipSync } from 'node:zlib';
import { loadavg } from 'node:os';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';
import { dist, launch, open, serve } from './harness.mjs';
import { describeFirstLoad, measureFirstLoad, wasmModules } from './firstload.mjs';
import { engineDecode } from './engine-decode.mjs';

const RUNS = Number(process.env.TPLAY_BENCH_RUNS ?? 3);
const TOKENS = Number(process.env.TPLAY_BENCH_TOKENS ?? 24);
/** One part alone (`load`, `decode`, `playback` or `sizes`), or every part when unset. */
const ONLY = process.env.TPLAY_BENCH_ONLY;
const part = (name) => !ONLY || ONLY === name;

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)] : NaN;
};
const f = (x, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : 'n/a');
/** The machine's load averages (1, 5, 15 min), printed beside every figure. */
const load = () => `load ${loadavg().map((x) => x.toFixed(2)).join(' ')}`;
/** The performance targets this bench prints beside their figures. */
const FIRST_LOAD_TARGET_KB = 400;
const ENGINE_CALLS_TARGET_TPS = 40_000;
const PLAYBACK_TARGET_MS = 5;
const verdict = (ok) => (ok ? 'met' : 'missed');

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

/**
 * The main thread's own time (thread time: what it really ran, so a busy machine does not
 * inflate it) from a light Chromium trace around `f`, by kind of work.
 */
async function mainThreadTime(page, f) {
  const cdp = await page.context().newCDPSession(page);
  const events = [];
  cdp.on('Tracing.dataCollected', (d) => events.push(...d.value));
  const done = new Promise((r) => cdp.once('Tracing.tracingComplete', r));
  await cdp.send('Tracing.start', { categories: 'devtools.timeline,v8.execute', transferMode: 'ReportEvents' });
  const out = await f();
  await cdp.send('Tracing.end');
  await done;
  await cdp.detach();
  // The page's main thread: the busiest renderer main thread.
  const key = (e) => `${e.pid}:${e.tid}`;
  const mains = new Set(events.filter((e) => e.name === 'thread_name' && e.args?.name === 'CrRendererMain').map(key));
  const busy = new Map();
  for (const e of events) if (e.ph === 'X' && mains.has(key(e))) busy.set(key(e), (busy.get(key(e)) ?? 0) + (e.dur ?? 0));
  const main = [...busy].sort((a, b) => b[1] - a[1])[0]?.[0];
  const evs = events.filter((e) => key(e) === main && e.ph === 'X' && e.dur !== undefined).sort((a, b) => a.ts - b.ts || b.dur - a.dur);
  // Top-level tasks add up to the thread's time; nested events are sorted by kind.
  const kinds = { script: /^(FunctionCall|EvaluateScript|V8\.|RunMicrotasks|TimerFire|FireAnimationFrame|EventDispatch)/, style: /^(UpdateLayoutTree|Document::recalcStyle|ScheduleStyleRecalculation)/, layout: /^(Layout|LocalFrameView::performLayout)/, paint: /^(Paint|PrePaint|Layerize|PaintArtifactCompositor|UpdateLayer|CompositeLayers|Commit)/ };
  const time = { total: 0, script: 0, style: 0, layout: 0, paint: 0 };
  const stack = [];
  for (const e of evs) {
    while (stack.length && stack[stack.length - 1].ts + stack[stack.length - 1].dur <= e.ts) stack.pop();
    const t = (e.tdur ?? e.dur) / 1000;
    if (!stack.length) time.total += t;
    const kind = Object.keys(kinds).find((k) => kinds[k].test(e.name));
    // Count a kind once, at its outermost event.
    if (kind && !stack.some((p) => kinds[kind].test(p.name))) time[kind] += t;
    stack.push(e);
  }
  return { out, time };
}

/**
 * The page's playback on the CPU with every view drawn: `n` tokens at full speed, from
 * Play to the frame that shows the last token with its attention, divided by n; and the
 * main thread's own time per token. `height`: the window's height (16,000 px puts every
 * view on screen, so every view is laid out and painted).
 */
async function playback(context, url, height, n) {
  const { page } = await open(context, url, `chapter=all&backend=cpu&speed=0&max=${n}&play=0`, { viewport: { width: 1280, height } });
  // The views that wait until they are on screen fetch and draw their own numbers first.
  await page.waitForTimeout(3000);
  const { out: r, time } = await mainThreadTime(page, () =>
    page.evaluate(async () => {
      const el = document.querySelector('transformer-playground');
      const view = (tag) => el.shadowRoot.querySelector(tag);
      const t0 = performance.now();
      let frames = 0;
      let last = 0;
      const p = el.store.gen.start(true);
      await new Promise((ok) => {
        const tick = () => {
          // What the views hold now is what this frame paints.
          const shown = view('tp-generation').generated.length;
          if (shown > last) {
            last = shown;
            frames++;
          }
          if (el.done && shown === el.generated.length && view('tp-attention').attention === el.lastForward?.attention) ok();
          else requestAnimationFrame(tick);
        };
        requestAnimationFrame(tick);
      });
      await p;
      return { ms: performance.now() - t0, n: el.generated.length, frames, height: document.documentElement.scrollHeight };
    }),
  );
  await page.close();
  const per = (k) => time[k] / r.n;
  return { ...r, perToken: r.ms / r.n, cpu: per('total'), script: per('script'), style: per('style'), layout: per('layout'), paint: per('paint') };
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

/**
 * The front door over RUNS fresh loads of the default page (no link settings) at 1440×900:
 * its height in screen heights once the first forward pass is drawn, and when the
 * overview drew its first live picture (`data-first-live-ms`, performance.now(): ms from
 * navigation start).
 */
async function frontDoor(context, url) {
  const heights = [];
  const live = [];
  for (let i = 0; i < RUNS; i++) {
    const { page } = await open(context, url, '', { viewport: { width: 1440, height: 900 } });
    await page.waitForFunction(() => {
      const ov = document.querySelector('transformer-playground')?.shadowRoot.querySelector('tp-overview');
      return !!ov?.shadowRoot?.querySelector('section[data-first-live-ms]');
    });
    const r = await page.evaluate(async () => {
      const el = document.querySelector('transformer-playground');
      await el.updateComplete;
      const sec = el.shadowRoot.querySelector('tp-overview').shadowRoot.querySelector('section[data-first-live-ms]');
      // The page's own height (its content's bottom), not the window's: a page shorter
      // than the window reads as less than one screen.
      return { h: document.querySelector('main').getBoundingClientRect().bottom + scrollY, live: Number(sec.dataset.firstLiveMs) };
    });
    heights.push(r.h / 900);
    live.push(r.live);
    await page.close();
  }
  return { screens: median(heights), live: median(live) };
}

const server = await serve();
if (part('load')) {
  const plain = await launch({ webgpu: false });
  try {
    await loadFigures(plain);
  } finally {
    await plain.close();
  }
  const withGpu = await launch({ webgpu: true });
  try {
    const m = await measureFirstLoad(withGpu.context, server.url);
    console.log(describeFirstLoad(m));
    const kb = m.total.gzip / 1000;
    console.log(`  first load where the browser offers a WebGPU adapter (the engine with its GPU backend): ${f(kb)} KB gzip (target ≤ ${FIRST_LOAD_TARGET_KB} KB: ${verdict(kb <= FIRST_LOAD_TARGET_KB)}) · ${load()}`);
  } finally {
    await withGpu.close();
  }
}
const browser = await launch({ webgpu: true });
try {
  if (part('decode')) await decodeFigures();
  if (part('playback')) await playbackFigures();
  if (part('sizes')) shipped();
} finally {
  await browser.close();
  await server.close();
}

async function loadFigures(plain) {
  const first = await measureFirstLoad(plain.context, server.url);
  console.log(describeFirstLoad(first));
  const firstKb = first.total.gzip / 1000;
  console.log(`  first load where the browser offers no WebGPU adapter (the engine without its GPU backend): ${f(firstKb)} KB gzip (target ≤ ${FIRST_LOAD_TARGET_KB} KB: ${verdict(firstKb <= FIRST_LOAD_TARGET_KB)}) · ${load()}`);
  const door = await frontDoor(plain.context, server.url);
  console.log(`the default page at 1440×900: ${f(door.screens, 2)} screen heights (target ≤ 2; median of ${RUNS}) · ${load()}`);
  console.log(`the overview's first live picture: ${f(door.live, 0)} ms after navigation start (target ≤ 1000; median of ${RUNS}, CPU) · ${load()}`);
  const r = await pageReady(plain.context, server.url);
  console.log(`page ready without WebGPU (CPU): ${f(r.nav)} ms from navigation, ${f(r.ready)} ms from the element's start (median of ${RUNS}) · ${load()}`);
}

async function decodeFigures() {
  const r = await pageReady(browser.context, server.url);
  console.log(`page ready with WebGPU (adapter + a GPU-vs-CPU check pass): ${f(r.nav)} ms from navigation, ${f(r.ready)} ms from the element's start · ${load()}`);

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
    console.log(`  time to first token, page:            median ${f(median(p.map((x) => x.ttft)))} ms · ${load()}`);
    console.log(`  decode with tracing (page loop):      median ${f(median(p.map((x) => 1000 / x.wall)))} tokens/s (${f(median(p.map((x) => x.wall)), 2)} ms/token, engine step ${f(median(p.map((x) => x.engine)), 2)} ms) · ${load()}`);
    console.log(`  time to first token, engine only:     median ${f(median(e.map((x) => x.ttft)))} ms · ${load()}`);
    const tps = median(e.map((x) => x.tps));
    console.log(
      `  decode without tracing (engine only): median ${f(tps)} tokens/s over ${e[0].steps} steps, one worker message per token` +
        `${backend === 'cpu' ? ` (target ≥ ${ENGINE_CALLS_TARGET_TPS} for one call per token: ${verdict(tps >= ENGINE_CALLS_TARGET_TPS)}; engine-bench.mjs times the call without the worker)` : ''} · ${load()}`,
    );
  }
}

async function playbackFigures() {
  for (const height of [16000, 900]) {
    const p = [];
    for (let i = 0; i < RUNS; i++) p.push(await playback(browser.context, server.url, height, TOKENS));
    const m = (k) => median(p.map((x) => x[k]));
    console.log(
      `playback on the CPU, every view on the page, ${height === 900 ? 'a 1280 × 900 window (the views below it laid out, not painted)' : `a window of 1280 × ${height} (every view on screen, page ${p[0].height} px tall)`}:`,
    );
    console.log(
      `  Play → the frame showing token ${p[0].n}: median ${f(m('perToken'), 2)} ms per token (target ≤ ${PLAYBACK_TARGET_MS} ms: ${verdict(m('perToken') <= PLAYBACK_TARGET_MS)}; runs: ${p.map((x) => f(x.perToken, 1)).join(', ')}; ${f(m('frames'), 0)} frames drew new tokens) · ${load()}`,
    );
    console.log(`  main thread's own time per token (thread time, so a busy machine does not inflate it): ${f(m('cpu'), 2)} ms (script ${f(m('script'), 2)}, style ${f(m('style'), 2)}, layout ${f(m('layout'), 2)}, paint and layers ${f(m('paint'), 2)}) · ${load()}`);
  }
}

function shipped() {
  const s = sizes();
  console.log('everything the build ships (raw / gzip -9):');
  for (const [k, [raw, gz]] of Object.entries(s)) console.log(`  ${k.padEnd(7)} ${(raw / 1024).toFixed(1).padStart(8)} KiB / ${(gz / 1024).toFixed(1).padStart(8)} KiB`);
  console.log('the wasm modules (raw / gzip -9; tplay_infer: the first load where the browser offers no WebGPU adapter, tplay_infer_gpu: where it offers one, tplay: the trainer and side studies too, fetched when first needed):');
  for (const w of wasmModules(dist)) console.log(`  ${w.file.padEnd(32)} ${(w.raw / 1024).toFixed(1).padStart(8)} KiB / ${(w.gzip / 1024).toFixed(1).padStart(8)} KiB`);
}
