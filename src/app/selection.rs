//! What one viewer has selected: an attempt (none: the newest) and a pod (none: the first).
//! Names, not indexes, so a list that changes under the viewer keeps its choice.

use crate::engine::world::jobs::JobsModel;
use crate::k8s::status::{AttemptSummary, EventSummary, PodSummary};

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Selection {
    pub attempt: Option<String>,
    pub pod: Option<String>,
}

impl Selection {
    /// The attempt the panes show: the one selected while it is there, else the newest.
    pub fn attempt<'m>(&self, jobs: &'m JobsModel) -> Option<&'m AttemptSummary> {
        jobs.attempt_or_newest(self.attempt.as_deref())
    }

    /// Where the shown attempt is in the list, oldest first.
    pub fn attempt_index(&self, jobs: &JobsModel) -> Option<usize> {
        let name = &self.attempt(jobs)?.name;
        jobs.attempts().iter().position(|a| &a.name == name)
    }

    /// The shown attempt's pods.
    pub fn pods<'m>(&self, jobs: &'m JobsModel) -> Vec<&'m PodSummary> {
        match self.attempt(jobs) {
            Some(a) => jobs.pods_of(&a.name),
            None => Vec::new(),
        }
    }

    /// The pod selected while it is there, else the first.
    pub fn pod<'m>(&self, jobs: &'m JobsModel) -> Option<&'m PodSummary> {
        let pods = self.pods(jobs);
        self.pod
            .as_ref()
            .and_then(|name| pods.iter().find(|p| &p.name == name).copied())
            .or(pods.first().copied())
    }

    pub fn pod_index(&self, jobs: &JobsModel) -> Option<usize> {
        let name = &self.pod(jobs)?.name;
        self.pods(jobs).iter().position(|p| &p.name == name)
    }

    /// Events of the shown attempt and its pods.
    pub fn events<'m>(&self, jobs: &'m JobsModel) -> Vec<&'m EventSummary> {
        jobs.events_of(self.attempt(jobs).map(|a| a.name.as_str()))
    }

    pub fn move_attempt(&mut self, jobs: &JobsModel, delta: isize) {
        let names: Vec<String> = jobs.attempts().iter().map(|a| a.name.clone()).collect();
        if let Some(next) = step(&names, self.attempt_index(jobs), delta) {
            self.attempt = Some(next);
            self.pod = None;
        }
    }

    pub fn move_pod(&mut self, jobs: &JobsModel, delta: isize) {
        let names: Vec<String> = self.pods(jobs).iter().map(|p| p.name.clone()).collect();
        if let Some(next) = step(&names, self.pod_index(jobs), delta) {
            self.pod = Some(next);
        }
    }
}

fn step(names: &[String], current: Option<usize>, delta: isize) -> Option<String> {
    if names.is_empty() {
        return None;
    }
    let at = current.unwrap_or(0) as isize;
    let next = (at + delta).clamp(0, names.len() as isize - 1) as usize;
    names.get(next).cloned()
}
