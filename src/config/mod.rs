//! Gantry's configuration: a TOML file merged over the seed's defaults (the Pulumi program Gantry
//! grew from). Every section refuses unknown keys, so a typo is an error rather than a surprise.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

mod gpu;
mod guards;
mod notify;
mod recovery;
mod watcher;

pub use gpu::{ExporterSource, Gpu as GpuConfig};
pub use guards::{BUDGET_THRESHOLDS, BudgetAction, DEFAULT_GPU_IDLE_BELOW, Guards, StallAction};
pub use notify::{DEFAULT_RATE_LIMIT, NotifyTarget, TargetKind};
pub use recovery::{Recovery, SpotFallback};
pub use watcher::{Expose, Watcher};

/// The frame rates `max-fps` may ask for, from the flag or the file (`viewer::pacing` holds to
/// them too).
pub const MAX_FPS_LOWEST: u32 = 1;
pub const MAX_FPS_HIGHEST: u32 = 60;

pub const SEED_SCOPES: [&str; 4] = [
    "https://www.googleapis.com/auth/compute",
    "https://www.googleapis.com/auth/devstorage.read_only",
    "https://www.googleapis.com/auth/logging.write",
    "https://www.googleapis.com/auth/monitoring",
];

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct Config {
    /// Google Cloud project; falls back to the environment and gcloud's configuration.
    pub project: Option<String>,
    /// Zone (`us-central1-a`) or region (`us-central1`).
    pub location: Option<String>,
    /// Refuse every change to the cloud, as `--read-only` does (for monitoring setups).
    pub read_only: bool,
    /// Frames a second from new log lines alone (keys are answered at once); unset: 10 on a
    /// local terminal, 4 under SSH and in `gantry serve`.
    pub max_fps: Option<u32>,
    /// How long the cluster may run with no attempt before the status line says what that costs
    /// (`"30m"`, `"1h 30m"`, `"90s"`); unset: [`DEFAULT_IDLE_REMINDER`].
    pub idle_reminder: Option<String>,
    /// After the idle reminder, set the node pools to zero nodes (the cluster stays; a launch
    /// brings them back first). Never in read-only.
    pub scale_to_zero_when_idle: bool,
    pub cluster: ClusterConfig,
    pub job: JobConfig,
    /// What Gantry watches for while nobody looks, and what it may do (`[guards]`).
    #[serde(skip_serializing_if = "Guards::is_default")]
    pub guards: Guards,
    /// Where the GPUs' exporter is, when not one Gantry finds by itself (`[gpu]`).
    #[serde(skip_serializing_if = "GpuConfig::is_default")]
    pub gpu: GpuConfig,
    /// Key bindings: action name → key (e.g. `launch = "L"`).
    pub keys: BTreeMap<String, String>,
    /// Where people are told what happened (`[[notify]]`), each with its own events, least
    /// severity and rate limit.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notify: Vec<NotifyTarget>,
    /// Gantry itself in the cluster (`[watcher]`).
    #[serde(skip_serializing_if = "Watcher::is_default")]
    pub watcher: Watcher,
}

/// The idle reminder when the config names none.
pub const DEFAULT_IDLE_REMINDER: std::time::Duration = std::time::Duration::from_secs(30 * 60);

