//! How a process pod ends: its exit code as the container's and the pod's phase (and a Job's
//! completion) from it, SIGTERM when it is deleted or its node shuts down, and SIGKILL when it
//! outlives its grace period.

use serde_json::json;

use super::*;
use crate::kube::lifecycle::DeleteOptions;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_process_exit_code_is_its_containers_and_fails_its_pod() {
    let Some(runtime) = cluster().await else {
        return;
    };
    let state = runtime.state();
    let script = "import sys; print('failing'); sys.exit(3)";
    create(
        state,
        Kind::Pod,
        python_pod("fails", script, &[], json!({}), json!({})),
    );
    let failed = pod_when(state, "fails", "the pod's end", |p| phase(p) == "Failed").await;
    let terminated = &container(&failed)["state"]["terminated"];
    assert_eq!(terminated["exitCode"], 3);
    assert_eq!(terminated["reason"], "Error");
    assert!(
        logged(state, "fails", "failing")
            .await
            .starts_with("failing")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_of_a_process_pod_completes_when_the_process_succeeds() {
    let Some(runtime) = cluster().await else {
        return;
    };
    let state = runtime.state();
    let template = python_pod("unused", "print('trained')", &[], json!({}), json!({}));
    let job = json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "train"},
        "spec": {"backoffLimit": 0, "template": {"spec": template["spec"]}}});
    create(state, Kind::Job, job);
    let done = until(state, "the Job's completion", |s| {
        let job = s.store.get(Kind::Job, "default", "train")?;
        test_support::condition(&job, "Complete")
    })
    .await;
    assert_eq!(done["status"], "True");
}

const STOPS: &str = r#"
import signal, sys, time
def stop(*_):
    print("got SIGTERM")
    if sys.argv[1] == "exit":
        sys.exit(0)
signal.signal(signal.SIGTERM, stop)
print("running")
while True:
    time.sleep(1)
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_process_pod_gets_sigterm_before_it_goes() {
    let Some(runtime) = cluster().await else {
        return;
    };
    let state = runtime.state();
    create(
        state,
        Kind::Pod,
        python_pod("stops", STOPS, &["exit"], json!({}), json!({})),
    );
    logged(state, "stops", "running").await;
    let stream = state
        .logs
        .stream("default", "stops", "main", false)
        .unwrap();
    let mut changes = state.store.subscribe();
    crate::kube::lifecycle::delete(
        state,
        Kind::Pod,
        "default",
        "stops",
        &DeleteOptions::default(),
    )
    .unwrap();
    let versions = versions_until_removed(&mut changes, "stops").await;
    assert_eq!(log_text(&stream), "running\ngot SIGTERM\n");
    let terminated = last_terminated(&versions);
    assert_eq!(
        (
            terminated["exitCode"].as_i64(),
            terminated["reason"].as_str()
        ),
        (Some(0), Some("Completed"))
    );
    let killing = test_support::events(state, "stops", "Killing");
    assert_eq!(killing.len(), 1, "{killing:?}");
    assert_eq!(killing[0]["message"], "Stopping container main");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pod_deleted_gets_sigterm_then_sigkill_after_its_grace() {
    let Some(runtime) = cluster().await else {
        return;
    };
    let state = runtime.state();
    let spec = json!({"terminationGracePeriodSeconds": 1});
    create(
        state,
        Kind::Pod,
        python_pod("stays", STOPS, &["stay"], json!({}), spec),
    );
    logged(state, "stays", "running").await;
    let stream = state
        .logs
        .stream("default", "stays", "main", false)
        .unwrap();
    let mut changes = state.store.subscribe();
    crate::kube::lifecycle::delete(
        state,
        Kind::Pod,
        "default",
        "stays",
        &DeleteOptions::default(),
    )
    .unwrap();
    let versions = versions_until_removed(&mut changes, "stays").await;
    assert_eq!(log_text(&stream), "running\ngot SIGTERM\n");
    let terminated = last_terminated(&versions);
    assert_eq!(terminated["exitCode"], 137, "SIGKILL: {terminated}");
    assert_eq!(terminated["reason"], "Error");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_process_pod_whose_node_shuts_down_gets_sigterm_and_ends_terminated() {
    let Some(runtime) = cluster().await else {
        return;
    };
    let state = runtime.state();
    create(
        state,
        Kind::Pod,
        python_pod("reclaimed", STOPS, &["exit"], json!({}), json!({})),
    );
    logged(state, "reclaimed", "running").await;
    let node = pod(state, "reclaimed").unwrap()["spec"]["nodeName"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(crate::kube::node_shutdown::begin(state, &node));
    let ended = pod_when(state, "reclaimed", "the pod's end", |p| {
        phase(p) == "Failed"
    })
    .await;
    assert_eq!(ended["status"]["reason"], "Terminated");
    assert!(
        logged(state, "reclaimed", "got SIGTERM")
            .await
            .ends_with("got SIGTERM\n")
    );
    assert_eq!(container(&ended)["state"]["terminated"]["exitCode"], 0);
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_cluster_leaves_no_process_behind() {
    let Some(runtime) = cluster().await else {
        return;
    };
    let state = runtime.state().clone();
    let script = "import os, sys, time; print('PID=%d' % os.getpid()); time.sleep(600)";
    create(
        &state,
        Kind::Pod,
        python_pod("orphan", script, &[], json!({}), json!({})),
    );
    let log = logged(&state, "orphan", "PID=").await;
    let pid: i32 = said(&log, "PID").parse().unwrap();
    let alive = |pid: i32| nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None).is_ok();
    assert!(alive(pid));
    runtime.shutdown();
    let deadline = tokio::time::Instant::now() + PATIENCE;
    // A killed child stays a zombie until it is reaped; tokio reaps it in the background.
    while alive(pid) && !is_zombie(pid) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "process {pid} outlived its cluster"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[cfg(target_os = "linux")]
fn is_zombie(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z'))
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_not_on_the_containers_path_fails_to_start_as_runc_says() {
    let Some(runtime) = cluster().await else {
        return;
    };
    let state = runtime.state();
    let mut pod = python_pod("typo", "", &[], json!({}), json!({}));
    pod["spec"]["containers"][0]["command"] = json!(["pyhton3", "-c", "print(1)"]);
    create(state, Kind::Pod, pod);
    let failed = pod_when(state, "typo", "the pod's end", |p| phase(p) == "Failed").await;
    let terminated = &container(&failed)["state"]["terminated"];
    assert_eq!(terminated["exitCode"], 128);
    assert_eq!(terminated["reason"], "StartError");
    let message = terminated["message"].as_str().unwrap();
    assert!(
        message.ends_with("exec: \"pyhton3\": executable file not found in $PATH: unknown"),
        "{message}"
    );
}
