//! `toolbridge signing-keys`: the keys identity tokens are signed with.

use clap::Subcommand;
use toolbridge_protocol::identity::TOKEN_LIFETIME_SECS;
use toolbridge_server::identity::now_unix;
use toolbridge_store::{Rotated, Rotation, iso_from_unix};

use crate::{Database, Failure, open};

/// `toolbridge signing-keys …`.
#[derive(Debug, Subcommand)]
pub(crate) enum SigningKeysCommand {
    /// Makes a new key and publishes it at /.well-known/jwks.json at once. It signs the tokens
    /// from 5 minutes on, once every copy of the key set cached before has expired, so that no
    /// verifier meets a token signed by a key it has not seen; the old key signs until then, and
    /// stays published until every token it signed has expired (5 minutes more), then goes.
    Rotate {
        /// Sign with the new key at once and stop the old one now: for a key that leaked.
        /// Verifiers whose cached key set predates it refuse the new tokens until they fetch the
        /// set again.
        #[arg(long)]
        at_once: bool,
        #[command(flatten)]
        database: Database,
    },
    /// Lists the keys: id, algorithm, when made, when it stops (or stopped) signing, whether it
    /// signs now, and whether the key set publishes it now. Never a private key.
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
        SigningKeysCommand::Rotate { at_once, database } => {
            let store = open(&database).await?;
            let now = now();
            let rotation = if at_once {
                Rotation::AtOnce
            } else {
                Rotation::Staged
            };
            let Rotated { key, signs_from } = store
                .rotate_signing_key(now, rotation)
                .await
                .map_err(|e| Failure::because("cannot rotate the signing key", e))?;
            if signs_from <= now {
                println!(
                    "New signing key {} ({}) signs every identity token from now on.",
                    key.kid, key.algorithm
                );
            } else {
                println!(
                    "New signing key {} ({}) is published now and signs every identity token from {} ({} seconds from now), once the key sets cached before it have expired.",
                    key.kid,
                    key.algorithm,
                    iso_from_unix(signs_from),
                    signs_from - now
                );
            }
            println!(
                "A key it replaces stays published for {TOKEN_LIFETIME_SECS} seconds after it stops signing, until the tokens it signed have expired."
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
                "{:<24}  {:<5}  {:<20}  {:<20}  {:<5}  published",
                "kid", "alg", "created", "stops signing", "signs"
            );
            let yes = |yes: bool| if yes { "yes" } else { "no" };
            for key in keys {
                println!(
                    "{:<24}  {:<5}  {:<20}  {:<20}  {:<5}  {}",
                    key.kid,
                    key.algorithm,
                    iso_from_unix(key.created_at),
                    key.retired_at.map_or("-".to_owned(), iso_from_unix),
                    yes(key.signs),
                    yes(key.published)
                );
            }
            Ok(())
        }
    }
}
