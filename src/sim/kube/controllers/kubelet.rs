//! The scheduler and kubelet stand-in: every new pod gets a task that places it on a node, pulls
//! its image, runs the simulated workload in each container and reports it all as the kubelet
//! does (status and events). A pod being deleted is stopped, then removed.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::broadcast::error::RecvError;
use tokio_util::sync::CancellationToken;

use crate::sim::kube::cluster::ClusterState;
use crate::sim::kube::events::EventType;
use crate::sim::kube::meta;
use crate::sim::kube::pod_status::{ContainerView, set_condition, set_containers};
use crate::sim::kube::resources::Kind;
use crate::sim::kube::store::ChangeType;
use crate::sim::kube::workload::{self, WorkloadSpec};

/// Shortest real wait of a retry loop, so a time scale of 0 cannot spin.
const MIN_RETRY_WAIT: Duration = Duration::from_millis(20);

/// Subscribes to the store at once, before the task runs, so that nothing stored after the
/// cluster starts (a pod created the moment its API is up) is missed.
pub fn run(state: Arc<ClusterState>) -> impl std::future::Future<Output = ()> + Send + 'static {
    let rx = state.store.subscribe();
    control_loop(state, rx)
}

async fn control_loop(
    state: Arc<ClusterState>,
    mut rx: tokio::sync::broadcast::Receiver<Arc<crate::sim::kube::store::Change>>,
) {
    let mut running: HashMap<String, CancellationToken> = HashMap::new();
    loop {
        let change = tokio::select! {
            _ = state.stop.cancelled() => return,
            c = rx.recv() => c,
        };
        match change {
            Ok(change) if change.kind == Kind::Pod => {
                let pod = &change.object;
                let uid = meta::uid(pod).to_string();
                match change.change {
                    ChangeType::Added => {
                        let cancel = state.stop.child_token();
                        running.insert(uid.clone(), cancel.clone());
                        tokio::spawn(run_pod(
                            state.clone(),
                            meta::namespace(pod).into(),
                            meta::name(pod).into(),
                            uid,
                            cancel,
                        ));
                    }
                    ChangeType::Modified if meta::is_deleting(pod) => {
                        if let Some(cancel) = running.remove(&uid) {
                            cancel.cancel();
                        }
                    }
                    ChangeType::Deleted => {
                        if let Some(cancel) = running.remove(&uid) {
                            cancel.cancel();
                        }
                        state.scheduler.release(&uid);
                        state.logs.forget_pod(meta::namespace(pod), meta::name(pod));
                    }
                    ChangeType::Modified => {}
                }
            }
            Ok(_) => {}
            Err(RecvError::Lagged(_)) => resync(&state, &mut running),
            Err(RecvError::Closed) => return,
        }
    }
}

/// After missing changes: start tasks for pods without one, stop those of pods going away.
fn resync(state: &Arc<ClusterState>, running: &mut HashMap<String, CancellationToken>) {
    let (pods, _) = state.store.list(Kind::Pod, None, |_| true);
    let alive: std::collections::HashSet<String> =
        pods.iter().map(|p| meta::uid(p).to_string()).collect();
    running.retain(|uid, cancel| {
        let keep = alive.contains(uid);
        if !keep {
            cancel.cancel();
        }
        keep
    });
    for pod in pods {
        let uid = meta::uid(&pod).to_string();
        if meta::is_deleting(&pod) {
            if let Some(c) = running.remove(&uid) {
                c.cancel();
            }
            continue;
        }
        if !running.contains_key(&uid) && !is_terminal(&pod) {
            let cancel = state.stop.child_token();
            running.insert(uid.clone(), cancel.clone());
            tokio::spawn(run_pod(
                state.clone(),
                meta::namespace(&pod).into(),
                meta::name(&pod).into(),
                uid,
                cancel,
            ));
        }
    }
}

