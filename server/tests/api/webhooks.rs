//! Webhook endpoints over REST: create, read, list, change, rotate, delete; the secret shown at
//! creation and rotation only; every problem of a body at its path; private destinations refused
//! unless the server allows them; the `webhooks:write` scope and the Admin and Super User roles;
//! other tenants' endpoints unseen; the delivery log and redelivery.

use reqwest::Method;
use serde_json::{Value, json};
use toolbridge_server::AppState;
use toolbridge_store::{RateLimit, Scope};

use crate::harness::{Server, call, customer_and_product, json, quote_body, send};

/// An address no test server listens on, on loopback: accepted only with the flag.
const LOOPBACK_HOOK: &str = "http://127.0.0.1:9/hook";

/// A public address, written as one so that no DNS is needed.
const PUBLIC_HOOK: &str = "https://93.184.216.34/hook";

/// A server that lets webhooks go to private addresses, as the tests' receivers need.
async fn allowing_private() -> Server {
    Server::start_with(AppState::allowing_private_webhooks).await
}

/// A key with only these scopes.
async fn key_with(server: &Server, scopes: &[Scope]) -> String {
    server
        .key(
            scopes,
            RateLimit {
                requests: 10_000,
                window_secs: 60,
            },
        )
        .await
}

/// The paths of a 422's violations, in order.
fn paths(problem: &Value) -> Vec<String> {
    assert_eq!(problem["code"], "INVALID_PARAMS", "{problem}");
    problem["errors"]
        .as_array()
        .unwrap_or_else(|| panic!("no errors[]: {problem}"))
        .iter()
        .map(|error| error["path"].as_str().unwrap().to_owned())
        .collect()
}

/// The message of the violation at `path`.
fn message_at<'a>(problem: &'a Value, path: &str) -> &'a str {
    problem["errors"]
        .as_array()
        .unwrap()
        .iter()
        .find(|error| error["path"] == path)
        .and_then(|error| error["message"].as_str())
        .unwrap_or_else(|| panic!("no violation at {path}: {problem}"))
}

