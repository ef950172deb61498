// A blog post (the build's example.html: the element, an iframe of embed.html, a lesson)
// served under a strict Content-Security-Policy: the policy the build ships works with no
// violation reported, and a host that refuses WebAssembly (no 'wasm-unsafe-eval') or the
// engine's worker (worker-src 'none') gets a widget that says what the site must allow,
// not a WebAssembly error. The shipped _headers file carries the documented policy.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CSP, dist, launch, root, serve, shot } from './harness.mjs';

let browser;
const servers = [];
before(async () => {
  browser = await launch({ webgpu: false, serviceWorkers: 'block' });
});
after(async () => {
  await browser?.close();
  for (const s of servers) await s.close();
});

/** The policy the build ships for static hosts (`_headers`), as one line. */
function headersPolicy() {
  const text = readFileSync(join(dist, '_headers'), 'utf8');
  const m = /^\s*Content-Security-Policy:\s*(.+)$/m.exec(text);
  assert.ok(m, '_headers names a Content-Security-Policy');
  return m[1].trim();
}

/** The post under `policy`; resolves once the first widget is live or has failed. */
async function post(policy) {
  const s = await serve(dist, { csp: policy });
  servers.push(s);
  const page = await browser.context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`${s.url}example.html`);
  await page.waitForFunction(() => customElements.get('transformer-playground') !== undefined);
  // Functions, never strings: a string is evaluated by eval, which the strict policy refuses.
  await page.waitForFunction((id) => document.getElementById(id).readyAt !== null || document.getElementById(id).error, 'unmasked', { timeout: 60000 });
  return { page, errors, reports: s.cspReports };
}

describe('a post under a strict Content-Security-Policy', () => {
  test('the_shipped_headers_file_and_the_documented_policy_agree', () => {
    const norm = (p) => p.split(';').map((d) => d.trim().replace(/\s+/g, ' ')).filter(Boolean).sort();
    assert.deepEqual(norm(headersPolicy()), norm(CSP));
    const readme = readFileSync(join(root, 'www/README.md'), 'utf8');
    assert.ok(readme.includes(headersPolicy()), 'www/README.md states the policy, word for word');
    assert.match(headersPolicy(), /script-src [^;]*'wasm-unsafe-eval'/);
    assert.match(headersPolicy(), /worker-src 'self'/);
  });

  test('under_the_documented_policy_every_widget_of_the_post_works', async () => {
    const { page, errors, reports } = await post(headersPolicy());
    assert.equal(await page.evaluate((id) => document.getElementById(id).error, 'unmasked'), '');
    assert.ok((await page.evaluate((id) => document.getElementById(id).lastForward.model_probs.length, 'unmasked')) > 1);
    // The iframe's playground too.
    const frame = page.frameLocator('#framed');
    await frame.locator('transformer-playground').evaluate(async (p) => {
      await customElements.whenDefined('transformer-playground');
      await p.ready;
    });
    assert.equal(await frame.locator('transformer-playground').evaluate((p) => p.error), '');
    assert.deepEqual(reports, [], 'no violation reported');
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('the_embed_dialog_and_its_live_preview_work_under_the_shipped_policy', async () => {
    const { page, errors, reports } = await post(headersPolicy());
    const menu = page.locator('#unmasked .view[data-view="attention"] tp-view-menu');
    await menu.locator('.trigger').click();
    await menu.locator('[data-action="embed"]').click();
    await page.waitForFunction(() => {
      const live = document.getElementById('unmasked').shadowRoot.querySelector('tp-embed-dialog')?.shadowRoot.querySelector('[data-embed-preview] transformer-playground');
      return live?.lastForward && live.style.minHeight !== '';
    }, undefined, { timeout: 60000 });
    const snippet = await page.locator('tp-embed-dialog [data-embed-snippet]').inputValue();
    const room = /min-height:(\d+)px/.exec(snippet)?.[1];
    // The preview holds the snippet's room (set through the CSSOM: the policy refuses style attributes).
    assert.equal(await page.evaluate(() => document.getElementById('unmasked').shadowRoot.querySelector('tp-embed-dialog').shadowRoot.querySelector('[data-embed-preview] transformer-playground').style.minHeight), `${room}px`);
    assert.deepEqual(reports, [], 'no violation reported');
    assert.deepEqual(errors, []);
    await page.close();
  });

  for (const [name, policy, want, says] of [
    ['without_wasm_unsafe_eval', (p) => p.replace(/\s*'wasm-unsafe-eval'/, ''), /'wasm-unsafe-eval'/, /script-src/],
    ['with_workers_refused', (p) => p.replace(/worker-src [^;]+/, "worker-src 'none'"), /worker-src/, /Web Worker/],
  ]) {
    test(`${name}_the_widget_says_what_the_host_must_allow`, async () => {
      const { page, errors } = await post(policy(headersPolicy()));
      const error = await page.evaluate((id) => document.getElementById(id).error, 'unmasked');
      assert.match(error, want, error);
      assert.match(error, says);
      assert.match(error, /Content-Security-Policy/);
      const shown = await page.evaluate((id) => document.getElementById(id).renderRoot.querySelector('[role="alert"]').textContent, 'unmasked');
      assert.ok(shown.includes(error), `the widget shows it: ${shown}`);
      assert.doesNotMatch(shown, /CompileError|WebAssembly\.instantiate|Refused to|SecurityError|at \w+ \(|\.js:\d+/, 'no raw browser error or stack');
      assert.deepEqual(errors, []);
      await shot(page, `csp-${name}`);
      await page.close();
    });
  }
});
