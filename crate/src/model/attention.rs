//! attention
