//! Spot fallback end to end, with the simulator as its own process and `gantry watch` as the
//! recoverer: a spot GPU pool the zone has no capacity for (`--fault stockout=gpu-pool`) sends
//! the run to an on-demand pool Gantry makes; `gantry plan` keeps that pool as the run's
//! fallback while the run uses it, and `gantry up` removes it once the run is over. A spot
//! default pool preempted more often than allowed sends its run to an on-demand pool too. On a
//! kubeconfig context the option is refused with why.
//!
//! The stockout is on the GPU pool, not the default pool: the simulator makes a new cluster's
//! nodes under the same fault (so a cluster whose default pool is out of capacity cannot be
//! made), and a default pool needs at least one node; a GPU pool may autoscale from zero.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::cli_flow::{Sim, newest};

/// A spot GPU pool that autoscales from zero, and a GPU run that falls back after 2 s without
/// spot capacity and then needs some 1000 simulated seconds.
const SPOT_RUN: &str = "[cluster.gpu-pool]\nspot = true\nnode-count = 0\n\
autoscaling = { min-nodes = 0, max-nodes = 1 }\n[job]\nbackoff-limit = 0\n\
[job.resources]\ngpus = 1\n[job.recovery]\nspot-fallback = \"on-demand\"\nspot-wait = \"2s\"\n\
[job.env]\nSIM_LOG_LINES = \"1000\"\nSIM_LINES_PER_SECOND = \"1\"\n";

const KEPT: &str = "  = pool gpu-pool-on-demand: Gantry's on-demand fallback for gpu-pool, kept while a run uses it";

#[test]
fn a_run_out_of_spot_capacity_goes_on_on_demand_and_up_removes_the_pool_after_it() {
    let sim = Sim::start_with(
        &["--time-scale", "0.01", "--fault", "stockout=gpu-pool"],
        SPOT_RUN,
    );
    sim.ok(&["up", "--wait"]);
    let watch = sim.watch();
    sim.until_status("the engine holds the Lease", |s| {
        s["job"]["recoverer"].is_string()
    });
    sim.ok(&["launch"]);
    let moved = sim.until_status("the run falls back", |s| {
        newest(s)["name"] == "ml-training-job-2"
    });
    assert_eq!(moved["job"]["recoveries"], 1, "{:#}", moved["job"]);

    // While the run uses it, the fallback is Gantry's own: kept, not drift.
    let plan = sim.ok(&["plan"]);
    assert!(plan.contains(KEPT), "{plan}");
    assert!(!plan.contains("- pool gpu-pool-on-demand"), "{plan}");

    let done = sim.until_status("the run ends", |s| {
        matches!(newest(s)["status"].as_str(), Some("Succeeded" | "Failed"))
    });
    assert_eq!(newest(&done)["status"], "Succeeded", "{:#}", done["job"]);
    drop(watch);

    // No run needs it now: the plan removes it, and `up` does.
    let plan = sim.ok(&["plan"]);
    assert!(
        plan.contains("  - pool gpu-pool-on-demand: ")
            && plan.contains("Gantry's on-demand fallback for gpu-pool; no run needs it now"),
        "{plan}"
    );
    sim.ok(&["up", "--yes"]);
    let plan = sim.ok(&["plan"]);
    assert!(!plan.contains("gpu-pool-on-demand"), "{plan}");
}

#[test]
fn a_run_preempted_more_often_than_allowed_goes_on_on_demand() {
    let config = "[cluster]\nspot = true\n[job]\nbackoff-limit = 2\n[job.recovery]\n\
spot-fallback = \"on-demand\"\nspot-max-preemptions = 2\n[job.env]\n\
SIM_LOG_LINES = \"1000\"\nSIM_LINES_PER_SECOND = \"1\"\n";
    let sim = Sim::start_with(&["--time-scale", "0.01", "--fault", "preempt=1:3"], config);
    sim.ok(&["up", "--wait"]);
    let _watch = sim.watch();
    sim.until_status("the engine holds the Lease", |s| {
        s["job"]["recoverer"].is_string()
    });
    sim.ok(&["launch"]);
    sim.until_status("the run falls back", |s| {
        newest(s)["name"] == "ml-training-job-2"
    });
    let plan = sim.ok(&["plan"]);
    assert!(
        plan.contains("  = pool default-pool-on-demand: Gantry's on-demand fallback for default-pool, kept while a run uses it"),
        "{plan}"
    );
    let done = sim.until_status("the run ends", |s| {
        matches!(newest(s)["status"].as_str(), Some("Succeeded" | "Failed"))
    });
    assert_eq!(newest(&done)["status"], "Succeeded", "{:#}", done["job"]);
    assert_eq!(done["job"]["recoveries"], 1, "{:#}", done["job"]);
}

#[test]
fn spot_fallback_on_a_kubeconfig_context_is_refused_with_why() {
    let sim = Sim::start_with(
        &["--time-scale", "0.01"],
        "[job.recovery]\nspot-fallback = \"on-demand\"\n",
    );
    let out = sim.gantry(&["--context", "kind-dev", "status"]);
    assert_eq!(out.status.code(), Some(2));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("spot-fallback") && said.contains("context kind-dev"),
        "{said}"
    );
}
