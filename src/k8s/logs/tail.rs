//! The tailer: watches the pods of one Job attempt and runs one `PodStream` per pod whose
//! container has started, merging their events onto one channel. Stopping a pod, cancelling,
//! or dropping the receiver ends the streams.
//!
//! At most `max_streams` streams are open at once: each holds a connection and its buffers, and
//! a Job of thousands of pods would otherwise hold thousands. Pods beyond that wait in turn;
//! while some wait, a stream that has held its place for a `lease` gives it up between two
//! reads and queues again with its reader, to resume from where it was. Every pod is read, none
//! loses a line, and memory does not grow with the number of pods.

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams};
use kube::runtime::watcher;
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::lines::LineReader;
use super::pod_stream::{PodStream, Run};
use super::{StreamEnd, TailEvent};
use crate::k8s::labels;
use crate::k8s::status::PodSummary;
use crate::k8s::watch::{Change, watch_objects};

/// Which pods to follow: those of one Job (attempt).
#[derive(Debug, Clone, PartialEq)]
pub struct TailTarget {
    pub namespace: String,
    /// The attempt's Job name (`ml-training-job`, `ml-training-job-2`, ...).
    pub job: String,
    /// The container to read (None: the pod's only container).
    pub container: Option<String>,
}

#[derive(Debug, Clone)]
pub struct TailOptions {
    /// Save each pod's log as `<dir>/<pod>.log` (see `logs_dir`); None saves nothing.
    pub save_dir: Option<PathBuf>,
    /// Only this pod.
    pub pod: Option<String>,
    /// Keep following, picking up new pods, until cancelled; else read what is there (pod by
    /// pod, oldest first) and end.
    pub follow: bool,
    /// The previous container instance's logs (never followed).
    pub previous: bool,
    /// Events buffered before the streams wait for the receiver.
    pub capacity: usize,
    /// Streams open at once (at least 1).
    pub max_streams: usize,
    /// How long a stream keeps its place while other pods wait.
    pub lease: Duration,
}

/// Streams open at once by default: a training Job of up to this many pods is followed live.
pub const DEFAULT_MAX_STREAMS: usize = 128;
pub const DEFAULT_LEASE: Duration = Duration::from_secs(10);

impl Default for TailOptions {
    fn default() -> Self {
        Self {
            save_dir: None,
            pod: None,
            follow: true,
            previous: false,
            capacity: 256,
            max_streams: DEFAULT_MAX_STREAMS,
            lease: DEFAULT_LEASE,
        }
    }
}

/// Controls a running tail; cheap to clone.
#[derive(Debug, Clone)]
pub struct TailHandle {
    cancel: CancellationToken,
    stop: mpsc::UnboundedSender<String>,
}

impl TailHandle {
    /// Ends one pod's stream (`PodEnded { why: Stopped }`); it is not picked up again.
    pub fn stop_pod(&self, pod: &str) {
        let _ = self.stop.send(pod.to_string());
    }

    /// Ends every stream and the tail.
    pub fn cancel(&self) {
        self.cancel.cancel();
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }
}

/// A running tail: receive its events with `next`, or take the receiver with `into_parts`.
/// Dropping the receiver stops everything.
#[derive(Debug)]
pub struct LogTail {
    rx: mpsc::Receiver<TailEvent>,
    handle: TailHandle,
}

impl LogTail {
    /// Starts following `target`'s pods. Must be called inside a tokio runtime.
    pub fn follow(client: kube::Client, target: TailTarget, options: TailOptions) -> Self {
        let (tx, rx) = mpsc::channel(options.capacity.max(1));
        let (stop_tx, stop_rx) = mpsc::unbounded_channel();
        let cancel = CancellationToken::new();
        let supervisor = Supervisor {
            api: Api::namespaced(client, &target.namespace),
            target,
            options,
            tx,
            cancel: cancel.clone(),
            streams: HashMap::new(),
            waiting: VecDeque::new(),
            queued: HashSet::new(),
            done: HashSet::new(),
            tasks: JoinSet::new(),
        };
        tokio::spawn(supervisor.run(stop_rx));
        Self {
            rx,
            handle: TailHandle {
                cancel,
                stop: stop_tx,
            },
        }
    }

    /// The next event; None once the tail has ended (cancelled, or a non-follow read is done).
    pub async fn next(&mut self) -> Option<TailEvent> {
        self.rx.recv().await
    }

    pub fn handle(&self) -> TailHandle {
        self.handle.clone()
    }

