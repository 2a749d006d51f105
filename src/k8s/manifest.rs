//! The training Job (and, for distributed training, its headless Service) built from the
//! configuration, validated before anything is sent. A retry copies the previous attempt's spec,
//! because a Job's template is immutable and the attempt that ran is the truth about what ran
//! (see [`overrides`]); [`validate`] says what the API server would refuse.

mod failure_policy;
pub mod import;
mod overrides;
mod validate;

use std::collections::BTreeMap;

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Service;
use serde_json::json;

use super::labels::{self, ATTEMPT_LABEL, COMPLETION_INDEX, JOB_LABEL, MANAGED_BY, MANAGER};
use crate::config::{Distributed, JobConfig};

pub use failure_policy::{Policy, WITHOUT_POLICY, ignores_disruptions};
pub use overrides::{LaunchFlags, Overrides, apply_launch_flags, next_attempt};
pub use validate::{is_quantity, validate};

pub const GPU_RESOURCE: &str = "nvidia.com/gpu";
const MASTER_ADDR: &str = "MASTER_ADDR";

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ManifestError {
    #[error("{0}")]
    Invalid(String),
    #[error("no image: pass --image or set job.image (or --project for gcr.io/PROJECT/…)")]
    NoImage,
}

fn invalid(msg: impl Into<String>) -> ManifestError {
    ManifestError::Invalid(msg.into())
}

/// Distributed training (Indexed Job + headless Service + launcher env), if configured.
pub fn distributed(cfg: &JobConfig) -> Option<Distributed> {
    (cfg.indexed || cfg.distributed.is_some()).then(|| cfg.distributed.clone().unwrap_or_default())
}

/// The headless Service's name: configured, else `<job>-workers`.
pub fn service_name(cfg: &JobConfig) -> String {
    cfg.distributed
        .as_ref()
        .and_then(|d| d.service.clone())
        .unwrap_or_else(|| format!("{}-workers", cfg.name))
}

/// Labels on every object of an attempt.
pub fn object_labels(cfg: &JobConfig, attempt: u32) -> BTreeMap<String, String> {
    let mut labels = cfg.labels.clone();
    labels.insert(MANAGED_BY.into(), MANAGER.into());
    labels.insert(JOB_LABEL.into(), cfg.name.clone());
    labels.insert(ATTEMPT_LABEL.into(), attempt.to_string());
    labels
}

