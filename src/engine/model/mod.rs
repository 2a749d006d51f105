//! The shared model: what the cloud and the cluster say — the cluster, the Job's attempts, their
//! pods and events, troubles, and one store of the newest attempt's log lines. One task owns it
//! (the engine's) and folds workers' events in; viewers read it and keep their own view state
//! (`app::App`), so a model serves one viewer or sixteen at the same cost.

pub mod cluster;
pub mod drift;
pub mod idle;
pub mod jobs;
mod log_lines;
pub mod log_store;
mod news;
pub mod training;
pub mod trouble;

use std::collections::VecDeque;

pub use log_lines::{Line, LineBuffer};
pub use news::News;

use self::cluster::ClusterModel;
use self::jobs::JobsModel;
use self::log_store::{LogStore, Source};
use self::training::Training;
use self::trouble::{TroubleSource, Troubles};
use super::event::{Event, TargetInfo};
use crate::gke::ProvisionEvent;
use crate::k8s::logs::{StreamEnd, TailEvent};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Info,
    Warning,
    Error,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Notice {
    pub level: Level,
    pub text: String,
}

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
    /// What happened that every viewer should be told, numbered.
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
    pub news: Vec<News>,
}

impl Default for Applied {
    fn default() -> Self {
        Self {
            changed: true,
            follow: None,
            news: Vec::new(),
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

    pub fn notify(&mut self, level: Level, text: impl Into<String>) {
        self.next_notice += 1;
        self.notices.push_back((
            self.next_notice,
            Notice {
                level,
                text: text.into(),
            },
        ));
        while self.notices.len() > NOTICES_KEPT {
            self.notices.pop_front();
        }
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

    pub fn apply(&mut self, event: Event) -> Applied {
        let mut applied = Applied::default();
        match event {
            Event::Target(t) => self.cluster.target = Some(t),
            Event::Cluster(summary) => {
                applied
                    .news
                    .extend(News::of_cluster(self.cluster.summary.as_ref(), &summary));
                self.cluster.set_summary(summary);
            }
            Event::Desired {
                cluster,
                scale_to_zero_when_idle,
            } => self.cluster.desire(*cluster, scale_to_zero_when_idle),
            Event::Provision(e) => {
                // The operation's follower reports the cluster too: a status change is news
                // whichever of the two saw it first.
                if let ProvisionEvent::Cluster(summary) = &e {
                    applied
                        .news
                        .extend(News::of_cluster(self.cluster.summary.as_ref(), summary));
                }
                if let ProvisionEvent::Retrying { message, .. } = &e {
                    self.raise(&mut applied, TroubleSource::Provision, message.clone());
                } else {
                    self.troubles.clear(&TroubleSource::Provision);
                }
                self.cluster.apply(e);
            }
            Event::ProvisionDone(result) => {
                self.troubles.clear(&TroubleSource::Provision);
                self.cluster.finished(&result);
                let (level, text) = match result {
                    Ok(done) => (Level::Info, done),
                    Err(e) => (Level::Error, e),
                };
                applied.news.push(News::Said(text.clone()));
                self.notify(level, text);
            }
            Event::Connected => self.connected = true,
            Event::Usage(read) => {
                let usage = match read {
                    Some(reading) => Usage::Known(reading),
                    None => Usage::Unavailable,
                };
                applied.changed = usage != self.usage;
                self.usage = usage;
            }
            Event::Disconnected => self.connected = false,
            Event::TrainingLoaded { attempt, store } => {
                applied.changed = self.training.loaded(attempt, *store)
            }
            Event::Job(e) => {
                applied.news.extend(News::of_job(&self.jobs, &e));
                let watch = TroubleSource::watch_of(&e);
                match self.jobs.apply(e) {
                    Some(trouble) => self.raise(&mut applied, watch, trouble),
                    None => {
                        self.troubles.clear(&watch);
                    }
                }
                applied.follow = self.follow_newest();
            }
            Event::Tail { generation, event } if generation == self.logs.generation => {
                self.on_tail(event, &mut applied)
            }
            Event::Tail { .. } => {}
            Event::LogsSavedTo { generation, dir } if generation == self.logs.generation => {
                self.logs.saved_to = Some(dir)
            }
            Event::LogsSavedTo { .. } => {}
            Event::Done { what, result } => match result {
                Ok(text) => {
                    applied.news.push(News::Said(text.clone()));
                    self.notify(Level::Info, text)
                }
                Err(e) => {
                    let text = format!("{what}: {e}");
                    applied.news.push(News::Said(text.clone()));
                    self.notify(Level::Error, text)
                }
            },
            Event::Trouble { source, message } => self.raise(&mut applied, source, message),
            Event::TroubleOver(source) => applied.changed = self.troubles.clear(&source),
        }
        applied
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
            applied.news.push(News::Said(text.clone()));
            if !self.troubles.has(&TroubleSource::Training) {
                self.troubles.set(TroubleSource::Training, text.clone());
            }
            self.notify(Level::Warning, text);
        }
    }

    /// A source's trouble; when it begins, it is news too.
    fn raise(&mut self, applied: &mut Applied, source: TroubleSource, message: String) {
        if self.troubles.set(source, message.clone()) {
            applied.news.push(News::Trouble(message));
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
                    self.notify(Level::Warning, format!("logs of {pod}: {e}"));
                }
                self.troubles.clear(&TroubleSource::Logs(pod.clone()));
                let alerts = self.training.ended(&pod);
                self.alert(applied, alerts);
                self.logs.ended(pod.clone(), &why);
                if let Some((_, how)) = self.logs.ended.last() {
                    applied.news.push(News::LogEnded {
                        pod,
                        how: how.clone(),
                    });
                }
            }
            TailEvent::SaveFailed { pod, error } => self.notify(
                Level::Error,
                format!("could not save the logs of {pod}: {error}"),
            ),
            TailEvent::SavedByAnother { pod } => self.notify(
                Level::Warning,
                format!("another Gantry is saving the log of {pod}: shown here, not saved"),
            ),
            TailEvent::WatchTrouble { error } => self.logs.pods_stale = Some(error),
            TailEvent::WatchRecovered => self.logs.pods_stale = None,
        }
    }
}
