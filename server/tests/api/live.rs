//! Live updates (`GET /api/events`) and the app's own files.

use std::time::Duration;

use reqwest::Method;
use serde_json::Value;

use crate::harness::{Server, customer_and_product, json, quote_body};

/// Reads Server-Sent Events from `response` until one named `name` arrives;
/// its data as JSON.
pub(crate) async fn next_event(response: &mut reqwest::Response, name: &str) -> Value {
    next_with_id(response, name).await.0
}

/// Reads Server-Sent Events from `response` until one named `name` arrives;
/// its data as JSON (`null` when it is not JSON), and its id.
async fn next_with_id(response: &mut reqwest::Response, name: &str) -> (Value, Option<i64>) {
    let mut buffer = String::new();
    loop {
        let chunk = tokio::time::timeout(Duration::from_secs(5), response.chunk())
            .await
            .unwrap_or_else(|_| panic!("no `{name}` event within 5 s; got {buffer:?}"))
            .unwrap()
            .unwrap_or_else(|| panic!("the stream ended; got {buffer:?}"));
        buffer.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(end) = buffer.find("\n\n") {
            let block: String = buffer.drain(..end + 2).collect();
            let event = block.lines().find_map(|line| line.strip_prefix("event: "));
            let data = block.lines().find_map(|line| line.strip_prefix("data:"));
            let id = block
                .lines()
                .find_map(|line| line.strip_prefix("id: "))
                .map(|id| id.parse().unwrap());
            if let (Some(event), Some(data)) = (event, data) {
                if event == name {
                    return (serde_json::from_str(data.trim()).unwrap_or(Value::Null), id);
                }
            }
        }
    }
}

