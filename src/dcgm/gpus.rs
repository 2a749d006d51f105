//! Each GPU of one exporter's text, with the pods it is allocated to: the series of a GPU (or
//! MIG instance) gathered by its index, UUID and instance, whatever their order or label sets.

use std::collections::BTreeMap;

use super::DcgmError;
use super::exposition::{Sample, samples};
use super::fields::{self, Field, is_data};

/// A MIG instance of a GPU (its `UUID` is then the parent GPU's).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Mig {
    pub profile: String,
    pub instance: String,
}

/// A pod a GPU is allocated to, as the exporter's pod resources say.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PodRef {
    pub namespace: String,
    pub pod: String,
    pub container: String,
}

/// One GPU or MIG instance as its exporter last said. A figure is None where the exporter gave
/// none (a field the GPU cannot give, a blank or non-finite value).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Gpu {
    /// Its index on the node (`gpu`).
    pub index: u32,
    pub uuid: String,
    pub mig: Option<Mig>,
    /// DCGM's name for it (`NVIDIA L4`): a description, not a price key.
    pub model: String,
    /// The pods it is allocated to; empty: none the exporter knows of (unallocated, or
    /// allocated in a way it does not map, such as DRA on older GPU Operators).
    pub pods: Vec<PodRef>,
    pub util_percent: Option<f64>,
    pub gr_engine_active: Option<f64>,
    pub sm_active: Option<f64>,
    pub fb_used_mib: Option<f64>,
    pub fb_free_mib: Option<f64>,
    pub fb_total_mib: Option<f64>,
    pub fb_reserved_mib: Option<f64>,
    pub power_w: Option<f64>,
    pub power_limit_w: Option<f64>,
    pub temp_c: Option<f64>,
}

/// Which of the GPU's counters a busy figure comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// `DCGM_FI_PROF_GR_ENGINE_ACTIVE`: the one that reads true on MIG and where `GPU_UTIL`
    /// reads 0 on a busy GPU (GKE's H100s in the recorded sample).
    GrEngineActive,
    SmActive,
    GpuUtil,
}

impl Signal {
    pub fn name(self) -> &'static str {
        match self {
            Signal::GrEngineActive => "gr-engine-active",
            Signal::SmActive => "sm-active",
            Signal::GpuUtil => "gpu-util",
        }
    }
}

/// How busy a GPU is, in percent, and by which counter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Activity {
    pub percent: f64,
    pub signal: Signal,
}

/// Past this share of its enforced power limit a GPU is working, whatever its activity
/// counters say (they read 0 when DCGM's profiling module is not watching: dcgm-exporter issue
/// #662).
const WORKING_POWER_SHARE: f64 = 0.5;

impl Gpu {
    /// The framebuffer's size: `FB_TOTAL` where the exporter gives it (GKE's), else used, free
    /// and reserved together.
    pub fn memory_total_mib(&self) -> Option<f64> {
        self.fb_total_mib.or_else(|| {
            let (used, free) = (self.fb_used_mib?, self.fb_free_mib?);
            Some(used + free + self.fb_reserved_mib.unwrap_or(0.0))
        })
    }

    /// The busy figure shown and judged: the graphics engine's activity where the exporter has
    /// it, else the SMs', else `GPU_UTIL`.
    pub fn activity(&self) -> Option<Activity> {
        let ratio = |r: Option<f64>, signal| {
            r.map(|r| Activity {
                percent: (r * 100.0).clamp(0.0, 100.0),
                signal,
            })
        };
        ratio(self.gr_engine_active, Signal::GrEngineActive)
            .or_else(|| ratio(self.sm_active, Signal::SmActive))
            .or_else(|| {
                self.util_percent.map(|p| Activity {
                    percent: p.clamp(0.0, 100.0),
                    signal: Signal::GpuUtil,
                })
            })
    }

    /// Whether it does nothing by every counter it has (each below `below` percent) and draws
    /// no working power where its limit is known: its activity then. None while it works, or
    /// when it has no counter to tell.
    pub fn idle(&self, below: f64) -> Option<Activity> {
        let activity = self.activity()?;
        let signals = [
            self.gr_engine_active.map(|r| r * 100.0),
            self.sm_active.map(|r| r * 100.0),
            self.util_percent,
        ];
        if signals.into_iter().flatten().any(|p| p >= below) {
            return None;
        }
        if let (Some(power), Some(limit)) = (self.power_w, self.power_limit_w)
            && limit > 0.0
            && power >= limit * WORKING_POWER_SHARE
        {
            return None;
        }
        Some(activity)
    }

    /// Whether it is allocated to `namespace`/`pod`.
    pub fn serves(&self, namespace: &str, pod: &str) -> bool {
        self.pods
            .iter()
            .any(|p| p.pod == pod && (p.namespace == namespace || p.namespace.is_empty()))
    }
}

