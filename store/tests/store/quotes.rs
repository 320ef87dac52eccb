//! Creating quotes (customers, lines, references, idempotency), saving
//! lines, sending, and tenant isolation of writes.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::json;
use toolbridge_protocol::Decimal;
use toolbridge_protocol::add_lines::{LineType, Unit};
use toolbridge_protocol::quote::{QuoteDto, QuoteLine, QuoteStatus, QuoteType};
use toolbridge_store::{Conditions, Error, Idempotency, QuoteAction, Record, Store};

use crate::common::{
    Backend, Demo, a_customer, bridge, by, demo, locked, not_found, page, paths, product_id,
    refused, rest, simple_rest_body,
};

fn dec(text: &str) -> Decimal {
    text.parse().unwrap()
}

async fn customer_count(demo: &Demo, tenant_id: &str) -> u64 {
    demo.store
        .customers(tenant_id, page(1, 1))
        .await
        .unwrap()
        .total_count
}

async fn first_job(demo: &Demo, tenant_id: &str) -> (String, String) {
    let job = demo
        .store
        .jobs(tenant_id, page(1, 1))
        .await
        .unwrap()
        .items
        .remove(0);
    (job.id, job.customer_id_guid)
}

async fn a_quote(demo: &Demo, status: QuoteStatus) -> QuoteDto {
    let t1 = &demo.harbour.id;
    let list = demo.store.quotes(t1, page(1, 100)).await.unwrap();
    let summary = list.items.iter().find(|q| q.status == status).unwrap();
    demo.store.quote(t1, &summary.id).await.unwrap().quote
}

pub(crate) async fn new_draft(demo: &Demo) -> QuoteDto {
    let body = simple_rest_body(demo, &demo.harbour).await;
    demo.store
        .create_quote(&demo.harbour.id, &rest(body), None, &by())
        .await
        .unwrap()
        .quote
}

on_both!(a_rest_quote_takes_the_products_defaults);
async fn a_rest_quote_takes_the_products_defaults(backend: Backend) {
    let demo = demo(backend).await;
    let t1 = &demo.harbour.id;
    let customer = a_customer(&demo, &demo.harbour).await;
    let oak = product_id(&demo, &demo.harbour, "OAK-01").await;
    let seal = product_id(&demo, &demo.harbour, "SEAL-06").await;
    let body = json!({
        "customerId": customer.to_uppercase(),
        "title": "Lounge and hall",
        "lines": [
            {"skuId": oak, "qty": 10, "unitPrice": 89.5},
            {"skuId": seal.to_uppercase(), "qty": 2, "unitPrice": 130, "taxRate": 0, "description": "Sealant"},
        ],
    });
    let before = demo.store.quote_count(t1).await.unwrap();
    let created = demo
        .store
        .create_quote(t1, &rest(body), None, &by())
        .await
        .unwrap();
    assert!(!created.replayed);
    let quote = created.quote;
    let header = &quote.header;
    assert_eq!(header.reference, "Q-1021");
    assert_eq!(header.customer_id, customer);
    assert_eq!(header.title.as_deref(), Some("Lounge and hall"));
    assert_eq!(
        (header.status, header.quote_type),
        (QuoteStatus::Draft, QuoteType::Quote)
    );
    assert_eq!((header.expiry_days, header.job_id.as_deref()), (30, None));
    assert_eq!(header.date.len(), "2025-01-31T09:30:00Z".len());
    assert!(header.date.ends_with('Z') && header.date.contains('T'));

    let oak_line = &quote.lines[0].line;
    assert_eq!(oak_line.line_no, 1);
    assert_eq!(oak_line.line_type, LineType::Product);
    assert_eq!(oak_line.linked_item_id.as_deref(), Some(oak.as_str()));
    assert_eq!(oak_line.product_code.as_deref(), Some("OAK-01"));
    assert_eq!(oak_line.description, "Oak engineered board 14mm");
    assert_eq!(oak_line.unit, Unit::SquareMetre);
    assert_eq!(
        (oak_line.unit_price, oak_line.cost_price),
        (dec("89.5"), dec("61.00"))
    );
    assert_eq!(oak_line.tax_rate, dec("0.15"), "the tenant's default rate");
    let seal_line = &quote.lines[1].line;
    assert_eq!(seal_line.linked_item_id.as_deref(), Some(seal.as_str()));
    assert_eq!(
        (seal_line.description.as_str(), seal_line.unit),
        ("Sealant", Unit::Item)
    );
    assert_eq!(
        (seal_line.tax_rate, seal_line.cost_price),
        (Decimal::ZERO, dec("80"))
    );

    // 895.00 + 134.25 tax; 260.00 tax-free. Cost 610 + 160.
    assert_eq!(quote.totals.nett, dec("1155"));
    assert_eq!(quote.totals.tax, dec("134.25"));
    assert_eq!(quote.totals.total, dec("1289.25"));
    assert_eq!(quote.totals.cost, dec("770"));

    assert_eq!(demo.store.quote_count(t1).await.unwrap(), before + 1);
    assert_eq!(demo.store.quote(t1, &header.id).await.unwrap().quote, quote);
    let next = new_draft(&demo).await;
    assert_eq!(next.header.reference, "Q-1022");
}

