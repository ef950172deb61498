// The lab's figures for `cargo xtask bench` (a program that prints numbers; it asserts
// nothing about time), in headless Chromium with every view of the page drawn:
// 1. el.train({task: 'reverse'}) with the shipped defaults (the recipe and its evaluation
//    cadence), from the call to the first held-out score ≥ 99% exact match, with the lab in
//    view drawing its plots, several times (TPLAY_LAB_REVERSE_RUNS, default 3): wall time,
//    steps, steps/s, and the time spent evaluating (the click latency while a run trains is
//    lab-view-bench.mjs's); every row ends with the machine's load averages and each
//    figure with a target prints it beside the figure. TPLAY_LAB_ONLY=reverse stops here;
// 2. training speed in the page against the native trainer (`tplay train`, the release
//    binary) on the same settings: reverse and the grammar ALiBi recipe. The grammar
//    recipe takes minutes, so its page time to the threshold is extrapolated from the
//    steps/s measured both ways and the recipe's step count, and printed as such;
//    With TPLAY_LAB_GRAMMAR_FULL=1 the whole grammar recipe is also run both ways and timed.
// 3. memory over 5,000 training steps (TPLAY_LAB_MEMORY_STEPS) after a 500-step warm-up:
//    the run's worker's wasm memory, the page engine's and the page's JS heap.

import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { launch, open, root, serve } from './harness.mjs';
import { describe as describeMemory, trainingMemory } from './lab-memory.mjs';

const REVERSE_RUNS = Number(process.env.TPLAY_LAB_REVERSE_RUNS ?? 3);
const MEMORY_STEPS = Number(process.env.TPLAY_LAB_MEMORY_STEPS ?? 5000);

const f = (x, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : 'n/a');
/** The machine's load averages (1, 5, 15 min), printed beside every figure. */
const load = () => `load ${loadavg().map((x) => x.toFixed(2)).join(' ')}`;
/** The #29 targets. */
const REVERSE_TARGET_S = 15;
const GRAMMAR_TARGET_RATIO = 1.3;

function tplayBin() {
  const candidates = [process.env.TPLAY_BIN, join(root, 'target/release/tplay'), join(root, 'target/debug/tplay')].filter(Boolean);
  const bin = candidates.find((p) => existsSync(p));
  if (!bin) throw new Error(`no tplay binary (cargo build --release -p tplay, or set TPLAY_BIN); looked at ${candidates.join(', ')}`);
  return bin;
}

