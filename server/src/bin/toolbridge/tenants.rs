//! `toolbridge tenants`: the organisations a database holds; and what the other commands share
//! to name one (`--tenant`), and to tell how to make the first.

use std::path::Path;
use std::str::FromStr;

use clap::Subcommand;
use toolbridge_protocol::{Decimal, Violation};
use toolbridge_store::{
    Error as StoreError, Location, NewTenant, PASSWORD_MIN_CHARS, Store, Tenant, Unique,
};

use crate::{DATABASE_VAR, DEFAULT_DATABASE, Database, Failure, open};

/// `toolbridge tenants …`.
#[derive(Debug, Subcommand)]
pub(crate) enum TenantsCommand {
    /// Creates a tenant (an organisation whose users and data are its own).
    Create {
        /// Its name, unique in the database without regard to case. Other commands take it
        /// (or the id) as `--tenant`.
        #[arg(long)]
        name: String,
        /// The culture its pages and tools format dates and numbers for.
        #[arg(long, default_value = "en-NZ")]
        culture_code: String,
        /// The tax rate of its quote lines unless a line says otherwise, as a fraction: 0.15 is
        /// 15%.
        #[arg(long, default_value = "0.15")]
        tax_rate: String,
        #[command(flatten)]
        database: Database,
    },
    /// Lists the tenants: id, name and how many users each has.
    List {
        #[command(flatten)]
        database: Database,
    },
}

/// Runs a `tenants` subcommand.
pub(crate) async fn run(command: TenantsCommand) -> Result<(), Failure> {
    match command {
        TenantsCommand::Create {
            name,
            culture_code,
            tax_rate,
            database,
        } => {
            let default_tax_rate = Decimal::from_str(tax_rate.trim()).map_err(|_| {
                format!(
                    "--tax-rate {tax_rate}: not a number; give a fraction, such as 0.15 for 15%"
                )
            })?;
            let store = open(&database).await?;
            let tenant = store
                .create_tenant(&NewTenant {
                    name,
                    culture_code,
                    default_tax_rate,
                })
                .await
                .map_err(|error| refused("cannot create the tenant", error))?;
            println!("Created the tenant {} ({}).", tenant.name, tenant.id);
            println!(
                "Add its first admin (the password is read from standard input):\n\n  {}\n",
                first_admin(&tenant.name, &database)
            );
            Ok(())
        }
        TenantsCommand::List { database } => {
            let store = open(&database).await?;
            let tenants = store
                .tenants()
                .await
                .map_err(|e| Failure::because("cannot read the tenants", e))?;
            if tenants.is_empty() {
                println!(
                    "There are no tenants yet; create one with `toolbridge tenants create --name NAME`."
                );
            }
            for tenant in tenants {
                let users = store
                    .users(&tenant.id)
                    .await
                    .map_err(|e| Failure::because("cannot read the users", e))?;
                let active = users.iter().filter(|account| account.active).count();
                println!(
                    "{}  {:<30} {} user{}{}",
                    tenant.id,
                    tenant.name,
                    users.len(),
                    if users.len() == 1 { "" } else { "s" },
                    if active < users.len() {
                        format!(" ({} disabled)", users.len() - active)
                    } else {
                        String::new()
                    }
                );
            }
            Ok(())
        }
    }
}

/// The tenant a command works on: the one `--tenant` names (by name or id); without it, the
/// database's only tenant. Refused, saying what to do, when `--tenant` names none, when there is
/// no tenant, or when there are several and `--tenant` does not say which.
pub(crate) async fn resolve(store: &Store, given: Option<&str>) -> Result<Tenant, Failure> {
    let reading = |e| Failure::because("cannot read the tenants", e);
    if let Some(name_or_id) = given {
        return store
            .find_tenant(name_or_id)
            .await
            .map_err(reading)?
            .ok_or_else(|| {
                format!("no tenant named {name_or_id:?}; `toolbridge tenants list` shows them")
                    .into()
            });
    }
    let mut tenants = store.tenants().await.map_err(reading)?;
    match tenants.len() {
        0 => Err("the database has no tenant yet; create one with \
                  `toolbridge tenants create --name NAME`"
            .to_owned()
            .into()),
        1 => Ok(tenants.remove(0)),
        _ => {
            let names: Vec<String> = tenants
                .iter()
                .map(|tenant| format!("{:?}", tenant.name))
                .collect();
            Err(format!(
                "the database has {} tenants ({}); say which with --tenant NAME",
                tenants.len(),
                names.join(", ")
            )
            .into())
        }
    }
}

