//! The side studies on the loaded model (`crate::explain`): positions, RoPE, embedding
//! scale, extrapolation, order-blindness, cost, the schedule, parallel vs serial, scoring,
//! and the block probes.

use crate::config::PosEncoding;
use crate::error::{Error, Result};
use crate::explain::blocks::{
    block_diff, block_probe, dropout_demo, norm_coupling, BlockDiff, BlockProbe, CouplingRequest,
    DropoutDemo, DropoutRequest, NormCoupling,
};
use crate::explain::extrapolation::{extrapolation, Extrapolation, SEED as EXTRAPOLATION_SEED};
use crate::explain::order::permutation;
use crate::explain::parallel::{parallel_vs_serial, ParallelTiming};
use crate::explain::positions::{
    additive_table, alibi_matrices, embedding_map, embedding_scale_of, relative_tables,
    rope_demo_of_model, similarity, EmbeddingScale, RopeDemo,
};
use crate::explain::scoring::{compare_scoring, ScoringComparison};
use crate::explain::sqrt_dk::{score_scaling, ScoreScaling, WIDTHS as SQRT_DK_WIDTHS};
use crate::limits::{self};
use crate::model::cost::{cost_report, CostReport};
use crate::model::forward::{AttnSite, Batch};
use crate::model::plan::{layer_plan, LayerPlan};
use crate::model::ForwardOptions;
use crate::protocol::{
    BlockDiffRequest, BlockProbeRequest, CostRequest, Dense, EmbeddingScaleRequest, F32Array,
    NoamRequest, ParallelRequest, PermutationResult, Positions, PositionsRequest, RelativeTable,
    RopeDemoRequest, ScoreScalingRequest, ScoringRequest, TokenizeTrace, Tokenized,
};
use crate::train::schedule::{noam_curve, Schedule};

use super::forward::{batch_of, check_one, variant};
use super::Engine;

impl Engine {
    /// The loaded model's layer plan (`model::plan::layer_plan`): the stacks, sublayers,
    /// norm placements and head the architecture diagram draws.
    pub fn layer_plan(&self) -> Result<LayerPlan> {
        Ok(layer_plan(&self.model()?.config))
    }

    /// Why √d_k: Var(q·k) and the softmax's spread against d_k = 1 … 512, sampled with a
    /// seed (`explain::sqrt_dk`). Needs no model.
    pub fn score_scaling(&self, req: &ScoreScalingRequest) -> Result<ScoreScaling> {
        score_scaling(&SQRT_DK_WIDTHS, req.samples, req.keys, req.rows, req.seed)
    }

    /// The loaded model's position encoding for positions 0..t: the additive table and
    /// its similarity matrix, ALiBi's slopes and biases, Shaw's tables, and the embedding
    /// map (`explain::positions`).
    pub fn positions(&self, req: &PositionsRequest) -> Result<Positions> {
        let m = self.model()?;
        let cfg = &m.config;
        let t = req.t;
        if t == 0 || t > cfg.max_len {
            return Err(Error::Input(format!(
                "positions: t must be from 1 to {}, got {t}",
                cfg.max_len
            )));
        }
        let (c, h) = (cfg.d_model, cfg.n_heads);
        let (table, similarity) = match additive_table(m, t)? {
            // (T, C) and (T, T)
            Some(pe) => (
                Some(Dense::new(&[t, c], &pe)),
                Some(Dense::new(&[t, t], &similarity(&pe, t, c))),
            ),
            None => (None, None),
        };
        let (slopes, alibi) = if cfg.pos_encoding == PosEncoding::Alibi {
            let (slopes, bias) = alibi_matrices(h, t);
            // (H) and (H, T, T)
            (Some(F32Array(slopes)), Some(Dense::new(&[h, t, t], &bias)))
        } else {
            (None, None)
        };
        let rows = 2 * cfg.relative_max_distance + 1;
        let relative = relative_tables(m)
            .into_iter()
            .map(|r| RelativeTable {
                stack: if r.stack == "encoder_self" {
                    AttnSite::EncoderSelf
                } else {
                    AttnSite::DecoderSelf
                },
                layer: r.layer,
                rel_k: Dense::new(&[rows, cfg.d_head()], &r.rel_k), // (2K+1, D)
                rel_v: Dense::new(&[rows, cfg.d_head()], &r.rel_v), // (2K+1, D)
            })
            .collect();
        Ok(Positions {
            scheme: cfg.pos_encoding,
            t,
            table,
            similarity,
            slopes,
            alibi,
            relative,
            max_distance: cfg.relative_max_distance,
            map: embedding_map(m, t)?,
        })
    }

