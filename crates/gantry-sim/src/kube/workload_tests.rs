//! The workload's knobs, its runs to an end (completion, failure, OOM kill) or to a stall, and
//! replays.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;

use super::*;
use crate::kube::lifecycle;
use crate::kube::resources::Kind;
use crate::test_support::{self, PATIENCE, until};

fn env(pairs: &[(&str, &str)]) -> HashMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn reads_knobs() {
    let s = WorkloadSpec::from_env(&env(&[
        ("SIM_EPOCHS", "4"),
        ("SIM_LOG_LINES", "100"),
        ("SIM_LINES_PER_SECOND", "0"),
        ("SIM_FAIL_ATTEMPTS", "2"),
        ("SIM_OOM", "2Gi"),
    ]));
    assert_eq!(s.epochs, 4);
    assert_eq!(s.log_lines, 100);
    assert_eq!(s.lines_per_second, 0.0);
    assert_eq!(s.fail_attempts, 2);
    assert_eq!(s.oom_needs_bytes, Some(2 << 30));
}

#[tokio::test]
async fn writes_all_lines_then_exits() {
    let spec = WorkloadSpec::from_env(&env(&[
        ("SIM_LOG_LINES", "500"),
        ("SIM_LINES_PER_SECOND", "0"),
    ]));
    let out = Arc::new(LogStream::default());
    let exit = run(
        &spec,
        0,
        None,
        None,
        out.clone(),
        Clock::new(0.0),
        CancellationToken::new(),
    )
    .await;
    assert_eq!(
        exit,
        Some(Exit {
            code: 0,
            reason: "Completed"
        })
    );
    assert_eq!(out.len(), 500);
    let text = String::from_utf8_lossy(&out.read(1, 1)[0].text).to_string();
    assert!(text.contains("epoch"), "{text}");
}

#[tokio::test]
async fn fails_first_attempts_and_ooms() {
    let spec = WorkloadSpec::from_env(&env(&[
        ("SIM_LOG_LINES", "10"),
        ("SIM_LINES_PER_SECOND", "0"),
        ("SIM_FAIL_ATTEMPTS", "1"),
    ]));
    let out = Arc::new(LogStream::default());
    let exit = run(
        &spec,
        0,
        None,
        None,
        out.clone(),
        Clock::new(0.0),
        CancellationToken::new(),
    )
    .await;
    assert_eq!(exit.map(|e| e.code), Some(1));
    let exit = run(
        &spec,
        1,
        None,
        None,
        out,
        Clock::new(0.0),
        CancellationToken::new(),
    )
    .await;
    assert_eq!(exit.map(|e| e.code), Some(0));
    let oom = WorkloadSpec::from_env(&env(&[
        ("SIM_LOG_LINES", "10"),
        ("SIM_LINES_PER_SECOND", "0"),
        ("SIM_OOM", "4Gi"),
    ]));
    let out = Arc::new(LogStream::default());
    let exit = run(
        &oom,
        0,
        Some(1 << 30),
        None,
        out.clone(),
        Clock::new(0.0),
        CancellationToken::new(),
    )
    .await;
    assert_eq!(
        exit,
        Some(Exit {
            code: 137,
            reason: "OOMKilled"
        })
    );
    assert_eq!(out.len(), 5);
    let out = Arc::new(LogStream::default());
    let exit = run(
        &oom,
        0,
        Some(8 << 30),
        None,
        out,
        Clock::new(0.0),
        CancellationToken::new(),
    )
    .await;
    assert_eq!(exit.map(|e| e.code), Some(0));
}

/// Runs the workload at full speed and gives its exit and its output as `kubectl logs`.
async fn run_to_end(spec: &WorkloadSpec, replay_dir: Option<&Path>) -> (Option<Exit>, Vec<u8>) {
    let out = Arc::new(LogStream::default());
    let exit = run(
        spec,
        0,
        None,
        replay_dir,
        out.clone(),
        Clock::new(0.0),
        CancellationToken::new(),
    )
    .await;
    let mut bytes = Vec::new();
    for line in out.read(0, usize::MAX) {
        bytes.extend_from_slice(&line.text);
        if !line.partial {
            bytes.push(b'\n');
        }
    }
    (exit, bytes)
}

