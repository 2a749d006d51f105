//! What is sent to the people who are not looking: a notice whose kind is sent
//! (`Kind::sent_as`) becomes a message (`notify::Message`, the one shape from the notice to the
//! target's request) with what the world knows beside it — the run, the attempt, how its pods
//! ended, what the run has cost so far. Several engines may watch one Job (the TUI, `gantry
//! watch`, `gantry serve`, on any machine, the watcher in the cluster): only the recoverer, the
//! holder of the Lease, sends, so a message is sent once; a read-only engine never holds it, so
//! it shows but never sends. When the cluster cannot be reached the Lease cannot be renewed or
//! read, and the engine that last held it is the one that tells that. Every viewer rings its
//! own terminal with the same message ([`message_for`]), whoever sends.

use std::collections::BTreeMap;

use super::Settings;
use crate::engine::clock::Now;
use crate::engine::notice::Notice;
use crate::engine::world::World;
use crate::k8s::status::AttemptSummary;
use crate::notify::Message;
use crate::vocabulary::Kind;

/// How long an attempt's end waits for its pods' ends (the Job and its pods are watched apart,
/// so the Job's end may come first).
const ENDS_WAIT_SECONDS: i64 = 20;

/// Attempts' ends waiting for their pods' ends, with when they were told.
#[derive(Debug, Default)]
pub struct News {
    held: Vec<(Notice, jiff::Timestamp)>,
}

impl News {
    /// The messages to send for what was told this round (and what was held until now), if
    /// this engine is the one to send them.
    pub fn decide(
        &mut self,
        world: &World,
        told: &[&Notice],
        settings: &Settings,
        now: Now,
    ) -> Vec<Message> {
        let now = now.wall;
        let mut ready = Vec::new();
        for notice in told.iter().filter(|n| n.sent_as().is_some()) {
            if notice.sent_as() == Some(Kind::AttemptEnded) && !ends_known(notice, world) {
                self.held.push(((*notice).clone(), now));
            } else {
                ready.push((*notice).clone());
            }
        }
        let (settled, waiting) = std::mem::take(&mut self.held)
            .into_iter()
            .partition(|(n, at)| {
                ends_known(n, world) || (now - *at).get_seconds() >= ENDS_WAIT_SECONDS
            });
        self.held = waiting;
        ready.extend(settled.into_iter().map(|(n, _)| n));
        if !world.is_recoverer() {
            return Vec::new();
        }
        ready
            .iter()
            .filter_map(|n| message_for(n, world, &settings.job, now))
            .collect()
    }
}

/// Whether the ends of every pod the attempt counted as failed or succeeded are known.
fn ends_known(notice: &Notice, model: &World) -> bool {
    let Some(attempt) = model.jobs.attempts.get(&notice.subject) else {
        return true;
    };
    let counted = usize::try_from(attempt.failed.max(0) + attempt.succeeded.max(0)).unwrap_or(0);
    model.ends_of(attempt).len() >= counted.max(1)
}

/// The message `notice` is, if it is news, whoever sends it (a viewer rings its own terminal).
pub fn message_for(
    notice: &Notice,
    model: &World,
    job: &str,
    now: jiff::Timestamp,
) -> Option<Message> {
    let news = notice.news.as_ref()?;
    let sent_as = notice.sent_as()?;
    let cluster = model
        .target()
        .map(|t| t.cluster.clone())
        .unwrap_or_default();
    // The attempt it is about: the one it names, else the newest.
    let attempt = model
        .jobs
        .attempts
        .get(&notice.subject)
        .or_else(|| {
            news.detail
                .get("attempt")
                .and_then(|a| a.as_str())
                .and_then(|a| model.jobs.attempts.get(a))
        })
        .or_else(|| model.jobs.newest());
    let run = attempt.and_then(|a| a.run.as_ref());
    let scope = match run {
        Some(run) if !run.id.is_empty() => run.id.clone(),
        _ => cluster.clone(),
    };
    let key = format!("{scope}/{}/{}", sent_as.name(), news.occurrence);
    let mut event = Message::new(sent_as, notice.severity, cluster, notice.to_string(), key);
    event.job = Some(job.to_string());
    event.run = run.map(|r| r.id.clone()).filter(|id| !id.is_empty());
    // The number every screen shows (`#3`); the attempt within the run beside it.
    event.attempt = attempt.map(|a| a.number());
    event.detail = news.detail.clone();
    if let Some(run) = run {
        event.detail.insert("runAttempt".into(), run.attempt.into());
    }
    event.at = now;
    if let Some((usd, partial)) = model.run_cost_so_far(now) {
        event.cost_so_far = Some(crate::pricing::format::round_usd(usd));
        event.detail.insert("costPartial".into(), partial.into());
    }
    if let Some(attempt) = attempt.filter(|_| sent_as == Kind::AttemptEnded) {
        ends(&mut event, model, attempt);
    }
    Some(event)
}

