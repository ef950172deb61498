//! One forward pass as the page asks for it: the switches as forward options, the rows
//! as one padded batch, the pass on the engine's backend (the CPU after a GPU failure),
//! and the trace as the page's `ForwardResult` with every derived number.

use std::borrow::Cow;

use crate::backend::{Backend, Placed};
use crate::config::Arch;
use crate::error::{Error, Result};
use crate::explain::blocks::{mode_of, with_dropout, TrainMode};
use crate::generate::clock::Stopwatch;
use crate::generate::flops::{decoder_macs, encoder_macs};
use crate::generate::sampling::{argmax, sampling_distribution, softmax};
use crate::limits::{self};
use crate::model::forward::{Activations, AttnSite, Batch};
use crate::model::inspect::{by_head, qk_gap, recorded_qkv, saturation, state_norms};
use crate::model::mask::{attention_mask, check_masks, SiteMask};
use crate::model::plan::{layer_plan, StackInput};
use crate::model::{ForwardOptions, Mode, Model, Trace};
use crate::protocol::{
    AttnView, BackendName, Dense, F32Array, FailedPass, FfnView, ForwardRequest, ForwardResult,
    HiddenView, MaskView, Switches,
};

use super::Engine;

impl Engine {
    /// One forward pass with every trace the page draws.
    pub async fn forward(&mut self, req: &ForwardRequest) -> Result<ForwardResult> {
        if req.batch.is_empty() {
            return Err(Error::Input("forward request: the batch is empty".into()));
        }
        let m = self.model()?.clone();
        let m = &*m;
        limits::check_forward_request(
            &m.config,
            &req.batch,
            req.src.as_deref(),
            req.switches.ablate.len(),
        )?;
        // Train mode: the same weights, dropout p as asked, on the CPU (the GPU's train-mode
        // pass gives the same numbers, crate/tests/gpu_forward.rs, but is not used here).
        let (owned, mut opts) = variant(m, &req.switches, req.train.as_ref())?;
        opts.trace_ffn = req.ffn.unwrap_or(false);
        let m = &*owned;
        let batch = batch_of(&req.batch, req.src.as_deref(), m)?;
        let qkv = req.qkv.unwrap_or(false);
        let train_note = req.train.as_ref().map(|t| train_note(m, t, &self.backend));
        let backend = if req.train.is_some() {
            Backend::Cpu
        } else {
            self.backend.clone()
        };
        let clock = Stopwatch::start(None);
        // On the CPU with the q·k inspector open, one recorded pass gives both the trace
        // and the q, k, v (`forward` is the same pass without the recording).
        if qkv && matches!(backend, Backend::Cpu) {
            let (trace, acts) = m.forward_recorded(&batch, &opts)?;
            let ms = clock.elapsed_ms();
            let mut r = forward_result(
                m,
                req,
                &batch,
                &trace,
                Some(&acts),
                ms,
                BackendName::Cpu,
                None,
            )?;
            r.train_note = train_note;
            return Ok(r);
        }
        // The engine's model stays resident on its backend; a train-mode variant runs on
        // the CPU.
        let placed = if req.train.is_some() {
            Ok(Placed::Cpu)
        } else {
            self.placed()
        };
        let run = match placed {
            Ok(p) => p.forward(m, &batch, &opts).await,
            Err(e) => Err(e),
        };
        let (trace, fallback) = match run {
            Ok(t) => (t, None),
            // A GPU failure (lost device, out of memory): the CPU takes over from here on.
            Err(Error::Gpu(why)) => (Backend::Cpu.forward(m, &batch, &opts).await?, Some(why)),
            Err(e) => return Err(e),
        };
        let ms = clock.elapsed_ms();
        let ran = if let Some(why) = &fallback {
            self.fell_back(FailedPass::Forward, why);
            BackendName::Cpu
        } else {
            BackendName::of(&backend)
        };
        // The q·k inspector reads q, k and v from the CPU reference's recorded pass (the
        // GPU keeps no per-head copies of them).
        let acts = if qkv {
            Some(m.forward_recorded(&batch, &opts)?.1)
        } else {
            None
        };
        let mut r = forward_result(m, req, &batch, &trace, acts.as_ref(), ms, ran, fallback)?;
        r.train_note = train_note;
        Ok(r)
    }
}

