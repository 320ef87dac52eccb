//! Lists, paging, codes, the catalog index and tenant isolation of reads.

use std::collections::HashSet;
use std::sync::Arc;

use serde_json::json;
use toolbridge_protocol::Decimal;
use toolbridge_protocol::add_lines::Unit;
use toolbridge_protocol::catalog::Catalog;
use toolbridge_protocol::paging::{ListRequest, PageRequest};
use toolbridge_store::{NewProduct, Record};

use crate::common::{
    Backend, SMALL_CATALOG, bridge, by, catalog_index, demo, demo_with, not_found, page, raw,
    refused, rest, simple_rest_body,
};

fn inactive_in_small_catalog() -> u64 {
    (7..=SMALL_CATALOG).filter(|n| n % 20 == 3).count() as u64
}

on_both!(paging_covers_every_item_once_and_past_the_end_is_empty);
async fn paging_covers_every_item_once_and_past_the_end_is_empty(backend: Backend) {
    let demo = demo(backend).await;
    let t1 = &demo.harbour.id;
    let total = u64::from(SMALL_CATALOG) - inactive_in_small_catalog();

    let mut seen = HashSet::new();
    let mut skus = Vec::new();
    for number in 1..=4 {
        let result = demo.store.products(t1, page(number, 50)).await.unwrap();
        assert_eq!(
            (result.page, result.page_size, result.total_count),
            (number, 50, total)
        );
        for product in result.items {
            assert!(seen.insert(product.id.clone()), "{} twice", product.sku);
            skus.push(product.sku);
        }
    }
    assert_eq!(seen.len() as u64, total);
    let mut sorted = skus.clone();
    sorted.sort();
    assert_eq!(skus, sorted, "products are ordered by sku");

    // The last page is partial; the next one is empty but still counts.
    let last = demo.store.products(t1, page(3, 50)).await.unwrap();
    assert_eq!(last.items.len() as u64, total - 100);
    let past = demo.store.products(t1, page(4, 50)).await.unwrap();
    assert!(past.items.is_empty());
    assert_eq!(past.total_count, total);
    let far = demo.store.products(t1, page(u32::MAX, 500)).await.unwrap();
    assert!(far.items.is_empty());
    assert_eq!(
        (far.page, far.page_size, far.total_count),
        (u32::MAX, 500, total)
    );

    for result in [
        demo.store
            .customers(t1, page(1000, 10))
            .await
            .unwrap()
            .total_count,
        demo.store
            .jobs(t1, page(1000, 10))
            .await
            .unwrap()
            .total_count,
        demo.store
            .quotes(t1, page(1000, 10))
            .await
            .unwrap()
            .total_count,
    ] {
        assert!(result > 0);
    }
    let customers = demo.store.customers(t1, page(1000, 10)).await.unwrap();
    assert!(customers.items.is_empty());
    let templates = demo
        .store
        .task_templates(
            t1,
            &ListRequest {
                paging: page(2, 3),
                codes: None,
            },
        )
        .await
        .unwrap();
    assert_eq!((templates.items.len(), templates.total_count), (1, 4));
    let jobs = demo.store.jobs(t1, PageRequest::default()).await.unwrap();
    assert_eq!((jobs.page, jobs.page_size, jobs.items.len()), (1, 50, 27));
}

on_both!(inactive_rows_are_never_listed);
async fn inactive_rows_are_never_listed(backend: Backend) {
    let demo = demo(backend).await;
    let t1 = &demo.harbour.id;
    let products = demo.store.products(t1, page(1, 500)).await.unwrap();
    assert!(
        products
            .items
            .iter()
            .all(|p| p.sku != "SKU-00023" && p.sku != "SKU-00043")
    );
    assert!(products.items.iter().any(|p| p.sku == "SKU-00024"));
    let (index, _) = catalog_index(&demo.store, t1).await;
    assert!(index.products.iter().all(|p| p.sku != "SKU-00023"));
    assert_eq!(index.products.len(), products.items.len());
    assert!(index.task_templates.iter().all(|t| t.code != "LEGACY_PREP"));
    assert!(index.cost_items.iter().all(|c| c.code != "OLD_FEE"));
    let templates = demo
        .store
        .task_templates(t1, &ListRequest::default())
        .await
        .unwrap();
    assert!(templates.items.iter().all(|t| t.code != "LEGACY_PREP"));
    let costs = demo
        .store
        .cost_items(t1, &ListRequest::default())
        .await
        .unwrap();
    assert!(costs.items.iter().all(|c| c.code != "OLD_FEE"));
}

