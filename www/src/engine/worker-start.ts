// Starting the engine's worker when the playground's script comes from another origin than
// the page (a CDN, a site's asset host): a browser starts a worker only from the page's own
// origin, so the worker is started from a same-origin `blob:` module that imports the real
// one (module scripts from another origin need CORS, which that host sends already, since
// the page could load the playground's module from it). The worker's own URL, and so its
// wasm's, stays the other origin's. A host's policy must then allow `worker-src blob:`.

type WorkerCtor = new (url: string | URL, opts?: WorkerOptions) => Worker;

/**
 * `make()` is the plain `new Worker(new URL('./worker.ts', import.meta.url), …)` (the form
 * bundlers follow); when the browser refuses it as cross-origin, the same call is replayed
 * to learn its URL and options, and the worker starts from a blob shim instead.
 */
export function startWorker(make: () => Worker): Worker {
  try {
    return make();
  } catch (e) {
    if (!(e instanceof DOMException && e.name === 'SecurityError') || typeof Blob === 'undefined') throw e;
    const Real = globalThis.Worker as WorkerCtor;
    let seen: { url: string; opts?: WorkerOptions } | null = null;
    (globalThis as { Worker: unknown }).Worker = class {
      constructor(url: string | URL, opts?: WorkerOptions) {
        seen = { url: String(url), opts };
      }
    };
    try {
      make();
    } finally {
      (globalThis as { Worker: unknown }).Worker = Real;
    }
    const target = seen as { url: string; opts?: WorkerOptions } | null;
    if (!target || new URL(target.url, location.href).origin === location.origin) throw e;
    const shim = URL.createObjectURL(new Blob([`import ${JSON.stringify(new URL(target.url, location.href).href)};\n`], { type: 'text/javascript' }));
    return new Real(shim, { ...target.opts, type: 'module' });
  }
}
