// Embedding from the page: every view's ⋯ menu has "Embed in a post", whose snippet (the
// script and element, or an iframe of embed.html) put into a post reproduces the view — the
// same numbers, the same size, the same play state — and whose preview is the snippet's own
// element; and `chrome="none"` shows each registered view's picture alone (no title, prose,
// controls or menu), drawn without a click, its numbers those of the full view. One browser.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { launch, root, serve, shot } from './harness.mjs';

const AXE = readFileSync(createRequire(join(root, 'www/package.json')).resolve('axe-core/axe.min.js'), 'utf8');

let server;
let browser;
before(async () => {
  server = await serve();
  browser = await launch({ webgpu: false });
  await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url.replace(/\/$/, '') });
});
after(async () => {
  await browser?.close();
  await server?.close();
});

/** Open `path` (under the served build) and wait for the first playground's first pass. */
async function open(path, { width = 1280, height = 900 } = {}) {
  const page = await browser.context.newPage();
  await page.setViewportSize({ width, height });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  await page.goto(server.url + path);
  await page.waitForFunction(() => document.querySelector('transformer-playground')?.lastForward, null, { timeout: 60000 });
  return { page, errors };
}

/** A post: the snippet in a column `width` px wide, served beside the build. */
async function post(snippet, width) {
  const page = await browser.context.newPage();
  await page.setViewportSize({ width: 1280, height: 900 });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  const url = `${server.url}my-post-${Math.random().toString(36).slice(2)}.html`;
  await page.route(url, (r) => r.fulfill({ contentType: 'text/html', body: `<!doctype html><html lang="en"><body style="margin:0"><p>My post.</p><div id="col" style="width:${width}px">${snippet}</div></body></html>` }));
  await page.goto(url);
  return { page, errors };
}

/** What a playground shows of a view: its frame's size, the numbers of its visible text, the pass's numbers. */
const READ = (view) => {
  const el = document.querySelector('#col transformer-playground, #col iframe') ?? document.querySelector('transformer-playground');
  const pg = el.tagName === 'IFRAME' ? el.contentDocument.querySelector('transformer-playground') : el;
  const frame = pg.shadowRoot.querySelector(`.view[data-view="${view}"]`);
  const box = frame.getBoundingClientRect();
  const a = pg.lastForward.attention.find((x) => x.site === 'decoder_self');
  return {
    width: Math.round(box.width),
    height: Math.round(box.height),
    text: frame.firstElementChild.shadowRoot.textContent.replace(/\s+/g, ' ').trim(),
    probs: Array.from(a.probs.data).map((x) => Math.round(x * 1e6)),
    generated: [...pg.generated],
    st: { causal: pg.st.causal, max: pg.st.max, play: pg.st.play, chrome: pg.st.chrome },
  };
};

/** Until the playground (in the page or its frame) has finished what it plays. */
async function settled(page) {
  await page.waitForFunction(
    () => {
      const el = document.querySelector('#col transformer-playground, #col iframe') ?? document.querySelector('transformer-playground');
      const pg = el.tagName === 'IFRAME' ? el.contentDocument?.querySelector('transformer-playground') : el;
      return pg?.lastForward && !pg.playing && (pg.done || !pg.st.play || pg.genNote);
    },
    null,
    { timeout: 60000 },
  );
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
}

/** Open a view's ⋯ menu and choose Embed; the dialog's snippet, once its preview is live. */
async function embedDialog(page, view, { alone = true, form = 'element' } = {}) {
  const menu = page.locator(`transformer-playground .view[data-view="${view}"] tp-view-menu`);
  await menu.locator('.trigger').click();
  await menu.locator('[data-action="embed"]').click();
  const dialog = page.locator('tp-embed-dialog dialog[open]');
  await dialog.waitFor();
  if (!alone) await dialog.locator('[data-embed-alone]').uncheck();
  await dialog.locator(`[data-embed-form="${form}"]`).check();
  await page.waitForFunction(() => {
    const d = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-embed-dialog');
    const live = d.shadowRoot.querySelector('[data-embed-preview] transformer-playground');
    return live?.lastForward && (live.done || !live.st.play);
  }, null, { timeout: 60000 });
  return dialog.locator('[data-embed-snippet]').inputValue();
}

