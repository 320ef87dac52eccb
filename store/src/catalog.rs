//! Changes to a tenant's catalog: adding a product. (Reads are in `reads`; the in-memory copies
//! of catalog reads notice a change through the tenant's catalog version.)

use toolbridge_protocol::add_lines::Unit;
use toolbridge_protocol::create_quote::sku_key;
use toolbridge_protocol::limits::{MAX_LINE_PRICE, TEXT_MAX_CHARS};
use toolbridge_protocol::{Decimal, Violation};

use crate::db::{Tx, insert_rows, sql};
use crate::util::new_id;
use crate::{Error, Store, Unique};

/// A product to add to a tenant's catalog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewProduct {
    /// The product code, unique in the tenant without regard to case.
    pub sku: String,
    /// Its name.
    pub name: String,
    /// Its unit of measure.
    pub unit: Unit,
    /// SELL per unit.
    pub price: Decimal,
    /// BUY per unit.
    pub cost: Decimal,
}

/// Rows to one `INSERT` of products (nine parameters to a row), well within SQLite's limit of
/// 32 766 to a statement (and PostgreSQL's of 65 535).
pub(crate) const PRODUCTS_PER_INSERT: usize = 500;

/// Inserts products into the tenant's catalog, each with its id and whether it is active.
///
/// Many rows to a statement: every statement is a round trip to the connection's thread (or the
/// server), and a row at a time made a demo catalog of 100 000 products the slowest part of
/// starting a server.
pub(crate) async fn insert_products(
    tx: &mut Tx,
    tenant_id: &str,
    products: &[(String, &NewProduct, bool)],
) -> Result<(), sqlx::Error> {
    for chunk in products.chunks(PRODUCTS_PER_INSERT) {
        let mut insert = sql(insert_rows(
            "INSERT INTO products (id, tenant_id, sku, sku_lower, name, unit, price, cost_price, \
             active)",
            9,
            chunk.len(),
        ))
        .once();
        for (id, product, active) in chunk {
            insert.push_bind(id.as_str());
            insert.push_bind(tenant_id);
            insert.push_bind(product.sku.as_str());
            insert.push_bind(sku_key(&product.sku));
            insert.push_bind(product.name.as_str());
            insert.push_bind(product.unit.token());
            insert.push_bind(product.price.to_string());
            insert.push_bind(product.cost.to_string());
            insert.push_bind(*active);
        }
        insert.execute(&mut *tx).await?;
    }
    Ok(())
}

impl Store {
    /// Adds an active product (no task sequence) to the tenant's catalog; its id.
    ///
    /// # Errors
    ///
    /// [`Error::Invalid`] for an empty or overlong SKU or name, or a price out of bounds;
    /// [`Error::Taken`] for a SKU the tenant has already (in any letter case).
    pub async fn add_product(
        &self,
        tenant_id: &str,
        product: &NewProduct,
    ) -> Result<String, Error> {
        let mut violations = Vec::new();
        for (path, text) in [("sku", &product.sku), ("name", &product.name)] {
            let length = text.trim().chars().count();
            if length == 0 || length > TEXT_MAX_CHARS {
                violations.push(Violation::new(
                    path,
                    format!("must be 1 to {TEXT_MAX_CHARS} characters"),
                ));
            }
        }
        for (path, amount) in [("price", product.price), ("cost", product.cost)] {
            if amount.is_sign_negative() || amount > MAX_LINE_PRICE {
                violations.push(Violation::new(
                    path,
                    format!("must be 0 to {MAX_LINE_PRICE}"),
                ));
            }
        }
        if !violations.is_empty() {
            return Err(Error::Invalid(violations));
        }
        let product = NewProduct {
            sku: product.sku.trim().to_owned(),
            name: product.name.trim().to_owned(),
            ..product.clone()
        };
        let mut tx = self.begin_write().await?;
        let exists: bool =
            sql("SELECT EXISTS (SELECT 1 FROM products WHERE tenant_id = $1 AND sku_lower = $2)")
                .bind(tenant_id)
                .bind(sku_key(&product.sku))
                .fetch_scalar(&mut *tx)
                .await?;
        if exists {
            return Err(Error::Taken {
                what: Unique::ProductSku,
                value: product.sku,
            });
        }
        let id = new_id();
        insert_products(&mut tx, tenant_id, &[(id.clone(), &product, true)])
            .await
            .map_err(|error| Error::on_write(error, Unique::ProductSku, &product.sku))?;
        tx.commit().await?;
        Ok(id)
    }
}
