// The projector view: a view's "⋯" menu shows it alone over the whole screen, its type
// larger than on the page, with the class link (the page's link, locks and all) and its QR
// code in a corner; Escape goes back. Screenshot at 1280×720 in artifacts/.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { artifacts, launch, open, serve } from './harness.mjs';

const P = 'transformer-playground';

let server;
let browser;
before(async () => {
  server = await serve(undefined, { csp: true });
  browser = await launch({ webgpu: false });
});
after(async () => {
  await browser?.close();
  await server?.close();
  assert.deepEqual(server?.cspReports ?? [], []);
});

/** The rendered height of the attention view's title, in screen pixels. */
function titleHeight(page) {
  return page.evaluate(() => {
    const v = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-attention');
    return v.shadowRoot.querySelector('h2').getBoundingClientRect().height;
  });
}

describe('projector', () => {
  test('a view opens alone, full screen in large type, with the class link and its QR code; Escape goes back', async () => {
    const { page, errors } = await open(browser.context, server.url, 'views=attention,output&play=0&lock=causal', { viewport: { width: 1280, height: 720 } });
    const small = await titleHeight(page);
    await page.locator(`${P} .view[data-view="attention"] tp-view-menu .trigger`).click();
    await page.locator(`${P} .view[data-view="attention"] tp-view-menu [data-action="projector"]`).click();
    const box = page.locator(`${P} [data-projector="attention"]`);
    await box.waitFor({ state: 'visible' });
    const r = await box.boundingBox();
    assert.ok(r.width >= 1270 && r.height >= 710, `it fills the screen (${r.width}×${r.height})`);
    assert.equal(await page.locator(`${P} .view[data-view="output"]`).count(), 0, 'the other views are not drawn');
    const large = await titleHeight(page);
    assert.ok(large >= small * 1.3, `large type: title ${large}px against ${small}px on the page`);
    await page.waitForFunction(() => {
      const c = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-projector-link')?.shadowRoot?.querySelector('canvas');
      return c && Number(c.dataset.modules) > 0;
    });
    const qr = await page.evaluate(() => {
      const corner = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-projector-link');
      const c = corner.shadowRoot.querySelector('canvas');
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let dark = 0;
      for (let i = 0; i < d.length; i += 4) if (d[i] < 128) dark++;
      const shown = c.getBoundingClientRect();
      return { modules: Number(c.dataset.modules), dark, all: d.length / 4, link: corner.shadowRoot.querySelector('[data-projector-link]').textContent, href: location.href, right: shown.right, bottom: shown.bottom, w: shown.width };
    });
    assert.ok(qr.modules >= 21, `a QR code of ${qr.modules} modules`);
    assert.ok(qr.dark > qr.all * 0.2 && qr.dark < qr.all * 0.8, `about half dark (${qr.dark} of ${qr.all})`);
    assert.equal(qr.link, qr.href, 'the class link is the page as it stands');
    assert.match(qr.link, /lock=causal/);
    assert.ok(qr.right > 1280 - 300 && qr.bottom > 720 - 300 && qr.w >= 150, `the QR code sits in the corner, large enough to scan (${JSON.stringify(qr)})`);
    await page.screenshot({ path: join(artifacts, 'projector-1280x720.png') });
    await page.keyboard.press('Escape');
    await page.waitForFunction(() => !document.querySelector('transformer-playground').shadowRoot.querySelector('[data-projector]') && !document.fullscreenElement);
    assert.equal(await page.locator(`${P} .view[data-view="output"]`).count(), 1, 'back on the page');
    assert.deepEqual(errors, []);
    await page.close();
  });
});
