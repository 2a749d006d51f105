//! Hostile input: whatever bytes a container prints, whatever a config file holds, whatever a
//! Job manifest says, whatever a broken server answers — Gantry reports an error and goes on; it
//! never panics, hangs or lets an escape sequence through to the terminal.
//!
//! The property tests run a modest number of cases so `cargo test` stays fast; set
//! `PROPTEST_CASES=100000` for a longer fuzz run.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gantry_test_support as common;

use std::net::SocketAddr;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::Response;
use bytes::Bytes;
use common::cases::cases;
use gantry::config::{Config, JobConfig, Toleration};
use gantry::engine::world::log_store::{DISPLAY_CHARS, LogStore, Source};
use gantry::engine::{Report, World};
use gantry::k8s::logs::lines::FRAGMENT_BYTES;
use gantry::k8s::logs::{LogTail, StreamEnd, TailEvent, TailOptions, TailTarget};
use gantry::k8s::manifest;
use gantry::k8s::watch::{Change, JobWatchEvent};
use gantry::keys::Keymap;
use gantry::sanitize::{is_inert, screen as sanitize};
use proptest::prelude::*;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Bytes rich in what terminals interpret: ESC, CSI/OSC/DCS introducers, C1 in UTF-8, BEL, ST,
/// CR, invalid UTF-8 and bidi overrides.
fn terminal_noise() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        Just(b"\x1b".to_vec()),
        Just(b"\x1b[".to_vec()),
        Just(b"\x1b]".to_vec()),
        Just(b"\x1bP".to_vec()),
        Just(b"\x1b\\".to_vec()),
        Just(b"\x07".to_vec()),
        Just(b"\r".to_vec()),
        Just(b"\t".to_vec()),
        Just(b"\xc2\x9b".to_vec()),
        Just(b"\xc2\x9d".to_vec()),
        Just(b"\xc2\x9c".to_vec()),
        Just(b"\xc2\x85".to_vec()),
        Just(b"\xe2\x80\xae".to_vec()),
        Just(b"\xff\xfe".to_vec()),
        Just(b"\xc3".to_vec()),
        Just(b"31m".to_vec()),
        Just(b"52;c;ZWNobw==".to_vec()),
        Just(b"?1049h".to_vec()),
        any::<u8>().prop_map(|b| vec![b]),
        "[ -~]{0,8}".prop_map(String::into_bytes),
    ];
    prop::collection::vec(piece, 0..64).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(cases(512))]

    #[test]
    fn sanitised_bytes_are_inert(bytes in prop::collection::vec(any::<u8>(), 0..4096)) {
        let out = sanitize(&bytes);
        prop_assert!(is_inert(&out), "{:?} -> {:?}", bytes, out);
        prop_assert!(!out.contains(char::from(0x1b)));
    }

    #[test]
    fn sanitised_escape_soup_is_inert(bytes in terminal_noise()) {
        let out = sanitize(&bytes);
        prop_assert!(is_inert(&out), "{:?} -> {:?}", bytes, out);
        for bidi in ['\u{202a}', '\u{202b}', '\u{202c}', '\u{202d}', '\u{202e}', '\u{2066}', '\u{2069}'] {
            prop_assert!(!out.contains(bidi));
        }
    }

    /// What reaches the logs pane is sanitised, whatever the pieces of a long line were.
    #[test]
    fn the_logs_pane_holds_only_inert_text(lines in prop::collection::vec((terminal_noise(), any::<bool>()), 1..20)) {
        let mut store = LogStore::default();
        store.switch(Source { attempt: "a".into(), pod: None, previous: false });
        let lines: Vec<_> = lines.into_iter().map(|(b, continues)| gantry::k8s::logs::LogLine { ts: None, bytes: Bytes::from(b), continues }).collect();
        store.push("p\x1b[2J", &lines);
        for entry in store.lines.iter() {
            prop_assert!(is_inert(entry.text), "{:?}", entry.text);
            prop_assert!(entry.text.chars().count() <= DISPLAY_CHARS);
        }
    }
}

