// The architecture diagram in headless Chromium: its blocks, add nodes and residual arrows
// are the core's layer plan (`Engine::layer_plan`) of the loaded model — a pre-LN decoder, a
// pre-LN encoder, a post-LN encoder-decoder and the reverse model's post-LN, BatchNorm and
// no-residual siblings — and its opened blocks show the numbers the model computed: the
// FFN's W₁ → activation → W₂ is recomputed here from the checkpoint's own weights (read
// from the .safetensors file), a norm's μ and σ² from the input it shows, BatchNorm's
// running statistics straight from the file, and what a norm or FFN produced against the
// residual-stream norms of the forward pass's trace. Screenshots land in artifacts/.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { artifacts, launch, open, root, serve } from './harness.mjs';

/** The F32 tensors of a shipped checkpoint, parsed here from its safetensors bytes. */
function weights(file) {
  const buf = readFileSync(join(root, 'models', file));
  const n = Number(buf.readBigUInt64LE(0));
  const header = JSON.parse(buf.subarray(8, 8 + n).toString('utf8'));
  const out = {};
  for (const [name, t] of Object.entries(header)) {
    if (name === '__metadata__' || t.dtype !== 'F32') continue;
    const [a, b] = t.data_offsets;
    const bytes = buf.subarray(8 + n + a, 8 + n + b);
    out[name] = { shape: t.shape, data: new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length)) };
  }
  return out;
}

/** (T, X)·Wᵀ + b for W (Y, X): (T, Y), in f64. */
function linear(x, T, X, w, b) {
  const Y = b.length;
  const y = new Float64Array(T * Y);
  for (let t = 0; t < T; t++)
    for (let o = 0; o < Y; o++) {
      let acc = b[o];
      for (let k = 0; k < X; k++) acc += x[t * X + k] * w[o * X + k];
      y[t * Y + o] = acc;
    }
  return y;
}

/** LayerNorm of each row of (T, C) with γ, β (eps 1e-5), in f64; and each row's μ, σ². */
function layerNorm(x, T, C, g, b) {
  const y = new Float64Array(T * C);
  const mean = [];
  const vars = [];
  for (let t = 0; t < T; t++) {
    let mu = 0;
    for (let k = 0; k < C; k++) mu += x[t * C + k];
    mu /= C;
    let v = 0;
    for (let k = 0; k < C; k++) v += (x[t * C + k] - mu) ** 2;
    v /= C;
    mean.push(mu);
    vars.push(v);
    for (let k = 0; k < C; k++) y[t * C + k] = ((x[t * C + k] - mu) / Math.sqrt(v + 1e-5)) * g[k] + b[k];
  }
  return { y, mean, vars };
}

function rowNorms(x, T, C) {
  return Array.from({ length: T }, (_, t) => Math.hypot(...Array.from(x.subarray ? x.subarray(t * C, (t + 1) * C) : x.slice(t * C, (t + 1) * C))));
}

