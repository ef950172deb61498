// Generated from the Rust types of crate/src/protocol.rs (and the core types they
// hold) by ts-rs. Do not edit: change the Rust types and run
//   TPLAY_UPDATE_TYPES=1 cargo test -p tplay --test protocol_types
// (the same test fails while this file is stale).

export type Arch = "encoder_only" | "decoder_only" | "encoder_decoder";

export type PosEncoding = "none" | "sinusoidal" | "learned" | "relative" | "rope" | "alibi";

export type Norm = "post_ln" | "pre_ln" | "batch_norm" | "none";

export type Score = "scaled_dot" | "dot" | "additive";

export type Activation = "relu" | "gelu" | "gelu_tanh";

export type TokenizerKind = "char" | "word" | "bpe";

export type AttnSite = "encoder_self" | "decoder_self" | "cross";

export type HeadRef = { site: AttnSite, layer: number, head: number, };

export type BackendName = "webgpu" | "cpu";

export type MaskRule = { "kind": "none" } | { "kind": "causal" } | { "kind": "prefix_lm", prefix: number, } | { "kind": "sliding_window", window: number, };

export type CellEdit = { query: number, key: number, hidden: boolean, };

export type MaskEdit = { rule: MaskRule, cells: Array<CellEdit>, };

export type MaskView = { site: AttnSite, rule: MaskRule, 
/**
 * The painted cells (sorted, one per cell).
 */
cells: Array<CellEdit>, 
/**
 * Whether padding keys are hidden.
 */
padding: boolean, 
/**
 * (B, T, S): 0 visible, +1 hidden by the rule or a painted cell, +2 hidden as padding
 * (`model::mask::MaskSpec::reasons`). The additive mask is 0 where 0, −∞ elsewhere.
 */
reasons: Dense, };

export type Switches = { 
/**
 * The causal mask of the main stack's self-attention; absent: the model's rule
 * (`ModelInfo::causal`: on for a decoder, off for an encoder-only model's encoder).
 */
causal?: boolean, padding_mask: boolean, scale: boolean, ablate: Array<HeadRef>, 
/**
 * An explicit mask of the main stack's self-attention (the decoder's, or an
 * encoder-only model's encoder); when given it replaces `causal` there.
 */
mask?: MaskEdit, };

export type StrategyName = "greedy" | "sample" | "beam";

export type Sampling = { strategy: StrategyName, temperature: number, 
/**
 * 0: off.
 */
top_k: number, 
/**
 * 1: off.
 */
top_p: number, beam_width: number, seed: number, };

export type TrainMode = { seed: number, 
/**
 * Dropout probability for this pass; `None`: the model's own. Dropout has no
 * parameters, so any p in [0, 1) can be switched on at run time.
 */
dropout?: number, };

export type ForwardRequest = { 
/**
 * Target-side ids per sequence (unequal lengths are right-padded by the engine).
 */
batch: Array<Array<number>>, 
/**
 * Source ids per sequence, encoder-decoder only.
 */
src?: Array<Array<number>>, switches: Switches, sampling: Sampling, 
/**
 * Also send every attention sublayer's q, k and v per head (for the q·k inspector).
 */
qkv?: boolean, 
/**
 * Also send every FFN sublayer's hidden units (`ForwardResult::ffn`).
 */
ffn?: boolean, 
/**
 * Run in train mode (dropout with a seed, BatchNorm with batch statistics), on the
 * CPU; absent: eval mode.
 */
train?: TrainMode, };

export type GenerateStartRequest = { 
/**
 * Decoder ids, `<bos>` first.
 */
prompt: Array<number>, 
/**
 * The source, encoder-decoder only.
 */
src?: Array<number>, switches: Switches, sampling: Sampling, max_new_tokens: number, 
/**
 * Report each step's attention over the cache (default true; off for speed).
 */
trace?: boolean, 
/**
 * Keep keys and values between steps (default true); off, every step recomputes
 * the whole prefix. The tokens are the same either way, the cost is not.
 */
use_cache?: boolean, };

export type TokenizeRequest = { text: string, };

export type CostRequest = { n_heads: number, context: number, };

export type NoamRequest = { warmup: number, last_step: number, points: number, cooldown?: number, };

export type ModelInfo = { arch: Arch, pos_encoding: PosEncoding, norm: Norm, score: Score, activation: Activation, d_model: number, n_heads: number, d_head: number, d_ff: number, max_len: number, encoder_layers: number, decoder_layers: number, vocab: Array<string>, tokenizer_kind: TokenizerKind, pad: number, bos: number, eos: number, unk: number, num_classes: number, params: number, 
/**
 * K of Shaw's relative positions: offsets j − i are clipped to ±K.
 */
relative_max_distance: number, 
/**
 * The dropout probability the model was trained with (train mode uses it unless told
 * otherwise).
 */
dropout: number, 
/**
 * Whether the causal mask is on when a request's `Switches::causal` is absent (the
 * model's rule: on for a decoder, off for an encoder-only model's encoder).
 */
causal_default: boolean, };

export type Tokenized = { ids: Array<number>, tokens: Array<string>, 
/**
 * [token position, the text it stood for]
 */
unknown: Array<[number, string]>, };

export type TokenizeTrace = { kind: TokenizerKind, pieces: Array<PieceTrace>, 
/**
 * Every id the steps name (ascending), with its vocabulary string and its bytes.
 */
symbols: Array<SymbolBytes>, };

export type PieceTrace = { 
/**
 * The piece as written (a BPE piece keeps its leading space).
 */
text: string, 
/**
 * A special token written in the text, matched whole.
 */
special: boolean, 
/**
 * The symbol ids before the first merge (one per byte), then after each merge; the
 * last step is the piece's tokens.
 */
steps: Array<Array<number>>, 
/**
 * The merge between step i and step i + 1: [its rank, the id it makes].
 */
merges: Array<[number, number]>, };

