//! The real types the API server decodes the identity, access and apps kinds as (admission's
//! schema check), kept apart from the kinds served first so each list stays short.

use serde_json::Value;

use super::admission::roundtrip;
use super::resources::Kind;
use k8s_openapi::api::{apps, authentication, authorization, core, rbac};

/// `obj` decoded as its kind's type and encoded again.
pub fn roundtrip_kind(kind: Kind, obj: &Value) -> Result<Value, String> {
    match kind {
        Kind::ServiceAccount => roundtrip::<core::v1::ServiceAccount>(obj),
        Kind::Deployment => roundtrip::<apps::v1::Deployment>(obj),
        Kind::ReplicaSet => roundtrip::<apps::v1::ReplicaSet>(obj),
        Kind::Role => roundtrip::<rbac::v1::Role>(obj),
        Kind::RoleBinding => roundtrip::<rbac::v1::RoleBinding>(obj),
        Kind::ClusterRole => roundtrip::<rbac::v1::ClusterRole>(obj),
        Kind::ClusterRoleBinding => roundtrip::<rbac::v1::ClusterRoleBinding>(obj),
        Kind::SelfSubjectAccessReview => {
            roundtrip::<authorization::v1::SelfSubjectAccessReview>(obj)
        }
        Kind::SelfSubjectRulesReview => roundtrip::<authorization::v1::SelfSubjectRulesReview>(obj),
        Kind::SubjectAccessReview => roundtrip::<authorization::v1::SubjectAccessReview>(obj),
        Kind::SelfSubjectReview => roundtrip::<authentication::v1::SelfSubjectReview>(obj),
        Kind::TokenReview => roundtrip::<authentication::v1::TokenReview>(obj),
        other => Err(format!("no schema for {other:?}")),
    }
}
