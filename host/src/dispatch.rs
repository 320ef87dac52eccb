//! Bridge calls arriving on a tool's private port: decoded and authorised
//! with `protocol`, answered from the backend or the open quote (or refused
//! at once with `OFFLINE` when they need the server and it cannot be
//! reached), and logged.

use std::borrow::Cow;
use std::rc::Rc;

use js_sys::{Array, JsString, Promise};
use serde::Serialize;
use serde::de::{DeserializeOwned, IgnoredAny};
use serde_json::Value;
use toolbridge_protocol::Error;
use toolbridge_protocol::add_lines::ValidBatch;
use toolbridge_protocol::capability::Capability;
use toolbridge_protocol::connectivity::{Connectivity, not_sent};
use toolbridge_protocol::context::BridgeContextDto;
use toolbridge_protocol::create_quote::validate_bridge_create;
use toolbridge_protocol::fetch::{FetchRequest, FetchResponse};
use toolbridge_protocol::identity::IdentityToken;
use toolbridge_protocol::manifest::ToolType;
use toolbridge_protocol::method::Method;
use toolbridge_protocol::notification::{
    SessionEndReason, ToolNotification, read_tool_notification,
};
use toolbridge_protocol::paging::{BridgePagedResult, ListRequest, PageRequest, read_list_request};
use toolbridge_protocol::quote::{BridgeCreateQuoteResult, QuoteDto};
use toolbridge_protocol::rpc::{JSONRPC_VERSION, Rejected, RpcId, RpcResponse, decode_call};
use toolbridge_protocol::ui::{
    ConfirmRequest, ToastKind, read_confirm, read_open_quote, read_toast,
};
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{AbortController, MessagePort};

use crate::backend::FETCH_TIMEOUT_MS;
use crate::debug::{AddLinesPhases, BlockedRecord, CallRecord, DroppedRecord};
use crate::editor::{Change, Editor};
use crate::host::Shared;
use crate::json;
use crate::lines;
use crate::tool_events::tell_deprecation;

/// Who is calling: read from the registry when the message arrives, never
/// from the message.
#[derive(Debug, Clone)]
struct Caller {
    /// The mount.
    key: u32,
    slug: String,
    /// The tool's name, as the page's hooks show it.
    name: String,
    tool_type: ToolType,
}

// The names every call and reply use, made into JavaScript strings once
// instead of on every call.
// (rustfmt would drop the values: they are not Rust syntax outside the macro.)
#[rustfmt::skip]
#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(thread_local_v2, static_string)]
    static JSONRPC_KEY: JsString = "jsonrpc";
    #[wasm_bindgen(thread_local_v2, static_string)]
    static JSONRPC_VALUE: JsString = "2.0";
    #[wasm_bindgen(thread_local_v2, static_string)]
    static ID_KEY: JsString = "id";
    #[wasm_bindgen(thread_local_v2, static_string)]
    static METHOD_KEY: JsString = "method";
    #[wasm_bindgen(thread_local_v2, static_string)]
    static PARAMS_KEY: JsString = "params";
    #[wasm_bindgen(thread_local_v2, static_string)]
    static RESULT_KEY: JsString = "result";
}

// The literal above must stay the protocol's version.
const _: () = assert!(matches!(JSONRPC_VERSION.as_bytes(), b"2.0"));

/// A call's envelope, read straight from the message object: only `params`
/// crosses into Rust as JSON, and only when the method reads it.
struct Envelope {
    /// The id as the tool sent it, echoed in the reply.
    id: JsValue,
    method: Method,
    params: JsValue,
}

impl Envelope {
    /// The envelope of a well-formed call; `None` for anything else, which
    /// [`decode_call`] then explains.
    fn read(data: &JsValue) -> Option<Self> {
        if !data.is_object() {
            return None;
        }
        let get = |key: &JsString| js_sys::Reflect::get(data, key).ok();
        // Compared in JavaScript: no copy of the string into Rust.
        let version = JSONRPC_KEY.with(get)?;
        if !JSONRPC_VALUE.with(|expected| version == ***expected) {
            return None;
        }
        let id = ID_KEY.with(get)?;
        let id_ok = id.as_string().is_some()
            || id
                .as_f64()
                .is_some_and(|n| n.fract() == 0.0 && n.abs() <= MAX_SAFE_INTEGER);
        if !id_ok {
            return None;
        }
        let method = Method::from_name(&METHOD_KEY.with(get)?.as_string()?)?;
        Some(Self {
            id,
            method,
            params: PARAMS_KEY.with(get).unwrap_or(JsValue::UNDEFINED),
        })
    }
}

