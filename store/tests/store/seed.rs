//! The demo seed, opening and reopening files.

use toolbridge_protocol::add_lines::Unit;
use toolbridge_protocol::context::Role;
use toolbridge_protocol::paging::ListRequest;
use toolbridge_protocol::quote::QuoteStatus;
use toolbridge_store::{DEFAULT_SEED_PRODUCTS, DEMO_PASSWORD, Error};

use serde_json::json;

use crate::common::{
    Backend, Fresh, by, catalog_index, demo, demo_with, empty, page, raw, refused, rest,
};

on_both!(an_empty_database_is_not_seeded);
async fn an_empty_database_is_not_seeded(backend: Backend) {
    let (store, _db) = empty(backend).await;
    assert!(!store.is_seeded().await.unwrap());
    assert_eq!(store.default_tenant().await.unwrap(), None);
}

on_both!(the_demo_sign_ins_are_those_that_still_let_someone_in);
async fn the_demo_sign_ins_are_those_that_still_let_someone_in(backend: Backend) {
    let (store, _db) = empty(backend).await;
    assert_eq!(store.demo_sign_ins().await.unwrap(), []);
    // A database set up by hand has none, even with a tenant named as the demo's.
    let tenant = store
        .create_tenant(&toolbridge_store::NewTenant {
            name: "Harbour Flooring Ltd".to_owned(),
            culture_code: "en-NZ".to_owned(),
            default_tax_rate: toolbridge_protocol::Decimal::new(15, 2),
        })
        .await
        .unwrap();
    assert_eq!(tenant.name, "Harbour Flooring Ltd");
    assert_eq!(store.demo_sign_ins().await.unwrap(), []);

    // On a demo database: the sign-ins the seed made, in its order.
    let (store, _db) = empty(backend).await;
    let made = store.seed_demo(10).await.unwrap();
    let seeded = store.demo_sign_ins().await.unwrap();
    assert_eq!(seeded, made);
    assert_eq!(seeded.len(), 5);
    assert!(seeded.iter().all(|s| s.password == DEMO_PASSWORD));
    assert_eq!(seeded[1].role, Role::Admin);
    assert_eq!(seeded[4].tenant_name, "Other Co");
    // Each one listed lets its user in.
    for sign_in in &seeded {
        let user = store
            .verify_password(&sign_in.email, &sign_in.password)
            .await;
        assert!(user.unwrap().is_some(), "{}", sign_in.email);
    }

    let field = store
        .user_by_email("field@harbour.test")
        .await
        .unwrap()
        .unwrap();
    store.disable_user(&field.user.id).await.unwrap();
    let left = store.demo_sign_ins().await.unwrap();
    assert_eq!(left.len(), 4);
    assert!(left.iter().all(|s| s.email != "field@harbour.test"));

    // A demo user whose password is no longer the demo's is not listed, and is again once it is.
    let admin = store
        .user_by_email("admin@harbour.test")
        .await
        .unwrap()
        .unwrap();
    store
        .set_password(&admin.user.id, "a password of the admin's own")
        .await
        .unwrap();
    let emails = |sign_ins: Vec<toolbridge_store::DemoSignIn>| -> Vec<String> {
        sign_ins.into_iter().map(|s| s.email).collect()
    };
    assert_eq!(
        emails(store.demo_sign_ins().await.unwrap()),
        [
            "super@harbour.test",
            "office@harbour.test",
            "admin@other.test"
        ]
    );
    store
        .set_password(&admin.user.id, DEMO_PASSWORD)
        .await
        .unwrap();
    assert_eq!(
        emails(store.demo_sign_ins().await.unwrap()),
        [
            "super@harbour.test",
            "admin@harbour.test",
            "office@harbour.test",
            "admin@other.test"
        ]
    );
}

