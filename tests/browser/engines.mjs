// Drivers for the two engines beside Chromium, with one small interface the engine smoke
// suite (engines.test.mjs) uses for all three:
//   goto(url), reload(), evaluate(fn, ...args) (fn runs in the page; async allowed; the
//   result comes back as JSON), waitFor(fn, arg, timeout), screenshot(path), errors()
//   (console errors and uncaught exceptions of the page so far), close().
// - Gecko: Debian's firefox-esr through WebDriver BiDi (puppeteer-core, no browser download).
// - WebKit: WebKitGTK's WebKitWebDriver (webkit2gtk-driver) under Xvfb, spoken to in plain
//   W3C WebDriver over HTTP with node's fetch. Classic WebDriver has no console events, so
//   the page served to WebKit carries a first script (CONSOLE_HOOK) that keeps every
//   console error and uncaught exception in `window.__tplayErrors`.

import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { root } from './harness.mjs';

const require = createRequire(join(root, 'www/package.json'));

export const FIREFOX = process.env.TPLAY_FIREFOX ?? '/usr/bin/firefox-esr';
export const WEBKIT_DRIVER = process.env.TPLAY_WEBKIT_DRIVER ?? '/usr/bin/WebKitWebDriver';
export const XVFB_RUN = '/usr/bin/xvfb-run';

/** What is missing for `engine` to run here, or '' when nothing is. */
export function missing(engine) {
  if (engine === 'firefox') return existsSync(FIREFOX) ? '' : `no ${FIREFOX} (apt-get install firefox-esr, or set TPLAY_FIREFOX)`;
  if (!existsSync(WEBKIT_DRIVER)) return `no ${WEBKIT_DRIVER} (apt-get install webkit2gtk-driver, or set TPLAY_WEBKIT_DRIVER)`;
  if (!process.env.DISPLAY && !(existsSync(XVFB_RUN) && existsSync('/usr/bin/xauth'))) return `no display and no ${XVFB_RUN} or xauth (apt-get install xvfb xauth)`;
  return '';
}

/** The script served first in the WebKit page: console errors and uncaught exceptions, kept. */
export const CONSOLE_HOOK = `(() => {
  const kept = (window.__tplayErrors = []);
  const says = (x) => (x instanceof Error ? x.name + ': ' + x.message + (x.stack ? '\\n' + x.stack : '') : String(x));
  const error = console.error.bind(console);
  console.error = (...a) => { kept.push(a.map(says).join(' ')); error(...a); };
  addEventListener('error', (e) => kept.push('uncaught: ' + (e.error ? says(e.error) : e.message)));
  addEventListener('unhandledrejection', (e) => kept.push('unhandled rejection: ' + says(e.reason)));
  for (const k of ['alert', 'confirm', 'prompt']) window[k] = (m) => { kept.push('unexpected dialog: ' + m); return null; };
})();
`;