export type SymbolBytes = { id: number, token: string, bytes: Array<number>, };

export type HfCheck = { model_type: string, params: number, 
/**
 * The weights' size in f32, as the engine holds them.
 */
f32_bytes: number, n_layers: number, n_heads: number, d_model: number, vocab_size: number, max_len: number, };

export type SublayerKind = "self_attention" | "cross_attention" | "ffn";

export type NormKind = "layer_norm" | "batch_norm";

export type Placement = "before" | "after";

export type NormStep = { 
/**
 * Index into `LayerParams::norms` (`norm1` is 0).
 */
slot: number, 
/**
 * The checkpoint name inside the layer: `norm1`, `norm2`, `norm3`.
 */
name: string, kind: NormKind, placement: Placement, };

export type SublayerPlan = { kind: SublayerKind, 
/**
 * The attention site of an attention sublayer (whose masks and ablated heads apply);
 * `None` for the FFN.
 */
site: AttnSite | null, 
/**
 * `None` when `norm = none`.
 */
norm: NormStep | null, 
/**
 * Add the sublayer's input to its output.
 */
residual: boolean, };

export type StackInput = "tokens" | "source";

export type StackPlan = { 
/**
 * `encoder` or `decoder`: the checkpoint prefix.
 */
name: string, 
/**
 * The site of its self-attention (`encoder_self` or `decoder_self`).
 */
site: AttnSite, input: StackInput, 
/**
 * Its cross-attention reads the output of the stack before it.
 */
reads_memory: boolean, 
/**
 * L
 */
layers: number, 
/**
 * The sublayers of every layer, in order.
 */
sublayers: Array<SublayerPlan>, 
/**
 * A LayerNorm after the last layer (`encoder.norm` / `decoder.norm`).
 */
final_norm: boolean, };

export type HeadKind = "lm" | "classifier";

export type LayerPlan = { arch: Arch, 
/**
 * The stacks in the order they run (the encoder first).
 */
stacks: Array<StackPlan>, head: HeadKind, };

export type Dense = { shape: Array<number>, data: Float32Array, };

export type AttnTrace = { site: AttnSite, layer: number, 
/**
 * (B, H, T, S): masked entries are −∞.
 */
scores: Dense, 
/**
 * (B, H, T, S)
 */
probs: Dense, 
/**
 * (B, H): entropy (nats) of each query's attention row, averaged over the real queries.
 */
entropy: Dense, 
/**
 * (B, H): largest probability of each query's row, averaged the same way.
 */
max_prob: Dense, 
/**
 * (B, H, T, D) queries of each head, after RoPE where it applies (asked with `qkv`).
 */
q?: Dense, 
/**
 * (B, H, S, D) keys, after RoPE where it applies (asked with `qkv`).
 */
k?: Dense, 
/**
 * (B, H, S, D) values (asked with `qkv`).
 */
v?: Dense, 
/**
 * (B, H): max over tokens and dimensions of |q − k| (self-attention, asked with `qkv`).
 */
qk_gap?: Dense, };

export type HiddenTrace = { stack: AttnSite, 
/**
 * (L + 1, B, T): the L2 norm of the residual stream at each position.
 */
norms: Dense, };

export type FfnTrace = { 
/**
 * The stack the FFN belongs to (named by its self-attention site).
 */
stack: AttnSite, layer: number, 
/**
 * (B, T, F), F = d_ff (S instead of T in the encoder of an encoder-decoder).
 */
hidden: Dense, };

export type ForwardResult = { backend: BackendName, ms: number, 
/**
 * Token ids fed to the model after padding: (B, T).
 */
tokens: Array<Array<number>>, 
/**
 * Source ids after padding (encoder-decoder): (B, S).
 */
src_tokens: Array<Array<number>>, 
/**
 * (B, T, V), or (B, num_classes) for a classifier.
 */
logits: Dense, attention: Array<AttnTrace>, 
/**
 * Per attention site of the model (in the order the stacks run), its mask.
 */
masks: Array<MaskView>, hidden: Array<HiddenTrace>, 
/**
 * Every FFN sublayer's hidden units in the order they ran (asked with `ffn`; empty
 * otherwise).
 */
ffn: Array<FfnTrace>, 
/**
 * The model's next-token distribution after the last real token of sequence 0 (V).
 */
model_probs: Float32Array, 
/**
 * What sampling draws from, after temperature, top-k and top-p: (V), zeros where filtered.
 */
next_probs: Float32Array, 
/**
 * The most probable token at every position of sequence 0 (what a tagger outputs).
 */
predicted: Array<number>, 
/**
 * Classifier only: softmax of the class logits of sequence 0.
 */
class_probs: Float32Array | null, 
/**
 * FLOPs of the whole pass (2 × its multiply-adds), for the batch.
 */
flops: number, 
/**
 * Set when the GPU failed and the CPU ran this pass (and runs from now on).
 */
fallback: string | null, 
/**
 * Train mode: that it ran, with which dropout p, and (on a GPU backend) why this
 * pass ran on the CPU.
 */
train_note: string | null, };

export type GenerateStarted = { backend: BackendName, fallback: string | null, 
/**
 * Set when the mask cannot be cached: every step recomputes the whole prefix, and why.
 */
recompute: string | null, };

