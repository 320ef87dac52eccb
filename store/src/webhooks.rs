//! Webhooks: each tenant's endpoints, and the outbox of their deliveries.
//!
//! Every quote write (create, save, header change, send) adds, in its own transaction, one
//! pending delivery for each enabled endpoint of the tenant that subscribes to the event: so a
//! change that commits has its deliveries, and a crash between the commit and the `POST` loses
//! nothing. The deliveries of one event share its id (`evt_…`) and its payload, the exact body to
//! `POST`.
//!
//! A delivery worker (the server's, one per instance) runs:
//! 1. [`Store::claim_deliveries`]: due deliveries, each leased to this worker for a while, so
//!    that no other worker (of this instance or another) takes it meanwhile; on `PostgreSQL` the
//!    claim passes over rows another claim holds (`FOR UPDATE SKIP LOCKED`);
//! 2. a `POST` of each [`ClaimedDelivery::payload`] to its URL, signed with the endpoint's
//!    current secret (`toolbridge_protocol::webhooks`);
//! 3. [`Store::finish_delivery`] with what came of it: delivered on a 2xx; otherwise tried again
//!    after the back-off the worker chooses, until [`MAX_ATTEMPTS`] attempts have failed.
//!
//! A worker that stops with deliveries claimed but not attempted hands them back
//! ([`Store::hand_back_delivery`]): the next claim, of any worker, takes them at once. A worker
//! that dies with deliveries claimed leaves them to the next claim once their leases end: delivery
//! is at least once, and receivers drop an event id they have seen.

use std::fmt;

use toolbridge_protocol::Violation;
use toolbridge_protocol::catalog::id_key;
use toolbridge_protocol::live::QuoteChange;
use toolbridge_protocol::paging::{BridgePagedResult, PageRequest};
use toolbridge_protocol::quote::QuoteDto;
use toolbridge_protocol::webhooks::{
    EVENT_ID_START, MAX_ATTEMPTS, SECRET_START, WebhookData, WebhookDeliveryStatus,
    WebhookEventType, WebhookPayload, checked_event_types, url_violation,
};

use crate::db::{Tx, sql};
use crate::sealing::{Place, open_text, seal_text};
use crate::util::{limit_offset, new_id, now_iso, past_the_end, random_hex, to_u32, to_u64};
use crate::{Error, Record, Store};

/// Random bytes of an endpoint's signing secret (shown as hex after `whsec_`).
const SECRET_BYTES: usize = 32;
/// Random bytes of an event id (shown as hex after `evt_`).
const EVENT_ID_BYTES: usize = 16;
/// The longest error text kept of a failed attempt, in characters; longer ones are cut.
pub const DELIVERY_ERROR_MAX_CHARS: usize = 1000;
/// The most deliveries one [`Store::claim_deliveries`] takes.
pub const CLAIM_MAX: u32 = 500;

/// A tenant's webhook endpoint, as listed (never with its secret).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookEndpoint {
    /// GUID.
    pub id: String,
    /// The tenant whose events it receives.
    pub tenant_id: String,
    /// Where deliveries are `POST`ed: http or https.
    pub url: String,
    /// The events it receives, in the order they were given.
    pub event_types: Vec<WebhookEventType>,
    /// Whether events are delivered to it. While it is disabled, no new deliveries are made for
    /// it, and those already pending wait.
    pub enabled: bool,
    /// ISO 8601 UTC.
    pub created_at: String,
    /// ISO 8601 UTC: its last change (its secret's rotation included).
    pub updated_at: String,
}

/// An endpoint with its signing secret: the answer to creating one and to rotating its secret,
/// the only times the secret is shown.
#[derive(Clone, PartialEq, Eq)]
pub struct WebhookEndpointWithSecret {
    /// The endpoint.
    pub endpoint: WebhookEndpoint,
    /// `whsec_` and 64 hex digits: the key of each delivery's HMAC-SHA256 signature.
    pub secret: String,
}

impl fmt::Debug for WebhookEndpointWithSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WebhookEndpointWithSecret")
            .field("endpoint", &self.endpoint)
            .field("secret", &"<redacted>")
            .finish()
    }
}

/// What a new endpoint is: checked by [`Store::create_webhook_endpoint`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewWebhookEndpoint {
    /// http or https with a host, at most 2048 characters
    /// (`toolbridge_protocol::webhooks::parse_url`). Whether its host is a private address is
    /// the server's to check (it needs DNS).
    pub url: String,
    /// Event type tokens (`quote.created`, …): at least one, each known, none twice.
    pub event_types: Vec<String>,
    /// Whether it receives events from the start.
    pub enabled: bool,
}

