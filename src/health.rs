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
    Ok(serve_on(listener, engine, stop, PATIENCE))
}

/// Serves on `listener` until `stop`; the engine is stuck when it takes longer than `patience`.
fn serve_on(
    listener: TcpListener,
    engine: EngineHandle,
    stop: CancellationToken,
    patience: Duration,
) -> tokio::task::JoinHandle<()> {
    let slots = Arc::new(Semaphore::new(CONNECTIONS));
    tokio::spawn(async move {
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
                    async move { Ok::<_, Infallible>(answer(&engine, &request, patience).await) }
                });
                let connection = hyper::server::conn::http1::Builder::new()
                    .timer(TokioTimer::new())
                    .header_read_timeout(HEADER_DEADLINE)
                    .keep_alive(false)
                    .serve_connection(TokioIo::new(stream), service);
                let _ = tokio::time::timeout(CONNECTION_DEADLINE, connection).await;
            });
        }
    })
}

async fn answer(
    engine: &EngineHandle,
    request: &Request<Incoming>,
    patience: Duration,
) -> Response<Full<Bytes>> {
    if request.method() != Method::GET && request.method() != Method::HEAD {
        return text(StatusCode::METHOD_NOT_ALLOWED, "GET /healthz or /readyz\n");
    }
    match request.uri().path() {
        "/healthz" => {
            if engine.answers(patience).await {
                text(StatusCode::OK, "ok\n")
            } else {
                text(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "the engine did not answer in time\n",
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpStream;

    use super::*;
    use crate::engine::world::World;

    const BOUND: Duration = Duration::from_secs(30);

    async fn serving(answers: bool, connected: bool) -> (SocketAddr, CancellationToken) {
        let world = World {
            connected,
            ..World::default()
        };
        let engine = crate::engine::stand_in::handle(answers, world);
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let stop = CancellationToken::new();
        serve_on(listener, engine, stop.clone(), Duration::from_millis(300));
        (addr, stop)
    }

    /// One request as a probe sends it; the status code and body.
    async fn ask(addr: SocketAddr, method: &str, path: &str) -> (u16, String) {
        let exchange = async {
            let mut stream = TcpStream::connect(addr).await.unwrap();
            let request = format!("{method} {path} HTTP/1.1\r\nHost: probe\r\n\r\n");
            stream.write_all(request.as_bytes()).await.unwrap();
            let mut answer = String::new();
            stream.read_to_string(&mut answer).await.unwrap();
            answer
        };
        let answer = tokio::time::timeout(BOUND, exchange).await.unwrap();
        let status = answer[9..12].parse().unwrap();
        let body = answer.split("\r\n\r\n").nth(1).unwrap_or("").to_string();
        (status, body)
    }

    #[tokio::test]
    async fn healthz_is_200_while_the_engine_answers_and_503_when_it_is_stuck() {
        let (alive, _a) = serving(true, true).await;
        assert_eq!(ask(alive, "GET", "/healthz").await, (200, "ok\n".into()));
        assert_eq!(ask(alive, "HEAD", "/healthz").await.0, 200);
        let (stuck, _s) = serving(false, true).await;
        let (status, body) = ask(stuck, "GET", "/healthz").await;
        assert_eq!(status, 503);
        assert!(body.contains("did not answer"), "{body}");
    }

    #[tokio::test]
    async fn readyz_is_200_only_while_connected_to_the_cluster() {
        let (connected, _c) = serving(true, true).await;
        assert_eq!(ask(connected, "GET", "/readyz").await.0, 200);
        let (away, _a) = serving(true, false).await;
        let (status, body) = ask(away, "GET", "/readyz").await;
        assert_eq!(status, 503);
        assert!(body.contains("not connected"), "{body}");
    }

    #[tokio::test]
    async fn anything_else_is_refused_and_says_nothing_of_the_engine() {
        let (addr, _s) = serving(true, true).await;
        assert_eq!(ask(addr, "POST", "/healthz").await.0, 405);
        let (status, body) = ask(addr, "GET", "/metrics").await;
        assert_eq!(status, 404);
        assert_eq!(body, "GET /healthz or /readyz\n");
    }

    #[tokio::test]
    async fn connections_past_the_bound_are_closed_at_once_and_the_bound_frees_as_they_go() {
        let (addr, stop) = serving(true, true).await;
        // Connections that say nothing hold their slots until their header deadline.
        let mut silent = Vec::new();
        for _ in 0..CONNECTIONS {
            silent.push(TcpStream::connect(addr).await.unwrap());
        }
        // Each is accepted in turn: a probe answered after them proves they all hold a slot.
        let mut extra = TcpStream::connect(addr).await.unwrap();
        let mut byte = [0u8; 1];
        // Closed by the bound, not by the header deadline that would close it later.
        let read = tokio::time::timeout(HEADER_DEADLINE / 2, extra.read(&mut byte))
            .await
            .expect("the connection past the bound is closed at once");
        assert!(matches!(read, Ok(0) | Err(_)), "closed without an answer");
        drop(silent);
        // Slots come back as the silent connections close: a probe is answered again.
        let deadline = tokio::time::Instant::now() + BOUND;
        loop {
            let mut stream = TcpStream::connect(addr).await.unwrap();
            stream
                .write_all(b"GET /healthz HTTP/1.1\r\nHost: probe\r\n\r\n")
                .await
                .unwrap();
            let mut answer = String::new();
            let _ = tokio::time::timeout(BOUND, stream.read_to_string(&mut answer)).await;
            if answer.starts_with("HTTP/1.1 200") {
                break;
            }
            assert!(tokio::time::Instant::now() < deadline, "no slot came back");
            tokio::task::yield_now().await;
        }
        stop.cancel();
    }
}
