// "Load a model" in the browser, on the Hugging Face GPT-2 fixtures of tests/fixtures/gpt2
// (small random models made by `transformers`, with the library's greedy generations): a
// folder dropped on the page and a folder at an address (served beside the page) load, show
// their heads, and generate exactly the library's greedy ids; both are kept in IndexedDB
// and load again after a reload. Hostile folders — a truncated model.safetensors, a config
// that asks for 10⁹ parameters (refused by the engine's check before the model is fetched),
// one too large for this device's memory, a missing tokenizer, a file that is no model —
// each get one clear sentence, and the page keeps its model and its kept list. One browser
// and one page for every case.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ENGLISH_ALLOWED, dist, englishLeft, launch, open, root, serve, shot } from './harness.mjs';

const FIX = join(root, 'tests/fixtures/gpt2');
const require = createRequire(join(root, 'www/package.json'));
const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const expected = (name) => JSON.parse(readFileSync(join(FIX, name, 'expected.json'), 'utf8'));
const config = (name) => JSON.parse(readFileSync(join(FIX, name, 'config.json'), 'utf8'));

/** Hostile folders, made from prefix_tied. */
function makeHostile(dir) {
  const src = join(FIX, 'prefix_tied');
  const folder = (name, files) => {
    mkdirSync(join(dir, name));
    for (const [f, body] of Object.entries(files)) {
      if (body === true) copyFileSync(join(src, f), join(dir, name, f));
      else writeFileSync(join(dir, name, f), body);
    }
  };
  const model = readFileSync(join(src, 'model.safetensors'));
  const cfg = config('prefix_tied');
  // The header and half of the tensors' bytes.
  folder('truncated', { 'config.json': true, 'tokenizer.json': true, 'model.safetensors': model.subarray(0, Math.floor(model.length * 0.6)) });
  // 48 layers of d_model 1600 and 50,257 tokens: about 1.5 × 10⁹ parameters. A real-looking model file beside it.
  folder('huge', { 'config.json': JSON.stringify({ ...cfg, n_layer: 48, n_embd: 1600, n_head: 25, vocab_size: 50257, n_positions: 1024 }), 'tokenizer.json': true, 'model.safetensors': true });
  // GPT-2 small's shape (124 M parameters): within the engine's limits, more than a device that reports 1 GiB of memory can load.
  folder('toobig', { 'config.json': JSON.stringify({ ...cfg, n_layer: 12, n_embd: 768, n_head: 12, vocab_size: 50257, n_positions: 1024 }), 'tokenizer.json': true, 'model.safetensors': true });
  folder('notok', { 'config.json': true, 'model.safetensors': true });
}

let server;
let browser;
let page;
let errors;
let tmp;

before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'tplay-hf-'));
  makeHostile(tmp);
  // Under the page's own Content-Security-Policy: the dialog, its chunk and its fetches break no rule of it.
  server = await serve(undefined, { csp: true, mounts: { '/gpt2/': FIX, '/bad/': tmp } });
  // No service worker: every request reaches the server, which counts them.
  browser = await launch({ serviceWorkers: 'block' });
  ({ page, errors } = await open(browser.context, server.url, 'play=0&speed=0&views=controls,attention,generation'));
  // Nothing kept from an earlier run of this test in this profile.
  await page.evaluate(async () => {
    const el = document.querySelector('transformer-playground');
    for (const m of await el.keptModels()) await el.deleteKeptModel(m.id);
  });
});
after(async () => {
  await browser?.close();
  await server?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

/** The dialog's shadow root, as a selector prefix for page.locator (pierces shadow roots). */
const D = 'tp-load-dialog';

/** Drop files (fetched from the server by path) on the attention view, as a reader drags them from a folder. */
async function drop(paths) {
  await page.evaluate(async (paths) => {
    const dt = new DataTransfer();
    for (const p of paths) {
      const bytes = await (await fetch(p)).arrayBuffer();
      dt.items.add(new File([bytes], p.split('/').pop()));
    }
    const el = document.querySelector('transformer-playground');
    const target = el.shadowRoot.querySelector('tp-attention');
    target.dispatchEvent(new DragEvent('dragover', { dataTransfer: dt, bubbles: true, cancelable: true, composed: true }));
    target.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true, composed: true }));
  }, paths);
}