    pub fn into_parts(self) -> (mpsc::Receiver<TailEvent>, TailHandle) {
        (self.rx, self.handle)
    }
}

struct Supervisor {
    api: Api<Pod>,
    target: TailTarget,
    options: TailOptions,
    tx: mpsc::Sender<TailEvent>,
    cancel: CancellationToken,
    /// Streams running, by pod.
    streams: HashMap<String, Slot>,
    /// Pods waiting for a place, in turn, with where they left off if they had one before.
    waiting: VecDeque<(String, Option<Box<LineReader>>)>,
    /// The pods in `waiting`.
    queued: HashSet<String>,
    /// Pods whose stream ended or was stopped: not started again.
    done: HashSet<String>,
    tasks: JoinSet<(String, Run)>,
}

/// What the pod watcher tells the supervisor.
enum PodNews {
    /// Listed, added or changed.
    Seen(Box<Pod>),
    Gone(String),
    Trouble(String),
    Recovered,
}

/// A running stream's place.
struct Slot {
    cancel: CancellationToken,
    lease: CancellationToken,
    since: Instant,
}

impl Supervisor {
    async fn run(mut self, stop_rx: mpsc::UnboundedReceiver<String>) {
        if self.options.follow && !self.options.previous {
            self.follow(stop_rx).await;
        } else {
            self.read_once(stop_rx).await;
        }
        self.cancel.cancel();
        while self.tasks.join_next().await.is_some() {}
    }

    fn wanted(&self, pod: &PodSummary) -> bool {
        self.options.pod.as_ref().is_none_or(|p| *p == pod.name)
            && !self.done.contains(&pod.name)
            && !self.streams.contains_key(&pod.name)
            && !self.queued.contains(&pod.name)
            && if self.options.previous {
                pod.restarts > 0
            } else {
                pod.started
            }
    }

