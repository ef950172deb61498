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

//!
//! Beside this file: the switches ([`super::options`]), the input and its checks
//! ([`super::batch`]), the outputs ([`super::trace`]), what a backward pass reads
//! ([`super::record`]), the masks ([`super::mask`]) and dropout ([`super::dropout`]).
//! Below it: one sublayer of the walk, its norm, residual, attention and FFN (`sublayer.rs`).

mod sublayer;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::embedding::{embedding_forward, embedding_scale};
use super::ffn::linear_forward;
use super::options::attention_mask;
use super::plan::{layer_plan, NormKind, StackInput, StackPlan};
use super::position::{learned_positions_forward, sinusoidal_forward};
use super::{HeadParams, Model, StackParams};
use crate::config::{ModelConfig, PosEncoding};
use crate::error::{Error, Result};
use crate::tensor::Tensor;

pub use super::batch::Batch;
pub use super::dropout::dropout_mask;
pub use super::options::{ForwardOptions, Mode};
pub use super::plan::SublayerKind;
pub use super::record::{Activations, NormRecord, StackRecord, SublayerRecord};
pub use super::site::{AttnSite, HeadRef};
pub use super::trace::{AttnTrace, FfnTrace, HiddenTrace, RunningStatUpdate, Trace};
pub use sublayer::attn_spec;

/// Where the key/value rows of cross-attention come from.
struct Memory<'a> {
    /// (B, S, C) encoder output.
    x: &'a [f32],
    s: usize,
    /// (B, S) the source tokens (the keys of the cross-attention padding mask).
    tokens: &'a [u32],
}

/// Buffers a pass hands back when it is done with them, so the next one of the pass (or,
/// kept in the KV cache, of the next decoding step) reuses their memory instead of asking
/// the allocator: a decoding step's dozens of small vectors cost more than its products.
/// Taken and given back in a fixed order, each slot settles at the largest size it is
/// asked for, after which a step allocates nothing for them.
#[derive(Default)]
pub(crate) struct Pool(Vec<Vec<f32>>);

impl Pool {
    /// A zeroed buffer of `n` floats.
    pub(crate) fn take(&mut self, n: usize) -> Vec<f32> {
        let mut v = self.0.pop().unwrap_or_default();
        v.clear();
        v.resize(n, 0.0);
        v
    }

    /// Keep `v`'s memory for a later [`Pool::take`].
    pub(crate) fn give(&mut self, v: Vec<f32>) {
        if v.capacity() > 0 {
            self.0.push(v);
        }
    }
}

/// A norm's parameter name, `{stack}.layers.{layer}.{slot}`, written out only when a
/// BatchNorm in train mode names its running-statistic update.
pub(crate) struct NormName<'a>(pub &'a str, pub usize, pub &'a str);

impl std::fmt::Display for NormName<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.layers.{}.{}", self.0, self.1, self.2)
    }
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
    /// Scratch buffers (see [`Pool`]); only a pass that keeps nothing gives any back.
    pub(crate) pool: Pool,
}

impl Model {
    /// The forward pass of docs/model.md over a batch: logits (or class logits), and the
    /// attention maps and hidden states that `opts` asks for.
    /// Backward (of [`Model::forward_recorded`]): `train::backward::model::model_backward`.
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

