//! Who a request comes from, as the API server's authenticators name the caller (`user.Info`):
//! the administrator that the simulator's own token stands for, a ServiceAccount by one of its
//! tokens, or nobody.

use std::collections::BTreeMap;

use serde_json::{Value, json};

/// The group whose members every authorizer lets through (`user.SystemPrivilegedGroup`).
pub const MASTERS: &str = "system:masters";
pub const AUTHENTICATED: &str = "system:authenticated";
pub const UNAUTHENTICATED: &str = "system:unauthenticated";
const SERVICE_ACCOUNTS: &str = "system:serviceaccounts";
const SERVICE_ACCOUNT_PREFIX: &str = "system:serviceaccount:";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserInfo {
    pub name: String,
    pub uid: String,
    pub groups: Vec<String>,
    pub extra: BTreeMap<String, Vec<String>>,
}

impl UserInfo {
    /// Whoever holds the simulator's token (Gantry at the desk, kubectl through the written
    /// kubeconfig): every right, as a cluster administrator has.
    pub fn admin() -> Self {
        Self {
            name: "system:admin".into(),
            uid: String::new(),
            groups: vec![MASTERS.into(), AUTHENTICATED.into()],
            extra: BTreeMap::new(),
        }
    }

    /// A request without credentials, on the paths anyone may read.
    pub fn anonymous() -> Self {
        Self {
            name: "system:anonymous".into(),
            uid: String::new(),
            groups: vec![UNAUTHENTICATED.into()],
            extra: BTreeMap::new(),
        }
    }

    /// A ServiceAccount's user (`serviceaccount.UserInfo`): its name, uid and groups.
    pub fn service_account(namespace: &str, name: &str, uid: &str) -> Self {
        Self {
            name: service_account_username(namespace, name),
            uid: uid.into(),
            groups: vec![
                SERVICE_ACCOUNTS.into(),
                format!("{SERVICE_ACCOUNTS}:{namespace}"),
                AUTHENTICATED.into(),
            ],
            extra: BTreeMap::new(),
        }
    }

    pub fn is_privileged(&self) -> bool {
        self.groups.iter().any(|g| g == MASTERS)
    }

    /// `authentication.k8s.io/v1` UserInfo, as reviews answer it.
    pub fn to_json(&self) -> Value {
        let mut info = json!({"username": self.name, "groups": self.groups});
        if !self.uid.is_empty() {
            info["uid"] = json!(self.uid);
        }
        if !self.extra.is_empty() {
            info["extra"] = json!(self.extra);
        }
        info
    }
}

/// `system:serviceaccount:NS:NAME`.
pub fn service_account_username(namespace: &str, name: &str) -> String {
    format!("{SERVICE_ACCOUNT_PREFIX}{namespace}:{name}")
}
