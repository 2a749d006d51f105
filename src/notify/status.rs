//! What `gantry notify status` shows of each target: how it is shown (its host only), how many
//! messages wait for it, how its last try went, and what it has been sent, refused, rate
//! limited or dropped — read from the outbox, without a deliverer running.

use std::path::Path;

use super::outbox::{Files, LastTry, Outbox, target_id};
use crate::config::{NotifyTarget, TargetKind};

#[derive(Debug, Clone, PartialEq)]
pub struct TargetStatus {
    /// Its place in the config, from 1 (`[[notify]] #1`).
    pub number: usize,
    pub kind: TargetKind,
    /// `slack https://hooks.slack.com/…`.
    pub label: String,
    /// Messages waiting for it.
    pub pending: usize,
    pub last: Option<LastTry>,
    pub delivered: u64,
    pub failed: u64,
    pub rate_limited: u64,
    pub dropped: u64,
}

/// Each of `targets` as the outbox in `dir` knows it.
pub fn status(targets: &[NotifyTarget], dir: &Path) -> std::io::Result<Vec<TargetStatus>> {
    Ok(of(targets, &Files::new(dir).read()?))
}

/// Each of `targets` as `outbox` knows it.
pub(crate) fn of(targets: &[NotifyTarget], outbox: &Outbox) -> Vec<TargetStatus> {
    targets
        .iter()
        .enumerate()
        .map(|(i, target)| {
            let id = target_id(target);
            let record = outbox.targets.get(&id).cloned().unwrap_or_default();
            TargetStatus {
                number: i + 1,
                kind: target.kind,
                label: target.label(),
                pending: outbox.pending.iter().filter(|p| p.target == id).count(),
                last: record.last,
                delivered: record.delivered,
                failed: record.failed,
                rate_limited: record.rate_limited,
                dropped: record.dropped,
            }
        })
        .collect()
}
