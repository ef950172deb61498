// dropout.wgsl — inverted dropout with the CPU's own random numbers:
//   mask[e] = 0 if u_e < p else 1/(1 − p),   x[e] ← x[e] · mask[e]  (when APPLY),
// where u_e = (w >> 8) · 2⁻²⁴ is the f32 uniform in [0, 1) that `rand` draws from the
// 32-bit word w at position `offset + e` of the ChaCha8 stream with the given key — the
// same word `ChaCha8Rng::seed_from_u64(seed)` returns after `offset` others. The masks
// are therefore bit for bit those of `model::dropout::dropout_mask` for the same seed and
// the same number of earlier draws in the forward pass.
//
// ChaCha8 (Bernstein's ChaCha with 8 rounds, as `rand_chacha`): a block is 16 words; its
// state is the 4 constants "expand 32-byte k", the 8 key words, a 64-bit block counter
// (words 12, 13) and a 64-bit stream id (words 14, 15; 0 here). Word w of the stream is
// word w mod 16 of block w / 16: out = state + 4 double rounds of quarter rounds on it.
// Every thread computes its own block (16× redundant work, no state shared).
//
// Mirrors `model::dropout::dropout_mask` (and `Run::drop_in_place` when APPLY).
// Backward: dropout_backward.wgsl multiplies the gradient by the same mask.
//
// Bindings:
//   0 p      uniform Params: the key (8 words of `ChaCha8Rng::get_seed()`, little endian),
//            N, the stream position of element 0 as (lo, hi) 32-bit halves, p and
//            1/(1 − p) (computed on the host as the CPU computes it)
//   1 mask   (N) f32, written
//   2 x      (N) f32, multiplied by the mask in place; read only when APPLY
//
// Pipeline-creation constant: APPLY.
//
// Dispatch: 64 threads per workgroup, one thread per element, 2-D grid:
// e = gid.x + gid.y · (64 · num_workgroups.x).

struct Params {
    key: array<vec4<u32>, 2>,
    n: u32,
    offset_lo: u32,
    offset_hi: u32,
    p: f32,
    keep: f32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

override APPLY: bool = false;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> mask: array<f32>;
@group(0) @binding(2) var<storage, read_write> x: array<f32>;

fn rotl(v: u32, n: u32) -> u32 {
    return (v << n) | (v >> (32u - n));
}

// One quarter round on words a, b, c, d of the state.
fn quarter(s: ptr<function, array<u32, 16>>, a: u32, b: u32, c: u32, d: u32) {
    (*s)[a] = (*s)[a] + (*s)[b];
    (*s)[d] = rotl((*s)[d] ^ (*s)[a], 16u);
    (*s)[c] = (*s)[c] + (*s)[d];
    (*s)[b] = rotl((*s)[b] ^ (*s)[c], 12u);
    (*s)[a] = (*s)[a] + (*s)[b];
    (*s)[d] = rotl((*s)[d] ^ (*s)[a], 8u);
    (*s)[c] = (*s)[c] + (*s)[d];
    (*s)[b] = rotl((*s)[b] ^ (*s)[c], 7u);
}

// Word `word` (0..16) of ChaCha8 block number (block_hi · 2³² + block_lo).
fn chacha8_word(block_lo: u32, block_hi: u32, word: u32) -> u32 {
    var init = array<u32, 16>(
        0x61707865u, 0x3320646eu, 0x79622d32u, 0x6b206574u,
        p.key[0].x, p.key[0].y, p.key[0].z, p.key[0].w,
        p.key[1].x, p.key[1].y, p.key[1].z, p.key[1].w,
        block_lo, block_hi, 0u, 0u,
    );
    var s = init;
    for (var dr = 0u; dr < 4u; dr = dr + 1u) {
        // A column round then a diagonal round.
        quarter(&s, 0u, 4u, 8u, 12u);
        quarter(&s, 1u, 5u, 9u, 13u);
        quarter(&s, 2u, 6u, 10u, 14u);
        quarter(&s, 3u, 7u, 11u, 15u);
        quarter(&s, 0u, 5u, 10u, 15u);
        quarter(&s, 1u, 6u, 11u, 12u);
        quarter(&s, 2u, 7u, 8u, 13u);
        quarter(&s, 3u, 4u, 9u, 14u);
    }
    return s[word] + init[word];
}

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let e = gid.x + gid.y * (nwg.x * 64u);
    if (e >= p.n) {
        return;
    }
    // Stream position offset + e as a 64-bit (hi, lo) pair.
    let lo = p.offset_lo + e;
    let hi = p.offset_hi + select(0u, 1u, lo < e);
    let w = chacha8_word((lo >> 4u) | (hi << 28u), hi >> 4u, lo & 15u);
    // rand's f32 in [0, 1): the top 24 bits times 2⁻²⁴ (exact in f32).
    let u = f32(w >> 8u) * (1.0 / 16777216.0);
    var m = p.keep;
    if (u < p.p) {
        m = 0.0;
    }
    mask[e] = m;
    if (APPLY) {
        x[e] = x[e] * m;
    }
}
