//! position
