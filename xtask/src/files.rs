//! Reading and writing files, with errors that name the file.

use std::fs;
use std::path::Path;

use crate::error::Error;

/// The bytes of a file.
pub(crate) fn read(path: &Path) -> Result<Vec<u8>, Error> {
    fs::read(path).map_err(|e| Error::failed(format!("cannot read {}: {e}", path.display())))
}

/// The text of a file.
pub(crate) fn read_text(path: &Path) -> Result<String, Error> {
    fs::read_to_string(path)
        .map_err(|e| Error::failed(format!("cannot read {}: {e}", path.display())))
}

/// Writes a file, replacing it.
pub(crate) fn write(path: &Path, contents: &[u8]) -> Result<(), Error> {
    fs::write(path, contents)
        .map_err(|e| Error::failed(format!("cannot write {}: {e}", path.display())))
}

/// Creates a directory and its parents.
pub(crate) fn create_dir(path: &Path) -> Result<(), Error> {
    fs::create_dir_all(path)
        .map_err(|e| Error::failed(format!("cannot create {}: {e}", path.display())))
}