#[tokio::test]
async fn an_open_page_hears_of_quotes_made_in_its_tenant_only() {
    let server = Server::start().await;
    let office = server.sign_in("office@harbour.test").await;
    let mut stream = server
        .as_user(&office, Method::GET, "/api/events")
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), 200);
    assert!(
        stream.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream")
    );

    // Another tenant's quote first: this page must not hear of it.
    let other = server.sign_in("admin@other.test").await;
    let (status, _) = json(
        server
            .as_user(&other, Method::POST, "/api/v1/quotes")
            .json(&serde_json::json!({"customerName": "Elsewhere Ltd", "lines": [{"description": "x", "qty": 1, "unitPrice": 1, "taxRate": 0.15}]}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 201);

    let key = server.full_key().await;
    let (customer, product) = customer_and_product(&server, &key).await;
    let (status, created) = json(
        server
            .post(&key, "/api/v1/quotes", &quote_body(&customer, &product))
            .await,
    )
    .await;
    assert_eq!(status, 201, "{created}");
    let event = next_event(&mut stream, "quote").await;
    assert_eq!(event["kind"], "created");
    assert_eq!(event["quote"]["id"], created["id"], "{event}");
    assert_eq!(event["quote"]["ref"], created["ref"]);
    assert_eq!(
        event["by"],
        serde_json::json!({"kind": "key", "name": "test"})
    );

    let id = created["id"].as_str().unwrap();
    let (status, _) = json(
        server
            .post(&key, &format!("/api/v1/quotes/{id}/send"), &Value::Null)
            .await,
    )
    .await;
    assert_eq!(status, 200);
    let event = next_event(&mut stream, "quote").await;
    assert_eq!(event["kind"], "sent");
    assert_eq!(event["quote"]["status"], "Sent");
}

/// Reads what is left of a stream until it ends, which it must within 5 s; the text read.
async fn rest_until_the_end(response: &mut reqwest::Response) -> String {
    let mut rest = String::new();
    loop {
        let chunk = tokio::time::timeout(Duration::from_secs(5), response.chunk())
            .await
            .unwrap_or_else(|_| panic!("the stream is still open after 5 s; got {rest:?}"))
            .unwrap();
        match chunk {
            Some(chunk) => rest.push_str(&String::from_utf8_lossy(&chunk)),
            None => return rest,
        }
    }
}

/// A page's stream lasts as long as its session: once the user signs out, is disabled or has
/// their password reset, the next event of the tenant ends the stream instead of reaching it, and
/// the page's reconnect is refused.
#[tokio::test]
async fn a_page_s_stream_ends_with_its_session_and_hears_nothing_after() {
    let server = Server::start().await;
    let key = server.full_key().await;
    let (customer, product) = customer_and_product(&server, &key).await;
    let body = quote_body(&customer, &product);
    let create = || async {
        let (status, created) = json(server.post(&key, "/api/v1/quotes", &body).await).await;
        assert_eq!(status, 201, "{created}");
        created
    };
    let ends: [(&str, &str); 3] = [
        ("office@harbour.test", "signs out"),
        ("field@harbour.test", "is disabled"),
        ("admin@harbour.test", "has a new password"),
    ];
    for (email, end) in ends {
        let cookie = server.sign_in(email).await;
        let open = || server.as_user(&cookie, Method::GET, "/api/events").send();
        let mut stream = open().await.unwrap();
        assert_eq!(stream.status(), 200);
        // Live first, so that what follows is the session's doing.
        let heard = create().await;
        assert_eq!(
            next_event(&mut stream, "quote").await["quote"]["id"],
            heard["id"]
        );

        let user = server.user_id(email).await;
        match end {
            "signs out" => {
                let response = server
                    .as_user(&cookie, Method::DELETE, "/api/session")
                    .send()
                    .await
                    .unwrap();
                assert_eq!(response.status(), 204);
            }
            "is disabled" => assert_eq!(server.store.disable_user(&user).await.unwrap(), 1),
            _ => {
                let ended = server.store.set_password(&user, "another-passw0rd!").await;
                assert_eq!(ended.unwrap(), 1);
            }
        }
        let unheard = create().await;
        let rest = rest_until_the_end(&mut stream).await;
        let id = unheard["id"].as_str().unwrap();
        assert!(
            !rest.contains(id),
            "{email} {end}, yet heard of {id}: {rest:?}"
        );
        assert_eq!(open().await.unwrap().status(), 401, "{email} {end}");
    }
}

/// An idle stream checks its session too (every 30 s; here every 200 ms), so that a disabled
/// user's page does not keep its connection while nothing happens in the tenant.
#[tokio::test]
async fn an_idle_stream_ends_once_its_session_has_ended() {
    let server =
        Server::start_with(|state| state.checking_live_sessions_every(Duration::from_millis(200)))
            .await;
    let cookie = server.sign_in("office@harbour.test").await;
    let mut stream = server
        .as_user(&cookie, Method::GET, "/api/events")
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), 200);
    // Several checks pass while the session holds: the stream stays open.
    let open = tokio::time::timeout(Duration::from_secs(1), stream.chunk()).await;
    assert!(open.is_err(), "the stream sent or ended early: {open:?}");

    let user = server.user_id("office@harbour.test").await;
    assert_eq!(server.store.disable_user(&user).await.unwrap(), 1);
    let rest = rest_until_the_end(&mut stream).await;
    assert!(!rest.contains("event:"), "{rest:?}");
}

