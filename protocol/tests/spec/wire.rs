//! The wire protocol of DESIGN.md §3: handshake messages, JSON-RPC calls and
//! replies, error codes, method permissions, and problem+json.

use serde_json::{Value, json};
use toolbridge_protocol::capability::Capability;
use toolbridge_protocol::context::Role;
use toolbridge_protocol::handshake::{HandshakeMessage, Hello, SDK_VERSION, Welcome};
use toolbridge_protocol::manifest::ToolType;
use toolbridge_protocol::method::Method;
use toolbridge_protocol::problem::Problem;
use toolbridge_protocol::rpc::{RpcError, RpcId, RpcResponse, decode_call};
use toolbridge_protocol::{Error, ErrorCode, Violation};

#[test]
fn wire_hello_is_read_from_a_window_message() {
    let hello = Hello::from_message(&json!({
        "toolbridge": "hello", "protocol": 1, "sdkVersion": "2.1.0", "instance": "k3j2"
    }))
    .unwrap();
    assert_eq!(hello.instance, "k3j2");
    assert!(hello.is_supported());
    assert_eq!(SDK_VERSION, "2.1.0");
}

#[test]
fn wire_messages_that_are_not_a_hello_are_ignored() {
    for message in [
        json!("hello"),
        json!({"type": "webpackOk"}),
        json!({"toolbridge": "welcome", "protocol": 1, "toolType": "standalone", "methods": []}),
        json!({"toolbridge": "hello", "protocol": 1, "sdkVersion": "2.1.0", "instance": ""}),
        json!({"toolbridge": "hello", "protocol": 1, "sdkVersion": "2.1.0", "instance": "x".repeat(129)}),
        json!({"toolbridge": "hello", "protocol": "1", "sdkVersion": "2.1.0", "instance": "a"}),
    ] {
        assert_eq!(Hello::from_message(&message), None, "{message}");
    }
}

/// Found by the `wire_message` fuzz target: serde reads a tagged enum from an
/// array whose first item is the tag, so this array used to pass as a hello.
#[test]
fn wire_a_hello_is_an_object_never_an_array_that_serde_would_read_as_one() {
    for message in [
        json!(["hello", 1, "2.1.0", "k3j2"]),
        json!(["hello", {"protocol": 1, "sdkVersion": "2.1.0", "instance": "k3j2"}]),
    ] {
        assert_eq!(Hello::from_message(&message), None, "{message}");
    }
}

/// A request id is an integer that fits an `i64` or a string, read from text
/// or from a value; nothing else is.
#[test]
fn wire_a_request_id_is_an_integer_or_a_string() {
    for (id, expected) in [
        (json!(7), RpcId::Number(7)),
        (json!(-3), RpcId::Number(-3)),
        (json!(i64::MAX), RpcId::Number(i64::MAX)),
        (json!("a-1"), RpcId::String("a-1".into())),
        (json!(""), RpcId::String(String::new())),
    ] {
        assert_eq!(
            serde_json::from_value::<RpcId>(id.clone()).unwrap(),
            expected
        );
        assert_eq!(
            serde_json::from_str::<RpcId>(&id.to_string()).unwrap(),
            expected
        );
        assert_eq!(serde_json::to_value(&expected).unwrap(), id);
    }
    for id in [
        json!(1.5),
        json!(1.0),
        json!(u64::MAX),
        json!(true),
        json!(null),
        json!([1]),
        json!({"id": 1}),
    ] {
        let error = serde_json::from_value::<RpcId>(id.clone())
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("expected a request id: an integer or a string"),
            "{id}: {error}"
        );
        assert!(
            serde_json::from_str::<RpcId>(&id.to_string()).is_err(),
            "{id}"
        );
    }
}

#[test]
fn wire_welcome_grants_all_nine_methods_to_quoting_extensions_only() {
    let welcome = serde_json::to_value(HandshakeMessage::Welcome(Welcome::for_tool(
        ToolType::QuotingExtension,
        &[],
    )))
    .unwrap();
    assert_eq!(welcome["toolbridge"], "welcome");
    assert_eq!(welcome["protocol"], 1);
    assert_eq!(welcome["toolType"], "quoting_extension");
    assert_eq!(welcome["methods"].as_array().unwrap().len(), 9);
    let standalone = Welcome::for_tool(ToolType::Standalone, &[]);
    assert_eq!(standalone.methods.len(), 8);
    assert!(!standalone.methods.contains(&Method::QuotesAddLines));
}

