//! Tenants and users made, listed and changed as the CLI does it.

use toolbridge_protocol::Decimal;
use toolbridge_protocol::context::Role;
use toolbridge_store::{Error, NewTenant, NewUser, Record, Store, Tenant, Unique};

use crate::common::{Backend, demo, empty, not_found, paths, raw, refused};

/// A password the policy allows.
const PASSWORD: &str = "correct horse battery";

fn new_tenant(name: &str) -> NewTenant {
    NewTenant {
        name: name.to_owned(),
        culture_code: "en-GB".to_owned(),
        default_tax_rate: Decimal::new(20, 2),
    }
}

fn new_user(email: &str, role: Role) -> NewUser {
    NewUser {
        email: email.to_owned(),
        name: "Ada Admin".to_owned(),
        role,
    }
}

/// What `Error::Taken` names.
fn taken(result: Result<impl std::fmt::Debug, Error>) -> (Unique, String) {
    match refused(result) {
        Error::Taken { what, value } => (what, value),
        other => panic!("expected a taken value, got {other:?}"),
    }
}

async fn acme(store: &Store) -> Tenant {
    store.create_tenant(&new_tenant("Acme Ltd")).await.unwrap()
}

on_both!(tenants_are_made_listed_and_found_by_name_or_id);
async fn tenants_are_made_listed_and_found_by_name_or_id(backend: Backend) {
    let (store, db) = empty(backend).await;
    assert_eq!(store.tenants().await.unwrap(), []);
    let acme = store
        .create_tenant(&new_tenant("  Acme Ltd "))
        .await
        .unwrap();
    assert_eq!(acme.name, "Acme Ltd");
    let second = store.create_tenant(&new_tenant("Bravo")).await.unwrap();
    assert!(store.is_seeded().await.unwrap());
    assert_eq!(
        store.tenants().await.unwrap(),
        [acme.clone(), second.clone()]
    );
    assert_eq!(store.default_tenant().await.unwrap(), Some(acme.clone()));

    for name_or_id in [
        "Acme Ltd",
        " acme LTD ",
        acme.id.as_str(),
        &acme.id.to_uppercase(),
    ] {
        assert_eq!(
            store.find_tenant(name_or_id).await.unwrap().as_ref(),
            Some(&acme),
            "{name_or_id}"
        );
    }
    assert_eq!(store.find_tenant("Acme").await.unwrap(), None);

    // What it was made with is what its quotes and users get.
    let raw = raw(&db).await;
    let culture: String = raw
        .fetch_scalar(&format!(
            "SELECT culture_code FROM tenants WHERE id = '{}'",
            acme.id
        ))
        .await;
    let rate: String = raw
        .fetch_scalar(&format!(
            "SELECT default_tax_rate FROM tenants WHERE id = '{}'",
            acme.id
        ))
        .await;
    assert_eq!((culture.as_str(), rate.as_str()), ("en-GB", "0.20"));
}

on_both!(a_tenant_name_is_unique_without_regard_to_case);
async fn a_tenant_name_is_unique_without_regard_to_case(backend: Backend) {
    let (store, _db) = empty(backend).await;
    acme(&store).await;
    for again in ["Acme Ltd", "ACME LTD", " acme ltd"] {
        assert_eq!(
            taken(store.create_tenant(&new_tenant(again)).await),
            (Unique::TenantName, again.trim().to_owned())
        );
    }
    assert_eq!(store.tenants().await.unwrap().len(), 1);
    // Non-ASCII letters fold too.
    store.create_tenant(&new_tenant("Ängel AB")).await.unwrap();
    assert_eq!(
        taken(store.create_tenant(&new_tenant("äNGEL ab")).await).0,
        Unique::TenantName
    );

    let bad = NewTenant {
        name: String::new(),
        culture_code: "nz-".to_owned(),
        default_tax_rate: Decimal::new(15, 0),
    };
    assert_eq!(
        paths(store.create_tenant(&bad).await),
        ["name", "cultureCode", "defaultTaxRate"]
    );
}

