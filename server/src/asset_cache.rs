//! Static assets compressed once: the SDK (`bridge.js`, `bridge.d.ts` and the page helpers), the
//! host module and the app's files, whether built into the binary (`crate::embedded`) or read
//! from a folder on disk; and large documents that have a version, the catalog index,
//! compressed once per version. Each file is read, hashed and compressed (gzip at level 9,
//! brotli at quality 10 or 11; faster settings above 1 MiB, see `LARGE_BODY`) once per version,
//! not on every request: the cache keeps a file by its path and checks its length and
//! modification time on each request, so that a rebuilt SDK or an edited page is served at once;
//! a file built into the binary comes with its SHA-256, and is kept while that stays the same.
//! A file changed within the last couple of seconds is read and hashed again on every request
//! until its time is settled, because a file system's clock may be too coarse to tell two writes
//! in the same tick apart.
//!
//! Each encoding is its own representation with its own `ETag` (`"<sha256>"`, `"<sha256>-br"`,
//! `"<sha256>-gz"`), so a conditional request is answered `304` for the one the client holds.
//! Answers that may differ by `Accept-Encoding` say so with `Vary`. The server's compression
//! layer (for dynamic answers) leaves these responses alone: they carry [`Precompressed`].

use std::borrow::Cow;
use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime};

use async_compression::Level;
use async_compression::tokio::bufread::{BrotliEncoder, GzipEncoder};
use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::Response;
use tokio::io::AsyncReadExt as _;
use tokio::sync::OnceCell;

use crate::conditional::respond;
use crate::digest::sha256_hex;

/// Bodies smaller than this go as they are: compressing them saves next to nothing.
pub const MIN_COMPRESSED_SIZE: usize = 1024;

/// The gzip level of the stored variants: the best, since it is paid once.
const GZIP_LEVEL: i32 = 9;

/// Brotli's quality for bodies up to [`BROTLI_BEST_UP_TO`] bytes: the best (bridge.js, 56 KB,
/// takes 84 ms in a release build and comes out 5% smaller than at quality 10).
const BROTLI_BEST: i32 = 11;

/// Brotli's quality above [`BROTLI_BEST_UP_TO`]: the host module's 787 KB of wasm takes 0.65 s
/// at quality 10 (226 KB) against 1.3 s at 11 (220 KB), paid by the first request after a build.
const BROTLI_LARGE: i32 = 10;

/// The largest body compressed with [`BROTLI_BEST`].
const BROTLI_BEST_UP_TO: usize = 256 * 1024;

/// Bodies above this many bytes (the catalog index of 100 000 products: 7.4 MB of JSON) are
/// compressed for speed, measured in a release build: brotli at quality 2 (2.45 MB in 91 ms,
/// where the compression layer's quality 4 takes 137 ms for 2.51 MB) and gzip at level 6 (2.51 MB
/// in 88 ms with zlib-rs, whose level 9 gives 2.64 MB in 189 ms and level 1 3.78 MB).
const LARGE_BODY: usize = 1024 * 1024;

/// Brotli's quality and gzip's level above [`LARGE_BODY`].
const BROTLI_FAST: i32 = 2;
const GZIP_FAST: i32 = 6;

/// How long after its last change a file's modification time is trusted to tell versions apart.
const SETTLED_AFTER: Duration = Duration::from_secs(2);

/// Marks a response whose body is already in its final encoding, so that the compression layer
/// leaves it as it is.
#[derive(Clone, Copy, Debug)]
pub struct Precompressed;

/// A content coding the server can send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Coding {
    /// The bytes as they are.
    Identity,
    /// `gzip`.
    Gzip,
    /// `br`.
    Brotli,
}