on_both!(codes_match_exactly_and_ignore_paging);
async fn codes_match_exactly_and_ignore_paging(backend: Backend) {
    let demo = demo(backend).await;
    let t1 = &demo.harbour.id;
    let request = ListRequest {
        paging: page(3, 1),
        codes: Some(
            ["SEAL", "install", "INSTALL", "LEGACY_PREP", "NOPE", "SEAL"]
                .map(String::from)
                .to_vec(),
        ),
    };
    let templates = demo.store.task_templates(t1, &request).await.unwrap();
    let codes: Vec<_> = templates.items.iter().map(|t| t.code.as_str()).collect();
    assert_eq!(codes, ["INSTALL", "SEAL"]);
    assert_eq!(
        (templates.page, templates.page_size, templates.total_count),
        (1, 2, 2)
    );

    let request = ListRequest {
        paging: PageRequest::default(),
        codes: Some(vec!["TRAVEL".into(), "OLD_FEE".into(), "travel".into()]),
    };
    let costs = demo.store.cost_items(t1, &request).await.unwrap();
    assert_eq!(costs.items.len(), 1);
    assert_eq!(
        (
            costs.items[0].code.as_str(),
            costs.items[0].item_type.as_str()
        ),
        ("TRAVEL", "T_TRAVEL")
    );

    let none = ListRequest {
        paging: PageRequest::default(),
        codes: Some(vec!["NOPE".into()]),
    };
    let empty = demo.store.cost_items(t1, &none).await.unwrap();
    assert!(empty.items.is_empty());
    assert_eq!((empty.total_count, empty.page, empty.page_size), (0, 1, 0));

    // Tenant 2 has its own INSTALL.
    let install = ListRequest {
        paging: PageRequest::default(),
        codes: Some(vec!["INSTALL".into()]),
    };
    let mine = demo.store.task_templates(t1, &install).await.unwrap().items;
    let theirs = demo
        .store
        .task_templates(&demo.other.id, &install)
        .await
        .unwrap()
        .items;
    assert_eq!((mine.len(), theirs.len()), (1, 1));
    assert_ne!(mine[0].id, theirs[0].id);
}

on_both!(lists_never_mix_tenants);
async fn lists_never_mix_tenants(backend: Backend) {
    let demo = demo(backend).await;
    let (t1, t2) = (&demo.harbour.id, &demo.other.id);
    let store = &demo.store;
    let ids = |items: Vec<String>| items.into_iter().collect::<HashSet<_>>();
    let p1 = ids(store
        .products(t1, page(1, 500))
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|p| p.id)
        .collect());
    let p2 = ids(store
        .products(t2, page(1, 500))
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|p| p.id)
        .collect());
    assert!(p1.is_disjoint(&p2));
    assert_eq!(p2.len(), 7);
    let c1 = ids(store
        .customers(t1, page(1, 500))
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|c| c.id)
        .collect());
    let c2 = ids(store
        .customers(t2, page(1, 500))
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|c| c.id)
        .collect());
    assert!(c1.is_disjoint(&c2));
    let j1 = store.jobs(t1, page(1, 500)).await.unwrap().items;
    let j2 = store.jobs(t2, page(1, 500)).await.unwrap().items;
    assert!(j1.iter().all(|j| c1.contains(&j.customer_id_guid)));
    assert!(j2.iter().all(|j| c2.contains(&j.customer_id_guid)));
    let q1 = ids(store
        .quotes(t1, page(1, 500))
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|q| q.id)
        .collect());
    let q2 = ids(store
        .quotes(t2, page(1, 500))
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|q| q.id)
        .collect());
    assert!(q1.is_disjoint(&q2));
    assert_eq!(q2.len(), 3);
    let (i1, _) = catalog_index(store, t1).await;
    let (i2, _) = catalog_index(store, t2).await;
    assert!(i2.products.iter().all(|p| !p1.contains(&p.id)));
    assert_eq!(i2.task_templates.len(), 1);
    assert_ne!(i1.task_templates.len(), i2.task_templates.len());

    // Reading another tenant's quote is NOT_FOUND, exactly like a missing one.
    let theirs = q2.iter().next().unwrap();
    assert_eq!(
        not_found(store.quote(t1, theirs).await),
        (Record::Quote, theirs.clone())
    );
    let foreign = refused(store.quote(t1, theirs).await);
    let missing = refused(
        store
            .quote(t1, "00000000-0000-4000-8000-000000000000")
            .await,
    );
    assert_eq!(
        foreign.to_string().replace(theirs.as_str(), "ID"),
        missing
            .to_string()
            .replace("00000000-0000-4000-8000-000000000000", "ID")
    );
}

