//! `tplay`: the command-line face of the same core the playground runs.
//! Every command prints JSON on stdout; a bad argument exits non-zero with one line on stderr.

mod forward;
mod generate;
mod info;
mod random_gpt2;
mod tokenize;
mod train;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "tplay",
    version,
    about = "Run, inspect, generate with and train tiny transformers"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// One forward pass; prints logits (and, with --trace, attention probabilities) as JSON.
    Forward(forward::Args),
    /// Describe a checkpoint: config, vocabulary, parameter counts.
    Info(info::Args),
    /// Generate tokens from a prompt, streaming them as they come.
    Generate(generate::Args),
    /// Train a model on a toy task and save it as a checkpoint.
    Train(train::Args),
    /// Encode text with a model's tokenizer; prints {"ids": [...], "tokens": [...]}.
    Tokenize(tokenize::Args),
    /// Write a GPT-2-shaped Hugging Face folder with random weights (GPT-2 small's shape by default).
    RandomGpt2(random_gpt2::Args),
}

fn main() {
    tplay::heap::keep_freed_memory();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Forward(a) => forward::run(a),
        Command::Info(a) => info::run(a),
        Command::Generate(a) => generate::run(a),
        Command::Train(a) => train::run(a),
        Command::Tokenize(a) => tokenize::run(a),
        Command::RandomGpt2(a) => random_gpt2::run(a),
    };
    if let Err(e) = result {
        eprintln!("tplay: {e}");
        std::process::exit(1);
    }
}
