//! The lists (paged) and the catalog index.

use std::collections::HashMap;
use std::sync::Arc;

use toolbridge_protocol::catalog::{
    BridgeCostItemDto, BridgeProductDto, BridgeTaskTemplateDto, CatalogIndex, IndexedCostItem,
    IndexedProduct, IndexedTaskTemplate, TaskSequenceStep, id_key,
};
use toolbridge_protocol::customer::BridgeCustomerDto;
use toolbridge_protocol::job::BridgeJobDto;
use toolbridge_protocol::money::decimal_to_f64;
use toolbridge_protocol::paging::{BridgePagedResult, ListRequest, PageRequest};
use toolbridge_protocol::quote::{BridgeQuoteDto, QuoteStatus};

use crate::db::{Decoded, Exec, sql};
use crate::quotes::load_quote;
use crate::util::{decimal, hex, limit_offset, past_the_end, sha256, to_u64};
use crate::{Error, Store, Versioned};

/// The codes of a `codes` request as a JSON array (see [`crate::db::Backend::text_set`]).
fn codes_json(codes: &[String]) -> String {
    serde_json::Value::from(codes.to_vec()).to_string()
}

/// The answer to a `codes` request: every match on one page.
fn all_on_one_page<T>(items: Vec<T>) -> Result<BridgePagedResult<T>, Error> {
    let count = items.len();
    Ok(BridgePagedResult {
        total_count: u64::try_from(count)
            .map_err(|error| Error::corrupt_because("row count", error))?,
        page: 1,
        page_size: u32::try_from(count)
            .map_err(|error| Error::corrupt_because("row count", error))?,
        items,
    })
}

/// How to list a tenant's rows: a count, and one page whose last two
/// parameters are `LIMIT $2 OFFSET $3`. Both take the tenant id first
/// (`$1`); both are fixed text, never built from input.
struct Listing {
    count: &'static str,
    page: &'static str,
}

impl Store {
    /// One page of a listing: the count and the page in one read
    /// transaction, so both see the same rows; a page past the end is empty
    /// with the right total.
    async fn page_of<R, T>(
        &self,
        tenant_id: &str,
        page: PageRequest,
        listing: &Listing,
        to_dto: impl Fn(R) -> Result<T, Error>,
    ) -> Result<BridgePagedResult<T>, Error>
    where
        R: Decoded,
    {
        let mut tx = self.pool.begin_read().await?;
        let total: i64 = sql(listing.count)
            .bind(tenant_id)
            .fetch_scalar(&mut tx)
            .await?;
        let total = to_u64(total)?;
        let mut items = Vec::new();
        if !past_the_end(page, total) {
            let (limit, offset) = limit_offset(page);
            let rows: Vec<R> = sql(listing.page)
                .bind(tenant_id)
                .bind(limit)
                .bind(offset)
                .fetch_all(&mut tx)
                .await?;
            items = rows.into_iter().map(to_dto).collect::<Result<_, _>>()?;
        }
        tx.commit().await?;
        Ok(page.envelope(items, total))
    }

    /// Every row whose code is in `codes`, on one page, by code; `select`
    /// takes the tenant id (`$1`), and the codes follow as `$2`.
    async fn by_codes<R, T>(
        &self,
        tenant_id: &str,
        codes: &[String],
        select: &'static str,
        to_dto: impl Fn(R) -> Result<T, Error>,
    ) -> Result<BridgePagedResult<T>, Error>
    where
        R: Decoded,
    {
        let text = format!(
            "{select} AND code IN ({}) ORDER BY code",
            self.pool.backend().text_set("$2")
        );
        let rows: Vec<R> = sql(text)
            .bind(tenant_id)
            .bind(codes_json(codes))
            .fetch_all(&self.pool)
            .await?;
        all_on_one_page(rows.into_iter().map(to_dto).collect::<Result<_, _>>()?)
    }