/** Native steps/s of `tplay train` with the run's own flags, for `steps` steps. */
function nativeSpeed(command, steps) {
  const dir = mkdtempSync(join(tmpdir(), 'tplay-lab-bench-'));
  try {
    const args = [...command];
    const i = args.indexOf('--steps');
    args[i + 1] = String(steps);
    const log = join(dir, 'log.jsonl');
    execFileSync(tplayBin(), ['train', ...args, '--out', join(dir, 'm.safetensors'), '--log', log, '--eval-examples', '1'], { cwd: root, stdio: 'ignore' });
    const lines = readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .filter((l) => l.loss !== undefined);
    // Steps/s after the first 10 steps (the allocator and caches warm up).
    const a = lines[9];
    const b = lines[lines.length - 1];
    return (b.step - a.step) / (b.elapsed_s - a.elapsed_s);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Page steps/s for `steps` steps of a task's recipe (no evaluation), after 10 warm-up steps. */
async function pageSpeed(page, task, steps) {
  return page.evaluate(
    async ({ task, steps }) => {
      const el = document.querySelector('transformer-playground');
      const h = el.train({ task, steps, eval_every: 0 });
      await h.done.catch(() => undefined);
      const run = el.runs.find((r) => r.id === h.id);
      const pts = run.points;
      const a = pts[9];
      const b = pts[pts.length - 2]; // the last point also carries the final evaluation
      await el.deleteRun(h.id);
      return { sps: (b.step - a.step) / ((b.elapsed_ms - a.elapsed_ms) / 1000), command: run.command };
    },
    { task, steps },
  );
}

const server = await serve();
const browser = await launch();
try {
  const { page } = await open(browser.context, server.url, 'play=0&chapter=all');
  console.log('## The lab: training in the page (headless Chromium, wasm on the CPU, every view drawn)');
  console.log();
  const d = await page.evaluate(() => document.querySelector('transformer-playground').runDefaults('reverse'));
  // The lab in view, so its plots draw while the runs train.
  await page.evaluate(() => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-lab').scrollIntoView());
  await page.waitForFunction(() => customElements.get('tp-lab') && document.querySelector('transformer-playground').shadowRoot.querySelector('tp-lab').form);
  const reverseOnce = () => page.evaluate(async (threshold) => {
    const el = document.querySelector('transformer-playground');
    const t0 = performance.now();
    // The shipped defaults: nothing but the task.
    const h = el.train({ task: 'reverse' });
    let reached = null;
    let prevMs = null;
    let stepMs = 0;
    let evalMs = 0;
    h.addEventListener('progress', (e) => {
      for (const p of e.detail.points) {
        // A point's compute time includes its evaluation: the excess over the step before
        // it is the evaluation's cost.
        if (prevMs !== null) {
          const dt = p.elapsed_ms - prevMs;
          if (p.eval) evalMs += Math.max(0, dt - stepMs);
          else stepMs = dt;
        }
        prevMs = p.elapsed_ms;
        if (p.eval && reached === null && p.eval.metric >= threshold) {
          reached = { step: p.step, metric: p.eval.metric, wall: (performance.now() - t0) / 1000, compute: p.elapsed_ms / 1000, evalS: evalMs / 1000 };
          void h.stop();
        }
      }
    });
    const s = await h.done;
    const run = el.runs.find((r) => r.id === h.id);
    const drawn = el.shadowRoot.querySelector('tp-lab').shadowRoot.querySelectorAll('tp-lab-plot').length;
    await el.deleteRun(h.id);
    return { reached, s, drawn, evalEvery: run.settings.eval_every, steps: run.settings.steps };
  }, d.threshold);
  const walls = [];
  for (let i = 0; i < REVERSE_RUNS; i++) {
    const rev = await reverseOnce();
    if (rev.reached) {
      walls.push(rev.reached.wall);
      console.log(
        `reverse run ${i + 1} (el.train({task: 'reverse'}): ${rev.steps} steps, scored every ${rev.evalEvery}, ${rev.drawn} plots drawing): exact match ${rev.reached.metric} ≥ ${d.threshold} at step ${rev.reached.step} ` +
          `in ${f(rev.reached.wall)} s wall (target ≤ ${REVERSE_TARGET_S} s: ${rev.reached.wall <= REVERSE_TARGET_S ? 'met' : 'missed'}; ${f(rev.reached.compute)} s of compute in the worker, ` +
          `of which about ${f(rev.reached.evalS)} s evaluating; ${f(rev.s.steps_per_s)} steps/s) · ${load()}`,
      );
    } else {
      console.log(`reverse run ${i + 1} (el.train({task: 'reverse'})): exact match stayed below ${d.threshold} for ${rev.s.step} steps (${f(rev.s.seconds)} s) · ${load()}`);
    }
  }
  if (walls.length) console.log(`reverse to ≥ ${d.threshold}: ${walls.length} of ${REVERSE_RUNS} runs reached it; wall time min ${f(Math.min(...walls))} s, max ${f(Math.max(...walls))} s (target ≤ ${REVERSE_TARGET_S} s) · ${load()}`);
  console.log();
  const onlyReverse = process.env.TPLAY_LAB_ONLY === 'reverse';
  if (!onlyReverse) {
    console.log('| recipe | page steps/s | native steps/s | native ÷ page | load (1, 5, 15 min) |');
    console.log('|---|---:|---:|---:|---|');
    const rows = [];
    for (const [task, steps] of [
      ['reverse', 200],
      ['grammar', 120],
    ]) {
      const p = await pageSpeed(page, task, steps);
      const n = nativeSpeed(p.command, steps);
      rows.push({ task, page: p.sps, native: n, recipeSteps: (await page.evaluate((t) => document.querySelector('transformer-playground').runDefaults(t), task)).settings.steps });
      console.log(`| ${task} | ${f(p.sps)} | ${f(n)} | ${f(n / p.sps, 2)} | ${load().slice(5)} |`);
    }
    const g = rows.find((r) => r.task === 'grammar');
    console.log();
    console.log(
      `grammar (ALiBi recipe, ${g.recipeSteps} steps to its shipped threshold): extrapolated from the steps/s above, ` +
        `${f(g.recipeSteps / g.page, 0)} s in the page against ${f(g.recipeSteps / g.native, 0)} s natively (${f(g.native / g.page, 2)}×; target within ${GRAMMAR_TARGET_RATIO}×: ${g.native / g.page <= GRAMMAR_TARGET_RATIO ? 'met' : 'missed'}). ` +
        `Extrapolated, not measured: the full run takes minutes. · ${load()}`,
    );
    console.log(`native binary: ${tplayBin()}`);
    console.log();
    if (process.env.TPLAY_LAB_GRAMMAR_FULL === '1') {
      // The whole grammar recipe both ways, measured rather than extrapolated (minutes).
      const full = await page.evaluate(async () => {
        const el = document.querySelector('transformer-playground');
        const t0 = performance.now();
        const h = el.train({ task: 'grammar', eval_every: 0 });
        const s = await h.done;
        const wall = (performance.now() - t0) / 1000;
        const run = el.runs.find((r) => r.id === h.id);
        const last = run.points[run.points.length - 1];
        await el.deleteRun(h.id);
        const { threshold } = await el.runDefaults('grammar');
        return { wall, steps: s.step, metric: last.eval?.metric ?? null, threshold, command: run.command };
      });
      const dir = mkdtempSync(join(tmpdir(), 'tplay-lab-bench-'));
      try {
        const t0 = Date.now();
        const out = JSON.parse(execFileSync(tplayBin(), ['train', ...full.command, '--out', join(dir, 'm.safetensors')], { cwd: root, stdio: ['ignore', 'pipe', 'ignore'] }).toString());
        const nativeWall = (Date.now() - t0) / 1000;
        console.log(
          `grammar (ALiBi recipe), the whole run measured: ${full.steps} steps in ${f(full.wall)} s in the page (final metric ${f(full.metric, 3)}, threshold ${full.threshold}) ` +
            `against ${f(out.seconds)} s of training natively (${f(nativeWall)} s with start-up and the final evaluation; metric ${f(out.eval?.accuracy ?? NaN, 3)}): ` +
            `${f(full.wall / nativeWall, 2)}× (target within ${GRAMMAR_TARGET_RATIO}×) · ${load()}`,
        );
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
      console.log();
    }
    // Memory over a long run (the short form is lab-reliability.test.mjs's).
    const mem = await trainingMemory(page, { warmup: 500, steps: MEMORY_STEPS });
    console.log(`lab memory, the reverse recipe with the lab drawing (long form): ${describeMemory(mem)} · ${load()}`);
  }
} finally {
  await browser.close();
  await server.close();
}
