// The engine's Web Worker: owns the wasm `Engine`, answers one request at a time, and
// keeps the page responsive while the model computes. It decides nothing about the
// model; it moves bytes and typed arrays between the page and the Rust core.

import init, { Engine } from '../../pkg/tplay.js';
import type { Api, BackendInfo, BackendName, EventMessage, Op, Parity, RequestMessage, ResponseMessage } from './protocol';

declare const self: DedicatedWorkerGlobalScope;

let engine: Engine | null = null;
/** The wasm instance's exports (its linear memory, for `memoryUse`). */
let wasm: { memory: WebAssembly.Memory } | null = null;
let backend: BackendInfo = {
  backend: 'cpu',
  reason: 'starting on the CPU',
  detail: null,
  adapter: null,
  parity: null,
};

async function ready(): Promise<Engine> {
  if (!engine) {
    emit({ event: 'progress', progress: { phase: 'engine', label: 'Starting the engine (compiling the WebAssembly core)', done: 0, total: 1 } });
    wasm = await init();
    engine = new Engine();
    emit({ event: 'progress', progress: { phase: 'engine', label: 'The engine is running', done: 1, total: 1 } });
  }
  return engine;
}

/** Every typed-array buffer inside a result, so postMessage moves rather than copies. */
function transferables(v: unknown, out: Transferable[] = [], seen = new Set<ArrayBuffer>()): Transferable[] {
  if (v instanceof Float32Array || v instanceof Float64Array || v instanceof Uint32Array || v instanceof Int32Array || v instanceof Uint8Array) {
    const b = v.buffer as ArrayBuffer;
    if (!seen.has(b)) {
      seen.add(b);
      out.push(b);
    }
  } else if (Array.isArray(v)) {
    for (const x of v) transferables(x, out, seen);
  } else if (v && typeof v === 'object') {
    for (const x of Object.values(v)) transferables(x, out, seen);
  }
  return out;
}

function emit(e: EventMessage): void {
  self.postMessage(e);
}

/** A GPU failure the core survived by moving to the CPU: tell the page. */
function noteFallback(fallback: string | null): void {
  if (!fallback) return;
  backend = {
    backend: 'cpu',
    reason: 'the GPU failed — generation carries on on the CPU',
    detail: fallback,
    adapter: backend.adapter,
    parity: backend.parity,
  };
  emit({ event: 'backend', info: backend });
}

function describeError(e: unknown): string {
  if (e instanceof Error) return e.message;
  return String(e);
}

/** The few WebGPU fields the badge shows (the DOM typings have no WebGPU yet). */
interface GpuLike {
  requestAdapter(): Promise<{ info?: { vendor?: string; architecture?: string; description?: string }; isFallbackAdapter?: boolean } | null>;
}

/** "google swiftshader (a software fallback)": what the browser says about its adapter. */
async function describeAdapter(gpu: GpuLike): Promise<string | null> {
  try {
    const a = await gpu.requestAdapter();
    const info = a?.info;
    if (!info) return null;
    const name = [info.vendor, info.architecture, info.description].filter((x) => x && x.trim()).join(' ');
    if (!name) return null;
    return a.isFallbackAdapter || (a.info as { isFallbackAdapter?: boolean }).isFallbackAdapter ? `${name}, a software fallback` : name;
  } catch {
    return null;
  }
}

/**
 * A response's body, read chunk by chunk, telling the page how many bytes have arrived
 * (at most every 50 ms, and always the last count) so a slow download shows its progress.
 */