on_both!(the_demo_seed_has_what_the_example_tools_need);
async fn the_demo_seed_has_what_the_example_tools_need(backend: Backend) {
    let demo = demo_with(backend, DEFAULT_SEED_PRODUCTS).await;
    let store = &demo.store;
    assert!(store.is_seeded().await.unwrap());
    assert_eq!(demo.harbour.name, "Harbour Flooring Ltd");
    let t1 = &demo.harbour.id;

    let customers = store.customers(t1, page(1, 500)).await.unwrap();
    assert!(customers.total_count >= 50, "{}", customers.total_count);
    assert!(
        customers
            .items
            .iter()
            .all(|c| c.email.contains('@') && !c.phone.is_empty())
    );
    let mut names: Vec<_> = customers.items.iter().map(|c| c.name.clone()).collect();
    let sorted = {
        let mut sorted = names.clone();
        sorted.sort();
        sorted
    };
    assert_eq!(names, sorted, "customers are ordered by name");
    names.dedup();

    // 1000 products, of which every 20th generated one (SKU-00023, …) is inactive.
    let products = store.products(t1, page(1, 500)).await.unwrap();
    let inactive = (7..=1000).filter(|n| n % 20 == 3).count() as u64;
    assert_eq!(products.total_count, 1000 - inactive);
    let oak = products.items.iter().find(|p| p.sku == "OAK-01").unwrap();
    assert_eq!(oak.name, "Oak engineered board 14mm");
    assert!((oak.price - 89.5).abs() < 1e-9);
    assert_eq!(oak.unit, "T_SQUARE_METRE");
    let skirting = products.items.iter().find(|p| p.sku == "SKIRT-05").unwrap();
    assert_eq!(skirting.unit, Unit::LinearMetre.token());
    let seal = products.items.iter().find(|p| p.sku == "SEAL-06").unwrap();
    assert_eq!((seal.unit.as_str(), seal.price), ("T_ITEM", 120.0));

    let templates = store
        .task_templates(t1, &ListRequest::default())
        .await
        .unwrap();
    let codes: Vec<_> = templates.items.iter().map(|t| t.code.as_str()).collect();
    assert_eq!(codes, ["INSTALL", "REMOVE_OLD", "SEAL", "UNDERLAY"]);
    let cost_items = store.cost_items(t1, &ListRequest::default()).await.unwrap();
    let items: Vec<_> = cost_items
        .items
        .iter()
        .map(|c| (c.code.as_str(), c.item_type.as_str()))
        .collect();
    assert_eq!(
        items,
        [
            ("DISPOSAL", "T_DISPOSAL"),
            ("FINANCE", "T_FINANCIAL"),
            ("SITE_VISIT", "T_SITE_VISIT"),
            ("TRAVEL", "T_TRAVEL")
        ]
    );

    let jobs = store.jobs(t1, page(1, 100)).await.unwrap();
    assert_eq!(jobs.total_count, 27, "30 jobs, 3 closed");
    assert!(
        jobs.items
            .iter()
            .all(|j| j.status != "Closed" && j.reference.starts_with("J-"))
    );
    assert_eq!(jobs.items[0].reference, "J-0001");

    let quotes = store.quotes(t1, page(1, 100)).await.unwrap();
    assert_eq!(quotes.total_count, 20);
    assert_eq!(store.quote_count(t1).await.unwrap(), 20);
    for status in QuoteStatus::ALL {
        assert!(quotes.items.iter().any(|q| q.status == status), "{status}");
    }
    for summary in &quotes.items {
        let quote = store.quote(t1, &summary.id).await.unwrap().quote;
        assert!((1..=6).contains(&quote.lines.len()));
        assert_eq!(quote.summary(), *summary);
    }

    // The second tenant.
    let t2 = &demo.other.id;
    assert_eq!(demo.other.name, "Other Co");
    assert_eq!(store.quote_count(t2).await.unwrap(), 3);
    assert_eq!(store.jobs(t2, page(1, 50)).await.unwrap().total_count, 3);
    assert!(store.customers(t2, page(1, 50)).await.unwrap().total_count >= 3);
    let other_products = store.products(t2, page(1, 50)).await.unwrap();
    assert!(other_products.items.iter().any(|p| p.sku == "OAK-01"));
    let templates = store
        .task_templates(t2, &ListRequest::default())
        .await
        .unwrap();
    assert_eq!(templates.items.len(), 1);
    assert_eq!(templates.items[0].code, "INSTALL");
    let costs = store.cost_items(t2, &ListRequest::default()).await.unwrap();
    assert_eq!(costs.items.len(), 1);
    assert_eq!(costs.items[0].code, "TRAVEL");
}

