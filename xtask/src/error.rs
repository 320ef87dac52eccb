//! The one error type of xtask.

use std::fmt;

/// Why an xtask command stopped. `main` prints it once and picks the exit code.
#[derive(Debug)]
pub(crate) enum Error {
    /// The command line was wrong: the usage text follows and the exit code is 2.
    Usage(String),
    /// A command could not do its job: the exit code is 1.
    Failed(String),
    /// A child process or a file operation failed; xshell's message names the command or the
    /// file. The exit code is 1.
    Shell(xshell::Error),
    /// What the build produced does not fit how bridge.js is put together.
    Pack(toolbridge_sdk_pack::Error),
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
            Self::Shell(error) => error.fmt(f),
            Self::Pack(error) => error.fmt(f),
        }
    }
}

impl std::error::Error for Error {}

impl From<xshell::Error> for Error {
    fn from(error: xshell::Error) -> Self {
        Self::Shell(error)
    }
}

impl From<toolbridge_sdk_pack::Error> for Error {
    fn from(error: toolbridge_sdk_pack::Error) -> Self {
        Self::Pack(error)
    }
}