on_both!(quotes_list_newest_first_and_ids_are_case_insensitive);
async fn quotes_list_newest_first_and_ids_are_case_insensitive(backend: Backend) {
    let demo = demo(backend).await;
    let t1 = &demo.harbour.id;
    let body = simple_rest_body(&demo, &demo.harbour).await;
    let created = demo
        .store
        .create_quote(t1, &rest(body), None, &by())
        .await
        .unwrap()
        .quote;
    let list = demo.store.quotes(t1, page(1, 50)).await.unwrap();
    assert_eq!(list.items[0].id, created.header.id);
    assert_eq!(list.items[0], created.summary());
    let dates: Vec<_> = list.items.iter().map(|q| q.date.clone()).collect();
    let mut sorted = dates.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    assert_eq!(dates, sorted);
    let upper = created.header.id.to_uppercase();
    assert_eq!(demo.store.quote(t1, &upper).await.unwrap().quote, created);
    let braced = format!("{{{}}}", created.header.id);
    assert_eq!(demo.store.quote(t1, &braced).await.unwrap().quote, created);
}

on_both!(the_catalog_index_has_task_sequences_and_an_etag_that_follows_changes);
async fn the_catalog_index_has_task_sequences_and_an_etag_that_follows_changes(backend: Backend) {
    let demo = demo(backend).await;
    let t1 = &demo.harbour.id;
    let (index, etag) = catalog_index(&demo.store, t1).await;
    assert_eq!(etag.len(), 32, "{etag}");
    assert!(etag.bytes().all(|b| b.is_ascii_hexdigit()), "{etag}");
    let install = index
        .task_templates
        .iter()
        .find(|t| t.code == "INSTALL")
        .unwrap();
    let underlay = index
        .task_templates
        .iter()
        .find(|t| t.code == "UNDERLAY")
        .unwrap();
    assert_eq!(install.name, "Installation");
    assert_eq!(
        (install.unit_price, install.cost_price),
        (Decimal::new(45, 0), Decimal::new(30, 0))
    );
    let oak = index.products.iter().find(|p| p.sku == "OAK-01").unwrap();
    let steps: Vec<_> = oak
        .task_sequence
        .iter()
        .map(|s| (s.task_template_id.as_str(), s.qty_per_unit))
        .collect();
    assert_eq!(
        steps,
        [
            (install.id.as_str(), Decimal::new(25, 2)),
            (underlay.id.as_str(), Decimal::ONE)
        ]
    );
    let vinyl = index.products.iter().find(|p| p.sku == "VINYL-02").unwrap();
    assert_eq!(vinyl.task_sequence.len(), 1);
    assert!(
        index
            .products
            .iter()
            .find(|p| p.sku == "TILE-04")
            .unwrap()
            .task_sequence
            .is_empty()
    );
    let with_tasks = index
        .products
        .iter()
        .filter(|p| !p.task_sequence.is_empty())
        .count();
    assert!(
        with_tasks >= 3 + 10,
        "about 10% of generated products have a sequence ({with_tasks})"
    );
    let catalog = Catalog::from_index(index.clone()).unwrap();
    assert_eq!(catalog.product_count(), index.products.len());

    // Same catalog, same ETag; any change, another one. Quotes are not the catalog.
    let body = simple_rest_body(&demo, &demo.harbour).await;
    demo.store
        .create_quote(t1, &rest(body), None, &by())
        .await
        .unwrap();
    assert_eq!(catalog_index(&demo.store, t1).await.1, etag);
    let raw = raw(&demo.db).await;
    raw.execute("UPDATE products SET price = '90.00' WHERE sku = 'OAK-01'")
        .await;
    let (_, after_price) = catalog_index(&demo.store, t1).await;
    assert_eq!(after_price, etag, "the index holds no prices of products");
    raw.execute("UPDATE task_templates SET active = 0 WHERE code = 'UNDERLAY'")
        .await;
    let (index, after) = catalog_index(&demo.store, t1).await;
    assert_ne!(after, etag);
    let oak = index.products.iter().find(|p| p.sku == "OAK-01").unwrap();
    assert_eq!(
        oak.task_sequence.len(),
        1,
        "steps of inactive templates are left out"
    );
    raw.execute("UPDATE products SET active = 0 WHERE sku = 'TILE-04'")
        .await;
    assert_ne!(catalog_index(&demo.store, t1).await.1, after);
}

