//! The one error type of xtask.

use std::fmt;

/// Why an xtask command stopped. `main` prints it once and picks the exit code.
#[derive(Debug)]
pub(crate) enum Error {
    /// The command line was wrong: the usage text follows and the exit code is 2.
    Usage(String),
    /// A command could not do its job: the exit code is 1.
    Failed(String),
}

impl Error {
    /// A failure with a message.
    pub(crate) fn failed(message: impl Into<String>) -> Self {
        Self::Failed(message.into())
    }

    /// A command-line mistake with a message.
    pub(crate) fn usage(message: impl Into<String>) -> Self {
        Self::Usage(message.into())
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Usage(message) | Self::Failed(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for Error {}
