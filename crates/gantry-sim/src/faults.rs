//! Faults the simulated cloud can inject, from `--fault NAME[=ARG]` or at run time from tests.
//!
//! Fault periods are wall-clock seconds (fractions allowed): they describe the network and
//! servers, not the simulated workload, so `--time-scale` does not touch them. `reconcile` is one
//! of them: its RECONCILING period lasts that many real seconds whatever the time scale.

use std::str::FromStr;
use std::sync::RwLock;
use std::time::Duration;

#[derive(Debug, Clone, PartialEq)]
pub enum Fault {
    /// Every watch is cut after this long.
    WatchDrop(Duration),
    /// Every following log stream is cut mid-line after this long.
    LogCut(Duration),
    /// Watches answer 410 Gone (resourceVersion too old).
    WatchGone,
    /// This percentage of requests to either API answers 429 Too Many Requests.
    Http429(u8),
    /// This percentage of requests to either API answers 503 Service Unavailable.
    Http503(u8),
    /// Every cluster's API server goes down every this long, and comes back on the same port.
    Restart(Duration),
    /// The token rotates every this long; the old one is refused from then on.
    TokenExpiry(Duration),
    /// Every response is delayed this long.
    Slow(Duration),
    /// Cluster creation fails in GKE's operation with a quota error.
    GkeQuota,
    /// Cluster creation's operation ends in ERROR with this message.
    GkeCreateError(String),
    /// Every GKE request is refused with 403 PERMISSION_DENIED.
    GkePermissionDenied,
    /// A cluster that becomes RUNNING stays so this long, then goes through one RECONCILING
    /// period this long (an UPGRADE_MASTER operation, as a GKE auto-upgrade), then is RUNNING
    /// again. Its Kubernetes API server stays up throughout, as a regional control plane does.
    Reconcile(Duration),
    /// Every free-text field the simulated cloud serves (event messages, conditions, pod status
    /// and termination messages, GKE operation details and errors) carries escape and control
    /// sequences, bidirectional overrides and long strings, as a hostile workload could make it.
    HostileStrings,
    /// Clusters serve no `metrics.k8s.io` (no metrics-server).
    NoMetricsApi,
    /// GPU nodes run no DCGM exporter (a GKE cluster made before 1.32.1-gke.1357000 without
    /// `--monitoring=SYSTEM,DCGM`).
    NoDcgm,
    /// The project's GPU quota in all regions (Compute Engine's `GPUS_ALL_REGIONS`) is this
    /// many GPUs: a node pool create, resize or autoscaler scale-up past it fails as on GKE.
    GpuQuota(u32),
    /// The zones have room for only `room` nodes of the node pool named `pool` (exactly that
    /// name, in each cluster): a new node that would take the pool past `room`, counting its
    /// registered nodes and the instances booting for it, cannot be made
    /// (`ZONE_RESOURCE_POOL_EXHAUSTED`, the autoscaler's "GCE out of resources"). A node that
    /// goes gives its room back. `room` 0: no node of the pool can be made at all.
    Stockout { pool: String, room: u32 },
    /// Every `every`, Compute Engine reclaims one Spot or preemptible node that runs a Job's
    /// pod, `count` times in all (`gke::preemption`: the node shuts down gracefully, goes, and
    /// its instance group recreates it).
    Preempt { every: Duration, count: u64 },
}

/// The faults `--fault` takes, each as its name and the form of its argument: the one list
/// that `Fault::name`, parsing and `--fault`'s help and errors are made from.
macro_rules! fault_table {
    (
        $first:ident = $first_name:literal $(= $first_arg:literal)?
        $(, $konst:ident = $name:literal $(= $arg:literal)?)* $(,)?
    ) => {
        const $first: &str = $first_name;
        $(const $konst: &str = $name;)*
        /// Every fault as `--fault` takes it: `NAME` or `NAME=ARG`.
        pub const FAULT_FORMS: &[&str] = &[
            concat!($first_name $(, "=", $first_arg)?)
            $(, concat!($name $(, "=", $arg)?))*
        ];
        /// The same forms in one line, for `--fault`'s help and for errors.
        pub const FAULT_NAMES: &str =
            concat!($first_name $(, "=", $first_arg)? $(, ", ", $name $(, "=", $arg)?)*);
    };
}