on_both!(the_catalog_index_is_one_shared_copy_until_the_catalog_changes);
async fn the_catalog_index_is_one_shared_copy_until_the_catalog_changes(backend: Backend) {
    let demo = demo(backend).await;
    let t1 = &demo.harbour.id;
    let first = demo.store.catalog_index(t1).await.unwrap();
    let again = demo.store.catalog_index(t1).await.unwrap();
    assert!(
        Arc::ptr_eq(&first, &again),
        "an unchanged index is not copied"
    );
    raw(&demo.db)
        .await
        .execute("UPDATE products SET active = 0 WHERE sku = 'VINYL-02'")
        .await;
    let changed = demo.store.catalog_index(t1).await.unwrap();
    assert!(!Arc::ptr_eq(&first, &changed));
    assert_eq!(changed.0.products.len(), first.0.products.len() - 1);
    assert_ne!(changed.1, first.1);
}

on_both!(catalog_reads_follow_changes_made_behind_the_stores_back);
async fn catalog_reads_follow_changes_made_behind_the_stores_back(backend: Backend) {
    let demo = demo(backend).await;
    let t1 = &demo.harbour.id;
    let first = demo.store.products(t1, page(1, 500)).await.unwrap();
    let (index, _) = catalog_index(&demo.store, t1).await;
    let raw = raw(&demo.db).await;

    raw.execute(
        "UPDATE products SET name = 'Oak board, renamed', price = '91.25' WHERE sku = 'OAK-01'",
    )
    .await;
    let renamed = demo.store.products(t1, page(1, 500)).await.unwrap();
    let oak = renamed.items.iter().find(|p| p.sku == "OAK-01").unwrap();
    assert_eq!(
        (oak.name.as_str(), oak.price),
        ("Oak board, renamed", 91.25)
    );
    assert_eq!(renamed.total_count, first.total_count);

    raw.execute("UPDATE products SET active = 0 WHERE sku = 'VINYL-02'")
        .await;
    let fewer = demo.store.products(t1, page(1, 500)).await.unwrap();
    assert_eq!(fewer.total_count, first.total_count - 1);
    assert!(fewer.items.iter().all(|p| p.sku != "VINYL-02"));
    let (after, _) = catalog_index(&demo.store, t1).await;
    assert_eq!(after.products.len(), index.products.len() - 1);

    raw.execute(&format!(
        "DELETE FROM product_tasks WHERE product_id = \
         (SELECT id FROM products WHERE tenant_id = '{t1}' AND sku = 'CARPET-03')"
    ))
    .await;
    let (after, _) = catalog_index(&demo.store, t1).await;
    let carpet = after
        .products
        .iter()
        .find(|p| p.sku == "CARPET-03")
        .unwrap();
    assert!(carpet.task_sequence.is_empty());

    raw.execute("UPDATE cost_items SET name = 'Mileage' WHERE code = 'TRAVEL'")
        .await;
    let (after, _) = catalog_index(&demo.store, t1).await;
    assert!(after.cost_items.iter().any(|c| c.name == "Mileage"));

    // Another tenant's changes leave this tenant's reads as they were.
    let before = demo.store.products(t1, page(1, 500)).await.unwrap();
    raw.execute(&format!(
        "UPDATE products SET name = 'x' WHERE tenant_id = '{}'",
        demo.other.id
    ))
    .await;
    assert_eq!(demo.store.products(t1, page(1, 500)).await.unwrap(), before);
    assert!(
        demo.store
            .products(&demo.other.id, page(1, 50))
            .await
            .unwrap()
            .items
            .iter()
            .all(|p| p.name == "x")
    );
    // An unknown tenant has no products.
    let none = demo
        .store
        .products("no-such-tenant", page(1, 50))
        .await
        .unwrap();
    assert_eq!((none.items.len(), none.total_count), (0, 0));
}

