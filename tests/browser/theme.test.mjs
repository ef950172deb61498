// Dark mode and reduced motion in headless Chromium: the page follows the system's colour
// scheme, the reader's own choice overrides it (remembered, kept out of links), every
// view's text keeps its contrast in both themes, and a system that asks for reduced motion
// gets no playback on load. Screenshots of both themes land in artifacts/.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { dist, launch, open, serve, shot } from './harness.mjs';

let server;
let browser;
before(async () => {
  server = await serve(dist, { csp: true });
  browser = await launch({ webgpu: false });
});
after(async () => {
  await browser?.close();
  await server?.close();
  // Everything above ran under the page's Content-Security-Policy without one violation.
  assert.deepEqual(server?.cspReports ?? [], []);
});

/**
 * For every view's card: its background, and the worst WCAG contrast ratio between the
 * colour of any text inside it and that background.
 */
function cards(page) {
  return page.evaluate(() => {
    const rgb = (c) => (c.match(/[\d.]+/g) ?? []).slice(0, 4).map(Number);
    const lum = ([r, g, b]) => {
      const f = (v) => ((v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
      return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
    };
    const ratio = (a, b) => (Math.max(lum(a), lum(b)) + 0.05) / (Math.min(lum(a), lum(b)) + 0.05);
    const root = document.querySelector('transformer-playground').shadowRoot;
    const out = [];
    for (const view of root.querySelectorAll('.layout > .view > :first-child')) {
      const card = view.shadowRoot?.querySelector('.card');
      if (!card) continue;
      const bg = rgb(getComputedStyle(card).backgroundColor);
      let worst = Infinity;
      let what = '';
      const walk = (node) => {
        for (const el of node.querySelectorAll('h2, p, label, td, th, li, span, button, summary')) {
          if (!el.textContent.trim() || el.closest('[aria-hidden="true"]')) continue;
          const cs = getComputedStyle(el);
          if (cs.visibility === 'hidden' || cs.display === 'none') continue;
          // Text on its own filled background (chips, highlighted cells) is judged there.
          let own = null;
          for (let e = el; e && e !== card; e = e.parentElement) {
            const b = rgb(getComputedStyle(e).backgroundColor);
            if (b.length === 4 ? b[3] > 0.5 : b.length === 3) {
              own = b;
              break;
            }
          }
          if (getComputedStyle(el).backgroundImage !== 'none') continue;
          const r = ratio(rgb(cs.color), own ?? bg);
          if (r < worst) {
            worst = r;
            what = `${el.tagName.toLowerCase()} "${el.textContent.trim().slice(0, 30)}"`;
          }
        }
      };
      walk(card);
      out.push({ view: view.tagName.toLowerCase(), bg, worst, what });
    }
    return out;
  });
}

const dark = (bg) => bg[0] + bg[1] + bg[2] < 3 * 60;

describe('colour themes', () => {
  test('with_a_dark_system_scheme_every_view_is_dark_and_its_text_keeps_contrast', async () => {
    const { page, errors } = await open(browser.context, server.url, 'chapter=all&play=0', { media: { colorScheme: 'dark' } });
    const cs = await cards(page);
    assert.ok(cs.length >= 8, `found ${cs.length} view cards`);
    for (const c of cs) {
      assert.ok(dark(c.bg), `${c.view} has a dark card (${c.bg})`);
      assert.ok(c.worst >= 4.5, `${c.view}: ${c.what} has contrast ${c.worst.toFixed(2)} < 4.5`);
    }
    await shot(page, 'theme-dark');
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('with_a_light_system_scheme_every_view_is_light_and_its_text_keeps_contrast', async () => {
    const { page, errors } = await open(browser.context, server.url, 'chapter=all&play=0', { media: { colorScheme: 'light' } });
    for (const c of await cards(page)) {
      assert.ok(!dark(c.bg), `${c.view} has a light card (${c.bg})`);
      assert.ok(c.worst >= 4.5, `${c.view}: ${c.what} has contrast ${c.worst.toFixed(2)} < 4.5`);
    }
    await shot(page, 'theme-light');
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('the_theme_switch_overrides_the_system_is_remembered_and_stays_out_of_the_link', async () => {
    const { page, errors } = await open(browser.context, server.url, 'chapter=all&play=0', { media: { colorScheme: 'light' } });
    await page.getByLabel('colour theme').selectOption('dark');
    await page.waitForFunction(() => document.querySelector('transformer-playground').getAttribute('theme') === 'dark');
    assert.ok(dark((await cards(page))[0].bg), 'the switch turned the views dark');
    assert.ok(!(await page.evaluate(() => location.hash)).includes('theme'), 'the reader\'s own choice is not written into links');
    // A fresh visit without any setting in its link keeps the choice.
    const again = await open(browser.context, server.url, 'chapter=all&play=0', { media: { colorScheme: 'light' } });
    assert.equal(await again.page.evaluate(() => document.querySelector('transformer-playground').getAttribute('theme')), 'dark');
    // A link that asks for a theme wins over the remembered one.
    const linked = await open(browser.context, server.url, 'chapter=all&play=0&theme=light', { media: { colorScheme: 'dark' } });
    assert.equal(await linked.page.evaluate(() => document.querySelector('transformer-playground').getAttribute('theme')), 'light');
    assert.ok(!dark((await cards(linked.page))[0].bg));
    // Back to the system's choice: the attribute goes and the remembered choice with it.
    await again.page.getByLabel('colour theme').selectOption('auto');
    await again.page.waitForFunction(() => !document.querySelector('transformer-playground').hasAttribute('theme'));
    assert.equal(await again.page.evaluate(() => localStorage.getItem('tplay-theme')), null);
    assert.deepEqual([...errors, ...again.errors, ...linked.errors], []);
    for (const p of [page, again.page, linked.page]) await p.close();
  });

  test('a_post_themes_its_widget_through_the_documented_custom_properties_and_font', async () => {
    // example.html themes its first widget in post.css (www/README.md, "Theming"): --tp-font, --tp-accent, …
    const page = await browser.context.newPage();
    await page.goto(`${server.url}example.html`);
    await page.waitForFunction(() => document.getElementById('unmasked')?.lastForward, null, { timeout: 60000 });
    const read = (id) =>
      page.evaluate((id) => {
        const view = document.getElementById(id).shadowRoot.querySelector('tp-attention').shadowRoot;
        const title = view.querySelector('h2');
        const chosen = view.querySelector('[aria-pressed="true"], [aria-current="true"], .thumb.on, .on');
        return { font: getComputedStyle(title).fontFamily, accent: getComputedStyle(title).getPropertyValue('--tp-accent').trim(), chosen: chosen ? getComputedStyle(chosen).borderColor : '' };
      }, id);
    const themed = await read('unmasked');
    assert.match(themed.font, /^Georgia/, 'the post’s font reaches the views inside the widget');
    assert.equal(themed.accent, '#8a3b12');
    // The same view in a widget the post leaves alone keeps the widget's own font and colours.
    await page.evaluate(() => {
      const el = document.createElement('transformer-playground');
      el.id = 'plain';
      for (const [k, v] of [['no-hash', ''], ['views', 'attention'], ['preset', 'play=0'], ['load', 'eager']]) el.setAttribute(k, v);
      document.body.prepend(el);
    });
    await page.waitForFunction(() => document.getElementById('plain')?.lastForward, null, { timeout: 60000 });
    const plain = await read('plain');
    assert.doesNotMatch(plain.font, /Georgia/);
    assert.notEqual(plain.accent, themed.accent);
    assert.equal(themed.chosen, 'rgb(138, 59, 18)', 'the chosen head is drawn in the post’s accent');
    assert.notEqual(plain.chosen, themed.chosen);
    await page.close();
  });

  test('reduced_motion_stops_playback_on_load_unless_the_link_asks_for_it', async () => {
    const { page, errors } = await open(browser.context, server.url, 'chapter=all', { media: { reducedMotion: 'reduce' } });
    await page.waitForTimeout(600);
    const s = await page.evaluate(() => {
      const el = document.querySelector('transformer-playground');
      return { play: el.st.play, playing: el.playing, n: el.generated.length, hint: !!el.shadowRoot.querySelector('[data-reduced-motion]') };
    });
    assert.deepEqual(s, { play: false, playing: false, n: 0, hint: true });
    // Play still works, by keyboard.
    const play = page.getByRole('button', { name: 'play generation' });
    await play.focus();
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.querySelector('transformer-playground').generated.length > 0);
    const linked = await open(browser.context, server.url, 'chapter=all&play=1', { media: { reducedMotion: 'reduce' } });
    await linked.page.waitForFunction(() => document.querySelector('transformer-playground').generated.length > 0);
    assert.deepEqual([...errors, ...linked.errors], []);
    await page.close();
    await linked.page.close();
  });
});