fault_table! {
    WATCH_DROP = "watch-drop" = "SECS",
    LOG_CUT = "log-cut" = "SECS",
    WATCH_GONE = "watch-gone",
    HTTP_429 = "http-429" = "PERCENT",
    HTTP_503 = "http-503" = "PERCENT",
    RESTART = "restart" = "SECS",
    TOKEN_EXPIRY = "token-expiry" = "SECS",
    SLOW = "slow" = "MS",
    GKE_QUOTA = "gke-quota",
    GKE_CREATE_ERROR = "gke-create-error" = "MESSAGE",
    GKE_PERMISSION_DENIED = "gke-permission-denied",
    RECONCILE = "reconcile" = "SECS",
    HOSTILE_STRINGS = "hostile-strings",
    NO_METRICS_API = "no-metrics-api",
    NO_DCGM = "no-dcgm",
    GPU_QUOTA = "gpu-quota" = "GPUS",
    STOCKOUT = "stockout" = "POOL[:N]",
    PREEMPT = "preempt" = "SECS:COUNT",
}

impl Fault {
    /// The fault's name as `--fault` takes it, and as [`Faults::times_fired`] counts it.
    pub fn name(&self) -> &'static str {
        match self {
            Fault::WatchDrop(_) => WATCH_DROP,
            Fault::LogCut(_) => LOG_CUT,
            Fault::WatchGone => WATCH_GONE,
            Fault::Http429(_) => HTTP_429,
            Fault::Http503(_) => HTTP_503,
            Fault::Restart(_) => RESTART,
            Fault::TokenExpiry(_) => TOKEN_EXPIRY,
            Fault::Slow(_) => SLOW,
            Fault::GkeQuota => GKE_QUOTA,
            Fault::GkeCreateError(_) => GKE_CREATE_ERROR,
            Fault::GkePermissionDenied => GKE_PERMISSION_DENIED,
            Fault::Reconcile(_) => RECONCILE,
            Fault::HostileStrings => HOSTILE_STRINGS,
            Fault::NoMetricsApi => NO_METRICS_API,
            Fault::NoDcgm => NO_DCGM,
            Fault::GpuQuota(_) => GPU_QUOTA,
            Fault::Stockout { .. } => STOCKOUT,
            Fault::Preempt { .. } => PREEMPT,
        }
    }
}

#[derive(Debug, thiserror::Error, PartialEq)]
#[error("bad --fault '{given}': {why} (known faults: {FAULT_NAMES})")]
pub struct FaultParseError {
    given: String,
    why: String,
}

