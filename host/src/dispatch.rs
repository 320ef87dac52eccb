//! Bridge calls arriving on a tool's private port: decoded and authorised
//! with `protocol`, answered from the backend or the open quote, and logged.

use std::rc::Rc;

use serde::de::DeserializeOwned;
use serde_json::Value;
use toolbridge_protocol::Error;
use toolbridge_protocol::context::BridgeContextDto;
use toolbridge_protocol::create_quote::validate_bridge_create;
use toolbridge_protocol::manifest::ToolType;
use toolbridge_protocol::method::Method;
use toolbridge_protocol::paging::{BridgePagedResult, ListRequest, PageRequest, read_list_request};
use toolbridge_protocol::quote::{BridgeCreateQuoteResult, QuoteDto};
use toolbridge_protocol::rpc::{RpcResponse, decode_call};
use wasm_bindgen::JsValue;
use web_sys::MessagePort;

use crate::debug::CallRecord;
use crate::editor::Change;
use crate::host::Shared;
use crate::json;

/// Who is calling: read from the registry when the message arrives, never
/// from the message.
#[derive(Debug, Clone)]
struct Caller {
    slug: String,
    tool_type: ToolType,
}

/// Handles one message from a tool's port: every message gets an answer
/// (JSON-RPC error when it is not a call), posted back on the same port.
pub(crate) fn on_port_message(shared: &Rc<Shared>, key: u32, port: &MessagePort, data: &JsValue) {
    let started = shared.now();
    let Some(caller) = shared.tools.borrow().get(key).map(|mounted| Caller {
        slug: mounted.tool.slug.clone(),
        tool_type: mounted.tool.tool_type,
    }) else {
        return;
    };
    let call = json::from_js(data)
        .ok_or_else(|| toolbridge_protocol::rpc::Rejected {
            id: None,
            error: Error::invalid("", "a call must be JSON data (a JSON-RPC 2.0 object)"),
        })
        .and_then(|value| decode_call(&value));
    let call = match call {
        Ok(call) => call,
        Err(rejected) => {
            let claimed = json::from_js(data)
                .and_then(|v| v.get("method").and_then(Value::as_str).map(str::to_owned))
                .unwrap_or_else(|| "(not a call)".to_owned());
            finish(
                shared,
                &caller,
                &claimed,
                started,
                port,
                &RpcResponse::from(rejected.clone()),
                Err(&rejected.error),
            );
            return;
        }
    };
    let shared = Rc::clone(shared);
    let port = port.clone();
    wasm_bindgen_futures::spawn_local(async move {
        let outcome = run(&shared, &caller, call.method, &call.params).await;
        if matches!(outcome, Err(Error::Unauthenticated(_))) {
            shared.forget_context();
        }
        let (response, change) = match &outcome {
            Ok((result, change)) => (
                RpcResponse::success(call.id, result.clone()),
                change.clone(),
            ),
            Err(error) => (RpcResponse::failure(Some(call.id), error), None),
        };
        finish(
            &shared,
            &caller,
            call.method.name(),
            started,
            &port,
            &response,
            outcome.as_ref().map(|_| ()),
        );
        // Listeners hear of a change after the tool has its answer.
        if let Some(change) = change {
            shared.emit_change(&change);
        }
    });
}

/// Posts the reply and records the call.
fn finish(
    shared: &Shared,
    caller: &Caller,
    method: &str,
    started: f64,
    port: &MessagePort,
    response: &RpcResponse,
    outcome: Result<(), &Error>,
) {
    match json::to_js(response) {
        // A closed port (the tool unmounted or reloaded) takes no answer.
        Ok(reply) => {
            let _ = port.post_message(&reply);
        }
        Err(error) => web_sys::console::error_1(&JsValue::from_str(&error.to_string())),
    }
    shared.debug.call(CallRecord {
        tool: caller.slug.clone(),
        method: method.to_owned(),
        duration_ms: shared.now() - started,
        outcome: outcome.map_or_else(|e| e.code().as_str().to_owned(), |()| "ok".to_owned()),
        message: outcome.err().map(ToString::to_string),
    });
}

/// Answers one call.
async fn run(
    shared: &Rc<Shared>,
    caller: &Caller,
    method: Method,
    params: &Value,
) -> Result<(Value, Option<Change>), Error> {
    method.authorize_tool(caller.tool_type)?;
    match method {
        Method::ContextGet => Ok((encode(&shared.context().await?)?, None)),
        Method::QuotesCreate => {
            let context = shared.context().await?;
            method.authorize_role(context.user_role)?;
            // Checked here first so that a bad request costs no round trip;
            // the backend checks it again with the same rules.
            validate_bridge_create(params)?;
            let created: QuoteDto = typed(
                shared.backend.send("POST", "/quotes", Some(params)).await?,
                "POST /quotes",
            )?;
            let summary = created.summary();
            let result = BridgeCreateQuoteResult {
                url: Some(BridgeCreateQuoteResult::deep_link(&summary.id)),
                id: summary.id,
                reference: summary.reference,
                total: summary.total,
            };
            Ok((encode(&result)?, None))
        }
        Method::QuotesAddLines => {
            let change = shared.editor.borrow_mut().add_lines(params, &caller.slug)?;
            Ok((Value::Null, Some(change)))
        }
        Method::CustomersList
        | Method::ProductsList
        | Method::TaskTemplatesList
        | Method::CostItemsList
        | Method::JobsList
        | Method::QuotesList => {
            let request = read_list_request(params, method.accepts_codes())?;
            if request.codes.as_ref().is_some_and(Vec::is_empty) {
                return Ok((
                    encode(&PageRequest::default().envelope(Vec::<Value>::new(), 0))?,
                    None,
                ));
            }
            let path = list_path(method, &request);
            let body = shared.backend.get(&path).await?;
            // The page passes through as the backend sent it, once its
            // envelope is known to be right.
            typed::<BridgePagedResult<Value>>(body.clone(), &format!("GET {path}"))?;
            Ok((body, None))
        }
    }
}

/// The REST path (with query) a list method reads.
fn list_path(method: Method, request: &ListRequest) -> String {
    let resource = match method {
        Method::CustomersList => "/customers",
        Method::ProductsList => "/products",
        Method::TaskTemplatesList => "/task-templates",
        Method::CostItemsList => "/cost-items",
        Method::JobsList => "/jobs",
        _ => "/quotes",
    };
    match &request.codes {
        Some(codes) => {
            let codes: Vec<String> = codes
                .iter()
                .map(|code| String::from(js_sys::encode_uri_component(code)))
                .collect();
            format!("{resource}?codes={}", codes.join(","))
        }
        None => format!(
            "{resource}?page={}&pageSize={}",
            request.paging.page(),
            request.paging.page_size()
        ),
    }
}

fn encode<T: serde::Serialize>(value: &T) -> Result<Value, Error> {
    serde_json::to_value(value)
        .map_err(|error| Error::Internal(format!("cannot encode the answer: {error}")))
}

/// A backend answer read as `T`.
pub(crate) fn typed<T: DeserializeOwned>(body: Value, what: &str) -> Result<T, Error> {
    serde_json::from_value(body).map_err(|error| {
        Error::Internal(format!(
            "the backend's answer to {what} has an unexpected shape ({error})"
        ))
    })
}

/// The signed-in user, as `GET /me` reports it.
pub(crate) async fn fetch_context(shared: &Shared) -> Result<BridgeContextDto, Error> {
    typed(shared.backend.get("/me").await?, "GET /me")
}
