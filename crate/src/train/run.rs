//! A training run described as data: the task, the preset and its overrides, the
//! optimiser's settings. `tplay train` parses its flags into a [`RunSpec`]; the shipped
//! models' recipes are `RunSpec`s too, and [`RunSpec::args`] writes back the exact flags,
//! so a recipe, its command line and its checkpoint can never disagree.

use std::sync::Arc;

use serde::de::DeserializeOwned;

use crate::config::{Arch, ModelConfig};
use crate::error::{Error, Result};
use crate::tasks::{build, Task, TaskOptions, TASKS};

use super::optim::AdamConfig;
use super::schedule::cooldown_steps;
use super::trainer::TrainOptions;

/// Every choice of a training run. `None` keeps the preset's (or the task's) value.
#[derive(Clone, Debug, PartialEq)]
pub struct RunSpec {
    pub task: String,
    /// By default the nano preset of the task's architecture.
    pub preset: Option<String>,
    pub seed: u64,
    pub steps: u64,
    pub batch: usize,
    pub lr_factor: f32,
    pub warmup: u64,
    /// Task length (copy/reverse/sort: longest string; grammar: sequence length).
    pub len: Option<usize>,
    pub pos_encoding: Option<String>,
    pub d_model: Option<usize>,
    pub heads: Option<usize>,
    pub d_ff: Option<usize>,
    /// Layers (each stack of an encoder-decoder).
    pub layers: Option<usize>,
    pub max_len: Option<usize>,
    pub norm: Option<String>,
    pub activation: Option<String>,
    pub score: Option<String>,
    /// Tie W_K to W_Q (the pre-mask score matrix becomes symmetric).
    pub share_qk: bool,
    pub dropout: Option<f32>,
    pub label_smoothing: f32,
    /// Global-norm clipping threshold; 0 turns clipping off.
    pub clip: f32,
    /// The architecture (JSON name); by default the task's own. A task is made for one
    /// architecture, and another one is refused with the reason.
    pub arch: Option<String>,
    /// One LayerNorm at the end of each stack.
    pub final_norm: Option<bool>,
    /// Residual connections around every sublayer.
    pub residual: Option<bool>,
    /// Token embeddings × √d_model before positions are added.
    pub scale_embeddings: Option<bool>,
    pub adam_beta1: f32,
    pub adam_beta2: f32,
    pub adam_eps: f32,
    /// A constant learning rate instead of the Noam schedule (`lr_factor`, `warmup`).
    pub lr_constant: Option<f32>,
    /// The share (0 to 1) of the steps, at the end of the run, over which the rate (either
    /// kind) falls in a straight line towards zero; 0: no cooldown.
    pub cooldown: f32,
    /// Task `text`: the text to learn.
    pub text: Option<Arc<str>>,
}

/// What [`RunSpec::args`] calls the text of a `text` run: `--text-file text.txt` (the text
/// travels with the run, not in its flags; an exported run writes it under this name).
pub const TEXT_FILE_NAME: &str = "text.txt";

impl Default for RunSpec {
    fn default() -> Self {
        RunSpec {
            task: "copy".into(),
            preset: None,
            seed: 0,
            steps: 2000,
            batch: 32,
            lr_factor: 1.0,
            warmup: 200,
            len: None,
            pos_encoding: None,
            d_model: None,
            heads: None,
            d_ff: None,
            layers: None,
            max_len: None,
            norm: None,
            activation: None,
            score: None,
            share_qk: false,
            dropout: None,
            label_smoothing: 0.0,
            clip: 1.0,
            arch: None,
            final_norm: None,
            residual: None,
            scale_embeddings: None,
            adam_beta1: AdamConfig::default().beta1,
            adam_beta2: AdamConfig::default().beta2,
            adam_eps: AdamConfig::default().eps,
            lr_constant: None,
            cooldown: 0.0,
            text: None,
        }
    }
}

/// Parse a config enum from its JSON name, naming the flag on failure.
fn parse_enum<T: DeserializeOwned>(flag: &str, value: &str, known: &str) -> Result<T> {
    serde_json::from_value(serde_json::Value::String(value.to_string())).map_err(|_| {
        Error::Input(format!(
            "--{flag}: unknown value '{value}' (known: {known})"
        ))
    })
}

