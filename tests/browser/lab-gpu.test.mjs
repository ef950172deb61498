// The lab's runs on WebGPU in headless Chromium (SwiftShader's adapter):
// - a small reverse run with backend=webgpu trains on the GPU, says "WebGPU" in the run
//   table, and its loss curve is a CPU run's of the same settings and seed (1e-4 relative
//   per step; the held-out evaluations and the per-layer curves of the plots too);
// - a run whose GPU device is destroyed mid-run goes on on the CPU from the last step
//   copied back: every step once, in order, the CPU run's numbers, and the run says
//   "CPU: the GPU device was lost at step N" in the table;
// - backend=cpu never asks for the GPU, and says so;
// - backend=auto times the run's first steps on both (SwiftShader is far slower than the
//   CPU path), trains on the CPU and says why with both times per step in the run table;
//   its losses are the CPU run's, bit for bit (the race took none of the run's steps);
// - a NaN put into layer 2 of a WebGPU run (testOnlyNanAtLayer) stops the run at the next
//   step, found by the CPU taking that step again, and the page names the layer.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, openLab, serve, shot } from './harness.mjs';
import { assertStoppedAtLayer2, nanRunInPage } from './health-checks.mjs';

/** A GPU step's loss against the CPU's, relative. */
const TOL = 1e-4;
const SETTINGS = { task: 'reverse', steps: 50, batch: 4, eval_every: 25, seed: 3, dropout: 0.1 };
/**
 * Long enough that the first chunk (about 50 ms of steps) does not finish it; short enough
 * that float rounding, which two backends round differently and training amplifies step
 * by step, stays inside TOL (over 300 steps it reached 1.05e-4 at step 244).
 */
const LONG = { ...SETTINGS, steps: 60, eval_every: 20 };

let server;
let browser;
let page;
let errors;

/** Train in the page and wait for the end; the run as JSON and its summary. */
function trainInPage(settings) {
  return page.evaluate(async (settings) => {
    const el = document.querySelector('transformer-playground');
    const h = el.train(settings);
    const summary = await h.done;
    return { id: h.id, summary, run: JSON.parse(JSON.stringify(el.runs.find((r) => r.id === h.id))) };
  }, settings);
}

/** What the run's row says in the "runs on" column. */
async function backendCell(id) {
  const cell = page.locator(`tp-lab tr[data-run="${id}"] td[data-backend]`);
  await cell.waitFor();
  return { text: (await cell.innerText()).trim(), kind: await cell.getAttribute('data-backend'), title: await cell.getAttribute('title') };
}

/** The largest relative loss difference of two curves (a diagnostic beside the assertion). */
function worst(got, want) {
  return Math.max(...want.map((w, i) => Math.abs(got[i].loss - w.loss) / Math.abs(w.loss)));
}

function assertSameCurve(got, want) {
  assert.deepEqual(
    got.map((p) => p.step),
    want.map((p) => p.step),
  );
  for (let i = 0; i < want.length; i++) {
    const [g, w] = [got[i], want[i]];
    assert.ok(Math.abs(g.loss - w.loss) <= TOL * Math.abs(w.loss), `step ${w.step}: ${g.loss} vs ${w.loss}`);
    assert.equal(g.eval === null, w.eval === null, `step ${w.step}: evaluated on one backend only`);
    if (w.eval) assert.ok(Math.abs(g.eval.loss - w.eval.loss) <= TOL * Math.abs(w.eval.loss), `step ${w.step} held-out: ${g.eval.loss} vs ${w.eval.loss}`);
    // The per-layer curves too (the plots): as many layers, the same values. NaN-aware: a
    // NaN fails `<=` (and Math.max keeps it), on either side.
    for (const key of ['residual_norms', 'grad_norms']) {
      assert.equal(g[key].length, w[key].length, `step ${w.step}: ${key} per layer`);
      assert.ok(w[key].length > 0, `step ${w.step}: ${key} measured`);
      for (let l = 0; l < w[key].length; l++) assert.ok(Math.abs(g[key][l] - w[key][l]) <= TOL * Math.abs(w[key][l]), `step ${w.step} ${key}[${l}]: ${g[key][l]} vs ${w[key][l]}`);
    }
  }
}

/** The largest relative difference of the per-layer curves (a diagnostic). */
function worstLayer(got, want) {
  let m = 0;
  for (let i = 0; i < want.length; i++)
    for (const key of ['residual_norms', 'grad_norms']) for (let l = 0; l < want[i][key].length; l++) m = Math.max(m, Math.abs(got[i][key][l] - want[i][key][l]) / Math.abs(want[i][key][l]));
  return m;
}

