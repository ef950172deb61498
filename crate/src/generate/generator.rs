//! The streaming generation API: one [`Generator::step`] at a time, each returning a
//! [`Step`] record the page draws (and the CLI prints).
//!
//! A step runs the model once and chooses once:
//!
//! ```text
//! with the cache:    step 0   prefill(prompt)             → logits of the last prompt position
//!                    step n   decode_step(token of n − 1) → logits of the new position
//! without the cache: step n   forward(prompt + n tokens)  → logits of the last position
//! then:              greedy / sample / beam-advance on those logits
//! ```
//!
//! The uncached path recomputes the whole prefix every step; its logits equal the
//! cached ones (crate/tests/generate_cache.rs), only its cost differs.
//!
//! The cache lives where the backend computes: on the CPU a `KvCache`, on the GPU a
//! `GpuKvCache` whose keys and values stay on the device (each decoding step uploads the
//! new tokens only, and submits and reads back once).
//!
//! Beam search keeps its hypotheses as the sequences of one batch: the cache holds one
//! row per live hypothesis, and after each step the rows are reordered to follow the
//! surviving hypotheses' parents (on the GPU, by a copy kernel at the start of the next
//! step).
//!
//! `step` is `async` because the GPU backend reads its results back asynchronously; on the
//! CPU the future is ready at once (natively, drive it with `pollster::block_on`).

use std::ops::Deref;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::backend::gpu::GpuKvCache;
use crate::backend::{Backend, Placed};
use crate::config::Arch;
use crate::error::{Error, Result};
use crate::generate::beam::{BeamSearch, Ending};
use crate::generate::clock::Stopwatch;
use crate::generate::flops::{decoder_macs, encoder_macs};
use crate::generate::sampling::{self, sampling_distribution, softmax_and_lse, SampleDraw};
use crate::generate::step::{BeamStep, Candidate, Step, StopReason, Strategy, Summary};
use crate::model::cache::KvCache;
use crate::model::forward::Batch;
use crate::model::mask::check_masks;
use crate::model::options::attention_mask;
use crate::model::{AttnSite, AttnTrace, ForwardOptions, Mode, Model};

/// Everything about a generation run except the model, the backend and the input.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GenerateOptions {
    pub strategy: Strategy,
    /// Seeds the ChaCha8 generator sampling draws from: same seed, same tokens.
    pub seed: u64,
    /// Stop after this many new tokens (fewer when the model's `max_len` comes first).
    pub max_new_tokens: usize,
    /// Keep keys and values between steps; off, every step recomputes the whole prefix.
    pub use_cache: bool,
    /// How many of the most probable next tokens each step reports.
    pub top_candidates: usize,
    /// Report each step's attention. Off, `Step::attention` stays empty and the uncached
    /// path no longer records its (H, T, T) maps per layer: what a speed measurement wants.
    pub trace_attention: bool,
    /// Run-time switches (scaling, padding mask, head ablation). Generation runs in eval
    /// mode under the causal mask; its trace switches are set by the generator itself.
    pub forward: ForwardOptions,
}

impl Default for GenerateOptions {
    fn default() -> Self {
        GenerateOptions {
            strategy: Strategy::Greedy,
            seed: 0,
            max_new_tokens: 32,
            use_cache: true,
            top_candidates: 5,
            trace_attention: true,
            forward: ForwardOptions::default(),
        }
    }
}

/// The KV cache of a generation, on the backend that computes it.
enum Cache {
    Cpu(KvCache),
    /// Boxed: its buffer handles make it several times the size of the CPU variant.
    Gpu(Box<GpuKvCache>),
}

/// What the model said about each sequence fed in one step.
struct Outputs {
    /// Per sequence, (V) logits for the next token.
    logits: Vec<Vec<f32>>,
    /// (L, H, S) self-attention of sequence 0's last fed token.
    attention: Vec<Vec<Vec<f32>>>,
    /// (L, H, S_src) its cross-attention (encoder-decoder only).
    cross_attention: Vec<Vec<Vec<f32>>>,
    /// Tokens fed per sequence.
    fed: usize,
    /// Length of each sequence after the step (what a cache holds).
    cache_len: usize,
    multiply_adds: u64,
}

