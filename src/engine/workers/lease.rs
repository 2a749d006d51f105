//! The keeper of the recoverer's Lease (`k8s::lease`), while connected: it reads the Lease
//! every few seconds and tells the world what it found and when (by the engine's monotonic
//! clock: what a holder's silence is judged by), renews it while this engine holds it, and
//! carries out a take the recoverer policy asked for through the gate. It decides nothing: who
//! takes the Lease, and when, is the policy's. An engine that stops gives the Lease up, so
//! another takes over at once. Each reading is also a tick: time alone can call for a
//! recovery, a takeover, or be news.
//!
//! A holder keeps believing it holds the Lease while it cannot read it (its commands to the
//! cluster fail anyway): it is the one that tells that the cluster is out of reach. It lets go
//! when it reads a record that names another.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Instant;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::Shared;
use crate::engine::world::lease::{Reading, WatcherSeen};
use crate::engine::{Principal, Report};
use crate::k8s::lease::{self, Holder, Outcome, RENEW_EVERY, Record};

/// What the policy asked of the keeper.
pub enum Order {
    /// Take the Lease: the record it judged unheld or silent.
    Take { judged: Option<Record> },
    /// Let it go, for the cluster's watcher (ready) to take.
    GiveWay,
}

/// Engines started in this process so far (the second and later ones are told apart).
static ENGINES: AtomicU32 = AtomicU32::new(0);

/// Who this engine is to the others: its principal and process (and, for a second engine of
/// one process, its number); in the cluster, its pod.
pub fn identity(in_cluster: bool) -> Holder {
    let n = ENGINES.fetch_add(1, Ordering::Relaxed) + 1;
    let pod = std::env::var("POD_NAME").ok().filter(|p| !p.is_empty());
    let me = match pod {
        Some(pod) if in_cluster => pod,
        _ => format!("{} pid {}", Principal::local().name(), std::process::id()),
    };
    Holder {
        identity: if n == 1 { me } else { format!("{me} #{n}") },
        in_cluster,
    }
}

/// Hands an order to the keeper (none while not connected: the policy asks again).
pub fn order(shared: &Shared, order: Order) {
    let takes = shared.lease_takes.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(takes) = takes.as_ref() {
        let _ = takes.send(order);
    }
}

/// The cluster's watcher as its Deployment says, for a local engine (None: there is none, or
/// it cannot be read).
async fn watcher(client: &kube::Client, config: &crate::config::Config) -> Option<WatcherSeen> {
    use k8s_openapi::api::apps::v1::Deployment;
    let api: kube::Api<Deployment> =
        kube::Api::namespaced(client.clone(), &crate::watcher::namespace(config));
    let deployment = api
        .get_opt(&crate::watcher::name(&config.job.name))
        .await
        .ok()
        .flatten()?;
    Some(WatcherSeen {
        ready: deployment
            .status
            .as_ref()
            .and_then(|s| s.ready_replicas)
            .unwrap_or(0)
            > 0,
        version: deployment
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(crate::watcher::VERSION_LABEL))
            .map(|v| crate::sanitize::one_line(v)),
        there: crate::watcher::planned::There::of(&deployment),
    })
}

pub async fn keep(shared: Arc<Shared>, client: kube::Client, cancel: CancellationToken) {
    let (takes_tx, mut takes) = mpsc::unbounded_channel();
    *shared.lease_takes.lock().unwrap_or_else(|p| p.into_inner()) = Some(takes_tx);
    let job = &shared.session.config.job;
    let me = shared.identity.clone();
    let clock = shared.session.clock;
    let mut holding = false;
    let tell = |record: Option<Record>, mine: bool| {
        let seen = Reading { record, mine };
        let _ = shared.tx.send(Report::Lease {
            seen,
            at: Instant::now(),
        });
    };
    loop {
        let found = if holding {
            lease::renew(&client, &job.namespace, &job.name, &me, clock.wall()).await
        } else {
            lease::get(&client, &job.namespace, &job.name)
                .await
                .map(Outcome::Theirs)
        };
        match found {
            Ok(Outcome::Mine(record)) => tell(Some(record), true),
            Ok(Outcome::Theirs(record)) => {
                holding = false;
                tell(record, false);
            }
            Err(e) => tracing::debug!(error = %e, "the recoverer's Lease"),
        }
        if !me.in_cluster {
            let seen = watcher(&client, &shared.session.config).await;
            let _ = shared.tx.send(Report::Watcher(seen));
        }
        // Time alone brings things about: a pod waiting past `spot-wait`, a run with no
        // progress for `stall-after`, a holder silent for the Lease's duration.
        let _ = shared.tx.send(Report::Tick);
        tokio::select! {
            _ = cancel.cancelled() => break,
            _ = tokio::time::sleep(RENEW_EVERY) => {}
            Some(order) = takes.recv() => {
                let judged = match order {
                    Order::Take { judged } => judged,
                    Order::GiveWay => {
                        if holding && lease::release(&client, &job.namespace, &job.name, &me.identity).await {
                            holding = false;
                            tell(None, false);
                        }
                        continue;
                    }
                };
                if holding {
                    continue;
                }
                let taken = lease::take(
                    &client,
                    &job.namespace,
                    &job.name,
                    &me,
                    judged.as_ref(),
                    clock.wall(),
                )
                .await;
                match taken {
                    Ok(Outcome::Mine(record)) => {
                        holding = true;
                        tell(Some(record), true);
                    }
                    Ok(Outcome::Theirs(record)) => tell(record, false),
                    Err(e) => {
                        tracing::debug!(error = %e, "taking the recoverer's Lease");
                        tell(judged, false);
                    }
                }
            }
        }
    }
    *shared.lease_takes.lock().unwrap_or_else(|p| p.into_inner()) = None;
    if holding {
        let release = lease::release(&client, &job.namespace, &job.name, &me.identity);
        if let Ok(true) = tokio::time::timeout(std::time::Duration::from_secs(2), release).await {
            tell(None, false);
        }
    }
}
