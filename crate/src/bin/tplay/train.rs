//! `tplay train --task T --preset P --seed S --steps N --out M.safetensors`: train a model on
//! a toy task, save it as a checkpoint, and print its held-out evaluation as JSON.
//!
//! A progress line goes to stderr; `--log log.jsonl` writes the loss curve (and periodic
//! held-out evaluations) as JSON lines.

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use serde_json::json;
use tplay::train::{evaluate, RunSpec, Trainer};
use tplay::{Error, Result};

#[derive(clap::Args)]
pub struct Args {
    /// The task: copy, reverse, sort, add, grammar, translate, sentiment, tagging, in
    /// Chinese zh-grammar, zh-numerals, zh-sentiment, or text (your own, --text-file).
    #[arg(long)]
    task: String,
    /// Task text: the text to learn, a UTF-8 file of up to 1 MiB (the last tenth is held
    /// out).
    #[arg(long)]
    text_file: Option<PathBuf>,
    /// Model preset (gpt-nano, gpt-pico, encoder-nano, seq2seq-nano); by default the
    /// nano preset of the task's architecture.
    #[arg(long)]
    preset: Option<String>,
    /// Seeds the weights, the example order and the dropout masks.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Training steps.
    #[arg(long, default_value_t = 2000)]
    steps: u64,
    /// Where to write the checkpoint.
    #[arg(long)]
    out: PathBuf,
    /// Write the loss curve and evaluations as JSON lines here.
    #[arg(long)]
    log: Option<PathBuf>,
    /// Override the preset's position encoding (none, sinusoidal, learned, relative, rope, alibi).
    #[arg(long)]
    pos_encoding: Option<String>,
    /// Noam schedule factor.
    #[arg(long, default_value_t = 1.0)]
    lr_factor: f32,
    /// Noam warmup steps.
    #[arg(long, default_value_t = 200)]
    warmup: u64,
    /// Examples per step.
    #[arg(long, default_value_t = 32)]
    batch: usize,
    /// Task length: longest string for copy/reverse/sort, sequence length for grammar and
    /// zh-grammar.
    #[arg(long)]
    len: Option<usize>,
    /// Override d_model.
    #[arg(long)]
    d_model: Option<usize>,
    /// Override n_heads.
    #[arg(long)]
    heads: Option<usize>,
    /// Override d_ff.
    #[arg(long)]
    d_ff: Option<usize>,
    /// Override the number of layers (each stack of an encoder-decoder).
    #[arg(long)]
    layers: Option<usize>,
    /// Override max_len (the longest input the model accepts).
    #[arg(long)]
    max_len: Option<usize>,
    /// Override the norm (post_ln, pre_ln, batch_norm, none).
    #[arg(long)]
    norm: Option<String>,
    /// Override the activation (relu, gelu).
    #[arg(long)]
    activation: Option<String>,
    /// Override the score function (scaled_dot, dot, additive).
    #[arg(long)]
    score: Option<String>,
    /// Tie the key projection to the query projection (W_K = W_Q): every head's score
    /// matrix q_i·k_j is then symmetric before masking.
    #[arg(long)]
    share_qk: bool,
    /// Override the dropout probability used in train mode.
    #[arg(long)]
    dropout: Option<f32>,
    /// Cross-entropy label smoothing.
    #[arg(long, default_value_t = 0.0)]
    label_smoothing: f32,
    /// Global gradient-norm clipping threshold; 0 turns clipping off.
    #[arg(long, default_value_t = 1.0)]
    clip: f32,
    /// The architecture (encoder_only, decoder_only, encoder_decoder); by default the
    /// task's own, and another one is refused with the reason.
    #[arg(long)]
    arch: Option<String>,
    /// One LayerNorm at the end of each stack (true or false; default: the preset's).
    #[arg(long)]
    final_norm: Option<bool>,
    /// Residual connections around every sublayer (true or false; default true).
    #[arg(long)]
    residual: Option<bool>,
    /// Multiply token embeddings by √d_model (true or false; default true).
    #[arg(long)]
    scale_embeddings: Option<bool>,
    /// Adam's β₁.
    #[arg(long, default_value_t = 0.9)]
    adam_beta1: f32,
    /// Adam's β₂.
    #[arg(long, default_value_t = 0.98)]
    adam_beta2: f32,
    /// Adam's ε.
    #[arg(long, default_value_t = 1e-9)]
    adam_eps: f32,
    /// A constant learning rate instead of the Noam schedule (--lr-factor, --warmup).
    #[arg(long)]
    lr: Option<f32>,
    /// Bring the learning rate (Noam or --lr) down in a straight line towards zero over
    /// this share of the steps at the end of the run (0.4: the last 40 %; 0: no cooldown).
    #[arg(long, default_value_t = 0.0)]
    cooldown: f32,
    /// Held-out examples (grammar: sampled sentences) for the evaluation.
    #[arg(long, default_value_t = 500)]
    eval_examples: usize,
    /// Also evaluate every this many steps (0: only at the end).
    #[arg(long, default_value_t = 0)]
    eval_every: u64,
    /// Threads to train on (0: one per core). The model trained is the same to the bit
    /// for any count: only independent work is split (sequences, rows, elements).
    #[arg(long, default_value_t = 1)]
    threads: usize,
}

