//! The catalog: products, task templates and cost items, as listed to tools,
//! and the index the host validates `quotes.addLines` against.

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use crate::add_lines::LineType;
use crate::error::{Error, Violations};
use crate::id_index::{self, IdIndex};
use crate::input::{index, join};
use crate::limits;
use crate::money::as_number;

mod index_json;

pub use index_json::read_index;

/// A catalog SKU (`products.list`, `GET /api/v1/products`).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BridgeProductDto {
    /// GUID; used as `linkedItemId` / REST `skuId`.
    pub id: String,
    /// Human-readable product code, stable across environments.
    pub sku: String,
    /// Product name.
    pub name: String,
    /// Retail sell price.
    pub price: f64,
    /// Unit-of-measure token, e.g. `T_ITEM`.
    pub unit: String,
}

/// A task template (`taskTemplates.list`).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BridgeTaskTemplateDto {
    /// GUID; passed as `linkedItemId` on a `task` line.
    pub id: String,
    /// Stable code.
    pub code: String,
    /// Display name.
    pub name: String,
}

/// A cost-of-business item (`costItems.list`).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BridgeCostItemDto {
    /// GUID; passed as `linkedItemId` on a `cost` line.
    pub id: String,
    /// Stable code.
    pub code: String,
    /// Display name.
    pub name: String,
    /// Cost-item type token, e.g. `T_TRAVEL`.
    #[serde(rename = "type")]
    pub item_type: String,
}

/// `GET /api/v1/catalog/index`: the active rows a quote's lines may link to.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CatalogIndex {
    /// Active products.
    pub products: Vec<IndexedProduct>,
    /// Active task templates of the tenant.
    pub task_templates: Vec<IndexedTaskTemplate>,
    /// Active cost items of the tenant.
    pub cost_items: Vec<IndexedCostItem>,
}

/// An active product in the catalog index.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IndexedProduct {
    /// GUID.
    pub id: String,
    /// Product code.
    pub sku: String,
    /// Task templates injected after a line of this product, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub task_sequence: Vec<TaskSequenceStep>,
}

/// One entry of a product's task sequence.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskSequenceStep {
    /// The task template to inject.
    pub task_template_id: String,
    /// Task quantity per unit of the product (0.5 h per m², say).
    #[serde(with = "as_number")]
    #[cfg_attr(feature = "openapi", schema(value_type = f64))]
    pub qty_per_unit: Decimal,
}

/// An active task template in the catalog index.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IndexedTaskTemplate {
    /// GUID.
    pub id: String,
    /// Stable code.
    pub code: String,
    /// Display name; the description of injected task lines.
    pub name: String,
    /// Sell price per unit of injected task lines.
    #[serde(with = "as_number")]
    #[cfg_attr(feature = "openapi", schema(value_type = f64))]
    pub unit_price: Decimal,
    /// Cost price per unit of injected task lines.
    #[serde(with = "as_number")]
    #[cfg_attr(feature = "openapi", schema(value_type = f64))]
    pub cost_price: Decimal,
}

/// An active cost item in the catalog index.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IndexedCostItem {
    /// GUID.
    pub id: String,
    /// Stable code.
    pub code: String,
    /// Display name.
    pub name: String,
    /// Cost-item type token.
    #[serde(rename = "type")]
    pub item_type: String,
}

/// Largest task quantity per product unit a task sequence may hold.
pub const MAX_QTY_PER_UNIT: Decimal = Decimal::from_parts(1000, 0, 0, false, 0);

/// A product ready for lookups.
#[derive(Debug, Clone, PartialEq)]
pub struct CatalogProduct {
    /// GUID as the catalog spells it.
    pub id: String,
    /// Product code.
    pub sku: String,
    /// Injected task templates, each with its quantity per product unit.
    pub task_sequence: Vec<(usize, Decimal)>,
}

/// The catalog index with lookups by id (GUIDs match case-insensitively).
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    products: Vec<CatalogProduct>,
    task_templates: Vec<IndexedTaskTemplate>,
    cost_items: Vec<IndexedCostItem>,
    product_by_id: IdIndex,
    template_by_id: IdIndex,
    cost_item_by_id: IdIndex,
}

