//! The `scale` subresource of Deployments and ReplicaSets (`autoscaling/v1` Scale), as
//! `kubectl scale` reads and patches it: `spec.replicas` is the object's, `status.replicas` and
//! `status.selector` what its controller last saw. Writing it changes only the replica count
//! (and, that being spec, bumps the generation).

use axum::response::Response;
use http::{HeaderMap, Method, StatusCode};
use serde_json::{Value, json};

use super::objects::parse_body;
use super::{Target, namespace_of, patch};
use crate::http_faults::json_response;
use crate::kube::cluster::ClusterState;
use crate::kube::errors::ApiError;
use crate::kube::meta;
use crate::kube::resources::{Kind, ResourceType};
use crate::kube::store::rv_of;

const SCALE: ResourceType = ResourceType {
    kind: Kind::Deployment,
    group: "autoscaling",
    version: "v1",
    plural: "scale",
    singular: "",
    kind_name: "Scale",
    namespaced: true,
    short_names: &[],
    categories: &[],
    subresources: &[],
    verbs: &["get", "patch", "update"],
};

pub fn serve(
    state: &ClusterState,
    method: &Method,
    target: &Target,
    name: &str,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<Response, ApiError> {
    let kind = target.resource.kind;
    if kind != Kind::Deployment && kind != Kind::ReplicaSet {
        return Err(ApiError::not_found(target.resource, name));
    }
    let namespace = namespace_of(target).unwrap_or_default();
    let current = state
        .store
        .get(kind, namespace, name)
        .ok_or_else(|| ApiError::not_found(target.resource, name))?;
    let scale = scale_of(&current);
    let (replicas, expected_rv) = match *method {
        Method::GET => return Ok(json_response(StatusCode::OK, &scale)),
        Method::PUT => {
            let sent = parse_body(body)?;
            let expected = sent
                .pointer("/metadata/resourceVersion")
                .and_then(Value::as_str)
                .filter(|v| !v.is_empty())
                .and_then(|v| v.parse().ok());
            (sent["spec"]["replicas"].clone(), expected)
        }
        Method::PATCH => {
            let content_type = headers
                .get(http::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("application/merge-patch+json");
            let patch_kind =
                patch::PatchKind::from_content_type(content_type).ok_or_else(|| {
                    ApiError::new(
                        415,
                        "UnsupportedMediaType",
                        format!(
                            "the body of the request was in an unknown format (got {content_type})"
                        ),
                    )
                })?;
            let document: Value = if patch_kind == patch::PatchKind::Apply {
                parse_body(body)?
            } else {
                serde_json::from_slice(body).map_err(|e| {
                    ApiError::bad_request(format!("the patch is not valid JSON: {e}"))
                })?
            };
            let patched =
                patch::apply(patch_kind, &scale, &document).map_err(ApiError::bad_request)?;
            (patched["spec"]["replicas"].clone(), None)
        }
        _ => {
            return Err(ApiError::new(
                405,
                "MethodNotAllowed",
                format!(
                    "the server does not allow this method on the requested resource ({method})"
                ),
            ));
        }
    };
    let replicas = match replicas.as_i64() {
        Some(n) if n >= 0 => n,
        _ => {
            return Err(ApiError::invalid(
                &SCALE,
                name,
                &[(
                    "spec.replicas".into(),
                    format!("Invalid value: {replicas}: must be greater than or equal to 0"),
                )],
            ));
        }
    };
    let stored = state
        .store
        .modify::<ApiError>(kind, namespace, name, expected_rv, |obj| {
            if obj["spec"]["replicas"] != json!(replicas) {
                obj["spec"]["replicas"] = json!(replicas);
                let generation = obj["metadata"]["generation"].as_u64().unwrap_or(1) + 1;
                obj["metadata"]["generation"] = json!(generation);
            }
            Ok(())
        })?
        .map_err(|e| ApiError::from_store(e, target.resource, name))?;
    Ok(json_response(StatusCode::OK, &scale_of(&stored)))
}

/// The Scale of a Deployment or ReplicaSet.
fn scale_of(obj: &Value) -> Value {
    let selector =
        crate::kube::selectors::LabelSelector::from_label_selector_json(&obj["spec"]["selector"]);
    json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            "name": meta::name(obj),
            "namespace": meta::namespace(obj),
            "uid": meta::uid(obj),
            "resourceVersion": rv_of(obj).unwrap_or(0).to_string(),
            "creationTimestamp": obj["metadata"]["creationTimestamp"],
        },
        "spec": {"replicas": obj["spec"]["replicas"].as_i64().unwrap_or(0)},
        "status": {
            "replicas": obj["status"]["replicas"].as_i64().unwrap_or(0),
            "selector": selector.to_string(),
        },
    })
}
