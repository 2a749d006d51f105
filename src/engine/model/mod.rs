//! The shared model: what the cloud and the cluster say — the cluster, the Job's attempts, their
//! pods and events, troubles, and one store of the newest attempt's log lines. One task owns it
//! (the engine's) and folds workers' events in; viewers read it and keep their own view state
//! (`app::App`), so a model serves one viewer or sixteen at the same cost.

pub mod cluster;
pub mod drift;
pub mod ends;
pub mod fallback;
#[cfg(test)]
pub mod fixtures;
pub mod guards;
pub mod idle;
pub mod jobs;
mod log_lines;
pub mod log_store;
pub mod meter;
pub mod node_lives;
mod noticing;
pub mod recovery;
pub mod training;
pub mod trouble;
pub mod unattended;
pub mod waits;

use std::collections::VecDeque;

pub use log_lines::{Line, LineBuffer};

use self::cluster::ClusterModel;
use self::jobs::JobsModel;
use self::log_store::{LogStore, Source};
use self::training::Training;
use self::trouble::{TroubleSource, Troubles};
use super::notice::Notice;
use super::report::{Report, TargetInfo};
use crate::gke::ProvisionEvent;
use crate::k8s::logs::{StreamEnd, TailEvent};
use crate::k8s::watch::{Change, JobWatchEvent};
use crate::vocabulary::{Kind, Severity};

/// What the pods and nodes use: not read yet, not served (no metrics-server), or as last read.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Usage {
    #[default]
    Unknown,
    Unavailable,
    Known(crate::k8s::usage::Reading),
}

impl Usage {
    /// The pod's usage, or why there is none: `Err("n/a")` without metrics-server, `Err("-")`
    /// when not read yet or the pod is not running.
    pub fn of(&self, pod: &str) -> Result<crate::k8s::usage::PodUsage, &'static str> {
        match self {
            Usage::Unavailable => Err("n/a"),
            Usage::Known(reading) => reading.pods.get(pod).copied().ok_or("-"),
            Usage::Unknown => Err("-"),
        }
    }
}

/// Notices kept for viewers that have not drawn since they came.
const NOTICES_KEPT: usize = 32;

#[derive(Debug, Default)]
pub struct Model {
    pub cluster: ClusterModel,
    pub jobs: JobsModel,
    /// Transient troubles (a watch reconnecting, a retried request), each cleared when its
    /// source is fine again.
    pub troubles: Troubles,
    /// The cluster's API is reachable and the Job watchers run. Only the workers say so
    /// (`Connected`, `Disconnected`): a RECONCILING cluster keeps serving its API.
    pub connected: bool,
    /// Every pod of the newest attempt.
    pub logs: LogStore,
    /// What each pod uses, by pod name, as metrics.k8s.io said last.
    pub usage: Usage,
    /// The training's own metrics, read out of the followed attempts' log lines.
    pub training: Training,
    /// Why each pod that is not running waits.
    pub waits: waits::Waits,
    /// The ends of pods this engine saw happen.
    pub ends: ends::SeenEnds,
    /// Who recovers runs, and what this engine is recovering.
    pub recovery: recovery::Recovery,
    /// What was told of stalls, long waits, an unreachable or idle cluster.
    pub unattended: unattended::Unattended,
    /// What the guards told and did.
    pub guarded: guards::Guarded,
    /// The nodes' lives, for what the cluster and the run truly cost.
    pub meter: meter::Metering,
    /// What every viewer and listener was told, numbered (the newest few).
    notices: VecDeque<(u64, Notice)>,
    next_notice: u64,
}

/// What the engine must do after an event: follow the logs of a new newest attempt.
#[derive(Debug, Clone, PartialEq)]
pub struct FollowLogs {
    pub attempt: String,
    pub generation: u64,
}

/// What an event changed that the engine acts on or tells.
#[derive(Debug)]
pub struct Applied {
    /// Anything viewers show changed (a source's "all is well" with nothing to clear, after
    /// every good poll, changes nothing: no frame for it).
    pub changed: bool,
    pub follow: Option<FollowLogs>,
    /// What the event told, for the engine's listeners (`gantry watch`, the log).
    pub told: Vec<Notice>,
    /// Pod ends to record on their attempts (`ends::ledger`).
    pub record: Vec<crate::ends::ledger::Entry>,
    /// Ranks (or pods) preempted: the recoverer decides what to do (`recovery_for`).
    pub preempted: Vec<recovery::Preempted>,
}

