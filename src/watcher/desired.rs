//! The watcher the config asks for, said once for every place that makes or shows it:
//! `gantry watcher install`, `gantry up`, the overlay's `y`, and the plans that say whether the
//! one in the cluster is it. Its fingerprint is of everything the config decides (the
//! Deployment, the carried settings and secrets, the SSH keys that may connect, the Gantry that
//! runs it) and of nothing the install keeps by itself (the SSH host key): a plan computes it
//! without reading the watcher's Secret, and `install` writes it on the Deployment
//! ([`super::DESIRED_ANNOTATION`]).

use std::path::{Path, PathBuf};

use super::carried;
use super::objects::Plan;
use crate::config::Config;

/// The watcher to make, and the keys it is given.
#[derive(Debug, Clone, PartialEq)]
pub struct Desired {
    pub plan: Plan,
    pub keys: Keys,
}

impl Desired {
    /// The watcher of `config` (resolved: its project and location set) running `image`,
    /// reaching GKE at `gke_endpoint` when it is not Google's. An SSH key file that cannot be
    /// read is an error naming it.
    pub fn of(
        config: &Config,
        image: &str,
        gke_endpoint: Option<String>,
    ) -> Result<Desired, String> {
        let w = &config.watcher;
        let authorized = w
            .authorized_keys
            .clone()
            .or_else(|| default_keys("authorized_keys"));
        let operators = w.operators.clone().or_else(|| default_keys("operators"));
        let keys = read_keys(authorized.as_deref(), operators.as_deref())
            .map_err(|e| format!("the watcher's SSH keys: {e}"))?;
        let mut plan = Plan::of(config, image, carried::carry(config));
        // Said one way wherever it comes from (a flag, a client's): Google's is no endpoint.
        plan.gke_endpoint = gke_endpoint
            .map(|e| e.trim_end_matches('/').to_string())
            .filter(|e| e != crate::gke::DEFAULT_ENDPOINT);
        Ok(Desired { plan, keys })
    }

    /// The config's watcher with its own image, or None when the config does not put it in the
    /// cluster (`[watcher] in-cluster`; the config refuses it without an image).
    pub fn in_cluster(
        config: &Config,
        gke_endpoint: Option<String>,
    ) -> Option<Result<Desired, String>> {
        let image = config
            .watcher
            .image
            .as_deref()
            .filter(|_| config.watcher.in_cluster)?;
        Some(Desired::of(config, image, gke_endpoint))
    }

    /// Eight hex digits of everything the config decides of the watcher.
    pub fn fingerprint(&self) -> String {
        fingerprint(&self.plan, &self.keys)
    }
}

/// What [`Desired::fingerprint`] says, of a plan before `install` adds the SSH files to it.
pub(super) fn fingerprint(plan: &Plan, keys: &Keys) -> String {
    let deployment = serde_json::to_string(&plan.deployment()).unwrap_or_default();
    let mut text = [
        deployment.as_str(),
        &plan.document,
        plan.google_service_account.as_deref().unwrap_or_default(),
        &format!("{:?}", plan.expose),
        &plan.source_ranges.join(","),
        &keys.authorized,
        &keys.operators,
        super::VERSION,
    ]
    .join("\0");
    for (file, value) in &plan.secrets {
        text.push_str(&format!("\0{file}\0{value}"));
    }
    // 32 bits: enough to tell a change, too few to say anything of a secret.
    format!("{:08x}", super::fnv(text.as_bytes()) as u32)
}

/// The keys that may watch and act over SSH, as authorized_keys text.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Keys {
    pub authorized: String,
    pub operators: String,
}

/// Keys as the Secret holds them: each file's text (empty: nobody).
pub fn read_keys(
    authorized: Option<&std::path::Path>,
    operators: Option<&std::path::Path>,
) -> Result<Keys, String> {
    let read = |path: Option<&std::path::Path>| -> Result<String, String> {
        match path {
            Some(p) => std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display())),
            None => Ok(String::new()),
        }
    };
    Ok(Keys {
        authorized: read(authorized)?,
        operators: read(operators)?,
    })
}

/// The keys `gantry serve` reads by default, when the config names none.
fn default_keys(file: &str) -> Option<PathBuf> {
    crate::paths::config_dir()
        .map(|d| d.join(file))
        .filter(|p| Path::is_file(p))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn config() -> Config {
        let mut config = Config::default();
        config.watcher.in_cluster = true;
        config.watcher.image = Some("example.com/team/gantry:1".into());
        config.watcher.authorized_keys = Some("/dev/null".into());
        config.watcher.operators = Some("/dev/null".into());
        config
    }

    #[test]
    fn the_fingerprint_changes_with_what_the_config_decides_and_only_that() {
        let one = Desired::in_cluster(&config(), None).unwrap().unwrap();
        let again = Desired::in_cluster(&config(), None).unwrap().unwrap();
        assert_eq!(one.fingerprint(), again.fingerprint());
        let mut bigger = config();
        bigger.watcher.memory = "128Mi".into();
        let bigger = Desired::in_cluster(&bigger, None).unwrap().unwrap();
        assert_ne!(one.fingerprint(), bigger.fingerprint());
        let mut image = config();
        image.watcher.image = Some("example.com/team/gantry:2".into());
        let image = Desired::in_cluster(&image, None).unwrap().unwrap();
        assert_ne!(one.fingerprint(), image.fingerprint());
    }

    #[test]
    fn no_watcher_is_desired_unless_the_config_puts_it_in_the_cluster() {
        let mut off = config();
        off.watcher.in_cluster = false;
        assert!(Desired::in_cluster(&off, None).is_none());
        let mut missing = config();
        missing.watcher.authorized_keys = Some("/nonexistent/authorized_keys".into());
        let err = Desired::in_cluster(&missing, None).unwrap().unwrap_err();
        assert!(err.contains("/nonexistent/authorized_keys"), "{err}");
    }
}
