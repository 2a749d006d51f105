//! Routing of the Kubernetes REST paths to discovery, objects, watches and logs.

mod access;
#[cfg(test)]
mod access_tests;
mod computed;
mod discovery;
mod json_body;
#[cfg(test)]
mod lease_kubectl_tests;
#[cfg(test)]
mod lease_tests;
mod logs;
mod metrics;
mod objects;
mod openapi;
mod patch;
mod protobuf;
mod request_info;
mod reviews;
mod scale;
mod stream_body;
pub mod table;
mod token_request;
mod watch;

use std::collections::HashMap;
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, Method, StatusCode, Uri};

use super::cluster::ClusterState;
use super::errors::ApiError;
use super::identity::UserInfo;
use super::resources::{Kind, ResourceType};
use crate::http_faults::{ErrorShape, Gate, gate};

struct KubeErrors {
    state: Arc<ClusterState>,
}

impl ErrorShape for KubeErrors {
    fn error(&self, status: StatusCode, message: &str) -> Response {
        let reason = match status.as_u16() {
            401 => "Unauthorized",
            429 => "TooManyRequests",
            503 => "ServiceUnavailable",
            _ => "InternalError",
        };
        ApiError::new(status.as_u16(), reason, message).into_response()
    }

    fn is_public(&self, path: &str) -> bool {
        matches!(path, "/version" | "/healthz" | "/livez" | "/readyz")
    }

    /// The cluster's ServiceAccount tokens.
    fn authenticate(&self, request: &mut axum::extract::Request) -> bool {
        let authorization = request
            .headers()
            .get(http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok());
        match self.state.authenticate_bearer(authorization) {
            Some(user) => {
                request.extensions_mut().insert(user);
                true
            }
            None => false,
        }
    }
}

pub fn router(state: Arc<ClusterState>) -> Router {
    let gate_state = Gate {
        shared: state.shared.clone(),
        shape: Arc::new(KubeErrors {
            state: state.clone(),
        }),
    };
    Router::new()
        .fallback(dispatch)
        .with_state(state.clone())
        .layer(axum::middleware::from_fn_with_state(state, access::guard))
        .layer(axum::middleware::from_fn_with_state(gate_state, gate))
}

/// Where a request is aimed, parsed from its path.
#[derive(Debug, Clone)]
pub struct Target {
    pub resource: &'static ResourceType,
    pub namespace: Option<String>,
    pub name: Option<String>,
    pub subresource: Option<String>,
    /// The legacy `/watch/` path prefix.
    pub watch: bool,
}

pub type Params = HashMap<String, String>;

// An axum handler: each argument is one part of the request it is given.
#[allow(clippy::too_many_arguments)]
async fn dispatch(
    State(state): State<Arc<ClusterState>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    Query(params): Query<Params>,
    upgrade: super::portforward::Upgrade,
    caller: Option<axum::Extension<UserInfo>>,
    body: Bytes,
) -> Response {
    let path = uri.path().trim_matches('/');
    let segments: Vec<&str> = if path.is_empty() {
        Vec::new()
    } else {
        path.split('/').collect()
    };
    match segments.as_slice() {
        ["version"] => return discovery::version(&state),
        ["healthz" | "livez" | "readyz", ..] => return (StatusCode::OK, "ok").into_response(),
        ["api"] => return discovery::core_versions(&state),
        ["apis"] => return discovery::groups(metrics::served(&state)),
        ["api", "v1"] => return discovery::resources("", "v1"),
        ["apis", metrics::GROUP, metrics::VERSION, rest @ ..] => {
            return metrics::serve(&state, rest, &params);
        }
        ["apis", group] => return discovery::group(group, metrics::served(&state)),
        ["apis", group, version] => return discovery::resources(group, version),
        ["openapi", rest @ ..] => return openapi::serve(rest, &uri),
        _ => {}
    }
    let target = match parse_target(&segments) {
        Some(t) => t,
        None => {
            return ApiError::new(
                404,
                "NotFound",
                "the server could not find the requested resource",
            )
            .into_response();
        }
    };
    let content_type = headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok());
    let body = match protobuf::json_body(content_type, body) {
        Ok(body) => body,
        Err(e) => return e.into_response(),
    };
    let caller = caller.map_or_else(UserInfo::anonymous, |axum::Extension(user)| user);
    if let Some(answer) = computed::serve(&state, &method, &target, &caller, &headers, &body) {
        return answer;
    }
    let result = route(&state, &method, &target, &headers, &params, body, upgrade).await;
    result.unwrap_or_else(IntoResponse::into_response)
}