/// The page's switches as forward options, every ablated head checked against the model.
pub fn forward_options(sw: &Switches, m: &Model) -> Result<ForwardOptions> {
    let cfg = &m.config;
    for h in &sw.ablate {
        let layers = match h.site {
            AttnSite::EncoderSelf => cfg.encoder_layers(),
            AttnSite::DecoderSelf => cfg.decoder_layers(),
            AttnSite::Cross if cfg.arch == Arch::EncoderDecoder => cfg.decoder_layers(),
            AttnSite::Cross => 0,
        };
        if h.layer >= layers || h.head >= cfg.n_heads {
            return Err(Error::Input(format!(
                "ablation: this model has no {} layer {} head {}",
                h.site.name(),
                h.layer,
                h.head
            )));
        }
    }
    // The mask editor acts on the main stack's self-attention, as the causal switch does.
    let main = super::main_site(cfg);
    let masks = match &sw.mask {
        Some(edit) => vec![SiteMask {
            site: main,
            rule: edit.rule,
            cells: edit.cells.clone(),
        }],
        None => vec![],
    };
    check_masks(cfg, &masks)?;
    Ok(ForwardOptions {
        causal: sw.causal,
        masks,
        padding_mask: sw.padding_mask,
        scale: sw.scale,
        ablate: sw.ablate.clone(),
        mode: Mode::Eval,
        trace_attention: true,
        trace_hidden: true,
        trace_ffn: false,
    })
}

/// What a train-mode pass tells the page: p, and that it ran on the CPU.
fn train_note(m: &Model, t: &crate::explain::blocks::TrainMode, backend: &Backend) -> String {
    let p = m.config.dropout;
    let bn = m.config.norm == crate::config::Norm::BatchNorm;
    let what = match (p > 0.0, bn) {
        (true, true) => format!(
            "dropout p = {p} drawn from seed {}, BatchNorm with the batch's own statistics",
            t.seed
        ),
        (true, false) => format!("dropout p = {p} drawn from seed {}", t.seed),
        (false, true) => "BatchNorm with the batch's own statistics (dropout p = 0)".to_string(),
        (false, false) => {
            "dropout p = 0 and no BatchNorm: train mode computes exactly what eval mode does"
                .to_string()
        }
    };
    match backend {
        Backend::Gpu(_) => format!(
            "train mode ({what}) ran on the CPU: the page's train-mode passes use the CPU \
             reference, also when WebGPU is chosen"
        ),
        Backend::Cpu => format!("train mode: {what}"),
    }
}

/// The model a request runs (with its train-mode dropout p) and its forward options.
pub(super) fn variant<'m>(
    m: &'m Model,
    sw: &Switches,
    train: Option<&TrainMode>,
) -> Result<(Cow<'m, Model>, ForwardOptions)> {
    let owned = with_dropout(m, train.and_then(|t| t.dropout))?;
    let mut opts = forward_options(sw, &owned)?;
    opts.mode = mode_of(train);
    Ok((owned, opts))
}

/// One sequence (and its source) within the size limits and the vocabulary.
pub(super) fn check_one(
    m: &Model,
    tokens: &[u32],
    src: Option<&Vec<u32>>,
    ablate: usize,
) -> Result<()> {
    let tokens = [tokens.to_vec()];
    let src = src.map(|x| vec![x.clone()]);
    limits::check_forward_request(&m.config, &tokens, src.as_deref(), ablate)?;
    batch_of(&tokens, src.as_deref(), m).map(|_| ())
}