impl Default for Applied {
    fn default() -> Self {
        Self {
            changed: true,
            follow: None,
            told: Vec::new(),
            record: Vec::new(),
            preempted: Vec::new(),
        }
    }
}

impl Model {
    pub fn target(&self) -> Option<&TargetInfo> {
        self.cluster.target.as_ref()
    }

    /// The newest trouble, as the status line shows it.
    pub fn trouble(&self) -> Option<&str> {
        self.troubles.newest()
    }

    /// Notices numbered after `seen`, oldest first.
    pub fn notices_after(&self, seen: u64) -> impl Iterator<Item = &(u64, Notice)> {
        self.notices.iter().filter(move |(n, _)| *n > seen)
    }

    /// The number of the newest notice (0: none yet).
    pub fn last_notice(&self) -> u64 {
        self.next_notice
    }

    /// Keeps a notice for the viewers (the engine tells its listeners itself).
    pub fn record(&mut self, notice: Notice) {
        self.next_notice += 1;
        self.notices.push_back((self.next_notice, notice));
        while self.notices.len() > NOTICES_KEPT {
            self.notices.pop_front();
        }
    }

    /// Tells viewers and listeners alike.
    fn tell(&mut self, applied: &mut Applied, notice: Notice) {
        self.record(notice.clone());
        applied.told.push(notice);
    }

    /// Whether the screen changes with time alone (elapsed counters).
    pub fn ticking(&self) -> bool {
        self.cluster.ticking()
    }

    /// A viewer's command is going to the workers: what it ends now. Deleting the cluster
    /// stops its log streams, and their troubles with them. Whether anything changed.
    pub fn command_sent(&mut self, command: &super::Command) -> bool {
        if *command == super::Command::DeleteCluster {
            let had = self.troubles.len();
            self.troubles.clear_logs();
            return self.troubles.len() != had;
        }
        false
    }