/// The Job of attempt `attempt` from the configuration.
pub fn training_job(
    cfg: &JobConfig,
    project: Option<&str>,
    attempt: u32,
) -> Result<Job, ManifestError> {
    let image = match (&cfg.image, project) {
        (Some(i), _) => i.clone(),
        // Code without an image runs on a public one: nothing of the project's to build.
        (None, _) if cfg.code.is_some() => crate::code::DEFAULT_IMAGE.to_string(),
        (None, Some(p)) if !p.is_empty() => cfg.image_for(p),
        _ => return Err(ManifestError::NoImage),
    };
    if cfg.code.is_some() && cfg.command.is_empty() {
        return Err(invalid(
            "code needs the command that runs it: `gantry launch --code DIR -- python3 train.py`, or job.command = [\"python3\", \"train.py\"]",
        ));
    }
    let name = labels::attempt_name(&cfg.name, attempt);
    let labels = object_labels(cfg, attempt);
    let dist = distributed(cfg);
    let completions = cfg
        .completions
        .or(cfg.parallelism.filter(|_| dist.is_some()));
    if dist.is_some() && completions.is_none() {
        return Err(invalid(
            "distributed training needs the number of workers: set job.completions or pass --completions N",
        ));
    }

    let mut env: Vec<serde_json::Value> = Vec::new();
    if let Some(d) = &dist {
        let workers = completions.unwrap_or(1);
        let launcher = [
            (
                "WORLD_SIZE",
                json!({"name": "WORLD_SIZE", "value": workers.to_string()}),
            ),
            (
                "RANK",
                json!({"name": "RANK", "valueFrom": {"fieldRef": {"fieldPath": format!("metadata.annotations['{COMPLETION_INDEX}']")}}}),
            ),
            (
                MASTER_ADDR,
                json!({"name": MASTER_ADDR, "value": format!("{name}-0.{}", service_name(cfg))}),
            ),
            (
                "MASTER_PORT",
                json!({"name": "MASTER_PORT", "value": d.master_port.to_string()}),
            ),
        ];
        for (key, var) in launcher {
            if !cfg.env.contains_key(key) {
                env.push(var);
            }
        }
    }
    env.extend(cfg.env.iter().map(|(k, v)| json!({"name": k, "value": v})));

    let mut requests = serde_json::Map::new();
    let mut limits = serde_json::Map::new();
    if let Some(cpu) = &cfg.resources.cpu {
        requests.insert("cpu".into(), json!(cpu));
    }
    if let Some(mem) = &cfg.resources.memory {
        requests.insert("memory".into(), json!(mem));
        limits.insert("memory".into(), json!(mem));
    }
    let gpus = cfg.resources.gpus.filter(|g| *g > 0);
    if let Some(g) = gpus {
        limits.insert(GPU_RESOURCE.into(), json!(g.to_string()));
    }
    let mut container = json!({
        "name": cfg.container,
        "image": image,
        "env": env,
    });
    if !cfg.command.is_empty() {
        container["command"] = json!(cfg.command);
    }
    if !cfg.args.is_empty() {
        container["args"] = json!(cfg.args);
    }
    if !requests.is_empty() || !limits.is_empty() {
        container["resources"] = json!({"requests": requests, "limits": limits});
    }

    let mut tolerations: Vec<serde_json::Value> = cfg
        .tolerations
        .iter()
        .map(|t| {
            let mut v = json!({"key": t.key});
            if let Some(o) = &t.operator {
                v["operator"] = json!(o);
            }
            if let Some(x) = &t.value {
                v["value"] = json!(x);
            }
            if let Some(e) = &t.effect {
                v["effect"] = json!(e);
            }
            v
        })
        .collect();
    // GKE taints GPU nodes; a GPU pod needs the toleration to land on them.
    if gpus.is_some() && !cfg.tolerations.iter().any(|t| t.key == GPU_RESOURCE) {
        tolerations
            .push(json!({"key": GPU_RESOURCE, "operator": "Exists", "effect": "NoSchedule"}));
    }
    let mut pod_spec = json!({
        "containers": [container],
        "restartPolicy": cfg.restart_policy.as_deref().unwrap_or("Never"),
    });
    if !cfg.node_selector.is_empty() {
        pod_spec["nodeSelector"] = json!(cfg.node_selector);
    }
    if !tolerations.is_empty() {
        pod_spec["tolerations"] = json!(tolerations);
    }
    if dist.is_some() {
        pod_spec["subdomain"] = json!(service_name(cfg));
    }

    let mut spec = json!({
        "backoffLimit": cfg.backoff_limit,
        "template": {
            "metadata": {"labels": labels},
            "spec": pod_spec,
        },
    });
    if let Some(s) = cfg.active_deadline_seconds {
        spec["activeDeadlineSeconds"] = json!(s);
    }
    if let Some(s) = cfg.ttl_seconds_after_finished {
        spec["ttlSecondsAfterFinished"] = json!(s);
    }
    let parallelism = cfg.parallelism.or(completions.filter(|_| dist.is_some()));
    if let Some(p) = parallelism {
        spec["parallelism"] = json!(p);
    }
    if let Some(c) = completions {
        spec["completions"] = json!(c);
    }
    if dist.is_some() {
        spec["completionMode"] = json!("Indexed");
    }
    if let Some(policy) = Policy::of(cfg).spec() {
        spec["podFailurePolicy"] = policy.clone();
    }
    let job = json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": cfg.namespace, "labels": labels},
        "spec": spec,
    });
    let job: Job =
        serde_json::from_value(job).map_err(|e| invalid(format!("job manifest: {e}")))?;
    validate(&job)?;
    Ok(job)
}

/// The headless Service that gives every worker of a distributed Job a stable DNS name
/// (`<job>-<index>.<service>`), or None when the Job is not distributed.
pub fn worker_service(cfg: &JobConfig, attempt: u32) -> Result<Option<Service>, ManifestError> {
    let Some(d) = distributed(cfg) else {
        return Ok(None);
    };
    let name = service_name(cfg);
    if !crate::names::is_rfc1035_label(&name) {
        return Err(invalid(format!(
            "service name \"{name}\": a Service name is at most 63 lower-case letters, digits or '-', starting with a letter"
        )));
    }
    let mut selector = cfg.labels.clone();
    selector.insert(MANAGED_BY.into(), MANAGER.into());
    selector.insert(JOB_LABEL.into(), cfg.name.clone());
    let service = json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": cfg.namespace, "labels": object_labels(cfg, attempt)},
        "spec": {
            "clusterIP": "None",
            "selector": selector,
            // Workers look each other up before they are ready.
            "publishNotReadyAddresses": true,
            "ports": [{"name": "master", "port": d.master_port, "targetPort": d.master_port}],
        },
    });
    serde_json::from_value(service)
        .map(Some)
        .map_err(|e| invalid(format!("service manifest: {e}")))
}
