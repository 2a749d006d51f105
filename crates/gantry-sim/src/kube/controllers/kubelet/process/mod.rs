//! Containers run as local processes (`--run-image`), with everything a real pod is given:
//! exactly the container's environment and nothing of the machine's (no `HOME`, `KUBECONFIG`,
//! `GOOGLE_APPLICATION_CREDENTIALS` or `CLOUDSDK_*` of the simulator's own; `PATH` is the
//! EXECUTABLE's directory then the usual image PATH, `HOME` an empty directory of the pod's),
//! its volumes as directories of its own, its service account's token, the API server's
//! address (`KUBERNETES_SERVICE_HOST`/`PORT`), its node's metadata server (`GCE_METADATA_HOST`),
//! a loopback address of its own as its pod IP, its output as its log, its exit code as the
//! container's, its probes, SIGTERM when it is stopped and SIGKILL after its grace period.
//!
//! The one departure from a kubelet: without containers a mount path cannot be made real, so
//! every argument and environment value (and `workingDir`) that begins with a volume's mount
//! path is rewritten to that volume's directory (`launch`). And without network namespaces, a
//! process that binds 0.0.0.0 binds every pod's address: two such pods on one port collide, where
//! binding the pod's own IP (`status.podIP`, through the downward API) never does.
//!
//! `sandbox`: what a pod's containers share; `launch`: a container's command line and
//! environment; `config_env`: values from Secrets and ConfigMaps; `volumes`: their files;
//! `child`: the running process; `probes` and `prober`: health; `status`: what is reported.

mod child;
pub mod code;
mod config_env;
mod launch;
mod prober;
mod probes;
mod sandbox;
mod status;
#[cfg(test)]
mod tests;
mod volumes;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use super::MIN_RETRY_WAIT;
use super::context::PodCtx;
use super::pod::str_of;
use crate::kube::events::EventType;
use crate::kube::meta;
use crate::kube::pod_status::ContainerView;
use child::{Launch, Running};
use prober::{Probes, Unhealthy};
use probes::InContainer;
pub use sandbox::Sandbox;
pub use volumes::files_of as volume_files;

/// The shortest real grace a process is given to handle its SIGTERM, however fast the
/// simulated clock runs (a grace of 0 is SIGKILL at once).
const MIN_GRACE: Duration = Duration::from_secs(1);

/// The EXECUTABLE standing for the container's image, when it runs as a process: the one its
/// image is mapped to, else, for a code attempt under `--run-code`, the machine's interpreter.
pub fn executable_for(ctx: &PodCtx, container: &Value) -> Option<PathBuf> {
    ctx.state
        .shared
        .run_images
        .executable_for(str_of(container, "image"))
        .map(Path::to_path_buf)
        .or_else(|| code::interpreter_for(ctx, container))
}

/// How one run of the container ended.
enum Ended {
    Exited(i32),
    Unhealthy(Unhealthy),
    Stopped,
}

/// Runs one process container until it ends for good; Some(exit code), or None when stopped.
pub async fn run_container(
    ctx: &PodCtx,
    sandbox: &Sandbox,
    container: Value,
    index: usize,
    executable: PathBuf,
) -> Option<i32> {
    let name = str_of(&container, "name").to_string();
    let image = str_of(&container, "image").to_string();
    let mut restarts = 0u32;
    let mut last_state = json!({});
    loop {
        let pod = ctx.get()?;
        let mounts = sandbox.mounts(&container);
        let mut env = sandbox.base_env(&pod, &executable);
        let store = &ctx.state.store;
        if let Err(why) = config_env::add_container_env(&mut env, &container, &pod, store, &mounts)
        {
            let mut waiting =
                ContainerView::waiting(&name, &image, "CreateContainerConfigError", Some(&why));
            (waiting.restarts, waiting.last_state) = (restarts, last_state.clone());
            failed(ctx, &why);
            status::put(ctx, index, &waiting);
            if !ctx.wait(Duration::from_secs(10), MIN_RETRY_WAIT).await {
                return None;
            }
            continue;
        }
        let probes = Probes::of(&container, sandbox.ip);
        let running = ContainerView {
            name: name.clone(),
            image: image.clone(),
            state: json!({"running": {"startedAt": meta::now()}}),
            last_state: last_state.clone(),
            ready: probes.ready_at_start(),
            started: probes.startup.is_none(),
            restarts,
            container_id: Some(format!("containerd://{}", meta::new_uid().replace('-', ""))),
        };
        let command = launch::command_line(&container, &executable, &env, &mounts);
        let launch = command.map(|(program, args)| Launch {
            program,
            args,
            env: env.into_vars(),
            cwd: launch::working_dir(&container, &mounts, sandbox.dir()),
        });
        let in_container = launch.map(|launch| InContainer {
            launch,
            mounts,
            executable: executable.clone(),
        });
        let state = run_once(ctx, index, in_container, &probes, &running).await?;
        let code = state
            .pointer("/terminated/exitCode")
            .and_then(Value::as_i64)
            .and_then(|c| i32::try_from(c).ok())
            .unwrap_or(128);
        if !restarts_after(&pod, code) {
            status::put(ctx, index, &finished(&running, state));
            return Some(code);
        }
        restarts += 1;
        last_state = state;
        if !back_off(ctx, index, &running, &last_state, restarts).await {
            return None;
        }
    }
}