fn parse_target(segments: &[&str]) -> Option<Target> {
    let (group, version, mut rest) = match segments {
        ["api", "v1", rest @ ..] => ("", "v1", rest),
        ["apis", g, v, rest @ ..] => (*g, *v, rest),
        _ => return None,
    };
    let mut watch = false;
    if rest.first() == Some(&"watch") {
        watch = true;
        rest = &rest[1..];
    }
    let namespaced_path = rest.len() >= 3
        && rest[0] == "namespaces"
        && ResourceType::find(group, version, rest[2]).is_some_and(|r| r.namespaced);
    let (namespace, rest) = if namespaced_path {
        (Some(rest[1].to_string()), &rest[2..])
    } else {
        (None, rest)
    };
    if rest.len() > 3 {
        return None;
    }
    let resource = ResourceType::find(group, version, rest.first()?)?;
    if namespaced_path != resource.namespaced && rest.len() > 1 {
        // A namespaced resource addressed by name without its namespace.
        return None;
    }
    Some(Target {
        resource,
        namespace,
        name: rest.get(1).map(|s| s.to_string()),
        subresource: rest.get(2).map(|s| s.to_string()),
        watch,
    })
}

fn is_watch(target: &Target, params: &Params) -> bool {
    target.watch || params.get("watch").is_some_and(|v| v == "true" || v == "1")
}

async fn route(
    state: &Arc<ClusterState>,
    method: &Method,
    target: &Target,
    headers: &HeaderMap,
    params: &Params,
    body: Bytes,
    upgrade: super::portforward::Upgrade,
) -> Result<Response, ApiError> {
    let wants_table = table::wants_table(headers);
    match (method, &target.name, target.subresource.as_deref()) {
        (&Method::GET | &Method::POST, Some(name), Some("portforward"))
            if target.resource.kind == Kind::Pod =>
        {
            let namespace = target.namespace.as_deref().unwrap_or_default();
            Ok(super::portforward::serve(
                state, namespace, name, headers, params, upgrade,
            ))
        }
        (&Method::GET, None, _) if is_watch(target, params) => {
            watch::serve(state, target, params, wants_table)
        }
        (&Method::GET, None, _) => objects::list(state, target, params, wants_table),
        (&Method::POST, None, _) => objects::create(state, target, params, &body),
        (&Method::DELETE, None, _) => objects::delete_collection(state, target, params, &body),
        (&Method::GET, Some(name), Some("log")) => logs::serve(state, target, name, params),
        (&Method::GET, Some(_), _) if is_watch(target, params) => {
            watch::serve(state, target, params, wants_table)
        }
        (&Method::GET, Some(name), _) => objects::get(state, target, name, params, wants_table),
        (&Method::PUT, Some(name), sub) => {
            objects::replace(state, target, name, sub, params, &body)
        }
        (&Method::PATCH, Some(name), sub) => {
            let content_type = headers
                .get(http::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("application/merge-patch+json");
            objects::patch(state, target, name, sub, params, content_type, &body)
        }
        (&Method::DELETE, Some(name), None) => objects::delete(state, target, name, params, &body),
        _ => Err(ApiError::new(
            405,
            "MethodNotAllowed",
            format!("{method} is not supported on this path"),
        )),
    }
}

/// A namespaced target without a namespace in its path lists across all namespaces.
pub fn namespace_of(target: &Target) -> Option<&str> {
    target.namespace.as_deref()
}

pub fn param<'a>(params: &'a Params, key: &str) -> Option<&'a str> {
    params
        .get(key)
        .map(String::as_str)
        .filter(|v| !v.is_empty())
}
