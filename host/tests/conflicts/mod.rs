//! Saves that keep to the version the host has (`If-Match` with the quote's `ETag`) and carry
//! an `Idempotency-Key` per unsaved state: a save retried after its answer was lost lands once,
//! a quote whose lines changed on another device meanwhile is a `CONFLICT` that leaves the open
//! quote as it was (a change of its header alone is none), `host.serverQuote()` shows the other
//! version, and `save({overwrite: true})` keeps this one.

use serde_json::{Value, json};
use toolbridge_host::Host;
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::wasm_bindgen_test;

use crate::fixture::*;

#[wasm_bindgen(module = "/tests/support/backend.js")]
extern "C" {
    #[wasm_bindgen(js_name = answerLosingBackend)]
    fn answer_losing_backend(drop_url: &str) -> JsValue;
    #[wasm_bindgen(js_name = relayBackend)]
    fn relay_backend() -> JsValue;
}

#[wasm_bindgen(module = "/tests/support/harness.js")]
extern "C" {
    #[wasm_bindgen(js_name = api)]
    fn api_with(url: &str, method: &str, body: &JsValue, headers: &JsValue) -> js_sys::Promise;
}

fn field(object: &JsValue, key: &str) -> JsValue {
    js_sys::Reflect::get(object, &JsValue::from_str(key)).unwrap()
}

/// A host on the real server whose requests go through the page backend `relay`, checking
/// every 100 ms while offline.
fn host_through(relay: &JsValue) -> Host {
    let options = js(&json!({"apiBase": api_base(), "debug": true, "connectivityCheckMs": 100}));
    js_sys::Reflect::set(
        &options,
        &JsValue::from_str("backend"),
        &field(relay, "backend"),
    )
    .unwrap();
    Host::new(&options).unwrap()
}

/// The requests the backend saw, with `method` and a path ending in `suffix`.
fn seen(relay: &JsValue, method: &str, suffix: &str) -> Vec<Value> {
    to_json(&field(relay, "seen"))
        .as_array()
        .unwrap()
        .iter()
        .filter(|request| {
            request["method"] == method && request["url"].as_str().unwrap().ends_with(suffix)
        })
        .cloned()
        .collect()
}

/// The `ETag` of version `version` of quote `id`, as the server writes it.
fn etag(id: &str, version: u32) -> String {
    format!("\"{id}/v{version}\"")
}

/// Quote `id` as the server has it: its `ETag` and the quote.
async fn on_server(id: &str) -> (String, Value) {
    let (status, tag, quote) = other_device("GET", &format!("/api/v1/quotes/{id}"), None).await;
    assert_eq!(status, 200, "{quote}");
    (tag, quote)
}

/// A request of another device of the same user (the page's session, past the host): its
/// status, `ETag` and body.
async fn other_device(method: &str, path: &str, body: Option<Value>) -> (u16, String, Value) {
    let body = body.map_or(JsValue::UNDEFINED, |body| js(&body));
    let answer = resolved(api_with(
        &format!("{}{path}", server()),
        method,
        &body,
        &JsValue::UNDEFINED,
    ))
    .await;
    (
        u16::try_from(answer["status"].as_u64().unwrap()).unwrap(),
        answer["etag"].as_str().unwrap_or_default().to_owned(),
        answer["body"].clone(),
    )
}

