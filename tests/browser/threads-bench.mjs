// Training on wasm threads in headless Chromium, for `cargo xtask bench threads` (a
// program that prints numbers; it asserts nothing about time): the page of
// tools/wasm-threads/page served cross-origin isolated (COOP and COEP, which
// SharedArrayBuffer needs), with the package built by xtask in TPLAY_THREADS_PKG. Each
// recipe trains on one thread and on every core, alternately; the table gives steps/s,
// the speed-up over one thread in the same round, and whether the trained weights hashed
// the same. Exits non-zero when the page fails or the weights differ.

import http from 'node:http';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { extname, join, normalize } from 'node:path';
import { loadavg } from 'node:os';
import { launch, root } from './harness.mjs';

const pkg = process.env.TPLAY_THREADS_PKG ?? join(root, 'target/wasm-threads-pkg');
const pageDir = join(root, 'tools/wasm-threads/page');
const types = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm' };
const load = () => loadavg().map((x) => x.toFixed(2)).join(' ');

const server = http.createServer((req, res) => {
  const path = normalize(decodeURIComponent(new URL(req.url, 'http://x').pathname));
  const file = path.startsWith('/pkg/') ? join(pkg, path.slice(5)) : join(pageDir, path);
  if (!existsSync(file) || !statSync(file).isFile()) {
    res.writeHead(404);
    res.end();
    return;
  }
  res.writeHead(200, {
    'Content-Type': types[extname(file)] ?? 'application/octet-stream',
    'Cross-Origin-Opener-Policy': 'same-origin',
    'Cross-Origin-Embedder-Policy': 'require-corp',
  });
  res.end(readFileSync(file));
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const browser = await launch();
let failed = false;
try {
  const page = await browser.context.newPage();
  const before = load();
  await page.goto(`http://127.0.0.1:${server.address().port}/index.html?rounds=${process.env.TPLAY_THREADS_ROUNDS ?? 2}`);
  await page.waitForFunction(() => window.result, null, { timeout: 600_000 });
  const result = await page.evaluate(() => window.result);
  if (result.error) throw new Error(`the page failed: ${result.error}`);
  console.log(`## Training on wasm threads (headless Chromium, cross-origin isolated: ${result.isolated}, ${result.cores} cores)`);
  console.log();
  console.log(`load average (1, 5, 15 min): ${before} before, ${load()} after`);
  console.log();
  console.log('| recipe | steps | threads | steps/s | speed-up | same weights as 1 thread |');
  console.log('|---|---:|---:|---:|---:|---|');
  let one = null;
  for (const row of result.rows) {
    if (row.threads === 1) one = row;
    const same = row.hash === one.hash;
    failed ||= !same;
    console.log(`| ${row.file.replace('.safetensors', '')}${row.wide ? ', C 256, 2 layers, 8 heads' : ''} | ${row.steps} | ${row.threads} | ${row.sps.toFixed(1)} | ${(row.sps / one.sps).toFixed(2)}× | ${same} |`);
  }
  console.log();
} finally {
  await browser.close();
  server.close();
}
if (failed) {
  console.error('the weights trained on several threads differ from one thread’s');
  process.exit(1);
}
