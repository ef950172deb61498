//! Where each part of a GPU pass's trace lands in its one readback, and the [`Trace`] made
//! from it: the logits (or class logits), the attention maps, the hidden states, the FFN
//! hidden units and BatchNorm's running-statistic updates that `ForwardOptions` asks for.

use super::context::{ReadSlot, Readback};
use super::MASKED;
use crate::model::forward::{FfnTrace, HiddenTrace, RunningStatUpdate};
use crate::model::{AttnSite, AttnTrace, Trace};
use crate::tensor::Tensor;

/// Where one attention sublayer's scores and probabilities land in the readback.
pub(super) struct PlannedAttention {
    pub site: AttnSite,
    pub layer: usize,
    /// (B, H, T, S)
    pub shape: [usize; 4],
    pub scores: ReadSlot,
    pub probs: ReadSlot,
}

pub(super) enum HeadOut {
    Logits(ReadSlot, [usize; 3]),
    Classes(ReadSlot, [usize; 2]),
}

/// Where each part of the trace lands in the readback.
pub(super) struct TracePlan {
    pub head: HeadOut,
    pub attention: Vec<PlannedAttention>,
    /// Per stack: the residual stream before the first layer and after each, (B, T, C).
    pub hidden: Vec<(AttnSite, Vec<ReadSlot>, [usize; 3])>,
    /// Per FFN sublayer: (stack, layer, its hidden units (B, T, F)).
    pub ffn: Vec<(AttnSite, usize, ReadSlot, [usize; 3])>,
    /// Train mode: (name, running_mean, running_var, C) of each BatchNorm.
    pub running: Vec<(String, ReadSlot, ReadSlot, usize)>,
}

impl TracePlan {
    pub(super) fn build(self, data: &Readback) -> Trace {
        let tensor = |slot: ReadSlot, shape: &[usize]| Tensor {
            shape: shape.to_vec(),
            data: data.f32(slot).to_vec(),
        };
        let (logits, class_logits) = match self.head {
            HeadOut::Logits(slot, shape) => (tensor(slot, &shape), None),
            HeadOut::Classes(slot, shape) => (Tensor::zeros(&[0]), Some(tensor(slot, &shape))),
        };
        let attention = self
            .attention
            .into_iter()
            .map(|p| {
                let mut scores = tensor(p.scores, &p.shape);
                // The shaders' stand-in for −∞ (see attention_scores.wgsl) back to −∞.
                for v in scores.data.iter_mut() {
                    if *v == MASKED {
                        *v = f32::NEG_INFINITY;
                    }
                }
                AttnTrace {
                    site: p.site,
                    layer: p.layer,
                    scores,
                    probs: tensor(p.probs, &p.shape),
                }
            })
            .collect();
        let hidden = self
            .hidden
            .into_iter()
            .map(|(stack, slots, shape)| HiddenTrace {
                stack,
                states: slots.into_iter().map(|s| tensor(s, &shape)).collect(),
            })
            .collect();
        let ffn = self
            .ffn
            .into_iter()
            .map(|(stack, layer, slot, shape)| FfnTrace {
                stack,
                layer,
                hidden: tensor(slot, &shape),
            })
            .collect();
        let running_stats = self
            .running
            .into_iter()
            .flat_map(|(name, mean, var, c)| {
                [("running_mean", mean), ("running_var", var)].map(|(suffix, slot)| {
                    RunningStatUpdate {
                        name: format!("{name}.{suffix}"),
                        value: tensor(slot, &[c]),
                    }
                })
            })
            .collect();
        Trace {
            logits,
            class_logits,
            attention,
            hidden,
            ffn,
            running_stats,
        }
    }
}