pub(crate) fn arch_name(arch: Arch) -> &'static str {
    match arch {
        Arch::EncoderOnly => "encoder_only",
        Arch::DecoderOnly => "decoder_only",
        Arch::EncoderDecoder => "encoder_decoder",
    }
}

/// What a task's examples look like, for messages that say why an architecture does not fit.
fn task_shape(task: &dyn Task) -> &'static str {
    match task.arch() {
        Arch::EncoderOnly if task.num_classes() > 0 => {
            "it reads a whole text and answers with one class, so it needs a bidirectional encoder with a classifier"
        }
        Arch::EncoderOnly => {
            "it labels every input token, so it needs a bidirectional encoder with a token-level head"
        }
        Arch::DecoderOnly => {
            "its examples are one stream of tokens to continue, with no separate source for an encoder"
        }
        Arch::EncoderDecoder => {
            "its examples are a source sentence and a separate target, read by an encoder and written by a decoder"
        }
    }
}

impl RunSpec {
    /// The task this run trains on.
    pub fn task(&self) -> Result<Box<dyn Task>> {
        if !TASKS.contains(&self.task.as_str()) {
            return Err(Error::Input(format!(
                "--task: unknown task '{}' (known: {})",
                self.task,
                TASKS.join(", ")
            )));
        }
        build(
            &self.task,
            &TaskOptions {
                len: self.len,
                text: self.text.clone(),
            },
        )
    }

    /// The model's config: the preset, fitted to the task (vocabulary, classes, a max_len
    /// that holds its longest example), with the overrides applied and validated.
    pub fn model_config(&self, task: &dyn Task) -> Result<ModelConfig> {
        let arch = task.arch();
        if let Some(a) = &self.arch {
            let want: Arch = parse_enum("arch", a, "encoder_only, decoder_only, encoder_decoder")?;
            if want != arch {
                return Err(Error::Input(format!(
                    "--arch: task '{}' is made for {} models ({}); {} cannot be trained on it",
                    self.task,
                    arch_name(arch),
                    task_shape(task),
                    arch_name(want)
                )));
            }
        }
        let preset = self.preset.clone().unwrap_or_else(|| {
            match arch {
                Arch::DecoderOnly => "gpt-nano",
                Arch::EncoderOnly => "encoder-nano",
                Arch::EncoderDecoder => "seq2seq-nano",
            }
            .to_string()
        });
        let mut cfg = ModelConfig::preset(&preset, task.tokenizer().vocab_size())?;
        if cfg.arch != arch {
            return Err(Error::Input(format!(
                "--preset: task '{}' needs a {} model and preset '{preset}' is {}",
                self.task,
                arch_name(arch),
                arch_name(cfg.arch)
            )));
        }
        cfg.num_classes = task.num_classes();
        if let Some(p) = &self.pos_encoding {
            cfg.pos_encoding = parse_enum(
                "pos-encoding",
                p,
                "none, sinusoidal, learned, relative, rope, alibi",
            )?;
        }
        if let Some(n) = &self.norm {
            cfg.norm = parse_enum("norm", n, "post_ln, pre_ln, batch_norm, none")?;
        }
        if let Some(a) = &self.activation {
            cfg.activation = parse_enum("activation", a, "relu, gelu")?;
        }
        if let Some(s) = &self.score {
            cfg.score = parse_enum("score", s, "scaled_dot, dot, additive")?;
        }
        if let Some(v) = self.d_model {
            cfg.d_model = v;
        }
        if let Some(v) = self.heads {
            cfg.n_heads = v;
        }
        if let Some(v) = self.d_ff {
            cfg.d_ff = v;
        }
        if let Some(v) = self.layers {
            match arch {
                Arch::EncoderDecoder => {
                    cfg.n_encoder_layers = v;
                    cfg.n_decoder_layers = v;
                }
                _ => cfg.n_layers = v,
            }
        }
        if self.share_qk {
            cfg.share_qk = true;
        }
        if let Some(v) = self.dropout {
            cfg.dropout = v;
        }
        if let Some(v) = self.final_norm {
            cfg.final_norm = v;
        }
        if let Some(v) = self.residual {
            cfg.residual = v;
        }
        if let Some(v) = self.scale_embeddings {
            cfg.scale_embeddings = v;
        }
        cfg.max_len = self.max_len.unwrap_or(cfg.max_len.max(task.max_tokens()));
        cfg.validate()?;
        Ok(cfg)
    }

