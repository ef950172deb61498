//! The page's form of a run ([`RunSettings`]): its checks, field by field, with the reason a
//! setting does not fit the task; its conversion to the command line's [`RunSpec`] and back;
//! each task's defaults; and one line on what each field does.

use std::collections::BTreeMap;

use crate::config::{Arch, ModelConfig};
use crate::error::{Error, Result};
use crate::protocol::{LrSettings, RunDefaults, RunSettings, TrainBackendChoice};
use crate::tasks::{build, TaskOptions, TASKS, TEXT_TASK};

use super::recipes::{recipes, six_evaluations, Recipe};
use super::run::{arch_name, RunSpec};

/// The most steps a run may ask for, and the largest batch.
pub const MAX_STEPS: u64 = 1_000_000;
pub const MAX_BATCH: usize = 1024;

/// Tasks whose examples have a length to choose (`len`).
const TASKS_WITH_LEN: &[&str] = &["copy", "reverse", "sort", "grammar", "zh-grammar", "text"];

/// An input error naming the field at fault.
pub(super) fn field_err(field: &str, why: String) -> Error {
    Error::Input(format!("{field}: {why}"))
}

/// A config enum's JSON name.
fn json_name<T: serde::Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        _ => String::new(),
    }
}

impl RunSettings {
    /// Check every field on its own and against the task, naming the field and saying why.
    pub fn validate(&self) -> Result<()> {
        if !TASKS.contains(&self.task.as_str()) {
            return Err(field_err(
                "task",
                format!("unknown task '{}' (known: {})", self.task, TASKS.join(", ")),
            ));
        }
        if self.task == TEXT_TASK && self.text.is_none() {
            return Err(field_err(
                "text",
                "task 'text' trains on a text of your own: paste or upload one".into(),
            ));
        }
        if self.task != TEXT_TASK && self.text.is_some() {
            return Err(field_err(
                "text",
                format!(
                    "task '{}' makes its own examples; a text of your own is for task '{TEXT_TASK}'",
                    self.task
                ),
            ));
        }
        let task = build(
            &self.task,
            &TaskOptions {
                len: self.len,
                text: self.text.as_deref().map(std::sync::Arc::from),
            },
        )?;
        if let Some(a) = self.arch {
            if a != task.arch() {
                let spec = RunSpec {
                    task: self.task.clone(),
                    arch: Some(arch_name(a).into()),
                    ..RunSpec::default()
                };
                let why = match spec.model_config(task.as_ref()) {
                    Err(Error::Input(m)) => m,
                    _ => format!("task '{}' is made for another architecture", self.task),
                };
                return Err(field_err(
                    "arch",
                    why.trim_start_matches("--arch: ").to_string(),
                ));
            }
        }
        if self.len.is_some() && !TASKS_WITH_LEN.contains(&self.task.as_str()) {
            return Err(field_err(
                "len",
                format!(
                    "task '{}' has no length to choose (its examples come with their own); leave it null",
                    self.task
                ),
            ));
        }
        if self.steps == 0 || self.steps > MAX_STEPS {
            return Err(field_err(
                "steps",
                format!("must be from 1 to {MAX_STEPS}, got {}", self.steps),
            ));
        }
        if self.batch == 0 || self.batch > MAX_BATCH {
            return Err(field_err(
                "batch",
                format!(
                    "must be from 1 to {MAX_BATCH} examples per step, got {}",
                    self.batch
                ),
            ));
        }
        if self.n_layers == 0 {
            return Err(field_err("n_layers", "needs at least one layer".into()));
        }
        if !(0.0..1.0).contains(&self.label_smoothing) {
            return Err(field_err(
                "label_smoothing",
                format!("must be in [0, 1), got {}", self.label_smoothing),
            ));
        }
        if !(0.0..1.0).contains(&self.dropout) {
            return Err(field_err(
                "dropout",
                format!("must be in [0, 1), got {}", self.dropout),
            ));
        }
        for (f, v) in [
            ("adam_beta1", self.adam_beta1),
            ("adam_beta2", self.adam_beta2),
        ] {
            if !(0.0..1.0).contains(&v) {
                return Err(field_err(
                    f,
                    format!("a moment's decay must be in [0, 1), got {v}"),
                ));
            }
        }
        if !(self.adam_eps > 0.0 && self.adam_eps <= 1.0) {
            return Err(field_err(
                "adam_eps",
                format!(
                    "must be in (0, 1] (it keeps Adam from dividing by zero), got {}",
                    self.adam_eps
                ),
            ));
        }
        match self.lr {
            LrSettings::Noam { factor, warmup } => {
                if !(factor > 0.0 && factor.is_finite() && factor <= 1000.0) {
                    return Err(field_err(
                        "lr.factor",
                        format!("the Noam factor must be in (0, 1000], got {factor}"),
                    ));
                }
                if warmup == 0 || warmup > MAX_STEPS {
                    return Err(field_err(
                        "lr.warmup",
                        format!("must be from 1 to {MAX_STEPS} steps, got {warmup}"),
                    ));
                }
            }
            LrSettings::Constant { value } => {
                if !(value > 0.0 && value <= 1.0) {
                    return Err(field_err(
                        "lr.value",
                        format!("a constant learning rate must be in (0, 1], got {value}"),
                    ));
                }
            }
        }
        if !(self.clip >= 0.0 && self.clip.is_finite()) {
            return Err(field_err(
                "clip",
                format!("must be 0 (no clipping) or positive, got {}", self.clip),
            ));
        }
        if !(0.0..=1.0).contains(&self.cooldown) {
            return Err(field_err(
                "cooldown",
                format!(
                    "the share of the steps at the end that bring the rate down must be from 0 \
                     (none) to 1 (the whole run), got {}",
                    self.cooldown
                ),
            ));
        }
        if self.eval_every > MAX_STEPS {
            return Err(field_err(
                "eval_every",
                format!("must be from 0 (only at the end) to {MAX_STEPS}"),
            ));
        }
        Ok(())
    }

