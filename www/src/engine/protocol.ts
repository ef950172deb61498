// The typed message protocol between the page and the engine's Web Worker.
//
// Every request carries an id; the worker answers each with exactly one response
// carrying the same id. The worker also sends unsolicited `event` messages (for
// example "the GPU was lost, now on the CPU"). No DOM types appear here: this module
// is shared by the worker and the page.

/** Which backend runs the forward pass. */
export type BackendName = 'webgpu' | 'cpu';

/** Where an attention sublayer sits (the core's `AttnSite`). */
export type AttnSite = 'encoder_self' | 'decoder_self' | 'cross';

/** One head of one attention sublayer, as the core names it. */
export interface HeadRef {
  site: AttnSite;
  layer: number;
  head: number;
}

/** One shipped model (an entry of models/manifest.json). */
export interface ManifestEntry {
  file: string;
  title: string;
  arch: 'encoder_only' | 'decoder_only' | 'encoder_decoder';
  task: string;
  pos_encoding: string;
  default_prompt: string;
  description: string;
  /** Optional names of a classifier's classes, by class index. */
  classes?: string[];
  /** True for a model trained with W_K = W_Q. */
  share_qk?: boolean;
}

/** What the engine says about a loaded checkpoint. */
export interface ModelInfo {
  arch: 'encoder_only' | 'decoder_only' | 'encoder_decoder';
  pos_encoding: string;
  norm: string;
  score: string;
  activation: string;
  d_model: number;
  n_heads: number;
  d_head: number;
  d_ff: number;
  max_len: number;
  encoder_layers: number;
  decoder_layers: number;
  vocab: string[];
  tokenizer_kind: 'char' | 'word';
  pad: number;
  bos: number;
  eos: number;
  unk: number;
  num_classes: number;
  params: number;
  /** K of Shaw's relative positions: offsets j − i are clipped to ±K. */
  relative_max_distance: number;
}

/** What a sublayer computes (the core's `model::plan::SublayerKind`). */
export type SublayerKind = 'self_attention' | 'cross_attention' | 'ffn';

/** A sublayer's norm (`model::plan::NormStep`). */
export interface NormStep {
  /** Index into the layer's norms: `norm1` is 0. */
  slot: number;
  /** `norm1`, `norm2`, `norm3`. */
  name: string;
  kind: 'layer_norm' | 'batch_norm';
  /** before: x + f(N(x)) (pre-LN); after: N(x + f(x)) (post-LN, BatchNorm). */
  placement: 'before' | 'after';
}

/** One sublayer of every layer of a stack (`model::plan::SublayerPlan`). */
export interface SublayerPlan {
  kind: SublayerKind;
  /** The attention site; null for the FFN. */
  site: AttnSite | null;
  norm: NormStep | null;
  residual: boolean;
}

/** One stack of layers (`model::plan::StackPlan`). */
export interface StackPlan {
  /** `encoder` or `decoder`. */
  name: string;
  site: AttnSite;
  input: 'tokens' | 'source';
  reads_memory: boolean;
  layers: number;
  sublayers: SublayerPlan[];
  final_norm: boolean;
}

/** The structure the loaded model runs (`model::plan::LayerPlan`): what the diagram draws. */
export interface LayerPlan {
  arch: 'encoder_only' | 'decoder_only' | 'encoder_decoder';
  /** In the order they run: the encoder first. */
  stacks: StackPlan[];
  head: 'lm' | 'classifier';
}

/** Text after the tokenizer: ids, their tokens, and what had to become `<unk>`. */
export interface Tokenized {
  ids: number[];
  tokens: string[];
  /** [token position, the text it stood for] */
  unknown: [number, string][];
}

/** Run-time switches of a forward pass (no retraining needed). */
export interface Switches {
  causal: boolean;
  padding_mask: boolean;
  scale: boolean;
  ablate: HeadRef[];
}

/** How the next token is chosen. */
export interface Sampling {
  strategy: 'greedy' | 'sample' | 'beam';
  temperature: number;
  top_k: number;
  top_p: number;
  beam_width: number;
  seed: number;
}

export interface ForwardRequest {
  /** Target-side ids per sequence (unequal lengths are right-padded by the engine). */
  batch: number[][];
  /** Source ids per sequence, encoder-decoder only. */
  src?: number[][];
  switches: Switches;
  sampling: Sampling;
  /** Also send every attention sublayer's q, k and v per head (for the q·k inspector). */
  qkv?: boolean;
}

/** A dense f32 tensor that crossed the worker boundary. */
export interface Dense {
  shape: number[];
  data: Float32Array;
}

