//! The files the `toolbridge` binary carries, so that one file is all a deployment needs: the
//! reference web app (`www/`), the built SDK (`sdk/dist`), the built host module (`host/dist`),
//! the built documentation (`docs/book`) and the example tools a demo database starts with
//! (`example-tools/`).
//!
//! A release build embeds each folder as it was when the server was compiled (`build.rs` makes
//! cargo compile it again when a file in one of them changes, appears or goes). A debug build
//! reads the same folders from disk on each request instead, at their absolute place in the
//! checkout it was built from: a debug server serves the working tree as it is now, from any
//! working directory. `sdk/dist`, `host/dist` and `docs/book` are build outputs (`cargo xtask build`); a
//! server compiled before they existed carries none of their files and says so when asked for
//! one ([`Source`]).
//!
//! Where the served files come from is a [`Source`]: the binary's copy, or a folder on disk that
//! overrides it (`--www-dir`, `--sdk-dir`, `--host-dir`, `--docs-dir`), read on each request so that an edit or
//! a rebuild shows at once.

use std::borrow::Cow;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use rust_embed::{Embed, EmbeddedFile};

use crate::asset_cache::{Asset, AssetCache};
use hex::encode as hex;

#[derive(Embed)]
#[folder = "../www"]
#[allow_missing = true]
struct Www;

#[derive(Embed)]
#[folder = "../sdk/dist"]
#[allow_missing = true]
struct SdkDist;

#[derive(Embed)]
#[folder = "../host/dist"]
#[allow_missing = true]
struct HostDist;

#[derive(Embed)]
#[folder = "../docs/book"]
#[allow_missing = true]
struct DocsBook;

#[derive(Embed)]
#[folder = "../example-tools"]
#[allow_missing = true]
struct ExampleTools;

/// One of the folders built into the binary.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Embedded {
    /// The reference web app, `www/`.
    App,
    /// The built SDK, `sdk/dist` (bridge.js and its types).
    Sdk,
    /// The built host module, `host/dist`.
    Host,
    /// The built documentation, `docs/book`: the book and the API reference.
    Docs,
    /// The example tools, `example-tools/`: one folder per tool.
    ExampleTools,
}

impl Embedded {
    /// The folder it is built from, relative to the repository's root (`sdk/dist`).
    pub fn folder(self) -> &'static str {
        match self {
            Self::App => "www",
            Self::Sdk => "sdk/dist",
            Self::Host => "host/dist",
            Self::Docs => "docs/book",
            Self::ExampleTools => "example-tools",
        }
    }

    /// Whether the folder is a build output (`sdk/dist`, `host/dist`, `docs/book`) rather than
    /// source.
    fn is_built(self) -> bool {
        matches!(self, Self::Sdk | Self::Host | Self::Docs)
    }

    /// The `toolbridge serve` flag that serves a folder on disk in its place.
    pub fn flag(self) -> &'static str {
        match self {
            Self::App => "--www-dir",
            Self::Sdk => "--sdk-dir",
            Self::Host => "--host-dir",
            Self::Docs => "--docs-dir",
            Self::ExampleTools => "--example-tools",
        }
    }

    /// The file at `path` (relative, `/` between folders) with its SHA-256; `None` when the
    /// binary carries no such file.
    pub fn get(self, path: &str) -> Option<EmbeddedFile> {
        match self {
            Self::App => Www::get(path),
            Self::Sdk => SdkDist::get(path),
            Self::Host => HostDist::get(path),
            Self::Docs => DocsBook::get(path),
            Self::ExampleTools => ExampleTools::get(path),
        }
    }

    /// The paths of every file it holds (relative, `/` between folders), sorted.
    pub fn paths(self) -> Vec<String> {
        let paths: Vec<Cow<'static, str>> = match self {
            Self::App => Www::iter().collect(),
            Self::Sdk => SdkDist::iter().collect(),
            Self::Host => HostDist::iter().collect(),
            Self::Docs => DocsBook::iter().collect(),
            Self::ExampleTools => ExampleTools::iter().collect(),
        };
        let mut paths: Vec<String> = paths.into_iter().map(Cow::into_owned).collect();
        paths.sort();
        paths
    }
}

