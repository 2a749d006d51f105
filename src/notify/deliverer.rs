//! The [`Notifier`]: the engine hands it events and goes on at once; a task of its own puts
//! them in the outbox and delivers what is due, one target's messages in order, the targets at
//! once. Nothing the engine does waits for a network or a disk: [`Notifier::send`] appends to
//! a queue in memory and wakes the task, which writes the outbox before it sends anything. A
//! Notifier dropped writes what it still holds to the outbox, so a message sent just before a
//! shutdown is delivered by the next Gantry process that starts from the same directory.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures::future::join_all;
use jiff::Timestamp;
use tokio::sync::{Notify, watch};

use super::admit::admit;
use super::outbox::{Files, target_id};
use super::schedule::{self, Claim, Tried};
use super::send::{Outcome, Sender};
use super::store::{ClusterStore, Store};
use super::{Delivery, Message, TargetStatus};
use crate::config::NotifyTarget;

/// The longest the task sleeps with nothing due: another process may have left messages for
/// the same targets.
const MAX_SLEEP: Duration = Duration::from_secs(300);
/// After the outbox could not be read or written, the wait before the next round.
const AFTER_FILE_ERROR: Duration = Duration::from_secs(5);
/// Messages waiting at the most in a ConfigMap outbox: with their texts bounded (4,000
/// characters) they stay well within the 1 MiB an object may hold.
const IN_CLUSTER_PENDING: usize = 100;

/// Delivers events to the HTTP targets of a config (`terminal` targets are told by viewers).
#[derive(Debug)]
pub struct Notifier {
    shared: Arc<Shared>,
    targets: Vec<NotifyTarget>,
    store: Store,
    token: u64,
    delivery: Delivery,
    task: tokio::task::JoinHandle<()>,
}

#[derive(Debug)]
struct Shared {
    queue: Mutex<Vec<Message>>,
    wake: Notify,
    /// Events given to `send` so far.
    sent: AtomicU64,
    progress: watch::Sender<Progress>,
}

#[derive(Debug, Clone, Copy, Default)]
struct Progress {
    /// Events written to the outbox so far.
    written: u64,
    /// Something is due now, or being tried.
    busy: bool,
}

impl Notifier {
    /// Starts delivering to `targets` through the outbox in `dir` (`<state dir>/notify`),
    /// with Gantry's delivery settings. Call it within a tokio runtime.
    pub fn start(targets: &[NotifyTarget], dir: &Path) -> Result<Notifier, String> {
        Notifier::start_with(targets, dir, Delivery::default())
    }

    /// Starts delivering through an outbox kept in a ConfigMap of the cluster (the watcher's,
    /// which outlives its pods), with fewer messages waiting at the most than a file holds.
    pub fn start_in_cluster(
        targets: &[NotifyTarget],
        store: ClusterStore,
    ) -> Result<Notifier, String> {
        let delivery = Delivery {
            max_pending: IN_CLUSTER_PENDING,
            ..Delivery::default()
        };
        Notifier::start_in(targets, Store::Cluster(store), delivery)
    }

    /// [`Notifier::start`] with other delivery settings (shorter waits, for tests).
    pub fn start_with(
        targets: &[NotifyTarget],
        dir: &Path,
        delivery: Delivery,
    ) -> Result<Notifier, String> {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot make the notification outbox {}: {e}", dir.display()))?;
        Notifier::start_in(targets, Store::Files(Files::new(dir)), delivery)
    }

    fn start_in(
        targets: &[NotifyTarget],
        store: Store,
        delivery: Delivery,
    ) -> Result<Notifier, String> {
        let sender = Sender::new(delivery.timeout)?;
        let (progress, _) = watch::channel(Progress {
            written: 0,
            busy: true,
        });
        let shared = Arc::new(Shared {
            queue: Mutex::new(Vec::new()),
            wake: Notify::new(),
            sent: AtomicU64::new(0),
            progress,
        });
        let token = rand::random();
        let worker = Worker {
            shared: shared.clone(),
            targets: targets
                .iter()
                .filter(|t| t.kind.is_http())
                .map(|t| (target_id(t), t.clone()))
                .collect(),
            all: targets.to_vec(),
            store: store.clone(),
            sender,
            token,
            delivery: delivery.clone(),
            failing: HashSet::new(),
            refused: HashSet::new(),
            full_said: false,
        };
        let task = tokio::spawn(worker.run());
        Ok(Notifier {
            shared,
            targets: targets.to_vec(),
            store,
            token,
            delivery,
            task,
        })
    }

