//! How a tokenizer read a text, step by step — what the tokenizer view draws. A byte-level
//! BPE cuts the text into pieces (special tokens, then GPT-2's pre-tokenization) and merges
//! each piece from its bytes, one ranked merge at a time, into its tokens; a character or
//! word tokenizer reads each token in one step.

use std::collections::BTreeSet;

use super::bpe::Piece;
use super::Tokenizer;
use crate::error::Result;
use crate::limits::at_most;
use crate::protocol::{PieceTrace, SymbolBytes, TokenizeTrace};

/// Longest text traced (bytes of UTF-8). A piece of n bytes keeps up to n steps of up to n
/// symbols, so the trace is bounded by this squared.
pub const MAX_TRACE_TEXT_BYTES: usize = 4096;

impl Tokenizer {
    /// The text's pieces, each with every step from bytes to tokens, and the vocabulary
    /// strings and bytes of every id the steps name. The ids of the last steps, in order,
    /// are exactly [`Tokenizer::encode`]'s.
    pub fn trace(&self, text: &str) -> Result<TokenizeTrace> {
        at_most(
            crate::error::Error::Input,
            "text to trace (bytes)",
            text.len(),
            MAX_TRACE_TEXT_BYTES,
        )?;
        let pieces: Vec<PieceTrace> = match &self.bpe {
            Some(bpe) => bpe
                .pieces(text)
                .into_iter()
                .map(|piece| match piece {
                    Piece::Plain(p) => {
                        let (steps, merges) = bpe.trace_piece(p);
                        PieceTrace {
                            text: p.to_string(),
                            special: false,
                            steps,
                            merges,
                        }
                    }
                    Piece::Special(s, id) => PieceTrace {
                        text: s.to_string(),
                        special: true,
                        steps: vec![vec![id]],
                        merges: vec![],
                    },
                })
                .collect(),
            None => {
                let enc = self.encode(text);
                let unknown: std::collections::HashMap<usize, String> =
                    enc.unknown.into_iter().collect();
                enc.ids
                    .iter()
                    .enumerate()
                    .map(|(i, &id)| PieceTrace {
                        text: unknown
                            .get(&i)
                            .cloned()
                            .unwrap_or_else(|| self.token(id).unwrap_or_default().to_string()),
                        special: false,
                        steps: vec![vec![id]],
                        merges: vec![],
                    })
                    .collect()
            }
        };
        let ids: BTreeSet<u32> = pieces
            .iter()
            .flat_map(|p| p.steps.iter().flatten().copied())
            .collect();
        let symbols = ids
            .into_iter()
            .map(|id| SymbolBytes {
                id,
                token: self.token(id).unwrap_or_default().to_string(),
                bytes: self.token_bytes(id).unwrap_or_default(),
            })
            .collect();
        Ok(TokenizeTrace {
            kind: self.spec.kind,
            pieces,
            symbols,
        })
    }
}
