//! A cluster's status, as GKE names it, plus `NOT_FOUND` for a cluster that is not there. One
//! enum instead of strings compared with literals: a status nobody handles is a compile error,
//! and what each status allows (is its API server up?) is said once, here.

use google_cloud_container_v1::model::cluster;
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ClusterStatus {
    /// There is no cluster of that name in that location.
    NotFound,
    Provisioning,
    Running,
    /// GKE is changing it (an upgrade, a node-pool change): its API server keeps answering.
    Reconciling,
    /// Being deleted.
    Stopping,
    Error,
    /// Running, with a problem GKE reports in the status message.
    Degraded,
    /// A status this version of Gantry does not know.
    Unknown,
}

impl ClusterStatus {
    pub fn from_api(status: &cluster::Status) -> Self {
        match status {
            cluster::Status::Provisioning => Self::Provisioning,
            cluster::Status::Running => Self::Running,
            cluster::Status::Reconciling => Self::Reconciling,
            cluster::Status::Stopping => Self::Stopping,
            cluster::Status::Error => Self::Error,
            cluster::Status::Degraded => Self::Degraded,
            _ => Self::Unknown,
        }
    }

    /// The name GKE (and `gantry status --json`) uses.
    pub fn name(self) -> &'static str {
        match self {
            Self::NotFound => "NOT_FOUND",
            Self::Provisioning => "PROVISIONING",
            Self::Running => "RUNNING",
            Self::Reconciling => "RECONCILING",
            Self::Stopping => "STOPPING",
            Self::Error => "ERROR",
            Self::Degraded => "DEGRADED",
            Self::Unknown => "UNKNOWN",
        }
    }

    /// Whether the cluster's Kubernetes API answers: RUNNING, and while GKE reconciles it or
    /// reports it degraded.
    pub fn serves_api(self) -> bool {
        matches!(self, Self::Running | Self::Reconciling | Self::Degraded)
    }
}

impl std::fmt::Display for ClusterStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_gkes_and_json_agrees() {
        for status in [
            ClusterStatus::NotFound,
            ClusterStatus::Provisioning,
            ClusterStatus::Running,
            ClusterStatus::Reconciling,
            ClusterStatus::Stopping,
            ClusterStatus::Error,
            ClusterStatus::Degraded,
            ClusterStatus::Unknown,
        ] {
            let json = serde_json::to_value(status).ok();
            assert_eq!(json, Some(serde_json::Value::from(status.name())));
        }
        assert_eq!(
            ClusterStatus::from_api(&cluster::Status::Reconciling),
            ClusterStatus::Reconciling
        );
    }

    #[test]
    fn the_api_answers_while_running_reconciling_or_degraded() {
        assert!(ClusterStatus::Running.serves_api());
        assert!(ClusterStatus::Reconciling.serves_api());
        assert!(ClusterStatus::Degraded.serves_api());
        assert!(!ClusterStatus::Provisioning.serves_api());
        assert!(!ClusterStatus::NotFound.serves_api());
    }
}
