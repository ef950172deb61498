// softmax_backward.wgsl — the backward of the masked softmax over the keys of every
// (b, h, t) row:
//   ds[r, j] = p[r, j] · (dp[r, j] − Σ_k p[r, k] · dp[r, k]).
// A masked key has p = 0 and therefore ds = 0; a row whose every key is masked (all p = 0)
// gets ds = 0 everywhere, as the forward gave it zeros.
//
// Mirrors the softmax step of `train::backward::attention::attention_backward`
// (`ds_j = p_j · (dp_j − Σ_k p_k dp_k)`), undoing softmax.wgsl.
//
// Bindings:
//   0 p       uniform Params (rows R = B·H·T, width S)
//   1 probs   (R, S) f32 — the forward's probabilities (before dropout)
//   2 dprobs  (R, S) f32 — the gradient of the probabilities (attention_values_backward.wgsl,
//             OUTPUT 0; already multiplied by the dropout mask)
//   3 dscores (R, S) f32, written (a different buffer from dprobs)
//
// Dispatch: one workgroup of 64 threads per row, rows on a 2-D grid of workgroups
// (row = wg.x + wg.y · num_workgroups.x). Thread l handles keys l, l + 64, …; the row's
// Σ p·dp is a tree reduction in workgroup memory (64 · 4 bytes).

struct Params {
    rows: u32,
    s_len: u32,
    _pad0: u32,
    _pad1: u32,
}

const WG: u32 = 64u;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> probs: array<f32>;
@group(0) @binding(2) var<storage, read> dprobs: array<f32>;
@group(0) @binding(3) var<storage, read_write> dscores: array<f32>;

var<workgroup> red: array<f32, WG>;

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
) {
    // Depends on the workgroup only: a uniform early return, barriers stay legal.
    let row = wg.x + wg.y * nwg.x;
    if (row >= p.rows) {
        return;
    }
    let l = lid.x;
    let base = row * p.s_len;

    // Σ_k p_k · dp_k over the row.
    var part = 0.0;
    for (var j = l; j < p.s_len; j = j + WG) {
        part = part + probs[base + j] * dprobs[base + j];
    }
    red[l] = part;
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s = s >> 1u) {
        if (l < s) {
            red[l] = red[l] + red[l + s];
        }
        workgroupBarrier();
    }
    let row_dot = red[0];

    for (var j = l; j < p.s_len; j = j + WG) {
        dscores[base + j] = probs[base + j] * (dprobs[base + j] - row_dot);
    }
}
