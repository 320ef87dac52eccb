//! The OpenAPI document says what the server does: every status the layers
//! around a handler answer, the headers that come with them, operation ids
//! that are unique and links that name them, and request bounds that are the
//! protocol's own (utoipa takes only literals, so the numbers are written out
//! twice; these tests hold the two together).

use reqwest::Method;
use serde_json::{Value, json};
use toolbridge_protocol::create_quote::validate_rest_create;
use toolbridge_protocol::limits::{
    CREATE_MAX_LINES, CREATE_MAX_QTY, CREATE_MAX_UNIT_PRICE, CREATE_MIN_LINES, EMAIL_MAX_CHARS,
    MAX_LINE_PRICE, MAX_PAGE_SIZE, QUOTE_MAX_LINES, TEXT_MAX_CHARS,
};
use toolbridge_protocol::quote_header::{MAX_EXPIRY_DAYS, validate_header_change};
use toolbridge_protocol::webhooks::{URL_MAX_CHARS, WebhookEventType, parse_url};
use toolbridge_store::KEY_NAME_MAX_CHARS;

use crate::harness::{Server, customer_and_product, json, quote_body};

/// The document the server serves.
pub(crate) async fn document() -> Value {
    let server = Server::start().await;
    let (status, document) = json(
        server
            .request(Method::GET, "/api/v1/openapi.json")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 200);
    document
}

#[tokio::test]
async fn the_openapi_document_is_served_without_a_key() {
    // `document` asks without a key and checks the 200.
    let body = document().await;
    assert!(body["openapi"].as_str().unwrap().starts_with("3."));
    for path in [
        "/api/v1/products",
        "/api/v1/quotes",
        "/api/v1/quotes/{id}",
        "/api/v1/catalog/index",
    ] {
        assert!(body["paths"][path].is_object(), "{path}");
    }
    assert!(body["components"]["schemas"]["BridgeProductDto"].is_object());
    let unprocessable = &body["paths"]["/api/v1/quotes"]["post"]["responses"]["422"];
    assert_eq!(
        unprocessable["content"]["application/problem+json"]["schema"]["$ref"],
        "#/components/schemas/Problem"
    );
    assert!(body["components"]["schemas"]["Problem"]["properties"]["errors"].is_object());
}

/// Every operation: its path, its method and itself.
fn operations(document: &Value) -> Vec<(String, String, Value)> {
    let mut all = Vec::new();
    for (path, item) in document["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            if operation.get("responses").is_some() {
                all.push((path.clone(), method.clone(), operation.clone()));
            }
        }
    }
    assert!(all.len() > 20, "{}", all.len());
    all
}

/// A component schema's property.
fn property<'a>(document: &'a Value, schema: &str, name: &str) -> &'a Value {
    let property = &document["components"]["schemas"][schema]["properties"][name];
    assert!(property.is_object(), "{schema}.{name}");
    property
}

#[tokio::test]
async fn operation_ids_are_unique_and_links_name_real_operations() {
    let document = document().await;
    let operations = operations(&document);
    let ids: Vec<&str> = operations
        .iter()
        .map(|(path, method, operation)| {
            operation["operationId"]
                .as_str()
                .unwrap_or_else(|| panic!("{method} {path} has no operationId"))
        })
        .collect();
    for (i, id) in ids.iter().enumerate() {
        assert!(!ids[i + 1..].contains(id), "operationId {id} is used twice");
    }
    let mut links = 0;
    for (path, method, operation) in &operations {
        for (status, response) in operation["responses"].as_object().unwrap() {
            let Some(named) = response.get("links").and_then(Value::as_object) else {
                continue;
            };
            for (name, link) in named {
                let target = link["operationId"].as_str().unwrap_or_else(|| {
                    panic!("{method} {path} {status} link {name} has no operationId: {link}")
                });
                assert!(ids.contains(&target), "{name} -> {target}");
                assert!(link.get("operation_id").is_none(), "{link}");
                links += 1;
            }
        }
    }
    assert!(links >= 8, "{links}");
}