pub fn is_terminal(pod: &Value) -> bool {
    matches!(
        pod.pointer("/status/phase").and_then(Value::as_str),
        Some("Succeeded" | "Failed")
    )
}

struct PodCtx {
    state: Arc<ClusterState>,
    ns: String,
    name: String,
    uid: String,
    cancel: CancellationToken,
}

impl PodCtx {
    fn get(&self) -> Option<Arc<Value>> {
        self.state
            .store
            .get(Kind::Pod, &self.ns, &self.name)
            .filter(|p| meta::uid(p) == self.uid)
    }

    fn update(&self, f: impl FnOnce(&mut Value)) -> bool {
        self.state
            .store
            .update(Kind::Pod, &self.ns, &self.name, f)
            .is_ok()
    }

    fn event(&self, event_type: EventType, reason: &str, message: &str, component: &str) {
        if let Some(pod) = self.get() {
            self.state.events.record(
                &self.state.store,
                &pod,
                event_type,
                reason,
                message,
                component,
            );
        }
    }

    /// Sleeps a simulated delay; false when the pod is being stopped.
    async fn wait(&self, simulated: Duration, floor: Duration) -> bool {
        let wall = self.state.shared.clock.scaled(simulated).max(floor);
        tokio::select! {
            _ = self.cancel.cancelled() => false,
            _ = tokio::time::sleep(wall) => true,
        }
    }
}

async fn run_pod(
    state: Arc<ClusterState>,
    ns: String,
    name: String,
    uid: String,
    cancel: CancellationToken,
) {
    let ctx = PodCtx {
        state,
        ns,
        name,
        uid,
        cancel,
    };
    let finished = lifecycle(&ctx).await;
    ctx.state.scheduler.release(&ctx.uid);
    if !finished {
        stop_for_deletion(&ctx).await;
    }
}

/// Runs the pod to a terminal phase; false when it was stopped by a delete first.
async fn lifecycle(ctx: &PodCtx) -> bool {
    let Some(pod) = ctx.get() else { return true };
    if is_terminal(&pod) {
        return true;
    }
    let Some(node) = schedule(ctx).await else {
        return false;
    };
    let containers: Vec<Value> = pod
        .pointer("/spec/containers")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let host_ip = node_ip(ctx, &node);
    let pod_ip = format!("10.4.{}.{}", rand_byte(), rand_byte().max(2));
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
    if !ctx.wait(Duration::from_secs(1), Duration::ZERO).await {
        return false;
    }
    ctx.update(|p| set_condition(p, "PodReadyToStartContainers", true, None, None));
    for (i, c) in containers.iter().enumerate() {
        if !pull_image(ctx, c, &mut views, i).await {
            return false;
        }
    }
    // Every image is there: start the containers together, as the kubelet does.
    let restart_on_failure =
        pod.pointer("/spec/restartPolicy").and_then(Value::as_str) == Some("OnFailure");
    let ordinal = next_ordinal(ctx, &pod);
    let mut tasks = Vec::new();
    for (i, c) in containers.iter().enumerate() {
        tasks.push(run_container(
            ctx,
            c.clone(),
            i,
            ordinal,
            restart_on_failure,
        ));
    }
    ctx.update(|p| {
        p["status"]["podIP"] = json!(pod_ip);
        p["status"]["podIPs"] = json!([{"ip": pod_ip}]);
    });
    let results = futures::future::join_all(tasks).await;
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

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v[key].as_str().unwrap_or_default()
}

