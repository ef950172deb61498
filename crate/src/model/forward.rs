//! The forward pass (docs/model.md, "Forward pass"): its inputs ([`Batch`]), run-time
//! switches ([`ForwardOptions`]), outputs ([`Trace`], what the UI draws) and, for the
//! trainer, every intermediate value ([`Activations`]).
//!
//! ```text
//! x = E[tok]·(√C or 1) + PE           (B, T, C)   embedding, absolute positions, dropout
//! for each layer: SA, [CA,] FF        (B, T, C)   each with its norm placement and residual
//! final LayerNorm                     (B, T, C)   when `final_norm`
//! logits = x·W_headᵀ (+ b)            (B, T, V)   or class logits from x[:, 0]  (B, N)
//! ```
//!
//! An encoder-decoder model runs the encoder over the source first; its output is the
//! memory every decoder layer's cross-attention reads.
//!
//! Train mode draws every dropout mask from one ChaCha8 generator seeded with the pass's
//! seed, in the order the computation runs, stack by stack (the encoder first): the
//! embedding (B, T, C), then per layer and sublayer the attention probabilities
//! (B, H, T, S) or the FFN hidden units (B, T, F), then the sublayer output (B, T, C).

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::attention::{mha_forward, AttnCache, AttnSpec, Relative};
use super::embedding::{embedding_forward, embedding_scale};
use super::ffn::{ffn_forward, linear_forward, FfnCache};
use super::norm::{
    batchnorm_eval_forward, batchnorm_running_update, batchnorm_train_forward, layernorm_forward,
};
use super::position::{alibi_slopes, learned_positions_forward, sinusoidal_forward};
use super::{AttentionParams, HeadParams, LayerParams, Model, NormParams, ParamKind, StackParams};
use crate::config::{Arch, ModelConfig, Norm, PosEncoding};
use crate::error::{Error, Result};
use crate::tensor::Tensor;

/// Where an attention sublayer sits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AttnSite {
    EncoderSelf,
    DecoderSelf,
    /// Decoder queries over encoder keys/values.
    Cross,
}

impl AttnSite {
    pub fn name(self) -> &'static str {
        match self {
            AttnSite::EncoderSelf => "encoder_self",
            AttnSite::DecoderSelf => "decoder_self",
            AttnSite::Cross => "cross",
        }
    }

    pub fn parse(s: &str) -> Option<AttnSite> {
        match s {
            "encoder_self" => Some(AttnSite::EncoderSelf),
            "decoder_self" => Some(AttnSite::DecoderSelf),
            "cross" => Some(AttnSite::Cross),
            _ => None,
        }
    }
}

/// One head of one attention sublayer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct HeadRef {
    pub site: AttnSite,
    pub layer: usize,
    pub head: usize,
}

/// Train mode turns on dropout and BatchNorm batch statistics.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    Eval,
    /// Dropout masks are drawn from a ChaCha8 generator seeded with `seed`.
    Train {
        seed: u64,
    },
}

/// Run-time switches of one forward pass: everything that needs no retraining.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ForwardOptions {
    /// `None`: the architecture's default (decoders causal, encoders not).
    pub causal: Option<bool>,
    /// Mask keys whose token is `pad`.
    pub padding_mask: bool,
    /// Divide `scaled_dot` scores by √D.
    pub scale: bool,
    /// Heads whose output is zeroed.
    pub ablate: Vec<HeadRef>,
    pub mode: Mode,
    /// Record every attention sublayer's scores and probabilities.
    pub trace_attention: bool,
    /// Record the residual stream before the first and after every layer.
    pub trace_hidden: bool,
}

impl Default for ForwardOptions {
    fn default() -> Self {
        ForwardOptions {
            causal: None,
            padding_mask: true,
            scale: true,
            ablate: vec![],
            mode: Mode::Eval,
            trace_attention: false,
            trace_hidden: false,
        }
    }
}

/// Scores and probabilities of one attention sublayer.
#[derive(Clone, Debug, PartialEq)]
pub struct AttnTrace {
    pub site: AttnSite,
    pub layer: usize,
    /// (B, H, T, S): after scaling and position biases; masked entries are −∞.
    pub scores: Tensor,
    /// (B, H, T, S): softmax of `scores` (rows with every key masked are zero).
    pub probs: Tensor,
}

/// The residual stream of one stack: `states[0]` is the layer input (embeddings +
/// positions), `states[l + 1]` the output of layer l (before the final norm).
#[derive(Clone, Debug, PartialEq)]
pub struct HiddenTrace {
    pub stack: AttnSite,
    /// L + 1 tensors of (B, T, C) (S instead of T for the encoder of an encoder-decoder).
    pub states: Vec<Tensor>,
}

/// New BatchNorm running statistics computed by a train-mode pass, by tensor name.
#[derive(Clone, Debug, PartialEq)]
pub struct RunningStatUpdate {
    /// e.g. `decoder.layers.0.norm1.running_mean`
    pub name: String,
    pub value: Tensor,
}

/// Everything a forward pass produces.
#[derive(Clone, Debug, PartialEq)]
pub struct Trace {
    /// (B, T, V) for a token-level head; empty (shape [0]) for a classifier.
    pub logits: Tensor,
    /// (B, num_classes) for a classifier.
    pub class_logits: Option<Tensor>,
    /// In the order the sublayers ran; empty unless `trace_attention`.
    pub attention: Vec<AttnTrace>,
    /// Empty unless `trace_hidden`.
    pub hidden: Vec<HiddenTrace>,
    /// Train mode with BatchNorm only; apply with `Model::apply_running_stats`.
    pub running_stats: Vec<RunningStatUpdate>,
}

// ----------------------------------------------------------------------------------------
// Inputs
// ----------------------------------------------------------------------------------------

/// B sequences of equal length T, right-padded with the tokenizer's pad id, and for an
/// encoder-decoder model the B source sequences of length S.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Batch {
    /// (B, T) row-major token ids.
    pub tokens: Vec<u32>,
    /// B
    pub batch: usize,
    /// T
    pub len: usize,
    /// (B, S) row-major source ids (encoder-decoder only).
    pub src_tokens: Option<Vec<u32>>,
    /// S (0 without a source).
    pub src_len: usize,
}