on_both!(rest_errors_list_every_bad_field_and_create_nothing);
async fn rest_errors_list_every_bad_field_and_create_nothing(backend: Backend) {
    let demo = demo(backend).await;
    let (t1, t2) = (&demo.harbour.id, &demo.other.id);
    let oak = product_id(&demo, &demo.harbour, "OAK-01").await;
    let theirs = product_id(&demo, &demo.other, "OAK-01").await;
    let inactive: String = crate::common::raw(&demo.db)
        .await
        .fetch_scalar(&format!(
            "SELECT id FROM products WHERE tenant_id = '{t1}' AND sku = 'SKU-00023'"
        ))
        .await;
    let their_customer = a_customer(&demo, &demo.other).await;
    let body = json!({
        "customerId": their_customer,
        "lines": [
            {"skuId": "no-such-product", "qty": 1, "unitPrice": 1},
            {"skuId": oak, "qty": 1, "unitPrice": 1},
            {"skuId": theirs, "qty": 1, "unitPrice": 1},
            {"skuId": inactive, "qty": 1, "unitPrice": 1},
        ],
    });
    let customers = customer_count(&demo, t1).await;
    let result = demo.store.create_quote(t1, &rest(body), None, &by()).await;
    assert_eq!(
        paths(result),
        [
            "customerId",
            "lines[0].skuId",
            "lines[2].skuId",
            "lines[3].skuId"
        ]
    );
    assert_eq!(demo.store.quote_count(t1).await.unwrap(), 20);
    assert_eq!(demo.store.quote_count(t2).await.unwrap(), 3);
    assert_eq!(customer_count(&demo, t1).await, customers);

    // A duplicate reference, also of a seeded quote.
    let mut body = simple_rest_body(&demo, &demo.harbour).await;
    body["quoteRef"] = json!("Q-1005");
    assert_eq!(
        paths(
            demo.store
                .create_quote(t1, &rest(body.clone()), None, &by())
                .await
        ),
        ["quoteRef"]
    );
    // Another tenant's references do not count.
    let mut theirs = simple_rest_body(&demo, &demo.other).await;
    theirs["quoteRef"] = json!("HF-7");
    demo.store
        .create_quote(t2, &rest(theirs), None, &by())
        .await
        .unwrap();
    body["quoteRef"] = json!("HF-7");
    let custom = demo
        .store
        .create_quote(t1, &rest(body.clone()), None, &by())
        .await
        .unwrap();
    assert_eq!(custom.quote.header.reference, "HF-7");
    assert_eq!(
        paths(demo.store.create_quote(t1, &rest(body), None, &by()).await),
        ["quoteRef"]
    );

    // An unknown tenant.
    let body = simple_rest_body(&demo, &demo.harbour).await;
    assert_eq!(
        not_found(
            demo.store
                .create_quote("no-such-tenant", &rest(body), None, &by())
                .await
        ),
        (Record::Tenant, "no-such-tenant".to_owned())
    );
}