impl Args {
    /// The run these flags describe.
    fn spec(&self) -> Result<RunSpec> {
        Ok(RunSpec {
            task: self.task.clone(),
            preset: self.preset.clone(),
            seed: self.seed,
            steps: self.steps,
            batch: self.batch,
            lr_factor: self.lr_factor,
            warmup: self.warmup,
            len: self.len,
            pos_encoding: self.pos_encoding.clone(),
            d_model: self.d_model,
            heads: self.heads,
            d_ff: self.d_ff,
            layers: self.layers,
            max_len: self.max_len,
            norm: self.norm.clone(),
            activation: self.activation.clone(),
            score: self.score.clone(),
            share_qk: self.share_qk,
            dropout: self.dropout,
            label_smoothing: self.label_smoothing,
            clip: self.clip,
            arch: self.arch.clone(),
            final_norm: self.final_norm,
            residual: self.residual,
            scale_embeddings: self.scale_embeddings,
            adam_beta1: self.adam_beta1,
            adam_beta2: self.adam_beta2,
            adam_eps: self.adam_eps,
            lr_constant: self.lr,
            cooldown: self.cooldown,
            text: match &self.text_file {
                Some(p) => Some(read_text(p)?.into()),
                None => None,
            },
        })
    }
}

/// A text file for task text: UTF-8, at most the task's limit (checked before reading it all).
fn read_text(path: &std::path::Path) -> Result<String> {
    use tplay::tasks::text::MAX_TEXT_BYTES;
    let what = |e: std::io::Error| {
        Error::Input(format!("--text-file: cannot read {}: {e}", path.display()))
    };
    let size = std::fs::metadata(path).map_err(what)?.len();
    if size > MAX_TEXT_BYTES as u64 {
        return Err(Error::Input(format!(
            "--text-file: {} is {size} bytes, more than the {MAX_TEXT_BYTES} bytes (1 MiB) a text may have",
            path.display()
        )));
    }
    let bytes = std::fs::read(path).map_err(what)?;
    String::from_utf8(bytes).map_err(|e| {
        Error::Input(format!(
            "--text-file: {} is not UTF-8 text (invalid bytes at byte {}); save it as UTF-8",
            path.display(),
            e.utf8_error().valid_up_to()
        ))
    })
}

pub fn run(args: Args) -> Result<()> {
    tplay::par::set_threads(match args.threads {
        0 => tplay::par::available(),
        n => n,
    });
    // The whole run on the pool: its serial parts on one of the pool's threads.
    tplay::par::install(|| train(args))
}

fn train(args: Args) -> Result<()> {
    let spec = args.spec()?;
    let task = spec.task()?;
    let cfg = spec.model_config(task.as_ref())?;
    let opts = spec.train_options()?;
    let mut log = match &args.log {
        Some(p) => Some(std::io::BufWriter::new(std::fs::File::create(p).map_err(
            |e| Error::Input(format!("--log: cannot create {}: {e}", p.display())),
        )?)),
        None => None,
    };
    let mut write_log = |line: serde_json::Value| -> Result<()> {
        if let Some(w) = log.as_mut() {
            writeln!(w, "{line}").map_err(|e| Error::Other(format!("--log: cannot write: {e}")))?;
        }
        Ok(())
    };
    let mut trainer = Trainer::new(task.as_ref(), cfg, opts)?;
    let params = trainer.model.param_count();
    let start = Instant::now();
    let mut last_print = start;
    let mut smoothed = None::<f32>;
    for step in 1..=args.steps {
        let s = trainer.train_step()?;
        smoothed = Some(match smoothed {
            None => s.loss,
            Some(m) => 0.95 * m + 0.05 * s.loss,
        });
        let elapsed = start.elapsed().as_secs_f64();
        let rate = step as f64 / elapsed.max(1e-9);
        write_log(json!({
            "step": step, "loss": s.loss, "lr": s.lr, "grad_norm": s.grad_norm,
            "elapsed_s": (elapsed * 1000.0).round() / 1000.0,
        }))?;
        if last_print.elapsed().as_secs_f64() > 0.25 || step == args.steps {
            eprint!(
                "\rstep {step}/{}  loss {:.4}  lr {:.2e}  {rate:.1} steps/s   ",
                args.steps,
                smoothed.unwrap_or(s.loss),
                s.lr
            );
            last_print = Instant::now();
        }
        if args.eval_every > 0 && step % args.eval_every == 0 && step < args.steps {
            let report = evaluate(
                &trainer.model,
                task.as_ref(),
                args.eval_examples.min(200),
                1,
            )?;
            write_log(json!({ "step": step, "eval": report }))?;
        }
    }
    eprintln!();
    let seconds = start.elapsed().as_secs_f64();
    tplay::checkpoint::save_file(&trainer.model, &args.out)?;
    let report = evaluate(&trainer.model, task.as_ref(), args.eval_examples, 1)?;
    write_log(json!({ "step": args.steps, "eval": report }))?;
    if let Some(w) = log.as_mut() {
        w.flush()
            .map_err(|e| Error::Other(format!("--log: cannot write: {e}")))?;
    }
    println!(
        "{}",
        json!({
            "task": args.task,
            "out": args.out.display().to_string(),
            "seed": args.seed,
            "steps": args.steps,
            "seconds": (seconds * 10.0).round() / 10.0,
            "steps_per_s": (args.steps as f64 / seconds * 10.0).round() / 10.0,
            "parameters": params,
            "config": trainer.model.config,
            "eval": report,
        })
    );
    Ok(())
}
