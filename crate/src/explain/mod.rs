//! Numbers that explain a design choice rather than run the model: why scores are divided
//! by √d_k, what each position encoding looks like and does, what order-blindness means,
//! and how far each encoding carries past the trained length. The page draws them; every
//! one comes from the model's own tensors or from a seeded experiment here.

pub mod blocks;
pub mod extrapolation;
pub mod order;
pub mod parallel;
pub mod positions;
pub mod scoring;
pub mod sqrt_dk;
// The time view's studies run on the GPU as well as the CPU (the whole engine).
#[cfg(feature = "gpu")]
pub mod timing;