/// A generation in progress. `M` is anything that derefs to the model: `&Model`,
/// `Rc<Model>`, `Arc<Model>`.
pub struct Generator<M: Deref<Target = Model>> {
    model: M,
    backend: Backend,
    /// The model on `backend`: given ([`Generator::on`]), or placed by the first pass
    /// that needs it.
    placed: Option<Placed>,
    opts: GenerateOptions,
    prompt: Vec<u32>,
    src: Option<Vec<u32>>,
    rng: ChaCha8Rng,
    /// Tokens this run may generate: `max_new_tokens`, or fewer when `max_len` is closer.
    budget: usize,
    /// Sampling / greedy: the tokens chosen so far.
    generated: Vec<u32>,
    /// Sampling / greedy: the model's log-probability of `generated`.
    log_prob: f64,
    /// Beam search state (beam strategy only).
    beam: Option<BeamSearch>,
    /// Why this run recomputes every step though the cache was asked for (the mask).
    recompute: Option<String>,
    /// One row per live sequence (one, or one per live hypothesis); `None` before the first
    /// cached step or without the cache.
    cache: Option<Cache>,
    steps: usize,
    stop: Option<StopReason>,
    total_ms: f64,
    total_macs: u64,
}

impl<M: Deref<Target = Model>> Generator<M> {
    /// Start a generation of `model` on `backend` after `prompt` (decoder token ids; give
    /// `<bos>` first if the model was trained that way) and, for an encoder-decoder
    /// model, the source `src`.
    pub fn new(
        model: M,
        backend: Backend,
        prompt: Vec<u32>,
        src: Option<Vec<u32>>,
        opts: GenerateOptions,
    ) -> Result<Self> {
        let cfg = &model.config;
        if cfg.arch == Arch::EncoderOnly {
            return Err(Error::Input(
                "an encoder_only model has no decoder: it cannot generate text".into(),
            ));
        }
        if cfg.is_classifier() {
            return Err(Error::Input(
                "a classifier has no token logits to generate from".into(),
            ));
        }
        opts.strategy.validate()?;
        if opts.max_new_tokens == 0 {
            return Err(Error::Input(
                "max_new_tokens must be at least 1, got 0".into(),
            ));
        }
        if prompt.is_empty() {
            return Err(Error::Input(
                "the prompt is empty: the decoder needs at least one token (usually <bos>)".into(),
            ));
        }
        check_ids(&prompt, cfg.vocab_size, "prompt")?;
        if prompt.len() >= cfg.max_len {
            return Err(Error::Input(format!(
                "the prompt has {} tokens but the model takes at most max_len = {} positions: \
                 no room is left to generate",
                prompt.len(),
                cfg.max_len
            )));
        }
        match (cfg.arch, &src) {
            (Arch::EncoderDecoder, None) => {
                return Err(Error::Input(
                    "an encoder_decoder model needs a source sequence to translate from".into(),
                ))
            }
            (Arch::EncoderDecoder, Some(s)) => {
                if s.is_empty() {
                    return Err(Error::Input(
                        "the source is empty: give at least one token".into(),
                    ));
                }
                check_ids(s, cfg.vocab_size, "source")?;
                if s.len() > cfg.max_len {
                    return Err(Error::Input(format!(
                        "the source has {} tokens but the model takes at most max_len = {}",
                        s.len(),
                        cfg.max_len
                    )));
                }
            }
            (_, Some(_)) => {
                return Err(Error::Input(
                    "a decoder_only model takes no source sequence".into(),
                ))
            }
            (_, None) => {}
        }
        if opts.forward.mode != Mode::Eval {
            return Err(Error::Input(
                "generation runs in eval mode: train mode would draw new dropout masks at every \
                 step"
                    .into(),
            ));
        }
        let explicit = opts
            .forward
            .masks
            .iter()
            .any(|m| m.site == AttnSite::DecoderSelf);
        if opts.forward.causal == Some(false) && !explicit {
            return Err(Error::Input(
                "generation needs the causal mask: a token cannot attend to tokens that do not \
                 exist yet"
                    .into(),
            ));
        }
        check_masks(cfg, &opts.forward.masks)?;
        // A mask the KV cache cannot hold (bidirectional, a prefix past the prompt, a
        // painted cell that shows a later token) is recomputed every step instead.
        let mut opts = opts;
        let mut recompute = None;
        if opts.use_cache {
            let mask = attention_mask(cfg, AttnSite::DecoderSelf, &opts.forward);
            if let Err(why) = mask.cacheable(prompt.len()) {
                opts.use_cache = false;
                recompute = Some(format!(
                    "recomputing every step without the KV cache: {why}"
                ));
            }
        }
        let budget = opts.max_new_tokens.min(cfg.max_len - prompt.len());
        let beam = match opts.strategy {
            Strategy::Beam {
                width,
                length_penalty,
            } => Some(BeamSearch::new(
                width,
                length_penalty,
                model.tokenizer.spec.eos,
                budget,
            )?),
            _ => None,
        };
        Ok(Generator {
            rng: ChaCha8Rng::seed_from_u64(opts.seed),
            model,
            backend,
            placed: None,
            prompt,
            src,
            budget,
            generated: vec![],
            log_prob: 0.0,
            beam,
            cache: None,
            steps: 0,
            stop: None,
            total_ms: 0.0,
            total_macs: 0,
            opts,
            recompute,
        })
    }

