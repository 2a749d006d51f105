//! What workers report to the engine. Only `World::apply` folds these into the world.

use super::world::trouble::TroubleSource;
use crate::gke::{ClusterSummary, ProvisionEvent};
use crate::k8s::logs::TailEvent;
use crate::k8s::watch::JobWatchEvent;

#[derive(Debug, Clone)]
pub enum Report {
    /// Where Gantry is working, for the cluster pane's title.
    Target(TargetInfo),
    /// The cluster the config describes, for the plan; sent once, only when Gantry manages the
    /// cluster (GKE).
    Desired {
        cluster: Box<crate::config::ClusterConfig>,
        /// Pools at zero nodes are then Gantry's own doing, not drift.
        may_scale_to_zero: bool,
        /// With `[watcher] in-cluster = true`: the watcher, for the plan (as if not there yet:
        /// the Lease's keeper says what is).
        watcher: Option<Box<crate::watcher::planned::Planned>>,
    },
    /// The cluster as GKE (or the kubeconfig context) describes it now.
    Cluster(ClusterSummary),
    /// Progress of a create or delete.
    Provision(ProvisionEvent),
    /// A create or delete ended; Err carries what GKE said.
    ProvisionDone(Result<String, String>),
    /// The cluster's API can be reached: Job watchers are running.
    Connected,
    /// The connection is gone (the cluster was deleted, or stopped serving its API).
    Disconnected,
    Job(JobWatchEvent),
    /// A change the Node watch saw, and when (GKE only: what the meter prices).
    Node {
        change: crate::k8s::watch::Change<crate::meter::NodeSeen>,
        at: jiff::Timestamp,
    },
    /// Log tailer output for the followed attempt (`generation` tells stale tails apart).
    Tail {
        generation: u64,
        event: TailEvent,
    },
    /// Where the followed attempt's lines are saved.
    LogsSavedTo {
        generation: u64,
        dir: String,
    },
    /// An earlier attempt's training metrics, read from its saved logs for comparison.
    TrainingLoaded {
        attempt: u32,
        store: Box<crate::metrics::store::Store>,
    },
    /// What the pods and nodes use (metrics.k8s.io), read every 15 s while shown; `None`: the
    /// cluster has no metrics-server.
    Usage(Option<crate::k8s::usage::Reading>),
    /// What the GPUs are doing (DCGM exporters), read every 10 s while a screen shows GPUs or
    /// the idle-GPU guard needs them.
    Gpus(crate::k8s::gpus::GpuRead),
    /// The recoverer's Lease as its keeper read (or wrote) it, and when, by the engine's
    /// monotonic clock (what a holder's silence is judged by).
    Lease {
        seen: super::world::lease::Reading,
        at: std::time::Instant,
    },
    /// The cluster's watcher (Gantry in the cluster) as a local engine's keeper read it: None
    /// when there is none (or it cannot be read).
    Watcher(Option<super::world::lease::WatcherSeen>),
    /// Time passed (the Lease's keeper, every few seconds): what waits for a time alone
    /// (`spot-wait`, a stall, a silent holder) is decided again.
    Tick,
    /// A one-shot command ended.
    Done {
        what: String,
        result: Result<String, String>,
    },
    /// A transient problem (a failed poll, an unreachable cluster): shown until its source says
    /// `TroubleOver`.
    Trouble {
        source: TroubleSource,
        message: String,
    },
    TroubleOver(TroubleSource),
}

#[derive(Debug, Clone, PartialEq)]
pub struct TargetInfo {
    /// `demo-project/us-central1-a` or `context NAME`.
    pub place: String,
    pub cluster: String,
    /// Whether Gantry manages the cluster (GKE) or only uses it (a kubeconfig context).
    pub managed: bool,
    /// Why cluster keys are unavailable, when they are.
    pub unmanaged_reason: Option<String>,
    pub simulated: bool,
}
