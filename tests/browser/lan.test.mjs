// A class on a LAN: the page served on every network of the machine and opened by its
// network address over plain HTTP, as students' devices open it (`cargo xtask serve
// --lan`). That is not a secure context, so there is no WebGPU and no service worker: the
// page must say so, run on the CPU engine and generate all the same, with no offline
// worker. Then the first-load bytes one student's device fetches there, for the README's
// sums for a class of 30 (artifacts/lan-firstload.json). Skipped on a machine with no
// network address.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { artifacts, launch, open, serve, waitTokens } from './harness.mjs';
import { describeFirstLoad, measureFirstLoad } from './firstload.mjs';

/** This machine's first IPv4 address on a network (not loopback), or null. */
function lanAddress() {
  for (const list of Object.values(networkInterfaces())) for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  return null;
}

const ip = lanAddress();
let server;
let browser;
let base;
before(async () => {
  if (!ip) return;
  server = await serve(undefined, { csp: true, host: '0.0.0.0' });
  base = `http://${ip}:${server.port}/`;
  // WebGPU switched on in the browser: what the page lacks on a LAN address is the secure context.
  browser = await launch({ webgpu: true, reach: [ip] });
});
after(async () => {
  await browser?.close();
  await server?.close();
  assert.deepEqual(server?.cspReports ?? [], []);
});

describe('a class on a LAN, over plain HTTP', { skip: ip ? false : 'no network address on this machine' }, () => {
  test('the page runs on the CPU engine, says why, generates, and registers no service worker', async () => {
    const { page, errors } = await open(browser.context, base, 'play=1&views=controls,generation');
    const r = await page.evaluate(() => {
      const el = document.querySelector('transformer-playground');
      return {
        secure: window.isSecureContext,
        sw: 'serviceWorker' in navigator,
        gpu: 'gpu' in navigator,
        backend: el.backendInfo?.backend,
        asked: el.st.backend,
        reason: el.backendInfo?.reason ?? '',
        status: document.querySelector('tp-app-status') !== null,
      };
    });
    assert.equal(r.secure, false, `${base} is not a secure context`);
    assert.equal(r.sw, false, 'no service worker API on plain HTTP');
    assert.equal(r.gpu, false, 'no WebGPU on plain HTTP');
    assert.equal(r.asked, 'auto');
    assert.equal(r.backend, 'cpu', 'the engine fell back to the CPU');
    assert.equal(r.status, false, 'no offline line: there is no offline copy to speak of');
    const badge = await page.locator('transformer-playground tp-controls [data-backend-runs]').textContent();
    assert.match(badge, /CPU/, `the page says what runs: ${badge}`);
    assert.match(badge, /secure page \(HTTPS\)/, `and why: ${badge}`);
    const gen = await waitTokens(page, 4);
    assert.equal(gen.error, '');
    assert.ok(gen.ids.length >= 4, `generated ${gen.ids.length} tokens on the CPU`);
    // The lab trains there too (its own worker, on the CPU), and keeps its runs (IndexedDB needs no secure context).
    const lab = await page.evaluate(async () => {
      const el = document.querySelector('transformer-playground');
      const h = el.train({ task: 'copy', steps: 100000, batch: 4, eval_every: 0 });
      await h.started;
      await new Promise((ok) => h.addEventListener('progress', ok, { once: true }));
      await h.stop();
      await h.done;
      return { points: h.run.points.length, backend: h.run.backend?.kind ?? '', kept: el.runs.some((r) => r.id === h.id) };
    });
    assert.ok(lab.points > 0, `the run took ${lab.points} steps`);
    assert.ok(lab.kept);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('what one student fetches before the first forward pass, for a class of 30', async () => {
    const m = await measureFirstLoad(browser.context, base);
    console.log(describeFirstLoad(m));
    const out = { per_student: m.total, class_of_30: { raw: 30 * m.total.raw, gzip: 30 * m.total.gzip }, background: m.background, kinds: m.kinds };
    console.log(`class of 30: ${(out.class_of_30.raw / 1e6).toFixed(1)} MB as served uncompressed, ${(out.class_of_30.gzip / 1e6).toFixed(1)} MB with gzip`);
    writeFileSync(join(artifacts, 'lan-firstload.json'), JSON.stringify(out, null, 2));
    assert.equal(m.background.n, 0, 'no service worker fetches the rest of the models in the background');
    assert.ok(m.total.raw > 0 && m.kinds.model && m.kinds.wasm, 'the page, the engine and the default model');
  });
});
