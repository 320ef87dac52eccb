//! Webhooks on the server's side: where an endpoint's URL may point ([`destination`]), how a
//! delivery is signed ([`signature`]), and the worker that sends deliveries ([`worker`]).
//! The endpoints, the outbox and the delivery queue live in the store; the event types, the
//! payload and the URL rules in `toolbridge_protocol::webhooks`.

pub mod destination;
pub mod signature;
pub mod worker;
