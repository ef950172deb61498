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
 * Serve `dist` on 127.0.0.1 at a free port; resolves with { url, close, cut, cspReports }.
 * With `csp`, every response carries the page's Content-Security-Policy (or, when `csp` is
 * a string, that policy) plus a report-uri, and every violation the browser reports (page
 * and workers alike) lands in `cspReports`. `headers`: more headers on every response.
 * `mounts`: more folders beside the page, by path (`{ '/gpt2/': dir }`). Every request
 * lands in `requests` (`'GET /path'`).
 */
export function serve(dir = dist, { csp = false, headers = {}, host = '127.0.0.1', mounts = {} } = {}) {
  const cspReports = [];
  const requests = [];
  const server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    if (req.method === 'POST' && req.url === '/csp-report') {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        cspReports.push(body);
        res.writeHead(204).end();
      });
      return;
    }
    if (csp) res.setHeader('Content-Security-Policy', `${typeof csp === 'string' ? csp : CSP}; report-uri /csp-report`);
    for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
    let path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    const mount = Object.keys(mounts).find((m) => path.startsWith(m));
    const base = mount ? resolve(mounts[mount]) : dir;
    if (mount) path = path.slice(mount.length - 1);
    let file = normalize(join(base, path));
    if (!file.startsWith(base + sep) && file !== base) {
      res.writeHead(403).end();
      return;
    }
    try {
      if (statSync(file).isDirectory()) file = join(file, 'index.html');
      const body = readFileSync(file);
      res.writeHead(200, { 'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream', 'Cache-Control': 'no-cache', 'Content-Length': body.length });
      res.end(body);
    } catch {
      res.writeHead(404).end('not found');
    }
  });
  return new Promise((ok) => {
    // `host` '0.0.0.0' listens on every network of the machine (a class on a LAN); the url stays the local one.
    server.listen(0, host, () => {
      const { port } = server.address();
      // `cut()`: the network goes at once, for a test of the page offline in a browser that
      // cannot be told so: no new connection, and the open (kept-alive) ones dropped.
      const cut = () => {
        const closed = new Promise((r) => server.close(r));
        server.closeAllConnections();
        return closed;
      };
      ok({ url: `http://127.0.0.1:${port}/`, port, cspReports, requests, close: () => new Promise((r) => server.close(r)), cut });
    });
  });
}

/**
 * In the page: whether its service worker is active and its caches hold the engine (the
 * wasm) and a model (translate.safetensors), i.e. the page would load offline. Passed to
 * any driver's evaluate/waitFor (it is sent as its source text).
 */
export async function offlineKept() {
  const reg = await navigator.serviceWorker.getRegistration();
  if (!reg?.active || reg.active.state !== 'activated') return false;
  for (const n of await caches.keys()) {
    const keys = (await (await caches.open(n)).keys()).map((r) => r.url);
    if (keys.some((u) => u.includes('translate.safetensors')) && keys.some((u) => u.endsWith('.wasm'))) return true;
  }
  return false;
}

/**
 * Headless Chromium; `webgpu` adds --enable-unsafe-webgpu (a SwiftShader adapter).
 * `serviceWorkers: 'block'` keeps the page's offline worker out, so `page.route` sees every
 * request (a test that swaps a model or the manifest needs that). `locale` sets the
 * browser's language. `reach`: more addresses the browser may open (this machine's network address).
 * `args`: more command-line switches for Chromium (the GPU bench's attempts at a real adapter).
 */
export async function launch({ webgpu = false, serviceWorkers = 'allow', locale, reach = [], args: extra = [] } = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), 'tplay-chromium-'));
  const args = [
    '--no-sandbox',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    // Nothing outside this machine: 127.0.0.1 and the addresses in `reach` (this machine's own network address, for a class on a LAN).
    `--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1${reach.map((h) => ` , EXCLUDE ${h}`).join('')}`,
  ];
  if (webgpu) args.push('--enable-unsafe-webgpu');
  args.push(...extra);
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
  const state = await settled(page, () => ({ promise: document.querySelector('transformer-playground').ready })).catch(
    async () => `timeout: ${(await page.evaluate(() => document.querySelector('transformer-playground').error).catch(() => '')) || 'timeout'}`,
  );
  if (state !== 'done') throw new Error(`not ready: ${state.replace(/^(failed|timeout): /, '')}`);
  return { page, errors };
}

