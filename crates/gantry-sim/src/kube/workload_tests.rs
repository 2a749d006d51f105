//! The workload's knobs, its runs to an end (completion, failure, OOM kill), and replays.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

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
