//! Generation: decoding strategies, beam search, and the streaming step API.
//!
//! - [`sampling`]: greedy, temperature, top-k, top-p and seeded draws over one logits
//!   vector (temperature, then top-k, then top-p; ties towards the lower id).
//! - [`beam`]: a model-free beam search with a length penalty (GNMT's ((5 + len)/6)^α or
//!   len^α) and a stopping rule that never stops before the optimum is certain.
//! - [`generator`]: [`Generator`], one `async` [`Generator::step`] at a time, with the
//!   KV cache (prefill, then one decode step per token) or without it (the whole prefix
//!   through a backend's forward pass every step). Each step is a serde [`Step`]: the
//!   token, the top candidates with whole-vocabulary probabilities, the new token's
//!   attention over the cache per layer and head, the cache length, wall time, FLOPs, and
//!   for beam search the live and finished hypotheses with their parents (the beam tree).
//! - [`flops`]: the multiply-add count each step reports, formula included.
//! - [`clock`]: step timing that also works on wasm32.
//!
//! ```text
//! let opts = GenerateOptions { strategy: Strategy::Greedy, ..GenerateOptions::default() };
//! let mut gen = Generator::new(&model, Backend::Cpu, prompt, None, opts)?;
//! while let Some(step) = gen.step().await? { draw(step) }
//! let summary = gen.summary();
//! ```

pub mod beam;
pub mod clock;
pub mod flops;
pub mod generator;
pub mod sampling;
pub mod step;

pub use beam::{BeamAdvance, BeamSearch, Ending, Hypothesis, LengthPenalty};
pub use generator::{GenerateOptions, Generator};
pub use sampling::Sampling;
pub use step::{BeamStep, Candidate, Step, StopReason, Strategy, Summary};
