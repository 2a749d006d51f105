//! Why each pod of the Job that is not running waits ([`crate::waiting`]), kept up to date as
//! its pod, the events about it and the node pools change; a change of cause is told once (the
//! status line for what the operator must fix, `gantry watch` for all), and so is the end of
//! the wait, with how long it took.

use std::collections::BTreeMap;

use super::jobs::JobsModel;
use crate::engine::notice::Notice;
use crate::gke::summary::PoolSummary;
use crate::vocabulary::{Kind, Severity};
use crate::waiting::{Cause, Waiting, diagnose, time_to_running};

#[derive(Debug, Default)]
pub struct Waits {
    by_pod: BTreeMap<String, Waiting>,
}

impl Waits {
    pub fn of(&self, pod: &str) -> Option<&Waiting> {
        self.by_pod.get(pod)
    }

    /// Diagnoses `pods` again; what to tell of those whose cause changed.
    pub(super) fn update<'a>(
        &mut self,
        jobs: &JobsModel,
        pools: Option<&[PoolSummary]>,
        pods: impl IntoIterator<Item = &'a str>,
        now: jiff::Timestamp,
    ) -> Vec<Notice> {
        let mut told = Vec::new();
        for name in pods {
            let Some(pod) = jobs.pods.get(name) else {
                self.by_pod.remove(name);
                continue;
            };
            let events = jobs.events_about(name);
            let waiting = diagnose(pod, &events, pools);
            let before = self.by_pod.get(name).map(|w| &w.cause);
            match (before, waiting) {
                (Some(b), Some(w)) if *b == w.cause => {
                    self.by_pod.insert(name.to_string(), w);
                }
                (_, Some(w)) if w.cause.is_not_known_yet() => {
                    self.by_pod.insert(name.to_string(), w);
                }
                (_, Some(w)) => {
                    let severity = severity(&w.cause);
                    let text = format!("pod {name} waits: {}", w.detail(now));
                    told.push(Notice::new(Kind::Pending, severity, name, text));
                    self.by_pod.insert(name.to_string(), w);
                }
                (Some(_), None) => {
                    self.by_pod.remove(name);
                    if let Some(secs) = time_to_running(pod) {
                        let took = crate::k8s::age::human_duration(secs);
                        let text = format!("pod {name} running, {took} after it was created");
                        told.push(Notice::new(Kind::Pending, Severity::Info, name, text));
                    }
                }
                (None, None) => {}
            }
        }
        told
    }

    /// The pods diagnosed as waiting now.
    pub fn pods(&self) -> impl Iterator<Item = &str> {
        self.by_pod.keys().map(String::as_str)
    }
}

/// What the operator must fix is a warning; what only takes time is for the record.
fn severity(cause: &Cause) -> Severity {
    match cause {
        Cause::ScalingUp { .. } | Cause::Creating { .. } | Cause::Unknown { .. } => Severity::Info,
        _ => Severity::Warning,
    }
}
