//! The model's parameters, laid out as the checkpoint contract names them (docs/model.md),
//! and the forward pass built from the ops in this folder.
//!
//! Every parameter has exactly one name; [`Model::visit_params`] walks them in a fixed
//! order, and the checkpoint loader, the saver and the trainer all use that walk, so the
//! names can never drift apart.

pub mod attention;
pub mod attention_reference;
pub mod batch;
pub mod cache;
pub mod cost;
pub mod dropout;
pub mod embedding;
pub mod ffn;
pub mod forward;
pub mod inspect;
pub mod mask;
pub mod norm;
pub mod options;
pub mod plan;
pub mod position;
pub mod record;
pub mod site;
pub mod trace;

/// Helpers shared by the model's unit tests (batch checks, the forward pass).
#[cfg(test)]
pub(crate) mod test_support {
    use super::{Model, Trace};
    use crate::config::ModelConfig;
    use crate::tokenizer::Tokenizer;
    use crate::{Error, Result};

    /// A preset over an eight-character vocabulary with `edit` applied, weights from seed 3.
    pub fn model(preset: &str, edit: impl FnOnce(&mut ModelConfig)) -> Model {
        let tok = Tokenizer::char_level("abcdefgh");
        let mut cfg = ModelConfig::preset(preset, tok.vocab_size()).unwrap();
        edit(&mut cfg);
        cfg.validate().unwrap();
        Model::init(cfg, tok, 3)
    }

    /// The message of an input error; anything else fails the test.
    pub fn input_error(r: Result<Trace>) -> String {
        match r {
            Err(Error::Input(m)) => m,
            other => panic!("expected an input error, got {other:?}"),
        }
    }
}

pub use options::{ForwardOptions, Mode};
pub use site::{AttnSite, HeadRef};
pub use trace::{AttnTrace, FfnTrace, Trace};

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::config::{Arch, ModelConfig, Norm, PosEncoding, Score};
use crate::tensor::Tensor;
use crate::tokenizer::Tokenizer;

/// One attention sublayer (self- or cross-attention). `T` is what each parameter is held
/// as: a [`Tensor`] in the model, a gradient or optimiser state in the trainer, a GPU
/// buffer on the device ([`Model::try_map_params`] makes one tree from another).
#[derive(Clone, Debug)]
pub struct AttentionParams<T = Tensor> {
    /// (3C, C): rows W_Q, W_K, W_V. With `share_qk` the W_K rows mirror W_Q.
    pub in_proj_weight: T,
    /// (3C)
    pub in_proj_bias: T,
    /// (C, C)
    pub out_proj_weight: T,
    /// (C)
    pub out_proj_bias: T,
    /// (H, D): the `w` of additive scoring.
    pub additive_v: Option<T>,
    /// (2K+1, D): Shaw relative key vectors, shared by the heads.
    pub rel_k: Option<T>,
    /// (2K+1, D): Shaw relative value vectors.
    pub rel_v: Option<T>,
}

/// LayerNorm or BatchNorm parameters.
#[derive(Clone, Debug)]
pub struct NormParams<T = Tensor> {
    /// (C) γ
    pub weight: T,
    /// (C) β
    pub bias: T,
    /// (C) BatchNorm only.
    pub running_mean: Option<T>,
    /// (C) BatchNorm only.
    pub running_var: Option<T>,
}

/// One encoder or decoder layer.
#[derive(Clone, Debug)]
pub struct LayerParams<T = Tensor> {
    pub self_attn: AttentionParams<T>,
    /// Decoder layers of an encoder-decoder model only.
    pub cross_attn: Option<AttentionParams<T>>,
    /// (F, C)
    pub linear1_weight: T,
    /// (F)
    pub linear1_bias: T,
    /// (C, F)
    pub linear2_weight: T,
    /// (C)
    pub linear2_bias: T,
    /// norm1, norm2 (, norm3 with cross-attention); empty when `norm = none`.
    pub norms: Vec<NormParams<T>>,
}

