//! Init containers, run one at a time before the pod's containers, as the kubelet runs them:
//! each one's status in `initContainerStatuses`, the pod `Initialized` only once all completed,
//! a failure ending the pod under `restartPolicy: Never` and retried after a back-off otherwise.
//!
//! The simulated kubelet runs no image, so it carries out itself the one program an init
//! container is given here, `tar` extracting an archive (`tar_program`): the archive is read
//! from the volume mounted over its path (a ConfigMap's or Secret's key), its files put in the
//! volume mounted over the target directory — written into that volume's directory for a pod
//! run as processes (`--run-image`, `--run-code`), remembered ([`Unpacked`]) for a simulated one,
//! whose containers can then be checked against them. Any other init container completes at
//! once, as before.

use std::collections::{BTreeSet, HashMap};
use std::time::Duration;

use serde_json::{Value, json};

use super::MIN_RETRY_WAIT;
use super::context::PodCtx;
use super::pod::str_of;
use super::process::{self, Sandbox};
use super::tar_program::{self, Entry, Extract};
use crate::kube::events::EventType;
use crate::kube::meta;
use crate::kube::pod_status::set_condition;

/// What the pod's init containers unpacked: for each volume, the paths (inside it) of the files
/// and links put there.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Unpacked(HashMap<String, BTreeSet<String>>);

impl Unpacked {
    /// Whether `path` (absolute, in `container`'s file system) is a file the init containers
    /// unpacked; None when it lies in no volume they unpacked into, so the kubelet cannot know.
    pub fn holds(&self, container: &Value, path: &str) -> Option<bool> {
        let (volume, inside) = mounted(container, path)?;
        let files = self.0.get(&volume)?;
        Some(files.contains(&inside))
    }
}

/// The volume mounted over `path` in `container` (the longest mount path that holds it) and the
/// path inside that volume.
pub fn mounted(container: &Value, path: &str) -> Option<(String, String)> {
    container["volumeMounts"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| {
            let mount = m["mountPath"].as_str()?.trim_end_matches('/');
            let rest = path.strip_prefix(mount)?;
            let rest = match rest.strip_prefix('/') {
                Some(rest) => rest,
                None if rest.is_empty() => "",
                None => return None,
            };
            let sub = m["subPath"].as_str().unwrap_or_default();
            let inside = [sub, rest]
                .iter()
                .filter(|p| !p.is_empty())
                .copied()
                .collect::<Vec<_>>()
                .join("/");
            Some((mount.len(), m["name"].as_str()?.to_string(), inside))
        })
        .max_by_key(|(len, _, _)| *len)
        .map(|(_, volume, inside)| (volume, inside))
}

/// The extraction an init container asks for, with the directory it lands in.
pub fn extraction(container: &Value) -> Option<Result<Extract, String>> {
    let command: Vec<String> = ["command", "args"]
        .iter()
        .flat_map(|k| container[*k].as_array().into_iter().flatten())
        .filter_map(|w| w.as_str().map(str::to_string))
        .collect();
    tar_program::extract_of(&command).map(|r| {
        r.map(|mut e| {
            let cwd = str_of(container, "workingDir");
            let cwd = if cwd.is_empty() { "/" } else { cwd };
            e.into = Some(match e.into.take() {
                Some(dir) if dir.starts_with('/') => dir,
                Some(dir) => format!("{}/{dir}", cwd.trim_end_matches('/')),
                None => cwd.to_string(),
            });
            e
        })
    })
}

