//! One sort for the whole crate.
//!
//! `slice::sort_by` compiles a whole stable sort (driftsort: a quicksort, a merge, small
//! sorts) for every element type and comparator it is called with: about 7 kB of wasm
//! each, and the page's inference engine carried fifteen of them. Here every caller sorts
//! positions (`usize`) with one comparator type, so the sort is compiled once; the
//! positions' own order breaks ties, which makes the result exactly a stable sort's.

use std::cmp::Ordering;

/// The positions `0..n` in the order `cmp` puts them, equal ones in their original order:
/// the permutation a stable sort by `cmp` applies.
pub fn stable_order(n: usize, cmp: &dyn Fn(usize, usize) -> Ordering) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_unstable_by(|&a, &b| cmp(a, b).then(a.cmp(&b)));
    order
}

/// `v` sorted by `cmp`, equal elements in their original order (what `slice::sort_by`
/// gives), through [`stable_order`].
pub fn sort_by<T>(v: &mut [T], cmp: impl Fn(&T, &T) -> Ordering) {
    let order = stable_order(v.len(), &|a, b| cmp(&v[a], &v[b]));
    permute(v, &order);
}

/// `v` sorted by the key `key` gives, equal keys in their original order (what
/// `slice::sort_by_key` gives).
pub fn sort_by_key<T, K: Ord>(v: &mut [T], key: impl Fn(&T) -> K) {
    sort_by(v, |a, b| key(a).cmp(&key(b)));
}

/// Puts `v[order[k]]` at `k` for every `k`, one cycle of the permutation at a time.
fn permute<T>(v: &mut [T], order: &[usize]) {
    let mut placed = vec![false; v.len()];
    for start in 0..v.len() {
        let mut k = start;
        while !placed[k] {
            placed[k] = true;
            let from = order[k];
            if from == start {
                break;
            }
            // v[from] still holds its original element; v[k]'s goes on along the cycle.
            v.swap(k, from);
            k = from;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        // The standard library's stable sort is the reference: the same elements in the
        // same order, ties included (the payload tells equal keys apart).
        #[test]
        fn sort_by_is_the_standard_stable_sort(keys in proptest::collection::vec(0u8..6, 0..200)) {
            let mut ours: Vec<(u8, usize)> = keys.iter().copied().zip(0..).collect();
            let mut std_sorted = ours.clone();
            std_sorted.sort_by_key(|p| std::cmp::Reverse(p.0));
            sort_by(&mut ours, |a, b| b.0.cmp(&a.0));
            prop_assert_eq!(ours, std_sorted);
        }

        #[test]
        fn sort_by_key_and_stable_order_agree_with_the_standard_library(xs in proptest::collection::vec(-3i32..3, 0..100)) {
            let mut ours: Vec<(i32, usize)> = xs.iter().copied().zip(0..).collect();
            let mut std_sorted = ours.clone();
            std_sorted.sort_by_key(|p| p.0);
            sort_by_key(&mut ours, |p| p.0);
            prop_assert_eq!(&ours, &std_sorted);
            let mut idx: Vec<usize> = (0..xs.len()).collect();
            idx.sort_by(|&a, &b| xs[b].cmp(&xs[a]));
            prop_assert_eq!(stable_order(xs.len(), &|a, b| xs[b].cmp(&xs[a])), idx);
        }
    }

    #[test]
    fn floats_by_total_order_with_nan_and_signed_zeros() {
        let xs = [3.0, f64::NAN, -0.0, 0.0, -1.0, f64::NEG_INFINITY, 3.0];
        let mut ours = xs.to_vec();
        let mut std_sorted = xs.to_vec();
        sort_by(&mut ours, f64::total_cmp);
        std_sorted.sort_by(f64::total_cmp);
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&ours), bits(&std_sorted));
    }
}
