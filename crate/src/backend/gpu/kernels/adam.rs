//! One Adam update of one trained tensor with the step's learning rate
//! (`shaders/adam.wgsl`), mirroring `train::optim::Adam::step` and
//! `train::schedule::noam_lr`.

use bytemuck::{Pod, Zeroable};

use super::launch::{groups_for, need, u};
use crate::backend::gpu::catalogue::{Kernel, PipelineKey};
use crate::backend::gpu::context::{GpuBuffer, Recorder};
use crate::error::{Error, Result};
use crate::train::optim::AdamConfig;

/// The learning rate of an Adam step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LrRule {
    /// The same rate every step.
    Constant(f32),
    /// `train::schedule::noam_lr(step, d_model, warmup, factor)`, computed on the GPU.
    Noam {
        d_model: usize,
        warmup: u64,
        factor: f32,
    },
}

/// Arguments of [`Recorder::adam`]: one trained tensor of `n` elements.
#[derive(Clone, Copy, Debug)]
pub struct AdamArgs<'a> {
    /// (n) the gradient, already clipped.
    pub grad: &'a GpuBuffer,
    /// (n) the weights, updated.
    pub weight: &'a GpuBuffer,
    /// (n) first and second moments, updated.
    pub m: &'a GpuBuffer,
    pub v: &'a GpuBuffer,
    /// (1) the step's learning rate, written.
    pub lr_out: &'a GpuBuffer,
    pub n: usize,
    /// The step being taken, from 1 (`Adam::step` after its increment).
    pub step: u64,
    pub lr: LrRule,
    pub config: AdamConfig,
}

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct AdamParams {
    n: u32,
    step: u32,
    lr_rule: u32,
    d_model: u32,
    warmup: u32,
    lr: f32,
    beta1: f32,
    beta2: f32,
    eps: f32,
    _pad: [u32; 3],
}

impl Recorder {
    /// One Adam update of one trained tensor: `shaders/adam.wgsl`, mirroring
    /// `train::optim::Adam::step` (and `train::schedule::noam_lr` for [`LrRule::Noam`]).
    pub fn adam(&mut self, x: &AdamArgs) -> Result<()> {
        for (b, what) in [
            (x.grad, "gradient"),
            (x.weight, "weights"),
            (x.m, "first moment"),
            (x.v, "second moment"),
        ] {
            need(b, x.n, what)?;
        }
        need(x.lr_out, 1, "learning rate")?;
        if x.step == 0 {
            return Err(Error::Gpu("Adam steps count from 1".into()));
        }
        let step = u32::try_from(x.step)
            .map_err(|_| Error::Gpu(format!("Adam step {} does not fit in 32 bits", x.step)))?;
        let (lr_rule, d_model, warmup, lr) = match x.lr {
            LrRule::Constant(lr) => (0, 0, 0, lr),
            LrRule::Noam {
                d_model,
                warmup,
                factor,
            } => (
                1,
                u(d_model, "d_model")?,
                u32::try_from(warmup)
                    .map_err(|_| Error::Gpu(format!("warmup {warmup} does not fit in 32 bits")))?,
                factor,
            ),
        };
        let p = AdamParams {
            n: u(x.n, "N")?,
            step,
            lr_rule,
            d_model,
            warmup,
            lr,
            beta1: x.config.beta1,
            beta2: x.config.beta2,
            eps: x.config.eps,
            _pad: [0; 3],
        };
        // At least one thread, so the learning rate is written even for an empty tensor.
        self.dispatch(
            PipelineKey::plain(Kernel::Adam),
            bytemuck::bytes_of(&p),
            &[
                &x.grad.buffer,
                &x.weight.buffer,
                &x.m.buffer,
                &x.v.buffer,
                &x.lr_out.buffer,
            ],
            groups_for(x.n.max(1))?,
        )
    }
}
