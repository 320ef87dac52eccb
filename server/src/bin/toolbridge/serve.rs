//! `toolbridge serve`: the server, on a database it creates and migrates. An
//! empty database stays empty (the server says how to make the first tenant and
//! admin), unless `--demo` asks for demo data and the example tools.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Args;
use ipnet::IpNet;
use toolbridge_server::client::TrustedProxies;
use toolbridge_server::fetch::PrivateFetch;
use toolbridge_server::lifecycle::{self, DrainTimes, Signals};
use toolbridge_server::outgoing::TrustedRoots;
use toolbridge_server::public_urls::PublicUrls;
use toolbridge_server::telemetry;
use toolbridge_server::tools::{self, DevTool, ToolSites};
use toolbridge_server::webhooks::worker::{self, WorkerOptions};
use toolbridge_server::{AppState, router};
use toolbridge_store::{Error as StoreError, Location, Store};

use crate::{Database, Failure, open, tenants};
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
    /// On an empty database, create demo data: two tenants, their users (each
    /// with the password `demo-password`), a catalog, jobs and quotes, and
    /// install the example tools. For trying toolbridge on your own machine,
    /// never for production. Without it an empty database stays empty, and the
    /// server prints how to create the first tenant and admin.
    #[arg(long)]
    demo: bool,
    /// Products in the demo catalog when --demo seeds an empty database.
    #[arg(long, default_value_t = 1000)]
    seed_products: u32,
    /// An origin besides the app's own whose pages may use the session and
    /// read responses (a host page on a development server:
    /// `http://localhost:3000`). Repeatable. Never a tool's origin.
    #[arg(long = "allow-origin", value_name = "ORIGIN")]
    allow_origins: Vec<String>,
    /// A built SDK folder (`sdk/dist`, which `cargo xtask build` writes) to
    /// serve at /sdk/bridge.js, on the app's origin and on every tool's, in
    /// place of the copy built into the server; read on each request, so a
    /// rebuilt SDK shows at once (development).
    #[arg(long, value_name = "DIR")]
    sdk_dir: Option<PathBuf>,
    /// A folder of the reference web app (`www`) to serve at the root in
    /// place of the copy built into the server (development).
    #[arg(long, value_name = "DIR")]
    www_dir: Option<PathBuf>,
    /// A built host module folder (`host/dist`, which `cargo xtask build`
    /// writes) to serve under /host/ in place of the copy built into the
    /// server (development).
    #[arg(long, value_name = "DIR")]
    host_dir: Option<PathBuf>,
    /// A built documentation folder (`docs/book`, which `cargo xtask build`
    /// writes) to serve under /docs/ in place of the copy built into the
    /// server (development).
    #[arg(long, value_name = "DIR")]
    docs_dir: Option<PathBuf>,
    /// The app's origin as browsers see it: scheme, host and port, no path
    /// (`https://app.example.com` behind a proxy that terminates TLS).
    /// Every origin the server writes comes from this and `--tools-url`,
    /// never from the port it listens on. Default: `http://localhost:<port>`.
    #[arg(long, env = "TOOLBRIDGE_PUBLIC_URL", value_name = "URL")]
    public_url: Option<String>,
    /// Where tools live, with `{slug}` as the host's leftmost label
    /// (`https://{slug}.tools.example.com`); each tool gets that origin.
    /// Default: `{slug}.tools.<the public URL's host>` on its scheme and port,
    /// or `http://{slug}.tools.localhost:<port>` without a public URL.
    #[arg(long, env = "TOOLBRIDGE_TOOLS_URL", value_name = "TEMPLATE")]
    tools_url: Option<String>,
    /// A tool folder to serve live at its origin while you edit it (reload
    /// the frame to see a change). Repeatable. It takes the place of an
    /// installed tool with the same slug.
    #[arg(long = "dev-tool", value_name = "DIR")]
    dev_tools: Vec<PathBuf>,
    /// A folder of tools (one folder each) to install when the demo data is
    /// created, in place of the example tools built into the server; a path
    /// that is not a folder installs none.
    #[arg(long, value_name = "DIR")]
    example_tools: Option<PathBuf>,
    /// Let webhook endpoints point at loopback, private and link-local
    /// addresses (a receiver on this machine, for development and tests).
    /// Without it such URLs are refused, when saved and before each delivery.
    #[arg(long)]
    allow_private_webhooks: bool,
    /// Let the server's fetch for tools (`bridge.fetch`) reach this address and port although it
    /// is a loopback, private or link-local one: HOST:PORT, HOST a name (all its addresses on
    /// that port) or an IP address (`[::1]:8443` for IPv6). Repeatable; the variable takes a
    /// comma-separated list. Without it such addresses are refused.
    #[arg(
        long = "allow-private-fetch",
        value_name = "HOST:PORT",
        env = "TOOLBRIDGE_ALLOW_PRIVATE_FETCH",
        value_delimiter = ',',
        value_parser = private_fetch
    )]
    allow_private_fetch: Vec<PrivateFetchArg>,
    /// A PEM file of root certificates to trust, beside the built-in public roots, for the
    /// server's own https requests: webhook deliveries and the fetch for tools (a company's own
    /// CA, say).
    #[arg(long, env = "TOOLBRIDGE_TRUST_CA", value_name = "FILE")]
    trust_ca: Option<PathBuf>,
    /// A reverse proxy whose `X-Forwarded-For` (or, without it, `Forwarded: for=`) header names
    /// the client: an address, or a network in CIDR notation (`10.0.0.0/8`, `fd00::/8`).
    /// Repeatable; the variable takes a comma-separated list. A request from any other peer is
    /// taken to come from that peer, whatever it forwards.
    #[arg(
        long = "trust-proxy",
        value_name = "CIDR",
        env = "TOOLBRIDGE_TRUST_PROXY",
        value_delimiter = ',',
        value_parser = trusted_proxy
    )]
    trust_proxies: Vec<TrustedProxy>,
    /// Serve metrics in the Prometheus text format at http://ADDR:PORT/metrics, a listener of
    /// their own (never the public one). Without it nothing is recorded.
    #[arg(long, env = "TOOLBRIDGE_METRICS_BIND", value_name = "ADDR:PORT")]
    metrics_bind: Option<SocketAddr>,
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
    /// Seconds to wait, once SIGTERM or SIGINT has started the drain (`/readyz` answering 503),
    /// before the listener closes; requests are served as usual meanwhile, so that a load
    /// balancer polling /readyz stops sending new ones first.
    #[arg(long, env = "TOOLBRIDGE_DRAIN_DELAY_SECS", default_value_t = 0, value_name = "SECS",
        value_parser = clap::value_parser!(u64).range(0..=3600))]
    drain_delay_secs: u64,
    /// Seconds that requests (and webhook deliveries) in flight get to finish once the listener
    /// has closed; whatever is left then is cut, and the server exits all the same.
    #[arg(long, env = "TOOLBRIDGE_SHUTDOWN_GRACE_SECS", default_value_t = 20, value_name = "SECS",
        value_parser = clap::value_parser!(u64).range(0..=3600))]
    shutdown_grace_secs: u64,
    #[command(flatten)]
    database: Database,
}