    pub fn model(&self) -> &Model {
        &self.model
    }

    pub fn options(&self) -> &GenerateOptions {
        &self.opts
    }

    /// Why this run recomputes the whole prefix every step though the cache was asked for:
    /// the decoder's mask cannot be cached (`MaskSpec::cacheable`). `None` otherwise.
    pub fn recompute_reason(&self) -> Option<&str> {
        self.recompute.as_deref()
    }

    pub fn prompt(&self) -> &[u32] {
        &self.prompt
    }

    /// Tokens generated so far (for beam search: the best hypothesis, finished or live).
    pub fn tokens(&self) -> Vec<u32> {
        match &self.beam {
            None => self.generated.clone(),
            Some(b) => b
                .best()
                .or_else(|| b.live().first())
                .map(|h| h.tokens.clone())
                .unwrap_or_default(),
        }
    }

    /// The beam search state (beam strategy only).
    pub fn beam(&self) -> Option<&BeamSearch> {
        self.beam.as_ref()
    }

    /// The CPU backend's KV cache as it stands (with the cache, after the first step).
    pub fn cache(&self) -> Option<&KvCache> {
        match &self.cache {
            Some(Cache::Cpu(c)) => Some(c),
            _ => None,
        }
    }

    /// The GPU backend's KV cache as it stands (with the cache, after the first step).
    pub fn gpu_cache(&self) -> Option<&GpuKvCache> {
        match &self.cache {
            Some(Cache::Gpu(c)) => Some(c),
            _ => None,
        }
    }

    pub fn is_done(&self) -> bool {
        self.stop.is_some()
    }

    /// Run the model once and choose once. `Ok(None)` once generation has stopped.
    pub async fn step(&mut self) -> Result<Option<Step>> {
        if self.stop.is_some() {
            return Ok(None);
        }
        let clock = Stopwatch::start(None);
        let mut out = if self.opts.use_cache {
            self.run_cached().await?
        } else {
            let seqs = self.sequences();
            self.run_full(&seqs).await?
        };
        if !self.opts.trace_attention {
            // A decode step reports its (small) attention regardless; drop it alike.
            out.attention.clear();
            out.cross_attention.clear();
        }
        let sampling_time = crate::profile::scope(crate::profile::Phase::Sampling);
        let (vocab_probs, lse) = softmax_and_lse(&out.logits[0]); // (V)
        let (token, drawn, draw, beam) = match self.beam.is_some() {
            false => {
                let (tok, drawn, draw) = self.choose(&out.logits[0], lse)?;
                (Some(tok), drawn, draw, None)
            }
            true => {
                let drawn: Vec<f64> = vocab_probs.iter().map(|&p| p as f64).collect();
                (None, drawn, None, Some(self.advance_beam(&out.logits)?))
            }
        };
        let candidates = self.candidates(&out.logits[0], &vocab_probs, &drawn);
        let logits = out.logits.into_iter().next().unwrap_or_default(); // (V)
        drop(sampling_time);
        let wall_ms = clock.elapsed_ms();
        self.total_ms += wall_ms;
        self.total_macs += out.multiply_adds;
        let index = self.steps;
        self.steps += 1;
        Ok(Some(Step {
            index,
            fed: out.fed,
            token,
            text: token.map(|t| self.piece(t)),
            logits,
            candidates,
            attention: out.attention,
            cross_attention: out.cross_attention,
            cache_len: out.cache_len,
            wall_ms,
            multiply_adds: out.multiply_adds,
            flops: 2 * out.multiply_adds,
            stop: self.stop,
            beam,
            draw,
        }))
    }

