//! Passwords, sessions, API keys, scopes and rate limits.

use toolbridge_protocol::context::Role;
use toolbridge_store::{DEMO_PASSWORD, RateLimit, Record, Scope};

use crate::common::{Backend, demo, not_found, paths, raw};

on_both!(passwords_are_checked_and_emails_fold_case);
async fn passwords_are_checked_and_emails_fold_case(backend: Backend) {
    let demo = demo(backend).await;
    let store = &demo.store;
    let user = store
        .verify_password("  Office@Harbour.TEST ", DEMO_PASSWORD)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(user.email, "office@harbour.test");
    assert_eq!(user.role, Role::Office);
    assert_eq!(
        (user.tenant_id.as_str(), user.tenant_name.as_str()),
        (demo.harbour.id.as_str(), "Harbour Flooring Ltd")
    );
    assert_eq!(user.culture_code, "en-NZ");
    assert_eq!(
        store
            .verify_password("office@harbour.test", "wrong")
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        store
            .verify_password("office@harbour.test", "")
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        store
            .verify_password("nobody@harbour.test", DEMO_PASSWORD)
            .await
            .unwrap(),
        None
    );
    let other = store
        .verify_password("admin@other.test", DEMO_PASSWORD)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (other.tenant_id.as_str(), other.culture_code.as_str()),
        (demo.other.id.as_str(), "en-AU")
    );

    // Hashes are argon2id with their own salts; no password is stored.
    let raw = raw(&demo.db).await;
    let hashes: i64 = raw
        .fetch_scalar("SELECT COUNT(DISTINCT password_hash) FROM users WHERE password_hash LIKE '$argon2id$%'")
        .await;
    assert_eq!(hashes, 5);

    // The context of a user.
    let context = user.context();
    assert_eq!(context.user_name, "Olivia Office");
    assert_eq!(context.user_email, "office@harbour.test");
    assert_eq!(context.user_role, Role::Office);
    assert_eq!(
        (context.tenant_id, context.tenant_name),
        (demo.harbour.id.clone(), demo.harbour.name.clone())
    );
    assert_eq!(context.culture_code, "en-NZ");
    assert_eq!(store.context(&user).await, user.context());

    // An inactive user cannot sign in, and their sessions end.
    let token = store.create_session(&user.id, 3600).await.unwrap();
    raw.execute("UPDATE users SET active = 0 WHERE email = 'office@harbour.test'")
        .await;
    assert_eq!(
        store
            .verify_password("office@harbour.test", DEMO_PASSWORD)
            .await
            .unwrap(),
        None
    );
    assert_eq!(store.session_user(&token).await.unwrap(), None);
}

on_both!(sessions_start_expire_and_end);
async fn sessions_start_expire_and_end(backend: Backend) {
    let demo = demo(backend).await;
    let store = &demo.store;
    let user = store
        .verify_password("field@harbour.test", DEMO_PASSWORD)
        .await
        .unwrap()
        .unwrap();
    let token = store.create_session(&user.id, 3600).await.unwrap();
    assert!(
        token.len() >= 64 && token.bytes().all(|b| b.is_ascii_hexdigit()),
        "{token}"
    );
    assert_eq!(
        store.session_user(&token).await.unwrap(),
        Some(user.clone())
    );
    let second = store.create_session(&user.id, 3600).await.unwrap();
    assert_ne!(second, token);

    // Only a hash of the token is stored.
    let raw = raw(&demo.db).await;
    let stored: i64 = raw
        .fetch_scalar(&format!(
            "SELECT COUNT(*) FROM sessions WHERE token_hash = '{token}'"
        ))
        .await;
    assert_eq!(stored, 0);

    assert_eq!(store.session_user("not-a-token").await.unwrap(), None);
    assert_eq!(store.session_user("").await.unwrap(), None);
    store.delete_session(&token).await.unwrap();
    assert_eq!(store.session_user(&token).await.unwrap(), None);
    assert_eq!(
        store.session_user(&second).await.unwrap(),
        Some(user.clone())
    );
    store.delete_session("unknown").await.unwrap();

    // A session that has run out.
    let expired = store.create_session(&user.id, 0).await.unwrap();
    assert_eq!(store.session_user(&expired).await.unwrap(), None);
    raw.execute(&format!(
        "UPDATE sessions SET expires_at = {} WHERE user_id = '{}'",
        time_now() - 1,
        user.id
    ))
    .await;
    assert_eq!(store.session_user(&second).await.unwrap(), None);
    // Expired sessions are swept when the next one starts.
    store.create_session(&user.id, 60).await.unwrap();
    let left: i64 = raw.fetch_scalar("SELECT COUNT(*) FROM sessions").await;
    assert_eq!(left, 1);

    assert_eq!(
        not_found(store.create_session("no-such-user", 60).await),
        (Record::User, "no-such-user".to_owned())
    );
}

