//! Customers as the bridge and the REST API show them.

use serde::{Deserialize, Serialize};

/// A customer (`customers.list`, `GET /api/v1/customers`).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BridgeCustomerDto {
    /// GUID.
    pub id: String,
    /// Company or person name.
    pub name: String,
    /// Email address.
    pub email: String,
    /// Phone number.
    pub phone: String,
}
