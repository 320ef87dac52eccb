//! `toolbridge serve`: the server, on a database it creates, seeds and fills
//! with the example tools on first start.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Args;
use toolbridge_server::tools::{self, DevTool, ToolSites, sites};
use toolbridge_server::webhooks::worker::{self, WorkerOptions};
use toolbridge_server::{AppState, router};
use toolbridge_store::{Error as StoreError, Location, Store};

use crate::{Database, Failure, connect};
use toolbridge_server::error::Chain;

/// `toolbridge serve …`.
#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
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
    /// at /sdk/bridge.js, on the app's origin and on every tool's.
    #[arg(long, default_value = "sdk/dist")]
    sdk_dir: PathBuf,
    /// The reference web app's folder, served at the root.
    #[arg(long, default_value = "www")]
    www_dir: PathBuf,
    /// Where the built host module is (`cargo xtask build` writes
    /// `host/dist`); served under /host/.
    #[arg(long, default_value = "host/dist")]
    host_dir: PathBuf,
    /// The domain under which each tool gets its own origin,
    /// `http://<slug>.<domain>:<port>`.
    #[arg(long, default_value = sites::DEFAULT_DOMAIN)]
    tools_domain: String,
    /// A tool folder to serve live at its origin while you edit it (reload
    /// the frame to see a change). Repeatable. It takes the place of an
    /// installed tool with the same slug.
    #[arg(long = "dev-tool", value_name = "DIR")]
    dev_tools: Vec<PathBuf>,
    /// The folder of tools installed when the database is first created.
    #[arg(long, default_value = "example-tools")]
    example_tools: PathBuf,
    /// Let webhook endpoints point at loopback, private and link-local
    /// addresses (a receiver on this machine, for development and tests).
    /// Without it such URLs are refused, when saved and before each delivery.
    #[arg(long)]
    allow_private_webhooks: bool,
    /// Seconds before the first retry of a failed webhook delivery (30); each later retry waits
    /// four times longer, with jitter. Hidden: for tests that wait for retries.
    #[arg(long, hide = true, default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=3600))]
    webhook_retry_base_secs: u64,
    /// Seconds an attempt at a webhook delivery may take (10). Hidden: for tests.
    #[arg(long, hide = true, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=600))]
    webhook_timeout_secs: u64,
    /// Seconds a claimed webhook delivery is kept from other workers (60); more than the
    /// timeout. Hidden: for tests of a server killed mid-delivery.
    #[arg(long, hide = true, default_value_t = 60, value_parser = clap::value_parser!(u64).range(2..=3600))]
    webhook_lease_secs: u64,
    #[command(flatten)]
    database: Database,
}

/// Runs the server until Ctrl-C.
pub(crate) async fn run(args: ServeArgs) -> Result<(), Failure> {
    for origin in &args.allow_origins {
        if !(origin.starts_with("http://") || origin.starts_with("https://"))
            || origin.ends_with('/')
        {
            return Err(format!(
                "--allow-origin {origin}: give an origin like http://localhost:3000 (scheme, host, port; no path)"
            )
            .into());
        }
    }
    if args.webhook_lease_secs <= args.webhook_timeout_secs {
        return Err(format!(
            "--webhook-lease-secs {} must be longer than --webhook-timeout-secs {}, or a slow delivery is sent twice",
            args.webhook_lease_secs, args.webhook_timeout_secs
        )
        .into());
    }
    let dev_tools = read_dev_tools(&args.dev_tools)?;
    let location = args.database.location()?;
    let store = connect(&location).await?;
    let seeded = store
        .is_seeded()
        .await
        .map_err(|e| Failure::because("cannot read the database", e))?;
    if !seeded {
        seed(&store, &args, &location).await?;
    }
    // On PostgreSQL, listen for the live events of every instance before serving any page.
    store
        .listen()
        .await
        .map_err(|e| Failure::because("cannot listen for live events", e))?;
    let address = SocketAddr::new(args.bind, args.port);
    let listener = tokio::net::TcpListener::bind(address)
        .await
        .map_err(|e| Failure::because(format!("cannot listen on {address}"), e))?;
    let bound = listener
        .local_addr()
        .map_err(|e| Failure::because(format!("cannot tell where {address} listens"), e))?;
    let mut sites = ToolSites::new(&args.tools_domain, bound.port());
    for tool in dev_tools {
        sites = sites.with_dev_tool(tool);
    }
    print_tools(&store, &sites).await?;
    println!(
        "toolbridge listening on http://{bound} (REST API at /api/v1, document at /api/v1/openapi.json)"
    );
    let mut state = AppState::new(store)
        .allowing_origins(args.allow_origins)
        .serving_sdk_from(args.sdk_dir)
        .serving_app_from(args.www_dir, args.host_dir)
        .serving_tools(sites);
    if args.allow_private_webhooks {
        state = state.allowing_private_webhooks();
    }
    let options = WorkerOptions {
        timeout: Duration::from_secs(args.webhook_timeout_secs),
        lease: Duration::from_secs(args.webhook_lease_secs),
        retry_base: Duration::from_secs(args.webhook_retry_base_secs),
        ..WorkerOptions::default()
    };
    let worker = worker::spawn(state.store.clone(), state.webhook_destinations, options)
        .map_err(|e| Failure::because("cannot start the webhook delivery worker", e))?;
    let served = axum::serve(listener, router(state))
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
        .map_err(|e| Failure::because("server error", e));
    // Attempts in flight are abandoned: their leases run out and they are sent after a restart.
    worker.stop().await;
    served
}