#[derive(Clone, Debug)]
pub struct StackParams<T = Tensor> {
    pub layers: Vec<LayerParams<T>>,
    /// `encoder.norm` / `decoder.norm` (a LayerNorm).
    pub final_norm: Option<NormParams<T>>,
}

#[derive(Clone, Debug)]
pub enum HeadParams<T = Tensor> {
    /// Token-level head, (V, C) and optional (V); `None` weight means tied to `embed.weight`.
    Lm { weight: Option<T>, bias: Option<T> },
    /// Classifier reading position 0: (num_classes, C) and (num_classes).
    Classifier { weight: T, bias: T },
}

/// Every parameter of a model as a `T`, in the model's own shape: what
/// [`Model::try_map_params`] returns (e.g. the GPU's uploaded buffers).
#[derive(Clone, Debug)]
pub struct ModelParams<T> {
    /// (V, C) the token embedding; with `src_embed`, the target side's (`tgt_embed.weight`).
    pub embed: T,
    /// (V, C) an encoder-decoder's own source embedding (`src_embed.weight`), when the
    /// checkpoint has separate source and target tables.
    pub src_embed: Option<T>,
    /// (max_len, C), learned positions only.
    pub pos_embed: Option<T>,
    pub encoder: Option<StackParams<T>>,
    pub decoder: Option<StackParams<T>>,
    pub head: HeadParams<T>,
}

/// A whole model: config, tokenizer and every parameter.
#[derive(Clone, Debug)]
pub struct Model {
    pub config: ModelConfig,
    pub tokenizer: Tokenizer,
    /// (V, C) the token embedding; with `src_embed`, the target side's (`tgt_embed.weight`).
    pub embed: Tensor,
    /// (V, C) an encoder-decoder's own source embedding (`src_embed.weight`), when the
    /// checkpoint has separate source and target tables ([`Model::separate_embeddings`]).
    pub src_embed: Option<Tensor>,
    /// (max_len, C), learned positions only.
    pub pos_embed: Option<Tensor>,
    pub encoder: Option<StackParams>,
    pub decoder: Option<StackParams>,
    pub head: HeadParams,
}

/// What a parameter is, so the loader and the trainer can treat kinds differently.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamKind {
    /// Trained by gradient descent.
    Trained,
    /// BatchNorm running statistics: stored, updated in train mode, never given a gradient.
    Buffer,
}

