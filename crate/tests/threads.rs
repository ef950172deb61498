//! Training on several threads (`tplay::par`) trains the same model to the bit as one
//! thread: every shipped recipe (all its design choices: positions, scores, norms,
//! dropout, encoder-decoder, classifiers), a few steps each, the loss and gradient norm of
//! every step and every weight after them compared across thread counts.

use tplay::checkpoint;
use tplay::train::recipes::recipes;
use tplay::train::Trainer;

/// Every step's loss and gradient norm (as bits), and the checkpoint after `steps` steps.
fn train(spec: &tplay::train::RunSpec, steps: usize) -> (Vec<(u32, u32)>, Vec<u8>) {
    let task = spec.task().unwrap();
    let cfg = spec.model_config(task.as_ref()).unwrap();
    let mut t = Trainer::new(task.as_ref(), cfg, spec.train_options().unwrap()).unwrap();
    let curve = (0..steps)
        .map(|_| {
            let s = t.train_step().unwrap();
            (s.loss.to_bits(), s.grad_norm.to_bits())
        })
        .collect();
    (curve, checkpoint::save(&t.model).unwrap())
}

#[test]
fn every_recipe_trains_the_same_bits_on_one_two_and_three_threads() {
    let mut checked = 0;
    for r in recipes() {
        let spec = r.run.clone();
        let one = tplay::par::with_threads(1, || train(&spec, 3));
        for n in [2, 3] {
            let many = tplay::par::with_threads(n, || tplay::par::install(|| train(&spec, 3)));
            assert_eq!(one.0, many.0, "{}: the curve on {n} threads", r.file);
            assert!(one.1 == many.1, "{}: the weights on {n} threads", r.file);
        }
        checked += 1;
    }
    assert!(checked >= 20, "only {checked} recipes");
}

#[test]
fn a_product_of_a_recipe_s_size_is_cut_in_pieces_on_two_threads() {
    // The comparison above means something only if the work was really divided: the
    // reverse recipe's products (576 rows of 64 × 64) are cut in two on two threads.
    let firsts = std::sync::Mutex::new(vec![]);
    tplay::par::with_threads(2, || {
        tplay::par::install(|| {
            let mut out = vec![0.0f32; 576 * 64];
            tplay::par::rows(&mut out, 64, 64 * 64, |first, block| {
                firsts.lock().unwrap().push((first, block.len() / 64));
            });
        })
    });
    let mut firsts = firsts.into_inner().unwrap();
    firsts.sort();
    assert_eq!(firsts, vec![(0, 288), (288, 288)]);
}
