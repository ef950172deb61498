// matmul.wgsl — a PyTorch `Linear` on the GPU: C = A · Wᵀ + b, optionally followed by
// the activation or the residual sum that comes next in the model:
//   C = act(A · Wᵀ + b)          (ACT: the FFN's first layer)
//   C = (A · Wᵀ + b) + R         (HAS_RESIDUAL: a sublayer's last product plus its input)
//
// Mirrors `model::ffn::linear_forward` (and `tensor::matmul_nt`), which every projection
// of the model uses: the Q/K/V projection, the attention output, both FFN layers, the LM
// head and the classifier; with ACT, `linear_forward` then `activation_forward`
// (activation.wgsl's functions, the same expressions); with HAS_RESIDUAL, the sum of
// `Run::sublayer`. One dispatch instead of two, the same numbers.
//
// Bindings (all f32 unless said otherwise; offsets and strides are in elements):
//   0 p     uniform Params
//   1 a     (M rows, row stride p.a_stride) starting at p.a_offset   — the input rows
//   2 w     (N, K) starting at p.w_offset                            — the weight, row-major
//   3 bias  (N) starting at p.b_offset; read only when HAS_BIAS
//   4 c     (M rows, row stride p.c_stride) starting at p.c_offset   — the output, written
//   5 res   laid out as c; read only when HAS_RESIDUAL                — the residual
//
// The strides let one kernel read a column block or every T-th row without a copy:
// the K/V half of `in_proj_weight` is `w_offset = C·C`, a classifier reading position 0
// of each sequence is `a_stride = T·C` with M = B, and Q, K, V land side by side in one
// (N, 3C) buffer with `c_stride = 3C`.
//
// Dispatch: (ceil(N / 16), ceil(M / 16), 1) workgroups of 16 × 16 threads; thread (x, y)
// of workgroup (i, j) computes C[j·16 + y, i·16 + x].
//
// Tiling: the K dimension is walked in steps of 16. At each step the workgroup copies a
// 16 × 16 tile of A and a 16 × 16 tile of W into workgroup (shared) memory, waits at a
// barrier, and every thread adds 16 products from the fast copies. Each value of A and W
// is thus read from global memory once per tile instead of 16 times. The products are
// added in increasing k, the same order as the plain triple loop.
// Workgroup memory used: 2 · 16 · 16 · 4 bytes = 2 KiB (WebGPU guarantees 16 KiB), and
// 256 threads per workgroup (WebGPU guarantees 256).

struct Params {
    m: u32,
    n: u32,
    k: u32,
    a_offset: u32,
    a_stride: u32,
    w_offset: u32,
    b_offset: u32,
    c_offset: u32,
    c_stride: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

// Pipeline-creation constants: HAS_BIAS (false for a `Linear` without bias, e.g. a tied
// LM head); ACT (0 none, 1 ReLU, 2 GELU, 3 GELU tanh); HAS_RESIDUAL.
override HAS_BIAS: bool = true;
override ACT: u32 = 0u;
override HAS_RESIDUAL: bool = false;

const TILE: u32 = 16u;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read> w: array<f32>;
@group(0) @binding(3) var<storage, read> bias: array<f32>;
@group(0) @binding(4) var<storage, read_write> c: array<f32>;
@group(0) @binding(5) var<storage, read> res: array<f32>;

// activation.wgsl's GELU: 0.5 · x · (1 + erf(x / √2)), erf by Abramowitz–Stegun 7.1.26.
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

fn gelu(v: f32) -> f32 {
    return 0.5 * v * (1.0 + erf_approx(v * 0.70710678118654752));
}

// GELU's tanh approximation (GPT-2): 0.5 · x · (1 + tanh(√(2/π) · (x + 0.044715 · x³))),
// mirroring `model::ffn::gelu_tanh_forward`. The argument is clamped to ±10 first: tanh is
// ±1 there to f32 precision, and a tanh built from exponentials cannot overflow to NaN.
fn gelu_tanh(v: f32) -> f32 {
    let u = clamp(0.79788456080286536 * (v + 0.044715 * v * v * v), -10.0, 10.0);
    return 0.5 * v * (1.0 + tanh(u));
}

// tile_a[row][k]: 16 rows of A; tile_w[col][k]: 16 rows of W (= 16 columns of Wᵀ).
var<workgroup> tile_a: array<array<f32, TILE>, TILE>;
var<workgroup> tile_w: array<array<f32, TILE>, TILE>;

@compute @workgroup_size(TILE, TILE, 1)
fn main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
) {
    let row = wg.y * TILE + lid.y; // output row, m
    let col = wg.x * TILE + lid.x; // output column, n
    // The row of W this thread copies into the tile (it serves column wg.x·16 + lid.y).
    let w_row = wg.x * TILE + lid.y;

    var acc = 0.0;
    let steps = (p.k + TILE - 1u) / TILE;
    for (var s = 0u; s < steps; s = s + 1u) {
        let kk = s * TILE + lid.x;
        // Out-of-range elements are zero so they add nothing. Plain `if`s rather than
        // `select`, because `select` evaluates both sides and would read out of range.
        var av = 0.0;
        if (row < p.m && kk < p.k) {
            av = a[p.a_offset + row * p.a_stride + kk];
        }
        var wv = 0.0;
        if (w_row < p.n && kk < p.k) {
            wv = w[p.w_offset + w_row * p.k + kk];
        }
        tile_a[lid.y][lid.x] = av;
        tile_w[lid.y][lid.x] = wv;
        // Every thread of the workgroup reaches this barrier: the loop bound is uniform.
        workgroupBarrier();
        for (var i = 0u; i < TILE; i = i + 1u) {
            acc = acc + tile_a[lid.y][i] * tile_w[lid.x][i];
        }
        // Nobody may overwrite the tiles before everyone has read them.
        workgroupBarrier();
    }

    if (row < p.m && col < p.n) {
        if (HAS_BIAS) {
            acc = acc + bias[p.b_offset + col];
        }
        if (ACT == 1u) {
            acc = max(acc, 0.0);
        } else if (ACT == 2u) {
            acc = gelu(acc);
        } else if (ACT == 3u) {
            acc = gelu_tanh(acc);
        }
        let at = p.c_offset + row * p.c_stride + col;
        if (HAS_RESIDUAL) {
            acc = acc + res[at];
        }
        c[at] = acc;
    }
}
