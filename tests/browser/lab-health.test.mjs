// The lab's training health watch in the page (CPU path): a NaN put into a chosen layer by
// the test hook (testOnlyNanAtLayer) stops the run at the next step; the run is marked
// failed with the step, the layer and the operation named, its curve ends at the step
// before, and the health list under the controls says the likely cause and a fix to try
// with the run's own settings. The WebGPU form of the same check is in lab-gpu.test.mjs.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, open, openLab, serve, shot } from './harness.mjs';
import { assertStoppedAtLayer2, nanRunInPage } from './health-checks.mjs';

let server;
let browser;
let page;
let errors;

describe('the lab watches a run’s health', () => {
  before(async () => {
    server = await serve();
    browser = await launch();
    ({ page, errors } = await openLab(browser.context, server.url));
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  test('a_nan_put_into_layer_2_stops_the_run_and_the_page_names_the_layer_the_cause_and_a_fix', async () => {
    const settings = { task: 'reverse', steps: 400, batch: 4, eval_every: 0, seed: 3, n_layers: 3, norm: 'post_ln', backend: 'cpu' };
    const got = await nanRunInPage(page, settings, 1);
    assert.equal(got.kind, 'cpu_chosen');
    assertStoppedAtLayer2(got);
    // Post-LN: the fix offers pre-LN too.
    assert.match(got.why, /pre-LN/);
    // A layer the model does not have is refused by the hook.
    const none = await page.evaluate(async () => {
      const el = document.querySelector('transformer-playground');
      const h = el.train({ task: 'reverse', steps: 400, batch: 4, eval_every: 0, n_layers: 2, backend: 'cpu' });
      await h.started;
      const r = await el.testOnlyNanAtLayer(h.id, 2);
      await h.stop();
      return r;
    });
    assert.equal(none, false);
    // The health list of the selected run says the same under the controls.
    await page.evaluate((id) => {
      const lab = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-lab');
      lab.selected = id;
      lab.requestUpdate();
    }, got.id);
    const item = page.locator('tp-lab [data-health] li.stopped');
    await item.waitFor();
    assert.equal(await item.getAttribute('data-layer'), '2');
    assert.equal(await item.getAttribute('data-op'), 'ffn_linear1');
    assert.match(await item.innerText(), /layer 2[\s\S]*Likely cause[\s\S]*Try:/);
    await shot(page, 'lab-health-nan');
    assert.deepEqual(errors, []);
    // The Chinese page says it in Chinese (the parameter's name and a few terms excepted).
    const zh = await open(browser.context, server.url, 'play=0&views=lab&lang=zh-Hans');
    // The run comes back from IndexedDB after the lab has drawn: select it until its
    // health list is there.
    const text = await (
      await zh.page.waitForFunction(
        (id) => {
          const lab = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-lab');
          if (!lab) return null;
          if (lab.selected !== id) {
            lab.selected = id;
            lab.requestUpdate();
          }
          return lab.renderRoot.querySelector('[data-health] li.stopped')?.textContent || null;
        },
        got.id,
        { timeout: 30000, polling: 100 },
      )
    ).jsonValue();
    const left = text
      .replace(got.run.alarms.at(-1).param, '')
      .match(/[A-Za-z]{3,}/g)
      ?.filter((w) => !['NaN', 'Noam', 'softmax', 'pre'].includes(w));
    assert.ok(/第 2 层/.test(text), text);
    assert.deepEqual(left ?? [], [], text);
    await shot(zh.page, 'lab-health-nan-zh');
    assert.deepEqual(zh.errors, []);
    await zh.page.close();
  });
});
