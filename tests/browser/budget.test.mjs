// The size budget: what a first visit downloads before the playground is live (the HTML,
// the scripts, styles, the wasm inference engine and the default model, as gzip -9 would
// send them) must stay within its budget: BUDGET_BYTES where the browser offers no WebGPU
// adapter (the engine without its GPU backend), BUDGET_GPU_BYTES where it offers one. The
// whole engine (the trainer and the side studies) is part of neither. `cargo xtask bench`
// prints the same measurements by kind.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, serve } from './harness.mjs';
import { BUDGET_BYTES, BUDGET_GPU_BYTES, describeFirstLoad, measureFirstLoad } from './firstload.mjs';

let server;
before(async () => {
  server = await serve();
});
after(async () => {
  await server?.close();
});

/** The first load in a browser with or without WebGPU: its checks, then its total. */
async function firstLoad(webgpu, module) {
  const browser = await launch({ webgpu });
  try {
    const m = await measureFirstLoad(browser.context, server.url);
    console.log(describeFirstLoad(m));
    // The measurement saw the whole first load: the page, its script, the engine and a model.
    for (const kind of ['html', 'js', 'wasm', 'model']) assert.ok(m.kinds[kind]?.gzip > 0, `the first load includes ${kind}`);
    const manifest = await (await fetch(new URL('models/manifest.json', server.url))).json();
    const models = m.files.filter((f) => f.kind === 'model').map((f) => f.url.split('/').pop());
    assert.deepEqual(models, [manifest[0].file], 'only the default model is fetched before the page is live');
    const wasm = m.files.filter((f) => f.kind === 'wasm').map((f) => new URL(f.url).pathname.split('/').pop());
    assert.equal(wasm.length, 1, `one wasm module before the page is live: ${wasm.join(', ')}`);
    assert.match(wasm[0], module, 'the first load carries the inference engine, not the whole one');
    return m.total.gzip;
  } finally {
    await browser.close();
  }
}

test('the_first_load_without_a_webgpu_adapter_carries_the_engine_without_its_gpu_backend_within_the_budget_gzip', async () => {
  const total = await firstLoad(false, /^tplay_infer_bg\b/);
  assert.ok(total <= BUDGET_BYTES, `first load ${total} bytes gzip exceeds the budget of ${BUDGET_BYTES}`);
});

test('the_first_load_with_a_webgpu_adapter_carries_the_engine_with_its_gpu_backend_within_its_budget_gzip', async () => {
  const total = await firstLoad(true, /^tplay_infer_gpu_bg\b/);
  assert.ok(total <= BUDGET_GPU_BYTES, `first load ${total} bytes gzip exceeds the budget of ${BUDGET_GPU_BYTES}`);
});
