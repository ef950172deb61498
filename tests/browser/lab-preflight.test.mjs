// Before a run starts, the lab compares what it will need (the engine's runFootprint) with
// what this device offers, and refuses a run that would fail halfway (src/lab/preflight.ts):
// - the estimate holds against a real run: its worker's measured wasm memory is below the
//   estimate, and the estimate is not wildly above it;
// - on a device that reports little memory (navigator.deviceMemory, stubbed), a run too large
//   is refused through the scripting API and through the form, with the reason and the
//   largest batch that fits (worked out here from the engine's own footprints); the form's
//   offer trains that batch;
// - a run that insists on WebGPU whose largest buffer the adapter cannot bind (its limits,
//   stubbed) is refused with both sizes and the batch that fits; `auto` is not;
// - a checkpoint too large for such a device is refused before the engine reads it;
// - a nearly full storage quota (navigator.storage.estimate, stubbed) refuses a run whose
//   saved weights do not fit, saying how much they need and how much is left.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, openLab, serve, shot } from './harness.mjs';

// A model large enough that the worker's own baseline does not decide the comparison.
const BIG = { task: 'reverse', d_model: 256, n_heads: 4, d_ff: 1024, n_layers: 4, batch: 8, steps: 3, eval_every: 0, backend: 'cpu' };
const GIB = 1024 ** 3;

