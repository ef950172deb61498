// The q·k inspector beside the attention heatmap, in headless Chromium: hovering or
// focusing a cell draws q_i, k_j and their elementwise products, whose sum must be the
// cell's raw score; the symmetry readout tells a model trained with W_Q = W_K apart.
// Screenshots land in artifacts/.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { artifacts, dist, launch, open, serve } from './harness.mjs';

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

const TOL = 1e-4;

/** Everything the inspector shows for the cell it is on, read from its data attributes. */
async function inspector(page, i, j) {
  const box = page.locator(`tp-qk .box[data-i="${i}"][data-j="${j}"]`);
  await box.waitFor({ timeout: 30000 });
  const attr = async (name) => box.getAttribute(name);
  const strip = (cls) => box.locator(`.strip.${cls} span`).evaluateAll((s) => s.map((x) => Number(x.dataset.value)));
  return {
    raw: Number(await attr('data-raw')),
    dot: Number(await attr('data-dot')),
    score: Number(await attr('data-score')),
    bias: Number(await attr('data-bias')),
    gap: (await attr('data-qk-gap')) === '' ? null : Number(await attr('data-qk-gap')),
    q: await strip('q'),
    k: await strip('k'),
    v: await strip('v'),
    prod: await strip('prod'),
  };
}

/** The score the heatmap cell (i, j) itself carries. */
async function cellScore(page, i, j) {
  return Number(await page.locator(`tp-attention .cell[data-i="${i}"][data-j="${j}"]`).getAttribute('data-score'));
}

function sumOfProducts(q, k) {
  return q.reduce((a, x, d) => a + x * k[d], 0);
}