/**
 * Start a promise in the page and poll until it settles: `start(arg)` runs in the page and
 * returns `{ promise }`; the answer is 'done' or 'failed: <message>', and the wait rejects
 * after `timeout` ms. Polled rather than awaited inside one `page.evaluate`: Chromium 148
 * reported such a long-awaited promise as garbage collected while other pages were busy.
 */
export async function settled(page, start, arg, timeout = 60000) {
  const held = await page.evaluateHandle(start, arg);
  await held.evaluate((h) => {
    window.__tplaySettled = null;
    Promise.resolve(h.promise).then(
      () => (window.__tplaySettled = 'done'),
      (e) => (window.__tplaySettled = `failed: ${e?.message ?? e}`),
    );
  });
  await held.dispose();
  return (await page.waitForFunction(() => window.__tplaySettled, null, { timeout })).jsonValue();
}

/**
 * Bring the view `name` of the page's playground into sight, as a reader scrolls to it (a
 * view off the first screen is fetched when it first comes into sight: www/src/views/load.ts),
 * and wait until its code has arrived and it has drawn (`el.loadView`).
 */
export async function seeView(page, name) {
  await page.evaluate(async (n) => {
    const el = document.querySelector('transformer-playground');
    el.shadowRoot.querySelector(`.view[data-view="${n}"]`)?.scrollIntoView({ block: 'nearest' });
    await el.loadView(n);
  }, name);
}

/**
 * Open the lab alone (`play=0&views=lab`), with no runs kept from an earlier test (they
 * live in IndexedDB across pages of one browser), and wait for its form to be filled in.
 */
