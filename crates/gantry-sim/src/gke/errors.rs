//! Errors in Google's JSON shape: `{"error": {"code": 404, "message": "...", "status": "NOT_FOUND"}}`.
//! The official clients read `status` for the canonical code, so it must be one of google.rpc.Code's
//! names, and `code` the HTTP status.

use axum::response::{IntoResponse, Response};
use http::{HeaderValue, StatusCode};

use crate::http_faults::{ErrorShape, json_response};

/// google.rpc.Code values the simulated GKE uses in operation errors.
pub mod rpc_code {
    pub const CANCELLED: i32 = 1;
    pub const RESOURCE_EXHAUSTED: i32 = 8;
    pub const INTERNAL: i32 = 13;
}

/// A failed request, answered with the HTTP status and google.rpc.Code name GKE would use.
#[derive(Debug, Clone, PartialEq)]
pub struct GkeError {
    pub http: StatusCode,
    pub status: &'static str,
    pub message: String,
}

impl GkeError {
    fn new(http: StatusCode, status: &'static str, message: impl Into<String>) -> Self {
        Self {
            http,
            status,
            message: message.into(),
        }
    }

    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "INVALID_ARGUMENT", message)
    }

    pub fn failed_precondition(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "FAILED_PRECONDITION", message)
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, "NOT_FOUND", message)
    }

    pub fn already_exists(message: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, "ALREADY_EXISTS", message)
    }

    pub fn permission_denied(message: impl Into<String>) -> Self {
        Self::new(StatusCode::FORBIDDEN, "PERMISSION_DENIED", message)
    }

    /// A part of the API the simulated GKE does not carry out (rather than pretend it did).
    pub fn unimplemented(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_IMPLEMENTED, "UNIMPLEMENTED", message)
    }

    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, "INTERNAL", message)
    }

    /// What Google answers for a URL no API method is bound to.
    pub fn no_such_method(method: &http::Method, path: &str) -> Self {
        Self::not_found(format!("Method {method} {path} is not found."))
    }
}

impl IntoResponse for GkeError {
    fn into_response(self) -> Response {
        let body = serde_json::json!({
            "error": {
                "code": self.http.as_u16(),
                "message": self.message,
                "status": self.status,
            }
        });
        json_response(self.http, &body)
    }
}

/// The google.rpc.Code name Google's front end pairs with an HTTP status.
fn status_name(http: StatusCode) -> &'static str {
    match http {
        StatusCode::BAD_REQUEST => "INVALID_ARGUMENT",
        StatusCode::UNAUTHORIZED => "UNAUTHENTICATED",
        StatusCode::FORBIDDEN => "PERMISSION_DENIED",
        StatusCode::NOT_FOUND => "NOT_FOUND",
        StatusCode::CONFLICT => "ALREADY_EXISTS",
        StatusCode::TOO_MANY_REQUESTS => "RESOURCE_EXHAUSTED",
        StatusCode::SERVICE_UNAVAILABLE => "UNAVAILABLE",
        StatusCode::GATEWAY_TIMEOUT => "DEADLINE_EXCEEDED",
        StatusCode::NOT_IMPLEMENTED => "UNIMPLEMENTED",
        _ => "INTERNAL",
    }
}

/// The message Google's front end gives for a missing, expired or wrong token.
const UNAUTHENTICATED_MESSAGE: &str = "Request had invalid authentication credentials. Expected \
OAuth 2 access token, login cookie or other valid authentication credential. See \
https://developers.google.com/identity/sign-in/web/devconsole-project.";

/// How the shared request gate (auth, 429/503, slow) spells its errors for GKE; it also knows
/// the Google service accounts' tokens (a pod's, from its metadata server).
#[derive(Debug, Clone)]
pub struct GoogleErrors {
    pub auth: std::sync::Arc<crate::auth::TokenAuthority>,
}

/// The Google service account a request came from (a pod's), when not the simulator's owner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoogleAccount(pub String);

impl ErrorShape for GoogleErrors {
    fn authenticate(&self, request: &mut axum::extract::Request) -> bool {
        let authorization = request
            .headers()
            .get(http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok());
        match self.auth.account_of(authorization) {
            Some(email) => {
                request.extensions_mut().insert(GoogleAccount(email));
                true
            }
            None => false,
        }
    }

    fn error(&self, status: StatusCode, message: &str) -> Response {
        let message = if status == StatusCode::UNAUTHORIZED {
            UNAUTHENTICATED_MESSAGE
        } else {
            message
        };
        let mut response = GkeError::new(status, status_name(status), message).into_response();
        if status == StatusCode::UNAUTHORIZED {
            // Google names the realm to fetch a token from; some clients look for the header.
            response.headers_mut().insert(
                http::header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"https://accounts.google.com/\""),
            );
        }
        response
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[tokio::test]
    async fn renders_google_error_json() {
        let response =
            GkeError::not_found("Not found: projects/p/locations/l/clusters/c.").into_response();
        assert_eq!(response.status(), StatusCode::NOT_FOUND);
        let bytes = axum::body::to_bytes(response.into_body(), 1 << 16)
            .await
            .unwrap();
        let body: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(body["error"]["code"], 404);
        assert_eq!(body["error"]["status"], "NOT_FOUND");
        assert!(
            body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("clusters/c")
        );
    }

    #[test]
    fn gate_errors_use_canonical_names() {
        let shape = GoogleErrors {
            auth: crate::auth::TokenAuthority::new(None).unwrap(),
        };
        let response = shape.error(StatusCode::UNAUTHORIZED, "Unauthorized");
        assert!(
            response
                .headers()
                .contains_key(http::header::WWW_AUTHENTICATE)
        );
        assert_eq!(
            status_name(StatusCode::TOO_MANY_REQUESTS),
            "RESOURCE_EXHAUSTED"
        );
        assert_eq!(status_name(StatusCode::SERVICE_UNAVAILABLE), "UNAVAILABLE");
    }
}
