// The view registry and the engine's honesty checks in headless Chromium: a view name in
// the URL shows exactly that view (an unknown one is refused with a note), and a GPU whose
// logits are NaN, or whose one logit is wrong by ten times the tolerance, is caught by the
// parity check — the badge says so and by how much, and the CPU takes over.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, open, serve, shot, waitTokens } from './harness.mjs';

let server;
before(async () => {
  server = await serve();
});
after(async () => {
  await server?.close();
});

/** The tags of the views drawn, in page order. */
function drawn(page) {
  return page.evaluate(() =>
    [...document.querySelector('transformer-playground').shadowRoot.querySelectorAll('.layout > .view > :first-child')]
      .map((n) => n.tagName.toLowerCase())
      .filter((t) => t.startsWith('tp-')),
  );
}

describe('views by name', () => {
  let browser;
  before(async () => {
    browser = await launch({ webgpu: false });
  });
  after(async () => {
    await browser?.close();
  });

  test('views_named_in_the_url_are_the_only_ones_drawn_and_unknown_names_get_a_note', async () => {
    const { page, errors } = await open(browser.context, server.url, 'play=0&views=output,attention,nonsense');
    assert.deepEqual(await drawn(page), ['tp-attention', 'tp-output'], 'registry order, only the named views');
    const s = await page.evaluate(() => {
      const el = document.querySelector('transformer-playground');
      return { views: el.st.views, notes: [...el.notes], qkv: el.lastForward.attention.every((a) => a.q && a.k && a.v) };
    });
    assert.deepEqual(s.views, ['output', 'attention']);
    assert.equal(s.notes.length, 1);
    assert.match(s.notes[0], /"nonsense"/);
    assert.ok(s.qkv, 'the attention view needs q, k and v, so the forward pass carries them');
    // Another view through the hash: drawn, and its engine numbers are asked for.
    await page.evaluate(() => (location.hash = 'play=0&views=cost'));
    await page.waitForFunction(() => document.querySelector('transformer-playground').costReport !== null);
    assert.deepEqual(await drawn(page), ['tp-cost']);
    const qkv = await page.evaluate(() => document.querySelector('transformer-playground').lastForward.attention.some((a) => a.q));
    assert.equal(qkv, false, 'without the attention view, no q, k, v cross the worker boundary');
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('the_views_attribute_sets_the_default_and_the_url_may_override_it', async () => {
    const { page, errors } = await open(browser.context, server.url, 'chapter=all&play=0');
    const { names, tags } = await page.evaluate(async () => {
      const { VIEW_NAMES } = await import('./playground.js');
      const el = document.createElement('transformer-playground');
      el.setAttribute('no-hash', '');
      el.setAttribute('views', 'hidden, saturation');
      el.setAttribute('preset', 'play=0');
      // Appended below every view of the page, far out of sight: started at once, not when scrolled to.
      el.setAttribute('load', 'eager');
      document.body.append(el);
      await el.ready;
      await el.updateComplete;
      return { names: [...VIEW_NAMES], tags: [...el.shadowRoot.querySelectorAll('.layout > .view > :first-child')].map((n) => n.tagName.toLowerCase()) };
    });
    assert.deepEqual(tags, ['tp-hidden', 'tp-saturation']);
    assert.deepEqual(names, ['overview', 'controls', 'backend', 'input', 'tokenizer', 'characters', 'generation', 'architecture', 'attention', 'masks', 'output', 'hidden', 'sqrt-dk', 'saturation', 'cost', 'schedule', 'time', 'positions', 'embedding-scale', 'order', 'extrapolation', 'ffn', 'no-leak', 'norms', 'dropout', 'parallel', 'beams', 'weights', 'lab']);
    assert.deepEqual(errors, []);
    await page.close();
  });
});

describe('with WebGPU (SwiftShader)', () => {
  let browser;
  before(async () => {
    browser = await launch({ webgpu: true });
  });
  after(async () => {
    await browser?.close();
  });

  test('nan_gpu_logits_make_the_parity_infinite_and_the_badge_says_so', async () => {
    const { page, errors } = await open(browser.context, server.url, 'chapter=all&backend=webgpu&play=0');
    const before = await page.evaluate(() => document.querySelector('transformer-playground').backendInfo);
    assert.equal(before.backend, 'webgpu', `WebGPU should run: ${before.reason} ${before.detail}`);
    assert.ok(before.parity < 1e-3, `an honest GPU agrees: ${before.parity}`);
    // The engine's test-only request: the same check with every GPU logit NaN.
    const info = await page.evaluate(() => document.querySelector('transformer-playground').store.call('testOnlyNanGpuParity', {}));
    assert.equal(info.parity, Infinity, 'a NaN logit is an infinite difference, not 0');
    assert.equal(info.backend, 'cpu', 'a GPU that disagrees is not used');
    await page.waitForFunction(() => document.querySelector('transformer-playground').backendInfo.parity === Infinity);
    const badge = page.locator('tp-backend-badge .badge');
    await page.waitForFunction(() => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-backend-badge').shadowRoot.querySelector('[data-parity]')?.dataset.parity === 'Infinity');
    const text = await badge.innerText();
    assert.match(text, /∞/);
    assert.match(text, /NaN/);
    assert.match(text, /disagree/);
    await shot(page, 'parity-nan');
    // The page carries on, on the CPU.
    await page.evaluate(() => document.querySelector('transformer-playground').store.gen.start(true));
    const gen = await waitTokens(page, 2);
    assert.ok(gen.ids.length >= 2 && !gen.error, `generation carries on on the CPU: ${gen.error}`);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('auto_keeps_the_gpu_only_where_it_agrees_and_wins_the_race_and_says_both_times', async () => {
    // The default (auto): the engine timed the test input on both backends.
    const { page, errors } = await open(browser.context, server.url, 'play=0&views=controls,backend');
    const info = () => page.evaluate(() => document.querySelector('transformer-playground').backendInfo);
    await page.waitForFunction(() => document.querySelector('transformer-playground').backendInfo?.race != null, null, { timeout: 60000 });
    const first = await info();
    assert.ok(first.parity < 1e-3, `the GPU agrees: ${first.parity}`);
    assert.ok(first.race.cpu_ms > 0 && first.race.gpu_ms > 0, JSON.stringify(first.race));
    // Whichever won runs, and nothing else.
    assert.equal(first.backend, first.race.gpu_ms < first.race.cpu_ms ? 'webgpu' : 'cpu', JSON.stringify(first));
    const badge = (sel) => page.evaluate((sel) => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-backend-badge').shadowRoot.querySelector(sel)?.dataset, sel);
    const words = async () => (await page.locator('tp-backend-badge .badge').innerText()).replace(/\s+/g, ' ');
    const race = async (gpu_ms, cpu_ms) => {
      const r = await page.evaluate((h) => document.querySelector('transformer-playground').store.call('testOnlyRaceWithHandicap', h), { gpu_ms, cpu_ms });
      await page.waitForFunction((r) => {
        const d = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-backend-badge')?.shadowRoot.querySelector('[data-race-gpu]')?.dataset;
        return d && Number(d.raceGpu) === r.race.gpu_ms && Number(d.raceCpu) === r.race.cpu_ms;
      }, r, { timeout: 30000 });
      return r;
    };
    // A slow adapter: 40 ms of busy time on every GPU pass. The CPU runs, and the page says why, with both times.
    const slow = await race(40, 0);
    assert.equal(slow.status.kind, 'cpu_faster', JSON.stringify(slow));
    assert.equal(slow.backend, 'cpu');
    assert.ok(slow.race.gpu_ms >= 40 && slow.race.gpu_ms > slow.race.cpu_ms, JSON.stringify(slow.race));
    let text = await words();
    assert.match(text, /Auto asked → CPU: the CPU is faster for this model/, text);
    assert.match(text, /WebGPU agrees with the CPU but is slower for this model/, text);
    assert.match(text, /one generated token: CPU [\d.]+ ms, WebGPU [\d.]+ ms \([\d.]+× slower\)/, text);
    assert.equal(slow.race.unit, 'token', 'a model that generates is timed on generated tokens');
    const control = await page.locator('transformer-playground tp-controls [data-backend-runs]').textContent();
    assert.match(control, /Auto asked → CPU: the CPU is faster for this model/);
    assert.equal((await badge('[data-parity]')).parity, String(slow.parity), 'the agreement is still shown');
    await shot(page, 'backend-race-cpu');
    // A slow processor instead: 1.5 s on every CPU pass (SwiftShader's pass is tens of ms,
    // a few hundred under load). The GPU is asked for again, and wins.
    const fast = await race(0, 1500);
    assert.equal(fast.status.kind, 'webgpu_checked', JSON.stringify(fast));
    assert.equal(fast.backend, 'webgpu');
    assert.ok(fast.race.cpu_ms >= 1500 && fast.race.gpu_ms < fast.race.cpu_ms, JSON.stringify(fast.race));
    text = await words();
    assert.match(text, /Auto asked → WebGPU: it agrees with the CPU and is faster for this model/, text);
    assert.match(text, /\([\d.]+× faster\)/, text);
    // "measure again" races anew, without the test's busy time: the CPU's 1.5 s are gone.
    await page.locator('tp-backend-badge [data-measure]').click();
    await page.waitForFunction((was) => {
      const r = document.querySelector('transformer-playground').backendInfo?.race;
      return r != null && r.cpu_ms !== was;
    }, fast.race.cpu_ms, { timeout: 30000 });
    const again = await info();
    assert.ok(again.race.cpu_ms < 1500, JSON.stringify(again.race));
    assert.equal(again.backend, again.race.gpu_ms < again.race.cpu_ms ? 'webgpu' : 'cpu', JSON.stringify(again));
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('a_learner_who_insists_on_webgpu_keeps_it_however_slow_and_sees_the_times', async () => {
    const { page, errors } = await open(browser.context, server.url, 'backend=webgpu&play=0&views=backend');
    await page.waitForFunction(() => document.querySelector('transformer-playground').backendInfo?.race != null, null, { timeout: 60000 });
    const r = await page.evaluate(() => document.querySelector('transformer-playground').store.call('testOnlyRaceWithHandicap', { gpu_ms: 40, cpu_ms: 0 }));
    assert.equal(r.status.kind, 'webgpu_checked', JSON.stringify(r));
    assert.equal(r.backend, 'webgpu');
    assert.ok(r.race.gpu_ms > r.race.cpu_ms, JSON.stringify(r.race));
    await page.waitForFunction((g) => Number(document.querySelector('transformer-playground').shadowRoot.querySelector('tp-backend-badge')?.shadowRoot.querySelector('[data-race-gpu]')?.dataset.raceGpu) === g, r.race.gpu_ms);
    const text = (await page.locator('tp-backend-badge .badge').innerText()).replace(/\s+/g, ' ');
    assert.match(text, /WebGPU asked → WebGPU/, text);
    assert.match(text, /× slower\)/, text);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('one_wrong_gpu_logit_makes_the_page_choose_the_cpu_and_say_by_how_much', async () => {
    const { page, errors } = await open(browser.context, server.url, 'backend=webgpu&play=0&views=backend');
    await page.waitForFunction(() => document.querySelector('transformer-playground').backendInfo?.backend === 'webgpu', null, { timeout: 60000 });
    // The engine's test-only request: the same check with one GPU logit off by 1e-2.
    const info = await page.evaluate(() => document.querySelector('transformer-playground').store.call('testOnlyWrongGpuParity', {}));
    assert.equal(info.backend, 'cpu', 'a GPU that disagrees is not used');
    assert.equal(info.status.kind, 'cpu_disagrees');
    assert.ok(Math.abs(info.parity - 1e-2) < 1e-5, `the difference is the wrong logit's error: ${info.parity}`);
    await page.waitForFunction(() => {
      const d = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-backend-badge')?.shadowRoot.querySelector('[data-parity]')?.dataset.parity;
      return d !== undefined && Math.abs(Number(d) - 1e-2) < 1e-5;
    });
    const text = await page.locator('tp-backend-badge .badge').innerText();
    assert.match(text, /WebGPU asked → CPU: WebGPU's logits disagree with the CPU's/);
    assert.doesNotMatch(text, /NaN/);
    assert.deepEqual(errors, []);
    await page.close();
  });
});