on_both!(a_catalog_of_many_statements_has_every_product_and_task);
async fn a_catalog_of_many_statements_has_every_product_and_task(backend: Backend) {
    // Over two statements' worth of products (500 rows each) and their tasks.
    let demo = demo_with(backend, 1203).await;
    let (index, _) = catalog_index(&demo.store, &demo.harbour.id).await;
    let install = &index
        .task_templates
        .iter()
        .find(|t| t.code == "INSTALL")
        .unwrap()
        .id;
    for n in 7..=1203_u32 {
        let sku = format!("SKU-{n:05}");
        let found = index.products.iter().find(|p| p.sku == sku);
        assert_eq!(found.is_some(), n % 20 != 3, "{sku} active");
        let Some(product) = found else { continue };
        let tasks: Vec<_> = product
            .task_sequence
            .iter()
            .map(|step| &step.task_template_id)
            .collect();
        if n % 10 == 0 {
            assert_eq!(tasks, [install], "{sku}'s tasks");
        } else {
            assert!(tasks.is_empty(), "{sku}'s tasks: {tasks:?}");
        }
    }
    let generated = index
        .products
        .iter()
        .filter(|p| p.sku.starts_with("SKU-"))
        .count();
    assert_eq!(generated, (7..=1203).filter(|n| n % 20 != 3).count());
}

on_both!(the_seed_returns_the_sign_ins_and_refuses_a_second_run);
async fn the_seed_returns_the_sign_ins_and_refuses_a_second_run(backend: Backend) {
    let (store, _db) = empty(backend).await;
    let sign_ins = store.seed_demo(10).await.unwrap();
    let emails: Vec<_> = sign_ins.iter().map(|s| s.email.as_str()).collect();
    assert_eq!(
        emails,
        [
            "super@harbour.test",
            "admin@harbour.test",
            "office@harbour.test",
            "field@harbour.test",
            "admin@other.test"
        ]
    );
    let roles: Vec<_> = sign_ins.iter().map(|s| s.role).collect();
    assert_eq!(
        roles,
        [
            Role::SuperUser,
            Role::Admin,
            Role::Office,
            Role::Field,
            Role::Admin
        ]
    );
    assert!(sign_ins.iter().all(|s| s.password == DEMO_PASSWORD));
    assert_eq!(sign_ins[4].tenant_name, "Other Co");
    let sam = store
        .verify_password("super@harbour.test", DEMO_PASSWORD)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (sam.name.as_str(), sam.role),
        ("Sam Super", Role::SuperUser)
    );

    let again = refused(store.seed_demo(10).await);
    assert!(matches!(again, Error::NotEmpty), "{again:?}");
    assert_eq!(
        store
            .products(&sam.tenant_id, page(1, 50))
            .await
            .unwrap()
            .total_count,
        10,
        "nothing was added by the refused run"
    );
}

on_both!(a_small_catalog_keeps_the_fixed_products_first);
async fn a_small_catalog_keeps_the_fixed_products_first(backend: Backend) {
    let (store, _db) = empty(backend).await;
    store.seed_demo(3).await.unwrap();
    let tenant = store.default_tenant().await.unwrap().unwrap();
    let skus: Vec<_> = store
        .products(&tenant.id, page(1, 50))
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|p| p.sku)
        .collect();
    assert_eq!(skus, ["CARPET-03", "OAK-01", "VINYL-02"]);
}

