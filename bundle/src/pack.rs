//! Writing a bundle as a .zip that is the same for the same files: entries
//! in path order, deflate, the zip format's earliest timestamp (1980-01-01
//! 00:00), mode 0644, no extra fields, no comment.

use std::io::{Cursor, Write};

use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, DateTime, ZipWriter};

use crate::MAX_COMPRESSED_BYTES;
use crate::bundle::Bundle;
use crate::error::{Error, Refusal, Rule};

/// Packs `bundle`; see [`crate::pack`].
pub(crate) fn pack(bundle: &Bundle) -> Result<Vec<u8>, Error> {
    let options = SimpleFileOptions::default()
        .compression_method(CompressionMethod::Deflated)
        .last_modified_time(DateTime::default())
        .unix_permissions(0o644)
        .large_file(false);
    let mut writer = ZipWriter::new(Cursor::new(Vec::new()));
    for (path, contents) in bundle.files() {
        writer.start_file(path, options).map_err(write_error)?;
        writer
            .write_all(contents)
            .map_err(|error| write_error(error.into()))?;
    }
    let bytes = writer.finish().map_err(write_error)?.into_inner();
    let len = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
    if len > MAX_COMPRESSED_BYTES {
        return Err(Refusal::bundle(
            Rule::CompressedSize,
            format!(
                "the packed bundle is {len} bytes; at most {MAX_COMPRESSED_BYTES} bytes (10 MB) are allowed (the files compress too little)"
            ),
        )
        .into());
    }
    Ok(bytes)
}

fn write_error(error: zip::result::ZipError) -> Error {
    Error::Io {
        path: "bundle.zip".into(),
        source: std::io::Error::other(error),
    }
}