export interface AttnTrace {
  site: AttnSite;
  layer: number;
  /** (B, H, T, S): masked entries are -Infinity. */
  scores: Dense;
  /** (B, H, T, S) */
  probs: Dense;
  /** (B, H): entropy (nats) of each query's attention row, averaged over the real queries. */
  entropy: Dense;
  /** (B, H): largest probability of each query's row, averaged the same way. */
  max_prob: Dense;
  /** (B, H, T, D) queries of each head, after RoPE where it applies (when asked with `qkv`). */
  q?: Dense;
  /** (B, H, S, D) keys, after RoPE where it applies (when asked with `qkv`). */
  k?: Dense;
  /** (B, H, S, D) values (when asked with `qkv`). */
  v?: Dense;
  /** (B, H): max over tokens and dimensions of |q − k| (self-attention; null for cross). */
  qk_gap?: Dense | null;
}

export interface HiddenTrace {
  stack: AttnSite;
  /** (L + 1, B, T): the L2 norm of the residual stream at each position. */
  norms: Dense;
}

export interface ForwardResult {
  backend: BackendName;
  ms: number;
  /** Token ids fed to the model after padding: (B, T). */
  tokens: number[][];
  /** Source ids after padding (encoder-decoder): (B, S). */
  src_tokens: number[][];
  /** (B, T, V), or (B, num_classes) for a classifier. */
  logits: Dense;
  attention: AttnTrace[];
  hidden: HiddenTrace[];
  /** The model's next-token distribution after the last real token of sequence 0 (V). */
  model_probs: Float32Array;
  /** What sampling draws from, after temperature, top-k and top-p: (V), zeros where filtered. */
  next_probs: Float32Array;
  /** The most probable token at every position of sequence 0 (what a tagger outputs). */
  predicted: number[];
  /** Classifier only: softmax of the class logits of sequence 0. */
  class_probs: Float32Array | null;
  flops: number;
}

export interface GenerateStartRequest {
  prompt: number[];
  src?: number[];
  switches: Switches;
  sampling: Sampling;
  max_new_tokens: number;
  /** Report each step's attention over the cache (default true; off for speed). */
  trace?: boolean;
}

/** One entry of the "what could have come next" list (the core's `Candidate`). */
export interface Candidate {
  id: number;
  token: string;
  logit: number;
  /** The model's probability over the whole vocabulary. */
  prob: number;
  /** What the strategy drew from, after temperature, top-k and top-p. */
  sample_prob: number;
}

/** One partial or finished hypothesis of beam search (the core's `Hypothesis`). */
export interface Hypothesis {
  tokens: number[];
  log_prob: number;
  score: number;
  parent: number | null;
  ending: 'eos' | 'budget' | null;
}

/** Everything one generation step did (the core's `Step`). */
export interface CoreStep {
  index: number;
  fed: number;
  token: number | null;
  text: string | null;
  candidates: Candidate[];
  /** (L, H, S): the newest token's self-attention over the cache. */
  attention: number[][][];
  /** (L, H, S_src): its cross-attention over the source (encoder-decoder). */
  cross_attention: number[][][];
  cache_len: number;
  wall_ms: number;
  multiply_adds: number;
  flops: number;
  stop: 'eos' | 'max_tokens' | 'context_full' | null;
  beam: { live: Hypothesis[]; newly_finished: Hypothesis[]; finished: Hypothesis[] } | null;
}

export interface GenerateStep {
  step: CoreStep;
  /** Generated ids so far (beam search: the best hypothesis). */
  generated: number[];
  done: boolean;
  backend: BackendName;
  /** Set when this step had to fall back to the CPU. */
  fallback: string | null;
}

export interface GenerateStarted {
  backend: BackendName;
  fallback: string | null;
}

export interface BackendInfo {
  backend: BackendName;
  /** Why this backend runs, in plain words. */
  reason: string;
  /** The underlying error, when a backend failed. */
  detail: string | null;
  /** The WebGPU adapter's description when one was found. */
  adapter: string | null;
  /** max |logit_gpu − logit_cpu| on this device, when both ran (Infinity: NaN or ∞ logits). */
  parity: number | null;
}

/** One component of the cost panel, per layer. */
export interface CostRow {
  group: 'embeddings' | 'encoder layer' | 'decoder layer' | 'head';
  part: string;
  params: number;
  /** FLOPs one token spends here: 2 × the multiply-adds of its matrix products. */
  flops: number;
  /** How many layers repeat this row. */
  layers: number;
}

/** Parameters and FLOPs per token of the loaded model rebuilt with `n_heads` heads. */
export interface CostReport {
  n_heads: number;
  d_head: number;
  d_model: number;
  /** Keys each query attends to. */
  context: number;
  rows: CostRow[];
  /** Trained values of the whole model with this head count. */
  params: number;
  /** The core's FLOP counter for one token through the layers (null for encoder-decoder). */
  core_layer_flops: number | null;
}