/// One field's values for a GPU: the device's own series, and the highest of the per-pod
/// copies a shared GPU's series come in.
#[derive(Debug, Default, Clone, Copy)]
struct Value {
    device: Option<f64>,
    per_pod: Option<f64>,
}

impl Value {
    fn add(&mut self, value: f64, of_a_pod: bool) {
        let slot = if of_a_pod {
            &mut self.per_pod
        } else {
            &mut self.device
        };
        *slot = Some(slot.map_or(value, |v: f64| v.max(value)));
    }

    fn get(self) -> Option<f64> {
        self.device.or(self.per_pod)
    }
}

#[derive(Default)]
struct Gathered {
    gpu: Gpu,
    values: BTreeMap<u8, Value>,
}

/// Every GPU and MIG instance of one exporter's `/metrics` text, by index then instance.
pub fn read(text: &str) -> Result<Vec<Gpu>, DcgmError> {
    let mut gathered: BTreeMap<(u32, String, String), Gathered> = BTreeMap::new();
    for sample in samples(text)? {
        // Any of DCGM's series tells of its GPU and pods; the kept fields give its figures.
        let field = Field::of(&sample.name);
        if field.is_none() && !sample.name.starts_with("DCGM_") && !sample.name.starts_with("dcgm_")
        {
            continue;
        }
        // Series of other entities (NVSwitches, CPUs) have no `gpu` label.
        let Some(index) = label(&sample, fields::GPU).and_then(|g| g.parse::<u32>().ok()) else {
            continue;
        };
        let uuid = label(&sample, fields::UUID).unwrap_or_default().to_string();
        let mig = match (
            label(&sample, fields::MIG_PROFILE),
            label(&sample, fields::MIG_INSTANCE),
        ) {
            (profile, Some(instance)) => Some(Mig {
                profile: profile.unwrap_or_default().to_string(),
                instance: instance.to_string(),
            }),
            _ => None,
        };
        let key = (
            index,
            uuid.clone(),
            mig.as_ref().map(|m| m.instance.clone()).unwrap_or_default(),
        );
        let entry = gathered.entry(key).or_insert_with(|| Gathered {
            gpu: Gpu {
                index,
                uuid,
                mig,
                model: label(&sample, fields::MODEL)
                    .unwrap_or_default()
                    .to_string(),
                ..Gpu::default()
            },
            values: BTreeMap::new(),
        });
        let pod = pod_of(&sample);
        let of_a_pod = pod.is_some();
        if let Some(pod) = pod
            && !entry.gpu.pods.contains(&pod)
        {
            entry.gpu.pods.push(pod);
        }
        if let Some(field) = field
            && is_data(sample.value)
        {
            entry
                .values
                .entry(field as u8)
                .or_default()
                .add(sample.value, of_a_pod);
        }
    }
    let mut gpus: Vec<Gpu> = gathered
        .into_values()
        .map(|Gathered { mut gpu, values }| {
            let get = |f: Field| values.get(&(f as u8)).and_then(|v| v.get());
            gpu.util_percent = get(Field::GpuUtil);
            gpu.gr_engine_active = get(Field::GrEngineActive);
            gpu.sm_active = get(Field::SmActive);
            gpu.fb_used_mib = get(Field::FbUsed);
            gpu.fb_free_mib = get(Field::FbFree);
            gpu.fb_total_mib = get(Field::FbTotal);
            gpu.fb_reserved_mib = get(Field::FbReserved);
            gpu.power_w = get(Field::Power);
            gpu.power_limit_w = get(Field::PowerLimit);
            gpu.temp_c = get(Field::Temperature);
            gpu.pods.sort();
            gpu
        })
        .collect();
    gpus.sort_by(|a, b| {
        let instance = |g: &Gpu| {
            g.mig
                .as_ref()
                .and_then(|m| m.instance.parse::<u32>().ok())
                .unwrap_or(0)
        };
        (a.index, instance(a)).cmp(&(b.index, instance(b)))
    });
    Ok(gpus)
}

/// The first of `names` the sample carries with a value (an empty value is no value: exporters
/// up to 3.4.0 print `pod=""` on a GPU no pod holds).
fn label<'a>(sample: &'a Sample, names: &[&str]) -> Option<&'a str> {
    names
        .iter()
        .find_map(|n| sample.label(n))
        .filter(|v| !v.is_empty())
}

fn pod_of(sample: &Sample) -> Option<PodRef> {
    Some(PodRef {
        pod: label(sample, fields::POD)?.to_string(),
        namespace: label(sample, fields::NAMESPACE)
            .unwrap_or_default()
            .to_string(),
        container: label(sample, fields::CONTAINER)
            .unwrap_or_default()
            .to_string(),
    })
}
