// Accessibility in headless Chromium: axe-core (the npm package) checks every view — with
// a decoder, an encoder-decoder and an encoder-only model, in the light and the dark
// theme, each chapter's views on their own (www/src/views/chapters.ts), and the iframe and
// blog-post embeddings — and finds no serious or critical violation; the keyboard reaches
// every control with a visible focus ring; each view's "⋯" menu works as a menu button
// (Enter, arrows, Escape, focus back); every chart (canvas or SVG) carries a text
// alternative or sits inside a control that has one.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { launch, open, root, serve } from './harness.mjs';

const require = createRequire(join(root, 'www/package.json'));
const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

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

/** axe-core over the whole document (open shadow roots included); violations by impact. */
async function axe(page) {
  // Evaluated through the debugging protocol, so no script element enters the page.
  await page.evaluate(AXE);
  const r = await page.evaluate(async () => {
    const res = await window.axe.run(document, { resultTypes: ['violations'] });
    return res.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 3).map((n) => n.target.join(' >> ')) }));
  });
  return { serious: r.filter((v) => v.impact === 'serious' || v.impact === 'critical'), other: r.filter((v) => v.impact !== 'serious' && v.impact !== 'critical') };
}

const MODELS = ['', 'model=translate.safetensors', 'model=sentiment.safetensors'];

/** Each chapter's name and views, read from the source (www/src/views/chapters.ts). */
const CHAPTERS = [...readFileSync(join(root, 'www/src/views/chapters.ts'), 'utf8').matchAll(/name: '([a-z-]+)',[\s\S]*?views: \[([^\]]*)\]/g)].map((m) => ({
  name: m[1],
  views: [...m[2].matchAll(/'([a-z-]+)'/g)].map((v) => v[1]),
}));

