//! A private temporary directory for the child processes of one run, removed when the run ends.
//!
//! Browsers and their drivers leave profiles behind in the temporary directory: chromedriver's
//! `scoped_dir` profiles (10 to 25 MB each, one per wasm-bindgen test binary) and Chromium's
//! singleton-socket directories. Run after run they add up (about 3 GB here over a day of test
//! and bench runs, 170 profiles). Every child of `test` and `bench` sees this directory as `TMPDIR`, so what
//! they leave is removed with it, and a run that was killed is cleaned up by the next one.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process;

use crate::error::Error;

/// The name of every run's directory starts with this, followed by the process id.
const PREFIX: &str = "toolbridge-xtask.";

/// The directory; removed, with all it holds, on drop.
pub(crate) struct Scratch {
    dir: PathBuf,
}

impl Scratch {
    /// Removes the directories of earlier runs that are no longer running, then creates this
    /// run's under the system's temporary directory (kept short: Chromium puts a Unix socket in
    /// it, and socket paths are limited to about 100 bytes).
    pub(crate) fn create() -> Result<Self, Error> {
        let parent = std::env::temp_dir();
        sweep(&parent);
        let dir = parent.join(format!("{PREFIX}{}", process::id()));
        // A directory of the same name is left over from a run whose process id this one got.
        remove(&dir);
        fs::create_dir_all(&dir).map_err(|e| {
            Error::failed(format!(
                "cannot create the temporary directory {}: {e}",
                dir.display()
            ))
        })?;
        Ok(Self { dir })
    }

    /// Where it is.
    pub(crate) fn path(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        remove(&self.dir);
    }
}

/// Removes the directories in `parent` of runs whose process is gone. Without `/proc` there is no
/// telling, so nothing is removed.
fn sweep(parent: &Path) {
    let proc = Path::new("/proc");
    if !proc.join("self").exists() {
        return;
    }
    let Ok(entries) = fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|name| name.strip_prefix(PREFIX))
            .filter(|pid| pid.parse::<u32>().is_ok())
        else {
            continue;
        };
        if !proc.join(pid).exists() {
            remove(&entry.path());
        }
    }
}

/// Removes `dir` and what it holds; what cannot be removed is reported and left.
fn remove(dir: &Path) {
    match fs::remove_dir_all(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => eprintln!(
            "xtask: warning: cannot remove the temporary directory {}: {e}",
            dir.display()
        ),
    }
}
