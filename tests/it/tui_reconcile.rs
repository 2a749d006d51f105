//! GKE reconciling a running cluster (an auto-upgrade, a node-pool change), end to end: the real
//! binary in tmux on `--sim --fault reconcile=2`. The API server serves throughout, so the TUI
//! stays connected: logs go on and launching works during RECONCILING and after it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gantry_test_support as common;

use common::tmux::Tmux;

#[test]
fn a_reconciling_cluster_keeps_the_tui_connected_and_launching() {
    let job = "[job]\n[job.env]\nSIM_LOG_LINES = \"40\"\n";
    let Some(t) = Tmux::start("reconcile", "--fault reconcile=2", job) else {
        return;
    };
    t.create_cluster();
    // RUNNING for two seconds, then RECONCILING for two.
    t.wait_for(&["RECONCILING"]);
    t.keys(&["l"]);
    let screen = t.wait_for(&["ml-training-job", "epoch"]);
    assert!(!screen.contains("connecting to the cluster"), "{screen}");
    // Back to RUNNING: the attempt ran to its end, and the next launch works too.
    t.wait_for(&["RUNNING", "Succeeded"]);
    t.keys(&["l"]);
    t.wait_for(&["ml-training-job-2"]);
    t.keys(&["q"]);
    t.wait_for(&["GANTRY-EXIT=0"]);
}
