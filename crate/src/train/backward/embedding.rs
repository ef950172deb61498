//! Backward of `model/embedding.rs`: `out[n] = table[tokens[n]] · scale`.

/// `dtable (V, C) += dout[n] · scale` at the row of each token (rows of tokens that did
/// not occur get nothing; a token seen twice collects both gradients).
pub fn embedding_backward(
    dtable: &mut [f32],
    dout: &[f32],
    tokens: &[u32],
    scale: f32,
    n: usize,
    c: usize,
) {
    assert_eq!(dout.len(), n * c, "embedding_backward: dout is not (N, C)");
    for (g, &tok) in dout.chunks_exact(c).zip(tokens) {
        let row = &mut dtable[tok as usize * c..(tok as usize + 1) * c]; // (C)
        for (d, &gv) in row.iter_mut().zip(g) {
            *d += gv * scale;
        }
    }
}