/// A change to an endpoint: `None` leaves a field as it is; each field given is checked as
/// [`NewWebhookEndpoint`]'s is.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WebhookEndpointChange {
    /// A new URL.
    pub url: Option<String>,
    /// New event types (they replace the old ones).
    pub event_types: Option<Vec<String>>,
    /// Enabled, or disabled.
    pub enabled: Option<bool>,
}

/// A delivery of an event to an endpoint, as its log shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookDelivery {
    /// GUID.
    pub id: String,
    /// The endpoint it goes to.
    pub endpoint_id: String,
    /// The event's id, `evt_…` (shared by the event's deliveries, and kept by a redelivery).
    pub event_id: String,
    /// What happened.
    pub event_type: WebhookEventType,
    /// Where it stands.
    pub status: WebhookDeliveryStatus,
    /// Attempts made so far.
    pub attempts: u32,
    /// The HTTP status the last attempt got, if it got an answer.
    pub last_status: Option<u16>,
    /// Why the last attempt failed, where words say more than a status (a timeout, a refused
    /// connection).
    pub last_error: Option<String>,
    /// When a pending delivery is due next, in Unix seconds; `None` once it is delivered or
    /// failed.
    pub next_attempt_at: Option<i64>,
    /// When it was made, in Unix seconds.
    pub created_at: i64,
    /// When it was delivered, in Unix seconds.
    pub delivered_at: Option<i64>,
}

/// A delivery a worker has claimed ([`Store::claim_deliveries`]): everything it needs to `POST`
/// it.
#[derive(Clone, PartialEq, Eq)]
pub struct ClaimedDelivery {
    /// The delivery's id, for [`Store::finish_delivery`].
    pub id: String,
    /// The endpoint it goes to.
    pub endpoint_id: String,
    /// The event's id: the `Toolbridge-Event-Id` header.
    pub event_id: String,
    /// What happened.
    pub event_type: WebhookEventType,
    /// Where to `POST` it (as it is now: an endpoint's new URL applies to later attempts).
    pub url: String,
    /// The endpoint's secret as it is now, which signs this attempt.
    pub secret: String,
    /// The exact body to `POST` (JSON of a `WebhookPayload`).
    pub payload: String,
    /// Attempts made before this one.
    pub attempts: u32,
    /// Until when, in Unix seconds on the database's clock, no other worker claims it.
    pub lease_until: i64,
}

impl fmt::Debug for ClaimedDelivery {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClaimedDelivery")
            .field("id", &self.id)
            .field("endpoint_id", &self.endpoint_id)
            .field("event_id", &self.event_id)
            .field("event_type", &self.event_type)
            .field("url", &self.url)
            .field("secret", &"<redacted>")
            .field("attempts", &self.attempts)
            .field("lease_until", &self.lease_until)
            .finish_non_exhaustive()
    }
}

/// What came of one attempt at a delivery ([`Store::finish_delivery`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeliveryOutcome {
    /// The receiver answered with a 2xx status.
    Delivered {
        /// The status it answered.
        status: u16,
    },
    /// It did not: another status, or no answer.
    Failed {
        /// The status it answered, if it answered.
        status: Option<u16>,
        /// Why there was no answer, or what the answer said (cut to
        /// [`DELIVERY_ERROR_MAX_CHARS`]).
        error: Option<String>,
        /// Seconds until the next attempt, should there be one: the worker's back-off (with its
        /// jitter) after this attempt.
        retry_in_secs: u32,
    },
}

/// The webhook event of a quote change.
pub(crate) fn event_type(change: QuoteChange) -> WebhookEventType {
    match change {
        QuoteChange::Created => WebhookEventType::QuoteCreated,
        QuoteChange::Saved => WebhookEventType::QuoteSaved,
        QuoteChange::Sent => WebhookEventType::QuoteSent,
    }
}

