//! Byte-level BPE as GPT-2 defines it, small and self-contained.
//!
//! Encoding text takes three steps:
//! 1. **Pre-tokenization** splits the text into pieces with GPT-2's pattern
//!    `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`, written out by
//!    hand in [`pre_tokenize`] (no regex engine). `\p{N}` is `char::is_numeric`; `\p{L}` is
//!    `char::is_alphabetic` minus the numeric characters — the same set except for the few
//!    combining marks and symbols Unicode calls "other alphabetic" (Devanagari vowel signs,
//!    circled letters), which a regex engine puts among the other characters.
//! 2. **Bytes to symbols**: each piece's UTF-8 bytes become printable characters through
//!    GPT-2's byte map ([`byte_to_char`]: the printable Latin-1 bytes stand for themselves,
//!    the other 68 move to U+0100 onwards, so a space is `Ġ` and a newline `Ċ`). Every one of
//!    the 256 is a token of the vocabulary, so nothing is ever unknown.
//! 3. **Merges by rank**: the adjacent pair whose merge comes first in the merge list is
//!    merged, everywhere in the piece, until no adjacent pair has a merge.
//!
//! Special tokens (GPT-2's `<|endoftext|>`) written in the text are matched first and become
//! their own id, as the `tokenizers` library does. Decoding maps the symbols back to bytes; a
//! character made of several byte tokens (猫 is three bytes) reads back whole once all of its
//! tokens are there.

use std::collections::HashMap;

use crate::error::{Error, Result};

fn bad(msg: impl Into<String>) -> Error {
    Error::Checkpoint(format!("tokenizer: {}", msg.into()))
}

/// GPT-2's byte → character map: `!`..`~`, `¡`..`¬` and `®`..`ÿ` stand for their own byte;
/// the remaining bytes, in order, become U+0100, U+0101, ….
pub fn byte_to_char() -> [char; 256] {
    let keeps = |b: u32| (0x21..=0x7e).contains(&b) || (0xa1..=0xac).contains(&b) || b >= 0xae;
    let mut map = ['\0'; 256];
    let mut next = 0x100u32;
    for (b, slot) in map.iter_mut().enumerate() {
        let b = b as u32;
        let c = if keeps(b) {
            b
        } else {
            next += 1;
            next - 1
        };
        *slot = char::from_u32(c).expect("below U+0200");
    }
    map
}

fn is_letter(c: char) -> bool {
    c.is_alphabetic() && !c.is_numeric()
}

/// One of the three classes the pattern's runs are made of.
#[derive(Clone, Copy, PartialEq)]
enum Class {
    Letter,
    Number,
    Other,
}

fn class(c: char) -> Option<Class> {
    if c.is_whitespace() {
        None
    } else if c.is_numeric() {
        Some(Class::Number)
    } else if is_letter(c) {
        Some(Class::Letter)
    } else {
        Some(Class::Other)
    }
}

/// GPT-2's pre-tokenization pattern, alternative by alternative, as byte ranges of `text`.
pub fn pre_tokenize(text: &str) -> Vec<&str> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let n = chars.len();
    let at = |i: usize| if i < n { chars[i].0 } else { text.len() };
    let mut out = vec![];
    let mut i = 0;
    while i < n {
        let end = match_at(&chars, i);
        out.push(&text[at(i)..at(end)]);
        i = end;
    }
    out
}

/// The end (in chars) of the pattern's match starting at char `i` (always past `i`).
fn match_at(chars: &[(usize, char)], i: usize) -> usize {
    let n = chars.len();
    let c = |k: usize| chars.get(k).map(|x| x.1);
    // 's 't 're 've 'm 'll 'd
    if c(i) == Some('\'') {
        match (c(i + 1), c(i + 2)) {
            (Some('s' | 't' | 'm' | 'd'), _) => return i + 2,
            (Some('r'), Some('e')) | (Some('v'), Some('e')) | (Some('l'), Some('l')) => {
                return i + 3
            }
            _ => {}
        }
    }
    // ` ?\p{L}+`, ` ?\p{N}+`, ` ?[^\s\p{L}\p{N}]+`: an optional space, then a run of one class.
    let start = if c(i) == Some(' ') { i + 1 } else { i };
    if let Some(k) = c(start).and_then(class) {
        let mut j = start + 1;
        while j < n && class(chars[j].1) == Some(k) {
            j += 1;
        }
        return j;
    }
    // `\s+(?!\S)` then `\s+`: a whitespace run; when something follows it, the run's last
    // whitespace is left to lead the next piece (unless the run is that one character).
    let mut j = i;
    while j < n && chars[j].1.is_whitespace() {
        j += 1;
    }
    if j == n || j - i == 1 {
        j
    } else {
        j - 1
    }
}

