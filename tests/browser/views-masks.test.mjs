// The masks view, the mask editor, raw scores and the fitted attention map in headless
// Chromium. Each test reads what the page draws (data attributes of the drawn cells) and
// checks it against the core's own forward result and against the masks' definitions
// written out here; the last runs the edited mask on WebGPU (SwiftShader) and on the CPU
// and compares. Screenshots land in artifacts/.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { artifacts, launch, open, serve, waitTokens } from './harness.mjs';

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

const forward = (page) => page.evaluate(() => document.querySelector('transformer-playground').lastForward);

/** Wait for a forward pass whose decoder mask has `cells` painted cells and rule `kind`. */
async function waitMask(page, kind, cells) {
  await page.waitForFunction(
    ([kind, cells]) => {
      const f = document.querySelector('transformer-playground').lastForward;
      const m = f?.masks.find((m) => m.site === 'decoder_self');
      return m && m.rule.kind === kind && m.cells.length === cells;
    },
    [kind, cells],
    { timeout: 60000 },
  );
}

/** The drawn masks grid: data-reason of every cell, as rows. */
async function drawnReasons(page) {
  const cells = await page.locator('tp-masks .grid button.cell').evaluateAll((bs) =>
    bs.map((b) => [Number(b.dataset.i), Number(b.dataset.j), Number(b.dataset.reason), b.dataset.add]),
  );
  const T = Math.max(...cells.map((c) => c[0])) + 1;
  const S = Math.max(...cells.map((c) => c[1])) + 1;
  const rows = Array.from({ length: T }, () => new Array(S).fill(-1));
  for (const [i, j, r, add] of cells) {
    rows[i][j] = r;
    assert.equal(add, r === 0 ? '0' : '-Infinity', `additive mask at (${i}, ${j})`);
  }
  return rows;
}

/** Which keys each rule hides, from the definitions (docs: causal, prefix-LM, window). */
const hides = {
  causal: (i, j) => j > i,
  none: () => false,
  prefix: (p) => (i, j) => j > i && j >= p,
  window: (w) => (i, j) => j > i || i - j >= w,
};

