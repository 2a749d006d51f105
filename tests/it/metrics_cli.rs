//! `gantry metrics` through the real binary, with no cluster anywhere: given files in each
//! format (JSON and CSV exactly), the saved logs of a state directory as the tailer leaves them
//! (`<state>/gantry/logs/<cluster>/<attempt>/<pod>.log` beside hidden cursor files), and every
//! refusal with exit code 2 and nothing on stdout.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// A HOME of its own with the default config: cluster `ml-gke-cluster`, Job `ml-training-job`.
struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn new() -> Home {
        Home {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// `gantry metrics ARGS`, run in the HOME (so relative file names stay as given).
    fn metrics(&self, args: &[&str]) -> Output {
        let home = self.path();
        Command::new(env!("CARGO_BIN_EXE_gantry"))
            .arg("metrics")
            .args(args)
            .current_dir(home)
            .env("HOME", home)
            .env("XDG_CONFIG_HOME", home.join("config"))
            .env("XDG_STATE_HOME", home.join("state"))
            .env("KUBECONFIG", home.join("no-kubeconfig"))
            .env_remove("GOOGLE_CLOUD_PROJECT")
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.metrics(args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "gantry metrics {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// Refused with exit code 2, nothing on stdout; the message on stderr.
    fn refused(&self, args: &[&str]) -> String {
        let out = self.metrics(args);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(
            out.status.code(),
            Some(2),
            "gantry metrics {args:?}: {stderr}"
        );
        assert!(
            out.stdout.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
        stderr
    }

    fn write(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let path = self.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, bytes).unwrap();
        path
    }

    /// Where the tailer saves the pods' logs of one attempt of the default Job.
    fn attempt_dir(&self, attempt: &str) -> PathBuf {
        self.path()
            .join("state/gantry/logs/ml-gke-cluster")
            .join(attempt)
    }

    /// A pod's saved log with the cursor the tailer keeps beside it.
    fn save(&self, attempt: &str, pod: &str, bytes: &[u8]) {
        let dir = self.attempt_dir(attempt);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("{pod}.log")), bytes).unwrap();
        std::fs::write(dir.join(format!(".{pod}.cursor")), "1 2 0 7\n").unwrap();
    }
}

const HF: &[u8] = b"***** Running training *****\n\
{'loss': 2.3012, 'grad_norm': 1.92, 'learning_rate': 4.9e-05, 'epoch': 0.5}\n\
{'loss': 1.8123, 'grad_norm': 1.41, 'learning_rate': 4.8e-05, 'epoch': 1.0}\n\
{'eval_loss': 1.9001, 'epoch': 1.0}\n";

/// Lightning redraws its bar after `\r`; the last update has no terminator at all.
const LIGHTNING: &[u8] =
    b"Epoch 0:  22%|##        | 4/18 [00:17<01:02, 4.47s/it, loss=10.07, v_num=1]\r\
Epoch 0:  28%|##        | 5/18 [00:21<00:58, 4.47s/it, loss=9.50, v_num=1]\r\
Epoch 0:  33%|###       | 6/18 [00:25<00:52, 4.40s/it, loss=8.25, v_num=1]";

const DIVERGED: &[u8] = b"step 1 | loss: 6.12 | lr=3e-4\nstep 2 | loss=nan | lr=3e-4\n";

#[test]
fn json_gives_every_point_of_each_file_in_order_with_nan_as_null() {
    let home = Home::new();
    home.write("hf.log", HF);
    home.write("lightning.log", LIGHTNING);
    home.write("diverged.log", DIVERGED);
    let json = home.ok(&["--json", "hf.log", "lightning.log", "diverged.log"]);
    assert_eq!(
        json,
        concat!(
            r#"{"sources":["#,
            r#"{"source":"hf.log","metrics":{"loss":[[0.5,2.3012],[1,1.8123]],"grad_norm":[[0.5,1.92],[1,1.41]],"learning_rate":[[0.5,0.000049],[1,0.000048]],"eval_loss":[[1,1.9001]]}},"#,
            r#"{"source":"lightning.log","metrics":{"loss":[[4,10.07],[5,9.5],[6,8.25]]}},"#,
            r#"{"source":"diverged.log","metrics":{"loss":[[1,6.12],[2,null]],"lr":[[1,0.0003],[2,0.0003]]}}"#,
            "]}\n"
        )
    );
    let _: serde_json::Value = serde_json::from_str(&json).unwrap();
}

#[test]
fn a_file_without_metrics_is_an_empty_source_not_an_error() {
    let home = Home::new();
    home.write("quiet.log", b"Loading model\nDone\n");
    assert_eq!(
        home.ok(&["--json", "quiet.log"]),
        "{\"sources\":[{\"source\":\"quiet.log\",\"metrics\":{}}]}\n"
    );
    assert_eq!(home.ok(&["quiet.log"]), "no metrics found in quiet.log\n");
    assert_eq!(home.ok(&["--csv", "quiet.log"]), "source,metric,x,value\n");
}

#[test]
fn csv_quotes_fields_as_rfc_4180_says_and_writes_non_finite_values_as_words() {
    let home = Home::new();
    home.write(
        "we\"ird,name.jsonl",
        b"{\"step\": 1, \"a,b\": 0.5, \"say \\\"hi\\\"\": 2}\n{\"step\": 2, \"loss\": NaN, \"acc\": -Infinity}\n",
    );
    assert_eq!(
        home.ok(&["--csv", "we\"ird,name.jsonl"]),
        "source,metric,x,value\n\
         \"we\"\"ird,name.jsonl\",\"a,b\",1,0.5\n\
         \"we\"\"ird,name.jsonl\",\"say \"\"hi\"\"\",1,2\n\
         \"we\"\"ird,name.jsonl\",loss,2,nan\n\
         \"we\"\"ird,name.jsonl\",acc,2,-inf\n"
    );
}

#[test]
fn the_table_shows_a_loss_first_with_its_range() {
    let home = Home::new();
    home.write("hf.log", HF);
    let table = home.ok(&["hf.log"]);
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines[0], "hf.log");
    assert!(
        lines[1].contains("points") && lines[1].contains("min (at x)"),
        "{table}"
    );
    assert!(lines[2].trim_start().starts_with("loss "), "{table}");
    assert!(
        lines[2].contains("1.812 (at 1)") && lines[2].contains("2.301 (at 0.5)"),
        "{table}"
    );
}