/// Ids up to this are exact both as JavaScript numbers and as `i64`.
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// A successful answer, as the JavaScript value the tool is given.
struct Answer(JsValue);

type Outcome = Result<(Answer, Option<Change>), Error>;

/// Handles one message from a tool's port: every message gets an answer
/// (a JSON-RPC error when it is not a call), posted back on the same port.
/// Calls that need no backend request are answered before this returns.
pub(crate) fn on_port_message(shared: &Rc<Shared>, key: u32, port: &MessagePort, data: &JsValue) {
    let started = shared.now();
    let Some(caller) = shared.tools.borrow().get(key).map(|mounted| Caller {
        key,
        slug: mounted.tool.slug.clone(),
        name: mounted.tool.title.clone(),
        tool_type: mounted.tool.tool_type,
    }) else {
        return;
    };
    let Some(call) = Envelope::read(data) else {
        reject(shared, &caller, started, port, data);
        return;
    };
    let remote = match answer_now(shared, &caller, call.method, &call.params, started) {
        Ok(outcome) => {
            settle(shared, &caller, started, port, &call, outcome);
            return;
        }
        // Not sent at all while the server cannot be reached.
        Err(_) if call.method.needs_server() && !shared.reach.online() => {
            let refused = Err(not_sent(call.method.name()));
            settle(shared, &caller, started, port, &call, refused);
            return;
        }
        Err(remote) => remote,
    };
    let shared = Rc::clone(shared);
    let port = port.clone();
    wasm_bindgen_futures::spawn_local(async move {
        let outcome = match (remote, json::from_js(&call.params)) {
            // Read from the message already: its bytes never go through JSON.
            (Remote::Fetch(request), _) => fetch(&shared, &caller, &request).await,
            (remote, Some(params)) => run(&shared, &caller, &port, remote, &params).await,
            (_, None) => Err(unsendable()),
        };
        settle(&shared, &caller, started, &port, &call, outcome);
    });
}

/// Answers a message that is not a well-formed call, saying why. A
/// notification from bridge.js (what the tool's frame refused, the page's
/// height) is acted on instead, and gets no answer.
fn reject(shared: &Shared, caller: &Caller, started: f64, port: &MessagePort, data: &JsValue) {
    let value = json::from_js(data);
    if let Some((method, notification)) = value.as_ref().and_then(read_tool_notification) {
        match notification {
            Ok(ToolNotification::Blocked(report)) => shared.debug.blocked(BlockedRecord {
                tool: caller.slug.clone(),
                what: report.kind,
                advice: report.advice(),
                detail: report.detail,
            }),
            Ok(ToolNotification::Resize(height)) => shared.resize_frame(caller.key, height),
            Err(error) => drop_malformed(shared, caller, method, &error),
        }
        return;
    }
    let rejected = match &value {
        Some(value) => decode_call(value).err(),
        None => None,
    }
    .unwrap_or_else(|| Rejected {
        id: None,
        error: Error::invalid("", "a call must be JSON data (a JSON-RPC 2.0 object)"),
    });
    let claimed = value
        .as_ref()
        .and_then(|v| v.get("method").and_then(Value::as_str))
        .map_or(Cow::Borrowed("(not a call)"), |m| Cow::Owned(m.to_owned()));
    let reply = json::to_js(&RpcResponse::from(rejected.clone()));
    finish(
        shared,
        caller,
        claimed,
        started,
        port,
        reply,
        Err(&rejected.error),
    );
}

