//! Dropout: the masks of one train-mode pass, the 1/(1 − p) scaling of kept units, and eval
//! mode as the identity.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::config::Norm;
use crate::error::{Error, Result};
use crate::model::{ForwardOptions, Mode, Model};
use crate::protocol::Dense;

use super::probe::{block_probe, BlockProbe, DropPlace, DropSite};
use super::{max_diff, with_dropout, SequenceInput};

/// Dropout in train mode against eval mode, on one sequence.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
pub struct DropoutRequest {
    pub input: SequenceInput,
    pub seed: u64,
    /// `None`: the model's own p.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub dropout: Option<f32>,
}

#[derive(Clone, Debug, PartialEq, Serialize, TS)]
pub struct DropoutDemo {
    /// The p of this demonstration, and the model's own.
    pub p: f32,
    pub model_p: f32,
    /// 1/(1 − p): what a kept unit is multiplied by.
    pub keep_scale: f32,
    pub seed: u64,
    /// Every mask of the train-mode pass with `seed`.
    pub sites: Vec<DropSite>,
    /// (T, C) the first stack's embedding + positions in eval mode and in train mode.
    pub embed_eval: Dense,
    pub embed_train: Dense,
    /// Every element of `embed_train` is `embed_eval` × its mask value, bit for bit.
    pub embed_is_masked_eval: bool,
    /// max |Δ logits| between the passes with `seed` and `seed + 1` (train mode).
    pub train_repeat_diff: f32,
    /// Two eval-mode passes: bit-identical logits.
    pub eval_repeat_identical: bool,
    /// The train-mode pass with p = 0 gives the eval-mode logits, bit for bit (a model
    /// without BatchNorm), or `None` for a BatchNorm model (train mode differs anyway).
    pub zero_p_is_eval: Option<bool>,
}

/// Where dropout acts, its masks and 1/(1 − p) scaling in train mode, and eval mode as
/// the identity.
pub fn dropout_demo(m: &Model, req: &DropoutRequest) -> Result<DropoutDemo> {
    let model_p = m.config.dropout;
    let m = with_dropout(m, req.dropout)?;
    let m = &*m;
    let p = m.config.dropout;
    let batch = req.input.batch()?;
    let train = |seed| ForwardOptions {
        mode: Mode::Train { seed },
        ..ForwardOptions::default()
    };
    let eval = ForwardOptions::default();
    let tr = block_probe(m, &batch, &train(req.seed))?;
    let tr2 = block_probe(m, &batch, &train(req.seed.wrapping_add(1)))?;
    let ev = block_probe(m, &batch, &eval)?;
    let ev2 = block_probe(m, &batch, &eval)?;
    let first = |pr: &BlockProbe| -> Result<Dense> {
        let s = pr
            .stacks
            .first()
            .ok_or_else(|| Error::Input("this model has no layer stack".into()))?;
        let (t, c) = (s.hidden.shape[2], s.hidden.shape[3]);
        Ok(Dense::new(&[t, c], &s.hidden.data.0[..t * c])) // (T, C) layer 0 = embedding
    };
    let (embed_eval, embed_train) = (first(&ev)?, first(&tr)?);
    let embed_is_masked_eval = match tr.drops.iter().find(|d| d.place == DropPlace::Embedding) {
        Some(d) => embed_eval
            .data
            .0
            .iter()
            .zip(&d.mask.data.0)
            .zip(&embed_train.data.0)
            .all(|((e, mk), t)| (e * mk).to_bits() == t.to_bits()),
        None => embed_eval.data.0 == embed_train.data.0,
    };
    let zero_p_is_eval = if m.config.norm == Norm::BatchNorm {
        None
    } else {
        let z = with_dropout(m, Some(0.0))?;
        let zp = block_probe(&z, &batch, &train(req.seed))?;
        Some(max_diff(&zp.logits.data.0, &ev.logits.data.0).1)
    };
    Ok(DropoutDemo {
        p,
        model_p,
        keep_scale: if p > 0.0 { 1.0 / (1.0 - p) } else { 1.0 },
        seed: req.seed,
        sites: tr.drops,
        embed_eval,
        embed_train,
        embed_is_masked_eval,
        train_repeat_diff: max_diff(&tr.logits.data.0, &tr2.logits.data.0).0,
        eval_repeat_identical: max_diff(&ev.logits.data.0, &ev2.logits.data.0).1,
        zero_p_is_eval,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explain::blocks::test_support::{consistent, seq};
    use crate::model::test_support::model;

    #[test]
    fn dropout_masks_scale_kept_units_by_one_over_one_minus_p_and_eval_is_the_identity() {
        let m = model("gpt-pico", |_| {});
        let req = DropoutRequest {
            input: seq(&[1, 4, 5, 6, 7, 4, 5]),
            seed: 9,
            dropout: Some(0.25),
        };
        let d = dropout_demo(&m, &req).unwrap();
        assert_eq!(d.p, 0.25);
        let keep = 1.0 / 0.75;
        let places: Vec<DropPlace> = d.sites.iter().map(|s| s.place).collect();
        use DropPlace::*;
        // embedding; per layer: SA probs, SA out, FFN hidden, FFN out.
        let mut want = vec![Embedding];
        for _ in 0..m.config.decoder_layers() {
            want.extend([AttentionProbs, SublayerOutput, FfnHidden, SublayerOutput]);
        }
        assert_eq!(places, want);
        for s in &d.sites {
            assert!(
                s.mask.data.0.iter().all(|&x| x == 0.0 || x == keep),
                "{:?}",
                s.place
            );
            assert!(consistent(&s.mask));
        }
        assert!(d.embed_is_masked_eval);
        assert!(d.train_repeat_diff > 0.0);
        assert!(d.eval_repeat_identical);
        assert_eq!(d.zero_p_is_eval, Some(true));
        let bad = DropoutRequest {
            dropout: Some(1.0),
            ..req
        };
        assert!(matches!(dropout_demo(&m, &bad), Err(Error::Input(_))));
    }
}
