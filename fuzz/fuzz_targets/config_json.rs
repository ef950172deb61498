//! Arbitrary text as a model config: parsing never panics; an accepted config is within the
//! size budget, counts its parameters without overflow, and survives a JSON round trip.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tplay::limits;
use tplay::ModelConfig;

fuzz_target!(|text: &str| {
    let Ok(cfg) = ModelConfig::from_json(text) else {
        return;
    };
    let n = cfg.param_count_u64();
    assert!(n <= limits::MAX_PARAMS, "{n} parameters passed the budget");
    assert_eq!(cfg.param_count() as u64, n, "the count fits a usize");
    assert!(cfg.d_model % cfg.n_heads == 0);
    let back = ModelConfig::from_json(&cfg.to_json()).expect("a valid config re-parses");
    assert_eq!(back, cfg);
});
