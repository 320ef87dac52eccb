//! Jobs as the bridge and the REST API show them.

use serde::{Deserialize, Serialize};

/// An active job (`jobs.list`, `GET /api/v1/jobs`).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BridgeJobDto {
    /// GUID.
    pub id: String,
    /// Human-readable job reference.
    #[serde(rename = "ref")]
    pub reference: String,
    /// Name of the job's customer.
    pub customer_name: String,
    /// GUID of the job's customer.
    pub customer_id_guid: String,
    /// Current workflow stage, e.g. `Scheduling`.
    pub status: String,
}
