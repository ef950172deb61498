// Progress you can see: the default model is served slowly, in small chunks, through a
// proxy in front of the built page; the playground shows the engine starting, then a bar of
// bytes received (the engine's wasm is held back a moment too) that grows to the checkpoint's real size, and the bar goes once the model
// is live.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { statSync, createReadStream } from 'node:fs';
import { join } from 'node:path';
import { dist, launch, serve, shot } from './harness.mjs';

/** Bytes per chunk and the pause between chunks of the slowed checkpoint. */
const CHUNK = 4 * 1024;
const PAUSE_MS = 60;
const WASM_DELAY_MS = 1500;

let server;
let proxy;
let proxyUrl;
let browser;
before(async () => {
  server = await serve();
  const target = new URL(server.url);
  // Everything passes through unchanged except checkpoints, which trickle in.
  proxy = createServer(async (req, res) => {
    const path = new URL(req.url, 'http://x').pathname;
    if (path.endsWith('.safetensors')) {
      const file = join(dist, decodeURIComponent(path));
      const size = statSync(file).size;
      res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': size, 'Cache-Control': 'no-store' });
      const stream = createReadStream(file, { highWaterMark: CHUNK });
      for await (const chunk of stream) {
        res.write(chunk);
        await new Promise((r) => setTimeout(r, PAUSE_MS));
      }
      res.end();
      return;
    }
    // The engine's wasm arrives late too, so its start is on screen long enough to see.
    if (path.endsWith('.wasm')) await new Promise((r) => setTimeout(r, WASM_DELAY_MS));
    const up = await fetch(new URL(req.url, target));
    const headers = {};
    up.headers.forEach((v, k) => {
      if (k !== 'content-encoding' && k !== 'content-length' && k !== 'transfer-encoding') headers[k] = v;
    });
    res.writeHead(up.status, headers);
    res.end(Buffer.from(await up.arrayBuffer()));
  });
  await new Promise((r) => proxy.listen(0, '127.0.0.1', r));
  proxyUrl = `http://127.0.0.1:${proxy.address().port}/`;
  browser = await launch({ webgpu: false, serviceWorkers: 'block' });
});
after(async () => {
  await browser?.close();
  await new Promise((r) => proxy?.close(r));
  await server?.close();
});

test('a_slow_model_download_shows_growing_byte_counts_to_the_real_size_then_the_bar_goes', async () => {
  const manifest = JSON.parse(await (await fetch(new URL('models/manifest.json', server.url))).text());
  const size = statSync(join(dist, 'models', manifest[0].file)).size;
  const page = await browser.context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  // Every state the bar is drawn in, recorded in the page as it is drawn (a sample from
  // here could miss the last count, which is on screen only until the model is loaded).
  await page.addInitScript(() => {
    window.__bars = [];
    const t0 = performance.now();
    const watched = new WeakSet();
    const record = (p) => {
      const bar = p.shadowRoot?.querySelector('[role="progressbar"]');
      if (!bar) return;
      window.__bars.push({
        t: Math.round(performance.now() - t0),
        phase: p.dataset.progress ?? null,
        label: bar.getAttribute('aria-label'),
        now: bar.getAttribute('aria-valuenow'),
        max: bar.getAttribute('aria-valuemax'),
        min: bar.getAttribute('aria-valuemin'),
        text: p.shadowRoot.querySelector('.text')?.textContent ?? null,
      });
    };
    const timer = setInterval(() => {
      const el = document.querySelector('transformer-playground');
      const p = el?.shadowRoot?.querySelector('tp-progress');
      if (p?.shadowRoot && !watched.has(p)) {
        watched.add(p);
        record(p);
        new MutationObserver(() => record(p)).observe(p.shadowRoot, { subtree: true, attributes: true, characterData: true, childList: true });
      }
      if (el?.readyAt != null) clearInterval(timer);
    }, 2);
  });
  const t0 = Date.now();
  await page.goto(proxyUrl);
  await page.waitForFunction(() => customElements.get('transformer-playground') !== undefined);
  // Sample the bar until the playground is live.
  const seen = [];
  let shotTaken = false;
  let live = false;
  while (Date.now() - t0 < 120_000) {
    const s = await page.evaluate(() => {
      const el = document.querySelector('transformer-playground');
      const p = el?.shadowRoot?.querySelector('tp-progress');
      const bar = p?.shadowRoot?.querySelector('[role="progressbar"]');
      return {
        ready: el?.readyAt != null,
        error: el?.error ?? '',
        phase: p?.dataset.progress ?? null,
        label: bar?.getAttribute('aria-label') ?? null,
        now: bar?.getAttribute('aria-valuenow') ?? null,
        max: bar?.getAttribute('aria-valuemax') ?? null,
        min: bar?.getAttribute('aria-valuemin') ?? null,
        text: p?.shadowRoot?.querySelector('.text')?.textContent ?? null,
      };
    });
    if (s.error) assert.fail(`the playground failed: ${s.error}`);
    if (s.phase) seen.push({ ...s, t: Date.now() - t0 });
    if (!shotTaken && s.phase === 'download' && Number(s.now) > size / 3) {
      await shot(page, 'progress-download');
      shotTaken = true;
    }
    if (s.ready && !s.phase) {
      live = true;
      break;
    }
    await new Promise((r) => setTimeout(r, 40));
  }
  assert.ok(live, 'the playground became live and the bar went away');
  // The states recorded in the page replace the coarser samples taken from here.
  seen.splice(0, seen.length, ...(await page.evaluate(() => window.__bars)));
  const engine = seen.filter((s) => s.phase === 'engine');
  assert.ok(engine.length > 0, 'engine start was shown');
  assert.ok(engine.some((s) => /engine/i.test(s.label ?? '')), `the engine bar says what it does: ${engine[0]?.label}`);
  const dl = seen.filter((s) => s.phase === 'download');
  const counts = dl.map((s) => Number(s.now));
  console.log(`model ${manifest[0].file}: ${size} bytes; download bar samples (ms after load: bytes): ${dl.map((s) => `${s.t}: ${s.now}`).join(', ')}`);
  console.log(`engine bar samples: ${engine.map((s) => `${s.t}: ${s.label}`).join(' | ')}`);
  assert.ok(new Set(counts).size >= 3, `the byte count moved through at least three values: ${counts}`);
  for (let i = 1; i < counts.length; i++) assert.ok(counts[i] >= counts[i - 1], `byte counts never go back: ${counts}`);
  assert.ok(dl.every((s) => s.max === String(size) && s.min === '0'), `the bar's maximum is the model's real size ${size}`);
  assert.equal(counts.at(-1), size, 'the last count shown is the whole file');
  assert.ok(dl.some((s) => /left/.test(s.text ?? '')), `a time estimate is shown: ${dl.map((s) => s.text).join(' | ')}`);
  assert.ok(dl.every((s) => /\.safetensors/.test(s.label ?? '')), 'the download bar names the file');
  assert.ok(shotTaken, 'a screenshot of the bar mid-download');
  assert.deepEqual(errors, []);
  await page.close();
});
