// Where the page's time goes (a tool that prints numbers; it asserts nothing): headless
// Chromium, every view on the page, a tall window so every view is on screen and drawn.
// (a) playback of the default model, (b) one click on the causal-mask switch. For each:
// the main thread's time by kind (script, style, layout, paint, …) from a Chromium trace,
// each component's own update time (Lit's performUpdate, wrapped in the page), the DOM
// and SVG nodes each view holds, and the engine's round trips.
//   node tests/browser/page-profile.mjs   (TPLAY_PROFILE_TOKENS, TPLAY_PROFILE_HEIGHT)

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { artifacts, launch, open, serve } from './harness.mjs';

const TOKENS = Number(process.env.TPLAY_PROFILE_TOKENS ?? 24);
const HEIGHT = Number(process.env.TPLAY_PROFILE_HEIGHT ?? 16000);

const f = (x, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : 'n/a');

/** Wrap every tp-* element's performUpdate and the engine client's calls, in the page. */
async function instrument(page) {
  await page.evaluate(() => {
    const acc = (window.__upd = new Map());
    const wrapped = new Set();
    const wrap = (tag) => {
      const C = customElements.get(tag);
      if (!C || wrapped.has(C)) return;
      wrapped.add(C);
      const orig = C.prototype.performUpdate;
      C.prototype.performUpdate = function () {
        const t = performance.now();
        try {
          return orig.call(this);
        } finally {
          const a = acc.get(tag) ?? { ms: 0, n: 0 };
          a.ms += performance.now() - t;
          a.n++;
          acc.set(tag, a);
        }
      };
    };
    const el = document.querySelector('transformer-playground');
    wrap('transformer-playground');
    const all = (root, out = new Set()) => {
      for (const n of root.querySelectorAll('*')) {
        if (n.tagName.toLowerCase().startsWith('tp-')) out.add(n.tagName.toLowerCase());
        if (n.shadowRoot) all(n.shadowRoot, out);
      }
      return out;
    };
    for (const t of all(el.shadowRoot)) wrap(t);
    // The engine's round trips by operation.
    const calls = (window.__calls = new Map());
    const c = el.store.client;
    const call = c.call.bind(c);
    c.call = async (op, payload) => {
      const t = performance.now();
      try {
        return await call(op, payload);
      } finally {
        const a = calls.get(op) ?? { ms: 0, n: 0 };
        a.ms += performance.now() - t;
        a.n++;
        calls.set(op, a);
      }
    };
  });
}

const reset = (page) => page.evaluate(() => (window.__upd.clear(), window.__calls.clear()));
const collect = (page) =>
  page.evaluate(() => ({ upd: [...window.__upd], calls: [...window.__calls] }));

/** DOM elements and SVG elements in each view (shadow roots included). */
const nodes = (page) =>
  page.evaluate(() => {
    const count = (root) => {
      let all = 0;
      let svg = 0;
      for (const n of root.querySelectorAll('*')) {
        all++;
        if (n instanceof SVGElement) svg++;
        if (n.shadowRoot) {
          const c = count(n.shadowRoot);
          all += c.all;
          svg += c.svg;
        }
      }
      return { all, svg };
    };
    const el = document.querySelector('transformer-playground');
    return [...el.shadowRoot.querySelectorAll('.view')].map((v) => ({ view: v.dataset.view, ...count(v) }));
  });

