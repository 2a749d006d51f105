//! `kubectl port-forward` itself against the simulated cluster: through SPDY tunnelled in a
//! WebSocket (kubectl's first try since 1.31) and through a plain SPDY upgrade
//! (`KUBECTL_PORT_FORWARD_WEBSOCKETS=false`), to a pod listening on its own loopback address;
//! and what kubectl prints when nothing listens or the pod does not run. Skipped (saying so)
//! where kubectl is absent, unless GANTRY_REQUIRE_KUBECTL=1.

use std::net::SocketAddr;
use std::process::Stdio;

use gantry::sim::cloud::{DEMO_LOCATION, DEMO_PROJECT};
use gantry_test_support::{CLUSTER, CliEnv, WAIT_BOUND, await_condition, kubectl_available, text};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, PostParams};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::process::{Child, Command};

/// A pod named `name` whose workload keeps running, created and seen Running.
async fn running_pod(e: &CliEnv, name: &str) {
    let pods: Api<Pod> = Api::default_namespaced(gantry_test_support::kube_client(&e.cloud));
    let pod = json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [{
            "name": "web",
            "image": "gcr.io/demo-project/web:1",
            "env": [{"name": "SIM_STALL_AFTER", "value": "0"}],
        }]},
    });
    pods.create(
        &PostParams::default(),
        &serde_json::from_value(pod).unwrap(),
    )
    .await
    .unwrap();
    let running = |p: Option<&Pod>| {
        p.and_then(|p| p.status.as_ref())
            .is_some_and(|s| s.phase.as_deref() == Some("Running"))
    };
    await_condition(pods, name, running).await.unwrap();
}

/// A listener on the pod's own address, as a process pod's would be.
async fn listen_in(e: &CliEnv, pod: &str) -> TcpListener {
    let cluster = e
        .cloud
        .cluster(DEMO_PROJECT, DEMO_LOCATION, CLUSTER)
        .unwrap();
    let state = cluster.state();
    let stored = state
        .store
        .get(gantry::sim::kube::resources::Kind::Pod, "default", pod)
        .unwrap();
    let uid = stored["metadata"]["uid"].as_str().unwrap();
    let ip = state.processes.assign("default", pod, uid);
    TcpListener::bind(SocketAddr::new(ip, 0)).await.unwrap()
}

/// Answers each connection with `reply: ` and what it read, once the client half-closes.
async fn serve_replies(listener: TcpListener) {
    while let Ok((mut socket, _)) = listener.accept().await {
        tokio::spawn(async move {
            let mut asked = Vec::new();
            if socket.read_to_end(&mut asked).await.is_ok() {
                let _ = socket.write_all(b"reply: ").await;
                let _ = socket.write_all(&asked).await;
            }
        });
    }
}

/// `kubectl -v=6 port-forward pod/NAME :PORT` and the local port it says it listens on.
async fn port_forward(e: &CliEnv, target: &str, port: u16, websockets: bool) -> (Child, u16) {
    let mut command = kubectl(e);
    command
        .args(["-v=6", "port-forward", target, &format!(":{port}")])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if !websockets {
        command.env("KUBECTL_PORT_FORWARD_WEBSOCKETS", "false");
    }
    let mut child = command.spawn().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let local = tokio::time::timeout(WAIT_BOUND, async {
        while let Some(line) = lines.next_line().await.unwrap() {
            // "Forwarding from 127.0.0.1:40123 -> 8080"
            if let Some(rest) = line.strip_prefix("Forwarding from 127.0.0.1:") {
                return rest.split(' ').next().unwrap().parse::<u16>().unwrap();
            }
        }
        panic!("kubectl port-forward ended before it listened");
    })
    .await
    .expect("kubectl listens within the bound");
    // Keep reading stdout so kubectl never blocks on it.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (child, local)
}

fn kubectl(e: &CliEnv) -> Command {
    let mut command = Command::new("kubectl");
    command
        .env("KUBECONFIG", e.home.path().join("sim/kubeconfig"))
        .args(["--context", &e.context, "--cache-dir"])
        .arg(e.home.path().join("kube-cache"));
    command
}