    /// The command line's form of the run (every model field explicit), validated.
    pub fn to_spec(&self) -> Result<RunSpec> {
        self.validate()?;
        let (lr_factor, warmup, lr_constant) = match self.lr {
            LrSettings::Noam { factor, warmup } => (factor, warmup, None),
            LrSettings::Constant { value } => {
                let d = RunSpec::default();
                (d.lr_factor, d.warmup, Some(value))
            }
        };
        let spec = RunSpec {
            task: self.task.clone(),
            preset: None,
            seed: self.seed,
            steps: self.steps,
            batch: self.batch,
            lr_factor,
            warmup,
            len: self.len,
            pos_encoding: Some(json_name(&self.pos_encoding)),
            d_model: Some(self.d_model),
            heads: Some(self.n_heads),
            d_ff: Some(self.d_ff),
            layers: Some(self.n_layers),
            max_len: None,
            norm: Some(json_name(&self.norm)),
            activation: Some(json_name(&self.activation)),
            score: Some(json_name(&self.score)),
            share_qk: self.share_qk,
            dropout: Some(self.dropout),
            label_smoothing: self.label_smoothing,
            clip: self.clip,
            arch: self.arch.map(|a| arch_name(a).to_string()),
            final_norm: Some(self.final_norm),
            residual: Some(self.residual),
            scale_embeddings: Some(self.scale_embeddings),
            adam_beta1: self.adam_beta1,
            adam_beta2: self.adam_beta2,
            adam_eps: self.adam_eps,
            lr_constant,
            cooldown: self.cooldown,
            text: self.text.as_deref().map(std::sync::Arc::from),
        };
        // The model and optimiser must build: sizes, divisibility, limits.
        let task = spec.task()?;
        spec.model_config(task.as_ref()).map_err(flag_to_field)?;
        spec.train_options().map_err(flag_to_field)?;
        Ok(spec)
    }

