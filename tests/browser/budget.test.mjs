// The size budget: what a first visit downloads before the playground is live (the HTML,
// the scripts, styles, the wasm inference engine and the default model, as gzip -9 would
// send them) must stay within BUDGET_BYTES. The whole engine (the trainer and the side
// studies) is not part of it. `cargo xtask bench` prints the same measurement by kind.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, serve } from './harness.mjs';
import { BUDGET_BYTES, describeFirstLoad, measureFirstLoad } from './firstload.mjs';

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

test('the_first_load_with_the_default_model_and_the_inference_engine_stays_within_the_budget_gzip', async () => {
  const m = await measureFirstLoad(browser.context, server.url);
  console.log(describeFirstLoad(m));
  // The measurement saw the whole first load: the page, its script, the engine and a model.
  for (const kind of ['html', 'js', 'wasm', 'model']) assert.ok(m.kinds[kind]?.gzip > 0, `the first load includes ${kind}`);
  const manifest = await (await fetch(new URL('models/manifest.json', server.url))).json();
  const models = m.files.filter((f) => f.kind === 'model').map((f) => f.url.split('/').pop());
  assert.deepEqual(models, [manifest[0].file], 'only the default model is fetched before the page is live');
  const wasm = m.files.filter((f) => f.kind === 'wasm').map((f) => new URL(f.url).pathname.split('/').pop());
  assert.equal(wasm.length, 1, `one wasm module before the page is live: ${wasm.join(', ')}`);
  assert.match(wasm[0], /^tplay_infer_bg\b/, 'the first load carries the inference engine, not the whole one');
  assert.ok(m.total.gzip <= BUDGET_BYTES, `first load ${m.total.gzip} bytes gzip exceeds the budget of ${BUDGET_BYTES}`);
});
