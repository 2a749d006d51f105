//! GKE's cluster autoscaler, for node pools whose autoscaling is on. Every ten simulated seconds,
//! as the real one scans, it looks at the pods kube-scheduler could not place: when a new node
//! of some pool would take one, that pool's instance group grows (`TriggeredScaleUp`) and the
//! node registers after the instance boots, unless Compute Engine refuses the instance (quota,
//! stockout: `FailedScaleUp`, and the group backs off); when none would, the pod is told why
//! (`NotTriggerScaleUp`). A node of such a pool that has had no pods for ten simulated minutes
//! is marked and removed (`ScaleDown`), down to the pool's minimum. It runs from when the
//! cluster's API server starts until the cluster goes, and waits while an operation changes the
//! cluster. No GKE operation is made: the autoscaler resizes instance groups directly.

mod groups;
mod messages;
mod plan;
mod scale_down;
mod scale_up;
#[cfg(test)]
mod tests;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

use super::GkeApi;
use super::clusters::ClusterKey;
use crate::kube::cluster::ClusterState;
use crate::kube::events::EventType;

/// The autoscaler's scan interval (`--scan-interval`, 10 s), simulated.
const SCAN_INTERVAL_SECS: f64 = 10.0;
/// The shortest real wait between scans, so a time scale of 0 cannot spin.
const MIN_SCAN: Duration = Duration::from_millis(20);

/// What the autoscaler of one cluster works on.
#[derive(Clone)]
struct Ctx {
    api: Arc<GkeApi>,
    key: ClusterKey,
    state: Arc<ClusterState>,
}

impl Ctx {
    /// A simulated span as real time.
    fn scaled(&self, simulated_secs: f64) -> Duration {
        self.api.shared.clock.scaled_secs(simulated_secs)
    }

    fn event(&self, object: &serde_json::Value, kind: EventType, reason: &str, message: &str) {
        self.state.events.record(
            &self.state.store,
            object,
            kind,
            reason,
            message,
            messages::COMPONENT,
        );
    }
}

/// A group whose scale-up failed is not tried again until `until`; the next wait is `next`.
#[derive(Debug, Clone, Copy)]
struct Backoff {
    until: Instant,
    next_secs: f64,
}

/// What the autoscaler remembers from one scan to the next.
#[derive(Debug, Default)]
struct Memory {
    last_scale_up: Option<Instant>,
    /// When each pending pod was last told it triggers no scale-up.
    told: HashMap<String, Instant>,
    /// Since when each node of an autoscaled pool has had no pods.
    idle_since: HashMap<String, Instant>,
    /// Nodes marked for removal.
    removing: HashSet<String>,
    /// By group id; written by the tasks that find a scale-up failed.
    backoff: Arc<Mutex<HashMap<String, Backoff>>>,
}

/// Starts the autoscaler of a cluster whose API server just started.
pub fn start(api: Arc<GkeApi>, key: ClusterKey, state: Arc<ClusterState>) {
    tokio::spawn(run(Ctx { api, key, state }));
}

async fn run(ctx: Ctx) {
    // As the autoscaler counts its start as its last scale-up (`initialScaleTime`), nothing is
    // scaled down in its first ten minutes.
    let mut memory = Memory {
        last_scale_up: Some(Instant::now()),
        ..Memory::default()
    };
    loop {
        let wait = ctx.scaled(SCAN_INTERVAL_SECS).max(MIN_SCAN);
        tokio::select! {
            _ = ctx.state.stop.cancelled() => return,
            _ = ctx.api.stop.cancelled() => return,
            _ = tokio::time::sleep(wait) => {}
        }
        let Some(view) = groups::read(&ctx.api, &ctx.key, &ctx.state) else {
            return;
        };
        if view.groups.is_empty() {
            continue;
        }
        if !view.busy {
            scale_up::run(&ctx, &view, &mut memory);
        }
        scale_down::run(&ctx, &view, &mut memory);
    }
}
