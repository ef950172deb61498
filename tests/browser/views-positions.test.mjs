// The positions, √d_k, order, embedding-scale and extrapolation views in headless
// Chromium. Each test reads what a view draws (a hovered cell's readout, a table row's
// data attributes) and checks it against numbers computed here from the formulas, against
// the engine's own forward pass, or against models/README.md. Screenshots land in
// artifacts/.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { artifacts, launch, open, root, seeView, serve } from './harness.mjs';

/** The `tplay` command line (the debug build `cargo test` leaves in target/, or TPLAY_BIN): the core, outside the page. */
function tplayBin() {
  const candidates = [process.env.TPLAY_BIN, join(root, 'target/debug/tplay'), join(root, 'target/release/tplay')].filter(Boolean);
  const bin = candidates.find((p) => existsSync(p));
  assert.ok(bin, `no tplay binary (build it with cargo build -p tplay, or set TPLAY_BIN); looked at ${candidates.join(', ')}`);
  return bin;
}

/** The core's logits (T, V) for `text` run by a shipped model without <bos> and without the causal mask, as the order view runs it. */
function cliLogits(file, text, causal) {
  const args = ['forward', '--model', join(root, 'models', file), '--text', text];
  if (!causal) args.push('--no-causal-mask');
  return JSON.parse(execFileSync(tplayBin(), args, { cwd: root, encoding: 'utf8' })).logits;
}

const argmax = (row) => row.indexOf(Math.max(...row));

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

const el = 'document.querySelector("transformer-playground")';

function shotOf(page, tag, name) {
  return page.locator(tag).screenshot({ path: join(artifacts, `${name}.png`) });
}

/** A view's component inside the playground's shadow root, by tag. */
function comp(page, tag) {
  return page.evaluateHandle((tag) => document.querySelector('transformer-playground').shadowRoot.querySelector(tag), tag);
}

/** Hover cell (r, c) of the <tp-heat data-map=name> inside `scope` and read its readout. */
async function readCell(page, scope, name, r, c) {
  const heat = page.locator(`${scope} tp-heat[data-map="${name}"]`);
  const canvas = heat.locator('canvas');
  await canvas.scrollIntoViewIfNeeded();
  const { rows, cols } = await heat.evaluate((h) => ({ rows: h.rows, cols: h.cols }));
  const box = await canvas.boundingBox();
  await page.mouse.move(box.x + ((c + 0.5) * box.width) / cols, box.y + ((r + 0.5) * box.height) / rows);
  const out = heat.locator('.readout');
  await page.waitForFunction(
    ([h, r, c]) => {
      const ro = h.shadowRoot.querySelector('.readout');
      return ro.dataset.row === String(r) && ro.dataset.col === String(c);
    },
    [await heat.elementHandle(), r, c],
  );
  return { value: Number(await out.getAttribute('data-value')), text: await out.textContent() };
}

