// activation.wgsl — the FFN's non-linearity, element by element, in place: x = act(x).
//
// Mirrors `model::ffn::activation_forward` (`relu_forward`, `gelu_forward`,
// `gelu_tanh_forward`).
//
// Bindings:
//   0 p  uniform Params (n: number of elements)
//   1 x  (N) f32, read and written in place — the FFN's hidden layer (B·T, F)
//
// Dispatch: 64 threads per workgroup, one thread per element, on a 2-D grid of workgroups
// (WebGPU allows only 65 535 workgroups per dimension): element
// i = gid.x + gid.y · (64 · num_workgroups.x). Threads past the end do nothing.
//
// ACT (pipeline-creation constant): 0 = ReLU, 1 = GELU (the exact erf form), 2 = GELU's
// tanh approximation (GPT-2).
//
// WGSL has no erf, so GELU uses Abramowitz & Stegun formula 7.1.26:
//   erf(x) ≈ 1 − (a₁t + a₂t² + a₃t³ + a₄t⁴ + a₅t⁵)·e^(−x²),  t = 1 / (1 + p·x),  x ≥ 0,
// with erf(−x) = −erf(x). Its absolute error is below 1.5e-7 everywhere, so
// 0.5·x·(1 + erf(x/√2)) is off by at most 0.75e-7·|x| — below f32 rounding of the result
// for every |x| < 1 and far below the 1e-4 the GPU path must match the CPU to. The CPU
// reference evaluates erf in f64 with libm; this is the cheaper twin.

struct Params {
    n: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

override ACT: u32 = 0u;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> x: array<f32>;

// Abramowitz & Stegun 7.1.26 (see the header).
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
    // exp(−z²) underflows to 0 for z > ~9.3, where erf(z) = 1 in f32: no inf, no NaN.
    let y = 1.0 - poly * exp(-z * z);
    return sign(v) * y;
}

fn gelu(v: f32) -> f32 {
    // 1/√2 written out: WGSL has no constant for it.
    return 0.5 * v * (1.0 + erf_approx(v * 0.70710678118654752));
}

// GELU's tanh approximation (GPT-2): 0.5 · x · (1 + tanh(√(2/π) · (x + 0.044715 · x³))),
// mirroring `model::ffn::gelu_tanh_forward`. The argument is clamped to ±10 first: tanh is
// ±1 there to f32 precision, and a tanh built from exponentials cannot overflow to NaN.
fn gelu_tanh(v: f32) -> f32 {
    let u = clamp(0.79788456080286536 * (v + 0.044715 * v * v * v), -10.0, 10.0);
    return 0.5 * v * (1.0 + tanh(u));
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
    let v = x[i];
    if (ACT == 0u) {
        x[i] = max(v, 0.0);
    } else if (ACT == 1u) {
        x[i] = gelu(v);
    } else {
        x[i] = gelu_tanh(v);
    }
}
