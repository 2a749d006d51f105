//! How an attempt ended when Gantry ended it, in words every layer shares: why
//! ([`EndedBy`], the annotation `gantry.dev/ended-by`), and — for an attempt a recovery or a
//! spot fallback replaced — what replaced it, by whom and when ([`Recovered`], the annotation
//! `gantry.dev/recovered`). A replaced attempt is suspended, never deleted: the run's record
//! keeps it, with its pods' ends and cost.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

/// Why Gantry ended an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EndedBy {
    /// A rank of its gang was preempted: the run was restarted whole.
    Preempted,
    /// It made no headway for `stall-after`, and `stall-action` ends such an attempt.
    Stall,
    /// Spot capacity deserted its pool: the run went on on the pool's on-demand fallback.
    SpotFallback,
    /// Its run had had `max-recoveries` recoveries: the run ended as failed.
    MaxRecoveries,
    /// Its run's budget was spent (`budget-action`).
    Budget,
    /// Its run ran longer than `max-run-time`.
    MaxRunTime,
    /// A GPU of it did next to nothing for `gpu-idle-after`, and `gpu-idle-action` ends such an
    /// attempt.
    GpuIdle,
}

impl EndedBy {
    pub const ALL: [EndedBy; 7] = [
        EndedBy::Preempted,
        EndedBy::Stall,
        EndedBy::SpotFallback,
        EndedBy::MaxRecoveries,
        EndedBy::Budget,
        EndedBy::MaxRunTime,
        EndedBy::GpuIdle,
    ];

    /// The name scripts see (`gantry status --json`'s `endedBy`) and the annotation holds.
    pub fn name(self) -> &'static str {
        match self {
            EndedBy::Preempted => "preempted",
            EndedBy::Stall => "stall",
            EndedBy::SpotFallback => "spot-fallback",
            EndedBy::MaxRecoveries => "max-recoveries",
            EndedBy::Budget => "budget",
            EndedBy::MaxRunTime => "max-run-time",
            EndedBy::GpuIdle => "gpu-idle",
        }
    }

    pub fn parse(name: &str) -> Option<EndedBy> {
        EndedBy::ALL.into_iter().find(|e| e.name() == name)
    }
}

impl std::fmt::Display for EndedBy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// An attempt a recovery replaced, as recorded on it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Recovered {
    /// What happened, in words: `rank 1 of ml-training-job-3 preempted`.
    pub why: String,
    /// Who recovered it (a principal's name: `gantry (recovery)`).
    pub by: String,
    pub at: Timestamp,
    /// The attempt that followed it.
    pub into: String,
}

impl Recovered {
    /// The record an annotation's text holds, if it is one.
    pub fn parse(text: &str) -> Option<Recovered> {
        serde_json::from_str(text).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_reason_is_read_back_by_its_name() {
        for e in EndedBy::ALL {
            assert_eq!(EndedBy::parse(e.name()), Some(e));
            let json = serde_json::to_string(&e).unwrap_or_default();
            assert_eq!(json, format!("\"{}\"", e.name()));
        }
        assert_eq!(EndedBy::parse("boredom"), None);
    }
}