describe('the embed menu', () => {
  test('a_generating_view_copied_as_an_element_and_as_an_iframe_reproduces_its_numbers_size_and_play_state', async () => {
    const { page, errors } = await open('index.html#views=attention&scale=0&max=6&speed=0');
    await settled(page);
    const source = await page.evaluate(READ, 'attention');
    const snippet = await embedDialog(page, 'attention');
    assert.match(snippet, /<script type="module" src="http:\/\/127\.0\.0\.1:\d+\/playground\.js"><\/script>/);
    assert.match(snippet, /<transformer-playground no-hash views="attention" chrome="none" style="display:block;min-height:\d+px" preset="[^"]*play=1/);
    assert.match(snippet, /scale=0/);
    assert.match(snippet, /max=6/);
    // The preview is the snippet's own element, live: the same numbers as the page's view.
    const preview = await page.evaluate(() => {
      const d = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-embed-dialog');
      const live = d.shadowRoot.querySelector('[data-embed-preview] transformer-playground');
      const a = live.lastForward.attention.find((x) => x.site === 'decoder_self');
      return { probs: Array.from(a.probs.data).map((x) => Math.round(x * 1e6)), generated: [...live.generated], chrome: live.st.chrome, menus: live.shadowRoot.querySelectorAll('tp-view-menu').length };
    });
    assert.deepEqual(preview.probs, source.probs);
    assert.deepEqual(preview.generated, source.generated);
    assert.equal(preview.chrome, 'none');
    assert.equal(preview.menus, 0, 'the picture alone has no ⋯ menu');
    // One click copies it.
    await page.locator('tp-embed-dialog [data-embed-copy]').click();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), snippet);
    await shot(page, 'embed-dialog');

    // Pasted into a post: the same numbers and the same generation.
    const el = await post(snippet, source.width);
    await settled(el.page);
    const inPost = await el.page.evaluate(READ, 'attention');
    assert.deepEqual(inPost.probs, source.probs);
    assert.deepEqual(inPost.generated, source.generated);
    assert.equal(inPost.width, source.width);
    assert.ok(inPost.height < source.height, `the picture alone (${inPost.height} px) is shorter than the full view (${source.height} px)`);
    assert.deepEqual(el.errors, []);

    // The iframe form: the same, inside embed.html.
    await page.locator('tp-embed-dialog [data-embed-form="iframe"]').check();
    const iframe = await page.locator('tp-embed-dialog [data-embed-snippet]').inputValue();
    assert.match(iframe, /<iframe src="http:\/\/127\.0\.0\.1:\d+\/embed\.html#views=attention&amp;chrome=none[^"]*play=1/);
    const fr = await post(iframe, source.width);
    await fr.page.waitForFunction(() => document.querySelector('iframe')?.contentDocument?.querySelector('transformer-playground')?.lastForward, null, { timeout: 60000 });
    await settled(fr.page);
    const inFrame = await fr.page.evaluate(READ, 'attention');
    assert.deepEqual(inFrame.probs, source.probs);
    assert.deepEqual(inFrame.generated, source.generated);
    assert.equal(inFrame.height, inPost.height, 'the iframe shows the picture at the element’s size');
    await Promise.all([el.page.close(), fr.page.close()]);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('the_full_view_and_a_still_one_copy_as_they_are_play_0_stays_still', async () => {
    const { page, errors } = await open('index.html#views=output&play=0&temp=1.5&strategy=sample');
    const source = await page.evaluate(READ, 'output');
    const snippet = await embedDialog(page, 'output', { alone: false });
    assert.doesNotMatch(snippet, /chrome=/);
    assert.match(snippet, /play=0/);
    const p = await post(snippet, source.width);
    await p.page.waitForFunction(() => document.querySelector('transformer-playground')?.lastForward, null, { timeout: 60000 });
    await p.page.waitForTimeout(600);
    const inPost = await p.page.evaluate(READ, 'output');
    assert.deepEqual(inPost.generated, [], 'play=0: nothing generates while the reader watches');
    assert.equal(inPost.text, source.text, 'the same view, word for word and number for number');
    assert.equal(inPost.height, source.height, 'the same size');
    await p.page.close();
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('a_generation_stopped_part_way_plays_exactly_as_far_in_the_post', async () => {
    const { page, errors } = await open('index.html#views=generation&speed=40&max=20');
    await page.waitForFunction(() => document.querySelector('transformer-playground').generated.length >= 3, null, { timeout: 60000 });
    await page.evaluate(() => document.querySelector('transformer-playground').store.gen.pause());
    await page.waitForFunction(() => !document.querySelector('transformer-playground').playing);
    const source = await page.evaluate(READ, 'generation');
    assert.ok(source.generated.length < 20);
    const snippet = await embedDialog(page, 'generation');
    assert.match(snippet, new RegExp(`max=${source.generated.length}\\b`));
    const p = await post(snippet, source.width);
    await settled(p.page);
    assert.deepEqual((await p.page.evaluate(READ, 'generation')).generated, source.generated);
    await p.page.close();
    assert.deepEqual(errors, []);
    await page.close();
  });
});