    pub fn apply(&mut self, event: Report) -> Applied {
        let mut applied = Applied::default();
        match event {
            Report::Target(t) => self.cluster.target = Some(t),
            Report::Cluster(summary) => {
                if let Some(n) = noticing::of_cluster(self.cluster.summary.as_ref(), &summary) {
                    self.tell(&mut applied, n);
                }
                self.meter.nodes.disks.remember(&summary);
                self.cluster.set_summary(summary);
                // The pools may have changed: what holds the waiting pods back may too.
                let waiting: Vec<String> = self.waits.pods().map(str::to_string).collect();
                self.diagnose(&mut applied, waiting.iter().map(String::as_str));
            }
            Report::Desired {
                cluster,
                may_scale_to_zero,
            } => self.cluster.desire(*cluster, may_scale_to_zero),
            Report::Provision(e) => {
                // The operation's follower reports the cluster too: a status change is news
                // whichever of the two saw it first.
                if let ProvisionEvent::Cluster(summary) = &e
                    && let Some(n) = noticing::of_cluster(self.cluster.summary.as_ref(), summary)
                {
                    self.tell(&mut applied, n);
                }
                if let ProvisionEvent::Cluster(summary) = &e {
                    self.meter.nodes.disks.remember(summary);
                }
                if let ProvisionEvent::Retrying { message, .. } = &e {
                    self.raise(&mut applied, TroubleSource::Provision, message.clone());
                } else {
                    self.troubles.clear(&TroubleSource::Provision);
                }
                self.cluster.apply(e);
            }
            Report::ProvisionDone(result) => {
                self.troubles.clear(&TroubleSource::Provision);
                // A create, delete or plan applied: the cluster is what it changed.
                let subject = self.target().map(|t| t.cluster.clone()).unwrap_or_default();
                self.cluster.finished(&result);
                let (severity, text) = match result {
                    Ok(done) => (Severity::Info, done),
                    Err(e) => (Severity::Critical, e),
                };
                self.tell(
                    &mut applied,
                    Notice::new(Kind::Command, severity, subject, text),
                );
            }
            Report::Connected => self.connected = true,
            Report::Usage(read) => {
                let usage = match read {
                    Some(reading) => Usage::Known(reading),
                    None => Usage::Unavailable,
                };
                applied.changed = usage != self.usage;
                self.usage = usage;
            }
            Report::Disconnected => {
                self.connected = false;
                self.meter.nodes.lost(jiff::Timestamp::now());
            }
            Report::Node { change, at } => applied.changed = self.meter.nodes.apply(change, at),
            Report::TrainingLoaded { attempt, store } => {
                applied.changed = self.training.loaded(attempt, *store)
            }
            Report::Job(e) => {
                for n in noticing::of_job(&self.jobs, &e) {
                    self.tell(&mut applied, n);
                }
                let (record, told) = self.note_ends(&e, jiff::Timestamp::now());
                applied.preempted.extend(
                    record
                        .iter()
                        .filter(|r| r.end.class == crate::vocabulary::ends::Class::Preempted)
                        .map(|r| recovery::Preempted {
                            attempt: r.job.clone(),
                            index: r.end.index,
                        }),
                );
                applied.record.extend(record);
                for n in told {
                    self.tell(&mut applied, n);
                }
                let pod = match &e {
                    JobWatchEvent::Pod(Change::Applied(p) | Change::Listed(p)) => {
                        Some(p.name.clone())
                    }
                    JobWatchEvent::Pod(Change::Deleted(p)) => Some(p.name.clone()),
                    JobWatchEvent::Event(Change::Applied(ev) | Change::Listed(ev))
                        if ev.kind == "Pod" =>
                    {
                        Some(ev.object.clone())
                    }
                    _ => None,
                };
                let watch = TroubleSource::watch_of(&e);
                match self.jobs.apply(e) {
                    Some(trouble) => self.raise(&mut applied, watch, trouble),
                    None => {
                        self.troubles.clear(&watch);
                    }
                }
                let in_use = self
                    .jobs
                    .attempts()
                    .into_iter()
                    .filter(|a| !a.status.is_finished())
                    .filter_map(|a| a.node_pool.clone())
                    .collect();
                self.cluster.pools_in_use(in_use);
                applied.follow = self.follow_newest();
                if let Some(pod) = pod {
                    self.diagnose(&mut applied, [pod.as_str()]);
                }
            }
            Report::Tail { generation, event } if generation == self.logs.generation => {
                self.on_tail(event, &mut applied)
            }
            Report::Tail { .. } => {}
            Report::LogsSavedTo { generation, dir } if generation == self.logs.generation => {
                self.logs.saved_to = Some(dir)
            }
            Report::LogsSavedTo { .. } => {}
            // Only time passed: what it decides (`spot-wait`) is decided after the batch.
            Report::Tick => applied.changed = false,
            Report::Recoverer(holder) => {
                if let Some(n) = self.recoverer(holder) {
                    self.tell(&mut applied, n);
                    applied
                        .preempted
                        .extend(self.missed_preemptions(jiff::Timestamp::now()));
                }
            }
            Report::Done { what, result } => {
                self.recovery_done(&what);
                let (severity, text) = match result {
                    Ok(text) => (Severity::Info, text),
                    Err(e) => (Severity::Critical, format!("{what}: {e}")),
                };
                self.tell(
                    &mut applied,
                    Notice::new(Kind::Command, severity, what, text),
                );
            }
            Report::Trouble { source, message } => self.raise(&mut applied, source, message),
            Report::TroubleOver(source) => applied.changed = self.troubles.clear(&source),
        }
        applied
    }

