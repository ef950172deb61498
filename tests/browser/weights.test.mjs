// Weights edited in the page (`weights` view, `el.weights`) and the sampled token's draw
// (`tp-draw` in the generation view), in headless Chromium. An edit made with the keyboard
// or by typing changes the page's logits to what the engine computes for the edited model,
// the change is marked and listed, restoring brings back the trained numbers bit for bit,
// the exported model loads back to the same logits; the draw shown for a sampled token
// holds u inside the chosen token's interval, and that interval is the running sum of the
// softmax of the step's logits at the temperature (computed here, from the logits).

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { artifacts, launch, open, serve } from './harness.mjs';

let server;
let browser;
before(async () => {
  server = await serve();
  browser = await launch({ webgpu: false });
});
after(async () => {
  await browser?.close();
  await server?.close();
});

const MODEL = 'grammar-rope.safetensors';

/** The page's logits now, and the engine's for the same request, asked afresh. */
function pageAndEngineLogits(page) {
  return page.evaluate(async () => {
    const el = document.querySelector('transformer-playground');
    await el.updateComplete;
    const s = el.store;
    const f = el.lastForward;
    const fresh = await s.call('forward', { batch: f.tokens, switches: s.switches(), sampling: s.sampling() });
    return { page: Array.from(f.logits.data), engine: Array.from(fresh.logits.data) };
  });
}

/** Wait until the attribute of the element `locator` finds equals `want`. */
async function attrBecomes(locator, name, want, timeout = 30000) {
  const t0 = Date.now();
  for (;;) {
    const got = await locator.getAttribute(name);
    if (got === want) return;
    if (Date.now() - t0 > timeout) throw new Error(`${name} is ${got}, not ${want}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const edits = (page) => page.evaluate(() => document.querySelector('transformer-playground').weights.current);

describe('editing weights in the page', () => {
  test('a_keyboard_edit_of_an_embedding_gives_the_engines_logits_is_marked_and_restores_bit_for_bit', async () => {
    const { page, errors } = await open(browser.context, server.url, `model=${MODEL}&play=0&views=weights,output`);
    await page.waitForSelector('tp-weights .cell');
    const before = await pageAndEngineLogits(page);
    assert.deepEqual(before.page, before.engine);
    const cell = page.locator('tp-weights .cell').nth(3);
    const trained = Number(await cell.getAttribute('data-trained'));
    await cell.focus();
    await page.keyboard.press('Shift+ArrowUp');
    await page.waitForFunction(() => document.querySelector('transformer-playground').weights.current.changed > 0);
    await page.locator('tp-weights .cell[data-edited="1"]').first().waitFor();
    const e = await edits(page);
    assert.equal(e.edits.length, 1);
    assert.equal(e.edits[0].name, 'embed.weight');
    assert.equal(e.changed, 1);
    const moved = await page.locator('tp-weights .cell').nth(3);
    assert.equal(await moved.getAttribute('data-edited'), '1');
    assert.ok(Number(await moved.getAttribute('data-value')) > trained, 'ArrowUp raised the value');
    assert.equal(await page.locator('tp-weights .changed li[data-name="embed.weight"]').count(), 1);
    const edited = await pageAndEngineLogits(page);
    assert.deepEqual(edited.page, edited.engine, "the page's logits are the engine's for the edited model");
    assert.notDeepEqual(edited.page, before.page, 'the edit changed the logits');

    // Typing a value: the engine holds exactly it (1.5 is an f32), and reads it back.
    const input = page.locator('tp-weights input.value');
    await input.fill('1.5');
    await input.press('Enter');
    await attrBecomes(page.locator('tp-weights .cell').nth(3), 'data-value', '1.5');
    const idx = Number(await page.locator('tp-weights .cell').nth(3).getAttribute('data-index'));
    const read = await page.evaluate(async (idx) => {
      const el = document.querySelector('transformer-playground');
      const v = await el.weights.read({ name: 'embed.weight', start: idx, count: 1 });
      return v.values[0];
    }, idx);
    assert.equal(read, 1.5);
    const typed = await pageAndEngineLogits(page);
    assert.deepEqual(typed.page, typed.engine);
    // Bad input is refused with a message, and nothing changes.
    const refused = await page.evaluate(async () => {
      const el = document.querySelector('transformer-playground');
      try {
        await el.weights.set({ name: 'embed.weight', start: 0, values: [Number.NaN] });
        return 'accepted';
      } catch (err) {
        return err.message;
      }
    });
    assert.match(refused, /not a finite number/);
    assert.equal((await edits(page)).changed, 1);
    await page.locator('tp-weights').screenshot({ path: join(artifacts, 'weights-edited.png') });

    // One click restores the trained numbers, bit for bit.
    await page.locator('tp-weights button.restore-all').click();
    await page.waitForFunction(() => document.querySelector('transformer-playground').weights.current.changed === 0);
    const restored = await pageAndEngineLogits(page);
    assert.deepEqual(restored.page, before.page);
    assert.equal(await page.locator('tp-weights .cell[data-edited="1"]').count(), 0);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('an_edited_ffn_unit_exports_and_loads_back_to_the_same_logits', async () => {
    const { page, errors } = await open(browser.context, server.url, `model=${MODEL}&play=0&views=weights,output`);
    await page.locator('tp-weights select.mode').selectOption('ffn');
    await page.locator('tp-weights .strip').nth(2).waitFor();
    assert.equal(await page.locator('tp-weights .strip').count(), 3, "W1's row, the bias, W2's column");
    const got = await page.evaluate(async () => {
      const el = document.querySelector('transformer-playground');
      const w = el.weights;
      const info = el.info;
      // Unit 5 of layer 0: its W2 column, through the element's API.
      await w.set({ name: 'decoder.layers.0.linear2.weight', start: 5, stride: info.d_ff, values: Array.from({ length: info.d_model }, (_, i) => (i % 2 ? 0.7 : -0.7)) });
      await el.updateComplete;
      const edited = Array.from(el.lastForward.logits.data);
      const list = w.current;
      const blob = await w.exportModel();
      await el.loadCheckpoint(await blob.arrayBuffer(), 'edited');
      await el.updateComplete;
      return { edited, back: Array.from(el.lastForward.logits.data), list, after: w.current.changed };
    });
    assert.equal(got.list.edits[0].name, 'decoder.layers.0.linear2.weight');
    assert.equal(got.list.changed, 32);
    assert.deepEqual(got.back, got.edited, 'export → loadCheckpoint: the same logits');
    assert.equal(got.after, 0, 'the loaded export is a fresh model');
    assert.deepEqual(errors, []);
    await page.close();
  });
});

describe('the side studies on edited weights', () => {
  test('a_side_study_reads_the_weights_as_edited_and_as_restored', async () => {
    // The studies run in the whole engine, fetched apart from the page's inference engine;
    // they must see the session's model as it computes now, after every edit.
    const { page, errors } = await open(browser.context, server.url, `model=${MODEL}&play=0&views=output`);
    const got = await page.evaluate(async () => {
      const el = document.querySelector('transformer-playground');
      const s = el.store;
      const c = el.info.d_model;
      const name = (await s.call('weightTensors', {})).map((t) => t.name).find((n) => /embed\.weight$/.test(n));
      const tokens = [1, 2];
      const before = await s.call('embeddingScale', { tokens });
      // Token 1's embedding row set to 0.5 everywhere: its norm is 0.5·√C.
      await s.call('setWeights', { name, start: c, values: Array(c).fill(0.5) });
      const edited = await s.call('embeddingScale', { tokens });
      await s.call('restoreWeights', {});
      const restored = await s.call('embeddingScale', { tokens });
      return { c, name, before: before.token_norm, edited: edited.token_norm, restored: restored.token_norm };
    });
    assert.ok(got.name, 'the model has an embedding table');
    assert.ok(Math.abs(got.edited[0] - 0.5 * Math.sqrt(got.c)) < 1e-5, `edited row's norm ${got.edited[0]}, want ${0.5 * Math.sqrt(got.c)}`);
    assert.notEqual(got.before[0], got.edited[0]);
    assert.equal(got.edited[1], got.before[1], 'the other row is untouched');
    assert.deepEqual(got.restored, got.before, 'restored: the trained numbers bit for bit');
    assert.deepEqual(errors, []);
    await page.close();
  });
});

