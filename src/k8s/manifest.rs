//! The training Job (and, for distributed training, its headless Service) built from the
//! configuration, validated before anything is sent. A retry copies the previous attempt's spec,
//! because a Job's template is immutable and the attempt that ran is the truth about what ran.

use std::collections::BTreeMap;

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Container, EnvVar, Service};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use serde_json::json;

use super::names::{self, ATTEMPT_LABEL, COMPLETION_INDEX, JOB_LABEL, MANAGED_BY, MANAGER};
use crate::cli::JobOverrides;
use crate::config::{Distributed, JobConfig};

pub const GPU_RESOURCE: &str = "nvidia.com/gpu";
const MASTER_ADDR: &str = "MASTER_ADDR";

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ManifestError {
    #[error("{0}")]
    Invalid(String),
    #[error(
        "no image for the training container: set job.image in the config, pass --image, or give a --project for gcr.io/<project>/ml-training-job:latest"
    )]
    NoImage,
}

fn invalid(msg: impl Into<String>) -> ManifestError {
    ManifestError::Invalid(msg.into())
}

/// Folds `gantry launch` flags into the configured Job.
pub fn apply_launch_flags(
    cfg: &mut JobConfig,
    overrides: &JobOverrides,
    parallelism: Option<u32>,
    completions: Option<u32>,
    indexed: bool,
) {
    if let Some(image) = &overrides.image {
        cfg.image = Some(image.clone());
    }
    for (k, v) in &overrides.env {
        cfg.env.insert(k.clone(), v.clone());
    }
    if let Some(m) = &overrides.memory {
        cfg.resources.memory = Some(m.clone());
    }
    if let Some(c) = &overrides.cpu {
        cfg.resources.cpu = Some(c.clone());
    }
    if parallelism.is_some() {
        cfg.parallelism = parallelism;
    }
    if completions.is_some() {
        cfg.completions = completions;
    }
    if indexed {
        cfg.indexed = true;
        if cfg.completions.is_none() {
            cfg.completions = cfg.parallelism;
        }
    }
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
        (None, Some(p)) if !p.is_empty() => cfg.image_for(p),
        _ => return Err(ManifestError::NoImage),
    };
    let name = names::attempt_name(&cfg.name, attempt);
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
        "restartPolicy": "Never",
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
    if !names::is_rfc1035_label(&name) {
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

/// The next attempt's Job: the previous attempt's spec under a new name, with overrides.
pub fn next_attempt(
    previous: &Job,
    base: &str,
    attempt: u32,
    overrides: &JobOverrides,
) -> Result<Job, ManifestError> {
    let name = names::attempt_name(base, attempt);
    let mut spec = previous
        .spec
        .clone()
        .ok_or_else(|| invalid("the previous attempt has no spec"))?;
    // Fields the API server and Job controller filled in for the old Job.
    spec.selector = None;
    spec.manual_selector = None;
    let template_labels = spec.template.metadata.get_or_insert_with(Default::default);
    let labels = template_labels.labels.get_or_insert_with(Default::default);
    labels.retain(|k, _| {
        !matches!(
            k.as_str(),
            "controller-uid"
                | "job-name"
                | "batch.kubernetes.io/controller-uid"
                | "batch.kubernetes.io/job-name"
        )
    });
    labels.insert(ATTEMPT_LABEL.into(), attempt.to_string());
    let pod = spec
        .template
        .spec
        .as_mut()
        .ok_or_else(|| invalid("the previous attempt has no pod spec"))?;
    let subdomain = pod.subdomain.clone();
    let container = pod
        .containers
        .first_mut()
        .ok_or_else(|| invalid("the previous attempt has no container"))?;
    apply_overrides(container, overrides);
    if let Some(sub) = subdomain {
        set_env(container, MASTER_ADDR, &format!("{name}-0.{sub}"), false);
    }
    let mut meta_labels = previous.metadata.labels.clone().unwrap_or_default();
    meta_labels.insert(ATTEMPT_LABEL.into(), attempt.to_string());
    meta_labels.insert(MANAGED_BY.into(), MANAGER.into());
    meta_labels.insert(JOB_LABEL.into(), base.into());
    let job = Job {
        metadata: kube::api::ObjectMeta {
            name: Some(name),
            namespace: previous.metadata.namespace.clone(),
            labels: Some(meta_labels),
            ..Default::default()
        },
        spec: Some(spec),
        status: None,
    };
    validate(&job)?;
    Ok(job)
}

/// Sets an env var: replaces its value, or adds it (only when `add` says a missing one may be).
fn set_env(container: &mut Container, key: &str, value: &str, add: bool) {
    let env = container.env.get_or_insert_with(Vec::new);
    if let Some(var) = env.iter_mut().find(|e| e.name == key) {
        var.value = Some(value.to_string());
        var.value_from = None;
    } else if add {
        env.push(EnvVar {
            name: key.to_string(),
            value: Some(value.to_string()),
            value_from: None,
        });
    }
}

fn apply_overrides(container: &mut Container, o: &JobOverrides) {
    if let Some(image) = &o.image {
        container.image = Some(image.clone());
    }
    for (k, v) in &o.env {
        set_env(container, k, v, true);
    }
    if o.memory.is_none() && o.cpu.is_none() {
        return;
    }
    let resources = container.resources.get_or_insert_with(Default::default);
    if let Some(m) = &o.memory {
        resources
            .requests
            .get_or_insert_with(Default::default)
            .insert("memory".into(), Quantity(m.clone()));
        resources
            .limits
            .get_or_insert_with(Default::default)
            .insert("memory".into(), Quantity(m.clone()));
    }
    if let Some(c) = &o.cpu {
        resources
            .requests
            .get_or_insert_with(Default::default)
            .insert("cpu".into(), Quantity(c.clone()));
    }
}

/// What the API server would refuse, said before anything is sent.
pub fn validate(job: &Job) -> Result<(), ManifestError> {
    let name = job.metadata.name.as_deref().unwrap_or_default();
    // The Job controller puts the name in a label value on every pod: 63 characters at most.
    if !names::is_rfc1123_label(name) {
        return Err(invalid(format!(
            "job name \"{name}\": use 1 to 63 lower-case letters, digits and '-' (RFC 1123), starting and ending with a letter or digit"
        )));
    }
    if let Some(ns) = &job.metadata.namespace
        && !names::is_rfc1123_label(ns)
    {
        return Err(invalid(format!(
            "namespace \"{ns}\" is not an RFC 1123 label"
        )));
    }
    for (k, v) in job.metadata.labels.iter().flatten() {
        if !names::is_label_value(v) {
            return Err(invalid(format!("label {k}={v}: not a valid label value")));
        }
    }
    let spec = job
        .spec
        .as_ref()
        .ok_or_else(|| invalid("the Job has no spec"))?;
    let indexed = spec.completion_mode.as_deref() == Some("Indexed");
    if indexed {
        let workers = spec.completions.unwrap_or(0);
        if workers < 1 {
            return Err(invalid("an Indexed Job needs completions of 1 or more"));
        }
        let last = format!("{name}-{}", workers - 1);
        if !names::is_rfc1123_label(&last) {
            return Err(invalid(format!(
                "job name \"{name}\" is too long for an Indexed Job: pod hostnames such as \"{last}\" must be at most 63 characters"
            )));
        }
    }
    for (field, n) in [
        ("parallelism", spec.parallelism),
        ("completions", spec.completions),
    ] {
        if n.is_some_and(|n| n < 0) {
            return Err(invalid(format!("{field} must not be negative")));
        }
    }
    let pod = spec
        .template
        .spec
        .as_ref()
        .ok_or_else(|| invalid("the Job has no pod template"))?;
    if !matches!(pod.restart_policy.as_deref(), Some("Never" | "OnFailure")) {
        return Err(invalid("a Job's restartPolicy must be Never or OnFailure"));
    }
    if let Some(sub) = &pod.subdomain
        && !names::is_rfc1123_label(sub)
    {
        return Err(invalid(format!(
            "subdomain \"{sub}\" is not an RFC 1123 label"
        )));
    }
    if pod.containers.is_empty() {
        return Err(invalid("the pod template has no container"));
    }
    for c in &pod.containers {
        if !names::is_rfc1123_label(&c.name) {
            return Err(invalid(format!(
                "container name \"{}\" is not an RFC 1123 label",
                c.name
            )));
        }
        let image = c.image.as_deref().unwrap_or_default();
        if image.is_empty() || image.chars().any(char::is_whitespace) {
            return Err(invalid(format!(
                "container image \"{image}\" is not an image reference"
            )));
        }
        for e in c.env.iter().flatten() {
            if !names::is_env_name(&e.name) {
                return Err(invalid(format!(
                    "environment variable \"{}\": use letters, digits, '_', '-' or '.', not starting with a digit",
                    e.name
                )));
            }
        }
        if let Some(r) = &c.resources {
            for (k, q) in r.requests.iter().chain(r.limits.iter()).flatten() {
                if !is_quantity(&q.0) {
                    return Err(invalid(format!(
                        "resource {k} = \"{}\" is not a quantity (e.g. 500m, 2, 8Gi)",
                        q.0
                    )));
                }
            }
        }
    }
    Ok(())
}

/// A Kubernetes quantity: a decimal number with an optional SI, binary or exponent suffix.
pub fn is_quantity(s: &str) -> bool {
    let digits_end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (number, suffix) = s.split_at(digits_end);
    let number_ok = !number.is_empty()
        && number.matches('.').count() <= 1
        && number.chars().any(|c| c.is_ascii_digit());
    let suffix_ok = matches!(
        suffix,
        "" | "m" | "k" | "M" | "G" | "T" | "P" | "E" | "Ki" | "Mi" | "Gi" | "Ti" | "Pi" | "Ei"
    ) || suffix.strip_prefix(['e', 'E']).is_some_and(|exp| {
        let exp = exp.strip_prefix(['+', '-']).unwrap_or(exp);
        !exp.is_empty() && exp.chars().all(|c| c.is_ascii_digit())
    });
    number_ok && suffix_ok
}
