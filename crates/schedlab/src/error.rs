//! The core's one error type. Every variant says what was wrong and where, in
//! words a user can act on; nothing in the core panics on bad input.

use thiserror::Error;

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum Error {
    /// A value outside one of the limits in [`crate::limits`].
    #[error("{what} is {value}, but the limit is {min}..={max} ({limit})")]
    Limit {
        what: String,
        value: u64,
        min: u64,
        max: u64,
        limit: &'static str,
    },
    /// A name that is not one of the valid ones (preset, era, flag, feature, level, ...).
    #[error("unknown {kind} {name:?}; valid: {}", valid.join(", "))]
    Unknown {
        kind: &'static str,
        name: String,
        valid: Vec<String>,
    },
    /// Anything else that is invalid, with its location in the message.
    #[error("{0}")]
    Invalid(String),
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub fn invalid(msg: impl Into<String>) -> Self {
        Error::Invalid(msg.into())
    }

    pub fn unknown<S: ToString>(
        kind: &'static str,
        name: &str,
        valid: impl IntoIterator<Item = S>,
    ) -> Self {
        Error::Unknown {
            kind,
            name: name.to_string(),
            valid: valid.into_iter().map(|s| s.to_string()).collect(),
        }
    }
}
