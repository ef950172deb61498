// The block-structure views in headless Chromium: train/eval mode, `ffn`, `no-leak`,
// `norms` and `dropout`. Each test reads what a view marks (data attributes of its
// cells) and checks it against the engine's own tensors, compared here bit for bit
// (Float32 bits), or against the engine's repeated passes. Screenshots land in artifacts/.

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

const MODEL = 'grammar-sinusoidal.safetensors';

/** A view's component inside the playground's shadow root, by tag. */
function comp(page, tag) {
  return page.evaluateHandle((tag) => document.querySelector('transformer-playground').shadowRoot.querySelector(tag), tag);
}

function shot(page, tag, name) {
  return page.locator(tag).screenshot({ path: join(artifacts, `${name}.png`) });
}

/**
 * Per position of (T, W) rows of `a` and `b` (first p rows): does any value's f32 bit
 * pattern differ? Computed here from the engine's raw tensors.
 */
function bitsChanged(a, b, w, p) {
  const ua = new Uint32Array(Float32Array.from(a).buffer);
  const ub = new Uint32Array(Float32Array.from(b).buffer);
  return Array.from({ length: p }, (_, i) => {
    for (let k = i * w; k < (i + 1) * w; k++) if (ua[k] !== ub[k]) return true;
    return false;
  });
}

/** The engine's block probe of one sequence (as plain arrays). */
function probe(page, tokens, causal) {
  return page.evaluate(
    async ([tokens, causal]) => {
      const s = document.querySelector('transformer-playground').store;
      const p = await s.call('blockProbe', { batch: [tokens], switches: { ...s.switches(), causal } });
      const st = p.stacks[0];
      return {
        c: st.hidden.shape[3],
        layers: st.hidden.shape[0],
        hidden: Array.from(st.hidden.data),
        ffnIn: st.ffn.map((f) => Array.from(f.input.data)),
        ffnOut: st.ffn.map((f) => Array.from(f.output.data)),
        logits: Array.from(p.logits.data),
        v: p.logits.shape[2],
      };
    },
    [tokens, causal],
  );
}

/** The marks a view drew: data-changed of every cell, keyed "what layer pos" (within `scope`). */
function marks(page, tag, scope = '') {
  return page.locator(`${tag} ${scope} td[data-changed]`).evaluateAll((tds) =>
    Object.fromEntries(tds.map((td) => [`${td.dataset.what} ${td.dataset.layer} ${td.dataset.pos}`, td.dataset.changed === 'true'])),
  );
}

async function edited(page, tag, pos) {
  const c = await comp(page, tag);
  await c.evaluate((c, pos) => c.perturb(pos), pos);
  await page.waitForFunction(
    ([c, pos]) => {
      const d = c.diff ?? c.diffs?.[0];
      return d && d.edited.length === 1 && d.edited[0] === pos && (c.diffs ? c.diffs.length === 2 : true) && !c.problem;
    },
    [c, pos],
  );
  // Let the view draw what arrived.
  await c.evaluate((c) => c.updateComplete);
  return c.evaluate((c) => ({ before: c.beforeInput.tokens, after: c.afterInput.tokens }));
}

