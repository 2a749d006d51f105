//! `gantry metrics --json` on what the frameworks large models are trained with print, as their
//! own code prints it: each file in `tests/metrics_samples/` names the repository, file and
//! commit its format follows (its `# ` header), then holds the program's output. The output
//! alone is given to the real binary; the series it reads are checked by name, x axis, first
//! and last value, and that nothing else turns into a series that would win the chart.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;

/// The program's output in a sample file: what follows its `# ` header.
pub fn sample_output(sample: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/metrics_samples")
        .join(sample);
    let text = std::fs::read(&path).unwrap();
    let marker = b"# --- sample output below";
    let at = text
        .windows(marker.len())
        .position(|w| w == marker)
        .unwrap_or_else(|| panic!("{sample}: no output marker"));
    let body = &text[at..];
    let body = body[body.iter().position(|&b| b == b'\n').unwrap() + 1..].to_vec();
    assert!(
        !body.starts_with(b"# "),
        "{sample}: the output starts after the header"
    );
    body
}

/// What `gantry metrics` reads of a sample's output (after its header): the series (by
/// `--json`) and the metric it lists first, as the chart shows it first (the table).
fn read(sample: &str) -> Read {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join(sample);
    std::fs::write(&file, sample_output(sample)).unwrap();
    let metrics = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_gantry"))
            .arg("metrics")
            .args(args)
            .arg(&file)
            .env("HOME", home.path())
            .env("XDG_CONFIG_HOME", home.path().join("config"))
            .env("XDG_STATE_HOME", home.path().join("state"))
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{sample}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    };
    let json: Value = serde_json::from_slice(&metrics(&["--json"])).unwrap();
    let table = String::from_utf8(metrics(&[])).unwrap();
    // The file's name, the heading, then a row per metric: its name ends two blanks before
    // the count of points.
    let row = table.lines().nth(2).unwrap_or_default();
    let first = row
        .trim_start()
        .split("  ")
        .next()
        .unwrap_or_default()
        .to_string();
    Read {
        metrics: json["sources"][0]["metrics"].as_object().unwrap().clone(),
        first,
    }
}

struct Read {
    metrics: serde_json::Map<String, Value>,
    /// The metric listed (and charted) first.
    first: String,
}

impl std::ops::Deref for Read {
    type Target = serde_json::Map<String, Value>;
    fn deref(&self) -> &Self::Target {
        &self.metrics
    }
}

/// A series: how many points, and the first and last as `[x, value]`.
fn series(metrics: &serde_json::Map<String, Value>, name: &str) -> (usize, [f64; 2], [f64; 2]) {
    let points = metrics
        .get(name)
        .unwrap_or_else(|| panic!("no series {name:?} in {:?}", metrics.keys()))
        .as_array()
        .unwrap();
    let point = |p: &Value| [p[0].as_f64().unwrap(), p[1].as_f64().unwrap()];
    (
        points.len(),
        point(&points[0]),
        point(points.last().unwrap()),
    )
}

#[test]
fn nanogpt_is_read_by_iteration_with_its_units_and_its_evaluations_apart() {
    let m = read("nanogpt.log");
    assert_eq!(series(&m, "loss"), (8, [0.0, 4.2649], [70.0, 2.418]));
    assert_eq!(series(&m, "time (ms)").2, [70.0, 41.5]);
    assert_eq!(series(&m, "mfu (%)").1, [0.0, -100.0]);
    assert_eq!(series(&m, "train loss"), (2, [0.0, 4.2874], [50.0, 2.477]));
    assert_eq!(series(&m, "val loss"), (2, [0.0, 4.2823], [50.0, 2.4961]));
    assert!(
        !m.contains_key("eval_interval"),
        "a setting: {:?}",
        m.keys()
    );
    assert_eq!(m.first, "loss");
}

