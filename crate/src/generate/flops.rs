//! How much arithmetic a generation step costs: the multiply-adds of the matrix
//! products, counted for the tokens a step actually runs through the model.
//!
//! For one decoder layer, a token at position i (0-based) that attends causally to keys
//! 0..=i costs
//!
//! ```text
//!   4·C²            Q, K, V and output projections of self-attention
//! + 2·C·(i + 1)     scores q·k and the weighted sum of v, over H heads of D = C/H
//! + 2·C·S + 2·C²    cross-attention over S encoder rows: scores, sum, Q and output
//!                   projections (encoder-decoder only; K and V of the memory are
//!                   computed once per encoder run: 2·S·C² per layer)
//! + 2·C·F           the FFN's two matrices
//! ```
//!
//! and the LM head costs C·V per row of logits computed. An encoder layer over S rows
//! costs `S·(4·C² + 2·C·F) + 2·C·S²` (every row attends to every row).
//!
//! With the KV cache a step runs one token: the cost grows *linearly* with the context
//! (the 2·C·(i + 1) term). Without it every step reruns the whole prefix of length n,
//! whose attention alone is `2·C·n(n+1)/2`: the cost of a step grows *quadratically*.
//!
//! Not counted: norms, softmax, activations, position encodings, embeddings — all
//! O(C) or O(S) per token, small next to the products. FLOPs are 2 × multiply-adds.

use crate::config::{Arch, ModelConfig};

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
    let first = first as u64;
    // Σ_{i=first}^{first+n−1} (i + 1): query-key pairs under the causal mask.
    let pairs = n * (2 * first + n + 1) / 2;
    let mut per_layer = n * (4 * c * c + 2 * c * f) + 2 * c * pairs;
    if cfg.arch == Arch::EncoderDecoder {
        let s = memory_len as u64;
        per_layer += n * (2 * c * c + 2 * c * s);
        if memory_kv {
            per_layer += 2 * s * c * c;
        }
    }
    cfg.decoder_layers() as u64 * per_layer + logit_rows as u64 * c * v
}

/// Multiply-adds of one encoder stack run over `s` rows (bidirectional attention).
pub fn encoder_macs(cfg: &ModelConfig, s: usize) -> u64 {
    let (c, f, s) = (cfg.d_model as u64, cfg.d_ff as u64, s as u64);
    cfg.encoder_layers() as u64 * (s * (4 * c * c + 2 * c * f) + 2 * c * s * s)
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
}
