// The engine's Web Worker: owns the wasm `Engine`s, answers one request at a time, and
// keeps the page responsive while the model computes. It decides nothing about the
// model; it moves bytes and typed arrays between the page and the Rust core.
//
// Every playground of a page is a session of this one worker (RequestMessage.session):
// the WebAssembly core is compiled once, each session has an `Engine` of its own (its
// model, generation, edits and backend), and each checkpoint is fetched once, by URL,
// and kept for every session that loads it.
//
// The core comes as WebAssembly modules built from the same Rust (crate/src/wasm.rs): the
// inference engine (loading, forward passes, generation, weights), which a first visit
// downloads, and the whole engine (`tplay`: also the trainer and the side studies),
// fetched the first time a request needs it. The inference engine comes in two builds:
// with its WebGPU backend (`tplay_infer_gpu`) where the browser offers a WebGPU adapter,
// and without it (`tplay_infer`, a fifth smaller) where it offers none, so a browser that
// can never use the GPU never downloads its kernels. The lab's training worker
// ('tplay-train') runs the whole engine from the start. In the page's worker a session
// keeps its model, generation and edits in its inference engine; a side study is answered
// by a second engine of the whole module holding the same model (exported by the first,
// loaded bit for bit) on the same kind of backend.

import type { Engine as InferEngine } from '../../pkg/tplay_infer.js';
import type { Engine as LabEngine } from '../../pkg/tplay.js';
import type { Api, BackendInfo, HfFiles, ModelInfo, BackendStatus, BackendWant, CloseMessage, ErrorKind, EventMessage, Op, RequestMessage, ResponseMessage } from './protocol';
import { NO_GPU_DETAIL } from './protocol';

declare const self: DedicatedWorkerGlobalScope;

/** Either module's engine: the inference engine's methods are the same in both. */
type Engine = InferEngine | LabEngine;

/** The whole engine answering a session's side studies, and what it holds. */
interface Study {
  engine: LabEngine;
  /** The session's `model` count it has loaded (0: none). */
  model: number;
  /** It was last put on the GPU (for the studies that time the backend). */
  gpu: boolean;
}

/** One playground's engine and the backend it runs on. */
interface Session {
  engine: Engine | null;
  backend: BackendInfo;
  /** Counts the changes of the session's model (loads and weight edits); 0: none loaded. */
  model: number;
  study: Study | null;
  want: BackendWant;
}
const sessions = new Map<number, Session>();
/** The session of the request being answered (requests are answered one at a time). */
let current = 0;
let engine: Engine | null = null;
let model = 0;
let study: Study | null = null;
/** The wasm instances' exports (their linear memories, for `memoryUse`). */
let wasm: { memory: WebAssembly.Memory } | null = null;
let labWasm: { memory: WebAssembly.Memory } | null = null;
/** The inference engine's class, once its module is compiled (for every session). */
let compiled: Promise<typeof InferEngine> | null = null;
/** Whether the browser offered a WebGPU adapter when the inference engine was chosen. */
let gpuOffered = false;
let backend: BackendInfo = infoOf({ kind: 'starting' });
/** What the session last asked for (`setBackend`): a new engine of the session is put on the same. */
let want: BackendWant = 'auto';

/** The lab's training worker runs the whole engine for every request. */
const whole = self.name === 'tplay-train';

type LabModule = typeof import('../../pkg/tplay.js');
let labModule: Promise<LabModule> | null = null;

/** The whole engine's module, fetched and compiled once, the first time it is needed. */
function lab(): Promise<LabModule> {
  labModule ??= import('../../pkg/tplay.js').then(async (m) => {
    labWasm = await m.default();
    return m;
  });
  // A failed fetch (offline before the module was ever kept) may be retried later.
  labModule.catch(() => (labModule = null));
  return labModule;
}

/**
 * The badge's record of the core's status: the reason and the detail in English words for
 * the scripting API (`backendInfo`); the page words them in its language by `status.kind`.
 */