/** Wait until the dialog is open and idle, with something said; what it says (`said`) or the error shown (`error`). */
async function outcome() {
  await page.waitForFunction(
    () => {
      const d = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-load-dialog');
      const r = d?.shadowRoot;
      if (!r?.querySelector('dialog[open]') || r.querySelector('[data-load-busy]')) return false;
      return !!(r.querySelector('[data-load-error]') || r.querySelector('[data-load-said]')?.textContent.trim() || r.querySelector('[data-load-probe]'));
    },
    null,
    { timeout: 60000 },
  );
  return page.evaluate(() => {
    const r = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-load-dialog').shadowRoot;
    return { said: r.querySelector('[data-load-said]')?.textContent.trim() ?? '', error: r.querySelector('[data-load-error]')?.textContent.trim() ?? '' };
  });
}

/** The page's model now: its label, its shape, and its head grid as drawn. */
function modelNow() {
  return page.evaluate(async () => {
    const el = document.querySelector('transformer-playground');
    await el.updateComplete;
    const att = el.shadowRoot.querySelector('tp-attention');
    await att?.updateComplete;
    const i = el.info;
    return {
      label: el.customModel,
      layers: i.decoder_layers,
      heads: i.n_heads,
      d_model: i.d_model,
      vocab: i.vocab.length,
      params: i.params,
      thumbs: att?.shadowRoot?.querySelectorAll('canvas.t').length ?? 0,
      error: el.error,
    };
  });
}

/** Greedy generation from `text`, `n` new tokens: the model's prompt ids and the ids it wrote. */
function greedy(text, n) {
  return page.evaluate(
    async ({ text, n }) => {
      const el = document.querySelector('transformer-playground');
      await el.store.patch({ text, max: n, strategy: 'greedy' });
      await el.store.gen.start(true);
      const t0 = performance.now();
      while (!el.done && el.generated.length < n && performance.now() - t0 < 30000) await new Promise((ok) => setTimeout(ok, 20));
      el.store.gen.pause?.();
      return { prompt: [...(el.store.input?.prompt ?? [])], ids: [...el.generated].slice(0, n) };
    },
    { text, n },
  );
}

/** Check the library's greedy generations (expected.json) on the model loaded now. */
async function sameAsTransformers(name) {
  const e = expected(name);
  // The fixtures' prompts: <|endoftext|> and "The cat", <|endoftext|> and "猫".
  for (const [g, text] of [
    [e.generate[0], 'The cat'],
    [e.generate[1], '猫'],
  ]) {
    const n = g.output.length - g.prompt.length;
    const got = await greedy(text, n);
    assert.deepEqual(got.prompt, g.prompt, `${name}: the prompt "${text}" reads as the library's ids`);
    assert.deepEqual(got.ids, g.output.slice(g.prompt.length), `${name}: greedy ids from "${text}" equal transformers' generate`);
  }
}

