//! Training: hand-written backward passes for every op, cross-entropy with label
//! smoothing, Adam with the Noam schedule and gradient clipping.

pub mod backward;
pub mod loss;
pub mod optim;
pub mod schedule;
pub mod step;

pub use step::{loss_and_grads, to_batch, train_step, train_step_observed, LossGrads, StepStats};
pub mod eval;
pub mod footprint;
pub mod health;
pub mod trainer;

pub use eval::{evaluate, EvalReport};
pub use trainer::{TrainOptions, Trainer, TrainerState};
pub mod run;

pub use run::RunSpec;
pub mod race;
pub mod recipes;
pub mod session;
pub mod settings;

pub use session::Session;
