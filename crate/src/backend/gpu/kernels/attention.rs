//! The sizes the attention kernels share, and the checks and splits their launches share.
//! The kernels themselves, forward beside backward: `attention_scores.rs`, `softmax.rs`,
//! `attention_values.rs`, and `attention_decode.rs` (the three forward steps of one query
//! row in one dispatch).

use super::launch::MAX_LOOP;
use crate::error::{Error, Result};

/// Sizes shared by the attention kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AttnDims {
    /// B
    pub batch: usize,
    /// H
    pub n_heads: usize,
    /// T: queries per sequence.
    pub t_len: usize,
    /// S: keys per sequence.
    pub s_len: usize,
    /// D
    pub d_head: usize,
    /// Absolute position of query 0 (the cache length in a cached decoding step).
    pub pos0: usize,
    /// R ≥ S: rows each sequence occupies in the key, value and key-token buffers (key j
    /// of sequence b is row b·R + j). S in a plain forward pass; the capacity of the KV
    /// cache, of which the first S rows are filled, in a cached step.
    pub kv_rows: usize,
}

impl AttnDims {
    /// Rows of the key / value buffers the kernels read: the last sequence's S keys
    /// after the B − 1 sequences before it.
    pub(super) fn key_rows(&self) -> usize {
        if self.batch == 0 || self.s_len == 0 {
            0
        } else {
            (self.batch - 1) * self.kv_rows + self.s_len
        }
    }

    pub(super) fn check_rows(&self) -> Result<()> {
        if self.kv_rows < self.s_len {
            return Err(Error::Gpu(format!(
                "attention over S = {} keys in buffers of {} rows per sequence",
                self.s_len, self.kv_rows
            )));
        }
        Ok(())
    }
}

pub(super) fn check_train_dims(d: &AttnDims) -> Result<()> {
    if d.kv_rows != d.s_len {
        return Err(Error::Gpu(format!(
            "the attention backward reads S = {} keys per sequence, not a cache of {} rows",
            d.s_len, d.kv_rows
        )));
    }
    Ok(())
}

/// The sequence ranges `b0 .. b_end` of the dispatches that sum a shared table's gradient
/// over B sequences, when one sequence costs `per_seq` iterations per thread.
pub(super) fn seq_chunks(batch: usize, per_seq: usize) -> Vec<(usize, usize)> {
    let step = (MAX_LOOP / per_seq.max(1)).max(1);
    (0..batch)
        .step_by(step)
        .map(|b0| (b0, (b0 + step).min(batch)))
        .collect()
}
