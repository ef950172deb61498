// Redrawing only what changed, in headless Chromium: after a click on the causal-mask
// switch every view bound to the forward pass shows the core's numbers for the new
// setting (read against a forward pass asked of the engine directly), while views whose
// numbers do not depend on the switch are not touched; during playback the views that
// show the prompt alone (not the generated tokens) are not touched either. Behaviour only:
// how long any of it takes is printed by `cargo xtask bench`, never asserted here.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, open, serve } from './harness.mjs';

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

/** Count DOM mutations inside the named views (their shadow roots) from now on. */
function watch(page, tags) {
  return page.evaluate((tags) => {
    const el = document.querySelector('transformer-playground');
    window.__mut = Object.fromEntries(tags.map((t) => [t, 0]));
    window.__observers = tags.map((t) => {
      const v = el.shadowRoot.querySelector(t);
      const o = new MutationObserver((m) => (window.__mut[t] += m.length));
      o.observe(v.shadowRoot, { subtree: true, childList: true, attributes: true, characterData: true });
      return o;
    });
  }, tags);
}

const mutations = (page) =>
  page.evaluate(() => {
    for (const o of window.__observers) o.disconnect();
    return window.__mut;
  });

/** Wait until the named views have not changed for `quiet` ms (they finished their own work). */
async function settle(page, tags, quiet = 1500) {
  for (let tries = 0; tries < 40; tries++) {
    await watch(page, tags);
    await page.waitForTimeout(quiet);
    const m = await mutations(page);
    if (Object.values(m).every((n) => n === 0)) return;
  }
  throw new Error('the views kept changing');
}

/**
 * Wait until every view bound to the forward pass holds the store's latest one, drawn.
 * (The predicate is synchronous: playwright takes a promise it returns for a truthy answer.)
 */
function drawn(page) {
  return page.waitForFunction(() => {
    const el = document.querySelector('transformer-playground');
    const f = el.lastForward;
    const att = el.shadowRoot.querySelector('tp-attention');
    const masks = el.shadowRoot.querySelector('tp-masks');
    if (!f || att.attention !== f.attention || masks.masks !== f.masks) return false;
    return !el.isUpdatePending && !att.isUpdatePending && !masks.isUpdatePending;
  });
}

/**
 * What the attention, masks and output views show, against a forward pass of the same
 * tokens with `causal` asked of the engine directly.
 */
async function compareWithCore(page, causal) {
  return page.evaluate(async (causal) => {
    const el = document.querySelector('transformer-playground');
    const root = (tag) => el.shadowRoot.querySelector(tag).shadowRoot;
    const core = await el.store.call('forward', {
      batch: el.lastForward.tokens,
      switches: { causal, padding_mask: true, scale: true, ablate: [] },
      sampling: el.store.sampling(),
      qkv: false,
    });
    const t = core.attention.find((a) => a.site === 'decoder_self' && a.layer === 0);
    const [, H, T, S] = t.probs.shape;
    let worstProb = 0;
    let cells = 0;
    let masked = 0;
    for (const c of root('tp-attention').querySelectorAll('.grid.map .cell')) {
      const i = Number(c.dataset.i);
      const j = Number(c.dataset.j);
      const want = t.probs.data[((0 * H + 0) * T + i) * S + j];
      worstProb = Math.max(worstProb, Math.abs(Number(c.dataset.prob) - want));
      if (c.classList.contains('masked')) masked++;
      cells++;
    }
    const m = core.masks.find((x) => x.site === 'decoder_self');
    let maskWrong = 0;
    let maskCells = 0;
    for (const c of root('tp-masks').querySelectorAll('.grid button.cell')) {
      const i = Number(c.dataset.i);
      const j = Number(c.dataset.j);
      if (Number(c.dataset.reason) !== m.reasons.data[i * S + j]) maskWrong++;
      maskCells++;
    }
    let worstOut = 0;
    let outRows = 0;
    for (const c of root('tp-output').querySelectorAll('[data-token][data-prob]')) {
      worstOut = Math.max(worstOut, Math.abs(Number(c.dataset.prob) - core.model_probs[Number(c.dataset.token)]));
      outRows++;
    }
    return { T, S, cells, masked, worstProb, maskCells, maskWrong, worstOut, outRows };
  }, causal);
}