    /// RoPE on the loaded model's own q (at `i`) and k (at `j`), head `head` of layer
    /// `layer`: pair `pair`'s path over the input's positions and the score before and
    /// after shifting both positions by `shift`.
    pub fn rope_demo(&self, req: &RopeDemoRequest) -> Result<RopeDemo> {
        let m = self.model()?;
        m.check_batch(&Batch::single(&req.tokens)?)?;
        rope_demo_of_model(
            m,
            &req.tokens,
            req.layer,
            req.head,
            req.i,
            req.j,
            req.pair,
            req.shift,
        )
    }

    /// ‖token embedding‖ (as stored and ×√d_model) and ‖position vector‖ per position.
    pub fn embedding_scale(&self, req: &EmbeddingScaleRequest) -> Result<EmbeddingScale> {
        if req.tokens.len() > limits::MAX_SEQUENCE_TOKENS {
            return Err(Error::Input(format!(
                "embedding scale: at most {} tokens, got {}",
                limits::MAX_SEQUENCE_TOKENS,
                req.tokens.len()
            )));
        }
        embedding_scale_of(self.model()?, &req.tokens)
    }

    /// Train short, test long: load the grammar checkpoint in `bytes` (the loaded model
    /// stays) and score it on held-out text up to 4× its trained length.
    pub fn extrapolation(&self, bytes: &[u8], sequences: usize) -> Result<Extrapolation> {
        let m = crate::checkpoint::load(bytes)?;
        extrapolation(&m, sequences, EXTRAPOLATION_SEED)
    }

    /// Order-blindness: the checkpoint in `bytes` (the loaded model stays) run on `text`
    /// and on `text` reordered by `perm`, with or without the causal mask.
    pub fn permutation(
        &self,
        bytes: &[u8],
        text: &str,
        perm: &[u32],
        causal: bool,
    ) -> Result<PermutationResult> {
        limits::check_text(text)?;
        let m = crate::checkpoint::load(bytes)?;
        let perm: Vec<usize> = perm.iter().map(|&p| p as usize).collect();
        let ids = m.tokenizer.encode(text).ids;
        m.check_batch(&Batch::single(&ids)?)?;
        let r = permutation(&m, &ids, &perm, causal)?;
        let names = |ids: &[u32]| -> Vec<String> {
            ids.iter()
                .map(|&id| m.tokenizer.token(id).unwrap_or("<?>").to_string())
                .collect()
        };
        let (t, v) = (ids.len(), m.config.vocab_size);
        Ok(PermutationResult {
            tokens: names(&r.tokens),
            permuted: names(&r.permuted),
            perm: r.perm,
            causal: r.causal,
            pos_encoding: m.config.pos_encoding,
            logits: Dense::new(&[t, v], &r.logits), // (T, V)
            permuted_logits: Dense::new(&[t, v], &r.permuted_logits), // (T, V)
            row_diff: F32Array(r.row_diff),         // (T)
            row_identical: r.row_identical,
        })
    }

    /// Text to ids with the loaded model's tokenizer, and where `<unk>` had to be used.
    pub fn tokenize(&self, text: &str) -> Result<Tokenized> {
        let m = self.model()?;
        limits::check_text(text)?;
        let enc = m.tokenizer.encode(text);
        let tokens = enc
            .ids
            .iter()
            .map(|&id| m.tokenizer.token(id).unwrap_or("<?>").to_string())
            .collect();
        Ok(Tokenized {
            ids: enc.ids,
            tokens,
            unknown: enc.unknown,
        })
    }

    /// How the loaded model's tokenizer reads `text`, step by step (the tokenizer view).
    pub fn tokenize_trace(&self, text: &str) -> Result<TokenizeTrace> {
        self.model()?.tokenizer.trace(text)
    }