    /// The tenant's customers by name.
    pub async fn customers(
        &self,
        tenant_id: &str,
        page: PageRequest,
    ) -> Result<BridgePagedResult<BridgeCustomerDto>, Error> {
        let listing = Listing {
            count: "SELECT COUNT(*) FROM customers WHERE tenant_id = $1",
            page: "SELECT id, name, email, phone FROM customers WHERE tenant_id = $1 \
                   ORDER BY name, id LIMIT $2 OFFSET $3",
        };
        self.page_of(tenant_id, page, &listing, |(id, name, email, phone)| {
            Ok(BridgeCustomerDto {
                id,
                name,
                email,
                phone,
            })
        })
        .await
    }

    /// The tenant's active products by sku.
    ///
    /// Served from an in-memory copy of the tenant's active products while
    /// the catalog is unchanged (one small query checks that).
    pub async fn products(
        &self,
        tenant_id: &str,
        page: PageRequest,
    ) -> Result<BridgePagedResult<BridgeProductDto>, Error> {
        let Some(version) = catalog_version(&self.pool, tenant_id).await? else {
            return Ok(page.envelope(Vec::new(), 0));
        };
        let all = match self.catalogs.products(tenant_id, version) {
            Some(all) => all,
            None => self.load_products(tenant_id).await?,
        };
        let total =
            u64::try_from(all.len()).map_err(|error| Error::corrupt_because("row count", error))?;
        let start = usize::try_from(page.offset()).unwrap_or(usize::MAX);
        let size = usize::try_from(page.page_size()).unwrap_or(usize::MAX);
        let items = all
            .get(start..start.saturating_add(size).min(all.len()))
            .map(<[BridgeProductDto]>::to_vec)
            .unwrap_or_default();
        Ok(page.envelope(items, total))
    }

    /// Reads the tenant's active products and keeps them with the catalog
    /// version they were read at.
    async fn load_products(&self, tenant_id: &str) -> Result<Arc<Vec<BridgeProductDto>>, Error> {
        let mut tx = self.pool.begin_read().await?;
        let version = catalog_version(&mut tx, tenant_id)
            .await?
            .unwrap_or_default();
        let rows: Vec<(String, String, String, String, String)> =
            sql("SELECT id, sku, name, price, unit FROM products \
             WHERE tenant_id = $1 AND active = 1 ORDER BY sku, id")
            .bind(tenant_id)
            .fetch_all(&mut tx)
            .await?;
        tx.commit().await?;
        let products = rows
            .into_iter()
            .map(|(id, sku, name, price, unit)| {
                Ok(BridgeProductDto {
                    id,
                    sku,
                    name,
                    price: decimal_to_f64(decimal(&price)?),
                    unit,
                })
            })
            .collect::<Result<Vec<_>, Error>>()?;
        let products = Arc::new(products);
        self.catalogs
            .keep_products(tenant_id, version, Arc::clone(&products));
        Ok(products)
    }

    /// The tenant's active task templates by code; with `codes`, every
    /// active template whose code is listed, paging ignored.
    pub async fn task_templates(
        &self,
        tenant_id: &str,
        request: &ListRequest,
    ) -> Result<BridgePagedResult<BridgeTaskTemplateDto>, Error> {
        let to_dto = |(id, code, name)| Ok(BridgeTaskTemplateDto { id, code, name });
        if let Some(codes) = &request.codes {
            let select = "SELECT id, code, name FROM task_templates \
                          WHERE tenant_id = $1 AND active = 1";
            return self.by_codes(tenant_id, codes, select, to_dto).await;
        }
        let listing = Listing {
            count: "SELECT COUNT(*) FROM task_templates WHERE tenant_id = $1 AND active = 1",
            page: "SELECT id, code, name FROM task_templates WHERE tenant_id = $1 AND active = 1 \
                   ORDER BY code LIMIT $2 OFFSET $3",
        };
        self.page_of(tenant_id, request.paging, &listing, to_dto)
            .await
    }

