//! A Job, as Kubernetes' types read it, turned into the `[job]` section, keeping what the
//! manifest means to the API server. What the section cannot say the same way is refused by its
//! field path, with what to write instead.

use std::collections::BTreeMap;

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Container, EnvVarSource};

use super::fields::PLAIN_ENV;
use crate::config::{Distributed, JobConfig, Resources, Toleration};
use crate::k8s::labels::{COMPLETION_INDEX, MANAGED_BY, POD_JOB_NAME_LABEL};
use crate::k8s::manifest::GPU_RESOURCE;

/// What the API server gives a Job that does not say (Gantry's own default is 2).
const KUBERNETES_BACKOFF_LIMIT: u32 = 6;
const CONTAINER_AT: &str = "spec.template.spec.containers[0]";

pub(super) fn job_config(job: &Job) -> Result<JobConfig, String> {
    let defaults = JobConfig::default();
    let meta = &job.metadata;
    let name = meta.name.clone().filter(|n| !n.is_empty()).ok_or(
        "metadata.name: missing: Gantry names the attempts <name>, <name>-2, ... after it",
    )?;
    let spec = job
        .spec
        .as_ref()
        .ok_or("spec: missing: a Job needs a pod template")?;
    let pod = spec
        .template
        .spec
        .as_ref()
        .ok_or("spec.template.spec: missing: a Job needs a pod template")?;

    let labels = spec
        .template
        .metadata
        .as_ref()
        .and_then(|m| m.labels.clone())
        .unwrap_or_default();
    for key in labels.keys() {
        not_reserved("spec.template.metadata.labels", key)?;
    }
    for (key, value) in meta.labels.iter().flatten() {
        not_reserved("metadata.labels", key)?;
        if labels.get(key) != Some(value) {
            return Err(format!(
                "metadata.labels.{key}: Gantry puts the same labels on the Job and on its pods: add {key}: {value} to spec.template.metadata.labels too, or remove it"
            ));
        }
    }

    let container = match pod.containers.as_slice() {
        [c] => c,
        [] => return Err("spec.template.spec.containers: a Job needs a container".into()),
        _ => {
            return Err(
                "spec.template.spec.containers[1]: Gantry runs one training container in each pod: remove the others".into(),
            );
        }
    };
    let image = container
        .image
        .clone()
        .filter(|i| !i.is_empty())
        .ok_or_else(|| format!("{CONTAINER_AT}.image: missing: the container needs an image"))?;
    let restart_policy = match pod.restart_policy.as_deref() {
        // Gantry's own, written as no key at all.
        Some("Never") => None,
        Some("OnFailure") => Some("OnFailure".to_string()),
        Some(other) => {
            return Err(format!(
                "spec.template.spec.restartPolicy: {other}: a Job's pods restart Never or OnFailure"
            ));
        }
        None => {
            return Err(
                "spec.template.spec.restartPolicy: missing: a Job must say Never or OnFailure (the API server refuses it too)".into(),
            );
        }
    };
    let indexed = match spec.completion_mode.as_deref() {
        None | Some("NonIndexed") => false,
        Some("Indexed") => true,
        Some(other) => {
            return Err(format!(
                "spec.completionMode: {other}: a Job's completion mode is NonIndexed or Indexed"
            ));
        }
    };
    let completions = count("spec.completions", spec.completions)?;
    if indexed && completions.is_none() {
        return Err(
            "spec.completions: missing: an Indexed Job needs completions (the number of workers)"
                .into(),
        );
    }
    // Kubernetes runs one pod at a time when parallelism is not given; Gantry, for an indexed
    // [job], would run every worker at once. Say the manifest's.
    let parallelism = count("spec.parallelism", spec.parallelism)?.or(indexed.then_some(1));
    let service = pod.subdomain.clone().filter(|s| !s.is_empty());
    if service.is_some() && !indexed {
        return Err(
            "spec.template.spec.subdomain: Gantry gives pods a subdomain (its headless Service) only in an Indexed Job: remove it, or set spec.completionMode: Indexed".into(),
        );
    }

    let env = env(container, indexed)?;
    let default_port = Distributed::default().master_port;
    let master_port = env.get("MASTER_PORT").and_then(|p| p.parse::<u16>().ok());
    let distributed = (indexed && (service.is_some() || master_port.is_some()))
        .then(|| Distributed {
            master_port: master_port.unwrap_or(default_port),
            service,
        })
        .filter(|d| d.service.is_some() || d.master_port != default_port);

    Ok(JobConfig {
        name,
        namespace: meta.namespace.clone().unwrap_or(defaults.namespace),
        container: container.name.clone(),
        image: Some(image),
        command: container.command.clone().unwrap_or_default(),
        args: container.args.clone().unwrap_or_default(),
        env,
        labels,
        restart_policy,
        backoff_limit: count("spec.backoffLimit", spec.backoff_limit)?
            .unwrap_or(KUBERNETES_BACKOFF_LIMIT),
        active_deadline_seconds: spec
            .active_deadline_seconds
            .map(|n| {
                u64::try_from(n)
                    .map_err(|_| format!("spec.activeDeadlineSeconds: {n}: must not be negative"))
            })
            .transpose()?,
        ttl_seconds_after_finished: count(
            "spec.ttlSecondsAfterFinished",
            spec.ttl_seconds_after_finished,
        )?,
        resources: resources(container)?,
        node_selector: pod.node_selector.clone().unwrap_or_default(),
        tolerations: pod
            .tolerations
            .iter()
            .flatten()
            .map(|t| Toleration {
                key: t.key.clone().unwrap_or_default(),
                operator: t.operator.clone(),
                value: t.value.clone(),
                effect: t.effect.clone(),
            })
            .collect(),
        parallelism,
        completions,
        indexed,
        distributed,
        recovery: Default::default(),
        pod_failure_policy: spec.pod_failure_policy.clone().map(with_defaults),
        code: None,
    })
}

