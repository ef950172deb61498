//! Stacking examples into one right-padded batch.

use super::Example;

/// A batch of examples, right-padded with `<pad>` (0): what one training step consumes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrainBatch {
    /// B
    pub b: usize,
    /// T: the longest `tokens` of the batch.
    pub t: usize,
    /// S: the longest `src` of the batch (0 without a source).
    pub s: usize,
    /// (B, T) input ids of the main stack.
    pub tokens: Vec<u32>,
    /// (B, S) source ids (encoder-decoder), else empty.
    pub src: Vec<u32>,
    /// (B, T) target ids, `<pad>` where a position is not scored; empty for a classifier.
    pub targets: Vec<u32>,
    /// (B) class labels of a classifier, else empty.
    pub labels: Vec<u32>,
}

impl TrainBatch {
    /// Stack examples, padding every row with `pad` to the longest one.
    pub fn collate(examples: &[Example], pad: u32) -> TrainBatch {
        let b = examples.len();
        let t = examples.iter().map(|e| e.tokens.len()).max().unwrap_or(0);
        let s = examples.iter().map(|e| e.src.len()).max().unwrap_or(0);
        let rows = |get: &dyn Fn(&Example) -> &[u32], width: usize| -> Vec<u32> {
            let mut out = vec![pad; b * width]; // (B, width)
            for (row, e) in out.chunks_exact_mut(width.max(1)).zip(examples) {
                let v = get(e);
                row[..v.len()].copy_from_slice(v);
            }
            out
        };
        let has_targets = examples.iter().any(|e| !e.targets.is_empty());
        TrainBatch {
            b,
            t,
            s,
            tokens: if t > 0 {
                rows(&|e| &e.tokens, t)
            } else {
                vec![]
            }, // (B, T)
            src: if s > 0 { rows(&|e| &e.src, s) } else { vec![] }, // (B, S)
            targets: if has_targets && t > 0 {
                rows(&|e| &e.targets, t) // (B, T)
            } else {
                vec![]
            },
            labels: examples.iter().filter_map(|e| e.label).collect(), // (B)
        }
    }

    /// Number of positions the LM loss counts (targets that are not `pad`).
    pub fn counted_targets(&self, pad: u32) -> usize {
        self.targets.iter().filter(|&&t| t != pad).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ex(tokens: &[u32], targets: &[u32], src: &[u32]) -> Example {
        Example {
            src: src.to_vec(),
            tokens: tokens.to_vec(),
            targets: targets.to_vec(),
            label: None,
            prompt_len: 1,
        }
    }

    #[test]
    fn collate_right_pads_every_row_to_the_longest() {
        let b = TrainBatch::collate(
            &[
                ex(&[1, 5, 6], &[5, 6, 2], &[7]),
                ex(&[1, 9], &[9, 2], &[8, 8, 8]),
            ],
            0,
        );
        assert_eq!((b.b, b.t, b.s), (2, 3, 3));
        assert_eq!(b.tokens, vec![1, 5, 6, 1, 9, 0]);
        assert_eq!(b.targets, vec![5, 6, 2, 9, 2, 0]);
        assert_eq!(b.src, vec![7, 0, 0, 8, 8, 8]);
        assert_eq!(b.counted_targets(0), 5);
        assert!(b.labels.is_empty());
    }

    #[test]
    fn collate_keeps_labels_and_no_targets_for_a_classifier() {
        let mut a = ex(&[1, 4], &[], &[]);
        a.label = Some(1);
        let mut c = ex(&[1, 4, 5, 6], &[], &[]);
        c.label = Some(0);
        let b = TrainBatch::collate(&[a, c], 0);
        assert_eq!(b.labels, vec![1, 0]);
        assert!(b.targets.is_empty() && b.src.is_empty());
        assert_eq!(b.tokens, vec![1, 4, 0, 0, 1, 4, 5, 6]);
    }
}
