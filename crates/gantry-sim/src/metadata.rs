//! The metadata server a GKE node gives its pods, for process pods: the project, the cluster,
//! the instance, and the service account's token, at the paths Compute Engine and GKE serve
//! them (`/computeMetadata/v1/...`). It answers only requests that say `Metadata-Flavor:
//! Google` and carry no `X-Forwarded-For` (403 otherwise, as Google's does), and says
//! `Metadata-Flavor: Google` on every answer. What google-cloud-auth's metadata credentials
//! ask (`mds/client.rs`): `instance/service-accounts/default/{token,email}` and
//! `universe/universe-domain`. One server per pod, on the pod's own address, so each pod is
//! told its own identity; `GCE_METADATA_HOST` tells the pod where.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use axum::Router;
use axum::extract::{Query, State};
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::auth::TokenAuthority;
use crate::faults::Faults;
use crate::kube::process::GoogleIdentity;

const FLAVOR: &str = "metadata-flavor";
const PREFIX: &str = "/computeMetadata/v1/";
/// The scope GKE nodes are created with (`--scopes=cloud-platform`).
const SCOPE: &str = "https://www.googleapis.com/auth/cloud-platform";
/// An access token's life when the cloud's token does not rotate: Google's hour, less the
/// second the metadata server keeps in hand.
const TOKEN_SECONDS: u64 = 3599;

/// What one pod's metadata server knows.
#[derive(Clone)]
pub struct Metadata {
    /// The project, and the account as the pod started (`account` says which it is now).
    pub identity: GoogleIdentity,
    /// The account now: GKE's metadata server reads the Workload Identity binding when asked,
    /// so a ServiceAccount annotated later acts as its Google account from then on.
    pub account: Arc<dyn Fn() -> String + Send + Sync>,
    pub cluster_name: String,
    /// The cluster's location (a zone or a region), as `cluster-location` gives it.
    pub cluster_location: String,
    /// The node's zone and name.
    pub zone: String,
    pub instance: String,
    pub auth: Arc<TokenAuthority>,
    pub faults: Arc<Faults>,
}

/// Serves `metadata` on `ip` (a port the OS picks) until `stop`; the address it listens on.
pub async fn serve(
    ip: IpAddr,
    metadata: Metadata,
    stop: CancellationToken,
) -> std::io::Result<SocketAddr> {
    let listener = tokio::net::TcpListener::bind(SocketAddr::new(ip, 0)).await?;
    let address = listener.local_addr()?;
    let router = Router::new()
        .fallback(answer)
        .with_state(Arc::new(metadata));
    tokio::spawn(async move {
        let served = axum::serve(listener, router)
            .with_graceful_shutdown(async move { stop.cancelled().await })
            .await;
        if let Err(e) = served {
            tracing::warn!(error = %e, "a pod's metadata server stopped");
        }
    });
    Ok(address)
}

type Params = std::collections::HashMap<String, String>;

async fn answer(
    State(metadata): State<Arc<Metadata>>,
    uri: Uri,
    headers: HeaderMap,
    Query(params): Query<Params>,
) -> Response {
    let path = uri.path();
    if headers.contains_key("x-forwarded-for") {
        return text(
            StatusCode::FORBIDDEN,
            "Request denied: X-Forwarded-For header present.",
        );
    }
    let flavored = headers
        .get(FLAVOR)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("Google"));
    if !flavored {
        return text(
            StatusCode::FORBIDDEN,
            "Missing Metadata-Flavor:Google header.",
        );
    }
    if path == "/" {
        return text(StatusCode::OK, "computeMetadata/\n");
    }
    let Some(rest) = path.strip_prefix(PREFIX) else {
        return not_found();
    };
    let m = &metadata;
    let email = (m.account)();
    let value = match rest.split('/').collect::<Vec<_>>().as_slice() {
        ["project", "project-id"] => m.identity.project.clone(),
        ["project", "numeric-project-id"] => m.identity.project_number.to_string(),
        ["instance", "attributes", "cluster-name"] => m.cluster_name.clone(),
        ["instance", "attributes", "cluster-location"] => m.cluster_location.clone(),
        ["instance", "zone"] => format!("projects/{}/zones/{}", m.identity.project_number, m.zone),
        ["instance", "name"] => m.instance.clone(),
        ["instance", "hostname"] => format!("{}.c.{}.internal", m.instance, m.identity.project),
        ["instance", "service-accounts", ""] => format!("default/\n{email}/\n"),
        ["instance", "service-accounts", account, rest @ ..] if is_ours(&email, account) => {
            return service_account(m, &email, rest, &params);
        }
        ["universe", "universe-domain"] => "googleapis.com".to_string(),
        _ => return not_found(),
    };
    text(StatusCode::OK, &value)
}

