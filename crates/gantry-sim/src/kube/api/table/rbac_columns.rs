//! The columns of `kubectl get serviceaccounts`, `rolebindings` and `clusterrolebindings`
//! (`printServiceAccount`, `printRoleBinding`, `printClusterRoleBinding`); Roles and
//! ClusterRoles have no printer and get the default convertor's.

use super::columns::{AGE, Column, NAME, col, wide};

pub(super) const SERVICE_ACCOUNT_COLUMNS: &[Column] = &[
    NAME,
    col(
        "Secrets",
        "Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use. Pods are only limited to this list if this service account has a \"kubernetes.io/enforce-mountable-secrets\" annotation set to \"true\". The \"kubernetes.io/enforce-mountable-secrets\" annotation is deprecated since v1.32. Prefer separate namespaces to isolate access to mounted secrets. This field should not be used to find auto-generated service account token secrets for use outside of pods. Instead, tokens can be requested directly using the TokenRequest API, or service account token secrets can be manually created. More info: https://kubernetes.io/docs/concepts/configuration/secret",
    ),
    AGE,
];

pub(super) const ROLE_BINDING_COLUMNS: &[Column] = &[
    NAME,
    col(
        "Role",
        "RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error. This field is immutable.",
    ),
    AGE,
    wide("Users", "Users in the roleBinding"),
    wide("Groups", "Groups in the roleBinding"),
    wide("ServiceAccounts", "ServiceAccounts in the roleBinding"),
];

pub(super) const CLUSTER_ROLE_BINDING_COLUMNS: &[Column] = &[
    NAME,
    col(
        "Role",
        "RoleRef can only reference a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error. This field is immutable.",
    ),
    AGE,
    wide("Users", "Users in the clusterRoleBinding"),
    wide("Groups", "Groups in the clusterRoleBinding"),
    wide(
        "ServiceAccounts",
        "ServiceAccounts in the clusterRoleBinding",
    ),
];
