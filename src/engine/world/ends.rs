//! The ends of the training pods as this engine sees them happen: each told once (a preemption
//! as such, not as a failure) and kept — with what its pod asked of its node and how many pods
//! shared that node, what pricing it needs — for the panes and for the ends' ledger
//! (`policies::ledgers`), which records it on the attempt where every other Gantry reads it.
//! What a pane shows of an attempt is what was recorded on it, what this engine saw, and what
//! the pods still here say.

use std::collections::{BTreeMap, HashSet};

use super::World;
use crate::ends::ledger::Entry;
use crate::ends::{GoneContext, gone};
use crate::engine::notice::Notice;
use crate::k8s::status::{AttemptPhase, AttemptSummary, PodSummary};
use crate::k8s::watch::{Change, JobWatchEvent};
use crate::vocabulary::ends::{Class, Fate, PodEnd};
use crate::vocabulary::{Kind, Severity};

#[derive(Debug, Default)]
pub struct SeenEnds {
    /// By attempt, oldest first: each end as an entry of the ledger (its requests and sharing).
    by_attempt: BTreeMap<String, Vec<Entry>>,
    pods: HashSet<String>,
    /// Attempts deleted while this engine watched, and who deleted each through Gantry: their
    /// pods go after them.
    deleted_attempts: BTreeMap<String, Option<String>>,
}

impl SeenEnds {
    /// Whether this engine saw the pod end.
    pub fn saw(&self, pod: &str) -> bool {
        self.pods.contains(pod)
    }

    /// Every end this engine saw, as ledger entries, by attempt.
    pub fn seen(&self) -> impl Iterator<Item = &Entry> {
        self.by_attempt.values().flatten()
    }
}

impl World {
    /// Before a Job watcher's event is folded in: the pods it ends, kept; what to tell.
    pub(super) fn note_ends(&mut self, event: &JobWatchEvent, now: jiff::Timestamp) -> Vec<Notice> {
        if let JobWatchEvent::Job(Change::Deleted(a)) = event {
            let by = self
                .jobs
                .attempts
                .get(&a.name)
                .and_then(|known| known.deleted_by.clone())
                .or_else(|| a.deleted_by.clone());
            self.ends.deleted_attempts.insert(a.name.clone(), by);
        }
        let JobWatchEvent::Pod(change) = event else {
            return Default::default();
        };
        let ended: Vec<(PodSummary, Fate)> = match change {
            Change::Applied(p) | Change::Listed(p) => p
                .fate
                .as_ref()
                // A pod that cannot start is shown at once, recorded only when it is gone: a
                // pull that fails for a while may still succeed.
                .filter(|f| f.class != Class::ConfigError)
                .filter(|_| !self.ends.saw(&p.name))
                .map(|f| (p.clone(), f.clone()))
                .into_iter()
                .collect(),
            Change::Deleted(p) if !self.ends.saw(&p.name) => {
                vec![(p.clone(), self.gone_fate(p, now))]
            }
            Change::Synced => self
                .jobs
                .pods
                .unseen()
                .filter(|p| !self.ends.saw(&p.name))
                .map(|p| (p.clone(), self.gone_fate(p, now)))
                .collect(),
            _ => Vec::new(),
        };
        let mut told = Vec::new();
        for (pod, fate) in ended {
            // Recorded by an engine before this one (a restart, another machine): known, and
            // told then.
            let attempt = self.jobs.attempts.get(&pod.job);
            let recorded =
                attempt.is_some_and(|a| a.recorded_ends.iter().any(|e| e.pod == pod.name));
            if recorded {
                self.ends.pods.insert(pod.name.clone());
                continue;
            }
            let end = pod.end(fate);
            let gang =
                attempt.is_some_and(|a| a.completions.unwrap_or(1) > 1 && pod.index.is_some());
            if let Some(n) = notice(&pod, &end, gang) {
                told.push(n);
            }
            // In no order: sorting the attempt's pods for each end made a Job of thousands of
            // pods sort thousands of times as they ended.
            let sharing = crate::ends::sharing(self.jobs.pods_in(&pod.job), &pod);
            self.ends.pods.insert(pod.name.clone());
            self.ends
                .by_attempt
                .entry(pod.job.clone())
                .or_default()
                .push(Entry {
                    job: pod.job.clone(),
                    end,
                    requests: pod.requests,
                    sharing,
                });
        }
        told
    }