/// Whether `text` is a time as RFC 3339 in UTC, to the second.
fn is_rfc3339(text: &Value) -> bool {
    let pattern = regex_lite::Regex::new(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$").unwrap();
    text.as_str().is_some_and(|text| pattern.is_match(text))
}

#[tokio::test]
async fn an_endpoint_is_created_read_listed_changed_rotated_and_deleted() {
    let server = allowing_private().await;
    let key = key_with(&server, &[Scope::WebhooksWrite]).await;
    let (status, created) = send(
        &server,
        &key,
        Method::POST,
        "/api/v1/webhook-endpoints",
        Some(&json!({"url": LOOPBACK_HOOK, "eventTypes": ["quote.created", "quote.sent"]})),
    )
    .await;
    assert_eq!(status, 201, "{created}");
    let first_secret = created["secret"].as_str().unwrap().to_owned();
    let secret_form = regex_lite::Regex::new("^whsec_[0-9a-f]{64}$").unwrap();
    assert!(secret_form.is_match(&first_secret), "{first_secret}");
    let endpoint = created["endpoint"].clone();
    let id = endpoint["id"].as_str().unwrap().to_owned();
    assert_eq!(endpoint["url"], LOOPBACK_HOOK);
    assert_eq!(
        endpoint["eventTypes"],
        json!(["quote.created", "quote.sent"])
    );
    assert_eq!(
        endpoint["enabled"], true,
        "enabled unless the body says not"
    );
    assert!(is_rfc3339(&endpoint["createdAt"]), "{endpoint}");
    assert!(is_rfc3339(&endpoint["updatedAt"]), "{endpoint}");
    assert!(endpoint.get("secret").is_none(), "{endpoint}");

    let path = format!("/api/v1/webhook-endpoints/{id}");
    let (status, read) = send(&server, &key, Method::GET, &path, None).await;
    assert_eq!((status, &read), (200, &endpoint));
    let (status, list) = send(
        &server,
        &key,
        Method::GET,
        "/api/v1/webhook-endpoints",
        None,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(
        list,
        json!({"items": [endpoint], "totalCount": 1, "page": 1, "pageSize": 50})
    );

    let (status, changed) = send(
        &server,
        &key,
        Method::PATCH,
        &path,
        Some(&json!({"enabled": false, "eventTypes": ["quote.saved"]})),
    )
    .await;
    assert_eq!(status, 200, "{changed}");
    assert_eq!(changed["enabled"], false);
    assert_eq!(changed["eventTypes"], json!(["quote.saved"]));
    assert_eq!(changed["url"], LOOPBACK_HOOK, "a field not given stays");
    let (_, read) = send(&server, &key, Method::GET, &path, None).await;
    assert_eq!(read, changed);

    let (status, rotated) = send(
        &server,
        &key,
        Method::POST,
        &format!("{path}/rotate-secret"),
        None,
    )
    .await;
    assert_eq!(status, 200, "{rotated}");
    let second_secret = rotated["secret"].as_str().unwrap().to_owned();
    assert!(secret_form.is_match(&second_secret));
    assert_ne!(second_secret, first_secret);
    assert_eq!(rotated["endpoint"]["id"], id.as_str());

    // Neither secret is ever read back.
    for read_path in [path.as_str(), "/api/v1/webhook-endpoints"] {
        let text = server.get(&key, read_path).await.text().await.unwrap();
        assert!(!text.contains(&first_secret), "{read_path}: {text}");
        assert!(!text.contains(&second_secret), "{read_path}: {text}");
        assert!(!text.contains("secret"), "{read_path}: {text}");
    }

    let response = server
        .request(Method::DELETE, &path)
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 204);
    let (status, problem) = send(&server, &key, Method::GET, &path, None).await;
    assert_eq!((status, &problem["code"]), (404, &json!("NOT_FOUND")));
    let (_, list) = send(
        &server,
        &key,
        Method::GET,
        "/api/v1/webhook-endpoints",
        None,
    )
    .await;
    assert_eq!(list["totalCount"], 0);
}

#[tokio::test]
async fn a_bad_body_is_422_naming_every_problem_at_its_path() {
    let server = allowing_private().await;
    let key = key_with(&server, &[Scope::WebhooksWrite]).await;
    let create = |body: Value| {
        let (server, key) = (&server, &key);
        async move {
            send(
                server,
                key,
                Method::POST,
                "/api/v1/webhook-endpoints",
                Some(&body),
            )
            .await
        }
    };

    let (status, problem) = create(json!({
        "url": "ftp://example.com/hook",
        "eventTypes": ["quote.created", "quote.deleted", "quote.created"]
    }))
    .await;
    assert_eq!(status, 422);
    assert_eq!(paths(&problem), ["url", "eventTypes[1]", "eventTypes[2]"]);
    assert!(
        message_at(&problem, "url").contains("http:// or https://"),
        "{problem}"
    );
    assert!(
        message_at(&problem, "eventTypes[1]").contains("quote.deleted"),
        "{problem}"
    );
    assert!(
        message_at(&problem, "eventTypes[2]").contains("twice"),
        "{problem}"
    );

    let (status, problem) = create(json!({"url": LOOPBACK_HOOK, "eventTypes": []})).await;
    assert_eq!(status, 422);
    assert_eq!(paths(&problem), ["eventTypes"]);

    let (status, problem) = create(json!({"url": 5, "eventTypes": ["quote.sent"]})).await;
    assert_eq!(status, 422);
    assert_eq!(paths(&problem), ["url"]);

    let (status, problem) = create(json!({
        "url": LOOPBACK_HOOK, "eventTypes": ["quote.sent"], "secret": "mine"
    }))
    .await;
    assert_eq!(status, 422);
    assert!(
        problem["detail"].as_str().unwrap().contains("secret"),
        "{problem}"
    );

    let (status, problem) = create(json!({"eventTypes": ["quote.sent"]})).await;
    assert_eq!(status, 422);
    assert!(
        problem["detail"].as_str().unwrap().contains("url"),
        "{problem}"
    );

    // Nothing refused was kept.
    let (_, list) = send(
        &server,
        &key,
        Method::GET,
        "/api/v1/webhook-endpoints",
        None,
    )
    .await;
    assert_eq!(list["totalCount"], 0);
}

#[tokio::test]
async fn a_bad_change_is_422_naming_every_problem_and_changes_nothing() {
    let server = allowing_private().await;
    let key = key_with(&server, &[Scope::WebhooksWrite]).await;
    let (_, created) = send(
        &server,
        &key,
        Method::POST,
        "/api/v1/webhook-endpoints",
        Some(&json!({"url": LOOPBACK_HOOK, "eventTypes": ["quote.sent"]})),
    )
    .await;
    let path = format!(
        "/api/v1/webhook-endpoints/{}",
        created["endpoint"]["id"].as_str().unwrap()
    );
    let (status, problem) = send(&server, &key, Method::PATCH, &path, Some(&json!({}))).await;
    assert_eq!(status, 422);
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .contains("names no field to change"),
        "{problem}"
    );
    let (status, problem) = send(
        &server,
        &key,
        Method::PATCH,
        &path,
        Some(&json!({"url": "https://", "eventTypes": ["quote.sent", "quote.sent"]})),
    )
    .await;
    assert_eq!(status, 422);
    assert_eq!(paths(&problem), ["url", "eventTypes[1]"]);
    let (status, problem) = send(
        &server,
        &key,
        Method::PATCH,
        &path,
        Some(&json!({"enabled": "no"})),
    )
    .await;
    assert_eq!(status, 422);
    assert_eq!(paths(&problem), ["enabled"]);
    let (status, problem) = send(
        &server,
        &key,
        Method::PATCH,
        &path,
        Some(&json!({"url": null, "enabled": false})),
    )
    .await;
    assert_eq!(status, 422);
    assert_eq!(paths(&problem), ["url"]);
    let (_, read) = send(&server, &key, Method::GET, &path, None).await;
    assert_eq!(
        read, created["endpoint"],
        "a refused change changes nothing"
    );
}