/** The Noam learning rate (factor 1) for the loaded model's d_model. */
export interface Schedule {
  d_model: number;
  warmup: number;
  steps: number[];
  lr: number[];
  peak_step: number;
  peak_lr: number;
}

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

/** The loaded model's position encoding for positions 0..t (`explain::positions`). */
export interface Positions {
  scheme: string;
  t: number;
  /** (T, C): the vector added to the embedding at each position (sinusoidal, learned). */
  table: Dense | null;
  /** (T, T): PEᵢ·PEⱼ. */
  similarity: Dense | null;
  /** (H) ALiBi slopes. */
  slopes: Float32Array | null;
  /** (H, T, T): −m_h·|i − j|. */
  alibi: Dense | null;
  /** Shaw tables, (2K+1, D) each, per self-attention layer. */
  relative: { stack: AttnSite; layer: number; rel_k: Dense; rel_v: Dense }[];
  /** K: distances are clipped to ±K. */
  max_distance: number;
  /** Token embeddings (as the model scales them) and position vectors on two principal axes. */
  map: { tokens: [number, number][]; positions: [number, number][]; explained: [number, number] };
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

/** The same input in two orders (`explain::order`). */
export interface PermutationResult {
  tokens: string[];
  permuted: string[];
  perm: number[];
  causal: boolean;
  pos_encoding: string;
  /** (T, V) */
  logits: Dense;
  /** (T, V) */
  permuted_logits: Dense;
  /** (T): max |difference| of permuted row t and original row perm[t]. */
  row_diff: Float32Array;
  row_identical: boolean[];
}

/** The requests, their payloads and what each answers. */
export interface Api {
  load: { req: { url: string }; res: ModelInfo };
  layerPlan: { req: Record<string, never>; res: LayerPlan };
  tokenize: { req: { text: string }; res: Tokenized };
  setBackend: { req: { backend: BackendName }; res: BackendInfo };
  forward: { req: ForwardRequest; res: ForwardResult };
  generateStart: { req: GenerateStartRequest; res: GenerateStarted };
  generateStep: { req: Record<string, never>; res: GenerateStep };
  cost: { req: { n_heads: number; context: number }; res: CostReport };
  noam: { req: { warmup: number; last_step: number; points: number }; res: Schedule };
  /**
   * TEST ONLY (tests/browser): run the GPU parity check with every GPU logit replaced by
   * NaN, as a broken kernel would return, and report the backend as the page then runs it.
   */
  testOnlyNanGpuParity: { req: Record<string, never>; res: BackendInfo };
  /**
   * Test-only: make the engine die on purpose, so the browser tests can prove the page
   * recovers. 'trap' makes the wasm engine trap; 'throw' makes the worker throw outside
   * any request. Sent only by the element's `testOnlyCrashEngine` hook.
   */
  testOnlyCrash: { req: { kind: 'trap' | 'throw' }; res: null };
  /** Test-only: destroy the WebGPU device (true when there was one to destroy). */
  testOnlyLoseGpu: { req: Record<string, never>; res: boolean };
  /** Memory the engine holds: the wasm linear memory, and the worker's JS heap when known. */
  memoryUse: { req: Record<string, never>; res: { wasm_bytes: number; js_heap_bytes: number | null } };
  scoreScaling: { req: { samples: number; keys: number; rows: number; seed: number }; res: ScoreScaling };
  positions: { req: { t: number }; res: Positions };
  ropeDemo: { req: { tokens: number[]; layer: number; head: number; i: number; j: number; pair: number; shift: number }; res: RopeDemo };
  embeddingScale: { req: { tokens: number[] }; res: EmbeddingScale };
  extrapolation: { req: { url: string; sequences: number }; res: Extrapolation };
  permutation: { req: { url: string; text: string; perm: number[]; causal: boolean }; res: PermutationResult };
}

export type Op = keyof Api;

export interface RequestMessage<K extends Op = Op> {
  id: number;
  op: K;
  payload: Api[K]['req'];
}

/** `fatal`: the engine cannot answer any more requests (it trapped); the worker closes. */
export type ResponseMessage =
  | { id: number; ok: true; result: unknown }
  | { id: number; ok: false; error: string; fatal?: boolean };

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

/** Unsolicited news from the worker. */
export type EventMessage = { event: 'backend'; info: BackendInfo } | { event: 'progress'; progress: Progress };

export function isEvent(m: ResponseMessage | EventMessage): m is EventMessage {
  return (m as EventMessage).event !== undefined;
}
