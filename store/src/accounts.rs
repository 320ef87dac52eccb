//! Tenants and their users as an operator makes and changes them (`toolbridge tenants …`,
//! `toolbridge users …`), and as the demo seed makes its own.
//!
//! A tenant's name is unique in the database without regard to case, so that a command can name
//! a tenant by it. A user's email is unique in the database (not only in the tenant): signing in
//! finds the user by email alone. A password is hashed with argon2id, after the policy in
//! `password.rs` allows it; setting one ends the user's sessions, and so does disabling a user,
//! who then cannot sign in.

use toolbridge_protocol::context::Role;
use toolbridge_protocol::limits::TEXT_MAX_CHARS;
use toolbridge_protocol::{Decimal, Violation};

use crate::auth::{USER_COLUMNS, UserRowAnd, hash_password, split_user_row, user_from_row};
use crate::db::{Arg, Turn, Tx, sql};
use crate::password::{check_password, password_problem};
use crate::util::{new_id, now_iso};
use crate::{Account, Error, Record, Store, Tenant, Unique};

/// The longest email address (RFC 5321's limit on a path).
pub const EMAIL_MAX_CHARS: usize = 254;

/// A tenant to make.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewTenant {
    /// Its name: 1 to 1000 characters after trimming, unique in the database without regard to
    /// case.
    pub name: String,
    /// The culture its users' pages and tools format for, e.g. `en-NZ`.
    pub culture_code: String,
    /// The tax rate of its quote lines unless a line says otherwise, as a fraction from 0 to 1
    /// (0.15 is 15%).
    pub default_tax_rate: Decimal,
}

/// A user to make (the password is given beside it, and never kept).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewUser {
    /// The sign-in email: unique in the database without regard to case.
    pub email: String,
    /// The name people see: 1 to 1000 characters after trimming.
    pub name: String,
    /// What the user may do.
    pub role: Role,
}

/// What is wrong with a tenant [`Store::create_tenant`] is asked for, each problem with its path
/// (`name`, `cultureCode`, `defaultTaxRate`); empty when nothing is. (Whether the name is taken
/// is for the store to say.)
pub fn new_tenant_problems(tenant: &NewTenant) -> Vec<Violation> {
    let mut violations = Vec::new();
    if let Some(problem) = text_problem(&tenant.name) {
        violations.push(Violation::new("name", problem));
    }
    if !is_culture_code(&tenant.culture_code) {
        violations.push(Violation::new(
            "cultureCode",
            format!(
                "{:?} is not a culture code; write a language and a region, such as en-NZ",
                tenant.culture_code
            ),
        ));
    }
    if tenant.default_tax_rate.is_sign_negative() || tenant.default_tax_rate > Decimal::ONE {
        violations.push(Violation::new(
            "defaultTaxRate",
            format!(
                "must be a fraction from 0 to 1 (0.15 is 15%); got {}",
                tenant.default_tax_rate
            ),
        ));
    }
    violations
}

/// What is wrong with a user [`Store::create_user`] is asked for, each problem with its path
/// (`email`, `name`); empty when nothing is. (Whether the email is taken is for the store to
/// say; the password is checked beside it.)
pub fn new_user_problems(user: &NewUser) -> Vec<Violation> {
    let mut violations = Vec::new();
    if let Some(problem) = email_problem(&user.email) {
        violations.push(Violation::new("email", problem));
    }
    if let Some(problem) = text_problem(&user.name) {
        violations.push(Violation::new("name", problem));
    }
    violations
}

/// Why `text` (a name) cannot be one: empty, too long, or with control characters.
fn text_problem(text: &str) -> Option<String> {
    let text = text.trim();
    let chars = text.chars().count();
    if chars == 0 || chars > TEXT_MAX_CHARS {
        return Some(format!("must be 1 to {TEXT_MAX_CHARS} characters"));
    }
    text.chars()
        .any(char::is_control)
        .then(|| "must not contain control characters (a line break, a tab)".to_owned())
}

