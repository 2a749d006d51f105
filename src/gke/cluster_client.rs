//! A `kube::Client` for a RUNNING GKE cluster: `https://{endpoint}`, trusting the cluster's CA
//! (`masterAuth.clusterCaCertificate`), with an OAuth access token put on each request by a tower
//! layer. The token comes from [`Auth`], which refreshes it before it expires (google-cloud-auth's
//! cache, or the token file re-read when it changes); after a 401 the layer invalidates it and
//! sends the request once more with a fresh one. The token is never logged nor written anywhere.
//!
//! kube's own `auth_info.token` is fixed for the client's life, hence the layer. The layer must
//! await the token before calling the stack below it, so that stack goes behind a
//! `tower::buffer::Buffer` (a cloneable handle to it). The stack itself is the one every cluster
//! client has ([`crate::k8s::client`]).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use base64::Engine;
use google_cloud_container_v1::model::Cluster;
use http::header::AUTHORIZATION;
use http::{Request, Response, StatusCode};
use kube::client::{Body, DynBody};
use tower::buffer::Buffer;
use tower::{BoxError, Layer, Service, ServiceExt};

use super::{Auth, ClusterRef, ClusterStatus, GkeError};

/// Requests queued for kube's stack before callers wait.
const BUFFER: usize = 1024;

/// The client for a RUNNING cluster. Needs a Tokio runtime (the buffer runs as a task).
pub fn cluster_client(
    target: &ClusterRef,
    cluster: &Cluster,
    auth: &Auth,
) -> Result<kube::Client, GkeError> {
    let fail = |message: String| GkeError::Kube {
        cluster: target.to_string(),
        message,
    };
    let status = ClusterStatus::from_api(&cluster.status);
    if !status.serves_api() {
        return Err(GkeError::NotReady {
            cluster: target.to_string(),
            status,
            message: "it must be RUNNING; create it with `gantry up --wait`".into(),
        });
    }
    if cluster.endpoint.is_empty() {
        return Err(fail("GKE gives no endpoint for it yet".into()));
    }
    let ca = cluster
        .master_auth
        .as_ref()
        .map(|m| m.cluster_ca_certificate.as_str())
        .filter(|c| !c.is_empty())
        .ok_or_else(|| fail("GKE gives no cluster CA certificate".into()))?;
    let roots = ca_certificates(ca).map_err(fail)?;
    let url = format!("https://{}", cluster.endpoint)
        .parse()
        .map_err(|e| fail(format!("endpoint {}: {e}", cluster.endpoint)))?;
    let mut config = kube::Config::new(url);
    config.root_cert = Some(roots);
    config.default_namespace = "default".into();
    Ok(crate::k8s::client::builder(&config)
        .map_err(|e| fail(e.to_string()))?
        .with_layer(&TokenLayer { auth: auth.clone() })
        .build())
}

/// The DER certificates of `masterAuth.clusterCaCertificate` (base64 of a PEM bundle).
pub fn ca_certificates(base64_pem: &str) -> Result<Vec<Vec<u8>>, String> {
    let pem = base64::engine::general_purpose::STANDARD
        .decode(base64_pem.trim())
        .map_err(|e| format!("the cluster CA certificate is not base64: {e}"))?;
    let certs: Vec<Vec<u8>> = rustls_pemfile::certs(&mut pem.as_slice())
        .map(|c| c.map(|der| der.to_vec()))
        .collect::<Result<_, _>>()
        .map_err(|e| format!("the cluster CA certificate is not PEM: {e}"))?;
    if certs.is_empty() {
        return Err("the cluster CA certificate holds no certificate".into());
    }
    Ok(certs)
}

/// Puts `Authorization: Bearer …` on every request.
#[derive(Clone)]
pub struct TokenLayer {
    auth: Auth,
}

impl<S> Layer<S> for TokenLayer
where
    S: Service<Request<Body>, Response = Response<Box<DynBody>>> + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<BoxError> + Send + Sync,
{
    type Service = TokenService<S::Future>;

    fn layer(&self, inner: S) -> Self::Service {
        TokenService {
            inner: Buffer::new(inner, BUFFER),
            auth: self.auth.clone(),
        }
    }
}

pub struct TokenService<F> {
    inner: Buffer<Request<Body>, F>,
    auth: Auth,
}

impl<F, E> Service<Request<Body>> for TokenService<F>
where
    F: Future<Output = Result<Response<Box<DynBody>>, E>> + Send + 'static,
    E: Into<BoxError>,
{
    type Response = Response<Box<DynBody>>;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request<Body>) -> Self::Future {
        let auth = self.auth.clone();
        let retry = copy(&request);
        // `poll_ready` reserved a slot in this handle: the future takes it, and leaves a fresh
        // handle behind; the retry after a 401 uses a handle of its own.
        let spare = self.inner.clone();
        let mut ready = std::mem::replace(&mut self.inner, spare.clone());
        Box::pin(async move {
            request
                .headers_mut()
                .insert(AUTHORIZATION, bearer(&auth).await?);
            let response = ready.call(request).await?;
            if response.status() != StatusCode::UNAUTHORIZED {
                return Ok(response);
            }
            tracing::debug!("the cluster refused the token; refreshing it");
            auth.invalidate();
            let Some(mut retry) = retry else {
                return Ok(response);
            };
            retry
                .headers_mut()
                .insert(AUTHORIZATION, bearer(&auth).await?);
            spare.oneshot(retry).await
        })
    }
}

impl<F: Send + 'static> Clone for TokenService<F> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
            auth: self.auth.clone(),
        }
    }
}

async fn bearer(auth: &Auth) -> Result<http::HeaderValue, BoxError> {
    auth.authorization().await.map_err(BoxError::from)
}

/// A copy of a request whose body can be sent twice (kube's bodies are in memory), or `None`.
fn copy(request: &Request<Body>) -> Option<Request<Body>> {
    let body = request.body().try_clone()?;
    let mut copy = Request::new(body);
    *copy.method_mut() = request.method().clone();
    *copy.uri_mut() = request.uri().clone();
    *copy.version_mut() = request.version();
    *copy.headers_mut() = request.headers().clone();
    Some(copy)
}