#[tokio::test]
async fn private_destinations_are_refused_at_url_unless_the_server_allows_them() {
    let private = [
        LOOPBACK_HOOK,
        "http://localhost/",
        "http://[::1]/",
        "http://169.254.169.254/",
    ];
    let strict = Server::start().await;
    let key = key_with(&strict, &[Scope::WebhooksWrite]).await;
    for url in private {
        let (status, problem) = send(
            &strict,
            &key,
            Method::POST,
            "/api/v1/webhook-endpoints",
            Some(&json!({"url": url, "eventTypes": ["quote.created"]})),
        )
        .await;
        assert_eq!(status, 422, "{url}: {problem}");
        assert_eq!(paths(&problem), ["url"], "{url}");
        assert!(
            message_at(&problem, "url").ends_with("webhooks go to public addresses only"),
            "{url}: {problem}"
        );
    }
    let (_, problem) = send(
        &strict,
        &key,
        Method::POST,
        "/api/v1/webhook-endpoints",
        Some(&json!({"url": LOOPBACK_HOOK, "eventTypes": ["quote.created"]})),
    )
    .await;
    assert_eq!(
        message_at(&problem, "url"),
        "127.0.0.1 is a loopback address (127.0.0.1); webhooks go to public addresses only"
    );
    // A change of URL is checked as a new endpoint's is.
    let (status, created) = send(
        &strict,
        &key,
        Method::POST,
        "/api/v1/webhook-endpoints",
        Some(&json!({"url": PUBLIC_HOOK, "eventTypes": ["quote.created"]})),
    )
    .await;
    assert_eq!(status, 201, "{created}");
    let path = format!(
        "/api/v1/webhook-endpoints/{}",
        created["endpoint"]["id"].as_str().unwrap()
    );
    let (status, problem) = send(
        &strict,
        &key,
        Method::PATCH,
        &path,
        Some(&json!({"url": "http://10.0.0.7/hook"})),
    )
    .await;
    assert_eq!(status, 422, "{problem}");
    assert_eq!(paths(&problem), ["url"]);
    let (_, read) = send(&strict, &key, Method::GET, &path, None).await;
    assert_eq!(read["url"], PUBLIC_HOOK);
    // An endpoint that is not there is that, whatever the URL.
    let (status, problem) = send(
        &strict,
        &key,
        Method::PATCH,
        "/api/v1/webhook-endpoints/00000000-0000-4000-8000-000000000000",
        Some(&json!({"url": "http://no-such-host.invalid/"})),
    )
    .await;
    assert_eq!((status, &problem["code"]), (404, &json!("NOT_FOUND")));

    let open = allowing_private().await;
    let key = key_with(&open, &[Scope::WebhooksWrite]).await;
    for url in private {
        let (status, created) = send(
            &open,
            &key,
            Method::POST,
            "/api/v1/webhook-endpoints",
            Some(&json!({"url": url, "eventTypes": ["quote.created"]})),
        )
        .await;
        assert_eq!(status, 201, "{url}: {created}");
        assert_eq!(created["endpoint"]["url"], url);
    }
}