on_both!(reopening_the_database_keeps_the_data);
async fn reopening_the_database_keeps_the_data(backend: Backend) {
    let db = Fresh::new(backend);
    let (tenant, quote_id) = {
        let store = db.open().await;
        store.seed_demo(20).await.unwrap();
        let tenant = store.default_tenant().await.unwrap().unwrap();
        let customer = store.customers(&tenant.id, page(1, 1)).await.unwrap().items[0]
            .id
            .clone();
        let product = store.products(&tenant.id, page(1, 1)).await.unwrap().items[0]
            .id
            .clone();
        let body = json!({"customerId": customer, "lines": [{"skuId": product, "qty": 2, "unitPrice": 10}]});
        let created = store
            .create_quote(&tenant.id, &rest(body), None, &by())
            .await
            .unwrap();
        store.close().await;
        (tenant, created.quote)
    };
    let store = db.open().await;
    assert!(store.is_seeded().await.unwrap());
    assert_eq!(store.default_tenant().await.unwrap(), Some(tenant.clone()));
    assert_eq!(store.quote_count(&tenant.id).await.unwrap(), 21);
    let quote = store
        .quote(&tenant.id, &quote_id.header.id)
        .await
        .unwrap()
        .quote;
    assert_eq!(quote, quote_id);
    assert_eq!(quote.header.reference, "Q-1021");
    let migrations: i64 = raw(&db)
        .await
        .fetch_scalar("SELECT COUNT(*) FROM _sqlx_migrations")
        .await;
    let directory = match backend {
        Backend::Sqlite => "sqlite",
        Backend::Postgres => "postgres",
    };
    let files = std::fs::read_dir(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("migrations")
            .join(directory),
    )
    .unwrap()
    .count();
    assert_eq!(
        migrations,
        i64::try_from(files).unwrap(),
        "each migration runs once"
    );
}

#[tokio::test]
async fn a_sqlite_file_is_in_wal_mode() {
    let demo = demo(Backend::Sqlite).await;
    let mode: String = raw(&demo.db)
        .await
        .fetch_scalar("PRAGMA journal_mode")
        .await;
    assert_eq!(mode, "wal");
}

#[tokio::test]
async fn a_postgres_database_the_store_cannot_use_is_refused_with_the_reason() {
    use sqlx::Connection;
    use toolbridge_store::{Location, Store};

    let db = Fresh::new(Backend::Postgres);
    let Location::Postgres(url) = db.location() else {
        unreachable!()
    };
    // A wrong password: the server's own words.
    let (user_info, rest) = url.split_once('@').unwrap();
    let (user, _) = user_info.rsplit_once(':').unwrap();
    let wrong = Location::Postgres(format!("{user}:wrong@{rest}"));
    let error = Store::connect(&wrong).await.expect_err("a wrong password");
    let cause = std::error::Error::source(&error).unwrap().to_string();
    assert!(cause.contains("password authentication failed"), "{cause}");

    // A database in another encoding than UTF-8.
    let mut admin = sqlx::PgConnection::connect(&url).await.unwrap();
    let name = format!("{}_latin1", url.rsplit('/').next().unwrap());
    sqlx::query(&format!(
        "CREATE DATABASE {name} TEMPLATE template0 ENCODING 'LATIN1' \
         LOCALE_PROVIDER libc LC_COLLATE 'C' LC_CTYPE 'C'"
    ))
    .execute(&mut admin)
    .await
    .unwrap();
    let latin1 = Location::Postgres(format!("{}/{name}", url.rsplit_once('/').unwrap().0));
    let error = Store::connect(&latin1).await.expect_err("not UTF-8");
    assert!(
        matches!(&error, Error::Unusable { problem, .. } if problem.contains("encoding is LATIN1")),
        "{error:?}"
    );
    sqlx::query(&format!("DROP DATABASE {name} WITH (FORCE)"))
        .execute(&mut admin)
        .await
        .unwrap();
}
