//! nanoGPT checkpoints exported by `tools/nanogpt/export.py` (fixtures made by
//! `tests/fixtures/nanogpt/make.py`): the logits nanoGPT's own forward pass gave, within 1e-5,
//! for a character-level model (the playground's checkpoint, `bias=False`, compiled) and a
//! model on a byte-level BPE (a Hugging Face folder, biases, a padded vocabulary).

mod support;

use std::path::PathBuf;

use pollster::block_on;
use serde_json::Value;
use tplay::backend::Backend;
use tplay::generate::{GenerateOptions, Generator, Strategy};
use tplay::model::forward::Batch;
use tplay::model::ForwardOptions;

fn root() -> PathBuf {
    support::fixtures::dir().join("nanogpt")
}

/// Worst |ours − nanoGPT| over the exported vocabulary of every position of every sequence.
fn worst(path: PathBuf, dir: &str) -> (f32, tplay::model::Model) {
    let model = tplay::checkpoint::load_file(&path).unwrap();
    let exp: Value =
        serde_json::from_slice(&std::fs::read(root().join(dir).join("expected.json")).unwrap())
            .unwrap();
    let keep = exp["vocab"].as_u64().unwrap() as usize;
    let v = model.config.vocab_size;
    let mut worst = 0f32;
    let mut cases = 0;
    for s in exp["sequences"].as_array().unwrap() {
        let tokens: Vec<u32> = s["tokens"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap() as u32)
            .collect();
        let (_, want) = support::fixtures::tensor(&s["logits"]);
        assert_eq!(want.len(), tokens.len() * keep);
        let trace = block_on(tplay::backend::cpu::forward(
            &model,
            &Batch::single(&tokens).unwrap(),
            &ForwardOptions::default(),
        ))
        .unwrap();
        let got = &trace.logits.data;
        for (t, row) in want.chunks(keep).enumerate() {
            for (j, w) in row.iter().enumerate() {
                worst = worst.max((got[t * v + j] - w).abs());
                cases += 1;
            }
        }
    }
    assert!(cases > 100, "only {cases} logits compared");
    (worst, model)
}

#[test]
fn a_character_level_nanogpt_model_gives_nanogpts_logits() {
    let (d, model) = worst(root().join("char/model.safetensors"), "char");
    println!("char: max |Δlogit| = {d:e}");
    assert!(d < 1e-5, "{d}");
    // The specials come after the model's 27 characters and are never written.
    assert_eq!(model.tokenizer.spec.pad, 27);
    let mut gen = Generator::new(
        &model,
        Backend::Cpu,
        model.tokenizer.encode("\nthe").ids,
        None,
        GenerateOptions {
            strategy: Strategy::Greedy,
            max_new_tokens: 20,
            ..GenerateOptions::default()
        },
    )
    .unwrap();
    while let Some(step) = block_on(gen.step()).unwrap() {
        let t = step.token.unwrap_or(0);
        assert!(t < 27, "a special token was written: {t}");
    }
}

#[test]
fn a_bpe_nanogpt_model_exports_to_a_hugging_face_folder_with_its_logits() {
    let (d, model) = worst(root().join("bpe"), "bpe");
    println!("bpe: max |Δlogit| = {d:e}");
    assert!(d < 1e-5, "{d}");
    // The padded rows (576 in nanoGPT) are cut to the tokenizer's 512.
    assert_eq!(model.config.vocab_size, 512);
}