/// Says in the log when the database holds secrets unsealed because the server has no secrets key.
async fn warn_of_unsealed_secrets(store: &Store, database: &Database) -> Result<(), Failure> {
    if database.secrets_key_file.is_some() {
        return Ok(());
    }
    let at_rest = store
        .secrets_at_rest()
        .await
        .map_err(|e| Failure::because("cannot read the database", e))?;
    if at_rest.plain > 0 {
        tracing::warn!(
            unsealed = at_rest.plain,
            "secrets at rest: the database holds secrets as they were given; start the server \
             with --secrets-key-file to seal them"
        );
    }
    Ok(())
}

/// Runs the server until SIGTERM or SIGINT, then drains it (`toolbridge_server::lifecycle`) and
/// returns.
pub(crate) async fn run(mut args: ServeArgs) -> Result<(), Failure> {
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
    // Checked before anything else starts; made again below for the port actually bound.
    public_urls(&args, args.port)?;
    let roots = match &args.trust_ca {
        Some(file) => TrustedRoots::from_pem_file(file)?,
        None => TrustedRoots::default(),
    };
    let dev_tools = read_dev_tools(&args.dev_tools)?;
    let location = args.database.location()?;
    let store = open(&args.database).await?;
    warn_of_unsealed_secrets(&store, &args.database).await?;
    let seeded = store
        .is_seeded()
        .await
        .map_err(|e| Failure::because("cannot read the database", e))?;
    if !seeded {
        if args.demo {
            seed(&store, &args, &location).await?;
        } else {
            println!("{}", tenants::first_steps(&args.database));
        }
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
    // From here on SIGTERM and SIGINT drain the server; until now they stopped it at once.
    let signals =
        Signals::install().map_err(|e| Failure::because("cannot catch SIGTERM and SIGINT", e))?;
    if let Some(metrics_bind) = args.metrics_bind {
        serve_metrics(metrics_bind, &store).await?;
    }
    let mut sites = ToolSites::new(public_urls(&args, bound.port())?);
    for tool in dev_tools {
        sites = sites.with_dev_tool(tool);
    }
    print_tools(&store, &sites).await?;
    println!(
        "toolbridge listening on http://{bound} for {}/ (REST API at /api/v1, document at /api/v1/openapi.json)",
        sites.urls().app_origin()
    );
    let state = app_state(&mut args, store, sites, &roots);
    let options = WorkerOptions {
        timeout: Duration::from_secs(args.webhook_timeout_secs),
        lease: Duration::from_secs(args.webhook_lease_secs),
        retry_base: Duration::from_secs(args.webhook_retry_base_secs),
        ..WorkerOptions::default()
    };
    let worker = worker::spawn_trusting(
        state.store.clone(),
        state.webhook_destinations,
        options,
        &roots,
    )
    .map_err(|e| Failure::because("cannot start the webhook delivery worker", e))?;
    let lifecycle = state.lifecycle.clone();
    signals.watch(lifecycle.clone());
    let times = DrainTimes {
        delay: Duration::from_secs(args.drain_delay_secs),
        grace: Duration::from_secs(args.shutdown_grace_secs),
    };
    lifecycle::serve(listener, router(state), &lifecycle, Some(worker), times)
        .await
        .map_err(|e| Failure::because("server error", e))?;
    Ok(())
}

/// The server's state from the arguments: the origins and proxies it trusts, the folders it
/// serves in place of its own copies, and where webhooks and the fetch for tools may go.
fn app_state(
    args: &mut ServeArgs,
    store: Store,
    sites: ToolSites,
    roots: &TrustedRoots,
) -> AppState {
    let mut state = AppState::new(store)
        .allowing_origins(std::mem::take(&mut args.allow_origins))
        .trusting_proxies(TrustedProxies::new(
            std::mem::take(&mut args.trust_proxies)
                .into_iter()
                .filter_map(|proxy| proxy.0),
        ))
        .serving_tools(sites);
    // The files built into the server, unless a folder is given in place of them.
    if let Some(dir) = &args.sdk_dir {
        state = state.serving_sdk_from(absolute(dir));
    }
    if let Some(dir) = &args.www_dir {
        state = state.serving_www_from(absolute(dir));
    }
    if let Some(dir) = &args.host_dir {
        state = state.serving_host_from(absolute(dir));
    }
    if let Some(dir) = &args.docs_dir {
        state = state.serving_docs_from(absolute(dir));
    }
    if args.allow_private_webhooks {
        state = state.allowing_private_webhooks();
    }
    state
        .allowing_private_fetch(
            std::mem::take(&mut args.allow_private_fetch)
                .into_iter()
                .filter_map(|allowed| allowed.0)
                .collect(),
        )
        .trusting_roots(roots.clone())
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
    let outcomes = match &args.example_tools {
        None => tools::install_builtin_examples(store).await,
        Some(dir) if dir.is_dir() => tools::install_examples(store, dir).await,
        Some(dir) => {
            println!(
                "No example tools at {}; install tools with `toolbridge tool install`.",
                dir.display()
            );
            return Ok(());
        }
    };
    for outcome in outcomes {
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

/// The app's and the tools' origins from `--public-url` and `--tools-url`, for a server on `port`.
fn public_urls(args: &ServeArgs, port: u16) -> Result<PublicUrls, Failure> {
    PublicUrls::new(args.public_url.as_deref(), args.tools_url.as_deref(), port)
        .map_err(|error| Failure::from(error.to_string()))
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

/// One `--trust-proxy` value; `None` for an empty one (as an empty `TOOLBRIDGE_TRUST_PROXY`, or
/// a trailing comma in it, gives), which trusts nothing.
#[derive(Debug, Clone)]
struct TrustedProxy(Option<IpNet>);

/// One `--allow-private-fetch` value; `None` for an empty one (an empty variable).
#[derive(Debug, Clone)]
struct PrivateFetchArg(Option<PrivateFetch>);

/// Reads an `--allow-private-fetch` value, or says what is wrong with it.
fn private_fetch(text: &str) -> Result<PrivateFetchArg, String> {
    if text.trim().is_empty() {
        return Ok(PrivateFetchArg(None));
    }
    text.trim()
        .parse()
        .map(|allowed| PrivateFetchArg(Some(allowed)))
}

/// Reads a `--trust-proxy` value, or says what is wrong with it.
fn trusted_proxy(text: &str) -> Result<TrustedProxy, String> {
    if text.trim().is_empty() {
        return Ok(TrustedProxy(None));
    }
    TrustedProxies::parse_network(text).map(|network| TrustedProxy(Some(network)))
}

/// Starts recording metrics and serves them at `http://<bind>/metrics` for as long as the
/// process runs; says where on standard output.
async fn serve_metrics(bind: SocketAddr, store: &Store) -> Result<(), Failure> {
    let listener = tokio::net::TcpListener::bind(bind)
        .await
        .map_err(|e| Failure::because(format!("--metrics-bind: cannot listen on {bind}"), e))?;
    let bound = listener.local_addr().map_err(|e| {
        Failure::because(
            format!("--metrics-bind: cannot tell where {bind} listens"),
            e,
        )
    })?;
    let metrics = telemetry::install().map_err(|e| Failure::because("--metrics-bind", e))?;
    let store = store.clone();
    tokio::spawn(async move {
        if let Err(error) = telemetry::serve(listener, metrics, store).await {
            tracing::error!(error = %Chain(&error), "the metrics listener stopped");
        }
    });
    println!("toolbridge metrics on http://{bound}{}", telemetry::PATH);
    Ok(())
}