/// Where a set of served files comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// The copy built into the binary (in a debug build, the folder it is built from).
    Embedded(Embedded),
    /// A folder on disk given in its place, read on each request.
    Disk(PathBuf),
}

/// Why a file could not be served from a [`Source`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Missing {
    /// The folder on disk has no readable file by that name.
    NotOnDisk(PathBuf),
    /// The binary carries no such file.
    NotEmbedded {
        /// The folder the binary's copy is built from.
        set: Embedded,
        /// The file's path in it.
        name: String,
    },
}

impl fmt::Display for Missing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotOnDisk(path) => write!(f, "{} cannot be read", path.display()),
            Self::NotEmbedded { set, name } => {
                let folder = set.folder();
                write!(f, "{folder}/{name} is not built into this server")?;
                if set.is_built() {
                    write!(
                        f,
                        ": `cargo xtask build` builds {folder}, then the server that carries it \
                         (or start the server with {} naming a built {folder})",
                        set.flag()
                    )?;
                }
                Ok(())
            }
        }
    }
}

impl Source {
    /// `name` (relative, `/` between folders, already checked not to leave the folder) as an
    /// asset of `cache`: read from disk when it changed, or taken from the binary, and compressed
    /// once per version either way (when `compressible`).
    pub async fn asset(
        &self,
        cache: &AssetCache,
        name: &str,
        compressible: bool,
    ) -> Result<Arc<Asset>, Missing> {
        match self {
            Self::Disk(dir) => {
                let path = dir.join(name);
                cache
                    .file(&path, compressible)
                    .await
                    .map_err(|_| Missing::NotOnDisk(path))
            }
            Self::Embedded(set) => {
                let missing = || Missing::NotEmbedded {
                    set: *set,
                    name: name.to_owned(),
                };
                let file = set.get(name).ok_or_else(missing)?;
                let key = format!("{}/{name}", set.folder());
                let tag = hex(file.metadata.sha256_hash());
                Ok(cache.embedded(&key, &tag, file.data, compressible))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::path::Path;

    /// The repository's root, where the embedded folders come from.
    fn root() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
    }

    #[test]
    fn the_app_and_the_example_tools_are_embedded_as_they_are_in_the_checkout() {
        let page = Embedded::App.get("index.html").unwrap();
        let on_disk = std::fs::read(root().join("www/index.html")).unwrap();
        assert_eq!(page.data.as_ref(), on_disk.as_slice());
        assert_eq!(
            hex(page.metadata.sha256_hash()),
            crate::digest::sha256_hex(&on_disk)
        );
        let tools = Embedded::ExampleTools.paths();
        assert!(tools.iter().any(|path| path == "quick-quote/manifest.json"));
        assert!(Embedded::App.get("no-such-page.html").is_none());
    }

    #[tokio::test]
    async fn a_file_the_binary_lacks_is_missing_with_what_to_do() {
        let cache = AssetCache::new();
        let missing = Source::Embedded(Embedded::Sdk)
            .asset(&cache, "nothing-like-this.js", true)
            .await
            .err()
            .unwrap();
        assert_eq!(
            missing.to_string(),
            "sdk/dist/nothing-like-this.js is not built into this server: `cargo xtask build` \
             builds sdk/dist, then the server that carries it (or start the server with \
             --sdk-dir naming a built sdk/dist)"
        );
        let missing = Source::Embedded(Embedded::App)
            .asset(&cache, "nothing.css", true)
            .await
            .err()
            .unwrap();
        assert_eq!(
            missing.to_string(),
            "www/nothing.css is not built into this server"
        );
    }

    #[tokio::test]
    async fn an_embedded_file_is_one_asset_per_version() {
        let cache = AssetCache::new();
        let source = Source::Embedded(Embedded::App);
        let first = source.asset(&cache, "index.html", true).await.unwrap();
        let again = source.asset(&cache, "index.html", true).await.unwrap();
        assert!(Arc::ptr_eq(&first, &again));
        let on_disk = std::fs::read(root().join("www/index.html")).unwrap();
        assert_eq!(first.tag(), crate::digest::sha256_hex(&on_disk));
    }
}
