//! The service controller's load balancers, as GKE's cloud controller manager makes them for
//! `type: LoadBalancer` Services, here on loopback: each such Service gets a loopback address of
//! its own (`process::loopback`, the pool pods draw from) and a TCP listener there on each of its
//! ports, so its ports stay its own; `status.loadBalancer.ingress[0].ip` says the address. A port
//! that cannot be bound there (below 1024 without the privilege, or taken) listens on a port the
//! system picks instead, said in a Warning event; the `sim.gantry.dev/load-balancer-ports`
//! annotation lists where every port really listens (`80/TCP=127.58.3.9:80`). Connections go to
//! a ready pod the selector picks (`connection`). The listeners close when the Service goes or
//! stops being a LoadBalancer.

mod connection;
mod listen;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Arc;

use serde_json::{Value, json};
use tokio::sync::broadcast::error::RecvError;
use tokio_util::sync::CancellationToken;

use crate::kube::cluster::ClusterState;
use crate::kube::events::EventType;
use crate::kube::meta;
use crate::kube::process::loopback;
use crate::kube::resources::Kind;
use crate::kube::store::{Change, rv_of};
use listen::{Bound, ServicePort};

/// Where a client reads each port's real address.
pub const PORTS_ANNOTATION: &str = "sim.gantry.dev/load-balancer-ports";
const COMPONENT: &str = "service-controller";

/// Subscribes to the store at once, before the task runs, so that nothing stored after the
/// cluster starts is missed.
pub fn run(state: Arc<ClusterState>) -> impl std::future::Future<Output = ()> + Send + 'static {
    let rx = state.store.subscribe();
    control_loop(state, rx)
}

/// One Service's load balancer: its address and its ports' listeners.
struct Balancer {
    uid: String,
    address: IpAddr,
    ports: Vec<Listening>,
}

impl Drop for Balancer {
    fn drop(&mut self) {
        // Its listeners stop as `ports` drops.
        loopback::give_back(self.address);
    }
}

/// One port of a balancer: where it listens (None when it could not be bound).
struct Listening {
    port: ServicePort,
    at: Option<String>,
    stop: CancellationToken,
}

