//! `toolbridge keys`: a tenant's API keys.

use clap::Subcommand;
use toolbridge_store::{RateLimit, Scope};

use crate::tenants::resolve;
use crate::{Database, Failure, open};

/// `toolbridge keys …`.
#[derive(Debug, Subcommand)]
pub(crate) enum KeysCommand {
    /// Creates a key and prints it once (only its hash is stored).
    Create {
        /// A name that says what the key is for.
        #[arg(long)]
        name: String,
        /// Comma-separated scopes: customers:read, products:read, quotes:read,
        /// quotes:write, jobs:read, catalog:read, webhooks:write.
        #[arg(long, value_delimiter = ',', required = true)]
        scopes: Vec<String>,
        /// Requests per window, as `120/60s`.
        #[arg(long, default_value = "120/60s")]
        rate_limit: String,
        #[command(flatten)]
        tenant: TenantArg,
        #[command(flatten)]
        database: Database,
    },
    /// Lists a tenant's keys.
    List {
        #[command(flatten)]
        tenant: TenantArg,
        #[command(flatten)]
        database: Database,
    },
    /// Revokes a key: it stops working at once.
    Revoke {
        /// The key's id (from `keys list`).
        id: String,
        #[command(flatten)]
        tenant: TenantArg,
        #[command(flatten)]
        database: Database,
    },
}

/// The tenant whose keys a command works on.
#[derive(Debug, clap::Args)]
pub(crate) struct TenantArg {
    /// The tenant, by name or id (`toolbridge tenants list`); needed when the database has more
    /// than one.
    #[arg(long, value_name = "NAME-OR-ID")]
    tenant: Option<String>,
}

/// Runs a `keys` subcommand.
pub(crate) async fn run(command: KeysCommand) -> Result<(), Failure> {
    match command {
        KeysCommand::Create {
            name,
            scopes,
            rate_limit,
            tenant,
            database,
        } => {
            let scopes = scopes
                .iter()
                .map(|scope| {
                    Scope::parse(scope.trim()).ok_or_else(|| {
                        let known: Vec<&str> = Scope::ALL.iter().map(|s| s.as_str()).collect();
                        format!(
                            "unknown scope `{scope}`; the scopes are {}",
                            known.join(", ")
                        )
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            let rate_limit = RateLimit::parse(&rate_limit)
                .map_err(|e| format!("--rate-limit {rate_limit}: {e}"))?;
            let store = open(&database).await?;
            let tenant = resolve(&store, tenant.tenant.as_deref()).await?;
            let created = store
                .create_api_key(&tenant.id, &name, &scopes, rate_limit)
                .await
                .map_err(|e| Failure::because("cannot create the key", e))?;
            println!(
                "Created API key {} ({}) for {}.",
                created.key.id, created.key.name, tenant.name
            );
            println!(
                "It is shown only now; store it somewhere safe:\n\n  {}\n",
                created.token
            );
            Ok(())
        }
        KeysCommand::List { tenant, database } => {
            let store = open(&database).await?;
            let tenant = resolve(&store, tenant.tenant.as_deref()).await?;
            let keys = store
                .list_api_keys(&tenant.id)
                .await
                .map_err(|e| Failure::because("cannot list the keys", e))?;
            if keys.is_empty() {
                println!(
                    "{} has no API keys; create one with `toolbridge keys create`.",
                    tenant.name
                );
            }
            for key in keys {
                let scopes: Vec<&str> = key.scopes.iter().map(|s| s.as_str()).collect();
                let state = key
                    .revoked_at
                    .as_deref()
                    .map_or("active".to_owned(), |at| format!("revoked {at}"));
                println!(
                    "{}  {:<20} {}…  {:<10} {}  {}",
                    key.id,
                    key.name,
                    key.prefix,
                    key.rate_limit,
                    scopes.join(","),
                    state
                );
            }
            Ok(())
        }
        KeysCommand::Revoke {
            id,
            tenant,
            database,
        } => {
            let store = open(&database).await?;
            let tenant = resolve(&store, tenant.tenant.as_deref()).await?;
            if store
                .revoke_api_key(&tenant.id, &id)
                .await
                .map_err(|e| Failure::because("cannot revoke the key", e))?
            {
                println!("Revoked {id}.");
                Ok(())
            } else {
                Err(format!(
                    "no key {id} in {}; `toolbridge keys list` shows the ids",
                    tenant.name
                )
                .into())
            }
        }
    }
}
