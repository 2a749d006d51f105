//! The reviews, created and answered, never stored: what the caller may do
//! (SelfSubjectAccessReview, as `kubectl auth can-i` asks), every rule it has in a namespace
//! (SelfSubjectRulesReview, `kubectl auth can-i --list`), what another user may do
//! (SubjectAccessReview), who the caller is (SelfSubjectReview, `kubectl auth whoami`) and whose
//! a token is (TokenReview).

use std::collections::BTreeMap;

use axum::response::Response;
use http::StatusCode;
use serde_json::{Value, json};

use super::objects::parse_body;
use crate::http_faults::json_response;
use crate::kube::admission::{FieldValidation, check_schema};
use crate::kube::cluster::ClusterState;
use crate::kube::errors::ApiError;
use crate::kube::identity::UserInfo;
use crate::kube::rbac::{self, Decision, RequestAttributes};
use crate::kube::resources::{Kind, ResourceType};

pub fn create(
    state: &ClusterState,
    resource: &'static ResourceType,
    caller: &UserInfo,
    body: &[u8],
) -> Result<Response, ApiError> {
    let mut review = parse_body(body)?;
    if !review.is_object() {
        return Err(ApiError::bad_request("the body is not a JSON object"));
    }
    review["apiVersion"] = json!(resource.api_version());
    review["kind"] = json!(resource.kind_name);
    check_schema(resource, &review, FieldValidation::Ignore)?;
    let status = match resource.kind {
        Kind::SelfSubjectAccessReview => access(state, resource, caller, &review["spec"])?,
        Kind::SubjectAccessReview => {
            let spec = &review["spec"];
            let strings = |v: &Value| -> Vec<String> {
                v.as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .map(String::from)
                    .collect()
            };
            let subject = UserInfo {
                name: spec["user"].as_str().unwrap_or_default().into(),
                uid: spec["uid"].as_str().unwrap_or_default().into(),
                groups: strings(&spec["groups"]),
                extra: BTreeMap::new(),
            };
            access(state, resource, &subject, spec)?
        }
        Kind::SelfSubjectRulesReview => {
            let namespace = review["spec"]["namespace"].as_str().unwrap_or_default();
            rules(state, caller, namespace)
        }
        Kind::SelfSubjectReview => json!({"userInfo": caller.to_json()}),
        Kind::TokenReview => token(state, &review["spec"]),
        _ => return Err(ApiError::new(405, "MethodNotAllowed", "not a review")),
    };
    review["status"] = status;
    review["metadata"] = json!({"creationTimestamp": null});
    Ok(json_response(StatusCode::CREATED, &review))
}

/// Whether `user` may do what `spec` describes (`resourceAttributes` or
/// `nonResourceAttributes`, exactly one).
fn access(
    state: &ClusterState,
    resource: &ResourceType,
    user: &UserInfo,
    spec: &Value,
) -> Result<Value, ApiError> {
    let text = |v: &Value, key: &str| v[key].as_str().unwrap_or_default().to_string();
    let attrs = match (
        spec["resourceAttributes"].as_object(),
        spec["nonResourceAttributes"].as_object(),
    ) {
        (Some(_), None) => {
            let r = &spec["resourceAttributes"];
            RequestAttributes {
                verb: text(r, "verb"),
                resource_request: true,
                api_group: text(r, "group"),
                api_version: text(r, "version"),
                namespace: text(r, "namespace"),
                resource: text(r, "resource"),
                subresource: text(r, "subresource"),
                name: text(r, "name"),
                ..RequestAttributes::default()
            }
        }
        (None, Some(_)) => {
            let r = &spec["nonResourceAttributes"];
            RequestAttributes {
                verb: text(r, "verb"),
                path: text(r, "path"),
                ..RequestAttributes::default()
            }
        }
        _ => {
            return Err(ApiError::invalid(
                resource,
                "",
                &[(
                    "spec.resourceAttributes".into(),
                    "Invalid value: \"null\": exactly one of nonResourceAttributes or resourceAttributes must be specified".into(),
                )],
            ));
        }
    };
    Ok(match rbac::authorize(&state.store, user, &attrs) {
        Decision::Allow => json!({"allowed": true}),
        Decision::Deny { reason } if reason.is_empty() => json!({"allowed": false}),
        Decision::Deny { reason } => json!({"allowed": false, "reason": reason}),
    })
}

/// The caller's rules in `namespace`, split as SubjectRulesReviewStatus splits them.
fn rules(state: &ClusterState, caller: &UserInfo, namespace: &str) -> Value {
    let (rules, errors) = rbac::rules_for(&state.store, caller, namespace);
    let mut resource_rules = Vec::new();
    let mut non_resource_rules = Vec::new();
    for rule in rules {
        let list = |key: &str| rule.get(key).cloned().unwrap_or_else(|| json!([]));
        if rule["resources"].as_array().is_some_and(|r| !r.is_empty()) {
            let mut r = json!({"verbs": list("verbs"), "apiGroups": list("apiGroups"), "resources": list("resources")});
            if rule["resourceNames"]
                .as_array()
                .is_some_and(|n| !n.is_empty())
            {
                r["resourceNames"] = list("resourceNames");
            }
            resource_rules.push(r);
        }
        if rule["nonResourceURLs"]
            .as_array()
            .is_some_and(|u| !u.is_empty())
        {
            non_resource_rules
                .push(json!({"verbs": list("verbs"), "nonResourceURLs": list("nonResourceURLs")}));
        }
    }
    let mut status = json!({
        "resourceRules": resource_rules,
        "nonResourceRules": non_resource_rules,
        "incomplete": !errors.is_empty(),
    });
    if !errors.is_empty() {
        status["evaluationError"] = json!(errors.join(", "));
    }
    status
}

/// Whose `spec.token` is, for the audiences asked (none: the API server's).
fn token(state: &ClusterState, spec: &Value) -> Value {
    let audiences: Vec<&str> = spec["audiences"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let token = spec["token"].as_str().unwrap_or_default();
    match state.authenticate_token(token, &audiences) {
        Some(user) => {
            let audiences = if audiences.is_empty() {
                vec![state.tokens.api_audience()]
            } else {
                audiences
            };
            json!({"authenticated": true, "user": user.to_json(), "audiences": audiences})
        }
        None => json!({"authenticated": false, "error": "invalid bearer token"}),
    }
}
