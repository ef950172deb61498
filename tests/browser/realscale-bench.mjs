// Every view at real scale, timed (prints numbers, asserts nothing): a random GPT-2-shaped
// folder (./random-gpt2.mjs; by default 12 layers × 12 heads, d_model 96, 1,024 positions,
// 50,257 tokens; `--d 768` for GPT-2 small's width) loaded through the engine's loadHf, then
// each view shown alone (`views=<name>`): the load (`load ms`: the engine's loadHf, the page's
// first forward pass and the drawing it sets off), then the time until the view's elements
// stop changing (`then ms`: the last change before 600 ms without one, after it is scrolled
// into sight; work the view asks for once seen), their sum, and its element count. Then every view at once
// (`chapter=all`). Run: TPLAY_DIST=… TPLAY_CHROMIUM=… node tests/browser/realscale-bench.mjs [--d N] [--views a,b]

import { launch, open, serve } from './harness.mjs';
import { elementCounts, loadRouted, MEDIUM, randomGpt2, serveFolder } from './random-gpt2.mjs';

const arg = (name) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const shape = { ...MEDIUM, d: Number(arg('d') ?? MEDIUM.d) };
const server = await serve();
const browser = await launch();
const t0 = performance.now();
const folder = await serveFolder(randomGpt2(shape));
const keys = folder.keys;
console.log(`random GPT-2 ${shape.layers}×${shape.heads}, d_model ${shape.d}, ${shape.positions} positions, ${shape.vocab} tokens: made in ${(performance.now() - t0).toFixed(0)} ms`);

/** Milliseconds from now until the elements under the view stop changing for `quiet` ms. */
async function settle(page, view, quiet = 600, limit = 60000) {
  return page.evaluate(
    async ([view, quiet, limit]) => {
      const el = document.querySelector('transformer-playground');
      const t = performance.now();
      let last = t;
      const count = (root) => {
        let n = 0;
        for (const e of root.querySelectorAll('*')) {
          n++;
          if (e.shadowRoot) n += count(e.shadowRoot);
        }
        return n;
      };
      const box = () => (view === '*' ? el.shadowRoot : el.shadowRoot.querySelector(`.view[data-view="${view}"]`));
      const obs = new MutationObserver(() => (last = performance.now()));
      const watch = (root) => {
        obs.observe(root, { subtree: true, childList: true, attributes: true, characterData: true });
        for (const e of root.querySelectorAll('*')) if (e.shadowRoot) watch(e.shadowRoot);
      };
      const b = box();
      if (b) {
        b.scrollIntoView?.();
        watch(b);
      }
      let watched = b ? count(b) : 0;
      while (performance.now() - last < quiet && performance.now() - t < limit) {
        await new Promise((r) => setTimeout(r, 50));
        // Shadow roots made since (a view's parts drawn late) are watched too.
        const n = b ? count(b) : 0;
        if (n !== watched) {
          watched = n;
          last = performance.now();
          watch(b);
        }
      }
      obs.disconnect();
      return last - t;
    },
    [view, quiet, limit],
  );
}

const names = arg('views')?.split(',') ?? (await (async () => {
  const { page } = await open(browser.context, server.url, 'play=0&chapter=all');
  const v = await page.evaluate(() => [...document.querySelector('transformer-playground').shadowRoot.querySelectorAll('.view[data-view]')].map((e) => e.dataset.view));
  await page.close();
  return v;
})());

const rows = [];
for (const name of names) {
  const { page, errors } = await open(browser.context, server.url, `play=0&views=${name}`);
  const load = await loadRouted(page, folder.url, keys);
  const draw = await settle(page, name);
  const counts = await elementCounts(page);
  rows.push({ view: name, load_ms: Math.round(load), draw_ms: Math.round(draw), total_ms: Math.round(load + draw), elements: counts.per[name] ?? 0, errors: errors.length });
  await page.close();
}
{
  const { page, errors } = await open(browser.context, server.url, 'play=0&chapter=all');
  const load = await loadRouted(page, folder.url, keys);
  const height = await page.evaluate(() => document.documentElement.scrollHeight);
  for (let y = 0; y < height; y += 800) await page.evaluate((y) => scrollTo(0, y), y);
  const draw = await settle(page, '*', 1000, 120000);
  const counts = await elementCounts(page);
  rows.push({ view: 'all', load_ms: Math.round(load), draw_ms: Math.round(draw), total_ms: Math.round(load + draw), elements: counts.total, errors: errors.length });
  await page.close();
}
console.log('view'.padEnd(18), 'load ms'.padStart(8), 'then ms'.padStart(8), 'total ms'.padStart(9), 'elements'.padStart(9), 'errors'.padStart(7));
for (const r of rows) console.log(r.view.padEnd(18), String(r.load_ms).padStart(8), String(r.draw_ms).padStart(8), String(r.total_ms).padStart(9), String(r.elements).padStart(9), String(r.errors).padStart(7));
await browser.close();
await server.close();
await folder.close();
