//! The true cost of a run end to end, with the simulator as its own process and `gantry watch`
//! as the engine that watches the nodes and records the run's figure on its attempt: once the
//! cluster is scaled to zero nodes, the run's cost goes on growing at GKE's fee alone — slopes
//! read from the figures `gantry status --json` reports and the times they are as of, never
//! from how long the test waited.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use jiff::{SignedDuration, Timestamp};
use serde_json::Value;

use crate::cli_flow::{Sim, newest};

/// A run that goes on for the whole test (some 100000 simulated seconds of log lines).
const LONG_RUN: &str = "[job]\nbackoff-limit = 6\n[job.env]\n\
SIM_LOG_LINES = \"100000\"\nSIM_LINES_PER_SECOND = \"1\"\n";
/// GKE's fee, and the seed's three n1-standard-1 with their 100 GB pd-balanced boot disks, per
/// second, as the price snapshot says.
const FEE: f64 = 0.10 / 3600.0;
const FULL: f64 = (0.10 + 3.0 * (0.0475 + 100.0 * 0.1 / 730.0)) / 3600.0;

/// The run's figure in a status: dollars, as of when, and the record it carries on from.
#[derive(Debug, Clone, Copy)]
struct Reading {
    usd: f64,
    as_of: Timestamp,
    recorded: Option<Timestamp>,
    partial: bool,
}

fn reading(status: &Value) -> Option<Reading> {
    let job = &status["job"];
    let time = |key: &str| job[key].as_str().and_then(|t| t.parse().ok());
    Some(Reading {
        usd: job["costSoFar"].as_f64()?,
        as_of: time("costAsOf")?,
        recorded: time("costRecordedAsOf"),
        partial: job["costSoFarPartial"].as_bool()?,
    })
}

/// Dollars per second between two readings.
fn slope(a: &Reading, b: &Reading) -> f64 {
    let seconds = b.as_of.duration_since(a.as_of).as_secs_f64();
    assert!(seconds > 0.0, "{a:?} {b:?}");
    (b.usd - a.usd) / seconds
}

/// A reading at least three seconds after `after`, carrying on from the same record (else the
/// slope between them would mix two records' views).
fn three_seconds_after(sim: &Sim, after: &Reading) -> Option<Reading> {
    let later = sim.until_status("three seconds pass", |s| {
        reading(s)
            .is_some_and(|r| r.as_of.duration_since(after.as_of) >= SignedDuration::from_secs(3))
    });
    reading(&later).filter(|r| r.recorded == after.recorded)
}

/// Two readings three seconds apart carrying on from the same record, the first satisfying
/// `first`; tried again from a new first reading while records come between them.
fn two_readings(sim: &Sim, what: &str, first: impl Fn(&Value) -> bool) -> (Reading, Reading) {
    let deadline = std::time::Instant::now() + gantry_test_support::WAIT_BOUND;
    loop {
        let a = reading(&sim.until_status(what, |s| reading(s).is_some() && first(s))).unwrap();
        if let Some(b) = three_seconds_after(sim, &a) {
            return (a, b);
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{what}: records kept coming between two readings"
        );
    }
}

#[test]
fn a_runs_cost_grows_at_the_fee_alone_once_its_cluster_is_scaled_to_zero() {
    let sim = Sim::start_with(&["--time-scale", "0.005"], LONG_RUN);
    sim.ok(&["up", "--wait"]);
    let _watch = sim.watch();
    sim.until_status("the engine holds the Lease", |s| {
        s["job"]["recoverer"].is_string()
    });
    sim.ok(&["launch"]);

    // Three nodes: the run's cost grows at their price and the fee.
    let (a, b) = two_readings(&sim, "the engine records the run's cost", |s| {
        newest(s)["status"] == "Running" && !s["job"]["costRecordedAsOf"].is_null()
    });
    assert!(
        !a.partial && !b.partial,
        "watched from the start: {a:?} {b:?}"
    );
    let full = slope(&a, &b);
    assert!(
        (0.5 * FULL..2.0 * FULL).contains(&full),
        "{full} $/s with three nodes, {FULL} expected"
    );

    // Scaled to zero nodes: the engine saw them go and recorded the run's figure since.
    sim.set_pool_size("default-pool", 0);
    let gone = sim.until_status("the nodes are gone", |s| s["cluster"]["nodeCount"] == 0);
    let gone_at = reading(&gone).unwrap();
    let (c, d) = two_readings(&sim, "the engine records the run's cost again", |s| {
        reading(s).is_some_and(|r| r.recorded.is_some() && r.recorded > b.recorded)
            && s["cluster"]["nodeCount"] == 0
    });
    assert!(!c.partial && !d.partial, "{c:?} {d:?}");
    assert!(
        c.usd >= b.usd,
        "the nodes' lives until they went are kept: {b:?} then {c:?} (gone at {gone_at:?})"
    );
    let idle = slope(&c, &d);
    assert!(
        idle < 0.6 * full,
        "{idle} $/s at zero nodes, {full} $/s with three"
    );
    assert!(
        (0.5 * FEE..2.0 * FEE).contains(&idle),
        "the fee goes on at zero nodes: {idle} $/s, {FEE} expected"
    );
}