function infoOf(status: BackendStatus): BackendInfo {
  const race = status.kind === 'webgpu_checked' || status.kind === 'cpu_faster' ? { cpu_ms: status.cpu_ms, gpu_ms: status.gpu_ms, unit: status.unit } : null;
  const base = { status, detail: null, adapter: 'adapter' in status ? status.adapter : null, parity: null, race };
  switch (status.kind) {
    case 'starting':
      return { ...base, backend: 'cpu', reason: 'starting on the CPU' };
    case 'cpu_chosen':
      return { ...base, backend: 'cpu', reason: 'the CPU was chosen', adapter: backend?.adapter ?? null, parity: backend?.parity ?? null };
    case 'webgpu':
      return { ...base, backend: 'webgpu', reason: 'running on WebGPU' };
    case 'webgpu_checked':
      return { ...base, backend: 'webgpu', reason: 'running on WebGPU', parity: status.parity };
    case 'cpu_faster':
      return { ...base, backend: 'cpu', reason: 'WebGPU agrees with the CPU but is slower for this model — running on the CPU', parity: status.parity };
    case 'cpu_no_gpu':
      return { ...base, backend: 'cpu', reason: 'WebGPU is unavailable in this browser — running on the CPU', detail: status.detail };
    case 'cpu_test_failed':
      return { ...base, backend: 'cpu', reason: 'WebGPU started but its test pass failed — running on the CPU', detail: status.detail };
    case 'cpu_disagrees': {
      const d = status.max_abs_diff;
      return {
        ...base,
        backend: 'cpu',
        reason: 'WebGPU gives logits that disagree with the CPU — running on the CPU',
        detail: d !== undefined && d !== null ? `the largest GPU−CPU logit difference is ${d}` : 'the GPU returned NaN or infinite logits where the CPU did not',
        parity: d ?? Infinity,
      };
    }
    case 'cpu_fell_back':
      return { ...base, backend: 'cpu', reason: 'the GPU failed — generation carries on on the CPU', detail: status.detail, parity: backend?.parity ?? null };
    case 'cpu_refused':
    case 'cpu_lost':
      return { ...base, backend: 'cpu', reason: 'the GPU failed — generation carries on on the CPU', detail: status.detail };
  }
}

/** How long the choice of the inference engine waits for the browser's WebGPU adapter. */
const ADAPTER_WAIT_MS = 2000;

/**
 * The inference engine's module: the build with the WebGPU backend where the browser has
 * a WebGPU adapter to give, the build without it elsewhere.
 */
async function inferModule(): Promise<typeof InferEngine> {
  const nav = self.navigator as Navigator & { gpu?: GpuLike };
  // A GPU process busy with another page's work can take many seconds to answer; past
  // ADAPTER_WAIT_MS the engine with the GPU backend is taken (it can do everything).
  const answer = nav.gpu?.requestAdapter().then((a) => !!a, () => false);
  const wait = new Promise<boolean>((ok) => setTimeout(() => ok(true), ADAPTER_WAIT_MS));
  gpuOffered = !!answer && (await Promise.race([answer, wait]));
  const m = gpuOffered ? await import('../../pkg/tplay_infer_gpu.js') : await import('../../pkg/tplay_infer.js');
  wasm = await m.default();
  return m.Engine;
}