    /// The settings of a command-line run, every value resolved (the preset's, the task's).
    pub fn from_spec(spec: &RunSpec, eval_every: u64) -> Result<RunSettings> {
        let task = spec.task()?;
        let cfg = spec.model_config(task.as_ref())?;
        spec.train_options()?;
        Ok(RunSettings {
            task: spec.task.clone(),
            arch: None,
            d_model: cfg.d_model,
            n_heads: cfg.n_heads,
            n_layers: layers_of(&cfg),
            d_ff: cfg.d_ff,
            activation: cfg.activation,
            pos_encoding: cfg.pos_encoding,
            norm: cfg.norm,
            final_norm: cfg.final_norm,
            residual: cfg.residual,
            scale_embeddings: cfg.scale_embeddings,
            score: cfg.score,
            share_qk: cfg.share_qk,
            dropout: cfg.dropout,
            label_smoothing: spec.label_smoothing,
            batch: spec.batch,
            steps: spec.steps,
            seed: spec.seed,
            len: spec.len,
            adam_beta1: spec.adam_beta1,
            adam_beta2: spec.adam_beta2,
            adam_eps: spec.adam_eps,
            lr: match spec.lr_constant {
                Some(value) => LrSettings::Constant { value },
                None => LrSettings::Noam {
                    factor: spec.lr_factor,
                    warmup: spec.warmup,
                },
            },
            cooldown: spec.cooldown,
            clip: spec.clip,
            eval_every,
            backend: TrainBackendChoice::Auto,
            text: spec.text.as_deref().map(str::to_string),
        })
    }

    /// A task's starting point: its shipped recipe when it has one (the first), else the
    /// nano preset of its architecture with the command line's defaults.
    pub fn defaults(task: &str) -> Result<RunDefaults> {
        if !TASKS.contains(&task) {
            return Err(field_err(
                "task",
                format!("unknown task '{task}' (known: {})", TASKS.join(", ")),
            ));
        }
        let recipe = recipes().into_iter().find(|r| r.run.task == task);
        let spec = match &recipe {
            Some(r) => RunSpec {
                // The page's runs keep the task's own max_len (`RunSettings` has none).
                max_len: None,
                ..r.run.clone()
            },
            None => RunSpec {
                task: task.to_string(),
                // The text task's settings do not depend on the text (only its vocabulary
                // does, which the settings do not hold): a stand-in builds it here, and
                // the settings go out without it.
                text: (task == TEXT_TASK).then(|| std::sync::Arc::from(DEFAULTS_STAND_IN)),
                ..RunSpec::default()
            },
        };
        // The recipe's own cadence; six evaluations over a run without one.
        let eval_every = recipe
            .as_ref()
            .map_or(six_evaluations(spec.steps), Recipe::lab_eval_every);
        let mut settings = RunSettings::from_spec(&spec, eval_every)?;
        settings.text = None;
        let t = spec.task()?;
        let mut notes = BTreeMap::new();
        for (field, note) in FIELD_NOTES {
            notes.insert(field.to_string(), note.to_string());
        }
        let mut not_for_task = BTreeMap::new();
        if !TASKS_WITH_LEN.contains(&task) {
            not_for_task.insert(
                "len".to_string(),
                format!("task '{task}' has no length to choose: its examples come with their own"),
            );
        }
        not_for_task.insert(
            "arch".to_string(),
            format!(
                "task '{task}' fits one architecture, {}: null means that one, and another is refused with the reason",
                arch_name(t.arch())
            ),
        );
        if t.arch() == Arch::EncoderDecoder {
            notes.insert(
                "n_layers".into(),
                "Layers of each stack: the encoder and the decoder get this many each.".into(),
            );
        }
        Ok(RunDefaults {
            settings,
            recipe: recipe.as_ref().map(|r| r.file.to_string()),
            threshold: recipe.as_ref().map(|r| r.threshold),
            description: t.description().to_string(),
            metric_name: t.metric().name().to_string(),
            notes,
            not_for_task,
        })
    }
}

