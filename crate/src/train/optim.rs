//! Adam (Kingma & Ba 2015) with bias correction, computed as `torch.optim.Adam` does, and
//! global-norm gradient clipping as `torch.nn.utils.clip_grad_norm_`.
//!
//! The state is one (m, v) pair per trained tensor, in the model's own tree.

use crate::model::{Model, ModelParams, ParamKind};
use crate::tensor::Tensor;

/// Adam's constants. The defaults are the 2017 paper's: β₁ 0.9, β₂ 0.98, ε 1e-9.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdamConfig {
    pub beta1: f32,
    pub beta2: f32,
    pub eps: f32,
}

impl Default for AdamConfig {
    fn default() -> Self {
        AdamConfig {
            beta1: 0.9,
            beta2: 0.98,
            eps: 1e-9,
        }
    }
}

/// Adam's running moments, held in the model's own tree ([`Model::map_params`]): one
/// buffer per trained tensor, where its gradient and its weight are (running statistics
/// get an empty one).
#[derive(Clone, Debug)]
pub struct Adam {
    pub config: AdamConfig,
    /// Steps taken so far.
    pub step: u64,
    /// First moments.
    m: ModelParams<Vec<f32>>,
    /// Second moments.
    v: ModelParams<Vec<f32>>,
}

impl Adam {
    pub fn new(model: &Model, config: AdamConfig) -> Adam {
        let zeros = model.map_params(&mut |_, t, k| match k {
            ParamKind::Trained => vec![0.0; t.numel()], // the shape of its tensor
            ParamKind::Buffer => vec![],
        });
        Adam {
            config,
            step: 0,
            m: zeros.clone(),
            v: zeros,
        }
    }

    /// The running moments (first, second): one buffer per trained tensor, in walk order.
    pub fn moments(&self) -> (Vec<Vec<f32>>, Vec<Vec<f32>>) {
        let flat = |tree: &ModelParams<Vec<f32>>| {
            let mut out = vec![];
            tree.visit(&mut |_, x, k| {
                if k == ParamKind::Trained {
                    out.push(x.clone());
                }
            });
            out
        };
        (flat(&self.m), flat(&self.v))
    }

    /// Adam as it stood after `step` updates, from its saved moments (as [`Adam::moments`]
    /// gives them); each buffer must have the length of its trained tensor of `model`.
    pub fn resume(
        model: &Model,
        config: AdamConfig,
        step: u64,
        m: Vec<Vec<f32>>,
        v: Vec<Vec<f32>>,
    ) -> crate::error::Result<Adam> {
        let mut want = vec![];
        model.visit_params(&mut |_, t, k| {
            if k == ParamKind::Trained {
                want.push(t.numel());
            }
        });
        let got = |x: &[Vec<f32>]| x.iter().map(Vec::len).collect::<Vec<_>>();
        if got(&m) != want || got(&v) != want {
            return Err(crate::error::Error::Input(format!(
                "optimiser state: {} and {} moment buffers do not fit the model's {} trained tensors",
                m.len(),
                v.len(),
                want.len()
            )));
        }
        let tree = |bufs: Vec<Vec<f32>>| {
            let mut it = bufs.into_iter();
            model.map_params(&mut |_, _, k| match k {
                ParamKind::Trained => it.next().unwrap_or_default(),
                ParamKind::Buffer => vec![],
            })
        };
        Ok(Adam {
            config,
            step,
            m: tree(m),
            v: tree(v),
        })
    }

    /// One update of every trained parameter of `model` with the gradients in `grads`
    /// (the model's tree, see `zero_grads`), at learning rate `lr`:
    /// `m ← β₁m + (1 − β₁)g`, `v ← β₂v + (1 − β₂)g²`,
    /// `w ← w − (lr / (1 − β₁ᵗ)) · m / (√v / √(1 − β₂ᵗ) + ε)`.
    /// With `share_qk` the K rows are copied from the Q rows afterwards.
    pub fn step(&mut self, model: &mut Model, grads: &ModelParams<Tensor>, lr: f32) {
        self.step += 1;
        let AdamConfig { beta1, beta2, eps } = self.config;
        let t = self.step as i32;
        let bc1 = 1.0 - beta1.powi(t);
        let bc2_sqrt = (1.0 - beta2.powi(t)).sqrt();
        let step_size = lr / bc1;
        // The four trees share one walk: the i-th value of each is the same parameter.
        let mut g: Vec<&Tensor> = vec![];
        grads.visit(&mut |_, t, _| g.push(t));
        let mut ms: Vec<&mut Vec<f32>> = vec![];
        self.m.visit_mut(&mut |_, m, _| ms.push(m));
        let mut vs: Vec<&mut Vec<f32>> = vec![];
        self.v.visit_mut(&mut |_, v, _| vs.push(v));
        let mut i = 0;
        model.visit_params_mut(&mut |_, w, k| {
            let (m, v, gi) = (&mut *ms[i], &mut *vs[i], &g[i].data);
            i += 1;
            if k != ParamKind::Trained {
                return;
            }
            for j in 0..w.data.len() {
                m[j] += (gi[j] - m[j]) * (1.0 - beta1);
                v[j] = v[j] * beta2 + (1.0 - beta2) * gi[j] * gi[j];
                let denom = v[j].sqrt() / bc2_sqrt + eps;
                w.data[j] -= step_size * m[j] / denom;
            }
        });
        model.sync_shared_qk();
    }
}