async function ready(): Promise<Engine> {
  if (!engine) {
    emit({ event: 'progress', progress: { phase: 'engine', label: 'Starting the engine (compiling the WebAssembly core)', done: 0, total: 1 } });
    // The core is compiled once for every session.
    if (whole) {
      engine = new (await lab()).Engine();
    } else {
      compiled ??= inferModule();
      engine = new (await compiled)();
    }
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
  self.postMessage({ ...e, session: current });
}

/** A GPU failure the core survived by moving to the CPU: tell the page what the core says. */
function noteFallback(eng: Engine, fallback: string | null): void {
  if (!fallback) return;
  backend = infoOf(eng.backend_status());
  emit({ event: 'backend', info: backend });
}

function describeError(e: unknown): string {
  if (e instanceof Error) return e.message;
  return String(e);
}

/** The kind of a core error (`EngineError`), when the core threw it. */
function errorKind(e: unknown): ErrorKind | undefined {
  const k = (e as { kind?: unknown } | null)?.kind;
  return typeof k === 'string' ? (k as ErrorKind) : undefined;
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

/**
 * Checkpoints fetched, by URL, for every session: a model loaded by a second playground,
 * or by a side study, is not fetched again. (The engine copies what it loads, so the
 * bytes kept here are never changed.)
 */
const checkpoints = new Map<string, Uint8Array>();

async function bytesOf(url: string, progress = false): Promise<Uint8Array> {
  const have = checkpoints.get(url);
  if (have) return have;
  const resp = await fetch(url);
  if (!resp.ok) throw new Error(`cannot fetch ${url}: HTTP ${resp.status}`);
  const bytes = progress ? await readWithProgress(resp, url.slice(url.lastIndexOf('/') + 1)) : new Uint8Array(await resp.arrayBuffer());
  checkpoints.set(url, bytes);
  return bytes;
}

async function setBackend(wanted: BackendWant): Promise<BackendInfo> {
  want = wanted;
  const eng = await ready();
  const nav = self.navigator as Navigator & { gpu?: unknown };
  const gpu = want !== 'cpu';
  if (gpu && !nav.gpu) {
    eng.use_cpu();
    backend = infoOf({ kind: 'cpu_no_gpu', detail: NO_GPU_DETAIL.noNavigatorGpu });
    return backend;
  }
  // The inference engine without a WebGPU backend runs here because the browser offered
  // no adapter (the whole engine, of a Hugging Face folder, has the backend).
  if (gpu && !whole && !gpuOffered && compiled && eng instanceof (await compiled)) {
    eng.use_cpu();
    backend = infoOf({ kind: 'cpu_no_gpu', detail: NO_GPU_DETAIL.noAdapter });
    return backend;
  }
  const adapter = gpu ? await describeAdapter(nav.gpu as GpuLike) : null;
  // auto: the GPU only where it agrees and wins the race on this model; webgpu: wherever it agrees.
  backend = infoOf(await eng.select_backend(gpu ? 'webgpu' : 'cpu', adapter ?? undefined, want === 'auto'));
  return backend;
}

/** A new model: the core measures the GPU against the CPU again, on this model. */
async function recheck(eng: Engine): Promise<void> {
  // On the GPU, or on the CPU because the GPU lost the race on the last model: race again.
  if (backend.backend !== 'webgpu' && backend.status.kind !== 'cpu_faster') return;
  backend = infoOf(await eng.recheck_backend());
  emit({ event: 'backend', info: backend });
}

/**
 * The whole engine for a request only it answers. In the lab's worker that is the
 * session's own engine; in the page's worker it is the session's study engine, started the
 * first time (the whole module fetched then), given the session's model as it computes
 * now when `withModel` and it holds an older one, and, when `onGpu` (the studies that time
 * the backend), on the GPU while the session runs there and on the CPU otherwise.
 */
async function labEngine(eng: Engine, withModel: boolean, onGpu = false): Promise<LabEngine> {
  if (whole) return eng as LabEngine;
  const m = await lab();
  // A session running a Hugging Face folder runs the whole engine already (loadFolder).
  if (eng instanceof m.Engine) return eng;
  study ??= { engine: new m.Engine(), model: 0, gpu: false };
  if (withModel && model !== 0 && study.model !== model) {
    study.engine.load(eng.export_model());
    study.model = model;
  }
  const gpu = backend.backend === 'webgpu';
  if (onGpu && study.gpu !== gpu) {
    study.gpu = gpu;
    if (gpu) await study.engine.select_backend('webgpu', backend.adapter ?? undefined, false);
    else study.engine.use_cpu();
  }
  return study.engine;
}

/**
 * Load a Hugging Face folder. Its loader comes with the whole engine, so in the page's
 * worker the session's engine becomes one of the whole module (on the backend the session
 * chose) once the folder has loaded; a bad folder leaves the session as it was.
 */
async function loadFolder(eng: Engine, files: HfFiles): Promise<ModelInfo> {
  const next = whole ? (eng as LabEngine) : new (await lab()).Engine();
  let info: ModelInfo;
  try {
    info = next.load_hf(files.config, files.model, files.tokenizerJson, files.vocabJson, files.merges);
  } catch (e) {
    if (next !== eng) next.free();
    throw e;
  }
  if (next !== eng) {
    if (backend.backend === 'webgpu' || backend.status.kind === 'cpu_faster') {
      backend = infoOf(await next.select_backend('webgpu', backend.adapter ?? undefined, want === 'auto'));
      emit({ event: 'backend', info: backend });
    }
    eng.free();
    engine = next;
    // The study engine's model is older; the session's engine now answers the studies itself.
    study?.engine.free();
    study = null;
  } else {
    await recheck(eng);
  }
  model++;
  return info;
}

/** How the worker answers each request: the core's typed results, passed on. */
type Handlers = { [K in Op]: (eng: Engine, req: Api[K]['req']) => Promise<Api[K]['res']> | Api[K]['res'] };

const handlers: Handlers = {
  async load(eng, { url }) {
    const info = eng.load(await bytesOf(url, true));
    model++;
    await recheck(eng);
    return info;
  },
  async loadBytes(eng, { bytes }) {
    const info = eng.load(bytes);
    model++;
    await recheck(eng);
    return info;
  },
  hfCheck: async (eng, { config }) => (await labEngine(eng, false)).hf_check(config),
  loadHf: (eng, { files }) => loadFolder(eng, files),
  tokenizeTrace: async (eng, { text }) => (await labEngine(eng, true)).tokenize_trace(text),
  runDefaults: async (eng, req) => (await labEngine(eng, false)).run_defaults(req),
  runFootprint: async (eng, req) => (await labEngine(eng, false)).run_footprint(req),
  trainStart: async (eng, req) => (await labEngine(eng, false)).train_start(req),
  trainChunk: async (eng, req) => (await labEngine(eng, false)).train_chunk(req),
  // The weights copied back from the GPU first, when the run trains there.
  trainExport: async (eng) => (await labEngine(eng, false)).train_export(),
  // Both in one request (the worker takes one at a time), so no chunk of steps falls between them.
  async trainSnapshot(eng) {
    const run = await labEngine(eng, false);
    const checkpoint = await run.train_export();
    return { checkpoint, state: await run.train_export_state() };
  },
  trainResume: async (eng, { settings, checkpoint, state }) => (await labEngine(eng, false)).train_resume(settings, checkpoint, state),
  layerPlan: (eng) => eng.layer_plan(),
  tokenize: (eng, { text }) => eng.tokenize(text),
  modelInput: (eng, req) => eng.model_input(req),
  setBackend: (_eng, { backend: want }) => setBackend(want),
  async measureBackend(_eng, { backend: want }) {
    const info = await setBackend(want);
    emit({ event: 'backend', info });
    return info;
  },
  async forward(eng, req) {
    const r = await eng.forward(req);
    noteFallback(eng, r.fallback);
    return r;
  },
  generateStart(eng, req) {
    const r = eng.generate_start(req);
    noteFallback(eng, r.fallback);
    return r;
  },
  async generateStep(eng) {
    const r = await eng.generate_step();
    noteFallback(eng, r.fallback);
    return r;
  },
  async generateSteps(eng, req) {
    const r = await eng.generate_steps(req);
    noteFallback(eng, r.fallback);
    return r;
  },
  cost: (eng, req) => eng.cost(req),
  noam: (eng, req) => eng.noam(req),
  async testOnlyNanGpuParity(eng) {
    // TEST ONLY: the parity check as if every GPU logit came back NaN.
    if (backend.backend !== 'webgpu') throw new Error('the NaN parity test needs the WebGPU backend');
    backend = infoOf(await eng.test_only_recheck_with_nan_gpu_logits());
    emit({ event: 'backend', info: backend });
    return backend;
  },
  async testOnlyWrongGpuParity(eng) {
    // TEST ONLY: the parity check as if one GPU logit came back wrong.
    if (backend.backend !== 'webgpu') throw new Error('the wrong-logit parity test needs the WebGPU backend');
    backend = infoOf(await eng.test_only_recheck_with_wrong_gpu_logit());
    emit({ event: 'backend', info: backend });
    return backend;
  },
  async testOnlyRaceWithHandicap(eng, { gpu_ms, cpu_ms }) {
    // TEST ONLY: the race again, one side slowed by busy time on every timed pass.
    if (backend.backend !== 'webgpu' && backend.status.kind !== 'cpu_faster') throw new Error('the race test needs a GPU that agrees');
    backend = infoOf(await eng.test_only_race_with_handicap(gpu_ms, cpu_ms));
    emit({ event: 'backend', info: backend });
    return backend;
  },
  testOnlyLoseGpu: (eng) => eng.test_only_lose_gpu(),
  testOnlyNanAtLayer: async (eng, { layer }) => (await labEngine(eng, false)).test_only_nan_at_layer(layer),
  memoryUse() {
    // Chromium's non-standard performance.memory, where the worker has it.
    const heap = (performance as Performance & { memory?: { usedJSHeapSize: number } }).memory;
    const bytes = (wasm?.memory.buffer.byteLength ?? 0) + (labWasm?.memory.buffer.byteLength ?? 0);
    return { wasm_bytes: bytes, js_heap_bytes: heap?.usedJSHeapSize ?? null };
  },
  // The side studies: the whole engine, on the session's model.
  scoreScaling: async (eng, req) => (await labEngine(eng, true)).score_scaling(req),
  positions: async (eng, req) => (await labEngine(eng, true)).positions(req),
  ropeDemo: async (eng, req) => (await labEngine(eng, true)).rope_demo(req),
  embeddingScale: async (eng, req) => (await labEngine(eng, true)).embedding_scale(req),
  blockProbe: async (eng, req) => (await labEngine(eng, true)).block_probe(req),
  blockDiff: async (eng, req) => (await labEngine(eng, true)).block_diff(req),
  normCoupling: async (eng, { sibling_url, sibling_name, ...req }) =>
    (await labEngine(eng, true)).norm_coupling(req, sibling_url ? await bytesOf(sibling_url) : new Uint8Array(), sibling_name ?? ''),
  dropoutDemo: async (eng, req) => (await labEngine(eng, true)).dropout_demo(req),
  // These two read only the checkpoint they are given (the session's model stays).
  extrapolation: async (eng, { url, sequences }) => (await labEngine(eng, false)).extrapolation(await bytesOf(url), sequences),
  permutation: async (eng, { url, text, perm, causal }) =>
    (await labEngine(eng, false)).permutation(await bytesOf(url), text, Uint32Array.from(perm), causal),
  // These two time the backend: the study engine runs where the session does.
  parallel: async (eng, req) => (await labEngine(eng, true, true)).parallel(req),
  scoring: async (eng, req) => (await labEngine(eng, true, true)).scoring(req),
  // These two time a model of their own, on the CPU and on a GPU of their own.
  timeRates: async (eng, req) => (await labEngine(eng, false)).time_rates(req),
  timeWidth: async (eng, req) => (await labEngine(eng, false)).time_width(req),
  weightTensors: (eng) => eng.weight_tensors(),
  readWeights: (eng, req) => eng.read_weights(req),
  setWeights(eng, req) {
    const r = eng.set_weights(req);
    model++;
    return r;
  },
  restoreWeights(eng, req) {
    const r = eng.restore_weights(req);
    model++;
    return r;
  },
  weightEdits: (eng) => eng.weight_edits(),
  exportModel: (eng) => eng.export_model(),
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

/** Make `session` the one the globals above (`engine`, `backend`) belong to. */
function enter(session: number): void {
  if (session === current && sessions.has(session)) return;
  const was = sessions.get(current);
  if (was) {
    was.engine = engine;
    was.backend = backend;
    was.model = model;
    was.study = study;
    was.want = want;
  }
  let s = sessions.get(session);
  if (!s) sessions.set(session, (s = { engine: null, backend: infoOf({ kind: 'starting' }), model: 0, study: null, want: 'auto' }));
  current = session;
  engine = s.engine;
  backend = s.backend;
  model = s.model;
  study = s.study;
  want = s.want;
}

/** A session ended: its engine's memory goes back to the core. */
function close(session: number): void {
  enter(session);
  engine?.free();
  engine = null;
  study?.engine.free();
  study = null;
  sessions.delete(session);
  current = -1;
}

// One request at a time, in arrival order: each engine is a single stateful object, and
// the sessions take turns.
let queue: Promise<void> = Promise.resolve();

self.onmessage = (ev: MessageEvent<RequestMessage | CloseMessage>) => {
  if ('close' in ev.data) {
    const { close: session } = ev.data;
    queue = queue.then(() => close(session));
    return;
  }
  const { id, op, payload, session = 0 } = ev.data;
  queue = queue.then(async () => {
    let msg: ResponseMessage;
    try {
      enter(session);
      const result = await handle(op, payload);
      msg = { id, ok: true, result };
      self.postMessage(msg, transferables(result));
    } catch (e) {
      // A trap (a Rust panic, out of memory) leaves the wasm instance unusable: say so
      // and close, and the page starts a fresh worker.
      const fatal = e instanceof WebAssembly.RuntimeError;
      msg = { id, ok: false, error: describeError(e), kind: errorKind(e), fatal };
      self.postMessage(msg);
      if (fatal) self.close();
    }
  });
};