on_both!(tenants_made_at_once_with_one_name_make_one_tenant);
async fn tenants_made_at_once_with_one_name_make_one_tenant(backend: Backend) {
    let (store, db) = empty(backend).await;
    let other = db.open().await;
    let (first, second) = (new_tenant("Acme Ltd"), new_tenant("ACME LTD"));
    let (a, b) = tokio::join!(store.create_tenant(&first), other.create_tenant(&second));
    assert!(a.is_ok() != b.is_ok(), "{a:?} {b:?}");
    assert_eq!(store.tenants().await.unwrap().len(), 1);
}

on_both!(a_user_is_made_with_a_password_the_policy_allows_and_signs_in);
async fn a_user_is_made_with_a_password_the_policy_allows_and_signs_in(backend: Backend) {
    let (store, db) = empty(backend).await;
    let acme = acme(&store).await;
    let account = store
        .create_user(
            &acme.id,
            &new_user(" Ada@Acme.test ", Role::Admin),
            PASSWORD,
        )
        .await
        .unwrap();
    assert!(account.active);
    let user = &account.user;
    assert_eq!(
        (user.email.as_str(), user.name.as_str(), user.role),
        ("Ada@Acme.test", "Ada Admin", Role::Admin)
    );
    assert_eq!(
        (user.tenant_id.as_str(), user.tenant_name.as_str()),
        (acme.id.as_str(), "Acme Ltd")
    );
    assert_eq!(user.culture_code, "en-GB");

    let signed_in = store
        .verify_password("ada@acme.test", PASSWORD)
        .await
        .unwrap();
    assert_eq!(signed_in.as_ref(), Some(user));
    assert_eq!(
        store
            .verify_password("ada@acme.test", "correct horse battery!")
            .await
            .unwrap(),
        None
    );
    // Only an argon2id hash is kept.
    let hash: String = raw(&db)
        .await
        .fetch_scalar("SELECT password_hash FROM users WHERE email_lower = 'ada@acme.test'")
        .await;
    assert!(hash.starts_with("$argon2id$"), "{hash}");
    assert!(!hash.contains(PASSWORD));

    assert_eq!(
        store.user_by_email("ADA@acme.test ").await.unwrap(),
        Some(account.clone())
    );
    assert_eq!(store.user_by_email("bob@acme.test").await.unwrap(), None);
    assert_eq!(store.users(&acme.id).await.unwrap(), [account]);
}

on_both!(a_user_is_refused_for_a_weak_password_a_taken_email_or_an_unknown_tenant);
async fn a_user_is_refused_for_a_weak_password_a_taken_email_or_an_unknown_tenant(
    backend: Backend,
) {
    let demo = demo(backend).await;
    let store = &demo.store;
    let acme = acme(store).await;
    let ada = new_user("ada@acme.test", Role::Office);

    let weak = store.create_user(&acme.id, &ada, "hunter2").await;
    match refused(weak) {
        Error::Invalid(violations) => {
            assert_eq!(violations.len(), 1);
            assert_eq!(violations[0].path, "password");
            assert_eq!(violations[0].message, "is 7 characters; use at least 12");
        }
        other => panic!("{other:?}"),
    }
    let common = refused(store.create_user(&acme.id, &ada, "Password1234").await);
    assert!(
        common
            .to_string()
            .contains("password: is one of the most common passwords"),
        "{common}"
    );
    let mut nameless = new_user("not an email", Role::Field);
    nameless.name = String::new();
    assert_eq!(
        paths(store.create_user(&acme.id, &nameless, "short").await),
        ["email", "name", "password"]
    );
    assert_eq!(store.users(&acme.id).await.unwrap(), []);

    // Emails are unique in the database, not only in the tenant: sign-in finds users by email.
    let taken_email = new_user("OFFICE@harbour.test", Role::Admin);
    assert_eq!(
        taken(store.create_user(&acme.id, &taken_email, PASSWORD).await),
        (Unique::UserEmail, "OFFICE@harbour.test".to_owned())
    );
    store.create_user(&acme.id, &ada, PASSWORD).await.unwrap();
    assert_eq!(
        taken(store.create_user(&demo.other.id, &ada, PASSWORD).await).0,
        Unique::UserEmail
    );

    assert_eq!(
        not_found(store.create_user("no-such-tenant", &ada, PASSWORD).await),
        (Record::Tenant, "no-such-tenant".to_owned())
    );

    // Each tenant lists its own users, by email.
    let harbour: Vec<String> = store
        .users(&demo.harbour.id)
        .await
        .unwrap()
        .into_iter()
        .map(|account| account.user.email)
        .collect();
    assert_eq!(
        harbour,
        [
            "admin@harbour.test",
            "field@harbour.test",
            "office@harbour.test",
            "super@harbour.test"
        ]
    );
    let acme_users = store.users(&acme.id).await.unwrap();
    assert_eq!(acme_users.len(), 1);
    assert_eq!(acme_users[0].user.email, "ada@acme.test");
}

