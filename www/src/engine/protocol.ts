// The typed message protocol between the page and the engine's Web Worker.
//
// Every request carries an id; the worker answers each with exactly one response
// carrying the same id. The worker also sends unsolicited `event` messages (for
// example "the GPU was lost, now on the CPU"). No DOM types appear here: this module
// is shared by the worker and the page.

// The types of what crosses to and from the Rust core are generated from its serde types
// (crate/src/protocol.rs) into ./generated.ts; this module adds what only the page and
// the worker know: the manifest of shipped models, the backend badge, and the message
// envelopes.
import type {
  Arch,
  HfCheck,
  TokenizeTrace,
  BackendStatus,
  ErrorKind,
  ModelInput,
  ModelInputRequest,
  BlockDiff,
  DeviceRates,
  TimeRatesRequest,
  TimeWidthRequest,
  WidthTime,
  BlockDiffRequest,
  BlockProbe,
  BlockProbeRequest,
  CouplingRequest,
  DropoutDemo,
  DropoutRequest,
  NormCoupling,
  CostReport,
  CostRequest,
  EmbeddingScaleRequest,
  ExtrapolationRequest,
  ForwardRequest,
  ForwardResult,
  GenerateStartRequest,
  GenerateStarted,
  GenerateStep,
  GenerateStepCompact,
  GenerateSteps,
  GenerateStepsRequest,
  LayerPlan,
  ModelInfo,
  NoamRequest,
  ParallelRequest,
  ParallelTiming,
  PermutationRequest,
  PermutationResult,
  Positions,
  PositionsRequest,
  RopeDemoRequest,
  Schedule,
  ScoreScalingRequest,
  ScoringComparison,
  ScoringRequest,
  Tokenized,
  TokenizeRequest,
  BackendName,
  RunDefaults,
  RaceUnit,
  RunDefaultsRequest,
  RunFootprint,
  RunSettings,
  TrainChunk,
  TrainChunkRequest,
  TrainStarted,
  WeightEdits,
  WeightRestoreRequest,
  WeightSelection,
  WeightSetRequest,
  WeightTensor,
  WeightValues,
} from './generated';

export type * from './generated';

/** One shipped model (an entry of models/manifest.json). */
export interface ManifestEntry {
  file: string;
  title: string;
  arch: Arch;
  task: string;
  pos_encoding: string;
  default_prompt: string;
  description: string;
  /** Optional names of a classifier's classes, by class index. */
  classes?: string[];
  /** True for a model trained with W_K = W_Q. */
  share_qk?: boolean;
  /** A sibling: the one design choice it changes, in a few words ("post-LN")… */
  variant?: string;
  /** …and the file of the model it differs from. */
  variant_of?: string;
  /** What `tplay train` measured on held-out data when the model was trained (`metric`: its name)… */
  metric?: string;
  /** …and the value it reached, 0 to 1 (the lessons quote it). */
  held_out_accuracy?: number;
}

/**
 * The backend a playground asks for: `auto` runs WebGPU only where its test pass agrees
 * with the CPU and is faster for the loaded model (measured on this device); `webgpu`
 * insists on WebGPU wherever it agrees, however slow; `cpu` never asks for a GPU.
 */
export type BackendWant = 'auto' | BackendName;

/** The race between an agreeing GPU and the CPU: milliseconds per `unit` on each (a generated token, or a pass of the test input for a model that does not generate). */
export interface BackendRace {
  cpu_ms: number;
  gpu_ms: number;
  unit: RaceUnit;
}

export interface BackendInfo {
  backend: BackendName;
  /** Where the engine runs and why, as the core says it (the page words it by `kind`). */
  status: BackendStatus;
  /** Why this backend runs, in plain English words (from `status`). */
  reason: string;
  /** The underlying error, when a backend failed (from `status`). */
  detail: string | null;
  /** The WebGPU adapter's description when one was found. */
  adapter: string | null;
  /** max |logit_gpu − logit_cpu| on this device, when both ran (Infinity: NaN or ∞ logits). */
  parity: number | null;
  /** The race that decided between an agreeing GPU and the CPU, when one ran. */
  race: BackendRace | null;
}

