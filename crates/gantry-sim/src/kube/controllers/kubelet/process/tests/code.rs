//! Code unpacked by an init container (`tar -x` from a ConfigMap's archive into an `emptyDir`):
//! the simulated kubelet carries out the extraction; without `--run-code` a Python script
//! missing from it ends the container as Python would, and with it the script runs for real on
//! this machine's python3 in a fresh directory holding the code.

use serde_json::json;

use super::*;
use crate::kube::cluster::ClusterRuntime;
use crate::kube::process::Interpreter;

/// An archive of these files (path, contents), as tar writes one.
fn archive(files: &[(&str, &str)]) -> String {
    use base64::Engine;
    let mut builder = tar::Builder::new(Vec::new());
    for (path, text) in files {
        let mut header = tar::Header::new_gnu();
        header.set_size(text.len() as u64);
        header.set_mode(0o644);
        builder
            .append_data(&mut header, path, text.as_bytes())
            .unwrap();
    }
    base64::engine::general_purpose::STANDARD.encode(builder.into_inner().unwrap())
}

fn code(state: &ClusterState, name: &str, files: &[(&str, &str)]) {
    create(
        state,
        Kind::ConfigMap,
        json!({"metadata": {"name": name}, "binaryData": {"code.tar": archive(files)}}),
    );
}

/// A pod that unpacks ConfigMap `configmap`'s archive into /workspace and runs `command` there.
fn code_pod(name: &str, configmap: &str, command: &[&str]) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
        "spec": {"restartPolicy": "Never", "terminationGracePeriodSeconds": 2,
        "volumes": [
            {"name": "archive", "configMap": {"name": configmap}},
            {"name": "code", "emptyDir": {}},
        ],
        "initContainers": [{"name": "unpack", "image": "python:3.12-slim",
            "command": ["tar", "-x", "-f", "/var/run/code/code.tar", "-C", "/workspace"],
            "volumeMounts": [{"name": "archive", "mountPath": "/var/run/code"},
                {"name": "code", "mountPath": "/workspace"}]}],
        "containers": [{"name": "main", "image": "python:3.12-slim", "command": command,
            "workingDir": "/workspace",
            "env": [{"name": "MASTER_ADDR", "value": "train-0.workers"},
                {"name": "MASTER_PORT", "value": "29500"}, {"name": "SIM_LOG_LINES", "value": "3"}],
            "volumeMounts": [{"name": "code", "mountPath": "/workspace"}]}]}})
}

async fn simulated_cluster() -> ClusterRuntime {
    let spec = ClusterSpec::seed("p", "us-central1-a", "c");
    ClusterRuntime::start(spec, test_support::shared(0.01, Vec::new()), 0)
        .await
        .unwrap()
}

async fn run_code_cluster() -> Option<ClusterRuntime> {
    // Where python3 is missing, say so (or fail under GANTRY_REQUIRE_PYTHON3=1).
    test_support::python3()?;
    let mut shared = test_support::shared(0.01, Vec::new());
    shared.run_images = Arc::new(RunImages::default().with_code(Interpreter::find().unwrap()));
    let spec = ClusterSpec::seed("p", "us-central1-a", "c");
    Some(ClusterRuntime::start(spec, shared, 0).await.unwrap())
}

fn init_state(p: &Value) -> &Value {
    &p["status"]["initContainerStatuses"][0]["state"]
}

fn log_of(state: &ClusterState, pod: &str, container: &str) -> String {
    state
        .logs
        .stream("default", pod, container, false)
        .map(|s| log_text(&s))
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_run_code_a_script_missing_from_the_code_ends_the_container_as_python_does() {
    let runtime = simulated_cluster().await;
    let state = runtime.state();
    code(
        state,
        "code",
        &[("train.py", "print(1)\n"), ("pkg/m.py", "")],
    );
    create(
        state,
        Kind::Pod,
        code_pod(
            "runs",
            "code",
            &["python3", "-u", "train.py", "--lr", "3e-4"],
        ),
    );
    create(
        state,
        Kind::Pod,
        code_pod("missing", "code", &["python3", "trian.py"]),
    );

    let ran = pod_when(state, "runs", "its end", |p| phase(p) == "Succeeded").await;
    assert_eq!(init_state(&ran)["terminated"]["reason"], "Completed");
    let initialized = ran["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "Initialized")
        .unwrap();
    assert_eq!(initialized["status"], "True");

    let failed = pod_when(state, "missing", "its end", |p| phase(p) == "Failed").await;
    let terminated = &container(&failed)["state"]["terminated"];
    assert_eq!(terminated["exitCode"], 2);
    assert_eq!(
        log_of(state, "missing", "main"),
        "python3: can't open file '/workspace/trian.py': [Errno 2] No such file or directory\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_archive_that_is_not_one_fails_the_init_container_and_the_pod() {
    let runtime = simulated_cluster().await;
    let state = runtime.state();
    create(
        state,
        Kind::ConfigMap,
        json!({"metadata": {"name": "junk"}, "data": {"code.tar": "not an archive"}}),
    );
    create(
        state,
        Kind::Pod,
        code_pod("junk", "junk", &["python3", "train.py"]),
    );
    let failed = pod_when(state, "junk", "its end", |p| phase(p) == "Failed").await;
    assert_eq!(init_state(&failed)["terminated"]["exitCode"], 2);
    assert!(container(&failed)["state"].get("terminated").is_none());
    assert!(
        log_of(state, "junk", "unpack").contains("This does not look like a tar archive"),
        "{}",
        log_of(state, "junk", "unpack")
    );
}

const TRAIN: &str = r#"
import os, sys
print("CWD_FILES=" + ",".join(sorted(os.listdir("."))))
print("HELPER=" + open("pkg/helper.txt").read())
open("checkpoint.pt", "w").write("saved")
print("WROTE=" + open("checkpoint.pt").read())
print("MASTER=%s:%s" % (os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"]))
print("ARGS=" + " ".join(sys.argv[1:]))
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_run_code_the_script_runs_on_this_machines_python_in_a_writable_directory_of_the_code()
{
    let Some(runtime) = run_code_cluster().await else {
        return;
    };
    let state = runtime.state();
    code(
        state,
        "code",
        &[("train.py", TRAIN), ("pkg/helper.txt", "beside it")],
    );
    let mut pod = code_pod("rank-0", "code", &["python", "train.py", "--epochs", "1"]);
    pod["metadata"]["annotations"] = json!({"batch.kubernetes.io/job-completion-index": "0"});
    create(state, Kind::Pod, pod);
    let done = pod_when(state, "rank-0", "its end", |p| {
        matches!(phase(p), "Succeeded" | "Failed")
    })
    .await;
    let log = logged(state, "rank-0", "ARGS=").await;
    assert_eq!(phase(&done), "Succeeded", "{log}");
    assert_eq!(said(&log, "CWD_FILES"), "pkg,train.py");
    assert_eq!(said(&log, "HELPER"), "beside it");
    assert_eq!(said(&log, "WROTE"), "saved");
    assert_eq!(said(&log, "ARGS"), "--epochs 1");
    let master = said(&log, "MASTER");
    let (addr, port) = master.split_once(':').unwrap();
    assert_eq!(addr, "127.0.0.1", "{log}");
    assert!(port.parse::<u16>().unwrap() != 29500, "{log}");
    let said_which = test_support::events(state, "rank-0", "LocalInterpreter");
    assert!(
        said_which[0]["message"]
            .as_str()
            .unwrap()
            .contains("in place of image python:3.12-slim"),
        "{said_which:?}"
    );
}