#[tokio::test]
async fn every_keyed_operation_documents_what_the_key_middleware_answers() {
    let document = document().await;
    for (path, method, operation) in operations(&document) {
        let responses = operation["responses"].as_object().unwrap();
        for (status, response) in responses {
            let request_id = &response["headers"]["X-Request-Id"];
            assert_eq!(request_id["required"], true, "{method} {path} {status}");
        }
        if !path.starts_with("/api/v1/") {
            continue;
        }
        for status in ["401", "403", "429"] {
            assert_eq!(
                responses[status]["content"]["application/problem+json"]["schema"]["$ref"],
                "#/components/schemas/Problem",
                "{method} {path} {status}"
            );
        }
        let www_authenticate = &responses["401"]["headers"]["WWW-Authenticate"];
        assert_eq!(www_authenticate["required"], true, "{method} {path}");
        let retry_after = &responses["429"]["headers"]["Retry-After"];
        assert_eq!(retry_after["required"], true, "{method} {path}");
        assert_eq!(retry_after["schema"]["minimum"], 1, "{method} {path}");
        for (status, response) in responses {
            let limit = &response["headers"]["X-RateLimit-Limit"];
            if status == "401" {
                assert!(limit.is_null(), "{method} {path} 401");
            } else {
                // Keys get it; the app's session does not.
                assert_eq!(limit["required"], false, "{method} {path} {status}");
            }
        }
    }
}

#[tokio::test]
async fn every_operation_with_a_json_body_documents_400_and_413() {
    let document = document().await;
    let mut bodies = 0;
    for (path, method, operation) in operations(&document) {
        if operation["requestBody"]["content"]["application/json"].is_null() {
            continue;
        }
        bodies += 1;
        for status in ["400", "413", "422"] {
            assert_eq!(
                operation["responses"][status]["content"]["application/problem+json"]["schema"]["$ref"],
                "#/components/schemas/Problem",
                "{method} {path} {status}"
            );
        }
    }
    // With the organisation's context, a user's own preferences and the server's fetch for tools.
    assert_eq!(bodies, 13);
}

#[tokio::test]
async fn request_bounds_are_the_protocols() {
    let document = document().await;
    let number = |value: &Value| value.as_f64().unwrap().to_string();
    let text_max = TEXT_MAX_CHARS.to_string();

    let paging = &document["paths"]["/api/v1/products"]["get"]["parameters"];
    let page_size = paging
        .as_array()
        .unwrap()
        .iter()
        .find(|parameter| parameter["name"] == "pageSize")
        .unwrap();
    assert_eq!(
        number(&page_size["schema"]["maximum"]),
        MAX_PAGE_SIZE.to_string()
    );
    assert_eq!(page_size["schema"]["minimum"], 1);

    let request = &document["components"]["schemas"]["RestCreateQuoteRequest"];
    assert_eq!(request["additionalProperties"], false);
    let lines = &request["properties"]["lines"];
    assert_eq!(lines["minItems"], CREATE_MIN_LINES);
    assert_eq!(lines["maxItems"], CREATE_MAX_LINES);
    for name in ["customerId", "title", "quoteRef"] {
        let max = property(&document, "RestCreateQuoteRequest", name)["maxLength"].to_string();
        assert_eq!(max, text_max, "{name}");
    }
    for schema in ["RestQuoteLineRequest", "BridgeQuoteLineRequest"] {
        let qty = property(&document, schema, "qty");
        assert_eq!(number(&qty["maximum"]), CREATE_MAX_QTY.to_string());
        let price = property(&document, schema, "unitPrice");
        assert_eq!(number(&price["maximum"]), CREATE_MAX_UNIT_PRICE.to_string());
        assert_eq!(property(&document, schema, "taxRate")["maximum"], 1);
    }
    let email = property(&document, "BridgeCreateQuoteRequest", "customerEmail");
    assert_eq!(email["maxLength"], EMAIL_MAX_CHARS);

    let line_texts = [
        "description",
        "specification",
        "location",
        "productCode",
        "linkedItemId",
    ];
    for name in line_texts {
        let max = property(&document, "QuoteLine", name)["maxLength"].to_string();
        assert_eq!(max, text_max, "{name}");
    }
    for name in ["unitPrice", "costPrice"] {
        let price = property(&document, "QuoteLine", name);
        assert_eq!(
            number(&price["maximum"]),
            MAX_LINE_PRICE.to_string(),
            "{name}"
        );
    }
    assert_eq!(property(&document, "QuoteLine", "taxRate")["maximum"], 1);

    let expiry = property(&document, "QuoteHeaderChangeRequest", "expiryDays");
    assert_eq!(expiry["maximum"], MAX_EXPIRY_DAYS);
    let name = property(&document, "NewKey", "name");
    assert_eq!(name["maxLength"], KEY_NAME_MAX_CHARS);
}

