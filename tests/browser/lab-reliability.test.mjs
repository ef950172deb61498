// The lab when things go wrong, in headless Chromium:
// - a full storage quota (IndexedDB writes failing with QuotaExceededError) is reported in
//   words, on the page and in `labStorageError`, and nothing saved before is lost: after a
//   reload the run saved earlier is back with its name, curves and weights;
// - training keeps memory flat: after a warm-up, the run's worker's wasm memory, the page
//   engine's and the page's JS heap grow by at most 10% over the steps that follow (the
//   short form; `cargo xtask bench` runs 5,000 steps, tests/browser/lab-bench.mjs).
// A worker that dies mid-run and the run continuing from its saved step are
// lab-api.test.mjs's.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, open, serve, shot } from './harness.mjs';
import { describe as describeMemory, growth, trainingMemory } from './lab-memory.mjs';

let server;
let browser;
before(async () => {
  server = await serve();
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await server?.close();
});

/** SHA-256 of a run's exported weights, and its record as stored. */
const saved = (page, id) =>
  page.evaluate(async (id) => {
    const el = document.querySelector('transformer-playground');
    const r = el.runs.find((x) => x.id === id);
    if (!r) return null;
    const bytes = await (await el.exportRun(id)).arrayBuffer();
    const digest = [...new Uint8Array(await crypto.subtle.digest('SHA-256', bytes))].map((b) => b.toString(16).padStart(2, '0')).join('');
    return { name: r.name, status: r.status, losses: r.points.map((p) => p.loss), checkpoint_step: r.checkpoint_step, digest };
  }, id);

