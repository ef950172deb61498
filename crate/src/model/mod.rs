//! Model parameters and the forward pass.
