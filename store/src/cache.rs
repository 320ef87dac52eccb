//! In-memory copies of each tenant's catalog reads (the active product list
//! and the catalog index), keyed by the tenant's `catalog_version`.
//!
//! Triggers bump the version on any change to the catalog tables, however
//! it is made, so a copy is used only while the database still holds what
//! it was read from: a read costs one small query for the version instead
//! of hundreds of rows.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use toolbridge_protocol::catalog::{BridgeProductDto, CatalogIndex};

/// A value read at a catalog version.
struct Versioned<T> {
    version: i64,
    value: Arc<T>,
}

type Slot<T> = Mutex<HashMap<String, Versioned<T>>>;

/// The catalog copies of every tenant read so far.
#[derive(Default)]
pub(crate) struct CatalogCache {
    products: Slot<Vec<BridgeProductDto>>,
    indexes: Slot<(CatalogIndex, String)>,
}

fn get<T>(slot: &Slot<T>, tenant_id: &str, version: i64) -> Option<Arc<T>> {
    let map = slot.lock().unwrap_or_else(PoisonError::into_inner);
    map.get(tenant_id)
        .filter(|entry| entry.version == version)
        .map(|entry| Arc::clone(&entry.value))
}

fn put<T>(slot: &Slot<T>, tenant_id: &str, version: i64, value: Arc<T>) {
    let mut map = slot.lock().unwrap_or_else(PoisonError::into_inner);
    // Two readers may race to fill the slot: the newer version wins.
    let newer = map
        .get(tenant_id)
        .is_none_or(|entry| entry.version <= version);
    if newer {
        map.insert(tenant_id.to_owned(), Versioned { version, value });
    }
}

impl CatalogCache {
    /// The tenant's active products (by sku) at `version`, if held.
    pub(crate) fn products(
        &self,
        tenant_id: &str,
        version: i64,
    ) -> Option<Arc<Vec<BridgeProductDto>>> {
        get(&self.products, tenant_id, version)
    }

    /// Keeps the tenant's active products as read at `version`.
    pub(crate) fn keep_products(
        &self,
        tenant_id: &str,
        version: i64,
        value: Arc<Vec<BridgeProductDto>>,
    ) {
        put(&self.products, tenant_id, version, value);
    }

    /// The tenant's catalog index and its `ETag` at `version`, if held.
    pub(crate) fn index(
        &self,
        tenant_id: &str,
        version: i64,
    ) -> Option<Arc<(CatalogIndex, String)>> {
        get(&self.indexes, tenant_id, version)
    }

    /// Keeps the tenant's catalog index as read at `version`.
    pub(crate) fn keep_index(
        &self,
        tenant_id: &str,
        version: i64,
        value: Arc<(CatalogIndex, String)>,
    ) {
        put(&self.indexes, tenant_id, version, value);
    }
}
