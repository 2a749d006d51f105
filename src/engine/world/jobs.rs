//! The training Job's attempts, their pods and events, as the watchers report them. Which of
//! them a viewer looks at is the viewer's (`app::Selection`).

use std::collections::{BTreeMap, BTreeSet};

use crate::k8s::status::{AttemptPhase, AttemptSummary, EventSummary, PodSummary};
use crate::k8s::watch::{Change, JobWatchEvent};

/// Events kept for the events pane.
pub const EVENTS_KEPT: usize = 500;
/// Events past `EVENTS_KEPT` let in before the oldest are dropped: one sort per this many events,
/// not one per event (5,000 pods bring some 25,000 events).
const EVENTS_SLACK: usize = 100;

/// Objects keyed by name, with the relist bookkeeping watchers ask for.
#[derive(Debug, Clone)]
pub struct Tracked<T> {
    /// Each item on the heap: a map's nodes hold room for eleven entries and are often half
    /// full, so a pod's summary (about 450 bytes) inline would cost nearly twice its size.
    items: BTreeMap<String, Box<T>>,
    /// While a watcher lists again: the items held when it started that the list has not
    /// given yet. Those still here when it is done are gone. (The names of what was held,
    /// not of everything listed: a namespace's events run to tens of thousands, of which
    /// only the newest are kept.)
    relisting: Option<BTreeSet<String>>,
}

impl<T> Default for Tracked<T> {
    fn default() -> Self {
        Self {
            items: BTreeMap::new(),
            relisting: None,
        }
    }
}

impl<T> Tracked<T> {
    pub fn get(&self, name: &str) -> Option<&T> {
        self.items.get(name).map(|t| &**t)
    }

    pub fn values(&self) -> impl Iterator<Item = &T> {
        self.items.values().map(|t| &**t)
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// While a relist runs: the items held that it has not listed (yet). At `Synced`, those
    /// that are gone.
    pub fn unseen(&self) -> impl Iterator<Item = &T> {
        self.relisting.iter().flatten().filter_map(|k| self.get(k))
    }

    /// Folds a change in; returns the trouble message of a failing watch, if that is what it was.
    fn apply(&mut self, change: Change<T>, key: impl Fn(&T) -> String) -> Option<String> {
        match change {
            Change::Restarted => self.relisting = Some(self.items.keys().cloned().collect()),
            Change::Listed(t) => {
                let k = key(&t);
                if let Some(unseen) = self.relisting.as_mut() {
                    unseen.remove(&k);
                }
                self.items.insert(k, Box::new(t));
            }
            Change::Synced => {
                if let Some(unseen) = self.relisting.take() {
                    self.items.retain(|k, _| !unseen.contains(k));
                }
            }
            Change::Applied(t) => {
                self.items.insert(key(&t), Box::new(t));
            }
            Change::Deleted(t) => {
                self.items.remove(&key(&t));
            }
            Change::Trouble(why) => return Some(why),
            Change::Recovered => {}
        }
        None
    }
}

#[derive(Debug, Clone, Default)]
pub struct JobsModel {
    pub attempts: Tracked<AttemptSummary>,
    pub pods: Tracked<PodSummary>,
    events: Tracked<EventSummary>,
    /// Arrival order of events: a tie-break where timestamps have one-second precision.
    event_seq: std::collections::HashMap<String, u64>,
    next_seq: u64,
}

impl JobsModel {
    pub fn apply(&mut self, event: JobWatchEvent) -> Option<String> {
        match event {
            JobWatchEvent::Job(c) => self.attempts.apply(c, |j| j.name.clone()),
            JobWatchEvent::Pod(c) => self.pods.apply(c, |p| p.name.clone()),
            JobWatchEvent::Event(c) => {
                if let Change::Applied(e) | Change::Listed(e) = &c {
                    self.next_seq += 1;
                    self.event_seq.insert(e.name.clone(), self.next_seq);
                }
                let trouble = self.events.apply(c, |e| e.name.clone());
                if self.events.items.len() > EVENTS_KEPT + EVENTS_SLACK {
                    self.drop_oldest_events();
                }
                trouble
            }
        }
    }

    /// Attempts, oldest first.
    pub fn attempts(&self) -> Vec<&AttemptSummary> {
        let mut list: Vec<&AttemptSummary> = self.attempts.values().collect();
        list.sort_by(|a, b| (a.attempt, a.created, &a.name).cmp(&(b.attempt, b.created, &b.name)));
        list
    }

    pub fn newest(&self) -> Option<&AttemptSummary> {
        self.attempts().last().copied()
    }

    /// The attempt named, if it is there; else the newest.
    pub fn attempt_or_newest(&self, name: Option<&str>) -> Option<&AttemptSummary> {
        name.and_then(|n| self.attempts.get(n))
            .or_else(|| self.newest())
    }

    /// Pods of an attempt in no set order: for counting and finding, where `pods_of`'s sort
    /// would be wasted on thousands of pods (and policies look each round).
    pub fn pods_in<'a>(&'a self, attempt: &'a str) -> impl Iterator<Item = &'a PodSummary> {
        self.pods.values().filter(move |p| p.job == attempt)
    }