#[test]
fn a_one_mib_line_of_anything_is_handled() {
    let mut line = b"\x1b]52;c;".to_vec();
    line.extend((0..(1 << 20)).map(|i: u32| (i % 256) as u8));
    let out = sanitize(&line);
    assert!(is_inert(&out));
    let plain = vec![b'x'; 1 << 20];
    assert_eq!(sanitize(&plain).len(), 1 << 20);
}

/// TOML-ish text built from the config's own keys, values of every type, and junk.
fn config_text() -> impl Strategy<Value = String> {
    let key = prop_oneof![
        Just("name"),
        Just("node-count"),
        Just("machine-type"),
        Just("oauth-scopes"),
        Just("disk-size-gb"),
        Just("autoscaling"),
        Just("min-nodes"),
        Just("max-nodes"),
        Just("image"),
        Just("env"),
        Just("labels"),
        Just("backoff-limit"),
        Just("completions"),
        Just("parallelism"),
        Just("indexed"),
        Just("tolerations"),
        Just("master-port"),
        Just("launch"),
        Just("quit"),
        Just("project"),
        Just("gpus"),
        Just("memory"),
    ];
    let value = prop_oneof![
        Just("\"ml-gke-cluster\"".to_string()),
        Just("\"\"".to_string()),
        Just("-1".to_string()),
        Just("4294967296".to_string()),
        Just("99999999999999999999999".to_string()),
        Just("true".to_string()),
        Just("[]".to_string()),
        Just("[1, \"a\"]".to_string()),
        Just("{}".to_string()),
        Just("1.5e309".to_string()),
        Just("\"ctrl-\"".to_string()),
        Just("\"c-\u{e9}\"".to_string()),
        Just("\"\u{1F600}\"".to_string()),
        Just("\"f13\"".to_string()),
        Just("\"\\u0000\"".to_string()),
        any::<i64>().prop_map(|n| n.to_string()),
        "\"[ -~]{0,12}\"",
        "[^\\n]{0,12}",
    ];
    let table = prop_oneof![
        Just("[cluster]"),
        Just("[cluster.autoscaling]"),
        Just("[cluster.gpu-pool]"),
        Just("[job]"),
        Just("[job.env]"),
        Just("[job.resources]"),
        Just("[job.distributed]"),
        Just("[[job.tolerations]]"),
        Just("[keys]"),
        Just("[job"),
        Just("[]"),
    ];
    let line = prop_oneof![
        table.prop_map(String::from),
        (key, value).prop_map(|(k, v)| format!("{k} = {v}")),
        "[^\\n]{0,20}",
    ];
    prop::collection::vec(line, 0..12).prop_map(|l| l.join("\n"))
}

