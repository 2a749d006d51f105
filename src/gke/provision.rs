//! Create (or adopt) and delete the cluster, following GKE's operations to their end and reporting
//! progress as [`ProvisionEvent`]s. An operation that is already running for the cluster (started
//! by a Gantry that quit, or by someone else) is picked up rather than fought.

use std::time::Instant;

use google_cloud_container_v1::model::{Cluster, Operation, cluster, operation};
use tokio::sync::mpsc::UnboundedSender;

use super::client::Created;
use super::events::OperationKind;
use super::{
    ClusterRef, ClusterStatus, ClusterSummary, Gke, GkeError, PollPolicy, ProvisionEvent, spec,
};
use crate::config::ClusterConfig;

/// How `up` got a RUNNING cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpHow {
    /// Gantry created it.
    Created,
    /// It was there already (found, or GKE answered 409 ALREADY_EXISTS).
    Adopted,
    /// It was being created by an operation Gantry picked up.
    Resumed,
}

#[derive(Debug, Clone, PartialEq)]
pub struct UpOutcome {
    pub how: UpHow,
    pub cluster: ClusterSummary,
}

/// Where `begin_up` left things.
#[allow(clippy::large_enum_variant)] // made once per `up`
#[derive(Debug, Clone, PartialEq)]
pub enum Begun {
    /// The cluster is usable already (adopted).
    Running(ClusterSummary),
    /// An operation to follow: the create Gantry just started or found running, or the delete
    /// of a STOPPING cluster that must end before it can be created again.
    Operation {
        kind: OperationKind,
        name: String,
        resumed: bool,
    },
}

/// Creates the cluster (or adopts it, or picks up its running operation) and follows GKE until it
/// is RUNNING. The error of a failed operation carries GKE's message.
pub async fn up(
    gke: &Gke,
    target: &ClusterRef,
    config: &ClusterConfig,
    poll: PollPolicy,
    events: &UnboundedSender<ProvisionEvent>,
) -> Result<UpOutcome, GkeError> {
    let request = spec::cluster_request(config)?;
    // A STOPPING cluster is waited for, then created again; twice would be someone fighting us.
    for _ in 0..3 {
        match Box::pin(begin_up(gke, target, &request, events)).await? {
            Begun::Running(cluster) => {
                return Ok(UpOutcome {
                    how: UpHow::Adopted,
                    cluster,
                });
            }
            // `begin_up` starts or finds a create, never an update.
            Begun::Operation {
                kind: OperationKind::Create | OperationKind::Update,
                name,
                resumed,
            } => {
                let cluster = Box::pin(follow(
                    gke,
                    target,
                    OperationKind::Create,
                    &name,
                    poll,
                    events,
                ))
                .await?
                .ok_or_else(|| GkeError::NotFound {
                    cluster: target.to_string(),
                })?;
                let how = if resumed {
                    UpHow::Resumed
                } else {
                    UpHow::Created
                };
                return Ok(UpOutcome { how, cluster });
            }
            Begun::Operation {
                kind: OperationKind::Delete,
                name,
                ..
            } => {
                Box::pin(follow(
                    gke,
                    target,
                    OperationKind::Delete,
                    &name,
                    poll,
                    events,
                ))
                .await?;
            }
        }
    }
    Err(GkeError::NotReady {
        cluster: target.to_string(),
        status: ClusterStatus::Stopping,
        message: "it keeps being deleted while Gantry creates it".into(),
    })
}