/// The smallest quantity the document allows (1e-28) is the smallest the
/// rules accept: less is a zero decimal, and refused.
#[tokio::test]
async fn the_smallest_documented_quantity_is_accepted_and_less_is_not() {
    let document = document().await;
    let minimum = property(&document, "RestQuoteLineRequest", "qty")["minimum"]
        .as_f64()
        .unwrap();
    assert!((minimum - 1e-28).abs() < 1e-40, "{minimum}");
    let request = |qty: f64| json!({"customerId": "c-1", "lines": [{"skuId": "p-1", "qty": qty, "unitPrice": 1}]});
    assert!(validate_rest_create(&request(minimum)).is_ok());
    assert!(validate_rest_create(&request(minimum * 0.9)).is_err());
}

/// Found by the api conformance suite with every check: the document let a
/// header change name a date such as `0000-00-00`, which the server refuses.
/// Its pattern now says exactly which dates the server takes; this holds the
/// two together, day by day over four centuries from 1960 (leap years, 2000
/// and 2400 among them, 2100 and 2200 not), with each month's 0th and 32nd,
/// the ends of the year range, and times at and past their ends.
#[tokio::test]
async fn the_documented_date_pattern_takes_exactly_the_dates_the_server_takes() {
    let document = document().await;
    let pattern = property(&document, "QuoteHeaderChangeRequest", "date")["pattern"]
        .as_str()
        .unwrap()
        .to_owned();
    let documented = regex_lite::Regex::new(&pattern).unwrap();
    let taken = |date: &str| validate_header_change(&json!({ "date": date })).is_ok();
    let mut dates: Vec<String> = Vec::new();
    for year in (1960..=2404).chain([999, 1000, 1969, 9999]) {
        for month in 0..=13 {
            for day in 0..=32 {
                dates.push(format!("{year:04}-{month:02}-{day:02}"));
            }
        }
    }
    for time in [
        "00:00:00", "23:59:59", "24:00:00", "23:60:00", "23:59:60", "9:00:00", "09:00",
    ] {
        for day in ["2026-03-31", "2028-02-29", "2027-02-29", "1969-12-31"] {
            dates.push(format!("{day}T{time}Z"));
            dates.push(format!("{day}T{time}"));
        }
    }
    dates.extend(
        [
            "",
            "2026-3-31",
            "2026-03-31 ",
            " 2026-03-31",
            "2026-03-31\n",
            "20260331",
            "12026-03-31",
            "2026-03-31T",
            "2026-03-31Z",
            "2026/03/31",
            "٢٠٢٦-03-31",
        ]
        .map(str::to_owned),
    );
    let mut accepted = 0;
    for date in &dates {
        assert_eq!(documented.is_match(date), taken(date), "{date:?}");
        accepted += usize::from(taken(date));
    }
    // Every real day of 1970 to 2404 and of 9999, and two times on each of
    // the two real days.
    assert_eq!(accepted, 158_881 + 365 + 2 * 2);
}