on_both!(generated_references_skip_taken_ones_and_are_per_tenant);
async fn generated_references_skip_taken_ones_and_are_per_tenant(backend: Backend) {
    let demo = demo(backend).await;
    let (t1, t2) = (&demo.harbour.id, &demo.other.id);
    let mut body = simple_rest_body(&demo, &demo.harbour).await;
    body["quoteRef"] = json!("Q-1022");
    demo.store
        .create_quote(t1, &rest(body), None, &by())
        .await
        .unwrap();
    assert_eq!(new_draft(&demo).await.header.reference, "Q-1021");
    assert_eq!(new_draft(&demo).await.header.reference, "Q-1023");
    let theirs = simple_rest_body(&demo, &demo.other).await;
    let created = demo
        .store
        .create_quote(t2, &rest(theirs), None, &by())
        .await
        .unwrap();
    assert_eq!(created.quote.header.reference, "Q-1004");
}

on_both!(a_bridge_quote_for_a_job_takes_the_jobs_customer);
async fn a_bridge_quote_for_a_job_takes_the_jobs_customer(backend: Backend) {
    let demo = demo(backend).await;
    let (t1, t2) = (&demo.harbour.id, &demo.other.id);
    let (job, customer) = first_job(&demo, t1).await;
    let params = json!({"jobId": job, "lines": [{"qty": 1, "unitPrice": 10, "taxRate": 0.15, "description": "Call-out"}]});
    let quote = demo
        .store
        .create_quote(t1, &bridge(params.clone()), None, &by())
        .await
        .unwrap()
        .quote;
    assert_eq!(quote.header.job_id.as_deref(), Some(job.as_str()));
    assert_eq!(quote.header.customer_id, customer);

    // Unknown job, and another tenant's job: NOT_FOUND alike.
    let unknown = json!({"jobId": "nope", "lines": [{"qty": 1, "unitPrice": 10, "taxRate": 0.15}]});
    assert_eq!(
        not_found(
            demo.store
                .create_quote(t1, &bridge(unknown), None, &by())
                .await
        ),
        (Record::Job, "nope".to_owned())
    );
    assert_eq!(
        not_found(
            demo.store
                .create_quote(t2, &bridge(params), None, &by())
                .await
        ),
        (Record::Job, job)
    );
    assert_eq!(demo.store.quote_count(t2).await.unwrap(), 3);
}

/// A quote the bridge's `quote.create` made for the demo tenant.
async fn bridge_quote(demo: &Demo, params: serde_json::Value) -> QuoteDto {
    demo.store
        .create_quote(&demo.harbour.id, &bridge(params), None, &by())
        .await
        .unwrap()
        .quote
}

on_both!(upsert_by_email_matches_case_insensitively_or_creates);
async fn upsert_by_email_matches_case_insensitively_or_creates(backend: Backend) {
    let demo = demo(backend).await;
    let t1 = &demo.harbour.id;
    let existing = demo
        .store
        .customers(t1, page(1, 1))
        .await
        .unwrap()
        .items
        .remove(0);
    let before = customer_count(&demo, t1).await;
    let params = json!({
        "upsertByEmail": true,
        "customerEmail": existing.email.to_uppercase(),
        "customerName": "Someone Else",
        "lines": [{"qty": 1, "unitPrice": 10, "taxRate": 0.15}],
    });
    let quote = bridge_quote(&demo, params).await;
    assert_eq!(quote.header.customer_id, existing.id);
    assert_eq!(quote.header.customer_name, existing.name);
    assert_eq!(customer_count(&demo, t1).await, before);

    // A new email: created, named after the email when no name is given.
    let params = json!({
        "upsertByEmail": true,
        "customerEmail": "New.Person@Example.test",
        "customerPhone": "021 000 0000",
        "lines": [{"qty": 1, "unitPrice": 10, "taxRate": 0.15}],
    });
    let quote = bridge_quote(&demo, params.clone()).await;
    assert_eq!(quote.header.customer_name, "New.Person@Example.test");
    assert_eq!(customer_count(&demo, t1).await, before + 1);
    let again = bridge_quote(&demo, params).await;
    assert_eq!(again.header.customer_id, quote.header.customer_id);
    assert_eq!(customer_count(&demo, t1).await, before + 1);

    // Another tenant's customer's email is not a match.
    let theirs = demo
        .store
        .customers(&demo.other.id, page(1, 1))
        .await
        .unwrap()
        .items
        .remove(0);
    let params = json!({
        "upsertByEmail": true,
        "customerEmail": theirs.email,
        "lines": [{"qty": 1, "unitPrice": 10, "taxRate": 0.15}],
    });
    let quote = bridge_quote(&demo, params).await;
    assert_ne!(quote.header.customer_id, theirs.id);
    assert_eq!(customer_count(&demo, t1).await, before + 2);

    // A plain customerName makes a new customer every time.
    let params = json!({
        "customerName": "Walk-in Customer",
        "customerEmail": "walkin@mail.test",
        "lines": [{"qty": 1, "unitPrice": 10, "taxRate": 0.15}],
    });
    let first = bridge_quote(&demo, params.clone()).await;
    let second = bridge_quote(&demo, params).await;
    assert_eq!(first.header.customer_name, "Walk-in Customer");
    assert_ne!(first.header.customer_id, second.header.customer_id);
    let found = demo
        .store
        .customers(t1, page(1, 500))
        .await
        .unwrap()
        .items
        .into_iter()
        .find(|c| c.id == first.header.customer_id)
        .unwrap();
    assert_eq!(
        (found.email.as_str(), found.phone.as_str()),
        ("walkin@mail.test", "")
    );
}

