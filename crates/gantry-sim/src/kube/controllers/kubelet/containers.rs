//! One container's runs: the workload started with its resolved environment, its exit
//! reported as `terminated`, and under `restartPolicy: OnFailure` restarts in place after a
//! `CrashLoopBackOff` wait.

use std::time::Duration;

use serde_json::{Value, json};

use super::MIN_RETRY_WAIT;
use super::context::PodCtx;
use super::env::resolve_env;
use super::init::Unpacked;
use super::pod::str_of;
use super::python_script;
use crate::kube::events::EventType;
use crate::kube::meta;
use crate::kube::pod_status::{ContainerView, set_condition};
use crate::kube::workload::{self, WorkloadSpec};

/// Runs one container until it ends for good; Some(exit code) or None when stopped. A Python
/// script missing from the code the init containers unpacked (`unpacked`) ends it as Python
/// would, instead of the workload.
pub(super) async fn run_container(
    ctx: &PodCtx,
    container: Value,
    index: usize,
    ordinal: u64,
    restart_on_failure: bool,
    unpacked: &Unpacked,
) -> Option<i32> {
    let name = str_of(&container, "name").to_string();
    let image = str_of(&container, "image").to_string();
    let memory_limit = container
        .pointer("/resources/limits/memory")
        .and_then(Value::as_str)
        .and_then(crate::kube::quantity::units);
    let mut restarts = 0u32;
    let mut last_state = json!({});
    loop {
        let pod = ctx.get()?;
        let spec = WorkloadSpec::from_env(&resolve_env(&container, &pod));
        let stream = ctx.state.logs.start_instance(&ctx.ns, &ctx.name, &name);
        let started = meta::now();
        let container_id = format!("containerd://{}", meta::new_uid().replace('-', ""));
        let running = ContainerView {
            name: name.clone(),
            image: image.clone(),
            state: json!({"running": {"startedAt": started}}),
            last_state: last_state.clone(),
            ready: true,
            started: true,
            restarts,
            container_id: Some(container_id.clone()),
        };
        ctx.update(|p| {
            put_container(p, index, &running);
            p["status"]["phase"] = json!("Running");
            let all_ready = container_views_ready(p);
            set_condition(p, "Ready", all_ready, None, None);
            set_condition(p, "ContainersReady", all_ready, None, None);
        });
        let exit = match python_script::cannot_open(&container, unpacked) {
            Some(said) => {
                stream.push(said);
                Some(workload::Exit::from_code(2))
            }
            None => {
                workload::run(
                    &spec,
                    ordinal + u64::from(restarts),
                    memory_limit,
                    ctx.state.shared.replay_dir.as_deref(),
                    stream.clone(),
                    ctx.state.shared.clock,
                    ctx.cancel.clone(),
                )
                .await
            }
        };
        stream.finish();
        let exit = exit?;
        let terminated = json!({"terminated": {
            "exitCode": exit.code,
            "reason": exit.reason,
            "startedAt": started,
            "finishedAt": meta::now(),
            "containerID": container_id,
        }});
        if exit.code == 0 || !restart_on_failure {
            let done = ContainerView {
                state: terminated,
                ready: false,
                started: false,
                ..running
            };
            ctx.update(|p| put_container(p, index, &done));
            return Some(exit.code);
        }
        // OnFailure: the kubelet restarts the container in place, backing off.
        restarts += 1;
        last_state = terminated;
        let message = format!(
            "back-off {}s restarting failed container={name} pod={}_{}({})",
            10u64 << restarts.min(5),
            ctx.name,
            ctx.ns,
            ctx.uid
        );
        let waiting = ContainerView {
            state: json!({"waiting": {"reason": "CrashLoopBackOff", "message": message}}),
            last_state: last_state.clone(),
            ready: false,
            started: false,
            restarts,
            ..running
        };
        ctx.update(|p| put_container(p, index, &waiting));
        ctx.event(
            EventType::Warning,
            "BackOff",
            &format!(
                "Back-off restarting failed container {name} in pod {}_{}({})",
                ctx.name, ctx.ns, ctx.uid
            ),
            "kubelet",
        );
        let delay = Duration::from_secs((10u64 << (restarts - 1).min(5)).min(300));
        if !ctx.wait(delay, MIN_RETRY_WAIT).await {
            return None;
        }
    }
}

fn put_container(pod: &mut Value, index: usize, view: &ContainerView) {
    if let Some(list) = pod["status"]["containerStatuses"].as_array_mut()
        && let Some(slot) = list.get_mut(index)
    {
        *slot = view.to_json();
    }
}

fn container_views_ready(pod: &Value) -> bool {
    pod["status"]["containerStatuses"]
        .as_array()
        .is_some_and(|l| l.iter().all(|c| c["ready"] == true))
}
