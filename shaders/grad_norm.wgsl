// grad_norm.wgsl — global-norm gradient clipping, as `torch.nn.utils.clip_grad_norm_`,
// in two kinds of dispatch of one kernel (MODE):
//   MODE 0, once per gradient tensor:  acc[0] (+)= Σ_i g[i]²   (the first tensor writes,
//                                      the others add: p.accumulate);
//   MODE 1, once per gradient tensor:  norm = √acc[0], coef = max_norm / (norm + 1e-6),
//                                      g[i] *= coef when coef < 1 (else g is untouched).
//
// Mirrors `train::optim::grad_norm` and `clip_grad_norm`. The CPU sums squares in f64;
// here each thread keeps a compensated (Kahan) f32 sum of its share and the 64 shares are
// added in a tree, so the relative error stays near f32 rounding for millions of values.
// (Kahan summation relies on the compiler not reassociating float additions; WGSL
// compilers do not.)
//
// Bindings:
//   0 p    uniform Params (n elements of this tensor, accumulate, max_norm, start)
//   1 g    (n) f32 — one gradient tensor; read by MODE 0, scaled in place by MODE 1
//   2 acc  (1) f32 — the sum of squares of every tensor so far (read it back for the norm)
//
// Dispatch:
//   MODE 0: ONE workgroup of 64 threads; thread l handles elements l, l + 64, …
//   MODE 1: one thread per element, 64 per workgroup, 2-D grid:
//           element i = gid.x + gid.y · (64 · num_workgroups.x).
// Every MODE 0 dispatch of a step must be recorded before the first MODE 1.
//
// llvmpipe (Mesa's software Vulkan, which CI uses) ends any single shader loop after
// 65 535 iterations, its guard against endless shaders. So the launch function splits a
// long tensor into several MODE 0 dispatches of at most 64 · 32 768 elements
// ([p.start, p.n)), each adding its sum to acc[0].

struct Params {
    n: u32,
    accumulate: u32,
    max_norm: f32,
    start: u32,    // MODE 0: the elements this dispatch adds, start ≤ i < n
}

override MODE: u32 = 0u;

const WG: u32 = 64u;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> g: array<f32>;
@group(0) @binding(2) var<storage, read_write> acc: array<f32>;

var<workgroup> red: array<f32, WG>;

fn sum_of_squares(l: u32) {
    // Kahan: `comp` holds the low bits lost by the last addition.
    var sum = 0.0;
    var comp = 0.0;
    for (var i = p.start + l; i < p.n; i = i + WG) {
        let y = g[i] * g[i] - comp;
        let t = sum + y;
        comp = (t - sum) - y;
        sum = t;
    }
    red[l] = sum;
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s = s >> 1u) {
        if (l < s) {
            red[l] = red[l] + red[l + s];
        }
        workgroupBarrier();
    }
    if (l == 0u) {
        var before = 0.0;
        if (p.accumulate != 0u) {
            before = acc[0];
        }
        acc[0] = before + red[0];
    }
}

fn scale(i: u32) {
    if (i >= p.n) {
        return;
    }
    let norm = sqrt(acc[0]);
    let coef = p.max_norm / (norm + 1e-6);
    if (coef < 1.0) {
        g[i] = g[i] * coef;
    }
}

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
) {
    if (MODE == 0u) {
        sum_of_squares(lid.x);
    } else {
        scale(gid.x + gid.y * (nwg.x * 64u));
    }
}
