//! Every read endpoint's success path, paging edges, and tenant isolation.

use reqwest::Method;
use serde_json::Value;

use crate::harness::{Server, json};

#[tokio::test]
async fn every_list_answers_the_paged_envelope() {
    let server = Server::start().await;
    let key = server.full_key().await;
    for path in [
        "/api/v1/customers",
        "/api/v1/products",
        "/api/v1/quotes",
        "/api/v1/jobs",
        "/api/v1/task-templates",
        "/api/v1/cost-items",
    ] {
        let (status, body) = json(server.get(&key, path).await).await;
        assert_eq!(status, 200, "{path}: {body}");
        assert_eq!(body["page"], 1, "{path}");
        assert_eq!(body["pageSize"], 50, "{path}");
        assert!(body["totalCount"].as_u64().unwrap() > 0, "{path}");
        assert!(!body["items"].as_array().unwrap().is_empty(), "{path}");
    }
}

#[tokio::test]
async fn products_list_active_skus_with_page_size_500() {
    let server = Server::start().await;
    let key = server.full_key().await;
    let (status, body) = json(server.get(&key, "/api/v1/products?pageSize=500").await).await;
    assert_eq!(status, 200);
    let items = body["items"].as_array().unwrap();
    assert_eq!(items.len() as u64, body["totalCount"].as_u64().unwrap());
    assert!(items.len() < 120, "inactive products are not listed");
    let oak = items.iter().find(|p| p["sku"] == "OAK-01").unwrap();
    for field in ["id", "sku", "name", "price", "unit"] {
        assert!(!oak[field].is_null(), "{field}");
    }
}

#[tokio::test]
async fn a_page_past_the_end_is_empty_with_the_right_total() {
    let server = Server::start().await;
    let key = server.full_key().await;
    let (_, first) = json(server.get(&key, "/api/v1/customers").await).await;
    let (status, past) = json(
        server
            .get(&key, "/api/v1/customers?page=999&pageSize=10")
            .await,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(past["items"], Value::Array(vec![]));
    assert_eq!(past["totalCount"], first["totalCount"]);
    assert_eq!(past["page"], 999);
}

#[tokio::test]
async fn page_size_0_and_501_are_422_with_the_path() {
    let server = Server::start().await;
    let key = server.full_key().await;
    for size in ["0", "501", "ten"] {
        let response = server
            .get(&key, &format!("/api/v1/products?pageSize={size}"))
            .await;
        assert_eq!(
            response.headers()["content-type"],
            "application/problem+json"
        );
        let (status, body) = json(response).await;
        assert_eq!(status, 422, "{size}");
        assert_eq!(body["code"], "INVALID_PARAMS");
        assert_eq!(body["errors"][0]["path"], "pageSize");
        assert!(body["requestId"].as_str().unwrap().starts_with("req_"));
    }
}

#[tokio::test]
async fn codes_return_every_active_match_and_ignore_paging() {
    let server = Server::start().await;
    let key = server.full_key().await;
    let (status, body) = json(
        server
            .get(
                &key,
                "/api/v1/task-templates?codes=INSTALL,UNDERLAY,NOPE,LEGACY_PREP&pageSize=1",
            )
            .await,
    )
    .await;
    assert_eq!(status, 200);
    let mut codes: Vec<&str> = body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["code"].as_str().unwrap())
        .collect();
    codes.sort_unstable();
    assert_eq!(codes, ["INSTALL", "UNDERLAY"]);
    let (_, costs) = json(server.get(&key, "/api/v1/cost-items?codes=TRAVEL").await).await;
    assert_eq!(costs["items"][0]["type"], "T_TRAVEL");
}

#[tokio::test]
async fn codes_lists_refuse_a_page_or_page_size_out_of_range_as_every_list_does() {
    let server = Server::start().await;
    let key = server.full_key().await;
    for (query, paths) in [
        ("page=true", vec!["page"]),
        ("page=-265&pageSize=201", vec!["page"]),
        ("page=0&pageSize=501", vec!["page", "pageSize"]),
        ("pageSize=2.5", vec!["pageSize"]),
    ] {
        for list in ["/api/v1/task-templates", "/api/v1/cost-items"] {
            let path = format!("{list}?codes=INSTALL,TRAVEL&{query}");
            let (status, body) = json(server.get(&key, &path).await).await;
            assert_eq!(status, 422, "{path}: {body}");
            assert_eq!(body["code"], "INVALID_PARAMS", "{path}");
            let named: Vec<&str> = body["errors"]
                .as_array()
                .unwrap()
                .iter()
                .map(|error| error["path"].as_str().unwrap())
                .collect();
            assert_eq!(named, paths, "{path}");
        }
    }
}

