// Several widgets in one post: they share one engine worker and one copy of each model, a
// widget below the fold starts nothing until the reader scrolls towards it, each widget has
// its own language (the page's is left alone) and idle widgets leave the main thread idle;
// an <iframe> of embed.html is a guest that registers no service worker and fetches only
// what its view needs. One browser for every case.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, serve } from './harness.mjs';

let server;
let browser;
before(async () => {
  server = await serve();
  browser = await launch({ webgpu: false, locale: 'en-US' });
});
after(async () => {
  await browser?.close();
  await server?.close();
});

/** A post with two English widgets at the top and a Chinese one far below the fold. */
const POST = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>A post</title></head>
<body style="margin: 0 auto; max-width: 900px">
  <h1>A post with three widgets</h1>
  <transformer-playground id="a" no-hash views="attention" preset="play=0&nosuch=1"></transformer-playground>
  <transformer-playground id="b" no-hash views="output" preset="play=0"></transformer-playground>
  <div style="height: 5000px"></div>
  <transformer-playground id="c" no-hash lang="zh-Hans" views="attention" preset="play=0&nosuch=1"></transformer-playground>
  <script type="module" src="./playground.js"></script>
</body></html>`;

/** Serve `html` as `name` beside the build (the page's scripts and models stay the build's). */
async function post(context, name, html) {
  await context.route(`${server.url}${name}`, (r) => r.fulfill({ contentType: 'text/html', body: html }));
  return `${server.url}${name}`;
}

/** Milliseconds of main-thread work (CDP's TaskDuration) in `ms` of wall time. */
async function busy(page, ms) {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Performance.enable');
  const task = async () => (await cdp.send('Performance.getMetrics')).metrics.find((m) => m.name === 'TaskDuration').value;
  const t0 = await task();
  await page.waitForTimeout(ms);
  const t1 = await task();
  await cdp.detach();
  return (t1 - t0) * 1000;
}

const cjkOf = (s) => (s.match(/[\u4e00-\u9fff]/g) ?? []).length;

describe('widgets in a post', () => {
  let page;
  const errors = [];
  const models = [];
  const chunks = [];
  const all = [];
  before(async () => {
    page = await browser.context.newPage();
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
    page.on('pageerror', (e) => errors.push(String(e)));
    page.on('request', (r) => {
      const u = new URL(r.url()).pathname;
      all.push(u);
      if (u.endsWith('.safetensors')) models.push(u.slice(u.lastIndexOf('/') + 1));
      if (u.endsWith('.js')) chunks.push(u.slice(u.lastIndexOf('/') + 1));
    });
    await page.goto(await post(browser.context, 'widgets-post.html', POST));
  });
  after(async () => page?.close());

  test('a_widget_below_the_fold_starts_nothing_until_the_reader_scrolls_to_it', async () => {
    await page.waitForFunction(() => ['a', 'b'].every((id) => document.getElementById(id)?.lastForward), undefined, { timeout: 60000 });
    // Let anything that would start the far widget have its chance.
    await page.waitForTimeout(500);
    const c = await page.evaluate(() => {
      const el = document.getElementById('c');
      return { info: el.info, progress: el.progress, forward: !!el.lastForward, top: el.getBoundingClientRect().top, vh: innerHeight };
    });
    assert.ok(c.top > 2 * c.vh, 'the third widget is far below the fold');
    assert.equal(c.info, null, 'no model loaded for it');
    assert.equal(c.progress, null, 'no engine start under way for it');
    assert.equal(c.forward, false);
    // The two widgets at the top show the same model: it was fetched once, and nothing Chinese was.
    assert.equal(models.length, 1, `one checkpoint fetched for two widgets: ${models.join(', ')}`);
    assert.ok(!models.some((m) => m.startsWith('zh-')), 'the Chinese widget fetched nothing');
    assert.ok(!chunks.some((c) => c.startsWith('zh-Hans')), 'not even its Chinese strings');
    await page.evaluate(() => document.getElementById('c').scrollIntoView());
    await page.waitForFunction(() => document.getElementById('c')?.lastForward, undefined, { timeout: 60000 });
  });

  test('three_widgets_share_one_engine_worker', async () => {
    const names = page.workers().map((w) => w.url());
    assert.equal(names.length, 1, `one worker for three widgets: ${names.join(', ')}`);
    const models3 = await page.evaluate(() => ['a', 'b', 'c'].map((id) => document.getElementById(id).st.model));
    // Each model fetched once, whichever widgets show it; and every other file too (script, engine, strings).
    assert.deepEqual([...models].sort(), [...new Set(models3)].sort());
    assert.deepEqual(all.filter((u, i) => all.indexOf(u) !== i), [], 'no file fetched twice for three widgets');
  });

  test('a_chinese_widget_picks_a_chinese_model_unless_its_model_attribute_says_otherwise', async () => {
    const r = await page.evaluate(() => {
      const el = document.getElementById('c');
      const entry = el.manifest.find((m) => m.file === el.st.model);
      const first = el.manifest[0];
      return { task: entry.task, english: document.getElementById('a').st.model, first: first.file };
    });
    assert.match(r.task, /^zh-/, 'the Chinese widget shows a model of a Chinese task');
    assert.equal(r.english, r.first, 'the English widgets show the first model of the list');
    // `model` wins over the language.
    await page.evaluate((file) => {
      const el = document.createElement('transformer-playground');
      el.id = 'd';
      el.setAttribute('no-hash', '');
      el.setAttribute('lang', 'zh-Hans');
      el.setAttribute('views', 'attention');
      el.setAttribute('preset', 'play=0');
      el.setAttribute('load', 'eager');
      el.setAttribute('model', file);
      document.body.append(el);
    }, r.first);
    await page.waitForFunction(() => document.getElementById('d')?.lastForward, undefined, { timeout: 60000 });
    assert.equal(await page.evaluate(() => document.getElementById('d').st.model), r.first);
    assert.equal(page.workers().length, 1, 'a fourth widget joins the same worker');
    await page.evaluate(() => document.getElementById('d').remove());
  });

  test('two_widgets_in_two_languages_each_draw_in_theirs_and_leave_the_page_and_the_cpu_alone', async () => {
    const r = await page.evaluate(() => {
      const cjk = (s) => (s.match(/[\u4e00-\u9fff]/g) ?? []).length;
      const text = (el) => el.shadowRoot.querySelector('tp-attention').shadowRoot.textContent;
      const a = document.getElementById('a');
      const c = document.getElementById('c');
      const inner = (el) => el.shadowRoot.querySelector('tp-attention');
      return {
        doc: document.documentElement.lang,
        langs: [a.getAttribute('lang'), c.getAttribute('lang')],
        locales: [a.locale, c.locale],
        cjk: [cjk(text(a)), cjk(text(c))],
        // The language screen readers and fonts go by, inside each widget's shadow tree.
        lang: [inner(a).matches(':lang(en)'), inner(c).matches(':lang(zh-Hans)')],
        // What each widget says about its preset's unknown setting, made outside drawing.
        notes: [a.notes.join(' '), c.notes.join(' ')],
      };
    });
    assert.equal(r.doc, 'en', "the page's language is unchanged");
    assert.deepEqual(r.langs, ['en', 'zh-Hans']);
    assert.deepEqual(r.locales, ['en', 'zh-Hans']);
    assert.equal(r.cjk[0], 0, 'the English widget has no Chinese in its view');
    assert.ok(r.cjk[1] > 20, `the Chinese widget's view is in Chinese (${r.cjk[1]} characters)`);
    assert.deepEqual(r.lang, [true, true]);
    assert.match(r.notes[0], /nosuch/);
    assert.match(r.notes[1], /nosuch/);
    assert.equal(cjkOf(r.notes[0]), 0, `the English widget's note is in English: ${r.notes[0]}`);
    assert.ok(cjkOf(r.notes[1]) > 2, `the Chinese widget's note is in Chinese: ${r.notes[1]}`);
    // Nothing changes: the main thread stays idle (it was kept busy when widgets fought over one language).
    await page.waitForTimeout(500);
    const ms = await busy(page, 3000);
    assert.ok(ms < 300, `main thread busy ${ms.toFixed(0)} ms of 3000 while nothing happens`);
    assert.deepEqual(errors, []);
  });
});

