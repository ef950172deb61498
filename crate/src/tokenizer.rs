//! Character- and word-level tokenizers (the `tokenizer` entry of a checkpoint's metadata),
//! and GPT-2's byte-level BPE (`bpe`).
//!
//! Text a char or word vocabulary cannot express maps to `<unk>`, and the caller is told
//! where; a byte-level BPE expresses every text.

pub mod bpe;
pub mod trace;

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::limits::{at_most, MAX_TOKEN_BYTES, MAX_VOCAB};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum TokenizerKind {
    /// One token per Unicode scalar value.
    Char,
    /// One token per whitespace-separated word.
    Word,
    /// GPT-2's byte-level BPE: UTF-8 bytes, merged by the ranked `merges`.
    Bpe,
}

/// The id a BPE vocabulary gives a special it does not have (GPT-2 has no padding and no
/// unknown token): no token equals it, so nothing is masked as padding.
pub const NO_TOKEN: u32 = u32::MAX;

/// The JSON contract: `{"kind": "char", "tokens": [...], "pad": 0, "bos": 1, "eos": 2, "unk": 3}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenizerSpec {
    pub kind: TokenizerKind,
    pub tokens: Vec<String>,
    pub pad: u32,
    pub bos: u32,
    pub eos: u32,
    pub unk: u32,
    /// BPE merges in rank order, each `"left right"` (GPT-2's merges.txt lines).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub merges: Vec<String>,
}

/// The result of encoding text: ids, and where `<unk>` had to be used.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Encoded {
    pub ids: Vec<u32>,
    /// Token positions that became `<unk>`, with the text they stood for.
    pub unknown: Vec<(usize, String)>,
}

#[derive(Clone, Debug)]
pub struct Tokenizer {
    pub spec: TokenizerSpec,
    index: HashMap<String, u32>,
    bpe: Option<Box<bpe::Bpe>>,
}

impl Tokenizer {
    pub fn new(spec: TokenizerSpec) -> Result<Self> {
        check_budget(&spec)?;
        let n = spec.tokens.len();
        let is_bpe = spec.kind == TokenizerKind::Bpe;
        if !is_bpe && !spec.merges.is_empty() {
            return Err(Error::Checkpoint(
                "tokenizer: only a bpe tokenizer has merges".to_string(),
            ));
        }
        for (name, id) in [
            ("pad", spec.pad),
            ("bos", spec.bos),
            ("eos", spec.eos),
            ("unk", spec.unk),
        ] {
            // A BPE vocabulary may lack a padding and an unknown token.
            let optional = is_bpe && matches!(name, "pad" | "unk");
            if id as usize >= n && !(optional && id == NO_TOKEN) {
                return Err(Error::Checkpoint(format!(
                    "tokenizer: {name} id {id} is outside the vocabulary of {n} tokens"
                )));
            }
        }
        let mut index = HashMap::with_capacity(n);
        for (i, t) in spec.tokens.iter().enumerate() {
            if index.insert(t.clone(), i as u32).is_some() {
                return Err(Error::Checkpoint(format!(
                    "tokenizer: token {t:?} appears twice"
                )));
            }
        }
        let bpe = if is_bpe {
            let specials = [spec.bos, spec.eos, spec.pad, spec.unk];
            Some(Box::new(bpe::Bpe::new(
                &spec.tokens,
                &index,
                &spec.merges,
                &specials,
            )?))
        } else {
            None
        };
        Ok(Tokenizer { spec, index, bpe })
    }

    /// A character vocabulary: the four specials, then each character of `alphabet` once.
    pub fn char_level(alphabet: &str) -> Self {
        let mut tokens: Vec<String> = SPECIALS.iter().map(|s| s.to_string()).collect();
        for ch in alphabet.chars() {
            let s = ch.to_string();
            if !tokens.contains(&s) {
                tokens.push(s);
            }
        }
        Self::from_tokens(TokenizerKind::Char, tokens)
    }

