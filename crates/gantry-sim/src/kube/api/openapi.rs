//! Just enough OpenAPI for kubectl's validation: a v3 index whose per-group-version documents
//! declare `fieldValidation` on each kind's PATCH (so kubectl leaves validation to the server,
//! which enforces it), and an empty protobuf v2 document for the paths that only read v2.

use axum::body::Body;
use axum::response::{IntoResponse, Response};
use http::{HeaderValue, StatusCode, Uri};
use serde_json::{Map, Value, json};

use crate::http_faults::json_response;
use crate::kube::errors::ApiError;
use crate::kube::resources::{RESOURCES, ResourceType};

const V2_CONTENT_TYPE: &str = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";

pub fn serve(rest: &[&str], uri: &Uri) -> Response {
    let _ = uri;
    match rest {
        ["v2"] => {
            let mut response = (StatusCode::OK, Body::empty()).into_response();
            response.headers_mut().insert(
                http::header::CONTENT_TYPE,
                HeaderValue::from_static(V2_CONTENT_TYPE),
            );
            response
        }
        ["v3"] => json_response(StatusCode::OK, &index()),
        ["v3", "api", "v1"] => json_response(StatusCode::OK, &document("", "v1")),
        ["v3", "apis", group, version]
            if ResourceType::groups()
                .iter()
                .any(|(g, v)| g == group && v == version) =>
        {
            json_response(StatusCode::OK, &document(group, version))
        }
        _ => ApiError::new(
            404,
            "NotFound",
            "the server could not find the requested resource",
        )
        .into_response(),
    }
}

fn index() -> Value {
    let mut paths = Map::new();
    paths.insert(
        "api/v1".into(),
        json!({"serverRelativeURL": "/openapi/v3/api/v1?hash=sim1"}),
    );
    for (g, v) in ResourceType::groups() {
        paths.insert(
            format!("apis/{g}/{v}"),
            json!({"serverRelativeURL": format!("/openapi/v3/apis/{g}/{v}?hash=sim1")}),
        );
    }
    json!({"paths": paths})
}

fn document(group: &str, version: &str) -> Value {
    let mut paths = Map::new();
    for r in RESOURCES
        .iter()
        .filter(|r| r.group == group && r.version == version && !r.is_review())
    {
        let prefix = if group.is_empty() {
            format!("/api/{version}")
        } else {
            format!("/apis/{group}/{version}")
        };
        let path = if r.namespaced {
            format!("{prefix}/namespaces/{{namespace}}/{}/{{name}}", r.plural)
        } else {
            format!("{prefix}/{}/{{name}}", r.plural)
        };
        paths.insert(
            path,
            json!({"patch": {
                "x-kubernetes-group-version-kind": {"group": group, "version": version, "kind": r.kind_name},
                "parameters": [
                    {"name": "dryRun", "in": "query", "schema": {"type": "string"}},
                    {"name": "fieldManager", "in": "query", "schema": {"type": "string"}},
                    {"name": "fieldValidation", "in": "query", "schema": {"type": "string"}},
                    {"name": "force", "in": "query", "schema": {"type": "boolean"}},
                ],
            }}),
        );
    }
    json!({"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": "v1.32.9"}, "paths": paths})
}
