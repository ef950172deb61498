//! GPU-vs-CPU parity on the running device: one forward pass of the loaded model on both
//! backends, and the largest difference of their logits. The page shows it beside the
//! backend's name, and keeps the GPU only when it agrees with the CPU reference.

use crate::backend::{Backend, Placed};
use crate::config::Arch;
use crate::error::{Error, Result};
use crate::model::forward::Batch;
use crate::model::{ForwardOptions, Model, Trace};
use crate::tensor::max_abs_diff;

/// The largest |logit_gpu − logit_cpu| the GPU may show and still be trusted. Equal
/// kernels differ by rounding only (about 1e-6 on these models); a broken one by far more,
/// and a NaN or an infinity on either side counts as an infinite difference.
pub const PARITY_TOLERANCE: f32 = 1e-3;

/// What one parity check found.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, ts_rs::TS)]
pub struct Parity {
    /// max |logit_gpu − logit_cpu| (+∞ when either side has a NaN or an infinity).
    pub max_abs_diff: f32,
    /// `max_abs_diff <= PARITY_TOLERANCE`.
    pub agrees: bool,
}

impl Parity {
    fn of(max_abs_diff: f32) -> Parity {
        Parity {
            max_abs_diff,
            agrees: max_abs_diff <= PARITY_TOLERANCE,
        }
    }
}

/// The fixed input of the check: `<bos>` and the first tokens of the vocabulary after the
/// special ones, at most 8 (an encoder-decoder reads the same tokens as its source).
pub fn parity_batch(m: &Model) -> Result<Batch> {
    let spec = &m.tokenizer.spec;
    let v = m.config.vocab_size as u32;
    let first = 4.min(v - 1);
    let n = m.config.max_len.min(8);
    let mut ids: Vec<u32> = vec![spec.bos]; // (T)
    ids.extend((0..n as u32 - 1).map(|i| first + i % (v - first)));
    ids.truncate(n);
    let batch = Batch::single(&ids)?;
    if m.config.arch == Arch::EncoderDecoder {
        return batch.with_source(vec![ids[1..].to_vec()]);
    }
    Ok(batch)
}

/// Compare two passes' logits (class logits for a classifier).
pub fn logit_parity(cpu: &Trace, gpu: &Trace) -> Result<Parity> {
    let (a, b) = match (&cpu.class_logits, &gpu.class_logits) {
        (Some(a), Some(b)) => (a, b),    // (B, num_classes)
        _ => (&cpu.logits, &gpu.logits), // (B, T, V)
    };
    if a.shape != b.shape {
        return Err(Error::Gpu(format!(
            "the GPU returned logits of shape {:?}, the CPU {:?}",
            b.shape, a.shape
        )));
    }
    // Logits are finite in a working model: an infinity, even on both sides, is no
    // agreement to certify.
    let finite = a.data.iter().chain(&b.data).all(|x| x.is_finite());
    Ok(Parity::of(if finite {
        max_abs_diff(&a.data, &b.data)
    } else {
        f32::INFINITY
    }))
}

/// Run the parity input on the CPU and on `gpu` (the model placed on a GPU), and compare. `corrupt` is applied to
/// the GPU's trace before the comparison — `None` always, except in the page's test-only
/// request that checks a broken GPU is caught.
pub async fn gpu_parity(
    m: &Model,
    gpu: &Placed,
    corrupt: Option<fn(&mut Trace)>,
) -> Result<Parity> {
    if !matches!(gpu, Placed::Gpu(_)) {
        return Err(Error::Input(
            "parity needs the GPU backend: call use_gpu() first".into(),
        ));
    }
    let batch = parity_batch(m)?;
    let opts = ForwardOptions::default();
    let cpu = Backend::Cpu.forward(m, &batch, &opts).await?;
    let mut g = gpu.forward(m, &batch, &opts).await?;
    if let Some(f) = corrupt {
        f(&mut g);
    }
    logit_parity(&cpu, &g)
}

/// One logit off by 0.01, ten times the tolerance, every other one right: a kernel wrong in
/// one place (for the test-only request).
pub fn wrong_logit(t: &mut Trace) {
    let x = match &mut t.class_logits {
        Some(c) => c.data.first_mut(),
        None => t.logits.data.first_mut(),
    };
    if let Some(x) = x {
        *x += 10.0 * PARITY_TOLERANCE;
    }
}

/// Every logit made NaN: what a broken kernel returns (for the test-only request).
pub fn nan_logits(t: &mut Trace) {
    t.logits.data.fill(f32::NAN);
    if let Some(c) = &mut t.class_logits {
        c.data.fill(f32::NAN);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor::Tensor;

    fn trace(logits: Vec<f32>) -> Trace {
        let n = logits.len();
        Trace {
            logits: Tensor::new(vec![1, 1, n], logits).unwrap(), // (B, T, V)
            class_logits: None,
            attention: vec![],
            hidden: vec![],
            ffn: vec![],
            running_stats: vec![],
        }
    }

    #[test]
    fn nan_gpu_logits_disagree_infinitely_with_the_cpu() {
        let cpu = trace(vec![0.5, -1.0, 2.0]);
        let mut gpu = cpu.clone();
        nan_logits(&mut gpu);
        let p = logit_parity(&cpu, &gpu).unwrap();
        assert_eq!(p.max_abs_diff, f32::INFINITY);
        assert!(!p.agrees);
    }

    #[test]
    fn rounding_differences_agree_and_larger_ones_do_not() {
        let cpu = trace(vec![0.5, -1.0, 2.0]);
        let close = trace(vec![0.5 + 1e-6, -1.0, 2.0]);
        let far = trace(vec![0.5, -1.0, 2.01]);
        assert!(logit_parity(&cpu, &close).unwrap().agrees);
        let p = logit_parity(&cpu, &far).unwrap();
        assert!(!p.agrees && (p.max_abs_diff - 0.01).abs() < 1e-6);
        let inf = trace(vec![0.5, f32::INFINITY, 2.0]);
        assert_eq!(
            logit_parity(&cpu, &inf).unwrap().max_abs_diff,
            f32::INFINITY
        );
        // The same infinity on both sides is a broken model, not an agreement.
        let p = logit_parity(&inf, &inf).unwrap();
        assert_eq!((p.max_abs_diff, p.agrees), (f32::INFINITY, false));
        let nan = trace(vec![0.5, f32::NAN, 2.0]);
        assert!(!logit_parity(&nan, &nan).unwrap().agrees);
    }

    #[test]
    fn one_wrong_gpu_logit_disagrees_by_its_error() {
        let cpu = trace(vec![0.5, -1.0, 2.0]);
        let mut gpu = cpu.clone();
        wrong_logit(&mut gpu);
        let p = logit_parity(&cpu, &gpu).unwrap();
        assert!(!p.agrees);
        assert!(
            (p.max_abs_diff - 10.0 * PARITY_TOLERANCE).abs() < 1e-6,
            "{p:?}"
        );
    }

    #[test]
    fn logits_of_another_shape_are_a_gpu_error() {
        let e = logit_parity(&trace(vec![1.0, 2.0]), &trace(vec![1.0])).unwrap_err();
        assert!(matches!(e, Error::Gpu(_)), "{e}");
    }
}