describe('the √d_k view', () => {
  test('var_of_q_dot_k_is_within_ten_percent_of_d_k_at_64_and_one_after_scaling', async () => {
    const { page, errors } = await open(browser.context, server.url, 'chapter=all&play=0');
    await seeView(page, 'sqrt-dk');
    await page.locator('tp-sqrt-dk').scrollIntoViewIfNeeded();
    await page.waitForFunction(() => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-sqrt-dk')?.result);
    const row = page.locator('tp-sqrt-dk tr[data-dk="64"]');
    const raw = Number(await row.getAttribute('data-var-raw'));
    const scaled = Number(await row.getAttribute('data-var-scaled'));
    const samples = await (await comp(page, 'tp-sqrt-dk')).evaluate((c) => c.result.samples);
    assert.ok(samples >= 10000, `${samples} pairs`);
    assert.ok(Math.abs(raw - 64) < 6.4, `Var(q·k) at d_k 64 = ${raw}`);
    assert.ok(Math.abs(scaled - 1) < 0.1, `Var(q·k/√64) = ${scaled}`);
    assert.ok(Math.abs(raw / 64 - scaled) < 1e-9, 'the scaled variance is the raw one over d_k');
    // The plotted point is the tabled number.
    const dot = page.locator('tp-sqrt-dk circle[data-series="Var(q·k)"][data-x="64"]');
    assert.equal(Number(await dot.getAttribute('data-y')), raw);
    // Unscaled, the widest heads saturate: entropy falls far below the scaled one.
    const wide = page.locator('tp-sqrt-dk tr[data-dk="512"]');
    assert.ok(Number(await wide.getAttribute('data-entropy-raw')) < 0.3 * Number(await wide.getAttribute('data-entropy-scaled')));
    // Another seed: other samples, the same law.
    const seed = page.getByLabel('seed of the sampled vectors');
    await seed.fill('5');
    await seed.press('Enter');
    await page.waitForFunction(() => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-sqrt-dk').result?.seed === 5);
    const raw5 = Number(await row.getAttribute('data-var-raw'));
    assert.notEqual(raw5, raw);
    assert.ok(Math.abs(raw5 - 64) < 6.4, `seed 5: ${raw5}`);
    await shotOf(page, 'transformer-playground >> tp-sqrt-dk', 'view-sqrt-dk');
    assert.deepEqual(errors, []);
    await page.close();
  });
});

describe('the positions view', () => {
  test('sinusoidal_table_and_similarity_cells_read_the_formula_and_the_diagonal_is_c_over_two', async () => {
    const { page, errors } = await open(browser.context, server.url, 'views=positions&play=0&model=grammar-sinusoidal.safetensors');
    await page.waitForFunction(() => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-positions')?.data?.table);
    const info = await page.evaluate(`${el}.info`);
    const C = info.d_model;
    const pe = (t, d) => {
      const i2 = d - (d % 2);
      const a = t / 10000 ** (i2 / C);
      return d % 2 === 0 ? Math.sin(a) : Math.cos(a);
    };
    for (const [t, d] of [[0, 1], [5, 0], [17, 6], [40, 13]]) {
      const { value } = await readCell(page, 'tp-positions', 'table', t, d);
      assert.ok(Math.abs(value - pe(t, d)) < 1e-6, `PE[${t}, ${d}] = ${value}, formula ${pe(t, d)}`);
    }
    for (const i of [0, 9, 33]) {
      const { value } = await readCell(page, 'tp-positions', 'similarity', i, i);
      assert.ok(Math.abs(value - C / 2) < 1e-4, `PE${i}·PE${i} = ${value}`);
    }
    let dot = 0;
    for (let d = 0; d < C; d++) dot += pe(3, d) * pe(11, d);
    const { value: off } = await readCell(page, 'tp-positions', 'similarity', 3, 11);
    assert.ok(Math.abs(off - dot) < 1e-4, `PE3·PE11 = ${off}, formula ${dot}`);
    assert.ok(off < C / 2);
    // The embedding map holds every token of the vocabulary and every drawn position.
    assert.equal(await page.locator('tp-positions g[data-token]').count(), info.vocab.length);
    assert.equal(await page.locator('tp-positions circle[data-position]').count(), 64);
    await shotOf(page, 'transformer-playground >> tp-positions', 'view-positions-sinusoidal');
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('rope_score_is_the_passes_score_and_shifting_both_positions_keeps_it_to_1e-5', async () => {
    const { page, errors } = await open(browser.context, server.url, 'chapter=all&play=0&model=grammar-rope.safetensors');
    await seeView(page, 'positions');
    await page.waitForFunction(() => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-positions')?.rope);
    const check = async (shift) => {
      await page.waitForFunction((s) => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-positions').rope?.shift === s, shift);
      const table = page.locator('tp-positions table[data-score]');
      const score = Number(await table.getAttribute('data-score'));
      const shifted = Number(await table.getAttribute('data-shifted'));
      const offset = Number(await table.getAttribute('data-offset'));
      assert.ok(Math.abs(score - shifted) < 1e-5, `shift ${shift}: ${score} vs ${shifted}`);
      assert.ok(Math.abs(score - offset) < 1e-5);
      // The same q·k the forward pass used: its scaled score times √d_k.
      const traced = await page.evaluate(() => {
        const p = document.querySelector('transformer-playground');
        const r = p.shadowRoot.querySelector('tp-positions').rope;
        const a = p.lastForward.attention.find((x) => x.site === 'decoder_self' && x.layer === p.st.layer);
        const [, H, T, S] = a.scores.shape;
        return a.scores.data[(p.st.head * T + r.i) * S + r.j] * Math.sqrt(p.info.d_head);
      });
      assert.ok(Math.abs(score - traced) < 1e-4, `${score} vs the pass's ${traced}`);
      return score;
    };
    const s10 = await check(10);
    const input = page.getByLabel('shift both by');
    await input.fill('123');
    await input.press('Enter');
    const s123 = await check(123);
    assert.equal(s10, s123);
    await shotOf(page, 'transformer-playground >> tp-positions', 'view-positions-rope');
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('alibi_bias_cells_are_minus_slope_times_distance_with_the_papers_slopes', async () => {
    const { page, errors } = await open(browser.context, server.url, 'chapter=all&play=0&model=grammar-alibi.safetensors');
    await seeView(page, 'positions');
    await page.waitForFunction(() => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-positions')?.data?.alibi);
    const H = (await page.evaluate(`${el}.info`)).n_heads;
    const slopes = (await page.locator('tp-positions [data-slopes]').getAttribute('data-slopes')).split(',').map(Number);
    const want = [...Array(H).keys()].map((h) => 2 ** ((-8 * (h + 1)) / H));
    assert.deepEqual(slopes.map((m) => m.toPrecision(6)), want.map((m) => Math.fround(m).toPrecision(6)));
    for (const h of [0, H - 1]) {
      await page.locator('tp-positions .slopes button').nth(h).click();
      const { value } = await readCell(page, 'tp-positions', 'alibi', 9, 2);
      assert.ok(Math.abs(value - -slopes[h] * 7) < 1e-5, `head ${h + 1}: ${value}`);
    }
    await shotOf(page, 'transformer-playground >> tp-positions', 'view-positions-alibi');
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('relative_tables_have_two_k_plus_one_rows_and_name_the_clipping', async () => {
    const { page, errors } = await open(browser.context, server.url, 'chapter=all&play=0&model=grammar-relative.safetensors');
    await seeView(page, 'positions');
    await page.waitForFunction(() => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-positions')?.data?.relative?.length);
    const info = await page.evaluate(`${el}.info`);
    const K = Number(await page.locator('tp-positions [data-max-distance]').getAttribute('data-max-distance'));
    assert.ok(K > 0);
    for (const name of ['rel_k', 'rel_v']) {
      const heat = page.locator(`tp-positions tp-heat[data-map="${name}"]`);
      assert.deepEqual(await heat.evaluate((h) => [h.rows, h.cols]), [2 * K + 1, info.d_head]);
    }
    const first = await readCell(page, 'tp-positions', 'rel_k', 0, 0);
    assert.match(first.text, new RegExp(`distance ≤ −${K} \\(clipped\\)`));
    const last = await readCell(page, 'tp-positions', 'rel_v', 2 * K, 1);
    assert.match(last.text, new RegExp(`distance ≥ \\+${K} \\(clipped\\)`));
    const mid = await readCell(page, 'tp-positions', 'rel_k', K + 1, 0);
    assert.match(mid.text, /distance \+1, dimension 0:/);
    await shotOf(page, 'transformer-playground >> tp-positions', 'view-positions-relative');
    assert.deepEqual(errors, []);
    await page.close();
  });
});

describe('the order and embedding-scale views', () => {
  test('without_positions_or_causal_mask_reordered_rows_are_bit_identical_and_with_positions_they_are_not', async () => {
    const { page, errors } = await open(browser.context, server.url, 'chapter=all&play=0');
    await seeView(page, 'order');
    await page.locator('tp-order').scrollIntoViewIfNeeded();
    const verdict = page.locator('tp-order p.verdict');
    const state = async () => [Number(await verdict.getAttribute('data-identical')), Number(await verdict.getAttribute('data-rows'))];
    const settle = () => page.waitForFunction(() => {
      const o = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-order');
      return o.result && !o.busy;
    });
    await settle();
    let [same, rows] = await state();
    assert.equal(rows, 'the cat chases the dog.'.length);
    assert.equal(same, rows, 'every row moved with its character, bit for bit');
    assert.match(await page.locator('tp-order .texts').textContent(), /the dog chases the cat\./);
    await page.getByRole('button', { name: 'shuffle the characters' }).click();
    await page.waitForFunction(() => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-order').result?.perm.some((p, i) => p !== i && p !== [0, 1, 2, 3, 19, 20, 21, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 4, 5, 6, 22][i]));
    await settle();
    [same, rows] = await state();
    assert.equal(same, rows, 'a shuffle too');
    await page.getByLabel('model to compare orders with').selectOption('grammar-sinusoidal.safetensors');
    await page.waitForFunction(() => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-order').result?.pos_encoding === 'sinusoidal');
    [same, rows] = await state();
    assert.ok(same < rows, `with sinusoidal positions ${rows - same} rows change`);
    await page.getByLabel('model to compare orders with').selectOption('grammar-none.safetensors');
    await page.getByLabel('order comparison: each position sees only earlier ones').check();
    await page.waitForFunction(() => {
      const r = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-order').result;
      return r?.causal === true && r.pos_encoding === 'none';
    });
    [same, rows] = await state();
    assert.ok(same < rows, 'the causal mask alone tells positions apart');
    await shotOf(page, 'transformer-playground >> tp-order', 'view-order');
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('on_the_chinese_models_the_order_view_reads_as_the_core_position_by_position_and_names_characters_it_cannot_spell', async () => {
    // The Chinese page's order lesson opens on the Chinese grammar model without positions.
    const { page, errors } = await open(browser.context, server.url, 'lesson=order&lang=zh-Hans');
    const order = (fn) => page.evaluate(fn);
    const settle = () => page.waitForFunction(() => {
      const o = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-order');
      return o && (o.result || o.unknown.length) && !o.busy;
    });
    await page.locator('tp-order').scrollIntoViewIfNeeded();
    await settle();
    const read = () =>
      order(() => {
        const o = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-order');
        const r = o.result;
        const cells = (row) => [...o.shadowRoot.querySelectorAll(`table tr:nth-child(${row}) td`)].map((td) => td.dataset);
        return {
          model: o.model,
          text: o.text,
          perm: r ? [...r.perm] : null,
          permuted: r ? r.permuted : null,
          diff: cells(6).map((d) => Number(d.diff)),
          identical: cells(6).map((d) => d.identical === 'true'),
          nextOriginal: cells(4).map((d) => Number(d.next)),
          nextReordered: cells(5).map((d) => Number(d.next)),
          nextDiffer: Number(o.shadowRoot.querySelector('p.verdict')?.dataset.nextDiffer ?? NaN),
          unknown: [...o.unknown],
          alert: o.shadowRoot.querySelector('[data-unknown]')?.textContent ?? '',
        };
      });
    /** The view's numbers against the command line's forward passes of both orders. */
    const againstCore = (v, file, causal) => {
      const text = [...v.text];
      const a = cliLogits(file, v.text, causal);
      const b = cliLogits(file, v.perm.map((p) => text[p]).join(''), causal);
      assert.equal(a.length, text.length, 'one row per character, no <bos>');
      v.perm.forEach((p, t) => {
        const want = Math.max(...b[t].map((x, k) => Math.abs(x - a[p][k])));
        assert.ok(Math.abs(v.diff[t] - want) < 1e-4, `${file} position ${t}: the view says ${v.diff[t]}, the core ${want}`);
        assert.equal(v.nextOriginal[t], argmax(a[p]), `${file} position ${t}: next after the original order`);
        assert.equal(v.nextReordered[t], argmax(b[t]), `${file} position ${t}: next after the reordered input`);
      });
      assert.equal(v.nextDiffer, v.perm.filter((p, t) => argmax(a[p]) !== argmax(b[t])).length);
    };
    let v = await read();
    assert.equal(v.model, 'zh-grammar-none.safetensors');
    assert.equal(v.text, '猫追狗');
    assert.deepEqual(v.permuted, ['狗', '追', '猫'], 'the swap exchanges 猫 and 狗');
    assert.ok(v.identical.every(Boolean), 'without positions every row moves with its character, bit for bit');
    againstCore(v, 'zh-grammar-none.safetensors', false);
    // With positions: the same two orders differ, position by position, as the core says.
    await page.locator('tp-order select').selectOption('zh-grammar-sinusoidal.safetensors');
    await page.waitForFunction(() => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-order').result?.pos_encoding === 'sinusoidal');
    await settle();
    v = await read();
    assert.ok(v.identical.some((x) => !x), 'with sinusoidal positions some rows change');
    againstCore(v, 'zh-grammar-sinusoidal.safetensors', false);
    await shotOf(page, 'transformer-playground >> tp-order', 'view-order-zh');
    // A character the model has no token for is named, and nothing runs.
    // The character is one the engine's vocabulary of this model lacks (read from the page's model info).
    const vocab = new Set(await page.evaluate(() => document.querySelector('transformer-playground').info.vocab));
    const missing = [...'龙虎喝书'].find((c) => !vocab.has(c));
    assert.ok(missing, 'a common character this model cannot spell');
    const input = page.locator('tp-order input[type="text"]');
    await input.fill(`猫${missing}鱼`);
    await input.press('Enter');
    await page.waitForFunction(() => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-order').unknown.length > 0);
    v = await read();
    assert.deepEqual(v.unknown, [missing]);
    assert.ok(v.alert.includes(`“${missing}”`), v.alert);
    assert.equal(v.perm, null, 'no comparison is shown');
    assert.equal(await page.locator('tp-order table').count(), 0);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('scaled_token_norms_are_root_d_model_times_the_stored_ones_and_sinusoidal_norms_are_root_half_d_model', async () => {
    const { page, errors } = await open(browser.context, server.url, 'chapter=all&play=0&model=grammar-sinusoidal.safetensors');
    await seeView(page, 'embedding-scale');
    await page.waitForFunction(() => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-embedding-scale')?.data);
    const info = await page.evaluate(`${el}.info`);
    const C = info.d_model;
    const rows = await page
      .locator('tp-embedding-scale tr[data-t]')
      .evaluateAll((rs) => rs.map((r) => [Number(r.dataset.tokenNorm), Number(r.dataset.scaledNorm), Number(r.dataset.positionNorm)]));
    const text = await page.evaluate(`${el}.st.text`);
    assert.equal(rows.length, 1 + text.length, '<bos> and every character of the prompt');
    for (const [e, s, p] of rows) {
      assert.ok(Math.abs(s - e * Math.sqrt(C)) < 1e-4 * s);
      assert.ok(Math.abs(p - Math.sqrt(C / 2)) < 1e-5);
      assert.ok(e > 0);
    }
    await page.locator('tp-embedding-scale').scrollIntoViewIfNeeded();
    await shotOf(page, 'transformer-playground >> tp-embedding-scale', 'view-embedding-scale');
    assert.deepEqual(errors, []);
    await page.close();
  });
});

describe('the extrapolation view', () => {
  test('the_page_measures_the_same_numbers_as_the_table_in_models_readme', { timeout: 600000 }, async () => {
    const readme = readFileSync(join(root, 'models/README.md'), 'utf8');
    const table = new Map();
    for (const m of readme.matchAll(/^\| (\w+) \| ([\d.]+) \/ ([\d.]+) \| ([\d.]+) \/ ([\d.]+) \| ([\d.]+) \/ ([\d.]+) \|$/gm)) {
      table.set(m[1], [1, 2, 3].map((k) => [m[2 * k], m[2 * k + 1]]));
    }
    assert.equal(table.size, 6, 'six schemes in the README table');
    const { page, errors } = await open(browser.context, server.url, 'chapter=all&play=0');
    await seeView(page, 'extrapolation');
    await page.locator('tp-extrapolation').getByRole('button', { name: 'Measure' }).click();
    await page.waitForSelector('tp-extrapolation tp-progress');
    await page.waitForFunction(
      () => {
        const x = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-extrapolation');
        return (x.results.length === 6 && !x.progress) || x.problem;
      },
      null,
      { timeout: 540000 },
    );
    const cells = await page
      .locator('tp-extrapolation tr[data-scheme] td')
      .evaluateAll((tds) => tds.map((td) => [td.closest('tr').dataset.scheme, Number(td.dataset.multiple), Number(td.dataset.accuracy), Number(td.dataset.loss)]));
    assert.equal(cells.length, 18);
    for (const [scheme, mult, acc, loss] of cells) {
      const want = table.get(scheme)[[1, 2, 4].indexOf(mult)];
      assert.equal(acc.toFixed(3), want[0], `${scheme} ${mult}× accuracy`);
      assert.equal(loss.toFixed(2), want[1], `${scheme} ${mult}× loss`);
    }
    // Per position over the 4× sequences: ALiBi holds past the trained length, learned positions collapse.
    const curves = await page.evaluate(() => {
      const x = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-extrapolation');
      const mean = (a) => a.reduce((s, v) => s + v, 0) / a.length;
      return Object.fromEntries(x.results.map(({ scheme, r }) => [scheme, [mean(r.accuracy.slice(8, 64)), mean(r.accuracy.slice(128))]]));
    });
    assert.ok(curves.alibi[1] > curves.alibi[0] - 0.05, JSON.stringify(curves.alibi));
    assert.ok(curves.learned[1] < curves.learned[0] - 0.3, JSON.stringify(curves.learned));
    await page.locator('tp-extrapolation').scrollIntoViewIfNeeded();
    await shotOf(page, 'transformer-playground >> tp-extrapolation', 'view-extrapolation');
    assert.deepEqual(errors, []);
    await page.close();
  });
});

describe('the extrapolation view on the Chinese page', () => {
  test('it_measures_the_four_chinese_grammar_models_and_learned_positions_fall_past_the_trained_length', { timeout: 600000 }, async () => {
    const { page, errors } = await open(browser.context, server.url, 'lang=zh-Hans&chapter=all&play=0&model=zh-grammar-sinusoidal.safetensors');
    await seeView(page, 'extrapolation');
    const zhFiles = await page.evaluate(() =>
      document.querySelector('transformer-playground').manifest.filter((m) => m.task === 'zh-grammar' && !m.share_qk).map((m) => m.file).sort(),
    );
    assert.equal(zhFiles.length, 4);
    await page.locator('tp-extrapolation .controls button').first().click();
    await page.waitForFunction(
      () => {
        const x = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-extrapolation');
        return (x.results.length === 4 && !x.progress) || x.problem;
      },
      null,
      { timeout: 540000 },
    );
    const got = await page.evaluate(() => {
      const x = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-extrapolation');
      const mean = (a) => a.reduce((s, v) => s + v, 0) / a.length;
      return {
        problem: x.problem,
        expected: x.expected,
        files: x.results.map((r) => r.file).sort(),
        curves: Object.fromEntries(x.results.map(({ scheme, r }) => [scheme, [mean(r.accuracy.slice(8, 64)), mean(r.accuracy.slice(128))]])),
        rows: x.shadowRoot.querySelectorAll('tr[data-scheme]').length,
      };
    });
    assert.equal(got.problem, '');
    assert.equal(got.expected, 4);
    assert.deepEqual(got.files, zhFiles);
    assert.equal(got.rows, 4);
    // ALiBi holds past the trained length; the learned rows past it were never trained.
    assert.ok(got.curves.alibi[1] > got.curves.alibi[0] - 0.05, JSON.stringify(got.curves.alibi));
    assert.ok(got.curves.learned[1] < got.curves.learned[0] - 0.05, JSON.stringify(got.curves.learned));
    await page.locator('tp-extrapolation').scrollIntoViewIfNeeded();
    await shotOf(page, 'transformer-playground >> tp-extrapolation', 'view-extrapolation-zh');
    assert.deepEqual(errors, []);
    await page.close();
  });
});

describe('labels that say where positions act', () => {
  test('only_added_positions_are_named_on_the_embedding_and_the_relative_term_names_its_clipped_offset', async () => {
    const labels = async (page) => page.locator('tp-architecture g.blk').evaluateAll((gs) => gs.map((g) => g.textContent.trim()));
    let { page, errors } = await open(browser.context, server.url, 'chapter=all&play=0&model=grammar-sinusoidal.safetensors');
    await seeView(page, 'architecture');
    let ls = await labels(page);
    assert.ok(ls.some((l) => l.includes('embedding + sinusoidal positions')), ls.join(' | '));
    assert.ok(!ls.some((l) => /self-attention \+/.test(l)));
    await page.close();
    ({ page, errors } = await open(browser.context, server.url, 'chapter=all&play=0&model=grammar-relative.safetensors&causal=0&text=the%20dog%20that%20chases%20the%20cats%20runs.'));
    await seeView(page, 'architecture');
    ls = await labels(page);
    assert.ok(ls.some((l) => l === 'embedding'), ls.join(' | '));
    assert.ok(ls.some((l) => l.includes('self-attention + relative')), ls.join(' | '));
    // A key farther than K from its query: the inspector names the clipped row.
    const K = (await page.evaluate(`${el}.info`)).relative_max_distance;
    const T = await page.evaluate(`${el}.lastForward.tokens[0].length`);
    assert.ok(T > K + 1, `the prompt (${T} tokens) reaches past K = ${K}`);
    await seeView(page, 'attention');
    await page.locator(`tp-attention .cell[data-i="0"][data-j="${K + 1}"]`).hover();
    await page.waitForFunction(
      (want) => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-attention').shadowRoot.querySelector('tp-qk').shadowRoot.textContent.includes(want),
      `clip(j − i = ${K + 1}, ±${K}) = ${K}`,
    );
    assert.deepEqual(errors, []);
    await page.close();
  });
});