proptest! {
    #![proptest_config(cases(512))]

    #[test]
    fn config_parse_returns_errors_never_panics(text in config_text()) {
        if let Ok(config) = Config::parse(&text) {
            // What parses is usable: the keymap and the manifests say yes or no.
            let _ = Keymap::with_overrides(&config.keys);
            let _ = manifest::training_job(&config.job, Some("p"), 1);
            let _ = manifest::worker_service(&config.job, 1);
        }
    }

    #[test]
    fn config_parse_of_any_text_never_panics(text in "\\PC{0,200}") {
        let _ = Config::parse(&text);
    }

    #[test]
    fn manifests_from_any_job_config_error_never_panic(
        name in "\\PC{0,70}",
        namespace in "[a-z0-9.-]{0,70}",
        container in "\\PC{0,20}",
        image in proptest::option::of("\\PC{0,30}"),
        env in prop::collection::btree_map("\\PC{0,10}", "\\PC{0,10}", 0..4),
        labels in prop::collection::btree_map("[a-z./-]{0,10}", "\\PC{0,70}", 0..3),
        cpu in proptest::option::of("[0-9.eEmkKMGi+-]{0,8}"),
        memory in proptest::option::of("\\PC{0,8}"),
        gpus in proptest::option::of(any::<u32>()),
        parallelism in proptest::option::of(any::<u32>()),
        completions in proptest::option::of(any::<u32>()),
        indexed in any::<bool>(),
        master_port in any::<u16>(),
        tol in proptest::option::of("\\PC{0,10}"),
        attempt in any::<u32>(),
    ) {
        let cfg = JobConfig {
            name,
            namespace,
            container,
            image,
            env,
            labels,
            resources: gantry::config::Resources { cpu, memory, gpus },
            parallelism,
            completions,
            indexed,
            distributed: indexed.then_some(gantry::config::Distributed { master_port, service: None }),
            tolerations: tol.map(|key| vec![Toleration { key, operator: None, value: None, effect: None }]).unwrap_or_default(),
            ..JobConfig::default()
        };
        if let Ok(job) = manifest::training_job(&cfg, Some("demo-project"), attempt) {
            prop_assert!(manifest::validate(&job).is_ok());
            let _ = manifest::next_attempt(&job, &cfg.name, attempt.saturating_add(1), &Default::default());
        }
        let _ = manifest::worker_service(&cfg, attempt);
    }

    /// A Job manifest of any shape (`--job-manifest`): validation answers, never panics.
    #[test]
    fn validating_any_job_json_never_panics(
        name in proptest::option::of("\\PC{0,70}"),
        completions in proptest::option::of(any::<i32>()),
        parallelism in proptest::option::of(any::<i32>()),
        mode in proptest::option::of(prop_oneof![Just("Indexed".to_string()), "\\PC{0,8}"]),
        restart in proptest::option::of(prop_oneof![Just("Never".to_string()), "\\PC{0,8}"]),
        containers in prop::collection::vec(("\\PC{0,12}", proptest::option::of("\\PC{0,12}"), "\\PC{0,10}", "\\PC{0,6}"), 0..3),
    ) {
        let containers: Vec<serde_json::Value> = containers
            .into_iter()
            .map(|(n, image, env, q)| serde_json::json!({
                "name": n, "image": image, "env": [{"name": env, "value": "v"}],
                "resources": {"requests": {"cpu": q}, "limits": {"memory": q}},
            }))
            .collect();
        let job = serde_json::json!({
            "apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name},
            "spec": {"completions": completions, "parallelism": parallelism, "completionMode": mode,
                "template": {"spec": {"restartPolicy": restart, "containers": containers}}},
        });
        if let Ok(job) = serde_json::from_value::<k8s_openapi::api::batch::v1::Job>(job) {
            let _ = manifest::validate(&job);
        }
    }
}

// ---- A server answering garbage ----

#[derive(Clone, Copy, Debug, PartialEq)]
enum Garbage {
    /// Every answer is JSON cut off in the middle.
    Truncated,
    /// Well-formed JSON of the wrong shape (a string where a list goes, numbers for strings).
    WrongTypes,
    /// A 16 MiB body that is not what was asked for.
    Huge,
    /// Pod lists are fine; a pod's log is one line that never ends.
    EndlessLine,
    /// Pod lists are fine; a pod's log answers with an error body that is not JSON.
    BrokenLogErrors,
}

const POD_LIST: &str = r#"{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[{"metadata":{"name":"p-0","namespace":"default","resourceVersion":"1","labels":{"job-name":"j"}},"spec":{"containers":[{"name":"c","image":"i"}]},"status":{"phase":"Running","containerStatuses":[{"name":"c","ready":true,"restartCount":0,"image":"i","imageID":"","state":{"running":{"startedAt":"2024-01-01T00:00:00Z"}}}]}}]}"#;