#[test]
fn reads_the_log_knobs_and_says_what_is_wrong_with_them() {
    let s = WorkloadSpec::from_env(&env(&[
        ("SIM_LOG_FORMAT", "hf"),
        ("SIM_DIVERGE_AT", "120"),
        ("SIM_REPLAY", "run.log"),
    ]));
    assert_eq!(s.log_format, LogFormat::Hf);
    assert_eq!(s.diverge_at, Some(120));
    assert_eq!(s.replay.as_deref(), Some("run.log"));
    assert_eq!(s.problem, None);
    let unset = WorkloadSpec::from_env(&env(&[]));
    assert_eq!(
        (unset.log_format, unset.diverge_at, unset.replay),
        (LogFormat::Classic, None, None)
    );
    let bad = WorkloadSpec::from_env(&env(&[("SIM_LOG_FORMAT", "xml")]));
    assert_eq!(
        bad.problem.as_deref(),
        Some(
            "sim: SIM_LOG_FORMAT=xml: not a log format (give one of plain, hf, lightning, keras, jsonl)"
        )
    );
    let bad = WorkloadSpec::from_env(&env(&[("SIM_DIVERGE_AT", "soon")]));
    assert!(
        bad.problem
            .unwrap()
            .starts_with("sim: SIM_DIVERGE_AT=soon: not a step number")
    );
}

#[tokio::test]
async fn a_bad_knob_fails_the_container_with_exit_code_2_saying_why() {
    let spec = WorkloadSpec::from_env(&env(&[("SIM_LOG_FORMAT", "xml")]));
    let (exit, bytes) = run_to_end(&spec, None).await;
    assert_eq!(exit.map(|e| e.code), Some(2));
    assert!(String::from_utf8_lossy(&bytes).starts_with("sim: SIM_LOG_FORMAT=xml: "));
}

#[tokio::test]
async fn a_replayed_file_is_written_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = b"Epoch 1/2\n\r 1/9 [==>...] - loss: nan\x08\x08\r9/9 [=====]\n".to_vec();
    bytes.extend(std::iter::repeat_n(b'y', 20_000));
    bytes.extend_from_slice(b"\n{\"step\": 1, \"loss\": NaN}\nlast, without newline");
    std::fs::write(dir.path().join("run.log"), &bytes).unwrap();
    let spec = WorkloadSpec::from_env(&env(&[
        ("SIM_REPLAY", "run.log"),
        ("SIM_LINES_PER_SECOND", "0"),
    ]));
    let (exit, out) = run_to_end(&spec, Some(dir.path())).await;
    assert_eq!(exit.map(|e| e.code), Some(0));
    assert_eq!(out, bytes);
}

#[tokio::test]
async fn a_replay_that_cannot_be_read_fails_the_container_not_the_simulator() {
    let dir = tempfile::tempdir().unwrap();
    for (name, dir) in [
        ("../x", Some(dir.path())),
        ("/etc/passwd", Some(dir.path())),
        ("a/b", Some(dir.path())),
        ("missing.log", Some(dir.path())),
        ("run.log", None),
    ] {
        let spec = WorkloadSpec::from_env(&env(&[("SIM_REPLAY", name)]));
        let (exit, out) = run_to_end(&spec, dir).await;
        assert_eq!(exit.map(|e| e.code), Some(2), "{name}");
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.starts_with(&format!("sim: SIM_REPLAY={name}: ")),
            "{text}"
        );
        assert_eq!(text.lines().count(), 1);
    }
}

#[tokio::test]
async fn a_generated_log_ends_with_its_newline_and_counts_its_updates() {
    let spec = WorkloadSpec::from_env(&env(&[
        ("SIM_LOG_FORMAT", "jsonl"),
        ("SIM_LOG_LINES", "300"),
        ("SIM_LINES_PER_SECOND", "0"),
    ]));
    let (exit, out) = run_to_end(&spec, None).await;
    assert_eq!(exit.map(|e| e.code), Some(0));
    assert_eq!(out.iter().filter(|b| **b == b'\n').count(), 300);
    assert!(out.ends_with(b"training finished\n"));
}

