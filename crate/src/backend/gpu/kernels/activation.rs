//! The FFN's non-linearity in place (`shaders/activation.wgsl`) and its gradient
//! (`shaders/activation_backward.wgsl`), mirroring `model::ffn::activation_forward` and
//! `train::backward::ffn::activation_backward`.

use super::launch::{groups_for, need, u, CountParams, FourU32};
use crate::backend::gpu::catalogue::{Kernel, PipelineKey};
use crate::backend::gpu::context::{GpuBuffer, Recorder};
use crate::config::Activation;
use crate::error::Result;

impl Recorder {
    /// `x[..n] = act(x[..n])` in place: `shaders/activation.wgsl`, mirroring
    /// `model::ffn::activation_forward`.
    pub fn activation(&mut self, x: &GpuBuffer, n: usize, act: Activation) -> Result<()> {
        need(x, n, "activation input")?;
        let p = CountParams {
            n: u(n, "N")?,
            _pad: [0; 3],
        };
        let code = match act {
            Activation::Relu => 0,
            Activation::Gelu => 1,
            Activation::GeluTanh => 2,
        };
        let key = PipelineKey {
            kernel: Kernel::Activation,
            constants: vec![("ACT", code)],
        };
        self.dispatch(key, bytemuck::bytes_of(&p), &[&x.buffer], groups_for(n)?)
    }

    /// `dinp[..n] += dout · act'(inp)`: `shaders/activation_backward.wgsl`, mirroring
    /// `train::backward::ffn::activation_backward`.
    pub fn activation_backward(
        &mut self,
        dout: &GpuBuffer,
        inp: &GpuBuffer,
        dinp: &GpuBuffer,
        n: usize,
        act: Activation,
    ) -> Result<()> {
        need(dout, n, "activation output gradient")?;
        need(inp, n, "activation input")?;
        need(dinp, n, "activation input gradient")?;
        let p = FourU32 {
            a: u(n, "N")?,
            b: 0,
            c: 0,
            d: 0,
        };
        let code = match act {
            Activation::Relu => 0,
            Activation::Gelu => 1,
            Activation::GeluTanh => 2,
        };
        let key = PipelineKey {
            kernel: Kernel::ActivationBackward,
            constants: vec![("ACT", code)],
        };
        self.dispatch(
            key,
            bytemuck::bytes_of(&p),
            &[&dout.buffer, &inp.buffer, &dinp.buffer],
            groups_for(n)?,
        )
    }
}