async function readWithProgress(resp: Response, name: string): Promise<Uint8Array> {
  const header = Number(resp.headers.get('Content-Length'));
  const total = Number.isFinite(header) && header > 0 ? header : null;
  const label = `Downloading ${name}`;
  if (!resp.body) return new Uint8Array(await resp.arrayBuffer());
  const reader = resp.body.getReader();
  const chunks: Uint8Array[] = [];
  let done = 0;
  let last = 0;
  emit({ event: 'progress', progress: { phase: 'download', label, done, total } });
  for (;;) {
    const r = await reader.read();
    if (r.done) break;
    chunks.push(r.value);
    done += r.value.length;
    const now = performance.now();
    if (now - last > 50) {
      last = now;
      emit({ event: 'progress', progress: { phase: 'download', label, done, total } });
    }
  }
  emit({ event: 'progress', progress: { phase: 'download', label, done, total: total ?? done } });
  const out = new Uint8Array(done);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

/** Checkpoints fetched for side studies (the loaded model stays), by URL. */
const checkpoints = new Map<string, Uint8Array>();

async function bytesOf(url: string): Promise<Uint8Array> {
  const have = checkpoints.get(url);
  if (have) return have;
  const resp = await fetch(url);
  if (!resp.ok) throw new Error(`cannot fetch ${url}: HTTP ${resp.status}`);
  const bytes = new Uint8Array(await resp.arrayBuffer());
  checkpoints.set(url, bytes);
  return bytes;
}

async function setBackend(want: BackendName): Promise<BackendInfo> {
  const eng = await ready();
  if (want === 'cpu') {
    eng.use_cpu();
    backend = { backend: 'cpu', reason: 'the CPU was chosen', detail: null, adapter: backend.adapter, parity: backend.parity };
    return backend;
  }
  const nav = self.navigator as Navigator & { gpu?: unknown };
  if (!nav.gpu) {
    eng.use_cpu();
    backend = {
      backend: 'cpu',
      reason: 'WebGPU is unavailable in this browser — running on the CPU',
      detail: 'this browser has no navigator.gpu',
      adapter: null,
      parity: null,
    };
    return backend;
  }
  let adapter: string;
  try {
    adapter = (await eng.use_gpu()).trim().replace(/^\((.*)\)$/, '$1');
    adapter = (await describeAdapter(nav.gpu as GpuLike)) ?? adapter;
  } catch (e) {
    eng.use_cpu();
    backend = {
      backend: 'cpu',
      reason: 'WebGPU is unavailable in this browser — running on the CPU',
      detail: describeError(e),
      adapter: null,
      parity: null,
    };
    return backend;
  }
  return checkParity(eng, adapter, () => eng.parity());
}

/**
 * One forward pass on both backends: the GPU runs only while it agrees with the CPU
 * reference. A NaN or a stray infinity in its logits is an infinite difference.
 */
async function checkParity(eng: Engine, adapter: string | null, measure: () => Promise<Parity>): Promise<BackendInfo> {
  let p: Parity;
  try {
    p = await measure();
  } catch (e) {
    eng.use_cpu();
    backend = {
      backend: 'cpu',
      reason: 'WebGPU started but its test pass failed — running on the CPU',
      detail: describeError(e),
      adapter,
      parity: null,
    };
    return backend;
  }
  if (p.agrees) {
    backend = { backend: 'webgpu', reason: 'running on WebGPU', detail: null, adapter, parity: p.max_abs_diff };
  } else {
    eng.use_cpu();
    backend = {
      backend: 'cpu',
      reason: 'WebGPU gives logits that disagree with the CPU — running on the CPU',
      detail: Number.isFinite(p.max_abs_diff)
        ? `the largest GPU−CPU logit difference is ${p.max_abs_diff}`
        : 'the GPU returned NaN or infinite logits where the CPU did not',
      adapter,
      parity: p.max_abs_diff,
    };
  }
  return backend;
}

/** How the worker answers each request: the core's typed results, passed on. */
type Handlers = { [K in Op]: (eng: Engine, req: Api[K]['req']) => Promise<Api[K]['res']> | Api[K]['res'] };

const handlers: Handlers = {
  async load(eng, { url }) {
    const resp = await fetch(url);
    if (!resp.ok) throw new Error(`cannot fetch ${url}: HTTP ${resp.status}`);
    const info = eng.load(await readWithProgress(resp, url.slice(url.lastIndexOf('/') + 1)));
    if (backend.backend === 'webgpu') {
      // A new model: measure the GPU against the CPU again, on this model.
      emit({ event: 'backend', info: await checkParity(eng, backend.adapter, () => eng.parity()) });
    }
    return info;
  },
  async loadBytes(eng, { bytes }) {
    const info = eng.load(bytes);
    if (backend.backend === 'webgpu') {
      emit({ event: 'backend', info: await checkParity(eng, backend.adapter, () => eng.parity()) });
    }
    return info;
  },
  runDefaults: (eng, req) => eng.run_defaults(req),
  trainStart: (eng, req) => eng.train_start(req),
  trainChunk: (eng, req) => eng.train_chunk(req),
  // The weights copied back from the GPU first, when the run trains there.
  trainExport: (eng) => eng.train_export(),
  // Both in one request (the worker takes one at a time), so no chunk of steps falls between them.
  async trainSnapshot(eng) {
    const checkpoint = await eng.train_export();
    return { checkpoint, state: await eng.train_export_state() };
  },
  trainResume: (eng, { settings, checkpoint, state }) => eng.train_resume(settings, checkpoint, state),
  layerPlan: (eng) => eng.layer_plan(),
  tokenize: (eng, { text }) => eng.tokenize(text),
  setBackend: (_eng, { backend: want }) => setBackend(want),
  async forward(eng, req) {
    const r = await eng.forward(req);
    noteFallback(r.fallback);
    return r;
  },
  generateStart(eng, req) {
    const r = eng.generate_start(req);
    noteFallback(r.fallback);
    return r;
  },
  async generateStep(eng) {
    const r = await eng.generate_step();
    noteFallback(r.fallback);
    return r;
  },
  async generateSteps(eng, req) {
    const r = await eng.generate_steps(req);
    noteFallback(r.fallback);
    return r;
  },
  cost: (eng, req) => eng.cost(req),
  noam: (eng, req) => eng.noam(req),
  async testOnlyNanGpuParity(eng) {
    // TEST ONLY: the parity check as if every GPU logit came back NaN.
    if (backend.backend !== 'webgpu') throw new Error('the NaN parity test needs the WebGPU backend');
    const info = await checkParity(eng, backend.adapter, () => eng.test_only_parity_with_nan_gpu_logits());
    emit({ event: 'backend', info });
    return info;
  },
  testOnlyLoseGpu: (eng) => eng.test_only_lose_gpu(),
  memoryUse() {
    // Chromium's non-standard performance.memory, where the worker has it.
    const heap = (performance as Performance & { memory?: { usedJSHeapSize: number } }).memory;
    return { wasm_bytes: wasm?.memory.buffer.byteLength ?? 0, js_heap_bytes: heap?.usedJSHeapSize ?? null };
  },
  scoreScaling: (eng, req) => eng.score_scaling(req),
  positions: (eng, req) => eng.positions(req),
  ropeDemo: (eng, req) => eng.rope_demo(req),
  embeddingScale: (eng, req) => eng.embedding_scale(req),
  blockProbe: (eng, req) => eng.block_probe(req),
  blockDiff: (eng, req) => eng.block_diff(req),
  normCoupling: async (eng, { sibling_url, sibling_name, ...req }) =>
    eng.norm_coupling(req, sibling_url ? await bytesOf(sibling_url) : new Uint8Array(), sibling_name ?? ''),
  dropoutDemo: (eng, req) => eng.dropout_demo(req),
  extrapolation: async (eng, { url, sequences }) => eng.extrapolation(await bytesOf(url), sequences),
  permutation: async (eng, { url, text, perm, causal }) =>
    eng.permutation(await bytesOf(url), text, Uint32Array.from(perm), causal),
  parallel: (eng, req) => eng.parallel(req),
  scoring: (eng, req) => eng.scoring(req),
  testOnlyCrash(eng, { kind }) {
    // Test-only (see Api.testOnlyCrash): die the two ways an engine can.
    if (kind === 'trap') eng.test_only_trap();
    setTimeout(() => {
      throw new Error('test-only: the worker threw outside any request');
    });
    return null;
  },
};

async function handle<K extends Op>(op: K, payload: Api[K]['req']): Promise<Api[K]['res']> {
  const eng = await ready();
  const h = handlers[op] as Handlers[K] | undefined;
  if (!h) throw new Error(`unknown request '${String(op)}'`);
  return h(eng, payload);
}

// One request at a time, in arrival order: the engine is a single stateful object.
let queue: Promise<void> = Promise.resolve();

self.onmessage = (ev: MessageEvent<RequestMessage>) => {
  const { id, op, payload } = ev.data;
  queue = queue.then(async () => {
    let msg: ResponseMessage;
    try {
      const result = await handle(op, payload);
      msg = { id, ok: true, result };
      self.postMessage(msg, transferables(result));
    } catch (e) {
      // A trap (a Rust panic, out of memory) leaves the wasm instance unusable: say so
      // and close, and the page starts a fresh worker.
      const fatal = e instanceof WebAssembly.RuntimeError;
      msg = { id, ok: false, error: describeError(e), fatal };
      self.postMessage(msg);
      if (fatal) self.close();
    }
  });
};
