//! The samples of one pod, pushed into its attempt's bands and its own series: the attempt and
//! the pod looked up once per batch of lines, the metric by where the one before it was, and
//! only what grew counted against the budget.

use std::mem::size_of;

use super::{Band, Pod, Track};
use crate::metrics::alerts::{Alert, check};
use crate::metrics::parse::MAX_NAME;
use crate::metrics::pieces::Sample;
use crate::metrics::series::Series;
use crate::metrics::store::MAX_METRICS;

/// The samples of one pod of one attempt, while [`Store::with_pod`] runs.
pub struct PodSamples<'s> {
    pub(super) names: &'s mut Vec<String>,
    pub(super) bands: &'s mut Vec<Band>,
    /// The pod's series, unless the pod is not stored at all.
    pub(super) tracks: Option<&'s mut Pod>,
    pub(super) pod: &'s str,
    pub(super) keeps: bool,
    pub(super) ranks: usize,
    pub(super) buckets: usize,
    /// Bytes grown so far.
    pub(super) grown: isize,
    pub(super) by_parser_id: ParserIds,
}

/// The store's id of each parser id seen in a batch, for one generation of the parser's names.
#[derive(Debug, Default)]
pub(super) struct ParserIds {
    generation: Option<u64>,
    ids: Vec<Option<usize>>,
}

impl ParserIds {
    /// Keeps the ids of names `generation`, forgetting those of another.
    fn renew(&mut self, generation: u64) {
        if self.generation != Some(generation) {
            self.generation = Some(generation);
            self.ids.clear();
        }
    }

    fn get(&self, key: u32) -> Option<usize> {
        self.ids.get(key as usize).copied().flatten()
    }

    fn set(&mut self, key: u32, id: usize) {
        let key = key as usize;
        if self.ids.len() <= key {
            self.ids.resize(key + 1, None);
        }
        self.ids[key] = Some(id);
    }
}

impl PodSamples<'_> {
    /// Every metric of one sample; the alerts it raises. The parser's id for a name leads to
    /// the store's without comparing names again (a batch's lines share their names).
    pub fn push_sample(&mut self, sample: &Sample<'_>) -> Vec<Alert> {
        let mut alerts = Vec::new();
        self.by_parser_id.renew(sample.parsed.names_generation());
        let mut hint = 0;
        for (key, metric, value) in sample.parsed.metrics_by_id() {
            let known = self.by_parser_id.get(key);
            let Some(id) = known.or_else(|| self.id(metric, hint)) else {
                continue;
            };
            if known.is_none() {
                self.by_parser_id.set(key, id);
            }
            hint = id + 1;
            self.push_value(id, metric, sample.x, value, |a| alerts.push(a));
        }
        alerts
    }

    /// Values at one `x`, the metric found first where the one before it was followed.
    pub(super) fn push<'m>(
        &mut self,
        x: f64,
        values: impl IntoIterator<Item = (&'m str, f64)>,
        mut alert: impl FnMut(Alert),
    ) {
        let mut hint = 0;
        for (metric, value) in values {
            if let Some(id) = self.id(metric, hint) {
                hint = id + 1;
                self.push_value(id, metric, x, value, &mut alert);
            }
        }
    }

    /// The store's id of `metric`, looked for first at `hint`; a new metric is added while
    /// there is room. `None` for a name too long or a metric past the last kept.
    fn id(&mut self, metric: &str, hint: usize) -> Option<usize> {
        if metric.len() > MAX_NAME {
            return None;
        }
        if self.names.get(hint).is_some_and(|n| n == metric) {
            Some(hint)
        } else if let Some(id) = self.names.iter().position(|n| n == metric) {
            Some(id)
        } else if self.names.len() < MAX_METRICS {
            let band = Band::new(self.buckets);
            self.grown += (metric.len() + size_of::<String>() + band.bytes()) as isize;
            self.names.push(metric.to_string());
            self.bands.push(band);
            Some(self.names.len() - 1)
        } else {
            None
        }
    }

    /// One value of metric `id` into its band and the pod's series.
    fn push_value(
        &mut self,
        id: usize,
        metric: &str,
        x: f64,
        value: f64,
        mut alert: impl FnMut(Alert),
    ) {
        self.grown += self.bands[id].push(x, value, self.ranks) as isize;
        let previous = match self.tracks.as_deref_mut() {
            Some(p) => {
                let (previous, delta) = push_track(p, id, x, value, self.keeps, self.buckets);
                self.grown += delta;
                previous
            }
            _ => None,
        };
        if let Some(kind) = check(metric, previous, value) {
            alert(Alert {
                metric: metric.to_string(),
                pod: self.pod.to_string(),
                step: x,
                kind,
            });
        }
    }
}

/// Pushes one value into `pod`'s track of metric `id`; returns the value before it and how many
/// bytes the pod grew by.
fn push_track(
    pod: &mut Pod,
    id: usize,
    x: f64,
    value: f64,
    keeps: bool,
    buckets: usize,
) -> (Option<f64>, isize) {
    let mut grown = 0;
    if pod.tracks.len() <= id {
        let before = pod.tracks.capacity();
        pod.tracks.resize_with(id + 1, || None);
        grown += ((pod.tracks.capacity() - before) * size_of::<Option<Track>>()) as isize;
    }
    let slot = &mut pod.tracks[id];
    let previous = slot.as_ref().and_then(Track::latest);
    match slot {
        Some(Track::Full(series)) if keeps => grown += series.push(x, value) as isize,
        _ => {
            let before = slot.as_ref().map_or(0, Track::bytes);
            *slot = Some(if keeps {
                let mut series = Series::new(buckets);
                series.push(x, value);
                Track::Full(Box::new(series))
            } else {
                Track::Latest(value)
            });
            let after = slot.as_ref().map_or(0, Track::bytes);
            grown += after as isize - before as isize;
        }
    }
    (previous, grown)
}