/// A Draft quote of a new server's, for saving lines: the server, a key,
/// the quote's id and its first line.
async fn draft_quote() -> (Server, String, String, Value) {
    let server = Server::start().await;
    let key = server.full_key().await;
    let (customer, product) = customer_and_product(&server, &key).await;
    let (_, quote) = json(
        server
            .post(&key, "/api/v1/quotes", &quote_body(&customer, &product))
            .await,
    )
    .await;
    let id = quote["id"].as_str().unwrap().to_owned();
    (server, key, id, quote["lines"][0].clone())
}

/// Saves `lines` and `group_keys` to the quote `id`: whether the server took
/// them (200) or refused them (422; any other answer fails the test).
async fn saved(server: &Server, key: &str, id: &str, lines: Value, group_keys: Value) -> bool {
    let (status, answer) = json(
        server
            .request(Method::PUT, &format!("/api/v1/quotes/{id}/lines"))
            .bearer_auth(key)
            .json(&json!({"lines": lines, "groupKeys": group_keys}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert!(status == 200 || status == 422, "{status} {answer}");
    status == 200
}

/// `line` with `field` set to `value`.
fn with(line: &Value, field: &str, value: Value) -> Value {
    let mut line = line.clone();
    line[field] = value;
    line
}

/// Found by the api conformance suite with every check: the document let a
/// saved line have a section of any length, which the server refuses past
/// 100 characters once trimmed. Each candidate is saved over HTTP and must be
/// taken exactly when the document's pattern takes it.
#[tokio::test]
async fn a_saved_section_is_refused_exactly_where_the_document_says() {
    let document = document().await;
    let pattern = property(&document, "QuoteLine", "section")["pattern"]
        .as_str()
        .unwrap()
        .to_owned();
    let documented = regex_lite::Regex::new(&pattern).unwrap();
    let (server, key, id, line) = draft_quote().await;
    let a = |n: usize| "a".repeat(n);
    let sections = [
        String::new(),
        " \t\n".to_owned(),
        a(100),
        a(101),
        format!("  {}\u{3000}\u{a0}\u{2029}", a(100)),
        format!("\u{1c}{}", a(100)),
        format!("a{}b", "\n".repeat(98)),
        format!("a{}b", " ".repeat(99)),
        "é".repeat(100),
        "🧱".repeat(101),
    ];
    for section in &sections {
        let lines = json!([with(&line, "section", json!(section))]);
        assert_eq!(
            saved(&server, &key, &id, lines, json!({})).await,
            documented.is_match(section),
            "section {section:?}"
        );
    }
}

/// Found by the api conformance suite with every check: the document let a
/// saved line have any quantity, which the server refuses past its bound
/// (larger for a line injected from a task sequence), and did not bound the
/// lines or the group keys. At and past each documented bound, over HTTP.
#[tokio::test]
async fn saved_quantities_lines_and_group_keys_have_the_documented_bounds() {
    let document = document().await;
    let schemas = &document["components"]["schemas"];
    let line_schema = &schemas["QuoteLine"];
    let most = line_schema["properties"]["qty"]["maximum"]
        .as_f64()
        .unwrap();
    assert_eq!(
        line_schema["if"],
        json!({"properties": {"injected": {"const": true}}, "required": ["injected"]})
    );
    let most_not_injected = line_schema["else"]["properties"]["qty"]["maximum"]
        .as_f64()
        .unwrap();
    let save_schema = &schemas["SaveLines"]["properties"];
    assert_eq!(save_schema["lines"]["maxItems"], QUOTE_MAX_LINES);
    let key_max = save_schema["groupKeys"]["propertyNames"]["maxLength"]
        .as_u64()
        .unwrap();
    assert_eq!(key_max, TEXT_MAX_CHARS as u64);

    let (server, key, id, line) = draft_quote().await;
    let line_no = line["lineNo"].as_u64().unwrap();
    let injected = |qty: f64| {
        let mut task = with(&line, "qty", json!(qty));
        task["lineNo"] = json!(line_no + 1);
        task["lineType"] = json!("task");
        task["injected"] = json!(true);
        task["parentLineNo"] = json!(line_no);
        task["linkedItemId"] = Value::Null;
        json!([line.clone(), task])
    };
    for (lines, documented) in [
        (json!([with(&line, "qty", json!(most_not_injected))]), true),
        (
            json!([with(&line, "qty", json!(most_not_injected + 1.0))]),
            false,
        ),
        (injected(most), true),
        (injected(most + 1.0), false),
    ] {
        assert_eq!(
            saved(&server, &key, &id, lines.clone(), json!({})).await,
            documented,
            "{lines}"
        );
    }
    for (length, documented) in [(TEXT_MAX_CHARS, true), (TEXT_MAX_CHARS + 1, false)] {
        let keys = json!({ "k".repeat(length): 1 });
        assert_eq!(
            saved(&server, &key, &id, json!([line.clone()]), keys).await,
            documented,
            "a group key of {length} characters"
        );
    }
}

/// Found by the api conformance suite with every check: the document let a
/// header change be `{}`, which the server refuses, as it names nothing to
/// change (utoipa 5.5 writes `min_properties` as `maxProperties`, so the
/// document's `minProperties` is added after it).
#[tokio::test]
async fn a_header_change_names_at_least_one_field_as_the_document_says() {
    let document = document().await;
    let change = &document["components"]["schemas"]["QuoteHeaderChangeRequest"];
    assert_eq!(change["minProperties"], 1);
    assert!(change.get("maxProperties").is_none(), "{change}");
    let (server, key, id, _) = draft_quote().await;
    let patch = |body: Value| {
        server
            .request(Method::PATCH, &format!("/api/v1/quotes/{id}"))
            .bearer_auth(&key)
            .json(&body)
            .send()
    };
    let (status, problem) = json(patch(json!({})).await.unwrap()).await;
    assert_eq!(status, 422, "{problem}");
    assert_eq!(problem["errors"][0]["path"], "");
    let (status, changed) = json(patch(json!({"quoteType": "Estimate"})).await.unwrap()).await;
    assert_eq!(status, 200, "{changed}");
}

/// Every `$ref` in `value`, at any depth.
fn refs(value: &Value, found: &mut Vec<String>) {
    match value {
        Value::Object(fields) => {
            if let Some(target) = fields.get("$ref").and_then(Value::as_str) {
                found.push(target.to_owned());
            }
            fields.values().for_each(|field| refs(field, found));
        }
        Value::Array(items) => items.iter().for_each(|item| refs(item, found)),
        _ => {}
    }
}

#[tokio::test]
async fn the_webhooks_section_names_each_event_with_a_payload_whose_refs_resolve() {
    let document = document().await;
    assert!(
        document["openapi"].as_str().unwrap().starts_with("3.1."),
        "the webhooks section is OpenAPI 3.1: {}",
        document["openapi"]
    );
    let webhooks = document["webhooks"].as_object().unwrap();
    let names: Vec<&str> = webhooks.keys().map(String::as_str).collect();
    assert_eq!(names, WebhookEventType::ALL.map(WebhookEventType::as_str));
    for (name, item) in webhooks {
        let post = &item["post"];
        assert_eq!(
            post["requestBody"]["content"]["application/json"]["schema"]["$ref"],
            "#/components/schemas/WebhookPayload",
            "{name}"
        );
        let headers: Vec<(&str, &str, bool)> = post["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .map(|header| {
                assert!(
                    header["description"].as_str().is_some_and(|d| d.len() > 20),
                    "{name}: {header}"
                );
                (
                    header["name"].as_str().unwrap(),
                    header["in"].as_str().unwrap(),
                    header["required"] == true,
                )
            })
            .collect();
        assert_eq!(
            headers,
            [
                ("Toolbridge-Event-Id", "header", true),
                ("Toolbridge-Signature", "header", true)
            ],
            "{name}"
        );
        let responses: Vec<&String> = post["responses"].as_object().unwrap().keys().collect();
        assert_eq!(responses, ["2XX"], "{name}");
        assert!(
            post["description"]
                .as_str()
                .unwrap()
                .contains(name.as_str())
        );
    }
    // Every schema the payload reaches, at any depth, is in the document.
    let mut pending = Vec::new();
    refs(&document["webhooks"], &mut pending);
    let mut seen: Vec<String> = Vec::new();
    while let Some(target) = pending.pop() {
        if seen.contains(&target) {
            continue;
        }
        let pointer = target.strip_prefix('#').unwrap();
        let schema = document
            .pointer(pointer)
            .unwrap_or_else(|| panic!("{target} names nothing"));
        refs(schema, &mut pending);
        seen.push(target);
    }
    for reached in [
        "WebhookPayload",
        "WebhookData",
        "WebhookEventType",
        "QuoteDto",
    ] {
        assert!(
            seen.contains(&format!("#/components/schemas/{reached}")),
            "{reached}: {seen:?}"
        );
    }
    let event_type = &document["components"]["schemas"]["WebhookEventType"]["enum"];
    assert_eq!(
        event_type,
        &json!(WebhookEventType::ALL.map(WebhookEventType::as_str))
    );
}

#[tokio::test]
async fn every_webhook_endpoint_operation_needs_webhooks_write() {
    let document = document().await;
    let expected = [
        ("/api/v1/webhook-endpoints", "get", "200"),
        ("/api/v1/webhook-endpoints", "post", "201"),
        ("/api/v1/webhook-endpoints/{id}", "get", "200"),
        ("/api/v1/webhook-endpoints/{id}", "patch", "200"),
        ("/api/v1/webhook-endpoints/{id}", "delete", "204"),
        (
            "/api/v1/webhook-endpoints/{id}/rotate-secret",
            "post",
            "200",
        ),
        ("/api/v1/webhook-endpoints/{id}/deliveries", "get", "200"),
        (
            "/api/v1/webhook-endpoints/{id}/deliveries/{deliveryId}/redeliver",
            "post",
            "201",
        ),
    ];
    let documented: Vec<(String, String)> = operations(&document)
        .into_iter()
        .filter(|(path, _, _)| path.starts_with("/api/v1/webhook-endpoints"))
        .map(|(path, method, _)| (path, method))
        .collect();
    assert_eq!(documented.len(), expected.len(), "{documented:?}");
    for (path, method, success) in expected {
        let operation = &document["paths"][path][method];
        assert_eq!(
            operation["security"],
            json!([{"api_key": ["webhooks:write"]}]),
            "{method} {path}"
        );
        assert_eq!(operation["tags"], json!(["webhooks"]), "{method} {path}");
        let responses = &operation["responses"];
        assert!(responses[success].is_object(), "{method} {path} {success}");
        let refusals: &[&str] = if path == "/api/v1/webhook-endpoints" {
            &["401", "403", "422"]
        } else {
            &["401", "403", "404"]
        };
        for status in refusals {
            assert_eq!(
                responses[status]["content"]["application/problem+json"]["schema"]["$ref"],
                "#/components/schemas/Problem",
                "{method} {path} {status}"
            );
        }
    }
    // The secret is in the answers to creating and rotating only.
    let secret_answers: Vec<&str> = ["WebhookEndpoint", "WebhookEndpointWithSecret"]
        .into_iter()
        .filter(|schema| {
            document["components"]["schemas"][schema]["properties"]["secret"].is_object()
        })
        .collect();
    assert_eq!(secret_answers, ["WebhookEndpointWithSecret"]);
}

/// The document's pattern for an endpoint's URL takes exactly what the server's URL rules take,
/// for new endpoints and for changes.
#[tokio::test]
async fn the_documented_webhook_url_pattern_is_the_servers_rule() {
    let document = document().await;
    let pattern = property(&document, "NewWebhookEndpoint", "url")["pattern"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        property(&document, "WebhookEndpointUpdate", "url")["pattern"],
        pattern.as_str()
    );
    assert_eq!(
        property(&document, "NewWebhookEndpoint", "url")["maxLength"],
        URL_MAX_CHARS
    );
    assert_eq!(
        property(&document, "NewWebhookEndpoint", "eventTypes")["uniqueItems"],
        true
    );
    assert_eq!(
        document["components"]["schemas"]["WebhookEndpointUpdate"]["minProperties"],
        1
    );
    let documented = regex_lite::Regex::new(&pattern).unwrap();
    for url in [
        "https://example.com/hooks?x=1",
        "HTTP://127.0.0.1:8080",
        "http://[::1]:9/x",
        "https://a",
        "https://host:065535/",
        "https://host:65536/",
        "https://host:0/",
        "https://host:00080/",
        "https://user@host/",
        "https://host/a@b",
        "https://",
        "https:///path",
        "https://:443/",
        "https://a:b:80/",
        "https://exa mple.com/",
        "https://example.com/\u{a0}",
        "https://example.com/\u{85}",
        "https://example.com/\u{1}",
        "https://example.com/é🧱",
        "https://[::1/",
        "https://[zz]/",
        "https://[:]:80",
        "https://[::1]x",
        "ftp://example.com",
        "javascript://alert(1)",
        "example.com/hook",
        "",
    ] {
        assert_eq!(
            documented.is_match(url),
            parse_url(url).is_ok(),
            "{url:?}: {:?}",
            parse_url(url)
        );
    }
}

#[tokio::test]
async fn every_operation_says_how_it_is_authorised() {
    let document = document().await;
    assert_eq!(
        document["components"]["securitySchemes"]["session"],
        json!({
            "type": "apiKey",
            "in": "cookie",
            "name": "tb_session",
            "description": document["components"]["securitySchemes"]["session"]["description"],
        })
    );
    // Open to anyone: signing in and its help, the health checks, and the keys that verify
    // identity tokens.
    let open = [
        ("/api/session", "post"),
        ("/api/sign-in", "get"),
        ("/healthz", "get"),
        ("/readyz", "get"),
        ("/.well-known/jwks.json", "get"),
    ];
    // Under /api/v1 for the host module, but only with the session: the signed-in user, an
    // identity token for a tool, and the server's fetch for a tool.
    let session_only = [
        "/api/v1/me",
        "/api/v1/tools/{slug}/token",
        "/api/v1/tools/{slug}/fetch",
    ];
    let mut session_operations = 0;
    for (path, method, operation) in operations(&document) {
        let security = &operation["security"];
        if open.contains(&(path.as_str(), method.as_str())) {
            assert!(security.is_null(), "{method} {path}: {security}");
        } else if path.starts_with("/api/v1/") && !session_only.contains(&path.as_str()) {
            assert!(
                security[0]["api_key"].is_array(),
                "{method} {path}: {security}"
            );
        } else if (path.as_str(), method.as_str()) == ("/api/session", "delete") {
            // Signing out works signed in or not.
            assert_eq!(security, &json!([{}, {"session": []}]), "{method} {path}");
            session_operations += 1;
        } else {
            assert_eq!(security, &json!([{"session": []}]), "{method} {path}");
            session_operations += 1;
        }
    }
    // The session API: reading and ending the session, the user's own preferences, the
    // signed-in user (`/api/v1/me`), the tool list, a tool's identity token and fetch, the event
    // stream, the settings of keys, tools and the organisation, the dev tools' reports.
    assert_eq!(session_operations, 20, "{document}");
}

#[tokio::test]
async fn every_operation_has_a_one_line_summary_and_its_whole_description() {
    let document = document().await;
    for (path, method, operation) in operations(&document) {
        let summary = operation["summary"].as_str().unwrap_or_default();
        assert!(
            !summary.is_empty()
                && !summary.contains('\n')
                && !summary.contains('`')
                && !summary.ends_with('.')
                && summary.len() <= 120
                && summary.chars().next().is_some_and(char::is_uppercase),
            "{method} {path}: {summary:?}"
        );
        let description = operation["description"].as_str().unwrap_or_default();
        assert!(
            description.replace('`', "").starts_with(summary),
            "{method} {path}: the description does not open with the summary: {description:?}"
        );
    }
    let list = &document["paths"]["/api/v1/customers"]["get"];
    assert_eq!(list["summary"], "The tenant's customers, paged");
}

#[tokio::test]
async fn the_quote_operations_document_etag_if_match_idempotency_key_and_412() {
    let document = document().await;
    let quotes = &document["paths"];
    let header = |response: &Value, name: &str| response["headers"][name].clone();
    // Every answer with a quote carries its ETag, always.
    for (path, method, status) in [
        ("/api/v1/quotes/{id}", "get", "200"),
        ("/api/v1/quotes", "post", "201"),
        ("/api/v1/quotes/{id}", "patch", "200"),
        ("/api/v1/quotes/{id}/lines", "put", "200"),
        ("/api/v1/quotes/{id}/send", "post", "200"),
    ] {
        let etag = header(&quotes[path][method]["responses"][status], "ETag");
        assert_eq!(etag["required"], true, "{method} {path}: {etag}");
        assert_eq!(etag["schema"]["type"], "string", "{method} {path}");
    }
    // The changes take If-Match (and, but for sending, Idempotency-Key), say when they replay,
    // and refuse a version the quote no longer has with 412, CONFLICT and the current ETag.
    for (path, method) in [
        ("/api/v1/quotes/{id}", "patch"),
        ("/api/v1/quotes/{id}/lines", "put"),
        ("/api/v1/quotes/{id}/send", "post"),
    ] {
        let operation = &quotes[path][method];
        let parameter = |name: &str| {
            operation["parameters"]
                .as_array()
                .unwrap()
                .iter()
                .find(|parameter| parameter["name"] == name)
                .unwrap_or_else(|| panic!("{method} {path} has no {name}"))
                .clone()
        };
        let if_match = parameter("If-Match");
        assert_eq!(if_match["in"], "header");
        assert_eq!(if_match["required"], false);
        assert_eq!(
            if_match["schema"]["pattern"],
            toolbridge_protocol::versions::IF_MATCH_PATTERN,
            "{method} {path}: the pattern the server takes"
        );
        if path.ends_with("/send") {
            assert!(
                operation["parameters"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .all(|parameter| parameter["name"] != "Idempotency-Key"),
                "a second send is refused as QUOTE_LOCKED: sending takes no key"
            );
        } else {
            let idempotency_key = parameter("Idempotency-Key");
            assert_eq!(idempotency_key["in"], "header");
            assert_eq!(idempotency_key["schema"]["maxLength"], 255);
            let replayed = header(&operation["responses"]["200"], "Idempotent-Replayed");
            assert_eq!(replayed["required"], false, "{method} {path}");
        }
        let refused = &operation["responses"]["412"];
        assert_eq!(
            refused["content"]["application/problem+json"]["schema"]["$ref"],
            "#/components/schemas/Problem",
            "{method} {path}"
        );
        assert_eq!(header(refused, "ETag")["required"], true, "{method} {path}");
    }
}
