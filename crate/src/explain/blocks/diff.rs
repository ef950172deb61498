//! Diff: two single-sequence passes compared position by position, bit-exactly — which
//! rows an edited token reaches.

use serde::Serialize;
use ts_rs::TS;

use crate::error::Result;
use crate::model::forward::AttnSite;
use crate::model::{ForwardOptions, Model};
use crate::protocol::F32Array;

use super::probe::{block_probe, BlockProbe};
use super::SequenceInput;

/// What a diff row compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum Probed {
    /// The FFN's input (C per position).
    FfnInput,
    /// The FFN's output, before dropout and the residual add (C per position).
    FfnOutput,
    /// The residual stream: `layer` 0 is the embedding, l + 1 the output of layer l.
    Hidden,
    /// The model's output (V logits per position, or the N class logits of position 0).
    Logits,
}

/// Which positions of one tensor changed between two inputs.
#[derive(Clone, Debug, PartialEq, Serialize, TS)]
pub struct RowDiff {
    pub stack: AttnSite,
    pub what: Probed,
    pub layer: usize,
    /// (P): position p's row holds a value whose f32 bits differ, for the positions both
    /// inputs have (P = the shorter length).
    pub changed: Vec<bool>,
    /// (P): max |after − before| over the row.
    pub max_abs: F32Array,
}

/// Two single-sequence passes compared position by position, bit-exactly.
#[derive(Clone, Debug, PartialEq, Serialize, TS)]
pub struct BlockDiff {
    /// Positions whose token differs (of the main stack, or of the source for an
    /// encoder-decoder's encoder), over the shorter length; and the lengths.
    pub edited: Vec<usize>,
    pub src_edited: Vec<usize>,
    pub len_before: usize,
    pub len_after: usize,
    pub rows: Vec<RowDiff>,
    /// The second pass's tensors (batch of one).
    pub after: BlockProbe,
}

/// Bit-exact row comparison of two (T, W) tensors over their first `p` rows.
fn row_diff(a: &[f32], b: &[f32], w: usize, p: usize) -> (Vec<bool>, Vec<f32>) {
    (0..p)
        .map(|i| {
            let (ra, rb) = (&a[i * w..(i + 1) * w], &b[i * w..(i + 1) * w]);
            let changed = ra.iter().zip(rb).any(|(x, y)| x.to_bits() != y.to_bits());
            let max = crate::tensor::max_abs_diff(ra, rb);
            (changed, max)
        })
        .unzip()
}

fn differing(a: &[u32], b: &[u32]) -> Vec<usize> {
    (0..a.len().min(b.len()))
        .filter(|&i| a[i] != b[i])
        .collect()
}

