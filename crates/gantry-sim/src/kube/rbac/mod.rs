//! Role-based access control as kube-apiserver's RBAC authorizer keeps it: Roles,
//! ClusterRoles and their bindings validated as the registry validates them (`validation.go`
//! of `pkg/apis/rbac`), the authorizer that reads them (`authorizer`, `rules`), and the roles a
//! new cluster starts with (`bootstrap`).

mod authorizer;
pub mod bootstrap;
mod rules;

use serde_json::Value;

pub use authorizer::{Decision, authorize, rules_for};
pub use rules::{RequestAttributes, rule_allows};

use super::errors::ApiError;
use super::meta;
use super::resources::{Kind, RBAC_GROUP, ResourceType};

type Causes = Vec<(String, String)>;

/// Validates a new Role, ClusterRole, RoleBinding or ClusterRoleBinding.
pub fn admit(resource: &ResourceType, obj: &Value) -> Result<(), ApiError> {
    let causes = match resource.kind {
        Kind::Role => rules_causes(obj, true),
        Kind::ClusterRole => rules_causes(obj, false),
        Kind::RoleBinding => binding_causes(obj, true),
        Kind::ClusterRoleBinding => binding_causes(obj, false),
        _ => Causes::new(),
    };
    if causes.is_empty() {
        Ok(())
    } else {
        Err(ApiError::invalid(resource, meta::name(obj), &causes))
    }
}

/// A binding's role cannot change (`ValidateRoleBindingUpdate`): delete and create it again.
pub fn admit_update(kind: Kind, current: &Value, next: &Value) -> Result<(), String> {
    if matches!(kind, Kind::RoleBinding | Kind::ClusterRoleBinding)
        && current["roleRef"] != next["roleRef"]
    {
        return Err(format!(
            "roleRef: Invalid value: {}: cannot change roleRef",
            next["roleRef"]
        ));
    }
    Ok(())
}

fn non_empty(v: &Value) -> bool {
    v.as_array().is_some_and(|a| !a.is_empty())
}

/// `ValidatePolicyRule` for each rule.
fn rules_causes(obj: &Value, namespaced: bool) -> Causes {
    let mut causes = Causes::new();
    for (i, rule) in obj["rules"].as_array().into_iter().flatten().enumerate() {
        let at = |field: &str| format!("rules[{i}].{field}");
        if !non_empty(&rule["verbs"]) {
            causes.push((
                at("verbs"),
                "Required value: verbs must contain at least one value".into(),
            ));
        }
        if non_empty(&rule["nonResourceURLs"]) {
            let urls = &rule["nonResourceURLs"];
            if namespaced {
                causes.push((
                    at("nonResourceURLs"),
                    format!(
                        "Invalid value: {urls}: namespaced rules cannot apply to non-resource URLs"
                    ),
                ));
            }
            if ["apiGroups", "resources", "resourceNames"]
                .iter()
                .any(|k| non_empty(&rule[*k]))
            {
                causes.push((
                    at("nonResourceURLs"),
                    format!("Invalid value: {urls}: rules cannot apply to both regular resources and non-resource URLs"),
                ));
            }
            continue;
        }
        if !non_empty(&rule["apiGroups"]) {
            causes.push((
                at("apiGroups"),
                "Required value: resource rules must supply at least one api group".into(),
            ));
        }
        if !non_empty(&rule["resources"]) {
            causes.push((
                at("resources"),
                "Required value: resource rules must supply at least one resource".into(),
            ));
        }
    }
    causes
}