/// Drops a notification from bridge.js whose params are not what its
/// method takes, and logs why.
fn drop_malformed(shared: &Shared, caller: &Caller, method: &str, error: &Error) {
    let origin = shared
        .tools
        .borrow()
        .get(caller.key)
        .map(|mounted| mounted.tool.origin.clone())
        .unwrap_or_default();
    shared.debug.dropped(DroppedRecord {
        reason: format!("a malformed {method} report: {error}"),
        origin,
        tool: Some(caller.slug.clone()),
    });
}

/// Replies to a call and records it; listeners hear of a change after the
/// tool has its answer.
fn settle(
    shared: &Shared,
    caller: &Caller,
    started: f64,
    port: &MessagePort,
    call: &Envelope,
    outcome: Outcome,
) {
    if matches!(outcome, Err(Error::Unauthenticated(_))) {
        shared.end_session(SessionEndReason::Expired);
    }
    let method = call.method.name();
    match outcome {
        Ok((Answer(result), change)) => {
            let reply = js_sys::Object::new();
            let set = |key: &JsString, value: &JsValue| {
                let _ = js_sys::Reflect::set(&reply, key, value);
            };
            JSONRPC_VALUE.with(|version| JSONRPC_KEY.with(|key| set(key, version)));
            ID_KEY.with(|key| set(key, &call.id));
            RESULT_KEY.with(|key| set(key, &result));
            let reply = Ok(JsValue::from(reply));
            if let Some(Change::LinesAdded {
                deprecation: Some(deprecation),
                ..
            }) = &change
            {
                // Before the reply: the tool's console says so by the time
                // its call resolves.
                tell_deprecation(port, *deprecation);
            }
            let duration_ms = finish(shared, caller, method.into(), started, port, reply, Ok(()));
            if let Some(change) = change {
                shared.emit_change(&change);
            }
            if call.method == Method::QuotesAddLines {
                let mut phases = shared.add_lines_phases.get();
                phases.reply_ms =
                    duration_ms - (phases.read_ms + phases.validate_ms + phases.merge_ms);
                phases.notify_ms = shared.now() - started - duration_ms;
                shared.add_lines_phases.set(phases);
            }
        }
        Err(error) => {
            let id =
                json::from_js(&call.id).and_then(|id| serde_json::from_value::<RpcId>(id).ok());
            let reply = json::to_js(&RpcResponse::failure(id, &error));
            finish(
                shared,
                caller,
                method.into(),
                started,
                port,
                reply,
                Err(&error),
            );
        }
    }
}

/// Posts the reply and records the call; returns the call's duration (to
/// the reply posted).
fn finish(
    shared: &Shared,
    caller: &Caller,
    method: Cow<'static, str>,
    started: f64,
    port: &MessagePort,
    reply: Result<JsValue, Error>,
    outcome: Result<(), &Error>,
) -> f64 {
    match reply {
        // A closed port (the tool unmounted or reloaded) takes no answer.
        Ok(reply) => {
            let _ = port.post_message(&reply);
        }
        Err(error) => web_sys::console::error_1(&JsValue::from_str(&error.to_string())),
    }
    let duration_ms = shared.now() - started;
    shared.debug.call(CallRecord {
        tool: caller.slug.clone(),
        method,
        duration_ms,
        outcome: outcome.map_or_else(|e| e.code().as_str(), |()| "ok"),
        message: outcome.err().map(ToString::to_string),
    });
    duration_ms
}

/// The error for params that are not plain data.
fn unsendable() -> Error {
    Error::invalid("params", "must be plain JSON data")
}

/// A call that needs the backend or the user, as [`answer_now`] leaves it
/// for [`run`].
enum Remote {
    /// `context.get` before the user is known.
    Context,
    /// `quotes.create`.
    Create,
    /// One of the list methods.
    List(Method),
    /// `ui.confirm`: waits for the user's answer.
    Confirm,
    /// `ui.openQuote`: checks the quote, then waits for the page.
    OpenQuote,
    /// `auth.getToken`, for a tool mounted with `identity`.
    Token,
    /// `fetch`, for a tool mounted with `fetch`: the request as read from
    /// the call and checked.
    Fetch(FetchRequest),
}

