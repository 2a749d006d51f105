//! Notifications against real HTTP receivers on loopback: each target kind's request as it
//! arrives, retries and their waits as the receiver measures them, a message that outlives a
//! restart, the rate limit under a flood, a refusal that is not retried.

use std::time::Duration;

use gantry::config::{NotifyTarget, TargetKind};
use gantry::notify::{Delivery, Message as Event, Notifier};
use gantry::secret_url::SecretUrl;
use gantry::vocabulary::Kind;
use gantry::vocabulary::Severity;
use gantry_test_support as common;

use super::notify_receiver::{PATIENCE, Receiver, Reply, SECRET_PATH};

/// Short waits, so that retries happen within a test.
pub fn quick() -> Delivery {
    Delivery {
        first_retry: Duration::from_millis(50),
        max_retry: Duration::from_millis(200),
        timeout: Duration::from_secs(5),
        ..Delivery::default()
    }
}

pub fn target(kind: TargetKind, url: &str) -> NotifyTarget {
    NotifyTarget::new(kind, Some(SecretUrl::parse(url).unwrap()))
}

pub fn event(kind: Kind, severity: Severity, key: &str) -> Event {
    let mut e = Event::new(
        kind,
        severity,
        "ml-gke-cluster",
        "attempt #3 failed: OOMKilled",
        key,
    );
    e.job = Some("ml-training-job".into());
    e.run = Some("run-abc".into());
    e.attempt = Some(3);
    e.cost_so_far = Some(12.5);
    e.detail.insert("class".into(), "oom".into());
    e.at = "2025-01-31T12:00:00Z".parse().unwrap();
    e.watch = Some("ssh -t -p 2222 gpu-box".into());
    e.link = Some("https://console.cloud.google.com/kubernetes".into());
    e
}

/// A notifier of one target of `kind` posting to `receiver`, with its outbox in a directory of
/// its own (kept while the returned guard lives).
fn one_target(kind: TargetKind, receiver: &Receiver) -> (Notifier, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let notifier =
        Notifier::start_with(&[target(kind, &receiver.url())], dir.path(), quick()).unwrap();
    (notifier, dir)
}

pub async fn idle(notifier: &Notifier) {
    assert!(
        notifier.idle_within(PATIENCE).await,
        "the notifier never went idle"
    );
}

#[tokio::test]
async fn a_webhook_gets_schema_version_one_with_its_headers() {
    common::init();
    let mut receiver = Receiver::start(vec![]).await;
    let (notifier, _dir) = one_target(TargetKind::Webhook, &receiver);
    notifier.send(event(
        Kind::AttemptEnded,
        Severity::Critical,
        "run-abc/attempt-ended/3",
    ));
    let got = receiver.next().await;
    assert_eq!(got.method, "POST");
    assert_eq!(got.path, SECRET_PATH);
    assert_eq!(got.header("content-type"), Some("application/json"));
    assert_eq!(
        got.header("user-agent"),
        Some(concat!("gantry/", env!("CARGO_PKG_VERSION")))
    );
    assert_eq!(
        got.header("idempotency-key"),
        Some("run-abc/attempt-ended/3")
    );
    assert_eq!(
        got.json(),
        serde_json::json!({
            "version": 1,
            "event": "attempt-ended",
            "severity": "critical",
            "cluster": "ml-gke-cluster",
            "job": "ml-training-job",
            "run": "run-abc",
            "attempt": 3,
            "text": "attempt #3 failed: OOMKilled",
            "detail": {"class": "oom"},
            "costSoFar": 12.5,
            "at": "2025-01-31T12:00:00Z",
            "key": "run-abc/attempt-ended/3",
            "watch": "ssh -t -p 2222 gpu-box",
            "link": "https://console.cloud.google.com/kubernetes",
        })
    );
    idle(&notifier).await;
    let status = notifier.status().unwrap();
    assert_eq!((status[0].pending, status[0].delivered), (0, 1));
    assert_eq!(
        status[0].last.as_ref().unwrap().result,
        "delivered (HTTP 200)"
    );
}

