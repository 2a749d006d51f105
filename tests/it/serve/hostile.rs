//! `gantry serve` against hostile clients, as a teammate with less trust than its owner could be:
//! sizes no terminal has, storms of window changes, pastes without end, floods of connections
//! that never log in, a session that panics, a key taken out while its session runs. The server
//! stays up and small, honest viewers get in, and every change is named and audited.

use std::io::Read;
use std::time::{Duration, Instant};

use gantry_test_support::serve::{OPERATOR, Served, VIEWER};
use gantry_test_support::ssh_client::RawClient;
use gantry_test_support::tmux::Tmux;

use super::ready;

/// What the server may hold after a hostile client has done its worst.
const RSS_LIMIT_KB: u64 = 100 * 1024;

fn alive(served: &Served) -> bool {
    std::path::Path::new(&format!("/proc/{}", served.pid())).exists()
}

/// Waits for `wanted` on `pane` at most `bound`: for what must happen within seconds.
fn within(pane: &Tmux, wanted: &[&str], bound: Duration) -> (String, Duration) {
    let start = Instant::now();
    loop {
        let screen = pane.screen();
        if wanted.iter().all(|w| screen.contains(w)) {
            return (screen, start.elapsed());
        }
        assert!(
            start.elapsed() < bound,
            "not within {bound:?}: {wanted:?}\n{screen}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_pty_a_window_storm_and_a_paste_without_end_leave_the_server_up_and_small() {
    if !ready() {
        return;
    }
    let served = Served::start(&[], &[]);
    let client = RawClient::login(served.port, &served.path(VIEWER)).await;
    let mut huge = client.tui(60000, 60000, (500, 200)).await;
    huge.wait_for(&["your terminal is 60000×60000", "ml-gke-cluster"])
        .await;
    assert!(alive(&served));

    // A storm of window changes, each larger than any screen.
    // (What the server sends meanwhile is read as it comes: a client that stops reading stops
    // taking its own socket's messages, window adjustments included.)
    for i in 0..2000u32 {
        huge.resize(1000 + i % 500, 300 + i % 200).await;
        if i % 50 == 0 {
            huge.drain().await;
        }
    }
    huge.resize(120, 40).await;
    huge.wait_for(&["ml-gke-cluster"]).await;

    // A bracketed paste of 100 MB that never ends: read and dropped.
    let mut paste = b"\x1b[200~".to_vec();
    paste.resize(1024 * 1024, b'x');
    for _ in 0..100 {
        huge.send(&paste).await;
        paste.truncate(0);
        paste.resize(1024 * 1024, b'y');
    }
    // Still a viewer: its keys are keys again once the paste is read (a key that came while
    // its queue was full was dropped with the paste, so it is pressed until it is seen).
    let help = ["Keys", "Esc or ? closes"];
    let mut pressed = 0;
    while !huge.shows_within(&help, Duration::from_secs(2)).await {
        pressed += 1;
        assert!(
            pressed < 30,
            "the viewer never answered a key after the paste"
        );
        huge.send(b"?").await;
    }

    let rss = served.status_kb("VmRSS");
    eprintln!(
        "server after the storm and the paste: VmRSS {} kB, RssAnon {} kB",
        rss,
        served.status_kb("RssAnon")
    );
    assert!(alive(&served));
    assert!(rss < RSS_LIMIT_KB, "VmRSS {rss} kB");

    // Another viewer is served as ever; a connection opens a few sessions, not a thousand.
    let other = RawClient::login(served.port, &served.path(VIEWER)).await;
    let mut small = other.tui(80, 24, (80, 24)).await;
    small.wait_for(&["ml-gke-cluster", "READ-ONLY"]).await;
    let opened = other.open_sessions(50).await;
    assert!(opened < 10, "{opened} sessions on one connection");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_idle_connections_keeps_nobody_out_and_is_closed_after_the_grace() {
    if !ready() {
        return;
    }
    let grace = Duration::from_secs(20);
    let served = Served::start(&[], &["--login-grace", "20"]);
    let started = Instant::now();
    let mut flood = Vec::new();
    for _ in 0..1500 {
        flood.push(std::net::TcpStream::connect(("127.0.0.1", served.port)).unwrap());
    }
    // On a busy machine the server accepts slowly, the listen queue fills and the last connects
    // wait for it: each connection's grace starts when it is accepted, so the deadline counts
    // from the last of them.
    let flooded = Instant::now();
    eprintln!("1,500 connections made in {:?}", flooded - started);

    // An honest viewer gets in at once: the oldest idle connections make room for it.
    let honest = Instant::now();
    let client = RawClient::login(served.port, &served.path(VIEWER)).await;
    let mut viewer = client.tui(80, 24, (80, 24)).await;
    viewer.wait_for(&["ml-gke-cluster"]).await;
    let took = honest.elapsed();
    eprintln!("an authorized viewer got the TUI {took:?} after a flood of 1,500 connections");
    assert!(
        took < grace / 2,
        "the flood kept the viewer out for {took:?}: it got in only as the grace ran out"
    );
    let descriptors = served.open_descriptors();
    assert!(descriptors < 400, "{descriptors} descriptors held");

    // Every flooding connection is closed by the grace time and 10 s.
    let deadline = flooded + grace + Duration::from_secs(10);
    for (i, socket) in flood.iter_mut().enumerate() {
        let mut buf = [0u8; 256];
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(!left.is_zero(), "connection {i} still open after the grace");
            socket.set_read_timeout(Some(left)).unwrap();
            match socket.read(&mut buf) {
                Ok(0) => break,
                Ok(_) => continue,
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break,
                // A signal to this process (another test's child ending) interrupts the read.
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => panic!("connection {i}: {e}"),
            }
        }
    }
    served.wait_for_log(&["not authenticated within the login grace time"]);
    // The viewer that got in stays.
    viewer.send(b"?").await;
    viewer.wait_for(&["Esc or ? closes"]).await;
}

#[test]
fn a_panicking_session_ends_alone_and_its_client_gets_its_terminal_back() {
    if !ready() {
        return;
    }
    let served = Served::start_with_env(&[("GANTRY_TEST_PANIC_KEY", "%")], &[], &[]);
    let victim = Tmux::run("panic-victim", &served.ssh(VIEWER, "-tt"), (80, 24)).unwrap();
    let other = Tmux::run("panic-other", &served.ssh(VIEWER, "-tt"), (80, 24)).unwrap();
    victim.wait_for(&["ml-gke-cluster"]);
    other.wait_for(&["ml-gke-cluster"]);
    assert_eq!(victim.format("#{alternate_on}"), "1");

    victim.literal("%");
    let (status, screen) = victim.wait_for_exit();
    assert_eq!(status, 1, "{screen}");
    assert!(screen.contains("this session failed and ended"), "{screen}");
    // The client's terminal as it was: main screen, cursor shown, the whole scroll region.
    assert_eq!(victim.format("#{alternate_on}"), "0");
    assert_eq!(victim.format("#{cursor_flag}"), "1");
    assert_eq!(
        victim.format("#{scroll_region_upper} #{scroll_region_lower}"),
        "0 23"
    );
    let logged = served.wait_for_log(&["a session panicked and ended alone"]);
    assert!(logged.contains("SHA256:"), "{logged}");

    // The server and the other viewer carry on; a new viewer gets in.
    assert!(alive(&served));
    other.keys(&["?"]);
    other.wait_for(&["Esc or ? closes"]);
    let again = Tmux::run("panic-again", &served.ssh(VIEWER, "-tt"), (80, 24)).unwrap();
    again.wait_for(&["ml-gke-cluster"]);
}

#[test]
fn a_key_taken_out_is_out_within_seconds_and_an_operator_taken_out_is_read_only() {
    if !ready() {
        return;
    }
    let served = Served::start(&[], &[]);
    // The operator's key may also watch, so leaving the operators leaves it a viewer.
    let viewer_key = std::fs::read_to_string(served.path(&format!("{VIEWER}.pub"))).unwrap();
    let operator_key = std::fs::read_to_string(served.path(&format!("{OPERATOR}.pub"))).unwrap();
    let authorized = served.path("authorized_keys");
    std::fs::write(&authorized, format!("{viewer_key}{operator_key}")).unwrap();
    let viewer = Tmux::run("revoke-viewer", &served.ssh(VIEWER, "-tt"), (80, 24)).unwrap();
    let operator = Tmux::run("revoke-op", &served.ssh(OPERATOR, "-tt"), (80, 24)).unwrap();
    viewer.wait_for(&["ml-gke-cluster"]);
    operator.wait_for(&["ml-gke-cluster"]);

    // Out of the operators, with the file's modification time kept as it was.
    let operators = served.path("operators");
    let when = std::fs::metadata(&operators).unwrap().modified().unwrap();
    std::fs::write(&operators, "# nobody\n").unwrap();
    std::fs::File::options()
        .write(true)
        .open(&operators)
        .unwrap()
        .set_modified(when)
        .unwrap();
    let (_, took) = within(
        &operator,
        &["taken out of the operators"],
        Duration::from_secs(15),
    );
    eprintln!("an operator's key left the operators: read-only {took:?} later");
    operator.keys(&["c"]);
    operator.wait_for(&["read-only: refused to create the cluster"]);

    // Out of the authorized keys: the session ends, saying why.
    std::fs::write(&authorized, &operator_key).unwrap();
    let (screen, took) = within(
        &viewer,
        &["taken out of the authorized keys", "GANTRY-EXIT="],
        Duration::from_secs(15),
    );
    eprintln!("a key taken out of the authorized keys: its session ended {took:?} later");
    assert!(!screen.contains("Job ml-training-job"), "{screen}");
    operator.wait_for(&["ml-gke-cluster"]);
    served.wait_for_log(&["a key taken out of the authorized keys"]);
}

#[test]
fn viewers_see_who_changed_what_and_the_audit_file_has_a_line_per_change() {
    if !ready() {
        return;
    }
    let served = Served::start(&[], &[]);
    let viewer = Tmux::run("audit-viewer", &served.ssh(VIEWER, "-tt"), (100, 30)).unwrap();
    let operator = Tmux::run("audit-op", &served.ssh(OPERATOR, "-tt"), (100, 30)).unwrap();
    operator.create_cluster();
    viewer.wait_for(&["RUNNING"]);
    // A viewer's try never reaches the engine: refused by its own gate, and not audited.
    viewer.keys(&["l"]);
    viewer.wait_for(&["read-only: refused to launch the Job"]);
    operator.keys(&["l"]);
    // The operator's key is named by its comment (`ssh-keygen -C operator`).
    viewer.wait_for(&["operator: launched ml-training-job"]);

    let path = served.path("state/gantry/audit.jsonl");
    let all: Vec<serde_json::Value> = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // The engine's own bookkeeping (recording how the pods ended, what the run cost, taking the
    // recoverer's Lease) is audited as its own.
    let (engine, lines): (Vec<_>, Vec<_>) = all
        .into_iter()
        .partition(|l| l["principal"]["kind"] == "engine");
    for line in &engine {
        let kind = (line["command"].as_str(), line["principal"]["name"].as_str());
        assert!(
            matches!(
                kind,
                (Some("record-ends"), Some("gantry (ends)"))
                    | (Some("record-cost"), Some("gantry (cost)"))
                    | (Some("take-lease"), Some("gantry (recoverer)"))
            ),
            "{line}"
        );
    }
    let commands: Vec<&str> = lines
        .iter()
        .map(|l| l["command"].as_str().unwrap())
        .collect();
    assert_eq!(commands, ["create-cluster", "launch"], "{lines:?}");
    for line in &lines {
        assert_eq!(line["principal"]["kind"], "ssh-key");
        assert_eq!(line["principal"]["name"], "operator");
        assert!(
            line["principal"]["fingerprint"]
                .as_str()
                .unwrap()
                .starts_with("SHA256:")
        );
        assert_eq!(line["result"], "started");
    }
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
}
