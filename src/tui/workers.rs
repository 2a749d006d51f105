//! Workers: tokio tasks that carry out commands and follow the cloud, reporting to the UI task
//! only through events. They hold no UI state.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, DeleteParams};
use tokio::sync::{Mutex, Notify, Semaphore, mpsc};
use tokio_util::sync::CancellationToken;

use super::session::{Backend, Session};
use crate::app::trouble::TroubleSource;
use crate::app::{Command, Event};
use crate::gke::{self, ClusterStatus, ClusterSummary, ProvisionEvent};
use crate::k8s;
use crate::k8s::logs::{LogTail, TailOptions, TailTarget};

type Tx = mpsc::UnboundedSender<Event>;

/// The connection to the cluster's API, once it is RUNNING.
struct Connection {
    client: kube::Client,
    watchers: CancellationToken,
}

struct Shared {
    session: Session,
    tx: Tx,
    connection: Mutex<Option<Connection>>,
    /// A create or delete is being followed: the cluster follower leaves operations to it.
    operating: AtomicBool,
    /// Asks the cluster follower to look again now.
    refresh: Notify,
    stop: CancellationToken,
    /// Log and watch events sent to the UI and not yet taken: the UI's channel is unbounded (a
    /// key must never wait behind them), so the log follower and the watchers wait here
    /// instead, and what they have not sent stays with the server until the UI is ready.
    flow_budget: Arc<Semaphore>,
}

/// Log and watch events (a log event is a batch of one pod's lines) in flight to the UI at once.
const FLOW_EVENTS_IN_FLIGHT: usize = 128;

/// Waits for room in the UI's flow budget; false if `cancel` came first. The UI gives the room
/// back when it takes the event (`Workers::flow_event_taken`).
async fn flow_room(budget: &Semaphore, cancel: &CancellationToken) -> bool {
    tokio::select! {
        _ = cancel.cancelled() => false,
        permit = budget.acquire() => {
            if let Ok(permit) = permit {
                permit.forget();
            }
            true
        }
    }
}

pub struct Workers {
    shared: Arc<Shared>,
    /// Cancels the log follow in progress.
    tail: Option<CancellationToken>,
}

impl Workers {
    pub fn start(session: Session, tx: Tx) -> Self {
        let _ = tx.send(Event::Target(session.info.clone()));
        let shared = Arc::new(Shared {
            session,
            tx,
            connection: Mutex::new(None),
            operating: AtomicBool::new(false),
            refresh: Notify::new(),
            stop: CancellationToken::new(),
            flow_budget: Arc::new(Semaphore::new(FLOW_EVENTS_IN_FLIGHT)),
        });
        tokio::spawn(follow_cluster(shared.clone()));
        Self { shared, tail: None }
    }

    /// The UI took a log or watch event off its channel: room for another.
    pub fn flow_event_taken(&self) {
        self.shared.flow_budget.add_permits(1);
    }

    pub fn stop(&mut self) {
        if let Some(tail) = self.tail.take() {
            tail.cancel();
        }
        self.shared.stop.cancel();
    }

    pub fn run(&mut self, command: Command) {
        let shared = self.shared.clone();
        match command {
            Command::CreateCluster => {
                tokio::spawn(operate(shared, gke::OperationKind::Create));
            }
            Command::DeleteCluster => {
                if let Some(tail) = self.tail.take() {
                    tail.cancel();
                }
                tokio::spawn(operate(shared, gke::OperationKind::Delete));
            }
            Command::LaunchJob
            | Command::RetryJob
            | Command::DeleteAttempt(_)
            | Command::DeletePod(_) => {
                tokio::spawn(job_action(shared, command));
            }
            Command::FollowLogs {
                attempt,
                pod,
                previous,
                generation,
            } => {
                if let Some(old) = self.tail.take() {
                    old.cancel();
                }
                self.tail = Some(self.follow_logs(attempt, pod, previous, generation));
            }
        }
    }

    fn follow_logs(
        &self,
        attempt: String,
        pod: Option<String>,
        previous: bool,
        generation: u64,
    ) -> CancellationToken {
        let shared = self.shared.clone();
        let cancel = CancellationToken::new();
        let handle_tx = cancel.clone();
        tokio::spawn(async move {
            let Some(client) = shared
                .connection
                .lock()
                .await
                .as_ref()
                .map(|c| c.client.clone())
            else {
                return;
            };
            let cfg = &shared.session.config.job;
            let save_dir = k8s::logs::logs_dir(&shared.session.cluster_name(), &attempt);
            if let Some(dir) = &save_dir {
                let _ = shared.tx.send(Event::LogsSavedTo {
                    generation,
                    dir: dir.display().to_string(),
                });
            }
            let target = TailTarget {
                namespace: cfg.namespace.clone(),
                job: attempt,
                container: None,
            };
            let options = TailOptions {
                save_dir,
                pod,
                follow: !previous,
                previous,
                ..Default::default()
            };
            let tail = LogTail::follow(client, target, options);
            let (mut rx, tail_handle) = tail.into_parts();
            loop {
                tokio::select! {
                    _ = handle_tx.cancelled() => { tail_handle.cancel(); return; }
                    _ = shared.stop.cancelled() => { tail_handle.cancel(); return; }
                    event = rx.recv() => match event {
                        Some(event) => {
                            if !flow_room(&shared.flow_budget, &handle_tx).await {
                                tail_handle.cancel();
                                return;
                            }
                            let _ = shared.tx.send(Event::Tail { generation, event });
                        }
                        None => return,
                    }
                }
            }
        });
        cancel
    }
}