function closeDialog() {
  return page.evaluate(() => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-load-dialog')?.close());
}

test('a folder dropped on the page loads: its heads are drawn and greedy generation equals transformers', async () => {
  const t0 = Date.now();
  await drop(['/gpt2/prefix_tied/config.json', '/gpt2/prefix_tied/model.safetensors', '/gpt2/prefix_tied/tokenizer.json', '/gpt2/prefix_tied/expected.json']);
  const r = await outcome();
  assert.equal(r.error, '', 'no error');
  assert.match(r.said, /Loaded gpt2/);
  assert.match(r.said, /Kept in this browser/);
  const c = config('prefix_tied');
  const m = await modelNow();
  console.log(`prefix_tied by drop: ${Date.now() - t0} ms to loaded, ${m.params} parameters`);
  assert.deepEqual([m.layers, m.heads, m.d_model, m.vocab], [c.n_layer, c.n_head, c.n_embd, c.vocab_size]);
  assert.equal(m.label, 'gpt2');
  assert.equal(m.thumbs, c.n_layer * c.n_head, 'the head grid shows every head of every layer');
  await closeDialog();
  await sameAsTransformers('prefix_tied');
});

test('a folder at an address: its size is shown before the download, then it loads with vocab.json + merges.txt', async () => {
  const before = server.requests.length;
  await page.evaluate(() => document.querySelector('transformer-playground').shadowRoot.querySelector('[data-load-open]').click());
  await page.locator(`${D} [data-load-url]`).fill(`${server.url}gpt2/bare_tied/`);
  await page.locator(`${D} [data-load-check]`).click();
  await outcome();
  const size = await page.locator(`${D} [data-load-size]`).getAttribute('data-load-size');
  assert.equal(Number(size), readFileSync(join(FIX, 'bare_tied/model.safetensors')).length, 'the size shown is model.safetensors’ own');
  const asked = server.requests.slice(before);
  assert.ok(asked.includes('HEAD /gpt2/bare_tied/model.safetensors'), asked.join(', '));
  assert.ok(!asked.includes('GET /gpt2/bare_tied/model.safetensors'), 'not downloaded before the reader asks');
  assert.ok(asked.indexOf('GET /gpt2/bare_tied/config.json') < asked.indexOf('HEAD /gpt2/bare_tied/model.safetensors'), 'config.json first');
  await shot(page, 'load-model-probe');
  const t0 = Date.now();
  await page.locator(`${D} [data-load-download]`).click();
  const r = await outcome();
  assert.equal(r.error, '');
  assert.match(r.said, /Loaded bare_tied/);
  console.log(`bare_tied by address: ${Date.now() - t0} ms from Download to loaded`);
  assert.ok(server.requests.slice(before).includes('GET /gpt2/bare_tied/model.safetensors'));
  const c = config('bare_tied');
  const m = await modelNow();
  assert.deepEqual([m.layers, m.heads, m.vocab, m.thumbs], [c.n_layer, c.n_head, c.vocab_size, c.n_layer * c.n_head]);
  await closeDialog();
  await sameAsTransformers('bare_tied');
});

test('the untied and the kept-head folders load by the scripting API and generate as transformers does', async () => {
  for (const name of ['prefix_untied', 'prefix_tied_head_kept']) {
    const t0 = Date.now();
    const info = await page.evaluate((base) => document.querySelector('transformer-playground').loadModel({ url: base }, { keep: false }), `${server.url}gpt2/${name}/`);
    console.log(`${name} by loadModel({url}): ${Date.now() - t0} ms`);
    assert.equal(info.n_heads, config(name).n_head);
    await sameAsTransformers(name);
  }
});

test('the picker takes a whole folder (its name is the label) and one of the page’s own checkpoints', async () => {
  await page.evaluate(() => document.querySelector('transformer-playground').openModelLoader());
  await page.locator(`${D} [data-load-folder]`).setInputFiles(join(FIX, 'prefix_untied'));
  let r = await outcome();
  assert.equal(r.error, '');
  assert.equal((await modelNow()).label, 'prefix_untied', 'the folder’s name, from the picked paths');
  const reverse = join(dist, 'models/reverse.safetensors');
  await page.locator(`${D} [data-load-files]`).setInputFiles(reverse);
  r = await outcome();
  assert.equal(r.error, '');
  const m = await modelNow();
  assert.equal(m.label, 'reverse.safetensors');
  const shipped = await page.evaluate(() => document.querySelector('transformer-playground').manifest.find((e) => e.file === 'reverse.safetensors'));
  assert.ok(shipped, 'reverse.safetensors is a shipped model');
  assert.ok(m.vocab < 100, 'a character-level toy, not the GPT-2 folder');
  await closeDialog();
});

/** What must not change when a load is refused: the model, its label, the kept list. */
async function unchanged() {
  return page.evaluate(async () => {
    const el = document.querySelector('transformer-playground');
    return { label: el.customModel, params: el.info.params, vocab: el.info.vocab.length, kept: (await el.keptModels()).map((m) => m.label).sort() };
  });
}

test('hostile folders are refused with one clear sentence; the model and the kept list stay', async () => {
  await page.evaluate((base) => document.querySelector('transformer-playground').loadModel({ url: base }), `${server.url}gpt2/prefix_tied/`);
  const was = await unchanged();
  assert.deepEqual(was.kept, ['bare_tied', 'gpt2', 'prefix_tied', 'prefix_untied', 'reverse.safetensors']);
  await page.evaluate(() => document.querySelector('transformer-playground').openModelLoader());
  const byUrl = async (name) => {
    const from = server.requests.length;
    await page.locator(`${D} [data-load-url]`).fill(`${server.url}bad/${name}/`);
    await page.locator(`${D} [data-load-check]`).click();
    let r = await outcome();
    if (!r.error && (await page.locator(`${D} [data-load-download]`).count())) {
      await page.locator(`${D} [data-load-download]`).click();
      r = await outcome();
    }
    return { ...r, asked: server.requests.slice(from) };
  };

  const huge = await byUrl('huge');
  console.log('huge:', huge.error);
  assert.ok(huge.error.length > 20, 'a sentence');
  assert.ok(!huge.asked.some((q) => q.includes('/bad/huge/model.safetensors')), `the model was never requested: ${huge.asked.join(', ')}`);
  assert.deepEqual(await unchanged(), was);

  // A device that reports 1 GiB of memory (navigator.deviceMemory, read by the pre-flight at each check).
  await page.evaluate(() => Object.defineProperty(navigator, 'deviceMemory', { value: 1, configurable: true }));
  const big = await byUrl('toobig');
  await page.evaluate(() => delete navigator.deviceMemory);
  console.log('toobig:', big.error);
  assert.match(big.error, /memory/);
  assert.ok(!big.asked.some((q) => q.includes('/bad/toobig/model.safetensors')), `the model was never requested: ${big.asked.join(', ')}`);
  assert.deepEqual(await unchanged(), was);

  const cut = await byUrl('truncated');
  console.log('truncated:', cut.error);
  assert.ok(cut.error.length > 20);
  assert.deepEqual(await unchanged(), was);

  const notok = await byUrl('notok');
  console.log('notok:', notok.error);
  assert.match(notok.error, /tokenizer/);
  assert.ok(!notok.asked.includes('GET /bad/notok/model.safetensors'), 'the model was not downloaded');
  assert.deepEqual(await unchanged(), was);

  await drop(['/gpt2/prefix_tied/config.json', '/gpt2/prefix_tied/model.safetensors']);
  const dropNoTok = await outcome();
  assert.match(dropNoTok.error, /No tokenizer/);
  await drop(['/gpt2/prefix_tied/expected.json']);
  const wrong = await outcome();
  assert.match(wrong.error, /None of these files is a model/);
  // A file named as a checkpoint that is not one: the checkpoint loader's own sentence.
  await page.evaluate(async () => {
    const el = document.querySelector('transformer-playground');
    const r = el.shadowRoot.querySelector('tp-load-dialog');
    await r.loadFiles([new File([new TextEncoder().encode('{"not": "a model"}')], 'weights.safetensors')]);
  });
  const notCkpt = await outcome();
  assert.ok(notCkpt.error.length > 10, notCkpt.error);
  assert.deepEqual(await unchanged(), was);
  const m = await modelNow();
  assert.equal(m.error, '', 'the page shows no error of its own: the dialog said it');
  await shot(page, 'load-model-refused');
  await closeDialog();
});

test('cancel before the download changes nothing; the dialog passes axe in both themes', async () => {
  const from = server.requests.length;
  await page.evaluate(() => document.querySelector('transformer-playground').openModelLoader());
  // The picker is reachable by keyboard: a button, focused when the dialog opens.
  const focused = await page.evaluate(() => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-load-dialog').shadowRoot.activeElement?.hasAttribute('data-load-pick'));
  assert.equal(focused, true, 'the dialog opens with its picker button focused');
  await page.locator(`${D} [data-load-url]`).fill(`${server.url}gpt2/prefix_untied/`);
  await page.locator(`${D} [data-load-check]`).click();
  await outcome();
  await page.locator(`${D} [data-load-probe] [data-load-cancel]`).click();
  const r = await outcome();
  assert.match(r.said, /Cancelled/);
  assert.ok(!server.requests.slice(from).includes('GET /gpt2/prefix_untied/model.safetensors'));
  // Cancel during the download: the model's bytes are held back until the reader cancels.
  const was = await unchanged();
  let release;
  const held = new Promise((ok) => (release = ok));
  await page.route('**/gpt2/prefix_untied/model.safetensors', async (route) => (route.request().method() === 'GET' ? held.then(() => route.abort().catch(() => undefined)) : route.continue()));
  await page.locator(`${D} [data-load-check]`).click();
  await outcome();
  await page.locator(`${D} [data-load-download]`).click();
  await page.locator(`${D} [data-load-busy="download"] [role="progressbar"]`).waitFor();
  await page.locator(`${D} [data-load-busy] [data-load-cancel]`).click();
  const c = await outcome();
  release();
  await page.unroute('**/gpt2/prefix_untied/model.safetensors');
  assert.equal(c.error, '');
  assert.match(c.said, /Cancelled/);
  assert.deepEqual(await unchanged(), was, 'the model and the kept list stay');
  await page.evaluate(AXE);
  for (const theme of ['light', 'dark']) {
    await page.evaluate((t) => document.querySelector('transformer-playground').store.setTheme(t), theme);
    await page.waitForTimeout(100);
    const v = await page.evaluate(async () => (await window.axe.run(document, { resultTypes: ['violations'] })).violations.filter((x) => x.impact === 'serious' || x.impact === 'critical').map((x) => `${x.id}: ${x.nodes.map((n) => n.target.join(' >> ')).slice(0, 3).join(' | ')}`));
    assert.deepEqual(v, [], `axe (${theme})`);
    await shot(page, `load-model-dialog-${theme}`);
  }
  await page.evaluate(() => document.querySelector('transformer-playground').store.setTheme('light'));
  await closeDialog();
});

test('after a reload the kept models are listed and load again from the browser’s storage', async () => {
  await page.reload();
  await page.evaluate(() => document.querySelector('transformer-playground').ready);
  await page.evaluate(() => document.querySelector('transformer-playground').openModelLoader());
  await page.waitForFunction(() => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-load-dialog')?.shadowRoot.querySelectorAll('[data-kept-id]').length === 5);
  const t0 = Date.now();
  await page.locator(`${D} [data-kept-label="bare_tied"] [data-kept-load]`).click();
  const r = await outcome();
  assert.equal(r.error, '');
  console.log(`bare_tied from IndexedDB: ${Date.now() - t0} ms`);
  const m = await modelNow();
  assert.equal(m.label, 'bare_tied');
  await closeDialog();
  await sameAsTransformers('bare_tied');
  // An engine that dies is restarted with the same folder (the store keeps its files).
  await page.evaluate(async () => {
    const el = document.querySelector('transformer-playground');
    const was = el.engineRestarts;
    await el.testOnlyCrashEngine('trap');
    const t0 = performance.now();
    while ((el.engineRestarts === was || !el.lastForward) && performance.now() - t0 < 30000) await new Promise((ok) => setTimeout(ok, 50));
  });
  const again = await modelNow();
  assert.deepEqual([again.label, again.vocab, again.heads], ['bare_tied', m.vocab, m.heads], 'the restarted engine holds the same folder');
  await sameAsTransformers('bare_tied');
  await page.evaluate(() => document.querySelector('transformer-playground').store.dismissEngineNote());
  // Delete one: the list says so and the page's model stays.
  await page.evaluate(() => document.querySelector('transformer-playground').openModelLoader());
  await page.locator(`${D} [data-kept-label="gpt2"] [data-kept-delete]`).click();
  await page.waitForFunction(() => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-load-dialog').shadowRoot.querySelectorAll('[data-kept-id]').length === 4);
  assert.equal((await modelNow()).label, 'bare_tied');
  await closeDialog();
});

test('a class link that locks the model: no load button, the dialog says why, and the API refuses', async () => {
  const { page: p, errors: e } = await open(browser.context, server.url, 'play=0&views=controls,attention&lock=model');
  assert.equal(await p.locator('transformer-playground [data-load-open]').count(), 0, 'no button to load another model');
  await p.evaluate(() => document.querySelector('transformer-playground').openModelLoader());
  const why = await p.locator(`${D} [data-load-locked]`).textContent();
  assert.ok(why.trim().length > 10, why);
  assert.ok(await p.locator(`${D} [data-load-pick]`).isDisabled());
  const refused = await p.evaluate(async (url) => {
    const el = document.querySelector('transformer-playground');
    const before = el.info.params;
    try {
      await el.loadModel({ url }, { keep: false });
      return 'loaded';
    } catch (err) {
      return { message: err.message, same: el.info.params === before && el.customModel === '' };
    }
  }, `${server.url}gpt2/prefix_tied/`);
  assert.equal(typeof refused, 'object', 'refused');
  assert.ok(refused.same, 'the shipped model stays');
  assert.deepEqual(e, []);
  await p.close();
});

test('the dialog on a phone and in Chinese: no English left, nothing wider than the screen', async () => {
  await page.setViewportSize({ width: 390, height: 844 });
  await page.evaluate(() => document.querySelector('transformer-playground').store.setLang('zh-Hans'));
  await page.waitForFunction(() => document.querySelector('transformer-playground').getAttribute('lang') === 'zh-Hans');
  await page.evaluate(() => document.querySelector('transformer-playground').openModelLoader());
  await page.waitForTimeout(200);
  // "Hugging Face" is a name and kB a unit; the page's line about its offline copy speaks of the service worker this test blocks.
  const left = (await englishLeft(page, new Set([...ENGLISH_ALLOWED, 'Hugging', 'Face', 'kB']))).filter((l) => !l.includes('无法保存此页面以供离线使用'));
  await shot(page, 'load-model-dialog-zh-phone');
  const wide = await page.evaluate(() => {
    const d = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-load-dialog').shadowRoot.querySelector('dialog');
    return { dialog: d.getBoundingClientRect().width, scroll: d.scrollWidth, client: d.clientWidth };
  });
  assert.ok(wide.dialog <= 390, `dialog ${wide.dialog} px wide`);
  assert.ok(wide.scroll <= wide.client + 1, `nothing overflows the dialog: ${wide.scroll} > ${wide.client}`);
  assert.deepEqual(left, []);
  await closeDialog();
  await page.evaluate(() => document.querySelector('transformer-playground').store.setLang('en'));
  await page.setViewportSize({ width: 1280, height: 900 });
  // The only console errors: the browser's notes of the 404s the address form looks for
  // (bare_tied has no tokenizer.json; notok has neither tokenizer.json nor vocab.json).
  const notFound = 'Failed to load resource: the server responded with a status of 404 (Not Found)';
  assert.deepEqual(errors, [notFound, notFound, notFound]);
  assert.deepEqual(server.cspReports, [], 'no violation of the page’s policy');
});