export type Candidate = { id: number, 
/**
 * The token as the tokenizer writes it.
 */
token: string, logit: number, 
/**
 * The model's probability, softmax over the whole vocabulary (τ = 1, no filter).
 */
prob: number, 
/**
 * The probability the strategy drew from, after temperature, top-k and top-p
 * (0 for a filtered token; one-hot for greedy; equal to `prob` for beam search).
 */
sample_prob: number, };

export type Ending = "eos" | "budget";

export type Hypothesis = { 
/**
 * Generated tokens, prompt excluded; ends with `<eos>` when `ending` is `Eos`.
 */
tokens: Array<number>, 
/**
 * Sum of the model's log-probabilities of `tokens`.
 */
log_prob: number, 
/**
 * `log_prob / lp(tokens.len())`.
 */
score: number, 
/**
 * Index of the hypothesis it extends in the previous step's live list (`None` for
 * the empty root): the edges of the beam tree.
 */
parent: number | null, 
/**
 * `None` while live.
 */
ending: Ending | null, };

export type BeamStep = { 
/**
 * Live hypotheses, best first; `parent` indexes the previous step's `live`.
 */
live: Array<Hypothesis>, 
/**
 * Hypotheses that finished in this step (`parent` as above), best first.
 */
newly_finished: Array<Hypothesis>, 
/**
 * Every hypothesis finished so far, best score first.
 */
finished: Array<Hypothesis>, 
/**
 * The best extensions cut off this step (at most the beam width, `parent` as
 * above): the greyed branches of the tree.
 */
pruned: Array<Hypothesis>, };

export type StopReason = "eos" | "max_tokens" | "context_full";

export type SampleDraw = { 
/**
 * The threshold the running sum was compared with: a uniform number in [0, 1) times
 * `total`.
 */
u: number, 
/**
 * The shaped distribution's total mass (1 up to rounding).
 */
total: number, 
/**
 * (N) listed tokens, in walk order: the `DRAW_INTERVALS` most probable ones and the
 * chosen one (every token of probability > 0 when there are no more than that).
 */
ids: Array<number>, 
/**
 * (N) their probabilities in the shaped distribution.
 */
probs: Array<number>, 
/**
 * (N) the running sum after each: its interval is `[cum − prob, cum)`.
 */
cum: Array<number>, 
/**
 * The token drawn.
 */
chosen: number, 
/**
 * Where the chosen token is in `ids`.
 */
chosen_at: number, 
/**
 * The chosen token's interval: `lo ≤ u < hi` (`u ≥ hi` only when u landed in the
 * rounding gap above the last token, which then is the one chosen).
 */
lo: number, hi: number, 
/**
 * The most probable token of the shaped distribution (ties: the lower id).
 */
most_likely: number, 
/**
 * Tokens of probability > 0 the sampler walked past or could have (all of them).
 */
possible: number, };

export type CoreStep = { 
/**
 * 0 for the first step.
 */
index: number, 
/**
 * Tokens run through the model: the whole prompt in the first cached step, the
 * previous token in later cached steps, the whole sequence in every uncached step
 * (per live hypothesis for beam search).
 */
fed: number, 
/**
 * The chosen token (`None` for beam search, whose choice is the `beam` state).
 */
token: number | null, 
/**
 * `token` as text.
 */
text: string | null, 
/**
 * (V) the logits the choice was made from (beam search: the best live hypothesis's
 * before this step).
 */
logits: Array<number>, 
/**
 * The most probable next tokens of the sequence (for beam search: of the best live
 * hypothesis before this step), most probable first.
 */
candidates: Array<Candidate>, 
/**
 * (L, H, S): decoder self-attention of the last fed token over the S positions it
 * sees (the cache, itself included).
 */
attention: Array<Array<Array<number>>>, 
/**
 * (L, H, S_src): cross-attention of the same token over the source (encoder-decoder
 * only; empty otherwise).
 */
cross_attention: Array<Array<Array<number>>>, 
/**
 * S: positions in the KV cache after this step (without the cache: the length of the
 * recomputed sequence, which is what a cache would hold).
 */
cache_len: number, 
/**
 * Wall-clock time of the step, milliseconds.
 */
wall_ms: number, 
/**
 * Multiply-adds of the step's matrix products (see `generate::flops`).
 */
multiply_adds: number, 
/**
 * 2 × `multiply_adds`.
 */
flops: number, 
/**
 * Set on the last step.
 */
stop: StopReason | null, 
/**
 * Beam search only.
 */
beam: BeamStep | null, 
/**
 * A sampled token only (not greedy, not beam search): how the sampler's draw fell.
 */
draw: SampleDraw | null, };

export type GenerateStep = { step: CoreStep, 
/**
 * Generated ids so far (beam search: the best hypothesis).
 */
generated: Array<number>, done: boolean, backend: BackendName, 
/**
 * Set when this step had to fall back to the CPU.
 */
fallback: string | null, };

export type CompactStep = { 
/**
 * 0 for the first step.
 */
index: number, 
/**
 * Tokens run through the model in this step.
 */
fed: number, 
/**
 * The chosen token (`null` for beam search, whose choice is the `beam` state).
 */
token: number | null, 
/**
 * `token` as text.
 */
text: string | null, 
/**
 * (V) the logits the choice was made from.
 */
logits: Float32Array, 
/**
 * (K) the most probable next tokens, most probable first (`Candidate.id`).
 */
candidate_ids: Uint32Array, 
/**
 * (K) their probabilities, softmax over the whole vocabulary (`Candidate.prob`).
 */
candidate_probs: Float32Array, 
/**
 * (K) the probabilities the strategy drew from (`Candidate.sample_prob`).
 */
candidate_sample_probs: Float32Array, 
/**
 * S: positions in the KV cache after this step.
 */
cache_len: number, 
/**
 * Wall-clock time of the step, milliseconds.
 */
wall_ms: number, 
/**
 * Multiply-adds of the step's matrix products.
 */
multiply_adds: number, 
/**
 * 2 × `multiply_adds`.
 */
flops: number, 
/**
 * Set on the last step.
 */
stop: StopReason | null, 
/**
 * Beam search only.
 */
beam: BeamStep | null, 
/**
 * A sampled token only: how the sampler's draw fell (`crate::generate::Step::draw`).
 */
draw: SampleDraw | null, };

