//! One pod from creation to a terminal phase: placed, images pulled, init containers run in
//! order, containers started together, and the phase and conditions the kubelet reports at each
//! step.

use serde_json::{Value, json};
use std::time::Duration;

use futures::future::BoxFuture;

use super::containers::run_container;
use super::context::PodCtx;
use super::images::pull_image;
use super::init;
use super::is_terminal;
use super::process::{self, Sandbox};
use super::scheduling::schedule;
use super::shutdown;
use crate::kube::meta;
use crate::kube::pod_status::{ContainerView, set_condition, set_containers};
use crate::kube::resources::Kind;

/// Runs the pod to a terminal phase; false when it was stopped by a delete first.
pub(super) async fn lifecycle(ctx: &PodCtx) -> bool {
    let Some(pod) = ctx.get() else { return true };
    if is_terminal(&pod) {
        return true;
    }
    let Some(node) = schedule(ctx).await else {
        return false;
    };
    if shutdown::reject_if_shutting_down(ctx, &node) {
        return true;
    }
    let containers: Vec<Value> = pod
        .pointer("/spec/containers")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let host_ip = node_ip(ctx, &node);
    let executables: Vec<_> = containers
        .iter()
        .map(|c| process::executable_for(ctx, c))
        .collect();
    let now = meta::now();
    let mut views: Vec<ContainerView> = containers
        .iter()
        .map(|c| {
            ContainerView::waiting(
                str_of(c, "name"),
                str_of(c, "image"),
                "ContainerCreating",
                None,
            )
        })
        .collect();
    ctx.update(|p| {
        p["status"]["phase"] = json!("Pending");
        p["status"]["hostIP"] = json!(host_ip);
        p["status"]["hostIPs"] = json!([{"ip": host_ip}]);
        p["status"]["startTime"] = json!(now);
        set_condition(p, "PodReadyToStartContainers", false, None, None);
        set_condition(p, "Initialized", true, None, None);
        set_condition(
            p,
            "Ready",
            false,
            Some("ContainersNotReady"),
            Some(&not_ready_message(&views)),
        );
        set_condition(
            p,
            "ContainersReady",
            false,
            Some("ContainersNotReady"),
            Some(&not_ready_message(&views)),
        );
        set_containers(p, &views);
    });
    // A pod with a container run as a process gets its volumes and address first.
    let sandbox = if executables.iter().any(Option::is_some) {
        let Some(sandbox) = Sandbox::prepare(ctx, &node).await else {
            return false;
        };
        Some(sandbox)
    } else {
        None
    };
    let pod_ip = match &sandbox {
        Some(sandbox) => sandbox.ip.to_string(),
        None => format!("10.4.{}.{}", rand_byte(), rand_byte().max(2)),
    };
    if !ctx.wait(Duration::from_secs(1), Duration::ZERO).await {
        return false;
    }
    ctx.update(|p| set_condition(p, "PodReadyToStartContainers", true, None, None));
    for (i, c) in containers.iter().enumerate() {
        if !pull_image(ctx, c, &mut views, i).await {
            return false;
        }
    }
    // The init containers run, one after another, before any container starts.
    let unpacked = match init::run_all(ctx, sandbox.as_ref()).await {
        None => return false,
        Some(Err(())) => return true,
        Some(Ok(unpacked)) => unpacked,
    };
    // Every image is there: start the containers together, as the kubelet does.
    let restart_on_failure =
        pod.pointer("/spec/restartPolicy").and_then(Value::as_str) == Some("OnFailure");
    let ordinal = next_ordinal(ctx, &pod);
    let mut tasks: Vec<BoxFuture<'_, Option<i32>>> = Vec::new();
    for (i, c) in containers.iter().enumerate() {
        match (&sandbox, &executables[i]) {
            (Some(sandbox), Some(executable)) => tasks.push(Box::pin(process::run_container(
                ctx,
                sandbox,
                process::code::as_local(ctx, &pod, c.clone(), executable),
                i,
                executable.clone(),
            ))),
            _ => tasks.push(Box::pin(run_container(
                ctx,
                c.clone(),
                i,
                ordinal,
                restart_on_failure,
                &unpacked,
            ))),
        }
    }
    ctx.update(|p| {
        p["status"]["podIP"] = json!(pod_ip);
        p["status"]["podIPs"] = json!([{"ip": pod_ip}]);
    });
    let results = futures::future::join_all(tasks).await;
    // The containers are done: the sandbox goes (address, directory, metadata server).
    drop(sandbox);
    if results.iter().any(Option::is_none) {
        return false;
    }
    let all_ok = results
        .iter()
        .all(|r| r.as_ref().is_some_and(|code| *code == 0));
    ctx.update(|p| {
        p["status"]["phase"] = json!(if all_ok { "Succeeded" } else { "Failed" });
        let reason = if all_ok { "PodCompleted" } else { "PodFailed" };
        set_condition(p, "Ready", false, Some(reason), None);
        set_condition(p, "ContainersReady", false, Some(reason), None);
        set_condition(p, "PodReadyToStartContainers", false, None, None);
    });
    true
}

pub(super) fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v[key].as_str().unwrap_or_default()
}

pub(super) fn rand_byte() -> u8 {
    use rand::Rng;
    rand::rng().random_range(1..250)
}

fn not_ready_message(views: &[ContainerView]) -> String {
    let names: Vec<&str> = views
        .iter()
        .filter(|v| !v.ready)
        .map(|v| v.name.as_str())
        .collect();
    format!("containers with unready status: [{}]", names.join(" "))
}

fn node_ip(ctx: &PodCtx, node: &str) -> String {
    ctx.state
        .store
        .get(Kind::Node, "", node)
        .and_then(|n| {
            n.pointer("/status/addresses")
                .and_then(Value::as_array)
                .and_then(|a| a.iter().find(|x| x["type"] == "InternalIP"))
                .and_then(|x| x["address"].as_str().map(String::from))
        })
        .unwrap_or_else(|| "10.128.0.2".into())
}

fn next_ordinal(ctx: &PodCtx, pod: &Value) -> u64 {
    let owner = meta::owner_uids(pod)
        .first()
        .map(|s| s.to_string())
        .unwrap_or_else(|| ctx.uid.clone());
    let mut ordinals = ctx
        .state
        .pod_ordinals
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    let n = ordinals.entry(owner).or_insert(0);
    let mine = *n;
    *n += 1;
    mine
}
