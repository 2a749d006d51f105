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
use crate::notify::{Event, EventKind};

/// Where the engine's news goes: the notifier of the config's HTTP targets, for its Job.
pub struct Sender {
    pub notifier: crate::notify::Notifier,
    pub job: String,
}

impl Sender {
    /// Sends `notice` if it is news and this engine is the one to send it.
    pub fn send(&self, notice: &Notice, model: &Model, now: jiff::Timestamp) {
        if let Some(message) = message(notice, model, &self.job, now) {
            self.notifier.send(message);
        }
    }
}

/// The message for `notice`, if it is news and this engine is the one to send it.
pub fn message(notice: &Notice, model: &Model, job: &str, now: jiff::Timestamp) -> Option<Event> {
    let news = notice.news.as_ref()?;
    if !model.recovery.mine() {
        return None;
    }
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
    let key = format!("{scope}/{}/{}", news.event.name(), news.occurrence);
    let mut event = Event::new(
        news.event,
        notice.severity,
        cluster,
        notice.to_string(),
        key,
    );
    event.job = Some(job.to_string());
    event.run = run.map(|r| r.id.clone()).filter(|id| !id.is_empty());
    event.attempt = run.map(|r| r.attempt).or(attempt.and_then(|a| a.attempt));
    event.detail = news.detail.clone();
    event.at = now;
    event.cost_so_far = model
        .run_cost_so_far(now)
        .map(|(usd, _)| crate::meter::round_usd(usd));
    if let Some((_, partial)) = model.run_cost_so_far(now) {
        event.detail.insert("costPartial".into(), partial.into());
    }
    if let Some(attempt) = attempt.filter(|_| news.event == EventKind::AttemptEnded) {
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
