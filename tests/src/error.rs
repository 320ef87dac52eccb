//! The one error type of the test support library.

use std::io;

/// Why a server, a driver or a file the suites need could not be had.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file or a process could not be handled; the source says why.
    #[error("{what}")]
    Io {
        /// What was being done: `cannot start chromedriver`.
        what: String,
        /// The operating system's reason.
        #[source]
        source: io::Error,
    },
    /// A file could not be read, written or made (`fs_err` names the file in the message).
    #[error(transparent)]
    File(#[from] io::Error),
    /// Something the suites need is missing or did not behave.
    #[error("{0}")]
    Failed(String),
}

impl Error {
    /// A failure with a message.
    pub fn failed(message: impl Into<String>) -> Self {
        Self::Failed(message.into())
    }

    /// A function that turns an I/O error into one that says what was being done.
    pub fn io(what: impl Into<String>) -> impl FnOnce(io::Error) -> Self {
        let what = what.into();
        move |source| Self::Io { what, source }
    }

    /// This error and each of its causes, joined with `: `, for printing.
    pub fn chain(&self) -> String {
        chain(self)
    }
}

/// `error` and each of its causes, joined with `: `, for printing.
pub fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