/**
 * The worker's own details of a `cpu_no_gpu` status (the GPU backend's are its own words);
 * the page words each in its language (`backendDetail`).
 */
export const NO_GPU_DETAIL = {
  /** The browser has no WebGPU object at all. */
  noNavigatorGpu: 'this browser has no navigator.gpu',
  /** It has one, but offered no adapter (so the engine without its GPU backend runs). */
  noAdapter: 'this browser offers no WebGPU adapter',
} as const;

/** A training run's backend is the same status. */
export type RunBackend = BackendStatus;

// The side studies' results (`crate::explain`) cross as the core serialises them; their
// TypeScript is written here.

/** Why √d_k: what the core measured at one width d_k (`explain::sqrt_dk`). */
export interface WidthStats {
  d_k: number;
  mean_raw: number;
  /** Sample variance of q·k (near d_k). */
  var_raw: number;
  /** Sample variance of q·k / √d_k (near 1). */
  var_scaled: number;
  entropy_raw: number;
  entropy_scaled: number;
  max_prob_raw: number;
  max_prob_scaled: number;
}

export interface ScoreScaling {
  samples: number;
  keys: number;
  rows: number;
  seed: number;
  /** ln(keys): a uniform row's entropy. */
  max_entropy: number;
  widths: WidthStats[];
}

/** RoPE on the model's own q and k (`explain::positions::rope_demo_of_model`). */
export interface RopeDemo {
  d_head: number;
  pair: number;
  theta: number;
  q_path: [number, number][];
  k_path: [number, number][];
  i: number;
  j: number;
  shift: number;
  score: number;
  shifted_score: number;
  offset_score: number;
}

export interface EmbeddingScale {
  root_c: number;
  scaled_in_model: boolean;
  token_norm: number[];
  token_norm_scaled: number[];
  /** Empty when positions act inside attention. */
  position_norm: number[];
}

/** Train short, test long for one grammar model (`explain::extrapolation`). */
export interface Extrapolation {
  train_len: number;
  sequences: number;
  seed: number;
  bands: { multiple: number; from: number; to: number; accuracy: number; loss: number }[];
  /** (4L) per position. */
  accuracy: number[];
  loss: number[];
}

/** A Hugging Face folder's files as bytes: the tokenizer as tokenizer.json, or as vocab.json + merges.txt. */
export interface HfFiles {
  config: Uint8Array;
  model: Uint8Array;
  tokenizerJson?: Uint8Array;
  vocabJson?: Uint8Array;
  merges?: Uint8Array;
}