/// A policy as the API server stores it: a pod condition's `status` left out is `True`. (The
/// typed field cannot be absent, and the API server refuses the empty string it would send.)
fn with_defaults(
    mut policy: k8s_openapi::api::batch::v1::PodFailurePolicy,
) -> k8s_openapi::api::batch::v1::PodFailurePolicy {
    for rule in &mut policy.rules {
        for condition in rule.on_pod_conditions.iter_mut().flatten() {
            if condition.status.is_empty() {
                condition.status = "True".into();
            }
        }
    }
    policy
}

fn count(field: &str, n: Option<i32>) -> Result<Option<u32>, String> {
    n.map(|n| u32::try_from(n).map_err(|_| format!("{field}: {n}: must not be negative")))
        .transpose()
}

/// Labels Gantry or the Job controller set, which a manifest must leave to them.
fn not_reserved(at: &str, key: &str) -> Result<(), String> {
    let reserved = key == MANAGED_BY
        || key == POD_JOB_NAME_LABEL
        || key == "controller-uid"
        || key.starts_with("gantry.dev/")
        || key.starts_with("batch.kubernetes.io/");
    if reserved {
        return Err(format!(
            "{at}.{key}: Gantry and the Job controller set this label themselves: remove it"
        ));
    }
    Ok(())
}

/// The container's environment as plain values. Gantry writes the variables in name order, so
/// a `$(NAME)` reference must expand (or not) in that order as it did in the manifest's.
fn env(container: &Container, indexed: bool) -> Result<BTreeMap<String, String>, String> {
    let mut env = BTreeMap::new();
    let mut order: Vec<&str> = Vec::new();
    for (i, var) in container.env.iter().flatten().enumerate() {
        let at = format!("{CONTAINER_AT}.env[{i}]");
        if let Some(from) = &var.value_from {
            // The launcher Gantry adds to an Indexed Job sets RANK exactly so.
            if indexed && var.name == "RANK" && var.value.is_none() && is_rank(from) {
                continue;
            }
            return Err(format!("{at}.valueFrom ({}): {PLAIN_ENV}", var.name));
        }
        let value = var.value.clone().unwrap_or_default();
        if env.insert(var.name.clone(), value).is_some() {
            return Err(format!("{at}: {} is set twice", var.name));
        }
        order.push(&var.name);
    }
    for (i, name) in order.iter().enumerate() {
        let value = env.get(*name).map(String::as_str).unwrap_or_default();
        for target in references(value) {
            let Some(defined_at) = order.iter().position(|n| *n == target) else {
                continue;
            };
            let in_manifest = defined_at < i;
            let in_gantry = target < *name;
            if in_manifest != in_gantry {
                return Err(format!(
                    "{CONTAINER_AT}.env[{i}] ({name}): its $({target}) would {} expanded once Gantry writes the variables in name order: rename one of them, or write the value out",
                    if in_gantry { "be" } else { "no longer be" }
                ));
            }
        }
    }
    Ok(env)
}

