//! Tells cargo to compile the server again when a file it carries changes (`src/embedded.rs`).
//!
//! A release build embeds `www/`, `sdk/dist`, `host/dist`, `docs/book` and `example-tools/` with rust-embed,
//! whose `include_bytes!` makes cargo notice a change to a file it embedded, but not a file added
//! to one of those folders. Naming each folder here makes cargo scan it (every file and folder's
//! modification time) before each build. A folder not there yet (`sdk/dist` before
//! `cargo xtask build`) is watched through its parent, since cargo counts a missing path as
//! changed on every build. A debug build reads the folders from disk as it runs, so it is not
//! compiled again for them.

use std::path::Path;

/// The folders the binary carries, relative to the repository's root.
const FOLDERS: [&str; 5] = ["www", "sdk/dist", "host/dist", "docs/book", "example-tools"];

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    if std::env::var_os("CARGO_CFG_DEBUG_ASSERTIONS").is_some() {
        return;
    }
    let root = Path::new("..");
    for folder in FOLDERS {
        let path = root.join(folder);
        // The parent of a missing folder, but never the root itself (target/ changes all the time).
        let watched = if path.exists() {
            Some(path)
        } else {
            path.parent()
                .filter(|parent| *parent != root && parent.exists())
                .map(Path::to_path_buf)
        };
        if let Some(watched) = watched {
            println!("cargo::rerun-if-changed={}", watched.display());
        }
    }
}
