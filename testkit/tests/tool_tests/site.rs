//! A static file server for the test pages: folders mounted at URL prefixes, and optionally one
//! file served with one change made to it (a mutation of a tool's logic).

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use tokio::sync::oneshot;

/// One change to a served file: `find` (which must occur exactly once) becomes `replace`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Mutation {
    /// The file's URL path.
    pub(crate) path: &'static str,
    pub(crate) find: &'static str,
    pub(crate) replace: &'static str,
}

/// What the server serves.
#[derive(Debug, Default)]
pub(crate) struct Site {
    /// URL prefix (ending in `/`, or a whole file path) → folder or file.
    mounts: Vec<(String, PathBuf)>,
    mutation: Option<Mutation>,
}

impl Site {
    /// Serves `place` (a folder or a file) at `prefix`.
    pub(crate) fn mount(mut self, prefix: &str, place: impl Into<PathBuf>) -> Self {
        self.mounts.push((prefix.to_owned(), place.into()));
        self
    }

    /// Serves one file with `mutation` made to it. Panics unless the file has its `find` text
    /// exactly once, so that a mutation that no longer applies is noticed.
    pub(crate) fn mutate(mut self, mutation: Mutation) -> Self {
        let file = self
            .file(mutation.path)
            .unwrap_or_else(|| panic!("no file is served at {}", mutation.path));
        let text = std::fs::read_to_string(&file).unwrap();
        assert_eq!(
            text.matches(mutation.find).count(),
            1,
            "{} must hold the mutation's text exactly once: {:?}",
            file.display(),
            mutation.find
        );
        self.mutation = Some(mutation);
        self
    }

    /// The file served at `path`, if any.
    fn file(&self, path: &str) -> Option<PathBuf> {
        let (prefix, place) = self
            .mounts
            .iter()
            .filter(|(prefix, _)| {
                path == prefix || (prefix.ends_with('/') && path.starts_with(prefix.as_str()))
            })
            .max_by_key(|(prefix, _)| prefix.len())?;
        let rest = &path[prefix.len()..];
        let mut file = place.clone();
        for part in Path::new(rest).components() {
            match part {
                Component::Normal(name) => file.push(name),
                Component::CurDir => {}
                _ => return None,
            }
        }
        if file.is_dir() {
            file.push("index.html");
        }
        file.is_file().then_some(file)
    }

    /// Starts serving on a free port of 127.0.0.1.
    pub(crate) async fn serve(self) -> Served {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let app = Router::new().fallback(answer).with_state(Arc::new(self));
        let (stop, stopped) = oneshot::channel::<()>();
        tokio::spawn(async move {
            axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = stopped.await;
                })
                .await
                .unwrap();
        });
        Served {
            origin: format!("http://127.0.0.1:{port}"),
            stop: Some(stop),
        }
    }
}

/// A running server; stops when dropped.
pub(crate) struct Served {
    /// `http://127.0.0.1:PORT`.
    pub(crate) origin: String,
    stop: Option<oneshot::Sender<()>>,
}

impl Drop for Served {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

async fn answer(State(site): State<Arc<Site>>, uri: Uri) -> Response {
    let path = percent_encoding::percent_decode_str(uri.path()).decode_utf8_lossy();
    let Some(file) = site.file(&path) else {
        return (
            StatusCode::NOT_FOUND,
            format!("nothing is served at {path}"),
        )
            .into_response();
    };
    let Ok(mut bytes) = std::fs::read(&file) else {
        return (StatusCode::INTERNAL_SERVER_ERROR, "unreadable").into_response();
    };
    if let Some(mutation) = site.mutation.filter(|mutation| mutation.path == path) {
        let text = String::from_utf8_lossy(&bytes).replacen(mutation.find, mutation.replace, 1);
        bytes = text.into_bytes();
    }
    let kind = match file.extension().and_then(|e| e.to_str()) {
        Some("html") => "text/html; charset=utf-8",
        Some("js" | "mjs") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("json") => "application/json",
        Some("wasm") => "application/wasm",
        Some("svg") => "image/svg+xml",
        _ => "application/octet-stream",
    };
    (
        [
            (header::CONTENT_TYPE, kind),
            (header::CACHE_CONTROL, "no-store"),
        ],
        bytes,
    )
        .into_response()
}