impl FromStr for Fault {
    type Err = FaultParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = |why: &str| FaultParseError {
            given: s.to_string(),
            why: why.to_string(),
        };
        let (name, arg) = match s.split_once('=') {
            Some((n, a)) => (n.trim(), Some(a.trim())),
            None => (s.trim(), None),
        };
        let secs = |arg: Option<&str>| -> Result<Duration, FaultParseError> {
            let a = arg.ok_or_else(|| err("needs a number of seconds, e.g. =5 or =0.5"))?;
            let v: f64 = a
                .parse()
                .map_err(|_| err("the argument is not a number of seconds"))?;
            if !(v.is_finite() && v > 0.0) {
                return Err(err("the number of seconds must be above zero"));
            }
            Ok(Duration::from_secs_f64(v))
        };
        let percent = |arg: Option<&str>| -> Result<u8, FaultParseError> {
            let a = arg.ok_or_else(|| err("needs a percentage, e.g. =10"))?;
            match a.trim_end_matches('%').parse::<u8>() {
                Ok(p) if p <= 100 => Ok(p),
                _ => Err(err("the percentage must be a whole number from 0 to 100")),
            }
        };
        let no_arg = |f: Fault| -> Result<Fault, FaultParseError> {
            match arg {
                None => Ok(f),
                Some(_) => Err(err("takes no argument")),
            }
        };
        match name {
            WATCH_DROP => Ok(Fault::WatchDrop(secs(arg)?)),
            LOG_CUT => Ok(Fault::LogCut(secs(arg)?)),
            WATCH_GONE => no_arg(Fault::WatchGone),
            HTTP_429 => Ok(Fault::Http429(percent(arg)?)),
            HTTP_503 => Ok(Fault::Http503(percent(arg)?)),
            RESTART => Ok(Fault::Restart(secs(arg)?)),
            TOKEN_EXPIRY => Ok(Fault::TokenExpiry(secs(arg)?)),
            SLOW => {
                let a = arg.ok_or_else(|| err("needs milliseconds, e.g. =200"))?;
                let ms: u64 = a
                    .parse()
                    .map_err(|_| err("the argument is not a whole number of milliseconds"))?;
                Ok(Fault::Slow(Duration::from_millis(ms)))
            }
            GKE_QUOTA => no_arg(Fault::GkeQuota),
            GKE_CREATE_ERROR => Ok(Fault::GkeCreateError(
                arg.filter(|a| !a.is_empty())
                    .unwrap_or("Simulated failure while creating the cluster")
                    .to_string(),
            )),
            GKE_PERMISSION_DENIED => no_arg(Fault::GkePermissionDenied),
            RECONCILE => Ok(Fault::Reconcile(secs(arg)?)),
            HOSTILE_STRINGS => no_arg(Fault::HostileStrings),
            NO_METRICS_API => no_arg(Fault::NoMetricsApi),
            NO_DCGM => no_arg(Fault::NoDcgm),
            GPU_QUOTA => {
                let a = arg.ok_or_else(|| err("needs a number of GPUs, e.g. =0 or =4"))?;
                let gpus = a
                    .parse()
                    .map_err(|_| err("the argument is not a whole number of GPUs"))?;
                Ok(Fault::GpuQuota(gpus))
            }
            STOCKOUT => {
                let example = "needs a node pool's name and, optionally, how many of its nodes \
                               can be made, e.g. =gpu-pool or =default-pool:1";
                let arg = arg.filter(|a| !a.is_empty()).ok_or_else(|| err(example))?;
                let (pool, room) = match arg.rsplit_once(':') {
                    None => (arg, 0),
                    Some((pool, room)) => {
                        let room = room.trim().parse().map_err(|_| {
                            err("the count after ':' must be a whole number of nodes, \
                                 e.g. =default-pool:1")
                        })?;
                        (pool.trim(), room)
                    }
                };
                if pool.is_empty() {
                    return Err(err(example));
                }
                Ok(Fault::Stockout {
                    pool: pool.to_string(),
                    room,
                })
            }
            PREEMPT => {
                let example = "needs seconds between reclaims and how many, e.g. =60:2";
                let (every, count) = arg
                    .and_then(|a| a.split_once(':'))
                    .ok_or_else(|| err(example))?;
                let count = count
                    .trim()
                    .parse()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or_else(|| {
                        err("the count of reclaims must be a whole number above zero")
                    })?;
                Ok(Fault::Preempt {
                    every: secs(Some(every.trim()))?,
                    count,
                })
            }
            _ => Err(err("unknown fault")),
        }
    }
}

/// The faults in force. Shared by every server of one simulated cloud; tests change it at run time.
#[derive(Debug, Default)]
pub struct Faults {
    active: RwLock<Vec<Fault>>,
    /// How many times each fault took effect, by its name (`watch-drop`): what a drill checks
    /// before it trusts that it drilled anything.
    fired: std::sync::Mutex<std::collections::HashMap<&'static str, u64>>,
}

impl Faults {
    pub fn new(initial: Vec<Fault>) -> Self {
        Self {
            active: RwLock::new(initial),
            fired: Default::default(),
        }
    }

    /// A fault took effect (a watch cut, a request refused, the server restarted…).
    pub fn fired(&self, name: &'static str) {
        *self
            .fired
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(name)
            .or_default() += 1;
    }

    /// Counts one more time the fault of this name took effect, unless it already did `limit`
    /// times; whether it counted (a fault that acts a set number of times claims each here).
    pub fn fire_within(&self, name: &'static str, limit: u64) -> bool {
        let mut fired = self.fired.lock().unwrap_or_else(|p| p.into_inner());
        let times = fired.entry(name).or_default();
        if *times >= limit {
            return false;
        }
        *times += 1;
        true
    }

