//! `toolbridge`: the backend server and its command line.

mod keys;
mod serve;
mod signing_keys;
mod tenants;
mod tool;
mod users;

use std::fmt;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::str::FromStr;

use clap::{Args, Parser, Subcommand, ValueEnum};
use toolbridge_server::error::Chain;
use toolbridge_store::{Cause, Error as StoreError, Location, SecretsKey, Store};
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// The toolbridge backend: REST API, session API, tool origins, and the CLI
/// for tenants, users, keys and tool bundles.
#[derive(Debug, Parser)]
#[command(name = "toolbridge", version, about)]
struct Cli {
    /// How log lines are written to standard error: `text` (coloured when it is a terminal) or
    /// `json` (one object per line, for a log collector).
    #[arg(
        long,
        global = true,
        env = "TOOLBRIDGE_LOG_FORMAT",
        value_enum,
        default_value_t = LogFormat::Text
    )]
    log_format: LogFormat,
    #[command(subcommand)]
    command: Command,
}

/// `--log-format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum LogFormat {
    /// Lines for people.
    Text,
    /// One JSON object per line, the event's fields at its top level.
    Json,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Runs the server (creating and migrating the database; an empty one
    /// stays empty, or with --demo gets demo data and the example tools)
    /// until SIGTERM or SIGINT, which drain it: /readyz answers 503, requests
    /// in flight finish, and it exits 0.
    // Boxed: its many options would make every command as large.
    Serve(Box<serve::ServeArgs>),
    /// Creates and lists tenants.
    #[command(subcommand)]
    Tenants(tenants::TenantsCommand),
    /// Creates and lists a tenant's users, sets passwords, disables users.
    #[command(subcommand)]
    Users(users::UsersCommand),
    /// Manages API keys.
    #[command(subcommand)]
    Keys(keys::KeysCommand),
    /// Packs, validates and installs tool bundles, and manages installed tools.
    #[command(subcommand)]
    Tool(tool::ToolCommand),
    /// Rotates and lists the keys identity tokens are signed with.
    #[command(subcommand)]
    SigningKeys(signing_keys::SigningKeysCommand),
    /// Makes the key that seals secrets at rest (see --secrets-key-file).
    #[command(subcommand)]
    SecretsKey(SecretsKeyCommand),
}

/// `toolbridge secrets-key …`.
#[derive(Debug, Subcommand)]
enum SecretsKeyCommand {
    /// Prints a new random key (64 hex digits) for a key file, for example
    /// `(umask 077; toolbridge secrets-key generate > /etc/toolbridge/secrets.key)`.
    Generate,
    /// Seals every secret in the database with the key in --new-key-file in place of the one in
    /// --secrets-key-file (or of none). Stop every server on the database first, and start them
    /// with the new key: a server still running with the old one cannot open the secrets.
    Rotate {
        /// The new key's file, as `toolbridge secrets-key generate` writes it.
        #[arg(long, value_name = "FILE")]
        new_key_file: PathBuf,
        #[command(flatten)]
        database: Database,
    },
}

/// `toolbridge secrets-key rotate`.
async fn rotate_secrets_key(new_key_file: &Path, database: &Database) -> Result<(), Failure> {
    let new = read_secrets_key(new_key_file, "--new-key-file")?;
    let store = open(database).await?;
    let old = database.secrets_key()?.map(|key| key.id().to_owned());
    let new_id = new.id().to_owned();
    let (_, sealed) = store
        .rotate_secrets_key(new)
        .await
        .map_err(|e| Failure::because("cannot seal the secrets with the new key", e))?;
    let was = old.map_or_else(
        || "kept as given".to_owned(),
        |old| format!("sealed with key {old}"),
    );
    let secrets = if sealed == 1 { "secret" } else { "secrets" };
    println!(
        "Sealed {sealed} {secrets} with key {new_id} (they were {was}). Every server and command \
         on this database needs {} from now on.",
        new_key_file.display()
    );
    Ok(())
}

/// The key in `file`, named in messages as given by `given_by`.
fn read_secrets_key(file: &Path, given_by: &str) -> Result<SecretsKey, Failure> {
    let text = std::fs::read_to_string(file).map_err(|e| {
        Failure::because(format!("{given_by} {}: cannot read it", file.display()), e)
    })?;
    SecretsKey::from_hex(&text)
        .map_err(|problem| Failure::from(format!("{given_by} {}: {problem}", file.display())))
}

/// The environment variable that names the database when `--db` does not.
const DATABASE_VAR: &str = "TOOLBRIDGE_DATABASE_URL";

/// The database when neither `--db` nor the variable names one: a SQLite file in the working
/// directory.
const DEFAULT_DATABASE: &str = "toolbridge.sqlite3";

/// The database a command works on.
#[derive(Debug, Args)]
struct Database {
    /// The database: a SQLite file's path (created if missing), or a PostgreSQL
    /// database's URL, `postgres://user:password@host:port/database` (the
    /// database must exist). Several servers may share one PostgreSQL database.
    // Its value is read as a path first, so that a SQLite path need not be
    // UTF-8, and checked in `location`, whose errors hide a URL's password
    // (clap's own would repeat the value as given). `hide_env_values` keeps
    // the variable's value, password and all, out of `--help`.
    #[arg(
        long,
        env = DATABASE_VAR,
        hide_env_values = true,
        default_value = DEFAULT_DATABASE
    )]
    db: PathBuf,
    /// A file holding the key that seals secrets at rest (tools' secret settings, webhook
    /// secrets, the identity tokens' signing keys): 64 hex digits, from
    /// `toolbridge secrets-key generate`. Secrets the database holds unsealed are sealed when
    /// it is first given; after that, every command and every instance needs the same key.
    #[arg(long, env = SECRETS_KEY_VAR, value_name = "FILE")]
    secrets_key_file: Option<PathBuf>,
}

