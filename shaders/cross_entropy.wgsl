// cross_entropy.wgsl — the training loss and its gradient, as PyTorch's
// `F.cross_entropy(logits, targets, ignore_index, label_smoothing = ε)`, in three
// dispatches of one kernel (MODE):
//   MODE 0, per row r:  lse = log Σ_c e^(x_c), probs[r, c] = e^(x_c − lse),
//                       row_loss[r] = (1 − ε)·(lse − x_y) + (ε/V)·Σ_c (lse − x_c)
//                       (0 for a row whose target is the ignored id);
//   MODE 1, once:       loss[0] = Σ_r row_loss[r] / count (0 when count = 0),
//                       loss[1] = count, the rows whose target is not ignored;
//   MODE 2, per element: dlogits[r, c] += dloss/count · (p_c − (1 − ε)·[c = y] − ε/V)
//                       on counted rows (nothing when count = 0).
//
// Mirrors `train::loss::cross_entropy_forward` (MODE 0, 1) and `cross_entropy_backward`
// (MODE 2). LM targets ignore the pad id; a classifier counts every row (HAS_IGNORE 0).
// The CPU computes the log-sum-exp and the loss in f64; here they are f32, with the max
// subtracted first so e^(x − max) ≤ 1 never overflows, and Σ_c (lse − x_c) summed term by
// term (not V·lse − Σ x_c, which would cancel).
//
// Bindings:
//   0 p         uniform Params (rows N, classes V, ignored id, whether there is one, ε, dloss)
//   1 logits    (N, V) f32, read
//   2 targets   (N) u32, read — checked to be < V before upload
//   3 probs     (N, V) f32, written by MODE 0 (the softmax, for MODE 2)
//   4 row_loss  (N) f32, written by MODE 0
//   5 loss      (2) f32: (mean loss, count), written by MODE 1 — the step's one small readback
//   6 dlogits   (N, V) f32, added to by MODE 2
//
// Dispatch:
//   MODE 0: one workgroup of 64 threads per row, rows on a 2-D grid
//           (row = wg.x + wg.y · num_workgroups.x); max and sums are tree reductions in
//           workgroup memory (64 · 4 bytes).
//   MODE 1: one workgroup of 64 threads; thread l adds rows l, l + 64, …, then a tree sum.
//   MODE 2: one thread per element of (N, V), 64 per workgroup, same 2-D grid rule.

struct Params {
    rows: u32,
    v: u32,
    ignore_id: u32,
    has_ignore: u32,
    smoothing: f32,
    dloss: f32,
    _pad0: u32,
    _pad1: u32,
}

override MODE: u32 = 0u;

const WG: u32 = 64u;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> logits: array<f32>;
@group(0) @binding(2) var<storage, read> targets: array<u32>;
@group(0) @binding(3) var<storage, read_write> probs: array<f32>;
@group(0) @binding(4) var<storage, read_write> row_loss: array<f32>;
@group(0) @binding(5) var<storage, read_write> loss: array<f32>;
@group(0) @binding(6) var<storage, read_write> dlogits: array<f32>;

var<workgroup> red: array<f32, WG>;

fn counted(r: u32) -> bool {
    return p.has_ignore == 0u || targets[r] != p.ignore_id;
}

// Sum (or max) of one value per thread; every thread gets the result. Called by all
// threads of the workgroup (barriers inside).
fn workgroup_sum(l: u32, part: f32) -> f32 {
    red[l] = part;
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s = s >> 1u) {
        if (l < s) {
            red[l] = red[l] + red[l + s];
        }
        workgroupBarrier();
    }
    let total = red[0];
    workgroupBarrier();
    return total;
}

fn workgroup_max(l: u32, part: f32) -> f32 {
    red[l] = part;
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s = s >> 1u) {
        if (l < s) {
            red[l] = max(red[l], red[l + s]);
        }
        workgroupBarrier();
    }
    let total = red[0];
    workgroupBarrier();
    return total;
}

fn row_pass(r: u32, l: u32) {
    let base = r * p.v;
    // The most negative finite f32: WGSL has no −∞ (the row has ≥ 1 real logit).
    var m = -3.40282346638528859811704183484516925440e+38;
    for (var c = l; c < p.v; c = c + WG) {
        m = max(m, logits[base + c]);
    }
    m = workgroup_max(l, m);
    var part = 0.0;
    for (var c = l; c < p.v; c = c + WG) {
        part = part + exp(logits[base + c] - m);
    }
    let lse = m + log(workgroup_sum(l, part));
    part = 0.0;
    for (var c = l; c < p.v; c = c + WG) {
        let x = logits[base + c];
        probs[base + c] = exp(x - lse);
        part = part + (lse - x);
    }
    // Every thread takes part in the sum; whether the row counts is decided after it
    // (a branch on a loaded target around a barrier would not be uniform).
    let nll_all = workgroup_sum(l, part);
    if (l == 0u) {
        var value = 0.0;
        if (counted(r)) {
            let nll_y = lse - logits[base + targets[r]];
            value = (1.0 - p.smoothing) * nll_y + p.smoothing / f32(p.v) * nll_all;
        }
        row_loss[r] = value;
    }
}

fn mean_pass(l: u32) {
    var total = 0.0;
    var count = 0.0;
    for (var r = l; r < p.rows; r = r + WG) {
        if (counted(r)) {
            total = total + row_loss[r];
            count = count + 1.0;
        }
    }
    total = workgroup_sum(l, total);
    count = workgroup_sum(l, count);
    if (l == 0u) {
        var mean = 0.0;
        if (count > 0.0) {
            mean = total / count;
        }
        loss[0] = mean;
        loss[1] = count;
    }
}

fn gradient_pass(e: u32) {
    if (e >= p.rows * p.v) {
        return;
    }
    let r = e / p.v;
    let c = e % p.v;
    let count = loss[1];
    if (!counted(r) || count == 0.0) {
        return;
    }
    let scale = p.dloss / count;
    let off = p.smoothing / f32(p.v);
    var hit = 0.0;
    if (c == targets[r]) {
        hit = 1.0 - p.smoothing;
    }
    dlogits[e] = dlogits[e] + scale * (probs[e] - hit - off);
}

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
) {
    let group = wg.x + wg.y * nwg.x;
    if (MODE == 0u) {
        // Uniform across the workgroup: the barriers below stay in uniform control flow.
        if (group >= p.rows) {
            return;
        }
        row_pass(group, lid.x);
    } else if (MODE == 1u) {
        mean_pass(lid.x);
    } else {
        gradient_pass(group * WG + lid.x);
    }
}