/// Adds, in `tx`, a pending delivery of the event `event_type` about `quote` for each enabled
/// endpoint of the tenant that receives it, due now. One event id and one payload for all.
pub(crate) async fn enqueue(
    tx: &mut Tx,
    tenant_id: &str,
    event_type: WebhookEventType,
    quote: &QuoteDto,
) -> Result<(), Error> {
    let endpoints: Vec<(String, String)> = sql(
        "SELECT id, event_types FROM webhook_endpoints WHERE tenant_id = $1 AND enabled = 1 \
         ORDER BY created_at, id",
    )
    .bind(tenant_id)
    .fetch_all(&mut *tx)
    .await?;
    let receiving: Vec<String> = endpoints
        .into_iter()
        .filter(|(_, types)| {
            // Tokens compared as text: one this build does not know (written by a newer
            // instance) is no reason to fail the quote's write.
            serde_json::from_str::<Vec<String>>(types)
                .is_ok_and(|types| types.iter().any(|token| token == event_type.as_str()))
        })
        .map(|(id, _)| id)
        .collect();
    if receiving.is_empty() {
        return Ok(());
    }
    let payload = WebhookPayload {
        id: format!("{EVENT_ID_START}{}", random_hex(EVENT_ID_BYTES)),
        event_type,
        created: now_iso(),
        tenant_id: tenant_id.to_owned(),
        data: WebhookData {
            quote: quote.clone(),
        },
    };
    let body = serde_json::to_string(&payload).map_err(Error::encoding("a webhook payload"))?;
    for endpoint_id in &receiving {
        insert_delivery(tx, tenant_id, endpoint_id, &payload.id, event_type, &body).await?;
    }
    Ok(())
}

/// Adds a pending delivery, due now, with no attempts; its id.
async fn insert_delivery(
    tx: &mut Tx,
    tenant_id: &str,
    endpoint_id: &str,
    event_id: &str,
    event_type: WebhookEventType,
    payload: &str,
) -> Result<String, Error> {
    let id = new_id();
    let now = tx.backend().unix_now();
    sql(format!(
        "INSERT INTO webhook_deliveries (id, tenant_id, endpoint_id, event_id, event_type, \
         payload, created_at, status, attempts, next_attempt_at) \
         VALUES ($1, $2, $3, $4, $5, $6, {now}, 'pending', 0, {now})"
    ))
    .bind(&id)
    .bind(tenant_id)
    .bind(endpoint_id)
    .bind(event_id)
    .bind(event_type.as_str())
    .bind(payload)
    .execute(&mut *tx)
    .await?;
    Ok(id)
}

/// The columns [`endpoint_from_row`] reads.
const ENDPOINT_COLUMNS: &str = "id, tenant_id, url, event_types, enabled, created_at, updated_at";

/// A row of [`ENDPOINT_COLUMNS`].
type EndpointRow = (String, String, String, String, i64, String, String);

/// An endpoint from a row of [`ENDPOINT_COLUMNS`].
fn endpoint_from_row(row: EndpointRow) -> Result<WebhookEndpoint, Error> {
    let (id, tenant_id, url, event_types, enabled, created_at, updated_at) = row;
    let tokens: Vec<String> = serde_json::from_str(&event_types).map_err(|error| {
        Error::corrupt_because(format_args!("webhook event types {event_types:?}"), error)
    })?;
    let event_types = tokens
        .iter()
        .map(|token| {
            WebhookEventType::parse(token)
                .ok_or_else(|| Error::corrupt(format_args!("webhook event type {token:?}")))
        })
        .collect::<Result<_, _>>()?;
    Ok(WebhookEndpoint {
        id,
        tenant_id,
        url,
        event_types,
        enabled: enabled != 0,
        created_at,
        updated_at,
    })
}

/// The columns [`delivery_from_row`] reads.
const DELIVERY_COLUMNS: &str = "id, endpoint_id, event_id, event_type, status, attempts, \
     last_status, last_error, next_attempt_at, created_at, delivered_at";

/// A row of [`DELIVERY_COLUMNS`].
type DeliveryRow = (
    String,
    String,
    String,
    String,
    String,
    i64,
    Option<i64>,
    Option<String>,
    i64,
    i64,
    Option<i64>,
);

/// A delivery from a row of [`DELIVERY_COLUMNS`].
fn delivery_from_row(row: DeliveryRow) -> Result<WebhookDelivery, Error> {
    let (
        id,
        endpoint_id,
        event_id,
        event_type,
        status,
        attempts,
        last_status,
        last_error,
        next_attempt_at,
        created_at,
        delivered_at,
    ) = row;
    let status = delivery_status(&status)?;
    Ok(WebhookDelivery {
        id,
        endpoint_id,
        event_id,
        event_type: stored_event_type(&event_type)?,
        status,
        attempts: to_u32(attempts)?,
        last_status: last_status
            .map(|code| {
                u16::try_from(code).map_err(|error| {
                    Error::corrupt_because(format_args!("HTTP status {code}"), error)
                })
            })
            .transpose()?,
        last_error,
        next_attempt_at: (status == WebhookDeliveryStatus::Pending).then_some(next_attempt_at),
        created_at,
        delivered_at,
    })
}

