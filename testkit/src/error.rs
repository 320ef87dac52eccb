//! The test kit's one error type.

use toolbridge_protocol::Violation;

/// Why a memory backend could not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The fixtures break a rule: every problem, each with its path
    /// (`products[2].sellPrice`).
    #[error("the fixtures are not valid: {}", list(.0))]
    Fixtures(Vec<Violation>),
    /// Something the backend needs could not be made: its test signing key
    /// (the system's random numbers failed).
    #[error("the memory backend could not be made: {0}")]
    Setup(String),
}

impl Error {
    /// Every problem found in the fixtures, with its path (none for a
    /// [`Error::Setup`]).
    pub fn violations(&self) -> &[Violation] {
        match self {
            Error::Fixtures(violations) => violations,
            Error::Setup(_) => &[],
        }
    }
}

fn list(violations: &[Violation]) -> String {
    violations
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}
