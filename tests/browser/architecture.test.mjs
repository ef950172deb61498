// The architecture diagram in headless Chromium: its blocks are the core's layer plan
// (`Engine::layer_plan`) of the loaded model, for a pre-LN decoder, a pre-LN encoder and a
// post-LN encoder-decoder. Screenshots land in artifacts/.

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

const el = 'document.querySelector("transformer-playground")';

/** The diagram's blocks as drawn, bottom to top per stack: "stack kind part layer". */
function drawnBlocks(page) {
  return page
    .locator('tp-architecture g.blk')
    .evaluateAll((gs) => gs.map((g) => [g.dataset.stack, g.dataset.kind, g.dataset.part, g.dataset.layer ?? '-'].join(' ')));
}

/** The blocks the plan describes, in the same order and spelling. */
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
      }
    }
    if (st.final_norm) out.push(`${st.name} norm final_norm -`);
    if (si === plan.stacks.length - 1) out.push(`${st.name} head head -`);
  });
  return out;
}

async function loaded(model) {
  const { page, errors } = await open(browser.context, server.url, `play=0&model=${model}`);
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
    // Pre-LN: the first layer reads norm1, then self-attention.
    assert.deepEqual(drawn.slice(2, 4), ['decoder norm norm1 0', 'decoder attn self_attention 0']);
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
    // Post-LN: self-attention, then its norm1; cross-attention, then norm2.
    assert.deepEqual(dec.slice(2, 6), ['decoder attn self_attention 0', 'decoder norm norm1 0', 'decoder attn cross_attention 0', 'decoder norm norm2 0']);
    // The encoder output feeds one curve per cross-attention block.
    const curves = await page.locator('tp-architecture path.flow').count();
    assert.equal(curves, info.decoder_layers);
    await page.locator('tp-architecture').screenshot({ path: join(artifacts, 'architecture-post-ln-encoder-decoder.png') });
    assert.deepEqual(errors, []);
    await page.close();
  });
});
