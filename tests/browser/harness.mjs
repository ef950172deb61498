// Shared by the browser tests and the browser benchmark: a small static server for the
// built page on 127.0.0.1 (a free port), and headless Chromium driven by playwright-core.

import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { mkdtempSync, readFileSync, rmSync, statSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
export const root = resolve(here, '../..');
export const dist = resolve(process.env.TPLAY_DIST ?? join(root, 'www/dist'));
export const artifacts = join(here, 'artifacts');
mkdirSync(artifacts, { recursive: true });

// playwright-core is one of the front end's npm packages (www/package.json).
const require = createRequire(join(root, 'www/package.json'));
const { chromium } = require('playwright-core');

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
  '.safetensors': 'application/octet-stream',
};

/** The page's Content-Security-Policy (the file `cargo xtask serve` sends too), one line. */
export const CSP = readFileSync(join(root, 'www/content-security-policy.txt'), 'utf8')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith('#'))
  .join(' ');

/**
 * Serve `dist` on 127.0.0.1 at a free port; resolves with { url, close, cspReports }.
 * With `csp`, every response carries the page's Content-Security-Policy plus a report-uri,
 * and every violation the browser reports (page and workers alike) lands in `cspReports`.
 */
export function serve(dir = dist, { csp = false } = {}) {
  const cspReports = [];
  const server = createServer((req, res) => {
    if (req.method === 'POST' && req.url === '/csp-report') {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        cspReports.push(body);
        res.writeHead(204).end();
      });
      return;
    }
    if (csp) res.setHeader('Content-Security-Policy', `${CSP}; report-uri /csp-report`);
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    let file = normalize(join(dir, path));
    if (!file.startsWith(dir + sep) && file !== dir) {
      res.writeHead(403).end();
      return;
    }
    try {
      if (statSync(file).isDirectory()) file = join(file, 'index.html');
      const body = readFileSync(file);
      res.writeHead(200, { 'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream', 'Cache-Control': 'no-cache' });
      res.end(body);
    } catch {
      res.writeHead(404).end('not found');
    }
  });
  return new Promise((ok) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      ok({ url: `http://127.0.0.1:${port}/`, cspReports, close: () => new Promise((r) => server.close(r)) });
    });
  });
}

/**
 * Headless Chromium; `webgpu` adds --enable-unsafe-webgpu (a SwiftShader adapter).
 * `serviceWorkers: 'block'` keeps the page's offline worker out, so `page.route` sees every
 * request (a test that swaps a model or the manifest needs that). `locale` sets the
 * browser's language.
 */
export async function launch({ webgpu = false, serviceWorkers = 'allow', locale } = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), 'tplay-chromium-'));
  const args = [
    '--no-sandbox',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1',
  ];
  if (webgpu) args.push('--enable-unsafe-webgpu');
  const context = await chromium.launchPersistentContext(dataDir, {
    executablePath: process.env.TPLAY_CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args,
    viewport: { width: 1280, height: 900 },
    serviceWorkers,
    // The browser's language (navigator.language), e.g. 'zh-CN'; default: the system's.
    ...(locale ? { locale } : {}),
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Open the page with a hash; collects console errors and uncaught exceptions.
 * `media` emulates system preferences (colour scheme, reduced motion) from the first paint.
 * Resolves once the playground has drawn its first forward pass.
 */
export async function open(context, baseUrl, hash = '', { viewport, media } = {}) {
  const page = await context.newPage();
  if (viewport) await page.setViewportSize(viewport);
  // media: { colorScheme: 'dark', reducedMotion: 'reduce' } as the system would ask.
  if (media) await page.emulateMedia(media);
  const errors = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('dialog', (d) => {
    errors.push(`unexpected dialog: ${d.message()}`);
    d.dismiss();
  });
  await page.goto(baseUrl + (hash ? `#${hash}` : ''));
  await page.waitForFunction(() => customElements.get('transformer-playground') !== undefined);
  await page.evaluate(async () => {
    const el = document.querySelector('transformer-playground');
    await Promise.race([
      el.ready,
      new Promise((_, no) => setTimeout(() => no(new Error(`not ready: ${el.error || 'timeout'}`)), 60000)),
    ]);
  });
  return { page, errors };
}

/** Wait until the playground holds at least n generated tokens (or finished). */
export async function waitTokens(page, n, timeout = 60000) {
  await page.waitForFunction(
    (n) => {
      const el = document.querySelector('transformer-playground');
      return el.generated.length >= n || el.done || el.error || el.genNote;
    },
    n,
    { timeout },
  );
  return page.evaluate(() => {
    const el = document.querySelector('transformer-playground');
    return { ids: [...el.generated], done: el.done, error: el.error, note: el.genNote };
  });
}

export function shot(page, name) {
  return page.screenshot({ path: join(artifacts, `${name}.png`), fullPage: true });
}
