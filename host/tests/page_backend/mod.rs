//! The host's `backend` option: a page object whose `fetch(request)`
//! answers in place of the browser's `fetch`, read exactly as the REST
//! API's answers are.

use serde_json::{Value, json};
use toolbridge_host::Host;
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::wasm_bindgen_test;

use super::{EXTENSION, STANDALONE};
use crate::fixture::*;

#[wasm_bindgen(module = "/tests/support/backend.js")]
extern "C" {
    #[wasm_bindgen(js_name = relayBackend)]
    fn relay_backend() -> JsValue;
    #[wasm_bindgen(js_name = scriptedBackend)]
    fn scripted_backend(answer: &JsValue) -> JsValue;
    #[wasm_bindgen(js_name = relayBackendAnswering)]
    fn relay_backend_answering(suffix: &str, answer: &JsValue) -> JsValue;
}

fn field(object: &JsValue, key: &str) -> JsValue {
    js_sys::Reflect::get(object, &JsValue::from_str(key)).unwrap()
}

/// A host on the real server's API base whose requests go to `backend`.
fn host_through(backend: &JsValue, extra: &Value) -> Host {
    let mut options = json!({"apiBase": api_base(), "debug": true});
    if let (Some(options), Some(extra)) = (options.as_object_mut(), extra.as_object()) {
        options.extend(extra.clone());
    }
    let options = js(&options);
    js_sys::Reflect::set(&options, &JsValue::from_str("backend"), backend).unwrap();
    Host::new(&options).unwrap_or_else(|error| panic!("new Host: {}", to_json(&error)))
}

/// What a scripted backend was asked, and the host using it with a
/// connected tool.
async fn scripted(answer: &Value, extra: &Value, query: &Value) -> (JsValue, Host, Tool) {
    let script = scripted_backend(&js(answer));
    let host = host_through(&field(&script, "backend"), extra);
    let tool = mount(&host, "lookup", STANDALONE, &sdk_query(query)).await;
    (script, host, tool)
}

#[wasm_bindgen_test]
async fn a_page_backend_answers_the_tools_exactly_as_the_rest_api() {
    sign_in(OFFICE).await;
    let relay = relay_backend();
    let through = host_through(&field(&relay, "backend"), &json!({}));
    let direct = host();
    let relayed = mount(&through, "lookup", STANDALONE, &sdk_query(&json!({}))).await;
    let plain = mount(&direct, "lookup", STANDALONE, &sdk_query(&json!({}))).await;
    let calls = [
        ("context.get", json!([])),
        ("products.list", json!([{"page": 2, "pageSize": 500}])),
        ("customers.list", json!([])),
        (
            "taskTemplates.list",
            json!([{"codes": ["INSTALL", "NOPE"]}]),
        ),
        ("costItems.list", json!([])),
        ("jobs.list", json!([{"pageSize": 3}])),
    ];
    for (method, args) in &calls {
        let expected = plain.ok(method, args.clone()).await;
        assert_eq!(relayed.ok(method, args.clone()).await, expected, "{method}");
    }
    // An error answer too: the server's 404 problem for an unknown job.
    let unknown = json!([{"customerName": "C", "jobId": "no-such-job",
        "lines": [{"description": "x", "qty": 1, "unitPrice": 1, "taxRate": 0.15}]}]);
    let expected = plain.fails("quotes.create", unknown.clone()).await;
    assert_eq!(relayed.fails("quotes.create", unknown).await, expected);

    let seen = to_json(&field(&relay, "seen"));
    let seen = seen.as_array().unwrap();
    let base = api_base();
    let urls: Vec<&str> = seen.iter().map(|r| r["url"].as_str().unwrap()).collect();
    assert_eq!(urls[0], format!("{base}/me"), "{urls:?}");
    assert!(
        urls.contains(&format!("{base}/products?page=2&pageSize=500").as_str()),
        "{urls:?}"
    );
    for request in seen {
        assert_eq!(request["isRequest"], true, "{request}");
        assert_eq!(request["accept"], "application/json", "{request}");
        assert_eq!(request["credentials"], "include", "{request}");
        assert_eq!(request["mode"], "cors", "{request}");
    }
    let post = seen.iter().find(|r| r["method"] == "POST").unwrap();
    assert_eq!(post["url"], format!("{base}/quotes"));
    assert_eq!(post["contentType"], "application/json");
    assert_eq!(post["body"]["jobId"], "no-such-job");
}