/// A stored event type.
fn stored_event_type(token: &str) -> Result<WebhookEventType, Error> {
    WebhookEventType::parse(token)
        .ok_or_else(|| Error::corrupt(format_args!("webhook event type {token:?}")))
}

/// A stored delivery status.
fn delivery_status(token: &str) -> Result<WebhookDeliveryStatus, Error> {
    WebhookDeliveryStatus::parse(token)
        .ok_or_else(|| Error::corrupt(format_args!("webhook delivery status {token:?}")))
}

/// [`Error::NotFound`] for an endpoint.
fn endpoint_not_found(endpoint_id: &str) -> Error {
    Error::NotFound {
        what: Record::WebhookEndpoint,
        id: endpoint_id.to_owned(),
    }
}

/// The URL and event types of an endpoint, checked (each given); every violation in one
/// [`Error::Invalid`]. The event types as stored: a JSON array of their tokens.
fn checked(url: Option<&str>, event_types: Option<&[String]>) -> Result<Option<String>, Error> {
    let mut violations: Vec<Violation> = url.and_then(url_violation).into_iter().collect();
    let mut stored = None;
    if let Some(event_types) = event_types {
        match checked_event_types(event_types) {
            Ok(types) => {
                let tokens: Vec<&str> = types.into_iter().map(WebhookEventType::as_str).collect();
                stored = Some(
                    serde_json::to_string(&tokens)
                        .map_err(Error::encoding("webhook event types"))?,
                );
            }
            Err(problems) => violations.extend(problems),
        }
    }
    if violations.is_empty() {
        Ok(stored)
    } else {
        Err(Error::Invalid(violations))
    }
}

/// A new signing secret.
fn new_secret() -> String {
    format!("{SECRET_START}{}", random_hex(SECRET_BYTES))
}

/// The tenant's endpoint, read in `tx`.
async fn endpoint_in(
    tx: &mut Tx,
    tenant_id: &str,
    endpoint_id: &str,
) -> Result<WebhookEndpoint, Error> {
    let row: Option<EndpointRow> = sql(format!(
        "SELECT {ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE tenant_id = $1 AND id = $2"
    ))
    .bind(tenant_id)
    .bind(endpoint_id)
    .fetch_optional(&mut *tx)
    .await?;
    endpoint_from_row(row.ok_or_else(|| endpoint_not_found(endpoint_id))?)
}

/// Whether the tenant has the endpoint.
async fn has_endpoint(tx: &mut Tx, tenant_id: &str, endpoint_id: &str) -> Result<bool, Error> {
    let exists: bool =
        sql("SELECT EXISTS (SELECT 1 FROM webhook_endpoints WHERE tenant_id = $1 AND id = $2)")
            .bind(tenant_id)
            .bind(endpoint_id)
            .fetch_scalar(&mut *tx)
            .await?;
    Ok(exists)
}

/// The tenant's delivery of its endpoint, read in `tx`: [`Error::NotFound`] of the endpoint when
/// the tenant has no such endpoint, of the delivery when the endpoint has no such delivery.
async fn delivery_in(
    tx: &mut Tx,
    tenant_id: &str,
    endpoint_id: &str,
    delivery_id: &str,
) -> Result<WebhookDelivery, Error> {
    let row: Option<DeliveryRow> = sql(format!(
        "SELECT {DELIVERY_COLUMNS} FROM webhook_deliveries \
         WHERE tenant_id = $1 AND endpoint_id = $2 AND id = $3"
    ))
    .bind(tenant_id)
    .bind(endpoint_id)
    .bind(delivery_id)
    .fetch_optional(&mut *tx)
    .await?;
    if let Some(row) = row {
        return delivery_from_row(row);
    }
    if has_endpoint(tx, tenant_id, endpoint_id).await? {
        Err(Error::NotFound {
            what: Record::WebhookDelivery,
            id: delivery_id.to_owned(),
        })
    } else {
        Err(endpoint_not_found(endpoint_id))
    }
}