    /// A word vocabulary: the four specials, then each word once.
    pub fn word_level<'a>(words: impl IntoIterator<Item = &'a str>) -> Self {
        let mut tokens: Vec<String> = SPECIALS.iter().map(|s| s.to_string()).collect();
        for w in words {
            if !tokens.iter().any(|t| t == w) {
                tokens.push(w.to_string());
            }
        }
        Self::from_tokens(TokenizerKind::Word, tokens)
    }

    fn from_tokens(kind: TokenizerKind, tokens: Vec<String>) -> Self {
        let spec = TokenizerSpec {
            kind,
            tokens,
            pad: 0,
            bos: 1,
            eos: 2,
            unk: 3,
            merges: vec![],
        };
        Self::new(spec).expect("built-in vocabularies are valid")
    }

    pub fn from_json(text: &str) -> Result<Self> {
        let spec: TokenizerSpec = serde_json::from_str(text)
            .map_err(|e| Error::Checkpoint(format!("tokenizer is not valid: {e}")))?;
        Self::new(spec)
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(&self.spec).expect("a tokenizer always serialises")
    }

    pub fn vocab_size(&self) -> usize {
        self.spec.tokens.len()
    }

    pub fn id(&self, token: &str) -> Option<u32> {
        self.index.get(token).copied()
    }

    pub fn token(&self, id: u32) -> Option<&str> {
        self.spec.tokens.get(id as usize).map(|s| s.as_str())
    }

    /// Text to ids. Specials are never produced from text (a BPE matches its special tokens
    /// written out, as the `tokenizers` library does); no `<bos>` is added.
    pub fn encode(&self, text: &str) -> Encoded {
        if let Some(bpe) = &self.bpe {
            return Encoded {
                ids: bpe.encode(text),
                unknown: vec![],
            };
        }
        let mut ids = Vec::new();
        let mut unknown = Vec::new();
        let mut push = |piece: &str, ids: &mut Vec<u32>| match self
            .index
            .get(piece)
            .copied()
            .filter(|&id| !self.is_special(id))
        {
            Some(id) => ids.push(id),
            None => {
                unknown.push((ids.len(), piece.to_string()));
                ids.push(self.spec.unk);
            }
        };
        match self.spec.kind {
            TokenizerKind::Char => {
                let mut buf = [0u8; 4];
                for ch in text.chars() {
                    push(ch.encode_utf8(&mut buf), &mut ids);
                }
            }
            TokenizerKind::Word | TokenizerKind::Bpe => {
                for w in text.split_whitespace() {
                    push(w, &mut ids);
                }
            }
        }
        Encoded { ids, unknown }
    }

    /// Ids to text; specials are written as their names (`<eos>`), unknown ids as `<?id>`.
    pub fn decode(&self, ids: &[u32]) -> String {
        if let Some(bpe) = &self.bpe {
            // Bytes first: a character split over several tokens reads back whole.
            let bytes: Vec<u8> = ids
                .iter()
                .flat_map(|&id| match self.token(id) {
                    Some(t) => bpe.token_bytes(t),
                    None => format!("<?{id}>").into_bytes(),
                })
                .collect();
            return String::from_utf8_lossy(&bytes).into_owned();
        }
        let pieces = ids.iter().map(|&id| match self.token(id) {
            Some(t) => t.to_string(),
            None => format!("<?{id}>"),
        });
        match self.spec.kind {
            TokenizerKind::Char | TokenizerKind::Bpe => pieces.collect(),
            TokenizerKind::Word => pieces.collect::<Vec<_>>().join(" "),
        }
    }

    /// The bytes of one token's text (a BPE token's byte symbols mapped back; others their
    /// UTF-8): what a view shows for a token that holds part of a character.
    pub fn token_bytes(&self, id: u32) -> Option<Vec<u8>> {
        let t = self.token(id)?;
        Some(match &self.bpe {
            Some(bpe) => bpe.token_bytes(t),
            None => t.as_bytes().to_vec(),
        })
    }

    pub fn is_special(&self, id: u32) -> bool {
        let s = &self.spec;
        id == s.pad || id == s.bos || id == s.eos || id == s.unk
    }
}

