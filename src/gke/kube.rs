//! A `kube::Client` for a RUNNING GKE cluster: `https://{endpoint}`, trusting the cluster's CA
//! (`masterAuth.clusterCaCertificate`), with an OAuth access token put on each request by a tower
//! layer. The token comes from [`Auth`], which refreshes it before it expires (google-cloud-auth's
//! cache, or the token file re-read when it changes); after a 401 the layer invalidates it and
//! sends the request once more with a fresh one. The token is never logged nor written anywhere.
//!
//! kube's own `auth_info.token` is fixed for the client's life, hence the layer. The layer must
//! await the token before calling the stack below it, so that stack goes behind a
//! `tower::buffer::Buffer` (a cloneable handle to it).
//!
//! The stack below is kube's default one (base URI, its retry of 429/503/504, connect and write
//! timeouts, rustls with the cluster's CA) but built here, for one setting kube does not expose:
//! how many idle connections are kept. Following thousands of pods opens a stream per pod in
//! turn; hyper would keep every connection those streams used, each with its TLS state and
//! buffers. Like client-go (`MaxIdleConnsPerHost`), Gantry keeps 25.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use base64::Engine;
use google_cloud_container_v1::model::Cluster;
use http::header::AUTHORIZATION;
use http::{Request, Response, StatusCode};
use http_body_util::BodyExt;
use hyper_util::client::legacy::Client as HttpClient;
use hyper_util::rt::TokioExecutor;
use kube::client::retry::RetryPolicy;
use kube::client::{Body, ClientBuilder, ConfigExt, DynBody};
use tower::buffer::Buffer;
use tower::retry::RetryLayer;
use tower::util::BoxService;
use tower::{BoxError, Layer, Service, ServiceBuilder, ServiceExt};
use tower_http::trace::TraceLayer;

use super::{Auth, ClusterRef, ClusterStatus, GkeError};

/// Requests queued for kube's stack before callers wait.
const BUFFER: usize = 1024;
/// Idle connections kept for reuse (client-go's `MaxIdleConnsPerHost`).
const IDLE_CONNECTIONS: usize = 25;

/// The client for a RUNNING cluster. Needs a Tokio runtime (the buffer runs as a task).
pub fn kube_client(
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
    let stack = http_stack(&config).map_err(|e| fail(e.to_string()))?;
    Ok(ClientBuilder::new(stack, config.default_namespace)
        .with_layer(&TokenLayer { auth: auth.clone() })
        .build())
}

/// kube's default HTTP stack, with at most `IDLE_CONNECTIONS` idle connections kept.
type HttpStack = BoxService<Request<Body>, Response<Box<DynBody>>, BoxError>;
type TracedBody = tower_http::trace::ResponseBody<
    hyper::body::Incoming,
    tower_http::classify::NeverClassifyEos<tower_http::classify::ServerErrorsFailureClass>,
>;

fn http_stack(config: &kube::Config) -> Result<HttpStack, kube::Error> {
    let mut connector = hyper_timeout::TimeoutConnector::new(config.rustls_https_connector()?);
    connector.set_connect_timeout(config.connect_timeout);
    connector.set_read_timeout(config.read_timeout);
    connector.set_write_timeout(config.write_timeout);
    let http: HttpClient<_, Body> = HttpClient::builder(TokioExecutor::new())
        .pool_max_idle_per_host(IDLE_CONNECTIONS)
        .build(connector);
    Ok(ServiceBuilder::new()
        .boxed()
        .layer(config.base_uri_layer())
        .layer(RetryLayer::new(RetryPolicy::server_retry()))
        .map_err(BoxError::from)
        .map_response(|response: Response<_>| {
            response.map(|body: TracedBody| Box::new(body.map_err(BoxError::from)) as Box<DynBody>)
        })
        // As kube's own stack: a debug span per request (method, URI, status, latency) in
        // gantry.log, an error event for a failed one. The default spans carry no header.
        .layer(TraceLayer::new_for_http())
        .service(http))
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
