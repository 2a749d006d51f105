//! `[watcher]`: Gantry itself in the cluster, so that recovery, guards, notifications and the
//! SSH view go on with every laptop closed. `gantry watcher install` (and `gantry up` when
//! `in-cluster = true`) makes it from these settings; see `crate::watcher` for what is made.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// What the watcher's pod asks of its node unless told otherwise: measured on the simulator by
/// `benches/watcher.sh` (a 4-rank gang recovered twice: RssAnon 8.3 MB at peak, RSS 52.8 MB,
/// CPU 12m on average and 30m at peak; README "Gantry in the cluster"), with room to spare.
pub const DEFAULT_CPU: &str = "50m";
pub const DEFAULT_MEMORY: &str = "64Mi";
/// What it may use at the most before the kubelet stops it.
pub const DEFAULT_MEMORY_LIMIT: &str = "256Mi";

/// How teammates reach the watcher's SSH view.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Expose {
    /// Through the Kubernetes API (`gantry watcher ssh`): cluster credentials needed.
    #[default]
    PortForward,
    /// A LoadBalancer Service, reachable from `source-ranges` only (keys still required).
    LoadBalancer,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct Watcher {
    /// `gantry up` and the plan overlay make it (and the plan shows it, with its cost).
    pub in_cluster: bool,
    /// The image that runs it (there is no default: README says how to build one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    /// Run `gantry serve` (which has its engine) for SSH viewers, not `gantry watch`.
    pub serve: bool,
    /// Where it runs; the Job's namespace unless given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    pub expose: Expose,
    /// With `expose = "load-balancer"`: who may connect (CIDRs); required.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub source_ranges: Vec<String>,
    /// The Google service account its Kubernetes one acts as (GKE Workload Identity): what
    /// lets it resize pools and make the spot fallback's pool.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub google_service_account: Option<String>,
    /// Keys that may watch over SSH (authorized_keys format); default: `gantry serve`'s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub authorized_keys: Option<PathBuf>,
    /// Keys that may also act; default: `gantry serve`'s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operators: Option<PathBuf>,
    pub cpu: String,
    pub memory: String,
    pub memory_limit: String,
}

impl Default for Watcher {
    fn default() -> Self {
        Watcher {
            in_cluster: false,
            image: None,
            serve: false,
            namespace: None,
            expose: Expose::default(),
            source_ranges: Vec::new(),
            google_service_account: None,
            authorized_keys: None,
            operators: None,
            cpu: DEFAULT_CPU.into(),
            memory: DEFAULT_MEMORY.into(),
            memory_limit: DEFAULT_MEMORY_LIMIT.into(),
        }
    }
}

impl Watcher {
    pub fn is_default(&self) -> bool {
        *self == Watcher::default()
    }

    /// The checks a file alone can tell.
    pub fn validate(&self) -> Result<(), String> {
        if self.expose == Expose::LoadBalancer && self.source_ranges.is_empty() {
            return Err(
                "watcher.expose = \"load-balancer\" needs source-ranges = [\"203.0.113.0/24\"]: the CIDRs that may reach it (keys are still required)"
                    .into(),
            );
        }
        for range in &self.source_ranges {
            if !is_cidr(range) {
                return Err(format!(
                    "watcher.source-ranges: \"{range}\" is not a CIDR: write one such as \"203.0.113.0/24\""
                ));
            }
        }
        if self.in_cluster && self.image.is_none() {
            return Err(
                "watcher.in-cluster = true needs watcher.image: build Gantry's image (README \"Gantry in the cluster\") and name it here"
                    .into(),
            );
        }
        for (key, value) in [
            ("cpu", &self.cpu),
            ("memory", &self.memory),
            ("memory-limit", &self.memory_limit),
        ] {
            if !crate::names::is_quantity(value) {
                return Err(format!(
                    "watcher.{key} = \"{value}\": write a Kubernetes quantity such as \"50m\" or \"64Mi\""
                ));
            }
        }
        Ok(())
    }
}

/// `a.b.c.d/n` or an IPv6 prefix.
fn is_cidr(text: &str) -> bool {
    let Some((addr, bits)) = text.split_once('/') else {
        return false;
    };
    let Ok(bits) = bits.parse::<u8>() else {
        return false;
    };
    match addr.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V4(_)) => bits <= 32,
        Ok(std::net::IpAddr::V6(_)) => bits <= 128,
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &str) -> Result<Watcher, String> {
        let w: Watcher = toml::from_str(text).map_err(|e| e.to_string())?;
        w.validate().map(|_| w)
    }

    #[test]
    fn a_load_balancer_needs_source_ranges_and_an_in_cluster_watcher_an_image() {
        let lb = parsed("expose = \"load-balancer\"\n").unwrap_err();
        assert!(lb.contains("needs source-ranges"), "{lb}");
        let bad = parsed("expose = \"load-balancer\"\nsource-ranges = [\"everyone\"]\n");
        assert!(bad.unwrap_err().contains("is not a CIDR"));
        assert!(parsed("expose = \"load-balancer\"\nsource-ranges = [\"10.0.0.0/8\"]\n").is_ok());
        let image = parsed("in-cluster = true\n").unwrap_err();
        assert!(image.contains("needs watcher.image"), "{image}");
        let quantity = parsed("memory = \"lots\"\n").unwrap_err();
        assert!(quantity.contains("watcher.memory"), "{quantity}");
    }
}