/// The global L2 norm of every trained gradient.
pub fn grad_norm(grads: &ModelParams<Tensor>) -> f32 {
    let mut sum = 0.0f64;
    grads.visit(&mut |_, t, k| {
        if k == ParamKind::Trained {
            sum += t.data.iter().map(|&x| (x as f64) * (x as f64)).sum::<f64>();
        }
    });
    sum.sqrt() as f32
}

/// Scale every gradient by `max_norm / (norm + 1e-6)` when the global norm exceeds
/// `max_norm` (as PyTorch). Returns the norm before clipping.
pub fn clip_grad_norm(grads: &mut ModelParams<Tensor>, max_norm: f32) -> f32 {
    let norm = grad_norm(grads);
    let coef = max_norm / (norm + 1e-6);
    if coef < 1.0 {
        grads.visit_mut(&mut |_, t, k| {
            if k == ParamKind::Trained {
                t.data.iter_mut().for_each(|x| *x *= coef);
            }
        });
    }
    norm
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ModelConfig;
    use crate::tokenizer::Tokenizer;
    use crate::train::backward::zero_grads;

    fn pico() -> Model {
        let tok = Tokenizer::char_level("abcd");
        Model::init(
            ModelConfig::preset("gpt-pico", tok.vocab_size()).unwrap(),
            tok,
            1,
        )
    }

    #[test]
    fn first_adam_step_moves_each_weight_by_lr_against_its_gradient_sign() {
        let mut m = pico();
        let before = m.clone();
        let mut g = zero_grads(&m);
        g.embed.data[0] = 0.5;
        g.embed.data[1] = -2e-3;
        let mut adam = Adam::new(&m, AdamConfig::default());
        adam.step(&mut m, &g, 0.01);
        // m̂ = g, v̂ = g²: the step is lr · g / (|g| + ε) ≈ lr · sign(g).
        assert!((before.embed.data[0] - m.embed.data[0] - 0.01).abs() < 1e-6);
        assert!((m.embed.data[1] - before.embed.data[1] - 0.01).abs() < 1e-6);
        assert_eq!(
            m.embed.data[2], before.embed.data[2],
            "zero gradient, no move"
        );
    }

    #[test]
    fn adam_second_step_follows_the_bias_corrected_moments() {
        let mut m = pico();
        let w0 = m.embed.data[0];
        let mut g = zero_grads(&m);
        let mut adam = Adam::new(&m, AdamConfig::default());
        g.embed.data[0] = 1.0;
        adam.step(&mut m, &g, 0.1);
        g.embed.data[0] = 0.5;
        adam.step(&mut m, &g, 0.1);
        // By hand: m₂ = 0.9·0.1 + 0.1·0.5 = 0.14, v₂ = 0.98·0.02 + 0.02·0.25 = 0.0246;
        // m̂ = 0.14/0.19, v̂ = 0.0246/0.0396; step 2 = 0.1·m̂/(√v̂ + 1e-9).
        let step2 = 0.1 * (0.14 / 0.19) / (0.0246f64 / 0.0396).sqrt();
        let want = w0 as f64 - 0.1 - step2;
        assert!(
            (m.embed.data[0] as f64 - want).abs() < 1e-5,
            "{} vs {want}",
            m.embed.data[0]
        );
    }

    #[test]
    fn clipping_scales_to_the_max_norm_and_leaves_small_gradients_alone() {
        let m = pico();
        let mut g = zero_grads(&m);
        g.embed.data[0] = 3.0;
        g.embed.data[1] = 4.0;
        assert!((clip_grad_norm(&mut g, 10.0) - 5.0).abs() < 1e-6);
        assert_eq!(g.embed.data[0], 3.0);
        assert!((clip_grad_norm(&mut g, 1.0) - 5.0).abs() < 1e-6);
        assert!((grad_norm(&g) - 1.0).abs() < 1e-5);
        assert!((g.embed.data[0] - 0.6).abs() < 1e-5);
    }
}