/// The first step of [`up`]: look at the cluster, then create, adopt or pick up; no waiting.
pub async fn begin_up(
    gke: &Gke,
    target: &ClusterRef,
    request: &Cluster,
    events: &UnboundedSender<ProvisionEvent>,
) -> Result<Begun, GkeError> {
    let mut conflict = false;
    for _ in 0..3 {
        let Some(existing) = gke.get_cluster(target).await? else {
            match gke.create_cluster(target, request.clone()).await? {
                Created::Started(op) => {
                    let _ = events.send(ProvisionEvent::Started {
                        kind: OperationKind::Create,
                        operation: op.name.clone(),
                    });
                    return Ok(Begun::Operation {
                        kind: OperationKind::Create,
                        name: op.name,
                        resumed: false,
                    });
                }
                // Created between our look and our request: look again and adopt it.
                Created::AlreadyExists => {
                    conflict = true;
                    continue;
                }
            }
        };
        let summary = ClusterSummary::from_cluster(target, &existing);
        match existing.status {
            cluster::Status::Stopping => {
                let name = running_operation(gke, target, operation::Type::DeleteCluster).await?;
                let _ = events.send(ProvisionEvent::Cluster(summary));
                let _ = events.send(ProvisionEvent::Resumed {
                    kind: OperationKind::Delete,
                    operation: name.clone(),
                });
                return Ok(Begun::Operation {
                    kind: OperationKind::Delete,
                    name,
                    resumed: true,
                });
            }
            cluster::Status::Provisioning => {
                let _ = events.send(ProvisionEvent::Adopted {
                    status: summary.status,
                });
                let name = running_operation(gke, target, operation::Type::CreateCluster).await?;
                let _ = events.send(ProvisionEvent::Cluster(summary));
                let _ = events.send(ProvisionEvent::Resumed {
                    kind: OperationKind::Create,
                    operation: name.clone(),
                });
                return Ok(Begun::Operation {
                    kind: OperationKind::Create,
                    name,
                    resumed: true,
                });
            }
            cluster::Status::Running | cluster::Status::Reconciling | cluster::Status::Degraded => {
                let _ = events.send(ProvisionEvent::Adopted {
                    status: summary.status,
                });
                let _ = events.send(ProvisionEvent::Cluster(summary.clone()));
                return Ok(Begun::Running(summary));
            }
            _ => {
                return Err(GkeError::NotReady {
                    cluster: target.to_string(),
                    status: summary.status,
                    message: format!(
                        "{}{}delete it with `gantry down`, then run `gantry up` again",
                        summary.status_message,
                        if summary.status_message.is_empty() {
                            ""
                        } else {
                            "; "
                        }
                    ),
                });
            }
        }
    }
    let why = if conflict {
        "GKE says it exists (409) but does not show it"
    } else {
        "its state keeps changing"
    };
    Err(GkeError::NotReady {
        cluster: target.to_string(),
        status: ClusterStatus::Unknown,
        message: why.into(),
    })
}

/// How `down` ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DownOutcome {
    Deleted,
    /// There was no such cluster (NOT_FOUND counts as deleted).
    NotFound,
}

/// Deletes the cluster and follows the operation to its end. A create still running is waited
/// for first (GKE refuses to delete a cluster while another operation runs); a delete already
/// running is followed.
pub async fn down(
    gke: &Gke,
    target: &ClusterRef,
    poll: PollPolicy,
    events: &UnboundedSender<ProvisionEvent>,
) -> Result<DownOutcome, GkeError> {
    for _ in 0..3 {
        if let Some(existing) = gke.get_cluster(target).await? {
            let busy = match existing.status {
                cluster::Status::Provisioning => Some(operation::Type::CreateCluster),
                cluster::Status::Stopping => Some(operation::Type::DeleteCluster),
                _ => None,
            };
            if let Some(kind) = busy {
                let name = running_operation(gke, target, kind.clone()).await?;
                let kind = if kind == operation::Type::DeleteCluster {
                    OperationKind::Delete
                } else {
                    OperationKind::Create
                };
                let _ = events.send(ProvisionEvent::Resumed {
                    kind,
                    operation: name.clone(),
                });
                let followed = Box::pin(follow(gke, target, kind, &name, poll, events)).await;
                match kind {
                    OperationKind::Delete => return followed.map(|_| DownOutcome::Deleted),
                    // A failed create leaves an ERROR cluster, which is deleted below all the same.
                    OperationKind::Create | OperationKind::Update => continue,
                }
            }
        }
        let Some(op) = gke.delete_cluster(target).await? else {
            return Ok(DownOutcome::NotFound);
        };
        let _ = events.send(ProvisionEvent::Started {
            kind: OperationKind::Delete,
            operation: op.name.clone(),
        });
        Box::pin(follow(
            gke,
            target,
            OperationKind::Delete,
            &op.name,
            poll,
            events,
        ))
        .await?;
        return Ok(DownOutcome::Deleted);
    }
    Err(GkeError::NotReady {
        cluster: target.to_string(),
        status: ClusterStatus::Reconciling,
        message: "other operations keep running on it; try again later".into(),
    })
}