/** The requests, their payloads and what each answers. */
export interface Api {
  /** The worker fetches the checkpoint at `url` and loads its bytes. */
  load: { req: { url: string }; res: ModelInfo };
  /** Load checkpoint bytes (a run's weights, an imported file); bad bytes: the loader's message, nothing changes. */
  loadBytes: { req: { bytes: Uint8Array }; res: ModelInfo };
  /** A Hugging Face folder's config.json checked against the engine's limits, before the weights are fetched: its parameter count and shape. */
  hfCheck: { req: { config: Uint8Array }; res: HfCheck };
  /** Load a Hugging Face folder's files; a bad folder: the loader's message, the model loaded before stays. */
  loadHf: { req: { files: HfFiles }; res: ModelInfo };
  /** How the loaded model's tokenizer reads a text, step by step (bytes, merges, tokens). */
  tokenizeTrace: { req: TokenizeRequest; res: TokenizeTrace };
  /** The settings a task's runs start from, with a line about every field. */
  runDefaults: { req: RunDefaultsRequest; res: RunDefaults };
  /** What a run with these settings will need (memory, storage, the largest GPU buffer), before it starts. */
  runFootprint: { req: RunSettings; res: RunFootprint };
  /** Start a training run in this engine (the lab gives each run its own worker). */
  trainStart: { req: RunSettings; res: TrainStarted };
  /** The next chunk of the run's steps. */
  trainChunk: { req: TrainChunkRequest; res: TrainChunk };
  /** The run's model now, as checkpoint bytes (.safetensors). */
  trainExport: { req: Record<string, never>; res: Uint8Array };
  /** The run's weights and its state besides them (optimiser, data position), taken together: what resuming needs. */
  trainSnapshot: { req: Record<string, never>; res: { checkpoint: Uint8Array; state: Uint8Array } };
  /** Continue a saved run in this engine. */
  trainResume: { req: { settings: RunSettings; checkpoint: Uint8Array; state: Uint8Array }; res: TrainStarted };
  /** The loaded model's layer plan: what the architecture diagram draws. */
  layerPlan: { req: Record<string, never>; res: LayerPlan };
  tokenize: { req: TokenizeRequest; res: Tokenized };
  /** The page's text rows and generated tokens as the loaded model reads them. */
  modelInput: { req: ModelInputRequest; res: ModelInput };
  setBackend: { req: { backend: BackendWant }; res: BackendInfo };
  /** The backend chosen again as `backend` asks (the GPU raced anew on the loaded model); a `backend` event follows. */
  measureBackend: { req: { backend: BackendWant }; res: BackendInfo };
  forward: { req: ForwardRequest; res: ForwardResult };
  generateStart: { req: GenerateStartRequest; res: GenerateStarted };
  /**
   * The next step: the full record (`GenerateStep`, with the attention the views draw) for a
   * traced generation, the compact one (`GenerateStepCompact`: typed arrays) for a generation
   * started with `trace: false`. Both have `step.index`, `step.token`, `step.wall_ms`, `done`.
   */
  generateStep: { req: Record<string, never>; res: GenerateStep | GenerateStepCompact };
  /** Several steps in one message (for a generation started with `trace: false`). */
  generateSteps: { req: GenerateStepsRequest; res: GenerateSteps };
  cost: { req: CostRequest; res: CostReport };
  noam: { req: NoamRequest; res: Schedule };
  /**
   * TEST ONLY (tests/browser): run the GPU parity check with every GPU logit replaced by
   * NaN, as a broken kernel would return, and report the backend as the page then runs it.
   */
  testOnlyNanGpuParity: { req: Record<string, never>; res: BackendInfo };
  /** TEST ONLY (tests/browser): the same with one GPU logit off by ten times the tolerance. */
  testOnlyWrongGpuParity: { req: Record<string, never>; res: BackendInfo };
  /**
   * TEST ONLY (tests/browser): the race run again with `gpu_ms` / `cpu_ms` of busy time
   * added to every timed pass of that side (a slow dispatch, a slow processor).
   */
  testOnlyRaceWithHandicap: { req: { gpu_ms: number; cpu_ms: number }; res: BackendInfo };
  /**
   * Test-only: make the engine die on purpose, so the browser tests can prove the page
   * recovers. 'trap' makes the wasm engine trap; 'throw' makes the worker throw outside
   * any request. Sent only by the element's `testOnlyCrashEngine` hook.
   */
  testOnlyCrash: { req: { kind: 'trap' | 'throw' }; res: null };
  /** Test-only: destroy the WebGPU device (true when there was one to destroy). */
  testOnlyLoseGpu: { req: Record<string, never>; res: boolean };
  /** Test-only: a weight of the training run's layer `layer` (from 0) turns NaN before its next step (false: no such layer). */
  testOnlyNanAtLayer: { req: { layer: number }; res: boolean };
  /** Memory the engine holds: the wasm linear memory, and the worker's JS heap when known. */
  memoryUse: { req: Record<string, never>; res: { wasm_bytes: number; js_heap_bytes: number | null } };
  scoreScaling: { req: ScoreScalingRequest; res: ScoreScaling };
  positions: { req: PositionsRequest; res: Positions };
  ropeDemo: { req: RopeDemoRequest; res: RopeDemo };
  embeddingScale: { req: EmbeddingScaleRequest; res: EmbeddingScale };
  /** The worker fetches the checkpoint at `url` (kept for later requests); the loaded model stays. */
  extrapolation: { req: ExtrapolationRequest; res: Extrapolation };
  /** Every block's live tensors (FFN, norms, residual stream, dropout masks) for a batch. */
  blockProbe: { req: BlockProbeRequest; res: BlockProbe };
  /** Two inputs compared row by row, bit-exactly. */
  blockDiff: { req: BlockDiffRequest; res: BlockDiff };
  /**
   * LayerNorm vs BatchNorm on a batch: the loaded model beside a trained checkpoint with the other kind of norm: the worker
   * fetches `sibling_url` (named `sibling_name` on the page); without it, beside an
   * untrained model built in memory.
   */
  normCoupling: { req: CouplingRequest & { sibling_url?: string; sibling_name?: string }; res: NormCoupling };
  /** Dropout's masks in train mode, and eval mode as the identity. */
  dropoutDemo: { req: DropoutRequest; res: DropoutDemo };
  /** The worker fetches the checkpoint at `url` (kept for later requests); the loaded model stays. */
  permutation: { req: PermutationRequest; res: PermutationResult };
  /** One sequence as one teacher-forced pass and token by token, with and without the KV cache, timed. */
  parallel: { req: ParallelRequest; res: ParallelTiming };
  /** Dot, scaled-dot and additive scoring on the loaded model's shape: counts and times. */
  scoring: { req: ScoringRequest; res: ScoringComparison };
  /** This device's product rate and its GPU's cost of a round trip and of a dispatch (`gpu`: measure one where the browser has WebGPU). */
  timeRates: { req: TimeRatesRequest; res: DeviceRates };
  /** The lab's reverse model at one width: a decoding step and a training step timed on the CPU and the GPU, in parts. */
  timeWidth: { req: TimeWidthRequest; res: WidthTime };
  /** Every parameter tensor of the loaded model, by checkpoint name, with how many of its values are edited. */
  weightTensors: { req: Record<string, never>; res: WeightTensor[] };
  /** Values of one tensor (a strided selection), now and as trained. */
  readWeights: { req: WeightSelection; res: WeightValues };
  /** Set values of one tensor; the answer lists every edit. */
  setWeights: { req: WeightSetRequest; res: WeightEdits };
  /** Restore trained values: all, one tensor, or a selection of it. */
  restoreWeights: { req: WeightRestoreRequest; res: WeightEdits };
  /** What differs from the trained model now. */
  weightEdits: { req: Record<string, never>; res: WeightEdits };
  /** The model as it computes now (edited or not), as checkpoint bytes (.safetensors). */
  exportModel: { req: Record<string, never>; res: Uint8Array };
}