/// `text` cut to at most `max` characters.
fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((end, _)) => text[..end].to_owned(),
        None => text.to_owned(),
    }
}

/// A claimed delivery as [`Store::claim_deliveries`] reads it: id, endpoint id, event id, event
/// type, URL, secret as stored and the key that sealed it, payload, attempts, lease end.
type ClaimRow = (
    String,
    String,
    String,
    String,
    String,
    String,
    Option<String>,
    String,
    i64,
    i64,
);

/// The table and column of an endpoint's signing secret, for sealing.
const SECRET_TABLE: &str = "webhook_endpoints";
const SECRET_COLUMN: &str = "secret";

impl Store {
    /// The tenant's webhook endpoints, oldest first.
    pub async fn webhook_endpoints(&self, tenant_id: &str) -> Result<Vec<WebhookEndpoint>, Error> {
        let rows: Vec<EndpointRow> = sql(format!(
            "SELECT {ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE tenant_id = $1 \
             ORDER BY created_at, rowid"
        ))
        .bind(tenant_id)
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter().map(endpoint_from_row).collect()
    }

    /// One endpoint of the tenant; [`Error::NotFound`] unless the tenant has it.
    pub async fn webhook_endpoint(
        &self,
        tenant_id: &str,
        endpoint_id: &str,
    ) -> Result<WebhookEndpoint, Error> {
        let mut tx = self.pool.begin_read().await?;
        let endpoint = endpoint_in(&mut tx, tenant_id, &id_key(endpoint_id)).await?;
        tx.commit().await?;
        Ok(endpoint)
    }

    /// Adds an endpoint to the tenant, with a new signing secret (answered this once, and again
    /// only by [`Store::rotate_webhook_secret`]). [`Error::Invalid`] with a violation at `url`,
    /// `eventTypes` or `eventTypes[i]` for each problem of the request; [`Error::NotFound`] for
    /// an unknown tenant.
    pub async fn create_webhook_endpoint(
        &self,
        tenant_id: &str,
        new: &NewWebhookEndpoint,
    ) -> Result<WebhookEndpointWithSecret, Error> {
        let event_types = checked(Some(new.url.as_str()), Some(new.event_types.as_slice()))?
            .ok_or_else(|| Error::corrupt("webhook event types checked to nothing"))?;
        let mut tx = self.begin_write().await?;
        let tenant_exists: bool = sql("SELECT EXISTS (SELECT 1 FROM tenants WHERE id = $1)")
            .bind(tenant_id)
            .fetch_scalar(&mut *tx)
            .await?;
        if !tenant_exists {
            return Err(Error::NotFound {
                what: Record::Tenant,
                id: tenant_id.to_owned(),
            });
        }
        let (id, secret, now) = (new_id(), new_secret(), now_iso());
        let (stored, sealed_with) = seal_text(
            self.secrets_key(),
            &Place::new(SECRET_TABLE, SECRET_COLUMN, &[&id]),
            &secret,
        )?;
        sql(
            "INSERT INTO webhook_endpoints (id, tenant_id, url, event_types, enabled, secret, \
             sealed_with, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)",
        )
        .bind(&id)
        .bind(tenant_id)
        .bind(&new.url)
        .bind(event_types)
        .bind(new.enabled)
        .bind(stored)
        .bind(sealed_with)
        .bind(now)
        .execute(&mut *tx)
        .await?;
        let endpoint = endpoint_in(&mut tx, tenant_id, &id).await?;
        tx.commit().await?;
        Ok(WebhookEndpointWithSecret { endpoint, secret })
    }

    /// Changes an endpoint of the tenant: each field the change gives, checked as at creation
    /// ([`Error::Invalid`]); [`Error::NotFound`] unless the tenant has it. Answers the endpoint
    /// as changed. Deliveries already made keep their payload; a new URL applies to their next
    /// attempts.
    pub async fn update_webhook_endpoint(
        &self,
        tenant_id: &str,
        endpoint_id: &str,
        change: &WebhookEndpointChange,
    ) -> Result<WebhookEndpoint, Error> {
        let endpoint_id = id_key(endpoint_id);
        let event_types = checked(change.url.as_deref(), change.event_types.as_deref())?;
        let mut tx = self.begin_write().await?;
        let changed = sql("UPDATE webhook_endpoints SET url = COALESCE($3, url), \
             event_types = COALESCE($4, event_types), enabled = COALESCE($5, enabled), \
             updated_at = $6 WHERE tenant_id = $1 AND id = $2")
        .bind(tenant_id)
        .bind(&endpoint_id)
        .bind(change.url.as_deref())
        .bind(event_types)
        .bind(change.enabled.map(i64::from))
        .bind(now_iso())
        .execute(&mut *tx)
        .await?;
        if changed == 0 {
            return Err(endpoint_not_found(&endpoint_id));
        }
        let endpoint = endpoint_in(&mut tx, tenant_id, &endpoint_id).await?;
        tx.commit().await?;
        Ok(endpoint)
    }

