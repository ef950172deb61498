//! How values travel to the page: float and integer arrays that cross the wasm boundary as
//! one typed array each (copied once, no object per number), and the dense tensor built on
//! them. Every request and result of `crate::protocol`, and the side studies of
//! `crate::explain`, carry their numbers in these.

use serde::{Serialize, Serializer};
use ts_rs::TS;

/// f32 values that reach the page as one `Float32Array` (natively, a list of numbers).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct F32Array(pub Vec<f32>);

impl Serialize for F32Array {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[cfg(target_arch = "wasm32")]
        {
            // serde-wasm-bindgen passes a JS value through untouched: one copy, no boxing.
            serde_wasm_bindgen::preserve::serialize(&js_sys::Float32Array::from(&self.0[..]), s)
        }
        #[cfg(not(target_arch = "wasm32"))]
        {
            self.0.serialize(s)
        }
    }
}

impl TS for F32Array {
    type WithoutGenerics = Self;
    type OptionInnerType = Self;
    fn name(_: &ts_rs::Config) -> String {
        "Float32Array".into()
    }
    fn inline(cfg: &ts_rs::Config) -> String {
        Self::name(cfg)
    }
}

/// u32 values that reach the page as one `Uint32Array` (natively, a list of numbers).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct U32Array(pub Vec<u32>);

impl Serialize for U32Array {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[cfg(target_arch = "wasm32")]
        {
            serde_wasm_bindgen::preserve::serialize(&js_sys::Uint32Array::from(&self.0[..]), s)
        }
        #[cfg(not(target_arch = "wasm32"))]
        {
            self.0.serialize(s)
        }
    }
}

impl TS for U32Array {
    type WithoutGenerics = Self;
    type OptionInnerType = Self;
    fn name(_: &ts_rs::Config) -> String {
        "Uint32Array".into()
    }
    fn inline(cfg: &ts_rs::Config) -> String {
        Self::name(cfg)
    }
}

/// f64 values that reach the page as one `Float64Array` (natively, a list of numbers).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct F64Array(pub Vec<f64>);

impl Serialize for F64Array {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[cfg(target_arch = "wasm32")]
        {
            serde_wasm_bindgen::preserve::serialize(&js_sys::Float64Array::from(&self.0[..]), s)
        }
        #[cfg(not(target_arch = "wasm32"))]
        {
            self.0.serialize(s)
        }
    }
}

impl TS for F64Array {
    type WithoutGenerics = Self;
    type OptionInnerType = Self;
    fn name(_: &ts_rs::Config) -> String {
        "Float64Array".into()
    }
    fn inline(cfg: &ts_rs::Config) -> String {
        Self::name(cfg)
    }
}

/// A dense f32 tensor for the page: its shape and its row-major values.
#[derive(Clone, Debug, PartialEq, Serialize, TS)]
pub struct Dense {
    pub shape: Vec<usize>,
    pub data: F32Array,
}

impl Dense {
    pub fn new(shape: &[usize], data: &[f32]) -> Dense {
        Dense {
            shape: shape.to_vec(),
            data: F32Array(data.to_vec()),
        }
    }
}
