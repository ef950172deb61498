//! `tplay forward`: one forward pass over one sequence, printed as JSON.
//!
//! `logits` is (T, V) (`class_logits` (num_classes) for a classifier); with `--trace`,
//! `attention` maps each attention kind to its probabilities (L, H, T, S).

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::{json, Value};
use tplay::backend::Backend;
use tplay::model::forward::Batch;
use tplay::model::{ForwardOptions, HeadRef, Model};
use tplay::tensor::Tensor;
use tplay::{Error, Result};

#[derive(clap::Args)]
pub struct Args {
    /// Checkpoint to run.
    #[arg(long)]
    model: PathBuf,
    /// Token ids, comma separated (e.g. 1,5,9).
    #[arg(long, conflicts_with = "text", required_unless_present = "text")]
    tokens: Option<String>,
    /// Text, encoded with the model's tokenizer.
    #[arg(long)]
    text: Option<String>,
    /// Put <bos> before the tokens (as the shipped models were trained).
    #[arg(long)]
    bos: bool,
    /// Source token ids of an encoder-decoder model.
    #[arg(long, conflicts_with = "src_text")]
    src_tokens: Option<String>,
    /// Source text of an encoder-decoder model.
    #[arg(long)]
    src_text: Option<String>,
    /// Where to run: cpu or gpu.
    #[arg(long, default_value = "cpu")]
    backend: String,
    /// Let every position see the future (decoders are causal by default).
    #[arg(long, conflicts_with = "causal_mask")]
    no_causal_mask: bool,
    /// Hide the future from an encoder too (encoders are not causal by default).
    #[arg(long)]
    causal_mask: bool,
    /// Let attention see pad tokens.
    #[arg(long)]
    no_padding_mask: bool,
    /// Do not divide scaled-dot scores by √d_head.
    #[arg(long)]
    no_scale: bool,
    /// Zero one head's output: SITE.LAYER.HEAD with SITE encoder_self, decoder_self or cross
    /// (the page's URL spells heads the same way; the older SITE:LAYER:HEAD still reads).
    /// Repeat for several heads.
    #[arg(long, value_name = "SITE.LAYER.HEAD")]
    ablate: Vec<String>,
    /// Also print attention probabilities per layer and head.
    #[arg(long)]
    trace: bool,
}

fn parse_ids(s: &str, what: &str) -> Result<Vec<u32>> {
    s.split(',')
        .map(|p| p.trim())
        .filter(|p| !p.is_empty())
        .map(|p| {
            p.parse::<u32>()
                .map_err(|_| Error::Input(format!("{what}: '{p}' is not a token id")))
        })
        .collect()
}

fn parse_head(s: &str) -> Result<HeadRef> {
    HeadRef::parse(s).ok_or_else(|| {
        Error::Input(format!(
            "--ablate '{s}': expected SITE.LAYER.HEAD, e.g. decoder_self.0.1"
        ))
    })
}

/// Token ids from `--tokens` or `--text`, with the positions the tokenizer could not express.
fn input_ids(
    model: &Model,
    ids: &Option<String>,
    text: &Option<String>,
    what: &str,
) -> Result<(Vec<u32>, Value)> {
    match (ids, text) {
        (Some(ids), _) => Ok((parse_ids(ids, what)?, json!([]))),
        (None, Some(text)) => {
            let enc = model.tokenizer.encode(text);
            let unknown = enc
                .unknown
                .iter()
                .map(|(pos, piece)| json!({ "position": pos, "text": piece }))
                .collect();
            Ok((enc.ids, Value::Array(unknown)))
        }
        (None, None) => Ok((vec![], json!([]))),
    }
}

/// A (1, X, …) tensor without its batch dimension, as nested JSON arrays.
fn nested(t: &Tensor, skip_batch: bool) -> Value {
    fn go(shape: &[usize], data: &[f32]) -> Value {
        match shape {
            [] => json!(data[0]),
            [_] => json!(data),
            [n, rest @ ..] => {
                let step = data.len() / n.max(&1);
                Value::Array(
                    (0..*n)
                        .map(|i| go(rest, &data[i * step..(i + 1) * step]))
                        .collect(),
                )
            }
        }
    }
    let shape = if skip_batch {
        &t.shape[1..]
    } else {
        &t.shape[..]
    };
    go(shape, &t.data)
}

pub fn run(args: Args) -> Result<()> {
    let model = tplay::checkpoint::load_file(&args.model)?;
    let (mut ids, mut unknown) = input_ids(&model, &args.tokens, &args.text, "--tokens")?;
    if args.bos {
        ids.insert(0, model.tokenizer.spec.bos);
        // positions of unknown pieces move one to the right
        for u in unknown.as_array_mut().into_iter().flatten() {
            u["position"] = json!(u["position"].as_u64().unwrap_or(0) + 1);
        }
    }
    let mut batch = Batch::single(&ids)?;
    let mut src_unknown = json!([]);
    if args.src_tokens.is_some() || args.src_text.is_some() {
        let (src, unk) = input_ids(&model, &args.src_tokens, &args.src_text, "--src-tokens")?;
        batch = batch.with_source(vec![src])?;
        src_unknown = unk;
    }
    let causal = match (args.no_causal_mask, args.causal_mask) {
        (true, _) => Some(false),
        (_, true) => Some(true),
        _ => None,
    };
    let opts = ForwardOptions {
        causal,
        padding_mask: !args.no_padding_mask,
        scale: !args.no_scale,
        ablate: args
            .ablate
            .iter()
            .map(|s| parse_head(s))
            .collect::<Result<_>>()?,
        trace_attention: args.trace,
        ..ForwardOptions::default()
    };
    let backend = Backend::from_name_blocking(&args.backend)?;
    let trace = pollster::block_on(backend.forward(&model, &batch, &opts))?;

    let mut out = serde_json::Map::new();
    out.insert("backend".into(), json!(backend.name()));
    out.insert("tokens".into(), json!(ids));
    out.insert(
        "token_text".into(),
        json!(ids
            .iter()
            .map(|&i| model.tokenizer.decode(&[i]))
            .collect::<Vec<_>>()),
    );
    out.insert("unknown".into(), unknown);
    if let Some(src) = &batch.src_tokens {
        out.insert("src_tokens".into(), json!(src));
        out.insert("src_unknown".into(), src_unknown);
    }
    match &trace.class_logits {
        Some(c) => out.insert("class_logits".into(), nested(c, true)),
        None => out.insert("logits".into(), nested(&trace.logits, true)),
    };
    if args.trace {
        // site → [L][H][T][S]
        let mut by_site: BTreeMap<&str, Vec<Value>> = BTreeMap::new();
        for a in &trace.attention {
            by_site
                .entry(a.site.name())
                .or_default()
                .push(nested(&a.probs, true));
        }
        out.insert("attention".into(), json!(by_site));
    }
    println!("{}", Value::Object(out));
    Ok(())
}
