// adam.wgsl — one Adam update (Kingma & Ba 2015, with bias correction) of one trained
// tensor, as `torch.optim.Adam`, with the step's learning rate computed here:
//   lr = p.lr                                                        (LR_RULE 0, constant)
//   lr = factor · d_model^−½ · min(t^−½, t · warmup^−³ᐟ²)            (LR_RULE 1, Noam)
//   m ← m + (g − m)·(1 − β₁),   v ← β₂·v + (1 − β₂)·g²,
//   w ← w − (lr / (1 − β₁ᵗ)) · m / (√v / √(1 − β₂ᵗ) + ε),   t = p.step (from 1).
//
// Mirrors `train::optim::Adam::step` (the same operations in the same order, in f32) and
// `train::schedule::noam_lr` (f64 on the CPU, f32 here: a few units in the last place of
// lr). β^t is computed by binary powering with the multiplications of the compiler
// runtime's `__powisf2`, which Rust's `f32::powi` calls for a run-time exponent, so the
// bias corrections are the CPU's to the bit.
//
// Bindings:
//   0 p       uniform Params
//   1 g       (n) f32, read — the tensor's gradient (already clipped)
//   2 w       (n) f32, read and written — the weights
//   3 m       (n) f32, read and written — Adam's first moment
//   4 v       (n) f32, read and written — Adam's second moment
//   5 lr_out  (1) f32, written by thread 0 — the step's learning rate, for the metrics
//
// Dispatch: 64 threads per workgroup, one thread per element, 2-D grid:
// element i = gid.x + gid.y · (64 · num_workgroups.x).

struct Params {
    n: u32,
    step: u32,
    lr_rule: u32,
    d_model: u32,
    warmup: u32,
    lr: f32,        // LR_RULE 0: the rate; LR_RULE 1: Noam's factor
    beta1: f32,
    beta2: f32,
    eps: f32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> g: array<f32>;
@group(0) @binding(2) var<storage, read_write> w: array<f32>;
@group(0) @binding(3) var<storage, read_write> m: array<f32>;
@group(0) @binding(4) var<storage, read_write> v: array<f32>;
@group(0) @binding(5) var<storage, read_write> lr_out: array<f32>;

// a^b for b ≥ 0 by binary powering, in `__powisf2`'s order.
fn powi(base: f32, exponent: u32) -> f32 {
    var a = base;
    var b = exponent;
    var r = 1.0;
    loop {
        if ((b & 1u) != 0u) {
            r = r * a;
        }
        b = b / 2u;
        if (b == 0u) {
            break;
        }
        a = a * a;
    }
    return r;
}

fn learning_rate() -> f32 {
    if (p.lr_rule == 0u) {
        return p.lr;
    }
    let t = f32(max(p.step, 1u));
    let warm = f32(max(p.warmup, 1u));
    return p.lr * inverseSqrt(f32(p.d_model)) * min(inverseSqrt(t), t / (warm * sqrt(warm)));
}

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let i = gid.x + gid.y * (nwg.x * 64u);
    let lr = learning_rate();
    if (i == 0u) {
        lr_out[0] = lr;
    }
    if (i >= p.n) {
        return;
    }
    let bc1 = 1.0 - powi(p.beta1, p.step);
    let bc2_sqrt = sqrt(1.0 - powi(p.beta2, p.step));
    let step_size = lr / bc1;
    let gi = g[i];
    let mi = m[i] + (gi - m[i]) * (1.0 - p.beta1);
    let vi = v[i] * p.beta2 + (1.0 - p.beta2) * gi * gi;
    let denom = sqrt(vi) / bc2_sqrt + p.eps;
    m[i] = mi;
    v[i] = vi;
    w[i] = w[i] - step_size * mi / denom;
}