#[tokio::test]
async fn both_backends_order_text_byte_by_byte() {
    // Mixed case and accents, which a linguistic collation would order otherwise (the test
    // cluster's default collation is ICU's en-US).
    let skus = [
        "apple",
        "Banana",
        "Élan",
        "eclair",
        "Zebra",
        "zoo",
        "ÅNGSTRÖM",
        "a-1",
        "a1b",
        "_x",
    ];
    let names = [
        "émile Dupont",
        "Zoë Adams",
        "adam Smith",
        "Ådne Berg",
        "Bob Brown",
        "bob brown",
    ];
    let mut orders = Vec::new();
    for backend in [Backend::Sqlite, Backend::Postgres] {
        let demo = demo_with(backend, 1).await;
        let (store, t1) = (&demo.store, &demo.harbour.id);
        for sku in skus {
            let product = NewProduct {
                sku: sku.to_owned(),
                name: format!("Product {sku}"),
                unit: Unit::Item,
                price: Decimal::ONE,
                cost: Decimal::ONE,
            };
            store.add_product(t1, &product).await.unwrap();
        }
        for name in names {
            let params = json!({
                "customerName": name,
                "lines": [{"productCode": "FREE", "qty": 1, "unitPrice": 1, "taxRate": 0.15}],
            });
            store
                .create_quote(t1, &bridge(params), None, &by())
                .await
                .unwrap();
        }
        let products: Vec<String> = store
            .products(t1, page(1, 500))
            .await
            .unwrap()
            .items
            .into_iter()
            .map(|p| p.sku)
            .collect();
        let (index, _) = catalog_index(store, t1).await;
        let indexed: Vec<String> = index.products.into_iter().map(|p| p.sku).collect();
        let customers: Vec<String> = store
            .customers(t1, page(1, 500))
            .await
            .unwrap()
            .items
            .into_iter()
            .map(|c| c.name)
            .collect();
        for list in [&products, &indexed, &customers] {
            let mut bytewise = list.clone();
            bytewise.sort();
            assert_eq!(*list, bytewise, "{backend:?} orders byte by byte");
        }
        assert!(customers.iter().any(|name| name == "Ådne Berg"));
        orders.push((products, indexed, customers));
    }
    assert_eq!(orders[0], orders[1], "the same order on both backends");
}

/// What a client sees of the demo data's lists, page by page, and of the catalog index, by
/// natural keys (skus, codes, names, references): ids are random, so they differ between two
/// databases, and nothing else does.
async fn everything_listed(demo: &crate::common::Demo) -> Vec<Vec<String>> {
    let (store, t1) = (&demo.store, &demo.harbour.id);
    let mut lists = Vec::new();
    for n in 1..=4 {
        let products = store.products(t1, page(n, 37)).await.unwrap();
        lists.push(products.items.into_iter().map(|p| p.sku).collect());
        let quotes = store.quotes(t1, page(n, 6)).await.unwrap();
        lists.push(quotes.items.into_iter().map(|q| q.reference).collect());
    }
    for n in 1..=3 {
        let customers = store.customers(t1, page(n, 20)).await.unwrap();
        lists.push(customers.items.into_iter().map(|c| c.name).collect());
        let jobs = store.jobs(t1, page(n, 10)).await.unwrap();
        lists.push(jobs.items.into_iter().map(|j| j.reference).collect());
    }
    for n in 1..=2 {
        let paging = ListRequest {
            paging: page(n, 3),
            ..ListRequest::default()
        };
        let templates = store.task_templates(t1, &paging).await.unwrap();
        lists.push(templates.items.into_iter().map(|t| t.code).collect());
        let cost_items = store.cost_items(t1, &paging).await.unwrap();
        lists.push(cost_items.items.into_iter().map(|c| c.code).collect());
    }
    // The index the ETag hashes, in its order.
    let (index, _) = catalog_index(store, t1).await;
    let code_of = |id: &str| {
        index
            .task_templates
            .iter()
            .find(|t| t.id == id)
            .map(|t| t.code.clone())
            .unwrap()
    };
    lists.push(
        index
            .products
            .iter()
            .map(|p| {
                let steps: Vec<String> = p
                    .task_sequence
                    .iter()
                    .map(|s| format!("{}x{}", code_of(&s.task_template_id), s.qty_per_unit))
                    .collect();
                format!("{} [{}]", p.sku, steps.join(", "))
            })
            .collect(),
    );
    lists.push(
        index
            .task_templates
            .iter()
            .map(|t| t.code.clone())
            .collect(),
    );
    lists.push(index.cost_items.iter().map(|c| c.code.clone()).collect());
    lists
}

#[tokio::test]
async fn both_backends_give_every_page_and_the_catalog_index_in_the_same_order() {
    let sqlite = demo(Backend::Sqlite).await;
    let postgres = demo(Backend::Postgres).await;
    let (on_sqlite, on_postgres) = (
        everything_listed(&sqlite).await,
        everything_listed(&postgres).await,
    );
    assert!(
        on_sqlite.iter().all(|list| !list.is_empty()),
        "{on_sqlite:?}"
    );
    assert_eq!(on_sqlite, on_postgres);
}