/// Answers at once when no backend request is needed: `context.get` once the
/// user is known, `quotes.addLines`, `quotes.getOpen`, `settings.get`,
/// `ui.toast` and `connectivity.get` always, `auth.getToken` for a tool
/// mounted without `identity`, `fetch` for a tool mounted without `fetch` or
/// with a request that breaks a rule, and any call the tool's type forbids.
/// Otherwise says what the backend (or the user) must be asked.
fn answer_now(
    shared: &Shared,
    caller: &Caller,
    method: Method,
    params: &JsValue,
    started: f64,
) -> Result<Outcome, Remote> {
    if let Err(error) = method.authorize_tool(caller.tool_type) {
        return Ok(Err(error));
    }
    match method {
        Method::ContextGet => shared
            .context_js()
            .map(|context| Ok((Answer(context), None)))
            .ok_or(Remote::Context),
        Method::QuotesAddLines => Ok(add_lines(shared, caller, params, started)),
        Method::QuotesGetOpen => Ok(shared
            .editor
            .borrow()
            .for_tools()
            .ok_or(Error::NoOpenQuote)
            .and_then(|view| json::to_js(&view))
            .map(|view| (Answer(view), None))),
        Method::SettingsGet => Ok(settings(shared, caller)),
        Method::ConnectivityGet => Ok(json::to_js(&Connectivity {
            online: shared.reach.online(),
        })
        .map(|state| (Answer(state), None))),
        Method::UiToast => Ok(toast(shared, caller, params)),
        Method::UiConfirm => Err(Remote::Confirm),
        // Refused at once where the page has not set its hook, online or not.
        Method::UiOpenQuote => match shared.hooks.for_capability(Capability::UiOpenQuote) {
            Ok(_) => Err(Remote::OpenQuote),
            Err(error) => Ok(Err(error)),
        },
        Method::AuthGetToken => match may_have_token(shared, caller) {
            Ok(()) => Err(Remote::Token),
            Err(error) => Ok(Err(error)),
        },
        // Checked here, before any round trip; the server checks it again.
        Method::Fetch => {
            match may_fetch(shared, caller).and_then(|()| crate::fetch::read_request(params)) {
                Ok(request) => Err(Remote::Fetch(request)),
                Err(error) => Ok(Err(error)),
            }
        }
        Method::QuotesCreate => Err(Remote::Create),
        Method::CustomersList
        | Method::ProductsList
        | Method::TaskTemplatesList
        | Method::CostItemsList
        | Method::JobsList
        | Method::QuotesList => Err(Remote::List(method)),
    }
}

/// `fetch`: the server makes the request for the tool (`POST
/// /tools/{slug}/fetch`, waiting for the server's own deadline), and the tool
/// gets its answer with the body as bytes.
async fn fetch(shared: &Shared, caller: &Caller, request: &FetchRequest) -> Outcome {
    let path = format!("/tools/{}/fetch", caller.slug);
    let body = serde_json::to_string(request)
        .map_err(|error| Error::Internal(format!("cannot encode the request: {error}")))?;
    let response: FetchResponse = shared
        .backend
        .post_for(&path, &body, FETCH_TIMEOUT_MS)
        .await?;
    Ok((Answer(crate::fetch::answer(&response)?), None))
}

