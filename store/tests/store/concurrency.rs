//! Several processes on one `PostgreSQL` database, each with a store of its own (its own pool):
//! what must hold across them. A third connection, standing for yet another process, holds a
//! row lock while the stores' requests pile up behind it, so that the races these tests are
//! about happen every run rather than by chance.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::json;
use sqlx::{Connection, PgConnection};
use toolbridge_protocol::Decimal;
use toolbridge_protocol::add_lines::Unit;
use toolbridge_protocol::quote::{QuoteLine, QuoteStatus};
use toolbridge_store::{Conditions, Error, Location, NewProduct, QuoteAction, Store, Unique};

use crate::common::{Backend, Fresh, a_customer, by, demo, empty, locked, product_id, raw, rest};
use crate::quotes::{idem, line, new_draft};
use crate::tools::manifest;

/// The URL of a `PostgreSQL` test database.
fn url(db: &Fresh) -> String {
    match db.location() {
        Location::Postgres(url) => url,
        Location::Sqlite(path) => panic!("{} is not PostgreSQL", path.display()),
    }
}

/// Another process's connection, in a transaction that holds the rows `select` finds.
async fn holding(db: &Fresh, select: &str) -> PgConnection {
    let mut holder = PgConnection::connect(&url(db)).await.unwrap();
    sqlx::query("BEGIN").execute(&mut holder).await.unwrap();
    sqlx::query(&format!("{select} FOR UPDATE"))
        .execute(&mut holder)
        .await
        .unwrap();
    holder
}