fn is_ours(email: &str, account: &str) -> bool {
    account == "default" || account == email
}

/// `instance/service-accounts/{default,EMAIL}/...`.
fn service_account(m: &Metadata, email: &str, rest: &[&str], params: &Params) -> Response {
    let recursive = params.get("recursive").is_some_and(|v| v == "true");
    match rest {
        [] | [""] if recursive => json_answer(&json!({
            "aliases": ["default"],
            "email": email,
            "scopes": [SCOPE],
        })),
        [] | [""] => text(StatusCode::OK, "aliases\nemail\nidentity\nscopes\ntoken\n"),
        ["aliases"] => text(StatusCode::OK, "default\n"),
        ["email"] => text(StatusCode::OK, email),
        ["scopes"] => text(StatusCode::OK, &format!("{SCOPE}\n")),
        ["token"] => {
            // However the token rotates (`token-expiry`), it lives no longer than a period.
            let lifetime = m
                .faults
                .token_expiry()
                .map_or(TOKEN_SECONDS, |d| d.as_secs().max(1));
            json_answer(&json!({
                "access_token": m.auth.token_of(email),
                "expires_in": lifetime,
                "token_type": "Bearer",
            }))
        }
        _ => not_found(),
    }
}

fn flavored(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(FLAVOR, HeaderValue::from_static("Google"));
    headers.insert(
        header::SERVER,
        HeaderValue::from_static("Metadata Server for VM"),
    );
    response
}

fn text(status: StatusCode, body: &str) -> Response {
    flavored(
        (
            status,
            [(header::CONTENT_TYPE, "application/text")],
            body.to_string(),
        )
            .into_response(),
    )
}

fn json_answer(body: &serde_json::Value) -> Response {
    flavored(
        (
            StatusCode::OK,
            [(header::CONTENT_TYPE, "application/json")],
            body.to_string(),
        )
            .into_response(),
    )
}

fn not_found() -> Response {
    text(StatusCode::NOT_FOUND, "Not Found")
}

