//! The TUI test harness, shared by the TUI tests: App states built from plain values (the events
//! workers would send), with fixed timestamps so that what is drawn does not depend on the clock.
//!
//! This module names the fixed world the pieces share (the place, the attempts, the pods, the
//! node, the clock) and re-exports the pieces, so that a test reads them all through
//! `gantry_test_support::tui::*`: the viewer and the keys that drive it (`driver`), what the tests
//! look at (`observe`), what the workers report of the cluster (`cluster`), of the Job
//! (`jobs`) and of the logs (`logs`), and the App states built from those reports (`states`).

mod cluster;
mod driver;
mod jobs;
mod logs;
mod observe;
mod states;

pub use cluster::*;
pub use driver::*;
pub use jobs::*;
pub use logs::*;
pub use observe::*;
pub use states::*;

// The fixed world every piece shares: where, what ran, and when.

pub use crate::CLUSTER;
pub const PLACE: &str = "demo-project/us-central1-a";
/// The first attempt keeps the Job's name; later ones get `-N`.
pub const ATTEMPT_1: &str = "ml-training-job";
pub const ATTEMPT_2: &str = "ml-training-job-2";
pub const FAILED_PODS: [&str; 3] = [
    "ml-training-job-7q2vd",
    "ml-training-job-b8kfw",
    "ml-training-job-zt5nm",
];
pub const POD_RUNNING: &str = "ml-training-job-2-4xk9p";
pub const POD_IMAGE: &str = "ml-training-job-2-9fzq7";
pub const POD_OOM: &str = "ml-training-job-2-m2c8d";
pub const NODE: &str = "gke-ml-gke-cluster-default-pool-1a2b3c4d-x1y2";
pub const LOGS_DIR: &str = "/home/op/.local/state/gantry/logs/ml-gke-cluster/ml-training-job-2";

/// The `now` every frame is drawn at.
pub fn now() -> jiff::Timestamp {
    "2025-06-01T12:00:00Z".parse().unwrap()
}

/// A fixed time `secs` before `now()`.
pub fn ago(secs: i64) -> Option<jiff::Timestamp> {
    Some(now() - jiff::SignedDuration::from_secs(secs))
}
