//! The loaded model's position encoding, laid out for drawing (docs/model.md, "Absolute
//! positions" and "Attention"):
//! - the additive table `PE (T, C)` of sinusoidal or learned positions and its similarity
//!   matrix `PEᵢ·PEⱼ (T, T)`;
//! - RoPE's rotating pairs and the proof by numbers that `q·k` depends on `i − j` only;
//! - ALiBi's slopes and bias matrices `−m_h·|i − j|`;
//! - Shaw's learned tables `rel_k`, `rel_v` by clipped distance;
//! - the sizes of token embeddings and position vectors (with and without ×√C), and a
//!   2-D map of both by principal components.
//!
//! Every number comes from the model's own tensors and the same functions the forward
//! pass calls (`model::position`), so the pictures cannot drift from what the model does.

use nalgebra::{DMatrix, SymmetricEigen};
use serde::Serialize;

use crate::config::{Arch, PosEncoding};
use crate::error::{Error, Result};
use crate::model::embedding::embedding_scale;
use crate::model::forward::{AttnSite, Batch};
use crate::model::inspect::recorded_qkv;
use crate::model::position::{
    alibi_bias, alibi_slopes, relative_index, rope_angle, sinusoidal_table,
};
use crate::model::{ForwardOptions, Model};

/// `PE (T, C)` of positions 0..T for a model whose positions are added to the embeddings
/// (sinusoidal or learned); `None` for the schemes that act inside attention.
pub fn additive_table(model: &Model, t: usize) -> Result<Option<Vec<f32>>> {
    let cfg = &model.config;
    let c = cfg.d_model;
    match cfg.pos_encoding {
        PosEncoding::Sinusoidal => {
            let mut pe = vec![0.0f32; t * c]; // (T, C)
            sinusoidal_table(&mut pe, 0, t, c);
            Ok(Some(pe))
        }
        PosEncoding::Learned => {
            if t > cfg.max_len {
                return Err(Error::Input(format!(
                    "the learned table has {} rows, asked for {t}",
                    cfg.max_len
                )));
            }
            let table = model
                .pos_embed
                .as_ref()
                .ok_or_else(|| Error::Input("this model has no learned position table".into()))?;
            Ok(Some(table.data[..t * c].to_vec()))
        }
        _ => Ok(None),
    }
}

/// `sim (T, T) = PE·PEᵀ`: entry (i, j) is `PEᵢ·PEⱼ`, accumulated in f64.
pub fn similarity(pe: &[f32], t: usize, c: usize) -> Vec<f32> {
    assert_eq!(pe.len(), t * c, "similarity: pe is not (T, C)");
    let mut out = vec![0.0f32; t * t]; // (T, T)
    for i in 0..t {
        let a = &pe[i * c..(i + 1) * c];
        for j in 0..t {
            let b = &pe[j * c..(j + 1) * c];
            out[i * t + j] = a
                .iter()
                .zip(b)
                .map(|(x, y)| *x as f64 * *y as f64)
                .sum::<f64>() as f32;
        }
    }
    out
}

/// `bias (H, T, T)`: ALiBi's score bias `−m_h·|i − j|` of every head, with its slopes (H).
pub fn alibi_matrices(n_heads: usize, t: usize) -> (Vec<f32>, Vec<f32>) {
    let slopes = alibi_slopes(n_heads); // (H)
    let mut out = Vec::with_capacity(n_heads * t * t); // (H, T, T)
    for &m in &slopes {
        for i in 0..t {
            for j in 0..t {
                out.push(alibi_bias(m, i, j));
            }
        }
    }
    (slopes, out)
}

/// One self-attention sublayer's Shaw tables, (2K+1, D) each, row r for distance r − K.
#[derive(Clone, Debug, Serialize)]
pub struct RelativeTables {
    pub layer: usize,
    pub stack: &'static str,
    /// (2K+1, D) flattened.
    pub rel_k: Vec<f32>,
    /// (2K+1, D) flattened.
    pub rel_v: Vec<f32>,
}