/// One walk over the parameters, instantiated for `&` and `&mut`.
macro_rules! walk {
    ($m:expr, $f:expr, $($r:tt)*) => {{
        use $crate::model::ParamKind::{Buffer, Trained};
        let m = $m;
        let f = $f;
        if let Some(src) = & $($r)* m.src_embed {
            f("src_embed.weight", src, Trained);
            f("tgt_embed.weight", & $($r)* m.embed, Trained);
        } else {
            f("embed.weight", & $($r)* m.embed, Trained);
        }
        if let Some(p) = & $($r)* m.pos_embed {
            f("pos_embed.weight", p, Trained);
        }
        for (prefix, stack) in [("encoder", & $($r)* m.encoder), ("decoder", & $($r)* m.decoder)] {
            let Some(stack) = stack else { continue };
            for (i, layer) in (& $($r)* stack.layers).into_iter().enumerate() {
                let lp = format!("{prefix}.layers.{i}");
                let attns = [("self_attn", Some(& $($r)* layer.self_attn)), ("multihead_attn", Option::from(& $($r)* layer.cross_attn))];
                for (an, a) in attns {
                    let Some(a) = a else { continue };
                    let ap = format!("{lp}.{an}");
                    f(&format!("{ap}.in_proj_weight"), & $($r)* a.in_proj_weight, Trained);
                    f(&format!("{ap}.in_proj_bias"), & $($r)* a.in_proj_bias, Trained);
                    f(&format!("{ap}.out_proj.weight"), & $($r)* a.out_proj_weight, Trained);
                    f(&format!("{ap}.out_proj.bias"), & $($r)* a.out_proj_bias, Trained);
                    if let Some(t) = & $($r)* a.additive_v {
                        f(&format!("{ap}.additive_v"), t, Trained);
                    }
                    if let Some(t) = & $($r)* a.rel_k {
                        f(&format!("{ap}.rel_k.weight"), t, Trained);
                    }
                    if let Some(t) = & $($r)* a.rel_v {
                        f(&format!("{ap}.rel_v.weight"), t, Trained);
                    }
                }
                f(&format!("{lp}.linear1.weight"), & $($r)* layer.linear1_weight, Trained);
                f(&format!("{lp}.linear1.bias"), & $($r)* layer.linear1_bias, Trained);
                f(&format!("{lp}.linear2.weight"), & $($r)* layer.linear2_weight, Trained);
                f(&format!("{lp}.linear2.bias"), & $($r)* layer.linear2_bias, Trained);
                for (n, norm) in (& $($r)* layer.norms).into_iter().enumerate() {
                    let np = format!("{lp}.norm{}", n + 1);
                    f(&format!("{np}.weight"), & $($r)* norm.weight, Trained);
                    f(&format!("{np}.bias"), & $($r)* norm.bias, Trained);
                    if let Some(t) = & $($r)* norm.running_mean {
                        f(&format!("{np}.running_mean"), t, Buffer);
                    }
                    if let Some(t) = & $($r)* norm.running_var {
                        f(&format!("{np}.running_var"), t, Buffer);
                    }
                }
            }
            if let Some(norm) = & $($r)* stack.final_norm {
                f(&format!("{prefix}.norm.weight"), & $($r)* norm.weight, Trained);
                f(&format!("{prefix}.norm.bias"), & $($r)* norm.bias, Trained);
            }
        }
        match & $($r)* m.head {
            $crate::model::HeadParams::Lm { weight, bias } => {
                if let Some(t) = weight {
                    f("lm_head.weight", t, Trained);
                }
                if let Some(t) = bias {
                    f("lm_head.bias", t, Trained);
                }
            }
            $crate::model::HeadParams::Classifier { weight, bias } => {
                f("classifier.weight", weight, Trained);
                f("classifier.bias", bias, Trained);
            }
        }
    }};
}

