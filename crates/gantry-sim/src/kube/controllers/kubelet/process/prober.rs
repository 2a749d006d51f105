//! A process container's probes while it runs, as the kubelet's probe workers run them: the
//! startup probe first (nothing else runs until it succeeds), then readiness and liveness
//! side by side, each after its initial delay and every period (on the simulator's clock),
//! counting consecutive results against its thresholds. Readiness sets the container's `ready`;
//! a liveness (or startup) probe that fails `failureThreshold` times in a row ends the watch,
//! and the container is killed. Each failure is an `Unhealthy` event with the prober's words.

use std::net::IpAddr;
use std::time::Duration;

use serde_json::Value;

use super::probes::{InContainer, Probe, check};
use super::status;
use crate::kube::controllers::kubelet::context::PodCtx;
use crate::kube::events::EventType;

/// The shortest real wait between two probes, however fast the simulated clock runs.
const FLOOR: Duration = Duration::from_millis(50);

/// The probes a container has.
#[derive(Debug, Clone, Default)]
pub struct Probes {
    pub startup: Option<Probe>,
    pub readiness: Option<Probe>,
    pub liveness: Option<Probe>,
}

impl Probes {
    pub fn of(container: &Value, pod_ip: IpAddr) -> Self {
        Self {
            startup: Probe::of(container, "startupProbe", pod_ip),
            readiness: Probe::of(container, "readinessProbe", pod_ip),
            liveness: Probe::of(container, "livenessProbe", pod_ip),
        }
    }

    /// Whether the container is ready the moment it runs (it has nothing to pass first).
    pub fn ready_at_start(&self) -> bool {
        self.startup.is_none() && self.readiness.is_none()
    }
}

/// Why the container is to be killed, and the probe's own grace period, if it has one.
#[derive(Debug, Clone, PartialEq)]
pub struct Unhealthy {
    pub message: String,
    pub grace: Option<u64>,
}

/// Probes the container until a liveness or startup probe fails for good (never, without one).
pub async fn watch(ctx: &PodCtx, index: usize, probes: &Probes, c: &InContainer) -> Unhealthy {
    if let Some(startup) = &probes.startup {
        pause(ctx, startup.initial_delay).await;
        let mut failures = 0;
        loop {
            match check(startup, c).await {
                Ok(()) => break,
                Err(why) => {
                    failures += 1;
                    unhealthy(ctx, "Startup", &why);
                    if failures >= startup.failure_threshold {
                        return Unhealthy {
                            message: "failed startup probe".into(),
                            grace: startup.grace,
                        };
                    }
                }
            }
            pause(ctx, startup.period).await;
        }
        status::set_started(ctx, index, probes.readiness.is_none());
    }
    let readiness = async {
        match &probes.readiness {
            Some(probe) => readiness(ctx, index, probe, c).await,
            None => std::future::pending().await,
        }
    };
    let liveness = async {
        match &probes.liveness {
            Some(probe) => liveness(ctx, probe, c).await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        never = readiness => never,
        died = liveness => died,
    }
}

async fn readiness(ctx: &PodCtx, index: usize, probe: &Probe, c: &InContainer) -> Unhealthy {
    pause(ctx, probe.initial_delay).await;
    let (mut successes, mut failures, mut ready) = (0, 0, false);
    loop {
        match check(probe, c).await {
            Ok(()) => {
                successes += 1;
                failures = 0;
                if !ready && successes >= probe.success_threshold {
                    ready = true;
                    status::set_ready(ctx, index, true);
                }
            }
            Err(why) => {
                failures += 1;
                successes = 0;
                unhealthy(ctx, "Readiness", &why);
                if ready && failures >= probe.failure_threshold {
                    ready = false;
                    status::set_ready(ctx, index, false);
                }
            }
        }
        pause(ctx, probe.period).await;
    }
}

async fn liveness(ctx: &PodCtx, probe: &Probe, c: &InContainer) -> Unhealthy {
    pause(ctx, probe.initial_delay).await;
    let mut failures = 0;
    loop {
        match check(probe, c).await {
            Ok(()) => failures = 0,
            Err(why) => {
                failures += 1;
                unhealthy(ctx, "Liveness", &why);
                if failures >= probe.failure_threshold {
                    return Unhealthy {
                        message: "failed liveness probe".into(),
                        grace: probe.grace,
                    };
                }
            }
        }
        pause(ctx, probe.period).await;
    }
}

fn unhealthy(ctx: &PodCtx, kind: &str, why: &str) {
    ctx.event(
        EventType::Warning,
        "Unhealthy",
        &format!("{kind} probe failed: {why}"),
        "kubelet",
    );
}

async fn pause(ctx: &PodCtx, seconds: u64) {
    if seconds == 0 {
        return;
    }
    let wall = ctx
        .state
        .shared
        .clock
        .scaled(Duration::from_secs(seconds))
        .max(FLOOR);
    tokio::time::sleep(wall).await;
}
