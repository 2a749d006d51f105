//! Why a pod waits, end to end on the simulated cloud as a script sees it (`gantry status
//! --json`): a GPU pool that autoscales from 0 (scaling up, then running, with the time it
//! took), the same with a GPU quota of 0, no GPU pool at all, and an image that is not there.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::cli_flow::Sim;

const GPU_JOB: &str =
    "[job]\nbackoff-limit = 0\n[job.resources]\ngpus = 1\n[job.env]\nSIM_LOG_LINES = \"20\"\n";

fn gpu_pool_from_zero() -> String {
    format!(
        "[cluster.gpu-pool]\nnode-count = 0\nautoscaling = {{ min-nodes = 0, max-nodes = 1 }}\n{GPU_JOB}"
    )
}

/// The newest attempt's first pod, as `gantry status --json` gives it.
fn first_pod(sim: &Sim) -> Value {
    let status: Value = serde_json::from_str(&sim.ok(&["status", "--json"])).unwrap();
    status["job"]["attempts"]
        .as_array()
        .and_then(|a| a.last())
        .and_then(|a| a["pods"].as_array())
        .and_then(|p| p.first())
        .cloned()
        .unwrap_or(Value::Null)
}

/// Polls `status --json` until `done` holds for the first pod (bounded), giving it; every cause
/// seen on the way is collected.
fn until(sim: &Sim, seen: &mut Vec<String>, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + gantry_test_support::WAIT_BOUND;
    loop {
        let pod = first_pod(sim);
        if let Some(cause) = pod["waiting"]["cause"].as_str()
            && seen.last().map(String::as_str) != Some(cause)
        {
            seen.push(cause.to_string());
        }
        if done(&pod) {
            return pod;
        }
        assert!(
            Instant::now() < deadline,
            "causes seen: {seen:?}; pod: {pod:#}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_gpu_pod_waits_for_its_node_to_be_made_then_runs_and_says_how_long_it_took() {
    let sim = Sim::launched(&["--time-scale", "0.02"], &gpu_pool_from_zero(), &[]);
    let mut seen = Vec::new();
    let running = until(&sim, &mut seen, |p| p["timeToRunningSeconds"].is_number());
    assert!(seen.contains(&"scaling-up".to_string()), "{seen:?}");
    assert!(running.get("waiting").is_none(), "{running:#}");
    assert!(running["timeToRunningSeconds"].as_i64().unwrap() >= 0);
}

#[test]
fn with_no_gpu_quota_the_pod_says_quota() {
    let sim = Sim::launched(
        &["--time-scale", "0.02", "--fault", "gpu-quota=0"],
        &gpu_pool_from_zero(),
        &[],
    );
    let mut seen = Vec::new();
    let pod = until(&sim, &mut seen, |p| p["waiting"]["cause"] == "quota");
    assert!(
        pod["waiting"]["hint"].as_str().unwrap().contains("quota"),
        "{pod:#}"
    );
    let human = sim.ok(&["status"]);
    assert!(
        human.contains("waiting: GKE could not make a node: quota"),
        "{human}"
    );
}

#[test]
fn with_no_gpu_pool_the_pod_says_so_and_what_to_add() {
    let sim = Sim::launched(&["--time-scale", "0.02"], GPU_JOB, &[]);
    let mut seen = Vec::new();
    let pod = until(&sim, &mut seen, |p| p["waiting"]["cause"] == "no-pool");
    assert!(
        pod["waiting"]["hint"]
            .as_str()
            .unwrap()
            .contains("[cluster.gpu-pool]"),
        "{pod:#}"
    );
}

#[test]
fn an_image_that_is_not_there_is_told_as_not_found() {
    let sim = Sim::launched(
        &["--time-scale", "0.02"],
        "[job]\nbackoff-limit = 0\n",
        &["--image", "gcr.io/demo/does-not-exist:v1"],
    );
    let mut seen = Vec::new();
    let pod = until(&sim, &mut seen, |p| {
        p["waiting"]["cause"] == "image-not-found"
    });
    assert!(
        pod["waiting"]["detail"]
            .as_str()
            .unwrap()
            .contains("gcr.io/demo/does-not-exist:v1"),
        "{pod:#}"
    );
}
