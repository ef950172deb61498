// The interface in Simplified Chinese: opened with `#lang=zh-Hans`, or in a browser whose
// language is Chinese (zh-CN), every view speaks Chinese — no English word is left in the
// visible text, tooltips or accessible names of the page, apart from the allowed ones
// (formulas, units, names of things, the model's own tokens and the models' titles from the
// manifest). The language switches live in the page, and every number shown is the same in
// both languages. Screenshots of the Chinese page land in tests/browser/artifacts/.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { englishLeft, launch, open, serve, shot } from './harness.mjs';

let server;
before(async () => {
  server = await serve();
});
after(async () => {
  await server?.close();
});

/**
 * Every visible text of the page's shadow roots, with the accessible names and tooltips of
 * visible elements. Token chips, the generated stream and the models' own titles are
 * marked as what they are (`model`), so the caller can tell them from the interface.
 */
function visibleTexts(page) {
  return page.evaluate(() => {
    const out = [];
    const el = document.querySelector('transformer-playground');
    const vocab = new Set(el.info?.vocab ?? []);
    const shown = (e) => e && e.getClientRects().length > 0 && (!e.checkVisibility || e.checkVisibility({ visibilityProperty: true }));
    // Text that is the model's, not the interface's: tokens, what it wrote, the manifest's titles.
    // Formulas and code are written the same in both languages.
    const modelText = (e) => !!e.closest('[data-model-text], .chips, .stream, [data-token], option, optgroup, textarea, input, .mono, .formula, code');
    const walk = (root) => {
      const tw = document.createTreeWalker(root, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT);
      for (let n = tw.nextNode(); n; n = tw.nextNode()) {
        if (n.nodeType === Node.TEXT_NODE) {
          const p = n.parentElement;
          const t = n.data.trim();
          if (t && p && shown(p) && !['STYLE', 'SCRIPT'].includes(p.tagName)) out.push({ text: t, model: modelText(p), where: p.tagName.toLowerCase() });
        } else {
          if (shown(n)) {
            for (const a of ['aria-label', 'title', 'placeholder', 'aria-valuetext']) {
              const v = n.getAttribute(a);
              if (v) out.push({ text: v, model: modelText(n) && a !== 'aria-label', where: `${n.tagName.toLowerCase()}[${a}]` });
            }
          }
          if (n.shadowRoot) walk(n.shadowRoot);
        }
      }
    };
    walk(el.shadowRoot);
    return { texts: out, vocab: [...vocab] };
  });
}

/** Every number in the visible text, in order of appearance per kind of element. */
function numbersOf({ texts }) {
  return texts
    .filter((t) => !t.where.includes('['))
    .flatMap((t) => t.text.match(/-?\d+(?:[.,]\d+)*(?:e[+-]?\d+)?/g) ?? [])
    .sort();
}

async function localeIs(page, lang) {
  await page.waitForFunction(
    (lang) => {
      // Synchronous: playwright takes a promise the predicate returns for a truthy answer.
      const el = document.querySelector('transformer-playground');
      return el.locale === lang && el.getAttribute('lang') === lang && !el.isUpdatePending;
    },
    lang,
    { timeout: 20000 },
  );
  // Every component redraws on the locale's event; let them finish.
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
}

/** The views, each opened once and scanned (a lazily drawn view draws when it is seen). */
async function scrollThrough(page) {
  await page.evaluate(async () => {
    const el = document.querySelector('transformer-playground');
    for (const v of el.shadowRoot.querySelectorAll('.view')) {
      v.scrollIntoView();
      await new Promise((r) => setTimeout(r, 60));
    }
    window.scrollTo(0, 0);
  });
  await page.waitForTimeout(500);
}

