// No layout jumps (issue #25): what a reader sees does not move while the page loads and
// generates. On the default page (the overview and the chapter bar), on a chapter
// (`#chapter=attention`) and in an embedded view (embed.html), at 1440 and 390 px, the top
// edge of every view's frame (and of the chapter bar) is recorded at the first frame the
// page paints it — before the engine has answered — and again once a 10-token generation
// has ended: each stays within a few pixels. Measured on layout (element positions), not
// on time; the reader does nothing meanwhile, so no shift here is "caused by input".
// The example post (example.html and its Chinese twin, two elements and an iframe) is
// checked at every frame: no widget, nor the link after them, leaves its first place while
// the widgets load, the framed one generates and the lesson (started once scrolled to)
// runs — the post's reserved rooms (public/post.css) must hold each widget at its tallest.
// `cargo xtask bench` prints the cumulative layout shift of the same pages
// (tests/browser/layout-bench.mjs).

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, serve } from './harness.mjs';

/** Allowed movement of a frame's top edge, in CSS pixels. */
const TOLERANCE = 4;

/**
 * Installed before the page's scripts: on every animation frame, the top edge of each view
 * frame (`.view[data-view]`, or the placeholder holding its place) and of the chapter bar,
 * the first time it is painted; and whether the engine had answered by then.
 */
const RECORD = `
  window.__firstTops = {};
  const tick = () => {
    const el = document.querySelector('transformer-playground');
    const root = el && el.shadowRoot;
    if (root) {
      for (const v of root.querySelectorAll('.view, tp-chapters')) {
        const name = v.tagName === 'TP-CHAPTERS' ? 'chapter bar' : v.dataset.view || v.dataset.viewPlaceholder;
        if (name && !(name in window.__firstTops) && v.getBoundingClientRect().height > 0) {
          window.__firstTops[name] = { top: v.getBoundingClientRect().top + scrollY, live: !!el.lastForward };
        }
      }
    }
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
`;

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

/** Open `path`, wait for the end of its generation (10 tokens), and return the first and the final tops of each frame. */
async function tops(path, width) {
  const page = await browser.context.newPage();
  await page.setViewportSize({ width, height: 900 });
  await page.addInitScript(RECORD);
  await page.goto(server.url + path);
  await page.waitForFunction(
    () => {
      const el = document.querySelector('transformer-playground');
      return el && el.lastForward && el.done && el.generated.length > 0;
    },
    null,
    { timeout: 90000 },
  );
  // Two more frames: whatever the last token set off is drawn.
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  const result = await page.evaluate(() => {
    const el = document.querySelector('transformer-playground');
    const now = {};
    for (const v of el.shadowRoot.querySelectorAll('.view, tp-chapters')) {
      const name = v.tagName === 'TP-CHAPTERS' ? 'chapter bar' : v.dataset.view || v.dataset.viewPlaceholder;
      if (name) now[name] = v.getBoundingClientRect().top + scrollY;
    }
    return { first: window.__firstTops, now, generated: el.generated.length, scrollY };
  });
  await page.close();
  return result;
}

const CASES = [
  { what: 'the default page (the overview and the chapter bar)', path: 'index.html#max=10', expect: ['overview', 'chapter bar'] },
  { what: 'a chapter (attention)', path: 'index.html#chapter=attention&max=10', expect: ['overview', 'chapter bar', 'attention', 'saturation', 'masks'] },
  { what: 'an embedded view (embed.html: attention and generation)', path: 'embed.html#views=attention,generation&max=10', expect: ['attention', 'generation'] },
];

describe('no view moves between its first paint and the end of a generation', () => {
  for (const width of [1440, 390]) {
    for (const c of CASES) {
      test(`${c.what}, ${width} px: every frame's top edge stays within ${TOLERANCE} px`, async () => {
        const r = await tops(c.path, width);
        assert.equal(r.scrollY, 0, 'the page did not scroll by itself');
        assert.ok(r.generated > 0, 'the model generated');
        for (const name of c.expect) {
          assert.ok(name in r.first, `${name} was painted (painted: ${Object.keys(r.first).join(', ')})`);
          assert.equal(r.first[name].live, false, `${name}'s frame was painted before the engine answered (its room reserved)`);
        }
        const moved = Object.keys(r.first)
          .filter((name) => name in r.now)
          .map((name) => ({ name, by: Math.round(r.now[name] - r.first[name].top) }))
          .filter((m) => Math.abs(m.by) > TOLERANCE);
        assert.deepEqual(moved, [], `frames that moved (px): ${moved.map((m) => `${m.name} ${m.by}`).join(', ')}`);
      });
    }
  }
});

