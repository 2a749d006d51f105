//! `gantry serve`: the engine of `gantry watch` with an SSH server in front, so teammates watch
//! a training with nothing but `ssh` — no cloud credentials, no install, no second set of watches
//! against the API server. Every viewer has its own TUI over the one model; every viewer is
//! read-only, except the keys listed as operators, which pass the same one gate as the local
//! TUI, each with its own confirmations. Listens on loopback unless told otherwise; public-key
//! authentication only, before anything else; connections still authenticating are few and
//! brief (`admission`); every size a client sends is bounded (`connection`); a key taken out of
//! its file is out within seconds (`revoke`); a session that panics ends alone (`session`).

mod admission;
mod connection;
mod input;
pub mod key_files;
mod revoke;
mod session;
mod size;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

pub use admission::{DEFAULT_LOGIN_GRACE, DEFAULT_MAX_STARTUPS};

use russh::MethodKind;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::config::Config;
use crate::engine::EngineHandle;
use crate::keys::Keymap;
use crate::viewer::Pacing;
use key_files::{KeyFile, Standing};

pub use crate::viewer::output::{QUEUE_BYTES, QUEUE_FRAMES};

/// The default address: this machine only.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:2222";
/// Viewers at once, by default.
pub const DEFAULT_MAX_VIEWERS: usize = 16;
/// A client that answers none of this many keepalives, one every `KEEPALIVE`, is gone. A viewer
/// that only watches sends nothing and is never timed out: its client answers keepalives.
const KEEPALIVE: Duration = Duration::from_secs(15);
const KEEPALIVES_MISSED: usize = 4;
/// How long a client may take to close its connection once its viewers have left, when the
/// server stops, before it is disconnected.
const CLOSE_GRACE: Duration = Duration::from_secs(2);

/// What `serve` is started with (the command line turns its flags into this).
#[derive(Debug, Clone)]
pub struct ServeOptions {
    pub listen: SocketAddr,
    pub authorized_keys: PathBuf,
    pub operators: Option<PathBuf>,
    pub host_key: PathBuf,
    pub max_viewers: usize,
    pub pacing: Pacing,
    /// `--read-only` (or the config's): operators are refused too.
    pub read_only: bool,
    /// How long a connection may take to authenticate (`--login-grace`).
    pub login_grace: Duration,
    /// Connections still authenticating at once (`--max-startups`); at the cap the oldest of
    /// them is closed.
    pub max_startups: usize,
}

/// What every connection shares.
pub struct Shared {
    engine: EngineHandle,
    config: Config,
    keymap: Keymap,
    read_only: bool,
    pacing: Pacing,
    authorized: KeyFile,
    operators: Option<KeyFile>,
    max_viewers: usize,
    viewers: Arc<AtomicUsize>,
    stop: CancellationToken,
    /// Every session's task: on stop, connections close once their viewers have left.
    sessions: TaskTracker,
    login_grace: Duration,
    max_startups: usize,
    startups: admission::Startups,
    failures: admission::FailureLog,
    /// Authenticated connections now, and at most (each holds a descriptor and its buffers).
    authenticated: Arc<AtomicUsize>,
    max_authenticated: usize,
    /// Bumped whenever a key file's keys change: sessions look again at their own key.
    keys_changed: tokio::sync::watch::Sender<u64>,
}

/// A viewer's place among `--max-viewers`; given back when dropped.
pub struct ViewerSlot(Arc<AtomicUsize>);

impl ViewerSlot {
    /// One of at most `max` places counted by `count`, if one is free.
    fn take(count: &Arc<AtomicUsize>, max: usize) -> Option<ViewerSlot> {
        count
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < max).then_some(n + 1)
            })
            .ok()
            .map(|_| ViewerSlot(count.clone()))
    }
}

impl Drop for ViewerSlot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Shared {
    /// A place among the authenticated connections, if there is one.
    fn take_authenticated(&self) -> Option<ViewerSlot> {
        ViewerSlot::take(&self.authenticated, self.max_authenticated)
    }

    /// What `key` may do now, as the files were last read, with the comment it is listed by.
    fn standing_of(
        &self,
        key: &russh::keys::PublicKey,
        read_again: bool,
    ) -> Option<(Standing, String)> {
        let find = |file: &KeyFile| {
            if read_again {
                file.find(key)
            } else {
                file.listed(key)
            }
        };
        if let Some(listed) = self.operators.as_ref().and_then(find) {
            return Some((Standing::Operator, listed.comment));
        }
        find(&self.authorized).map(|l| (Standing::Viewer, l.comment))
    }

    fn take_slot(&self) -> Option<ViewerSlot> {
        ViewerSlot::take(&self.viewers, self.max_viewers)
    }
}

/// The server, ready to listen: keys read, host key made or loaded.
pub struct Server {
    shared: Arc<Shared>,
    config: Arc<russh::server::Config>,
    listener: TcpListener,
    pub host_key_fingerprint: String,
}

