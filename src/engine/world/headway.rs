//! Whether the active attempt is getting anywhere: since when its log lines and its training
//! step have not moved, and since when its first pod has run. A rank hung in a collective
//! writes nothing; a loop that spins writes lines but no new step. Marked after every batch
//! of reports (the engine ticks every few seconds, so time alone moves it on); what a stall is,
//! and what to do about it, are the policies' (`policies::watch`, `policies::guards`).

use jiff::Timestamp;

use super::World;

/// A count that should keep moving, and since when it has been what it is.
#[derive(Debug, Clone, PartialEq)]
pub struct Moving {
    pub value: f64,
    pub since: Timestamp,
}

impl Moving {
    fn update(slot: &mut Option<Moving>, value: f64, now: Timestamp) {
        match slot {
            Some(m) if m.value == value => {}
            _ => *slot = Some(Moving { value, since: now }),
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Headway {
    /// The attempt it is about: the active one.
    pub attempt: Option<String>,
    /// Since when its first pod running now has run (None: none runs).
    pub running_since: Option<Timestamp>,
    /// The lines received of it.
    pub lines: Option<Moving>,
    /// The training step it reached, when its log says.
    pub step: Option<Moving>,
}

impl World {
    /// Marks the active attempt's headway at `now`.
    pub fn mark_headway(&mut self, now: Timestamp) {
        let Some(attempt) = self.jobs.active_attempt() else {
            self.headway = Headway::default();
            return;
        };
        let name = attempt.name.clone();
        let running_since = self
            .jobs
            .pods_in(&name)
            .filter(|p| p.phase == "Running" && !p.deleting)
            .filter_map(|p| p.running_since)
            .min();
        let following = self.logs.source.as_ref().is_some_and(|s| s.attempt == name);
        let received = if following { self.logs.received } else { 0 };
        let step = attempt
            .attempt
            .and_then(|n| self.training.attempt(n))
            .and_then(|t| t.progress)
            .and_then(|p| p.progress.step)
            .map(|c| c.done);
        let headway = &mut self.headway;
        if headway.attempt.as_deref() != Some(name.as_str()) {
            *headway = Headway {
                attempt: Some(name),
                ..Headway::default()
            };
        }
        headway.running_since = running_since;
        if running_since.is_none() {
            headway.lines = None;
            headway.step = None;
            return;
        }
        Moving::update(&mut headway.lines, received as f64, now);
        match step {
            Some(step) => Moving::update(&mut headway.step, step, now),
            None => headway.step = None,
        }
    }
}