#[tokio::test]
async fn catalog_index_has_task_sequences_and_an_etag() {
    let server = Server::start().await;
    let key = server.full_key().await;
    let response = server.get(&key, "/api/v1/catalog/index").await;
    let etag = response.headers()["etag"].to_str().unwrap().to_owned();
    let (status, body) = json(response).await;
    assert_eq!(status, 200);
    let oak = body["products"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["sku"] == "OAK-01")
        .unwrap();
    assert_eq!(oak["taskSequence"].as_array().unwrap().len(), 2);
    assert!(!body["taskTemplates"].as_array().unwrap().is_empty());
    let again = server
        .request(Method::GET, "/api/v1/catalog/index")
        .bearer_auth(&key)
        .header("if-none-match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 304);
}

#[tokio::test]
async fn another_tenants_data_is_never_listed() {
    let server = Server::start().await;
    let key = server.full_key().await;
    let (_, customers) = json(server.get(&key, "/api/v1/customers?pageSize=500").await).await;
    assert!(
        customers["items"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| !c["email"].as_str().unwrap_or("").ends_with("other.test"))
    );
    let other = server.sign_in("admin@other.test").await;
    let (_, theirs) = json(
        server
            .as_user(&other, Method::GET, "/api/v1/quotes?pageSize=500")
            .send()
            .await
            .unwrap(),
    )
    .await;
    let (_, ours) = json(server.get(&key, "/api/v1/quotes?pageSize=500").await).await;
    let ids = |page: &Value| {
        page["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|q| q["id"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    assert!(ids(&theirs).iter().all(|id| !ids(&ours).contains(id)));
}

#[tokio::test]
async fn the_sdk_is_served_to_any_page_with_an_etag() {
    let sdk = tempfile::tempdir().unwrap();
    std::fs::write(
        sdk.path().join("bridge.js"),
        "/*! bridge.js */ window.bridge = {};",
    )
    .unwrap();
    let dir = sdk.path().to_owned();
    let server = Server::start_with(move |state| state.serving_sdk_from(dir)).await;
    let response = server
        .request(Method::GET, "/sdk/bridge.js")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.headers()["content-type"],
        "text/javascript; charset=utf-8"
    );
    assert_eq!(response.headers()["access-control-allow-origin"], "*");
    let etag = response.headers()["etag"].to_str().unwrap().to_owned();
    assert_eq!(
        response.text().await.unwrap(),
        "/*! bridge.js */ window.bridge = {};"
    );
    let again = server
        .request(Method::GET, "/sdk/bridge.js")
        .header("if-none-match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 304);
    let (status, missing) = json(
        server
            .request(Method::GET, "/sdk/bridge.d.ts")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 404);
    assert!(
        missing["detail"]
            .as_str()
            .unwrap()
            .contains("cargo xtask build"),
        "{missing}"
    );
    let (status, _) = json(
        server
            .request(Method::GET, "/sdk/secrets.txt")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 404);
}

/// The page helpers in `sdk/ui/`, as a tool author's page gets them.
const HELPERS: [(&str, &str, &str); 3] = [
    (
        "/sdk/ui.js",
        "text/javascript; charset=utf-8",
        include_str!("../../../sdk/ui/ui.js"),
    ),
    (
        "/sdk/ui.d.ts",
        "text/plain; charset=utf-8",
        include_str!("../../../sdk/ui/ui.d.ts"),
    ),
    (
        "/sdk/ui.css",
        "text/css; charset=utf-8",
        include_str!("../../../sdk/ui/ui.css"),
    ),
];

#[tokio::test]
async fn the_page_helpers_are_served_beside_the_sdk_even_before_it_is_built() {
    // An SDK directory with nothing in it: the helpers are part of the server.
    let sdk = tempfile::tempdir().unwrap();
    let dir = sdk.path().to_owned();
    let server = Server::start_with(move |state| state.serving_sdk_from(dir)).await;
    for (path, media_type, text) in HELPERS {
        let response = server.request(Method::GET, path).send().await.unwrap();
        assert_eq!(response.status(), 200, "{path}");
        assert_eq!(response.headers()["content-type"], media_type, "{path}");
        assert_eq!(response.headers()["access-control-allow-origin"], "*");
        assert_eq!(response.headers()["x-content-type-options"], "nosniff");
        let etag = response.headers()["etag"].to_str().unwrap().to_owned();
        assert_eq!(response.text().await.unwrap(), text, "{path}");
        let again = server
            .request(Method::GET, path)
            .header("if-none-match", &etag)
            .send()
            .await
            .unwrap();
        assert_eq!(again.status(), 304, "{path}");
    }
    let (status, missing) = json(
        server
            .request(Method::GET, "/sdk/ui.mjs")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 404);
    assert!(
        missing["detail"].as_str().unwrap().contains("/sdk/ui.js"),
        "{missing}"
    );
}
