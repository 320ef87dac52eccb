//! A static file server for a bundler's output folder, as any web server would serve a built page:
//! `index.html` at `/`, each file with its content type (`application/wasm` for the module, so that
//! the browser compiles it while it streams).

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use tokio::sync::oneshot;

/// A folder served on a free port of 127.0.0.1; stops when dropped.
pub(crate) struct Site {
    /// `http://127.0.0.1:PORT`.
    pub(crate) origin: String,
    stop: Option<oneshot::Sender<()>>,
}

impl Site {
    /// Serves `root` until dropped.
    pub(crate) async fn serve(root: &Path) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let app = Router::new()
            .fallback(answer)
            .with_state(Arc::new(root.to_path_buf()));
        let (stop, stopped) = oneshot::channel::<()>();
        tokio::spawn(async move {
            axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = stopped.await;
                })
                .await
                .unwrap();
        });
        Self {
            origin: format!("http://127.0.0.1:{port}"),
            stop: Some(stop),
        }
    }
}

impl Drop for Site {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// The file at `path` under `root` (`index.html` for a folder), if there is one and the path
/// stays inside `root`.
fn file(root: &Path, path: &str) -> Option<PathBuf> {
    let mut file = root.to_path_buf();
    for part in Path::new(path.trim_start_matches('/')).components() {
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

async fn answer(State(root): State<Arc<PathBuf>>, uri: Uri) -> Response {
    let Some(file) = file(&root, uri.path()) else {
        let message = format!("nothing is served at {}", uri.path());
        return (StatusCode::NOT_FOUND, message).into_response();
    };
    let Ok(bytes) = std::fs::read(&file) else {
        return (StatusCode::INTERNAL_SERVER_ERROR, "unreadable").into_response();
    };
    let kind = match file.extension().and_then(|extension| extension.to_str()) {
        Some("html") => "text/html; charset=utf-8",
        Some("js") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("wasm") => "application/wasm",
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
