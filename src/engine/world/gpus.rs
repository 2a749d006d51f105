//! What the GPUs are doing, as the DCGM exporters last said (`k8s::gpus`): each node's GPUs
//! with the pods they serve, or why that cannot be read (said once, as a notice, and `n/a` in
//! the panes), and each training pod's GPU utilisation and memory over time for the metrics
//! pane. Those series are kept here alone, from this engine's readings: they are not in the
//! saved logs, and a restart starts them afresh.

use std::collections::BTreeMap;

use crate::dcgm::Gpu;
use crate::engine::notice::Notice;
use crate::k8s::gpus::{GpuRead, NodeGpus, Reading, Unavailable};
use crate::metrics::series::Series;
use crate::vocabulary::{Kind, Severity};

/// The metrics pane's names for a pod's GPU series, after the training's own.
pub const UTIL_SERIES: &str = "GPU util (%)";
pub const MEMORY_SERIES: &str = "GPU memory (GiB)";
pub const SERIES: [&str; 2] = [UTIL_SERIES, MEMORY_SERIES];
/// Pods whose series are kept (the least recently read goes first).
const PODS_KEPT: usize = 64;
/// Points kept of a series: its shape in this many min/max buckets.
const BUCKETS: usize = 256;

/// The GPUs as last read, or why not.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum GpuState {
    /// Not read (nothing needs them, or not yet).
    #[default]
    Unknown,
    Unavailable(Unavailable),
    Known(Reading),
}

/// A pod's GPUs over time: the mean utilisation of its GPUs (percent) and their memory used
/// together (GiB), by the reading's time (seconds since the epoch).
#[derive(Debug, Clone, Default)]
pub struct PodSeries {
    pub util: Series,
    pub memory: Series,
    last: i64,
}

impl PodSeries {
    pub fn of(&self, name: &str) -> Option<&Series> {
        match name {
            UTIL_SERIES => Some(&self.util),
            MEMORY_SERIES => Some(&self.memory),
            _ => None,
        }
    }
}

#[derive(Debug, Default)]
pub struct Gpus {
    pub state: GpuState,
    /// Each training pod's series, by pod name.
    pub series: BTreeMap<String, PodSeries>,
    /// Each pod's GPUs together, by (namespace, pod), made once a reading: the panes ask for
    /// every pod each frame.
    by_pod: BTreeMap<(String, String), PodGpus>,
}

/// One pod's GPUs together, for a pane: mean busy percent, memory used and total (MiB), power.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PodGpus {
    pub count: usize,
    pub busy_percent: Option<f64>,
    pub used_mib: Option<f64>,
    pub total_mib: Option<f64>,
    pub power_w: Option<f64>,
}

impl Gpus {
    /// Folds a round of the GPU worker in: whether anything shown changed, and what is told
    /// (that the GPUs cannot be read, once per reason; that they can again).
    pub fn apply(
        &mut self,
        read: GpuRead,
        is_training: impl Fn(&str, &str) -> bool,
    ) -> (bool, Option<Notice>) {
        let before = std::mem::take(&mut self.state);
        let (state, told) = match read {
            GpuRead::Read(reading) => {
                self.by_pod = index(&reading);
                self.record(&reading, is_training);
                let told = matches!(before, GpuState::Unavailable(_)).then(|| {
                    Notice::new(
                        Kind::GpuMetrics,
                        Severity::Info,
                        "gpu-metrics",
                        "GPU metrics are read again",
                    )
                });
                (GpuState::Known(reading), told)
            }
            GpuRead::Unavailable(why) => {
                let told = match &before {
                    GpuState::Unavailable(was) if *was == why => None,
                    _ => {
                        // warn: gantry.log's default level, so the one line is there.
                        tracing::warn!("{why}");
                        Some(Notice::new(
                            Kind::GpuMetrics,
                            Severity::Warning,
                            "gpu-metrics",
                            why.to_string(),
                        ))
                    }
                };
                (GpuState::Unavailable(why), told)
            }
            GpuRead::Stopped => (GpuState::Unknown, None),
        };
        if !matches!(state, GpuState::Known(_)) {
            self.by_pod.clear();
        }
        let changed = state != before || matches!(state, GpuState::Known(_));
        self.state = state;
        (changed, told)
    }

