//! The host's context over HTTP: the organisation's time zone, currency, units and theme
//! (`/api/settings/organisation`, Admin and Super User), a user's own time zone and theme
//! (`/api/session/preferences`, anyone signed in), the values in effect in `/api/session` and
//! `/api/v1/me`, and the `context` events that tell open pages.

use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};

use crate::harness::{Server, call, json};
use crate::live::next_event;

/// The paths of a 422's `errors[]`, sorted.
fn paths(body: &Value) -> Vec<String> {
    let mut paths: Vec<String> = body["errors"]
        .as_array()
        .unwrap_or(&Vec::new())
        .iter()
        .map(|error| error["path"].as_str().unwrap_or_default().to_owned())
        .collect();
    paths.sort();
    paths
}

#[tokio::test]
async fn the_session_and_me_carry_the_context_in_effect_beside_the_2_1_0_fields() {
    let server = Server::start().await;
    let office = server.sign_in("office@harbour.test").await;
    for path in ["/api/session", "/api/v1/me"] {
        let (status, context) = call(&server, &office, Method::GET, path, None).await;
        assert_eq!(status, 200, "{path}: {context}");
        assert_eq!(context["cultureCode"], "en-NZ", "{path}");
        assert_eq!(context["userRole"], "office", "{path}");
        assert_eq!(context["timeZone"], "Pacific/Auckland", "{path}");
        assert_eq!(context["currency"], "NZD", "{path}");
        assert_eq!(context["locale"], "en-NZ", "{path}");
        assert_eq!(context["units"], "metric", "{path}");
        assert_eq!(context["theme"], "light", "{path}");
    }
    let other = server.sign_in("admin@other.test").await;
    let (_, context) = call(&server, &other, Method::GET, "/api/session", None).await;
    assert_eq!(context["timeZone"], "Australia/Perth");
    assert_eq!(context["currency"], "AUD");
}

#[tokio::test]
async fn an_admin_changes_the_organisations_values_and_its_open_pages_hear_of_it() {
    let server = Server::start().await;
    let admin = server.sign_in("admin@harbour.test").await;
    let office = server.sign_in("office@harbour.test").await;
    let other = server.sign_in("admin@other.test").await;
    let mut stream = server
        .as_user(&office, Method::GET, "/api/events")
        .send()
        .await
        .unwrap();
    let mut theirs = server
        .as_user(&other, Method::GET, "/api/events")
        .send()
        .await
        .unwrap();
    let (status, read) = call(
        &server,
        &admin,
        Method::GET,
        "/api/settings/organisation",
        None,
    )
    .await;
    assert_eq!(status, 200, "{read}");
    assert_eq!(
        read,
        json!({"timeZone": "Pacific/Auckland", "currency": "NZD", "units": "metric", "theme": "light"})
    );
    let (status, changed) = call(
        &server,
        &admin,
        Method::PATCH,
        "/api/settings/organisation",
        Some(&json!({"timeZone": "Pacific/Chatham", "theme": "dark"})),
    )
    .await;
    assert_eq!(status, 200, "{changed}");
    assert_eq!(
        changed,
        json!({"timeZone": "Pacific/Chatham", "currency": "NZD", "units": "metric", "theme": "dark"})
    );
    let event = next_event(&mut stream, "context").await;
    assert_eq!(
        event,
        json!({"scope": "organisation", "fields": ["timeZone", "theme"]})
    );
    let (_, context) = call(&server, &office, Method::GET, "/api/session", None).await;
    assert_eq!(context["timeZone"], "Pacific/Chatham");
    assert_eq!(context["theme"], "dark");
    // Another tenant's pages hear nothing of it, and keep their own values.
    let nothing = tokio::time::timeout(Duration::from_millis(300), theirs.chunk()).await;
    if let Ok(Ok(Some(chunk))) = nothing {
        assert!(
            !String::from_utf8_lossy(&chunk).contains("event: context"),
            "another tenant heard it"
        );
    }
    let (_, context) = call(&server, &other, Method::GET, "/api/session", None).await;
    assert_eq!(context["timeZone"], "Australia/Perth");
}