#[test]
fn wire_welcome_lists_extensions_as_capabilities_never_as_methods() {
    let offers = [
        Capability::UiAutoResize,
        Capability::UiToast,
        Capability::UiOpenQuote,
    ];
    let welcome = serde_json::to_value(HandshakeMessage::Welcome(Welcome::for_tool(
        ToolType::QuotingExtension,
        &offers,
    )))
    .unwrap();
    assert_eq!(
        welcome["capabilities"],
        json!([
            "quotes.getOpen",
            "quote.changed",
            "session.ended",
            "ui.autoResize",
            "ui.toast",
            "ui.openQuote",
            "connectivity"
        ])
    );
    let methods = welcome["methods"].as_array().unwrap();
    assert!(
        methods
            .iter()
            .all(|m| !m.as_str().unwrap().starts_with("ui."))
    );
    assert!(!methods.contains(&json!("quotes.getOpen")));
    let standalone = Welcome::for_tool(ToolType::Standalone, &offers);
    assert!(!standalone.capabilities.contains(&Capability::QuotesGetOpen));
    assert!(!standalone.capabilities.contains(&Capability::QuoteChanged));
}

#[test]
fn wire_settings_are_offered_to_either_type_only_when_the_page_passes_them() {
    let settings = [Capability::SettingsGet, Capability::SettingsChanged];
    for tool_type in [ToolType::Standalone, ToolType::QuotingExtension] {
        let without = Welcome::for_tool(tool_type, &[]);
        assert!(
            without
                .capabilities
                .iter()
                .all(|c| !c.name().starts_with("settings.")),
            "{tool_type}"
        );
        let with = serde_json::to_value(Welcome::for_tool(tool_type, &settings)).unwrap();
        let names = with["capabilities"].as_array().unwrap();
        assert!(names.contains(&json!("settings.get")), "{tool_type}");
        assert!(names.contains(&json!("settings.changed")), "{tool_type}");
        // An extension: never among the 2.1.0 methods.
        assert!(
            !with["methods"]
                .as_array()
                .unwrap()
                .contains(&json!("settings.get"))
        );
    }
    assert_eq!(
        Capability::of_method(Method::SettingsGet),
        Some(Capability::SettingsGet)
    );
}

#[test]
fn wire_an_old_welcome_without_capabilities_reads_as_offering_none() {
    let old = json!({"toolbridge": "welcome", "protocol": 1, "toolType": "standalone",
        "methods": ["context.get"]});
    let HandshakeMessage::Welcome(welcome) = serde_json::from_value(old).unwrap() else {
        panic!("a welcome");
    };
    assert!(welcome.capabilities.is_empty());
    assert_eq!(welcome.methods, [Method::ContextGet]);
}

#[test]
fn wire_extension_methods_are_for_the_right_tools_and_roles() {
    let names: Vec<&str> = Method::EXTENSIONS.iter().map(|m| m.name()).collect();
    assert_eq!(
        names,
        [
            "quotes.getOpen",
            "settings.get",
            "ui.toast",
            "ui.confirm",
            "ui.openQuote",
            "auth.getToken",
            "fetch",
            "connectivity.get"
        ]
    );
    for method in Method::EXTENSIONS {
        assert!(method.is_extension());
        assert_eq!(Method::from_name(method.name()), Some(method));
        // Reading the open quote or asking the user writes nothing.
        assert!(method.authorize_role(Role::Field).is_ok(), "{method}");
    }
    let error = Method::QuotesGetOpen
        .authorize_tool(ToolType::Standalone)
        .unwrap_err();
    assert_eq!(error.code(), ErrorCode::NotAllowed);
    assert!(
        error
            .to_string()
            .contains("quotes.getOpen is only for quoting_extension tools")
    );
    for method in [
        Method::SettingsGet,
        Method::UiToast,
        Method::UiConfirm,
        Method::UiOpenQuote,
        Method::AuthGetToken,
        Method::Fetch,
        Method::ConnectivityGet,
    ] {
        assert!(
            method.authorize_tool(ToolType::Standalone).is_ok(),
            "{method}"
        );
    }
}