describe('the masks view', () => {
  test('each_mask_kinds_hidden_cells_drawn_match_the_cores_mask_and_its_definition', async () => {
    const kinds = [
      ['causal', 'causal', hides.causal],
      ['none', 'none', hides.none],
      ['prefix-4', 'prefix_lm', hides.prefix(4)],
      ['window-3', 'sliding_window', hides.window(3)],
    ];
    // A second, shorter input pads the batch: padding and the rule both show.
    const { page, errors } = await open(browser.context, server.url, 'play=0&views=masks,attention&batch=the');
    for (const [url, kind, rule] of kinds) {
      await page.evaluate((m) => (location.hash = `play=0&views=masks,attention&batch=the&mask=${m}`), url);
      await waitMask(page, kind, 0);
      await page.locator('tp-masks .grid').waitFor();
      const f = await forward(page);
      const core = f.masks.find((m) => m.site === 'decoder_self');
      const [, T, S] = core.reasons.shape;
      // Sequence 0 is drawn: every cell is the core's reason, and the rule's cells are
      // exactly the definition's.
      const drawn = await drawnReasons(page);
      assert.equal(drawn.length, T);
      for (let i = 0; i < T; i++)
        for (let j = 0; j < S; j++) {
          assert.equal(drawn[i][j], core.reasons.data[i * S + j], `${url}: cell (${i}, ${j})`);
          assert.equal((drawn[i][j] & 1) === 1, rule(i, j), `${url}: rule at (${i}, ${j})`);
        }
      // Sequence 1 is padded: its pad keys carry the padding bit, in every row.
      const pad = f.tokens[1].map((t) => t === 0);
      assert.ok(pad.some(Boolean), 'the second sequence is padded');
      for (let i = 0; i < T; i++)
        for (let j = 0; j < S; j++) assert.equal((core.reasons.data[(T + i) * S + j] & 2) === 2, pad[j]);
      // The probabilities the core computed are 0 exactly where the mask hides a key.
      const a = f.attention.find((x) => x.site === 'decoder_self');
      const [, H] = a.probs.shape;
      for (let h = 0; h < H; h++)
        for (let i = 0; i < T; i++)
          for (let j = 0; j < S; j++)
            if (core.reasons.data[i * S + j] !== 0) assert.equal(a.probs.data[((0 * H + h) * T + i) * S + j], 0, `${url}: p(${i}, ${j})`);
      if (url === 'window-3') {
        await page.locator('tp-masks').evaluate((el) => el.scrollIntoView());
        await page.locator('tp-masks').screenshot({ path: join(artifacts, 'masks-window.png') });
      }
    }
    // A hostile value is refused with a note, and the mask stays as the switch says.
    const { page: bad } = await open(browser.context, server.url, 'chapter=all&play=0&mask=window-0;1.2.x');
    const notes = await bad.evaluate(() => document.querySelector('transformer-playground').notes);
    assert.ok(notes.some((n) => n.includes('mask=')), notes.join(' | '));
    assert.equal((await forward(bad)).masks[0].rule.kind, 'causal');
    // A value the URL allows but the model does not (past its context) is a clear error.
    const { page: far } = await open(browser.context, server.url, 'chapter=all&play=0&mask=causal;999.0.h');
    await far.waitForFunction(() => document.querySelector('transformer-playground').error !== '');
    assert.match(await far.evaluate(() => document.querySelector('transformer-playground').error), /outside the model's context/);
    assert.deepEqual(errors, []);
    await page.close();
    await bad.close();
    await far.close();
  });

  test('a_painted_cell_gets_probability_zero_in_the_core_and_in_the_drawn_map', async () => {
    const { page, errors } = await open(browser.context, server.url, 'play=0&views=masks,attention');
    await page.locator('tp-masks .grid').waitFor();
    const before = await forward(page);
    const a0 = before.attention.find((x) => x.site === 'decoder_self' && x.layer === 0);
    const [, H, T, S] = a0.probs.shape;
    const [i, j] = [T - 1, 1];
    assert.ok(a0.probs.data[((0 * H) * T + i) * S + j] > 0, 'the key is visible before painting');
    await page.locator(`tp-masks button.cell[data-i="${i}"][data-j="${j}"]`).click();
    await waitMask(page, 'causal', 1);
    const f = await forward(page);
    const m = f.masks.find((x) => x.site === 'decoder_self');
    assert.deepEqual(m.cells, [{ query: i, key: j, hidden: true }]);
    for (const a of f.attention.filter((x) => x.site === 'decoder_self'))
      for (let h = 0; h < H; h++) {
        const row = Array.from({ length: S }, (_, k) => a.probs.data[((0 * H + h) * T + i) * S + k]);
        assert.equal(row[j], 0, `layer ${a.layer} head ${h}: the painted cell`);
        assert.equal(a.scores.data[((0 * H + h) * T + i) * S + j], -Infinity);
        assert.ok(Math.abs(row.reduce((x, y) => x + y, 0) - 1) < 1e-5, 'the row still sums to 1');
      }
    // The attention view draws it masked, with probability 0.
    const cell = page.locator(`tp-attention .grid [data-i="${i}"][data-j="${j}"]`);
    assert.equal(Number(await cell.getAttribute('data-prob')), 0);
    assert.equal(await cell.getAttribute('data-score'), '-Infinity');
    // The link carries the painted cell.
    assert.match(await page.evaluate(() => location.hash), new RegExp(`mask=causal%3B${i}.${j}.h`));
    // Painting it again gives it back to the rule.
    await page.locator(`tp-masks button.cell[data-i="${i}"][data-j="${j}"]`).click();
    await waitMask(page, 'causal', 0);
    await page.locator('tp-masks').screenshot({ path: join(artifacts, 'masks-causal.png') });
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('an_edited_mask_the_cache_cannot_hold_generates_by_recomputing_and_says_so', async () => {
    const { page, errors } = await open(browser.context, server.url, 'chapter=all&speed=0&max=4&mask=causal;8.10.s');
    const r = await waitTokens(page, 4);
    assert.match(r.note, /recomputing every step without the KV cache/);
    assert.deepEqual(errors, []);
    await page.close();
  });
});

describe('raw scores and the fitted map', () => {
  test('raw_scores_of_the_shared_qk_model_are_symmetric_where_unmasked', async () => {
    const { page, errors } = await open(browser.context, server.url, 'model=grammar-shared-qk.safetensors&play=0&mask=none&views=attention,masks');
    await page.locator('tp-attention .grid').waitFor();
    await page.getByLabel('raw scores (before softmax, after the mask)').check();
    await page.waitForFunction(() =>
      document.querySelector('transformer-playground').shadowRoot.querySelector('tp-attention').shadowRoot.querySelector('.grid[data-shows="scores"]'),
    );
    const cells = await page.locator('tp-attention .grid [data-i]').evaluateAll((cs) =>
      cs.map((c) => [Number(c.dataset.i), Number(c.dataset.j), Number(c.dataset.shown), Number(c.dataset.score)]),
    );
    const T = Math.max(...cells.map((c) => c[0])) + 1;
    const at = new Map(cells.map(([i, j, shown, score]) => [`${i}.${j}`, { shown, score }]));
    let worst = 0;
    let largest = 0;
    for (let i = 0; i < T; i++)
      for (let j = 0; j < T; j++) {
        const a = at.get(`${i}.${j}`);
        const b = at.get(`${j}.${i}`);
        assert.equal(a.shown, a.score, 'the drawn value is the raw score');
        assert.ok(Number.isFinite(a.shown), 'no mask: every cell is a score');
        worst = Math.max(worst, Math.abs(a.shown - b.shown));
        largest = Math.max(largest, Math.abs(a.shown));
      }
    assert.ok(largest > 0.1, 'the scores are not all zero');
    assert.ok(worst <= 1e-5 * Math.max(1, largest), `s_ij vs s_ji differ by ${worst}`);
    // Against the core: the drawn scores are the forward result's.
    const f = await forward(page);
    const a = f.attention.find((x) => x.site === 'decoder_self' && x.layer === 0);
    assert.equal(at.get('2.1').score, a.scores.data[2 * T + 1]);
    await page.locator('tp-attention').screenshot({ path: join(artifacts, 'attention-raw-shared-qk.png') });
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('the_attention_map_fits_its_panel_after_32_generated_tokens', async () => {
    const { page, errors } = await open(browser.context, server.url, 'chapter=all&speed=0&max=32');
    await waitTokens(page, 32);
    await page.waitForFunction(() => {
      const el = document.querySelector('transformer-playground');
      return !el.playing && el.lastForward.tokens[0].length >= el.generated.length + 2;
    });
    const att = page.locator('tp-attention');
    await att.scrollIntoViewIfNeeded();
    const size = await att.evaluate((el) => {
      const grid = el.shadowRoot.querySelector('.grid, canvas.big');
      const wrap = el.shadowRoot.querySelector('.map-wrap');
      const card = el.shadowRoot.querySelector('.card');
      const cols = el.shadowRoot.querySelectorAll('.grid [data-i="0"]').length;
      return { grid: grid.getBoundingClientRect().width, card: card.getBoundingClientRect().width, scroll: wrap.scrollWidth - wrap.clientWidth, cols };
    });
    const len = await page.evaluate(() => document.querySelector('transformer-playground').lastForward.tokens[0].length);
    assert.ok(len >= 34 && size.cols === len, `${size.cols} columns drawn for ${len} tokens`);
    assert.ok(size.grid <= size.card, `a ${size.grid} px map in a ${size.card} px panel`);
    assert.ok(size.scroll <= 0, `the map scrolls by ${size.scroll} px`);
    await att.screenshot({ path: join(artifacts, 'attention-fit-40.png') });
    // Zoom on demand: full-size cells behind a scroll.
    await page.getByLabel('zoom (full-size cells, scroll)').check();
    const zoomed = await att.evaluate((el) => el.shadowRoot.querySelector('.grid').getBoundingClientRect().width);
    assert.ok(zoomed > size.grid, 'zoomed cells are larger');
    assert.deepEqual(errors, []);
    await page.close();
  });
});

describe('with WebGPU (SwiftShader)', () => {
  let gpu;
  before(async () => {
    gpu = await launch({ webgpu: true });
  });
  after(async () => {
    await gpu?.close();
  });

  test('an_edited_mask_gives_the_same_numbers_on_webgpu_as_on_the_cpu', async () => {
    const hash = 'play=0&batch=the&mask=window-3;5.2.h,1.3.s';
    const { page: g, errors: ge } = await open(gpu.context, server.url, `chapter=all&backend=webgpu&${hash}`);
    const { page: c, errors: ce } = await open(gpu.context, server.url, `chapter=all&backend=cpu&${hash}`);
    await waitMask(g, 'sliding_window', 2);
    await waitMask(c, 'sliding_window', 2);
    const [fg, fc] = [await forward(g), await forward(c)];
    assert.equal(fg.backend, 'webgpu');
    assert.equal(fc.backend, 'cpu');
    let logits = 0;
    for (let k = 0; k < fc.logits.data.length; k++) logits = Math.max(logits, Math.abs(fg.logits.data[k] - fc.logits.data[k]));
    let probs = 0;
    for (const [n, a] of fc.attention.entries()) {
      const b = fg.attention[n];
      for (let k = 0; k < a.probs.data.length; k++) {
        probs = Math.max(probs, Math.abs(a.probs.data[k] - b.probs.data[k]));
        assert.equal(a.scores.data[k] === -Infinity, b.scores.data[k] === -Infinity, 'the same cells are masked');
      }
    }
    console.log(`edited mask in the page: |WebGPU − CPU| logits ${logits}, probabilities ${probs}`);
    assert.ok(logits < 1e-4 && probs < 1e-4, `logits ${logits}, probabilities ${probs}`);
    assert.deepEqual([...ge, ...ce], []);
    await g.close();
    await c.close();
  });
});