describe('an iframe of embed.html', () => {
  test('registers_no_service_worker_and_fetches_only_its_model', async () => {
    const page = await browser.context.newPage();
    const requests = [];
    page.on('request', (r) => requests.push(new URL(r.url()).pathname));
    const url = await post(browser.context, 'framed-post.html', `<!doctype html><html lang="en"><body>
      <iframe id="f" style="width: 900px; height: 600px" src="./embed.html#views=attention&amp;play=0"></iframe></body></html>`);
    await page.goto(url);
    const frame = page.frame({ url: /embed\.html/ });
    await frame.waitForFunction(() => document.querySelector('transformer-playground')?.lastForward, undefined, { timeout: 60000 });
    await page.waitForTimeout(1000);
    const regs = await frame.evaluate(async () => (await navigator.serviceWorker.getRegistrations()).length);
    assert.equal(regs, 0, 'no service worker registered');
    assert.equal(browser.context.serviceWorkers().length, 0);
    assert.ok(!requests.some((u) => u.endsWith('/sw.js')), 'sw.js never fetched');
    const checkpoints = requests.filter((u) => u.endsWith('.safetensors'));
    assert.equal(checkpoints.length, 1, `only the shown model: ${checkpoints.join(', ')}`);
    // Nothing an attention map does not need: not the whole engine (trainer, side studies), the lab, another language's strings.
    const name = (u) => u.slice(u.lastIndexOf('/') + 1);
    // This browser offers no WebGPU adapter: the inference engine without its GPU backend.
    assert.ok(requests.some((u) => /^tplay_infer_bg.*\.wasm$/.test(name(u))), 'the inference engine');
    const extra = requests.filter((u) => /^(tplay_bg|tplay_infer_gpu|tp-lab|zh-Hans|workbox)/.test(name(u)));
    assert.deepEqual(extra, [], 'fetched beyond what the view needs');
    assert.equal(new Set(requests).size, requests.length, `no file fetched twice: ${requests.join(', ')}`);
    await page.close();
  });
});

