// The page in the two engines beside Chromium that Debian ships: Gecko (firefox-esr,
// through WebDriver BiDi) and WebKit (WebKitGTK's WebKitWebDriver under Xvfb). One smoke
// suite, the same in each (drivers in engines.mjs):
// - the page loads with no console error and generates, on the CPU path with sampling and
//   a seed, the same tokens and the same probabilities as headless Chromium;
// - one lesson completes through the page: its experiment done, its question answered right;
// - the lab trains 100 steps with the losses of `tplay train` with the run's own flags
//   (within 1e-5 relative), and the run exported as .safetensors and imported again gives
//   the same logits;
// - no lost work: after a reload the lab's run and the lesson's progress are back; after
//   the engine crashes, the run's weights it ran are loaded again (the same logits); a
//   training worker that crashes leaves its run failed with its saved weights, kept
//   across a reload;
// - offline after one visit, where the engine runs the page's service worker on
//   http://127.0.0.1 (the server stops; a reload still generates);
// - a screenshot of each, in artifacts/engine-<name>.png.
// TPLAY_ENGINES chooses the engines (default `firefox,webkit`).

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { artifacts, dist, launch, offlineKept, open, root, serve, waitTokens } from './harness.mjs';
import { CONSOLE_HOOK, launchFirefox, launchWebKit, missing } from './engines.mjs';

const ENGINES = (process.env.TPLAY_ENGINES ?? 'firefox,webkit').split(',').filter(Boolean);
const LAUNCH = { firefox: launchFirefox, webkit: launchWebKit };

// Sampling with a seed on the CPU path: the draw depends on every probability being the same.
const GEN_HASH = 'backend=cpu&strategy=sample&temp=1&seed=7&max=10&speed=0&play=1&views=controls,generation,output';
const TRAIN = { task: 'reverse', steps: 100, batch: 8, eval_every: 0, seed: 7, dropout: 0.1, backend: 'cpu' };

function tplayBin() {
  const candidates = [process.env.TPLAY_BIN, join(root, 'target/debug/tplay'), join(root, 'target/release/tplay')].filter(Boolean);
  const bin = candidates.find((p) => existsSync(p));
  assert.ok(bin, `no tplay binary (build it with cargo build -p tplay, or set TPLAY_BIN); looked at ${candidates.join(', ')}`);
  return bin;
}

