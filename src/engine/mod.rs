//! The engine: everything that watches, with or without a terminal. It opens the session (GKE,
//! a kubeconfig context, or the embedded simulated cloud), runs the workers — the cluster
//! follower, provisioning, the Job watchers, the log tailer that saves every line, the keeper of
//! the recoverer's Lease — and owns the one world their reports build and the policies that
//! decide from it. Viewers (the local TUI, `gantry watch`, each SSH session of `gantry serve`)
//! read the world and what was told, are told when it changed, and send commands; none of them
//! holds a second set of watches or a second copy of the lines.

pub mod audit;
pub mod clock;
mod command;
pub mod gate;
pub mod notice;
mod owner;
pub mod policies;
mod report;
pub mod round;
pub mod session;
mod session_sim;
#[cfg(test)]
pub(crate) mod stand_in;
pub mod told;
mod workers;
pub mod world;

use std::sync::{Arc, RwLock, RwLockReadGuard};

use tokio::sync::{broadcast, mpsc, watch};
use tokio_util::sync::{CancellationToken, DropGuard};

pub use command::Command;
pub use gate::{Approved, Gate, Principal, Refused};
pub use notice::Notice;
pub use report::{Report, TargetInfo};
pub use session::{Session, SessionOptions};
pub use world::World;

use crate::k8s::logs::TailEvent;
use owner::{Outlets, Owner, Parts, own_the_world};
use session_sim::open as open_simulated;
use workers::Workers;

/// Worker events folded into the model under one write lock, at most.
const EVENTS_PER_BATCH: usize = 4096;
/// Notices kept for a slow listener before it misses some (it is told how many).
const NOTICES_KEPT_FOR_LISTENERS: usize = 1024;
/// Lines of a viewer's own fetch in flight to it: the stream waits beyond this.
const FETCH_IN_FLIGHT: usize = 256;

/// What a viewer asks: a command for the workers, or its own fetch of logs.
enum Request {
    Run(Approved),
    /// Answered by the owner between two rounds: that it is not stuck (a health probe).
    Ping(tokio::sync::oneshot::Sender<()>),
    Fetch {
        command: Approved,
        to: mpsc::Sender<(u64, TailEvent)>,
        cancel: CancellationToken,
    },
}

/// Opens where the engine works: the embedded simulated cloud (`--sim`), GKE, or a kubeconfig
/// context. Missing credentials are one clear error, before any pane opens.
pub async fn open_session(
    options: &SessionOptions,
    config: crate::config::Config,
) -> color_eyre::eyre::Result<Session> {
    if options.sim {
        return open_simulated(options, config).await;
    }
    session::open(options, config).await
}

/// The running engine. Dropping it stops the workers.
pub struct Engine {
    handle: EngineHandle,
    stop: DropGuard,
    task: tokio::task::JoinHandle<()>,
}

/// What a viewer holds of the engine: cheap to clone, one per viewer.
#[derive(Clone)]
pub struct EngineHandle {
    model: Arc<RwLock<World>>,
    telling: Arc<RwLock<told::Telling>>,
    changed: watch::Receiver<u64>,
    requests: mpsc::UnboundedSender<Request>,
    notices: broadcast::Sender<Notice>,
    /// Screens showing usage: metrics.k8s.io is read only while there is one.
    usage_shown: Arc<watch::Sender<usize>>,
}

/// Held by a viewer while its screen shows usage (CPU, memory): metrics.k8s.io has no watch, so
/// it is polled, and only while someone looks.
pub struct UsageShown(Arc<watch::Sender<usize>>);

impl Drop for UsageShown {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n = n.saturating_sub(1));
    }
}

/// A viewer's own fetch of logs: its lines arrive on `lines`; dropping it stops the stream.
pub struct Fetch {
    pub lines: mpsc::Receiver<(u64, TailEvent)>,
    _stop: DropGuard,
}

impl Engine {
    /// Starts the workers on the session and the task that owns the model.
    pub fn start(session: Session) -> Engine {
        let read_only = session.read_only;
        let audit = session.audit.clone();
        let clock = session.clock;
        let notifier = start_notifier(&session);
        let mut settings = policies::Settings::of(
            &session.config,
            read_only,
            policies::fallback::SpotFallback::of(&session),
        );
        settings.in_cluster = session.in_cluster;
        let (events_tx, events_rx) = mpsc::unbounded_channel();
        let (usage_shown, usage_watch) = watch::channel(0usize);
        let workers = Workers::start(session, events_tx, usage_watch);
        let model = Arc::new(RwLock::new(World::default()));
        let telling = Arc::new(RwLock::new(told::Telling::default()));
        let (changed_tx, changed) = watch::channel(0);
        let (requests, requests_rx) = mpsc::unbounded_channel();
        let (notices, _) = broadcast::channel(NOTICES_KEPT_FOR_LISTENERS);
        let stop = CancellationToken::new();
        let owner = Owner::new(Parts {
            world: model.clone(),
            outlets: Outlets {
                changed: changed_tx,
                telling: telling.clone(),
                notices: notices.clone(),
            },
            workers,
            read_only,
            audit,
            settings,
            clock,
            notifier,
        });
        let task = tokio::spawn(own_the_world(owner, events_rx, requests_rx, stop.clone()));
        Engine {
            handle: EngineHandle {
                model,
                telling,
                changed,
                requests,
                notices,
                usage_shown: Arc::new(usage_shown),
            },
            stop: stop.drop_guard(),
            task,
        }
    }

