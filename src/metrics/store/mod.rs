//! Every series of every attempt, pod (rank) and metric, within one memory budget (8 MiB by
//! default). Each metric of an attempt has its band across ranks; each pod has its own series
//! while the budget allows. When it does not (a Job of thousands of ranks), the series of the
//! pods not on screen are let go first (their latest values stay, for alerts), then attempts
//! older than the last two, then every series gets fewer buckets, and only then what is on
//! screen. The saved logs stay the source of truth: a series let go can be read again from
//! them.

mod budget;
mod samples;

use std::collections::{BTreeMap, BTreeSet};
use std::mem::size_of;

use super::alerts::Alert;
use super::band::Band;
use super::pieces::Sample;
use super::series::{DEFAULT_BUCKETS, Series};
use samples::ParserIds;
pub use samples::PodSamples;

pub const DEFAULT_BUDGET: usize = 8 * 1024 * 1024;
/// Metrics kept per attempt: output with ever new names cannot grow the store without end.
pub const MAX_METRICS: usize = 32;
/// What a map entry costs beside its key and value (B-tree node share), roughly.
const ENTRY: usize = 32;

#[derive(Debug, Clone)]
enum Track {
    Full(Box<Series>),
    /// The series was let go under the budget; its latest value stays for alerts.
    Latest(f64),
}

impl Track {
    fn latest(&self) -> Option<f64> {
        match self {
            Track::Full(s) => s.latest().map(|p| p.y),
            Track::Latest(y) => Some(*y),
        }
    }

    fn bytes(&self) -> usize {
        match self {
            Track::Full(s) => s.bytes(),
            Track::Latest(_) => 0,
        }
    }
}

#[derive(Debug, Clone, Default)]
struct Pod {
    /// By metric id.
    tracks: Vec<Option<Track>>,
}

impl Pod {
    fn bytes(&self, name: &str) -> usize {
        size_of::<Pod>()
            + name.len()
            + ENTRY
            + self.tracks.capacity() * size_of::<Option<Track>>()
            + self
                .tracks
                .iter()
                .flatten()
                .map(Track::bytes)
                .sum::<usize>()
    }

    fn let_go(&mut self) {
        for track in self.tracks.iter_mut().flatten() {
            if let Some(y) = track.latest() {
                *track = Track::Latest(y);
            }
        }
    }
}

#[derive(Debug, Clone, Default)]
struct Attempt {
    /// Metric names by id, in the order first seen.
    names: Vec<String>,
    bands: Vec<Band>,
    pods: BTreeMap<String, Pod>,
    on_screen: BTreeSet<String>,
    ranks: Option<usize>,
    /// Pods off screen have no series (the budget was tight).
    off_screen_let_go: bool,
    /// Pods off screen are not even stored (it was tighter still).
    off_screen_dropped: bool,
}

impl Attempt {
    fn bytes(&self) -> usize {
        size_of::<Attempt>()
            + ENTRY
            + self
                .names
                .iter()
                .map(|n| n.len() + size_of::<String>())
                .sum::<usize>()
            + self.bands.iter().map(Band::bytes).sum::<usize>()
            + self.pods.iter().map(|(n, p)| p.bytes(n)).sum::<usize>()
            + self
                .on_screen
                .iter()
                .map(|n| n.len() + ENTRY)
                .sum::<usize>()
    }

    fn let_go_off_screen(&mut self) {
        self.off_screen_let_go = true;
        let on_screen = &self.on_screen;
        self.pods
            .iter_mut()
            .filter(|(name, _)| !on_screen.contains(name.as_str()))
            .for_each(|(_, pod)| pod.let_go());
    }

    fn keeps_series(&self, pod: &str) -> bool {
        !self.off_screen_let_go || self.on_screen.contains(pod)
    }
}

#[derive(Debug, Clone)]
pub struct Store {
    budget: usize,
    /// Buckets for each new series; fewer once the budget made every series smaller.
    buckets: usize,
    attempts: BTreeMap<u32, Attempt>,
    bytes: usize,
}

