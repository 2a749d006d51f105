//! A drill for `gantry serve` under load: while 4 pods log 2,000 lines a second between them,
//! one viewer's `ssh` is stopped (SIGSTOP) for 30 s and another leaves and comes back. The
//! stopped client costs the server a bounded queue, the others keep updating, the stopped one
//! shows the right screen once it runs again, and every saved log is byte-identical to its pod's.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;
use std::time::{Duration, Instant};

use gantry_test_support::serve::{OPERATOR, Served, VIEWER, ssh_available};
use gantry_test_support::tmux::{self, Tmux};

/// How long the client stays stopped: the drill's own length, not a wait for an event.
const STOPPED: Duration = Duration::from_secs(30);

/// 4 pods, 500 lines a second each (5 a second at a time scale of 0.01), ~50 s of it.
const JOB: [&str; 8] = [
    "--parallelism",
    "4",
    "--completions",
    "4",
    "--env",
    "SIM_LOG_LINES=25000",
    "--env",
    "SIM_LINES_PER_SECOND=5",
];

/// The logs pane's rows (`│[pod] …`), which two viewers of one size that follow show alike.
fn log_rows(screen: &str) -> Vec<String> {
    screen
        .lines()
        .filter(|l| l.starts_with("│["))
        .map(str::to_string)
        .collect()
}

fn ssh_pid(pane: &Tmux) -> String {
    let out = Command::new("pgrep")
        .args(["-P", &pane.pane_pid().to_string(), "ssh"])
        .output()
        .unwrap();
    let pid = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert!(!pid.is_empty(), "ssh runs in the pane");
    pid
}

fn signal(pid: &str, sig: &str) {
    assert!(
        Command::new("kill")
            .args([sig, pid])
            .status()
            .unwrap()
            .success()
    );
}

#[test]
fn a_stopped_client_costs_a_bounded_queue_and_nobody_else_waits_for_it() {
    if !tmux::available() || !ssh_available() || !gantry_test_support::kubectl_available() {
        return;
    }
    let served = Served::start(&JOB, &[]);
    let other = Tmux::run("drill-op", &served.ssh(OPERATOR, "-tt"), (100, 32)).unwrap();
    let stopped = Tmux::run("drill-stopped", &served.ssh(VIEWER, "-tt"), (100, 32)).unwrap();
    let leaving = Tmux::run("drill-leaving", &served.ssh(VIEWER, "-tt"), (80, 24)).unwrap();
    other.wait_for(&["NOT CREATED"]);
    other.keys(&["c"]);
    other.wait_for(&["y/N"]);
    other.keys(&["y"]);
    other.wait_for(&["RUNNING"]);
    other.keys(&["l"]);
    for viewer in [&other, &stopped, &leaving] {
        viewer.wait_for(&["Pods ml-training-job 4", "lines follow", "│["]);
    }

    let pid = ssh_pid(&stopped);
    signal(&pid, "-STOP");
    let began = Instant::now();
    // The one that leaves comes back, and sees the training at once.
    leaving.keys(&["q"]);
    leaving.wait_for_exit();
    let back = Tmux::run("drill-back", &served.ssh(VIEWER, "-tt"), (80, 24)).unwrap();
    back.wait_for(&["Pods ml-training-job 4", "│["]);
    // The other keeps updating while the stopped client's frames go nowhere.
    let mut screens = std::collections::HashSet::new();
    while began.elapsed() < STOPPED {
        screens.insert(log_rows(&other.screen()));
        std::thread::sleep(Duration::from_millis(500));
    }
    assert!(
        screens.len() >= 10,
        "the other viewer kept updating: {} screens",
        screens.len()
    );
    signal(&pid, "-CONT");

    // When the Job ends, the stopped one shows what the other shows.
    // Both are screens of a moment: the two agree once the last lines have reached both.
    let done = ["Succeeded", "Completed"];
    other.wait_for(&done);
    stopped.wait_for(&done);
    let deadline = Instant::now() + gantry_test_support::WAIT_BOUND;
    loop {
        let (a, b) = (other.screen(), stopped.screen());
        let (rows_a, rows_b) = (log_rows(&a), log_rows(&b));
        if !rows_a.is_empty() && rows_a == rows_b {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the stopped viewer's screen after SIGCONT:\n{b}\nthe other's:\n{a}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }

    for viewer in [&other, &stopped, &back] {
        viewer.keys(&["q"]);
        assert_eq!(viewer.wait_for_exit().0, 0);
    }
    // What each client cost the server's queue, as the server logged it when it left.
    let left = served.wait_for_logs(&["viewer left"], 4);
    let log = served.log();
    assert_eq!(
        log.lines().filter(|l| l.contains("viewer left")).count(),
        4,
        "{log}"
    );
    for line in &left {
        let queued: usize = line
            .split("max_queued_bytes=")
            .nth(1)
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{line}"));
        assert!(queued <= gantry::serve::QUEUE_BYTES, "{line}");
    }

    // Every saved log is its pod's log, byte for byte.
    let sim_dir = served
        .wait_for_log(&["simulated cloud: state in "])
        .split("state in ")
        .nth(1)
        .and_then(|r| r.split(" (").next())
        .unwrap()
        .to_string();
    let saved = served.path("state/gantry/logs/ml-gke-cluster/ml-training-job");
    let kubeconfig = std::path::PathBuf::from(format!("{sim_dir}/kubeconfig"));
    let files = gantry_test_support::saved_logs_are_the_pods(&saved, &kubeconfig);
    assert_eq!(files, 4, "one file per pod in {}", saved.display());
}
