//! How an attempt's code reaches its container, in the Job it makes: the archive in a ConfigMap
//! of the attempt's own (named after it, owned by its Job so it goes when the Job goes), mounted
//! read-only; an init container of the training image (no other image is pulled) that unpacks it
//! with `tar` into an `emptyDir`; that directory, writable, as the training container's working
//! directory, so a script finds its files beside it and may write checkpoints there.
//!
//! The Job is created suspended, with a marker of its own ([`AWAITING`]), because its ConfigMap
//! can only be owned by a Job that exists; once the ConfigMap is made, the Job is released.

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{ConfigMap, Container, EnvVar, PodSpec, Volume, VolumeMount};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::ObjectMeta;
use serde_json::json;

use super::record::{ANNOTATION, CodeRecord};

/// The key of the attempt's ConfigMap that holds the archive.
pub const KEY: &str = "code.tar";
/// Where the init container finds the archive.
pub const ARCHIVE_DIR: &str = "/var/run/gantry/code";
/// The training container's working directory, where the code is unpacked.
pub const WORKDIR: &str = "/workspace";
const ARCHIVE_VOLUME: &str = "gantry-code-archive";
const WORKDIR_VOLUME: &str = "gantry-code";
/// The init container that unpacks the code.
pub const UNPACK_CONTAINER: &str = "gantry-code";
/// Set on the training container (unless set already): Python writes each line as it prints it.
const UNBUFFERED: &str = "PYTHONUNBUFFERED";
/// On a Job created suspended until its code is there; gone when it is released.
pub const AWAITING: &str = "gantry.dev/awaiting-code";

/// The ConfigMap of an attempt's code.
pub fn configmap_name(attempt: &str) -> String {
    format!("{attempt}-code")
}

/// The command that unpacks the archive in the training image: `tar`, which every image a
/// training script runs on has (Debian's, Ubuntu's, busybox's).
pub fn unpack_command() -> Vec<String> {
    [
        "tar",
        "-x",
        "-f",
        &format!("{ARCHIVE_DIR}/{KEY}"),
        "-C",
        WORKDIR,
    ]
    .map(str::to_string)
    .to_vec()
}

/// Gives the Job of attempt `attempt` its code (recorded as `record`) and holds it suspended
/// until its ConfigMap is made.
pub fn attach(job: &mut Job, attempt: &str, record: &CodeRecord) {
    if let Some(pod) = pod_spec(job) {
        let volumes = pod.volumes.get_or_insert_with(Vec::new);
        volumes.retain(|v| v.name != ARCHIVE_VOLUME && v.name != WORKDIR_VOLUME);
        volumes.push(volume(json!({
            "name": ARCHIVE_VOLUME,
            "configMap": {"name": configmap_name(attempt), "defaultMode": 0o444},
        })));
        volumes.push(volume(json!({"name": WORKDIR_VOLUME, "emptyDir": {}})));
        let image = pod.containers.first().and_then(|c| c.image.clone());
        let unpack = Container {
            name: UNPACK_CONTAINER.into(),
            image,
            command: Some(unpack_command()),
            volume_mounts: Some(vec![
                mount(ARCHIVE_VOLUME, ARCHIVE_DIR, true),
                mount(WORKDIR_VOLUME, WORKDIR, false),
            ]),
            ..Default::default()
        };
        let init = pod.init_containers.get_or_insert_with(Vec::new);
        init.retain(|c| c.name != UNPACK_CONTAINER);
        init.insert(0, unpack);
        if let Some(training) = pod.containers.first_mut() {
            training.working_dir = Some(WORKDIR.into());
            // Python holds its output back when it is not a terminal: the log, the metrics and
            // the stall watch would see a line only at the end.
            let env = training.env.get_or_insert_with(Vec::new);
            if !env.iter().any(|e| e.name == UNBUFFERED) {
                env.push(EnvVar {
                    name: UNBUFFERED.into(),
                    value: Some("1".into()),
                    value_from: None,
                });
            }
            let mounts = training.volume_mounts.get_or_insert_with(Vec::new);
            mounts.retain(|m| m.name != WORKDIR_VOLUME);
            mounts.push(mount(WORKDIR_VOLUME, WORKDIR, false));
        }
    }
    annotations(job).insert(ANNOTATION.into(), record.to_annotation());
    hold(job);
}