impl Coding {
    /// The `Content-Encoding` value, `None` for identity.
    fn header(self) -> Option<&'static str> {
        match self {
            Self::Identity => None,
            Self::Gzip => Some("gzip"),
            Self::Brotli => Some("br"),
        }
    }

    /// What the `ETag` adds to the content's hash for this coding.
    fn tag_suffix(self) -> &'static str {
        match self {
            Self::Identity => "",
            Self::Gzip => "-gz",
            Self::Brotli => "-br",
        }
    }
}

/// The coding to answer with, from the request's `Accept-Encoding`: brotli or gzip, whichever the
/// client weighs higher (brotli on a tie), when it accepts either with a q-value above zero (`*`
/// stands for any coding not named); identity when it accepts neither or sends no header.
pub fn preferred(headers: &HeaderMap) -> Coding {
    let mut brotli = None;
    let mut gzip = None;
    let mut any = None;
    for value in headers.get_all(header::ACCEPT_ENCODING) {
        let Ok(value) = value.to_str() else {
            continue;
        };
        for item in value.split(',') {
            let mut parts = item.split(';');
            let name = parts.next().unwrap_or_default().trim().to_ascii_lowercase();
            let weight = parts
                .map(str::trim)
                .find_map(|param| {
                    param
                        .strip_prefix("q=")
                        .or_else(|| param.strip_prefix("Q="))
                })
                .map_or(Some(1.0), |q| q.trim().parse::<f32>().ok())
                .filter(|q| (0.0..=1.0).contains(q))
                .unwrap_or(0.0);
            match name.as_str() {
                "br" => brotli = Some(weight),
                "gzip" | "x-gzip" => gzip = Some(weight),
                "*" => any = Some(weight),
                _ => {}
            }
        }
    }
    let brotli = brotli.or(any).unwrap_or(0.0);
    let gzip = gzip.or(any).unwrap_or(0.0);
    if brotli > 0.0 && brotli >= gzip {
        Coding::Brotli
    } else if gzip > 0.0 {
        Coding::Gzip
    } else {
        Coding::Identity
    }
}

/// One version of a file or document: its bytes, the tag of its version (a file's SHA-256), and
/// the compressed variants made the first time a client asks for each.
pub struct Asset {
    identity: Bytes,
    tag: String,
    cache_control: &'static str,
    compressible: bool,
    gzip: OnceCell<Option<Bytes>>,
    brotli: OnceCell<Option<Bytes>>,
}

impl Asset {
    /// `body` with its hash; `compressible` says whether its type is worth compressing (text,
    /// wasm, JSON, SVG; not PNG, JPEG or WOFF2).
    fn new(body: Bytes, compressible: bool) -> Self {
        let hash = sha256_hex(&body);
        Self::tagged(body, hash, "no-cache", compressible)
    }

    fn tagged(body: Bytes, tag: String, cache_control: &'static str, compressible: bool) -> Self {
        Self {
            compressible: compressible && body.len() >= MIN_COMPRESSED_SIZE,
            identity: body,
            tag,
            cache_control,
            gzip: OnceCell::new(),
            brotli: OnceCell::new(),
        }
    }

    /// The bytes as they are on disk.
    pub fn identity(&self) -> &Bytes {
        &self.identity
    }

    /// The version's tag: a file's SHA-256 as lowercase hex, a document's version.
    pub fn tag(&self) -> &str {
        &self.tag
    }

    /// Whether the answer depends on `Accept-Encoding` (the file is big enough and of a type
    /// worth compressing).
    pub fn varies(&self) -> bool {
        self.compressible
    }

    /// The body in `coding`, compressed on the first call for it; `None` for identity, for a
    /// file not worth compressing, or when the coding does not make it smaller.
    pub async fn encoded(&self, coding: Coding) -> Option<Bytes> {
        if !self.compressible {
            return None;
        }
        let cell = match coding {
            Coding::Identity => return None,
            Coding::Gzip => &self.gzip,
            Coding::Brotli => &self.brotli,
        };
        cell.get_or_init(|| {
            let input = self.identity.clone();
            async move {
                let size = input.len();
                // Hundreds of milliseconds of work for a large file: off the runtime's threads.
                // The encoder reads from memory and never waits, so it is driven to its end here.
                let runtime = tokio::runtime::Handle::current();
                tokio::task::spawn_blocking(move || runtime.block_on(compress(&input, coding)))
                    .await
                    .ok()
                    .and_then(Result::ok)
                    .filter(|output| output.len() < size)
                    .map(Bytes::from)
            }
        })
        .await
        .clone()
    }