/// GUIDs compare case-insensitively and without surrounding braces or space:
/// the key an id is stored and looked up by.
pub fn id_key(id: &str) -> String {
    id_index::id_key(id)
}

impl Catalog {
    /// Builds the lookups, checking the index: prices non-negative and
    /// bounded, task quantities positive and at most [`MAX_QTY_PER_UNIT`].
    /// Sequence steps that name a template missing from the index (an
    /// inactive one) are left out.
    pub fn from_index(index_dto: CatalogIndex) -> Result<Self, Error> {
        let mut errors = Violations::default();
        let mut catalog = Catalog::default();

        for (i, template) in index_dto.task_templates.into_iter().enumerate() {
            let path = index("taskTemplates", i);
            for (name, price) in [
                ("unitPrice", template.unit_price),
                ("costPrice", template.cost_price),
            ] {
                if price.is_sign_negative() || price > limits::MAX_LINE_PRICE {
                    errors.push(
                        join(&path, name),
                        format!("must be from 0 to {}", limits::MAX_LINE_PRICE),
                    );
                }
            }
            catalog
                .template_by_id
                .insert(&template.id, catalog.task_templates.len());
            catalog.task_templates.push(template);
        }
        for item in index_dto.cost_items {
            catalog
                .cost_item_by_id
                .insert(&item.id, catalog.cost_items.len());
            catalog.cost_items.push(item);
        }
        for (i, product) in index_dto.products.into_iter().enumerate() {
            let mut task_sequence = Vec::with_capacity(product.task_sequence.len());
            for (j, step) in product.task_sequence.iter().enumerate() {
                if step.qty_per_unit <= Decimal::ZERO || step.qty_per_unit > MAX_QTY_PER_UNIT {
                    errors.push(
                        join(
                            &index(&join(&index("products", i), "taskSequence"), j),
                            "qtyPerUnit",
                        ),
                        format!("must be greater than 0 and at most {MAX_QTY_PER_UNIT}"),
                    );
                }
                if let Some(template) = catalog.template_by_id.get(&step.task_template_id) {
                    task_sequence.push((template, step.qty_per_unit));
                }
            }
            catalog
                .product_by_id
                .insert(&product.id, catalog.products.len());
            catalog.products.push(CatalogProduct {
                id: product.id,
                sku: product.sku,
                task_sequence,
            });
        }
        errors.into_result(catalog)
    }

    /// The active product with this id.
    pub fn product(&self, id: &str) -> Option<&CatalogProduct> {
        self.product_by_id
            .get(id)
            .and_then(|i| self.products.get(i))
    }

    /// The position of the active product with this id, for
    /// [`Catalog::product_at`]: a merge finds a line's task sequence there
    /// without looking its id up a second time.
    pub(crate) fn product_position(&self, id: &str) -> Option<usize> {
        self.product_by_id.get(id)
    }

    /// The product at a position [`Catalog::product_position`] gave.
    pub(crate) fn product_at(&self, position: usize) -> Option<&CatalogProduct> {
        self.products.get(position)
    }

    /// The active task template with this id.
    pub fn task_template(&self, id: &str) -> Option<&IndexedTaskTemplate> {
        self.template_by_id
            .get(id)
            .and_then(|i| self.task_templates.get(i))
    }

    /// The task template at a position recorded in a product's sequence.
    pub(crate) fn task_template_at(&self, position: usize) -> Option<&IndexedTaskTemplate> {
        self.task_templates.get(position)
    }

    /// The active cost item with this id.
    pub fn cost_item(&self, id: &str) -> Option<&IndexedCostItem> {
        self.cost_item_by_id
            .get(id)
            .and_then(|i| self.cost_items.get(i))
    }

    /// The id as the catalog spells it, when `id` names an active row of the
    /// table that `line_type` selects.
    pub fn resolve(&self, line_type: LineType, id: &str) -> Option<&str> {
        match line_type {
            LineType::Product => self.product(id).map(|p| p.id.as_str()),
            LineType::Task => self.task_template(id).map(|t| t.id.as_str()),
            LineType::Cost => self.cost_item(id).map(|c| c.id.as_str()),
        }
    }

    /// Number of active products.
    pub fn product_count(&self) -> usize {
        self.products.len()
    }
}