/// A stretch of text as BPE reads it: a pre-tokenized piece it merges, or a special token
/// written in the text (its text and id).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Piece<'t> {
    Plain(&'t str),
    Special(&'t str, u32),
}

/// A byte-level BPE: the vocabulary's ids of the 256 byte symbols, the merges by rank, and
/// the special tokens matched in text.
#[derive(Clone, Debug)]
pub struct Bpe {
    /// The token id of each byte's symbol.
    byte_ids: [u32; 256],
    /// (left id, right id) → (rank, merged id).
    merges: HashMap<(u32, u32), (u32, u32)>,
    /// Special tokens as text, longest first, with their ids.
    specials: Vec<(String, u32)>,
    /// The byte each symbol character stands for.
    char_to_byte: HashMap<char, u8>,
}

impl Bpe {
    /// Build from a vocabulary (token strings by id, already checked against the size budget
    /// and for duplicates), its index, merges as `"left right"` lines in rank order, and the
    /// ids of special tokens.
    pub fn new(
        tokens: &[String],
        index: &HashMap<String, u32>,
        merges: &[String],
        specials: &[u32],
    ) -> Result<Bpe> {
        if merges.len() > tokens.len() {
            return Err(bad(format!(
                "{} merges for a vocabulary of {} tokens: each merge makes a token, so there \
                 cannot be more merges than tokens",
                merges.len(),
                tokens.len()
            )));
        }
        let map = byte_to_char();
        let mut byte_ids = [0u32; 256];
        let mut char_to_byte = HashMap::with_capacity(256);
        for (b, &ch) in map.iter().enumerate() {
            let s = ch.to_string();
            byte_ids[b] = *index.get(&s).ok_or_else(|| {
                bad(format!(
                    "the byte-level vocabulary lacks the symbol {s:?} of byte {b:#04x}"
                ))
            })?;
            char_to_byte.insert(ch, b as u8);
        }
        let mut table = HashMap::with_capacity(merges.len());
        for (rank, line) in merges.iter().enumerate() {
            let (l, r) = line
                .split_once(' ')
                .filter(|(_, r)| !r.contains(' '))
                .ok_or_else(|| {
                    bad(format!(
                        "merge {rank} ({line:?}) is not two symbols separated by one space"
                    ))
                })?;
            let id = |s: &str| {
                index.get(s).copied().ok_or_else(|| {
                    bad(format!(
                        "merge {rank} ({line:?}) uses {s:?}, which is not in the vocabulary"
                    ))
                })
            };
            let joined = format!("{l}{r}");
            let key = (id(l)?, id(r)?);
            let merged = id(&joined)?;
            // A pair listed twice keeps its first (best) rank, as the reference does.
            table.entry(key).or_insert((rank as u32, merged));
        }
        let mut specials: Vec<(String, u32)> = specials
            .iter()
            .filter_map(|&id| tokens.get(id as usize).map(|t| (t.clone(), id)))
            .filter(|(t, _)| !t.is_empty())
            .collect();
        crate::sorting::sort_by(&mut specials, |a, b| {
            b.0.len().cmp(&a.0.len()).then(a.1.cmp(&b.1))
        });
        specials.dedup();
        Ok(Bpe {
            byte_ids,
            merges: table,
            specials,
            char_to_byte,
        })
    }

    /// The text cut where special tokens stand, and each plain stretch pre-tokenized: the
    /// pieces BPE merges one by one, in order.
    pub fn pieces<'t>(&self, text: &'t str) -> Vec<Piece<'t>> {
        let mut out = vec![];
        let mut rest = text;
        while !rest.is_empty() {
            // The earliest special token in the rest (the longest one at that place).
            let found = self
                .specials
                .iter()
                .filter_map(|(s, id)| rest.find(s.as_str()).map(|at| (at, s.len(), *id)))
                .min_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
            let plain = match found {
                Some((at, _, _)) => &rest[..at],
                None => rest,
            };
            out.extend(pre_tokenize(plain).into_iter().map(Piece::Plain));
            match found {
                Some((at, len, id)) => {
                    out.push(Piece::Special(&rest[at..at + len], id));
                    rest = &rest[at + len..];
                }
                None => break,
            }
        }
        out
    }

    /// Text to ids (no special tokens are added; those written in the text are matched).
    pub fn encode(&self, text: &str) -> Vec<u32> {
        let mut ids = vec![];
        for piece in self.pieces(text) {
            match piece {
                Piece::Plain(p) => ids.extend(self.merge_all(p, |_, _| {})),
                Piece::Special(_, id) => ids.push(id),
            }
        }
        ids
    }

    /// One piece's merges, step by step: its symbols before any merge (one per byte), then
    /// after each merge, with the merge that made them (its rank and the merged id).
    pub fn trace_piece(&self, piece: &str) -> (Vec<Vec<u32>>, Vec<(u32, u32)>) {
        let mut steps = vec![];
        let mut merges = vec![];
        let last = self.merge_all(piece, |syms, merge| {
            steps.push(syms.to_vec());
            merges.push(merge);
        });
        steps.push(last);
        (steps, merges)
    }

    /// A piece's byte symbols, merged by rank until no pair merges; `before` sees the
    /// symbols before each merge and the merge (rank, merged id).
    fn merge_all(&self, piece: &str, mut before: impl FnMut(&[u32], (u32, u32))) -> Vec<u32> {
        let mut syms: Vec<u32> = piece.bytes().map(|b| self.byte_ids[b as usize]).collect();
        loop {
            let best = syms
                .windows(2)
                .filter_map(|w| self.merges.get(&(w[0], w[1])).copied())
                .min();
            let Some((rank, merged)) = best else { break };
            before(&syms, (rank, merged));
            let mut next = Vec::with_capacity(syms.len());
            let mut i = 0;
            while i < syms.len() {
                if i + 1 < syms.len()
                    && self.merges.get(&(syms[i], syms[i + 1])) == Some(&(rank, merged))
                {
                    next.push(merged);
                    i += 2;
                } else {
                    next.push(syms[i]);
                    i += 1;
                }
            }
            syms = next;
        }
        syms
    }

    /// The bytes a token stands for (a special token: its text's bytes).
    pub fn token_bytes(&self, token: &str) -> Vec<u8> {
        if self.specials.iter().any(|(s, _)| s == token) {
            return token.as_bytes().to_vec();
        }
        let mut out = Vec::with_capacity(token.len());
        let mut buf = [0u8; 4];
        for ch in token.chars() {
            match self.char_to_byte.get(&ch) {
                Some(&b) => out.push(b),
                None => out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes()),
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_byte_map_is_gpt2s() {
        let m = byte_to_char();
        assert_eq!(m[b' ' as usize], 'Ġ');
        assert_eq!(m[b'\n' as usize], 'Ċ');
        assert_eq!(m[b'\t' as usize], 'ĉ');
        assert_eq!(m[b'a' as usize], 'a');
        assert_eq!(m[0], 'Ā');
        assert_eq!(m[0xad], 'Ń');
        let mut all: Vec<char> = m.to_vec();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), 256, "one symbol per byte");
    }

    #[test]
    fn pre_tokenization_follows_the_pattern() {
        assert_eq!(
            pre_tokenize("Hello world! It's 2026,   ok?\n\n x"),
            vec!["Hello", " world", "!", " It", "'s", " 2026", ",", "  ", " ok", "?", "\n\n", " x"]
        );
        assert_eq!(pre_tokenize("猫追狗。"), vec!["猫追狗", "。"]);
        assert_eq!(pre_tokenize("a \tb  "), vec!["a", " ", "\t", "b", "  "]);
        assert_eq!(
            pre_tokenize("we'll they're I'D"),
            vec!["we", "'ll", " they", "'re", " I", "'", "D"]
        );
        assert!(pre_tokenize("").is_empty());
    }
}
