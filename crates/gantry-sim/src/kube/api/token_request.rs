//! The TokenRequest API (`POST …/serviceaccounts/NAME/token`, `authentication.k8s.io/v1`
//! TokenRequest), as `kubectl create token` calls it: `spec.expirationSeconds` (an hour unless
//! asked, never under ten minutes), `spec.audiences` (the API server's unless asked) and a pod
//! in `spec.boundObjectRef`; the answer carries `status.token` and
//! `status.expirationTimestamp` (`pkg/registry/core/serviceaccount/storage/token.go`).

use std::time::Duration;

use axum::response::Response;
use http::StatusCode;
use serde_json::{Value, json};

use super::objects::parse_body;
use super::{Target, namespace_of};
use crate::http_faults::json_response;
use crate::kube::admission::roundtrip;
use crate::kube::cluster::ClusterState;
use crate::kube::errors::ApiError;
use crate::kube::resources::{Kind, ResourceType};
use crate::kube::tokens::{PodRef, TokenOptions};

const DEFAULT_EXPIRATION_SECONDS: i64 = 3600;
/// `ValidateTokenRequest`'s bounds.
const MIN_EXPIRATION_SECONDS: i64 = 600;
const MAX_EXPIRATION_SECONDS: i64 = 1 << 32;
const API_VERSION: &str = "authentication.k8s.io/v1";

/// How a TokenRequest's own errors name it (`Invalid` names the kind, not the resource).
const TOKEN_REQUEST: ResourceType = ResourceType {
    kind: Kind::ServiceAccount,
    group: "authentication.k8s.io",
    version: "v1",
    plural: "serviceaccounts",
    singular: "",
    kind_name: "TokenRequest",
    namespaced: true,
    short_names: &[],
    categories: &[],
    subresources: &[],
    verbs: &["create"],
};

pub fn create(
    state: &ClusterState,
    target: &Target,
    name: &str,
    body: &[u8],
) -> Result<Response, ApiError> {
    let namespace = namespace_of(target).unwrap_or_default();
    let request = parse_body(body)?;
    roundtrip::<k8s_openapi::api::authentication::v1::TokenRequest>(&request).map_err(|e| {
        ApiError::bad_request(format!(
            "TokenRequest in version \"v1\" cannot be handled as a TokenRequest: {e}"
        ))
    })?;
    let spec = &request["spec"];
    let expiration = spec["expirationSeconds"]
        .as_i64()
        .unwrap_or(DEFAULT_EXPIRATION_SECONDS);
    let invalid = |message: &str| {
        ApiError::invalid(
            &TOKEN_REQUEST,
            "",
            &[(
                "spec.expirationSeconds".into(),
                format!("Invalid value: {expiration}: {message}"),
            )],
        )
    };
    if expiration < MIN_EXPIRATION_SECONDS {
        return Err(invalid("may not specify a duration less than 10 minutes"));
    }
    if expiration > MAX_EXPIRATION_SECONDS {
        return Err(invalid(
            "may not specify a duration larger than 2^32 seconds",
        ));
    }
    let mut options = TokenOptions {
        audiences: spec["audiences"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(String::from)
            .collect(),
        bound_pod: None,
    };
    let bound = &spec["boundObjectRef"];
    if bound.is_object() {
        match bound["kind"].as_str().unwrap_or_default() {
            "Pod" => {
                options.bound_pod = Some(PodRef {
                    name: bound["name"].as_str().unwrap_or_default().into(),
                    uid: bound["uid"].as_str().unwrap_or_default().into(),
                });
            }
            other => {
                return Err(ApiError::bad_request(format!(
                    "cannot bind token for serviceaccount \"{name}\" to object of kind \"{other}\": the simulator binds tokens to pods only"
                )));
            }
        }
    }
    let lifetime = Duration::from_secs(u64::try_from(expiration).unwrap_or(0));
    let issued = state.issue_token(namespace, name, lifetime, &options)?;
    let audiences = if options.audiences.is_empty() {
        vec![state.tokens.api_audience().to_string()]
    } else {
        options.audiences
    };
    let mut answered_spec = json!({"audiences": audiences, "expirationSeconds": expiration});
    if bound.is_object() {
        answered_spec["boundObjectRef"] = bound.clone();
    }
    let answer = json!({
        "kind": "TokenRequest",
        "apiVersion": API_VERSION,
        "metadata": {"name": name, "namespace": namespace, "creationTimestamp": crate::kube::meta::now()},
        "spec": answered_spec,
        "status": {
            "token": issued.token,
            "expirationTimestamp": issued.expires_at.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
        },
    });
    Ok(json_response(StatusCode::CREATED, &answer))
}