/// Rows of equal length flattened to (B, T), or a message naming the first ragged row.
fn flatten_rows(rows: Vec<Vec<u32>>, what: &str) -> Result<(Vec<u32>, usize, usize)> {
    let b = rows.len();
    if b == 0 {
        return Err(Error::Input(format!("the {what} batch holds no sequences")));
    }
    let t = rows[0].len();
    if let Some((i, r)) = rows.iter().enumerate().find(|(_, r)| r.len() != t) {
        return Err(Error::Input(format!(
            "ragged {what} batch: sequence {i} has {} tokens but sequence 0 has {t}; \
             pad them to one length (Batch::padded)",
            r.len()
        )));
    }
    if t == 0 {
        return Err(Error::Input(format!(
            "every {what} sequence is empty: give at least one token"
        )));
    }
    Ok((rows.into_iter().flatten().collect(), b, t))
}

/// Right-pad every row with `pad` to the longest row's length.
fn pad_rows(mut rows: Vec<Vec<u32>>, pad: u32) -> Vec<Vec<u32>> {
    let t = rows.iter().map(Vec::len).max().unwrap_or(0);
    for r in &mut rows {
        r.resize(t, pad);
    }
    rows
}

impl Batch {
    /// A batch from sequences that already have one length (e.g. padded by the caller).
    pub fn new(rows: Vec<Vec<u32>>) -> Result<Batch> {
        let (tokens, batch, len) = flatten_rows(rows, "token")?;
        Ok(Batch {
            tokens,
            batch,
            len,
            src_tokens: None,
            src_len: 0,
        })
    }

    /// A batch from sequences of any lengths, right-padded with `pad` to the longest.
    pub fn padded(rows: Vec<Vec<u32>>, pad: u32) -> Result<Batch> {
        Batch::new(pad_rows(rows, pad))
    }

    /// One sequence.
    pub fn single(tokens: &[u32]) -> Result<Batch> {
        Batch::new(vec![tokens.to_vec()])
    }

    /// Add the source sequences of an encoder-decoder model (already of one length).
    pub fn with_source(self, rows: Vec<Vec<u32>>) -> Result<Batch> {
        let (src, b, s) = flatten_rows(rows, "source")?;
        if b != self.batch {
            return Err(Error::Input(format!(
                "the batch has {} target sequences but {b} source sequences",
                self.batch
            )));
        }
        Ok(Batch {
            src_tokens: Some(src),
            src_len: s,
            ..self
        })
    }

    /// Add source sequences of any lengths, right-padded with `pad` to the longest.
    pub fn with_padded_source(self, rows: Vec<Vec<u32>>, pad: u32) -> Result<Batch> {
        self.with_source(pad_rows(rows, pad))
    }

    /// Row `i` of the target tokens (T).
    pub fn row(&self, i: usize) -> &[u32] {
        &self.tokens[i * self.len..(i + 1) * self.len]
    }
}

// ----------------------------------------------------------------------------------------
// Dropout
// ----------------------------------------------------------------------------------------

/// Inverted-dropout multipliers for n elements: each is 0 with probability p (a uniform
/// draw in [0, 1) below p) and 1/(1 − p) otherwise, drawn in order from `rng`.
pub fn dropout_mask(rng: &mut ChaCha8Rng, p: f32, n: usize) -> Vec<f32> {
    let keep = 1.0 / (1.0 - p);
    (0..n)
        .map(|_| if rng.random::<f32>() < p { 0.0 } else { keep })
        .collect()
}

// ----------------------------------------------------------------------------------------
// What a backward pass needs
// ----------------------------------------------------------------------------------------

/// A norm's input and statistics.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NormRecord {
    /// (R, C) the normalised input.
    pub input: Vec<f32>,
    /// LayerNorm: (R) per-row mean; BatchNorm train: (C) batch mean; BatchNorm eval: empty.
    pub mean: Vec<f32>,
    /// LayerNorm: (R); BatchNorm train: (C) 1/√(σ² + ε); BatchNorm eval: empty (the
    /// running statistics were used).
    pub rstd: Vec<f32>,
}

/// The kind of a sublayer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SublayerKind {
    SelfAttention,
    CrossAttention,
    Ffn,
}

/// One sublayer `x → x'` with its norm placement applied (docs/model.md step 3).
#[derive(Clone, Debug, PartialEq)]
pub struct SublayerRecord {
    pub kind: SublayerKind,
    /// (B, T, C) x before the sublayer.
    pub input: Vec<f32>,
    /// The sublayer's norm: applied to `input` (pre-LN) or to `input + drop(sub)` /
    /// `drop(sub)` (post-LN, BatchNorm). `None` when `norm = none`.
    pub norm: Option<NormRecord>,
    /// (B, T, C) the sublayer function's input (`input`, or its norm for pre-LN).
    pub sub_input: Vec<f32>,
    /// Attention sublayers: projections, scores, probabilities, z.
    pub attn: Option<AttnCache>,
    /// (B, H, T, S) attention-probability dropout multipliers (train mode).
    pub attn_dropout: Option<Vec<f32>>,
    /// (B, S, C) the key/value rows (cross-attention: the encoder memory).
    pub kv_input: Option<Vec<f32>>,
    /// FFN sublayers: pre-activation and hidden units.
    pub ffn: Option<FfnCache>,
    /// (B, T, F) FFN hidden dropout multipliers (train mode).
    pub ffn_dropout: Option<Vec<f32>>,
    /// (B, T, C) dropout multipliers on the sublayer's output (train mode).
    pub out_dropout: Option<Vec<f32>>,
    /// (B, T, C) x after the sublayer (and its post-norm).
    pub output: Vec<f32>,
}

/// One stack (encoder or decoder) of a recorded forward pass.
#[derive(Clone, Debug, PartialEq)]
pub struct StackRecord {
    pub site: AttnSite,
    /// (B, T, C) embedding dropout multipliers (train mode).
    pub embed_dropout: Option<Vec<f32>>,
    /// (B, T, C) embeddings + positions (+ dropout): the first layer's input.
    pub embedded: Vec<f32>,
    /// Per layer its sublayers in order (SA, [CA,] FF).
    pub layers: Vec<Vec<SublayerRecord>>,
    /// The stack's final LayerNorm.
    pub final_norm: Option<NormRecord>,
    /// (B, T, C) the stack's output (after the final norm).
    pub output: Vec<f32>,
    /// (B, T): keys masked as padding in this stack's self-attention (None: mask off).
    pub key_pad: Option<Vec<bool>>,
    pub causal: bool,
}

/// Every intermediate value of a forward pass, for a backward pass
/// ([`Model::forward_recorded`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Activations {
    pub encoder: Option<StackRecord>,
    pub decoder: Option<StackRecord>,
    /// (B, T, C) the head's input (a classifier reads row 0 of each sequence).
    pub head_input: Vec<f32>,
}