/// Every self-attention sublayer's relative tables (empty unless positions are relative).
pub fn relative_tables(model: &Model) -> Vec<RelativeTables> {
    let mut out = vec![];
    for (stack, s) in [
        ("encoder_self", &model.encoder),
        ("decoder_self", &model.decoder),
    ] {
        let Some(s) = s else { continue };
        for (layer, l) in s.layers.iter().enumerate() {
            if let (Some(k), Some(v)) = (&l.self_attn.rel_k, &l.self_attn.rel_v) {
                out.push(RelativeTables {
                    layer,
                    stack,
                    rel_k: k.data.clone(),
                    rel_v: v.data.clone(),
                });
            }
        }
    }
    out
}

/// The row of the Shaw tables a query at `i` uses for a key at `j`, and the distance it
/// stands for after clipping: `(row, clip(j − i, −K, K))`.
pub fn clipped_distance(i: usize, j: usize, max_distance: usize) -> (usize, i64) {
    let row = relative_index(i, j, max_distance);
    (row, row as i64 - max_distance as i64)
}

/// What RoPE does to one query and one key of the loaded model, for the picture.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct RopeDemo {
    pub d_head: usize,
    /// The dimension pair (2p, 2p+1) drawn.
    pub pair: usize,
    /// θ_p = 10000^(−2p/D): radians turned per position by this pair.
    pub theta: f64,
    /// (T, 2): the pair of q, rotated to each position 0..T.
    pub q_path: Vec<[f32; 2]>,
    /// (T, 2): the pair of k, rotated to each position 0..T.
    pub k_path: Vec<[f32; 2]>,
    pub i: usize,
    pub j: usize,
    pub shift: usize,
    /// (R_i q)·(R_j k) over the whole head.
    pub score: f32,
    /// (R_{i+s} q)·(R_{j+s} k): the same up to rounding, since only i − j matters.
    pub shifted_score: f32,
    /// q·(R_{j−i} k) computed directly from the offset (for i ≤ j; R_{i−j} on q otherwise).
    pub offset_score: f32,
}

/// `x (D)` rotated by RoPE to position `pos` (the same angles as `rope_forward`).
pub fn rope_rotate(x: &[f32], pos: usize) -> Vec<f32> {
    let d = x.len();
    let mut out = x.to_vec();
    for (p, pair) in out.chunks_exact_mut(2).enumerate() {
        let (cos, sin) = rope_angle(pos, p, d);
        let (x0, x1) = (pair[0], pair[1]);
        pair[0] = x0 * cos - x1 * sin;
        pair[1] = x0 * sin + x1 * cos;
    }
    out
}

/// `x (D)` rotated back from position `pos` to position 0 (the inverse rotation).
pub fn rope_unrotate(x: &[f32], pos: usize) -> Vec<f32> {
    let d = x.len();
    let mut out = x.to_vec();
    for (p, pair) in out.chunks_exact_mut(2).enumerate() {
        let (cos, sin) = rope_angle(pos, p, d);
        let (x0, x1) = (pair[0], pair[1]);
        pair[0] = x0 * cos + x1 * sin;
        pair[1] = -x0 * sin + x1 * cos;
    }
    out
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter()
        .zip(b)
        .map(|(x, y)| *x as f64 * *y as f64)
        .sum::<f64>() as f32
}

/// RoPE on a query `q (D)` and a key `k (D)` given before rotation: the paths of pair
/// `pair` over positions 0..`t`, and the score at (i, j), at (i + shift, j + shift), and
/// from the offset alone.
pub fn rope_demo(
    q: &[f32],
    k: &[f32],
    pair: usize,
    t: usize,
    i: usize,
    j: usize,
    shift: usize,
) -> Result<RopeDemo> {
    let d = q.len();
    if d != k.len() || !d.is_multiple_of(2) || d == 0 {
        return Err(Error::Input(format!(
            "RoPE: q and k must have the same even length, got {} and {}",
            q.len(),
            k.len()
        )));
    }
    if pair >= d / 2 {
        return Err(Error::Input(format!(
            "RoPE: a head of {d} dimensions has pairs 0 to {}, got {pair}",
            d / 2 - 1
        )));
    }
    let path = |x: &[f32]| -> Vec<[f32; 2]> {
        (0..t)
            .map(|pos| {
                let (cos, sin) = rope_angle(pos, pair, d);
                let (x0, x1) = (x[2 * pair], x[2 * pair + 1]);
                [x0 * cos - x1 * sin, x0 * sin + x1 * cos]
            })
            .collect()
    };
    let score = |a: usize, b: usize| dot(&rope_rotate(q, a), &rope_rotate(k, b));
    let offset_score = if i <= j {
        dot(q, &rope_rotate(k, j - i))
    } else {
        dot(&rope_rotate(q, i - j), k)
    };
    Ok(RopeDemo {
        d_head: d,
        pair,
        theta: 10000f64.powf(-2.0 * pair as f64 / d as f64),
        q_path: path(q),
        k_path: path(k),
        i,
        j,
        shift,
        score: score(i, j),
        shifted_score: score(i + shift, j + shift),
        offset_score,
    })
}