    fn gone_fate(&self, pod: &PodSummary, now: jiff::Timestamp) -> Fate {
        let attempt = self.jobs.attempts.get(&pod.job);
        if attempt.is_none()
            && pod.fate.is_none()
            && let Some(by) = self.ends.deleted_attempts.get(&pod.job)
        {
            let by = by.as_deref().unwrap_or("someone outside Gantry");
            return Fate {
                class: Class::Deleted,
                detail: format!("deleted with its attempt by {by}"),
                at: Some(now),
                ran_seconds: pod.running_since.map_or(0, |from| {
                    u64::try_from((now - from).get_seconds()).unwrap_or(0)
                }),
            };
        }
        let ctx = GoneContext {
            attempt_failed: attempt
                .filter(|a| a.status == AttemptPhase::Failed)
                .and_then(|a| a.reason.as_deref()),
            stopped: attempt.and_then(crate::ends::stopped_by_gantry),
            deleted_by: pod
                .deleted_by
                .as_deref()
                .or_else(|| attempt.and_then(|a| a.deleted_by.as_deref())),
            waiting: self.waits.of(&pod.name).map(|w| &w.cause),
            now: Some(now),
        };
        gone(pod, &ctx)
    }

    /// Every end known of an attempt's pods, oldest first: recorded on it, seen by this engine,
    /// or stated by a pod still here (one that cannot start, or ended since the last record).
    /// The Job pane asks for it every frame: the pods already known are a set, not a walk of
    /// the list for each pod (5,000 ended pods were 12 million comparisons a frame).
    pub fn ends_of(&self, attempt: &AttemptSummary) -> Vec<PodEnd> {
        let mut ends = attempt.recorded_ends.clone();
        let mut known: std::collections::HashSet<&str> = attempt
            .recorded_ends
            .iter()
            .map(|e| e.pod.as_str())
            .collect();
        for entry in self
            .ends
            .by_attempt
            .get(&attempt.name)
            .into_iter()
            .flatten()
        {
            if known.insert(entry.end.pod.as_str()) {
                ends.push(entry.end.clone());
            }
        }
        // Unsorted (the recovery policy asks each round, and a Job may have thousands of
        // pods): the ends are put in order below, ties by rank, then name.
        for pod in self.jobs.pods_in(&attempt.name) {
            if let Some(fate) = &pod.fate
                && known.insert(pod.name.as_str())
            {
                ends.push(pod.end(fate.clone()));
            }
        }
        ends.sort_by(|a, b| (a.at, a.index, &a.pod).cmp(&(b.at, b.index, &b.pod)));
        ends
    }
}

/// A preemption is told as one (failures are told by `noticing` with the pod's own words; a
/// success by its attempt's end). A rank of a `gang` is told, not sent: the recoverer's restart
/// of the whole run is.
fn notice(pod: &PodSummary, end: &PodEnd, gang: bool) -> Option<Notice> {
    let ran = crate::k8s::age::human_duration(i64::try_from(end.ran_seconds).unwrap_or(i64::MAX));
    let (kind, severity) = match end.class {
        Class::Preempted if gang => (Kind::RankPreempted, Severity::Warning),
        Class::Preempted => (Kind::Preempted, Severity::Warning),
        Class::Capacity | Class::Deadline => (Kind::PodFailed, Severity::Warning),
        Class::Deleted => (Kind::PodFailed, Severity::Info),
        _ => return None,
    };
    let text = format!(
        "pod {} {}: {} (ran {ran})",
        pod.name,
        end.class,
        crate::sanitize::one_line(&end.detail)
    );
    let notice = Notice::new(kind, severity, &pod.name, text);
    Some(match end.class {
        // The cloud replaces the pod: a recovery nobody had to start.
        Class::Preempted => notice
            .as_news(format!("preempted/{}", pod.name))
            .with_detail("class", "preempted")
            .with_detail("pod", pod.name.as_str()),
        _ => notice,
    })
}

#[cfg(test)]
#[path = "ends_tests.rs"]
mod tests;