#[test]
fn without_files_the_newest_saved_attempt_is_read_one_source_per_pod() {
    let home = Home::new();
    home.save("ml-training-job", "ml-training-job-abcde", DIVERGED);
    home.save("ml-training-job-2", "ml-training-job-2-x7k2p", LIGHTNING);
    home.save(
        "ml-training-job-2",
        "ml-training-job-2-q9z8w",
        b"step 3 | loss: 1.5\n",
    );
    // Another Job's attempts beside them are not this Job's.
    home.save("ml-training-job-other", "x", b"loss=1\n");
    assert_eq!(
        home.ok(&["--csv"]),
        "source,metric,x,value\n\
         ml-training-job-2-q9z8w,loss,3,1.5\n\
         ml-training-job-2-x7k2p,loss,4,10.07\n\
         ml-training-job-2-x7k2p,loss,5,9.5\n\
         ml-training-job-2-x7k2p,loss,6,8.25\n"
    );
    let table = home.ok(&[]);
    assert!(
        table.starts_with("attempt #2 (ml-training-job-2): 2 pods saved in "),
        "{table}"
    );
}

#[test]
fn attempt_n_reads_that_attempts_saved_logs() {
    let home = Home::new();
    home.save("ml-training-job", "ml-training-job-abcde", DIVERGED);
    home.save("ml-training-job-2", "ml-training-job-2-x7k2p", LIGHTNING);
    assert_eq!(
        home.ok(&["--json", "--attempt", "1"]),
        concat!(
            r#"{"sources":[{"source":"ml-training-job-abcde","metrics":{"loss":[[1,6.12],[2,null]],"lr":[[1,0.0003],[2,0.0003]]}}]}"#,
            "\n"
        )
    );
}

#[test]
fn no_saved_logs_is_refused_with_where_they_were_looked_for_and_what_to_do() {
    let home = Home::new();
    let stderr = home.refused(&["--json"]);
    let dir = home.path().join("state/gantry/logs/ml-gke-cluster");
    assert!(
        stderr.contains(&format!(
            "no saved logs of job ml-training-job under {}",
            dir.display()
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains("`gantry logs`") && stderr.contains("give files"),
        "{stderr}"
    );
}

#[test]
fn an_attempt_without_saved_logs_is_refused_listing_those_found() {
    let home = Home::new();
    home.save("ml-training-job", "ml-training-job-abcde", DIVERGED);
    home.save("ml-training-job-2", "ml-training-job-2-x7k2p", LIGHTNING);
    let stderr = home.refused(&["--attempt", "7"]);
    assert!(stderr.contains("no saved logs of attempt #7"), "{stderr}");
    assert!(
        stderr.contains("attempts found: #1 (ml-training-job), #2 (ml-training-job-2)"),
        "{stderr}"
    );
}

#[test]
fn a_file_that_cannot_be_read_is_refused_before_anything_is_printed() {
    let home = Home::new();
    home.write("hf.log", HF);
    let stderr = home.refused(&["--json", "hf.log", "missing.log"]);
    assert!(stderr.contains("cannot read missing.log"), "{stderr}");
    std::fs::create_dir(home.path().join("a-dir")).unwrap();
    let stderr = home.refused(&["a-dir"]);
    assert!(
        stderr.contains("cannot read a-dir: is a directory"),
        "{stderr}"
    );
}

#[test]
fn json_and_csv_together_are_refused() {
    let home = Home::new();
    home.write("hf.log", HF);
    let stderr = home.refused(&["--json", "--csv", "hf.log"]);
    assert!(
        stderr.contains("--json") && stderr.contains("--csv"),
        "{stderr}"
    );
    let stderr = home.refused(&["--attempt", "2", "hf.log"]);
    assert!(stderr.contains("--attempt"), "{stderr}");
}

#[test]
fn a_long_bar_log_gives_every_update_however_the_reads_cut_it() {
    let home = Home::new();
    // Past several read buffers, with `\r` updates cut at every place a buffer can end.
    let total = 20_000;
    let log: String = (1..=total)
        .map(|i| {
            let percent = i * 100 / total;
            format!("Epoch 0: {percent:3}%|#         | {i}/{total} [00:01<00:09, 4.47it/s, loss={i}.5, v_num=1]\r")
        })
        .collect();
    home.write("long.log", log.as_bytes());
    let json: serde_json::Value = serde_json::from_str(&home.ok(&["--json", "long.log"])).unwrap();
    let loss = json["sources"][0]["metrics"]["loss"].as_array().unwrap();
    assert_eq!(loss.len(), total);
    for (i, point) in (1..).zip(loss) {
        assert_eq!(point, &serde_json::json!([i, i as f64 + 0.5]));
    }
}
