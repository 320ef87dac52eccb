//! Adding a product to a tenant's catalog.

use toolbridge_protocol::add_lines::Unit;
use toolbridge_store::{Error, NewProduct, Unique};

use crate::common::{Backend, catalog_index, demo, page, paths, refused};

fn product(sku: &str, name: &str) -> NewProduct {
    NewProduct {
        sku: sku.to_owned(),
        name: name.to_owned(),
        unit: Unit::SquareMetre,
        price: "12.5".parse().unwrap(),
        cost: "7".parse().unwrap(),
    }
}

on_both!(an_added_product_is_listed_and_in_the_index_at_once);
async fn an_added_product_is_listed_and_in_the_index_at_once(backend: Backend) {
    let demo = demo(backend).await;
    let tenant = &demo.harbour.id;
    let (_, version_before) = catalog_index(&demo.store, tenant).await;
    let id = demo
        .store
        .add_product(tenant, &product(" NEW-01 ", "New board"))
        .await
        .unwrap();
    let (index, version_after) = catalog_index(&demo.store, tenant).await;
    assert_ne!(version_before, version_after, "the cached index is renewed");
    assert!(
        index
            .products
            .iter()
            .any(|p| p.id == id && p.sku == "NEW-01")
    );
    let listed = demo.store.products(tenant, page(1, 500)).await.unwrap();
    assert!(
        listed
            .items
            .iter()
            .any(|p| p.id == id && p.name == "New board")
    );
    // Another tenant never sees it.
    let other = demo
        .store
        .products(&demo.other.id, page(1, 500))
        .await
        .unwrap();
    assert!(other.items.iter().all(|p| p.id != id));
}

on_both!(a_taken_sku_or_a_bad_product_is_refused);
async fn a_taken_sku_or_a_bad_product_is_refused(backend: Backend) {
    let demo = demo(backend).await;
    let tenant = &demo.harbour.id;
    let taken = refused(
        demo.store
            .add_product(tenant, &product(" oak-01 ", "Again"))
            .await,
    );
    assert!(
        matches!(&taken, Error::Taken { what: Unique::ProductSku, value } if value == "oak-01"),
        "{taken:?}"
    );
    let mut bad = product("", "");
    bad.price = "-1".parse().unwrap();
    assert_eq!(
        paths(demo.store.add_product(tenant, &bad).await),
        ["sku", "name", "price"]
    );
}