/// The environment variable that names the secrets key's file when `--secrets-key-file` does not.
const SECRETS_KEY_VAR: &str = "TOOLBRIDGE_SECRETS_KEY_FILE";

impl Database {
    /// The secrets key the command was given, if any, or why its file does not hold one.
    fn secrets_key(&self) -> Result<Option<SecretsKey>, Failure> {
        let Some(file) = &self.secrets_key_file else {
            return Ok(None);
        };
        let given_by = match std::env::var_os(SECRETS_KEY_VAR) {
            Some(value) if value == file.as_os_str() => SECRETS_KEY_VAR,
            _ => "--secrets-key-file",
        };
        read_secrets_key(file, given_by).map(Some)
    }

    /// Where the database is, or why `--db` (or the variable) does not say.
    fn location(&self) -> Result<Location, Failure> {
        let Some(text) = self.db.to_str() else {
            // Not UTF-8, so not a URL: a file's path.
            return Ok(Location::Sqlite(self.db.clone()));
        };
        Location::from_str(text).map_err(|error| {
            let given_by = match std::env::var_os(DATABASE_VAR) {
                Some(value) if value == self.db.as_os_str() => DATABASE_VAR,
                _ => "--db",
            };
            Failure::from(format!("{given_by}: {error}"))
        })
    }
}

/// The variable that says what the server logs: a level (`warn`), or targets with levels
/// (`toolbridge=debug,info`).
const LOG_VAR: &str = "RUST_LOG";

/// What to log, from [`LOG_VAR`] (`info` when it is unset, but for PostgreSQL's notices, such as
/// that the migrations' table exists already, which every start would print), and why the variable
/// was ignored if it does not parse.
fn log_filter() -> (Targets, Option<String>) {
    let everything_at_info = || {
        Targets::new()
            .with_default(LevelFilter::INFO)
            .with_target("sqlx::postgres::notice", LevelFilter::WARN)
    };
    match std::env::var(LOG_VAR) {
        Err(_) => (everything_at_info(), None),
        Ok(value) => match value.parse::<Targets>() {
            Ok(targets) => (targets, None),
            Err(e) => (everything_at_info(), Some(format!("`{value}`: {e}"))),
        },
    }
}

/// Logs to standard error in `format`, what `filter` lets through; colours only on a terminal.
fn init_logging(format: LogFormat, filter: Targets) {
    let registry = tracing_subscriber::registry().with(filter);
    match format {
        LogFormat::Text => registry
            .with(
                tracing_subscriber::fmt::layer()
                    .with_writer(std::io::stderr)
                    .with_ansi(std::io::stderr().is_terminal()),
            )
            .init(),
        LogFormat::Json => registry
            .with(
                tracing_subscriber::fmt::layer()
                    .json()
                    .flatten_event(true)
                    .with_current_span(false)
                    .with_span_list(false)
                    .with_writer(std::io::stderr)
                    .with_ansi(false),
            )
            .init(),
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    // The command line first: it says how to log (and `--help` needs no logging).
    let cli = Cli::parse();
    let (filter, bad_filter) = log_filter();
    init_logging(cli.log_format, filter);
    if let Some(problem) = bad_filter {
        tracing::warn!("{LOG_VAR} is ignored: {problem}");
    }
    let outcome = match cli.command {
        Command::Serve(args) => serve::run(*args).await,
        Command::Keys(command) => keys::run(command).await,
        Command::Tool(command) => tool::run(command).await,
        Command::Tenants(command) => tenants::run(command).await,
        Command::Users(command) => users::run(command).await,
        Command::SigningKeys(command) => signing_keys::run(command).await,
        Command::SecretsKey(SecretsKeyCommand::Generate) => {
            println!("{}", SecretsKey::generate());
            Ok(())
        }
        Command::SecretsKey(SecretsKeyCommand::Rotate {
            new_key_file,
            database,
        }) => rotate_secrets_key(&new_key_file, &database).await,
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

/// The store `--db` names, keeping its secrets with the key `--secrets-key-file` holds.
async fn open(database: &Database) -> Result<Store, Failure> {
    let key = database.secrets_key()?;
    let store = connect(&database.location()?).await?;
    store.with_secrets_key(key).await.map_err(|e| match e {
        StoreError::Sealing(_) => Failure::from(format!(
            "{e}: give every command and server the key the secrets were sealed with \
             (--secrets-key-file or {SECRETS_KEY_VAR})"
        )),
        e => Failure::because("cannot read the database's secrets", e),
    })
}

/// The store at `location` (a URL's password hidden in any message).
async fn connect(location: &Location) -> Result<Store, Failure> {
    Store::connect(location).await.map_err(|e| match e {
        // It names the database and what is wrong with it.
        StoreError::Unusable { .. } => Failure::from(e.to_string()),
        e => Failure::because(format!("cannot open {location}"), e),
    })
}
