//! A bare HTTPS/1.1 client for the tests that speak to a simulated API server through its real
//! listener, as kubectl and kube-rs do: TLS against the simulator's CA, its bearer token, one
//! request per connection, and watch streams read event by event. Also a kubeconfig for the
//! tests that run kubectl itself.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;

use crate::SimShared;
use crate::test_support::PATIENCE;

pub struct ApiClient {
    port: u16,
    token: String,
    ca_pem: String,
    tls: TlsConnector,
}

/// A response's status and its body read as JSON (`Null` when it is not).
pub type Answer = (u16, Value);

impl ApiClient {
    pub fn new(port: u16, shared: &SimShared) -> Self {
        let ca_pem = shared.ca.pem().to_string();
        let mut roots = rustls::RootCertStore::empty();
        roots
            .add(CertificateDer::from_pem_slice(ca_pem.as_bytes()).unwrap())
            .unwrap();
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth();
        Self {
            port,
            token: shared.auth.current(),
            ca_pem,
            tls: TlsConnector::from(Arc::new(config)),
        }
    }

    /// The same server, asked with another bearer token.
    pub fn with_token(&self, token: &str) -> Self {
        Self {
            port: self.port,
            token: token.to_string(),
            ca_pem: self.ca_pem.clone(),
            tls: self.tls.clone(),
        }
    }

    async fn send(
        &self,
        method: &str,
        path: &str,
        content_type: &str,
        body: Option<&Value>,
    ) -> TlsStream<TcpStream> {
        let tcp = TcpStream::connect(("127.0.0.1", self.port)).await.unwrap();
        let name = ServerName::try_from("127.0.0.1").unwrap();
        let mut stream = self.tls.connect(name, tcp).await.unwrap();
        let body = body.map(Value::to_string).unwrap_or_default();
        let head = format!(
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAuthorization: Bearer {}\r\n\
             Accept: application/json\r\nContent-Type: {content_type}\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n",
            self.port,
            self.token,
            body.len()
        );
        stream.write_all(head.as_bytes()).await.unwrap();
        stream.write_all(body.as_bytes()).await.unwrap();
        stream.flush().await.unwrap();
        stream
    }

    /// One request, its answer read to the end, within `PATIENCE`.
    pub async fn request(&self, method: &str, path: &str, body: Option<&Value>) -> Answer {
        self.request_as(method, path, "application/json", body)
            .await
    }

    pub async fn request_as(
        &self,
        method: &str,
        path: &str,
        content_type: &str,
        body: Option<&Value>,
    ) -> Answer {
        let exchange = async {
            let mut stream = self.send(method, path, content_type, body).await;
            let mut raw = Vec::new();
            // The server may close without TLS's close_notify once it has answered.
            let _ = stream.read_to_end(&mut raw).await;
            raw
        };
        let raw = tokio::time::timeout(PATIENCE, exchange)
            .await
            .unwrap_or_else(|_| panic!("no answer to {method} {path} within {PATIENCE:?}"));
        let (status, chunked, body) = split_response(&raw);
        let body = if chunked {
            dechunk(body).0
        } else {
            body.to_vec()
        };
        (status, serde_json::from_slice(&body).unwrap_or(Value::Null))
    }

    /// Opens a watch (`path` carries `watch=true`) and returns once its answer has begun.
    pub async fn watch(&self, path: &str) -> Watch {
        let mut stream = self.send("GET", path, "application/json", None).await;
        let mut raw = Vec::new();
        let mut buf = [0u8; 4096];
        while find(&raw, b"\r\n\r\n").is_none() {
            let n = tokio::time::timeout(PATIENCE, stream.read(&mut buf))
                .await
                .expect("the watch's answer began")
                .unwrap();
            assert!(n > 0, "the watch closed before answering");
            raw.extend_from_slice(&buf[..n]);
        }
        let (status, chunked, rest) = split_response(&raw);
        assert_eq!(status, 200, "{}", String::from_utf8_lossy(&raw));
        assert!(chunked, "a watch streams its events in chunks");
        Watch {
            stream,
            raw: rest.to_vec(),
            payload: Vec::new(),
        }
    }

