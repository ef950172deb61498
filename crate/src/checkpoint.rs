//! Checkpoint load/save.