export async function openLab(context, baseUrl, { media } = {}) {
  const { page, errors } = await open(context, baseUrl, 'play=0&views=lab', { media });
  await page.evaluate(async () => {
    const el = document.querySelector('transformer-playground');
    await el.runsRestored;
    for (const r of [...el.runs]) await el.deleteRun(r.id);
  });
  await page.waitForFunction(
    () => {
      const lab = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-lab');
      return customElements.get('tp-lab') !== undefined && lab?.form != null;
    },
    null,
    { timeout: 60000 },
  );
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

/**
 * The English words that may stay on a Chinese page, one list for every test that scans
 * for English: names of products, formats and units; the notation of formulas and the
 * symbols of the model (d_k, W_Q, QKᵀ) and the function names formulas use (softmax, exp,
 * Concat, MultiHead, Sublayer, FFN, LN…); the Latin names Chinese texts on transformers do
 * write (Pre-LN, Post-LN, ReLU, GELU, softmax, logit, dropout, LayerNorm…); and the names of
 * keyboard keys. Setting values as a link spells them (alibi, greedy, causal…) are not on
 * it: the page shows each one in words.
 */
export const ENGLISH_ALLOWED = new Set(
  `Transformer WebGPU GPU CPU WebAssembly Vulkan Chrome Edge SVG PNG CSV JSON URL QR id ms KiB MiB kB KB MB GB FLOPs FLOP MACs
  logit logits softmax Softmax dropout Dropout Adam Noam ReLU GELU SiLU LayerNorm BatchNorm RMSNorm Pre Post LN
  RoPE ALiBi NoPE Shaw GPT LM FFN Q K V QK KV QKᵀ Kᵀ vᵀ d_k d_model d_ff d_head W_Q W_K W_V W_O
  PE x y h L S T N log exp max min sin cos tanh argmax top p k sqrt norm ln sum mean var std eps
  eos bos pad unk sep cls nats rad safetensors tplay viridis cividis PyTorch
  Shift Delete Enter Esc Escape Tab Ctrl Alt Home End PageUp PageDown
  Concat MultiHead Attention SelfAttention Sublayer BN Bernoulli`.split(/\s+/),
);

/**
 * The English words left on the page in `page` (every document, every shadow root): in
 * the text shown, the accessible names, tooltips and placeholders, the options of every
 * shown drop-down and the document's title. What the model reads or writes is not the
 * interface's and is skipped: token chips, the generated stream, the input boxes, code,
 * anything marked `data-model-text`, and the loaded models' vocabulary. Formulas are read:
 * a lesson's formula with words in it is translated, its math names are on the allow-list. Returns
 * one line per text with English in it (where, the text, the words), empty when none.
 * `firstScreen`: only what lies inside the viewport.
 */
export async function englishLeft(page, allow = ENGLISH_ALLOWED, { firstScreen = false } = {}) {
  const texts = await page.evaluate((firstScreen) => {
    const out = [];
    const vw = innerWidth;
    const vh = innerHeight;
    const shown = (e) => {
      if (!e || !e.getClientRects().length) return false;
      if (e.checkVisibility && !e.checkVisibility({ visibilityProperty: true, opacityProperty: true })) return false;
      if (!firstScreen) return true;
      const r = e.getBoundingClientRect();
      return r.bottom > 0 && r.right > 0 && r.top < vh && r.left < vw;
    };
    const modelText = (e) => !!e.closest('[data-model-text], .chips, .stream, [data-token], textarea, input, .mono, code');
    const vocab = new Set();
    const walk = (root) => {
      const tw = document.createTreeWalker(root, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT);
      for (let n = tw.nextNode(); n; n = tw.nextNode()) {
        if (n.nodeType === Node.TEXT_NODE) {
          const p = n.parentElement;
          const t = n.data.trim();
          if (t && p && !['STYLE', 'SCRIPT', 'OPTION', 'OPTGROUP', 'TEMPLATE', 'NOSCRIPT'].includes(p.tagName) && shown(p)) out.push({ text: t, model: modelText(p), where: p.tagName.toLowerCase() });
          continue;
        }
        if (n.tagName === 'TRANSFORMER-PLAYGROUND') for (const v of n.info?.vocab ?? []) vocab.add(v);
        if (shown(n)) {
          for (const a of ['aria-label', 'title', 'placeholder', 'aria-valuetext', 'alt', 'aria-description']) {
            const v = n.getAttribute(a);
            if (v) out.push({ text: v, model: modelText(n) && a !== 'aria-label', where: `${n.tagName.toLowerCase()}[${a}]` });
          }
          // A drop-down's options are read when it opens: all of them, and their groups.
          if (n.tagName === 'SELECT') {
            const model = !!n.closest('[data-model-text]');
            // An option that declares its own language (the language switch's "English") is a name in that language.
            for (const o of n.querySelectorAll('option')) {
              const own = !!o.lang && !o.lang.startsWith('zh');
              out.push({ text: o.textContent.trim(), model: model || own || !!o.closest('[data-model-text]'), where: 'option' });
            }
            for (const g of n.querySelectorAll('optgroup')) out.push({ text: g.label, model, where: 'optgroup' });
          }
        }
        if (n.shadowRoot) walk(n.shadowRoot);
      }
    };
    walk(document.documentElement);
    out.push({ text: document.title, model: false, where: 'title' });
    return { out, vocab: [...vocab] };
  }, firstScreen);
  const tokens = new Set(texts.vocab.flatMap((v) => v.split(/[^A-Za-z]+/)).filter(Boolean));
  const left = [];
  for (const { text, model, where } of texts.out) {
    if (model || !text) continue;
    // Quoted text (“cat”) is the reader's or the model's; E[token] and x^−0.5 are formulas;
    // identifiers (decoder.norm, W_Q, d_model, grammar-none.safetensors) and paths
    // (docs/model.md) are names, not words.
    const plain = text
      .replace(/“[^”]*”/g, ' ')
      .replace(/\w+\[[^\]]*\]/g, ' ')
      .replace(/\w+\^[−-]?[\d.]+/g, ' ')
      .replace(/[\w.-]*\.safetensors/g, ' ')
      .replace(/\b[\w-]+(?:\/[\w.-]+)+/g, ' ')
      .replace(/[\w.]*[_.][\w.]*\w/g, ' ');
    const bad = (plain.match(/[A-Za-z][A-Za-zᵀ]*/g) ?? []).filter((w) => w.length > 1 && !allow.has(w) && !tokens.has(w));
    if (bad.length) left.push(`${where}: ${JSON.stringify(text.slice(0, 100))} (${[...new Set(bad)].slice(0, 4).join(', ')})`);
  }
  return [...new Set(left)];
}