describe('the draw of a sampled token', () => {
  test('the_draw_shown_for_a_sampled_token_reproduces_it', async () => {
    const temp = 1.4;
    const { page, errors } = await open(browser.context, server.url, `model=${MODEL}&play=0&strategy=sample&temp=${temp}&seed=9&max=8&views=generation`);
    for (let i = 0; i < 8; i++) await page.evaluate(() => document.querySelector('transformer-playground').store.gen.stepOne());
    await page.waitForSelector('tp-draw .bar');
    const bar = page.locator('tp-draw .bar');
    const data = await bar.evaluate((b) => ({ ...b.dataset, sentence: b.getAttribute('aria-label') }));
    const shown = {
      ...data,
      ...(await page.evaluate(() => {
        const el = document.querySelector('transformer-playground');
        const step = el.store.gen.step.step;
        return { token: step.token, logits: Array.from(step.logits), generated: [...el.generated] };
      })),
    };
    const u = Number(shown.u);
    const lo = Number(shown.lo);
    const hi = Number(shown.hi);
    assert.equal(Number(shown.chosen), shown.token, 'the last token');
    assert.ok(lo <= u && u < hi, `u ${u} in [${lo}, ${hi})`);
    // The interval is the running sum of softmax(logits / τ) in token order, computed here.
    const m = Math.max(...shown.logits);
    const e = shown.logits.map((l) => Math.exp((l - m) / temp));
    const z = e.reduce((a, b) => a + b, 0);
    const p = e.map((x) => x / z);
    const wantLo = p.slice(0, shown.token).reduce((a, b) => a + b, 0);
    assert.ok(Math.abs(wantLo - lo) < 1e-5 && Math.abs(wantLo + p[shown.token] - hi) < 1e-5, `interval [${lo}, ${hi}) against [${wantLo}, ${wantLo + p[shown.token]})`);
    const best = p.indexOf(Math.max(...p));
    assert.equal(Number(shown.mostLikely), best);
    assert.match(shown.sentence, /^u = \d\.\d+ fell in '/);
    // The first token's draw, one click back at a time.
    for (let i = 0; i < 7; i++) await page.locator('tp-draw button.prev').click();
    await attrBecomes(bar, 'data-step', '0');
    const first = await bar.evaluate((b) => ({ ...b.dataset }));
    assert.equal(first.step, '0');
    assert.equal(Number(first.chosen), shown.generated[0]);
    assert.ok(Number(first.lo) <= Number(first.u) && Number(first.u) < Number(first.hi));
    await page.locator('tp-generation').screenshot({ path: join(artifacts, 'generation-draw.png') });
    assert.deepEqual(errors, []);
    await page.close();
  });
});
