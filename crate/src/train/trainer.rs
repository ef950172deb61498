//! The training loop: seeded batches from a task, train-mode forward passes, Adam with the
//! Noam schedule. Same seed, same task, same options → the same weights on one platform.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::config::ModelConfig;
use crate::error::{Error, Result};
use crate::model::{ForwardOptions, Mode, Model};
use crate::tasks::{Split, Task, TrainBatch};

use super::optim::{Adam, AdamConfig};
use super::schedule::scheduled_lr;
use super::step::{train_step_observed, LossGrads, StepStats};

/// Mixed into the seed of the data generator (examples and dropout seeds).
const DATA_SALT: u64 = 0x5eed_da7a;

/// A run's state besides its weights, to continue it later exactly where it stood.
#[derive(Clone, Debug, PartialEq)]
pub struct TrainerState {
    /// Steps taken.
    pub step: u64,
    /// Adam's update count and moments (one buffer per trained tensor, in walk order).
    pub adam_step: u64,
    pub m: Vec<Vec<f32>>,
    pub v: Vec<Vec<f32>>,
    /// Position of the data generator in its stream.
    pub rng_word_pos: u128,
}

/// Everything about a training run besides the model and the task.
#[derive(Clone, Debug, PartialEq)]
pub struct TrainOptions {
    pub steps: u64,
    /// Examples per step.
    pub batch_size: usize,
    /// Noam `factor`.
    pub lr_factor: f32,
    /// Noam warmup steps.
    pub warmup: u64,
    /// Seeds the initial weights, the order of the examples and the dropout masks.
    pub seed: u64,
    /// Cross-entropy label smoothing ε.
    pub label_smoothing: f32,
    /// Global-norm clipping threshold (none: no clipping).
    pub clip: Option<f32>,
    /// A constant learning rate in place of the Noam schedule.
    pub lr_constant: Option<f32>,
    /// The last this many of `steps` bring the rate down in a straight line towards zero
    /// (`schedule::cooldown_scale`); 0: none.
    pub cooldown: u64,
    pub adam: AdamConfig,
}

impl Default for TrainOptions {
    fn default() -> Self {
        TrainOptions {
            steps: 2000,
            batch_size: 32,
            lr_factor: 1.0,
            warmup: 200,
            seed: 0,
            label_smoothing: 0.0,
            clip: Some(1.0),
            lr_constant: None,
            cooldown: 0,
            adam: AdamConfig::default(),
        }
    }
}

/// The task a trainer draws from: borrowed, or owned by the trainer (a training session
/// that outlives its caller's stack).
pub enum TaskRef<'t> {
    Borrowed(&'t dyn Task),
    Owned(Box<dyn Task>),
}

impl<'t> std::ops::Deref for TaskRef<'t> {
    type Target = dyn Task + 't;
    fn deref(&self) -> &(dyn Task + 't) {
        match self {
            TaskRef::Borrowed(t) => *t,
            TaskRef::Owned(t) => t.as_ref(),
        }
    }
}

/// A model being trained on a task.
pub struct Trainer<'t> {
    pub task: TaskRef<'t>,
    pub model: Model,
    pub opts: TrainOptions,
    adam: Adam,
    data_rng: ChaCha8Rng,
    /// Steps taken.
    pub step: u64,
}

impl Trainer<'static> {
    /// A trainer that owns its task.
    pub fn owning(task: Box<dyn Task>, config: ModelConfig, opts: TrainOptions) -> Result<Self> {
        Self::with_task(TaskRef::Owned(task), config, opts)
    }
}

impl<'t> Trainer<'t> {
    /// A fresh model for the task (initialised from `opts.seed`) and its optimizer.
    pub fn new(task: &'t dyn Task, config: ModelConfig, opts: TrainOptions) -> Result<Self> {
        Self::with_task(TaskRef::Borrowed(task), config, opts)
    }

