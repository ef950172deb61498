//! Backends: the CPU reference and the WebGPU kernels, switched at run time.

pub mod gpu;
