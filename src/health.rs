//! The health endpoint of an engine that runs unattended (the watcher's pod, a `gantry watch`
//! under systemd): `GET /healthz` answers 200 while the world's owner answers between its
//! rounds — a stuck engine fails it, and Kubernetes restarts its pod — and `GET /readyz` 200
//! while it is connected to the cluster. It says nothing else: no state, no names. Bound to the
//! address it is given (the pod's own, never all of them by default), and bounded as every
//! listener of Gantry's is: a few connections at once, each with a deadline.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use http::{Method, Request, Response, StatusCode};
use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use crate::engine::EngineHandle;

/// How long the owner may take to answer before the engine counts as stuck.
const PATIENCE: Duration = Duration::from_secs(5);
/// Connections served at once; more are closed at once (a probe comes every few seconds).
const CONNECTIONS: usize = 8;
/// The most a connection may last, headers included.
const CONNECTION_DEADLINE: Duration = Duration::from_secs(10);
const HEADER_DEADLINE: Duration = Duration::from_secs(3);

/// Binds `addr` now (an address in use is said at once), then serves until `stop`.
pub async fn serve(
    addr: SocketAddr,
    engine: EngineHandle,
    stop: CancellationToken,
) -> std::io::Result<tokio::task::JoinHandle<()>> {
    let listener = TcpListener::bind(addr).await?;
    let slots = Arc::new(Semaphore::new(CONNECTIONS));
    Ok(tokio::spawn(async move {
        loop {
            let (stream, _) = tokio::select! {
                _ = stop.cancelled() => return,
                accepted = listener.accept() => match accepted {
                    Ok(a) => a,
                    Err(e) => {
                        tracing::debug!(error = %e, "health: accept");
                        continue;
                    }
                },
            };
            let Ok(slot) = slots.clone().try_acquire_owned() else {
                continue;
            };
            let engine = engine.clone();
            tokio::spawn(async move {
                let _slot = slot;
                let service = hyper::service::service_fn(move |request| {
                    let engine = engine.clone();
                    async move { Ok::<_, Infallible>(answer(&engine, &request).await) }
                });
                let connection = hyper::server::conn::http1::Builder::new()
                    .timer(TokioTimer::new())
                    .header_read_timeout(HEADER_DEADLINE)
                    .keep_alive(false)
                    .serve_connection(TokioIo::new(stream), service);
                let _ = tokio::time::timeout(CONNECTION_DEADLINE, connection).await;
            });
        }
    }))
}

async fn answer(engine: &EngineHandle, request: &Request<Incoming>) -> Response<Full<Bytes>> {
    if request.method() != Method::GET && request.method() != Method::HEAD {
        return text(StatusCode::METHOD_NOT_ALLOWED, "GET /healthz or /readyz\n");
    }
    match request.uri().path() {
        "/healthz" => {
            if engine.answers(PATIENCE).await {
                text(StatusCode::OK, "ok\n")
            } else {
                text(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "the engine did not answer within 5 s\n",
                )
            }
        }
        "/readyz" => {
            if engine.model().connected {
                text(StatusCode::OK, "ok\n")
            } else {
                text(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "not connected to the cluster\n",
                )
            }
        }
        _ => text(StatusCode::NOT_FOUND, "GET /healthz or /readyz\n"),
    }
}

fn text(status: StatusCode, body: &'static str) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from_static(body.as_bytes())));
    *response.status_mut() = status;
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}