    /// Pods of an attempt, by index (rank) then name.
    pub fn pods_of(&self, attempt: &str) -> Vec<&PodSummary> {
        let mut pods: Vec<&PodSummary> = self.pods.values().filter(|p| p.job == attempt).collect();
        pods.sort_by(|a, b| (a.index, a.created, &a.name).cmp(&(b.index, b.created, &b.name)));
        pods
    }

    /// The events about one pod, in no order.
    pub fn events_about(&self, pod: &str) -> Vec<&EventSummary> {
        self.events
            .values()
            .filter(|e| e.kind == "Pod" && e.object == pod)
            .collect()
    }

    /// Keeps the newest `EVENTS_KEPT` events (by last seen, then arrival).
    fn drop_oldest_events(&mut self) {
        let seq = &self.event_seq;
        let mut by_age: Vec<(Option<jiff::Timestamp>, u64, &String)> = self
            .events
            .items
            .iter()
            .map(|(k, e)| (e.last_seen, seq.get(k).copied().unwrap_or(0), k))
            .collect();
        let excess = by_age.len().saturating_sub(EVENTS_KEPT);
        if excess == 0 {
            return;
        }
        by_age.select_nth_unstable(excess - 1);
        let oldest: Vec<String> = by_age[..excess]
            .iter()
            .map(|(_, _, k)| (*k).clone())
            .collect();
        for k in oldest {
            self.events.items.remove(&k);
            self.event_seq.remove(&k);
        }
    }

    /// Events of an attempt and its pods (every event when there is no attempt): warnings
    /// first, then newest first.
    pub fn events_of(&self, attempt: Option<&str>) -> Vec<&EventSummary> {
        let pods: BTreeSet<&str> = attempt
            .map(|a| self.pods_in(a).map(|p| p.name.as_str()).collect())
            .unwrap_or_default();
        let mut list: Vec<&EventSummary> = self
            .events
            .values()
            .filter(|e| match attempt {
                Some(job) => e.object == job || pods.contains(e.object.as_str()),
                None => true,
            })
            .collect();
        let seq = |e: &EventSummary| self.event_seq.get(&e.name).copied().unwrap_or(0);
        list.sort_by(|a, b| {
            (b.type_ == "Warning", b.last_seen, seq(b)).cmp(&(
                a.type_ == "Warning",
                a.last_seen,
                seq(a),
            ))
        });
        list
    }

    /// Whether an attempt is still going (launch would be refused).
    pub fn active_attempt(&self) -> Option<&AttemptSummary> {
        self.attempts().into_iter().rev().find(|a| {
            matches!(a.status, AttemptPhase::Pending | AttemptPhase::Running) && !a.deleting
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(i: usize) -> JobWatchEvent {
        event_as(i, Change::Applied)
    }

    fn event_as(i: usize, change: fn(EventSummary) -> Change<EventSummary>) -> JobWatchEvent {
        JobWatchEvent::Event(change(EventSummary {
            name: format!("ml-training-job-{i:05}.e"),
            kind: "Pod".into(),
            object: format!("ml-training-job-{i:05}"),
            type_: "Normal".into(),
            reason: "Started".into(),
            message: "Started container".into(),
            count: 1,
            last_seen: jiff::Timestamp::from_second(1_700_000_000 + i as i64).ok(),
        }))
    }

    #[test]
    fn a_long_relist_remembers_only_what_was_held_before_it() {
        let mut view = JobsModel::default();
        for i in 0..10 {
            view.apply(event(i));
        }
        view.apply(JobWatchEvent::Event(Change::Restarted));
        // Events 5..10 are listed again among thousands of newer ones.
        for i in 5..5_000 {
            view.apply(event_as(i, Change::Listed));
            let unseen = view.events.relisting.as_ref().map_or(0, |u| u.len());
            assert!(unseen <= 10, "{unseen} names held while listing event {i}");
        }
        view.apply(JobWatchEvent::Event(Change::Synced));
        assert!(view.events.relisting.is_none());
        let held = |i: usize| {
            view.events
                .items
                .contains_key(&format!("ml-training-job-{i:05}.e"))
        };
        assert!(!held(0), "an event the list did not give again is gone");
        assert!(held(4_999), "the newest listed event is held");
        assert!(view.events.items.len() <= EVENTS_KEPT + EVENTS_SLACK);
    }

    #[test]
    fn only_the_newest_events_are_kept() {
        let mut view = JobsModel::default();
        for i in 0..5_000 {
            view.apply(event(i));
            assert!(view.events.items.len() <= EVENTS_KEPT + EVENTS_SLACK);
        }
        let kept: Vec<&str> = view
            .events_of(None)
            .iter()
            .map(|e| e.object.as_str())
            .collect();
        assert!(kept.len() >= EVENTS_KEPT, "{}", kept.len());
        assert_eq!(kept.first(), Some(&"ml-training-job-04999"));
        // Whatever was dropped is older than whatever was kept.
        let oldest_kept = 5_000 - kept.len();
        assert_eq!(
            kept.last(),
            Some(&format!("ml-training-job-{oldest_kept:05}").as_str())
        );
        assert_eq!(view.event_seq.len(), view.events.items.len());
    }
}
