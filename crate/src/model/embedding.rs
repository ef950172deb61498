//! Token embedding: `x = E[tok] · scale` with `scale = √C` when `scale_embeddings`, else 1
//! (docs/model.md, step 1).

/// `out (N, C) = table[tokens[n]] · scale` for every one of the N tokens, with
/// `table (V, C)`. Token ids must be below V: the forward pass checks user input before
/// it gets here and names the offending position.
/// Backward: `train::backward::embedding::embedding_backward`.
pub fn embedding_forward(
    out: &mut [f32],
    tokens: &[u32],
    table: &[f32],
    scale: f32,
    n: usize,
    c: usize,
) {
    assert_eq!(out.len(), n * c, "embedding_forward: out is not (N, C)");
    assert_eq!(tokens.len(), n, "embedding_forward: tokens is not (N)");
    for (row, &tok) in out.chunks_exact_mut(c).zip(tokens) {
        let e = &table[tok as usize * c..(tok as usize + 1) * c]; // (C)
        for (o, &w) in row.iter_mut().zip(e) {
            *o = w * scale;
        }
    }
}

/// The embedding multiplier: √C when `scale_embeddings`, else 1.
pub fn embedding_scale(scale_embeddings: bool, c: usize) -> f32 {
    if scale_embeddings {
        (c as f32).sqrt()
    } else {
        1.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedding_gathers_rows_and_scales_them() {
        let table = [0.0f32, 1.0, 2.0, 3.0, 4.0, 5.0]; // (V 3, C 2)
        let mut out = vec![0.0f32; 3 * 2]; // (N 3, C 2)
        embedding_forward(&mut out, &[2, 0, 2], &table, 2.0, 3, 2);
        assert_eq!(out, vec![8.0, 10.0, 0.0, 2.0, 8.0, 10.0]);
    }

    #[test]
    fn embedding_scale_is_root_c_only_when_asked() {
        assert_eq!(embedding_scale(true, 16), 4.0);
        assert_eq!(embedding_scale(false, 16), 1.0);
    }
}