impl Default for Store {
    fn default() -> Self {
        Self::new(DEFAULT_BUDGET)
    }
}

impl Store {
    pub fn new(budget: usize) -> Self {
        Self {
            budget,
            buckets: DEFAULT_BUCKETS,
            attempts: BTreeMap::new(),
            bytes: 0,
        }
    }

    /// One value of `metric` from `pod` at `x`; an alert when it is one.
    pub fn push(
        &mut self,
        attempt: u32,
        pod: &str,
        x: f64,
        metric: &str,
        value: f64,
    ) -> Option<Alert> {
        let mut alert = None;
        self.with_pod(attempt, pod, |samples| {
            samples.push(x, [(metric, value)], |a| alert = Some(a))
        });
        alert
    }

    /// Every metric of one sample from `pod`; the alerts it raises.
    pub fn push_sample(&mut self, attempt: u32, pod: &str, sample: &Sample<'_>) -> Vec<Alert> {
        self.with_pod(attempt, pod, |samples| samples.push_sample(sample))
    }

    /// Runs `f` with the samples of `pod` in `attempt` (the lines of one batch from it): the
    /// attempt and the pod are looked up once for them all, and what grew is counted against
    /// the budget when `f` returns.
    pub fn with_pod<R>(
        &mut self,
        attempt: u32,
        pod: &str,
        f: impl FnOnce(&mut PodSamples<'_>) -> R,
    ) -> R {
        let mut grown: isize = 0;
        let a = match self.attempts.get_mut(&attempt) {
            Some(a) => a,
            None => {
                grown += (size_of::<Attempt>() + ENTRY) as isize;
                self.attempts.entry(attempt).or_default()
            }
        };
        let keeps = a.keeps_series(pod);
        let stored = a.pods.contains_key(pod);
        let untracked = a.off_screen_dropped && !keeps && !stored;
        if !untracked && !stored {
            let fresh = Pod::default();
            grown += fresh.bytes(pod) as isize;
            a.pods.insert(pod.to_string(), fresh);
        }
        let ranks = a.ranks.unwrap_or(a.pods.len()).max(1);
        let Attempt {
            names, bands, pods, ..
        } = a;
        let mut samples = PodSamples {
            names,
            bands,
            tracks: if untracked { None } else { pods.get_mut(pod) },
            pod,
            keeps,
            ranks,
            buckets: self.buckets,
            grown,
            by_parser_id: ParserIds::default(),
        };
        let result = f(&mut samples);
        self.bytes = self.bytes.saturating_add_signed(samples.grown);
        if self.bytes > self.budget {
            self.enforce();
        }
        result
    }

    /// How many ranks report each step of `attempt` (else: the pods seen so far).
    pub fn set_ranks(&mut self, attempt: u32, ranks: usize) {
        self.attempts.entry(attempt).or_default().ranks = Some(ranks);
        self.recount_within_budget();
    }

    /// The pods whose series are kept when the budget is tight. A pod coming on screen after
    /// its series was let go starts a new one (its past is in the saved logs).
    pub fn set_on_screen(&mut self, attempt: u32, pods: &[&str]) {
        let a = self.attempts.entry(attempt).or_default();
        a.on_screen = pods.iter().map(|p| p.to_string()).collect();
        self.recount_within_budget();
    }

    /// Holds only the pods on screen from now on (a Job of many ranks): the others count in
    /// the band alone. `ranks` says how many report each step.
    pub fn keep_on_screen_only(&mut self, attempt: u32, ranks: usize) {
        if let Some(a) = self.attempts.get_mut(&attempt) {
            a.let_go_off_screen();
            a.off_screen_dropped = true;
            let on_screen = &a.on_screen;
            a.pods.retain(|name, _| on_screen.contains(name.as_str()));
            a.ranks = Some(ranks);
        }
        self.bytes = self.recount();
    }

    /// The stream of `attempt` has ended: steps waiting for ranks go into the bands.
    pub fn flush(&mut self, attempt: u32) {
        if let Some(a) = self.attempts.get_mut(&attempt) {
            a.bands.iter_mut().for_each(Band::flush);
        }
        self.recount_within_budget();
    }

    /// Takes `attempt` over from another store (read apart, from saved logs), within this
    /// store's budget. Whether there was anything to take.
    pub fn adopt(&mut self, attempt: u32, mut from: Store) -> bool {
        let Some(a) = from.attempts.remove(&attempt) else {
            return false;
        };
        self.attempts.insert(attempt, a);
        self.recount_within_budget();
        true
    }

    pub fn remove_attempt(&mut self, attempt: u32) {
        self.attempts.remove(&attempt);
        self.bytes = self.recount();
    }

    pub fn attempts(&self) -> impl Iterator<Item = u32> + '_ {
        self.attempts.keys().copied()
    }

