//! The Job controller: creates a Job's pods (Indexed or not, up to `parallelism`), counts
//! successes and failures, backs off exponentially between failed pods, and finishes the Job as
//! Complete or Failed (BackoffLimitExceeded, DeadlineExceeded), with the events it records.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::broadcast::error::{RecvError, TryRecvError};
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::kubelet::is_terminal;
use crate::kube::cluster::ClusterState;
use crate::kube::events::EventType;
use crate::kube::lifecycle;
use crate::kube::meta;
use crate::kube::resources::{Kind, RESOURCES};
use crate::kube::store::ChangeType;

const INDEX_ANNOTATION: &str = "batch.kubernetes.io/job-completion-index";
/// The controller's back-off after failed pods: 10 s doubling up to 6 minutes.
const BACKOFF_BASE: Duration = Duration::from_secs(10);
const BACKOFF_MAX: Duration = Duration::from_secs(360);

type JobKey = (String, String);

/// What the controller remembers of a Job between passes (the real one keeps it in finalizers).
#[derive(Debug, Default)]
struct Tracked {
    counted: HashSet<String>,
    succeeded: u64,
    failed: u64,
    succeeded_indexes: BTreeSet<u64>,
    last_failure: Option<Instant>,
    /// When this controller first saw the Job run: deadlines count from here, in full precision.
    started: Option<Instant>,
}

/// Subscribes to the store at once, before the task runs, so that nothing stored after the
/// cluster starts (a pod created the moment its API is up) is missed.
pub fn run(state: Arc<ClusterState>) -> impl std::future::Future<Output = ()> + Send + 'static {
    let rx = state.store.subscribe();
    control_loop(state, rx)
}

async fn control_loop(
    state: Arc<ClusterState>,
    mut rx: tokio::sync::broadcast::Receiver<Arc<crate::kube::store::Change>>,
) {
    let (poke_tx, mut poke_rx) = mpsc::unbounded_channel::<JobKey>();
    let mut tracked: HashMap<String, Tracked> = HashMap::new();
    loop {
        let mut dirty: BTreeSet<JobKey> = BTreeSet::new();
        tokio::select! {
            _ = state.stop.cancelled() => return,
            key = poke_rx.recv() => if let Some(k) = key { dirty.insert(k); },
            change = rx.recv() => match change {
                Ok(c) => note(&c, &mut dirty),
                Err(RecvError::Lagged(_)) => all_jobs(&state, &mut dirty),
                Err(RecvError::Closed) => return,
            },
        }
        // Fold every change already waiting into one pass per Job.
        loop {
            match rx.try_recv() {
                Ok(c) => note(&c, &mut dirty),
                Err(TryRecvError::Lagged(_)) => all_jobs(&state, &mut dirty),
                Err(_) => break,
            }
        }
        while let Ok(k) = poke_rx.try_recv() {
            dirty.insert(k);
        }
        for key in dirty {
            reconcile(&state, &key, &mut tracked, &poke_tx);
        }
    }
}

fn note(change: &crate::kube::store::Change, dirty: &mut BTreeSet<JobKey>) {
    let obj = &change.object;
    match change.kind {
        Kind::Job => {
            dirty.insert((meta::namespace(obj).into(), meta::name(obj).into()));
        }
        Kind::Pod => {
            if let Some(job) = meta::label(obj, "batch.kubernetes.io/job-name") {
                dirty.insert((meta::namespace(obj).into(), job.into()));
            }
        }
        _ => {}
    }
    let _ = change.change == ChangeType::Added;
}

fn all_jobs(state: &ClusterState, dirty: &mut BTreeSet<JobKey>) {
    let (jobs, _) = state.store.list(Kind::Job, None, |_| true);
    for j in jobs {
        dirty.insert((meta::namespace(&j).into(), meta::name(&j).into()));
    }
}

fn poke_later(
    state: &ClusterState,
    poke: &mpsc::UnboundedSender<JobKey>,
    key: &JobKey,
    simulated: Duration,
) {
    let wall = state
        .shared
        .clock
        .scaled(simulated)
        .max(Duration::from_millis(1));
    let poke = poke.clone();
    let key = key.clone();
    let stop = state.stop.clone();
    tokio::spawn(async move {
        tokio::select! {
            _ = stop.cancelled() => {}
            _ = tokio::time::sleep(wall) => { let _ = poke.send(key); }
        }
    });
}