impl Drop for Listening {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

type Balancers = HashMap<(String, String), Balancer>;

async fn control_loop(
    state: Arc<ClusterState>,
    mut rx: tokio::sync::broadcast::Receiver<Arc<Change>>,
) {
    let mut balancers = Balancers::new();
    resync(&state, &mut balancers);
    loop {
        let change = tokio::select! {
            _ = state.stop.cancelled() => return,
            c = rx.recv() => c,
        };
        match change {
            Ok(c) if c.kind == Kind::Service => {
                let (ns, name) = (meta::namespace(&c.object), meta::name(&c.object));
                reconcile(&state, &mut balancers, ns, name);
            }
            Ok(_) => {}
            Err(RecvError::Lagged(_)) => resync(&state, &mut balancers),
            Err(RecvError::Closed) => return,
        }
    }
}

fn resync(state: &Arc<ClusterState>, balancers: &mut Balancers) {
    let (services, _) = state.store.list(Kind::Service, None, |_| true);
    let mut keys: Vec<(String, String)> = balancers.keys().cloned().collect();
    for svc in &services {
        keys.push((meta::namespace(svc).into(), meta::name(svc).into()));
    }
    keys.sort();
    keys.dedup();
    for (ns, name) in keys {
        reconcile(state, balancers, &ns, &name);
    }
}

/// The TCP ports of a Service that wants a load balancer; None when it wants none.
fn wanted(svc: &Value) -> Option<Vec<ServicePort>> {
    if svc.pointer("/spec/type").and_then(Value::as_str) != Some("LoadBalancer")
        || meta::is_deleting(svc)
    {
        return None;
    }
    let ports = svc.pointer("/spec/ports").and_then(Value::as_array);
    Some(
        ports
            .into_iter()
            .flatten()
            .filter_map(|p| {
                let port = u16::try_from(p["port"].as_u64()?).ok()?;
                let protocol = p["protocol"].as_str().unwrap_or("TCP").to_string();
                Some(ServicePort { port, protocol })
            })
            .collect(),
    )
}

fn reconcile(state: &Arc<ClusterState>, balancers: &mut Balancers, ns: &str, name: &str) {
    let key = (ns.to_string(), name.to_string());
    let svc = state.store.get(Kind::Service, ns, name);
    let Some((svc, ports)) = svc.and_then(|s| wanted(&s).map(|p| (s, p))) else {
        if balancers.remove(&key).is_some() {
            clear_status(state, ns, name);
        }
        return;
    };
    let uid = meta::uid(&svc).to_string();
    if balancers.get(&key).is_none_or(|b| b.uid != uid) {
        // A Service recreated under its name is another: the old balancer goes first.
        balancers.remove(&key);
        event(
            state,
            &svc,
            EventType::Normal,
            "EnsuringLoadBalancer",
            "Ensuring load balancer",
        );
        let balancer = Balancer {
            uid,
            address: loopback::take(),
            ports: Vec::new(),
        };
        balancers.insert(key.clone(), balancer);
    }
    let Some(balancer) = balancers.get_mut(&key) else {
        return;
    };
    // Ports kept keep their listeners (and so their connections); ports gone stop.
    balancer.ports.retain(|l| ports.contains(&l.port));
    for port in ports {
        if !balancer.ports.iter().any(|l| l.port == port) {
            let listening = open(state, &svc, balancer.address, port);
            balancer.ports.push(listening);
        }
    }
    let listed: Vec<String> = balancer
        .ports
        .iter()
        .filter_map(|l| Some(format!("{}={}", l.port, l.at.as_ref()?)))
        .collect();
    if set_status(state, ns, name, balancer.address, &listed.join(",")) {
        event(
            state,
            &svc,
            EventType::Normal,
            "EnsuredLoadBalancer",
            "Ensured load balancer",
        );
    }
}

/// Listens for one port of the Service, saying in an event what did not go as asked.
fn open(state: &Arc<ClusterState>, svc: &Value, ip: IpAddr, port: ServicePort) -> Listening {
    let stop = state.stop.child_token();
    let Bound { listener, moved } = match listen::bind(ip, &port) {
        Ok(bound) => bound,
        Err(why) => {
            let message = format!(
                "Error syncing load balancer: failed to ensure load balancer: port {port}: {why}"
            );
            event(
                state,
                svc,
                EventType::Warning,
                "SyncLoadBalancerFailed",
                &message,
            );
            return Listening {
                port,
                at: None,
                stop,
            };
        }
    };
    let at = listener.local_addr().ok().map(|a| a.to_string());
    if let (Some(why), Some(at)) = (moved, &at) {
        let message = format!(
            "port {port} listens on {at} instead: {ip}:{} {why}",
            port.port
        );
        event(
            state,
            svc,
            EventType::Warning,
            "LoadBalancerPortMoved",
            &message,
        );
    }
    let target = listen::Target {
        state: state.clone(),
        namespace: meta::namespace(svc).to_string(),
        name: meta::name(svc).to_string(),
        port: port.port,
    };
    tokio::spawn(listen::accept(target, listener, stop.clone()));
    Listening { port, at, stop }
}

/// Writes the ingress address and the ports annotation; whether anything changed.
fn set_status(state: &ClusterState, ns: &str, name: &str, ip: IpAddr, listed: &str) -> bool {
    let before = state.store.get(Kind::Service, ns, name);
    let after = state.store.update(Kind::Service, ns, name, |svc| {
        svc["status"]["loadBalancer"] =
            json!({"ingress": [{"ip": ip.to_string(), "ipMode": "VIP"}]});
        if !svc["metadata"]["annotations"].is_object() {
            svc["metadata"]["annotations"] = json!({});
        }
        svc["metadata"]["annotations"][PORTS_ANNOTATION] = json!(listed);
    });
    match (before, after) {
        (Some(before), Ok(after)) => rv_of(&before) != rv_of(&after),
        _ => false,
    }
}

/// A Service no longer of type LoadBalancer has no ingress, and no ports listed.
fn clear_status(state: &ClusterState, ns: &str, name: &str) {
    let _ = state.store.update(Kind::Service, ns, name, |svc| {
        svc["status"]["loadBalancer"] = json!({});
        if let Some(annotations) = svc["metadata"]["annotations"].as_object_mut() {
            annotations.remove(PORTS_ANNOTATION);
        }
    });
}

fn event(state: &ClusterState, svc: &Value, kind: EventType, reason: &str, message: &str) {
    state
        .events
        .record(&state.store, svc, kind, reason, message, COMPONENT);
}
