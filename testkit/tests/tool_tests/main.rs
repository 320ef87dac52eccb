//! The example tools' own tests and the package's, in a real browser (written next).
