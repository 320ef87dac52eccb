//! The store's one error type.

/// What a store call can fail with: a rule the caller broke, or a failure of
/// the database itself.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The caller did something wrong: `NOT_FOUND` (also for another
    /// tenant's id), `INVALID_PARAMS` with paths, `QUOTE_LOCKED`, …
    #[error(transparent)]
    Rule(#[from] toolbridge_protocol::Error),
    /// The database failed (I/O, corruption, a value it cannot read). The
    /// text is for logs, not for clients.
    #[error("database failure: {0}")]
    Database(String),
}

impl Error {
    /// The caller's error, if this is one.
    pub fn rule(&self) -> Option<&toolbridge_protocol::Error> {
        match self {
            Error::Rule(rule) => Some(rule),
            Error::Database(_) => None,
        }
    }

    pub(crate) fn corrupt(what: impl std::fmt::Display) -> Self {
        Error::Database(format!("unreadable stored value: {what}"))
    }
}

impl From<sqlx::Error> for Error {
    fn from(error: sqlx::Error) -> Self {
        Error::Database(error.to_string())
    }
}

impl From<sqlx::migrate::MigrateError> for Error {
    fn from(error: sqlx::migrate::MigrateError) -> Self {
        Error::Database(format!("migration failed: {error}"))
    }
}

/// For answering clients: a rule stays as it is; a database failure becomes
/// `INTERNAL` without its details (log them before converting).
impl From<Error> for toolbridge_protocol::Error {
    fn from(error: Error) -> Self {
        match error {
            Error::Rule(rule) => rule,
            Error::Database(_) => {
                toolbridge_protocol::Error::Internal("the server's database failed".to_owned())
            }
        }
    }
}
