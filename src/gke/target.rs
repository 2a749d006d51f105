//! Which cluster Gantry works on: project and location from the flags, then the config file, then
//! the environment, then the active gcloud configuration; the name from the config.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::GkeError;
use crate::config::Config;

/// A cluster's full identity, and the resource names the Container API wants for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterRef {
    pub project: String,
    /// A zone (`us-central1-a`) or a region (`us-central1`).
    pub location: String,
    pub name: String,
}

impl ClusterRef {
    pub fn new(
        project: impl Into<String>,
        location: impl Into<String>,
        name: impl Into<String>,
    ) -> Self {
        Self {
            project: project.into(),
            location: location.into(),
            name: name.into(),
        }
    }

    /// `projects/P/locations/L`: where clusters are created and operations listed.
    pub fn parent(&self) -> String {
        format!("projects/{}/locations/{}", self.project, self.location)
    }

    /// `projects/P/locations/L/clusters/C`.
    pub fn resource_name(&self) -> String {
        format!("{}/clusters/{}", self.parent(), self.name)
    }

    /// `projects/P/locations/L/operations/OP` for an operation's short name.
    pub fn operation_name(&self, operation: &str) -> String {
        if operation.starts_with("projects/") {
            operation.to_string()
        } else {
            format!("{}/operations/{operation}", self.parent())
        }
    }

    /// The kubeconfig context name gcloud gives this cluster.
    pub fn context_name(&self) -> String {
        format!("gke_{}_{}_{}", self.project, self.location, self.name)
    }
}

impl std::fmt::Display for ClusterRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}/{})", self.name, self.project, self.location)
    }
}

/// The project and location the operator named on the command line (`--project`,
/// `--location`), before the config file and the environment are asked.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Named {
    pub project: Option<String>,
    pub location: Option<String>,
}

/// Resolves the cluster from the flags, the config, this process's environment and gcloud's
/// configuration directory.
pub fn resolve(named: &Named, config: &Config) -> Result<ClusterRef, GkeError> {
    resolve_with(
        named,
        config,
        |k| std::env::var(k).ok(),
        gcloud_dir().as_deref(),
    )
}

/// The project and location the operator named, if any: the flag, then the config file.
pub fn named_place(named: &Named, config: &Config) -> (Option<String>, Option<String>) {
    (
        named.project.clone().or_else(|| config.project.clone()),
        named.location.clone().or_else(|| config.location.clone()),
    )
}

/// The Google Cloud project, when one can be found (the flag, the config file,
/// `GOOGLE_CLOUD_PROJECT`, `CLOUDSDK_CORE_PROJECT`, gcloud's `core/project`): what a Job's
/// default image needs, where no cluster location is.
pub fn project(named: &Named, config: &Config) -> Option<String> {
    let env = |k: &str| std::env::var(k).ok();
    Lookup::new(env, gcloud_dir().as_deref()).project(named, config)
}

/// The environment and gcloud's active configuration, trimmed, empty values as absent.
struct Lookup<E> {
    env: E,
    gcloud: GcloudConfig,
}

impl<E: Fn(&str) -> Option<String>> Lookup<E> {
    fn new(env: E, gcloud: Option<&Path>) -> Self {
        let trimmed = |k: &str| {
            env(k)
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        let gcloud = gcloud
            .map(|dir| GcloudConfig::active(dir, trimmed))
            .unwrap_or_default();
        Self { env, gcloud }
    }

    fn env(&self, key: &str) -> Option<String> {
        (self.env)(key)
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    }

    fn project(&self, named: &Named, config: &Config) -> Option<String> {
        named_place(named, config)
            .0
            .map(|p| p.trim().to_string())
            .filter(|p| !p.is_empty())
            .or_else(|| self.env("GOOGLE_CLOUD_PROJECT"))
            .or_else(|| self.env("CLOUDSDK_CORE_PROJECT"))
            .or_else(|| self.gcloud.get("core", "project"))
    }

    fn location(&self, named: &Named, config: &Config) -> Option<String> {
        named_place(named, config)
            .1
            .map(|l| l.trim().to_string())
            .filter(|l| !l.is_empty())
            .or_else(|| self.env("CLOUDSDK_COMPUTE_ZONE"))
            .or_else(|| self.gcloud.get("compute", "zone"))
            .or_else(|| self.env("CLOUDSDK_COMPUTE_REGION"))
            .or_else(|| self.gcloud.get("compute", "region"))
    }
}

/// [`resolve`] with the environment and gcloud's directory given, for tests.
pub fn resolve_with(
    named: &Named,
    config: &Config,
    env: impl Fn(&str) -> Option<String>,
    gcloud: Option<&Path>,
) -> Result<ClusterRef, GkeError> {
    let lookup = Lookup::new(env, gcloud);
    let project = lookup.project(named, config).ok_or_else(|| {
        GkeError::BadInput(
            "no Google Cloud project: pass --project PROJECT, set `project` in the config file \
                 or GOOGLE_CLOUD_PROJECT, or run `gcloud config set project PROJECT`"
                .into(),
        )
    })?;
    let location = lookup.location(named, config).ok_or_else(|| {
        GkeError::BadInput(
            "no location for the cluster: pass --location ZONE_OR_REGION (e.g. us-central1-a), \
                 set `location` in the config file, or run `gcloud config set compute/zone ZONE`"
                .into(),
        )
    })?;
    check_id("project", "--project", &project)?;
    check_id("location", "--location", &location)?;
    Ok(ClusterRef::new(
        project,
        location,
        config.cluster.name.clone(),
    ))
}

fn check_id(what: &str, flag: &str, value: &str) -> Result<(), GkeError> {
    let ok = !value.is_empty()
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | ':' | '_'));
    if ok {
        Ok(())
    } else {
        Err(GkeError::BadInput(format!(
            "'{value}' is not a {what}: give {flag} with letters, digits and '-'"
        )))
    }
}

