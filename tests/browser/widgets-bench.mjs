// What each widget of a post costs (`cargo xtask bench`): for a post with one, two and
// three <transformer-playground> widgets (every one in sight, as the post is opened with an
// empty cache), the bytes transferred and the time to first picture (the last widget's
// first drawn forward pass, from navigation start); the same with three different models;
// a post whose second and third widgets are below the fold, before the reader scrolls; and
// the main thread's busy share while the widgets sit idle (three views and a lesson, each just
// after they drew and once left alone). Prints numbers, asserts nothing.

import { launch, serve } from './harness.mjs';

const server = await serve();

function postOf(widgets) {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>bench</title></head>
<body style="margin: 0 auto; max-width: 900px">${widgets.join('\n')}
<script type="module" src="./playground.js"></script></body></html>`;
}

const widget = (attrs) => `<transformer-playground no-hash views="attention" preset="play=0" ${attrs}></transformer-playground>`;

/** Open `html` in a fresh browser; the bytes, the widgets' first pictures and the idle busy share. */
async function measure(html, { idleMs = 0, idleLaterMs = 0, scroll = false, settleMs = 0 } = {}) {
  const browser = await launch({ serviceWorkers: 'block' });
  try {
    const { context } = browser;
    await context.route(`${server.url}bench-post.html`, (r) => r.fulfill({ contentType: 'text/html', body: html }));
    const page = await context.newPage();
    const done = [];
    page.on('requestfinished', (req) => done.push(req.sizes().then((s) => ({ url: req.url(), bytes: s.responseBodySize + s.responseHeadersSize }))));
    await page.goto(`${server.url}bench-post.html`);
    const n = (html.match(/<transformer-playground/g) ?? []).length;
    // Widgets in sight must draw; those below the fold must not start.
    await page.waitForFunction(
      () => {
        const els = [...document.querySelectorAll('transformer-playground')];
        return els.filter((e) => e.getBoundingClientRect().top < innerHeight).every((e) => e.lastForward);
      },
      undefined,
      { timeout: 120000 },
    );
    await page.waitForTimeout(300);
    const at = await page.evaluate(() => [...document.querySelectorAll('transformer-playground')].map((e) => e.readyAt));
    const sizes = await Promise.all(done);
    const bytes = sizes.reduce((a, s) => a + s.bytes, 0);
    const models = sizes.filter((s) => s.url.endsWith('.safetensors')).length;
    let busy = null;
    let later = null;
    if (settleMs) await page.waitForTimeout(settleMs);
    if (idleMs) {
      const cdp = await context.newCDPSession(page);
      await cdp.send('Performance.enable');
      const task = async () => (await cdp.send('Performance.getMetrics')).metrics.find((m) => m.name === 'TaskDuration').value;
      const t0 = await task();
      await page.waitForTimeout(idleMs);
      const t1 = await task();
      busy = (t1 - t0) * 1000 / idleMs;
      if (idleLaterMs) {
        await page.waitForTimeout(idleLaterMs);
        later = ((await task()) - t1) * 1000 / idleLaterMs;
      }
    }
    const workers = page.workers().length;
    let scrolled = null;
    if (scroll) {
      const before = sizes.length;
      await page.evaluate(() => [...document.querySelectorAll('transformer-playground')].at(-1).scrollIntoView());
      await page.waitForFunction(() => [...document.querySelectorAll('transformer-playground')].every((e) => e.lastForward), undefined, { timeout: 120000 });
      const all = await Promise.all(done);
      scrolled = all.slice(before).reduce((a, s) => a + s.bytes, 0);
    }
    return { n, bytes, at, models, busy, later, workers, scrolled };
  } finally {
    await browser.close();
  }
}

const kb = (b) => `${(b / 1024).toFixed(1)} KiB`;
const ms = (t) => (t === null || t === undefined ? '—' : `${t.toFixed(0)} ms`);

console.log('\nWidgets in a post (empty cache, every widget in sight; bytes as sent by the test server, uncompressed):');
let prev = null;
for (const n of [1, 2, 3]) {
  const r = await measure(postOf(Array.from({ length: n }, () => widget('load="eager"'))), { idleMs: n === 3 ? 5000 : 0, idleLaterMs: n === 3 ? 5000 : 0 });
  const more = prev ? ` (+${kb(r.bytes - prev.bytes)} over ${n - 1})` : '';
  console.log(
    `  ${n} widget${n > 1 ? 's' : ' '}, one model: ${kb(r.bytes)}${more}; first picture ${ms(Math.min(...r.at))}, last ${ms(Math.max(...r.at))}; ${r.models} checkpoint fetch(es), ${r.workers} worker(s)`,
  );
  if (r.busy !== null)
    console.log(
      `  idle: the main thread busy ${(r.busy * 100).toFixed(2)} % in the 5 s after three widgets drew (each looks at its frames every animation frame for 5 s after its first answer, src/views/drawn.ts), ${(r.later * 100).toFixed(2)} % in the 5 s after that`,
    );
  prev = r;
}
{
  const one = await measure(postOf([widget('load="eager"')]));
  const files = ['grammar-alibi.safetensors', 'reverse.safetensors', 'sentiment.safetensors'];
  const r = await measure(postOf(files.map((f) => widget(`load="eager" model="${f}"`))));
  console.log(`  3 widgets, three models: ${kb(r.bytes)} (+${kb(r.bytes - one.bytes)} over 1 widget: mostly the two other checkpoints); last picture ${ms(Math.max(...r.at))}`);
}
{
  const html = postOf([widget(''), '<div style="height: 4000px"></div>', widget('lang="zh-Hans"'), widget('')]);
  const r = await measure(html, { scroll: true });
  console.log(`  3 widgets, 2 below the fold: ${kb(r.bytes)} before scrolling (${r.models} checkpoint), +${kb(r.scrolled)} once scrolled to them (a Chinese widget's model and strings)`);
}
{
  const lesson = postOf(['<transformer-playground no-hash lesson="kv-cache" load="eager"></transformer-playground>']);
  const soon = await measure(lesson, { idleMs: 5000 });
  const later = await measure(lesson, { idleMs: 5000, settleMs: 31000 });
  console.log(
    `  idle: a lesson widget (lesson="kv-cache"): the main thread busy ${(soon.busy * 100).toFixed(2)} % in its first seconds (its panel checks the lesson's step twice a second), ${(later.busy * 100).toFixed(2)} % once left alone for 30 s`,
  );
}
await server.close();
