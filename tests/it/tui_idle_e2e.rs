//! Idle money through the whole product: the TUI (in tmux, 80×24, `--sim --time-scale 0.01`)
//! with `idle-reminder = "2s"` says what the idle cluster costs, with
//! `scale-to-zero-when-idle` sets its node pools to zero nodes through the simulator's
//! `setSize` (kubectl then sees no node), and a launch brings them back before the Job runs.
//! Skipped, saying so, where tmux is missing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gantry_test_support as common;

use common::tmux::Tmux;

#[test]
fn an_idle_cluster_is_named_with_its_cost() {
    let config = "idle-reminder = \"2s\"\n";
    let Some(t) = Tmux::start("idle-remind", "", config) else {
        return;
    };
    t.create_cluster();
    let screen = t.wait_for(&["no attempt running", "/h"]);
    assert!(!screen.contains("scaling the nodes to zero"), "{screen}");
    t.keys(&["q"]);
    t.wait_for(&["GANTRY-EXIT=0"]);
}

#[test]
fn an_idle_cluster_goes_to_zero_nodes_and_a_launch_brings_them_back() {
    let config = "idle-reminder = \"2s\"\nscale-to-zero-when-idle = true\n\
                  [job]\nbackoff-limit = 0\n[job.env]\nSIM_LOG_LINES = \"100000\"\n";
    let Some(t) = Tmux::start("idle-zero", "", config) else {
        return;
    };
    t.create_cluster();
    t.wait_for(&["node pools scaled to zero"]);
    let screen = t.wait_for(&["0 nodes", "RUNNING"]);
    assert!(screen.contains("ml-gke-cluster"), "{screen}");
    t.keys(&["l"]);
    t.wait_for(&["bringing the node pools back"]);
    t.wait_for(&["3 nodes", "Running"]);
    t.keys(&["q"]);
    t.wait_for(&["GANTRY-EXIT=0"]);
}
