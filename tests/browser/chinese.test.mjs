// The Chinese models in the page: typing Chinese into each one gives one token chip per
// character, heatmap axes labelled with those characters, and the same tokens, class or
// generated text as the `tplay` command line computes for the same input; without
// positions and without the causal mask, 猫追狗 and 狗追猫 give the same outputs in
// permuted order. Screenshots of the Chinese heatmaps land in tests/browser/artifacts/.
//
// The command line is the debug build `cargo test` leaves in target/ (or TPLAY_BIN).

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { launch, open, root, seeView, serve, shot, waitTokens } from './harness.mjs';

function tplayBin() {
  const candidates = [process.env.TPLAY_BIN, join(root, 'target/debug/tplay'), join(root, 'target/release/tplay')].filter(Boolean);
  const bin = candidates.find((p) => existsSync(p));
  assert.ok(bin, `no tplay binary (build it with cargo build -p tplay, or set TPLAY_BIN); looked at ${candidates.join(', ')}`);
  return bin;
}

/** Run `tplay` on a shipped model; stdout as UTF-8. */
function tplay(args) {
  return execFileSync(tplayBin(), args, { cwd: root, encoding: 'utf8' });
}

const model = (file) => join(root, 'models', file);

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

async function typeText(page, text) {
  await page.locator('tp-input textarea#text').fill(text);
  // Wait until the tokens of this text, and a forward pass that read them, are in.
  await page.waitForFunction((text) => {
    const el = document.querySelector('transformer-playground');
    const ids = el.tokenized[0]?.ids;
    const f = el.lastForward;
    if (el.st.text !== text || !ids || ids.length !== [...text].length || !f || el.error) return false;
    // The tokens read this text, not the one before it (of the same length): each is its character, or unknown.
    const chars = [...text];
    const t = el.tokenized[0];
    if (!t.tokens.every((tok, k) => tok === chars[k] || t.unknown.some(([p]) => p === k))) return false;
    const holds = (row) => !!row && [0, 1].some((o) => ids.every((id, k) => row[o + k] === id) && (row.length === o + ids.length || row[o + ids.length] !== undefined));
    return holds(f.tokens[0]) || holds(f.src_tokens?.[0]);
  }, text);
  // The views draw the new text in the frame after the one that answered the typing.
  await page.evaluate(() => document.querySelector('transformer-playground').updateComplete);
}

/** Start generating from the current input and wait until it has finished. */
async function generateAll(page) {
  await page.getByRole('button', { name: 'play generation' }).click();
  await page.waitForFunction(() => document.querySelector('transformer-playground').done, undefined, { timeout: 120000 });
}

/** The token chips of row 0, as shown. */
function chips(page) {
  return page.locator('tp-input ul.chips[data-row="0"] li').allInnerTexts();
}

/** The heatmap's key (column) and query (row) labels, as shown. */
async function axes(page) {
  const cols = await page.locator('tp-attention .grid .lab.col').allInnerTexts();
  const rows = await page.locator('tp-attention .grid .lab.row').allInnerTexts();
  return { cols: cols.map((s) => s.trim()), rows: rows.map((s) => s.trim()) };
}

/** Every Chinese key label fits its column: one character, upright, no clipping. */
async function labelsFit(page) {
  return page.locator('tp-attention .grid .lab.col').evaluateAll((labs) =>
    labs
      .filter((l) => /\p{Script=Han}/u.test(l.textContent))
      .map((l) => ({
        text: l.textContent.trim(),
        lang: l.getAttribute('lang'),
        vertical: getComputedStyle(l).writingMode !== 'horizontal-tb',
        clipped: l.scrollWidth > l.clientWidth + 1,
      })),
  );
}