    /// Removes an endpoint of the tenant and every delivery of it (its log, and those not yet
    /// made: they are not sent). [`Error::NotFound`] unless the tenant has it.
    pub async fn delete_webhook_endpoint(
        &self,
        tenant_id: &str,
        endpoint_id: &str,
    ) -> Result<(), Error> {
        let endpoint_id = id_key(endpoint_id);
        let mut tx = self.begin_write().await?;
        sql("DELETE FROM webhook_deliveries WHERE tenant_id = $1 AND endpoint_id = $2")
            .bind(tenant_id)
            .bind(&endpoint_id)
            .execute(&mut *tx)
            .await?;
        let deleted = sql("DELETE FROM webhook_endpoints WHERE tenant_id = $1 AND id = $2")
            .bind(tenant_id)
            .bind(&endpoint_id)
            .execute(&mut *tx)
            .await?;
        if deleted == 0 {
            return Err(endpoint_not_found(&endpoint_id));
        }
        tx.commit().await?;
        Ok(())
    }

    /// Gives an endpoint of the tenant a new signing secret, answered this once; the old one
    /// signs nothing from now on (a delivery claimed before keeps the secret it was claimed
    /// with). [`Error::NotFound`] unless the tenant has it.
    pub async fn rotate_webhook_secret(
        &self,
        tenant_id: &str,
        endpoint_id: &str,
    ) -> Result<WebhookEndpointWithSecret, Error> {
        let endpoint_id = id_key(endpoint_id);
        let secret = new_secret();
        let (stored, sealed_with) = seal_text(
            self.secrets_key(),
            &Place::new(SECRET_TABLE, SECRET_COLUMN, &[&endpoint_id]),
            &secret,
        )?;
        let mut tx = self.begin_write().await?;
        let changed = sql(
            "UPDATE webhook_endpoints SET secret = $3, sealed_with = $4, \
             updated_at = $5 WHERE tenant_id = $1 AND id = $2",
        )
        .bind(tenant_id)
        .bind(&endpoint_id)
        .bind(stored)
        .bind(sealed_with)
        .bind(now_iso())
        .execute(&mut *tx)
        .await?;
        if changed == 0 {
            return Err(endpoint_not_found(&endpoint_id));
        }
        let endpoint = endpoint_in(&mut tx, tenant_id, &endpoint_id).await?;
        tx.commit().await?;
        Ok(WebhookEndpointWithSecret { endpoint, secret })
    }

