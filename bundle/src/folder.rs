//! Reading a tool folder from disk with the same rules as a zip.
//!
//! Hidden entries (names starting with `.`, at any depth) are skipped and
//! reported. Symbolic links are refused without being followed, and so is
//! anything that is neither a file nor a folder. The folder given itself may
//! be reached through a link: it is what the caller chose. Walking stops as
//! soon as there are more files than a bundle may hold, and files are read
//! only after their sizes on disk fit the limit, with each read capped so a
//! file growing meanwhile cannot exceed it.

use std::collections::BTreeMap;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::bundle::Bundle;
use crate::error::{Error, Refusal, Rule};
use crate::name::{self, Listed};
use crate::{MAX_DECOMPRESSED_BYTES, MAX_FILES};

/// A bundle read from a folder, and the hidden entries that were left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Folder {
    /// The checked bundle.
    pub bundle: Bundle,
    /// Hidden files and folders that were skipped, by path in the bundle
    /// (folders end in `/`), sorted.
    pub skipped: Vec<String>,
}

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// What a walk of the folder found.
#[derive(Default)]
struct Walk {
    /// Files by bundle path, with their path on disk.
    files: Vec<(String, PathBuf)>,
    folders: Vec<String>,
    skipped: Vec<String>,
    refusals: Vec<Refusal>,
}

/// Reads and checks a tool folder; see [`crate::read_dir`].
pub(crate) fn read_dir(dir: &Path) -> Result<Folder, Error> {
    let root = fs::metadata(dir).map_err(io_error(dir))?;
    if !root.is_dir() {
        return Err(Error::Io {
            path: dir.to_path_buf(),
            source: std::io::Error::new(std::io::ErrorKind::NotADirectory, "not a folder"),
        });
    }
    let walk = walk(dir)?;
    if !walk.refusals.is_empty() {
        return Err(Error::Refused(walk.refusals));
    }
    let mut listed: Vec<Listed<'_>> = walk
        .folders
        .iter()
        .map(|folder| Listed {
            name: folder,
            is_dir: true,
        })
        .collect();
    listed.extend(walk.files.iter().map(|(path, _)| Listed {
        name: path,
        is_dir: false,
    }));
    let refusals = name::check_listing(&listed);
    if !refusals.is_empty() {
        return Err(Error::Refused(refusals));
    }
    let files = read_files(walk.files)?;
    let bundle = Bundle::from_checked_files(files)?;
    let mut skipped = walk.skipped;
    skipped.sort();
    Ok(Folder { bundle, skipped })
}

/// Lists the folder's files and folders, sorting out hidden entries, links
/// and special files; stops once there are too many files.
fn walk(dir: &Path) -> Result<Walk, Error> {
    let mut walk = Walk::default();
    let mut pending = vec![(dir.to_path_buf(), String::new())];
    while let Some((disk_dir, prefix)) = pending.pop() {
        let mut children = Vec::new();
        for child in fs::read_dir(&disk_dir).map_err(io_error(&disk_dir))? {
            children.push(child.map_err(io_error(&disk_dir))?);
        }
        children.sort_by_key(fs::DirEntry::file_name);
        for child in children {
            let disk_path = child.path();
            let file_name = child.file_name();
            let Some(file_name) = file_name.to_str() else {
                walk.refusals.push(Refusal::entry(
                    format!("{prefix}{}", file_name.to_string_lossy()),
                    Rule::Name,
                    "the name is not valid Unicode; rename it",
                ));
                continue;
            };
            let path = format!("{prefix}{file_name}");
            let kind = fs::symlink_metadata(&disk_path)
                .map_err(io_error(&disk_path))?
                .file_type();
            if file_name.starts_with('.') {
                walk.skipped.push(if kind.is_dir() {
                    format!("{path}/")
                } else {
                    path
                });
            } else if kind.is_symlink() {
                walk.refusals.push(Refusal::entry(
                    path,
                    Rule::Symlink,
                    "this is a symbolic link; bundles may hold only files and folders (copy the file in instead)",
                ));
            } else if kind.is_dir() {
                walk.folders.push(path.clone());
                pending.push((disk_path, format!("{path}/")));
            } else if kind.is_file() {
                walk.files.push((path, disk_path));
                if walk.files.len() > MAX_FILES {
                    return Err(Refusal::bundle(
                        Rule::FileCount,
                        format!("the folder holds more than {MAX_FILES} files, the most a bundle may hold"),
                    )
                    .into());
                }
            } else {
                walk.refusals.push(Refusal::entry(
                    path,
                    Rule::NotAFile,
                    "this is neither a file nor a folder; bundles may hold only files and folders",
                ));
            }
        }
    }
    Ok(walk)
}

/// Reads the files once their sizes on disk fit the limit, each read capped
/// by what the limit has left.
fn read_files(paths: Vec<(String, PathBuf)>) -> Result<BTreeMap<String, Vec<u8>>, Error> {
    let mut declared = 0_u64;
    for (_, disk_path) in &paths {
        let len = fs::symlink_metadata(disk_path)
            .map_err(io_error(disk_path))?
            .len();
        declared = declared.saturating_add(len);
    }
    if declared > MAX_DECOMPRESSED_BYTES {
        return Err(too_big(declared).into());
    }
    let mut files = BTreeMap::new();
    let mut total = 0_u64;
    for (path, disk_path) in paths {
        let left = MAX_DECOMPRESSED_BYTES.saturating_sub(total);
        let mut contents = Vec::new();
        fs::File::open(&disk_path)
            .and_then(|file| file.take(left.saturating_add(1)).read_to_end(&mut contents))
            .map_err(io_error(&disk_path))?;
        total = total.saturating_add(u64::try_from(contents.len()).unwrap_or(u64::MAX));
        if total > MAX_DECOMPRESSED_BYTES {
            return Err(too_big(total).into());
        }
        files.insert(path, contents);
    }
    Ok(files)
}

fn too_big(bytes: u64) -> Refusal {
    Refusal::bundle(
        Rule::DecompressedSize,
        format!(
            "the files add up to more than {MAX_DECOMPRESSED_BYTES} bytes (50 MB), the most allowed (at least {bytes})"
        ),
    )
}