function maxAbsDiff(a, b) {
  assert.equal(a.length, b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

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

/** The diagram's blocks as drawn, bottom to top per stack: "stack kind part layer". */
function drawnBlocks(page) {
  return page
    .locator('tp-architecture g.blk')
    .evaluateAll((gs) => gs.map((g) => [g.dataset.stack, g.dataset.kind, g.dataset.part, g.dataset.layer ?? '-'].join(' ')));
}

/**
 * The blocks the plan describes, in the same order and spelling: per sublayer its norm
 * before it (pre-LN) or after it (post-LN, BatchNorm: the Add & Norm box), and an add node
 * where the residual joins without a norm box.
 */
function planBlocks(plan) {
  const out = [];
  plan.stacks.forEach((st, si) => {
    out.push(`${st.name} io io -`, `${st.name} embed embed -`);
    for (let l = 0; l < st.layers; l++) {
      for (const sub of st.sublayers) {
        const norm = sub.norm ? `${st.name} norm ${sub.norm.name} ${l}` : null;
        if (norm && sub.norm.placement === 'before') out.push(norm);
        out.push(`${st.name} ${sub.kind === 'ffn' ? 'ffn' : 'attn'} ${sub.kind} ${l}`);
        if (norm && sub.norm.placement === 'after') out.push(norm);
        else if (sub.residual) out.push(`${st.name} add add ${l}`);
      }
    }
    if (st.final_norm) out.push(`${st.name} norm final_norm -`);
    if (si === plan.stacks.length - 1) out.push(`${st.name} head head -`);
  });
  return out;
}

/** Every block's label, kind, sublayer and box (SVG units), and every residual arrow. */
function geometry(page) {
  return page.evaluate(() => {
    const a = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-architecture').shadowRoot;
    const blocks = [...a.querySelectorAll('g.blk')].map((g) => {
      const r = g.getBBox();
      return { stack: g.dataset.stack, kind: g.dataset.kind, part: g.dataset.part, layer: g.dataset.layer ?? null, adds: g.dataset.adds === 'true', of: g.dataset.of ?? null, label: g.textContent.trim(), aria: g.getAttribute('aria-label'), top: r.y, bottom: r.y + r.height, left: r.x, right: r.x + r.width };
    });
    const residuals = [...a.querySelectorAll('path.residual')].map((p) => ({ stack: p.dataset.stack, layer: p.dataset.layer, part: p.dataset.part, y1: Number(p.dataset.y1), y2: Number(p.dataset.y2), d: p.getAttribute('d') }));
    const memory = [...a.querySelectorAll('path.memory')].map((p) => ({ layer: p.dataset.layer, d: p.getAttribute('d') }));
    return { blocks, residuals, memory };
  });
}

/**
 * The residual arrows against the plan: one per sublayer whose plan says `residual`, none
 * otherwise; each leaves below the sublayer (below its norm for pre-LN), passes the
 * sublayer and rejoins at its add — the Add & Norm box of a post-LN / BatchNorm model, an
 * add node otherwise. Add & Norm boxes say "Add &" exactly where a residual joins them.
 */
function checkResiduals(plan, g) {
  let want = 0;
  for (const st of plan.stacks) {
    for (let l = 0; l < st.layers; l++) {
      for (const sub of st.sublayers) {
        const of = (b) => b.stack === st.name && b.layer === String(l);
        const box = g.blocks.find((b) => of(b) && b.part === sub.kind);
        assert.ok(box, `${st.name} ${sub.kind} ${l} is drawn`);
        const norm = sub.norm ? g.blocks.find((b) => of(b) && b.part === sub.norm.name) : null;
        const arrows = g.residuals.filter((r) => r.stack === st.name && r.layer === String(l) && r.part === sub.kind);
        if (norm) {
          assert.equal(norm.label.includes('Add & '), sub.residual && sub.norm.placement === 'after', norm.label);
          assert.ok(norm.label.includes(sub.norm.kind === 'batch_norm' ? 'BatchNorm' : 'LayerNorm'), norm.label);
          // Pre-LN: the norm sits below (before) its sublayer; post-LN above (after).
          if (sub.norm.placement === 'before') assert.ok(norm.top > box.bottom, `${norm.label} below ${box.label}`);
          else assert.ok(norm.bottom < box.top, `${norm.label} above ${box.label}`);
        }
        if (!sub.residual) {
          assert.equal(arrows.length, 0, `${st.name} ${sub.kind} ${l}: no residual`);
          assert.ok(box.label.includes('no residual'), box.label);
          continue;
        }
        want++;
        assert.equal(arrows.length, 1, `${st.name} ${sub.kind} ${l}: one residual arrow`);
        const r = arrows[0];
        const start = norm && sub.norm.placement === 'before' ? norm : box;
        assert.ok(r.y1 > start.bottom, `the residual of ${box.label} leaves below its input side`);
        assert.ok(r.y2 < box.top, `the residual of ${box.label} rejoins above it`);
        const add = norm && sub.norm.placement === 'after' ? norm : g.blocks.find((b) => of(b) && b.kind === 'add' && b.of === sub.kind);
        assert.ok(add, `${box.label}: where its residual is added`);
        assert.ok(add.top <= r.y2 && r.y2 <= add.bottom, `${box.label}: the arrow ends at ${add.aria}`);
        if (norm && sub.norm.placement === 'after') assert.ok(add.adds);
      }
    }
  }
  assert.equal(g.residuals.length, want);
  assert.equal(g.blocks.filter((b) => b.kind === 'add').length, plan.stacks.reduce((a, st) => a + st.layers * st.sublayers.filter((s) => s.residual && s.norm?.placement !== 'after').length, 0));
}

async function loaded(model) {
  const { page, errors } = await open(browser.context, server.url, `chapter=all&play=0&model=${model}`);
  await page.waitForFunction((m) => {
    const p = document.querySelector('transformer-playground');
    return p.plan !== null && p.info !== null && p.st?.model === m;
  }, model);
  await page.waitForFunction(() => {
    const a = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-architecture');
    return a && a.shadowRoot.querySelectorAll('g.blk').length > 0;
  });
  const info = await page.evaluate(`${el}.info`);
  const plan = await page.evaluate(`${el}.plan`);
  return { page, errors, info, plan };
}

describe('the architecture diagram', () => {
  test('a_pre_ln_decoder_draws_each_norm_before_its_sublayer_as_its_plan_says', async () => {
    const { page, errors, info, plan } = await loaded('grammar-sinusoidal.safetensors');
    assert.equal(info.arch, 'decoder_only');
    assert.equal(info.norm, 'pre_ln');
    assert.equal(plan.stacks.length, 1);
    const st = plan.stacks[0];
    assert.equal(st.layers, info.decoder_layers);
    assert.deepEqual(
      st.sublayers.map((s) => [s.kind, s.norm.name, s.norm.placement, s.residual]),
      [
        ['self_attention', 'norm1', 'before', true],
        ['ffn', 'norm2', 'before', true],
      ],
    );
    const drawn = await drawnBlocks(page);
    assert.deepEqual(drawn, planBlocks(plan));
    // Pre-LN: the first layer reads norm1, then self-attention, then adds the residual.
    assert.deepEqual(drawn.slice(2, 5), ['decoder norm norm1 0', 'decoder attn self_attention 0', 'decoder add add 0']);
    const g = await geometry(page);
    checkResiduals(plan, g);
    // A decoder's self-attention runs under the causal mask, and says so.
    const sa = g.blocks.filter((b) => b.part === 'self_attention');
    assert.ok(sa.length === info.decoder_layers && sa.every((b) => b.label.includes('masked self-attention')), sa.map((b) => b.label).join(' | '));
    assert.ok(g.blocks.some((b) => b.part === 'final_norm' && b.label.includes('final LayerNorm')));
    await page.locator('tp-architecture').screenshot({ path: join(artifacts, 'architecture-pre-ln.png') });
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('a_pre_ln_classifier_draws_one_encoder_and_its_classifier', async () => {
    const { page, errors, info, plan } = await loaded('sentiment.safetensors');
    assert.equal(info.arch, 'encoder_only');
    assert.equal(plan.head, 'classifier');
    assert.equal(plan.stacks[0].layers, info.encoder_layers);
    const drawn = await drawnBlocks(page);
    assert.deepEqual(drawn, planBlocks(plan));
    assert.equal(drawn.filter((b) => b.includes(' attn ')).length, info.encoder_layers);
    const g = await geometry(page);
    checkResiduals(plan, g);
    // An encoder reads both ways: its self-attention is not masked.
    const sa = g.blocks.filter((b) => b.part === 'self_attention');
    assert.ok(sa.every((b) => b.label.includes('self-attention') && !b.label.includes('masked')), sa.map((b) => b.label).join(' | '));
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('a_post_ln_encoder_decoder_draws_norms_after_their_sublayers_and_cross_attention', async () => {
    const { page, errors, info, plan } = await loaded('translate.safetensors');
    assert.equal(info.arch, 'encoder_decoder');
    assert.equal(info.norm, 'post_ln');
    assert.deepEqual(
      plan.stacks.map((s) => [s.name, s.input, s.reads_memory, s.layers]),
      [
        ['encoder', 'source', false, info.encoder_layers],
        ['decoder', 'tokens', true, info.decoder_layers],
      ],
    );
    assert.deepEqual(
      plan.stacks[1].sublayers.map((s) => [s.kind, s.site, s.norm.name, s.norm.placement]),
      [
        ['self_attention', 'decoder_self', 'norm1', 'after'],
        ['cross_attention', 'cross', 'norm2', 'after'],
        ['ffn', null, 'norm3', 'after'],
      ],
    );
    const drawn = await drawnBlocks(page);
    assert.deepEqual(drawn, planBlocks(plan));
    const dec = drawn.filter((b) => b.startsWith('decoder '));
    // Post-LN: self-attention, then its Add & norm1; cross-attention, then Add & norm2.
    assert.deepEqual(dec.slice(2, 6), ['decoder attn self_attention 0', 'decoder norm norm1 0', 'decoder attn cross_attention 0', 'decoder norm norm2 0']);
    const g = await geometry(page);
    checkResiduals(plan, g);
    const label = (stack, part, l) => g.blocks.find((b) => b.stack === stack && b.part === part && b.layer === String(l)).label;
    assert.equal(label('decoder', 'norm1', 0), 'L1 Add & LayerNorm (norm1)');
    assert.ok(label('decoder', 'self_attention', 0).includes('masked self-attention'));
    assert.ok(!label('encoder', 'self_attention', 0).includes('masked'));
    assert.ok(label('decoder', 'cross_attention', 0).includes('cross-attention'));
    // The encoder's output feeds one arrow per cross-attention block: from the top of the
    // encoder column to that block's left edge.
    assert.equal(g.memory.length, info.decoder_layers);
    const encTop = g.blocks.filter((b) => b.stack === 'encoder').reduce((a, b) => (b.top < a.top ? b : a));
    for (const m of g.memory) {
      const cross = g.blocks.find((b) => b.stack === 'decoder' && b.part === 'cross_attention' && b.layer === m.layer);
      const nums = m.d.match(/-?[\d.]+/g).map(Number);
      const [x1, y1] = nums.slice(0, 2);
      const [x2, y2] = nums.slice(-2);
      assert.ok(Math.abs(x1 - encTop.right) < 1 && y1 > encTop.top && y1 < encTop.bottom, `memory leaves the encoder's output (${m.d})`);
      assert.ok(Math.abs(x2 - cross.left) < 4 && y2 > cross.top && y2 < cross.bottom, `memory reaches cross-attention L${Number(m.layer) + 1}`);
    }
    await page.locator('tp-architecture').screenshot({ path: join(artifacts, 'architecture-post-ln-encoder-decoder.png') });
    assert.deepEqual(errors, []);
    await page.close();
  });

  for (const [file, norm, residual] of [
    ['reverse-post-ln.safetensors', 'post_ln', true],
    ['reverse-batch-norm.safetensors', 'batch_norm', true],
    ['reverse-no-residual.safetensors', 'pre_ln', false],
  ]) {
    test(`the_${norm}${residual ? '' : '_no_residual'}_sibling_draws_its_norms_adds_and_residuals_as_its_plan_says`, async () => {
      const { page, errors, info, plan } = await loaded(file);
      assert.equal(info.norm, norm);
      assert.ok(plan.stacks[0].sublayers.every((s) => s.residual === residual));
      const drawn = await drawnBlocks(page);
      assert.deepEqual(drawn, planBlocks(plan));
      const g = await geometry(page);
      checkResiduals(plan, g);
      const n1 = g.blocks.find((b) => b.part === 'norm1' && b.layer === '0');
      if (norm === 'batch_norm') assert.equal(n1.label, 'L1 Add & BatchNorm (norm1)');
      if (norm === 'post_ln') assert.equal(n1.label, 'L1 Add & LayerNorm (norm1)');
      if (!residual) {
        assert.equal(n1.label, 'L1 LayerNorm (norm1)');
        assert.equal(g.residuals.length, 0);
        assert.equal(g.blocks.filter((b) => b.kind === 'add').length, 0);
      }
      await page.locator('tp-architecture').screenshot({ path: join(artifacts, `architecture-${file.replace('.safetensors', '')}.png`) });
      assert.deepEqual(errors, []);
      await page.close();
    });
  }
});

/** Click a block of the diagram and wait for its opened numbers. */
async function openBlock(page, stack, part, layer, kind) {
  const sel = `tp-architecture g.blk[data-stack="${stack}"][data-part="${part}"]${layer === null ? '' : `[data-layer="${layer}"]`}`;
  await page.locator(sel).click();
  await page.locator(`tp-architecture div.open[data-open="${kind}"][data-stack="${stack}"]`).waitFor();
}

/** The numbers the opened panel draws: every tp-heat's data by its data-map, and the data-* of its cells. */
function panelNumbers(page) {
  return page.evaluate(() => {
    const a = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-architecture').shadowRoot;
    const o = a.querySelector('div.open');
    const maps = Object.fromEntries([...o.querySelectorAll('tp-heat')].map((h) => [h.dataset.map, { rows: h.rows, cols: h.cols, data: Array.from(h.data) }]));
    const zeros = [...o.querySelectorAll('td[data-zeros]')].map((td) => Number(td.dataset.zeros));
    const mean = [...o.querySelectorAll('td[data-stat="mean"]')].map((td) => Number(td.dataset.value));
    const vars = [...o.querySelectorAll('td[data-stat="var"]')].map((td) => Number(td.dataset.value));
    const feats = [...o.querySelectorAll('[data-feature]')].map((f) => [Number(f.dataset.mean), Number(f.dataset.var)]);
    return { maps, zeros, mean, vars, feats, row: Number(o.dataset.row) };
  });
}

/** The forward pass's residual-stream norms of one stack: (L + 1, B, T) as nested arrays. */
function streamNorms(page, stack) {
  return page.evaluate((stack) => {
    const f = document.querySelector('transformer-playground').lastForward;
    const h = f.hidden.find((x) => x.stack === stack).norms;
    const [L1, B, T] = h.shape;
    return Array.from({ length: L1 }, (_, l) => Array.from({ length: B }, (_, b) => Array.from(h.data.subarray((l * B + b) * T, (l * B + b + 1) * T))));
  }, stack);
}

describe('opened blocks show the live tensors', () => {
  test('a_relu_ffn_block_opens_into_w1_relu_w2_recomputed_from_the_checkpoint_weights_with_its_zeros_counted', async () => {
    const { page, errors, info } = await loaded('translate.safetensors');
    assert.equal(info.activation, 'relu');
    const w = weights('translate.safetensors');
    for (const layer of [0, info.decoder_layers - 1]) {
      await openBlock(page, 'decoder', 'ffn', layer, 'ffn');
      await page.waitForFunction((l) => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-architecture').shadowRoot.querySelector(`div.open[data-open="ffn"][data-layer="${l}"]`), layer);
      const p = await panelNumbers(page);
      const x = p.maps['ffn-input'];
      const T = x.rows;
      const C = x.cols;
      const F = p.maps['ffn-pre'].cols;
      assert.equal(C, info.d_model);
      assert.equal(F, info.d_ff);
      const k = `decoder.layers.${layer}`;
      const pre = linear(x.data, T, C, w[`${k}.linear1.weight`].data, w[`${k}.linear1.bias`].data);
      assert.ok(maxAbsDiff(pre, p.maps['ffn-pre'].data) < 1e-4, 'W₁x + b₁ from the file');
      // ReLU, bit-exact on the drawn pre-activations; the zeros counted per position.
      const hidden = p.maps['ffn-hidden'].data;
      assert.deepEqual(hidden, p.maps['ffn-pre'].data.map((v) => Math.max(0, v)));
      const zeros = Array.from({ length: T }, (_, t) => hidden.slice(t * F, (t + 1) * F).filter((v) => v === 0).length);
      assert.deepEqual(p.zeros, zeros);
      assert.ok(zeros.some((z) => z > 0), 'ReLU zeroes some units');
      const out = linear(hidden, T, F, w[`${k}.linear2.weight`].data, w[`${k}.linear2.bias`].data);
      assert.ok(maxAbsDiff(out, p.maps['ffn-output'].data) < 1e-4, 'W₂h + b₂ from the file');
      // Post-LN: the layer's output is norm3(x + FFN(x)); its size per position is what the
      // forward pass's residual-stream trace reports after this layer.
      const sum = x.data.map((v, i) => v + p.maps['ffn-output'].data[i]);
      const { y } = layerNorm(sum, T, C, w[`${k}.norm3.weight`].data, w[`${k}.norm3.bias`].data);
      const norms = await streamNorms(page, 'decoder_self');
      assert.ok(maxAbsDiff(rowNorms(y, T, C), norms[layer + 1][p.row]) < 1e-3, 'norm3(x + FFN(x)) is the layer output the trace measured');
    }
    await page.locator('tp-architecture').screenshot({ path: join(artifacts, 'architecture-ffn-open.png') });
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('a_layernorm_block_opens_into_the_mean_and_variance_each_position_removed', async () => {
    // Post-LN encoder: norm2 of layer 1 is the layer's output (the trace measures it).
    let { page, errors, info } = await loaded('translate.safetensors');
    let w = weights('translate.safetensors');
    await openBlock(page, 'encoder', 'norm2', 0, 'norm');
    let p = await panelNumbers(page);
    let x = p.maps['norm-input'];
    let { y, mean, vars } = layerNorm(x.data, x.rows, x.cols, w['encoder.layers.0.norm2.weight'].data, w['encoder.layers.0.norm2.bias'].data);
    assert.equal(p.mean.length, x.rows);
    assert.ok(maxAbsDiff(mean, p.mean) < 1e-5, 'μ of each position, from the input drawn');
    assert.ok(maxAbsDiff(vars, p.vars) < 1e-4, 'σ² of each position, from the input drawn');
    let norms = await streamNorms(page, 'encoder_self');
    assert.ok(maxAbsDiff(rowNorms(y, x.rows, x.cols), norms[1][p.row]) < 1e-3, 'what it normalised is what the layer put out');
    await page.locator('tp-architecture').screenshot({ path: join(artifacts, 'architecture-norm-open.png') });
    assert.deepEqual(errors, []);
    await page.close();
    // Pre-LN decoder: layer 1's norm1 reads the residual stream before the first layer.
    ({ page, errors, info } = await loaded('grammar-sinusoidal.safetensors'));
    w = weights('grammar-sinusoidal.safetensors');
    await openBlock(page, 'decoder', 'norm1', 0, 'norm');
    p = await panelNumbers(page);
    x = p.maps['norm-input'];
    ({ mean, vars } = layerNorm(x.data, x.rows, x.cols, w['decoder.layers.0.norm1.weight'].data, w['decoder.layers.0.norm1.bias'].data));
    assert.ok(maxAbsDiff(mean, p.mean) < 1e-5 && maxAbsDiff(vars, p.vars) < 1e-4);
    norms = await streamNorms(page, 'decoder_self');
    assert.ok(maxAbsDiff(rowNorms(x.data, x.rows, x.cols), norms[0][p.row]) < 1e-4, 'pre-LN norm1 reads the embedding stream');
    // The final norm opens too.
    await openBlock(page, 'decoder', 'final_norm', null, 'norm');
    p = await panelNumbers(page);
    assert.equal(p.mean.length, p.maps['norm-input'].rows);
    norms = await streamNorms(page, 'decoder_self');
    assert.ok(maxAbsDiff(rowNorms(p.maps['norm-input'].data, p.maps['norm-input'].rows, info.d_model), norms[info.decoder_layers][p.row]) < 1e-4, 'the final norm reads the last layer');
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('a_batchnorm_block_in_eval_mode_opens_into_the_running_statistics_stored_in_its_checkpoint', async () => {
    const { page, errors, info } = await loaded('reverse-batch-norm.safetensors');
    const w = weights('reverse-batch-norm.safetensors');
    await openBlock(page, 'decoder', 'norm2', 1, 'norm');
    const p = await panelNumbers(page);
    assert.equal(p.feats.length, info.d_model);
    const f32 = (a) => Array.from(Float32Array.from(a));
    assert.deepEqual(f32(p.feats.map((f) => f[0])), Array.from(w['decoder.layers.1.norm2.running_mean'].data));
    assert.deepEqual(f32(p.feats.map((f) => f[1])), Array.from(w['decoder.layers.1.norm2.running_var'].data));
    assert.equal(await page.locator('tp-architecture div.open').getAttribute('data-per'), 'feature');
    await page.locator('tp-architecture').screenshot({ path: join(artifacts, 'architecture-batchnorm-open.png') });
    assert.deepEqual(errors, []);
    await page.close();
  });
});
