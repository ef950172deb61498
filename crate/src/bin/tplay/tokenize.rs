//! `tplay tokenize`: text to token ids with a model's tokenizer, printed as JSON
//! `{"ids": [...], "tokens": [...]}` (no special tokens added; `<unk>` positions, if any,
//! under `unknown`).

use std::path::PathBuf;

use serde_json::json;
use tplay::Result;

#[derive(clap::Args)]
pub struct Args {
    /// Checkpoint, or Hugging Face model folder.
    #[arg(long)]
    model: PathBuf,
    /// Text to encode.
    #[arg(long)]
    text: String,
}

pub fn run(args: Args) -> Result<()> {
    let limit = tplay::limits::MAX_TEXT_BYTES;
    if args.text.len() > limit {
        return Err(tplay::Error::Input(format!(
            "--text: {} bytes is above the limit of {limit}",
            args.text.len()
        )));
    }
    let model = tplay::checkpoint::load_file(&args.model)?;
    let tok = &model.tokenizer;
    let enc = tok.encode(&args.text);
    let tokens: Vec<&str> = enc
        .ids
        .iter()
        .map(|&id| tok.token(id).unwrap_or(""))
        .collect();
    let mut out = json!({ "ids": enc.ids, "tokens": tokens });
    if !enc.unknown.is_empty() {
        out["unknown"] = enc
            .unknown
            .iter()
            .map(|(pos, piece)| json!({ "position": pos, "text": piece }))
            .collect();
    }
    println!("{out}");
    Ok(())
}
