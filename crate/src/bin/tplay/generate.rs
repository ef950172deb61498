//! `tplay generate`: generate tokens after a prompt, streaming them as they come.
//!
//! Text mode prints each new token as soon as it is chosen (beam search prints its
//! answer when the search ends: until then the best hypothesis can still change).
//! `--json` prints one JSON object per step (`"type": "step"`, the core's step record:
//! candidates, attention over the cache, cache length, time, FLOPs, beams) and a last
//! line `"type": "summary"`.

use std::io::Write;
use std::path::PathBuf;

use serde_json::{json, Value};
use tplay::backend::Backend;
use tplay::config::Arch;
use tplay::generate::{GenerateOptions, Generator, LengthPenalty, Sampling, Strategy};
use tplay::model::Model;
use tplay::tokenizer::TokenizerKind;
use tplay::{Error, Result};

#[derive(clap::Args)]
pub struct Args {
    /// Checkpoint to generate with (decoder-only or encoder-decoder).
    #[arg(long)]
    model: PathBuf,
    /// Text the generated tokens follow; <bos> is put in front of it.
    #[arg(long, default_value = "")]
    prompt: String,
    /// Source text of an encoder-decoder model (what it translates, reverses, …).
    #[arg(long)]
    src: Option<String>,
    /// greedy, sample or beam. Default: sample when a sampling knob is given, beam when a
    /// beam knob is given, greedy otherwise.
    #[arg(long, value_parser = ["greedy", "sample", "beam"])]
    strategy: Option<String>,
    /// Sampling temperature τ ≥ 0 (0 is greedy).
    #[arg(long, allow_negative_numbers = true)]
    temperature: Option<f32>,
    /// Sample from the K most probable tokens only.
    #[arg(long)]
    top_k: Option<usize>,
    /// Sample from the smallest set of most probable tokens whose mass reaches P.
    #[arg(long, allow_negative_numbers = true)]
    top_p: Option<f32>,
    /// Hypotheses beam search keeps.
    #[arg(long)]
    beam_width: Option<usize>,
    /// Length penalty α: finished hypotheses are compared by log p / lp(len).
    #[arg(long, allow_negative_numbers = true)]
    length_penalty: Option<f64>,
    /// lp(len) = ((5 + len) / 6)^α (gnmt) or len^α (power).
    #[arg(long, value_parser = ["gnmt", "power"], default_value = "gnmt")]
    length_penalty_form: String,
    /// Most tokens to generate.
    #[arg(long, default_value_t = 32)]
    max_tokens: usize,
    /// Seed of the sampling draws: the same seed gives the same tokens.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Recompute the whole sequence at every step instead of keeping a KV cache.
    #[arg(long)]
    no_cache: bool,
    /// Where to run: cpu or gpu (both keep the KV cache where they compute, unless
    /// --no-cache).
    #[arg(long, default_value = "cpu")]
    backend: String,
    /// Print one JSON object per step and a summary line.
    #[arg(long)]
    json: bool,
    /// Candidates listed per step in --json output.
    #[arg(long, default_value_t = 5)]
    candidates: usize,
}

/// The strategy the flags ask for, or a one-line reason they do not fit together.
fn strategy(a: &Args) -> Result<Strategy> {
    let sampling_knobs = a.temperature.is_some() || a.top_k.is_some() || a.top_p.is_some();
    let beam_knobs = a.beam_width.is_some() || a.length_penalty.is_some();
    let name = match (a.strategy.as_deref(), sampling_knobs, beam_knobs) {
        (_, true, true) => {
            return Err(Error::Input(
                "sampling flags (--temperature, --top-k, --top-p) and beam flags \
                 (--beam-width, --length-penalty) do not mix"
                    .into(),
            ))
        }
        (Some(s), _, _) => s,
        (None, true, _) => "sample",
        (None, _, true) => "beam",
        (None, false, false) => "greedy",
    };
    if sampling_knobs && name != "sample" {
        return Err(Error::Input(format!(
            "--temperature, --top-k and --top-p apply to --strategy sample, not {name}"
        )));
    }
    if beam_knobs && name != "beam" {
        return Err(Error::Input(format!(
            "--beam-width and --length-penalty apply to --strategy beam, not {name}"
        )));
    }
    let s = match name {
        "greedy" => Strategy::Greedy,
        "sample" => Strategy::Sample(Sampling {
            temperature: a.temperature.unwrap_or(1.0),
            top_k: a.top_k,
            top_p: a.top_p,
        }),
        _ => {
            let alpha = a.length_penalty.unwrap_or(0.0);
            Strategy::Beam {
                width: a.beam_width.unwrap_or(4),
                length_penalty: if alpha == 0.0 {
                    LengthPenalty::None
                } else if a.length_penalty_form == "power" {
                    LengthPenalty::Power { alpha }
                } else {
                    LengthPenalty::Gnmt { alpha }
                },
            }
        }
    };
    s.validate()?;
    Ok(s)
}

