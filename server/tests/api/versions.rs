//! Quote versions over HTTP, on SQLite and on PostgreSQL: every answer with a quote carries its
//! `ETag`, a change sent with `If-Match` is refused with 412 and nothing changed when the quote
//! moved on, and a change repeated with its `Idempotency-Key` answers the first.

use reqwest::header::HeaderMap;
use reqwest::{Method, RequestBuilder, Response};
use serde_json::{Value, json};
use toolbridge_store::{RateLimit, Scope};

use crate::harness::{Backend, Server, customer_and_product, json, quote_body};

/// Runs `async fn name(backend: Backend)` on each backend, as the tests `name::sqlite` and
/// `name::postgres`.
macro_rules! on_both {
    ($name:ident) => {
        mod $name {
            #[tokio::test]
            async fn sqlite() {
                super::$name(crate::harness::Backend::Sqlite).await;
            }

            #[tokio::test]
            async fn postgres() {
                super::$name(crate::harness::Backend::Postgres).await;
            }
        }
    };
}

/// A server of `backend`, a key with every scope, and a new Draft quote's id and `ETag`.
async fn draft(backend: Backend) -> (Server, String, String, String) {
    let server = Server::start_with_backend(backend).await;
    let key = server.full_key().await;
    let (customer, product) = customer_and_product(&server, &key).await;
    let response = server
        .post(&key, "/api/v1/quotes", &quote_body(&customer, &product))
        .await;
    assert_eq!(response.status(), 201);
    let etag = etag(response.headers());
    let (_, quote) = json(response).await;
    let id = quote["id"].as_str().unwrap().to_owned();
    (server, key, id, etag)
}

/// The `ETag` of an answer.
fn etag(headers: &HeaderMap) -> String {
    headers
        .get("etag")
        .unwrap_or_else(|| panic!("no ETag in {headers:?}"))
        .to_str()
        .unwrap()
        .to_owned()
}

/// The status, `ETag` (if any), whether it is a replay, and the JSON body of a response.
async fn answer(response: Response) -> (u16, Option<String>, bool, Value) {
    let tag = response
        .headers()
        .get("etag")
        .map(|value| value.to_str().unwrap().to_owned());
    let replayed = response
        .headers()
        .get("idempotent-replayed")
        .is_some_and(|value| value == "true");
    let (status, body) = json(response).await;
    (status, tag, replayed, body)
}

/// Lines of one line of `qty`.
fn lines(qty: u32) -> Value {
    json!({"lines": [{
        "lineNo": 1, "lineType": "product", "description": "Cable", "qty": qty,
        "unit": "T_LINEAR_METRE",
        "unitPrice": 10, "costPrice": 5, "taxRate": 0.15, "groupId": 0
    }]})
}

/// `PUT /quotes/{id}/lines` with the key, `If-Match` and `Idempotency-Key` when given.
fn put_lines(
    server: &Server,
    key: &str,
    id: &str,
    body: &Value,
    if_match: Option<&str>,
    idempotency_key: Option<&str>,
) -> RequestBuilder {
    conditioned(
        server
            .request(Method::PUT, &format!("/api/v1/quotes/{id}/lines"))
            .bearer_auth(key)
            .json(body),
        if_match,
        idempotency_key,
    )
}

/// `PATCH /quotes/{id}` with the key, `If-Match` and `Idempotency-Key` when given.
fn patch_header(
    server: &Server,
    key: &str,
    id: &str,
    body: &Value,
    if_match: Option<&str>,
    idempotency_key: Option<&str>,
) -> RequestBuilder {
    conditioned(
        server
            .request(Method::PATCH, &format!("/api/v1/quotes/{id}"))
            .bearer_auth(key)
            .json(body),
        if_match,
        idempotency_key,
    )
}

fn conditioned(
    mut request: RequestBuilder,
    if_match: Option<&str>,
    idempotency_key: Option<&str>,
) -> RequestBuilder {
    if let Some(tag) = if_match {
        request = request.header("if-match", tag);
    }
    if let Some(key) = idempotency_key {
        request = request.header("idempotency-key", key);
    }
    request
}

/// `GET /quotes/{id}`: its `ETag` and the quote.
async fn read(server: &Server, key: &str, id: &str) -> (String, Value) {
    let (status, tag, _, quote) =
        answer(server.get(key, &format!("/api/v1/quotes/{id}")).await).await;
    assert_eq!(status, 200, "{quote}");
    (tag.unwrap(), quote)
}

/// The quantity of the first line of a quote.
fn qty(quote: &Value) -> f64 {
    quote["lines"][0]["qty"].as_f64().unwrap()
}

