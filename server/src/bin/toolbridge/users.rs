//! `toolbridge users`: the people who sign in to a tenant, their passwords, and disabling them.
//!
//! A user is named by their email, which is unique in the database (signing in finds a user by
//! email alone), so only `create` and `list` need `--tenant`.

use std::io::{BufRead, IsTerminal, Read};

use clap::{Args, Subcommand, ValueEnum};
use toolbridge_protocol::context::Role;
use toolbridge_store::{Account, NewUser, PASSWORD_MIN_CHARS, Store, generate_password};

use crate::tenants::{self, refused};
use crate::{Database, Failure, open};

/// The most bytes read from standard input for a password: far more than the longest allowed.
const PASSWORD_INPUT_MAX_BYTES: u64 = 64 * 1024;

/// `toolbridge users …`.
#[derive(Debug, Subcommand)]
pub(crate) enum UsersCommand {
    /// Creates a user of a tenant. Without --password-stdin, a random password is made and
    /// printed once.
    Create(CreateArgs),
    /// Lists a tenant's users: email, name, role, and whether disabled.
    List {
        /// The tenant, by name or id (`toolbridge tenants list`).
        #[arg(long, value_name = "NAME-OR-ID")]
        tenant: String,
        #[command(flatten)]
        database: Database,
    },
    /// Gives a user a new password and ends their sessions. The user is named by their sign-in
    /// email, which no other user has. Without --password-stdin, a random password is made and
    /// printed once.
    SetPassword {
        /// The user's sign-in email (whatever its case).
        #[arg(long)]
        email: String,
        /// Read the password from standard input: one line, its line break removed; at least
        /// 12 characters and not a common password.
        #[arg(long)]
        password_stdin: bool,
        #[command(flatten)]
        database: Database,
    },
    /// Disables a user: they can no longer sign in, and their sessions end at once.
    Disable {
        /// The user's sign-in email (whatever its case).
        #[arg(long)]
        email: String,
        #[command(flatten)]
        database: Database,
    },
    /// Lets a disabled user sign in again, with the password they had.
    Enable {
        /// The user's sign-in email (whatever its case).
        #[arg(long)]
        email: String,
        #[command(flatten)]
        database: Database,
    },
}

/// `toolbridge users create …`.
#[derive(Debug, Args)]
pub(crate) struct CreateArgs {
    /// The tenant, by name or id (`toolbridge tenants list`).
    #[arg(long, value_name = "NAME-OR-ID")]
    tenant: String,
    /// The sign-in email, unique in the database (not only in the tenant).
    #[arg(long)]
    email: String,
    /// What the user may do.
    #[arg(long, value_enum)]
    role: RoleArg,
    /// The name people see (default: the email's part before the @).
    #[arg(long)]
    name: Option<String>,
    /// Read the password from standard input: one line, its line break removed; at least
    /// 12 characters and not a common password.
    #[arg(long)]
    password_stdin: bool,
    #[command(flatten)]
    database: Database,
}

/// `--role`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum RoleArg {
    /// Administration, user management and every operational module; API tokens and tools in
    /// Settings.
    Admin,
    /// Jobs, sales, invoicing, purchasing and customers.
    Office,
    /// Assigned jobs and their tasks; reads quotes without creating them, and sees no costs.
    Field,
    /// Super User: everything, including system configuration and integrations.
    #[value(name = "super", alias = "super_user", alias = "super-user")]
    Super,
}

impl From<RoleArg> for Role {
    fn from(role: RoleArg) -> Self {
        match role {
            RoleArg::Admin => Role::Admin,
            RoleArg::Office => Role::Office,
            RoleArg::Field => Role::Field,
            RoleArg::Super => Role::SuperUser,
        }
    }
}

/// Runs a `users` subcommand.
pub(crate) async fn run(command: UsersCommand) -> Result<(), Failure> {
    match command {
        UsersCommand::Create(args) => create(args).await,
        UsersCommand::List { tenant, database } => list(&tenant, &database).await,
        UsersCommand::SetPassword {
            email,
            password_stdin,
            database,
        } => {
            let password = password(password_stdin)?;
            let store = open(&database).await?;
            let account = user(&store, &email).await?;
            let ended = store
                .set_password(&account.user.id, password.text())
                .await
                .map_err(|e| refused("cannot set the password", e))?;
            println!(
                "Set a new password for {}; {}.",
                account.user.email,
                sessions_ended(ended)
            );
            if !account.active {
                println!(
                    "The user is disabled: `toolbridge users enable --email {}` lets them sign in.",
                    account.user.email
                );
            }
            password.print_if_made();
            Ok(())
        }
        UsersCommand::Disable { email, database } => {
            let store = open(&database).await?;
            let account = user(&store, &email).await?;
            let ended = store
                .disable_user(&account.user.id)
                .await
                .map_err(|e| Failure::because("cannot disable the user", e))?;
            println!(
                "Disabled {} of {}: they can no longer sign in; {}.",
                account.user.email,
                account.user.tenant_name,
                sessions_ended(ended)
            );
            Ok(())
        }
        UsersCommand::Enable { email, database } => {
            let store = open(&database).await?;
            let account = user(&store, &email).await?;
            store
                .enable_user(&account.user.id)
                .await
                .map_err(|e| Failure::because("cannot enable the user", e))?;
            println!(
                "Enabled {} of {}: they can sign in again.",
                account.user.email, account.user.tenant_name
            );
            Ok(())
        }
    }
}