/// [`rope_demo`] on the loaded RoPE model's own query at position `i` and key at position
/// `j` (head `head` of self-attention layer `layer`, in one causal pass over `tokens`),
/// each rotated back to position 0 first: `score` is then exactly the q·k the pass used.
#[allow(clippy::too_many_arguments)]
pub fn rope_demo_of_model(
    model: &Model,
    tokens: &[u32],
    layer: usize,
    head: usize,
    i: usize,
    j: usize,
    pair: usize,
    shift: usize,
) -> Result<RopeDemo> {
    let cfg = &model.config;
    if cfg.pos_encoding != PosEncoding::Rope {
        return Err(Error::Input("this model does not use RoPE".into()));
    }
    let t = tokens.len();
    if i >= t || j >= t {
        return Err(Error::Input(format!(
            "RoPE: positions {i} and {j} must lie in the input of {t} tokens"
        )));
    }
    let site = match cfg.arch {
        Arch::EncoderOnly => AttnSite::EncoderSelf,
        _ => AttnSite::DecoderSelf,
    };
    let layers = if site == AttnSite::EncoderSelf {
        cfg.encoder_layers()
    } else {
        cfg.decoder_layers()
    };
    if layer >= layers || head >= cfg.n_heads {
        return Err(Error::Input(format!(
            "RoPE: this model has {layers} layers of {} heads, asked for layer {layer} head {head}",
            cfg.n_heads
        )));
    }
    let batch = match cfg.arch {
        Arch::EncoderDecoder => Batch::single(tokens)?.with_source(vec![tokens.to_vec()])?,
        _ => Batch::single(tokens)?,
    };
    let (_, acts) = model.forward_recorded(&batch, &ForwardOptions::default())?;
    let rec = recorded_qkv(&acts, site, layer)
        .ok_or_else(|| Error::Input(format!("RoPE: layer {layer} recorded no attention")))?;
    let (c, d) = (cfg.d_model, cfg.d_head());
    let q = &rec.q[i * c + head * d..i * c + (head + 1) * d]; // (D), rotated to i
    let k = &rec.k[j * c + head * d..j * c + (head + 1) * d]; // (D), rotated to j
    rope_demo(
        &rope_unrotate(q, i),
        &rope_unrotate(k, j),
        pair,
        t,
        i,
        j,
        shift,
    )
}

/// ‖token embedding‖ and ‖position vector‖ at each position of one input.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct EmbeddingScale {
    /// √C: what `scale_embeddings` multiplies the embeddings by.
    pub root_c: f32,
    /// Whether this model multiplies by √C.
    pub scaled_in_model: bool,
    /// (T): ‖E[tok_t]‖, the table's row as stored.
    pub token_norm: Vec<f32>,
    /// (T): ‖E[tok_t]‖ · √C.
    pub token_norm_scaled: Vec<f32>,
    /// (T): ‖PE_t‖ for sinusoidal or learned positions; empty otherwise.
    pub position_norm: Vec<f32>,
}

fn norm(x: &[f32]) -> f32 {
    x.iter().map(|v| *v as f64 * *v as f64).sum::<f64>().sqrt() as f32
}

/// The sizes of what the first layer adds together, position by position, for `tokens`.
pub fn embedding_scale_of(model: &Model, tokens: &[u32]) -> Result<EmbeddingScale> {
    let cfg = &model.config;
    let c = cfg.d_model;
    let v = cfg.vocab_size;
    if let Some((p, &tok)) = tokens.iter().enumerate().find(|(_, &x)| x as usize >= v) {
        return Err(Error::Input(format!(
            "token {tok} at position {p} is outside the vocabulary of {v}"
        )));
    }
    let t = tokens.len();
    let root_c = embedding_scale(true, c);
    let token_norm: Vec<f32> = tokens
        .iter()
        .map(|&tok| norm(&model.embed.data[tok as usize * c..(tok as usize + 1) * c]))
        .collect();
    let token_norm_scaled = token_norm.iter().map(|n| n * root_c).collect();
    let position_norm = match additive_table(model, t.min(cfg.max_len))? {
        Some(pe) => pe.chunks_exact(c).map(norm).collect(),
        None => vec![],
    };
    Ok(EmbeddingScale {
        root_c,
        scaled_in_model: cfg.scale_embeddings,
        token_norm,
        token_norm_scaled,
        position_norm,
    })
}

