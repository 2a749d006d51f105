//! The authorizer: members of `system:masters` may do anything (the privileged-group
//! authorizer in front of RBAC); everyone else gets what the rules of the roles bound to them
//! grant, found as `DefaultRuleResolver.VisitRulesFor` finds them: every ClusterRoleBinding,
//! then the RoleBindings of the request's namespace, each referring to a Role of that namespace
//! or a ClusterRole. A binding to a role that does not exist grants nothing and says so in the
//! denial's reason (`RBAC: role.rbac.authorization.k8s.io "x" not found`).

use serde_json::Value;

use super::rules::{RequestAttributes, rule_allows};
use crate::kube::identity::{UserInfo, service_account_username};
use crate::kube::resources::Kind;
use crate::kube::store::Store;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    Allow,
    /// Not allowed; `reason` says what went wrong finding the rules (empty when nothing did).
    Deny {
        reason: String,
    },
}

pub fn authorize(store: &Store, user: &UserInfo, attrs: &RequestAttributes) -> Decision {
    if user.is_privileged() {
        return Decision::Allow;
    }
    let mut allowed = false;
    let errors = visit_rules(store, user, &attrs.namespace, |rule| {
        allowed = rule_allows(attrs, rule);
        !allowed
    });
    if allowed {
        return Decision::Allow;
    }
    let reason = if errors.is_empty() {
        String::new()
    } else {
        format!("RBAC: {}", aggregate(&errors))
    };
    Decision::Deny { reason }
}

/// Every rule that applies to `user` in `namespace` (cluster-wide ones too), and the errors met
/// finding them: what a SelfSubjectRulesReview lists.
pub fn rules_for(store: &Store, user: &UserInfo, namespace: &str) -> (Vec<Value>, Vec<String>) {
    let mut rules = Vec::new();
    let errors = visit_rules(store, user, namespace, |rule| {
        rules.push(rule.clone());
        true
    });
    (rules, errors)
}

/// Calls `visit` with each rule until it returns false; returns the errors met.
fn visit_rules(
    store: &Store,
    user: &UserInfo,
    namespace: &str,
    mut visit: impl FnMut(&Value) -> bool,
) -> Vec<String> {
    let mut errors = Vec::new();
    let (cluster_bindings, _) = store.list(Kind::ClusterRoleBinding, None, |_| true);
    let (bindings, _) = if namespace.is_empty() {
        (Vec::new(), 0)
    } else {
        store.list(Kind::RoleBinding, Some(namespace), |_| true)
    };
    let scoped = cluster_bindings
        .iter()
        .map(|b| (b, ""))
        .chain(bindings.iter().map(|b| (b, namespace)));
    for (binding, binding_namespace) in scoped {
        if !applies(&binding["subjects"], user, binding_namespace) {
            continue;
        }
        match role_rules(store, &binding["roleRef"], binding_namespace) {
            Err(e) => errors.push(e),
            Ok(rules) => {
                for rule in rules.iter() {
                    if !visit(rule) {
                        return errors;
                    }
                }
            }
        }
    }
    errors
}

/// `appliesToUser` for any of a binding's subjects.
fn applies(subjects: &Value, user: &UserInfo, binding_namespace: &str) -> bool {
    subjects.as_array().into_iter().flatten().any(|s| {
        let name = s["name"].as_str().unwrap_or_default();
        match s["kind"].as_str() {
            Some("User") => user.name == name,
            Some("Group") => user.groups.iter().any(|g| g == name),
            Some("ServiceAccount") => {
                // A subject without a namespace means the binding's own.
                let namespace = s["namespace"]
                    .as_str()
                    .filter(|n| !n.is_empty())
                    .unwrap_or(binding_namespace);
                !namespace.is_empty() && user.name == service_account_username(namespace, name)
            }
            _ => false,
        }
    })
}

/// `GetRoleReferenceRules`: the rules of the role a binding refers to.
fn role_rules(store: &Store, role_ref: &Value, namespace: &str) -> Result<Vec<Value>, String> {
    let name = role_ref["name"].as_str().unwrap_or_default();
    let (kind, singular, role_namespace) = match role_ref["kind"].as_str().unwrap_or_default() {
        "Role" => (Kind::Role, "role", namespace),
        "ClusterRole" => (Kind::ClusterRole, "clusterrole", ""),
        other => return Err(format!("unsupported role reference kind: \"{other}\"")),
    };
    // The listers' NotFound names the resource in the singular.
    let role = store
        .get(kind, role_namespace, name)
        .ok_or_else(|| format!("{singular}.rbac.authorization.k8s.io \"{name}\" not found"))?;
    Ok(role["rules"].as_array().cloned().unwrap_or_default())
}

/// `utilerrors.NewAggregate(…).Error()`: one error as it is, several deduplicated in brackets.
fn aggregate(errors: &[String]) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for e in errors {
        if !seen.contains(&e.as_str()) {
            seen.push(e);
        }
    }
    match seen.as_slice() {
        [one] => (*one).to_string(),
        many => format!("[{}]", many.join(", ")),
    }
}

#[cfg(test)]
#[path = "authorizer_tests.rs"]
mod tests;