#[tokio::test]
async fn only_the_scope_or_an_admin_or_super_user_manages_webhooks() {
    let server = allowing_private().await;
    let body = json!({"url": LOOPBACK_HOOK, "eventTypes": ["quote.created"]});
    let without = key_with(&server, &[Scope::QuotesRead, Scope::QuotesWrite]).await;
    for (method, body) in [(Method::GET, None), (Method::POST, Some(&body))] {
        let (status, problem) = send(
            &server,
            &without,
            method.clone(),
            "/api/v1/webhook-endpoints",
            body,
        )
        .await;
        assert_eq!(status, 403, "{method}: {problem}");
        assert_eq!(problem["code"], "NOT_ALLOWED");
        assert!(
            problem["detail"]
                .as_str()
                .unwrap()
                .contains("webhooks:write"),
            "{problem}"
        );
    }
    for (email, role) in [
        ("field@harbour.test", "Field"),
        ("office@harbour.test", "Office"),
    ] {
        let cookie = server.sign_in(email).await;
        for (method, body) in [(Method::GET, None), (Method::POST, Some(&body))] {
            let (status, problem) = call(
                &server,
                &cookie,
                method.clone(),
                "/api/v1/webhook-endpoints",
                body,
            )
            .await;
            assert_eq!(status, 403, "{email} {method}: {problem}");
            assert_eq!(
                problem["detail"],
                format!("webhooks are for Admin and Super User; {email} is {role}")
            );
        }
    }
    for email in ["admin@harbour.test", "super@harbour.test"] {
        let cookie = server.sign_in(email).await;
        let (status, created) = call(
            &server,
            &cookie,
            Method::POST,
            "/api/v1/webhook-endpoints",
            Some(&body),
        )
        .await;
        assert_eq!(status, 201, "{email}: {created}");
        let (status, _) = call(
            &server,
            &cookie,
            Method::GET,
            "/api/v1/webhook-endpoints",
            None,
        )
        .await;
        assert_eq!(status, 200, "{email}");
    }
    // What the sessions made belongs to the tenant: a key of it sees both.
    let key = key_with(&server, &[Scope::WebhooksWrite]).await;
    let (_, list) = send(
        &server,
        &key,
        Method::GET,
        "/api/v1/webhook-endpoints",
        None,
    )
    .await;
    assert_eq!(list["totalCount"], 2);
}

#[tokio::test]
async fn another_tenants_endpoint_is_404_on_every_route() {
    let server = allowing_private().await;
    let other = server.sign_in("admin@other.test").await;
    let (status, theirs) = call(
        &server,
        &other,
        Method::POST,
        "/api/v1/webhook-endpoints",
        Some(&json!({"url": LOOPBACK_HOOK, "eventTypes": ["quote.created"]})),
    )
    .await;
    assert_eq!(status, 201, "{theirs}");
    let id = theirs["endpoint"]["id"].as_str().unwrap();
    // A delivery of theirs, for the redeliver route.
    let (status, _) = call(
        &server,
        &other,
        Method::POST,
        "/api/v1/quotes",
        Some(&bridge_quote()),
    )
    .await;
    assert_eq!(status, 201);
    let (_, log) = call(
        &server,
        &other,
        Method::GET,
        &format!("/api/v1/webhook-endpoints/{id}/deliveries"),
        None,
    )
    .await;
    let delivery = log["items"][0]["id"].as_str().unwrap();

    let key = server.full_key().await;
    let base = format!("/api/v1/webhook-endpoints/{id}");
    let change = json!({"enabled": false});
    for (method, path, body) in [
        (Method::GET, base.clone(), None),
        (Method::PATCH, base.clone(), Some(&change)),
        (Method::POST, format!("{base}/rotate-secret"), None),
        (Method::GET, format!("{base}/deliveries"), None),
        (
            Method::POST,
            format!("{base}/deliveries/{delivery}/redeliver"),
            None,
        ),
        (Method::DELETE, base.clone(), None),
    ] {
        let (status, problem) = send(&server, &key, method.clone(), &path, body).await;
        assert_eq!(status, 404, "{method} {path}: {problem}");
        assert_eq!(problem["code"], "NOT_FOUND");
    }
    let (_, list) = send(
        &server,
        &key,
        Method::GET,
        "/api/v1/webhook-endpoints",
        None,
    )
    .await;
    assert_eq!(list["totalCount"], 0);
    // Theirs is as it was.
    let (status, read) = call(&server, &other, Method::GET, &base, None).await;
    assert_eq!((status, &read), (200, &theirs["endpoint"]));
}