/** Main-thread time by trace event, exclusive of nested events. */
function breakdown(events) {
  // The page's main thread: of the renderer main threads, the busiest.
  const mains = events.filter((e) => e.name === 'thread_name' && e.args?.name === 'CrRendererMain');
  const key = (e) => `${e.pid}:${e.tid}`;
  const busy = new Map();
  for (const e of events) if (e.ph === 'X' && e.dur) busy.set(key(e), (busy.get(key(e)) ?? 0) + e.dur);
  const main = mains.sort((a, b) => (busy.get(key(b)) ?? 0) - (busy.get(key(a)) ?? 0))[0];
  if (!main) return { rows: [], cpu: NaN };
  const evs = events
    .filter((e) => e.pid === main.pid && e.tid === main.tid && e.ph === 'X' && e.dur !== undefined)
    .sort((a, b) => a.ts - b.ts || b.dur - a.dur);
  // Thread time (tdur: the time the thread really ran), robust on a loaded machine.
  const cost = (e) => e.tdur ?? e.dur;
  const self = new Map();
  const stack = [];
  let cpu = 0;
  for (const e of evs) {
    while (stack.length && stack[stack.length - 1].ts + stack[stack.length - 1].dur <= e.ts) stack.pop();
    const parent = stack[stack.length - 1];
    if (parent) self.set(parent.name, (self.get(parent.name) ?? 0) - cost(e));
    else cpu += cost(e);
    self.set(e.name, (self.get(e.name) ?? 0) + cost(e));
    stack.push(e);
  }
  const rows = [...self].map(([name, us]) => ({ name, ms: us / 1000 })).filter((x) => x.ms > 0.5).sort((a, b) => b.ms - a.ms);
  return { rows, cpu: cpu / 1000 };
}

const TRACE = process.env.TPLAY_PROFILE_TRACE !== '0';

/** The JavaScript functions with the most self time (V8's sampling profiler). */
async function jsProfile(page, f) {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
  await cdp.send('Profiler.start');
  const extra = await f();
  const { profile } = await cdp.send('Profiler.stop');
  await cdp.detach();
  const dt = new Map();
  for (let i = 0; i < profile.samples.length; i++) dt.set(profile.samples[i], (dt.get(profile.samples[i]) ?? 0) + (profile.timeDeltas[i + 1] ?? 0));
  const self = new Map();
  for (const n of profile.nodes) {
    const c = n.callFrame;
    const k = `${c.functionName || '(anonymous)'} ${c.url.split('/').pop()}:${c.lineNumber + 1}`;
    self.set(k, (self.get(k) ?? 0) + (dt.get(n.id) ?? 0));
  }
  const rows = [...self].sort((a, b) => b[1] - a[1]).slice(0, 30);
  for (const [k, us] of rows) console.log(`    ${(us / 1000).toFixed(1).padStart(8)} ms  ${k}`);
  return extra;
}

async function traced(page, name, f) {
  if (process.env.TPLAY_PROFILE_JS === '1') {
    const t0 = Date.now();
    const extra = await jsProfile(page, f);
    return { wall: Date.now() - t0, rows: [], cpu: NaN, extra };
  }
  if (!TRACE) {
    const t0 = Date.now();
    const extra = await f();
    return { wall: Date.now() - t0, rows: [], cpu: NaN, extra };
  }
  const cdp = await page.context().newCDPSession(page);
  const events = [];
  cdp.on('Tracing.dataCollected', (d) => events.push(...d.value));
  const done = new Promise((r) => cdp.once('Tracing.tracingComplete', r));
  await cdp.send('Tracing.start', {
    categories: 'devtools.timeline,disabled-by-default-devtools.timeline,blink,v8.execute',
    transferMode: 'ReportEvents',
  });
  const t0 = Date.now();
  const extra = await f();
  const wall = Date.now() - t0;
  await cdp.send('Tracing.end');
  await done;
  await cdp.detach();
  writeFileSync(join(artifacts, `profile-${name}.json`), JSON.stringify({ traceEvents: events }));
  return { wall, ...breakdown(events), extra };
}

function report(title, r, perf) {
  console.log(`\n== ${title}: ${r.wall} ms wall, ${f(r.cpu)} ms of main-thread time (thread time, tracing on)`);
  console.log('  main thread, self thread time by trace event (ms):');
  for (const x of r.rows.slice(0, 16)) console.log(`    ${x.name.padEnd(34)} ${f(x.ms).padStart(8)}`);
  console.log('  component updates (Lit performUpdate, ms / count):');
  for (const [tag, a] of [...perf.upd].sort((a, b) => b[1].ms - a[1].ms)) console.log(`    ${tag.padEnd(34)} ${f(a.ms).padStart(8)} / ${a.n}`);
  console.log('  engine round trips (ms / count):');
  for (const [op, a] of perf.calls) console.log(`    ${op.padEnd(34)} ${f(a.ms).padStart(8)} / ${a.n}`);
}