describe('the lab when storage and memory are tested', () => {
  test('a_full_storage_quota_is_reported_in_words_and_nothing_saved_before_is_lost', async () => {
    const { page, errors } = await open(browser.context, server.url, 'play=0&views=controls,lab');
    const first = await page.evaluate(async () => {
      const el = document.querySelector('transformer-playground');
      await el.runsRestored;
      for (const r of [...el.runs]) await el.deleteRun(r.id);
      const h = el.train({ task: 'copy', steps: 40, batch: 4, eval_every: 0, seed: 3 });
      await h.done;
      return h.id;
    });
    const before = await saved(page, first);
    assert.equal(before.status, 'done');
    assert.equal(before.losses.length, 40);
    assert.equal(before.checkpoint_step, 40);

    // From here on every IndexedDB write fails as a full disk makes it fail.
    await page.evaluate(() => {
      const put = IDBObjectStore.prototype.put;
      window.__unstub = () => (IDBObjectStore.prototype.put = put);
      IDBObjectStore.prototype.put = function () {
        throw new DOMException('The quota has been exceeded.', 'QuotaExceededError');
      };
    });
    const after = await page.evaluate(async (first) => {
      const el = document.querySelector('transformer-playground');
      await el.renameRun(first, 'renamed while the disk was full');
      const afterRename = el.labStorageError;
      const h = el.train({ task: 'copy', steps: 30, batch: 4, eval_every: 0, seed: 4 });
      const summary = await h.done;
      const alert = el.shadowRoot.querySelector('.error[role="alert"]')?.textContent ?? '';
      window.__unstub();
      return { afterRename, second: h.id, summary, storageError: el.labStorageError, alert, names: el.runs.map((r) => r.name) };
    }, first);
    // Reported, in words, naming the run and the browser's reason.
    assert.match(after.afterRename, /Run "renamed while the disk was full" could not be saved in this browser's storage \(The quota has been exceeded\.\)/);
    assert.match(after.storageError, /could not be saved in this browser's storage \(The quota has been exceeded\.\)/);
    assert.match(after.alert, /could not be saved in this browser's storage \(The quota has been exceeded\.\)/, 'the page shows it');
    // The run that could not be saved still trained, and stays on this page.
    assert.equal(after.summary.status, 'done');
    assert.equal(after.summary.step, 30);
    assert.ok(after.names.includes('renamed while the disk was full'));
    await shot(page, 'lab-quota-full');

    // After a reload: what was saved before the disk filled is all there, unchanged.
    await page.reload();
    await page.waitForFunction(() => customElements.get('transformer-playground') !== undefined);
    await page.evaluate(() => document.querySelector('transformer-playground').ready);
    await page.evaluate(() => document.querySelector('transformer-playground').runsRestored);
    const back = await saved(page, first);
    assert.deepEqual(back, before, 'the saved run is back with its name, curves and weights');
    const ids = await page.evaluate(() => document.querySelector('transformer-playground').runs.map((r) => r.id));
    assert.deepEqual(ids, [first], 'the run never saved is not invented');
    assert.deepEqual(
      errors.filter((e) => !/lab:|playground:/.test(e)),
      [],
    );
    await page.evaluate(async (id) => document.querySelector('transformer-playground').deleteRun(id), first);
    await page.close();
  });

  test('a_run_saved_with_its_points_as_objects_comes_back_with_the_same_curves', async () => {
    // Runs kept by an earlier version of the page hold `points` as an array of objects;
    // they load into the columns unchanged, and save back in the new form.
    const { page, errors } = await open(browser.context, server.url, 'play=0&views=controls,lab');
    const points = [1, 2, 3].map((step) => ({
      step,
      loss: 3 - step / 4,
      lr: 1e-3 * step,
      grad_norm: 0.5 + step,
      elapsed_ms: 10 * step,
      eval: step === 2 ? { loss: 2.25, metric: 0.5, metric_name: 'exact_match' } : null,
      residual_norms: [1.5, 2.5],
      grad_norms: [0.25, Number.NaN],
    }));
    const old = await page.evaluate(async () => {
      const el = document.querySelector('transformer-playground');
      await el.runsRestored;
      for (const r of [...el.runs]) await el.deleteRun(r.id);
      return (await el.runDefaults('copy')).settings;
    });
    const record = { id: 'run-old-form', name: 'kept as objects', settings: old, points, status: 'stopped', error: null, steps_per_s: 1, elapsed_ms: 30, created_at: 1, hidden: false, checkpoint_step: null, command: [] };
    await page.evaluate(
      (record) =>
        new Promise((ok, fail) => {
          const req = indexedDB.open('tplay-lab');
          req.onerror = () => fail(req.error);
          req.onsuccess = () => {
            const tx = req.result.transaction('runs', 'readwrite');
            tx.objectStore('runs').put(record, `rec:${record.id}`);
            tx.oncomplete = () => ok();
            tx.onerror = () => fail(tx.error);
          };
        }),
      record,
    );
    await page.reload();
    const back = await page.evaluate(async () => {
      const el = document.querySelector('transformer-playground');
      await el.ready;
      await el.runsRestored;
      const r = el.runs.find((x) => x.id === 'run-old-form');
      // NaN does not survive JSON: compare it apart.
      return r && { name: r.name, points: r.points.map((p) => ({ ...p, grad_norms: p.grad_norms.map((g) => (Number.isNaN(g) ? 'NaN' : g)) })), csv: await el.exportRunCsv(r.id).text() };
    });
    assert.ok(back, 'the run is back');
    assert.equal(back.name, 'kept as objects');
    assert.deepEqual(
      back.points,
      // The health watch's every-tenth-step measures are not kept per row: empty read back.
      points.map((p) => ({ ...p, grad_norms: [0.25, 'NaN'], update_ratios: [], attn_entropy: [] })),
    );
    assert.equal(back.csv.trim().split('\n').length, 4, 'a header and three steps');
    await page.evaluate(async () => document.querySelector('transformer-playground').deleteRun('run-old-form'));
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('training_in_the_page_keeps_wasm_memory_and_the_js_heap_within_ten_percent_after_warm_up', async () => {
    const { page, errors } = await open(browser.context, server.url, 'play=0&views=controls,lab');
    // Warmed up past the length at which the plots start thinning their lines (tp-lab.ts,
    // MAX_LINE_POINTS): what grows after that is the run's own record of every step.
    const m = await trainingMemory(page, { warmup: 1300, steps: 600 });
    console.log(`lab memory (short form): ${describeMemory(m)}`);
    assert.ok(m.end.step - m.start.step >= 600);
    assert.ok(growth(m.start.runWasm, m.end.runWasm) <= 0.1, `training worker wasm memory: ${describeMemory(m)}`);
    assert.ok(growth(m.start.engineWasm, m.end.engineWasm) <= 0.1, `page engine wasm memory: ${describeMemory(m)}`);
    assert.ok(growth(m.start.heap, m.end.heap) <= 0.1, `page JS heap: ${describeMemory(m)}`);
    assert.deepEqual(errors, []);
    await page.close();
  });
});