    /// [`Generator::new`] on a model already placed on its backend (its weights resident
    /// on the GPU): the generation uploads nothing.
    pub fn on(
        model: M,
        placed: Placed,
        prompt: Vec<u32>,
        src: Option<Vec<u32>>,
        opts: GenerateOptions,
    ) -> Result<Self> {
        let mut g = Generator::new(model, placed.backend(), prompt, src, opts)?;
        g.placed = Some(placed);
        Ok(g)
    }

    /// The model on this generation's backend, placed there the first time.
    fn placed(&mut self) -> Result<Placed> {
        match &self.placed {
            Some(p) => Ok(p.clone()),
            None => {
                let p = self.backend.place(&self.model)?;
                self.placed = Some(p.clone());
                Ok(p)
            }
        }
    }

    /// Carry this generation on on `backend` from where it stands — what the page does
    /// when the GPU fails mid-generation. A step that failed changed nothing, so the next
    /// [`Generator::step`] redoes it there. The KV cache is rebuilt on `backend` the way a
    /// cached run on it would have built it (the prompt prefilled, then each token fed in
    /// turn, one row per live hypothesis), and the random stream, the tokens so far and
    /// the beam carry on untouched: the tokens that follow are those of a run on `backend`
    /// from the start with the same seed.
    pub async fn resume_on(&mut self, backend: Backend) -> Result<()> {
        self.backend = backend;
        self.placed = None;
        self.cache = None;
        if !self.opts.use_cache || self.steps == 0 || self.stop.is_some() {
            return Ok(()); // the next step prefills (or recomputes) on `backend` anyway
        }
        // Every sequence as the cache must hold it: all but its newest token, which the
        // next step feeds.
        let seqs = self.sequences();
        let opts = ForwardOptions {
            trace_attention: false,
            ..self.pass_options()
        };
        let placed = self.placed()?;
        let model: &Model = &self.model;
        let p = self.prompt.len();
        let mut batch = Batch::single(&self.prompt)?; // (1, P)
        if let Some(src) = &self.src {
            batch = batch.with_source(vec![src.clone()])?; // (1, S)
        }
        let rows = vec![0; seqs.len()];
        let mut cache = match &placed {
            Placed::Cpu => {
                let (mut c, _) = model.prefill(&batch, &opts)?;
                select_sequences(&mut c, &rows);
                Cache::Cpu(c)
            }
            Placed::Gpu(gm) => {
                let (mut c, _) = gm
                    .prefill(model, &batch, &opts, Some(p + self.budget))
                    .await?;
                c.select(&rows)?;
                Cache::Gpu(Box::new(c))
            }
        };
        for t in p..seqs[0].len() - 1 {
            let fed: Vec<u32> = seqs.iter().map(|q| q[t]).collect(); // (B)
            match &mut cache {
                Cache::Cpu(c) => {
                    model.decode_step(c, &fed, &opts)?;
                }
                Cache::Gpu(c) => {
                    c.decode_step(model, &fed, &opts).await?;
                }
            }
        }
        self.cache = Some(cache);
        Ok(())
    }

    /// Step until generation stops; the steps are dropped, the summary kept.
    pub async fn run_to_end(&mut self) -> Result<Summary> {
        while self.step().await?.is_some() {}
        Ok(self.summary())
    }

