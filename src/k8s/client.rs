//! The one builder of `kube::Client`s: every cluster Gantry talks to (GKE's, a kubeconfig
//! context's, the simulator's) gets the same stack. It is kube's default one — base URI, the
//! kubeconfig's own authentication (exec plugins, tokens, client certificates) and extra headers,
//! kube's retry of 429/503/504, connect/read/write timeouts, rustls with the cluster's CA, a debug
//! span per request — built here for one setting kube does not expose: how many idle
//! connections are kept. Following thousands of pods opens a stream per pod in turn; hyper would
//! keep every connection those streams used, each with its TLS state and buffers. Like client-go
//! (`MaxIdleConnsPerHost`), Gantry keeps 25.
//!
//! Not carried over from kube's stack: proxies (`proxy-url`, `HTTPS_PROXY`), gzip, and the
//! expiry of a client certificate an exec plugin hands out (kube's is crate-private).

use http::{Request, Response};
use http_body_util::BodyExt;
use hyper_util::client::legacy::Client as HttpClient;
use hyper_util::rt::TokioExecutor;
use kube::client::retry::RetryPolicy;
use kube::client::{Body, ClientBuilder, ConfigExt, DynBody};
use tower::retry::RetryLayer;
use tower::util::BoxService;
use tower::{BoxError, ServiceBuilder};
use tower_http::trace::TraceLayer;

/// Idle connections kept for reuse (client-go's `MaxIdleConnsPerHost`).
const IDLE_CONNECTIONS: usize = 25;

pub type HttpStack = BoxService<Request<Body>, Response<Box<DynBody>>, BoxError>;
type TracedBody = tower_http::trace::ResponseBody<
    hyper::body::Incoming,
    tower_http::classify::NeverClassifyEos<tower_http::classify::ServerErrorsFailureClass>,
>;

/// A client builder for `config`'s cluster; add layers (a token, say) and `build()` it. Needs
/// a Tokio runtime.
pub fn builder(config: &kube::Config) -> Result<ClientBuilder<HttpStack>, kube::Error> {
    let mut connector = hyper_timeout::TimeoutConnector::new(config.rustls_https_connector()?);
    connector.set_connect_timeout(config.connect_timeout);
    connector.set_read_timeout(config.read_timeout);
    connector.set_write_timeout(config.write_timeout);
    let http: HttpClient<_, Body> = HttpClient::builder(TokioExecutor::new())
        .pool_max_idle_per_host(IDLE_CONNECTIONS)
        .build(connector);
    let stack: HttpStack = ServiceBuilder::new()
        .boxed()
        .layer(config.base_uri_layer())
        .option_layer(
            config
                .default_retry
                .then_some(RetryLayer::new(RetryPolicy::server_retry())),
        )
        .option_layer(config.auth_layer()?)
        .layer(config.extra_headers_layer()?)
        .map_err(BoxError::from)
        .map_response(|response: Response<_>| {
            response.map(|body: TracedBody| Box::new(body.map_err(BoxError::from)) as Box<DynBody>)
        })
        // As kube's own stack: a debug span per request (method, URI, status, latency) in
        // gantry.log, an error event for a failed one. The default spans carry no header.
        .layer(TraceLayer::new_for_http())
        .service(http);
    Ok(ClientBuilder::new(stack, config.default_namespace.clone()))
}
