//! A recovery runs the code of the attempt it follows: a gang launched as code, its rank
//! preempted, restarted by the engine that holds the Lease (`gantry watch`) after `train.py`
//! changed on disk — the new attempt has the old digest and a ConfigMap of its own holding the
//! old bytes.

use base64::Engine;
use serde_json::Value;

use crate::cli_flow::{Sim, newest};

const TRAIN: &str = "print('the code that was launched')\n";

#[test]
fn a_recovered_gang_runs_the_code_of_the_attempt_it_follows_not_the_directorys() {
    if !gantry_test_support::kubectl_available() {
        return;
    }
    let code = tempfile::tempdir().unwrap();
    std::fs::write(code.path().join("train.py"), TRAIN).unwrap();
    let config = format!(
        "[cluster]\nspot = true\n[job]\ncode = \"{}\"\ncommand = [\"python3\", \"train.py\"]\n\
completions = 2\nparallelism = 2\nindexed = true\n[job.env]\nSIM_LOG_LINES = \"300\"\n\
SIM_LINES_PER_SECOND = \"1\"\n",
        code.path().display()
    );
    let sim = Sim::start_with(&["--time-scale", "0.01", "--fault", "preempt=1:1"], &config);
    sim.ok(&["up", "--wait"]);
    let _engine = sim.watch();
    sim.until_status("the engine holds the Lease", |s| {
        s["job"]["recoverer"].is_string()
    });
    let launched = sim.ok(&["launch"]);
    assert!(launched.starts_with("code: 1 file, "), "{launched}");
    // What the directory holds now is not what the run runs.
    std::fs::write(code.path().join("train.py"), "print('edited after')\n").unwrap();

    let done = sim.until_status("the recovery", |s| {
        s["job"]["recoveries"] == 1 && newest(s)["name"] == "ml-training-job-2"
    });
    let attempts = done["job"]["attempts"].as_array().unwrap();
    let digest = |a: &Value| a["code"]["digest"].as_str().unwrap().to_string();
    assert_eq!(
        digest(&attempts[0]),
        digest(&attempts[1]),
        "{:#}",
        done["job"]
    );

    // Each attempt's own ConfigMap, owned by its own Job, holds the bytes launched.
    for attempt in ["ml-training-job", "ml-training-job-2"] {
        let configmap = format!("{attempt}-code");
        let out = sim.kubectl(&["get", "configmap", &configmap, "-o", "json"]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let cm: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(cm["metadata"]["ownerReferences"][0]["name"], attempt);
        let archive = base64::engine::general_purpose::STANDARD
            .decode(cm["binaryData"]["code.tar"].as_str().unwrap())
            .unwrap();
        let files = gantry::code::archive::read(&archive).unwrap();
        assert_eq!(files.len(), 1);
        assert_eq!(
            files[0].body,
            gantry::code::files::Body::Bytes(TRAIN.as_bytes().to_vec()),
            "{attempt}"
        );
    }
}
