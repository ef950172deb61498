//! Dot-product against additive scoring: what each costs on the loaded model's shape.
//!
//! The loaded model's config is rebuilt with each score function (`dot`, `scaled_dot`,
//! `additive`) and seeded weights — what a pass costs does not depend on the weights — and
//! one forward pass over T tokens is counted (`generate::flops`) and timed on the running
//! backend (the median of `repeats`, after one untimed pass that warms caches and, on the
//! GPU, uploads the weights). Additive scoring, `v·tanh(q + k)` per head, has as many
//! multiply-adds per (query, key) pair as a dot product, plus one addition and one tanh
//! per dimension: the time shows what the multiply-add count hides.

use serde::Serialize;

use crate::backend::Backend;
use crate::config::{Arch, Score};
use crate::error::{Error, Result};
use crate::generate::clock::{ClockFn, Stopwatch};
use crate::generate::flops::{decoder_macs, decoder_score_ops, encoder_macs, encoder_score_ops};
use crate::model::forward::Batch;
use crate::model::{ForwardOptions, Model};

/// Longest input timed.
pub const MAX_TOKENS: usize = 256;
/// Most repeats.
pub const MAX_REPEATS: usize = 15;

/// One score function's cost for one forward pass.
#[derive(Clone, Debug, PartialEq, Serialize, ts_rs::TS)]
pub struct ScoreCost {
    pub score: Score,
    /// Multiply-adds of the whole pass.
    pub multiply_adds: u64,
    /// Multiply-adds of the scores alone (C per (query, key) pair per layer).
    pub score_multiply_adds: u64,
    /// Additions q[d] + k[d] (additive scoring; 0 for dot products).
    pub additions: u64,
    /// tanh evaluations (additive scoring; 0 for dot products).
    pub tanh: u64,
    /// Median milliseconds of one pass.
    pub ms: f64,
    /// Every timed pass, in milliseconds.
    pub samples_ms: Vec<f64>,
}

/// The score functions side by side.
#[derive(Clone, Debug, PartialEq, Serialize, ts_rs::TS)]
pub struct ScoringComparison {
    /// Tokens per pass (and source tokens, for an encoder-decoder).
    pub tokens: usize,
    pub repeats: usize,
    /// (query, key) pairs scored per pass, every attention sublayer of every layer.
    pub pairs: u64,
    pub rows: Vec<ScoreCost>,
}

/// `dot`, `scaled_dot` and `additive` on the shape of `model`, `tokens` positions.
pub async fn compare_scoring(
    model: &Model,
    backend: &Backend,
    tokens: usize,
    repeats: usize,
    clock: Option<ClockFn>,
) -> Result<ScoringComparison> {
    let cfg = &model.config;
    let top = cfg.max_len.min(MAX_TOKENS);
    if !(1..=top).contains(&tokens) {
        return Err(Error::Input(format!(
            "scoring: the length must be from 1 to {top}, got {tokens}"
        )));
    }
    if !(1..=MAX_REPEATS).contains(&repeats) {
        return Err(Error::Input(format!(
            "scoring: repeats must be from 1 to {MAX_REPEATS}, got {repeats}"
        )));
    }
    // Ordinary tokens (ids past the four specials), cycling through the vocabulary.
    let v = cfg.vocab_size as u32;
    let ids: Vec<u32> = (0..tokens as u32).map(|i| 4 + i % (v - 4).max(1)).collect();
    let mut batch = Batch::single(&ids)?; // (1, T)
    if cfg.arch == Arch::EncoderDecoder {
        batch = batch.with_source(vec![ids.clone()])?; // (1, S = T)
    }
    let opts = ForwardOptions {
        trace_attention: false,
        trace_hidden: false,
        ..ForwardOptions::default()
    };
    let mut rows = vec![];
    let mut pairs = 0;
    for score in [Score::Dot, Score::ScaledDot, Score::Additive] {
        let mut c = cfg.clone();
        c.score = score;
        let m = Model::init(c, model.tokenizer.clone(), 0);
        let cfg = &m.config;
        let t = tokens;
        let (macs, ops) = match cfg.arch {
            Arch::EncoderOnly => (encoder_macs(cfg, t), encoder_score_ops(cfg, t)),
            Arch::DecoderOnly => (
                decoder_macs(cfg, 0, t, 0, false, t),
                decoder_score_ops(cfg, 0, t, 0),
            ),
            Arch::EncoderDecoder => {
                let (e, d) = (encoder_score_ops(cfg, t), decoder_score_ops(cfg, 0, t, t));
                (
                    encoder_macs(cfg, t) + decoder_macs(cfg, 0, t, t, true, t),
                    crate::generate::flops::ScoreOps {
                        additions: e.additions + d.additions,
                        tanh: e.tanh + d.tanh,
                    },
                )
            }
        };
        let tt = t as u64;
        pairs = match cfg.arch {
            Arch::EncoderOnly => cfg.encoder_layers() as u64 * tt * tt,
            Arch::DecoderOnly => cfg.decoder_layers() as u64 * tt * (tt + 1) / 2,
            Arch::EncoderDecoder => {
                cfg.encoder_layers() as u64 * tt * tt
                    + cfg.decoder_layers() as u64 * (tt * (tt + 1) / 2 + tt * tt)
            }
        };
        // Placed once: every timed pass measures the pass alone.
        let placed = backend.place(&m)?;
        placed.forward(&m, &batch, &opts).await?; // warm-up, untimed
        let mut samples_ms = vec![];
        for _ in 0..repeats {
            let sw = Stopwatch::start(clock);
            placed.forward(&m, &batch, &opts).await?;
            samples_ms.push(sw.elapsed_ms());
        }
        let mut sorted = samples_ms.clone();
        crate::sorting::sort_by(&mut sorted, f64::total_cmp);
        let ms = sorted[sorted.len() / 2];
        rows.push(ScoreCost {
            score,
            multiply_adds: macs,
            score_multiply_adds: pairs * cfg.d_model as u64,
            additions: ops.additions,
            tanh: ops.tanh,
            ms,
            samples_ms,
        });
    }
    Ok(ScoringComparison {
        tokens,
        repeats,
        pairs,
        rows,
    })
}