/** Poll `fn(arg)` in the page until it is truthy; resolves with its value. */
async function pollUntil(evaluate, fn, arg, timeout, what) {
  const deadline = Date.now() + timeout;
  let last;
  for (;;) {
    try {
      const v = await evaluate(fn, arg);
      if (v) return v;
    } catch (e) {
      last = e; // the page is between documents
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeout} ms waiting for ${what ?? fn.toString().slice(0, 160)}${last ? ` (last error: ${last.message})` : ''}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

export async function launchFirefox() {
  const puppeteer = require('puppeteer-core');
  const profile = mkdtempSync(join(tmpdir(), 'tplay-firefox-'));
  // The window's size comes from Firefox's own flags, not from puppeteer's viewport
  // emulation: that also sends `emulation.setScreenOrientationOverride`, which Firefox ESR
  // 140 does not know (the launch failed with "unknown command").
  const browser = await puppeteer.launch({
    browser: 'firefox',
    executablePath: FIREFOX,
    headless: true,
    userDataDir: profile,
    defaultViewport: null,
    args: ['--width=1280', '--height=900'],
    extraPrefsFirefox: {
      // Nothing outside this machine.
      'network.proxy.type': 0,
      'app.update.enabled': false,
      'browser.safebrowsing.malware.enabled': false,
      'browser.safebrowsing.phishing.enabled': false,
    },
  });
  const close = async () => {
    await browser.close().catch(() => {});
    rmSync(profile, { recursive: true, force: true });
  };
  // A browser that started but cannot be driven must not outlive the test (it kept the
  // test process, and CI, waiting): any failure from here on closes it.
  try {
    return await driveFirefox(browser, close);
  } catch (e) {
    await close();
    throw e;
  }
}

/** The driver over a started Firefox (its first page); `close` ends the browser and its profile. */
async function driveFirefox(browser, close) {
  const page = (await browser.pages())[0] ?? (await browser.newPage());
  const errors = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(String(e?.stack ?? e)));
  page.on('dialog', (d) => {
    errors.push(`unexpected dialog: ${d.message()}`);
    d.dismiss().catch(() => {});
  });
  const evaluate = (fn, ...args) => page.evaluate(fn, ...args);
  return {
    name: 'firefox',
    version: await browser.version(),
    goto: (url) => page.goto(url, { waitUntil: 'load' }),
    reload: () => page.reload({ waitUntil: 'load' }),
    evaluate,
    waitFor: (fn, arg, timeout = 60000, what) => pollUntil(evaluate, fn, arg, timeout, what),
    screenshot: (path) => page.screenshot({ path, fullPage: false }),
    errors: async () => [...errors],
    close,
  };
}

function freePort() {
  return new Promise((ok, no) => {
    const s = createServer();
    s.once('error', no);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
  });
}

/** The MiniBrowser WebKitGTK ships beside its driver (Debian: libwebkit2gtk-4.1-0's). */
function miniBrowser() {
  const found = ['/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser', '/usr/lib/aarch64-linux-gnu/webkit2gtk-4.1/MiniBrowser', '/usr/lib/x86_64-linux-gnu/webkit2gtk-4.0/MiniBrowser', '/usr/lib/x86_64-linux-gnu/webkitgtk-6.0/MiniBrowser'].find((p) => existsSync(p));
  return process.env.TPLAY_MINIBROWSER ?? found;
}

export async function launchWebKit() {
  const port = await freePort();
  const cmd = process.env.DISPLAY ? [WEBKIT_DRIVER, `--port=${port}`] : [XVFB_RUN, '-a', '-s', '-screen 0 1280x1024x24', WEBKIT_DRIVER, `--port=${port}`];
  const proc = spawn(cmd[0], cmd.slice(1), { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  proc.stdout.on('data', (d) => (log += d));
  proc.stderr.on('data', (d) => (log += d));
  const base = `http://127.0.0.1:${port}`;
  const call = async (method, path, body) => {
    const r = await fetch(base + path, { method, headers: { 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    const j = await r.json();
    if (!r.ok) throw new Error(`WebDriver ${method} ${path}: ${j.value?.error}: ${j.value?.message}`);
    return j.value;
  };
  const kill = () => {
    try {
      process.kill(-proc.pid, 'SIGTERM');
    } catch {}
  };
  // The driver listens a moment after it starts.
  const deadline = Date.now() + 20000;
  for (;;) {
    try {
      await call('GET', '/status');
      break;
    } catch (e) {
      if (Date.now() > deadline || proc.exitCode !== null) {
        kill();
        throw new Error(`WebKitWebDriver did not start: ${e.message}\n${log}`);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  const binary = miniBrowser();
  let session;
  try {
    session = await call('POST', '/session', {
      capabilities: {
        alwaysMatch: {
          'webkitgtk:browserOptions': { ...(binary ? { binary } : {}), args: ['--automation', '--geometry=1280x900'] },
          timeouts: { script: 600000, pageLoad: 120000 },
        },
      },
    });
  } catch (e) {
    kill();
    throw new Error(`${e.message}\n${log}`);
  }
  const sid = `/session/${session.sessionId}`;
  await call('POST', `${sid}/window/rect`, { width: 1280, height: 900 }).catch(() => {});
  const evaluate = async (fn, ...args) => {
    const script = `const done = arguments[arguments.length - 1];
      Promise.resolve().then(() => (${fn.toString()})(...${JSON.stringify(args)}))
        .then((v) => done({ ok: v === undefined ? null : JSON.parse(JSON.stringify(v)) }), (e) => done({ err: String(e && (e.stack || e.message) || e) }));`;
    const r = await call('POST', `${sid}/execute/async`, { script, args: [] });
    if (r && 'err' in r) throw new Error(`in the page: ${r.err}`);
    return r?.ok;
  };
  const errors = [];
  // The hook's list lives in the document: keep it before the document goes.
  const harvest = async () => {
    try {
      errors.push(...((await evaluate(() => window.__tplayErrors ?? [])) ?? []));
    } catch {}
  };
  return {
    name: 'webkit',
    version: `${session.capabilities.browserName} ${session.capabilities.browserVersion}`,
    async goto(url) {
      await harvest();
      await call('POST', `${sid}/url`, { url });
    },
    async reload() {
      await harvest();
      await call('POST', `${sid}/refresh`, {});
    },
    evaluate,
    waitFor: (fn, arg, timeout = 60000, what) => pollUntil(evaluate, fn, arg, timeout, what),
    async screenshot(path) {
      writeFileSync(path, Buffer.from(await call('GET', `${sid}/screenshot`), 'base64'));
    },
    async errors() {
      const now = (await evaluate(() => window.__tplayErrors ?? []).catch(() => [])) ?? [];
      return [...errors, ...now];
    },
    async close() {
      await call('DELETE', sid).catch(() => {});
      kill();
    },
  };
}
