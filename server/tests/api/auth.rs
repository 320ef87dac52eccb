//! 400, 401, 403 and the session rule of DESIGN.md §5.

use reqwest::Method;

use crate::harness::{Server, json};
use toolbridge_store::{RateLimit, Scope};

#[tokio::test]
async fn a_missing_key_is_401_with_www_authenticate() {
    let server = Server::start().await;
    let response = server
        .request(Method::GET, "/api/v1/products")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 401);
    assert_eq!(response.headers()["www-authenticate"], "Bearer");
    let (_, body) = json(response).await;
    assert_eq!(body["code"], "UNAUTHENTICATED");
    assert!(body["detail"].as_str().unwrap().contains("Bearer"));
}

#[tokio::test]
async fn an_unknown_or_revoked_key_is_401() {
    let server = Server::start().await;
    for token in ["tbk_nothing_here", "not-even-a-key"] {
        let response = server.get(token, "/api/v1/products").await;
        assert_eq!(response.status(), 401, "{token}");
        assert_eq!(response.headers()["www-authenticate"], "Bearer");
    }
    let key = server.full_key().await;
    assert_eq!(server.get(&key, "/api/v1/products").await.status(), 200);
    let tenant = server.tenant().await;
    let listed = server.store.list_api_keys(&tenant).await.unwrap();
    let id = &listed.last().unwrap().id;
    assert!(server.store.revoke_api_key(&tenant, id).await.unwrap());
    assert_eq!(server.get(&key, "/api/v1/products").await.status(), 401);
}

#[tokio::test]
async fn a_key_without_the_scope_is_403_naming_it() {
    let server = Server::start().await;
    let key = server
        .key(&[Scope::ProductsRead], RateLimit::default())
        .await;
    assert_eq!(server.get(&key, "/api/v1/products").await.status(), 200);
    let (status, body) = json(server.get(&key, "/api/v1/customers").await).await;
    assert_eq!(status, 403);
    assert_eq!(body["code"], "NOT_ALLOWED");
    assert!(body["detail"].as_str().unwrap().contains("customers:read"));
}

#[tokio::test]
async fn malformed_json_is_400() {
    let server = Server::start().await;
    let key = server.full_key().await;
    let response = server
        .request(Method::POST, "/api/v1/quotes")
        .bearer_auth(&key)
        .header("content-type", "application/json")
        .body("{\"customerId\": ")
        .send()
        .await
        .unwrap();
    let (status, body) = json(response).await;
    assert_eq!(status, 400);
    assert!(
        body["detail"].as_str().unwrap().contains("not valid JSON"),
        "{body}"
    );
}