on_both!(product_codes_link_to_active_products_or_stay_free_form);
async fn product_codes_link_to_active_products_or_stay_free_form(backend: Backend) {
    let demo = demo(backend).await;
    let t1 = &demo.harbour.id;
    let oak = product_id(&demo, &demo.harbour, "OAK-01").await;
    let params = json!({
        "customerName": "Code Tester",
        "lines": [
            {"productCode": "oak-01", "qty": 2, "unitPrice": 95, "taxRate": 0.15},
            {"productCode": "SKU-00023", "qty": 1, "unitPrice": 50, "taxRate": 0.15},
            {"productCode": "MYSTERY-9", "description": "Custom inlay", "qty": 1, "unitPrice": 300, "taxRate": 0.1},
            {"description": "Labour", "qty": 3, "unitPrice": 60, "taxRate": 0.15},
        ],
    });
    let quote = demo
        .store
        .create_quote(t1, &bridge(params), None, &by())
        .await
        .unwrap()
        .quote;
    let lines: Vec<&QuoteLine> = quote.lines.iter().map(|l| &l.line).collect();
    assert_eq!(lines[0].linked_item_id.as_deref(), Some(oak.as_str()));
    assert_eq!(lines[0].product_code.as_deref(), Some("OAK-01"));
    assert_eq!(lines[0].description, "Oak engineered board 14mm");
    assert_eq!(
        (lines[0].unit_price, lines[0].cost_price),
        (dec("95"), dec("61"))
    );
    assert_eq!(lines[0].unit, Unit::SquareMetre);
    // Inactive: free-form, code kept, BUY = SELL.
    assert_eq!(lines[1].linked_item_id, None);
    assert_eq!(lines[1].product_code.as_deref(), Some("SKU-00023"));
    assert_eq!(lines[1].description, "SKU-00023");
    assert_eq!(
        (lines[1].cost_price, lines[1].unit),
        (dec("50"), Unit::Item)
    );
    assert_eq!(lines[2].linked_item_id, None);
    assert_eq!(lines[2].product_code.as_deref(), Some("MYSTERY-9"));
    assert_eq!(
        (lines[2].description.as_str(), lines[2].tax_rate),
        ("Custom inlay", dec("0.1"))
    );
    assert_eq!(
        (
            lines[3].product_code.as_deref(),
            lines[3].description.as_str()
        ),
        (None, "Labour")
    );
    let numbers: Vec<u32> = lines.iter().map(|l| l.line_no).collect();
    assert_eq!(numbers, [1, 2, 3, 4]);
    // Tenant 2's OAK-01 is its own product.
    let theirs = json!({"customerName": "X", "lines": [{"productCode": "OAK-01", "qty": 1, "unitPrice": 1, "taxRate": 0.1}]});
    let quote = demo
        .store
        .create_quote(&demo.other.id, &bridge(theirs), None, &by())
        .await
        .unwrap()
        .quote;
    assert_eq!(
        quote.lines[0].line.linked_item_id,
        Some(product_id(&demo, &demo.other, "OAK-01").await)
    );
    assert_eq!(quote.lines[0].line.cost_price, dec("70"));
}

