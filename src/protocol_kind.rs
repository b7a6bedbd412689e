//! The names of what ingestbench speaks: the repository APIs ([`ProtocolKind`]) and how
//! requests authenticate ([`AuthMode`]), with their defaults. Plain enums shared by the CLI,
//! the plans, access-method files (`transport`), records on disk and the protocol clients
//! (`protocol`), so they sit below all of them: no behaviour beyond names and defaults, and
//! no imports of its own.

/// The repository APIs ingestbench speaks.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum ProtocolKind {
    /// Alfresco public REST API v1.
    Alfresco,
    /// Liferay headless-delivery v1.0.
    Liferay,
    /// CMIS 1.1 browser binding (--url is the service URL, e.g. http://host/cmis/browser).
    Cmis,
}

impl ProtocolKind {
    /// Every API, in the order the CLI lists them.
    pub const ALL: [ProtocolKind; 3] = [
        ProtocolKind::Alfresco,
        ProtocolKind::Liferay,
        ProtocolKind::Cmis,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ProtocolKind::Alfresco => "alfresco",
            ProtocolKind::Liferay => "liferay",
            ProtocolKind::Cmis => "cmis",
        }
    }
    /// The metadata profile used when none is given.
    pub fn default_profile(self) -> &'static str {
        match self {
            ProtocolKind::Alfresco => "acme",
            ProtocolKind::Liferay => "liferay",
            ProtocolKind::Cmis => "cmis",
        }
    }
    /// Where documents go when no `--parent` is given.
    pub fn default_parent(self) -> &'static str {
        match self {
            ProtocolKind::Alfresco => "-my-",
            ProtocolKind::Liferay => "guest",
            ProtocolKind::Cmis => "/",
        }
    }
    pub fn default_auth(self) -> AuthMode {
        match self {
            ProtocolKind::Alfresco => AuthMode::Ticket,
            ProtocolKind::Liferay | ProtocolKind::Cmis => AuthMode::Basic,
        }
    }
    pub fn auth_modes(self) -> &'static [AuthMode] {
        match self {
            ProtocolKind::Alfresco => &[AuthMode::Ticket, AuthMode::Basic],
            ProtocolKind::Liferay => &[AuthMode::Basic, AuthMode::Oauth2],
            ProtocolKind::Cmis => &[AuthMode::Basic],
        }
    }
}

/// How requests authenticate.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum AuthMode {
    /// Alfresco: log in once (POST /tickets), send the ticket, log in again once on 401.
    Ticket,
    /// HTTP Basic user:password on every request.
    Basic,
    /// Liferay: OAuth2 client credentials (--user is the client id, the password its
    /// secret); the token is renewed before it expires and once on 403.
    Oauth2,
}

impl AuthMode {
    pub fn name(self) -> &'static str {
        match self {
            AuthMode::Ticket => "ticket",
            AuthMode::Basic => "basic",
            AuthMode::Oauth2 => "oauth2",
        }
    }
}

impl std::fmt::Display for ProtocolKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::fmt::Display for AuthMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
