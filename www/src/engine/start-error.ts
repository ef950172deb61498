// Why the engine could not start, in words a site's author can act on. A browser refuses
// to start the engine in three ways a host page causes (the third only where a worker
// cannot be started from a blob either, see ./worker-start.ts), each with a technical message
// (a CompileError naming 'wasm-eval', a SecurityError naming the worker's script): the
// page's Content-Security-Policy forbids WebAssembly, or forbids the worker, or the
// playground's script comes from another origin than the page. Everything else is left
// as it is (null).

import { msg, str } from '@lit/localize';

export type StartProblem = 'csp-wasm' | 'csp-worker' | 'cross-origin';

// A worker the policy refuses fails later, as an error event with no message: the page's
// violation report is what names the cause.
let workerRefused = false;
if (typeof document !== 'undefined') {
  document.addEventListener('securitypolicyviolation', (e) => {
    if (e.effectiveDirective === 'worker-src' || e.effectiveDirective === 'child-src') workerRefused = true;
  });
}

/** Which of the host's refusals `text` (an error's message) is, or null. */
export function startProblem(text: string): StartProblem | null {
  // Chromium: "…Refused to compile or instantiate WebAssembly module because 'wasm-eval'
  // (or 'unsafe-eval') is not an allowed source of script…"; Firefox: "call to
  // WebAssembly.instantiate() blocked by CSP"; Safari: "Refused to create a WebAssembly object".
  if (/wasm-(unsafe-)?eval|WebAssembly[^]*(blocked by CSP|Content Security Policy|Refused)|Refused to (compile|create)[^]*WebAssembly/i.test(text)) return 'csp-wasm';
  // Chromium: "Failed to construct 'Worker': Access to the script at '…' is denied by the
  // document's Content Security Policy."
  if (/Worker[^]*Content Security Policy|Content Security Policy[^]*worker/i.test(text)) return 'csp-worker';
  // Chromium: "Failed to construct 'Worker': Script at '…' cannot be accessed from origin '…'."
  if (/Worker[^]*cannot be accessed from origin|Worker[^]*(same-origin|same origin)/i.test(text)) return 'cross-origin';
  return null;
}

/**
 * The message the widget shows for an error on the way to the first picture: what the
 * host must allow or change when the host refused, else the error's own message.
 * `scriptUrl`: where the playground's script came from (its origin is named).
 */
export function startErrorText(e: unknown, scriptUrl: string): string {
  const text = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  const problem = startProblem(text) ?? (workerRefused ? 'csp-worker' : null);
  if (problem === 'csp-wasm')
    return msg(
      "this site's Content-Security-Policy does not allow WebAssembly, which the playground's engine runs on. The site must add 'wasm-unsafe-eval' to its script-src directive (the playground's README lists the whole policy).",
      { id: 'start.csp-wasm' },
    );
  if (problem === 'csp-worker')
    return msg(
      "this site's Content-Security-Policy does not allow the playground's engine to start its Web Worker. The site must allow it in worker-src: worker-src 'self' where the playground's folder is on this site, worker-src blob: where its script comes from another site (the playground's README lists the whole policy).",
      { id: 'start.csp-worker' },
    );
  if (problem === 'cross-origin') {
    const origin = safeOrigin(scriptUrl);
    return msg(
      str`the playground's script comes from ${origin}, another site than this page, and browsers start its engine (a Web Worker) only from the page's own site. Copy the playground's folder onto this site or install the npm package, or embed embed.html in an iframe.`,
      { id: 'start.cross-origin' },
    );
  }
  return e instanceof Error ? e.message : String(e);
}

function safeOrigin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}
