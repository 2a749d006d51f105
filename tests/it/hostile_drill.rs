//! The hostile drill: every command and the TUI in a terminal (tmux, every byte written to the
//! pane captured with `pipe-pane`), against a simulated cloud with `--fault hostile-strings`
//! (escape sequences, C1 controls, bidi overrides and long strings in every free-text field) and
//! a workload with `SIM_HOSTILE_OUTPUT=1` (the same in its log lines). Nothing that came from the
//! cluster or the cloud acts on the terminal: no OSC is written (the pane's title never changes,
//! no clipboard write reaches tmux), no C1 control or bidi override, and the commands write no
//! escape sequence at all. In a file, the bytes are the pod's, exactly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gantry_test_support as common;

use std::path::{Path, PathBuf};
use std::process::Command;

use futures::AsyncReadExt;
use gantry::sim::SimOptions;
use gantry::sim::cloud::{DEMO_LOCATION, DEMO_PROJECT};
use gantry::sim::faults::Fault;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams, LogParams};

/// One tmux server for the drill; killed when dropped.
struct Terminal {
    socket: String,
    capture: PathBuf,
    runs: usize,
}

impl Drop for Terminal {
    fn drop(&mut self) {
        let _ = self.tmux(&["kill-server"]);
    }
}

impl Terminal {
    fn tmux(&self, args: &[&str]) -> std::process::Output {
        Command::new("tmux")
            .args(["-L", &self.socket])
            .args(args)
            .output()
            .unwrap()
    }

    /// Runs `command` in a fresh pane whose every written byte is appended to the capture;
    /// waits for it to end (tmux `wait-for`, no clock); returns the pane's title after it.
    fn run(&mut self, command: &str) -> String {
        self.runs += 1;
        let n = self.runs;
        let socket = &self.socket;
        let script = format!(
            "tmux -L {socket} wait-for go{n}; {command}; tmux -L {socket} wait-for -S done{n}; sleep 600"
        );
        let session = format!("run{n}");
        let made = self.tmux(&[
            "new-session",
            "-d",
            "-s",
            &session,
            "-x",
            "100",
            "-y",
            "30",
            "sh",
            "-c",
            &script,
        ]);
        assert!(made.status.success(), "{made:?}");
        let capture = format!("cat >> {}", self.capture.display());
        assert!(
            self.tmux(&["pipe-pane", "-o", "-t", &session, &capture])
                .status
                .success()
        );
        self.tmux(&["wait-for", "-S", &format!("go{n}")]);
        self.tmux(&["wait-for", &format!("done{n}")]);
        let title = self.tmux(&["display-message", "-p", "-t", &session, "#{pane_title}"]);
        self.tmux(&["kill-session", "-t", &session]);
        String::from_utf8_lossy(&title.stdout).trim().to_string()
    }
}

fn has(bytes: &[u8], needle: &[u8]) -> bool {
    bytes.windows(needle.len()).any(|w| w == needle)
}

