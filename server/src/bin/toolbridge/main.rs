//! `toolbridge`: the backend server and its command line.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use toolbridge_server::{AppState, router};
use toolbridge_store::{RateLimit, Scope, Store};

/// The toolbridge backend: REST API, session API and the CLI for keys.
#[derive(Debug, Parser)]
#[command(name = "toolbridge", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Runs the server (creating and seeding the database on first start).
    Serve(ServeArgs),
    /// Manages API keys.
    #[command(subcommand)]
    Keys(KeysCommand),
}

#[derive(Debug, Args)]
struct Database {
    /// The SQLite file (created if missing).
    #[arg(long, default_value = "toolbridge.sqlite3")]
    db: PathBuf,
}

#[derive(Debug, Args)]
struct ServeArgs {
    /// The port to listen on (0 picks a free one).
    #[arg(long, default_value_t = 8080)]
    port: u16,
    /// The address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    bind: std::net::IpAddr,
    /// Products in the demo catalog when the database is first seeded.
    #[arg(long, default_value_t = 1000)]
    seed_products: u32,
    /// An origin besides the app's own whose pages may use the session and
    /// read responses (a host page on a development server:
    /// `http://localhost:3000`). Repeatable. Never a tool's origin.
    #[arg(long = "allow-origin", value_name = "ORIGIN")]
    allow_origins: Vec<String>,
    /// Where the built SDK is (`cargo xtask build` writes `sdk/dist`); served
    /// at /sdk/bridge.js.
    #[arg(long, default_value = "sdk/dist")]
    sdk_dir: PathBuf,
    #[command(flatten)]
    database: Database,
}

#[derive(Debug, Subcommand)]
enum KeysCommand {
    /// Creates a key and prints it once (only its hash is stored).
    Create {
        /// A name that says what the key is for.
        #[arg(long)]
        name: String,
        /// Comma-separated scopes: customers:read, products:read, quotes:read,
        /// quotes:write, jobs:read, catalog:read.
        #[arg(long, value_delimiter = ',', required = true)]
        scopes: Vec<String>,
        /// Requests per window, as `120/60s`.
        #[arg(long, default_value = "120/60s")]
        rate_limit: String,
        #[command(flatten)]
        database: Database,
    },
    /// Lists the keys of the demo tenant.
    List {
        #[command(flatten)]
        database: Database,
    },
    /// Revokes a key: it stops working at once.
    Revoke {
        /// The key's id (from `keys list`).
        id: String,
        #[command(flatten)]
        database: Database,
    },
}

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    match run(cli.command).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("toolbridge: {message}");
            ExitCode::FAILURE
        }
    }
}

async fn run(command: Command) -> Result<(), String> {
    match command {
        Command::Serve(args) => serve(args).await,
        Command::Keys(keys) => run_keys(keys).await,
    }
}

async fn open(database: &Database) -> Result<Store, String> {
    Store::open(&database.db)
        .await
        .map_err(|e| format!("cannot open {}: {e}", database.db.display()))
}

async fn serve(args: ServeArgs) -> Result<(), String> {
    for origin in &args.allow_origins {
        if !(origin.starts_with("http://") || origin.starts_with("https://"))
            || origin.ends_with('/')
        {
            return Err(format!(
                "--allow-origin {origin}: give an origin like http://localhost:3000 (scheme, host, port; no path)"
            ));
        }
    }
    let store = open(&args.database).await?;
    if !store.is_seeded().await.map_err(|e| e.to_string())? {
        let sign_ins = store
            .seed_demo(args.seed_products)
            .await
            .map_err(|e| format!("cannot seed the demo data: {e}"))?;
        println!(
            "Created {} with demo data ({} products). Sign in with:",
            args.database.db.display(),
            args.seed_products
        );
        for sign_in in sign_ins {
            println!(
                "  {:<24} {:<16} {} ({})",
                sign_in.email,
                sign_in.password,
                sign_in.role.label(),
                sign_in.tenant_name
            );
        }
    }
    let address = SocketAddr::new(args.bind, args.port);
    let listener = tokio::net::TcpListener::bind(address)
        .await
        .map_err(|e| format!("cannot listen on {address}: {e}"))?;
    let bound = listener.local_addr().map_err(|e| e.to_string())?;
    println!(
        "toolbridge listening on http://{bound} (REST API at /api/v1, document at /api/v1/openapi.json)"
    );
    let state = AppState::new(store)
        .allowing_origins(args.allow_origins)
        .serving_sdk_from(args.sdk_dir);
    axum::serve(listener, router(state))
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
        .map_err(|e| format!("server error: {e}"))
}

async fn run_keys(command: KeysCommand) -> Result<(), String> {
    match command {
        KeysCommand::Create {
            name,
            scopes,
            rate_limit,
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
            let tenant = demo_tenant(&store).await?;
            let created = store
                .create_api_key(&tenant.id, &name, &scopes, rate_limit)
                .await
                .map_err(|e| e.to_string())?;
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
        KeysCommand::List { database } => {
            let store = open(&database).await?;
            let tenant = demo_tenant(&store).await?;
            let keys = store
                .list_api_keys(&tenant.id)
                .await
                .map_err(|e| e.to_string())?;
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
        KeysCommand::Revoke { id, database } => {
            let store = open(&database).await?;
            let tenant = demo_tenant(&store).await?;
            if store
                .revoke_api_key(&tenant.id, &id)
                .await
                .map_err(|e| e.to_string())?
            {
                println!("Revoked {id}.");
                Ok(())
            } else {
                Err(format!(
                    "no key {id} in {}; `toolbridge keys list` shows the ids",
                    tenant.name
                ))
            }
        }
    }
}

async fn demo_tenant(store: &Store) -> Result<toolbridge_store::Tenant, String> {
    store
        .default_tenant()
        .await
        .map_err(|e| e.to_string())?
        .ok_or_else(|| {
            "the database has no tenant yet; run `toolbridge serve` once to create it".to_owned()
        })
}