describe('the q·k inspector', () => {
  test('hovering_a_cell_shows_q_and_k_whose_products_sum_to_the_cells_raw_score', async () => {
    const { page, errors } = await open(browser.context, server.url, 'chapter=all&model=grammar-none.safetensors&play=0&text=the%20dog%20runs&layer=1&head=2');
    const info = await page.evaluate(() => document.querySelector('transformer-playground').info);
    const D = info.d_head;
    const [i, j] = [7, 3];
    await page.locator(`tp-attention .cell[data-i="${i}"][data-j="${j}"]`).hover();
    const r = await inspector(page, i, j);
    assert.equal(r.q.length, D, 'q has d_head values');
    assert.equal(r.k.length, D, 'k has d_head values');
    assert.equal(r.v.length, D, 'v has d_head values');
    for (let d = 0; d < D; d++) assert.ok(Math.abs(r.prod[d] - r.q[d] * r.k[d]) < 1e-6, `product ${d} is q[d]·k[d]`);
    const sum = sumOfProducts(r.q, r.k);
    assert.ok(Math.abs(sum - r.raw) < TOL, `Σ q·k ${sum} is the written raw score ${r.raw}`);
    // No position bias in this model: the heatmap's score is Σ q·k / √D.
    const score = await cellScore(page, i, j);
    assert.ok(Number.isFinite(score), 'the cell is not masked');
    assert.ok(Math.abs(sum / Math.sqrt(D) - score) < TOL, `Σ q·k / √${D} = ${sum / Math.sqrt(D)} is the cell's score ${score}`);
    assert.ok(Math.abs(r.score - score) < 1e-6, 'the inspector shows the cell it is on');
    assert.ok(r.q.some((x) => x !== 0) && r.k.some((x) => x !== 0), 'q and k are real vectors');
    // W_Q and W_K were trained apart: queries differ from keys.
    assert.ok(r.gap !== null && r.gap > 0.01, `max |q − k| = ${r.gap} > 0`);

    // Scaling off: the score is the bare sum.
    await page.evaluate(() => {
      location.hash = location.hash.replace('play=0', 'play=0&scale=0');
    });
    await page.waitForFunction(() => document.querySelector('transformer-playground').lastForward && location.hash.includes('scale=0'));
    await page.waitForFunction(
      ([i, j, s]) => {
        const el = document.querySelector('transformer-playground');
        const c = el.shadowRoot.querySelector('tp-attention').shadowRoot.querySelector(`.cell[data-i="${i}"][data-j="${j}"]`);
        return c && Math.abs(Number(c.dataset.score) - s) > 1e-3;
      },
      [i, j, score],
    );
    await page.locator(`tp-attention .cell[data-i="${i}"][data-j="${j - 1}"]`).hover();
    await page.locator(`tp-attention .cell[data-i="${i}"][data-j="${j}"]`).hover();
    const off = await inspector(page, i, j);
    const unscaled = await cellScore(page, i, j);
    assert.ok(Math.abs(sumOfProducts(off.q, off.k) - unscaled) < TOL, `scaling off: Σ q·k is the score ${unscaled}`);
    await page.locator('tp-qk').screenshot({ path: join(artifacts, 'inspector-none.png') });
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('focusing_a_cell_with_the_keyboard_moves_the_inspector_and_names_the_alibi_penalty', async () => {
    // The default model uses ALiBi: head h of 4 has slope 2^(−2(h+1)).
    const { page, errors } = await open(browser.context, server.url, 'chapter=all&model=grammar-alibi.safetensors&play=0&text=the%20cat%20sat&layer=0&head=0');
    const info = await page.evaluate(() => document.querySelector('transformer-playground').info);
    assert.equal(info.pos_encoding, 'alibi');
    assert.equal(info.n_heads, 4);
    const D = info.d_head;
    await page.locator('tp-attention .cell[data-i="6"][data-j="2"]').focus();
    await page.keyboard.press('ArrowRight');
    const [i, j] = [6, 3];
    const r = await inspector(page, i, j);
    const sum = sumOfProducts(r.q, r.k);
    assert.ok(Math.abs(sum - r.raw) < TOL, `Σ q·k ${sum} is the written raw score ${r.raw}`);
    const score = await cellScore(page, i, j);
    const penalty = -0.25 * Math.abs(i - j);
    assert.ok(Math.abs(sum / Math.sqrt(D) + penalty - score) < TOL, `Σ q·k / √D − m·|i − j| = ${sum / Math.sqrt(D) + penalty} is the score ${score}`);
    assert.ok(Math.abs(r.bias - penalty) < TOL, `the written bias ${r.bias} is the ALiBi penalty ${penalty}`);
    const text = await page.locator('tp-qk .sum').innerText();
    assert.match(text, /ALiBi distance penalty/);
    // A masked cell still shows q·k, and says that the mask decides.
    await page.keyboard.press('ArrowUp');
    await page.keyboard.press('ArrowUp');
    await page.keyboard.press('ArrowUp');
    await page.keyboard.press('ArrowUp');
    const masked = await inspector(page, 2, 3);
    assert.equal(masked.score, -Infinity);
    assert.ok(Math.abs(sumOfProducts(masked.q, masked.k) - masked.raw) < TOL);
    assert.match(await page.locator('tp-qk .sum').innerText(), /masked/);
    await page.locator('tp-attention').screenshot({ path: join(artifacts, 'inspector-alibi.png') });
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('a_model_trained_with_shared_qk_has_equal_q_and_k_and_a_symmetric_raw_score', async () => {
    const manifest = JSON.parse(readFileSync(join(dist, 'models/manifest.json'), 'utf8'));
    const shared = manifest.find((m) => m.share_qk === true);
    assert.ok(shared, 'a model trained with W_Q = W_K is shipped');
    const { page, errors } = await open(browser.context, server.url, `chapter=all&model=${shared.file}&play=0&causal=0&text=the%20dog%20sees%20a%20cat`);
    const info = await page.evaluate(() => document.querySelector('transformer-playground').info);
    const layers = info.arch === 'encoder_only' ? info.encoder_layers : info.decoder_layers;
    for (let layer = 0; layer < layers; layer++) {
      for (let head = 0; head < info.n_heads; head++) {
        await page.evaluate(
          ([l, h]) => {
            location.hash = location.hash.replace(/&layer=\d+|&head=\d+/g, '') + `&layer=${l}&head=${h}`;
          },
          [layer, head],
        );
        await page.locator(`tp-qk .box[data-head="${head}"]`).waitFor({ timeout: 30000 });
        await page.locator('tp-attention .cell[data-i="2"][data-j="5"]').hover();
        const a = await inspector(page, 2, 5);
        await page.locator('tp-attention .cell[data-i="5"][data-j="2"]').hover();
        const b = await inspector(page, 5, 2);
        assert.equal(a.gap, 0, `layer ${layer} head ${head}: q = k for every token`);
        assert.deepEqual(a.q, b.k, 'q₂ (from cell (2, 5)) is k₂ (from cell (5, 2))');
        assert.ok(Math.abs(a.raw - b.raw) < TOL, `layer ${layer} head ${head}: q₂·k₅ ${a.raw} = q₅·k₂ ${b.raw}`);
      }
    }
    await page.locator('tp-attention').screenshot({ path: join(artifacts, 'inspector-shared-qk.png') });
    assert.deepEqual(errors, []);
    await page.close();
  });
});