/// C1 controls (U+0080–U+009F) and bidi overrides (U+202A–E, U+2066–9), as UTF-8.
fn forbidden_characters(bytes: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(bytes);
    text.chars()
        .filter(|c| {
            ('\u{80}'..='\u{9f}').contains(c)
                || ('\u{202a}'..='\u{202e}').contains(c)
                || ('\u{2066}'..='\u{2069}').contains(c)
        })
        .map(|c| format!("U+{:04X}", c as u32))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn nothing_from_the_cluster_acts_on_the_terminal() {
    if !common::tmux::available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let sim_dir = dir.path().join("sim");
    let cloud = common::cloud_with(SimOptions {
        time_scale: 0.01,
        clusters: vec![common::CLUSTER.into()],
        state_dir: Some(sim_dir.clone()),
        faults: vec![Fault::HostileStrings],
        ..Default::default()
    })
    .await;
    let home = dir.path().join("home");
    let gantry = format!(
        "env -i PATH=\"$PATH\" HOME={home} TERM=xterm-256color NO_COLOR=1 {bin} --gke-endpoint {gke} --access-token-file {token} --project {DEMO_PROJECT} --location {DEMO_LOCATION}",
        home = home.display(),
        bin = env!("CARGO_BIN_EXE_gantry"),
        gke = cloud.gke_endpoint(),
        token = sim_dir.join("token").display(),
    );
    let capture = dir.path().join("pane.bin");
    std::fs::write(&capture, b"").unwrap();
    let mut terminal = Terminal {
        socket: format!("gantry-hostile-{}", std::process::id()),
        capture: capture.clone(),
        runs: 0,
    };
    // A server, with clipboard writes turned into tmux buffers (so one would show).
    terminal.tmux(&[
        "-f",
        "/dev/null",
        "new-session",
        "-d",
        "-s",
        "keep",
        "sleep 600",
    ]);
    terminal.tmux(&["set-option", "-g", "set-clipboard", "on"]);
    let title = terminal.run("true");

    let commands = [
        "up --wait".to_string(),
        "launch --env SIM_HOSTILE_OUTPUT=1 --env SIM_LOG_LINES=30 --env SIM_FAIL_ATTEMPTS=1"
            .to_string(),
        "logs --follow".to_string(),
        "status".to_string(),
        "status --json".to_string(),
        "retry".to_string(),
        "logs --follow".to_string(),
        "logs".to_string(),
    ];
    for c in &commands {
        assert_eq!(terminal.run(&format!("{gantry} {c}")), title, "after `{c}`");
    }

    // One pod's log in a file, without the prefix: the pod's bytes exactly.
    let client = common::kube_client(&cloud);
    let pods = Api::<Pod>::default_namespaced(client.clone())
        .list(&ListParams::default().labels("job=ml-training"))
        .await
        .unwrap();
    let pod = pods.items[0].metadata.name.clone().unwrap();
    let file = dir.path().join("pod.log");
    terminal.run(&format!(
        "{gantry} logs --pod {pod} --no-prefix > {}",
        file.display()
    ));
    let mut served = Vec::new();
    Api::<Pod>::default_namespaced(client)
        .log_stream(&pod, &LogParams::default())
        .await
        .unwrap()
        .read_to_end(&mut served)
        .await
        .unwrap();
    let written = std::fs::read(&file).unwrap();
    assert!(has(&served, b"\x1b]"), "the workload is hostile");
    assert_eq!(written, served, "--no-prefix in a file is the pod's log");

    assert_eq!(terminal.run(&format!("{gantry} delete job --yes")), title);
    let commands_wrote = std::fs::read(&capture).unwrap();
    assert!(commands_wrote.len() > 1000, "the commands wrote little");
    assert!(
        !commands_wrote.contains(&0x1b),
        "a command wrote an escape sequence: {:?}",
        String::from_utf8_lossy(&commands_wrote)
    );
    assert_eq!(forbidden_characters(&commands_wrote), Vec::<String>::new());

    // The TUI on the same cluster, launching a hostile attempt.
    std::fs::write(&capture, b"").unwrap();
    tui_session(&mut terminal, &gantry, &title, &capture);

    // And the cluster's deletion, whose operation's detail is hostile too.
    std::fs::write(&capture, b"").unwrap();
    assert_eq!(terminal.run(&format!("{gantry} down --yes")), title);
    let down_wrote = std::fs::read(&capture).unwrap();
    assert!(!down_wrote.contains(&0x1b), "{down_wrote:?}");
    assert_eq!(forbidden_characters(&down_wrote), Vec::<String>::new());

    assert!(
        terminal.tmux(&["list-buffers"]).stdout.is_empty(),
        "a clipboard write (OSC 52) reached the terminal"
    );
    drop(cloud);
}

/// The TUI through its launch of a hostile workload, every pane drawn, then `q`.
fn tui_session(terminal: &mut Terminal, gantry: &str, title: &str, capture: &Path) {
    let socket = terminal.socket.clone();
    let job = "[job.env]\nSIM_HOSTILE_OUTPUT = \"1\"\nSIM_LOG_LINES = \"30\"\n";
    let config = capture.with_file_name("config.toml");
    std::fs::write(&config, job).unwrap();
    // The TUI needs keys: it runs in its own pane, and this test types into it.
    let script = format!(
        "{gantry} --config {}; tmux -L {socket} wait-for -S tui-done; sleep 600",
        config.display()
    );
    terminal.tmux(&[
        "new-session",
        "-d",
        "-s",
        "tui",
        "-x",
        "200",
        "-y",
        "50",
        "sh",
        "-c",
        &script,
    ]);
    let pipe = format!("cat >> {}", capture.display());
    terminal.tmux(&["pipe-pane", "-o", "-t", "tui", &pipe]);
    let screen = |t: &Terminal| {
        String::from_utf8_lossy(&t.tmux(&["capture-pane", "-p", "-t", "tui"]).stdout).into_owned()
    };
    let wait = |t: &Terminal, wanted: &[&str]| {
        common::tmux::wait_for_screen(|| screen(t), wanted);
    };
    wait(terminal, &["RUNNING", "No attempt yet"]);
    terminal.tmux(&["send-keys", "-t", "tui", "l"]);
    wait(terminal, &["Succeeded", "gnp.exe"]);
    // Every pane with hostile text in it, and the help over them.
    terminal.tmux(&["send-keys", "-t", "tui", "Tab"]);
    terminal.tmux(&["send-keys", "-t", "tui", "?"]);
    wait(terminal, &["Keys"]);
    terminal.tmux(&["send-keys", "-t", "tui", "Escape", "q"]);
    terminal.tmux(&["wait-for", "tui-done"]);
    let after = terminal.tmux(&["display-message", "-p", "-t", "tui", "#{pane_title}"]);
    assert_eq!(String::from_utf8_lossy(&after.stdout).trim(), title);

    let wrote = std::fs::read(capture).unwrap();
    assert!(has(&wrote, b"gnp.exe"), "the hostile text was drawn");
    assert!(!has(&wrote, b"\x1b]"), "the TUI wrote an OSC sequence");
    assert!(!has(&wrote, b"\x1bP"), "the TUI wrote a DCS sequence");
    assert_eq!(forbidden_characters(&wrote), Vec::<String>::new());
}