/** `tplay train` with a run's flags: its loss per step (cached per command). */
const nativeLosses = new Map();
function cliLosses(command) {
  const key = command.join(' ');
  if (!nativeLosses.has(key)) {
    const dir = mkdtempSync(join(tmpdir(), 'tplay-engines-'));
    try {
      const log = join(dir, 'log.jsonl');
      execFileSync(tplayBin(), ['train', ...command, '--out', join(dir, 'm.safetensors'), '--log', log], { cwd: root, stdio: 'ignore' });
      const rows = readFileSync(log, 'utf8').trim().split('\n').map((l) => JSON.parse(l)).filter((l) => l.loss !== undefined);
      nativeLosses.set(key, rows.map((r) => ({ step: r.step, loss: r.loss })));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return nativeLosses.get(key);
}

// In-page functions (each runs on its own in the page, so each finds what it needs itself).
const READY = () => {
  const el = document.querySelector('transformer-playground');
  if (!el || !customElements.get('transformer-playground')) return false;
  if (el.error) return { error: el.error };
  return el.lastForward ? { readyMs: el.readyMs } : false;
};
const GENERATED = (n) => {
  const el = document.querySelector('transformer-playground');
  if (!el || !el.lastForward) return false;
  if (el.generated.length >= n || el.done || el.error || el.genNote) return { ids: [...el.generated], done: el.done, error: el.error, note: el.genNote, backend: el.backendInfo?.kind ?? el.backendInfo?.backend ?? null };
  return false;
};
/** The next-token probabilities of the forward pass over the prompt and the `n` generated
 * tokens, once that pass has been drawn (the last token arrives before its pass does). */
const SETTLED_PROBS = (n) => {
  const el = document.querySelector('transformer-playground');
  const ids = el?.generated ?? [];
  const seq = el?.lastForward?.tokens?.[0];
  if (ids.length < n || !seq || seq.length < ids.length) return false;
  const tail = seq.slice(seq.length - ids.length);
  return tail.every((id, k) => id === ids[k]) ? Array.from(el.lastForward.model_probs) : false;
};

/** Open `url` in the engine and wait for the first drawn forward pass. */
async function openIn(b, url) {
  // A fresh document each time (a link that differs only in its hash would not load again).
  await b.goto('about:blank');
  await b.goto(url);
  const r = await b.waitFor(READY, undefined, 90000, 'the first forward pass');
  assert.ok(!r.error, `the page says: ${r.error}`);
  return r;
}

let site;
let chromium;
before(async () => {
  // The build with a first script that keeps console errors (WebKit's WebDriver has no
  // console events); everything else as served.
  site = mkdtempSync(join(tmpdir(), 'tplay-engines-site-'));
  cpSync(dist, site, { recursive: true });
  writeFileSync(join(site, 'tplay-console-hook.js'), CONSOLE_HOOK);
  const index = readFileSync(join(site, 'index.html'), 'utf8');
  assert.ok(index.includes('<head>'));
  writeFileSync(join(site, 'index.html'), index.replace('<head>', '<head>\n    <script src="./tplay-console-hook.js"></script>'));

  // The reference: Chromium's CPU path, as the other browser tests run it.
  const server = await serve(dist, { csp: true });
  const browser = await launch({ webgpu: false });
  try {
    const { page, errors } = await open(browser.context, server.url, GEN_HASH);
    const gen = await waitTokens(page, 10);
    await page.waitForFunction(SETTLED_PROBS, 10, { timeout: 60000 });
    chromium = { ...gen, probs: await page.evaluate(SETTLED_PROBS, 10), errors };
  } finally {
    await browser.close();
    await server.close();
  }
  assert.equal(chromium.error, '');
  assert.equal(chromium.ids.length, 10);
});
after(() => rmSync(site, { recursive: true, force: true }));

for (const engine of ENGINES) {
  describe(`${engine}`, () => {
    let b;
    let server;
    let base;
    let t0;
    let serverOpen = true;
    /** The lab test's run, for the no-lost-work test after it. */
    let labRun = null;
    before(async () => {
      t0 = Date.now();
      const why = missing(engine);
      assert.equal(why, '', `${engine} cannot run here: ${why}`);
      server = await serve(site, { csp: true });
      base = server.url;
      b = await LAUNCH[engine]();
      console.log(`# ${engine}: ${b.version}, started in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    });
    after(async () => {
      await b?.close();
      if (serverOpen) await server?.close();
      console.log(`# ${engine}: the suite took ${((Date.now() - t0) / 1000).toFixed(1)} s`);
      // Everything ran under the page's Content-Security-Policy without one violation.
      assert.deepEqual(server?.cspReports ?? [], []);
    });

    test('loads with no console error and generates the tokens Chromium generates for the same seed', { timeout: 180000 }, async () => {
      const r = await openIn(b, `${base}#${GEN_HASH}`);
      const gen = await b.waitFor(GENERATED, 10, 90000, 'ten generated tokens');
      assert.equal(gen.error, '');
      assert.deepEqual(gen.ids, chromium.ids, 'the same sampled tokens as Chromium');
      const probs = await b.waitFor(SETTLED_PROBS, 10, 60000, 'the forward pass over the ten tokens');
      assert.equal(probs.length, chromium.probs.length);
      let worst = 0;
      for (let i = 0; i < probs.length; i++) worst = Math.max(worst, Math.abs(probs[i] - chromium.probs[i]));
      console.log(`# ${engine}: first pass in ${Math.round(r.readyMs)} ms; tokens ${gen.ids.join(' ')}; largest probability difference to Chromium ${worst.toExponential(2)}`);
      assert.ok(worst <= 1e-6, `probabilities differ from Chromium's by ${worst}`);
      // The default page, as a reader opens it: drawn, no console error, looked at.
      await openIn(b, base);
      await b.waitFor(() => document.querySelector('transformer-playground').updateComplete.then(() => true));
      await b.screenshot(join(artifacts, `engine-${engine}.png`));
      assert.deepEqual(await b.errors(), [], 'no console error');
    });

    test('a lesson completes: the experiment done through the page, its question answered right', { timeout: 180000 }, async () => {
      await openIn(b, `${base}#lesson=causal-mask`);
      await b.evaluate(() => localStorage.removeItem('tplay-lessons'));
      await b.waitFor(() => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-lesson')?.shadowRoot?.querySelector('.try')?.dataset.step === 'todo', undefined, 30000, 'the lesson');
      // The experiment: the causal-mask switch turned off, clicked as a reader would.
      await b.evaluate(() => {
        const c = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-controls').shadowRoot.querySelector('input[data-setting="causal"]');
        if (!c.checked) throw new Error('the causal switch starts on');
        c.click();
      });
      await b.waitFor(() => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-lesson').shadowRoot.querySelector('.try')?.dataset.step === 'done', undefined, 30000, 'the experiment seen');
      await b.waitFor(() => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-lesson').shadowRoot.querySelector('[data-answer]')?.dataset.answer === 'open', undefined, 60000, 'the answer box');
      // The right answer, from the engine's two passes: did unmasking change the probabilities?
      const right = await b.waitFor(() => {
        const s = document.querySelector('transformer-playground').store;
        if (!s.previous || !s.lastForward || s.previous === s.lastForward) return null;
        return { choice: s.lastForward.model_probs.some((p, i) => p !== s.previous.model_probs[i]) ? 0 : 1 };
      }, undefined, 30000, 'the pass without the mask');
      await b.evaluate((choice) => {
        const box = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-lesson').shadowRoot.querySelector('[data-answer]');
        box.querySelector(`[data-option="${choice}"]`).click();
      }, right.choice);
      // "Check" once the choice is drawn (the button waits for one).
      await b.waitFor(() => {
        const c = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-lesson').shadowRoot.querySelector('[data-answer] [data-check]');
        if (!c || c.disabled) return false;
        c.click();
        return true;
      }, undefined, 10000, 'the Check button');
      const done = await b.waitFor(() => {
        const root = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-lesson').shadowRoot;
        const p = JSON.parse(localStorage.getItem('tplay-lessons') ?? 'null');
        return root.querySelector('[data-notice]') && { verdict: root.querySelector('[data-verdict]')?.dataset.verdict, done: !!p?.done?.includes('causal-mask'), answer: p?.answers?.['causal-mask'] };
      }, undefined, 30000, 'what to notice');
      assert.equal(done.verdict, 'right');
      assert.equal(done.done, true, 'the lesson is done in the progress');
      assert.equal(done.answer?.right, true);
      assert.deepEqual(await b.errors(), [], 'no console error');
    });

    test('the lab trains 100 steps with the losses of tplay train; export then import gives the same logits', { timeout: 300000 }, async () => {
      await openIn(b, `${base}#play=0&views=controls,attention,output`);
      const t = Date.now();
      const got = await b.evaluate(async (settings) => {
        const el = document.querySelector('transformer-playground');
        await el.runsRestored;
        const h = el.train(settings);
        const summary = await h.done;
        const run = el.runs.find((r) => r.id === h.id);
        return { id: h.id, summary, command: run.command, backend: run.backend, points: run.points.map((p) => ({ step: p.step, loss: p.loss })) };
      }, TRAIN);
      const secs = (Date.now() - t) / 1000;
      labRun = { id: got.id, losses: got.points.map((p) => p.loss) };
      assert.equal(got.summary.status, 'done');
      assert.equal(got.points.length, 100);
      const native = cliLosses(got.command);
      assert.equal(native.length, 100);
      let worst = 0;
      for (let i = 0; i < 100; i++) {
        assert.equal(got.points[i].step, native[i].step);
        const a = got.points[i].loss;
        const n = native[i].loss;
        assert.ok(Number.isFinite(a), `a finite loss at step ${i + 1}: ${a}`);
        worst = Math.max(worst, Math.abs(a - n) / Math.max(Math.abs(n), 1e-12));
      }
      console.log(`# ${engine}: 100 steps of ${got.command.join(' ')} in ${secs.toFixed(1)} s on ${got.backend?.kind}; largest relative loss difference to tplay train ${worst.toExponential(2)}`);
      assert.ok(worst <= 1e-5, `relative loss difference ${worst}`);

      // Export → import: the run's checkpoint, loaded back, computes what the run computes.
      const logitsNow = () => {
        const f = document.querySelector('transformer-playground').lastForward;
        return f ? { logits: Array.from(f.logits.data), tokens: f.tokens } : null;
      };
      await b.evaluate((id) => document.querySelector('transformer-playground').useRun(id), got.id);
      const used = await b.waitFor(logitsNow, undefined, 30000, 'a pass of the run');
      const n = await b.evaluate(async (id) => {
        const el = document.querySelector('transformer-playground');
        const bytes = new Uint8Array(await (await el.exportRun(id)).arrayBuffer());
        await el.loadCheckpoint(bytes.buffer.slice(0));
        return bytes.length;
      }, got.id);
      assert.ok(n > 1000);
      const imported = await b.waitFor(logitsNow, undefined, 30000, 'a pass of the imported model');
      assert.deepEqual(imported.tokens, used.tokens);
      assert.deepEqual(imported.logits, used.logits);
      assert.deepEqual(await b.errors(), [], 'no console error');
    });

    test('no lost work: the run, the lesson and the run\'s model survive a reload, an engine crash and a training worker crash', { timeout: 300000 }, async () => {
      assert.ok(labRun, 'the lab test ran first and left its run');
      // A reload (a new document): the lab's run and the lesson's progress come back from storage.
      await openIn(b, `${base}#play=0&views=controls,output`);
      const back = await b.evaluate(async (id) => {
        const el = document.querySelector('transformer-playground');
        await el.runsRestored;
        const run = el.runs.find((r) => r.id === id);
        const p = JSON.parse(localStorage.getItem('tplay-lessons') ?? 'null');
        return { status: run?.status, losses: run?.points.map((x) => x.loss), lesson: !!p?.done?.includes('causal-mask'), answer: p?.answers?.['causal-mask'] ?? null };
      }, labRun.id);
      assert.equal(back.status, 'done', 'the run is back after the reload');
      assert.deepEqual(back.losses, labRun.losses, 'with the same curve');
      assert.equal(back.lesson, true, 'the lesson is still done');
      assert.equal(back.answer?.right, true, 'and its answer kept');
      // The run's weights become the page's model; the page's engine then crashes and restarts.
      const logitsNow = () => {
        const el = document.querySelector('transformer-playground');
        const f = el.lastForward;
        return f ? { logits: Array.from(f.logits.data), tokens: f.tokens, model: el.customModel, restarts: el.engineRestarts } : null;
      };
      await b.evaluate((id) => document.querySelector('transformer-playground').useRun(id), labRun.id);
      const used = await b.waitFor(logitsNow, undefined, 30000, 'a pass of the run');
      assert.notEqual(used.model, '', 'the page runs the run\'s weights');
      await b.evaluate(() => {
        const el = document.querySelector('transformer-playground');
        el.store.lastForward = null;
        return el.testOnlyCrashEngine('trap');
      });
      const restarted = await b.waitFor(
        () => {
          const el = document.querySelector('transformer-playground');
          const f = el.lastForward;
          return el.engineRestarts === 1 && f ? { logits: Array.from(f.logits.data), tokens: f.tokens, model: el.customModel, error: el.error } : null;
        },
        undefined,
        60000,
        'a pass after the engine restarted',
      );
      assert.equal(restarted.error, '');
      assert.equal(restarted.model, used.model, 'the same model after the restart');
      assert.deepEqual(restarted.tokens, used.tokens);
      assert.deepEqual(restarted.logits, used.logits, 'the run\'s weights were loaded again, not the shipped model');
      // A training worker crashes mid-run: the run is failed with its saved weights kept, and after a reload it is still there.
      const crashed = await b.evaluate(async () => {
        const el = document.querySelector('transformer-playground');
        const h = el.train({ task: 'copy', steps: 100000, batch: 4, eval_every: 0, seed: 3, backend: 'cpu' });
        await h.started;
        await new Promise((ok) => h.addEventListener('progress', ok, { once: true }));
        await h.pause();
        const saved = h.run.checkpoint_step;
        await h.resume();
        await new Promise((ok) => setTimeout(ok, 100));
        await el.testOnlyCrashRun(h.id);
        try {
          await h.done;
        } catch {
          // the failure is the run's status, read below
        }
        const run = el.runs.find((x) => x.id === h.id);
        return { id: h.id, saved, status: run.status, error: run.error };
      });
      assert.ok(crashed.saved > 0, `weights were saved at step ${crashed.saved}`);
      assert.equal(crashed.status, 'failed');
      assert.match(crashed.error, new RegExp(`weights saved at step ${crashed.saved} are kept`));
      await openIn(b, `${base}#play=0&views=controls,output`);
      const kept = await b.evaluate(async (id) => {
        const el = document.querySelector('transformer-playground');
        await el.runsRestored;
        const run = el.runs.find((r) => r.id === id);
        const out = { status: run?.status, checkpoint: run?.checkpoint_step };
        const info = await el.useRun(id);
        await el.deleteRun(id);
        return { ...out, params: info.params };
      }, crashed.id);
      assert.equal(kept.status, 'failed', 'the failed run is still listed after a reload');
      assert.equal(kept.checkpoint, crashed.saved, 'with the step of its kept weights');
      assert.ok(kept.params > 0, 'and its weights load');
      console.log(`# ${engine}: after a reload the run (100 points) and the lesson were back; after an engine crash the run's weights gave the same logits; a crashed training worker kept its weights of step ${crashed.saved}`);
      assert.deepEqual((await b.errors()).filter((e) => !/test-only|stopped|crash|unreachable/i.test(e)), [], 'no console error but the crashes');
    });

    test('offline after one visit, where the engine runs service workers here', { timeout: 180000 }, async (t) => {
      await openIn(b, `${base}#${GEN_HASH}`);
      const online = await b.waitFor(GENERATED, 10, 90000, 'ten generated tokens');
      const sw = await b.evaluate(() => ({ api: 'serviceWorker' in navigator, secure: isSecureContext }));
      if (!sw.api) {
        console.log(`# ${engine}: no navigator.serviceWorker on ${base} (secure context: ${sw.secure}); offline not tested`);
        t.skip(`${engine} offers no service workers on http://127.0.0.1`);
        return;
      }
      // Registered after the first pass; wait until it is active and holds the engine and the models.
      await b.waitFor(
        offlineKept,
        undefined,
        90000,
        'the service worker keeping the page',
      );
      // The network goes: the server stops.
      serverOpen = false;
      await server.cut();
      const noNet = await b.evaluate(() => fetch(`./not-kept-${Math.random()}.json`).then(() => 'fetched', () => 'refused'));
      assert.equal(noNet, 'refused', 'nothing is fetched but from the worker');
      await b.reload();
      await b.waitFor(READY, undefined, 90000, 'the first forward pass offline');
      assert.ok(await b.evaluate(() => navigator.serviceWorker.controller !== null), 'the reload is served by the worker');
      const offline = await b.waitFor(GENERATED, 10, 90000, 'ten generated tokens offline');
      assert.deepEqual(offline.ids, online.ids, 'the same tokens without a network');
      assert.equal(offline.error, '');
      console.log(`# ${engine}: offline after one visit: the reload was served by the service worker and generated ${offline.ids.length} tokens`);
      assert.deepEqual(await b.errors(), [], 'no console error');
    });
  });
}