/// Token embeddings (as the model scales them) and position vectors projected onto the
/// two principal axes of all of them together.
#[derive(Clone, Debug, Serialize)]
pub struct EmbeddingMap {
    /// (V, 2)
    pub tokens: Vec<[f32; 2]>,
    /// (T, 2): empty when positions are not added to the embeddings.
    pub positions: Vec<[f32; 2]>,
    /// Share of the total variance along each of the two axes.
    pub explained: [f64; 2],
}

/// Two principal axes of a point cloud.
#[derive(Clone, Debug)]
pub struct Axes {
    /// (C) the mean the points are centred on.
    pub mean: Vec<f64>,
    /// Two unit vectors (C) each, the first along the largest variance.
    pub axes: [Vec<f64>; 2],
    /// Share of the total variance along each axis.
    pub share: [f64; 2],
}

/// The top two principal axes of `points (N, C)` (eigenvectors of the covariance with
/// the largest eigenvalues, from nalgebra's symmetric eigen-decomposition).
pub fn principal_axes(points: &[f32], n: usize, c: usize) -> Result<Axes> {
    if n < 2 || c < 2 || points.len() != n * c {
        return Err(Error::Input(format!(
            "PCA needs at least 2 points of at least 2 dimensions, got {n} × {c}"
        )));
    }
    let x = DMatrix::from_fn(n, c, |r, col| points[r * c + col] as f64); // (N, C)
    let mean: Vec<f64> = (0..c).map(|col| x.column(col).mean()).collect();
    let centred = DMatrix::from_fn(n, c, |r, col| x[(r, col)] - mean[col]); // (N, C)
    let cov = centred.transpose() * &centred / (n as f64 - 1.0); // (C, C)
    let eig = SymmetricEigen::new(cov);
    let order =
        crate::sorting::stable_order(c, &|a, b| eig.eigenvalues[b].total_cmp(&eig.eigenvalues[a]));
    let total: f64 = eig.eigenvalues.iter().map(|v| v.max(0.0)).sum();
    let axis = |i: usize| -> Vec<f64> {
        let v: Vec<f64> = eig.eigenvectors.column(order[i]).iter().copied().collect();
        // A fixed sign (largest component positive), so the picture does not flip.
        let big = v
            .iter()
            .cloned()
            .fold(0.0f64, |m, x| if x.abs() > m.abs() { x } else { m });
        if big < 0.0 {
            v.iter().map(|x| -x).collect()
        } else {
            v
        }
    };
    let share = |i: usize| {
        if total > 0.0 {
            eig.eigenvalues[order[i]].max(0.0) / total
        } else {
            0.0
        }
    };
    Ok(Axes {
        mean,
        axes: [axis(0), axis(1)],
        share: [share(0), share(1)],
    })
}

/// Project `points (N, C)` onto two axes around `mean`: (N, 2).
pub fn project(points: &[f32], c: usize, mean: &[f64], axes: &[Vec<f64>; 2]) -> Vec<[f32; 2]> {
    points
        .chunks_exact(c)
        .map(|p| {
            let along = |a: &[f64]| -> f32 {
                p.iter()
                    .zip(mean)
                    .zip(a)
                    .map(|((x, m), w)| (*x as f64 - m) * w)
                    .sum::<f64>() as f32
            };
            [along(&axes[0]), along(&axes[1])]
        })
        .collect()
}

