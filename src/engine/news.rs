//! News for those not looking: a notice that is one of the notification events becomes a message
//! (`notify::Event`) with what the model knows beside it — the run, the attempt, how its pods
//! ended, what the run has cost so far — and goes to the notifier. Several engines may watch one
//! Job (the TUI, `gantry watch`, `gantry serve`, on any machine): only the recoverer, the holder
//! of the Lease, sends, so a message is sent once; a read-only engine never holds it, so it shows
//! but never sends. When the cluster cannot be reached the Lease cannot be renewed or read, and
//! the engine that last held it is the one that tells that.

use std::collections::BTreeMap;

use super::Model;
use super::notice::Notice;
use crate::k8s::status::AttemptSummary;
use crate::notify::Message as Event;
use crate::vocabulary::Kind;

/// How long an attempt's end waits for its pods' ends (the Job and its pods are watched apart,
/// so the Job's end may come first).
const ENDS_WAIT_SECONDS: i64 = 20;

/// Where the engine's news goes: the notifier of the config's HTTP targets, for its Job.
pub struct Sender {
    pub notifier: crate::notify::Notifier,
    pub job: String,
    /// Attempts' ends waiting for their pods' ends, with when they were told.
    held: std::sync::Mutex<Vec<(Notice, jiff::Timestamp)>>,
}

impl Sender {
    pub fn new(notifier: crate::notify::Notifier, job: String) -> Sender {
        Sender {
            notifier,
            job,
            held: std::sync::Mutex::new(Vec::new()),
        }
    }

    /// Sends `notice` if it is news and this engine is the one to send it; an attempt's end
    /// once its pods' ends are known (or after [`ENDS_WAIT_SECONDS`]).
    pub fn send(&self, notice: &Notice, model: &Model, now: jiff::Timestamp) {
        if notice.sent_as() == Some(Kind::AttemptEnded) && !ends_known(notice, model) {
            self.lock().push((notice.clone(), now));
            return;
        }
        if let Some(message) = message(notice, model, &self.job, now) {
            self.notifier.send(message);
        }
    }

    /// Sends the held attempts' ends whose pods' ends are known now, or that waited enough.
    pub fn settle(&self, model: &Model, now: jiff::Timestamp) {
        let ready: Vec<Notice> = {
            let mut held = self.lock();
            let (ready, waiting) = std::mem::take(&mut *held).into_iter().partition(|(n, at)| {
                ends_known(n, model) || (now - *at).get_seconds() >= ENDS_WAIT_SECONDS
            });
            *held = waiting;
            ready.into_iter().map(|(n, _)| n).collect()
        };
        for notice in ready {
            if let Some(message) = message(&notice, model, &self.job, now) {
                self.notifier.send(message);
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(Notice, jiff::Timestamp)>> {
        self.held
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Whether the ends of every pod the attempt counted as failed or succeeded are known.
fn ends_known(notice: &Notice, model: &Model) -> bool {
    let Some(attempt) = model.jobs.attempts.items.get(&notice.subject) else {
        return true;
    };
    let counted = usize::try_from(attempt.failed.max(0) + attempt.succeeded.max(0)).unwrap_or(0);
    model.ends_of(attempt).len() >= counted.max(1)
}

/// The message for `notice`, if it is news and this engine is the one to send it.
pub fn message(notice: &Notice, model: &Model, job: &str, now: jiff::Timestamp) -> Option<Event> {
    if !model.recovery.mine() {
        return None;
    }
    event_for(notice, model, job, now)
}

/// The message `notice` is, if it is news, whoever sends it (a viewer rings its own terminal).
pub fn event_for(notice: &Notice, model: &Model, job: &str, now: jiff::Timestamp) -> Option<Event> {
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
        .items
        .get(&notice.subject)
        .or_else(|| {
            news.detail
                .get("attempt")
                .and_then(|a| a.as_str())
                .and_then(|a| model.jobs.attempts.items.get(a))
        })
        .or_else(|| model.jobs.newest());
    let run = attempt.and_then(|a| a.run.as_ref());
    let scope = match run {
        Some(run) if !run.id.is_empty() => run.id.clone(),
        _ => cluster.clone(),
    };
    let key = format!("{scope}/{}/{}", sent_as.name(), news.occurrence);
    let mut event = Event::new(sent_as, notice.severity, cluster, notice.to_string(), key);
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
        event.cost_so_far = Some(crate::meter::round_usd(usd));
        event.detail.insert("costPartial".into(), partial.into());
    }
    if let Some(attempt) = attempt.filter(|_| sent_as == Kind::AttemptEnded) {
        ends(&mut event, model, attempt);
    }
    Some(event)
}

/// How an ended attempt's pods ended (`{"succeeded": 2, "preempted": 1}`) and their cost.
fn ends(event: &mut Event, model: &Model, attempt: &AttemptSummary) {
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
        event
            .detail
            .insert("podsCost".into(), crate::meter::round_usd(cost).into());
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use serde_json::json;

    use super::*;
    use crate::vocabulary::Severity;

    const RUN: &str = "20261205-100000-abcdef";

    fn model(mine: bool) -> Model {
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
        crate::engine::model::fixtures::model_with(attempt, mine)
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

    #[test]
    fn only_the_recoverer_sends_and_what_is_not_news_is_never_sent() {
        let now = jiff::Timestamp::now();
        assert!(message(&stalled(), &model(false), "ml-training-job", now).is_none());
        let plain = Notice::new(Kind::Log, Severity::Critical, "p", "could not save");
        assert!(message(&plain, &model(true), "ml-training-job", now).is_none());
        assert!(event_for(&stalled(), &model(false), "ml-training-job", now).is_some());
    }

    #[test]
    fn a_message_names_its_run_and_attempt_and_its_key_is_the_run_the_event_and_the_occurrence() {
        let now = jiff::Timestamp::now();
        let event = message(&stalled(), &model(true), "ml-training-job", now).unwrap();
        assert_eq!(event.kind, Kind::Stalled);
        assert_eq!(event.run.as_deref(), Some(RUN));
        assert_eq!(event.attempt, Some(2));
        assert_eq!(event.job.as_deref(), Some("ml-training-job"));
        assert_eq!(
            event.key,
            format!("{RUN}/stalled/ml-training-job-2/1764950000")
        );
        assert_eq!(event.text, "attempt ml-training-job-2 stalled");
    }
}
