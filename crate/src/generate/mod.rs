//! Generation: decoding strategies, beam search, and the streaming step API.

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
