//! The simulated training container's logs, as `kubectl logs` gets them through the simulated
//! Kubernetes API, read by Gantry's own metrics parser: every `SIM_LOG_FORMAT` gives the
//! metrics a real run of that framework gives, `SIM_DIVERGE_AT` a NaN loss at its step, and
//! `SIM_REPLAY` the bytes of a file of `--replay-dir`, exactly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;

use futures::AsyncReadExt;
use gantry_test_support as common;
use gantry_test_support::await_condition;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams, LogParams, PostParams};
use serde_json::json;

type Series = BTreeMap<String, Vec<(f64, f64)>>;

/// Runs a one-pod Job with `env` to its end: the container's exit code and its log's bytes.
async fn run_job(client: &kube::Client, name: &str, env: &[(&str, &str)]) -> (i32, Vec<u8>) {
    let env: Vec<_> = env
        .iter()
        .map(|(k, v)| json!({"name": k, "value": v}))
        .collect();
    let job: Job = serde_json::from_value(json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {
            "backoffLimit": 0,
            "template": {"spec": {
                "containers": [{"name": "train", "image": "gcr.io/demo-project/train:1", "env": env}],
                "restartPolicy": "Never"
            }}
        }
    }))
    .unwrap();
    let jobs: Api<Job> = Api::default_namespaced(client.clone());
    jobs.create(&PostParams::default(), &job).await.unwrap();
    await_condition(jobs, name, |job: Option<&Job>| {
        job.and_then(|j| j.status.as_ref())
            .and_then(|s| s.conditions.as_ref())
            .is_some_and(|cs| {
                cs.iter()
                    .any(|c| (c.type_ == "Complete" || c.type_ == "Failed") && c.status == "True")
            })
    })
    .await
    .unwrap();
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    let pod = pods
        .list(&ListParams::default().labels(&format!("job-name={name}")))
        .await
        .unwrap()
        .items
        .remove(0);
    let exit = pod
        .status
        .as_ref()
        .unwrap()
        .container_statuses
        .as_ref()
        .unwrap()[0]
        .state
        .as_ref()
        .unwrap()
        .terminated
        .as_ref()
        .unwrap()
        .exit_code;
    let mut log = Vec::new();
    pods.log_stream(pod.metadata.name.as_ref().unwrap(), &LogParams::default())
        .await
        .unwrap()
        .read_to_end(&mut log)
        .await
        .unwrap();
    (exit, log)
}

/// Every metric the parser reads in `log`, with its x.
fn series(log: &[u8]) -> Series {
    let mut all = Series::new();
    gantry::metrics::read::samples(log, |s| {
        for (name, value) in s.metrics() {
            all.entry(name.to_string()).or_default().push((s.x, value));
        }
    })
    .unwrap();
    all
}

fn xs(series: &Series, name: &str) -> Vec<f64> {
    series[name].iter().map(|(x, _)| *x).collect()
}

fn steps(from: u64, to: u64, by: u64) -> Vec<f64> {
    (from..=to).step_by(by as usize).map(|s| s as f64).collect()
}

const RUN: [(&str, &str); 3] = [
    ("SIM_LOG_LINES", "60"),
    ("SIM_EPOCHS", "3"),
    ("SIM_LINES_PER_SECOND", "0"),
];

fn with(format: &str, more: &[(&'static str, &'static str)]) -> Vec<(&'static str, String)> {
    RUN.iter()
        .chain(more)
        .map(|(k, v)| (*k, v.to_string()))
        .chain([("SIM_LOG_FORMAT", format.to_string())])
        .collect()
}

