//! The Job controller: creates a Job's pods (Indexed or not, up to `parallelism`), counts
//! successes and failures once pods are terminal, judges failures by the Job's
//! `podFailurePolicy` (`failure_policy`), backs off exponentially between counted failures, and
//! finishes the Job as Complete or Failed (PodFailurePolicy, BackoffLimitExceeded,
//! DeadlineExceeded), with the events it records. Under `podReplacementPolicy: Failed` (the
//! default with a pod failure policy) a pod still terminating holds its place until it is
//! Failed. A suspended Job (`spec.suspend`) has its active pods deleted — their ends are not
//! failures — and says so in its `Suspended` condition, as Kubernetes does (KEP-2232).

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::broadcast::error::{RecvError, TryRecvError};
use tokio::sync::mpsc;
use tokio::time::Instant;

mod failure_policy;
mod finish;
mod pods;

use super::kubelet::is_terminal;
use crate::kube::cluster::ClusterState;
use crate::kube::meta;
use crate::kube::resources::Kind;
use crate::kube::store::ChangeType;
use failure_policy::Verdict;
use finish::Finish;
use pods::{INDEX_ANNOTATION, create_pods};

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
    /// The message of the first failure a `FailJob` rule matched.
    fail_job: Option<String>,
    /// When this controller first saw the Job run: deadlines count from here, in full precision.
    started: Option<Instant>,
    /// Pods deleted because the Job was suspended: their ends are not counted as failures.
    stopped: HashSet<String>,
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
        let stopped = t.stopped.contains(&puid);
        t.counted.insert(puid);
        if p.pointer("/status/phase").and_then(Value::as_str) == Some("Succeeded") {
            t.succeeded += 1;
            if let Some(i) = meta::annotation(p, INDEX_ANNOTATION).and_then(|s| s.parse().ok()) {
                t.succeeded_indexes.insert(i);
            }
        } else if !stopped {
            let verdict = failure_policy::judge(&spec["podFailurePolicy"], p);
            if verdict == Verdict::Ignore {
                continue;
            }
            t.failed += 1;
            t.last_failure = Some(Instant::now());
            if let Verdict::FailJob(message) = verdict {
                t.fail_job.get_or_insert(message);
            }
        }
    }
    let active: Vec<&Arc<Value>> = pods
        .iter()
        .filter(|p| !is_terminal(p) && !meta::is_deleting(p))
        .collect();
    let terminating: Vec<&Arc<Value>> = pods
        .iter()
        .filter(|p| meta::is_deleting(p) && !is_terminal(p))
        .collect();
    // The pods that keep a new one from being made in their place.
    let mut holding = active.clone();
    if only_replaces_failed_pods(spec) {
        holding.extend(&terminating);
    }
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

    let mut finish: Option<Finish> = None;
    if let Some(message) = &t.fail_job {
        finish = Some(Finish::failed("PodFailurePolicy", message.clone()));
    } else if t.failed > backoff_limit {
        finish = Some(Finish::failed(
            "BackoffLimitExceeded",
            "Job has reached the specified backoff limit",
        ));
    } else if let Some(deadline) = spec["activeDeadlineSeconds"].as_f64() {
        let sim_elapsed = started.elapsed().as_secs_f64() / state.shared.clock.scale().max(1e-9);
        if sim_elapsed >= deadline {
            finish = Some(Finish::failed(
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
        finish = Some(Finish::complete());
    }

    let suspended = spec["suspend"].as_bool().unwrap_or(false);
    if finish.is_none() && suspended && !active.is_empty() {
        t.stopped
            .extend(active.iter().map(|p| meta::uid(p).to_string()));
        finish::stop_pods(state, &active);
    }
    let was_suspended = condition(&job, "Suspended");
    let mut created = 0usize;
    if finish.is_none() && !suspended {
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
            _ => created = create_pods(state, &job, &holding, t, indexed, completions, parallelism),
        }
    }

    let (succeeded, failed) = (t.succeeded, t.failed);
    let completed_indexes = compress(&t.succeeded_indexes);
    let _ = state.store.update(Kind::Job, &key.0, &key.1, |j| {
        let status = &mut j["status"];
        if !status.is_object() {
            *status = json!({});
        }
        status["startTime"] = json!(start_time);
        let active = if suspended && finish.is_none() {
            0
        } else {
            active.len()
        };
        set_count(status, "active", (active + created) as u64);
        set_count(status, "succeeded", succeeded);
        set_count(status, "failed", failed);
        status["ready"] = json!(ready);
        status["terminating"] = json!(terminating.len());
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
        if let Some(finish) = &finish {
            finish.write(status);
        } else if suspended != was_suspended {
            finish::suspension(status, suspended);
        }
    });
    if finish.is_none() && suspended != was_suspended {
        finish::tell_suspension(state, &job, suspended);
    }
    if let Some(finish) = finish {
        finish.enact(state, &job, &active);
    }
}

/// Whether a pod is replaced only once it is Failed, not while it terminates.
fn only_replaces_failed_pods(spec: &Value) -> bool {
    spec["podReplacementPolicy"] == "Failed" || !spec["podFailurePolicy"].is_null()
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

#[cfg(test)]
#[path = "tests.rs"]
mod cluster_tests;

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