describe('the picture alone', () => {
  test('chrome_none_shows_every_registered_view_as_its_picture_with_the_full_views_numbers', async () => {
    const names = await (async () => {
      const { page } = await open('embed.html#views=input&play=0');
      const n = await page.evaluate(async () => (await import(new URL('playground.js', location.href).href)).VIEW_NAMES);
      await page.close();
      return n;
    })();
    // Beams and extrapolation draw by themselves only alone (in the full page they wait for a click): compared below.
    // The time view measures this device (its times differ from run to run) and, among other views, waits for its button in the full page: time.test.mjs draws it alone.
    const still = names.filter((n) => n !== 'beams' && n !== 'extrapolation' && n !== 'lab' && n !== 'time');
    const read = (views) =>
      views.map((v) => {
        const el = document.querySelector('transformer-playground');
        const frame = el.shadowRoot.querySelector(`.view[data-view="${v}"]`);
        if (!frame) return { v, missing: true };
        const root = frame.firstElementChild.shadowRoot;
        const vis = (n) => {
          const r = n.getBoundingClientRect();
          return r.width > 0 && r.height > 0;
        };
        const box = root.firstElementChild;
        const direct = [...(box?.children ?? [])].filter(vis);
        // Visible text, nested shadow roots included.
        const texts = [];
        const walk = (n) => {
          for (const c of n.children) {
            if (c.tagName === 'STYLE' || getComputedStyle(c).display === 'none') continue;
            if (c.shadowRoot) walk(c.shadowRoot);
            if (!c.children.length && c.textContent.trim() && vis(c)) texts.push(c.textContent.trim());
            walk(c);
          }
        };
        walk(root);
        return {
          v,
          height: Math.round(frame.getBoundingClientRect().height),
          // Marks of a picture: a canvas, an SVG, a heatmap, or visible text (bars and tables of numbers).
          drawn: [...root.querySelectorAll('canvas, svg, tp-heat')].filter(vis).length + texts.length,
          pictures: [...root.querySelectorAll('canvas, svg, tp-heat')].filter((n) => vis(n) && (n.tagName !== 'svg' || n.querySelector('path, rect, line, polyline, circle, text'))).length,
          prose: direct.filter((n) => ['P', 'H2', 'H3', 'HEADER', 'DETAILS'].includes(n.tagName)).map((n) => n.tagName),
          buttons: direct.filter((n) => n.tagName === 'BUTTON').length,
          menu: !!frame.querySelector('tp-view-menu'),
          numbers: texts.join(' ').match(/-?\d+(\.\d+)?/g) ?? [],
        };
      });
    const all = still.join(',');
    // A window tall enough that every view is in sight (the charts that measure start when seen).
    const full = await open(`embed.html#views=${all}&play=0`, { height: 16000 });
    const alone = await open(`embed.html#views=${all}&play=0&chrome=none`, { height: 16000 });
    // Every view has drawn what it computes by itself (the charts that measure in the page take a few seconds).
    for (const p of [full.page, alone.page]) {
      await p.waitForFunction(
        (names) => {
          const el = document.querySelector('transformer-playground');
          const has = (v, sel) => el.shadowRoot.querySelector(`.view[data-view="${v}"] > *`)?.shadowRoot?.querySelector(sel);
          return el.schedule && has('sqrt-dk', '.charts svg') && has('parallel', '.charts svg') && names.length > 0;
        },
        still,
        { timeout: 60000 },
      );
    }
    const a = await alone.page.evaluate(read, still);
    const f = await full.page.evaluate(read, still);
    await shot(alone.page, 'embed-alone-all');
    for (const [i, v] of a.entries()) {
      assert.ok(!v.missing, `${v.v} is drawn`);
      assert.ok(v.drawn > 0, `${v.v}: its picture has content (${JSON.stringify(v)})`);
      assert.deepEqual(v.prose, [], `${v.v}: no title or prose beside the picture`);
      assert.equal(v.buttons, 0, `${v.v}: no buttons beside the picture`);
      assert.equal(v.menu, false, `${v.v}: no ⋯ menu`);
      assert.ok(v.height <= f[i].height, `${v.v}: alone (${v.height} px) no taller than the full view (${f[i].height} px)`);
      // The parallel view times the device: its milliseconds differ from run to run.
      if (v.v === 'parallel') continue;
      const shown = new Set(f[i].numbers);
      const foreign = v.numbers.filter((n) => !shown.has(n));
      assert.deepEqual(foreign, [], `${v.v}: every number of the picture is one the full view shows`);
    }
    // The charts are pictures with marks in them.
    for (const v of ['architecture', 'attention', 'schedule', 'sqrt-dk', 'parallel', 'positions', 'embedding-scale']) {
      assert.ok(a.find((x) => x.v === v).pictures > 0, `${v}: a canvas or SVG with marks`);
    }
    // Equal passes: the picture alone computes what the full view does.
    const probs = (p) => p.evaluate(() => document.querySelector('transformer-playground').lastForward.attention.map((a) => Array.from(a.probs.data)));
    assert.deepEqual(await probs(alone.page), await probs(full.page));
    // An old name for a view (an alias of the contract) still shows it.
    await alone.page.goto(server.url + 'embed.html#views=heatmap,probabilities&chrome=none&play=0');
    await alone.page.waitForFunction(() => document.querySelector('transformer-playground')?.lastForward, null, { timeout: 60000 });
    assert.deepEqual(await alone.page.evaluate(() => [...document.querySelector('transformer-playground').shadowRoot.querySelectorAll('.view')].map((v) => v.dataset.view)), ['attention', 'output']);
    assert.deepEqual(full.errors, []);
    assert.deepEqual(alone.errors, []);
    await Promise.all([full.page.close(), alone.page.close()]);
  });

  test('beams_and_extrapolation_alone_draw_without_a_click_the_numbers_a_click_gives_in_the_full_view', async () => {
    const alone = await open('embed.html#views=beams,extrapolation&chrome=none&max=6&speed=0&play=0');
    const tree = (p) =>
      p.waitForFunction(
        () => {
          const el = document.querySelector('transformer-playground');
          const b = el.shadowRoot.querySelector('tp-beams')?.shadowRoot?.querySelectorAll('g.node').length;
          const x = el.shadowRoot.querySelector('tp-extrapolation')?.results?.length;
          return b > 0 && x > 0 && el.done && !el.playing && el.shadowRoot.querySelector('tp-extrapolation').progress === null;
        },
        null,
        { timeout: 60000 },
      );
    await tree(alone.page);
    const full = await open('embed.html#views=beams,extrapolation&max=6&speed=0&play=0');
    // In the full view, the reader clicks.
    const ext = (p) => p.locator('transformer-playground tp-extrapolation');
    await p_click(full.page, 'tp-beams button');
    await full.page.waitForFunction(() => document.querySelector('transformer-playground').st.strategy === 'beam');
    await full.page.evaluate(() => document.querySelector('transformer-playground').store.gen.play());
    await ext(full.page).locator('button').first().click();
    await tree(full.page);
    const read = (p) =>
      p.evaluate(() => {
        const el = document.querySelector('transformer-playground');
        const b = [...el.shadowRoot.querySelector('tp-beams').shadowRoot.querySelectorAll('g.node')].map((g) => `${g.dataset.tokens}:${g.dataset.score}`);
        const x = el.shadowRoot.querySelector('tp-extrapolation').results.map((r) => [r.file, r.r.bands.map((band) => band.accuracy)]);
        const shown = ['tp-beams', 'tp-extrapolation'].map((t) => !!el.shadowRoot.querySelector(t).shadowRoot.querySelector('svg'));
        return { b, x, shown, generated: [...el.generated] };
      });
    const [a, f] = [await read(alone.page), await read(full.page)];
    assert.deepEqual(a.shown, [true, true]);
    assert.deepEqual(a.b, f.b, 'the same beam tree');
    assert.deepEqual(a.generated, f.generated);
    assert.deepEqual(a.x, f.x, 'the same accuracies per position');
    await Promise.all([full.page.close(), alone.page.close()]);
  });
});

