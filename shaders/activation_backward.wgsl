// activation_backward.wgsl — the gradient through the FFN's non-linearity, element by
// element: dinp[i] += dout[i] · act'(inp[i]).
//
// Mirrors `train::backward::ffn::activation_backward` (`relu_backward`, `gelu_backward`):
//   ReLU: act'(x) = 1 where x > 0, else 0 (the gradient at exactly 0 is 0, as the CPU);
//   GELU: act(x) = x·Φ(x), act'(x) = Φ(x) + x·φ(x), Φ(x) = 0.5·(1 + erf(x/√2)),
//         φ(x) = e^(−x²/2) / √(2π) — the exact erf form the forward uses.
//
// Bindings:
//   0 p     uniform Params (n: number of elements)
//   1 dout  (N) f32, read             — the gradient of the activation's output (B·T, F)
//   2 inp   (N) f32, read             — the activation's input, kept by the forward (B·T, F)
//   3 dinp  (N) f32, read and written — added to
//
// ACT (pipeline-creation constant): 0 = ReLU, 1 = GELU, 2 = GELU's tanh approximation.
//
// erf: Abramowitz & Stegun 7.1.26, as in activation.wgsl (absolute error < 1.5e-7, so Φ is
// off by < 0.75e-7); the CPU uses libm's erff.
//
// Dispatch: 64 threads per workgroup, one thread per element, 2-D grid:
// element i = gid.x + gid.y · (64 · num_workgroups.x).

struct Params {
    n: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

override ACT: u32 = 0u;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> dout: array<f32>;
@group(0) @binding(2) var<storage, read> inp: array<f32>;
@group(0) @binding(3) var<storage, read_write> dinp: array<f32>;

// Abramowitz & Stegun 7.1.26 (see activation.wgsl).
fn erf_approx(v: f32) -> f32 {
    let a1 = 0.254829592;
    let a2 = -0.284496736;
    let a3 = 1.421413741;
    let a4 = -1.453152027;
    let a5 = 1.061405429;
    let pp = 0.3275911;
    let z = abs(v);
    let t = 1.0 / (1.0 + pp * z);
    let poly = ((((a5 * t + a4) * t + a3) * t + a2) * t + a1) * t;
    let y = 1.0 - poly * exp(-z * z);
    return sign(v) * y;
}

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let i = gid.x + gid.y * (nwg.x * 64u);
    if (i >= p.n) {
        return;
    }
    let x = inp[i];
    let g = dout[i];
    if (ACT == 0u) {
        if (x > 0.0) {
            dinp[i] = dinp[i] + g;
        }
    } else if (ACT == 2u) {
        // GELU tanh: 0.5·(1 + t) + 0.5·x·(1 − t²)·√(2/π)·(1 + 3·0.044715·x²), t = tanh(u),
        // u clamped to ±10 as in activation.wgsl (its derivative there is 0 in f32 anyway).
        let u = clamp(0.79788456080286536 * (x + 0.044715 * x * x * x), -10.0, 10.0);
        let t = tanh(u);
        let du = 0.79788456080286536 * (1.0 + 3.0 * 0.044715 * x * x);
        dinp[i] = dinp[i] + g * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * du);
    } else {
        // 1/√2 and 1/√(2π) written out: WGSL has no constants for them. For |x| > ~13,
        // e^(−x²/2) underflows to 0: the derivative is then exactly Φ(x) ∈ {0, 1}.
        let cdf = 0.5 * (1.0 + erf_approx(x * 0.70710678118654752));
        let pdf = 0.39894228040143268 * exp(-0.5 * x * x);
        dinp[i] = dinp[i] + g * (cdf + x * pdf);
    }
}
