//! A run's cost as an engine records it on its newest attempt (the annotation
//! `gantry.dev/cost`, `{"version":1,"usd":…,"asOf":…,"since":…,"partial":…,"nodes":…}`), so any
//! Gantry — another machine's, one started later, `gantry status` — carries on from it instead
//! of from nothing. The writes are `meter::ledger`'s.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

/// The version of the record's format this Gantry reads and writes.
pub const VERSION: u32 = 1;

/// What a run cost from `since` (its start) to `as_of`, as an engine recorded it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Recorded {
    pub version: u32,
    /// US dollars; `null` when a price was unknown.
    pub usd: Option<f64>,
    pub as_of: Timestamp,
    pub since: Timestamp,
    /// A lower bound: some of the time, nobody watched the nodes.
    pub partial: bool,
    /// The nodes alive at `asOf`, as the recording engine saw them: a reader that finds others
    /// alive now knows a node came or went since (not recorded yet).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<u32>,
}

impl Recorded {
    /// The record an annotation's text holds, if it is one of a format this Gantry reads.
    pub fn parse(text: &str) -> Option<Recorded> {
        serde_json::from_str::<Recorded>(text)
            .ok()
            .filter(|r| r.version == VERSION)
    }
}