fn time_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        .try_into()
        .unwrap()
}

on_both!(api_keys_are_shown_once_checked_in_constant_time_and_revocable);
async fn api_keys_are_shown_once_checked_in_constant_time_and_revocable(backend: Backend) {
    let demo = demo(backend).await;
    let store = &demo.store;
    let (t1, t2) = (&demo.harbour.id, &demo.other.id);
    let limit = RateLimit {
        requests: 5,
        window_secs: 10,
    };
    let created = store
        .create_api_key(
            t1,
            "  CRM sync ",
            &[Scope::QuotesWrite, Scope::CustomersRead, Scope::QuotesWrite],
            limit,
        )
        .await
        .unwrap();
    let key = &created.key;
    assert_eq!(key.name, "CRM sync");
    assert_eq!(key.scopes, [Scope::CustomersRead, Scope::QuotesWrite]);
    assert!(key.has_scope(Scope::QuotesWrite) && !key.has_scope(Scope::ProductsRead));
    assert_eq!(key.rate_limit, limit);
    assert_eq!(key.revoked_at, None);
    assert!(key.created_at.ends_with('Z'));
    let token = &created.token;
    assert!(
        token.starts_with(&format!("tbk_{}_", key.prefix)),
        "{token}"
    );
    assert!(token.len() >= 4 + key.prefix.len() + 1 + 64);
    assert!(
        !format!("{created:?}").contains(token.as_str()),
        "Debug hides the token"
    );

    assert_eq!(store.api_key(token).await.unwrap().as_ref(), Some(key));

    // Only a hash of the secret is stored.
    let secret = token.rsplit('_').next().unwrap();
    let raw = raw(&demo.db).await;
    let plain: i64 = raw
        .fetch_scalar(&format!(
            "SELECT COUNT(*) FROM api_keys WHERE secret_hash LIKE '%{secret}%'"
        ))
        .await;
    assert_eq!(plain, 0);

    // A wrong secret with the right prefix, a changed character, garbage.
    let wrong_secret = format!("tbk_{}_{}", key.prefix, "0".repeat(64));
    assert_eq!(store.api_key(&wrong_secret).await.unwrap(), None);
    let mut flipped = token.clone();
    let last = flipped.pop().unwrap();
    flipped.push(if last == 'a' { 'b' } else { 'a' });
    assert_eq!(store.api_key(&flipped).await.unwrap(), None);
    for malformed in [
        "",
        "tbk_",
        "tbk__",
        "Bearer x",
        &token[..token.len() - 1],
        &format!("{token}0"),
        &token.to_uppercase(),
    ] {
        assert_eq!(store.api_key(malformed).await.unwrap(), None, "{malformed}");
    }
    let unknown_prefix = format!("tbk_{}_{}", "0".repeat(key.prefix.len()), secret);
    assert_eq!(store.api_key(&unknown_prefix).await.unwrap(), None);

    // Listing and revoking stay within the tenant.
    let second = store
        .create_api_key(t1, "Exports", &Scope::ALL, RateLimit::default())
        .await
        .unwrap();
    let theirs = store
        .create_api_key(t2, "Theirs", &[Scope::ProductsRead], RateLimit::default())
        .await
        .unwrap();
    let listed = store.list_api_keys(t1).await.unwrap();
    assert_eq!(listed, [created.key.clone(), second.key.clone()]);
    assert_eq!(
        store.list_api_keys(t2).await.unwrap(),
        std::slice::from_ref(&theirs.key)
    );
    assert!(!store.revoke_api_key(t2, &key.id).await.unwrap());
    assert!(!store.revoke_api_key(t1, "no-such-key").await.unwrap());
    assert!(store.api_key(token).await.unwrap().is_some());
    assert!(store.revoke_api_key(t1, &key.id).await.unwrap());
    assert_eq!(store.api_key(token).await.unwrap(), None);
    let revoked_at = store.list_api_keys(t1).await.unwrap()[0]
        .revoked_at
        .clone()
        .unwrap();
    assert!(
        store.revoke_api_key(t1, &key.id).await.unwrap(),
        "revoking twice is fine"
    );
    assert_eq!(
        store.list_api_keys(t1).await.unwrap()[0].revoked_at,
        Some(revoked_at)
    );
    assert!(store.api_key(&second.token).await.unwrap().is_some());
    assert!(store.api_key(&theirs.token).await.unwrap().is_some());
}

