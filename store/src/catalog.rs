//! Changes to a tenant's catalog: adding a product. (Reads are in `reads`; the in-memory copies
//! of catalog reads notice a change through the tenant's catalog version.)

use toolbridge_protocol::add_lines::Unit;
use toolbridge_protocol::limits::{MAX_LINE_PRICE, TEXT_MAX_CHARS};
use toolbridge_protocol::{Decimal, Error as Rule, Violation};

use crate::util::new_id;
use crate::{Error, Store};

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

impl Store {
    /// Adds an active product (no task sequence) to the tenant's catalog; its id.
    /// `INVALID_PARAMS` for an empty or overlong SKU or name, a price out of bounds, or a SKU the
    /// tenant has already (in any letter case).
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
            return Err(Rule::InvalidParams(violations).into());
        }
        let sku = product.sku.trim();
        let taken: bool = sqlx::query_scalar(
            "SELECT EXISTS (SELECT 1 FROM products WHERE tenant_id = ? AND sku_lower = ?)",
        )
        .bind(tenant_id)
        .bind(sku.to_lowercase())
        .fetch_one(&self.pool)
        .await?;
        if taken {
            return Err(Rule::InvalidParams(vec![Violation::new(
                "sku",
                format!("{sku} is already a product of this tenant"),
            )])
            .into());
        }
        let id = new_id();
        sqlx::query(
            "INSERT INTO products (id, tenant_id, sku, sku_lower, name, unit, price, cost_price, \
             active) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1)",
        )
        .bind(&id)
        .bind(tenant_id)
        .bind(sku)
        .bind(sku.to_lowercase())
        .bind(product.name.trim())
        .bind(product.unit.token())
        .bind(product.price.to_string())
        .bind(product.cost.to_string())
        .execute(&self.pool)
        .await?;
        Ok(id)
    }
}