export type GenerateStepCompact = { step: CompactStep, 
/**
 * Generated ids so far (beam search: the best hypothesis).
 */
generated: Uint32Array, done: boolean, backend: BackendName, 
/**
 * Set when this step had to fall back to the CPU.
 */
fallback: string | null, };

export type GenerateStepsRequest = { 
/**
 * At most this many steps (≥ 1); fewer when the generation stops first.
 */
n: number, };

export type GpuWork = { 
/**
 * `queue.submit` calls.
 */
submissions: number, 
/**
 * GPU → CPU readbacks waited for.
 */
readbacks: number, 
/**
 * Compute dispatches.
 */
dispatches: number, };

export type GenerateSteps = { 
/**
 * N: steps run.
 */
steps: number, 
/**
 * (N) the step indices (0 for the first step of the generation).
 */
index: Uint32Array, 
/**
 * (N) the token each step chose (empty for beam search, whose choice is the beams).
 */
tokens: Uint32Array, 
/**
 * (N) tokens each step ran through the model.
 */
fed: Uint32Array, 
/**
 * (N) the engine's wall-clock time of each step, milliseconds.
 */
wall_ms: Float64Array, 
/**
 * Multiply-adds of all N steps' matrix products.
 */
multiply_adds: number, 
/**
 * The last step in full.
 */
last: CoreStep, 
/**
 * Generated ids so far (beam search: the best hypothesis).
 */
generated: Uint32Array, done: boolean, backend: BackendName, 
/**
 * Set when a step had to fall back to the CPU.
 */
fallback: string | null, 
/**
 * The GPU work of the N steps (absent when they did not all run on the GPU).
 */
gpu: GpuWork | null, };

export type CostRow = { 
/**
 * "embeddings", "encoder layer", "decoder layer" or "head".
 */
group: string, part: string, params: number, flops: number, 
/**
 * How many layers repeat this row (1 outside the stacks).
 */
layers: number, };

export type CostReport = { n_heads: number, d_head: number, d_model: number, 
/**
 * Keys each query attends to (the context length the attention rows assume).
 */
context: number, rows: Array<CostRow>, 
/**
 * Trained values of the whole model with this head count.
 */
params: number, 
/**
 * The FLOP counter's total for one token through the layers (no embeddings, no
 * head): the last token of a decoder, one row of an encoder. `None` for an
 * encoder-decoder, whose token crosses two stacks of different lengths.
 */
core_layer_flops: number | null, };

export type Schedule = { d_model: number, warmup: number, 
/**
 * The steps at the end of the run that cool down (0: none).
 */
cooldown_steps: number, steps: Array<number>, lr: Array<number>, peak_step: number, peak_lr: number, };

export type Parity = { 
/**
 * max |logit_gpu − logit_cpu| (+∞ when either side has a NaN or an infinity).
 */
max_abs_diff: number, 
/**
 * `max_abs_diff <= PARITY_TOLERANCE`.
 */
agrees: boolean, };

export type ScoreScalingRequest = { samples: number, keys: number, rows: number, seed: number, };

export type PositionsRequest = { t: number, };

export type RelativeTable = { stack: AttnSite, layer: number, 
/**
 * (2K+1, D)
 */
rel_k: Dense, 
/**
 * (2K+1, D)
 */
rel_v: Dense, };

export type Positions = { scheme: PosEncoding, t: number, 
/**
 * (T, C): the vector added to the embedding at each position (sinusoidal, learned).
 */
table: Dense | null, 
/**
 * (T, T): PEᵢ·PEⱼ.
 */
similarity: Dense | null, 
/**
 * (H) ALiBi slopes.
 */
slopes: Float32Array | null, 
/**
 * (H, T, T): −m_h·|i − j|.
 */
alibi: Dense | null, 
/**
 * Shaw tables per self-attention layer.
 */
relative: Array<RelativeTable>, 
/**
 * K: distances are clipped to ±K.
 */
max_distance: number, 
/**
 * Token embeddings (as the model scales them) and position vectors on two principal
 * axes.
 */
map: { tokens: [number, number][]; positions: [number, number][]; explained: [number, number] }, };

export type RopeDemoRequest = { tokens: Array<number>, layer: number, head: number, i: number, j: number, pair: number, shift: number, };

export type EmbeddingScaleRequest = { tokens: Array<number>, };

export type ExtrapolationRequest = { url: string, sequences: number, };

export type PermutationRequest = { url: string, text: string, perm: Array<number>, causal: boolean, };

export type PermutationResult = { tokens: Array<string>, permuted: Array<string>, perm: Array<number>, causal: boolean, pos_encoding: PosEncoding, 
/**
 * (T, V)
 */
logits: Dense, 
/**
 * (T, V)
 */
permuted_logits: Dense, 
/**
 * (T): max |difference| of permuted row t and original row perm[t].
 */
row_diff: Float32Array, row_identical: Array<boolean>, };

export type LrSettings = { "kind": "noam", factor: number, warmup: number, } | { "kind": "constant", value: number, };

export type TrainBackendChoice = "auto" | "webgpu" | "cpu";