describe('Chinese models', () => {
  test('every_chinese_model_is_offered_in_the_model_picker', async () => {
    const { page, errors } = await open(browser.context, server.url, 'chapter=all&play=0');
    const offered = await page.getByLabel('model', { exact: true }).locator('option').evaluateAll((os) => os.map((o) => o.value));
    for (const file of ['zh-grammar-alibi', 'zh-grammar-sinusoidal', 'zh-grammar-learned', 'zh-grammar-none', 'zh-numerals', 'zh-sentiment']) {
      assert.ok(offered.includes(`${file}.safetensors`), `${file} is offered: ${offered.join(', ')}`);
    }
    // The grammar models are siblings: the position-encoding switch moves between them.
    await page.getByLabel('model', { exact: true }).selectOption('zh-grammar-alibi.safetensors');
    await page.waitForFunction(() => document.querySelector('transformer-playground').info?.pos_encoding === 'alibi');
    // The Chinese siblings, one per position encoding, each named in words (not by the link's value).
    const pes = await page.getByLabel('position encoding (loads the model trained with it)').locator('option').evaluateAll((os) => os.map((o) => [o.value, o.textContent.trim()]));
    assert.deepEqual(pes.map(([v]) => v).sort(), ['zh-grammar-alibi.safetensors', 'zh-grammar-learned.safetensors', 'zh-grammar-none.safetensors', 'zh-grammar-sinusoidal.safetensors']);
    assert.deepEqual(pes.map(([, t]) => t).sort(), ['ALiBi (distance penalty)', 'learned', 'none', 'sinusoidal']);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('grammar_model_reads_typed_chinese_by_character_and_generates_what_the_cli_generates', async () => {
    const file = 'zh-grammar-alibi.safetensors';
    const prompt = '两条狗都';
    const max = 12;
    const { page, errors } = await open(browser.context, server.url, `chapter=all&model=${file}&play=0&speed=0&max=${max}`);
    await seeView(page, 'attention');
    await typeText(page, prompt);
    const cli = JSON.parse(tplay(['forward', '--model', model(file), '--text', prompt]));
    assert.deepEqual(cli.token_text, [...prompt]);
    const ids = await page.evaluate(() => document.querySelector('transformer-playground').tokenized[0].ids);
    assert.deepEqual(ids, cli.tokens, 'the page and the CLI tokenize alike');
    assert.deepEqual((await chips(page)).map((s) => s.trim()), ['<bos>', ...prompt]);
    // Greedy generation (the page's default) gives the CLI's text.
    await generateAll(page);
    const gen = await page.evaluate(() => {
      const el = document.querySelector('transformer-playground');
      return el.generated.map((i) => el.info.vocab[i]).filter((t) => t !== '<eos>').join('');
    });
    const want = tplay(['generate', '--model', model(file), '--prompt', prompt, '--max-tokens', String(max)]).trimEnd();
    assert.equal(gen, want);
    assert.match(prompt + gen, /^两条狗都[^。]+。/u, 'the generated text ends its sentence');
    const stream = await page.locator('tp-generation .stream').innerText();
    assert.ok(stream.replace(/\s/g, '').includes(gen.slice(0, 4)), `the generation view shows ${gen}: ${stream}`);
    // Axes: <bos>, the prompt and every generated character.
    // The map keeps the box of the whole generation (no jumps), so with small cells the labels
    // thin out to every n-th: each label shown is its position's token, the first is shown.
    const { cols, rows } = await axes(page);
    const tokens = ['<bos>', ...prompt, ...[...gen]];
    for (const [name, labels] of [['key', cols], ['query', rows]]) {
      const n = 1 + prompt.length;
      assert.equal(labels[0], '<bos>', `the first ${name} is named`);
      labels.slice(0, n).forEach((l, i) => assert.ok(l === '' || l === tokens[i], `${name} ${i}: ${l} is ${tokens[i]} or thinned out`));
      assert.ok(labels.slice(0, n).filter(Boolean).length >= Math.ceil(n / 2), `at least every other ${name} is named: ${labels}`);
    }
    const fit = await labelsFit(page);
    assert.ok(fit.length >= prompt.length);
    for (const l of fit) {
      assert.equal(l.lang, 'zh-Hans', `${l.text} is marked as Chinese`);
      assert.equal(l.vertical, false, `${l.text} stands upright`);
      assert.equal(l.clipped, false, `${l.text} fits its column`);
    }
    // The q·k inspector names the focused characters.
    await page.locator('tp-attention .cell[data-i="2"][data-j="1"]').hover();
    const inspector = await page.locator('tp-qk h3').innerText();
    assert.ok(inspector.includes('“条”') && inspector.includes('“两”'), inspector);
    await shot(page, 'zh-grammar-heatmap');
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('numerals_model_reads_typed_chinese_and_its_cross_attention_is_labelled_by_character', async () => {
    const file = 'zh-numerals.safetensors';
    const { page, errors } = await open(browser.context, server.url, `chapter=all&model=${file}&play=0&speed=0&max=8`);
    await seeView(page, 'attention');
    const numeral = '三百一十二';
    await typeText(page, numeral);
    assert.deepEqual((await chips(page)).map((s) => s.trim()), [...numeral]);
    await generateAll(page);
    const digits = await page.evaluate(() => {
      const el = document.querySelector('transformer-playground');
      return el.generated.map((i) => el.info.vocab[i]).join('');
    });
    const cli = tplay(['generate', '--model', model(file), '--src', numeral]).trimEnd();
    assert.equal(cli, '312');
    assert.equal(digits, `${cli}<eos>`);
    await page.locator('tp-attention').getByRole('button', { name: 'cross-attention', exact: true }).click();
    await page.waitForFunction(() => document.querySelector('transformer-playground').store.site === 'cross');
    const { cols, rows } = await axes(page);
    const q = await page.evaluate(() => document.querySelector('transformer-playground').store.queryTokens);
    assert.deepEqual(cols, [...numeral], 'cross-attention keys are the source characters');
    assert.deepEqual(rows, q, 'rows are labelled with the decoder tokens');
    assert.deepEqual(q.slice(0, 4), ['<bos>', ...'312'], 'queries are the digits the decoder read');
    await shot(page, 'zh-numerals-cross-attention');
    // 一万零五: five digits from four characters.
    await typeText(page, '一万零五');
    await generateAll(page);
    const again = await page.evaluate(() => {
      const el = document.querySelector('transformer-playground');
      return el.generated.map((i) => el.info.vocab[i]).join('');
    });
    assert.equal(again, '10005<eos>');
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('sentiment_model_reads_typed_chinese_and_negation_flips_its_class_as_in_the_cli', async () => {
    const file = 'zh-sentiment.safetensors';
    const { page, errors } = await open(browser.context, server.url, `chapter=all&model=${file}&play=0`);
    await seeView(page, 'output');
    for (const text of ['这部电影很好', '这部电影不好', '结局没让我失望']) {
      await typeText(page, text);
      assert.deepEqual((await chips(page)).map((s) => s.trim()), ['<bos>', ...text], 'one chip per character');
      const cli = JSON.parse(tplay(['forward', '--model', model(file), '--text', text, '--bos']));
      const cliClass = cli.class_logits.indexOf(Math.max(...cli.class_logits));
      const page_ = await page.evaluate(() => {
        const el = document.querySelector('transformer-playground');
        const p = Array.from(el.lastForward.class_probs);
        return { cls: p.indexOf(Math.max(...p)), tokens: el.lastForward.tokens[0] };
      });
      assert.deepEqual(page_.tokens, cli.tokens, `${text}: the page reads <bos> and the characters, as the CLI`);
      assert.equal(page_.cls, cliClass, text);
      const name = ['负面', '正面'][cliClass];
      const shown = await page.locator(`tp-output .num[data-class="${cliClass}"]`).evaluate((n) => n.previousElementSibling.previousElementSibling.textContent);
      assert.equal(shown.trim(), name);
      const { cols } = await axes(page);
      assert.deepEqual(cols, ['<bos>', ...text]);
    }
    await shot(page, 'zh-sentiment-heatmap');
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('unknown_chinese_characters_become_one_unk_each_at_their_position', async () => {
    const file = 'zh-sentiment.safetensors';
    const { page, errors } = await open(browser.context, server.url, `chapter=all&model=${file}&play=0`);
    const text = '电影好吃😀';
    await typeText(page, text);
    const tok = await page.evaluate(() => document.querySelector('transformer-playground').tokenized[0]);
    const cli = JSON.parse(tplay(['forward', '--model', model(file), '--text', text]));
    assert.equal(tok.ids.length, 5, 'one token per character, the 4-byte emoji included');
    assert.deepEqual(tok.ids, cli.tokens);
    assert.deepEqual(
      tok.unknown,
      cli.unknown.map((u) => [u.position, u.text]),
    );
    assert.deepEqual(tok.unknown, [
      [3, '吃'],
      [4, '😀'],
    ]);
    assert.equal(await page.locator('tp-input li.chip.unk').count(), 2);
    const note = await page.locator('tp-input .note').innerText();
    assert.ok(note.includes('“吃” at 3') && note.includes('“😀” at 4'), note);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('without_positions_or_causal_mask_cat_chases_dog_gives_the_outputs_of_dog_chases_cat_permuted', async () => {
    const { page, errors } = await open(browser.context, server.url, 'chapter=all&model=zh-grammar-none.safetensors&causal=0&play=0');
    const logits = async (text) => {
      await typeText(page, text);
      // A forward pass for the same tokens may still be in flight (the text is debounced);
      // let it land before reading.
      await page.waitForTimeout(600);
      await typeText(page, text);
      return page.evaluate(() => {
        const f = document.querySelector('transformer-playground').lastForward;
        const [, T, V] = f.logits.shape;
        return Array.from({ length: T }, (_, t) => Array.from(f.logits.data.slice(t * V, (t + 1) * V)));
      });
    };
    const a = await logits('猫追狗');
    await shot(page, 'zh-order-blind-cat-chases-dog');
    const b = await logits('狗追猫');
    assert.equal(a.length, 4, '<bos> and three characters');
    const worst = (x, y) => Math.max(...x.map((v, k) => Math.abs(v - y[k])));
    // <bos> 猫 追 狗 → <bos> 狗 追 猫: positions 1 and 3 swap.
    [0, 3, 2, 1].forEach((src, t) => assert.ok(worst(b[t], a[src]) < 1e-4, `position ${t} ← ${src}: ${worst(b[t], a[src])}`));
    assert.ok(worst(a[1], b[1]) > 1e-2, 'the outputs moved with their characters');
    // The same two sentences through the ALiBi model: different outputs.
    await page.getByLabel('position encoding (loads the model trained with it)').selectOption('zh-grammar-alibi.safetensors');
    await page.waitForFunction(() => document.querySelector('transformer-playground').info?.pos_encoding === 'alibi');
    const c = await logits('猫追狗');
    const d = await logits('狗追猫');
    const moved = Math.max(...[0, 3, 2, 1].map((src, t) => worst(d[t], c[src])));
    assert.ok(moved > 1e-2, `with ALiBi the outputs are not a permutation (${moved})`);
    assert.deepEqual(errors, []);
    await page.close();
  });
});

describe('the lessons on the Chinese models', () => {
  // With the page in Chinese, a lesson whose experiment works on a Chinese model opens on
  // it (www/src/lessons/zh-presets.ts); the others keep the English-data model their task
  // names a sibling of. In English every lesson keeps its own model.
  const ZH = {
    'new-token': 'zh-grammar-sinusoidal.safetensors',
    recap: 'zh-grammar-sinusoidal.safetensors',
    'which-architecture': 'zh-grammar-sinusoidal.safetensors',
    ffn: 'zh-grammar-sinusoidal.safetensors',
    'no-leak': 'zh-grammar-sinusoidal.safetensors',
    heads: 'zh-grammar-sinusoidal.safetensors',
    'scaled-dot': 'zh-grammar-sinusoidal.safetensors',
    'padding-mask': 'zh-sentiment.safetensors',
    'causal-mask': 'zh-grammar-sinusoidal.safetensors',
    'attention-sites': 'zh-numerals.safetensors',
    parallel: 'zh-grammar-sinusoidal.safetensors',
    positions: 'zh-grammar-sinusoidal.safetensors',
    order: 'zh-grammar-none.safetensors',
    extrapolation: 'zh-grammar-sinusoidal.safetensors',
    architectures: 'zh-grammar-sinusoidal.safetensors',
    'kv-cache': 'zh-grammar-sinusoidal.safetensors',
    time: 'zh-grammar-sinusoidal.safetensors',
    decoding: 'zh-grammar-sinusoidal.safetensors',
  };
  const KEPT = { qkv: 'grammar-sinusoidal.safetensors', 'dot-vs-additive': 'reverse.safetensors', 'embedding-scale': 'reverse.safetensors', norms: 'reverse.safetensors' };

  const opened = async (hash) => {
    const { page, errors } = await open(browser.context, server.url, hash);
    const s = await page.evaluate(() => {
      const el = document.querySelector('transformer-playground');
      return { model: el.st.model, lesson: el.st.lesson, text: el.st.text, batch: el.st.batch, locale: el.locale, infoModel: el.info ? el.st.model : null };
    });
    await page.close();
    return { ...s, errors };
  };

  for (const [id, file] of Object.entries(ZH)) {
    test(`${id}_opens_on_${file.replace('.safetensors', '')}_in_chinese_and_on_its_own_model_in_english`, async () => {
      const zh = await opened(`lesson=${id}&lang=zh-Hans`);
      assert.equal(zh.lesson, id);
      assert.equal(zh.locale, 'zh-Hans');
      assert.equal(zh.model, file);
      assert.equal(zh.infoModel, file, 'the model is loaded');
      const en = await opened(`lesson=${id}&lang=en`);
      assert.ok(!en.model.startsWith('zh-'), `in English: ${en.model}`);
      if (id === 'padding-mask') {
        assert.equal(zh.text, '这部电影很好');
        assert.ok([...zh.batch[0]].length > [...zh.text].length, 'the other review is longer, so the first one is padded');
      }
      if (id === 'attention-sites') assert.equal(zh.text, '三百一十二');
      assert.deepEqual([...zh.errors, ...en.errors], []);
    });
  }

  test('lessons_whose_task_names_an_english_only_sibling_keep_their_model_in_chinese', async () => {
    for (const [id, file] of Object.entries(KEPT)) {
      const zh = await opened(`lesson=${id}&lang=zh-Hans`);
      assert.equal(zh.model, file, id);
      assert.deepEqual(zh.errors, []);
    }
  });
});

describe('the Chinese page on a phone and on a desktop', () => {
  // Screenshots for a reader to look at: the front page and two lessons on Chinese models,
  // at 390 and 1440 px. The page must not scroll sideways at either width.
  for (const width of [390, 1440]) {
    for (const [name, hash] of [
      ['front', 'lang=zh-Hans&play=0'],
      ['lesson-order', 'lesson=order&lang=zh-Hans'],
      ['lesson-attention-sites', 'lesson=attention-sites&lang=zh-Hans'],
    ]) {
      test(`${name}_at_${width}px`, async () => {
        const { page, errors } = await open(browser.context, server.url, hash, { viewport: { width, height: width < 600 ? 844 : 900 } });
        await page.waitForFunction(() => document.querySelector('transformer-playground').locale === 'zh-Hans');
        if (name === 'lesson-order') {
          await page.locator('transformer-playground tp-order').scrollIntoViewIfNeeded();
          await page.waitForFunction(() => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-order')?.result);
          await page.evaluate(() => window.scrollTo(0, 0));
        }
        await page.waitForTimeout(500);
        const wide = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
        assert.ok(wide <= 1, `the page scrolls sideways by ${wide}px`);
        await shot(page, `zh-${name}-${width}`);
        assert.deepEqual(errors, []);
        await page.close();
      });
    }
  }
});