describe('the no-leak view', () => {
  test('earlier_rows_are_bit_identical_with_the_causal_mask_and_change_without_it', async () => {
    const { page, errors } = await open(browser.context, server.url, `play=0&model=${MODEL}&views=no-leak`);
    await page.waitForFunction(() => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-no-leak')?.diffs.length === 2);
    const { before: a, after: b } = await edited(page, 'tp-no-leak', 3);
    assert.ok(a.length >= 6, `prompt of ${a.length} tokens`);
    // The first table runs under the mask the page applies (causal for this decoder), the
    // second under the opposite (no mask).
    for (const [mask, causal] of [
      ['now', true],
      ['reference', false],
    ]) {
      const pa = await probe(page, a, causal);
      const pb = await probe(page, b, causal);
      const drawn = await marks(page, 'tp-no-leak', `table[data-role="${mask}"][data-mask="${causal ? 'causal' : 'none'}"]`);
      const T = a.length;
      const per = T * pa.c;
      let earlierChanged = 0;
      for (let l = 0; l < pa.layers; l++) {
        const want = bitsChanged(pa.hidden.slice(l * per, (l + 1) * per), pb.hidden.slice(l * per, (l + 1) * per), pa.c, T);
        want.forEach((w, p) => {
          assert.equal(drawn[`hidden ${l} ${p}`], w, `mask ${mask}, layer ${l}, position ${p}`);
          if (p < 3 && w) earlierChanged++;
        });
      }
      const want = bitsChanged(pa.logits, pb.logits, pa.v, T);
      want.forEach((w, p) => {
        assert.equal(drawn[`logits 0 ${p}`], w, `mask ${mask}, logits, position ${p}`);
        if (p < 3 && w) earlierChanged++;
      });
      // The edited position itself changes either way.
      assert.equal(drawn[`logits 0 3`], true);
      if (causal) assert.equal(earlierChanged, 0, 'no earlier value changes under the causal mask');
      else assert.ok(earlierChanged > 0, 'without the mask the earlier positions read the edit');
      const verdict = page.locator(`tp-no-leak p.verdict[data-role="${mask}"]`);
      assert.equal(Number(await verdict.getAttribute('data-earlier-changed')), earlierChanged);
    }
    await shot(page, 'tp-no-leak', 'no-leak');
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('a_text_edit_keeps_the_previous_input_as_before', async () => {
    const { page, errors } = await open(browser.context, server.url, `play=0&model=${MODEL}&views=input,no-leak&text=the cat sees`);
    await page.waitForFunction(() => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-no-leak')?.diffs.length === 2);
    await page.evaluate(() => document.querySelector('transformer-playground').store.patch({ text: 'the cat seen' }));
    const c = await comp(page, 'tp-no-leak');
    await page.waitForFunction((c) => c.how.startsWith('your edit') && c.diffs[0]?.len_before === c.beforeInput.tokens.length && c.diffs[0].edited.length > 0, c);
    const { before: a, after: b, edits } = await c.evaluate((c) => ({ before: c.beforeInput.tokens, after: c.afterInput.tokens, edits: c.diffs[0].edited }));
    const vocab = await page.evaluate(() => document.querySelector('transformer-playground').info.vocab);
    assert.equal(a.map((id) => vocab[id]).join(''), '<bos>the cat sees');
    assert.equal(b.map((id) => vocab[id]).join(''), '<bos>the cat seen');
    assert.deepEqual(edits, [a.length - 1]);
    assert.deepEqual(errors, []);
    await page.close();
  });
});

describe('the ffn view', () => {
  test('only_the_edited_positions_ffn_rows_change_and_output_rows_change_exactly_where_input_rows_do', async () => {
    const { page, errors } = await open(browser.context, server.url, `play=0&model=${MODEL}&views=ffn`);
    await page.waitForFunction(() => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-ffn')?.diff);
    const info = await page.evaluate(() => document.querySelector('transformer-playground').info);
    const T = (await (await comp(page, 'tp-ffn')).evaluate((c) => c.input.tokens.length));
    // The last token edited: under the causal mask only that position's rows change.
    const { before: a, after: b } = await edited(page, 'tp-ffn', T - 1);
    const pa = await probe(page, a, true);
    const pb = await probe(page, b, true);
    let drawn = await marks(page, 'tp-ffn');
    for (let l = 0; l < info.decoder_layers; l++) {
      const ins = bitsChanged(pa.ffnIn[l], pb.ffnIn[l], pa.c, T);
      const outs = bitsChanged(pa.ffnOut[l], pb.ffnOut[l], pa.c, T);
      assert.deepEqual(ins, Array.from({ length: T }, (_, p) => p === T - 1), `layer ${l} inputs`);
      assert.deepEqual(outs, ins, `layer ${l} outputs`);
      for (let p = 0; p < T; p++) {
        assert.equal(drawn[`ffn_input ${l} ${p}`], ins[p]);
        assert.equal(drawn[`ffn_output ${l} ${p}`], outs[p]);
      }
    }
    await shot(page, 'tp-ffn', 'ffn-last-token');
    // A middle token: attention spreads the edit to later rows, and each row's FFN output
    // changes exactly where its input did.
    const { before: c0, after: c1 } = await edited(page, 'tp-ffn', 2);
    const qa = await probe(page, c0, true);
    const qb = await probe(page, c1, true);
    drawn = await marks(page, 'tp-ffn');
    for (let l = 0; l < info.decoder_layers; l++) {
      const ins = bitsChanged(qa.ffnIn[l], qb.ffnIn[l], qa.c, T);
      const outs = bitsChanged(qa.ffnOut[l], qb.ffnOut[l], qa.c, T);
      assert.deepEqual(outs, ins, `layer ${l}: output rows change where input rows do`);
      assert.deepEqual(ins.slice(0, 2), [false, false], `layer ${l}: rows before the edit`);
      ins.forEach((w, p) => assert.equal(drawn[`ffn_input ${l} ${p}`], w));
    }
    const v = page.locator('tp-ffn p.verdict');
    assert.equal(await v.getAttribute('data-agree'), await v.getAttribute('data-total'));
    assert.deepEqual(errors, []);
    await page.close();
  });
});

describe('train and eval mode', () => {
  test('train_mode_repeats_differ_and_eval_mode_repeats_do_not', async () => {
    const { page, errors } = await open(browser.context, server.url, `play=0&model=${MODEL}&views=controls,output&mode=train&drop=0.2`);
    const logits = () => page.evaluate(() => Array.from(document.querySelector('transformer-playground').lastForward.logits.data));
    const runAgain = async () => {
      const draw = await page.evaluate(() => document.querySelector('transformer-playground').store.draw);
      await page.getByRole('button', { name: 'run again' }).click();
      await page.waitForFunction(
        (d) => {
          const s = document.querySelector('transformer-playground').store;
          return s.draw === d + 1 && s.previous !== s.lastForward && s.lastForward;
        },
        draw,
      );
      await page.waitForFunction(() => {
        const s = document.querySelector('transformer-playground').store;
        return s.previous && s.lastForward && s.previous !== s.lastForward;
      });
    };
    await page.waitForFunction(() => document.querySelector('transformer-playground').lastForward?.train_note);
    const note = await page.evaluate(() => document.querySelector('transformer-playground').lastForward.train_note);
    assert.match(note, /dropout p = 0\.2/);
    await page.locator('tp-controls p[role="status"]').waitFor();
    const t0 = await logits();
    await runAgain();
    const t1 = await logits();
    assert.notDeepEqual(t1, t0, 'a new draw of the dropout masks gives other logits');
    // The engine answers the same seed with the same masks: the difference is the draw.
    const again = await page.evaluate(async () => {
      const s = document.querySelector('transformer-playground').store;
      const r = await s.call('forward', { batch: s.lastForward.tokens, switches: s.switches(), sampling: s.sampling(), train: s.trainMode() });
      return Array.from(r.logits.data);
    });
    assert.deepEqual(again, t1);
    await shot(page, 'tp-controls', 'train-mode-controls');
    await page.getByRole('radio', { name: 'eval mode' }).check();
    await page.waitForFunction(() => document.querySelector('transformer-playground').lastForward?.train_note === null);
    const e0 = await logits();
    await runAgain();
    const e1 = await logits();
    assert.deepEqual(e1, e0, 'eval mode: the same logits every time');
    assert.notDeepEqual(e0, t0);
    assert.equal(await page.locator('tp-controls p[role="status"]').count(), 0);
    assert.deepEqual(errors, []);
    await page.close();
  });
});

describe('the norms view', () => {
  test('batchnorm_couples_the_batch_in_train_mode_and_layernorm_never_does', async () => {
    const { page, errors } = await open(browser.context, server.url, `play=0&model=${MODEL}&views=norms`);
    await page.waitForFunction(() => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-norms')?.data);
    const c = await comp(page, 'tp-norms');
    const { data, tokens, other, changed } = await c.evaluate((c) => ({ data: c.data, tokens: c.tokens, other: c.other, changed: c.otherChanged }));
    // Beside the loaded LayerNorm model: the shipped reverse model trained with BatchNorm.
    assert.deepEqual(
      data.models.map((m) => [m.norm, m.trained]),
      [
        ['pre_ln', true],
        ['batch_norm', true],
      ],
    );
    assert.match(data.models[1].label, /BatchNorm/);
    assert.equal(other.length, tokens.length);
    assert.notDeepEqual(changed, other);
    const row = (norm, mode) => page.locator(`tp-norms div[data-norm="${norm}"] tr[data-mode="${mode}"]`);
    assert.equal(await row('pre_ln', 'train').getAttribute('data-identical'), 'true');
    assert.equal(await row('pre_ln', 'eval').getAttribute('data-identical'), 'true');
    assert.equal(await row('batch_norm', 'train').getAttribute('data-identical'), 'false');
    assert.ok(Number(await row('batch_norm', 'train').getAttribute('data-max')) > 1e-4);
    assert.equal(await row('batch_norm', 'eval').getAttribute('data-identical'), 'true');
    // Against the engine's own passes: the loaded (LayerNorm) model in train mode, this
    // sequence beside the other and beside its changed copy — row 0's logits bit-identical.
    const twoRuns = await page.evaluate(
      async ([tokens, other, changed]) => {
        const s = document.querySelector('transformer-playground').store;
        const run = async (b) => {
          const r = await s.call('forward', { batch: [tokens, b], switches: s.switches(), sampling: s.sampling(), train: { seed: 1 } });
          const [, T, V] = r.logits.shape;
          return Array.from(r.logits.data.subarray(0, T * V));
        };
        return [await run(other), await run(changed)];
      },
      [tokens, other, changed],
    );
    assert.deepEqual(twoRuns[0], twoRuns[1], 'LayerNorm: the other sequence never reaches this one');
    // The statistics: LayerNorm per position (B, T); BatchNorm per feature (C) over B·T rows.
    const [ln, bn] = data.models;
    assert.deepEqual(ln.stats.mean.shape, [2, tokens.length]);
    assert.equal(ln.stats.over_batch, false);
    assert.deepEqual(bn.stats.mean.shape, [await page.evaluate(() => document.querySelector('transformer-playground').info.d_model)]);
    assert.equal(bn.stats.over_batch, true);
    assert.equal(bn.batch_rows, 2 * tokens.length);
    const info = await page.evaluate(() => document.querySelector('transformer-playground').info);
    assert.equal(ln.residual_norms.length, info.decoder_layers + 1);
    // The BatchNorm model read the same characters in its own vocabulary (<unk> for the
    // ones it lacks): checked here against its vocabulary list.
    const spell = (ids) => ids.map((id) => info.vocab[id]).map((t, i) => (i === 0 ? '<bos>' : bn.vocab.includes(t) ? t : '<unk>'));
    assert.deepEqual(bn.tokens.map((id) => bn.vocab[id]), spell(tokens));
    assert.deepEqual(bn.other_changed.map((id) => bn.vocab[id]), spell(changed));
    // A LayerNorm statistic read back from the input it normalised: μ of position 1.
    const C = info.d_model;
    const x = Array.from(ln.stats.input.data).slice(C, 2 * C);
    const mu = x.reduce((a, b) => a + b, 0) / C;
    assert.ok(Math.abs(mu - ln.stats.mean.data[1]) < 1e-5, `${mu} vs ${ln.stats.mean.data[1]}`);
    await shot(page, 'tp-norms', 'norms');
    // The BatchNorm numbers against that checkpoint's own forward passes: load it, run the
    // two batches in train mode with the view's seed; row 0's logits move by data-max.
    const seed = await c.evaluate((c) => c.seed);
    await page.evaluate(() => document.querySelector('transformer-playground').store.patch({ model: 'reverse-batch-norm.safetensors' }));
    await page.waitForFunction(() => document.querySelector('transformer-playground').info?.norm === 'batch_norm');
    const moved = await page.evaluate(
      async ([a, b, b2, seed]) => {
        const s = document.querySelector('transformer-playground').store;
        const run = async (o, train) => {
          const r = await s.call('forward', { batch: [a, o], switches: s.switches(), sampling: s.sampling(), ...(train ? { train: { seed } } : {}) });
          const [, T, V] = r.logits.shape;
          return Array.from(r.logits.data.subarray(0, T * V));
        };
        const diff = (x, y) => x.reduce((m, v, i) => Math.max(m, Math.abs(v - y[i])), 0);
        return [diff(await run(b, true), await run(b2, true)), diff(await run(b, false), await run(b2, false))];
      },
      [bn.tokens, bn.other, bn.other_changed, seed],
    );
    assert.ok(moved[0] > 1e-4 && Math.abs(moved[0] - bn.train_max_diff) <= 1e-6 * Math.max(1, moved[0]), `train mode: the other sequence moves this one by what the view says (${moved[0]} vs ${bn.train_max_diff})`);
    assert.equal(moved[1], 0, 'eval mode: running statistics, no coupling');
    // Now loaded, the BatchNorm model stands beside the trained LayerNorm reverse model.
    await page.waitForFunction(() => {
      const d = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-norms')?.data;
      return d && d.models[0].norm === 'batch_norm';
    });
    const swapped = await c.evaluate((c) => c.data.models.map((m) => [m.norm, m.trained, m.train_identical, m.eval_identical]));
    assert.deepEqual(swapped, [
      ['batch_norm', true, false, true],
      ['pre_ln', true, true, true],
    ]);
    await shot(page, 'tp-norms', 'norms-batchnorm-loaded');
    assert.deepEqual(errors, []);
    await page.close();
  });
});

describe('the dropout view', () => {
  test('masks_hold_zeros_and_one_over_one_minus_p_and_eval_mode_is_the_identity', async () => {
    const { page, errors } = await open(browser.context, server.url, `play=0&model=${MODEL}&views=dropout&drop=0.25`);
    await page.waitForFunction(() => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-dropout')?.data);
    const d = await (await comp(page, 'tp-dropout')).evaluate((c) => ({ ...c.data, sites: c.data.sites.map((s) => ({ place: s.place, in_paper: s.in_paper, mask: Array.from(s.mask.data) })) }));
    const info = await page.evaluate(() => document.querySelector('transformer-playground').info);
    assert.equal(d.p, 0.25);
    assert.equal(d.model_p, info.dropout, 'the model keeps its own p; the view switched another on');
    const keep = Math.fround(1 / 0.75);
    const places = ['embedding'];
    for (let l = 0; l < info.decoder_layers; l++) places.push('attention_probs', 'sublayer_output', 'ffn_hidden', 'sublayer_output');
    assert.deepEqual(
      d.sites.map((s) => s.place),
      places,
    );
    for (const s of d.sites) {
      assert.ok(s.mask.every((m) => m === 0 || m === keep), s.place);
      const kept = s.mask.filter((m) => m !== 0).length / s.mask.length;
      assert.ok(kept > 0.5 && kept < 0.95, `${s.place}: kept ${kept}`);
    }
    // The embedding in train mode is the eval embedding times its mask, element by element.
    const ev = Array.from(d.embed_eval.data);
    const tr = Array.from(d.embed_train.data);
    const mask = d.sites[0].mask;
    ev.forEach((e, i) => assert.equal(tr[i], Math.fround(e * mask[i])));
    const facts = page.locator('tp-dropout ul[data-masked]');
    assert.equal(await facts.getAttribute('data-masked'), 'true');
    assert.equal(await facts.getAttribute('data-eval-identical'), 'true');
    assert.ok(Number(await facts.getAttribute('data-train-diff')) > 0);
    await shot(page, 'tp-dropout', 'dropout');
    assert.deepEqual(errors, []);
    await page.close();
  });
});