/// Encode `text`, telling the user on stderr where the vocabulary fell short.
/// Returns the ids and the unknown pieces as JSON.
fn encode(model: &Model, text: &str, flag: &str) -> (Vec<u32>, Value) {
    let enc = model.tokenizer.encode(text);
    for (pos, piece) in &enc.unknown {
        eprintln!(
            "tplay: note: {flag} token {pos} ({piece:?}) is not in the vocabulary; it became <unk>"
        );
    }
    let unknown = enc
        .unknown
        .iter()
        .map(|(pos, piece)| json!({ "position": pos, "text": piece }))
        .collect();
    (enc.ids, Value::Array(unknown))
}

fn emit(out: &mut impl Write, text: &str) -> Result<()> {
    out.write_all(text.as_bytes())
        .and_then(|_| out.flush())
        .map_err(|e| Error::Other(format!("cannot write to stdout: {e}")))
}

pub fn run(args: Args) -> Result<()> {
    let strategy = strategy(&args)?;
    let model = tplay::checkpoint::load_file(&args.model)?;
    let spec = model.tokenizer.spec.clone();
    let (src, src_unknown) = match (&args.src, model.config.arch) {
        (Some(s), Arch::EncoderDecoder) => {
            let (ids, unk) = encode(&model, s, "--src");
            (Some(ids), unk)
        }
        (None, Arch::EncoderDecoder) => {
            return Err(Error::Input(
                "this is an encoder_decoder model: give the source with --src".into(),
            ))
        }
        (Some(_), _) => {
            return Err(Error::Input(
                "--src is for encoder_decoder models; this one has no encoder to read it".into(),
            ))
        }
        (None, _) => (None, json!([])),
    };
    let (text_ids, unknown) = encode(&model, &args.prompt, "--prompt");
    let prompt: Vec<u32> = std::iter::once(spec.bos).chain(text_ids).collect();
    let backend = Backend::from_name_blocking(&args.backend)?;
    let backend_name = backend.name();
    let opts = GenerateOptions {
        strategy,
        seed: args.seed,
        max_new_tokens: args.max_tokens,
        use_cache: !args.no_cache,
        top_candidates: args.candidates,
        ..GenerateOptions::default()
    };
    let mut gen = Generator::new(&model, backend, prompt, src.clone(), opts)?;

    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let word_level = spec.kind == TokenizerKind::Word;
    let mut printed = 0usize;
    let bytes_level = spec.kind == TokenizerKind::Bpe;
    let (mut generated, mut shown) = (Vec::<u32>::new(), String::new());
    while let Some(step) = pollster::block_on(gen.step())? {
        if args.json {
            let mut v = serde_json::to_value(&step)
                .map_err(|e| Error::Other(format!("cannot write a step as JSON: {e}")))?;
            v["type"] = json!("step");
            emit(&mut out, &format!("{v}\n"))?;
        } else if let Some(tok) = step.token {
            if tok != spec.eos && bytes_level {
                // A character may span several byte tokens: print only whole characters.
                generated.push(tok);
                let text = model.tokenizer.decode(&generated);
                if !text.ends_with('\u{FFFD}') {
                    emit(&mut out, &text[shown.len().min(text.len())..])?;
                    shown = text;
                }
            } else if tok != spec.eos {
                let piece = model.tokenizer.decode(&[tok]);
                let sep = if word_level && printed > 0 { " " } else { "" };
                emit(&mut out, &format!("{sep}{piece}"))?;
                printed += 1;
            }
        }
    }
    let summary = gen.summary();
    if args.json {
        let mut v = serde_json::to_value(&summary)
            .map_err(|e| Error::Other(format!("cannot write the summary as JSON: {e}")))?;
        v["type"] = json!("summary");
        v["backend"] = json!(backend_name);
        v["strategy"] = json!(strategy);
        v["seed"] = json!(args.seed);
        v["unknown"] = unknown;
        if let Some(src) = src {
            v["src"] = json!(src);
            v["src_unknown"] = src_unknown;
        }
        emit(&mut out, &format!("{v}\n"))?;
    } else if matches!(strategy, Strategy::Beam { .. }) {
        emit(&mut out, &format!("{}\n", summary.text))?;
    } else {
        if bytes_level {
            // Bytes of a character the generation stopped inside of.
            let text = model.tokenizer.decode(&generated);
            emit(&mut out, text.get(shown.len()..).unwrap_or_default())?;
        }
        emit(&mut out, "\n")?;
    }
    Ok(())
}
