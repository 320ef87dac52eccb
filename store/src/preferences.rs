//! The context a tenant's pages and tools show things in (its time zone, currency, units and
//! theme), and each user's own time zone and theme, which win over the tenant's.
//!
//! Each value is checked by the protocol's rules before it is written
//! ([`toolbridge_protocol::context`]); a change that changes something is recorded as a live
//! `context` event in the same transaction: for the tenant's values every page of the tenant hears
//! it, for a user's own only that user's pages do.

use toolbridge_protocol::Violation;
use toolbridge_protocol::context::{
    ContextField, ContextValues, OrganisationContextDto, OwnContextDto, Theme, Units,
    currency_problem, time_zone_problem,
};
use toolbridge_protocol::live::{CONTEXT, ContextEvent, ContextScope};

use crate::db::sql;
use crate::{Error, Record, Store, User};

/// The tenant's values and the user's own, from their columns (see
/// [`crate::auth::USER_COLUMNS`]).
pub(crate) fn from_columns(
    time_zone: String,
    currency: String,
    units: &str,
    theme: &str,
    own_time_zone: Option<String>,
    own_theme: Option<&str>,
) -> Result<(OrganisationContextDto, OwnContextDto), Error> {
    let organisation = OrganisationContextDto {
        time_zone,
        currency,
        units: Units::from_token(units)
            .ok_or_else(|| Error::corrupt(format_args!("units {units:?}")))?,
        theme: theme_from(theme)?,
    };
    let own = OwnContextDto {
        time_zone: own_time_zone,
        theme: own_theme.map(theme_from).transpose()?,
    };
    Ok((organisation, own))
}

fn theme_from(token: &str) -> Result<Theme, Error> {
    Theme::from_token(token).ok_or_else(|| Error::corrupt(format_args!("theme {token:?}")))
}

/// What is wrong with the values of `change`, each at its field: the store's own check, after
/// whatever the caller checked.
fn problems(change: &ContextValues, allowed: &[ContextField]) -> Vec<Violation> {
    let mut problems: Vec<Violation> = change
        .fields()
        .into_iter()
        .filter(|field| !allowed.contains(field))
        .map(|field| Violation::new(field.name(), "cannot be set here"))
        .collect();
    if let Some(problem) = change.time_zone.as_deref().and_then(time_zone_problem) {
        problems.push(Violation::new(ContextField::TimeZone.name(), problem));
    }
    if let Some(problem) = change.currency.as_deref().and_then(currency_problem) {
        problems.push(Violation::new(ContextField::Currency.name(), problem));
    }
    problems
}

/// The data of a `context` event.
fn event(scope: ContextScope, fields: &[ContextField]) -> Result<String, Error> {
    let event = ContextEvent {
        scope,
        fields: fields.iter().map(|field| field.name().to_owned()).collect(),
    };
    serde_json::to_string(&event).map_err(Error::encoding("a context event"))
}

/// The fields whose value differs between two organisations' values.
fn organisation_changes(
    before: &OrganisationContextDto,
    after: &OrganisationContextDto,
) -> Vec<ContextField> {
    [
        (ContextField::TimeZone, before.time_zone != after.time_zone),
        (ContextField::Currency, before.currency != after.currency),
        (ContextField::Units, before.units != after.units),
        (ContextField::Theme, before.theme != after.theme),
    ]
    .into_iter()
    .filter_map(|(field, changed)| changed.then_some(field))
    .collect()
}

impl Store {
    /// The time zone, currency, units and theme of tenant `tenant_id`.
    pub async fn organisation_context(
        &self,
        tenant_id: &str,
    ) -> Result<OrganisationContextDto, Error> {
        let row: Option<(String, String, String, String)> =
            sql("SELECT time_zone, currency, units, theme FROM tenants WHERE id = $1")
                .bind(tenant_id)
                .fetch_optional(&self.pool)
                .await?;
        let (time_zone, currency, units, theme) = row.ok_or_else(|| Error::NotFound {
            what: Record::Tenant,
            id: tenant_id.to_owned(),
        })?;
        Ok(from_columns(time_zone, currency, &units, &theme, None, None)?.0)
    }