export type RunSettings = { task: string, arch: Arch | null, d_model: number, n_heads: number, 
/**
 * Layers (each stack of an encoder-decoder).
 */
n_layers: number, d_ff: number, activation: Activation, pos_encoding: PosEncoding, norm: Norm, final_norm: boolean, residual: boolean, scale_embeddings: boolean, score: Score, share_qk: boolean, dropout: number, label_smoothing: number, batch: number, steps: number, seed: number, len: number | null, adam_beta1: number, adam_beta2: number, adam_eps: number, lr: LrSettings, 
/**
 * The share (0 to 1) of the steps, at the end of the run, over which the rate falls in
 * a straight line towards zero; 0 (and absent, in older links and saved runs): none.
 */
cooldown: number, 
/**
 * Global-norm clipping threshold; 0: no clipping.
 */
clip: number, 
/**
 * Held-out loss and the task's metric every this many steps (0: only at the end).
 */
eval_every: number, 
/**
 * Where the steps run (absent in older links and saved runs: `auto`).
 */
backend: TrainBackendChoice, 
/**
 * Task `text` only: the text to learn (up to 1 MiB of UTF-8). It travels with the run
 * (saved, exported), never in a link.
 */
text?: string, };

export type FailedPass = "forward" | "generate";

export type RaceUnit = "token" | "pass" | "step";

export type BackendStatus = { "kind": "starting" } | { "kind": "cpu_chosen" } | { "kind": "webgpu", adapter: string, } | { "kind": "webgpu_checked", adapter: string, parity: number, cpu_ms: number, gpu_ms: number, unit: RaceUnit, } | { "kind": "cpu_faster", adapter: string, parity: number, cpu_ms: number, gpu_ms: number, unit: RaceUnit, } | { "kind": "cpu_no_gpu", detail: string, } | { "kind": "cpu_test_failed", adapter: string, detail: string, } | { "kind": "cpu_disagrees", adapter: string, max_abs_diff: number | null, } | { "kind": "cpu_refused", detail: string, } | { "kind": "cpu_fell_back", during: FailedPass, adapter: string, detail: string, } | { "kind": "cpu_lost", step: number, from: number, detail: string, };

export type ErrorKind = "config" | "checkpoint" | "input" | "gpu" | "other";

export type EngineError = { kind: ErrorKind, message: string, };

export type ModelInputRequest = { rows: Array<Array<number>>, generated: Array<number>, };

export type ModelInput = { 
/**
 * Target-side ids per sequence: a `ForwardRequest`'s `batch`.
 */
batch: Array<Array<number>>, 
/**
 * Source ids per sequence (encoder-decoder only): a `ForwardRequest`'s `src`.
 */
src: Array<Array<number>> | null, 
/**
 * Where a fresh generation starts: decoder ids, `<bos>` first (a
 * `GenerateStartRequest`'s `prompt`); absent for a model that does not generate.
 */
prompt: Array<number> | null, 
/**
 * The source a generation reads (encoder-decoder only).
 */
prompt_src: Array<number> | null, 
/**
 * The page's input is the source rows of a forward result (encoder-decoder).
 */
input_is_source: boolean, 
/**
 * Ids of row 0 that are input; the rest were generated (decoder-only). Absent: the
 * rows are all input.
 */
prompt_len: number | null, 
/**
 * Row 0 without the generated tokens, as one sequence: what the block views probe.
 */
sequence: SequenceInput, };

export type RunDefaultsRequest = { task: string, };

export type RunDefaults = { settings: RunSettings, 
/**
 * The shipped model this recipe trains (its file under models/), if there is one.
 */
recipe: string | null, 
/**
 * The held-out metric the shipped model reaches (its threshold), with the recipe.
 */
threshold: number | null, 
/**
 * What the task is, in one line.
 */
description: string, 
/**
 * The task's metric (`exact_match`, `token_accuracy`, `class_accuracy`, `grammatical`).
 */
metric_name: string, 
/**
 * Field name → what it does, in one line.
 */
notes: { [key in string]: string }, 
/**
 * Field name → why it does not apply to this task (the field must keep its default).
 */
not_for_task: { [key in string]: string }, };

export type RunFootprint = { 
/**
 * Trained parameters of the model.
 */
params: number, 
/**
 * Bytes the run's worker holds at its peak (an estimate, see the module).
 */
memory_bytes: number, 
/**
 * Bytes the browser keeps for the run: its weights and Adam's two moments, saved so
 * that it can resume (the curves are a few bytes a step more).
 */
storage_bytes: number, 
/**
 * The largest single buffer on a GPU, in bytes: the largest weight matrix, the
 * logits of a batch, or one layer's attention probabilities.
 */
largest_buffer_bytes: number, };

export type EvalPoint = { 
/**
 * Mean cross-entropy (no smoothing) on held-out examples.
 */
loss: number, 
/**
 * The task's metric, in [0, 1].
 */
metric: number, metric_name: string, 
/**
 * Task `text`: continuations the model sampled from prompts taken from the held-out
 * text (the prompt, then what the model wrote); empty for other tasks.
 */
samples: Array<string>, };

export type TrainPoint = { step: number, loss: number, 
/**
 * The learning rate this step used.
 */
lr: number, 
/**
 * Global gradient norm before clipping.
 */
grad_norm: number, 
/**
 * Training time so far (the run's own compute, pauses excluded).
 */
elapsed_ms: number, eval: EvalPoint | null, 
/**
 * Per layer (encoder layers first): mean ‖x‖ over positions of the residual stream
 * after the layer.
 */
residual_norms: Array<number>, 
/**
 * Per layer (encoder layers first): ‖gradient‖ of that layer's parameters, before clipping.
 */
grad_norms: Array<number>, 
/**
 * Per layer, on the steps the run's health is measured (the first and every
 * `train::health::HEALTH_EVERY`-th, on the CPU): ‖Δw‖ / ‖w‖ of the layer's
 * parameters over this step's update; empty on other steps and on GPU steps.
 */
update_ratios: Array<number>, 
/**
 * Per layer, on the same steps: the mean entropy (nats) of its self-attention rows
 * (over batch, heads and query positions); empty on other steps.
 */
attn_entropy: Array<number>, };