    /// The answer to a `GET` or `HEAD` with `headers`: the best coding the client accepts, its
    /// `ETag` (`304` when `If-None-Match` names it), its `Cache-Control` (`no-cache` for a file),
    /// `nosniff`, `media_type`, and `Vary: Accept-Encoding` when the coding could have been
    /// another.
    pub async fn response(&self, headers: &HeaderMap, media_type: &'static str) -> Response {
        let wanted = if self.compressible {
            preferred(headers)
        } else {
            Coding::Identity
        };
        // A client that holds the coding it asks for gets `304` without it being made.
        let wanted_tag = format!("\"{}{}\"", self.tag, wanted.tag_suffix());
        let (coding, body) = if names(headers, &wanted_tag) {
            (wanted, Bytes::new())
        } else {
            match self.encoded(wanted).await {
                Some(body) => (wanted, body),
                None => (Coding::Identity, self.identity.clone()),
            }
        };
        let version = format!("{}{}", self.tag, coding.tag_suffix());
        let mut response = respond(headers, &version, self.cache_control, || {
            let mut response = Response::new(Body::from(body));
            if let Some(name) = coding.header() {
                response
                    .headers_mut()
                    .insert(header::CONTENT_ENCODING, HeaderValue::from_static(name));
            }
            response
        });
        let out = response.headers_mut();
        out.insert(header::CONTENT_TYPE, HeaderValue::from_static(media_type));
        out.insert(
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        );
        if self.compressible {
            out.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
        }
        response.extensions_mut().insert(Precompressed);
        response
    }
}

/// Whether `If-None-Match` names `etag` (quotes included).
fn names(headers: &HeaderMap, etag: &str) -> bool {
    headers
        .get(header::IF_NONE_MATCH)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|sent| sent.split(',').any(|tag| tag.trim() == etag))
}

/// `input` in `coding`, at the levels this module names, with the encoders the compression layer
/// uses.
async fn compress(input: &[u8], coding: Coding) -> io::Result<Vec<u8>> {
    let mut output = Vec::with_capacity(input.len() / 3);
    match coding {
        Coding::Identity => output.extend_from_slice(input),
        Coding::Gzip => {
            let level = if input.len() > LARGE_BODY {
                GZIP_FAST
            } else {
                GZIP_LEVEL
            };
            GzipEncoder::with_quality(input, Level::Precise(level))
                .read_to_end(&mut output)
                .await?;
        }
        Coding::Brotli => {
            let quality = match input.len() {
                size if size <= BROTLI_BEST_UP_TO => BROTLI_BEST,
                size if size <= LARGE_BODY => BROTLI_LARGE,
                _ => BROTLI_FAST,
            };
            BrotliEncoder::with_quality(input, Level::Precise(quality))
                .read_to_end(&mut output)
                .await?;
        }
    }
    Ok(output)
}

/// What identifies a version of a file without reading it: its length and modification time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stamp {
    len: u64,
    modified: Option<SystemTime>,
}

impl Stamp {
    fn of(metadata: &std::fs::Metadata) -> Self {
        Self {
            len: metadata.len(),
            modified: metadata.modified().ok(),
        }
    }

    /// Whether the file last changed long enough ago for its time to tell versions apart.
    fn settled(self) -> bool {
        self.modified
            .and_then(|modified| SystemTime::now().duration_since(modified).ok())
            .is_some_and(|age| age >= SETTLED_AFTER)
    }
}