    /// The GPUs serving `namespace`/`pod`, with their nodes.
    pub fn of_pod<'a>(
        &'a self,
        namespace: &'a str,
        pod: &'a str,
    ) -> impl Iterator<Item = (&'a NodeGpus, &'a Gpu)> + 'a {
        let reading = match &self.state {
            GpuState::Known(r) => Some(r),
            _ => None,
        };
        reading
            .into_iter()
            .flat_map(|r| r.gpus())
            .filter(move |(_, g)| g.serves(namespace, pod))
    }

    /// The pod's GPUs together, if any was read.
    pub fn pod_summary(&self, namespace: &str, pod: &str) -> Option<PodGpus> {
        // An exporter that names no namespace (`pod_name` alone) is taken at its word.
        let get = |ns: &str| self.by_pod.get(&(ns.to_string(), pod.to_string())).copied();
        get(namespace).or_else(|| get(""))
    }

    /// `n/a` when the GPUs cannot be read, for the panes.
    pub fn unavailable(&self) -> bool {
        matches!(self.state, GpuState::Unavailable(_))
    }

    /// The series names the pods of an attempt have (empty when none was read).
    pub fn series_names<'a>(
        &self,
        pods: impl IntoIterator<Item = &'a str>,
    ) -> &'static [&'static str] {
        if pods.into_iter().any(|p| self.series.contains_key(p)) {
            &SERIES
        } else {
            &[]
        }
    }

    fn record(&mut self, reading: &Reading, is_training: impl Fn(&str, &str) -> bool) {
        let at = reading.at.as_second();
        let mut pods: BTreeMap<&str, Vec<&Gpu>> = BTreeMap::new();
        for (_, gpu) in reading.gpus() {
            for pod in gpu
                .pods
                .iter()
                .filter(|p| is_training(&p.namespace, &p.pod))
            {
                pods.entry(pod.pod.as_str()).or_default().push(gpu);
            }
        }
        for (pod, gpus) in pods {
            let Some(summary) = summarise(&gpus) else {
                continue;
            };
            let series = self
                .series
                .entry(pod.to_string())
                .or_insert_with(|| PodSeries {
                    util: Series::new(BUCKETS),
                    memory: Series::new(BUCKETS),
                    last: at,
                });
            if let Some(busy) = summary.busy_percent {
                series.util.push(at as f64, busy);
            }
            if let Some(used) = summary.used_mib {
                series.memory.push(at as f64, used / 1024.0);
            }
            series.last = at;
        }
        while self.series.len() > PODS_KEPT {
            let oldest = self
                .series
                .iter()
                .min_by_key(|(_, s)| s.last)
                .map(|(name, _)| name.clone());
            match oldest {
                Some(name) => self.series.remove(&name),
                None => break,
            };
        }
    }
}

/// Each pod's GPUs of a reading together.
fn index(reading: &Reading) -> BTreeMap<(String, String), PodGpus> {
    let mut pods: BTreeMap<(String, String), Vec<&Gpu>> = BTreeMap::new();
    for (_, gpu) in reading.gpus() {
        for pod in &gpu.pods {
            let key = (pod.namespace.clone(), pod.pod.clone());
            pods.entry(key).or_default().push(gpu);
        }
    }
    pods.into_iter()
        .filter_map(|(key, gpus)| Some((key, summarise(&gpus)?)))
        .collect()
}

fn summarise(gpus: &[&Gpu]) -> Option<PodGpus> {
    if gpus.is_empty() {
        return None;
    }
    let sum = |f: &dyn Fn(&Gpu) -> Option<f64>| {
        let values: Vec<f64> = gpus.iter().filter_map(|g| f(g)).collect();
        (!values.is_empty()).then(|| values.iter().sum::<f64>())
    };
    let busy: Vec<f64> = gpus
        .iter()
        .filter_map(|g| g.activity().map(|a| a.percent))
        .collect();
    Some(PodGpus {
        count: gpus.len(),
        busy_percent: (!busy.is_empty()).then(|| busy.iter().sum::<f64>() / busy.len() as f64),
        used_mib: sum(&|g| g.fb_used_mib),
        total_mib: sum(&|g| g.memory_total_mib()),
        power_w: sum(&|g| g.power_w),
    })
}

#[cfg(test)]
#[path = "gpus_tests.rs"]
mod tests;