fn condition(job: &Value, kind: &str) -> bool {
    job.pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| c["type"] == kind && c["status"] == "True")
        })
}

pub fn is_finished(job: &Value) -> bool {
    condition(job, "Complete") || condition(job, "Failed")
}

fn reconcile(
    state: &Arc<ClusterState>,
    key: &JobKey,
    tracked: &mut HashMap<String, Tracked>,
    poke: &mpsc::UnboundedSender<JobKey>,
) {
    let Some(job) = state.store.get(Kind::Job, &key.0, &key.1) else {
        return;
    };
    let uid = meta::uid(&job).to_string();
    if meta::is_deleting(&job) {
        return;
    }
    if is_finished(&job) {
        tracked.remove(&uid);
        return;
    }
    let spec = &job["spec"];
    let (pods, _) = state.store.list(Kind::Pod, Some(&key.0), |p| {
        meta::label(p, "batch.kubernetes.io/controller-uid") == Some(uid.as_str())
    });
    let t = tracked.entry(uid.clone()).or_default();
    for p in &pods {
        let puid = meta::uid(p).to_string();
        if !is_terminal(p) || t.counted.contains(&puid) {
            continue;
        }
        t.counted.insert(puid);
        if p.pointer("/status/phase").and_then(Value::as_str) == Some("Succeeded") {
            t.succeeded += 1;
            if let Some(i) = meta::annotation(p, INDEX_ANNOTATION).and_then(|s| s.parse().ok()) {
                t.succeeded_indexes.insert(i);
            }
        } else {
            t.failed += 1;
            t.last_failure = Some(Instant::now());
        }
    }
    let active: Vec<&Arc<Value>> = pods
        .iter()
        .filter(|p| !is_terminal(p) && !meta::is_deleting(p))
        .collect();
    let terminating = pods
        .iter()
        .filter(|p| meta::is_deleting(p) && !is_terminal(p))
        .count();
    let ready = active.iter().filter(|p| pod_ready(p)).count();
    let indexed = spec["completionMode"].as_str() == Some("Indexed");
    let completions = spec["completions"].as_u64();
    let parallelism = spec["parallelism"].as_u64().unwrap_or(1);
    let backoff_limit = spec["backoffLimit"].as_u64().unwrap_or(6);
    let start_time = job
        .pointer("/status/startTime")
        .and_then(Value::as_str)
        .map(String::from)
        .unwrap_or_else(meta::now);
    let started = *t.started.get_or_insert_with(|| {
        if let Some(deadline) = spec["activeDeadlineSeconds"].as_u64() {
            poke_later(state, poke, key, Duration::from_secs(deadline));
        }
        Instant::now()
    });

    let mut finish: Option<(&str, &str, &str)> = None;
    if t.failed > backoff_limit {
        finish = Some((
            "Failed",
            "BackoffLimitExceeded",
            "Job has reached the specified backoff limit",
        ));
    } else if let Some(deadline) = spec["activeDeadlineSeconds"].as_f64() {
        let sim_elapsed = started.elapsed().as_secs_f64() / state.shared.clock.scale().max(1e-9);
        if sim_elapsed >= deadline {
            finish = Some((
                "Failed",
                "DeadlineExceeded",
                "Job was active longer than specified deadline",
            ));
        }
    }
    let complete = match (indexed, completions) {
        (true, Some(c)) => t.succeeded_indexes.len() as u64 >= c,
        (false, Some(c)) => t.succeeded >= c,
        (false, None) => t.succeeded > 0 && active.is_empty(),
        (true, None) => false,
    };
    if finish.is_none() && complete {
        finish = Some((
            "Complete",
            "CompletionsReached",
            "Reached expected number of succeeded pods",
        ));
    }

    let mut created = 0usize;
    if finish.is_none() && !spec["suspend"].as_bool().unwrap_or(false) {
        let backoff = backoff_delay(t.failed);
        let waiting = t.last_failure.map(|at| {
            let until = at + state.shared.clock.scaled(backoff);
            until.saturating_duration_since(Instant::now())
        });
        match waiting {
            Some(left) if !left.is_zero() => {
                poke_later(
                    state,
                    poke,
                    key,
                    Duration::from_secs_f64(
                        left.as_secs_f64() / state.shared.clock.scale().max(1e-9),
                    ),
                );
            }
            _ => created = create_pods(state, &job, &active, t, indexed, completions, parallelism),
        }
    }

    let (succeeded, failed) = (t.succeeded, t.failed);
    let completed_indexes = compress(&t.succeeded_indexes);
    let now = meta::now();
    let _ = state.store.update(Kind::Job, &key.0, &key.1, |j| {
        let status = &mut j["status"];
        if !status.is_object() {
            *status = json!({});
        }
        status["startTime"] = json!(start_time);
        set_count(status, "active", (active.len() + created) as u64);
        set_count(status, "succeeded", succeeded);
        set_count(status, "failed", failed);
        status["ready"] = json!(ready);
        status["terminating"] = json!(terminating);
        status["uncountedTerminatedPods"] = json!({});
        if indexed {
            if completed_indexes.is_empty() {
                if let Some(s) = status.as_object_mut() {
                    s.remove("completedIndexes");
                }
            } else {
                status["completedIndexes"] = json!(completed_indexes);
            }
        }
        if let Some((kind, reason, message)) = finish {
            let target = if kind == "Complete" { "SuccessCriteriaMet" } else { "FailureTarget" };
            status["conditions"] = json!([
                {"type": target, "status": "True", "reason": reason, "message": message, "lastProbeTime": now, "lastTransitionTime": now},
                {"type": kind, "status": "True", "reason": reason, "message": message, "lastProbeTime": now, "lastTransitionTime": now},
            ]);
            if kind == "Complete" {
                status["completionTime"] = json!(now);
            }
            set_count(status, "active", 0);
            status["ready"] = json!(0);
        }
    });
    if let Some((kind, reason, message)) = finish {
        for p in &active {
            let _ = lifecycle::delete(
                state,
                Kind::Pod,
                meta::namespace(p),
                meta::name(p),
                &lifecycle::DeleteOptions::default(),
            );
        }
        let (event_type, event_reason) = if kind == "Complete" {
            (EventType::Normal, "Completed")
        } else {
            (EventType::Warning, reason)
        };
        let text = if kind == "Complete" {
            "Job completed"
        } else {
            message
        };
        state.events.record(
            &state.store,
            &job,
            event_type,
            event_reason,
            text,
            "job-controller",
        );
        if let Some(ttl) = spec["ttlSecondsAfterFinished"].as_u64() {
            schedule_ttl(state, key.clone(), uid.clone(), ttl);
        }
    }
}