    /// Claims up to `limit` (at most [`CLAIM_MAX`]) deliveries that are due, of every tenant,
    /// oldest due first, each leased for `lease_secs` seconds: until then no other claim, from
    /// this process or another, takes it. Pending deliveries of a disabled endpoint wait.
    ///
    /// The lease should outlast an attempt (the `POST`'s timeout and the time to finish it): a
    /// delivery whose lease ends before [`Store::finish_delivery`] may be claimed and sent
    /// again. Each claimed delivery carries its endpoint's URL and secret as they are now.
    pub async fn claim_deliveries(
        &self,
        limit: u32,
        lease_secs: u32,
    ) -> Result<Vec<ClaimedDelivery>, Error> {
        let limit = limit.min(CLAIM_MAX);
        if limit == 0 {
            return Ok(Vec::new());
        }
        let mut tx = self.begin_write().await?;
        let backend = tx.backend();
        let now = backend.unix_now();
        let rows: Vec<ClaimRow> = sql(format!(
            "SELECT d.id, d.endpoint_id, d.event_id, d.event_type, e.url, e.secret, e.sealed_with, \
             d.payload, \
             d.attempts, {now} + $2 FROM webhook_deliveries d \
             JOIN webhook_endpoints e ON e.id = d.endpoint_id \
             WHERE d.status = 'pending' AND d.next_attempt_at <= {now} \
             AND (d.lease_until IS NULL OR d.lease_until <= {now}) AND e.enabled = 1 \
             ORDER BY d.next_attempt_at, d.rowid LIMIT $1{}",
            backend.skip_locked("d")
        ))
        .bind(limit)
        .bind(lease_secs)
        .fetch_all(&mut *tx)
        .await?;
        let Some(lease_until) = rows.first().map(|row| row.9) else {
            return Ok(Vec::new());
        };
        let ids: Vec<&str> = rows.iter().map(|row| row.0.as_str()).collect();
        let ids = serde_json::to_string(&ids).map_err(Error::encoding("delivery ids"))?;
        sql(format!(
            "UPDATE webhook_deliveries SET lease_until = $1 WHERE id IN ({})",
            backend.text_set("$2")
        ))
        .bind(lease_until)
        .bind(ids)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        rows.into_iter()
            .map(
                |(
                    id,
                    endpoint_id,
                    event_id,
                    event_type,
                    url,
                    secret,
                    sealed_with,
                    payload,
                    attempts,
                    lease,
                )| {
                    let secret = open_text(
                        self.secrets_key(),
                        &Place::new(SECRET_TABLE, SECRET_COLUMN, &[&endpoint_id]),
                        secret,
                        sealed_with.as_deref(),
                    )?;
                    Ok(ClaimedDelivery {
                        id,
                        endpoint_id,
                        event_id,
                        event_type: stored_event_type(&event_type)?,
                        url,
                        secret,
                        payload,
                        attempts: to_u32(attempts)?,
                        lease_until: lease,
                    })
                },
            )
            .collect()
    }

    /// Records what came of an attempt at a claimed delivery, and ends its lease. Delivered: done.
    /// Failed: one more attempt counted; after [`MAX_ATTEMPTS`] the delivery is failed, else it
    /// is due again `retry_in_secs` from now. Answers where the delivery now stands; `None` when
    /// it was no longer pending (delivered or failed meanwhile, by a worker whose lease it
    /// outlived) or is gone (its endpoint deleted): nothing changed then.
    pub async fn finish_delivery(
        &self,
        delivery_id: &str,
        outcome: &DeliveryOutcome,
    ) -> Result<Option<WebhookDeliveryStatus>, Error> {
        let _turn = self.write_turn().await;
        let now = self.pool.backend().unix_now();
        let status: Option<String> = match outcome {
            DeliveryOutcome::Delivered { status } => {
                sql(format!(
                    "UPDATE webhook_deliveries SET status = 'delivered', \
                     attempts = attempts + 1, last_status = $2, last_error = NULL, \
                     lease_until = NULL, delivered_at = {now} \
                     WHERE id = $1 AND status = 'pending' RETURNING status"
                ))
                .bind(delivery_id)
                .bind(i64::from(*status))
                .fetch_optional_scalar(&self.pool)
                .await?
            }
            DeliveryOutcome::Failed {
                status,
                error,
                retry_in_secs,
            } => {
                sql(format!(
                    "UPDATE webhook_deliveries SET attempts = attempts + 1, last_status = $2, \
                     last_error = $3, lease_until = NULL, \
                     status = CASE WHEN attempts + 1 >= $4 THEN 'failed' ELSE 'pending' END, \
                     next_attempt_at = CASE WHEN attempts + 1 >= $4 THEN next_attempt_at \
                     ELSE {now} + $5 END \
                     WHERE id = $1 AND status = 'pending' RETURNING status"
                ))
                .bind(delivery_id)
                .bind(status.map(i64::from))
                .bind(
                    error
                        .as_deref()
                        .map(|error| cut(error, DELIVERY_ERROR_MAX_CHARS)),
                )
                .bind(MAX_ATTEMPTS)
                .bind(*retry_in_secs)
                .fetch_optional_scalar(&self.pool)
                .await?
            }
        };
        status.as_deref().map(delivery_status).transpose()
    }