/// The tree of `$m` (a [`Model`] or a [`ModelParams`] of `$t`) with every parameter turned
/// into a `U` by `$f(name, value, kind)`, in the order and with the names of `walk!`; the
/// first error stops the walk. Written once for both.
macro_rules! try_map_tree {
    ($m:expr, $f:expr, $t:ty) => {{
        let f = $f;
        use ParamKind::{Buffer, Trained};
        let opt =
            |name: &str,
             t: &Option<$t>,
             kind,
             f: &mut dyn FnMut(&str, &$t, ParamKind) -> std::result::Result<U, E>| {
                t.as_ref().map(|t| f(name, t, kind)).transpose()
            };
        let src_embed = opt("src_embed.weight", &$m.src_embed, Trained, f)?;
        let embed_name = if src_embed.is_some() {
            "tgt_embed.weight"
        } else {
            "embed.weight"
        };
        let embed = f(embed_name, &$m.embed, Trained)?;
        let pos_embed = opt("pos_embed.weight", &$m.pos_embed, Trained, f)?;
        let mut stacks = vec![];
        for (prefix, stack) in [("encoder", &$m.encoder), ("decoder", &$m.decoder)] {
            let Some(stack) = stack else {
                stacks.push(None);
                continue;
            };
            let mut layers = Vec::with_capacity(stack.layers.len());
            for (i, layer) in stack.layers.iter().enumerate() {
                let lp = format!("{prefix}.layers.{i}");
                let attn = |an: &str,
                            a: &AttentionParams<$t>,
                            f: &mut dyn FnMut(
                    &str,
                    &$t,
                    ParamKind,
                ) -> std::result::Result<U, E>|
                 -> std::result::Result<AttentionParams<U>, E> {
                    let ap = format!("{lp}.{an}");
                    Ok(AttentionParams {
                        in_proj_weight: f(
                            &format!("{ap}.in_proj_weight"),
                            &a.in_proj_weight,
                            Trained,
                        )?,
                        in_proj_bias: f(&format!("{ap}.in_proj_bias"), &a.in_proj_bias, Trained)?,
                        out_proj_weight: f(
                            &format!("{ap}.out_proj.weight"),
                            &a.out_proj_weight,
                            Trained,
                        )?,
                        out_proj_bias: f(
                            &format!("{ap}.out_proj.bias"),
                            &a.out_proj_bias,
                            Trained,
                        )?,
                        additive_v: opt(&format!("{ap}.additive_v"), &a.additive_v, Trained, f)?,
                        rel_k: opt(&format!("{ap}.rel_k.weight"), &a.rel_k, Trained, f)?,
                        rel_v: opt(&format!("{ap}.rel_v.weight"), &a.rel_v, Trained, f)?,
                    })
                };
                let self_attn = attn("self_attn", &layer.self_attn, f)?;
                let cross_attn = match &layer.cross_attn {
                    Some(a) => Some(attn("multihead_attn", a, f)?),
                    None => None,
                };
                let linear1_weight = f(
                    &format!("{lp}.linear1.weight"),
                    &layer.linear1_weight,
                    Trained,
                )?;
                let linear1_bias = f(&format!("{lp}.linear1.bias"), &layer.linear1_bias, Trained)?;
                let linear2_weight = f(
                    &format!("{lp}.linear2.weight"),
                    &layer.linear2_weight,
                    Trained,
                )?;
                let linear2_bias = f(&format!("{lp}.linear2.bias"), &layer.linear2_bias, Trained)?;
                let mut norms = Vec::with_capacity(layer.norms.len());
                for (n, norm) in layer.norms.iter().enumerate() {
                    let np = format!("{lp}.norm{}", n + 1);
                    norms.push(NormParams {
                        weight: f(&format!("{np}.weight"), &norm.weight, Trained)?,
                        bias: f(&format!("{np}.bias"), &norm.bias, Trained)?,
                        running_mean: opt(
                            &format!("{np}.running_mean"),
                            &norm.running_mean,
                            Buffer,
                            f,
                        )?,
                        running_var: opt(
                            &format!("{np}.running_var"),
                            &norm.running_var,
                            Buffer,
                            f,
                        )?,
                    });
                }
                layers.push(LayerParams {
                    self_attn,
                    cross_attn,
                    linear1_weight,
                    linear1_bias,
                    linear2_weight,
                    linear2_bias,
                    norms,
                });
            }
            let final_norm = match &stack.final_norm {
                Some(norm) => Some(NormParams {
                    weight: f(&format!("{prefix}.norm.weight"), &norm.weight, Trained)?,
                    bias: f(&format!("{prefix}.norm.bias"), &norm.bias, Trained)?,
                    running_mean: None,
                    running_var: None,
                }),
                None => None,
            };
            stacks.push(Some(StackParams { layers, final_norm }));
        }
        let head = match &$m.head {
            HeadParams::Lm { weight, bias } => HeadParams::Lm {
                weight: opt("lm_head.weight", weight, Trained, f)?,
                bias: opt("lm_head.bias", bias, Trained, f)?,
            },
            HeadParams::Classifier { weight, bias } => HeadParams::Classifier {
                weight: f("classifier.weight", weight, Trained)?,
                bias: f("classifier.bias", bias, Trained)?,
            },
        };
        let decoder = stacks.pop().flatten();
        let encoder = stacks.pop().flatten();
        Ok(ModelParams {
            embed,
            src_embed,
            pos_embed,
            encoder,
            decoder,
            head,
        })
    }};
}