/// Sends `asked` through the forward, half-closes, and reads the answer to its end.
async fn ask(local: u16, asked: &[u8]) -> Vec<u8> {
    let mut socket = TcpStream::connect(("127.0.0.1", local)).await.unwrap();
    socket.write_all(asked).await.unwrap();
    socket.shutdown().await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(WAIT_BOUND, socket.read_to_end(&mut answer))
        .await
        .expect("an answer within the bound")
        .unwrap();
    answer
}

/// What kubectl wrote on stderr once it is ended.
async fn stop(mut child: Child) -> String {
    let _ = child.start_kill();
    let out = tokio::time::timeout(WAIT_BOUND, child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    text(&out.stderr)
}

#[tokio::test(flavor = "multi_thread")]
async fn kubectl_port_forward_reaches_a_pod_through_spdy_in_a_websocket_and_through_plain_spdy() {
    if !kubectl_available() {
        return;
    }
    let e = CliEnv::start().await;
    running_pod(&e, "web").await;
    let listener = listen_in(&e, "web").await;
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(serve_replies(listener));
    for websockets in [true, false] {
        let (child, local) = port_forward(&e, "pod/web", port, websockets).await;
        for n in 0..2 {
            let asked = format!("connection {n} over websockets={websockets}");
            let answer = ask(local, asked.as_bytes()).await;
            assert_eq!(text(&answer), format!("reply: {asked}"));
        }
        // Far past SPDY's 64 KiB initial window: neither side holds data back for it.
        let large: Vec<u8> = (0..1_000_000u32).map(|i| (i % 251) as u8).collect();
        let answer = ask(local, &large).await;
        assert_eq!(answer.len(), b"reply: ".len() + large.len());
        assert!(answer.ends_with(&large));
        let log = stop(child).await;
        // The WebSocket is asked with GET, the SPDY upgrade with POST; both switch protocols.
        let method = if websockets { "GET" } else { "POST" };
        let upgraded = format!("{method} https://");
        assert!(
            log.lines().any(|l| l.contains(&upgraded)
                && l.contains("/pods/web/portforward 101 Switching Protocols")),
            "{log}"
        );
        assert_eq!(
            log.contains("negotiated protocol: portforward.k8s.io"),
            websockets
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn kubectl_port_forward_prints_the_refusal_when_nothing_listens_and_gives_up() {
    if !kubectl_available() {
        return;
    }
    let e = CliEnv::start().await;
    running_pod(&e, "web").await;
    let idle = listen_in(&e, "web").await.local_addr().unwrap().port();
    let (child, local) = port_forward(&e, "pod/web", idle, true).await;
    assert_eq!(ask(local, b"anyone?").await, b"");
    let out = tokio::time::timeout(WAIT_BOUND, child.wait_with_output())
        .await
        .expect("kubectl ends once the forward failed")
        .unwrap();
    let log = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{log}");
    assert!(
        log.contains(&format!(
            "an error occurred forwarding {local} -> {idle}: error forwarding port {idle} to pod "
        )) && log.contains(&format!(
            "failed to connect to localhost:{idle} inside namespace"
        )) && log.contains("connect: connection refused"),
        "{log}"
    );
    assert!(log.contains("error: lost connection to pod"), "{log}");
}

#[tokio::test(flavor = "multi_thread")]
async fn kubectl_port_forward_to_a_pod_not_running_or_missing_says_so() {
    if !kubectl_available() {
        return;
    }
    let e = CliEnv::start().await;
    let pods: Api<Pod> = Api::default_namespaced(gantry_test_support::kube_client(&e.cloud));
    let pending = json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "stuck"},
        "spec": {
            "nodeSelector": {"cloud.google.com/gke-nodepool": "no-such-pool"},
            "containers": [{"name": "web", "image": "gcr.io/demo-project/web:1"}],
        },
    });
    pods.create(
        &PostParams::default(),
        &serde_json::from_value(pending).unwrap(),
    )
    .await
    .unwrap();
    let out = kubectl(&e)
        .args([
            "port-forward",
            "--pod-running-timeout=1s",
            "pod/stuck",
            "8080",
        ])
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr).trim(),
        "error: unable to forward port because pod is not running. Current status=Pending"
    );
    let out = kubectl(&e)
        .args(["port-forward", "pod/nope", "8080"])
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr).trim(),
        "Error from server (NotFound): pods \"nope\" not found"
    );
}
