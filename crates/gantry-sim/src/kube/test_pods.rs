//! What the tests of reaching pods (port-forward, load balancers) share: a running cluster with
//! pods made through its API, and pods that listen (a TCP echo on the pod's own loopback
//! address, as a process pod's would).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::SocketAddr;
use std::sync::Arc;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use crate::SimShared;
use crate::kube::cluster::{ClusterRuntime, ClusterSpec, ClusterState};
use crate::kube::resources::Kind;
use crate::test_http::ApiClient;
use crate::test_support::{self, PROJECT, ZONE};

pub struct Sim {
    pub runtime: ClusterRuntime,
    pub api: ApiClient,
    pub shared: SimShared,
}

impl Sim {
    pub async fn start() -> Sim {
        Sim::with(test_support::shared(0.01, Vec::new())).await
    }

    /// A cluster whose `python:*` images run as python3 processes; None (the test skipped,
    /// saying so) where python3 is missing, unless GANTRY_REQUIRE_PYTHON3=1.
    pub async fn with_python() -> Option<Sim> {
        let python = test_support::python3()?;
        let mut shared = test_support::shared(0.01, Vec::new());
        shared.run_images = Arc::new(crate::kube::process::RunImages::new(vec![python]));
        Some(Sim::with(shared).await)
    }

    async fn with(shared: SimShared) -> Sim {
        let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
        let runtime =
            ClusterRuntime::start(ClusterSpec::seed(PROJECT, ZONE, "c"), shared.clone(), 0)
                .await
                .unwrap();
        let api = ApiClient::new(runtime.port(), &shared);
        Sim {
            runtime,
            api,
            shared,
        }
    }

    /// kube-rs's client for the cluster, trusting its CA, with its token.
    pub fn kube_client(&self) -> kube::Client {
        use rustls::pki_types::CertificateDer;
        use rustls::pki_types::pem::PemObject;
        let url = format!("https://127.0.0.1:{}", self.runtime.port());
        let mut config = kube::Config::new(url.parse().unwrap());
        let ca = CertificateDer::from_pem_slice(self.shared.ca.pem().as_bytes()).unwrap();
        config.root_cert = Some(vec![ca.to_vec()]);
        config.auth_info.token = Some(self.shared.auth.current().into());
        config.default_namespace = "default".into();
        kube::Client::try_from(config).unwrap()
    }

    pub fn state(&self) -> &Arc<ClusterState> {
        self.runtime.state()
    }

    /// Creates a pod in `default` (its container's environment and spec extras given) and
    /// waits until `ready` holds for it.
    pub async fn pod(&self, name: &str, env: Value, extra: Value, ready: fn(&Value) -> bool) {
        let mut pod = json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "labels": {"app": name}},
            "spec": {"containers": [{"name": "web", "image": "gcr.io/p/web:1", "env": env}]},
        });
        if let (Some(spec), Some(extra)) = (pod["spec"].as_object_mut(), extra.as_object()) {
            spec.extend(extra.clone());
        }
        let (status, body) = self
            .api
            .request("POST", "/api/v1/namespaces/default/pods", Some(&pod))
            .await;
        assert_eq!(status, 201, "{body}");
        test_support::until(self.state(), name, |s| {
            s.store.get(Kind::Pod, "default", name).filter(|p| ready(p))
        })
        .await;
    }

    /// A pod that keeps running (its workload stalls at once).
    pub async fn running_pod(&self, name: &str) {
        let env = json!([{"name": "SIM_STALL_AFTER", "value": "0"}]);
        self.pod(name, env, json!({}), |p| p["status"]["phase"] == "Running")
            .await;
    }

    /// Gives the pod its own loopback address and listens there with a TCP echo: the port.
    pub async fn echo(&self, pod: &str) -> u16 {
        let listener = self.listen(pod).await;
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(echo(listener));
        port
    }

    /// Listens with a TCP echo at the pod's address on a port of its spec.
    pub async fn echo_at(&self, pod: &str, port: u16) {
        let ip = self.listen(pod).await.local_addr().unwrap().ip();
        let listener = TcpListener::bind(SocketAddr::new(ip, port)).await.unwrap();
        tokio::spawn(echo(listener));
    }

    /// A listener at the pod's address, for a test to answer on as it likes.
    pub async fn listen(&self, pod: &str) -> TcpListener {
        let uid = self
            .state()
            .store
            .get(Kind::Pod, "default", pod)
            .unwrap()
            .pointer("/metadata/uid")
            .and_then(Value::as_str)
            .unwrap()
            .to_string();
        let ip = self.state().processes.assign("default", pod, &uid);
        TcpListener::bind(SocketAddr::new(ip, 0)).await.unwrap()
    }

    /// A port of the pod's address nothing listens on.
    pub async fn idle_port(&self, pod: &str) -> u16 {
        self.listen(pod).await.local_addr().unwrap().port()
    }
}

/// Echoes every connection until its client half-closes, then closes.
async fn echo(listener: TcpListener) {
    while let Ok((mut socket, _)) = listener.accept().await {
        tokio::spawn(async move {
            let mut buf = vec![0u8; 16 * 1024];
            loop {
                match socket.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        if socket.write_all(&buf[..n]).await.is_err() {
                            break;
                        }
                    }
                }
            }
        });
    }
}
