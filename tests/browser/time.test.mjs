// The `time` view in headless Chromium with WebGPU (SwiftShader): the engine measures this
// device (`timeRates`) and the lab's reverse model at two widths (`timeWidth`) on the CPU
// and the GPU. Checked against the core's answers the view holds: every row of the table
// shows the core's time, counts and parts; the parts are recomputed here from the rates
// and the counts (arithmetic = 2 · multiply-adds at the measured FLOP/s, submissions and
// dispatches at their measured cost, the rest what the step leaves); the crossing each
// chart marks is recomputed here from the measured times; a GPU step counts its
// submissions and dispatches. The Chinese page leaves no English in the view.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { artifacts, englishLeft, launch, open, serve } from './harness.mjs';

let server;
let browser;
before(async () => {
  server = await serve();
  browser = await launch({ webgpu: true });
});
after(async () => {
  await browser?.close();
  await server?.close();
});

const TOP = 32;

/** Measure up to `top` in the open view, and return what the view holds and shows. */
async function measured(page, top = TOP) {
  await page.waitForFunction(() => customElements.get('tp-time') !== undefined, null, { timeout: 60000 });
  await page.evaluate((top) => {
    const v = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-time');
    void v.measure(top);
  }, top);
  await page.waitForFunction(
    (top) => {
      const v = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-time');
      let n = 0;
      for (let w = 16; w <= top; w *= 2) n++;
      return v && !v.busy && v.top === top && v.widths.length === n;
    },
    top,
    { timeout: 240000 },
  );
  return page.evaluate(() => {
    const v = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-time');
    const root = v.shadowRoot;
    return {
      problem: v.problem,
      rates: v.rates,
      widths: v.widths,
      rows: [...root.querySelectorAll('tr[data-kind]')].map((r) => ({ ...r.dataset, cells: [...r.cells].map((c) => c.textContent.trim()) })),
      bars: [...root.querySelectorAll('.bar')].map((b) => ({ ...b.dataset })),
      captions: [...root.querySelectorAll('figcaption')].map((f) => ({ kind: f.closest('figure').dataset.kind, crossing: f.dataset.crossing, at: f.dataset.crossingAt, text: f.textContent.trim() })),
      gflops: Number(root.querySelector('[data-gflops]')?.dataset.gflops),
      overhead: root.querySelector('[data-overhead]')?.textContent.trim() ?? '',
    };
  });
}

/** Where the GPU's time first falls below the CPU's, placed between two widths on log scales. */
function crossing(ws, cpu, gpu) {
  if (gpu[0] < cpu[0]) return { kind: 'gpu', at: null };
  for (let i = 1; i < ws.length; i++) {
    if (gpu[i] < cpu[i]) {
      const a = Math.log(gpu[i - 1] / cpu[i - 1]);
      const b = Math.log(gpu[i] / cpu[i]);
      const t = a / (a - b);
      return { kind: 'crosses', at: Math.exp(Math.log(ws[i - 1]) + t * (Math.log(ws[i]) - Math.log(ws[i - 1]))) };
    }
  }
  return { kind: 'cpu', at: null };
}

const close = (a, b) => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b));