/// How an ended attempt's pods ended (`{"succeeded": 2, "preempted": 1}`) and their cost.
fn ends(event: &mut Message, model: &World, attempt: &AttemptSummary) {
    let ends = model.ends_of(attempt);
    let mut classes: BTreeMap<String, u64> = BTreeMap::new();
    for end in &ends {
        *classes.entry(end.class.to_string()).or_default() += 1;
    }
    if let Some((class, _)) = classes.iter().max_by_key(|(_, n)| **n) {
        event.detail.insert("class".into(), class.clone().into());
    }
    let ends_json: serde_json::Map<String, serde_json::Value> = classes
        .into_iter()
        .map(|(class, n)| (class, n.into()))
        .collect();
    event.detail.insert("ends".into(), ends_json.into());
    let costs: Option<f64> = ends.iter().map(|e| e.cost).sum();
    if let Some(cost) = costs.filter(|_| !ends.is_empty()) {
        event.detail.insert(
            "podsCost".into(),
            crate::pricing::format::round_usd(cost).into(),
        );
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use serde_json::json;

    use super::*;
    use crate::vocabulary::Severity;

    const RUN: &str = "20261205-100000-abcdef";

    fn model(mine: bool) -> World {
        let attempt = AttemptSummary::of(
            &serde_json::from_value(json!({
                "metadata": {"name": "ml-training-job-2", "creationTimestamp": "2026-12-05T10:00:00Z",
                    "labels": {"gantry.dev/attempt": "2", "gantry.dev/run": RUN},
                    "annotations": {"gantry.dev/run-attempt": "2", "gantry.dev/recoveries": "1"}},
                "spec": {"completions": 1, "template": {"spec": {"containers": [{"name": "c"}]}}},
                "status": {"failed": 1, "conditions": [{"type": "Failed", "status": "True"}]},
            }))
            .unwrap(),
        );
        crate::engine::world::fixtures::model_with(attempt, mine)
    }

    fn stalled() -> Notice {
        Notice::new(
            Kind::Stalled,
            Severity::Warning,
            "ml-training-job-2",
            "attempt ml-training-job-2 stalled",
        )
        .as_news("ml-training-job-2/1764950000")
    }

    fn sent(world: &World, told: &[Notice]) -> Vec<Message> {
        let told: Vec<&Notice> = told.iter().collect();
        let settings = Settings {
            job: "ml-training-job".into(),
            ..Settings::default()
        };
        let now = crate::engine::policies::fixtures::now(0);
        News::default().decide(world, &told, &settings, now)
    }

    #[test]
    fn only_the_recoverer_sends_and_what_is_not_news_is_never_sent() {
        let now = jiff::Timestamp::now();
        assert!(sent(&model(false), &[stalled()]).is_empty());
        let plain = Notice::new(Kind::Log, Severity::Critical, "p", "could not save");
        assert!(sent(&model(true), std::slice::from_ref(&plain)).is_empty());
        assert_eq!(
            sent(&model(true), &[stalled()]).len(),
            1,
            "the positive control"
        );
        assert!(message_for(&stalled(), &model(false), "ml-training-job", now).is_some());
    }

    #[test]
    fn a_message_names_its_run_and_attempt_and_its_key_is_the_run_the_event_and_the_occurrence() {
        let [event] = sent(&model(true), &[stalled()]).try_into().unwrap();
        assert_eq!(event.kind, Kind::Stalled);
        assert_eq!(event.run.as_deref(), Some(RUN));
        assert_eq!(event.job.as_deref(), Some("ml-training-job"));
        assert_eq!(
            event.key,
            format!("{RUN}/stalled/ml-training-job-2/1764950000")
        );
        assert_eq!(event.text, "attempt ml-training-job-2 stalled");
    }

    #[test]
    fn a_message_says_the_attempt_number_every_screen_shows_and_the_run_attempt_beside_it() {
        let attempt = AttemptSummary::of(
            &serde_json::from_value(json!({
                "metadata": {"name": "ml-training-job-3", "creationTimestamp": "2026-12-05T10:00:00Z",
                    "labels": {"gantry.dev/attempt": "3", "gantry.dev/run": RUN},
                    "annotations": {"gantry.dev/run-attempt": "1", "gantry.dev/recoveries": "0"}},
                "spec": {"completions": 1, "template": {"spec": {"containers": [{"name": "c"}]}}},
                "status": {"active": 1},
            }))
            .unwrap(),
        );
        let world = crate::engine::world::fixtures::model_with(attempt, true);
        let stalled = Notice::new(Kind::Stalled, Severity::Warning, "ml-training-job-3", "s")
            .as_news("ml-training-job-3/1");
        let [event] = sent(&world, &[stalled]).try_into().unwrap();
        assert_eq!(event.attempt, Some(3));
        assert_eq!(event.detail["runAttempt"], 1);
        assert!(
            event.subject().contains("ml-training-job #3"),
            "{}",
            event.subject()
        );
    }
}