#[tokio::test]
async fn a_session_cookie_works_from_the_apps_own_origin_only() {
    let server = Server::start().await;
    let cookie = server.sign_in("office@harbour.test").await;
    let same = server
        .as_user(&cookie, Method::GET, "/api/v1/me")
        .send()
        .await
        .unwrap();
    let (status, me) = json(same).await;
    assert_eq!(status, 200);
    assert_eq!(me["userRole"], "office");
    assert_eq!(me["tenantName"], "Harbour Flooring Ltd");

    let cross = server
        .request(Method::GET, "/api/v1/quotes")
        .header("cookie", &cookie)
        .header("sec-fetch-site", "cross-site")
        .send()
        .await
        .unwrap();
    assert_eq!(cross.status(), 403);

    let foreign = server
        .request(Method::GET, "/api/v1/quotes")
        .header("cookie", &cookie)
        .header("origin", "http://evil.test")
        .send()
        .await
        .unwrap();
    assert_eq!(foreign.status(), 403);

    let matching = server
        .request(Method::GET, "/api/v1/quotes")
        .header("cookie", &cookie)
        .header("origin", server.base.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(matching.status(), 200);
}

#[tokio::test]
async fn sign_in_sets_a_strict_http_only_cookie_and_sign_out_ends_it() {
    let server = Server::start().await;
    let response = server
        .request(Method::POST, "/api/session")
        .json(&serde_json::json!({"email": "ADMIN@harbour.test", "password": "demo-password"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let set_cookie = response.headers()["set-cookie"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        set_cookie.contains("HttpOnly") && set_cookie.contains("SameSite=Strict"),
        "{set_cookie}"
    );
    let cookie = set_cookie.split(';').next().unwrap().to_owned();
    let out = server
        .request(Method::DELETE, "/api/session")
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(out.status(), 204);
    let after = server
        .as_user(&cookie, Method::GET, "/api/session")
        .send()
        .await
        .unwrap();
    assert_eq!(after.status(), 401);
}

#[tokio::test]
async fn a_wrong_password_is_401() {
    let server = Server::start().await;
    let response = server
        .request(Method::POST, "/api/session")
        .json(&serde_json::json!({"email": "admin@harbour.test", "password": "nope"}))
        .send()
        .await
        .unwrap();
    let (status, body) = json(response).await;
    assert_eq!(status, 401);
    assert_eq!(body["detail"], "the email or password is wrong");
}

#[tokio::test]
async fn field_users_read_quotes_but_cannot_create_them() {
    let server = Server::start().await;
    let cookie = server.sign_in("field@harbour.test").await;
    let send = |method: Method, path: &str| server.as_user(&cookie, method, path);
    assert_eq!(
        send(Method::GET, "/api/v1/quotes")
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    let created = send(Method::POST, "/api/v1/quotes")
        .json(&serde_json::json!({"customerName": "A", "lines": [{"qty": 1, "unitPrice": 1, "taxRate": 0.15}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 403);
}

#[tokio::test]
async fn an_unknown_endpoint_is_a_problem_404() {
    let server = Server::start().await;
    let key = server.full_key().await;
    let (status, body) = json(server.get(&key, "/api/v2/products").await).await;
    assert_eq!(status, 404);
    assert_eq!(body["code"], "NOT_FOUND");
}

const DEV_HOST_PAGE: &str = "http://localhost:3000";

#[tokio::test]
async fn an_allowed_origin_may_use_the_session_and_read_the_answer() {
    let server = Server::start_allowing(&[DEV_HOST_PAGE]).await;
    let cookie = server.sign_in("office@harbour.test").await;
    let response = server
        .request(Method::GET, "/api/v1/me")
        .header("cookie", &cookie)
        .header("sec-fetch-site", "same-site")
        .header("origin", DEV_HOST_PAGE)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.headers()["access-control-allow-origin"],
        DEV_HOST_PAGE
    );
    assert_eq!(
        response.headers()["access-control-allow-credentials"],
        "true"
    );
    let elsewhere = server
        .request(Method::GET, "/api/v1/me")
        .header("cookie", &cookie)
        .header("sec-fetch-site", "same-site")
        .header("origin", "http://localhost:4000")
        .send()
        .await
        .unwrap();
    assert_eq!(elsewhere.status(), 403);
    assert!(
        !elsewhere
            .headers()
            .contains_key("access-control-allow-origin")
    );
}

#[tokio::test]
async fn preflights_are_answered_for_allowed_origins_only() {
    let server = Server::start_allowing(&[DEV_HOST_PAGE]).await;
    let preflight = |origin: &'static str| {
        server
            .request(Method::OPTIONS, "/api/v1/quotes")
            .header("origin", origin)
            .header("access-control-request-method", "POST")
            .header(
                "access-control-request-headers",
                "content-type, idempotency-key",
            )
            .send()
    };
    let allowed = preflight(DEV_HOST_PAGE).await.unwrap();
    assert_eq!(allowed.status(), 204);
    assert_eq!(
        allowed.headers()["access-control-allow-origin"],
        DEV_HOST_PAGE
    );
    let methods = allowed.headers()["access-control-allow-methods"]
        .to_str()
        .unwrap();
    assert!(methods.contains("POST") && methods.contains("PUT"));
    let headers = allowed.headers()["access-control-allow-headers"]
        .to_str()
        .unwrap();
    // A save of the host page's on another origin sends both (`host.save()`).
    assert!(headers.contains("idempotency-key"), "{headers}");
    assert!(headers.contains("if-match"), "{headers}");
    let other = preflight("http://evil.test").await.unwrap();
    assert!(!other.headers().contains_key("access-control-allow-origin"));
}

#[tokio::test]
async fn without_allowed_origins_a_same_site_page_cannot_use_the_session() {
    let server = Server::start().await;
    let cookie = server.sign_in("office@harbour.test").await;
    let response = server
        .request(Method::GET, "/api/v1/me")
        .header("cookie", &cookie)
        .header("sec-fetch-site", "same-site")
        .header("origin", DEV_HOST_PAGE)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 403);
}

#[tokio::test]
async fn five_wrong_passwords_stop_further_sign_ins_for_that_email() {
    let server = Server::start().await;
    let attempt = |email: &'static str, password: &'static str| {
        server
            .request(Method::POST, "/api/session")
            .json(&serde_json::json!({"email": email, "password": password}))
            .send()
    };
    for _ in 0..5 {
        assert_eq!(
            attempt("office@harbour.test", "guess")
                .await
                .unwrap()
                .status(),
            401
        );
    }
    // Now even the right password waits, with the time to wait.
    let blocked = attempt("OFFICE@harbour.test", "demo-password")
        .await
        .unwrap();
    assert_eq!(blocked.status(), 429);
    let retry_after: u64 = blocked.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=900).contains(&retry_after));
    // Other users are not affected.
    assert_eq!(
        attempt("admin@harbour.test", "demo-password")
            .await
            .unwrap()
            .status(),
        200
    );
}

#[tokio::test]
async fn wrong_passwords_at_once_check_at_most_five_and_right_ones_do_not_count() {
    let server = Server::start().await;
    let attempt = |email: &'static str, password: String| {
        server
            .request(Method::POST, "/api/session")
            .json(&serde_json::json!({"email": email, "password": password}))
            .send()
    };
    // Signing in with the right password, again and again, uses up nothing.
    for _ in 0..7 {
        let answer = attempt("field@harbour.test", "demo-password".to_owned())
            .await
            .unwrap();
        assert_eq!(answer.status(), 200);
    }
    // Twenty wrong ones at once: each takes its place before its password is checked.
    let answers = futures_util::future::join_all(
        (0..20).map(|n| attempt("office@harbour.test", format!("guess-{n}"))),
    )
    .await;
    let mut statuses: Vec<u16> = answers
        .into_iter()
        .map(|answer| answer.unwrap().status().as_u16())
        .collect();
    statuses.sort_unstable();
    assert_eq!(statuses.iter().filter(|&&status| status == 401).count(), 5);
    assert_eq!(statuses.iter().filter(|&&status| status == 429).count(), 15);
}

/// The sign-in page's help lists the demo's sign-ins that still work, without a session.
#[tokio::test]
async fn the_sign_in_help_lists_the_demo_sign_ins_that_still_work() {
    let server = Server::start().await;
    let help = || async {
        let (status, help) = json(
            server
                .request(Method::GET, "/api/sign-in")
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, 200, "{help}");
        help
    };
    let seeded = help().await;
    let sign_ins = seeded["demoSignIns"].as_array().unwrap();
    assert_eq!(sign_ins.len(), 5, "{seeded}");
    assert_eq!(
        sign_ins[1],
        serde_json::json!({
            "email": "admin@harbour.test", "password": "demo-password", "role": "admin",
            "tenantName": "Harbour Flooring Ltd"
        })
    );
    // Each one signs in.
    for sign_in in sign_ins {
        server.sign_in(sign_in["email"].as_str().unwrap()).await;
    }

    // An admin who set a password of their own is no longer offered.
    let admin = server.user_id("admin@harbour.test").await;
    server
        .store
        .set_password(&admin, "a password of the admin's own")
        .await
        .unwrap();
    let offered = help().await;
    let offered: Vec<&str> = offered["demoSignIns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|sign_in| sign_in["email"].as_str().unwrap())
        .collect();
    assert_eq!(
        offered,
        [
            "super@harbour.test",
            "office@harbour.test",
            "field@harbour.test",
            "admin@other.test"
        ]
    );

    for sign_in in sign_ins {
        let email = sign_in["email"].as_str().unwrap();
        let user = server.user_id(email).await;
        server.store.disable_user(&user).await.unwrap();
    }
    assert_eq!(help().await, serde_json::json!({"demoSignIns": []}));
}
