//! A drill: the local TUI follows 4 pods writing 2,000 lines a second between them while its
//! terminal's reader is stopped for 30 s (the tmux server, SIGSTOP: what a stalled SSH link or
//! a frozen multiplexer does to a terminal). Watching does not depend on the screen: every line
//! is saved, byte-identical to the pods' logs, and once the reader runs again the screen
//! catches up with the newest lines.

use std::process::Command;
use std::time::{Duration, Instant};

use gantry_test_support as common;

use common::tmux::Tmux;

/// How long the reader stays stopped: the drill's own length, not a wait for an event.
const STOPPED: Duration = Duration::from_secs(30);

/// 4 pods, 500 lines a second each at a time scale of 0.01, ~50 s of it.
const JOB: &str = "[job]\nparallelism = 4\ncompletions = 4\n[job.env]\nSIM_LOG_LINES = \"25000\"\nSIM_LINES_PER_SECOND = \"5\"\n";

fn signal(pid: u32, sig: &str) {
    assert!(
        Command::new("kill")
            .args([sig, &pid.to_string()])
            .status()
            .unwrap()
            .success()
    );
}

/// The newest line of the classic training lines in `text`, as its number in the run
/// (`epoch E/N step S/L`: (E - 1) × L + S).
fn newest_step(text: &str) -> Option<u64> {
    text.lines()
        .filter_map(|line| {
            let epoch: u64 = line
                .split("epoch ")
                .nth(1)?
                .split('/')
                .next()?
                .parse()
                .ok()?;
            let (step, per_epoch) = line.split(" step ").nth(1)?.split_once('/')?;
            let step: u64 = step.parse().ok()?;
            let per_epoch: u64 = per_epoch.split(' ').next()?.parse().ok()?;
            Some((epoch - 1) * per_epoch + step)
        })
        .max()
}

/// The newest step saved so far, over every pod's file.
fn newest_saved(dir: &std::path::Path) -> Option<u64> {
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|e| std::fs::read_to_string(e.path()).ok())
        .filter_map(|text| newest_step(&text))
        .max()
}

#[test]
fn a_stalled_terminal_loses_frames_never_lines_and_catches_up_when_it_reads_again() {
    if !common::kubectl_available() {
        return;
    }
    let Some(t) = Tmux::start("stalled", "", JOB) else {
        return;
    };
    t.create_cluster();
    t.keys(&["l"]);
    t.wait_for(&["Pods ml-training-job 4", "step "]);
    let saved = t.state_dir().join("logs/ml-gke-cluster/ml-training-job");

    let server = t.server_pid();
    signal(server, "-STOP");
    let stopped = Instant::now();
    // By now the terminal's buffer is full and every write to it waits.
    std::thread::sleep(STOPPED / 6);
    let before = newest_saved(&saved).unwrap_or(0);
    while stopped.elapsed() < STOPPED {
        std::thread::sleep(Duration::from_millis(500));
    }
    // Saving went on while nobody read the terminal: 25 s at 500 lines a second a pod.
    let at_resume = newest_saved(&saved).expect("lines saved");
    eprintln!(
        "lines saved per pod while the terminal was not read: {}",
        at_resume - before
    );
    assert!(
        at_resume > before + 5000,
        "saving stopped with the terminal: line {before} then {at_resume}"
    );
    signal(server, "-CONT");
    let resumed = Instant::now();
    let caught_up = loop {
        let screen = t.screen();
        if newest_step(&screen).is_some_and(|s| s >= at_resume) {
            break screen;
        }
        assert!(
            resumed.elapsed() < Duration::from_secs(60),
            "the screen never caught up with {at_resume:?}:\n{screen}"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    eprintln!(
        "the screen showed the newest line {:?} after the reader resumed (saved then: {at_resume:?}, shown: {:?})",
        resumed.elapsed(),
        newest_step(&caught_up)
    );

    // Every saved log is its pod's log, byte for byte.
    t.wait_for(&["Succeeded"]);
    let sim = std::fs::read_dir(t.state_dir().join("sim"))
        .unwrap()
        .filter_map(Result::ok)
        .next()
        .expect("the simulated cloud's state directory")
        .path();
    let files = common::saved_logs_are_the_pods(&saved, &sim.join("kubeconfig"));
    assert_eq!(files, 4, "one file per pod in {}", saved.display());
    t.keys(&["q"]);
    assert_eq!(t.wait_for_exit().0, 0);
}