struct Entry {
    stamp: Stamp,
    settled: bool,
    asset: Arc<Asset>,
}

/// The files served from disk and the ones built into the server, each with its compressed
/// variants, kept by path (or name) for the life of the server; and the latest version of each
/// document, by key.
#[derive(Default)]
pub struct AssetCache {
    files: Mutex<HashMap<PathBuf, Entry>>,
    builtin: Mutex<HashMap<&'static str, Arc<Asset>>>,
    embedded: Mutex<HashMap<String, Arc<Asset>>>,
    documents: Mutex<HashMap<String, Arc<Asset>>>,
}

impl AssetCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// The file at `path` as it is now: from the cache when its length and modification time
    /// are those seen when it was read (and settled), else read, hashed and kept again. The
    /// compressed variants of a kept version are reused when the bytes read are the same.
    pub async fn file(&self, path: &Path, compressible: bool) -> io::Result<Arc<Asset>> {
        let before = Stamp::of(&tokio::fs::metadata(path).await?);
        let kept = {
            let files = self.files.lock().unwrap_or_else(PoisonError::into_inner);
            files
                .get(path)
                .map(|entry| (entry.stamp, entry.settled, Arc::clone(&entry.asset)))
        };
        if let Some((stamp, true, asset)) = &kept {
            if *stamp == before {
                return Ok(Arc::clone(asset));
            }
        }
        let body = Bytes::from(tokio::fs::read(path).await?);
        let after = Stamp::of(&tokio::fs::metadata(path).await?);
        let fresh = Asset::new(body, compressible);
        let asset = match kept {
            Some((_, _, asset)) if asset.tag == fresh.tag => asset,
            _ => Arc::new(fresh),
        };
        // A file that changed while it was read is served as read, and read again next time.
        if after == before {
            let mut files = self.files.lock().unwrap_or_else(PoisonError::into_inner);
            files.insert(
                path.to_path_buf(),
                Entry {
                    stamp: after,
                    settled: after.settled(),
                    asset: Arc::clone(&asset),
                },
            );
        }
        Ok(asset)
    }

    /// The document kept under `key` when its version is `version`, else the one `body` writes
    /// (JSON, say), kept in its place. Its `ETag`s are `"<version>"` and the coding's suffixes;
    /// its answers carry `cache_control`.
    pub fn document<E>(
        &self,
        key: &str,
        version: &str,
        cache_control: &'static str,
        body: impl FnOnce() -> Result<Vec<u8>, E>,
    ) -> Result<Arc<Asset>, E> {
        let kept = {
            let documents = self
                .documents
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            documents.get(key).map(Arc::clone)
        };
        if let Some(asset) = kept.filter(|asset| asset.tag == version) {
            return Ok(asset);
        }
        let asset = Arc::new(Asset::tagged(
            Bytes::from(body()?),
            version.to_owned(),
            cache_control,
            true,
        ));
        let mut documents = self
            .documents
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        documents.insert(key.to_owned(), Arc::clone(&asset));
        Ok(asset)
    }

    /// A file of one of the folders the binary carries (`crate::embedded`), kept under `key`
    /// while its version, `sha256` (its SHA-256 as lowercase hex, the tag of its `ETag`s), stays
    /// the same: a release build's bytes never change, a debug build's (read from disk on each
    /// request) change when the file does.
    pub fn embedded(
        &self,
        key: &str,
        sha256: &str,
        body: Cow<'static, [u8]>,
        compressible: bool,
    ) -> Arc<Asset> {
        let mut embedded = self.embedded.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(asset) = embedded.get(key).filter(|asset| asset.tag == sha256) {
            return Arc::clone(asset);
        }
        let body = match body {
            Cow::Borrowed(bytes) => Bytes::from_static(bytes),
            Cow::Owned(bytes) => Bytes::from(bytes),
        };
        let asset = Arc::new(Asset::tagged(
            body,
            sha256.to_owned(),
            "no-cache",
            compressible,
        ));
        embedded.insert(key.to_owned(), Arc::clone(&asset));
        asset
    }

    /// A file built into the server, `name` its key, made once.
    pub fn builtin(
        &self,
        name: &'static str,
        body: &'static [u8],
        compressible: bool,
    ) -> Arc<Asset> {
        let mut builtin = self.builtin.lock().unwrap_or_else(PoisonError::into_inner);
        Arc::clone(
            builtin
                .entry(name)
                .or_insert_with(|| Arc::new(Asset::new(Bytes::from_static(body), compressible))),
        )
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read as _;

    use super::*;

    fn accepting(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::ACCEPT_ENCODING,
            HeaderValue::from_str(value).unwrap(),
        );
        headers
    }

    #[test]
    fn the_coding_follows_accept_encoding_and_its_weights() {
        assert_eq!(preferred(&HeaderMap::new()), Coding::Identity);
        assert_eq!(preferred(&accepting("gzip, deflate, br")), Coding::Brotli);
        assert_eq!(preferred(&accepting("gzip, deflate")), Coding::Gzip);
        assert_eq!(preferred(&accepting("br;q=0.5, gzip;q=0.8")), Coding::Gzip);
        assert_eq!(preferred(&accepting("br;q=0, gzip")), Coding::Gzip);
        assert_eq!(preferred(&accepting("br;q=0, gzip;q=0")), Coding::Identity);
        assert_eq!(preferred(&accepting("identity")), Coding::Identity);
        assert_eq!(preferred(&accepting("*")), Coding::Brotli);
        assert_eq!(preferred(&accepting("*;q=0.1, br;q=0")), Coding::Gzip);
        assert_eq!(preferred(&accepting("GZIP;Q=1")), Coding::Gzip);
        assert_eq!(preferred(&accepting("br;q=nonsense, gzip")), Coding::Gzip);
        assert_eq!(preferred(&accepting("br;q=2")), Coding::Identity);
        assert_eq!(preferred(&accepting("zstd, deflate")), Coding::Identity);
    }

    #[tokio::test]
    async fn both_codings_give_the_bytes_back() {
        let text = "export function hello() { return 'hello'; }\n".repeat(200);
        let gzip = compress(text.as_bytes(), Coding::Gzip).await.unwrap();
        let mut decoded = String::new();
        flate2::read::GzDecoder::new(&gzip[..])
            .read_to_string(&mut decoded)
            .unwrap();
        assert_eq!(decoded, text);
        let brotli = compress(text.as_bytes(), Coding::Brotli).await.unwrap();
        let mut decoded = String::new();
        brotli::Decompressor::new(&brotli[..], 4096)
            .read_to_string(&mut decoded)
            .unwrap();
        assert_eq!(decoded, text);
        assert!(brotli.len() < text.len() / 10);
    }

    #[tokio::test]
    async fn a_small_or_incompressible_file_goes_as_it_is() {
        let small = Asset::new(Bytes::from_static(b"tiny"), true);
        assert!(!small.varies());
        assert_eq!(small.encoded(Coding::Brotli).await, None);
        let png = Asset::new(Bytes::from(vec![0_u8; 4096]), false);
        assert_eq!(png.encoded(Coding::Gzip).await, None);
    }

    #[tokio::test]
    async fn a_changed_file_is_read_again_and_a_settled_one_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.js");
        let cache = AssetCache::new();
        std::fs::write(&path, "one ".repeat(400)).unwrap();
        let first = cache.file(&path, true).await.unwrap();
        std::fs::write(&path, "two ".repeat(400)).unwrap();
        let second = cache.file(&path, true).await.unwrap();
        assert_ne!(first.tag(), second.tag());
        assert_eq!(&second.identity()[..4], b"two ");
        // The same bytes again, just written: the version (and its variants) is kept.
        let again = cache.file(&path, true).await.unwrap();
        assert!(Arc::ptr_eq(&second, &again));
    }
}
