// The tokenizer view in headless Chromium, on a GPT-2 fixture folder (tests/fixtures/gpt2,
// made with Hugging Face `tokenizers`): for every text of the fixture's cases the view's
// final tokens are the library's ids; no "�" and no "Ġ" is drawn; each character whose bytes
// the library split over several tokens is drawn once over a bracket of them (the split is
// found here from the library's token strings, each character of a byte-level token string standing for one byte);
// step 0 has one symbol per UTF-8 byte. A shipped character-level model says it reads one
// token per character. The Chinese page leaves no English in the view.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { artifacts, englishLeft, launch, open, root, serve } from './harness.mjs';

const DIR = join(root, 'tests/fixtures/gpt2/prefix_tied');
const CASES = JSON.parse(readFileSync(join(root, 'tests/fixtures/gpt2/tokenizer/cases.json'), 'utf8')).cases;
const FILES = Object.fromEntries(
  [
    ['config', 'config.json'],
    ['model', 'model.safetensors'],
    ['tokenizerJson', 'tokenizer.json'],
  ].map(([k, f]) => [k, readFileSync(join(DIR, f)).toString('base64')]),
);

/** The characters of `text` whose UTF-8 bytes the library's tokens split (a token boundary inside the character). */
function splitChars(text, tokens) {
  const cuts = new Set();
  let at = 0;
  for (const t of tokens) {
    at += [...t].length; // one character of the token string per byte
    cuts.add(at);
  }
  const out = [];
  let pos = 0;
  for (const ch of text) {
    const n = Buffer.byteLength(ch);
    for (let k = pos + 1; k < pos + n; k++)
      if (cuts.has(k)) {
        out.push(ch);
        break;
      }
    pos += n;
  }
  return out;
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

/** Load the fixture folder as the page's model (the store's test hook, the engine's loadHf). */
async function loadFixture(page) {
  await page.evaluate(async (files) => {
    const bytes = (b64) => Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const el = document.querySelector('transformer-playground');
    await el.store.testOnlyLoadHf(Object.fromEntries(Object.entries(files).map(([k, v]) => [k, bytes(v)])), 'GPT-2 fixture', 'The cat chases the dog.');
  }, FILES);
}

/** Set the prompt and wait for the view's trace of it; what the view shows then. */
async function traceOf(page, text) {
  await page.evaluate((text) => document.querySelector('transformer-playground').store.typeText(text), text);
  await page.waitForFunction(
    (text) => {
      const v = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-tokenizer');
      return v && v.text === text && v.trace && !v.busy && v.trace.pieces.map((p) => p.text).join('') === text;
    },
    text,
    { timeout: 60000 },
  );
  return page.evaluate(() => {
    const v = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-tokenizer');
    const sec = v.shadowRoot.querySelector('section');
    return {
      tokens: sec.dataset.tokens,
      shown: sec.innerText,
      split: [...v.shadowRoot.querySelectorAll('.group.split')].map((g) => g.dataset.char),
      note: sec.querySelector('p').textContent,
      kind: v.trace.kind,
      bytes: v.trace.pieces.reduce((n, p) => n + p.steps[0].length, 0),
    };
  });
}

describe('tokenizer view', () => {
  test('GPT-2 fixture: final tokens are the library ids, spaces and split characters drawn, no � or Ġ', async () => {
    const { page, errors } = await open(browser.context, server.url, 'play=0&views=input,tokenizer', { viewport: { width: 1280, height: 900 } });
    await loadFixture(page);
    let splits = 0;
    for (const c of CASES) {
      if (c.text.length === 0) continue; // the page's prompt is never empty
      const got = await traceOf(page, c.text);
      assert.equal(got.tokens, c.ids.join(','), `ids of ${JSON.stringify(c.text)}`);
      assert.equal(got.kind, 'bpe');
      assert.equal(got.bytes, Buffer.byteLength(c.text), 'step 0: one symbol per byte');
      assert.ok(!got.shown.includes('\uFFFD'), `no � for ${JSON.stringify(c.text)}:\n${got.shown}`);
      assert.ok(!got.shown.includes('Ġ'), `no Ġ for ${JSON.stringify(c.text)}`);
      if (c.text.includes(' ')) assert.ok(got.shown.includes('␣'), 'a space is drawn as ␣');
      const want = splitChars(c.text, c.tokens);
      for (const ch of want) assert.ok(got.split.some((g) => g.includes(ch)), `${ch} of ${JSON.stringify(c.text)} drawn over its tokens: ${JSON.stringify(got.split)}`);
      splits += want.length;
      // The note's counts are the trace's.
      assert.ok(got.note.includes(String(Buffer.byteLength(c.text))) && got.note.includes(String(c.ids.length)), got.note);
    }
    assert.ok(splits >= 3, `the cases split some characters over tokens (${splits})`);
    // 猫 is three bytes and one token: drawn as the character, not its bytes.
    await traceOf(page, '猫追狗。');
    const cat = await page.evaluate(() => {
      const v = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-tokenizer');
      return v.shadowRoot.querySelector('.sym[data-id="293"]').firstElementChild.textContent.trim();
    });
    assert.equal(cat, '猫');
    // Step 0: one symbol per byte, the characters' bytes under a bracket each.
    const step0 = await page.evaluate(async () => {
      const v = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-tokenizer');
      const r = v.shadowRoot.querySelector('input[type=range]');
      r.value = '0';
      r.dispatchEvent(new Event('input'));
      await v.updateComplete;
      return { syms: v.shadowRoot.querySelectorAll('.sym').length, chars: [...v.shadowRoot.querySelectorAll('.group.split')].map((g) => g.dataset.char) };
    });
    assert.equal(step0.syms, Buffer.byteLength('猫追狗。'));
    assert.deepEqual(step0.chars, [...'猫追狗。']);
    await page.locator('transformer-playground').evaluate((el) => el.shadowRoot.querySelector('tp-tokenizer').scrollIntoView());
    await page.screenshot({ path: join(artifacts, 'tokenizer-step0.png') });
    await traceOf(page, '我喜欢注意力机制 😀🐱👍🏽 mixed 猫 and spaces');
    await page.locator('transformer-playground').evaluate((el) => el.shadowRoot.querySelector('tp-tokenizer').scrollIntoView());
    await page.screenshot({ path: join(artifacts, 'tokenizer-desktop.png') });
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('char model says one token per character; the Chinese page has no English left', async () => {
    const { page, errors } = await open(browser.context, server.url, 'play=0&views=tokenizer&lang=zh-Hans', { viewport: { width: 390, height: 844 }, media: { colorScheme: 'dark' } });
    const got = await traceOf(page, '猫追狗');
    assert.equal(got.kind, 'char');
    const ids = await page.evaluate(() => document.querySelector('transformer-playground').store.tokenized[0].ids.join(','));
    assert.equal(got.tokens, ids);
    assert.match(got.note, /每个字符读作一个词元/);
    assert.deepEqual(await englishLeft(page), []);
    await page.screenshot({ path: join(artifacts, 'tokenizer-zh-char-390.png') });
    await loadFixture(page);
    const bpe = await traceOf(page, '我喜欢注意力机制');
    assert.equal(bpe.kind, 'bpe');
    assert.deepEqual(await englishLeft(page), []);
    await page.locator('transformer-playground').evaluate((el) => el.shadowRoot.querySelector('tp-tokenizer').scrollIntoView());
    await page.screenshot({ path: join(artifacts, 'tokenizer-zh-bpe-390.png') });
    assert.deepEqual(errors, []);
    await page.close();
  });
});
