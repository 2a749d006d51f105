//! Being told, end to end: the simulator as its own process, `gantry watch` as the engine that
//! holds the Lease, and a webhook receiver on loopback. A run whose loss goes NaN and whose
//! container exits 1, then a run that stops writing and keeps running, then the budget of that
//! run spent with `budget-action = "scale-to-zero"`: each is one message, in that order, with
//! what the run has cost so far; the pools go to zero, and the message says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use crate::cli_flow::{Sim, newest};
use crate::notify_receiver::{Received, Receiver, SECRET_PATH};

/// Machines dear enough (3 × n1-standard-16, ≈ $2.4/h) for a budget to be spent in seconds.
const BUDGET: f64 = 0.01;

fn config(url: &str) -> String {
    format!(
        "[cluster]\nmachine-type = \"n1-standard-16\"\n[job]\nbackoff-limit = 0\n\
[job.env]\nSIM_LOG_FORMAT = \"jsonl\"\nSIM_LOG_LINES = \"40\"\nSIM_DIVERGE_AT = \"10\"\n\
SIM_EXIT_CODE = \"1\"\n\
[guards]\nstall-after = \"3s\"\nbudget = {BUDGET}\nbudget-action = \"scale-to-zero\"\n\
[[notify]]\nkind = \"webhook\"\nurl = \"{url}\"\nevents = [\"attempt-ended\", \"alert\", \"stalled\", \"budget\"]\n"
    )
}

/// The next message, within `patience`.
fn next(rt: &tokio::runtime::Runtime, hook: &mut Receiver, patience: Duration) -> Received {
    rt.block_on(hook.next_within(patience))
}

