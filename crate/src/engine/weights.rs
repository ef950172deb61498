//! Weights edited by hand: the engine keeps the trained model beside the one it computes
//! with, so any value can be read, set and restored by its checkpoint name, the edits
//! listed, and the edited model exported as a checkpoint (`checkpoint::save`, the format
//! of a lab run's export).
//!
//! After every change the model is placed on the backend again at the next pass (the GPU
//! sees the edit) and a running generation is dropped: it was drawing from the old weights.

use std::rc::Rc;

use crate::error::{Error, Result};
use crate::model::{Model, ParamKind};
use crate::protocol::{
    F32Array, WeightEdit, WeightEdits, WeightRestoreRequest, WeightSelection, WeightSetRequest,
    WeightTensor, WeightValues,
};
use crate::tensor::Tensor;

use super::Engine;

/// At most this many values are read or set in one request.
pub const MAX_WEIGHT_VALUES: usize = 1 << 16;
/// A `WeightEdit` lists the flat indices of at most this many changed values.
pub const EDIT_INDICES: usize = 256;

/// The flat indices of a selection of `t` (`name` for the messages), checked.
fn indices(
    name: &str,
    t: &Tensor,
    start: Option<usize>,
    count: Option<usize>,
    stride: Option<usize>,
) -> Result<Vec<usize>> {
    let n = t.numel();
    let start = start.unwrap_or(0);
    let stride = stride.unwrap_or(1);
    if stride == 0 {
        return Err(Error::Input(format!(
            "weights of `{name}`: stride must be at least 1"
        )));
    }
    if start >= n {
        return Err(Error::Input(format!(
            "weights of `{name}`: index {start} is outside the tensor, which holds {n} values (shape {:?})",
            t.shape
        )));
    }
    let fit = (n - start).div_ceil(stride);
    let count = count.unwrap_or(fit);
    if count == 0 {
        return Err(Error::Input(format!(
            "weights of `{name}`: count must be at least 1"
        )));
    }
    if count > fit {
        let last = start.saturating_add((count - 1).saturating_mul(stride));
        return Err(Error::Input(format!(
            "weights of `{name}`: index {last} is outside the tensor, which holds {n} values (shape {:?})",
            t.shape
        )));
    }
    if count > MAX_WEIGHT_VALUES {
        return Err(Error::Input(format!(
            "weights of `{name}`: {count} values asked for at once; at most {MAX_WEIGHT_VALUES}"
        )));
    }
    Ok((0..count).map(|i| start + i * stride).collect())
}

/// The tensor of `model` named `name`, or an error naming a few that exist.
fn tensor<'a>(model: &'a Model, name: &str) -> Result<&'a Tensor> {
    model.param(name).ok_or_else(|| {
        let mut names = vec![];
        model.visit_params(&mut |n, _, _| names.push(n.to_string()));
        unknown(name, &names)
    })
}

fn unknown(name: &str, names: &[String]) -> Error {
    let shown: Vec<&str> = names.iter().take(6).map(String::as_str).collect();
    Error::Input(format!(
        "this model has no tensor named `{name}` (its {} tensors begin `{}`; weightTensors lists them all)",
        names.len(),
        shown.join("`, `")
    ))
}

/// The W_K rows (and bias) of an attention projection a `share_qk` model keeps equal to
/// W_Q: editing them alone would be undone, so they are refused by name.
fn shared_key_rows(model: &Model, name: &str, idx: &[usize]) -> Result<()> {
    if !model.config.share_qk {
        return Ok(());
    }
    let c = model.config.d_model;
    let (weight, bias) = (
        name.ends_with("in_proj_weight"),
        name.ends_with("in_proj_bias"),
    );
    let per_row = if weight { c } else { 1 };
    if (weight || bias)
        && idx
            .iter()
            .any(|&i| (c * per_row..2 * c * per_row).contains(&i))
    {
        return Err(Error::Input(format!(
            "`{name}`: this model shares W_K with W_Q (share_qk), so its W_K rows follow the W_Q rows; edit those (rows 0 to {})",
            c - 1
        )));
    }
    Ok(())
}

impl Engine {
    /// The trained model and the one the engine computes with.
    fn models(&self) -> Result<(&Rc<Model>, &Rc<Model>)> {
        let now = self.model()?;
        Ok((self.trained.as_ref().unwrap_or(now), now))
    }

    /// Every parameter tensor of the loaded model, in the checkpoint's order, with how many
    /// of its values are edited.
    pub fn weight_tensors(&self) -> Result<Vec<WeightTensor>> {
        let edits = self.weight_edits()?;
        let mut out = vec![];
        self.model()?.visit_params(&mut |name, t, kind| {
            out.push(WeightTensor {
                name: name.to_string(),
                shape: t.shape.clone(),
                trained: kind == ParamKind::Trained,
                edited: edits
                    .edits
                    .iter()
                    .find(|e| e.name == name)
                    .map_or(0, |e| e.changed),
            })
        });
        Ok(out)
    }