// ----------------------------------------------------------------------------------------
// The forward pass
// ----------------------------------------------------------------------------------------

/// Where the key/value rows of cross-attention come from.
struct Memory<'a> {
    /// (B, S, C) encoder output.
    x: &'a [f32],
    s: usize,
    /// (B, S)
    pad: Option<&'a [bool]>,
}

/// State of one forward pass (also driven step by step by the KV cache).
pub(crate) struct Run<'m> {
    pub(crate) model: &'m Model,
    pub(crate) opts: &'m ForwardOptions,
    /// Train mode with dropout > 0: the single generator every mask is drawn from, in the
    /// order the computation runs.
    rng: Option<ChaCha8Rng>,
    train: bool,
    keep: bool,
    pub(crate) trace: Trace,
}

impl Model {
    /// The forward pass of docs/model.md over a batch: logits (or class logits), and the
    /// attention maps and hidden states that `opts` asks for.
    pub fn forward(&self, batch: &Batch, opts: &ForwardOptions) -> Result<Trace> {
        Ok(self.run_forward(batch, opts, false)?.0)
    }

    /// [`Model::forward`] that also returns every intermediate value a backward pass
    /// needs (norm statistics, attention probabilities, pre-activations, dropout masks).
    pub fn forward_recorded(
        &self,
        batch: &Batch,
        opts: &ForwardOptions,
    ) -> Result<(Trace, Activations)> {
        let (trace, acts) = self.run_forward(batch, opts, true)?;
        Ok((
            trace,
            acts.expect("a recorded forward pass keeps its activations"),
        ))
    }

    /// Store the BatchNorm running statistics a train-mode pass computed
    /// (`Trace::running_stats`).
    pub fn apply_running_stats(&mut self, updates: &[RunningStatUpdate]) -> Result<()> {
        let mut pending: Vec<Option<&RunningStatUpdate>> = updates.iter().map(Some).collect();
        let mut err = None;
        self.visit_params_mut(&mut |name, t, kind| {
            if kind != ParamKind::Buffer {
                return;
            }
            for slot in pending.iter_mut() {
                if let Some(u) = slot.filter(|u| u.name == name) {
                    if u.value.shape != t.shape {
                        err.get_or_insert(Error::Input(format!(
                            "running statistic `{name}` has shape {:?}, expected {:?}",
                            u.value.shape, t.shape
                        )));
                    } else {
                        t.data.copy_from_slice(&u.value.data);
                    }
                    *slot = None;
                }
            }
        });
        if let Some(e) = err {
            return Err(e);
        }
        if let Some(u) = pending.into_iter().flatten().next() {
            return Err(Error::Input(format!(
                "this model has no running statistic `{}`",
                u.name
            )));
        }
        Ok(())
    }

    /// Check a batch against this model: shapes, token ids, source presence, length.
    pub fn check_batch(&self, batch: &Batch) -> Result<()> {
        let cfg = &self.config;
        if batch.batch == 0 {
            return Err(Error::Input("the batch holds no sequences".into()));
        }
        if batch.len == 0 {
            return Err(Error::Input(
                "every sequence is empty: give at least one token".into(),
            ));
        }
        if batch.tokens.len() != batch.batch * batch.len {
            return Err(Error::Input(format!(
                "the batch says {} sequences of {} tokens but holds {} tokens",
                batch.batch,
                batch.len,
                batch.tokens.len()
            )));
        }
        check_ids(&batch.tokens, batch.len, cfg.vocab_size, "")?;
        self.check_length(batch.len, "tokens")?;
        match (cfg.arch, &batch.src_tokens) {
            (Arch::EncoderDecoder, None) => {
                return Err(Error::Input(
                    "an encoder_decoder model needs source sequences (Batch::with_source)".into(),
                ))
            }
            (Arch::EncoderDecoder, Some(src)) => {
                if batch.src_len == 0 {
                    return Err(Error::Input(
                        "every source sequence is empty: give at least one token".into(),
                    ));
                }
                if src.len() != batch.batch * batch.src_len {
                    return Err(Error::Input(format!(
                        "the batch says {} source sequences of {} tokens but holds {} tokens",
                        batch.batch,
                        batch.src_len,
                        src.len()
                    )));
                }
                check_ids(src, batch.src_len, cfg.vocab_size, "source ")?;
                self.check_length(batch.src_len, "source tokens")?;
            }
            (arch, Some(_)) => {
                return Err(Error::Input(format!(
                    "a {} model takes no source sequences",
                    arch_name(arch)
                )))
            }
            (_, None) => {}
        }
        Ok(())
    }

    /// Learned positions have a row per position up to max_len and no further.
    pub(crate) fn check_length(&self, len: usize, what: &str) -> Result<()> {
        let cfg = &self.config;
        if cfg.pos_encoding == PosEncoding::Learned && len > cfg.max_len {
            return Err(Error::Input(format!(
                "learned positions stop at max_len = {}; got {len} {what}",
                cfg.max_len
            )));
        }
        Ok(())
    }

    /// Check every ablated head exists in this model.
    pub(crate) fn check_ablation(&self, ablate: &[HeadRef]) -> Result<()> {
        let cfg = &self.config;
        for a in ablate {
            let layers = match (a.site, cfg.arch) {
                (AttnSite::EncoderSelf, Arch::EncoderOnly | Arch::EncoderDecoder) => {
                    cfg.encoder_layers()
                }
                (AttnSite::DecoderSelf, Arch::DecoderOnly | Arch::EncoderDecoder) => {
                    cfg.decoder_layers()
                }
                (AttnSite::Cross, Arch::EncoderDecoder) => cfg.decoder_layers(),
                (site, arch) => {
                    return Err(Error::Input(format!(
                        "ablate: a {} model has no {} attention",
                        arch_name(arch),
                        site.name()
                    )))
                }
            };
            if a.layer >= layers {
                return Err(Error::Input(format!(
                    "ablate: {} layer {} does not exist ({layers} layers)",
                    a.site.name(),
                    a.layer
                )));
            }
            if a.head >= cfg.n_heads {
                return Err(Error::Input(format!(
                    "ablate: head {} does not exist ({} heads per layer)",
                    a.head, cfg.n_heads
                )));
            }
        }
        Ok(())
    }