    /// Where generation stands (final once `is_done`).
    pub fn summary(&self) -> Summary {
        let tokens = self.tokens();
        let (log_prob, score) = match &self.beam {
            None => (self.log_prob, self.log_prob),
            Some(b) => b
                .best()
                .or_else(|| b.live().first())
                .map_or((0.0, 0.0), |h| (h.log_prob, h.score)),
        };
        let eos = self.model.tokenizer.spec.eos;
        let shown = match tokens.last() {
            Some(&t) if t == eos => &tokens[..tokens.len() - 1],
            _ => &tokens[..],
        };
        Summary {
            prompt: self.prompt.clone(),
            text: self.model.tokenizer.decode(shown),
            tokens,
            steps: self.steps,
            stop: self.stop,
            use_cache: self.opts.use_cache,
            total_ms: self.total_ms,
            total_multiply_adds: self.total_macs,
            total_flops: 2 * self.total_macs,
            log_prob,
            score,
        }
    }

    // ------------------------------------------------------------------------------------

    /// The decoder sequences to run this step: prompt + generated tokens, one per live
    /// hypothesis for beam search.
    fn sequences(&self) -> Vec<Vec<u32>> {
        let with = |tail: &[u32]| [&self.prompt[..], tail].concat();
        match &self.beam {
            None => vec![with(&self.generated)],
            Some(b) => b.live().iter().map(|h| with(&h.tokens)).collect(),
        }
    }

    /// The options of every pass: the caller's switches, attention traced if asked for.
    fn pass_options(&self) -> ForwardOptions {
        ForwardOptions {
            trace_attention: self.opts.trace_attention,
            trace_hidden: false,
            ..self.opts.forward.clone()
        }
    }

    fn src_len(&self) -> usize {
        self.src.as_ref().map_or(0, Vec::len)
    }

    /// With the cache: prefill on the first step, one decode step per sequence after, on
    /// the CPU or with the keys and values resident on the GPU.
    async fn run_cached(&mut self) -> Result<Outputs> {
        let opts = self.pass_options();
        let placed = self.placed()?;
        let model: &Model = &self.model;
        let cfg = &model.config;
        let s = self.src_len();
        match self.cache.as_mut() {
            None => {
                let mut batch = Batch::single(&self.prompt)?;
                if let Some(src) = &self.src {
                    batch = batch.with_source(vec![src.clone()])?;
                }
                let p = self.prompt.len();
                let (cache, trace) = match &placed {
                    Placed::Cpu => {
                        let (cache, trace) = model.prefill(&batch, &opts)?;
                        (Cache::Cpu(cache), trace)
                    }
                    Placed::Gpu(gm) => {
                        // Room for every position this run can feed.
                        let capacity = p + self.budget;
                        let (cache, trace) =
                            gm.prefill(model, &batch, &opts, Some(capacity)).await?;
                        (Cache::Gpu(Box::new(cache)), trace)
                    }
                };
                let v = cfg.vocab_size;
                let last = trace.logits.data[(p - 1) * v..p * v].to_vec(); // (V)
                let macs = encoder_macs(cfg, s) + decoder_macs(cfg, 0, p, s, true, p);
                let out = Outputs {
                    logits: vec![last],
                    attention: rows_of(&trace.attention, AttnSite::DecoderSelf, 0, p - 1),
                    cross_attention: rows_of(&trace.attention, AttnSite::Cross, 0, p - 1),
                    fed: p,
                    cache_len: p,
                    multiply_adds: macs,
                };
                self.cache = Some(cache);
                Ok(out)
            }
            Some(cache) => {
                // The last token of each sequence (prompt + generated; per live
                // hypothesis for beam search), without building the sequences.
                let last_of = |tail: &[u32]| {
                    *tail
                        .last()
                        .or(self.prompt.last())
                        .expect("a prompt holds at least one token")
                };
                let last: Vec<u32> = match &self.beam {
                    None => vec![last_of(&self.generated)],
                    Some(beam) => beam.live().iter().map(|h| last_of(&h.tokens)).collect(),
                }; // (B)
                let b = last.len();
                let (step, cache_len) = match cache {
                    Cache::Cpu(c) => {
                        let mut step = model.decode_step(c, &last, &opts)?;
                        if !opts.trace_attention {
                            // Nothing draws it: its memory serves the next step.
                            c.recycle(std::mem::take(&mut step.attention));
                        }
                        (step, c.len)
                    }
                    Cache::Gpu(c) => {
                        let step = c.decode_step(model, &last, &opts).await?;
                        (step, c.len())
                    }
                };
                let pos = step.position;
                let v = cfg.vocab_size;
                let logits = (0..b)
                    .map(|i| step.logits.data[i * v..(i + 1) * v].to_vec()) // (V)
                    .collect();
                Ok(Outputs {
                    logits,
                    attention: rows_of(&step.attention, AttnSite::DecoderSelf, 0, 0),
                    cross_attention: rows_of(&step.attention, AttnSite::Cross, 0, 0),
                    fed: 1,
                    cache_len,
                    multiply_adds: b as u64 * decoder_macs(cfg, pos, 1, s, false, 1),
                })
            }
        }
    }