describe('a post with three widgets does not jump', () => {
  for (const width of [1440, 390]) {
    test(`three widgets (the picture alone, as the embed dialog writes them, one in Chinese), ${width} px: cumulative layout shift < 0.1`, async () => {
      const { SHIFT_OBSERVER, cls, threeWidgetPost } = await import('./three-widget-post.mjs');
      const page = await browser.context.newPage();
      await page.setViewportSize({ width, height: 900 });
      // Every view any widget ever painted, from the first frame on.
      await page.addInitScript(`${SHIFT_OBSERVER}
        window.__painted = new Set();
        const tick = () => {
          for (const el of document.querySelectorAll('transformer-playground'))
            for (const v of el.shadowRoot?.querySelectorAll('.view, tp-chapters') ?? []) window.__painted.add(v.dataset.view || v.dataset.viewPlaceholder || v.tagName);
          requestAnimationFrame(tick);
        };
        requestAnimationFrame(tick);`);
      const url = `${server.url}three-widgets-${width}.html`;
      await page.route(url, (r) => r.fulfill({ contentType: 'text/html', body: threeWidgetPost(server.url) }));
      await page.goto(url);
      await page.waitForFunction(
        () => {
          const els = [...document.querySelectorAll('transformer-playground')];
          return els.length === 3 && els.every((e) => e.lastForward && !e.playing);
        },
        null,
        { timeout: 90000 },
      );
      await page.waitForTimeout(1000);
      const r = await page.evaluate(() => ({
        shifts: window.__shifts,
        painted: [...window.__painted].sort(),
        views: [...document.querySelectorAll('transformer-playground')].map((e) => [...e.shadowRoot.querySelectorAll('.view')].map((v) => v.dataset.view).join(',')),
        locales: [...document.querySelectorAll('transformer-playground')].map((e) => e.locale),
      }));
      await page.close();
      assert.deepEqual(r.views, ['attention', 'output', 'generation'], 'each widget draws only its own view');
      assert.deepEqual(r.locales, ['en', 'en', 'zh-Hans'], 'the third widget is in Chinese');
      assert.deepEqual(r.painted, ['attention', 'generation', 'output'], 'no widget ever painted a view it was not asked for');
      const v = cls(r.shifts);
      console.log(`# three-widget post, ${width} px: CLS ${v.toFixed(4)}`);
      assert.ok(v < 0.1, `CLS ${v.toFixed(3)} (moved: ${[...new Set(r.shifts.flatMap((s) => s.nodes))].join(', ')})`);
    });
  }
});

/**
 * Installed before the example post's scripts: on every animation frame, the top edge of
 * each of `ids` (the post's widgets and the link after the last), the first time it is
 * laid out and the farthest it has been from there since.
 */
const RECORD_POST = (ids) => `
  window.__post = {};
  const tick = () => {
    for (const id of ${JSON.stringify(ids)}) {
      const e = document.getElementById(id);
      if (!e) continue;
      const top = Math.round(e.getBoundingClientRect().top + scrollY);
      const seen = (window.__post[id] ??= { first: top, worst: 0 });
      if (Math.abs(top - seen.first) > Math.abs(seen.worst)) seen.worst = top - seen.first;
    }
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
`;

describe('the example post does not move while its widgets load, run a lesson and generate', () => {
  const POSTS = [
    { path: 'example.html', ids: ['unmasked', 'framed', 'lesson', 'chinese'] },
    { path: 'example.zh-Hans.html', ids: ['unmasked', 'framed', 'lesson', 'english'] },
  ];
  for (const width of [1440, 390]) {
    for (const post of POSTS) {
      test(`${post.path}, ${width} px: no widget, and not the link after them, moves more than ${TOLERANCE} px at any frame`, async () => {
        const page = await browser.context.newPage();
        await page.setViewportSize({ width, height: 900 });
        await page.addInitScript(RECORD_POST(post.ids));
        await page.goto(server.url + post.path);
        // The first widget live, the framed playground done generating, its frame sized.
        await page.waitForFunction(
          () => {
            const frame = document.getElementById('framed');
            const inner = frame?.contentDocument?.querySelector('transformer-playground');
            return (
              document.getElementById('unmasked')?.lastForward &&
              inner?.lastForward &&
              inner.done &&
              inner.generated.length > 0 &&
              frame.style.height !== ''
            );
          },
          null,
          { timeout: 90000 },
        );
        // The lesson starts when the reader comes near it: scroll to it, and wait for it
        // to answer and run its experiment.
        await page.evaluate(() => document.getElementById('lesson').scrollIntoView());
        await page.waitForFunction(
          () => {
            const e = document.getElementById('lesson');
            return e.lastForward && !e.playing && !e.isUpdatePending;
          },
          null,
          { timeout: 90000 },
        );
        await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
        const seen = await page.evaluate(() => window.__post);
        await page.close();
        for (const id of post.ids) assert.ok(id in seen, `#${id} was laid out`);
        const moved = post.ids.filter((id) => Math.abs(seen[id].worst) > TOLERANCE).map((id) => `#${id} ${seen[id].worst}`);
        assert.deepEqual(moved, [], `moved (px, the farthest from its first place): ${moved.join(', ')}`);
      });
    }
  }
});
