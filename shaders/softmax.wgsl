// softmax.wgsl — masked softmax over the keys of every (b, h, t) row:
//   probs[r, j] = exp(s_rj − m_r) / Σ_j' exp(s_rj' − m_r)  over the unmasked keys,
//   m_r = max of the unmasked scores; masked keys get 0; a row whose every key is masked
//   is all zeros (never NaN).
//
// Mirrors the softmax step of `model::attention` (docs/model.md, "Softmax").
//
// Bindings:
//   0 p       uniform Params (rows R = B·H·T, width S)
//   1 scores  (R, S) f32, read — from attention_scores.wgsl, masked entries = MASKED
//   2 probs   (R, S) f32, written
//
// −∞ handling: WGSL has no infinity, so a masked score is the sentinel
// MASKED = −f32::MAX (the most negative finite f32) written by attention_scores.wgsl.
// This kernel compares against it exactly: masked entries are skipped in the max and the
// sum and get probability 0, and exp() only ever sees s − m ≤ 0 of real scores, so it
// cannot overflow. A row with no unmasked key keeps m = MASKED and its sum 0; it is
// written as zeros explicitly instead of dividing 0 by 0.
//
// Dispatch: one workgroup of 64 threads per row, rows on a 2-D grid of workgroups
// (row = wg.x + wg.y · num_workgroups.x). Thread l handles keys l, l + 64, …; the max and
// the sum are tree reductions in workgroup memory (64 · 4 bytes).

struct Params {
    rows: u32,
    s_len: u32,
    _pad0: u32,
    _pad1: u32,
}

const WG: u32 = 64u;
// Written out exactly: Chrome's WGSL compiler rejects the rounded -3.4028235e38 as
// beyond the f32 range.
const MASKED: f32 = -3.40282346638528859811704183484516925440e+38;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> scores: array<f32>;
@group(0) @binding(2) var<storage, read_write> probs: array<f32>;

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

    // Max over the unmasked scores (MASKED is below every real score, so it is the
    // identity of max and stays the answer only for a fully masked row).
    var part = MASKED;
    for (var j = l; j < p.s_len; j = j + WG) {
        part = max(part, scores[base + j]);
    }
    red[l] = part;
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s = s >> 1u) {
        if (l < s) {
            red[l] = max(red[l], red[l + s]);
        }
        workgroupBarrier();
    }
    let m = red[0];
    workgroupBarrier();
    let all_masked = m == MASKED;

    // Sum of exp(s − m) over the unmasked keys.
    part = 0.0;
    for (var j = l; j < p.s_len; j = j + WG) {
        let s = scores[base + j];
        if (s != MASKED) {
            part = part + exp(s - m);
        }
    }
    red[l] = part;
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s = s >> 1u) {
        if (l < s) {
            red[l] = red[l] + red[l + s];
        }
        workgroupBarrier();
    }
    let total = red[0];

    for (var j = l; j < p.s_len; j = j + WG) {
        let s = scores[base + j];
        var v = 0.0;
        if (!all_masked && s != MASKED) {
            v = exp(s - m) / total;
        }
        probs[base + j] = v;
    }
}
