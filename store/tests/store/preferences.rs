//! The context a tenant's pages show things in, and each user's own: seeded, read, changed by the
//! protocol's rules, in effect in the user's `context()`, and heard live by the right pages.

use std::time::Duration;

use serde_json::{Value, json};
use toolbridge_protocol::context::{ContextField, ContextValues, Theme, Units};
use toolbridge_protocol::live::CONTEXT;
use toolbridge_store::{Error, Live, LiveEvent, User};

use crate::common::{Backend, demo};

async fn user(store: &toolbridge_store::Store, email: &str) -> User {
    store.user_by_email(email).await.unwrap().unwrap().user
}

async fn next_event(live: &mut tokio::sync::broadcast::Receiver<Live>) -> LiveEvent {
    loop {
        let heard = tokio::time::timeout(Duration::from_secs(5), live.recv())
            .await
            .expect("an event within 5 s")
            .expect("the feed is open");
        if let Live::Event(event) = heard {
            return (*event).clone();
        }
    }
}

fn data(event: &LiveEvent) -> Value {
    serde_json::from_str(&event.data).expect("an event's data is JSON")
}

on_both!(the_demo_tenants_have_their_own_zone_and_currency);
async fn the_demo_tenants_have_their_own_zone_and_currency(backend: Backend) {
    let demo = demo(backend).await;
    let harbour = demo
        .store
        .organisation_context(&demo.harbour.id)
        .await
        .unwrap();
    assert_eq!(harbour.time_zone, "Pacific/Auckland");
    assert_eq!(harbour.currency, "NZD");
    assert_eq!(harbour.units, Units::Metric);
    assert_eq!(harbour.theme, Theme::Light);
    let other = demo
        .store
        .organisation_context(&demo.other.id)
        .await
        .unwrap();
    assert_eq!(other.time_zone, "Australia/Perth");
    assert_eq!(other.currency, "AUD");
    let office = user(&demo.store, "office@harbour.test").await;
    let context = office.context();
    assert_eq!(
        context.values.time_zone.as_deref(),
        Some("Pacific/Auckland")
    );
    assert_eq!(context.values.currency.as_deref(), Some("NZD"));
    assert_eq!(context.values.locale.as_deref(), Some("en-NZ"));
    assert_eq!(context.values.theme, Some(Theme::Light));
}

on_both!(an_administrator_changes_the_tenants_values_and_every_page_hears_what_changed);
async fn an_administrator_changes_the_tenants_values_and_every_page_hears_what_changed(
    backend: Backend,
) {
    let demo = demo(backend).await;
    demo.store.listen().await.unwrap();
    let mut live = demo.store.live();
    let change = ContextValues {
        time_zone: Some("Pacific/Chatham".to_owned()),
        currency: Some("NZD".to_owned()),
        theme: Some(Theme::Dark),
        ..ContextValues::default()
    };
    let after = demo
        .store
        .set_organisation_context(&demo.harbour.id, &change)
        .await
        .unwrap();
    assert_eq!(after.time_zone, "Pacific/Chatham");
    assert_eq!(after.theme, Theme::Dark);
    let event = next_event(&mut live).await;
    assert_eq!(
        (event.name.as_str(), event.user_id.as_deref()),
        (CONTEXT, None)
    );
    assert_eq!(event.tenant_id, demo.harbour.id);
    // The currency was already NZD: only what changed is named.
    assert_eq!(
        data(&event),
        json!({"scope": "organisation", "fields": ["timeZone", "theme"]})
    );
    let office = user(&demo.store, "office@harbour.test").await;
    assert_eq!(
        office.context().values.time_zone.as_deref(),
        Some("Pacific/Chatham")
    );
    // The other tenant's values are untouched.
    let other = demo
        .store
        .organisation_context(&demo.other.id)
        .await
        .unwrap();
    assert_eq!(other.time_zone, "Australia/Perth");
    // Nothing changed: no event.
    let last = demo
        .store
        .last_live_event_id(&demo.harbour.id)
        .await
        .unwrap();
    demo.store
        .set_organisation_context(&demo.harbour.id, &change)
        .await
        .unwrap();
    assert_eq!(
        demo.store
            .last_live_event_id(&demo.harbour.id)
            .await
            .unwrap(),
        last
    );
}

