//! `toolbridge`: the backend server and its command line.

mod keys;
mod serve;
mod tool;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use toolbridge_store::Store;

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

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    let outcome = match cli.command {
        Command::Serve(args) => serve::run(args).await,
        Command::Keys(command) => keys::run(command).await,
        Command::Tool(command) => tool::run(command).await,
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("toolbridge: {message}");
            ExitCode::FAILURE
        }
    }
}

async fn open(database: &Database) -> Result<Store, String> {
    Store::open(&database.db)
        .await
        .map_err(|e| format!("cannot open {}: {e}", database.db.display()))
}
