//! What nobody looking would notice until too late: an attempt that stopped making headway (no
//! new log line for `stall-after` while a pod runs — a rank hung in a collective — or no new
//! step that long while lines still flow), a pod that has not run after `waiting-after`, a
//! cluster unreachable. Judged from the world and the time after every batch (the engine ticks
//! every few seconds, so time alone is enough), each told once per occurrence, as news for those
//! not looking. Every engine tells; only the Lease holder's messages are sent (`news`).

use std::collections::BTreeSet;
use std::time::Duration;

use jiff::Timestamp;

use super::{Decisions, Doing, Settings};
use crate::engine::clock::Now;
use crate::engine::notice::Notice;
use crate::engine::world::World;
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

/// A stall: of which attempt, since when it had made no headway, and what stopped moving.
#[derive(Debug, Clone, PartialEq)]
pub struct Stall {
    pub attempt: String,
    pub since: Timestamp,
    /// "no new log line" or "no new step".
    pub what: &'static str,
    /// How long, at the time it was judged.
    pub quiet: Duration,
    /// The step it was at, if its log says.
    pub step: Option<f64>,
    /// The lines received of it.
    pub lines: u64,
}

/// Whether the active attempt has stalled at `now`: no new line for `after` while a pod runs,
/// or no new step that long while lines flow.
pub fn stalled(world: &World, after: Duration, now: Timestamp) -> Option<Stall> {
    let headway = &world.headway;
    let attempt = headway.attempt.clone()?;
    let running = headway.running_since?;
    let lines = headway.lines.as_ref()?;
    let step = headway.step.as_ref().map(|s| s.value);
    let since = lines.since.max(running);
    let stall = |what, since: Timestamp| Stall {
        attempt: attempt.clone(),
        since,
        what,
        quiet: age(now, since),
        step,
        lines: lines.value as u64,
    };
    if age(now, since) >= after {
        return Some(stall("no new log line", since));
    }
    let steps = headway.step.as_ref()?;
    let since = steps.since.max(running);
    (age(now, since) >= after).then(|| stall("no new step", since))
}

#[derive(Debug, Default)]
pub struct Watch {
    /// The stall told and not over yet (headway again ends it).
    stalled: Option<Stall>,
    /// Pods told as waiting too long, while they still wait.
    waited: BTreeSet<String>,
    /// Since when the API has been out of reach, and whether that was told.
    unreachable: Option<(Timestamp, bool)>,
}

impl super::Policy for Watch {
    fn principal(&self) -> &'static str {
        "watch"
    }

    fn decide(
        &mut self,
        world: &World,
        _doing: &Doing,
        settings: &Settings,
        now: Now,
    ) -> Decisions {
        let mut notices = Vec::new();
        notices.extend(self.stall(world, settings.thresholds.stall_after, now.wall));
        notices.extend(self.waiting_long(world, settings.thresholds.waiting_after, now.wall));
        notices.extend(self.unreachable(world, now.wall));
        Decisions {
            notices,
            commands: Vec::new(),
        }
    }
}

impl Watch {
    fn stall(&mut self, world: &World, after: Duration, now: Timestamp) -> Option<Notice> {
        let stall = stalled(world, after, now);
        let active = world.headway.attempt.as_deref();
        match (stall, &self.stalled) {
            (None, Some(told)) => {
                let why = match active {
                    Some(a) if a == told.attempt && world.headway.running_since.is_some() => {
                        "it makes progress again"
                    }
                    _ => "it has no pod running",
                };
                let notice = progress_again(told, why);
                self.stalled = None;
                Some(notice)
            }
            // Told once until headway resumes, whichever count stopped first.
            (Some(stall), Some(told)) if stall.attempt == told.attempt => None,
            (Some(stall), _) => {
                let notice = stall_told(&stall);
                self.stalled = Some(stall);
                Some(notice)
            }
            (None, None) => None,
        }
    }

    fn waiting_long(&mut self, world: &World, after: Duration, now: Timestamp) -> Vec<Notice> {
        let waiting: BTreeSet<String> = world.waits.pods().map(str::to_string).collect();
        self.waited.retain(|p| waiting.contains(p));
        let mut told = Vec::new();
        for pod in waiting {
            if self.waited.contains(&pod) {
                continue;
            }
            let Some(waiting) = world.waits.of(&pod) else {
                continue;
            };
            let since = waiting
                .since
                .or_else(|| world.jobs.pods.get(&pod).and_then(|p| p.created));
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
            self.waited.insert(pod);
        }
        told
    }

    fn unreachable(&mut self, world: &World, now: Timestamp) -> Option<Notice> {
        // Only a cluster that is there to reach: not while it is made or deleted.
        let reachable_expected = world.cluster.summary.as_ref().is_some_and(|s| {
            s.status == crate::gke::ClusterStatus::Running && world.cluster.busy.is_none()
        }) || !world.cluster.managed();
        if world.connected || !reachable_expected {
            let was = self.unreachable.take();
            return match was {
                Some((since, true)) if world.connected => Some(Notice::new(
                    Kind::ClusterStatus,
                    Severity::Info,
                    world.cluster_name(),
                    format!(
                        "cluster reachable again after {}",
                        human_duration(age(now, since).as_secs() as i64)
                    ),
                )),
                _ => None,
            };
        }
        let (since, was_told) = *self.unreachable.get_or_insert((now, false));
        let out_for = age(now, since);
        if was_told || out_for < UNREACHABLE_AFTER {
            return None;
        }
        self.unreachable = Some((since, true));
        let why = world
            .trouble()
            .map(|t| format!(": {t}"))
            .unwrap_or_default();
        let text = format!(
            "cluster unreachable for {}{why}",
            human_duration(out_for.as_secs() as i64)
        );
        Some(
            Notice::new(
                Kind::Cluster,
                Severity::Critical,
                world.cluster_name(),
                text,
            )
            .as_news(format!("unreachable/{}", since.as_second()))
            .with_detail("status", "unreachable"),
        )
    }
}

fn age(now: Timestamp, since: Timestamp) -> Duration {
    Duration::try_from(now.duration_since(since)).unwrap_or_default()
}

/// A stall as it is told.
fn stall_told(stall: &Stall) -> Notice {
    let name = stall.attempt.as_str();
    let for_how_long = human_duration(stall.quiet.as_secs() as i64);
    let mut text = format!("attempt {name} stalled: {} for {for_how_long}", stall.what);
    if let Some(step) = stall.step {
        text.push_str(&format!(" (last step {step})"));
    }
    let notice = Notice::new(Kind::Stalled, Severity::Warning, name, text)
        .as_news(format!("{name}/{}", stall.since.as_second()))
        .with_detail("attempt", name)
        .with_detail("stalledFor", stall.quiet.as_secs())
        .with_detail("lastLine", stall.lines)
        .with_detail("what", stall.what);
    match stall.step {
        Some(step) => notice.with_detail("step", step),
        None => notice,
    }
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
#[path = "watch_tests.rs"]
mod tests;