/// Waits until `count` connections to the database wait for a lock.
async fn until_waiting(db: &Fresh, count: i64) {
    let mut watcher = PgConnection::connect(&url(db)).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let waiting: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM pg_stat_activity \
             WHERE datname = current_database() AND wait_event_type = 'Lock'",
        )
        .fetch_one(&mut watcher)
        .await
        .unwrap();
        if waiting >= count {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{waiting} of {count} connections wait for a lock after 20 s"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_idempotency_key_from_two_processes_at_once_makes_one_quote() {
    let demo = demo(Backend::Postgres).await;
    let other = demo.db.open().await;
    let t1 = demo.harbour.id.clone();
    let customer = a_customer(&demo, &demo.harbour).await;
    let oak = product_id(&demo, &demo.harbour, "OAK-01").await;
    let before = demo.store.quote_count(&t1).await.unwrap();
    // A generated reference (both wait on the tenant's sequence), then one the request names
    // (the second waits on the first's reference in the unique index).
    for (round, quote_ref) in [None, Some("RACE-1")].into_iter().enumerate() {
        let mut body =
            json!({"customerId": customer, "lines": [{"skuId": oak, "qty": 2, "unitPrice": 89.5}]});
        if let Some(quote_ref) = quote_ref {
            body["quoteRef"] = json!(quote_ref);
        }
        let body = rest(body);
        let key = idem("key-1", &format!("race-{round}"), &"a".repeat(64));
        let mut holder = holding(
            &demo.db,
            &format!("SELECT id FROM tenants WHERE id = '{t1}'"),
        )
        .await;
        let requests: Vec<_> = [demo.store.clone(), other.clone()]
            .into_iter()
            .map(|store| {
                let (t1, body, key) = (t1.clone(), body.clone(), key.clone());
                tokio::spawn(async move { store.create_quote(&t1, &body, Some(&key), &by()).await })
            })
            .collect();
        until_waiting(&demo.db, 2).await;
        sqlx::query("COMMIT").execute(&mut holder).await.unwrap();
        let mut answers = Vec::new();
        for request in requests {
            answers.push(request.await.unwrap().unwrap());
        }
        assert_eq!(
            answers[0].quote.header.id, answers[1].quote.header.id,
            "round {round}: both answers carry the one quote"
        );
        assert_eq!(answers[0].quote, answers[1].quote);
        let mut replayed: Vec<bool> = answers.iter().map(|a| a.replayed).collect();
        replayed.sort_unstable();
        assert_eq!(replayed, [false, true], "round {round}");
        if let Some(quote_ref) = quote_ref {
            assert_eq!(answers[0].quote.header.reference, quote_ref);
        }
    }
    assert_eq!(demo.store.quote_count(&t1).await.unwrap(), before + 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_save_waits_for_another_process_writing_the_quote_and_sees_what_it_did() {
    let demo = demo(Backend::Postgres).await;
    let other = demo.db.open().await;
    let t1 = demo.harbour.id.clone();
    let draft = new_draft(&demo).await;
    let id = draft.header.id.clone();
    let mut holder = holding(
        &demo.db,
        &format!("SELECT id FROM quotes WHERE id = '{id}'"),
    )
    .await;
    let save = {
        let (t1, id) = (t1.clone(), id.clone());
        tokio::spawn(async move {
            other
                .save_lines(
                    &t1,
                    &id,
                    vec![line(1, "1", "10")],
                    BTreeMap::new(),
                    &Conditions::default(),
                    &by(),
                )
                .await
        })
    };
    until_waiting(&demo.db, 1).await;
    // The other process sends the quote while the save waits.
    sqlx::query(&format!(
        "UPDATE quotes SET status = '{}' WHERE id = '{id}'",
        QuoteStatus::Sent.as_str()
    ))
    .execute(&mut holder)
    .await
    .unwrap();
    sqlx::query("COMMIT").execute(&mut holder).await.unwrap();
    assert_eq!(
        locked(save.await.unwrap()),
        (QuoteAction::Change, draft.header.reference.clone())
    );
    let after = demo.store.quote(&t1, &id).await.unwrap().quote;
    assert_eq!(after.lines, draft.lines, "the save changed nothing");
    assert_eq!(after.header.status, QuoteStatus::Sent);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn saves_of_one_quote_from_two_processes_take_turns() {
    let demo = demo(Backend::Postgres).await;
    let other = demo.db.open().await;
    let t1 = demo.harbour.id.clone();
    let id = new_draft(&demo).await.header.id;
    let first: Vec<QuoteLine> = vec![line(1, "1", "10"), line(2, "2", "20"), line(3, "3", "30")];
    let second: Vec<QuoteLine> = vec![line(1, "4", "40"), line(7, "5", "50")];
    let mut holder = holding(
        &demo.db,
        &format!("SELECT id FROM quotes WHERE id = '{id}'"),
    )
    .await;
    let saves: Vec<_> = [(demo.store.clone(), first.clone()), (other, second.clone())]
        .into_iter()
        .map(|(store, lines): (Store, _)| {
            let (t1, id) = (t1.clone(), id.clone());
            tokio::spawn(async move {
                store
                    .save_lines(
                        &t1,
                        &id,
                        lines,
                        BTreeMap::new(),
                        &Conditions::default(),
                        &by(),
                    )
                    .await
            })
        })
        .collect();
    until_waiting(&demo.db, 2).await;
    sqlx::query("COMMIT").execute(&mut holder).await.unwrap();
    for save in saves {
        save.await.unwrap().unwrap();
    }
    let stored: Vec<QuoteLine> = demo
        .store
        .quote(&t1, &id)
        .await
        .unwrap()
        .quote
        .lines
        .into_iter()
        .map(|l| l.line)
        .collect();
    assert!(
        stored == first || stored == second,
        "the lines of one save, whole: {stored:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn instances_starting_together_on_an_empty_database_migrate_and_seed_once() {
    let db = Fresh::new(Backend::Postgres);
    let location = db.location();
    // Three instances open the empty database at once: one migrates, the others wait for it.
    let opens: Vec<_> = (0..3)
        .map(|_| {
            let location = location.clone();
            tokio::spawn(async move { Store::connect(&location).await })
        })
        .collect();
    let mut stores = Vec::new();
    for open in opens {
        stores.push(open.await.unwrap().unwrap());
    }
    // And they seed at once. Another process's lock on the table makes each seed that has found
    // no tenant wait before it writes one, so that without their turn at it (the advisory lock)
    // every one of them would find the database empty and seed it.
    let mut holder = PgConnection::connect(&url(&db)).await.unwrap();
    sqlx::query("BEGIN").execute(&mut holder).await.unwrap();
    sqlx::query("LOCK TABLE tenants IN SHARE MODE")
        .execute(&mut holder)
        .await
        .unwrap();
    let seeds: Vec<_> = stores
        .into_iter()
        .map(|store| tokio::spawn(async move { store.seed_demo(10).await }))
        .collect();
    until_waiting(&db, 3).await;
    sqlx::query("COMMIT").execute(&mut holder).await.unwrap();
    let mut seeded = 0;
    for seed in seeds {
        match seed.await.unwrap() {
            Ok(_) => seeded += 1,
            Err(Error::NotEmpty) => {}
            Err(other) => panic!("{other:?}"),
        }
    }
    assert_eq!(seeded, 1);
    let raw = raw(&db).await;
    let tenants: i64 = raw.fetch_scalar("SELECT COUNT(*) FROM tenants").await;
    assert_eq!(tenants, 2, "one demo seed: Harbour Flooring and Other Co");
    let migrations: i64 = raw
        .fetch_scalar("SELECT COUNT(*) FROM _sqlx_migrations")
        .await;
    let files = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/migrations/postgres"))
        .unwrap()
        .count();
    assert_eq!(migrations, i64::try_from(files).unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn installs_of_one_tool_from_two_processes_take_turns() {
    let (store, db) = empty(Backend::Postgres).await;
    let other = db.open().await;
    let first: [(&str, &[u8]); 2] = [("index.html", b"<p>one"), ("app.js", b"1")];
    let second: [(&str, &[u8]); 2] = [("index.html", b"<p>two"), ("style.css", b"p{}")];
    // Both installs wait to replace the (no) files there, so that without their turns they
    // would each write files of the same tool at once.
    let mut holder = PgConnection::connect(&url(&db)).await.unwrap();
    sqlx::query("BEGIN").execute(&mut holder).await.unwrap();
    sqlx::query("LOCK TABLE tool_files IN SHARE MODE")
        .execute(&mut holder)
        .await
        .unwrap();
    let installs: Vec<_> = [(store.clone(), "1.0.0", first), (other, "2.0.0", second)]
        .into_iter()
        .map(|(store, version, files)| {
            tokio::spawn(
                async move { store.install_tool("demo", &manifest(version), &files).await },
            )
        })
        .collect();
    until_waiting(&db, 2).await;
    sqlx::query("COMMIT").execute(&mut holder).await.unwrap();
    let mut replaced = Vec::new();
    for install in installs {
        replaced.push(
            install
                .await
                .unwrap()
                .unwrap()
                .map(|tool| tool.manifest.version),
        );
    }
    // One installed it, and the other replaced that one whole.
    let tool = store.tool("demo").await.unwrap().unwrap();
    let (first_version, files) = if tool.manifest.version == "2.0.0" {
        ("1.0.0", ["index.html", "style.css"])
    } else {
        ("2.0.0", ["index.html", "app.js"])
    };
    replaced.sort();
    assert_eq!(replaced, [None, Some(first_version.to_owned())]);
    assert_eq!(tool.file_count, 2);
    for path in files {
        assert!(
            store.tool_file("demo", path).await.unwrap().is_some(),
            "{path}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_unique_value_taken_by_another_process_meanwhile_is_the_stores_own_refusal() {
    let demo = demo(Backend::Postgres).await;
    let other = demo.db.open().await;
    let t1 = demo.harbour.id.clone();
    let stores = [demo.store.clone(), other];

    // Two processes add a product with one SKU (in two letter cases): each has found it free
    // and waits to write it.
    let mut holder = holding_table(&demo.db, "products").await;
    let adds: Vec<_> = stores
        .iter()
        .zip(["RACE-SKU", "race-sku"])
        .map(|(store, sku)| {
            let (store, t1) = (store.clone(), t1.clone());
            let product = NewProduct {
                sku: sku.to_owned(),
                name: "Raced".to_owned(),
                unit: Unit::Item,
                price: Decimal::ONE,
                cost: Decimal::ONE,
            };
            tokio::spawn(async move { store.add_product(&t1, &product).await })
        })
        .collect();
    until_waiting(&demo.db, 2).await;
    sqlx::query("COMMIT").execute(&mut holder).await.unwrap();
    let mut taken = Vec::new();
    for add in adds {
        match add.await.unwrap() {
            Ok(_) => {}
            Err(Error::Taken { what, .. }) => taken.push(what),
            Err(other) => panic!("{other:?}"),
        }
    }
    assert_eq!(taken, [Unique::ProductSku]);

    // Two processes create a quote with one reference, without an idempotency key.
    let customer = a_customer(&demo, &demo.harbour).await;
    let oak = product_id(&demo, &demo.harbour, "OAK-01").await;
    let body = rest(json!({
        "customerId": customer,
        "quoteRef": "RACE-2",
        "lines": [{"skuId": oak, "qty": 1, "unitPrice": 1}],
    }));
    let mut holder = holding_table(&demo.db, "quotes").await;
    let creates: Vec<_> = stores
        .iter()
        .map(|store| {
            let (store, t1, body) = (store.clone(), t1.clone(), body.clone());
            tokio::spawn(async move { store.create_quote(&t1, &body, None, &by()).await })
        })
        .collect();
    until_waiting(&demo.db, 2).await;
    sqlx::query("COMMIT").execute(&mut holder).await.unwrap();
    let mut taken = Vec::new();
    for create in creates {
        match create.await.unwrap() {
            Ok(made) => assert_eq!(made.quote.header.reference, "RACE-2"),
            Err(Error::Taken { what, value }) => taken.push((what, value)),
            Err(other) => panic!("{other:?}"),
        }
    }
    assert_eq!(taken, [(Unique::QuoteReference, "RACE-2".to_owned())]);
}

/// Another process's connection, in a transaction that lets others read `table` but not write
/// to it.
async fn holding_table(db: &Fresh, table: &str) -> PgConnection {
    let mut holder = PgConnection::connect(&url(db)).await.unwrap();
    sqlx::query("BEGIN").execute(&mut holder).await.unwrap();
    sqlx::query(&format!("LOCK TABLE {table} IN SHARE MODE"))
        .execute(&mut holder)
        .await
        .unwrap();
    holder
}