/// Runs the pod's init containers in order. None when the pod is stopped meanwhile; Some(Err)
/// when one failed under `restartPolicy: Never` (the pod is then Failed, said here).
pub async fn run_all(ctx: &PodCtx, sandbox: Option<&Sandbox>) -> Option<Result<Unpacked, ()>> {
    let pod = ctx.get()?;
    let inits: Vec<Value> = pod
        .pointer("/spec/initContainers")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut unpacked = Unpacked::default();
    if inits.is_empty() {
        return Some(Ok(unpacked));
    }
    let names: Vec<&str> = inits.iter().map(|c| str_of(c, "name")).collect();
    ctx.update(|p| {
        p["status"]["initContainerStatuses"] = Value::Array(
            inits
                .iter()
                .map(|c| status(c, json!({"waiting": {"reason": "PodInitializing"}}), 0))
                .collect(),
        );
        let message = format!("containers with incomplete status: [{}]", names.join(" "));
        set_condition(
            p,
            "Initialized",
            false,
            Some("ContainersNotInitialized"),
            Some(&message),
        );
    });
    let never = pod.pointer("/spec/restartPolicy").and_then(Value::as_str) == Some("Never");
    for (index, init) in inits.iter().enumerate() {
        let mut restarts = 0;
        loop {
            let started = meta::now();
            put(
                ctx,
                index,
                init,
                json!({"running": {"startedAt": started}}),
                restarts,
            );
            let stream = ctx
                .state
                .logs
                .start_instance(&ctx.ns, &ctx.name, str_of(init, "name"));
            let outcome = run_one(ctx, &pod, init, sandbox, &mut unpacked).await?;
            if let Err(why) = &outcome {
                stream.push(why.clone());
            }
            stream.finish();
            let (code, reason) = match outcome {
                Ok(()) => (0, "Completed"),
                Err(_) => (2, "Error"),
            };
            let terminated = json!({"terminated": {"exitCode": code, "reason": reason,
                "startedAt": started, "finishedAt": meta::now()}});
            put(ctx, index, init, terminated, restarts);
            if code == 0 {
                break;
            }
            if never {
                ctx.update(|p| {
                    p["status"]["phase"] = json!("Failed");
                    set_condition(p, "Ready", false, Some("PodFailed"), None);
                    set_condition(p, "ContainersReady", false, Some("PodFailed"), None);
                });
                return Some(Err(()));
            }
            restarts += 1;
            let delay = Duration::from_secs((10u64 << (restarts - 1).min(5)).min(300));
            ctx.event(
                EventType::Warning,
                "BackOff",
                &format!(
                    "Back-off restarting failed container {} in pod {}_{}({})",
                    str_of(init, "name"),
                    ctx.name,
                    ctx.ns,
                    ctx.uid
                ),
                "kubelet",
            );
            if !ctx.wait(delay, MIN_RETRY_WAIT).await {
                return None;
            }
        }
    }
    ctx.update(|p| set_condition(p, "Initialized", true, None, None));
    Some(Ok(unpacked))
}

/// One run of one init container: Ok when it completed, Err(what it printed) when it failed.
async fn run_one(
    ctx: &PodCtx,
    pod: &Value,
    init: &Value,
    sandbox: Option<&Sandbox>,
    unpacked: &mut Unpacked,
) -> Option<Result<(), String>> {
    let extract = match extraction(init) {
        None => return Some(Ok(())),
        Some(Err(why)) => return Some(Err(why)),
        Some(Ok(extract)) => extract,
    };
    let archive = archive_bytes(ctx, pod, init, &extract.archive).await?;
    let archive = match archive {
        Ok(bytes) => bytes,
        Err(why) => return Some(Err(why)),
    };
    let entries = match tar_program::entries(&archive) {
        Ok(entries) => entries,
        Err(why) => return Some(Err(why)),
    };
    let into = extract.into.unwrap_or_else(|| "/".into());
    // A directory in no volume is the init container's own: what lands there goes with it.
    let Some((volume, base)) = mounted(init, &into) else {
        return Some(Ok(()));
    };
    if let Some(dir) = sandbox.and_then(|s| s.volume_dir(&volume)) {
        let dir = if base.is_empty() {
            dir.to_path_buf()
        } else {
            dir.join(&base)
        };
        if let Err(why) = std::fs::create_dir_all(&dir)
            .map_err(|e| format!("tar: {}: Cannot open: {e}", into))
            .and_then(|()| tar_program::write_into(&dir, &entries))
        {
            return Some(Err(why));
        }
    }
    let files = unpacked.0.entry(volume).or_default();
    for entry in &entries {
        if !matches!(entry, Entry::Dir { .. }) {
            let path = match base.as_str() {
                "" => entry.path().to_string(),
                base => format!("{base}/{}", entry.path()),
            };
            files.insert(path);
        }
    }
    Some(Ok(()))
}

