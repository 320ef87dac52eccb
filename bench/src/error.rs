//! The one error type of the bench.

use std::io;

/// Why a measurement could not be taken or reported.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Error {
    /// A server, the fault server or a file the test support library handles failed.
    #[error(transparent)]
    Support(#[from] toolbridge_e2e::Error),
    /// A file could not be read or written (`fs_err` names the file in the message).
    #[error(transparent)]
    File(#[from] io::Error),
    /// A program could not be run; the source says why.
    #[error("{what}")]
    Run {
        /// What was being done: "cannot run `gzip -9 -c sdk/dist/bridge.js`".
        what: String,
        /// The operating system's reason.
        #[source]
        source: io::Error,
    },
    /// A measurement failed or a report could not be read.
    #[error("{0}")]
    Failed(String),
}

impl Error {
    /// A failure with a message.
    pub(crate) fn failed(message: impl Into<String>) -> Self {
        Self::Failed(message.into())
    }
}