/// Answers a call with the backend's or the user's help.
async fn run(
    shared: &Rc<Shared>,
    caller: &Caller,
    port: &MessagePort,
    remote: Remote,
    params: &Value,
) -> Outcome {
    match remote {
        Remote::Confirm => confirm(shared, caller, port, params).await,
        Remote::OpenQuote => open_quote(shared, caller, params).await,
        Remote::Fetch(request) => fetch(shared, caller, &request).await,
        Remote::Token => {
            // Nothing the tool sent goes with it: the server chooses every claim.
            let path = format!("/tools/{}/token", caller.slug);
            let token: IdentityToken = typed(
                shared.backend.send("POST", &path, None).await?,
                &format!("POST {path}"),
            )?;
            Ok((Answer(json::to_js(&token)?), None))
        }
        Remote::Context => {
            shared.context().await?;
            let context = shared.context_js().ok_or_else(|| {
                Error::Internal("the signed-in user was forgotten while being read".to_owned())
            })?;
            Ok((Answer(context), None))
        }
        Remote::Create => {
            let context = shared.context().await?;
            Method::QuotesCreate.authorize_role(context.user_role)?;
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
            Ok((Answer(json::to_js(&result)?), None))
        }
        Remote::List(method) => {
            let request = read_list_request(params, method.accepts_codes())?;
            if request.codes.as_ref().is_some_and(Vec::is_empty) {
                return Ok((
                    Answer(json::to_js(
                        &PageRequest::default().envelope(Vec::<Value>::new(), 0),
                    )?),
                    None,
                ));
            }
            let path = list_path(method, &request);
            let text = shared.backend.get_raw(&path).await?;
            // The page passes through as the backend sent it, parsed by the
            // browser, once its envelope is known to be right (json.rs has
            // the figures: this is the fastest way there).
            let page = json::parse_as::<BridgePagedResult<IgnoredAny>>(&text).map_err(|why| {
                Error::Internal(format!(
                    "the backend's answer to GET {path} is not the JSON expected ({why})"
                ))
            })?;
            Ok((Answer(page), None))
        }
    }
}

/// `quotes.addLines`: the batch read from its objects ([`lines`]), or as a
/// JSON value ([`json::from_js_at`]) where that way does not read it,
/// validated against the open quote's catalog and merged, each step timed
/// for the bench ([`AddLinesPhases`]).
fn add_lines(shared: &Shared, caller: &Caller, params: &JsValue, started: f64) -> Outcome {
    let mut phases = AddLinesPhases::default();
    // The batch, once read, validated by `validate` and merged.
    let mut merge = |validate: &mut dyn FnMut(&mut Editor) -> Option<Result<ValidBatch, Error>>| {
        let read = shared.now();
        phases.read_ms = read - started;
        let mut editor = shared.editor.borrow_mut();
        let batch = validate(&mut editor)?;
        let validated = shared.now();
        phases.validate_ms = validated - read;
        let change = batch.and_then(|batch| editor.merge_lines(batch, &caller.slug));
        phases.merge_ms = shared.now() - validated;
        Some(change)
    };
    let by_field = if lines::only_as_value() {
        None
    } else {
        lines::with_flat(params, |flat| {
            merge(&mut |editor| {
                editor.validate_lines_by_field(flat.lines(), |given| lines::give(flat, given))
            })
        })
        .flatten()
    };
    let outcome = by_field.unwrap_or_else(|| {
        lines::read_as_value();
        match json::from_js_at(params) {
            Ok(batch) => merge(&mut |editor| Some(editor.validate_lines(&batch)))
                .unwrap_or_else(|| Err(unsendable())),
            Err(unreadable) => Err(unreadable_batch(&unreadable)),
        }
    });
    shared.add_lines_phases.set(phases);
    outcome.map(|change| (Answer(JsValue::NULL), Some(change)))
}

/// Why an `addLines` batch cannot be read as JSON data, at the place in
/// `lines` it says (`lines[2].description`).
fn unreadable_batch(unreadable: &json::Unreadable) -> Error {
    match unreadable.place() {
        None => unsendable(),
        Some((path, why)) => Error::invalid(format!("lines{path}"), why),
    }
}

/// What the page's `onToast` hook is given.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ToastArgument<'a> {
    tool: &'a str,
    tool_name: &'a str,
    kind: ToastKind,
    message: &'a str,
}

/// What the page's `onConfirm` hook is given (with the `signal` added).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ConfirmArgument<'a> {
    tool: &'a str,
    tool_name: &'a str,
    #[serde(flatten)]
    request: &'a ConfirmRequest,
}

/// What the page's `onNavigate` hook is given.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct NavigateArgument<'a> {
    tool: &'a str,
    tool_name: &'a str,
    quote_id: &'a str,
    url: &'a str,
    unsaved: bool,
}