on_both!(values_the_rules_refuse_are_not_written);
async fn values_the_rules_refuse_are_not_written(backend: Backend) {
    let demo = demo(backend).await;
    let bad = ContextValues {
        time_zone: Some("Pacific/Atlantis".to_owned()),
        currency: Some("XYZ".to_owned()),
        locale: Some("en-NZ".to_owned()),
        ..ContextValues::default()
    };
    let Err(Error::Invalid(problems)) = demo
        .store
        .set_organisation_context(&demo.harbour.id, &bad)
        .await
    else {
        panic!("refused");
    };
    let mut paths: Vec<&str> = problems.iter().map(|v| v.path.as_str()).collect();
    paths.sort_unstable();
    assert_eq!(paths, ["currency", "locale", "timeZone"]);
    let harbour = demo
        .store
        .organisation_context(&demo.harbour.id)
        .await
        .unwrap();
    assert_eq!(harbour.time_zone, "Pacific/Auckland");
    let office = user(&demo.store, "office@harbour.test").await;
    let units = ContextValues {
        units: Some(Units::Imperial),
        ..ContextValues::default()
    };
    assert!(matches!(
        demo.store.set_own_context(&office, &units, &[]).await,
        Err(Error::Invalid(_))
    ));
}

on_both!(a_users_own_zone_and_theme_win_and_only_their_pages_hear_of_them);
async fn a_users_own_zone_and_theme_win_and_only_their_pages_hear_of_them(backend: Backend) {
    let demo = demo(backend).await;
    demo.store.listen().await.unwrap();
    let office = user(&demo.store, "office@harbour.test").await;
    let admin = user(&demo.store, "admin@harbour.test").await;
    // An event first, so that the id heard is one the database gave.
    let mut live = demo.store.live();
    let imperial = ContextValues {
        units: Some(Units::Imperial),
        ..ContextValues::default()
    };
    demo.store
        .set_organisation_context(&demo.harbour.id, &imperial)
        .await
        .unwrap();
    let heard = demo
        .store
        .last_live_event_id(&demo.harbour.id)
        .await
        .unwrap();
    let organisation = next_event(&mut live).await;
    assert_eq!(organisation.user_id, None);
    let own = ContextValues {
        time_zone: Some("Europe/London".to_owned()),
        theme: Some(Theme::Dark),
        ..ContextValues::default()
    };
    let after = demo
        .store
        .set_own_context(&office, &own, &[])
        .await
        .unwrap();
    assert_eq!(after.time_zone.as_deref(), Some("Europe/London"));
    let event = next_event(&mut live).await;
    assert_eq!(event.user_id.as_deref(), Some(office.id.as_str()));
    assert_eq!(
        data(&event),
        json!({"scope": "user", "fields": ["timeZone", "theme"]})
    );
    let office = user(&demo.store, "office@harbour.test").await;
    assert_eq!(
        office.context().values.time_zone.as_deref(),
        Some("Europe/London")
    );
    assert_eq!(office.context().values.theme, Some(Theme::Dark));
    assert_eq!(demo.store.own_context(&office).await.unwrap(), after);
    // The others of the tenant keep the tenant's, and their pages' backlog leaves it out.
    let admin_context = user(&demo.store, "admin@harbour.test").await.context();
    assert_eq!(
        admin_context.values.time_zone.as_deref(),
        Some("Pacific/Auckland")
    );
    let toolbridge_store::Backlog::Events(theirs) = demo
        .store
        .live_backlog(&demo.harbour.id, &admin.id, heard)
        .await
        .unwrap()
    else {
        panic!("known");
    };
    assert!(
        theirs.iter().all(|event| event.name != CONTEXT),
        "{theirs:?}"
    );
    let toolbridge_store::Backlog::Events(mine) = demo
        .store
        .live_backlog(&demo.harbour.id, &office.id, heard)
        .await
        .unwrap()
    else {
        panic!("known");
    };
    assert_eq!(mine.len(), 1);
    // Cleared: the tenant's again.
    let back = demo
        .store
        .set_own_context(
            &office,
            &ContextValues::default(),
            &[ContextField::TimeZone],
        )
        .await
        .unwrap();
    assert_eq!(back.time_zone, None);
    assert_eq!(back.theme, Some(Theme::Dark));
    let office = user(&demo.store, "office@harbour.test").await;
    assert_eq!(
        office.context().values.time_zone.as_deref(),
        Some("Pacific/Auckland")
    );
}
