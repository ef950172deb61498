//! The page's worker protocol: every request the page sends the engine and every result
//! it gets back, as serde types. The TypeScript types of the protocol are generated from
//! these (and from the core types they hold) by ts-rs — `www/src/engine/generated.ts`,
//! kept fresh by `crate/tests/protocol_types.rs` — so the two sides cannot drift apart.
//!
//! Float arrays cross as `Float32Array`s ([`F32Array`]), copied once; everything else as
//! plain objects. `crate::engine` builds the results; `wasm.rs` only converts.

mod explain;
mod forward;
mod generate;
mod input;
mod status;
mod train;
// Every type of the protocol, the time view's (which need the GPU backend) among them.
#[cfg(all(not(target_arch = "wasm32"), feature = "gpu"))]
mod typescript;
mod weights;

pub use explain::*;
pub use forward::*;
pub use generate::*;
pub use input::*;
pub use status::*;
pub use train::*;
#[cfg(all(not(target_arch = "wasm32"), feature = "gpu"))]
pub use typescript::typescript;
pub use weights::*;

pub use crate::wire::{Dense, F32Array, F64Array, U32Array};
