//! How much arithmetic a generation step costs: the multiply-adds of the matrix
//! products, counted for the tokens a step actually runs through the model.
//!
//! For one decoder layer, a token at position i (0-based) that attends causally to keys
//! 0..=i costs
//!
//! ```text
//!   4·C²            Q, K, V and output projections of self-attention
//! + 2·C·(i + 1)     scores and the weighted sum of v, over H heads of D = C/H
//! + 2·C·S + 2·C²    cross-attention over S encoder rows: scores, sum, Q and output
//!                   projections (encoder-decoder only; K and V of the memory are
//!                   computed once per encoder run: 2·S·C² per layer)
//! + 2·C·F           the FFN's two matrices
//! ```
//!
//! and the LM head costs C·V per row of logits computed. An encoder layer over S rows
//! costs `S·(4·C² + 2·C·F) + 2·C·S²` (every row attends to every row).
//!
//! Each (query, key) pair costs C = H·D multiply-adds for its score and C for its share
//! of the weighted sum of v, whatever the score function ([`score_macs_per_pair`]):
//!
//! - `dot` / `scaled_dot`: `q_i · k_j`, D multiply-adds per head;
//! - `additive`: `Σ_d v_h[d] · tanh(q_i[d] + k_j[d])`, per head D additions, D tanh
//!   evaluations and D multiply-adds. The multiply-adds are counted above; the additions
//!   and tanh evaluations are not multiply-adds and are counted apart, by
//!   [`decoder_score_ops`] and [`encoder_score_ops`] (C of each per pair, zero for dot
//!   scoring). A tanh costs far more than a multiply-add on real hardware, so additive
//!   scoring is slower than its equal multiply-add count suggests.
//!
//! With the KV cache a step runs one token: the cost grows *linearly* with the context
//! (the 2·C·(i + 1) term). Without it every step reruns the whole prefix of length n,
//! whose attention alone is `2·C·n(n+1)/2`: the cost of a step grows *quadratically*.
//!
//! Not counted: norms, softmax, activations, position encodings (RoPE rotations, ALiBi
//! penalties, the relative key vectors added to k), the 1/√D of scaled scores,
//! embeddings — all O(C) or O(S) per token, small next to the products. FLOPs are
//! 2 × multiply-adds.

use crate::config::{Arch, ModelConfig, Score};

/// Multiply-adds of one (query, key) pair's score, over all heads: C = H·D for every
/// score function (`dot`/`scaled_dot`: the dot product q·k; `additive`: v_h · tanh(q + k)).
pub fn score_macs_per_pair(cfg: &ModelConfig) -> u64 {
    let heads_by_d = (cfg.n_heads * cfg.d_head()) as u64;
    match cfg.score {
        Score::ScaledDot | Score::Dot => heads_by_d,
        Score::Additive => heads_by_d,
    }
}

/// The scoring work that is not multiply-adds: additions q[d] + k[d] and tanh
/// evaluations of additive scoring (both zero for dot scoring).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScoreOps {
    pub additions: u64,
    pub tanh: u64,
}

impl ScoreOps {
    /// `pairs` (query, key) pairs scored by every head of `cfg`.
    fn for_pairs(cfg: &ModelConfig, pairs: u64) -> ScoreOps {
        match cfg.score {
            Score::Additive => {
                let per_pair = (cfg.n_heads * cfg.d_head()) as u64;
                ScoreOps {
                    additions: pairs * per_pair,
                    tanh: pairs * per_pair,
                }
            }
            Score::ScaledDot | Score::Dot => ScoreOps::default(),
        }
    }
}

/// (query, key) pairs of the tokens at positions `first..first + count` under the causal
/// mask: Σ_{i=first}^{first+count−1} (i + 1).
fn causal_pairs(first: usize, count: usize) -> u64 {
    let (first, n) = (first as u64, count as u64);
    n * (2 * first + n + 1) / 2
}