    /// The trainer's options.
    pub fn train_options(&self) -> Result<TrainOptions> {
        if self.steps == 0 {
            return Err(Error::Input("--steps: train for at least one step".into()));
        }
        if self.batch == 0 {
            return Err(Error::Input(
                "--batch: needs at least one example per step".into(),
            ));
        }
        if !(0.0..1.0).contains(&self.label_smoothing) {
            return Err(Error::Input(format!(
                "--label-smoothing: must be in [0, 1), got {}",
                self.label_smoothing
            )));
        }
        if !(self.lr_factor > 0.0 && self.lr_factor.is_finite()) {
            return Err(Error::Input(format!(
                "--lr-factor: must be positive, got {}",
                self.lr_factor
            )));
        }
        if let Some(lr) = self.lr_constant {
            if !(lr > 0.0 && lr.is_finite() && lr <= 1.0) {
                return Err(Error::Input(format!(
                    "--lr: a constant learning rate must be in (0, 1], got {lr}"
                )));
            }
            let d = RunSpec::default();
            if self.lr_factor != d.lr_factor || self.warmup != d.warmup {
                return Err(Error::Input(
                    "--lr: a constant learning rate has no Noam factor or warmup; drop \
                     --lr-factor and --warmup, or drop --lr to use the Noam schedule"
                        .into(),
                ));
            }
        }
        for (flag, v) in [
            ("adam-beta1", self.adam_beta1),
            ("adam-beta2", self.adam_beta2),
        ] {
            if !(0.0..1.0).contains(&v) {
                return Err(Error::Input(format!(
                    "--{flag}: a moment's decay must be in [0, 1), got {v}"
                )));
            }
        }
        if !(self.adam_eps > 0.0 && self.adam_eps.is_finite() && self.adam_eps <= 1.0) {
            return Err(Error::Input(format!(
                "--adam-eps: must be in (0, 1] (it keeps Adam from dividing by zero), got {}",
                self.adam_eps
            )));
        }
        if !(self.clip >= 0.0 && self.clip.is_finite()) {
            return Err(Error::Input(format!(
                "--clip: must be 0 (off) or positive, got {}",
                self.clip
            )));
        }
        if !(0.0..=1.0).contains(&self.cooldown) {
            return Err(Error::Input(format!(
                "--cooldown: the share of the steps at the end that bring the rate down must be \
                 from 0 (none) to 1 (the whole run), got {}",
                self.cooldown
            )));
        }
        Ok(TrainOptions {
            steps: self.steps,
            batch_size: self.batch,
            lr_factor: self.lr_factor,
            warmup: self.warmup.max(1),
            seed: self.seed,
            label_smoothing: self.label_smoothing,
            clip: (self.clip > 0.0).then_some(self.clip),
            lr_constant: self.lr_constant,
            cooldown: cooldown_steps(self.cooldown, self.steps),
            adam: AdamConfig {
                beta1: self.adam_beta1,
                beta2: self.adam_beta2,
                eps: self.adam_eps,
            },
        })
    }