pub(crate) fn idem(key_id: &str, key: &str, body_hash: &str) -> Idempotency {
    Idempotency {
        key_id: key_id.to_owned(),
        key: key.to_owned(),
        body_hash: body_hash.to_owned(),
    }
}

on_both!(an_idempotency_key_replays_the_first_quote);
async fn an_idempotency_key_replays_the_first_quote(backend: Backend) {
    let demo = demo(backend).await;
    let t1 = &demo.harbour.id;
    let body = rest(simple_rest_body(&demo, &demo.harbour).await);
    let key = idem("key-1", "abc-123", &"a".repeat(64));
    let first = demo
        .store
        .create_quote(t1, &body, Some(&key), &by())
        .await
        .unwrap();
    assert!(!first.replayed);
    let again = demo
        .store
        .create_quote(t1, &body, Some(&key), &by())
        .await
        .unwrap();
    assert!(again.replayed);
    assert_eq!(again.quote, first.quote);
    assert_eq!(demo.store.quote_count(t1).await.unwrap(), 21);

    // Same key, another body.
    let other_body = idem("key-1", "abc-123", &"b".repeat(64));
    let result = demo
        .store
        .create_quote(t1, &body, Some(&other_body), &by())
        .await;
    let reused = refused(result);
    assert!(matches!(reused, Error::IdempotencyKeyReused), "{reused:?}");
    // Same header value from another API key: a separate request.
    let other_key = idem("key-2", "abc-123", &"a".repeat(64));
    let separate = demo
        .store
        .create_quote(t1, &body, Some(&other_key), &by())
        .await
        .unwrap();
    assert!(!separate.replayed);
    assert_ne!(separate.quote.header.id, first.quote.header.id);
    assert_eq!(demo.store.quote_count(t1).await.unwrap(), 22);

    // A request that failed left no record: the key is still free.
    let bad =
        rest(json!({"customerId": "nobody", "lines": [{"skuId": "x", "qty": 1, "unitPrice": 1}]}));
    let key3 = idem("key-1", "failed-once", &"c".repeat(64));
    assert_eq!(
        paths(demo.store.create_quote(t1, &bad, Some(&key3), &by()).await),
        ["customerId", "lines[0].skuId"]
    );
    let created = demo
        .store
        .create_quote(
            t1,
            &body,
            Some(&idem("key-1", "failed-once", &"d".repeat(64))),
            &by(),
        )
        .await
        .unwrap();
    assert!(!created.replayed);

    // Keys must be 1 to 255 characters.
    for bad_key in [String::new(), "k".repeat(256)] {
        let result = demo
            .store
            .create_quote(t1, &body, Some(&idem("key-1", &bad_key, "e")), &by())
            .await;
        assert_eq!(paths(result), ["Idempotency-Key"]);
    }
}

on_both!(concurrent_requests_with_one_idempotency_key_create_one_quote);
async fn concurrent_requests_with_one_idempotency_key_create_one_quote(backend: Backend) {
    let demo = demo(backend).await;
    let t1 = demo.harbour.id.clone();
    let body = Arc::new(rest(simple_rest_body(&demo, &demo.harbour).await));
    let key = Arc::new(idem("key-1", "same-key", &"f".repeat(64)));
    let before = demo.store.quote_count(&t1).await.unwrap();
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let (store, t1, body, key): (Store, _, _, _) =
                (demo.store.clone(), t1.clone(), body.clone(), key.clone());
            tokio::spawn(async move { store.create_quote(&t1, &body, Some(&key), &by()).await })
        })
        .collect();
    let mut results = Vec::new();
    for task in tasks {
        results.push(task.await.unwrap().unwrap());
    }
    assert_eq!(demo.store.quote_count(&t1).await.unwrap(), before + 1);
    assert_eq!(results.iter().filter(|r| !r.replayed).count(), 1);
    assert!(
        results
            .iter()
            .all(|r| r.quote.header.id == results[0].quote.header.id)
    );
}