/// Creates the demo data and installs the example tools. Of several servers
/// starting together on one empty database, one seeds and installs; the others
/// find its data.
async fn seed(store: &Store, args: &ServeArgs, location: &Location) -> Result<(), Failure> {
    let sign_ins = match store.seed_demo(args.seed_products).await {
        Ok(sign_ins) => sign_ins,
        Err(StoreError::NotEmpty) => {
            println!("Another server has just seeded {location} with demo data.");
            return Ok(());
        }
        Err(e) => return Err(Failure::because("cannot seed the demo data", e)),
    };
    println!(
        "Created {location} with demo data ({} products). Sign in with:",
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
    if !args.example_tools.is_dir() {
        println!(
            "No example tools at {}; install tools with `toolbridge tool install`.",
            args.example_tools.display()
        );
        return Ok(());
    }
    for outcome in tools::install_examples(store, &args.example_tools).await {
        match outcome {
            Ok(installed) => println!(
                "Installed the example tool {} ({} {}).",
                installed.tool.slug, installed.tool.manifest.name, installed.tool.manifest.version
            ),
            Err(error) => eprintln!("toolbridge: an example tool was not installed: {error}"),
        }
    }
    Ok(())
}

/// Checks each `--dev-tool` folder once at start (its slug comes from its
/// manifest, so the manifest must read).
fn read_dev_tools(dirs: &[PathBuf]) -> Result<Vec<DevTool>, Failure> {
    dirs.iter()
        .map(|dir| {
            let folder = toolbridge_bundle::read_dir(dir).map_err(|error| {
                format!(
                    "--dev-tool {}: the folder is not a tool yet:\n{}",
                    dir.display(),
                    Chain(&error)
                )
            })?;
            let slug = folder.bundle.suggested_slug().ok_or_else(|| {
                format!(
                    "--dev-tool {}: the manifest's shortName gives no slug; use letters or digits",
                    dir.display()
                )
            })?;
            Ok(DevTool {
                slug,
                dir: absolute(dir),
            })
        })
        .collect()
}

/// `dir` made absolute, so that the server's answers do not depend on its
/// working directory staying put.
fn absolute(dir: &Path) -> PathBuf {
    std::path::absolute(dir).unwrap_or_else(|_| dir.to_owned())
}

/// Says where each tool is served.
async fn print_tools(store: &Store, sites: &ToolSites) -> Result<(), Failure> {
    for dev in sites.dev_tools() {
        println!(
            "Serving {} live at {}/ (reload the tool to see your changes)",
            dev.dir.display(),
            sites.origin(&dev.slug)
        );
    }
    let installed = store
        .tools()
        .await
        .map_err(|e| Failure::because("cannot read the installed tools", e))?;
    for tool in installed.iter().filter(|tool| tool.enabled) {
        if sites.dev_tool(&tool.slug).is_none() {
            println!(
                "Tool {} {} at {}/",
                tool.manifest.name,
                tool.manifest.version,
                sites.origin(&tool.slug)
            );
        }
    }
    Ok(())
}