    /// Without the cache: the whole of every sequence through the backend's forward pass.
    async fn run_full(&mut self, seqs: &[Vec<u32>]) -> Result<Outputs> {
        let placed = self.placed()?;
        let model: &Model = &self.model;
        let cfg = &model.config;
        let (b, t, s) = (seqs.len(), seqs[0].len(), self.src_len());
        let mut batch = Batch::new(seqs.to_vec())?; // (B, T)
        if let Some(src) = &self.src {
            batch = batch.with_source(vec![src.clone(); b])?; // (B, S)
        }
        let trace = placed.forward(model, &batch, &self.pass_options()).await?;
        let v = cfg.vocab_size;
        let logits = (0..b)
            .map(|i| {
                let row = (i * t + t - 1) * v;
                trace.logits.data[row..row + v].to_vec() // (V)
            })
            .collect();
        let per_seq = encoder_macs(cfg, s) + decoder_macs(cfg, 0, t, s, true, t);
        Ok(Outputs {
            logits,
            attention: rows_of(&trace.attention, AttnSite::DecoderSelf, 0, t - 1),
            cross_attention: rows_of(&trace.attention, AttnSite::Cross, 0, t - 1),
            fed: t,
            cache_len: t,
            multiply_adds: b as u64 * per_seq,
        })
    }

    /// Greedy or sampling: pick a token, extend the sequence, decide whether to stop.
    /// Returns the token, the distribution it was drawn from and, for a sampled token, how
    /// the draw fell.
    /// `lse`: the logits' log-normaliser (`sampling::softmax_and_lse`).
    fn choose(&mut self, logits: &[f32], lse: f64) -> Result<(u32, Vec<f64>, Option<SampleDraw>)> {
        let sampling = match self.opts.strategy {
            Strategy::Sample(s) => s,
            _ => sampling::Sampling {
                temperature: 0.0,
                top_k: None,
                top_p: None,
            },
        };
        // The same choice as `sampling::choose` (greedy takes no random number), keeping
        // the sampler's threshold so the step can say how the token was drawn.
        sampling.validate()?;
        let drawn = sampling_distribution(logits, &sampling)?; // (V)
        let (token, draw) = if sampling.is_greedy() {
            (sampling::argmax(logits)?, None)
        } else {
            let (token, u) = sampling::draw_with_u(&drawn, &mut self.rng);
            (token, Some(sampling::explain_draw(&drawn, u, token)))
        };
        self.log_prob += logits[token as usize] as f64 - lse; // log_softmax(logits)[token]
        self.generated.push(token);
        if token == self.model.tokenizer.spec.eos {
            self.stop = Some(StopReason::Eos);
        } else if self.generated.len() == self.budget {
            self.stop = Some(self.budget_reason());
        }
        Ok((token, drawn, draw))
    }

