// Layout stability for `cargo xtask bench` (a program that prints numbers; it asserts
// nothing): the cumulative layout shift (CLS) of the page (the overview it opens on, and a
// chapter), of one view in embed.html, of the three-widget post example.html with its
// iframe and of a post of three widgets as the embed dialog writes them (three-widget-post.mjs), at 1440 and 390 px, from
// navigation until the page has been live for a few seconds, beside the target (< 0.1).
// CLS as browsers report it: `layout-shift` entries without recent input, summed in
// session windows (gaps under 1 s, windows at most 5 s long), the largest window counts.
//
//   TPLAY_DIST=www/dist node tests/browser/layout-bench.mjs

import { launch, serve } from './harness.mjs';
import { cls, threeWidgetPost } from './three-widget-post.mjs';

const SETTLE_MS = Number(process.env.TPLAY_CLS_SETTLE_MS ?? 4000);
const TARGET = 0.1;

/** Installed before any script of the page: every layout shift, kept on window. */
const OBSERVER = `
  window.__shifts = [];
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      if (!e.hadRecentInput) window.__shifts.push({ t: e.startTime, v: e.value, nodes: (e.sources || []).map((s) => s.node ? (s.node.getRootNode().host?.tagName || '') + ' ' + (s.node.nodeName || '') + '.' + (s.node.className?.baseVal ?? s.node.className ?? '') : '?').slice(0, 3) });
    }
  }).observe({ type: 'layout-shift', buffered: true });
`;

/** Open `path` at `width`, wait for `ready` (a function evaluated in the page or frame) and SETTLE_MS more; the shifts of the top document and of each frame. */
async function measure(context, url, { width, ready, body }) {
  const page = await context.newPage();
  await page.setViewportSize({ width, height: 900 });
  await page.addInitScript(OBSERVER);
  if (body) await page.route(url, (r) => r.fulfill({ contentType: 'text/html', body }));
  await page.goto(url);
  await page.waitForFunction(ready, null, { timeout: 60000 });
  await page.waitForTimeout(SETTLE_MS);
  const top = await page.evaluate(() => window.__shifts);
  const frames = [];
  for (const f of page.frames()) if (f !== page.mainFrame()) frames.push(await f.evaluate(() => window.__shifts ?? []));
  await page.close();
  return { top, frames };
}

const server = await serve();
const browser = await launch({ webgpu: false });
// Every widget in sight has drawn (one further down, as example.html's lesson at 390 px, starts
// only when the reader scrolls towards it: waiting for it timed out, and stopped `cargo xtask bench`).
const readyEl = () => {
  const els = [...document.querySelectorAll('transformer-playground')];
  return els.length > 0 && els.filter((e) => e.getBoundingClientRect().top < innerHeight).every((e) => e.lastForward);
};
const worst = (xs) => xs.reduce((a, b) => (cls(b) > cls(a) ? b : a), []);
const row = (what, shifts) => {
  const v = cls(shifts);
  const where = [...new Set(shifts.flatMap((s) => s.nodes))].slice(0, 4).join(', ');
  console.log(`  ${what.padEnd(44)} ${v.toFixed(3).padStart(7)}   target < ${TARGET}  ${v < TARGET ? 'met' : 'NOT met'}${v > 0 && where ? `   (moved: ${where})` : ''}`);
};
try {
  console.log(`cumulative layout shift (largest session window, ${SETTLE_MS} ms after the page is live)`);
  for (const width of [1440, 390]) {
    const pageRun = await measure(browser.context, `${server.url}index.html`, { width, ready: readyEl });
    row(`the page: the overview (index.html), ${width} px`, pageRun.top);
    const chapter = await measure(browser.context, `${server.url}index.html#chapter=attention`, { width, ready: readyEl });
    row(`a chapter (index.html#chapter=attention), ${width} px`, chapter.top);
    const embed = await measure(browser.context, `${server.url}embed.html#views=attention`, { width, ready: readyEl });
    row(`one view in embed.html (attention), ${width} px`, embed.top);
    const post = await measure(browser.context, `${server.url}example.html`, { width, ready: readyEl });
    row(`the blog post (example.html), ${width} px`, post.top);
    row(`  its iframe of embed.html, ${width} px`, worst(post.frames));
    const three = await measure(browser.context, `${server.url}three-widgets.html`, { width, ready: readyEl, body: threeWidgetPost(server.url) });
    row(`a post with three widgets (chrome=none), ${width} px`, three.top);
  }
} finally {
  await browser.close();
  await server.close();
}
