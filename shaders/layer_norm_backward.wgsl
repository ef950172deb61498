// layer_norm_backward.wgsl — the gradient of LayerNorm over the last dimension, in two
// dispatches of one kernel (MODE):
//   forward (layer_norm.wgsl): n = (x − μ)·rstd per row, y = n·γ + β
//   MODE 0, per row:    dn_i = γ_i·dy_i,
//                       dx_i += rstd · (dn_i − mean_i(dn) − n_i · mean_i(dn·n))
//                       and the row's (μ, rstd) written to `stats` for MODE 1;
//   MODE 1, per column: dβ_i += Σ_r dy[r, i],  dγ_i += Σ_r n[r, i] · dy[r, i].
//
// Mirrors `train::backward::norm::layernorm_backward`. The CPU takes μ and rstd from
// `layernorm_forward`; the GPU forward keeps nothing, so MODE 0 recomputes them exactly
// as layer_norm.wgsl does (two passes over the row, biased σ², ε = 1e-5).
//
// Bindings:
//   0 p       uniform Params (rows R, width C)
//   1 x       (R, C) f32, read        — the forward's input
//   2 gamma   (C) f32, read           — `normN.weight`
//   3 dy      (R, C) f32, read        — the gradient of the forward's output
//   4 stats   (R, 2) f32, (μ, rstd) per row: written by MODE 0, read by MODE 1
//   5 dx      (R, C) f32, added to by MODE 0
//   6 dgamma  (C) f32, added to by MODE 1
//   7 dbeta   (C) f32, added to by MODE 1
//
// Dispatch:
//   MODE 0: one workgroup of 64 threads per row, rows on a 2-D grid
//           (row = wg.x + wg.y · num_workgroups.x); thread l handles columns l, l + 64, …
//           and the sums are tree reductions in workgroup memory (64 · 4 bytes).
//   MODE 1: one thread per column (64 per workgroup, same 2-D grid rule); each adds its
//           column over the rows in increasing r, the CPU's order: no atomics, no race.
// MODE 1 must be recorded after MODE 0 (it reads `stats`); the recorder does both.
//
// llvmpipe (Mesa's software Vulkan, which CI uses) ends any single shader loop after
// 65 535 iterations, its guard against endless shaders. So the launch function splits a
// long sum into several dispatches of MODE 1 of at most 32 768 rows each ([r0, r1) in Params), run
// one after another: the order of the additions, and so the result, stays the CPU's.

struct Params {
    rows: u32,
    c: u32,
    r0: u32,       // MODE 1: the rows this dispatch adds, r0 ≤ r < r1
    r1: u32,
}

override MODE: u32 = 0u;

const WG: u32 = 64u;
const EPS: f32 = 1e-5;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> gamma: array<f32>;
@group(0) @binding(3) var<storage, read> dy: array<f32>;
@group(0) @binding(4) var<storage, read_write> stats: array<f32>;
@group(0) @binding(5) var<storage, read_write> dx: array<f32>;
@group(0) @binding(6) var<storage, read_write> dgamma: array<f32>;
@group(0) @binding(7) var<storage, read_write> dbeta: array<f32>;

var<workgroup> red: array<f32, WG>;

// Sum of `red` into red[0]. Called by all threads of the workgroup (barriers inside).
fn reduce_sum(l: u32) {
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s = s >> 1u) {
        if (l < s) {
            red[l] = red[l] + red[l + s];
        }
        workgroupBarrier();
    }
}

// Sum over the row of `part` (one value per thread); every thread gets the total.
fn row_sum(l: u32, part: f32) -> f32 {
    red[l] = part;
    reduce_sum(l);
    let total = red[0];
    // Everyone has read red[0] before the next sum overwrites it.
    workgroupBarrier();
    return total;
}

fn rows_pass(row: u32, l: u32) {
    let base = row * p.c;
    let n = f32(p.c);

    // μ and rstd, as layer_norm.wgsl computes them.
    var part = 0.0;
    for (var i = l; i < p.c; i = i + WG) {
        part = part + x[base + i];
    }
    let mean = row_sum(l, part) / n;
    part = 0.0;
    for (var i = l; i < p.c; i = i + WG) {
        let d = x[base + i] - mean;
        part = part + d * d;
    }
    let rstd = 1.0 / sqrt(row_sum(l, part) / n + EPS);
    if (l == 0u) {
        stats[2u * row] = mean;
        stats[2u * row + 1u] = rstd;
    }

    // mean(dn) and mean(dn·n), the two means of the normalisation's Jacobian.
    var part_dn = 0.0;
    var part_dnn = 0.0;
    for (var i = l; i < p.c; i = i + WG) {
        let nv = (x[base + i] - mean) * rstd;
        let dn = gamma[i] * dy[base + i];
        part_dn = part_dn + dn;
        part_dnn = part_dnn + dn * nv;
    }
    let dn_mean = row_sum(l, part_dn) / n;
    let dn_n_mean = row_sum(l, part_dnn) / n;

    for (var i = l; i < p.c; i = i + WG) {
        let nv = (x[base + i] - mean) * rstd;
        let dn = gamma[i] * dy[base + i];
        dx[base + i] = dx[base + i] + (dn - dn_mean - nv * dn_n_mean) * rstd;
    }
}

fn columns_pass(col: u32) {
    var dg = dgamma[col];
    var db = dbeta[col];
    for (var r = p.r0; r < p.r1; r = r + 1u) {
        let g = dy[r * p.c + col];
        let nv = (x[r * p.c + col] - stats[2u * r]) * stats[2u * r + 1u];
        db = db + g;
        dg = dg + nv * g;
    }
    dgamma[col] = dg;
    dbeta[col] = db;
}

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
) {
    let group = wg.x + wg.y * nwg.x;
    if (MODE == 0u) {
        // `group` depends on the workgroup only: this return is uniform, and the
        // barriers in rows_pass stay in uniform control flow.
        if (group >= p.rows) {
            return;
        }
        rows_pass(group, lid.x);
    } else {
        let col = group * WG + lid.x;
        if (col >= p.c) {
            return;
        }
        columns_pass(col);
    }
}
