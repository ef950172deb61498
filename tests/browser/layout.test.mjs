// The page's layout at a phone's width (390 px) and a wide screen's (1440 px), light and
// dark, every view shown (`#views=` with every registered name, the same as `chapter=all`):
// - no text is clipped: in every view's panel no element holding text is wider inside than
//   its box (scrollWidth > clientWidth) unless it is a deliberate scroll container the
//   keyboard can reach (tabindex 0 and a name), and every label of an SVG chart lies inside
//   its chart; the page itself never scrolls sideways;
// - every number printed reads as a number should: no visible text (nor accessible name)
//   holds a decimal with more than six significant digits (`p = 0.10000000149011612`);
// - every view has the same title row: a heading and one "⋯" menu button.
// Screenshots of the whole page at each width land in tests/browser/artifacts/.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, open, serve, shot } from './harness.mjs';

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

/** Every registered view's name, in the registry's order (read from the built page). */
async function viewNames() {
  const { page } = await open(browser.context, server.url, 'play=0&views=input');
  const names = await page.evaluate(async () => (await import('./playground.js')).VIEWS.map((v) => v.name));
  await page.close();
  return names;
}

/** Scroll every view into sight once (views that compute for themselves start when seen), then wait until the page stops changing. */
async function showAll(page) {
  const n = await page.evaluate(() => document.querySelector('transformer-playground').shadowRoot.querySelectorAll('.view').length);
  for (let i = 0; i < n; i++) {
    await page.evaluate((i) => document.querySelector('transformer-playground').shadowRoot.querySelectorAll('.view')[i].scrollIntoView(), i);
    await page.waitForTimeout(60);
  }
  await page.waitForFunction(() => customElements.get('tp-lab') !== undefined || !document.querySelector('transformer-playground').shadowRoot.querySelector('tp-lab'));
  // Every view has drawn its picture, as the page itself judges it (src/views/drawn.ts):
  // what a view unfolds is drawn with its picture (sqrt-dk's table of numbers), and a
  // view still asking the engine would be checked empty.
  await page.waitForFunction(
    () => {
      const el = document.querySelector('transformer-playground');
      return [...el.shadowRoot.querySelectorAll('.view[data-view]')].every((v) => el.drawnViews.has(v.dataset.view));
    },
    null,
    { timeout: 60000 },
  );
  // What a reader can unfold is checked unfolded (the per-position tables, the reasons).
  await page.evaluate(() => {
    const open = (root) => {
      for (const e of root.querySelectorAll('*')) {
        if (e.shadowRoot) open(e.shadowRoot);
        if (e instanceof HTMLDetailsElement) e.open = true;
      }
    };
    open(document.querySelector('transformer-playground').shadowRoot);
  });
  // Settled: the page's height unchanged over half a second.
  let last = -1;
  for (let i = 0; i < 40; i++) {
    const h = await page.evaluate(() => document.documentElement.scrollHeight);
    if (h === last) break;
    last = h;
    await page.waitForTimeout(500);
  }
}