export type FaultOp = "weights" | "embedding" | "norm" | "qkv_projection" | "attention_scores" | "softmax" | "attention_values" | "ffn_linear1" | "ffn_activation" | "sublayer_output" | "head" | "loss" | "gradient";

export type AlarmKind = "non_finite" | "update_too_large" | "attention_collapsed" | "gradient_exploding";

export type HealthAlarm = { kind: AlarmKind, 
/**
 * The step it happened at.
 */
step: number, 
/**
 * The layer, 1-based in the plots' order (encoder layers first); null when it is not
 * in a layer (the embedding, the head, the loss).
 */
layer: number | null, 
/**
 * The operation that first gave a NaN or an infinity (non-finite alarms only).
 */
op: FaultOp | null, 
/**
 * The parameter involved, when one is (a NaN weight, a NaN gradient).
 */
param: string | null, 
/**
 * The value watched: the non-finite value, the update ratio, the entropy, the norm.
 */
value: number, 
/**
 * The threshold it crossed (0 for a non-finite value).
 */
limit: number, 
/**
 * The learning rate of that step.
 */
lr: number, 
/**
 * The run stopped here (its last step is the one before).
 */
stopped: boolean, };

export type TrainChunkRequest = { max_steps: number, budget_ms: number, };

export type TrainChunk = { points: Array<TrainPoint>, 
/**
 * Steps taken so far.
 */
step: number, 
/**
 * The run has taken all its steps (its final evaluation is on the last point).
 */
done: boolean, 
/**
 * Steps per second of compute so far.
 */
steps_per_s: number, elapsed_ms: number, 
/**
 * Where the run's steps run after this chunk (the CPU after a GPU failure).
 */
backend: BackendStatus, 
/**
 * What the health watch saw in this chunk, in step order; a `stopped` one ends the
 * run (every later chunk is refused).
 */
alarms: Array<HealthAlarm>, };

export type TrainStarted = { info: ModelInfo, 
/**
 * The settings in full (nulls resolved to the task's own values stay null).
 */
settings: RunSettings, 
/**
 * The `tplay train` flags of the same run.
 */
command: Array<string>, 
/**
 * Where the run's steps run, and why.
 */
backend: BackendStatus, };

export type FfnProbe = { layer: number, 
/**
 * (B, T, C): the FFN's input (after the pre-LN norm where there is one).
 */
input: Dense, 
/**
 * (B, T, F): x·W₁ᵀ + b₁.
 */
pre: Dense, 
/**
 * (B, T, F): act(pre) (times the dropout mask in train mode).
 */
hidden: Dense, 
/**
 * (B, T, C): hidden·W₂ᵀ + b₂, before dropout and the residual add.
 */
output: Dense, 
/**
 * Fraction of `hidden` that is exactly 0 (ReLU's zeros, dropped units).
 */
zero_fraction: number, 
/**
 * (B, T): how many of each position's F hidden units are exactly 0.
 */
zeros: Array<number>, };

export type NormProbe = { 
/**
 * `None` for the stack's final norm.
 */
layer: number | null, 
/**
 * `norm1`, `norm2`, `norm3`, or `norm` (the final one).
 */
name: string, 
/**
 * The sublayer it belongs to (`None` for the final norm).
 */
sublayer: SublayerKind | null, kind: NormKind, 
/**
 * `None` for the final norm (after the last layer).
 */
placement: Placement | null, 
/**
 * true: one μ, σ² per feature over every position of the batch (BatchNorm in train
 * mode); false with `running`: BatchNorm's stored running statistics; false
 * otherwise: one μ, σ² per position over its C features (LayerNorm).
 */
over_batch: boolean, running: boolean, 
/**
 * (B, T) per position, or (C) per feature.
 */
mean: Dense, 
/**
 * (B, T) or (C): the biased variance σ².
 */
var: Dense, 
/**
 * (B, T, C): what was normalised.
 */
input: Dense, };

export type DropPlace = "embedding" | "attention_probs" | "ffn_hidden" | "sublayer_output";

export type DropSite = { stack: AttnSite, layer: number | null, sublayer: SublayerKind | null, place: DropPlace, 
/**
 * Part of the 2017 paper's recipe (embedding and sublayer outputs) or one of the
 * places PyTorch's modules add.
 */
in_paper: boolean, 
/**
 * The mask: 0 (dropped) or 1/(1 − p) (kept); its shape is the tensor's:
 * (B, T, C), (B, H, T, S) or (B, T, F).
 */
mask: Dense, kept_fraction: number, };

export type StackProbe = { site: AttnSite, ffn: Array<FfnProbe>, 
/**
 * In the order they ran (the final norm last).
 */
norms: Array<NormProbe>, 
/**
 * (L + 1, B, T, C): the residual stream before the first layer and after each.
 */
hidden: Dense, };

export type BlockProbe = { train: boolean, 
/**
 * The dropout probability the pass used (0 in eval mode has no effect either way).
 */
dropout: number, stacks: Array<StackProbe>, 
/**
 * Train mode with dropout > 0: every mask, in the order they were drawn.
 */
drops: Array<DropSite>, 
/**
 * (B, T, V), or (B, N) for a classifier.
 */
logits: Dense, };

export type SequenceInput = { tokens: Array<number>, src?: Array<number>, };