/// A new quote's body in the bridge form the app's session sends.
fn bridge_quote() -> Value {
    json!({"customerEmail": "hook.test@example.test", "upsertByEmail": true, "customerName": "Hook Test",
           "lines": [{"description": "Oak", "qty": 1, "unitPrice": 10, "taxRate": 0.15}]})
}

#[tokio::test]
async fn a_quote_created_over_rest_is_in_the_log_and_redelivers_with_its_event_id() {
    let server = allowing_private().await;
    let key = server.full_key().await;
    let (_, created) = send(
        &server,
        &key,
        Method::POST,
        "/api/v1/webhook-endpoints",
        Some(&json!({"url": LOOPBACK_HOOK, "eventTypes": ["quote.created"]})),
    )
    .await;
    let id = created["endpoint"]["id"].as_str().unwrap().to_owned();
    let log_path = format!("/api/v1/webhook-endpoints/{id}/deliveries");
    let (status, log) = send(&server, &key, Method::GET, &log_path, None).await;
    assert_eq!(status, 200, "{log}");
    assert_eq!(log["totalCount"], 0);

    let (customer, product) = customer_and_product(&server, &key).await;
    let (status, quote) = json(
        server
            .post(&key, "/api/v1/quotes", &quote_body(&customer, &product))
            .await,
    )
    .await;
    assert_eq!(status, 201, "{quote}");
    let (status, log) = send(&server, &key, Method::GET, &log_path, None).await;
    assert_eq!(status, 200);
    assert_eq!(log["totalCount"], 1, "{log}");
    let first = log["items"][0].clone();
    assert_eq!(first["endpointId"], id.as_str());
    assert_eq!(first["eventType"], "quote.created");
    assert_eq!(first["status"], "pending", "{first}");
    assert!(
        first["eventId"].as_str().unwrap().starts_with("evt_"),
        "{first}"
    );
    assert!(is_rfc3339(&first["createdAt"]), "{first}");
    assert!(is_rfc3339(&first["nextAttemptAt"]), "{first}");
    assert_eq!(first["deliveredAt"], Value::Null);

    let (status, again) = send(
        &server,
        &key,
        Method::POST,
        &format!("{log_path}/{}/redeliver", first["id"].as_str().unwrap()),
        None,
    )
    .await;
    assert_eq!(status, 201, "{again}");
    assert_eq!(again["eventId"], first["eventId"]);
    assert_ne!(again["id"], first["id"]);
    assert_eq!(again["status"], "pending");
    assert_eq!(again["attempts"], 0);

    // Newest first, paged.
    let (_, page) = send(
        &server,
        &key,
        Method::GET,
        &format!("{log_path}?pageSize=1"),
        None,
    )
    .await;
    assert_eq!(page["totalCount"], 2);
    assert_eq!(page["pageSize"], 1);
    assert_eq!(page["items"].as_array().unwrap().len(), 1);
    assert_eq!(page["items"][0]["id"], again["id"]);
    let (_, second) = send(
        &server,
        &key,
        Method::GET,
        &format!("{log_path}?pageSize=1&page=2"),
        None,
    )
    .await;
    assert_eq!(second["items"][0]["id"], first["id"]);
    let (status, problem) = send(
        &server,
        &key,
        Method::GET,
        &format!("{log_path}?pageSize=0"),
        None,
    )
    .await;
    assert_eq!(status, 422);
    assert_eq!(paths(&problem), ["pageSize"]);

    let (status, problem) = send(
        &server,
        &key,
        Method::POST,
        &format!("{log_path}/00000000-0000-4000-8000-000000000000/redeliver"),
        None,
    )
    .await;
    assert_eq!(status, 404, "{problem}");
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .contains("webhook delivery"),
        "{problem}"
    );
}
