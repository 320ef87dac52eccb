//! The window messages that set up a tool's private channel: the SDK's
//! hello and the host's welcome.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::capability::Capability;
use crate::context::Theme;
use crate::manifest::ToolType;
use crate::method::Method;

/// Version of the wire protocol.
pub const PROTOCOL_VERSION: u32 = 1;
/// Version of the bridge SDK (`window.bridge.version`).
pub const SDK_VERSION: &str = "2.1.0";
/// Longest `instance` token a hello may carry.
pub const MAX_INSTANCE_CHARS: usize = 128;

/// A handshake message, told apart by its `toolbridge` field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "toolbridge", rename_all = "lowercase")]
pub enum HandshakeMessage {
    /// SDK → host, repeated until welcomed.
    Hello(Hello),
    /// Host → SDK, with the private port transferred.
    Welcome(Welcome),
}

/// `{toolbridge:"hello", protocol, sdkVersion, instance}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Hello {
    /// Wire protocol version the SDK speaks.
    pub protocol: u32,
    /// SDK version.
    pub sdk_version: String,
    /// Random per page load; a new one means the tool page reloaded.
    pub instance: String,
}

/// `{toolbridge:"welcome", protocol, toolType, methods, capabilities,
/// theme?}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Welcome {
    /// Wire protocol version the host speaks.
    pub protocol: u32,
    /// The tool's type, from its installed manifest.
    pub tool_type: ToolType,
    /// The methods of SPEC.md this tool may call.
    pub methods: Vec<Method>,
    /// The extensions beyond 2.1.0 offered to this tool. A host that sends
    /// none (an older one) offers none.
    #[serde(default)]
    pub capabilities: Vec<Capability>,
    /// The page's theme when the host knows it, which bridge.js applies to
    /// the tool's document before the tool's code hears anything (beyond
    /// 2.1.0; an older host sends none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theme: Option<Theme>,
}

impl Welcome {
    /// The welcome for a tool of this type, where the page set up the
    /// capabilities in `page` (see [`Capability::offered`]).
    pub fn for_tool(tool_type: ToolType, page: &[Capability]) -> Self {
        Self {
            protocol: PROTOCOL_VERSION,
            tool_type,
            methods: Method::granted_to(tool_type),
            capabilities: Capability::offered_to(tool_type, page),
            theme: None,
        }
    }
}

impl Hello {
    /// Reads a window message as a hello. `None` for anything else: other
    /// scripts' messages, welcomes, or a hello with an empty or oversized
    /// instance token.
    pub fn from_message(message: &Value) -> Option<Self> {
        // The tag is looked at here rather than by `HandshakeMessage`'s
        // derived reader, which would buffer the whole message first (and
        // cost the host module that buffer's code); `get` also keeps out an
        // array, which serde would read as a struct's fields in order.
        if message.get("toolbridge").and_then(Value::as_str) != Some("hello") {
            return None;
        }
        let hello = serde_json::from_value::<Hello>(message.clone()).ok()?;
        (!hello.instance.is_empty() && hello.instance.chars().count() <= MAX_INSTANCE_CHARS)
            .then_some(hello)
    }

    /// Whether the host speaks the SDK's protocol version.
    pub fn is_supported(&self) -> bool {
        self.protocol == PROTOCOL_VERSION
    }
}
