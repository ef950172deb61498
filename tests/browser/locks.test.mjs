// A classroom link's locks hold against every path a setting can change by: the mask
// editor (its rule is the causal mask's setting), the lab form, the text box, the batch
// box, head ablation in the attention view, the sampling inputs, the URL hash and the
// scripting API. Each test tries one path and checks two things: the engine's result is
// what the locked setting makes it (read off the forward pass the page runs again after
// the attempt, not off the settings alone), and the control of that setting is disabled
// with its reason beside it. One page holds every lock; a second page shows a lesson whose
// experiment needs a locked setting saying so instead of waiting. One browser throughout.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { artifacts, launch, open, serve } from './harness.mjs';

const P = 'transformer-playground';
const LOCKED = ['causal', 'text', 'batch', 'ablate', 'strategy', 'temp', 'topk', 'topp', 'beam', 'train', 'model'];
const VIEWS = 'views=controls,input,masks,attention,output,lab';
const LINK = `${VIEWS}&play=0&strategy=sample&temp=0.7&train=task=reverse%26n_layers=1&lock=${LOCKED.join(',')}`;

let server;
let browser;
let page;
let errors;
before(async () => {
  server = await serve(undefined, { csp: true });
  browser = await launch({ webgpu: false });
  ({ page, errors } = await open(browser.context, server.url, LINK));
});
after(async () => {
  await browser?.close();
  await server?.close();
  assert.deepEqual(server?.cspReports ?? [], []);
});

/** What the engine computed last, run again now under the page's settings: masks, the input rows, the distributions. */
function engineNow(page) {
  return page.evaluate(async () => {
    const el = document.querySelector('transformer-playground');
    // Whatever an attempt left in the settings, the next forward pass computes with it.
    await el.store.runAgain();
    await el.updateComplete;
    const f = el.lastForward;
    const main = f.masks.find((m) => m.site === 'decoder_self' || m.site === 'encoder_self');
    // Above the diagonal of the first row: hidden (reason 1) under the causal mask.
    const [, T, S] = main.reasons.shape;
    const above = [];
    for (let i = 0; i < T; i++) for (let j = i + 1; j < S; j++) above.push(main.reasons.data[i * S + j]);
    return {
      rule: main.rule.kind,
      hiddenAbove: above.every((r) => (r & 1) === 1),
      rows: f.tokens.length,
      tokens: f.tokens[0].join('|'),
      model: [...f.model_probs].map((x) => x.toFixed(6)).join(','),
      next: [...f.next_probs].map((x) => x.toFixed(6)).join(','),
      st: JSON.parse(JSON.stringify(el.st)),
      lockNote: el.lockNote,
    };
  });
}

/** Whether the control is disabled, and the reason drawn beside it (its text; '' when none is visible). */
async function lockedControl(host, control, setting) {
  const c = page.locator(`${P} ${host} ${control}`).first();
  const why = page.locator(`${P} ${host} [data-locked-why="${setting}"]`).first();
  return {
    disabled: await c.isDisabled(),
    why: (await why.count()) && (await why.isVisible()) ? (await why.textContent()).trim() : '',
  };
}

function assertLocked(c, words) {
  assert.equal(c.disabled, true, 'the control is disabled');
  assert.match(c.why, /locked by your teacher/, `a reason beside it: "${c.why}"`);
  assert.ok(c.why.includes(words), `it names the setting (${words}): "${c.why}"`);
}

/** Send the event a view's control sends when it is used: the path a live-looking control would take. */
function viewSends(host, type, detail) {
  return page.evaluate(
    async ([host, type, detail]) => {
      const el = document.querySelector('transformer-playground');
      el.shadowRoot.querySelector(host).dispatchEvent(new CustomEvent(type, { detail, bubbles: true, composed: true }));
      await new Promise((r) => setTimeout(r, 400));
      await el.updateComplete;
    },
    [host, type, detail],
  );
}