fn rand_byte() -> u8 {
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

/// Places the pod (or keeps the node it was created on). None when stopped first.
async fn schedule(ctx: &PodCtx) -> Option<String> {
    loop {
        let pod = ctx.get()?;
        if let Some(node) = pod
            .pointer("/spec/nodeName")
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
        {
            return Some(node.to_string());
        }
        let freed = ctx.state.scheduler.freed.notified();
        match ctx.state.scheduler.place(&ctx.state.store, &pod) {
            Ok(node) => {
                ctx.update(|p| {
                    p["spec"]["nodeName"] = json!(node);
                    set_condition(p, "PodScheduled", true, None, None);
                });
                ctx.event(
                    EventType::Normal,
                    "Scheduled",
                    &format!("Successfully assigned {}/{} to {node}", ctx.ns, ctx.name),
                    "default-scheduler",
                );
                return Some(node);
            }
            Err(why) => {
                ctx.update(|p| {
                    set_condition(p, "PodScheduled", false, Some("Unschedulable"), Some(&why))
                });
                ctx.event(
                    EventType::Warning,
                    "FailedScheduling",
                    &why,
                    "default-scheduler",
                );
                let retry = ctx
                    .state
                    .shared
                    .clock
                    .scaled(Duration::from_secs(10))
                    .max(MIN_RETRY_WAIT);
                tokio::select! {
                    _ = ctx.cancel.cancelled() => return None,
                    _ = freed => {}
                    _ = tokio::time::sleep(retry) => {}
                }
            }
        }
    }
}

/// The documented rule for images that cannot exist: a malformed reference, or one naming
/// `does-not-exist` or `nonexistent`.
pub fn image_pullable(image: &str) -> bool {
    let malformed = image.is_empty()
        || image
            .chars()
            .any(|c| c.is_whitespace() || c.is_ascii_uppercase())
        || image.ends_with(':')
        || image.contains("//");
    !(malformed || image.contains("does-not-exist") || image.contains("nonexistent"))
}

async fn pull_image(
    ctx: &PodCtx,
    container: &Value,
    views: &mut [ContainerView],
    i: usize,
) -> bool {
    let image = str_of(container, "image").to_string();
    let name = str_of(container, "name").to_string();
    let mut attempt = 0u32;
    loop {
        ctx.event(
            EventType::Normal,
            "Pulling",
            &format!("Pulling image \"{image}\""),
            "kubelet",
        );
        if !ctx.wait(Duration::from_secs(2), Duration::ZERO).await {
            return false;
        }
        if image_pullable(&image) {
            let secs = 2.0 + f64::from(rand_byte()) / 100.0;
            ctx.event(EventType::Normal, "Pulled", &format!("Successfully pulled image \"{image}\" in {secs:.3}s ({secs:.3}s including waiting). Image size: 734003200 bytes."), "kubelet");
            ctx.event(
                EventType::Normal,
                "Created",
                &format!("Created container: {name}"),
                "kubelet",
            );
            ctx.event(
                EventType::Normal,
                "Started",
                &format!("Started container {name}"),
                "kubelet",
            );
            return true;
        }
        let failure = format!(
            "Failed to pull image \"{image}\": rpc error: code = NotFound desc = failed to pull and unpack image \"{image}\": failed to resolve reference \"{image}\": {image}: not found"
        );
        ctx.event(EventType::Warning, "Failed", &failure, "kubelet");
        ctx.event(
            EventType::Warning,
            "Failed",
            "Error: ErrImagePull",
            "kubelet",
        );
        views[i] = ContainerView::waiting(&name, &image, "ErrImagePull", Some(&failure));
        ctx.update(|p| set_containers(p, views));
        if !ctx.wait(Duration::from_secs(1), Duration::ZERO).await {
            return false;
        }
        let backoff = format!("Back-off pulling image \"{image}\"");
        views[i] = ContainerView::waiting(&name, &image, "ImagePullBackOff", Some(&backoff));
        ctx.update(|p| set_containers(p, views));
        ctx.event(EventType::Normal, "BackOff", &backoff, "kubelet");
        ctx.event(
            EventType::Warning,
            "Failed",
            "Error: ImagePullBackOff",
            "kubelet",
        );
        let delay = Duration::from_secs((10u64 << attempt.min(5)).min(300));
        attempt += 1;
        if !ctx.wait(delay, MIN_RETRY_WAIT).await {
            return false;
        }
    }
}

/// Resolves a container's environment as the kubelet would (values and downward-API fields).
fn resolve_env(container: &Value, pod: &Value) -> HashMap<String, String> {
    let mut env = HashMap::new();
    for e in container["env"].as_array().into_iter().flatten() {
        let Some(name) = e["name"].as_str() else {
            continue;
        };
        let value = if let Some(v) = e["value"].as_str() {
            v.to_string()
        } else if let Some(path) = e
            .pointer("/valueFrom/fieldRef/fieldPath")
            .and_then(Value::as_str)
        {
            field_path(pod, path)
        } else {
            String::new()
        };
        env.insert(name.to_string(), value);
    }
    env
}

fn field_path(pod: &Value, path: &str) -> String {
    let bracketed = |prefix: &str| {
        path.strip_prefix(prefix)
            .and_then(|r| r.strip_suffix("']"))
            .map(str::to_string)
    };
    if let Some(key) = bracketed("metadata.annotations['") {
        return meta::annotation(pod, &key).unwrap_or_default().to_string();
    }
    if let Some(key) = bracketed("metadata.labels['") {
        return meta::label(pod, &key).unwrap_or_default().to_string();
    }
    let pointer = format!("/{}", path.replace('.', "/"));
    match pod.pointer(&pointer) {
        Some(Value::String(s)) => s.clone(),
        Some(v) if !v.is_null() => v.to_string(),
        _ => String::new(),
    }
}

/// Runs one container until it ends for good; Some(exit code) or None when stopped.
async fn run_container(
    ctx: &PodCtx,
    container: Value,
    index: usize,
    ordinal: u64,
    restart_on_failure: bool,
) -> Option<i32> {
    let name = str_of(&container, "name").to_string();
    let image = str_of(&container, "image").to_string();
    let memory_limit = container
        .pointer("/resources/limits/memory")
        .and_then(Value::as_str)
        .and_then(crate::sim::kube::quantity::units);
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
        let exit = workload::run(
            &spec,
            ordinal + u64::from(restarts),
            memory_limit,
            stream.clone(),
            ctx.state.shared.clock,
            ctx.cancel.clone(),
        )
        .await;
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

/// A delete arrived: stop the containers, then remove the pod after its grace period.
async fn stop_for_deletion(ctx: &PodCtx) {
    if ctx.state.stop.is_cancelled() {
        return;
    }
    let Some(pod) = ctx.get() else { return };
    let grace = pod
        .pointer("/metadata/deletionGracePeriodSeconds")
        .and_then(Value::as_u64)
        .unwrap_or(30);
    let was_running = pod.pointer("/status/phase").and_then(Value::as_str) == Some("Running");
    if was_running {
        ctx.event(
            EventType::Normal,
            "Killing",
            &format!(
                "Stopping container {}",
                pod.pointer("/spec/containers/0/name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
            ),
            "kubelet",
        );
        ctx.update(|p| {
            if let Some(list) = p["status"]["containerStatuses"].as_array_mut() {
                for c in list {
                    if let Some(started) = c.pointer("/state/running/startedAt").cloned() {
                        c["state"] = json!({"terminated": {"exitCode": 143, "reason": "Error", "startedAt": started, "finishedAt": meta::now()}});
                        c["ready"] = json!(false);
                        c["started"] = json!(false);
                    }
                }
            }
            p["status"]["phase"] = json!("Failed");
            set_condition(p, "Ready", false, Some("PodFailed"), None);
        });
    }
    // The training process exits on SIGTERM at once; grace only bounds it.
    let wall = ctx
        .state
        .shared
        .clock
        .scaled(Duration::from_secs(grace.min(1)));
    if !wall.is_zero() {
        tokio::time::sleep(wall).await;
    }
    if ctx.get().is_some() {
        ctx.state.store.remove(Kind::Pod, &ctx.ns, &ctx.name);
    }
}
