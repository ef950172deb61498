//! Arbitrary text through an arbitrary vocabulary: encoding never panics, every id is in
//! the vocabulary, `<unk>` marks exactly the reported positions, and text the vocabulary
//! covers decodes back to itself (char) or to its words joined by one space (word).
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use tplay::tokenizer::{TokenizerKind, TokenizerSpec, SPECIALS};
use tplay::Tokenizer;

#[derive(Arbitrary, Debug)]
struct Input {
    word: bool,
    tokens: Vec<String>,
    text: String,
    ids: Vec<u32>,
}

fuzz_target!(|inp: Input| {
    let mut tokens: Vec<String> = SPECIALS.iter().map(|s| s.to_string()).collect();
    tokens.extend(inp.tokens);
    let kind = if inp.word { TokenizerKind::Word } else { TokenizerKind::Char };
    let spec = TokenizerSpec { kind, tokens, pad: 0, bos: 1, eos: 2, unk: 3, merges: vec![] };
    let Ok(tok) = Tokenizer::new(spec) else {
        return;
    };
    let enc = tok.encode(&inp.text);
    let v = tok.vocab_size() as u32;
    assert!(enc.ids.iter().all(|&id| id < v));
    let unk: Vec<usize> = (0..enc.ids.len()).filter(|&i| enc.ids[i] == 3).collect();
    assert_eq!(unk, enc.unknown.iter().map(|u| u.0).collect::<Vec<_>>());
    assert!(enc.ids.iter().all(|&id| id == 3 || !tok.is_special(id)));
    if enc.unknown.is_empty() {
        let want = match kind {
            TokenizerKind::Char => inp.text.clone(),
            TokenizerKind::Word => inp.text.split_whitespace().collect::<Vec<_>>().join(" "),
            TokenizerKind::Bpe => unreachable!("this target builds char and word vocabularies"),
        };
        assert_eq!(tok.decode(&enc.ids), want);
    }
    // Any ids decode (unknown ones as `<?id>`), never panic.
    let _ = tok.decode(&inp.ids);
});