/// The four special tokens every built-in vocabulary starts with, at ids 0..4.
pub const SPECIALS: [&str; 4] = ["<pad>", "<bos>", "<eos>", "<unk>"];

/// A tokenizer's vocabulary against the size budget (`crate::limits`), before its index is
/// built.
fn check_budget(spec: &TokenizerSpec) -> Result<()> {
    at_most(
        Error::Checkpoint,
        "tokenizer tokens",
        spec.tokens.len(),
        MAX_VOCAB,
    )?;
    // Each merge makes one token: more merges than tokens is no BPE (`Bpe::new` says so);
    // checked here too, before anything is built for them.
    at_most(
        Error::Checkpoint,
        "tokenizer merges",
        spec.merges.len(),
        MAX_VOCAB,
    )?;
    if let Some((i, t)) = spec
        .tokens
        .iter()
        .enumerate()
        .find(|(_, t)| t.len() > MAX_TOKEN_BYTES)
    {
        return Err(Error::Checkpoint(format!(
            "tokenizer token {i}: {} bytes is above the limit of {MAX_TOKEN_BYTES}",
            t.len()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn char_round_trip() {
        let t = Tokenizer::char_level("abc ");
        let e = t.encode("cab a");
        assert!(e.unknown.is_empty());
        assert_eq!(t.decode(&e.ids), "cab a");
        assert_eq!(e.ids[0], 4 + 2);
    }

    #[test]
    fn unknown_characters_are_reported_with_positions() {
        let t = Tokenizer::char_level("ab");
        let e = t.encode("aXbY");
        assert_eq!(e.ids, vec![4, 3, 5, 3]);
        assert_eq!(e.unknown, vec![(1, "X".to_string()), (3, "Y".to_string())]);
    }

    #[test]
    fn chinese_characters_are_one_token_each_and_unknowns_are_counted_by_character() {
        let t = Tokenizer::char_level("猫追狗。");
        let e = t.encode("狗追猫。");
        assert_eq!(e.ids, vec![6, 5, 4, 7]);
        assert!(e.unknown.is_empty());
        assert_eq!(t.decode(&e.ids), "狗追猫。");
        // Each unknown character (3 bytes in UTF-8, or 4 for 𠀀 and 😀) is one <unk> at its
        // character position, never one per byte.
        let e = t.encode("猫吃😀狗𠀀");
        assert_eq!(e.ids, vec![4, 3, 3, 6, 3]);
        assert_eq!(
            e.unknown,
            vec![
                (1, "吃".to_string()),
                (2, "😀".to_string()),
                (4, "𠀀".to_string())
            ]
        );
    }

    #[test]
    fn special_names_in_text_are_not_specials() {
        let t = Tokenizer::word_level(["the", "cat"]);
        let e = t.encode("the <eos> cat");
        assert_eq!(e.ids, vec![4, 3, 5]);
        assert_eq!(e.unknown, vec![(1, "<eos>".to_string())]);
    }

    #[test]
    fn word_level_splits_on_whitespace() {
        let t = Tokenizer::word_level(["the", "cat", "chases", "dog"]);
        let e = t.encode("the  dog chases\tthe cat");
        assert_eq!(t.decode(&e.ids), "the dog chases the cat");
    }

    #[test]
    fn json_round_trip_and_bad_specials() {
        let t = Tokenizer::char_level("xyz");
        let back = Tokenizer::from_json(&t.to_json()).unwrap();
        assert_eq!(back.spec, t.spec);
        let mut spec = t.spec.clone();
        spec.unk = 99;
        let e = Tokenizer::new(spec).unwrap_err().to_string();
        assert!(e.contains("unk id 99"), "{e}");
        let mut spec = t.spec.clone();
        spec.tokens.push("x".into());
        let e = Tokenizer::new(spec).unwrap_err().to_string();
        assert!(e.contains("\"x\" appears twice"), "{e}");
    }
}
