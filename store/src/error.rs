//! The store's one error type: each kind names what happened in the store.
//! What a kind means to a client (a status, a wire code) is the server's
//! business, not the store's.

use std::fmt;

use toolbridge_protocol::Violation;
use toolbridge_protocol::quote::QuoteStatus;

/// The cause of a failure, kept for the log.
pub type Cause = Box<dyn std::error::Error + Send + Sync>;

/// What a store call can fail with: the caller's input or request does not
/// fit the data (the first seven kinds), or the store itself failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The tenant has no such record. Another tenant's id is no different
    /// from an id that does not exist.
    #[error("{what} {id} not found")]
    NotFound {
        /// What kind of record.
        what: Record,
        /// The id looked for.
        id: String,
    },
    /// The input breaks the store's rules; each violation names its field.
    #[error("invalid input: {}", Listed(.0))]
    Invalid(Vec<Violation>),
    /// The quote is no longer a Draft, and only a Draft can change or be sent.
    #[error("quote {reference} is {status}, not a Draft; it cannot {action}")]
    QuoteLocked {
        /// The quote's reference.
        reference: String,
        /// Its state.
        status: QuoteStatus,
        /// What was refused.
        action: QuoteAction,
    },
    /// An idempotency key came again with a different request body (or for
    /// another request: another quote, another kind of change).
    #[error("the idempotency key was already used with a different request body")]
    IdempotencyKeyReused,
    /// A change was made against versions of the quote ([`crate::Expected`])
    /// that it no longer is at: it changed meanwhile. Nothing was changed.
    #[error("quote {reference} is at version {version}, not one the change was made against")]
    Changed {
        /// The quote's id (normalised).
        quote_id: String,
        /// Its reference.
        reference: String,
        /// The version it is at.
        version: u64,
    },
    /// A value that is unique (in the tenant, or in the database) already belongs to another
    /// record.
    #[error("{what} {value:?} already belongs to another record")]
    Taken {
        /// Which value.
        what: Unique,
        /// The value, as given.
        value: String,
    },
    /// The demo data goes into an empty database only.
    #[error("the database already holds data")]
    NotEmpty,
    /// The database named cannot be used: not a path or a URL the store
    /// reads, or a database it cannot work with.
    #[error("cannot use {database}: {problem}")]
    Unusable {
        /// The database as given (a URL's password hidden).
        database: String,
        /// What is wrong with it.
        problem: String,
    },
    /// The database failed: I/O, a lock held too long, a lost connection.
    #[error("the database failed")]
    Database(#[from] sqlx::Error),
    /// The database's schema could not be brought up to date.
    #[error("the database's migrations failed")]
    Migration(#[from] sqlx::migrate::MigrateError),
    /// A stored value cannot be read back.
    #[error("a stored value cannot be read: {what}")]
    Corrupt {
        /// Which value, and what it holds.
        what: String,
        /// Why it cannot be read, where a reader said.
        #[source]
        cause: Option<Cause>,
    },
    /// Hashing a password failed.
    #[error("password hashing failed")]
    Hashing(#[source] Cause),
    /// Making a signing key failed.
    #[error("a signing key could not be made")]
    KeyGeneration(#[source] Cause),
    /// A secret could not be sealed or opened with the secrets key, or the database's sealed
    /// secrets need a key other than the one given (or one where none was).
    #[error("secrets at rest: {0}")]
    Sealing(String),
    /// A value could not be written as JSON.
    #[error("{what} could not be written as JSON")]
    Encoding {
        /// Which value.
        what: &'static str,
        /// Why.
        #[source]
        cause: serde_json::Error,
    },
}

/// A kind of record [`Error::NotFound`] names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Record {
    /// A tenant.
    Tenant,
    /// A user (an inactive one included).
    User,
    /// A quote.
    Quote,
    /// A job.
    Job,
    /// A webhook endpoint.
    WebhookEndpoint,
    /// A delivery of a webhook endpoint.
    WebhookDelivery,
}

impl fmt::Display for Record {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Record::Tenant => "tenant",
            Record::User => "user",
            Record::Quote => "quote",
            Record::Job => "job",
            Record::WebhookEndpoint => "webhook endpoint",
            Record::WebhookDelivery => "webhook delivery",
        })
    }
}

