// The three ways to put the playground into another page, as www/README.md shows them,
// each from a copy of the build served under a sub-path (/sub/dir/) of a static host:
// the script tag and element, an <iframe> of embed.html whose hash picks views and settings
// and which resizes itself to its content, and a plain link to a view with its settings.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dist, launch, serve, shot } from './harness.mjs';

let site;
let server;
let base;
let browser;
before(async () => {
  site = mkdtempSync(join(tmpdir(), 'tplay-embed-'));
  cpSync(dist, join(site, 'sub/dir'), { recursive: true });
  server = await serve(site, { csp: true });
  base = `${server.url}sub/dir/`;
  browser = await launch({ webgpu: false });
});
after(async () => {
  await browser?.close();
  await server?.close();
  rmSync(site, { recursive: true, force: true });
  // Everything above ran under the page's Content-Security-Policy without one violation.
  assert.deepEqual(server?.cspReports ?? [], []);
});

async function page() {
  const p = await browser.context.newPage();
  const errors = [];
  const requests = [];
  p.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  p.on('pageerror', (e) => errors.push(String(e)));
  p.on('request', (r) => requests.push(new URL(r.url()).pathname));
  return { p, errors, requests };
}


describe('embedding', () => {
  test('the_script_tag_and_element_run_a_preset_widget_from_a_sub_path_and_leave_the_page_url_alone', async () => {
    const { p, errors, requests } = await page();
    await p.goto(`${base}example.html`);
    await p.waitForFunction(() => document.getElementById('unmasked')?.lastForward);
    const r = await p.evaluate(() => {
      const el = document.getElementById('unmasked');
      const a = el.lastForward.attention.find((x) => x.site === 'decoder_self');
      const [, , T, S] = a.probs.shape;
      let upper = 0;
      for (let i = 0; i < T; i++) for (let j = i + 1; j < S; j++) upper = Math.max(upper, a.probs.data[i * S + j]);
      return { upper, causal: el.st.causal, hash: location.hash, tags: [...el.shadowRoot.querySelectorAll('tp-attention, tp-controls, tp-generation')].map((n) => n.tagName.toLowerCase()) };
    });
    assert.equal(r.causal, false);
    assert.ok(r.upper > 0.001, 'the preset switched the causal mask off: the upper triangle has weight');
    assert.equal(r.hash, '', 'an embedded widget leaves the page URL alone');
    assert.deepEqual(r.tags, ['tp-attention'], 'views="attention" shows the attention view alone');
    // Everything came from the folder the page lives in, none from the host's root.
    const outside = requests.filter((u) => !u.startsWith('/sub/dir/'));
    assert.deepEqual(outside, []);
    await shot(p, 'embed-post');
    assert.deepEqual(errors, []);
    await p.close();
  });

  test('an_iframe_of_embed_html_takes_views_and_settings_from_its_hash_and_grows_to_fit', async () => {
    const { p, errors } = await page();
    await p.goto(`${base}example.html`);
    const frame = p.frameLocator('#framed');
    const inner = p.frame({ url: /embed\.html/ });
    await inner.waitForFunction(() => document.querySelector('transformer-playground')?.generated.length >= 3, undefined, { timeout: 60000 });
    const r = await inner.evaluate(() => {
      const el = document.querySelector('transformer-playground');
      return { views: el.st.views, max: el.st.max, tags: [...el.shadowRoot.querySelectorAll('tp-input, tp-generation, tp-attention, tp-controls')].map((n) => n.tagName.toLowerCase()), height: Math.ceil(document.documentElement.getBoundingClientRect().height) };
    });
    assert.deepEqual(r.views, ['input', 'generation']);
    assert.equal(r.max, 12);
    assert.deepEqual(r.tags, ['tp-input', 'tp-generation']);
    // The frame's height follows its content (it starts at 240 px in the post's CSS).
    await p.waitForFunction((h) => Math.abs(document.getElementById('framed').getBoundingClientRect().height - h) <= 1, r.height, { timeout: 10000 });
    assert.notEqual(r.height, 240);
    // Content that grows makes the frame grow: open the batch editor inside it.
    const before = await p.evaluate(() => document.getElementById('framed').getBoundingClientRect().height);
    await frame.getByLabel(/batch of unequal lengths/).check();
    await p.waitForFunction((b) => document.getElementById('framed').getBoundingClientRect().height > b + 10, before, { timeout: 10000 });
    await inner.waitForFunction(() => {
      const h = Math.ceil(document.documentElement.getBoundingClientRect().height);
      return Math.abs(window.frameElement.getBoundingClientRect().height - h) <= 1;
    });
    await shot(p, 'embed-iframe');
    assert.deepEqual(errors, []);
    await p.close();
  });

  test('a_plain_link_opens_the_page_on_a_view_with_its_settings', async () => {
    const { p, errors } = await page();
    await p.goto(`${base}example.html`);
    // Click only once the widgets above the link are live and the framed one has generated
    // and taken its height; a click during a layout shift could land beside the link. (The
    // lesson, below the link and more than a screen further down, starts only when the
    // reader scrolls towards it; its room is reserved, so it moves nothing above it.)
    await p.waitForFunction(() => document.getElementById('unmasked')?.lastForward, undefined, { timeout: 60000 });
    const inner = p.frame({ url: /embed\.html/ });
    await inner.waitForFunction(() => {
      const el = document.querySelector('transformer-playground');
      const h = Math.ceil(document.documentElement.getBoundingClientRect().height);
      return el?.done && Math.abs(window.frameElement.getBoundingClientRect().height - h) <= 1;
    }, undefined, { timeout: 60000 });
    await Promise.all([p.waitForURL(/index\.html#/), p.click('#linked')]);
    await p.waitForFunction(() => document.querySelector('transformer-playground')?.lastForward);
    const r = await p.evaluate(() => {
      const el = document.querySelector('transformer-playground');
      return { scale: el.st.scale, views: el.st.views, tags: [...el.shadowRoot.querySelectorAll('tp-attention, tp-saturation, tp-controls, tp-generation, tp-cost')].map((n) => n.tagName.toLowerCase()), notes: [...el.notes] };
    });
    assert.equal(r.scale, false);
    assert.deepEqual(r.views, ['attention', 'saturation']);
    assert.deepEqual(r.tags, ['tp-attention', 'tp-saturation']);
    assert.deepEqual(r.notes, []);
    assert.deepEqual(errors, []);
    await p.close();
  });

  test('a_link_naming_a_view_that_does_not_exist_says_so_and_shows_the_rest', async () => {
    const { p, errors } = await page();
    await p.goto(`${base}index.html#views=attention,nonsense&play=0`);
    await p.waitForFunction(() => document.querySelector('transformer-playground')?.lastForward);
    const r = await p.evaluate(() => {
      const el = document.querySelector('transformer-playground');
      return { views: el.st.views, notes: [...el.notes] };
    });
    assert.deepEqual(r.views, ['attention']);
    assert.equal(r.notes.length, 1);
    assert.match(r.notes[0], /nonsense/);
    assert.deepEqual(errors, []);
    await p.close();
  });
});