export type BlockProbeRequest = { batch: Array<Array<number>>, src?: Array<Array<number>>, switches: Switches, train?: TrainMode, };

export type BlockDiffRequest = { before: SequenceInput, after: SequenceInput, switches: Switches, train?: TrainMode, };

export type Probed = "ffn_input" | "ffn_output" | "hidden" | "logits";

export type RowDiff = { stack: AttnSite, what: Probed, layer: number, 
/**
 * (P): position p's row holds a value whose f32 bits differ, for the positions both
 * inputs have (P = the shorter length).
 */
changed: Array<boolean>, 
/**
 * (P): max |after − before| over the row.
 */
max_abs: Float32Array, };

export type BlockDiff = { 
/**
 * Positions whose token differs (of the main stack, or of the source for an
 * encoder-decoder's encoder), over the shorter length; and the lengths.
 */
edited: Array<number>, src_edited: Array<number>, len_before: number, len_after: number, rows: Array<RowDiff>, 
/**
 * The second pass's tensors (batch of one).
 */
after: BlockProbe, };

export type CouplingRequest = { 
/**
 * The sequence whose output is watched (main-stack ids; the source of an
 * encoder-decoder model).
 */
tokens: Array<number>, 
/**
 * Another sequence of the batch.
 */
other: Array<number>, 
/**
 * The other sequence, changed.
 */
other_changed: Array<number>, seed: number, };

export type CouplingModel = { norm: Norm, 
/**
 * false: built in memory with random weights (seed 0), never trained.
 */
trained: boolean, 
/**
 * What the model is, in words.
 */
label: string, 
/**
 * max |Δ| of this sequence's outputs when only the other sequence changes: train mode.
 */
train_max_diff: number, 
/**
 * ... bit-identical in train mode.
 */
train_identical: boolean, eval_max_diff: number, eval_identical: boolean, 
/**
 * Layer 0's first norm in train mode on the batch [this, other] (None: no norm).
 */
stats: NormProbe | null, 
/**
 * Positions the batch normalises over together (B·T, pads included).
 */
batch_rows: number, 
/**
 * (L + 1): mean ‖x‖ over this sequence's positions of the residual stream before
 * the first layer and after each (eval mode, the last stack).
 */
residual_norms: Float32Array, 
/**
 * A model with its own vocabulary: the three sequences as it read them (its ids).
 */
tokens?: Array<number>, other?: Array<number>, other_changed?: Array<number>, 
/**
 * Its vocabulary, when it differs from the loaded model's.
 */
vocab?: Array<string>, };

export type NormCoupling = { 
/**
 * The loaded model first, then its sibling with the other kind of norm.
 */
models: Array<CouplingModel>, };

export type DropoutRequest = { input: SequenceInput, seed: number, 
/**
 * `None`: the model's own p.
 */
dropout?: number, };

export type DropoutDemo = { 
/**
 * The p of this demonstration, and the model's own.
 */
p: number, model_p: number, 
/**
 * 1/(1 − p): what a kept unit is multiplied by.
 */
keep_scale: number, seed: number, 
/**
 * Every mask of the train-mode pass with `seed`.
 */
sites: Array<DropSite>, 
/**
 * (T, C) the first stack's embedding + positions in eval mode and in train mode.
 */
embed_eval: Dense, embed_train: Dense, 
/**
 * Every element of `embed_train` is `embed_eval` × its mask value, bit for bit.
 */
embed_is_masked_eval: boolean, 
/**
 * max |Δ logits| between the passes with `seed` and `seed + 1` (train mode).
 */
train_repeat_diff: number, 
/**
 * Two eval-mode passes: bit-identical logits.
 */
eval_repeat_identical: boolean, 
/**
 * The train-mode pass with p = 0 gives the eval-mode logits, bit for bit (a model
 * without BatchNorm), or `None` for a BatchNorm model (train mode differs anyway).
 */
zero_p_is_eval: boolean | null, };

export type ParallelRequest = { 
/**
 * Decoder ids to start from, `<bos>` first; the model's greedy continuation fills
 * the rest.
 */
prompt: Array<number>, 
/**
 * N: tokens in the whole sequence.
 */
length: number, 
/**
 * Each measurement is the median of this many runs.
 */
repeats: number, };

export type Exponents = { 
/**
 * Whole sequence so far, serial with the cache: measured time, and FLOPs.
 */
cached_ms: number, cached_flops: number, 
/**
 * Whole sequence so far, serial without the cache.
 */
uncached_ms: number, uncached_flops: number, 
/**
 * One teacher-forced pass over n positions.
 */
forward_ms: number, forward_flops: number, 
/**
 * Attention work of one new token: 2·C·n·L with the cache, C·n(n+1)·L without.
 */
cached_attention_flops: number, uncached_attention_flops: number, };

export type ParallelTiming = { 
/**
 * The sequence (N ids): the prompt, then the greedy continuation.
 */
tokens: Array<number>, prompt_len: number, repeats: number, 
/**
 * Index i is length n = i + 1. Median milliseconds to produce the first n tokens
 * token by token with the cache (the first step prefills position 0).
 */
cached_ms: Array<number>, 
/**
 * The same without the cache (step i is a forward pass over positions 0..=i).
 */
uncached_ms: Array<number>, 
/**
 * FLOPs of the step that computes position i (index i): with the cache one token,
 * without it the whole prefix.
 */
cached_step_flops: Array<number>, uncached_step_flops: Array<number>, 
/**
 * FLOPs of the attention scores and weighted sums of each step (all layers).
 */
cached_step_attention_flops: Array<number>, uncached_step_attention_flops: Array<number>, 
/**
 * The lengths n at which one teacher-forced pass over positions 0..n was timed.
 */
forward_lengths: Array<number>, 
/**
 * Median milliseconds of one of those passes (each timed as a batch of about N / n
 * passes in a row, so that a short pass still spans many clock ticks).
 */
forward_ms: Array<number>, forward_flops: Array<number>, 
/**
 * The fits start at this length (the upper three quarters of 1..N).
 */
fit_from: number, exponents: Exponents, };