fn forward_provision(tx: &Tx) -> mpsc::UnboundedSender<ProvisionEvent> {
    let (ptx, mut prx) = mpsc::unbounded_channel::<ProvisionEvent>();
    let tx = tx.clone();
    tokio::spawn(async move {
        while let Some(e) = prx.recv().await {
            let _ = tx.send(Event::Provision(e));
        }
    });
    ptx
}

async fn disconnect(shared: &Shared) {
    if let Some(conn) = shared.connection.lock().await.take() {
        conn.watchers.cancel();
        // The watchers are gone, and what they had to say with them.
        for watch in TroubleSource::watches() {
            let _ = shared.tx.send(Event::TroubleOver(watch));
        }
    }
    let _ = shared.tx.send(Event::TroubleOver(TroubleSource::Cluster));
}

/// Creates or deletes the cluster (or follows such an operation already running at GKE).
async fn operate(shared: Arc<Shared>, kind: gke::OperationKind) {
    let Backend::Gke { gke, target, poll } = &shared.session.backend else {
        let _ = shared.tx.send(Event::ProvisionDone(Err(
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
        .send(Event::ProvisionDone(result.map_err(|e| e.to_string())));
    shared.refresh.notify_one();
}

async fn job_action(shared: Arc<Shared>, command: Command) {
    let client = shared
        .connection
        .lock()
        .await
        .as_ref()
        .map(|c| c.client.clone());
    let what = command.describe();
    let Some(client) = client else {
        let _ = shared.tx.send(Event::Done {
            what,
            result: Err("not connected to the cluster".into()),
        });
        return;
    };
    let cfg = &shared.session.config.job;
    let result = match command {
        Command::LaunchJob => k8s::launch(&client, cfg, shared.session.project())
            .await
            .map(|l| format!("launched {}", l.job)),
        Command::RetryJob => k8s::retry(&client, cfg, &Default::default())
            .await
            .map(|l| format!("retrying as {}", l.job)),
        Command::DeleteAttempt(name) => k8s::delete(&client, cfg, Some(&name))
            .await
            .map(|_| format!("deleted {name}")),
        Command::DeletePod(name) => {
            let pods: Api<Pod> = Api::namespaced(client, &cfg.namespace);
            pods.delete(&name, &DeleteParams::background())
                .await
                .map(|_| format!("deleting pod {name}"))
                .map_err(k8s::K8sError::api(format!("delete pod {name}")))
        }
        _ => return,
    };
    let _ = shared.tx.send(Event::Done {
        what,
        result: result.map_err(|e| e.to_string()),
    });
}

/// Follows the cluster: its state from GKE (often while it changes, rarely once RUNNING), a
/// connection and Job watchers once it runs, and any operation GKE is already running for it.
async fn follow_cluster(shared: Arc<Shared>) {
    loop {
        let wait = match &shared.session.backend {
            Backend::Gke { gke, target, poll } => check_gke(&shared, gke, target, *poll).await,
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
) -> Duration {
    let changing = poll.initial.max(Duration::from_millis(10));
    let settled = poll.max.saturating_mul(6).max(Duration::from_millis(100));
    let cluster = match Box::pin(gke.get_cluster(target)).await {
        Ok(c) => c,
        Err(e) => {
            let _ = shared.tx.send(Event::Trouble {
                source: TroubleSource::Gke,
                message: format!("GKE: {e}"),
            });
            return settled;
        }
    };
    let _ = shared.tx.send(Event::TroubleOver(TroubleSource::Gke));
    let Some(cluster) = cluster else {
        disconnect(shared).await;
        let _ = shared.tx.send(Event::Cluster(ClusterSummary::not_found(
            target,
            &shared.session.config.cluster.machine_type,
        )));
        return settled;
    };
    let summary = ClusterSummary::from_cluster(target, &cluster);
    let status = summary.status;
    let _ = shared.tx.send(Event::Cluster(summary));
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
            disconnect(shared).await;
            settled
        }
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
            let _ = shared.tx.send(Event::TroubleOver(TroubleSource::Cluster));
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
                    let _ = tx.send(Event::Done { what, result });
                });
            }
        }
        Err(e) => {
            let _ = shared.tx.send(Event::Trouble {
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
                        let _ = tx.send(Event::Job(e));
                    }
                    None => return,
                }
            }
        }
    });
    let _ = shared.tx.send(Event::Connected);
    Connection { client, watchers }
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
    };
    let _ = shared.tx.send(Event::Cluster(summary));
    let mut connection = shared.connection.lock().await;
    if connection.is_none() {
        *connection = Some(start_watchers(shared, client.clone()));
    }
    Duration::from_secs(60)
}