    fn with_task(task: TaskRef<'t>, config: ModelConfig, opts: TrainOptions) -> Result<Self> {
        config.validate()?;
        if config.vocab_size != task.tokenizer().vocab_size() {
            return Err(Error::Config(format!(
                "vocab_size: task '{}' has {} tokens, the config says {}",
                task.name(),
                task.tokenizer().vocab_size(),
                config.vocab_size
            )));
        }
        if config.arch != task.arch() {
            return Err(Error::Config(format!(
                "arch: task '{}' is made for {:?} models, the config is {:?}",
                task.name(),
                task.arch(),
                config.arch
            )));
        }
        if config.num_classes != task.num_classes() {
            return Err(Error::Config(format!(
                "num_classes: task '{}' has {} classes, the config says {}",
                task.name(),
                task.num_classes(),
                config.num_classes
            )));
        }
        if config.max_len < task.max_tokens() {
            return Err(Error::Config(format!(
                "max_len: task '{}' has examples of up to {} tokens, max_len is {}",
                task.name(),
                task.max_tokens(),
                config.max_len
            )));
        }
        if opts.batch_size == 0 {
            return Err(Error::Input(
                "batch: needs at least one example per step".into(),
            ));
        }
        let model = Model::init(config, task.tokenizer().clone(), opts.seed);
        let adam = Adam::new(&model, opts.adam);
        Ok(Trainer {
            task,
            model,
            adam,
            data_rng: ChaCha8Rng::seed_from_u64(opts.seed ^ DATA_SALT),
            opts,
            step: 0,
        })
    }

    /// Where the run stands besides its weights: Adam's moments and the data generator.
    pub fn state(&self) -> TrainerState {
        let (m, v) = self.adam.moments();
        TrainerState {
            step: self.step,
            adam_step: self.adam.step,
            m,
            v,
            rng_word_pos: self.data_rng.get_word_pos(),
        }
    }

    /// Continue from saved weights and state: the next step is the one the saved run
    /// would have taken (the same batch, the same dropout masks, the same update).
    pub fn restore(&mut self, model: Model, state: TrainerState) -> Result<()> {
        if model.config != self.model.config {
            return Err(Error::Input(
                "the saved weights are of another model than these settings describe".into(),
            ));
        }
        self.adam = Adam::resume(&model, self.opts.adam, state.adam_step, state.m, state.v)?;
        self.model = model;
        self.step = state.step;
        self.data_rng = ChaCha8Rng::seed_from_u64(self.opts.seed ^ DATA_SALT);
        self.data_rng.set_word_pos(state.rng_word_pos);
        Ok(())
    }

    /// The next batch of training examples.
    pub fn next_batch(&mut self) -> TrainBatch {
        let _t = crate::profile::scope(crate::profile::Phase::Data);
        let examples: Vec<_> = (0..self.opts.batch_size)
            .map(|_| self.task.sample(Split::Train, &mut self.data_rng))
            .collect();
        TrainBatch::collate(&examples, self.task.tokenizer().spec.pad)
    }

    /// The shape (B, T, S) of the batch the next step will draw, drawn from a copy of the
    /// data generator (the trainer's state does not change).
    pub fn peek_batch_shape(&self) -> (usize, usize, usize) {
        let mut rng = self.data_rng.clone();
        let examples: Vec<_> = (0..self.opts.batch_size)
            .map(|_| self.task.sample(Split::Train, &mut rng))
            .collect();
        let tb = TrainBatch::collate(&examples, self.task.tokenizer().spec.pad);
        (tb.b, tb.t, tb.s)
    }

    /// The learning rate of the next step.
    pub fn lr(&self) -> f32 {
        self.lr_at(self.step + 1)
    }

    /// The learning rate of step `step` (from 1).
    fn lr_at(&self, step: u64) -> f32 {
        scheduled_lr(
            step,
            self.model.config.d_model,
            self.opts.warmup,
            self.opts.lr_factor,
            self.opts.lr_constant,
            self.opts.steps,
            self.opts.cooldown,
        )
    }

    /// The next step's inputs: its batch, its forward options (train mode, the dropout
    /// seed drawn after the batch) and its learning rate. The data generator moves on, as
    /// it does in [`Trainer::train_step_with`], which takes the step from these.
    pub fn next_step_inputs(&mut self, trace_hidden: bool) -> (TrainBatch, ForwardOptions, f32) {
        let tb = self.next_batch();
        let lr = self.lr();
        let fwd = ForwardOptions {
            mode: Mode::Train {
                seed: self.data_rng.random(),
            },
            trace_hidden,
            ..ForwardOptions::default()
        };
        (tb, fwd, lr)
    }