    /// Diagnoses these pods again, telling what changed.
    fn diagnose<'a>(&mut self, applied: &mut Applied, pods: impl IntoIterator<Item = &'a str>) {
        let pools = self
            .cluster
            .summary
            .as_ref()
            .filter(|_| self.cluster.managed())
            .map(|s| s.node_pools.as_slice());
        let told = self
            .waits
            .update(&self.jobs, pools, pods, jiff::Timestamp::now());
        for notice in told {
            self.tell(applied, notice);
        }
    }

    /// The store always follows the newest attempt: after a launch or a retry it moves on.
    fn follow_newest(&mut self) -> Option<FollowLogs> {
        let newest_attempt = self.jobs.newest()?;
        let newest = newest_attempt.name.clone();
        let number = newest_attempt.number();
        if self.logs.source.as_ref().map(|s| &s.attempt) == Some(&newest) {
            return None;
        }
        self.training.follow(number);
        self.troubles.clear(&TroubleSource::Training);
        // The old tail's streams go with it, and so do their troubles.
        self.troubles.clear_logs();
        let generation = self.logs.switch(Source {
            attempt: newest.clone(),
            pod: None,
            previous: false,
        });
        Some(FollowLogs {
            attempt: newest,
            generation,
        })
    }

    /// A training metric gone wrong: it is news, and the first of the attempt stays in the
    /// status line (a run that diverged stays diverged).
    fn alert(&mut self, applied: &mut Applied, alerts: Vec<crate::metrics::alerts::Alert>) {
        for alert in alerts {
            let text = alert.to_string();
            if !self.troubles.has(&TroubleSource::Training) {
                self.troubles.set(TroubleSource::Training, text.clone());
            }
            let severity = match alert.kind {
                crate::metrics::alerts::AlertKind::NonFinite { .. } => Severity::Critical,
                crate::metrics::alerts::AlertKind::Jump { .. } => Severity::Warning,
            };
            let notice = Notice::new(Kind::Alert, severity, &alert.metric, text)
                .as_news(format!("{}/{}/{}", alert.metric, alert.pod, alert.step))
                .with_detail("metric", alert.metric.as_str())
                .with_detail("pod", alert.pod.as_str())
                .with_detail("step", alert.step);
            self.tell(applied, notice);
        }
    }

    /// A source's trouble; when it begins, it is news too.
    fn raise(&mut self, applied: &mut Applied, source: TroubleSource, message: String) {
        let subject = source.name();
        if self.troubles.set(source, message.clone()) {
            let text = format!("trouble: {message}");
            self.tell(
                applied,
                Notice::new(Kind::Trouble, Severity::Warning, subject, text),
            );
        }
    }

    fn on_tail(&mut self, event: TailEvent, applied: &mut Applied) {
        match event {
            TailEvent::Lines { pod, lines } => {
                // Lines again after a reconnect: that stream is fine.
                if self.troubles.has_logs_of(&pod) {
                    self.troubles.clear(&TroubleSource::Logs(pod.clone()));
                }
                let alerts = self.training.ingest(&pod, &lines);
                self.alert(applied, alerts);
                self.logs.push(&pod, &lines)
            }
            TailEvent::PodStarted { .. } => {}
            TailEvent::Reconnecting { pod, error } => {
                let message = format!("logs of {pod}: reconnecting ({error})");
                self.raise(applied, TroubleSource::Logs(pod), message)
            }
            TailEvent::PodEnded { pod, why } => {
                if let StreamEnd::Failed(e) = &why {
                    let text = format!("logs of {pod}: {e}");
                    self.tell(
                        applied,
                        Notice::new(Kind::Log, Severity::Warning, &pod, text),
                    );
                }
                self.troubles.clear(&TroubleSource::Logs(pod.clone()));
                let alerts = self.training.ended(&pod);
                self.alert(applied, alerts);
                self.logs.ended(pod.clone(), &why);
                if let Some((_, how)) = self.logs.ended.last() {
                    let text = format!("log of {pod} {}", crate::sanitize::one_line(how));
                    self.tell(applied, Notice::new(Kind::Log, Severity::Info, pod, text));
                }
            }
            TailEvent::SaveFailed { pod, error } => {
                let text = format!("could not save the logs of {pod}: {error}");
                self.tell(
                    applied,
                    Notice::new(Kind::Log, Severity::Critical, pod, text),
                );
            }
            TailEvent::SavedByAnother { pod } => {
                let text =
                    format!("another Gantry is saving the log of {pod}: shown here, not saved");
                self.tell(
                    applied,
                    Notice::new(Kind::Log, Severity::Warning, pod, text),
                );
            }
            TailEvent::WatchTrouble { error } => self.logs.pods_stale = Some(error),
            TailEvent::WatchRecovered => self.logs.pods_stale = None,
        }
    }
}