/// `settings.get`: the install settings the page mounted the tool with (or
/// last set with `setToolSettings`); `NOT_ALLOWED` when it passed none.
fn settings(shared: &Shared, caller: &Caller) -> Outcome {
    let tools = shared.tools.borrow();
    let mounted = tools.get(caller.key).ok_or_else(gone)?;
    let settings = mounted.tool.settings.as_ref().ok_or_else(|| {
        Error::NotAllowed(format!(
            "settings.get is not offered here: the host page mounted {} without settings (check bridge.supports(\"settings.get\") first)",
            caller.name
        ))
    })?;
    Ok((Answer(json::to_js(settings)?), None))
}

/// `NOT_ALLOWED` for `auth.getToken` from a tool the page mounted without
/// `identity` (its manifest does not ask for `permissions.identity`).
fn may_have_token(shared: &Shared, caller: &Caller) -> Result<(), Error> {
    let tools = shared.tools.borrow();
    let mounted = tools.get(caller.key).ok_or_else(gone)?;
    if mounted.tool.identity {
        Ok(())
    } else {
        Err(Error::NotAllowed(format!(
            "auth.getToken is not offered here: the host page mounted {} without identity (its manifest must ask for permissions.identity; check bridge.supports(\"auth.getToken\") first)",
            caller.name
        )))
    }
}

/// `NOT_ALLOWED` for `fetch` from a tool the page mounted without `fetch`
/// (its manifest lists no origin in `permissions.connect`).
fn may_fetch(shared: &Shared, caller: &Caller) -> Result<(), Error> {
    let tools = shared.tools.borrow();
    let mounted = tools.get(caller.key).ok_or_else(gone)?;
    if mounted.tool.fetch {
        Ok(())
    } else {
        Err(Error::NotAllowed(format!(
            "fetch is not offered here: the host page mounted {} without fetch (its manifest must list the origins it calls in permissions.connect; check bridge.supports(\"fetch\") first)",
            caller.name
        )))
    }
}

/// `ui.toast`: the page's hook shows it, within the tool's toast limit.
fn toast(shared: &Shared, caller: &Caller, params: &JsValue) -> Outcome {
    let hook = shared.hooks.for_capability(Capability::UiToast)?;
    let params = json::from_js(params).ok_or_else(unsendable)?;
    let toast = read_toast(&params)?;
    let now = shared.now();
    shared
        .tools
        .borrow_mut()
        .get_mut(caller.key)
        .ok_or_else(gone)?
        .toasts
        .take(now)?;
    let argument = json::to_js(&ToastArgument {
        tool: &caller.slug,
        tool_name: &caller.name,
        kind: toast.kind,
        message: &toast.message,
    })?;
    hook.call1(&JsValue::NULL, &argument)
        .map_err(|thrown| hook_failed("host.onToast", &thrown))?;
    Ok((Answer(JsValue::NULL), None))
}

/// `ui.confirm`: asks the page's hook, one dialog at a time per tool, and
/// answers `false` when the dialog is given up (the tool went away, or its
/// quote was closed).
async fn confirm(shared: &Shared, caller: &Caller, port: &MessagePort, params: &Value) -> Outcome {
    let hook = shared.hooks.for_capability(Capability::UiConfirm)?;
    let request = read_confirm(params)?;
    let dialog = AbortController::new()
        .map_err(|_| Error::Internal("the browser has no AbortController".to_owned()))?;
    {
        let mut tools = shared.tools.borrow_mut();
        // The link the call came on: a reload since has its own.
        let link = tools
            .get_mut(caller.key)
            .and_then(|mounted| mounted.link.as_mut())
            .filter(|link| JsValue::from(&link.port) == JsValue::from(port))
            .ok_or_else(gone)?;
        if link.confirm.is_some() {
            return Err(Error::NotAllowed(format!(
                "ui.confirm: {} already has a dialog open; ask again once it is answered",
                caller.name
            )));
        }
        link.confirm = Some(dialog.clone());
    }
    let asked = ask(&hook, caller, &request, &dialog).await;
    if let Some(link) = shared
        .tools
        .borrow_mut()
        .get_mut(caller.key)
        .and_then(|mounted| mounted.link.as_mut())
    {
        if link
            .confirm
            .as_ref()
            .is_some_and(|open| JsValue::from(open) == JsValue::from(&dialog))
        {
            link.confirm = None;
        }
    }
    Ok((Answer(JsValue::from_bool(asked?)), None))
}