    async fn follow(&mut self, mut stop_rx: mpsc::UnboundedReceiver<String>) {
        let (pods_tx, mut pods_rx) = mpsc::channel::<PodNews>(64);
        let config = watcher::Config::default()
            .labels(&labels::pods_of_job_selector(&self.target.job))
            .page_size(crate::k8s::watch::LIST_PAGE);
        let config = match &self.options.pod {
            Some(p) => config.fields(&format!("metadata.name={p}")),
            None => config,
        };
        tokio::spawn(watch_objects(
            self.api.clone(),
            config,
            pods_tx,
            self.cancel.clone(),
            |change| match change {
                Change::Listed(p) | Change::Applied(p) => Some(PodNews::Seen(Box::new(p))),
                Change::Deleted(p) => Some(PodNews::Gone(p.metadata.name.unwrap_or_default())),
                Change::Trouble(error) => Some(PodNews::Trouble(error)),
                Change::Recovered => Some(PodNews::Recovered),
                Change::Restarted | Change::Synced => None,
            },
        ));
        let mut leases =
            tokio::time::interval(self.options.lease.max(Duration::from_millis(1)) / 4);
        leases.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = self.cancel.cancelled() => return,
                _ = self.tx.closed() => return,
                Some(news) = pods_rx.recv() => {
                    if !self.pod_news(news).await {
                        return;
                    }
                }
                Some(pod) = stop_rx.recv() => self.stop(&pod),
                Some(joined) = self.tasks.join_next(), if !self.tasks.is_empty() => {
                    if let Ok((pod, run)) = joined && !self.joined(pod, run).await {
                        return;
                    }
                }
                _ = leases.tick(), if !self.waiting.is_empty() => self.expire_leases(),
            }
        }
    }

    /// What the pod watcher saw. False when the receiver is gone.
    async fn pod_news(&mut self, news: PodNews) -> bool {
        let event = match news {
            PodNews::Seen(pod) => {
                let summary = PodSummary::of(&pod);
                if self.wanted(&summary) {
                    self.admit(summary.name, None);
                }
                return true;
            }
            // A running stream reads what is left and finds out itself; a waiting one has
            // nothing left to read.
            PodNews::Gone(pod) if self.queued.remove(&pod) => {
                self.waiting.retain(|(w, _)| *w != pod);
                return self.ended(pod, StreamEnd::PodDeleted).await;
            }
            PodNews::Gone(_) => return true,
            PodNews::Trouble(error) => TailEvent::WatchTrouble { error },
            PodNews::Recovered => TailEvent::WatchRecovered,
        };
        self.tx.send(event).await.is_ok()
    }

    async fn read_once(&mut self, mut stop_rx: mpsc::UnboundedReceiver<String>) {
        let listed = self
            .api
            .list(&ListParams::default().labels(&labels::pods_of_job_selector(&self.target.job)))
            .await;
        let mut pods: Vec<PodSummary> = match listed {
            Ok(list) => list.items.iter().map(PodSummary::of).collect(),
            Err(e) => {
                let _ = self
                    .tx
                    .send(TailEvent::PodEnded {
                        pod: self.target.job.clone(),
                        why: StreamEnd::Failed(e.to_string()),
                    })
                    .await;
                return;
            }
        };
        pods.sort_by(|a, b| (a.created, &a.name).cmp(&(b.created, &b.name)));
        for pod in pods {
            if !self.wanted(&pod) {
                continue;
            }
            self.start(pod.name, None);
            loop {
                tokio::select! {
                    _ = self.cancel.cancelled() => return,
                    Some(pod) = stop_rx.recv() => self.stop(&pod),
                    Some(joined) = self.tasks.join_next() => {
                        if let Ok((pod, run)) = joined && !self.joined(pod, run).await {
                            return;
                        }
                        break;
                    }
                }
            }
        }
    }

    /// Whether another stream may open (a limit of 0 still lets one through, or nothing is read).
    fn has_place(&self) -> bool {
        self.streams.len() < self.options.max_streams.max(1)
    }

    /// Starts the pod's stream if there is a place, else queues it.
    fn admit(&mut self, pod: String, resume: Option<Box<LineReader>>) {
        if self.has_place() {
            self.start(pod, resume);
        } else {
            self.queue(pod, resume);
        }
    }

    fn queue(&mut self, pod: String, resume: Option<Box<LineReader>>) {
        self.queued.insert(pod.clone());
        self.waiting.push_back((pod, resume));
    }

    fn start(&mut self, pod: String, resume: Option<Box<LineReader>>) {
        let cancel = self.cancel.child_token();
        let lease = CancellationToken::new();
        self.streams.insert(
            pod.clone(),
            Slot {
                cancel: cancel.clone(),
                lease: lease.clone(),
                since: Instant::now(),
            },
        );
        let stream = PodStream {
            api: self.api.clone(),
            pod: pod.clone(),
            container: self.target.container.clone(),
            dir: self.options.save_dir.clone(),
            tx: self.tx.clone(),
            cancel,
            follow: self.options.follow,
            previous: self.options.previous,
            lease,
            resume,
        };
        self.tasks.spawn(async move { (pod, stream.run().await) });
    }

    /// Fills free places from the queue, oldest first.
    fn start_waiting(&mut self) {
        while self.has_place()
            && let Some((pod, resume)) = self.waiting.pop_front()
        {
            self.queued.remove(&pod);
            self.start(pod, resume);
        }
    }

    /// Asks the streams that have held their place longest to give it up, one per waiting pod.
    fn expire_leases(&mut self) {
        let lease = self.options.lease;
        let mut expired: Vec<&Slot> = self
            .streams
            .values()
            .filter(|s| s.since.elapsed() >= lease && !s.lease.is_cancelled())
            .collect();
        expired.sort_by_key(|s| s.since);
        for slot in expired.into_iter().take(self.waiting.len()) {
            slot.lease.cancel();
        }
    }

    fn stop(&mut self, pod: &str) {
        self.done.insert(pod.to_string());
        if self.queued.remove(pod) {
            self.waiting.retain(|(w, _)| w != pod);
        }
        if let Some(slot) = self.streams.get(pod) {
            slot.cancel.cancel();
        }
    }

    /// A stream's task is over: it ended, or gave its place up and waits again. False when the
    /// receiver is gone.
    async fn joined(&mut self, pod: String, run: Run) -> bool {
        let alive = match run {
            Run::Ended(why) => self.ended(pod, why).await,
            Run::Yielded(reader) => {
                self.streams.remove(&pod);
                if !self.done.contains(&pod) {
                    self.queue(pod, Some(reader));
                }
                true
            }
        };
        self.start_waiting();
        alive
    }

    /// False when the receiver is gone.
    async fn ended(&mut self, pod: String, why: StreamEnd) -> bool {
        self.streams.remove(&pod);
        self.done.insert(pod.clone());
        self.tx.send(TailEvent::PodEnded { pod, why }).await.is_ok()
    }
}