/// What [`Error::QuoteLocked`] refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QuoteAction {
    /// A change to the quote's header or lines.
    Change,
    /// Sending it.
    Send,
}

impl fmt::Display for QuoteAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            QuoteAction::Change => "change",
            QuoteAction::Send => "be sent",
        })
    }
}

/// A value [`Error::Taken`] names: unique in its tenant, or in the database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unique {
    /// A product's SKU (without regard to case), in its tenant.
    ProductSku,
    /// A quote's reference, in its tenant.
    QuoteReference,
    /// A tenant's name (without regard to case), in the database.
    TenantName,
    /// A user's sign-in email (without regard to case), in the database.
    UserEmail,
}

impl fmt::Display for Unique {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Unique::ProductSku => "the product SKU",
            Unique::QuoteReference => "the quote reference",
            Unique::TenantName => "the tenant name",
            Unique::UserEmail => "the email",
        })
    }
}

impl Error {
    /// A stored value that cannot be read, with no reader's word on why.
    pub(crate) fn corrupt(what: impl fmt::Display) -> Self {
        Error::Corrupt {
            what: what.to_string(),
            cause: None,
        }
    }

    /// A stored value that cannot be read, and the reader's error.
    pub(crate) fn corrupt_because(
        what: impl fmt::Display,
        cause: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        Error::Corrupt {
            what: what.to_string(),
            cause: Some(Box::new(cause)),
        }
    }

    /// The error of writing `what` as JSON.
    pub(crate) fn encoding(what: &'static str) -> impl FnOnce(serde_json::Error) -> Self {
        move |cause| Error::Encoding { what, cause }
    }

    /// A write's failure: [`Error::Taken`] when it broke the uniqueness of
    /// `unique` (whichever backend said so), else [`Error::Database`].
    pub(crate) fn on_write(error: sqlx::Error, unique: Unique, value: &str) -> Self {
        match &error {
            sqlx::Error::Database(database) if database.is_unique_violation() => Error::Taken {
                what: unique,
                value: value.to_owned(),
            },
            _ => Error::Database(error),
        }
    }
}

/// Violations one after another, `; ` between them.
struct Listed<'a>(&'a [Violation]);

impl fmt::Display for Listed<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, violation) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{violation}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use sqlx::Connection;

    use super::*;

    #[tokio::test]
    async fn a_write_that_breaks_a_unique_value_is_taken_and_other_failures_keep_their_cause() {
        let mut conn = sqlx::SqliteConnection::connect("sqlite::memory:")
            .await
            .unwrap();
        sqlx::query("CREATE TABLE t (reference TEXT NOT NULL UNIQUE)")
            .execute(&mut conn)
            .await
            .unwrap();
        let insert = "INSERT INTO t (reference) VALUES ('Q-1')";
        sqlx::query(insert).execute(&mut conn).await.unwrap();
        let again = sqlx::query(insert).execute(&mut conn).await.unwrap_err();
        let taken = Error::on_write(again, Unique::QuoteReference, "Q-1");
        assert!(
            matches!(&taken, Error::Taken { what: Unique::QuoteReference, value } if value == "Q-1"),
            "{taken:?}"
        );

        let broken = sqlx::query("INSERT INTO nowhere VALUES (1)")
            .execute(&mut conn)
            .await
            .unwrap_err();
        let failed = Error::on_write(broken, Unique::QuoteReference, "Q-2");
        assert_eq!(failed.to_string(), "the database failed");
        let cause = std::error::Error::source(&failed).map(ToString::to_string);
        assert!(
            cause
                .as_deref()
                .is_some_and(|cause| cause.contains("no such table: nowhere")),
            "{cause:?}"
        );
    }

    #[test]
    fn invalid_input_lists_each_violation_with_its_path() {
        let error = Error::Invalid(vec![
            Violation::new("sku", "must be 1 to 1000 characters"),
            Violation::new("price", "must be 0 to 1000000"),
        ]);
        assert_eq!(
            error.to_string(),
            "invalid input: sku: must be 1 to 1000 characters; price: must be 0 to 1000000"
        );
    }
}
