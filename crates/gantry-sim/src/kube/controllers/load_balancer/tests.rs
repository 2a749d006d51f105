//! LoadBalancer Services through their listeners: an address of their own on loopback that
//! reaches a ready pod, source ranges that refuse, listeners that close with the Service.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::PORTS_ANNOTATION;
use super::listen::{ServicePort, bind};
use crate::kube::process::loopback;
use crate::kube::resources::Kind;
use crate::kube::test_pods::Sim;
use crate::test_support::{self, PATIENCE};

/// A LoadBalancer Service `name` for the pods labelled `app: web`, its port 80 going to
/// `target_port`, with these extras in its spec.
async fn service(sim: &Sim, name: &str, target_port: Value, extra: Value) {
    let mut svc = json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name},
        "spec": {
            "type": "LoadBalancer",
            "selector": {"app": "web"},
            "ports": [{"name": "http", "port": 80, "targetPort": target_port}],
        },
    });
    if let (Some(spec), Some(extra)) = (svc["spec"].as_object_mut(), extra.as_object()) {
        spec.extend(extra.clone());
    }
    let (status, body) = sim
        .api
        .request("POST", "/api/v1/namespaces/default/services", Some(&svc))
        .await;
    assert_eq!(status, 201, "{body}");
}

/// The Service's ingress IP and where its port 80 really listens, once the controller said.
async fn balanced(sim: &Sim, name: &str) -> (IpAddr, SocketAddr) {
    test_support::until(sim.state(), "a load balancer", |s| {
        let svc = s.store.get(Kind::Service, "default", name)?;
        let ip: IpAddr = svc
            .pointer("/status/loadBalancer/ingress/0/ip")?
            .as_str()?
            .parse()
            .ok()?;
        let listed = svc["metadata"]["annotations"][PORTS_ANNOTATION].as_str()?;
        let at = listed.strip_prefix("80/TCP=")?.parse().ok()?;
        Some((ip, at))
    })
    .await
}

/// Sends `asked` and reads what comes back before the connection ends.
async fn ask(at: SocketAddr, asked: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut socket = TcpStream::connect(at).await?;
    socket.write_all(asked).await?;
    socket.shutdown().await?;
    let mut answer = Vec::new();
    tokio::time::timeout(PATIENCE, socket.read_to_end(&mut answer))
        .await
        .expect("the connection ends in time")?;
    Ok(answer)
}

