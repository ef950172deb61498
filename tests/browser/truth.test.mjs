// Every sentence that states a number about the loaded model agrees with the engine, on
// every shipped model that sentence can show (tests/unit/prose-numbers.test.mjs makes sure
// such numbers reach a sentence only as placeholders). Each test reads the number out of
// the sentence as the page shows it and compares it with the engine's own value, asked
// here through the element's store (the same engine calls the views make) or read from
// models/manifest.json (what the training CLI measured).

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { artifacts, launch, open, root, serve, settled } from './harness.mjs';

const MANIFEST = JSON.parse(readFileSync(join(root, 'models/manifest.json'), 'utf8'));

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
const view = (tag) => `${el}.shadowRoot.querySelector("${tag}")`;

/** The first number written in `text` (digits with an optional decimal point and thousands commas). */
function numberIn(text, re = /(\d[\d,]*(?:\.\d+)?)/) {
  const m = re.exec(text);
  assert.ok(m, `no number in ${JSON.stringify(text)}`);
  return Number(m[1].replaceAll(',', ''));
}

/** Load another model into the open page and wait for its info and a forward pass of it. */
async function load(page, file) {
  const same = await page.evaluate(([file]) => document.querySelector('transformer-playground').st.model === file, [file]);
  if (same) return;
  await page.evaluate(([file]) => {
    const p = document.querySelector('transformer-playground');
    window.__was = { info: p.info, forward: p.lastForward };
    p.store.patch({ model: file });
  }, [file]);
  await page.waitForFunction(
    () => {
      const p = document.querySelector('transformer-playground');
      return p.info && p.info !== window.__was.info && p.lastForward && p.lastForward !== window.__was.forward && !p.progress;
    },
    null,
    { timeout: 60000 },
  );
  await page.evaluate(() => document.querySelector('transformer-playground').updateComplete);
}

describe('the embedding-scale sentence', () => {
  test('states_the_ratio_of_position_to_token_vectors_the_engine_measures_on_every_model_that_adds_positions', async (t) => {
    const { page, errors } = await open(browser.context, server.url, `play=0&model=${MANIFEST[0].file}&views=embedding-scale`);
    let checked = 0;
    for (const m of MANIFEST) {
      await load(page, m.file);
      const { d, tokens } = await page.evaluate(async () => {
        const p = document.querySelector('transformer-playground');
        const tokens = p.store.inputRow;
        return { d: await p.store.call('embeddingScale', { tokens }), tokens };
      });
      // The view shows this model's numbers (not the last model's) once they equal the engine's.
      await page.waitForFunction(([want]) => JSON.stringify(document.querySelector('transformer-playground').shadowRoot.querySelector('tp-embedding-scale')?.data) === want, [JSON.stringify(d)], {
        timeout: 60000,
      });
      await page.locator('tp-embedding-scale').evaluate((v) => v.updateComplete);
      const verdict = page.locator('tp-embedding-scale p.verdict');
      if (!d.position_norm.length) {
        // RoPE, ALiBi, relative, none: nothing is added to the embedding, and no ratio is stated.
        assert.equal(await verdict.count(), 0, m.file);
        continue;
      }
      const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
      const want = mean(d.position_norm) / mean(d.scaled_in_model ? d.token_norm_scaled : d.token_norm);
      const text = await verdict.innerText();
      assert.ok(Math.abs(numberIn(text, /(\d+\.\d+)×/) - want) <= 0.005 + 1e-9, `${m.file}: ${text} against ${want} (${tokens.length} tokens)`);
      assert.match(text, want >= 1 ? /position part/ : /token part/, `${m.file}: which part is larger`);
      checked++;
      // The description of the sibling without ×√d_model says the positions are the larger part.
      if (m.file === 'reverse-no-embed-scale.safetensors') {
        t.diagnostic(`${m.file}: position vectors ${want.toFixed(2)}× the token vectors`);
        assert.equal(d.scaled_in_model, false);
        assert.ok(want > 1, `its description says the position vectors are larger: ${want}`);
      }
    }
    assert.ok(checked >= 10, `only ${checked} models add positions`);
    assert.deepEqual(errors, []);
    await page.close();
  });
});