describe('the interface in Simplified Chinese', () => {
  let browser;
  before(async () => {
    browser = await launch({ webgpu: false });
  });
  after(async () => {
    await browser?.close();
  });

  test('lang_zh_Hans_in_the_link_draws_every_view_in_chinese', async () => {
    const { page, errors } = await open(browser.context, server.url, 'chapter=all&lang=zh-Hans&play=0');
    await localeIs(page, 'zh-Hans');
    await scrollThrough(page);
    await localeIs(page, 'zh-Hans');
    const scan = await visibleTexts(page);
    assert.ok(scan.texts.length > 200, `only ${scan.texts.length} texts seen`);
    // The scan sees Chinese at all (a broken locale module would leave everything English).
    const chinese = scan.texts.filter((t) => /[\u4e00-\u9fff]/.test(t.text));
    assert.ok(chinese.length > 100, `only ${chinese.length} Chinese texts`);
    assert.deepEqual(await englishLeft(page), []);
    // The shipped model's title and description are the manifest's English turned into
    // Chinese (www/src/i18n/models.ts), not left as they are.
    const model = await page.evaluate(() => {
      const c = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-controls').shadowRoot;
      const sel = c.querySelector('select option:checked');
      return { title: sel?.textContent ?? '', description: c.querySelector('[data-model-text]')?.textContent ?? '' };
    });
    assert.match(model.title, /[\u4e00-\u9fff]/, model.title);
    assert.match(model.description, /[\u4e00-\u9fff]{10}/, model.description);
    await shot(page, 'i18n-zh-Hans-all-views');
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('the_lab_says_what_its_task_is_in_chinese', async () => {
    // The task's description comes from the core in English; the page knows every shipped
    // task's words (www/src/i18n/terms.ts) and says them in the page's language.
    const { page, errors } = await open(browser.context, server.url, 'lang=zh-Hans&play=0&views=lab');
    await localeIs(page, 'zh-Hans');
    const intro = page.locator('transformer-playground tp-lab p.intro');
    await intro.waitFor({ timeout: 30000 });
    assert.match(await intro.textContent(), /[\u4e00-\u9fff]{4}/);
    assert.deepEqual(await englishLeft(page), []);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('the_diagrams_opened_blocks_speak_chinese', async () => {
    // The post-LN encoder-decoder: masked and cross-attention, Add & Norm boxes, an FFN and a
    // norm block opened on their live numbers.
    const { page, errors } = await open(browser.context, server.url, 'lang=zh-Hans&play=0&model=translate.safetensors&views=architecture');
    await localeIs(page, 'zh-Hans');
    for (const [part, kind] of [
      ['ffn', 'ffn'],
      ['norm1', 'norm'],
    ]) {
      await page.locator(`tp-architecture g.blk[data-stack="decoder"][data-part="${part}"][data-layer="0"]`).click();
      await page.locator(`tp-architecture div.open[data-open="${kind}"][data-stack="decoder"]`).waitFor();
      await localeIs(page, 'zh-Hans');
      assert.deepEqual(await englishLeft(page), [], `${part} opened`);
    }
    await shot(page, 'i18n-zh-Hans-architecture-open');
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('switching_the_language_live_redraws_the_words_and_keeps_every_number', async () => {
    const views = 'controls,input,attention,output,architecture,masks,hidden,saturation,cost,schedule';
    const { page, errors } = await open(browser.context, server.url, `lang=zh-Hans&play=0&views=${views}`);
    await localeIs(page, 'zh-Hans');
    const zh = await visibleTexts(page);
    await shot(page, 'i18n-zh-Hans-main-views');
    // The switch in the page's bar: English.
    await page.locator('transformer-playground select[data-lang-switch]').selectOption('en');
    await localeIs(page, 'en');
    const en = await visibleTexts(page);
    const words = (s) => s.texts.map((t) => t.text).join(' ');
    assert.match(words(en), /Attention maps|Output probabilities|Position encoding/);
    assert.doesNotMatch(words(en), /注意力|输出概率|位置编码/);
    assert.match(words(zh), /注意力/);
    assert.deepEqual(numbersOf(en), numbersOf(zh), 'the numbers differ between the languages');
    // The choice is the reader's: kept, and not written into the link.
    assert.ok(!(await page.evaluate(() => location.hash)).includes('lang='));
    // And back to Chinese, live.
    await page.locator('transformer-playground select[data-lang-switch]').selectOption('zh-Hans');
    await localeIs(page, 'zh-Hans');
    assert.deepEqual(numbersOf(await visibleTexts(page)), numbersOf(zh));
    assert.deepEqual(errors, []);
    await page.close();
  });
});

describe('a browser whose language is Chinese', () => {
  let browser;
  before(async () => {
    browser = await launch({ webgpu: false, locale: 'zh-CN' });
  });
  after(async () => {
    await browser?.close();
  });

  test('the_page_follows_the_browser_language_without_any_setting', async () => {
    const { page, errors } = await open(browser.context, server.url, 'play=0&views=controls,input,generation,attention,output');
    assert.equal(await page.evaluate(() => navigator.language), 'zh-CN');
    await localeIs(page, 'zh-Hans');
    assert.deepEqual(await englishLeft(page), []);
    await shot(page, 'i18n-zh-CN-browser');
    // A link's lang=en still wins over the browser.
    const en = await open(browser.context, server.url, 'lang=en&play=0&views=controls');
    await localeIs(en.page, 'en');
    assert.deepEqual(errors, []);
    await en.page.close();
    await page.close();
  });
});

/** Draw every view of the page once (a lazily drawn view draws when it is seen), then back to the top. */
async function drawEveryView(page) {
  await page.evaluate(async () => {
    const el = document.querySelector('transformer-playground');
    for (const v of el.shadowRoot.querySelectorAll('.view')) {
      v.scrollIntoView();
      await new Promise((r) => setTimeout(r, 80));
    }
    window.scrollTo(0, 0);
  });
  await page.waitForTimeout(600);
}

describe('no English word anywhere on the Chinese page', () => {
  let browser;
  before(async () => {
    browser = await launch({ webgpu: false, locale: 'zh-CN' });
  });
  after(async () => {
    await browser?.close();
  });

  test('the_front_page_every_chapter_every_lesson_and_the_teacher_page_are_chinese', { timeout: 900000 }, async () => {
    const left = [];
    const scan = async (what, page) => {
      await localeIs(page, 'zh-Hans');
      await drawEveryView(page);
      await localeIs(page, 'zh-Hans');
      for (const l of await englishLeft(page)) left.push(`${what} — ${l}`);
    };
    // The front page as a Chinese browser opens it, and the chapters and lessons it lists.
    const front = await open(browser.context, server.url, 'play=0');
    await scan('front page', front.page);
    const chapters = await front.page.evaluate(() =>
      [...document.querySelector('transformer-playground').shadowRoot.querySelector('tp-chapters').shadowRoot.querySelectorAll('a[data-chapter]')]
        .map((a) => a.dataset.chapter)
        .filter((c) => c !== 'lessons'),
    );
    assert.ok(chapters.length >= 5, `chapters: ${chapters}`);
    const errors = [...front.errors];
    await front.page.close();
    for (const chapter of [...chapters, 'all']) {
      const { page, errors: e } = await open(browser.context, server.url, `chapter=${chapter}&play=0`);
      await scan(`chapter=${chapter}`, page);
      errors.push(...e);
      await page.close();
    }
    const first = await open(browser.context, server.url, 'lesson=heads&play=0');
    const lessons = await first.page.evaluate(async () => {
      const toc = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-lesson');
      toc.shadowRoot.querySelector('[data-tour="toc"]').click();
      await toc.updateComplete;
      return [...toc.shadowRoot.querySelectorAll('ol.toc li')].map((li) => li.dataset.lesson);
    });
    await scan('lesson=heads with its table of contents', first.page);
    errors.push(...first.errors);
    await first.page.close();
    assert.ok(lessons.length >= 20, `lessons: ${lessons}`);
    for (const id of lessons) {
      const { page, errors: e } = await open(browser.context, server.url, `lesson=${id}`);
      await scan(`lesson=${id}`, page);
      errors.push(...e);
      await page.close();
    }
    // The teacher page: its own element, no playground.
    const teacher = await browser.context.newPage();
    await teacher.goto(`${server.url}teacher.html`);
    await teacher.waitForFunction(() => document.querySelector('tp-teacher')?.shadowRoot?.querySelector('input[data-allow]') && document.documentElement.lang === 'zh-Hans');
    await teacher.waitForFunction(() => /[\u4e00-\u9fff]/.test(document.querySelector('tp-teacher').shadowRoot.querySelector('h1').textContent));
    for (const l of await englishLeft(teacher)) left.push(`teacher.html — ${l}`);
    await teacher.close();
    assert.deepEqual(left, []);
    assert.deepEqual(errors, []);
  });

  test('the_scanner_finds_an_english_word_left_on_a_chinese_page', async () => {
    // The scan above must be able to fail: an English sentence put into the page is found.
    const { page } = await open(browser.context, server.url, 'play=0&views=controls');
    await localeIs(page, 'zh-Hans');
    assert.deepEqual(await englishLeft(page), []);
    await page.evaluate(() => {
      const p = document.createElement('p');
      p.textContent = '注意力 heads look here';
      document.querySelector('transformer-playground').shadowRoot.append(p);
      const sel = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-controls').shadowRoot.querySelector('select');
      sel.append(new Option('greedy', 'greedy'));
    });
    const left = await englishLeft(page);
    assert.ok(left.some((l) => l.includes('heads look here')), left.join('\n'));
    assert.ok(left.some((l) => l.startsWith('option: "greedy"')), left.join('\n'));
    await page.close();
  });
});