/// Why `email` cannot be a sign-in email: something@somewhere, without spaces.
fn email_problem(email: &str) -> Option<String> {
    let email = email.trim();
    if email.chars().count() > EMAIL_MAX_CHARS {
        return Some(format!("must be at most {EMAIL_MAX_CHARS} characters"));
    }
    let well_formed = email
        .rsplit_once('@')
        .is_some_and(|(local, domain)| !local.is_empty() && !domain.is_empty())
        && !email.chars().any(|c| c.is_whitespace() || c.is_control());
    (!well_formed).then(|| format!("{email:?} is not an email address (name@example.com)"))
}

/// Whether `code` is a culture code: a BCP 47 language tag such as `en-NZ` or `zh-Hant-TW`, by
/// the protocol's rule for locales.
fn is_culture_code(code: &str) -> bool {
    toolbridge_protocol::context::locale_problem(code).is_none()
}

/// Inserts a tenant in `tx` (whose caller has checked it and its name); its id.
pub(crate) async fn insert_tenant(tx: &mut Tx, tenant: &NewTenant) -> Result<String, Error> {
    let id = new_id();
    sql(
        "INSERT INTO tenants (id, name, culture_code, default_tax_rate, quote_seq, created_at) \
         VALUES ($1, $2, $3, $4, 1000, $5)",
    )
    .bind(&id)
    .bind(tenant.name.trim())
    .bind(tenant.culture_code.as_str())
    .bind(tenant.default_tax_rate.to_string())
    .bind(now_iso())
    .execute(&mut *tx)
    .await?;
    Ok(id)
}