    /// The tenant's active cost items by code; `codes` as for
    /// [`Store::task_templates`].
    pub async fn cost_items(
        &self,
        tenant_id: &str,
        request: &ListRequest,
    ) -> Result<BridgePagedResult<BridgeCostItemDto>, Error> {
        let to_dto = |(id, code, name, item_type)| {
            Ok(BridgeCostItemDto {
                id,
                code,
                name,
                item_type,
            })
        };
        if let Some(codes) = &request.codes {
            let select = "SELECT id, code, name, item_type FROM cost_items \
                          WHERE tenant_id = $1 AND active = 1";
            return self.by_codes(tenant_id, codes, select, to_dto).await;
        }
        let listing = Listing {
            count: "SELECT COUNT(*) FROM cost_items WHERE tenant_id = $1 AND active = 1",
            page: "SELECT id, code, name, item_type FROM cost_items \
                   WHERE tenant_id = $1 AND active = 1 ORDER BY code LIMIT $2 OFFSET $3",
        };
        self.page_of(tenant_id, request.paging, &listing, to_dto)
            .await
    }

    /// The tenant's active (not closed) jobs by reference.
    pub async fn jobs(
        &self,
        tenant_id: &str,
        page: PageRequest,
    ) -> Result<BridgePagedResult<BridgeJobDto>, Error> {
        let listing = Listing {
            count: "SELECT COUNT(*) FROM jobs WHERE tenant_id = $1 AND closed = 0",
            page: "SELECT j.id, j.reference, c.name, j.customer_id, j.status FROM jobs j \
                   JOIN customers c ON c.id = j.customer_id \
                   WHERE j.tenant_id = $1 AND j.closed = 0 \
                   ORDER BY j.reference, j.id LIMIT $2 OFFSET $3",
        };
        self.page_of(
            tenant_id,
            page,
            &listing,
            |(id, reference, customer_name, customer_id_guid, status)| {
                Ok(BridgeJobDto {
                    id,
                    reference,
                    customer_name,
                    customer_id_guid,
                    status,
                })
            },
        )
        .await
    }

    /// The tenant's quotes, newest first.
    pub async fn quotes(
        &self,
        tenant_id: &str,
        page: PageRequest,
    ) -> Result<BridgePagedResult<BridgeQuoteDto>, Error> {
        let listing = Listing {
            count: "SELECT COUNT(*) FROM quotes WHERE tenant_id = $1",
            page: "SELECT q.id, q.reference, c.name, q.total, q.status, q.date FROM quotes q \
                   JOIN customers c ON c.id = q.customer_id \
                   WHERE q.tenant_id = $1 ORDER BY q.date DESC, q.rowid DESC LIMIT $2 OFFSET $3",
        };
        self.page_of(
            tenant_id,
            page,
            &listing,
            |(id, reference, customer_name, total, status, date): (_, _, _, String, String, _)| {
                Ok(BridgeQuoteDto {
                    id,
                    reference,
                    customer_name,
                    total: decimal_to_f64(decimal(&total)?),
                    status: QuoteStatus::from_name(&status)
                        .ok_or_else(|| Error::corrupt(format_args!("status {status:?}")))?,
                    date,
                })
            },
        )
        .await
    }

    /// One quote in full, with its version; `NOT_FOUND` when the tenant has
    /// no such quote.
    pub async fn quote(&self, tenant_id: &str, quote_id: &str) -> Result<Versioned, Error> {
        let mut tx = self.pool.begin_read().await?;
        let quote = load_quote(&mut tx, tenant_id, &id_key(quote_id)).await?;
        tx.commit().await?;
        Ok(quote)
    }

    /// How many quotes the tenant has.
    pub async fn quote_count(&self, tenant_id: &str) -> Result<u64, Error> {
        let total: i64 = sql("SELECT COUNT(*) FROM quotes WHERE tenant_id = $1")
            .bind(tenant_id)
            .fetch_scalar(&self.pool)
            .await?;
        to_u64(total)
    }

    /// The active products (with their task sequences, steps naming inactive
    /// templates left out), task templates and cost items of the tenant; and
    /// the opaque part of a strong `ETag` (32 hex digits, no quotes: the
    /// header is `"<value>"`): a hash of the index, so it changes whenever
    /// the index does.
    ///
    /// Served from an in-memory copy while the catalog is unchanged, shared rather than copied:
    /// a copy of 100 000 products takes longer than the rest of a request that only revalidates
    /// the index.
    pub async fn catalog_index(
        &self,
        tenant_id: &str,
    ) -> Result<Arc<(CatalogIndex, String)>, Error> {
        let version = catalog_version(&self.pool, tenant_id).await?;
        let cached = version.and_then(|version| self.catalogs.index(tenant_id, version));
        match cached {
            Some(entry) => Ok(entry),
            None => self.load_catalog_index(tenant_id).await,
        }
    }