#[wasm_bindgen_test]
async fn a_page_backend_revalidates_the_catalog_index_and_saves_the_quote() {
    sign_in(OFFICE).await;
    let id = draft_quote().await;
    let relay = relay_backend();
    let host = host_through(&field(&relay, "backend"), &json!({}));
    resolved(host.open_quote(id.clone(), &JsValue::UNDEFINED)).await;
    host.close_quote(&JsValue::UNDEFINED).unwrap();
    resolved(host.open_quote(id.clone(), &JsValue::UNDEFINED)).await;
    let seen = to_json(&field(&relay, "seen"));
    let statuses = to_json(&field(&relay, "statuses"));
    let catalog: Vec<usize> = seen
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .filter(|(_, r)| r["url"].as_str().unwrap().ends_with("/catalog/index"))
        .map(|(at, _)| at)
        .collect();
    assert_eq!(catalog.len(), 2, "{seen}");
    let etag = &seen[catalog[1]]["ifNoneMatch"];
    assert!(
        etag.is_string(),
        "the second fetch was not conditional: {seen}"
    );
    assert_eq!(seen[catalog[0]]["ifNoneMatch"], Value::Null);
    assert_eq!(statuses[catalog[1]], 304, "{statuses}");

    // The catalog kept through the 304 still injects the product's tasks.
    let tool = mount(&host, "estimator", EXTENSION, &sdk_query(&json!({}))).await;
    let products = tool
        .ok("products.list", json!([{"page": 1, "pageSize": 500}]))
        .await;
    let oak = products["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["sku"] == "OAK-01")
        .unwrap()
        .clone();
    tool.ok(
        "quotes.addLines",
        json!([[{"productCode": "oak-01", "linkedItemId": oak["id"], "description": "Oak floor",
                 "qty": 10, "unitPrice": 89.5, "taxRate": 0.15, "unit": "T_SQUARE_METRE"}]]),
    )
    .await;
    let quote = quote_of(&host);
    let injected = quote["lines"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|line| line["injected"] == true)
        .count();
    assert_eq!(injected, 2, "{quote}");

    let saved = resolved(host.save(&JsValue::UNDEFINED)).await;
    assert_eq!(saved["dirty"], false);
    let seen = to_json(&field(&relay, "seen"));
    let put = seen
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["method"] == "PUT")
        .unwrap();
    assert_eq!(put["url"], format!("{}/quotes/{id}/lines", api_base()));
    assert_eq!(put["contentType"], "application/json");
    let descriptions = |lines: &Value| -> Vec<String> {
        lines
            .as_array()
            .unwrap()
            .iter()
            .map(|line| line["description"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(
        descriptions(&put["body"]["lines"]),
        descriptions(&saved["lines"])
    );
    assert_eq!(saved["lines"].as_array().unwrap().len(), 4, "{saved}");
    let (_, stored) = request("GET", &format!("/api/v1/quotes/{id}"), None).await;
    assert_eq!(stored["lines"], saved["lines"]);
}

#[wasm_bindgen_test]
async fn a_catalog_index_that_is_not_the_one_expected_fails_the_open_and_opens_nothing() {
    sign_in(OFFICE).await;
    let id = draft_quote().await;
    let guid = "5d0c6e1e-0000-4000-8000-000000000001";
    let cases = [
        (
            json!({"products": [{"id": 7, "sku": "A"}], "taskTemplates": [], "costItems": []})
                .to_string(),
            "INTERNAL",
            "the backend's answer to GET /catalog/index has an unexpected shape \
             (products[0].id: must be a string, not a number)",
        ),
        (
            json!({"products": [{"id": guid, "sku": "A"}], "costItems": []}).to_string(),
            "INTERNAL",
            "the backend's answer to GET /catalog/index has an unexpected shape (missing field \
             `taskTemplates`)",
        ),
        (
            format!(r#"{{"products": [{{"id": "{guid}", "sku": "#),
            "INTERNAL",
            "the backend's answer to GET /catalog/index is not JSON (EOF while parsing a value \
             at line 1 column 69)",
        ),
    ];
    for (text, code, message) in cases {
        let relay =
            relay_backend_answering("/catalog/index", &js(&json!({"status": 200, "text": text})));
        let host = host_through(&field(&relay, "backend"), &json!({}));
        let error = rejected(host.open_quote(id.clone(), &JsValue::UNDEFINED)).await;
        assert_eq!(error["code"], code, "{text}: {error}");
        assert!(
            error["message"].as_str().unwrap().starts_with(message),
            "{text}: {error}"
        );
        assert_eq!(quote_of(&host), Value::Null, "{text}");
    }
}

#[wasm_bindgen_test]
async fn a_catalog_index_after_a_byte_order_mark_or_from_what_only_reads_like_a_response_is_read() {
    sign_in(OFFICE).await;
    let id = draft_quote().await;
    let (status, index) = request("GET", "/api/v1/catalog/index", None).await;
    assert_eq!(status, 200, "{index}");
    let product = index["products"][0]["id"].as_str().unwrap().to_owned();
    for answer in [
        json!({"status": 200, "text": format!("\u{feff}{index}")}),
        json!({"status": 200, "text": index.to_string(), "likeResponse": true}),
    ] {
        let relay = relay_backend_answering("/catalog/index", &js(&answer));
        let host = host_through(&field(&relay, "backend"), &json!({}));
        resolved(host.open_quote(id.clone(), &JsValue::UNDEFINED)).await;
        // The catalog read is the one lines are checked against.
        let tool = mount(&host, "estimator", EXTENSION, &sdk_query(&json!({}))).await;
        let line = json!({"linkedItemId": product, "description": "From the index", "qty": 1,
            "unitPrice": 10, "taxRate": 0.15});
        tool.ok("quotes.addLines", json!([[line]])).await;
        let unknown = json!({"linkedItemId": "5d0c6e1e-0000-4000-8000-00000000dead",
            "description": "Not in it", "qty": 1, "unitPrice": 10, "taxRate": 0.15});
        let error = tool.fails("quotes.addLines", json!([[unknown]])).await;
        assert_eq!(error["code"], "INVALID_PARAMS", "{error}");
    }
}

/// A problem body as the REST API writes one.
fn problem(status: u16, code: &str, extra: &Value) -> Value {
    let mut body = json!({"type": format!("/docs/errors#{code}"), "title": "t", "status": status,
        "detail": format!("from the page backend ({status})"), "code": code});
    if let (Some(body), Some(extra)) = (body.as_object_mut(), extra.as_object()) {
        body.extend(extra.clone());
    }
    body
}

#[wasm_bindgen_test]
async fn a_page_backend_s_failures_get_the_rest_api_s_codes() {
    let problem_type = json!({"content-type": "application/problem+json"});
    let cases = [
        (
            json!({"status": 429, "body": problem(429, "RATE_LIMITED", &json!({})),
                   "headers": {"Retry-After": "7"}}),
            "RATE_LIMITED",
        ),
        (
            json!({"status": 401, "body": problem(401, "UNAUTHENTICATED", &json!({})), "headers": problem_type}),
            "UNAUTHENTICATED",
        ),
        (
            json!({"status": 422, "body": problem(422, "INVALID_PARAMS",
                    &json!({"errors": [{"path": "lines[0].qty", "message": "from the page backend"}]}))}),
            "INVALID_PARAMS",
        ),
        (
            json!({"status": 404, "body": problem(404, "NOT_FOUND", &json!({}))}),
            "NOT_FOUND",
        ),
        (
            json!({"status": 500, "text": "boom"}),
            "BACKEND_UNAVAILABLE",
        ),
        (
            json!({"status": 503, "body": problem(503, "BACKEND_UNAVAILABLE", &json!({}))}),
            "BACKEND_UNAVAILABLE",
        ),
        // No connection: the request failed on the network.
        (json!({"throws": true}), "OFFLINE"),
        (json!({"networkError": true}), "OFFLINE"),
        (json!({"status": 200, "text": "not json"}), "INTERNAL"),
        (json!({"status": 418, "text": "teapot"}), "INTERNAL"),
        (json!({"notResponse": true}), "INTERNAL"),
    ];
    for (answer, code) in cases {
        let (script, _host, tool) = scripted(&answer, &json!({}), &json!({})).await;
        let error = tool.fails("quotes.list", json!([])).await;
        assert_eq!(error["code"], code, "{answer}: {error}");
        let seen = to_json(&field(&script, "seen"));
        assert_eq!(
            seen,
            json!([{"method": "GET", "url": format!("{}/quotes?page=1&pageSize=50", api_base())}]),
            "{answer}"
        );
        match code {
            "RATE_LIMITED" => assert_eq!(error["retryAfter"], 7),
            "INVALID_PARAMS" => assert_eq!(
                error["details"],
                json!([{"path": "lines[0].qty", "message": "from the page backend"}])
            ),
            "NOT_FOUND" => assert_eq!(error["message"], "from the page backend (404)"),
            _ => {}
        }
        if answer["notResponse"] == true {
            assert!(
                error["message"].as_str().unwrap().contains("backend.fetch"),
                "{error}"
            );
        }
    }
}

#[wasm_bindgen_test]
async fn a_list_page_whose_envelope_is_wrong_is_internal_naming_the_field() {
    let page = |items: Value, total: Value| json!({"items": items, "totalCount": total, "page": 1, "pageSize": 50});
    let cases = [
        (page(json!({}), json!(1)), "items"),
        (page(json!([]), json!("1")), "totalCount"),
        (page(json!([]), json!(-1)), "totalCount"),
        (
            json!({"items": [], "page": 1, "pageSize": 50}),
            "totalCount",
        ),
    ];
    for (body, field) in cases {
        let (_script, _host, tool) = scripted(
            &json!({"status": 200, "body": body}),
            &json!({}),
            &json!({}),
        )
        .await;
        let error = tool.fails("quotes.list", json!([])).await;
        assert_eq!(error["code"], "INTERNAL", "{body}: {error}");
        let message = error["message"].as_str().unwrap();
        assert!(
            message.contains("GET /quotes?page=1&pageSize=50") && message.contains(field),
            "{body}: {error}"
        );
    }
}

#[wasm_bindgen_test]
async fn a_page_backend_that_never_answers_times_out_and_its_request_is_aborted() {
    let (script, _host, tool) = scripted(
        &json!({"hang": true}),
        &json!({"requestTimeoutMs": 300}),
        &json!({}),
    )
    .await;
    let error = tool.fails("jobs.list", json!([])).await;
    assert_eq!(error["code"], "BACKEND_UNAVAILABLE");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("no answer within 300 ms"),
        "{error}"
    );
    let aborted = js_sys::Function::from(field(&script, "aborted"))
        .call0(&JsValue::NULL)
        .unwrap();
    assert_eq!(to_json(&aborted), json!([true]));
    // Without the host's deadline in reach, the tool's own one answers.
    let (_, _host, tool) = scripted(
        &json!({"hang": true}),
        &json!({}),
        &json!({"callTimeoutMs": 500}),
    )
    .await;
    assert_eq!(tool.fails("jobs.list", json!([])).await["code"], "TIMEOUT");
}

#[wasm_bindgen_test]
fn a_backend_without_fetch_is_refused_naming_the_option() {
    for backend in [
        json!({}),
        json!({"fetch": "https://api.example"}),
        json!(null),
        json!(7),
    ] {
        let mut options = json!({"apiBase": "/api/v1"});
        options["backend"] = backend.clone();
        let error = error_json(&Host::new(&js(&options)).err().unwrap());
        assert_eq!(error["code"], "USAGE", "{backend}");
        assert!(
            error["message"].as_str().unwrap().contains("backend"),
            "{backend}: {error}"
        );
    }
    // An unknown option beside a backend is still named.
    let options = js(&json!({"apiBase": "/api/v1", "retries": 3}));
    let script = scripted_backend(&js(&json!({"status": 200, "body": {}})));
    js_sys::Reflect::set(
        &options,
        &JsValue::from_str("backend"),
        &field(&script, "backend"),
    )
    .unwrap();
    let error = error_json(&Host::new(&options).err().unwrap());
    assert!(
        error["message"].as_str().unwrap().contains("retries"),
        "{error}"
    );
}

#[wasm_bindgen_test]
async fn auth_get_token_asks_the_backend_for_the_mounted_tool_only_when_mounted_with_identity() {
    sign_in(OFFICE).await;
    let answer = json!({"token": "header.payload.signature", "expiresAt": 2_000_000_000_u64, "expiresIn": 300});
    let relay = relay_backend_answering(
        "/tools/lookup/token",
        &js(&json!({"status": 200, "text": answer.to_string()})),
    );
    let host = host_through(&field(&relay, "backend"), &json!({}));
    let with = mount_with(
        &host,
        "lookup",
        STANDALONE,
        &sdk_query(&json!({})),
        &json!({"identity": true}),
    )
    .await;
    let without = mount(&host, "other", EXTENSION, &sdk_query(&json!({}))).await;
    for (tool, offered) in [(&with, true), (&without, false)] {
        let supports = tool
            .command(json!({"command": "supports", "names": ["auth.getToken"]}))
            .await;
        assert_eq!(supports["result"], json!({"auth.getToken": offered}));
    }
    // The tool gets the token itself; bridge.js keeps it, so a second call asks nobody.
    assert_eq!(
        with.ok("auth.getToken", json!([{"sub": "someone-else"}]))
            .await,
        "header.payload.signature"
    );
    assert_eq!(
        with.ok("auth.getToken", json!([])).await,
        "header.payload.signature"
    );
    let error = without.fails("auth.getToken", json!([])).await;
    assert_eq!(error["code"], "NOT_ALLOWED");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("permissions.identity"),
        "{error}"
    );
    let answered = to_json(&field(&relay, "answered"));
    let asked: Vec<&Value> = answered.as_array().unwrap().iter().collect();
    assert_eq!(asked.len(), 1, "{answered}");
    let seen = to_json(&field(&relay, "seen"));
    assert!(
        !seen.to_string().contains("/token"),
        "the tool without identity asked: {seen}"
    );
    assert_eq!(asked[0]["method"], "POST");
    assert_eq!(
        asked[0]["url"],
        format!("{}/tools/lookup/token", api_base())
    );
    // Nothing the tool passed went with it.
    assert!(asked[0]["body"].is_null(), "{}", asked[0]);
}

#[wasm_bindgen_test]
async fn auth_get_token_for_a_tool_the_server_does_not_list_is_not_found() {
    sign_in(OFFICE).await;
    let host = host();
    let tool = mount_with(
        &host,
        "lookup",
        STANDALONE,
        &sdk_query(&json!({})),
        &json!({"identity": true}),
    )
    .await;
    let error = tool.fails("auth.getToken", json!([])).await;
    assert_eq!(error["code"], "NOT_FOUND", "{error}");
}
