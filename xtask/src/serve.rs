//! `cargo xtask serve`: will start the local `toolbridge` server once it exists.

use crate::error::Error;

/// There is no server yet, so this only says so (and fails).
pub(crate) fn run() -> Result<(), Error> {
    Err(Error::failed(
        "`toolbridge serve` arrives with the server, which is not implemented yet",
    ))
}