/// The tree's own walk, map and try-map: what gradients, optimiser state and GPU buffers
/// are held as, with the names and order of [`Model::visit_params`].
impl<T> ModelParams<T> {
    /// Walk every value with its checkpoint name, in the order of [`Model::visit_params`].
    pub fn visit<'a>(&'a self, f: &mut dyn FnMut(&str, &'a T, ParamKind)) {
        walk!(self, f,);
    }

    /// Walk every value mutably with its checkpoint name, in the same order.
    pub fn visit_mut<'a>(&'a mut self, f: &mut dyn FnMut(&str, &'a mut T, ParamKind)) {
        walk!(self, f, mut);
    }

    /// The same tree with every value turned into a `U` by `f(name, value, kind)`; the
    /// first error stops the walk.
    pub fn try_map<U, E>(
        &self,
        f: &mut dyn FnMut(&str, &T, ParamKind) -> std::result::Result<U, E>,
    ) -> std::result::Result<ModelParams<U>, E> {
        try_map_tree!(self, f, T)
    }

    /// The table a stack reads its input tokens from (see [`Model::embedding`]).
    pub fn embedding(&self, input: plan::StackInput) -> &T {
        match (input, &self.src_embed) {
            (plan::StackInput::Source, Some(src)) => src,
            _ => &self.embed,
        }
    }

    /// [`ModelParams::try_map`] for a map that cannot fail.
    pub fn map<U>(&self, f: &mut dyn FnMut(&str, &T, ParamKind) -> U) -> ModelParams<U> {
        match self.try_map(&mut |n, t, k| Ok::<_, std::convert::Infallible>(f(n, t, k))) {
            Ok(tree) => tree,
            Err(never) => match never {},
        }
    }
}

impl Model {
    /// A model whose every tensor has the right shape and is zero (norm γ and running
    /// variances are one). The checkpoint loader fills it; `init` randomises it.
    pub fn zeros(config: ModelConfig, tokenizer: Tokenizer) -> Model {
        let c = config.d_model;
        let z = |shape: &[usize]| Tensor::zeros(shape);
        let norm = |bn: bool| NormParams {
            weight: Tensor::new(vec![c], vec![1.0; c]).unwrap(),
            bias: z(&[c]),
            running_mean: bn.then(|| z(&[c])),
            running_var: bn.then(|| Tensor::new(vec![c], vec![1.0; c]).unwrap()),
        };
        let attn = |self_attn: bool| AttentionParams {
            in_proj_weight: z(&[3 * c, c]),
            in_proj_bias: z(&[3 * c]),
            out_proj_weight: z(&[c, c]),
            out_proj_bias: z(&[c]),
            additive_v: (config.score == Score::Additive)
                .then(|| z(&[config.n_heads, config.d_head()])),
            rel_k: (self_attn && config.pos_encoding == PosEncoding::Relative)
                .then(|| z(&[2 * config.relative_max_distance + 1, config.d_head()])),
            rel_v: (self_attn && config.pos_encoding == PosEncoding::Relative)
                .then(|| z(&[2 * config.relative_max_distance + 1, config.d_head()])),
        };
        let layer = |cross: bool| LayerParams {
            self_attn: attn(true),
            cross_attn: cross.then(|| attn(false)),
            linear1_weight: z(&[config.d_ff, c]),
            linear1_bias: z(&[config.d_ff]),
            linear2_weight: z(&[c, config.d_ff]),
            linear2_bias: z(&[c]),
            norms: match config.norm {
                Norm::None => vec![],
                n => (0..if cross { 3 } else { 2 })
                    .map(|_| norm(n == Norm::BatchNorm))
                    .collect(),
            },
        };
        let stack = |n: usize, cross: bool| StackParams {
            layers: (0..n).map(|_| layer(cross)).collect(),
            final_norm: config.final_norm.then(|| norm(false)),
        };
        let encoder = (config.encoder_layers() > 0).then(|| stack(config.encoder_layers(), false));
        let decoder = (config.decoder_layers() > 0)
            .then(|| stack(config.decoder_layers(), config.arch == Arch::EncoderDecoder));
        let head = if config.is_classifier() {
            HeadParams::Classifier {
                weight: z(&[config.num_classes, c]),
                bias: z(&[config.num_classes]),
            }
        } else if config.tie_embeddings {
            HeadParams::Lm {
                weight: None,
                bias: None,
            }
        } else {
            HeadParams::Lm {
                weight: Some(z(&[config.vocab_size, c])),
                bias: Some(z(&[config.vocab_size])),
            }
        };
        Model {
            embed: z(&[config.vocab_size, c]),
            src_embed: None,
            pos_embed: (config.pos_encoding == PosEncoding::Learned)
                .then(|| z(&[config.max_len, c])),
            encoder,
            decoder,
            head,
            config,
            tokenizer,
        }
    }