    /// The inputs of the next `n` steps, each what [`Trainer::next_step_inputs`] would
    /// give then, drawn from a copy of the data generator: the trainer's state does not
    /// change (the backend race times a run's own next steps without taking them).
    pub fn upcoming_steps(
        &self,
        n: usize,
        trace_hidden: bool,
    ) -> Vec<(TrainBatch, ForwardOptions, f32)> {
        let mut rng = self.data_rng.clone();
        let pad = self.task.tokenizer().spec.pad;
        (1..=n as u64)
            .map(|k| {
                let examples: Vec<_> = (0..self.opts.batch_size)
                    .map(|_| self.task.sample(Split::Train, &mut rng))
                    .collect();
                let tb = TrainBatch::collate(&examples, pad);
                let fwd = ForwardOptions {
                    mode: Mode::Train { seed: rng.random() },
                    trace_hidden,
                    ..ForwardOptions::default()
                };
                (tb, fwd, self.lr_at(self.step + k))
            })
            .collect()
    }

    /// Count a step taken elsewhere (on the GPU) from [`Trainer::next_step_inputs`]: `Err`
    /// when its loss is not finite, as [`Trainer::train_step_with`] says it.
    pub fn count_step(&mut self, stats: StepStats) -> Result<StepStats> {
        self.step += 1;
        if !stats.loss.is_finite() {
            return Err(Error::Other(format!(
                "training diverged at step {}: the loss is {}; lower --lr-factor or raise --warmup",
                self.step, stats.loss
            )));
        }
        if !stats.grad_norm.is_finite() {
            return Err(Error::Other(format!(
                "training diverged at step {}: the gradient norm is {}; lower --lr-factor or raise --warmup",
                self.step, stats.grad_norm
            )));
        }
        Ok(stats)
    }

    /// The optimiser as it stands.
    pub fn adam(&self) -> &Adam {
        &self.adam
    }

    /// Where the data generator stands in its stream.
    pub fn data_position(&self) -> u128 {
        self.data_rng.get_word_pos()
    }

    /// Weights and optimiser state from elsewhere (copied back from the GPU).
    pub fn set_weights(&mut self, model: Model, adam: Adam) {
        self.model = model;
        self.adam = adam;
    }

    /// Count `step` steps taken and put the data generator at `data_position`: with the
    /// weights of that step, the next step is the one the run took then.
    pub fn rewind(&mut self, step: u64, data_position: u128) {
        self.step = step;
        self.data_rng = ChaCha8Rng::seed_from_u64(self.opts.seed ^ DATA_SALT);
        self.data_rng.set_word_pos(data_position);
    }

    /// One training step in train mode (dropout on, BatchNorm on batch statistics).
    pub fn train_step(&mut self) -> Result<StepStats> {
        self.train_step_with(false, &mut |_| {})
    }

    /// [`Trainer::train_step`], showing `observe` the step's loss, gradients (before
    /// clipping) and forward pass (with the residual stream recorded when `trace_hidden`);
    /// watching changes no number of the step.
    pub fn train_step_with(
        &mut self,
        trace_hidden: bool,
        observe: &mut dyn FnMut(&LossGrads),
    ) -> Result<StepStats> {
        let (tb, fwd, lr) = self.next_step_inputs(trace_hidden);
        self.take_step(&tb, &fwd, lr, observe)
    }

