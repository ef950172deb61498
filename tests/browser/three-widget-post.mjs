// A blog post with three widgets as the "Embed in a post" dialog writes them (the picture
// alone, element form, with the room it writes as the element's min-height; the third
// copied from the page in Chinese, so a Chinese widget on a Chinese model beside two English
// ones), between paragraphs of the author's own text: the page that the
// layout-shift test (no-jumps.test.mjs) and `cargo xtask bench` (layout-bench.mjs) measure.
// Served by the tests beside the build (page.route), so the build ships no test page.

/** The layout-shift observer, installed before any script of the page: every shift, kept on window. */
export const SHIFT_OBSERVER = `
  window.__shifts = [];
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      if (!e.hadRecentInput) window.__shifts.push({ t: e.startTime, v: e.value, nodes: (e.sources || []).map((s) => s.node ? (s.node.getRootNode().host?.tagName || '') + ' ' + (s.node.nodeName || '') + '.' + (s.node.className?.baseVal ?? s.node.className ?? '') : '?').slice(0, 3) });
    }
  }).observe({ type: 'layout-shift', buffered: true });
`;

/** CLS as browsers report it: the largest session window's sum (gaps under 1 s, windows at most 5 s). */
export function cls(shifts) {
  let best = 0;
  let sum = 0;
  let start = -Infinity;
  let prev = -Infinity;
  for (const s of [...shifts].sort((a, b) => a.t - b.t)) {
    if (s.t - prev > 1000 || s.t - start > 5000) {
      sum = 0;
      start = s.t;
    }
    sum += s.v;
    prev = s.t;
    best = Math.max(best, sum);
  }
  return best;
}

const para = (n) => `<p>${'Attention lets every token look at the tokens before it and take a weighted mix of them. '.repeat(n)}</p>`;

/** The post's HTML; `base` is the URL of the built folder (playground.js is there). */
export function threeWidgetPost(base) {
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>How attention masks work</title>
    <style>body { max-width: 720px; margin: 0 auto; padding: 16px; font: 17px/1.6 Georgia, serif; }</style>
    <script type="module" src="${base}playground.js"></script>
  </head>
  <body>
    <h1>How attention masks work</h1>
    ${para(2)}
    <transformer-playground no-hash views="attention" chrome="none" style="display:block;min-height:450px" preset="max=12&amp;speed=40&amp;play=1"></transformer-playground>
    ${para(3)}
    <transformer-playground no-hash views="output" chrome="none" style="display:block;min-height:319px" preset="play=0"></transformer-playground>
    ${para(2)}
    <transformer-playground no-hash views="generation" chrome="none" lang="zh-Hans" style="display:block;min-height:100px" preset="model=zh-grammar-alibi.safetensors&amp;text=%E8%BF%99%E5%8F%AA%E7%8C%AB&amp;speed=40&amp;max=12&amp;play=1"></transformer-playground>
    ${para(4)}
  </body>
</html>`;
}