describe('an iframe of embed.html, asked otherwise', () => {
  test('a_chinese_frame_says_so_in_its_document_and_a_host_asking_with_sw_1_gets_the_service_worker', async () => {
    // Another origin (another port), so the service worker asked for here stays out of the other tests.
    const other = await serve();
    const page = await browser.context.newPage();
    try {
      await browser.context.route(`${other.url}asking-post.html`, (r) =>
        r.fulfill({
          contentType: 'text/html',
          body: `<!doctype html><html lang="en"><body>
            <iframe id="zh" style="width: 900px; height: 400px" src="./embed.html#views=output&amp;play=0&amp;lang=zh-Hans&amp;chrome=none"></iframe>
            <iframe id="sw" style="width: 900px; height: 400px" src="./embed.html?sw=1#views=output&amp;play=0"></iframe></body></html>`,
        }),
      );
      await page.goto(`${other.url}asking-post.html`);
      const zh = page.frame({ url: /embed\.html#/ });
      await zh.waitForFunction(() => document.querySelector('transformer-playground')?.lastForward, undefined, { timeout: 60000 });
      // The frame's document takes its playground's language, for screen readers.
      assert.equal(await zh.evaluate(() => document.documentElement.lang), 'zh-Hans');
      assert.equal(await page.evaluate(() => document.documentElement.lang), 'en', "the host's is left alone");
      const sw = page.frame({ url: /embed\.html\?sw=1/ });
      let registered = 0;
      for (let i = 0; i < 150 && !registered; i++) {
        registered = await sw.evaluate(async () => (await navigator.serviceWorker.getRegistrations()).length);
        if (!registered) await page.waitForTimeout(200);
      }
      assert.equal(registered, 1, 'the host asked for the service worker (?sw=1)');
    } finally {
      await page.close();
      await other.close();
    }
  });
});

describe('the Chinese example post', () => {
  test('example_zh_hans_html_draws_its_first_widget_in_chinese_on_a_chinese_model', async () => {
    const page = await browser.context.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(`${server.url}example.zh-Hans.html`);
    await page.waitForFunction(() => document.getElementById('unmasked')?.lastForward, undefined, { timeout: 60000 });
    const r = await page.evaluate(() => {
      const el = document.getElementById('unmasked');
      return {
        doc: document.documentElement.lang,
        locale: el.locale,
        task: el.manifest.find((m) => m.file === el.st.model)?.task,
        causal: el.st.causal,
      };
    });
    assert.deepEqual(r, { doc: 'zh-Hans', locale: 'zh-Hans', task: r.task, causal: false });
    assert.match(r.task, /^zh-/);
    assert.deepEqual(errors, []);
    await page.close();
  });
});