on_both!(api_key_requests_are_checked);
async fn api_key_requests_are_checked(backend: Backend) {
    let demo = demo(backend).await;
    let store = &demo.store;
    let t1 = &demo.harbour.id;
    let none = RateLimit {
        requests: 0,
        window_secs: 0,
    };
    let result = store.create_api_key(t1, " ", &[], none).await;
    assert_eq!(paths(result), ["name", "scopes", "rateLimit"]);
    let long = "n".repeat(101);
    assert_eq!(
        paths(
            store
                .create_api_key(t1, &long, &Scope::ALL, RateLimit::default())
                .await
        ),
        ["name"]
    );
    let unknown = store
        .create_api_key("no-such-tenant", "x", &Scope::ALL, RateLimit::default())
        .await;
    assert_eq!(
        not_found(unknown),
        (Record::Tenant, "no-such-tenant".to_owned())
    );
}

#[test]
fn scopes_and_rate_limits_read_and_print() {
    for scope in Scope::ALL {
        assert_eq!(Scope::parse(scope.as_str()), Some(scope));
        assert_eq!(scope.to_string(), scope.as_str());
    }
    let tokens: Vec<_> = Scope::ALL.iter().map(|s| s.as_str()).collect();
    assert_eq!(
        tokens,
        [
            "customers:read",
            "products:read",
            "quotes:read",
            "quotes:write",
            "jobs:read",
            "catalog:read",
            "webhooks:write"
        ]
    );
    assert_eq!(Scope::parse("quotes:delete"), None);
    assert_eq!(Scope::parse("Quotes:Read"), None);

    let default = RateLimit::default();
    assert_eq!((default.requests, default.window_secs), (120, 60));
    assert_eq!(default.to_string(), "120/60s");
    assert_eq!(RateLimit::parse("120/60s"), Ok(default));
    assert_eq!(RateLimit::parse("120/60"), Ok(default));
    assert_eq!(
        RateLimit::parse(" 5 / 1s "),
        Ok(RateLimit {
            requests: 5,
            window_secs: 1
        })
    );
    assert_eq!(
        RateLimit::parse(
            &RateLimit {
                requests: 7,
                window_secs: 3600
            }
            .to_string()
        )
        .unwrap()
        .window_secs,
        3600
    );
    for bad in [
        "", "120", "0/60s", "120/0s", "120/0", "-1/60", "a/b", "120/60m", "120/s", "1/2/3",
    ] {
        assert!(RateLimit::parse(bad).is_err(), "{bad}");
    }
}
