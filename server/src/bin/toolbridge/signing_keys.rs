//! `toolbridge signing-keys`: the keys identity tokens are signed with.

use clap::Subcommand;
use toolbridge_protocol::identity::TOKEN_LIFETIME_SECS;
use toolbridge_server::identity::now_unix;
use toolbridge_store::iso_from_unix;

use crate::{Database, Failure, open};

/// `toolbridge signing-keys …`.
#[derive(Debug, Subcommand)]
pub(crate) enum SigningKeysCommand {
    /// Makes a new key that signs every token from now on. The old one stays published at
    /// /.well-known/jwks.json until every token it signed has expired (5 minutes), then goes.
    Rotate {
        #[command(flatten)]
        database: Database,
    },
    /// Lists the keys: id, algorithm, when made, when retired, and whether the key set
    /// publishes it now. Never a private key.
    List {
        #[command(flatten)]
        database: Database,
    },
}

/// Now, as the store counts it.
fn now() -> i64 {
    i64::try_from(now_unix()).unwrap_or(i64::MAX)
}

/// Runs a `signing-keys` subcommand.
pub(crate) async fn run(command: SigningKeysCommand) -> Result<(), Failure> {
    match command {
        SigningKeysCommand::Rotate { database } => {
            let store = open(&database).await?;
            let key = store
                .rotate_signing_key(now())
                .await
                .map_err(|e| Failure::because("cannot rotate the signing key", e))?;
            println!(
                "New signing key {} ({}) signs every identity token from now on.",
                key.kid, key.algorithm
            );
            println!(
                "The key it replaces stays published for {TOKEN_LIFETIME_SECS} seconds, until the tokens it signed have expired."
            );
            Ok(())
        }
        SigningKeysCommand::List { database } => {
            let store = open(&database).await?;
            let keys = store
                .signing_keys(now())
                .await
                .map_err(|e| Failure::because("cannot list the signing keys", e))?;
            if keys.is_empty() {
                println!(
                    "No signing key yet: the first identity token makes one, or `toolbridge signing-keys rotate`."
                );
                return Ok(());
            }
            println!(
                "{:<24}  {:<5}  {:<20}  {:<20}  published",
                "kid", "alg", "created", "retired"
            );
            for key in keys {
                println!(
                    "{:<24}  {:<5}  {:<20}  {:<20}  {}",
                    key.kid,
                    key.algorithm,
                    iso_from_unix(key.created_at),
                    key.retired_at.map_or("-".to_owned(), iso_from_unix),
                    if key.published { "yes" } else { "no" }
                );
            }
            Ok(())
        }
    }
}