describe('locks hold against every path', () => {
  let before0;
  test('the page opens with its locks and the engine computes under them', async () => {
    before0 = await engineNow(page);
    assert.deepEqual(before0.st.lock, LOCKED);
    assert.equal(before0.rule, 'causal');
    assert.equal(before0.hiddenAbove, true);
    assert.equal(before0.st.temp, 0.7);
  });

  test('the mask editor: choosing "none" leaves the causal mask (the mask rule and the causal switch are one setting)', async () => {
    assertLocked(await lockedControl('tp-masks', 'input[data-rule="none"]', 'mask'), 'causal mask');
    assertLocked(await lockedControl('tp-controls', 'input[data-setting="causal"]', 'causal'), 'causal mask');
    await page.locator(`${P} tp-masks input[data-rule="none"]`).click({ force: true, timeout: 2000 }).catch(() => undefined);
    await viewSends('tp-masks', 'tp-mask', { rule: { kind: 'none' }, cells: [] });
    const now = await engineNow(page);
    assert.equal(now.rule, 'causal', 'the engine still applies the causal mask');
    assert.equal(now.hiddenAbove, true);
    assert.equal(now.st.mask, null);
    assert.match(now.lockNote, /causal mask/);
    assert.equal(await page.locator(`${P} tp-masks input[data-rule="switch"]`).isChecked(), true, 'the radio shows the rule in force');
  });

  test('the text box: typing is refused, the tokens stay', async () => {
    assertLocked(await lockedControl('tp-input', 'textarea[data-setting="text"]', 'text'), 'input text');
    await page.evaluate(() => {
      const t = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-input').shadowRoot.querySelector('textarea[data-setting="text"]');
      t.value = 'zzz';
      t.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
    });
    await page.waitForTimeout(400);
    const now = await engineNow(page);
    assert.equal(now.tokens, before0.tokens, 'the engine read the same tokens');
    assert.equal(now.st.text, before0.st.text);
  });

  test('the batch checkbox and box: no second row reaches the engine', async () => {
    assertLocked(await lockedControl('tp-input', 'input[data-setting="batch"]', 'batch'), 'other sequences of the batch');
    await viewSends('tp-input', 'tp-batch', ['ab', 'abc']);
    const now = await engineNow(page);
    assert.equal(now.rows, 1, 'one row, as the link set it');
    assert.deepEqual(now.st.batch, []);
  });

  test('head ablation in the attention view: the head stays on', async () => {
    assertLocked(await lockedControl('tp-attention', 'button.abl', 'ablate'), 'heads switched off');
    await page.locator(`${P} tp-attention button.abl`).first().click({ force: true, timeout: 2000 }).catch(() => undefined);
    await viewSends('tp-attention', 'tp-ablate', { site: 'decoder_self', layer: 0, head: 0 });
    const now = await engineNow(page);
    assert.deepEqual(now.st.ablate, []);
    assert.equal(now.model, before0.model, "the model's distribution is the one with every head on");
  });

  test('the sampling inputs: temperature, top-k, top-p, beam width and the decoding rule stay', async () => {
    assertLocked(await lockedControl('tp-output', 'input[data-setting="temp"]', 'temp'), 'temperature');
    assertLocked(await lockedControl('tp-output', 'input[data-setting="topk"]', 'topk'), 'top-k');
    assertLocked(await lockedControl('tp-output', 'input[data-setting="topp"]', 'topp'), 'top-p');
    assertLocked(await lockedControl('tp-output', 'input[data-setting="beam"]', 'beam'), 'beam width');
    assertLocked(await lockedControl('tp-output', 'button[data-setting="strategy"]', 'strategy'), 'decoding rule');
    await viewSends('tp-output', 'tp-sampling', { temperature: 2.5, top_k: 3, top_p: 0.3, beam_width: 5, strategy: 'greedy' });
    const now = await engineNow(page);
    assert.equal(now.st.temp, 0.7);
    assert.equal(now.st.topk, before0.st.topk);
    assert.equal(now.st.topp, before0.st.topp);
    assert.equal(now.st.beam, before0.st.beam);
    assert.equal(now.st.strategy, 'sample');
    assert.equal(now.next, before0.next, 'the sampled distribution is the one at temperature 0.7');
  });

  test('the URL hash: a changed link can neither change a locked setting nor lift the locks', async () => {
    await page.evaluate((views) => (location.hash = `#${views}&causal=0&mask=none&temp=3&text=qq&lock=`), VIEWS);
    await page.waitForFunction(() => document.querySelector('transformer-playground').lockNote !== '');
    await page.waitForTimeout(300);
    const now = await engineNow(page);
    assert.equal(now.rule, 'causal');
    assert.equal(now.tokens, before0.tokens);
    assert.equal(now.next, before0.next);
    assert.deepEqual(now.st.lock, LOCKED, 'the locks hold');
    assertLocked(await lockedControl('tp-controls', 'input[data-setting="causal"]', 'causal'), 'causal mask');
  });

  test('the scripting API: patch, apply, the frozen settings and loading other weights are refused with the reason', async () => {
    const r = await page.evaluate(async () => {
      const el = document.querySelector('transformer-playground');
      // Scripts run unstrict here: an assignment to the frozen settings is dropped, not thrown.
      let frozen = '';
      try {
        el.st.causal = false;
      } catch (e) {
        frozen = String(e);
      }
      frozen ||= el.st.causal === null && Object.isFrozen(el.st) ? 'TypeError (dropped)' : '';
      let pushed = '';
      try {
        el.st.ablate.push({ site: 'decoder_self', layer: 0, head: 0 });
      } catch (e) {
        pushed = String(e);
      }
      await el.store.patch({ causal: false, temp: 2 });
      await el.store.apply({ ...el.st, mask: { rule: { kind: 'none' }, cells: [] }, text: 'qq' });
      await el.store.toggleHead({ site: 'decoder_self', layer: 0, head: 1 });
      let weights = '';
      try {
        await el.loadCheckpoint(new Uint8Array(16));
      } catch (e) {
        weights = String(e);
      }
      let edit = '';
      try {
        const t = (await el.weights.tensors()).find((x) => x.trained);
        await el.weights.set({ name: t.name, start: 0, values: [3] });
      } catch (e) {
        edit = String(e);
      }
      return { frozen, pushed, weights, edit, edits: (await el.weights.list()).changed, why: el.lockedWhy('mask'), customModel: el.customModel };
    });
    assert.match(r.frozen, /TypeError/);
    assert.match(r.pushed, /TypeError/);
    assert.match(r.weights, /model/, 'other weights are another model: refused');
    assert.equal(r.customModel, '');
    assert.match(r.edit, /model/, 'edited weights are another model: refused');
    assert.equal(r.edits, 0, 'the engine holds no edited weight');
    assert.match(r.why, /locked by your teacher: causal mask/);
    assertLocked(await lockedControl('tp-masks', 'input[data-rule="none"]', 'mask'), 'causal mask');
    assertLocked(await lockedControl('tp-controls', 'select[data-setting="model"]', 'model'), 'model');
    const now = await engineNow(page);
    assert.equal(now.rule, 'causal');
    assert.equal(now.tokens, before0.tokens);
    assert.equal(now.model, before0.model);
    assert.equal(now.next, before0.next);
  });

  test('the lab form: its fields are disabled, and a run with other settings is refused', async () => {
    await page.locator(`${P} tp-lab`).scrollIntoViewIfNeeded();
    await page.waitForFunction(() => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-lab')?.shadowRoot?.querySelector('form.settings [name="n_layers"]'), null, { timeout: 30000 });
    const layers = page.locator(`${P} tp-lab form.settings [name="n_layers"]`);
    assert.equal(await layers.inputValue(), '1', "the form holds the link's run");
    assertLocked(await lockedControl('tp-lab', 'form.settings [name="n_layers"]', 'train'), 'lab training settings');
    await layers.fill('4', { force: true, timeout: 2000 }).catch(() => undefined);
    await page.locator(`${P} tp-lab form.settings [name="n_layers"]`).dispatchEvent('change');
    assert.equal(await page.locator(`${P} tp-lab [data-action="train-preset"]`).isDisabled(), true);
    const r = await page.evaluate(async () => {
      const el = document.querySelector('transformer-playground');
      const n = el.runs.length;
      const h = el.train({ task: 'reverse', n_layers: 4 });
      const why = await h.started.then(
        () => '',
        (e) => String(e),
      );
      return { why, added: el.runs.length - n };
    });
    assert.match(r.why, /lab training settings/);
    assert.equal(r.added, 0, 'no run was made');
    await page.locator(`${P} tp-lab`).screenshot({ path: join(artifacts, 'locks-lab.png') });
  });

  test('the notes beside locked controls speak Chinese in a Chinese page', async () => {
    await page.evaluate(() => document.querySelector('transformer-playground').store.setLang('zh-Hans'));
    await page.waitForFunction(() => document.querySelector('transformer-playground').locale === 'zh-Hans');
    const c = await lockedControl('tp-controls', 'input[data-setting="causal"]', 'causal');
    assert.equal(c.disabled, true);
    assert.match(c.why, /[\u4e00-\u9fff]/, c.why);
    assert.doesNotMatch(c.why, /locked by/);
    await page.locator(`${P} tp-controls`).screenshot({ path: join(artifacts, 'locks-controls-zh-Hans.png') });
    await page.evaluate(() => document.querySelector('transformer-playground').store.setLang('en'));
    assert.deepEqual(errors, []);
  });
});

describe('a lesson whose experiment needs a locked setting', () => {
  test('says the setting is locked instead of waiting for the learner', async () => {
    const { page: p, errors: e } = await open(browser.context, server.url, 'lesson=causal-mask&lock=causal');
    const status = p.locator(`${P} tp-lesson .try .status`);
    assert.equal(await status.getAttribute('data-blocked'), '');
    const text = await status.textContent();
    assert.match(text, /causal mask/);
    assert.doesNotMatch(text, /Waiting for you/);
    await p.locator(`${P} tp-lesson`).screenshot({ path: join(artifacts, 'locks-lesson-blocked.png') });
    assert.deepEqual(e, []);
    await p.close();
  });
});

describe('an assignment’s model from lesson to lesson', () => {
  // The teacher's model is the first lesson's own (so the page's hash could leave it out); the second lesson's own is another model.
  for (const [named, want] of [
    ['&model=grammar-sinusoidal.safetensors', 'grammar-sinusoidal.safetensors'],
    ['', null],
  ]) {
    test(named ? 'a model the link names (and locks) stays the model of the next lesson' : 'a link that names no model opens each lesson on its own', async () => {
      const { page: p, errors: e } = await open(browser.context, server.url, `lesson=causal-mask&lessons=causal-mask,padding-mask${named}&lock=model`);
      const first = await p.evaluate(() => document.querySelector('transformer-playground').st.model);
      await p.locator(`${P} tp-lesson [data-tour="next"]`).click();
      await p.waitForFunction(() => {
        const el = document.querySelector('transformer-playground');
        return el.st.lesson === 'padding-mask' && el.lastForward?.tokens.length > 0;
      });
      const now = await p.evaluate(() => ({ model: document.querySelector('transformer-playground').st.model, hash: location.hash }));
      if (want) {
        assert.equal(first, want);
        assert.equal(now.model, want, `the teacher's model, not the lesson's own (${now.hash})`);
        assert.match(now.hash, /model=grammar-sinusoidal/);
      } else {
        assert.notEqual(now.model, first, 'the second lesson opens on its own model');
      }
      assert.deepEqual(e, []);
      await p.close();
    });
  }
});