export type Op = keyof Api;

export interface RequestMessage<K extends Op = Op> {
  id: number;
  /**
   * The session (one playground) the request belongs to: each has its own engine in the
   * worker, and the worker serves every playground of the page. Absent: session 0.
   */
  session?: number;
  op: K;
  payload: Api[K]['req'];
}

/** A session ends: the worker frees its engine (the checkpoints it fetched stay cached). */
export interface CloseMessage {
  close: number;
}

/** `fatal`: the engine cannot answer any more requests (it trapped); the worker closes. */
export type ResponseMessage =
  | { id: number; ok: true; result: unknown }
  | { id: number; ok: false; error: string; kind?: ErrorKind; fatal?: boolean };

/**
 * How far a slow step has got: `done` of `total` units (bytes for a download; null total
 * when the server sent no Content-Length).
 */
export interface Progress {
  /** 'download': a checkpoint's bytes; 'engine': starting the wasm core. */
  phase: 'download' | 'engine';
  /** What is happening, in words ("Downloading tiny.safetensors"). */
  label: string;
  done: number;
  total: number | null;
}

/** Unsolicited news from the worker, for one session (absent: for every session). */
export type EventMessage = ({ event: 'backend'; info: BackendInfo } | { event: 'progress'; progress: Progress }) & { session?: number };

export function isEvent(m: ResponseMessage | EventMessage): m is EventMessage {
  return (m as EventMessage).event !== undefined;
}