/// The text the text task's defaults are computed on (never trained on).
const DEFAULTS_STAND_IN: &str = "A stand-in text for the defaults of the text task.";

/// A command-line message ("--d-model: …") in the page's field names ("d_model: …").
fn flag_to_field(e: Error) -> Error {
    let Error::Input(s) = &e else {
        return e;
    };
    let Some(rest) = s.strip_prefix("--") else {
        return e;
    };
    let (flag, why) = match rest.split_once(": ") {
        Some(x) => x,
        None => return e,
    };
    let field = match flag {
        "heads" => "n_heads".to_string(),
        "layers" => "n_layers".to_string(),
        "lr" => "lr.value".to_string(),
        "lr-factor" => "lr.factor".to_string(),
        "warmup" => "lr.warmup".to_string(),
        f => f.replace('-', "_"),
    };
    Error::Input(format!("{field}: {why}"))
}

/// Layers of one stack.
fn layers_of(cfg: &ModelConfig) -> usize {
    match cfg.arch {
        Arch::EncoderDecoder => cfg.n_encoder_layers.max(cfg.n_decoder_layers),
        _ => cfg.n_layers,
    }
}

/// What each field of [`RunSettings`] does, in one line.
pub const FIELD_NOTES: &[(&str, &str)] = &[
    ("task", "What the model learns: the examples it trains on and how it is scored."),
    ("arch", "Which stacks the model has: encoder, decoder, or both (null: the task's own)."),
    ("d_model", "Width of the residual stream: every token is a vector this long."),
    ("n_heads", "Attention heads per layer; each looks at d_model / n_heads dimensions."),
    ("n_layers", "Layers in the stack, each an attention sublayer and a feed-forward one."),
    ("d_ff", "Hidden width of each feed-forward sublayer."),
    ("activation", "The feed-forward non-linearity: ReLU or GELU."),
    ("pos_encoding", "How the model knows where a token is: none, sine/cosine, learned, relative, RoPE or ALiBi."),
    ("norm", "Normalisation and where it sits: after the residual add (post-LN), before the sublayer (pre-LN), BatchNorm, or none."),
    ("final_norm", "One more LayerNorm at the end of each stack (what pre-LN models usually need)."),
    ("residual", "Add each sublayer's input to its output; without it deep models barely train."),
    ("scale_embeddings", "Multiply token embeddings by √d_model before adding positions."),
    ("score", "How a query meets a key: scaled dot product, plain dot product, or additive (tanh)."),
    ("share_qk", "One matrix for queries and keys (W_K = W_Q): every head's scores become symmetric."),
    ("dropout", "Share of activations zeroed at random while training (0: none)."),
    ("label_smoothing", "Share of the target probability spread over the other tokens."),
    ("batch", "Examples per training step."),
    ("steps", "Training steps (one Adam update each)."),
    ("seed", "Seeds the initial weights, the order of the examples and the dropout masks."),
    ("len", "Longest string (copy, reverse, sort), sequence length (grammar) or window (text); null: the task's own."),
    ("adam_beta1", "Adam's decay of the running mean of gradients."),
    ("adam_beta2", "Adam's decay of the running mean of squared gradients."),
    ("adam_eps", "Added to Adam's denominator so it never divides by zero."),
    ("lr", "The learning rate: the Noam schedule (warm up linearly, then fall as 1/√step) or a constant."),
    ("cooldown", "Share of the steps, at the end of the run, over which the learning rate falls in a straight line towards zero (0: none)."),
    ("clip", "Gradients whose global norm exceeds this are scaled down to it (0: never)."),
    ("text", "Task text only: the text the model learns, one character at a time (up to 1 MiB; the last tenth is held out)."),
    ("eval_every", "Score the model on held-out examples every this many steps (0: only at the end)."),
];

#[cfg(test)]
mod tests {
    use super::*;