    /// How many times the fault of this name took effect so far.
    pub fn times_fired(&self, name: &str) -> u64 {
        self.fired
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(name)
            .copied()
            .unwrap_or(0)
    }

    /// Adds a fault, replacing one of the same kind.
    pub fn set(&self, fault: Fault) {
        let mut active = self.active.write().unwrap_or_else(|p| p.into_inner());
        active.retain(|f| std::mem::discriminant(f) != std::mem::discriminant(&fault));
        active.push(fault);
    }

    /// Removes every fault.
    pub fn clear(&self) {
        self.active
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
    }

    fn find<T>(&self, pick: impl Fn(&Fault) -> Option<T>) -> Option<T> {
        self.active
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .find_map(pick)
    }

    pub fn watch_drop(&self) -> Option<Duration> {
        self.find(|f| match f {
            Fault::WatchDrop(d) => Some(*d),
            _ => None,
        })
    }
    pub fn log_cut(&self) -> Option<Duration> {
        self.find(|f| match f {
            Fault::LogCut(d) => Some(*d),
            _ => None,
        })
    }
    pub fn watch_gone(&self) -> bool {
        self.find(|f| matches!(f, Fault::WatchGone).then_some(()))
            .is_some()
    }
    pub fn http_429(&self) -> u8 {
        self.find(|f| match f {
            Fault::Http429(p) => Some(*p),
            _ => None,
        })
        .unwrap_or(0)
    }
    pub fn http_503(&self) -> u8 {
        self.find(|f| match f {
            Fault::Http503(p) => Some(*p),
            _ => None,
        })
        .unwrap_or(0)
    }
    pub fn restart(&self) -> Option<Duration> {
        self.find(|f| match f {
            Fault::Restart(d) => Some(*d),
            _ => None,
        })
    }
    pub fn token_expiry(&self) -> Option<Duration> {
        self.find(|f| match f {
            Fault::TokenExpiry(d) => Some(*d),
            _ => None,
        })
    }
    pub fn slow(&self) -> Option<Duration> {
        self.find(|f| match f {
            Fault::Slow(d) => Some(*d),
            _ => None,
        })
    }
    pub fn gke_quota(&self) -> bool {
        self.find(|f| matches!(f, Fault::GkeQuota).then_some(()))
            .is_some()
    }
    pub fn gke_create_error(&self) -> Option<String> {
        self.find(|f| match f {
            Fault::GkeCreateError(m) => Some(m.clone()),
            _ => None,
        })
    }
    pub fn no_metrics_api(&self) -> bool {
        self.find(|f| matches!(f, Fault::NoMetricsApi).then_some(()))
            .is_some()
    }
    pub fn no_dcgm(&self) -> bool {
        self.find(|f| matches!(f, Fault::NoDcgm).then_some(()))
            .is_some()
    }
    pub fn hostile_strings(&self) -> bool {
        self.find(|f| matches!(f, Fault::HostileStrings).then_some(()))
            .is_some()
    }
    pub fn reconcile(&self) -> Option<Duration> {
        self.find(|f| match f {
            Fault::Reconcile(d) => Some(*d),
            _ => None,
        })
    }
    /// The project's GPU quota (all regions), if one is imposed.
    pub fn gpu_quota(&self) -> Option<u32> {
        self.find(|f| match f {
            Fault::GpuQuota(n) => Some(*n),
            _ => None,
        })
    }
    /// How many nodes of the pool of this exact name the zones have room for, when a stockout
    /// is on it (0: none at all); None when the pool is not stocked out.
    pub fn stockout(&self, pool: &str) -> Option<u32> {
        self.find(|f| match f {
            Fault::Stockout { pool: p, room } if p == pool => Some(*room),
            _ => None,
        })
    }
    /// How often Spot nodes are reclaimed, and how many reclaims there are in all.
    pub fn preempt(&self) -> Option<(Duration, u64)> {
        self.find(|f| match f {
            Fault::Preempt { every, count } => Some((*every, *count)),
            _ => None,
        })
    }
    pub fn gke_permission_denied(&self) -> bool {
        self.find(|f| matches!(f, Fault::GkePermissionDenied).then_some(()))
            .is_some()
    }
}

#[cfg(test)]
#[path = "faults_tests.rs"]
mod tests;