/// One run of the container, from its start (or its failure to start) to its end: its
/// `terminated` state, or None when the pod is stopped meanwhile.
async fn run_once(
    ctx: &PodCtx,
    index: usize,
    in_container: Result<InContainer, String>,
    probes: &Probes,
    running: &ContainerView,
) -> Option<Value> {
    let started = running.state["running"]["startedAt"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let id = running.container_id.clone().unwrap_or_default();
    let stream = ctx
        .state
        .logs
        .start_instance(&ctx.ns, &ctx.name, &running.name);
    let spawned = in_container.and_then(|c| {
        Running::spawn(&c.launch, stream.clone())
            .map(|child| (child, c.clone()))
            .map_err(|e| start_error(&c.launch.program, &e))
    });
    let (mut child, in_container) = match spawned {
        Ok(spawned) => spawned,
        Err(why) => {
            failed(ctx, &why);
            stream.finish();
            return Some(terminated(128, &started, &id, Some(&why)));
        }
    };
    status::put(ctx, index, running);
    let ended = tokio::select! {
        code = child.wait() => Ended::Exited(code),
        unhealthy = prober::watch(ctx, index, probes, &in_container) => Ended::Unhealthy(unhealthy),
        _ = ctx.cancel.cancelled() => Ended::Stopped,
    };
    let code = match ended {
        Ended::Exited(code) => code,
        Ended::Unhealthy(why) => {
            let said = format!(
                "Container {} {}, will be restarted",
                running.name, why.message
            );
            kill(ctx, &mut child, &said, why.grace).await
        }
        Ended::Stopped => {
            if let Some(code) = stop(ctx, &mut child, &running.name).await {
                let done = terminated(code, &started, &id, None);
                status::put(ctx, index, &finished(running, done));
            }
            stream.finish();
            return None;
        }
    };
    stream.finish();
    Some(terminated(code, &started, &id, None))
}

/// The kubelet's `Failed` event for a container that cannot be made or started.
fn failed(ctx: &PodCtx, why: &str) {
    ctx.event(
        EventType::Warning,
        "Failed",
        &format!("Error: {why}"),
        "kubelet",
    );
}

/// Whether the kubelet starts the container again after it ended with `code`.
fn restarts_after(pod: &Value, code: i32) -> bool {
    match pod.pointer("/spec/restartPolicy").and_then(Value::as_str) {
        Some("Never") => false,
        Some("OnFailure") => code != 0,
        _ => true,
    }
}

/// The container ended: no longer ready or started.
fn finished(running: &ContainerView, state: Value) -> ContainerView {
    ContainerView {
        state,
        ready: false,
        started: false,
        ..running.clone()
    }
}

fn terminated(code: i32, started: &str, id: &str, start_error: Option<&str>) -> Value {
    let reason = match (start_error, code) {
        (Some(_), _) => "StartError",
        (None, 0) => "Completed",
        (None, _) => "Error",
    };
    let mut state = json!({"terminated": {
        "exitCode": code,
        "reason": reason,
        "startedAt": started,
        "finishedAt": meta::now(),
        "containerID": id,
    }});
    if let Some(message) = start_error {
        state["terminated"]["message"] = json!(message);
    }
    state
}

/// runc's words for a program that cannot be started.
fn start_error(program: &Path, e: &std::io::Error) -> String {
    format!(
        "failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: error during container init: exec: \"{}\": {}: unknown",
        program.display(),
        e
    )
}

/// `CrashLoopBackOff` before the next start; false when the pod is stopped meanwhile.
async fn back_off(
    ctx: &PodCtx,
    index: usize,
    running: &ContainerView,
    last_state: &Value,
    restarts: u32,
) -> bool {
    let delay = Duration::from_secs((10u64 << (restarts - 1).min(5)).min(300));
    let name = &running.name;
    let message = format!(
        "back-off {}s restarting failed container={name} pod={}_{}({})",
        delay.as_secs(),
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
        ..running.clone()
    };
    status::put(ctx, index, &waiting);
    ctx.event(
        EventType::Warning,
        "BackOff",
        &format!(
            "Back-off restarting failed container {name} in pod {}_{}({})",
            ctx.name, ctx.ns, ctx.uid
        ),
        "kubelet",
    );
    ctx.wait(delay, MIN_RETRY_WAIT).await
}

/// The pod is being stopped (deleted, or its node shuts down): SIGTERM, then SIGKILL after the
/// grace period. None when the whole simulator stops: its processes are killed at once.
async fn stop(ctx: &PodCtx, child: &mut Running, name: &str) -> Option<i32> {
    if ctx.state.stop.is_cancelled() {
        child.kill();
        return None;
    }
    let said = format!("Stopping container {name}");
    Some(kill(ctx, child, &said, None).await)
}

/// The kubelet's `Killing`: SIGTERM, and SIGKILL if the process outlives its grace period (the
/// pod's deletion grace, else `terminationGracePeriodSeconds`, on the simulator's clock).
async fn kill(ctx: &PodCtx, child: &mut Running, said: &str, grace: Option<u64>) -> i32 {
    ctx.event(EventType::Normal, "Killing", said, "kubelet");
    let pod = ctx.get();
    let seconds = grace
        .or_else(|| {
            pod.as_ref().and_then(|p| {
                p.pointer("/metadata/deletionGracePeriodSeconds")
                    .or(p.pointer("/spec/terminationGracePeriodSeconds"))
                    .and_then(Value::as_u64)
            })
        })
        .unwrap_or(30);
    if seconds == 0 {
        child.kill();
        return child.wait().await;
    }
    let wall = ctx
        .state
        .shared
        .clock
        .scaled(Duration::from_secs(seconds))
        .max(MIN_GRACE);
    child.terminate();
    match tokio::time::timeout(wall, child.wait()).await {
        Ok(code) => code,
        Err(_) => {
            child.kill();
            child.wait().await
        }
    }
}
