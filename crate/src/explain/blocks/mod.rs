//! The block structure of a forward pass, made visible (docs/model.md, "Forward pass"):
//! what each layer's FFN and norms computed on a batch, where the dropout masks of a
//! train-mode pass fell, which rows change when one input token changes (bit-exactly),
//! and how a BatchNorm model in train mode couples the sequences of a batch while a
//! LayerNorm model never does.
//!
//! Everything here is read off one recorded CPU pass ([`Model::forward_recorded`]): the
//! numbers are the ones the model computed, not a re-derivation.
//!
//! ```text
//! probe     one recorded pass → per stack: FFN x, W₁x+b₁, act(·), W₂·+b₂; norm μ, σ²;
//!           residual stream (L+1); dropout masks; logits
//! diff      two single-sequence passes → per position: did its f32 bits change?
//! coupling  batches [this, other] and [this, other′] in train and eval mode → did this
//!           sequence's output change? (BatchNorm: yes in train mode; LayerNorm: never)
//! dropout   the masks of one train-mode pass, 1/(1 − p), and eval mode as the identity
//! ```

mod coupling;
mod diff;
mod dropout;
mod probe;

pub use coupling::{
    norm_coupling, respell, sibling_with_norm, CouplingModel, CouplingRequest, NormCoupling,
};
pub use diff::{block_diff, BlockDiff, Probed, RowDiff};
pub use dropout::{dropout_demo, DropoutDemo, DropoutRequest};
pub use probe::{block_probe, BlockProbe, DropPlace, DropSite, FfnProbe, NormProbe, StackProbe};

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::error::{Error, Result};
use crate::model::forward::Batch;
use crate::model::{Mode, Model};

/// Train mode for a pass: dropout masks from `seed`, BatchNorm with batch statistics.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
pub struct TrainMode {
    pub seed: u64,
    /// Dropout probability for this pass; `None`: the model's own. Dropout has no
    /// parameters, so any p in [0, 1) can be switched on at run time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub dropout: Option<f32>,
}

/// The loaded model with the dropout probability `p` (the same weights), or itself.
pub fn with_dropout(m: &Model, p: Option<f32>) -> Result<Cow<'_, Model>> {
    match p {
        None => Ok(Cow::Borrowed(m)),
        Some(p) if (0.0..0.95).contains(&p) => {
            if p == m.config.dropout {
                return Ok(Cow::Borrowed(m));
            }
            let mut owned = m.clone();
            owned.config.dropout = p;
            Ok(Cow::Owned(owned))
        }
        Some(p) => Err(Error::Input(format!(
            "dropout must be from 0 to 0.95 (below 1), got {p}"
        ))),
    }
}

/// The forward mode a `TrainMode` asks for.
pub fn mode_of(train: Option<&TrainMode>) -> Mode {
    match train {
        Some(t) => Mode::Train { seed: t.seed },
        None => Mode::Eval,
    }
}

/// One single-sequence input: the main stack's tokens, and the source of an
/// encoder-decoder model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
pub struct SequenceInput {
    pub tokens: Vec<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub src: Option<Vec<u32>>,
}

impl SequenceInput {
    pub fn batch(&self) -> Result<Batch> {
        let b = Batch::single(&self.tokens)?;
        match &self.src {
            Some(s) => b.with_source(vec![s.clone()]),
            None => Ok(b),
        }
    }
}

/// The largest |a − b| of two outputs (infinite where either is NaN), and whether they
/// are bit-identical.
pub(super) fn max_diff(a: &[f32], b: &[f32]) -> (f32, bool) {
    let identical = a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits());
    // NaN-aware: a NaN on either side is an infinite difference.
    let n = a.len().min(b.len());
    (crate::tensor::max_abs_diff(&a[..n], &b[..n]), identical)
}

/// Helpers shared by the tests of the block views.
#[cfg(test)]
pub(super) mod test_support {
    use super::SequenceInput;
    use crate::protocol::Dense;

    /// Elements of a Dense, checked against its shape.
    pub fn consistent(d: &Dense) -> bool {
        d.shape.iter().product::<usize>() == d.data.0.len()
    }

    /// One sequence without a source.
    pub fn seq(tokens: &[u32]) -> SequenceInput {
        SequenceInput {
            tokens: tokens.to_vec(),
            src: None,
        }
    }
}
