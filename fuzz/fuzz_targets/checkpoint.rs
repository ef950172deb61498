//! Arbitrary bytes as a checkpoint file: loading never panics and never allocates past the
//! size budget; a file that loads saves back to bytes that load to the same model.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tplay::checkpoint;

fuzz_target!(|data: &[u8]| {
    let Ok(model) = checkpoint::load(data) else {
        return;
    };
    // The tensors actually loaded, counted one by one, stay within the budget.
    assert!(model.param_count() as u64 <= tplay::limits::MAX_PARAMS);
    let bytes = checkpoint::save(&model).expect("a loaded model saves");
    let back = checkpoint::load(&bytes).expect("a saved model loads");
    assert_eq!(back.config, model.config);
    assert_eq!(back.tokenizer.spec, model.tokenizer.spec);
    let mut a = vec![];
    model.visit_params(&mut |n, t, _| a.push((n.to_string(), t.clone())));
    let mut b = vec![];
    back.visit_params(&mut |n, t, _| b.push((n.to_string(), t.clone())));
    assert_eq!(a, b);
});