/// Makes `next` (a copy of `previous`'s spec, as a retry or recovery makes it) run the same code
/// as `previous`: the record copied, the archive read from attempt `attempt`'s own ConfigMap,
/// the init container on the training container's image (a retry may change it), and held
/// until that ConfigMap is made. False when `previous` had no code.
pub fn follow(next: &mut Job, previous: &Job, attempt: &str) -> bool {
    let Some(record) = annotation(previous, ANNOTATION) else {
        return false;
    };
    let record = record.to_string();
    if let Some(pod) = pod_spec(next) {
        for v in pod.volumes.iter_mut().flatten() {
            if v.name == ARCHIVE_VOLUME
                && let Some(source) = v.config_map.as_mut()
            {
                source.name = configmap_name(attempt);
            }
        }
        let image = pod.containers.first().and_then(|c| c.image.clone());
        for c in pod.init_containers.iter_mut().flatten() {
            if c.name == UNPACK_CONTAINER {
                c.image = image.clone();
            }
        }
    }
    annotations(next).insert(ANNOTATION.into(), record);
    hold(next);
    true
}

/// The code an attempt ran, as its Job records it.
pub fn record_of(job: &Job) -> Option<CodeRecord> {
    annotation(job, ANNOTATION).and_then(CodeRecord::parse)
}

/// Whether a Job waits suspended for its code.
pub fn awaiting(job: &Job) -> bool {
    annotation(job, AWAITING).is_some()
}

/// The merge patch that releases a held Job: running, and the marker gone.
pub fn release_patch() -> serde_json::Value {
    json!({"metadata": {"annotations": {AWAITING: null}}, "spec": {"suspend": false}})
}

/// The ConfigMap holding `archive` for the attempt `job` (as the API server returned it, with
/// its uid), labelled as the Job is and owned by it.
pub fn configmap(job: &Job, archive: Vec<u8>) -> ConfigMap {
    let name = job.metadata.name.clone().unwrap_or_default();
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(configmap_name(&name)),
            namespace: job.metadata.namespace.clone(),
            labels: job.metadata.labels.clone(),
            owner_references: Some(vec![OwnerReference {
                api_version: "batch/v1".into(),
                kind: "Job".into(),
                name,
                uid: job.metadata.uid.clone().unwrap_or_default(),
                ..Default::default()
            }]),
            ..Default::default()
        },
        binary_data: Some(BTreeMap::from([(KEY.to_string(), ByteString(archive))])),
        ..Default::default()
    }
}

/// The archive a ConfigMap holds.
pub fn archive_in(configmap: &ConfigMap) -> Option<&[u8]> {
    configmap
        .binary_data
        .as_ref()?
        .get(KEY)
        .map(|b| b.0.as_slice())
}

fn hold(job: &mut Job) {
    if let Some(spec) = job.spec.as_mut() {
        spec.suspend = Some(true);
    }
    annotations(job).insert(AWAITING.into(), "true".into());
}

fn pod_spec(job: &mut Job) -> Option<&mut PodSpec> {
    job.spec.as_mut()?.template.spec.as_mut()
}

fn annotations(job: &mut Job) -> &mut BTreeMap<String, String> {
    job.metadata.annotations.get_or_insert_with(BTreeMap::new)
}

fn annotation<'a>(job: &'a Job, name: &str) -> Option<&'a str> {
    job.metadata
        .annotations
        .as_ref()?
        .get(name)
        .map(String::as_str)
}

fn volume(value: serde_json::Value) -> Volume {
    serde_json::from_value(value).unwrap_or_default()
}