    /// The metrics of `attempt`, a loss first (`loss` itself if there is one), the others in the
    /// order they were first seen.
    pub fn metrics(&self, attempt: u32) -> Vec<&str> {
        let Some(a) = self.attempts.get(&attempt) else {
            return Vec::new();
        };
        let mut names: Vec<&str> = a.names.iter().map(String::as_str).collect();
        loss_first(&mut names);
        names
    }

    /// How many ranks report each step of `attempt`: as said, else the pods stored.
    pub fn ranks(&self, attempt: u32) -> usize {
        self.attempts
            .get(&attempt)
            .map_or(0, |a| a.ranks.unwrap_or(a.pods.len()))
    }

    /// The pods of `attempt` that are stored.
    pub fn pods(&self, attempt: u32) -> impl Iterator<Item = &str> + '_ {
        self.attempts
            .get(&attempt)
            .into_iter()
            .flat_map(|a| a.pods.keys().map(String::as_str))
    }

    /// The series of `metric` from `pod`, while it is kept.
    pub fn series(&self, attempt: u32, pod: &str, metric: &str) -> Option<&Series> {
        match self.track(attempt, pod, metric)? {
            Track::Full(s) => Some(s),
            Track::Latest(_) => None,
        }
    }

    /// The latest value of `metric` from `pod`, even when its series was let go.
    pub fn latest(&self, attempt: u32, pod: &str, metric: &str) -> Option<f64> {
        self.track(attempt, pod, metric)?.latest()
    }

    pub fn band(&self, attempt: u32, metric: &str) -> Option<&Band> {
        let a = self.attempts.get(&attempt)?;
        a.bands.get(a.names.iter().position(|n| n == metric)?)
    }

    /// Bytes held, as counted against the budget.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    pub fn budget(&self) -> usize {
        self.budget
    }

    fn track(&self, attempt: u32, pod: &str, metric: &str) -> Option<&Track> {
        let a = self.attempts.get(&attempt)?;
        let id = a.names.iter().position(|n| n == metric)?;
        a.pods.get(pod)?.tracks.get(id)?.as_ref()
    }

    fn recount_within_budget(&mut self) {
        self.bytes = self.recount();
        if self.bytes > self.budget {
            self.enforce();
        }
    }

    fn recount(&self) -> usize {
        self.attempts.values().map(Attempt::bytes).sum()
    }
}

/// Moves a loss to the front (`loss` itself if there is one, else the first loss: `lm loss`,
/// `train_loss`; never a loss scale), the others keeping their order: the metric a person looks
/// at first.
pub fn loss_first<T: AsRef<str>>(names: &mut [T]) {
    let first = names
        .iter()
        .position(|n| n.as_ref().eq_ignore_ascii_case("loss"))
        .or_else(|| {
            names
                .iter()
                .position(|n| crate::metrics::alerts::is_loss(n.as_ref()))
        });
    if let Some(i) = first {
        names[..=i].rotate_right(1);
    }
}

#[cfg(test)]
mod tests;