describe('the time view', () => {
  test('each step is its measured time, its counts and its parts, and the crossing is where the times cross', async () => {
    const { page, errors } = await open(browser.context, server.url, 'play=0&views=time', { viewport: { width: 1280, height: 900 } });
    const got = await measured(page);
    assert.equal(got.problem, '');
    const { rates, widths } = got;
    assert.ok(rates.cpu_gflops > 0, JSON.stringify(rates));
    assert.ok(rates.gpu, `WebGPU measured: ${rates.gpu_error}`);
    assert.ok(rates.gpu.round_trip_ms > 0 && rates.gpu.dispatch_ms >= 0);
    assert.equal(got.gflops, rates.cpu_gflops);
    assert.deepEqual(
      widths.map((w) => w.d_model),
      [16, 32],
    );
    for (const w of widths) {
      assert.equal(w.gpu_error, null, w.gpu_error);
      assert.equal(w.d_ff, 4 * w.d_model);
      for (const [kind, backend, s] of [
        ['decode', 'cpu', w.decode_cpu],
        ['decode', 'gpu', w.decode_gpu],
        ['train', 'cpu', w.train_cpu],
        ['train', 'gpu', w.train_gpu],
      ]) {
        assert.ok(s && s.ms > 0, `${kind} ${backend} at ${w.d_model}`);
        const part = (k) => s.parts.find((p) => p.kind === k)?.ms;
        const estimated = s.parts.filter((p) => p.kind !== 'rest').reduce((a, p) => a + p.ms, 0);
        assert.ok(close(part('rest'), Math.max(0, s.ms - estimated)), `${kind} ${backend}: the rest is what the parts leave`);
        if (backend === 'cpu') {
          assert.ok(close(part('arithmetic'), (2 * s.multiply_adds) / (rates.cpu_gflops * 1e6)), 'arithmetic at the measured rate');
          assert.equal(s.submissions, 0);
        } else {
          assert.ok(s.submissions >= 1 && s.dispatches >= 4 * w.layers, `${kind}: ${s.submissions} submissions, ${s.dispatches} dispatches`);
          assert.ok(close(part('submissions'), s.submissions * rates.gpu.round_trip_ms));
          assert.ok(close(part('dispatches'), s.dispatches * rates.gpu.dispatch_ms));
        }
      }
      assert.ok(w.train_gpu.dispatches > 2 * w.decode_gpu.dispatches);
    }
    // The table shows the chosen width (the smallest): the core's numbers, row by row.
    assert.equal(got.rows.length, 4);
    const w0 = widths[0];
    for (const r of got.rows) {
      assert.equal(Number(r.width), w0.d_model);
      const s = w0[`${r.kind}_${r.backend}`];
      assert.equal(Number(r.ms), s.ms);
      assert.equal(Number(r.macs), s.multiply_adds);
      assert.equal(Number(r.bytes), s.bytes);
      assert.equal(Number(r.dispatches), s.dispatches);
      assert.equal(Number(r.partRest), s.parts.find((p) => p.kind === 'rest').ms);
      assert.ok(r.cells[2].replace(/\D/g, '') === String(Math.round(s.multiply_adds)), `${r.cells[2]} shows ${s.multiply_adds}`);
    }
    assert.equal(got.bars.length, 4);
    // Each chart's crossing, recomputed from the measured times.
    for (const kind of ['decode', 'train']) {
      const c = got.captions.find((x) => x.kind === kind);
      const want = crossing(
        widths.map((w) => w.d_model),
        widths.map((w) => w[`${kind}_cpu`].ms),
        widths.map((w) => w[`${kind}_gpu`].ms),
      );
      assert.equal(c.crossing, want.kind, `${kind}: ${c.text}`);
      if (want.kind === 'crosses') {
        assert.ok(Math.abs(Number(c.at) - want.at) < 1e-6 * want.at);
        assert.ok(c.text.includes(String(Math.round(want.at))), c.text);
      } else {
        assert.ok(c.text.includes(String(want.kind === 'cpu' ? widths[1].d_model : widths[0].d_model)), c.text);
      }
    }
    // The GPU note's counts are the smallest width's.
    assert.ok(got.overhead.includes(String(w0.d_model)), got.overhead);
    await page.locator('transformer-playground').evaluate((el) => el.shadowRoot.querySelector('tp-time').scrollIntoView());
    await page.screenshot({ path: join(artifacts, 'time-desktop.png'), fullPage: false });
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('a bad width is refused in words; the Chinese page leaves no English in the view', async () => {
    const { page, errors } = await open(browser.context, server.url, 'play=0&views=time&lang=zh-Hans', { viewport: { width: 390, height: 844 } });
    await measured(page, 16);
    const bad = await page.evaluate(async () => {
      const el = document.querySelector('transformer-playground');
      try {
        await el.store.call('timeWidth', { d_model: 33, rates: { cpu_gflops: 1, gpu: null, gpu_error: null } });
        return 'accepted';
      } catch (e) {
        return e.message;
      }
    });
    assert.match(bad, /d_model.*33/);
    await page.locator('transformer-playground').evaluate((el) => el.shadowRoot.querySelector('tp-time').scrollIntoView());
    await page.screenshot({ path: join(artifacts, 'time-phone-zh.png'), fullPage: false });
    const left = await englishLeft(page);
    assert.deepEqual(left, []);
    assert.deepEqual(errors, []);
    await page.close();
  });
});
