// The character palette (view `characters`, chapter "input & tokens"): for a char-level
// model it shows exactly the one-character tokens of the checkpoint's vocabulary — read
// here with the `tplay info` command line from the file itself, not from the page or the
// manifest — and clicking one adds it to the text, which the model then reads as that
// token (never <unk>). Word-level models have no palette.
//
// The command line is the build `cargo` leaves in target/ (or TPLAY_BIN).

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { launch, open, root, serve, shot } from './harness.mjs';

function tplayBin() {
  const candidates = [process.env.TPLAY_BIN, join(root, 'target/debug/tplay'), join(root, 'target/release/tplay')].filter(Boolean);
  const bin = candidates.find((p) => existsSync(p));
  assert.ok(bin, `no tplay binary (build it with cargo build -p tplay, or set TPLAY_BIN); looked at ${candidates.join(', ')}`);
  return bin;
}

/** The checkpoint's tokenizer, as `tplay info` reads it from the file. */
function tokenizerOf(file) {
  const out = execFileSync(tplayBin(), ['info', '--model', join(root, 'models', file)], { cwd: root, encoding: 'utf8' });
  return JSON.parse(out).tokenizer;
}

/** The characters the checkpoint knows: every token but the four specials, in id order. */
function knownOf(file) {
  const t = tokenizerOf(file);
  const specials = new Set([t.pad, t.bos, t.eos, t.unk]);
  return { kind: t.kind, chars: t.tokens.filter((_, id) => !specials.has(id)) };
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

async function loaded(page, file) {
  await page.waitForFunction((file) => {
    const el = document.querySelector('transformer-playground');
    return el.st.model === file && el.info && el.lastForward && !el.error;
  }, file);
}

function palette(page) {
  return page.locator('tp-characters button[data-char]').evaluateAll((bs) => bs.map((b) => ({ ch: b.dataset.char, lang: b.getAttribute('lang') })));
}

describe('the character palette', () => {
  for (const file of ['zh-sentiment.safetensors', 'zh-grammar-alibi.safetensors', 'zh-numerals.safetensors', 'reverse.safetensors']) {
    test(`shows_the_characters_of_${file.replace(/\W/g, '_')}_and_a_click_adds_one`, async () => {
      const known = knownOf(file);
      assert.equal(known.kind, 'char');
      const { page, errors } = await open(browser.context, server.url, `chapter=input&model=${file}&play=0`);
      await loaded(page, file);
      await page.locator('tp-characters button[data-char]').first().waitFor();
      const keys = await palette(page);
      assert.deepEqual(
        keys.map((k) => k.ch),
        known.chars,
      );
      for (const k of keys) assert.equal(k.lang, /\p{Script=Han}/u.test(k.ch) ? 'zh-Hans' : null, k.ch);
      // Its count in the sentence is the vocabulary's, less the specials.
      const hint = await page.locator('tp-characters .hint').innerText();
      assert.ok(hint.includes(String(known.chars.length)), hint);
      // A click appends the character; the model reads it as its own token.
      const before = await page.evaluate(() => document.querySelector('transformer-playground').st.text);
      const ch = known.chars.at(-1);
      await page.locator(`tp-characters button[data-char="${ch}"]`).click();
      await page.waitForFunction((want) => {
        const el = document.querySelector('transformer-playground');
        return el.st.text === want && el.tokenized[0]?.ids && [...el.st.text].length === el.tokenized[0].ids.length;
      }, before + ch);
      const t = await page.evaluate(() => document.querySelector('transformer-playground').tokenized[0]);
      const tok = tokenizerOf(file);
      assert.equal(t.ids.at(-1), tok.tokens.indexOf(ch), `${ch} is read as its own id`);
      assert.deepEqual(t.unknown, []);
      if (file === 'zh-sentiment.safetensors') await shot(page, 'characters-zh-sentiment');
      assert.deepEqual(errors, []);
      await page.close();
    });
  }

  test('a_word_level_model_has_no_palette', async () => {
    const file = 'sentiment.safetensors';
    assert.equal(tokenizerOf(file).kind, 'word');
    const { page, errors } = await open(browser.context, server.url, `chapter=input&model=${file}&play=0`);
    await loaded(page, file);
    await page.locator('tp-input').waitFor();
    assert.equal(await page.locator('tp-characters').count(), 0);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('the_palette_is_in_chinese_on_the_chinese_page', async () => {
    const zh = await launch({ webgpu: false, locale: 'zh-CN' });
    try {
      const file = 'zh-sentiment.safetensors';
      const { page, errors } = await open(zh.context, server.url, `chapter=input&model=${file}&play=0`);
      await loaded(page, file);
      await page.locator('tp-characters button[data-char]').first().waitFor();
      const text = await page.locator('tp-characters').evaluate((el) => el.shadowRoot.textContent);
      const words = text.replace(/<unk>/g, '').match(/[A-Za-z]{2,}/g) ?? [];
      assert.deepEqual(words, [], text);
      assert.deepEqual(errors, []);
      await page.close();
    } finally {
      await zh.close();
    }
  });
});