export type ScoringRequest = { 
/**
 * Tokens per forward pass.
 */
tokens: number, repeats: number, };

export type ScoreCost = { score: Score, 
/**
 * Multiply-adds of the whole pass.
 */
multiply_adds: number, 
/**
 * Multiply-adds of the scores alone (C per (query, key) pair per layer).
 */
score_multiply_adds: number, 
/**
 * Additions q[d] + k[d] (additive scoring; 0 for dot products).
 */
additions: number, 
/**
 * tanh evaluations (additive scoring; 0 for dot products).
 */
tanh: number, 
/**
 * Median milliseconds of one pass.
 */
ms: number, 
/**
 * Every timed pass, in milliseconds.
 */
samples_ms: Array<number>, };

export type ScoringComparison = { 
/**
 * Tokens per pass (and source tokens, for an encoder-decoder).
 */
tokens: number, repeats: number, 
/**
 * (query, key) pairs scored per pass, every attention sublayer of every layer.
 */
pairs: number, rows: Array<ScoreCost>, };

export type TimeRatesRequest = { 
/**
 * Measure a GPU too, where the platform has one.
 */
gpu: boolean, };

export type GpuRates = { 
/**
 * The adapter's description.
 */
adapter: string, 
/**
 * The adapter is a software one (the CPU standing in for a GPU): its times say little
 * about a real GPU.
 */
software: boolean, 
/**
 * Milliseconds of one round trip: one tiny kernel submitted, waited for and its one
 * value read back.
 */
round_trip_ms: number, 
/**
 * Milliseconds one more tiny kernel adds inside a submission (the slope over
 * [`DISPATCH_BATCH`] launches).
 */
dispatch_ms: number, };

export type DeviceRates = { 
/**
 * FLOP/s (10⁹) of the engine's faster product kernel on [`PEAK_SHAPE`].
 */
cpu_gflops: number, 
/**
 * The GPU, where there is one; else why not (`gpu_error`).
 */
gpu: GpuRates | null, gpu_error: string | null, };

export type TimeWidthRequest = { 
/**
 * d_model; d_ff is four times it, the heads and layers are the recipe's.
 */
d_model: number, 
/**
 * This device's rates (`timeRates`), against which the parts are laid.
 */
rates: DeviceRates, };

export type PartKind = "arithmetic" | "bytes" | "submissions" | "dispatches" | "rest";

export type Part = { kind: PartKind, ms: number, };

export type StepTime = { 
/**
 * Milliseconds of one step (the median round; a decoding step is one token).
 */
ms: number, 
/**
 * Multiply-adds of one step.
 */
multiply_adds: number, 
/**
 * Bytes one step must read at least: every weight once, plus for decoding the cached
 * keys and values, for training the gradients, Adam's moments and the saved activations.
 */
bytes: number, 
/**
 * Per step, on the GPU (0 on the CPU).
 */
submissions: number, dispatches: number, readbacks: number, 
/**
 * The parts, in the order the page stacks them; they add up to `ms` unless
 * `overlapped`.
 */
parts: Array<Part>, 
/**
 * The estimated parts (all but the rest) added up to more than the step took: the
 * device overlapped them, and the rest is 0.
 */
overlapped: boolean, };

export type WidthTime = { d_model: number, d_ff: number, n_heads: number, layers: number, params: number, 
/**
 * Sequences in a training batch.
 */
batch: number, decode_cpu: StepTime, train_cpu: StepTime, 
/**
 * `None` without a GPU, or when it failed here (`gpu_error`).
 */
decode_gpu: StepTime | null, train_gpu: StepTime | null, gpu_error: string | null, };

export type WeightTensor = { 
/**
 * Its checkpoint name (DESIGN.md §3), e.g. `decoder.layers.0.self_attn.in_proj_weight`.
 */
name: string, shape: Array<number>, 
/**
 * False for BatchNorm's running statistics (stored, never trained).
 */
trained: boolean, 
/**
 * Values that differ from the trained ones now.
 */
edited: number, };

export type WeightSelection = { name: string, 
/**
 * The first flat index (default 0).
 */
start?: number, 
/**
 * How many values (default: from `start` to the end, at `stride`).
 */
count?: number, 
/**
 * The step between them (default 1).
 */
stride?: number, };

export type WeightValues = { name: string, shape: Array<number>, start: number, stride: number, 
/**
 * (N) the flat index of each value.
 */
indices: Array<number>, 
/**
 * (N) the values the model computes with now.
 */
values: Float32Array, 
/**
 * (N) the trained values (what restoring brings back).
 */
trained: Float32Array, };

export type WeightSetRequest = { name: string, start?: number, stride?: number, values: Array<number>, };

export type WeightRestoreRequest = { name?: string, start?: number, count?: number, stride?: number, };

export type WeightEdit = { name: string, shape: Array<number>, 
/**
 * Values that differ from the trained ones.
 */
changed: number, 
/**
 * The flat indices of the first of them (at most `EDIT_INDICES`), in order.
 */
indices: Array<number>, 
/**
 * The largest |value − trained| in the tensor.
 */
max_abs_change: number, };

export type WeightEdits = { edits: Array<WeightEdit>, 
/**
 * Values changed in all.
 */
changed: number, };
