//! Spot fallback end to end, with the simulator as its own process and `gantry watch` as the
//! recoverer: a spot default pool whose zone has no capacity left for it (`--fault
//! stockout=default-pool:1`: the cluster gets its one node, and no more) cannot grow for a run
//! that needs two nodes; the run goes on on an on-demand pool Gantry makes; `gantry plan` keeps
//! that pool as the run's fallback while the run uses it, and `gantry up` removes it once the
//! run is over. A spot default pool preempted more often than allowed sends its run to an
//! on-demand pool too. On a kubeconfig context the option is refused with why.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::cli_flow::{Sim, newest};

/// A spot default pool of one node that may grow to three, and a run of two ranks that need a
/// node each, which falls back after 2 s without spot capacity and then needs some 1000
/// simulated seconds.
const SPOT_RUN: &str = "[cluster]\nspot = true\nnode-count = 1\n\
autoscaling = { min-nodes = 1, max-nodes = 3 }\n[job]\nbackoff-limit = 0\nindexed = true\n\
parallelism = 2\ncompletions = 2\n[job.resources]\ncpu = \"600m\"\n[job.recovery]\n\
spot-fallback = \"on-demand\"\nspot-wait = \"2s\"\n\
[job.env]\nSIM_LOG_LINES = \"1000\"\nSIM_LINES_PER_SECOND = \"1\"\n";

const KEPT: &str = "  = pool default-pool-on-demand: Gantry's on-demand fallback for default-pool, kept while a run uses it";

#[test]
fn a_run_out_of_spot_capacity_goes_on_on_demand_and_up_removes_the_pool_after_it() {
    let sim = Sim::start_with(
        &["--time-scale", "0.01", "--fault", "stockout=default-pool:1"],
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
    assert!(!plan.contains("- pool default-pool-on-demand"), "{plan}");

    // Its ranks run there: on the on-demand pool's nodes.
    let running = sim.until_status("the ranks run", |s| {
        newest(s)["pods"]
            .as_array()
            .is_some_and(|p| p.len() == 2 && p.iter().all(|p| p["phase"] == "Running"))
    });
    for pod in newest(&running)["pods"].as_array().unwrap() {
        let node = pod["node"].as_str().unwrap();
        let label = "jsonpath={.metadata.labels.cloud\\.google\\.com/gke-nodepool}";
        let pool = sim.kubectl(&["get", "node", node, "-o", label]);
        assert_eq!(
            String::from_utf8_lossy(&pool.stdout),
            "default-pool-on-demand",
            "{pod:#}"
        );
    }

    let done = sim.until_status("the run ends", |s| {
        matches!(newest(s)["status"].as_str(), Some("Succeeded" | "Failed"))
    });
    assert_eq!(newest(&done)["status"], "Succeeded", "{:#}", done["job"]);
    drop(watch);

    // No run needs it now: the plan removes it, and `up` does.
    let plan = sim.ok(&["plan"]);
    assert!(
        plan.contains("  - pool default-pool-on-demand: ")
            && plan.contains("Gantry's on-demand fallback for default-pool; no run needs it now"),
        "{plan}"
    );
    sim.ok(&["up", "--yes"]);
    let plan = sim.ok(&["plan"]);
    assert!(!plan.contains("default-pool-on-demand"), "{plan}");
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