/// The rows padded into one batch (with the source for an encoder-decoder).
pub(super) fn batch_of(rows: &[Vec<u32>], src: Option<&[Vec<u32>]>, m: &Model) -> Result<Batch> {
    let pad = m.tokenizer.spec.pad;
    let batch = Batch::padded(rows.to_vec(), pad)?;
    let batch = match (src, m.config.arch) {
        (Some(src), Arch::EncoderDecoder) => batch.with_padded_source(src.to_vec(), pad)?,
        (None, Arch::EncoderDecoder) => {
            return Err(Error::Input(
                "an encoder-decoder model needs source sequences".into(),
            ))
        }
        (Some(_), _) => {
            return Err(Error::Input(
                "only an encoder-decoder model takes source sequences".into(),
            ))
        }
        (None, _) => batch,
    };
    m.check_batch(&batch)?;
    Ok(batch)
}

/// Multiply-adds of one forward pass over the whole batch (`generate::flops`).
pub fn forward_macs(m: &Model, batch: &Batch) -> u64 {
    let cfg = &m.config;
    let (t, src) = (batch.len, batch.src_len);
    let per_sequence = match cfg.arch {
        Arch::EncoderOnly => encoder_macs(cfg, t),
        Arch::DecoderOnly => decoder_macs(cfg, 0, t, 0, false, t),
        Arch::EncoderDecoder => encoder_macs(cfg, src) + decoder_macs(cfg, 0, t, src, true, t),
    };
    batch.batch as u64 * per_sequence
}

/// The mask of every attention site of `m` in a pass over `batch` with `opts`, and why
/// each cell is hidden (`MaskSpec::reasons`), as the masks view draws them.
pub fn mask_views(m: &Model, opts: &ForwardOptions, batch: &Batch) -> Vec<MaskView> {
    let pad = m.tokenizer.spec.pad;
    let mut views = vec![];
    for sp in &layer_plan(&m.config).stacks {
        let (keys, t) = match sp.input {
            StackInput::Source => match &batch.src_tokens {
                Some(src) => (src.as_slice(), batch.src_len),
                None => continue,
            },
            StackInput::Tokens => (batch.tokens.as_slice(), batch.len),
        };
        let mut sites = vec![(sp.site, keys, t)];
        if sp.reads_memory {
            if let Some(src) = &batch.src_tokens {
                sites.push((AttnSite::Cross, src.as_slice(), batch.src_len));
            }
        }
        for (site, keys, s) in sites {
            let mask = attention_mask(&m.config, site, opts);
            let mut reasons = Vec::with_capacity(batch.batch * t * s); // (B, T, S)
            for row in keys.chunks(s) {
                reasons.extend(mask.reasons(row, pad, 0, t).into_iter().map(f32::from));
            }
            views.push(MaskView {
                site,
                rule: mask.rule,
                cells: mask.cells.clone(),
                padding: mask.padding,
                reasons: Dense::new(&[batch.batch, t, s], &reasons),
            });
        }
    }
    views
}

