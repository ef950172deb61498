// The lab's scripting API in headless Chromium (www/README.md, "The lab"):
// - a run trained in the page takes the same steps as `tplay train` with the run's own
//   flags (loss per step within 1e-5 relative);
// - the reverse recipe trained from scratch through el.train reaches its shipped threshold;
// - pause, step-once, resume and stop act between chunks;
// - a run used as the model generates the reversed string; export → import gives
//   identical logits;
// - a truncated, a random-bytes, a hostile-config and an oversized file are each refused
//   with the loader's message, and the model and the runs stay as they were;
// - settings that do not fit the task are refused by field;
// - the runs (settings, curves, weights) are back after a reload.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launch, open, root, serve, shot } from './harness.mjs';

function tplayBin() {
  const candidates = [process.env.TPLAY_BIN, join(root, 'target/debug/tplay'), join(root, 'target/release/tplay')].filter(Boolean);
  const bin = candidates.find((p) => existsSync(p));
  assert.ok(bin, `no tplay binary (build it with cargo build -p tplay, or set TPLAY_BIN); looked at ${candidates.join(', ')}`);
  return bin;
}

const EL = () => document.querySelector('transformer-playground');

/** Train in the page and wait for the end; the run's record and summary. */
async function trainInPage(page, settings) {
  return page.evaluate(async (settings) => {
    const el = document.querySelector('transformer-playground');
    const t0 = performance.now();
    const h = el.train(settings);
    const summary = await h.done;
    const wall = (performance.now() - t0) / 1000;
    const run = el.runs.find((r) => r.id === h.id);
    return { id: h.id, summary, wall, run: JSON.parse(JSON.stringify(run)) };
  }, settings);
}

/** The first row of logits of the page's latest forward pass, and what it ran on. */
const logitsNow = (page) =>
  page.evaluate(() => {
    const el = document.querySelector('transformer-playground');
    const f = el.lastForward;
    return { logits: f ? Array.from(f.logits.data) : null, tokens: f ? f.tokens : null, info: el.info, custom: el.customModel };
  });

/** Wait for a forward pass of the current model. */
const waitForward = (page) => page.waitForFunction(() => document.querySelector('transformer-playground').lastForward !== null, null, { timeout: 30000 });

let server;
let browser;
let page;
let errors;
let reverseRun;