    /// Hands back a claimed delivery that this worker will not finish: its lease ends now, so the
    /// next claim, of this process or another, takes it at once, rather than when the lease would
    /// have run out. No attempt is counted.
    ///
    /// `lease_until` is the lease its claim gave ([`ClaimedDelivery::lease_until`]): once that
    /// lease has run out, the delivery may have been claimed again (with a later lease) or
    /// finished by another worker, and is then left as it is. Answers whether it was handed back.
    ///
    /// Hand back only a delivery whose `POST` has not started, or whose `POST` was abandoned
    /// (its connection dropped): the next claim sends it again, so a `POST` that reached the
    /// receiver is then received twice.
    pub async fn hand_back_delivery(
        &self,
        delivery_id: &str,
        lease_until: i64,
    ) -> Result<bool, Error> {
        let _turn = self.write_turn().await;
        let handed_back = sql("UPDATE webhook_deliveries SET lease_until = NULL \
             WHERE id = $1 AND status = 'pending' AND lease_until = $2")
        .bind(delivery_id)
        .bind(lease_until)
        .execute(&self.pool)
        .await?;
        Ok(handed_back > 0)
    }

    /// Sends a delivery of the tenant's endpoint again: a new delivery of the same event (its id
    /// and payload), pending and due now, with no attempts; the old one stays in the log as it
    /// is. Answers the new one. [`Error::NotFound`] of the endpoint unless the tenant has it, of
    /// the delivery unless the endpoint has it.
    pub async fn redeliver(
        &self,
        tenant_id: &str,
        endpoint_id: &str,
        delivery_id: &str,
    ) -> Result<WebhookDelivery, Error> {
        let (endpoint_id, delivery_id) = (id_key(endpoint_id), id_key(delivery_id));
        let mut tx = self.begin_write().await?;
        let old = delivery_in(&mut tx, tenant_id, &endpoint_id, &delivery_id).await?;
        let payload: String = sql("SELECT payload FROM webhook_deliveries WHERE id = $1")
            .bind(&old.id)
            .fetch_scalar(&mut *tx)
            .await?;
        let id = insert_delivery(
            &mut tx,
            tenant_id,
            &endpoint_id,
            &old.event_id,
            old.event_type,
            &payload,
        )
        .await?;
        let new = delivery_in(&mut tx, tenant_id, &endpoint_id, &id).await?;
        tx.commit().await?;
        Ok(new)
    }

    /// One delivery of the tenant's endpoint; [`Error::NotFound`] as [`Store::redeliver`] says.
    pub async fn delivery(
        &self,
        tenant_id: &str,
        endpoint_id: &str,
        delivery_id: &str,
    ) -> Result<WebhookDelivery, Error> {
        let mut tx = self.pool.begin_read().await?;
        let delivery = delivery_in(
            &mut tx,
            tenant_id,
            &id_key(endpoint_id),
            &id_key(delivery_id),
        )
        .await?;
        tx.commit().await?;
        Ok(delivery)
    }

    /// The delivery log of the tenant's endpoint, newest first; [`Error::NotFound`] unless the
    /// tenant has the endpoint.
    pub async fn deliveries(
        &self,
        tenant_id: &str,
        endpoint_id: &str,
        page: PageRequest,
    ) -> Result<BridgePagedResult<WebhookDelivery>, Error> {
        let endpoint_id = id_key(endpoint_id);
        let mut tx = self.pool.begin_read().await?;
        if !has_endpoint(&mut tx, tenant_id, &endpoint_id).await? {
            return Err(endpoint_not_found(&endpoint_id));
        }
        let total: i64 = sql(
            "SELECT COUNT(*) FROM webhook_deliveries WHERE tenant_id = $1 AND endpoint_id = $2",
        )
        .bind(tenant_id)
        .bind(&endpoint_id)
        .fetch_scalar(&mut tx)
        .await?;
        let total = to_u64(total)?;
        let mut items = Vec::new();
        if !past_the_end(page, total) {
            let (limit, offset) = limit_offset(page);
            let rows: Vec<DeliveryRow> = sql(format!(
                "SELECT {DELIVERY_COLUMNS} FROM webhook_deliveries \
                 WHERE tenant_id = $1 AND endpoint_id = $2 \
                 ORDER BY created_at DESC, rowid DESC LIMIT $3 OFFSET $4"
            ))
            .bind(tenant_id)
            .bind(&endpoint_id)
            .bind(limit)
            .bind(offset)
            .fetch_all(&mut tx)
            .await?;
            items = rows
                .into_iter()
                .map(delivery_from_row)
                .collect::<Result<_, _>>()?;
        }
        tx.commit().await?;
        Ok(page.envelope(items, total))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_is_cut_at_a_character_boundary() {
        assert_eq!(cut("héllo", 2), "hé");
        assert_eq!(cut("hi", 5), "hi");
    }
}
