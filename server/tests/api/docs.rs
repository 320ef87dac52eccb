//! The documentation under `/docs/`, served from a folder given with `--docs-dir` (here a small
//! book of our own; the real one is checked in browsers by the e2e suites): pages by their
//! address with or without `.html`, folders by their `index.html`, a page that only the policy's
//! own scripts and fetches may run in, and the book's own "not found" page for anything else.

use reqwest::Method;
use reqwest::header::{CONTENT_SECURITY_POLICY, CONTENT_TYPE, LOCATION};

use crate::harness::Server;

/// A server whose documentation is a folder with a start page, an error code page, a "not found"
/// page and an API reference folder.
async fn server_with_a_book() -> (Server, tempfile::TempDir) {
    let book = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let path = book.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("index.html", "<title>start</title>");
    write("errors.html", "<h2 id=\"NOT_FOUND\">NOT_FOUND</h2>");
    write("404.html", "<title>no such page</title>");
    write("api/index.html", "<title>reference</title>");
    write("api/api.js", "Redoc.init();");
    let dir = book.path().to_owned();
    let server = Server::start_with(move |state| state.serving_docs_from(dir)).await;
    (server, book)
}

/// `GET path` without following redirects: the status, a header and the body.
async fn get(server: &Server, path: &str, header: &str) -> (u16, String, String) {
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let response = client
        .request(Method::GET, format!("{}{path}", server.base))
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let value = response
        .headers()
        .get(header)
        .map(|value| value.to_str().unwrap().to_owned())
        .unwrap_or_default();
    (status, value, response.text().await.unwrap())
}

#[tokio::test]
async fn pages_answer_by_their_address_and_folders_by_their_index() {
    let (server, _book) = server_with_a_book().await;
    let start = get(&server, "/docs/", CONTENT_TYPE.as_str()).await;
    assert_eq!(
        start,
        (
            200,
            "text/html; charset=utf-8".to_owned(),
            "<title>start</title>".to_owned()
        )
    );
    // What a problem body's `type` names, fragment aside.
    let (status, _, page) = get(&server, "/docs/errors", "").await;
    assert_eq!((status, page.contains("id=\"NOT_FOUND\"")), (200, true));
    assert_eq!(get(&server, "/docs/errors.html", "").await.0, 200);
    // Sent on to the address with the slash, where the page's relative links work.
    assert_eq!(get(&server, "/docs", LOCATION.as_str()).await.1, "/docs/");
    let api = get(&server, "/docs/api", LOCATION.as_str()).await;
    assert_eq!((api.0, api.1.as_str()), (308, "/docs/api/"));
    assert_eq!(
        get(&server, "/docs/api/", "").await.2,
        "<title>reference</title>"
    );
    let script = get(&server, "/docs/api/api.js", CONTENT_TYPE.as_str()).await;
    assert_eq!(script.1, "text/javascript; charset=utf-8");
}

#[tokio::test]
async fn pages_may_load_and_fetch_only_from_the_server() {
    let (server, _book) = server_with_a_book().await;
    let (_, policy, _) = get(&server, "/docs/errors", CONTENT_SECURITY_POLICY.as_str()).await;
    for directive in [
        "default-src 'self'",
        "connect-src 'self'",
        "frame-ancestors 'none'",
    ] {
        assert!(policy.contains(directive), "{policy}");
    }
    assert!(!policy.contains("http"), "{policy}");
}

#[tokio::test]
async fn an_unknown_address_gets_the_books_not_found_page() {
    let (server, _book) = server_with_a_book().await;
    for path in [
        "/docs/nothing-here",
        "/docs/nothing.html",
        "/docs/api/..%2f..%2fCargo.toml",
        "/docs/.hidden",
        "/docsx",
    ] {
        let (status, _, page) = get(&server, path, "").await;
        if path == "/docsx" {
            // Not under /docs/ at all: the app's own page, as for any other address.
            assert_eq!(status, 200, "{path}");
        } else {
            assert_eq!(
                (status, page.as_str()),
                (404, "<title>no such page</title>"),
                "{path}"
            );
        }
    }
}

#[tokio::test]
async fn a_server_without_its_documentation_says_how_to_build_it() {
    let missing = tempfile::tempdir().unwrap();
    let dir = missing.path().join("book");
    let server = Server::start_with(move |state| state.serving_docs_from(dir)).await;
    let (status, kind, body) = get(&server, "/docs/", CONTENT_TYPE.as_str()).await;
    assert_eq!((status, kind.as_str()), (404, "application/problem+json"));
    assert!(body.contains("cargo xtask build"), "{body}");
}