on_both!(concurrent_requests_without_a_key_get_distinct_references);
async fn concurrent_requests_without_a_key_get_distinct_references(backend: Backend) {
    let demo = demo(backend).await;
    let t1 = demo.harbour.id.clone();
    let body = Arc::new(rest(simple_rest_body(&demo, &demo.harbour).await));
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let (store, t1, body) = (demo.store.clone(), t1.clone(), body.clone());
            tokio::spawn(async move { store.create_quote(&t1, &body, None, &by()).await })
        })
        .collect();
    let mut references = Vec::new();
    for task in tasks {
        references.push(task.await.unwrap().unwrap().quote.header.reference);
    }
    references.sort();
    references.dedup();
    assert_eq!(references.len(), 8);
    assert_eq!(demo.store.quote_count(&t1).await.unwrap(), 28);
}

pub(crate) fn line(line_no: u32, qty: &str, price: &str) -> QuoteLine {
    QuoteLine {
        line_no,
        line_type: LineType::Product,
        linked_item_id: None,
        product_code: None,
        description: format!("Line {line_no}"),
        specification: Some("600x600".into()),
        location: Some("Kitchen".into()),
        qty: dec(qty),
        unit: Unit::Item,
        unit_price: dec(price),
        cost_price: dec(price),
        tax_rate: dec("0.15"),
        section: Some("Floors".into()),
        group_id: 0,
        injected: false,
        parent_line_no: None,
    }
}

on_both!(save_lines_replaces_the_lines_of_a_draft);
async fn save_lines_replaces_the_lines_of_a_draft(backend: Backend) {
    let demo = demo(backend).await;
    let t1 = &demo.harbour.id;
    let draft = new_draft(&demo).await;
    let mut lines = vec![line(1, "2", "100"), line(4, "1", "10.005")];
    lines[0].group_id = 1;
    let mut task = line(5, "0.5", "45");
    task.line_type = LineType::Task;
    task.injected = true;
    task.parent_line_no = Some(1);
    task.group_id = 1;
    lines.push(task);
    let keys = BTreeMap::from([("room-1".to_owned(), 1)]);
    let saved = demo
        .store
        .save_lines(
            t1,
            &draft.header.id,
            lines.clone(),
            keys.clone(),
            &Conditions::default(),
            &by(),
        )
        .await
        .unwrap()
        .quote;
    assert_eq!(saved.header, draft.header);
    let stored: Vec<QuoteLine> = saved.lines.iter().map(|l| l.line.clone()).collect();
    assert_eq!(stored, lines);
    assert_eq!(saved.group_keys, keys);
    // 200 + 10.01 (10.005 rounded half away from zero) + 22.50.
    assert_eq!(saved.totals.nett, dec("232.51"));
    assert_eq!(
        demo.store.quote(t1, &draft.header.id).await.unwrap().quote,
        saved
    );
    let summary = demo
        .store
        .quotes(t1, page(1, 1))
        .await
        .unwrap()
        .items
        .remove(0);
    assert_eq!(summary, saved.summary(), "the list shows the new total");

    // Saving again replaces everything, group keys included.
    let saved = demo
        .store
        .save_lines(
            t1,
            &draft.header.id,
            vec![line(7, "1", "1")],
            BTreeMap::new(),
            &Conditions::default(),
            &by(),
        )
        .await
        .unwrap()
        .quote;
    assert_eq!(saved.lines.len(), 1);
    assert!(saved.group_keys.is_empty());
    assert_eq!(
        demo.store.quote(t1, &draft.header.id).await.unwrap().quote,
        saved
    );
    let empty = demo
        .store
        .save_lines(
            t1,
            &draft.header.id,
            vec![],
            BTreeMap::new(),
            &Conditions::default(),
            &by(),
        )
        .await
        .unwrap()
        .quote;
    assert_eq!(empty.totals.total, Decimal::ZERO);
}

