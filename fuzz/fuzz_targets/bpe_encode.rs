//! Arbitrary text through a byte-level BPE (the GPT-2 fixture's, trained by `tokenizers`):
//! encoding never panics, every id is in the vocabulary, nothing is unknown, and decoding
//! gives back exactly the text (byte-level BPE loses nothing).
#![no_main]

use libfuzzer_sys::fuzz_target;
use tplay::hf::HfFiles;

const CONFIG: &[u8] = include_bytes!("../../tests/fixtures/gpt2/prefix_tied/config.json");
const WEIGHTS: &[u8] = include_bytes!("../../tests/fixtures/gpt2/prefix_tied/model.safetensors");
const TOKENIZER: &[u8] = include_bytes!("../../tests/fixtures/gpt2/tokenizer/tokenizer.json");

fuzz_target!(|text: &str| {
    thread_local! {
        static MODEL: tplay::model::Model = tplay::hf::load(&HfFiles {
            config_json: CONFIG,
            model_safetensors: WEIGHTS,
            tokenizer_json: Some(TOKENIZER),
            ..HfFiles::default()
        })
        .expect("the fixture loads");
    }
    MODEL.with(|m| {
        let tok = &m.tokenizer;
        let enc = tok.encode(text);
        assert!(enc.unknown.is_empty());
        let v = tok.vocab_size() as u32;
        assert!(enc.ids.iter().all(|&id| id < v));
        assert_eq!(tok.decode(&enc.ids), text);
    });
});