    fn run_forward(
        &self,
        batch: &Batch,
        opts: &ForwardOptions,
        keep: bool,
    ) -> Result<(Trace, Option<Activations>)> {
        self.check_pass(batch, opts)?;
        let cfg = &self.config;
        let mut run = Run::new(self, opts, keep);
        let (b, t) = (batch.batch, batch.len);

        let plan = layer_plan(cfg);
        let mut encoder_rec: Option<StackRecord> = None;
        let mut decoder_rec: Option<StackRecord> = None;
        for sp in &plan.stacks {
            let (tokens, len) = match sp.input {
                StackInput::Tokens => (batch.tokens.as_slice(), t),
                StackInput::Source => (
                    batch.src_tokens.as_deref().expect("checked by check_batch"),
                    batch.src_len,
                ),
            };
            // Cross-attention reads the stack before (the encoder) and the source tokens.
            let memory = match (sp.reads_memory, &encoder_rec, &batch.src_tokens) {
                (true, Some(enc), Some(src)) => Some(Memory {
                    x: &enc.output,
                    s: batch.src_len,
                    tokens: src,
                }),
                _ => None,
            };
            let rec = run.stack(sp, self.stack_params(sp.site)?, tokens, b, len, memory)?;
            match sp.site {
                AttnSite::EncoderSelf => encoder_rec = Some(rec),
                _ => decoder_rec = Some(rec),
            }
        }
        let last = plan.stacks.last().map(|sp| sp.site);
        let x = match last {
            Some(AttnSite::EncoderSelf) => encoder_rec.as_ref(),
            _ => decoder_rec.as_ref(),
        }
        .map(|r| r.output.clone()) // (B, T, C)
        .ok_or_else(|| Error::Input("this model has no layer stack".into()))?;
        run.head(&x, b, t);
        let acts = keep.then_some(Activations {
            encoder: encoder_rec,
            decoder: decoder_rec,
            head_input: x,
        });
        Ok((run.trace, acts))
    }
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
                ffn: vec![],
                running_stats: vec![],
            },
            pool: Pool::default(),
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
    /// Backward: the end of `train::backward::model::stack_backward`.
    fn embed(
        &mut self,
        input: StackInput,
        tokens: &[u32],
        b: usize,
        t: usize,
    ) -> (Vec<f32>, Option<Vec<f32>>) {
        let m = self.model;
        let c = m.config.d_model;
        let mut x = vec![0.0f32; b * t * c]; // (B, T, C)
        embed_tokens(&mut x, m, input, tokens, 0, b, t);
        let mask = self.drop_in_place(&mut x);
        (x, mask)
    }

    /// One encoder or decoder stack over (B, T) tokens, its layers as the plan `sp` lists
    /// them. Backward: `train::backward::model::stack_backward`.
    fn stack(
        &mut self,
        sp: &StackPlan,
        stack: &StackParams,
        tokens: &[u32],
        b: usize,
        t: usize,
        memory: Option<Memory>,
    ) -> Result<StackRecord> {
        let site = sp.site;
        let prefix = sp.name.as_str();
        let pad_id = self.model.tokenizer.spec.pad;
        // The masks of this stack's self-attention and of its cross-attention.
        let mask = attention_mask(&self.model.config, site, self.opts);
        let key_pad = mask.key_padding(tokens, pad_id); // (B, T)
        let cross_mask = attention_mask(&self.model.config, AttnSite::Cross, self.opts);
        let mem_pad = memory
            .as_ref()
            .and_then(|m| cross_mask.key_padding(m.tokens, pad_id)); // (B, S)
        let (mut x, embed_dropout) = self.embed(sp.input, tokens, b, t); // (B, T, C)
        let mut rec = StackRecord {
            site,
            embed_dropout,
            embedded: if self.keep { x.clone() } else { vec![] },
            layers: vec![],
            final_norm: None,
            output: vec![],
            key_pad: key_pad.clone(),
            mask: mask.clone(),
        };
        let mut hidden = vec![];
        if self.opts.trace_hidden {
            hidden.push(Tensor {
                shape: vec![b, t, self.cfg().d_model],
                data: x.clone(),
            });
        }
        for (li, layer) in stack.layers.iter().enumerate() {
            let mut subs = vec![];
            for sub in &sp.sublayers {
                let name = sub
                    .norm
                    .as_ref()
                    .map(|n| NormName(prefix, li, n.name.as_str()));
                let norm = sub
                    .norm
                    .as_ref()
                    .zip(name.as_ref())
                    .map(|(n, name)| (&layer.norms[n.slot], name as &dyn std::fmt::Display));
                subs.push(
                    self.sublayer(&mut x, sub, norm, &mut |run, inp, r| match sub.kind {
                        SublayerKind::SelfAttention => run.attention(
                            inp,
                            inp,
                            &layer.self_attn,
                            site,
                            li,
                            key_pad.as_deref(),
                            &mask,
                            b,
                            t,
                            t,
                            r,
                        ),
                        SublayerKind::CrossAttention => {
                            let (cross, mem) = match (&layer.cross_attn, &memory) {
                                (Some(c), Some(m)) => (c, m),
                                _ => {
                                    return Err(Error::Input(
                                        "cross-attention needs an encoder output and its \
                                         parameters"
                                            .into(),
                                    ))
                                }
                            };
                            if run.keep {
                                r.kv_input = Some(mem.x.to_vec());
                            }
                            run.attention(
                                inp,
                                mem.x,
                                cross,
                                AttnSite::Cross,
                                li,
                                mem_pad.as_deref(),
                                &cross_mask,
                                b,
                                t,
                                mem.s,
                                r,
                            )
                        }
                        SublayerKind::Ffn => run.ffn(inp, layer, (site, li, t), r),
                    })?,
                );
            }
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
        if let Some(fnorm) = stack.final_norm.as_ref().filter(|_| sp.final_norm) {
            let mut out = vec![0.0f32; x.len()]; // (B, T, C)
            rec.final_norm = Some(self.norm(
                &mut out,
                &x,
                fnorm,
                &format_args!("{prefix}.norm"),
                NormKind::LayerNorm,
            ));
            x = out;
        }
        rec.output = x;
        Ok(rec)
    }

    /// The LM head (B, T, V) or the classifier over row 0 of each sequence (B, N).
    /// Backward: `train::backward::head::lm_head_backward` / `classifier_backward`.
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
/// act inside attention), E the table of the stack's `input` ([`Model::embedding`]).
/// Learned positions need `pos0 + T ≤ max_len` (checked by callers).
pub fn embed_tokens(
    x: &mut [f32],
    model: &Model,
    input: StackInput,
    tokens: &[u32],
    pos0: usize,
    b: usize,
    t: usize,
) {
    let _t = crate::profile::scope(crate::profile::Phase::Embed);
    let cfg = &model.config;
    let c = cfg.d_model;
    let scale = embedding_scale(cfg.scale_embeddings, c);
    embedding_forward(x, tokens, &model.embedding(input).data, scale, b * t, c);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Norm;
    use crate::model::test_support::{input_error, model};

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
