//! Reading an object into a struct that has a flattened part, without serde's buffering.
//!
//! serde's derived reader for a struct with a `#[serde(flatten)]` member first copies every
//! member of the object into a buffer of its own (`Content`), then reads both parts from it. In
//! the host module that buffer's reader and its visitors cost several kilobytes for the two
//! types that need it ([`crate::quote::QuoteDto`], [`crate::context::BridgeContextDto`]). The
//! readers here take the struct's own members as they come, from the same [`MapAccess`] (so that
//! an error in one still says where it is), and keep only the other members, as JSON, for the
//! flattened part.

use serde::Deserialize;
use serde::de::{self, DeserializeOwned, MapAccess};
use serde_json::{Map, Value};

/// One of a struct's own members: read at most once, then taken.
pub(crate) struct Member<T> {
    name: &'static str,
    value: Option<T>,
}

impl<T> Member<T> {
    /// The member called `name` on the wire, not read yet.
    pub(crate) const fn new(name: &'static str) -> Self {
        Self { name, value: None }
    }

    /// Reads the member's value, which comes next in `map`; a second one is refused.
    pub(crate) fn read<'de, A>(&mut self, map: &mut A) -> Result<(), A::Error>
    where
        A: MapAccess<'de>,
        T: Deserialize<'de>,
    {
        if self.value.is_some() {
            return Err(de::Error::duplicate_field(self.name));
        }
        self.value = Some(map.next_value()?);
        Ok(())
    }

    /// The value; an object without the member is refused.
    pub(crate) fn required<E: de::Error>(self) -> Result<T, E> {
        self.value.ok_or_else(|| E::missing_field(self.name))
    }

    /// The value, or `T`'s default when the object does not have the member.
    pub(crate) fn or_default(self) -> T
    where
        T: Default,
    {
        self.value.unwrap_or_default()
    }
}

/// Reads the members left in `map`. Each name goes to `own`, which reads the value (with
/// [`Member::read`]) and returns `true` when the member is one of the struct's own; any other
/// member is kept for the flattened part, which [`Rest::read`] reads once the struct's own have
/// been checked (the order serde's derived reader checks them in). A member that comes twice is
/// refused, as serde refuses a struct's field given twice.
pub(crate) fn read_members<'de, A>(
    mut map: A,
    mut own: impl FnMut(&str, &mut A) -> Result<bool, A::Error>,
) -> Result<Rest, A::Error>
where
    A: MapAccess<'de>,
{
    let mut rest = Map::new();
    while let Some(name) = map.next_key::<String>()? {
        if own(&name, &mut map)? {
            continue;
        }
        let value = map.next_value::<Value>()?;
        if rest.contains_key(&name) {
            return Err(de::Error::custom(format_args!("duplicate field `{name}`")));
        }
        rest.insert(name, value);
    }
    Ok(Rest(rest))
}

/// The members of an object that are not the struct's own.
pub(crate) struct Rest(Map<String, Value>);

impl Rest {
    /// The flattened part, read from these members.
    pub(crate) fn read<F: DeserializeOwned, E: de::Error>(self) -> Result<F, E> {
        F::deserialize(Value::Object(self.0)).map_err(E::custom)
    }
}