fn mount(volume: &str, path: &str, read_only: bool) -> VolumeMount {
    VolumeMount {
        name: volume.into(),
        mount_path: path.into(),
        read_only: read_only.then_some(true),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn job(name: &str) -> Job {
        serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": "default", "uid": "u-1",
                "labels": {"gantry.dev/job": "train", "gantry.dev/attempt": "1"}},
            "spec": {"template": {"spec": {
                "restartPolicy": "Never",
                "containers": [{"name": "trainer", "image": "python:3.12-slim",
                    "command": ["python3", "train.py"]}],
            }}},
        }))
        .unwrap()
    }

    fn record() -> CodeRecord {
        CodeRecord {
            digest: "sha256:00".into(),
            files: 1,
            bytes: 9,
            dir: "/src".into(),
            commit: None,
            dirty: None,
        }
    }

    #[test]
    fn a_job_with_code_unpacks_it_into_its_working_directory_and_waits_for_it() {
        let mut j = job("train");
        attach(&mut j, "train", &record());
        let v = serde_json::to_value(&j).unwrap();
        assert_eq!(v["spec"]["suspend"], true);
        assert_eq!(v["metadata"]["annotations"][AWAITING], "true");
        let pod = &v["spec"]["template"]["spec"];
        assert_eq!(pod["volumes"][0]["configMap"]["name"], "train-code");
        assert_eq!(pod["volumes"][1]["emptyDir"], json!({}));
        let init = &pod["initContainers"][0];
        assert_eq!(init["image"], "python:3.12-slim");
        assert_eq!(
            init["command"],
            json!([
                "tar",
                "-x",
                "-f",
                "/var/run/gantry/code/code.tar",
                "-C",
                "/workspace"
            ])
        );
        let trainer = &pod["containers"][0];
        assert_eq!(trainer["workingDir"], WORKDIR);
        assert_eq!(trainer["volumeMounts"][0]["mountPath"], WORKDIR);
        assert_eq!(trainer["command"], json!(["python3", "train.py"]));
        assert_eq!(
            trainer["env"],
            json!([{"name": "PYTHONUNBUFFERED", "value": "1"}])
        );
        assert_eq!(record_of(&j), Some(record()));
        assert!(awaiting(&j));
    }

    #[test]
    fn the_next_attempt_reads_its_own_copy_on_its_own_image() {
        let mut previous = job("train");
        attach(&mut previous, "train", &record());
        let mut next = previous.clone();
        next.metadata.annotations = None;
        next.spec.as_mut().unwrap().suspend = None;
        let pod = next.spec.as_mut().unwrap().template.spec.as_mut().unwrap();
        pod.containers[0].image = Some("python:3.13-slim".into());
        assert!(follow(&mut next, &previous, "train-2"));
        let v = serde_json::to_value(&next).unwrap();
        let pod = &v["spec"]["template"]["spec"];
        assert_eq!(pod["volumes"][0]["configMap"]["name"], "train-2-code");
        assert_eq!(pod["initContainers"][0]["image"], "python:3.13-slim");
        assert_eq!(record_of(&next), Some(record()));
        assert!(awaiting(&next));
        assert!(!follow(&mut job("x-2"), &job("x"), "x-2"));
    }

    #[test]
    fn the_configmap_is_owned_by_its_attempt_and_holds_the_archive() {
        let cm = configmap(&job("train-2"), b"tar bytes".to_vec());
        assert_eq!(cm.metadata.name.as_deref(), Some("train-2-code"));
        let owner = &cm.metadata.owner_references.as_ref().unwrap()[0];
        assert_eq!((owner.kind.as_str(), owner.uid.as_str()), ("Job", "u-1"));
        assert_eq!(archive_in(&cm), Some(&b"tar bytes"[..]));
        assert_eq!(
            cm.metadata
                .labels
                .unwrap()
                .get("gantry.dev/attempt")
                .unwrap(),
            "1"
        );
    }
}