/// Another device saves quote `id` with one line of `description`.
async fn saved_elsewhere(id: &str, description: &str) {
    let line = json!({"lineNo": 1, "lineType": "product", "description": description, "qty": 1,
                      "unit": "T_ITEM", "unitPrice": 5, "costPrice": 5, "taxRate": 0.15,
                      "groupId": 0});
    let (status, _, body) = other_device(
        "PUT",
        &format!("/api/v1/quotes/{id}/lines"),
        Some(json!({"lines": [line], "groupKeys": {}})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
}

/// The descriptions of a quote's lines.
fn descriptions(quote: &Value) -> Vec<String> {
    quote["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|line| line["description"].as_str().unwrap().to_owned())
        .collect()
}

/// The page sets line 1's quantity.
fn edit(host: &Host, qty: u32) {
    host.update_line(1, &js(&json!({"qty": qty}))).unwrap();
}

/// The window's `online` event, as the browser fires it when the network is back.
fn back_online() {
    let event = web_sys::Event::new("online").unwrap();
    web_sys::window().unwrap().dispatch_event(&event).unwrap();
}

/// An `Idempotency-Key` as the host makes them.
fn is_key(key: &Value) -> bool {
    key.as_str().is_some_and(|key| {
        key.strip_prefix("save-")
            .is_some_and(|hex| hex.len() == 32 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
    })
}

#[wasm_bindgen_test]
async fn a_save_sends_the_etag_it_had_as_if_match_and_a_key_per_unsaved_state() {
    sign_in(OFFICE).await;
    let id = draft_quote().await;
    let relay = relay_backend();
    let host = host_through(&relay);
    resolved(host.open_quote(id.clone(), &JsValue::UNDEFINED)).await;
    edit(&host, 3);
    resolved(host.save(&JsValue::UNDEFINED)).await;
    edit(&host, 4);
    resolved(host.save(&JsValue::UNDEFINED)).await;
    // Saved, and saved again unchanged: a new state, a new key.
    resolved(host.save(&JsValue::UNDEFINED)).await;

    let puts = seen(&relay, "PUT", "/lines");
    let if_match: Vec<&Value> = puts.iter().map(|put| &put["ifMatch"]).collect();
    assert_eq!(
        if_match,
        [
            &json!(etag(&id, 1)),
            &json!(etag(&id, 2)),
            &json!(etag(&id, 3))
        ],
        "the version opened, then the one each save answered"
    );
    let keys: Vec<&Value> = puts.iter().map(|put| &put["idempotencyKey"]).collect();
    assert!(keys.iter().all(|key| is_key(key)), "{keys:?}");
    assert!(
        keys[0] != keys[1] && keys[1] != keys[2] && keys[0] != keys[2],
        "{keys:?}"
    );
    assert_eq!(on_server(&id).await.0, etag(&id, 4));
    assert!(
        (on_server(&id).await.1["lines"][0]["qty"].as_f64().unwrap() - 4.0).abs() < 1e-9,
        "the last save landed"
    );
}

#[wasm_bindgen_test]
async fn a_save_retried_after_its_answer_was_lost_sends_the_same_key_and_lands_once() {
    sign_in(OFFICE).await;
    let id = draft_quote().await;
    let relay = answer_losing_backend(&format!("{}/drop", faults()));
    let host = host_through(&relay);
    resolved(host.open_quote(id.clone(), &JsValue::UNDEFINED)).await;
    edit(&host, 7);
    let lose = js_sys::Function::from(field(&relay, "loseNextAnswer"));
    lose.call0(&JsValue::NULL).unwrap();
    let failed = rejected(host.save(&JsValue::UNDEFINED)).await;
    assert_eq!(failed["code"], "OFFLINE", "{failed}");
    assert_eq!(
        quote_of(&host)["dirty"],
        true,
        "the host cannot know it landed"
    );
    // It did.
    assert_eq!(on_server(&id).await.0, etag(&id, 2));

    back_online();
    let saved = resolved(host.save(&JsValue::UNDEFINED)).await;
    assert_eq!(saved["dirty"], false);
    let puts = seen(&relay, "PUT", "/lines");
    assert_eq!(puts.len(), 2, "{puts:?}");
    assert_eq!(
        puts[1]["idempotencyKey"], puts[0]["idempotencyKey"],
        "the same changes, the same key"
    );
    assert_eq!(puts[1]["ifMatch"], json!(etag(&id, 1)));
    assert_eq!(puts[1]["body"], puts[0]["body"]);
    assert_eq!(
        (&puts[1]["status"], &puts[1]["replayed"]),
        (&json!(200), &json!("true")),
        "the server answered the first save again"
    );
    // Saved once: the server is at version 2, and the host saves against it next.
    assert_eq!(on_server(&id).await.0, etag(&id, 2));
    edit(&host, 8);
    resolved(host.save(&JsValue::UNDEFINED)).await;
    let puts = seen(&relay, "PUT", "/lines");
    assert_eq!(puts[2]["ifMatch"], json!(etag(&id, 2)));
    assert_ne!(puts[2]["idempotencyKey"], puts[0]["idempotencyKey"]);
    assert_eq!(on_server(&id).await.0, etag(&id, 3));
}

#[wasm_bindgen_test]
async fn changes_made_after_a_save_whose_answer_was_lost_save_over_that_save_without_a_conflict() {
    sign_in(OFFICE).await;
    let id = draft_quote().await;
    let relay = answer_losing_backend(&format!("{}/drop", faults()));
    let host = host_through(&relay);
    resolved(host.open_quote(id.clone(), &JsValue::UNDEFINED)).await;
    edit(&host, 7);
    let lose = js_sys::Function::from(field(&relay, "loseNextAnswer"));
    lose.call0(&JsValue::NULL).unwrap();
    rejected(host.save(&JsValue::UNDEFINED)).await;
    edit(&host, 9);
    back_online();
    // Made against version 1, the save meets version 2, which is the host's own lost save.
    let saved = resolved(host.save(&JsValue::UNDEFINED)).await;
    assert_eq!(saved["dirty"], false);
    let puts = seen(&relay, "PUT", "/lines");
    let statuses: Vec<&Value> = puts.iter().map(|put| &put["status"]).collect();
    assert_eq!(statuses, [&json!(0), &json!(412), &json!(200)]);
    assert_ne!(puts[1]["idempotencyKey"], puts[0]["idempotencyKey"]);
    assert_eq!(puts[2]["idempotencyKey"], puts[1]["idempotencyKey"]);
    assert_eq!(puts[2]["ifMatch"], json!(etag(&id, 2)));
    let (tag, quote) = on_server(&id).await;
    assert_eq!(tag, etag(&id, 3));
    assert!((quote["lines"][0]["qty"].as_f64().unwrap() - 9.0).abs() < 1e-9);
}

#[wasm_bindgen_test]
async fn a_quote_changed_on_another_device_is_a_conflict_that_leaves_the_open_quote_as_it_was() {
    sign_in(OFFICE).await;
    let id = draft_quote().await;
    let relay = relay_backend();
    let host = host_through(&relay);
    resolved(host.open_quote(id.clone(), &JsValue::UNDEFINED)).await;
    edit(&host, 5);
    saved_elsewhere(&id, "From the other device").await;
    let (theirs, _) = on_server(&id).await;
    let before = quote_of(&host);

    let refused = rejected(host.save(&JsValue::UNDEFINED)).await;
    assert_eq!(refused["code"], "CONFLICT", "{refused}");
    let message = refused["message"].as_str().unwrap();
    assert!(message.contains("changed on another device"), "{message}");
    assert!(message.contains("host.serverQuote()"), "{message}");
    assert_eq!(quote_of(&host), before, "the open quote is as it was");
    assert_eq!(quote_of(&host)["dirty"], true);
    assert_eq!(on_server(&id).await.0, theirs, "nothing was saved");
    // The whole save was refused, and its lines never reached the store.
    let (_, server) = on_server(&id).await;
    assert_eq!(descriptions(&server), ["From the other device"]);

    // The page shows both: the server's copy, the open quote untouched.
    let server_copy = resolved(host.server_quote()).await;
    assert_eq!(descriptions(&server_copy), ["From the other device"]);
    assert!(server_copy.get("dirty").is_none(), "{server_copy}");
    assert_eq!(quote_of(&host), before);

    // Send saves first, and is refused the same way: nothing sent.
    let sent = rejected(host.send()).await;
    assert_eq!(sent["code"], "CONFLICT", "{sent}");
    assert_eq!(on_server(&id).await.1["status"], "Draft");

    // The user keeps theirs: saved over the other version.
    let kept = resolved(host.save(&js(&json!({"overwrite": true})))).await;
    assert_eq!(kept["dirty"], false);
    let puts = seen(&relay, "PUT", "/lines");
    let last = puts.last().unwrap();
    assert_eq!(last["ifMatch"], Value::Null, "overwrite sends no If-Match");
    let (tag, server) = on_server(&id).await;
    assert_eq!(descriptions(&server), descriptions(&before));
    assert!((server["lines"][0]["qty"].as_f64().unwrap() - 5.0).abs() < 1e-9);
    // …and the next save is made against that version again.
    edit(&host, 6);
    resolved(host.save(&JsValue::UNDEFINED)).await;
    let puts = seen(&relay, "PUT", "/lines");
    assert_eq!(puts.last().unwrap()["ifMatch"], json!(tag));
}

#[wasm_bindgen_test]
async fn a_header_changed_on_another_device_is_no_conflict_for_a_save_of_the_lines() {
    sign_in(OFFICE).await;
    let id = draft_quote().await;
    let relay = relay_backend();
    let host = host_through(&relay);
    resolved(host.open_quote(id.clone(), &JsValue::UNDEFINED)).await;
    edit(&host, 6);
    let (status, _, changed) = other_device(
        "PATCH",
        &format!("/api/v1/quotes/{id}"),
        Some(json!({"expiryDays": 9})),
    )
    .await;
    assert_eq!(status, 200, "{changed}");
    // A save puts the lines only: made over the header change, which it keeps.
    let saved = resolved(host.save(&JsValue::UNDEFINED)).await;
    assert_eq!(saved["dirty"], false);
    assert_eq!(
        saved["expiryDays"], 9,
        "the open quote shows the new header"
    );
    let puts = seen(&relay, "PUT", "/lines");
    assert_eq!(
        puts.len(),
        2,
        "refused once, then saved over the new version: {puts:?}"
    );
    assert_eq!(puts[0]["ifMatch"], json!(etag(&id, 1)));
    assert_eq!(puts[1]["ifMatch"], json!(etag(&id, 2)));
    assert_eq!(puts[1]["idempotencyKey"], puts[0]["idempotencyKey"]);
    let (tag, server) = on_server(&id).await;
    assert_eq!(tag, etag(&id, 3));
    assert_eq!(server["expiryDays"], 9);
    assert!((server["lines"][0]["qty"].as_f64().unwrap() - 6.0).abs() < 1e-9);
}

#[wasm_bindgen_test]
async fn after_a_conflict_the_page_can_take_the_servers_version() {
    sign_in(OFFICE).await;
    let id = draft_quote().await;
    let host = host();
    resolved(host.open_quote(id.clone(), &JsValue::UNDEFINED)).await;
    edit(&host, 5);
    saved_elsewhere(&id, "Theirs").await;
    assert_eq!(
        rejected(host.save(&JsValue::UNDEFINED)).await["code"],
        "CONFLICT"
    );
    host.close_quote(&js(&json!({"discard": true}))).unwrap();
    let opened = resolved(host.open_quote(id.clone(), &JsValue::UNDEFINED)).await;
    assert_eq!(descriptions(&opened), ["Theirs"]);
    // Opened afresh, it saves against the server's version.
    edit(&host, 2);
    let saved = resolved(host.save(&JsValue::UNDEFINED)).await;
    assert_eq!(saved["dirty"], false);
    assert_eq!(on_server(&id).await.0, etag(&id, 3));
}

#[wasm_bindgen_test]
async fn save_refuses_options_it_does_not_know() {
    sign_in(OFFICE).await;
    let id = draft_quote().await;
    let host = host();
    resolved(host.open_quote(id, &JsValue::UNDEFINED)).await;
    for options in [json!({"overwrite": "yes"}), json!({"force": true})] {
        let error = rejected(host.save(&js(&options))).await;
        assert_eq!(error["code"], "USAGE", "{options}: {error}");
        assert!(
            error["message"]
                .as_str()
                .unwrap()
                .starts_with("save(options)"),
            "{error}"
        );
    }
    let nothing_open = host_at(&api_base(), &json!({}));
    let error = rejected(nothing_open.server_quote()).await;
    assert_eq!(error["code"], "USAGE", "{error}");
}

/// What `host.unsaved()` gives, as the page keeps it (through JSON, as `IndexedDB` or
/// `localStorage` would).
fn kept(host: &Host) -> JsValue {
    let kept = host.unsaved().unwrap();
    let text = js_sys::JSON::stringify(&kept).unwrap();
    js_sys::JSON::parse(&String::from(text)).unwrap()
}

/// `openQuote(id, {restore: kept})` on `host`.
async fn reopen(host: &Host, id: &str, kept: &JsValue) -> Value {
    let options = js(&json!({}));
    js_sys::Reflect::set(&options, &JsValue::from_str("restore"), kept).unwrap();
    resolved(host.open_quote(id.to_owned(), &options)).await
}

#[wasm_bindgen_test]
async fn unsaved_changes_kept_through_a_reload_come_back_unsaved_and_their_lost_save_lands_once() {
    sign_in(OFFICE).await;
    let id = draft_quote().await;
    let relay = answer_losing_backend(&format!("{}/drop", faults()));
    let host = host_through(&relay);
    let opened = resolved(host.open_quote(id.clone(), &JsValue::UNDEFINED)).await;
    assert_eq!(
        host.unsaved().unwrap(),
        JsValue::NULL,
        "nothing unsaved yet"
    );
    assert_eq!(opened["unsavedChanges"], 0);
    edit(&host, 7);
    edit(&host, 8);
    assert_eq!(quote_of(&host)["unsavedChanges"], 2);
    let lose = js_sys::Function::from(field(&relay, "loseNextAnswer"));
    lose.call0(&JsValue::NULL).unwrap();
    assert_eq!(
        rejected(host.save(&JsValue::UNDEFINED)).await["code"],
        "OFFLINE"
    );
    let keep = kept(&host);
    let fields = to_json(&keep);
    assert_eq!(fields["quoteId"], json!(id));
    assert_eq!(fields["changes"], 2);
    assert_eq!(fields["etag"], json!(etag(&id, 1)));
    assert!(is_key(&fields["saveKey"]), "{fields}");
    // The save landed, though the page never heard: the server is at version 2.
    assert_eq!(on_server(&id).await.0, etag(&id, 2));

    // The page is reloaded: a new host, on a relay that loses nothing.
    let relay = relay_backend();
    let reloaded = host_through(&relay);
    let back = reopen(&reloaded, &id, &keep).await;
    // The server has these very lines: the changes are saved, nothing is offered back.
    assert_eq!(back["dirty"], false, "{back}");
    assert!((back["lines"][0]["qty"].as_f64().unwrap() - 8.0).abs() < 1e-9);
    assert!(
        seen(&relay, "PUT", "/lines").is_empty(),
        "nothing saved twice"
    );
    assert_eq!(on_server(&id).await.0, etag(&id, 2));
}

#[wasm_bindgen_test]
async fn unsaved_changes_given_back_are_marked_unsaved_and_saved_with_the_key_they_kept() {
    sign_in(OFFICE).await;
    let id = draft_quote().await;
    let relay = relay_backend();
    let host = host_through(&relay);
    resolved(host.open_quote(id.clone(), &JsValue::UNDEFINED)).await;
    edit(&host, 4);
    // The page is closed before any save.
    let keep_before_save = kept(&host);
    assert_eq!(to_json(&keep_before_save)["saveKey"], Value::Null);

    let reloaded_relay = relay_backend();
    let reloaded = host_through(&reloaded_relay);
    let back = reopen(&reloaded, &id, &keep_before_save).await;
    assert_eq!(back["dirty"], true, "{back}");
    assert_eq!(back["unsavedChanges"], 1);
    assert!((back["lines"][0]["qty"].as_f64().unwrap() - 4.0).abs() < 1e-9);
    assert_eq!(
        on_server(&id).await.0,
        etag(&id, 1),
        "nothing saved by opening"
    );
    // What tools read is the quote as the user left it.
    assert_eq!(to_json(&reloaded.unsaved().unwrap())["changes"], 1);
    let saved = resolved(reloaded.save(&JsValue::UNDEFINED)).await;
    assert_eq!(saved["dirty"], false);
    let puts = seen(&reloaded_relay, "PUT", "/lines");
    assert_eq!(puts.len(), 1, "{puts:?}");
    assert_eq!(puts[0]["ifMatch"], json!(etag(&id, 1)), "made on version 1");
    let (tag, server) = on_server(&id).await;
    assert_eq!(tag, etag(&id, 2));
    assert!((server["lines"][0]["qty"].as_f64().unwrap() - 4.0).abs() < 1e-9);
    assert_eq!(reloaded.unsaved().unwrap(), JsValue::NULL);
}

#[wasm_bindgen_test]
async fn unsaved_changes_given_back_over_a_version_changed_elsewhere_are_a_conflict_on_save() {
    sign_in(OFFICE).await;
    let id = draft_quote().await;
    let host = host();
    resolved(host.open_quote(id.clone(), &JsValue::UNDEFINED)).await;
    edit(&host, 3);
    let keep = kept(&host);
    saved_elsewhere(&id, "From the other device").await;

    let reloaded = crate::fixture::host();
    let back = reopen(&reloaded, &id, &keep).await;
    assert_eq!(back["dirty"], true);
    assert_ne!(
        descriptions(&back),
        ["From the other device"],
        "the user's lines, not the server's"
    );
    let refused = rejected(reloaded.save(&JsValue::UNDEFINED)).await;
    assert_eq!(refused["code"], "CONFLICT", "{refused}");
    let (_, server) = on_server(&id).await;
    assert_eq!(
        descriptions(&server),
        ["From the other device"],
        "nothing overwritten"
    );
}

#[wasm_bindgen_test]
async fn a_restore_of_another_quote_or_of_an_unknown_shape_is_refused_and_opens_nothing() {
    sign_in(OFFICE).await;
    let id = draft_quote().await;
    let other = draft_quote().await;
    let host = host();
    resolved(host.open_quote(id.clone(), &JsValue::UNDEFINED)).await;
    edit(&host, 2);
    let keep = kept(&host);
    host.close_quote(&js(&json!({"discard": true}))).unwrap();

    let options = js(&json!({}));
    js_sys::Reflect::set(&options, &JsValue::from_str("restore"), &keep).unwrap();
    let error = rejected(host.open_quote(other.clone(), &options)).await;
    assert_eq!(error["code"], "USAGE", "{error}");
    assert!(
        error["message"].as_str().unwrap().contains(&id),
        "names the quote kept: {error}"
    );
    assert_eq!(quote_of(&host), Value::Null);

    let mut future = to_json(&keep);
    future["format"] = json!(99);
    let error = rejected(host.open_quote(id.clone(), &js(&json!({"restore": future})))).await;
    assert_eq!(error["code"], "INVALID_PARAMS", "{error}");
    assert!(
        error["message"].as_str().unwrap().contains("format 99"),
        "{error}"
    );
    assert_eq!(quote_of(&host), Value::Null);

    let error = rejected(host.open_quote(id, &js(&json!({"restore": {"quoteId": 5}})))).await;
    assert_eq!(error["code"], "USAGE", "{error}");
}

#[wasm_bindgen_test]
async fn send_sends_only_the_version_this_page_saw() {
    sign_in(OFFICE).await;
    let id = draft_quote().await;
    let relay = relay_backend();
    let host = host_through(&relay);
    resolved(host.open_quote(id.clone(), &JsValue::UNDEFINED)).await;
    edit(&host, 3);
    resolved(host.save(&JsValue::UNDEFINED)).await;
    // Saved here; then changed on another device before the user sends.
    saved_elsewhere(&id, "From the other device").await;

    let refused = rejected(host.send()).await;
    assert_eq!(refused["code"], "CONFLICT", "{refused}");
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .contains("so it was not sent"),
        "{refused}"
    );
    let sends = seen(&relay, "POST", "/send");
    assert_eq!(sends.len(), 1, "{sends:?}");
    assert_eq!(
        sends[0]["ifMatch"],
        json!(etag(&id, 2)),
        "the version saved here"
    );
    let (_, server) = on_server(&id).await;
    assert_eq!(server["status"], "Draft", "nothing sent");
    assert_eq!(quote_of(&host)["status"], "Draft");

    // Opened afresh, the page sends what it now sees.
    host.close_quote(&js(&json!({"discard": true}))).unwrap();
    resolved(host.open_quote(id.clone(), &JsValue::UNDEFINED)).await;
    let sent = resolved(host.send()).await;
    assert_eq!(sent["status"], "Sent");
    assert_eq!(
        seen(&relay, "POST", "/send").last().unwrap()["ifMatch"],
        json!(etag(&id, 3))
    );
}