    /// Sets the values of tenant `tenant_id` that `change` has (its time zone, currency, units
    /// and theme; a locale is refused), and answers them all. When one changed, every page of
    /// the tenant hears a `context` event naming what changed. Refuses a value the protocol's
    /// rules refuse ([`Error::Invalid`], each at its field).
    pub async fn set_organisation_context(
        &self,
        tenant_id: &str,
        change: &ContextValues,
    ) -> Result<OrganisationContextDto, Error> {
        let problems = problems(change, &OrganisationContextDto::FIELDS);
        if !problems.is_empty() {
            return Err(Error::Invalid(problems));
        }
        let mut tx = self.begin_write().await?;
        let row: Option<(String, String, String, String)> =
            sql("SELECT time_zone, currency, units, theme FROM tenants WHERE id = $1")
                .bind(tenant_id)
                .fetch_optional(&mut *tx)
                .await?;
        let (time_zone, currency, units, theme) = row.ok_or_else(|| Error::NotFound {
            what: Record::Tenant,
            id: tenant_id.to_owned(),
        })?;
        let before = from_columns(time_zone, currency, &units, &theme, None, None)?.0;
        let after = before.with(change);
        let changed = organisation_changes(&before, &after);
        if changed.is_empty() {
            return Ok(after);
        }
        sql("UPDATE tenants SET time_zone = $1, currency = $2, units = $3, theme = $4 WHERE id = $5")
            .bind(after.time_zone.as_str())
            .bind(after.currency.as_str())
            .bind(after.units.token())
            .bind(after.theme.token())
            .bind(tenant_id)
            .execute(&mut *tx)
            .await?;
        tx.record_live(
            tenant_id,
            CONTEXT,
            event(ContextScope::Organisation, &changed)?,
        )
        .await?;
        tx.commit().await?;
        Ok(after)
    }

    /// The time zone and theme `user` chose for themselves.
    pub async fn own_context(&self, user: &User) -> Result<OwnContextDto, Error> {
        let row: Option<(Option<String>, Option<String>)> =
            sql("SELECT time_zone, theme FROM users WHERE id = $1")
                .bind(user.id.as_str())
                .fetch_optional(&self.pool)
                .await?;
        let (time_zone, theme) = row.ok_or_else(|| Error::NotFound {
            what: Record::User,
            id: user.id.clone(),
        })?;
        Ok(OwnContextDto {
            time_zone,
            theme: theme.as_deref().map(theme_from).transpose()?,
        })
    }

    /// Sets the time zone or theme of `user`'s own that `change` has, and follows the tenant's
    /// again for those in `cleared`; answers the user's own choices. When one changed, that
    /// user's pages (and only theirs) hear a `context` event. Refuses any other value, and one
    /// the protocol's rules refuse ([`Error::Invalid`], each at its field).
    pub async fn set_own_context(
        &self,
        user: &User,
        change: &ContextValues,
        cleared: &[ContextField],
    ) -> Result<OwnContextDto, Error> {
        let mut problems = problems(change, &OwnContextDto::FIELDS);
        problems.extend(
            cleared
                .iter()
                .filter(|field| !OwnContextDto::FIELDS.contains(field))
                .map(|field| Violation::new(field.name(), "cannot be set here")),
        );
        if !problems.is_empty() {
            return Err(Error::Invalid(problems));
        }
        let mut tx = self.begin_write().await?;
        let row: Option<(Option<String>, Option<String>)> =
            sql("SELECT time_zone, theme FROM users WHERE id = $1")
                .bind(user.id.as_str())
                .fetch_optional(&mut *tx)
                .await?;
        let (time_zone, theme) = row.ok_or_else(|| Error::NotFound {
            what: Record::User,
            id: user.id.clone(),
        })?;
        let before = OwnContextDto {
            time_zone,
            theme: theme.as_deref().map(theme_from).transpose()?,
        };
        let after = before.with(change, cleared);
        let changed: Vec<ContextField> = [
            (ContextField::TimeZone, before.time_zone != after.time_zone),
            (ContextField::Theme, before.theme != after.theme),
        ]
        .into_iter()
        .filter_map(|(field, changed)| changed.then_some(field))
        .collect();
        if changed.is_empty() {
            return Ok(after);
        }
        sql("UPDATE users SET time_zone = $1, theme = $2 WHERE id = $3")
            .bind(after.time_zone.as_deref())
            .bind(after.theme.map(Theme::token))
            .bind(user.id.as_str())
            .execute(&mut *tx)
            .await?;
        tx.record_live_for_user(
            &user.tenant_id,
            &user.id,
            CONTEXT,
            event(ContextScope::User, &changed)?,
        )
        .await?;
        tx.commit().await?;
        Ok(after)
    }
}