describe('the FFN view’s share of a layer', () => {
  test('is_the_cost_reports_ffn_row_against_the_layer_on_every_architecture', async (t) => {
    const { page, errors } = await open(browser.context, server.url, `play=0&model=reverse.safetensors&views=ffn`);
    // One model of each architecture (their layer shapes differ in cross-attention).
    const files = ['reverse.safetensors', 'translate.safetensors', 'sentiment.safetensors', 'grammar-learned.safetensors', 'grammar-relative.safetensors', 'reverse-additive.safetensors'];
    for (const file of files) {
      await load(page, file);
      await page.waitForFunction(`${view('tp-ffn')}?.share && ${view('tp-ffn')}.shadowRoot.querySelector('[data-ffn-params]')`, null, { timeout: 60000 });
      const c = await page.evaluate(async () => {
        const p = document.querySelector('transformer-playground');
        return { report: await p.store.call('cost', { n_heads: p.info.n_heads, context: 1 }), arch: p.info.arch };
      });
      const group = c.arch === 'decoder_only' ? 'decoder layer' : 'encoder layer';
      const rows = c.report.rows.filter((r) => r.group === group);
      const ffn = rows.find((r) => r.part === 'FFN').params;
      const layer = rows.reduce((a, r) => a + r.params, 0);
      const text = await page.locator('tp-ffn [data-ffn-params]').innerText();
      const nums = [...text.matchAll(/(\d[\d,]*(?:\.\d+)?)/g)].map((m) => Number(m[1].replaceAll(',', '')));
      assert.deepEqual(nums.slice(0, 2), [ffn, layer], `${file}: ${text}`);
      assert.equal(nums[2], Math.round((100 * ffn) / layer), `${file}: the percentage`);
      t.diagnostic(`${file}: the FFN holds ${ffn} of ${layer} parameters of a layer`);
    }
    assert.deepEqual(errors, []);
    await page.close();
  });
});

describe('the score function', () => {
  test('the_readout_the_diagram_the_saturation_view_and_the_switch_follow_the_models_score_function', async () => {
    const { page, errors } = await open(browser.context, server.url, `play=0&model=reverse.safetensors&views=controls,attention,architecture,saturation`);
    for (const [file, score] of [
      ['reverse.safetensors', 'scaled_dot'],
      ['reverse-dot.safetensors', 'dot'],
      ['reverse-additive.safetensors', 'additive'],
    ]) {
      await load(page, file);
      assert.equal(await page.evaluate(`${el}.info.score`), score, file);
      await page.waitForFunction(`${view('tp-attention')}.shadowRoot.querySelector('[data-score-function]')`);
      assert.equal(await page.locator('tp-attention [data-score-function]').getAttribute('data-score-function'), score);
      const readout = await page.locator('tp-attention .readout').innerText();
      if (score === 'additive') assert.match(readout, /tanh\(q \+ k\)/, readout);
      else assert.doesNotMatch(readout, /tanh/, readout);
      if (score === 'scaled_dot') assert.match(readout, /q·k \/ √d_k/);
      else assert.match(readout, /never divided by √d_k/);
      // The switch does nothing on a model that never divides: it is disabled, and says why.
      const box = page.locator('tp-controls input[data-setting="scale"]');
      assert.equal(await box.isDisabled(), score !== 'scaled_dot', file);
      assert.equal(await page.locator('tp-controls [data-why="scale"]').count(), score === 'scaled_dot' ? 0 : 1);
      assert.equal(await page.locator('tp-saturation [data-score-function]').getAttribute('data-score-function'), score);
      const sat = await page.locator('tp-saturation [data-score-function]').innerText();
      if (score === 'scaled_dot') assert.match(sat, /grows by the factor √d_k/);
      else assert.match(sat, /changes nothing here/);
      // The diagram's first step: the score the model computes.
      await page.locator('tp-architecture').evaluate((a) => a.updateComplete);
      const step = page.locator('tp-architecture [data-step="score"]');
      if ((await step.count()) > 0) assert.match(await step.first().innerText(), score === 'additive' ? /tanh/ : /q_i · k_j/);
    }
    assert.deepEqual(errors, []);
    await page.close();
  });
});

