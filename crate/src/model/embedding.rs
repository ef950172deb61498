//! embedding
