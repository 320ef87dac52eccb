//! Feeds arbitrary bytes, read as JSON, to what the host runs on a message
//! from a tool: `Hello::from_message` on window messages, and on port
//! messages `decode_call` and then the reading of the call's params
//! (`read_list_request`, `validate_bridge_create`). A hello is accepted
//! exactly when it is well-formed and reads back the same; an accepted call's
//! method round-trips through its wire name and the call re-encodes to
//! itself; every refusal becomes a well-formed JSON-RPC 2.0 error reply.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};
use toolbridge_protocol::capability::Capability;
use toolbridge_protocol::create_quote::validate_bridge_create;
use toolbridge_protocol::handshake::{HandshakeMessage, Hello, MAX_INSTANCE_CHARS};
use toolbridge_protocol::limits::{MAX_PAGE_SIZE, TEXT_MAX_CHARS};
use toolbridge_protocol::manifest::ToolType;
use toolbridge_protocol::method::Method;
use toolbridge_protocol::paging::{MAX_CODES, read_list_request};
use toolbridge_protocol::rpc::{
    Call, JSONRPC_VERSION, RpcId, RpcRequest, RpcResponse, decode_call,
};
use toolbridge_protocol::ui::{read_confirm, read_open_quote, read_toast};
use toolbridge_protocol::{Error, ErrorCode};
use toolbridge_protocol_fuzz::check_error_reply;

fuzz_target!(|data: &[u8]| {
    let Ok(message) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    check_hello(&message);
    check_handshake(&message);
    match decode_call(&message) {
        Ok(call) => check_call(&message, &call),
        Err(rejected) => {
            let error = &rejected.error;
            assert!(
                matches!(
                    error.code(),
                    ErrorCode::InvalidParams | ErrorCode::MethodNotFound
                ),
                "{error:?}"
            );
            if let Some(id) = &rejected.id {
                assert_eq!(Some(id), request_id(&message).as_ref());
            }
            if let Error::MethodNotFound(name) = error {
                assert_eq!(
                    message.get("method").and_then(Value::as_str),
                    Some(name.as_str())
                );
                assert_eq!(Method::from_name(name), None);
            }
            let reply = RpcResponse::from(rejected.clone());
            check_error_reply(&reply, error, rejected.id.as_ref());
        }
    }
});

/// The id the host answers to, read as `decode_call` reads it.
fn request_id(message: &Value) -> Option<RpcId> {
    serde_json::from_value(message.get("id")?.clone()).ok()
}

/// A hello is accepted exactly when it is `{toolbridge: "hello"}` with a
/// whole `protocol`, a string `sdkVersion` and an `instance` of 1 to 128
/// characters; what is accepted reads back the same.
fn check_hello(message: &Value) {
    let well_formed = message.get("toolbridge") == Some(&json!("hello"))
        && message
            .get("protocol")
            .and_then(Value::as_u64)
            .is_some_and(|protocol| u32::try_from(protocol).is_ok())
        && message.get("sdkVersion").is_some_and(Value::is_string)
        && message
            .get("instance")
            .and_then(Value::as_str)
            .is_some_and(|instance| (1..=MAX_INSTANCE_CHARS).contains(&instance.chars().count()));
    let hello = Hello::from_message(message);
    assert_eq!(hello.is_some(), well_formed, "{message}");
    let Some(hello) = hello else {
        return;
    };
    assert_eq!(message["instance"], json!(hello.instance));
    assert_eq!(message["sdkVersion"], json!(hello.sdk_version));
    assert_eq!(message["protocol"], json!(hello.protocol));
    let again = serde_json::to_value(HandshakeMessage::Hello(hello.clone())).expect("a hello");
    assert_eq!(Hello::from_message(&again), Some(hello));
}

/// Any handshake message that reads writes back to one that reads the same.
fn check_handshake(message: &Value) {
    let Ok(handshake) = serde_json::from_value::<HandshakeMessage>(message.clone()) else {
        return;
    };
    let again = serde_json::to_value(&handshake).expect("a handshake message serialises");
    let back: HandshakeMessage = serde_json::from_value(again).expect("and reads back");
    assert_eq!(back, handshake);
}

/// An accepted call, then what the host does with its params.
fn check_call(message: &Value, call: &Call) {
    assert_eq!(message["jsonrpc"], json!(JSONRPC_VERSION));
    assert_eq!(Method::from_name(call.method.name()), Some(call.method));
    assert_eq!(message["method"], json!(call.method.name()));
    assert_eq!(
        serde_json::to_value(call.method).expect("a method"),
        json!(call.method.name())
    );
    assert_eq!(request_id(message).as_ref(), Some(&call.id));
    assert_eq!(
        &message["id"],
        &serde_json::to_value(&call.id).expect("an id")
    );
    assert_eq!(&call.params, message.get("params").unwrap_or(&Value::Null));
    let request = RpcRequest::new(call.id.clone(), call.method, call.params.clone());
    let encoded = serde_json::to_value(&request).expect("a request serialises");
    assert_eq!(decode_call(&encoded).as_ref(), Ok(call));

    for tool_type in [ToolType::Standalone, ToolType::QuotingExtension] {
        let allowed = call.method.authorize_tool(tool_type).is_ok();
        // A method of the specification is allowed exactly when the welcome
        // grants it; an extension exactly when a page that set up everything
        // would offer its capability.
        let granted = match Capability::of_method(call.method) {
            Some(capability) => capability.offered(tool_type, &Capability::ALL),
            None => Method::granted_to(tool_type).contains(&call.method),
        };
        assert_eq!(allowed, granted);
        if let Err(error) = call.method.authorize_tool(tool_type) {
            check_error_reply(
                &RpcResponse::failure(Some(call.id.clone()), &error),
                &error,
                Some(&call.id),
            );
        }
    }

    let answer = match call.method {
        method if method.is_list() => {
            read_list_request(&call.params, method.accepts_codes()).map(|request| {
                let paging = request.paging;
                assert!(paging.page() >= 1, "{request:?}");
                assert!(
                    (1..=MAX_PAGE_SIZE).contains(&paging.page_size()),
                    "{request:?}"
                );
                if let Some(codes) = &request.codes {
                    assert!(method.accepts_codes());
                    assert!(codes.len() <= MAX_CODES);
                    for code in codes {
                        assert!(!code.is_empty() && code.trim() == code, "{code:?}");
                        assert!(code.chars().count() <= TEXT_MAX_CHARS);
                    }
                }
            })
        }
        Method::QuotesCreate => validate_bridge_create(&call.params).map(drop),
        Method::UiToast => read_toast(&call.params).map(drop),
        Method::UiConfirm => read_confirm(&call.params).map(drop),
        Method::UiOpenQuote => read_open_quote(&call.params).map(drop),
        // `quotes.addLines` has its own target; `context.get` and
        // `quotes.getOpen` read no params.
        _ => Ok(()),
    };
    if let Err(error) = answer {
        assert_eq!(error.code(), ErrorCode::InvalidParams, "{error:?}");
        check_error_reply(
            &RpcResponse::failure(Some(call.id.clone()), &error),
            &error,
            Some(&call.id),
        );
    }
}