#[test]
fn wire_method_names_are_exactly_those_of_the_spec() {
    let names: Vec<&str> = Method::SPEC.iter().map(|m| m.name()).collect();
    assert_eq!(
        names,
        [
            "context.get",
            "customers.list",
            "products.list",
            "taskTemplates.list",
            "costItems.list",
            "jobs.list",
            "quotes.list",
            "quotes.create",
            "quotes.addLines"
        ]
    );
    for method in Method::ALL {
        assert_eq!(serde_json::to_value(method).unwrap(), json!(method.name()));
        assert_eq!(Method::from_name(method.name()), Some(method));
    }
    let listed: Vec<Method> = Method::SPEC.into_iter().chain(Method::EXTENSIONS).collect();
    assert_eq!(
        Method::ALL.to_vec(),
        listed,
        "the specification's, then the extensions"
    );
}

#[test]
fn wire_add_lines_from_a_standalone_tool_is_not_allowed() {
    let error = Method::QuotesAddLines
        .authorize(ToolType::Standalone, Role::Admin)
        .unwrap_err();
    assert_eq!(error.code(), ErrorCode::NotAllowed);
    assert!(error.to_string().contains("quoting_extension"));
    assert!(
        Method::QuotesAddLines
            .authorize(ToolType::QuotingExtension, Role::Office)
            .is_ok()
    );
}

#[test]
fn wire_field_users_may_read_but_not_create_quotes() {
    assert!(
        Method::QuotesList
            .authorize(ToolType::Standalone, Role::Field)
            .is_ok()
    );
    let error = Method::QuotesCreate
        .authorize(ToolType::Standalone, Role::Field)
        .unwrap_err();
    assert_eq!(error.code(), ErrorCode::NotAllowed);
}

#[test]
fn wire_decodes_a_json_rpc_call() {
    let call = decode_call(
        &json!({"jsonrpc": "2.0", "id": 7, "method": "products.list", "params": {"pageSize": 500}}),
    )
    .unwrap();
    assert_eq!(
        (call.id, call.method),
        (RpcId::Number(7), Method::ProductsList)
    );
    assert_eq!(call.params, json!({"pageSize": 500}));
}

#[test]
fn wire_unknown_method_is_method_not_found_with_the_request_id() {
    let rejected =
        decode_call(&json!({"jsonrpc": "2.0", "id": "a", "method": "quotes.delete"})).unwrap_err();
    assert_eq!(rejected.id, Some(RpcId::String("a".into())));
    assert_eq!(rejected.error.code(), ErrorCode::MethodNotFound);
    let reply = serde_json::to_value(RpcResponse::from(rejected)).unwrap();
    assert_eq!(reply["error"]["code"], -32601);
    assert_eq!(reply["error"]["data"]["code"], "METHOD_NOT_FOUND");
}

#[test]
fn wire_malformed_calls_are_rejected_never_panicking() {
    for message in [
        json!(null),
        json!([1]),
        json!({"jsonrpc": "1.0", "id": 1, "method": "context.get"}),
        json!({"jsonrpc": "2.0", "method": "context.get"}),
        json!({"jsonrpc": "2.0", "id": {}, "method": "context.get"}),
        json!({"jsonrpc": "2.0", "id": 1, "method": 5}),
    ] {
        let rejected = decode_call(&message).unwrap_err();
        assert_eq!(rejected.error.code(), ErrorCode::InvalidParams, "{message}");
    }
}