    fn small(task: &str) -> RunSettings {
        let mut s = RunSettings::defaults(task).unwrap().settings;
        s.steps = 6;
        s.batch = 4;
        s.eval_every = 3;
        s
    }

    #[test]
    fn settings_round_trip_through_the_command_line_form() {
        for task in TASKS {
            let mut d = RunSettings::defaults(task).unwrap();
            if *task == TEXT_TASK {
                assert_eq!(d.settings.text, None);
                d.settings.text = Some("abcabd abc abd, a text to learn.".into());
            }
            let spec = d.settings.to_spec().unwrap();
            let back = RunSettings::from_spec(&spec, d.settings.eval_every).unwrap();
            assert_eq!(back, d.settings, "{task}");
            assert!(d.notes.len() >= 26, "{task}");
        }
    }

    #[test]
    fn reverse_defaults_are_the_shipped_recipe() {
        let d = RunSettings::defaults("reverse").unwrap();
        assert_eq!(d.recipe.as_deref(), Some("reverse.safetensors"));
        let recipe = recipes()
            .into_iter()
            .find(|r| r.file == "reverse.safetensors")
            .unwrap();
        let task = recipe.run.task().unwrap();
        let spec = d.settings.to_spec().unwrap();
        assert_eq!(
            spec.model_config(task.as_ref()).unwrap(),
            recipe.run.model_config(task.as_ref()).unwrap()
        );
        assert_eq!(
            spec.train_options().unwrap(),
            recipe.run.train_options().unwrap()
        );
        // The lab scores the run at the recipe's own cadence, finer than six times a run.
        assert_eq!(d.settings.eval_every, recipe.lab_eval_every());
        assert!(recipe.lab_eval_every() < recipe.run.steps / 6);
        // A task without a shipped recipe is scored six times over its run.
        let copy = RunSettings::defaults("copy").unwrap().settings;
        assert_eq!(copy.eval_every, copy.steps / 6);
    }

    #[test]
    fn a_setting_that_does_not_fit_the_task_is_refused_by_field_with_the_reason() {
        let mut s = small("sentiment");
        s.arch = Some(Arch::DecoderOnly);
        let e = s.to_spec().unwrap_err().to_string();
        assert!(e.contains(": arch: task") && e.contains("class"), "{e}");
        let mut s = small("translate");
        s.len = Some(5);
        let e = s.to_spec().unwrap_err().to_string();
        assert!(e.contains(": len: task") && e.contains("translate"), "{e}");
        let mut s = small("copy");
        s.n_heads = 5;
        let e = s.to_spec().unwrap_err().to_string();
        assert!(e.contains("n_heads") && e.contains("divisible"), "{e}");
        let mut s = small("copy");
        s.lr = LrSettings::Constant { value: 2.0 };
        let e = s.to_spec().unwrap_err().to_string();
        assert!(e.contains(": lr.value: "), "{e}");
        let mut s = small("copy");
        s.adam_beta2 = 1.0;
        let e = s.to_spec().unwrap_err().to_string();
        assert!(e.contains(": adam_beta2: "), "{e}");
        let e = RunSettings::defaults("parity").unwrap_err().to_string();
        assert!(e.contains(": task: unknown"), "{e}");
    }

    #[test]
    fn the_reverse_default_cools_down_over_its_last_400_steps_and_a_share_past_one_is_refused() {
        let s = RunSettings::defaults("reverse").unwrap().settings;
        assert_eq!((s.steps, s.cooldown), (1000, 0.4));
        let opts = s.to_spec().unwrap().train_options().unwrap();
        assert_eq!(opts.cooldown, 400);
        for bad in [1.5, -0.1, f32::NAN] {
            let e = RunSettings {
                cooldown: bad,
                ..s.clone()
            }
            .validate()
            .unwrap_err()
            .to_string();
            assert!(e.contains("cooldown: ") && e.contains("from 0"), "{e}");
        }
    }
}
