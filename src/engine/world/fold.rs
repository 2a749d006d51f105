//! Folding one `Report` into the world: each kind of report changes its own part, and says
//! what it changed that viewers show, what the engine must follow (a new newest attempt's
//! logs), and what is worth telling (`noticing`: a cluster's status, an attempt seen or ended,
//! a pod failed; a trouble begun; a metric alert; a log ended). Decisions are not made here:
//! they are the policies', which read the world once a batch is folded.

use super::World;
use super::log_store::Source;
use super::noticing;
use super::trouble::TroubleSource;
use crate::engine::notice::Notice;
use crate::engine::report::Report;
use crate::gke::{ClusterSummary, ProvisionEvent};
use crate::k8s::logs::{StreamEnd, TailEvent};
use crate::k8s::watch::{Change, JobWatchEvent};
use crate::vocabulary::{Kind, Severity};

/// What the engine must do after a report: follow the logs of a new newest attempt.
#[derive(Debug, Clone, PartialEq)]
pub struct FollowLogs {
    pub attempt: String,
    pub generation: u64,
}

/// What a report changed that the engine acts on or tells.
#[derive(Debug)]
pub struct Applied {
    /// Anything viewers show changed (a source's "all is well" with nothing to clear, after
    /// every good poll, changes nothing: no frame for it).
    pub changed: bool,
    pub follow: Option<FollowLogs>,
    /// What the report told, for the viewers and the engine's listeners.
    pub told: Vec<Notice>,
}

impl Default for Applied {
    fn default() -> Self {
        Self {
            changed: true,
            follow: None,
            told: Vec::new(),
        }
    }
}

impl World {
    pub fn apply(&mut self, report: Report) -> Applied {
        let mut applied = Applied::default();
        match report {
            Report::Target(t) => self.cluster.target = Some(t),
            Report::Cluster(summary) => self.on_cluster(&mut applied, summary),
            Report::Desired {
                cluster,
                may_scale_to_zero,
                watcher,
            } => {
                self.cluster.desire(*cluster, may_scale_to_zero);
                self.cluster.watcher = watcher.map(|w| *w);
                self.cluster.watcher_seen(self.lease.watcher.as_ref());
            }
            Report::Provision(e) => self.on_provision(&mut applied, e),
            Report::ProvisionDone(result) => self.on_provision_done(&mut applied, result),
            Report::Connected => self.connected = true,
            Report::Usage(read) => {
                let usage = match read {
                    Some(reading) => super::Usage::Known(reading),
                    None => super::Usage::Unavailable,
                };
                applied.changed = usage != self.usage;
                self.usage = usage;
            }
            Report::Gpus(read) => {
                let pods = &self.jobs.pods;
                let is_training = |namespace: &str, pod: &str| {
                    pods.get(pod).is_some_and(|p| p.namespace == namespace)
                };
                let (changed, told) = self.gpus.apply(read, is_training);
                applied.changed = changed;
                if let Some(notice) = told {
                    self.tell(&mut applied, notice);
                }
            }
            Report::Disconnected => {
                self.connected = false;
                self.nodes.lost(jiff::Timestamp::now());
            }
            Report::Node { change, at } => applied.changed = self.nodes.apply(change, at),
            Report::TrainingLoaded { attempt, store } => {
                applied.changed = self.training.loaded(attempt, *store)
            }
            Report::Job(e) => self.on_job(&mut applied, e),
            Report::Tail { generation, event } if generation == self.logs.generation => {
                self.on_tail(event, &mut applied)
            }
            Report::Tail { .. } => {}
            Report::LogsSavedTo { generation, dir } if generation == self.logs.generation => {
                self.logs.saved_to = Some(dir)
            }
            Report::LogsSavedTo { .. } => {}
            // Only time passed: what it calls for is the policies' to decide.
            Report::Tick => applied.changed = false,
            Report::Lease { seen, at } => {
                if let Some(n) = self.lease.saw(seen, at) {
                    self.tell(&mut applied, n);
                }
                if let Some(n) = self.lease.version_news(env!("CARGO_PKG_VERSION")) {
                    self.tell(&mut applied, n);
                }
            }
            Report::Watcher(seen) => {
                applied.changed = self.lease.watcher != seen;
                self.lease.watcher = seen;
                self.cluster.watcher_seen(self.lease.watcher.as_ref());
            }
            Report::Done { what, result } => {
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

    fn tell(&mut self, applied: &mut Applied, notice: Notice) {
        applied.told.push(notice);
    }

    fn on_cluster(&mut self, applied: &mut Applied, summary: ClusterSummary) {
        if let Some(n) = noticing::of_cluster(self.cluster.summary.as_ref(), &summary) {
            self.tell(applied, n);
        }
        self.nodes.disks.remember(&summary);
        self.cluster.set_summary(summary);
        // The pools may have changed: what holds the waiting pods back may too.
        let waiting: Vec<String> = self.waits.pods().map(str::to_string).collect();
        self.diagnose(applied, waiting.iter().map(String::as_str));
    }

    fn on_provision(&mut self, applied: &mut Applied, e: ProvisionEvent) {
        // The operation's follower reports the cluster too: a status change is news whichever
        // of the two saw it first.
        if let ProvisionEvent::Cluster(summary) = &e {
            if let Some(n) = noticing::of_cluster(self.cluster.summary.as_ref(), summary) {
                self.tell(applied, n);
            }
            self.nodes.disks.remember(summary);
        }
        if let ProvisionEvent::Retrying { message, .. } = &e {
            self.raise(applied, TroubleSource::Provision, message.clone());
        } else {
            self.troubles.clear(&TroubleSource::Provision);
        }
        self.cluster.apply(e);
    }

    fn on_provision_done(&mut self, applied: &mut Applied, result: Result<String, String>) {
        self.troubles.clear(&TroubleSource::Provision);
        // A create, delete or plan applied: the cluster is what it changed.
        let subject = self.target().map(|t| t.cluster.clone()).unwrap_or_default();
        self.cluster.finished(&result);
        let (severity, text) = match result {
            Ok(done) => (Severity::Info, done),
            Err(e) => (Severity::Critical, e),
        };
        self.tell(applied, Notice::new(Kind::Command, severity, subject, text));
    }

    fn on_job(&mut self, applied: &mut Applied, e: JobWatchEvent) {
        for n in noticing::of_job(&self.jobs, &e) {
            self.tell(applied, n);
        }
        for n in self.note_ends(&e, jiff::Timestamp::now()) {
            self.tell(applied, n);
        }
        let pod = match &e {
            JobWatchEvent::Pod(Change::Applied(p) | Change::Listed(p) | Change::Deleted(p)) => {
                Some(p.name.clone())
            }
            JobWatchEvent::Event(Change::Applied(ev) | Change::Listed(ev)) if ev.kind == "Pod" => {
                Some(ev.object.clone())
            }
            _ => None,
        };
        let watch = TroubleSource::watch_of(&e);
        match self.jobs.apply(e) {
            Some(trouble) => self.raise(applied, watch, trouble),
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
            self.diagnose(applied, [pod.as_str()]);
        }
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

    /// A source's trouble; when it begins, it is told too.
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
            TailEvent::PodEnded { pod, why } => self.on_stream_ended(applied, pod, why),
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

    fn on_stream_ended(&mut self, applied: &mut Applied, pod: String, why: StreamEnd) {
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
        let how = self.logs.ended(&why);
        let text = format!("log of {pod} {}", crate::sanitize::one_line(&how));
        self.tell(applied, Notice::new(Kind::Log, Severity::Info, pod, text));
    }
}