/// A duration as people write one: jiff's friendly format (`"30m"`, `"1h 30m"`, `"2s"`) or
/// ISO 8601 (`"PT30M"`); never negative.
pub(crate) fn parse_duration(text: &str) -> Option<std::time::Duration> {
    let signed: jiff::SignedDuration = text.trim().parse().ok()?;
    std::time::Duration::try_from(signed).ok()
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct ClusterConfig {
    pub name: String,
    pub node_pool: String,
    pub machine_type: String,
    /// Nodes per zone.
    pub node_count: u32,
    pub oauth_scopes: Vec<String>,
    /// RAPID, REGULAR, STABLE or EXTENDED; unset leaves GKE's default.
    pub release_channel: Option<String>,
    /// A fixed GKE version instead of a channel's.
    pub version: Option<String>,
    pub disk_size_gb: u32,
    /// pd-standard, pd-balanced or pd-ssd.
    pub disk_type: String,
    pub spot: bool,
    pub autoscaling: Option<Autoscaling>,
    pub labels: BTreeMap<String, String>,
    pub gpu_pool: Option<GpuPool>,
}

impl Default for ClusterConfig {
    fn default() -> Self {
        Self {
            name: "ml-gke-cluster".into(),
            node_pool: "default-pool".into(),
            machine_type: "n1-standard-1".into(),
            node_count: 3,
            oauth_scopes: SEED_SCOPES.iter().map(|s| s.to_string()).collect(),
            release_channel: None,
            version: None,
            disk_size_gb: 100,
            disk_type: "pd-balanced".into(),
            spot: false,
            autoscaling: None,
            labels: BTreeMap::new(),
            gpu_pool: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Autoscaling {
    pub min_nodes: u32,
    pub max_nodes: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct GpuPool {
    pub name: String,
    pub machine_type: String,
    pub node_count: u32,
    /// e.g. nvidia-tesla-t4, nvidia-l4.
    pub accelerator_type: String,
    pub accelerator_count: u32,
    /// DEFAULT, LATEST or INSTALLATION_DISABLED.
    pub gpu_driver: String,
    pub spot: bool,
    /// The cluster autoscaler's bounds, nodes per zone (`autoscaling = { min-nodes = 0,
    /// max-nodes = 2 }`): with `node-count = 0`, GPU nodes exist only while a pod asks for one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub autoscaling: Option<Autoscaling>,
}

impl Default for GpuPool {
    fn default() -> Self {
        Self {
            name: "gpu-pool".into(),
            machine_type: "n1-standard-4".into(),
            node_count: 1,
            accelerator_type: "nvidia-tesla-t4".into(),
            accelerator_count: 1,
            gpu_driver: "DEFAULT".into(),
            spot: false,
            autoscaling: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct JobConfig {
    pub name: String,
    pub namespace: String,
    pub container: String,
    /// Default: `gcr.io/<project>/ml-training-job:latest`.
    pub image: Option<String>,
    pub command: Vec<String>,
    pub args: Vec<String>,
    pub env: BTreeMap<String, String>,
    /// Labels of the pods; the seed's is `job=ml-training`.
    pub labels: BTreeMap<String, String>,
    /// `Never` (the seed's, when unset: a failed pod stays, with its logs, and the Job makes a new
    /// one) or `OnFailure` (the kubelet restarts the failed container in place).
    pub restart_policy: Option<String>,
    pub backoff_limit: u32,
    pub active_deadline_seconds: Option<u64>,
    pub ttl_seconds_after_finished: Option<u32>,
    pub resources: Resources,
    pub node_selector: BTreeMap<String, String>,
    pub tolerations: Vec<Toleration>,
    pub parallelism: Option<u32>,
    pub completions: Option<u32>,
    pub indexed: bool,
    /// With `indexed`: a headless Service and the launcher env (WORLD_SIZE, RANK, MASTER_ADDR…).
    pub distributed: Option<Distributed>,
    /// What the cloud does by itself when a pod ends badly (`[job.recovery]`).
    #[serde(skip_serializing_if = "Recovery::is_default")]
    pub recovery: Recovery,
    /// A `podFailurePolicy` as Kubernetes writes it, kept as written — from a `--job-manifest`
    /// file (or `gantry config`'s print of one): Gantry's own rules (from `recovery`) are used
    /// only when there is none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pod_failure_policy: Option<k8s_openapi::api::batch::v1::PodFailurePolicy>,
    /// A directory whose files go with each attempt and run on `image` (a public Python image
    /// when none is set), with `command`: no image to build (`src/code`). A relative path is
    /// the config file's directory's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<PathBuf>,
}

impl Default for JobConfig {
    fn default() -> Self {
        Self {
            name: "ml-training-job".into(),
            namespace: "default".into(),
            container: "ml-training-container".into(),
            image: None,
            command: Vec::new(),
            args: Vec::new(),
            env: BTreeMap::new(),
            labels: BTreeMap::from([("job".to_string(), "ml-training".to_string())]),
            restart_policy: None,
            backoff_limit: 2,
            active_deadline_seconds: None,
            ttl_seconds_after_finished: None,
            resources: Resources::default(),
            node_selector: BTreeMap::new(),
            tolerations: Vec::new(),
            parallelism: None,
            completions: None,
            indexed: false,
            distributed: None,
            recovery: Recovery::default(),
            pod_failure_policy: None,
            code: None,
        }
    }
}

impl JobConfig {
    /// The seed's image for a project.
    pub fn image_for(&self, project: &str) -> String {
        self.image
            .clone()
            .unwrap_or_else(|| format!("gcr.io/{project}/ml-training-job:latest"))
    }

    /// The label selector that finds the training pods (`job=ml-training`).
    pub fn selector(&self) -> String {
        self.labels
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(",")
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct Resources {
    pub cpu: Option<String>,
    pub memory: Option<String>,
    pub gpus: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Toleration {
    pub key: String,
    #[serde(default)]
    pub operator: Option<String>,
    #[serde(default)]
    pub value: Option<String>,
    #[serde(default)]
    pub effect: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct Distributed {
    pub master_port: u16,
    /// Name of the headless Service; default `<job>-workers`.
    pub service: Option<String>,
}

impl Default for Distributed {
    fn default() -> Self {
        Self {
            master_port: 29500,
            service: None,
        }
    }
}

/// A configuration file that could not be used, saying where and why.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Invalid { path: PathBuf, message: String },
}

impl Config {
    /// Reads a TOML file over the seed's defaults.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Self::parse_in(&text, path.parent()).map_err(|message| ConfigError::Invalid {
            path: path.to_path_buf(),
            message,
        })
    }

    /// Parses TOML text; the error names the line, column and key. A relative `url-file` is
    /// the working directory's.
    pub fn parse(text: &str) -> Result<Self, String> {
        Self::parse_in(text, None)
    }

    /// Parses the text of a config file in `dir` (where a relative `url-file` is), reading
    /// every `url-file`.
    fn parse_in(text: &str, dir: Option<&Path>) -> Result<Self, String> {
        let mut config: Config = toml::from_str(text).map_err(|e| describe_toml_error(text, &e))?;
        notify::load(&mut config.notify, dir)?;
        if let (Some(code), Some(dir)) = (config.job.code.as_mut(), dir)
            && code.is_relative()
        {
            *code = dir.join(&*code);
        }
        config.validate()?;
        Ok(config)
    }

    /// A config carried into the cluster (`watcher::carried`): its relative `url-file`s are
    /// files of `dir` (its Secret's), read now; then checked as a file's would be.
    pub fn with_files_in(mut self, dir: &Path) -> Result<Self, String> {
        notify::load(&mut self.notify, Some(dir))?;
        self.validate()?;
        Ok(self)
    }

    /// The default file: `$XDG_CONFIG_HOME/gantry/config.toml` (or `~/.config/...`).
    pub fn default_path() -> Option<PathBuf> {
        crate::paths::config_dir().map(|dir| dir.join("config.toml"))
    }

    /// Whether Gantry may set the node pools to zero nodes by itself: when idle, or when a run's
    /// budget is spent (`[guards] budget-action = "scale-to-zero"`). Pools at zero are then not
    /// drift, and a launch brings them back first.
    pub fn may_scale_to_zero(&self) -> bool {
        self.scale_to_zero_when_idle || self.guards.budget_action == BudgetAction::ScaleToZero
    }

    /// How long the cluster may idle before the reminder (validated when the config is read).
    pub fn idle_reminder(&self) -> std::time::Duration {
        self.idle_reminder
            .as_deref()
            .and_then(parse_duration)
            .unwrap_or(DEFAULT_IDLE_REMINDER)
    }

    pub fn validate(&self) -> Result<(), String> {
        self.guards.validate()?;
        self.gpu.validate()?;
        self.watcher.validate()?;
        if let Some(text) = &self.idle_reminder
            && parse_duration(text).is_none()
        {
            return Err(format!(
                "idle-reminder = \"{text}\": write a duration such as \"30m\", \"1h 30m\" or \"90s\""
            ));
        }
        if let Some(fps) = self.max_fps
            && !(MAX_FPS_LOWEST..=MAX_FPS_HIGHEST).contains(&fps)
        {
            return Err(format!(
                "max-fps = {fps}: frames a second go from {MAX_FPS_LOWEST} to {MAX_FPS_HIGHEST} (keys are answered at once whatever it says)"
            ));
        }
        let c = &self.cluster;
        if !valid_gke_name(&c.name) {
            return Err(format!(
                "cluster.name = \"{}\": a GKE cluster name has 1 to 40 lower-case letters, digits or '-', starts with a letter and does not end with '-'",
                c.name
            ));
        }
        if c.node_count == 0 {
            return Err("cluster.node-count = 0: a cluster needs at least one node".into());
        }
        if let Some(a) = &c.autoscaling
            && a.min_nodes > a.max_nodes
        {
            return Err(format!(
                "cluster.autoscaling: min-nodes ({}) is above max-nodes ({})",
                a.min_nodes, a.max_nodes
            ));
        }
        if let Some(a) = c.gpu_pool.as_ref().and_then(|g| g.autoscaling.as_ref())
            && a.min_nodes > a.max_nodes
        {
            return Err(format!(
                "cluster.gpu-pool.autoscaling: min-nodes ({}) is above max-nodes ({})",
                a.min_nodes, a.max_nodes
            ));
        }
        let j = &self.job;
        if !crate::names::is_rfc1123_subdomain(&j.name) || j.name.len() > 63 {
            return Err(format!(
                "job.name = \"{}\": use lower-case letters, digits and '-' (RFC 1123), at most 63 characters",
                j.name
            ));
        }
        if !crate::names::is_rfc1123_label(&j.namespace) {
            return Err(format!(
                "job.namespace = \"{}\": not a valid namespace name (RFC 1123 label)",
                j.namespace
            ));
        }
        if !crate::names::is_rfc1123_label(&j.container) {
            return Err(format!(
                "job.container = \"{}\": not a valid container name (RFC 1123 label)",
                j.container
            ));
        }
        if let Some(policy) = &j.restart_policy
            && !matches!(policy.as_str(), "Never" | "OnFailure")
        {
            return Err(format!(
                "job.restart-policy = \"{policy}\": a Job's pods restart \"Never\" or \"OnFailure\""
            ));
        }
        use crate::names::{is_label_key, is_label_value};
        for (what, pairs) in [("labels", &j.labels), ("node-selector", &j.node_selector)] {
            for (key, value) in pairs {
                if !is_label_key(key) {
                    return Err(format!(
                        "job.{what}: key \"{key}\": use at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit, optionally after a DNS prefix and '/' (example.com/team)"
                    ));
                }
                if !is_label_value(value) {
                    return Err(format!(
                        "job.{what}: {key} = \"{value}\": a value is empty or at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit"
                    ));
                }
            }
        }
        j.recovery.validate()?;
        if let Some(refused) = j
            .env
            .keys()
            .find_map(|k| crate::names::reserved_env(k, "job.env"))
        {
            return Err(refused);
        }
        if j.restart_policy.as_deref() == Some("OnFailure") && j.pod_failure_policy.is_some() {
            return Err(
                "job.pod-failure-policy needs job.restart-policy = \"Never\" (the API server refuses it with OnFailure)".into(),
            );
        }
        if j.restart_policy.as_deref() == Some("OnFailure")
            && !j.recovery.fail_exit_codes.is_empty()
        {
            return Err(
                "job.recovery.fail-exit-codes needs job.restart-policy = \"Never\": Kubernetes applies a podFailurePolicy only to pods that are not restarted in place".into(),
            );
        }
        if j.indexed && j.completions.is_none() {
            return Err("job.indexed = true needs job.completions (the number of workers)".into());
        }
        crate::keys::Keymap::with_overrides(&self.keys)?;
        notify::check(&self.notify)?;
        Ok(())
    }
}

fn valid_gke_name(name: &str) -> bool {
    let b = name.as_bytes();
    !b.is_empty()
        && b.len() <= 40
        && b[0].is_ascii_lowercase()
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b.last() != Some(&b'-')
}

fn describe_toml_error(text: &str, e: &toml::de::Error) -> String {
    match e.span() {
        Some(span) => {
            let before = &text[..span.start.min(text.len())];
            let line = before.matches('\n').count() + 1;
            let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
            format!("line {line}, column {column}: {}", e.message())
        }
        None => e.message().to_string(),
    }
}

#[cfg(test)]
mod tests;