#[test]
fn a_failed_attempt_a_divergence_a_stall_and_a_spent_budget_are_each_told_once_in_order() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut hook = rt.block_on(Receiver::start(Vec::new()));
    let sim = Sim::start_with(&["--time-scale", "0.01"], &config(&hook.url()));
    sim.ok(&["up", "--wait"]);
    let _watch = sim.watch();
    sim.until_status("the engine holds the Lease", |s| {
        s["job"]["recoverer"].is_string()
    });

    // The first run: its loss goes NaN at step 10, then its container exits 1.
    sim.ok(&["launch"]);
    let alert = next(&rt, &mut hook, Duration::from_secs(60));
    let mut keys = vec![alert.header("idempotency-key").map(str::to_string)];
    let alert = alert.json();
    assert_eq!(
        (alert["version"].as_u64(), alert["event"].as_str()),
        (Some(1), Some("alert")),
        "{alert:#}"
    );
    assert_eq!(alert["severity"], "critical", "{alert:#}");
    assert!(alert["detail"]["metric"].is_string(), "{alert:#}");
    let ended = next(&rt, &mut hook, Duration::from_secs(60));
    keys.push(ended.header("idempotency-key").map(str::to_string));
    let ended = ended.json();
    assert_eq!(ended["event"], "attempt-ended", "{ended:#}");
    assert_eq!(ended["severity"], "critical", "{ended:#}");
    assert_eq!(ended["detail"]["class"], "app-error", "{ended:#}");
    assert_eq!(ended["attempt"], 1, "{ended:#}");
    assert_eq!(ended["detail"]["runAttempt"], 1, "{ended:#}");
    let first_run = ended["run"].as_str().unwrap().to_string();
    let cost = ended["costSoFar"].as_f64().expect("the run's cost so far");
    assert!(cost > 0.0 && cost < BUDGET * 0.8, "{ended:#}");

    // The second run writes five lines, then nothing, and keeps running.
    sim.ok(&[
        "launch",
        "--env",
        "SIM_STALL_AFTER=5",
        "--env",
        "SIM_DIVERGE_AT=1000",
        "--env",
        "SIM_EXIT_CODE=0",
    ]);
    let stalled = next(&rt, &mut hook, Duration::from_secs(60));
    keys.push(stalled.header("idempotency-key").map(str::to_string));
    let stalled = stalled.json();
    assert_eq!(stalled["event"], "stalled", "{stalled:#}");
    // The attempt every screen calls #2, the first of its run.
    assert_eq!(stalled["attempt"], 2, "{stalled:#}");
    assert_eq!(stalled["detail"]["runAttempt"], 1, "{stalled:#}");
    assert_ne!(
        stalled["run"],
        first_run.as_str(),
        "a launch starts a new run"
    );
    assert!(
        stalled["text"]
            .as_str()
            .unwrap()
            .contains("stalled: no new log line for"),
        "{stalled:#}"
    );

    // Its budget: told at 80 %, then at 100 %, when the run ends and the pools go to zero.
    let started = Instant::now();
    let eighty = next(&rt, &mut hook, Duration::from_secs(90));
    keys.push(eighty.header("idempotency-key").map(str::to_string));
    let eighty = eighty.json();
    assert_eq!(
        (eighty["event"].as_str(), eighty["severity"].as_str()),
        (Some("budget"), Some("warning")),
        "{eighty:#}"
    );
    assert!(
        eighty["costSoFar"].as_f64().unwrap() >= BUDGET * 0.8,
        "{eighty:#}"
    );
    let spent = next(&rt, &mut hook, Duration::from_secs(90));
    keys.push(spent.header("idempotency-key").map(str::to_string));
    let spent = spent.json();
    assert_eq!(
        (spent["event"].as_str(), spent["severity"].as_str()),
        (Some("budget"), Some("critical")),
        "{spent:#}"
    );
    assert!(
        spent["text"]
            .as_str()
            .unwrap()
            .ends_with("ending the run and scaling the node pools to zero"),
        "{spent:#}"
    );
    assert_ne!(spent["run"], first_run.as_str());
    eprintln!(
        "the budget was spent {:?} after the stall",
        started.elapsed()
    );
    let zero = sim.until_status("the pools are at zero nodes", |s| {
        s["cluster"]["nodeCount"] == 0
    });
    // The run was ended before its nodes went: its pod was stopped, not evicted by a drain.
    let stopped = newest(&zero);
    assert_eq!(stopped["reason"], "RunEnded", "{stopped:#}");
    for end in stopped["podEnds"].as_array().into_iter().flatten() {
        assert_ne!(end["class"], "preempted", "{stopped:#}");
    }

    // Once each: five events in order, five idempotency keys all different, and (below)
    // nothing sent twice.
    let events: Vec<&str> = [&alert, &ended, &stalled, &eighty, &spent]
        .iter()
        .map(|m| m["event"].as_str().unwrap())
        .collect();
    assert_eq!(
        events,
        ["alert", "attempt-ended", "stalled", "budget", "budget"]
    );
    let keys: std::collections::BTreeSet<String> = keys
        .into_iter()
        .map(|k| k.expect("every message has an Idempotency-Key"))
        .collect();
    assert_eq!(keys.len(), 5, "{keys:?}");
    // The URL's secret part is in no file Gantry wrote and no output (the config file is the
    // test's own).
    for args in [
        &["config"][..],
        &["status"],
        &["status", "--json"],
        &["notify", "status"],
    ] {
        let out = sim.command(args).output().unwrap();
        let all = [out.stdout, out.stderr].concat();
        assert!(
            !String::from_utf8_lossy(&all).contains(SECRET_PATH),
            "gantry {args:?} shows the URL"
        );
    }
    let config_file = sim.home().join("config").join("gantry").join("config.toml");
    let mut dirs = vec![sim.home().to_path_buf()];
    let mut files = 0;
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path != config_file {
                files += 1;
                let bytes = std::fs::read(&path).unwrap_or_default();
                assert!(
                    !String::from_utf8_lossy(&bytes).contains(SECRET_PATH),
                    "{} holds the URL",
                    path.display()
                );
            }
        }
    }
    assert!(files > 5, "the state directory was searched");

    while let Some(more) = hook.more() {
        let more = more.json();
        assert!(
            !matches!(more["event"].as_str(), Some("alert" | "stalled" | "budget")),
            "told twice: {more:#}"
        );
    }
}
