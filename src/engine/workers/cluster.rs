//! Following the cluster: its state from GKE (often while it changes, rarely once it runs), a
//! connection and the Job watchers while it serves its API, and creates and deletes.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use kube::api::Api;
use tokio::sync::mpsc;

use super::{Connection, Shared, Tx, flow_room};
use crate::engine::Report;
use crate::engine::session::Backend;
use crate::engine::world::trouble::TroubleSource;
use crate::gke::{self, ClusterStatus, ClusterSummary, ProvisionEvent};
use crate::k8s;

pub(super) fn forward_provision(tx: &Tx) -> mpsc::UnboundedSender<ProvisionEvent> {
    let (ptx, mut prx) = mpsc::unbounded_channel::<ProvisionEvent>();
    let tx = tx.clone();
    tokio::spawn(async move {
        while let Some(e) = prx.recv().await {
            let _ = tx.send(Report::Provision(e));
        }
    });
    ptx
}

async fn disconnect(shared: &Shared) {
    if let Some(conn) = shared.connection.lock().await.take() {
        conn.watchers.cancel();
        // The watchers are gone, and what they had to say with them.
        for watch in TroubleSource::watches() {
            let _ = shared.tx.send(Report::TroubleOver(watch));
        }
    }
    let _ = shared.tx.send(Report::TroubleOver(TroubleSource::Cluster));
    let _ = shared.tx.send(Report::Disconnected);
}

/// Creates or deletes the cluster (or follows such an operation already running at GKE).
pub async fn operate(shared: Arc<Shared>, kind: gke::OperationKind) {
    let Backend::Gke {
        gke, target, poll, ..
    } = &shared.session.backend
    else {
        let _ = shared.tx.send(Report::ProvisionDone(Err(
            "the cluster is not managed by Gantry".into(),
        )));
        return;
    };
    if shared.operating.swap(true, Ordering::SeqCst) {
        return;
    }
    let events = forward_provision(&shared.tx);
    let result = match kind {
        gke::OperationKind::Create => Box::pin(gke::up(
            gke,
            target,
            &shared.session.config.cluster,
            *poll,
            &events,
        ))
        .await
        .map(|o| format!("cluster {} is RUNNING ({:?})", target.name, o.how).to_lowercase()),
        // Changes to a running cluster come from a plan, never started here.
        gke::OperationKind::Update => Err(gke::GkeError::BadInput(
            "an update is applied from a plan".into(),
        )),
        gke::OperationKind::Delete => {
            disconnect(&shared).await;
            Box::pin(gke::down(gke, target, *poll, &events))
                .await
                .map(|o| match o {
                    gke::DownOutcome::Deleted => format!("cluster {} deleted", target.name),
                    gke::DownOutcome::NotFound => {
                        format!("cluster {} was already gone", target.name)
                    }
                })
        }
    };
    // Let the forwarder pass the last progress event before the end is reported.
    drop(events);
    tokio::task::yield_now().await;
    shared.operating.store(false, Ordering::SeqCst);
    let _ = shared
        .tx
        .send(Report::ProvisionDone(result.map_err(|e| e.to_string())));
    shared.refresh.notify_one();
}

/// Follows the cluster: its state from GKE (often while it changes, rarely once RUNNING), a
/// connection and Job watchers once it runs, and any operation GKE is already running for it.
pub async fn follow_cluster(shared: Arc<Shared>) {
    loop {
        let wait = match &shared.session.backend {
            Backend::Gke {
                gke,
                target,
                poll,
                in_cluster,
            } => check_gke(&shared, gke, target, *poll, in_cluster.as_ref()).await,
            Backend::Context { client, name } => check_context(&shared, client, name).await,
        };
        tokio::select! {
            _ = shared.stop.cancelled() => return,
            _ = shared.refresh.notified() => {}
            _ = tokio::time::sleep(wait) => {}
        }
    }
}