describe('one source of truth for the mask', () => {
  test('a_mask_editor_rule_disables_the_causal_switch_and_names_the_no_leak_table_and_the_diagram_step', async () => {
    const { page, errors } = await open(browser.context, server.url, `play=0&model=grammar-sinusoidal.safetensors&views=controls,no-leak,architecture&mask=window-3`);
    const rule = await page.evaluate(`${el}.lastForward.masks.find((m) => m.site === 'decoder_self').rule`);
    assert.deepEqual(rule, { kind: 'sliding_window', window: 3 });
    assert.equal(await page.locator('tp-controls input[data-setting="causal"]').isDisabled(), true);
    assert.match(await page.locator('tp-controls [data-why="causal"]').innerText(), /sliding window \(w = 3\)/);
    await page.waitForFunction(`${view('tp-no-leak')}?.diffs.length === 2`, null, { timeout: 60000 });
    const now = page.locator('tp-no-leak table[data-role="now"]');
    assert.equal(await now.getAttribute('data-mask'), 'sliding_window');
    assert.match(await page.locator('tp-no-leak p.verdict[data-role="now"]').innerText(), /^sliding window \(w = 3\): 0 of \d+ values/);
    assert.equal(await page.locator('tp-no-leak table[data-role="reference"]').getAttribute('data-mask'), 'none');
    // The diagram's mask step gives the rule the core applied, not the switch's reason.
    const maskStep = page.locator('tp-architecture li[data-step="mask"]');
    await maskStep.waitFor({ timeout: 60000 });
    assert.match(await maskStep.innerText(), /\(sliding window \(w = 3\)(\)| \+)/);
    assert.doesNotMatch(await maskStep.innerText(), /\(causal/);
    // Without a rule the switch decides again, and is enabled.
    await page.evaluate(`${el}.store.patch({ mask: null })`);
    await page.waitForFunction(`${el}.lastForward.masks.find((m) => m.site === 'decoder_self').rule.kind === 'causal'`);
    await page.locator('tp-controls').evaluate((c) => c.updateComplete);
    assert.equal(await page.locator('tp-controls input[data-setting="causal"]').isDisabled(), false);
    await page.waitForFunction(`${view('tp-architecture')}.shadowRoot.querySelector('li[data-step="mask"]')?.textContent.includes('(causal')`, null, { timeout: 60000 });
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('with_batch_norm_in_train_mode_earlier_rows_change_under_the_causal_mask_and_the_view_says_why', async () => {
    for (const [hash, mixes] of [
      ['model=reverse-batch-norm.safetensors&mode=train', true],
      ['model=reverse-batch-norm.safetensors&mode=eval', false],
      ['model=reverse.safetensors&mode=train', false],
    ]) {
      const { page, errors } = await open(browser.context, server.url, `play=0&views=no-leak&${hash}`);
      await page.waitForFunction(`${view('tp-no-leak')}?.diffs.length === 2`, null, { timeout: 60000 });
      const verdict = page.locator('tp-no-leak p.verdict[data-role="now"]');
      assert.equal(await page.locator('tp-no-leak table[data-role="now"]').getAttribute('data-mask'), 'causal');
      // The count the sentence states is the count of changed earlier cells the core reported.
      const { changed, first } = await page.evaluate(`(() => {
        const v = ${view('tp-no-leak')};
        const d = v.diffs[0];
        const site = d.after.stacks[0].site;
        const first = Math.min(...d.edited);
        let changed = 0;
        for (const r of d.rows) if ((r.what === 'hidden' && r.stack === site) || r.what === 'logits') for (let p = 0; p < first; p++) if (r.changed[p]) changed++;
        return { changed, first };
      })()`);
      const text = await verdict.innerText();
      assert.equal(Number(await verdict.getAttribute('data-earlier-changed')), changed, hash);
      assert.equal(numberIn(text, /causal: (\d+) of/), changed, text);
      assert.ok(text.includes(`before position ${first} changed`), text);
      if (mixes) {
        assert.ok(changed > 0, `${hash}: BatchNorm's batch statistics carry the later token back`);
        assert.match(text, /BatchNorm's train-mode statistics/);
        assert.equal(await page.locator('tp-no-leak [data-norm-mixes]').count(), 1);
        await page.locator('tp-no-leak').screenshot({ path: join(artifacts, 'truth-no-leak-batch-norm-train.png') });
      } else {
        assert.equal(changed, 0, `${hash}: nothing leaks`);
        assert.match(text, /none: no leak/);
      }
      assert.deepEqual(errors, []);
      await page.close();
    }
  });
});

describe('the parallel view’s attention FLOPs', () => {
  test('the_caption_counts_flops_as_the_plot_does_and_states_the_engines_count', async () => {
    const { page, errors } = await open(browser.context, server.url, `play=0&model=grammar-sinusoidal.safetensors&views=parallel`);
    await page.waitForFunction(`${view('tp-parallel')}?.data && !${view('tp-parallel')}.busy`, null, { timeout: 120000 });
    const { d, info } = await page.evaluate(`({ d: ${view('tp-parallel')}.data, info: ${el}.info })`);
    const n = d.tokens.length;
    const C = info.d_model;
    const L = info.decoder_layers;
    // The caption's formulas, per layer: 4·C·n with the cache, 2·C·n(n + 1) without — the
    // engine's plotted series, FLOPs (2 per multiply-add).
    for (let k = 1; k <= n; k++) {
      assert.equal(d.cached_step_attention_flops[k - 1], 4 * C * k * L, `cached, n = ${k}`);
      assert.equal(d.uncached_step_attention_flops[k - 1], 2 * C * k * (k + 1) * L, `uncached, n = ${k}`);
    }
    const caption = page.locator('tp-parallel figcaption[data-cached-attention-flops]');
    const text = await caption.innerText();
    assert.match(text, /4·C·n per layer/);
    assert.match(text, /2·C·n\(n \+ 1\) per layer/);
    const at = /At n = (\d+): ([\d,]+) FLOPs with the cache, ([\d,]+) without/.exec(text);
    assert.ok(at, text);
    assert.deepEqual(
      at.slice(1).map((x) => Number(x.replaceAll(',', ''))),
      [n, d.cached_step_attention_flops[n - 1], d.uncached_step_attention_flops[n - 1]],
    );
    assert.deepEqual(errors, []);
    await page.close();
  });
});

describe('the lessons’ numbers', () => {
  /** Answer the open lesson's question (a choice), trying the options in turn until one is right: what to notice shows after a right answer. */
  async function answer(page) {
    const lesson = page.locator('tp-lesson');
    await lesson.locator('[data-answer="open"]').waitFor({ timeout: 60000 });
    const options = lesson.locator('[data-answer] [data-option]');
    for (let k = 0; k < (await options.count()); k++) {
      await options.nth(k).check();
      await lesson.locator('[data-check]').click();
      if ((await lesson.locator('[data-verdict]').getAttribute('data-verdict')) === 'right') return;
    }
  }

  /**
   * Open a lesson, do its experiment by `patch`, answer its question, and read its notice.
   * `settle`: let the lesson see its own preset first (a lesson done by a change of model
   * notes the model it opened on). `then`: what the learner does after the patch (scroll a
   * view into sight so that it measures).
   */
  async function notice(lesson, patch, { settle = false, then } = {}) {
    const { page, errors } = await open(browser.context, server.url, `lesson=${lesson}`);
    if (settle) await page.waitForTimeout(1500);
    assert.equal(await settled(page, (p) => ({ promise: document.querySelector('transformer-playground').store.patch(p) }), patch), 'done');
    await then?.(page);
    await answer(page);
    await page.waitForFunction(() => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-lesson')?.shadowRoot?.querySelector('[data-notice]'), null, {
      timeout: 60000,
    });
    return { page, errors, text: await page.locator('tp-lesson [data-notice]').innerText() };
  }
  const pct = (file) => Math.round(MANIFEST.find((m) => m.file === file).held_out_accuracy * 1000) / 10;
  const percents = (text) => [...text.matchAll(/(\d+(?:\.\d+)?) %/g)].map((m) => Number(m[1]));

  test('residual_quotes_the_held_out_scores_the_training_cli_measured', async () => {
    const { page, errors, text } = await notice('residual', { model: 'reverse-no-residual.safetensors' });
    assert.deepEqual(percents(text), [pct('reverse-no-residual.safetensors'), pct('reverse.safetensors')], text);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('dot_vs_additive_quotes_the_held_out_scores_and_shows_the_timing_table', async () => {
    const { page, errors, text } = await notice('dot-vs-additive', { model: 'reverse-additive.safetensors' });
    const [additive, dot] = [pct('reverse-additive.safetensors'), pct('reverse.safetensors')];
    // Equal scores are one number and "equally well"; different ones are both, in order, and "not equally well".
    if (additive === dot) {
      assert.deepEqual(percents(text), [additive], text);
      assert.match(text, /equally well/);
      assert.doesNotMatch(text, /not equally/);
    } else {
      assert.deepEqual(percents(text), [additive, dot], text);
      assert.match(text, /not equally well/);
    }
    // The timing table it points to is one of the lesson's views.
    assert.ok((await page.evaluate(`${el}.st.views`)).includes('parallel'));
    assert.deepEqual(errors, []);
    await page.close();
  });

  // Each of these sentences names two models and gives two scores: each score must be its own model's, in the order the sentence names them.
  for (const [lesson, patch, files, opts] of [
    ['shared-qk', { model: 'grammar-sinusoidal.safetensors' }, ['grammar-sinusoidal.safetensors', 'grammar-shared-qk.safetensors'], { settle: true }],
    ['residual-and-norm', { model: 'reverse-no-residual.safetensors' }, ['reverse.safetensors', 'reverse-no-residual.safetensors'], {}],
    ['batch-norm', { mode: 'train' }, ['reverse-batch-norm.safetensors', 'reverse.safetensors'], { then: (page) => page.locator('tp-norms').scrollIntoViewIfNeeded() }],
  ]) {
    test(`${lesson.replaceAll('-', '_')}_quotes_the_held_out_scores_of_the_models_it_names_in_their_order`, async (t) => {
      const { page, errors, text } = await notice(lesson, patch, opts);
      // Each score is its model's; where the two shipped scores differ, a sentence that
      // swapped them fails here too (where they are equal, only the numbers are checked).
      if (pct(files[0]) === pct(files[1])) t.diagnostic(`${lesson}: both models score ${pct(files[0])} %, so the order is not tested`);
      assert.deepEqual(percents(text), files.map(pct), text);
      assert.deepEqual(errors, []);
      await page.close();
    });
  }

  test('parallel_quotes_the_times_the_view_measured_and_names_the_backend_that_ran', async () => {
    const { page, errors } = await open(browser.context, server.url, `lesson=parallel`);
    await page.waitForFunction(`${view('tp-parallel')}?.data && !${view('tp-parallel')}.busy`, null, { timeout: 120000 });
    // The experiment: another N, measured again.
    const input = page.locator('tp-parallel input[type="number"]');
    const n = Number(await input.inputValue()) === 32 ? 24 : 32;
    await input.fill(String(n));
    await input.press('Enter');
    await input.blur();
    await page.locator('tp-parallel .row button').first().click();
    await page.waitForFunction(`${view('tp-parallel')}?.data?.tokens.length === ${n} && !${view('tp-parallel')}.busy`, null, { timeout: 120000 });
    await answer(page);
    await page.waitForFunction(`${view('tp-lesson')}?.shadowRoot?.querySelector('[data-notice]')?.textContent.includes('N = ${n}')`, null, { timeout: 60000 });
    const text = await page.locator('tp-lesson [data-notice]').innerText();
    const { d, backend } = await page.evaluate(`({ d: ${view('tp-parallel')}.data, backend: ${el}.store.backendInfo.backend })`);
    const k = d.forward_lengths.indexOf(n);
    assert.ok(k >= 0, `the one pass was timed at N = ${n}`);
    const m = /one pass ([\d.]+) ms, token by token ([\d.]+) ms with the cache and ([\d.]+) ms without/.exec(text);
    assert.ok(m, text);
    assert.deepEqual(m.slice(1), [d.forward_ms[k], d.cached_ms[n - 1], d.uncached_ms[n - 1]].map((x) => x.toFixed(2)), text);
    // What the one pass saves depends on the backend that ran it: the sentence names the one that did.
    assert.match(text, backend === 'webgpu' ? /Here WebGPU runs/ : /Here the CPU backend runs/, `${backend}: ${text}`);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('new_token_states_the_loaded_models_width_blocks_and_vocabulary', async () => {
    const { page, errors } = await open(browser.context, server.url, `lesson=new-token`);
    await page.waitForFunction(`${view('tp-lesson')}?.shadowRoot?.querySelector('section')?.textContent.includes('logits.')`, null, { timeout: 60000 });
    const info = await page.evaluate(`(({ d_model, decoder_layers, vocab }) => ({ d_model, decoder_layers, vocab: vocab.length }))(${el}.info)`);
    const text = await page.locator('tp-lesson section').innerText();
    const m = /the vectors have (\d+) numbers, there are (\d+) blocks, and the vocabulary has (\d+) tokens: so each step ends in (\d+) logits/.exec(text);
    assert.ok(m, text);
    assert.deepEqual(m.slice(1).map(Number), [info.d_model, info.decoder_layers, info.vocab, info.vocab]);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('embedding_scale_quotes_the_ratio_the_view_measured_on_the_sibling', async () => {
    const { page, errors } = await open(browser.context, server.url, `lesson=embedding-scale`);
    await page.evaluate(`${el}.store.patch({ model: 'reverse-no-embed-scale.safetensors' })`);
    await answer(page);
    await page.waitForFunction(`${view('tp-lesson')}?.shadowRoot?.querySelector('[data-notice]')?.textContent.includes('×')`, null, { timeout: 60000 });
    const text = await page.locator('tp-lesson [data-notice]').innerText();
    const r = await page.evaluate(`${view('tp-embedding-scale')}.ratio`);
    assert.equal(numberIn(text, /about (\d+\.\d)×/), Math.round(r * 10) / 10, text);
    assert.deepEqual(errors, []);
    await page.close();
  });
});