describe('the lab API', () => {
  before(async () => {
    server = await serve();
    browser = await launch();
    ({ page, errors } = await open(browser.context, server.url, 'play=0&views=controls,attention,output'));
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  test('a run trained in the page takes the same steps as tplay train with its flags', async () => {
    const settings = { task: 'reverse', steps: 40, batch: 8, eval_every: 0, seed: 7, dropout: 0.1 };
    const got = await trainInPage(page, settings);
    assert.equal(got.summary.status, 'done');
    assert.equal(got.run.points.length, 40);
    const dir = mkdtempSync(join(tmpdir(), 'tplay-lab-'));
    try {
      const log = join(dir, 'log.jsonl');
      execFileSync(tplayBin(), ['train', ...got.run.command, '--out', join(dir, 'm.safetensors'), '--log', log], {
        cwd: root,
        stdio: ['ignore', 'ignore', 'ignore'],
      });
      const native = readFileSync(log, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l))
        .filter((l) => l.loss !== undefined);
      assert.equal(native.length, 40);
      let worst = 0;
      for (let i = 0; i < 40; i++) {
        const a = got.run.points[i].loss;
        const b = native[i].loss;
        assert.equal(got.run.points[i].step, native[i].step);
        worst = Math.max(worst, Math.abs(a - b) / Math.max(Math.abs(b), 1e-12));
        assert.ok(Math.abs(got.run.points[i].lr - native[i].lr) <= 1e-6 * native[i].lr, `lr at step ${i + 1}`);
      }
      console.log(`# page vs tplay train, 40 steps of ${got.run.command.join(' ')}: largest relative loss difference ${worst.toExponential(2)}`);
      assert.ok(worst <= 1e-5, `relative loss difference ${worst}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('settings that do not fit the task are refused by field and start no run', async () => {
    const r = await page.evaluate(async () => {
      const el = document.querySelector('transformer-playground');
      const before = el.runs.length;
      const msgs = [];
      for (const s of [{ task: 'sentiment', arch: 'decoder_only' }, { task: 'translate', len: 5 }, { task: 'copy', n_heads: 5 }, { task: 'copy', lr: { kind: 'constant', value: -1 } }]) {
        try {
          await el.train(s).started;
          msgs.push('started');
        } catch (e) {
          msgs.push(e.message);
        }
      }
      return { msgs, same: el.runs.length === before };
    });
    assert.match(r.msgs[0], /arch: task 'sentiment'.*class/);
    assert.match(r.msgs[1], /len: task 'translate'/);
    assert.match(r.msgs[2], /n_heads.*divisible/);
    assert.match(r.msgs[3], /lr\.value/);
    assert.ok(r.same);
  });

  test('pause, step once, resume and stop act between chunks', async () => {
    const r = await page.evaluate(async () => {
      const el = document.querySelector('transformer-playground');
      const h = el.train({ task: 'copy', steps: 100000, batch: 4, eval_every: 0 });
      await h.started;
      await new Promise((ok) => h.addEventListener('progress', ok, { once: true }));
      await h.pause();
      const paused = h.run.points.length;
      await new Promise((ok) => setTimeout(ok, 300));
      const stillPaused = h.run.points.length;
      await h.stepOnce();
      const afterOne = h.run.points.length;
      const status = h.run.status;
      await h.resume();
      await new Promise((ok) => setTimeout(ok, 300));
      const resumed = h.run.points.length;
      await h.stop();
      const summary = await h.done;
      return { paused, stillPaused, afterOne, status, resumed, summary, id: h.id };
    });
    assert.ok(r.paused > 0);
    assert.equal(r.stillPaused, r.paused);
    assert.equal(r.afterOne, r.paused + 1);
    assert.equal(r.status, 'paused');
    assert.ok(r.resumed > r.afterOne);
    assert.equal(r.summary.status, 'stopped');
    assert.ok(r.summary.step >= r.resumed);
    await page.evaluate((id) => document.querySelector('transformer-playground').deleteRun(id), r.id);
  });

  test('a training worker lost mid-run marks the run failed, and the run continues from its saved step with the same losses', async () => {
    const r = await page.evaluate(async () => {
      const el = document.querySelector('transformer-playground');
      const settings = { task: 'copy', steps: 300, batch: 4, eval_every: 0, seed: 5, dropout: 0.1 };
      // The same run without interruption.
      const straight = el.train(settings);
      await straight.done;
      const want = el.runs.find((x) => x.id === straight.id).points.map((p) => p.loss);
      await el.deleteRun(straight.id);
      const h = el.train(settings);
      await h.started;
      await new Promise((ok) => h.addEventListener('progress', ok, { once: true }));
      await h.pause(); // saves the weights and the optimiser's state
      const saved = h.run.checkpoint_step;
      await h.resume();
      // Some steps past the saved ones, the run far from its end.
      await new Promise((ok) => h.addEventListener('progress', ok, { once: true }));
      await el.testOnlyCrashRun(h.id);
      let error = null;
      try {
        await h.done;
      } catch (e) {
        error = e.message;
      }
      const run = el.runs.find((x) => x.id === h.id);
      const failed = { status: run.status, error: run.error, steps: run.points.length };
      const info = await el.useRun(h.id);
      const again = el.resumeRun(h.id);
      const summary = await again.done;
      const got = el.runs.find((x) => x.id === h.id).points.map((p) => p.loss);
      await el.deleteRun(h.id);
      return { saved, error, failed, arch: info.arch, summary, want, got };
    });
    assert.ok(r.saved > 0);
    assert.equal(r.failed.status, 'failed');
    assert.match(r.error, /training worker stopped/);
    assert.match(r.failed.error, new RegExp(`weights saved at step ${r.saved} are kept`));
    assert.ok(r.failed.steps >= r.saved);
    assert.equal(r.arch, 'decoder_only');
    assert.equal(r.summary.status, 'done');
    assert.equal(r.got.length, 300);
    assert.deepEqual(r.got, r.want);
  });

  test('the reverse recipe trained from scratch in the page reaches its threshold', async () => {
    const d = await page.evaluate(() => document.querySelector('transformer-playground').runDefaults('reverse'));
    assert.equal(d.recipe, 'reverse.safetensors');
    // The shipped recipe with its own evaluation cadence (nothing but the task); the run
    // stops at the first held-out score at or above the shipped model's threshold (or runs
    // all its steps).
    const got = await page.evaluate(async (threshold) => {
      const el = document.querySelector('transformer-playground');
      const t0 = performance.now();
      const h = el.train({ task: 'reverse' });
      const evals = [];
      let reached = null;
      h.addEventListener('progress', (e) => {
        for (const p of e.detail.points) {
          if (!p.eval) continue;
          evals.push([p.step, p.eval.metric]);
          if (reached === null && p.eval.metric >= threshold) {
            reached = { step: p.step, wall: (performance.now() - t0) / 1000, compute: p.elapsed_ms / 1000 };
            void h.stop();
          }
        }
      });
      const summary = await h.done;
      const run = el.runs.find((r) => r.id === h.id);
      return { id: h.id, summary, reached, evals, last: run.points[run.points.length - 1] };
    }, d.threshold);
    console.log(`# reverse recipe in the page, held-out exact match by step: ${got.evals.map(([s, m]) => `${s}: ${m}`).join(', ')}`);
    assert.ok(got.reached, `exact match never reached ${d.threshold}`);
    console.log(
      `# reverse recipe in the page reached exact match >= ${d.threshold} at step ${got.reached.step}: ` +
        `${got.reached.wall.toFixed(1)} s wall, ${got.reached.compute.toFixed(1)} s of training, ${got.summary.steps_per_s.toFixed(1)} steps/s`,
    );
    assert.equal(got.summary.metric_name, 'exact_match');
    assert.ok(got.summary.metric >= d.threshold);
    assert.equal(got.last.residual_norms.length, d.settings.n_layers);
    assert.equal(got.last.grad_norms.length, d.settings.n_layers);
    reverseRun = got.id;
  });

  test('a run used as the model generates the reversed string', async () => {
    assert.ok(reverseRun, 'needs the trained reverse run');
    const info = await page.evaluate((id) => document.querySelector('transformer-playground').useRun(id), reverseRun);
    assert.equal(info.arch, 'decoder_only');
    await waitForward(page);
    const out = await page.evaluate(async () => {
      const el = document.querySelector('transformer-playground');
      await el.store.patch({ text: 'dcbahgfe>', max: 12 });
      await el.store.gen.start(true);
      const t0 = performance.now();
      while (!el.done && performance.now() - t0 < 30000) await new Promise((ok) => setTimeout(ok, 50));
      return { text: el.store.tokensOf(el.generated).join(''), custom: el.customModel };
    });
    assert.equal(out.text, 'efghabcd<eos>');
    assert.match(out.custom, /reverse/);
    await shot(page, 'lab-run-as-model');
  });

  test('export then import gives identical logits; bad files are refused and change nothing', async () => {
    assert.ok(reverseRun, 'needs the trained reverse run');
    await page.evaluate((id) => document.querySelector('transformer-playground').useRun(id), reverseRun);
    const used = await logitsNow(page);
    const r = await page.evaluate(async (id) => {
      const el = document.querySelector('transformer-playground');
      const blob = await el.exportRun(id);
      const bytes = new Uint8Array(await blob.arrayBuffer());
      await el.loadCheckpoint(bytes.buffer.slice(0));
      return { n: bytes.length };
    }, reverseRun);
    assert.ok(r.n > 1000);
    const imported = await logitsNow(page);
    assert.deepEqual(imported.tokens, used.tokens);
    assert.deepEqual(imported.logits, used.logits);

    const bad = await page.evaluate(async (id) => {
      const el = document.querySelector('transformer-playground');
      const good = new Uint8Array(await (await el.exportRun(id)).arrayBuffer());
      // A header whose config claims a model of a billion dimensions.
      const n = Number(new DataView(good.buffer).getBigUint64(0, true));
      const header = JSON.parse(new TextDecoder().decode(good.subarray(8, 8 + n)));
      const cfg = JSON.parse(header.__metadata__.config);
      cfg.d_model = 1073741824;
      header.__metadata__.config = JSON.stringify(cfg);
      const h = new TextEncoder().encode(JSON.stringify(header));
      const hostile = new Uint8Array(8 + h.length + good.length - 8 - n);
      new DataView(hostile.buffer).setBigUint64(0, BigInt(h.length), true);
      hostile.set(h, 8);
      hostile.set(good.subarray(8 + n), 8 + h.length);
      // Seeded bytes (a xorshift), the same every run.
      const random = new Uint8Array(4096);
      let x = 0x9e3779b9;
      for (let i = 0; i < random.length; i++) {
        x ^= x << 13;
        x ^= x >>> 17;
        x ^= x << 5;
        random[i] = x & 0xff;
      }
      const files = {
        truncated: good.slice(0, Math.floor(good.length / 2)),
        random,
        hostile,
        // One byte past the loader's limit (crate/src/limits MAX_CHECKPOINT_BYTES, 720 MiB).
        oversized: new Uint8Array(720 * 1024 * 1024 + 1),
      };
      const out = {};
      const runs = JSON.stringify(el.runs.map((r) => [r.id, r.name, r.points.length, r.status]));
      for (const [name, bytes] of Object.entries(files)) {
        const infoBefore = JSON.stringify(el.info);
        const logitsBefore = Array.from(el.lastForward.logits.data);
        let msg = null;
        try {
          await el.loadCheckpoint(bytes);
        } catch (e) {
          msg = e.message;
        }
        out[name] = {
          msg,
          sameInfo: JSON.stringify(el.info) === infoBefore,
          sameLogits: JSON.stringify(Array.from(el.lastForward.logits.data)) === JSON.stringify(logitsBefore),
        };
      }
      out.sameRuns = JSON.stringify(el.runs.map((r) => [r.id, r.name, r.points.length, r.status])) === runs;
      return out;
    }, reverseRun);
    for (const name of ['truncated', 'random', 'hostile', 'oversized']) {
      const b = bad[name];
      console.log(`# ${name} file: ${b.msg}`);
      assert.ok(b.msg, `${name}: accepted`);
      assert.match(b.msg, /bad checkpoint|invalid config/, name);
      assert.ok(b.sameInfo && b.sameLogits, `${name}: the model changed`);
    }
    assert.match(bad.hostile.msg, /d_model/);
    assert.match(bad.oversized.msg, /file size/);
    assert.ok(bad.sameRuns);
    // The page still runs the imported model.
    await page.evaluate(() => document.querySelector('transformer-playground').store.patch({ text: 'abc>' }));
    await waitForward(page);
  });

  test('runs, their curves and their weights are back after a reload', async () => {
    assert.ok(reverseRun, 'needs the trained reverse run');
    const before = await page.evaluate(() =>
      document.querySelector('transformer-playground').runs.map((r) => ({ id: r.id, n: r.points.length, status: r.status, name: r.name, ck: r.checkpoint_step })),
    );
    await page.evaluate((id) => document.querySelector('transformer-playground').renameRun(id, 'reverse, as shipped'), reverseRun);
    // A run still training at the reload: saved at its pause, then some steps more. Long
    // enough that it cannot end (its final evaluation included) before the reload.
    const settings = { task: 'sort', steps: 3000, batch: 4, eval_every: 0, seed: 2 };
    const cut = await page.evaluate(async (settings) => {
      const el = document.querySelector('transformer-playground');
      const straight = el.train(settings);
      await straight.done;
      const want = el.runs.find((x) => x.id === straight.id).points.map((p) => p.loss);
      await el.deleteRun(straight.id);
      const h = el.train(settings);
      await h.started;
      await new Promise((ok) => h.addEventListener('progress', ok, { once: true }));
      await h.pause();
      const saved = h.run.checkpoint_step;
      await h.resume();
      await new Promise((ok) => h.addEventListener('progress', ok, { once: true }));
      return { id: h.id, saved, want, status: el.runs.find((x) => x.id === h.id).status };
    }, settings);
    assert.equal(cut.status, 'running', 'the run is still training when the page reloads');
    await page.evaluate((id) => document.querySelector('transformer-playground').useRun(id), reverseRun);
    const used = await logitsNow(page);
    await page.reload();
    await page.waitForFunction(() => customElements.get('transformer-playground') !== undefined);
    await page.evaluate(async () => {
      const el = document.querySelector('transformer-playground');
      await el.ready;
      await el.runsRestored;
    });
    const back = await page.evaluate(() =>
      document.querySelector('transformer-playground').runs.map((r) => ({ id: r.id, n: r.points.length, status: r.status, name: r.name, ck: r.checkpoint_step })),
    );
    assert.deepEqual(
      back.map((r) => r.id).filter((id) => id !== cut.id),
      before.map((r) => r.id),
    );
    const cutBack = back.find((r) => r.id === cut.id);
    assert.equal(cutBack.status, 'paused');
    assert.equal(cutBack.n, cut.saved);
    const resumed = await page.evaluate(async (id) => {
      const el = document.querySelector('transformer-playground');
      const s = await el.resumeRun(id).done;
      const losses = el.runs.find((x) => x.id === id).points.map((p) => p.loss);
      await el.deleteRun(id);
      return { s, losses };
    }, cut.id);
    assert.equal(resumed.s.status, 'done');
    assert.deepEqual(resumed.losses, cut.want);
    const rev = back.find((r) => r.id === reverseRun);
    assert.equal(rev.name, 'reverse, as shipped');
    assert.equal(rev.status, before.find((r) => r.id === reverseRun).status);
    assert.equal(rev.n, before.find((r) => r.id === reverseRun).n);
    assert.equal(rev.ck, rev.n);
    await page.evaluate((id) => document.querySelector('transformer-playground').useRun(id), reverseRun);
    await page.evaluate(() => document.querySelector('transformer-playground').store.patch({ text: 'dcbahgfe>' }));
    await waitForward(page);
    const again = await logitsNow(page);
    if (JSON.stringify(again.tokens) === JSON.stringify(used.tokens)) assert.deepEqual(again.logits, used.logits);
    const csv = await page.evaluate(async (id) => (await document.querySelector('transformer-playground').exportRunCsv(id).text()).split('\n').slice(0, 2), reverseRun);
    assert.match(csv[0], /^step,loss,lr,grad_norm,elapsed_ms,eval_loss,eval_metric,eval_metric_name,residual_norm_0/);
    assert.match(csv[1], /^1,/);
    assert.deepEqual(errors.filter((e) => !/lab:/.test(e)), []);
    void EL;
  });
});