    /// Whether the self-attention of `site` uses the causal mask in this pass.
    pub fn is_causal(&self, site: AttnSite, opts: &ForwardOptions) -> bool {
        match (self.config.arch, site) {
            (Arch::EncoderOnly, AttnSite::EncoderSelf) => opts.causal.unwrap_or(false),
            (_, AttnSite::DecoderSelf) => opts.causal.unwrap_or(true),
            // The encoder of an encoder-decoder model and cross-attention: never.
            _ => false,
        }
    }

    fn run_forward(
        &self,
        batch: &Batch,
        opts: &ForwardOptions,
        keep: bool,
    ) -> Result<(Trace, Option<Activations>)> {
        self.check_batch(batch)?;
        self.check_ablation(&opts.ablate)?;
        let cfg = &self.config;
        let train = matches!(opts.mode, Mode::Train { .. });
        if train && cfg.norm == Norm::BatchNorm {
            let rows = batch.batch * batch.len; // B·T
            let src_rows = batch.batch * batch.src_len; // B·S
            if rows < 2 || (batch.src_tokens.is_some() && src_rows < 2) {
                return Err(Error::Input(
                    "BatchNorm in train mode needs at least two positions in the batch \
                     to compute a variance"
                        .into(),
                ));
            }
        }
        let mut run = Run::new(self, opts, keep);
        let (b, t) = (batch.batch, batch.len);
        let pad_id = self.tokenizer.spec.pad;
        // (B, T) or (B, S): true where the key is padding and the mask is on.
        let pad_mask = |toks: &[u32]| -> Option<Vec<bool>> {
            opts.padding_mask
                .then(|| toks.iter().map(|&x| x == pad_id).collect())
        };

        let mut encoder_rec = None;
        let mut decoder_rec = None;
        let x = match cfg.arch {
            Arch::EncoderOnly => {
                let stack = self
                    .encoder
                    .as_ref()
                    .expect("encoder-only models have an encoder");
                let rec = run.stack(
                    stack,
                    AttnSite::EncoderSelf,
                    &batch.tokens,
                    b,
                    t,
                    pad_mask(&batch.tokens),
                    self.is_causal(AttnSite::EncoderSelf, opts),
                    None,
                )?;
                let out = rec.output.clone(); // (B, T, C)
                encoder_rec = Some(rec);
                out
            }
            Arch::DecoderOnly => {
                let stack = self
                    .decoder
                    .as_ref()
                    .expect("decoder-only models have a decoder");
                let rec = run.stack(
                    stack,
                    AttnSite::DecoderSelf,
                    &batch.tokens,
                    b,
                    t,
                    pad_mask(&batch.tokens),
                    self.is_causal(AttnSite::DecoderSelf, opts),
                    None,
                )?;
                let out = rec.output.clone(); // (B, T, C)
                decoder_rec = Some(rec);
                out
            }
            Arch::EncoderDecoder => {
                let src = batch.src_tokens.as_ref().expect("checked by check_batch");
                let s = batch.src_len;
                let enc = self
                    .encoder
                    .as_ref()
                    .expect("encoder-decoder models have an encoder");
                let dec = self
                    .decoder
                    .as_ref()
                    .expect("encoder-decoder models have a decoder");
                let src_pad = pad_mask(src);
                let erec = run.stack(
                    enc,
                    AttnSite::EncoderSelf,
                    src,
                    b,
                    s,
                    src_pad.clone(),
                    false,
                    None,
                )?;
                let memory = Memory {
                    x: &erec.output,
                    s,
                    pad: src_pad.as_deref(),
                };
                let drec = run.stack(
                    dec,
                    AttnSite::DecoderSelf,
                    &batch.tokens,
                    b,
                    t,
                    pad_mask(&batch.tokens),
                    self.is_causal(AttnSite::DecoderSelf, opts),
                    Some(memory),
                )?;
                let out = drec.output.clone(); // (B, T, C)
                encoder_rec = Some(erec);
                decoder_rec = Some(drec);
                out
            }
        };
        run.head(&x, b, t);
        let acts = keep.then_some(Activations {
            encoder: encoder_rec,
            decoder: decoder_rec,
            head_input: x,
        });
        Ok((run.trace, acts))
    }
}

fn arch_name(arch: Arch) -> &'static str {
    match arch {
        Arch::EncoderOnly => "encoder_only",
        Arch::DecoderOnly => "decoder_only",
        Arch::EncoderDecoder => "encoder_decoder",
    }
}

/// Every id of a (rows, len) token buffer must be below the vocabulary size.
fn check_ids(tokens: &[u32], len: usize, vocab: usize, what: &str) -> Result<()> {
    if let Some(i) = tokens.iter().position(|&x| x as usize >= vocab) {
        return Err(Error::Input(format!(
            "{what}token id {} at sequence {}, position {} is outside the vocabulary of \
             {vocab} tokens (ids 0..{})",
            tokens[i],
            i / len,
            i % len,
            vocab - 1
        )));
    }
    Ok(())
}