    /// A freshly initialised model for training: Xavier-uniform matrices (as PyTorch's
    /// `nn.Transformer._reset_parameters`), N(0, 1/C)-scaled embeddings, zero biases,
    /// unit norms. Same seed → same weights.
    pub fn init(config: ModelConfig, tokenizer: Tokenizer, seed: u64) -> Model {
        let mut model = Model::zeros(config, tokenizer);
        model.randomize(seed);
        model
    }

    /// Give an encoder-decoder its own source embedding table (`src_embed.weight`, zero;
    /// the token table becomes the target's, `tgt_embed.weight`), as the checkpoint
    /// contract allows. Other architectures have one input and refuse.
    pub fn separate_embeddings(&mut self) -> crate::error::Result<()> {
        if self.config.arch != Arch::EncoderDecoder {
            return Err(crate::error::Error::Input(
                "separate source and target embeddings need an encoder-decoder model".into(),
            ));
        }
        if self.src_embed.is_none() {
            self.src_embed = Some(Tensor::zeros(&self.embed.shape));
        }
        Ok(())
    }

    /// The embedding table a stack reads its input tokens from: the source table of an
    /// encoder-decoder with separate embeddings for the source, else the token table.
    pub fn embedding(&self, input: plan::StackInput) -> &Tensor {
        match (input, &self.src_embed) {
            (plan::StackInput::Source, Some(src)) => src,
            _ => &self.embed,
        }
    }

    /// Fresh random weights for every trained tensor, as [`Model::init`] draws them.
    pub fn randomize(&mut self, seed: u64) {
        let model = self;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let c = model.config.d_model as f32;
        model.visit_params_mut(&mut |name, t, kind| {
            if kind == ParamKind::Buffer || t.shape.len() != 2 {
                return;
            }
            let (fan_out, fan_in) = (t.shape[0] as f32, t.shape[1] as f32);
            let bound = if name.ends_with("embed.weight") {
                // Embeddings are multiplied by √C: keep their product near unit size.
                (3.0 / c).sqrt()
            } else if name.ends_with("rel_k.weight")
                || name.ends_with("rel_v.weight")
                || name.ends_with("additive_v")
            {
                (3.0 / fan_in).sqrt()
            } else {
                (6.0 / (fan_in + fan_out)).sqrt()
            };
            for x in t.data.iter_mut() {
                *x = (rng.random::<f32>() * 2.0 - 1.0) * bound;
            }
        });
        model.sync_shared_qk();
    }

