//! Preemption is not failure, end to end with the simulator as its own process: spot nodes
//! reclaimed under a single-pod Job (`--fault preempt=SECS:COUNT`), which the cloud recovers by
//! itself — with no Gantry running after the launch, and with `gantry watch` recording each end
//! on the Job — and the ends that are failures: an exit code listed in `fail-exit-codes`, one
//! that is not, an image that is not there.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Stdio;

use serde_json::Value;

use crate::cli_flow::{Sim, newest};

/// A spot cluster, and a single-pod Job that needs some 200 simulated seconds.
const SPOT_RUN: &str = "[cluster]\nspot = true\n[job]\nbackoff-limit = 2\n[job.env]\n\
SIM_LOG_LINES = \"200\"\nSIM_LINES_PER_SECOND = \"1\"\n";

/// Polls `status --json` until `done` holds for the newest attempt (bounded), giving it.
fn until(sim: &Sim, what: &str, done: impl Fn(&Value) -> bool) -> Value {
    let status = sim.until_status(what, |s| done(newest(s)));
    newest(&status).clone()
}

fn finished(a: &Value) -> bool {
    matches!(a["status"].as_str(), Some("Succeeded" | "Failed"))
}

fn classes(attempt: &Value) -> Vec<String> {
    attempt["podEnds"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| e["class"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn a_spot_job_preempted_three_times_succeeds_with_no_gantry_running_and_no_failure_counted() {
    let sim = Sim::launched(
        &["--time-scale", "0.01", "--fault", "preempt=1:3"],
        SPOT_RUN,
        &[],
    );
    let attempt = until(&sim, "the Job ends", finished);
    assert_eq!(attempt["status"], "Succeeded", "{attempt:#}");
    assert_eq!(
        attempt["failed"], 0,
        "backoffLimit never reached: {attempt:#}"
    );
    assert_eq!(attempt["preemptions"], 3, "{attempt:#}");
    let classes = classes(&attempt);
    assert_eq!(
        classes.iter().filter(|c| *c == "preempted").count(),
        3,
        "{classes:?}"
    );
    assert!(classes.contains(&"succeeded".to_string()), "{classes:?}");
    // No Gantry saw them end: what `status` knows of the pods that went with their nodes it
    // read back from the cluster, and says so.
    let human = sim.ok(&["status"]);
    assert!(
        human.contains("3 preempted, not counted as failures"),
        "{human}"
    );
    assert!(human.contains("0/2 ⟳3"), "{human}");
}

#[test]
fn with_gantry_watch_running_status_shows_each_preemption_with_its_cost() {
    let sim = Sim::start_with(
        &["--time-scale", "0.01", "--fault", "preempt=1:3"],
        SPOT_RUN,
    );
    sim.ok(&["up", "--wait"]);
    let mut watch = sim
        .command(&["watch"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = watch.stdout.take().unwrap();
    let lines = std::thread::spawn(move || {
        use std::io::BufRead;
        std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
            .collect::<Vec<String>>()
    });
    sim.ok(&["launch"]);
    let attempt = until(&sim, "three ends recorded", |a| {
        finished(a)
            && a["podEnds"]
                .as_array()
                .is_some_and(|e| e.iter().filter(|e| e["cost"].is_number()).count() >= 4)
    });
    let _ = watch.kill();
    let _ = watch.wait();
    let said = lines.join().unwrap();

    assert_eq!(attempt["status"], "Succeeded", "{attempt:#}");
    assert!(
        attempt.get("partial").is_none(),
        "recorded, not read back: {attempt:#}"
    );
    let preempted: Vec<&Value> = attempt["podEnds"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["class"] == "preempted")
        .collect();
    assert_eq!(preempted.len(), 3, "{attempt:#}");
    for end in preempted {
        // Priced (the node's spot price × its share × the time it ran, which at this time scale
        // is under a second of the API's whole-second timestamps): a number, never null.
        assert!(end["cost"].as_f64().unwrap() >= 0.0, "{end:#}");
        assert!(end["node"].as_str().unwrap().starts_with("gke-"), "{end:#}");
        assert!(
            end["detail"].as_str().unwrap().contains("node shut down"),
            "{end:#}"
        );
    }
    let told = said.iter().filter(|l| l.contains(" preempted: ")).count();
    assert_eq!(told, 3, "gantry watch said: {said:#?}");
}

#[test]
fn an_exit_code_listed_in_fail_exit_codes_fails_the_job_at_its_first_pod() {
    let config = "[job]\nbackoff-limit = 2\n[job.recovery]\nfail-exit-codes = [3]\n[job.env]\n\
SIM_LOG_LINES = \"5\"\nSIM_EXIT_CODE = \"3\"\n";
    let sim = Sim::launched(&["--time-scale", "0.01"], config, &[]);
    let attempt = until(&sim, "the Job fails", finished);
    assert_eq!(attempt["status"], "Failed", "{attempt:#}");
    assert_eq!(attempt["reason"], "PodFailurePolicy", "{attempt:#}");
    assert_eq!(attempt["failed"], 1, "{attempt:#}");
    assert_eq!(classes(&attempt), vec!["app-error"], "{attempt:#}");
    assert_eq!(attempt["podEnds"][0]["detail"], "exit code 3");
}

#[test]
fn an_exit_code_not_listed_is_retried_until_the_backoff_limit() {
    let config =
        "[job]\nbackoff-limit = 1\n[job.env]\nSIM_LOG_LINES = \"5\"\nSIM_EXIT_CODE = \"1\"\n";
    let sim = Sim::launched(&["--time-scale", "0.01"], config, &[]);
    let attempt = until(&sim, "the Job fails", finished);
    assert_eq!(attempt["reason"], "BackoffLimitExceeded", "{attempt:#}");
    assert_eq!(
        classes(&attempt),
        vec!["app-error", "app-error"],
        "{attempt:#}"
    );
}

#[test]
fn an_image_that_is_not_there_is_a_config_error_with_what_to_do() {
    let sim = Sim::launched(
        &["--time-scale", "0.01"],
        "[job]\nbackoff-limit = 0\n",
        &["--image", "gcr.io/demo/does-not-exist:v1"],
    );
    let attempt = until(&sim, "the pod's end is known", |a| !classes(a).is_empty());
    assert_eq!(classes(&attempt), vec!["config-error"], "{attempt:#}");
    let detail = attempt["podEnds"][0]["detail"].as_str().unwrap();
    assert!(detail.contains("retry, or delete the attempt"), "{detail}");
}