#[tokio::test]
async fn a_page_that_reconnects_hears_what_it_missed_or_resync() {
    let server = Server::start().await;
    let office = server.sign_in("office@harbour.test").await;
    let key = server.full_key().await;
    let (customer, product) = customer_and_product(&server, &key).await;
    let open = |last_event_id: Option<i64>| {
        let mut request = server.as_user(&office, Method::GET, "/api/events");
        if let Some(id) = last_event_id {
            request = request.header("last-event-id", id.to_string());
        }
        request.send()
    };
    let body = quote_body(&customer, &product);
    let create = || server.post(&key, "/api/v1/quotes", &body);

    let mut stream = open(None).await.unwrap();
    let (_, first) = json(create().await).await;
    let (event, heard) = next_with_id(&mut stream, "quote").await;
    assert_eq!(event["quote"]["id"], first["id"]);
    let heard = heard.expect("every event has an id");
    drop(stream);

    // While the page is away: a new quote, and the first one sent.
    let (_, second) = json(create().await).await;
    let id = first["id"].as_str().unwrap();
    server
        .post(&key, &format!("/api/v1/quotes/{id}/send"), &Value::Null)
        .await;
    let mut stream = open(Some(heard)).await.unwrap();
    let (event, created_id) = next_with_id(&mut stream, "quote").await;
    assert_eq!(
        (event["kind"].as_str(), &event["quote"]["id"]),
        (Some("created"), &second["id"])
    );
    let (event, sent_id) = next_with_id(&mut stream, "quote").await;
    assert_eq!(
        (event["kind"].as_str(), &event["quote"]["id"]),
        (Some("sent"), &first["id"])
    );
    assert!(heard < created_id.unwrap() && created_id < sent_id);
    drop(stream);

    // An id the server never gave: reload, and pick up from its last.
    let mut stream = open(Some(sent_id.unwrap() + 1000)).await.unwrap();
    let (_, resync_id) = next_with_id(&mut stream, "resync").await;
    assert_eq!(resync_id, sent_id);
}

#[tokio::test]
async fn the_stream_is_for_signed_in_pages() {
    let server = Server::start().await;
    let (status, _) = json(
        server
            .request(Method::GET, "/api/events")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 401);
    let key = server.full_key().await;
    let (status, _) = json(server.get(&key, "/api/events").await).await;
    assert_eq!(status, 403);
}

#[tokio::test]
async fn the_app_and_the_host_module_are_served_with_their_policy() {
    let www = tempfile::tempdir().unwrap();
    std::fs::write(
        www.path().join("index.html"),
        "<!doctype html><title>App</title>",
    )
    .unwrap();
    std::fs::write(www.path().join("app.js"), "export {};").unwrap();
    std::fs::write(www.path().join(".secret.html"), "no").unwrap();
    let host = tempfile::tempdir().unwrap();
    std::fs::write(
        host.path().join("toolbridge_host_bg.wasm"),
        b"\0asm\x01\0\0\0",
    )
    .unwrap();
    let (www_dir, host_dir) = (www.path().to_owned(), host.path().to_owned());
    let server = Server::start_with(move |state| state.serving_app_from(www_dir, host_dir)).await;

    let page = server.request(Method::GET, "/").send().await.unwrap();
    assert_eq!(page.status(), 200);
    assert_eq!(page.headers()["content-type"], "text/html; charset=utf-8");
    let policy = page.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        policy.contains("script-src 'self' 'wasm-unsafe-eval'"),
        "{policy}"
    );
    assert!(
        policy.contains(&format!(
            "frame-src http://*.tools.localhost:{}",
            server.port
        )),
        "{policy}"
    );
    assert!(policy.contains("frame-ancestors 'none'"), "{policy}");

    // The app's own addresses (`quotes.create` answers `/quotes/<id>`) are its page.
    let deep = server
        .request(Method::GET, "/quotes/3f2a")
        .send()
        .await
        .unwrap();
    assert_eq!(deep.status(), 200);
    assert_eq!(
        deep.text().await.unwrap(),
        "<!doctype html><title>App</title>"
    );

    let script = server.request(Method::GET, "/app.js").send().await.unwrap();
    assert_eq!(
        script.headers()["content-type"],
        "text/javascript; charset=utf-8"
    );
    let wasm = server
        .request(Method::GET, "/host/toolbridge_host_bg.wasm")
        .send()
        .await
        .unwrap();
    assert_eq!(wasm.status(), 200);
    assert_eq!(wasm.headers()["content-type"], "application/wasm");

    for path in [
        "/.secret.html",
        "/missing.html",
        "/host/other.js",
        "/host/toolbridge_host.js",
    ] {
        let (status, body) = json(server.request(Method::GET, path).send().await.unwrap()).await;
        assert_eq!(status, 404, "{path}: {body}");
    }
    let (status, body) = json(
        server
            .request(Method::GET, "/api/nothing")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 404);
    assert_eq!(body["code"], "NOT_FOUND");
}
