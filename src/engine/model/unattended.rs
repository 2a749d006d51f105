//! What nobody looking would notice until too late: an attempt that stopped making progress (no
//! new log line for `stall-after` while a pod runs — a rank hung in a collective — or no new
//! step that long while lines still flow), a pod that has not run after `waiting-after`, a
//! cluster unreachable, a cluster costing money with nothing to do. Worked out from the model
//! and the time after every batch of events (the engine ticks every few seconds, so time alone
//! is enough), each told once per occurrence, as news for those not looking.

use std::collections::BTreeSet;
use std::time::Duration;

use jiff::Timestamp;

use super::Model;
use super::idle::Idle;
use crate::engine::notice::Notice;
use crate::k8s::age::human_duration;
use crate::vocabulary::{Kind, Severity};

/// How long the cluster's API may be out of reach before it is news.
pub const UNREACHABLE_AFTER: Duration = Duration::from_secs(120);

/// When to tell (`[guards]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Thresholds {
    pub stall_after: Duration,
    pub waiting_after: Duration,
}

impl Thresholds {
    pub fn of(guards: &crate::config::Guards) -> Self {
        Self {
            stall_after: guards.stall_after(),
            waiting_after: guards.waiting_after(),
        }
    }
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds::of(&crate::config::Guards::default())
    }
}

/// A count that should keep moving, and since when it has not.
#[derive(Debug, Clone, PartialEq)]
struct Moving {
    attempt: String,
    value: f64,
    since: Timestamp,
}

impl Moving {
    /// Since when `value` of `attempt` has been what it is.
    fn update(slot: &mut Option<Moving>, attempt: &str, value: f64, now: Timestamp) -> Timestamp {
        match slot {
            Some(m) if m.attempt == attempt && m.value == value => m.since,
            _ => {
                *slot = Some(Moving {
                    attempt: attempt.to_string(),
                    value,
                    since: now,
                });
                now
            }
        }
    }
}

/// A stall told: of which attempt, and since when it had made no progress.
#[derive(Debug, Clone, PartialEq)]
pub struct Stall {
    pub attempt: String,
    pub since: Timestamp,
    /// "no new log line" or "no new step".
    pub what: &'static str,
}

#[derive(Debug, Default)]
pub struct Unattended {
    lines: Option<Moving>,
    steps: Option<Moving>,
    /// The stall told and not over yet (progress again ends it).
    pub stalled: Option<Stall>,
    /// Pods told as waiting too long, while they still wait.
    waited: BTreeSet<String>,
    /// Since when the API has been out of reach, and whether that was told.
    unreachable: Option<(Timestamp, bool)>,
    /// The idle spell told (by when it began).
    idle_told: Option<Timestamp>,
}

impl Model {
    /// What time and the model call to be told now; `idle` is the idle decision of this moment.
    pub fn unattended(
        &mut self,
        thresholds: &Thresholds,
        idle: &Idle,
        now: Timestamp,
    ) -> Vec<Notice> {
        let mut told = Vec::new();
        told.extend(self.stall(thresholds.stall_after, now));
        told.extend(self.waiting_long(thresholds.waiting_after, now));
        told.extend(self.unreachable(now));
        told.extend(self.idle_news(idle));
        for notice in &told {
            self.record(notice.clone());
        }
        told
    }

    fn stall(&mut self, after: Duration, now: Timestamp) -> Option<Notice> {
        let attempt = self.jobs.active_attempt().cloned();
        let running: Vec<Timestamp> = attempt
            .as_ref()
            .map(|a| {
                self.jobs
                    .pods_of(&a.name)
                    .into_iter()
                    .filter(|p| p.phase == "Running" && !p.deleting)
                    .filter_map(|p| p.running_since)
                    .collect()
            })
            .unwrap_or_default();
        let (Some(attempt), Some(first_running)) = (attempt, running.iter().min().copied()) else {
            self.unattended.lines = None;
            self.unattended.steps = None;
            return self
                .unattended
                .stalled
                .take()
                .map(|s| progress_again(&s, "it has no pod running"));
        };
        let name = attempt.name.as_str();
        let following = self.logs.source.as_ref().is_some_and(|s| s.attempt == name);
        let received = if following { self.logs.received } else { 0 };
        let line_since = Moving::update(&mut self.unattended.lines, name, received as f64, now);
        let step = attempt
            .attempt
            .and_then(|n| self.training.attempt(n))
            .and_then(|t| t.progress)
            .and_then(|p| p.progress.step)
            .map(|c| c.done);
        let quiet = age(now, line_since.max(first_running));
        let stall = if quiet >= after {
            Some(("no new log line", line_since.max(first_running), quiet))
        } else if let Some(step) = step {
            let step_since = Moving::update(&mut self.unattended.steps, name, step, now);
            let still = age(now, step_since.max(first_running));
            (still >= after).then_some(("no new step", step_since.max(first_running), still))
        } else {
            None
        };
        match (stall, &self.unattended.stalled) {
            (None, Some(s)) if s.attempt == name => {
                let told = progress_again(s, "it makes progress again");
                self.unattended.stalled = None;
                Some(told)
            }
            // Told once until progress resumes, whichever count stopped first.
            (Some(_), Some(s)) if s.attempt == name => None,
            (Some((what, since, quiet)), _) => {
                let stall = Stall {
                    attempt: name.to_string(),
                    since,
                    what,
                };
                let for_how_long = human_duration(quiet.as_secs() as i64);
                let mut text = format!("attempt {name} stalled: {what} for {for_how_long}");
                if let Some(step) = step {
                    text.push_str(&format!(" (last step {step})"));
                }
                let notice = Notice::new(Kind::Stalled, Severity::Warning, name, text)
                    .as_news(format!("{name}/{}", since.as_second()))
                    .with_detail("attempt", name)
                    .with_detail("stalledFor", quiet.as_secs())
                    .with_detail("lastLine", received)
                    .with_detail("what", what);
                let notice = match step {
                    Some(step) => notice.with_detail("step", step),
                    None => notice,
                };
                self.unattended.stalled = Some(stall);
                Some(notice)
            }
            (None, _) => None,
        }
    }