    /// With `share_qk`, copy the W_Q rows (and b_Q) over the W_K rows so the stored
    /// tensors say what the model computes.
    pub fn sync_shared_qk(&mut self) {
        if !self.config.share_qk {
            return;
        }
        let c = self.config.d_model;
        let fix = |a: &mut AttentionParams| {
            let (q, k) = a.in_proj_weight.data.split_at_mut(c * c);
            k[..c * c].copy_from_slice(q);
            let (qb, kb) = a.in_proj_bias.data.split_at_mut(c);
            kb[..c].copy_from_slice(qb);
        };
        for stack in [&mut self.encoder, &mut self.decoder].into_iter().flatten() {
            for l in &mut stack.layers {
                fix(&mut l.self_attn);
                if let Some(x) = &mut l.cross_attn {
                    fix(x);
                }
            }
        }
    }

    /// Walk every stored tensor with its checkpoint name, in a fixed order.
    pub fn visit_params<'a>(&'a self, f: &mut dyn FnMut(&str, &'a Tensor, ParamKind)) {
        walk!(self, f,);
    }

    /// The stored tensor of this checkpoint name, if the model has one.
    pub fn param(&self, name: &str) -> Option<&Tensor> {
        let mut found = None;
        self.visit_params(&mut |n, t, _| {
            if n == name {
                found = Some(t);
            }
        });
        found
    }

    /// Walk every stored tensor mutably with its checkpoint name, in the same order.
    pub fn visit_params_mut(&mut self, f: &mut dyn FnMut(&str, &mut Tensor, ParamKind)) {
        walk!(self, f, mut);
    }

    /// The parameters of the stack whose self-attention is `site` (encoder or decoder).
    pub fn stack_params(&self, site: AttnSite) -> crate::error::Result<&StackParams> {
        match site {
            AttnSite::EncoderSelf => self.encoder.as_ref(),
            _ => self.decoder.as_ref(),
        }
        .ok_or_else(|| {
            crate::error::Error::Input(format!("this model has no {} stack", site.name()))
        })
    }

    /// The same tree with every parameter turned into a `U` by `f(name, tensor, kind)`,
    /// called in the order and with the names of [`Model::visit_params`]; the first error
    /// stops the walk.
    pub fn try_map_params<U, E>(
        &self,
        f: &mut dyn FnMut(&str, &Tensor, ParamKind) -> std::result::Result<U, E>,
    ) -> std::result::Result<ModelParams<U>, E> {
        try_map_tree!(self, f, Tensor)
    }

    /// [`Model::try_map_params`] for a map that cannot fail.
    pub fn map_params<U>(
        &self,
        f: &mut dyn FnMut(&str, &Tensor, ParamKind) -> U,
    ) -> ModelParams<U> {
        match self.try_map_params(&mut |n, t, k| Ok::<_, std::convert::Infallible>(f(n, t, k))) {
            Ok(tree) => tree,
            Err(never) => match never {},
        }
    }