/// `before` and `after` run alone (eval or train mode as `opts` says); every FFN
/// input/output, residual-stream state and logit row compared bit-exactly per position.
pub fn block_diff(
    m: &Model,
    before: &SequenceInput,
    after: &SequenceInput,
    opts: &ForwardOptions,
) -> Result<BlockDiff> {
    let pa = block_probe(m, &before.batch()?, opts)?;
    let pb = block_probe(m, &after.batch()?, opts)?;
    let mut rows = vec![];
    for (sa, sb) in pa.stacks.iter().zip(&pb.stacks) {
        let (ta, tb) = (sa.hidden.shape[2], sb.hidden.shape[2]);
        let p = ta.min(tb);
        let c = m.config.d_model;
        let mut push = |what, layer, a: &[f32], b: &[f32], w| {
            let (changed, max_abs) = row_diff(a, b, w, p);
            rows.push(RowDiff {
                stack: sa.site,
                what,
                layer,
                changed,
                max_abs: F32Array(max_abs),
            });
        };
        for (fa, fb) in sa.ffn.iter().zip(&sb.ffn) {
            push(
                Probed::FfnInput,
                fa.layer,
                &fa.input.data.0,
                &fb.input.data.0,
                c,
            );
            push(
                Probed::FfnOutput,
                fa.layer,
                &fa.output.data.0,
                &fb.output.data.0,
                c,
            );
        }
        let l1 = sa.hidden.shape[0];
        for l in 0..l1 {
            let a = &sa.hidden.data.0[l * ta * c..(l + 1) * ta * c]; // (T, C)
            let b = &sb.hidden.data.0[l * tb * c..(l + 1) * tb * c]; // (T, C)
            push(Probed::Hidden, l, a, b, c);
        }
    }
    let last = pa
        .stacks
        .last()
        .map(|s| s.site)
        .unwrap_or(AttnSite::DecoderSelf);
    let (la, lb) = (&pa.logits, &pb.logits);
    let (p, w) = if la.shape.len() == 3 {
        (la.shape[1].min(lb.shape[1]), la.shape[2]) // (1, T, V)
    } else {
        (1, la.shape[1]) // (1, N)
    };
    let (changed, max_abs) = row_diff(&la.data.0, &lb.data.0, w, p);
    rows.push(RowDiff {
        stack: last,
        what: Probed::Logits,
        layer: 0,
        changed,
        max_abs: F32Array(max_abs),
    });
    Ok(BlockDiff {
        edited: differing(&before.tokens, &after.tokens),
        src_edited: match (&before.src, &after.src) {
            (Some(a), Some(b)) => differing(a, b),
            _ => vec![],
        },
        len_before: before.tokens.len(),
        len_after: after.tokens.len(),
        rows,
        after: pb,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Activation;
    use crate::explain::blocks::test_support::{consistent, seq};
    use crate::model::test_support::model;

    fn causal(on: bool) -> ForwardOptions {
        ForwardOptions {
            causal: Some(on),
            ..ForwardOptions::default()
        }
    }

    fn rows(d: &BlockDiff, what: Probed) -> Vec<&RowDiff> {
        d.rows.iter().filter(|r| r.what == what).collect()
    }

    #[test]
    fn editing_a_later_token_leaves_every_earlier_row_bit_identical_under_the_causal_mask() {
        let m = model("gpt-pico", |_| {});
        let d = block_diff(
            &m,
            &seq(&[1, 4, 5, 6, 7]),
            &seq(&[1, 4, 5, 8, 7]),
            &causal(true),
        )
        .unwrap();
        assert_eq!(d.edited, vec![3]);
        for r in &d.rows {
            assert_eq!(&r.changed[..3], &[false, false, false], "{r:?}");
            if r.what != Probed::Hidden || r.layer > 0 {
                assert!(r.changed[3] && r.changed[4], "{:?} {}", r.what, r.layer);
            }
        }
        // Without the mask, every position sees the edit after the first attention.
        let d = block_diff(
            &m,
            &seq(&[1, 4, 5, 6, 7]),
            &seq(&[1, 4, 5, 8, 7]),
            &causal(false),
        )
        .unwrap();
        let logits = rows(&d, Probed::Logits)[0];
        assert!(logits.changed.iter().all(|&c| c), "{logits:?}");
    }

    #[test]
    fn the_ffn_of_an_unedited_position_is_bit_identical_where_its_input_is() {
        // The FFN never mixes positions: a row of its output changes exactly where its
        // input row changed, and the edit reaches other rows only through attention.
        let m = model("gpt-pico", |c| c.activation = Activation::Relu);
        let d = block_diff(
            &m,
            &seq(&[1, 4, 5, 6, 7]),
            &seq(&[1, 4, 5, 8, 7]),
            &causal(true),
        )
        .unwrap();
        let ins = rows(&d, Probed::FfnInput);
        let outs = rows(&d, Probed::FfnOutput);
        assert_eq!(ins.len(), m.config.decoder_layers());
        for (i, o) in ins.iter().zip(&outs) {
            assert_eq!(i.changed, o.changed);
        }
        let ffn = &d.after.stacks[0].ffn[0];
        assert!(consistent(&ffn.pre) && consistent(&ffn.hidden) && consistent(&ffn.output));
        // ReLU: every non-positive pre-activation is exactly zero in the hidden units.
        for (p, h) in ffn.pre.data.0.iter().zip(&ffn.hidden.data.0) {
            assert_eq!(*h, p.max(0.0));
        }
        assert!(ffn.zero_fraction > 0.0);
        // Per position: the count of its F hidden units that are exactly 0.
        let f = ffn.hidden.shape[2];
        let want: Vec<u32> = ffn
            .pre
            .data
            .0
            .chunks(f)
            .map(|row| row.iter().filter(|&&p| p <= 0.0).count() as u32)
            .collect();
        assert_eq!(ffn.zeros, want);
    }
}
