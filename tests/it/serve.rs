//! `gantry serve` end to end, with the real OpenSSH client in tmux: teammates watch at their own
//! sizes, each with a view of their own; viewers are refused every change by the same one gate
//! as the local TUI, an operator's key passes it; strangers, commands and subsystems get
//! nothing; the host key survives a restart. Hostile clients: `hostile`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gantry_test_support::serve::{OPERATOR, STRANGER, Served, VIEWER, ssh_available};
use gantry_test_support::tmux::{self, Tmux};

#[path = "serve/hostile.rs"]
mod hostile;

/// The Job every test here runs: lines enough to scroll back in, at a readable pace.
const JOB: [&str; 4] = [
    "--env",
    "SIM_LOG_LINES=100000",
    "--env",
    "SIM_LINES_PER_SECOND=20",
];

fn ready() -> bool {
    tmux::available() && ssh_available()
}

#[test]
fn teammates_watch_read_only_at_their_own_sizes_and_an_operator_acts_through_the_same_gate() {
    if !ready() {
        return;
    }
    let served = Served::start(&JOB, &[]);
    let small = Tmux::run("serve-small", &served.ssh(VIEWER, "-tt"), (80, 24)).unwrap();
    let large = Tmux::run("serve-large", &served.ssh(VIEWER, "-tt"), (120, 40)).unwrap();
    for viewer in [&small, &large] {
        viewer.wait_for(&[
            "ml-gke-cluster",
            "NOT CREATED",
            "Job ml-training-job",
            "READ-ONLY",
        ]);
    }
    // A viewer's changes are refused, by the same gate and words as the local TUI's.
    small.keys(&["c"]);
    small.wait_for(&["read-only: refused to create the cluster"]);

    // An operator creates the cluster (after its own confirmation) and launches; everyone sees.
    let operator = Tmux::run("serve-op", &served.ssh(OPERATOR, "-tt"), (100, 30)).unwrap();
    operator.wait_for(&["NOT CREATED"]);
    operator.keys(&["c"]);
    operator.wait_for(&["y/N"]);
    operator.keys(&["y"]);
    for viewer in [&small, &large] {
        viewer.wait_for(&["RUNNING"]);
    }
    served.wait_for_log(&["operator asked to create the cluster", "SHA256:"]);
    large.keys(&["l"]);
    large.wait_for(&["read-only: refused to launch the Job"]);
    operator.keys(&["l"]);
    for viewer in [&small, &large] {
        viewer.wait_for(&["Pods ml-training-job", "lines follow"]);
    }
    served.wait_for_log(&["operator asked to launch"]);

    // One scrolls back while the other keeps following.
    small.wait_for(&["step"]);
    small.keys(&["PageUp"]);
    small.wait_for(&["paused"]);
    let following = large.wait_for(&["follow"]);
    assert!(!following.contains("paused"), "{following}");

    // q leaves the alternate screen and closes the session, status 0.
    for viewer in [&small, &operator] {
        viewer.keys(&["q"]);
        let (status, screen) = viewer.wait_for_exit();
        assert_eq!(status, 0, "{screen}");
        assert!(
            !screen.contains("Job ml-training-job"),
            "screen restored:\n{screen}"
        );
    }
    served.wait_for_log(&["viewer left", "frames="]);
    // Stopping the server gives the last viewer its screen back before it disconnects.
    let mut served = served;
    assert_eq!(served.stop(), Some(0));
    let (status, screen) = large.wait_for_exit();
    assert_eq!(status, 0, "{screen}");
    assert!(
        !screen.contains("Job ml-training-job"),
        "screen restored:\n{screen}"
    );
}

#[test]
fn strangers_commands_and_subsystems_get_nothing_and_the_host_key_survives_a_restart() {
    if !ready() {
        return;
    }
    let mut served = Served::start(&[], &[]);
    let run = |command: String| {
        let out = std::process::Command::new("sh")
            .args(["-c", &command])
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.code(), text)
    };
    // A key not in the authorized keys is refused before anything else.
    let (status, text) = run(served.ssh(STRANGER, "-T"));
    assert_eq!(status, Some(255), "{text}");
    assert!(text.contains("Permission denied (publickey)"), "{text}");
    served.wait_for_log(&["refused a key not in the authorized keys"]);

    // `ssh … uname` runs nothing; nor does a session without a pty, nor sftp.
    let (status, text) = run(format!("{} uname -a", served.ssh(VIEWER, "")));
    assert_eq!(status, Some(1), "{text}");
    assert!(text.contains("runs no commands"), "{text}");
    assert!(!text.contains("Linux"), "{text}");
    let (status, text) = run(served.ssh(VIEWER, "-T"));
    assert_eq!(status, Some(1), "{text}");
    assert!(text.contains("needs a terminal"), "{text}");
    let (status, text) = run(format!("{} -s sftp", served.ssh(VIEWER, "")));
    assert_ne!(status, Some(0), "{text}");

    // The same host key after a restart: known_hosts, learnt above, still matches.
    let host_key = std::fs::read(served.path("host_key")).unwrap();
    served.restart();
    assert_eq!(std::fs::read(served.path("host_key")).unwrap(), host_key);
    let strict = served.ssh(VIEWER, "").replace(
        "StrictHostKeyChecking=accept-new",
        "StrictHostKeyChecking=yes",
    );
    let (status, text) = run(format!("{strict} uname"));
    assert_eq!(status, Some(1), "{text}");
    assert!(text.contains("runs no commands"), "{text}");
    assert_eq!(served.stop(), Some(0));
}
