//! `--run-code` on the kubelet's side (`kube::process::run_code` says why): which containers are
//! code attempts — Python run in a working directory an init container of the pod unpacks code
//! into — and such a container as it runs here: its program this machine's interpreter, and in
//! an Indexed Job's pod `MASTER_ADDR` this machine and `MASTER_PORT` a port of the attempt's own,
//! since local processes share one network and the pods' DNS names resolve nowhere.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{Value, json};

use super::super::context::PodCtx;
use super::super::init;
use super::super::pod::str_of;
use super::super::python_script::is_python;
use crate::kube::events::EventType;
use crate::kube::meta;

/// Set by the Job controller on each pod of an Indexed Job.
const COMPLETION_INDEX: &str = "batch.kubernetes.io/job-completion-index";

/// Said once per simulator, in its log: the image is not what runs.
static WARNED: AtomicBool = AtomicBool::new(false);

/// The interpreter that runs `container`, when `--run-code` is on and it is a code attempt.
pub fn interpreter_for(ctx: &PodCtx, container: &Value) -> Option<PathBuf> {
    let interpreter = ctx.state.shared.run_images.code()?;
    let pod = ctx.get()?;
    runs_code(&pod, container).then(|| interpreter.path.clone())
}

/// Whether `container` runs Python in a directory an init container of `pod` unpacks into.
pub fn runs_code(pod: &Value, container: &Value) -> bool {
    let program = container["command"].get(0).and_then(Value::as_str);
    if !program.is_some_and(is_python) {
        return false;
    }
    let Some((volume, _)) = container["workingDir"]
        .as_str()
        .and_then(|dir| init::mounted(container, dir))
    else {
        return false;
    };
    pod.pointer("/spec/initContainers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|unpack| match init::extraction(unpack) {
            Some(Ok(extract)) => extract
                .into
                .as_deref()
                .and_then(|dir| init::mounted(unpack, dir))
                .is_some_and(|(v, _)| v == volume),
            _ => false,
        })
}

/// `container` as it runs here when `executable` is the code attempts' interpreter; any other
/// container as it is.
pub fn as_local(ctx: &PodCtx, pod: &Value, mut container: Value, executable: &Path) -> Value {
    let Some(interpreter) = ctx.state.shared.run_images.code() else {
        return container;
    };
    if interpreter.path != executable || !runs_code(pod, &container) {
        return container;
    }
    container["command"][0] = json!(executable.display().to_string());
    if meta::annotation(pod, COMPLETION_INDEX).is_some() {
        set_env(&mut container, "MASTER_ADDR", "127.0.0.1");
        let job = meta::owner_uids(pod).first().copied().unwrap_or(&ctx.uid);
        match ctx.state.processes.master_port(job) {
            Ok(port) => set_env(&mut container, "MASTER_PORT", &port.to_string()),
            Err(e) => tracing::warn!(error = %e, "no free port for the ranks to meet on"),
        }
    }
    let said = format!(
        "Running this machine's {} in place of image {} (--run-code)",
        interpreter.said(),
        str_of(&container, "image")
    );
    if !WARNED.swap(true, Ordering::Relaxed) {
        tracing::warn!("{said}: a code attempt's base image is not run, nor its packages");
    }
    ctx.event(EventType::Normal, "LocalInterpreter", &said, "kubelet");
    container
}

/// Sets `name` in the container's environment, in place of any value it had.
fn set_env(container: &mut Value, name: &str, value: &str) {
    if !container["env"].is_array() {
        container["env"] = json!([]);
    }
    if let Some(env) = container["env"].as_array_mut() {
        env.retain(|e| e["name"] != name);
        env.push(json!({"name": name, "value": value}));
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn pod(init_into: &str) -> Value {
        json!({"spec": {"initContainers": [{"name": "unpack", "command":
            ["tar", "-x", "-f", "/var/run/code/code.tar", "-C", init_into],
            "volumeMounts": [{"name": "code", "mountPath": "/workspace"},
                {"name": "archive", "mountPath": "/var/run/code"}]}]}})
    }

    fn trainer(program: &str) -> Value {
        json!({"name": "t", "command": [program, "train.py"], "workingDir": "/workspace",
            "volumeMounts": [{"name": "code", "mountPath": "/workspace"}]})
    }

    #[test]
    fn python_over_unpacked_code_is_a_code_attempt_and_nothing_else_is() {
        assert!(runs_code(&pod("/workspace"), &trainer("python3")));
        assert!(runs_code(
            &pod("/workspace"),
            &trainer("/usr/local/bin/python")
        ));
        assert!(!runs_code(&pod("/workspace"), &trainer("torchrun")));
        assert!(!runs_code(&pod("/elsewhere"), &trainer("python3")));
        assert!(!runs_code(&json!({"spec": {}}), &trainer("python3")));
    }

    #[test]
    fn a_value_set_replaces_the_one_there() {
        let mut c = json!({"env": [{"name": "MASTER_ADDR", "value": "job-0.workers"},
            {"name": "RANK", "valueFrom": {"fieldRef": {"fieldPath": "x"}}}]});
        set_env(&mut c, "MASTER_ADDR", "127.0.0.1");
        set_env(&mut c, "MASTER_PORT", "40001");
        assert_eq!(
            c["env"],
            json!([{"name": "RANK", "valueFrom": {"fieldRef": {"fieldPath": "x"}}},
                {"name": "MASTER_ADDR", "value": "127.0.0.1"},
                {"name": "MASTER_PORT", "value": "40001"}])
        );
    }
}