    /// Hands `event` over for delivery and returns at once.
    pub fn send(&self, event: Message) {
        self.shared
            .queue
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(event);
        self.shared.sent.fetch_add(1, Ordering::SeqCst);
        self.shared.wake.notify_one();
    }

    /// Waits up to `timeout` until every event sent so far is in the outbox and nothing is
    /// due: each message delivered, refused, or waiting for a later try. False when the time
    /// ran out first. For a shutdown, and for tests.
    pub async fn idle_within(&self, timeout: Duration) -> bool {
        let sent = self.shared.sent.load(Ordering::SeqCst);
        let mut progress = self.shared.progress.subscribe();
        let idle = progress.wait_for(|p| p.written >= sent && !p.busy);
        matches!(tokio::time::timeout(timeout, idle).await, Ok(Ok(_)))
    }

    /// Each target, its waiting messages and its last delivery, as `gantry notify status`
    /// shows them.
    pub fn status(&self) -> std::io::Result<Vec<TargetStatus>> {
        Ok(super::status::of(&self.targets, &self.store.read()?))
    }
}

impl Drop for Notifier {
    /// What is still in memory goes to the outbox, and what this deliverer held is given back.
    fn drop(&mut self) {
        self.task.abort();
        let events = std::mem::take(
            &mut *self
                .shared
                .queue
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        );
        let (targets, token, max) = (&self.targets, self.token, self.delivery.max_pending);
        let kept = self.store.update(|outbox| {
            let now = Timestamp::now();
            admit(outbox, targets, &events, now, max);
            schedule::release(outbox, token, now);
        });
        if let Err(e) = kept {
            tracing::warn!(
                "notify: {} message(s) could not be kept in the outbox {}: {e}",
                events.len(),
                self.store.label()
            );
        }
    }
}

/// The task's own state.
struct Worker {
    shared: Arc<Shared>,
    /// The HTTP targets, by outbox id.
    targets: BTreeMap<String, NotifyTarget>,
    /// Every target, for the filters.
    all: Vec<NotifyTarget>,
    store: Store,
    sender: Sender,
    token: u64,
    delivery: Delivery,
    /// Targets whose last try failed (a failure is logged when it starts, not at every try).
    failing: HashSet<String>,
    /// Targets that refused a message (logged once).
    refused: HashSet<String>,
    /// Whether a full outbox was logged (once).
    full_said: bool,
}