/// The archive's bytes, from the volume mounted over its path. A volume whose object is not
/// there yet is the kubelet's `FailedMount`, tried again as it does; None when the pod is
/// stopped meanwhile. Err(tar's words) when the volume holds no such file.
async fn archive_bytes(
    ctx: &PodCtx,
    pod: &Value,
    init: &Value,
    path: &str,
) -> Option<Result<Vec<u8>, String>> {
    let cannot_open = || {
        Err(format!(
            "tar: {path}: Cannot open: No such file or directory\ntar: Error is not recoverable: exiting now"
        ))
    };
    let Some((volume, inside)) = mounted(init, path) else {
        return Some(cannot_open());
    };
    let Some(source) = pod
        .pointer("/spec/volumes")
        .and_then(Value::as_array)
        .and_then(|v| v.iter().find(|v| v["name"] == volume.as_str()))
    else {
        return Some(cannot_open());
    };
    let mut retry = Duration::from_millis(500);
    loop {
        match process::volume_files(&ctx.state, pod, source) {
            Ok(files) => {
                return Some(
                    files
                        .into_iter()
                        .find(|(p, _, _)| *p == inside)
                        .map(|(_, bytes, _)| bytes)
                        .map_or_else(cannot_open, Ok),
                );
            }
            Err(why) => {
                let said = format!("MountVolume.SetUp failed for volume \"{volume}\" : {why}");
                ctx.event(EventType::Warning, "FailedMount", &said, "kubelet");
                if !ctx.wait(retry, MIN_RETRY_WAIT).await {
                    return None;
                }
                retry = (retry * 2).min(Duration::from_secs(122));
            }
        }
    }
}

fn status(container: &Value, state: Value, restarts: u32) -> Value {
    let done = state.get("terminated").is_some();
    json!({
        "name": str_of(container, "name"),
        "image": str_of(container, "image"),
        "imageID": "",
        "state": state,
        "lastState": {},
        "ready": done && state["terminated"]["exitCode"] == 0,
        "started": state.get("running").is_some(),
        "restartCount": restarts,
    })
}

fn put(ctx: &PodCtx, index: usize, container: &Value, state: Value, restarts: u32) {
    ctx.update(|p| {
        if let Some(slot) = p["status"]["initContainerStatuses"]
            .as_array_mut()
            .and_then(|l| l.get_mut(index))
        {
            *slot = status(container, state, restarts);
        }
    });
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_path_is_found_in_the_volume_mounted_over_it() {
        let container = json!({"volumeMounts": [
            {"name": "code", "mountPath": "/workspace"},
            {"name": "archive", "mountPath": "/var/run/gantry/code/"},
            {"name": "deep", "mountPath": "/workspace/data", "subPath": "shard"},
        ]});
        assert_eq!(
            mounted(&container, "/workspace/train.py"),
            Some(("code".into(), "train.py".into()))
        );
        assert_eq!(
            mounted(&container, "/workspace"),
            Some(("code".into(), String::new()))
        );
        assert_eq!(
            mounted(&container, "/workspace/data/x.bin"),
            Some(("deep".into(), "shard/x.bin".into()))
        );
        assert_eq!(mounted(&container, "/workspaces/x"), None);
        assert_eq!(mounted(&container, "/etc/passwd"), None);
    }

    #[test]
    fn an_extraction_without_a_directory_lands_in_the_working_directory() {
        let init = json!({"command": ["tar", "-xf", "/a/code.tar"], "workingDir": "/w"});
        assert_eq!(
            extraction(&init),
            Some(Ok(Extract {
                archive: "/a/code.tar".into(),
                into: Some("/w".into())
            }))
        );
        let relative =
            json!({"command": ["tar", "-xf", "/a/code.tar", "-C", "sub"], "workingDir": "/w"});
        assert_eq!(
            extraction(&relative).unwrap().unwrap().into.as_deref(),
            Some("/w/sub")
        );
    }
}