/// A refusal of the store said in the command's terms (its flags, `the password`), or `doing`
/// failed for another reason.
pub(crate) fn refused(doing: &str, error: StoreError) -> Failure {
    match error {
        StoreError::Invalid(violations) => {
            let said: Vec<String> = violations.iter().map(violation).collect();
            Failure::from(said.join("; "))
        }
        StoreError::Taken {
            what: Unique::TenantName,
            value,
        } => Failure::from(format!(
            "a tenant named {value:?} exists already (names are compared without regard to case); \
             `toolbridge tenants list` shows them"
        )),
        StoreError::Taken {
            what: Unique::UserEmail,
            value,
        } => Failure::from(format!(
            "a user with the email {value} exists already (in this tenant or another: \
             signing in finds a user by email alone)"
        )),
        error => Failure::because(doing, error),
    }
}

/// One problem the store found, named as the command line names the value.
fn violation(violation: &Violation) -> String {
    let flag = match violation.path.as_str() {
        "password" => return format!("the password {}", violation.message),
        "name" => "--name",
        "email" => "--email",
        "cultureCode" => "--culture-code",
        "defaultTaxRate" => "--tax-rate",
        other => other,
    };
    format!("{flag}: {}", violation.message)
}

/// `value` as a shell reads it back: as it is when that is safe, else in single quotes.
pub(crate) fn shell_word(value: &str) -> String {
    let plain = !value.is_empty()
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./:@%+=,-".contains(c));
    if plain {
        value.to_owned()
    } else {
        format!("'{}'", value.replace('\'', r"'\''"))
    }
}

/// Whether the environment names `database` (`--db` was not given).
fn from_environment(database: &Database) -> bool {
    std::env::var_os(DATABASE_VAR).is_some_and(|value| value == database.db.as_os_str())
}

/// What to add to a command for it to work on `database` as the server or command that prints
/// it does: nothing for the default file, or when the environment names the database (the
/// commands read it too); else ` --db <it>` (a URL with its password hidden as `***`).
fn db_suffix(database: &Database) -> String {
    if from_environment(database) || database.db == Path::new(DEFAULT_DATABASE) {
        return String::new();
    }
    let shown = match database.location() {
        // Shown as everywhere else: without its password.
        Ok(location @ Location::Postgres(_)) => location.to_string(),
        _ => database.db.to_string_lossy().into_owned(),
    };
    format!(" --db {}", shell_word(&shown))
}

/// The command that makes the first admin of `tenant`.
fn first_admin(tenant: &str, database: &Database) -> String {
    format!(
        "toolbridge users create --tenant {} --email you@example.com --role admin --password-stdin{}",
        shell_word(tenant),
        db_suffix(database)
    )
}

/// What `toolbridge serve` prints on an empty database: that nobody can sign in yet, and the
/// commands that make the first tenant and its admin, for `database`.
pub(crate) fn first_steps(database: &Database) -> String {
    let location = database
        .location()
        .map_or_else(|_| database.db.display().to_string(), |l| l.to_string());
    let suffix = db_suffix(database);
    let mut said = vec![
        format!(
            "The database {location} is empty: it has no tenant and no user, so nobody can sign in yet."
        ),
        "Create the first tenant and its admin (the second command reads the admin's password,"
            .to_owned(),
        format!("one line of at least {PASSWORD_MIN_CHARS} characters, from standard input):"),
        String::new(),
        format!("  toolbridge tenants create --name 'Your Company'{suffix}"),
        format!("  {}", first_admin("Your Company", database)),
        String::new(),
    ];
    if suffix.contains("***") {
        said.push(
            "(*** stands for the password in the database's URL, which toolbridge never prints.)"
                .to_owned(),
        );
    }
    if from_environment(database) {
        said.push(format!(
            "(Run them with {DATABASE_VAR} set as it is for this server.)"
        ));
    }
    said.push(
        "For a demo tenant, its users and the example tools instead, start on an empty database \
         with `toolbridge serve --demo`."
            .to_owned(),
    );
    said.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shell_word_is_quoted_only_when_it_must_be() {
        assert_eq!(shell_word("data/tb.sqlite3"), "data/tb.sqlite3");
        assert_eq!(
            shell_word("postgres://tb:***@db:5432/tb"),
            "'postgres://tb:***@db:5432/tb'"
        );
        assert_eq!(shell_word("Your Company"), "'Your Company'");
        assert_eq!(shell_word("O'Brien Ltd"), r"'O'\''Brien Ltd'");
        assert_eq!(shell_word(""), "''");
    }
}