fn set_count(status: &mut Value, key: &str, n: u64) {
    if n == 0 {
        if let Some(s) = status.as_object_mut() {
            s.remove(key);
        }
    } else {
        status[key] = json!(n);
    }
}

fn pod_ready(pod: &Value) -> bool {
    pod.pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| c["type"] == "Ready" && c["status"] == "True")
        })
}

fn backoff_delay(failed: u64) -> Duration {
    if failed == 0 {
        return Duration::ZERO;
    }
    let factor = 1u32 << (failed - 1).min(10) as u32;
    (BACKOFF_BASE * factor).min(BACKOFF_MAX)
}

/// "0-2,4,6-7", as `status.completedIndexes` spells a set of indexes.
fn compress(indexes: &BTreeSet<u64>) -> String {
    let mut parts = Vec::new();
    let mut iter = indexes.iter().copied().peekable();
    while let Some(start) = iter.next() {
        let mut end = start;
        while iter.peek() == Some(&(end + 1)) {
            end = iter.next().unwrap_or(end);
        }
        parts.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
    }
    parts.join(",")
}

#[allow(clippy::too_many_arguments)]
fn create_pods(
    state: &ClusterState,
    job: &Value,
    active: &[&Arc<Value>],
    t: &Tracked,
    indexed: bool,
    completions: Option<u64>,
    parallelism: u64,
) -> usize {
    let active_n = active.len() as u64;
    let mut to_create: Vec<Option<u64>> = Vec::new();
    if indexed {
        let running: HashSet<u64> = active
            .iter()
            .filter_map(|p| meta::annotation(p, INDEX_ANNOTATION).and_then(|s| s.parse().ok()))
            .collect();
        let room = parallelism.saturating_sub(active_n);
        to_create = (0..completions.unwrap_or(0))
            .filter(|i| !t.succeeded_indexes.contains(i) && !running.contains(i))
            .take(room as usize)
            .map(Some)
            .collect();
    } else {
        let remaining = completions.map_or(parallelism, |c| c.saturating_sub(t.succeeded));
        let want = parallelism.min(remaining).saturating_sub(active_n);
        to_create.resize(want as usize, None);
    }
    let job_resource = RESOURCES.iter().find(|r| r.kind == Kind::Job);
    let mut created = 0;
    for index in to_create {
        let pod = pod_from_template(job, index);
        match lifecycle::create(state, Kind::Pod, Some(meta::namespace(job)), pod) {
            Ok(p) => {
                created += 1;
                state.events.record(
                    &state.store,
                    job,
                    EventType::Normal,
                    "SuccessfulCreate",
                    &format!("Created pod: {}", meta::name(&p)),
                    "job-controller",
                );
            }
            Err(e) => {
                let _ = job_resource;
                state.events.record(
                    &state.store,
                    job,
                    EventType::Warning,
                    "FailedCreate",
                    &format!("Error creating: {}", e.message),
                    "job-controller",
                );
            }
        }
    }
    created
}

