//! Workers: tokio tasks that carry out commands and follow the cloud, reporting to the engine
//! only through events. They hold no model and no view state.

mod actions;
mod apply_plan;
mod cluster;
mod ends;
mod fallback;
mod gpus;
mod lease;
mod logs;
mod meter;
mod saved_metrics;
mod scale;

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use tokio::sync::{Mutex, Notify, Semaphore, mpsc};
use tokio_util::sync::CancellationToken;

use self::actions::job_action;
use self::cluster::{follow_cluster, operate};
use self::logs::{LogRequest, TailTo};
use super::session::Session;
use super::world::FollowLogs;
use super::{Command, Report};
use crate::gke;

type Tx = mpsc::UnboundedSender<Report>;

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
    /// Who this engine is to the others (the Lease's holder identity).
    identity: crate::k8s::lease::Holder,
    /// The Lease's keeper, while connected: a take the recoverer policy asked for goes to it.
    lease_takes: std::sync::Mutex<Option<mpsc::UnboundedSender<lease::Order>>>,
    /// How many screens show usage (`EngineHandle::show_usage`).
    usage_shown: tokio::sync::watch::Receiver<usize>,
    /// Whether a pod of the Job asks for GPUs (`Workers::want_gpus`): the GPU worker reads
    /// only then.
    gpus_wanted: tokio::sync::watch::Sender<bool>,
    /// What pricing a pod's time needs of each node, read once per node (None: the node was
    /// gone, or could not be read).
    nodes:
        std::sync::Mutex<std::collections::HashMap<String, Option<crate::ends::cost::NodeFacts>>>,
}

impl Shared {
    /// A client of the cluster's API, while connected.
    async fn client(&self) -> Option<kube::Client> {
        self.connection
            .lock()
            .await
            .as_ref()
            .map(|c| c.client.clone())
    }
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
    pub fn start(
        session: Session,
        tx: Tx,
        usage_shown: tokio::sync::watch::Receiver<usize>,
    ) -> Self {
        let _ = tx.send(Report::Target(session.info.clone()));
        if let super::session::Backend::Gke { target, .. } = &session.backend {
            let watcher = match session.watcher() {
                Some(Ok(desired)) => Some(Box::new(crate::watcher::planned::Planned::of(
                    &desired,
                    &session.config,
                    &target.location,
                    Ok(None),
                ))),
                Some(Err(e)) => {
                    let _ = tx.send(Report::Done {
                        what: "plan the cluster's watcher".into(),
                        result: Err(e),
                    });
                    None
                }
                None => None,
            };
            let _ = tx.send(Report::Desired {
                cluster: Box::new(session.config.cluster.clone()),
                may_scale_to_zero: session.config.may_scale_to_zero(),
                watcher,
            });
        }
        let identity = lease::identity(session.in_cluster);
        let shared = Arc::new(Shared {
            session,
            tx,
            connection: Mutex::new(None),
            operating: AtomicBool::new(false),
            refresh: Notify::new(),
            stop: CancellationToken::new(),
            flow_budget: Arc::new(Semaphore::new(FLOW_EVENTS_IN_FLIGHT)),
            usage_shown,
            gpus_wanted: tokio::sync::watch::channel(false).0,
            identity,
            lease_takes: Default::default(),
            nodes: Default::default(),
        });
        tokio::spawn(follow_cluster(shared.clone()));
        Self { shared, tail: None }
    }

    /// Whether a pod of the Job asks for GPUs now (the world says, after every batch).
    pub fn want_gpus(&self, wanted: bool) {
        self.shared.gpus_wanted.send_if_modified(|w| {
            let changed = *w != wanted;
            *w = wanted;
            changed
        });
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

    /// `by`: who asked (named on what a delete removes).
    pub fn run(&mut self, command: Command, by: &super::Principal) {
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
            | Command::DeletePod(_)
            | Command::Recover { .. }
            | Command::EndRun { .. } => {
                tokio::spawn(job_action(shared, command, by.name()));
            }
            Command::FallBack { .. } => {
                tokio::spawn(fallback::fall_back(shared, command, by.name()));
            }
            Command::ScaleNodePools(to) => {
                let engine_why = match by {
                    super::Principal::Engine(why) => Some(*why),
                    _ => None,
                };
                tokio::spawn(scale::scale(shared, to, engine_why));
            }
            Command::RecordEnds(entries) => {
                tokio::spawn(ends::record(shared, entries));
            }
            Command::RecordCost(entry) => {
                tokio::spawn(meter::record(shared, entry));
            }
            Command::TakeLease { judged, .. } => {
                lease::order(
                    &shared,
                    lease::Order::Take {
                        judged: judged.map(|j| *j),
                    },
                );
            }
            Command::GiveWayLease => lease::order(&shared, lease::Order::GiveWay),
            // The engine hands the plan itself over, through `apply_plan`.
            Command::ApplyPlan { .. } => {}
            // A viewer's own fetch comes through `fetch`, with its channel.
            Command::FetchLogs { .. } => {}
        }
    }

    /// Makes the cluster what the config describes, as `plan` says; None: the plan shown has
    /// moved on, and nothing is applied.
    pub fn apply_plan(&self, plan: Option<crate::gke::plan::Plan>) {
        tokio::spawn(apply_plan::apply_plan(self.shared.clone(), plan));
    }

    /// Follows every pod of the newest attempt into the model's store, instead of the attempt
    /// followed so far.
    pub fn follow(&mut self, follow: FollowLogs) {
        if let Some(old) = self.tail.take() {
            old.cancel();
        }
        let cancel = CancellationToken::new();
        logs::tail(
            self.shared.clone(),
            LogRequest {
                attempt: follow.attempt,
                pod: None,
                previous: false,
            },
            TailTo::World {
                generation: follow.generation,
            },
            cancel.clone(),
        );
        self.tail = Some(cancel);
    }

    /// Whether a create, delete or resize is being carried out now.
    pub fn operating(&self) -> bool {
        self.shared
            .operating
            .load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Reads an earlier attempt's metrics from its saved logs, for comparison.
    pub fn load_saved_metrics(&self, number: u32) {
        saved_metrics::load(self.shared.clone(), number);
    }

    /// A viewer's own fetch (`Command::FetchLogs`): its lines go to `to` until `cancel`.
    pub fn fetch(
        &self,
        command: Command,
        to: mpsc::Sender<(u64, crate::k8s::logs::TailEvent)>,
        cancel: CancellationToken,
    ) {
        let Command::FetchLogs {
            attempt,
            pod,
            previous,
            generation,
        } = command
        else {
            return;
        };
        logs::tail(
            self.shared.clone(),
            LogRequest {
                attempt,
                pod,
                previous,
            },
            TailTo::Viewer { to, generation },
            cancel,
        );
    }
}
