//! The requests answered by computing rather than by storing what was sent: a ServiceAccount's
//! `token` subresource, the reviews (created only), and the `scale` subresource of Deployments
//! and ReplicaSets. Everything else goes on to the stored objects.

use axum::response::{IntoResponse, Response};
use http::{HeaderMap, Method};

use super::{Target, reviews, scale, token_request};
use crate::kube::cluster::ClusterState;
use crate::kube::errors::ApiError;
use crate::kube::identity::UserInfo;
use crate::kube::resources::Kind;

/// The answer, if the request is one of these.
pub fn serve(
    state: &ClusterState,
    method: &Method,
    target: &Target,
    caller: &UserInfo,
    headers: &HeaderMap,
    body: &[u8],
) -> Option<Response> {
    let kind = target.resource.kind;
    let result = match (
        method,
        target.name.as_deref(),
        target.subresource.as_deref(),
    ) {
        (&Method::POST, Some(name), Some("token")) if kind == Kind::ServiceAccount => {
            token_request::create(state, target, name, body)
        }
        (_, _, Some("token")) if kind == Kind::ServiceAccount => Err(not_allowed(method)),
        (&Method::POST, None, _) if target.resource.is_review() => {
            reviews::create(state, target.resource, caller, body)
        }
        _ if target.resource.is_review() => Err(not_allowed(method)),
        (_, Some(name), Some("scale")) => scale::serve(state, method, target, name, headers, body),
        _ => return None,
    };
    Some(result.unwrap_or_else(IntoResponse::into_response))
}

fn not_allowed(method: &Method) -> ApiError {
    ApiError::new(
        405,
        "MethodNotAllowed",
        format!("the server does not allow this method on the requested resource ({method})"),
    )
}
