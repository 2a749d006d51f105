//! What a Google service account may do with the Container API. The simulator does not keep
//! IAM policies; it keeps the two cases a GKE pod meets. A pod whose Kubernetes service account
//! is bound to a Google service account by Workload Identity acts as that account, granted what
//! the team granted it (`gcloud projects add-iam-policy-binding …`): allowed. A pod without
//! such a binding gets its node's default account, whose token carries only the node's default
//! scopes (storage read, logging, monitoring): the Container API refuses it with 403 and
//! `ACCESS_TOKEN_SCOPE_INSUFFICIENT`, as Google does.

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use http::StatusCode;

use super::errors::GoogleAccount;
use crate::http_faults::json_response;

/// The Compute Engine default service account's email ends so (`NUMBER-compute@…`).
const NODE_DEFAULT: &str = "-compute@developer.gserviceaccount.com";

pub async fn scopes(request: Request, next: Next) -> Response {
    let refused = request
        .extensions()
        .get::<GoogleAccount>()
        .is_some_and(|GoogleAccount(email)| email.ends_with(NODE_DEFAULT));
    if refused {
        // Google's answer, its ErrorInfo included (clients read the reason).
        let body = serde_json::json!({"error": {
            "code": 403,
            "message": "Request had insufficient authentication scopes.",
            "status": "PERMISSION_DENIED",
            "details": [{
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": "ACCESS_TOKEN_SCOPE_INSUFFICIENT",
                "domain": "googleapis.com",
                "metadata": {"service": "container.googleapis.com"},
            }],
        }});
        return json_response(StatusCode::FORBIDDEN, &body);
    }
    next.run(request).await
}