/// The additions and tanh evaluations of additive scoring for the same run as
/// [`decoder_macs`] (self-attention, and cross-attention to `memory_len` rows for an
/// encoder-decoder), all decoder layers.
pub fn decoder_score_ops(
    cfg: &ModelConfig,
    first: usize,
    count: usize,
    memory_len: usize,
) -> ScoreOps {
    let mut pairs = causal_pairs(first, count);
    if cfg.arch == Arch::EncoderDecoder {
        pairs += count as u64 * memory_len as u64;
    }
    ScoreOps::for_pairs(cfg, cfg.decoder_layers() as u64 * pairs)
}

/// The additions and tanh evaluations of additive scoring for [`encoder_macs`] over `s` rows.
pub fn encoder_score_ops(cfg: &ModelConfig, s: usize) -> ScoreOps {
    let s = s as u64;
    ScoreOps::for_pairs(cfg, cfg.encoder_layers() as u64 * s * s)
}

/// Multiply-adds of one decoder stack run over the tokens at positions
/// `first..first + count`, each attending causally to every earlier position, plus the
/// cross-attention to `memory_len` encoder rows (encoder-decoder) and `logit_rows` rows
/// of the LM head. `memory_kv` adds the one-off K/V projections of the memory.
pub fn decoder_macs(
    cfg: &ModelConfig,
    first: usize,
    count: usize,
    memory_len: usize,
    memory_kv: bool,
    logit_rows: usize,
) -> u64 {
    let (c, f, v) = (cfg.d_model as u64, cfg.d_ff as u64, cfg.vocab_size as u64);
    let n = count as u64;
    // Per pair: its score, and its share of the weighted sum of v (C).
    let pair = score_macs_per_pair(cfg) + c;
    let mut per_layer = n * (4 * c * c + 2 * c * f) + pair * causal_pairs(first, count);
    if cfg.arch == Arch::EncoderDecoder {
        let s = memory_len as u64;
        per_layer += n * (2 * c * c + pair * s);
        if memory_kv {
            per_layer += 2 * s * c * c;
        }
    }
    cfg.decoder_layers() as u64 * per_layer + logit_rows as u64 * c * v
}

/// Multiply-adds of one training step's products on `b` sequences of `t` decoder and `s`
/// encoder positions: the forward pass, and twice it for the backward pass (the gradient
/// of each product's input and of its weight).
pub fn training_step_macs(cfg: &ModelConfig, b: usize, t: usize, s: usize) -> u64 {
    let per_seq = encoder_macs(cfg, s) + decoder_macs(cfg, 0, t, s, true, t);
    3 * b as u64 * per_seq
}

