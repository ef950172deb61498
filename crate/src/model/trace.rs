//! What a forward pass returns: logits, and the attention maps, hidden states, FFN hidden
//! units and BatchNorm running statistics the options ask for ([`Trace`], what the UI draws).

use super::{AttnSite, Model, ParamKind};
use crate::error::{Error, Result};
use crate::tensor::Tensor;

/// Scores and probabilities of one attention sublayer.
#[derive(Clone, Debug, PartialEq)]
pub struct AttnTrace {
    pub site: AttnSite,
    pub layer: usize,
    /// (B, H, T, S): after scaling and position biases; masked entries are −∞.
    pub scores: Tensor,
    /// (B, H, T, S): softmax of `scores` (rows with every key masked are zero).
    pub probs: Tensor,
}

/// The residual stream of one stack: `states[0]` is the layer input (embeddings +
/// positions), `states[l + 1]` the output of layer l (before the final norm).
#[derive(Clone, Debug, PartialEq)]
pub struct HiddenTrace {
    pub stack: AttnSite,
    /// L + 1 tensors of (B, T, C) (S instead of T for the encoder of an encoder-decoder).
    pub states: Vec<Tensor>,
}

/// The hidden units of one FFN sublayer: `act(x·W₁ᵀ + b₁)` for every position (after
/// dropout in train mode), what its second linear layer reads.
#[derive(Clone, Debug, PartialEq)]
pub struct FfnTrace {
    /// The stack the FFN belongs to.
    pub stack: AttnSite,
    pub layer: usize,
    /// (B, T, F), F = d_ff (S instead of T for the encoder of an encoder-decoder).
    pub hidden: Tensor,
}

/// New BatchNorm running statistics computed by a train-mode pass, by tensor name.
#[derive(Clone, Debug, PartialEq)]
pub struct RunningStatUpdate {
    /// e.g. `decoder.layers.0.norm1.running_mean`
    pub name: String,
    pub value: Tensor,
}

/// Everything a forward pass produces.
#[derive(Clone, Debug, PartialEq)]
pub struct Trace {
    /// (B, T, V) for a token-level head; empty (shape [0]) for a classifier.
    pub logits: Tensor,
    /// (B, num_classes) for a classifier.
    pub class_logits: Option<Tensor>,
    /// In the order the sublayers ran; empty unless `trace_attention`.
    pub attention: Vec<AttnTrace>,
    /// Empty unless `trace_hidden`.
    pub hidden: Vec<HiddenTrace>,
    /// In the order the FFN sublayers ran; empty unless `trace_ffn`.
    pub ffn: Vec<FfnTrace>,
    /// Train mode with BatchNorm only; apply with `Model::apply_running_stats`.
    pub running_stats: Vec<RunningStatUpdate>,
}

impl Model {
    /// Store the BatchNorm running statistics a train-mode pass computed
    /// (`Trace::running_stats`).
    pub fn apply_running_stats(&mut self, updates: &[RunningStatUpdate]) -> Result<()> {
        let mut pending: Vec<Option<&RunningStatUpdate>> = updates.iter().map(Some).collect();
        let mut err = None;
        self.visit_params_mut(&mut |name, t, kind| {
            if kind != ParamKind::Buffer {
                return;
            }
            for slot in pending.iter_mut() {
                if let Some(u) = slot.filter(|u| u.name == name) {
                    if u.value.shape != t.shape {
                        err.get_or_insert(Error::Input(format!(
                            "running statistic `{name}` has shape {:?}, expected {:?}",
                            u.value.shape, t.shape
                        )));
                    } else {
                        t.data.copy_from_slice(&u.value.data);
                    }
                    *slot = None;
                }
            }
        });
        if let Some(e) = err {
            return Err(e);
        }
        if let Some(u) = pending.into_iter().flatten().next() {
            return Err(Error::Input(format!(
                "this model has no running statistic `{}`",
                u.name
            )));
        }
        Ok(())
    }
}