const server = await serve();
const browser = await launch({ webgpu: false });
try {
  const { page } = await open(browser.context, server.url, `backend=cpu&speed=0&max=${TOKENS}&play=0`, { viewport: { width: 1280, height: HEIGHT } });
  // Let the views that wait until seen fetch and draw their own numbers.
  await page.waitForTimeout(4000);
  await instrument(page);
  console.log(`nodes per view (elements / of which SVG), window 1280 × ${HEIGHT}:`);
  let tot = 0;
  let totSvg = 0;
  for (const n of await nodes(page)) {
    tot += n.all;
    totSvg += n.svg;
    console.log(`  ${n.view.padEnd(18)} ${String(n.all).padStart(6)} / ${String(n.svg).padStart(6)}`);
  }
  console.log(`  ${'all'.padEnd(18)} ${String(tot).padStart(6)} / ${String(totSvg).padStart(6)}`);

  await reset(page);
  const play = await traced(page, 'playback', async () => {
    const t = await page.evaluate(async () => {
      const el = document.querySelector('transformer-playground');
      const times = [];
      const seen = new Set();
      const t0 = performance.now();
      const p = el.store.gen.start(true);
      // The time each token first appears on screen: a frame after it landed.
      await new Promise((ok) => {
        const tick = () => {
          const n = el.generated.length;
          if (n && !seen.has(n)) {
            seen.add(n);
            times.push(performance.now());
          }
          if (el.done && !el.playing) ok();
          else requestAnimationFrame(tick);
        };
        requestAnimationFrame(tick);
      });
      await p;
      return { t0, times, n: el.generated.length, stats: el.stats };
    });
    return t;
  });
  const ex = play.extra;
  const perToken = (ex.times[ex.times.length - 1] - ex.times[0]) / Math.max(1, ex.times.length - 1);
  report(`playback of ${ex.n} tokens (every view on screen)`, play, await collect(page));
  console.log(`  main-thread time per token: ${f(play.cpu / ex.n, 2)} ms`);
  console.log(`  start → last token on screen: ${f(ex.times[ex.times.length - 1] - ex.t0)} ms, ${f((ex.times[ex.times.length - 1] - ex.t0) / ex.n, 2)} ms per token`);
  console.log(`  per token, frame to frame: ${f(perToken, 2)} ms (${ex.times.length} distinct frames); the page's own wall ms/token ${f(ex.stats.wallMsPerToken, 2)}, engine step ${f(ex.stats.engineMsPerToken, 2)} ms`);

  await page.waitForTimeout(500);
  await reset(page);
  const box = page.locator('tp-controls input[type="checkbox"]').first();
  const click = await traced(page, 'causal-click', async () => {
    await page.evaluate(() => {
      window.__lat = null;
      document.addEventListener(
        'click',
        (e) => {
          const t0 = e.timeStamp;
          requestAnimationFrame(() => setTimeout(() => (window.__lat = performance.now() - t0), 0));
        },
        { capture: true, once: true },
      );
    });
    const t0 = Date.now();
    await box.click();
    await page.waitForFunction(() => window.__lat !== null);
    // Settled: the forward pass is back and nothing is waiting to update.
    await page.waitForFunction(() => {
      const el = document.querySelector('transformer-playground');
      return el.st.causal === false && el.lastForward && el.playing === false;
    });
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    return { lat: await page.evaluate(() => window.__lat), settled: Date.now() - t0 };
  });
  report('one click on the causal-mask switch', click, await collect(page));
  console.log(`  click → next frame: ${f(click.extra.lat)} ms; click → settled: ${click.extra.settled} ms`);
  await page.close();
} finally {
  await browser.close();
  await server.close();
}