#[tokio::test]
async fn slack_gets_a_fallback_text_and_blocks() {
    common::init();
    let mut receiver = Receiver::start(vec![]).await;
    let (notifier, _dir) = one_target(TargetKind::Slack, &receiver);
    notifier.send(event(Kind::AttemptEnded, Severity::Critical, "k1"));
    let got = receiver.next().await;
    assert_eq!(got.header("content-type"), Some("application/json"));
    let body = got.json();
    assert_eq!(
        body["text"],
        "🔴 Attempt ended: ml-training-job #3 on ml-gke-cluster: attempt #3 failed: OOMKilled"
    );
    let types: Vec<_> = body["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["type"].as_str().unwrap())
        .collect();
    assert_eq!(types, ["header", "section", "context"]);
    assert_eq!(body["blocks"][0]["text"]["type"], "plain_text");
    assert_eq!(body["blocks"][1]["fields"][2]["text"], "*Attempt*\n#3");
    assert_eq!(
        body["blocks"][1]["fields"][3]["text"],
        "*Cost so far*\n$12.50"
    );
    assert_eq!(body["blocks"][1]["fields"][4]["text"], "*Class*\noom");
    assert_eq!(
        body["blocks"][2]["elements"][0]["text"],
        "Watch it: `ssh -t -p 2222 gpu-box`"
    );
}

#[tokio::test]
async fn ntfy_gets_the_text_with_title_priority_tags_and_click() {
    common::init();
    let mut receiver = Receiver::start(vec![]).await;
    let (notifier, _dir) = one_target(TargetKind::Ntfy, &receiver);
    notifier.send(event(Kind::Alert, Severity::Warning, "k1"));
    let got = receiver.next().await;
    assert_eq!(got.method, "POST");
    assert_eq!(got.path, SECRET_PATH);
    assert_eq!(
        got.header("title"),
        Some("Training alert: ml-training-job #3 on ml-gke-cluster")
    );
    assert_eq!(got.header("priority"), Some("4"));
    assert_eq!(got.header("tags"), Some("warning,alert"));
    assert_eq!(
        got.header("click"),
        Some("https://console.cloud.google.com/kubernetes")
    );
    assert_eq!(
        std::str::from_utf8(&got.body).unwrap(),
        "attempt #3 failed: OOMKilled\nCost so far: $12.50\nWatch it: ssh -t -p 2222 gpu-box"
    );
}

#[tokio::test]
async fn two_server_errors_then_success_deliver_once_after_three_tries_with_one_key() {
    common::init();
    let mut receiver = Receiver::start(vec![Reply::status(500), Reply::status(500)]).await;
    let (notifier, _dir) = one_target(TargetKind::Webhook, &receiver);
    notifier.send(event(Kind::Budget, Severity::Warning, "run-abc/budget/80"));
    let tries = [
        receiver.next().await,
        receiver.next().await,
        receiver.next().await,
    ];
    for t in &tries {
        assert_eq!(t.header("idempotency-key"), Some("run-abc/budget/80"));
        assert_eq!(t.body, tries[0].body, "the same message every try");
    }
    idle(&notifier).await;
    assert!(receiver.more().is_none(), "delivered once");
    let status = notifier.status().unwrap();
    assert_eq!((status[0].pending, status[0].delivered), (0, 1));
    assert_eq!(
        status[0].last.as_ref().unwrap().result,
        "delivered (HTTP 200) at try 3"
    );
}

#[tokio::test]
async fn a_message_sent_while_the_receiver_is_down_arrives_after_a_restart() {
    common::init();
    // A port nobody listens on, for now.
    let addr = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let url = format!("http://{addr}{SECRET_PATH}");
    let targets = [target(TargetKind::Webhook, &url)];
    let dir = tempfile::tempdir().unwrap();
    let slow = Delivery {
        first_retry: Duration::from_millis(400),
        max_retry: Duration::from_millis(400),
        ..quick()
    };
    let notifier = Notifier::start_with(&targets, dir.path(), slow.clone()).unwrap();
    notifier.send(event(
        Kind::AttemptEnded,
        Severity::Critical,
        "run-abc/ended",
    ));
    idle(&notifier).await;
    let status = notifier.status().unwrap();
    assert_eq!(status[0].pending, 1);
    let last = status[0].last.clone().unwrap();
    assert!(last.result.starts_with("cannot connect"), "{last:?}");
    drop(notifier);

    let listener = tokio::net::TcpListener::bind(addr).await.unwrap();
    let mut receiver = Receiver::on(listener, vec![]);
    let notifier = Notifier::start_with(&targets, dir.path(), slow).unwrap();
    let got = receiver.next().await;
    assert_eq!(got.header("idempotency-key"), Some("run-abc/ended"));
    idle(&notifier).await;
    assert_eq!(notifier.status().unwrap()[0].pending, 0);
}

#[tokio::test]
async fn a_message_sent_just_before_a_drop_is_kept_for_the_next_notifier() {
    common::init();
    let mut receiver = Receiver::start(vec![]).await;
    let targets = [target(TargetKind::Webhook, &receiver.url())];
    let dir = tempfile::tempdir().unwrap();
    let notifier = Notifier::start_with(&targets, dir.path(), quick()).unwrap();
    notifier.send(event(
        Kind::Recovered,
        Severity::Info,
        "run-abc/recovered/1",
    ));
    drop(notifier);
    let _notifier = Notifier::start_with(&targets, dir.path(), quick()).unwrap();
    let got = receiver.next().await;
    assert_eq!(got.header("idempotency-key"), Some("run-abc/recovered/1"));
}

#[tokio::test]
async fn too_many_requests_is_retried_no_earlier_than_its_retry_after() {
    common::init();
    let told = Reply {
        status: 429,
        headers: vec![("retry-after", "2".into())],
        body: String::new(),
    };
    let mut receiver = Receiver::start(vec![told]).await;
    let (notifier, _dir) = one_target(TargetKind::Ntfy, &receiver);
    notifier.send(event(Kind::Stalled, Severity::Warning, "run-abc/stalled"));
    let first = receiver.next().await;
    let second = receiver.next().await;
    let gap = second.at - first.at;
    assert!(gap >= Duration::from_secs(2), "retried after {gap:?}");
    assert!(gap < Duration::from_secs(10), "retried after {gap:?}");
}

#[tokio::test]
async fn a_flood_of_alerts_sends_one_per_window_and_a_critical_one_still_passes() {
    common::init();
    let mut receiver = Receiver::start(vec![]).await;
    let (notifier, _dir) = one_target(TargetKind::Webhook, &receiver);
    for n in 0..1000 {
        notifier.send(event(
            Kind::Alert,
            Severity::Warning,
            &format!("run-abc/alert/{n}"),
        ));
    }
    notifier.send(event(Kind::Alert, Severity::Critical, "run-abc/alert/nan"));
    let mut got = vec![receiver.next().await, receiver.next().await];
    idle(&notifier).await;
    got.extend(std::iter::from_fn(|| receiver.more()));
    let severities: Vec<_> = got.iter().map(|r| r.json()["severity"].clone()).collect();
    assert_eq!(severities, ["warning", "critical"]);
    let status = notifier.status().unwrap();
    assert_eq!((status[0].delivered, status[0].rate_limited), (2, 999));
}

#[tokio::test]
async fn a_bad_request_is_not_retried_and_the_message_is_marked_failed() {
    common::init();
    let refused = Reply {
        status: 400,
        headers: Vec::new(),
        body: "invalid_payload".into(),
    };
    let mut receiver = Receiver::start(vec![refused]).await;
    let (notifier, _dir) = one_target(TargetKind::Slack, &receiver);
    notifier.send(event(Kind::Idle, Severity::Info, "idle/1"));
    receiver.next().await;
    idle(&notifier).await;
    assert!(receiver.more().is_none(), "not tried again");
    let status = notifier.status().unwrap();
    assert_eq!((status[0].pending, status[0].failed), (0, 1));
    assert_eq!(
        status[0].last.as_ref().unwrap().result,
        "refused: HTTP 400 (invalid_payload)"
    );
}