/// How long a metadata answer may take in the tests that ask for one.
#[cfg(test)]
const PATIENCE: std::time::Duration = std::time::Duration::from_secs(10);

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::net::Ipv4Addr;

    async fn server() -> (SocketAddr, Arc<TokenAuthority>, CancellationToken) {
        let auth = TokenAuthority::new(None).unwrap();
        let stop = CancellationToken::new();
        let metadata = Metadata {
            identity: GoogleIdentity {
                project: "demo-project".into(),
                project_number: 123_456_789_012,
                email: "123456789012-compute@developer.gserviceaccount.com".into(),
            },
            cluster_name: "ml".into(),
            cluster_location: "us-central1-a".into(),
            zone: "us-central1-a".into(),
            instance: "gke-ml-default-pool-1".into(),
            account: Arc::new(|| "123456789012-compute@developer.gserviceaccount.com".to_string()),
            auth: auth.clone(),
            faults: Arc::default(),
        };
        let address = serve(IpAddr::V4(Ipv4Addr::LOCALHOST), metadata, stop.clone())
            .await
            .unwrap();
        (address, auth, stop)
    }

    /// A GET with these headers: status, the answer's Metadata-Flavor, body.
    async fn get(
        address: SocketAddr,
        path: &str,
        headers: &[(&str, &str)],
    ) -> (u16, String, String) {
        let exchange = async {
            let stream = tokio::net::TcpStream::connect(address).await.unwrap();
            let io = hyper_util::rt::TokioIo::new(stream);
            let (mut sender, connection) = hyper::client::conn::http1::handshake(io).await.unwrap();
            tokio::spawn(connection);
            let mut request = http::Request::get(path).header("host", "metadata.google.internal");
            for (k, v) in headers {
                request = request.header(*k, *v);
            }
            let request = request
                .body(http_body_util::Empty::<bytes::Bytes>::new())
                .unwrap();
            let response = sender.send_request(request).await.unwrap();
            let status = response.status().as_u16();
            let flavor = response
                .headers()
                .get(FLAVOR)
                .map(|v| v.to_str().unwrap().to_string())
                .unwrap_or_default();
            use http_body_util::BodyExt;
            let body = response.into_body().collect().await.unwrap().to_bytes();
            (status, flavor, String::from_utf8_lossy(&body).into_owned())
        };
        tokio::time::timeout(PATIENCE, exchange).await.unwrap()
    }

    const GOOGLE: &[(&str, &str)] = &[("Metadata-Flavor", "Google")];

    #[tokio::test]
    async fn the_token_is_the_account_s_own_and_follows_the_rotation() {
        let (address, auth, stop) = server().await;
        let path = "/computeMetadata/v1/instance/service-accounts/default/token?scopes=x";
        let (status, flavor, body) = get(address, path, GOOGLE).await;
        assert_eq!((status, flavor.as_str()), (200, "Google"));
        let token: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(token["token_type"], "Bearer");
        assert_eq!(token["expires_in"], TOKEN_SECONDS);
        let bearer = format!("Bearer {}", token["access_token"].as_str().unwrap());
        assert!(
            !auth.accepts(Some(&bearer)),
            "never the simulator's own token"
        );
        let email = auth.account_of(Some(&bearer)).unwrap();
        assert!(
            email.ends_with("-compute@developer.gserviceaccount.com"),
            "{email}"
        );
        auth.rotate().unwrap();
        assert_eq!(auth.account_of(Some(&bearer)), None, "rotated out");
        let (_, _, body) = get(address, path, GOOGLE).await;
        let rotated: serde_json::Value = serde_json::from_str(&body).unwrap();
        let rotated = format!("Bearer {}", rotated["access_token"].as_str().unwrap());
        assert_eq!(auth.account_of(Some(&rotated)), Some(email));
        stop.cancel();
    }

    #[tokio::test]
    async fn a_request_without_the_flavor_header_or_with_a_forwarded_for_is_refused() {
        let (address, _, stop) = server().await;
        let path = "/computeMetadata/v1/instance/service-accounts/default/token";
        let (status, flavor, body) = get(address, path, &[]).await;
        assert_eq!((status, flavor.as_str()), (403, "Google"));
        assert!(
            body.contains("Missing Metadata-Flavor:Google header"),
            "{body}"
        );
        assert!(!body.contains("ya29"), "{body}");
        let forwarded = [
            ("Metadata-Flavor", "Google"),
            ("X-Forwarded-For", "10.0.0.1"),
        ];
        assert_eq!(get(address, path, &forwarded).await.0, 403);
        stop.cancel();
    }

    #[tokio::test]
    async fn the_project_cluster_and_account_are_where_gke_serves_them() {
        let (address, _, stop) = server().await;
        let value = async |path: &str| {
            let (status, _, body) = get(address, &format!("{PREFIX}{path}"), GOOGLE).await;
            assert_eq!(status, 200, "{path}: {body}");
            body
        };
        assert_eq!(value("project/project-id").await, "demo-project");
        assert_eq!(value("project/numeric-project-id").await, "123456789012");
        assert_eq!(value("instance/attributes/cluster-name").await, "ml");
        assert_eq!(
            value("instance/attributes/cluster-location").await,
            "us-central1-a"
        );
        assert_eq!(
            value("instance/service-accounts/default/email").await,
            "123456789012-compute@developer.gserviceaccount.com"
        );
        assert_eq!(value("universe/universe-domain").await, "googleapis.com");
        assert_eq!(
            value("instance/zone").await,
            "projects/123456789012/zones/us-central1-a"
        );
        let recursive: serde_json::Value =
            serde_json::from_str(&value("instance/service-accounts/default/?recursive=true").await)
                .unwrap();
        assert_eq!(recursive["scopes"][0], SCOPE);
        let (status, _, _) = get(address, &format!("{PREFIX}instance/nothing"), GOOGLE).await;
        assert_eq!(status, 404);
        stop.cancel();
    }
}