#[tokio::test]
async fn bad_values_get_422_with_each_fields_path_and_nothing_changes() {
    let server = Server::start().await;
    let admin = server.sign_in("super@harbour.test").await;
    let (status, body) = call(
        &server,
        &admin,
        Method::PATCH,
        "/api/settings/organisation",
        Some(&json!({"timeZone": "Pacific/Atlantis", "currency": "nzd", "units": "furlongs", "theme": "blue", "locale": "en-GB"})),
    )
    .await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(
        paths(&body),
        ["currency", "locale", "theme", "timeZone", "units"]
    );
    let (status, body) = call(
        &server,
        &admin,
        Method::PATCH,
        "/api/settings/organisation",
        Some(&json!({"timeZone": null})),
    )
    .await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(paths(&body), ["timeZone"]);
    let (_, read) = call(
        &server,
        &admin,
        Method::GET,
        "/api/settings/organisation",
        None,
    )
    .await;
    assert_eq!(read["timeZone"], "Pacific/Auckland");
    let (status, body) = call(
        &server,
        &admin,
        Method::PATCH,
        "/api/session/preferences",
        Some(&json!({"timeZone": "Not/A_Zone", "currency": "EUR"})),
    )
    .await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(paths(&body), ["currency", "timeZone"]);
}

#[tokio::test]
async fn only_admin_and_super_user_read_or_change_the_organisations_values() {
    let server = Server::start().await;
    for email in ["office@harbour.test", "field@harbour.test"] {
        let cookie = server.sign_in(email).await;
        for (method, body) in [
            (Method::GET, None),
            (Method::PATCH, Some(json!({"theme": "dark"}))),
        ] {
            let (status, answer) = call(
                &server,
                &cookie,
                method.clone(),
                "/api/settings/organisation",
                body.as_ref(),
            )
            .await;
            assert_eq!(status, 403, "{email} {method}: {answer}");
        }
    }
    let (status, _) = json(
        server
            .request(Method::GET, "/api/settings/organisation")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 401);
    let key = server.full_key().await;
    let (status, _) = json(server.get(&key, "/api/settings/organisation").await).await;
    assert_eq!(status, 403);
    let (status, _) = json(server.get(&key, "/api/session/preferences").await).await;
    assert_eq!(status, 403);
}

#[tokio::test]
async fn any_user_sets_their_own_zone_and_theme_and_only_their_pages_hear_of_it() {
    let server = Server::start().await;
    let field = server.sign_in("field@harbour.test").await;
    let office = server.sign_in("office@harbour.test").await;
    let mut mine = server
        .as_user(&field, Method::GET, "/api/events")
        .send()
        .await
        .unwrap();
    let mut theirs = server
        .as_user(&office, Method::GET, "/api/events")
        .send()
        .await
        .unwrap();
    let (status, own) = call(
        &server,
        &field,
        Method::GET,
        "/api/session/preferences",
        None,
    )
    .await;
    assert_eq!(status, 200, "{own}");
    assert_eq!(own, json!({"timeZone": null, "theme": null}));
    let (status, own) = call(
        &server,
        &field,
        Method::PATCH,
        "/api/session/preferences",
        Some(&json!({"timeZone": "Europe/London", "theme": "dark"})),
    )
    .await;
    assert_eq!(status, 200, "{own}");
    assert_eq!(own, json!({"timeZone": "Europe/London", "theme": "dark"}));
    let event = next_event(&mut mine, "context").await;
    assert_eq!(
        event,
        json!({"scope": "user", "fields": ["timeZone", "theme"]})
    );
    let (_, context) = call(&server, &field, Method::GET, "/api/v1/me", None).await;
    assert_eq!(context["timeZone"], "Europe/London");
    assert_eq!(context["theme"], "dark");
    assert_eq!(context["currency"], "NZD");
    // Another user of the tenant: not their event, and not their values.
    let nothing = tokio::time::timeout(Duration::from_millis(300), theirs.chunk()).await;
    if let Ok(Ok(Some(chunk))) = nothing {
        assert!(
            !String::from_utf8_lossy(&chunk).contains("event: context"),
            "another user heard it"
        );
    }
    let (_, context) = call(&server, &office, Method::GET, "/api/session", None).await;
    assert_eq!(context["timeZone"], "Pacific/Auckland");
    // null follows the organisation's again.
    let (status, own) = call(
        &server,
        &field,
        Method::PATCH,
        "/api/session/preferences",
        Some(&json!({"timeZone": null})),
    )
    .await;
    assert_eq!(status, 200, "{own}");
    assert_eq!(own, json!({"timeZone": null, "theme": "dark"}));
    let (_, context) = call(&server, &field, Method::GET, "/api/session", None).await;
    assert_eq!(context["timeZone"], "Pacific/Auckland");
}