/// Inserts a user of `tenant_id` in `tx`, with the argon2id hash of their password; their id.
/// [`Error::Taken`] when the email belongs to a user already.
pub(crate) async fn insert_user(
    tx: &mut Tx,
    tenant_id: &str,
    user: &NewUser,
    password_hash: &str,
) -> Result<String, Error> {
    let id = new_id();
    let email = user.email.trim();
    sql(
        "INSERT INTO users (id, tenant_id, name, email, email_lower, role, password_hash) \
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(&id)
    .bind(tenant_id)
    .bind(user.name.trim())
    .bind(email)
    .bind(email.to_lowercase())
    .bind(user.role.token())
    .bind(password_hash)
    .execute(&mut *tx)
    .await
    .map_err(|error| Error::on_write(error, Unique::UserEmail, email))?;
    Ok(id)
}

/// The columns an [`Account`] is read from: [`USER_COLUMNS`] and whether the user is active.
fn account_columns() -> String {
    format!("{USER_COLUMNS}, u.active")
}

/// A row of [`account_columns`]: a user's columns and whether the user is active.
type AccountRow = UserRowAnd<i64>;

/// An account from a row of [`account_columns`].
fn account_from_row(row: AccountRow) -> Result<Account, Error> {
    let (user, active) = split_user_row(row);
    Ok(Account {
        user: user_from_row(user)?,
        active: active != 0,
    })
}

impl Store {
    /// Makes a tenant. Refuses a tenant [`new_tenant_problems`] finds fault with
    /// ([`Error::Invalid`]) and a name another tenant has, whatever its case ([`Error::Taken`]).
    pub async fn create_tenant(&self, tenant: &NewTenant) -> Result<Tenant, Error> {
        let violations = new_tenant_problems(tenant);
        if !violations.is_empty() {
            return Err(Error::Invalid(violations));
        }
        let name = tenant.name.trim();
        let mut tx = self.begin_write().await?;
        // No index says that names are unique without regard to case (folded as Rust folds
        // them, not as each database would), so tenants are made one at a time: SQLite's write
        // transaction runs alone, and on PostgreSQL this is the turn the demo seed takes too.
        tx.take_turn(Turn::Setup).await?;
        let names: Vec<(String,)> = sql("SELECT name FROM tenants").fetch_all(&mut *tx).await?;
        let folded = name.to_lowercase();
        if names.iter().any(|(taken,)| taken.to_lowercase() == folded) {
            return Err(Error::Taken {
                what: Unique::TenantName,
                value: name.to_owned(),
            });
        }
        let id = insert_tenant(&mut tx, tenant).await?;
        tx.commit().await?;
        Ok(Tenant {
            id,
            name: name.to_owned(),
        })
    }

    /// Every tenant, oldest first.
    pub async fn tenants(&self) -> Result<Vec<Tenant>, Error> {
        let rows: Vec<(String, String)> = sql("SELECT id, name FROM tenants ORDER BY rowid")
            .fetch_all(&self.pool)
            .await?;
        Ok(rows
            .into_iter()
            .map(|(id, name)| Tenant { id, name })
            .collect())
    }

    /// The tenant with this id, or else with this name (without regard to case or the spaces
    /// around it).
    pub async fn find_tenant(&self, name_or_id: &str) -> Result<Option<Tenant>, Error> {
        if let Some(tenant) = self.tenant(name_or_id).await? {
            return Ok(Some(tenant));
        }
        let folded = name_or_id.trim().to_lowercase();
        Ok(self
            .tenants()
            .await?
            .into_iter()
            .find(|tenant| tenant.name.to_lowercase() == folded))
    }

    /// Makes a user of the tenant with `password`, active. Refuses a user
    /// [`new_user_problems`] finds fault with, or a password the policy does not allow
    /// ([`Error::Invalid`], each problem with its path); an unknown tenant ([`Error::NotFound`]);
    /// an email another user has, whatever its case ([`Error::Taken`]).
    pub async fn create_user(
        &self,
        tenant_id: &str,
        user: &NewUser,
        password: &str,
    ) -> Result<Account, Error> {
        let mut violations = new_user_problems(user);
        if let Some(problem) = password_problem(password) {
            violations.push(Violation::new("password", problem));
        }
        if !violations.is_empty() {
            return Err(Error::Invalid(violations));
        }
        let hash = hash_password(password).await?;
        let mut tx = self.begin_write().await?;
        let tenant: Option<String> = sql("SELECT id FROM tenants WHERE id = $1")
            .bind(toolbridge_protocol::catalog::id_key(tenant_id))
            .fetch_optional_scalar(&mut *tx)
            .await?;
        let Some(tenant_id) = tenant else {
            return Err(Error::NotFound {
                what: Record::Tenant,
                id: tenant_id.to_owned(),
            });
        };
        let id = insert_user(&mut tx, &tenant_id, user, &hash).await?;
        let row: AccountRow = sql(format!(
            "SELECT {} FROM users u JOIN tenants t ON t.id = u.tenant_id WHERE u.id = $1",
            account_columns()
        ))
        .bind(id.as_str())
        .fetch_one(&mut *tx)
        .await?;
        tx.commit().await?;
        account_from_row(row)
    }

    /// The tenant's users, disabled ones included, by email.
    pub async fn users(&self, tenant_id: &str) -> Result<Vec<Account>, Error> {
        let rows: Vec<AccountRow> = sql(format!(
            "SELECT {} FROM users u JOIN tenants t ON t.id = u.tenant_id \
             WHERE u.tenant_id = $1 ORDER BY u.email_lower",
            account_columns()
        ))
        .bind(tenant_id)
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter().map(account_from_row).collect()
    }

    /// The user with this email (without regard to case or the spaces around it), disabled or
    /// not.
    pub async fn user_by_email(&self, email: &str) -> Result<Option<Account>, Error> {
        let row: Option<AccountRow> = sql(format!(
            "SELECT {} FROM users u JOIN tenants t ON t.id = u.tenant_id \
             WHERE u.email_lower = $1",
            account_columns()
        ))
        .bind(email.trim().to_lowercase())
        .fetch_optional(&self.pool)
        .await?;
        row.map(account_from_row).transpose()
    }

    /// Gives the user a new password, and ends every session of theirs; how many it ended.
    /// Refuses a password the policy does not allow ([`Error::Invalid`]) and an unknown user
    /// ([`Error::NotFound`]). A disabled user stays disabled.
    pub async fn set_password(&self, user_id: &str, password: &str) -> Result<u64, Error> {
        check_password(password)?;
        let hash = hash_password(password).await?;
        let mut tx = self.begin_write().await?;
        update_user(&mut tx, user_id, "password_hash", hash).await?;
        let ended = end_sessions(&mut tx, user_id).await?;
        tx.commit().await?;
        Ok(ended)
    }

    /// Disables a user: they cannot sign in, and every session of theirs ends; how many it
    /// ended. [`Error::NotFound`] for an unknown user. Disabling a disabled user changes
    /// nothing.
    pub async fn disable_user(&self, user_id: &str) -> Result<u64, Error> {
        self.set_active(user_id, false).await
    }

    /// Lets a disabled user sign in again (with the password they had). [`Error::NotFound`] for
    /// an unknown user.
    pub async fn enable_user(&self, user_id: &str) -> Result<(), Error> {
        self.set_active(user_id, true).await.map(drop)
    }

    /// Makes the user active or not; when not, ends their sessions (how many it ended).
    async fn set_active(&self, user_id: &str, active: bool) -> Result<u64, Error> {
        let mut tx = self.begin_write().await?;
        update_user(&mut tx, user_id, "active", active).await?;
        let ended = if active {
            0
        } else {
            end_sessions(&mut tx, user_id).await?
        };
        tx.commit().await?;
        Ok(ended)
    }
}

/// Sets `column` of the user `user_id` to `value` (`UPDATE users SET column = $1 WHERE id = $2`);
/// [`Error::NotFound`] for an unknown user.
async fn update_user<'q>(
    tx: &mut Tx,
    user_id: &'q str,
    column: &str,
    value: impl Into<Arg<'q>>,
) -> Result<(), Error> {
    let changed = sql(format!("UPDATE users SET {column} = $1 WHERE id = $2"))
        .bind(value)
        .bind(user_id)
        .execute(&mut *tx)
        .await?;
    if changed == 0 {
        return Err(Error::NotFound {
            what: Record::User,
            id: user_id.to_owned(),
        });
    }
    Ok(())
}

