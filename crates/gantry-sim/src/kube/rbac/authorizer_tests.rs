//! The authorizer over a store of roles and bindings: what a ServiceAccount may do comes from
//! the roles bound to it, to its groups, or to everyone authenticated; nothing else.

#![allow(clippy::unwrap_used)]

use serde_json::{Value, json};

use super::*;
use crate::kube::resources::Kind;

fn store_with(objects: &[(Kind, Value)]) -> std::sync::Arc<Store> {
    let store = Store::new();
    for (kind, obj) in objects {
        store.create(*kind, obj.clone()).unwrap();
    }
    store
}

fn pod_reader(namespace: &str) -> (Kind, Value) {
    (
        Kind::Role,
        json!({"metadata": {"name": "pod-reader", "namespace": namespace},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}]}),
    )
}

fn binding(namespace: &str, role_kind: &str, role: &str, subject: Value) -> (Kind, Value) {
    (
        Kind::RoleBinding,
        json!({"metadata": {"name": format!("{role}-binding"), "namespace": namespace},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role},
            "subjects": [subject]}),
    )
}

fn gantry() -> UserInfo {
    UserInfo::service_account("ml", "gantry", "u-1")
}

fn list(resource: &str, namespace: &str) -> RequestAttributes {
    RequestAttributes::resource("list", "", resource, namespace)
}

#[test]
fn a_role_bound_to_a_service_account_grants_its_rules_in_that_namespace_only() {
    let sa = json!({"kind": "ServiceAccount", "name": "gantry"});
    let store = store_with(&[pod_reader("ml"), binding("ml", "Role", "pod-reader", sa)]);
    let user = gantry();
    assert_eq!(
        authorize(&store, &user, &list("pods", "ml")),
        Decision::Allow
    );
    let no = Decision::Deny {
        reason: String::new(),
    };
    assert_eq!(authorize(&store, &user, &list("secrets", "ml")), no);
    assert_eq!(authorize(&store, &user, &list("pods", "default")), no);
    assert_eq!(
        authorize(&store, &user, &list("pods", "")),
        no,
        "not cluster-wide"
    );
    let other = UserInfo::service_account("ml", "someone", "u-2");
    assert_eq!(authorize(&store, &other, &list("pods", "ml")), no);
}

#[test]
fn a_role_binding_may_grant_a_cluster_roles_rules_in_its_namespace() {
    let cluster_role = (
        Kind::ClusterRole,
        json!({"metadata": {"name": "jobs-admin"},
            "rules": [{"apiGroups": ["batch"], "resources": ["jobs"], "verbs": ["*"]}]}),
    );
    let sa = json!({"kind": "ServiceAccount", "name": "gantry", "namespace": "ml"});
    let store = store_with(&[cluster_role, binding("ml", "ClusterRole", "jobs-admin", sa)]);
    let create = RequestAttributes::resource("create", "batch", "jobs", "ml");
    assert_eq!(authorize(&store, &gantry(), &create), Decision::Allow);
    let elsewhere = RequestAttributes::resource("create", "batch", "jobs", "default");
    assert_ne!(authorize(&store, &gantry(), &elsewhere), Decision::Allow);
}

#[test]
fn groups_and_users_are_subjects_too_and_masters_need_no_binding() {
    let crb = (
        Kind::ClusterRoleBinding,
        json!({"metadata": {"name": "all-sa-read"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "reader"},
            "subjects": [{"kind": "Group", "name": "system:serviceaccounts:ml"},
                         {"kind": "User", "name": "alice"}]}),
    );
    let reader = (
        Kind::ClusterRole,
        json!({"metadata": {"name": "reader"},
            "rules": [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["list"]}]}),
    );
    let store = store_with(&[crb, reader]);
    let nodes = list("nodes", "");
    assert_eq!(authorize(&store, &gantry(), &nodes), Decision::Allow);
    let alice = UserInfo {
        name: "alice".into(),
        ..UserInfo::anonymous()
    };
    assert_eq!(authorize(&store, &alice, &nodes), Decision::Allow);
    let elsewhere = UserInfo::service_account("default", "gantry", "u-3");
    assert_ne!(authorize(&store, &elsewhere, &nodes), Decision::Allow);
    assert_eq!(
        authorize(
            &Store::new(),
            &UserInfo::admin(),
            &list("secrets", "kube-system")
        ),
        Decision::Allow
    );
}

#[test]
fn a_binding_to_a_missing_role_is_the_denials_reason() {
    let sa = json!({"kind": "ServiceAccount", "name": "gantry"});
    let store = store_with(&[
        binding("ml", "Role", "gone", sa.clone()),
        binding("ml", "ClusterRole", "also-gone", sa),
    ]);
    // Bindings are visited in the order the store keeps them: by name.
    assert_eq!(
        authorize(&store, &gantry(), &list("pods", "ml")),
        Decision::Deny {
            reason: "RBAC: [clusterrole.rbac.authorization.k8s.io \"also-gone\" not found, role.rbac.authorization.k8s.io \"gone\" not found]".into()
        }
    );
}

#[test]
fn the_rules_review_lists_cluster_and_namespace_rules() {
    let sa = json!({"kind": "ServiceAccount", "name": "gantry"});
    let store = store_with(&[pod_reader("ml"), binding("ml", "Role", "pod-reader", sa)]);
    let (rules, errors) = rules_for(&store, &gantry(), "ml");
    assert!(errors.is_empty());
    assert_eq!(rules.len(), 1);
    assert_eq!(rules[0]["resources"], json!(["pods"]));
    assert!(rules_for(&store, &gantry(), "default").0.is_empty());
}
