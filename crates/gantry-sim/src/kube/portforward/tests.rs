//! pods/portforward through the real listener: kube-rs's own client (`Api::portforward`, the
//! WebSocket channel protocol) forwarding to pods that listen, and the answers given before
//! any upgrade (no pod, no node, a finished pod, no upgrade asked).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use k8s_openapi::api::core::v1::Pod;
use kube::Api;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::channels::Codec;
use crate::kube::test_pods::Sim;
use std::time::Duration;

use crate::faults::Fault;
use crate::test_support::PATIENCE;

/// Writes `sent` to the forwarded stream and reads until as many bytes came back.
async fn exchange<S>(stream: &mut S, sent: &[u8]) -> Vec<u8>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    stream.write_all(sent).await.unwrap();
    let mut back = vec![0u8; sent.len()];
    tokio::time::timeout(PATIENCE, stream.read_exact(&mut back))
        .await
        .expect("the pod answers in time")
        .unwrap();
    back
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kube_rs_forwards_two_ports_of_a_pod_each_on_its_own_channels() {
    let sim = Sim::start().await;
    sim.running_pod("web").await;
    let (first, second) = (sim.echo("web").await, sim.echo("web").await);
    let pods: Api<Pod> = Api::default_namespaced(sim.kube_client());
    let mut forwarder = pods.portforward("web", &[first, second]).await.unwrap();
    let mut a = forwarder.take_stream(first).unwrap();
    let mut b = forwarder.take_stream(second).unwrap();
    assert_eq!(
        exchange(&mut a, b"to the first port").await,
        b"to the first port"
    );
    let large: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
    assert_eq!(exchange(&mut b, &large).await, large);
    drop((a, b));
    tokio::time::timeout(PATIENCE, forwarder.join())
        .await
        .expect("the forward ends once its streams are dropped")
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_port_nothing_listens_on_is_refused_on_its_error_channel_in_the_kubelets_words() {
    let sim = Sim::start().await;
    sim.running_pod("web").await;
    let idle = sim.idle_port("web").await;
    let pods: Api<Pod> = Api::default_namespaced(sim.kube_client());
    let mut forwarder = pods.portforward("web", &[idle]).await.unwrap();
    let error = forwarder.take_error(idle).unwrap();
    let message = tokio::time::timeout(PATIENCE, error)
        .await
        .expect("an error within the test's patience")
        .expect("an error message, not a closed channel");
    assert!(
        message.starts_with(&format!("error forwarding port {idle} to pod ")),
        "{message}"
    );
    assert!(
        message.contains(", uid : failed to execute portforward in network namespace")
            && message.ends_with(": connect: connection refused"),
        "{message}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forward_ends_when_the_api_server_restarts_as_all_its_connections_do() {
    let sim = Sim::start().await;
    sim.running_pod("web").await;
    let port = sim.echo("web").await;
    let pods: Api<Pod> = Api::default_namespaced(sim.kube_client());
    let mut forwarder = pods.portforward("web", &[port]).await.unwrap();
    let mut stream = forwarder.take_stream(port).unwrap();
    assert_eq!(exchange(&mut stream, b"before").await, b"before");
    let mut availability = sim.runtime.availability();
    sim.shared.faults.set(Fault::Restart(Duration::ZERO));
    tokio::time::timeout(PATIENCE, availability.wait_for(|a| !a.up))
        .await
        .expect("the API server restarts")
        .unwrap();
    sim.shared.faults.clear();
    let mut rest = Vec::new();
    let ended = tokio::time::timeout(PATIENCE, stream.read_to_end(&mut rest)).await;
    assert!(ended.is_ok(), "the forwarded stream ends with the server");
    assert!(rest.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_pod_is_404_an_unscheduled_one_400_and_a_finished_one_500_before_any_upgrade() {
    let sim = Sim::start().await;
    let path = |pod: &str| format!("/api/v1/namespaces/default/pods/{pod}/portforward?ports=80");
    let (status, body) = sim.api.request("POST", &path("nope"), None).await;
    assert_eq!((status, body["reason"].as_str()), (404, Some("NotFound")));
    assert_eq!(body["message"], "pods \"nope\" not found");

    let nowhere = json!({"nodeSelector": {"cloud.google.com/gke-nodepool": "no-such-pool"}});
    sim.pod("stuck", json!([]), nowhere, |p| {
        p["status"]["conditions"]
            .as_array()
            .is_some_and(|c| c.iter().any(|c| c["reason"] == "Unschedulable"))
    })
    .await;
    let (status, body) = sim.api.request("POST", &path("stuck"), None).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["message"], "pod stuck does not have a host assigned");

    let short = json!([{"name": "SIM_LOG_LINES", "value": "1"}]);
    sim.pod("done", short, json!({"restartPolicy": "Never"}), |p| {
        p["status"]["phase"] == "Succeeded"
    })
    .await;
    let (status, _) = sim.api.request("GET", &path("done"), None).await;
    assert_eq!(status, 500, "the kubelet finds the sandbox stopped");

    sim.running_pod("web").await;
    let (status, body) = sim.api.request("GET", &path("web"), None).await;
    assert_eq!(status, 400);
    assert_eq!(body["message"], "Upgrade request required");

    // kube-rs asks WebSocket; without a pod it gets no upgrade.
    let pods: Api<Pod> = Api::default_namespaced(sim.kube_client());
    assert!(pods.portforward("nope", &[80]).await.is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discovery_lists_pods_portforward_as_a_connect_subresource() {
    let sim = Sim::start().await;
    let (_, list) = sim.api.request("GET", "/api/v1", None).await;
    let entry = list["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "pods/portforward")
        .expect("pods/portforward among the resources");
    assert_eq!(entry["kind"], "PodPortForwardOptions");
    assert_eq!(entry["verbs"], json!(["create", "get"]));
}

#[test]
fn the_base64_channel_protocol_names_the_channel_by_a_digit_and_carries_base64() {
    let message = Codec::Base64.message(3, b"refused");
    assert_eq!(message.to_text().unwrap(), "3cmVmdXNlZA==");
    assert_eq!(
        Codec::Base64.read(message).unwrap(),
        (3, bytes::Bytes::from_static(b"refused"))
    );
    let binary = Codec::Binary.message(2, &8080u16.to_le_bytes());
    assert_eq!(binary.into_data().as_ref(), &[2, 0x90, 0x1f]);
    assert_eq!(
        Codec::Binary.read(Codec::Binary.message(0, b"")),
        Some((0, bytes::Bytes::new()))
    );
    assert_eq!(
        Codec::Base64.read(tokio_tungstenite::tungstenite::Message::text("x!")),
        None
    );
}