    /// Reads the tenant's catalog index and keeps it with the catalog
    /// version it was read at.
    async fn load_catalog_index(
        &self,
        tenant_id: &str,
    ) -> Result<Arc<(CatalogIndex, String)>, Error> {
        let mut tx = self.pool.begin_read().await?;
        let version = catalog_version(&mut tx, tenant_id)
            .await?
            .unwrap_or_default();
        let templates: Vec<(String, String, String, String, String)> = sql(
            "SELECT id, code, name, unit_price, cost_price FROM task_templates \
             WHERE tenant_id = $1 AND active = 1 ORDER BY code, id",
        )
        .bind(tenant_id)
        .fetch_all(&mut tx)
        .await?;
        let cost_items: Vec<(String, String, String, String)> =
            sql("SELECT id, code, name, item_type FROM cost_items \
             WHERE tenant_id = $1 AND active = 1 ORDER BY code, id")
            .bind(tenant_id)
            .fetch_all(&mut tx)
            .await?;
        let products: Vec<(String, String)> = sql(
            "SELECT id, sku FROM products WHERE tenant_id = $1 AND active = 1 ORDER BY sku, id",
        )
        .bind(tenant_id)
        .fetch_all(&mut tx)
        .await?;
        let steps: Vec<(String, String, String)> = sql(
            "SELECT pt.product_id, pt.task_template_id, pt.qty_per_unit FROM product_tasks pt \
             JOIN products p ON p.id = pt.product_id \
             JOIN task_templates t ON t.id = pt.task_template_id \
             WHERE p.tenant_id = $1 AND p.active = 1 AND t.active = 1 \
             ORDER BY pt.product_id, pt.position",
        )
        .bind(tenant_id)
        .fetch_all(&mut tx)
        .await?;
        tx.commit().await?;

        let mut sequences: HashMap<String, Vec<TaskSequenceStep>> = HashMap::new();
        for (product_id, task_template_id, qty_per_unit) in steps {
            sequences
                .entry(product_id)
                .or_default()
                .push(TaskSequenceStep {
                    task_template_id,
                    qty_per_unit: decimal(&qty_per_unit)?,
                });
        }
        let index = CatalogIndex {
            products: products
                .into_iter()
                .map(|(id, sku)| IndexedProduct {
                    task_sequence: sequences.remove(&id).unwrap_or_default(),
                    id,
                    sku,
                })
                .collect(),
            task_templates: templates
                .into_iter()
                .map(|(id, code, name, unit_price, cost_price)| {
                    Ok(IndexedTaskTemplate {
                        id,
                        code,
                        name,
                        unit_price: decimal(&unit_price)?,
                        cost_price: decimal(&cost_price)?,
                    })
                })
                .collect::<Result<_, Error>>()?,
            cost_items: cost_items
                .into_iter()
                .map(|(id, code, name, item_type)| IndexedCostItem {
                    id,
                    code,
                    name,
                    item_type,
                })
                .collect(),
        };
        let bytes = serde_json::to_vec(&index).map_err(Error::encoding("the catalog index"))?;
        let digest = hex(sha256(&bytes));
        let etag = digest.get(..32).unwrap_or(&digest).to_owned();
        let entry = Arc::new((index, etag));
        self.catalogs
            .keep_index(tenant_id, version, Arc::clone(&entry));
        Ok(entry)
    }
}

/// The tenant's catalog version; `None` for an unknown tenant.
async fn catalog_version<'c>(on: impl Exec<'c>, tenant_id: &str) -> Result<Option<i64>, Error> {
    let version: Option<i64> = sql("SELECT catalog_version FROM tenants WHERE id = $1")
        .bind(tenant_id)
        .fetch_optional_scalar(on)
        .await?;
    Ok(version)
}
