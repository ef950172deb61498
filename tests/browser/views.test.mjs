// The cost, softmax-saturation and Noam-schedule views in headless Chromium: each reads
// the engine's own numbers and reacts to its control. Screenshots land in artifacts/.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, open, root, seeView, serve } from './harness.mjs';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { artifacts } from './harness.mjs';

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

/** A screenshot of one view alone. */
function shotOf(page, tag, name) {
  return page.locator(tag).screenshot({ path: join(artifacts, `${name}.png`) });
}

/** The cost table's rows as drawn: {group, part, params, flops, layers}. */
function costRows(page) {
  return page
    .locator('tp-cost tbody tr[data-part]')
    .evaluateAll((rs) => rs.map((r) => ({ group: r.dataset.group, part: r.dataset.part, params: Number(r.dataset.params), flops: Number(r.dataset.flops), layers: Number(r.dataset.layers) })));
}

describe('the cost, saturation and schedule views', () => {
  test('changing_the_head_count_keeps_projection_params_and_flops_equal_and_matches_the_flop_counter', async () => {
    const { page, errors } = await open(browser.context, server.url, 'chapter=all&play=0');
    await seeView(page, 'cost');
    await page.waitForFunction(() => document.querySelector('transformer-playground').costReport !== null);
    const info = await page.evaluate(`${el}.info`);
    assert.equal(info.arch, 'decoder_only', 'the default model is a decoder');
    const first = await costRows(page);
    const proj = (rows) => rows.filter((r) => / projection$/.test(r.part));
    assert.equal(proj(first).length, 4, 'Q, K, V and O rows');
    const C = info.d_model;
    for (const r of proj(first)) {
      assert.equal(r.params, C * C + C, `${r.part}: C×C weights and C biases`);
      assert.equal(r.flops, 2 * C * C, `${r.part}: 2·C² FLOPs per token`);
    }
    // The total is the loaded checkpoint's own parameter count.
    const total = Number(await page.locator('tp-cost tfoot tr').getAttribute('data-total-params'));
    assert.equal(total, info.params);
    // The rows of the layers add up to the generation FLOP counter's number.
    const p = page.locator('tp-cost p[data-layer-flops]');
    assert.equal(Number(await p.getAttribute('data-layer-flops')), Number(await p.getAttribute('data-core-flops')));
    assert.ok(Number(await p.getAttribute('data-core-flops')) > 0);

    // Another head count: the projections cost exactly the same, d_k changes.
    const divisors = [];
    for (let d = 1; d <= C; d++) if (C % d === 0) divisors.push(d);
    const other = divisors.find((d) => d !== info.n_heads && d > 1) ?? 1;
    await page.getByLabel('number of heads h (divisors of d_model)').selectOption(String(other));
    await page.waitForFunction((h) => document.querySelector('transformer-playground').costReport?.n_heads === h, other);
    await page.waitForFunction((h) => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-cost').shadowRoot.querySelector('[data-dhead]')?.dataset.dhead === String(h), C / other);
    const second = await costRows(page);
    assert.deepEqual(
      proj(second).map((r) => [r.part, r.params, r.flops]),
      proj(first).map((r) => [r.part, r.params, r.flops]),
    );
    const scores = (rows) => rows.find((r) => r.part === 'scores + mix');
    assert.equal(scores(second).flops, scores(first).flops, 'h heads of C/h: the same score FLOPs');
    assert.ok(scores(first).flops > 0);
    await page.locator('tp-cost').scrollIntoViewIfNeeded();
    await shotOf(page, 'transformer-playground >> tp-cost', 'view-cost');
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('every_architectures_cost_rows_add_up_to_its_checkpoints_parameter_count', async () => {
    for (const model of ['translate.safetensors', 'sentiment.safetensors', 'grammar-relative.safetensors']) {
      const { page, errors } = await open(browser.context, server.url, `chapter=all&play=0&model=${model}`);
      await seeView(page, 'cost');
      await page.waitForFunction(() => document.querySelector('transformer-playground').costReport !== null);
      const info = await page.evaluate(`${el}.info`);
      const rows = await costRows(page);
      const sum = rows.reduce((s, r) => s + r.params * r.layers, 0);
      assert.equal(sum, info.params, `${model}: the rows hold every trained value`);
      if (info.arch === 'encoder_decoder') {
        assert.ok(rows.some((r) => r.part === 'cross K projection'), `${model}: cross-attention is counted`);
      } else {
        const p = page.locator('tp-cost p[data-layer-flops]');
        assert.equal(Number(await p.getAttribute('data-layer-flops')), Number(await p.getAttribute('data-core-flops')), `${model}: rows match the FLOP counter`);
      }
      if (model === 'translate.safetensors') await shotOf(page, 'transformer-playground >> tp-cost', 'view-cost-translate');
      assert.deepEqual(errors, []);
      await page.close();
    }
  });

  test('a_checkpoint_with_separate_source_and_target_tables_counts_both_in_the_cost_rows', async () => {
    // A PyTorch fixture with src_embed.weight and tgt_embed.weight (tests/fixtures/README.md).
    const bytes = readFileSync(join(root, 'tests/fixtures/encdec_postln_relu_sin_sepembed.safetensors'));
    const { page, errors } = await open(browser.context, server.url, 'chapter=all&play=0');
    await seeView(page, 'cost');
    await page.waitForFunction(() => document.querySelector('transformer-playground').costReport !== null);
    const info = await page.evaluate(async (b) => document.querySelector('transformer-playground').loadCheckpoint(new Uint8Array(b)), [...bytes]);
    assert.equal(info.arch, 'encoder_decoder');
    await page.waitForFunction(() => document.querySelector('transformer-playground').costReport?.rows.some((r) => r.part === 'source embedding (a lookup)'));
    await page.waitForFunction(() => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-cost').shadowRoot.querySelector('tr[data-part="source embedding (a lookup)"]'));
    const rows = await costRows(page);
    const V = info.vocab.length;
    const C = info.d_model;
    const part = (p) => rows.find((r) => r.part === p)?.params;
    assert.equal(part('source embedding (a lookup)'), V * C);
    assert.equal(part('target embedding (a lookup)'), V * C);
    assert.equal(part('token embedding (a lookup)'), undefined);
    const sum = rows.reduce((s, r) => s + r.params * r.layers, 0);
    assert.equal(sum, info.params, 'the rows hold every trained value, both tables included');
    assert.equal(Number(await page.locator('tp-cost tfoot tr').getAttribute('data-total-params')), info.params);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('turning_sqrt_dk_scaling_off_lowers_the_mean_entropy_and_shows_the_previous_values', async () => {
    const { page, errors } = await open(browser.context, server.url, 'chapter=all&play=0');
    const foot = page.locator('tp-saturation tfoot tr');
    const on = Number(await foot.getAttribute('data-mean-entropy'));
    const info = await page.evaluate(`${el}.info`);
    assert.equal(await page.locator('tp-saturation tbody tr').count(), info.n_heads, 'one row per head');
    // The readout matches the drawn attention map: mean entropy of the rows of layer 1.
    const fromMap = await page.evaluate(() => {
      const p = document.querySelector('transformer-playground');
      const a = p.lastForward.attention.find((x) => x.layer === 0 && x.site === 'decoder_self');
      const [, H, T, S] = a.probs.shape;
      let sum = 0;
      for (let h = 0; h < H; h++)
        for (let i = 0; i < T; i++) {
          let e = 0;
          for (let j = 0; j < S; j++) {
            const q = a.probs.data[(h * T + i) * S + j];
            if (q > 0) e -= q * Math.log(q);
          }
          sum += e;
        }
      return sum / (H * T);
    });
    assert.ok(Math.abs(fromMap - on) < 1e-4, `mean entropy ${on} vs ${fromMap} from the map`);
    await page.getByLabel('scale by √d_k').uncheck();
    await page.waitForFunction(() => document.querySelector('transformer-playground').st.scale === false);
    await page.waitForFunction(() => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-saturation').shadowRoot.querySelector('tfoot tr')?.dataset.beforeMeanEntropy);
    const off = Number(await foot.getAttribute('data-mean-entropy'));
    const before = Number(await foot.getAttribute('data-before-mean-entropy'));
    assert.ok(Math.abs(before - on) < 1e-6, `the previous setting's mean (${before}) is shown beside (${on})`);
    assert.ok(off < on - 1e-3, `without √d_k the rows are sharper: ${off} < ${on}`);
    await page.locator('tp-saturation').scrollIntoViewIfNeeded();
    await shotOf(page, 'transformer-playground >> tp-saturation', 'view-saturation');
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('the_noam_peak_sits_at_step_equal_to_warmup_with_the_textbook_value', async () => {
    const { page, errors } = await open(browser.context, server.url, 'chapter=all&play=0');
    await seeView(page, 'schedule');
    await page.waitForFunction(() => document.querySelector('transformer-playground').schedule !== null);
    const info = await page.evaluate(`${el}.info`);
    let s = await page.evaluate(`${el}.schedule`);
    assert.equal(s.warmup, 4000);
    assert.equal(s.peak_step, 4000);
    const peak = (c, w) => 1 / Math.sqrt(c * w);
    assert.ok(Math.abs(s.peak_lr - peak(info.d_model, 4000)) / peak(info.d_model, 4000) < 1e-5);
    assert.match(await page.locator('tp-schedule text[data-peak]').textContent(), /step 4,000/);
    const input = page.getByLabel('warmup steps of the Noam schedule');
    await input.fill('1500');
    await input.press('Enter');
    await page.waitForFunction(() => document.querySelector('transformer-playground').schedule?.warmup === 1500);
    s = await page.evaluate(`${el}.schedule`);
    assert.equal(s.peak_step, 1500);
    assert.ok(Math.abs(s.peak_lr - peak(info.d_model, 1500)) / peak(info.d_model, 1500) < 1e-5);
    // Warmup is linear: a quarter of the way there, a quarter of the peak.
    const i = s.steps.findIndex((x) => x >= 100);
    assert.ok(Math.abs(s.lr[i] / s.peak_lr - s.steps[i] / 1500) < 1e-5);
    // The state changes before the chart's next render: wait for the chart to draw it.
    const label = page.locator('tp-schedule text[data-peak]');
    for (let i = 0; i < 100 && !/step 1,500/.test(await label.textContent()); i++) await page.waitForTimeout(50);
    assert.match(await label.textContent(), /step 1,500/);
    // A warmup out of range is refused where it was typed; the chart keeps the last one.
    await input.fill('5');
    await input.press('Enter');
    assert.equal(await input.evaluate((i) => i.validity.valid), false);
    assert.match(await input.evaluate((i) => i.validationMessage), /from 100 to 200000/);
    assert.equal((await page.evaluate(`${el}.schedule`)).warmup, 1500);
    // A cooldown over the last quarter: the engine's cooled steps, each point the Noam rate
    // times its share of the straight line (computed here from the formula), the bend drawn,
    // and the sentence quoting the engine's numbers.
    const cool = page.getByLabel('share of the steps that cool down at the end of the schedule');
    await cool.fill('0.25');
    await cool.press('Enter');
    await page.waitForFunction(() => document.querySelector('transformer-playground').schedule?.cooldown_steps > 0);
    s = await page.evaluate(`${el}.schedule`);
    const last = s.steps[s.steps.length - 1];
    assert.equal(last, 7500);
    assert.equal(s.cooldown_steps, 1875);
    const noam = (t) => Math.min(t ** -0.5, t * 1500 ** -1.5) / Math.sqrt(info.d_model);
    const share = (t) => (t <= last - 1875 ? 1 : (last - t + 1) / 1875);
    for (let k = 0; k < s.steps.length; k++) {
      const want = noam(s.steps[k]) * share(s.steps[k]);
      assert.ok(Math.abs(s.lr[k] - want) <= 1e-5 * want, `step ${s.steps[k]}: ${s.lr[k]} against ${want}`);
    }
    assert.ok(s.steps.includes(last - 1875 + 1), 'the bend is one of the points');
    assert.equal(s.peak_step, 1500);
    const sentence = page.locator('tp-schedule [data-cooldown]');
    await sentence.waitFor();
    const said = await sentence.innerText();
    assert.match(said, /last 1,875 of the 7,500 steps/);
    assert.ok(said.includes(s.lr[s.lr.length - 1].toPrecision(3)), said);
    assert.equal(await page.locator(`tp-schedule line.bend[data-bend="${last - 1875 + 1}"]`).count(), 1);
    await cool.fill('1.5');
    await cool.press('Enter');
    assert.equal(await cool.evaluate((i) => i.validity.valid), false);
    assert.equal((await page.evaluate(`${el}.schedule`)).cooldown_steps, 1875);
    await cool.fill('0');
    await cool.press('Enter');
    await page.waitForFunction(() => document.querySelector('transformer-playground').schedule?.cooldown_steps === 0);
    await page.locator('tp-schedule [data-cooldown]').waitFor({ state: 'detached' });
    await cool.fill('0.25');
    await cool.press('Enter');
    await page.waitForFunction(() => document.querySelector('transformer-playground').schedule?.cooldown_steps > 0);
    await page.locator('tp-schedule').scrollIntoViewIfNeeded();
    await shotOf(page, 'transformer-playground >> tp-schedule', 'view-schedule');
    assert.deepEqual(errors, []);
    await page.close();
  });
});