/// `ValidateRoleBinding` and `ValidateClusterRoleBinding`.
fn binding_causes(obj: &Value, namespaced: bool) -> Causes {
    let mut causes = Causes::new();
    let role_ref = &obj["roleRef"];
    let group = role_ref["apiGroup"].as_str().unwrap_or_default();
    if group != RBAC_GROUP {
        causes.push((
            "roleRef.apiGroup".into(),
            format!("Unsupported value: \"{group}\": supported values: \"{RBAC_GROUP}\""),
        ));
    }
    let kind = role_ref["kind"].as_str().unwrap_or_default();
    let kinds: &[&str] = if namespaced {
        &["Role", "ClusterRole"]
    } else {
        &["ClusterRole"]
    };
    if !kinds.contains(&kind) {
        let supported: Vec<String> = kinds.iter().map(|k| format!("\"{k}\"")).collect();
        causes.push((
            "roleRef.kind".into(),
            format!(
                "Unsupported value: \"{kind}\": supported values: {}",
                supported.join(", ")
            ),
        ));
    }
    if role_ref["name"].as_str().is_none_or(str::is_empty) {
        causes.push(("roleRef.name".into(), "Required value".into()));
    }
    for (i, s) in obj["subjects"].as_array().into_iter().flatten().enumerate() {
        let at = |field: &str| format!("subjects[{i}].{field}");
        if s["name"].as_str().is_none_or(str::is_empty) {
            causes.push((at("name"), "Required value".into()));
        }
        match s["kind"].as_str().unwrap_or_default() {
            "ServiceAccount" => {
                let group = s["apiGroup"].as_str().unwrap_or_default();
                if !group.is_empty() {
                    causes.push((
                        at("apiGroup"),
                        format!("Unsupported value: \"{group}\": supported values: \"\""),
                    ));
                }
                if !namespaced && s["namespace"].as_str().is_none_or(str::is_empty) {
                    causes.push((at("namespace"), "Required value".into()));
                }
            }
            "User" | "Group" => {
                let group = s["apiGroup"].as_str().unwrap_or_default();
                if group != RBAC_GROUP {
                    causes.push((
                        at("apiGroup"),
                        format!(
                            "Unsupported value: \"{group}\": supported values: \"{RBAC_GROUP}\""
                        ),
                    ));
                }
            }
            other => causes.push((
                at("kind"),
                format!(
                    "Unsupported value: \"{other}\": supported values: \"ServiceAccount\", \"User\", \"Group\""
                ),
            )),
        }
    }
    causes
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_role_without_verbs_or_with_urls_is_refused() {
        let role = json!({"metadata": {"name": "r", "namespace": "ml"},
            "rules": [{"apiGroups": [""], "resources": ["pods"]},
                      {"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]});
        let err = admit(Kind::Role.resource(), &role).unwrap_err();
        assert_eq!(err.code, 422);
        assert!(err.message.starts_with("Role.rbac.authorization.k8s.io \"r\" is invalid: [rules[0].verbs: Required value: verbs must contain at least one value, rules[1].nonResourceURLs: Invalid value: [\"/metrics\"]: namespaced rules cannot apply to non-resource URLs]"), "{}", err.message);
        let cluster_role = json!({"metadata": {"name": "metrics"},
            "rules": [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]});
        admit(Kind::ClusterRole.resource(), &cluster_role).unwrap();
    }

    #[test]
    fn a_cluster_role_binding_names_a_cluster_role_and_its_accounts_namespaces() {
        let crb = json!({"metadata": {"name": "b"},
            "roleRef": {"apiGroup": RBAC_GROUP, "kind": "Role", "name": "r"},
            "subjects": [{"kind": "ServiceAccount", "name": "gantry"}]});
        let err = admit(Kind::ClusterRoleBinding.resource(), &crb).unwrap_err();
        assert!(
            err.message.contains(
                "roleRef.kind: Unsupported value: \"Role\": supported values: \"ClusterRole\""
            ),
            "{}",
            err.message
        );
        assert!(
            err.message
                .contains("subjects[0].namespace: Required value"),
            "{}",
            err.message
        );
        let rb = json!({"metadata": {"name": "b", "namespace": "ml"},
            "roleRef": {"apiGroup": RBAC_GROUP, "kind": "Role", "name": "r"},
            "subjects": [{"kind": "ServiceAccount", "name": "gantry"},
                         {"kind": "User", "apiGroup": RBAC_GROUP, "name": "alice"}]});
        admit(Kind::RoleBinding.resource(), &rb).unwrap();
        let mut other = rb.clone();
        other["roleRef"]["name"] = json!("admin");
        assert!(
            admit_update(Kind::RoleBinding, &rb, &other)
                .unwrap_err()
                .ends_with("cannot change roleRef")
        );
    }
}