describe('the picture alone, no jumps', () => {
  /**
   * Installed before the page's scripts: every animation frame, each view frame's height, the
   * room it reserves (its min-height) and whether its picture has marks yet (an SVG with
   * shapes, a canvas, a heat map or visible text, read here, not from the page's code),
   * until every view has drawn.
   */
  const SAMPLE = `
    window.__samples = {};
    const marks = (root) => {
      for (const n of root.querySelectorAll('svg, canvas, tp-heat')) {
        const r = n.getBoundingClientRect();
        if (r.width > 0 && r.height > 0 && (n.tagName !== 'svg' || n.querySelector('path, rect, line, polyline, circle, text'))) return true;
      }
      const walk = (n) => {
        for (const c of n.children) {
          if (c.tagName === 'STYLE' || getComputedStyle(c).display === 'none') continue;
          if (!c.children.length && c.textContent.trim() && c.getBoundingClientRect().height > 0) return true;
          if (walk(c)) return true;
        }
        return false;
      };
      return walk(root);
    };
    const tick = () => {
      const el = document.querySelector('transformer-playground');
      for (const f of el?.shadowRoot?.querySelectorAll('.view') ?? []) {
        const v = f.dataset.view || f.dataset.viewPlaceholder;
        const s = (window.__samples[v] ??= { room: 0, drawnAt: -1, heights: [] });
        if (s.drawnAt >= 0) continue;
        const h = f.getBoundingClientRect().height;
        s.room = Math.max(s.room, parseFloat(getComputedStyle(f).minHeight) || 0);
        const root = f.dataset.view && f.firstElementChild?.shadowRoot;
        if (root && marks(root)) s.drawnAt = s.heights.length;
        s.heights.push(Math.round(h));
      }
      requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  `;


  /** Open the views alone on a slow machine, sample their frames until drawn, and check no frame fell under its room first. */
  async function sampleRoom(names, { element = false } = {}) {
    const page = await browser.context.newPage();
    // A wide page, tall enough that every view is in sight, on a slow machine (the main thread four times slower).
    await page.setViewportSize({ width: 1440, height: 16000 });
    const cdp = await browser.context.newCDPSession(page);
    await cdp.send('Emulation.setCPUThrottlingRate', { rate: 4 });
    await page.addInitScript(SAMPLE);
    if (element) {
      // As a post holds it: the script and the element.
      const url = `${server.url}post-${Math.random().toString(36).slice(2)}.html`;
      await page.route(url, (r) => r.fulfill({ contentType: 'text/html', body: `<!doctype html><html lang="en"><body style="margin:0"><script type="module" src="${server.url}playground.js"></script><transformer-playground no-hash views="${names.join(',')}" chrome="none" preset="play=0"></transformer-playground></body></html>` }));
      await page.goto(url);
    } else await page.goto(`${server.url}embed.html#views=${names.join(',')}&chrome=none&play=0`);
    await page.waitForFunction(() => document.querySelector('transformer-playground')?.lastForward, null, { timeout: 60000 });
    // Every view that draws by itself has drawn (beams and extrapolation alone start their own work,
    // sqrt-dk and parallel time the device, the lab has no run): the others are waited for.
    const slow = ['beams', 'extrapolation', 'lab', 'parallel', 'sqrt-dk'];
    await page.waitForFunction((skip) => Object.entries(window.__samples).every(([v, s]) => skip.includes(v) || s.drawnAt >= 0), slow, { timeout: 20000 }).catch(() => {});
    await cdp.send('Emulation.setCPUThrottlingRate', { rate: 1 });
    const samples = await page.evaluate(() => window.__samples);
    const report = [];
    const short = [];
    const undrawn = [];
    for (const v of names) {
      const s = samples[v];
      assert.ok(s, `${v}: its frame was painted`);
      const before = s.drawnAt >= 0 ? s.heights.slice(0, s.drawnAt) : s.heights;
      const low = Math.min(...before, Infinity);
      report.push(`${v} ${s.room}px:${low === Infinity ? '-' : low}`);
      if (!s.room) continue;
      // A pixel for rounding.
      if (low < s.room - 1) short.push(`${v}: ${low} px before its picture was drawn, under its reserved ${s.room} px`);
      if (!slow.includes(v) && s.drawnAt < 0) undrawn.push(v);
    }
    console.log(`  room : lowest height before the picture — ${report.join(', ')}`);
    await page.close();
    return { short, undrawn };
  }

  test('every_view_alone_keeps_its_reserved_room_until_its_picture_is_drawn_on_a_slow_start', async () => {
    const names = await (async () => {
      const { page } = await open('embed.html#views=input&play=0');
      const n = await page.evaluate(async () => (await import(new URL('playground.js', location.href).href)).VIEW_NAMES);
      await page.close();
      return n;
    })();
    // The schedule alone as a post holds it (the element), then every view in one page at 1440 px.
    const short = [];
    const undrawn = [];
    for (const [views, element] of [[['schedule'], true], [names, false]]) {
      const r = await sampleRoom(views, { element });
      short.push(...r.short.map((x) => `${views.length > 2 ? 'all' : views.join(',')}: ${x}`));
      undrawn.push(...r.undrawn);
    }
    assert.deepEqual(short, [], 'no view drops below its reserved room before its picture is drawn');
    assert.deepEqual(undrawn, [], 'every view that draws by itself has drawn');
  });

  test('a_still_attention_map_alone_reserves_about_its_own_height_at_390_and_1440_px', async () => {
    // The room the snippet writes (min-height) holds the picture wherever the post's column is,
    // without leaving a short prompt's map a tall empty box below it.
    for (const text of ['cat', 'the cat']) {
      for (const width of [390, 1440]) {
        const { page, errors } = await open(`embed.html#views=attention&chrome=none&play=0&text=${encodeURIComponent(text)}`, { width });
        await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
        const r = await page.evaluate(() => {
          const el = document.querySelector('transformer-playground');
          return { height: el.shadowRoot.querySelector('.view[data-view="attention"]').getBoundingClientRect().height, room: Number(/min-height:(\d+)px/.exec(el.embedSnippet('attention').element)?.[1]) };
        });
        assert.ok(r.room >= r.height, `"${text}", ${width} px: the room ${r.room} px holds the map (${r.height} px)`);
        assert.ok(r.room <= 1.5 * r.height, `"${text}", ${width} px: the room ${r.room} px is not far above the map's ${r.height} px`);
        assert.deepEqual(errors, []);
        await page.close();
      }
    }
  });

  test('the_lab_alone_draws_its_curves_without_a_click_and_its_embed_carries_the_run', async () => {
    const { page, errors } = await open('index.html#views=lab&play=0');
    await page.waitForFunction(() => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-lab')?.formLink, null, { timeout: 60000 });
    // A short run, so the post's lab draws its first steps at once.
    await page.evaluate(() => document.querySelector('transformer-playground').store.patch({ train: 'task=reverse&steps=40&eval_every=20' }));
    const menu = page.locator('transformer-playground .view[data-view="lab"] tp-view-menu');
    await menu.locator('.trigger').click();
    await menu.locator('[data-action="embed"]').click();
    const snippet = await page.locator('tp-embed-dialog [data-embed-snippet]').inputValue();
    assert.match(snippet, /chrome="none"/);
    assert.match(snippet, /preset="[^"]*train=task%3Dreverse/, 'the embed carries the run to train');
    await page.locator('tp-embed-dialog [data-embed-close]').click();
    await page.close();
    const p = await post(snippet, 900);
    // Nobody clicks: the run trains and its loss curve is drawn.
    await p.page.waitForFunction(
      () => {
        const lab = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-lab');
        const plot = lab?.shadowRoot?.querySelector('tp-lab-plot[data-plot="loss"]');
        return lab?.runs?.some((r) => r.log.length >= 2) && plot?.shadowRoot?.querySelector('canvas') && !plot.shadowRoot.querySelector('p.none');
      },
      null,
      { timeout: 30000 },
    );
    assert.deepEqual(p.errors, []);
    assert.deepEqual(errors, []);
    await p.page.close();
  });

  test('the_embed_dialog_passes_axe_and_its_keep_choice_shapes_the_snippet_and_the_preview', async () => {
    const { page, errors } = await open('index.html#views=schedule&play=0');
    const snippet = await embedDialog(page, 'schedule');
    assert.doesNotMatch(snippet, /keep=/);
    // One checkbox per part the view may keep (its contract names).
    const parts = await page.locator('tp-embed-dialog [data-embed-part]').evaluateAll((ns) => ns.map((n) => n.value));
    assert.deepEqual(parts, ['title', 'formula', 'controls', 'menu']);
    await page.locator('tp-embed-dialog [data-embed-part="title"]').check();
    await page.locator('tp-embed-dialog [data-embed-part="controls"]').check();
    const kept = await page.locator('tp-embed-dialog [data-embed-snippet]').inputValue();
    assert.match(kept, /chrome="none" keep="title,controls"/);
    // The preview is the new snippet: its title and warmup field are shown, its formula is not.
    await page.waitForFunction(() => {
      const d = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-embed-dialog');
      const live = d.shadowRoot.querySelector('[data-embed-preview] transformer-playground');
      const v = live?.shadowRoot?.querySelector('tp-schedule')?.shadowRoot;
      const seen = (sel) => { const n = v?.querySelector(sel); return !!n && n.getBoundingClientRect().height > 0; };
      return live?.st.keep.join() === 'title,controls' && seen('h2') && seen('input[type="number"]') && !seen('section > p:not(.muted)');
    }, null, { timeout: 30000 });
    await page.locator('tp-embed-dialog [data-embed-form="iframe"]').check();
    assert.match(await page.locator('tp-embed-dialog [data-embed-snippet]').inputValue(), /chrome=none&amp;keep=title%2Ccontrols/);
    // axe-core over the open dialog (its shadow root included).
    await page.evaluate(AXE);
    const found = await page.evaluate(async () => {
      const d = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-embed-dialog');
      const res = await window.axe.run({ include: [[['transformer-playground', 'tp-embed-dialog', 'dialog']]], exclude: [[['transformer-playground', 'tp-embed-dialog', '[data-embed-preview]']]] }, { resultTypes: ['violations'] });
      return { open: d.shadowRoot.querySelector('dialog').open, checked: res.passes.length, v: res.violations.map((x) => `${x.id} (${x.impact}): ${x.nodes.slice(0, 2).map((n) => n.target.join(' >> ')).join('; ')}`) };
    });
    assert.ok(found.open);
    assert.ok(found.checked > 5, `axe checked the dialog (${found.checked} rules passed)`);
    assert.deepEqual(found.v, [], 'axe finds nothing in the open dialog');
    assert.deepEqual(errors, []);
    await page.close();
  });
});

async function p_click(page, selector) {
  await page.locator(`transformer-playground ${selector}`).first().click();
}