fn is_rank(from: &EnvVarSource) -> bool {
    let Some(field) = &from.field_ref else {
        return false;
    };
    let annotation = format!("metadata.annotations['{COMPLETION_INDEX}']");
    let label = format!("metadata.labels['{COMPLETION_INDEX}']");
    from.config_map_key_ref.is_none()
        && from.secret_key_ref.is_none()
        && from.resource_field_ref.is_none()
        && field.api_version.as_deref().is_none_or(|v| v == "v1")
        && (field.field_path == annotation || field.field_path == label)
}

/// The `$(NAME)` references of a value (`$$(NAME)` is an escaped, literal one).
fn references(value: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = value;
    while let Some(i) = rest.find('$') {
        let after = &rest[i + 1..];
        if let Some(stripped) = after.strip_prefix('$') {
            rest = stripped;
        } else if let Some(inner) = after.strip_prefix('(')
            && let Some(end) = inner.find(')')
        {
            out.push(&inner[..end]);
            rest = &inner[end + 1..];
        } else {
            rest = after;
        }
    }
    out
}

/// `cpu` and `memory` requests, the memory limit and GPUs: what `[job.resources]` says.
fn resources(container: &Container) -> Result<Resources, String> {
    let Some(r) = &container.resources else {
        return Ok(Resources::default());
    };
    let at = format!("{CONTAINER_AT}.resources");
    let requests = r.requests.clone().unwrap_or_default();
    let limits = r.limits.clone().unwrap_or_default();
    for key in requests.keys() {
        if !matches!(key.as_str(), "cpu" | "memory" | GPU_RESOURCE) {
            return Err(format!(
                "{at}.requests.{key}: Gantry's [job.resources] has cpu, memory and {GPU_RESOURCE} only: remove it"
            ));
        }
    }
    for key in limits.keys() {
        match key.as_str() {
            "memory" | GPU_RESOURCE => {}
            "cpu" => {
                return Err(format!(
                    "{at}.limits.cpu: Gantry asks for CPU by request, with no limit: remove the limit (keep requests.cpu)"
                ));
            }
            _ => {
                return Err(format!(
                    "{at}.limits.{key}: Gantry's [job.resources] limits memory and {GPU_RESOURCE} only: remove it"
                ));
            }
        }
    }
    let memory = match (requests.get("memory"), limits.get("memory")) {
        (None, None) => None,
        // The API server makes the request the limit when only the limit is given.
        (None, Some(l)) => Some(l.0.clone()),
        (Some(r), Some(l)) if r == l => Some(l.0.clone()),
        (Some(r), None) => {
            return Err(format!(
                "{at}.requests.memory: Gantry makes the memory request the limit too: add limits.memory: {}",
                r.0
            ));
        }
        (Some(r), Some(l)) => {
            return Err(format!(
                "{at}.limits.memory: Gantry makes the memory request the limit too: give both the same value (not {} and {})",
                r.0, l.0
            ));
        }
    };
    let gpus = match (requests.get(GPU_RESOURCE), limits.get(GPU_RESOURCE)) {
        (None, None) => None,
        (Some(_), None) => {
            return Err(format!(
                "{at}.limits.{GPU_RESOURCE}: missing: GPUs are asked for by their limit (the API server refuses a request alone)"
            ));
        }
        (Some(r), Some(l)) if r != l => {
            return Err(format!(
                "{at}.requests.{GPU_RESOURCE}: {} differs from the limit {}: give the limit alone",
                r.0, l.0
            ));
        }
        (_, Some(l)) => Some(l.0.parse::<u32>().map_err(|_| {
            format!(
                "{at}.limits.{GPU_RESOURCE}: {}: a whole number of GPUs",
                l.0
            )
        })?),
    };
    Ok(Resources {
        cpu: requests.get("cpu").map(|q| q.0.clone()),
        memory,
        gpus,
    })
}

#[cfg(test)]
mod tests {
    use super::references;

    #[test]
    fn references_skip_escapes() {
        assert_eq!(references("$(A)/x/$(B_2)"), ["A", "B_2"]);
        assert_eq!(references("$$(A) $(B"), Vec::<&str>::new());
        assert_eq!(references("$$$(C)"), ["C"]);
        assert_eq!(references("cost: $5"), Vec::<&str>::new());
    }
}
