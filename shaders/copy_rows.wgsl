// copy_rows.wgsl — copy rows of 32-bit values from one buffer to another, sequence by
// sequence: how the KV cache grows and how beam search reorders it.
//   dst[(b·DS + dt0 + t)·dst_stride + dst_col + i] = src[(m(b)·SS + st0 + t)·src_stride + src_col + i]
//   for b < B, t < T, i < W, with m(b) = from_seq[b] when HAS_FROM, else b.
//
// Its uses (crate/src/backend/gpu/cache.rs):
// - append: the K | V columns of the fused (B·T, 3C) projections → cache rows (b, len + t)
//   of a (B·P, 2C) cache (SS = T, DS = P, dt0 = len); the new tokens likewise (W = 1).
// - reorder: cache rows (from_seq[b], j) → rows (b, j), j < len, into a second buffer; the
//   beam's surviving hypotheses keep their parents' keys and values (from_seq = parents).
// It mirrors `Vec::extend_from_slice` in `Model::decode_step` and the row selection of
// `generate::generator::select_sequences`.
//
// The arrays are u32: the kernel moves bits, never values, so f32 keys and values and u32
// token ids both come through exactly (an f32 load and store could flush a token id's
// bit pattern, a subnormal float, to zero).
//
// Bindings (offsets and strides in elements):
//   0 p    uniform Params
//   1 src  rows of src_stride elements, read
//   2 from_seq (B) u32 — the source sequence of each destination sequence; read only
//                when HAS_FROM
//   3 dst  rows of dst_stride elements, written (a different buffer from src)
//
// Dispatch: 64 threads per workgroup, one thread per copied element (B·T·W of them), 2-D
// grid: e = gid.x + gid.y · (64 · num_workgroups.x).

struct Params {
    batch: u32,      // B
    t_len: u32,      // T: rows copied per sequence
    width: u32,      // W: elements per row
    src_seq: u32,    // SS: rows each sequence occupies in src
    src_t0: u32,     // st0: first source row of each sequence
    src_stride: u32,
    src_col: u32,
    dst_seq: u32,    // DS: rows each sequence occupies in dst
    dst_t0: u32,     // dt0: first destination row of each sequence
    dst_stride: u32,
    dst_col: u32,
    _pad0: u32,
}

override HAS_FROM: bool = false;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> src: array<u32>;
@group(0) @binding(2) var<storage, read> from_seq: array<u32>;
@group(0) @binding(3) var<storage, read_write> dst: array<u32>;

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let e = gid.x + gid.y * (nwg.x * 64u);
    if (e >= p.batch * p.t_len * p.width) {
        return;
    }
    let i = e % p.width;
    let t = (e / p.width) % p.t_len;
    let b = e / (p.width * p.t_len);
    var from_b = b;
    if (HAS_FROM) {
        from_b = from_seq[b];
    }
    let s = (from_b * p.src_seq + p.src_t0 + t) * p.src_stride + p.src_col + i;
    let d = (b * p.dst_seq + p.dst_t0 + t) * p.dst_stride + p.dst_col + i;
    dst[d] = src[s];
}