impl Server {
    /// Reads the key files and the host key and binds the address. Errors say what to fix.
    pub async fn bind(
        options: &ServeOptions,
        engine: EngineHandle,
        config: Config,
        keymap: Keymap,
        stop: CancellationToken,
    ) -> Result<Server, String> {
        let authorized = KeyFile::open(&options.authorized_keys)?;
        let operators = options
            .operators
            .as_deref()
            .map(KeyFile::open)
            .transpose()?;
        let host_key = key_files::host_key(&options.host_key)?;
        let host_key_fingerprint = key_files::fingerprint(host_key.public_key());
        let listener = TcpListener::bind(options.listen).await.map_err(|e| {
            format!(
                "cannot listen on {}: {e} (another address: --ssh-listen HOST:PORT)",
                options.listen
            )
        })?;
        let ssh = russh::server::Config {
            server_id: russh::SshId::Standard(
                format!("SSH-2.0-gantry_{}", env!("CARGO_PKG_VERSION")).into(),
            ),
            methods: russh::MethodSet::from(&[MethodKind::PublicKey][..]),
            auth_rejection_time: Duration::from_millis(500),
            auth_rejection_time_initial: Some(Duration::ZERO),
            // sshd's MaxAuthTries.
            max_auth_attempts: 6,
            keys: vec![host_key],
            inactivity_timeout: None,
            keepalive_interval: Some(KEEPALIVE),
            keepalive_max: KEEPALIVES_MISSED,
            nodelay: true,
            ..Default::default()
        };
        Ok(Server {
            shared: Arc::new(Shared {
                engine,
                config,
                keymap,
                read_only: options.read_only,
                pacing: options.pacing,
                authorized,
                operators,
                max_viewers: options.max_viewers,
                viewers: Arc::new(AtomicUsize::new(0)),
                stop,
                sessions: TaskTracker::new(),
                login_grace: options.login_grace,
                max_startups: options.max_startups,
                startups: Default::default(),
                failures: Default::default(),
                authenticated: Arc::new(AtomicUsize::new(0)),
                // Room for every viewer, and as many connections that only log in.
                max_authenticated: options.max_viewers.saturating_mul(2).max(4),
                keys_changed: tokio::sync::watch::channel(0).0,
            }),
            config: Arc::new(ssh),
            listener,
            host_key_fingerprint,
        })
    }

    pub fn local_addr(&self) -> Option<SocketAddr> {
        self.listener.local_addr().ok()
    }

    /// How many keys may watch, and how many may change things.
    pub fn key_counts(&self) -> (usize, usize) {
        (
            self.shared.authorized.len(),
            self.shared.operators.as_ref().map_or(0, KeyFile::len),
        )
    }

    /// Accepts connections until `stop`; then every viewer leaves its client's screen as it
    /// found it, and returns once every connection is closed.
    pub async fn run(self) {
        let Server {
            shared,
            config,
            listener,
            ..
        } = self;
        let connections = TaskTracker::new();
        tokio::spawn(revoke::watch_key_files(shared.clone()));
        loop {
            let accepted = tokio::select! {
                _ = shared.stop.cancelled() => break,
                a = listener.accept() => a,
            };
            let (socket, peer) = match accepted {
                Ok(a) => a,
                Err(e) => {
                    tracing::warn!(error = %e, "accepting a connection");
                    // Out of descriptors, most likely: give the connections closing a moment.
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            };
            let admitted = shared.startups.admit(shared.max_startups);
            let handler = connection::Connection::new(shared.clone(), Some(peer), admitted.id);
            let config = config.clone();
            let shared = shared.clone();
            connections.spawn(async move {
                let id = admitted.id;
                // Not authenticated within the grace time: cut, wherever the login was.
                let grace = tokio::spawn({
                    let (shared, cut) = (shared.clone(), admitted.cut.clone());
                    async move {
                        tokio::time::sleep(shared.login_grace).await;
                        if shared.startups.leave(id) {
                            tracing::info!(peer = %peer, "closed: not authenticated within the login grace time");
                            cut.cancel();
                        }
                    }
                });
                let socket = admission::Cut::new(socket, admitted.cut);
                serve_connection(&shared, config, socket, handler, peer).await;
                grace.abort();
                shared.startups.leave(id);
            });
        }
        shared.startups.cut_all();
        // No new sessions from here on: `sessions.wait()` ends once the last viewer has left;
        // then every connection is closed, and the server is done.
        shared.sessions.close();
        connections.close();
        connections.wait().await;
    }
}

/// One connection, from the SSH handshake to its end; on stop, its viewers leave first.
async fn serve_connection(
    shared: &Arc<Shared>,
    config: Arc<russh::server::Config>,
    socket: admission::Cut<tokio::net::TcpStream>,
    handler: connection::Connection,
    peer: SocketAddr,
) {
    match russh::server::run_stream(config, socket, handler).await {
        Ok(running) => {
            let handle = running.handle();
            tokio::pin!(running);
            tokio::select! {
                _ = &mut running => return,
                _ = shared.stop.cancelled() => {}
            }
            // The session keeps running while its viewers leave (their stop is a child of this
            // one): their clients get their screens back first.
            let leave = async {
                shared.sessions.wait().await;
                // A client whose sessions have ended closes the connection itself (and exits
                // 0); one that does not is told, after a moment.
                tokio::time::sleep(CLOSE_GRACE).await;
                let _ = handle
                    .disconnect(
                        russh::Disconnect::ByApplication,
                        "gantry serve stopped".into(),
                        String::new(),
                    )
                    .await;
            };
            tokio::select! {
                _ = &mut running => {}
                _ = leave => { let _ = running.await; }
            }
        }
        Err(e) => {
            tracing::debug!(peer = %peer, error = %e, "connection ended before it began")
        }
    }
}
