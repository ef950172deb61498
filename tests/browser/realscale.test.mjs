// Every view at real scale, in headless Chromium: a random GPT-2-shaped folder with GPT-2's
// shape where it costs (12 layers × 12 heads, 1,024 positions, a 50,257-token vocabulary;
// d_model 96 so the test stays short), made in memory by ./random-gpt2.mjs and loaded through
// the engine's loadHf, with every view shown (`chapter=all`). No view throws or reports an
// error; the head grid has 144 heads; the output view lists the top tokens with the
// engine's probabilities, finds a token by search, and its sum over the whole vocabulary is
// the engine's and 1 within 1e-5; no drop-down lists the vocabulary; the page's element
// count stays bounded (one element per vocabulary entry would be > 50,000). The timings of
// each view at this scale are in ./realscale-bench.mjs.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { artifacts, launch, open, seeView, serve } from './harness.mjs';
import { elementCounts, filesB64, loadFolder, MEDIUM } from './random-gpt2.mjs';

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

describe('views at real scale', () => {
  test('12 × 12 heads, 1,024 positions, 50,257 tokens: every view draws, sums exact, DOM bounded', async () => {
    const files = filesB64(MEDIUM);
    const { page, errors } = await open(browser.context, server.url, 'play=0&chapter=all', { viewport: { width: 1280, height: 900 } });
    await loadFolder(page, files);
    const info = await page.evaluate(() => {
      const i = document.querySelector('transformer-playground').store.info;
      return { vocab: i.vocab.length, heads: i.n_heads, layers: i.decoder_layers, maxLen: i.max_len, kind: i.tokenizer_kind };
    });
    assert.deepEqual(info, { vocab: 50257, heads: 12, layers: 12, maxLen: 1024, kind: 'bpe' });
    // Every view that asks the engine has answered: the output's rows are the last pass's
    // (the output view scrolled to first: its code is fetched when it is first seen).
    await seeView(page, 'output');
    await page.waitForFunction(
      () => {
        const el = document.querySelector('transformer-playground');
        const out = el.shadowRoot.querySelector('tp-output');
        return el.store.lastForward && out?.shadowRoot.querySelector('[data-sum]') && el.store.lastForward.model_probs.length === 50257;
      },
      null,
      { timeout: 120000 },
    );
    // Scroll through the page so every view that waits to be seen draws, then let them settle.
    const height = await page.evaluate(() => document.documentElement.scrollHeight);
    for (let y = 0; y < height; y += 800) await page.evaluate((y) => scrollTo(0, y), y);
    // The views read below, each brought into sight and its code awaited.
    for (const v of ['attention', 'order', 'extrapolation']) await seeView(page, v);
    await page.waitForTimeout(2000);

    // The head grid: every head of every layer.
    const heads = await page.evaluate(() => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-attention').shadowRoot.querySelectorAll('.thumb').length);
    assert.equal(heads, 144);

    // The output view's top tokens carry the engine's probabilities; the sum over all 50,257 is the engine's and 1.
    const out = await page.evaluate(() => {
      const el = document.querySelector('transformer-playground');
      const o = el.shadowRoot.querySelector('tp-output').shadowRoot;
      const rows = [...o.querySelectorAll('.bars:not(.found) [data-token]')].map((c) => [Number(c.dataset.token), Number(c.dataset.prob)]);
      const p = el.store.lastForward.model_probs;
      let sum = 0;
      for (let i = 0; i < p.length; i++) sum += p[i];
      const top = Array.from(p.keys())
        .sort((a, b) => p[b] - p[a] || a - b)
        .slice(0, rows.length);
      return { rows, engine: rows.map(([id]) => p[id]), top, sum, shownSum: Number(o.querySelector('[data-sum]').dataset.sum), n: p.length };
    });
    assert.equal(out.rows.length, 12);
    assert.deepEqual(
      out.rows.map(([id]) => id),
      out.top,
    );
    assert.deepEqual(
      out.rows.map(([, p]) => p),
      out.engine,
    );
    assert.ok(Math.abs(out.sum - 1) < 1e-5, `sum of the engine's ${out.n} probabilities: ${out.sum}`);
    assert.ok(Math.abs(out.shownSum - out.sum) < 1e-12, `the view's sum ${out.shownSum} is the engine's ${out.sum}`);

    // Search: a token found by its text, with its probability and rank.
    const found = await page.evaluate(async () => {
      const o = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-output');
      const input = o.shadowRoot.querySelector('input[type=search]');
      input.value = 't50000';
      input.dispatchEvent(new Event('input'));
      await o.updateComplete;
      return [...o.shadowRoot.querySelectorAll('.bars.found [data-token]')].map((c) => Number(c.dataset.token));
    });
    assert.deepEqual(found, [50000]);

    // No drop-down lists the vocabulary; the element count stays far below one per token.
    const options = await page.evaluate(() => {
      let most = 0;
      const walk = (root) => {
        for (const s of root.querySelectorAll('select')) most = Math.max(most, s.options.length);
        for (const e of root.querySelectorAll('*')) if (e.shadowRoot) walk(e.shadowRoot);
      };
      walk(document);
      return most;
    });
    assert.ok(options < 2000, `a drop-down of ${options} options`);
    const counts = await elementCounts(page);
    for (const [view, n] of Object.entries(counts.per)) assert.ok(n < 10000, `${view}: ${n} elements`);
    assert.ok(counts.total < 40000, `${counts.total} elements in the page`);

    // No view reports an engine error.
    const problems = await page.evaluate(() => {
      const out = [];
      for (const v of document.querySelector('transformer-playground').shadowRoot.querySelectorAll('.view[data-view]')) {
        const el = v.firstElementChild;
        if (el && typeof el.problem === 'string' && el.problem) out.push(`${v.dataset.view}: ${el.problem}`);
      }
      return out;
    });
    assert.deepEqual(problems, []);

    // The experiments defined for the shipped models say so and run on them.
    const shippedOnly = await page.evaluate(() =>
      ['tp-order', 'tp-extrapolation'].filter((t) => document.querySelector('transformer-playground').shadowRoot.querySelector(t)?.shadowRoot.querySelector('[data-shipped-only]')),
    );
    assert.deepEqual(shippedOnly, ['tp-order', 'tp-extrapolation']);

    // Generation with the KV cache: two greedy tokens.
    const gen = await page.evaluate(async () => {
      const s = document.querySelector('transformer-playground').store;
      for (let i = 0; i < 2; i++) await s.gen.stepOne();
      return { ids: [...s.gen.generated], error: s.error, note: s.gen.note };
    });
    assert.equal(gen.ids.length, 2, JSON.stringify(gen));
    assert.equal(gen.error, '');
    assert.ok(gen.ids.every((id) => id >= 0 && id < 50257));

    // A prompt longer than the traced limit (2^24 weights: 144 heads allow ⌊√(2^24 / 144)⌋ = 341
    // positions): the views trace its first 341 tokens and the prompt's note says so; no error.
    const keep = Math.floor(Math.sqrt(2 ** 24 / (12 * 12)));
    await page.evaluate((t) => document.querySelector('transformer-playground').store.typeText(t), '😀🐱👍🏽'.repeat(50));
    await page.waitForFunction(
      (keep) => {
        const s = document.querySelector('transformer-playground').store;
        return s.error || (s.tokenized[0]?.ids.length > keep && s.lastForward?.logits.shape[1] === keep);
      },
      keep,
      { timeout: 60000 },
    );
    const cut = await page.evaluate(() => {
      const el = document.querySelector('transformer-playground');
      return { error: el.store.error, note: el.store.promptNote, shown: el.shadowRoot.querySelector('tp-input').shadowRoot.textContent };
    });
    assert.equal(cut.error, '');
    assert.ok(cut.note.includes(String(keep)) && cut.note.includes(String(2 ** 24)), cut.note);
    assert.deepEqual(errors, []);
    await page.screenshot({ path: join(artifacts, 'realscale-top.png') });
    await page.close();
  });
});