/// Multiply-adds of one encoder stack run over `s` rows (bidirectional attention).
pub fn encoder_macs(cfg: &ModelConfig, s: usize) -> u64 {
    let (c, f, s) = (cfg.d_model as u64, cfg.d_ff as u64, s as u64);
    let pair = score_macs_per_pair(cfg) + c;
    cfg.encoder_layers() as u64 * (s * (4 * c * c + 2 * c * f) + pair * s * s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pico() -> ModelConfig {
        // C = 16, F = 32, one layer.
        ModelConfig::preset("gpt-pico", 10).unwrap()
    }

    #[test]
    fn one_cached_token_costs_projections_ffn_attention_and_head() {
        // Position 4 attends to 5 keys: 4·256 + 2·16·32 + 2·16·5 + head 16·10.
        assert_eq!(
            decoder_macs(&pico(), 4, 1, 0, false, 1),
            1024 + 1024 + 160 + 160
        );
    }

    #[test]
    fn a_prefix_of_n_tokens_costs_the_sum_of_its_single_steps() {
        let cfg = pico();
        let whole = decoder_macs(&cfg, 0, 7, 0, false, 0);
        let steps: u64 = (0..7).map(|i| decoder_macs(&cfg, i, 1, 0, false, 0)).sum();
        assert_eq!(whole, steps);
    }

    #[test]
    fn attention_cost_grows_linearly_with_the_cache_and_quadratically_without() {
        let cfg = pico();
        let cached = |n: usize| decoder_macs(&cfg, n - 1, 1, 0, false, 1);
        let full = |n: usize| decoder_macs(&cfg, 0, n, 0, false, n);
        // Second differences: zero for a linear cost, constant and positive for a
        // quadratic one (2·C, since the second difference of n(n+1)/2 is 1).
        let d2 = |g: &dyn Fn(usize) -> u64, n: usize| {
            g(n + 2) as i64 - 2 * g(n + 1) as i64 + g(n) as i64
        };
        assert_eq!(d2(&cached, 8), 0);
        assert_eq!(d2(&full, 8), 2 * 16);
        assert_eq!(d2(&full, 30), 2 * 16);
    }

    #[test]
    fn cross_attention_adds_its_projections_and_memory_pairs() {
        let cfg = ModelConfig::preset("seq2seq-nano", 10).unwrap(); // C 32, F 64, 2 + 2 layers
        let without = decoder_macs(&cfg, 0, 1, 0, false, 0);
        let with = decoder_macs(&cfg, 0, 1, 6, false, 0);
        assert_eq!(with - without, 2 * (2 * 32 * 6));
        let kv = decoder_macs(&cfg, 0, 1, 6, true, 0) - with;
        assert_eq!(kv, 2 * (2 * 6 * 32 * 32));
        assert_eq!(
            encoder_macs(&cfg, 6),
            2 * (6 * (4 * 1024 + 2 * 32 * 64) + 2 * 32 * 36)
        );
    }

    #[test]
    fn additive_scoring_costs_the_same_multiply_adds_plus_additions_and_tanh_per_pair() {
        // gpt-nano for the grammar vocabulary: C = 32, H = 4 (D = 8), F = 64, 2 layers.
        let dot = ModelConfig::preset("gpt-nano", 20).unwrap();
        let additive = ModelConfig {
            score: Score::Additive,
            ..dot.clone()
        };
        assert_eq!((dot.d_model, dot.n_heads, dot.d_ff), (32, 4, 64));
        assert_eq!(dot.decoder_layers(), 2);
        // Positions 0..5 run at once: 1 + 2 + 3 + 4 + 5 = 15 causal pairs per layer.
        // Per layer: 5·(4·32² + 2·32·64) = 40960 for projections and FFN; each pair 32
        // multiply-adds of score (dot: 4 heads × 8 products; additive: 4 heads × 8 products
        // v·tanh) and 32 of the weighted sum: 15·64 = 960. Head: 5 rows × 32 × 20 = 3200.
        let by_hand = 2 * (40960 + 960) + 3200;
        assert_eq!(decoder_macs(&dot, 0, 5, 0, false, 5), by_hand);
        assert_eq!(decoder_macs(&additive, 0, 5, 0, false, 5), by_hand);
        // What only additive scoring does: 4 heads × 8 additions and 8 tanh per pair,
        // 15 pairs, 2 layers.
        assert_eq!(decoder_score_ops(&dot, 0, 5, 0), ScoreOps::default());
        assert_eq!(
            decoder_score_ops(&additive, 0, 5, 0),
            ScoreOps {
                additions: 2 * 15 * 32,
                tanh: 2 * 15 * 32
            }
        );
        // One cached step at position 9: 10 pairs per layer.
        assert_eq!(
            decoder_score_ops(&additive, 9, 1, 0),
            ScoreOps {
                additions: 2 * 10 * 32,
                tanh: 2 * 10 * 32
            }
        );
    }

    #[test]
    fn additive_encoder_and_cross_attention_pairs_are_counted_too() {
        // seq2seq-nano: C = 32, 2 + 2 layers.
        let dot = ModelConfig::preset("seq2seq-nano", 10).unwrap();
        let additive = ModelConfig {
            score: Score::Additive,
            ..dot.clone()
        };
        // Encoder over 6 rows: 36 pairs per layer, 2 layers, 32 of each per pair.
        assert_eq!(encoder_score_ops(&dot, 6), ScoreOps::default());
        assert_eq!(
            encoder_score_ops(&additive, 6),
            ScoreOps {
                additions: 2 * 36 * 32,
                tanh: 2 * 36 * 32
            }
        );
        assert_eq!(encoder_macs(&additive, 6), encoder_macs(&dot, 6));
        // Decoder token at position 2 over 6 memory rows: 3 self pairs + 6 cross pairs.
        assert_eq!(
            decoder_score_ops(&additive, 2, 1, 6),
            ScoreOps {
                additions: 2 * 9 * 32,
                tanh: 2 * 9 * 32
            }
        );
    }
}