#[test]
fn wire_error_reply_carries_string_code_details_and_retry_after() {
    let error = Error::InvalidParams(vec![Violation::new(
        "lines[3].qty",
        "must be greater than 0",
    )]);
    let reply = serde_json::to_value(RpcResponse::failure(Some(RpcId::Number(4)), &error)).unwrap();
    assert_eq!(
        reply,
        json!({"jsonrpc": "2.0", "id": 4, "error": {
            "code": -32602, "message": "lines[3].qty: must be greater than 0",
            "data": {"code": "INVALID_PARAMS", "details": [{"path": "lines[3].qty", "message": "must be greater than 0"}]}
        }})
    );
    let limited = serde_json::to_value(RpcResponse::failure(
        None,
        &Error::RateLimited { retry_after: 12 },
    ))
    .unwrap();
    assert_eq!(limited["id"], Value::Null);
    assert_eq!(
        limited["error"]["data"],
        json!({"code": "RATE_LIMITED", "retryAfter": 12})
    );
}

#[test]
fn wire_success_reply_carries_the_result() {
    let reply =
        serde_json::to_value(RpcResponse::success(RpcId::Number(1), json!({"ok": true}))).unwrap();
    assert_eq!(
        reply,
        json!({"jsonrpc": "2.0", "id": 1, "result": {"ok": true}})
    );
}

#[test]
fn wire_error_codes_have_distinct_numbers_and_round_trip() {
    let mut numbers: Vec<i32> = ErrorCode::ALL.iter().map(|c| c.rpc_code()).collect();
    numbers.sort_unstable();
    numbers.dedup();
    assert_eq!(numbers.len(), ErrorCode::ALL.len());
    for code in ErrorCode::ALL {
        assert_eq!(ErrorCode::from_name(code.as_str()), Some(code));
        assert_eq!(serde_json::to_value(code).unwrap(), json!(code.as_str()));
    }
}

#[test]
fn wire_errors_survive_the_trip_through_json_rpc() {
    for error in [
        Error::invalid("pageSize", "must be from 1 to 500 (got 0)"),
        Error::NotAllowed("no".into()),
        Error::NoOpenQuote,
        Error::QuoteLocked("quote Q-1 is Sent".into()),
        Error::RateLimited { retry_after: 3 },
        Error::BackendUnavailable("down".into()),
        toolbridge_protocol::connectivity::not_sent("products.list"),
    ] {
        let wire: RpcError =
            serde_json::from_value(serde_json::to_value(RpcError::from(&error)).unwrap()).unwrap();
        assert_eq!(Error::from(wire), error);
    }
}

#[test]
fn wire_backend_status_maps_to_bridge_codes() {
    assert_eq!(ErrorCode::from_http_status(429), ErrorCode::RateLimited);
    assert_eq!(ErrorCode::from_http_status(401), ErrorCode::Unauthenticated);
    assert_eq!(
        ErrorCode::from_http_status(503),
        ErrorCode::BackendUnavailable
    );
    assert_eq!(
        ErrorCode::from_http_status(500),
        ErrorCode::BackendUnavailable
    );
    assert_eq!(ErrorCode::from_http_status(422), ErrorCode::InvalidParams);
    assert_eq!(ErrorCode::from_http_status(404), ErrorCode::NotFound);
}

#[test]
fn problem_json_carries_status_code_and_every_path() {
    let error = Error::InvalidParams(vec![
        Violation::new("customerId", "is required"),
        Violation::new("lines[0].qty", "must be greater than 0 (got 0)"),
    ]);
    let problem = Problem::from_error(&error).with_request_id("req-42");
    let body = serde_json::to_value(&problem).unwrap();
    assert_eq!(body["status"], 422);
    assert_eq!(body["code"], "INVALID_PARAMS");
    assert_eq!(body["requestId"], "req-42");
    assert_eq!(body["errors"][1]["path"], "lines[0].qty");
    assert_eq!(problem.into_error(), error);
}

#[test]
fn problem_status_codes_follow_the_design() {
    let status = |e: Error| Problem::from_error(&e).status;
    assert_eq!(status(Error::Unauthenticated("no key".into())), 401);
    assert_eq!(status(Error::NotAllowed("scope".into())), 403);
    assert_eq!(status(Error::NotFound("quote".into())), 404);
    assert_eq!(status(Error::invalid("x", "y")), 422);
    assert_eq!(status(Error::RateLimited { retry_after: 1 }), 429);
}