on_both!(a_new_password_ends_the_users_sessions_and_replaces_the_old);
async fn a_new_password_ends_the_users_sessions_and_replaces_the_old(backend: Backend) {
    let (store, _db) = empty(backend).await;
    let acme = acme(&store).await;
    let ada = store
        .create_user(&acme.id, &new_user("ada@acme.test", Role::Admin), PASSWORD)
        .await
        .unwrap()
        .user;
    let bob = store
        .create_user(&acme.id, &new_user("bob@acme.test", Role::Field), PASSWORD)
        .await
        .unwrap()
        .user;
    let first = store.create_session(&ada.id, 3600).await.unwrap();
    let second = store.create_session(&ada.id, 3600).await.unwrap();
    let bobs = store.create_session(&bob.id, 3600).await.unwrap();

    // A weak one is refused, and changes nothing.
    assert_eq!(
        paths(store.set_password(&ada.id, "tooshort").await),
        ["password"]
    );
    assert!(store.session_user(&first).await.unwrap().is_some());

    let ended = store
        .set_password(&ada.id, "a whole new sentence")
        .await
        .unwrap();
    assert_eq!(ended, 2);
    assert_eq!(store.session_user(&first).await.unwrap(), None);
    assert_eq!(store.session_user(&second).await.unwrap(), None);
    assert_eq!(
        store.session_user(&bobs).await.unwrap().map(|u| u.id),
        Some(bob.id)
    );
    assert_eq!(
        store
            .verify_password("ada@acme.test", PASSWORD)
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        store
            .verify_password("ada@acme.test", "a whole new sentence")
            .await
            .unwrap()
            .map(|u| u.id),
        Some(ada.id)
    );

    assert_eq!(
        not_found(
            store
                .set_password("no-such-user", "a whole new sentence")
                .await
        ),
        (Record::User, "no-such-user".to_owned())
    );
}

on_both!(a_disabled_user_cannot_sign_in_and_their_sessions_end);
async fn a_disabled_user_cannot_sign_in_and_their_sessions_end(backend: Backend) {
    let (store, _db) = empty(backend).await;
    let acme = acme(&store).await;
    let ada = store
        .create_user(&acme.id, &new_user("ada@acme.test", Role::Admin), PASSWORD)
        .await
        .unwrap()
        .user;
    let session = store.create_session(&ada.id, 3600).await.unwrap();

    assert_eq!(store.disable_user(&ada.id).await.unwrap(), 1);
    assert_eq!(store.session_user(&session).await.unwrap(), None);
    assert_eq!(
        store
            .verify_password("ada@acme.test", PASSWORD)
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        not_found(store.create_session(&ada.id, 3600).await),
        (Record::User, ada.id.clone())
    );
    // Listed, as disabled.
    let listed = store.user_by_email("ada@acme.test").await.unwrap().unwrap();
    assert!(!listed.active);
    assert_eq!(store.users(&acme.id).await.unwrap(), [listed]);
    // Again: nothing more to end.
    assert_eq!(store.disable_user(&ada.id).await.unwrap(), 0);
    // A new password does not enable them.
    store
        .set_password(&ada.id, "a whole new sentence")
        .await
        .unwrap();
    assert_eq!(
        store
            .verify_password("ada@acme.test", "a whole new sentence")
            .await
            .unwrap(),
        None
    );

    store.enable_user(&ada.id).await.unwrap();
    assert!(
        store
            .verify_password("ada@acme.test", "a whole new sentence")
            .await
            .unwrap()
            .is_some()
    );
    assert_eq!(
        not_found(store.disable_user("no-such-user").await),
        (Record::User, "no-such-user".to_owned())
    );
}