impl Worker {
    async fn run(mut self) {
        let mut written = 0u64;
        let mut file_error_said = false;
        loop {
            let events = std::mem::take(
                &mut *self
                    .shared
                    .queue
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner),
            );
            let count = events.len() as u64;
            // Until the round ends, something may be being tried.
            self.shared.progress.send_modify(|p| p.busy = true);
            let round = self.round(events).await;
            let wait = match round {
                Ok(next_due) => {
                    file_error_said = false;
                    written += count;
                    let now = Timestamp::now();
                    let wait = next_due.map_or(MAX_SLEEP, |due| {
                        super::admit::since(now, due).min(MAX_SLEEP)
                    });
                    self.shared.progress.send_replace(Progress {
                        written,
                        busy: wait.is_zero(),
                    });
                    wait
                }
                Err((e, events)) => {
                    if !file_error_said {
                        tracing::warn!("notify: the outbox cannot be used: {e}; trying again");
                        file_error_said = true;
                    }
                    // The events stay in memory for the next round.
                    let mut queue = self
                        .shared
                        .queue
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner);
                    let later = std::mem::replace(&mut *queue, events);
                    queue.extend(later);
                    AFTER_FILE_ERROR
                }
            };
            if wait.is_zero() {
                continue;
            }
            tokio::select! {
                () = self.shared.wake.notified() => {}
                () = tokio::time::sleep(wait) => {}
            }
        }
    }

    /// Writes `events` to the outbox, tries what is due, records how it went; when the next
    /// message is due. On a file error, the events not written come back.
    async fn round(
        &mut self,
        events: Vec<Message>,
    ) -> Result<Option<Timestamp>, (std::io::Error, Vec<Message>)> {
        let ids: Vec<String> = self.targets.keys().cloned().collect();
        let (store, all, delivery, token) = (
            self.store.clone(),
            self.all.clone(),
            self.delivery.clone(),
            self.token,
        );
        let lease = lease(&delivery);
        let claimed = tokio::task::spawn_blocking(move || {
            let result = store.update(|outbox| {
                let now = Timestamp::now();
                let admitted = admit(outbox, &all, &events, now, delivery.max_pending);
                let (claims, given_up) =
                    schedule::claim(outbox, &ids, now, token, lease, &delivery);
                (admitted, claims, given_up)
            });
            result.map_err(|e| (e, events))
        })
        .await
        .unwrap_or_else(|e| Err((std::io::Error::other(e), Vec::new())))?;
        let (admitted, claims, given_up) = claimed;
        if admitted.dropped > 0 {
            if self.full_said {
                tracing::debug!("notify: the outbox is full: dropped {}", admitted.dropped);
            } else {
                tracing::warn!(
                    "notify: the outbox is full ({} messages): dropping the oldest of the least severe (`gantry notify status` counts them)",
                    self.delivery.max_pending
                );
                self.full_said = true;
            }
        }
        for g in given_up {
            tracing::warn!(
                "notify: {}: gave up on a message after {} tries: {}",
                self.label(&g.target),
                g.tries,
                g.last_error.as_deref().unwrap_or("never tried")
            );
        }
        let results = self.deliver(claims).await;
        let (store, delivery) = (self.store.clone(), self.delivery.clone());
        let ids: Vec<String> = self.targets.keys().cloned().collect();
        tokio::task::spawn_blocking(move || {
            store.update(|outbox| {
                schedule::record(outbox, &results, Timestamp::now(), &delivery);
                schedule::next_due(outbox, &ids)
            })
        })
        .await
        .unwrap_or_else(|e| Err(std::io::Error::other(e)))
        .map_err(|e| (e, Vec::new()))
    }

    /// Tries every claim: each target's in order, the targets at once. After a try worth
    /// repeating, that target's other claims wait as long as it does.
    async fn deliver(&mut self, claims: Vec<Claim>) -> Vec<(u64, Tried)> {
        let mut by_target: BTreeMap<String, Vec<Claim>> = BTreeMap::new();
        for claim in claims {
            by_target
                .entry(claim.target.clone())
                .or_default()
                .push(claim);
        }
        let tries = by_target.into_iter().filter_map(|(id, claims)| {
            let target = self.targets.get(&id)?.clone();
            let sender = self.sender.clone();
            let delivery = self.delivery.clone();
            Some(async move {
                let mut results = Vec::with_capacity(claims.len());
                let mut deferred: Option<Timestamp> = None;
                for claim in claims {
                    if let Some(until) = deferred {
                        results.push((claim.id, Tried::Deferred(until)));
                        continue;
                    }
                    let outcome = sender.send(&target, &claim.event).await;
                    if let Outcome::Retry { after, .. } = &outcome {
                        let wait = schedule::retry_wait(*after, 1, &delivery);
                        deferred = Some(schedule::later(Timestamp::now(), wait));
                    }
                    results.push((claim.id, Tried::Sent(outcome)));
                }
                (id, results)
            })
        });
        let mut all = Vec::new();
        for (id, results) in join_all(tries).await {
            for (_, tried) in &results {
                if let Tried::Sent(outcome) = tried {
                    self.log(&id, outcome);
                }
            }
            all.extend(results);
        }
        all
    }

    /// Logs a target's failures when they start and its recovery, not every try.
    fn log(&mut self, id: &str, outcome: &Outcome) {
        let label = self.label(id);
        match outcome {
            Outcome::Delivered { .. } => {
                if self.failing.remove(id) {
                    tracing::info!("notify: {label}: delivering again");
                }
            }
            Outcome::Retry { why, .. } => {
                if self.failing.insert(id.to_string()) {
                    tracing::warn!("notify: {label}: {why}; will try again");
                } else {
                    tracing::debug!("notify: {label}: {why}");
                }
            }
            Outcome::Refused { why } => {
                if self.refused.insert(id.to_string()) {
                    tracing::warn!(
                        "notify: {label} refused a message: {why}; it is not sent again (check the URL with `gantry notify test`)"
                    );
                } else {
                    tracing::debug!("notify: {label} refused a message: {why}");
                }
            }
        }
    }

    fn label(&self, id: &str) -> String {
        self.targets
            .get(id)
            .map_or_else(|| id.to_string(), NotifyTarget::label)
    }
}

/// How long a claim holds: every claimed message of a target tried in turn, with room to spare.
fn lease(delivery: &Delivery) -> Duration {
    let per_round = u32::try_from(delivery.per_round).unwrap_or(u32::MAX);
    delivery.timeout.saturating_mul(per_round) + Duration::from_secs(30)
}