/// Ends every session of the user; how many there were.
async fn end_sessions(tx: &mut Tx, user_id: &str) -> Result<u64, Error> {
    Ok(sql("DELETE FROM sessions WHERE user_id = $1")
        .bind(user_id)
        .execute(&mut *tx)
        .await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tenant(name: &str, culture_code: &str, rate: Decimal) -> NewTenant {
        NewTenant {
            name: name.to_owned(),
            culture_code: culture_code.to_owned(),
            default_tax_rate: rate,
        }
    }

    fn paths(violations: &[Violation]) -> Vec<&str> {
        violations.iter().map(|v| v.path.as_str()).collect()
    }

    #[test]
    fn a_tenant_needs_a_name_a_culture_code_and_a_fractional_tax_rate() {
        let rate = Decimal::new(15, 2);
        assert!(new_tenant_problems(&tenant("Acme", "en-NZ", rate)).is_empty());
        assert!(new_tenant_problems(&tenant("Acme", "zh-Hant-TW", Decimal::ZERO)).is_empty());
        assert!(new_tenant_problems(&tenant("Acme", "de", Decimal::ONE)).is_empty());
        let problems = new_tenant_problems(&tenant("  ", "english", Decimal::new(15, 0)));
        assert_eq!(paths(&problems), ["name", "cultureCode", "defaultTaxRate"]);
        assert_eq!(
            problems[2].message,
            "must be a fraction from 0 to 1 (0.15 is 15%); got 15"
        );
        let problems = new_tenant_problems(&tenant("A\nB", "en-", Decimal::new(-1, 2)));
        assert_eq!(paths(&problems), ["name", "cultureCode", "defaultTaxRate"]);
    }

    #[test]
    fn a_user_needs_an_email_and_a_name() {
        let user = |email: &str, name: &str| NewUser {
            email: email.to_owned(),
            name: name.to_owned(),
            role: Role::Admin,
        };
        assert!(new_user_problems(&user(" ada@example.com ", "Ada")).is_empty());
        for bad in [
            "ada",
            "@example.com",
            "ada@",
            "ada lovelace@example.com",
            "",
        ] {
            let problems = new_user_problems(&user(bad, "Ada"));
            assert_eq!(paths(&problems), ["email"], "{bad:?}");
        }
        let long = format!("{}@example.com", "a".repeat(EMAIL_MAX_CHARS));
        assert_eq!(
            paths(&new_user_problems(&user(&long, ""))),
            ["email", "name"]
        );
    }
}