/// Waits, at most `PATIENCE`, until the stream holds `lines` lines.
async fn until_lines(out: &LogStream, lines: usize) {
    let mut progress = out.watch();
    tokio::time::timeout(PATIENCE, progress.wait_for(|(n, _)| *n >= lines))
        .await
        .unwrap_or_else(|_| panic!("{} lines, not {lines}, within {PATIENCE:?}", out.len()))
        .unwrap();
}

/// The knobs of a log of `log_lines` updates, 10 a simulated second, that stalls after
/// `stall_after` of them.
fn stalling(log_lines: &str, stall_after: &str) -> WorkloadSpec {
    WorkloadSpec::from_env(&env(&[
        ("SIM_LOG_LINES", log_lines),
        ("SIM_LINES_PER_SECOND", "10"),
        ("SIM_STALL_AFTER", stall_after),
    ]))
}

#[tokio::test]
async fn a_stalled_workload_writes_its_first_lines_then_nothing_and_runs_until_stopped() {
    let clock = Clock::new(0.001);
    // Stalled in the middle of the log, and past its end (then it never exits).
    for (log_lines, stall_after) in [("50", "5"), ("5", "10")] {
        let spec = stalling(log_lines, stall_after);
        assert_eq!(spec.problem, None);
        let out = Arc::new(LogStream::default());
        let cancel = CancellationToken::new();
        let task = tokio::spawn({
            let (out, cancel) = (out.clone(), cancel.clone());
            async move { run(&spec, 0, None, None, out, clock, cancel).await }
        });
        until_lines(&out, 5).await;
        // Ten times as long as the longer log takes whole.
        clock.sleep_secs(50.0).await;
        assert_eq!(
            out.len(),
            5,
            "{log_lines} lines, stalled after {stall_after}"
        );
        assert!(!task.is_finished(), "it exited by itself");
        cancel.cancel();
        let exit = tokio::time::timeout(PATIENCE, task).await.unwrap().unwrap();
        assert_eq!(exit, None, "stopped, not exited");
    }
}

#[tokio::test]
async fn a_stall_after_that_is_not_a_number_fails_the_container_with_exit_code_2_saying_why() {
    let spec = stalling("50", "soon");
    let (exit, bytes) = run_to_end(&spec, None).await;
    assert_eq!(exit.map(|e| e.code), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&bytes),
        "sim: SIM_STALL_AFTER=soon: not a number of log lines (give a whole number such as 40)\n"
    );
    assert_eq!(stalling("50", " 7 ").stall_after, Some(7));
    assert_eq!(stalling("50", "").stall_after, None);
}

#[tokio::test]
async fn a_stalled_pod_stays_running_with_its_first_lines_and_no_more() {
    let shared = test_support::shared(0.001, Vec::new());
    let clock = shared.clock;
    let pools = json!([{"name": "default-pool", "initialNodeCount": 1,
        "config": {"machineType": "n1-standard-4"}}]);
    let (_api, state) = test_support::cluster(shared, pools).await;
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "train"},
        "spec": {"restartPolicy": "Never", "containers": [{"name": "main",
            "image": "gcr.io/p/train:v1",
            "env": [{"name": "SIM_LOG_LINES", "value": "50"},
                    {"name": "SIM_LINES_PER_SECOND", "value": "10"},
                    {"name": "SIM_STALL_AFTER", "value": "5"}]}]}});
    lifecycle::create(&state, Kind::Pod, Some("default"), pod).unwrap();
    let stream = until(&state, "the pod Running", |s| {
        let pod = s.store.get(Kind::Pod, "default", "train")?;
        (pod["status"]["phase"] == "Running").then_some(())?;
        s.logs.stream("default", "train", "main", false)
    })
    .await;
    until_lines(&stream, 5).await;
    // Ten times as long as the whole log (5 simulated seconds) takes.
    clock.sleep_secs(50.0).await;
    let pod = state.store.get(Kind::Pod, "default", "train").unwrap();
    assert_eq!(pod["status"]["phase"], "Running", "{pod}");
    let container = &pod["status"]["containerStatuses"][0];
    assert!(container["state"].get("running").is_some(), "{container}");
    assert_eq!(stream.len(), 5);
    assert!(!stream.is_finished());
}
