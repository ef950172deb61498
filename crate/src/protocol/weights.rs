//! Editing the loaded model's weights by hand: read a tensor (or a strided slice of it) by
//! its checkpoint name, set values, restore the trained ones, list what is edited, and
//! export the edited model (`crate::engine::weights`).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::wire::F32Array;

/// One parameter tensor of the loaded model.
#[derive(Clone, Debug, PartialEq, Serialize, TS)]
pub struct WeightTensor {
    /// Its checkpoint name (DESIGN.md §3), e.g. `decoder.layers.0.self_attn.in_proj_weight`.
    pub name: String,
    pub shape: Vec<usize>,
    /// False for BatchNorm's running statistics (stored, never trained).
    pub trained: bool,
    /// Values that differ from the trained ones now.
    pub edited: usize,
}

/// Some values of one tensor, by flat (row-major) index: `start`, `start + stride`, … —
/// `count` of them. A row r of an (R, C) tensor is `start = r·C, stride = 1, count = C`;
/// a column j is `start = j, stride = C, count = R`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct WeightSelection {
    pub name: String,
    /// The first flat index (default 0).
    #[serde(default)]
    #[ts(optional)]
    pub start: Option<usize>,
    /// How many values (default: from `start` to the end, at `stride`).
    #[serde(default)]
    #[ts(optional)]
    pub count: Option<usize>,
    /// The step between them (default 1).
    #[serde(default)]
    #[ts(optional)]
    pub stride: Option<usize>,
}

/// The values of a selection now and as trained.
#[derive(Clone, Debug, PartialEq, Serialize, TS)]
pub struct WeightValues {
    pub name: String,
    pub shape: Vec<usize>,
    pub start: usize,
    pub stride: usize,
    /// (N) the flat index of each value.
    pub indices: Vec<usize>,
    /// (N) the values the model computes with now.
    pub values: F32Array,
    /// (N) the trained values (what restoring brings back).
    pub trained: F32Array,
}

/// Set values of one tensor: `values[i]` goes to flat index `start + i·stride`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct WeightSetRequest {
    pub name: String,
    #[serde(default)]
    #[ts(optional)]
    pub start: Option<usize>,
    #[serde(default)]
    #[ts(optional)]
    pub stride: Option<usize>,
    pub values: Vec<f32>,
}

/// Restore trained values: every tensor (no `name`), one tensor (a name alone), or a
/// selection of it (a name with `start` / `count` / `stride`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct WeightRestoreRequest {
    #[serde(default)]
    #[ts(optional)]
    pub name: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub start: Option<usize>,
    #[serde(default)]
    #[ts(optional)]
    pub count: Option<usize>,
    #[serde(default)]
    #[ts(optional)]
    pub stride: Option<usize>,
}

/// One edited tensor.
#[derive(Clone, Debug, PartialEq, Serialize, TS)]
pub struct WeightEdit {
    pub name: String,
    pub shape: Vec<usize>,
    /// Values that differ from the trained ones.
    pub changed: usize,
    /// The flat indices of the first of them (at most `EDIT_INDICES`), in order.
    pub indices: Vec<usize>,
    /// The largest |value − trained| in the tensor.
    pub max_abs_change: f32,
}

/// Everything edited in the loaded model, in the order of the checkpoint's tensors.
#[derive(Clone, Debug, Default, PartialEq, Serialize, TS)]
pub struct WeightEdits {
    pub edits: Vec<WeightEdit>,
    /// Values changed in all.
    pub changed: usize,
}
