// embedding_backward.wgsl — the gradient of the token table: every row's gradient,
// scaled, added to the table row of its token:
//   dtable[v, i] += Σ_{r : tokens[r] = v} dx[r, i] · scale.
//
// Mirrors `train::backward::embedding::embedding_backward` (forward: x[r] = E[tokens[r]] ·
// scale, with scale = √C when `scale_embeddings`). A token seen twice collects both
// gradients; rows of tokens that never occur are left as they are.
//
// Bindings:
//   0 p       uniform Params (rows N = B·T, vocabulary V, width C, scale)
//   1 tokens  (N) u32, read — token ids, checked to be < V before upload
//   2 dx      (N, C) f32, read — the gradient of the embedding's output
//   3 dtable  (V, C) f32, read and written (added to) — `embed.weight`'s gradient
//
// Dispatch: 64 threads per workgroup, one thread per element (v, i) of the table, 2-D
// grid: element e = gid.x + gid.y · (64 · num_workgroups.x), v = e / C, i = e % C.
//
// A scatter-add without float atomics (WGSL has none, and their order would make the sum
// nondeterministic): each thread GATHERS instead, walking all N rows in increasing r and
// adding the ones whose token is v — the CPU's order, so the sums are the same. The cost
// is V·C·N token reads, fine for the playground's vocabularies (tens to a few hundred
// tokens); a large vocabulary would want the rows sorted by token first.
//
// llvmpipe (Mesa's software Vulkan, which CI uses) ends any single shader loop after
// 65 535 iterations, its guard against endless shaders. So the launch function splits a
// long sum into several dispatches of at most 32 768 rows each ([r0, r1) in Params), run
// one after another: the order of the additions, and so the result, stays the CPU's.

struct Params {
    rows: u32,
    v: u32,
    c: u32,
    scale: f32,
    r0: u32,       // the rows this dispatch adds: r0 ≤ r < r1
    r1: u32,
    _pad0: u32,
    _pad1: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> tokens: array<u32>;
@group(0) @binding(2) var<storage, read> dx: array<f32>;
@group(0) @binding(3) var<storage, read_write> dtable: array<f32>;

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let e = gid.x + gid.y * (nwg.x * 64u);
    if (e >= p.v * p.c) {
        return;
    }
    let tok = e / p.c;
    let i = e % p.c;
    var acc = dtable[e];
    for (var r = p.r0; r < p.r1; r = r + 1u) {
        if (tokens[r] == tok) {
            acc = acc + dx[r * p.c + i] * p.scale;
        }
    }
    dtable[e] = acc;
}
