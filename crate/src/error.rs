//! One error type for the whole core. Every variant carries a sentence meant for a person.

use std::fmt;

#[derive(Debug, Clone, PartialEq)]
pub enum Error {
    /// An invalid model configuration; the message starts with the field name.
    Config(String),
    /// A checkpoint that cannot be read, or whose tensors do not fit the config.
    Checkpoint(String),
    /// Input the model cannot take (unknown token id, too long, wrong batch shape).
    Input(String),
    /// The GPU backend cannot run (no adapter, limits exceeded, device lost).
    Gpu(String),
    /// Anything else, with its reason.
    Other(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Config(m) => write!(f, "invalid config: {m}"),
            Error::Checkpoint(m) => write!(f, "bad checkpoint: {m}"),
            Error::Input(m) => write!(f, "bad input: {m}"),
            Error::Gpu(m) => write!(f, "GPU backend: {m}"),
            Error::Other(m) => write!(f, "{m}"),
        }
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;
