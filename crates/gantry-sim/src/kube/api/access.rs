//! Who may do what, for every request to a cluster's API: the caller named (the simulator's
//! token is the administrator, a ServiceAccount token its account, no token on a public path
//! nobody), the request's attributes read from its path (`request_info`), the authorizer asked
//! (`rbac`), and a refusal written exactly as kube-apiserver writes it
//! (`responsewriters.Forbidden` in `k8s.io/apiserver/pkg/endpoints/handlers/responsewriters/
//! errors.go`, wrapped by `apierrors.NewForbidden`).

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value};

use super::request_info;
use crate::kube::cluster::ClusterState;
use crate::kube::errors::ApiError;
use crate::kube::identity::UserInfo;
use crate::kube::rbac::{self, Decision, RequestAttributes};

/// Lets a request through when its caller may make it, noting the caller in its extensions
/// for the handlers that answer about the caller (the reviews).
pub async fn guard(
    State(state): State<Arc<ClusterState>>,
    mut request: Request,
    next: Next,
) -> Response {
    let user = match request.extensions().get::<UserInfo>() {
        Some(user) => user.clone(),
        None => caller(&state, &request),
    };
    let attrs = request_info::resolve(request.method(), request.uri());
    match rbac::authorize(&state.store, &user, &attrs) {
        Decision::Allow => {
            request.extensions_mut().insert(user);
            next.run(request).await
        }
        Decision::Deny { reason } => forbidden(&user, &attrs, &reason).into_response(),
    }
}

/// The caller of a request the gate let through without naming it: the simulator's token
/// holder, or (on the public paths, which the gate does not authenticate) a ServiceAccount or
/// nobody.
fn caller(state: &ClusterState, request: &Request) -> UserInfo {
    let authorization = request
        .headers()
        .get(http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    if state.shared.auth.accepts(authorization) {
        return UserInfo::admin();
    }
    state
        .authenticate_bearer(authorization)
        .unwrap_or_else(UserInfo::anonymous)
}

/// The 403 of a request the authorizer did not allow; `reason` is the authorizer's, if any.
pub fn forbidden(user: &UserInfo, attrs: &RequestAttributes, reason: &str) -> ApiError {
    // `sanitizer`: nothing in the message may look like HTML.
    let message = forbidden_message(user, attrs)
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    let message = if reason.is_empty() {
        message
    } else {
        format!("{message}: {reason}")
    };
    // `NewForbidden(GroupResource{group, resource}, name, …)`: the subresource is not named.
    let qualified = if attrs.api_group.is_empty() {
        attrs.resource.clone()
    } else {
        format!("{}.{}", attrs.resource, attrs.api_group)
    };
    let status_message = if attrs.api_group.is_empty() && attrs.resource.is_empty() {
        format!("forbidden: {message}")
    } else if attrs.name.is_empty() {
        format!("{qualified} is forbidden: {message}")
    } else {
        format!("{qualified} {:?} is forbidden: {message}", attrs.name)
    };
    let mut details = Map::new();
    for (key, value) in [
        ("name", &attrs.name),
        ("group", &attrs.api_group),
        ("kind", &attrs.resource),
    ] {
        if !value.is_empty() {
            details.insert(key.into(), Value::String(value.clone()));
        }
    }
    ApiError {
        details: Value::Object(details),
        ..ApiError::new(403, "Forbidden", status_message)
    }
}

/// `forbiddenMessage`.
fn forbidden_message(user: &UserInfo, attrs: &RequestAttributes) -> String {
    if !attrs.resource_request {
        return format!(
            "User {:?} cannot {} path {:?}",
            user.name, attrs.verb, attrs.path
        );
    }
    let resource = if attrs.subresource.is_empty() {
        attrs.resource.clone()
    } else {
        format!("{}/{}", attrs.resource, attrs.subresource)
    };
    if attrs.namespace.is_empty() {
        format!(
            "User {:?} cannot {} resource {resource:?} in API group {:?} at the cluster scope",
            user.name, attrs.verb, attrs.api_group
        )
    } else {
        format!(
            "User {:?} cannot {} resource {resource:?} in API group {:?} in the namespace {:?}",
            user.name, attrs.verb, attrs.api_group, attrs.namespace
        )
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use http::Method;

    use super::*;

    fn refusal(method: Method, uri: &str, reason: &str) -> ApiError {
        let user = UserInfo::service_account("ml", "gantry", "u-1");
        forbidden(
            &user,
            &request_info::resolve(&method, &uri.parse().unwrap()),
            reason,
        )
    }

    #[test]
    fn a_refused_list_names_the_resource_the_user_the_verb_and_the_namespace() {
        let e = refusal(Method::GET, "/api/v1/namespaces/ml/secrets", "");
        assert_eq!((e.code, e.reason), (403, "Forbidden"));
        assert_eq!(
            e.message,
            "secrets is forbidden: User \"system:serviceaccount:ml:gantry\" cannot list resource \"secrets\" in API group \"\" in the namespace \"ml\""
        );
        assert_eq!(e.details, serde_json::json!({"kind": "secrets"}));
    }

    #[test]
    fn named_cluster_scoped_and_subresource_refusals_say_so() {
        let node = refusal(Method::GET, "/api/v1/nodes/n1", "");
        assert_eq!(
            node.message,
            "nodes \"n1\" is forbidden: User \"system:serviceaccount:ml:gantry\" cannot get resource \"nodes\" in API group \"\" at the cluster scope"
        );
        let forward = refusal(
            Method::POST,
            "/api/v1/namespaces/ml/pods/p1/portforward",
            "",
        );
        assert_eq!(
            forward.message,
            "pods \"p1\" is forbidden: User \"system:serviceaccount:ml:gantry\" cannot create resource \"pods/portforward\" in API group \"\" in the namespace \"ml\""
        );
        let deploy = refusal(
            Method::PATCH,
            "/apis/apps/v1/namespaces/ml/deployments/web",
            "RBAC: role.rbac.authorization.k8s.io \"gone\" not found",
        );
        assert_eq!(
            deploy.message,
            "deployments.apps \"web\" is forbidden: User \"system:serviceaccount:ml:gantry\" cannot patch resource \"deployments\" in API group \"apps\" in the namespace \"ml\": RBAC: role.rbac.authorization.k8s.io \"gone\" not found"
        );
        assert_eq!(
            deploy.details,
            serde_json::json!({"name": "web", "group": "apps", "kind": "deployments"})
        );
    }

    #[test]
    fn a_refused_path_is_forbidden_without_a_resource() {
        let e = refusal(Method::GET, "/metrics", "");
        assert_eq!(
            e.message,
            "forbidden: User \"system:serviceaccount:ml:gantry\" cannot get path \"/metrics\""
        );
    }
}
