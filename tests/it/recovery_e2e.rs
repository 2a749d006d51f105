//! Recovery nobody has to start, end to end with the simulator as its own process: a gang
//! whose rank is preempted is restarted once however many engines watch (the one holding the
//! Lease does it), the attempt it replaced kept in the run's record and told once, a run past
//! `max-recoveries` ends as failed, a run keeps its id across its attempts, and the `GANTRY_`
//! prefix is Gantry's.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::Value;

use crate::cli_flow::{Sim, Watch, newest};
use crate::notify_receiver::Receiver;

/// A spot cluster and two indexed workers that need some 300 simulated seconds.
fn gang(max_recoveries: u32, lines: u32) -> String {
    format!(
        "[cluster]\nspot = true\n[job]\nbackoff-limit = 2\ncompletions = 2\nparallelism = 2\n\
indexed = true\n[job.recovery]\nmax-recoveries = {max_recoveries}\n[job.env]\n\
SIM_LOG_LINES = \"{lines}\"\nSIM_LINES_PER_SECOND = \"1\"\n"
    )
}

fn finished(s: &Value) -> bool {
    matches!(newest(s)["status"].as_str(), Some("Succeeded" | "Failed"))
}

#[test]
fn a_preempted_rank_restarts_the_gang_exactly_once_with_two_engines_watching() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut hook = rt.block_on(Receiver::start(Vec::new()));
    let told = format!(
        "[[notify]]\nkind = \"webhook\"\nurl = \"{}\"\nevents = [\"recovered\", \"attempt-ended\"]\nrate-limit = \"0s\"\n",
        hook.url()
    );
    let sim = Sim::start_with(
        &["--time-scale", "0.01", "--fault", "preempt=1:1"],
        &format!("{}{told}", gang(10, 300)),
    );
    sim.ok(&["up", "--wait"]);
    let _a = sim.watch();
    let _b = sim.watch();
    sim.until_status("an engine holds the Lease", |s| {
        s["job"]["recoverer"].is_string()
    });
    sim.ok(&["launch"]);
    let done = sim.until_status("the run ends", |s| {
        finished(s) && s["job"]["recoveries"] == 1
    });
    let last = newest(&done);
    assert_eq!(last["status"], "Succeeded", "{:#}", done["job"]);
    assert_eq!(
        last["name"], "ml-training-job-2",
        "one recovery attempt: {:#}",
        done["job"]
    );
    assert_eq!(done["job"]["recoveries"], 1);

    // The attempt the recovery replaced is kept, with how its ranks ended and what it cost.
    let attempts = done["job"]["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 2, "{:#}", done["job"]);
    let first = &attempts[0];
    assert_eq!(first["name"], "ml-training-job", "{first:#}");
    assert_eq!(first["status"], "Recovered", "{first:#}");
    assert_eq!(first["endedBy"], "preempted", "{first:#}");
    assert_eq!(first["recoveredInto"], "ml-training-job-2", "{first:#}");
    assert_eq!(
        first["failed"], 0,
        "stopped ranks are no failures: {first:#}"
    );
    let classes: Vec<&str> = first["podEnds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["class"].as_str().unwrap())
        .collect();
    assert!(classes.contains(&"preempted"), "{first:#}");
    for end in first["podEnds"].as_array().unwrap() {
        if end["class"] == "deleted" {
            assert!(
                end["detail"]
                    .as_str()
                    .unwrap()
                    .contains("stopped by recovery"),
                "{end:#}"
            );
        }
    }
    assert!(
        classes
            .iter()
            .all(|c| matches!(*c, "preempted" | "deleted")),
        "{first:#}"
    );
    assert!(first.get("cost").is_some(), "{first:#}");

    // Told once as a recovery; its end is shown, not sent as an attempt's end.
    let mut messages = Vec::new();
    rt.block_on(async {
        while messages.len() < 2 {
            messages.push(hook.next().await.json());
        }
    });
    let recovered: Vec<_> = messages
        .iter()
        .filter(|m| m["event"] == "recovered")
        .collect();
    assert_eq!(recovered.len(), 1, "{messages:#?}");
    assert_eq!(recovered[0]["attempt"], 1, "{messages:#?}");
    let ended: Vec<_> = messages
        .iter()
        .filter(|m| m["event"] == "attempt-ended")
        .collect();
    assert_eq!(ended.len(), 1, "{messages:#?}");
    assert_eq!(
        ended[0]["attempt"], 2,
        "only the second attempt's end: {messages:#?}"
    );
    assert_eq!(ended[0]["detail"]["runAttempt"], 2, "{messages:#?}");
    drop((_a, _b));
    if let Some(more) = hook.more() {
        panic!("told more: {:#}", more.json());
    }
    if gantry_test_support::kubectl_available() {
        let out = sim.kubectl(&["get", "lease", "-n", "default"]);
        let table = String::from_utf8_lossy(&out.stdout);
        assert!(
            table.contains("gantry-engine-ml-training-job") && table.contains(" pid "),
            "{table}{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn a_gang_preempted_past_max_recoveries_ends_failed_and_says_so() {
    let sim = Sim::start_with(
        &["--time-scale", "0.01", "--fault", "preempt=1:2"],
        &gang(1, 2000),
    );
    sim.ok(&["up", "--wait"]);
    let _a = sim.watch();
    sim.until_status("the engine holds the Lease", |s| {
        s["job"]["recoverer"].is_string()
    });
    sim.ok(&["launch"]);
    let done = sim.until_status("the run ends", finished);
    let last = newest(&done);
    assert_eq!(last["status"], "Failed", "{:#}", done["job"]);
    assert_eq!(last["reason"], "RunEnded", "{:#}", done["job"]);
    assert!(
        last["message"]
            .as_str()
            .unwrap()
            .contains("max-recoveries = 1"),
        "{last:#}"
    );
    let human = sim.ok(&["status"]);
    assert!(human.contains("RunEnded"), "{human}");
}

#[test]
fn every_attempt_of_a_run_has_its_id_and_its_number_in_the_environment() {
    let sim = Sim::launched(
        &["--time-scale", "0.01"],
        "[job]\n[job.env]\nSIM_LOG_LINES = \"5\"\n",
        &[],
    );
    sim.until_status("the launch ends", finished);
    sim.ok(&["retry"]);
    sim.until_status("the retry ends", |s| {
        finished(s) && newest(s)["name"] == "ml-training-job-2"
    });
    if !gantry_test_support::kubectl_available() {
        return;
    }
    let out = sim.kubectl(&["get", "pods", "-n", "default", "-o", "json"]);
    let pods: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut seen: Vec<(String, String)> = pods["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let env = p["spec"]["containers"][0]["env"].as_array().unwrap();
            let get = |name: &str| {
                env.iter()
                    .find(|e| e["name"] == name)
                    .and_then(|e| e["value"].as_str())
                    .unwrap_or_default()
                    .to_string()
            };
            assert_eq!(get("GANTRY_RECOVERY"), "0");
            (get("GANTRY_ATTEMPT"), get("GANTRY_RUN_ID"))
        })
        .collect();
    seen.sort();
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert_eq!((seen[0].0.as_str(), seen[1].0.as_str()), ("1", "2"));
    assert!(!seen[0].1.is_empty() && seen[0].1 == seen[1].1, "{seen:?}");
    let status = sim.status();
    assert_eq!(status["job"]["runId"].as_str().unwrap(), seen[0].1);
}

#[test]
fn the_gantry_prefix_is_refused_in_env_flags() {
    let sim = Sim::start_with(&["--time-scale", "0.01"], "");
    let out = sim.gantry(&["launch", "--env", "GANTRY_X=1"]);
    assert_eq!(out.status.code(), Some(2));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("GANTRY_ prefix is Gantry's"), "{said}");
}

#[test]
fn when_the_recoverer_dies_another_engine_takes_the_lease_and_carries_on_the_count() {
    // Two reclaims, 25 s apart: the first recovered by the engine that holds the Lease, the
    // second by the other one after the first was killed (its Lease runs out in 15 s).
    let sim = Sim::start_with(
        &["--time-scale", "0.01", "--fault", "preempt=25:2"],
        &gang(10, 3500),
    );
    sim.ok(&["up", "--wait"]);
    let first = sim.watch();
    let pid = |w: &Watch| format!("pid {}", w.0.id());
    let first_pid = pid(&first);
    sim.until_status("the first engine holds the Lease", |s| {
        s["job"]["recoverer"]
            .as_str()
            .is_some_and(|h| h.ends_with(&first_pid))
    });
    let second = sim.watch();
    sim.ok(&["launch"]);
    sim.until_status("the first recovery", |s| s["job"]["recoveries"] == 1);
    drop(first);
    let second_pid = pid(&second);
    let done = sim.until_status("the second recovery, by the other engine", |s| {
        s["job"]["recoveries"] == 2
    });
    assert_eq!(
        newest(&done)["name"],
        "ml-training-job-3",
        "{:#}",
        done["job"]
    );
    assert!(
        done["job"]["recoverer"]
            .as_str()
            .is_some_and(|h| h.ends_with(&second_pid)),
        "{:#}",
        done["job"]
    );
}
