//! Watchers of the training Job's Jobs, Pods and Events (`kube::runtime::watcher`). They keep no
//! state: each change goes out as a typed event, and a relist is bracketed by `Restarted` …
//! `Synced` so the receiver can drop what vanished while the watch was down.
//!
//! A failure goes out as `Trouble`; the watcher then starts again after a back-off, with a fresh
//! list, and once that list is complete says `Recovered`. Recovery is said, not guessed: kube's
//! watcher resumes a failed watch without a word, so a receiver waiting for the next change to
//! clear its notice could wait for as long as nothing changes.

use std::fmt::Debug;

use futures::StreamExt;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Event, Pod};
use kube::Resource;
use kube::api::Api;
use kube::runtime::watcher::{self, watcher};
use serde::de::DeserializeOwned;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::labels;
use super::status::{AttemptSummary, EventSummary, PodSummary};
use crate::backoff::Backoff;
use crate::config::JobConfig;

/// One change seen by a watcher.
#[derive(Debug, Clone, PartialEq)]
pub enum Change<T> {
    /// A (re)list begins: `Listed` items follow, then `Synced`.
    Restarted,
    /// An object that exists, as listed.
    Listed(T),
    /// The relist is complete: anything not `Listed` since `Restarted` is gone.
    Synced,
    /// An object was added or changed.
    Applied(T),
    /// An object was deleted.
    Deleted(T),
    /// The watch failed: what the receiver holds may be stale until `Recovered`. It starts again
    /// on its own after a back-off.
    Trouble(String),
    /// After `Trouble`: the watch is back and its relist is complete (`Synced` came just before).
    Recovered,
}

impl<T> Change<T> {
    fn map<U>(self, f: impl FnOnce(T) -> U) -> Change<U> {
        match self {
            Self::Restarted => Change::Restarted,
            Self::Listed(t) => Change::Listed(f(t)),
            Self::Synced => Change::Synced,
            Self::Applied(t) => Change::Applied(f(t)),
            Self::Deleted(t) => Change::Deleted(f(t)),
            Self::Trouble(s) => Change::Trouble(s),
            Self::Recovered => Change::Recovered,
        }
    }
}

/// What the Job watchers send.
#[derive(Debug, Clone, PartialEq)]
pub enum JobWatchEvent {
    Job(Change<AttemptSummary>),
    Pod(Change<PodSummary>),
    Event(Change<EventSummary>),
}

/// Runs one watcher and sends each change, mapped by `map` (None: skip), to `tx`. After a
/// failure (`Trouble`) it waits a back-off and starts over with a fresh list (`Restarted`,
/// `Listed`…, `Synced`, then `Recovered`). Ends when `cancel` fires or the receiver is gone.
pub async fn watch_objects<K, E>(
    api: Api<K>,
    config: watcher::Config,
    tx: mpsc::Sender<E>,
    cancel: CancellationToken,
    map: impl Fn(Change<K>) -> Option<E>,
) where
    K: Resource + Clone + DeserializeOwned + Debug + Send + 'static,
{
    let mut backoff = Backoff::default();
    // Since the last failure, until a list is complete again.
    let mut troubled = false;
    loop {
        let stream = watcher(api.clone(), config.clone());
        let mut stream = std::pin::pin!(stream);
        // kube says Init before it lists: `Restarted` waits for the list to answer, so a list
        // that fails at once is trouble only, not a restart that never completes.
        let mut restarting = false;
        loop {
            let next = tokio::select! {
                _ = cancel.cancelled() => return,
                next = stream.next() => next,
            };
            let mut changes = Vec::with_capacity(2);
            let failed = match next {
                None => return,
                Some(Ok(watcher::Event::Init)) => {
                    restarting = true;
                    false
                }
                Some(Ok(watcher::Event::InitApply(k))) => {
                    if std::mem::take(&mut restarting) {
                        changes.push(Change::Restarted);
                    }
                    changes.push(Change::Listed(k));
                    false
                }
                Some(Ok(watcher::Event::InitDone)) => {
                    if std::mem::take(&mut restarting) {
                        changes.push(Change::Restarted);
                    }
                    changes.push(Change::Synced);
                    if std::mem::take(&mut troubled) {
                        changes.push(Change::Recovered);
                    }
                    backoff.reset();
                    false
                }
                Some(Ok(watcher::Event::Apply(k))) => {
                    changes.push(Change::Applied(k));
                    false
                }
                Some(Ok(watcher::Event::Delete(k))) => {
                    changes.push(Change::Deleted(k));
                    false
                }
                Some(Err(e)) => {
                    tracing::debug!(error = %e, "watch failed; starting over");
                    changes.push(Change::Trouble(e.to_string()));
                    troubled = true;
                    true
                }
            };
            for change in changes {
                let Some(event) = map(change) else { continue };
                // A bounded channel: a slow receiver slows the watch rather than growing memory.
                tokio::select! {
                    _ = cancel.cancelled() => return,
                    sent = tx.send(event) => if sent.is_err() { return },
                }
            }
            if failed {
                break;
            }
        }
        tokio::select! {
            _ = cancel.cancelled() => return,
            _ = tokio::time::sleep(backoff.next_delay()) => {}
        }
    }
}

/// Objects per page when a watcher lists pods or events: a page is held whole while it is
/// decoded, and with kube's default of 500 a Job of thousands of pods costs megabytes of peak
/// memory that the allocator keeps long after.
pub const LIST_PAGE: u32 = 100;

/// Starts the three watchers for the training Job of `cfg` (every attempt): its Jobs and pods
/// by the training labels, and the Events about them. They stop with `cancel` or when `tx`
/// closes.
pub fn spawn_job_watchers(
    client: kube::Client,
    cfg: &JobConfig,
    tx: mpsc::Sender<JobWatchEvent>,
    cancel: CancellationToken,
) -> tokio::task::JoinSet<()> {
    let ns = cfg.namespace.clone();
    let mut set = tokio::task::JoinSet::new();

    let jobs: Api<Job> = Api::namespaced(client.clone(), &ns);
    let job_config = watcher::Config::default().labels(&labels::managed_selector(&cfg.name));
    set.spawn(watch_objects(
        jobs,
        job_config,
        tx.clone(),
        cancel.clone(),
        |ch| Some(JobWatchEvent::Job(ch.map(|j| AttemptSummary::of(&j)))),
    ));

    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns);
    let pod_config = watcher::Config::default()
        .labels(&pod_selector(cfg))
        .page_size(LIST_PAGE);
    set.spawn(watch_objects(
        pods,
        pod_config,
        tx.clone(),
        cancel.clone(),
        |ch| Some(JobWatchEvent::Pod(ch.map(|p| PodSummary::of(&p)))),
    ));

    // Events carry no labels: watch the namespace's and keep those about our Jobs and pods.
    let events: Api<Event> = Api::namespaced(client, &ns);
    let base = cfg.name.clone();
    set.spawn(watch_objects(
        events,
        watcher::Config::default().page_size(LIST_PAGE),
        tx,
        cancel,
        move |ch| {
            let relevant = match &ch {
                Change::Listed(e) | Change::Applied(e) | Change::Deleted(e) => {
                    EventSummary::concerns(e, &base)
                }
                _ => true,
            };
            relevant.then(|| JobWatchEvent::Event(ch.map(|e| EventSummary::of(&e))))
        },
    ));
    set
}

/// The pods Gantry made for the training Job: the training labels and Gantry's own.
fn pod_selector(cfg: &JobConfig) -> String {
    let mut parts: Vec<String> = cfg.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
    parts.push(labels::managed_selector(&cfg.name));
    parts.join(",")
}