async fn garbage(State(mode): State<Garbage>, request: Request) -> Response {
    let path = request.uri().path().to_string();
    let query = request.uri().query().unwrap_or("").to_string();
    let json = |status: u16, body: Body| {
        Response::builder()
            .status(status)
            .header("content-type", "application/json")
            .body(body)
            .unwrap()
    };
    let watching = query.contains("watch=true") || query.contains("watch=1");
    match mode {
        Garbage::Truncated => json(
            200,
            Body::from(r#"{"kind":"List","apiVersion":"v1","metadata":{"resourceVers"#),
        ),
        Garbage::WrongTypes => {
            if watching {
                json(
                    200,
                    Body::from(
                        "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":7}}}\n{\"type\":3}\n",
                    ),
                )
            } else {
                json(
                    200,
                    Body::from(
                        r#"{"kind":"List","apiVersion":"v1","metadata":{"resourceVersion":5},"items":"nope"}"#,
                    ),
                )
            }
        }
        Garbage::Huge => {
            let mut body = br#"{"kind":"List","apiVersion":"v1","metadata":{},"items":[""#.to_vec();
            body.resize(16 << 20, b'x');
            json(200, Body::from(body))
        }
        Garbage::EndlessLine | Garbage::BrokenLogErrors if path.ends_with("/log") => {
            if mode == Garbage::BrokenLogErrors {
                return Response::builder()
                    .status(500)
                    .body(Body::from("<html>oops"))
                    .unwrap();
            }
            let chunk = Bytes::from(vec![b'A'; 64 * 1024]);
            let stream =
                futures::stream::repeat_with(move || Ok::<_, std::io::Error>(chunk.clone()));
            Response::builder()
                .status(200)
                .header("content-type", "text/plain")
                .body(Body::from_stream(stream))
                .unwrap()
        }
        Garbage::EndlessLine | Garbage::BrokenLogErrors => {
            if watching {
                // A watch that never says anything.
                json(
                    200,
                    Body::from_stream(futures::stream::pending::<Result<Bytes, std::io::Error>>()),
                )
            } else if path.ends_with("/pods") {
                json(200, Body::from(POD_LIST))
            } else if path.ends_with("/pods/p-0") {
                json(
                    200,
                    Body::from(
                        serde_json::to_vec(
                            &serde_json::from_str::<serde_json::Value>(POD_LIST).unwrap()["items"]
                                [0],
                        )
                        .unwrap(),
                    ),
                )
            } else {
                json(
                    404,
                    Body::from(
                        r#"{"kind":"Status","apiVersion":"v1","status":"Failure","code":404,"reason":"NotFound","message":"not found"}"#,
                    ),
                )
            }
        }
    }
}

async fn garbage_server(mode: Garbage) -> (kube::Client, CancellationToken) {
    let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let app = axum::Router::new().fallback(garbage).with_state(mode);
    let stop = CancellationToken::new();
    let s = stop.clone();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app)
            .with_graceful_shutdown(async move { s.cancelled().await })
            .await;
    });
    let mut config = kube::Config::new(format!("http://{addr}").parse().unwrap());
    config.default_namespace = "default".into();
    config.read_timeout = Some(Duration::from_secs(30));
    (kube::Client::try_from(config).unwrap(), stop)
}

/// Only against a hang: a garbage answer must end in an error well before this.
const HANG_GUARD: Duration = Duration::from_secs(60);

