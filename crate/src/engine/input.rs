//! The page's text rows as the model reads them: where `<bos>` goes, what a classifier
//! and an encoder-decoder read, and where a generation starts. The page sends what was
//! typed and generated; every rule about the model's input is here.

use crate::config::Arch;
use crate::error::{Error, Result};
use crate::explain::blocks::SequenceInput;
use crate::limits;
use crate::model::Model;
use crate::protocol::{ModelInput, ModelInputRequest};

use super::Engine;

impl Engine {
    /// `req`'s rows and generated tokens as the loaded model reads them.
    pub fn model_input(&self, req: &ModelInputRequest) -> Result<ModelInput> {
        model_input(self.model()?, req)
    }
}

/// The rows `m` reads for the page's text rows and the tokens generated after row 0:
///
/// - decoder-only: `<bos>`, the row's ids, and after row 0 the generated tokens; a
///   generation starts from `<bos>` and row 0;
/// - encoder-only: the row's ids, after `<bos>` for a classifier (it reads its answer at
///   position 0, where training put `<bos>`); it does not generate;
/// - encoder-decoder: row 0 is the source, the decoder reads `<bos>` and the generated
///   tokens; a generation starts from `<bos>` with that source.
pub fn model_input(m: &Model, req: &ModelInputRequest) -> Result<ModelInput> {
    if req.rows.is_empty() {
        return Err(Error::Input("model input: there are no rows".into()));
    }
    if req.rows.len() > limits::MAX_BATCH {
        return Err(Error::Input(format!(
            "model input: at most {} rows, got {}",
            limits::MAX_BATCH,
            req.rows.len()
        )));
    }
    let too_long = |n: usize| n > limits::MAX_SEQUENCE_TOKENS;
    if req.rows.iter().any(|r| too_long(r.len())) || too_long(req.generated.len()) {
        return Err(Error::Input(format!(
            "model input: a row holds at most {} tokens",
            limits::MAX_SEQUENCE_TOKENS
        )));
    }
    let bos = m.tokenizer.spec.bos;
    let with_bos =
        |ids: &[u32]| -> Vec<u32> { std::iter::once(bos).chain(ids.iter().copied()).collect() };
    let row0 = &req.rows[0];
    Ok(match m.config.arch {
        Arch::DecoderOnly => {
            let batch: Vec<Vec<u32>> = req
                .rows
                .iter()
                .enumerate()
                .map(|(b, r)| {
                    let mut row = with_bos(r);
                    if b == 0 {
                        row.extend_from_slice(&req.generated);
                    }
                    row
                })
                .collect();
            ModelInput {
                batch,
                src: None,
                prompt: Some(with_bos(row0)),
                prompt_src: None,
                input_is_source: false,
                prompt_len: Some(1 + row0.len()),
                sequence: SequenceInput {
                    tokens: with_bos(row0),
                    src: None,
                },
            }
        }
        Arch::EncoderOnly => {
            let classifier = m.config.num_classes > 0;
            let batch: Vec<Vec<u32>> = req
                .rows
                .iter()
                .map(|r| if classifier { with_bos(r) } else { r.clone() })
                .collect();
            let sequence = SequenceInput {
                tokens: batch[0].clone(),
                src: None,
            };
            ModelInput {
                batch,
                src: None,
                prompt: None,
                prompt_src: None,
                input_is_source: false,
                prompt_len: None,
                sequence,
            }
        }
        Arch::EncoderDecoder => ModelInput {
            batch: vec![with_bos(&req.generated)],
            src: Some(vec![row0.clone()]),
            prompt: Some(vec![bos]),
            prompt_src: Some(row0.clone()),
            input_is_source: true,
            prompt_len: None,
            sequence: SequenceInput {
                tokens: vec![bos],
                src: Some(row0.clone()),
            },
        },
    })
}
