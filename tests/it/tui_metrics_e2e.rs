//! Training metrics through the whole product: the simulator's container writes a framework's
//! log, the TUI (in tmux, 80×24, `--sim --time-scale 0.01`) charts it and shows the progress,
//! warns when the loss diverges; and `gantry metrics` reads back from the saved logs exactly
//! the points of a replayed file. Skipped, saying so, where tmux is missing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gantry_test_support as common;

use std::path::Path;
use std::process::Command;

use common::tmux::Tmux;

fn job(env: &str) -> String {
    format!("[job]\nbackoff-limit = 0\n[job.env]\n{env}")
}

/// Creates the cluster and launches the Job from the first screen.
fn create_and_launch(t: &Tmux) {
    t.create_cluster();
    t.keys(&["l"]);
}

fn has_braille(screen: &str) -> bool {
    screen
        .chars()
        .any(|c| ('\u{2801}'..='\u{28ff}').contains(&c))
}

#[test]
fn a_hugging_face_run_is_charted_with_its_progress() {
    let config = job(
        "SIM_LOG_FORMAT = \"hf\"\nSIM_LOG_LINES = \"400\"\nSIM_EPOCHS = \"2\"\nSIM_LINES_PER_SECOND = \"2\"\n",
    );
    let Some(t) = Tmux::start("metrics-hf", "", &config) else {
        return;
    };
    create_and_launch(&t);
    t.keys(&["m"]);
    let screen = t.wait_for(&["Metrics loss", "latest", "step "]);
    assert!(has_braille(&screen), "no curve drawn:\n{screen}");
    // The Job pane's progress line under the attempt: a step counter and the share done.
    assert!(
        screen.lines().any(|l| l.contains('%') && l.contains("/")),
        "{screen}"
    );
    t.keys(&["]"]);
    t.wait_for(&["Metrics grad_norm"]);
    t.keys(&["m"]);
    t.wait_for(&["Logs"]);
    t.keys(&["q"]);
    t.wait_for(&["GANTRY-EXIT=0"]);
}

#[test]
fn a_diverging_loss_raises_a_warning_naming_metric_step_and_pod() {
    let config = job(
        "SIM_LOG_FORMAT = \"plain\"\nSIM_LOG_LINES = \"200\"\nSIM_DIVERGE_AT = \"40\"\nSIM_LINES_PER_SECOND = \"1\"\n",
    );
    let Some(t) = Tmux::start("metrics-nan", "", &config) else {
        return;
    };
    create_and_launch(&t);
    let screen = t.wait_for(&["loss became NaN at step 40 on ml-training-job-"]);
    assert!(screen.contains("⚠") || screen.contains("NaN"), "{screen}");
    t.keys(&["q"]);
    t.wait_for(&["GANTRY-EXIT=0"]);
}

#[test]
fn a_megatron_run_is_charted_by_its_lm_loss_against_the_iteration() {
    let replays = tempfile::tempdir().unwrap();
    let output = crate::metrics_frameworks::sample_output("megatron.log");
    std::fs::write(replays.path().join("megatron.log"), output).unwrap();
    let config = job("SIM_REPLAY = \"megatron.log\"\nSIM_LINES_PER_SECOND = \"20\"\n");
    let args = format!("--replay-dir {}", replays.path().display());
    let Some(t) = Tmux::start("metrics-megatron", &args, &config) else {
        return;
    };
    create_and_launch(&t);
    t.wait_for(&["Succeeded"]);
    t.keys(&["m"]);
    // The default metric is the loss, named whole; the x axis runs over the iterations.
    let screen = t.wait_for(&["Metrics lm loss", "step 1 … 600"]);
    assert!(has_braille(&screen), "no curve drawn:\n{screen}");
    t.keys(&["]"]);
    t.wait_for(&["Metrics consumed samples"]);
    t.keys(&["q"]);
    t.wait_for(&["GANTRY-EXIT=0"]);
}

/// A log as a real run leaves it: a Hugging Face bar redrawn with `\r`, cleared by tqdm's
/// `write` before each dict, an evaluation dict, a plain line, and a last bar update without a newline.
const REPLAYED: &str = concat!(
    "***** Running training *****\n",
    "  Num examples = 1,000\n",
    "\r  0%|          | 0/4 [00:00<?, ?it/s]",
    "\r 25%|██▌       | 1/4 [00:01<00:03,  1.00it/s]",
    "\r 50%|█████     | 2/4 [00:02<00:02,  1.00it/s]",
    "\r                                              \r{'loss': 2.3012, 'grad_norm': 1.9217, 'learning_rate': 4.9e-05, 'epoch': 0.5}\n",
    "\r 75%|███████▌  | 3/4 [00:03<00:01,  1.00it/s]",
    "\r                                              \r{'eval_loss': 1.8123, 'eval_accuracy': 0.4412, 'epoch': 1.0}\n",
    "step 4/4 loss=1.2345 lr=3e-4\n",
    "\r100%|██████████| 4/4 [00:04<00:00,  1.00it/s]",
);

fn metrics_json(home: &Path, config: &Path, args: &[&str]) -> serde_json::Value {
    let out = Command::new(common::gantry_bin())
        .env("HOME", home)
        .env("XDG_STATE_HOME", home.join("state"))
        .arg("--config")
        .arg(config)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn gantry_metrics_reads_from_the_saved_logs_exactly_the_points_of_a_replayed_file() {
    let replays = tempfile::tempdir().unwrap();
    let file = replays.path().join("hf-run.log");
    std::fs::write(&file, REPLAYED).unwrap();
    let config = job("SIM_REPLAY = \"hf-run.log\"\nSIM_LINES_PER_SECOND = \"20\"\n");
    let args = format!("--replay-dir {}", replays.path().display());
    let Some(t) = Tmux::start("metrics-replay", &args, &config) else {
        return;
    };
    create_and_launch(&t);
    t.wait_for(&["Succeeded"]);
    t.keys(&["q"]);
    t.wait_for(&["GANTRY-EXIT=0"]);

    let home = t
        .state_dir()
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf();
    let config_path = home.join("config.toml");
    let from_file = metrics_json(
        &home,
        &config_path,
        &["metrics", "--json", file.to_str().unwrap()],
    );
    let saved = metrics_json(&home, &config_path, &["--sim", "metrics", "--json"]);
    let sources = saved["sources"].as_array().unwrap();
    assert_eq!(sources.len(), 1, "{saved}");
    assert!(
        sources[0]["source"]
            .as_str()
            .unwrap()
            .starts_with("ml-training-job-"),
        "{saved}"
    );
    assert_eq!(sources[0]["metrics"], from_file["sources"][0]["metrics"]);
    // And the points are the file's: every metric it prints, at the steps it says.
    let metrics = &from_file["sources"][0]["metrics"];
    assert_eq!(
        metrics["loss"],
        serde_json::json!([[2, 2.3012], [4, 1.2345]])
    );
    assert_eq!(metrics["eval_loss"], serde_json::json!([[3, 1.8123]]));
    assert!(metrics.get("examples").is_none(), "{metrics}");
}