/// A sublayer's function: its input (B, T, C) → its output (B, T, C), recording what it
/// computed.
type SublayerFn<'f, 'm> =
    dyn FnMut(&mut Run<'m>, &[f32], &mut SublayerRecord) -> Result<Vec<f32>> + 'f;

impl<'m> Run<'m> {
    pub(crate) fn new(model: &'m Model, opts: &'m ForwardOptions, keep: bool) -> Run<'m> {
        let rng = match opts.mode {
            Mode::Train { seed } if model.config.dropout > 0.0 => {
                Some(ChaCha8Rng::seed_from_u64(seed))
            }
            _ => None,
        };
        Run {
            model,
            opts,
            rng,
            train: matches!(opts.mode, Mode::Train { .. }),
            keep,
            trace: Trace {
                logits: Tensor::zeros(&[0]),
                class_logits: None,
                attention: vec![],
                hidden: vec![],
                running_stats: vec![],
            },
        }
    }

    fn cfg(&self) -> &ModelConfig {
        &self.model.config
    }

    /// Dropout multipliers for n elements, or `None` in eval mode (or p = 0).
    fn dropout(&mut self, n: usize) -> Option<Vec<f32>> {
        let p = self.model.config.dropout;
        self.rng.as_mut().map(|rng| dropout_mask(rng, p, n))
    }

    /// Apply a fresh dropout mask to `x` in place and return the mask.
    fn drop_in_place(&mut self, x: &mut [f32]) -> Option<Vec<f32>> {
        let mask = self.dropout(x.len())?;
        for (v, m) in x.iter_mut().zip(&mask) {
            *v *= m;
        }
        Some(mask)
    }

    /// Embeddings + absolute positions (+ dropout) of (B, T) tokens.
    fn embed(&mut self, tokens: &[u32], b: usize, t: usize) -> (Vec<f32>, Option<Vec<f32>>) {
        let m = self.model;
        let c = m.config.d_model;
        let mut x = vec![0.0f32; b * t * c]; // (B, T, C)
        embed_tokens(&mut x, m, tokens, 0, b, t);
        let mask = self.drop_in_place(&mut x);
        (x, mask)
    }

    /// A norm over (R, C) rows: LayerNorm, or BatchNorm (eval: running statistics;
    /// train: batch statistics, with the running-statistic update recorded in the trace).
    pub(crate) fn norm(
        &mut self,
        out: &mut [f32],
        inp: &[f32],
        p: &NormParams,
        name: &str,
        layer_norm: bool,
    ) -> NormRecord {
        let c = self.cfg().d_model;
        let rows = inp.len() / c;
        let (w, bias) = (&p.weight.data, &p.bias.data);
        let mut rec = NormRecord::default();
        if layer_norm || self.cfg().norm != Norm::BatchNorm {
            rec.mean = vec![0.0; rows]; // (R)
            rec.rstd = vec![0.0; rows]; // (R)
            layernorm_forward(out, &mut rec.mean, &mut rec.rstd, inp, w, bias, rows, c);
        } else {
            let (rm, rv) = match (&p.running_mean, &p.running_var) {
                (Some(m), Some(v)) => (&m.data, &v.data),
                _ => unreachable!("BatchNorm parameters always hold running statistics"),
            };
            if self.train {
                rec.mean = vec![0.0; c]; // (C)
                rec.rstd = vec![0.0; c]; // (C)
                let mut var = vec![0.0f32; c]; // (C)
                batchnorm_train_forward(
                    out,
                    &mut rec.mean,
                    &mut var,
                    &mut rec.rstd,
                    inp,
                    w,
                    bias,
                    rows,
                    c,
                );
                let (mut new_mean, mut new_var) = (rm.clone(), rv.clone()); // (C), (C)
                batchnorm_running_update(&mut new_mean, &mut new_var, &rec.mean, &var, rows);
                for (suffix, value) in [("running_mean", new_mean), ("running_var", new_var)] {
                    self.trace.running_stats.push(RunningStatUpdate {
                        name: format!("{name}.{suffix}"),
                        value: Tensor {
                            shape: vec![c],
                            data: value,
                        },
                    });
                }
            } else {
                batchnorm_eval_forward(out, inp, w, bias, rm, rv, rows, c);
            }
        }
        if self.keep {
            rec.input = inp.to_vec();
        }
        rec
    }

    /// One sublayer with its norm placement and residual (docs/model.md step 3):
    /// post-LN / BatchNorm `x = N(x + drop(f(x)))`, pre-LN `x = x + drop(f(N(x)))`,
    /// none `x = x + drop(f(x))` (without the residual the `x +` goes away).
    pub(crate) fn sublayer(
        &mut self,
        x: &mut Vec<f32>,
        kind: SublayerKind,
        norm: Option<(&NormParams, String)>,
        f: &mut SublayerFn<'_, 'm>,
    ) -> Result<SublayerRecord> {
        let residual = self.cfg().residual;
        let placement = self.cfg().norm;
        let mut rec = SublayerRecord {
            kind,
            input: if self.keep { x.clone() } else { vec![] },
            norm: None,
            sub_input: vec![],
            attn: None,
            attn_dropout: None,
            kv_input: None,
            ffn: None,
            ffn_dropout: None,
            out_dropout: None,
            output: vec![],
        };
        let mut y = match (placement, &norm) {
            (Norm::PreLn, Some((p, name))) => {
                let mut nx = vec![0.0f32; x.len()]; // (B, T, C)
                rec.norm = Some(self.norm(&mut nx, x, p, name, true));
                let y = f(self, &nx, &mut rec)?; // (B, T, C)
                if self.keep {
                    rec.sub_input = nx;
                }
                y
            }
            _ => {
                let y = f(self, x, &mut rec)?; // (B, T, C)
                if self.keep {
                    rec.sub_input = x.clone();
                }
                y
            }
        };
        rec.out_dropout = self.drop_in_place(&mut y);
        if residual {
            for (yv, xv) in y.iter_mut().zip(x.iter()) {
                *yv += xv;
            }
        }
        match (placement, &norm) {
            (Norm::PostLn | Norm::BatchNorm, Some((p, name))) => {
                rec.norm = Some(self.norm(x, &y, p, name, false));
            }
            _ => *x = y,
        }
        if self.keep {
            rec.output = x.clone();
        }
        Ok(rec)
    }

    /// One encoder or decoder stack over (B, T) tokens.
    #[allow(clippy::too_many_arguments)]
    fn stack(
        &mut self,
        stack: &StackParams,
        site: AttnSite,
        tokens: &[u32],
        b: usize,
        t: usize,
        key_pad: Option<Vec<bool>>,
        causal: bool,
        memory: Option<Memory>,
    ) -> Result<StackRecord> {
        let prefix = match site {
            AttnSite::EncoderSelf => "encoder",
            _ => "decoder",
        };
        let (mut x, embed_dropout) = self.embed(tokens, b, t); // (B, T, C)
        let mut rec = StackRecord {
            site,
            embed_dropout,
            embedded: if self.keep { x.clone() } else { vec![] },
            layers: vec![],
            final_norm: None,
            output: vec![],
            key_pad: key_pad.clone(),
            causal,
        };
        let mut hidden = vec![];
        if self.opts.trace_hidden {
            hidden.push(Tensor {
                shape: vec![b, t, self.cfg().d_model],
                data: x.clone(),
            });
        }
        for (li, layer) in stack.layers.iter().enumerate() {
            let norm = |k: usize| {
                layer
                    .norms
                    .get(k)
                    .map(|p| (p, format!("{prefix}.layers.{li}.norm{}", k + 1)))
            };
            let mut subs = vec![];
            let self_site = site;
            subs.push(self.sublayer(
                &mut x,
                SublayerKind::SelfAttention,
                norm(0),
                &mut |run, inp, r| {
                    run.attention(
                        inp,
                        inp,
                        &layer.self_attn,
                        self_site,
                        li,
                        key_pad.as_deref(),
                        causal,
                        b,
                        t,
                        t,
                        r,
                    )
                },
            )?);
            let mut next_norm = 1;
            if let (Some(cross), Some(mem)) = (&layer.cross_attn, &memory) {
                subs.push(self.sublayer(
                    &mut x,
                    SublayerKind::CrossAttention,
                    norm(1),
                    &mut |run, inp, r| {
                        if run.keep {
                            r.kv_input = Some(mem.x.to_vec());
                        }
                        run.attention(
                            inp,
                            mem.x,
                            cross,
                            AttnSite::Cross,
                            li,
                            mem.pad,
                            false,
                            b,
                            t,
                            mem.s,
                            r,
                        )
                    },
                )?);
                next_norm = 2;
            }
            subs.push(self.sublayer(
                &mut x,
                SublayerKind::Ffn,
                norm(next_norm),
                &mut |run, inp, r| run.ffn(inp, layer, r),
            )?);
            if self.opts.trace_hidden {
                hidden.push(Tensor {
                    shape: vec![b, t, self.cfg().d_model],
                    data: x.clone(),
                });
            }
            if self.keep {
                rec.layers.push(subs);
            }
        }
        if self.opts.trace_hidden {
            self.trace.hidden.push(HiddenTrace {
                stack: site,
                states: hidden,
            });
        }
        if let Some(fnorm) = &stack.final_norm {
            let mut out = vec![0.0f32; x.len()]; // (B, T, C)
            rec.final_norm = Some(self.norm(&mut out, &x, fnorm, &format!("{prefix}.norm"), true));
            x = out;
        }
        rec.output = x;
        Ok(rec)
    }

    /// An attention sublayer's function: (B, T, C) from queries `xq` and keys/values `xkv`.
    #[allow(clippy::too_many_arguments)]
    fn attention(
        &mut self,
        xq: &[f32],
        xkv: &[f32],
        params: &AttentionParams,
        site: AttnSite,
        layer: usize,
        key_pad: Option<&[bool]>,
        causal: bool,
        b: usize,
        t: usize,
        s: usize,
        rec: &mut SublayerRecord,
    ) -> Result<Vec<f32>> {
        let cfg = self.cfg();
        let (h, c) = (cfg.n_heads, cfg.d_model);
        let slopes = alibi_slopes(h);
        // (H): which heads of this sublayer are ablated.
        let ablate: Vec<bool> = (0..h)
            .map(|head| self.opts.ablate.contains(&HeadRef { site, layer, head }))
            .collect();
        let spec = attn_spec(
            cfg,
            params,
            site,
            causal,
            self.opts.scale,
            0,
            &slopes,
            &ablate,
        );
        let drop = self.dropout(b * h * t * s); // (B, H, T, S)
        let mut cache = AttnCache::default();
        let mut out = vec![0.0f32; b * t * c]; // (B, T, C)
        mha_forward(
            &mut out,
            &mut cache,
            xq,
            xkv,
            params,
            key_pad,
            drop.as_deref(),
            &spec,
            b,
            t,
            s,
        );
        if self.opts.trace_attention {
            let shape = vec![b, h, t, s];
            self.trace.attention.push(AttnTrace {
                site,
                layer,
                scores: Tensor {
                    shape: shape.clone(),
                    data: cache.scores.clone(),
                },
                probs: Tensor {
                    shape,
                    data: cache.probs.clone(),
                },
            });
        }
        if self.keep {
            rec.attn = Some(cache);
            rec.attn_dropout = drop;
        }
        Ok(out)
    }

    /// The FFN sublayer's function over (B·T, C) rows.
    pub(crate) fn ffn(
        &mut self,
        inp: &[f32],
        layer: &LayerParams,
        rec: &mut SublayerRecord,
    ) -> Result<Vec<f32>> {
        let cfg = self.cfg();
        let (c, f, act) = (cfg.d_model, cfg.d_ff, cfg.activation);
        let n = inp.len() / c;
        let drop = self.dropout(n * f); // (N, F)
        let mut cache = FfnCache::default();
        let mut out = vec![0.0f32; n * c]; // (N, C)
        ffn_forward(
            &mut out,
            &mut cache,
            inp,
            &layer.linear1_weight.data,
            &layer.linear1_bias.data,
            &layer.linear2_weight.data,
            &layer.linear2_bias.data,
            act,
            drop.as_deref(),
            n,
            c,
            f,
        );
        if self.keep {
            rec.ffn = Some(cache);
            rec.ffn_dropout = drop;
        }
        Ok(out)
    }

    /// The LM head (B, T, V) or the classifier over row 0 of each sequence (B, N).
    pub(crate) fn head(&mut self, x: &[f32], b: usize, t: usize) {
        let m = self.model;
        let c = m.config.d_model;
        match &m.head {
            HeadParams::Lm { weight, bias } => {
                let v = m.config.vocab_size;
                let w = weight.as_ref().unwrap_or(&m.embed); // (V, C)
                let mut logits = vec![0.0f32; b * t * v]; // (B, T, V)
                linear_forward(
                    &mut logits,
                    x,
                    &w.data,
                    bias.as_ref().map(|t| t.data.as_slice()),
                    b * t,
                    c,
                    v,
                );
                self.trace.logits = Tensor {
                    shape: vec![b, t, v],
                    data: logits,
                };
            }
            HeadParams::Classifier { weight, bias } => {
                let n = m.config.num_classes;
                let first: Vec<f32> = x
                    .chunks_exact(t * c)
                    .flat_map(|seq| seq[..c].iter().copied())
                    .collect(); // (B, C)
                let mut logits = vec![0.0f32; b * n]; // (B, N)
                linear_forward(&mut logits, &first, &weight.data, Some(&bias.data), b, c, n);
                self.trace.class_logits = Some(Tensor {
                    shape: vec![b, n],
                    data: logits,
                });
            }
        }
    }
}