on_both!(save_lines_checks_the_lines_and_changes_nothing_when_they_are_bad);
async fn save_lines_checks_the_lines_and_changes_nothing_when_they_are_bad(backend: Backend) {
    let demo = demo(backend).await;
    let t1 = &demo.harbour.id;
    let draft = new_draft(&demo).await;
    let mut orphan = line(3, "1", "1");
    orphan.parent_line_no = Some(99);
    let mut over_taxed = line(4, "1", "1");
    over_taxed.tax_rate = dec("15");
    let lines = vec![line(1, "0", "1"), line(1, "1", "-2"), orphan, over_taxed];
    let result = demo
        .store
        .save_lines(
            t1,
            &draft.header.id,
            lines,
            BTreeMap::new(),
            &Conditions::default(),
            &by(),
        )
        .await;
    assert_eq!(
        paths(result),
        [
            "lines[0].qty",
            "lines[1].lineNo",
            "lines[1].unitPrice",
            "lines[1].costPrice",
            "lines[3].taxRate",
            "lines[2].parentLineNo"
        ]
    );
    assert_eq!(
        demo.store.quote(t1, &draft.header.id).await.unwrap().quote,
        draft
    );
}

on_both!(sending_locks_the_quote);
async fn sending_locks_the_quote(backend: Backend) {
    let demo = demo(backend).await;
    let t1 = &demo.harbour.id;
    let draft = new_draft(&demo).await;
    let sent = demo
        .store
        .send_quote(t1, &draft.header.id, &by())
        .await
        .unwrap()
        .quote;
    assert_eq!(sent.header.status, QuoteStatus::Sent);
    assert_eq!(sent.lines, draft.lines);
    assert_eq!(
        locked(demo.store.send_quote(t1, &draft.header.id, &by()).await),
        (QuoteAction::Send, draft.header.reference.clone())
    );
    let save = demo
        .store
        .save_lines(
            t1,
            &draft.header.id,
            vec![line(1, "1", "1")],
            BTreeMap::new(),
            &Conditions::default(),
            &by(),
        )
        .await;
    assert_eq!(locked(save).0, QuoteAction::Change);
    assert_eq!(
        demo.store.quote(t1, &draft.header.id).await.unwrap().quote,
        sent
    );

    for status in [
        QuoteStatus::Accepted,
        QuoteStatus::Rejected,
        QuoteStatus::Expired,
        QuoteStatus::Sent,
    ] {
        let quote = a_quote(&demo, status).await;
        assert_eq!(
            locked(demo.store.send_quote(t1, &quote.header.id, &by()).await).0,
            QuoteAction::Send
        );
        let result = demo
            .store
            .save_lines(
                t1,
                &quote.header.id,
                vec![],
                BTreeMap::new(),
                &Conditions::default(),
                &by(),
            )
            .await;
        assert_eq!(locked(result).0, QuoteAction::Change);
    }
    let seeded_draft = a_quote(&demo, QuoteStatus::Draft).await;
    let sent = demo
        .store
        .send_quote(t1, &seeded_draft.header.id, &by())
        .await
        .unwrap()
        .quote;
    assert_eq!(sent.header.status, QuoteStatus::Sent);
}

on_both!(another_tenant_cannot_read_save_or_send_a_quote);
async fn another_tenant_cannot_read_save_or_send_a_quote(backend: Backend) {
    let demo = demo(backend).await;
    let (t1, t2) = (&demo.harbour.id, &demo.other.id);
    let draft = new_draft(&demo).await;
    let id = &draft.header.id;
    let quote = (Record::Quote, id.clone());
    assert_eq!(not_found(demo.store.quote(t2, id).await), quote);
    let save = demo
        .store
        .save_lines(
            t2,
            id,
            vec![line(1, "1", "1")],
            BTreeMap::new(),
            &Conditions::default(),
            &by(),
        )
        .await;
    assert_eq!(not_found(save), quote);
    assert_eq!(not_found(demo.store.send_quote(t2, id, &by()).await), quote);
    let missing = (Record::Quote, "missing".to_owned());
    assert_eq!(
        not_found(demo.store.send_quote(t1, "missing", &by()).await),
        missing
    );
    assert_eq!(
        not_found(
            demo.store
                .save_lines(
                    t1,
                    "missing",
                    vec![],
                    BTreeMap::new(),
                    &Conditions::default(),
                    &by()
                )
                .await
        ),
        missing
    );
    assert_eq!(
        demo.store.quote(t1, id).await.unwrap().quote,
        draft,
        "untouched"
    );
}
