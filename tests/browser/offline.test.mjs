// Offline and installable: after one visit the service worker holds the page, both wasm
// modules of the engine and every shipped model, so a reload with no network still
// generates (and loads another model, runs a side study, starts the lab's engine); a new deploy is announced, not forced; the web app manifest makes the page
// installable. Served from a copy of the build under a sub-path, as a static host would.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dist, launch, offlineKept, open, serve, settled, waitTokens } from './harness.mjs';

let site;
let server;
let base;
let browser;
before(async () => {
  // The build copied to /sub/dir/ of a fresh static root: nothing may assume the site root.
  site = mkdtempSync(join(tmpdir(), 'tplay-offline-'));
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

/** Wait until a service worker is active for the page and its precache holds the models. */
async function waitOfflineReady(page) {
  const deadline = Date.now() + 60000;
  for (;;) {
    const ready = await page.evaluate(offlineKept);
    if (ready) return;
    if (Date.now() > deadline) throw new Error('the service worker did not finish keeping the page within 60 s');
    await page.waitForTimeout(250);
  }
}

describe('offline', () => {
  test('after_one_visit_a_reload_without_network_loads_the_page_and_generates_with_any_shipped_model', async () => {
    const { page, errors } = await open(browser.context, base, 'chapter=all&max=6&speed=0');
    await waitOfflineReady(page);
    assert.equal(await page.evaluate(() => navigator.serviceWorker.getRegistration().then((r) => new URL(r.scope).pathname)), '/sub/dir/', 'the worker is scoped to the folder the page lives in');
    // The page said so.
    await page.waitForSelector('tp-app-status >> [data-status="offline-ready"]');
    const online = await waitTokens(page, 6);

    await browser.context.setOffline(true);
    try {
      // The network is gone: nothing can be fetched but from the worker's cache.
      const noNet = await page.evaluate(() => fetch(`./not-kept-${Math.random()}.json`).then(() => 'fetched', () => 'refused'));
      assert.equal(noNet, 'refused');
      await page.reload();
      // Polled, not awaited in one evaluate (Chromium 148 may report that promise as
      // garbage collected: harness `settled`).
      const ready = await settled(page, () => ({
        promise: customElements
          .whenDefined('transformer-playground')
          .then(() => document.querySelector('transformer-playground').ready),
      }));
      assert.equal(ready, 'done', 'the page is ready offline');
      assert.ok(await page.evaluate(() => navigator.serviceWorker.controller !== null), 'the reload is served by the worker');
      const offline = await waitTokens(page, 6);
      assert.deepEqual(offline.ids, online.ids, 'the same greedy tokens without a network');
      assert.equal(offline.error, '');
      // Another shipped model (another architecture), never fetched online, loads offline.
      await page.evaluate(() => (location.hash = 'model=translate.safetensors&max=4&speed=0'));
      await page.waitForFunction(() => {
        const el = document.querySelector('transformer-playground');
        return el.info?.arch === 'encoder_decoder' && el.generated.length > 0;
      }, undefined, { timeout: 60000 });
      assert.equal(await page.evaluate(() => document.querySelector('transformer-playground').error), '');
      // The whole engine (the trainer and the side studies), which the first load does not
      // fetch, was kept too: a side study in the page's worker and the lab's own worker
      // both start it offline.
      const whole = await page.evaluate(async () => {
        const { EngineClient } = await import('./playground.js');
        const page = new EngineClient();
        const lab = EngineClient.trainer();
        try {
          const model = document.querySelector('transformer-playground').st.model;
          await page.call('load', { url: new URL(`models/${model}`, location.href).href });
          const positions = await page.call('positions', { t: 5 });
          const defaults = await lab.call('runDefaults', { task: 'reverse' });
          return { t: positions.t, task: typeof defaults === 'object' && defaults !== null };
        } catch (e) {
          return { error: String(e) };
        } finally {
          page.terminate();
          lab.terminate();
        }
      });
      assert.deepEqual(whole, { t: 5, task: true }, 'a side study and the lab start offline');
    } finally {
      await browser.context.setOffline(false);
    }
    assert.deepEqual(errors.filter((e) => !/ERR_INTERNET_DISCONNECTED|Failed to fetch/.test(e)), []);
    await page.close();
  });

  test('a_new_deploy_is_announced_and_taken_when_the_reader_reloads', async () => {
    const { page, errors } = await open(browser.context, base, 'chapter=all&play=0');
    await waitOfflineReady(page);
    await page.reload();
    await page.evaluate(() => document.querySelector('transformer-playground').ready);
    await page.waitForFunction(() => navigator.serviceWorker.controller !== null);
    // A new deploy: the page changed, and so did the worker's list of what it keeps.
    const sw = join(site, 'sub/dir/sw.js');
    const index = join(site, 'sub/dir/index.html');
    writeFileSync(index, readFileSync(index, 'utf8').replace('<h1 data-lang="en">Transformer Playground</h1>', '<h1 data-lang="en">Transformer Playground, version 2</h1>'));
    writeFileSync(sw, readFileSync(sw, 'utf8').replace(/(url:"index\.html",revision:")[0-9a-f]+/, '$1' + 'f'.repeat(32)));
    await page.evaluate(() => navigator.serviceWorker.getRegistration().then((r) => r.update()));
    await page.waitForSelector('tp-app-status >> [data-status="update"]', { timeout: 60000 });
    // The old version stays until the reader says so.
    assert.equal(await page.locator('h1[data-lang="en"]').textContent(), 'Transformer Playground');
    await Promise.all([page.waitForEvent('load'), page.locator('tp-app-status').getByRole('button', { name: 'Reload' }).click()]);
    await page.waitForFunction(() => document.querySelector('h1[data-lang="en"]')?.textContent === 'Transformer Playground, version 2', undefined, { timeout: 30000 });
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('the_web_app_manifest_makes_the_page_installable', async () => {
    const { page, errors } = await open(browser.context, base, 'chapter=all&play=0');
    await waitOfflineReady(page);
    const m = await page.evaluate(async () => {
      const href = document.querySelector('link[rel="manifest"]').href;
      const man = await (await fetch(href)).json();
      const icons = [];
      for (const i of man.icons) {
        const img = new Image();
        img.src = new URL(i.src, href).href;
        await img.decode();
        icons.push({ sizes: i.sizes, drawn: `${img.naturalWidth}x${img.naturalHeight}` });
      }
      return { man, icons };
    });
    assert.equal(m.man.display, 'standalone');
    assert.equal(m.man.start_url, './');
    for (const i of m.icons) assert.equal(i.drawn, i.sizes, 'each icon is the size it claims');
    assert.ok(m.icons.some((i) => i.sizes === '512x512') && m.icons.some((i) => i.sizes === '192x192'));
    // Chromium's own verdict on installability.
    const cdp = await browser.context.newCDPSession(page);
    const { installabilityErrors } = await cdp.send('Page.getInstallabilityErrors');
    assert.deepEqual(installabilityErrors, []);
    assert.deepEqual(errors, []);
    await page.close();
  });
});