/** What is clipped in each view, and the raw floats it prints. */
function inspect(page) {
  return page.evaluate(() => {
    const clipped = [];
    const floats = [];
    const wide = [];
    const el = document.querySelector('transformer-playground');
    const shown = (e) => e.getClientRects().length > 0 && (!e.checkVisibility || e.checkVisibility({ visibilityProperty: true }));
    const ownText = (e) => [...e.childNodes].some((c) => c.nodeType === Node.TEXT_NODE && c.data.trim());
    const where = (e) => {
      const host = e.getRootNode().host?.tagName.toLowerCase() ?? '';
      const cls = e.getAttribute('class') ? `.${e.getAttribute('class').trim().split(/\s+/).join('.')}` : '';
      return `${host} ${e.tagName.toLowerCase()}${cls}`;
    };
    // A decimal with more than six significant digits: digits after the leading zeros.
    const raw = (t) => (t.match(/\d+\.\d+/g) ?? []).filter((m) => m.replace('.', '').replace(/^0+/, '').length > 6);
    const check = (root, view) => {
      for (const e of root.querySelectorAll('*')) {
        if (e.shadowRoot) check(e.shadowRoot, view);
        if (!shown(e)) continue;
        if (e instanceof SVGSVGElement) {
          const box = e.getBoundingClientRect();
          for (const t of e.querySelectorAll('text')) {
            if (!t.textContent.trim() || !shown(t)) continue;
            const r = t.getBoundingClientRect();
            if (r.width === 0) continue;
            if (r.left < box.left - 1 || r.right > box.right + 1 || r.top < box.top - 1 || r.bottom > box.bottom + 1) {
              clipped.push(`${view}: ${where(e)} label "${t.textContent.trim().slice(0, 30)}" outside its chart (${Math.round(r.left - box.left)}…${Math.round(r.right - box.left)} of ${Math.round(box.width)} px wide, ${Math.round(r.top - box.top)}…${Math.round(r.bottom - box.top)} of ${Math.round(box.height)} px high)`);
            }
          }
          continue;
        }
        if (e instanceof SVGElement) continue;
        // Past the right edge of the page (what makes it scroll sideways), unless inside a scroll box.
        const rr = e.getBoundingClientRect();
        if (rr.right > innerWidth + 1 && rr.width > 0 && ![...e.children].some((k) => k.getBoundingClientRect().right > innerWidth + 1)) {
          let inScroller = false;
          for (let a = e.parentElement ?? e.getRootNode().host; a && a !== el; a = a.parentElement ?? a.getRootNode().host) {
            if (['auto', 'scroll', 'hidden'].includes(getComputedStyle(a).overflowX)) inScroller = true;
          }
          if (!inScroller) wide.push(`${view}: ${where(e)} reaches ${Math.round(rr.right)} px of ${innerWidth}`);
        }
        for (const c of e.childNodes) if (c.nodeType === Node.TEXT_NODE) floats.push(...raw(c.data).map((f) => `${view}: ${where(e)} "${c.data.trim().slice(0, 60)}" (${f})`));
        for (const a of ['aria-label', 'title']) {
          const v = e.getAttribute(a);
          if (v) floats.push(...raw(v).map((f) => `${view}: ${where(e)}[${a}] "${v.slice(0, 60)}" (${f})`));
        }
        if (!e.textContent.trim() || e.scrollWidth <= e.clientWidth + 1) continue;
        // Text for screen readers only, drawn in a 1 px box on purpose (.visually-hidden).
        if (e.clientWidth <= 1 && e.clientHeight <= 1) continue;
        const cs = getComputedStyle(e);
        if (cs.display === 'inline' || cs.display === 'contents') continue;
        const scrolls = cs.overflowX === 'auto' || cs.overflowX === 'scroll';
        const reachable = e.tabIndex >= 0 && e.hasAttribute('tabindex') && (e.getAttribute('aria-label') || e.getAttribute('aria-labelledby'));
        if (scrolls && reachable) continue;
        // Only what holds text, or a box around text, counts: a canvas strip inside a scroller is a picture.
        if (!ownText(e) && !e.querySelector('*')) continue;
        clipped.push(`${view}: ${where(e)} "${e.textContent.trim().replace(/\s+/g, ' ').slice(0, 40)}" is ${e.scrollWidth} px wide in ${e.clientWidth} px (overflow-x ${cs.overflowX}${scrolls ? ', not reachable by keyboard' : ''})`);
      }
    };
    const views = [...el.shadowRoot.querySelectorAll('.view')];
    for (const v of views) check(v, v.dataset.view);
    const menus = views.filter((v) => v.querySelectorAll(':scope > tp-view-menu').length === 1).length;
    return {
      clipped,
      floats,
      wide,
      views: views.length,
      menus,
      sideways: document.documentElement.scrollWidth - document.documentElement.clientWidth,
    };
  });
}

describe('layout', () => {
  for (const width of [390, 1440]) {
    for (const scheme of ['light', 'dark']) {
      test(`no_text_is_clipped_and_no_number_is_raw_in_any_view_at_${width}px_${scheme}`, async () => {
        const names = await viewNames();
        const { page, errors } = await open(browser.context, server.url, `play=0&views=${names.join(',')}`, { viewport: { width, height: 900 }, media: { colorScheme: scheme } });
        await showAll(page);
        const r = await inspect(page);
        await shot(page, `layout-${width}-${scheme}`);
        assert.equal(r.views, names.length, 'every view is drawn');
        assert.equal(r.menus, r.views, 'every view has one ⋯ menu');
        assert.deepEqual(
          { sideways: Math.max(0, r.sideways), wide: r.sideways > 0 ? r.wide : [], clipped: r.clipped, floats: r.floats },
          { sideways: 0, wide: [], clipped: [], floats: [] },
          'the page scrolls sideways (and what reaches past its edge), clipped text, numbers printed with more than six significant digits',
        );
        assert.deepEqual(errors, []);
        await page.close();
      });
    }
  }

  test('the_encoder_decoder_and_the_classifier_clip_nothing_at_390px', async () => {
    const names = await viewNames();
    for (const m of ['translate.safetensors', 'sentiment.safetensors']) {
      const { page, errors } = await open(browser.context, server.url, `play=0&model=${m}&views=${names.join(',')}`, { viewport: { width: 390, height: 900 } });
      await showAll(page);
      const r = await inspect(page);
      assert.deepEqual(
        { sideways: Math.max(0, r.sideways), wide: r.sideways > 0 ? r.wide : [], clipped: r.clipped, floats: r.floats },
        { sideways: 0, wide: [], clipped: [], floats: [] },
        m,
      );
      assert.deepEqual(errors, []);
      await page.close();
    }
  });
});
