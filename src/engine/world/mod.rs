//! The world: what the cloud and the cluster are, as the workers report them — the cluster,
//! the Job's attempts, their pods and events, troubles, one store of the newest attempt's log
//! lines, what the pods use, the training's metrics, why pods wait, how pods ended, the nodes'
//! lives, who holds the recoverer's Lease, and when the active attempt last made headway. It
//! holds nothing of what the engine decides: the policies (`engine::policies`) keep their own
//! memory and read the world. One task owns it (the engine's) and folds `Report`s in; viewers
//! read it and keep their own view state (`app::App`), so a world serves one viewer or sixteen
//! at the same cost.

pub mod cluster;
pub mod drift;
pub mod ends;
#[cfg(test)]
pub mod fixtures;
mod fold;
pub mod gpus;
pub mod headway;
pub mod jobs;
pub mod lease;
mod log_lines;
pub mod log_store;
pub mod meter;
pub mod node_lives;
mod noticing;
pub mod training;
pub mod trouble;
pub mod waits;

pub use fold::{Applied, FollowLogs};
pub use log_lines::{Line, LineBuffer};

use self::cluster::ClusterModel;
use self::jobs::JobsModel;
use self::log_store::LogStore;
use self::training::Training;
use self::trouble::Troubles;
use super::report::TargetInfo;

/// What the pods and nodes use: not read yet, not served (no metrics-server), or as last read.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Usage {
    #[default]
    Unknown,
    Unavailable,
    Known(crate::k8s::usage::Reading),
}

impl Usage {
    /// The pod's usage, or why there is none: `Err("n/a")` without metrics-server, `Err("-")`
    /// when not read yet or the pod is not running.
    pub fn of(&self, pod: &str) -> Result<crate::k8s::usage::PodUsage, &'static str> {
        match self {
            Usage::Unavailable => Err("n/a"),
            Usage::Known(reading) => reading.pods.get(pod).copied().ok_or("-"),
            Usage::Unknown => Err("-"),
        }
    }
}

#[derive(Debug, Default)]
pub struct World {
    pub cluster: ClusterModel,
    pub jobs: JobsModel,
    /// Transient troubles (a watch reconnecting, a retried request), each cleared when its
    /// source is fine again.
    pub troubles: Troubles,
    /// The cluster's API is reachable and the Job watchers run. Only the workers say so
    /// (`Connected`, `Disconnected`): a RECONCILING cluster keeps serving its API.
    pub connected: bool,
    /// Every pod of the newest attempt.
    pub logs: LogStore,
    /// What each pod uses, by pod name, as metrics.k8s.io said last.
    pub usage: Usage,
    /// What the GPUs are doing, as their DCGM exporters said last.
    pub gpus: gpus::Gpus,
    /// The training's own metrics, read out of the followed attempts' log lines.
    pub training: Training,
    /// Why each pod that is not running waits.
    pub waits: waits::Waits,
    /// The ends of pods this engine saw happen.
    pub ends: ends::SeenEnds,
    /// The nodes' lives, for what the cluster and the run truly cost.
    pub nodes: node_lives::NodeLives,
    /// The recoverer's Lease as this engine last read it, and since when it has not changed.
    pub lease: lease::LeaseSeen,
    /// Since when the active attempt's log lines and steps have not moved.
    pub headway: headway::Headway,
}

impl World {
    pub fn target(&self) -> Option<&TargetInfo> {
        self.cluster.target.as_ref()
    }

    /// The newest trouble, as the status line shows it.
    pub fn trouble(&self) -> Option<&str> {
        self.troubles.newest()
    }

    /// Whether the screen changes with time alone (elapsed counters).
    pub fn ticking(&self) -> bool {
        self.cluster.ticking()
    }

    /// Whether a pod of the Job asks for GPUs and has not ended: what the GPU worker reads for.
    pub fn wants_gpus(&self) -> bool {
        self.jobs.pods.values().any(|p| p.gpus > 0 && !p.terminated)
    }

    /// Whether this engine holds the recoverer's Lease: the one that acts and sends.
    pub fn is_recoverer(&self) -> bool {
        self.lease.mine()
    }

    /// The cluster's name, as messages say it.
    pub fn cluster_name(&self) -> String {
        self.target().map(|t| t.cluster.clone()).unwrap_or_default()
    }

    /// A viewer's command is going to the workers: what it ends now. Deleting the cluster
    /// stops its log streams, and their troubles with them. Whether anything changed.
    pub fn command_sent(&mut self, command: &super::Command) -> bool {
        if *command == super::Command::DeleteCluster {
            let had = self.troubles.len();
            self.troubles.clear_logs();
            return self.troubles.len() != had;
        }
        false
    }
}