/// Polls an operation (and the cluster) until the operation is DONE, reporting what changes.
/// Returns the cluster after a create or an update (RUNNING), `None` after a delete.
pub async fn follow(
    gke: &Gke,
    target: &ClusterRef,
    kind: OperationKind,
    operation: &str,
    poll: PollPolicy,
    events: &UnboundedSender<ProvisionEvent>,
) -> Result<Option<ClusterSummary>, GkeError> {
    let started = Instant::now();
    let mut interval = poll.initial;
    let mut last_progress: Option<ProvisionEvent> = None;
    let mut last_cluster: Option<ClusterSummary> = None;
    loop {
        let op = gke.get_operation(target, operation).await?;
        let progress = ProvisionEvent::progress(kind, &op, started.elapsed());
        if !same_progress(last_progress.as_ref(), &progress) {
            let _ = events.send(progress.clone());
            last_progress = Some(progress);
        }
        let cluster = gke
            .get_cluster(target)
            .await?
            .map(|c| ClusterSummary::from_cluster(target, &c));
        if let Some(c) = &cluster
            && last_cluster.as_ref() != Some(c)
        {
            let _ = events.send(ProvisionEvent::Cluster(c.clone()));
            last_cluster = Some(c.clone());
        }
        if op.status == operation::Status::Done {
            return finish(target, kind, &op, cluster, started, events);
        }
        tokio::time::sleep(interval).await;
        interval = poll.next(interval);
    }
}

fn finish(
    target: &ClusterRef,
    kind: OperationKind,
    op: &Operation,
    cluster: Option<ClusterSummary>,
    started: Instant,
    events: &UnboundedSender<ProvisionEvent>,
) -> Result<Option<ClusterSummary>, GkeError> {
    let failed = |message: String| GkeError::OperationFailed {
        kind: kind.as_str(),
        cluster: target.to_string(),
        message,
    };
    if let Some(error) = op.error.as_ref().filter(|e| e.code != 0) {
        #[allow(deprecated)]
        let message = [&error.message, &op.status_message]
            .into_iter()
            .find(|m| !m.is_empty())
            .cloned()
            .unwrap_or_else(|| {
                format!("operation {} ended with error code {}", op.name, error.code)
            });
        return Err(failed(message));
    }
    match (kind, cluster) {
        (OperationKind::Delete, None) => {
            let _ = events.send(ProvisionEvent::Finished {
                kind,
                elapsed: started.elapsed(),
            });
            Ok(None)
        }
        (OperationKind::Delete, Some(c)) => Err(failed(format!(
            "the operation ended but the cluster is still there ({})",
            c.status
        ))),
        (OperationKind::Create | OperationKind::Update, Some(c)) if c.is_running() => {
            let _ = events.send(ProvisionEvent::Finished {
                kind,
                elapsed: started.elapsed(),
            });
            Ok(Some(c))
        }
        (OperationKind::Create | OperationKind::Update, Some(c)) => {
            Err(failed(if c.status_message.is_empty() {
                format!("the operation ended with the cluster {}", c.status)
            } else {
                c.status_message
            }))
        }
        (OperationKind::Create | OperationKind::Update, None) => {
            Err(failed("the operation ended but the cluster is gone".into()))
        }
    }
}

/// Whether two progress events say the same thing (elapsed time aside).
fn same_progress(a: Option<&ProvisionEvent>, b: &ProvisionEvent) -> bool {
    match (a, b) {
        (
            Some(ProvisionEvent::Progress {
                status: s1,
                detail: d1,
                stage: st1,
                metrics: m1,
                ..
            }),
            ProvisionEvent::Progress {
                status: s2,
                detail: d2,
                stage: st2,
                metrics: m2,
                ..
            },
        ) => s1 == s2 && d1 == d2 && st1 == st2 && m1 == m2,
        _ => false,
    }
}

/// The name of the unfinished operation of this type on the cluster.
async fn running_operation(
    gke: &Gke,
    target: &ClusterRef,
    kind: operation::Type,
) -> Result<String, GkeError> {
    let ops = gke.running_operations(target).await?;
    ops.into_iter()
        .find(|op| op.operation_type == kind)
        .map(|op| op.name)
        .ok_or_else(|| GkeError::NotReady {
            cluster: target.to_string(),
            status: if kind == operation::Type::DeleteCluster {
                ClusterStatus::Stopping
            } else {
                ClusterStatus::Provisioning
            },
            message: "GKE lists no running operation for it; try again shortly".into(),
        })
}
