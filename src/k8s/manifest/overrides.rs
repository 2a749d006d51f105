//! Overrides: `gantry launch` flags folded into the configured Job, and the next attempt of a
//! retry (the previous attempt's spec under a new name, with `--image`, `--env`, `--memory` and
//! `--cpu` applied to its container).

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Container, EnvVar};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

use super::labels::{self, ATTEMPT_LABEL, JOB_LABEL, MANAGED_BY, MANAGER};
use super::{MASTER_ADDR, ManifestError, invalid, validate};
use crate::config::JobConfig;

/// Changes to the training container, for a launch (folded into the config) or a retry
/// (applied to the previous attempt's container).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Overrides {
    pub image: Option<String>,
    /// Environment variables set (added, or replacing the value of one of that name).
    pub env: Vec<(String, String)>,
    /// Memory request and limit.
    pub memory: Option<String>,
    /// CPU request.
    pub cpu: Option<String>,
}

/// The flags of a launch: `gantry launch`'s, and the TUI's for its launches.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LaunchFlags {
    pub overrides: Overrides,
    pub parallelism: Option<u32>,
    pub completions: Option<u32>,
    pub indexed: bool,
    /// `--code DIR`: the directory whose files go with the attempt.
    pub code: Option<std::path::PathBuf>,
    /// `gantry launch … -- CMD…`: the container's command, in place of the configured command
    /// and args.
    pub command: Vec<String>,
}

impl LaunchFlags {
    /// Folds them into the configured Job.
    pub fn apply(&self, cfg: &mut JobConfig) {
        apply_launch_flags(
            cfg,
            &self.overrides,
            self.parallelism,
            self.completions,
            self.indexed,
        );
        if let Some(code) = &self.code {
            cfg.code = Some(code.clone());
        }
        if !self.command.is_empty() {
            cfg.command = self.command.clone();
            cfg.args.clear();
        }
    }
}

/// Folds `gantry launch` flags into the configured Job.
pub fn apply_launch_flags(
    cfg: &mut JobConfig,
    overrides: &Overrides,
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

/// The next attempt's Job: the previous attempt's spec under a new name, with overrides.
pub fn next_attempt(
    previous: &Job,
    base: &str,
    attempt: u32,
    overrides: &Overrides,
) -> Result<Job, ManifestError> {
    let name = labels::attempt_name(base, attempt);
    let mut spec = previous
        .spec
        .clone()
        .ok_or_else(|| invalid("the previous attempt has no spec"))?;
    // Fields the API server and Job controller filled in for the old Job.
    spec.selector = None;
    spec.manual_selector = None;
    // The new attempt runs, though the one it follows was suspended (a run Gantry ended, an
    // attempt a recovery replaced, one still waiting for its code).
    spec.suspend = None;
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

fn apply_overrides(container: &mut Container, o: &Overrides) {
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
