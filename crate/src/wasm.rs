//! The thin wasm-bindgen boundary.