    /// The step of [`Trainer::train_step_with`] on inputs from
    /// [`Trainer::next_step_inputs`], counted.
    pub fn take_step(
        &mut self,
        tb: &TrainBatch,
        fwd: &ForwardOptions,
        lr: f32,
        observe: &mut dyn FnMut(&LossGrads),
    ) -> Result<StepStats> {
        let stats = train_step_observed(
            &mut self.model,
            &mut self.adam,
            tb,
            fwd,
            self.opts.label_smoothing,
            lr,
            self.opts.clip,
            observe,
        )?;
        self.count_step(stats)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tasks::{build, TaskOptions};

    #[test]
    fn same_seed_gives_the_same_weights_and_another_seed_does_not() {
        let task = build(
            "copy",
            &TaskOptions {
                len: Some(3),
                ..TaskOptions::default()
            },
        )
        .unwrap();
        let cfg = ModelConfig::preset("gpt-pico", task.tokenizer().vocab_size()).unwrap();
        let run = |seed| {
            let opts = TrainOptions {
                steps: 3,
                batch_size: 4,
                seed,
                ..TrainOptions::default()
            };
            let mut tr = Trainer::new(task.as_ref(), cfg.clone(), opts).unwrap();
            for _ in 0..3 {
                tr.train_step().unwrap();
            }
            tr.model.embed.data
        };
        assert_eq!(run(1), run(1));
        assert_ne!(run(1), run(2));
    }

    #[test]
    fn the_upcoming_steps_are_the_next_steps_and_leave_the_trainer_as_it_was() {
        let task = build(
            "copy",
            &TaskOptions {
                len: Some(3),
                ..TaskOptions::default()
            },
        )
        .unwrap();
        let cfg = ModelConfig::preset("gpt-pico", task.tokenizer().vocab_size()).unwrap();
        let opts = TrainOptions {
            batch_size: 4,
            ..TrainOptions::default()
        };
        let mut tr = Trainer::new(task.as_ref(), cfg, opts).unwrap();
        tr.train_step().unwrap();
        let at = tr.data_position();
        let ahead = tr.upcoming_steps(3, true);
        assert_eq!(tr.data_position(), at);
        for (tb, fwd, lr) in ahead {
            let (tb2, fwd2, lr2) = tr.next_step_inputs(true);
            assert_eq!(
                (tb.tokens, tb.targets, tb.src),
                (tb2.tokens, tb2.targets, tb2.src)
            );
            assert_eq!(format!("{:?}", fwd.mode), format!("{:?}", fwd2.mode));
            assert_eq!(lr, lr2);
            tr.step += 1;
        }
    }

    #[test]
    fn a_config_for_another_architecture_is_refused_by_name() {
        let task = build("translate", &TaskOptions::default()).unwrap();
        let cfg = ModelConfig::preset("gpt-nano", task.tokenizer().vocab_size()).unwrap();
        let e = Trainer::new(task.as_ref(), cfg, TrainOptions::default())
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("arch") && e.contains("translate"), "{e}");
    }

    #[test]
    fn loss_falls_on_the_copy_task() {
        let task = build(
            "copy",
            &TaskOptions {
                len: Some(3),
                ..TaskOptions::default()
            },
        )
        .unwrap();
        let cfg = ModelConfig::preset("gpt-pico", task.tokenizer().vocab_size()).unwrap();
        let opts = TrainOptions {
            batch_size: 16,
            warmup: 20,
            lr_factor: 2.0,
            ..TrainOptions::default()
        };
        let mut tr = Trainer::new(task.as_ref(), cfg, opts).unwrap();
        let first: f32 = (0..5).map(|_| tr.train_step().unwrap().loss).sum::<f32>() / 5.0;
        for _ in 0..80 {
            tr.train_step().unwrap();
        }
        let last: f32 = (0..5).map(|_| tr.train_step().unwrap().loss).sum::<f32>() / 5.0;
        assert!(last < 0.6 * first, "loss {first} → {last}");
    }

    #[test]
    fn the_cooldown_brings_each_steps_rate_down_over_the_last_steps() {
        let task = build("copy", &TaskOptions::default()).unwrap();
        let cfg = ModelConfig::preset("gpt-pico", task.tokenizer().vocab_size()).unwrap();
        let rates = |lr_constant: Option<f32>, cooldown: u64| {
            let opts = TrainOptions {
                steps: 10,
                batch_size: 2,
                warmup: 3,
                lr_constant,
                cooldown,
                ..TrainOptions::default()
            };
            let mut tr = Trainer::new(task.as_ref(), cfg.clone(), opts).unwrap();
            (0..10)
                .map(|_| tr.train_step().unwrap().lr)
                .collect::<Vec<f32>>()
        };
        // A constant rate: steps 7..=10 take 4/4, 3/4, 2/4 and 1/4 of it.
        assert_eq!(
            rates(Some(0.01), 4),
            [0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.0075, 0.005, 0.0025]
        );
        // Noam: the same shares of the schedule's own rate, which the steps before keep.
        let (plain, cooled) = (rates(None, 0), rates(None, 4));
        for (k, (p, c)) in plain.iter().zip(&cooled).enumerate() {
            let share = [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.75, 0.5, 0.25][k];
            assert_eq!(*c, p * share, "step {}", k + 1);
        }
    }
}