async fn check_gke(
    shared: &Arc<Shared>,
    gke: &gke::Gke,
    target: &gke::ClusterRef,
    poll: gke::PollPolicy,
    in_cluster: Option<&kube::Client>,
) -> Duration {
    let changing = poll.initial.max(Duration::from_millis(10));
    let settled = poll.max.saturating_mul(6).max(Duration::from_millis(100));
    // In the cluster, its API is there whatever GKE says (or whether GKE can be read).
    if let Some(client) = in_cluster {
        connect_with(shared, client.clone()).await;
    }
    let cluster = match Box::pin(gke.get_cluster(target)).await {
        Ok(c) => c,
        Err(e) => {
            let _ = shared.tx.send(Report::Trouble {
                source: TroubleSource::Gke,
                message: format!("GKE: {e}"),
            });
            return settled;
        }
    };
    let _ = shared.tx.send(Report::TroubleOver(TroubleSource::Gke));
    let Some(cluster) = cluster else {
        if in_cluster.is_none() {
            disconnect(shared).await;
        }
        let _ = shared.tx.send(Report::Cluster(ClusterSummary::not_found(
            target,
            &shared.session.config.cluster.machine_type,
        )));
        return settled;
    };
    let summary = ClusterSummary::from_cluster(target, &cluster);
    let status = summary.status;
    let _ = shared.tx.send(Report::Cluster(summary));
    match status {
        s if s.serves_api() => {
            connect(shared, target, &cluster).await;
            settled
        }
        ClusterStatus::Provisioning => {
            if !shared.operating.load(Ordering::SeqCst) {
                tokio::spawn(operate(shared.clone(), gke::OperationKind::Create));
            }
            changing
        }
        ClusterStatus::Stopping => {
            if !shared.operating.load(Ordering::SeqCst) {
                tokio::spawn(operate(shared.clone(), gke::OperationKind::Delete));
            }
            changing
        }
        _ => {
            if in_cluster.is_none() {
                disconnect(shared).await;
            }
            settled
        }
    }
}

/// Connects with a client already made (the pod's own, in the cluster).
async fn connect_with(shared: &Arc<Shared>, client: kube::Client) {
    let mut connection = shared.connection.lock().await;
    if connection.is_none() {
        *connection = Some(start_watchers(shared, client));
    }
}

async fn connect(
    shared: &Arc<Shared>,
    target: &gke::ClusterRef,
    cluster: &google_cloud_container_v1::model::Cluster,
) {
    let mut connection = shared.connection.lock().await;
    if connection.is_some() {
        return;
    }
    let Backend::Gke { gke, .. } = &shared.session.backend else {
        return;
    };
    match gke::cluster_client::cluster_client(target, cluster, gke.auth()) {
        Ok(client) => {
            let _ = shared.tx.send(Report::TroubleOver(TroubleSource::Cluster));
            *connection = Some(start_watchers(shared, client));
            if let Some(credential) = shared.session.kubeconfig.clone() {
                // File work (kubectl's lock, fsyncs) off the runtime's threads.
                let (tx, target, cluster) = (shared.tx.clone(), target.clone(), cluster.clone());
                tokio::task::spawn_blocking(move || {
                    let result =
                        crate::kubeconfig::write_for_cluster(&credential, &target, &cluster)
                            .map(|(context, path)| {
                                format!("kubectl context {context} written to {}", path.display())
                            })
                            .map_err(|e| e.to_string());
                    let what = "kubeconfig".to_string();
                    let _ = tx.send(Report::Done { what, result });
                });
            }
        }
        Err(e) => {
            let _ = shared.tx.send(Report::Trouble {
                source: TroubleSource::Cluster,
                message: format!("cannot reach the cluster: {e}"),
            });
        }
    }
}