#[test]
fn megatron_keeps_every_name_whole_against_the_iteration() {
    let m = read("megatron.log");
    for name in [
        "consumed samples",
        "elapsed time per iteration (ms)",
        "throughput per GPU (TFLOP/s/GPU)",
        "learning rate",
        "global batch size",
        "lm loss",
        "loss scale",
        "grad norm",
        "number of skipped iterations",
        "number of nan iterations",
    ] {
        let (points, first, last) = series(&m, name);
        assert_eq!((points, first[0], last[0]), (7, 1.0, 600.0), "{name}");
    }
    assert_eq!(series(&m, "lm loss").1, [1.0, 10.95478]);
    assert_eq!(series(&m, "lm loss").2, [600.0, 6.018833]);
    assert_eq!(series(&m, "learning rate").2, [600.0, 9e-5]);
    // The validation line, at its iteration.
    assert_eq!(
        series(&m, "lm loss value"),
        (1, [500.0, 6.187342], [500.0, 6.187342])
    );
    assert_eq!(m.first, "lm loss");
}

#[test]
fn fairseq_is_read_by_its_updates_not_its_epoch() {
    let m = read("fairseq.log");
    let (_, first, last) = series(&m, "loss");
    assert_eq!((first, last), ([100.0, 12.846], [789.0, 10.37]));
    assert!(!m.contains_key("num_updates"), "{:?}", m.keys());
    assert_eq!(m.first, "loss");
    // The same run logged as JSON: every value a string.
    let m = read("fairseq_json.log");
    assert_eq!(series(&m, "loss").1, [100.0, 12.846]);
    assert_eq!(series(&m, "loss").2[0], 600.0);
}

#[test]
fn deepspeed_reads_its_lists_of_one_and_never_takes_the_loss_scale_for_the_loss() {
    let m = read("deepspeed.log");
    assert_eq!(series(&m, "lr").2, [60.0, 5.878093311876458e-05]);
    assert_eq!(series(&m, "MemAllocated (GB)").2, [60.0, 0.52]);
    assert!(
        !m.keys().any(|k| k.to_ascii_lowercase().contains("rank")),
        "{:?}",
        m.keys()
    );
    assert_ne!(m.first, "Attempted loss scale");
    let m = read("deepspeed_pipe.log");
    assert_eq!(series(&m, "loss"), (6, [10.0, 10.828], [60.0, 4.9732]));
    assert_eq!(series(&m, "iter time (s)").1, [10.0, 0.712]);
    assert_eq!(m.first, "loss");
}

#[test]
fn torchtitan_composer_keras_and_rich_bars_are_read_by_their_steps() {
    let m = read("torchtitan.log");
    assert_eq!(series(&m, "loss"), (8, [1.0, 12.25179], [60.0, 6.41121]));
    assert_eq!(series(&m, "tps").2, [60.0, 6434.0]);
    assert_eq!(series(&m, "memory (GiB)").1, [1.0, 41.12]);
    assert_eq!(m.first, "loss");

    let m = read("composer.log");
    assert_eq!(
        series(&m, "loss/train/total"),
        (5, [1.0, 2.3078], [400.0, 0.1907])
    );
    assert_eq!(m.first, "loss/train/total");

    for sample in ["keras3.log", "keras3_verbose2.log"] {
        let m = read(sample);
        assert_eq!(m.len(), 4, "{sample}: {:?}", m.keys());
        assert_eq!(m.first, "loss");
    }
    assert_eq!(series(&read("keras3.log"), "val_loss").2, [180.0, 0.0375]);

    // Rich's bar: one line an epoch (`Epoch 0/5  ━━━━ 32/32 …`): the batches, rising over
    // the epochs, are the x axis, not the epoch.
    let m = read("rich_lightning_wide.log");
    assert_eq!(series(&m, "train_loss"), (6, [32.0, 1.715], [192.0, 0.355]));
    assert_eq!(m.first, "train_loss");
}

#[test]
fn every_name_on_a_framework_line_is_a_series_of_its_own() {
    // Megatron's line has eleven fields, one of them the iteration: ten series, none merged.
    let m = read("megatron.log");
    let on_the_line = m.keys().filter(|k| series(&m, k).0 == 7).count();
    assert_eq!(on_the_line, 10, "{:?}", m.keys());
    // fairseq's inner line: every key but num_updates (the x axis).
    let m = read("fairseq.log");
    for name in [
        "loss",
        "nll_loss",
        "ppl",
        "wps",
        "ups",
        "wpb",
        "bsz",
        "lr",
        "gnorm",
        "loss_scale",
        "train_wall",
        "gb_free",
        "wall",
    ] {
        series(&m, name);
    }
}