async fn run_format(
    client: &kube::Client,
    name: &str,
    env: &[(&'static str, String)],
) -> (Vec<u8>, Series) {
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let (exit, log) = run_job(client, name, &env).await;
    assert_eq!(exit, 0, "{}", common::text(&log));
    let series = series(&log);
    (log, series)
}

#[tokio::test]
async fn every_log_format_gives_the_metrics_parser_its_steps_losses_and_evaluations() {
    let cloud = common::cloud_with_cluster().await;
    let client = common::kube_client(&cloud);
    // 60 updates in 3 epochs: 17 steps each, 51 in all, an evaluation after steps 17, 34, 51.
    let evals = steps(17, 51, 17);
    for (format, loss, eval, bars) in [
        ("hf", "loss", "eval_loss", true),
        ("lightning", "train_loss", "val_loss", true),
        ("keras", "loss", "val_loss", true),
        ("jsonl", "loss", "eval_loss", false),
        ("plain", "loss", "eval_loss", false),
    ] {
        let (log, series) = run_format(&client, &format!("run-{format}"), &with(format, &[])).await;
        assert_eq!(
            bars,
            log.contains(&b'\r'),
            "{format}: carriage returns kept"
        );
        let losses = &series[loss];
        assert!(losses.iter().all(|(_, v)| v.is_finite()), "{format}");
        assert!(
            losses[0].1 > 1.5 * losses.last().unwrap().1,
            "{format}: the loss falls: {losses:?}"
        );
        // Hugging Face logs every fifth step.
        let last = if format == "hf" { 50.0 } else { 51.0 };
        assert_eq!(losses.last().unwrap().0, last, "{format}: {losses:?}");
        match format {
            "hf" => {
                assert_eq!(xs(&series, loss), steps(5, 50, 5));
                assert_eq!(xs(&series, eval), evals);
                assert_eq!(series["train_loss"].len(), 1);
                assert_eq!(series["learning_rate"].len(), 10);
                assert_eq!(series["grad_norm"].len(), 10);
            }
            "jsonl" | "plain" => {
                assert_eq!(xs(&series, loss), steps(1, 51, 1), "{format}");
                assert_eq!(xs(&series, eval), evals, "{format}");
                assert_eq!(series["grad_norm"].len(), 51, "{format}");
                assert_eq!(series["lr"].len(), 51, "{format}");
            }
            "keras" => assert_eq!(xs(&series, eval), evals),
            _ => {
                let mut val = xs(&series, eval);
                val.dedup();
                assert_eq!(val[0], 17.0, "{format}: {val:?}");
            }
        }
    }
}

#[tokio::test]
async fn a_diverging_run_shows_a_nan_loss_from_its_step_in_every_format() {
    let cloud = common::cloud_with_cluster().await;
    let client = common::kube_client(&cloud);
    for (format, loss) in [
        ("hf", "loss"),
        ("lightning", "train_loss"),
        ("keras", "loss"),
        ("jsonl", "loss"),
        ("plain", "loss"),
    ] {
        let env = with(format, &[("SIM_DIVERGE_AT", "30")]);
        let (_, series) = run_format(&client, &format!("nan-{format}"), &env).await;
        let first_nan = series[loss]
            .iter()
            .find(|(_, v)| v.is_nan())
            .map(|(x, _)| *x);
        assert_eq!(first_nan, Some(30.0), "{format}: {:?}", series[loss]);
        assert!(
            series[loss].iter().all(|(x, v)| v.is_nan() == (*x >= 30.0)),
            "{format}"
        );
    }
}

#[tokio::test]
async fn a_replayed_file_reaches_kubectl_logs_byte_for_byte_and_nothing_outside_its_directory_does()
{
    let dir = tempfile::tempdir().unwrap();
    let mut bytes =
        b"Epoch 1/2\n\r 1/9 [==>...] - loss: 2.5\x08\x08\r9/9 [=====] - loss: nan\n".to_vec();
    bytes.extend(std::iter::repeat_n(b'z', 40_000));
    bytes.extend_from_slice(b"\n\xff\x1b[31m{'loss': 0.5}\nlast line without newline");
    std::fs::write(dir.path().join("run.log"), &bytes).unwrap();
    let cloud = common::cloud_with(gantry::sim::SimOptions {
        time_scale: 0.01,
        clusters: vec![common::CLUSTER.into()],
        replay_dir: Some(dir.path().to_path_buf()),
        ..Default::default()
    })
    .await;
    let client = common::kube_client(&cloud);
    let (exit, log) = run_job(
        &client,
        "replay",
        &[("SIM_REPLAY", "run.log"), ("SIM_LINES_PER_SECOND", "0")],
    )
    .await;
    assert_eq!(exit, 0);
    assert_eq!(log, bytes);
    for (i, name) in ["../run.log", "/etc/passwd", "a/b"].into_iter().enumerate() {
        let (exit, log) = run_job(&client, &format!("refused-{i}"), &[("SIM_REPLAY", name)]).await;
        assert_eq!(exit, 2, "{name}");
        let text = common::text(&log);
        assert!(
            text.starts_with(&format!("sim: SIM_REPLAY={name}: ")),
            "{text}"
        );
    }
}

#[test]
fn replay_dir_is_refused_off_the_simulator_and_when_it_is_no_directory() {
    let gantry = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_gantry"))
            .args(args)
            .output()
            .unwrap();
        (out.status.code(), common::text(&out.stderr))
    };
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path().to_str().unwrap();
    let (code, err) = gantry(&["--replay-dir", dir, "status"]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("--replay-dir works on the simulated cloud: add --sim"),
        "{err}"
    );
    let missing = format!("{dir}/missing");
    let (code, err) = gantry(&["sim", "--state-dir", dir, "--replay-dir", &missing]);
    assert_eq!(code, Some(2));
    assert!(err.contains("is not a directory"), "{err}");
}