/// `x (B, T, C) = E[tok] · scale + PE[pos0 + t]` (sinusoidal or learned; the other schemes
/// act inside attention). Learned positions need `pos0 + T ≤ max_len` (checked by callers).
pub fn embed_tokens(x: &mut [f32], model: &Model, tokens: &[u32], pos0: usize, b: usize, t: usize) {
    let cfg = &model.config;
    let c = cfg.d_model;
    let scale = embedding_scale(cfg.scale_embeddings, c);
    embedding_forward(x, tokens, &model.embed.data, scale, b * t, c);
    match cfg.pos_encoding {
        PosEncoding::Sinusoidal => sinusoidal_forward(x, pos0, b, t, c),
        PosEncoding::Learned => {
            let table = model
                .pos_embed
                .as_ref()
                .expect("learned positions have a table");
            learned_positions_forward(x, &table.data, pos0, b, t, c);
        }
        _ => {}
    }
}

/// The attention spec of one sublayer: RoPE, ALiBi and relative terms apply to
/// self-attention only; `slopes` (H) and `ablate` (H) are borrowed from the caller.
#[allow(clippy::too_many_arguments)]
pub fn attn_spec<'a>(
    cfg: &ModelConfig,
    params: &'a AttentionParams,
    site: AttnSite,
    causal: bool,
    scale: bool,
    q_offset: usize,
    slopes: &'a [f32],
    ablate: &'a [bool],
) -> AttnSpec<'a> {
    let self_attn = site != AttnSite::Cross;
    let pos = cfg.pos_encoding;
    AttnSpec {
        n_heads: cfg.n_heads,
        d_head: cfg.d_head(),
        score: cfg.score,
        scale,
        causal,
        q_offset,
        rope: self_attn && pos == PosEncoding::Rope,
        alibi: (self_attn && pos == PosEncoding::Alibi).then_some(slopes),
        relative: match (&params.rel_k, &params.rel_v) {
            (Some(k), Some(v)) if self_attn && pos == PosEncoding::Relative => Some(Relative {
                rel_k: &k.data,
                rel_v: &v.data,
                max_distance: cfg.relative_max_distance,
            }),
            _ => None,
        },
        additive_v: params.additive_v.as_ref().map(|t| t.data.as_slice()),
        ablate,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ModelConfig;
    use crate::tokenizer::Tokenizer;

    fn model(preset: &str, edit: impl FnOnce(&mut ModelConfig)) -> Model {
        let tok = Tokenizer::char_level("abcdefgh");
        let mut cfg = ModelConfig::preset(preset, tok.vocab_size()).unwrap();
        edit(&mut cfg);
        cfg.validate().unwrap();
        Model::init(cfg, tok, 3)
    }

    fn input_error(r: Result<Trace>) -> String {
        match r {
            Err(Error::Input(m)) => m,
            other => panic!("expected an input error, got {other:?}"),
        }
    }

    #[test]
    fn padded_batch_right_pads_to_the_longest_row() {
        let b = Batch::padded(vec![vec![5, 6, 7], vec![8]], 0).unwrap();
        assert_eq!((b.batch, b.len), (2, 3));
        assert_eq!(b.tokens, vec![5, 6, 7, 8, 0, 0]);
        assert_eq!(b.row(1), &[8, 0, 0]);
    }

    #[test]
    fn ragged_empty_and_mismatched_batches_are_refused_by_name() {
        let e = Batch::new(vec![vec![5, 6], vec![7]])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("ragged") && e.contains("sequence 1 has 1 tokens"),
            "{e}"
        );
        let e = Batch::new(vec![]).unwrap_err().to_string();
        assert!(e.contains("no sequences"), "{e}");
        let e = Batch::new(vec![vec![], vec![]]).unwrap_err().to_string();
        assert!(e.contains("empty"), "{e}");
        let e = Batch::single(&[5])
            .unwrap()
            .with_source(vec![vec![5], vec![6]])
            .unwrap_err()
            .to_string();
        assert!(e.contains("1 target sequences but 2 source"), "{e}");
    }

    #[test]
    fn token_outside_the_vocabulary_is_named_with_its_position() {
        let m = model("gpt-pico", |_| {});
        let b = Batch::new(vec![vec![1, 4, 5], vec![1, 99, 4]]).unwrap();
        let e = input_error(m.forward(&b, &ForwardOptions::default()));
        assert!(
            e.contains("token id 99 at sequence 1, position 1") && e.contains("12 tokens"),
            "{e}"
        );
    }

    #[test]
    fn learned_positions_refuse_sequences_longer_than_max_len() {
        let m = model("gpt-pico", |c| c.pos_encoding = PosEncoding::Learned);
        let b = Batch::single(&[4; 70]).unwrap();
        let e = input_error(m.forward(&b, &ForwardOptions::default()));
        assert_eq!(e, "learned positions stop at max_len = 64; got 70 tokens");
        // Sinusoidal positions run past max_len.
        let m = model("gpt-pico", |_| {});
        assert!(m.forward(&b, &ForwardOptions::default()).is_ok());
    }

    #[test]
    fn source_must_be_given_exactly_to_encoder_decoder_models() {
        let s2s = model("seq2seq-nano", |_| {});
        let b = Batch::single(&[1, 4]).unwrap();
        let e = input_error(s2s.forward(&b, &ForwardOptions::default()));
        assert!(e.contains("needs source sequences"), "{e}");
        let with_src = b.clone().with_source(vec![vec![5, 6, 7]]).unwrap();
        assert!(s2s.forward(&with_src, &ForwardOptions::default()).is_ok());
        let gpt = model("gpt-pico", |_| {});
        let e = input_error(gpt.forward(&with_src, &ForwardOptions::default()));
        assert!(e.contains("decoder_only model takes no source"), "{e}");
    }

    #[test]
    fn ablating_a_missing_head_or_site_is_an_input_error() {
        let m = model("gpt-pico", |_| {});
        let b = Batch::single(&[1, 4]).unwrap();
        let opts = |site, layer, head| ForwardOptions {
            ablate: vec![HeadRef { site, layer, head }],
            ..ForwardOptions::default()
        };
        let e = input_error(m.forward(&b, &opts(AttnSite::DecoderSelf, 0, 2)));
        assert!(e.contains("head 2 does not exist (2 heads"), "{e}");
        let e = input_error(m.forward(&b, &opts(AttnSite::DecoderSelf, 1, 0)));
        assert!(e.contains("layer 1 does not exist (1 layers)"), "{e}");
        let e = input_error(m.forward(&b, &opts(AttnSite::Cross, 0, 0)));
        assert!(e.contains("no cross attention"), "{e}");
        assert!(m.forward(&b, &opts(AttnSite::DecoderSelf, 0, 1)).is_ok());
    }

    #[test]
    fn ablating_a_head_changes_the_logits() {
        let m = model("gpt-pico", |_| {});
        let b = Batch::single(&[1, 4, 5, 6]).unwrap();
        let plain = m.forward(&b, &ForwardOptions::default()).unwrap();
        let ablated = m
            .forward(
                &b,
                &ForwardOptions {
                    ablate: vec![HeadRef {
                        site: AttnSite::DecoderSelf,
                        layer: 0,
                        head: 1,
                    }],
                    ..ForwardOptions::default()
                },
            )
            .unwrap();
        assert!(plain.logits.max_abs_diff(&ablated.logits) > 1e-4);
    }

    #[test]
    fn trace_shapes_follow_the_architecture() {
        let m = model("seq2seq-nano", |_| {});
        let b = Batch::padded(vec![vec![1, 4, 5], vec![1, 6]], 0)
            .unwrap()
            .with_padded_source(vec![vec![7, 8, 9, 10], vec![11]], 0)
            .unwrap();
        let opts = ForwardOptions {
            trace_attention: true,
            trace_hidden: true,
            ..ForwardOptions::default()
        };
        let tr = m.forward(&b, &opts).unwrap();
        assert_eq!(tr.logits.shape, vec![2, 3, 12]);
        let kinds: Vec<(AttnSite, usize, Vec<usize>)> = tr
            .attention
            .iter()
            .map(|a| (a.site, a.layer, a.probs.shape.clone()))
            .collect();
        use AttnSite::*;
        assert_eq!(
            kinds,
            vec![
                (EncoderSelf, 0, vec![2, 4, 4, 4]),
                (EncoderSelf, 1, vec![2, 4, 4, 4]),
                (DecoderSelf, 0, vec![2, 4, 3, 3]),
                (Cross, 0, vec![2, 4, 3, 4]),
                (DecoderSelf, 1, vec![2, 4, 3, 3]),
                (Cross, 1, vec![2, 4, 3, 4]),
            ]
        );
        assert_eq!(tr.hidden.len(), 2);
        assert_eq!(tr.hidden[0].states.len(), 3);
        assert_eq!(tr.hidden[0].states[0].shape, vec![2, 4, 32]);
        assert_eq!(tr.hidden[1].states[2].shape, vec![2, 3, 32]);
        // Cross-attention never looks at the padded source positions of sequence 1.
        let cross = &tr.attention[3].probs; // (B 2, H 4, T 3, S 4)
        let seq1_head0 = 4 * 3 * 4;
        for i in 0..3 {
            let row = &cross.data[seq1_head0 + i * 4..][..4];
            assert!(
                row[0] > 0.999 && row[1..].iter().all(|&p| p == 0.0),
                "{row:?}"
            );
        }
    }

    #[test]
    fn classifier_reads_position_zero_and_gives_no_token_logits() {
        let m = model("encoder-nano", |c| c.num_classes = 3);
        let b = Batch::padded(vec![vec![4, 5, 6], vec![7]], 0).unwrap();
        let tr = m.forward(&b, &ForwardOptions::default()).unwrap();
        assert_eq!(tr.logits.shape, vec![0]);
        assert_eq!(tr.class_logits.as_ref().unwrap().shape, vec![2, 3]);
    }

    #[test]
    fn batchnorm_train_mode_reports_running_statistics_and_they_can_be_applied() {
        let mut m = model("gpt-pico", |c| c.norm = Norm::BatchNorm);
        let b = Batch::padded(vec![vec![1, 4, 5], vec![1, 6]], 0).unwrap();
        let opts = ForwardOptions {
            mode: Mode::Train { seed: 1 },
            ..ForwardOptions::default()
        };
        let tr = m.forward(&b, &opts).unwrap();
        let names: Vec<&str> = tr.running_stats.iter().map(|u| u.name.as_str()).collect();
        assert_eq!(
            names,
            vec![
                "decoder.layers.0.norm1.running_mean",
                "decoder.layers.0.norm1.running_var",
                "decoder.layers.0.norm2.running_mean",
                "decoder.layers.0.norm2.running_var",
            ]
        );
        let before = m.forward(&b, &ForwardOptions::default()).unwrap();
        m.apply_running_stats(&tr.running_stats).unwrap();
        let stored = m.decoder.as_ref().unwrap().layers[0].norms[0]
            .running_mean
            .clone()
            .unwrap();
        assert_eq!(stored, tr.running_stats[0].value);
        let after = m.forward(&b, &ForwardOptions::default()).unwrap();
        assert!(before.logits.max_abs_diff(&after.logits) > 0.0);
        let bogus = RunningStatUpdate {
            name: "decoder.layers.9.norm1.running_mean".into(),
            value: Tensor::zeros(&[16]),
        };
        let e = m.apply_running_stats(&[bogus]).unwrap_err().to_string();
        assert!(
            e.contains("no running statistic `decoder.layers.9.norm1.running_mean`"),
            "{e}"
        );
    }

    #[test]
    fn batchnorm_train_mode_needs_two_positions() {
        let m = model("gpt-pico", |c| c.norm = Norm::BatchNorm);
        let opts = ForwardOptions {
            mode: Mode::Train { seed: 1 },
            ..ForwardOptions::default()
        };
        let e = input_error(m.forward(&Batch::single(&[1]).unwrap(), &opts));
        assert!(e.contains("at least two positions"), "{e}");
    }

    #[test]
    fn dropout_mask_keeps_about_one_minus_p_and_scales_survivors() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let m = dropout_mask(&mut rng, 0.25, 10_000);
        let kept = m.iter().filter(|&&x| x != 0.0).count();
        assert!((7_200..7_800).contains(&kept), "{kept}");
        assert!(m.iter().all(|&x| x == 0.0 || (x - 1.0 / 0.75).abs() < 1e-7));
    }

    #[test]
    fn recorded_forward_gives_the_same_trace_and_consistent_activations() {
        let m = model("seq2seq-nano", |_| {});
        let b = Batch::single(&[1, 4, 5])
            .unwrap()
            .with_source(vec![vec![6, 7]])
            .unwrap();
        let opts = ForwardOptions::default();
        let plain = m.forward(&b, &opts).unwrap();
        let (tr, acts) = m.forward_recorded(&b, &opts).unwrap();
        assert_eq!(plain, tr);
        let dec = acts.decoder.as_ref().unwrap();
        assert_eq!(dec.layers.len(), 2);
        let kinds: Vec<SublayerKind> = dec.layers[0].iter().map(|s| s.kind).collect();
        assert_eq!(
            kinds,
            vec![
                SublayerKind::SelfAttention,
                SublayerKind::CrossAttention,
                SublayerKind::Ffn
            ]
        );
        // Each sublayer's output is the next one's input; the last is the stack output.
        assert_eq!(dec.layers[0][0].output, dec.layers[0][1].input);
        assert_eq!(dec.layers[1][2].output, dec.output);
        assert_eq!(dec.output, acts.head_input);
        assert_eq!(
            dec.layers[0][1].kv_input.as_ref(),
            Some(&acts.encoder.as_ref().unwrap().output)
        );
    }
}
