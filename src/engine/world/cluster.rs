//! The cluster pane's state: what GKE says about the cluster, how that differs from the config,
//! and the operation in progress.

use std::time::Duration;

use super::drift::Drift;
use crate::engine::TargetInfo;
use crate::gke::{ClusterStatus, ClusterSummary, OperationKind, ProvisionEvent, Stage};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClusterPhase {
    /// Gantry has not heard from GKE yet.
    Checking,
    NotCreated,
    Provisioning,
    Running,
    Deleting,
    Error,
    /// Any other GKE status (RECONCILING, DEGRADED).
    Other,
}

#[derive(Debug, Clone)]
pub struct Progress {
    pub kind: OperationKind,
    pub status: String,
    pub detail: String,
    pub stage: Option<Stage>,
    /// Elapsed when last reported, and when that was (none yet: nothing polled): the pane
    /// ticks on from there.
    pub elapsed: Duration,
    pub reported_at: Option<jiff::Timestamp>,
}

impl Progress {
    /// The elapsed time at `now`: what was reported, plus the time since.
    pub fn elapsed_at(&self, now: jiff::Timestamp) -> Duration {
        let since = self
            .reported_at
            .and_then(|at| Duration::try_from(now.duration_since(at)).ok())
            .unwrap_or_default();
        self.elapsed + since
    }

    /// 0.0–1.0 from the stage reached.
    pub fn fraction(&self) -> f64 {
        match &self.stage {
            Some(s) if s.total > 0 => {
                let done = if s.status == "DONE" {
                    s.index
                } else {
                    s.index.saturating_sub(1)
                };
                done as f64 / s.total as f64
            }
            _ => 0.0,
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct ClusterModel {
    pub target: Option<TargetInfo>,
    pub summary: Option<ClusterSummary>,
    pub progress: Option<Progress>,
    /// A create or delete Gantry started and has not seen end.
    pub busy: Option<OperationKind>,
    pub last_error: Option<String>,
    /// The plan for the cluster as last reported (set only through `set_summary`).
    pub drift: Drift,
    /// With `[watcher] in-cluster = true`: the watcher in the plan, as the Lease's keeper last
    /// read its Deployment.
    pub watcher: Option<crate::watcher::planned::Planned>,
}

impl ClusterModel {
    pub fn phase(&self) -> ClusterPhase {
        if self.busy == Some(OperationKind::Delete) {
            return ClusterPhase::Deleting;
        }
        let creating = self.busy == Some(OperationKind::Create);
        match self.summary.as_ref().map(|s| s.status) {
            None if creating => ClusterPhase::Provisioning,
            None => ClusterPhase::Checking,
            Some(ClusterStatus::NotFound) if creating => ClusterPhase::Provisioning,
            Some(ClusterStatus::NotFound) => ClusterPhase::NotCreated,
            Some(ClusterStatus::Provisioning) => ClusterPhase::Provisioning,
            Some(ClusterStatus::Running) => ClusterPhase::Running,
            Some(ClusterStatus::Stopping) => ClusterPhase::Deleting,
            Some(ClusterStatus::Error) => ClusterPhase::Error,
            Some(ClusterStatus::Reconciling | ClusterStatus::Degraded | ClusterStatus::Unknown) => {
                ClusterPhase::Other
            }
        }
    }

    pub fn name(&self) -> &str {
        self.summary
            .as_ref()
            .map(|s| s.name.as_str())
            .or(self.target.as_ref().map(|t| t.cluster.as_str()))
            .unwrap_or("")
    }

    pub fn managed(&self) -> bool {
        self.target.as_ref().is_none_or(|t| t.managed)
    }

    /// The cluster as GKE reports it now; the plan is recomputed when that differs from before.
    pub fn set_summary(&mut self, summary: ClusterSummary) {
        if self.summary.as_ref() != Some(&summary) {
            self.drift.recompute(Some(&summary));
        }
        self.summary = Some(summary);
    }

    /// The node pools unfinished attempts target, for the plan (fallback pools they use stay).
    pub fn pools_in_use(&mut self, pools: Vec<String>) {
        self.drift.uses(pools, self.summary.as_ref());
    }

    /// The config's cluster, for the plan.
    pub fn desire(&mut self, config: crate::config::ClusterConfig, may_scale_to_zero: bool) {
        self.drift
            .desire(config, may_scale_to_zero, self.summary.as_ref());
    }

    /// The cluster's watcher as last read (None: there is none, or not read yet).
    pub fn watcher_seen(&mut self, seen: Option<&super::lease::WatcherSeen>) {
        if let Some(planned) = &mut self.watcher {
            planned.seen(Ok(seen.map(|s| &s.there)));
        }
    }

    /// The plan, when the cluster has drifted from the config.
    pub fn drifted(&self) -> Option<&crate::gke::plan::Plan> {
        self.drift.drifted(self.summary.as_ref())
    }

    pub fn apply(&mut self, event: ProvisionEvent) {
        match event {
            ProvisionEvent::Started { kind, .. } | ProvisionEvent::Resumed { kind, .. } => {
                self.busy = Some(kind);
                self.last_error = None;
                self.progress = Some(Progress {
                    kind,
                    status: "PENDING".into(),
                    detail: String::new(),
                    stage: None,
                    elapsed: Duration::ZERO,
                    reported_at: None,
                });
            }
            ProvisionEvent::Adopted { .. } => {}
            ProvisionEvent::Cluster(summary) => self.set_summary(summary),
            ProvisionEvent::Progress {
                kind,
                status,
                detail,
                stage,
                elapsed,
                at,
                ..
            } => {
                self.busy = Some(kind);
                self.progress = Some(Progress {
                    kind,
                    status,
                    detail,
                    stage,
                    elapsed,
                    reported_at: Some(at),
                });
            }
            ProvisionEvent::Retrying { .. } => {}
            ProvisionEvent::Finished { .. } => {
                self.busy = None;
                self.progress = None;
            }
        }
    }

    pub fn finished(&mut self, result: &Result<String, String>) {
        self.busy = None;
        self.progress = None;
        if let Err(e) = result {
            self.last_error = Some(e.clone());
        }
    }

    /// Whether something on the pane changes by itself each second (the elapsed counter).
    pub fn ticking(&self) -> bool {
        self.progress.is_some()
    }
}
