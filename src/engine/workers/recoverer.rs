//! Keeps the recoverer's Lease (`k8s::lease`) while connected: an engine that may change the
//! cloud takes it when nobody holds it and renews it while it does; a read-only one (the gate
//! refuses it a recovery) only reads who holds it. Either way the model is told who holds it,
//! when that changes. An engine that stops gives the Lease up, so another takes over at once.
//! Each renewal (or read) is also a tick: time alone can call for a recovery, or be news.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::Shared;
use crate::engine::{Command, Gate, Principal, Report};
use crate::k8s::lease::{self, Holder, RENEW_EVERY};

/// Who this engine is to the others: its principal and process.
pub fn identity() -> String {
    format!("{} pid {}", Principal::local().name(), std::process::id())
}

pub async fn keep(shared: Arc<Shared>, client: kube::Client, cancel: CancellationToken) {
    let job = &shared.session.config.job;
    let me = identity();
    // Taking the Lease is a write: only an engine whose gate would let a recovery through.
    let probe = Command::Recover {
        attempt: String::new(),
        why: String::new(),
        next: 0,
        most: 0,
    };
    let may_hold = !Gate::engine("recovery", shared.session.read_only).refuses(&probe);
    let mut told: Option<Option<Holder>> = None;
    loop {
        let found = if may_hold {
            lease::hold(
                &client,
                &job.namespace,
                &job.name,
                &me,
                jiff::Timestamp::now(),
            )
            .await
        } else {
            lease::read(&client, &job.namespace, &job.name, &me).await
        };
        match found {
            Ok(holder) if told.as_ref() != Some(&holder) => {
                let _ = shared.tx.send(Report::Recoverer(holder.clone()));
                told = Some(holder);
            }
            Ok(_) => {}
            Err(e) => tracing::debug!(error = %e, "the recoverer's Lease"),
        }
        // Time alone brings things about: a pod waiting past `spot-wait` (the recoverer
        // decides), a run with no progress for `stall-after` (every engine shows it).
        let _ = shared.tx.send(Report::Tick);
        tokio::select! {
            _ = cancel.cancelled() => break,
            _ = tokio::time::sleep(RENEW_EVERY) => {}
        }
    }
    if told.flatten().is_some_and(|h| h.mine) {
        let release = lease::release(&client, &job.namespace, &job.name, &me);
        let _ = tokio::time::timeout(std::time::Duration::from_secs(2), release).await;
    }
}
