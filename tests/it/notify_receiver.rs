//! A webhook receiver for the notification tests: a real HTTP server on 127.0.0.1 that
//! answers from a script (a status, headers and a body per request, then 200) and hands each
//! request it got to the test through a channel, with the instant it came — so a test awaits
//! a delivery instead of sleeping, and measures the gaps between tries where they land.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::IntoResponse;
use tokio::sync::mpsc;

/// The longest a test waits for a request.
pub const PATIENCE: Duration = Duration::from_secs(20);

/// The part of every receiver's URL that is a secret: no file or output may show it.
pub const SECRET_PATH: &str = "/hooks/T0SECRET/B0SECRET/s3cr3tS3CR3Ts3cr3t";

#[derive(Debug, Clone)]
pub struct Received {
    pub at: Instant,
    pub method: Method,
    pub path: String,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Received {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap()
    }
}

/// An answer the receiver gives.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(&'static str, String)>,
    pub body: String,
}

impl Reply {
    pub fn status(status: u16) -> Reply {
        Reply {
            status,
            headers: Vec::new(),
            body: String::new(),
        }
    }
}

pub struct Receiver {
    pub addr: SocketAddr,
    requests: mpsc::UnboundedReceiver<Received>,
    server: tokio::task::JoinHandle<()>,
}

impl Receiver {
    /// A receiver on a port of its own answering `script`, then 200.
    pub async fn start(script: Vec<Reply>) -> Receiver {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        Receiver::on(listener, script)
    }

    /// A receiver on `listener`.
    pub fn on(listener: tokio::net::TcpListener, script: Vec<Reply>) -> Receiver {
        let addr = listener.local_addr().unwrap();
        let (tx, requests) = mpsc::unbounded_channel();
        let script = Arc::new(Mutex::new(VecDeque::from(script)));
        let app = axum::Router::new().fallback(
            move |method: Method, uri: Uri, headers: HeaderMap, body: Bytes| {
                let (tx, script) = (tx.clone(), script.clone());
                async move {
                    let _ = tx.send(Received {
                        at: Instant::now(),
                        method,
                        path: uri.path().to_string(),
                        headers,
                        body,
                    });
                    let reply = script
                        .lock()
                        .unwrap()
                        .pop_front()
                        .unwrap_or_else(|| Reply::status(200));
                    let mut response =
                        (StatusCode::from_u16(reply.status).unwrap(), reply.body).into_response();
                    for (name, value) in reply.headers {
                        response.headers_mut().insert(name, value.parse().unwrap());
                    }
                    response
                }
            },
        );
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Receiver {
            addr,
            requests,
            server,
        }
    }

    /// The receiver's URL with the secret path.
    pub fn url(&self) -> String {
        format!("http://{}{SECRET_PATH}", self.addr)
    }

    /// The next request; the test fails if none comes within [`PATIENCE`].
    pub async fn next(&mut self) -> Received {
        self.next_within(PATIENCE).await
    }

    /// The next request; the test fails if none comes within `patience`.
    pub async fn next_within(&mut self, patience: Duration) -> Received {
        tokio::time::timeout(patience, self.requests.recv())
            .await
            .unwrap_or_else(|_| panic!("no request came within {patience:?}"))
            .unwrap()
    }

    /// A request that came already, if any (after the sender went idle: nothing more comes).
    pub fn more(&mut self) -> Option<Received> {
        self.requests.try_recv().ok()
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.server.abort();
    }
}