fn pod_from_template(job: &Value, index: Option<u64>) -> Value {
    let name = meta::name(job);
    let template = &job["spec"]["template"];
    let mut metadata = template["metadata"].clone();
    if !metadata.is_object() {
        metadata = json!({});
    }
    let mut spec = template["spec"].clone();
    metadata["generateName"] = json!(match index {
        Some(i) => format!("{name}-{i}-"),
        None => format!("{name}-"),
    });
    metadata["ownerReferences"] = json!([meta::owner_reference(job, "batch/v1", "Job")]);
    if let Some(m) = metadata.as_object_mut() {
        m.remove("name");
    }
    if let Some(i) = index {
        metadata["annotations"][INDEX_ANNOTATION] = json!(i.to_string());
        metadata["labels"][INDEX_ANNOTATION] = json!(i.to_string());
        spec["hostname"] = json!(format!("{name}-{i}"));
        if let Some(containers) = spec["containers"].as_array_mut() {
            for c in containers {
                if !c["env"].is_array() {
                    c["env"] = json!([]);
                }
                if let Some(env) = c["env"].as_array_mut() {
                    env.push(json!({"name": "JOB_COMPLETION_INDEX", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": format!("metadata.annotations['{INDEX_ANNOTATION}']")}}}));
                }
            }
        }
    }
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec})
}

fn schedule_ttl(state: &Arc<ClusterState>, key: JobKey, uid: String, ttl: u64) {
    let state = state.clone();
    tokio::spawn(async move {
        let wall = state.shared.clock.scaled(Duration::from_secs(ttl));
        tokio::select! {
            _ = state.stop.cancelled() => return,
            _ = tokio::time::sleep(wall) => {}
        }
        if state
            .store
            .get(Kind::Job, &key.0, &key.1)
            .is_some_and(|j| meta::uid(&j) == uid)
        {
            let opts = lifecycle::DeleteOptions {
                propagation: lifecycle::Propagation::Background,
                ..Default::default()
            };
            let _ = lifecycle::delete(&state, Kind::Job, &key.0, &key.1, &opts);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compresses_indexes() {
        let set: BTreeSet<u64> = [0, 1, 2, 4, 6, 7].into_iter().collect();
        assert_eq!(compress(&set), "0-2,4,6-7");
        assert_eq!(compress(&BTreeSet::new()), "");
    }

    #[test]
    fn backs_off_exponentially() {
        assert_eq!(backoff_delay(0), Duration::ZERO);
        assert_eq!(backoff_delay(1), Duration::from_secs(10));
        assert_eq!(backoff_delay(3), Duration::from_secs(40));
        assert_eq!(backoff_delay(30), BACKOFF_MAX);
    }
}
