// matmul_backward.wgsl — a strided matrix product that adds into its output:
//   C[m, n] (+)= Σ_k A[m, k] · B[k, n],
//   A[m, k] = a[p.a_offset + m·p.a_row + k·p.a_col],
//   B[k, n] = b[p.b_offset + k·p.b_row + n·p.b_col],
//   C[m, n] = c[p.c_offset + m·p.c_stride + n].
//
// Mirrors `tensor::gemm` (which `matmul_nn` and `matmul_tn` call) as used by
// `train::backward::ffn::linear_backward`: for the forward `out (N, OUT) = inp (N, IN) · Wᵀ`,
//   dinp    (N, IN)   += dout · W     — A = dout (a_row OUT, a_col 1), B = W (b_row IN, b_col 1)
//   dweight (OUT, IN) += doutᵀ · inp  — A = doutᵀ (a_row 1, a_col OUT), B = inp (b_row IN, b_col 1)
// The strides also read every T-th row (the classifier's position 0: a row stride of T·C)
// and write a column block of a wider buffer (c_stride).
//
// Bindings (f32; offsets and strides in elements):
//   0 p  uniform Params
//   1 a  the left operand, (M, K) through (a_row, a_col)
//   2 b  the right operand, (K, N) through (b_row, b_col)
//   3 c  (M rows of N, row stride c_stride) from c_offset, read and written
//
// ACCUMULATE (pipeline-creation constant): true adds the product to what C holds (the CPU
// backward adds into gradients zeroed once per step); false overwrites C.
//
// Dispatch: (ceil(N / 16), ceil(M / 16), 1) workgroups of 16 × 16 threads; thread (x, y)
// of workgroup (i, j) computes C[j·16 + y, i·16 + x].
//
// Tiling as in matmul.wgsl: K is walked in steps of 16; each step copies a 16 × 16 tile of
// A and of B into workgroup memory (2 · 16 · 16 · 4 bytes = 2 KiB), waits at a barrier,
// and adds 16 products in increasing k. Out-of-range elements load as zero.

struct Params {
    m: u32,
    n: u32,
    k: u32,
    a_offset: u32,
    a_row: u32,
    a_col: u32,
    b_offset: u32,
    b_row: u32,
    b_col: u32,
    c_offset: u32,
    c_stride: u32,
    _pad0: u32,
}

override ACCUMULATE: bool = true;

const TILE: u32 = 16u;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read> b: array<f32>;
@group(0) @binding(3) var<storage, read_write> c: array<f32>;

// tile_a[row][k]: 16 rows of A; tile_b[k][col]: 16 rows (k) of B.
var<workgroup> tile_a: array<array<f32, TILE>, TILE>;
var<workgroup> tile_b: array<array<f32, TILE>, TILE>;

@compute @workgroup_size(TILE, TILE, 1)
fn main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
) {
    let row = wg.y * TILE + lid.y; // output row, m
    let col = wg.x * TILE + lid.x; // output column, n

    var acc = 0.0;
    let steps = (p.k + TILE - 1u) / TILE;
    for (var s = 0u; s < steps; s = s + 1u) {
        // This thread loads A[row, s·16 + x] and B[s·16 + y, col].
        let ka = s * TILE + lid.x;
        let kb = s * TILE + lid.y;
        // Plain `if`s, not `select`: `select` evaluates both sides and would read out of
        // range.
        var av = 0.0;
        if (row < p.m && ka < p.k) {
            av = a[p.a_offset + row * p.a_row + ka * p.a_col];
        }
        var bv = 0.0;
        if (kb < p.k && col < p.n) {
            bv = b[p.b_offset + kb * p.b_row + col * p.b_col];
        }
        tile_a[lid.y][lid.x] = av;
        tile_b[lid.y][lid.x] = bv;
        // The loop bound is uniform, so every thread reaches both barriers.
        workgroupBarrier();
        for (var i = 0u; i < TILE; i = i + 1u) {
            acc = acc + tile_a[lid.y][i] * tile_b[i][lid.x];
        }
        workgroupBarrier();
    }

    if (row < p.m && col < p.n) {
        let at = p.c_offset + row * p.c_stride + col;
        if (ACCUMULATE) {
            c[at] = c[at] + acc;
        } else {
            c[at] = acc;
        }
    }
}
