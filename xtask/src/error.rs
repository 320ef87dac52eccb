//! The one error type of xtask.

use std::fmt;

/// Why an xtask command stopped. `main` prints it once and picks the exit code.
#[derive(Debug)]
pub(crate) enum Error {
    /// The command line was wrong: the usage text follows and the exit code is 2.
    Usage(String),
    /// A command could not do its job: the exit code is 1.
    Failed(String),
    /// A file could not be read or written (`fs_err`'s message names it): the exit code is 1.
    Io(std::io::Error),
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
            Self::Io(error) => error.fmt(f),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io(error) => error.source(),
            Self::Usage(_) | Self::Failed(_) => None,
        }
    }
}

impl From<std::io::Error> for Error {
    fn from(error: std::io::Error) -> Self {
        Self::Io(error)
    }
}