/// `toolbridge users create`.
async fn create(args: CreateArgs) -> Result<(), Failure> {
    let password = password(args.password_stdin)?;
    let store = open(&args.database).await?;
    let tenant = tenants::resolve(&store, Some(&args.tenant)).await?;
    let email = args.email;
    let name = args.name.unwrap_or_else(|| {
        let email = email.trim();
        email
            .rsplit_once('@')
            .map_or(email, |(local, _)| local)
            .to_owned()
    });
    let user = NewUser {
        email,
        name,
        role: args.role.into(),
    };
    let account = store
        .create_user(&tenant.id, &user, password.text())
        .await
        .map_err(|e| refused("cannot create the user", e))?;
    let user = &account.user;
    println!(
        "Created the user {} ({}, {}) in {}.",
        user.email,
        user.name,
        user.role.label(),
        user.tenant_name
    );
    password.print_if_made();
    Ok(())
}

/// `toolbridge users list`.
async fn list(tenant: &str, database: &Database) -> Result<(), Failure> {
    let store = open(database).await?;
    let tenant = tenants::resolve(&store, Some(tenant)).await?;
    let accounts = store
        .users(&tenant.id)
        .await
        .map_err(|e| Failure::because("cannot read the users", e))?;
    if accounts.is_empty() {
        println!(
            "{} has no users; add one with `toolbridge users create --tenant {} …`.",
            tenant.name,
            tenants::shell_word(&tenant.name)
        );
    }
    for account in accounts {
        let user = &account.user;
        println!(
            "{:<32} {:<24} {:<10} {}",
            user.email,
            user.name,
            user.role.label(),
            if account.active { "active" } else { "disabled" }
        );
    }
    Ok(())
}

/// The user with this email, or a refusal that says there is none.
async fn user(store: &Store, email: &str) -> Result<Account, Failure> {
    store
        .user_by_email(email)
        .await
        .map_err(|e| Failure::because("cannot read the users", e))?
        .ok_or_else(|| {
            format!(
                "no user has the email {}; `toolbridge users list --tenant NAME` shows a tenant's users",
                email.trim()
            )
            .into()
        })
}

/// "2 sessions ended", "no session was open".
fn sessions_ended(count: u64) -> String {
    match count {
        0 => "no session was open".to_owned(),
        1 => "1 session ended".to_owned(),
        n => format!("{n} sessions ended"),
    }
}

/// A password for a user: read from standard input, or made here (and then printed).
enum Password {
    /// As given.
    Given(String),
    /// Made by [`generate_password`].
    Made(String),
}

impl Password {
    fn text(&self) -> &str {
        match self {
            Password::Given(text) | Password::Made(text) => text,
        }
    }

    /// Prints a made password, once: nothing else keeps it.
    fn print_if_made(&self) {
        if let Password::Made(text) = self {
            println!(
                "Their password, shown only now (only a hash of it is stored); hand it over \
                 safely:\n\n  {text}\n"
            );
        }
    }
}

/// The password: from standard input with `--password-stdin`, else a new random one.
fn password(from_stdin: bool) -> Result<Password, Failure> {
    if !from_stdin {
        return Ok(Password::Made(generate_password()));
    }
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        eprintln!(
            "Type the password (at least {PASSWORD_MIN_CHARS} characters; it shows as you type) and press Enter:"
        );
    }
    let mut line = String::new();
    stdin
        .lock()
        .take(PASSWORD_INPUT_MAX_BYTES)
        .read_line(&mut line)
        .map_err(|e| Failure::because("cannot read the password from standard input", e))?;
    let password = password_line(&line)
        .ok_or_else(|| {
            "no password on standard input: give it as one line (--password-stdin)".to_owned()
        })?
        .to_owned();
    // Said here in the command's words; the store checks it again.
    if let Some(problem) = toolbridge_store::password_problem(&password) {
        return Err(format!("the password {problem}").into());
    }
    Ok(Password::Given(password))
}

/// The password on a line read from standard input: without its line break (`\n` or `\r\n`);
/// `None` when that leaves nothing.
fn password_line(line: &str) -> Option<&str> {
    let line = line.strip_suffix('\n').unwrap_or(line);
    let line = line.strip_suffix('\r').unwrap_or(line);
    (!line.is_empty()).then_some(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_line_loses_its_line_break_and_nothing_else() {
        assert_eq!(password_line("a long password\n"), Some("a long password"));
        assert_eq!(
            password_line("a long password\r\n"),
            Some("a long password")
        );
        assert_eq!(password_line(" spaced out \n"), Some(" spaced out "));
        assert_eq!(password_line("no line break"), Some("no line break"));
        assert_eq!(password_line("\n"), None);
        assert_eq!(password_line(""), None);
    }
}
