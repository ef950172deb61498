//! Generation: prefill, KV cache, decoding strategies.