    /// The `tplay train` flags that describe this run (those that differ from the
    /// defaults), in a fixed order, without `--out`.
    pub fn args(&self) -> Vec<String> {
        let d = RunSpec::default();
        let mut a: Vec<String> = vec!["--task".into(), self.task.clone()];
        let mut push = |flag: &str, value: String| {
            a.push(format!("--{flag}"));
            a.push(value);
        };
        if self.text.is_some() {
            push("text-file", TEXT_FILE_NAME.into());
        }
        if let Some(p) = &self.preset {
            push("preset", p.clone());
        }
        push("seed", self.seed.to_string());
        push("steps", self.steps.to_string());
        if self.batch != d.batch {
            push("batch", self.batch.to_string());
        }
        if self.lr_factor != d.lr_factor {
            push("lr-factor", self.lr_factor.to_string());
        }
        if self.warmup != d.warmup {
            push("warmup", self.warmup.to_string());
        }
        let opt = |v: &Option<usize>| v.map(|x| x.to_string());
        for (flag, value) in [
            ("len", opt(&self.len)),
            ("pos-encoding", self.pos_encoding.clone()),
            ("d-model", opt(&self.d_model)),
            ("heads", opt(&self.heads)),
            ("d-ff", opt(&self.d_ff)),
            ("layers", opt(&self.layers)),
            ("max-len", opt(&self.max_len)),
            ("norm", self.norm.clone()),
            ("activation", self.activation.clone()),
            ("score", self.score.clone()),
            ("dropout", self.dropout.map(|x| x.to_string())),
        ] {
            if let Some(v) = value {
                push(flag, v);
            }
        }
        if self.label_smoothing != d.label_smoothing {
            push("label-smoothing", self.label_smoothing.to_string());
        }
        if self.clip != d.clip {
            push("clip", self.clip.to_string());
        }
        if let Some(a_) = &self.arch {
            push("arch", a_.clone());
        }
        for (flag, v) in [
            ("final-norm", self.final_norm),
            ("residual", self.residual),
            ("scale-embeddings", self.scale_embeddings),
        ] {
            if let Some(v) = v {
                push(flag, v.to_string());
            }
        }
        for (flag, v, dv) in [
            ("adam-beta1", self.adam_beta1, d.adam_beta1),
            ("adam-beta2", self.adam_beta2, d.adam_beta2),
            ("adam-eps", self.adam_eps, d.adam_eps),
        ] {
            if v != dv {
                push(flag, v.to_string());
            }
        }
        if let Some(lr) = self.lr_constant {
            push("lr", lr.to_string());
        }
        if self.cooldown != d.cooldown {
            push("cooldown", self.cooldown.to_string());
        }
        if self.share_qk {
            a.push("--share-qk".into());
        }
        a
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::PosEncoding;

    #[test]
    fn overrides_reach_the_config_and_the_task_sets_vocabulary_and_classes() {
        let spec = RunSpec {
            task: "sentiment".into(),
            pos_encoding: Some("learned".into()),
            layers: Some(1),
            ..RunSpec::default()
        };
        let task = spec.task().unwrap();
        let cfg = spec.model_config(task.as_ref()).unwrap();
        assert_eq!(cfg.arch, Arch::EncoderOnly);
        assert_eq!(cfg.num_classes, 2);
        assert_eq!(cfg.n_layers, 1);
        assert_eq!(cfg.pos_encoding, PosEncoding::Learned);
        assert_eq!(cfg.vocab_size, task.tokenizer().vocab_size());
    }

    #[test]
    fn bad_values_are_refused_naming_the_flag() {
        let bad = RunSpec {
            pos_encoding: Some("xpos".into()),
            ..RunSpec::default()
        };
        let task = bad.task().unwrap();
        let e = bad.model_config(task.as_ref()).unwrap_err().to_string();
        assert!(e.contains("--pos-encoding") && e.contains("xpos"), "{e}");
        let wrong_arch = RunSpec {
            task: "translate".into(),
            preset: Some("gpt-nano".into()),
            ..RunSpec::default()
        };
        let task = wrong_arch.task().unwrap();
        let e = wrong_arch
            .model_config(task.as_ref())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--preset") && e.contains("encoder_decoder"),
            "{e}"
        );
        let e = RunSpec {
            task: "parity".into(),
            ..RunSpec::default()
        }
        .task()
        .err()
        .unwrap()
        .to_string();
        assert!(e.contains("--task") && e.contains("parity"), "{e}");
    }

    #[test]
    fn args_list_only_what_differs_from_the_defaults() {
        let spec = RunSpec {
            task: "grammar".into(),
            seed: 3,
            steps: 10,
            len: Some(64),
            pos_encoding: Some("rope".into()),
            lr_factor: 0.5,
            ..RunSpec::default()
        };
        assert_eq!(
            spec.args().join(" "),
            "--task grammar --seed 3 --steps 10 --lr-factor 0.5 --len 64 --pos-encoding rope"
        );
    }
}