describe('the lab checks the device before a run starts', () => {
  let server;
  let browser;
  let page;
  let errors;
  before(async () => {
    server = await serve();
    browser = await launch();
    // The device's answers, set by each test (undefined: the browser's own).
    await browser.context.addInitScript(() => {
      const mem = Object.getOwnPropertyDescriptor(Navigator.prototype, 'deviceMemory');
      Object.defineProperty(Navigator.prototype, 'deviceMemory', {
        configurable: true,
        get() {
          return globalThis.__tplayDeviceMemory ?? mem?.get?.call(this);
        },
      });
      // A WebGPU adapter with the limits a test sets (the page's pre-flight reads them; the engine's worker has its own navigator).
      Object.defineProperty(Navigator.prototype, 'gpu', {
        configurable: true,
        get() {
          const bind = globalThis.__tplayGpuBind;
          return bind === undefined ? undefined : { requestAdapter: async () => ({ limits: { maxStorageBufferBindingSize: bind, maxBufferSize: 4 * bind } }) };
        },
      });
      const estimate = StorageManager.prototype.estimate;
      StorageManager.prototype.estimate = function () {
        return globalThis.__tplayQuota !== undefined ? Promise.resolve({ quota: globalThis.__tplayQuota, usage: 0 }) : estimate.call(this);
      };
    });
    ({ page, errors } = await openLab(browser.context, server.url));
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  test('the estimate is above what a run was measured to hold, and within four times of it', async () => {
    const r = await page.evaluate(async (settings) => {
      const el = document.querySelector('transformer-playground');
      const fp = await el.runFootprint(settings);
      const h = el.train(settings);
      await h.started;
      let peak = 0;
      const probe = setInterval(async () => {
        try {
          peak = Math.max(peak, (await el.runMemoryUse(h.id)).wasm_bytes);
        } catch {
          // the run has ended
        }
      }, 20);
      h.addEventListener('progress', async () => {
        try {
          peak = Math.max(peak, (await el.runMemoryUse(h.id)).wasm_bytes);
        } catch {
          // the run has ended
        }
      });
      await h.pause();
      peak = Math.max(peak, (await el.runMemoryUse(h.id)).wasm_bytes);
      await h.stop();
      clearInterval(probe);
      await el.deleteRun(h.id);
      return { fp, peak };
    }, { ...BIG, steps: 100000 });
    console.log(`# estimate ${(r.fp.memory_bytes / 1e6).toFixed(1)} MB for ${r.fp.params} parameters; the run's worker held ${(r.peak / 1e6).toFixed(1)} MB of wasm memory`);
    assert.ok(r.fp.params > 2e6, `a large model: ${r.fp.params}`);
    assert.ok(r.peak > 0);
    assert.ok(r.fp.memory_bytes >= r.peak, `the estimate ${r.fp.memory_bytes} B is at least the measured ${r.peak} B`);
    assert.ok(r.fp.memory_bytes <= 4 * r.peak, `the estimate ${r.fp.memory_bytes} B is within 4× of the measured ${r.peak} B`);
  });

  test('on a device with little memory a run too large is refused with the reason and the batch that fits, and the offer trains it', async () => {
    const fp = await page.evaluate(async (settings) => {
      const el = document.querySelector('transformer-playground');
      const out = [];
      for (let b = 1; b <= settings.batch; b++) out.push((await el.runFootprint({ ...settings, batch: b })).memory_bytes);
      return out;
    }, BIG);
    // Room between the batch of 3 and the batch of 4: the largest batch that fits is 3.
    const room = (fp[2] + fp[3]) / 2;
    const gib = (2 * room) / GIB;
    const want = fp.filter((m) => m <= room).length;
    assert.equal(want, 3, `the footprints grow with the batch: ${fp.join(', ')}`);
    // Through the scripting API.
    const api = await page.evaluate(async ({ settings, gib }) => {
      globalThis.__tplayDeviceMemory = gib;
      const el = document.querySelector('transformer-playground');
      const h = el.train(settings);
      try {
        await h.started;
        return { started: true };
      } catch (e) {
        return { started: false, message: e.message, runs: el.runs.length };
      }
    }, { settings: BIG, gib });
    assert.equal(api.started, false);
    assert.match(api.message, /This run needs about [\d.]+ MB of memory while it trains; this device allows [\d.]+ MB \(half of the [\d.]+ MB of memory this browser reports\)\. A batch of 3 fits\./, api.message);
    assert.equal(api.runs, 0, 'nothing was kept of the refused run');
    // Through the form (its own evaluation cadence): its Train button, then the offer's.
    const { eval_every: _, ...form } = BIG;
    await page.evaluate((settings) => {
      const lab = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-lab');
      lab.form = { ...lab.form, ...settings };
      lab.requestUpdate();
    }, form);
    await page.locator('tp-lab [data-action="train"]').click();
    const alert = page.locator('tp-lab [data-error]');
    await alert.waitFor();
    const said = await alert.innerText();
    assert.match(said, /^The run could not start: This run needs about .* this device allows .* A batch of 3 fits\./s, said);
    assert.doesNotMatch(said, /stopped with an error/);
    await shot(page, 'lab-preflight-refused');
    await page.locator('tp-lab [data-offer="3"]').click();
    const run = await page.waitForFunction(() => {
      const el = document.querySelector('transformer-playground');
      const r = el.runs.find((x) => x.points.length > 0);
      return r ? { batch: r.settings.batch, d_model: r.settings.d_model, status: r.status } : null;
    }, null, { timeout: 60000 });
    const got = await run.jsonValue();
    assert.equal(got.batch, 3, 'the offered batch trains');
    assert.equal(got.d_model, 256, 'with the rest of the form as it was');
    await page.evaluate(async () => {
      globalThis.__tplayDeviceMemory = undefined;
      const el = document.querySelector('transformer-playground');
      for (const r of [...el.runs]) await el.deleteRun(r.id);
    });
  });

  test('a checkpoint too large for the device is refused before it is loaded, and the model in use stays', async () => {
    const r = await page.evaluate(async () => {
      const el = document.querySelector('transformer-playground');
      const before = el.info.params;
      const bytes = new Uint8Array(await (await fetch(new URL('models/reverse.safetensors', location.href))).arrayBuffer());
      // A device that reports 0.0001 GiB: about 54 kB for a run or a model.
      globalThis.__tplayDeviceMemory = 0.0001;
      try {
        await el.loadCheckpoint(bytes);
        return { loaded: true };
      } catch (e) {
        return { loaded: false, message: e.message, size: bytes.length, before, after: el.info.params, custom: el.customModel };
      } finally {
        globalThis.__tplayDeviceMemory = undefined;
      }
    });
    assert.equal(r.loaded, false);
    assert.match(r.message, /This model needs about [\d.]+ kB of memory to load; this device allows 54 kB \(half of the 107 kB of memory this browser reports\)\./, r.message);
    assert.equal(r.after, r.before, 'the model in use is unchanged');
    assert.equal(r.custom, '');
  });

  test('a run insisting on webgpu whose largest buffer the adapter cannot bind is refused with both sizes and the batch that fits; auto is not refused', async () => {
    const r = await page.evaluate(async () => {
      const el = document.querySelector('transformer-playground');
      const largest = [];
      for (let b = 1; b <= 8; b++) largest.push((await el.runFootprint({ task: 'reverse', batch: b })).largest_buffer_bytes);
      // Room between the batch of 5 and the batch of 6.
      globalThis.__tplayGpuBind = Math.floor((largest[4] + largest[5]) / 2);
      const out = { largest, bind: globalThis.__tplayGpuBind };
      try {
        const h = el.train({ task: 'reverse', batch: 8, backend: 'webgpu' });
        try {
          await h.started;
          out.webgpu = 'started';
        } catch (e) {
          out.webgpu = e.message;
        }
        const a = el.train({ task: 'reverse', batch: 8, steps: 2, eval_every: 0, backend: 'auto' });
        await a.started;
        await a.done;
        out.auto = el.runs.find((x) => x.id === a.id)?.status;
        await el.deleteRun(a.id);
      } finally {
        globalThis.__tplayGpuBind = undefined;
      }
      return out;
    });
    const fits = r.largest.filter((x) => x <= r.bind).length;
    assert.equal(fits, 5, `the largest buffer grows with the batch: ${r.largest.join(', ')}`);
    assert.match(r.webgpu, /This run's largest GPU buffer needs [\d.]+ kB; this browser's WebGPU adapter binds at most [\d.]+ kB per buffer\. Choose auto or the CPU to train it there\. A batch of 5 fits\./, r.webgpu);
    assert.equal(r.auto, 'done', 'auto is not refused: it trains where it can');
  });

  test('a storage quota nearly full refuses a run whose saved weights do not fit, saying both sizes', async () => {
    const r = await page.evaluate(async () => {
      globalThis.__tplayQuota = 1000;
      const el = document.querySelector('transformer-playground');
      const fp = await el.runFootprint({ task: 'copy' });
      const h = el.train({ task: 'copy' });
      try {
        await h.started;
        return { started: true };
      } catch (e) {
        return { started: false, message: e.message, storage: fp.storage_bytes };
      } finally {
        globalThis.__tplayQuota = undefined;
      }
    });
    assert.equal(r.started, false);
    assert.ok(r.storage > 1000);
    assert.match(r.message, /This run's saved weights need [\d.]+ kB; the browser's storage has 1\.0 kB left\./, r.message);
    assert.deepEqual(errors, []);
  });
});