describe('lab runs on WebGPU', () => {
  let cpu;
  before(async () => {
    server = await serve();
    browser = await launch({ webgpu: true });
    ({ page, errors } = await openLab(browser.context, server.url));
    cpu = await trainInPage({ ...SETTINGS, backend: 'cpu' });
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  test('a_cpu_run_says_it_runs_on_the_cpu_by_choice', async () => {
    assert.equal(cpu.summary.status, 'done');
    assert.equal(cpu.run.backend.kind, 'cpu_chosen');
    const cell = await backendCell(cpu.id);
    assert.equal(cell.kind, 'cpu_chosen');
    assert.match(cell.text, /^CPU/);
  });

  test('an_auto_run_on_swiftshader_trains_on_the_cpu_and_says_why_with_both_times', async (t) => {
    const auto = await trainInPage({ ...SETTINGS, backend: 'auto' });
    assert.equal(auto.summary.status, 'done', auto.run.error ?? '');
    const b = auto.run.backend;
    assert.equal(b.kind, 'cpu_faster', JSON.stringify(b));
    assert.ok(b.cpu_ms > 0 && b.gpu_ms > b.cpu_ms, `CPU ${b.cpu_ms} ms, WebGPU ${b.gpu_ms} ms per step`);
    assert.ok(b.parity >= 0 && b.parity <= TOL, `relative loss difference ${b.parity}`);
    assert.ok(b.adapter, 'the adapter is named');
    // The race took none of the run's steps: the CPU run's numbers, bit for bit.
    assert.deepEqual(
      auto.run.points.map((p) => p.loss),
      cpu.run.points.map((p) => p.loss),
    );
    const cell = await backendCell(auto.id);
    assert.equal(cell.kind, 'cpu_faster');
    // Both times as the page writes them (3 significant digits), and the ratio.
    const fmt = (x) => (x >= 1000 ? `${Number((x / 1000).toPrecision(3))} s` : `${Number(x.toPrecision(3))} ms`);
    const times = Number((b.gpu_ms / b.cpu_ms).toPrecision(2));
    assert.equal(cell.text, `CPU: WebGPU agrees but is ${times}× slower per step (CPU ${fmt(b.cpu_ms)}, WebGPU ${fmt(b.gpu_ms)})`);
    assert.match(cell.title, /largest relative difference/);
    t.diagnostic(`${b.adapter}: per step CPU ${b.cpu_ms} ms, WebGPU ${b.gpu_ms} ms; relative loss difference ${b.parity}`);
    await shot(page, 'lab-gpu-auto-cpu-faster');
  });

  test('a_webgpu_run_has_the_cpu_runs_loss_curve_and_says_webgpu', async (t) => {
    const gpu = await trainInPage({ ...SETTINGS, backend: 'webgpu' });
    assert.equal(gpu.summary.status, 'done', gpu.run.error ?? '');
    assert.equal(gpu.run.backend.kind, 'webgpu');
    assert.equal(gpu.run.points.length, SETTINGS.steps);
    assertSameCurve(gpu.run.points, cpu.run.points);
    t.diagnostic(`${SETTINGS.steps} steps on ${gpu.run.backend.adapter}: largest relative loss difference ${worst(gpu.run.points, cpu.run.points)}, per-layer curves ${worstLayer(gpu.run.points, cpu.run.points)}`);
    const cell = await backendCell(gpu.id);
    assert.equal(cell.text, 'WebGPU');
    assert.ok(cell.title, 'the cell names the adapter');
    await shot(page, 'lab-gpu-run');
  });

  test('a_device_lost_mid_run_goes_on_on_the_cpu_from_the_last_copy_back_and_says_so', async (t) => {
    const want = await trainInPage({ ...LONG, backend: 'cpu' });
    assert.equal(want.summary.status, 'done');
    const got = await page.evaluate(async (settings) => {
      const el = document.querySelector('transformer-playground');
      const h = el.train(settings);
      await h.started;
      // After the first chunk, between chunks: pause, destroy the device, resume.
      const paused = await new Promise((ok) => h.addEventListener('progress', () => ok(h.pause()), { once: true }));
      await paused;
      const run = () => el.runs.find((r) => r.id === h.id);
      const at = run().points.length;
      const kind = run().backend.kind;
      const lost = await el.testOnlyLoseRunGpu(h.id);
      await h.resume();
      const summary = await h.done;
      return { id: h.id, at, kind, lost, summary, run: JSON.parse(JSON.stringify(run())) };
    }, { ...LONG, backend: 'webgpu' });
    assert.equal(got.kind, 'webgpu', 'the run trained on the GPU before the loss');
    assert.equal(got.lost, true, 'the test hook found the run’s device');
    assert.ok(got.at >= 1 && got.at < LONG.steps, `paused after ${got.at} steps`);
    assert.equal(got.summary.status, 'done', got.run.error ?? '');
    const b = got.run.backend;
    assert.equal(b.kind, 'cpu_lost');
    assert.equal(b.step, got.at + 1, 'the first step after the pause failed on the GPU');
    assert.equal(b.from, got.at, 'the CPU went on from the last step reported');
    // Every step once, in order; the numbers of a CPU run of the same settings.
    assertSameCurve(got.run.points, want.run.points);
    t.diagnostic(`lost after step ${got.at} of ${LONG.steps}: largest relative loss difference ${worst(got.run.points, want.run.points)}`);
    const cell = await backendCell(got.id);
    assert.equal(cell.kind, 'cpu_lost');
    assert.equal(cell.text, `CPU: the GPU device was lost at step ${got.at + 1}`);
    assert.match(cell.title, new RegExp(`from step ${got.at}\\b`));
    await shot(page, 'lab-gpu-lost');
    assert.deepEqual(errors, []);
  });

  test('a_nan_put_into_layer_2_of_a_webgpu_run_stops_it_there_and_names_the_layer', async () => {
    const got = await nanRunInPage(page, { ...LONG, n_layers: 3, backend: 'webgpu' }, 1);
    assert.equal(got.kind, 'webgpu', 'the run trained on the GPU before the NaN');
    // The CPU took the step again from the last copy back and found where.
    assert.equal(got.run.backend.kind, 'cpu_lost');
    assertStoppedAtLayer2(got);
    assert.deepEqual(errors, []);
  });
});