/// gcloud's configuration directory: `$CLOUDSDK_CONFIG`, else `~/.config/gcloud`.
pub fn gcloud_dir() -> Option<PathBuf> {
    std::env::var_os("CLOUDSDK_CONFIG")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config/gcloud")))
}

/// The properties of gcloud's active configuration (`configurations/config_<active>`, INI).
#[derive(Debug, Default)]
pub struct GcloudConfig {
    sections: BTreeMap<String, BTreeMap<String, String>>,
}

impl GcloudConfig {
    /// The active configuration: `$CLOUDSDK_ACTIVE_CONFIG_NAME`, else the `active_config` file,
    /// else `default`. A missing or unreadable file is an empty configuration.
    pub fn active(dir: &Path, env: impl Fn(&str) -> Option<String>) -> Self {
        let name = env("CLOUDSDK_ACTIVE_CONFIG_NAME")
            .or_else(|| {
                std::fs::read_to_string(dir.join("active_config"))
                    .ok()
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
            })
            .unwrap_or_else(|| "default".into());
        if name.contains(['/', '\\']) {
            return Self::default();
        }
        std::fs::read_to_string(dir.join("configurations").join(format!("config_{name}")))
            .map(|text| Self::parse(&text))
            .unwrap_or_default()
    }

    pub fn parse(text: &str) -> Self {
        let mut sections: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
        let mut section = String::new();
        for line in text.lines().map(str::trim) {
            if line.is_empty() || line.starts_with(['#', ';']) {
                continue;
            }
            if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
                section = name.trim().to_string();
            } else if let Some((k, v)) = line.split_once('=') {
                sections
                    .entry(section.clone())
                    .or_default()
                    .insert(k.trim().to_string(), v.trim().to_string());
            }
        }
        Self { sections }
    }

    pub fn get(&self, section: &str, key: &str) -> Option<String> {
        self.sections
            .get(section)?
            .get(key)
            .filter(|v| !v.is_empty())
            .cloned()
    }
}

/// The kubeconfig context name gcloud gives a GKE cluster.
pub fn context_name(project: &str, location: &str, name: &str) -> String {
    format!("gke_{project}_{location}_{name}")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    fn gcloud(active: &str, body: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("configurations")).unwrap();
        std::fs::write(dir.path().join("active_config"), active).unwrap();
        std::fs::write(
            dir.path()
                .join("configurations")
                .join(format!("config_{active}")),
            body,
        )
        .unwrap();
        dir
    }

    #[test]
    fn flags_win_then_config_then_env_then_gcloud() {
        let dir = gcloud(
            "work",
            "[core]\naccount = a@b.c\nproject = from-gcloud\n\n[compute]\nzone = europe-west4-a\n",
        );
        let config = Config::default();
        let none = Named::default();
        let r = resolve_with(&none, &config, env(&[]), Some(dir.path())).unwrap();
        assert_eq!(
            (r.project.as_str(), r.location.as_str(), r.name.as_str()),
            ("from-gcloud", "europe-west4-a", "ml-gke-cluster")
        );
        let r = resolve_with(
            &none,
            &config,
            env(&[
                ("CLOUDSDK_CORE_PROJECT", "from-sdk"),
                ("GOOGLE_CLOUD_PROJECT", "from-env"),
            ]),
            Some(dir.path()),
        )
        .unwrap();
        assert_eq!(r.project, "from-env");
        let config = Config {
            project: Some("from-config".into()),
            location: Some("us-east1".into()),
            ..Config::default()
        };
        let r = resolve_with(
            &none,
            &config,
            env(&[("GOOGLE_CLOUD_PROJECT", "from-env")]),
            Some(dir.path()),
        )
        .unwrap();
        assert_eq!(
            (r.project.as_str(), r.location.as_str()),
            ("from-config", "us-east1")
        );
        let flags = Named {
            project: Some("from-flag".into()),
            location: Some("us-central1-a".into()),
        };
        let r = resolve_with(&flags, &config, env(&[]), Some(dir.path())).unwrap();
        assert_eq!(
            r.resource_name(),
            "projects/from-flag/locations/us-central1-a/clusters/ml-gke-cluster"
        );
    }

    #[test]
    fn missing_project_or_location_names_the_fix() {
        let empty = tempfile::tempdir().unwrap();
        let e = resolve_with(
            &Named::default(),
            &Config::default(),
            env(&[]),
            Some(empty.path()),
        )
        .unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("--project"), "{e}");
        let e = resolve_with(
            &Named::default(),
            &Config::default(),
            env(&[("GOOGLE_CLOUD_PROJECT", "p")]),
            None,
        )
        .unwrap_err();
        assert!(e.to_string().contains("--location"), "{e}");
        let bad = Named {
            project: Some("a b".into()),
            location: Some("z".into()),
        };
        assert!(resolve_with(&bad, &Config::default(), env(&[]), None).is_err());
    }

    #[test]
    fn active_config_name_from_env() {
        let dir = gcloud("other", "[core]\nproject = other-project\n");
        let g = GcloudConfig::active(dir.path(), env(&[("CLOUDSDK_ACTIVE_CONFIG_NAME", "nope")]));
        assert_eq!(g.get("core", "project"), None);
        let g = GcloudConfig::active(dir.path(), env(&[]));
        assert_eq!(g.get("core", "project").as_deref(), Some("other-project"));
    }
}
