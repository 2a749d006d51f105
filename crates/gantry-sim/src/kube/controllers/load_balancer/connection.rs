//! One connection through a load balancer: a source outside `loadBalancerSourceRanges` is
//! refused (the connection reset, as GCP's firewall rule would let nothing through), and any
//! other goes to a ready pod the Service selects, in turn, at the `targetPort` (a number, or a
//! container port's name), where `ClusterState::pod_endpoint` says that pod listens. With no
//! such pod, or a pod that listens on nothing, the connection is reset.

use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use ipnet::IpNet;
use serde_json::Value;
use tokio::net::TcpStream;
use tokio_util::sync::CancellationToken;

use super::listen::Target;
use crate::kube::meta;
use crate::kube::resources::Kind;

/// How long a dial to a pod may take.
const DIAL_TIMEOUT: Duration = Duration::from_secs(5);

/// Spreads connections over a Service's pods.
static TURN: AtomicUsize = AtomicUsize::new(0);

pub async fn carry(
    target: Target,
    mut client: TcpStream,
    peer: SocketAddr,
    stop: CancellationToken,
) {
    let state = &target.state;
    let Some(svc) = state
        .store
        .get(Kind::Service, &target.namespace, &target.name)
    else {
        return refuse(client);
    };
    if !admitted(&svc, peer.ip()) {
        tracing::debug!(%peer, service = target.name, "outside loadBalancerSourceRanges");
        return refuse(client);
    }
    let Some(backend) = backend(&target, &svc) else {
        return refuse(client);
    };
    let mut pod = match tokio::time::timeout(DIAL_TIMEOUT, TcpStream::connect(backend)).await {
        Ok(Ok(pod)) => pod,
        _ => return refuse(client),
    };
    let _ = pod.set_nodelay(true);
    tokio::select! {
        _ = stop.cancelled() => {}
        _ = tokio::io::copy_bidirectional(&mut client, &mut pod) => {}
    }
}

/// Closes with a reset, not an orderly end: the client sees the connection refused.
fn refuse(client: TcpStream) {
    let _ = client.set_zero_linger();
    drop(client);
}

/// Whether `source` may connect: no ranges admit everyone; an entry that is no CIDR admits no one.
pub fn admitted(svc: &Value, source: IpAddr) -> bool {
    let Some(ranges) = svc
        .pointer("/spec/loadBalancerSourceRanges")
        .and_then(Value::as_array)
        .filter(|r| !r.is_empty())
    else {
        return true;
    };
    ranges
        .iter()
        .filter_map(Value::as_str)
        .filter_map(|r| r.trim().parse::<IpNet>().ok())
        .any(|net| net.contains(&source))
}

/// Where the connection goes: a ready pod of the selector's, at the target port.
fn backend(target: &Target, svc: &Value) -> Option<SocketAddr> {
    let selector = svc.pointer("/spec/selector").and_then(Value::as_object)?;
    if selector.is_empty() {
        return None;
    }
    let spec_port = svc
        .pointer("/spec/ports")
        .and_then(Value::as_array)?
        .iter()
        .find(|p| p["port"].as_u64() == Some(u64::from(target.port)))?;
    let target_port = &spec_port["targetPort"];
    let (pods, _) = target
        .state
        .store
        .list(Kind::Pod, Some(&target.namespace), |pod| {
            is_ready(pod)
                && selector
                    .iter()
                    .all(|(k, v)| pod.pointer("/metadata/labels").and_then(|l| l.get(k)) == Some(v))
        });
    let ready: Vec<(String, u16)> = pods
        .iter()
        .filter_map(|pod| Some((meta::name(pod).to_string(), port_of(pod, target_port)?)))
        .collect();
    if ready.is_empty() {
        return None;
    }
    let (pod, port) = &ready[TURN.fetch_add(1, Ordering::Relaxed) % ready.len()];
    target.state.pod_endpoint(&target.namespace, pod, *port)
}

fn is_ready(pod: &Value) -> bool {
    pod.pointer("/status/phase").and_then(Value::as_str) == Some("Running")
        && !meta::is_deleting(pod)
        && pod
            .pointer("/status/conditions")
            .and_then(Value::as_array)
            .is_some_and(|cs| {
                cs.iter()
                    .any(|c| c["type"] == "Ready" && c["status"] == "True")
            })
}

/// The pod's port a `targetPort` names: a number as it is, a name looked up in its containers.
fn port_of(pod: &Value, target_port: &Value) -> Option<u16> {
    if let Some(n) = target_port.as_u64() {
        return u16::try_from(n).ok();
    }
    let name = target_port.as_str()?;
    if let Ok(n) = name.parse::<u16>() {
        return Some(n);
    }
    pod.pointer("/spec/containers")?
        .as_array()?
        .iter()
        .filter_map(|c| c["ports"].as_array())
        .flatten()
        .find(|p| p["name"].as_str() == Some(name))
        .and_then(|p| u16::try_from(p["containerPort"].as_u64()?).ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn source_ranges_admit_what_they_contain_and_no_ranges_admit_all() {
        let local: IpAddr = "127.0.0.1".parse().unwrap_or(IpAddr::from([127, 0, 0, 1]));
        let open = json!({"spec": {}});
        let lan = json!({"spec": {"loadBalancerSourceRanges": ["10.0.0.0/8", "bogus"]}});
        let lo = json!({"spec": {"loadBalancerSourceRanges": ["10.0.0.0/8", "127.0.0.0/8"]}});
        assert!(admitted(&open, local));
        assert!(!admitted(&lan, local));
        assert!(admitted(&lo, local));
    }

    #[test]
    fn a_named_target_port_is_the_containers_port_of_that_name() {
        let pod = json!({"spec": {"containers": [
            {"name": "a", "ports": [{"name": "metrics", "containerPort": 9100}]},
            {"name": "b", "ports": [{"name": "http", "containerPort": 8080}]},
        ]}});
        assert_eq!(port_of(&pod, &json!("http")), Some(8080));
        assert_eq!(port_of(&pod, &json!(8443)), Some(8443));
        assert_eq!(port_of(&pod, &json!("grpc")), None);
    }
}
