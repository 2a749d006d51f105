//! The roles and bindings every new cluster has (the API server's `bootstrappolicy`), of those
//! the simulator's requests need: `cluster-admin` for `system:masters`; `system:discovery`,
//! `system:basic-user` and `system:public-info-viewer` for every authenticated user, so that a
//! ServiceAccount with no role of its own can still discover the API, review its own access
//! and read `/version` (the aggregated `admin`, `edit` and `view` roles are left out).

use serde_json::{Value, json};

use super::super::cluster::ClusterState;
use super::super::identity::{AUTHENTICATED, MASTERS, UNAUTHENTICATED};
use super::super::meta;
use super::super::resources::{Kind, RBAC_GROUP};

const DISCOVERY_URLS: &[&str] = &[
    "/api",
    "/api/*",
    "/apis",
    "/apis/*",
    "/healthz",
    "/livez",
    "/openapi",
    "/openapi/*",
    "/readyz",
    "/version",
    "/version/",
];
const PUBLIC_INFO_URLS: &[&str] = &["/healthz", "/livez", "/readyz", "/version", "/version/"];

/// Stores the bootstrap roles and bindings (once, as the cluster starts).
pub fn seed(state: &ClusterState) {
    let roles = [
        (
            "cluster-admin",
            json!([
                {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
                {"nonResourceURLs": ["*"], "verbs": ["*"]},
            ]),
            vec![MASTERS],
        ),
        (
            "system:discovery",
            json!([{"nonResourceURLs": DISCOVERY_URLS, "verbs": ["get"]}]),
            vec![AUTHENTICATED],
        ),
        (
            "system:basic-user",
            json!([
                {"apiGroups": ["authorization.k8s.io"],
                 "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
                 "verbs": ["create"]},
                {"apiGroups": ["authentication.k8s.io"],
                 "resources": ["selfsubjectreviews"], "verbs": ["create"]},
            ]),
            vec![AUTHENTICATED],
        ),
        (
            "system:public-info-viewer",
            json!([{"nonResourceURLs": PUBLIC_INFO_URLS, "verbs": ["get"]}]),
            vec![AUTHENTICATED, UNAUTHENTICATED],
        ),
    ];
    for (name, rules, groups) in roles {
        let role = json!({
            "apiVersion": format!("{RBAC_GROUP}/v1"),
            "kind": "ClusterRole",
            "metadata": bootstrap_metadata(name),
            "rules": rules,
        });
        let subjects: Vec<Value> = groups
            .iter()
            .map(|g| json!({"apiGroup": RBAC_GROUP, "kind": "Group", "name": g}))
            .collect();
        let binding = json!({
            "apiVersion": format!("{RBAC_GROUP}/v1"),
            "kind": "ClusterRoleBinding",
            "metadata": bootstrap_metadata(name),
            "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": name},
            "subjects": subjects,
        });
        let _ = state.store.create(Kind::ClusterRole, role);
        let _ = state.store.create(Kind::ClusterRoleBinding, binding);
    }
}

fn bootstrap_metadata(name: &str) -> Value {
    json!({
        "name": name,
        "uid": meta::new_uid(),
        "creationTimestamp": meta::now(),
        "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"},
        "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"},
    })
}