on_both!(every_answer_with_a_quote_carries_its_etag_and_every_change_a_new_one);
async fn every_answer_with_a_quote_carries_its_etag_and_every_change_a_new_one(backend: Backend) {
    let (server, key, id, created) = draft(backend).await;
    assert_eq!(
        created,
        format!("\"{id}/v1\""),
        "a strong tag naming quote and version"
    );
    let (read_tag, _) = read(&server, &key, &id).await;
    assert_eq!(read_tag, created);
    // The session API the host uses answers the same.
    let cookie = server.sign_in("office@harbour.test").await;
    let as_user = server
        .as_user(&cookie, Method::GET, &format!("/api/v1/quotes/{id}"))
        .send()
        .await
        .unwrap();
    assert_eq!(etag(as_user.headers()), created);

    let (status, saved, _, _) = answer(
        put_lines(&server, &key, &id, &lines(2), None, None)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 200);
    let (status, headed, _, _) = answer(
        patch_header(&server, &key, &id, &json!({"expiryDays": 9}), None, None)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 200);
    let sent = server
        .request(Method::POST, &format!("/api/v1/quotes/{id}/send"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(sent.status(), 200);
    let sent = etag(sent.headers());
    let tags = [created, saved.unwrap(), headed.unwrap(), sent.clone()];
    assert_eq!(
        tags,
        [1, 2, 3, 4].map(|version| format!("\"{id}/v{version}\""))
    );
    assert_eq!(read(&server, &key, &id).await.0, sent);
    // A refused change changes no version.
    let locked = put_lines(&server, &key, &id, &lines(3), None, None)
        .send()
        .await
        .unwrap();
    assert_eq!(locked.status(), 409);
    assert_eq!(read(&server, &key, &id).await.0, sent);
}

on_both!(if_match_makes_a_change_only_on_the_version_it_names);
async fn if_match_makes_a_change_only_on_the_version_it_names(backend: Backend) {
    let (server, key, id, v1) = draft(backend).await;

    // The version the client has: saved, and the answer names the next.
    let (status, v2, _, saved) = answer(
        put_lines(&server, &key, &id, &lines(2), Some(&v1), None)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 200, "{saved}");
    let v2 = v2.unwrap();
    assert_ne!(v2, v1);

    // Another device still has version 1: refused, nothing changed, the current ETag given.
    for response in [
        put_lines(&server, &key, &id, &lines(7), Some(&v1), None)
            .send()
            .await
            .unwrap(),
        patch_header(
            &server,
            &key,
            &id,
            &json!({"expiryDays": 9}),
            Some(&v1),
            None,
        )
        .send()
        .await
        .unwrap(),
        // A weak tag never matches (strong comparison), nor does another quote's.
        put_lines(
            &server,
            &key,
            &id,
            &lines(7),
            Some(&format!("W/{v2}")),
            None,
        )
        .send()
        .await
        .unwrap(),
        put_lines(
            &server,
            &key,
            &id,
            &lines(7),
            Some("\"00000000-0000-4000-8000-000000000000/v2\""),
            None,
        )
        .send()
        .await
        .unwrap(),
    ] {
        assert_eq!(
            response.headers()["content-type"],
            "application/problem+json"
        );
        let (status, tag, replayed, problem) = answer(response).await;
        assert_eq!(status, 412, "{problem}");
        assert_eq!(tag.as_deref(), Some(v2.as_str()), "the current ETag");
        assert!(!replayed);
        assert_eq!(problem["code"], "CONFLICT");
        assert_eq!(problem["type"], "/docs/errors#CONFLICT");
        let detail = problem["detail"].as_str().unwrap();
        assert!(
            detail.contains("changed since the version you have"),
            "{detail}"
        );
    }
    let (tag, quote) = read(&server, &key, &id).await;
    assert_eq!(tag, v2, "nothing was changed");
    assert_eq!(quote, saved);
    assert!((qty(&quote) - 2.0).abs() < f64::EPSILON);
}

on_both!(if_match_naming_the_current_version_or_any_and_no_if_match_make_the_change);
async fn if_match_naming_the_current_version_or_any_and_no_if_match_make_the_change(
    backend: Backend,
) {
    let (server, key, id, v1) = draft(backend).await;
    let (_, v2, _, _) = answer(
        put_lines(&server, &key, &id, &lines(2), Some(&v1), None)
            .send()
            .await
            .unwrap(),
    )
    .await;
    let v2 = v2.unwrap();

    // A list that names the current version, `*`, and no If-Match at all (as REST clients
    // have always sent) all change it.
    let (status, v3, _, _) = answer(
        put_lines(
            &server,
            &key,
            &id,
            &lines(3),
            Some(&format!("{v1}, {v2}")),
            None,
        )
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(status, 200);
    let v3 = v3.unwrap();
    let (status, v4, _, headed) = answer(
        patch_header(
            &server,
            &key,
            &id,
            &json!({"expiryDays": 9}),
            Some(&v3),
            None,
        )
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!((status, headed["expiryDays"].as_u64()), (200, Some(9)));
    let (status, _, _, _) = answer(
        put_lines(&server, &key, &id, &lines(4), Some("*"), None)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 200);
    let (status, _, _, unconditional) = answer(
        put_lines(&server, &key, &id, &lines(5), None, None)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 200);
    assert!((qty(&unconditional) - 5.0).abs() < f64::EPSILON);
    assert_ne!(v4.unwrap(), read(&server, &key, &id).await.0);

    // The app's session, as the host saves.
    let cookie = server.sign_in("office@harbour.test").await;
    let (current, _) = read(&server, &key, &id).await;
    let stale = server
        .as_user(&cookie, Method::PUT, &format!("/api/v1/quotes/{id}/lines"))
        .header("if-match", &v1)
        .json(&lines(6))
        .send()
        .await
        .unwrap();
    let (status, tag, _, problem) = answer(stale).await;
    assert_eq!(
        (status, tag.as_deref()),
        (412, Some(current.as_str())),
        "{problem}"
    );
    let fresh = server
        .as_user(&cookie, Method::PUT, &format!("/api/v1/quotes/{id}/lines"))
        .header("if-match", &current)
        .json(&lines(6))
        .send()
        .await
        .unwrap();
    assert_eq!(fresh.status(), 200);
}

on_both!(a_malformed_if_match_is_422_and_a_missing_or_locked_quote_answers_as_before);
async fn a_malformed_if_match_is_422_and_a_missing_or_locked_quote_answers_as_before(
    backend: Backend,
) {
    let (server, key, id, v1) = draft(backend).await;
    // An If-Match that is no list of entity tags is refused at its name.
    for bad in ["v2", "\"a\",", "*, \"a\""] {
        let (status, _, _, problem) = answer(
            put_lines(&server, &key, &id, &lines(8), Some(bad), None)
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, 422, "{bad}: {problem}");
        assert_eq!(problem["errors"][0]["path"], "If-Match", "{problem}");
    }
    // A missing quote is 404 and a locked one 409, whatever the If-Match.
    let (status, _, _, _) = answer(
        put_lines(
            &server,
            &key,
            "00000000-0000-4000-8000-000000000000",
            &lines(1),
            Some(&v1),
            None,
        )
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(status, 404);
    let sent = server
        .request(Method::POST, &format!("/api/v1/quotes/{id}/send"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(sent.status(), 200);
    let (status, _, _, problem) = answer(
        put_lines(&server, &key, &id, &lines(1), Some(&v1), None)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!((status, &problem["code"]), (409, &json!("QUOTE_LOCKED")));
}

on_both!(a_change_repeated_with_its_idempotency_key_answers_the_first);
async fn a_change_repeated_with_its_idempotency_key_answers_the_first(backend: Backend) {
    let (server, key, id, v1) = draft(backend).await;
    let save = |body: Value, if_match: Option<String>, idempotency_key: &'static str| {
        put_lines(
            &server,
            &key,
            &id,
            &body,
            if_match.as_deref(),
            Some(idempotency_key),
        )
        .send()
    };

    let (status, v2, replayed, first) =
        answer(save(lines(2), Some(v1.clone()), "save-1").await.unwrap()).await;
    assert_eq!((status, replayed), (200, false), "{first}");
    let v2 = v2.unwrap();
    // The answer was lost; the retry, still made against version 1, gets the first answer
    // rather than a 412 against its own save, and saves nothing again.
    let (status, tag, replayed, again) =
        answer(save(lines(2), Some(v1.clone()), "save-1").await.unwrap()).await;
    assert_eq!((status, replayed), (200, true), "{again}");
    assert_eq!(tag.as_deref(), Some(v2.as_str()));
    assert_eq!(again, first);
    assert_eq!(read(&server, &key, &id).await.0, v2, "saved once");

    // The same key with another body: 422 at the key, nothing changed.
    let (status, _, _, problem) =
        answer(save(lines(3), Some(v2.clone()), "save-1").await.unwrap()).await;
    assert_eq!(status, 422, "{problem}");
    assert_eq!(problem["errors"][0]["path"], "Idempotency-Key");
    assert_eq!(
        problem["errors"][0]["message"],
        "was already used with a different request body"
    );
    // …and for another change, or to create a quote.
    let (status, _, _, _) = answer(
        patch_header(
            &server,
            &key,
            &id,
            &json!({"expiryDays": 9}),
            None,
            Some("save-1"),
        )
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(status, 422);
    let (customer, product) = customer_and_product(&server, &key).await;
    let create = server
        .request(Method::POST, "/api/v1/quotes")
        .bearer_auth(&key)
        .header("idempotency-key", "save-1")
        .json(&quote_body(&customer, &product))
        .send()
        .await
        .unwrap();
    assert_eq!(create.status(), 422);
    assert_eq!(read(&server, &key, &id).await.0, v2);
}

on_both!(idempotency_keys_are_per_key_and_a_repeat_after_a_later_change_is_refused);
async fn idempotency_keys_are_per_key_and_a_repeat_after_a_later_change_is_refused(
    backend: Backend,
) {
    let (server, key, id, v1) = draft(backend).await;
    let save = |body: Value, if_match: Option<String>, idempotency_key: &'static str| {
        put_lines(
            &server,
            &key,
            &id,
            &body,
            if_match.as_deref(),
            Some(idempotency_key),
        )
        .send()
    };
    let (status, v2, _, _) =
        answer(save(lines(2), Some(v1.clone()), "save-1").await.unwrap()).await;
    assert_eq!(status, 200);
    let v2 = v2.unwrap();

    // Keys are per API key: another key's same key is another request, made against a
    // version the quote no longer has.
    let other = server
        .key(
            &[Scope::QuotesRead, Scope::QuotesWrite],
            RateLimit {
                requests: 1000,
                window_secs: 60,
            },
        )
        .await;
    let (status, tag, _, _) = answer(
        put_lines(&server, &other, &id, &lines(2), Some(&v1), Some("save-1"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!((status, tag.as_deref()), (412, Some(v2.as_str())));

    // The header's changes work the same.
    let head = |if_match: &str| {
        patch_header(
            &server,
            &key,
            &id,
            &json!({"expiryDays": 12}),
            Some(if_match),
            Some("head-1"),
        )
        .send()
    };
    let (status, v3, replayed, headed) = answer(head(&v2).await.unwrap()).await;
    assert_eq!((status, replayed), (200, false), "{headed}");
    let (status, tag, replayed, again) = answer(head(&v2).await.unwrap()).await;
    assert_eq!((status, replayed, tag), (200, true, v3.clone()));
    assert_eq!(again, headed);

    // Once the quote changed again, a retry made against the version before its own change
    // is refused as that version's change would be.
    let (status, _, _, _) = answer(
        put_lines(&server, &key, &id, &lines(5), None, None)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 200);
    let (current, _) = read(&server, &key, &id).await;
    let (status, tag, _, problem) =
        answer(save(lines(2), Some(v1.clone()), "save-1").await.unwrap()).await;
    assert_eq!(
        (status, tag.as_deref()),
        (412, Some(current.as_str())),
        "{problem}"
    );
    assert_eq!(read(&server, &key, &id).await.0, current);
}

#[tokio::test]
async fn a_page_on_an_allowed_origin_may_read_the_etag() {
    const PAGE: &str = "http://localhost:3000";
    let server = Server::start_allowing(&[PAGE]).await;
    let key = server.full_key().await;
    let (_, quotes) = json(server.get(&key, "/api/v1/quotes?pageSize=1").await).await;
    let id = quotes["items"][0]["id"].as_str().unwrap();
    let response = server
        .request(Method::GET, &format!("/api/v1/quotes/{id}"))
        .bearer_auth(&key)
        .header("origin", PAGE)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let exposed = response.headers()["access-control-expose-headers"]
        .to_str()
        .unwrap();
    for name in ["etag", "idempotent-replayed"] {
        assert!(
            exposed.split(", ").any(|header| header == name),
            "{exposed}"
        );
    }
}

on_both!(send_with_if_match_sends_only_the_version_the_sender_saw);
async fn send_with_if_match_sends_only_the_version_the_sender_saw(backend: Backend) {
    let (server, key, id, v1) = draft(backend).await;
    let send = |if_match: &str| {
        server
            .request(Method::POST, &format!("/api/v1/quotes/{id}/send"))
            .bearer_auth(&key)
            .header("if-match", if_match)
            .send()
    };
    // Someone saves while the sender still looks at version 1.
    let (status, v2, _, _) = answer(
        put_lines(&server, &key, &id, &lines(4), None, None)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 200);
    let v2 = v2.unwrap();

    let (status, tag, _, problem) = answer(send(&v1).await.unwrap()).await;
    assert_eq!(status, 412, "{problem}");
    assert_eq!(problem["code"], "CONFLICT");
    assert_eq!(tag.as_deref(), Some(v2.as_str()), "the current ETag");
    let (_, quote) = read(&server, &key, &id).await;
    assert_eq!(quote["status"], "Draft", "nothing sent");

    let (status, _, _, problem) = answer(send("not a tag").await.unwrap()).await;
    assert_eq!(status, 422, "{problem}");
    assert_eq!(problem["errors"][0]["path"], "If-Match", "{problem}");

    let (status, v3, _, quote) = answer(send(&v2).await.unwrap()).await;
    assert_eq!(status, 200, "{quote}");
    assert_eq!(quote["status"], "Sent");
    assert_ne!(v3.unwrap(), v2);
}