/// Calls the `onConfirm` hook and waits for its answer, or for the dialog to
/// be given up, whichever comes first.
async fn ask(
    hook: &js_sys::Function,
    caller: &Caller,
    request: &ConfirmRequest,
    dialog: &AbortController,
) -> Result<bool, Error> {
    let signal = dialog.signal();
    let argument = json::to_js(&ConfirmArgument {
        tool: &caller.slug,
        tool_name: &caller.name,
        request,
    })?;
    let _ = js_sys::Reflect::set(&argument, &JsValue::from_str("signal"), &signal);
    let answer = hook
        .call1(&JsValue::NULL, &argument)
        .map_err(|thrown| hook_failed("host.onConfirm", &thrown))?;
    // Settles with the abort event, which is not `true`.
    let given_up = Promise::new(&mut |resolve, _| {
        let _ = signal.add_event_listener_with_callback("abort", &resolve);
    });
    let first = Promise::race(&Array::of2(&Promise::resolve(&answer), &given_up));
    let answer = JsFuture::from(first)
        .await
        .map_err(|thrown| hook_failed("host.onConfirm", &thrown))?;
    Ok(answer.as_bool() == Some(true))
}

/// `ui.openQuote`: checks that the quote exists for the user, then lets the
/// page's hook take them there; answers whether it did.
async fn open_quote(shared: &Shared, caller: &Caller, params: &Value) -> Outcome {
    let hook = shared.hooks.for_capability(Capability::UiOpenQuote)?;
    let id = read_open_quote(params)?;
    let path = format!(
        "/quotes/{}",
        String::from(js_sys::encode_uri_component(&id))
    );
    match shared.backend.get(&path).await {
        Ok(_) => {}
        Err(Error::NotFound(_)) => {
            return Err(Error::NotFound(format!(
                "there is no quote {id:?} in the signed-in user's organisation"
            )));
        }
        Err(error) => return Err(error),
    }
    let unsaved = shared
        .editor
        .borrow()
        .session()
        .is_some_and(crate::editor::Session::is_dirty);
    let argument = json::to_js(&NavigateArgument {
        tool: &caller.slug,
        tool_name: &caller.name,
        quote_id: &id,
        url: &BridgeCreateQuoteResult::deep_link(&id),
        unsaved,
    })?;
    let answer = hook
        .call1(&JsValue::NULL, &argument)
        .map_err(|thrown| hook_failed("host.onNavigate", &thrown))?;
    let went = JsFuture::from(Promise::resolve(&answer))
        .await
        .map_err(|thrown| hook_failed("host.onNavigate", &thrown))?;
    Ok((
        Answer(JsValue::from_bool(went.as_bool() == Some(true))),
        None,
    ))
}

/// The error for a tool that was unmounted or reloaded while its call ran.
fn gone() -> Error {
    Error::Internal("the tool was unmounted or reloaded while the call ran".to_owned())
}

/// The error for a page hook that threw or rejected.
fn hook_failed(hook: &str, thrown: &JsValue) -> Error {
    let what = thrown
        .dyn_ref::<js_sys::Error>()
        .map(|error| String::from(error.message()))
        .or_else(|| thrown.as_string())
        .unwrap_or_else(|| "a value that is not an Error".to_owned());
    Error::Internal(format!("the host page's {hook} hook failed: {what}"))
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

/// A backend answer read as `T`.
pub(crate) fn typed<T: DeserializeOwned>(body: Value, what: &str) -> Result<T, Error> {
    serde_json::from_value(body).map_err(|error| unexpected_shape(what, &error))
}

/// The error for a backend answer that is not the shape the host expects.
fn unexpected_shape(what: &str, error: &serde_json::Error) -> Error {
    Error::Internal(format!(
        "the backend's answer to {what} has an unexpected shape ({error})"
    ))
}

/// The signed-in user, as `GET /me` reports it.
pub(crate) async fn fetch_context(shared: &Shared) -> Result<BridgeContextDto, Error> {
    typed(shared.backend.get("/me").await?, "GET /me")
}
