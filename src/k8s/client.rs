//! The one builder of `kube::Client`s: every cluster Gantry talks to (GKE's, a kubeconfig
//! context's, the simulator's) gets the same stack. It is kube's default one — base URI, the
//! kubeconfig's own authentication (exec plugins, tokens, client certificates) and extra headers,
//! kube's retry of 429/503/504, connect/read/write timeouts, rustls with the cluster's CA, a debug
//! span per request — built here for one setting kube does not expose: how many idle
//! connections are kept. Following thousands of pods opens a stream per pod in turn; hyper would
//! keep every connection those streams used, each with its TLS state and buffers. Like client-go
//! (`MaxIdleConnsPerHost`), Gantry keeps 25, and lets one go once it has waited 10 s unused:
//! hyper reaps idle connections only with a timer, and without one a TUI at rest held every
//! connection its log streams had used (about 50 KB each) for as long as it ran.
//!
//! Not carried over from kube's stack: proxies (`proxy-url`, `HTTPS_PROXY`), gzip, and the
//! expiry of a client certificate an exec plugin hands out (kube's is crate-private).

use std::time::Duration;

use http::{Request, Response};
use http_body_util::BodyExt;
use hyper_util::client::legacy::Client as HttpClient;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use kube::client::retry::RetryPolicy;
use kube::client::{Body, ClientBuilder, ConfigExt, DynBody};
use tower::retry::RetryLayer;
use tower::util::BoxService;
use tower::{BoxError, ServiceBuilder};
use tower_http::trace::TraceLayer;

/// Idle connections kept for reuse (client-go's `MaxIdleConnsPerHost`).
const IDLE_CONNECTIONS: usize = 25;
/// How long an idle connection is kept. Over HTTP/1.1 a connection carries one stream at a time,
/// and a stream's place passes to the next pod at once: a connection unused this long is no
/// longer part of that turnover, and opening one again costs a TLS handshake.
const IDLE_TIMEOUT: Duration = Duration::from_secs(10);

pub type HttpStack = BoxService<Request<Body>, Response<Box<DynBody>>, BoxError>;
type TracedBody = tower_http::trace::ResponseBody<
    hyper::body::Incoming,
    tower_http::classify::NeverClassifyEos<tower_http::classify::ServerErrorsFailureClass>,
>;

/// A client builder for `config`'s cluster; add layers (a token, say) and `build()` it. Needs
/// a Tokio runtime.
pub fn builder(config: &kube::Config) -> Result<ClientBuilder<HttpStack>, kube::Error> {
    builder_keeping_idle(config, IDLE_TIMEOUT)
}

fn builder_keeping_idle(
    config: &kube::Config,
    idle_timeout: Duration,
) -> Result<ClientBuilder<HttpStack>, kube::Error> {
    let mut connector = hyper_timeout::TimeoutConnector::new(config.rustls_https_connector()?);
    connector.set_connect_timeout(config.connect_timeout);
    connector.set_read_timeout(config.read_timeout);
    connector.set_write_timeout(config.write_timeout);
    let http: HttpClient<_, Body> = HttpClient::builder(TokioExecutor::new())
        .pool_max_idle_per_host(IDLE_CONNECTIONS)
        .pool_idle_timeout(idle_timeout)
        .pool_timer(TokioTimer::new())
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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    use super::builder_keeping_idle;

    #[tokio::test]
    async fn a_connection_left_idle_past_the_timeout_is_closed_by_the_client() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        // One connection: answer one request and keep the connection alive, then say when the
        // client closed it.
        let server = tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut request = Vec::new();
            let mut buf = [0u8; 4096];
            while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                let n = socket.read(&mut buf).await.unwrap();
                assert!(n > 0, "the client closed before its request was whole");
                request.extend_from_slice(&buf[..n]);
            }
            let body = r#"{"major":"1","minor":"32"}"#;
            let response = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                body.len()
            );
            socket.write_all(response.as_bytes()).await.unwrap();
            socket.read(&mut buf).await.unwrap()
        });
        let config = kube::Config::new(url.parse().unwrap());
        let client = builder_keeping_idle(&config, Duration::from_millis(100))
            .unwrap()
            .build();
        let version = client.apiserver_version().await.unwrap();
        assert_eq!(version.minor, "32");

        let read = tokio::time::timeout(Duration::from_secs(30), server)
            .await
            .expect("the idle connection was still open 30 s after its request")
            .unwrap();
        assert_eq!(read, 0, "the client sent more on its idle connection");
        drop(client);
    }
}
