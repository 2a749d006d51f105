//! The training's own numbers, read out of the log lines the model's tail brings: each pod's
//! raw output through a [`MetricStream`] into one [`Store`] within its budget, each attempt's
//! progress and time left as its pods report them, and alerts told once per attempt and metric.
//! The attempts seen before stay in the store (older ones let go first when it is full), so a
//! chart can show the last attempt behind the newest.

use std::collections::BTreeMap;

use crate::k8s::logs::LogLine;
use crate::metrics::alerts::{Alert, AlertKind};
use crate::metrics::eta::Eta;
use crate::metrics::pieces::{MetricStream, Sample};
use crate::metrics::store::Store;
use crate::metrics::{LineParser, Progress};

/// Ranks whose series are kept one by one when the store's budget is tight; beyond them, the
/// aggregate across ranks.
pub const RANKS_KEPT: usize = 8;
/// With more ranks than this, only the kept ranks' series are held from the start: a chart
/// draws the band across them anyway, and thousands of series would fill the budget for
/// nothing.
pub const MANY_RANKS: usize = 64;

/// What the x axis of an attempt's metrics counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum Axis {
    /// The updates in the log, when the lines say neither step nor epoch.
    #[default]
    Line,
    Epoch,
    Step,
}

impl Axis {
    pub fn name(self) -> &'static str {
        match self {
            Axis::Line => "line",
            Axis::Epoch => "epoch",
            Axis::Step => "step",
        }
    }
}

/// How far an attempt has got, as its pods say.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct AttemptProgress {
    pub progress: Progress,
    pub fraction: Option<f64>,
    /// Seconds left at the recent rate, as of the newest line.
    pub remaining: Option<f64>,
    /// The epoch a bar is in when no line says how many there are (Lightning's `Epoch 3:`):
    /// the step counter, the share and the time left are then the epoch's.
    pub epoch: Option<f64>,
}

#[derive(Debug, Default)]
struct PodTraining {
    /// Let go when the pod's stream ends. On the heap: a stream is several hundred bytes and a
    /// Job of thousands of pods keeps every pod's entry after its stream is gone.
    stream: Option<Box<MetricStream>>,
    progress: Progress,
    /// The epoch its latest progress was in, as far as the stream knows.
    epoch: Option<f64>,
    /// When its progress last changed, in the order of all pods' updates.
    updated: u64,
    ended: bool,
}

#[derive(Debug, Default)]
pub struct AttemptTraining {
    pub axis: Axis,
    pub progress: Option<AttemptProgress>,
    /// The rate of the attempt's progress, from every pod's reports.
    eta: Eta,
    /// (metric, non-finite?) already told for this attempt.
    told: Vec<(String, bool)>,
}

#[derive(Debug, Default)]
pub struct Training {
    pub store: Store,
    /// Scratch space for reading a line, shared by every pod's stream.
    parser: LineParser,
    /// The attempt whose pods' streams are open.
    followed: Option<u32>,
    pods: BTreeMap<String, PodTraining>,
    attempts: BTreeMap<u32, AttemptTraining>,
    updates: u64,
    /// The attempt before the followed one, to be read from its saved logs (the store did not
    /// see it live): taken once by the engine.
    wanted: Option<u32>,
}

impl Training {
    /// The tail moved on to attempt `number`: the streams of the one before end here.
    pub fn follow(&mut self, number: u32) {
        if self.followed == Some(number) {
            return;
        }
        self.finish_all();
        self.followed = Some(number);
        self.attempts.entry(number).or_default();
        self.wanted = (number > 1 && self.store.metrics(number - 1).is_empty()).then(|| number - 1);
    }

    /// The attempt whose saved logs should be read for comparison, once.
    pub fn take_wanted(&mut self) -> Option<u32> {
        self.wanted.take()
    }

    /// An earlier attempt's metrics, read from its saved logs: taken in unless the store has
    /// them already.
    pub fn loaded(&mut self, number: u32, from: Store) -> bool {
        if !self.store.metrics(number).is_empty() {
            return false;
        }
        self.store.adopt(number, from)
    }

    pub fn attempt(&self, number: u32) -> Option<&AttemptTraining> {
        self.attempts.get(&number)
    }

    /// The newest attempt before `number` with metrics in the store.
    pub fn previous(&self, number: u32) -> Option<u32> {
        self.store
            .attempts()
            .filter(|a| *a < number && !self.store.metrics(*a).is_empty())
            .max()
    }