    /// The values of a selection, now and as trained.
    pub fn read_weights(&self, sel: &WeightSelection) -> Result<WeightValues> {
        let (trained, now) = self.models()?;
        let t = tensor(now, &sel.name)?;
        let t0 = tensor(trained, &sel.name)?;
        let idx = indices(&sel.name, t, sel.start, sel.count, sel.stride)?;
        Ok(WeightValues {
            name: sel.name.clone(),
            shape: t.shape.clone(),
            start: idx[0],
            stride: sel.stride.unwrap_or(1),
            values: F32Array(idx.iter().map(|&i| t.data[i]).collect()),
            trained: F32Array(idx.iter().map(|&i| t0.data[i]).collect()),
            indices: idx,
        })
    }

    /// Set values of one tensor; returns what is edited now. A bad name, index or value
    /// (NaN, ±∞) is refused and nothing changes.
    pub fn set_weights(&mut self, req: &WeightSetRequest) -> Result<WeightEdits> {
        let now = self.model()?;
        if let Some(i) = req.values.iter().position(|v| !v.is_finite()) {
            return Err(Error::Input(format!(
                "weights of `{}`: value {} (number {i} of the request) is not a finite number",
                req.name, req.values[i]
            )));
        }
        let t = tensor(now, &req.name)?;
        let idx = indices(&req.name, t, req.start, Some(req.values.len()), req.stride)?;
        shared_key_rows(now, &req.name, &idx)?;
        let values: Vec<(usize, f32)> = idx.into_iter().zip(req.values.iter().copied()).collect();
        self.edit(&req.name, |t, _| {
            for &(i, v) in &values {
                t.data[i] = v;
            }
        })?;
        self.weight_edits()
    }

    /// Restore trained values (all, one tensor, or a selection of it); returns what is
    /// still edited.
    pub fn restore_weights(&mut self, req: &WeightRestoreRequest) -> Result<WeightEdits> {
        let Some(name) = &req.name else {
            if req.start.is_some() || req.count.is_some() || req.stride.is_some() {
                return Err(Error::Input(
                    "restore weights: a selection needs the tensor's name".into(),
                ));
            }
            if let Some(trained) = &self.trained {
                self.model = Some(trained.clone());
                self.after_edit();
            }
            return self.weight_edits();
        };
        let t = tensor(self.model()?, name)?;
        let idx = indices(name, t, req.start, req.count, req.stride)?;
        self.edit(name, |t, t0| {
            for &i in &idx {
                t.data[i] = t0.data[i];
            }
        })?;
        self.weight_edits()
    }

    /// What differs from the trained model now, tensor by tensor (bit for bit).
    pub fn weight_edits(&self) -> Result<WeightEdits> {
        let (trained, now) = self.models()?;
        let mut out = WeightEdits::default();
        if Rc::ptr_eq(trained, now) {
            return Ok(out);
        }
        let mut before = vec![];
        trained.visit_params(&mut |_, t, _| before.push(t));
        let mut k = 0;
        now.visit_params(&mut |name, t, _| {
            // The walk visits the same tensors in the same order in both models.
            let t0 = before[k];
            k += 1;
            let mut e = WeightEdit {
                name: name.to_string(),
                shape: t.shape.clone(),
                changed: 0,
                indices: vec![],
                max_abs_change: 0.0,
            };
            for (i, (a, b)) in t.data.iter().zip(&t0.data).enumerate() {
                if a.to_bits() != b.to_bits() {
                    e.changed += 1;
                    if e.indices.len() < EDIT_INDICES {
                        e.indices.push(i);
                    }
                    e.max_abs_change = e.max_abs_change.max((a - b).abs());
                }
            }
            if e.changed > 0 {
                out.changed += e.changed;
                out.edits.push(e);
            }
        });
        Ok(out)
    }

    /// The model as it computes now (edited or not), as checkpoint bytes (DESIGN.md §3):
    /// loading them gives the same forward pass.
    pub fn export_model(&self) -> Result<Vec<u8>> {
        crate::checkpoint::save(self.model()?)
    }

    /// Change tensor `name` of the engine's model with `f(tensor, trained tensor)`: the
    /// trained model is kept aside the first time (copy on write), a `share_qk` model's W_K
    /// follows W_Q again, and the next pass places the edited model.
    fn edit(&mut self, name: &str, f: impl FnOnce(&mut Tensor, &Tensor)) -> Result<()> {
        let now = self.model()?.clone();
        let t0 = tensor(self.trained.get_or_insert_with(|| now.clone()), name)?.clone();
        // A running generation holds the model too: drop it first, so that only the first
        // edit copies the model (away from the trained one) and later ones change it in place.
        self.generation = None;
        let mut model = now;
        self.model = None;
        let m = Rc::make_mut(&mut model);
        let mut f = Some(f);
        m.visit_params_mut(&mut |n, t, _| {
            if n == name {
                if let Some(f) = f.take() {
                    f(t, &t0);
                }
            }
        });
        m.sync_shared_qk();
        self.model = Some(model);
        self.after_edit();
        Ok(())
    }

    /// The model changed: place it again at the next pass; a generation drawing from the
    /// old weights stops.
    fn after_edit(&mut self) {
        self.placed = None;
        self.generation = None;
    }
}
