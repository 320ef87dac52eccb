//! `toolbridge`: the backend server and its command line.

mod keys;
mod serve;
mod tool;

use std::fmt;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use toolbridge_server::error::Chain;
use toolbridge_store::{Cause, Store};
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// The toolbridge backend: REST API, session API, tool origins, and the CLI
/// for keys and tool bundles.
#[derive(Debug, Parser)]
#[command(name = "toolbridge", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Runs the server (creating the database, with demo data and the
    /// example tools, on first start).
    Serve(serve::ServeArgs),
    /// Manages API keys.
    #[command(subcommand)]
    Keys(keys::KeysCommand),
    /// Packs, validates and installs tool bundles, and manages installed tools.
    #[command(subcommand)]
    Tool(tool::ToolCommand),
}

/// The database a command works on.
#[derive(Debug, Args)]
struct Database {
    /// The SQLite file (created if missing).
    #[arg(long, default_value = "toolbridge.sqlite3")]
    db: PathBuf,
}

/// The variable that says what the server logs: a level (`warn`), or targets with levels
/// (`toolbridge=debug,info`).
const LOG_VAR: &str = "RUST_LOG";

/// What to log, from [`LOG_VAR`] (`info` when it is unset), and why the variable was ignored if it
/// does not parse.
fn log_filter() -> (Targets, Option<String>) {
    let everything_at_info = || Targets::new().with_default(LevelFilter::INFO);
    match std::env::var(LOG_VAR) {
        Err(_) => (everything_at_info(), None),
        Ok(value) => match value.parse::<Targets>() {
            Ok(targets) => (targets, None),
            Err(e) => (everything_at_info(), Some(format!("`{value}`: {e}"))),
        },
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let (filter, bad_filter) = log_filter();
    tracing_subscriber::registry()
        .with(tracing_subscriber::fmt::layer().with_writer(std::io::stderr))
        .with(filter)
        .init();
    if let Some(problem) = bad_filter {
        tracing::warn!("{LOG_VAR} is ignored: {problem}");
    }
    let cli = Cli::parse();
    let outcome = match cli.command {
        Command::Serve(args) => serve::run(args).await,
        Command::Keys(command) => keys::run(command).await,
        Command::Tool(command) => tool::run(command).await,
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!("toolbridge: {failure}");
            ExitCode::FAILURE
        }
    }
}

/// Why a command failed: what it says went wrong, and the error behind that,
/// printed with every cause.
#[derive(Debug)]
pub(crate) struct Failure {
    message: String,
    cause: Option<Cause>,
}

impl Failure {
    /// `message`, because of `cause`.
    pub(crate) fn because(message: impl Into<String>, cause: impl Into<Cause>) -> Self {
        Failure {
            message: message.into(),
            cause: Some(cause.into()),
        }
    }
}

impl From<String> for Failure {
    fn from(message: String) -> Self {
        Failure {
            message,
            cause: None,
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        match &self.cause {
            Some(cause) => write!(f, ": {}", Chain(cause.as_ref())),
            None => Ok(()),
        }
    }
}

async fn open(database: &Database) -> Result<Store, Failure> {
    Store::open(&database.db)
        .await
        .map_err(|e| Failure::because(format!("cannot open {}", database.db.display()), e))
}
