//! A Hugging Face GPT-2 folder with one file replaced by arbitrary bytes, or with arbitrary
//! bytes written into it: loading never panics and never allocates past the size budget; a
//! folder that loads encodes text to ids of its vocabulary and runs a forward pass.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use tplay::hf::HfFiles;
use tplay::model::forward::Batch;
use tplay::model::ForwardOptions;

const CONFIG: &[u8] = include_bytes!("../../tests/fixtures/gpt2/prefix_tied/config.json");
const WEIGHTS: &[u8] = include_bytes!("../../tests/fixtures/gpt2/prefix_tied/model.safetensors");
const TOKENIZER: &[u8] = include_bytes!("../../tests/fixtures/gpt2/tokenizer/tokenizer.json");
const VOCAB: &[u8] = include_bytes!("../../tests/fixtures/gpt2/tokenizer/vocab.json");
const MERGES: &[u8] = include_bytes!("../../tests/fixtures/gpt2/tokenizer/merges.txt");

#[derive(Arbitrary, Debug)]
struct Input {
    /// Low 3 bits: which file (config, weights, tokenizer.json, vocab.json, merges.txt);
    /// bit 6: the vocab.json + merges.txt pair instead of tokenizer.json; bit 7: write `data`
    /// into the file at `at` instead of replacing it.
    which: u8,
    at: u32,
    data: Vec<u8>,
}

fuzz_target!(|inp: Input| {
    let mut files = [CONFIG, WEIGHTS, TOKENIZER, VOCAB, MERGES].map(|f| f.to_vec());
    let w = (inp.which & 7) as usize % files.len();
    if inp.which & 0x80 == 0 {
        files[w] = inp.data.clone();
    } else {
        let f = &mut files[w];
        let at = inp.at as usize % (f.len() + 1);
        let end = (at + inp.data.len()).min(f.len());
        f.splice(at..end, inp.data.iter().copied());
    }
    let pair = inp.which & 0x40 != 0;
    let hf = HfFiles {
        config_json: &files[0],
        model_safetensors: &files[1],
        tokenizer_json: (!pair).then_some(&files[2][..]),
        vocab_json: pair.then_some(&files[3][..]),
        merges_txt: pair.then_some(&files[4][..]),
    };
    let Ok(model) = tplay::hf::load(&hf) else {
        return;
    };
    assert!(model.param_count() as u64 <= tplay::limits::MAX_PARAMS);
    let text: String = String::from_utf8_lossy(&inp.data).chars().take(64).collect();
    let ids = model.tokenizer.encode(&text).ids;
    let v = model.config.vocab_size as u32;
    assert!(ids.iter().all(|&id| id < v));
    let _ = model.tokenizer.decode(&ids);
    let n = ids.len().min(model.config.max_len).min(16);
    if n > 0 {
        let batch = Batch::single(&ids[..n]).expect("ids of the vocabulary make a batch");
        let trace = model.forward(&batch, &ForwardOptions::default());
        if let Ok(t) = trace {
            assert_eq!(t.logits.shape, vec![1, n, model.config.vocab_size]);
        }
    }
});
