//! What provisioning reports while it works: typed events for the TUI's cluster pane and for the
//! progress lines of `gantry up --wait` / `gantry down`.

use std::time::Duration;

use google_cloud_container_v1::model::{Operation, operation};

use super::ClusterSummary;

/// Create or delete the cluster, or change it (a node pool's size, nodes, a pool added or
/// removed, its labels: what applying a plan does, one operation at a time).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OperationKind {
    Create,
    Delete,
    Update,
}

impl OperationKind {
    pub fn as_str(self) -> &'static str {
        match self {
            OperationKind::Create => "create",
            OperationKind::Delete => "delete",
            OperationKind::Update => "update",
        }
    }
}

/// One stage of a GKE operation (`CLUSTER_CONFIGURING`, `CLUSTER_DEPLOYING`, …).
#[derive(Debug, Clone, PartialEq)]
pub struct Stage {
    pub name: String,
    /// `PENDING`, `RUNNING` or `DONE`.
    pub status: String,
    /// 1-based position among the operation's stages, and how many there are.
    pub index: usize,
    pub total: usize,
}

/// A progress event, in the order things happen.
#[derive(Debug, Clone, PartialEq)]
pub enum ProvisionEvent {
    /// Gantry sent the request and GKE started an operation.
    Started {
        kind: OperationKind,
        operation: String,
    },
    /// An operation for this cluster was already running (started earlier, maybe by another
    /// Gantry that quit): Gantry follows it instead of starting one.
    Resumed {
        kind: OperationKind,
        operation: String,
    },
    /// The cluster was already there (409 ALREADY_EXISTS, or found before creating): Gantry
    /// uses it rather than creating one.
    Adopted { status: super::ClusterStatus },
    /// The cluster's state changed (status, pools, nodes, endpoint).
    Cluster(ClusterSummary),
    /// A poll of the operation.
    Progress {
        kind: OperationKind,
        /// `PENDING`, `RUNNING`, `DONE`, or `ABORTING`.
        status: String,
        /// GKE's human-readable detail, when it gives one.
        detail: String,
        /// The stage running now (or the last one once done).
        stage: Option<Stage>,
        /// The operation's metrics, e.g. `("nodes_done", "2")`.
        metrics: Vec<(String, String)>,
        /// Since Gantry started (or resumed) following the operation.
        elapsed: Duration,
        /// When GKE answered this poll: a screen that ticks on counts from here.
        at: jiff::Timestamp,
    },
    /// A request was refused with a retryable status, or not answered; Gantry tries again.
    Retrying {
        request: &'static str,
        /// The HTTP status, when there was an answer.
        status: Option<u16>,
        attempt: u32,
        wait: Duration,
        message: String,
    },
    /// The operation ended and the cluster is RUNNING (create, update), or gone (delete).
    Finished {
        kind: OperationKind,
        elapsed: Duration,
    },
}

impl ProvisionEvent {
    /// The progress snapshot of an operation.
    pub fn progress(kind: OperationKind, op: &Operation, elapsed: Duration) -> Self {
        let (stage, metrics) = match &op.progress {
            Some(p) => {
                let total = p.stages.len();
                let running = p
                    .stages
                    .iter()
                    .position(|s| s.status == operation::Status::Running)
                    .or_else(|| {
                        p.stages
                            .iter()
                            .rposition(|s| s.status == operation::Status::Done)
                    });
                let stage = running.map(|i| Stage {
                    name: p.stages[i].name.clone(),
                    status: status_name(&p.stages[i].status),
                    index: i + 1,
                    total,
                });
                // The stage's own metrics when it has some, else the operation's.
                let metrics = match running.map(|i| &p.stages[i].metrics) {
                    Some(m) if !m.is_empty() => m.iter().map(metric).collect(),
                    _ => p.metrics.iter().map(metric).collect(),
                };
                (stage, metrics)
            }
            None => (None, Vec::new()),
        };
        ProvisionEvent::Progress {
            kind,
            status: status_name(&op.status),
            detail: op.detail.clone(),
            stage,
            metrics,
            elapsed,
            at: jiff::Timestamp::now(),
        }
    }

    /// One line for a terminal: `[  12s] create RUNNING stage 2/4 CLUSTER_DEPLOYING — detail`.
    pub fn line(&self) -> String {
        match self {
            ProvisionEvent::Started { kind, operation } => {
                format!("{} started: operation {operation}", kind.as_str())
            }
            ProvisionEvent::Resumed { kind, operation } => format!(
                "a {} operation is already running: following {operation}",
                kind.as_str()
            ),
            ProvisionEvent::Adopted { status } => {
                format!("the cluster already exists ({status}): using it")
            }
            ProvisionEvent::Cluster(c) => format!(
                "cluster {} is {}{}",
                c.name,
                c.status,
                if c.endpoint.is_empty() {
                    String::new()
                } else {
                    format!(" at {}", c.endpoint)
                }
            ),
            ProvisionEvent::Progress {
                kind,
                status,
                detail,
                stage,
                metrics,
                elapsed,
                ..
            } => {
                let mut line = format!("[{:>5}] {} {status}", secs(*elapsed), kind.as_str());
                if let Some(s) = stage {
                    line.push_str(&format!(" stage {}/{} {}", s.index, s.total, s.name));
                }
                let shown = compact_metrics(metrics);
                if !shown.is_empty() {
                    line.push_str(&format!(" ({shown})"));
                }
                if !detail.is_empty() {
                    line.push_str(&format!(" — {detail}"));
                }
                line
            }
            ProvisionEvent::Retrying {
                request,
                status,
                attempt,
                wait,
                message,
            } => format!(
                "{request}: {}{message}; retry {attempt} in {}ms",
                status.map(|s| format!("{s} ")).unwrap_or_default(),
                wait.as_millis()
            ),
            ProvisionEvent::Finished { kind, elapsed } => {
                format!("[{:>5}] {} done", secs(*elapsed), kind.as_str())
            }
        }
    }
}

/// `X=6, X_TOTAL=12` as `X 6/12`; other metrics as `name=value`.
fn compact_metrics(metrics: &[(String, String)]) -> String {
    let total = |name: &str| {
        metrics
            .iter()
            .find(|(k, _)| k.strip_suffix("_TOTAL") == Some(name))
            .map(|(_, v)| v.as_str())
    };
    metrics
        .iter()
        .filter(|(k, _)| {
            !k.strip_suffix("_TOTAL")
                .is_some_and(|base| metrics.iter().any(|(n, _)| n == base))
        })
        .map(|(k, v)| match total(k) {
            Some(t) => format!("{} {v}/{t}", k.to_ascii_lowercase().replace('_', " ")),
            None => format!("{k}={v}"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn secs(d: Duration) -> String {
    format!("{}s", d.as_secs())
}

pub(crate) fn status_name(s: &operation::Status) -> String {
    s.name().unwrap_or("UNKNOWN").to_string()
}

fn metric(m: &google_cloud_container_v1::model::operation_progress::Metric) -> (String, String) {
    let value = m
        .int_value()
        .map(|v| v.to_string())
        .or_else(|| m.double_value().map(|v| v.to_string()))
        .or_else(|| m.string_value().cloned())
        .unwrap_or_default();
    (m.name.clone(), value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_pair_up_with_their_totals() {
        let m = vec![
            ("CLUSTER_DEPLOYING".to_string(), "6".to_string()),
            ("CLUSTER_DEPLOYING_TOTAL".to_string(), "12".to_string()),
            ("other".to_string(), "x".to_string()),
        ];
        assert_eq!(compact_metrics(&m), "cluster deploying 6/12, other=x");
    }
}
