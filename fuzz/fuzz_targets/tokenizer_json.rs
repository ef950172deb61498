//! Arbitrary text as a tokenizer: parsing never panics; an accepted tokenizer round-trips
//! through JSON and encodes its own tokens back to their ids.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tplay::tokenizer::TokenizerKind;
use tplay::Tokenizer;

fuzz_target!(|text: &str| {
    let Ok(tok) = Tokenizer::from_json(text) else {
        return;
    };
    let back = Tokenizer::from_json(&tok.to_json()).expect("a valid tokenizer re-parses");
    assert_eq!(back.spec, tok.spec);
    assert!(tok.vocab_size() <= tplay::limits::MAX_VOCAB);
    for (i, t) in tok.spec.tokens.iter().enumerate() {
        assert_eq!(tok.id(t), Some(i as u32));
        // A token that is one character (char) or one word (word), and not a special,
        // encodes to exactly its own id.
        let single = match tok.spec.kind {
            TokenizerKind::Char => t.chars().count() == 1,
            TokenizerKind::Word => !t.is_empty() && t.split_whitespace().eq([t.as_str()]),
            // A BPE token is made of byte symbols; the bpe_encode target checks encoding.
            TokenizerKind::Bpe => false,
        };
        if single && !tok.is_special(i as u32) {
            assert_eq!(tok.encode(t).ids, vec![i as u32], "token {t:?}");
        }
    }
});
