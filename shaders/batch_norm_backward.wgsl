// batch_norm_backward.wgsl — the backward of BatchNorm in train mode. With
// n = (x − μ)·rstd and dn = γ · dy, per feature i over the R rows:
//   dβ_i += Σ_r dy[r, i],   dγ_i += Σ_r n[r, i] · dy[r, i],
//   dx[r, i] += (dn[r, i] − mean_r(dn) − n[r, i] · mean_r(dn · n)) · rstd_i.
// (The LayerNorm formula with the means taken over rows: every row's gradient depends on
// the whole batch, because μ and σ² did.)
//
// Mirrors `train::backward::norm::batchnorm_train_backward`, undoing
// batch_norm_train.wgsl. Gradients are ADDED to dx, dγ and dβ.
//
// Bindings:
//   0 p      uniform Params (rows R, width C)
//   1 dy     (R, C) f32 — gradient of the output
//   2 x      (R, C) f32 — the forward's input
//   3 gamma  (C) f32
//   4 stats  (3, C) f32 — μ, σ², rstd from batch_norm_train.wgsl (μ and rstd are read)
//   5 dx     (R, C) f32, added to
//   6 dgamma (C) f32, added to
//   7 dbeta  (C) f32, added to
//
// Dispatch: one workgroup of 64 threads per feature, features on a 2-D grid of workgroups
// (i = wg.x + wg.y · num_workgroups.x). The four sums (dn, dn·n, dy, n·dy) are taken by
// thread 0 row by row in the CPU's order, dβ and dγ continuing from their old values as the
// CPU's `+=` does: the sums are then the CPU's to the bit. That matters because the dx
// formula subtracts nearly equal terms and multiplies by rstd, which is large when a
// feature's batch variance is small: a sum rounded in another order moved dx by more than
// 1e-5 there. Past SERIAL_ROWS rows (llvmpipe ends every loop of an invocation after 65,535
// iterations) thread l sums rows l, l + 64, … and a tree reduction of vec4 in workgroup
// memory adds the parts. The dx rows are spread over the 64 threads either way.

struct Params {
    rows: u32,
    c: u32,
    _pad0: u32,
    _pad1: u32,
}

const WG: u32 = 64u;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> dy: array<f32>;
@group(0) @binding(2) var<storage, read> x: array<f32>;
@group(0) @binding(3) var<storage, read> gamma: array<f32>;
@group(0) @binding(4) var<storage, read> stats: array<f32>;
@group(0) @binding(5) var<storage, read_write> dx: array<f32>;
@group(0) @binding(6) var<storage, read_write> dgamma: array<f32>;
@group(0) @binding(7) var<storage, read_write> dbeta: array<f32>;

const SERIAL_ROWS: u32 = 32768u;

var<workgroup> red: array<vec4<f32>, WG>;

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
) {
    // Depends on the workgroup only: a uniform early return, barriers stay legal.
    let i = wg.x + wg.y * nwg.x;
    if (i >= p.c) {
        return;
    }
    let l = lid.x;
    let mean = stats[i];
    let rstd = stats[2u * p.c + i];
    let w = gamma[i];

    if (p.rows <= SERIAL_ROWS) {
        // (Σ dn, Σ dn·n, dβ + Σ dy, dγ + Σ n·dy), row by row as the CPU adds them.
        if (l == 0u) {
            var acc = vec4<f32>(0.0, 0.0, dbeta[i], dgamma[i]);
            for (var r = 0u; r < p.rows; r = r + 1u) {
                let e = r * p.c + i;
                let n = (x[e] - mean) * rstd;
                let g = dy[e];
                let dn = w * g;
                acc = acc + vec4<f32>(dn, dn * n, g, n * g);
            }
            red[0] = acc;
        }
        workgroupBarrier();
    } else {
        // (Σ dn, Σ dn·n, Σ dy, Σ n·dy) over this thread's rows, then over the threads.
        var part = vec4<f32>(0.0);
        for (var r = l; r < p.rows; r = r + WG) {
            let e = r * p.c + i;
            let n = (x[e] - mean) * rstd;
            let g = dy[e];
            let dn = w * g;
            part = part + vec4<f32>(dn, dn * n, g, n * g);
        }
        red[l] = part;
        workgroupBarrier();
        for (var s = WG / 2u; s > 0u; s = s >> 1u) {
            if (l < s) {
                red[l] = red[l] + red[l + s];
            }
            workgroupBarrier();
        }
        if (l == 0u) {
            red[0] = red[0] + vec4<f32>(0.0, 0.0, dbeta[i], dgamma[i]);
        }
        workgroupBarrier();
    }
    let sums = red[0];
    let rows = f32(p.rows);
    let dn_mean = sums.x / rows;
    let dn_n_mean = sums.y / rows;

    for (var r = l; r < p.rows; r = r + WG) {
        let e = r * p.c + i;
        let n = (x[e] - mean) * rstd;
        let dn = w * dy[e];
        dx[e] = dx[e] + (dn - dn_mean - n * dn_n_mean) * rstd;
    }
    if (l == 0u) {
        dbeta[i] = sums.z;
        dgamma[i] = sums.w;
    }
}