    /// Parameters and FLOPs per token of every component of the loaded model rebuilt
    /// with `n_heads` heads, each query attending to `context` keys.
    pub fn cost(&self, req: &CostRequest) -> Result<CostReport> {
        cost_report(self.model()?, req.n_heads, req.context)
    }

    /// The Noam learning rate (factor 1) for the loaded model's d_model.
    pub fn noam(&self, req: &NoamRequest) -> Result<Schedule> {
        let c = self.model()?.config.d_model;
        let NoamRequest {
            warmup,
            last_step,
            points,
            cooldown,
        } = *req;
        let cooldown = cooldown.unwrap_or(0.0);
        if warmup == 0
            || !(2..=1_000_000).contains(&last_step)
            || !(2..=2000).contains(&points)
            || !(0.0..=1.0).contains(&cooldown)
        {
            return Err(Error::Input(format!(
                "schedule: warmup must be positive, the last step from 2 to 1000000, the \
                 points from 2 to 2000 and the cooldown share from 0 to 1; got warmup \
                 {warmup}, last step {last_step}, {points} points, cooldown {cooldown}"
            )));
        }
        Ok(noam_curve(
            c,
            warmup as u64,
            last_step as u64,
            points as u64,
            cooldown,
        ))
    }

    /// Training is parallel, inference serial: `req.prompt` extended greedily to
    /// `req.length` tokens, run as teacher-forced passes and token by token with and
    /// without the KV cache on the running backend, timed and counted
    /// (`explain::parallel`).
    pub async fn parallel(&self, req: &ParallelRequest) -> Result<ParallelTiming> {
        let m = self.model()?;
        parallel_vs_serial(
            m,
            &self.backend,
            &req.prompt,
            req.length,
            req.repeats,
            &ForwardOptions::default(),
            None,
        )
        .await
    }

    /// Dot, scaled-dot and additive scoring on the loaded model's shape: operation counts
    /// and the measured time of one pass over `req.tokens` tokens (`explain::scoring`).
    pub async fn scoring(&self, req: &ScoringRequest) -> Result<ScoringComparison> {
        compare_scoring(self.model()?, &self.backend, req.tokens, req.repeats, None).await
    }

    /// Every block's live tensors for a batch (`explain::blocks::block_probe`), on the CPU.
    pub fn block_probe(&self, req: &BlockProbeRequest) -> Result<BlockProbe> {
        let m = self.model()?;
        limits::check_forward_request(
            &m.config,
            &req.batch,
            req.src.as_deref(),
            req.switches.ablate.len(),
        )?;
        let (owned, opts) = variant(m, &req.switches, req.train.as_ref())?;
        let m = &*owned;
        let batch = batch_of(&req.batch, req.src.as_deref(), m)?;
        block_probe(m, &batch, &opts)
    }

    /// Two inputs compared row by row, bit-exactly (`explain::blocks::block_diff`).
    pub fn block_diff(&self, req: &BlockDiffRequest) -> Result<BlockDiff> {
        let m = self.model()?;
        for s in [&req.before, &req.after] {
            check_one(m, &s.tokens, s.src.as_ref(), req.switches.ablate.len())?;
        }
        let (owned, opts) = variant(m, &req.switches, req.train.as_ref())?;
        let m = &*owned;
        block_diff(m, &req.before, &req.after, &opts)
    }

    /// LayerNorm vs BatchNorm on a batch (`explain::blocks::norm_coupling`): the loaded
    /// model beside the trained checkpoint in `sibling` (named `name`; it needs the other
    /// kind of norm), or beside an untrained model of the other kind when none is given.
    pub fn norm_coupling(
        &self,
        req: &CouplingRequest,
        sibling: Option<(&[u8], &str)>,
    ) -> Result<NormCoupling> {
        let m = self.model()?;
        match sibling {
            Some((bytes, name)) => {
                let sib = crate::checkpoint::load(bytes)?;
                norm_coupling(m, req, Some((&sib, name)))
            }
            None => norm_coupling(m, req, None),
        }
    }

    /// Dropout's masks in train mode and the identity in eval mode
    /// (`explain::blocks::dropout_demo`).
    pub fn dropout_demo(&self, req: &DropoutRequest) -> Result<DropoutDemo> {
        let m = self.model()?;
        check_one(m, &req.input.tokens, req.input.src.as_ref(), 0)?;
        dropout_demo(m, req)
    }
}