    /// Beam search: advance the beam, reorder the cache rows to follow the survivors.
    fn advance_beam(&mut self, logits: &[Vec<f32>]) -> Result<BeamStep> {
        let budget_reason = self.budget_reason();
        let beam = self
            .beam
            .as_mut()
            .ok_or_else(|| Error::Other("beam search state missing".into()))?;
        let refs: Vec<&[f32]> = logits.iter().map(Vec::as_slice).collect();
        let adv = beam.advance(&refs)?;
        if adv.done {
            self.stop = Some(match beam.best().and_then(|h| h.ending) {
                Some(Ending::Budget) => budget_reason,
                _ => StopReason::Eos,
            });
        } else if let Some(cache) = self.cache.as_mut() {
            let parents: Vec<usize> = adv.live.iter().filter_map(|h| h.parent).collect();
            match cache {
                Cache::Cpu(c) => select_sequences(c, &parents),
                Cache::Gpu(c) => c.select(&parents)?,
            }
        }
        Ok(BeamStep {
            live: adv.live,
            newly_finished: adv.newly_finished,
            finished: beam.finished().to_vec(),
            pruned: adv.pruned,
        })
    }

    fn budget_reason(&self) -> StopReason {
        if self.budget < self.opts.max_new_tokens {
            StopReason::ContextFull
        } else {
            StopReason::MaxTokens
        }
    }

    /// The `top_candidates` most probable tokens under the model.
    fn candidates(&self, logits: &[f32], probs: &[f32], drawn: &[f64]) -> Vec<Candidate> {
        let model_probs: Vec<f64> = probs.iter().map(|&p| p as f64).collect(); // (V)
        sampling::top_ranked(&model_probs, self.opts.top_candidates)
            .into_iter()
            .map(|i| Candidate {
                id: i as u32,
                token: self.piece(i as u32),
                logit: logits[i],
                prob: probs[i],
                sample_prob: drawn[i] as f32,
            })
            .collect()
    }

    fn piece(&self, id: u32) -> String {
        self.model
            .tokenizer
            .token(id)
            .map_or_else(|| format!("<?{id}>"), str::to_string)
    }
}

/// Keep cache rows `rows` (in that order, repeats allowed): the cache then holds one
/// sequence per entry, row i a copy of the old row `rows[i]`.
pub fn select_sequences(cache: &mut KvCache, rows: &[usize]) {
    // Each copy keeps the room the cache made for later positions (a plain clone would
    // not, and the next step would copy the row again to grow it).
    fn pick<T: Copy>(v: &mut Vec<Vec<T>>, rows: &[usize]) {
        if v.is_empty() {
            return;
        }
        *v = rows
            .iter()
            .map(|&r| {
                let mut row = Vec::with_capacity(v[r].capacity());
                row.extend_from_slice(&v[r]);
                row
            })
            .collect();
    }
    for layer in &mut cache.layers {
        pick(&mut layer.k, rows);
        pick(&mut layer.v, rows);
        pick(&mut layer.cross_k, rows);
        pick(&mut layer.cross_v, rows);
    }
    pick(&mut cache.tokens, rows);
    pick(&mut cache.src_tokens, rows);
    if let Some(pads) = cache.key_pad.as_mut() {
        pick(pads, rows);
    }
    cache.batch = rows.len();
}

/// (L, H, S): row `t` of sequence `b` of every `site` attention trace, layer by layer.
fn rows_of(traces: &[AttnTrace], site: AttnSite, b: usize, t: usize) -> Vec<Vec<Vec<f32>>> {
    let mut layers: Vec<&AttnTrace> = traces.iter().filter(|a| a.site == site).collect();
    crate::sorting::sort_by_key(&mut layers, |a| a.layer);
    layers
        .into_iter()
        .map(|a| {
            let &[_, h, tt, s] = &a.probs.shape[..] else {
                return vec![];
            };
            (0..h)
                .map(|hi| {
                    let at = ((b * h + hi) * tt + t) * s;
                    a.probs.data[at..at + s].to_vec() // (S)
                })
                .collect()
        })
        .collect()
}

fn check_ids(ids: &[u32], vocab: usize, what: &str) -> Result<()> {
    match ids.iter().enumerate().find(|(_, &t)| t as usize >= vocab) {
        Some((i, &t)) => Err(Error::Input(format!(
            "{what} token {i} has id {t}, outside the vocabulary of {vocab} tokens"
        ))),
        None => Ok(()),
    }
}