describe('redrawing only what changed', () => {
  test('after_a_switch_click_every_view_bound_to_the_forward_pass_shows_the_core_numbers_and_the_others_are_untouched', async () => {
    const { page, errors } = await open(browser.context, server.url, 'chapter=all&play=0&backend=cpu', { viewport: { width: 1280, height: 16000 } });
    const independent = ['tp-embedding-scale', 'tp-positions', 'tp-parallel', 'tp-schedule'];
    await settle(page, independent);
    await drawn(page);
    const on = await compareWithCore(page, true);
    assert.equal(on.cells, on.T * on.S, 'one cell per query and key');
    assert.equal(on.masked, (on.T * (on.T - 1)) / 2, 'causal: every later key hidden');
    const box = page.locator('tp-controls input[type="checkbox"]').first();
    for (const causal of [false, true]) {
      await watch(page, independent);
      const before = await page.evaluate(() => document.querySelector('transformer-playground').lastForward);
      await box.click();
      assert.equal(await box.isChecked(), causal, 'the switch shows its new state');
      // The pass of the new setting: its decoder mask is the rule the switch asks for (a pass
      // of the old setting may still land first on a busy machine).
      await page.waitForFunction(
        ({ b, causal }) => {
          const f = document.querySelector('transformer-playground').lastForward;
          return f !== b && f.masks.find((m) => m.site === 'decoder_self')?.rule.kind === (causal ? 'causal' : 'none');
        },
        { b: before, causal },
      );
      await drawn(page);
      const r = await compareWithCore(page, causal);
      assert.equal(r.cells, r.T * r.S);
      assert.equal(r.masked, causal ? (r.T * (r.T - 1)) / 2 : 0, `masked cells with the causal mask ${causal ? 'on' : 'off'}`);
      assert.ok(r.worstProb <= 1e-6, `attention cells against the core: worst difference ${r.worstProb}`);
      assert.equal(r.maskCells, r.T * r.S);
      assert.equal(r.maskWrong, 0, 'every mask cell says why as the core does');
      assert.ok(r.outRows > 0 && r.worstOut <= 1e-6, `output probabilities against the core: worst difference ${r.worstOut}`);
      // A switch the view does not depend on leaves it as it was.
      await page.waitForTimeout(500);
      assert.deepEqual(await mutations(page), Object.fromEntries(independent.map((t) => [t, 0])), 'views independent of the causal mask untouched');
    }
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('playback_leaves_the_views_of_the_prompt_alone_and_ends_with_the_core_numbers', async () => {
    const { page, errors } = await open(browser.context, server.url, 'chapter=all&play=0&backend=cpu&speed=0&max=8', { viewport: { width: 1280, height: 16000 } });
    // These show the prompt (or the model) only, never the generated tokens.
    const promptOnly = ['tp-embedding-scale', 'tp-positions', 'tp-parallel', 'tp-ffn', 'tp-no-leak', 'tp-dropout'];
    await settle(page, promptOnly);
    await watch(page, promptOnly);
    await page.evaluate(() => document.querySelector('transformer-playground').store.gen.start(true));
    await page.waitForFunction(() => {
      const el = document.querySelector('transformer-playground');
      return el.done && !el.playing;
    });
    await drawn(page);
    // Playback draws once per frame: the generation view shows the last token in the frame
    // after the run ends (it fails here if it never does).
    await page
      .waitForFunction(() => {
        const el = document.querySelector('transformer-playground');
        return el.shadowRoot.querySelector('tp-generation').shadowRoot.querySelector('[data-generated]')?.dataset.generated === el.generated.join(',');
      }, null, { timeout: 10_000 })
      .catch(() => {});
    const shown = await page.evaluate(() => {
      const el = document.querySelector('transformer-playground');
      const g = el.shadowRoot.querySelector('tp-generation').shadowRoot.querySelector('[data-generated]');
      return { drawn: g.dataset.generated, ids: el.generated.join(','), tokens: el.lastForward.tokens[0].length };
    });
    assert.equal(shown.drawn, shown.ids, 'the generation view shows every generated token');
    const r = await compareWithCore(page, true);
    assert.equal(r.T, shown.tokens, 'the attention map covers the prompt and every generated token');
    assert.equal(r.cells, r.T * r.S);
    assert.ok(r.worstProb <= 1e-6, `attention cells against the core: worst difference ${r.worstProb}`);
    assert.equal(r.maskWrong, 0);
    assert.ok(r.outRows > 0 && r.worstOut <= 1e-6, `output probabilities against the core: worst difference ${r.worstOut}`);
    assert.deepEqual(await mutations(page), Object.fromEntries(promptOnly.map((t) => [t, 0])), 'views of the prompt untouched by playback');
    assert.deepEqual(errors, []);
    await page.close();
  });
});