describe('accessibility', () => {
  for (const scheme of ['light', 'dark']) {
    test(`axe_finds_no_serious_violation_in_any_view_of_any_architecture_${scheme}`, async () => {
      for (const m of MODELS) {
        const { page, errors } = await open(browser.context, server.url, ['chapter=all&play=0', m].filter(Boolean).join('&'), { media: { colorScheme: scheme } });
        const views = await page.evaluate(() => [...document.querySelector('transformer-playground').shadowRoot.querySelectorAll('.view')].map((v) => v.dataset.view));
        assert.ok(views.length >= 9, `views drawn: ${views}`);
        const r = await axe(page);
        if (r.other.length) console.log(`${scheme} ${m || 'default model'}: minor/moderate: ${r.other.map((v) => `${v.id} (${v.impact})`).join(', ')}`);
        assert.deepEqual(r.serious, [], `${scheme}, ${m || 'the default model'}`);
        assert.deepEqual(errors, []);
        await page.close();
      }
    });
  }

  for (const scheme of ['light', 'dark']) {
    test(`axe_finds_no_serious_violation_in_any_chapter_${scheme}`, async () => {
      assert.ok(CHAPTERS.length >= 7, `chapters read: ${CHAPTERS.map((c) => c.name)}`);
      for (const c of CHAPTERS) {
        const { page, errors } = await open(browser.context, server.url, `play=0&views=${c.views.join(',')}`, { media: { colorScheme: scheme } });
        // Every view seen once (some draw what they measure only when seen), then checked.
        for (const v of c.views) await page.locator(`transformer-playground .view[data-view="${v}"]`).scrollIntoViewIfNeeded();
        if (c.views.includes('lab')) await page.waitForFunction(() => customElements.get('tp-lab') !== undefined);
        await page.waitForTimeout(300);
        const r = await axe(page);
        if (r.other.length) console.log(`${scheme} chapter ${c.name}: minor/moderate: ${r.other.map((v) => `${v.id} (${v.impact})`).join(', ')}`);
        assert.deepEqual(r.serious, [], `${scheme}, chapter ${c.name}`);
        assert.deepEqual(errors, []);
        await page.close();
      }
    });
  }

  test('each_views_menu_opens_moves_and_closes_from_the_keyboard_and_gives_the_focus_back', async () => {
    const { page, errors } = await open(browser.context, server.url, 'play=0&views=input,attention');
    const view = page.locator('transformer-playground .view[data-view="attention"]');
    const button = view.getByRole('button', { name: /pictures and link/ });
    /** The focused element's text (through shadow roots) and whether the menu is open. */
    const state = () =>
      page.evaluate(() => {
        let a = document.activeElement;
        while (a?.shadowRoot?.activeElement) a = a.shadowRoot.activeElement;
        const menu = document.querySelector('transformer-playground').shadowRoot.querySelector('.view[data-view="attention"] > tp-view-menu');
        const trigger = menu.shadowRoot.querySelector('.trigger');
        return { focus: a?.getAttribute('role') === 'menuitem' ? a.textContent.trim() : a === trigger ? 'button' : a?.tagName, open: trigger.getAttribute('aria-expanded') === 'true', menuShown: !menu.shadowRoot.querySelector('[role="menu"]').hidden };
      });
    await button.focus();
    assert.deepEqual(await state(), { focus: 'button', open: false, menuShown: false });
    await page.keyboard.press('Enter');
    assert.deepEqual(await state(), { focus: 'Save as SVG', open: true, menuShown: true }, 'Enter opens on the first entry');
    await page.keyboard.press('ArrowDown');
    assert.equal((await state()).focus, 'Save as PNG');
    await page.keyboard.press('End');
    assert.equal((await state()).focus, 'Embed in a post');
    await page.keyboard.press('ArrowDown');
    assert.equal((await state()).focus, 'Save as SVG', '↓ wraps round');
    await page.keyboard.press('Escape');
    assert.deepEqual(await state(), { focus: 'button', open: false, menuShown: false }, 'Escape closes and the focus is back on the button');
    await page.keyboard.press('ArrowUp');
    assert.deepEqual(await state(), { focus: 'Embed in a post', open: true, menuShown: true }, '↑ opens on the last entry');
    await page.keyboard.press('ArrowUp');
    assert.equal((await state()).focus, 'Copy link');
    // Choosing with the keyboard acts, closes, and says what it did (no clipboard here: the link itself).
    await page.keyboard.press('Enter');
    assert.deepEqual(await state(), { focus: 'button', open: false, menuShown: false });
    const link = await page.evaluate(() => document.querySelector('transformer-playground').linkTo('attention'));
    await view.getByRole('status').filter({ hasText: /Link copied\.|#/ }).waitFor();
    const said = (await view.locator('tp-view-menu .said').textContent()).trim();
    assert.ok(said === 'Link copied.' || said === link, `the menu says ${said}`);
    // A click elsewhere closes an open menu.
    await button.click();
    assert.equal((await state()).open, true);
    await page.locator('transformer-playground tp-input').click({ position: { x: 5, y: 5 } });
    assert.equal((await state()).open, false);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('axe_finds_no_serious_violation_in_the_embeddings', async () => {
    const page = await browser.context.newPage();
    await page.goto(`${server.url}example.html`);
    await page.waitForFunction(() => document.getElementById('unmasked')?.lastForward);
    const frame = page.frame({ url: /embed\.html/ });
    await frame.waitForFunction(() => document.querySelector('transformer-playground')?.lastForward);
    assert.deepEqual((await axe(page)).serious, [], 'the blog post with a widget');
    await frame.evaluate(AXE);
    const inFrame = await frame.evaluate(async () => (await window.axe.run(document)).violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id));
    assert.deepEqual(inFrame, [], 'embed.html inside its frame');
    await page.close();
  });

  test('the_keyboard_reaches_every_control_with_a_visible_focus_ring', async () => {
    const { page, errors } = await open(browser.context, server.url, 'chapter=all&play=0');
    await page.locator('body').click({ position: { x: 2, y: 2 } });
    const seen = [];
    const bad = [];
    for (let i = 0; i < 400; i++) {
      await page.keyboard.press('Tab');
      const f = await page.evaluate(() => {
        let a = document.activeElement;
        while (a?.shadowRoot?.activeElement) a = a.shadowRoot.activeElement;
        if (!a || a === document.body) return null;
        const cs = getComputedStyle(a);
        const ring = (cs.outlineStyle !== 'none' && parseFloat(cs.outlineWidth) > 0) || cs.boxShadow !== 'none';
        // The SVG blocks of the diagram draw their focus as a thicker, coloured outline.
        const svgRing = a instanceof SVGElement && [...a.querySelectorAll('rect')].some((r) => parseFloat(getComputedStyle(r).strokeWidth) >= 3);
        const host = a.getRootNode().host?.tagName.toLowerCase() ?? '';
        const name = a.getAttribute('aria-label') || a.textContent.trim().slice(0, 30) || a.tagName;
        return { id: `${host} ${a.tagName.toLowerCase()} ${name}`, ring: ring || svgRing };
      });
      if (!f) continue;
      if (seen.includes(f.id)) {
        if (f.id === seen[0]) break; // came round again
        continue;
      }
      seen.push(f.id);
      if (!f.ring) bad.push(f.id);
    }
    const hosts = new Set(seen.map((s) => s.split(' ')[0]));
    for (const h of ['tp-controls', 'tp-input', 'tp-generation', 'tp-architecture', 'tp-attention', 'tp-output', 'tp-cost', 'tp-schedule']) {
      assert.ok(hosts.has(h), `the keyboard reaches ${h} (reached ${[...hosts].join(', ')})`);
    }
    assert.ok(seen.some((s) => s.includes('pictures and link')), "each view's ⋯ menu is reachable");
    assert.deepEqual(bad, [], 'every focused control shows where the focus is');
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('every_chart_has_a_text_alternative', async () => {
    for (const m of MODELS) {
      const { page, errors } = await open(browser.context, server.url, ['chapter=all&play=0', m].filter(Boolean).join('&'));
      const missing = await page.evaluate(() => {
        const out = [];
        const walk = (root) => {
          for (const el of root.querySelectorAll('*')) {
            if (el.shadowRoot) walk(el.shadowRoot);
            if (!(el instanceof HTMLCanvasElement) && !(el instanceof SVGSVGElement)) continue;
            const labelled = (e) => e.getAttribute('aria-label') || e.getAttribute('aria-labelledby');
            if (labelled(el) && (el.getAttribute('role') === 'img' || el.getAttribute('role') === 'group' || el.getAttribute('role') === 'grid')) continue;
            // Decorative inside a control that names it (a head thumbnail in its button).
            const hidden = el.closest('[aria-hidden="true"]');
            const control = el.closest('button, [role="button"], a');
            if (hidden && control && (labelled(control) || control.textContent.trim())) continue;
            // Decorative under a labelled grid whose cells are the text (the colours drawn
            // under the attention map's and the mask's cells, each cell labelled).
            const chart = el.parentElement?.closest('[role="grid"], [role="group"]');
            if (hidden && chart && labelled(chart) && chart.querySelector('[aria-label][data-i]')) continue;
            out.push(`${el.getRootNode().host?.tagName.toLowerCase()} ${el.tagName.toLowerCase()}.${el.getAttribute('class') ?? ''}`);
          }
        };
        walk(document);
        return out;
      });
      assert.deepEqual(missing, [], m || 'the default model');
      assert.deepEqual(errors, []);
      await page.close();
    }
  });
});