    pub fn handle(&self) -> EngineHandle {
        self.handle.clone()
    }

    /// Stops the workers (log streams, watches, polls) and waits for them to let go.
    pub async fn stop(self) {
        let Engine { stop, task, .. } = self;
        drop(stop);
        let _ = task.await;
    }
}

/// The notifier of the config's HTTP targets (`terminal` ones are the viewers'), its outbox in
/// the state directory — or, in the cluster, in the watcher's ConfigMap, which outlives its
/// pods; none without such targets, or (said in the log) without a place to keep the outbox.
fn start_notifier(session: &Session) -> Option<crate::notify::Notifier> {
    let config = &session.config;
    if !config.notify.iter().any(|t| t.kind.is_http()) {
        return None;
    }
    let started = if session.in_cluster {
        let client = match &session.backend {
            session::Backend::Gke {
                in_cluster: Some(client),
                ..
            }
            | session::Backend::Context { client, .. } => client.clone(),
            session::Backend::Gke { .. } => return None,
        };
        let store = crate::notify::ClusterStore {
            client,
            namespace: crate::watcher::namespace(config),
            name: crate::watcher::outbox_name(&config.job.name),
            labels: crate::watcher::labels(&config.job.name),
        };
        crate::notify::Notifier::start_in_cluster(&config.notify, store)
    } else {
        let Some(dir) = crate::paths::state_dir() else {
            tracing::warn!("notifications: no state directory (HOME unset) to keep the outbox in");
            return None;
        };
        crate::notify::Notifier::start(&config.notify, &dir.join(crate::notify::OUTBOX_DIR))
    };
    match started {
        Ok(notifier) => Some(notifier),
        Err(e) => {
            tracing::warn!(error = %e, "notifications cannot be sent");
            None
        }
    }
}

impl EngineHandle {
    /// The world, to read (draw) and let go of quickly.
    pub fn model(&self) -> RwLockReadGuard<'_, World> {
        self.model.read().unwrap_or_else(|p| p.into_inner())
    }

    /// What the engine told, the newest few numbered (what a viewer shows and rings for).
    pub fn told(&self) -> RwLockReadGuard<'_, told::Telling> {
        self.telling.read().unwrap_or_else(|p| p.into_inner())
    }

    /// Changes each time the model does (a version number).
    pub fn changed(&self) -> watch::Receiver<u64> {
        self.changed.clone()
    }

    /// Every notice, as it is told (`gantry watch` prints them).
    pub fn notices(&self) -> broadcast::Receiver<Notice> {
        self.notices.subscribe()
    }

    /// Says this viewer shows usage until the guard is dropped.
    pub fn show_usage(&self) -> UsageShown {
        self.usage_shown.send_modify(|n| *n += 1);
        UsageShown(self.usage_shown.clone())
    }

    /// Runs a command that passed a gate (the engine checks the approval again, and records
    /// every change in the audit file). A `FetchLogs` goes through [`fetch`].
    ///
    /// [`fetch`]: EngineHandle::fetch
    pub fn run(&self, command: Approved) {
        let _ = self.requests.send(Request::Run(command));
    }

    /// Whether the world's owner answers within `patience`: not stuck in a round, not gone.
    pub async fn answers(&self, patience: std::time::Duration) -> bool {
        let (tx, rx) = tokio::sync::oneshot::channel();
        if self.requests.send(Request::Ping(tx)).is_err() {
            return false;
        }
        matches!(tokio::time::timeout(patience, rx).await, Ok(Ok(())))
    }

    /// Starts a viewer's own fetch (`Command::FetchLogs`).
    pub fn fetch(&self, command: Approved) -> Fetch {
        let (to, lines) = mpsc::channel(FETCH_IN_FLIGHT);
        let cancel = CancellationToken::new();
        let _ = self.requests.send(Request::Fetch {
            command,
            to,
            cancel: cancel.clone(),
        });
        Fetch {
            lines,
            _stop: cancel.drop_guard(),
        }
    }
}
