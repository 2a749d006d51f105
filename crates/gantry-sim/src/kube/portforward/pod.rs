//! The pod a port-forward reaches. It is found as kube-apiserver finds it (`PortForwardLocation`:
//! 404 for no pod, 400 for a pod without a node), refused as the kubelet refuses a pod whose
//! sandbox has stopped, and each of its ports is dialled where the pod listens on this machine
//! (`ClusterState::pod_endpoint`), a failure worded as the kubelet and containerd word it, for the
//! client to print from the port's error stream.

use std::io::ErrorKind;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use http::StatusCode;
use serde_json::Value;
use tokio::net::TcpStream;

use crate::kube::cluster::ClusterState;
use crate::kube::errors::ApiError;
use crate::kube::resources::Kind;

use super::Refusal;

/// How long one dial may take (containerd's `dialTimeout`).
const DIAL_TIMEOUT: Duration = Duration::from_secs(5);

#[derive(Debug)]
pub struct PodTarget {
    state: Arc<ClusterState>,
    namespace: String,
    name: String,
    /// The pod's sandbox as containerd names it: what the kubelet calls the pod in its errors.
    sandbox: String,
}

impl PodTarget {
    /// The pod, or the answer the API server (or, behind it, the kubelet) gives instead.
    pub fn find(state: &Arc<ClusterState>, namespace: &str, name: &str) -> Result<Self, Refusal> {
        let Some(pod) = state.store.get(Kind::Pod, namespace, name) else {
            return Err(Refusal::Api(ApiError::not_found(
                Kind::Pod.resource(),
                name,
            )));
        };
        if pod
            .pointer("/spec/nodeName")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
        {
            return Err(Refusal::Api(ApiError::bad_request(format!(
                "pod {name} does not have a host assigned"
            ))));
        }
        if matches!(
            pod.pointer("/status/phase").and_then(Value::as_str),
            Some("Succeeded" | "Failed")
        ) {
            // The kubelet passes the runtime's gRPC error on as plain text (streaming.WriteError).
            return Err(Refusal::Text(
                StatusCode::INTERNAL_SERVER_ERROR,
                "rpc error: code = Unknown desc = sandbox container is not running".into(),
            ));
        }
        let uid = pod
            .pointer("/metadata/uid")
            .and_then(Value::as_str)
            .unwrap_or_default();
        Ok(Self {
            state: state.clone(),
            namespace: namespace.to_string(),
            name: name.to_string(),
            sandbox: sandbox_id(uid),
        })
    }

    /// A connection to the pod's `port`, or the message the client prints for the failure.
    pub async fn connect(&self, port: u16) -> Result<TcpStream, String> {
        let endpoint = self.state.pod_endpoint(&self.namespace, &self.name, port);
        let failure = match endpoint {
            Some(at) => match tokio::time::timeout(DIAL_TIMEOUT, TcpStream::connect(at)).await {
                Ok(Ok(tcp)) => {
                    let _ = tcp.set_nodelay(true);
                    return Ok(tcp);
                }
                Ok(Err(e)) => dial_error(at, &e),
                Err(_) => format!("dial tcp4 {at}: i/o timeout"),
            },
            // A pod that is no process listens on nothing: its port refuses, as an idle one does.
            None => format!(
                "dial tcp4 {}: connect: connection refused",
                SocketAddr::from((Ipv4Addr::LOCALHOST, port))
            ),
        };
        Err(self.forwarding_error(port, &failure))
    }

    /// kubelet's `error forwarding port …` around containerd's `failed to execute portforward …`.
    fn forwarding_error(&self, port: u16, dial: &str) -> String {
        let sandbox = &self.sandbox;
        // CNI names a pod's network namespace after a random UUID; this one is the sandbox's.
        let netns = format!(
            "/var/run/netns/cni-{}-{}-{}-{}-{}",
            &sandbox[0..8],
            &sandbox[8..12],
            &sandbox[12..16],
            &sandbox[16..20],
            &sandbox[20..32]
        );
        format!(
            "error forwarding port {port} to pod {sandbox}, uid : failed to execute portforward in \
             network namespace \"{netns}\": failed to connect to localhost:{port} inside namespace \
             \"{sandbox}\", IPv4: {dial}"
        )
    }
}

/// As Go's net package words it (`connect: connection refused`).
fn dial_error(at: SocketAddr, e: &std::io::Error) -> String {
    let what = match e.kind() {
        ErrorKind::ConnectionRefused => "connection refused".to_string(),
        ErrorKind::ConnectionReset => "connection reset by peer".to_string(),
        _ => e.to_string(),
    };
    format!("dial tcp4 {at}: connect: {what}")
}

/// A 64-hex-digit id made from the pod's uid, stable for the pod's life, like a sandbox's.
fn sandbox_id(uid: &str) -> String {
    let hex: String = uid.chars().filter(char::is_ascii_hexdigit).collect();
    let hex = if hex.is_empty() { "0".to_string() } else { hex };
    hex.chars()
        .cycle()
        .take(64)
        .collect::<String>()
        .to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sandbox_id_is_64_hex_digits_from_the_uid() {
        let id = sandbox_id("0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0");
        assert_eq!(id.len(), 64);
        assert!(id.starts_with("0f1e2d3c4b5a69788796a5b4c3d2e1f0"));
        assert_eq!(sandbox_id("").len(), 64);
    }
}
