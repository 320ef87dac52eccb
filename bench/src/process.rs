//! Finding and running the programs the bench measures with.

use std::env;
use std::path::PathBuf;
use std::process::Command;

use toolbridge_e2e::server::describe;

use crate::error::Error;

/// Where `program` is on `PATH`, if it is anywhere.
pub(crate) fn find(program: &str) -> Option<PathBuf> {
    let path = env::var_os("PATH")?;
    env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
}

/// `program` from `PATH`, or an error that says how to install it (`install`).
pub(crate) fn require(program: &str, install: &str) -> Result<PathBuf, Error> {
    find(program).ok_or_else(|| Error::failed(format!("{program} not found; {install}")))
}

/// Runs `command` and returns its standard output; its standard error goes to ours. A failure
/// to start or an unsuccessful exit is an error that names the command.
pub(crate) fn capture(command: &mut Command) -> Result<Vec<u8>, Error> {
    let shown = describe(command);
    let output = command
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|source| Error::Run {
            what: format!("cannot run `{shown}`"),
            source,
        })?;
    if output.status.success() {
        Ok(output.stdout)
    } else {
        Err(Error::failed(format!(
            "`{shown}` failed ({})",
            output.status
        )))
    }
}

/// Runs `command` with its output shown as it comes; `Ok(false)` when it ran and failed.
pub(crate) fn run(command: &mut Command) -> Result<bool, Error> {
    let status = command.status().map_err(|source| Error::Run {
        what: format!("cannot run `{}`", describe(command)),
        source,
    })?;
    Ok(status.success())
}
