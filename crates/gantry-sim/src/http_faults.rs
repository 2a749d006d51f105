//! The request-level part of fault injection and authentication, shared by both simulated APIs:
//! refuse requests without the current token, fail a percentage with 429 or 503, delay answers.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::{HeaderValue, StatusCode};
use rand::Rng;

use super::SimShared;

/// How one API spells its errors: the same faults, each API's own error shape.
pub trait ErrorShape: Send + Sync + 'static {
    fn error(&self, status: StatusCode, message: &str) -> Response;
    /// Paths anyone may read without a token (the Kubernetes API's `/version`, health checks).
    fn is_public(&self, _path: &str) -> bool {
        false
    }
    /// Whether the request carries a credential of this API's own, besides the simulator's
    /// token (a cluster's ServiceAccount tokens); it may note who sent it in the extensions.
    fn authenticate(&self, _request: &mut Request) -> bool {
        false
    }
}

#[derive(Clone)]
pub struct Gate {
    pub shared: SimShared,
    pub shape: Arc<dyn ErrorShape>,
}

pub async fn gate(State(gate): State<Gate>, mut request: Request, next: Next) -> Response {
    let faults = &gate.shared.faults;
    if let Some(delay) = faults.slow() {
        faults.fired("slow");
        tokio::time::sleep(delay).await;
    }
    let path = request.uri().path().to_string();
    if !gate.shape.is_public(&path) {
        let authorization = request
            .headers()
            .get(http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok());
        if !gate.shared.auth.accepts(authorization) && !gate.shape.authenticate(&mut request) {
            return gate.shape.error(StatusCode::UNAUTHORIZED, "Unauthorized");
        }
    }
    let (p429, p503) = (faults.http_429(), faults.http_503());
    if p429 > 0 || p503 > 0 {
        let roll: u8 = rand::rng().random_range(0..100);
        if roll < p429 {
            faults.fired("http-429");
            let mut response = gate.shape.error(
                StatusCode::TOO_MANY_REQUESTS,
                "Too many requests, please try again later.",
            );
            response
                .headers_mut()
                .insert(http::header::RETRY_AFTER, HeaderValue::from_static("1"));
            return response;
        }
        if roll < p429.saturating_add(p503) {
            faults.fired("http-503");
            return gate.shape.error(
                StatusCode::SERVICE_UNAVAILABLE,
                "The service is currently unavailable.",
            );
        }
    }
    next.run(request).await
}

/// A plain JSON response with a status.
pub fn json_response(status: StatusCode, body: &serde_json::Value) -> Response {
    let mut response = (status, Body::from(body.to_string())).into_response();
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}