fn start_watchers(shared: &Arc<Shared>, client: kube::Client) -> Connection {
    let watchers = shared.stop.child_token();
    let (wtx, mut wrx) = mpsc::channel(256);
    let set = k8s::watch::spawn_job_watchers(
        client.clone(),
        &shared.session.config.job,
        wtx,
        watchers.clone(),
    );
    let tx = shared.tx.clone();
    let budget = shared.flow_budget.clone();
    let cancel = watchers.clone();
    tokio::spawn(async move {
        let _set = set;
        loop {
            tokio::select! {
                _ = cancel.cancelled() => return,
                e = wrx.recv() => match e {
                    Some(e) => {
                        if !flow_room(&budget, &cancel).await {
                            return;
                        }
                        let _ = tx.send(Report::Job(e));
                    }
                    None => return,
                }
            }
        }
    });
    tokio::spawn(poll_usage(
        client.clone(),
        shared.session.config.job.clone(),
        shared.tx.clone(),
        shared.usage_shown.clone(),
        watchers.clone(),
    ));
    // What the meter prices: GKE's nodes (a kubeconfig context's are not priced).
    if let Backend::Gke { .. } = &shared.session.backend {
        tokio::spawn(super::meter::watch_nodes(
            client.clone(),
            shared.tx.clone(),
            watchers.clone(),
        ));
    }
    tokio::spawn(super::lease::keep(
        shared.clone(),
        client.clone(),
        watchers.clone(),
    ));
    let _ = shared.tx.send(Report::Connected);
    Connection { client, watchers }
}

/// Reads what the training pods and the nodes use every 15 s while connected and a screen shows
/// it. Without metrics-server: one line in gantry.log, `n/a` in the panes, and a look again every
/// five minutes — no trouble on the status line, no retry storm.
async fn poll_usage(
    client: kube::Client,
    job: crate::config::JobConfig,
    tx: Tx,
    mut shown: tokio::sync::watch::Receiver<usize>,
    stop: tokio_util::sync::CancellationToken,
) {
    let selector = k8s::labels::managed_selector(&job.name);
    let mut said_unavailable = false;
    loop {
        tokio::select! {
            _ = stop.cancelled() => return,
            seen = shown.wait_for(|n| *n > 0) => if seen.is_err() { return },
        }
        let wait = match k8s::usage::read(&client, &job.namespace, &selector).await {
            Ok(reading) => {
                said_unavailable = false;
                let _ = tx.send(Report::Usage(Some(reading)));
                k8s::usage::POLL
            }
            Err(k8s::usage::UsageError::Unavailable) => {
                if !std::mem::replace(&mut said_unavailable, true) {
                    // warn: gantry.log's default level, so the one line is there.
                    tracing::warn!(
                        "no metrics.k8s.io on this cluster (no metrics-server): usage shows n/a"
                    );
                }
                let _ = tx.send(Report::Usage(None));
                k8s::usage::RECHECK
            }
            Err(e) => {
                tracing::debug!(error = %e, "reading pod usage");
                k8s::usage::POLL
            }
        };
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tokio::time::sleep(wait) => {}
        }
    }
}

async fn check_context(shared: &Arc<Shared>, client: &kube::Client, name: &str) -> Duration {
    let nodes: Api<k8s_openapi::api::core::v1::Node> = Api::all(client.clone());
    let version = client
        .apiserver_version()
        .await
        .map(|v| v.git_version)
        .unwrap_or_default();
    let node_count = nodes
        .list(&Default::default())
        .await
        .map(|l| l.items.len() as u32)
        .unwrap_or(0);
    let server = shared.session.info.place.clone();
    let summary = ClusterSummary {
        name: name.to_string(),
        project: String::new(),
        location: server,
        status: ClusterStatus::Running,
        status_message: String::new(),
        node_count,
        machine_type: String::new(),
        endpoint: String::new(),
        version: version.trim_start_matches('v').to_string(),
        node_version: String::new(),
        node_pools: Vec::new(),
        locations: Vec::new(),
        create_time: None,
        labels: Default::default(),
    };
    let _ = shared.tx.send(Report::Cluster(summary));
    let mut connection = shared.connection.lock().await;
    if connection.is_none() {
        *connection = Some(start_watchers(shared, client.clone()));
    }
    Duration::from_secs(60)
}
