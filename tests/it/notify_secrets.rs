//! The URL of a notification target is a secret: whatever happens to a message — refused
//! with a body that echoes the URL, retried, never connected — its path and query show in no
//! file of the outbox, no status, no test result and no log line.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use gantry::config::TargetKind;
use gantry::notify::Notifier;
use gantry::vocabulary::Kind;
use gantry::vocabulary::Severity;
use gantry_test_support as common;

use super::notify::{event, idle, quick, target};
use super::notify_receiver::{Receiver, Reply, SECRET_PATH};

/// Log lines, captured.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn the_urls_secret_path_is_in_no_file_status_error_or_log() {
    common::init();
    let logs = Captured::default();
    let writer = logs.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::DEBUG)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    // This test's runtime has one thread: the deliverer logs on it.
    let _logging = tracing::subscriber::set_default(subscriber);

    let echo = |status| Reply {
        status,
        headers: Vec::new(),
        body: format!("no hook at {SECRET_PATH}"),
    };
    let mut refusing = Receiver::start(vec![echo(404)]).await;
    let mut failing = Receiver::start(vec![echo(500), echo(503)]).await;
    let down = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let targets = [
        target(TargetKind::Slack, &refusing.url()),
        target(TargetKind::Webhook, &failing.url()),
        target(
            TargetKind::Ntfy,
            &format!("http://{down}{SECRET_PATH}?auth=s3cr3tS3CR3Ts3cr3t"),
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    let notifier = Notifier::start_with(&targets, dir.path(), quick()).unwrap();
    notifier.send(event(Kind::AttemptEnded, Severity::Critical, "k"));
    refusing.next().await;
    failing.next().await;
    failing.next().await;
    failing.next().await;
    idle(&notifier).await;

    let mut shown = vec![
        String::from_utf8_lossy(&logs.0.lock().unwrap()).into_owned(),
        format!("{notifier:?}"),
        format!("{targets:?}"),
        gantry::commands::notify::render_status(
            &notifier.status().unwrap(),
            jiff::Timestamp::now(),
        ),
    ];
    let results = gantry::notify::send_test(
        &targets,
        &gantry::notify::test_event("ml-gke-cluster"),
        Duration::from_secs(5),
        Some(dir.path()),
    )
    .await
    .unwrap();
    shown.push(gantry::commands::notify::render_test(&results, false));
    drop(notifier);
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        shown.push(
            String::from_utf8_lossy(&std::fs::read(entry.unwrap().path()).unwrap()).into_owned(),
        );
    }
    assert!(
        shown[0].contains("refused"),
        "the logs were captured: {}",
        shown[0]
    );
    assert!(shown[3].contains("refused: HTTP 404"), "{}", shown[3]);
    for text in &shown {
        assert!(!text.contains("s3cr3t"), "the secret shows in: {text}");
        assert!(!text.contains("SECRET"), "the secret shows in: {text}");
    }
}