    /// A kubeconfig for kubectl, written into `dir`.
    pub fn kubeconfig(&self, dir: &Path) -> PathBuf {
        use base64::Engine;
        let ca = base64::engine::general_purpose::STANDARD.encode(&self.ca_pem);
        let config = format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: sim\n  cluster:\n    server: https://127.0.0.1:{}\n    certificate-authority-data: {ca}\nusers:\n- name: sim\n  user:\n    token: {}\ncontexts:\n- name: sim\n  context:\n    cluster: sim\n    user: sim\n    namespace: default\ncurrent-context: sim\n",
            self.port, self.token
        );
        let path = dir.join("kubeconfig");
        std::fs::write(&path, config).unwrap();
        path
    }
}

/// Whether kubectl is installed; when it is not, a test skips (saying so), unless
/// `GANTRY_REQUIRE_KUBECTL=1` makes that a failure.
pub fn kubectl_available() -> bool {
    let present = std::process::Command::new("kubectl")
        .args(["version", "--client"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !present {
        assert!(
            std::env::var("GANTRY_REQUIRE_KUBECTL").as_deref() != Ok("1"),
            "GANTRY_REQUIRE_KUBECTL=1 but kubectl is not installed"
        );
        eprintln!(
            "skipping: kubectl is not installed (GANTRY_REQUIRE_KUBECTL=1 makes this a failure)"
        );
    }
    present
}

/// An open watch: its events, one JSON object a line.
pub struct Watch {
    stream: TlsStream<TcpStream>,
    /// Bytes read and not yet unframed.
    raw: Vec<u8>,
    /// Unframed bytes not yet split into lines.
    payload: Vec<u8>,
}

impl Watch {
    /// The next event, within `PATIENCE`.
    pub async fn next(&mut self) -> Value {
        let deadline = tokio::time::Instant::now() + PATIENCE;
        let mut buf = [0u8; 4096];
        loop {
            let (data, used) = dechunk(&self.raw);
            self.payload.extend_from_slice(&data);
            self.raw.drain(..used);
            if let Some(end) = self.payload.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = self.payload.drain(..=end).collect();
                return serde_json::from_slice(&line).unwrap();
            }
            let n = tokio::time::timeout_at(deadline, self.stream.read(&mut buf))
                .await
                .unwrap_or_else(|_| panic!("no watch event within {PATIENCE:?}"))
                .unwrap();
            assert!(n > 0, "the watch ended before the next event");
            self.raw.extend_from_slice(&buf[..n]);
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// The status, whether the body is chunked, and the bytes after the head.
fn split_response(raw: &[u8]) -> (u16, bool, &[u8]) {
    let end = find(raw, b"\r\n\r\n").expect("an HTTP head");
    let head = String::from_utf8_lossy(&raw[..end]).to_ascii_lowercase();
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("a status code");
    let chunked = head.contains("transfer-encoding: chunked");
    (status, chunked, &raw[end + 4..])
}

/// The data of the whole chunks at the start of `raw`, and how many bytes they took.
fn dechunk(raw: &[u8]) -> (Vec<u8>, usize) {
    let mut data = Vec::new();
    let mut at = 0;
    while let Some(line_end) = find(&raw[at..], b"\r\n") {
        let size = std::str::from_utf8(&raw[at..at + line_end])
            .ok()
            .and_then(|s| usize::from_str_radix(s.trim(), 16).ok())
            .expect("a chunk size");
        let start = at + line_end + 2;
        if size == 0 || raw.len() < start + size + 2 {
            break;
        }
        data.extend_from_slice(&raw[start..start + size]);
        at = start + size + 2;
    }
    (data, at)
}