    fn waiting_long(&mut self, after: Duration, now: Timestamp) -> Vec<Notice> {
        let waiting: BTreeSet<String> = self.waits.pods().map(str::to_string).collect();
        self.unattended.waited.retain(|p| waiting.contains(p));
        let mut told = Vec::new();
        for pod in waiting {
            if self.unattended.waited.contains(&pod) {
                continue;
            }
            let Some(waiting) = self.waits.of(&pod) else {
                continue;
            };
            let since = waiting
                .since
                .or_else(|| self.jobs.pods.items.get(&pod).and_then(|p| p.created));
            let Some(since) = since else { continue };
            let waited = age(now, since);
            if waited < after {
                continue;
            }
            let text = format!(
                "pod {pod} not running after {}: {}",
                human_duration(waited.as_secs() as i64),
                waiting.detail(now)
            );
            told.push(
                Notice::new(Kind::Waiting, Severity::Warning, &pod, text)
                    .as_news(format!("{pod}/{}", since.as_second()))
                    .with_detail("pod", pod.as_str())
                    .with_detail("cause", waiting.cause.name())
                    .with_detail("hint", waiting.hint())
                    .with_detail("waitingFor", waited.as_secs()),
            );
            self.unattended.waited.insert(pod);
        }
        told
    }

    fn unreachable(&mut self, now: Timestamp) -> Option<Notice> {
        // Only a cluster that is there to reach: not while it is made or deleted.
        let reachable_expected = self.cluster.summary.as_ref().is_some_and(|s| {
            s.status == crate::gke::ClusterStatus::Running && self.cluster.busy.is_none()
        }) || !self.cluster.managed();
        if self.connected || !reachable_expected {
            let was = self.unattended.unreachable.take();
            return match was {
                Some((since, true)) if self.connected => {
                    let text = format!(
                        "cluster reachable again after {}",
                        human_duration(age(now, since).as_secs() as i64)
                    );
                    Some(Notice::new(
                        Kind::ClusterStatus,
                        Severity::Info,
                        self.cluster_name(),
                        text,
                    ))
                }
                _ => None,
            };
        }
        let (since, told) = self.unattended.unreachable.get_or_insert((now, false));
        let (since, was_told) = (*since, *told);
        let out_for = age(now, since);
        if was_told || out_for < UNREACHABLE_AFTER {
            return None;
        }
        self.unattended.unreachable = Some((since, true));
        let why = self.trouble().map(|t| format!(": {t}")).unwrap_or_default();
        let text = format!(
            "cluster unreachable for {}{why}",
            human_duration(out_for.as_secs() as i64)
        );
        let name = self.cluster_name();
        Some(
            Notice::new(Kind::Cluster, Severity::Critical, &name, text)
                .as_news(format!("unreachable/{}", since.as_second()))
                .with_detail("status", "unreachable"),
        )
    }

    fn idle_news(&mut self, idle: &Idle) -> Option<Notice> {
        let Some(text) = idle.reminder() else {
            self.unattended.idle_told = None;
            return None;
        };
        let since = super::idle::idle_since(self)?;
        if self.unattended.idle_told == Some(since) {
            return None;
        }
        self.unattended.idle_told = Some(since);
        let name = self.cluster_name();
        let notice = Notice::new(Kind::Idle, Severity::Warning, &name, text)
            .as_news(format!("idle/{}", since.as_second()))
            .with_detail("idleSince", since.to_string());
        Some(match idle {
            Idle::Remind { per_hour, .. } | Idle::ScaleToZero { per_hour, .. } => {
                match per_hour.usd() {
                    Some(usd) => notice.with_detail("perHour", usd),
                    None => notice,
                }
            }
            Idle::No => notice,
        })
    }

    fn cluster_name(&self) -> String {
        self.target().map(|t| t.cluster.clone()).unwrap_or_default()
    }
}

fn age(now: Timestamp, since: Timestamp) -> Duration {
    Duration::try_from(now.duration_since(since)).unwrap_or_default()
}

/// A stall's end, for the record (not news: the stall was).
fn progress_again(stall: &Stall, why: &str) -> Notice {
    Notice::new(
        Kind::Resumed,
        Severity::Info,
        &stall.attempt,
        format!("attempt {} no longer stalled: {why}", stall.attempt),
    )
}

#[cfg(test)]
#[path = "unattended_tests.rs"]
mod tests;