    /// Number of trained values (running statistics excluded).
    pub fn param_count(&self) -> usize {
        let mut n = 0;
        self.visit_params(&mut |_, t, k| {
            if k == ParamKind::Trained {
                n += t.numel()
            }
        });
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(m: &Model) -> Vec<String> {
        let mut v = vec![];
        m.visit_params(&mut |n, _, _| v.push(n.to_string()));
        v
    }

    #[test]
    fn parameter_names_follow_pytorch() {
        let tok = Tokenizer::char_level("abcdefgh");
        let cfg = ModelConfig::preset("seq2seq-nano", tok.vocab_size()).unwrap();
        let n = names(&Model::zeros(cfg, tok));
        for want in [
            "embed.weight",
            "encoder.layers.0.self_attn.in_proj_weight",
            "encoder.layers.1.linear2.bias",
            "decoder.layers.0.multihead_attn.out_proj.weight",
            "decoder.layers.1.norm3.bias",
            "lm_head.weight",
        ] {
            assert!(n.iter().any(|x| x == want), "missing {want} in {n:?}");
        }
        assert!(
            !n.iter().any(|x| x.starts_with("encoder.norm")),
            "no final norm in this preset"
        );
    }

    #[test]
    fn param_count_matches_config_formula() {
        let tok = Tokenizer::char_level("abcdefghijkl");
        for p in crate::config::PRESETS {
            let cfg = ModelConfig::preset(p, tok.vocab_size()).unwrap();
            let m = Model::zeros(cfg.clone(), tok.clone());
            assert_eq!(m.param_count(), cfg.param_count(), "preset {p}");
        }
    }

    #[test]
    fn mapped_parameters_have_the_names_and_order_of_the_walk() {
        let tok = Tokenizer::char_level("abcdefgh");
        for preset in crate::config::PRESETS {
            for norm in [Norm::PreLn, Norm::BatchNorm, Norm::None] {
                let mut cfg = ModelConfig::preset(preset, tok.vocab_size()).unwrap();
                cfg.norm = norm;
                cfg.final_norm = norm != Norm::None;
                cfg.pos_encoding = PosEncoding::Relative;
                let m = Model::init(cfg, tok.clone(), 1);
                let mut mapped = vec![];
                let tree = m
                    .try_map_params(&mut |n, t, k| {
                        mapped.push(n.to_string());
                        Ok::<_, ()>((t.shape.clone(), k))
                    })
                    .unwrap();
                assert_eq!(mapped, names(&m), "{preset} {norm:?}");
                // The tree's own walk and map keep those names and that order.
                let mut walked = vec![];
                tree.visit(&mut |n, _, _| walked.push(n.to_string()));
                assert_eq!(walked, mapped, "{preset} {norm:?}: ModelParams::visit");
                let mut remapped = vec![];
                let kinds = tree.map(&mut |n, (_, k), _| {
                    remapped.push(n.to_string());
                    *k
                });
                assert_eq!(remapped, mapped, "{preset} {norm:?}: ModelParams::map");
                let mut kinds_seen = vec![];
                kinds.visit(&mut |_, k, kind| kinds_seen.push((*k, kind)));
                assert!(
                    kinds_seen.iter().all(|(a, b)| a == b),
                    "kinds travel with the tree"
                );
                // The mapped tree holds each tensor where the model does.
                assert_eq!(tree.embed.0, m.embed.shape);
                let (ms, ts) = (
                    m.decoder.as_ref().or(m.encoder.as_ref()).unwrap(),
                    tree.decoder.as_ref().or(tree.encoder.as_ref()).unwrap(),
                );
                assert_eq!(
                    ts.layers[0].linear1_weight.0,
                    ms.layers[0].linear1_weight.shape
                );
                assert_eq!(ts.layers[0].norms.len(), ms.layers[0].norms.len());
                if let Some(n) = ts.layers[0].norms.first() {
                    assert_eq!(n.running_mean.is_some(), norm == Norm::BatchNorm);
                }
            }
        }
        // The first error stops the walk and is returned.
        let cfg = ModelConfig::preset("gpt-pico", tok.vocab_size()).unwrap();
        let m = Model::zeros(cfg, tok);
        let mut seen = 0;
        let r = m.try_map_params(&mut |n, _, _| {
            seen += 1;
            if n.ends_with("in_proj_bias") {
                Err(n.to_string())
            } else {
                Ok(())
            }
        });
        assert_eq!(r.unwrap_err(), "decoder.layers.0.self_attn.in_proj_bias");
        assert_eq!(seen, 3);
    }

    #[test]
    fn init_is_reproducible_from_the_seed() {
        let tok = Tokenizer::char_level("abcdefgh");
        let cfg = ModelConfig::preset("gpt-pico", tok.vocab_size()).unwrap();
        let a = Model::init(cfg.clone(), tok.clone(), 7);
        let b = Model::init(cfg.clone(), tok.clone(), 7);
        let c = Model::init(cfg, tok, 8);
        assert_eq!(a.embed, b.embed);
        assert_ne!(a.embed, c.embed);
    }
}
