//! The pod proxy, `/api/v1/namespaces/NS/pods/NAME[:PORT]/proxy/PATH`: the API server forwards
//! the request to the pod's IP and port (kubernetes `pkg/registry/core/pod/strategy.go`,
//! `ResourceLocation`: the name is `name`, `name:port` or `scheme:name:port`) and hands back its
//! answer as it is. The simulated pods serve nothing but GKE's DCGM exporter (`kube::dcgm`), at
//! its port: every other pod or port refuses the connection, as a pod listening on none would.

use axum::body::Body;
use axum::response::{IntoResponse, Response};
use http::{HeaderValue, Method, StatusCode};
use serde_json::Value;

use crate::kube::cluster::ClusterState;
use crate::kube::controllers::kubelet::is_terminal;
use crate::kube::dcgm;
use crate::kube::errors::ApiError;
use crate::kube::resources::Kind;

/// Answers a request the API server proxies to pod `target` of `namespace`, for `path`.
pub fn serve(
    state: &ClusterState,
    method: &Method,
    namespace: &str,
    target: &str,
    path: &[&str],
) -> Response {
    let parts: Vec<&str> = target.split(':').collect();
    let (name, port) = match parts.as_slice() {
        [name] => (*name, None),
        [name, port] => (*name, Some(*port)),
        [_scheme, name, port] => (*name, Some(*port)),
        _ => {
            return ApiError::new(400, "BadRequest", format!("invalid pod request {target:?}"))
                .into_response();
        }
    };
    let Some(pod) = state.store.get(Kind::Pod, namespace, name) else {
        return ApiError::not_found(Kind::Pod.resource(), name).into_response();
    };
    let ip = pod["status"]["podIP"].as_str().unwrap_or_default();
    if ip.is_empty() || is_terminal(&pod) {
        return ApiError::new(
            400,
            "BadRequest",
            format!("pod {name} does not have a host assigned"),
        )
        .into_response();
    }
    // As ResourceLocation: no port given, the pod's first container port.
    let port = port
        .map(str::to_string)
        .or_else(|| first_port(&pod).map(|p| p.to_string()))
        .unwrap_or_default();
    let serving = dcgm::is_exporter(&pod)
        && pod["status"]["phase"] == "Running"
        && port == dcgm::PORT.to_string();
    if !serving {
        return ApiError::new(
            503,
            "ServiceUnavailable",
            format!(
                "error trying to reach service: dial tcp {ip}:{port}: connect: connection refused"
            ),
        )
        .into_response();
    }
    if method != Method::GET && method != Method::HEAD {
        return text(
            StatusCode::METHOD_NOT_ALLOWED,
            "Method Not Allowed\n".into(),
        );
    }
    let node = pod["spec"]["nodeName"].as_str().unwrap_or_default();
    match path {
        ["metrics"] => match dcgm::exposition(state, node, jiff::Timestamp::now()) {
            Some(body) => {
                let mut response = text(StatusCode::OK, body);
                response.headers_mut().insert(
                    http::header::CONTENT_TYPE,
                    HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
                );
                response
            }
            None => text(StatusCode::OK, String::new()),
        },
        [] | [""] => text(
            StatusCode::OK,
            "<html><head><title>DCGM Exporter</title></head><body><h1>DCGM Exporter</h1><p><a href=\"./metrics\">Metrics</a></p></body></html>".into(),
        ),
        _ => text(StatusCode::NOT_FOUND, "404 page not found\n".into()),
    }
}

fn first_port(pod: &Value) -> Option<u64> {
    pod.pointer("/spec/containers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .flat_map(|c| c["ports"].as_array().into_iter().flatten())
        .find_map(|p| p["containerPort"].as_u64())
}

fn text(status: StatusCode, body: String) -> Response {
    let mut response = (status, Body::from(body)).into_response();
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}
