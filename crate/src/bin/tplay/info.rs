//! `tplay info --model M.safetensors`: what a checkpoint holds, as JSON.

use std::path::PathBuf;

use serde_json::json;
use tplay::model::ParamKind;

#[derive(clap::Args)]
pub struct Args {
    /// Checkpoint to describe.
    #[arg(long)]
    model: PathBuf,
}

pub fn run(args: Args) -> tplay::Result<()> {
    let model = tplay::checkpoint::load_file(&args.model)?;
    let mut tensors = vec![];
    let mut trained = 0usize;
    let mut buffers = 0usize;
    model.visit_params(&mut |name, t, kind| {
        match kind {
            ParamKind::Trained => trained += t.numel(),
            ParamKind::Buffer => buffers += t.numel(),
        }
        tensors.push(json!({ "name": name, "shape": t.shape }));
    });
    let tok = &model.tokenizer.spec;
    let out = json!({
        "config": model.config,
        "d_head": model.config.d_head(),
        "parameters": trained,
        "buffers": buffers,
        "tokenizer": {
            "kind": tok.kind,
            "vocab_size": tok.tokens.len(),
            "tokens": tok.tokens,
            "pad": tok.pad, "bos": tok.bos, "eos": tok.eos, "unk": tok.unk,
        },
        "tensors": tensors,
    });
    println!("{out}");
    Ok(())
}
