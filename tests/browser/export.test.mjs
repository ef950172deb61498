// Pictures out: every registered view exports as an SVG (its HTML in a foreignObject, the
// caption as SVG text) and a PNG, with its title, the model and the settings in the
// caption and the numbers it draws inside; "Copy link" gives a link that reopens that
// view alone with the same settings. The exported SVGs are drawn in Chromium on their own
// and saved to artifacts/ to look at.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { artifacts, dist, launch, open, serve } from './harness.mjs';

let server;
let browser;
before(async () => {
  server = await serve(dist, { csp: true });
  browser = await launch({ webgpu: false });
  await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url.replace(/\/$/, '') });
});
after(async () => {
  await browser?.close();
  await server?.close();
  // Everything above ran under the page's Content-Security-Policy without one violation.
  assert.deepEqual(server?.cspReports ?? [], []);
});

/**
 * Draw an SVG document in the page as an image (which fails for a document that is not
 * well-formed XML); how many distinct colours it has, and its text without the markup.
 */
async function drawSvg(page, svg) {
  const r = await page.evaluate(async (svg) => {
    const img = new Image();
    img.src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`;
    try {
      await img.decode();
    } catch (e) {
      return { error: `the SVG does not draw: ${e}` };
    }
    const c = document.createElement('canvas');
    c.width = img.naturalWidth;
    c.height = img.naturalHeight;
    const ctx = c.getContext('2d');
    ctx.drawImage(img, 0, 0);
    const d = ctx.getImageData(0, 0, c.width, c.height).data;
    const colours = new Set();
    for (let i = 0; i < d.length; i += 4 * 7) colours.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
    return { error: null, width: c.width, height: c.height, colours: colours.size };
  }, svg);
  const unescape = (t) => t.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&amp;/g, '&');
  return { ...r, text: unescape(svg.replace(/<[^>]*>/g, ' ')) };
}

describe('pictures and links', () => {
  test('every_view_exports_an_svg_that_parses_draws_and_captions_the_model_and_settings', async () => {
    const { page, errors } = await open(browser.context, server.url, 'chapter=all&play=0&causal=0&text=the%20dog');
    // The lab loads its code when it first comes into sight. Views above it still grow as
    // they draw (a frame after the page's first), so keep scrolling to it as a reader would.
    await page.waitForFunction(() => {
      document.querySelector('transformer-playground').shadowRoot.querySelector('tp-lab')?.scrollIntoView();
      return customElements.get('tp-lab') !== undefined;
    });
    const { names, title, tags } = await page.evaluate(async () => {
      const { VIEWS } = await import('./playground.js');
      const el = document.querySelector('transformer-playground');
      return {
        names: VIEWS.map((v) => v.name).filter((n) => el.store.shownViews.includes(n) && el.shadowRoot.querySelector(`.view[data-view="${n}"]`)),
        title: el.manifest.find((m) => m.file === el.st.model).title,
        tags: Object.fromEntries(VIEWS.map((v) => [v.name, v.tag])),
      };
    });
    assert.ok(names.length >= 10, `views drawn: ${names}`);
    for (const name of names) {
      // A view fetched when first seen (the tokenizer) is scrolled to, as a reader would, and
      // waited for. (The predicate is synchronous: playwright takes a promise for a truthy answer.)
      await page.waitForFunction(
        ([n, tag]) => {
          const el = document.querySelector('transformer-playground');
          const box = el.shadowRoot.querySelector(`.view[data-view="${n}"]`);
          box.scrollIntoView();
          const view = box.querySelector(tag);
          return customElements.get(tag) !== undefined && view?.shadowRoot?.childElementCount > 0 && (n !== 'tokenizer' || view.shadowRoot.querySelector('[data-tokens]') !== null);
        },
        [name, tags[name]],
      );
      const svg = await page.evaluate((n) => document.querySelector('transformer-playground').picture(n).svg, name);
      const r = await drawSvg(page, svg);
      assert.equal(r.error, null, `${name}: the SVG parses`);
      assert.ok(r.colours > 3, `${name}: the picture is drawn, not blank (${r.colours} colours)`);
      assert.ok(r.text.includes(title), `${name}: the caption names the model`);
      assert.ok(r.text.includes('input "the dog"') && r.text.includes('causal=0'), `${name}: the caption has the settings`);
      assert.ok(!/Copy link|Save as SVG|⋯/.test(r.text), `${name}: the view's menu is not in the picture`);
      writeFileSync(join(artifacts, `export-${name}.svg`), svg);
    }
    // The numbers drawn are in the picture: the cost view's parameter total, the attention
    // map's canvases as images.
    const total = await page.evaluate(() => document.querySelector('transformer-playground').info.params.toLocaleString('en-US'));
    assert.ok(readFileSync(join(artifacts, 'export-cost.svg'), 'utf8').includes(total), `the cost picture shows ${total} parameters`);
    assert.ok(readFileSync(join(artifacts, 'export-attention.svg'), 'utf8').includes('<img src="data:image/png;base64,'), 'the head thumbnails (canvases) are in the picture');
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('the_menus_svg_and_png_entries_download_the_picture_and_copy_link_reopens_the_view_with_its_settings', async () => {
    const { page, errors } = await open(browser.context, server.url, 'play=0&scale=0&layer=1&head=2&views=input,attention,output', { media: { colorScheme: 'dark' } });
    const view = page.locator('transformer-playground .view[data-view="attention"]');
    /** Open the view's "⋯" menu and choose an entry. */
    const choose = async (name) => {
      await view.getByRole('button', { name: /pictures and link/ }).click();
      await view.getByRole('menuitem', { name }).click();
    };
    const [svgFile] = await Promise.all([page.waitForEvent('download'), choose('Save as SVG')]);
    assert.match(svgFile.suggestedFilename(), /^attention-grammar-[a-z-]+\.svg$/);
    const svgPath = join(artifacts, 'export-attention-dark.svg');
    await svgFile.saveAs(svgPath);
    const svg = readFileSync(svgPath, 'utf8');
    assert.ok(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"'));
    assert.ok(svg.includes('scale=0') && svg.includes('layer 2') && svg.includes('head 3'), 'the caption counts layers and heads from 1, as the view does');
    assert.ok(!svg.includes('Save as SVG') && !svg.includes('⋯'), 'the menu is not in the picture');
    const [pngFile] = await Promise.all([page.waitForEvent('download'), choose('Save as PNG')]);
    const png = readFileSync(await pngFile.path());
    assert.equal(png.subarray(1, 4).toString(), 'PNG');
    const w = png.readUInt32BE(16);
    const box = await page.locator('transformer-playground tp-attention').boundingBox();
    assert.ok(Math.abs(w - 2 * box.width) <= 4, `the PNG is drawn at twice the size (${w} px for ${box.width} CSS px)`);
    writeFileSync(join(artifacts, 'export-attention-dark.png'), png);

    // Copy link, then open it: only that view, the same settings.
    await choose('Copy link');
    await view.getByText('Link copied.').waitFor();
    const link = await page.evaluate(() => navigator.clipboard.readText());
    assert.equal(link, await page.evaluate(() => document.querySelector('transformer-playground').linkTo('attention')));
    const again = await browser.context.newPage();
    await again.goto(link);
    await again.waitForFunction(() => document.querySelector('transformer-playground')?.lastForward);
    const st = await again.evaluate(() => {
      const el = document.querySelector('transformer-playground');
      return { views: el.st.views, scale: el.st.scale, layer: el.st.layer, head: el.st.head, tags: [...el.shadowRoot.querySelectorAll('.view > :first-child')].map((n) => n.tagName.toLowerCase()) };
    });
    assert.deepEqual(st, { views: ['attention'], scale: false, layer: 1, head: 2, tags: ['tp-attention'] });
    // The saved SVG, opened on its own as a reader's browser would: a screenshot to look at.
    const viewer = await browser.context.newPage();
    const size = svg.match(/width="(\d+)" height="(\d+)"/);
    await viewer.setViewportSize({ width: Number(size[1]), height: Number(size[2]) });
    await viewer.goto(`file://${svgPath}`);
    await viewer.screenshot({ path: join(artifacts, 'export-attention-dark-opened.png') });
    assert.deepEqual(errors, []);
    for (const p of [page, again, viewer]) await p.close();
  });
});