/// Waits, at most `PATIENCE`, until nothing listens at `at` any more.
async fn until_closed(at: SocketAddr) {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while TcpStream::connect(at).await.is_ok() {
        assert!(tokio::time::Instant::now() < deadline, "{at} still listens");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_load_balancer_gets_a_loopback_address_of_its_own_that_reaches_a_ready_pod() {
    let sim = Sim::start().await;
    sim.running_pod("web").await;
    let pod_port = sim.echo("web").await;
    service(&sim, "front", json!(pod_port), json!({})).await;
    let (ip, at) = balanced(&sim, "front").await;
    assert!(ip.is_loopback());
    assert_eq!(at.ip(), ip);
    if loopback::per_pod_addresses() {
        assert_ne!(ip, IpAddr::from([127, 0, 0, 1]), "an address of its own");
    }
    let svc = sim
        .state()
        .store
        .get(Kind::Service, "default", "front")
        .unwrap();
    assert_eq!(svc["status"]["loadBalancer"]["ingress"][0]["ipMode"], "VIP");
    for reason in ["EnsuringLoadBalancer", "EnsuredLoadBalancer"] {
        assert_eq!(test_support::events(sim.state(), "front", reason).len(), 1);
    }
    // Port 80 is kept where the simulator may bind it; elsewhere the event says where it went.
    let moved = test_support::events(sim.state(), "front", "LoadBalancerPortMoved");
    assert_eq!(at.port() == 80, moved.is_empty(), "{moved:?}");
    for n in 0..3 {
        let asked = format!("through the balancer, {n}");
        assert_eq!(ask(at, asked.as_bytes()).await.unwrap(), asked.as_bytes());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_port_added_listens_on_the_same_address_while_a_kept_port_keeps_its_connections() {
    let sim = Sim::start().await;
    sim.running_pod("web").await;
    let pod_port = sim.echo("web").await;
    service(&sim, "front", json!(pod_port), json!({})).await;
    let (ip, at) = balanced(&sim, "front").await;
    let mut open = TcpStream::connect(at).await.unwrap();
    open.write_all(b"before").await.unwrap();
    let ports = json!({"spec": {"ports": [
        {"name": "http", "port": 80, "targetPort": pod_port},
        {"name": "alt", "port": 8443, "targetPort": pod_port},
    ]}});
    let (status, body) = sim
        .api
        .request_as(
            "PATCH",
            "/api/v1/namespaces/default/services/front",
            "application/strategic-merge-patch+json",
            Some(&ports),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let alt: SocketAddr = test_support::until(sim.state(), "the second port", |s| {
        let svc = s.store.get(Kind::Service, "default", "front")?;
        let listed = svc["metadata"]["annotations"][PORTS_ANNOTATION].as_str()?;
        let (_, alt) = listed.split_once("8443/TCP=")?;
        alt.split(',').next()?.parse().ok()
    })
    .await;
    assert_eq!(alt.ip(), ip, "one address for the Service");
    assert_eq!(
        ask(alt, b"on the new port").await.unwrap(),
        b"on the new port"
    );
    assert_eq!(
        ask(at, b"on the old port").await.unwrap(),
        b"on the old port"
    );
    open.write_all(b" and after").await.unwrap();
    open.shutdown().await.unwrap();
    let mut echoed = Vec::new();
    open.read_to_end(&mut echoed).await.unwrap();
    assert_eq!(echoed, b"before and after");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn source_ranges_without_the_clients_address_refuse_it_until_they_include_it() {
    let sim = Sim::start().await;
    sim.running_pod("web").await;
    let pod_port = sim.echo("web").await;
    let ranges = json!({"loadBalancerSourceRanges": ["10.0.0.0/8"]});
    service(&sim, "private", json!(pod_port), ranges).await;
    let (_, at) = balanced(&sim, "private").await;
    let refused = ask(at, b"let me in").await;
    assert!(
        refused.as_ref().is_err() || refused.as_ref().is_ok_and(Vec::is_empty),
        "{refused:?}"
    );
    let patch = json!({"spec": {"loadBalancerSourceRanges": ["10.0.0.0/8", "127.0.0.0/8"]}});
    let (status, _) = sim
        .api
        .request_as(
            "PATCH",
            "/api/v1/namespaces/default/services/private",
            "application/merge-patch+json",
            Some(&patch),
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(ask(at, b"let me in").await.unwrap(), b"let me in");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_is_reset_without_a_ready_pod_and_reaches_the_port_a_named_target_names() {
    let sim = Sim::start().await;
    service(&sim, "named", json!("http"), json!({})).await;
    let (_, at) = balanced(&sim, "named").await;
    let nobody = ask(at, b"hello?").await;
    assert!(
        nobody.as_ref().is_err() || nobody.as_ref().is_ok_and(Vec::is_empty),
        "{nobody:?}"
    );
    if !loopback::per_pod_addresses() {
        return; // every pod shares 127.0.0.1: a fixed port may be taken
    }
    let container = json!({"containers": [{
        "name": "web",
        "image": "gcr.io/p/web:1",
        "env": [{"name": "SIM_STALL_AFTER", "value": "0"}],
        "ports": [{"name": "http", "containerPort": 18080}],
    }]});
    sim.pod("web", json!([]), container, |p| {
        p["status"]["phase"] == "Running"
    })
    .await;
    sim.echo_at("web", 18080).await;
    assert_eq!(ask(at, b"hello?").await.unwrap(), b"hello?");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_listener_closes_when_the_service_stops_being_a_load_balancer_or_goes() {
    let sim = Sim::start().await;
    service(&sim, "first", json!(8080), json!({})).await;
    service(&sim, "second", json!(8080), json!({})).await;
    let (_, first) = balanced(&sim, "first").await;
    let (_, second) = balanced(&sim, "second").await;
    assert_ne!(first, second);

    let patch = json!({"spec": {"type": "ClusterIP"}});
    let (status, _) = sim
        .api
        .request_as(
            "PATCH",
            "/api/v1/namespaces/default/services/first",
            "application/merge-patch+json",
            Some(&patch),
        )
        .await;
    assert_eq!(status, 200);
    until_closed(first).await;
    test_support::until(sim.state(), "no ingress", |s| {
        let svc = s.store.get(Kind::Service, "default", "first")?;
        svc["status"]["loadBalancer"]
            .get("ingress")
            .is_none()
            .then_some(())
    })
    .await;

    let (status, _) = sim
        .api
        .request("DELETE", "/api/v1/namespaces/default/services/second", None)
        .await;
    assert_eq!(status, 200);
    until_closed(second).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_python_process_pod_answers_http_through_its_load_balancer_and_a_port_forward() {
    let Some(sim) = Sim::with_python().await else {
        return;
    };
    let container = json!({"containers": [{
        "name": "web",
        "image": "python:3.12",
        "args": ["-m", "http.server", "8080", "--bind", "$(POD_IP)"],
        "env": [{"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}],
        "ports": [{"name": "http", "containerPort": 8080}],
        "readinessProbe": {"tcpSocket": {"port": "http"}, "periodSeconds": 1},
    }]});
    sim.pod("web", json!([]), container, |p| {
        p["status"]["conditions"].as_array().is_some_and(|c| {
            c.iter()
                .any(|c| c["type"] == "Ready" && c["status"] == "True")
        })
    })
    .await;
    service(&sim, "front", json!("http"), json!({})).await;
    let (_, at) = balanced(&sim, "front").await;
    let get = b"GET / HTTP/1.0\r\n\r\n";
    let answer = ask(at, get).await.unwrap();
    assert!(
        answer.starts_with(b"HTTP/1.0 200 OK"),
        "{}",
        String::from_utf8_lossy(&answer)
    );

    let pods: kube::Api<k8s_openapi::api::core::v1::Pod> =
        kube::Api::default_namespaced(sim.kube_client());
    let mut forwarder = pods.portforward("web", &[8080]).await.unwrap();
    let mut stream = forwarder.take_stream(8080).unwrap();
    stream.write_all(get).await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(PATIENCE, stream.read_to_end(&mut answer))
        .await
        .expect("http.server answers and closes in time")
        .unwrap();
    assert!(
        answer.starts_with(b"HTTP/1.0 200 OK"),
        "{}",
        String::from_utf8_lossy(&answer)
    );
}

#[test]
fn a_port_taken_on_the_address_is_moved_to_one_the_system_picks_and_udp_is_refused() {
    let ip = IpAddr::from([127, 0, 0, 1]);
    let taken = std::net::TcpListener::bind((ip, 0)).unwrap();
    let port = taken.local_addr().unwrap().port();
    let tcp = ServicePort {
        port,
        protocol: "TCP".into(),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let bound = runtime.block_on(async { bind(ip, &tcp) }).unwrap();
    assert_eq!(bound.moved.as_deref(), Some("is taken"));
    assert_ne!(bound.listener.local_addr().unwrap().port(), port);
    let udp = ServicePort {
        port: 53,
        protocol: "UDP".into(),
    };
    let refused = runtime.block_on(async { bind(ip, &udp) }).err().unwrap();
    assert_eq!(refused, "the simulator balances TCP only, not UDP");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn source_ranges_that_are_no_cidrs_or_on_another_type_are_refused_as_upstream_refuses_them() {
    let sim = Sim::start().await;
    let svc = |name: &str, kind: &str| {
        json!({
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": name},
            "spec": {
                "type": kind,
                "ports": [{"port": 80}],
                "loadBalancerSourceRanges": ["10.0.0.0/8", "59.100.192.6"],
            },
        })
    };
    let path = "/api/v1/namespaces/default/services";
    let (status, body) = sim
        .api
        .request("POST", path, Some(&svc("bare", "LoadBalancer")))
        .await;
    assert_eq!(status, 422);
    assert_eq!(
        body["message"],
        "Service \"bare\" is invalid: spec.LoadBalancerSourceRanges: Invalid value: \
         \"[10.0.0.0/8 59.100.192.6]\": must be a list of IP ranges. For example, \
         10.240.0.0/24,10.250.0.0/24 "
    );
    let mut internal = svc("internal", "ClusterIP");
    internal["spec"]["loadBalancerSourceRanges"] = json!(["10.0.0.0/8"]);
    let (status, body) = sim.api.request("POST", path, Some(&internal)).await;
    assert_eq!(status, 422);
    assert_eq!(
        body["message"],
        "Service \"internal\" is invalid: spec.LoadBalancerSourceRanges: Forbidden: may only be \
         used when `type` is 'LoadBalancer'"
    );
}
