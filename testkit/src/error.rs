//! The test kit's one error type.

use toolbridge_protocol::Violation;

/// Why a memory backend could not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The fixtures break a rule: every problem, each with its path
    /// (`products[2].sellPrice`).
    #[error("the fixtures are not valid: {}", list(.0))]
    Fixtures(Vec<Violation>),
}

impl Error {
    /// Every problem found, with its path.
    pub fn violations(&self) -> &[Violation] {
        match self {
            Error::Fixtures(violations) => violations,
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