/// The Job watchers on a garbage server: each reports trouble, and the App shows it.
async fn watchers_report_trouble(mode: Garbage) {
    let (client, stop) = garbage_server(mode).await;
    let (tx, mut rx) = mpsc::channel(64);
    let cancel = CancellationToken::new();
    let _set =
        gantry::k8s::watch::spawn_job_watchers(client, &JobConfig::default(), tx, cancel.clone());
    let mut model = World::default();
    model.apply(Report::Connected);
    let mut troubled = [false; 3];
    tokio::time::timeout(HANG_GUARD, async {
        while !troubled.iter().all(|t| *t) {
            let e = rx.recv().await.unwrap();
            let which = match &e {
                JobWatchEvent::Job(Change::Trouble(_)) => Some(0),
                JobWatchEvent::Pod(Change::Trouble(_)) => Some(1),
                JobWatchEvent::Event(Change::Trouble(_)) => Some(2),
                _ => None,
            };
            model.apply(Report::Job(e));
            if let Some(i) = which {
                troubled[i] = true;
                assert!(
                    model.trouble().is_some(),
                    "{mode:?}: the model shows no trouble"
                );
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("{mode:?}: the watchers never reported the garbage"));
    cancel.cancel();
    stop.cancel();
}

#[tokio::test]
async fn truncated_json_is_trouble_not_a_crash() {
    watchers_report_trouble(Garbage::Truncated).await;
}

#[tokio::test]
async fn wrong_types_are_trouble_not_a_crash() {
    watchers_report_trouble(Garbage::WrongTypes).await;
}

#[tokio::test]
async fn a_huge_body_is_trouble_not_a_crash() {
    watchers_report_trouble(Garbage::Huge).await;
}

/// A one-shot read of the logs on a garbage server ends with the error.
#[tokio::test]
async fn a_log_read_on_garbage_ends_in_an_error() {
    for mode in [Garbage::Truncated, Garbage::WrongTypes, Garbage::Huge] {
        let (client, stop) = garbage_server(mode).await;
        let mut tail = LogTail::follow(
            client,
            TailTarget {
                namespace: "default".into(),
                job: "j".into(),
                container: None,
            },
            TailOptions {
                follow: false,
                ..Default::default()
            },
        );
        let end = tokio::time::timeout(HANG_GUARD, async {
            loop {
                match tail.next().await {
                    Some(TailEvent::PodEnded { why, .. }) => return why,
                    Some(_) => {}
                    None => panic!("{mode:?}: the tail ended without saying why"),
                }
            }
        })
        .await
        .unwrap();
        assert!(matches!(end, StreamEnd::Failed(_)), "{mode:?}: {end:?}");
        stop.cancel();
    }
}

/// A log line that never ends arrives in fragments of at most 256 KiB: memory stays bounded,
/// the App shows one growing line (cut for display), and saving goes on.
#[tokio::test]
async fn a_line_that_never_ends_comes_in_bounded_fragments() {
    let (client, stop) = garbage_server(Garbage::EndlessLine).await;
    let dir = tempfile::tempdir().unwrap();
    let (mut rx, handle) = LogTail::follow(
        client,
        TailTarget {
            namespace: "default".into(),
            job: "j".into(),
            container: None,
        },
        TailOptions {
            save_dir: Some(dir.path().to_path_buf()),
            ..Default::default()
        },
    )
    .into_parts();
    let mut store = LogStore::default();
    store.switch(Source {
        attempt: "j".into(),
        pod: None,
        previous: false,
    });
    let mut fragments = 0;
    tokio::time::timeout(HANG_GUARD, async {
        while fragments < 16 {
            let event = rx.recv().await.unwrap();
            if let TailEvent::Lines { lines, .. } = &event {
                for l in lines {
                    assert!(l.bytes.len() <= FRAGMENT_BYTES, "{} bytes", l.bytes.len());
                    assert!(l.continues, "the line never ends");
                    fragments += 1;
                }
            }
            if let TailEvent::SaveFailed { error, .. } = &event {
                panic!("{error}");
            }
            if let TailEvent::Lines { pod, lines } = &event {
                store.push(pod, lines);
            }
        }
    })
    .await
    .expect("fragments of the endless line");
    handle.cancel();
    assert_eq!(store.lines.len(), 1, "one line, growing");
    assert_eq!(
        store.lines.get(0).unwrap().text.chars().count(),
        DISPLAY_CHARS
    );
    // 16 fragments: 4 MiB went by; the file has them all.
    let saved = std::fs::metadata(dir.path().join("p-0.log")).unwrap().len();
    assert!(saved >= 16 * FRAGMENT_BYTES as u64, "{saved}");
    stop.cancel();
}

/// A log endpoint answering 500 with an HTML body: the tail retries and says so; the App shows
/// it as trouble.
#[tokio::test]
async fn a_broken_log_endpoint_is_trouble() {
    let (client, stop) = garbage_server(Garbage::BrokenLogErrors).await;
    let (mut rx, handle) = LogTail::follow(
        client,
        TailTarget {
            namespace: "default".into(),
            job: "j".into(),
            container: None,
        },
        TailOptions::default(),
    )
    .into_parts();
    let mut model = World::default();
    let generation = model.logs.switch(Source {
        attempt: "j".into(),
        pod: None,
        previous: false,
    });
    tokio::time::timeout(HANG_GUARD, async {
        loop {
            let event = rx.recv().await.unwrap();
            let reconnecting = matches!(&event, TailEvent::Reconnecting { .. });
            let failed = matches!(
                &event,
                TailEvent::PodEnded {
                    why: StreamEnd::Failed(_),
                    ..
                }
            );
            let applied = model.apply(Report::Tail { generation, event });
            if reconnecting {
                assert!(model.trouble().is_some());
                break;
            }
            if failed {
                assert!(!applied.told.is_empty());
                break;
            }
        }
    })
    .await
    .expect("the broken log endpoint is reported");
    handle.cancel();
    stop.cancel();
}