    /// Lines of `pod` of the followed attempt; the alerts they raise that were not told yet.
    pub fn ingest(&mut self, pod: &str, lines: &[LogLine]) -> Vec<Alert> {
        let Some(number) = self.followed else {
            return Vec::new();
        };
        if !self.pods.contains_key(pod) {
            self.first_lines_of(pod, number);
        }
        let Self {
            store,
            parser,
            pods,
            attempts,
            updates,
            ..
        } = self;
        let (Some(p), Some(a)) = (pods.get_mut(pod), attempts.get_mut(&number)) else {
            return Vec::new();
        };
        let mut alerts = Vec::new();
        // Whether the batch showed progress, and the epoch its last progress was in: the pod's
        // progress is set once, after the batch, from its stream (which keeps the latest).
        let mut progressed = false;
        let mut last_epoch = None;
        store.with_pod(number, pod, |samples| {
            for line in lines {
                let mut each = |sample: &Sample<'_>| {
                    // A line placed at the last step a bar counted is on the step axis too.
                    let axis = if sample.parsed.step.is_some() || sample.progress.step.is_some() {
                        Axis::Step
                    } else if sample.epoch.is_some() {
                        Axis::Epoch
                    } else {
                        Axis::Line
                    };
                    a.axis = a.axis.max(axis);
                    if !sample.progress.is_empty() {
                        progressed = true;
                        // The epoch a bar itself names (`Epoch 3: 45%|…`), not a fractional one
                        // from the lines between its updates (Hugging Face's bar counts the run).
                        last_epoch = sample
                            .parsed
                            .epoch
                            .filter(|_| !sample.parsed.progress.is_empty());
                        if let (Some(ts), Some(f)) = (line.ts, sample.progress.fraction()) {
                            a.eta.observe(ts as f64 / 1e9, f);
                        }
                    }
                    alerts.extend(samples.push_sample(sample));
                };
                let stream = p.stream.get_or_insert_with(Box::default);
                if line.continues {
                    stream.push(parser, &line.bytes, &mut each);
                } else {
                    stream.push_line(parser, &line.bytes, &mut each);
                }
            }
        });
        if progressed && let Some(stream) = &p.stream {
            p.progress = stream.progress();
            p.epoch = last_epoch;
            *updates += 1;
            p.updated = *updates;
        }
        // The attempt's progress is as the pod that reported progress last says. Ranks of one
        // run move in step; a pod that failed stops where it was, and the one that replaces it
        // starts again, so the newest word is the true one.
        if p.updated == *updates && !p.progress.is_empty() {
            a.progress = Some(AttemptProgress {
                progress: p.progress,
                fraction: p.progress.fraction(),
                remaining: a.eta.remaining(),
                epoch: p.epoch.filter(|_| p.progress.epoch.is_none()),
            });
        }
        self.untold(number, alerts)
    }

    /// The first lines of `pod`: its ranks kept on screen, as many as there is room for.
    fn first_lines_of(&mut self, pod: &str, number: u32) {
        self.pods.insert(pod.to_string(), PodTraining::default());
        if self.pods.keys().take(RANKS_KEPT).any(|k| k == pod) {
            let kept: Vec<&str> = self
                .pods
                .keys()
                .take(RANKS_KEPT)
                .map(String::as_str)
                .collect();
            self.store.set_on_screen(number, &kept);
        }
        if self.pods.len() > MANY_RANKS {
            self.store.keep_on_screen_only(number, self.pods.len());
        }
    }

    /// `pod`'s stream is over: an update its container left without a newline is read too.
    pub fn ended(&mut self, pod: &str) -> Vec<Alert> {
        let Some(number) = self.followed else {
            return Vec::new();
        };
        let Some(p) = self.pods.get_mut(pod) else {
            return Vec::new();
        };
        let mut alerts = Vec::new();
        let store = &mut self.store;
        if let Some(mut stream) = p.stream.take() {
            stream.finish(&mut self.parser, |sample| {
                alerts.extend(store.push_sample(number, pod, sample))
            });
        }
        // An ended pod still counts for how far the attempt got.
        p.ended = true;
        if self.pods.values().all(|p| p.ended) {
            self.store.flush(number);
        }
        self.untold(number, alerts)
    }

    fn finish_all(&mut self) {
        let pods = std::mem::take(&mut self.pods);
        if let Some(number) = self.followed {
            for (pod, mut p) in pods {
                let store = &mut self.store;
                if let Some(stream) = p.stream.as_mut() {
                    stream.finish(&mut self.parser, |sample| {
                        store.push_sample(number, &pod, sample);
                    });
                }
            }
            self.store.flush(number);
        }
    }

    /// Alerts not told yet for this attempt: one per metric and kind, whichever rank first.
    fn untold(&mut self, number: u32, alerts: Vec<Alert>) -> Vec<Alert> {
        let Some(a) = self.attempts.get_mut(&number) else {
            return Vec::new();
        };
        alerts
            .into_iter()
            .filter(|alert| {
                let key = (
                    alert.metric.clone(),
                    matches!(alert.kind, AlertKind::NonFinite { .. }),
                );
                let new = !a.told.contains(&key);
                if new {
                    a.told.push(key);
                }
                new
            })
            .collect()
    }
}
