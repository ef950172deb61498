//! `tplay random-gpt2`: write a GPT-2-shaped Hugging Face folder with random weights
//! (`config.json`, `model.safetensors`, `tokenizer.json`; `tplay::hf::random`), GPT-2
//! small's shape unless told otherwise: what the benches and the page's real-scale tests
//! load instead of downloading GPT-2.

use std::path::PathBuf;

use tplay::hf::random::{folder, Shape};
use tplay::{Error, Result};

#[derive(clap::Args)]
pub struct Args {
    /// Folder to write (made if missing; its three files are replaced).
    #[arg(long)]
    out: PathBuf,
    #[arg(long, default_value_t = 12)]
    layers: usize,
    #[arg(long, default_value_t = 12)]
    heads: usize,
    #[arg(long, default_value_t = 768)]
    d_model: usize,
    #[arg(long, default_value_t = 1024)]
    positions: usize,
    /// Tokens in the byte-level vocabulary (at least 257).
    #[arg(long, default_value_t = 50257)]
    vocab: usize,
    #[arg(long, default_value_t = 0)]
    seed: u64,
}

pub fn run(a: Args) -> Result<()> {
    let shape = Shape {
        n_layer: a.layers,
        n_head: a.heads,
        n_embd: a.d_model,
        n_positions: a.positions,
        vocab_size: a.vocab,
    };
    let f = folder(shape, a.seed)?;
    let io = |e: std::io::Error| Error::Other(format!("{}: {e}", a.out.display()));
    std::fs::create_dir_all(&a.out).map_err(io)?;
    std::fs::write(a.out.join("config.json"), &f.config_json).map_err(io)?;
    std::fs::write(a.out.join("model.safetensors"), &f.model_safetensors).map_err(io)?;
    std::fs::write(a.out.join("tokenizer.json"), &f.tokenizer_json).map_err(io)?;
    println!(
        "{}: {} bytes of weights, {} bytes of tokenizer",
        a.out.display(),
        f.model_safetensors.len(),
        f.tokenizer_json.len()
    );
    Ok(())
}