/// The embedding map of the loaded model: every token's embedding as the model scales it
/// and, for additive positions, the position vectors 0..t, on shared principal axes.
pub fn embedding_map(model: &Model, t: usize) -> Result<EmbeddingMap> {
    let cfg = &model.config;
    let c = cfg.d_model;
    let scale = embedding_scale(cfg.scale_embeddings, c);
    let tokens: Vec<f32> = model.embed.data.iter().map(|x| x * scale).collect(); // (V, C)
    let pe = additive_table(model, t.min(cfg.max_len))?.unwrap_or_default(); // (T, C) or empty
    let all = [tokens.as_slice(), pe.as_slice()].concat(); // (V + T, C)
    let a = principal_axes(&all, all.len() / c, c)?;
    Ok(EmbeddingMap {
        tokens: project(&tokens, c, &a.mean, &a.axes),
        positions: project(&pe, c, &a.mean, &a.axes),
        explained: a.share,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ModelConfig;
    use crate::tokenizer::Tokenizer;

    fn model(pos: PosEncoding) -> Model {
        let tok = Tokenizer::char_level("abcdefgh");
        let mut cfg = ModelConfig::preset("gpt-pico", tok.vocab_size()).unwrap();
        cfg.pos_encoding = pos;
        Model::init(cfg, tok, 3)
    }

    #[test]
    fn sinusoidal_similarity_has_c_over_two_on_the_diagonal_and_falls_off_with_distance() {
        let m = model(PosEncoding::Sinusoidal);
        let (t, c) = (24, m.config.d_model);
        let pe = additive_table(&m, t).unwrap().unwrap();
        let sim = similarity(&pe, t, c);
        // sin² + cos² = 1 for each of the C/2 pairs.
        for i in 0..t {
            assert!((sim[i * t + i] - c as f32 / 2.0).abs() < 1e-4);
        }
        // Symmetric, and depends on the distance only: sim(i, i+d) = sim(0, d).
        for i in 0..t {
            for j in 0..t {
                assert!((sim[i * t + j] - sim[j * t + i]).abs() < 1e-5);
                let d = i.abs_diff(j);
                assert!((sim[i * t + j] - sim[d]).abs() < 1e-4, "({i}, {j})");
            }
        }
        assert!(sim[1] < sim[0] && sim[4] < sim[1]);
    }

    #[test]
    fn learned_table_is_the_models_rows_and_attention_schemes_have_none() {
        let m = model(PosEncoding::Learned);
        let c = m.config.d_model;
        let pe = additive_table(&m, 5).unwrap().unwrap();
        assert_eq!(pe, m.pos_embed.as_ref().unwrap().data[..5 * c].to_vec());
        assert!(additive_table(&m, m.config.max_len + 1).is_err());
        for p in [
            PosEncoding::Rope,
            PosEncoding::Alibi,
            PosEncoding::Relative,
            PosEncoding::None,
        ] {
            assert!(additive_table(&model(p), 5).unwrap().is_none());
        }
    }

    #[test]
    fn alibi_matrix_is_minus_slope_times_distance() {
        let (slopes, bias) = alibi_matrices(4, 6);
        assert_eq!(slopes, alibi_slopes(4));
        for h in 0..4 {
            for i in 0..6usize {
                for j in 0..6usize {
                    let want = -slopes[h] * i.abs_diff(j) as f32;
                    assert_eq!(bias[(h * 6 + i) * 6 + j], want);
                }
            }
        }
    }

    #[test]
    fn relative_tables_come_from_every_self_attention_layer_and_distances_clip() {
        let m = model(PosEncoding::Relative);
        let tables = relative_tables(&m);
        assert_eq!(tables.len(), m.config.decoder_layers());
        let k = m.config.relative_max_distance;
        assert_eq!(tables[0].rel_k.len(), (2 * k + 1) * m.config.d_head());
        assert_eq!(clipped_distance(k + 10, 3, k), (0, -(k as i64)));
        assert_eq!(clipped_distance(3, 4, k), (k + 1, 1));
        assert!(relative_tables(&model(PosEncoding::Alibi)).is_empty());
    }

    #[test]
    fn rope_score_depends_only_on_the_offset() {
        let q: Vec<f32> = (0..16).map(|i| ((i * 5 % 7) as f32 - 3.0) * 0.4).collect();
        let k: Vec<f32> = (0..16).map(|i| ((i * 3 % 11) as f32 - 5.0) * 0.3).collect();
        for (i, j, s) in [(2, 7, 5), (9, 1, 30), (0, 0, 100), (40, 41, 17)] {
            let d = rope_demo(&q, &k, 1, 8, i, j, s).unwrap();
            assert!((d.score - d.shifted_score).abs() < 1e-5, "{d:?}");
            assert!((d.score - d.offset_score).abs() < 1e-5, "{d:?}");
        }
        let d = rope_demo(&q, &k, 0, 4, 0, 0, 0).unwrap();
        // Pair 0 turns by 1 radian per position, keeping its length.
        assert_eq!(d.theta, 1.0);
        let len = |p: [f32; 2]| (p[0] * p[0] + p[1] * p[1]).sqrt();
        for p in &d.q_path {
            assert!((len(*p) - len(d.q_path[0])).abs() < 1e-5);
        }
        assert!(rope_demo(&q, &k, 8, 4, 0, 0, 0).is_err());
    }

    #[test]
    fn rope_demo_of_a_rope_model_reproduces_the_score_its_pass_used() {
        let m = model(PosEncoding::Rope);
        let tokens = [1, 4, 5, 6, 7, 8];
        let d = rope_demo_of_model(&m, &tokens, 0, 1, 4, 2, 1, 9).unwrap();
        let opts = ForwardOptions {
            trace_attention: true,
            ..ForwardOptions::default()
        };
        let trace = m.forward(&Batch::single(&tokens).unwrap(), &opts).unwrap();
        let a = &trace.attention[0].scores; // (B, H, T, S)
        let t = tokens.len();
        let traced = a.data[(t + 4) * t + 2] * (m.config.d_head() as f32).sqrt();
        assert!((d.score - traced).abs() < 1e-4, "{} vs {traced}", d.score);
        assert!((d.score - d.shifted_score).abs() < 1e-5);
        assert!(rope_demo_of_model(&model(PosEncoding::Alibi), &tokens, 0, 0, 1, 0, 0, 1).is_err());
        assert!(rope_demo_of_model(&m, &tokens, 0, 0, 6, 0, 0, 1).is_err());
    }

    #[test]
    fn rope_unrotate_undoes_rope_rotate() {
        let x: Vec<f32> = (0..8).map(|i| i as f32 - 3.5).collect();
        let back = rope_unrotate(&rope_rotate(&x, 13), 13);
        for (a, b) in x.iter().zip(&back) {
            assert!((a - b).abs() < 1e-5);
        }
    }

    #[test]
    fn embedding_scale_multiplies_token_norms_by_root_c_and_sinusoidal_norms_are_root_c_over_two() {
        let m = model(PosEncoding::Sinusoidal);
        let c = m.config.d_model;
        let s = embedding_scale_of(&m, &[1, 4, 5]).unwrap();
        for (a, b) in s.token_norm.iter().zip(&s.token_norm_scaled) {
            assert!((a * (c as f32).sqrt() - b).abs() < 1e-5);
        }
        for n in &s.position_norm {
            assert!((n - (c as f32 / 2.0).sqrt()).abs() < 1e-5);
        }
        assert!(embedding_scale_of(&m, &[1, 99]).is_err());
    }

    #[test]
    fn principal_axes_find_the_long_direction_of_an_elongated_cloud() {
        // Points along (1, 1, 0) with a little spread along (0, 0, 1).
        let pts: Vec<f32> = (0..20)
            .flat_map(|i| {
                let a = i as f32 - 10.0;
                [a, a, 0.1 * ((i % 3) as f32 - 1.0)]
            })
            .collect();
        let Axes { axes, share, .. } = principal_axes(&pts, 20, 3).unwrap();
        let r = std::f64::consts::FRAC_1_SQRT_2;
        assert!((axes[0][0] - r).abs() < 1e-6 && (axes[0][1] - r).abs() < 1e-6);
        assert!(share[0] > 0.99);
        let proj = project(&pts, 3, &[-0.5, -0.5, 0.0], &axes);
        assert_eq!(proj.len(), 20);
        assert!(principal_axes(&pts[..3], 1, 3).is_err());
    }

    #[test]
    fn embedding_map_places_every_token_and_position() {
        let m = model(PosEncoding::Sinusoidal);
        let map = embedding_map(&m, 10).unwrap();
        assert_eq!(map.tokens.len(), m.config.vocab_size);
        assert_eq!(map.positions.len(), 10);
        assert!(map.explained[0] >= map.explained[1] && map.explained[0] <= 1.0);
        assert!(embedding_map(&model(PosEncoding::Rope), 10)
            .unwrap()
            .positions
            .is_empty());
    }
}