/// The trace as the page's `ForwardResult`: every derived number (saturation, q·k
/// gap, norms, the next-token distributions, FLOPs) computed here.
#[allow(clippy::too_many_arguments)]
pub fn forward_result(
    m: &Model,
    req: &ForwardRequest,
    batch: &Batch,
    trace: &Trace,
    acts: Option<&Activations>,
    ms: f64,
    backend: BackendName,
    fallback: Option<String>,
) -> Result<ForwardResult> {
    let cfg = &m.config;
    let tokens = (0..batch.batch).map(|i| batch.row(i).to_vec()).collect();
    let src_tokens = match &batch.src_tokens {
        Some(s) => s.chunks(batch.src_len).map(<[u32]>::to_vec).collect(),
        None => vec![],
    };
    let mut attention = vec![];
    for a in &trace.attention {
        // Queries are target rows, except in an encoder-decoder's encoder.
        let real: Vec<usize> = match (a.site, &req.src) {
            (AttnSite::EncoderSelf, Some(src)) => src.iter().map(Vec::len).collect(),
            _ => req.batch.iter().map(Vec::len).collect(),
        };
        let (entropy, max_prob) = saturation(&a.probs, &real); // (B, H), (B, H)
        let (b, h, t, s) = (
            a.probs.shape[0],
            a.probs.shape[1],
            a.probs.shape[2],
            a.probs.shape[3],
        );
        let bh = [b, h];
        let mut view = AttnView {
            site: a.site,
            layer: a.layer,
            scores: Dense::new(&a.scores.shape, &a.scores.data), // (B, H, T, S)
            probs: Dense::new(&a.probs.shape, &a.probs.data),    // (B, H, T, S)
            entropy: Dense::new(&bh, &entropy),                  // (B, H)
            max_prob: Dense::new(&bh, &max_prob),                // (B, H)
            q: None,
            k: None,
            v: None,
            qk_gap: None,
        };
        if let Some(c) = acts.and_then(|acts| recorded_qkv(acts, a.site, a.layer)) {
            let d = cfg.d_head();
            let q = by_head(&c.q, b, t, h, d); // (B, H, T, D)
            let k = by_head(&c.k, b, s, h, d); // (B, H, S, D)
            let v = by_head(&c.v, b, s, h, d); // (B, H, S, D)
            if a.site != AttnSite::Cross {
                view.qk_gap = Some(Dense::new(&bh, &qk_gap(&q, &k, b, h, t, d)));
                // (B, H)
            }
            view.q = Some(Dense::new(&[b, h, t, d], &q));
            view.k = Some(Dense::new(&[b, h, s, d], &k));
            view.v = Some(Dense::new(&[b, h, s, d], &v));
        }
        attention.push(view);
    }
    let masks = mask_views(m, &forward_options(&req.switches, m)?, batch);
    let ffn = trace
        .ffn
        .iter()
        .map(|f| FfnView {
            stack: f.stack,
            layer: f.layer,
            hidden: Dense::new(&f.hidden.shape, &f.hidden.data), // (B, T, F)
        })
        .collect();
    let hidden = trace
        .hidden
        .iter()
        .map(|h| {
            let (shape, norms) = state_norms(&h.states); // (L+1, B, T)
            HiddenView {
                stack: h.stack,
                norms: Dense::new(&shape, &norms),
            }
        })
        .collect();

    let v = cfg.vocab_size;
    let last = req.batch[0].len().saturating_sub(1);
    let (logits, model_probs, next_probs, predicted, class_probs) = match &trace.class_logits {
        Some(cl) => {
            let nc = cl.shape[1];
            (
                Dense::new(&cl.shape, &cl.data), // (B, num_classes)
                F32Array::default(),
                F32Array::default(),
                vec![],
                Some(F32Array(softmax(&cl.data[..nc]))),
            )
        }
        None => {
            let t = batch.len;
            let row0 = &trace.logits.data[..t * v]; // (T, V)
            let at_last = &row0[last * v..(last + 1) * v]; // (V)
                                                           // (V): what sampling draws from, after temperature, top-k and top-p
            let drawn = sampling_distribution(at_last, &req.sampling.sampling())?;
            let predicted = row0 // (T)
                .chunks(v)
                .map(argmax)
                .collect::<Result<Vec<u32>>>()?;
            (
                Dense::new(&trace.logits.shape, &trace.logits.data), // (B, T, V)
                F32Array(softmax(at_last)),
                F32Array(drawn.into_iter().map(|p| p as f32).collect()),
                predicted,
                None,
            )
        }
    };
    Ok(ForwardResult {
        backend,
        ms,
        tokens,
        src_tokens,
        logits,
        attention,
        masks,
        hidden,
        ffn,
        model_probs,
        next_probs,
        predicted,
        class_probs,
        flops: 2.0 * forward_macs(m, batch) as f64,
        fallback,
        train_note: None,
    })
}
