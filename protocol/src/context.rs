//! Who is signed in: `context.get` and the roles of SPEC.md.

use serde::{Deserialize, Serialize};

use crate::error::Error;

/// `context.get()`: the signed-in user and their tenant.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BridgeContextDto {
    /// Display name of the user.
    pub user_name: String,
    /// The user's sign-in email.
    pub user_email: String,
    /// The user's role token.
    pub user_role: Role,
    /// Display name of the tenant (the organisation).
    pub tenant_name: String,
    /// Identifier of the tenant.
    pub tenant_id: String,
    /// The tenant's culture code, e.g. `en-NZ`.
    pub culture_code: String,
}

/// A user's role. The wire token is the snake-case name (`super_user`).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Everything, including system configuration and integrations.
    SuperUser,
    /// Administration, user management and all operational modules.
    Admin,
    /// Jobs, sales, invoicing, purchasing and customers.
    Office,
    /// Assigned jobs and their tasks.
    Field,
}

impl Role {
    /// Every role, most privileged first.
    pub const ALL: [Role; 4] = [Role::SuperUser, Role::Admin, Role::Office, Role::Field];

    /// The wire token.
    pub fn token(self) -> &'static str {
        match self {
            Role::SuperUser => "super_user",
            Role::Admin => "admin",
            Role::Office => "office",
            Role::Field => "field",
        }
    }

    /// Parses a wire token.
    pub fn from_token(token: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|role| role.token() == token)
    }

    /// The name people read: "Super User".
    pub fn label(self) -> &'static str {
        match self {
            Role::SuperUser => "Super User",
            Role::Admin => "Admin",
            Role::Office => "Office",
            Role::Field => "Field",
        }
    }

    /// Field users read quotes but do not create or change them.
    pub fn can_write_quotes(self) -> bool {
        !matches!(self, Role::Field)
    }

    /// `NOT_ALLOWED` for a role that may not create or change quotes, with
    /// the message the backend answers.
    pub fn check_quote_write(self) -> Result<(), Error> {
        if self.can_write_quotes() {
            Ok(())
        } else {
            Err(Error::NotAllowed(format!(
                "{} users can read quotes but not create or change them",
                self.label()
            )))
        }
    }

    /// Field users see no cost prices, costs or margins.
    pub fn can_see_cost(self) -> bool {
        !matches!(self, Role::Field)
    }

    /// API tokens are managed by Admins and Super Users.
    pub fn can_manage_api_keys(self) -> bool {
        matches!(self, Role::SuperUser | Role::Admin)
    }
}
