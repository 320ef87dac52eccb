//! Whether the server can be reached from the browser: the `connectivity`
//! extension, and the `OFFLINE` error.
//!
//! A host knows it from the browser (`navigator.onLine` and the window's
//! `online` and `offline` events) and from its own requests: one that fails
//! on the network puts it offline, and any HTTP answer puts it online
//! again. While offline it checks by itself, every [`DEFAULT_CHECK_MS`]
//! unless the page chose otherwise, and refuses at once, without a request,
//! every call that [needs the server](crate::method::Method::needs_server),
//! with [`not_sent`]. Tools read the state with `connectivity.get` and hear
//! each change as `connectivity.changed`, both carrying [`Connectivity`].

use serde::{Deserialize, Serialize};

use crate::Error;

/// What `connectivity.get` answers and `connectivity.changed` carries:
/// `{"online": true}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Connectivity {
    /// Whether the server can be reached, as far as the host knows.
    pub online: bool,
}

/// How often, in milliseconds, a host that is offline checks whether the
/// server can be reached again, unless the page chose otherwise.
pub const DEFAULT_CHECK_MS: u32 = 10_000;

/// `OFFLINE` for a call or request the host did not send because the server
/// cannot be reached; `what` names it (`products.list`, `PUT
/// /quotes/q-1/lines`).
pub fn not_sent(what: &str) -> Error {
    Error::Offline(format!(
        "the server cannot be reached (offline), so {what} was not sent; try again once back online"
    ))
}

/// `OFFLINE` for a request to the server at `base` that failed on the
/// network (no answer came, and it may or may not have arrived); `what`
/// names it.
pub fn failed_on_the_network(what: &str, base: &str) -> Error {
    Error::Offline(format!(
        "the server at {base} could not be reached for {what} (network error), so the host is offline; try again once back online"
    ))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::ErrorCode;

    #[test]
    fn the_state_is_an_object_with_online_and_nothing_else() {
        let online = Connectivity { online: true };
        assert_eq!(
            serde_json::to_value(online).unwrap(),
            json!({"online": true})
        );
        let read: Connectivity = serde_json::from_value(json!({"online": false})).unwrap();
        assert!(!read.online);
        for wrong in [
            json!({}),
            json!({"online": "yes"}),
            json!({"online": true, "x": 1}),
        ] {
            assert!(
                serde_json::from_value::<Connectivity>(wrong.clone()).is_err(),
                "{wrong}"
            );
        }
    }

    #[test]
    fn offline_errors_say_what_was_not_sent_or_where_the_network_failed() {
        let refused = not_sent("products.list");
        assert_eq!(refused.code(), ErrorCode::Offline);
        let message = refused.to_string();
        assert!(message.contains("cannot be reached"), "{message}");
        assert!(message.contains("products.list was not sent"), "{message}");
        let lost = failed_on_the_network("PUT /quotes/q-1/lines", "https://app.example/api/v1");
        assert_eq!(lost.code(), ErrorCode::Offline);
        let message = lost.to_string();
        assert!(
            message.contains("https://app.example/api/v1")
                && message.contains("PUT /quotes/q-1/lines")
                && message.contains("network error"),
            "{message}"
        );
    }
}
